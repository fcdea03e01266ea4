#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# runtimes.sh: what a Java or a JavaScript sample costs in BPF next to a
# native one (issue 39). Each round records, with `bpfprof -a` and
# kernel.bpf_stats_enabled=1, in an order rotated each round:
#
#   N     bench/cpu_work.c at -O2 without frame pointers (the CFI walk)
#   J17   OpenJDK 17 running tests/workloads/JitHot.java, no flags
#   JI17  the same with -Xint: every Java frame interpreted, each one a
#         runtime record (the worst case for the kernel side)
#   J25   JI25: the same on Temurin 25, where it is installed
#   V     Debian's node running tests/workloads/jit_hot.js
#   P     Debian's python3 (3.11) running tests/workloads/pypool.py, one
#         pool thread and a sleeper (issue 40): its thread state found
#         through its pthread key
#   P27   P313: the same on ~/.pyenv's 2.7 (its thread found by walking
#         its interpreter's thread list) and 3.13 (its layout from its
#         _Py_DebugOffsets), where installed
#   PHP   Debian's php8.2 running tests/workloads/phpfuncs.php (issue 40):
#         its PHP frames walked in BPF (bpf/php.bpf.h)
#   R     Debian's ruby (3.1) running tests/workloads/rbfuncs.rb (issue 40:
#         its control frames walked in on_sample_ruby)
#
# one workload process per online CPU (cpu_work: one thread per CPU), so
# that the samples of the window are mostly the workload's. The window opens
# once every process has started (printed its pid) and closes as they end:
# BPF ns per run of on_sample and of the switch program (bpf_stats deltas),
# bpfprof's CPU time per second recorded, and its peak RSS (-v). Then the
# medians, each runtime's ratio to the native CFI sample, the recording's
# "user stacks:" and "runtime frames:" shares, and bpfprof's peak RSS when
# it records one JVM against one native process. A benchmark, not a test:
# it asserts nothing.
#
# Usage: sudo bench/runtimes.sh [--rounds N] [--seconds S] [--bpfprof PATH]
#                               [--freq HZ] [--procs N] [--quick]

set -u -o pipefail

PROG=runtimes.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

ROUNDS=5
FREQ=999
PROCS=
PIDS_MODE=0
EXTRA_ARGS=()
ONLY=
# The workload's run time: in --pids mode bpfprof starts after it, by then
# 1 to 4 s (its BPF programs verified, on a busy machine) of the workload
# have gone: it runs PIDS_LEAD s longer.
PIDS_LEAD=5
WL_SECONDS=
JDK17=/usr/lib/jvm/java-17-openjdk-amd64
JDK25=/usr/lib/jvm/temurin-25-jdk-amd64
NODE=/usr/bin/node
PY3=/usr/bin/python3
PYENV=${PYENV_VERSIONS:-$HOME/.pyenv/versions}
PHP=/usr/bin/php8.2
RUBY=/usr/bin/ruby
CONFIGS=()
# Each one's tag and name (from column 6).
declare -A LABEL=(
	[N]="N     native -O2, CFI (cpu_work)"
	[J17]="J17   OpenJDK 17, JitHot"
	[JI17]="JI17  OpenJDK 17 -Xint, JitHot"
	[J25]="J25   Temurin 25, JitHot"
	[JI25]="JI25  Temurin 25 -Xint, JitHot"
	[V]="V     node, jit_hot.js"
	[P]="P     python3 (3.11), pypool.py"
	[P27]="P27   pyenv 2.7, pypool.py"
	[P313]="P313  pyenv 3.13, pypool.py"
	[PHP]="PHP   php8.2, phpfuncs.php"
	[R]="R     ruby 3.1, rbfuncs.rb"
)
# The name of a configuration's processes (for stack_depth.py).
declare -A PROC_NAME=([N]=cpu_work [J17]=java [JI17]=java [J25]=java [JI25]=java [V]=node
	[P]=python3 [P27]=python2.7 [P313]=python3.13 [PHP]=php8.2 [R]=ruby)
# The runtime a configuration's "runtime frames:" share is read for.
declare -A LANG_OF=([J17]=Java [JI17]=Java [J25]=Java [JI25]=Java [V]=JavaScript [PHP]=PHP [R]=Ruby)
# The workload processes running now, killed on exit.
WL_PIDS=()

