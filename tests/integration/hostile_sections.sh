#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user's binary whose sections cost root's `bpfprof -a` what their
# size or shape asks for (issue 37). Each attack runs beside a control: the
# same program without the hostile section, recorded the same way; the
# attack may cost root what the control does plus the file's own budget.
#
#   eh_frame_huge    a program whose .eh_frame is 900 MiB (sparse, after
#                    32 MiB of 13-byte FDEs) and has no index: it was read
#                    whole into root's memory (a user's file is read, not
#                    mapped) and every FDE listed before any budget applied:
#                    1.1 GB of peak RSS (control 0.2), 4.8 s of CPU (1.5),
#                    other files' tables late. Now: refused on its size,
#                    said once, peak RSS and CPU as the control's.
#   gopclntab_lines  a program with a Go function table whose one function's
#                    file and line tables take 2^20 steps that cover no code
#                    before the line: every distinct sampled address walked
#                    them (38 s of CPU for a 5 s recording, 0.6 without).
#                    Now each table is decoded once, within a budget per
#                    binary: CPU as the control's, and the lines still named.
#   gopclntab_huge   a Go table of 900 MiB (its real bytes, then a hole): read
#                    and copied by the unwinder and by the symbolizer, which
#                    kept it: 3.5 GB of peak RSS (-p, control 90 MB). Now:
#                    refused on its size, said once, RSS as the control's.
#   dwarf_data_huge  a `-g` program with 500 MiB of initialised data and a
#                    few KiB of DWARF: the symbolizer read the whole file
#                    into root's memory to give libdw its DWARF, and kept it
#                    (peak RSS of `-p`: the control's plus the file). Now only
#                    the debug sections are read: peak RSS at most the control's
#                    plus their size and half the control again, and spin
#                    still named with its file and line.
#
# Usage: hostile_sections.sh eh_frame_huge|gopclntab_lines|gopclntab_huge|dwarf_data_huge
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_sections.sh eh_frame_huge|gopclntab_lines|gopclntab_huge|dwarf_data_huge" "$@"
VICTIM_PID=
HOSTILE_CLEANUP+=('[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null')
make_hostile_user
BPFPROF_PREFIX=(/usr/bin/time -f "maxrss_kb %M cpu_s %U %S" -o "$WORK/time.txt")

# record NAME PROGRAM SECONDS: root records `bpfprof -a -v` (RECORD_SCOPE=pid:
# `-p` the program's pid, so that the peak RSS is not the rest of the
# machine's) while the user runs PROGRAM; sets NAME_kb (peak RSS), NAME_cpu
# (user + system seconds), NAME_rows (files with unwind rows at the end),
# NAME_pid.
RECORD_SCOPE=all
record() {
	local name=$1 prog=$2 seconds=$3 kb cpu rows scope=(-a)
	"${as_user[@]}" "$prog" &
	VICTIM_PID=$!
	sleep 0.3
	[ "$RECORD_SCOPE" = pid ] && scope=(-p "$VICTIM_PID")
	run_bpfprof 180 "${scope[@]}" -d "$seconds" -v -o "$WORK/$name.json.gz"
	kill -KILL "$VICTIM_PID"
	wait "$VICTIM_PID" 2>/dev/null
	expect_success
	cp "$WORK/bpfprof.err" "$WORK/$name.err"
	kb=$(awk '/maxrss_kb/ { print $2 }' "$WORK/time.txt")
	cpu=$(awk '/maxrss_kb/ { print $4 + $5 }' "$WORK/time.txt")
	rows=$(sed -n 's/.*unwind tables: [0-9]* files (\([0-9]*\) with rows.*/\1/p' "$WORK/$name.err" | tail -n 1)
	printf -v "${name}_kb" '%s' "$kb"
	printf -v "${name}_cpu" '%s' "$cpu"
	printf -v "${name}_rows" '%s' "${rows:-0}"
	printf -v "${name}_pid" '%s' "$VICTIM_PID"
	VICTIM_PID=
	log "   $name: peak RSS $((kb / 1024)) MiB, ${cpu} s of CPU, ${rows:-0} files with unwind rows"
}

