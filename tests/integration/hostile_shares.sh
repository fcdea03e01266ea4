#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user takes every entry of what a root `bpfprof -a` holds per
# process or per file, and another user's programs lose their CFI and their
# Python frames (issue 37, round 3, findings 7 and 8). The victim is a
# second throw-away user running, started after the flood (so read after
# it), a native program (-O2, no frame pointers: its stacks reach main and
# _start only through its CFI) and a python3 spinning in one function.
#
#   procs  the attacker's python3 forks 400 sleeping children; the
#          per-process maps (unwind_procs, py_procs) are shrunk to 256
#          entries (BPFPROF_TEST_PROC_MAPS: the same code as at 16384,
#          which 16,600 processes filled). Before: the victim got no entry.
#   rows   the attacker runs 18 copies (distinct files) of a program of
#          120k CFI rows, 2.16M in all, more than the row store's 2M
#          (its full size before issue 38). Before: the victim's program
#          had no rows.
#   shared the attacker fills its share of the row store (a quarter) with
#          two programs of 200k rows that never run, then maps the victim's
#          program (0755, 150k rows: a shared file, as python3 or libc is)
#          before the victim runs it (-p: the attacker's and the victim's
#          processes only); the victim execs it once bpfprof -v said that
#          it refused it for the attacker's share. Before: the file,
#          refused for the attacker's share, was FULL for everyone until a
#          rebuild, and the victim's program had no rows.
#   evict  the row store is shrunk to 1.5M rows (BPFPROF_TEST_UNWIND_MEMORY
#          6656K: 786,432 slots; its file cap and shares scale with it);
#          root's programs that never run (the system's, exempt from
#          shares: 7 x 200k rows) and the attacker's (its share) fill it
#          before the victim's program (250k rows) starts. Before: the
#          victim's program, sampled all along, was FULL for the whole
#          recording (a rebuild only reads the live processes again, in no
#          order). Now the tables never sampled are evicted for it.
#   files  the BPF file maps (unwind_files, unwind_no_table) are shrunk to
#          256 entries (BPFPROF_TEST_FILE_MAPS: the same code as at 16384);
#          the attacker maps 300 copies of a tiny program (a few slots each,
#          far below its share of the row store), then the victim execs its
#          program (-p: the attacker's and the victim's processes only).
#          Before: the attacker's tables took every entry, and the victim's
#          program was LOADED but never published (S2 review, finding 3).
#          Now the attacker holds a quarter of the entries, its other files
#          refused for its share.
#   protect the row store is shrunk to 768K rows (BPFPROF_TEST_UNWIND_MEMORY
#          3584K: 393,216 slots); the victim runs a system program of 400k
#          rows (root's, larger than a share: root pays for it), then stops
#          (SIGSTOP) for 3 s, past the 2 s its samples pin it; the attacker
#          then maps a system file of 460k rows (root's too, and charged to
#          root), which fits only if the victim's program goes. Before: every
#          table root pays for was the requester's own to evict (payer 0),
#          and the victim's program went for it (S2 review, finding 5). Now
#          the victim's recent samples protect it: nothing is evicted.
#
# Either way: >= 90 % of the victim's native samples reach _start through
# main (evict: main; _start is libc's, whose table may be among the ones
# evicted until its own samples bring it back), and >= 90 % of its
# python3's samples show its function (what the workloads guarantee: each
# spins in that one function all along).
#
# subuids: the attacker's flood is spread over 8 of the subordinate uids
# /etc/subuid gives it (rootless containers run under them; the test's
# file is given through BPFPROF_TEST_SUBUID, the machine's is not touched):
# processes run directly under those uids, 51 each (under the maps' share
# of 64 each, 408 in all), or 2-3 of the 18 programs each (360k rows, under
# the store's share of 512k each). They are one user's, one share in all.
# Before: each subordinate uid took a share of its own; the victim's
# program got no entry (procs), its python3 lost its Python frames in 30 %
# of its samples (rows: python3's CFI found no room). In procs mode the
# owner (not a subordinate uid) is said to hold its share, and a forker
# under a subordinate uid (running, so admitted) forks a child every 200 ms
# through the recording: none of them gets a copy of its entry from the
# kernel side (before: every child forked after the forker was admitted).
#
# Usage: hostile_shares.sh procs|rows|shared|evict|files|protect [subuids] (subuids: procs|rows)
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_shares.sh procs|rows|shared|evict|files|protect [subuids]" "$@"
case $MODE in
procs | rows | shared | evict | files | protect) ;;
*) fail "unknown mode $MODE" ;;
esac
SPREAD=${2:-}
case $SPREAD in
'' | subuids) ;;
*) fail "unknown spread $SPREAD" ;;
esac
[ -z "$SPREAD" ] || [ "$MODE" = procs ] || [ "$MODE" = rows ] || fail "$MODE takes no spread"
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
# The sizes below are those of the row store before its rows were compact
# (issue 38: 4 bytes a row, its 32 MiB hold some 8M rows): the store is
# shrunk to the 2M rows those floods were made to fill (1,048,576 slots of
# 8 bytes and 512 KiB of rules; its shares and file cap scale with it),
# the same code deciding as at full size.
case $MODE in
rows | shared) export BPFPROF_TEST_UNWIND_MEMORY=8704K ;;
esac
make_hostile_user

