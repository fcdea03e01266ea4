// SPDX-License-Identifier: BSD-2-Clause
//
// What a bpfprof profile must show, scenario by scenario. Each function adds
// its checks to a Report; the numbers measured are part of every message.
//
//   checkFile / checkFormat      any profile: format, checklist, bpfprof contract
//   checkWithProfilerCli         any profile: the real front-end loader accepts it
//   checkBurner                  the burner workload (-p PID or -a)
//   checkForker                  the forker workload (-- forker)

import { availableParallelism } from 'node:os';

import { bareFunctionName, onCpuFilters, ProfilerCliSession } from './profiler_cli.mjs';
import {
	CATEGORY_KERNEL,
	CATEGORY_OTHER,
	CATEGORY_USER,
	percent,
	Profile,
	sortedHistogram,
} from './profile.mjs';
import { truthCpuAt } from './burner_truth.mjs';
import { binomialSigmaPoints, fmt } from './report.mjs';
import { checkStructure } from './structure.mjs';

// Category table fixed by the bpfprof output contract.
const CONTRACT_CATEGORIES = [
	[CATEGORY_OTHER, 'Other', 'grey'],
	[CATEGORY_KERNEL, 'Kernel', 'orange'],
	[CATEGORY_USER, 'User', 'yellow'],
];

// burner: alpha's split is 75/25 by CPU time; the brief's tolerance is ±10
// points, or 4 binomial σ when the machine left alpha too little CPU for
// that many samples (fewer than ~300 at 75 %).
const ALPHA_EXPECTED = 75;
const ALPHA_TOLERANCE = 10;
const ALPHA_SIGMAS = 4;
// cpu-clock samples a thread once per interval of its CPU time; a profile
// with far fewer than its own CPU time calls for lost them.
const MIN_SAMPLES_OF_CPU = 0.8;
const BETA_MIN_PERCENT = 80;
const SYSC_MIN_KERNEL_PERCENT = 30;
// A sample in a burn function has the thread's own loop as its parent frame,
// except in the two prologue instructions before the frame exists.
const MIN_CALLER_PERCENT = 90;
// Kernel frames under sysc_loop must carry kernel names, not raw addresses.
const SYSC_KERNEL_NAME = /read|syscall|svc/i;
const MIN_SYSC_NAMED_PERCENT = 50;
// Each busy thread's threadCPUDelta between its first and last sample must
// be the CPU time its own clock counted then (the burner's truth lines): 3 %
// for the clocks, plus the truth's reading error at both ends. Together they
// never exceed the machine's CPUs.
const TRUTH_RELATIVE = 0.03;
const TRUTH_SLACK_MS = 1;
const MAX_CPU_SHARE = 1.05;
const MAX_SLEEPER_CPU_SHARE = 0.05;
const BURNER_THREADS = ['alpha', 'beta', 'sysc'];
const BURNER_FUNCS = ['alpha_heavy', 'alpha_light', 'beta_spin', 'sysc_loop'];

// forker: each process burns one function for its whole life, with as many
// samples as its CPU time calls for (MIN_SAMPLES_OF_CPU; the forker's truth
// line), and never fewer than this many for its top function to mean much.
const FORKER_MIN_SAMPLES = 100;
const FORKER_MIN_TOP_PERCENT = 50;

function cpuDeltaToMs(unit) {
	if (unit === '\u00b5s')
		return 1e-3;
	if (unit === 'ns')
		return 1e-6;
	return null; // "variable CPU cycles" has no absolute scale
}

// Read PATH and run the checks every scenario starts with: the file, the
// format checklist, the bpfprof contract. Returns the profile, or null when
// it cannot be read or the profiler-cli load must be skipped (a broken stack
// table can hang the front-end's loader; its verdict would add nothing).
export function openCheckedProfile(report, path, { gzip, plain }) {
	let profile;
	try {
		profile = Profile.fromFile(path);
	} catch (e) {
		report.check(false, `profile can be read: ${e.message}`);
		return null;
	}
	report.check(true, 'profile is valid UTF-8 JSON');
	checkFile(report, profile, { expectGzip: gzip ? true : plain ? false : undefined });
	if (checkFormat(report, profile).length > 0) {
		report.check(false, 'profiler-cli load skipped: the profile failed the checklist');
		return null;
	}
	return profile;
}

export function checkFile(report, profile, { expectGzip }) {
	report.section(`file ${profile.file.path}`);
	report.note(`${profile.file.fileBytes} bytes on disk, ${profile.file.jsonBytes} bytes of JSON`);
	if (expectGzip !== undefined) {
		report.check(profile.file.gzipped === expectGzip,
			     `output is ${expectGzip ? 'gzip' : 'plain JSON'} as its name says ` +
				     `(found ${profile.file.gzipped ? 'gzip' : 'plain JSON'})`);
	}
}

// The format checklist, then the parts of the bpfprof contract that hold for
// every profile. Returns the checklist problems (the CLI load is skipped when
// the stack table is unsafe to walk: a cyclic one hangs the loader).
const PROCESS_TYPES = ['user', 'kernel thread', 'idle', 'profiler (bpfprof)'];

