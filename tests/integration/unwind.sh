#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# CFI unwinding (issue 16): `bpfprof --unwind MODE -- nofp 2 300`, a workload
# built without frame pointers that recurses 301 frames deep and calls qsort
# (libc, no frame pointers either) with a burning comparator, burns in a
# SIGPROF handler, and has a thread blocked in libc's read() 301 frames deep.
#
#   cfi  its stacks are whole: from the thread root through main, every level,
#        across libc's qsort frames and the signal frame, and above read()
#        in the reader's off-CPU samples (unwind_checks.mjs)
#   fp   the control: with frame pointers they are not, so the cfi run
#        measures what it claims
#
#   cpp  (with cfi) the C++ workload nofp_cpp: main -> a recursion 31 deep
#        -> a virtual call with an inlined hot loop, and exceptions thrown
#        31 frames deep through libstdc++ and libgcc_s
#
#   python  (with cfi) Debian's /usr/bin/python3 running tests/workloads/pyloop.py;
#        then with the interpreter's table held back 1 s: a sample with
#        Python frames sends no stack copy (none could finish it)
#
#   static  (with cfi) nofp linked gcc -static: non-PIE, libc inside, and no
#        .eh_frame_hdr (gcc does not ask the linker for one with -static), so
#        its FDEs are found in .eh_frame itself (issue 26)
#
#   churn  threadchurn: 8 short threads started and joined in a loop (issue
#        37); with cfi, stacks taken around thread creation end at the
#        thread's root, never run on past the stack's end; with fp (no frame
#        pointers to follow), a walk that does not move ends in one frame
#
#   late  (with cfi) nofp's table held back 1.5 s (BPFPROF_TEST_TABLE_DELAY,
#        as a big binary's build on a busy machine takes; issue 38): the
#        quality line names nofp as met without its table, the table late,
#        and -v names it by its inode; libc, whose table was there, is not
#        named though nofp's stacks run through it (qsort). Without stack
#        copies (--stack-copy 0), which would finish those stacks
#
#   vfork  (with cfi) vforker: vfork and exec /bin/true in a loop, as make,
#        sh and gcc spawn (issue 38); the parent's samples in glibc's
#        __vfork, which keeps its return address in RDI, reach _start
#        through main -> vfork_loop -> vfork_one
#
#   cache  (with cfi) the unwind table cache (issue 38): nofp twice with a
#        fresh --state-dir; the first run builds nofp's table and keeps it
#        (the entry named by nofp's build-id and size), the second reads it
#        from the cache, builds nothing for nofp, and nofp's stacks are
#        whole; then the entry is damaged (one byte): the third run says at
#        -v that it removed it, builds the table again and keeps it again
#
#   copy  (with cfi) nofp's table held back 1 s, its stacks copied meanwhile
#        (issue 38): they are finished from their copies once the table
#        comes, so >= 95% of all its stacks reach a root, copies are counted
#        and >= 95% of those finished reach a root; the same run with
#        --stack-copy 0 names nofp as met without its table. -F 199: a
#        second of copies (16K at most each) fits a CPU's 16 MiB budget.
#        The canary nofp keeps on its stack under qsort, in every copy,
#        is nowhere in the profile: copied bytes reach no output
#
#   nocfi (with cfi) nofp without its CFI (.eh_frame removed): its table
#        will never come, so its samples are not copied once that is known
#        (bpf/unwind.bpf.h's unwind_no_table), only in the moment its file
#        is read: fewer than 5% of them, where every one would copy within
#        the CPU's budget (some 100 a second) otherwise
#
#   lru  (with cfi) three copies (distinct files) of a program with a fat
#        table (100,000 push/pop pairs under CFI, no frame pointers: some
#        100k slots, generated here) run in turn, A, B, C, then A again, in a
#        store sized for two and a half (BPFPROF_TEST_UNWIND_MEMORY; issue
#        38). C's table evicts A's (sampled least recently; B's was sampled
#        within the last 2 s, pinned), A's second run finds its file again and
#        evicts B's: the summary counts the evictions, -v logs the
#        evictions for C and for A again, and each run's stacks are whole
#        (>= 95 % from its first whole one: a table is built after a
#        process's first samples). Before: the store was rebuilt only from
#        the live processes, never by use.
#
#   evict  (-a) new binaries keep coming into a store that cannot hold
#        them all: nofp, sampled throughout, keeps its whole stacks
#
# Usage: unwind.sh cfi|fp|evict [c|cpp|python|static|churn|late|vfork|cache|copy|nocfi|lru]
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: unwind.sh cfi|fp|evict|auto|auto_old [c|cpp|python|static|churn|late|vfork|cache|copy|nocfi|lru]}
# auto: --unwind auto, which must choose cfi on a kernel of 6.1 or later (uname says);
# auto_old: the same on a kernel whose perf_event programs cannot use the walk's maps
# (BPFPROF_TEST_NO_NOPREALLOC=1 answers as 6.0 would): frame pointers, said at -v.
AUTO=
case $MODE in
auto)
	AUTO=auto
	IFS=. read -r kmaj kmin _ < <(uname -r)
	if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -ge 1 ]; }; then MODE=cfi; else MODE=fp; fi
	;;
