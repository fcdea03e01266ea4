#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Late sleepers (issue 37): a local user's 5,000 threads that fall asleep
# after `bpfprof -a -d 6` started made one off-CPU sample row per sampling
# interval per wait: 26 M rows, RSS 839 MiB (115 without them), a 6.2 MB
# profile, linear in threads x seconds. Their off-CPU samples are now a few
# weighted rows per wait (model/offcpu_samples.c).
#
# The user's idlers start their threads on a signal sent once root's
# recording runs, so each thread's wait begins inside it (a thread asleep
# from before the start is the blocked-all-along path, blocked_all_along.sh).
# Judged on the profile and bpfprof's peak RSS, against a control run with
# the same process and no threads started:
#  - the user's off-CPU rows are at most 4 per wait (Off-CPU marker) plus
#    one per thread, where one row per interval is their weight;
#  - their weights still give each thread's off-CPU time (its Off-CPU
#    markers' length, within an interval per wait and 1 %);
#  - the peak RSS grew by less than half of what those rows take one per
#    interval (24 bytes each; the rows alone, not what writing them costs):
#    measured in memory, not in time. What it grows by is per thread, the
#    same for any length of sleep.
#
# Usage: hostile_sleepers.sh
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/hostile_common.sh"
require_root
make_workdir
make_hostile_user
: "${IDLERS:?IDLERS is not set}"

THREADS=5000
cp "$IDLERS" "$USER_DIR/idlers" && chmod 755 "$USER_DIR/idlers" || fail "cannot copy idlers"

# record NAME GO: root's `-a` (peak RSS in $WORK/NAME.rss) beside the
# user's idlers, which start their threads once it records when GO is 1;
# stopped (SIGINT) 8 s after they all started, so that each sleeps 8 s in
# the recording however long starting them took.
record() {
	local name=$1 go=$2 out=$WORK/$1.json.gz i
	start_background "idlers_$name" "${as_user[@]}" "$USER_DIR/idlers" 120 "$THREADS" late
	IDLERS_PID=$BG_PID
	for ((i = 0; i < 100; i++)); do
		[ -s "$WORK/idlers_$name.out" ] && break
		sleep 0.1
	done
	ID=$(head -n 1 "$WORK/idlers_$name.out")
	[ -n "$ID" ] || fail "idlers did not start"
	log "\$ bpfprof -a -o $out &   ($name)"
	: >"$WORK/bpfprof.err"
	env --default-signal=INT,TERM /usr/bin/time -f "maxrss_kb %M cpu_s %U %S" -o "$WORK/$name.time" \
		"$BPFPROF" -a -o "$out" >"$WORK/bpfprof.out" 2>"$WORK/bpfprof.err" &
	BPFPROF_PID=$!
	BACKGROUND_PIDS+=("$BPFPROF_PID")
	wait_recording "$BPFPROF_PID"
	if [ "$go" = 1 ]; then
		kill -USR1 "$ID"
		for ((i = 0; i < 300; i++)); do
			grep -q '^started' "$WORK/idlers_$name.out" && break
			sleep 0.1
		done
		grep -q '^started' "$WORK/idlers_$name.out" || fail "the user's threads did not start"
	fi
	sleep 8
	# To bpfprof itself: /usr/bin/time, its parent, ignores SIGINT.
	kill -INT "$(pgrep -P "$BPFPROF_PID")"
	wait "$BPFPROF_PID"
	STATUS=$?
	cat "$WORK/bpfprof.err" | indent
	expect_success
	awk '/maxrss_kb/ { print $2 }' "$WORK/$name.time" >"$WORK/$name.rss"
	log "   $name: peak RSS $(($(cat "$WORK/$name.rss") / 1024)) MiB, CPU (user, sys) $(awk '{ print $4, $5 }' "$WORK/$name.time") s, profile $(stat -c %s "$out") bytes"
	kill -KILL "$IDLERS_PID" "$ID" 2>/dev/null
	wait "$IDLERS_PID" 2>/dev/null
	LAST_ID=$ID
}

