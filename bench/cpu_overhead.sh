#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# cpu_overhead.sh: how much throughput a CPU-bound workload loses while
# bpfprof samples the whole machine, next to perf record doing the same job,
# and what bpfprof itself costs (BPF program time, its own process time).
#
# This is a benchmark, not a test: it asserts nothing about absolute times.
# Machines are shared and noisy, so the three configurations run interleaved
# (A B C, B C A, C A B, ...) and the summary compares medians and ratios
# measured side by side in the same run.
#
#   A  baseline: the workload alone
#   B  bpfprof -a -F HZ -e EVENT, recording for the whole workload
#   C  perf record -a -g -F HZ -e EVENT, recording for the whole workload
#
# Usage: sudo bench/cpu_overhead.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#            [--event cpu-clock|cycles] [--threads N] [--freq HZ] [--quick]

# start_bpfprof takes optional extra options; these scripts need none.
# shellcheck disable=SC2119

set -u -o pipefail

PROG=cpu_overhead.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

EVENT='cpu-clock'
THREADS=
FREQ=999
ALLOW_VM_CYCLES=0

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

Measures the throughput of a CPU-bound workload (bench/cpu_work.c) alone (A),
under bpfprof -a (B) and under perf record -a -g (C), interleaved over rounds,
then measures bpfprof's own cost in one extra run with kernel.bpf_stats_enabled.

  --rounds N        rounds of A, B and C (default 7)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --event E         sampling event for both profilers: cpu-clock (default) or cycles
  --threads N       workload threads (default: online CPUs)
  --freq HZ         sampling frequency for both profilers (default 999)
  --quick           smoke test: 3 rounds of 2 s (explicit --rounds/--seconds win)
  --allow-vm-cycles run --event cycles even in a virtual machine (see bench/README.md)
  -h, --help        this help
EOF
}

is_seconds() {
	[[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v s="$1" 'BEGIN { exit !(s > 0) }'
}

set_option() {
	case $1 in
	--event) EVENT=$2 ;;
	--threads) THREADS=$2 ;;
	--freq) FREQ=$2 ;;
	--allow-vm-cycles) ALLOW_VM_CYCLES=1 ;;
	esac
}

parse_args() {
	parse_bench_args "--event --threads --freq" "--allow-vm-cycles" "$@"
	is_seconds "$WORK_SECONDS" || die "--seconds wants a positive number, not '$WORK_SECONDS'"
	is_uint "$FREQ" || die "--freq wants a positive integer, not '$FREQ'"
	[ -z "$THREADS" ] || is_uint "$THREADS" || die "--threads wants a positive integer, not '$THREADS'"
	case $EVENT in
	cpu-clock | cycles) ;;
	*) die "--event wants cpu-clock or cycles (both profilers must sample the same event), not '$EVENT'" ;;
	esac
}

# ---- numbers ---------------------------------------------------------------

# Millions of operations per second, for reading.
mops() {
	calc "$1 / 1e6" "%.2f"
}

# ---- cleanup ---------------------------------------------------------------

# ---- the workload ----------------------------------------------------------

build_workload() {
	# Frame pointers: both profilers walk user stacks by frame pointer, so
	# the workload's stacks are whole for both, as they would be for code
	# built to be profiled.
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
}