auto_old)
	AUTO=auto
	export BPFPROF_TEST_NO_NOPREALLOC=1
	MODE=fp
	;;
esac
LANG_=${2:-c}
if [ "$LANG_" = cpp ]; then
	: "${NOFP_CPP:?NOFP_CPP is not set}"
	DEPTH=30
	run_bpfprof 60 -v --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$NOFP_CPP" 2 "$DEPTH"
	expect_success
	read -r _ _ _ pid _ depth < <(grep -m 1 "^nofp_cpp: truth pid " "$WORK/bpfprof.out")
	[[ $pid =~ ^[0-9]+$ ]] && [ "$depth" = "$DEPTH" ] ||
		fail "nofp_cpp did not print 'nofp_cpp: truth pid P depth $DEPTH': $(head -n 3 "$WORK/bpfprof.out")"
	log "\$ unwind_checks.mjs --cpp --profile $WORK/unwind.json.gz --pid $pid --depth $DEPTH"
	node_check unwind_checks.mjs --cpp --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" \
		--depth "$DEPTH" || fail "unwind checks failed"
	exit 0
fi
if [ "$LANG_" = churn ]; then
	: "${THREADCHURN:?THREADCHURN is not set}"
	run_bpfprof 60 -v -F 4999 --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$THREADCHURN" 20 4000
	expect_success
	read -r _ _ _ pid < <(grep -m 1 "^threadchurn: truth pid " "$WORK/bpfprof.out")
	[[ $pid =~ ^[0-9]+$ ]] || fail "threadchurn did not print 'threadchurn: truth pid P': $(head -n 3 "$WORK/bpfprof.out")"
	broken=()
	[ "$MODE" = cfi ] || broken=(--expect-broken)
	log "\$ unwind_checks.mjs --churn --profile $WORK/unwind.json.gz --pid $pid ${broken[*]}"
	node_check unwind_checks.mjs --churn --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" "${broken[@]}" ||
		fail "unwind checks failed"
	exit 0
