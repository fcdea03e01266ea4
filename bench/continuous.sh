#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# continuous.sh: what `bpfprof continuous` costs when it runs all the time,
# and whether its memory stays flat over a long run with heavy process churn.
#
#   throughput  A: a CPU-bound workload alone (bench/cpu_work.c, one thread
#               per CPU); B: the same under `bpfprof continuous -a` at its
#               default settings (49 Hz, scheduling markers, no off-CPU
#               samples, no syscalls), with --interval short enough that
#               snapshots are cut and written during every run. Interleaved
#               (A B, B A, ...), medians and per-round ratios. Then one more B
#               with kernel.bpf_stats_enabled=1: each BPF program's run time
#               and the bpfprof process's CPU, as shares of all CPU time.
#   rss         `bpfprof continuous -a --interval 10s` for --minutes (default
#               10) while a churn generator starts short processes all the
#               time: a fresh copy of a CPU-burning binary (a new inode each
#               time: a new object for the symbolizer) that runs ~40 ms, and
#               bursts of /bin/true. bpfprof's RSS (VmRSS) is sampled every
#               10 s; the summary compares it after warm-up with the end.
#
# A benchmark, not a test: it asserts nothing.
#
# Usage: sudo bench/continuous.sh [--part throughput|rss|both] [--rounds N]
#            [--seconds S] [--minutes M] [--bpfprof PATH] [--quick]

# start_bpfprof takes optional extra options; these calls need none.
# shellcheck disable=SC2119

set -u -o pipefail

PROG=continuous.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

ROUNDS=9
WORK_SECONDS=10
MINUTES=10
PART=both
INTERVAL=5s

CHURN_PID=

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

  --part P          throughput, rss or both (default both)
  --rounds N        throughput rounds of A and B (default 9)
  --seconds S       workload wall time per run (default 10)
  --minutes M       length of the RSS run (default 10)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --quick           smoke test: 3 rounds of 2 s, a 1-minute RSS run
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--part) PART=$2 ;;
	--minutes) MINUTES=$2 ;;
	esac
}

parse_args() {
	parse_bench_args "--part --minutes" "" "$@"
	# --quick: apply_quick made it 3 rounds of 2 s; a 1-minute RSS run.
	[ "$QUICK" = 1 ] && MINUTES=1
	is_uint "$MINUTES" || die "--minutes wants a positive integer, not '$MINUTES'"
	case $PART in
	throughput | rss | both) ;;
	*) die "--part wants throughput, rss or both, not '$PART'" ;;
	esac
}

# lib.sh's cleanup (the EXIT trap and the signal handler) calls this.
bench_cleanup() {
	if [ -n "$CHURN_PID" ]; then
		kill "$CHURN_PID" 2>/dev/null
		wait "$CHURN_PID" 2>/dev/null
		CHURN_PID=
	fi
}

# ---- throughput ------------------------------------------------------------

