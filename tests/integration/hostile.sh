#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# What a local user can do to a root bpfprof (issue 20), each attack run by
# a throw-away unprivileged user made for the test and removed after it:
#
#   debuglink_fifo    a stripped binary whose .gnu_debuglink file is a FIFO
#                     in the user's own directory: bpfprof -a must neither
#                     block on it nor lose the profile.
#   perfmap_root      a JIT in a root of the user's own (a user namespace,
#                     chroot) whose /tmp is an absolute symlink to a 0700
#                     root-only directory holding a perf map of its pid: the
#                     profile must name the JIT code from the user's own map,
#                     never from root's.
#   perfmap_huge      a JIT that appends 300 MB to its perf map: bpfprof
#                     reads a bounded part, says so once, stays small and
#                     fast, and still names the code the map's first line
#                     describes.
#   outdir_planted    continuous --out-dir at a path where the user planted a
#                     symlink to their own directory, or made the directory
#                     theirs: refused, nothing written there.
#   cgroup_claim      a cgroup subtree delegated to the user, where they name
#                     a cgroup docker-<64 hex>.scope and a process of theirs
#                     runs: its label and Process marker say the container
#                     name is that user's claim (uid N's cgroup).
#   python_fake       a program of the user's that claims to be CPython 3.11
#                     (FAKEPY): its frames link to themselves, its code
#                     object's name and line table are 2^40 long, its file is
#                     /etc/shadow. The walk stops at its bound, the names are
#                     refused, the recording ends on time, and bpfprof view
#                     does not serve /etc/shadow although the profile names it.
#                     Beside it, FAKEPY cycle: no pthread key to use, and a
#                     thread list that loops without its thread: the list
#                     walk gives up at its bound, no Python frames (issue 40).
#   php_fake          a program of the user's that claims to be PHP 8.2
#                     (FAKEPHP): its frame is its own caller, its function's
#                     name 2^40 long with a newline and an escape in it, its
#                     class's name the class itself, its file /etc/shadow.
#                     The walk stops at its bound, the names are cut to
#                     their room with their control bytes replaced, and the
#                     recording ends on time.
#   retention_planted continuous (as sudo for that user) in the user's
#                     directory, where they planted snapshot names dated in
#                     the future and root planted one owned by a third uid:
#                     retention keeps the newest real snapshots and deletes
#                     nothing planted.
#
# Usage: hostile.sh MODE (JIT_ANON: the jit_anon workload)
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: hostile.sh debuglink_fifo|perfmap_root|perfmap_huge|outdir_planted|cgroup_claim|retention_planted|python_fake|php_fake}
: "${JIT_ANON:?JIT_ANON is not set}"
. "$(dirname "$0")/hostile_common.sh"
SECRET_DIR=
DELEGATED=
VICTIM_PID=
CYCLE_PID=
BPF_PID=

