# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced (after common.sh) by the tests that attack a root bpfprof as a
# local user: a throw-away unprivileged account made for the test, its own
# directory, and a cleanup that kills everything it ran and removes both.
#
# make_hostile_user: creates the account; sets USER_NAME, USER_UID, USER_GID,
# USER_DIR (0755, owned by the user, outside /tmp and the build tree) and
# as_user (a command prefix that runs as the user, with no supplementary
# groups). HOSTILE_CLEANUP (an array of commands, run by eval) lets a test
# add its own cleanup steps; they run before the user's files are removed.

USER_NAME=
USER_DIR=
HOSTILE_CLEANUP=()

hostile_cleanup() {
	local c
	for c in "${HOSTILE_CLEANUP[@]}"; do
		eval "$c"
	done
	if [ -n "$USER_NAME" ]; then
		pkill -KILL -u "$USER_NAME" 2>/dev/null
		sleep 0.1
	fi
	[ -n "$USER_DIR" ] && rm -rf "$USER_DIR"
	[ -n "$USER_NAME" ] && userdel "$USER_NAME" 2>/dev/null
	common_exit
}
trap hostile_cleanup EXIT

make_hostile_user() {
	USER_NAME=bpft$$
	useradd --system --no-create-home --shell /usr/sbin/nologin "$USER_NAME" ||
		fail "cannot create the throw-away user $USER_NAME"
	USER_UID=$(id -u "$USER_NAME")
	USER_GID=$(id -g "$USER_NAME")
	as_user=(setpriv --reuid "$USER_UID" --regid "$USER_GID" --clear-groups)
	# Outside /tmp (a test may make the user's /tmp a link) and outside the build tree.
	USER_DIR=$(mktemp -d /var/tmp/bpfprof-hostile.XXXXXX) || fail "mktemp -d failed"
	chown "$USER_NAME:" "$USER_DIR"
	chmod 0755 "$USER_DIR"
	log "throw-away user $USER_NAME (uid $USER_UID), its directory $USER_DIR"
}