fi
if [ "$LANG_" = python ]; then
	# Debian's own interpreter, as packaged: no frame pointers, stripped.
	PY=/usr/bin/python3
	[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
	run_bpfprof 60 -v --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$PY" "$(dirname "$0")/../workloads/pyloop.py" 2
	expect_success
	read -r _ _ _ pid < <(grep -m 1 "^pyloop: truth pid " "$WORK/bpfprof.out")
	[[ $pid =~ ^[0-9]+$ ]] || fail "pyloop did not print 'pyloop: truth pid P': $(head -n 3 "$WORK/bpfprof.out")"
	log "\$ unwind_checks.mjs --python --profile $WORK/unwind.json.gz --pid $pid"
	node_check unwind_checks.mjs --python --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" ||
		fail "unwind checks failed"

	# The interpreter's table held back 1 s: a sample with Python frames
	# is not finished from a copy, so none is sent (S2/S5 review, finding
	# 8). Before, one in three of all samples sent a copy nobody walked.
	real=$(readlink -f "$PY")
	BPFPROF_TEST_TABLE_DELAY="$(basename "$real"):1000" \
		run_bpfprof 60 -v -F 199 --unwind "$MODE" -o "$WORK/late.json.gz" -- "$PY" \
		"$(dirname "$0")/../workloads/pyloop.py" 2
	expect_success
	quality=$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err") ||
		fail "bpfprof printed no stack-quality line"
	[[ $quality =~ user\ stacks:\ [0-9.]+%\ of\ ([0-9]+)\ reach ]] ||
		fail "no sample count in: $quality"
	samples=${BASH_REMATCH[1]}
	copies=$(grep -m 1 '^bpfprof: stack copies: ' "$WORK/bpfprof.err")
	log "held back: $quality"
	log "held back: ${copies:-no copies}"
	wasted=0
	if [ -n "$copies" ]; then
		[[ $copies =~ \ ([0-9]+)\ not\ walkable ]] || fail "no count of copies not walkable: $copies"
		wasted=${BASH_REMATCH[1]}
	fi
	[ $((wasted * 20)) -le "$samples" ] ||
		fail "$wasted of $samples samples sent a copy nobody could walk (<= 5% expected)"
	ok "the interpreter's table held back: $wasted of $samples samples sent a copy not walkable"
	exit 0
fi
if [ "$LANG_" = vfork ]; then
	: "${VFORKER:?VFORKER is not set}"
	run_bpfprof 60 -v -F 4999 --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$VFORKER" 3
	expect_success
	read -r _ _ _ pid < <(grep -m 1 "^vforker: truth pid " "$WORK/bpfprof.out")
	[[ $pid =~ ^[0-9]+$ ]] || fail "vforker did not print 'vforker: truth pid P': $(head -n 3 "$WORK/bpfprof.out")"
	log "$(grep -m 1 '^vforker: .* children' "$WORK/bpfprof.out")"
	log "\$ unwind_checks.mjs --vfork --profile $WORK/unwind.json.gz --pid $pid"
	node_check unwind_checks.mjs --vfork --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" ||
		fail "unwind checks failed"
	exit 0
fi
if [ "$LANG_" = lru ]; then
	BLOCKS=100000
	mkdir -p "$WORK/fat"
	cat >"$WORK/fat/fat.c" <<'EOC'
#include <stdlib.h>
#include <time.h>
void fat_burn(unsigned long n);
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fat_burn(1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
EOC
	# Two rows per pair (the CFA moves 8 bytes and back), two bytes each.
	awk -v n="$BLOCKS" 'BEGIN {
		print "\t.text\n\t.globl fat_burn\n\t.type fat_burn,@function\nfat_burn:\n\t.cfi_startproc"
		print "\tsub $8, %rsp\n\t.cfi_adjust_cfa_offset 8\n1:"
		for (i = 0; i < n; i++)
			print "\tpush %r12\n\t.cfi_adjust_cfa_offset 8\n\tpop %r12\n\t.cfi_adjust_cfa_offset -8"
		print "\tdec %rdi\n\tjnz 1b\n\tadd $8, %rsp\n\t.cfi_adjust_cfa_offset -8\n\tret\n\t.cfi_endproc"
		print "\t.size fat_burn, .-fat_burn\n\t.section .note.GNU-stack,\"\",@progbits"
	}' >"$WORK/fat/fat.S"
	"${CC:-cc}" -O2 -fomit-frame-pointer -o "$WORK/fat/fatA" "$WORK/fat/fat.c" "$WORK/fat/fat.S" ||
		fail "cannot build the fat workload"
	cp "$WORK/fat/fatA" "$WORK/fat/fatB" && cp "$WORK/fat/fatA" "$WORK/fat/fatC" || fail "cp failed"
	# A table takes about BLOCKS slots of 8 bytes: room for two and a half, besides the rules.
	SECS=4
	BPFPROF_TEST_UNWIND_MEMORY=$((512 * 1024 + 8 * BLOCKS * 5 / 2)) \
		run_bpfprof 120 -v --unwind "$MODE" -o "$WORK/unwind.json.gz" -- sh -c \
		'cd "$1" && ./fatA "$2" && ./fatB "$2" && ./fatC "$2" && ./fatA "$2"' \
		sh "$WORK/fat" "$SECS"
	expect_success
	store=$(grep -m 1 '^bpfprof: unwind store: ' "$WORK/bpfprof.err") || fail "bpfprof printed no unwind store line"
	log "$store"
	[[ $store =~ \ ([0-9]+)\ evicted, ]] || fail "the unwind store line counts no evictions"
	[ "${BASH_REMATCH[1]}" -ge 2 ] || fail "only ${BASH_REMATCH[1]} tables evicted: C's and A's second run each needed one"
	ok "${BASH_REMATCH[1]} tables evicted"
	grep -q "^bpfprof: debug: unwind store: [0-9]* tables evicted for $WORK/fat/fatC " "$WORK/bpfprof.err" ||
		fail "no eviction made room for fatC"
	# A again, after C's: its table was evicted and is found again.
	grep "^bpfprof: debug: unwind store: [0-9]* tables evicted for " "$WORK/bpfprof.err" |
		sed -n "/fatC /,\$p" | grep -q "evicted for $WORK/fat/fatA " ||
		fail "fatA's second run needed no eviction: its table was not the one evicted for fatC"
	ok "room was made for fatC, then for fatA again (its table evicted for C's, found again)"
	"$NODE" --input-type=module -e '
import { Profile } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
const runs = [];
// Each image on its own: the shell child that execs fatC can be sampled
// before its exec (a slow fork), and is then an image "PID" of its own
// before the image "PID.1" that runs fatC.
for (const pid of p.pids()) {
	const threads = p.threadsOf(pid);
	if (!threads.length || !/^fat[ABC]$/.test(threads[0].name))
		continue;
	const seen = [];
	for (const t of threads) for (const s of p.samplesOf(t)) {
		const names = new Set(s.path.map((f) => p.frameFuncName(f)));
		if (p.isOnCpu(s) && names.has("fat_burn"))
			seen.push({ time: s.time, whole: names.has("_start") && names.has("main") });
	}
	seen.sort((a, b) => a.time - b.time);
	const first = seen.findIndex((s) => s.whole);
	const after = first < 0 ? [] : seen.slice(first);
	runs.push(`${threads[0].name} ${pid} ${seen.length} ${after.length} ${after.filter((s) => s.whole).length}`);
}
console.log(runs.join("\n"));
' "$WORK/unwind.json.gz" >"$WORK/runs" || fail "cannot read the profile"
	[ "$(wc -l <"$WORK/runs")" -eq 4 ] || fail "expected 4 runs of fatA, fatB, fatC, fatA: $(cat "$WORK/runs")"
	while read -r name pid all after whole; do
		log "$name (pid $pid): $all samples in fat_burn, $after from the first whole one, $whole of them whole"
		[ "$after" -ge 100 ] || fail "$name (pid $pid): only $after samples after its first whole one"
		[ $((whole * 100)) -ge $((after * 95)) ] || fail "$name (pid $pid): only $whole of $after whole (need >= 95 %)"
	done <"$WORK/runs"
	ok "each run's stacks are whole through its fat table"
	exit 0
fi
if [ "$LANG_" = late ]; then
	: "${NOFP:?NOFP is not set}"
	DELAY_MS=1500
	BPFPROF_TEST_TABLE_DELAY="$(basename "$NOFP"):$DELAY_MS" \
		run_bpfprof 60 -v --unwind "$MODE" --stack-copy 0 -o "$WORK/unwind.json.gz" -- "$NOFP" 3 300
	expect_success
	quality=$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err") ||
		fail "bpfprof printed no stack-quality line"
	log "$quality"
	name=$(basename "$NOFP")
	# "files met without their table: nofp (N: its table came M ms after its first sample)"
	[[ $quality =~ files\ met\ without\ their\ table:.*$name\ \(([0-9]+):\ its\ table\ came\ ([0-9]+)\ ms\ after\ its\ first\ sample\) ]] ||
		fail "the quality line does not name $name as met before its table came (held back $DELAY_MS ms)"
	stacks=${BASH_REMATCH[1]}
	[ "$stacks" -ge 1 ] || fail "$name is named with $stacks stacks"
	ok "$name named: $stacks stacks met it before its table, which came ${BASH_REMATCH[2]} ms after its first sample"
	# -v names the file by device and inode: the one run, not another of that name.
	ino=$(stat -L -c %i "$NOFP")
	grep -q "^bpfprof: debug: met without its table: $name (device [0-9]*:[0-9]*, inode $ino): $stacks stacks" \
		"$WORK/bpfprof.err" || fail "-v does not name $name by its inode $ino: $(grep 'met without its table' "$WORK/bpfprof.err" | head -n 5)"
	# nofp's stacks run through libc (qsort): its table was loaded before
	# nofp started, so the search goes on past its frames to nofp's.
	if grep -q '^bpfprof: debug: met without its table: libc\.so' "$WORK/bpfprof.err"; then
		fail "libc, whose table was there, is named: $(grep 'met without its table: libc' "$WORK/bpfprof.err")"
	fi
	ok "$(grep -c 'met without its table' "$WORK/bpfprof.err") file(s) named at -v, libc not among them"
	exit 0
fi
if [ "$LANG_" = cache ]; then
	: "${NOFP:?NOFP is not set}"
	name=$(basename "$NOFP")
	bid=$(readelf -nW "$NOFP" | grep -o -m 1 'Build ID: [0-9a-f]*' | cut -d ' ' -f 3)
	[ -n "$bid" ] || fail "$NOFP has no GNU build-id: nothing to key its table by"
	entry="$WORK/state/unwind-cache/v1/system/$(printf '%s-%x-%x-%x.ut' "$bid" \
		"$(stat -L -c %s "$NOFP")" "$(stat -L -c %d "$NOFP")" "$(stat -L -c %i "$NOFP")")"
	cache_run() { # a run of nofp with the test's state directory, its logs kept as $1.*
		run_bpfprof 60 -vv --unwind cfi --state-dir "$WORK/state" -o "$WORK/$1.json.gz" \
			-- "$NOFP" 2 300
		expect_success
		cp "$WORK/bpfprof.out" "$WORK/$1.out"
		cp "$WORK/bpfprof.err" "$WORK/$1.err"
	}
	cache_run cold
	grep -q "^bpfprof: debug: .*/$name: unwind table built" "$WORK/cold.err" ||
		fail "the first run did not build $name's table"
	[ -f "$entry" ] || fail "the first run kept no entry for $name at $entry: $(find "$WORK/state" | head -n 20)"
	[ "$(stat -c %a "$WORK/state")" = 700 ] || fail "the state directory is not mode 0700"
	ok "the first run built $name's table and kept it ($(stat -c %s "$entry") bytes)"

	cache_run warm
	grep -q "^bpfprof: debug: .*/$name: unwind table from the cache" "$WORK/warm.err" ||
		fail "the second run did not take $name's table from the cache"
	if grep -q "^bpfprof: debug: .*/$name: unwind table built" "$WORK/warm.err"; then
		fail "the second run built $name's table again"
	fi
	summary=$(grep "^bpfprof: debug: unwind tables: .* from the cache" "$WORK/warm.err" | tail -n 1) && [ -n "$summary" ] ||
		fail "the second run's -v does not count the tables from the cache"
	ok "the second run took $name's table from the cache: $summary"
	read -r _ _ _ pid _ depth _ reader < <(grep -m 1 "^nofp: truth pid " "$WORK/warm.out")
	[[ $pid =~ ^[0-9]+$ && $reader =~ ^[0-9]+$ ]] && [ "$depth" = 300 ] ||
		fail "nofp did not print 'nofp: truth pid P depth 300 reader T': $(head -n 3 "$WORK/warm.out")"
	log "\$ unwind_checks.mjs --profile $WORK/warm.json.gz --pid $pid --depth 300 --reader $reader"
	node_check unwind_checks.mjs --profile "$WORK/warm.json.gz" --gzip --pid "$pid" \
		--depth 300 --reader "$reader" || fail "stacks from the cached table are not whole"

	# One byte of the rows changed: the checksum catches it.
	size=$(stat -c %s "$entry")
	printf '\377' | dd of="$entry" bs=1 seek=$((size / 2)) conv=notrunc status=none
	cache_run damaged
	grep -q "^bpfprof: debug: unwind table cache: system/$bid-.*: checksum mismatch; removed" \
		"$WORK/damaged.err" || fail "-v does not say the damaged entry was removed: $(grep 'cache' "$WORK/damaged.err" | head -n 5)"
	grep -q "^bpfprof: debug: .*/$name: unwind table built" "$WORK/damaged.err" ||
		fail "the table of the damaged entry was not built again"
	[ -f "$entry" ] || fail "the table built again was not kept"
	ok "the damaged entry was removed, its table built again and kept"
	exit 0
fi
if [ "$LANG_" = copy ]; then
	: "${NOFP:?NOFP is not set}"
	name=$(basename "$NOFP")
	for copy in 16K 0; do
		BPFPROF_TEST_TABLE_DELAY="$name:1000" \
			run_bpfprof 60 -v -F 199 --unwind "$MODE" --stack-copy "$copy" \
			-o "$WORK/unwind.json.gz" -- "$NOFP" 2 30
		expect_success
		quality=$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err") ||
			fail "bpfprof printed no stack-quality line"
		log "--stack-copy $copy: $quality"
		copies=$(grep -m 1 '^bpfprof: stack copies: ' "$WORK/bpfprof.err")
		[ -z "$copies" ] || log "--stack-copy $copy: $copies"
		if [ "$copy" = 0 ]; then
			[ -z "$copies" ] || fail "--stack-copy 0 copied stacks: $copies"
			[[ $quality =~ files\ met\ without\ their\ table:.*$name\ \( ]] ||
				fail "without copies, $name is not named as met before its table came"
			ok "without copies, $name's first stacks stop early and it is named"
			continue
		fi
		[[ $quality =~ user\ stacks:\ ([0-9.]+)%\ of\ ([0-9]+)\ reach ]] ||
			fail "no share of rooted stacks in: $quality"
		pct=${BASH_REMATCH[1]}
		awk -v p="$pct" 'BEGIN { exit !(p >= 95) }' ||
			fail "with copies only $pct% of the stacks reach a root (>= 95% expected)"
		[[ $copies =~ :\ ([0-9]+)\ stacks\ copied.*\;\ ([0-9]+)\ finished\ from\ their\ copies,\ ([0-9]+)\ of\ them\ to\ a\ thread\ root ]] ||
			fail "no stack-copies line: $copies"
		made=${BASH_REMATCH[1]} finished=${BASH_REMATCH[2]} rooted=${BASH_REMATCH[3]}
		[ "$made" -ge 1 ] || fail "no stack was copied while $name's table was held back"
		[ $((rooted * 100)) -ge $((made * 95)) ] ||
			fail "$rooted of $made copies finished to a root (>= 95% expected)"
		ok "$made stacks copied, $finished finished, $rooted to a root; $pct% of all reach a root"
		# tests/workloads/nofp.c's NOFP_CANARY: in hex, in decimal, and its halves.
		leaks=$(gzip -dc "$WORK/unwind.json.gz" |
			grep -o -i -E '6b1d2c3e4f5a6978|7718373982513817976|6b1d2c3e|4f5a6978|1797073982|1331325304' |
			sort -u | tr '\n' ' ')
		[ -z "$leaks" ] || fail "the profile holds nofp's stack canary: $leaks"
		ok "nofp's stack canary, copied $made times, is nowhere in the profile"
	done
	exit 0
fi
if [ "$LANG_" = nocfi ]; then
	: "${NOFP:?NOFP is not set}"
	objcopy --remove-section=.eh_frame_hdr --remove-section=.eh_frame "$NOFP" "$WORK/nofp" ||
		fail "cannot strip nofp's CFI"
	run_bpfprof 60 -v --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$WORK/nofp" 3 30
	expect_success
	samples=$(grep -o -m 1 '^bpfprof: [0-9]* samples from' "$WORK/bpfprof.err" | cut -d' ' -f2)
	[ "${samples:-0}" -ge 100 ] || fail "too few samples ($samples) to tell"
	copies=$(grep -m 1 '^bpfprof: stack copies: ' "$WORK/bpfprof.err")
	made=0
	[[ $copies =~ :\ ([0-9]+)\ stacks\ copied ]] && made=${BASH_REMATCH[1]}
	log "${copies:-no stack copies line}"
	[ $((made * 100)) -lt $((samples * 5)) ] ||
		fail "$made of $samples samples copied their stacks in a file that will never have a table"
	ok "$made of $samples samples copied in a file without CFI"
	exit 0
fi
extra=()
if [ "$LANG_" = static ]; then
	: "${NOFP_STATIC:?NOFP_STATIC is not set}"
	readelf -lW "$NOFP_STATIC" | grep -q GNU_EH_FRAME &&
		fail "$NOFP_STATIC has an .eh_frame_hdr: it does not test what a gcc -static binary is"
	readelf -hW "$NOFP_STATIC" | grep -q "EXEC (Executable file)" || fail "$NOFP_STATIC is not ET_EXEC"
	NOFP=$NOFP_STATIC
	extra=(--static)
fi
: "${NOFP:?NOFP is not set}"
DEPTH=300
if [ "$MODE" = evict ]; then
	# A machine that keeps starting new binaries (issues 20 and 38): -a
	# while 80 fresh copies of sleep run, in a store with room for what the
	# machine maps at the start and 10,000 slots more (BPFPROF_TEST_UNWIND_MEMORY;
	# a copy of sleep takes some 350): the copies, never sampled, evict one
	# another, and nofp, sampled throughout, keeps its whole stacks. Each
	# copy lives 0.3 s, so that bpfprof reads its mappings whatever the
	# machine's load.
	# What the machine maps at the start: a short recording's -v line.
	run_bpfprof 60 -a -d 1 -v -o "$WORK/probe.json.gz"
	expect_success
	base=$(sed -n 's/^bpfprof: debug: unwind tables: .* \([0-9]*\) slots of 8 bytes.*/\1/p' "$WORK/bpfprof.err" | head -n 1)
	[[ $base =~ ^[0-9]+$ ]] || fail "bpfprof -v did not say how many slots its tables took"
	# The recording starts first and ends once the churn has run, however
	# long loading the programs takes; nofp outlives it (the exit kills it).
	start_background nofp "$NOFP" 120 "$DEPTH"
	NOFP_PID=$BG_PID
	wait_output nofp '^nofp: truth pid '
	mkdir -p "$WORK/churn"
	BPFPROF_TEST_UNWIND_MEMORY=$((512 * 1024 + 8 * (base + 10000))) \
		start_recording_all "$WORK/unwind.json.gz" -v
	for ((i = 0; i < 80; i++)); do
		cp /bin/sleep "$WORK/churn/sleep-$i" && "$WORK/churn/sleep-$i" 0.3 &
		sleep 0.02
	done
	wait_churn=$(jobs -p | grep -vxF -e "$BPFPROF_PID" -e "$NOFP_PID")
	# shellcheck disable=SC2086
	[ -z "$wait_churn" ] || wait $wait_churn
	rm -f "$WORK/churn"/sleep-*
	sleep 0.5
	kill -INT "$BPFPROF_PID"
	wait "$BPFPROF_PID"
	STATUS=$?
	expect_success
	store=$(grep -m 1 '^bpfprof: unwind store: ' "$WORK/bpfprof.err") || fail "bpfprof printed no unwind store line"
	[[ $store =~ \ ([0-9]+)\ evicted, ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] ||
		fail "no table was evicted in a store of $base + 10000 slots: $store"
	ok "$store"
	# nofp's main thread (recursing 300 deep, no frame pointers): whole stacks from _start.
	log "\$ unwind_checks.mjs --whole-main --profile $WORK/unwind.json.gz --pid $NOFP_PID"
	node_check unwind_checks.mjs --whole-main --profile "$WORK/unwind.json.gz" --gzip \
		--pid "$NOFP_PID" || fail "nofp lost its whole stacks while tables were evicted"
	exit 0
else
	run_bpfprof 60 -v --unwind "${AUTO:-$MODE}" -o "$WORK/unwind.json.gz" -- "$NOFP" 2 "$DEPTH"
	expect_success
	if [ -n "${BPFPROF_TEST_NO_NOPREALLOC:-}" ]; then
		said=$(grep -c "cannot use hash maps that are not preallocated (before Linux 6.1); unwinding with frame pointers" \
			"$WORK/bpfprof.err")
		[ "$said" -eq 1 ] || fail "--unwind auto said why it fell back to frame pointers $said times, not once"
		ok "--unwind auto on a kernel whose perf_event programs cannot use the walk's maps: frame pointers, said"
		# Asked for by name there: one line that says why and what to use, not the verifier's log.
		cp "$WORK/bpfprof.out" "$WORK/nofp.out"
		run_bpfprof 30 --unwind cfi -o "$WORK/cfi_old.json.gz" -- true
		[ "$STATUS" -ne 0 ] || fail "--unwind cfi ran on a kernel that cannot run the walk"
		grep -q "^bpfprof: error: --unwind cfi cannot run here: .*before Linux 6.1.*use --unwind fp" \
			"$WORK/bpfprof.err" || fail "--unwind cfi did not say why it cannot run: $(head -c 600 "$WORK/bpfprof.err")"
		ok "--unwind cfi there: $(grep -m 1 '^bpfprof: error: ' "$WORK/bpfprof.err")"
		# The stacks of threads asleep all along come from an iter/task program,
		# which the preallocation rule does not touch (5.17-6.0 lost them).
		sleep 60 &
		sleeper=$!
		sleep 0.3
		run_bpfprof 30 -v -p "$sleeper" -d 1 -o "$WORK/asleep.json.gz"
		kill "$sleeper" 2>/dev/null
		expect_success
		grep -q "^bpfprof: debug: threads blocked all along: 1 .* 1 with stacks" "$WORK/bpfprof.err" ||
			fail "the thread asleep all along has no stack: $(grep 'blocked all along' "$WORK/bpfprof.err")"
		ok "$(grep -m 1 'threads blocked all along' "$WORK/bpfprof.err")"
		cp "$WORK/nofp.out" "$WORK/bpfprof.out"
	fi
fi
read -r _ _ _ pid _ depth _ reader < <(grep -m 1 "^nofp: truth pid " "$WORK/bpfprof.out")
[[ $pid =~ ^[0-9]+$ && $reader =~ ^[0-9]+$ ]] && [ "$depth" = "$DEPTH" ] ||
	fail "nofp did not print 'nofp: truth pid P depth $DEPTH reader T': $(head -n 3 "$WORK/bpfprof.out")"
if [ "$MODE" = cfi ]; then
	grep -q "^bpfprof: debug: unwind tables: " "$WORK/bpfprof.err" || fail "bpfprof -v did not say it loaded unwind tables"
	ok "$(grep "^bpfprof: debug: unwind tables: " "$WORK/bpfprof.err")"
	expect=()
else
	expect=(--expect-broken)
fi
log "\$ unwind_checks.mjs --profile $WORK/unwind.json.gz --pid $pid --depth $DEPTH --reader $reader ${expect[*]} ${extra[*]}"
node_check unwind_checks.mjs --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" \
	--depth "$DEPTH" --reader "$reader" "${expect[@]}" "${extra[@]}" || fail "unwind checks failed"
