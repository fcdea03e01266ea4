#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The raw_tp fallback of the scheduler programs (kernels whose BTF lacks the
# tracepoints' types), forced with BPFPROF_FORCE_RAW_TP=1 on this kernel:
# `bpfprof -v -- pipepair 2 20` at the default --sched-min must give what the
# tp_btf programs give. raw_tp programs cannot reach a wakee's task storage,
# so every wakeup is a record there; the reader's 20 ms waits still end with
# the writer as waker, and the CPU accounting stays exact.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

BPFPROF_PREFIX=(BPFPROF_FORCE_RAW_TP=1)
PERIOD_MS=20
run_bpfprof 60 -v -o "$WORK/raw.json.gz" -- "$PIPEPAIR" 2 "$PERIOD_MS"
expect_success
for tp in sched_switch sched_waking sched_wakeup_new; do
	grep -q "$tp: raw_tp program" "$WORK/bpfprof.err" || fail "bpfprof did not use the raw_tp program for $tp"
done
ok "bpfprof used the raw_tp programs"
workload_ids
run_sched_check "$WORK/raw.json.gz" --gzip --sched-min 1 \
	--expect "offcpu-markers preader sleeping pwriter $PERIOD_MS" \
	--expect "marker-stack preader reader_wait pipe_read" \
	--expect "offcpu-reason preader sleeping 90" \
	--expect "offcpu-stack preader sleeping reader_wait pipe_read" \
	--expect "cpu-truth pwriter" \
	--expect "offcpu-time preader"
