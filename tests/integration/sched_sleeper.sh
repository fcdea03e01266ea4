#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -- sleeper 2.5 10`: a thread that burns 10 % of every 10 ms period
# in sleeper_burn and sleeps the rest in clock_nanosleep from sleeper_wait, and
# a thread that spins all the time. The profile's threadCPUDelta must give
# ~10 % and ~100 %, and match what each thread measured itself; the sleeper's
# off-CPU samples must tile its off-CPU time and show where it sleeps.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

run_bpfprof 60 -o "$WORK/sleeper.json.gz" -- "$SLEEPER" 2.5 10
expect_success
workload_ids
run_sched_check "$WORK/sleeper.json.gz" --gzip \
	--expect "cpu-share sleeper90 5 15" \
	--expect "cpu-truth sleeper90" \
	--expect "oncpu-func sleeper90 sleeper_burn 50" \
	--expect "offcpu-time sleeper90" \
	--expect "offcpu-reason sleeper90 sleeping 50" \
	--expect "offcpu-stack sleeper90 sleeping sleeper_wait nanosleep" \
	--expect "cpu-busy busy100 90" \
	--expect "cpu-truth busy100" \
	--expect "oncpu-func busy100 busy_spin 80" \
	--expect "offcpu-time busy100"