# The victim: a second throw-away user, with a directory of its own.
VICTIM_NAME=bpfv$$
useradd --system --no-create-home --shell /usr/sbin/nologin "$VICTIM_NAME" ||
	fail "cannot create the throw-away user $VICTIM_NAME"
VICTIM_UID=$(id -u "$VICTIM_NAME")
as_victim=(setpriv --reuid "$VICTIM_UID" --regid "$(id -g "$VICTIM_NAME")" --clear-groups)
VICTIM_DIR=$(mktemp -d /var/tmp/bpfprof-victim.XXXXXX) || fail "mktemp -d failed"
chmod 0755 "$VICTIM_DIR"
HOSTILE_CLEANUP+=('pkill -KILL -u "$VICTIM_NAME" 2>/dev/null; sleep 0.1; userdel "$VICTIM_NAME" 2>/dev/null; rm -rf "$VICTIM_DIR"')
log "victim user $VICTIM_NAME (uid $VICTIM_UID)"

cat >"$VICTIM_DIR/vspin.c" <<'EOF'
__attribute__((noinline)) void victim_spin(void)
{
	for (;;)
		__asm__ volatile("");
}
int main(void) { victim_spin(); return 0; }
EOF
VICTIM_SRC=("$VICTIM_DIR/vspin.c")
# shared: a big shared file, 150k rows, more than what the attacker's
# share has left; evict: 250k rows, more than any room the fillers leave
# (less than one of them, 200k), within the file cap of a 1.5M store.
case $MODE in
shared) VICTIM_PAIRS=75000 ;;
evict) VICTIM_PAIRS=125000 ;;
protect) VICTIM_PAIRS=200000 ;;
*) VICTIM_PAIRS= ;;
esac
if [ -n "$VICTIM_PAIRS" ]; then
	cfi_rows_asm "$VICTIM_DIR/vrows.S" rows "$VICTIM_PAIRS" ret
	VICTIM_SRC+=("$VICTIM_DIR/vrows.S")
fi
gcc -O2 -fomit-frame-pointer -o "$VICTIM_DIR/vspin" "${VICTIM_SRC[@]}" 2>"$WORK/gcc.out" ||
	fail "cannot build the victim's program: $(cat "$WORK/gcc.out")"
cat >"$VICTIM_DIR/vpy.py" <<'EOF'
def victim_py_work():
    x = 0
    while True:
        x += 1

victim_py_work()
EOF
chmod 0755 "$VICTIM_DIR/vspin"
chown "$VICTIM_NAME:" "$VICTIM_DIR/vspin"
chmod 0644 "$VICTIM_DIR/vpy.py"

