#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Two threads that wake each other on one CPU (bench/pingpong.c pinned to the
# first CPU we may use): ~1 M switches and ~0.5 M wakeups per second, every
# wait a few microseconds. Each of those wakeups must stay in the kernel,
# folded into the wakee's next record, instead of costing a record of its
# own. Since 6.12 such a sleeper usually stays queued ("delayed dequeue"),
# which once made the BPF program send every one of them (95 % as records).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
: "${PINGPONG:?PINGPONG is not set}"
require_root
make_workdir

cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
[[ $cpu =~ ^[0-9]+$ ]] || fail "cannot tell which CPUs this test may use"
run_bpfprof 60 -o "$WORK/pp.json.gz" -- "$PINGPONG" -p -s 1 -c "$cpu,$cpu"
expect_success
WL_PID=$(head -n 1 "$WORK/bpfprof.out")
[[ $WL_PID =~ ^[0-9]+$ ]] || fail "pingpong did not print its pid first: $(head -n 3 "$WORK/bpfprof.out")"
trips=$(sed -n 's/^round_trips=\([0-9]*\) .*/\1/p' "$WORK/bpfprof.out")
[[ $trips =~ ^[0-9]+$ ]] || fail "pingpong did not say how many round trips it made"
log "pingpong (pid $WL_PID) on CPU $cpu: $trips round trips"
# A round trip on one CPU needs at least one of the two to sleep in read()
# and be woken (with preemption in between, seldom both: ~1.1 wakeups per
# round trip here); half of that is the floor. The threshold is 1 ms and
# the waits are microseconds, so nearly every wakeup ends a short wait.
run_check sched --profile "$WORK/pp.json.gz" --gzip --pid "$WL_PID" \
	--expect "kept-wakeups 2 $((trips / 2))"
