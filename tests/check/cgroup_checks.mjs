#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// The cgroup filter (issue 6): a profile of `bpfprof -a --cgroup DIR` judged
// against what tests/integration/cgroup.sh did, on the file and through the
// Firefox Profiler's own loader (profiler-cli).
//
//   cgroup_checks.mjs --profile F --truth FILE [--gzip|--plain]
//
// --truth: the test's "cgroup truth" lines (times are CLOCK_MONOTONIC ns):
//   cgroup truth filter PATH ID               the filter: a cgroup and its id
//   cgroup truth started T                    the recording ran at T
//   cgroup truth inside PID COMM PATH FUNC    a process of the cgroup tree,
//                                             in PATH when bpfprof first saw
//                                             it, burning FUNC ("-": it
//                                             sleeps)
//   cgroup truth outside PID COMM             a process outside the tree
//   cgroup truth forked PID PARENT            PID was forked inside, after
//                                             "started"
//   cgroup truth woken PID WAKER              PID sleeps until WAKER, outside,
//                                             wakes it (a FIFO write)
//   cgroup truth moved_in PID PATH T0 T1      PID moved into PATH between T0
//   cgroup truth moved_out PID PATH T0 T1     and T1 (into, or out to, PATH)
//   cgroup truth ran PID T                    PID, moved out, had run again
//                                             (its CPU time grew after the
//                                             move) by T
// Exit status 0 when all checks pass, 1 when one fails, 2 on bad usage.
//
// What is checked:
//   meta          the "Cgroup filter" entry names the path and its id, the
//                 Target names the path, a "Cgroup PATH" entry lists the
//                 processes seen in each cgroup
//   membership    every thread in the profile belongs to an inside process;
//                 no outside process has a thread
//   processes     each inside process is there, its track named
//                 "COMM [PATH]", its bpfprof.Process marker carrying the
//                 cgroup, its samples in its own burn function
//   forks         a child forked inside during the recording is followed
//   wakeups       the waits of a process inside name the waker outside that
//                 ended them (the wakee's cgroup is tested while the waker
//                 runs)
//   moves         a process moved in has no sample from before the move and
//                 many after it; one moved out, the reverse (but a wait that
//                 began inside may show until it ended: its off-CPU samples
//                 after the move lie in an Off-CPU marker that began by the
//                 move and ended by the time the process had run again)
//   profiler-cli  the front-end names the processes "COMM [PATH]", sees
//                 the same processes and the markers' cgroup

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { bareFunctionName, onCpuFilters } from './profiler_cli.mjs';
import { basePid, percent, sortedHistogram } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { runIfMain } from './script_main.mjs';

export const PROCESS_SCHEMA = 'bpfprof.Process';
export const FILTER_LABEL = 'Cgroup filter';
// On-CPU samples each inside process needs in the time it was inside: the
// test waits until each has used BURN_CPU_MS of CPU there (its own CPU
// clock, /proc/PID/schedstat), some 200 samples at 999 Hz however busy the
// machine is.
export const MIN_SAMPLES = 50;
export const BURN_CPU_MS = 4 * MIN_SAMPLES;
const MIN_TOP_PERCENT = 50;
// The kernel decides at each event, so the move itself is the boundary;
// the margin only absorbs the rounding of sample times to the file's ms.
export const MOVE_MARGIN_MS = 20;
export const OFFCPU_SCHEMA = 'bpfprof.OffCPU';
// Sleeps of the waiter ended by the ticker: the test waits until the waiter
// has slept WOKEN_WAIT times (its voluntary context switches) while recorded.
export const MIN_WOKEN = 50;
export const WOKEN_WAIT = 2 * MIN_WOKEN;
const MIN_WOKEN_PERCENT = 80;

// ---- inputs ----------------------------------------------------------------------

