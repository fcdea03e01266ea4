# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the integration tests. The environment comes from ctest (see
# integration.cmake): BPFPROF, BURNER, FORKER (executables), CHECK_DIR
# (tests/check), CHECK_NODE_MODULES, NODE, TEST_OUT_DIR (this test's files,
# kept after the run for inspection).

set -u

: "${BPFPROF:?BPFPROF is not set}" "${BURNER:?}" "${FORKER:?}" "${CHECK_DIR:?}" "${TEST_OUT_DIR:?}"
NODE=${NODE:-node}
export CHECK_NODE_MODULES

log() {
	printf '%s\n' "$*"
}

fail() {
	printf 'FAIL %s\n' "$*"
	exit 1
}

ok() {
	printf 'ok   %s\n' "$*"
}

# CI=true (or any value but false/0) makes a missing privilege a failure: CI
# must run these tests, not skip them.
in_ci() {
	[ -n "${CI:-}" ] && [ "${CI}" != false ] && [ "${CI}" != 0 ]
}

# Loading BPF programs and opening perf events needs root. Exit 77 is ctest's
# SKIP_RETURN_CODE for these tests.
require_root() {
	if [ "$(id -u)" -eq 0 ]; then
		return
	fi
	if in_ci; then
		fail "integration tests need root (BPF programs, perf events) and CI=$CI is set; run ctest as root"
	fi
	log "SKIP integration tests need root (BPF programs, perf events); run ctest as root"
	exit 77
}

# A fresh directory for this test's files.
make_workdir() {
	WORK=$TEST_OUT_DIR
	rm -rf "$WORK"
	mkdir -p "$WORK" || fail "cannot create $WORK"
}

indent() {
	sed 's/^/     | /'
}

# run_bpfprof LIMIT_SECONDS ARGS...: runs bpfprof in the foreground, killed
# after LIMIT_SECONDS. Sets STATUS and ELAPSED; output in $WORK/bpfprof.out and
# $WORK/bpfprof.err. SIGINT/SIGTERM are reset to their defaults so the profiler
# sees what it would see when started from a terminal. BPFPROF_PREFIX (an
# array) may hold a command to run bpfprof under, such as setpriv.
BPFPROF_PREFIX=()
run_bpfprof() {
	local limit=$1 t0 t1
	shift
	log "\$ ${BPFPROF_PREFIX[*]}${BPFPROF_PREFIX[*]:+ }bpfprof $*"
	t0=$(date +%s%N)
	timeout --kill-after=5 "$limit" env --default-signal=INT,TERM "${BPFPROF_PREFIX[@]}" "$BPFPROF" "$@" \
		>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err"
	STATUS=$?
	t1=$(date +%s%N)
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	log "   exit status $STATUS after ${ELAPSED}s"
	if [ -s "$WORK/bpfprof.err" ]; then
		log "   stderr:"
		head -n 30 "$WORK/bpfprof.err" | indent
	fi
	if [ "$STATUS" -eq 124 ] || [ "$STATUS" -eq 137 ]; then
		fail "bpfprof did not finish within ${limit}s"
	fi
}

# wait_recording PID: until the background bpfprof PID says it records
# (however long loading its programs takes on a busy machine); fails if it
# exits first or takes 30 s. Its stderr is $WORK/bpfprof.err.
wait_recording() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "^bpfprof: recording" "$WORK/bpfprof.err" && return 0
		kill -0 "$1" 2>/dev/null || fail "bpfprof exited before it recorded: $(cat "$WORK/bpfprof.err")"
		sleep 0.05
	done
	fail "bpfprof did not start recording within 30 s"
}

expect_success() {
	if [ "$STATUS" -ne 0 ]; then
		fail "bpfprof exited with status $STATUS, expected 0"
	fi
	ok "bpfprof exited 0"
}