export function checkFormat(report, profile) {
	report.section('format checklist (spec section 13)');
	const problems = checkStructure(profile.json);
	report.check(problems.length === 0, `structural checklist: ${problems.length} problems`);
	for (const p of problems.slice(0, 40))
		report.note(p);
	if (problems.length > 0)
		return problems;

	report.section('bpfprof contract');
	const meta = profile.meta;
	report.check(meta.product === 'bpfprof', `meta.product is "bpfprof" (found ${JSON.stringify(meta.product)})`);
	for (const [i, name, color] of CONTRACT_CATEGORIES) {
		const c = meta.categories[i];
		report.check(c && c.name === name && c.color === color,
			     `category ${i} is ${name}/${color} (found ${c ? `${c.name}/${c.color}` : 'none'})`);
	}
	// Without a colour the front-end knows, markers draw black (issue 21); the
	// format checklist checks the colour each marker carries.
	const colorless = (meta.markerSchema || []).filter((s) => !s.colorField).map((s) => s.name);
	report.check(colorless.length === 0, `every marker schema has a colour (colorField)` +
			     (colorless.length ? `; these have none: ${colorless.join(', ')}` : ''));
	// The track tooltip says `Process: "<processType>"` (issue 21): bpfprof's own
	// types (emitter.c process_type), never Gecko's, which the front-end gives meanings;
	// but the launched command's, which is Gecko's parent process ("default") so that the
	// front-end keeps its track first (issue 28): one pid at most, the selected thread's.
	const threads = profile.json.threads;
	const types = new Set(threads.map((t) => t.processType));
	const foreign = [...types].filter((ty) => !PROCESS_TYPES.includes(ty) && ty !== 'default');
	const defaultPids = new Set(threads.filter((t) => t.processType === 'default').map((t) => t.pid.split('.')[0]));
	const selected = (meta.initialSelectedThreads || []).map((i) => threads[i]?.pid.split('.')[0]);
	const defaultOk = defaultPids.size === 0 || (defaultPids.size === 1 && selected.includes([...defaultPids][0]));
	report.check(foreign.length === 0 && defaultOk, `every processType is bpfprof's (${[...types].join(', ')})` +
		     (defaultOk ? '' : `; "default" is not the launched command's alone (pids ${[...defaultPids].join(', ')})`));
	// One row per thing in the marker table (issue 21): no two markers of a
	// thread with the same name, span and data, and no Off-CPU and Runnable
	// pair over the same span for the same reason (a preemption).
	let dups = 0;
	const dupExamples = [];
	for (const t of profile.json.threads) {
		const seen = new Set(), waits = new Set();
		const m = t.markers;
		for (let i = 0; i < m.length; i++) {
			const d = m.data[i] || {};
			const { cause, ...rest } = d;
			const key = `${m.name[i]}|${m.startTime[i]}|${m.endTime[i]}|${JSON.stringify(rest)}`;
			let dup = seen.has(key);
			seen.add(key);
			if (d.type === 'bpfprof.OffCPU' || d.type === 'bpfprof.Runnable') {
				const w = `${m.startTime[i]}|${m.endTime[i]}|${d.reason}|${d.preemptedBy ?? ''}|${d.waker ?? ''}`;
				dup = dup || waits.has(w);
				waits.add(w);
			}
			if (dup) {
				dups++;
				if (dupExamples.length < 3)
					dupExamples.push(`${t.name} (${t.tid}) at ${m.startTime[i]} ms: ${d.reason ?? d.type ?? ''}`);
			}
		}
	}
	report.check(dups === 0, `no thread has two marker rows for one thing (${dups} found` +
			     (dupExamples.length ? `: ${dupExamples.join('; ')}` : '') + ')');
	checkOtherThreadNames(report, profile);
	checkNativeSymbols(report, profile);
	const total = profile.totalSamples();
	report.check(total > 0, `profile has samples: ${total} in ${profile.threads.length} threads, ` +
					`${profile.pids().length} processes`);
	checkKernelAboveUser(report, profile);
	return problems;
}

// A scheduling marker names another thread "name (tid)": the waker, the wakee, or the task
// the CPU went to. When the profile has that thread (one thread of that tid alive at the
// marker), the name is the one its track shows (issue 21): not a comm it had before it renamed
// itself. A main thread's track may add a cgroup label ("name [container x]").
export function checkOtherThreadNames(report, profile) {
	const byTid = new Map();
	for (const t of profile.json.threads) {
		const k = String(t.tid);
		if (!byTid.has(k))
			byTid.set(k, []);
		byTid.get(k).push(t);
	}
	const alive = (t, ms) => ms >= t.registerTime - 1e-6 && (t.unregisterTime == null || ms <= t.unregisterTime + 1e-6);
	let named = 0;
	const wrong = [];
	for (const t of profile.json.threads) {
		const m = t.markers;
		for (let i = 0; i < m.length; i++) {
			const d = m.data[i];
			for (const key of ['waker', 'wakee', 'preemptedBy']) {
				const match = typeof d?.[key] === 'string' && /^(.*) \((\d+)\)$/.exec(d[key]);
				if (!match)
					continue;
				const at = key === 'waker' ? (m.endTime[i] ?? m.startTime[i]) : m.startTime[i];
				const cands = (byTid.get(match[2]) || []).filter((o) => alive(o, at));
				if (cands.length !== 1)
					continue;
				named++;
				const track = cands[0].name;
				if (track !== match[1] && !track.startsWith(`${match[1]} [`) && wrong.length < 3)
					wrong.push(`${t.name} (${t.tid}) at ${m.startTime[i]} ms: ${key} "${d[key]}", its track "${track}"`);
			}
		}
	}
	report.check(wrong.length === 0, `markers name other threads as their tracks do (${named} named` +
			     (wrong.length ? `; ${wrong.join('; ')}` : '') + ')');
}

