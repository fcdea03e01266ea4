#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# pingpong.sh: what tracing the scheduler costs a context-switch-heavy
# workload. Two threads pass a token over two pipes (bench/pingpong.c), so
# every round trip is two wakeups and at least four context switches; the
# throughput in round trips per second is bound by the switch path that
# bpfprof's sched_switch and sched_waking programs sit on.
#
#   A  baseline: the workload alone
#   B  bpfprof -a (defaults: scheduler capture, off-CPU stacks, 999 Hz samples),
#      or with --continuous `bpfprof continuous -a` (its defaults: 49 Hz,
#      scheduler markers, no off-CPU samples), the fleet mode
#   C  perf record -a -e sched:sched_switch (one record per switch, no stacks
#      unless --perf-g)
#
# This is a benchmark, not a test: it asserts nothing. Machines are shared and
# noisy, so the configurations run interleaved (A B C, B C A, C A B, ...) and
# the summary compares medians and per-round ratios measured side by side.
# By default the ping-pong threads are not pinned: the kernel places them, as
# it would real programs, and the interleaving averages over its choices.
# --cpus pins them: the same CPU twice is the tracer's worst case (a round
# trip is two direct switches, ~1.4 us) and far less noisy than cross-CPU
# wakeups, whose cost on a VM depends on the host.
#
# Usage: sudo bench/pingpong.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#            [--cpus PING,PONG] [--perf-g] [--quick]

# The result arrays are read through namerefs (local -n), which shellcheck
# does not follow.
# shellcheck disable=SC2034

# start_bpfprof takes optional extra options; these scripts need none.
# shellcheck disable=SC2119

set -u -o pipefail

PROG=pingpong.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

PERF_G=0
PIN_CPUS=
CONTINUOUS=0
# The profilers' own time limit: far beyond the workload, which ends each
# recording with SIGINT; it only bounds a recording the script failed to stop.
LIMIT_SLACK=30

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

Measures the round trips per second of a two-thread pipe ping-pong
(bench/pingpong.c) alone (A), under bpfprof -a with its defaults (B) and under
perf record -a -e sched:sched_switch (C), interleaved over rounds; then
bpfprof's own cost (BPF run time per program, process CPU) in one extra run
with kernel.bpf_stats_enabled=1.

  --rounds N        rounds of A, B and C (default 7)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --cpus A,B        pin ping to CPU A and pong to CPU B (A = B: both on one
                    CPU, the worst case for a tracer); default: not pinned
  --perf-g          give perf -g too (stacks at every switch, like bpfprof's
                    off-CPU stacks); default is the plain tracepoint
  --continuous      B is bpfprof continuous -a with its defaults, not bpfprof -a
  --quick           smoke test: 3 rounds of 2 s (explicit --rounds/--seconds win)
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--cpus) PIN_CPUS=$2 ;;
	--perf-g) PERF_G=1 ;;
	--continuous) CONTINUOUS=1 ;;
	esac
}

parse_args() {
	parse_bench_args "--cpus" "--perf-g --continuous" "$@"
	# Whole seconds: the profilers' limits (-d, sleep) are computed from it.
	is_uint "$WORK_SECONDS" || die "--seconds wants a positive integer, not '$WORK_SECONDS'"
	if [ -n "$PIN_CPUS" ]; then
		[[ $PIN_CPUS =~ ^[0-9]+,[0-9]+$ ]] || die "--cpus wants two CPU numbers like 1,1, not '$PIN_CPUS'"
		local c
		for c in ${PIN_CPUS/,/ }; do
			[ -d "/sys/devices/system/cpu/cpu$c" ] || die "--cpus: there is no CPU $c on this machine"
		done
	fi
}

# Thousands of round trips per second, for reading.
krt() {
	calc "$1 / 1e3" "%.1f"
}

# ---- the workload ----------------------------------------------------------

build_workload() {
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/pingpong" "$HERE/pingpong.c" ||
		die "cannot compile $HERE/pingpong.c"
}

