# shellcheck shell=bash
# It sets the sourcing script's globals (ROUNDS, USED, ...):
# shellcheck disable=SC2034
# SPDX-License-Identifier: BSD-2-Clause
#
# Helpers shared by the benchmarks: options, numbers, running a profiler in
# the background and measuring its CPU time, and reading the BPF programs'
# own run time.
#
# The sourcing script defines PROG (its name, for messages), CLK_TCK
# (getconf CLK_TCK), usage(), and set_option() for options of its own (see
# parse_bench_args); it may change the defaults below after sourcing.

# Options every benchmark takes (common_option), and their defaults.
ROUNDS=7
WORK_SECONDS=3
BPFPROF=./build/bpfprof
QUICK=0
ROUNDS_SET=0
SECONDS_SET=0
USED=0
# State the traps need:
#   WORK           the temporary directory ('' until created)
#   BPFPROF_ARGS   bpfprof's options (an array)
#   PROF_PID       the profiler running now ('' if none); PROF_WRAP its
#                  wrapping subshell; PROF_KIND its tag (bpfprof, perf)
#   STATS_RESTORE  kernel.bpf_stats_enabled to restore ('' if untouched)
WORK=
BPFPROF_ARGS=()
PROF_PID=
PROF_WRAP=
PROF_KIND=
STATS_RESTORE=

# ---- messages and cleanup ------------------------------------------------------

die() {
	echo "$PROG: error: $*" >&2
	exit 1
}

note() {
	echo "$PROG: $*" >&2
}

# The EXIT trap: no profiler left running, bpf_stats as it was, what the
# script made undone (its bench_cleanup, if it has one), no temporary files.
cleanup() {
	trap - EXIT INT TERM HUP
	kill_profiler
	restore_bpf_stats
	! declare -F bench_cleanup >/dev/null || bench_cleanup
	[ -z "$WORK" ] || rm -rf "$WORK"
}

on_signal() {
	note "interrupted; stopping the profiler and cleaning up"
	cleanup
	exit 130
}

# bench_start TAG WHY: after the options: root (WHY it is needed), the
# bpfprof binary (made absolute), NCPU, CLK_TCK, the temporary directory WORK
# (bpfprof-TAG.XXXXXX) and the traps that clean up.
bench_start() {
	[ "$(id -u)" = 0 ] || die "must run as root ($2): sudo $0"
	[ -x "$BPFPROF" ] || die "no bpfprof at '$BPFPROF' (build it, or pass --bpfprof PATH)"
	BPFPROF=$(cd "$(dirname "$BPFPROF")" && pwd)/$(basename "$BPFPROF")
	NCPU=$(getconf _NPROCESSORS_ONLN)
	CLK_TCK=$(getconf CLK_TCK)
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/bpfprof-$1.XXXXXX") || die "cannot create a temporary directory"
	trap cleanup EXIT
	trap on_signal INT TERM HUP
}

# ---- options every benchmark takes --------------------------------------------

is_uint() {
	[[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]
}

# common_option ARGS...: --rounds N, --seconds S, --bpfprof PATH, --quick and
# -h/--help, into ROUNDS, WORK_SECONDS, BPFPROF and QUICK (usage is the
# script's). Sets USED to how many arguments it took: 0 when $1 is not one.
common_option() {
	USED=0
	case $1 in
	--rounds | --seconds | --bpfprof)
		[ $# -ge 2 ] || die "$1 needs a value"
		case $1 in
		--rounds) ROUNDS=$2 ROUNDS_SET=1 ;;
		--seconds) WORK_SECONDS=$2 SECONDS_SET=1 ;;
		--bpfprof) BPFPROF=$2 ;;
		esac
		USED=2
		;;
	--quick) QUICK=1 USED=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	esac
}

# After the options: --quick means 3 rounds of 2 s unless those were given.
apply_quick() {
	[ "$QUICK" = 1 ] || return 0
	[ "${ROUNDS_SET:-0}" = 1 ] || ROUNDS=3
	[ "${SECONDS_SET:-0}" = 1 ] || WORK_SECONDS=2
}

# --cpu N of the single-CPU workloads (PIN_CPU): the last online CPU by default.
check_pin_cpu() {
	[ -n "$PIN_CPU" ] || PIN_CPU=$(($(getconf _NPROCESSORS_ONLN) - 1))
	[[ $PIN_CPU =~ ^[0-9]+$ && -d /sys/devices/system/cpu/cpu$PIN_CPU ]] ||
		die "--cpu: there is no CPU '$PIN_CPU' on this machine"
}

