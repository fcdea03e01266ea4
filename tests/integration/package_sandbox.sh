# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A real systemd, as PID 1 of its own namespaces, to run installed units on a
# machine whose init is not systemd (or must not be disturbed). Sourced after
# common.sh (fail, log).
#
#   sandbox_start DIR     DIR/units: unit files for the sandbox's
#                         /run/systemd/system, among them
#                         bpfprof-sandbox.target (what systemd boots into);
#                         DIR/state: mounted at /var/lib/bpfprof;
#                         DIR/log: mounted at /run/bpfprof-test;
#                         DIR/log/systemd.log: the setup's messages, and
#                         DIR/log/systemd-kmsg.log: systemd's own log
#   sandbox_ctl ARGS...   systemctl ARGS... inside
#   sandbox_exec CMD...   CMD inside (its mounts, pids and cgroups)
#   sandbox_stop          kills it all; idempotent, for traps
#
# The host stays untouched: package_sandbox_init.sh makes every host
# filesystem read-only inside and proves it before systemd starts; systemd
# lives in a cgroup of its own below the cgroup2 mount, removed at the end,
# with private uts, ipc and network namespaces. The host's /tmp gets a canary
# file, checked at the end (the incident this guards against emptied it).

SANDBOX_INIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/package_sandbox_init.sh
SANDBOX_TMP=
SANDBOX_CG=
SANDBOX_UNSHARE=
SANDBOX_PID=
SANDBOX_LOG=
SANDBOX_WATCHDOG=
# The longest a sandbox may live if whoever started it dies without running
# sandbox_stop (SIGKILL): a watchdog then kills it.
SANDBOX_MAX_S=${SANDBOX_MAX_S:-300}

# The cgroup2 mount point: /sys/fs/cgroup, or /sys/fs/cgroup/unified on
# hybrid hosts. The filesystem type follows the " - " separator.
sandbox_cgroup2_mount() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
		/proc/self/mountinfo
}

sandbox_require() {
	local tool
	[ -x /lib/systemd/systemd ] || fail "no /lib/systemd/systemd: install the systemd package"
	for tool in unshare nsenter setpriv pivot_root; do
		command -v "$tool" >/dev/null || fail "$tool is missing: install util-linux"
	done
}

# The sandbox's setup messages, then systemd's own log.
sandbox_dump_log() {
	local f
	for f in "$SANDBOX_LOG" "${SANDBOX_LOG%/*}/systemd-kmsg.log"; do
		[ -n "$SANDBOX_LOG" ] && [ -s "$f" ] || continue
		log "   $f (last 30 lines):"
		tail -n 30 "$f" | indent
	done
}