# The attacker's uids: its own, or 8 of its subordinate uids (a range of
# 65,536 no account of this machine has), given to it by a subuid file of
# root's, 0644, as /etc/subuid is.
BPFPROF_PREFIX=()
ATTACKERS=("$USER_UID")
if [ "$SPREAD" = subuids ]; then
	SUB_BASE=$((1600000000 + ($$ % 1000) * 65536))
	getent passwd "$SUB_BASE" >/dev/null && fail "uid $SUB_BASE is an account of this machine"
	echo "$USER_NAME:$SUB_BASE:65536" >"$WORK/subuid"
	chmod 0644 "$WORK/subuid"
	BPFPROF_PREFIX=(BPFPROF_TEST_SUBUID="$WORK/subuid")
	ATTACKERS=()
	for ((k = 0; k < 8; k++)); do
		ATTACKERS+=($((SUB_BASE + k)))
		HOSTILE_CLEANUP+=("pkill -KILL -U $((SUB_BASE + k)) 2>/dev/null")
	done
	log "the attacker's subordinate uids: $SUB_BASE.. (65536); it runs as ${ATTACKERS[*]}"
fi
# as_attacker K CMD...: CMD as the attacker's K-th uid (K taken modulo their number).
as_attacker() {
	local uid=${ATTACKERS[$(($1 % ${#ATTACKERS[@]}))]}
	shift
	setpriv --reuid "$uid" --regid "$USER_GID" --clear-groups "$@"
}
# attacker_procs: how many processes the attacker's uids run.
attacker_procs() {
	local uid n=0
	for uid in "${ATTACKERS[@]}"; do
		n=$((n + $(pgrep -c -U "$uid")))
	done
	echo "$n"
}

# wait_procs N: until the attacker's uids run N processes (at most 30 s).
wait_procs() {
	for ((i = 0; i < 300; i++)); do
		[ "$(attacker_procs)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the attacker runs $(attacker_procs) processes, not $1"
}

# write_mapper FILE: the source (the user's) of a program that maps the
# files its arguments name executable in turn, as a loader would (a FIFO
# named is waited on, a word written to it, first), then waits.
write_mapper() {
	cat >"$1" <<'EOF'
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		char c;
		int fd = open(argv[i], O_RDONLY);

		if (fd < 0 || fstat(fd, &st))
			return 1;
		if (S_ISFIFO(st.st_mode) ? read(fd, &c, 1) < 0 :
		    mmap(0, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			return 1;
		close(fd);
	}
	pause();
	return 0;
}
EOF
	chown "$USER_NAME:" "$1"
}

if [ "$MODE" = procs ]; then
	FLOOD=400
	cat >"$USER_DIR/flood.py" <<'EOF'
import os, signal, sys
for _ in range(int(sys.argv[1])):
    if os.fork() == 0:
        signal.pause()
        os._exit(0)
signal.pause()
EOF
	chmod 0644 "$USER_DIR/flood.py"
	# One flood per uid, FLOOD processes (and their parents) in all.
	for k in "${!ATTACKERS[@]}"; do
		as_attacker "$k" "$PY" "$USER_DIR/flood.py" $((FLOOD / ${#ATTACKERS[@]})) &
	done
	wait_procs $((FLOOD + ${#ATTACKERS[@]}))
	if [ "$SPREAD" = subuids ]; then
		# A forker under one subordinate uid runs (sampled: admitted in
		# place of a sleeping process) and forks a child every 200 ms.
		cat >"$USER_DIR/forker.py" <<'EOF'
import os, time
end = time.monotonic() + 60
while time.monotonic() < end:
    busy = time.monotonic() + 0.05
    while time.monotonic() < busy:
        pass
    if os.fork() == 0:
        time.sleep(20)
        os._exit(0)
    time.sleep(0.15)
EOF
		chmod 0644 "$USER_DIR/forker.py"
		as_attacker 0 "$PY" "$USER_DIR/forker.py" &
	fi
	BPFPROF_PREFIX+=(BPFPROF_TEST_PROC_MAPS=256)
	log "the attacker runs $(attacker_procs) python3 processes; the maps hold 256"
elif [ "$MODE" = rows ]; then
	COPIES=18
	PAIRS=60000
	user_cfi_rows rows.S rows "$PAIRS" ret
	cat >"$USER_DIR/main.c" <<'EOF'
#include <unistd.h>
int main(void) { pause(); return 0; }
EOF
	chown "$USER_NAME:" "$USER_DIR/main.c"
	as_user_in_dir gcc -O2 -o "$USER_DIR/rows" main.c rows.S >"$WORK/gcc.out" 2>&1 ||
		fail "the user cannot build the program: $(cat "$WORK/gcc.out")"
	for ((c = 0; c < COPIES; c++)); do
		"${as_user[@]}" cp "$USER_DIR/rows" "$USER_DIR/rows.$c" || fail "cannot copy the program"
		as_attacker "$c" "$USER_DIR/rows.$c" &
	done
	wait_procs "$COPIES"
	log "the attacker runs $COPIES programs of $((2 * PAIRS)) rows each, $((2 * PAIRS * COPIES)) in all"
elif [ "$MODE" = protect ]; then
	# The victim's program as the system's (root's, 0755: a package's), and
	# a system file of 460k rows the attacker maps once it reads a word
	# from its FIFO (a file named that is not a FIFO is mapped executable).
	cp "$VICTIM_DIR/vspin" "$VICTIM_DIR/sspin" && chmod 0755 "$VICTIM_DIR/sspin" ||
		fail "cannot copy the victim's program"
	cfi_rows_asm "$WORK/big.S" rows 230000 ret
	echo 'int main(void) { return 0; }' >"$WORK/big_main.c"
	gcc -O2 -o "$VICTIM_DIR/sbig" "$WORK/big_main.c" "$WORK/big.S" >"$WORK/gcc.out" 2>&1 ||
		fail "cannot build the big system file: $(cat "$WORK/gcc.out")"
	chmod 0755 "$VICTIM_DIR/sbig"
	write_mapper "$USER_DIR/mapper.c"
	as_user_in_dir gcc -O2 -o "$USER_DIR/mapper" mapper.c >"$WORK/gcc.out" 2>&1 ||
		fail "the user cannot build the mapper: $(cat "$WORK/gcc.out")"
	mkfifo "$USER_DIR/go" && chown "$USER_NAME:" "$USER_DIR/go" || fail "mkfifo failed"
	"${as_user[@]}" "$USER_DIR/mapper" "$USER_DIR/go" "$VICTIM_DIR/sbig" &
	MAPPER=$!
	"${as_victim[@]}" "$VICTIM_DIR/sspin" &
	VSPIN=$!
	wait_procs 1
	export BPFPROF_TEST_UNWIND_MEMORY=3584K # 768K rows: 393,216 slots
	log "the victim runs a system program of 400k rows; the row store holds 768k"
elif [ "$MODE" = files ]; then
	# One process of the attacker's maps FILES copies (distinct files) of a
	# tiny program with CFI executable, as a loader would, and waits.
	FILES=300
	write_mapper "$USER_DIR/mapper.c"
	as_user_in_dir gcc -O2 -o "$USER_DIR/mapper" mapper.c >"$WORK/gcc.out" 2>&1 ||
		fail "the user cannot build the mapper: $(cat "$WORK/gcc.out")"
	"${as_user[@]}" mkdir "$USER_DIR/tiny" || fail "cannot make the attacker's directory"
	TINY=()
	for ((c = 0; c < FILES; c++)); do
		TINY+=("$USER_DIR/tiny/t.$c")
	done
	"${as_user[@]}" sh -c 'for f; do cp "$0" "$f" || exit 1; done' "$USER_DIR/mapper" "${TINY[@]}" ||
		fail "cannot copy the tiny program"
	"${as_user[@]}" "$USER_DIR/mapper" "${TINY[@]}" &
	MAPPER=$!
	wait_procs 1
	wait_grep "$USER_DIR/tiny/t.$((FILES - 1))" "/proc/$MAPPER/maps" "the attacker did not map its files"
	export BPFPROF_TEST_FILE_MAPS=256
	log "the attacker maps $FILES tiny programs; the file maps hold 256 entries"
else
	# Programs of 200k rows that never run (pause), each mapping the files
	# its arguments name executable first (as a loader would); a FIFO named
	# is waited on (a word written to it) first.
	PAIRS=100000
	cfi_rows_asm "$USER_DIR/rows.S" rows "$PAIRS" ret
	write_mapper "$USER_DIR/main.c"
	chown "$USER_NAME:" "$USER_DIR/rows.S"
	as_user_in_dir gcc -O2 -o "$USER_DIR/rows" main.c rows.S >"$WORK/gcc.out" 2>&1 ||
		fail "the user cannot build the program: $(cat "$WORK/gcc.out")"
	# shared: 2 fit the attacker's share (512k of 2M, with libc: the
	# attacker maps it first here), the third does not; evict: 1 fits its
	# share (393k of 1.5M).
	COPIES=3
	[ "$MODE" = evict ] && COPIES=2
	TARGETS=
	for ((c = 0; c < COPIES; c++)); do
		"${as_user[@]}" cp "$USER_DIR/rows" "$USER_DIR/rows.$c" || fail "cannot copy the program"
		"${as_user[@]}" "$USER_DIR/rows.$c" &
		TARGETS+=$!,
	done
	wait_procs "$COPIES"
	if [ "$MODE" = shared ]; then
		# Once its programs' tables took its share (told through the FIFO),
		# so refused for its share: the victim's program, mapped first by it.
		mkfifo "$USER_DIR/go" && chown "$USER_NAME:" "$USER_DIR/go" || fail "mkfifo failed"
		"${as_user[@]}" "$USER_DIR/rows.0" "$USER_DIR/go" "$VICTIM_DIR/vspin" &
		MAPPER=$!
		TARGETS+=$MAPPER,
		wait_procs $((COPIES + 1))
		log "the attacker runs $COPIES programs of $((2 * PAIRS)) rows and maps the victim's program (150k rows)"
	else
		# The system's programs that never run: root's, exempt from shares.
		for ((c = 0; c < 7; c++)); do
			cp "$USER_DIR/rows" "$WORK/system.$c" || fail "cannot copy the program"
			"$WORK/system.$c" &
			BACKGROUND_PIDS+=($!)
		done
		export BPFPROF_TEST_UNWIND_MEMORY=6656K # 1.5M rows: 786,432 slots
		log "root runs 7 programs and the attacker $COPIES of $((2 * PAIRS)) rows each, none ever runs; the row store holds 1.5M"
	fi
fi

# record_targets PIDS SECONDS: bpfprof -p PIDS -d SECONDS -v in the
# background (BPFPROF_PID), returning once it records.
record_targets() {
	log "\$ bpfprof -p $1 -d $2 -v -o $WORK/p.json.gz &"
	: >"$WORK/bpfprof.err"
	env --default-signal=INT,TERM "$BPFPROF" -p "$1" -d "$2" -v -o "$WORK/p.json.gz" \
		>"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPFPROF_PID=$!
	BACKGROUND_PIDS+=("$BPFPROF_PID")
	wait_recording "$BPFPROF_PID"
}

if [ "$MODE" = procs ] || [ "$MODE" = rows ]; then
	"${as_victim[@]}" "$VICTIM_DIR/vspin" &
	VSPIN=$!
	"${as_victim[@]}" "$PY" "$VICTIM_DIR/vpy.py" &
	VPY=$!
	sleep 0.5
	run_bpfprof 150 -a -d 6 -v -o "$WORK/p.json.gz"
elif [ "$MODE" = protect ]; then
	# The attacker's process and the victim's, alone (-p). The victim's
	# program is stamped by its samples (it runs 200 ms of CPU, sampled
	# all along), then it stops for 3 s, past the pin of its last samples
	# (2 s), within their protection (a minute); then the attacker maps the
	# big file. Whether tables were evicted for it, or none could be, -v says.
	record_targets "$MAPPER,$VSPIN" 14
	# CPU time (clock ticks) the victim has run since the recording began.
	t0=$(awk '{ print $14 }' "/proc/$VSPIN/stat")
	for ((i = 0; i < 600; i++)); do
		[ $(($(awk '{ print $14 }' "/proc/$VSPIN/stat") - t0)) -ge 20 ] && break
		sleep 0.05
	done
	[ "$i" -lt 600 ] || fail "the victim's program did not run 200 ms of CPU in 30 s"
	kill -STOP "$VSPIN"
	sleep 3
	echo go >"$USER_DIR/go"
	wait_grep "$VICTIM_DIR/sbig: no room in the unwind store\|tables evicted for $VICTIM_DIR/sbig" \
		"$WORK/bpfprof.err" "bpfprof never placed the big system file the attacker mapped" \
		"$BPFPROF_PID"
	kill -CONT "$VSPIN"
	wait "$BPFPROF_PID"
	STATUS=$?
	log "   stderr:"
	head -n 30 "$WORK/bpfprof.err" | indent
elif [ "$MODE" = shared ] || [ "$MODE" = files ]; then
	# The attacker's processes and the victim's, alone (-p: this machine's
	# other files take no room, so the store has room and only the share
	# refuses). shared: once the recording has built the attacker's tables,
	# the attacker maps the victim's program, then the victim's process
	# execs it (the same pid: a target all along). files: the victim execs
	# its program once the recording has read the attacker's files and
	# refused those past its share (-v names them): read after them, as a
	# program started later on a busy machine is.
	[ "$MODE" = files ] && TARGETS=$MAPPER,
	mkfifo "$VICTIM_DIR/go" && chown "$VICTIM_NAME:" "$VICTIM_DIR/go" || fail "mkfifo failed"
	# shellcheck disable=SC2016
	"${as_victim[@]}" sh -c 'read -r _ <"$1" && exec "$2"' sh "$VICTIM_DIR/go" "$VICTIM_DIR/vspin" &
	VSPIN=$!
	record_targets "$TARGETS$VSPIN" 8
	if [ "$MODE" = shared ]; then
		echo go >"$USER_DIR/go"
		wait_grep "$VICTIM_DIR/vspin" "/proc/$MAPPER/maps" "the attacker did not map the victim's program"
		# The victim's process execs the file only once bpfprof refused it for
		# the attacker's share (-v names the file and the uid): else the file
		# could be read as the victim's first, and the test would test nothing.
		wait_grep "^bpfprof: .*$VICTIM_DIR/vspin (device .*refused for the share of uid $USER_UID;" \
			"$WORK/bpfprof.err" \
			"bpfprof never refused the victim's program for the attacker's share (uid $USER_UID): the test would test nothing" \
			"$BPFPROF_PID"
		ok "$(grep -m 1 "$VICTIM_DIR/vspin (device .*refused for the share" "$WORK/bpfprof.err")"
	else
		wait_grep "^bpfprof: .*$USER_DIR/tiny/t\.[0-9]* (device .*refused for the share of uid $USER_UID;" \
			"$WORK/bpfprof.err" \
			"bpfprof never refused the attacker's files for its share of the file map: they took every entry" \
			"$BPFPROF_PID"
		ok "$(grep -c "$USER_DIR/tiny/t\.[0-9]* (device .*refused for the share of uid $USER_UID;" "$WORK/bpfprof.err") of the attacker's files refused for its share"
	fi
	echo go >"$VICTIM_DIR/go"
	wait "$BPFPROF_PID"
	STATUS=$?
	log "   stderr:"
	head -n 30 "$WORK/bpfprof.err" | indent
else
	# The victim's program starts once the recording has read the tables
	# of the processes already there and filled the store (tables were
	# evicted for others): met last, as a program started later on a busy
	# machine is.
	start_recording_all "$WORK/p.json.gz" -d 14 -v
	wait_grep "unwind store: [0-9]* tables evicted for" "$WORK/bpfprof.err" "the row store did not fill within 30 s"
	"${as_victim[@]}" "$VICTIM_DIR/vspin" &
	VSPIN=$!
	wait "$BPFPROF_PID"
	STATUS=$?
	log "   stderr:"
	head -n 30 "$WORK/bpfprof.err" | indent
fi
expect_success
grep "unwind tables\|per-process map\|share of" "$WORK/bpfprof.err" | head -n 8 | indent

# share PID FUNC...: of process PID's on-CPU samples, "all after hit": all of
# them, those from the first that holds every FUNC on (its tables and
# entries in use: on a busy machine the table thread may come to a file
# late, which is no loss of share), and those of them that hold every FUNC.
share() {
	"$NODE" --input-type=module -e '
import { Profile } from "'"$CHECK_DIR"'/profile.mjs";
const [file, pid, ...want] = process.argv.slice(1);
const p = Profile.fromFile(file);
const seen = [];
for (const t of p.threadsOfProcess(pid)) for (const s of p.samplesOf(t)) {
	if (!p.isOnCpu(s))
		continue; /* off-CPU stacks (preempted) carry no Python frames */
	const names = new Set(s.path.map((f) => p.frameFuncName(f)));
	seen.push({ time: s.time, hit: want.every((w) => names.has(w)) });
}
seen.sort((a, b) => a.time - b.time);
const after = seen.slice(Math.max(0, seen.findIndex((s) => s.hit)));
const first = seen.findIndex((s) => s.hit);
console.log(`${seen.length} ${first < 0 ? 0 : after.length} ${first < 0 ? 0 : after.filter((s) => s.hit).length}`);
' "$WORK/p.json.gz" "$@"
}

# expect_share PID WHAT FUNC...: >= 90 % of PID's on-CPU samples hold every FUNC.
expect_share() {
	local pid=$1 what=$2 all after hit
	shift 2
	read -r all after hit <<<"$(share "$pid" "$@")" || fail "cannot read the profile"
	log "$what: $all on-CPU samples, $after from the first that holds $*, $hit of them hold it"
	[ "$all" -ge 50 ] || fail "only $all samples of $what: it did not run"
	[ "$after" -ge 50 ] || fail "only $after of $all samples of $what come after the first that holds $*"
	[ $((hit * 100)) -ge $((after * 90)) ] || fail "only $hit of $after samples of $what hold $* (need >= 90 %)"
	ok "$what: $hit of $after samples hold $*"
}
case $MODE in
procs | rows)
	expect_share "$VSPIN" "the victim's program (CFI)" main _start
	expect_share "$VPY" "the victim's python3 (Python frames)" victim_py_work
	;;
shared)
	expect_share "$VSPIN" "the victim's program (CFI), mapped first by the attacker" main _start
	# Taken by the victim when its process was read, not rescued later by
	# evicting: no file of the victim's is ever sampled while refused, and
	# the attacker's refused programs never run.
	! grep -q "unwind store: [0-9]* tables evicted for $VICTIM_DIR/vspin" "$WORK/bpfprof.err" ||
		fail "the victim's program waited for an eviction: it was not taken when the victim's process mapped it"
	ok "the victim's program was taken when its process mapped it, with no eviction"
	;;
evict) expect_share "$VSPIN" "the victim's program (CFI), sampled" victim_spin main ;;
files) expect_share "$VSPIN" "the victim's program (CFI), after the attacker's files" main _start ;;
protect)
	! grep -q "tables evicted for $VICTIM_DIR/sbig" "$WORK/bpfprof.err" ||
		fail "$(grep -m 1 "tables evicted for $VICTIM_DIR/sbig" "$WORK/bpfprof.err"): the victim's program, run a few seconds before, went for the attacker's file"
	ok "$(grep -m 1 "$VICTIM_DIR/sbig: no room" "$WORK/bpfprof.err")"
	expect_share "$VSPIN" "the victim's system program (CFI)" main _start
	;;
esac
if [ "$SPREAD" = subuids ] && [ "$MODE" = procs ]; then
	# 408 processes of one user against a share of 64: the owner is capped.
	grep -q "uid $USER_UID holds its share of the per-process maps" "$WORK/bpfprof.err" ||
		fail "bpfprof does not say that uid $USER_UID (the subordinate uids' owner) holds its share"
	ok "the subordinate uids' processes count as their owner's, uid $USER_UID"
	# Its subordinate uids are capped with it in the kernel: the forker's
	# children get no copy of its entry. Before: the kernel side capped by
	# the child's own (subordinate) uid, so each got one, taken back only
	# once userspace saw the fork (a burst of forks filled the map first).
	TAKEN=$(sed -n 's/.* \([0-9]*\) copies the kernel made for a capped user.s child taken back.*/\1/p' \
		"$WORK/bpfprof.err" | tail -n 1)
	[ -n "$TAKEN" ] || fail "bpfprof does not say how many kernel copies it took back"
	[ "$TAKEN" -eq 0 ] ||
		fail "the kernel copied the forker's entry for $TAKEN children of a capped owner's subordinate uid"
	ok "no child of a capped owner's subordinate uid got a copy of its entry from the kernel"
fi
