#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# A local user against everyone else's stack copies (issue 38, S2/S5 review
# finding 8). The user runs a program (hog) on every CPU, spinning 32K
# down its stack, built with CFI, its table held back 1.5 s
# (BPFPROF_TEST_TABLE_DELAY): each of its samples asks for a copy of 32K
# and more, far past a CPU's copy budget. Root's victim, built here without
# frame pointers, burns 1 ms 30 frames deep every 30 ms for 2 s (a few hundred
# copies a second at 4999 Hz, well within half a CPU's budget); the worker
# builds one table at a time, so the victim's table comes after the hog's,
# and its first stacks need copies too. Before, the user's copies spent
# each CPU's budget as it came back, and the victim's were refused: its
# stacks of that time stopped at the victim. Now the user copies at most
# half of each CPU's budget, and the victim's stacks reach main.
#
# Usage: hostile_copies.sh hog
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
hostile_setup "hostile_copies.sh hog" "$@"
[ "$MODE" = hog ] || fail "unknown mode $MODE"
make_hostile_user

cat >"$USER_DIR/hog.c" <<'EOS'
#include <string.h>
__attribute__((noinline)) static void spin(volatile unsigned long *x)
{
	for (;;)
		(*x)++;
}
int main(void)
{
	volatile char deep[32768];
	volatile unsigned long x = 0;

	memset((char *)deep, 1, sizeof(deep));
	spin(&x);
	return deep[0];
}
EOS
chown "$USER_NAME:" "$USER_DIR/hog.c"
cat >"$WORK/victim.c" <<'EOS'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) static void victim_burn(void)
{
	double end = now() + 0.001;

	while (now() < end)
		sink++;
}
__attribute__((noinline)) static int victim_recurse(int depth)
{
	volatile int here = depth;

	if (!depth) {
		victim_burn();
		return 0;
	}
	return victim_recurse(depth - 1) + here;
}
int main(int argc, char **argv)
{
	double end = now() + atof(argv[1]);

	printf("victim: pid %d\n", (int)getpid());
	fflush(stdout);
	while (now() < end) {
		sink += victim_recurse(30);
		usleep(29000);
	}
	return 0;
}
EOS
gcc -O2 -fomit-frame-pointer -o "$WORK/victim" "$WORK/victim.c" >"$WORK/gcc.out" 2>&1 ||
	fail "cannot build the victim: $(cat "$WORK/gcc.out")"
as_user_in_dir gcc -O2 -fomit-frame-pointer -o "$USER_DIR/hog" hog.c >"$WORK/gcc.out" 2>&1 ||
	fail "the user cannot build the program: $(cat "$WORK/gcc.out")"

# Both started once the recording runs: their tables are built then, the hog's first.
BPFPROF_TEST_TABLE_DELAY=hog:1500 start_recording_all "$WORK/p.json.gz" -d 4 -v -F 4999
HOGS=()
HOSTILE_CLEANUP+=('kill -KILL "${HOGS[@]}" 2>/dev/null')
for ((i = 0; i < $(nproc); i++)); do
	"${as_user[@]}" "$USER_DIR/hog" &
	HOGS+=("$!")
done
sleep 0.2
"$WORK/victim" 2 >"$WORK/victim.out" &
VICTIM_PID=$!
BACKGROUND_PIDS+=("$VICTIM_PID")
wait "$VICTIM_PID"
wait "$BPFPROF_PID"
STATUS=$?
expect_success
log "$(grep -m 1 '^bpfprof: user stacks: ' "$WORK/bpfprof.err")"
log "$(grep -m 1 '^bpfprof: stack copies: ' "$WORK/bpfprof.err")"
read -r _ _ pid <"$WORK/victim.out"
[[ $pid =~ ^[0-9]+$ ]] || fail "the victim did not print its pid: $(head -n 3 "$WORK/victim.out")"

# The victim's samples in its burn, and those whose stack reaches main.
read -r hog all rooted <<<"$("$NODE" --input-type=module -e '
import { Profile, basePid } from "'"$CHECK_DIR"'/profile.mjs";
const p = Profile.fromFile(process.argv[1]);
const pid = process.argv[2];
let hog = 0, all = 0, rooted = 0;
for (const t of p.threads) for (const s of p.samplesOf(t)) {
	const names = s.path.map((f) => p.frameFuncName(f));
	if (names.includes("spin")) hog++;
	if (basePid(t.pid) !== pid || !names.includes("victim_burn")) continue;
	all++;
	if (names.includes("main")) rooted++;
}
console.log(`${hog} ${all} ${rooted}`);
' "$WORK/p.json.gz" "$pid")" || fail "cannot read the profile"
log "$(grep -E 'met without its table: (hog|victim) ' "$WORK/bpfprof.err")"
log "hog: $hog samples; the victim: $all samples in its burn, $rooted of them reach main"
[ "$hog" -gt 100 ] || fail "only $hog samples of the user's program: it did not run"
[ "$all" -ge 20 ] || fail "only $all samples of the victim's burn: too few to tell"
[ $((rooted * 100)) -ge $((all * 95)) ] ||
	fail "$rooted of the victim's $all stacks reach main (>= 95% expected): the user's copies took its budget"
ok "$rooted of the victim's $all stacks reach main beside the user's copies"
