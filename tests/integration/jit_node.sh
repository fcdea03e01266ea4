#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# JIT symbols (issue 4): `bpfprof -- node --perf-basic-prof jit_hot.js 2`.
# The workload spins for 2 s in the JS functions bpfprofHotLoop and
# bpfprofInner, whose machine code exists only in V8's heap; their names
# only in the perf map node writes, /tmp/perf-PID.map. The profile must
# name them in most of the busy thread's on-CPU samples.
#
# NODE (the node that runs the workload and the checks) and JIT_HOT (the
# workload script) may come from ctest; they default to `command -v node`
# and tests/workloads/jit_hot.js next to this script.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

JIT_NODE=$(command -v "$NODE") || fail "node ($NODE) is not installed; it runs the JIT workload"
JIT_HOT=${JIT_HOT:-$(cd "$(dirname "$0")/../workloads" && pwd)/jit_hot.js}
[ -r "$JIT_HOT" ] || fail "the JIT workload $JIT_HOT is missing"

JIT_PID=
remove_perf_map() {
	# node leaves its map behind; keep a copy with this test's files.
	if [ -n "$JIT_PID" ] && [ -f "/tmp/perf-$JIT_PID.map" ]; then
		cp "/tmp/perf-$JIT_PID.map" "$WORK/" 2>/dev/null
		rm -f "/tmp/perf-$JIT_PID.map"
	fi
}
trap 'remove_perf_map; stop_burner' EXIT

# --perf-basic-prof also makes V8 write isolate-*.log into the current
# directory: let it land with this test's files.
cd "$WORK" || fail "cannot enter $WORK"
run_bpfprof 60 -o "$WORK/jit.json.gz" -- "$JIT_NODE" --perf-basic-prof "$JIT_HOT" 2
JIT_PID=$(head -n 1 "$WORK/bpfprof.out")
[[ $JIT_PID =~ ^[0-9]+$ ]] || JIT_PID=
expect_success
[ -n "$JIT_PID" ] ||
	fail "jit_hot.js's pid is not the first line of bpfprof's stdout: $(head -n 3 "$WORK/bpfprof.out")"
grep -q '^jit_hot: iterations [0-9]* ' "$WORK/bpfprof.out" ||
	fail "jit_hot.js did not finish its loop: $(tail -n 3 "$WORK/bpfprof.out")"
log "node ran as pid $JIT_PID"

# The precondition, so that a node that writes no map is not blamed on bpfprof.
map=/tmp/perf-$JIT_PID.map
[ -s "$map" ] || fail "node --perf-basic-prof wrote no $map"
grep -qE '^(0x)?[0-9a-fA-F]+ (0x)?[0-9a-fA-F]+ .*bpfprof(HotLoop|Inner)' "$map" ||
	fail "$map has no line for bpfprofHotLoop or bpfprofInner"
ok "$map names the workload's functions ($(grep -cE 'bpfprof(HotLoop|Inner)' "$map") lines), e.g." \
	"$(grep -m 1 -E 'bpfprof(HotLoop|Inner)' "$map")"

log "\$ jit_checks.mjs --profile $WORK/jit.json.gz --pid $JIT_PID"
"$NODE" "$CHECK_DIR/jit_checks.mjs" --profile "$WORK/jit.json.gz" --gzip --pid "$JIT_PID" \
	--func bpfprofHotLoop --func bpfprofInner --min-percent 30 ||
	fail "JIT checks failed (jit_checks.mjs exit status $?)"
