#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -- pipepair 3 20` (issue 28): a reader whose 20 ms reads follow
# each other with only microseconds on the CPU between them, too briefly for
# an on-CPU sample, so consecutive off-CPU samples of different reads carry
# the same stack. The front-end's stack chart joins consecutive samples of
# the same stack into one box: each read must still be its own box, checked
# with the front-end's own getStackTimingByDepth (stack_chart.mjs), at the
# kernel's pipe read and at the workload's reader_wait. Then the same for
# preemptions (`taskset -c 0 bpfprof -- burner 3`).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

PERIOD_MS=20
run_bpfprof 60 -o "$WORK/pipe.json.gz" -- "$PIPEPAIR" 3 "$PERIOD_MS"
expect_success
workload_ids
run_sched_check "$WORK/pipe.json.gz" --gzip \
	--expect "wait-boxes preader anon_pipe_read|pipe_read" \
	--expect "wait-boxes preader reader_wait" \
	--expect "offcpu-reason preader sleeping 90" \
	--expect "offcpu-time preader" \
	--expect "offcpu-time pwriter"

# Preemptions: burner's three busy threads on one CPU are preempted by each
# other every few ms, and now and then twice with no on-CPU sample between.
# Each Runnable wait is its own "off-CPU: preempted" box all the same.
log "three busy threads on one CPU"
BPFPROF_PREFIX=(taskset -c 0)
run_bpfprof 60 -o "$WORK/preempt.json.gz" -- "$BURNER" 3
BPFPROF_PREFIX=()
expect_success
pid=$(head -n 1 "$WORK/bpfprof.out")
tids=$(awk '$1 == "thread" { printf "%s%s=%s", n++ ? "," : "", $2, $3 }' "$WORK/bpfprof.out")
run_check sched --profile "$WORK/preempt.json.gz" --gzip --pid "$pid" --tids "$tids" \
	--expect "waits-apart alpha preempted" \
	--expect "waits-apart beta preempted" \
	--expect "waits-apart sysc preempted"
