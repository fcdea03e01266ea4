#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Who woke a thread (issue 28). `bpfprof -- sleeper 2 10`: sleeper90 sleeps
# in clock_nanosleep until a timer wakes it, beside busy100, which spins and
# never wakes anyone. The timer's interrupt lands on whatever runs, often
# busy100 (or bpfprof): that bystander must carry no Wakeup marker, and the
# sleeper's waits must say "timer". That a wakeup by a real thread (pipepair's
# writer, through the pipe) still names that thread is sched_pipe.sh's.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/sched_common.sh"
require_root
make_workdir

run_bpfprof 60 -o "$WORK/sleeper.json.gz" -- "$SLEEPER" 2 10
expect_success
workload_ids
# The timer wakes every wait of sleeper90 but the few that an interrupt
# without a tracepoint ended: most, not all. (busy100 may wake the main
# thread once, joining it at the end: a real wakeup.)
run_sched_check "$WORK/sleeper.json.gz" --gzip \
	--expect "woken-by sleeper90 timer 90" \
	--expect "no-wakeup-markers busy100 sleeper90"