# run_workload: runs pingpong once; prints "RT_PER_S RT_PER_CPU_S SAME_CPU_PCT".
run_workload() {
	local out wall cpu same pin=()

	[ -z "$PIN_CPUS" ] || pin=(-c "$PIN_CPUS")
	out=$("$WORK/pingpong" -s "$WORK_SECONDS" "${pin[@]}") || die "pingpong failed"
	wall=${out##*rt_per_s=}
	wall=${wall%% *}
	cpu=${out##*rt_per_cpu_s=}
	cpu=${cpu%% *}
	same=${out##*same_cpu_pct=}
	[[ $wall =~ ^[0-9]+$ && $cpu =~ ^[0-9]+$ && $same =~ ^[0-9.]+$ ]] || die "unexpected pingpong output: $out"
	echo "$wall $cpu $same"
}

# ---- profilers ---------------------------------------------------------------

# bpfprof_counts: from its summary on stderr, "SAMPLES_LOST SWITCHES WAKEUPS
# SWITCHES_LOST WAKEUPS_LOST" (0 where a line is missing).
bpfprof_counts() {
	awk '
		/^bpfprof: .* samples lost$/ { sub(/ samples lost$/, ""); n = split($0, w, " "); sl = w[n] }
		/^bpfprof: [0-9]+ context switches, / {
			sw = $2; wk = $5
			if (match($0, /; [0-9]+ switches and [0-9]+ wakeups lost/)) {
				split(substr($0, RSTART + 2), l, " "); swl = l[1]; wkl = l[4]
			}
		}
		END { printf "%d %d %d %d %d\n", sl, sw, wk, swl, wkl }' "$WORK/bpfprof.err"
}

start_perf() {
	local reply g=()

	[ "$PERF_G" = 1 ] && g=(-g)
	rm -f "$WORK/perf.data"
	if [ "$PERF_CONTROL" = 1 ]; then
		# Start disabled and enable through the control FIFO: the "ack" comes
		# back only once perf has set up and is recording.
		start_wrapped perf perf record -a "${g[@]}" -e sched:sched_switch -o "$WORK/perf.data" \
			-D -1 --control "fifo:$WORK/perf.ctl,$WORK/perf.ack" -- sleep $((WORK_SECONDS + LIMIT_SLACK))
		echo enable >&"$PERF_CTL_FD"
		if ! read -r -t 30 -u "$PERF_ACK_FD" reply || [ "$reply" != ack ]; then
			sed 's/^/  /' "$WORK/perf.err" >&2
			die "perf record did not start recording"
		fi
	else
		start_wrapped perf perf record -a "${g[@]}" -e sched:sched_switch -o "$WORK/perf.data" \
			-- sleep $((WORK_SECONDS + LIMIT_SLACK))
		sleep 1
		kill -0 "$PROF_PID" 2>/dev/null || {
			sed 's/^/  /' "$WORK/perf.err" >&2
			die "perf record exited before the workload"
		}
	fi
}

# perf_counts: "SAMPLES LOST" of the last perf.data. LOST is the sum of the
# lost counts in its PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES records
# (the dump is only read when `perf report --stats` says there are some).
perf_counts() {
	local samples lost=0

	samples=$(sed -n 's/.*Captured and wrote .* (\([0-9]*\) samples).*/\1/p' "$WORK/perf.err" | tail -n 1)
	if perf report -i "$WORK/perf.data" --stats 2>/dev/null | grep -q 'LOST'; then
		lost=$(perf report -D -i "$WORK/perf.data" 2>/dev/null | awk '
			/PERF_RECORD_LOST/ { for (i = 1; i < NF; i++) if ($i == "lost" || $i == "lost:") { s += $(i + 1); break } }
			END { printf "%d", s }')
	fi
	echo "${samples:-0} ${lost:-0}"
}

# ---- the interleaved rounds -----------------------------------------------

declare -a TP_A TP_B TP_C CP_A CP_B CP_C SAME_A SAME_B SAME_C
declare -a REC_CPU_B REC_CPU_C WIN_B WIN_C
declare -a LOST_SMP LOST_SW LOST_WK SW_B WK_B EV_C LOST_C

# run_config CONFIG ROUND: runs the workload once under CONFIG; records its
# throughputs and, under a profiler, the profiler's CPU while it ran and its
# event and lost counts.
run_config() {
	local c=$1 r=$2 tp t0 t1 cpu0 cpu1 counts

	case $c in
	A)
		tp=$(run_workload) || exit 1
		read -r 'TP_A[r]' 'CP_A[r]' 'SAME_A[r]' <<<"$tp"
		;;
	B | C)
		if [ "$c" = B ]; then start_bpfprof; else start_perf; fi
		t0=$(now_ns)
		cpu0=$(proc_cpu_s "$PROF_PID")
		tp=$(run_workload) || exit 1
		cpu1=$(proc_cpu_s "$PROF_PID")
		t1=$(now_ns)
		if [ "$c" = B ]; then
			stop_bpfprof
			read -r 'TP_B[r]' 'CP_B[r]' 'SAME_B[r]' <<<"$tp"
			REC_CPU_B[r]=$(calc "$cpu1 - $cpu0" %.4f) WIN_B[r]=$((t1 - t0))
			read -r 'LOST_SMP[r]' 'SW_B[r]' 'WK_B[r]' 'LOST_SW[r]' 'LOST_WK[r]' < <(bpfprof_counts)
			rm -rf "$WORK/bpfprof.json.gz" "$WORK/snapshots"
		else
			stop_perf
			read -r 'TP_C[r]' 'CP_C[r]' 'SAME_C[r]' <<<"$tp"
			REC_CPU_C[r]=$(calc "$cpu1 - $cpu0" %.4f) WIN_C[r]=$((t1 - t0))
			counts=$(perf_counts)
			EV_C[r]=${counts% *} LOST_C[r]=${counts#* }
			rm -f "$WORK/perf.data"
		fi
		;;
	esac
}

run_rounds() {
	local r c order rot placement="not pinned"

	[ -z "$PIN_CPUS" ] || placement="pinned to CPUs $PIN_CPUS"
	echo "== round trips per second: $ROUNDS rounds of A (baseline), B (bpfprof), C (perf), interleaved; threads $placement =="
	printf '%-7s %-6s %9s %9s %9s %7s %7s   %-17s %9s %7s %7s %9s %7s\n' round order "A krt/s" "B krt/s" \
		"C krt/s" B/A C/A "same CPU % A/B/C" "B sw/s" "B lost" "B cpu%" "C ev/s" "C lost"
	for ((r = 0; r < ROUNDS; r++)); do
		# Rotate the order so that no configuration always runs first or
		# right after a profiler has finished writing.
		rot=$((r % 3))
		order=(A B C)
		order=("${order[@]:rot}" "${order[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			# Let the previous run's leftovers (profile writing) settle.
			sleep 0.3
		done
		printf '%-7s %-6s %9s %9s %9s %7s %7s   %-17s %9s %7s %7s %9s %7s\n' "$((r + 1))/$ROUNDS" \
			"${order[0]}${order[1]}${order[2]}" \
			"$(krt "${TP_A[r]}")" "$(krt "${TP_B[r]}")" "$(krt "${TP_C[r]}")" \
			"$(calc "${TP_B[r]} / ${TP_A[r]}" %.3f)" "$(calc "${TP_C[r]} / ${TP_A[r]}" %.3f)" \
			"$(calc "${SAME_A[r]}" %.0f)/$(calc "${SAME_B[r]}" %.0f)/$(calc "${SAME_C[r]}" %.0f)" \
			"$(calc "${SW_B[r]} / (${WIN_B[r]} / 1e9)" %.0f)" \
			"$((LOST_SMP[r] + LOST_SW[r] + LOST_WK[r]))" \
			"$(calc "${REC_CPU_B[r]} * 1e9 / (${WIN_B[r]} * $NCPU) * 100" %.1f)" \
			"$(calc "${EV_C[r]} / (${WIN_C[r]} / 1e9)" %.0f)" "${LOST_C[r]}"
	done
}

sum_of() {
	local s=0 v

	for v in "$@"; do
		s=$((s + v))
	done
	echo "$s"
}

# summarize_metric TITLE A B C: medians per configuration (array names),
# their ratios, the per-round ratios' spread and the baseline's noise.
summarize_metric() {
	local title=$1 ma mb mc
	local -n xa=$2 xb=$3 xc=$4
	local -a rba rca

	ma=$(median "${xa[@]}")
	mb=$(median "${xb[@]}")
	mc=$(median "${xc[@]}")
	mapfile -t rba < <(ratio_list "$3" "$2")
	mapfile -t rca < <(ratio_list "$4" "$2")
	echo
	echo "== $title, median of $ROUNDS rounds =="
	printf '%-52s %10s %8s %9s\n' configuration "krt/s" "vs A" overhead
	printf '%-52s %10s %8s %9s\n' "A  baseline (no profiler)" "$(krt "$ma")" 1.000 -
	printf '%-52s %10s %8s %8s%%\n' "B  $B_LABEL" "$(krt "$mb")" "$(calc "$mb / $ma" %.3f)" \
		"$(calc "(1 - $mb / $ma) * 100" %.1f)"
	printf '%-52s %10s %8s %8s%%\n' "C  perf record -a $PERF_FLAGS-e sched:sched_switch" "$(krt "$mc")" \
		"$(calc "$mc / $ma" %.3f)" "$(calc "(1 - $mc / $ma) * 100" %.1f)"
	echo "ratio of medians:   B/A $(calc "$mb / $ma" %.3f)   C/A $(calc "$mc / $ma" %.3f)   B/C $(calc "$mb / $mc" %.3f)"
	printf 'per-round ratios (min / median / max):  B/A %.3f / %.3f / %.3f   C/A %.3f / %.3f / %.3f\n' \
		"$(min_of "${rba[@]}")" "$(median "${rba[@]}")" "$(max_of "${rba[@]}")" \
		"$(min_of "${rca[@]}")" "$(median "${rca[@]}")" "$(max_of "${rca[@]}")"
	printf 'noise: baseline A ranged %s..%s krt/s (%+.1f%% / %+.1f%% around its median)\n' \
		"$(krt "$(min_of "${xa[@]}")")" "$(krt "$(max_of "${xa[@]}")")" \
		"$(calc "($(min_of "${xa[@]}") / $ma - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${xa[@]}") / $ma - 1) * 100" %.2f)"
}

# share_list CPU WIN: per round, CPU seconds over the window's CPU time, in %.
share_list() {
	local -n cs=$1 ws=$2
	local r

	for ((r = 0; r < ROUNDS; r++)); do
		calc "${cs[r]} * 1e9 / (${ws[r]} * $NCPU) * 100" "%.4f"
		echo
	done
}

print_summary() {
	local -a sb sc

	summarize_metric "round trips per second of wall time" TP_A TP_B TP_C
	summarize_metric "round trips per CPU-second the workload used (its own threads' time)" CP_A CP_B CP_C
	mapfile -t sb < <(share_list REC_CPU_B WIN_B)
	mapfile -t sc < <(share_list REC_CPU_C WIN_C)
	echo
	echo "== events and losses, all $ROUNDS rounds =="
	if [ "$CONTINUOUS" = 1 ]; then
		echo "bpfprof: continuous mode prints no event counts (its snapshots hold them)"
	else
		echo "bpfprof: $(sum_of "${SW_B[@]}") context switches and $(sum_of "${WK_B[@]}") wakeups recorded;" \
			"lost: $(sum_of "${LOST_SW[@]}") switches, $(sum_of "${LOST_WK[@]}") wakeups, $(sum_of "${LOST_SMP[@]}") samples"
	fi
	echo "perf:    $(sum_of "${EV_C[@]}") sched_switch records; lost: $(sum_of "${LOST_C[@]}") events"
	echo "profiler process CPU while recording, share of all CPU time (median):" \
		"bpfprof $(median "${sb[@]}")%, perf $(median "${sc[@]}")%"
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

# ---- bpfprof's own cost ----------------------------------------------------

measure_bpfprof_cost() {
	local smp sw wk swl wkl

	echo
	echo "== bpfprof's own cost: one more run, with kernel.bpf_stats_enabled=1 =="
	if ! command -v bpftool >/dev/null 2>&1; then
		echo "skipped: bpftool is not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	bpf_stats_run run_workload start_bpfprof
	rm -rf "$WORK/bpfprof.json.gz" "$WORK/snapshots"
	stats_window "workload $(krt "${STATS_OUT%% *}") krt/s, same CPU ${STATS_OUT##* }% of round trips"
	echo "$STATS_TABLE"
	stats_process_cpu ""
	[ "$CONTINUOUS" = 1 ] && return 0
	read -r smp sw wk swl wkl < <(bpfprof_counts)
	echo "recorded: $sw switches, $wk wakeups; lost: $swl switches, $wkl wakeups, $smp samples"
}

# ---- main --------------------------------------------------------------------

main() {
	parse_args "$@"
	bench_start pingpong "system-wide tracing and bpf_stats need it"
	command -v perf >/dev/null 2>&1 || die "perf is not installed (scripts/install-deps.sh --bench)"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workload"

	PERF_FLAGS=
	[ "$PERF_G" = 1 ] && PERF_FLAGS='-g '
	if [ "$CONTINUOUS" = 1 ]; then
		# One snapshot interval longer than any run: the mode's steady state.
		BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s)
		BPFPROF_DONE='^bpfprof: stopped after '
		B_LABEL="bpfprof continuous -a (defaults)"
	else
		BPFPROF_ARGS=(-a -d $((WORK_SECONDS + LIMIT_SLACK)) -o "$WORK/bpfprof.json.gz")
		B_LABEL="bpfprof -a (defaults)"
	fi

	build_workload
	PERF_CONTROL=0
	if perf record -h 2>&1 | grep -q -- '--control'; then
		PERF_CONTROL=1
		mkfifo "$WORK/perf.ctl" "$WORK/perf.ack" || die "cannot create perf's control FIFOs"
		# Opened read-write so neither side blocks waiting for the other.
		exec {PERF_CTL_FD}<>"$WORK/perf.ctl" {PERF_ACK_FD}<>"$WORK/perf.ack"
	fi

	echo "bpfprof ping-pong benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; workload: 2 threads, $WORK_SECONDS s per run"
	echo "bpfprof: $BPFPROF; $(perf --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	if pgrep -x bpfprof >/dev/null || pgrep -x perf >/dev/null; then
		note "other bpfprof or perf processes are running; they add noise to every configuration"
	fi
	# One untimed run to bring the CPUs to a steady state.
	run_workload >/dev/null

	run_rounds
	print_summary
	measure_bpfprof_cost
}

main "$@"
