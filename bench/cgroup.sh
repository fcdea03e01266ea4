#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# cgroup.sh: what `bpfprof -a --cgroup` costs the processes outside the
# cgroup it profiles (it should be near nothing). A bench cgroup holds one
# light process (a shell that runs `sleep 0.1` in a loop); the measured
# workload runs outside it:
#
#   A  baseline: the workload alone
#   B  bpfprof -a --cgroup BENCH_CGROUP (defaults otherwise): every event
#      of the workload still reaches bpfprof's BPF programs, which must
#      drop it at once
#   C  bpfprof -a (defaults): the workload profiled, for scale
#
# Three workloads, each a section of its own: CPU-bound (bench/cpu_work.c,
# one thread per CPU; its sampling interrupts are the events), context-switch
# heavy (bench/pingpong.c, both threads pinned to one CPU: sched_switch and
# sched_waking at ~1.5 M/s each) and syscall heavy (bench/syscalls.c, getppid
# in a loop pinned to one CPU: raw_syscalls enter and exit).
#
# A benchmark, not a test: it asserts nothing. The configurations run
# interleaved and rotated (A B C, B C A, ...) and the summary compares
# medians and per-round ratios measured side by side. After the rounds of a
# section, one more B and one more C run with kernel.bpf_stats_enabled=1 give
# the run time of each BPF program and bpfprof's own CPU share.
#
# Usage: sudo bench/cgroup.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#            [--workloads cpu,switch,syscall] [--cpu N] [--quick]

# shellcheck disable=SC2034 # result arrays are read through namerefs

set -u -o pipefail

PROG=cgroup.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

WORKLOADS=cpu,switch,syscall
PIN_CPU=
LIMIT_SLACK=30
CONFIGS=(A B C)

# The bench cgroup and its light process.
CG=
CG_PATH=
V2=
LIGHT_PID=

usage() {
	cat <<EOF
usage: $PROG [OPTIONS]       (as root)

The throughput of a workload outside a cgroup, alone (A), while bpfprof -a
--cgroup profiles that cgroup (B), and under bpfprof -a (C), interleaved over
rounds, for a CPU-bound, a context-switch-heavy and a syscall-heavy workload;
then the BPF run time per program and bpfprof's CPU share in B and C, with
kernel.bpf_stats_enabled=1.

  --rounds N        rounds (default 7)
  --seconds S       workload wall time per run, whole seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --workloads LIST  comma-separated, of cpu, switch, syscall (default: all)
  --cpu N           the CPU the switch and syscall workloads are pinned to
                    (default: the last online CPU)
  --quick           3 rounds of 2 s (an explicit --rounds/--seconds wins)
  -h, --help        this help
EOF
}

set_option() {
	case $1 in
	--workloads) WORKLOADS=$2 ;;
	--cpu) PIN_CPU=$2 ;;
	esac
}

parse_args() {
	local w
	parse_bench_args "--workloads --cpu" "" "$@"
	is_uint "$WORK_SECONDS" || die "--seconds wants a positive integer, not '$WORK_SECONDS'"
	for w in ${WORKLOADS//,/ }; do
		[[ $w == cpu || $w == switch || $w == syscall ]] ||
			die "--workloads wants cpu, switch or syscall, not '$w'"
	done
	check_pin_cpu
}

# ---- the bench cgroup ----------------------------------------------------------

# The cgroup v2 mount: the filesystem type is the first field after " - " in
# /proc/self/mountinfo, the mount point field 5.
find_v2() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo | head -n 1
}

# A cgroup holding one light process: a shell that sleeps 0.1 s in a loop,
# so bpfprof has something to record (ten short processes a second) while
# nothing of it competes with the workload.
make_bench_cgroup() {
	local i
	V2=$(find_v2)
	if [ -z "$V2" ] || [ ! -f "$V2/cgroup.procs" ]; then
		die "no cgroup v2 hierarchy is mounted"
	fi
	CG_PATH=/bpfprof-bench-$$
	CG=$V2$CG_PATH
	mkdir "$CG" || die "cannot create the cgroup $CG"
	# shellcheck disable=SC2016 # expanded by the inner shell
	sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; exec sh -c "while :; do sleep 0.1; done"' light "$CG" \
		>/dev/null 2>&1 &
	LIGHT_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -qx "$LIGHT_PID" "$CG/cgroup.procs" 2>/dev/null && return 0
		sleep 0.02
	done
	die "the light process did not join $CG"
}

