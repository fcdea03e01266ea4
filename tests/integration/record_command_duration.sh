#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -d 3 -- burner 30`: -d ends the recording of a command that still
# runs. The burner renames its main thread and creates its named threads only
# after exec, under the profiler's eyes, so this checks that renames are
# tracked; the rest is the burner check of record_pid.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

DURATION=3
cleanup() {
	# bpfprof leaves the command running when -d ends the recording.
	if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
	fi
}
trap cleanup EXIT
# --dur: long options abbreviate as argp allows.
run_bpfprof 60 --dur "$DURATION" -F 499 -o "$WORK/command.json.gz" -- "$BURNER" $((DURATION + 27))
pid=$(head -n 1 "$WORK/bpfprof.out")
expect_success
[[ $pid =~ ^[0-9]+$ ]] || fail "the burner's pid is not the first line of bpfprof's stdout: $(head -n 3 "$WORK/bpfprof.out")"
tids=
while read -r line name tid; do
	[ "$line" = thread ] && tids+="${tids:+,}$name=$tid"
done <"$WORK/bpfprof.out"
log "burner ran as pid $pid, threads $tids"
run_check burner --profile "$WORK/command.json.gz" --gzip --pid "$pid" --tids "$tids" --duration "$DURATION" \
	--truth "$WORK/bpfprof.out"
