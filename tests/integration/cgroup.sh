#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -a --cgroup DIR` (issue 6): only the tasks inside the cgroup DIR or
# its descendants are profiled, decided per task in the kernel at each event.
#
# A cgroup v2 directory bpfprof-test-PID with a child cgroup, and around a
# recording that the test ends (SIGINT) once every workload has done what
# the checks look for, measured by the workloads' own clocks, not by a
# duration a busy machine can eat:
#   outside   the burner workload (three busy threads) in the test's own
#             cgroup for the whole recording: must not appear at all
#   forker    started in the parent cgroup once bpfprof records; it forks
#             bpfprof-child, which must be profiled as well
#   cg-inner  a burner started in the child cgroup once bpfprof records
#   cg-mover  a burner started outside before the recording and moved into
#             the child cgroup once it has burned BURN_CPU_MS outside while
#             recorded: samples only after the move
#   cg-leaver a burner started in the child cgroup before the recording and
#             moved out to the test's cgroup once it has burned BURN_CPU_MS
#             inside while recorded: samples only before the move (but a
#             wait that began inside may be shown until it ended, which was
#             before the test saw it burn again)
#   cg-waiter a sleeper in the parent cgroup, woken every 20 ms through a
#             FIFO by cg-ticker, outside: its waits must name their waker,
#             which the kernel reports while the waker runs, so the filter
#             has to test the cgroup of a task that is not running
# Each burner inside burns BURN_CPU_MS there (its CPU time, from
# /proc/PID/schedstat) before the recording ends, the forker, its child and
# cg-inner are then ended (their exits recorded), and the waiter has slept
# WOKEN_WAIT times (its voluntary context switches).
# The moves are made by tests/workloads/cgroup_worker.c, which brackets the
# write(2) to cgroup.procs with CLOCK_MONOTONIC, the profile's clock
# (meta.startTimeAsClockMonotonicNanosecondsSinceBoot). The test writes what
# it did as "cgroup truth" lines, and tests/check/cgroup_checks.mjs judges the
# profile against them, on the file and through the Firefox Profiler's loader.
#
#   cgroup.sh default    the programs bpfprof picks (tp_btf; the kfunc
#                        bpf_task_under_cgroup when the kernel has it and the
#                        BPF object was built with clang 15 or later)
#   cgroup.sh raw_tp     BPFPROF_FORCE_RAW_TP=1: raw_tp programs, where the
#                        cgroup of a task that is not current is found by a
#                        CO-RE walk of its cgroup's ancestors
#   cgroup.sh no_kfunc   BPFPROF_CGROUP_NO_KFUNC=1: tp_btf programs without the
#                        kfunc, the same walk; the cgroup is given relative to
#                        the v2 root instead of as an absolute path
#
# With -v bpfprof names the programs it chose; the test checks that the
# variant ran what it is named after.
#
# Whatever happens, the EXIT trap kills the workloads, moves anything left in
# the test's cgroups to the v2 root and removes them.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cgroup_common.sh"
: "${CGROUP_WORKER:?CGROUP_WORKER is not set}"
require_root
make_workdir
require_cgroup_v2

VARIANT=${1:-default}
BPFPROF_ENV=()
case $VARIANT in
default) ;;
raw_tp) BPFPROF_ENV=(BPFPROF_FORCE_RAW_TP=1) ;;
no_kfunc) BPFPROF_ENV=(BPFPROF_CGROUP_NO_KFUNC=1) ;;
*) fail "usage: cgroup.sh default|raw_tp|no_kfunc (got '$VARIANT')" ;;
esac

# What the checks need of each workload (tests/check/cgroup_checks.mjs:
# BURN_CPU_MS, four times MIN_SAMPLES at 999 Hz; WOKEN_WAIT, twice
# MIN_WOKEN). The workloads run until the test ends them (50 min at most:
# a loaded machine may take minutes to start the recording).
BURN_CPU_MS=200
WOKEN_WAIT=100
LONG_SECONDS=3000
TICK_MS=20
# Only catch a hang: the workloads' CPU and sleeps, however slow they come,
# are what the test waits for (from the recording's start), and bpfprof's
# start on a loaded machine may take a minute.
HANG_SECONDS=120
BPFPROF_LIMIT=240

NAME=bpfprof-test-$$
CG_PATH=/$NAME
CHILD_PATH=$CG_PATH/child
CG=$V2$CG_PATH
CHILD=$V2$CHILD_PATH
# The test's own cgroup: the outside processes stay there and the leaver
# goes back to it.
HOME_PATH=$(cgroup_of $$)
[ -n "$HOME_PATH" ] || fail "no cgroup v2 line (0::) in /proc/$$/cgroup"
HOME_DIR=$V2${HOME_PATH%/}
TRUTH=$WORK/truth.txt
PIDS=()
BPFPROF_PID=

