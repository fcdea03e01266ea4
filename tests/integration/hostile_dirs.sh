#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user against `bpfprof continuous --out-dir` and `bpfprof report`
# as root runs them (issue 27), each mode with a throw-away account:
#
#   outdir_race        root (under sudo for another user, so that new
#                      directories are chowned) runs continuous with --out-dir
#                      D/newN/a/b/snaps (-p of an idle process), D being the user's directory, 30
#                      times, each with a new N, while the user's racer,
#                      woken by inotify, swaps each new directory in D for a
#                      symlink to a root directory T. bpfprof is pinned to the
#                      racer's CPU at idle priority, so that the racer runs
#                      the moment root's mkdir returns (as a loaded machine
#                      would let it, sooner or later). Every try: refused, T's
#                      mode and owner unchanged, nothing made in T or in D.
#   outdir_middle_symlink
#                      a symlink of the user's as a middle component of
#                      --out-dir, to a root directory that holds snapshots:
#                      in the user's directory, and in sticky /var/tmp with
#                      fs.protected_symlinks=0 (set for the test, restored).
#                      Refused with one line that names the link, nothing
#                      written in the root directory and --keep 1 deletes
#                      nothing there.
#   report_escapes     a user's process named ESC[2J...BEL (prctl), spinning
#                      in a function whose symbol holds ESC, BEL and C1 CSI,
#                      recorded with -a: neither `bpfprof report` nor
#                      bpfprof's log lines write a control byte; the report
#                      shows the names escaped (\x1b[2J, \u009b), and so does
#                      an error message naming a file of the user's.
#
# Usage: hostile_dirs.sh outdir_race|outdir_middle_symlink|report_escapes
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_dirs.sh outdir_race|outdir_middle_symlink|report_escapes" "$@"
TARGET=
RACER_PID=
BPF_PID=
OLD_PROTECTED=
STICKY_LINK=

cleanup() {
	[ -n "$RACER_PID" ] && kill -KILL "$RACER_PID" 2>/dev/null
	[ -n "$BPF_PID" ] && kill -KILL "$BPF_PID" 2>/dev/null
	[ -n "$OLD_PROTECTED" ] && sysctl -q -w fs.protected_symlinks="$OLD_PROTECTED"
	[ -n "$STICKY_LINK" ] && rm -f "$STICKY_LINK"
	[ -n "$TARGET" ] && rm -rf "$TARGET"
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user
# What continuous records: the directory is the point, not the samples.
sleep 600 &
IDLE_PID=$!
HOSTILE_CLEANUP+=("kill $IDLE_PID 2>/dev/null")

# The root directory the attack wants: 0755 root:root, one root file in it.
make_target() {
	TARGET=$(mktemp -d /var/tmp/bpfprof-target.XXXXXX) || fail "mktemp -d failed"
	chmod 0755 "$TARGET"
	echo secret >"$TARGET/keep"
	chmod 0644 "$TARGET/keep"
}

# What must not change: T's and its file's mode and owner, and what T holds.
target_state() {
	stat -c '%a %u:%g %n' "$TARGET" "$TARGET/keep"
	(cd "$TARGET" && find . | sort)
}

# as_root_bpfprof LIMIT ARGS...: bpfprof in the background as root. If it
# still runs after LIMIT seconds it accepted the directory: it is stopped
# with SIGINT (it writes its last snapshot and applies --keep, as it would),
# then SIGKILL after 20 s more. Sets STATUS and RAN (1: it was still running).
as_root_bpfprof() {
	local limit=$1
	shift
	RAN=0
	env --default-signal=INT,TERM "${BPFPROF_PREFIX[@]}" "$BPFPROF" "$@" \
		>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPF_PID=$!
	if ! wait_gone "$BPF_PID" "$limit"; then
		RAN=1
		log "   still running after ${limit}s: it accepted the directory; stopping it"
		kill -INT "$BPF_PID"
		wait_gone "$BPF_PID" 20 || kill -KILL "$BPF_PID" 2>/dev/null
	fi
	wait "$BPF_PID" 2>/dev/null
	STATUS=$?
	BPF_PID=
}

case $MODE in
outdir_race)
	make_target
	cat >"$WORK/racer.c" <<'EOF'