// The test's truth lines (see the header). Throws when one is malformed or
// the filter is missing.
export function parseCgroupTruth(text) {
	const truth = { filter: null, started: null, inside: [], outside: [], forked: [], woken: [], movedIn: [],
			movedOut: [], ran: [] };
	const num = (s) => Number(s);
	for (const raw of text.split('\n')) {
		const line = raw.trim();
		if (!line.startsWith('cgroup truth '))
			continue;
		const f = line.split(/\s+/).slice(2);
		const bad = () => new Error(`malformed truth line: ${JSON.stringify(line)}`);
		const pid = (s) => {
			if (!/^\d+$/.test(s || ''))
				throw bad();
			return s;
		};
		const time = (s) => {
			if (!/^\d+$/.test(s || ''))
				throw bad();
			return num(s);
		};
		switch (f[0]) {
		case 'filter':
			if (f.length !== 3 || !f[1].startsWith('/'))
				throw bad();
			truth.filter = { path: f[1], id: pid(f[2]) };
			break;
		case 'started':
			if (f.length !== 2)
				throw bad();
			truth.started = time(f[1]);
			break;
		case 'inside':
			if (f.length !== 5 || !f[3].startsWith('/'))
				throw bad();
			truth.inside.push({ pid: pid(f[1]), comm: f[2], path: f[3], func: f[4] });
			break;
		case 'outside':
			if (f.length !== 3)
				throw bad();
			truth.outside.push({ pid: pid(f[1]), comm: f[2] });
			break;
		case 'forked':
			if (f.length !== 3)
				throw bad();
			truth.forked.push({ pid: pid(f[1]), parent: pid(f[2]) });
			break;
		case 'woken':
			if (f.length !== 3)
				throw bad();
			truth.woken.push({ pid: pid(f[1]), waker: pid(f[2]) });
			break;
		case 'ran':
			if (f.length !== 3)
				throw bad();
			truth.ran.push({ pid: pid(f[1]), t: time(f[2]) });
			break;
		case 'moved_in':
		case 'moved_out': {
			if (f.length !== 5 || !f[2].startsWith('/'))
				throw bad();
			const move = { pid: pid(f[1]), path: f[2], t0: time(f[3]), t1: time(f[4]) };
			if (move.t1 < move.t0)
				throw bad();
			(f[0] === 'moved_in' ? truth.movedIn : truth.movedOut).push(move);
			break;
		}
		default:
			throw bad();
		}
	}
	if (!truth.filter)
		throw new Error('no "cgroup truth filter PATH ID" line');
	if (truth.inside.length === 0)
		throw new Error('no "cgroup truth inside" line');
	return truth;
}

// ---- helpers -------------------------------------------------------------------------

const list = (xs, n = 5) => (xs.length ? `: ${xs.slice(0, n).join('; ')}${xs.length > n ? '; ...' : ''}` : '');

// The track name the contract asks for: the comm, then the cgroup path.
export const trackName = (comm, path) => `${comm} [${path}]`;

function markersOf(thread) {
	const m = thread.markers;
	const out = [];
	for (let i = 0; i < (m?.length || 0); i++)
		out.push({ name: m.name[i], start: m.startTime[i], end: m.endTime?.[i], data: m.data[i] });
	return out;
}

// Sample times are ms after meta.startTime, which is
// meta.startTimeAsClockMonotonicNanosecondsSinceBoot on CLOCK_MONOTONIC.
function clock(profile) {
	const base = profile.meta.startTimeAsClockMonotonicNanosecondsSinceBoot;
	if (!Number.isFinite(base))
		return null;
	return { toMs: (ns) => (ns - base) / 1e6 };
}

// ---- the checks ------------------------------------------------------------------------

function checkMeta(report, profile, truth) {
	const { path, id } = truth.filter;
	report.section(`the filter in meta.extra (${path}, id ${id})`);
	const entries = profile.extraEntries();
	const filters = entries.filter((e) => e.label === FILTER_LABEL);
	const want = `${path} (id ${id})`;
	report.check(filters.length === 1 && filters[0].value === want,
		     `one "${FILTER_LABEL}" entry, "${want}" (found ${filters.length}` +
			     `${list(filters.map((e) => JSON.stringify(e.value)))})`);
	// The target as given: an absolute path under the v2 mount, or one
	// relative to its root, which both end in the path without its "/".
	const target = entries.find((e) => e.label === 'Target');
	report.check(typeof target?.value === 'string' && /^cgroups? /.test(target.value) &&
			     target.value.includes(path.slice(1)),
		     `the Target entry says "cgroup ...${path.slice(1)}" (found ${JSON.stringify(target?.value)})`);
	// Each cgroup a process was seen in lists it as "COMM (PID)".
	const paths = [...new Set(truth.inside.map((p) => p.path))];
	for (const p of paths) {
		const e = entries.find((x) => x.label === `Cgroup ${p}`);
		const members = truth.inside.filter((x) => x.path === p).map((x) => `${x.comm} (${x.pid})`);
		const value = typeof e?.value === 'string' ? e.value : '';
		const missing = members.filter((m) => !value.includes(m));
		report.check(e && missing.length === 0,
			     `a "Cgroup ${p}" entry lists ${members.join(', ')} (${e ? `missing: ` +
				     `${missing.join(', ') || 'none'}; value ${JSON.stringify(value.slice(0, 300))}` : 'no such entry'})`);
	}
}

