#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Syscall markers (issue 5): a profile of the syscaller workload
// (tests/workloads/syscaller.c) judged against what the workload says it did,
// on the file and through the Firefox Profiler's own loader (profiler-cli).
//
//   syscall_checks.mjs --profile F --pid P --truth FILE [--bpfprof-err FILE]
//                      (--syscall-min MS | --no-syscalls) [--gzip|--plain]
//
// --truth: the workload's stderr with its "syscaller: truth" lines (tids, the
// pipe's fds, bytes asked and written, how many reads, writes and getppid
// calls it made). --bpfprof-err: bpfprof's stderr, whose closing summary
// ("N syscalls counted, M shown as markers; X markers and Y totals lost")
// must agree with the profile. With --syscall-min MS the capture was on at
// that marker threshold; --no-syscalls says it was off. Exit status 0 when
// all checks pass, 1 when one fails, 2 on bad usage.
//
// What is checked:
//   contract      schemas, every Syscall marker's shape (name = syscall,
//                 Kernel category, at least the threshold long, error named
//                 for -errno results) and every "Syscall totals" marker's
//                 (one per thread and syscall, shown = its markers, shown <=
//                 count, average = time / count, time >= its markers' time)
//   sreader       read(2) markers of ~PERIOD ms with the reader's fd, the
//                 bytes it asked as count and the bytes one write gave as ret
//   sfeeder       every write(2) counted; at threshold 0, each one a marker
//                 with the writer's fd and byte count
//   sspinner      every getppid(2) counted, with their time; at 1 ms no
//                 flood of markers, at 0 one marker per call
//   threshold 0   every counted syscall of the process is a marker
//   --no-syscalls no syscall schema, marker or totals anywhere

import { readFileSync } from 'node:fs';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_KERNEL, CATEGORY_OTHER } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

export const SYSCALL_SCHEMA = 'bpfprof.Syscall';
export const TOTALS_SCHEMA = 'bpfprof.SyscallTotals';
export const TOTALS_NAME = 'Syscall totals';
// [schema, display the contract asks for, field keys the emitter writes]
const SCHEMAS = [
	[SYSCALL_SCHEMA, ['marker-chart', 'marker-table'], ['syscall', 'args', 'fd', 'count', 'ret', 'error']],
	[TOTALS_SCHEMA, ['marker-table'], ['syscall', 'count', 'time', 'average', 'shown', 'thresholdMs']],
];
export const WORKERS = ['sreader', 'sfeeder', 'sspinner'];

// Marker times are written in ms with ns digits; a duration compared with
// the threshold may lose a little to the subtraction of two such numbers.
const DURATION_EPSILON_MS = 0.002;
// "average" is the total's ns divided by the count, truncated to a ns.
const AVERAGE_EPSILON_MS = 1.5e-6;
// The reader's reads last the feeder's period, less the feeder's short run;
// a busy machine stretches a few of them.
const PERIOD_TOLERANCE = 0.3;
const MAJORITY_PERCENT = 90;
// At a threshold of 1 ms or more a getppid(2) is a marker only when the
// spinner was preempted inside that ~1 µs call and kept off the CPU: never
// more often than the calls that took 1 ms by its own clock (slow_1ms),
// which is a few on a quiet machine and hundreds on a busy one.
const SLOW_MS = 1;

// ---- inputs ----------------------------------------------------------------------

