#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// What a person sees first of `bpfprof -- spawner 50 20` (issue 28): the
// tracks in the order the processes started, the launched command first and
// selected; the 30 ms children that did little out of the first view but in
// the profile, and the number hidden said in Profile Info and on stderr; the
// profile starting when the command does; Profile Info without "Main process
// ended" or "Re-symbolicate profile"; kernel functions with a file, so that a
// double-click opens the source view with a note instead of nothing.
//
//   first_view_checks.mjs --profile F --pid CMD_PID --stderr BPFPROF_STDERR

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { basePid, CATEGORY_KERNEL } from './profile.mjs';
import { fmt, Report } from './report.mjs';

// bpfprof -v says when it had attached its programs (and read kallsyms,
// 150-400 ms) and when the profile starts: the start must follow the
// attaching, so that none of it shows as an empty stretch before the
// command. A property of the order of events, not a margin in ms that a
// loaded machine's wakeup and exec could eat.
const START_LINE = /^bpfprof: debug: attached by (\d+) ns \(CLOCK_MONOTONIC\); the profile starts at (\d+) ns, when the command is released$/m;
const HIDDEN_LABEL = 'Short-lived processes hidden at first (in the track menu)';
// userspace/emit/profile_tables.h KERNEL_SOURCE_SUFFIX, after the resource
const KERNEL_NOTE_SUFFIX = ' (no source)';

const { values } = parseArgs({
	options: { profile: { type: 'string' }, pid: { type: 'string' }, stderr: { type: 'string' } },
});
if (!values.profile || !/^\d+$/.test(values.pid || '') || !values.stderr) {
	console.error('usage: first_view_checks.mjs --profile F --pid CMD_PID --stderr FILE');
	process.exit(2);
}
const report = new Report('first view');
const profile = openCheckedProfile(report, values.profile, { gzip: true });
if (!profile)
	process.exit(report.finish());
const { meta, threads } = profile;
const cmdPid = values.pid;
const vis = new Set(meta.initialVisibleThreads || []);
const sel = meta.initialSelectedThreads || [];

report.section('track order: by process start, the launched command first');
// One entry per process image, in file order (the order of its first thread).
const procs = [];
for (const [i, t] of threads.entries()) {
	if (!procs.length || procs[procs.length - 1].pid !== t.pid)
		procs.push({ pid: t.pid, start: t.processStartupTime, name: t.processName, first: i });
}
const cmdImages = procs.filter((p) => basePid(p.pid) === cmdPid);
const lead = procs.slice(0, cmdImages.length);
report.check(cmdImages.length > 0 && lead.every((p) => basePid(p.pid) === cmdPid),
	     `the command's image(s) come first: ${procs.slice(0, 3).map((p) => `${p.name} (${p.pid})`).join(', ')}`);
const rest = procs.slice(cmdImages.length);
const outOfOrder = rest.filter((p, i) => i > 0 && p.start < rest[i - 1].start);
report.check(rest.length >= 50 && outOfOrder.length === 0,
	     `the other ${rest.length} processes are in start order (${outOfOrder.length} out of order` +
		     (outOfOrder.length ? `, e.g. ${outOfOrder[0].name} (${outOfOrder[0].pid}) at ${outOfOrder[0].start} ms` : '') + ')');
// The front-end orders process tracks by CPU whatever the file's order, and keeps only
// Gecko's parent process ("default") above them (tracks.ts _getDefaultGlobalTrackOrder):
// the exec'd child burns more CPU than the command, so without it the command sits below.
const defaultPids = new Set(threads.filter((t) => t.processType === 'default').map((t) => basePid(t.pid)));
report.check(defaultPids.size === 1 && defaultPids.has(cmdPid),
	     `the front-end draws the command's track first: it alone is processType "default" ` +
		     `(pids: ${[...defaultPids].join(', ') || 'none'})`);
const t0 = threads[sel[0]];
report.check(sel.length === 1 && t0 && basePid(t0.pid) === cmdPid && t0.isMainThread && vis.has(sel[0]),
	     `the command's main thread is selected and shown (${t0 ? `${t0.name} ${t0.pid}/${t0.tid}` : 'none'})`);

report.section('short-lived children that did little start hidden, and are said to be');
const children = procs.filter((p) => p.name === 'spawn-child');
const shownChildren = children.filter((p) => vis.has(p.first));
report.check(children.length === 50, `the 50 children are all in the profile (${children.length})`);
report.check(shownChildren.length === 0,
	     `none of them is in the first view (${shownChildren.length} shown)`);
const cmdThreads = threads.map((t, i) => [t, i]).filter(([t]) => basePid(t.pid) === cmdPid);
report.check(cmdThreads.every(([, i]) => vis.has(i)),
	     `every thread of the command is shown (${cmdThreads.length})`);
// The exec'd child: the image that burned 300 ms. The fork it began as is an image of its
// own ("PID", then "PID.1") when it got an event before its exec; that one did nothing, and
// starts hidden like the other children.
const cpuOf = (p) => threads.filter((t) => t.pid === p.pid)
	.reduce((sum, t) => sum + (t.samples.threadCPUDelta || []).reduce((a, b) => a + (b || 0), 0), 0);