usage() {
	cat <<EOF2
usage: $PROG [OPTIONS]       (as root)

BPF cost per sample of a JVM (OpenJDK 17, Temurin 25; JIT and -Xint) and of
node, next to a native -O2 program walked by CFI, all under bpfprof -a,
interleaved; then bpfprof's peak RSS for one JVM against one native process.

  --rounds N        rounds of all configurations (default 5)
  --seconds S       workload wall time per run, seconds (default 3)
  --bpfprof PATH    the bpfprof binary (default ./build/bpfprof)
  --freq HZ         sampling frequency (default 999)
  --procs N         workload processes per run (default: online CPUs)
  --pids            record the workload's processes alone (bpfprof -p, started
                    after them), not the whole machine (bpfprof -a): BPF time
                    per sample of the workload, others' samples not mixed in
  --configs LIST    only these of N,J17,JI17,J25,JI25,V,P,P27,P313,PHP,R (N is always run)
  --bpfprof-arg A   one more option for the recordings (repeatable), for an
                    ablation: --bpfprof-arg --unwind=fp
  --quick           smoke test: 3 rounds of 2 s
  -h, --help        this help
EOF2
}

set_option() {
	case $1 in
	--freq) FREQ=$2 ;;
	--procs) PROCS=$2 ;;
	--pids) PIDS_MODE=1 ;;
	--bpfprof-arg) EXTRA_ARGS+=("$2") ;;
	--configs) ONLY=$2 ;;
	esac
}

bench_cleanup() {
	local p

	for p in "${WL_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${WL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	WL_PIDS=()
}

# ---- the workloads -----------------------------------------------------------

# JitHot.java compiled once by the JDK's own javac (the source launcher
# would compile it in every run, for seconds under -Xint).
compile_java() {
	local jdk=$1 tag=$2

	mkdir -p "$WORK/classes-$tag"
	"$jdk/bin/javac" -d "$WORK/classes-$tag" "$HERE/../tests/workloads/JitHot.java" ||
		die "$jdk/bin/javac cannot compile JitHot.java"
}

# The configurations this machine can run; a missing runtime said by name.
pick_configs() {
	local c keep=()

	CONFIGS=(N)
	if [ -x "$JDK17/bin/javac" ]; then
		compile_java "$JDK17" 17
		CONFIGS+=(J17 JI17)
	else
		echo "missing: OpenJDK 17 ($JDK17/bin/javac); scripts/install-deps.sh --test installs it"
	fi
	if [ -x "$JDK25/bin/javac" ]; then
		compile_java "$JDK25" 25
		CONFIGS+=(J25 JI25)
	else
		echo "missing: Temurin 25 ($JDK25/bin/javac); its configurations are left out"
	fi
	if [ -x "$NODE" ]; then
		CONFIGS+=(V)
	else
		echo "missing: node ($NODE); scripts/install-deps.sh --test installs Debian's nodejs"
	fi
	if [ -x "$PY3" ]; then
		CONFIGS+=(P)
	else
		echo "missing: python3 ($PY3); scripts/install-deps.sh --test installs it"
	fi
	for c in P27 P313; do
		if [ -x "$(python_of "$c")" ]; then
			CONFIGS+=("$c")
		else
			echo "missing: Python ${c#P} under $PYENV; its configuration is left out"
		fi
	done
	if [ -x "$PHP" ]; then
		CONFIGS+=(PHP)
	else
		echo "missing: php8.2 ($PHP); scripts/install-deps.sh --test installs php8.2-cli"
	fi
	if [ -x "$RUBY" ]; then
		CONFIGS+=(R)
	else
		echo "missing: ruby ($RUBY); scripts/install-deps.sh --test installs Debian's ruby"
	fi
	[ -n "$ONLY" ] || return 0
	for c in "${CONFIGS[@]}"; do
		[[ $c == N || ,$ONLY, == *,$c,* ]] && keep+=("$c")
	done
	CONFIGS=("${keep[@]}")
}

