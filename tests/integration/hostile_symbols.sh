#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# What a local user can do to a root bpfprof through the files it reads for
# names (issue 27), each attack run by a throw-away unprivileged user:
#
#   debuglink_huge     a stripped binary of the user's whose .gnu_debuglink
#                      names a symlink to a 1 TB sparse file (free to make),
#                      and in .debug/ a symlink to /dev/zero: bpfprof -a
#                      costs under 1 s and 100 MB more than without them,
#                      and the app is still profiled.
#   perfmap_bind       a JIT of the user's in a user and mount namespace of
#                      their own (unshare -Urm), where they bind-mounted a
#                      root-only 0600 file over its /tmp/perf-PID.map: the
#                      file's line never becomes a function name.
#   perfmap_foreign    root's JIT process has no perf map; the user writes
#                      /tmp/perf-<its pid>.map naming ATTACKER_CHOSEN_NAME:
#                      refused (not owned by the process's user or root).
#   perfmap_fuse       the user's JIT, in a root of its own, has a FUSE mount
#                      (allow_other) at its /tmp whose server holds every read:
#                      its perf map there is refused before any read, said
#                      once, and the recording ends.
#   jitdump_foreign    the user's JIT maps a jitdump (jit-N.dump) that another
#                      user owns, naming its code: refused (only the process's
#                      user's or root's is read), the code named from its own
#                      perf map; the same file of the user's own is read.
#   jitdump_broken     the user's JIT maps a jitdump whose first record claims
#                      1 GiB: read up to there, said once, the code named from
#                      its perf map, the recording whole.
#   debuginfod_buildid a debuginfod server that answers every build-id with
#                      another binary's debug file: refused, said once, and
#                      none of that file's names in the profile; and a cache
#                      directory (DEBUGINFOD_CACHE_PATH) the user owns:
#                      refused, nothing fetched.
#
# Usage: hostile_symbols.sh MODE (JIT_ANON: the jit_anon workload)
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: hostile_symbols.sh debuglink_huge|perfmap_bind|perfmap_foreign|perfmap_fuse|jitdump_foreign|jitdump_broken|debuginfod_buildid}
: "${JIT_ANON:?JIT_ANON is not set}"
. "$(dirname "$0")/hostile_common.sh"
SECRET_DIR=
VICTIM_PID=
SERVER_PID=

cleanup() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
	[ -n "$SERVER_PID" ] && kill -KILL "$SERVER_PID" 2>/dev/null
	[ -n "$USER_NAME" ] && pkill -KILL -u "$USER_NAME" 2>/dev/null
	[ -n "$SECRET_DIR" ] && rm -rf "$SECRET_DIR"
	[ -n "$VICTIM_PID" ] && rm -f "/tmp/perf-$VICTIM_PID.map"
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user

# count_name PROFILE NAME: how many times NAME is in the profile's strings.
count_name() {
	zcat "$1" | grep -o "$2" | wc -l
}

# start_user_jit [ENV...]: the user's JIT (jit_anon, 20 s) with ENV; sets VICTIM_PID.
start_user_jit() {
	local i
	# Emptied here: the background job's redirection may come after the wait below looks.
	: >"$WORK/jit.out"
	env "$@" "${as_user[@]}" "$JIT_ANON" 20 "$MODE" >"$WORK/jit.out" 2>"$WORK/jit.err" &
	VICTIM_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/jit.out" ] && break
		sleep 0.05
	done
	[ "$(head -n 1 "$WORK/jit.out")" = "$VICTIM_PID" ] ||
		fail "jit_anon ($VICTIM_PID) did not print its pid: $(cat "$WORK/jit.out" "$WORK/jit.err")"
}

# app_samples PROFILE PID: the samples of PID's threads.
app_samples() {
	"$NODE" -e 'const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
		console.log(p.threads.filter((t) => t.pid === process.argv[2] || t.pid.startsWith(process.argv[2] + "."))
			.reduce((s, t) => s + t.samples.length, 0));' "$1" "$2"
}