sandbox_start() {
	local dir=$1 v2 i children
	sandbox_require
	for d in units state log; do
		[ -d "$dir/$d" ] || fail "sandbox_start: $dir/$d is not a directory"
	done
	[ -f "$dir/units/bpfprof-sandbox.target" ] || fail "sandbox_start: no bpfprof-sandbox.target in $dir/units"
	v2=$(sandbox_cgroup2_mount)
	[ -n "$v2" ] || fail "no cgroup2 filesystem mounted: systemd needs one (mount -t cgroup2 none /sys/fs/cgroup/unified)"

	# Sandboxes of runs killed at their timeout (SIGKILL: no EXIT trap):
	# their systemd and services (a bpfprof -a among them) still run.
	for d in "$v2"/bpfprof-sandbox.*; do
		[ -d "$d" ] || continue
		log "a killed run left the sandbox $d: its processes are killed"
		sandbox_kill_cgroup "$d"
		rm -f "/tmp/${d##*/}/canary"
		rmdir "/tmp/${d##*/}/root" "/tmp/${d##*/}" 2>/dev/null
	done

	SANDBOX_TMP=$(mktemp -d /tmp/bpfprof-sandbox.XXXXXX) || fail "mktemp -d failed"
	# The root mount point stays empty on the host: the host's / is bound
	# to it inside the sandbox only. Never rm -r it; rmdir only.
	mkdir "$SANDBOX_TMP/root" || fail "cannot create $SANDBOX_TMP/root"
	echo "canary" >"$SANDBOX_TMP/canary" || fail "cannot write the /tmp canary"
	SANDBOX_CG=$v2/bpfprof-sandbox.${SANDBOX_TMP##*.}
	mkdir "$SANDBOX_CG" || fail "cannot create the cgroup $SANDBOX_CG"
	SANDBOX_LOG=$dir/log/systemd.log

	# Into the new cgroup first: unshare --cgroup makes it the root of the
	# sandbox's cgroup namespace.
	(
		echo "$BASHPID" >"$SANDBOX_CG/cgroup.procs" &&
			exec unshare --pid --fork --mount --propagation private --cgroup --uts --ipc --net -- \
				bash "$SANDBOX_INIT" "$SANDBOX_TMP/root" "$SANDBOX_CG" "$dir/state" "$dir/log" "$dir/units"
	) >"$SANDBOX_LOG" 2>&1 </dev/null &
	SANDBOX_UNSHARE=$!

	# Its child is the namespace's PID 1: the init script, then systemd.
	for ((i = 0; i < 200; i++)); do
		kill -0 "$SANDBOX_UNSHARE" 2>/dev/null || break
		children=$(cat "/proc/$SANDBOX_UNSHARE/task/$SANDBOX_UNSHARE/children" 2>/dev/null)
		SANDBOX_PID=${children%% *}
		SANDBOX_PID=${SANDBOX_PID// /}
		if [ -n "$SANDBOX_PID" ] && [ "$(cat "/proc/$SANDBOX_PID/comm" 2>/dev/null)" = systemd ]; then
			break
		fi
		sleep 0.05
	done
	if [ "$(cat "/proc/$SANDBOX_PID/comm" 2>/dev/null)" != systemd ]; then
		sandbox_dump_log
		fail "the sandbox did not start systemd (see its log above)"
	fi
	log "sandbox: systemd is pid $SANDBOX_PID, cgroup $SANDBOX_CG"
	sandbox_watchdog "$SANDBOX_PID" "$SANDBOX_UNSHARE" &
	SANDBOX_WATCHDOG=$!

	for ((i = 0; i < 200; i++)); do
		sandbox_ctl is-active --quiet bpfprof-sandbox.target 2>/dev/null && break
		sleep 0.05
	done
	if ! sandbox_ctl is-active --quiet bpfprof-sandbox.target; then
		sandbox_dump_log
		fail "systemd in the sandbox did not reach bpfprof-sandbox.target"
	fi
	ok "sandbox: systemd $(sandbox_ctl --version | head -n 1 | cut -d' ' -f2) up, host filesystems read-only inside"
}

# sandbox_watchdog PID UNSHARE: after SANDBOX_MAX_S seconds, kills PID if
# it is still the sandbox's systemd (UNSHARE's child), not a reused pid.
sandbox_watchdog() {
	local s
	trap 'kill "$s" 2>/dev/null; wait "$s"; exit 0' TERM
	sleep "$SANDBOX_MAX_S" &
	s=$!
	wait "$s"
	if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = systemd ] &&
		[ "$(awk '$1 == "PPid:" { print $2 }' "/proc/$1/status" 2>/dev/null)" = "$2" ]; then
		kill -KILL "$1"
	fi
}

sandbox_exec() {
	nsenter -t "$SANDBOX_PID" -m -p -C -u -i -n -- "$@"
}

sandbox_ctl() {
	sandbox_exec systemctl "$@"
}

# sandbox_kill_cgroup DIR: kill whatever runs in a sandbox's cgroup (all of
# it was started in the sandbox) and remove the cgroup.
sandbox_kill_cgroup() {
	local i pids
	for ((i = 0; i < 100; i++)); do
		grep -q '^populated 0' "$1/cgroup.events" && break
		pids=$(find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null)
		# shellcheck disable=SC2086 # one pid per word
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
		sleep 0.05
	done
	# cgroupfs directories go with rmdir, children first.
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
	[ -d "$1" ] && log "WARNING: could not remove the cgroup $1"
}

sandbox_stop() {
	if [ -n "$SANDBOX_WATCHDOG" ]; then
		kill "$SANDBOX_WATCHDOG" 2>/dev/null
		wait "$SANDBOX_WATCHDOG" 2>/dev/null
		SANDBOX_WATCHDOG=
	fi
	# Kill PID 1, and the kernel kills the rest of its pid namespace. The
	# pid is checked to still be unshare's child, never a reused one.
	if [ -n "$SANDBOX_PID" ] && [ -n "$SANDBOX_UNSHARE" ] &&
		[ "$(awk '$1 == "PPid:" { print $2 }' "/proc/$SANDBOX_PID/status" 2>/dev/null)" = "$SANDBOX_UNSHARE" ]; then
		kill -KILL "$SANDBOX_PID" 2>/dev/null
	fi
	if [ -n "$SANDBOX_UNSHARE" ]; then
		wait "$SANDBOX_UNSHARE" 2>/dev/null
		SANDBOX_UNSHARE=
	fi
	SANDBOX_PID=
	if [ -n "$SANDBOX_CG" ] && [ -d "$SANDBOX_CG" ]; then
		sandbox_kill_cgroup "$SANDBOX_CG"
		SANDBOX_CG=
	fi
	if [ -n "$SANDBOX_TMP" ]; then
		[ -f "$SANDBOX_TMP/canary" ] || log "WARNING: the canary in $SANDBOX_TMP vanished: the host's /tmp was touched"
		rm -f "$SANDBOX_TMP/canary"
		rmdir "$SANDBOX_TMP/root" "$SANDBOX_TMP" 2>/dev/null ||
			log "WARNING: could not remove $SANDBOX_TMP (not empty?)"
		SANDBOX_TMP=
	fi
}

# sandbox_canary_ok: the host's /tmp still holds the canary.
sandbox_canary_ok() {
	[ -n "$SANDBOX_TMP" ] && [ -f "$SANDBOX_TMP/canary" ] && [ "$(cat "$SANDBOX_TMP/canary")" = canary ]
}