# The interpreter of a Python configuration.
python_of() {
	case $1 in
	P) echo "$PY3" ;;
	P27) ls -d "$PYENV"/2.7.*/bin/python2.7 2>/dev/null | head -n 1 ;;
	P313) ls -d "$PYENV"/3.13.*/bin/python3.13 2>/dev/null | head -n 1 ;;
	esac
}

# start_one OUT CMD...: one workload process in the background, its stdout in OUT.
start_one() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 &
	WL_PIDS+=($!)
}

# start_workload CONFIG: its processes started; returns once each has printed
# its pid (the JVMs' and node's first line), i.e. is in its main code.
start_workload() {
	local c=$1 i k jdk xint=()

	WL_PIDS=()
	case $c in
	N) start_one "$WORK/wl.0" "$WORK/cpu_work" -t "$PROCS" -s "$WL_SECONDS" ;;
	J* | V | P* | R)
		for ((i = 0; i < PROCS; i++)); do
			case $c in
			V) start_one "$WORK/wl.$i" "$NODE" "$HERE/../tests/workloads/jit_hot.js" "$WL_SECONDS" ;;
			R) start_one "$WORK/wl.$i" "$RUBY" "$HERE/../tests/workloads/rbfuncs.rb" "$WL_SECONDS" ;;
			PHP) start_one "$WORK/wl.$i" "$PHP" "$HERE/../tests/workloads/phpfuncs.php" "$WL_SECONDS" ;;
			P*)
				# Its pid first, as the JVMs and node print theirs (exec keeps it).
				# shellcheck disable=SC2016 # expanded by that sh
				start_one "$WORK/wl.$i" sh -c 'echo $$; exec "$0" "$1" "$2" 1' "$(python_of "$c")" \
					"$HERE/../tests/workloads/pypool.py" "$WL_SECONDS"
				;;
			*)
				jdk=$JDK17
				[[ $c != *25 ]] || jdk=$JDK25
				[[ $c != JI* ]] || xint=(-Xint)
				start_one "$WORK/wl.$i" "$jdk/bin/java" "${xint[@]}" -cp "$WORK/classes-${c: -2}" \
					JitHot "$WL_SECONDS"
				;;
			esac
		done
		for ((i = 0; i < PROCS; i++)); do
			for ((k = 0; k < 600; k++)); do
				grep -q '^[0-9]' "$WORK/wl.$i" 2>/dev/null && break
				kill -0 "${WL_PIDS[i]}" 2>/dev/null || die "$c's workload exited: $(cat "$WORK/wl.$i")"
				sleep 0.05
			done
		done
		;;
	esac
}

# The workload's process ids, comma-separated (the JVM's and node's as they print them).
workload_pids() {
	local i
	local -a pids=()

	if [ "$1" = N ]; then
		pids=("${WL_PIDS[0]}")
	else
		for ((i = 0; i < PROCS; i++)); do pids+=("$(head -n 1 "$WORK/wl.$i")"); done
	fi
	(
		IFS=,
		echo "${pids[*]}"
	)
}

# The workload's processes to their end.
wait_workload() {
	local p rc=0

	for p in "${WL_PIDS[@]}"; do wait "$p" || rc=1; done
	WL_PIDS=()
	[ "$rc" = 0 ] || die "a workload process failed: $(cat "$WORK"/wl.*)"
	rm -f "$WORK"/wl.*
}

# ---- what a recording says -------------------------------------------------------

# bpfprof's peak RSS in MiB, from its -v line.
peak_rss_mib() {
	sed -n 's/.*bpfprof peak RSS \([0-9.]*\) \([KMG]\?i\?B\).*/\1 \2/p' "$1" | tail -n 1 |
		awk '{ m = $1; if ($2 == "KiB") m /= 1024; else if ($2 == "GiB") m *= 1024;
			else if ($2 == "B") m /= 1048576; printf "%.1f", m }'
}

# The share of user stacks that reach a thread root.
user_stacks_share() {
	sed -n 's/^bpfprof: user stacks: \([0-9.]*\)% of \([0-9]*\).*/\1/p' "$1" | tail -n 1
}

# runtime_share FILE LANG: "SHARE SAMPLES" of LANG's samples in its code that
# name one of its functions.
runtime_share() {
	sed -n 's/^bpfprof: runtime frames: //p' "$1" | tail -n 1 | tr ';' '\n' |
		awk -v lang="$2" '{ sub(/^ +/, "") } $1 == lang {
			i = $2 ~ /%$/ ? 2 : 3 # "Ruby 3.1 99.8% of N": a version before the share
			sub(/%/, "", $i); print $i, $(i + 2) }'
}

