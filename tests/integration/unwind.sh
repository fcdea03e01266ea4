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
# Usage: unwind.sh cfi|fp
. "$(dirname "$0")/common.sh"
: "${NOFP:?NOFP is not set}"
require_root
make_workdir

MODE=${1:?usage: unwind.sh cfi|fp}
DEPTH=300
run_bpfprof 60 -v --unwind "$MODE" -o "$WORK/unwind.json.gz" -- "$NOFP" 2 "$DEPTH"
expect_success
read -r _ _ _ pid _ depth _ reader < <(grep -m 1 "^nofp: truth pid " "$WORK/bpfprof.out")
[[ $pid =~ ^[0-9]+$ && $reader =~ ^[0-9]+$ ]] && [ "$depth" = "$DEPTH" ] ||
	fail "nofp did not print 'nofp: truth pid P depth $DEPTH reader T': $(head -n 3 "$WORK/bpfprof.out")"
if [ "$MODE" = cfi ]; then
	grep -q "^bpfprof: unwind tables: " "$WORK/bpfprof.err" || fail "bpfprof -v did not say it loaded unwind tables"
	ok "$(grep "^bpfprof: unwind tables: " "$WORK/bpfprof.err")"
	expect=()
else
	expect=(--expect-broken)
fi
log "\$ unwind_checks.mjs --profile $WORK/unwind.json.gz --pid $pid --depth $DEPTH --reader $reader ${expect[*]}"
"$NODE" "$CHECK_DIR/unwind_checks.mjs" --profile "$WORK/unwind.json.gz" --gzip --pid "$pid" \
	--depth "$DEPTH" --reader "$reader" "${expect[@]}" || fail "unwind checks failed"
