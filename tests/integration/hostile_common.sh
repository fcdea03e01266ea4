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

# new_user NAME: the account NAME and a directory of its own; sets NEW_UID,
# NEW_GID, NEW_DIR (0755, owned by it) and NEW_AS (the command prefix). The
# caller sees to its cleanup.
new_user() {
	useradd --system --no-create-home --shell /usr/sbin/nologin "$1" ||
		fail "cannot create the throw-away user $1"
	NEW_UID=$(id -u "$1")
	NEW_GID=$(id -g "$1")
	NEW_AS=(setpriv --reuid "$NEW_UID" --regid "$NEW_GID" --clear-groups)
	# Outside /tmp (a test may make the user's /tmp a link) and outside the build tree.
	NEW_DIR=$(mktemp -d /var/tmp/bpfprof-hostile.XXXXXX) || fail "mktemp -d failed"
	chown "$1:" "$NEW_DIR"
	chmod 0755 "$NEW_DIR"
	log "throw-away user $1 (uid $NEW_UID), its directory $NEW_DIR"
}

# shellcheck disable=SC2034 # USER_* and as_user are for the tests that source this
make_hostile_user() {
	USER_NAME=bpft$$
	new_user "$USER_NAME"
	USER_UID=$NEW_UID
	USER_GID=$NEW_GID
	USER_DIR=$NEW_DIR
	as_user=("${NEW_AS[@]}")
}

# make_other_user: one more throw-away user (a victim, a second attacker),
# killed and removed at exit as the first is; sets OTHER_NAME, OTHER_UID,
# OTHER_GID, OTHER_DIR (0755, its own) and as_other, as make_hostile_user
# sets USER_*.
OTHER_USERS=0
# shellcheck disable=SC2034 # OTHER_* and as_other are for the tests that source this
make_other_user() {
	OTHER_USERS=$((OTHER_USERS + 1))
	OTHER_NAME=bpo$OTHER_USERS$$
	new_user "$OTHER_NAME"
	OTHER_UID=$NEW_UID
	OTHER_GID=$NEW_GID
	OTHER_DIR=$NEW_DIR
	as_other=("${NEW_AS[@]}")
	HOSTILE_CLEANUP+=("pkill -KILL -u $OTHER_NAME 2>/dev/null; sleep 0.1; userdel $OTHER_NAME 2>/dev/null; rm -rf $OTHER_DIR")
}

# hostile_setup USAGE [MODE]: the test runs as root in a work directory of
# its own (common.sh's); sets MODE, its first argument, or fails with USAGE.
hostile_setup() {
	require_root
	make_workdir
	MODE=${2:-}
	[ -n "$MODE" ] || fail "usage: $1"
}

# wait_gone PID SECONDS: waits until PID has ended, at most SECONDS; status
# 1 if it still runs then.
wait_gone() {
	local pid=$1 i
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	! kill -0 "$pid" 2>/dev/null
}

# as_user_in_dir CMD...: the user runs CMD in their directory.
as_user_in_dir() {
	(cd "$USER_DIR" && env TMPDIR="$USER_DIR" HOME="$USER_DIR" "${as_user[@]}" "$@")
}

# cfi_rows_asm PATH FUNC PAIRS END: writes the assembly file PATH: FUNC, one
# FDE of PAIRS push/pop pairs, two CFA rows a pair, then END ("ret", or
# "jmp 1b" to spin: 1 is FUNC's first instruction).
cfi_rows_asm() {
	cat >"$1" <<EOS
	.text
	.globl	$2
	.type	$2, @function
$2:
	.cfi_startproc
1:
	.rept $3
	push	%rax
	.cfi_adjust_cfa_offset 8
	pop	%rax
	.cfi_adjust_cfa_offset -8
	.endr
	$4
	.cfi_endproc
	.size	$2, .-$2
	.section .note.GNU-stack,"",@progbits
EOS
}

# user_cfi_rows FILE FUNC PAIRS END: cfi_rows_asm into the user's FILE (in
# USER_DIR, theirs).
user_cfi_rows() {
	cfi_rows_asm "$USER_DIR/$1" "$2" "$3" "$4"
	chown "$USER_NAME:" "$USER_DIR/$1"
}

# user_spin_main: the user's main.c (in USER_DIR, theirs), which calls
# spin(), the function of their assembly, for ever.
user_spin_main() {
	cat >"$USER_DIR/main.c" <<'EOS'
void spin(void);
int main(void) { spin(); return 0; }
EOS
	chown "$USER_NAME:" "$USER_DIR/main.c"
}
