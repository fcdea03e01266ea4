#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -a -o X` stopped by a signal (INT as from Ctrl-C, or TERM): it
# exits 0 and X is a complete profile with samples.
#
# Usage: signal_stop.sh INT|TERM
. "$(dirname "$0")/common.sh"
require_root
make_workdir

SIG=${1:?usage: signal_stop.sh INT|TERM}
OUT=$WORK/signal.json.gz
# A background job of a script ignores SIGINT unless told otherwise; a
# profiler started from a terminal would not (start_recording_all). However
# long loading the programs takes on a busy machine, the signal comes while
# it records: SIG$SIG 0.5 s after it says so.
start_recording_all "$OUT"
pid=$BPFPROF_PID
sleep 0.5
kill -0 "$pid" 2>/dev/null || fail "bpfprof exited before the signal: $(cat "$WORK/bpfprof.err")"
kill -s "$SIG" "$pid"
t0=$(date +%s%N)
for ((i = 0; i < 600; i++)); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$pid" 2>/dev/null; then
	kill -s KILL "$pid"
	wait "$pid"
	fail "bpfprof still running 30 s after SIG$SIG"
fi
wait "$pid"
STATUS=$?
t1=$(date +%s%N)
log "   exit status $STATUS, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')s after SIG$SIG"
if [ -s "$WORK/bpfprof.err" ]; then
	log "   stderr:"
	head -n 30 "$WORK/bpfprof.err" | indent
fi
expect_success
[ -f "$OUT" ] || fail "no profile at $OUT after SIG$SIG"
run_check valid --profile "$OUT" --gzip --min-samples 1
