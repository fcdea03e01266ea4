#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -a -d 3` while the burner runs: the burner shows as with -p, other
# processes are there too, and every process has a string pid and exactly one
# main thread (the format checklist).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

DURATION=3
start_burner $((DURATION + 20))
pid=$BURNER_PID
run_bpfprof 60 -a -d "$DURATION" -F 499 -o "$WORK/all.json.gz"
expect_success
stop_burner
run_check burner --profile "$WORK/all.json.gz" --gzip --system-wide --pid "$pid" \
	--tids "$BURNER_TIDS" --duration "$DURATION" --truth "$WORK/burner.out"