remove_bench_cgroup() {
	local pid i
	if [ -n "$LIGHT_PID" ]; then
		kill "$LIGHT_PID" 2>/dev/null
		wait "$LIGHT_PID" 2>/dev/null
		LIGHT_PID=
	fi
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	for ((i = 0; i < 50; i++)); do
		# A sleep of the loop may outlive its shell: back to the root, and gone.
		while read -r pid; do
			echo "$pid" >"$V2/cgroup.procs" 2>/dev/null
			kill "$pid" 2>/dev/null
		done <"$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null && return 0
		sleep 0.1
	done
	note "could not remove $CG"
}

# lib.sh's cleanup (the EXIT trap and the signal handler) calls this.
bench_cleanup() {
	remove_bench_cgroup
}

# ---- the workloads --------------------------------------------------------------

build_workloads() {
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/pingpong" "$HERE/pingpong.c" ||
		die "cannot compile $HERE/pingpong.c"
	cc -O2 -o "$WORK/syscalls" "$HERE/syscalls.c" || die "cannot compile $HERE/syscalls.c"
}

# field OUT KEY: the value of KEY=VALUE in a workload's output line.
field() {
	local v=${1##*"$2"=}
	echo "${v%% *}"
}

# run_workload: runs the section's workload once; prints its throughput over
# wall time, and per CPU-second it used ("-" when it does not say).
run_workload() {
	local out wall cpu=-
	case $KIND in
	cpu)
		out=$("$WORK/cpu_work" -s "$WORK_SECONDS") || die "cpu_work failed"
		wall=$(field "$out" ops_per_s) cpu=$(field "$out" ops_per_cpu_s)
		;;
	switch)
		out=$("$WORK/pingpong" -s "$WORK_SECONDS" -c "$PIN_CPU,$PIN_CPU") || die "pingpong failed"
		wall=$(field "$out" rt_per_s) cpu=$(field "$out" rt_per_cpu_s)
		;;
	syscall)
		out=$("$WORK/syscalls" -s "$WORK_SECONDS" -m getppid -c "$PIN_CPU") || die "syscalls failed"
		wall=$(field "$out" calls_per_s)
		;;
	esac
	[[ $wall =~ ^[0-9]+$ && ($cpu == - || $cpu =~ ^[0-9]+$) ]] || die "unexpected $KIND output: $out"
	echo "$wall $cpu"
}

# The section's unit: throughput / DIV, called UNIT.
set_unit() {
	case $KIND in
	cpu) UNIT="Mops/s" DIV=1e6 TITLE="CPU-bound: cpu_work, one thread per CPU" ;;
	switch) UNIT="k round trips/s" DIV=1e3 TITLE="context switches: pingpong, both threads on CPU $PIN_CPU" ;;
	syscall) UNIT="M calls/s" DIV=1e6 TITLE="syscalls: getppid in a loop on CPU $PIN_CPU" ;;
	esac
}

scaled() {
	calc "$1 / $DIV" %.2f
}

# ---- bpfprof ----------------------------------------------------------------------

# start_config B|C: bpfprof with the configuration's options.
start_config() {
	if [ "$1" = B ]; then
		start_bpfprof --cgroup "$CG"
	else
		start_bpfprof
	fi
}

# recorded: what bpfprof says it recorded, from its summary on stderr:
# "SAMPLES PROCESSES SWITCHES SYSCALLS LOST" (0 where a line is missing).
recorded() {
	awk '
		/^bpfprof: [0-9]+ samples from [0-9]+ processes/ {
			s = $2; p = $5
			if (match($0, /; [0-9]+ samples lost/)) { split(substr($0, RSTART + 2), l, " "); lost += l[1] }
		}
		/^bpfprof: [0-9]+ context switches, / {
			sw = $2
			if (match($0, /; [0-9]+ switches and [0-9]+ wakeups lost/)) {
				split(substr($0, RSTART + 2), l, " "); lost += l[1] + l[4]
			}
		}
		/^bpfprof: [0-9]+ syscalls counted/ { sc = $2 }
		END { printf "%d %d %d %d %d\n", s, p, sw, sc, lost }' "$WORK/bpfprof.err"
}

declare -a TP_A TP_B TP_C TPC_A TPC_B TPC_C CPU_B CPU_C WIN_B WIN_C REC_B REC_C

