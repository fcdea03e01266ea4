#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# syscalls.sh: what tracing syscalls costs a syscall-heavy loop. One thread
# calls getppid (or reads 4 KiB from /dev/zero) as fast as it can
# (bench/syscalls.c); every call passes raw_syscalls' enter and exit, where
# bpfprof counts it per thread and perf writes two records.
#
#   A  baseline: the loop alone
#   B  bpfprof -a (defaults: --syscalls=blocking, markers of waits past 1 ms
#      named at the switch-out, no per-syscall hook; scheduler capture,
#      999 Hz samples)
#   F  bpfprof -a --syscalls=all (sys_enter/sys_exit: every syscall counted)
#   N  bpfprof -a --no-syscalls (what the rest of bpfprof costs this loop)
#   C  perf record -a -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit
#
# A benchmark, not a test: it asserts nothing. The configurations run
# interleaved and rotated (A B F N C, B F N C A, ...) and the summary compares
# medians and per-round ratios measured side by side. The loop is pinned to
# one CPU (--cpu) so that runs are comparable.
#
# Usage: sudo bench/syscalls.sh [--rounds N] [--seconds S] [--mode getppid|read]
#            [--cpu N] [--bpfprof PATH] [--quick]

# shellcheck disable=SC2034 # result arrays are read through namerefs

set -u -o pipefail

PROG=syscalls.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

MODE=getppid
PIN_CPU=
LIMIT_SLACK=30
CONFIGS=(A B F N C)

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

Calls per second of a one-thread syscall loop (bench/syscalls.c) alone (A),
under bpfprof -a (B), under bpfprof -a --no-syscalls (N) and under
perf record -a -e raw_syscalls:* (C), interleaved over rounds; then bpfprof's
own cost (BPF run time per program, process CPU) with kernel.bpf_stats_enabled=1.

  --rounds N        rounds (default 7)
  --seconds S       loop wall time per run, whole seconds (default 3)
  --mode M          getppid (default; the cheapest syscall) or read (4 KiB from /dev/zero)
  --cpu N           the CPU the loop runs on (default: the last online CPU)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --quick           3 rounds of 2 s
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--mode) MODE=$2 ;;
	--cpu) PIN_CPU=$2 ;;
	esac
}

parse_args() {
	parse_bench_args "--mode --cpu" "" "$@"
	is_uint "$WORK_SECONDS" || die "--seconds wants a positive integer, not '$WORK_SECONDS'"
	[[ $MODE == getppid || $MODE == read ]] || die "--mode wants getppid or read, not '$MODE'"
	check_pin_cpu
}

# run_loop: runs the loop once; prints its calls per second.
run_loop() {
	local out

	out=$("$WORK/syscalls" -s "$WORK_SECONDS" -m "$MODE" -c "$PIN_CPU") || die "the syscall loop failed"
	out=${out##*calls_per_s=}
	[[ $out =~ ^[0-9]+$ ]] || die "unexpected output of the syscall loop: $out"
	echo "$out"
}

# bpfprof_syscall_counts: "COUNTED MARKERS_LOST TOTALS_LOST" from its summary.
bpfprof_syscall_counts() {
	sed -n 's/^bpfprof: \([0-9]*\) syscalls counted, [0-9]* shown as markers; \([0-9]*\) markers and \([0-9]*\) totals lost$/\1 \2 \3/p' \
		"$WORK/bpfprof.err" | tail -n 1
}

start_perf() {
	start_wrapped perf perf record -a -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
		-o "$WORK/perf.data" -- sleep $((WORK_SECONDS + LIMIT_SLACK))
	# perf prints no "recording" line: give it the time it needs to open its events.
	sleep 1
	kill -0 "$PROF_PID" 2>/dev/null || {
		sed 's/^/  /' "$WORK/perf.err" >&2
		die "perf record exited before the loop"
	}
}

declare -a TP_A TP_B TP_F TP_N TP_C CPU_F CPU_C WIN_F WIN_C COUNTED LOST_F

# run_config CONFIG ROUND
run_config() {
	local c=$1 r=$2 tp t0 cpu0 cpu1 counts

	case $c in
	A)
		TP_A[r]=$(run_loop) || exit 1
		;;
	B | F | N)
		case $c in
		B) start_bpfprof ;;
		F) start_bpfprof --syscalls=all ;;
		N) start_bpfprof --no-syscalls ;;
		esac
		t0=$(now_ns)
		cpu0=$(proc_cpu_s "$PROF_PID")
		tp=$(run_loop) || exit 1
		cpu1=$(proc_cpu_s "$PROF_PID")
		case $c in
		B) TP_B[r]=$tp ;;
		N) TP_N[r]=$tp ;;
		F)
			TP_F[r]=$tp CPU_F[r]=$(calc "$cpu1 - $cpu0" %.4f) WIN_F[r]=$(($(now_ns) - t0))
			;;
		esac
		stop_bpfprof
		if [ "$c" = F ]; then
			counts=$(bpfprof_syscall_counts)
			COUNTED[r]=${counts%% *}
			LOST_F[r]=$(awk '{ print $2 + $3 }' <<<"$counts")
		fi
		rm -f "$WORK/bpfprof.json.gz"
		;;
	C)
		start_perf
		t0=$(now_ns)
		cpu0=$(proc_cpu_s "$PROF_PID")
		TP_C[r]=$(run_loop) || exit 1
		cpu1=$(proc_cpu_s "$PROF_PID")
		CPU_C[r]=$(calc "$cpu1 - $cpu0" %.4f) WIN_C[r]=$(($(now_ns) - t0))
		stop_perf
		rm -f "$WORK/perf.data"
		;;
	esac
}

