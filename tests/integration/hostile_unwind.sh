#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user against the unwind tables of a root `bpfprof -a` (issue 27).
# The user builds a program whose one function has one FDE of hundreds of
# thousands of CFI rows (a push/pop pair, each with its .cfi_adjust_cfa_offset,
# repeated; 1.2 MB for 300k rows) and runs it, spinning. Its table used to
# cost minutes on the thread that drains the rings (libdw ran the FDE's
# program from its start for every row), and the samples of those minutes
# were lost.
#
#   long_fde     300k rows: the table costs <= 1 s to build (bpfprof -v's
#                summary: the longest file), no sample is lost, the 3 s
#                recording ends on time, and the function's caller (main)
#                is in its stacks: the table was built and used.
#   over_budget  1.2M rows in the FDE, more than its budget: the file is
#                walked with frame pointers, said once (two processes run
#                it), and the recording still ends on time, nothing lost.
#
# Usage: hostile_unwind.sh long_fde|over_budget
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
require_root
make_workdir
MODE=${1:?usage: hostile_unwind.sh long_fde|over_budget}
case $MODE in
long_fde) PAIRS=150000 ;;
over_budget) PAIRS=600000 ;;
*) fail "unknown mode $MODE" ;;
esac
make_hostile_user

# The user's program: main calls spin, one function, one FDE, 2 rows a pair.
cat >"$USER_DIR/spin.S" <<EOF
	.text
	.globl	spin
	.type	spin, @function
spin:
	.cfi_startproc
1:
	.rept $PAIRS
	push	%rax
	.cfi_adjust_cfa_offset 8
	pop	%rax
	.cfi_adjust_cfa_offset -8
	.endr
	jmp	1b
	.cfi_endproc
	.size	spin, .-spin
	.section .note.GNU-stack,"",@progbits
EOF
cat >"$USER_DIR/main.c" <<'EOF'
void spin(void);
int main(void) { spin(); return 0; }
EOF
chown "$USER_NAME:" "$USER_DIR/spin.S" "$USER_DIR/main.c"
(cd "$USER_DIR" && env TMPDIR="$USER_DIR" "${as_user[@]}" gcc -O2 -fomit-frame-pointer \
	-o "$USER_DIR/spin" main.c spin.S) >"$WORK/gcc.out" 2>&1 ||
	fail "the user cannot build the program: $(cat "$WORK/gcc.out")"
rows=$(readelf --debug-dump=frames "$USER_DIR/spin" 2>/dev/null | grep -c 'DW_CFA_def_cfa_offset')
log "the user's program: $(stat -c %s "$USER_DIR/spin") bytes, $rows CFA rows in its FDEs"
[ "$rows" -ge $((2 * PAIRS)) ] || fail "the program has $rows rows, not $((2 * PAIRS)): the test tests nothing"

"${as_user[@]}" "$USER_DIR/spin" &
VICTIMS=("$!")
[ "$MODE" = over_budget ] && { "${as_user[@]}" "$USER_DIR/spin" & VICTIMS+=("$!"); }
HOSTILE_CLEANUP+=('kill -KILL "${VICTIMS[@]}" 2>/dev/null')
sleep 0.3

run_bpfprof 90 -a -d 3 -v -o "$WORK/p.json.gz"
expect_success
# 3 s of recording; the start reads every process's files and the end names
# every function: on a quiet machine ~5 s in all. Before issue 27: minutes.
awk -v t="$ELAPSED" 'BEGIN { exit !(t < 45) }' || fail "bpfprof took ${ELAPSED}s for a 3 s recording"
ok "a 3 s recording took ${ELAPSED}s"

summary=$(grep '^bpfprof: debug: unwind tables: .* the longest' "$WORK/bpfprof.err" | tail -n 1)
[ -n "$summary" ] || fail "bpfprof -v printed no summary of its unwind tables"
longest=$(sed -n 's/.* the longest \([0-9.]*\) ms .*/\1/p' <<<"$summary")
awk -v t="$longest" 'BEGIN { exit !(t <= 1000) }' || fail "a table took ${longest} ms to build: $summary"
ok "no table took more than 1 s to build: ${summary#bpfprof: debug: }"

grep -q "lost because a ring buffer was full" "$WORK/bpfprof.err" &&
	fail "samples were lost: $(grep 'lost because' "$WORK/bpfprof.err" | head -n 3)"
"$NODE" --input-type=module -e '
import zlib from "zlib";
import fs from "fs";
import { Profile } from "'"$CHECK_DIR"'/profile.mjs";
const file = process.argv[1], mode = process.argv[2];
const raw = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)));
const x = Object.fromEntries(raw.meta.extra[0].entries.map((e) => [e.label, e.value]));
const lost = x["Lost samples"];
const p = Profile.fromFile(file);
let spin = 0, withMain = 0;
for (const t of p.threads) for (const s of p.samplesOf(t)) {
	const names = s.path.map((f) => p.frameFuncName(f));
	const at = names.indexOf("spin");
	if (at < 0) continue;
	spin++;
	if (names.includes("main")) withMain++;
}
console.log(`${lost} samples lost; ${spin} samples in spin, ${withMain} of them under main`);
// A rebuild of the tables (another user mapping libLLVM) walks some with frame pointers for a moment.
const ok = lost === 0 && spin > 100 && (mode === "long_fde" ? withMain > spin * 0.5 : true);
process.exit(ok ? 0 : 1);
' "$WORK/p.json.gz" "$MODE" >"$WORK/check.out" 2>&1 || fail "the profile: $(cat "$WORK/check.out")"
ok "$(cat "$WORK/check.out")"

said=$(grep -c "spin: its unwind table would cost more than its budget" "$WORK/bpfprof.err")
if [ "$MODE" = over_budget ]; then
	[ "$said" -eq 1 ] || fail "the file over its budget was said $said times, not once"
	ok "$(grep "spin: its unwind table" "$WORK/bpfprof.err")"
else
	[ "$said" -eq 0 ] || fail "a 300k-row FDE went over the budget: $(grep 'spin: its unwind' "$WORK/bpfprof.err")"
fi