# parse_bench_args "VALUE OPTIONS" "FLAG OPTIONS" ARGS...: the common
# options, then the script's own through its set_option: `set_option NAME
# VALUE` for each of the value options, `set_option NAME` for the flags.
# Then --quick, and --rounds checked.
parse_bench_args() {
	local values=" $1 " flags=" $2 "
	shift 2

	while [ $# -gt 0 ]; do
		common_option "$@"
		if [ "$USED" -gt 0 ]; then
			shift "$USED"
		elif [[ $values == *" $1 "* ]]; then
			[ $# -ge 2 ] || die "$1 needs a value"
			set_option "$1" "$2"
			shift 2
		elif [[ $flags == *" $1 "* ]]; then
			set_option "$1"
			shift
		else
			usage >&2
			die "unknown option '$1'"
		fi
	done
	apply_quick
	is_uint "$ROUNDS" || die "--rounds wants a positive integer, not '$ROUNDS'"
}

# ---- numbers ---------------------------------------------------------------

now_ns() {
	date +%s%N
}

median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

min_of() {
	printf '%s\n' "$@" | sort -g | head -n 1
}

max_of() {
	printf '%s\n' "$@" | sort -g | tail -n 1
}

# calc EXPR [printf-format]: floating point arithmetic in awk.
calc() {
	awk "BEGIN { printf \"${2:-%.6f}\", $1 }"
}

# ratio_list X Y: the per-round ratios X[r] / Y[r] of two arrays (names), one a line.
ratio_list() {
	local -n xs=$1 ys=$2
	local r

	for ((r = 0; r < ROUNDS; r++)); do
		calc "${xs[r]} / ${ys[r]}" "%.6f"
		echo
	done
}

file_size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

# ---- a profiler in the background --------------------------------------------

# Ends a profiler that is still running, without waiting for a profile to be written.
kill_profiler() {
	local i

	[ -n "$PROF_PID" ] || return 0
	if kill -0 "$PROF_PID" 2>/dev/null; then
		kill -INT "$PROF_PID" 2>/dev/null
		if [ "$PROF_KIND" = bpfprof ]; then
			# bpfprof: a second SIGINT aborts at once and removes its temporary file.
			sleep 0.2
			kill -INT "$PROF_PID" 2>/dev/null
		fi
		for ((i = 0; i < 100; i++)); do
			kill -0 "$PROF_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$PROF_PID" 2>/dev/null
	fi
	[ -z "$PROF_WRAP" ] || wait "$PROF_WRAP" 2>/dev/null
	PROF_PID='' PROF_WRAP='' PROF_KIND=''
}

# kernel.bpf_stats_enabled=1 until restore_bpf_stats (the EXIT trap restores it too).
enable_bpf_stats() {
	STATS_RESTORE=$(sysctl -n kernel.bpf_stats_enabled) || die "cannot read kernel.bpf_stats_enabled"
	sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null || die "cannot set kernel.bpf_stats_enabled=1"
}

# bpf_stats_run WORKLOAD_FN START_CMD...: one run with kernel.bpf_stats_enabled=1:
# START_CMD starts bpfprof, WORKLOAD_FN runs once, bpfprof stops. The window
# encloses both snapshots, so shares are not inflated by time from outside
# it. Sets STATS_OUT (the workload's output), STATS_WINDOW_NS,
# STATS_ALL_CPU_NS (window x online CPUs), STATS_REC_CPU (bpfprof's process
# CPU seconds in the window) and STATS_TABLE (bpf_stats_table's output).
bpf_stats_run() {
	local workload=$1 t0 t1 cpu0 cpu1
	local -a ids before after
	shift

	enable_bpf_stats
	"$@"
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	[ ${#ids[@]} -gt 0 ] || die "found no BPF programs among bpfprof's file descriptors"
	t0=$(now_ns)
	mapfile -t before < <(bpf_prog_stats "${ids[@]}")
	cpu0=$(proc_cpu_s "$PROF_PID")
	STATS_OUT=$("$workload") || exit 1
	cpu1=$(proc_cpu_s "$PROF_PID")
	mapfile -t after < <(bpf_prog_stats "${ids[@]}")
	t1=$(now_ns)
	stop_bpfprof
	restore_bpf_stats
	STATS_WINDOW_NS=$((t1 - t0))
	STATS_ALL_CPU_NS=$(calc "$STATS_WINDOW_NS * $NCPU" %.0f)
	STATS_REC_CPU=$(calc "$cpu1 - $cpu0" %.4f)
	STATS_TABLE=$(bpf_stats_table "$STATS_ALL_CPU_NS" "${before[@]}" -- "${after[@]}")
}

# stats_window TEXT: the window of bpf_stats_run, and TEXT about the workload.
stats_window() {
	echo "window: $(calc "$STATS_WINDOW_NS / 1e9" %.3f) s wall x $NCPU CPUs; $*" \
		"(bpf_stats itself adds two clock reads per program run)"
}

# stats_process_cpu SUFFIX: bpfprof's process CPU in the window, then SUFFIX.
stats_process_cpu() {
	echo "bpfprof process CPU while recording: $STATS_REC_CPU s =" \
		"$(calc "$STATS_REC_CPU * 1e9 / $STATS_ALL_CPU_NS * 100" %.3f)% of all CPU time$1"
}

restore_bpf_stats() {
	[ -n "$STATS_RESTORE" ] || return 0
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_RESTORE" >/dev/null ||
		note "could not restore kernel.bpf_stats_enabled=$STATS_RESTORE"
	STATS_RESTORE=
}

# start_wrapped TAG COMMAND...: starts COMMAND in the background under a
# subshell whose only child it is, so that after it exits the subshell's
# `times` holds exactly its CPU time, including the time spent writing the
# profile after SIGINT (when /proc/PID/stat is gone).
start_wrapped() {
	local tag=$1 i
	shift

	rm -f "$WORK/$tag.pid" "$WORK/$tag.times" "$WORK/$tag.err"
	(
		"$@" >/dev/null 2>"$WORK/$tag.err" &
		echo $! >"$WORK/$tag.pid.tmp" && mv "$WORK/$tag.pid.tmp" "$WORK/$tag.pid"
		wait $!
		rc=$?
		times >"$WORK/$tag.times"
		exit $rc
	) &
	PROF_WRAP=$!
	PROF_KIND=$tag
	for ((i = 0; i < 200; i++)); do
		[ -s "$WORK/$tag.pid" ] && break
		sleep 0.01
	done
	[ -s "$WORK/$tag.pid" ] || die "could not start $1"
	PROF_PID=$(cat "$WORK/$tag.pid")
}

# stop_wrapped: SIGINT, then wait until the profiler has written its output.
# Returns the profiler's exit status.
stop_wrapped() {
	local rc

	kill -INT "$PROF_PID" 2>/dev/null
	wait "$PROF_WRAP"
	rc=$?
	PROF_PID='' PROF_WRAP='' PROF_KIND=''
	return $rc
}

# start_bpfprof [OPTIONS...]: bpfprof with BPFPROF_ARGS and OPTIONS, in the
# background; returns once it records (with stderr not a tty, it says
# "recording" once its programs are attached).
start_bpfprof() {
	local i

	start_wrapped bpfprof "$BPFPROF" "${BPFPROF_ARGS[@]}" "$@"
	for ((i = 0; i < 600; i++)); do
		grep -q '^bpfprof: recording' "$WORK/bpfprof.err" 2>/dev/null && return 0
		if ! kill -0 "$PROF_PID" 2>/dev/null; then
			sed 's/^/  /' "$WORK/bpfprof.err" >&2
			die "bpfprof exited before it started recording"
		fi
		sleep 0.05
	done
	die "bpfprof did not start recording within 30 s"
}

# stop_bpfprof: SIGINT, then wait for its profile; dies when none was written
# (BPFPROF_DONE, a regex of its stderr, says what "written" looks like).
BPFPROF_DONE='^bpfprof: wrote '
stop_bpfprof() {
	if ! stop_wrapped || ! grep -q "$BPFPROF_DONE" "$WORK/bpfprof.err"; then
		sed 's/^/  /' "$WORK/bpfprof.err" >&2
		die "bpfprof did not write its profile"
	fi
}

# stop_perf: SIGINT, then wait for perf record's data. perf re-raises SIGINT
# after writing, so its status is not the test: its "Captured and wrote" line is.
stop_perf() {
	stop_wrapped
	if ! grep -q 'Captured and wrote' "$WORK/perf.err"; then
		sed 's/^/  /' "$WORK/perf.err" >&2
		die "perf record did not write its data"
	fi
}

# CPU seconds (user + system) of the wrapped profiler, from the subshell's `times`.
wrapped_cpu_s() {
	# The second line is the children's: "0m1.234s 0m0.567s".
	sed -n 2p "$WORK/$1.times" | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
		printf "%.3f", t }'
}

# CPU seconds of a running process so far. /proc/PID/stat's utime + stime
# count in clock ticks (10 ms), too coarse for a profiler that mostly sleeps
# while recording; the tasks' schedstat holds the same CPU time in ns.
proc_cpu_s() {
	local ns

	ns=$(cat "/proc/$1/task/"*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f", t }')
	if [ "${ns:-0}" -gt 0 ]; then
		calc "$ns / 1e9" %.4f
		return
	fi
	# No schedstat (CONFIG_SCHED_INFO off): utime and stime, fields 14 and 15,
	# counted after "(comm)" because comm may contain spaces.
	awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.4f", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}

# ---- BPF programs ----------------------------------------------------------

# bpfprof's BPF program ids, from the prog_id lines of its file descriptors:
# exact even when other BPF tools (or other bpfprof runs) are loaded.
bpfprof_prog_ids() {
	grep -h '^prog_id:' "/proc/$1/fdinfo/"* 2>/dev/null | awk '{ print $2 }' | sort -un
}

# bpf_prog_stats IDS...: one line per program, "ID NAME RUN_TIME_NS RUN_CNT"
# (bpftool's counters; they only count while kernel.bpf_stats_enabled=1).
bpf_prog_stats() {
	local id json name rt cnt

	for id in "$@"; do
		json=$(bpftool prog show id "$id" -j 2>/dev/null) || continue
		name=$(grep -o '"name":"[^"]*"' <<<"$json" | head -n 1 | cut -d'"' -f4)
		rt=$(grep -o '"run_time_ns":[0-9]*' <<<"$json" | cut -d: -f2)
		cnt=$(grep -o '"run_cnt":[0-9]*' <<<"$json" | cut -d: -f2)
		echo "$id ${name:-?} ${rt:-0} ${cnt:-0}"
	done
}

# bpf_stats NAME IDS...: "run_time_ns run_cnt name_run_time_ns name_run_cnt",
# summed over the programs, and for the programs called NAME alone.
bpf_stats() {
	local want=$1
	shift
	bpf_prog_stats "$@" | awk -v want="$want" '
		{ trt += $3; tcnt += $4; if ($2 == want) { srt += $3; scnt += $4 } }
		END { printf "%.0f %.0f %.0f %.0f\n", trt, tcnt, srt, scnt }'
}

# bpf_stats_table ALL_CPU_NS BEFORE... -- AFTER...: from two bpf_prog_stats
# snapshots, per program its runs, run time, ns per run and share of
# ALL_CPU_NS (the window's wall time x online CPUs), then all programs.
bpf_stats_table() {
	local all=$1
	shift
	printf '  %-24s %12s %12s %10s %12s\n' program runs "run time ms" "ns/run" "% of CPU"
	printf '%s\n' "$@" | awk -v all="$all" '
		$0 == "--" { phase = 1; next }
		!phase { rt0[$1] = $3; cnt0[$1] = $4; next }
		{
			drt = $3 - rt0[$1]; dcnt = $4 - cnt0[$1]; trt += drt; tcnt += dcnt
			if (dcnt)
				printf "  %-24s %12d %12.2f %10.0f %11.4f%%\n", $2, dcnt, drt / 1e6,
					drt / dcnt, drt / all * 100
		}
		END { printf "  %-24s %12d %12.2f %10s %11.4f%%\n", "all programs", tcnt, trt / 1e6,
			tcnt ? sprintf("%.0f", trt / tcnt) : "-", trt / all * 100 }'
}

# floor_setup: build/bpfprof-hook-floor, next to $BPFPROF (empty BPF programs
# on bpfprof's hooks, the floor under its cost), behind a wrapper that keeps
# its stdout ("attached") in $WORK/floor.out: start_wrapped discards stdout.
floor_setup() {
	local floor

	floor=$(dirname "$BPFPROF")/bpfprof-hook-floor
	[ -x "$floor" ] || die "no $floor (cmake --build build builds it next to bpfprof)"
	FLOOR_WRAPPER=$WORK/floor.sh
	printf '#!/bin/sh\nexec "%s" "$1" >"%s"\n' "$floor" "$WORK/floor.out" >"$FLOOR_WRAPPER"
	chmod +x "$FLOOR_WRAPPER"
}

# start_floor sched|syscalls: the floor's programs on those hooks, attached
# when it returns (PROF_PID set, stop with stop_wrapped).
start_floor() {
	local i

	rm -f "$WORK/floor.out"
	start_wrapped floor "$FLOOR_WRAPPER" "$1"
	for ((i = 0; i < 200; i++)); do
		grep -q attached "$WORK/floor.out" 2>/dev/null && return 0
		sleep 0.05
	done
	die "bpfprof-hook-floor did not attach: $(cat "$WORK/floor.err")"
}

# in_vm: true when running in a virtual machine.
in_vm() {
	if command -v systemd-detect-virt >/dev/null 2>&1; then
		systemd-detect-virt --vm --quiet
		return
	fi
	grep -qw hypervisor /proc/cpuinfo 2>/dev/null
}