function checkMembership(report, profile, truth) {
	report.section('only processes of the cgroup tree');
	const inside = new Set(truth.inside.map((p) => p.pid));
	const strangers = new Map();
	let samples = 0;
	for (const t of profile.threads) {
		if (inside.has(basePid(t.pid))) {
			samples += t.samples.length;
			continue;
		}
		const key = `${t.processName ?? t.name} (${t.pid})`;
		strangers.set(key, (strangers.get(key) || 0) + t.samples.length);
	}
	const desc = [...strangers].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n} samples`);
	report.check(strangers.size === 0,
		     `every thread belongs to one of the ${inside.size} processes of the cgroup tree ` +
			     `(${strangers.size} other processes${list(desc)})`);
	report.check(samples > 0, `the cgroup tree's processes have ${samples} samples`);
	const withSamples = profile.threads.filter((t) => t.samples.length > 0 && !inside.has(basePid(t.pid)));
	report.check(withSamples.length === 0,
		     `every thread with samples has a pid of the cgroup tree (${withSamples.length} do not` +
			     `${list(withSamples.map((t) => `${t.name} (${t.pid}/${t.tid}) ${t.samples.length}`))})`);
	for (const o of truth.outside) {
		const ts = profile.threads.filter((t) => basePid(t.pid) === o.pid);
		report.check(ts.length === 0, `outside process ${o.comm} (${o.pid}) has no thread in the profile ` +
					      `(found ${ts.length}, ${ts.reduce((n, t) => n + t.samples.length, 0)} samples)`);
	}
}

// The processes the file has for one pid, oldest first: a process that
// execs continues as a new one, "PID.1", "PID.2", ... (a wrapper that joins
// a cgroup and execs the workload is "PID", the workload "PID.1").
function incarnations(profile, pid) {
	const byPid = new Map();
	for (const t of profile.threads) {
		if (basePid(t.pid) !== pid)
			continue;
		if (!byPid.has(t.pid))
			byPid.set(t.pid, []);
		byPid.get(t.pid).push(t);
	}
	const seq = (k) => Number(k.split('.')[1] || 0);
	return [...byPid.entries()].sort((a, b) => seq(a[0]) - seq(b[0])).map(([id, threads]) => ({ id, threads }));
}

