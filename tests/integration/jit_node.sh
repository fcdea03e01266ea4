#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# JIT symbols (issue 4): `bpfprof -- node --perf-basic-prof jit_hot.js 2`.
# The workload spins for 2 s in the JS functions bpfprofHotLoop and
# bpfprofInner, whose machine code exists only in V8's heap; their names
# only in the perf map node writes, /tmp/perf-PID.map. The profile must
# name them in most of the busy thread's on-CPU samples.
#
#   jit_node.sh [host|mntns|pidns [node|anon]]
#
# host (default): the JIT runs beside bpfprof; its map lands in our /tmp.
# mntns: it runs in a private mount namespace with a tmpfs on /tmp, so its
#   map exists only there: bpfprof must read it through /proc/PID/root.
# pidns: in addition in a new pid namespace with its own /proc, so the map
#   is named after a pid that is not bpfprof's (the last "NSpid:" field of
#   /proc/PID/status).
# In both, the host's /tmp must hold no map for either pid of the JIT.
#
# node (default): the JIT is node running jit_hot.js, as bpfprof's command.
# anon: it is tests/workloads/jit_anon, whose code (bpfprof_anon_jit) the
#   kernel always announces in a perf mmap record, run for 1 s as the child
#   of a shell that lives on for another 0.5 s: a process that starts after
#   bpfprof and is gone before the recording ends.
#
# NODE (the node that runs the workload and the checks), JIT_HOT (the
# workload script) and JIT_ANON (the jit_anon executable) may come from
# ctest; NODE and JIT_HOT default to `command -v node` and
# tests/workloads/jit_hot.js next to this script.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:-host}
RUNTIME=${2:-node}
# The workloads ignore their arguments after SECONDS: this one tells the
# JIT process apart from any other, and from the unshare that starts it.
MARKER=bpfprof-jit-$$-$RANDOM
WATCH=$WORK/watch.txt

case $RUNTIME in
node)
	JIT_NODE=$(command -v "$NODE") || fail "node ($NODE) is not installed; it runs the JIT workload"
	JIT_FILE=${JIT_HOT:-$(cd "$(dirname "$0")/../workloads" && pwd)/jit_hot.js}
	FUNCS=(bpfprofHotLoop bpfprofInner)
	DONE_LINE='^jit_hot: iterations [0-9]* '
	# V8's own threads and runtime calls take their share.
	MIN_PERCENT=30
	;;
anon)
	: "${JIT_ANON:?JIT_ANON is not set}"
	JIT_FILE=$JIT_ANON
	FUNCS=(bpfprof_anon_jit)
	DONE_LINE='^jit_anon: calls [0-9]* '
	# Nothing but the loop, a clock check per call and a rewrite every 5 ms:
	# code resolved only until the next rewrite's mmap record falls short.
	MIN_PERCENT=90
	;;
*)
	fail "unknown runtime $RUNTIME (node or anon)"
	;;
esac
[ -r "$JIT_FILE" ] || fail "the JIT workload $JIT_FILE is missing"
FUNC_RE=$(
	IFS='|'
	echo "(${FUNCS[*]})"
)

# jit_command PATH: sets JIT_CMD, the JIT workload run from PATH (where
# the namespace sees JIT_FILE), and JIT_ARGV0, the JIT process's argv[0].
jit_command() {
	case $RUNTIME in
	node)
		JIT_CMD=("$JIT_NODE" --perf-basic-prof "$1" 2 "$MARKER")
		JIT_ARGV0=$JIT_NODE
		;;
	anon)
		JIT_CMD=(bash -c '"$@"; sleep 0.5' jit-parent "$1" 1 "$MARKER")
		JIT_ARGV0=$1
		;;
	esac
}

# watch_jit: while the JIT process runs, as the host sees it, writes to
#   $WATCH "pid HOSTPID nspid NSPID", once its perf map names the workload's
#   functions "map PATH" (a copy in $WORK), and "host-tmp PATH" for each of
#   /tmp/perf-HOSTPID.map and /tmp/perf-NSPID.map that exists then.
# Gives up after 30 s, or when $WORK/watch.stop appears.
watch_jit() {
	local p found='' nspid='' map i args line
	for ((i = 0; i < 600; i++)); do
		[ -e "$WORK/watch.stop" ] && return
		for p in /proc/[0-9]*; do
			# Builtins only: this loop runs beside the workload.
			mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
			[ "${args[0]:-}" = "$JIT_ARGV0" ] && [ "${args[-1]}" = "$MARKER" ] || continue
			found=${p#/proc/}
			break
		done
		[ -n "$found" ] && break
		sleep 0.05
	done
	[ -n "$found" ] || return
	while read -r line; do
		[[ $line == NSpid:* ]] && nspid=${line##*[[:space:]]}
	done <"/proc/$found/status"
	echo "pid $found nspid $nspid" >>"$WATCH"
	map=/proc/$found/root/tmp/perf-$nspid.map
	for (( ; i < 600; i++)); do
		[ -e "$WORK/watch.stop" ] || [ ! -d "/proc/$found" ] && return
		if grep -qE "$FUNC_RE" "$map" 2>/dev/null; then
			cp "$map" "$WORK/perf-$nspid.map" && echo "map $WORK/perf-$nspid.map" >>"$WATCH"
			for p in "/tmp/perf-$found.map" "/tmp/perf-$nspid.map"; do
				[ -e "$p" ] && echo "host-tmp $p" >>"$WATCH"
			done
			return
		fi
		sleep 0.05
	done
}

WATCH_PID=
JIT_PID=
cleanup() {
	if [ -n "$WATCH_PID" ]; then
		kill "$WATCH_PID" 2>/dev/null
		wait "$WATCH_PID" 2>/dev/null
	fi
	# The JIT leaves its map behind in our /tmp; one in a namespace's
	# tmpfs went with it.
	if [ "$MODE" = host ] && [ -n "$JIT_PID" ]; then
		rm -f "/tmp/perf-$JIT_PID.map"
	fi
	stop_burner
}
trap cleanup EXIT

case $MODE in
host)
	jit_command "$JIT_FILE"
	cmd=("${JIT_CMD[@]}")
	;;
mntns | pidns)
	command -v unshare >/dev/null || fail "unshare (util-linux) is not installed"
	# The tmpfs hides whatever was under /tmp, and this test's tree may be
	# among it: the workload file is carried over to the tmpfs through an
	# fd opened before.
	jit_command "/tmp/$(basename "$JIT_FILE")"
	ns_command "$MODE" 'exec 3<"$1"; mount -t tmpfs bpfprof-ns /tmp;
		cat <&3 >"$2"; exec 3<&-; chmod 755 "$2"; shift 2' \
		"$JIT_FILE" "/tmp/$(basename "$JIT_FILE")" "${JIT_CMD[@]}"
	cmd=("${NS_CMD[@]}")
	;;