# start_burner SECONDS: starts the burner workload; sets BURNER_PID and
# BURNER_TIDS ("alpha=T,beta=T,sysc=T") once all its threads run under their
# final names.
start_burner() {
	local i line name tid
	# Emptied here, not by the background job's redirections: those run
	# later, and the loop below could read a previous burner's lines.
	: >"$WORK/burner.out"
	: >"$WORK/burner.err"
	"$BURNER" "$1" >"$WORK/burner.out" 2>"$WORK/burner.err" &
	BURNER_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(wc -l <"$WORK/burner.out")" -ge 4 ] && break
		kill -0 "$BURNER_PID" 2>/dev/null || fail "burner exited early: $(cat "$WORK/burner.err")"
		sleep 0.05
	done
	[ "$(head -n 1 "$WORK/burner.out")" = "$BURNER_PID" ] ||
		fail "burner did not print its pid $BURNER_PID: $(cat "$WORK/burner.out")"
	BURNER_TIDS=
	while read -r line name tid; do
		[ "$line" = thread ] && BURNER_TIDS+="${BURNER_TIDS:+,}$name=$tid"
	done <"$WORK/burner.out"
	log "burner running: pid $BURNER_PID, threads $BURNER_TIDS"
}

stop_burner() {
	if [ -n "${BURNER_PID:-}" ]; then
		kill "$BURNER_PID" 2>/dev/null
		wait "$BURNER_PID" 2>/dev/null
		BURNER_PID=
	fi
}

# node_check SCRIPT ARGS...: one of tests/check's scripts. Its output is
# printed whole, but a failure's FAIL lines come first: CI shows a failing
# test's first lines, and a check's report runs to hundreds of lines.
NODE_CHECKS=0
node_check() {
	local script=$1 out status
	shift
	NODE_CHECKS=$((NODE_CHECKS + 1))
	out="$WORK/check.$NODE_CHECKS.log"
	"$NODE" "$CHECK_DIR/$script" "$@" >"$out" 2>&1
	status=$?
	if [ "$status" -ne 0 ]; then
		printf '%s failed (exit status %s); its failures first, then its whole report:\n' \
			"$script" "$status"
		grep -E '^(FAIL|Error|    at )' "$out" | head -n 20
	fi
	cat "$out"
	return "$status"
}

# run_check SCENARIO ARGS...: the profile checks of tests/check/check.mjs.
run_check() {
	log "\$ check.mjs $*"
	node_check check.mjs "$@"
	local status=$?
	[ "$status" -eq 0 ] || fail "profile checks failed (check.mjs exit status $status)"
}

# ns_command MODE SETUP CMD...: sets NS_CMD to a command line that runs CMD
# in a private mount namespace (MODE mntns), or in addition in a new pid
# namespace with its own /proc (MODE pidns), as containers run their
# processes. SETUP (bash commands, under set -e) runs first in the private
# mount namespace but still in our pid namespace, with CMD as its positional
# parameters (it may take arguments of its own off their front with shift);
# the mounts it makes are seen by CMD and never by the host, and vanish with
# the namespace, so there is nothing to undo.
ns_command() {
	local mode=$1 setup=$2 run='exec "$@"'
	shift 2
	case $mode in
	mntns) ;;
	pidns) run='exec unshare --pid --fork --mount-proc -- "$@"' ;;
	*) fail "ns_command: unknown mode $mode (mntns or pidns)" ;;
	esac
	NS_CMD=(unshare --mount --propagation private -- bash -c "set -e; $setup; $run" ns-setup "$@")
}

# make_empty_dir DIR: an empty host directory that a namespace will mount
# over, so that a path under it exists only inside that namespace.
make_empty_dir() {
	mkdir -p "$1" || fail "cannot create $1"
	expect_empty_dir "$1"
}

# expect_empty_dir DIR: fails unless DIR is an empty directory, as the host
# sees it.
expect_empty_dir() {
	[ -d "$1" ] || fail "$1 is not a directory"
	[ -z "$(ls -A "$1")" ] || fail "$1 is not empty on the host: $(ls -A "$1" | head -n 5 | tr '\n' ' ')"
}

# Processes a test started in the background: killed at exit, whatever
# failed. A test with an EXIT trap of its own calls common_exit from it.
BACKGROUND_PIDS=()

# start_background NAME CMD...: runs CMD in the background with its output
# in $WORK/NAME.out (emptied first: the job's own redirections run after
# `&` returns, and a loop reading the file could see an earlier run's);
# sets BG_PID.
start_background() {
	local name=$1
	shift
	: >"$WORK/$name.out"
	"$@" >"$WORK/$name.out" 2>&1 &
	BG_PID=$!
	BACKGROUND_PIDS+=("$BG_PID")
}