// Its track names and Process markers: the image that burns (the last) is
// "COMM [PATH]"; any before its exec is "SOMETHING [PATH]", since the pid
// was already inside when bpfprof saw it. Returns the threads of all, and
// the last one's id; null when the process is absent.
function checkProcess(report, profile, p) {
	const name = trackName(p.comm, p.path);
	report.section(`${name} (${p.pid})${p.func === '-' ? '' : `: ${p.func}`}`);
	const procs = incarnations(profile, p.pid);
	if (!report.check(procs.length > 0, `process ${p.pid} is present (${procs.map((x) => `${x.id}: ` +
				  `${x.threads.length} threads`).join(', ') || 'no threads'})`))
		return null;
	const last = procs[procs.length - 1];
	const suffix = ` [${p.path}]`;
	const wrong = [];
	const mains = [];
	const badMarks = [];
	for (const x of procs) {
		const want = x === last ? (n) => n === name : (n) => typeof n === 'string' && n.endsWith(suffix);
		for (const t of x.threads) {
			if (!want(t.processName))
				wrong.push(`${x.id}/${t.tid} ${JSON.stringify(t.processName)}`);
		}
		const m = x.threads.filter((t) => t.isMainThread === true);
		mains.push(`${x.id}: ${m.length}`);
		const marks = m.length === 1 ? markersOf(m[0]).filter((k) => k.data?.type === PROCESS_SCHEMA) : [];
		if (marks.length !== 1 || marks[0].data.cgroup !== p.path)
			badMarks.push(`${x.id}: ${marks.length} markers${list(marks.map((k) => String(k.data.cgroup)))}`);
		// The plain comm: the cgroup has a field of its own.
		else if (x === last && marks[0].data.name !== p.comm)
			badMarks.push(`${x.id}: named ${JSON.stringify(marks[0].data.name)}`);
		// Not a container: the test's cgroups have no container id in their path.
		for (const k of marks) {
			if (k.data.containerId !== undefined)
				badMarks.push(`${x.id}: containerId ${JSON.stringify(k.data.containerId)}`);
		}
	}
	report.check(mains.every((m) => m.endsWith(': 1')), `each process of pid ${p.pid} has one main thread (${mains.join(', ')})`);
	report.check(wrong.length === 0,
		     `processName is "${name}"${procs.length > 1 ? `, and "...${suffix}" before its exec,` : ''} on every ` +
			     `thread (${wrong.length} differ${list(wrong)})`);
	report.check(badMarks.length === 0,
		     `each main thread has one ${PROCESS_SCHEMA} marker with cgroup "${p.path}" and no containerId, ` +
			     `the last one named "${p.comm}" ` +
			     `(${badMarks.length} do not${list(badMarks)})`);
	return { threads: procs.flatMap((x) => x.threads), id: last.id };
}

// On-CPU samples of the process in [fromMs, toMs], and their top function.
function burnSamples(profile, threads, func, fromMs = -Infinity, toMs = Infinity) {
	const samples = threads.flatMap((t) => profile.samplesOf(t))
		.filter((s) => profile.isOnCpu(s) && s.time >= fromMs && s.time <= toMs);
	const hist = profile.selfHistogram(samples);
	const [top, count] = sortedHistogram(hist)[0] || ['(none)', 0];
	return { n: samples.length, top, share: percent(count, samples.length), inFunc: hist.get(func) || 0 };
}

function checkBurn(report, what, b, func) {
	report.check(b.n >= MIN_SAMPLES && b.top === func && b.share > MIN_TOP_PERCENT,
		     `${what}: ${b.n} on-CPU samples (need >= ${MIN_SAMPLES}), top self function ${b.top} ` +
			     `${fmt(b.share)}% (need ${func} > ${MIN_TOP_PERCENT}%)`);
}

function allSampleTimes(profile, threads) {
	return threads.flatMap((t) => profile.samplesOf(t).map((s) => ({ time: s.time, onCpu: profile.isOnCpu(s) })));
}

function describeTimes(samples, relMs) {
	const on = samples.filter((s) => s.onCpu).length;
	const ex = samples.slice(0, 3).map((s) => `${fmt(s.time - relMs, 1)} ms`).join(', ');
	return `${samples.length} (${on} on-CPU, ${samples.length - on} off-CPU${ex ? `; e.g. at ${ex} from the move` : ''})`;
}

function checkMovedIn(report, profile, clk, p, threads, move) {
	const t0 = clk.toMs(move.t0);
	const t1 = clk.toMs(move.t1);
	report.note(`moved into ${move.path} at ${fmt(t0, 1)}–${fmt(t1, 1)} ms into the profile`);
	const early = allSampleTimes(profile, threads).filter((s) => s.time < t0 - MOVE_MARGIN_MS);
	report.check(early.length === 0,
		     `no sample of ${p.comm} from before its move in (less ${MOVE_MARGIN_MS} ms): found ` +
			     `${describeTimes(early, t0)}`);
	checkBurn(report, `after its move in`, burnSamples(profile, threads, p.func, t1), p.func);
}

// The Off-CPU markers of a thread, [start, end] in ms.
function waitsOf(thread) {
	return markersOf(thread).filter((m) => m.data?.type === OFFCPU_SCHEMA)
		.map((m) => ({ start: m.start, end: m.end ?? m.start }));
}

