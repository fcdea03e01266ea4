#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind.sh: what whole user stacks cost. A CPU-bound workload built as
# distributions build (-O2 -fomit-frame-pointer) runs alone and under five
# whole-machine profilers, interleaved and rotated each round:
#
#   A  the workload alone
#   B  bpfprof -a --unwind cfi (the default: .eh_frame tables walked in BPF)
#   C  bpfprof -a --unwind fp
#   D  perf record -a -g (frame pointers)
#   E  perf record -a --call-graph dwarf (8 KiB stack copies, unwound later)
#
# then prints, from the same run: throughput ratios (medians), the share of
# user stacks that reach a thread root under B and C (bpfprof's own count),
# BPF run time per sample with cfi and with fp (kernel.bpf_stats_enabled),
# and the unwind tables' size and build time for everything running here.
# A benchmark, not a test: it asserts nothing about absolute times.
#
# Usage: sudo bench/unwind.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#            [--freq HZ] [--quick]

set -u -o pipefail

PROG=unwind.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

FREQ=999
CONFIGS=(A B C D E)
declare -A LABEL=(
	[A]="A  baseline (no profiler)"
	[B]="B  bpfprof -a --unwind cfi"
	[C]="C  bpfprof -a --unwind fp"
	[D]="D  perf record -a -g"
	[E]="E  perf record -a --call-graph dwarf"
)

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

Throughput of a frame-pointer-less CPU-bound workload (bench/cpu_work.c at
-O2 -fomit-frame-pointer) alone and under bpfprof (cfi, fp) and perf record
(-g, --call-graph dwarf), interleaved; then how whole bpfprof's stacks are,
its BPF cost per sample, and the size and build time of its unwind tables.

  --rounds N        rounds of all five configurations (default 7)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --freq HZ         sampling frequency of every profiler (default 999)
  --quick           smoke test: 3 rounds of 2 s
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--freq) FREQ=$2 ;;
	esac
}

build_workload() {
	cc -O2 -fomit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
}

# Throughput over wall time (ops/s) of one run.
run_workload() {
	local out

	out=$("$WORK/cpu_work" -s "$WORK_SECONDS") || die "cpu_work failed"
	out=${out##*ops_per_s=}
	echo "${out%% *}"
}

start_perf() {
	start_wrapped perf perf record -a "$@" -F "$FREQ" -e cpu-clock -o "$WORK/perf.data"
	# No control FIFO here: perf with --call-graph dwarf takes a moment to set up.
	sleep 1
	kill -0 "$PROF_PID" 2>/dev/null || {
		sed 's/^/  /' "$WORK/perf.err" >&2
		die "perf record exited before the workload"
	}
}

# "PERCENT TOTAL": the share of user stacks reaching a thread root, from bpfprof's summary.
stack_share() {
	sed -n 's/^bpfprof: user stacks: \([0-9.]*\)% of \([0-9]*\) reach.*/\1 \2/p' "$WORK/bpfprof.err" |
		tail -n 1
}

declare -A TP SHARE
run_config() {
	local c=$1 r=$2

	case $c in
	A) TP[$c,$r]=$(run_workload) ;;
	B | C)
		start_bpfprof --unwind "$([ "$c" = B ] && echo cfi || echo fp)"
		TP[$c,$r]=$(run_workload)
		stop_bpfprof
		SHARE[$c,$r]=$(stack_share)
		rm -f "$WORK/bpfprof.json.gz"
		;;
	D | E)
		if [ "$c" = D ]; then start_perf -g; else start_perf --call-graph dwarf; fi
		TP[$c,$r]=$(run_workload)
		stop_perf
		rm -f "$WORK/perf.data"
		;;
	esac
}

