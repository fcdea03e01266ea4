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
#   F  the floor: empty BPF programs on sched_switch and sched_waking
#      (build/bpfprof-hook-floor sched), what any tracer there pays first
#   B  bpfprof -a (defaults: scheduler capture, off-CPU stacks, 999 Hz samples)
#   D  bpfprof continuous -a (its defaults: 49 Hz, scheduler markers, no
#      off-CPU samples), the fleet mode
#   C  perf record -a -e sched:sched_switch (one record per switch, no stacks
#      unless --perf-g)
#
# This is a benchmark, not a test: it asserts nothing. Machines are shared and
# noisy, so the configurations run interleaved (A F B D C, F B D C A, ...) and
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
# The profilers' own time limit: far beyond the workload, which ends each
# recording with SIGINT; it only bounds a recording the script failed to stop.
LIMIT_SLACK=30

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

Measures the round trips per second of a two-thread pipe ping-pong
(bench/pingpong.c) alone (A), under empty BPF programs on the same hooks (F,
the floor), under bpfprof -a (B) and bpfprof continuous -a (D) with their
defaults, and under perf record -a -e sched:sched_switch (C), interleaved
over rounds; then bpfprof's own cost (BPF run time per program, process CPU)
in one extra run of B and of D with kernel.bpf_stats_enabled=1.

  --rounds N        rounds of A, F, B, D and C (default 7)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --cpus A,B        pin ping to CPU A and pong to CPU B (A = B: both on one
                    CPU, the worst case for a tracer); default: not pinned
  --perf-g          give perf -g too (stacks at every switch, like bpfprof's
                    off-CPU stacks); default is the plain tracepoint
  --quick           smoke test: 3 rounds of 2 s (explicit --rounds/--seconds win)
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--cpus) PIN_CPUS=$2 ;;
	--perf-g) PERF_G=1 ;;
	esac
}

parse_args() {
	parse_bench_args "--cpus" "--perf-g" "$@"
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

# ---- the two bpfprof modes -------------------------------------------------

# use_mode record|continuous: what start_bpfprof runs and stop_bpfprof waits for.
use_mode() {
	if [ "$1" = continuous ]; then
		# One snapshot interval longer than any run: the mode's steady state.
		BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s)
		BPFPROF_DONE='^bpfprof: stopped after '
	else
		BPFPROF_ARGS=(-a -d $((WORK_SECONDS + LIMIT_SLACK)) -o "$WORK/bpfprof.json.gz")
		BPFPROF_DONE='^bpfprof: wrote '
	fi
}

# ---- the interleaved rounds -----------------------------------------------

CONFIGS=(A F B D C)
declare -A LABEL=(
	[A]="baseline (no profiler)"
	[F]="floor: empty programs on sched_switch+waking"
	[B]="bpfprof -a (defaults)"
	[D]="bpfprof continuous -a (defaults)"
	[C]="perf record -a -e sched:sched_switch"
)
# Per configuration and round ("B,3"): round trips/s of wall time and per
# CPU-second, same-CPU share, the profiler's CPU seconds and window (ns).
declare -A TP CP SAME REC_CPU WIN
declare -a LOST_SMP LOST_SW LOST_WK SW_B WK_B EV_C LOST_C

# run_config CONFIG ROUND: runs the workload once under CONFIG; records its
# throughputs and, under a profiler, the profiler's CPU while it ran and its
# event and lost counts.
run_config() {
	local c=$1 r=$2 tp t0 t1 cpu0 cpu1 counts

	case $c in
	A) ;;
	F) start_floor sched ;;
	B) use_mode record && start_bpfprof ;;
	D) use_mode continuous && start_bpfprof ;;
	C) start_perf ;;
	esac
	if [ "$c" != A ]; then
		t0=$(now_ns)
		cpu0=$(proc_cpu_s "$PROF_PID")
	fi
	tp=$(run_workload) || exit 1
	read -r "TP[$c,$r]" "CP[$c,$r]" "SAME[$c,$r]" <<<"$tp"
	[ "$c" = A ] && return 0
	cpu1=$(proc_cpu_s "$PROF_PID")
	t1=$(now_ns)
	REC_CPU[$c,$r]=$(calc "$cpu1 - $cpu0" %.4f)
	WIN[$c,$r]=$((t1 - t0))
	case $c in
	F) stop_wrapped ;;
	B)
		stop_bpfprof
		read -r 'LOST_SMP[r]' 'SW_B[r]' 'WK_B[r]' 'LOST_SW[r]' 'LOST_WK[r]' < <(bpfprof_counts)
		rm -f "$WORK/bpfprof.json.gz"
		;;
	D)
		stop_bpfprof
		rm -rf "$WORK/snapshots"
		;;
	C)
		stop_perf
		counts=$(perf_counts)
		EV_C[r]=${counts% *} LOST_C[r]=${counts#* }
		rm -f "$WORK/perf.data"
		;;
	esac
}