# run_workload: runs cpu_work once; prints its throughput over wall time and
# per CPU-second its threads got: "OPS_PER_S OPS_PER_CPU_S".
run_workload() {
	local out wall cpu

	if [ -n "$THREADS" ]; then
		out=$("$WORK/cpu_work" -t "$THREADS" -s "$WORK_SECONDS") || die "cpu_work failed"
	else
		out=$("$WORK/cpu_work" -s "$WORK_SECONDS") || die "cpu_work failed"
	fi
	wall=${out##*ops_per_s=}
	wall=${wall%% *}
	cpu=${out##*ops_per_cpu_s=}
	cpu=${cpu%% *}
	[[ $wall =~ ^[0-9]+$ && $cpu =~ ^[0-9]+$ ]] || die "unexpected cpu_work output: $out"
	echo "$wall $cpu"
}

# ---- profilers ---------------------------------------------------------------

bpfprof_lost() {
	sed -n 's/^bpfprof: .*; \([0-9][0-9]*\) samples lost$/\1/p' "$WORK/bpfprof.err" | tail -n 1
}

bpfprof_samples() {
	sed -n 's/^bpfprof: \([0-9][0-9]*\) samples from .*/\1/p' "$WORK/bpfprof.err" | tail -n 1
}

# The sampling event bpfprof wrote into the profile's meta, to be sure the
# comparison with perf is like for like.
bpfprof_profile_event() {
	gzip -dc "$WORK/bpfprof.json.gz" 2>/dev/null |
		grep -o '"label": *"Sample event", *"format": *"string", *"value": *"[^"]*"' |
		head -n 1 | sed 's/.*"value": *"\([^"]*\)"/\1/'
}

start_perf() {
	local reply

	rm -f "$WORK/perf.data"
	if [ "$PERF_CONTROL" = 1 ]; then
		# Start disabled and enable through the control FIFO: the "ack" comes
		# back only once perf has set up and is recording.
		start_wrapped perf perf record -a -g -F "$FREQ" -e "$EVENT" -o "$WORK/perf.data" \
			-D -1 --control "fifo:$WORK/perf.ctl,$WORK/perf.ack"
		echo enable >&"$PERF_CTL_FD"
		if ! read -r -t 30 -u "$PERF_ACK_FD" reply || [ "$reply" != ack ]; then
			sed 's/^/  /' "$WORK/perf.err" >&2
			die "perf record did not start recording"
		fi
	else
		start_wrapped perf perf record -a -g -F "$FREQ" -e "$EVENT" -o "$WORK/perf.data"
		sleep 1
		kill -0 "$PROF_PID" 2>/dev/null || {
			sed 's/^/  /' "$WORK/perf.err" >&2
			die "perf record exited before the workload"
		}
	fi
}

# ---- the interleaved rounds -----------------------------------------------

declare -a TP_A TP_B TP_C CP_A CP_B CP_C LOST_B SIZE_B SIZE_C

# run_config CONFIG: runs the workload once under CONFIG; leaves its
# throughputs in LAST_TP (ops/s) and LAST_CP (ops per workload CPU-second).
run_config() {
	local tp

	case $1 in
	A)
		tp=$(run_workload) || exit 1
		;;
	B)
		start_bpfprof
		tp=$(run_workload) || exit 1
		stop_bpfprof
		LAST_LOST=$(bpfprof_lost)
		LAST_SIZE=$(file_size "$WORK/bpfprof.json.gz")
		if [ -z "$EVENT_CHECKED" ]; then
			EVENT_CHECKED=$(bpfprof_profile_event)
			[ "$EVENT_CHECKED" = "$EVENT" ] ||
				die "bpfprof sampled '${EVENT_CHECKED:-?}', not '$EVENT'; the comparison would not be like for like"
		fi
		rm -f "$WORK/bpfprof.json.gz"
		;;
	C)
		start_perf
		tp=$(run_workload) || exit 1
		stop_perf
		LAST_SIZE=$(file_size "$WORK/perf.data")
		rm -f "$WORK/perf.data"
		;;
	esac
	LAST_TP=${tp% *}
	LAST_CP=${tp#* }
}

run_rounds() {
	local r i c order rot

	echo "== throughput: $ROUNDS rounds of A (baseline), B (bpfprof), C (perf record), interleaved =="
	printf '%-7s %-6s %9s %9s %9s %7s %7s %7s   %-17s %7s\n' round order "A Mops/s" "B Mops/s" \
		"C Mops/s" B/A C/A B/C "per CPU-s B/A C/A" "B lost"
	for ((r = 0; r < ROUNDS; r++)); do
		# Rotate the order so that no configuration always runs first or
		# right after a profiler has finished writing.
		rot=$((r % 3))
		order=(A B C)
		order=("${order[@]:rot}" "${order[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c"
			case $c in
			A) TP_A[r]=$LAST_TP CP_A[r]=$LAST_CP ;;
			B) TP_B[r]=$LAST_TP CP_B[r]=$LAST_CP LOST_B[r]=${LAST_LOST:-0} SIZE_B[r]=$LAST_SIZE ;;
			C) TP_C[r]=$LAST_TP CP_C[r]=$LAST_CP SIZE_C[r]=$LAST_SIZE ;;
			esac
			# A moment for the previous run's leftovers (profile writing,
			# page cache) to settle before the next measurement.
			sleep 0.3
		done
		printf '%-7s %-6s %9s %9s %9s %7s %7s %7s   %7s %7s   %7s\n' "$((r + 1))/$ROUNDS" \
			"${order[0]}${order[1]}${order[2]}" \
			"$(mops "${TP_A[r]}")" "$(mops "${TP_B[r]}")" "$(mops "${TP_C[r]}")" \
			"$(calc "${TP_B[r]} / ${TP_A[r]}" %.3f)" "$(calc "${TP_C[r]} / ${TP_A[r]}" %.3f)" \
			"$(calc "${TP_B[r]} / ${TP_C[r]}" %.3f)" \
			"$(calc "${CP_B[r]} / ${CP_A[r]}" %.3f)" "$(calc "${CP_C[r]} / ${CP_A[r]}" %.3f)" \
			"${LOST_B[r]}"
	done
}