# wait_output NAME REGEX: until the background job NAME ($WORK/NAME.out)
# printed a line matching REGEX (an extended regex); 60 s bound a hang only.
wait_output() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -Eq "$2" "$WORK/$1.out" && return 0
		sleep 0.05
	done
	fail "$1 did not print /$2/ within 60 s: $(head -c 2000 "$WORK/$1.out")"
}

# wait_grep REGEX FILE WHAT [PID]: until FILE holds a line matching REGEX (a
# basic regex); 60 s bound a hang only, then fails saying WHAT did not
# happen. With PID (the process writing FILE), it stops waiting once PID has
# ended, and the failure shows FILE's first lines.
wait_grep() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q "$1" "$2" 2>/dev/null && return 0
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			# It may have written the line just before it ended.
			grep -q "$1" "$2" 2>/dev/null && return 0
			break
		fi
		sleep 0.05
	done
	[ -z "${4:-}" ] || head -n 40 "$2" | indent
	fail "$3"
}

# wait_nanosleep TID: until the thread TID sleeps in nanosleep (its wait
# channel), so that a recording started next begins with it asleep.
wait_nanosleep() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q nanosleep "/proc/$1/wchan" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "thread $1 is not in nanosleep after 60 s (wchan $(cat "/proc/$1/wchan" 2>&1))"
}

# wait_view_serving PID: until the `bpfprof view` (or --view) PID, whose
# stderr is $WORK/view.err, says it serves; sets URL (http://ADDR:PORT/SECRET/NAME).
wait_view_serving() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q '^bpfprof: serving ' "$WORK/view.err" && break
		kill -0 "$1" 2>/dev/null || fail "bpfprof exited: $(cat "$WORK/view.err")"
		sleep 0.05
	done
	URL=$(sed -n 's/^bpfprof: serving .* at \(http:[^ ]*\) until Ctrl-C$/\1/p' "$WORK/view.err")
	[ -n "$URL" ] || fail "bpfprof view printed no URL: $(cat "$WORK/view.err")"
}

# start_recording_all OUT [ARGS...]: `bpfprof -a -o OUT ARGS` in the
# background, as from a terminal (SIGINT and SIGTERM at their defaults),
# until it says it records; sets BPFPROF_PID. Its stderr is
# $WORK/bpfprof.err.
start_recording_all() {
	local out=$1
	shift
	log "\$ bpfprof -a -o $out $* &"
	: >"$WORK/bpfprof.err"
	env --default-signal=INT,TERM "$BPFPROF" -a -o "$out" "$@" >"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPFPROF_PID=$!
	# A failure below must not leave a system-wide recording running (one did, for an hour).
	BACKGROUND_PIDS+=("$BPFPROF_PID")
	wait_recording "$BPFPROF_PID"
}

# hold_connections DIR PORT N RUNNER...: another user, run through RUNNER
# (setpriv ... or the like), keeps N connections to 127.0.0.1:PORT open or
# opening (hold_connections.js, copied into DIR, which that user can read);
# returns once N were made, with $WORK/hold.out saying how it goes; sets
# HOLD_PID.
hold_connections() {
	local dir=$1 port=$2 n=$3 i made
	shift 3
	cp "$(dirname "${BASH_SOURCE[0]}")/hold_connections.js" "$dir/hold.js" && chmod 644 "$dir/hold.js" ||
		fail "cannot copy hold_connections.js into $dir"
	(ulimit -n 8192 && exec "$@" "$NODE" "$dir/hold.js" "$port" "$n") >"$WORK/hold.out" 2>&1 &
	HOLD_PID=$!
	BACKGROUND_PIDS+=("$HOLD_PID")
	for ((i = 0; i < 200; i++)); do
		made=$(tail -n 1 "$WORK/hold.out" | sed -n 's/.* made \([0-9]*\).*/\1/p')
		[ "${made:-0}" -ge "$n" ] && break
		sleep 0.1
	done
	log "the user: $(tail -n 1 "$WORK/hold.out")"
	[ "${made:-0}" -ge "$n" ] || fail "the user did not get $n connections: $(tail -n 3 "$WORK/hold.out")"
}

common_exit() {
	local pid
	for pid in "${BACKGROUND_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	stop_burner
}

trap common_exit EXIT
