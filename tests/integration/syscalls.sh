#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Syscall markers (issues 5 and 18): `bpfprof [OPTION] -- syscaller ...`,
# whose reader blocks in read(2) on a pipe that its feeder writes every
# 20 ms, whose spinner calls getppid(2) in a tight loop and whose sleeper
# calls nanosleep(2) for 1 ms again and again. The checkers judge the
# profile, on the file and through profiler-cli, against what the workload
# says it did (tids, fds, bytes, and how many reads, writes, getppid and
# nanosleep calls it made) and against bpfprof's own summary.
#
#   syscalls.sh default      the defaults (--syscalls=blocking, 1 ms): a marker
#                            per wait inside a syscall, from the scheduler,
#                            with no cost per syscall: every ~20 ms read with
#                            its fd and bytes asked, every 1 ms nanosleep,
#                            nothing for getppid, no totals
#                            (syscall_wait_checks.mjs)
#   syscalls.sh ktime_clock  the defaults, with every switch and kept wakeup
#                            reading bpf_ktime_get_ns() and held switch-outs
#                            claimed by cmpxchg (BPFPROF_SWITCH_CLOCK=ktime,
#                            BPFPROF_HELD_CLAIMS=cmpxchg): what kernels without
#                            CONFIG_FAIR_GROUP_SCHED or sched_info, or with
#                            nohz_full, run (bpf/switch_clock.bpf.h); the same
#                            checks as default
#   syscalls.sh held         the defaults with --no-off-cpu, so that every
#                            switch-out is held to its switch-in (as in
#                            continuous mode): each wait must still be one
#                            wait, also where the kernel hid the switch-in
#                            (this project's guests hide every switch away
#                            from the VM agent's threads); the same checks
#                            as default
#   syscalls.sh all          --syscalls=all: ~20 ms read markers with the fd,
#                            bytes asked and bytes read; every getppid
#                            counted in the spinner's totals, almost none a
#                            marker (syscall_checks.mjs, as every mode below)
#   syscalls.sh no_syscalls  --no-syscalls: no syscall marker, totals or
#                            schema anywhere
#   syscalls.sh min0         --syscalls=all --syscall-min 0: every syscall a marker. A short
#                            run and a spinner capped at 20000 calls keep the
#                            profile small and the ring buffers from filling.
. "$(dirname "$0")/common.sh"
: "${SYSCALLER:?SYSCALLER is not set}"
require_root
make_workdir

PERIOD_MS=20
case ${1:-} in
default)
	options=()
	workload=(2 "$PERIOD_MS")
	;;
held)
	options=(--no-off-cpu)
	workload=(2 "$PERIOD_MS")
	;;
ktime_clock)
	options=()
	workload=(2 "$PERIOD_MS")
	export BPFPROF_SWITCH_CLOCK=ktime BPFPROF_HELD_CLAIMS=cmpxchg
	;;
all)
	options=(--syscalls=all)
	expect=(--syscall-min 1)
	workload=(2 "$PERIOD_MS")
	;;
no_syscalls)
	options=(--no-syscalls)
	expect=(--no-syscalls)
	workload=(2 "$PERIOD_MS")
	;;
min0)
	options=(--syscalls=all --syscall-min 0)
	expect=(--syscall-min 0)
	workload=(1 "$PERIOD_MS" 20000)
	;;
*)
	fail "usage: syscalls.sh default|held|ktime_clock|all|no_syscalls|min0 (got '${1:-}')"
	;;
esac

run_bpfprof 60 "${options[@]}" -o "$WORK/syscalls.json.gz" -- "$SYSCALLER" "${workload[@]}"
expect_success

# The workload's stdout and stderr go through bpfprof's: its pid comes first
# on stdout, its ground truth on stderr at exit.
pid=$(head -n 1 "$WORK/bpfprof.out")
[[ $pid =~ ^[0-9]+$ ]] ||
	fail "the workload's pid is not the first line of bpfprof's stdout: $(head -n 3 "$WORK/bpfprof.out")"
grep '^syscaller: truth ' "$WORK/bpfprof.err" >"$WORK/truth.txt" ||
	fail "the workload printed no ground truth ('syscaller: truth' lines) on stderr"
log "workload ran as pid $pid; its own account:"
indent <"$WORK/truth.txt"

if [ "$1" = default ] || [ "$1" = held ] || [ "$1" = ktime_clock ]; then
	log "\$ syscall_wait_checks.mjs --pid $pid"
	node_check syscall_wait_checks.mjs --profile "$WORK/syscalls.json.gz" --gzip --pid "$pid" \
		--truth "$WORK/truth.txt" --bpfprof-err "$WORK/bpfprof.err" ||
		fail "syscall wait checks failed"
	exit 0
fi
log "\$ syscall_checks.mjs --pid $pid ${expect[*]}"
node_check syscall_checks.mjs --profile "$WORK/syscalls.json.gz" --gzip --pid "$pid" \
	--truth "$WORK/truth.txt" --bpfprof-err "$WORK/bpfprof.err" "${expect[@]}"
status=$?
[ "$status" -eq 0 ] || fail "syscall checks failed (syscall_checks.mjs exit status $status)"
