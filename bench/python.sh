#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# python.sh: what Python frames cost (issue 26). Debian's /usr/bin/python3
# runs a CPU-bound pure-Python loop (bench/py_work.py) on every CPU, alone
# and under bpfprof, interleaved and rotated each round:
#
#   A  the workload alone
#   B  bpfprof -a (Python frames: the interpreter frames walked in BPF)
#   C  bpfprof -a --unwind fp (no Python frames, no CFI: the floor)
#
# then prints, from the same run: throughput ratios (medians), and BPF run
# time per sample (kernel.bpf_stats_enabled) for the Python workload with
# and without Python frames, and for a native -O2 workload (bench/cpu_work.c)
# next to it. A benchmark, not a test: it asserts nothing.
#
# Usage: sudo bench/python.sh [--rounds N] [--seconds S] [--bpfprof PATH] [--freq HZ] [--quick]

set -u -o pipefail

PROG=python.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

FREQ=999
PY=/usr/bin/python3
CONFIGS=(A B C)
declare -A LABEL=(
	[A]="A  python3 alone"
	[B]="B  bpfprof -a (Python frames)"
	[C]="C  bpfprof -a --unwind fp"
)

usage() {
	cat <<EOF2
usage: $PROG [OPTIONS]       (as root)

Throughput of CPU-bound pure Python (bench/py_work.py on every CPU, Debian's
python3) alone and under bpfprof with and without Python frames, interleaved;
then bpfprof's BPF cost per sample for Python and for native code.

  --rounds N        rounds of all configurations (default 7)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --freq HZ         sampling frequency (default 999)
  --quick           smoke test: 3 rounds of 2 s
  -h, --help        this help
EOF2
}

set_option() {
	case $1 in
	--freq) FREQ=$2 ;;
	esac
}

# Throughput (level2 calls per second, summed over one python3 per CPU).
run_workload() {
	local i total=0 out

	for ((i = 0; i < NCPU; i++)); do
		"$PY" "$HERE/py_work.py" "$WORK_SECONDS" >"$WORK/py.$i" &
	done
	wait
	for ((i = 0; i < NCPU; i++)); do
		out=$(sed -n 's/^ops_per_s=//p' "$WORK/py.$i")
		[ -n "$out" ] || die "py_work.py printed nothing"
		total=$(calc "$total + $out" %.1f)
	done
	echo "$total"
}

run_native() {
	"$WORK/cpu_work" -s "$WORK_SECONDS" >/dev/null || die "cpu_work failed"
}

declare -A TP
run_config() {
	local c=$1 r=$2

	case $c in
	A) TP[$c,$r]=$(run_workload) ;;
	B | C)
		if [ "$c" = B ]; then start_bpfprof; else start_bpfprof --unwind fp; fi
		TP[$c,$r]=$(run_workload)
		stop_bpfprof
		rm -f "$WORK/bpfprof.json.gz"
		;;
	esac
}

median_of() {
	local c=$1 r
	local -a xs=()

	for ((r = 0; r < ROUNDS; r++)); do xs+=("${TP[$c,$r]}"); done
	median "${xs[@]}"
}

# BPF run time per on_sample run for one unwinder and workload.
measure_cost() {
	local how=$1 workload=$2 what=$3 ids s0 s1 t0 t1

	enable_bpf_stats
	start_bpfprof -v --unwind "$how"
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	t0=$(now_ns)
	s0=$(bpf_stats on_sample "${ids[@]}")
	# In a subshell: run_workload's `wait` must not wait for bpfprof too.
	("$workload") >/dev/null
	s1=$(bpf_stats on_sample "${ids[@]}")
	t1=$(now_ns)
	stop_bpfprof
	restore_bpf_stats
	rm -f "$WORK/bpfprof.json.gz"
	awk -v a="$s0" -v b="$s1" -v what="$what" -v all="$(((t1 - t0) * NCPU))" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		n = y[4] - x[4]; ns = y[3] - x[3]; tot = y[1] - x[1]
		printf "%-34s on_sample: %d runs, %.0f ns per sample; all programs %.3f%% of all CPU time\n",
			what, n, n ? ns / n : 0, tot / all * 100 }'
	sed -n 's/^bpfprof: user stacks: /    user stacks: /p' "$WORK/bpfprof.err" | tail -n 1
}

main() {
	local r c rot order m ma

	parse_bench_args "--freq" "" "$@"
	is_uint "$FREQ" || die "--freq wants a positive integer, not '$FREQ'"
	bench_start python "system-wide profiling and bpf_stats need it"
	[ -x "$PY" ] || die "$PY is missing (scripts/install-deps.sh --test installs python3)"
	cc -O2 -fomit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
	BPFPROF_ARGS=(-a -F "$FREQ" -e cpu-clock -o "$WORK/bpfprof.json.gz")
	echo "bpfprof Python benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; workload: $NCPU x $("$PY" --version)" \
		"x $WORK_SECONDS s; cpu-clock at $FREQ Hz"
	run_workload >/dev/null

	echo "== throughput: $ROUNDS rounds of ${CONFIGS[*]}, interleaved and rotated =="
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % ${#CONFIGS[@]}))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			sleep 0.3
		done
		printf '%-7s %-5s' "$((r + 1))/$ROUNDS" "$(printf '%s' "${order[@]}")"
		for c in "${CONFIGS[@]}"; do printf ' %s=%s' "$c" "${TP[$c,$r]}"; done
		echo
	done
	echo
	echo "== throughput (level2 calls/s over all CPUs), median of $ROUNDS rounds =="
	ma=$(median_of A)
	for c in "${CONFIGS[@]}"; do
		m=$(median_of "$c")
		printf '%-40s %12s %8s\n' "${LABEL[$c]}" "$m" "$(calc "$m / $ma" %.3f)"
	done
	echo
	echo "== bpfprof's cost per sample (kernel.bpf_stats_enabled=1), one run each =="
	measure_cost cfi run_workload "Python, Python frames (cfi)"
	measure_cost fp run_workload "Python, no Python frames (fp)"
	measure_cost cfi run_native "native -O2 (cpu_work, cfi)"
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

main "$@"