# All the samples of the recording.
all_samples() {
	sed -n 's/^bpfprof: \([0-9]*\) samples from .*/\1/p' "$1" | tail -n 1
}

# The context switches of the recording.
switches() {
	sed -n 's/^bpfprof: \([0-9]*\) context switches.*/\1/p' "$1" | tail -n 1
}

# ---- one recording -----------------------------------------------------------------

# Per configuration and round (read through median_of's nameref):
# shellcheck disable=SC2034
declare -A SMP SWI CPU RSS USTK RTSH RTN ALLS DEPTH
# shellcheck disable=SC2034,SC2119
run_config() {
	local c=$1 r=$2 ids t0 t1 cpu0 cpu1 table
	local -a before after

	enable_bpf_stats
	if [ "$PIDS_MODE" = 1 ]; then
		# The workload first, then bpfprof -p its processes: other
		# processes' samples end at on_sample's first test.
		start_workload "$c"
		start_bpfprof -p "$(workload_pids "$c")"
	else
		start_bpfprof -a
		start_workload "$c"
	fi
	mapfile -t ids < <(bpfprof_prog_ids "$PROF_PID")
	[ ${#ids[@]} -gt 0 ] || die "found no BPF programs among bpfprof's file descriptors"
	t0=$(now_ns)
	mapfile -t before < <(bpf_prog_stats "${ids[@]}")
	cpu0=$(proc_cpu_s "$PROF_PID")
	wait_workload
	cpu1=$(proc_cpu_s "$PROF_PID")
	mapfile -t after < <(bpf_prog_stats "${ids[@]}")
	t1=$(now_ns)
	if [ "$PIDS_MODE" = 1 ]; then wait_bpfprof; else stop_bpfprof; fi
	[ $((t1 - t0)) -ge 500000000 ] ||
		note "$c, round $((r + 1)): a window of $(calc "($t1 - $t0) / 1e9" %.2f) s only (bpfprof slow to start?)"
	restore_bpf_stats
	table=$(bpf_stats_table "$(((t1 - t0) * NCPU))" "${before[@]}" -- "${after[@]}")
	ALLS[$c,$r]=$(all_samples "$WORK/bpfprof.err")
	if [ "$PIDS_MODE" = 1 ]; then
		# BPF time over the workload's samples (bpfprof recorded only
		# those, from a few ms before the window): the other runs' early
		# returns are charged to them, a slight overestimate.
		SMP[$c,$r]=$(awk -v n="${ALLS[$c,$r]:-0}" '$1 == "on_sample" && n { printf "%.0f", $3 * 1e6 / n }' <<<"$table")
	else
		SMP[$c,$r]=$(awk '$1 == "on_sample" { print $4 }' <<<"$table")
	fi
	if [ "$PIDS_MODE" = 1 ]; then
		SWI[$c,$r]=$(awk -v n="$(switches "$WORK/bpfprof.err")" \
			'$1 ~ /^on_switch/ && n { printf "%.0f", $3 * 1e6 / n; exit }' <<<"$table")
	else
		SWI[$c,$r]=$(awk '$1 ~ /^on_switch/ { print $4; exit }' <<<"$table")
	fi
	CPU[$c,$r]=$(calc "($cpu1 - $cpu0) * 1e3 / (($t1 - $t0) / 1e9)" %.2f)
	RSS[$c,$r]=$(peak_rss_mib "$WORK/bpfprof.err")
	USTK[$c,$r]=$(user_stacks_share "$WORK/bpfprof.err")
	read -r "RTSH[$c,$r]" "RTN[$c,$r]" < <(runtime_share "$WORK/bpfprof.err" "${LANG_OF[$c]:-none}"; echo)
	read -r "DEPTH[$c,$r]" _ < <(python3 "$HERE/stack_depth.py" "$WORK/bpfprof.json.gz" "${PROC_NAME[$c]}")
	rm -f "$WORK/bpfprof.json.gz"
}

# median_of ARRAY CONFIG: the median over the rounds ('-' when none has a value).
median_of() {
	local -n arr=$1
	local r
	local -a xs=()

	for ((r = 0; r < ROUNDS; r++)); do
		[ -z "${arr[$2,$r]:-}" ] || xs+=("${arr[$2,$r]}")
	done
	if [ ${#xs[@]} -eq 0 ]; then echo -; else median "${xs[@]}"; fi
}

ratio_or_dash() {
	if [ "$1" = - ] || [ "$2" = - ]; then echo -; else calc "$1 / $2" %.2f; fi
}

# wait_bpfprof [TAG]: a bpfprof that ends by itself (its command or
# processes gone) waited for; dies when it wrote no profile.
wait_bpfprof() {
	local err=$WORK/${1:-bpfprof}.err

	if ! wait "$PROF_WRAP" || ! grep -q "$BPFPROF_DONE" "$err"; then
		sed 's/^/  /' "$err" >&2
		die "bpfprof did not write its profile"
	fi
	PROF_PID='' PROF_WRAP='' PROF_KIND=''
}

# ---- memory: one process -------------------------------------------------------------

# rss_one TAG CMD...: bpfprof -v -- CMD (that process alone); its peak RSS
# in MiB into ONE_RSS.
rss_one() {
	local tag=$1
	shift

	start_wrapped "rss-$tag" "$BPFPROF" -v --state-dir "$WORK/state" -F "$FREQ" -e cpu-clock \
		-o "$WORK/rss.json.gz" -- "$@"
	wait_bpfprof "rss-$tag"
	rm -f "$WORK/rss.json.gz"
	ONE_RSS=$(peak_rss_mib "$WORK/rss-$tag.err")
}

memory_one_process() {
	local n c jdk xint one=

	echo
	echo "== bpfprof's peak RSS recording one process, or four JVMs (bpfprof -v -- CMD, $WORK_SECONDS s) =="
	rss_one native "$WORK/cpu_work" -t 1 -s "$WORK_SECONDS"
	n=$ONE_RSS
	printf '%-38s %s MiB\n' "native cpu_work, 1 thread:" "$n"
	for c in J17 JI17 J25 JI25; do
		[[ " ${CONFIGS[*]} " == *" $c "* ]] || continue
		jdk=$JDK17
		[[ $c != *25 ]] || jdk=$JDK25
		xint=-Xint
		[[ $c == JI* ]] || xint=-Xshare:auto # the default: no flag of ours
		rss_one "$c" "$jdk/bin/java" "$xint" -cp "$WORK/classes-${c: -2}" JitHot "$WORK_SECONDS"
		printf '%-38s %s MiB (%s MiB)\n' "${LABEL[$c]:6}, 1 JVM:" "$ONE_RSS" "$(calc "$ONE_RSS - $n" %+.1f)"
		[ "$c" = J17 ] && one=$ONE_RSS
	done
	[ -n "$one" ] || return 0
	# More JVMs of the same JDK share libjvm.so's symbols and tables:
	# what each one past the first adds is the JVM's own state.
	# shellcheck disable=SC2016 # expanded by that sh
	rss_one J17x4 sh -c 'for i in 1 2 3 4; do "$0" -cp "$1" JitHot "$2" & done; wait' \
		"$JDK17/bin/java" "$WORK/classes-17" "$WORK_SECONDS"
	printf '%-38s %s MiB (%s MiB a JVM past the first)\n' "OpenJDK 17, JitHot, 4 JVMs:" "$ONE_RSS" \
		"$(calc "($ONE_RSS - $one) / 3" %+.1f)"
}

# ---- main ------------------------------------------------------------------------

main() {
	local r c rot order n sm sw

	parse_bench_args "--freq --procs --bpfprof-arg --configs" "--pids" "$@"
	is_uint "$FREQ" || die "--freq wants a positive integer, not '$FREQ'"
	bench_start runtimes "system-wide profiling and bpf_stats need it"
	[ -n "$PROCS" ] || PROCS=$NCPU
	is_uint "$PROCS" || die "--procs wants a positive integer, not '$PROCS'"
	WL_SECONDS=$WORK_SECONDS
	[ "$PIDS_MODE" = 0 ] || WL_SECONDS=$(calc "$WORK_SECONDS + $PIDS_LEAD" %.1f)
	command -v python3 >/dev/null 2>&1 || die "python3 is needed (bench/stack_depth.py)"
	command -v bpftool >/dev/null 2>&1 || die "bpftool is not installed (scripts/install-deps.sh installs it)"
	cc -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -pthread -o "$WORK/cpu_work" "$HERE/cpu_work.c" ||
		die "cannot compile $HERE/cpu_work.c"
	BPFPROF_ARGS=(-v -F "$FREQ" -e cpu-clock --state-dir "$WORK/state" -o "$WORK/bpfprof.json.gz"
		"${EXTRA_ARGS[@]}")
	echo "bpfprof runtime frames benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $(uname -n), kernel $(uname -r), $NCPU online CPUs; $PROCS workload processes" \
		"x $WORK_SECONDS s; cpu-clock at $FREQ Hz; ${EXTRA_ARGS[*]:+bpfprof ${EXTRA_ARGS[*]}; }load average $(cut -d' ' -f1-3 /proc/loadavg)"
	pick_configs
	echo "versions: $([ ! -x "$NODE" ] || echo "node $("$NODE" --version)")" \
		"$(for j in "$JDK17" "$JDK25"; do [ ! -x "$j/bin/java" ] ||
			printf '; %s' "$("$j/bin/java" -version 2>&1 | head -n 2 | tail -n 1)"; done)"

	if [ "$PIDS_MODE" = 1 ]; then
		echo "recording: bpfprof -p the workload's processes, started after them; BPF ns per sample" \
			"and per switch of theirs (the other runs' early returns charged to them)"
	else
		echo "recording: bpfprof -a; BPF ns per run of on_sample and of the switch program, all processes'"
	fi
	echo "== $ROUNDS rounds of ${CONFIGS[*]}, rotated; per run: on_sample ns, switch ns =="
	for ((r = 0; r < ROUNDS; r++)); do
		rot=$((r % ${#CONFIGS[@]}))
		order=("${CONFIGS[@]:rot}" "${CONFIGS[@]:0:rot}")
		for c in "${order[@]}"; do
			run_config "$c" "$r"
			sleep 0.3
		done
		printf '%-7s' "$((r + 1))/$ROUNDS"
		for c in "${CONFIGS[@]}"; do printf ' %s=%s/%s' "$c" "${SMP[$c,$r]:-?}" "${SWI[$c,$r]:-?}"; done
		echo
	done

	echo
	echo "== medians of $ROUNDS rounds (bpf_stats adds two clock reads per program run) =="
	printf '%-32s %9s %6s %9s %6s %6s %9s %8s %7s %s\n' configuration "sample ns" "vs N" "switch ns" "vs N" \
		frames "CPU ms/s" "RSS MiB" "rooted" "runtime frames named (samples in its code, of all)"
	n=$(median_of SMP N)
	sw=$(median_of SWI N)
	for c in "${CONFIGS[@]}"; do
		sm=$(median_of SMP "$c")
		printf '%-32s %9s %6s %9s %6s %6s %9s %8s %6s%%' "${LABEL[$c]}" "$sm" "$(ratio_or_dash "$sm" "$n")" \
			"$(median_of SWI "$c")" "$(ratio_or_dash "$(median_of SWI "$c")" "$sw")" \
			"$(median_of DEPTH "$c")" "$(median_of CPU "$c")" "$(median_of RSS "$c")" "$(median_of USTK "$c")"
		if [ -n "${LANG_OF[$c]:-}" ]; then
			printf ' %s %s%% (%s of %s)' "${LANG_OF[$c]}" "$(median_of RTSH "$c")" \
				"$(median_of RTN "$c")" "$(median_of ALLS "$c")"
		fi
		echo
	done
	echo "(frames: the workload's user frames per on-CPU sample, bench/stack_depth.py; rooted: the"
	echo " recording's user stacks reaching a thread root; RSS: bpfprof's peak; CPU: bpfprof's, per s recorded)"
	[ "$PIDS_MODE" = 0 ] || echo "(--pids: switch ns is the switch program's time over the workload's switches," \
		"others' early returns included: for N, which hardly switches, mostly theirs)"
	memory_one_process
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
}

main "$@"