run_rounds() {
	local r c rot order

	echo "== throughput: $ROUNDS rounds of ${CONFIGS[*]}, interleaved and rotated =="
	printf '%-7s %-6s' round order
	for c in "${CONFIGS[@]}"; do printf ' %9s' "$c Mops/s"; done
	echo
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % ${#CONFIGS[@]}))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			sleep 0.3
		done
		printf '%-7s %-6s' "$((r + 1))/$ROUNDS" "$(printf '%s' "${order[@]}")"
		for c in "${CONFIGS[@]}"; do printf ' %9s' "$(calc "${TP[$c,$r]} / 1e6" %.2f)"; done
		echo
	done
}

median_of() {
	local c=$1 r
	local -a xs=()

	for ((r = 0; r < ROUNDS; r++)); do xs+=("${TP[$c,$r]}"); done
	median "${xs[@]}"
}

summarize() {
	local c m ma r
	local -a shares

	ma=$(median_of A)
	echo
	echo "== throughput over wall time, median of $ROUNDS rounds =="
	printf '%-40s %10s %8s\n' configuration Mops/s "vs A"
	for c in "${CONFIGS[@]}"; do
		m=$(median_of "$c")
		printf '%-40s %10s %8s\n' "${LABEL[$c]}" "$(calc "$m / 1e6" %.2f)" "$(calc "$m / $ma" %.3f)"
	done
	echo
	echo "== user stacks reaching a thread root (bpfprof's count over the whole machine) =="
	for c in B C; do
		shares=()
		for ((r = 0; r < ROUNDS; r++)); do shares+=("${SHARE[$c,$r]%% *}"); done
		printf '%-40s median %s%% (per round: %s)\n' "${LABEL[$c]}" "$(median "${shares[@]}")" "${shares[*]}"
	done
}

# The Go workload (tests/workloads/go/gowork.go, hot in crypto/sha256's assembly), when go is here.
build_go_workload() {
	command -v go >/dev/null 2>&1 || return 1
	GOCACHE=$WORK/gocache GOPATH=$WORK/gopath GO111MODULE=off HOME=${HOME:-$WORK} \
		go build -o "$WORK/gowork" "$HERE/../tests/workloads/go/gowork.go" >"$WORK/go-build.log" 2>&1
}

run_go_workload() {
	"$WORK/gowork" "$WORK_SECONDS" >/dev/null || die "gowork failed"
}

# BPF run time per on_sample run, and of all programs, for one unwinder
# (and workload: run_workload, or run_go_workload for Go's pcsp rows).
measure_cost() {
	local how=$1 workload=${2:-run_workload} ids s0 s1 t0 t1 tables

	enable_bpf_stats
	start_bpfprof -v --unwind "$how"
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	t0=$(now_ns)
	s0=$(bpf_stats on_sample "${ids[@]}")
	"$workload" >/dev/null
	s1=$(bpf_stats on_sample "${ids[@]}")
	t1=$(now_ns)
	stop_bpfprof
	restore_bpf_stats
	tables=$(sed -n 's/^bpfprof: debug: unwind tables: //p' "$WORK/bpfprof.err" | head -n 1)
	rm -f "$WORK/bpfprof.json.gz"
	awk -v a="$s0" -v b="$s1" -v how="$how${2:+ ($workload)}" -v all="$(((t1 - t0) * NCPU))" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		n = y[4] - x[4]; ns = y[3] - x[3]; tot = y[1] - x[1]
		printf "%-4s on_sample: %d runs, %.0f ns per sample; all programs %.3f%% of all CPU time\n",
			how, n, n ? ns / n : 0, tot / all * 100 }'
	[ -z "$tables" ] || echo "     unwind tables at start: $tables"
	sed -n 's/^bpfprof: user stacks: /     user stacks: /p' "$WORK/bpfprof.err" | tail -n 1
}

main() {
	parse_bench_args "--freq" "" "$@"
	is_uint "$FREQ" || die "--freq wants a positive integer, not '$FREQ'"
	bench_start unwind "system-wide profiling and bpf_stats need it"
	command -v perf >/dev/null 2>&1 || die "perf is not installed (scripts/install-deps.sh --bench)"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workload"
	BPFPROF_ARGS=(-a -F "$FREQ" -e cpu-clock -o "$WORK/bpfprof.json.gz")

	build_workload
	echo "bpfprof unwinding benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; workload: $NCPU threads x" \
		"$WORK_SECONDS s, -O2 -fomit-frame-pointer; cpu-clock at $FREQ Hz; $(perf --version)"
	run_workload >/dev/null

	run_rounds
	summarize
	echo
	echo "== bpfprof's cost per sample (kernel.bpf_stats_enabled=1), one run each =="
	measure_cost cfi
	measure_cost fp
	if build_go_workload; then
		echo "Go (gowork: 2 goroutines in crypto/sha256's assembly, unwound by .gopclntab's pcsp rows):"
		measure_cost cfi run_go_workload
	else
		echo "Go: not measured (no go command: scripts/install-deps.sh --test installs golang-go)"
	fi
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

main "$@"