run_workload() {
	local out

	out=$("$WORK/cpu_work" -s "$WORK_SECONDS") || die "cpu_work failed"
	out=${out##*ops_per_s=}
	echo "${out%% *}"
}

# bpfprof continuous says this once it has written its last snapshot after SIGINT.
BPFPROF_DONE='^bpfprof: stopped after [1-9]'

throughput() {
	local r c tp
	local -a tp_a tp_b ratios

	BPFPROF_ARGS=(continuous -a --interval "$INTERVAL" --out-dir "$WORK/snapshots" --keep 5)
	echo "== throughput: $ROUNDS rounds of A (alone) and B (bpfprof ${BPFPROF_ARGS[*]:0:4}), interleaved =="
	printf '%-7s %-5s %10s %10s %7s\n' round order "A Mops/s" "B Mops/s" B/A
	"$WORK/cpu_work" -s 2 >/dev/null
	for ((r = 0; r < ROUNDS; r++)); do
		local order=(A B)
		((r % 2)) && order=(B A)
		for c in "${order[@]}"; do
			if [ "$c" = B ]; then
				start_bpfprof
				tp=$(run_workload)
				stop_bpfprof
				tp_b[r]=$tp
			else
				tp_a[r]=$(run_workload)
			fi
			sleep 0.3
		done
		printf '%-7s %-5s %10s %10s %7s\n' "$((r + 1))/$ROUNDS" "${order[0]}${order[1]}" \
			"$(calc "${tp_a[r]} / 1e6" %.2f)" "$(calc "${tp_b[r]} / 1e6" %.2f)" \
			"$(calc "${tp_b[r]} / ${tp_a[r]}" %.4f)"
	done
	mapfile -t ratios < <(ratio_list tp_b tp_a)
	echo
	echo "median A $(calc "$(median "${tp_a[@]}") / 1e6" %.3f) Mops/s, median B $(calc "$(median "${tp_b[@]}") / 1e6" %.3f) Mops/s"
	echo "ratio of medians B/A: $(calc "$(median "${tp_b[@]}") / $(median "${tp_a[@]}")" %.4f)"
	printf 'per-round B/A (min / median / max): %.4f / %.4f / %.4f\n' \
		"$(min_of "${ratios[@]}")" "$(median "${ratios[@]}")" "$(max_of "${ratios[@]}")"
	printf 'noise: baseline A ranged %+.2f%% / %+.2f%% around its median\n' \
		"$(calc "($(min_of "${tp_a[@]}") / $(median "${tp_a[@]}") - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${tp_a[@]}") / $(median "${tp_a[@]}") - 1) * 100" %.2f)"

	echo
	echo "== bpfprof continuous's own cost: one more B with kernel.bpf_stats_enabled=1 =="
	bpf_stats_run run_workload start_bpfprof
	stats_window "cpu_work $(calc "$STATS_OUT / 1e6" %.2f) Mops/s; snapshots every $INTERVAL inside it"
	echo "$STATS_TABLE"
	stats_process_cpu " (cutting, symbolizing and writing snapshots included)"
}

# ---- RSS under churn -----------------------------------------------------------

# The churn generator: short processes, each a new binary file (new inode).
churn() {
	local i=0 k

	mkdir -p "$WORK/churn"
	while :; do
		i=$((i + 1))
		cp "$WORK/cpu_work" "$WORK/churn/spin-$i"
		"$WORK/churn/spin-$i" -t 1 -s 0.04 >/dev/null
		rm -f "$WORK/churn/spin-$i"
		for ((k = 0; k < 20; k++)); do
			/bin/true
		done
		echo "$i" >"$WORK/churn.count"
	done
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

rss_run() {
	local end t0 now rss count first_rss="" warm_rss="" samples=0 max_rss=0
	local -a after_warm

	BPFPROF_ARGS=(continuous -a --interval 10s --out-dir "$WORK/snapshots" --keep 5 -v)
	echo
	echo "== RSS over $MINUTES min: bpfprof ${BPFPROF_ARGS[*]:0:4} with process churn =="
	churn &
	CHURN_PID=$!
	start_bpfprof
	t0=$(now_ns)
	end=$((t0 + MINUTES * 60 * 1000000000))
	printf '%8s %10s %12s %12s %14s %12s\n' "time s" "RSS KiB" "churn iters" "processes" "heap in use" "caches"
	while :; do
		sleep 10
		now=$(now_ns)
		rss=$(rss_kib "$PROF_PID")
		count=$(cat "$WORK/churn.count" 2>/dev/null || echo 0)
		[ -n "$rss" ] || die "bpfprof exited during the RSS run: $(tail -n 3 "$WORK/bpfprof.err")"
		# The last snapshot's -v line: heap in use (mallinfo2) and the symbol caches' size.
		heap=$(grep '^bpfprof: snapshot ' "$WORK/bpfprof.err" | tail -n 1 | sed -n 's/.*heap in use \([0-9.]* [KMG]*i*B\).*/\1/p' | tr -d ' ')
		caches=$(grep '^bpfprof: snapshot ' "$WORK/bpfprof.err" | tail -n 1 | sed -n 's/.*symbol caches \([0-9.]* [KMG]*i*B\).*/\1/p' | tr -d ' ')
		printf '%8.0f %10s %12s %12s %14s %12s\n' "$(calc "($now - $t0) / 1e9" %.0f)" "$rss" "$count" "$((count * 22))" "${heap:--}" "${caches:--}"
		samples=$((samples + 1))
		[ -z "$first_rss" ] && first_rss=$rss
		# Warm-up: the first minute (caches fill, the first snapshots).
		if [ $((now - t0)) -ge 60000000000 ]; then
			[ -z "$warm_rss" ] && warm_rss=$rss
			after_warm+=("$rss")
		fi
		[ "$rss" -gt "$max_rss" ] && max_rss=$rss
		[ "$now" -ge "$end" ] && break
	done
	bench_cleanup
	stop_bpfprof
	echo
	echo "RSS: $first_rss KiB after 10 s; ${warm_rss:-?} KiB after warm-up (1 min); $rss KiB at the end; max $max_rss KiB"
	if [ ${#after_warm[@]} -ge 2 ]; then
		echo "after warm-up: min $(min_of "${after_warm[@]}") KiB, median $(median "${after_warm[@]}") KiB," \
			"max $(max_of "${after_warm[@]}") KiB; end / warm-up = $(calc "$rss / $warm_rss" %.3f)"
	fi
	echo "snapshots written: $(grep -c '^bpfprof: snapshot ' "$WORK/bpfprof.err");" \
		"churn: $(cat "$WORK/churn.count") binaries copied and run, ~$(($(cat "$WORK/churn.count") * 22)) processes"
	grep '^bpfprof: snapshot ' "$WORK/bpfprof.err" | tail -n 1 | sed 's/^/last: /'
}

main() {
	parse_args "$@"
	bench_start continuous "system-wide profiling and bpf_stats need it"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
	echo "bpfprof continuous benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	case $PART in
	throughput) throughput ;;
	rss) rss_run ;;
	both)
		throughput
		rss_run
		;;
	esac
}

main "$@"