mcalls() {
	calc "$1 / 1e6" %.2f
}

run_rounds() {
	local r c rot
	local -a order

	echo "== calls per second, $MODE loop on CPU $PIN_CPU: $ROUNDS rounds of A (baseline)," \
		"B (bpfprof), F (--syscalls=all), N (--no-syscalls), C (perf), interleaved =="
	printf '%-7s %-6s %9s %9s %9s %9s %9s %7s %7s %7s %7s %12s %7s\n' round order "A M/s" "B M/s" \
		"F M/s" "N M/s" "C M/s" B/A F/A N/A C/A "F counted" "F lost"
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % ${#CONFIGS[@]}))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			sleep 0.3
		done
		printf '%-7s %-6s %9s %9s %9s %9s %9s %7s %7s %7s %7s %12s %7s\n' "$((r + 1))/$ROUNDS" \
			"$(printf '%s' "${order[@]}")" "$(mcalls "${TP_A[r]}")" "$(mcalls "${TP_B[r]}")" \
			"$(mcalls "${TP_F[r]}")" "$(mcalls "${TP_N[r]}")" "$(mcalls "${TP_C[r]}")" \
			"$(calc "${TP_B[r]} / ${TP_A[r]}" %.3f)" "$(calc "${TP_F[r]} / ${TP_A[r]}" %.3f)" \
			"$(calc "${TP_N[r]} / ${TP_A[r]}" %.3f)" "$(calc "${TP_C[r]} / ${TP_A[r]}" %.3f)" \
			"${COUNTED[r]:-?}" "${LOST_F[r]:-?}"
	done
}

# summary_line LABEL MEDIAN BASELINE_MEDIAN
summary_line() {
	printf '%-58s %10s %8s %8s%%\n' "$1" "$(mcalls "$2")" "$(calc "$2 / $3" %.3f)" \
		"$(calc "(1 - $2 / $3) * 100" %.1f)"
}

print_summary() {
	local ma mb mf mn mc r
	local -a rb rf rn rc sf sc

	ma=$(median "${TP_A[@]}") mb=$(median "${TP_B[@]}") mn=$(median "${TP_N[@]}") mc=$(median "${TP_C[@]}")
	mf=$(median "${TP_F[@]}")
	mapfile -t rb < <(ratio_list TP_B TP_A)
	mapfile -t rf < <(ratio_list TP_F TP_A)
	mapfile -t rn < <(ratio_list TP_N TP_A)
	mapfile -t rc < <(ratio_list TP_C TP_A)
	echo
	echo "== median of $ROUNDS rounds =="
	printf '%-58s %10s %8s %9s\n' configuration "M calls/s" "vs A" overhead
	printf '%-58s %10s %8s %9s\n' "A  baseline (no profiler)" "$(mcalls "$ma")" 1.000 -
	summary_line "B  bpfprof -a (defaults: --syscalls=blocking)" "$mb" "$ma"
	summary_line "F  bpfprof -a --syscalls=all" "$mf" "$ma"
	summary_line "N  bpfprof -a --no-syscalls" "$mn" "$ma"
	summary_line "C  perf record -a -e raw_syscalls:sys_{enter,exit}" "$mc" "$ma"
	printf 'per-round ratios (min / median / max):  B/A %.3f / %.3f / %.3f   F/A %.3f / %.3f / %.3f   N/A %.3f / %.3f / %.3f   C/A %.3f / %.3f / %.3f\n' \
		"$(min_of "${rb[@]}")" "$(median "${rb[@]}")" "$(max_of "${rb[@]}")" \
		"$(min_of "${rf[@]}")" "$(median "${rf[@]}")" "$(max_of "${rf[@]}")" \
		"$(min_of "${rn[@]}")" "$(median "${rn[@]}")" "$(max_of "${rn[@]}")" \
		"$(min_of "${rc[@]}")" "$(median "${rc[@]}")" "$(max_of "${rc[@]}")"
	echo "per call (medians): bpfprof's defaults add $(calc "(1 / $mb - 1 / $ma) * 1e9" %.1f) ns;" \
		"--syscalls=all adds $(calc "(1 / $mf - 1 / $ma) * 1e9" %.1f) ns," \
		"$(calc "(1 / $mf - 1 / $mn) * 1e9" %.1f) ns of it for tracing every syscall; perf adds" \
		"$(calc "(1 / $mc - 1 / $ma) * 1e9" %.1f) ns"
	printf 'noise: baseline A ranged %s..%s M/s (%+.1f%% / %+.1f%% around its median)\n' \
		"$(mcalls "$(min_of "${TP_A[@]}")")" "$(mcalls "$(max_of "${TP_A[@]}")")" \
		"$(calc "($(min_of "${TP_A[@]}") / $ma - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${TP_A[@]}") / $ma - 1) * 100" %.2f)"
	for ((r = 0; r < ROUNDS; r++)); do
		sf[r]=$(calc "${CPU_F[r]} * 1e9 / (${WIN_F[r]} * $NCPU) * 100" %.4f)
		sc[r]=$(calc "${CPU_C[r]} * 1e9 / (${WIN_C[r]} * $NCPU) * 100" %.4f)
	done
	echo "syscalls counted by bpfprof --syscalls=all, all rounds: $(printf '%s\n' "${COUNTED[@]}" | awk '{ s += $1 } END { print s }');" \
		"markers and totals lost: $(printf '%s\n' "${LOST_F[@]}" | awk '{ s += $1 } END { print s }')"
	echo "profiler process CPU while recording, share of all CPU time (median):" \
		"bpfprof --syscalls=all $(median "${sf[@]}")%, perf $(median "${sc[@]}")%"
}

measure_bpfprof_cost() {
	echo
	echo "== bpfprof's own cost: one more B and one more F run, with kernel.bpf_stats_enabled=1 =="
	command -v bpftool >/dev/null 2>&1 || {
		echo "skipped: bpftool is not installed"
		return 0
	}
	echo "B (defaults):"
	bpf_stats_run run_loop start_bpfprof
	stats_window "loop $(mcalls "$STATS_OUT") M calls/s"
	echo "$STATS_TABLE"
	stats_process_cpu ""
	echo "F (--syscalls=all):"
	bpf_stats_run run_loop start_bpfprof --syscalls=all
	stats_window "loop $(mcalls "$STATS_OUT") M calls/s"
	echo "$STATS_TABLE"
	stats_process_cpu ""
}

main() {
	parse_args "$@"
	bench_start syscalls "system-wide tracing and bpf_stats need it"
	command -v perf >/dev/null 2>&1 || die "perf is not installed (scripts/install-deps.sh --bench)"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the loop"
	BPFPROF_ARGS=(-a -d $((WORK_SECONDS + LIMIT_SLACK)) -o "$WORK/bpfprof.json.gz")
	cc -O2 -o "$WORK/syscalls" "$HERE/syscalls.c" || die "cannot compile $HERE/syscalls.c"

	echo "bpfprof syscall benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; $WORK_SECONDS s per run"
	echo "bpfprof: $BPFPROF; $(perf --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	run_loop >/dev/null
	run_rounds
	print_summary
	measure_bpfprof_cost
}

main "$@"
