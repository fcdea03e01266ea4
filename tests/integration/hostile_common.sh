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