# ---- cleanup, even after a failure ----------------------------------------------

kill_started() {
	local pid
	if [ -n "$BPFPROF_PID" ]; then
		kill -KILL "$BPFPROF_PID" 2>/dev/null
		wait "$BPFPROF_PID" 2>/dev/null
		BPFPROF_PID=
	fi
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	PIDS=()
	stop_burner
}

# Moves whatever is still in DIR to the v2 root, then removes DIR; a dying
# task may keep it busy for a moment.
remove_cgroup() {
	local dir=$1 pid i
	[ -d "$dir" ] || return 0
	for ((i = 0; i < 50; i++)); do
		while read -r pid; do
			echo "$pid" >"$V2/cgroup.procs" 2>/dev/null
		done <"$dir/cgroup.procs"
		rmdir "$dir" 2>/dev/null && return 0
		sleep 0.1
	done
	log "warning: could not remove $dir: $(tr '\n' ' ' <"$dir/cgroup.procs")"
}

cleanup() {
	kill_started
	remove_cgroup "$CHILD"
	remove_cgroup "$CG"
}
trap cleanup EXIT

# ---- starting and moving workloads -------------------------------------------

# start_in DIR TAG CMD...: runs CMD as a process of the cgroup DIR: a shell
# joins DIR, then execs CMD, which keeps its pid. Sets STARTED_PID; its
# output goes to $WORK/TAG.out and .err.
start_in() {
	local dir=$1 tag=$2
	shift 2
	# shellcheck disable=SC2016 # expanded by the inner shell
	sh -c 'echo $$ >"$1/cgroup.procs" || exit 111; shift; exec "$@"' cgroup-join "$dir" "$@" \
		>"$WORK/$tag.out" 2>"$WORK/$tag.err" &
	STARTED_PID=$!
	PIDS+=("$STARTED_PID")
}

# wait_output TAG PID REGEX: waits until the first line of TAG's stdout
# matches REGEX (the workload runs its own code by then); sets LINE to it.
wait_output() {
	local tag=$1 pid=$2 re=$3 i
	for ((i = 0; i < 200; i++)); do
		LINE=$(head -n 1 "$WORK/$tag.out")
		[[ $LINE =~ $re ]] && return
		kill -0 "$pid" 2>/dev/null || fail "$tag ($pid) exited early: $(cat "$WORK/$tag.err")"
		sleep 0.025
	done
	fail "$tag ($pid) printed no line matching /$re/ within 5 s: $(head -n 3 "$WORK/$tag.out")"
}

# start_worker DIR COMM ARGS...: cgroup_worker ARGS as a process named COMM,
# in DIR (or, when DIR is empty, in the test's cgroup). Sets STARTED_PID
# once it runs its own code.
start_worker() {
	local dir=$1 comm=$2
	shift 2
	if [ -n "$dir" ]; then
		start_in "$dir" "$comm" "$WORK/bin/$comm" "$@"
	else
		"$WORK/bin/$comm" "$@" >"$WORK/$comm.out" 2>"$WORK/$comm.err" &
		STARTED_PID=$!
		PIDS+=("$STARTED_PID")
	fi
	wait_output "$comm" "$STARTED_PID" '^[0-9]+$'
	[ "$LINE" = "$STARTED_PID" ] || fail "$comm printed pid $LINE, but it is $STARTED_PID"
}

# expect_in PID COMM PATH: PID runs as COMM in the cgroup PATH. A forked
# child names itself just after the fork, so its name may take a moment.
expect_in() {
	local pid=$1 comm=$2 path=$3 got i
	for ((i = 0; i < 100; i++)); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] && break
		sleep 0.01
	done
	got=$(cat "/proc/$pid/comm" 2>/dev/null)
	[ "$got" = "$comm" ] || fail "pid $pid is '$got', expected '$comm'"
	got=$(cgroup_of "$pid")
	[ "$got" = "$path" ] || fail "$comm ($pid) is in cgroup '$got', expected '$path'"
}

# cpu_ns PID: the CPU time PID's (main) thread has used, in ns, by its own
# clock (the first field of /proc/PID/schedstat); fails once it is gone.
cpu_ns() {
	local ns
	read -r ns _ <"/proc/$1/schedstat" 2>/dev/null && [ -n "$ns" ] && echo "$ns"
}