// The workload's ground truth (syscaller.c):
//   syscaller: truth sreader tid T fd F ask A reads R bytes B
//   syscaller: truth sfeeder tid T fd F bytes_per_write B writes W period_ms P
//   syscaller: truth sspinner tid T getppid N loop_wall_ms W slow_1ms S
export function parseSyscallerTruth(text) {
	const truth = {};
	for (const line of text.split('\n')) {
		let m = line.match(/^syscaller: truth sreader tid (\d+) fd (\d+) ask (\d+) reads (\d+) bytes (\d+)$/);
		if (m) {
			truth.sreader = { tid: m[1], fd: Number(m[2]), ask: Number(m[3]), reads: Number(m[4]), bytes: Number(m[5]) };
			continue;
		}
		m = line.match(/^syscaller: truth sfeeder tid (\d+) fd (\d+) bytes_per_write (\d+) writes (\d+) period_ms ([\d.]+)$/);
		if (m) {
			truth.sfeeder = { tid: m[1], fd: Number(m[2]), bytesPerWrite: Number(m[3]), writes: Number(m[4]),
					  periodMs: Number(m[5]) };
			continue;
		}
		m = line.match(/^syscaller: truth sspinner tid (\d+) getppid (\d+) loop_wall_ms ([\d.]+) slow_1ms (\d+)$/);
		if (m)
			truth.sspinner = { tid: m[1], getppid: Number(m[2]), loopWallMs: Number(m[3]), slow: Number(m[4]) };
	}
	for (const name of WORKERS) {
		if (!truth[name])
			throw new Error(`the truth has no "syscaller: truth ${name} ..." line`);
	}
	return truth;
}

// bpfprof's closing summary line about syscalls, or null when it printed none.
export function parseBpfprofSummary(text) {
	const m = text.match(/^bpfprof: (\d+) syscalls counted, (\d+) shown as markers; (\d+) markers and (\d+) totals lost$/m);
	return m ? { counted: Number(m[1]), shown: Number(m[2]), lostMarkers: Number(m[3]), lostTotals: Number(m[4]) } : null;
}

// ---- reading the syscall parts of a profile -----------------------------------------

function markersOf(profile, thread) {
	const m = thread.markers;
	const out = [];
	for (let i = 0; i < (m?.length || 0); i++) {
		out.push({ index: i, name: profile.string(m.name[i]), start: m.startTime[i], end: m.endTime[i],
			   phase: m.phase[i], category: m.category[i], data: m.data[i] || {},
			   duration: m.endTime[i] - m.startTime[i] });
	}
	return out;
}

export function syscallMarkersOf(profile, thread) {
	return markersOf(profile, thread).filter((m) => m.data.type === SYSCALL_SCHEMA);
}

export function totalsMarkersOf(profile, thread) {
	return markersOf(profile, thread).filter((m) => m.name === TOTALS_NAME || m.data.type === TOTALS_SCHEMA);
}

// syscall name -> the data of its "Syscall totals" marker in THREAD.
function totalsBySyscall(profile, thread) {
	return new Map(totalsMarkersOf(profile, thread).map((m) => [m.data.syscall, m.data]));
}

function countBy(items, key) {
	const map = new Map();
	for (const x of items)
		map.set(key(x), (map.get(key(x)) || 0) + 1);
	return map;
}