// A frame's nativeSymbol is the ELF symbol its code is in, which the assembly view disassembles
// (`bpfprof view`'s /asm/v1): the frame's own library, and an address inside the symbol.
export function checkNativeSymbols(report, profile) {
	const sh = profile.json.shared, ns = sh.nativeSymbols, ft = sh.frameTable;
	let cited = 0;
	const bad = [];
	for (let f = 0; f < ft.length; f++) {
		const i = ft.nativeSymbol[f];
		if (i === null || i === undefined)
			continue;
		cited++;
		const res = sh.funcTable.resource[ft.func[f]];
		const lib = res >= 0 ? sh.resourceTable.lib[res] : null;
		const start = ns.address[i], size = ns.functionSize[i], addr = ft.address[f];
		const inside = addr >= start && (size === null || addr < start + size);
		if ((lib !== ns.libIndex[i] || !inside) && bad.length < 3)
			bad.push(`frame ${f} (${profile.frameFuncName(f)}, lib ${lib}, 0x${addr.toString(16)}) cites ` +
				 `${sh.stringArray[ns.name[i]]} (lib ${ns.libIndex[i]}, 0x${start.toString(16)} + ${size})`);
	}
	report.check(bad.length === 0, `frames cite native symbols of their own library that hold their address ` +
			     `(${cited} frames, ${ns.length} symbols${bad.length ? `; ${bad.join('; ')}` : ''})`);
}

// Kernel code runs on behalf of the user code below it: in every sampled
// stack, no User frame may sit on top of (leafward of) a Kernel frame.
function checkKernelAboveUser(report, profile) {
	const seen = new Set();
	let bad = 0;
	let withKernel = 0;
	let example = null;
	for (const t of profile.threads) {
		for (const stack of t.samples.stack) {
			if (stack === null || seen.has(stack))
				continue;
			seen.add(stack);
			const path = profile.stackPath(stack);
			const k = path.findIndex((f) => profile.frameCategory(f) === CATEGORY_KERNEL);
			if (k < 0)
				continue;
			withKernel++;
			if (path.slice(k).some((f) => profile.frameCategory(f) === CATEGORY_USER)) {
				bad++;
				example ??= path.map((f) => `${profile.frameFuncName(f)}(${profile.frameCategory(f)})`).join(' > ');
			}
		}
	}
	report.check(bad === 0, `kernel frames are leafward of user frames: ${bad} of ${withKernel} ` +
					`distinct sampled stacks with kernel frames break this`);
	if (example)
		report.note(`e.g. ${example}`);
}

// Loads the profile with profiler-cli and checks that the front-end sees the
// same processes and threads. fn(cli, handles) may run scenario queries while
// the session is open; handles maps thread index -> "t-N".
export function checkWithProfilerCli(report, profile, fn) {
	report.section('Firefox Profiler loader (profiler-cli)');
	const cli = new ProfilerCliSession();
	try {
		const load = cli.load(profile.file.path);
		if (!report.check(load.ok, `profiler-cli load exits 0 (status ${load.status})`)) {
			report.note(load.output.split('\n').slice(-5).join('\n   '));
			return false;
		}
		if (load.slowStart)
			report.note('its daemon started after load\'s own 500 ms wait; waited for it to load the profile');
		const info = cli.query('profile', 'info', '--all');
		const pids = profile.pids();
		report.check(info.processCount === pids.length && info.threadCount === profile.threads.length,
			     `profile info: ${info.processCount} processes, ${info.threadCount} threads ` +
				     `(file has ${pids.length}, ${profile.threads.length})`);
		const list = cli.query('thread', 'list');
		const handles = new Map();
		let mismatched = 0;
		for (const row of list.threads) {
			const t = profile.threads[row.threadIndex];
			if (!t || t.pid !== String(row.pid) || String(t.tid) !== String(row.tid))
				mismatched++;
			handles.set(row.threadIndex, row.threadHandle);
		}
		report.check(list.threads.length === profile.threads.length && mismatched === 0,
			     `thread list: ${list.threads.length} threads, ${mismatched} with a pid/tid ` +
				     `other than the file's`);
		if (fn)
			fn(cli, handles, info);
		return true;
	} catch (e) {
		report.check(false, `profiler-cli queries work: ${e.message}`);
		return false;
	} finally {
		cli.close();
	}
}

// Samples of a thread, split into on-CPU and the rest.
function onCpuSamples(profile, thread) {
	return profile.samplesOf(thread).filter((s) => profile.isOnCpu(s));
}

function describeTop(hist, total, n = 3) {
	return sortedHistogram(hist).slice(0, n)
		.map(([name, c]) => `${name} ${fmt(percent(c, total))}%`).join(', ');
}