# sleeps PID: how many times PID has gone to sleep (voluntary context switches).
sleeps() {
	awk '$1 == "voluntary_ctxt_switches:" { print $2; found = 1 } END { exit !found }' "/proc/$1/status" 2>/dev/null
}

# before_hang WHAT: fails once HANG_DEADLINE has passed.
before_hang() {
	[ "$SECONDS" -lt "$HANG_DEADLINE" ] || fail "$1 within $HANG_SECONDS s: hung"
}

# wait_cpu PID FROM_NS WHAT: waits until PID has used BURN_CPU_MS of CPU
# since it had used FROM_NS.
wait_cpu() {
	local pid=$1 from=$2 what=$3 now
	while :; do
		now=$(cpu_ns "$pid") || fail "$what ($pid) ended before it burned $BURN_CPU_MS ms of CPU"
		[ $((now - from)) -ge $((BURN_CPU_MS * 1000000)) ] && break
		before_hang "$what ($pid) did not burn $BURN_CPU_MS ms of CPU ($(((now - from) / 1000000)) ms)"
		sleep 0.02
	done
	log "$what ($pid) burned $(((now - from) / 1000000)) ms of CPU"
}

# wait_ran PID FROM_NS: waits until PID's CPU time has grown past FROM_NS,
# then writes "cgroup truth ran PID NOW": a wait PID was in at FROM_NS had
# ended by then.
wait_ran() {
	local pid=$1 from=$2 now
	while :; do
		now=$(cpu_ns "$pid") || fail "process $pid ended"
		[ "$now" -gt "$from" ] && break
		before_hang "process $pid did not run"
		sleep 0.01
	done
	echo "cgroup truth ran $pid $("$CGROUP_WORKER" now)" >>"$TRUTH"
}

# end_processes PID...: ends the PIDs (SIGTERM) and waits until they have
# gone (a child is reaped once its parent has gone too), while the
# recording goes on: their exits are recorded too.
end_processes() {
	local pid
	kill -TERM "$@" 2>/dev/null
	for pid in "$@"; do
		wait "$pid" 2>/dev/null
		while [ -e "/proc/$pid" ]; do
			before_hang "process $pid did not end"
			sleep 0.02
		done
	done
}

# move PID DIR TRUTH_KIND PATH: moves PID to the cgroup DIR; the times the
# worker measured around the write go to the truth file.
move() {
	local pid=$1 dir=$2 kind=$3 path=$4 out
	out=$("$CGROUP_WORKER" move "$pid" "$dir") || fail "could not move $pid to $dir"
	log "$out"
	[[ $out =~ between\ ([0-9]+)\ and\ ([0-9]+)$ ]] || fail "unexpected output of cgroup_worker move: $out"
	echo "cgroup truth $kind $pid $path ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}" >>"$TRUTH"
}

# ---- the recording ------------------------------------------------------------

# A read-only or undelegated cgroup v2 tree (some containers) cannot host
# the test: skipped like a missing privilege, a failure when CI is set.
if ! mkdir "$CG" 2>"$WORK/mkdir.err"; then
	in_ci && fail "cannot create the cgroup $CG: $(cat "$WORK/mkdir.err")"
	log "SKIP cannot create the cgroup $CG: $(cat "$WORK/mkdir.err")"
	exit 77
fi
mkdir "$CHILD" || fail "cannot create the cgroup $CHILD"
CG_ID=$(stat -c %i "$CG") || fail "cannot stat $CG"
log "cgroups $CG (id $CG_ID) and $CHILD; the test runs in $HOME_PATH"
mkdir "$WORK/bin" || fail "cannot create $WORK/bin"
for comm in cg-inner cg-mover cg-leaver cg-waiter cg-ticker; do
	ln -s "$CGROUP_WORKER" "$WORK/bin/$comm" || fail "cannot link $WORK/bin/$comm"
done

# Before the recording: the outside burner, the mover (outside for now) and
# the leaver (inside for now).
start_burner "$LONG_SECONDS"
expect_in "$BURNER_PID" bpfprof-burner "$HOME_PATH"
start_worker "" cg-mover burn "$LONG_SECONDS"
MOVER_PID=$STARTED_PID
expect_in "$MOVER_PID" cg-mover "$HOME_PATH"
start_worker "$CHILD" cg-leaver burn "$LONG_SECONDS"
LEAVER_PID=$STARTED_PID
expect_in "$LEAVER_PID" cg-leaver "$CHILD_PATH"
# A sleeper inside, woken every TICK_MS by a ticker outside through a FIFO.
mkfifo "$WORK/ticks" || fail "cannot create the FIFO $WORK/ticks"
start_worker "$CG" cg-waiter wait "$WORK/ticks"
WAITER_PID=$STARTED_PID
start_worker "" cg-ticker tick "$TICK_MS" "$LONG_SECONDS" "$WORK/ticks"
TICKER_PID=$STARTED_PID
expect_in "$WAITER_PID" cg-waiter "$CG_PATH"
expect_in "$TICKER_PID" cg-ticker "$HOME_PATH"
ok "outside: burner $BURNER_PID, cg-mover $MOVER_PID and cg-ticker $TICKER_PID in $HOME_PATH; inside:" \
	"cg-leaver $LEAVER_PID in $CHILD_PATH, cg-waiter $WAITER_PID in $CG_PATH"