# run_config CONFIG ROUND
run_config() {
	local c=$1 r=$2 out t0 cpu0 cpu1
	local -n tp=TP_$c tpc=TPC_$c
	if [ "$c" = A ]; then
		out=$(run_workload) || exit 1
	else
		start_config "$c"
		t0=$(now_ns)
		cpu0=$(proc_cpu_s "$PROF_PID")
		out=$(run_workload) || exit 1
		cpu1=$(proc_cpu_s "$PROF_PID")
		local -n cpu=CPU_$c win=WIN_$c rec=REC_$c
		cpu[r]=$(calc "$cpu1 - $cpu0" %.4f) win[r]=$(($(now_ns) - t0))
		stop_bpfprof
		rec[r]=$(recorded)
		rm -f "$WORK/bpfprof.json.gz"
	fi
	tp[r]=${out%% *} tpc[r]=${out##* }
}

run_rounds() {
	local r c rot
	local -a order

	echo
	echo "== $TITLE ($UNIT): $ROUNDS rounds of A (alone), B (bpfprof -a --cgroup $CG_PATH), C (bpfprof -a) =="
	printf '%-7s %-6s %10s %10s %10s %7s %7s %7s  %-24s %s\n' round order A B C B/A C/A B/C \
		"B: samples/procs/lost" "C: samples/procs/lost"
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % ${#CONFIGS[@]}))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			sleep 0.3
		done
		printf '%-7s %-6s %10s %10s %10s %7s %7s %7s  %-24s %s\n' "$((r + 1))/$ROUNDS" \
			"$(printf '%s' "${order[@]}")" "$(scaled "${TP_A[r]}")" "$(scaled "${TP_B[r]}")" \
			"$(scaled "${TP_C[r]}")" "$(calc "${TP_B[r]} / ${TP_A[r]}" %.3f)" \
			"$(calc "${TP_C[r]} / ${TP_A[r]}" %.3f)" "$(calc "${TP_B[r]} / ${TP_C[r]}" %.3f)" \
			"$(awk '{ print $1 "/" $2 "/" $5 }' <<<"${REC_B[r]}")" \
			"$(awk '{ print $1 "/" $2 "/" $5 }' <<<"${REC_C[r]}")"
	done
}

# summary_line LABEL MEDIAN BASELINE_MEDIAN RATIOS_ARRAY
summary_line() {
	local -n rs=$4
	printf '%-44s %12s %8s %8s%%   %.3f / %.3f / %.3f\n' "$1" "$(scaled "$2")" "$(calc "$2 / $3" %.3f)" \
		"$(calc "(1 - $2 / $3) * 100" %.1f)" "$(min_of "${rs[@]}")" "$(median "${rs[@]}")" "$(max_of "${rs[@]}")"
}

# sum_field ARRAY N: the sum over rounds of field N of the recorded counts.
sum_field() {
	local -n a=$1
	printf '%s\n' "${a[@]}" | awk -v n="$2" '{ s += $n } END { printf "%.0f", s }'
}

print_summary() {
	local ma mb mc r
	local -a rb rc rbc sb sc
	ma=$(median "${TP_A[@]}") mb=$(median "${TP_B[@]}") mc=$(median "${TP_C[@]}")
	mapfile -t rb < <(ratio_list TP_B TP_A)
	mapfile -t rc < <(ratio_list TP_C TP_A)
	mapfile -t rbc < <(ratio_list TP_B TP_C)
	echo
	echo "-- median of $ROUNDS rounds --"
	printf '%-44s %12s %8s %9s   %s\n' configuration "$UNIT" "vs A" overhead "per-round ratio min / median / max"
	printf '%-44s %12s %8s %9s\n' "A  alone" "$(scaled "$ma")" 1.000 -
	summary_line "B  bpfprof -a --cgroup (1 light process)" "$mb" "$ma" rb
	summary_line "C  bpfprof -a" "$mc" "$ma" rc
	printf 'per-round B/C min / median / max: %.3f / %.3f / %.3f\n' \
		"$(min_of "${rbc[@]}")" "$(median "${rbc[@]}")" "$(max_of "${rbc[@]}")"
	if [ "${TPC_A[0]}" != - ]; then
		printf 'per CPU-second the workload used: B/A %.3f, C/A %.3f (medians)\n' \
			"$(calc "$(median "${TPC_B[@]}") / $(median "${TPC_A[@]}")" %.3f)" \
			"$(calc "$(median "${TPC_C[@]}") / $(median "${TPC_A[@]}")" %.3f)"
	fi
	printf 'noise: A ranged %s..%s (%+.1f%% / %+.1f%% around its median)\n' \
		"$(scaled "$(min_of "${TP_A[@]}")")" "$(scaled "$(max_of "${TP_A[@]}")")" \
		"$(calc "($(min_of "${TP_A[@]}") / $ma - 1) * 100" %.2f)" \
		"$(calc "($(max_of "${TP_A[@]}") / $ma - 1) * 100" %.2f)"
	for ((r = 0; r < ROUNDS; r++)); do
		sb[r]=$(calc "${CPU_B[r]} * 1e9 / (${WIN_B[r]} * $NCPU) * 100" %.4f)
		sc[r]=$(calc "${CPU_C[r]} * 1e9 / (${WIN_C[r]} * $NCPU) * 100" %.4f)
	done
	echo "recorded over all rounds: B $(sum_field REC_B 1) samples, $(sum_field REC_B 3) switches," \
		"$(sum_field REC_B 4) syscalls, $(sum_field REC_B 5) events lost;" \
		"C $(sum_field REC_C 1) samples, $(sum_field REC_C 3) switches, $(sum_field REC_C 4) syscalls," \
		"$(sum_field REC_C 5) events lost"
	echo "bpfprof process CPU while recording, share of all CPU time (median): B $(median "${sb[@]}")%," \
		"C $(median "${sc[@]}")%"
	FINAL+=("$(printf '%-9s %24s %7s %7s %9s %9s %9s' "$KIND" "$(scaled "$ma") $UNIT" \
		"$(calc "$mb / $ma" %.3f)" "$(calc "$mc / $ma" %.3f)" "$(calc "$(median "${rb[@]}")" %.3f)" \
		"$(calc "$(median "${rbc[@]}")" %.3f)" "$(calc "$(median "${sb[@]}")" %.3f)%")")
}

# measure_cost B|C: one more run with kernel.bpf_stats_enabled=1; the run
# time of each of bpfprof's programs and its process CPU.
measure_cost() {
	local c=$1

	bpf_stats_run run_workload start_config "$c"
	rm -f "$WORK/bpfprof.json.gz"
	echo
	if [ "$c" = B ]; then
		echo "-- bpfprof's own cost, B (-a --cgroup $CG_PATH), with kernel.bpf_stats_enabled=1 --"
	else
		echo "-- bpfprof's own cost, C (-a), with kernel.bpf_stats_enabled=1 --"
	fi
	stats_window "workload $(scaled "${STATS_OUT%% *}") $UNIT"
	echo "$STATS_TABLE"
	stats_process_cpu "; recorded (samples processes switches syscalls lost): $(recorded)"
}

run_section() {
	KIND=$1
	set_unit
	TP_A=() TP_B=() TP_C=() TPC_A=() TPC_B=() TPC_C=() CPU_B=() CPU_C=() WIN_B=() WIN_C=() REC_B=() REC_C=()
	run_workload >/dev/null
	run_rounds
	print_summary
	if command -v bpftool >/dev/null 2>&1; then
		measure_cost B
		measure_cost C
	else
		echo "bpf_stats skipped: bpftool is not installed"
	fi
}

main() {
	local w
	parse_args "$@"
	bench_start cgroup "system-wide tracing and cgroups need it"
	"$BPFPROF" --help | grep -q -- --cgroup || die "$BPFPROF has no --cgroup option"
	command -v cc >/dev/null 2>&1 || die "no C compiler (cc) to build the workloads"
	BPFPROF_ARGS=(-a -d $((WORK_SECONDS + LIMIT_SLACK)) -o "$WORK/bpfprof.json.gz")
	build_workloads
	make_bench_cgroup

	echo "bpfprof --cgroup benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; $WORK_SECONDS s per run"
	echo "bpfprof: $BPFPROF; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "bench cgroup: $CG (id $(stat -c %i "$CG")), holding a shell that runs sleep 0.1 in a loop"
	FINAL=()
	for w in ${WORKLOADS//,/ }; do
		run_section "$w"
	done
	echo
	echo "== summary: medians of $ROUNDS rounds; load average now $(cut -d' ' -f1-3 /proc/loadavg) =="
	printf '%-9s %24s %7s %7s %9s %9s %9s\n' workload "A alone" "B/A" "C/A" "B/A rnd" "B/C rnd" "B CPU"
	printf '%s\n' "${FINAL[@]}"
	echo "(B/A rnd, B/C rnd: medians of the per-round ratios; B CPU: bpfprof's process CPU share in B)"
}

main "$@"