// threadCPUDelta sum (ms) and sample time span (ms) of a thread's samples
// from fromMs to toMs. The first delta is left out: it holds CPU time from
// before the first sample (or the recording).
function cpuAndSpan(profile, thread, { fromMs = -Infinity, toMs = Infinity } = {}) {
	const samples = profile.samplesOf(thread).filter((s) => s.time >= fromMs && s.time <= toMs);
	const unitMs = cpuDeltaToMs(profile.meta.sampleUnits?.threadCPUDelta);
	if (samples.length < 2 || unitMs === null || !thread.samples.threadCPUDelta)
		return null;
	let cpuMs = 0;
	for (let i = 1; i < samples.length; i++)
		cpuMs += (samples[i].cpuDelta || 0) * unitMs;
	const first = samples[0].time;
	const last = samples[samples.length - 1].time;
	return { cpuMs, first, last, spanMs: last - first };
}

function checkProcessIdentity(report, profile, pid, processName) {
	const threads = profile.threadsOf(pid);
	if (!report.check(threads.length > 0, `process with pid "${pid}" is present ` +
						  `(${threads.length} threads)`))
		return null;
	const mains = profile.mainThreadsOf(pid);
	report.check(mains.length === 1, `pid ${pid} has exactly one main thread (found ${mains.length})`);
	const main = mains[0];
	if (main) {
		report.check(main.name === processName,
			     `main thread is named "${processName}" (found ${JSON.stringify(main.name)})`);
		report.check(String(main.tid) === String(pid), `main thread tid is the pid (tid ${main.tid})`);
	}
	const wrong = threads.filter((t) => t.processName !== processName);
	report.check(wrong.length === 0, `every thread of pid ${pid} has processName "${processName}" ` +
						 `(${wrong.length} differ${wrong.length ? `, e.g. ${JSON.stringify(wrong[0].processName)}` : ''})`);
	return { threads, main };
}

export function checkBurner(report, profile, { pid, tids, systemWide, durationS, cpus, truth }) {
	pid = String(pid);
	report.section(`burner process ${pid} (${systemWide ? 'system-wide' : 'attached with -p'})`);
	const ident = checkProcessIdentity(report, profile, pid, 'bpfprof-burner');
	if (!ident)
		return;
	const byName = {};
	for (const name of BURNER_THREADS) {
		const found = ident.threads.filter((t) => t.name === name);
		report.check(found.length === 1, `thread "${name}" appears once under pid ${pid} (found ${found.length})`);
		byName[name] = found[0];
		if (found[0] && tids?.[name] !== undefined) {
			report.check(String(found[0].tid) === String(tids[name]),
				     `thread "${name}" has tid ${tids[name]} (found ${found[0].tid})`);
		}
		if (found[0])
			report.check(found[0].isMainThread === false, `thread "${name}" is not a main thread`);
	}

	checkBurnerFunctions(report, profile);
	const windows = burnerCpuWindows(report, profile, byName, truth);
	if (byName.alpha)
		checkAlpha(report, profile, byName.alpha, windows?.alpha);
	if (byName.beta)
		checkBeta(report, profile, byName.beta);
	if (byName.sysc)
		checkSysc(report, profile, byName.sysc);
	checkBurnerCpu(report, ident.main && cpuAndSpan(profile, ident.main), windows,
		       cpus ?? availableParallelism());
	if (byName.alpha && durationS)
		checkDuration(report, profile, byName.alpha, durationS);

	report.section(systemWide ? 'system-wide recording' : 'recording limited to -p');
	const others = profile.pids().filter((p) => p !== pid);
	if (systemWide) {
		const counts = others.map((p) => [p, profile.threadsOf(p)])
			.map(([p, ts]) => [p, ts.find((t) => t.isMainThread)?.name ?? ts[0].name,
					   ts.reduce((n, t) => n + t.samples.length, 0)])
			.sort((a, b) => b[2] - a[2]);
		report.check(others.length >= 1, `other processes are present: ${others.length}`);
		report.note(`busiest: ${counts.slice(0, 5).map(([p, n, c]) => `${n} (${p}) ${c} samples`).join(', ')}`);
		checkNoKernelThreadSyscalls(report, profile);
		checkProcessTypes(report, profile);
	} else {
		report.check(others.length === 0, `no threads of other processes (found pids: ` +
						  `${others.slice(0, 10).join(', ') || 'none'})`);
	}
}

