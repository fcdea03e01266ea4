#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `bpfprof -- spawner 50 20`: 50 children that live ~20 ms each, one after
# another, a thread renamed half-way, and a child that execs a new image.
# Every child must be a process of its own, named, with start and end times,
# its samples symbolized to child_work although it exited long before the
# recording ended; the renamed thread shows its new name; the exec'd child
# shows the new image's function.
#
#   lifecycle_spawner.sh [host|mntns|pidns]
#
# host (default): the spawner runs from the build tree.
# mntns: it runs from a tmpfs mounted over an empty directory in a private
#   mount namespace, so its binary exists only there (checked: the host
#   sees the directory empty afterwards). bpfprof must read it through
#   /proc/PID/map_files or /proc/PID/root, and keep it for the children that
#   exit long before the recording ends.
# pidns: the same, in a new pid namespace with its own /proc as well, so the
#   pids the spawner sees are not bpfprof's. It reports its and its
#   children's pids as bpfprof sees them, through a procfs of our pid
#   namespace mounted for it (SPAWNER_HOST_PROC).
. "$(dirname "$0")/common.sh"
require_root
make_workdir

: "${SPAWNER:?SPAWNER is not set}"
MODE=${1:-host}
NSDIR=$WORK/nsroot

remove_nsdir() {
	# Empty as it should be: nothing to keep. Otherwise kept for inspection.
	[ -d "$NSDIR" ] && rmdir "$NSDIR" 2>/dev/null
	stop_burner
}
trap remove_nsdir EXIT

case $MODE in
host)
	cmd=("$SPAWNER" 50 20)
	;;
mntns | pidns)
	command -v unshare >/dev/null || fail "unshare (util-linux) is not installed"
	make_empty_dir "$NSDIR"
	setup='mount -t tmpfs bpfprof-ns "$1"; cp "$2" "$1/spawner"'
	inner=("$NSDIR/spawner" 50 20)
	if [ "$MODE" = pidns ]; then
		setup+='; mkdir "$1/hostproc"; mount -t proc proc "$1/hostproc"'
		inner=(env "SPAWNER_HOST_PROC=$NSDIR/hostproc" "${inner[@]}")
	fi
	# The setup's $1 and $2 are the first two arguments after it.
	ns_command "$MODE" "$setup; shift 2" "$NSDIR" "$SPAWNER" "${inner[@]}"
	cmd=("${NS_CMD[@]}")
	;;
*)
	fail "unknown mode $MODE (host, mntns or pidns)"
	;;
esac

run_bpfprof 60 -o "$WORK/spawner.json.gz" -- "${cmd[@]}"
expect_success
grep '^spawner: truth ' "$WORK/bpfprof.err" >"$WORK/truth.txt" || fail "spawner printed no truth lines"
# "spawner: truth self PID [ns NSPID]": its pid as bpfprof sees it, and as
# it sees it itself, which it also prints first on stdout.
read -r _ _ _ pid _ nspid < <(grep '^spawner: truth self ' "$WORK/truth.txt")
[[ $pid =~ ^[0-9]+$ ]] || fail "spawner did not print its pid in a truth line"
first=$(head -n 1 "$WORK/bpfprof.out")
[ "$first" = "${nspid:-$pid}" ] ||
	fail "spawner printed pid $first on stdout, but ${nspid:-$pid} in its truth line"

case $MODE in
mntns | pidns)
	# The preconditions: the binary was never at this path on the host, and
	# in a pid namespace every pid differs from the spawner's view of it.
	expect_empty_dir "$NSDIR"
	ok "the host sees $NSDIR empty: the spawner's binary existed only in the namespace"
	if [ "$MODE" = pidns ]; then
		# The child-cpu lines repeat a child's pid with its CPU use.
		pidlines='$3 != "child-cpu"'
		n=$(awk "$pidlines" "$WORK/truth.txt" | wc -l)
		same=$(awk "$pidlines"' && ($5 != "ns" || $4 == $6)' "$WORK/truth.txt" | wc -l)
		[ "$same" -eq 0 ] ||
			fail "$same of $n truth lines lack a namespace pid that differs: $(awk "$pidlines"' && ($5 != "ns" || $4 == $6)' "$WORK/truth.txt" | head -n 3)"
		ok "all $n pids the spawner reports differ from its own view of them, e.g. $(head -n 1 "$WORK/truth.txt")"
	fi
	;;
esac

log "spawner ran as pid $pid with $(grep -c '^spawner: truth child ' "$WORK/truth.txt") children"
run_check lifecycle --profile "$WORK/spawner.json.gz" --gzip --pid "$pid" --truth "$WORK/truth.txt"
