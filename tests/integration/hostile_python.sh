#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user's fake CPython process against a root `bpfprof -a` (issue 37,
# round-3 findings 2-4). Each attack is run by a throw-away unprivileged
# user; Debian's python3 running pyfuncs.py as root is the control beside it
# where another process's frames must still be read.
#
#   line_tables  FAKEPY deep: 128 frames of code objects with 256 KiB line
#                tables, each at its table's last unit (the whole table was
#                walked per frame per sample: -d 4 ran 155 s). SIGTERM 3 s
#                into a 30 s recording writes the profile, whose frames carry
#                the line at the end of the table.
#   code_budget  FAKEPY many: 8192 such code objects in turn (2 GiB of copies
#                without a byte budget). The code objects kept stay within the
#                budget, bpfprof says what it did not read (in its log and by
#                the frames' name), and root's python3 keeps its names.
#   fuse_stall   FAKEPY fuse: a frame whose code object is in a page of a file
#                on the user's FUSE mount (fusehold, through fusermount3),
#                whose server never answers reads. The recording ends and
#                writes its profile while the server still holds, says which
#                process stalled, and root's python3 keeps its function names.
#   fuse_two_users  the same, by two users with two such processes each
#                (which took all four reader threads, each user's two reads
#                stalled in turn); a third user's python3, started once every
#                attacking process was sampled, keeps its function names. Each
#                attacking uid stalls one read: its other process is not read.
#   fuse_release the server holds reads until bpfprof said that one stalled
#                and a second more, then fails them and every later one at
#                once (fusehold -r, SIGUSR1): the stall is forgiven, and
#                fakepy's samples after the release name its caller frame
#                again (before, a stalled process was read no more).
#
# Usage: hostile_python.sh line_tables|code_budget|fuse_stall|fuse_two_users|fuse_release
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_python.sh line_tables|code_budget|fuse_stall|fuse_two_users|fuse_release" "$@"
: "${FAKEPY:?FAKEPY is not set}"
PY=/usr/bin/python3
MOUNTS=()
BPF_PID=
B_NAME=
cleanup() {
	local m
	[ -n "$BPF_PID" ] && kill -KILL "$BPF_PID" 2>/dev/null
	[ -n "$USER_NAME" ] && pkill -KILL -u "$USER_NAME" 2>/dev/null
	# The server is gone: the mount answers nothing any more, and goes.
	for m in "${MOUNTS[@]}"; do
		umount -l "$m" 2>/dev/null
	done
}
HOSTILE_CLEANUP+=(cleanup)
make_hostile_user
install -m 0755 -o "$USER_NAME" "$FAKEPY" "$USER_DIR/fakepy" || fail "cannot install fakepy"