// processType is what the track tooltip says after `Process:`. Every machine's kernel runs its
// workers (vmstat, RCU, timers) within seconds, and bpfprof itself reads its rings: both show
// in a system-wide recording, each with its own type; every other process is 'user'.
export function checkProcessTypes(report, profile) {
	const kernelNamed = /^(kworker\/|ksoftirqd\/|rcu_|migration\/|kthreadd$)/;
	const kernel = profile.threads.filter((t) => t.pid !== '0' && kernelNamed.test(t.name));
	const wrongKernel = kernel.filter((t) => t.processType !== 'kernel thread');
	report.check(kernel.length >= 1 && wrongKernel.length === 0,
		     `kernel threads have processType "kernel thread": ${kernel.length - wrongKernel.length} ` +
		     `of ${kernel.length} (wrong: ${wrongKernel.slice(0, 3).map((t) =>
			     `${t.name}=${t.processType}`).join(', ') || 'none'})`);
	const profiler = profile.threads.filter((t) => t.processType === 'profiler (bpfprof)');
	const profilerPids = new Set(profiler.map((t) => t.pid));
	report.check(profilerPids.size === 1 && profiler.every((t) => t.processName === 'bpfprof'),
		     `one process is the profiler, named bpfprof (pids: ${[...profilerPids].join(', ') || 'none'})`);
	const idle = profile.threads.filter((t) => t.pid === '0');
	report.check(idle.every((t) => t.processType === 'idle'),
		     `idle threads have processType "idle" (${idle.length})`);
	const burner = profile.threads.filter((t) => t.processName === 'bpfprof-burner');
	report.check(burner.length > 0 && burner.every((t) => t.processType === 'user'),
		     `the burner's threads have processType "user" (${burner.length})`);
}

// Kernel threads are in no syscall: their saved registers are zeros, which once read as
// read(0, 0, 0) (--syscalls=blocking). So no thread without any user frame in its samples
// (on-CPU, or the switch-out stack of an off-CPU one) may wait in read with fd 0 and 0 bytes.
// Other waits on such threads are real: a process seen only in its execve or exit on a busy
// machine, a thread blocked all along (both failed the earlier, broader check in a run beside
// a process churn).
export function checkNoKernelThreadSyscalls(report, profile) {
	const bad = [];
	let waits = 0;
	for (const t of profile.threads) {
		const m = t.markers;
		let n = 0;
		for (let i = 0; i < (m?.length || 0); i++) {
			const d = m.data[i];
			if (d?.type !== 'bpfprof.SyscallWait')
				continue;
			waits++;
			n += d.syscall === 'read' && d.fd === 0 && (d.count ?? 0) === 0;
		}
		if (n && !profile.samplesOf(t).some((s) => s.path.some((f) => profile.frameCategory(f) === CATEGORY_USER)))
			bad.push(`${t.name} (${t.tid}): ${n}`);
	}
	report.check(bad.length === 0, `none of the ${waits} syscall waits is a kernel thread's zeroed registers ` +
		     `read as read(0, 0, 0) (on threads without any user frame: ${bad.slice(0, 5).join(', ') || 'none'})`);
}

// The workload's functions are user code of the burner binary.
function checkBurnerFunctions(report, profile) {
	const ft = profile.shared.frameTable;
	for (const name of BURNER_FUNCS) {
		const frames = [];
		for (let f = 0; f < ft.length; f++) {
			if (profile.frameFuncName(f) === name)
				frames.push(f);
		}
		if (!report.check(frames.length > 0, `${name} has frames in the profile (${frames.length})`))
			continue;
		const cats = new Set(frames.map((f) => profile.frameCategory(f)));
		report.check(cats.size === 1 && cats.has(CATEGORY_USER),
			     `${name} frames have category User (found ${[...cats].map((c) => profile.categoryName(c)).join(', ')})`);
		const libs = new Set(frames.map((f) => profile.resourceNameOfFunc(profile.frameFunc(f))));
		report.check(libs.size === 1 && libs.has('burner'),
			     `${name} belongs to resource "burner" (found ${[...libs].map((l) => JSON.stringify(l)).join(', ')})`);
	}
}

// ±10 points of alpha_heavy's share, or 4σ of n samples when that is wider.
function alphaTolerance(n) {
	return Math.max(ALPHA_TOLERANCE, ALPHA_SIGMAS * binomialSigmaPoints(ALPHA_EXPECTED / 100, n));
}

function checkAlpha(report, profile, thread, window) {
	report.section('thread alpha: alpha_heavy 75% / alpha_light 25% of CPU time');
	const samples = onCpuSamples(profile, thread);
	const hist = profile.selfHistogram(samples);
	const heavy = hist.get('alpha_heavy') || 0;
	const light = hist.get('alpha_light') || 0;
	const n = heavy + light;
	report.note(`${thread.samples.length} samples, ${samples.length} on CPU; top self: ${describeTop(hist, samples.length)}`);
	if (window) {
		const expected = window.truthMs / profile.meta.interval;
		report.check(samples.length >= MIN_SAMPLES_OF_CPU * expected,
			     `alpha has ${samples.length} on-CPU samples for the ${fmt(window.truthMs, 0)} ms CPU its clock ` +
				     `counted between them, ${fmt(expected, 0)} at ${fmt(profile.meta.interval, 3)} ms ` +
				     `(need >= ${100 * MIN_SAMPLES_OF_CPU}%)`);
	}
	const share = percent(heavy, n);
	const sigma = binomialSigmaPoints(ALPHA_EXPECTED / 100, n);
	const tol = alphaTolerance(n);
	report.check(n > 0 && Math.abs(share - ALPHA_EXPECTED) <= tol,
		     `alpha_heavy ${fmt(share)}% of ${n} (tolerance ${fmt(ALPHA_EXPECTED - tol)}–` +
			     `${fmt(ALPHA_EXPECTED + tol)}: ±${ALPHA_TOLERANCE} points or ${ALPHA_SIGMAS} binomial σ of ` +
			     `${fmt(sigma)} points)`);
	// Stack direction: the burn function's parent is the loop that calls it.
	let withParent = 0;
	const parents = new Map();
	for (const s of samples) {
		const leaf = profile.leafFuncName(s);
		if (leaf !== 'alpha_heavy' && leaf !== 'alpha_light')
			continue;
		const parent = s.path.length >= 2 ? profile.frameFuncName(s.path[s.path.length - 2]) : '(root)';
		parents.set(parent, (parents.get(parent) || 0) + 1);
		if (parent === 'alpha_main')
			withParent++;
	}
	report.check(n > 0 && percent(withParent, n) >= MIN_CALLER_PERCENT,
		     `caller of alpha_heavy/alpha_light is alpha_main in ${fmt(percent(withParent, n))}% ` +
			     `(need >= ${MIN_CALLER_PERCENT}%; parents: ${describeTop(parents, n)})`);
}