# Relative to the v2 root in one variant, absolute in the others.
CG_ARG=$CG
[ "$VARIANT" = no_kfunc ] && CG_ARG=$NAME
OUT=$WORK/cgroup.json.gz
# -v: bpfprof says which programs and which cgroup test it chose.
log "\$ ${BPFPROF_ENV[*]}${BPFPROF_ENV[*]:+ }bpfprof -v -a --cgroup $CG_ARG -o $OUT  (in the background, until SIGINT)"
timeout --kill-after=5 "$BPFPROF_LIMIT" env --default-signal=INT,TERM "${BPFPROF_ENV[@]}" "$BPFPROF" \
	-v -a --cgroup "$CG_ARG" -o "$OUT" >"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
BPFPROF_PID=$!
# Without a terminal on stderr, bpfprof says "recording" once it records.
for ((i = 0; i < 600; i++)); do
	grep -q '^bpfprof: recording' "$WORK/bpfprof.err" && break
	kill -0 "$BPFPROF_PID" 2>/dev/null || break
	sleep 0.05
done
grep -q '^bpfprof: recording' "$WORK/bpfprof.err" || {
	indent <"$WORK/bpfprof.err"
	fail "bpfprof did not start recording"
}
log "$(grep '^bpfprof: recording' "$WORK/bpfprof.err") ($SECONDS s into the test)"
HANG_DEADLINE=$((SECONDS + HANG_SECONDS))
MOVER_FROM=$(cpu_ns "$MOVER_PID") || fail "cg-mover ($MOVER_PID) ended before the recording began"
LEAVER_FROM=$(cpu_ns "$LEAVER_PID") || fail "cg-leaver ($LEAVER_PID) ended before the recording began"
WAITER_FROM=$(sleeps "$WAITER_PID") || fail "cg-waiter ($WAITER_PID) ended before the recording began"

{
	echo "cgroup truth filter $CG_PATH $CG_ID"
	echo "cgroup truth started $("$CGROUP_WORKER" now)"
} >"$TRUTH"
start_in "$CG" forker "$FORKER" "$LONG_SECONDS"
FORKER_PID=$STARTED_PID
wait_output forker "$FORKER_PID" '^forker parent [0-9]+ child [0-9]+$'
read -r _ _ parent _ child <<<"$LINE"
[ "$parent" = "$FORKER_PID" ] || fail "forker says it is $parent, expected $FORKER_PID"
CHILD_PID=$child
start_worker "$CHILD" cg-inner burn "$LONG_SECONDS"
INNER_PID=$STARTED_PID
expect_in "$FORKER_PID" forker "$CG_PATH"
expect_in "$CHILD_PID" bpfprof-child "$CG_PATH"
expect_in "$INNER_PID" cg-inner "$CHILD_PATH"
ok "inside, started while recording: forker $FORKER_PID and its child $CHILD_PID in $CG_PATH, cg-inner $INNER_PID in $CHILD_PATH"

# The mover burns outside while recorded (samples the filter must drop),
# then moves in; the leaver burns inside, then moves out.
wait_cpu "$MOVER_PID" "$MOVER_FROM" "cg-mover, outside"
move "$MOVER_PID" "$CHILD" moved_in "$CHILD_PATH"
MOVER_IN=$(cpu_ns "$MOVER_PID") || fail "cg-mover ended"
expect_in "$MOVER_PID" cg-mover "$CHILD_PATH"
wait_cpu "$LEAVER_PID" "$LEAVER_FROM" "cg-leaver, inside"
move "$LEAVER_PID" "$HOME_DIR" moved_out "$HOME_PATH"
LEAVER_OUT=$(cpu_ns "$LEAVER_PID") || fail "cg-leaver ended"
expect_in "$LEAVER_PID" cg-leaver "$HOME_PATH"
wait_ran "$LEAVER_PID" "$LEAVER_OUT"
ok "cg-mover moved into $CHILD_PATH, cg-leaver out to $HOME_PATH, both while recording"
# What the checks count, burned where it is counted.
wait_cpu "$LEAVER_PID" "$LEAVER_OUT" "cg-leaver, outside"
wait_cpu "$MOVER_PID" "$MOVER_IN" "cg-mover, inside"
wait_cpu "$FORKER_PID" 0 "forker"
wait_cpu "$CHILD_PID" 0 "bpfprof-child"
wait_cpu "$INNER_PID" 0 "cg-inner"
end_processes "$CHILD_PID" "$FORKER_PID" "$INNER_PID"
while now=$(sleeps "$WAITER_PID") && [ $((now - WAITER_FROM)) -lt "$WOKEN_WAIT" ]; do
	before_hang "cg-waiter ($WAITER_PID) did not sleep $WOKEN_WAIT times ($((now - WAITER_FROM)))"
	sleep 0.05
