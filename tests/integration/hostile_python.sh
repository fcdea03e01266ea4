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
#
# Usage: hostile_python.sh line_tables|code_budget|fuse_stall
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_python.sh line_tables|code_budget|fuse_stall" "$@"
: "${FAKEPY:?FAKEPY is not set}"
PY=/usr/bin/python3
MOUNT=
BPF_PID=
cleanup() {
	[ -n "$BPF_PID" ] && kill -KILL "$BPF_PID" 2>/dev/null
	[ -n "$USER_NAME" ] && pkill -KILL -u "$USER_NAME" 2>/dev/null
	# The server is gone: the mount answers nothing any more, and goes.
	[ -n "$MOUNT" ] && umount -l "$MOUNT" 2>/dev/null
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

# check_profile PROFILE PID: a Node.js script reading it on stdin gets `p` and `pid`.
check_profile() {
	"$NODE" --input-type=module -e '
import { Profile, CATEGORY_PYTHON } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
const pid = process.argv[2];
const py = (s) => s.path.filter((f) => p.frameCategory(f) === CATEGORY_PYTHON)
	.map((f) => ({ name: p.frameFuncName(f), line: p.shared.frameTable.line[f] }));
const samplesOfPid = (q) => p.threadsOfProcess(q).flatMap((t) => p.samplesOf(t));
'"$(cat)" "$1" "$2"
}

# The control's samples name its functions: its process was read beside the attack.
check_control() {
	local ctl
	ctl=$(sed -n 's/^pyfuncs: truth pid //p' "$WORK/pyfuncs.out")
	[ -n "$ctl" ] || fail "pyfuncs.py printed no pid: $(cat "$WORK/pyfuncs.out")"
	check_profile "$1" "$ctl" >"$WORK/control.out" <<'EOF2' || fail "root's python3 beside the attack: $(cat "$WORK/control.out")"
// Of the samples with Python frames (the GIL holder's, its stack walked to the loop), most name level1.
const all = samplesOfPid(pid).filter((s) => p.isOnCpu(s) && py(s).length);
const named = all.filter((s) => py(s).some((f) => f.name === "level1"));
console.log(`root's python3: ${named.length} of ${all.length} on-CPU samples with Python frames in level1`);
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
	command -v fusermount3 >/dev/null || fail "fusermount3 is missing: scripts/install-deps.sh --test installs fuse3"
	: "${FUSEHOLD:?FUSEHOLD is not set}"
	install -m 0755 -o "$USER_NAME" "$FUSEHOLD" "$USER_DIR/fusehold" || fail "cannot install fusehold"
	MOUNT=$USER_DIR/mnt
	"${as_user[@]}" mkdir "$MOUNT" || fail "the user cannot make $MOUNT"
	start_control
	"${as_user[@]}" "$USER_DIR/fusehold" "$MOUNT" "$USER_DIR/fakepy" 120 fuse "$MOUNT/f" >"$WORK/victim.out" 2>&1 &
	VICTIM_PID=$!
	BACKGROUND_PIDS+=("$VICTIM_PID")
	for ((i = 0; i < 200; i++)); do
		grep -q '^ready$' "$WORK/victim.out" && break
		kill -0 "$VICTIM_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q '^ready$' "$WORK/victim.out" || fail "fakepy did not map its FUSE file: $(cat "$WORK/victim.out")"
	ok "the user's fakepy $VICTIM_PID maps $MOUNT/f, whose server holds every read"
	start_recording_all "$WORK/p.json.gz" -v -d 3
	BPF_PID=$BPFPROF_PID
	# The server holds for as long as this test lives: the profile must come while it does.
	for ((i = 0; i < 900; i++)); do
		grep -q '^bpfprof: wrote ' "$WORK/bpfprof.err" && break
		kill -0 "$BPF_PID" 2>/dev/null || break
		sleep 0.1
	done
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
*)
	fail "unknown mode $MODE"
	;;
esac
