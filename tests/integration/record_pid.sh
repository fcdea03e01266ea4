#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof record -p PID -d 3`: the burner process alone, with its named
# threads, the 75/25 split of alpha, beta in beta_spin, sysc in the kernel
# under sysc_loop, and no other process.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

DURATION=3
start_burner $((DURATION + 20))
pid=$BURNER_PID
run_bpfprof 60 record -p "$BURNER_PID" -d "$DURATION" -F 499 -o "$WORK/pid.json.gz"
expect_success
stop_burner
run_check burner --profile "$WORK/pid.json.gz" --gzip --pid "$pid" \
	--tids "$BURNER_TIDS" --duration "$DURATION" --truth "$WORK/burner.out"
