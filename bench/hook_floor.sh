#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# hook_floor.sh: what bpfprof's programs cost per context switch, wakeup
# and syscall, next to an empty program on the same hook (the floor: what
# any program there costs before it does anything). BPF run time per event
# from kernel.bpf_stats_enabled, one run each, on the workloads that hammer
# those hooks: a ping-pong over pipes pinned to two CPUs (switches and
# wakeups) and a getppid loop (syscalls).
#
#   floor        build/bpfprof-hook-floor: empty tp_btf programs
#   record       bpfprof -a, the defaults (999 Hz, off-CPU stacks, blocking syscalls)
#   continuous   bpfprof continuous -a, its defaults (49 Hz, no off-CPU stacks)
#   all          bpfprof -a --syscalls=all (sys_enter/sys_exit on every syscall)
#
# bpf_stats itself adds two clock reads to every program run, to the floor
# as to the rest. A benchmark, not a test: it asserts nothing.
#
# Usage: sudo bench/hook_floor.sh [--seconds S] [--bpfprof PATH]

set -u -o pipefail

PROG=hook_floor.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

usage() {
	cat <<EOF
usage: $PROG [--seconds S] [--bpfprof PATH]       (as root)

BPF run time per context switch, wakeup and syscall of bpfprof's defaults
(record and continuous) and of --syscalls=all, next to empty programs on the
same hooks (build/bpfprof-hook-floor).
EOF
}

set_option() {
	:
}

declare -A NS

# measure TAG WORKLOAD START...: one run of WORKLOAD under the profiler START
# starts (it must set PROF_PID), then the ns per run of each of its programs
# into NS[TAG,program].
measure() {
	local tag=$1 workload=$2 id name rt cnt
	local -a ids before after
	shift 2

	enable_bpf_stats
	"$@"
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	mapfile -t before < <(bpf_prog_stats "${ids[@]}")
	"$workload" >/dev/null || die "the workload failed"
	mapfile -t after < <(bpf_prog_stats "${ids[@]}")
	stop_profiler
	restore_bpf_stats
	while read -r id name rt cnt; do
		local rt0=0 cnt0=0 line
		for line in "${before[@]}"; do
			read -r bid _ brt bcnt <<<"$line"
			[ "$bid" = "$id" ] && rt0=$brt cnt0=$bcnt
		done
		[ $((cnt - cnt0)) -gt 0 ] &&
			NS[$tag,$name]="$(calc "($rt - $rt0) / ($cnt - $cnt0)" %.0f) ($((cnt - cnt0)))"
	done < <(printf '%s\n' "${after[@]}")
}

stop_profiler() {
	if [ "$PROF_KIND" = floor ]; then
		stop_wrapped
	else
		stop_bpfprof
		rm -rf "$WORK/bpfprof.json.gz" "$WORK/snapshots"
	fi
}

pingpong() {
	"$WORK/pingpong" -s "$WORK_SECONDS" -c 0,1
}

getppid_loop() {
	"$WORK/syscalls" -s "$WORK_SECONDS" -m getppid -c 1
}

# row LABEL FLOOR_PROG PROG COLUMN_TAGS...
row() {
	local label=$1 floor=$2 prog=$3 tag
	shift 3

	printf '%-26s %18s' "$label" "${NS[floor,$floor]:--}"
	for tag in "$@"; do
		printf ' %18s' "${NS[$tag,$prog]:--}"
	done
	echo
}

main() {
	parse_bench_args "" "" "$@"
	bench_start floor "BPF programs and bpf_stats need it"
	floor_setup
	[ "$NCPU" -ge 2 ] || die "the ping-pong needs two CPUs"
	cc -O2 -pthread -o "$WORK/pingpong" "$HERE/pingpong.c" || die "cannot compile pingpong.c"
	cc -O2 -o "$WORK/syscalls" "$HERE/syscalls.c" || die "cannot compile syscalls.c"

	echo "bpfprof hook floor, $(date -u '+%Y-%m-%d %H:%M UTC'); $(uname -r), $NCPU CPUs; $WORK_SECONDS s per run"
	BPFPROF_ARGS=(-a -o "$WORK/bpfprof.json.gz")
	measure floor pingpong start_floor sched
	measure record pingpong start_bpfprof
	BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s)
	BPFPROF_DONE='^bpfprof: '
	measure continuous pingpong start_bpfprof
	BPFPROF_ARGS=(-a -o "$WORK/bpfprof.json.gz")
	BPFPROF_DONE='^bpfprof: wrote '
	measure floor getppid_loop start_floor syscalls
	measure all getppid_loop start_bpfprof --syscalls=all

	echo
	echo "== BPF ns per event (run_time_ns / run_cnt, and runs; bpf_stats adds two clock reads to each) =="
	printf '%-26s %18s %18s %18s\n' "scheduler (pingpong)" "empty program" "record -a" "continuous -a"
	row "context switch" floor_switch on_switch_btf record continuous
	row "wakeup" floor_waking on_waking_btf record continuous
	printf '%-26s %18s %18s\n' "syscalls (getppid)" "empty program" "--syscalls=all"
	row "syscall entry" floor_sys_enter on_sys_enter_btf all
	row "syscall exit" floor_sys_exit on_sys_exit_btf all
	echo "(record and continuous hook no syscall by default: --syscalls=blocking)"
}

main "$@"
