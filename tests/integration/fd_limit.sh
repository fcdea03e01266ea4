#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Setting up the ring buffers fails half-way (an open-file limit that runs
# out on the Nth ring, as a memlock or memory limit would on a big machine):
# bpfprof must say so in one line, exit non-zero, and on its way out close
# only descriptors it opened. An earlier version closed whatever numbers
# malloc left in the ring slots it never reached (stdin, a pipe, the output
# file) and leaked the ring-buffer manager.
#
# The limit at which the rings are reached depends on the kernel and on how
# many programs load, so every limit in a range is tried under strace, up
# to the first that records; the runs that failed at a ring buffer are
# judged. (Issue 40's maps and programs put the rings at 62-63 here: the
# range goes well past them.)
. "$(dirname "$0")/common.sh"
require_root
make_workdir
command -v strace >/dev/null || fail "strace is not installed (install-deps.sh --test installs it)"

judged=0
for n in $(seq 12 160); do
	trace=$WORK/trace.$n
	# fd 9: a descriptor bpfprof never opened; it must never close it.
	bash -c 'ulimit -n "$1"; shift; exec 9<"$0"; exec "$@"' "$BPFPROF" "$n" \
		strace -f -qq -e trace=close -e signal=none -o "$trace" \
		"$BPFPROF" -a -d 1 -o "$WORK/out.$n.json.gz" >"$WORK/out.$n" 2>"$WORK/err.$n"
	status=$?
	# Past the rings: every higher limit gets past them too.
	[ "$status" -eq 0 ] && break
	grep -q 'ring buffer' "$WORK/err.$n" || { rm -f "$trace"; continue; }
	line=$(head -n 1 "$WORK/err.$n")
	log "ulimit -n $n: exit status $status: $line"
	[ "$status" -ne 0 ] && [ "$status" -lt 126 ] || fail "exit status $status, expected an error exit"
	[ "$(wc -l <"$WORK/err.$n")" -eq 1 ] || fail "stderr has more than one line: $(cat "$WORK/err.$n")"
	case $line in
	"bpfprof: error: "*"open-file"*) ;;
	*) fail "the error does not say what failed and what to do: $line" ;;
	esac
	bad=$(grep -E 'close\((0|1|2|9)\)|EBADF' "$trace" | head -n 3)
	[ -z "$bad" ] || fail "with ulimit -n $n bpfprof closed a descriptor it never opened: $bad"
	ok "ulimit -n $n: one line, and only its own descriptors closed ($(grep -c 'close(' "$trace") closes)"
	judged=$((judged + 1))
	[ -e "$WORK/out.$n.json.gz" ] && fail "a profile was written although recording never started"
done
[ "$judged" -gt 0 ] || fail "no open-file limit from 12 to 160 made the ring buffers fail: nothing judged"
ok "$judged limits failed at a ring buffer and were judged"
