#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Overload is visible, never silent (issue 20). `bpfprof -a --ring-size 4K`
# while two threads wake each other ~20k times a second, and the consumer
# stalls for 400 ms one second in (BPFPROF_TEST_STALL, as a slow disk would
# stall it): rings of one page cannot hold that, so records are lost, and
# the profile must say where and how many: a "Lost events" interval covers
# the stall, every interval (one per distinct start and end) counts what was
# lost in it, the intervals add up to the totals in meta.extra, which are
# the totals bpfprof printed, and every thread with samples inside an
# interval carries its marker. The profile still loads.
. "$(dirname "$0")/common.sh"
require_root
make_workdir

: "${PINGPONG:?PINGPONG is not set}"
# It outlives the recording whatever bpfprof's start-up takes; the exit kills it.
start_background pingpong "$PINGPONG" -s 60
sleep 0.3
BPFPROF_PREFIX=(env BPFPROF_TEST_STALL=1000:400)
run_bpfprof 60 -a -d 2.5 --ring-size 4K -o "$WORK/p.json.gz"
expect_success
summary=$(sed -n 's/^bpfprof: [0-9]* samples from .*; \([0-9]*\) samples lost$/\1/p' "$WORK/bpfprof.err")
switches=$(sed -n 's/.*; \([0-9]*\) switches and \([0-9]*\) wakeups lost$/\1 \2/p' "$WORK/bpfprof.err")
log "   printed: $summary samples, $switches switches and wakeups lost"
grep -q '^bpfprof: records were lost in [0-9]* interval' "$WORK/bpfprof.err" ||
	fail "bpfprof did not say when records were lost"

"$NODE" -e '
const zlib = require("zlib"), fs = require("fs");
const [file, samples, switches, wakeups] = process.argv.slice(1);
const p = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)));
const extra = Object.fromEntries(p.meta.extra[0].entries.map((e) => [e.label, e.value]));
const fail = (m) => { console.log("FAIL " + m); process.exit(1); };
const ok = (m) => console.log("ok   " + m);
const want = { samples: +samples, switches: +switches, wakeups: +wakeups };
if (extra["Lost samples"] !== want.samples || extra["Lost switch events"] !== want.switches ||
    extra["Lost wakeup events"] !== want.wakeups)
	fail(`meta.extra says ${extra["Lost samples"]}/${extra["Lost switch events"]}/${extra["Lost wakeup events"]} lost, bpfprof printed ${samples}/${switches}/${wakeups}`);
const total = want.samples + want.switches + want.wakeups;
if (total === 0) fail("nothing was lost with 4 KiB rings and a stalled consumer: the overload was not forced");
const intervals = new Map();
for (const t of p.threads) {
	const m = t.markers;
	for (let i = 0; i < m.length; i++) {
		const d = m.data[i];
		if (!d || d.type !== "bpfprof.LostEvents") continue;
		const key = m.startTime[i] + "-" + m.endTime[i];
		const seen = intervals.get(key);
		if (seen && JSON.stringify(seen.d) !== JSON.stringify(d)) fail(`interval ${key} has two different counts`);
		intervals.set(key, { d, start: m.startTime[i], end: m.endTime[i] });
	}
}
if (intervals.size !== extra["Intervals with lost events (Lost events markers)"])
	fail(`${intervals.size} distinct Lost events intervals, meta.extra says ${extra["Intervals with lost events (Lost events markers)"]}`);
const sum = { samples: 0, switches: 0, wakeups: 0 };
for (const { d } of intervals.values()) for (const k of Object.keys(sum)) sum[k] += d[k];
for (const k of Object.keys(sum))
	if (sum[k] !== want[k]) fail(`the intervals add up to ${sum[k]} lost ${k}, the total is ${want[k]}`);
ok(`${intervals.size} Lost events interval(s) add up to the totals: ${JSON.stringify(sum)}`);
// The stall: 1000 ms to 1400 ms after the start, give or take a poll interval.
const stall = [...intervals.values()].find((iv) => iv.start <= 1400 && iv.end >= 1000);
if (!stall) fail(`no Lost events interval covers the stall at 1000-1400 ms: ${[...intervals.keys()].join(", ")}`);
const lostThere = stall.d.samples + stall.d.switches + stall.d.wakeups;
if (!lostThere) fail("the interval over the stall lost nothing");
ok(`the stall is covered: ${stall.start.toFixed(1)}-${stall.end.toFixed(1)} ms, ${lostThere} records lost`);
// Every thread with a sample inside an interval carries that interval.
const schema = p.meta.markerSchema.find((s) => s.name === "bpfprof.LostEvents");
if (!schema) fail("no bpfprof.LostEvents marker schema");
let covered = 0;
for (const t of p.threads) {
	const s = t.samples, times = [];
	let tm = 0;
	for (let i = 0; i < s.length; i++) { tm += s.timeDeltas ? s.timeDeltas[i] : 0; times.push(s.time ? s.time[i] : tm); }
	const keys = new Set();
	for (let i = 0; i < t.markers.length; i++)
		if (t.markers.data[i] && t.markers.data[i].type === "bpfprof.LostEvents") keys.add(t.markers.startTime[i] + "-" + t.markers.endTime[i]);
	for (const [key, iv] of intervals)
		if (times.some((x) => x >= iv.start && x <= iv.end)) {
			if (!keys.has(key)) fail(`thread ${t.name} (${t.tid}) has samples in ${key} but no Lost events marker there`);
			covered++;
		}
}
ok(`every thread with samples in a lost interval carries its marker (${covered} thread-intervals)`);
' "$WORK/p.json.gz" "$summary" $switches || fail "the lost events checks failed"
run_check valid --profile "$WORK/p.json.gz" --gzip --min-samples 1
