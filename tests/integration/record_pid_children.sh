#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -p PID` follows the children PID forks while it records, as perf
# does with inherited events: forker waits for SIGUSR1, which comes once
# bpfprof records, then forks a child that burns child_burn. The profile has
# both processes, each with its own work, and nothing else; it ends when the
# parent is gone. With --no-inherit the child is not in it.
#
# Usage: record_pid_children.sh inherit|no_inherit
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: record_pid_children.sh inherit|no_inherit}
extra=()
[ "$MODE" = no_inherit ] && extra=(--no-inherit)

"$FORKER" 1.5 --wait-signal >"$WORK/forker.out" 2>&1 &
fpid=$!
for ((i = 0; i < 200; i++)); do
	grep -q '^forker waiting' "$WORK/forker.out" && break
	sleep 0.05
done
grep -q "^forker waiting $fpid\$" "$WORK/forker.out" || fail "forker did not say it waits: $(cat "$WORK/forker.out")"

log "\$ bpfprof -p $fpid ${extra[*]} -o $WORK/pid.json.gz &  (SIGUSR1 to forker once it records)"
env --default-signal=INT,TERM "$BPFPROF" -p "$fpid" "${extra[@]}" -o "$WORK/pid.json.gz" \
	>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
bpid=$!
wait_recording "$bpid"
kill -USR1 "$fpid"
wait "$fpid" || fail "forker failed: $(cat "$WORK/forker.out")"
# The parent is gone: bpfprof notices within a second and writes the profile.
for ((i = 0; i < 600; i++)); do
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$bpid" 2>/dev/null && { kill -KILL "$bpid"; fail "bpfprof still runs 30 s after its target exited"; }
wait "$bpid"
STATUS=$?
log "   exit status $STATUS"
indent <"$WORK/bpfprof.err"
expect_success
indent <"$WORK/forker.out"
read -r _ _ parent _ child < <(grep -m 1 '^forker parent [0-9]* child [0-9]*$' "$WORK/forker.out")
[ "${parent:-}" = "$fpid" ] && [ -n "${child:-}" ] || fail "forker's line 'forker parent P child C' is missing or wrong"

if [ "$MODE" = inherit ]; then
	run_check forker --profile "$WORK/pid.json.gz" --gzip --parent "$parent" --child "$child" \
		--truth "$WORK/forker.out"
else
	pids=$("$NODE" -e '
		const z = require("zlib"), fs = require("fs");
		const p = JSON.parse(z.gunzipSync(fs.readFileSync(process.argv[1])));
		console.log([...new Set(p.threads.map((t) => t.pid.split(".")[0]))].join(" "));' "$WORK/pid.json.gz") ||
		fail "cannot read the profile"
	log "processes in the profile: $pids"
	[[ " $pids " == *" $parent "* ]] || fail "the parent $parent is not in the profile"
	[[ " $pids " != *" $child "* ]] || fail "--no-inherit: the child $child is in the profile"
	[ "$(wc -w <<<"$pids")" -eq 1 ] || fail "--no-inherit: more processes than the parent: $pids"
	ok "--no-inherit: only the parent $parent, not its child $child"
fi
