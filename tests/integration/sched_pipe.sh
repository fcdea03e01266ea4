#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof --sched-min 0 -- pipepair 2 20`: a reader blocked in read(2) on a
# pipe that a writer feeds one byte every 20 ms. With no marker threshold,
# every wait is a marker: the reader's Off-CPU markers last ~20 ms, say
# "sleeping", name the writer as waker and carry the blocked stack; its
# Runnable markers name the writer; the writer has a Wakeup marker per wakeup.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

PERIOD_MS=20
run_bpfprof 60 --sched-min 0 -o "$WORK/pipe.json.gz" -- "$PIPEPAIR" 2 "$PERIOD_MS"
expect_success
workload_ids
run_sched_check "$WORK/pipe.json.gz" --gzip --sched-min 0 \
	--expect "offcpu-markers preader sleeping pwriter $PERIOD_MS" \
	--expect "marker-stack preader reader_wait pipe_read" \
	--expect "runnable-markers preader pwriter" \
	--expect "wakeup-markers pwriter preader" \
	--expect "offcpu-reason preader sleeping 90" \
	--expect "offcpu-stack preader sleeping reader_wait pipe_read" \
	--expect "offcpu-time preader" \
	--expect "offcpu-time pwriter"