# build_app DIR NAME FUNCTION: a stripped C program DIR/NAME spinning in FUNCTION, its debug file DIR/NAME.debug.
build_app() {
	cat >"$1/$2.c" <<EOF
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void $3(void) { for (unsigned long i = 0; i < 100000000UL; i++) sink += i; }
int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 100; for (int i = 0; i < n; i++) $3(); return 0; }
EOF
	gcc -O1 -g -o "$1/$2" "$1/$2.c" &&
		objcopy --only-keep-debug "$1/$2" "$1/$2.debug" &&
		strip --strip-all "$1/$2" || fail "cannot build $2"
}

# peak_rss_kb: the peak RSS of the last run_bpfprof under BPFPROF_PREFIX=(/usr/bin/time ...).
peak_rss_kb() {
	awk '/maxrss_kb/ { print $2 }' "$WORK/time.txt"
}

case $MODE in
debuglink_huge)
	build_app "$USER_DIR" app hostile_spin
	objcopy --add-gnu-debuglink="$USER_DIR/app.debug" "$USER_DIR/app" || fail "cannot add the debug link"
	mv "$USER_DIR/app.debug" "$USER_DIR/app.debug.real"
	chown -R "$USER_NAME:" "$USER_DIR"
	BPFPROF_PREFIX=(/usr/bin/time -f "maxrss_kb %M" -o "$WORK/time.txt")
	# Control: no debug file at all.
	"${as_user[@]}" "$USER_DIR/app" 1000 &
	VICTIM_PID=$!
	run_bpfprof 120 -a -d 2 -o "$WORK/control.json.gz"
	expect_success
	control_s=$ELAPSED control_kb=$(peak_rss_kb)
	kill -KILL "$VICTIM_PID"
	wait "$VICTIM_PID" 2>/dev/null
	# The attack, all free: a terabyte of holes, and a device.
	"${as_user[@]}" truncate -s 1T "$USER_DIR/huge" || fail "cannot make a sparse file"
	"${as_user[@]}" ln -s "$USER_DIR/huge" "$USER_DIR/app.debug"
	"${as_user[@]}" mkdir "$USER_DIR/.debug"
	"${as_user[@]}" ln -s /dev/zero "$USER_DIR/.debug/app.debug"
	log "   $(ls -l "$USER_DIR/app.debug" "$USER_DIR/.debug/app.debug" | tr '\n' ';')"
	"${as_user[@]}" "$USER_DIR/app" 1000 &
	VICTIM_PID=$!
	run_bpfprof 120 -a -d 2 -o "$WORK/p.json.gz"
	expect_success
	attack_kb=$(peak_rss_kb)
	log "   control ${control_s}s, $((control_kb / 1024)) MiB; attack ${ELAPSED}s, $((attack_kb / 1024)) MiB"
	[ "$attack_kb" -lt $((control_kb + 100 * 1024)) ] ||
		fail "the 1 TB debug link cost $(((attack_kb - control_kb) / 1024)) MiB of peak RSS (want < 100)"
	# The cost itself is a refusal after one fstat; the margin is this busy machine's noise.
	awk -v a="$ELAPSED" -v c="$control_s" 'BEGIN { exit !(a < c + 3) }' ||
		fail "bpfprof -a took ${ELAPSED}s beside a 1 TB debug link, ${control_s}s without"
	[ -s "$WORK/p.json.gz" ] || fail "no profile was written"
	n=$(app_samples "$WORK/p.json.gz" "$VICTIM_PID")
	[ "$n" -ge 10 ] || fail "the app has $n samples"
	ok "a debug link to a 1 TB sparse file and to /dev/zero: ${ELAPSED}s (${control_s}s without), peak RSS $((attack_kb / 1024)) MiB ($((control_kb / 1024)) without), the app profiled ($n samples)"
	;;
