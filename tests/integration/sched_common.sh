# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the scheduler tests (issue 3), after common.sh. SLEEPER and
# PIPEPAIR come from ctest (integration.cmake).

: "${SLEEPER:?SLEEPER is not set}" "${PIPEPAIR:?PIPEPAIR is not set}"

# workload_ids: after `bpfprof -- WORKLOAD`, reads what the workload printed
# through bpfprof's stdout: its pid (first line) and "thread NAME TID" lines.
# Sets WL_PID and WL_TIDS ("name=tid,..."), and saves the workload's ground
# truth lines (its stderr, mixed into bpfprof's) in $WORK/truth.txt.
workload_ids() {
	local line name tid
	WL_PID=$(head -n 1 "$WORK/bpfprof.out")
	[[ $WL_PID =~ ^[0-9]+$ ]] ||
		fail "the workload's pid is not the first line of bpfprof's stdout: $(head -n 3 "$WORK/bpfprof.out")"
	WL_TIDS=
	while read -r line name tid; do
		[ "$line" = thread ] && WL_TIDS+="${WL_TIDS:+,}$name=$tid"
	done <"$WORK/bpfprof.out"
	[ -n "$WL_TIDS" ] || fail "the workload printed no 'thread NAME TID' lines"
	grep -E '^(sleeper|pipepair): truth ' "$WORK/bpfprof.err" >"$WORK/truth.txt" ||
		fail "the workload printed no ground truth ('truth' lines) on stderr"
	log "workload ran as pid $WL_PID, threads $WL_TIDS; its own measurements:"
	indent <"$WORK/truth.txt"
}

# run_sched_check PROFILE [check.mjs options and --expect ...]
run_sched_check() {
	local profile=$1
	shift
	run_check sched --profile "$profile" --pid "$WL_PID" --tids "$WL_TIDS" --truth "$WORK/truth.txt" "$@"
}