# start_control: root's python3 running pyfuncs.py from a directory every user may read.
start_control() {
	[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
	install -m 0644 "$(dirname "$0")/../workloads/pyfuncs.py" "$USER_DIR/pyfuncs.py" || fail "cannot copy pyfuncs.py"
	start_background pyfuncs "$PY" "$USER_DIR/pyfuncs.py" 60
}

# start_victim ARGS...: fakepy SECONDS ARGS as the user; sets VICTIM_PID.
start_victim() {
	"${as_user[@]}" "$USER_DIR/fakepy" 60 "$@" >"$WORK/victim.out" 2>&1 &
	VICTIM_PID=$!
	BACKGROUND_PIDS+=("$VICTIM_PID")
	sleep 0.3
	kill -0 "$VICTIM_PID" 2>/dev/null || fail "fakepy exited: $(cat "$WORK/victim.out")"
}

# start_fuse_fakepy NAME RUNNER DIR [FUSEHOLD_OPTION...]: as the user RUNNER
# (the name of a command-prefix array) whose directory is DIR, fusehold
# mounts DIR/mnt-NAME and runs fakepy fuse on its file, output in
# $WORK/NAME.out; sets FUSE_PID (fakepy's, fusehold exec'd it) once mapped.
start_fuse_fakepy() {
	local name=$1 dir=$3 i
	local -n runner=$2
	shift 3
	"${runner[@]}" mkdir "$dir/mnt-$name" || fail "$name: the user cannot make $dir/mnt-$name"
	MOUNTS+=("$dir/mnt-$name")
	: >"$WORK/$name.out"
	"${runner[@]}" "$USER_DIR/fusehold" "$@" "$dir/mnt-$name" "$USER_DIR/fakepy" 120 fuse "$dir/mnt-$name/f" \
		>"$WORK/$name.out" 2>&1 &
	FUSE_PID=$!
	BACKGROUND_PIDS+=("$FUSE_PID")
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready$' "$WORK/$name.out" && break
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^ready$' "$WORK/$name.out" || fail "$name: fakepy did not map its FUSE file: $(cat "$WORK/$name.out")"
}

# install_fuse: fusehold and fakepy in USER_DIR, for every user to run.
install_fuse() {
	command -v fusermount3 >/dev/null || fail "fusermount3 is missing: scripts/install-deps.sh --test installs fuse3"
	: "${FUSEHOLD:?FUSEHOLD is not set}"
	install -m 0755 -o "$USER_NAME" "$FUSEHOLD" "$USER_DIR/fusehold" || fail "cannot install fusehold"
}

# wait_wrote: until bpfprof says it wrote its profile, or ends; 90 s bound a
# hang only.
wait_wrote() {
	local i
	for ((i = 0; i < 900; i++)); do
		grep -q '^bpfprof: wrote ' "$WORK/bpfprof.err" && return
		kill -0 "$BPF_PID" 2>/dev/null || return
		sleep 0.1
	done
}

# stop_recording: SIGINT, as Ctrl-C; bpfprof writes its profile while the
# FUSE servers still hold (their reads stay stuck until they go), then the
# users' processes are killed and bpfprof must end.
stop_recording() {
	local i
	kill -INT "$BPF_PID"
	wait_wrote
	head -n 40 "$WORK/bpfprof.err" | indent
	grep -q '^bpfprof: wrote ' "$WORK/bpfprof.err" || fail "bpfprof wrote no profile within 90 s of SIGINT"
	pkill -KILL -u "$USER_NAME"
	[ -z "$B_NAME" ] || pkill -KILL -u "$B_NAME"
	wait "$BPF_PID"
	STATUS=$?
	BPF_PID=
	expect_success
}

# check_profile PROFILE PID: a Node.js script reading it on stdin gets `p` and `pid`.
check_profile() {
	"$NODE" --input-type=module -e '
import { Profile, CATEGORY_PYTHON } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
const pid = process.argv[2];
const py = (s) => s.path.filter((f) => p.frameCategory(f) === CATEGORY_PYTHON)
	.map((f) => ({ name: p.frameFuncName(f), line: p.shared.frameTable.line[f] }));
const samplesOfPid = (q) => p.threadsOfProcess(q).flatMap((t) => p.samplesOf(t));
'"$(cat)" "$@"
}

# check_control PROFILE [WHO]: the control's samples name its functions: its
# process was read beside the attack. WHO: whose python3 it is (root's).
check_control() {
	local ctl who=${2:-root}
	ctl=$(sed -n 's/^pyfuncs: truth pid //p' "$WORK/pyfuncs.out")
	[ -n "$ctl" ] || fail "pyfuncs.py printed no pid: $(cat "$WORK/pyfuncs.out")"
	check_profile "$1" "$ctl" "$who" >"$WORK/control.out" <<'EOF2' || fail "$who's python3 beside the attack: $(cat "$WORK/control.out")"
// Of the samples with Python frames (the GIL holder's, its stack walked to the loop), most name level1.
const all = samplesOfPid(pid).filter((s) => p.isOnCpu(s) && py(s).length);
const named = all.filter((s) => py(s).some((f) => f.name === "level1"));
console.log(`${process.argv[3]}'s python3: ${named.length} of ${all.length} on-CPU samples with Python frames in level1`);
process.exit(all.length >= 20 && named.length * 2 > all.length ? 0 : 1);
EOF2
	ok "$(cat "$WORK/control.out")"
}

case $MODE in
line_tables)
	start_victim deep
	start_recording_all "$WORK/p.json.gz" -v -d 30
	BPF_PID=$BPFPROF_PID
	sleep 3
	log "SIGTERM 3 s into the recording"
	kill -TERM "$BPF_PID"
	# Without the index the drain walks 32 MiB of table a sample and takes minutes.
	wait_gone "$BPF_PID" 90 || fail "bpfprof did not end within 90 s of SIGTERM: $(tail -n 3 "$WORK/bpfprof.err")"
	wait "$BPF_PID"
	STATUS=$?
	BPF_PID=
	head -n 30 "$WORK/bpfprof.err" | indent
	expect_success
	check_profile "$WORK/p.json.gz" "$VICTIM_PID" >"$WORK/check.out" <<'EOF2' || fail "fakepy's frames: $(cat "$WORK/check.out")"
