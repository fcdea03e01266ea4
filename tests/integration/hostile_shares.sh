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
#          (UNWIND_ROWS_CAPACITY, full size). Before: the victim's program
#          had no rows.
#
# Either way: >= 90 % of the victim's native samples reach _start through
# main, and >= 90 % of its python3's samples show its function (what the
# workloads guarantee: each spins in that one function all along).
#
# Usage: hostile_shares.sh procs|rows
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
require_root
make_workdir
MODE=${1:?usage: hostile_shares.sh procs|rows}
case $MODE in
procs | rows) ;;
*) fail "unknown mode $MODE" ;;
esac
PY=/usr/bin/python3
[ -x "$PY" ] || fail "$PY is missing: scripts/install-deps.sh --test installs python3"
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
gcc -O2 -fomit-frame-pointer -o "$VICTIM_DIR/vspin" "$VICTIM_DIR/vspin.c" 2>"$WORK/gcc.out" ||
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

# wait_procs USER N: until USER runs N processes (at most 30 s).
wait_procs() {
	for ((i = 0; i < 300; i++)); do
		[ "$(pgrep -c -u "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1 runs $(pgrep -c -u "$1") processes, not $2"
}

BPFPROF_PREFIX=()
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
	"${as_user[@]}" "$PY" "$USER_DIR/flood.py" "$FLOOD" &
	wait_procs "$USER_NAME" $((FLOOD + 1))
	BPFPROF_PREFIX=(BPFPROF_TEST_PROC_MAPS=256)
	log "the attacker runs $(pgrep -c -u "$USER_NAME") python3 processes; the maps hold 256"
else
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
		"${as_user[@]}" "$USER_DIR/rows.$c" &
	done
	wait_procs "$USER_NAME" "$COPIES"
	log "the attacker runs $COPIES programs of $((2 * PAIRS)) rows each, $((2 * PAIRS * COPIES)) in all"
fi

"${as_victim[@]}" "$VICTIM_DIR/vspin" &
VSPIN=$!
"${as_victim[@]}" "$PY" "$VICTIM_DIR/vpy.py" &
VPY=$!
sleep 0.5
run_bpfprof 150 -a -d 6 -v -o "$WORK/p.json.gz"
expect_success
grep "unwind tables:\|per-process map\|share of" "$WORK/bpfprof.err" | head -n 6 | indent

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
expect_share "$VSPIN" "the victim's program (CFI)" main _start
expect_share "$VPY" "the victim's python3 (Python frames)" victim_py_work