cleanup() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
	[ -n "$CYCLE_PID" ] && kill -KILL "$CYCLE_PID" 2>/dev/null
	[ -n "$BPF_PID" ] && kill -KILL "$BPF_PID" 2>/dev/null
	[ -n "$USER_NAME" ] && pkill -KILL -u "$USER_NAME" 2>/dev/null
	[ -n "$SECRET_DIR" ] && rm -rf "$SECRET_DIR"
	[ -n "$VICTIM_PID" ] && rm -f "/tmp/perf-$VICTIM_PID.map"
	if [ -n "$DELEGATED" ]; then
		sleep 0.2 # the killed processes leave their cgroup
		rmdir "$DELEGATED"/*/ "$DELEGATED" 2>/dev/null
	fi
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user

# start_jit [ENV=VALUE...]: jit_anon as the user, spinning 20 s of CPU; sets VICTIM_PID.
start_jit() {
	install -m 0755 -o "$USER_NAME" "$JIT_ANON" "$USER_DIR/jit_anon" || fail "cannot install jit_anon"
	env "$@" "${as_user[@]}" "$USER_DIR/jit_anon" 20 >"$WORK/jit.out" 2>"$WORK/jit.err" &
	VICTIM_PID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/jit.out" ] && break
		kill -0 "$VICTIM_PID" 2>/dev/null || fail "jit_anon exited early: $(cat "$WORK/jit.err")"
		sleep 0.05
	done
	[ "$(head -n 1 "$WORK/jit.out")" = "$VICTIM_PID" ] || fail "jit_anon did not print its pid: $(cat "$WORK/jit.out" "$WORK/jit.err")"
}

# names_in PROFILE NAME: how many times NAME is in the profile's strings.
count_name() {
	zcat "$1" | grep -o "$2" | wc -l
}

case $MODE in
python_fake)
	: "${FAKEPY:?FAKEPY is not set}"
	install -m 0755 -o "$USER_NAME" "$FAKEPY" "$USER_DIR/fakepy" || fail "cannot install fakepy"
	"${as_user[@]}" "$USER_DIR/fakepy" 30 >"$WORK/fakepy.out" &
	VICTIM_PID=$!
	"${as_user[@]}" "$USER_DIR/fakepy" 30 cycle >"$WORK/fakepy-cycle.out" &
	CYCLE_PID=$!
	# Each says "ready" once its fake interpreter is laid out (a busy machine takes its time).
	for f in fakepy fakepy-cycle; do
		for ((i = 0; i < 600; i++)); do
			grep -q '^ready' "$WORK/$f.out" 2>/dev/null && break
			sleep 0.05
		done
		grep -q '^ready' "$WORK/$f.out" || fail "$f did not start: $(cat "$WORK/$f.out")"
	done
	run_bpfprof 60 -v -p "$VICTIM_PID,$CYCLE_PID" -d 2 -o "$WORK/p.json.gz"
	kill -KILL "$CYCLE_PID" 2>/dev/null
	expect_success
	awk -v t="$ELAPSED" 'BEGIN { exit !(t < 20) }' || fail "bpfprof took ${ELAPSED}s for a 2 s recording"
	grep -q "^bpfprof: debug: Python frames: 2 Python processes at the start" "$WORK/bpfprof.err" ||
		fail "bpfprof did not take both fakepys for Python processes: the test tests nothing"
	"$NODE" --input-type=module -e '
import { Profile, CATEGORY_PYTHON } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
let samples = 0, withPy = 0;
for (const t of p.threadsOf(process.argv[2])) for (const s of p.samplesOf(t)) {
	samples++;
	if (s.path.some((f) => p.frameCategory(f) === CATEGORY_PYTHON))
		withPy++;
}
console.log(`fakepy cycle: ${withPy} of ${samples} samples with Python frames`);
process.exit(samples > 100 && withPy === 0 ? 0 : 1);
' "$WORK/p.json.gz" "$CYCLE_PID" >"$WORK/cycle.out" || fail "$(cat "$WORK/cycle.out") (need > 100 samples, none)"
	ok "$(cat "$WORK/cycle.out")"
	"$NODE" --input-type=module -e '
import { Profile, CATEGORY_PYTHON } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
let samples = 0, most = 0;
const names = new Set();
for (const t of p.threadsOf(process.argv[2])) for (const s of p.samplesOf(t)) {
	const py = s.path.filter((f) => p.frameCategory(f) === CATEGORY_PYTHON);
	py.forEach((f) => names.add(p.frameFuncName(f)));
	if (py.length) samples++;
	most = Math.max(most, py.length);
}
console.log(`${samples} samples with Python frames, at most ${most} a sample; names: ${[...names].join(", ")}`);
process.exit(samples > 100 && most <= 128 && names.size === 1 && names.has("[unknown Python function]") ? 0 : 1);
' "$WORK/p.json.gz" "$VICTIM_PID" >"$WORK/check.out" || fail "fakepy's Python frames: $(cat "$WORK/check.out")"
	ok "$(cat "$WORK/check.out")"
	# The file it names is in the profile; the source view must still not serve it.
	"$BPFPROF" view "$WORK/p.json.gz" --no-open >"$WORK/view.out" 2>"$WORK/view.err" &
	BPF_PID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^bpfprof: serving ' "$WORK/view.err" && break
		sleep 0.05
	done
	URL=$(sed -n 's/^bpfprof: serving .* at \(http:[^ ]*\) until Ctrl-C$/\1/p' "$WORK/view.err")
	[ -n "$URL" ] || fail "bpfprof view printed no URL: $(cat "$WORK/view.err")"
	got=$(curl -s -X POST --data-binary '{"debugName":"fakepy","debugId":"0","file":"/etc/shadow"}' "${URL%/*}/source/v1")
	grep -q root: <<<"$got" && fail "/source/v1 served /etc/shadow to a profile a user's fake interpreter named it in"
	ok "/source/v1 refuses /etc/shadow, which fakepy named as its source: ${got:0:120}"
	kill -INT "$BPF_PID"
	wait "$BPF_PID"
	BPF_PID=
	;;
php_fake)
	: "${FAKEPHP:?FAKEPHP is not set}"
	install -m 0755 -o "$USER_NAME" "$FAKEPHP" "$USER_DIR/fakephp" || fail "cannot install fakephp"
	"${as_user[@]}" "$USER_DIR/fakephp" 30 >"$WORK/fakephp.out" &
	VICTIM_PID=$!
	# It prints its pid once its fake engine is laid out (a busy machine takes its time).
	for ((i = 0; i < 600; i++)); do
		[ -s "$WORK/fakephp.out" ] && break
		sleep 0.05
	done
	[ -s "$WORK/fakephp.out" ] || fail "fakephp did not start"
	run_bpfprof 60 -v -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	awk -v t="$ELAPSED" 'BEGIN { exit !(t < 20) }' || fail "bpfprof took ${ELAPSED}s for a 2 s recording"
	grep -q "^bpfprof: debug: PHP frames: 1 PHP processes at the start" "$WORK/bpfprof.err" ||
		fail "bpfprof did not take fakephp for a PHP process: the test tests nothing"
	"$NODE" --input-type=module -e '
import { Profile, CATEGORY_PHP } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
let samples = 0, most = 0, longest = 0, control = 0;
for (const t of p.threads) for (const s of p.samplesOf(t)) {
	const php = s.path.filter((f) => p.frameCategory(f) === CATEGORY_PHP);
	for (const f of php) {
		const name = p.frameFuncName(f);
		longest = Math.max(longest, name.length);
		control += /[\x00-\x1f]/.test(name);
	}
	if (php.length) samples++;
	most = Math.max(most, php.length);
}
console.log(`${samples} samples with PHP frames, at most ${most} a sample; longest name ${longest}, ${control} with control bytes`);
// PHP_NAME_MAX: a name and its class cut to 159 bytes (as UTF-16 units, fewer or as many).
process.exit(samples > 100 && most <= 128 && longest < 160 && !control ? 0 : 1);
' "$WORK/p.json.gz" >"$WORK/check.out" || fail "fakephp's PHP frames: $(cat "$WORK/check.out")"
	ok "$(cat "$WORK/check.out")"
	;;
debuglink_fifo)
	cat >"$USER_DIR/app.c" <<'EOF'
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void hostile_spin(void) { for (unsigned long i = 0; i < 100000000UL; i++) sink += i; }
int main(int argc, char **argv) { int n = argc > 1 ? atoi(argv[1]) : 100; for (int i = 0; i < n; i++) hostile_spin(); return 0; }
EOF
	gcc -O1 -g -o "$USER_DIR/app" "$USER_DIR/app.c" &&
		objcopy --only-keep-debug "$USER_DIR/app" "$USER_DIR/app.debug" &&
		strip --strip-all "$USER_DIR/app" &&
		objcopy --add-gnu-debuglink="$USER_DIR/app.debug" "$USER_DIR/app" || fail "cannot build the stripped app"
	# Where the debug link is looked for: beside it, and in .debug/ beside it.
	rm "$USER_DIR/app.debug"
	mkdir "$USER_DIR/.debug"
	mkfifo "$USER_DIR/app.debug" "$USER_DIR/.debug/app.debug"
	chown -R "$USER_NAME:" "$USER_DIR"
	"${as_user[@]}" "$USER_DIR/app" 1000 &
	VICTIM_PID=$!
	run_bpfprof 60 -a -d 3 -o "$WORK/p.json.gz"
	expect_success
	[ -p "$USER_DIR/app.debug" ] || fail "the FIFO is gone"
	"$NODE" -e 'const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
		const n = p.threads.filter((t) => t.pid === process.argv[2] || t.pid.startsWith(process.argv[2] + ".")).reduce((s, t) => s + t.samples.length, 0);
		if (n < 10) { console.error("the app has " + n + " samples"); process.exit(1); }' "$WORK/p.json.gz" "$VICTIM_PID" ||
		fail "the profile has too few samples of the app"
	ok "bpfprof -a finished in ${ELAPSED}s beside a FIFO named like the app's debug file, and profiled the app"
	;;
perfmap_root)
	# Root's secret: a perf map only root may read, in a 0700 directory.
	SECRET_DIR=$(mktemp -d /var/tmp/bpfprof-secret.XXXXXX) || fail "mktemp -d failed"
	chmod 0700 "$SECRET_DIR"
	# The user's root: /tmp there is an absolute link to the secret's path,
	# which inside that root is the user's own directory.
	mkdir -p "$USER_DIR/root$SECRET_DIR"
	ln -s "$SECRET_DIR" "$USER_DIR/root/tmp"
	chown -R "$USER_NAME:" "$USER_DIR/root"
	start_jit JIT_ANON_CHROOT="$USER_DIR/root"
	printf '0 7fffffffffff root_only_secret_symbol\n' >"$SECRET_DIR/perf-$VICTIM_PID.map"
	[ -s "$USER_DIR/root$SECRET_DIR/perf-$VICTIM_PID.map" ] || fail "jit_anon wrote no perf map in its own root"
	log "   the user's map: $(cat "$USER_DIR/root$SECRET_DIR/perf-$VICTIM_PID.map"); root's: $(cat "$SECRET_DIR/perf-$VICTIM_PID.map")"
	run_bpfprof 60 -p "$VICTIM_PID" -d 2 -o "$WORK/p.json.gz"
	expect_success
	secret=$(count_name "$WORK/p.json.gz" root_only_secret_symbol)
	own=$(count_name "$WORK/p.json.gz" bpfprof_anon_jit)
	[ "$secret" -eq 0 ] || fail "root's perf map is in the profile ($secret times)"
	[ "$own" -ge 1 ] || fail "the JIT's own map did not name its code"
	ok "the JIT code is named from the map in the user's root; root's map stayed out"
	;;
perfmap_huge)
	start_jit
	map=/tmp/perf-$VICTIM_PID.map
	# The control: the same recording with the map as the JIT wrote it, for
	# this build's and this machine's own RSS (ASan's is 2-3 times release's).
	BPFPROF_PREFIX=(/usr/bin/time -f "maxrss_kb %M" -o "$WORK/time.txt")
	run_bpfprof 120 -p "$VICTIM_PID" -d 3 -o "$WORK/control.json.gz"
	expect_success
	control_kb=$(awk '/maxrss_kb/ { print $2 }' "$WORK/time.txt")
	log "   control: peak RSS $((control_kb / 1024)) MiB with a $(stat -c %s "$map")-byte map"
	# 300 MB of valid lines after the real one, appended by the user.
	"${as_user[@]}" sh -c "yes '7f0000001000 10 bpfprof_junk_symbol_with_a_rather_long_name_to_fill_memory' | head -c 300M >>$map" ||
		fail "cannot grow the perf map"
	log "   perf map: $(stat -c %s "$map") bytes"
	BPFPROF_PREFIX=(/usr/bin/time -f "maxrss_kb %M" -o "$WORK/time.txt")
	run_bpfprof 120 -p "$VICTIM_PID" -d 3 -o "$WORK/p.json.gz"
	expect_success
	rss_kb=$(awk '/maxrss_kb/ { print $2 }' "$WORK/time.txt")
	log "   peak RSS $((rss_kb / 1024)) MiB, ${ELAPSED}s"
	# Not held whole: less than the map's own size above the control. Its
	# limits (perf_map.c) keep some 90 MB of it (+105 MiB here, +188 under ASan).
	[ "$rss_kb" -lt $((control_kb + $(stat -c %s "$map") / 1024)) ] ||
		fail "peak RSS $((rss_kb / 1024)) MiB for a 3 s recording of one process, $((control_kb / 1024)) MiB with the JIT's own map: the 300 MB map was held"
	warned=$(grep -c "perf map of process $VICTIM_PID is too large" "$WORK/bpfprof.err")
	[ "$warned" -eq 1 ] || fail "the limit was said $warned times, not once"
	[ "$(count_name "$WORK/p.json.gz" bpfprof_anon_jit)" -ge 1 ] || fail "the map's first line no longer names the code"
	ok "a 300 MB perf map: peak RSS $((rss_kb / 1024)) MiB (control $((control_kb / 1024)) MiB), one warning, the JIT code still named"
	;;
outdir_planted)
	mkdir "$USER_DIR/theirs"
	chown "$USER_NAME:" "$USER_DIR/theirs"
	planted=$(mktemp -u /var/tmp/bpfprof-snapshots.XXXXXX)
	"${as_user[@]}" ln -s "$USER_DIR/theirs" "$planted" || fail "the user cannot plant a link"
	run_bpfprof 60 continuous -a --interval 1s --out-dir "$planted"
	rm -f "$planted"
	[ "$STATUS" -ne 0 ] || fail "bpfprof continuous wrote through a planted symlink"
	grep -q "snapshot directory $planted is a symbolic link" "$WORK/bpfprof.err" || fail "no clear error for the symlink"
	# The directory itself is theirs.
	run_bpfprof 60 continuous -a --interval 1s --out-dir "$USER_DIR/theirs"
	[ "$STATUS" -ne 0 ] || fail "bpfprof continuous wrote into another user's directory"
	# Its parent is theirs too, and parents are checked first (issue 27).
	grep -qE "belongs to uid $USER_UID, not to you|inside $USER_DIR, which uid $USER_UID owns" "$WORK/bpfprof.err" ||
		fail "no clear error for the foreign directory"
	[ -z "$(ls -A "$USER_DIR/theirs")" ] || fail "something was written into the user's directory: $(ls -A "$USER_DIR/theirs")"
	ok "a planted symlink and another user's directory are refused, each with its reason"
	;;
cgroup_claim)
	cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	[ -n "$cg2" ] || fail "no cgroup v2 mount"
	# Delegated as systemd delegates: the subtree's directory and files are the user's.
	DELEGATED=$cg2/bpft-deleg-$$
	mkdir "$DELEGATED" && chown -R "$USER_NAME:" "$DELEGATED" || fail "cannot delegate $DELEGATED"
	hex=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
	"${as_user[@]}" mkdir "$DELEGATED/docker-$hex.scope" || fail "the user cannot make a cgroup in their subtree"
	"${as_user[@]}" sleep 30 &
	VICTIM_PID=$!
	echo "$VICTIM_PID" >"$DELEGATED/docker-$hex.scope/cgroup.procs" || fail "cannot move the user's process"
	grep -q "docker-$hex.scope" "/proc/$VICTIM_PID/cgroup" || fail "the process is not in the user's cgroup"
	run_bpfprof 60 -p "$VICTIM_PID" -d 1 -o "$WORK/p.json.gz"
	expect_success
	"$NODE" -e '
	const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
	const [pid, uid] = process.argv.slice(2);
	const t = p.threads.find((t) => t.pid === pid);
	if (!t) { console.log("FAIL no thread of " + pid); process.exit(1); }
	const want = `[container 0123456789ab, named in uid ${uid}'"'"'s cgroup]`;
	if (!t.processName.endsWith(want)) { console.log(`FAIL label "${t.processName}" does not end in "${want}"`); process.exit(1); }
	const m = t.markers, i = m.data.findIndex((d) => d && d.type === "bpfprof.Process");
	if (i < 0 || m.data[i].cgroupOwner !== "uid " + uid) { console.log("FAIL the Process marker does not name uid " + uid + ": " + JSON.stringify(m.data[i])); process.exit(1); }
	console.log(`ok   "${t.processName}", Process marker cgroupOwner "${m.data[i].cgroupOwner}"`);
	' "$WORK/p.json.gz" "$VICTIM_PID" "$USER_UID" || fail "the claim is not marked as the user's"
	;;
retention_planted)
	dir=$USER_DIR/snaps
	mkdir -m 0700 "$dir"
	chown "$USER_NAME:" "$dir"
	# Future-dated names would sort newest; one from 2000 owned by a third uid.
	for y in 2099 2100 2101; do
		"${as_user[@]}" touch "$dir/bpfprof-${y}0101T000000.000Z.json.gz"
	done
	touch "$dir/bpfprof-20000101T000000.000Z.json.gz"
	chown 4242:4242 "$dir/bpfprof-20000101T000000.000Z.json.gz"
	log "\$ SUDO_UID=$USER_UID bpfprof continuous -a --interval 300ms --keep 2 --no-sched --out-dir $dir &"
	env --default-signal=INT,TERM SUDO_UID="$USER_UID" SUDO_GID="$(id -g "$USER_NAME")" \
		"$BPFPROF" continuous -a --interval 300ms --keep 2 --no-sched --out-dir "$dir" -v \
		>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPF_PID=$!
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c '^bpfprof: snapshot .* written' "$WORK/bpfprof.err")" -ge 5 ] && break
		kill -0 "$BPF_PID" 2>/dev/null || fail "bpfprof exited: $(tail -n 5 "$WORK/bpfprof.err")"
		sleep 0.05
	done
	kill -INT "$BPF_PID"
	wait "$BPF_PID"
	STATUS=$?
	BPF_PID=
	expect_success
	ls -l "$dir" | indent
	for y in 2099 2100 2101; do
		[ -f "$dir/bpfprof-${y}0101T000000.000Z.json.gz" ] || fail "retention deleted the planted $y name"
	done
	[ -f "$dir/bpfprof-20000101T000000.000Z.json.gz" ] || fail "retention deleted another user's file"
	real=$(find "$dir" -name 'bpfprof-20[0-8]*Z.json.gz' -user "$USER_UID" -newer "$WORK/bpfprof.out" -size +0 | wc -l)
	[ "$real" -eq 2 ] || fail "$real real snapshots kept, --keep 2 asked for 2"
	[ "$(stat -c %a "$(find "$dir" -name 'bpfprof-20[0-8]*Z.json.gz' -size +0 | head -n 1)")" = 600 ] ||
		fail "snapshots are not 0600"
	ok "the newest 2 real snapshots (0600, the sudo user's) are kept; nothing planted was touched"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