const execPid = procs.find((p) => p.name === 'spawner' && basePid(p.pid) !== cmdPid)?.pid;
const execImages = execPid ? procs.filter((p) => basePid(p.pid) === basePid(execPid)) : [];
const execChild = execImages.reduce((best, p) => (!best || cpuOf(p) > cpuOf(best) ? p : best), null);
report.check(execChild && vis.has(execChild.first),
	     `the exec'd child, which burned 300 ms, is shown (${execChild ? execChild.pid : 'absent'})`);
const preExec = execImages.filter((p) => p !== execChild);
report.check(preExec.every((p) => !vis.has(p.first)),
	     `the fork it began as, which did nothing, starts hidden (${preExec.map((p) => p.pid).join(', ') || 'none in the profile'})`);
const hiddenWant = children.length + preExec.length;
const hidden = profile.extraValue(HIDDEN_LABEL);
report.check(hidden === hiddenWant, `Profile Info says "${HIDDEN_LABEL}": ${hidden} (want ${hiddenWant})`);
const shownLabel = profile.extraValue('Tracks shown at first');
report.check(shownLabel === `${vis.size} of ${threads.length}`,
	     `Profile Info says "Tracks shown at first": ${shownLabel} (${vis.size} of ${threads.length})`);
const stderr = readFileSync(values.stderr, 'utf8');
const line = stderr.split('\n').find((l) => /tracks shown at first/.test(l)) || '';
report.check(line.includes(`${vis.size} of ${threads.length} tracks shown at first`) &&
		     line.includes(`${hiddenWant} short-lived child processes`),
	     `the end-of-run summary says so: "${line}"`);

report.section('the profile starts when the command does');
const startLine = stderr.match(START_LINE);
const attachedNs = startLine ? BigInt(startLine[1]) : null;
const startNs = startLine ? BigInt(startLine[2]) : null;
report.check(startLine && attachedNs <= startNs,
	     `bpfprof -v: the profile starts once the programs are attached (attached by ${attachedNs ?? '?'} ns, ` +
		     `the profile starts at ${startNs ?? '?'} ns)`);
const metaStart = meta.startTimeAsClockMonotonicNanosecondsSinceBoot;
report.check(startNs !== null && Number.isFinite(metaStart) && Math.abs(Number(startNs) - metaStart) < 1000,
	     `the profile's 0 is that instant (meta.startTimeAsClockMonotonicNanosecondsSinceBoot ${metaStart})`);
const cmdStart = Math.max(...cmdImages.map((p) => p.start));
report.check(cmdStart >= 0, `the command's exec at ${fmt(cmdStart)} ms, after the profile's 0`);
const processMarkers = [];
for (const [t] of cmdThreads) {
	const m = t.markers;
	for (let i = 0; i < m.length; i++) {
		if (profile.string(m.name[i]) === 'Process')
			processMarkers.push(m.startTime[i]);
	}
}
report.check(processMarkers.length > 0 && processMarkers.every((s) => s >= 0),
	     `the command's Process markers start at >= 0 (${processMarkers.map((s) => fmt(s)).join(', ')})`);
const firstOnCpu = Math.min(...cmdThreads.flatMap(([t]) =>
	profile.samplesOf(t).filter((s) => profile.isOnCpu(s)).map((s) => s.time)));
report.check(Number.isFinite(firstOnCpu) && firstOnCpu >= 0,
	     `the command's first on-CPU sample at ${fmt(firstOnCpu)} ms, not before the profile's 0`);

report.section('Profile Info');
report.check(meta.endTime === undefined,
	     `no meta.endTime, shown as "Main process ended" (found ${meta.endTime})`);
report.check(meta.profilingEndTime > 0, `meta.profilingEndTime gives "Recording length": ${fmt(meta.profilingEndTime)} ms`);
report.check(meta.symbolicated === true && meta.symbolicationNotSupported === true,
	     `symbolicated, with no "Re-symbolicate profile" button (symbolicationNotSupported: ${meta.symbolicationNotSupported})`);

report.section('kernel frames: a double-click opens the source view, with a note');
// The front-end opens the bottom box for a func with a source (its file) or
// a native symbol (bottom-box.ts, updateBottomBoxContentsAndMaybeOpen).
const { frameTable, funcTable, sources } = profile.shared;
const kernelFuncs = new Set();
const userFuncs = new Set();
for (let f = 0; f < frameTable.length; f++)
	(frameTable.category[f] === CATEGORY_KERNEL ? kernelFuncs : userFuncs).add(frameTable.func[f]);
const fileOf = (func) => {
	const s = funcTable.source[func];
	return s === null || s === undefined ? null : profile.string(sources.filename[s]);
};
const noted = (f) => fileOf(f) === `${profile.resourceNameOfFunc(f) ?? '[kernel]'}${KERNEL_NOTE_SUFFIX}`;
const noFile = [...kernelFuncs].filter((f) => !noted(f));
report.check(kernelFuncs.size > 0 && noFile.length === 0,
	     `${kernelFuncs.size} kernel functions have "<resource>${KERNEL_NOTE_SUFFIX}" as their file, e.g. ` +
		     `"${fileOf([...kernelFuncs][0])}" (${noFile.length} without, e.g. ` +
		     `${noFile.slice(0, 3).map((f) => profile.funcName(f)).join(', ') || 'none'})`);
const userNoted = [...userFuncs].filter((f) => !kernelFuncs.has(f) && (fileOf(f) || '').endsWith(KERNEL_NOTE_SUFFIX));
report.check(userNoted.length === 0, `no user function carries it (${userNoted.length})`);

checkWithProfilerCli(report, profile);
process.exit(report.finish());