*)
	fail "unknown mode $MODE (host, mntns or pidns)"
	;;
esac

# --perf-basic-prof also makes V8 write isolate-*.log into the current
# directory: let it land with this test's files.
cd "$WORK" || fail "cannot enter $WORK"
: >"$WATCH"
watch_jit &
WATCH_PID=$!
run_bpfprof 60 -o "$WORK/jit.json.gz" -- "${cmd[@]}"
touch "$WORK/watch.stop"
wait "$WATCH_PID"
WATCH_PID=
read -r _ JIT_PID _ nspid <"$WATCH"
expect_success
[[ $JIT_PID =~ ^[0-9]+$ ]] && [[ $nspid =~ ^[0-9]+$ ]] ||
	fail "the JIT ($JIT_ARGV0 ... $MARKER) was not seen running, or without an NSpid: $(cat "$WATCH")"
first=$(head -n 1 "$WORK/bpfprof.out")
grep -q "$DONE_LINE" "$WORK/bpfprof.out" ||
	fail "the JIT workload did not finish its loop: $(tail -n 3 "$WORK/bpfprof.out")"
# The workloads print their pid first, as they see it.
[ "$first" = "$nspid" ] || fail "the JIT says it is pid $first, but NSpid says $nspid"
log "the JIT ran as pid $JIT_PID, pid $nspid in its own namespace"

# The preconditions, so that a JIT that writes no map is not blamed on
# bpfprof, and a test that passes because the host could see the map fails.
map=$(sed -n 's/^map //p' "$WATCH")
[ -n "$map" ] && [ -s "$map" ] ||
	fail "the JIT wrote no /tmp/perf-$nspid.map naming ${FUNCS[*]}"
grep -qE "^(0x)?[0-9a-fA-F]+ (0x)?[0-9a-fA-F]+ .*$FUNC_RE" "$map" ||
	fail "$map has no line for ${FUNCS[*]}"
ok "the JIT's /tmp/perf-$nspid.map names the workload's functions ($(grep -cE "$FUNC_RE" "$map") lines), e.g." \
	"$(grep -m 1 -E "$FUNC_RE" "$map")"
case $MODE in
host)
	[ "$nspid" = "$JIT_PID" ] || fail "the JIT has a pid $nspid of its own beside $JIT_PID"
	grep -qx "host-tmp /tmp/perf-$JIT_PID.map" "$WATCH" || fail "the JIT's map was not in our /tmp"
	;;
mntns | pidns)
	! grep '^host-tmp ' "$WATCH" ||
		fail "the host's /tmp had a map for the JIT while it ran, which bpfprof may have read instead"
	for p in $(printf '%s\n' "$JIT_PID" "$nspid" | sort -u); do
		[ ! -e "/tmp/perf-$p.map" ] || fail "the host's /tmp has perf-$p.map, which bpfprof may have read instead"
		ok "the host's /tmp has no perf-$p.map: the JIT's map existed only in the namespace"
	done
	if [ "$MODE" = pidns ]; then
		[ "$nspid" != "$JIT_PID" ] || fail "the JIT's pid $JIT_PID is the same in its pid namespace"
		ok "the JIT's map is named after its namespace pid $nspid, not its pid $JIT_PID"
	fi
	;;
esac

func_args=()
for f in "${FUNCS[@]}"; do
	func_args+=(--func "$f")
done
# node's JS functions are JavaScript's; code of no runtime we know (jit_anon) the process's own.
[ "$RUNTIME" = node ] && func_args+=(--category JavaScript --js)
log "\$ jit_checks.mjs --profile $WORK/jit.json.gz --pid $JIT_PID ${func_args[*]} --min-percent $MIN_PERCENT"
node_check jit_checks.mjs --profile "$WORK/jit.json.gz" --gzip --pid "$JIT_PID" \
	"${func_args[@]}" --min-percent "$MIN_PERCENT" ||
	fail "JIT checks failed (jit_checks.mjs exit status $?)"
