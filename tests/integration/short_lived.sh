#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Short-lived processes under -a (issue 26): 100 copies of shortburn (40 ms
# each, -O2 without frame pointers) run one after another while bpfprof
# records the machine. Most of a process's samples come before userspace
# has read its mappings; the kernel enters the new image's code at exec
# and finds the libraries ld.so maps next, and samples wait for the
# side-band's exec and mmaps, so >= 98 % of their stacks are whole from
# _start with every frame named (unwind_checks.mjs --short).
#
# The binary runs once first under another name (a hard link: the same
# file): a binary nobody ran before has no unwind table until bpfprof has
# read it, a poll interval or more after its first exec, so the first
# process of a new binary is walked with frame pointers. The 100 that
# follow are what a build farm or a CI runner looks like: the same
# binaries, over and over.
#
#   cfi  as above
#   fp   the control: with frame pointers only, fewer than half are whole
#
# Usage: short_lived.sh cfi|fp
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: short_lived.sh cfi|fp}
: "${SHORTBURN:?SHORTBURN is not set}"
COUNT=100
ln -f "$SHORTBURN" "$WORK/shortwarm" || fail "cannot hard-link $SHORTBURN into $WORK (the warm-up must be the same file)"
# Ended by SIGINT once the loop is done, however slowly this machine forks.
start_recording_all "$WORK/short.json.gz" --unwind "$MODE"
# Each copy is exec'd by a shell started under the recording, as a build or a CI job would.
start_background loop bash -c "'$WORK/shortwarm' 300; for ((i = 0; i < $COUNT; i++)); do '$SHORTBURN' 40; done"
LOOP_PID=$BG_PID
wait "$LOOP_PID" || fail "the shortburn loop failed: $(cat "$WORK/loop.out")"
kill -INT "$BPFPROF_PID"
wait "$BPFPROF_PID"
STATUS=$?
expect_success
ok "$(grep "^bpfprof: user stacks" "$WORK/bpfprof.err")"
expect=()
[ "$MODE" = fp ] && expect=(--expect-broken)
log "\$ unwind_checks.mjs --short shortburn --processes $COUNT --profile $WORK/short.json.gz ${expect[*]}"
node_check unwind_checks.mjs --short shortburn --processes "$COUNT" --profile "$WORK/short.json.gz" \
	--gzip --pid 0 "${expect[@]}" || fail "short-lived process checks failed"
