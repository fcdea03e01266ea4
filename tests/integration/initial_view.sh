#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# What a person sees first in the Firefox Profiler (issue 21): the profile
# says which tracks show at load (meta.initialVisibleThreads) and which is
# selected (initialSelectedThreads), and every profile passes the marker
# checks (check.mjs valid: every schema has a colour; no two markers of a
# thread that the table would show as the same row).
#
#   cmd   -- spawner 50 20: every thread of the command is shown, and its
#         main thread is selected (its 50 children of ~30 ms start hidden
#         since issue 28: first_view.sh command).
#   pid   -p burner: every thread of the burner is shown.
#   all   -a while pipepair's reader spends the recording blocked in read():
#         the reader is among the threads shown, though it barely ran, and
#         the thread with the most CPU is selected (never bpfprof itself).
#   blocked  -p pipepair, whose main thread sleeps (sleep_until, then
#         pthread_join) from before the start to after the end: its track
#         is not blank but holds off-CPU samples over the whole recording
#         ("off-CPU: sleeping"), with one Off-CPU marker, at the stack it
#         sleeps in, user and kernel, read as it sleeps.
#
# Usage: initial_view.sh cmd|pid|all|blocked
. "$(dirname "$0")/common.sh"
require_root
make_workdir

MODE=${1:?usage: initial_view.sh cmd|pid|all|blocked}
OUT=$WORK/p.json.gz

# view_check WANT_PIDS SELECTED_PID READER_TID: the initial view against the profile.
view_check() {
	"$NODE" -e '
	const p = JSON.parse(require("zlib").gunzipSync(require("fs").readFileSync(process.argv[1])));
	const [wantPids, selPid, readerTid, mostCpu] = process.argv.slice(2);
	const vis = p.meta.initialVisibleThreads, sel = p.meta.initialSelectedThreads;
	const fail = (m) => { console.log("FAIL " + m); process.exit(1); };
	const ok = (m) => console.log("ok   " + m);
	if (!Array.isArray(vis) || !vis.length) fail("no meta.initialVisibleThreads");
	if (vis.some((i) => !Number.isInteger(i) || i < 0 || i >= p.threads.length))
		fail("an initialVisibleThreads index is not a thread (the app throws on it)");
	if (!Array.isArray(sel) || sel.length !== 1 || !vis.includes(sel[0]))
		fail(`initialSelectedThreads ${JSON.stringify(sel)} is not one shown thread`);
	const shown = new Set(vis);
	const base = (pid) => String(pid).split(".")[0];
	if (wantPids) {
		const want = new Set(wantPids.split(","));
		const missing = p.threads.map((t, i) => [t, i]).filter(([t, i]) => want.has(base(t.pid)) && !shown.has(i));
		if (missing.length) fail(`${missing.length} target threads are hidden: ${missing.slice(0, 5).map(([t]) => `${t.name} (${t.tid})`).join(", ")}`);
		ok(`all ${p.threads.filter((t) => want.has(base(t.pid))).length} threads of ${want.size} target process(es) are shown`);
	}
	if (selPid) {
		const t = p.threads[sel[0]];
		if (base(t.pid) !== selPid || !t.isMainThread) fail(`the selected thread is ${t.name} (${t.pid}/${t.tid}), not the main thread of ${selPid}`);
		ok(`the main thread of the command, ${t.name} (${t.tid}) is selected`);
	}
	if (readerTid) {
		const i = p.threads.findIndex((t) => String(t.tid) === readerTid);
		if (i < 0) fail(`the reader ${readerTid} is not in the profile`);
		if (!shown.has(i)) fail(`the blocked reader ${readerTid} is hidden (shown: ${vis.length} of ${p.threads.length})`);
		ok(`the blocked reader ${p.threads[i].name} (${readerTid}) is shown (${vis.length} of ${p.threads.length} threads shown)`);
	}
	if (mostCpu) {
		// -a: what is selected first is where the CPU went, not bpfprof polling its rings.
		const cpu = (t) => (t.samples.threadCPUDelta || []).reduce((a, b) => a + (b || 0), 0);
		const cand = p.threads.filter((t) => t.pid !== "0" && t.processType !== "profiler (bpfprof)");
		const best = cand.reduce((a, t) => (cpu(t) > cpu(a) ? t : a), cand[0]);
		const t = p.threads[sel[0]];
		if (t.processType === "profiler (bpfprof)") fail(`bpfprof itself is selected (${t.name}, ${t.tid})`);
		if (cpu(t) !== cpu(best)) fail(`the selected ${t.name} (${t.tid}) used ${cpu(t)} of CPU, ${best.name} (${best.tid}) ${cpu(best)}`);
		ok(`the thread with the most CPU is selected: ${t.name} (${t.tid}), ${cpu(t)} ${p.meta.sampleUnits.threadCPUDelta}`);
	}
	' "$OUT" "$@" || fail "the initial view is not what the recording was about"
}

case $MODE in
cmd)
	# The command waits for its children: under 5 % of the busiest thread's
	# CPU, which the app hid before issue 21.
	run_bpfprof 60 -o "$OUT" -- "$SPAWNER" 50 20
	expect_success
	cmd_pid=$(sed -n 's/^spawner: truth self \([0-9]*\).*/\1/p' "$WORK/bpfprof.err" | head -1)
	[[ $cmd_pid =~ ^[0-9]+$ ]] || fail "spawner did not say its pid: $(tail -3 "$WORK/bpfprof.err")"
	view_check "$cmd_pid" "$cmd_pid" ""
	;;
pid)
	start_burner 20
	pid=$BURNER_PID # stop_burner clears BURNER_PID
	run_bpfprof 60 -p "$pid" -d 2 -o "$OUT"
	expect_success
	stop_burner
	view_check "$pid" "" ""
	;;
all)
	: "${PIPEPAIR:?PIPEPAIR is not set}"
	# It outlives the recording whatever bpfprof's start-up takes; the exit kills it.
	start_background pipepair "$PIPEPAIR" 60 200
	PP=$BG_PID
	wait_output pipepair '^thread preader [0-9]+$'
	reader=$(sed -n 's/^thread preader \([0-9]*\)$/\1/p' "$WORK/pipepair.out")
	run_bpfprof 60 -a -d 3 -o "$OUT"
	expect_success
	view_check "" "" "$reader" most-cpu
	;;
blocked)
	: "${PIPEPAIR:?PIPEPAIR is not set}"
	# It outlives the recording whatever bpfprof's start-up takes; the exit
	# kills it. Its main thread is asleep before the recording starts.
	start_background pipepair "$PIPEPAIR" 60 200
	PP=$BG_PID
	wait_output pipepair '^thread preader [0-9]+$'
	wait_nanosleep "$PP"
	run_bpfprof 60 -p "$PP" -d 2 -o "$OUT"
	expect_success
	view_check "$PP" "" ""
	# Where it waits: main -> sleep_until -> clock_nanosleep, read as it sleeps
	# (its switch-out came before the recording).
	run_check sched --profile "$OUT" --gzip --pid "$PP" \
		--expect "blocked-throughout pipepair sleeping" \
		--expect "offcpu-stack pipepair sleeping sleep_until nanosleep"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
run_check valid --profile "$OUT" --gzip --min-samples 1