// Each code object read names its frame at the end of its 256 KiB table: unit 87380, line 87382.
const all = samplesOfPid(pid).filter((s) => p.isOnCpu(s));
const lined = all.filter((s) => py(s).some((f) => f.name === "deep_frame" && f.line === 87382));
const most = Math.max(0, ...all.map((s) => py(s).length));
console.log(`fakepy: ${all.length} on-CPU samples, ${lined.length} with a frame at line 87382, up to ${most} Python frames`);
process.exit(all.length >= 20 && lined.length * 2 > all.length && most === 128 ? 0 : 1);
EOF2
	ok "$(cat "$WORK/check.out")"
	;;
code_budget)
	start_control
	start_victim many
	run_bpfprof 120 -a -v -d 4 -o "$WORK/p.json.gz"
	expect_success
	# -v says what the code objects took at most: the workload offers 8192 x 256 KiB = 2 GiB
	# of tables to copy, the budget is 128 MiB over all processes. (Its RSS, with every other
	# process's symbols in it, is only logged.)
	kept_kib=$(sed -n 's/^bpfprof: debug: Python code objects kept: \([0-9]*\) KiB at most$/\1/p' "$WORK/bpfprof.err")
	[ -n "$kept_kib" ] || fail "bpfprof -v did not say what the code objects took"
	[ "$kept_kib" -le $((128 * 1024 + 256)) ] || fail "the code objects took $kept_kib KiB"
	ok "the code objects took $((kept_kib / 1024)) MiB at most of the 2 GiB offered, in ${ELAPSED}s; $(grep -o 'bpfprof peak RSS.*' "$WORK/bpfprof.err")"
	grep -q "Python process $VICTIM_PID (uid $USER_UID): its code objects take .* its others are not read" \
		"$WORK/bpfprof.err" || fail "bpfprof did not say what it left unread"
	ok "$(grep -m 1 "Python process $VICTIM_PID" "$WORK/bpfprof.err")"
	check_profile "$WORK/p.json.gz" "$VICTIM_PID" >"$WORK/check.out" <<'EOF2' || fail "fakepy's frames: $(cat "$WORK/check.out")"
const all = samplesOfPid(pid).filter((s) => p.isOnCpu(s));
const names = new Set(all.flatMap((s) => py(s).map((f) => f.name)));
console.log(`fakepy: ${all.length} on-CPU samples; names: ${[...names].join(", ")}`);
process.exit(all.length >= 20 && names.has("deep_frame") && names.has("[Python code past bpfprof's memory budget]") ? 0 : 1);
EOF2
	ok "$(cat "$WORK/check.out")"
	check_control "$WORK/p.json.gz"
	;;
fuse_stall)
	install_fuse
	start_control
	start_fuse_fakepy victim as_user "$USER_DIR"
	VICTIM_PID=$FUSE_PID
	ok "the user's fakepy $VICTIM_PID maps $USER_DIR/mnt-victim/f, whose server holds every read"
	start_recording_all "$WORK/p.json.gz" -v -d 3
	BPF_PID=$BPFPROF_PID
	# The server holds for as long as this test lives: the profile must come while it does.
	wait_wrote
	head -n 30 "$WORK/bpfprof.err" | indent
	grep -q '^bpfprof: wrote ' "$WORK/bpfprof.err" ||
		fail "bpfprof wrote no profile within 90 s of a 3 s recording while the user's FUSE server held a read"
	ok "the profile is written while the user's FUSE server still holds"
	grep -q "Python process $VICTIM_PID (uid $USER_UID): a read of its memory did not return" "$WORK/bpfprof.err" ||
		fail "bpfprof did not say that fakepy's memory stalled: the test tests nothing"
	ok "$(grep -m 1 "Python process $VICTIM_PID" "$WORK/bpfprof.err")"
	check_control "$WORK/p.json.gz"
	# Its reader may stay in the fault until the server goes: then bpfprof ends.
	pkill -KILL -u "$USER_NAME"
	wait "$BPF_PID"
	STATUS=$?
	BPF_PID=
	expect_success
	;;
