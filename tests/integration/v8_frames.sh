#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# node's JS frames named with no flags (issue 39): node runs hot.js (three
# nested hot functions) and v8_probe, as bpfprof will, reads V8's metadata
# from node's file, takes the code ranges and fp offsets BPF captures,
# interrupts node's main thread PROBES times and names each V8 frame of its
# rbp chain from the words at those offsets. In most probes (more than
# half: the workload spends nearly all its time in the three functions;
# V8's optimizer and node's event loop take the rest) all three functions
# must be named, innermost first, with hot.js's absolute path and a line
# in each one's own body, read from hot.js itself: with no flags (V8's
# optimized code, the functions inlined), and with flags that keep them
# interpreted, or in baseline (Sparkplug) code. Then as a throw-away user
# running a node of their own (as nvm installs one): the user's file is
# read, not mapped, and names the same; and once the user has faked its
# metadata (SmiShiftSize 0, as pointer compression has it), it is refused
# at once with that reason.
#
# V8_PROBE comes from ctest; NODE defaults to `command -v node`, HOT_JS to
# tests/workloads/hot.js next to this script.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
require_root
make_workdir

: "${V8_PROBE:?V8_PROBE is not set}"
NODE_BIN=$(command -v "${NODE:-node}") || fail "node is not installed; it runs the workload"
HOT_JS=${HOT_JS:-$(cd "$(dirname "$0")/../workloads" && pwd)/hot.js}
PROBES=12
NODE_PID=
# shellcheck disable=SC2016 # expanded when the cleanup runs
HOSTILE_CLEANUP+=('[ -n "$NODE_PID" ] && kill -KILL "$NODE_PID" 2>/dev/null')

# Each function's body: from its own line to the next one's.
body() {
	local first last
	first=$(grep -n "^function $1(" "$HOT_JS" | cut -d: -f1)
	last=$(grep -n "^function $2(" "$HOT_JS" | cut -d: -f1)
	[ -n "$first" ] && [ -n "$last" ] || fail "$HOT_JS is not the workload this test knows"
	echo "$first $last"
}
read -r INNER_FIRST INNER_END < <(body bpfprofJsInner bpfprofJsMiddle)
read -r MIDDLE_FIRST MIDDLE_END < <(body bpfprofJsMiddle bpfprofJsOuter)
read -r OUTER_FIRST OUTER_END < <(body bpfprofJsOuter tick)

# start_hot NAME COMMAND...: runs COMMAND (node on hot.js, given 30 s) in
# the background; NODE_PID is the pid hot.js prints.
start_hot() {
	local name=$1 i
	shift
	"$@" 30 >"$WORK/$name.out" 2>"$WORK/$name.err" &
	for ((i = 0; i < 200; i++)); do
		[ -s "$WORK/$name.out" ] && break
		sleep 0.05
	done
	NODE_PID=$(head -n 1 "$WORK/$name.out")
	[[ $NODE_PID =~ ^[0-9]+$ ]] || fail "$name: hot.js did not start: $(cat "$WORK/$name.err")"
}