record control 0
CONTROL_RSS=$(cat "$WORK/control.rss")
record attack 1
ATTACK_RSS=$(cat "$WORK/attack.rss")

"$NODE" -e '
let p;
try {
	p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
} catch (e) {
	// One row per interval: 40 M rows are more JSON than one string holds.
	console.log(`FAIL the profile cannot be loaded: ${e.code || e.message}`);
	process.exit(1);
}
const [pid, controlKb, attackKb, want] = process.argv.slice(2).map(Number);
const str = p.shared ? p.shared.stringArray : null;
const intervalMs = p.meta.interval;
let threads = 0, rows = 0, weight = 0, waits = 0, bad = [];
for (const t of p.threads.filter((t) => Number(String(t.pid).split(".")[0]) === pid)) {
	const s = t.samples, st = p.shared?.stackTable || t.stackTable, ft = p.shared?.frameTable || t.frameTable;
	const fn = p.shared?.funcTable || t.funcTable, strings = str || t.stringArray;
	let tw = 0, tr = 0, offMs = 0, n = 0;
	for (let i = 0; i < s.length; i++) {
		const k = s.stack[i];
		if (k === null) continue;
		const name = strings[fn.name[ft.func[st.frame[k]]]];
		if (!name.startsWith("off-CPU: ")) continue;
		tr++;
		tw += Array.isArray(s.weight) ? s.weight[i] : 1;
	}
	// The waits under --sched-min have no marker of their own: the summary
	// of the thread counts them (hiddenOffCpuTime). Creating 5,000 threads preempts
	// the main thread 5,000 times, ~0.02 ms each: some 100 intervals of them.
	for (let i = 0; i < t.markers.length; i++)
		if (t.markers.data[i]?.type === "bpfprof.OffCPU") {
			n++;
			offMs += t.markers.endTime[i] - t.markers.startTime[i];
		} else if (t.markers.data[i]?.type === "bpfprof.SchedSummary") {
			offMs += t.markers.data[i].hiddenOffCpuTime || 0;
		}
	threads++; rows += tr; weight += tw; waits += n;
	if (n && Math.abs(tw * intervalMs - offMs) > (n + 1) * intervalMs + 0.01 * offMs)
		bad.push(`${t.tid}: ${tw} samples x ${intervalMs.toFixed(3)} ms, Off-CPU markers and hidden waits ${offMs.toFixed(1)} ms`);
}
const grewKb = attackKb - controlKb, rowsKb = weight * 24 / 1024;
console.log(`     the user: ${threads} threads, ${waits} waits, ${rows} off-CPU rows for ${weight} samples; ` +
	    `peak RSS ${(controlKb / 1024).toFixed(0)} -> ${(attackKb / 1024).toFixed(0)} MiB`);
let fail = 0;
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); fail |= !ok; };
check(threads >= want && waits >= want, `the ${want} threads of the user are in the profile with their waits (${threads}, ${waits})`);
check(rows <= 4 * waits + threads, `${rows} off-CPU rows for ${waits} waits of ${threads} threads (at most 4 a wait and 1 a thread)`);
check(bad.length === 0, `the off-CPU samples of each thread weigh its Off-CPU time (${bad.length} do not${bad.length ? ": " + bad.slice(0, 3).join("; ") : ""})`);
check(weight > 100 * rows, `the rows stand for ${weight} samples, one per interval per wait`);
check(grewKb < rowsKb / 2, `peak RSS grew ${(grewKb / 1024).toFixed(0)} MiB, under half of the ${(rowsKb / 1024).toFixed(0)} MiB one row per sample takes`);
process.exit(fail);
' "$WORK/attack.json.gz" "$LAST_ID" "$CONTROL_RSS" "$ATTACK_RSS" "$THREADS" ||
	fail "late sleepers still cost a row per interval"
ok "the user's late sleepers cost a few rows per wait, their off-CPU time exact"
