#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# scrape.sh: what `bpfprof continuous --listen` costs (issue 30).
#
#   idle     the pinned ping-pong (bench/pingpong.c, both threads on one
#            CPU: the scheduler programs' worst case) alone (A), under
#            `continuous -a` (D) and under `continuous -a --listen
#            127.0.0.1:0` with no scrape (L); interleaved and rotated, medians
#            and per-round ratios. Between requests the server is a thread
#            asleep in poll(): L/D should be 1 within the noise.
#   latency  with `continuous -a --listen` running and bench/cpu_work busy on
#            every CPU, --scrapes requests for 10 s windows one after the
#            other: how long after its window's end each answer came, its
#            size, and the bpfprof process's CPU time per scrape against an
#            idle window of the same length.
#
# A benchmark, not a test: it asserts nothing.
#
# Usage: sudo bench/scrape.sh [--part idle|latency|both] [--rounds N]
#            [--seconds S] [--scrapes N] [--cpus PING,PONG] [--bpfprof PATH]
#            [--quick]

set -u -o pipefail

PROG=scrape.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

ROUNDS=9
WORK_SECONDS=3
PART=both
SCRAPES=5
WINDOW_S=10
PIN_CPUS=
LOAD_PID=

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

  --part P          idle, latency or both (default both)
  --rounds N        idle: rounds of A, D and L (default 9)
  --seconds S       idle: ping-pong wall time per run (default 3)
  --scrapes N       latency: 10 s scrapes (default 5)
  --cpus PING,PONG  idle: pin the ping-pong threads (default: both on the last CPU)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --quick           smoke test: 3 rounds of 2 s, 2 scrapes
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--part) PART=$2 ;;
	--scrapes) SCRAPES=$2 ;;
	--cpus) PIN_CPUS=$2 ;;
	esac
}

parse_args() {
	parse_bench_args "--part --scrapes --cpus" "" "$@"
	[ "$QUICK" = 1 ] && SCRAPES=2
	is_uint "$SCRAPES" || die "--scrapes wants a positive integer, not '$SCRAPES'"
	is_uint "$WORK_SECONDS" || die "--seconds wants a positive integer, not '$WORK_SECONDS'"
	case $PART in
	idle | latency | both) ;;
	*) die "--part wants idle, latency or both, not '$PART'" ;;
	esac
	if [ -z "$PIN_CPUS" ]; then
		local last=$(($(getconf _NPROCESSORS_ONLN) - 1))
		PIN_CPUS=$last,$last
	fi
	[[ $PIN_CPUS =~ ^[0-9]+,[0-9]+$ ]] || die "--cpus wants two CPU numbers like 1,1, not '$PIN_CPUS'"
}

bench_cleanup() {
	if [ -n "$LOAD_PID" ]; then
		kill "$LOAD_PID" 2>/dev/null
		wait "$LOAD_PID" 2>/dev/null
		LOAD_PID=
	fi
}

BPFPROF_DONE='^bpfprof: stopped after '

# ---- idle: the server between requests ---------------------------------------