function checkBeta(report, profile, thread) {
	report.section('thread beta: beta_spin 100%');
	const samples = onCpuSamples(profile, thread);
	const hist = profile.selfHistogram(samples);
	const [top, count] = sortedHistogram(hist)[0] || ['(none)', 0];
	report.note(`${thread.samples.length} samples, ${samples.length} on CPU; top self: ${describeTop(hist, samples.length)}`);
	report.check(top === 'beta_spin' && percent(count, samples.length) > BETA_MIN_PERCENT,
		     `top self function is beta_spin with > ${BETA_MIN_PERCENT}% (found ${top} ` +
			     `${fmt(percent(count, samples.length))}% of ${samples.length})`);
}

function checkSysc(report, profile, thread) {
	report.section('thread sysc: read(2) of /dev/zero from sysc_loop');
	const samples = onCpuSamples(profile, thread);
	let inKernel = 0;
	let named = 0;
	let userAbove = 0;
	for (const s of samples) {
		const d = profile.innermostDepthOf(s, 'sysc_loop');
		if (d < 0 || profile.frameCategory(s.path[d]) !== CATEGORY_USER)
			continue;
		const above = s.path.slice(d + 1);
		if (above.some((f) => profile.frameCategory(f) !== CATEGORY_KERNEL))
			userAbove++;
		const kernel = above.filter((f) => profile.frameCategory(f) === CATEGORY_KERNEL);
		if (kernel.length === 0)
			continue;
		inKernel++;
		if (kernel.some((f) => SYSC_KERNEL_NAME.test(profile.frameFuncName(f))))
			named++;
	}
	const hist = profile.selfHistogram(samples);
	report.note(`${thread.samples.length} samples, ${samples.length} on CPU; top self: ${describeTop(hist, samples.length, 5)}`);
	report.check(percent(inKernel, samples.length) > SYSC_MIN_KERNEL_PERCENT,
		     `${fmt(percent(inKernel, samples.length))}% of samples have Kernel frames above ` +
			     `sysc_loop (User) (need > ${SYSC_MIN_KERNEL_PERCENT}%; ${inKernel} of ${samples.length})`);
	report.check(userAbove === 0, `sysc_loop calls nothing in user space: ${userAbove} samples have ` +
					      `non-Kernel frames above it`);
	report.check(inKernel > 0 && percent(named, inKernel) >= MIN_SYSC_NAMED_PERCENT,
		     `kernel frames are symbolized: ${fmt(percent(named, inKernel))}% of the kernel samples ` +
			     `name a read/syscall function (need >= ${MIN_SYSC_NAMED_PERCENT}%)`);
}

// CLOCK_MONOTONIC ns of the profile's time 0, when the burner's truth can be
// compared with it: >= 2 truth lines and the profile's clock base. Else null.
export function burnerTruthBase(report, profile, truth) {
	const base = profile.meta.startTimeAsClockMonotonicNanosecondsSinceBoot;
	if (!report.check(truth?.length >= 2, `the burner's truth has ${truth?.length ?? 0} lines (need >= 2)`) ||
	    !report.check(Number.isFinite(base), `meta.startTimeAsClockMonotonicNanosecondsSinceBoot is a number ` +
						 `(found ${JSON.stringify(base)})`))
		return null;
	return base;
}

// The threadCPUDelta of burner worker NAME (thread) between its first and
// last sample that the truth lines enclose (with `--`, the workers run
// before the first line), and the CPU time its own clock counted over the
// same time, interpolated between the lines: { cpuMs, spanMs, truthMs,
// errMs }, or null when the thread has no such samples.
export function burnerCpuWindow(report, profile, thread, name, truth, base) {
	const range = { fromMs: (truth[0].ns - base) / 1e6, toMs: (truth.at(-1).ns - base) / 1e6 };
	const cs = cpuAndSpan(profile, thread, range);
	const a = cs && truthCpuAt(truth, name, base + cs.first * 1e6);
	const b = cs && truthCpuAt(truth, name, base + cs.last * 1e6);
	if (!report.check(a && b, `${name}: the burner's truth covers its samples (${fmt(range.fromMs, 0)}–` +
			  `${fmt(range.toMs, 0)} ms into the recording; need >= 2 samples and the thread in it)`))
		return null;
	return { ...cs, truthMs: (b.ns - a.ns) / 1e6, errMs: (a.errNs + b.errNs) / 1e6 };
}