perfmap_bind)
	# Root's secret: a 0600 file the user can name (its directory is searchable) but not read.
	SECRET_DIR=$(mktemp -d /var/tmp/bpfprof-secret.XXXXXX) || fail "mktemp -d failed"
	chmod 0755 "$SECRET_DIR"
	printf '0 7fffffffffff root_only_secret_symbol\n' >"$SECRET_DIR/secret"
	chmod 0600 "$SECRET_DIR/secret"
	install -m 0755 -o "$USER_NAME" "$JIT_ANON" "$USER_DIR/jit_anon" || fail "cannot install jit_anon"
	# In its own user and mount namespace: the JIT writes its map, then the user mounts the secret over it.
	cat >"$USER_DIR/attack.sh" <<'EOF'
"$1" 20 >"$2/jit.out" 2>"$2/jit.err" &
pid=$!
for i in $(seq 100); do [ -s "$2/jit.out" ] && break; sleep 0.05; done
mount --bind "$3" "/tmp/perf-$pid.map" && echo "$pid" >"$2/mounted"
wait
EOF
	"${as_user[@]}" unshare -Urm sh "$USER_DIR/attack.sh" "$USER_DIR/jit_anon" "$USER_DIR" "$SECRET_DIR/secret" \
		2>"$WORK/attack.err" &
	for ((i = 0; i < 100; i++)); do
		[ -s "$USER_DIR/mounted" ] && break
		sleep 0.05
	done
	[ -s "$USER_DIR/mounted" ] || fail "the user could not bind-mount the secret: $(cat "$WORK/attack.err" "$USER_DIR/jit.err" 2>/dev/null)"
	VICTIM_PID=$(cat "$USER_DIR/mounted")
	grep -q root_only_secret_symbol "/proc/$VICTIM_PID/root/tmp/perf-$VICTIM_PID.map" ||
		fail "the JIT's /tmp/perf-$VICTIM_PID.map is not the secret: the test tests nothing"
	log "   in the JIT's mount namespace, /tmp/perf-$VICTIM_PID.map is $SECRET_DIR/secret (0600 root)"
	run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	secret=$(count_name "$WORK/p.json.gz" root_only_secret_symbol)
	[ "$secret" -eq 0 ] || fail "the root-only file bind-mounted over the perf map is in the profile ($secret times)"
	said=$(grep -c "perf map of process $VICTIM_PID is not read: another file is mounted over it" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the refusal was said $said times, not once"
	n=$(app_samples "$WORK/p.json.gz" "$VICTIM_PID")
	[ "$n" -ge 10 ] || fail "the JIT has $n samples"
	ok "a root-only file bind-mounted over the JIT's perf map is not read ($n samples, the secret 0 times)"
	;;
perfmap_foreign)
	# Root's JIT: its own map is removed, as by a runtime that writes none.
	"$JIT_ANON" 20 >"$WORK/jit.out" 2>"$WORK/jit.err" &
	VICTIM_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/jit.out" ] && break
		sleep 0.05
	done
	[ "$(head -n 1 "$WORK/jit.out")" = "$VICTIM_PID" ] || fail "jit_anon did not print its pid: $(cat "$WORK/jit.err")"
	rm -f "/tmp/perf-$VICTIM_PID.map"
	"${as_user[@]}" sh -c "printf '0 7fffffffffff ATTACKER_CHOSEN_NAME\n' >/tmp/perf-$VICTIM_PID.map" ||
		fail "the user cannot write /tmp/perf-$VICTIM_PID.map"
	log "   /tmp/perf-$VICTIM_PID.map: $(stat -c '%U %a' "/tmp/perf-$VICTIM_PID.map"), for root's process $VICTIM_PID"
	run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	n=$(app_samples "$WORK/p.json.gz" "$VICTIM_PID")
	[ "$n" -ge 10 ] || fail "the JIT has $n samples"
	claimed=$(count_name "$WORK/p.json.gz" ATTACKER_CHOSEN_NAME)
	[ "$claimed" -eq 0 ] || fail "root's JIT code is named by the user's map ($claimed times)"
	said=$(grep -c "perf map of process $VICTIM_PID is not read: neither its user nor root owns it" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the refusal was said $said times, not once"
	ok "a map another user wrote for root's JIT is refused ($n samples, ATTACKER_CHOSEN_NAME 0 times)"
	;;
perfmap_fuse)
	: "${FUSEHOLD:?FUSEHOLD is not set}"
	command -v fusermount3 >/dev/null || fail "fusermount3 is not installed"
	# A FUSE server that answers all but reads, mounted allow_other: what any
	# user may mount where /etc/fuse.conf says user_allow_other, and have at
	# /tmp in a mount namespace of their own (root mounts it here, as this
	# machine's may not say so). Without allow_other, root's lookups there
	# are refused before the server is asked. Every name is its file.
	mkdir -p "$USER_DIR/root/tmp" || fail "cannot make the JIT's root"
	"$FUSEHOLD" -a -n '*' "$USER_DIR/root/tmp" sleep 600 >"$WORK/fusehold.out" 2>&1 &
	fuse_pid=$!
	HOSTILE_CLEANUP+=("kill -KILL $fuse_pid 2>/dev/null; umount -l '$USER_DIR/root/tmp' 2>/dev/null")
	for ((i = 0; i < 100; i++)); do
		grep -q " $USER_DIR/root/tmp fuse" /proc/mounts && break
		sleep 0.05
	done
	grep -q " $USER_DIR/root/tmp fuse" /proc/mounts || fail "fusehold did not mount: $(cat "$WORK/fusehold.out")"
	start_user_jit JIT_ANON_CHROOT="$USER_DIR/root" JIT_ANON_NO_PERF_MAP=1
	# Its map, read, would hold the ring's reader for ever, unkillable.
	run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	n=$(app_samples "$WORK/p.json.gz" "$VICTIM_PID")
	[ "$n" -ge 10 ] || fail "the JIT has $n samples"
	said=$(grep -c "perf map of process $VICTIM_PID is not read: it is on a FUSE file system" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the perf map on FUSE was said $said times, not once"
	ok "a perf map on a FUSE mount that holds its reads: refused, said once, the recording ended in ${ELAPSED}s ($n samples)"
	;;
jitdump_foreign | jitdump_broken)
	# user_jit DUMP [ENV...]: the user's JIT, its jitdump DUMP; sets VICTIM_PID.
	user_jit() {
		local dump=$1
		shift
		start_user_jit JIT_ANON_JITDUMP="$dump" "$@"
		grep -q "jit-[0-9]*\.dump" "/proc/$VICTIM_PID/maps" || fail "the JIT did not map its jitdump"
	}
	# profile_jit NAME: bpfprof -p on the user's JIT; its samples in $n.
	profile_jit() {
		run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/$1.json.gz"
		expect_success
		n=$(app_samples "$WORK/$1.json.gz" "$VICTIM_PID")
		[ "$n" -ge 10 ] || fail "the JIT has $n samples"
		kill -KILL "$VICTIM_PID"
		wait "$VICTIM_PID" 2>/dev/null
		rm -f "/tmp/perf-$VICTIM_PID.map"
	}
	if [ "$MODE" = jitdump_foreign ]; then
		make_other_user
		"${as_other[@]}" sh -c "umask 0; : >'$OTHER_DIR/jit-1.dump'" || fail "the other user cannot make its file"
		user_jit "$OTHER_DIR/jit-1.dump"
		log "   $OTHER_DIR/jit-1.dump: $(stat -c '%U %a' "$OTHER_DIR/jit-1.dump"), mapped by the user's $VICTIM_PID"
		profile_jit foreign
		[ "$(count_name "$WORK/foreign.json.gz" bpfprof_jitdump_name)" -eq 0 ] ||
			fail "the user's code is named from another user's jitdump"
		[ "$(count_name "$WORK/foreign.json.gz" bpfprof_anon_jit)" -gt 0 ] ||
			fail "the user's code is not named from its own perf map"
		ok "a jitdump another user owns is not read ($n samples named from the JIT's own map)"
		# The control: the user's own jitdump is read, so the refusal above was the owner's.
		as_user_in_dir sh -c ': >jit-2.dump' || fail "the user cannot make its jitdump"
		user_jit "$USER_DIR/jit-2.dump"
		profile_jit own
		[ "$(count_name "$WORK/own.json.gz" bpfprof_jitdump_name)" -gt 0 ] ||
			fail "the user's own jitdump is not read"
		ok "the user's own jitdump names its code ($n samples)"
	else
		as_user_in_dir sh -c ': >jit-3.dump' || fail "the user cannot make its jitdump"
		user_jit "$USER_DIR/jit-3.dump" JIT_ANON_JITDUMP_BROKEN=1
		profile_jit broken
		[ "$(count_name "$WORK/broken.json.gz" bpfprof_jitdump_name)" -eq 0 ] ||
			fail "a load past the broken record was read"
		[ "$(count_name "$WORK/broken.json.gz" bpfprof_anon_jit)" -gt 0 ] ||
			fail "the code is not named from the JIT's perf map"
		said=$(grep -c "jitdump of process $VICTIM_PID is read only up to a record that is not valid" "$WORK/bpfprof.err")
		[ "$said" -eq 1 ] || fail "the broken jitdump was said $said times, not once"
		ok "a jitdump broken at its first record: read up to it, said once, the code named from the map ($n samples)"
	fi
	;;
