#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Two threads that wake each other on one CPU (bench/pingpong.c pinned to the
# first CPU we may use): ~0.4 M switches and ~0.2 M wakeups per second here,
# every wait a few microseconds. Those waits and their wakeups must stay in
# the kernel, only counted, instead of costing a record each (since 6.12
# such a sleeper usually stays queued, "delayed dequeue", which once made the
# BPF program send 95 % of the wakeups as records), and the profile's
# switch counts must still be the kernel's own (getrusage of each thread).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
: "${PINGPONG:?PINGPONG is not set}"
require_root
make_workdir

cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
[[ $cpu =~ ^[0-9]+$ ]] || fail "cannot tell which CPUs this test may use"

truth() { # THREAD FIELD: a number of the workload's "pingpong: truth THREAD ..." line
	sed -n "s/^pingpong: truth $1 .* $2 \([0-9]*\).*/\1/p" "$WORK/bpfprof.err"
}

# record NAME: one second of pingpong on one CPU; sets WL_PID and TRIPS.
record() {
	run_bpfprof 60 -o "$WORK/$1.json.gz" -- "$PINGPONG" -p -s 1 -c "$cpu,$cpu"
	expect_success
	WL_PID=$(head -n 1 "$WORK/bpfprof.out")
	[[ $WL_PID =~ ^[0-9]+$ ]] || fail "pingpong did not print its pid first: $(head -n 3 "$WORK/bpfprof.out")"
	TRIPS=$(sed -n 's/^round_trips=\([0-9]*\) .*/\1/p' "$WORK/bpfprof.out")
	[[ $TRIPS =~ ^[0-9]+$ ]] || fail "pingpong did not say how many round trips it made"
	local t f
	for t in ping pong; do
		for f in nvcsw nivcsw; do
			[[ $(truth "$t" "$f") =~ ^[0-9]+$ ]] || fail "pingpong printed no $f for $t"
		done
	done
	log "pingpong (pid $WL_PID) on CPU $cpu: $TRIPS round trips; the kernel counted" \
		"ping $(truth ping nvcsw)+$(truth ping nivcsw), pong $(truth pong nvcsw)+$(truth pong nivcsw) switches"
}

# Every wait sent as a record (BPFPROF_FOLD_WAITS=0): the wakeups of the
# short ones must still stay in the kernel. A round trip on one CPU needs at
# least one of the two to sleep in read() and be woken (with preemption in
# between, seldom both: ~1.1 wakeups per round trip here); half of that is
# the floor. The threshold is 1 ms and the waits are microseconds, so
# nearly every wakeup ends a short wait.
BPFPROF_PREFIX=(BPFPROF_FOLD_WAITS=0)
record sent
run_check sched --profile "$WORK/sent.json.gz" --gzip --pid "$WL_PID" \
	--expect "kept-wakeups 2 $((TRIPS / 2))" \
	--expect "switches ping $(truth ping nvcsw) $(truth ping nivcsw)" \
	--expect "switches pong $(truth pong nvcsw) $(truth pong nivcsw)"

# The default: nearly every switch is only counted in the kernel (the sends
# left are bounded by time: per off-CPU sampling interval and per switch-out
# stack), and the totals are still the kernel's own.
BPFPROF_PREFIX=()
record folded
run_check sched --profile "$WORK/folded.json.gz" --gzip --pid "$WL_PID" \
	--expect "kept-switches $TRIPS" \
	--expect "switches ping $(truth ping nvcsw) $(truth ping nivcsw)" \
	--expect "switches pong $(truth pong nvcsw) $(truth pong nivcsw)"