// After the move out nothing of the process is recorded but the end of a
// wait that began inside: each of its off-CPU samples from after the move
// lies in an Off-CPU marker of its thread that began by the move and ended
// by the time the process was seen to have run again (`ran`), when that
// wait was over. No timing margin: a wait may last as long as a busy
// machine makes it.
function checkMovedOut(report, profile, clk, p, threads, move, ran) {
	const t0 = clk.toMs(move.t0);
	const t1 = clk.toMs(move.t1);
	const tRan = ran ? clk.toMs(ran.t) : t1;
	report.note(`moved out to ${move.path} at ${fmt(t0, 1)}–${fmt(t1, 1)} ms into the profile, ` +
		    `seen running again by ${fmt(tRan, 1)} ms`);
	const after = t1 + MOVE_MARGIN_MS;
	const lateOn = [];
	const lateOff = [];
	const lateWaits = [];
	for (const t of threads) {
		const waits = waitsOf(t);
		const inside = waits.filter((w) => w.start <= after && w.end <= tRan + MOVE_MARGIN_MS);
		lateWaits.push(...waits.filter((w) => w.start > after));
		for (const s of profile.samplesOf(t)) {
			if (s.time <= after)
				continue;
			if (profile.isOnCpu(s))
				lateOn.push({ time: s.time, onCpu: true });
			else if (!inside.some((w) => s.time >= w.start && s.time <= w.end))
				lateOff.push({ time: s.time, onCpu: false });
		}
	}
	report.check(lateOn.length === 0,
		     `no on-CPU sample of ${p.comm} from after its move out (plus ${MOVE_MARGIN_MS} ms): found ` +
			     `${describeTimes(lateOn, t1)}`);
	report.check(lateOff.length === 0,
		     `each off-CPU sample of ${p.comm} from after its move out lies in a wait that began inside and ` +
			     `ended by ${fmt(tRan - t1, 1)} ms after the move, when it had run again: found ` +
			     `${describeTimes(lateOff, t1)} outside one`);
	report.check(lateWaits.length === 0,
		     `no Off-CPU marker of ${p.comm} begins after its move out: found ${lateWaits.length}` +
			     `${list(lateWaits.map((w) => `at ${fmt(w.start - t1, 1)} ms from the move`))}`);
	checkBurn(report, `before its move out`, burnSamples(profile, threads, p.func, -Infinity, t0), p.func);
}

function checkForked(report, profile, clk, truth, fork) {
	const child = profile.threads.filter((t) => basePid(t.pid) === fork.pid);
	const times = child.flatMap((t) => profile.samplesOf(t).map((s) => s.time));
	const first = times.length ? Math.min(...times) : NaN;
	const started = truth.started === null ? null : clk.toMs(truth.started);
	report.check(times.length > 0 && started !== null && first >= started,
		     `the child ${fork.pid}, forked inside by ${fork.parent} during the recording, is followed: its ` +
			     `first sample is at ${fmt(first, 1)} ms, after the workloads started at ` +
			     `${started === null ? '(unknown)' : fmt(started, 1)} ms`);
}

// Its sleeps ("sleeping" Off-CPU markers) name the waker outside.
function checkWoken(report, profile, p, threads, w) {
	const waits = threads.flatMap((t) => markersOf(t))
		.filter((m) => m.data?.type === OFFCPU_SCHEMA && m.data.reason === 'sleeping');
	const byWaker = waits.filter((m) => String(m.data.wakerPid) === w.waker);
	const others = new Map();
	for (const m of waits) {
		if (String(m.data.wakerPid) !== w.waker) {
			const k = m.data.waker ?? '(no waker)';
			others.set(k, (others.get(k) || 0) + 1);
		}
	}
	report.check(byWaker.length >= MIN_WOKEN && percent(byWaker.length, waits.length) >= MIN_WOKEN_PERCENT,
		     `${byWaker.length} of ${p.comm}'s ${waits.length} sleeps were ended by its waker ${w.waker} outside ` +
			     `the tree (need >= ${MIN_WOKEN} and >= ${MIN_WOKEN_PERCENT}%; others: ` +
			     `${sortedHistogram(others).slice(0, 3).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`);
}