/* racer DIR TARGET: each directory made in DIR becomes a symlink to TARGET. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(8))), moved[512];
	int in = inotify_init1(IN_CLOEXEC), dfd = open(argv[1], O_PATH | O_DIRECTORY), swaps = 0;
	if (in < 0 || dfd < 0 || inotify_add_watch(in, argv[1], IN_CREATE | IN_ONLYDIR) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		for (char *p = buf; n > 0 && p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			p += sizeof(*e) + e->len;
			if (!(e->mask & IN_ISDIR) || strncmp(e->name, "new", 3) || strstr(e->name, ".moved"))
				continue;
			snprintf(moved, sizeof(moved), "%s.moved", e->name);
			if (!renameat(dfd, e->name, dfd, moved) && !symlinkat(argv[2], dfd, e->name))
				printf("swapped %s %d\n", e->name, ++swaps), fflush(stdout);
		}
	}
}
EOF
	gcc -O2 -o "$USER_DIR/racer" "$WORK/racer.c" || fail "cannot build the racer"
	chown "$USER_NAME:" "$USER_DIR/racer"
	: >"$WORK/racer.out"
	taskset -c 0 "${as_user[@]}" "$USER_DIR/racer" "$USER_DIR" "$TARGET" >"$WORK/racer.out" 2>&1 &
	RACER_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$WORK/racer.out" && break
		sleep 0.05
	done
	grep -q ready "$WORK/racer.out" || fail "the racer did not start: $(cat "$WORK/racer.out")"
	# The racer is live: a directory root makes in D becomes a link to T.
	mkdir "$USER_DIR/new-live"
	sleep 0.3
	[ -L "$USER_DIR/new-live" ] || fail "the racer did not swap root's new directory: the test tests nothing"
	ok "the racer swaps a directory root makes in $USER_DIR for a link to $TARGET"
	before=$(target_state)
	admin_uid=$((USER_UID + 1000))
	# Under sudo for an admin: bpfprof would chown what it makes to them.
	BPFPROF_PREFIX=(SUDO_UID="$admin_uid" SUDO_GID="$admin_uid" taskset -c 0 chrt --idle 0)
	TRIES=30
	for ((t = 1; t <= TRIES; t++)); do
		out="$USER_DIR/new$t/a/b/snaps"
		as_root_bpfprof 4 continuous -p "$IDLE_PID" --interval 1s --no-sched --out-dir "$out"
		after=$(target_state)
		if [ "$after" != "$before" ]; then
			log "T before:"
			indent <<<"$before"
			log "T after:"
			indent <<<"$after"
			fail "try $t: the racer changed $TARGET through bpfprof (mode, owner or contents; racer: $(tail -n 1 "$WORK/racer.out"))"
		fi
		[ "$STATUS" -ne 0 ] && [ "$RAN" -eq 0 ] || fail "try $t: bpfprof continuous accepted $out"
		[ -e "$USER_DIR/new$t" ] || [ -L "$USER_DIR/new$t" ] &&
			fail "try $t: bpfprof made $USER_DIR/new$t before it checked $USER_DIR"
		grep -q "snapshot directory $out is inside $USER_DIR, which uid $USER_UID owns" "$WORK/bpfprof.err" ||
			fail "try $t: not the expected one-line refusal: $(cat "$WORK/bpfprof.err")"
	done
	[ "$(wc -l <"$WORK/bpfprof.err")" -eq 1 ] || fail "the refusal is not one line: $(cat "$WORK/bpfprof.err")"
	log "   last refusal: $(cat "$WORK/bpfprof.err")"
	ok "$TRIES tries: each refused before anything was made; $TARGET kept mode, owner and contents"
	;;
outdir_middle_symlink)
	make_target
	# Root's snapshots in T/snaps, which --keep 1 would delete.
	mkdir -m 0700 "$TARGET/snaps"
	for d in 01 02 03; do
		echo old >"$TARGET/snaps/bpfprof-202001${d}T000000.000Z.json.gz"
	done
	before=$(target_state)
	"${as_user[@]}" ln -s "$TARGET" "$USER_DIR/link" || fail "the user cannot make a link"
	STICKY_LINK=$(mktemp -u /var/tmp/bpfprof-link.XXXXXX)
	"${as_user[@]}" ln -s "$TARGET" "$STICKY_LINK" || fail "the user cannot make a link in /var/tmp"
	OLD_PROTECTED=$(sysctl -n fs.protected_symlinks)
	# Off, as on systems without it: the kernel would follow the user's link for root.
	sysctl -q -w fs.protected_symlinks=0 || fail "cannot set fs.protected_symlinks"
	for link in "$USER_DIR/link" "$STICKY_LINK"; do
		out=$link/snaps
		log "\$ bpfprof continuous -p $IDLE_PID --interval 300ms --keep 1 --no-sched --out-dir $out"
		as_root_bpfprof 4 continuous -p "$IDLE_PID" --interval 300ms --keep 1 --no-sched --out-dir "$out"
		log "   exit status $STATUS"
		indent <"$WORK/bpfprof.err"
		after=$(target_state)
		if [ "$after" != "$before" ]; then
			log "T after:"
			indent <<<"$after"
			fail "bpfprof wrote or deleted in $TARGET through the link $link"
		fi
		[ "$STATUS" -ne 0 ] && [ "$RAN" -eq 0 ] || fail "bpfprof continuous accepted $out"
		[ "$(wc -l <"$WORK/bpfprof.err")" -eq 1 ] || fail "not a one-line error"
		grep -q "snapshot directory $out" "$WORK/bpfprof.err" || fail "the error does not name $out"
	done
	grep -q "$STICKY_LINK is a symbolic link of uid $USER_UID" "$WORK/bpfprof.err" ||
		fail "the error does not say whose link $STICKY_LINK is"
	ok "a link of the user's in the middle of --out-dir is refused with one line; $TARGET untouched"
	;;
report_escapes)
	cat >"$WORK/evil.c" <<'EOF'
#include <sys/prctl.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin_here(void) { for (unsigned long i = 0; i < 10000000UL; i++) sink += i; }
int main(void)
{
	prctl(PR_SET_NAME, "\033[2Jevil\007");
	for (;;)
		spin_here();
}
EOF
	gcc -O1 -fno-omit-frame-pointer -no-pie -o "$WORK/evil.tmp" "$WORK/evil.c" &&
		objcopy --redefine-sym "spin_here=spin"$'\e[2J\a\xc2\x9b'"1m_here" "$WORK/evil.tmp" "$USER_DIR/evil" ||
		fail "cannot build the workload"
	chown "$USER_NAME:" "$USER_DIR/evil"
	"${as_user[@]}" "$USER_DIR/evil" &
	VICTIM=$!
	HOSTILE_CLEANUP+=("kill -KILL $VICTIM 2>/dev/null")
	sleep 0.3
	grep -q evil "/proc/$VICTIM/comm" || fail "the workload did not name itself"
	run_bpfprof 60 -a -v -d 2 -o "$WORK/p.json.gz"
	expect_success
	{
		kill -KILL "$VICTIM"
		wait "$VICTIM"
	} 2>/dev/null
	control='[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]'
	LC_ALL=C grep -qaP "$control" "$WORK/bpfprof.err" && fail "bpfprof's log wrote a control byte: $(LC_ALL=C grep -naP "$control" "$WORK/bpfprof.err" | od -c | head)"
	log "\$ bpfprof report --rows 100000 $WORK/p.json.gz"
	"$BPFPROF" report --rows 100000 "$WORK/p.json.gz" >"$WORK/report.txt" 2>"$WORK/report.err" ||
		fail "bpfprof report failed: $(cat "$WORK/report.err")"
	LC_ALL=C grep -aF evil "$WORK/report.txt" | indent
	if LC_ALL=C grep -qaP "$control" "$WORK/report.txt" "$WORK/report.err"; then
		LC_ALL=C grep -naP "$control" "$WORK/report.txt" | head -n 3 | od -c | head -n 8 | indent
		fail "bpfprof report wrote control bytes to the terminal"
	fi
	grep -qF '\x1b[2Jevil\x07 (' "$WORK/report.txt" || fail "the report does not show the process name escaped"
	grep -qF 'spin\x1b[2J\x07\u009b1m_here' "$WORK/report.txt" || fail "the report does not show the function name escaped"
	ok "the report shows \\x1b[2Jevil\\x07 and spin\\x1b[2J\\x07\\u009b1m_here, and no control byte"
	# A log line that names what another user named: a file in their directory.
	evil_file="$USER_DIR/p"$'\e]0;pwned\a'".json.gz"
	"${as_user[@]}" sh -c 'echo junk >"$1"' sh "$evil_file" || fail "the user cannot make $evil_file"
	"$BPFPROF" report "$evil_file" >/dev/null 2>"$WORK/log.err" && fail "report took junk for a profile"
	log "   $(cat "$WORK/log.err")"
	LC_ALL=C grep -qaP "$control" "$WORK/log.err" && fail "an error message wrote the file name's control bytes"
	grep -qF 'p\x1b]0;pwned\x07.json.gz' "$WORK/log.err" || fail "the error message does not show the file name escaped"
	ok "an error message shows the file name escaped too"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