debuginfod_buildid)
	command -v python3 >/dev/null || fail "python3 is not installed"
	build_app "$WORK" app hostile_spin
	build_app "$WORK" other wrong_buildid_symbol
	# The server answers every build-id with the other program's debug file.
	python3 -c '
import http.server, sys
body = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if not self.path.endswith("/debuginfo"):
            self.send_error(404); return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        sys.stderr.write(self.path + "\n")
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
' "$WORK/port" "$WORK/other.debug" >"$WORK/port" 2>"$WORK/server.log" &
	SERVER_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/port" ] && break
		sleep 0.05
	done
	[ -s "$WORK/port" ] || fail "the fake debuginfod server did not start"
	"$WORK/app" 1000 &
	VICTIM_PID=$!
	DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$WORK/port") XDG_CACHE_HOME=$WORK/xdg \
		run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	grep -q /debuginfo "$WORK/server.log" || fail "bpfprof did not ask the server: the test tests nothing"
	said=$(grep -c "is not a debug file of that build-id" "$WORK/bpfprof.err")
	[ "$said" -eq 1 ] || fail "the wrong file was said $said times, not once: $(grep debuginfod "$WORK/bpfprof.err")"
	wrong=$(count_name "$WORK/p.json.gz" wrong_buildid_symbol)
	[ "$wrong" -eq 0 ] || fail "the other program's debug file named the app's code ($wrong times)"
	ok "a debug file of another build-id from the server is refused, said once: $(grep -m 1 "is not a debug file" "$WORK/bpfprof.err")"
	# A cache directory the user owns: they could file anything under any build-id there.
	"${as_user[@]}" mkdir "$USER_DIR/cache"
	asked=$(grep -c /debuginfo "$WORK/server.log")
	DEBUGINFOD_URLS=http://127.0.0.1:$(cat "$WORK/port") DEBUGINFOD_CACHE_PATH=$USER_DIR/cache \
		run_bpfprof 60 -p "$VICTIM_PID" -d 1 -o "$WORK/cache.json.gz"
	expect_success
	grep -q "debuginfod: the cache directory $USER_DIR/cache belongs to another user" "$WORK/bpfprof.err" ||
		fail "a cache directory of another user was not refused: $(grep debuginfod "$WORK/bpfprof.err")"
	[ "$(grep -c /debuginfo "$WORK/server.log")" -eq "$asked" ] || fail "bpfprof fetched into another user's cache"
	ok "a cache directory of another user is refused: $(grep -m 1 "the cache directory" "$WORK/bpfprof.err")"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