# probe_tier NAME AT_FIRST COMMAND...: node runs hot.js (HOT_FILE) by
# COMMAND, with its flags (none: V8's own choice, optimized code), probed
# PROBES times. With AT_FIRST 1, the innermost function's first line counts
# as in its body: a baseline frame interrupted in a builtin that its code
# called without a frame of its own (an operation's stub) is named by its
# function's first line, its pc being the builtin's; its callers' lines
# come from their return addresses.
probe_tier() {
	local name=$1 at_first=$2 named=0 frames i m o
	shift 2
	start_hot "$name" "$@"
	# V8 compiles the functions within their first few hundred calls (milliseconds).
	sleep 1

	log "\$ v8_probe $NODE_PID $PROBES ($name: $* ($("$NODE_BIN" --version)))"
	"$V8_PROBE" "$NODE_PID" "$PROBES" >"$WORK/$name.probe" 2>"$WORK/probe.err"
	status=$?
	kill -KILL "$NODE_PID"
	wait_gone "$NODE_PID" 10 || fail "$name: node $NODE_PID outlived SIGKILL"
	NODE_PID=
	grep -E '^(range|offsets|probe 0)|^js .*hot\.js' "$WORK/$name.probe" | head -n 12 | indent
	[ "$status" -eq 0 ] || fail "$name: v8_probe failed (exit status $status): $(cat "$WORK/probe.err")"
	grep -q '^offsets -8 -16 -40 -32$' "$WORK/$name.probe" ||
		fail "the fp offsets are not node 20's (context -8, function -16, bytecode offset -40, bytecode array -32)"

	# Per probe: its JS frames of hot.js, in order, as "name:line".
	for ((p = 0; p < PROBES; p++)); do
		frames=$(awk -v p="$p" -v f="$HOT_FILE" '
			/^probe / { on = ($2 == p); next }
			on && /^js / { split($3, a, ":"); if (a[1] == f) printf "%s:%s ", $2, a[2] }' "$WORK/$name.probe")
		if [[ $frames =~ bpfprofJsInner:([0-9]+)\ bpfprofJsMiddle:([0-9]+)\ bpfprofJsOuter:([0-9]+) ]]; then
			i=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]} o=${BASH_REMATCH[3]}
			if ((i + at_first > INNER_FIRST && i < INNER_END && m > MIDDLE_FIRST &&
				m < MIDDLE_END && o > OUTER_FIRST && o < OUTER_END)); then
				named=$((named + 1))
			else
				log "$name: probe $p: lines out of the functions' bodies: $frames"
			fi
		else
			log "$name: probe $p: not all three named: $frames"
		fi
	done
	((named * 2 > PROBES)) || fail "$name: only $named of $PROBES probes name bpfprofJsInner <- bpfprofJsMiddle <- bpfprofJsOuter in $HOT_FILE with their lines"
	ok "$name: $named of $PROBES probes name the three nested functions, innermost first, with $HOT_FILE and lines in their bodies"
}

HOT_FILE=$HOT_JS
probe_tier optimized 0 "$NODE_BIN" "$HOT_JS"
probe_tier interpreted 0 "$NODE_BIN" --no-opt --no-sparkplug "$HOT_JS"
probe_tier baseline 1 "$NODE_BIN" --no-opt --always-sparkplug "$HOT_JS"

# A user's own node: their file, read (not mapped), names as root's does.
make_hostile_user
install -m 0755 -o "$USER_NAME" "$NODE_BIN" "$USER_DIR/node" || fail "cannot copy node for the user"
install -m 0644 -o "$USER_NAME" "$HOT_JS" "$USER_DIR/hot.js" || fail "cannot copy hot.js for the user"
HOT_FILE=$USER_DIR/hot.js
probe_tier user_node 0 as_user_in_dir "$USER_DIR/node" "$USER_DIR/hot.js"

# The user fakes their node's metadata: a tagging we do not read, refused
# with its reason. (The file is theirs to write; the test writes it as root
# only because its python may be root's alone.)
python3 "$(dirname "$0")/elf_patch_sym.py" "$USER_DIR/node" v8dbg_SmiShiftSize 0 2>"$WORK/patch.err" ||
	fail "cannot patch the user's node: $(cat "$WORK/patch.err")"
start_hot user_faked as_user_in_dir "$USER_DIR/node" "$USER_DIR/hot.js"
timeout 20 "$V8_PROBE" "$NODE_PID" 1 >"$WORK/faked.probe" 2>"$WORK/faked.err"
status=$?
indent <"$WORK/faked.err"
kill -KILL "$NODE_PID"
NODE_PID=
[ "$status" -eq 1 ] || fail "the faked node was not refused (v8_probe's exit status $status)"
grep -q 'SmiShiftSize 0 (pointer compression' "$WORK/faked.err" ||
	fail "the faked node was refused without its reason"
ok "a node whose metadata says SmiShiftSize 0 is refused, and says why"