// threadCPUDelta is what the thread's own clock counted: 3 % for the clocks,
// plus the truth's reading error at both ends.
export function checkCpuAgainstTruth(report, name, w) {
	const tol = TRUTH_RELATIVE * w.truthMs + w.errMs + TRUTH_SLACK_MS;
	return report.check(Math.abs(w.cpuMs - w.truthMs) <= tol,
			    `${name}: ${fmt(w.cpuMs, 1)} ms CPU in the profile over ${fmt(w.spanMs, 0)} ms, ` +
				    `${fmt(w.truthMs, 1)} ms by its own clock (tolerance ±${fmt(tol, 1)} ms = ` +
				    `${100 * TRUTH_RELATIVE}% + reading error ${fmt(w.errMs, 1)} + ${TRUTH_SLACK_MS} ms)`);
}

// Each busy thread's window (burnerCpuWindow): { NAME: window }, or null
// when threadCPUDelta has no absolute unit.
function burnerCpuWindows(report, profile, byName, truth) {
	if (cpuDeltaToMs(profile.meta.sampleUnits?.threadCPUDelta) === null)
		return null;
	const windows = {};
	const base = burnerTruthBase(report, profile, truth);
	if (base === null)
		return windows;
	for (const name of BURNER_THREADS) {
		if (byName[name] && cpuAndSpan(profile, byName[name]))
			windows[name] = burnerCpuWindow(report, profile, byName[name], name, truth, base);
	}
	return windows;
}

// threadCPUDelta is the thread's real on-CPU time: each busy thread's is what
// its own clock counted, together they fit the machine's CPUs, and the
// sleeping main thread has almost none.
function checkBurnerCpu(report, mainCs, windows, cpus) {
	report.section('threadCPUDelta');
	if (!windows) {
		report.note('threadCPUDelta has no absolute unit; not checked');
		return;
	}
	let total = 0;
	let span = 0;
	for (const name of BURNER_THREADS) {
		const w = windows[name];
		if (!report.check(w && w.spanMs > 0, `thread ${name} has threadCPUDelta, >= 2 samples and truth`))
			continue;
		total += w.cpuMs;
		span = Math.max(span, w.spanMs);
		checkCpuAgainstTruth(report, name, w);
	}
	if (span > 0) {
		report.check(total <= cpus * span * MAX_CPU_SHARE,
			     `alpha+beta+sysc: ${fmt(total, 0)} ms CPU over ${fmt(span, 0)} ms fits ${cpus} CPUs`);
	}
	if (mainCs && mainCs.spanMs > 0) {
		report.check(mainCs.cpuMs <= MAX_SLEEPER_CPU_SHARE * mainCs.spanMs + 5,
			     `sleeping main thread: ${fmt(mainCs.cpuMs, 1)} ms CPU over ${fmt(mainCs.spanMs, 0)} ms ` +
				     `(<= ${100 * MAX_SLEEPER_CPU_SHARE}% + 5 ms)`);
	} else {
		report.note(`main thread has fewer than 2 samples; its CPU time is not checked`);
	}
}

// -d SECONDS: the busy alpha thread is sampled for about that long, and no
// sample anywhere lies much beyond it.
function checkDuration(report, profile, alpha, durationS) {
	report.section(`duration (-d ${durationS})`);
	const d = durationS * 1000;
	const a = profile.samplesOf(alpha);
	const alphaSpan = a.length ? a[a.length - 1].time - a[0].time : 0;
	report.check(alphaSpan >= 0.6 * d, `alpha is sampled over ${fmt(alphaSpan, 0)} ms (>= 60% of ${d} ms)`);
	let first = Infinity;
	let last = -Infinity;
	for (const t of profile.threads) {
		for (const s of profile.samplesOf(t)) {
			first = Math.min(first, s.time);
			last = Math.max(last, s.time);
		}
	}
	const slack = Math.max(1000, 0.2 * d);
	report.check(last - first <= d + slack,
		     `all samples lie within ${fmt(last - first, 0)} ms (<= ${d} ms + ${slack} ms)`);
}

