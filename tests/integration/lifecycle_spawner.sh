#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -- spawner 50 20`: 50 children that live ~20 ms each, one after
# another, a thread renamed half-way, and a child that execs a new image.
# Every child must be a process of its own, named, with start and end times,
# its samples symbolized to child_work although it exited long before the
# recording ended; the renamed thread shows its new name; the exec'd child
# shows the new image's function.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

: "${SPAWNER:?SPAWNER is not set}"
run_bpfprof 60 -o "$WORK/spawner.json.gz" -- "$SPAWNER" 50 20
expect_success
pid=$(head -n 1 "$WORK/bpfprof.out")
[[ $pid =~ ^[0-9]+$ ]] || fail "the workload's pid is not the first line of bpfprof's stdout"
grep '^spawner: truth ' "$WORK/bpfprof.err" >"$WORK/truth.txt" || fail "spawner printed no truth lines"
log "spawner ran as pid $pid with $(grep -c child "$WORK/truth.txt") children"
run_check lifecycle --profile "$WORK/spawner.json.gz" --gzip --pid "$pid" --truth "$WORK/truth.txt"
