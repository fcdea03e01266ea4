// SPDX-License-Identifier: BSD-2-Clause
//
// Processes over time (issue 4), for `bpfprof -- spawner`: every short-lived
// child is a process of its own with its name, start, end and symbolized
// samples; the renamed thread has its new name; the exec'd child shows the
// new image's function.

import { basePid, CATEGORY_KERNEL, percent } from './profile.mjs';

const EXEC_FUNC_MIN_PERCENT = 50;
// How far below the children's own share of CPU in child_work the sampled
// share may fall: this many standard deviations of a binomial draw of that
// many samples (sampling is uniform in CPU time), plus one sample.
const SHARE_SIGMAS = 4;

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

// The truth lines of spawner's stderr: { self: pid, children: [pid...],
// exec: pid, childCpu: Map pid -> { workUs, cpuUs } }. In a pid namespace of
// its own the spawner gives the profiler's pid, then " ns PID", its own view
// of it, which is ignored here.
export function parseSpawnerTruth(text) {
	const children = [];
	const childCpu = new Map();
	let exec = null, self = null;
	for (const line of text.split('\n')) {
		const c = /^spawner: truth child-cpu (\d+) work_us (\d+) cpu_us (\d+)$/.exec(line.trim());
		if (c) {
			childCpu.set(c[1], { workUs: Number(c[2]), cpuUs: Number(c[3]) });
			continue;
		}
		const m = /^spawner: truth (self|child|exec) (\d+)(?: ns \d+)?$/.exec(line.trim());
		if (!m)
			continue;
		if (m[1] === 'child')
			children.push(m[2]);
		else if (m[1] === 'exec')
			exec = m[2];
		else
			self = m[2];
	}
	return { self, children, exec, childCpu };
}

// On-CPU samples that ran user code (a user frame somewhere in the stack).
function userSamples(profile, thread) {
	return profile.samplesOf(thread).filter((s) => profile.isOnCpu(s) &&
		s.path.some((f) => profile.frameCategory(f) !== CATEGORY_KERNEL));
}

function hasFunc(profile, sample, name) {
	return profile.inclusiveFuncNames(sample).has(name);
}

// Frames of the workload's own binary (resource `exe`) named by an address only.
function rawFramesIn(profile, sample, exe) {
	return sample.path.filter((f) => profile.resourceNameOfFunc(profile.frameFunc(f)) === exe &&
		/^0x[0-9a-f]+$|\+0x[0-9a-f]+$/.test(profile.frameFuncName(f)));
}

// The library an unnamed frame is in, "unknown" when none.
function rawFrameLibs(profile, sample) {
	return sample.path.filter((f) => /^0x[0-9a-f]+$|\+0x[0-9a-f]+$/.test(profile.frameFuncName(f)))
		.map((f) => profile.resourceNameOfFunc(profile.frameFunc(f)) ?? 'unknown');
}