function checkProcesses(report, profile, truth) {
	const clk = clock(profile);
	report.check(clk !== null, `meta.startTimeAsClockMonotonicNanosecondsSinceBoot is a number (found ` +
				   `${JSON.stringify(profile.meta.startTimeAsClockMonotonicNanosecondsSinceBoot)})`);
	for (const p of truth.inside) {
		const proc = checkProcess(report, profile, p);
		if (!proc)
			continue;
		const moveIn = truth.movedIn.find((m) => m.pid === p.pid);
		const moveOut = truth.movedOut.find((m) => m.pid === p.pid);
		if (clk && moveIn)
			checkMovedIn(report, profile, clk, p, proc.threads, moveIn);
		else if (clk && moveOut)
			checkMovedOut(report, profile, clk, p, proc.threads, moveOut,
				      truth.ran.find((r) => r.pid === p.pid));
		else if (p.func !== '-')
			checkBurn(report, p.comm, burnSamples(profile, proc.threads, p.func), p.func);
		const fork = truth.forked.find((f) => f.pid === p.pid);
		if (clk && fork)
			checkForked(report, profile, clk, truth, fork);
		const woken = truth.woken.find((w) => w.pid === p.pid);
		if (woken)
			checkWoken(report, profile, p, proc.threads, woken);
	}
}

// ---- through profiler-cli -----------------------------------------------------------------

function checkWithCli(report, profile, truth, cli, handles, info) {
	report.section('the front-end\'s view');
	const inside = new Set(truth.inside.map((p) => p.pid));
	const others = (info.processes || []).filter((x) => !inside.has(basePid(x.pid)));
	report.check(others.length === 0, `profiler-cli lists only processes of the cgroup tree (others: ` +
					  `${others.map((x) => `${x.name} (${x.pid})`).join(', ') || 'none'})`);
	for (const p of truth.inside) {
		const name = trackName(p.comm, p.path);
		const procs = incarnations(profile, p.pid);
		const id = procs.length ? procs[procs.length - 1].id : p.pid;
		const proc = (info.processes || []).find((x) => String(x.pid) === id);
		report.check(proc?.name === name,
			     `profiler-cli names process ${id} "${name}" (found ${JSON.stringify(proc?.name)})`);
		const i = profile.threads.findIndex((t) => t.pid === id && t.isMainThread);
		const h = handles.get(i);
		if (!report.check(h !== undefined, `profiler-cli has a thread handle for ${id}'s main thread`))
			continue;
		const marks = (cli.query('thread', 'markers', '--thread', h, '--list', '--limit', '0').flatMarkers || [])
			.filter((m) => m.markerType === PROCESS_SCHEMA);
		report.check(marks.length === 1 && marks[0].data?.cgroup === p.path,
			     `profiler-cli: ${p.comm}'s ${PROCESS_SCHEMA} marker says cgroup "${p.path}" (found ` +
				     `${marks.length} markers${list(marks.map((m) => String(m.data?.cgroup)))})`);
		if (p.func === '-')
			continue;
		const r = cli.query('thread', 'samples', '--thread', h, ...onCpuFilters(cli, h));
		const top = r.topFunctionsBySelf?.[0];
		report.check(top && bareFunctionName(top.name) === p.func,
			     `profiler-cli: top self function of ${p.comm} (${p.pid}) is ${p.func} (found ` +
				     `${top ? `${top.name} ${fmt(top.selfPercentage)}%` : 'none'})`);
	}
}

// ---- the scenario -------------------------------------------------------------------------

export function checkCgroup(report, profile, truth, { cli = true } = {}) {
	checkMeta(report, profile, truth);
	checkMembership(report, profile, truth);
	checkProcesses(report, profile, truth);
	if (cli)
		checkWithProfilerCli(report, profile, (session, handles, info) =>
			checkWithCli(report, profile, truth, session, handles, info));
}

const USAGE = 'usage: cgroup_checks.mjs --profile FILE --truth FILE [--gzip|--plain]';

function main(argv) {
	const { values, positionals } = parseArgs({
		args: argv,
		allowPositionals: true,
		options: {
			profile: { type: 'string' },
			truth: { type: 'string' },
			gzip: { type: 'boolean' },
			plain: { type: 'boolean' },
		},
	});
	if (positionals.length || !values.profile || !values.truth)
		throw new Error(USAGE);
	const truth = parseCgroupTruth(readFileSync(values.truth, 'utf8'));
	const report = new Report(`cgroup check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkCgroup(report, profile, truth);
	return report.finish();
}

// Run only as a script: the self-test imports the checks.
runIfMain(import.meta.url, main);