# cpu_within ATTACK CONTROL: the attack's CPU at most the control's, half again
# (another process may come or go between the two), plus one file's build
# budget (CFI_FILE_MAX_CPU_NS: 1 s).
cpu_within() {
	awk -v a="$1" -v c="$2" 'BEGIN { exit !(a <= 1.5 * c + 1) }'
}

# spin_frames PROFILE PID: samples of PID whose leaf is spin, their distinct
# addresses, and how many of those have a line.
spin_frames() {
	"$NODE" --input-type=module -e '
import { Profile } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
const addrs = new Set(), lined = new Set();
let n = 0;
for (const t of p.threadsOfProcess(process.argv[2])) for (const s of p.samplesOf(t)) {
	const leaf = s.path[s.path.length - 1];
	if (leaf === undefined || p.frameFuncName(leaf) !== "spin") continue;
	n++;
	const a = p.shared.frameTable.address[leaf];
	addrs.add(a);
	if (p.shared.frameTable.line[leaf] > 0) lined.add(a);
}
console.log(`${n} ${addrs.size} ${lined.size}`);
' "$1" "$2"
}

# write_grow_tool: $USER_DIR/grow.py, with which the user makes a section of
# their binary SECTION_MIB long, moved to the end of the file, a hole after
# its first bytes (a sparse file: free to make):
#   grow.py eh_frame BINARY SECTION_MIB HEAD_MIB   HEAD_MIB of records (a CIE,
#       FDEs of one byte of code each); .eh_frame_hdr renamed, so that the
#       reader lists the FDEs itself
#   grow.py gopclntab BINARY SECTION_MIB           the table's own bytes first,
#       so that it still reads
write_grow_tool() {
	cat >"$USER_DIR/grow.py" <<'PY'
import struct, sys

what, path, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "r+b") as f:
    elf = bytearray(f.read())
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sh = lambda i: shoff + i * shentsize
    strtab, = struct.unpack_from("<Q", elf, sh(shstrndx) + 24)
    def name(i):
        at = strtab + struct.unpack_from("<I", elf, sh(i))[0]
        return bytes(elf[at:elf.index(b"\0", at)])
    scn = [i for i in range(shnum) if name(i) == b"." + what.encode()][0]
    if what == "eh_frame":
        # CIE "zR": FDE locations PC-relative 2-byte (0x12); CFA rsp + 8, return address at CFA - 8.
        cie = struct.pack("<IB", 0, 1) + b"zR\0" + bytes([1, 0x78, 16, 1, 0x12, 0x0c, 7, 8, 0x90, 1])
        head = bytearray(struct.pack("<I", len(cie)) + cie)
        n = ((int(sys.argv[4]) << 20) - len(head)) // 13
        fdes = bytearray(13 * n)
        for k in range(n):
            # length 9, back to the CIE, location: the field itself, 1 byte, no augmentation data
            struct.pack_into("<IIhHB", fdes, 13 * k, 9, len(head) + 13 * k + 4, 0, 1, 0)
        head += fdes
        for i in range(shnum):
            if name(i) == b".eh_frame_hdr":
                elf[strtab + struct.unpack_from("<I", elf, sh(i))[0] + 12] = ord("X")
        print(n, "FDEs")
    else:
        off, size = struct.unpack_from("<QQ", elf, sh(scn) + 24)
        head = elf[off:off + size]
    start = (len(elf) + 4095) & ~4095
    f.seek(start)
    f.write(head)
    f.truncate(start + (mib << 20))
    struct.pack_into("<QQ", elf, sh(scn) + 24, start, mib << 20)
    f.seek(0)
    f.write(elf)
PY
	chown "$USER_NAME:" "$USER_DIR/grow.py"
}