// Cross-checks through the front-end's own selectors, on the on-CPU samples
// (off-CPU samples of preempted threads are waiting, not work).
export function checkBurnerWithCli(report, profile, cli, handles, info, { pid }) {
	pid = String(pid);
	const proc = info.processes.find((p) => String(p.pid) === pid);
	report.check(proc && proc.name === 'bpfprof-burner',
		     `profiler-cli names process ${pid} "bpfprof-burner" (found ${JSON.stringify(proc?.name)})`);
	const handleOf = (name) => {
		const i = profile.threads.findIndex((t) => t.pid === pid && t.name === name);
		return i >= 0 ? handles.get(i) : undefined;
	};
	const beta = handleOf('beta');
	if (beta) {
		const r = cli.query('thread', 'samples', '--thread', beta, ...onCpuFilters(cli, beta));
		const top = r.topFunctionsBySelf?.[0];
		report.check(top && bareFunctionName(top.name) === 'beta_spin' && top.selfPercentage > BETA_MIN_PERCENT,
			     `profiler-cli: beta's top self function is beta_spin > ${BETA_MIN_PERCENT}% ` +
				     `(found ${top ? `${top.name} ${fmt(top.selfPercentage)}%` : 'none'})`);
	}
	const alpha = handleOf('alpha');
	if (alpha) {
		const r = cli.query('thread', 'samples', '--thread', alpha, ...onCpuFilters(cli, alpha));
		const self = (fn) => (r.topFunctionsBySelf || []).find((f) => bareFunctionName(f.name) === fn)?.selfSamples || 0;
		const h = self('alpha_heavy');
		const l = self('alpha_light');
		const share = percent(h, h + l);
		const tol = alphaTolerance(h + l);
		report.check(h + l > 0 && Math.abs(share - ALPHA_EXPECTED) <= tol,
			     `profiler-cli: alpha_heavy ${fmt(share)}% of ${h + l} alpha samples ` +
				     `(tolerance ${fmt(ALPHA_EXPECTED - tol)}–${fmt(ALPHA_EXPECTED + tol)})`);
	}
	const sysc = handleOf('sysc');
	if (sysc) {
		const r = cli.query('thread', 'samples', '--thread', sysc, ...onCpuFilters(cli, sysc));
		const k = (r.categoryBreakdown?.categories || []).find((c) => c.name === 'Kernel');
		report.check(k && k.percentage > SYSC_MIN_KERNEL_PERCENT,
			     `profiler-cli: sysc's samples are ${fmt(k?.percentage ?? 0)}% Kernel category ` +
				     `(need > ${SYSC_MIN_KERNEL_PERCENT}%)`);
	}
}

// "forker: truth parent_cpu_ms P child_cpu_ms C" from the forker's stdout, or null.
export function parseForkerTruth(text) {
	const m = text.match(/^forker: truth parent_cpu_ms ([\d.]+) child_cpu_ms ([\d.]+)$/m);
	return m ? { parentCpuMs: Number(m[1]), childCpuMs: Number(m[2]) } : null;
}

export function checkForker(report, profile, { parentPid, childPid, parentName = 'forker', truth }) {
	parentPid = String(parentPid);
	childPid = String(childPid);
	report.section('processes of the command');
	const pids = profile.pids();
	report.check(parentPid !== childPid && pids.includes(parentPid) && pids.includes(childPid),
		     `parent ${parentPid} and child ${childPid} are both present as distinct pids`);
	const extra = pids.filter((p) => p !== parentPid && p !== childPid);
	report.check(extra.length === 0, `only the command's processes are recorded (others: ` +
					     `${extra.slice(0, 10).join(', ') || 'none'})`);
	report.check(truth, `the forker's truth line gives both processes' CPU time (found ${JSON.stringify(truth)})`);
	for (const [pid, name, fn, cpuMs] of [[parentPid, parentName, 'parent_burn', truth?.parentCpuMs],
					      [childPid, 'bpfprof-child', 'child_burn', truth?.childCpuMs]]) {
		report.section(`process ${pid} (${name}): ${fn}`);
		const ident = checkProcessIdentity(report, profile, pid, name);
		if (!ident)
			continue;
		const samples = ident.threads.flatMap((t) => onCpuSamples(profile, t));
		const hist = profile.selfHistogram(samples);
		const [top, count] = sortedHistogram(hist)[0] || ['(none)', 0];
		report.note(`top self: ${describeTop(hist, samples.length)}`);
		const expected = (cpuMs ?? 0) / profile.meta.interval;
		const need = Math.ceil(MIN_SAMPLES_OF_CPU * expected);
		report.check(expected >= FORKER_MIN_SAMPLES / MIN_SAMPLES_OF_CPU,
			     `its ${fmt(cpuMs ?? 0, 0)} ms of CPU at ${fmt(profile.meta.interval, 3)} ms call for ` +
				     `${fmt(expected, 0)} samples (a run that can show its top function needs >= ` +
				     `${FORKER_MIN_SAMPLES / MIN_SAMPLES_OF_CPU})`);
		report.check(samples.length >= need,
			     `${samples.length} on-CPU samples (need >= ${need}, ${100 * MIN_SAMPLES_OF_CPU}% of its CPU time)`);
		report.check(top === fn && percent(count, samples.length) > FORKER_MIN_TOP_PERCENT,
			     `top self function is ${fn} > ${FORKER_MIN_TOP_PERCENT}% (found ${top} ` +
				     `${fmt(percent(count, samples.length))}%)`);
	}
}

export function checkForkerWithCli(report, profile, cli, handles, info, { parentPid, childPid }) {
	for (const [pid, fn] of [[String(parentPid), 'parent_burn'], [String(childPid), 'child_burn']]) {
		const i = profile.threads.findIndex((t) => t.pid === pid && t.isMainThread);
		const h = handles.get(i);
		if (!h)
			continue;
		const r = cli.query('thread', 'samples', '--thread', h, ...onCpuFilters(cli, h));
		const top = r.topFunctionsBySelf?.[0];
		report.check(top && bareFunctionName(top.name) === fn,
			     `profiler-cli: top self function of ${pid} is ${fn} (found ` +
				     `${top ? `${top.name} ${fmt(top.selfPercentage)}%` : 'none'})`);
	}
}