# cpu_share C R: the profiler's CPU in round R as a share of all CPU time, %.
cpu_share() {
	calc "${REC_CPU[$1,$2]} * 1e9 / (${WIN[$1,$2]} * $NCPU) * 100" %.1f
}

run_rounds() {
	local r c rot placement="not pinned" n=${#CONFIGS[@]}
	local -a order

	[ -z "$PIN_CPUS" ] || placement="pinned to CPUs $PIN_CPUS"
	echo "== round trips per second: $ROUNDS rounds of A (baseline), F (floor), B (bpfprof -a), D (continuous -a), C (perf), interleaved; threads $placement =="
	printf '%-7s %-6s %8s %8s %8s %8s %8s %6s %6s %6s %6s  %-14s %8s %6s %5s %5s %8s %6s\n' round order \
		"A krt/s" "F krt/s" "B krt/s" "D krt/s" "C krt/s" F/A B/A D/A C/A "same CPU %" \
		"B sw/s" "B lost" "B cpu%" "D cpu%" "C ev/s" "C lost"
	for ((r = 0; r < ROUNDS; r++)); do
		# Rotate the order so that no configuration always runs first or
		# right after a profiler has finished writing.
		rot=$((r % n))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			# Let the previous run's leftovers (profile writing) settle.
			sleep 0.3
		done
		printf '%-7s %-6s %8s %8s %8s %8s %8s %6s %6s %6s %6s  %-14s %8s %6s %5s %5s %8s %6s\n' \
			"$((r + 1))/$ROUNDS" "$(printf %s "${order[@]}")" \
			"$(krt "${TP[A,$r]}")" "$(krt "${TP[F,$r]}")" "$(krt "${TP[B,$r]}")" \
			"$(krt "${TP[D,$r]}")" "$(krt "${TP[C,$r]}")" \
			"$(calc "${TP[F,$r]} / ${TP[A,$r]}" %.3f)" "$(calc "${TP[B,$r]} / ${TP[A,$r]}" %.3f)" \
			"$(calc "${TP[D,$r]} / ${TP[A,$r]}" %.3f)" "$(calc "${TP[C,$r]} / ${TP[A,$r]}" %.3f)" \
			"$(for c in A F B D C; do printf '%.0f/' "${SAME[$c,$r]}"; done | sed 's|/$||')" \
			"$(calc "${SW_B[r]} / (${WIN[B,$r]} / 1e9)" %.0f)" \
			"$((LOST_SMP[r] + LOST_SW[r] + LOST_WK[r]))" \
			"$(cpu_share B "$r")" "$(cpu_share D "$r")" \
			"$(calc "${EV_C[r]} / (${WIN[C,$r]} / 1e9)" %.0f)" "${LOST_C[r]}"
	done
}

sum_of() {
	local s=0 v

	for v in "$@"; do
		s=$((s + v))
	done
	echo "$s"
}

# values ARRAY C: ARRAY's values of configuration C, one per round.
values() {
	local -n arr=$1
	local r

	for ((r = 0; r < ROUNDS; r++)); do
		echo "${arr[$2,$r]}"
	done
}

# ratios ARRAY X Y: per round, X's value over Y's.
ratios() {
	local -n arr=$1
	local r

	for ((r = 0; r < ROUNDS; r++)); do
		calc "${arr[$2,$r]} / ${arr[$3,$r]}" %.6f
		echo
	done
}

# goal NAME VALUE MIN: the issue's goal line.
goal() {
	local verdict=below

	[ "$(calc "($2 >= $3)" %d)" = 1 ] && verdict=met
	printf '  %-40s %6.3f   goal >= %.2f: %s\n' "$1" "$2" "$3" "$verdict"
}

# summarize_metric TITLE ARRAY: medians per configuration, their ratios, the
# per-round ratios' spread, the baseline's noise and the goals.
summarize_metric() {
	local title=$1 c m ma mf mb md mc
	local -A med
	local -a v rr

	for c in "${CONFIGS[@]}"; do
		mapfile -t v < <(values "$2" "$c")
		med[$c]=$(median "${v[@]}")
	done
	ma=${med[A]} mf=${med[F]} mb=${med[B]} md=${med[D]} mc=${med[C]}
	echo
	echo "== $title, median of $ROUNDS rounds =="
	printf '%-52s %10s %8s %9s   %-26s\n' configuration "krt/s" "vs A" overhead "per-round vs A min/med/max"
	for c in "${CONFIGS[@]}"; do
		m=${med[$c]}
		mapfile -t rr < <(ratios "$2" "$c" A)
		printf '%-52s %10s %8s %8s%%   %.3f / %.3f / %.3f\n' "$c  ${LABEL[$c]}" "$(krt "$m")" \
			"$(calc "$m / $ma" %.3f)" "$(calc "(1 - $m / $ma) * 100" %.1f)" \
			"$(min_of "${rr[@]}")" "$(median "${rr[@]}")" "$(max_of "${rr[@]}")"
	done
	mapfile -t v < <(values "$2" A)
	printf 'noise: baseline A ranged %s..%s krt/s (%+.1f%% / %+.1f%% around its median)\n' \
		"$(krt "$(min_of "${v[@]}")")" "$(krt "$(max_of "${v[@]}")")" \
		"$(calc "($(min_of "${v[@]}") / $ma - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${v[@]}") / $ma - 1) * 100" %.2f)"
	echo "against the floor and perf (ratios of medians; per-round medians in brackets):"
	mapfile -t rr < <(ratios "$2" B F)
	goal "B/F  bpfprof -a vs the floor [$(median "${rr[@]}" | xargs printf %.3f)]" "$(calc "$mb / $mf" %.6f)" 0.92
	mapfile -t rr < <(ratios "$2" D F)
	goal "D/F  continuous -a vs the floor [$(median "${rr[@]}" | xargs printf %.3f)]" "$(calc "$md / $mf" %.6f)" 0.97
	mapfile -t rr < <(ratios "$2" B C)
	goal "B/C  bpfprof -a vs perf [$(median "${rr[@]}" | xargs printf %.3f)]" "$(calc "$mb / $mc" %.6f)" 1.10
	mapfile -t rr < <(ratios "$2" D C)
	printf '  %-40s %6.3f\n' "D/C  continuous -a vs perf [$(median "${rr[@]}" | xargs printf %.3f)]" \
		"$(calc "$md / $mc" %.3f)"
}

print_summary() {
	local c
	local -a v

	summarize_metric "round trips per second of wall time" TP
	summarize_metric "round trips per CPU-second the workload used (its own threads' time)" CP
	echo
	echo "== events and losses, all $ROUNDS rounds =="
	echo "bpfprof -a: $(sum_of "${SW_B[@]}") context switches and $(sum_of "${WK_B[@]}") wakeups recorded;" \
		"lost: $(sum_of "${LOST_SW[@]}") switches, $(sum_of "${LOST_WK[@]}") wakeups, $(sum_of "${LOST_SMP[@]}") samples"
	echo "bpfprof continuous -a: prints no event counts (its snapshots hold them)"
	echo "perf:    $(sum_of "${EV_C[@]}") sched_switch records; lost: $(sum_of "${LOST_C[@]}") events"
	printf 'profiler process CPU while recording, share of all CPU time (median):'
	for c in F B D C; do
		mapfile -t v < <(for ((r = 0; r < ROUNDS; r++)); do cpu_share "$c" "$r"; echo; done)
		printf ' %s %s%%' "$c" "$(median "${v[@]}")"
	done
	echo
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

# ---- bpfprof's own cost ----------------------------------------------------

# measure_bpfprof_cost record|continuous
measure_bpfprof_cost() {
	local smp sw wk swl wkl

	echo
	echo "== bpfprof's own cost ($1): one more run, with kernel.bpf_stats_enabled=1 =="
	if ! command -v bpftool >/dev/null 2>&1; then
		echo "skipped: bpftool is not installed (scripts/install-deps.sh installs it)"
		return 0
	fi
	use_mode "$1"
	bpf_stats_run run_workload start_bpfprof
	rm -rf "$WORK/bpfprof.json.gz" "$WORK/snapshots"
	stats_window "workload $(krt "${STATS_OUT%% *}") krt/s, same CPU ${STATS_OUT##* }% of round trips"
	echo "$STATS_TABLE"
	stats_process_cpu ""
	[ "$1" = continuous ] && return 0
	read -r smp sw wk swl wkl < <(bpfprof_counts)
	echo "recorded: $sw switches, $wk wakeups; lost: $swl switches, $wkl wakeups, $smp samples"
}

# ---- main --------------------------------------------------------------------

main() {
	parse_args "$@"
	bench_start pingpong "system-wide tracing and bpf_stats need it"
	command -v perf >/dev/null 2>&1 || die "perf is not installed (scripts/install-deps.sh --bench)"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workload"

	[ "$PERF_G" = 1 ] && LABEL[C]="perf record -a -g -e sched:sched_switch"
	floor_setup

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
	measure_bpfprof_cost record
	measure_bpfprof_cost continuous
}

main "$@"