# grow BINARY SECTION ARGS...: the user copies their BINARY to BINARY_big and
# grows its SECTION to 900 MiB (write_grow_tool); fails unless it is.
grow() {
	local size said
	as_user_in_dir cp "$1" "$1_big" >"$WORK/grow.out" 2>&1 &&
		as_user_in_dir /usr/bin/python3 grow.py "$2" "$1_big" 900 "${@:3}" >>"$WORK/grow.out" 2>&1 ||
		fail "the user cannot grow $1's .$2: $(cat "$WORK/grow.out")"
	size=$(readelf -SW "$USER_DIR/$1_big" | awk -v s=".$2" '$2 == s { print $6 }')
	[ $((16#${size:-0})) -ge $((900 << 20)) ] || fail "$1_big's .$2 is ${size:-not there}: the test tests nothing"
	said=$(cat "$WORK/grow.out")
	log "the user's $1_big: .$2 of $((16#$size >> 20)) MiB${said:+ ($said)}," \
		"$(du -k "$USER_DIR/$1_big" | cut -f1) KiB on disk"
}

# expect_refused_on_size PROGRAM SECTION: after `record control` and `record
# attack` (PROGRAM with its SECTION grown): the section refused on its size,
# said once; peak RSS, CPU and other files' tables as the control's; the
# program still profiled.
expect_refused_on_size() {
	local said n
	# This user's file, by its path: another test's bpfprof -a may see other users' programs.
	said=$(grep -cF "$USER_DIR/$1: its unwind table would cost more than its budget (the size of .$2)" \
		"$WORK/attack.err")
	[ "$said" -eq 1 ] || fail "$1's table was said over its budget (the size of .$2) $said times, not once"
	ok "said once: $(grep -F "$USER_DIR/$1: its unwind table" "$WORK/attack.err")"
	[ "$attack_kb" -lt $((control_kb + 100 * 1024)) ] ||
		fail "a 900 MiB .$2 cost $(((attack_kb - control_kb) / 1024)) MiB of peak RSS (want < 100)"
	ok "peak RSS $((attack_kb / 1024)) MiB, $((control_kb / 1024)) MiB without the section"
	cpu_within "$attack_cpu" "$control_cpu" ||
		fail "bpfprof took ${attack_cpu} s of CPU beside the section, ${control_cpu} s without"
	ok "${attack_cpu} s of CPU, ${control_cpu} s without the section"
	# Its build kept no other file waiting (the 900 MiB .eh_frame: 27 files with rows of 65).
	[ "$attack_rows" -ge $((control_rows / 2)) ] ||
		fail "$attack_rows files with unwind rows beside the section, $control_rows without"
	ok "$attack_rows files with unwind rows, $control_rows without the section"
	read -r n _ <<<"$(spin_frames "$WORK/attack.json.gz" "$attack_pid")" || fail "cannot read the profile"
	[ "$n" -ge 10 ] || fail "$1 has $n samples in spin: not profiled"
	ok "$1 profiled: $n samples in spin"
}

# build_go_spin NAME NOISE: the user builds $USER_DIR/NAME, main calling
# spin: 16,384 four-byte instructions in a loop, so that samples fall on
# thousands of addresses. Its Go table (1.20's layout): file and line from
# one stream, NOISE pairs of changes that cover no code, then the line for
# the whole function.
build_go_spin() {
	if [ ! -f "$USER_DIR/spin.S.in" ]; then
		cat >"$USER_DIR/spin.S.in" <<'EOF'
	.text
	.globl	spin
	.type	spin, @function
spin:
1:
	.rept	16384
	addq	$1, %rax
	.endr
	jmp	1b
	.size	spin, .-spin

	.section .gopclntab, "a"
	.balign	8
pcln:
	.long	0xfffffff1
	.byte	0, 0, 1, 8
	.quad	1, 0, spin
	.quad	names - pcln, cutab - pcln, filetab - pcln, pctab - pcln, functab - pcln
names:	.asciz	"spin"
	.balign	4
cutab:	.long	0, 0
filetab: .asciz	"spin.go"
pctab:	.byte	0
	.byte	2, 0
	.rept	NOISE
	.byte	2, 0, 1, 0
	.endr
	.byte	2, 0x80, 0x80, 0x40, 0
	.balign	4
functab:
	.long	0, func - functab
	.long	0x1000000, func - functab
func:	/* entryoff nameoff args deferreturn pcsp pcfile pcln npcdata cu startLine id flag */
	.long	0, 0, 0, 0, 0, 1, 1, 0, 0, 1
	.byte	0, 0, 0, 0
	.section .note.GNU-stack, "", @progbits
EOF
		chown "$USER_NAME:" "$USER_DIR/spin.S.in"
		user_spin_main
	fi
	as_user_in_dir gcc -x assembler -Wa,--defsym,NOISE="$2" -c -o "$1.o" spin.S.in >"$WORK/build.out" 2>&1 &&
		as_user_in_dir gcc -O2 -no-pie -o "$1" main.c "$1.o" >>"$WORK/build.out" 2>&1 ||
		fail "the user cannot build $1: $(cat "$WORK/build.out")"
}

# spin_lines PROFILE PID FILE LINE: samples of PID whose leaf is spin, and how
# many of those are at FILE (a path ending so) line LINE.
spin_lines() {
	"$NODE" --input-type=module -e '
import { Profile } from "'"$CHECK_DIR"'/profile.mjs";
const [path, pid, file, line] = process.argv.slice(1);
const p = Profile.fromFile(path);
let n = 0, at = 0;
for (const t of p.threadsOfProcess(pid)) for (const s of p.samplesOf(t)) {
	const leaf = s.path[s.path.length - 1];
	if (leaf === undefined || p.frameFuncName(leaf) !== "spin") continue;
	n++;
	const src = p.shared.funcTable.source?.[p.frameFunc(leaf)];
	const fileName = src == null ? "" : p.string(p.shared.sources.filename[src]) || "";
	if (fileName.endsWith("/" + file) && p.shared.frameTable.line[leaf] === Number(line)) at++;
}
console.log(`${n} ${at}`);
' "$1" "$2" "$3" "$4"
}

# build_data_spin NAME BYTES: the user builds $USER_DIR/NAME, -g, whose spin
# reads an initialised array of BYTES in .data (in the file, not a hole).
build_data_spin() {
	cat >"$USER_DIR/$1.c" <<SRC
volatile unsigned long sink;
char data[$2] = { 1 };
__attribute__((noinline)) void spin(void)
{
	for (unsigned long i = 0; i < 100000000UL; i++) sink += i + data[i & 4095]; /* SPIN_LINE */
}
int main(void) { for (;;) spin(); return 0; }
SRC
	chown "$USER_NAME:" "$USER_DIR/$1.c"
	as_user_in_dir gcc -O1 -g -o "$1" "$1.c" >"$WORK/build.out" 2>&1 ||
		fail "the user cannot build $1: $(cat "$WORK/build.out")"
}

# debug_kib BINARY: the size of BINARY's .debug_* sections, KiB rounded up.
debug_kib() {
	local name size n=0
	while read -r name size; do
		n=$((n + 16#$size))
	done < <(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 ~ /^\.debug_/ { print $1, $5 }')
	echo $(((n + 1023) / 1024))
}

case $MODE in
dwarf_data_huge)
	build_data_spin spin_small 4096
	build_data_spin spin_data $((500 << 20))
	size=$(stat -c %s "$USER_DIR/spin_data")
	[ "$size" -ge $((500 << 20)) ] || fail "spin_data is $size bytes: the test tests nothing"
	[ "$(du -k "$USER_DIR/spin_data" | cut -f1)" -ge $((500 << 10)) ] ||
		fail "spin_data's data is a hole: reading it costs nothing, the test tests nothing"
	debug=$(debug_kib "$USER_DIR/spin_data")
	[ "$debug" -gt 0 ] || fail "spin_data has no DWARF: the test tests nothing"
	line=$(grep -n SPIN_LINE "$USER_DIR/spin_data.c" | cut -d: -f1)
	log "the user's spin_data: $((size >> 20)) MiB, $debug KiB of DWARF; spin's loop at spin_data.c:$line"
	RECORD_SCOPE=pid
	record control "$USER_DIR/spin_small" 3
	record attack "$USER_DIR/spin_data" 3
	read -r cn cat <<<"$(spin_lines "$WORK/control.json.gz" "$control_pid" spin_small.c "$line")" ||
		fail "cannot read the control profile"
	read -r an aat <<<"$(spin_lines "$WORK/attack.json.gz" "$attack_pid" spin_data.c "$line")" ||
		fail "cannot read the profile"
	log "   control: $cn samples in spin, $cat at spin_small.c:$line; attack: $an, $aat at spin_data.c:$line"
	[ "$cn" -ge 10 ] && [ "$cat" -ge $((cn * 9 / 10)) ] ||
		fail "the control names spin_small.c:$line in $cat of $cn samples of spin: the test tests nothing"
	limit=$((control_kb + debug + control_kb / 2))
	[ "$attack_kb" -le "$limit" ] ||
		fail "a $((size >> 20)) MiB -g binary cost $(((attack_kb - control_kb) / 1024)) MiB of peak RSS" \
			"over the control's $((control_kb / 1024)) MiB (want <= its $debug KiB of DWARF and half the control)"
	ok "peak RSS $((attack_kb / 1024)) MiB, $((control_kb / 1024)) MiB without the data (limit $((limit / 1024)) MiB)"
	[ "$an" -ge 10 ] || fail "spin_data has $an samples in spin: not profiled"
	[ "$aat" -ge $((an * 9 / 10)) ] ||
		fail "only $aat of spin_data's $an samples in spin are named spin_data.c:$line"
	ok "spin named at spin_data.c:$line in $aat of its $an samples"
	;;
eh_frame_huge)
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is not installed"
	cat >"$USER_DIR/spin.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline)) void spin(void) { for (unsigned long i = 0; i < 100000000UL; i++) sink += i; }
int main(void) { for (;;) spin(); return 0; }
EOF
	chown "$USER_NAME:" "$USER_DIR/spin.c"
	as_user_in_dir gcc -O2 -o spin spin.c >"$WORK/build.out" 2>&1 ||
		fail "the user cannot build the program: $(cat "$WORK/build.out")"
	write_grow_tool
	grow spin eh_frame 32
	record control "$USER_DIR/spin" 3
	record attack "$USER_DIR/spin_big" 3
	expect_refused_on_size spin_big eh_frame
	;;
gopclntab_lines)
	build_go_spin spin_quiet 0
	# 2 + 2 * 524,284 steps: the most one walk takes (2^20).
	build_go_spin spin_noisy 524284
	log "the user's programs: spin_quiet $(stat -c %s "$USER_DIR/spin_quiet") bytes," \
		"spin_noisy $(stat -c %s "$USER_DIR/spin_noisy") bytes"

	record control "$USER_DIR/spin_quiet" 5
	read -r cn ca cl <<<"$(spin_frames "$WORK/control.json.gz" "$control_pid")" || fail "cannot read the control profile"
	log "   control: $cn samples in spin at $ca addresses, $cl of them with a line"
	record attack "$USER_DIR/spin_noisy" 5
	read -r an aa al <<<"$(spin_frames "$WORK/attack.json.gz" "$attack_pid")" || fail "cannot read the profile"
	log "   attack: $an samples in spin at $aa addresses, $al of them with a line"
	[ "$cl" -ge 500 ] || fail "the control named lines at $cl addresses of spin, want >= 500: the test tests nothing"
	[ "$aa" -ge 500 ] || fail "spin was sampled at $aa addresses, want >= 500: the test tests nothing"
	cpu_within "$attack_cpu" "$control_cpu" ||
		fail "bpfprof took ${attack_cpu} s of CPU beside the table, ${control_cpu} s without"
	ok "${attack_cpu} s of CPU for $aa addresses, ${control_cpu} s without the noise"
	# One function's two tables, decoded once: far within the binary's budget.
	[ "$al" -eq "$aa" ] || fail "only $al of spin's $aa addresses have a line"
	ok "every one of spin's $aa addresses has its line"
	;;
gopclntab_huge)
	[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is not installed"
	build_go_spin spin_go 0
	write_grow_tool
	grow spin_go gopclntab
	record control "$USER_DIR/spin_go" 3
	record attack "$USER_DIR/spin_go_big" 3
	expect_refused_on_size spin_go_big gopclntab
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