export function checkLifecycle(report, profile, { pid, truth, childMs = 20, exe = 'spawner' }) {
	pid = String(pid);
	// A spawner that says who it is must be the process the checks look at.
	if (truth.self !== null && truth.self !== undefined)
		report.check(truth.self === pid, `the spawner says it is pid ${truth.self}; checking pid ${pid}`);
	report.section(`short-lived children of ${pid}`);
	report.check(truth.children.length > 0, `the workload reported ${truth.children.length} children`);
	let present = 0, named = 0, timed = 0, total = 0, inFunc = 0, ownRaw = 0;
	let workUs = 0, cpuUs = 0, reported = 0;
	const bad = [], ownRawExamples = [], otherRaw = new Map();
	for (const c of truth.children) {
		const mains = profile.threadsOfProcess(c).filter((t) => t.isMainThread);
		const main = mains[mains.length - 1];
		if (!main) {
			bad.push(`${c}: absent`);
			continue;
		}
		present++;
		if (main.processName === 'spawn-child' && main.name === 'spawn-child')
			named++;
		else
			bad.push(`${c}: named ${JSON.stringify(main.processName)}/${JSON.stringify(main.name)}`);
		const life = main.processShutdownTime - main.processStartupTime;
		if (main.processStartupTime > 0 && main.processShutdownTime !== null &&
		    main.registerTime !== null && main.unregisterTime !== null &&
		    life >= childMs * 0.8 && main.unregisterTime >= main.registerTime)
			timed++;
		else
			bad.push(`${c}: start ${main.processStartupTime} end ${main.processShutdownTime} ` +
				 `register ${main.registerTime} unregister ${main.unregisterTime}`);
		const cpu = truth.childCpu?.get(c);
		if (cpu) {
			reported++;
			workUs += cpu.workUs;
			cpuUs += cpu.cpuUs;
		}
		for (const s of userSamples(profile, main)) {
			total++;
			if (hasFunc(profile, s, 'child_work'))
				inFunc++;
			const own = rawFramesIn(profile, s, exe);
			if (own.length) {
				ownRaw++;
				if (ownRawExamples.length < 3)
					ownRawExamples.push(s.path.map((f) => profile.frameFuncName(f)).join(' > '));
			}
			for (const lib of rawFrameLibs(profile, s))
				otherRaw.set(lib, (otherRaw.get(lib) || 0) + 1);
		}
	}
	const n = truth.children.length;
	report.check(present === n, `${present} of ${n} children are processes of their own in the profile`);
	report.check(named === n, `${named} of ${n} children are named "spawn-child"` +
		     (bad.length ? ` (first problems: ${bad.slice(0, 3).join('; ')})` : ''));
	report.check(timed === n, `${timed} of ${n} children have startup/shutdown and register/unregister ` +
		     `times ~${childMs} ms apart or more`);
	report.check(total >= n * 5, `the children have ${total} on-CPU samples with user code (need >= ${n * 5})`);
	// The share child_work must have is the children's own: the CPU their work
	// loops took over the CPU their whole lives took (fork return, page faults,
	// clock reads and exit cost what this machine makes them cost).
	report.check(reported === n && cpuUs > 0,
		     `the workload reported the CPU of ${reported} of ${n} children: ` +
		     `${fmt(workUs / 1000)} ms in their work loops of ${fmt(cpuUs / 1000)} ms in all`);
	const expected = cpuUs > 0 ? Math.min(1, workUs / cpuUs) : 1;
	const sigma = Math.sqrt(expected * (1 - expected) / Math.max(total, 1));
	const need = 100 * Math.max(0, expected - SHARE_SIGMAS * sigma - 1 / Math.max(total, 1));
	report.check(percent(inFunc, total) >= need,
		     `${fmt(percent(inFunc, total))}% of them are in child_work; the children spent ` +
		     `${fmt(100 * expected)}% of their CPU in it (need >= ${fmt(need)}%: ` +
		     `${SHARE_SIGMAS} sigma of ${total} samples below)`);
	report.check(ownRaw === 0,
		     `${ownRaw} of them have a frame in ${exe}'s own code named by an address only` +
		     (ownRawExamples.length ? ` (e.g. ${ownRawExamples.join('; ')})` : ''));
	if (otherRaw.size)
		report.note(`frames named by an address outside ${exe}, by library: ` +
			    [...otherRaw].map(([k, v]) => `${k} ${v}`).join(', '));

	report.section('renamed thread');
	const threads = profile.threadsOfProcess(pid);
	const names = threads.map((t) => t.name);
	report.check(names.includes('after-rename') && !names.includes('before-rename'),
		     `the thread renamed mid-run is named "after-rename" (threads of ${pid}: ${names.join(', ')})`);

	report.section(`exec'd child ${truth.exec}`);
	const execThreads = profile.threadsOfProcess(truth.exec);
	const samples = execThreads.flatMap((t) => userSamples(profile, t));
	const hits = samples.filter((s) => hasFunc(profile, s, 'exec_image_work')).length;
	report.check(samples.length >= 20 && percent(hits, samples.length) >= EXEC_FUNC_MIN_PERCENT,
		     `${fmt(percent(hits, samples.length))}% of its ${samples.length} samples are in the new image's ` +
		     `exec_image_work (need >= ${EXEC_FUNC_MIN_PERCENT}% of >= 20)`);
}

// Through the front-end's loader: a child's top function, and the renamed thread.
export function checkLifecycleWithCli(report, profile, cli, handles, { truth }) {
	const c = truth.children[Math.floor(truth.children.length / 2)];
	const i = profile.threads.findIndex((t) => basePid(t.pid) === c && t.isMainThread);
	const h = handles.get(i);
	const r = h ? cli.query('thread', 'samples', '--thread', h) : null;
	const names = (r?.topFunctionsByTotal || r?.topFunctionsBySelf || []).map((f) => f.name);
	report.check(names.some((n) => n.includes('child_work')),
		     `profiler-cli: child ${c}'s top functions include child_work (found ${names.slice(0, 5).join(', ') || 'none'})`);
}