# summarize_metric TITLE A B C: medians of one throughput metric per
# configuration (names of arrays), their ratios, and the per-round spread.
summarize_metric() {
	local title=$1 ma mb mc ba ca bc
	local -n xa=$2 xb=$3 xc=$4
	local -a rba rca rbc

	ma=$(median "${xa[@]}")
	mb=$(median "${xb[@]}")
	mc=$(median "${xc[@]}")
	ba=$(calc "$mb / $ma" %.3f)
	ca=$(calc "$mc / $ma" %.3f)
	bc=$(calc "$mb / $mc" %.3f)
	mapfile -t rba < <(ratio_list "$3" "$2")
	mapfile -t rca < <(ratio_list "$4" "$2")
	mapfile -t rbc < <(ratio_list "$3" "$4")

	echo
	echo "== $title, median of $ROUNDS rounds =="
	printf '%-42s %10s %8s %9s\n' configuration "Mops/s" "vs A" overhead
	printf '%-42s %10s %8s %9s\n' "A  baseline (no profiler)" "$(mops "$ma")" 1.000 -
	printf '%-42s %10s %8s %8s%%\n' "B  bpfprof -a -F $FREQ -e $EVENT" "$(mops "$mb")" "$ba" \
		"$(calc "(1 - $mb / $ma) * 100" %.1f)"
	printf '%-42s %10s %8s %8s%%\n' "C  perf record -a -g -F $FREQ -e $EVENT" "$(mops "$mc")" "$ca" \
		"$(calc "(1 - $mc / $ma) * 100" %.1f)"
	echo "ratio of medians:         B/A $ba   C/A $ca   B/C $bc"
	printf 'per-round ratios (min / median / max):  B/A %.3f / %.3f / %.3f   C/A %.3f / %.3f / %.3f   B/C %.3f / %.3f / %.3f\n' \
		"$(min_of "${rba[@]}")" "$(median "${rba[@]}")" "$(max_of "${rba[@]}")" \
		"$(min_of "${rca[@]}")" "$(median "${rca[@]}")" "$(max_of "${rca[@]}")" \
		"$(min_of "${rbc[@]}")" "$(median "${rbc[@]}")" "$(max_of "${rbc[@]}")"
	# The baseline's own spread is the noise floor: an overhead smaller
	# than it is not resolved by this run, however the medians fall.
	printf 'noise: baseline A ranged %s..%s Mops/s (%+.1f%% / %+.1f%% around its median)\n' \
		"$(mops "$(min_of "${xa[@]}")")" "$(mops "$(max_of "${xa[@]}")")" \
		"$(calc "($(min_of "${xa[@]}") / $ma - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${xa[@]}") / $ma - 1) * 100" %.2f)"
}

