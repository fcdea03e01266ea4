#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof --no-off-cpu --sched-min 0 -- pipepair 1.5 20 2`: no off-CPU
# samples anywhere, but the scheduling markers are all still there, and the
# CPU use is still exact: the writer burns 2 ms of each 20 ms period, which
# also gives the profile on-CPU samples.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

PERIOD_MS=20
BURN_MS=2
run_bpfprof 60 --no-off-cpu --sched-min 0 -o "$WORK/nooff.json.gz" -- "$PIPEPAIR" 1.5 "$PERIOD_MS" "$BURN_MS"
expect_success
workload_ids
run_sched_check "$WORK/nooff.json.gz" --gzip --no-off-cpu --sched-min 0 \
	--expect "no-offcpu-samples" \
	--expect "offcpu-markers preader sleeping pwriter $PERIOD_MS" \
	--expect "runnable-markers preader pwriter" \
	--expect "wakeup-markers pwriter preader" \
	--expect "cpu-share pwriter 5 15" \
	--expect "cpu-truth pwriter" \
	--expect "oncpu-func pwriter writer_burn 50"