done
[ -n "$now" ] || fail "cg-waiter ($WAITER_PID) ended"
ok "forker, its child and cg-inner burned $BURN_CPU_MS ms each and ended; cg-waiter slept $((now - WAITER_FROM)) times ($SECONDS s into the test)"

# To bpfprof itself: timeout would pass SIGINT on to its process group as
# well, and a second SIGINT makes bpfprof abort.
RECORDER_PID=$(ps -o pid= --ppid "$BPFPROF_PID" | tr -d ' ')
[ -n "$RECORDER_PID" ] || fail "bpfprof (under timeout $BPFPROF_PID) is gone"
kill -INT "$RECORDER_PID"
wait "$BPFPROF_PID"
STATUS=$?
BPFPROF_PID=
log "   exit status $STATUS"
indent <"$WORK/bpfprof.err"
if [ "$STATUS" -eq 124 ] || [ "$STATUS" -eq 137 ]; then
	fail "bpfprof did not finish within $BPFPROF_LIMIT s"
fi
expect_success
# The variant ran the programs it is named after: the switch program's
# flavour, and how the cgroup of a task that is not running is tested
# (raw_tp programs cannot call kfuncs: they always walk the ancestors).
SWITCH_PROG=$(grep -o 'sched_switch: .* program' "$WORK/bpfprof.err" | head -n 1)
CG_TEST=$(grep -o 'other tasks tested with .*' "$WORK/bpfprof.err" | head -n 1)
if [ -z "$SWITCH_PROG" ] || [ -z "$CG_TEST" ]; then
	fail "bpfprof -v did not say which sched_switch program and cgroup test it used"
fi
case $VARIANT in
raw_tp) [[ $SWITCH_PROG == *raw_tp* ]] ;;
no_kfunc) [[ $SWITCH_PROG == *tp_btf* && $CG_TEST == *ancestors* ]] ;;
default) true ;;
esac || fail "the $VARIANT variant used '$SWITCH_PROG', '$CG_TEST'"
ok "programs: $SWITCH_PROG; $CG_TEST"
# The outside processes were running the whole time: they are absent
# because of the filter, not because they had gone.
for pid in "$BURNER_PID" "$MOVER_PID" "$LEAVER_PID" "$TICKER_PID" "$WAITER_PID"; do
	kill -0 "$pid" 2>/dev/null || fail "process $pid ended before the recording did"
done

{
	echo "cgroup truth inside $FORKER_PID forker $CG_PATH parent_burn"
	echo "cgroup truth inside $CHILD_PID bpfprof-child $CG_PATH child_burn"
	echo "cgroup truth inside $INNER_PID cg-inner $CHILD_PATH cgroup_burn"
	echo "cgroup truth inside $MOVER_PID cg-mover $CHILD_PATH cgroup_burn"
	echo "cgroup truth inside $LEAVER_PID cg-leaver $CHILD_PATH cgroup_burn"
	echo "cgroup truth inside $WAITER_PID cg-waiter $CG_PATH -"
	echo "cgroup truth forked $CHILD_PID $FORKER_PID"
	echo "cgroup truth woken $WAITER_PID $TICKER_PID"
	echo "cgroup truth outside $TICKER_PID cg-ticker"
	echo "cgroup truth outside $BURNER_PID bpfprof-burner"
	echo "cgroup truth outside $$ $(cat /proc/$$/comm)"
} >>"$TRUTH"
kill_started
log "what the test did:"
indent <"$TRUTH"

log "\$ cgroup_checks.mjs --profile $OUT --truth $TRUTH"
node_check cgroup_checks.mjs --profile "$OUT" --gzip --truth "$TRUTH"
status=$?
[ "$status" -eq 0 ] || fail "cgroup checks failed (cgroup_checks.mjs exit status $status)"