print_summary() {
	local lost=0 r

	for r in "${LOST_B[@]}"; do
		lost=$((lost + r))
	done
	summarize_metric "throughput over wall time (ops/s)" TP_A TP_B TP_C
	summarize_metric "throughput per CPU-second the workload got (less sensitive to other load)" \
		CP_A CP_B CP_C
	echo
	printf 'output size (median): bpfprof %s KiB (.json.gz, symbolicated), perf %s KiB (perf.data, raw)\n' \
		"$(calc "$(median "${SIZE_B[@]}") / 1024" %.0f)" "$(calc "$(median "${SIZE_C[@]}") / 1024" %.0f)"
	echo "bpfprof samples lost over all rounds: $lost"
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

# ---- bpfprof's own cost ----------------------------------------------------

measure_bpfprof_cost() {
	local ids t_start t_ready t0 t1 t2 cpu_ready cpu0 cpu1 cpu_total
	local s0 s1 tp window all_cpu_ns bpf_ns bpf_cnt smp_ns smp_cnt rec_cpu post_cpu post_wall
	local lost samples size ncpu_s

	echo
	echo "== bpfprof's own cost: one more run, with kernel.bpf_stats_enabled=1 =="
	if ! command -v bpftool >/dev/null 2>&1; then
		echo "skipped: bpftool is not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	enable_bpf_stats

	t_start=$(now_ns)
	start_bpfprof
	t_ready=$(now_ns)
	cpu_ready=$(proc_cpu_s "$PROF_PID")
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	[ ${#ids[@]} -gt 0 ] || die "found no BPF programs among bpfprof's file descriptors"

	# The window encloses both snapshots, so the shares below are not
	# inflated by counting BPF or process time from outside it.
	t0=$(now_ns)
	s0=$(bpf_stats on_sample "${ids[@]}")
	cpu0=$(proc_cpu_s "$PROF_PID")
	tp=$(run_workload) || exit 1
	cpu1=$(proc_cpu_s "$PROF_PID")
	s1=$(bpf_stats on_sample "${ids[@]}")
	t1=$(now_ns)
	stop_bpfprof
	t2=$(now_ns)
	restore_bpf_stats
	cpu_total=$(wrapped_cpu_s bpfprof)
	lost=$(bpfprof_lost)
	samples=$(bpfprof_samples)
	size=$(file_size "$WORK/bpfprof.json.gz")
	rm -f "$WORK/bpfprof.json.gz"

	read -r bpf_ns bpf_cnt smp_ns smp_cnt < <(awk -v a="$s0" -v b="$s1" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.0f %.0f %.0f %.0f\n", y[1] - x[1], y[2] - x[2], y[3] - x[3], y[4] - x[4] }')
	window=$((t1 - t0))
	all_cpu_ns=$(calc "$window * $NCPU" %.0f)
	rec_cpu=$(calc "$cpu1 - $cpu0" %.4f)
	post_cpu=$(calc "$cpu_total - $cpu1" %.3f)
	post_wall=$(calc "($t2 - $t1) / 1e9" %.3f)
	ncpu_s=$(calc "$all_cpu_ns / 1e9" %.2f)

	echo "window: the workload run and the snapshots, $(calc "$window / 1e9" %.3f) s wall x $NCPU CPUs = $ncpu_s CPU-s" \
		"(workload $(mops "${tp% *}") Mops/s; bpf_stats itself adds a little cost)"
	echo "BPF programs of bpfprof: ${#ids[*]} (ids ${ids[*]}), $bpf_cnt runs in the window"
	if [ "$smp_cnt" -gt 0 ]; then
		echo "  on_sample runs:                 $smp_cnt" \
			"($(calc "$smp_cnt / ($window / 1e9) / $NCPU" %.0f)/s per CPU at -F $FREQ)"
		echo "  BPF run time per sample:        $(calc "$smp_ns / $smp_cnt" %.0f) ns"
	else
		echo "  on_sample runs:                 0 (no samples taken in the window)"
	fi
	echo "  BPF run time, all programs:     $(calc "$bpf_ns / 1e6" %.2f) ms" \
		"= $(calc "$bpf_ns / $all_cpu_ns * 100" %.4f)% of all CPU time"
	echo "bpfprof process CPU (utime+stime):"
	echo "  start-up, until recording:      $cpu_ready s ($(calc "($t_ready - $t_start) / 1e9" %.2f) s wall)"
	echo "  while recording (the window):   $rec_cpu s = $(calc "$rec_cpu * 1e9 / $all_cpu_ns * 100" %.2f)% of all CPU time"
	echo "  post-processing after SIGINT:   $post_cpu s in $post_wall s wall" \
		"(= $(calc "$post_cpu * 1e9 / $all_cpu_ns * 100" %.1f)% of the window's CPU time, spent after it)"
	echo "  total:                          $cpu_total s"
	echo "profile: ${samples:-?} samples, ${lost:-?} lost, $(calc "$size / 1024" %.1f) KiB" \
		"($(calc "$size / (${samples:-0} + 0.000001)" %.0f) bytes per sample, .json.gz)"
}

# ---- main --------------------------------------------------------------------

main() {
	parse_args "$@"
	bench_start bench "system-wide profiling and bpf_stats need it"
	command -v perf >/dev/null 2>&1 || die "perf is not installed (scripts/install-deps.sh --bench)"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workload"
	# In a KVM guest, bpfprof -e cycles was seen to stall a vCPU for tens of
	# seconds (soft lockups, RCU stalls): not something to do to a shared
	# machine by accident.
	if [ "$EVENT" = cycles ] && [ "$ALLOW_VM_CYCLES" = 0 ] && in_vm; then
		die "--event cycles in a virtual machine can stall vCPUs for seconds; pass --allow-vm-cycles to run it anyway"
	fi

	EVENT_CHECKED=
	BPFPROF_ARGS=(-a -F "$FREQ" -e "$EVENT" -o "$WORK/bpfprof.json.gz")

	build_workload
	PERF_CONTROL=0
	if perf record -h 2>&1 | grep -q -- '--control'; then
		PERF_CONTROL=1
		mkfifo "$WORK/perf.ctl" "$WORK/perf.ack" || die "cannot create perf's control FIFOs"
		# Opened read-write so neither side blocks waiting for the other.
		exec {PERF_CTL_FD}<>"$WORK/perf.ctl" {PERF_ACK_FD}<>"$WORK/perf.ack"
	fi

	echo "bpfprof overhead benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs;" \
		"workload: ${THREADS:-$NCPU} threads x $WORK_SECONDS s; event $EVENT at $FREQ Hz"
	echo "bpfprof: $BPFPROF; $(perf --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	if pgrep -x bpfprof >/dev/null || pgrep -x perf >/dev/null; then
		note "other bpfprof or perf processes are running; they add noise to every configuration"
	fi
	# One untimed run to bring the CPU and caches to a steady state.
	run_workload >/dev/null

	run_rounds
	print_summary
	measure_bpfprof_cost
}

main "$@"