fuse_two_users)
	install_fuse
	make_other_user
	B_NAME=$OTHER_NAME B_UID=$OTHER_UID B_DIR=$OTHER_DIR
	# shellcheck disable=SC2034 # start_fuse_fakepy runs it, by name
	as_b=("${as_other[@]}")
	make_other_user
	C_DIR=$OTHER_DIR
	as_c=("${as_other[@]}")
	# Two stalling processes per attacking uid: the old pool gave each uid two of its four threads.
	ATTACKERS=()
	for n in 1 2; do
		start_fuse_fakepy "a$n" as_user "$USER_DIR"
		ATTACKERS+=("$FUSE_PID")
		start_fuse_fakepy "b$n" as_b "$B_DIR"
		ATTACKERS+=("$FUSE_PID")
	done
	ok "users $USER_NAME and $B_NAME run fakepy ${ATTACKERS[*]}, each mapping a FUSE file whose server holds every read"
	start_recording_all "$WORK/p.json.gz" -v -d 120
	BPF_PID=$BPFPROF_PID
	# Every attacking process sampled and its read stalled, or refused: the pool is as full as they can make it.
	for pid in "${ATTACKERS[@]}"; do
		wait_grep "^bpfprof: .*Python process $pid (uid " "$WORK/bpfprof.err" \
			"bpfprof never read fakepy $pid: the test tests nothing" "$BPF_PID"
	done
	ok "every attacking process was read, or refused"
	# The control starts now: its code objects are read while the attackers hold.
	install -m 0644 "$(dirname "$0")/../workloads/pyfuncs.py" "$C_DIR/pyfuncs.py" || fail "cannot copy pyfuncs.py"
	start_background pyfuncs "${as_c[@]}" "$PY" "$C_DIR/pyfuncs.py" 60
	wait_output pyfuncs '^pyfuncs: truth pid '
	sleep 4
	stop_recording
	check_control "$WORK/p.json.gz" "$OTHER_NAME"
	for uid in "$USER_UID" "$B_UID"; do
		n=$(grep -c "Python process [0-9]* (uid $uid): a read of its memory did not return" "$WORK/bpfprof.err")
		[ "$n" -eq 1 ] || fail "uid $uid stalled $n reads, not 1: a uid holds one stuck reader at most"
	done
	ok "each attacking uid stalled one read"
	;;
fuse_release)
	install_fuse
	start_fuse_fakepy victim as_user "$USER_DIR" -r
	VICTIM_PID=$FUSE_PID
	# fusehold exec'd fakepy: its server is fakepy's child.
	SERVER_PID=$(pgrep -P "$VICTIM_PID")
	[ -n "$SERVER_PID" ] || fail "fusehold's server is not running"
	ok "the user's fakepy $VICTIM_PID maps a FUSE file whose server $SERVER_PID holds reads until told"
	start_recording_all "$WORK/p.json.gz" -v -d 120
	BPF_PID=$BPFPROF_PID
	# Whoever read the page first (another recording may have), bpfprof's read waits on it.
	wait_grep "Python process $VICTIM_PID (uid $USER_UID): a read of its memory did not return" \
		"$WORK/bpfprof.err" "bpfprof did not say that fakepy's memory stalled: the test tests nothing" "$BPF_PID"
	ok "$(grep -m 1 "Python process $VICTIM_PID" "$WORK/bpfprof.err")"
	sleep 1
	kill -USR1 "$SERVER_PID"
	wait_grep '^fusehold: released at ' "$WORK/victim.out" "fusehold did not release: $(cat "$WORK/victim.out")"
	RELEASED=$(sed -n 's/^fusehold: released at \([0-9]*\)$/\1/p' "$WORK/victim.out")
	[ -n "$RELEASED" ] || fail "fusehold did not release: $(cat "$WORK/victim.out")"
	wait_grep "^bpfprof: Python processes of uid $USER_UID are read again" "$WORK/bpfprof.err" \
		"bpfprof never read the user's processes again after the FUSE server let go" "$BPF_PID"
	ok "$(grep -m 1 "Python processes of uid $USER_UID are read again" "$WORK/bpfprof.err")"
	# Samples taken from now on are drained after that line: they are read.
	sleep 1
	stop_recording
	check_profile "$WORK/p.json.gz" "$VICTIM_PID" "$RELEASED" >"$WORK/check.out" <<'EOF2' || fail "fakepy's frames after the release: $(cat "$WORK/check.out")"
// Sample times are ms after meta.startTime, which is startTimeAsClockMonotonicNanosecondsSinceBoot.
const released = Number(process.argv[3]);
const base = p.meta.startTimeAsClockMonotonicNanosecondsSinceBoot;
const after = samplesOfPid(pid).filter((s) => p.isOnCpu(s) && base + s.time * 1e6 > released && py(s).length);
const named = after.filter((s) => py(s).some((f) => f.name === "fuse_caller"));
const before = samplesOfPid(pid).filter((s) => p.isOnCpu(s) && base + s.time * 1e6 < released && py(s).length);
console.log(`fakepy: ${before.length} samples with Python frames before the release, ${after.length} after, ${named.length} of them naming fuse_caller`);
process.exit(typeof base === "number" && named.length >= 1 ? 0 : 1);
EOF2
	ok "$(cat "$WORK/check.out")"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
