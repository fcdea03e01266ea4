#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# stack_copy.sh: what a stack copy costs in the sample program (issue 38).
# bpfprof records a CPU-bound workload built without frame pointers
# (bench/cpu_work.c, -O2 -fomit-frame-pointer) three ways, interleaved:
#
#   none    --stack-copy 0: no copies (the program as before them)
#   normal  the default: copies only where a table is still being built
#           (here none: the workload's tables are built before it starts)
#   all     BPFPROF_TEST_STACK_COPY_ALL=1: every sample stops at its first
#           frame and copies --stack-copy bytes (default 16K), no budget
#
# and prints on_sample's run time per run (kernel.bpf_stats_enabled) and
# the copies bpfprof counted. A benchmark, not a test: it asserts nothing.
#
# Usage: sudo bench/stack_copy.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#            [--stack-copy SIZE]

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

ROUNDS=3 SECONDS_=6 BPFPROF=./build/bpfprof COPY=16K
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECONDS_=$2; shift 2 ;;
	--bpfprof) BPFPROF=$2; shift 2 ;;
	--stack-copy) COPY=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--seconds S] [--bpfprof PATH] [--stack-copy SIZE]" >&2; exit 2 ;;
	esac
done
WINDOW=$((SECONDS_ - 3 > 0 ? SECONDS_ - 3 : 1))
[ "$(id -u)" = 0 ] || { echo "stack_copy.sh: run as root" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -fomit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
	{ echo "stack_copy.sh: cannot build cpu_work" >&2; exit 1; }
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old; rm -rf "$WORK"' EXIT

# run MODE: one recording; prints "ns_per_run runs copies".
run() {
	local mode=$1 pid ids before after env=() args=(--stack-copy "$COPY")

	case $mode in
	none) args=(--stack-copy 0) ;;
	all) env=(BPFPROF_TEST_STACK_COPY_ALL=1) ;;
	esac
	env "${env[@]}" "$BPFPROF" "${args[@]}" -o "$WORK/p.json.gz" -- \
		"$WORK/cpu_work" -s "$SECONDS_" >/dev/null 2>"$WORK/err" &
	pid=$!
	# Loaded and attached (tables built) within 2 s; then a window of the run.
	sleep 2
	ids=$(bpfprof_prog_ids "$pid")
	before=$(bpf_stats on_sample $ids)
	sleep "$WINDOW"
	after=$(bpf_stats on_sample $ids)
	wait "$pid"
	copies=$(grep -o '[0-9]* stacks copied' "$WORK/err" | cut -d' ' -f1)
	samples=$(grep -o '^bpfprof: [0-9]* samples from' "$WORK/err" | cut -d' ' -f2)
	awk -v b="$before" -v a="$after" -v c="${copies:-0}" -v n="${samples:-0}" 'BEGIN {
		split(b, x); split(a, y); runs = y[4] - x[4]
		printf "%.0f %d %d %d\n", runs ? (y[3] - x[3]) / runs : 0, runs, c, n }'
}

declare -A NS SHARE RUNS COPIES
for r in $(seq "$ROUNDS"); do
	for mode in none normal all; do
		read -r ns runs copies samples < <(run "$mode")
		NS[$mode]+="$ns " RUNS[$mode]+="$runs " COPIES[$mode]+="$copies "
		SHARE[$mode]+="$(awk -v c="$copies" -v n="$samples" 'BEGIN { printf "%.4f", n ? c / n : 0 }') "
		echo "round $r $mode: on_sample $ns ns/run over $runs runs; $copies of $samples samples copied"
	done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "== on_sample ns per run (median of $ROUNDS), --stack-copy $COPY =="
for mode in none normal all; do
	printf '  %-7s %8s ns\n' "$mode" "$(median "${NS[$mode]}")"
done
# A copy's cost: the runs' extra time over the copies made in the window
# (on_sample runs on every CPU for every task; the copies, spread over the
# workload's SECONDS_, are counted for the whole recording).
awk -v none="$(median "${NS[none]}")" -v all="$(median "${NS[all]}")" \
	-v runs="$(median "${RUNS[all]}")" -v copies="$(median "${COPIES[all]}")" \
	-v share="$(median "${SHARE[all]}")" -v win="$WINDOW" -v secs="$SECONDS_" 'BEGIN {
	if (copies) printf "  one copy: ~%.0f ns more than a sample without (%.0f%% of the workload'"'"'s samples copied)\n",
		(all - none) * runs / (copies * win / secs), share * 100 }'