function median(values) {
	if (values.length === 0)
		return NaN;
	const v = [...values].sort((a, b) => a - b);
	const m = v.length >> 1;
	return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

function who(thread) {
	return `${thread.name} (${thread.tid})`;
}

function list(items, n = 3) {
	return items.length ? `: ${items.slice(0, n).join('; ')}` : '';
}

// ---- the contract -------------------------------------------------------------------

function checkSchemas(report, profile, on) {
	const schemas = new Map((profile.meta.markerSchema || []).map((s) => [s.name, s]));
	for (const [name, display, fields] of SCHEMAS) {
		const s = schemas.get(name);
		if (!on) {
			report.check(!s, `--no-syscalls: meta.markerSchema has no ${name} (found ${s ? 'one' : 'none'})`);
			continue;
		}
		const missingDisplay = display.filter((d) => !(s?.display || []).includes(d));
		const keys = (s?.fields || []).map((f) => f.key);
		const missingFields = fields.filter((k) => !keys.includes(k));
		report.check(s && missingDisplay.length === 0 && missingFields.length === 0,
			     `marker schema ${name} is declared with display ${display.join(', ')} and fields ${fields.join(', ')}` +
				     `${!s ? ' (no schema)' : ''}${missingDisplay.length ? ` (display lacks ${missingDisplay.join(', ')})` : ''}` +
				     `${missingFields.length ? ` (fields lack ${missingFields.join(', ')})` : ''}`);
	}
}

// Why a Syscall marker breaks the contract, or null.
function syscallMarkerProblem(m, thresholdMs) {
	const d = m.data;
	const errno = Number.isInteger(d.ret) && d.ret < 0 && d.ret >= -4095;
	if (m.name !== d.syscall)
		return `named "${m.name}", data.syscall ${JSON.stringify(d.syscall)}`;
	if (m.phase !== 1 || m.category !== CATEGORY_KERNEL)
		return `phase ${m.phase}, category ${m.category}`;
	if (!(m.end >= m.start))
		return `ends at ${m.end} before its start ${m.start}`;
	if (m.duration < thresholdMs - DURATION_EPSILON_MS)
		return `lasts ${fmt(m.duration, 4)} ms, under the ${thresholdMs} ms threshold`;
	if (typeof d.args !== 'string' || !Number.isInteger(d.ret))
		return `args ${JSON.stringify(d.args)}, ret ${JSON.stringify(d.ret)}`;
	if (errno !== (typeof d.error === 'string' && d.error.length > 0))
		return `ret ${d.ret} with error ${JSON.stringify(d.error)}`;
	for (const k of ['fd', 'count']) {
		if (d[k] !== undefined && !(Number.isInteger(d[k]) && d[k] >= 0))
			return `${k} ${JSON.stringify(d[k])}`;
	}
	return null;
}

// Why a thread's totals break the contract: each problem a string.
function totalsProblems(thread, totals, markers, thresholdMs) {
	const bad = [];
	const shown = countBy(markers, (m) => m.name);
	const markerMs = new Map();
	for (const m of markers)
		markerMs.set(m.name, (markerMs.get(m.name) || 0) + m.duration);
	const seen = new Set();
	for (const t of totals) {
		const d = t.data;
		const at = `${who(thread)} ${d.syscall}`;
		if (t.name !== TOTALS_NAME || d.type !== TOTALS_SCHEMA || t.phase !== 1 || t.category !== CATEGORY_OTHER)
			bad.push(`${at}: name "${t.name}", type ${d.type}, phase ${t.phase}, category ${t.category}`);
		else if (seen.has(d.syscall))
			bad.push(`${at}: a second totals marker`);
		else if (!(Math.abs(d.thresholdMs - thresholdMs) < 1e-6))
			bad.push(`${at}: thresholdMs ${d.thresholdMs}, expected ${thresholdMs}`);
		else if (!(Number.isInteger(d.count) && d.count >= 1 && Number.isInteger(d.shown) && d.shown >= 0 &&
			   d.shown <= d.count))
			bad.push(`${at}: count ${d.count}, shown ${d.shown}`);
		else if (d.shown !== (shown.get(d.syscall) || 0))
			bad.push(`${at}: shown ${d.shown}, but the thread has ${shown.get(d.syscall) || 0} such markers`);
		else if (!(d.time >= 0) || Math.abs(d.average - d.time / d.count) > AVERAGE_EPSILON_MS)
			bad.push(`${at}: time ${d.time} ms, average ${d.average} ms for ${d.count} calls`);
		else if (d.time + DURATION_EPSILON_MS < (markerMs.get(d.syscall) || 0))
			bad.push(`${at}: time ${d.time} ms, less than its markers' ${fmt(markerMs.get(d.syscall), 3)} ms`);
		seen.add(d.syscall);
	}
	for (const name of shown.keys()) {
		if (!seen.has(name))
			bad.push(`${who(thread)} ${name}: ${shown.get(name)} markers but no totals`);
	}
	return bad;
}

// What holds for every profile recorded with syscall capture on, in every thread.
export function checkSyscallContract(report, profile, { thresholdMs }) {
	report.section(`syscall contract (issue 5), threshold ${thresholdMs} ms`);
	checkSchemas(report, profile, true);
	const bad = [];
	const badTotals = [];
	let markers = 0;
	let totals = 0;
	for (const t of profile.threads) {
		const ms = syscallMarkersOf(profile, t);
		const ts = totalsMarkersOf(profile, t);
		markers += ms.length;
		totals += ts.length;
		for (const m of ms) {
			const why = syscallMarkerProblem(m, thresholdMs);
			if (why)
				bad.push(`${who(t)} ${m.name}[${m.index}]: ${why}`);
		}
		badTotals.push(...totalsProblems(t, ts, ms, thresholdMs));
	}
	report.check(bad.length === 0,
		     `every Syscall marker is named after its syscall, an interval in category Kernel at least ${thresholdMs} ` +
			     `ms long, with its arguments, result and, for -errno results, the error (${bad.length} of ` +
			     `${markers} are not${list(bad)})`);
	report.check(totals > 0 && badTotals.length === 0,
		     `the ${totals} "Syscall totals" markers are one per thread and syscall, category Other, at threshold ` +
			     `${thresholdMs} ms, ` +
			     `with shown = the thread's markers of that syscall <= count, average = time / count, and time at ` +
			     `least its markers' (${badTotals.length} problems${list(badTotals)})`);
}

// bpfprof's own summary: nothing lost, and exactly what the profile holds.
function checkSummary(report, profile, summary) {
	if (!report.check(summary, 'bpfprof printed its syscall summary ("N syscalls counted, ...")'))
		return;
	report.check(summary.lostMarkers === 0 && summary.lostTotals === 0,
		     `bpfprof lost no syscall records (${summary.lostMarkers} markers and ${summary.lostTotals} totals lost; ` +
			     `the exact counts below need all of them)`);
	let counted = 0;
	let shown = 0;
	for (const t of profile.threads) {
		shown += syscallMarkersOf(profile, t).length;
		for (const m of totalsMarkersOf(profile, t))
			counted += m.data.count || 0;
	}
	report.check(counted === summary.counted && shown === summary.shown,
		     `the profile holds what bpfprof says it recorded: ${counted} syscalls in its totals (bpfprof: ` +
			     `${summary.counted}), ${shown} Syscall markers (bpfprof: ${summary.shown})`);
}

// ---- the workload's threads -----------------------------------------------------------

// Finds each worker by name under PID and checks its tid against the truth.
function resolveWorkers(report, profile, pid, truth) {
	const threads = new Map();
	for (const name of WORKERS) {
		const found = profile.threadsOf(pid).filter((t) => t.name === name);
		const tid = truth[name].tid;
		if (report.check(found.length === 1 && String(found[0].tid) === tid,
				 `thread "${name}" appears once under pid ${pid} with the tid it printed, ${tid} ` +
					 `(found ${found.map((t) => t.tid).join(', ') || 'none'})`))
			threads.set(name, found[0]);
	}
	return threads;
}

// read(2) of the reader: its fd and bytes asked, what one write gave, ~period long.
function checkReader(ctx) {
	const { report, profile, truth, thresholdMs } = ctx;
	const t = ctx.threads.get('sreader');
	const r = truth.sreader;
	const f = truth.sfeeder;
	const reads = syscallMarkersOf(profile, t).filter((m) => m.name === 'read');
	const ours = reads.filter((m) => m.data.fd === r.fd && m.data.count === r.ask);
	const full = reads.filter((m) => m.data.ret === f.bytesPerWrite);
	const bytes = reads.reduce((n, m) => n + (m.data.ret > 0 ? m.data.ret : 0), 0);
	const med = median(reads.map((m) => m.duration));
	const kernel = reads.filter((m) => m.category === CATEGORY_KERNEL).length;
	const totals = totalsBySyscall(profile, t).get('read');
	ctx.file.readMarkers = reads.length;
	ctx.file.readFull = full.length;
	report.section(`sreader: read(${r.fd}, buf, ${r.ask}) fed ${f.bytesPerWrite} bytes every ${f.periodMs} ms`);
	report.check(reads.length > 0 && ours.length === reads.length && kernel === reads.length,
		     `sreader: ${ours.length} of its ${reads.length} read markers have fd ${r.fd} and count ${r.ask} (the bytes ` +
			     `asked), ${kernel} category Kernel (need all, and some)`);
	report.check(reads.length > 0 && (100 * full.length) / reads.length >= MAJORITY_PERCENT,
		     `sreader: ${full.length} of ${reads.length} read markers return ${f.bytesPerWrite} bytes, one write ` +
			     `(need >= ${MAJORITY_PERCENT}%)`);
	report.check(Math.abs(med - f.periodMs) <= PERIOD_TOLERANCE * f.periodMs,
		     `sreader: its read markers last ${fmt(med, 2)} ms (median; the feeder's period ${f.periodMs} ms ` +
			     `±${100 * PERIOD_TOLERANCE}%)`);
	report.check(totals?.count === r.reads,
		     `sreader: its read totals count ${totals?.count} calls, the reader made ${r.reads}`);
	if (thresholdMs === 0) {
		const eof = reads.filter((m) => m.data.ret === 0).length;
		report.check(reads.length === r.reads && eof === 1 && bytes === r.bytes,
			     `sreader at threshold 0: ${reads.length} read markers (the reader made ${r.reads}), ${eof} at end of ` +
				     `file (need 1), returning ${bytes} bytes in all (it read ${r.bytes})`);
	} else {
		const min = Math.ceil((MAJORITY_PERCENT / 100) * f.writes);
		report.check(reads.length >= min && reads.length <= r.reads && bytes <= r.bytes,
			     `sreader: ${reads.length} read markers for the feeder's ${f.writes} writes (need ${min}–${r.reads}, ` +
				     `the reads it made), returning ${bytes} bytes (it read ${r.bytes})`);
	}
}

// write(2) of the feeder: all counted; at threshold 0 each one a marker.
function checkFeeder(ctx) {
	const { report, profile, truth, thresholdMs } = ctx;
	const t = ctx.threads.get('sfeeder');
	const f = truth.sfeeder;
	const totals = totalsBySyscall(profile, t).get('write');
	report.section(`sfeeder: write(${f.fd}, buf, ${f.bytesPerWrite}) x ${f.writes}`);
	report.check(totals?.count === f.writes, `sfeeder: its write totals count ${totals?.count} calls, it made ${f.writes}`);
	if (thresholdMs !== 0)
		return;
	const writes = syscallMarkersOf(profile, t).filter((m) => m.name === 'write');
	const exact = writes.filter((m) => m.data.fd === f.fd && m.data.count === f.bytesPerWrite &&
				    m.data.ret === f.bytesPerWrite).length;
	ctx.file.writeMarkers = writes.length;
	report.check(writes.length === f.writes && exact === writes.length,
		     `sfeeder at threshold 0: ${writes.length} write markers (it made ${f.writes}), ${exact} with fd ${f.fd}, ` +
			     `count ${f.bytesPerWrite} and ret ${f.bytesPerWrite}`);
}

// getppid(2) of the spinner: every call counted with its time, and markers
// only for calls at least the threshold long.
function checkSpinner(ctx) {
	const { report, profile, truth, thresholdMs } = ctx;
	const t = ctx.threads.get('sspinner');
	const s = truth.sspinner;
	const totals = totalsBySyscall(profile, t).get('getppid');
	const markers = syscallMarkersOf(profile, t).filter((m) => m.name === 'getppid');
	ctx.file.getppidMarkers = markers.length;
	report.section(`sspinner: getppid() x ${s.getppid} in ${fmt(s.loopWallMs, 1)} ms`);
	report.check(s.getppid >= 1000, `sspinner made ${s.getppid} getppid calls, a tight loop (need >= 1000)`);
	report.check(totals?.count === s.getppid,
		     `sspinner: its getppid totals count ${totals?.count} calls, it made ${s.getppid}`);
	// The calls happen inside the loop the spinner timed, so they take part of it.
	report.check(totals && totals.time > 0 && totals.time <= s.loopWallMs + DURATION_EPSILON_MS,
		     `sspinner: its getppid calls took ${totals?.time} ms in all, within its ${s.loopWallMs} ms loop`);
	if (thresholdMs === 0) {
		report.check(markers.length === s.getppid,
			     `sspinner at threshold 0: ${markers.length} getppid markers, one per call (it made ${s.getppid})`);
	} else if (thresholdMs >= SLOW_MS) {
		report.check(markers.length <= s.slow,
			     `sspinner: ${markers.length} getppid markers at the ${thresholdMs} ms threshold for its ${s.getppid} ` +
				     `calls: no flood (need <= ${s.slow}, the calls that took ${SLOW_MS} ms by its own clock)`);
	} else {
		report.note(`sspinner: ${markers.length} getppid markers at the ${thresholdMs} ms threshold; its own clock ` +
			    `counts only calls of ${SLOW_MS} ms or more (${s.slow}), no bound below that`);
	}
}

// Threshold 0: every syscall counted in the process is also a marker.
function checkEveryCallShown(ctx) {
	const { report, profile, pid } = ctx;
	const bad = [];
	let n = 0;
	for (const t of profile.threadsOf(pid)) {
		for (const m of totalsMarkersOf(profile, t)) {
			n++;
			if (m.data.shown !== m.data.count)
				bad.push(`${who(t)} ${m.data.syscall}: ${m.data.shown} shown of ${m.data.count}`);
		}
	}
	report.section('threshold 0: every call a marker');
	report.check(n > 0 && bad.length === 0,
		     `every one of the ${n} totals of pid ${pid} has shown = count (${bad.length} do not${list(bad)})`);
}

// --no-syscalls: not a trace of syscalls anywhere, yet the workload is there.
export function checkNoSyscalls(report, profile, { pid, truth, summary }) {
	report.section('--no-syscalls');
	checkSchemas(report, profile, false);
	const found = [];
	let kernel = 0;
	for (const t of profile.threads) {
		for (const m of markersOf(profile, t)) {
			if (m.data.type === SYSCALL_SCHEMA || m.data.type === TOTALS_SCHEMA || m.name === TOTALS_NAME)
				found.push(`${who(t)} ${m.name}`);
			if (m.category === CATEGORY_KERNEL)
				kernel++;
		}
	}
	report.check(found.length === 0, `no Syscall or Syscall totals marker in any thread (found ${found.length}${list(found)})`);
	report.check(kernel === 0, `no marker in category Kernel, where syscall markers go (found ${kernel})`);
	if (summary !== undefined)
		report.check(summary === null, 'bpfprof printed no syscall summary');
	const threads = resolveWorkers(report, profile, pid, truth);
	const reader = threads.get('sreader');
	if (reader) {
		const names = markersOf(profile, reader).map((m) => m.name);
		report.check(!names.includes('read'), `sreader has no read marker (its markers: ` +
					       `${[...countBy(names, (x) => x)].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'})`);
	}
	return threads;
}

// ---- through profiler-cli -----------------------------------------------------------------

// `thread markers --list`: every marker of a thread as the front-end shows it.
function cliMarkerList(cli, handle, extra = []) {
	return cli.query('thread', 'markers', '--thread', handle, '--list', '--limit', '0', ...extra).flatMarkers || [];
}

// `thread markers --group-by name`: marker name -> count.
function cliCountsByName(cli, handle) {
	const r = cli.query('thread', 'markers', '--thread', handle, '--group-by', 'name', '--top-n', '1');
	return new Map((r.customGroups || []).map((g) => [g.groupName, g.count]));
}

function cliTotals(cli, handle) {
	const out = new Map();
	for (const m of cliMarkerList(cli, handle, ['--category', 'Other'])) {
		if (m.markerType === TOTALS_SCHEMA)
			out.set(m.data?.syscall, m.data);
	}
	return out;
}

function checkWorkersWithCli(ctx, cli) {
	const { report, profile, truth, thresholdMs } = ctx;
	const countsOf = new Map();
	for (const [name, t] of ctx.threads) {
		const handle = ctx.handles.get(profile.threads.indexOf(t));
		const counts = cliCountsByName(cli, handle);
		countsOf.set(name, counts);
		const file = countBy(syscallMarkersOf(profile, t), (m) => m.name);
		file.set(TOTALS_NAME, totalsMarkersOf(profile, t).length);
		const differ = [...file].filter(([k, v]) => (counts.get(k) || 0) !== v)
			.map(([k, v]) => `${k} ${counts.get(k) || 0} vs ${v}`);
		report.check(differ.length === 0,
			     `profiler-cli: ${name}'s markers by name agree with the file for its ${file.size - 1} syscalls and ` +
				     `${file.get(TOTALS_NAME)} totals (${differ.length} differ${list(differ)})`);
	}
	const handleOf = (name) => ctx.handles.get(profile.threads.indexOf(ctx.threads.get(name)));

	if (ctx.threads.has('sreader')) {
		const r = truth.sreader;
		const bytes = truth.sfeeder.bytesPerWrite;
		const reads = cliMarkerList(cli, handleOf('sreader')).filter((m) => m.name === 'read');
		const ours = reads.filter((m) => m.markerType === SYSCALL_SCHEMA && m.category === 'Kernel' &&
					  m.data?.fd === r.fd && m.data?.count === r.ask);
		const full = reads.filter((m) => m.data?.ret === bytes).length;
		const med = median(reads.map((m) => m.duration));
		report.check(reads.length > 0 && reads.length === ctx.file.readMarkers && ours.length === reads.length &&
				     full === ctx.file.readFull,
			     `profiler-cli: sreader lists ${reads.length} read markers (the file has ${ctx.file.readMarkers}), ` +
				     `${ours.length} in category Kernel with fd ${r.fd} and count ${r.ask}, ${full} returning ${bytes} ` +
				     `(the file: ${ctx.file.readFull}); median ${fmt(med, 2)} ms`);
		if (reads[0])
			report.note(`e.g. ${reads[0].handle}: ${reads[0].label}`);
		const tot = cliTotals(cli, handleOf('sreader')).get('read');
		report.check(tot?.count === r.reads && tot?.shown === reads.length,
			     `profiler-cli: sreader's "Syscall totals" for read says ${tot?.count} calls (it made ${r.reads}), ` +
				     `${tot?.shown} shown (listed: ${reads.length})`);
	}
	if (ctx.threads.has('sfeeder')) {
		const f = truth.sfeeder;
		const tot = cliTotals(cli, handleOf('sfeeder')).get('write');
		report.check(tot?.count === f.writes, `profiler-cli: sfeeder's "Syscall totals" for write says ${tot?.count} ` +
					       `calls (it made ${f.writes})`);
		if (thresholdMs === 0) {
			const writes = cliMarkerList(cli, handleOf('sfeeder'), ['--category', 'Kernel']).filter((m) => m.name === 'write');
			const exact = writes.filter((m) => m.data?.fd === f.fd && m.data?.count === f.bytesPerWrite &&
						    m.data?.ret === f.bytesPerWrite).length;
			report.check(writes.length === f.writes && exact === writes.length,
				     `profiler-cli: sfeeder lists ${writes.length} write markers in category Kernel (it made ${f.writes}), ` +
					     `${exact} with fd ${f.fd}, count and ret ${f.bytesPerWrite}`);
		}
	}
	if (ctx.threads.has('sspinner')) {
		const s = truth.sspinner;
		const tot = cliTotals(cli, handleOf('sspinner')).get('getppid');
		const n = countsOf.get('sspinner').get('getppid') || 0;
		const bound = thresholdMs >= SLOW_MS ? s.slow : Infinity;
		const want = thresholdMs === 0 ? `${s.getppid}, one per call` : `<= ${bound}`;
		report.check(tot?.count === s.getppid && tot?.shown === n && n === ctx.file.getppidMarkers &&
				     (thresholdMs === 0 ? n === s.getppid : n <= bound),
			     `profiler-cli: sspinner's "Syscall totals" for getppid says ${tot?.count} calls (it made ` +
				     `${s.getppid}) and ${tot?.shown} shown; it lists ${n} getppid markers (the file has ` +
				     `${ctx.file.getppidMarkers}; need ${want})`);
		if (tot)
			report.note(`getppid: ${tot.count} calls, ${tot.time} ms in total, ${tot.average} ms on average`);
	}
}

function checkNoSyscallsWithCli(report, profile, cli, handles, threads) {
	for (const [name, t] of threads) {
		const all = cliMarkerList(cli, handles.get(profile.threads.indexOf(t)));
		const found = all.filter((m) => m.markerType === SYSCALL_SCHEMA || m.markerType === TOTALS_SCHEMA ||
					 m.name === TOTALS_NAME || m.category === 'Kernel');
		report.check(found.length === 0,
			     `profiler-cli: none of ${name}'s ${all.length} markers is a syscall marker or totals (found ` +
				     `${found.length}${list(found.map((m) => `${m.name} (${m.markerType})`))})`);
	}
}

// ---- the scenario -------------------------------------------------------------------------

// on: capture was on at thresholdMs; summary: bpfprof's summary (null: it
// printed none; undefined: not given). cli: false skips the loader.
export function checkSyscalls(report, profile, { pid, truth, on = true, thresholdMs, summary, cli = true }) {
	pid = String(pid);
	if (!on) {
		const threads = checkNoSyscalls(report, profile, { pid, truth, summary });
		if (cli)
			checkWithProfilerCli(report, profile, (session, handles) =>
				checkNoSyscallsWithCli(report, profile, session, handles, threads));
		return;
	}
	checkSyscallContract(report, profile, { thresholdMs });
	if (summary !== undefined)
		checkSummary(report, profile, summary);
	report.section(`workload (pid ${pid})`);
	const ctx = { report, profile, pid, truth, thresholdMs, threads: resolveWorkers(report, profile, pid, truth),
		      file: {}, handles: null };
	if (ctx.threads.has('sreader'))
		checkReader(ctx);
	if (ctx.threads.has('sfeeder'))
		checkFeeder(ctx);
	if (ctx.threads.has('sspinner'))
		checkSpinner(ctx);
	if (thresholdMs === 0)
		checkEveryCallShown(ctx);
	if (cli) {
		checkWithProfilerCli(report, profile, (session, handles) => {
			ctx.handles = handles;
			checkWorkersWithCli(ctx, session);
		});
	}
}

const USAGE = 'usage: syscall_checks.mjs --profile FILE --pid PID --truth FILE [--bpfprof-err FILE] ' +
	      '(--syscall-min MS | --no-syscalls) [--gzip|--plain]';

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		truth: { type: 'string' },
		'bpfprof-err': { type: 'string' },
		'syscall-min': { type: 'string' },
		'no-syscalls': { type: 'boolean' },
	});
	const on = !values['no-syscalls'];
	if (positionals.length || !values.profile || !values.truth || !/^\d+$/.test(values.pid || '') ||
	    on === (values['syscall-min'] === undefined))
		throw new Error(USAGE);
	if (on && !/^\d+(\.\d+)?$/.test(values['syscall-min']))
		throw new Error(`--syscall-min wants milliseconds, not ${JSON.stringify(values['syscall-min'])}`);
	const truth = parseSyscallerTruth(readFileSync(values.truth, 'utf8'));
	const summary = values['bpfprof-err'] === undefined ? undefined
		: parseBpfprofSummary(readFileSync(values['bpfprof-err'], 'utf8'));

	const report = new Report(`syscall check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkSyscalls(report, profile, { pid: values.pid, truth, on, summary,
					  thresholdMs: on ? Number(values['syscall-min']) : undefined });
	return report.finish();
}

// Run only as a script: the self-test imports the checks.
runIfMain(import.meta.url, main);
