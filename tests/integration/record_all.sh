#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -a -d 3` while the burner runs: the burner shows as with -p, other
# processes are there too, and every process has a string pid and exactly one
# main thread (the format checklist).
#
#   loaded  the same beside four busy loops per CPU (nproc), so the burner's
#           threads run in short slices among many runnable tasks: each one's
#           CPU time in the profile is still what its own clock counted. A
#           sample's slice start and CPU figure came from the CPU's last
#           switch seen, another thread's when the kernel hid the switch to
#           this one; with -a that thread is a target too, and its CPU figure
#           made the replay credit this one up to the wall time (issue 37).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:-idle}
DURATION=3
# Loading the programs and the unwind tables takes tens of seconds beside the loops.
BURNER_S=$((DURATION + 20)) LIMIT_S=60
spinners=()
if [ "$MODE" = loaded ]; then
	n=$((4 * $(nproc)))
	for ((i = 0; i < n; i++)); do
		(while :; do :; done) &
		spinners+=("$!")
	done
	BACKGROUND_PIDS+=("${spinners[@]}")
	BURNER_S=$((DURATION + 120)) LIMIT_S=150
	log "${#spinners[@]} busy loops running beside the burner"
fi
start_burner "$BURNER_S"
pid=$BURNER_PID
run_bpfprof "$LIMIT_S" -a -d "$DURATION" -F 499 -o "$WORK/all.json.gz"
expect_success
stop_burner
[ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}"
run_check burner --profile "$WORK/all.json.gz" --gzip --system-wide --pid "$pid" \
	--tids "$BURNER_TIDS" --duration "$DURATION" --truth "$WORK/burner.out"
