#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -- forker`: the command and the child it forks are both profiled,
# each with its own burn function on top; recording ends when the command
# exits. Plain JSON output, since the name does not end in .gz.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

run_bpfprof 60 -F 499 -o "$WORK/command.json" -- "$FORKER" 1.5
expect_success
read -r _ _ parent _ child < <(grep -m 1 '^forker parent [0-9]* child [0-9]*$' "$WORK/bpfprof.out")
[ -n "${child:-}" ] || fail "forker's line 'forker parent P child C' is not in bpfprof's stdout"
log "forker ran as parent $parent, child $child"
run_check forker --profile "$WORK/command.json" --plain --parent "$parent" --child "$child" \
	--truth "$WORK/bpfprof.out"
