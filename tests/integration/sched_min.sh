#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof --sched-min 50ms -- pipepair 1.5 20`: the reader's 20 ms waits are
# under the threshold, so they are no markers, and the writer wakes nobody
# for long enough to get a Wakeup marker; the reader's Scheduling summary
# still counts the hidden waits, their runnable parts and the writer's
# wakeups (which the kernel folds into the reader's next record instead of
# sending them).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

PERIOD_MS=20
run_bpfprof 60 --sched-min 50ms -o "$WORK/min.json.gz" -- "$PIPEPAIR" 1.5 "$PERIOD_MS"
expect_success
workload_ids
writes=$(sed -n 's/^pipepair: truth writes \([0-9]*\) .*/\1/p' "$WORK/truth.txt")
[[ $writes =~ ^[0-9]+$ ]] || fail "pipepair did not say how many bytes it wrote"
# A reader's wait of 50 ms means a write 30 ms late, which makes the writer
# miss its next deadline too: on a machine busy enough for that, each such
# wait comes with an overrun the writer counted.
overruns=$(sed -n 's/^pipepair: truth pwriter .* overruns \([0-9]*\)$/\1/p' "$WORK/truth.txt")
[[ $overruns =~ ^[0-9]+$ ]] || fail "pipepair did not say how many periods it overran"
# Each write ends one reader wait shorter than the threshold; a few may have
# stretched past it if the machine was busy.
run_sched_check "$WORK/min.json.gz" --gzip --sched-min 50 \
	--expect "marker-min Off-CPU 50" \
	--expect "marker-min Runnable 50" \
	--expect "hidden-offcpu preader $((writes * 9 / 10))" \
	--expect "summary-min preader hiddenRunnableCount $((writes * 9 / 10))" \
	--expect "summary-min pwriter wakeupsSent $((writes * 9 / 10))" \
	--expect "marker-count pwriter Wakeup 0 $((2 + overruns))" \
	--expect "marker-count preader Off-CPU 0 $((2 + overruns))"
