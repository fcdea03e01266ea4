#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Python functions in the stacks (issue 26): Debian's own /usr/bin/python3
# (3.11, stripped, no frame pointers) running tests/workloads/pyfuncs.py,
# three nested pure-Python functions on two threads. Asks nothing of the
# program: no flag, no module, no restart.
#
#   before  started before the recording, then recorded with -p PID
#   during  started by bpfprof (-- python3 ...), and a child it forks
#   fp      the control: --unwind fp (no Python frames), where fewer than
#           half of the samples may show the functions
#
# Usage: python.sh before|during|fp
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: python.sh before|during|fp}
PY=/usr/bin/python3
SCRIPT=$(cd "$(dirname "$0")/../workloads" && pwd)/pyfuncs.py
[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
check=()
case $MODE in
before)
	start_background pyfuncs "$PY" "$SCRIPT" 6
	for ((i = 0; i < 200; i++)); do
		grep -q "^pyfuncs: truth pid" "$WORK/pyfuncs.out" && break
		sleep 0.05
	done
	read -r _ _ _ pid < <(grep -m 1 "^pyfuncs: truth pid" "$WORK/pyfuncs.out")
	[[ $pid =~ ^[0-9]+$ ]] || fail "pyfuncs.py did not start: $(cat "$WORK/pyfuncs.out")"
	run_bpfprof 60 -v -p "$pid" -d 2 -o "$WORK/python.json.gz"
	TRUTH=$WORK/pyfuncs.out
	;;
during | fp)
	unwind=()
	[ "$MODE" = fp ] && unwind=(--unwind fp) check=(--expect-broken)
	run_bpfprof 60 -v "${unwind[@]}" -o "$WORK/python.json.gz" -- "$PY" "$SCRIPT" 2 --fork
	TRUTH=$WORK/bpfprof.out
	check+=(--fork)
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
expect_success
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
log "\$ python_checks.mjs --profile $WORK/python.json.gz --truth $TRUTH ${check[*]}"
"$NODE" "$CHECK_DIR/python_checks.mjs" --profile "$WORK/python.json.gz" --gzip --truth "$TRUTH" "${check[@]}" ||
	fail "Python checks failed"