run_pingpong() {
	local out

	out=$("$WORK/pingpong" -s "$WORK_SECONDS" -c "$PIN_CPUS") || die "pingpong failed"
	out=${out##*rt_per_s=}
	echo "${out%% *}"
}

idle() {
	local r c rot
	local -a order configs=(A D L) tp_a tp_d tp_l ld da la
	declare -A tp

	echo "== idle: $ROUNDS rounds of A (alone), D (continuous -a), L (continuous -a --listen, no scrape); ping-pong pinned to CPUs $PIN_CPUS =="
	printf '%-7s %-6s %9s %9s %9s %7s %7s %7s\n' round order "A krt/s" "D krt/s" "L krt/s" D/A L/A L/D
	run_pingpong >/dev/null
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % 3))
		order=("${configs[@]:rot}" "${configs[@]:0:rot}")
		for c in "${order[@]}"; do
			case $c in
			D) BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s) ;;
			L) BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s --listen 127.0.0.1:0) ;;
			esac
			[ "$c" = A ] || start_bpfprof
			tp[$c]=$(run_pingpong)
			if [ "$c" != A ]; then
				stop_bpfprof
				rm -rf "$WORK/snapshots"
			fi
			sleep 0.3
		done
		tp_a[r]=${tp[A]} tp_d[r]=${tp[D]} tp_l[r]=${tp[L]}
		printf '%-7s %-6s %9s %9s %9s %7s %7s %7s\n' "$((r + 1))/$ROUNDS" "$(printf %s "${order[@]}")" \
			"$(calc "${tp[A]} / 1e3" %.1f)" "$(calc "${tp[D]} / 1e3" %.1f)" "$(calc "${tp[L]} / 1e3" %.1f)" \
			"$(calc "${tp[D]} / ${tp[A]}" %.3f)" "$(calc "${tp[L]} / ${tp[A]}" %.3f)" \
			"$(calc "${tp[L]} / ${tp[D]}" %.3f)"
	done
	mapfile -t ld < <(ratio_list tp_l tp_d)
	mapfile -t da < <(ratio_list tp_d tp_a)
	mapfile -t la < <(ratio_list tp_l tp_a)
	echo
	printf 'ratio of medians: D/A %.4f, L/A %.4f, L/D %.4f\n' \
		"$(calc "$(median "${tp_d[@]}") / $(median "${tp_a[@]}")")" \
		"$(calc "$(median "${tp_l[@]}") / $(median "${tp_a[@]}")")" \
		"$(calc "$(median "${tp_l[@]}") / $(median "${tp_d[@]}")")"
	printf 'per-round L/D (min / median / max): %.4f / %.4f / %.4f\n' \
		"$(min_of "${ld[@]}")" "$(median "${ld[@]}")" "$(max_of "${ld[@]}")"
	printf 'per-round D/A median %.4f, L/A median %.4f\n' "$(median "${da[@]}")" "$(median "${la[@]}")"
	printf 'noise: baseline A ranged %+.2f%% / %+.2f%% around its median\n' \
		"$(calc "($(min_of "${tp_a[@]}") / $(median "${tp_a[@]}") - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${tp_a[@]}") / $(median "${tp_a[@]}") - 1) * 100" %.2f)"
}

# ---- latency: answers to 10 s windows -----------------------------------------

latency() {
	local i port t0 cpu0 cpu1 idle_cpu code total size
	local -a late cpu

	echo
	echo "== latency: $SCRAPES scrapes of ${WINDOW_S} s, continuous -a --listen, cpu_work on every CPU =="
	"$WORK/cpu_work" -s $(((SCRAPES + 2) * (WINDOW_S + 2) + 20)) >/dev/null &
	LOAD_PID=$!
	BPFPROF_ARGS=(continuous -a --out-dir "$WORK/snapshots" --interval 60s --listen 127.0.0.1:0)
	start_bpfprof
	port=$(sed -n 's|^bpfprof: serving scrapes at http://[^ ]*:\([0-9]*\)/debug.*|\1|p' "$WORK/bpfprof.err")
	[ -n "$port" ] || die "bpfprof did not say where it serves"
	# What the recording costs bpfprof in a window of the same length, with no scrape.
	cpu0=$(proc_cpu_s "$PROF_PID")
	sleep "$WINDOW_S"
	cpu1=$(proc_cpu_s "$PROF_PID")
	idle_cpu=$(calc "$cpu1 - $cpu0" %.3f)
	printf '%-7s %6s %12s %10s %14s\n' scrape code "after end s" "size KiB" "bpfprof CPU s"
	for ((i = 0; i < SCRAPES; i++)); do
		cpu0=$(proc_cpu_s "$PROF_PID")
		read -r code total size < <(curl -sS -o "$WORK/scrape.pb.gz" -w '%{http_code} %{time_total} %{size_download}\n' \
			"http://127.0.0.1:$port/debug/pprof/profile?seconds=$WINDOW_S")
		cpu1=$(proc_cpu_s "$PROF_PID")
		late[i]=$(calc "$total - $WINDOW_S" %.3f)
		cpu[i]=$(calc "$cpu1 - $cpu0" %.3f)
		printf '%-7s %6s %12s %10s %14s\n' "$((i + 1))/$SCRAPES" "$code" "${late[i]}" \
			"$(calc "$size / 1024" %.1f)" "${cpu[i]}"
	done
	stop_bpfprof
	bench_cleanup
	echo
	echo "answered after the window's end: median $(median "${late[@]}") s, max $(max_of "${late[@]}") s (goal: within 1 s)"
	echo "bpfprof CPU per ${WINDOW_S} s: $idle_cpu s without a scrape, median $(median "${cpu[@]}") s with one"
}

main() {
	parse_args "$@"
	bench_start scrape "BPF programs and the whole machine"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workloads"
	command -v curl >/dev/null 2>&1 || die "no curl (apt install curl)"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/pingpong" "$HERE/pingpong.c" ||
		die "cannot compile $HERE/pingpong.c"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
	echo "bpfprof scrape benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; bpfprof: $BPFPROF; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	case $PART in
	idle) idle ;;
	latency) latency ;;
	both)
		idle
		latency
		;;
	esac
}

main "$@"
