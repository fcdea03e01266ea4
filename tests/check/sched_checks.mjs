// SPDX-License-Identifier: BSD-2-Clause
//
// Scheduler checks (issue 3): exact threadCPUDelta, off-CPU samples and the
// Off-CPU / Runnable / Wakeup / Scheduling markers, judged on the file and,
// for samples and markers, again through the Firefox Profiler's own loader.
//
//   checkSchedContract   what holds for every profile recorded with the
//                        scheduler capture on (categories, schemas, deltas,
//                        marker shapes, per-thread summaries)
//   expectations         named checks a test script asks for, one per
//                        --expect "NAME ARGS..." of check.mjs (see EXPECTATIONS)
//   checkSched           both, on the file and then through profiler-cli
//
// Thread arguments are thread names within the process under test (--pid).

import { checkWithProfilerCli } from './checks.mjs';
import { bareFunctionName, onCpuFilters } from './profiler_cli.mjs';
import { CATEGORY_KERNEL, CATEGORY_USER, percent, sampleTimes } from './profile.mjs';
import { fmt } from './report.mjs';
import { WAIT_BOX_EXPECTATIONS } from './stack_chart.mjs';

export const CATEGORY_OFFCPU = 3;
export const OFFCPU_PREFIX = 'off-CPU: ';
export const OFFCPU_REASONS = ['sleeping', 'blocked (D)', 'preempted', 'yielded', 'stopped', 'exiting', 'other'];
const RUNNABLE_REASONS = ['woken', 'new thread', 'preempted', 'yielded'];

// name -> [schema, phase, display the contract asks for, category (null:
// the contract leaves it open)]
const SCHED_MARKERS = {
	// Not in the timeline overview: drawn on every track they made it a solid stripe (issue 21).
	'Off-CPU': ['bpfprof.OffCPU', 1, ['marker-chart', 'marker-table'], CATEGORY_OFFCPU],
	Runnable: ['bpfprof.Runnable', 1, ['marker-chart', 'marker-table'], CATEGORY_OFFCPU],
	Wakeup: ['bpfprof.Wakeup', 0, ['marker-chart', 'marker-table'], CATEGORY_OFFCPU],
	Scheduling: ['bpfprof.SchedSummary', 1, ['marker-table'], null],
};

// threadCPUDelta is the thread's on-CPU time since its previous sample, so
// over any stretch it cannot exceed the wall time. 2 % + 1 ms leave room
// for the µs rounding of each delta and for clock reads at the two ends.
const MAX_CPU_OVER_WALL = 1.02;
const CPU_OVER_WALL_SLACK_MS = 1;

// The workload measures itself with CLOCK_THREAD_CPUTIME_ID, the kernel's
// se.sum_exec_runtime, which each switch-out brings into the profile; only
// a slice still running at a window's edge goes by the switch times, which
// include steal and (IRQ_TIME_ACCOUNTING) interrupt time. 3 % bounds that.
const TRUTH_RELATIVE = 0.03;
// Off-CPU samples tile the off-CPU time at the sampling interval; the
// remainder is carried, so only the two ends and rounding are lost.
const OFFCPU_TILE_RELATIVE = 0.01;
const OFFCPU_TILE_INTERVALS = 3;
// Marker and stack majorities: what a thread does all the time, allowing
// for the odd preemption or a wait at thread start or exit.
const MAJORITY_PERCENT = 90;
// pipepair: the reader's waits last the writer's period, minus its short run.
const PERIOD_TOLERANCE = 0.3;
// SWITCH_STACK_SLOTS of bpf/bpfprof_abi.h: switch-out places whose stacks are rate-limited apart.
const SWITCH_STACK_PLACES = 4;
// Marker durations are written in ms with µs precision.
const DURATION_EPSILON_MS = 0.002;

function cpuDeltaToMs(unit) {
	if (unit === '\u00b5s')
		return 1e-3;
	if (unit === 'ns')
		return 1e-6;
	return null;
}

function median(values) {
	if (values.length === 0)
		return NaN;
	const v = [...values].sort((a, b) => a - b);
	const m = v.length >> 1;
	return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Parses the workloads' ground-truth lines (stderr):
//   sleeper: truth NAME tid T cpu_ms C loop_cpu_ms L loop_wall_ms W periods N overruns O
//   pipepair: truth NAME tid T ... (the same fields)
//   pipepair: truth writes W reads R period_ms P
export function parseTruth(text) {
	const truth = { threads: {} };
	for (const line of text.split('\n')) {
		let m = line.match(/^(?:sleeper|pipepair): truth (\S+) tid (\d+) cpu_ms ([\d.]+) loop_cpu_ms ([\d.]+) loop_wall_ms ([\d.]+) periods (\d+) overruns (\d+)$/);
		if (m) {
			truth.threads[m[1]] = { tid: m[2], cpuMs: Number(m[3]), loopCpuMs: Number(m[4]), loopWallMs: Number(m[5]),
						periods: Number(m[6]), overruns: Number(m[7]) };
			continue;
		}
		m = line.match(/^pipepair: truth writes (\d+) reads (\d+) period_ms ([\d.]+)$/);
		if (m)
			truth.pipe = { writes: Number(m[1]), reads: Number(m[2]), periodMs: Number(m[3]) };
	}
	return truth;
}

// ---- reading the scheduler parts of a profile ---------------------------------

function markersOf(profile, thread, name) {
	const m = thread.markers;
	const out = [];
	for (let i = 0; i < (m?.length || 0); i++) {
		if (profile.string(m.name[i]) !== name)
			continue;
		out.push({ index: i, start: m.startTime[i], end: m.endTime[i], phase: m.phase[i], category: m.category[i],
			   data: m.data[i] || {}, duration: m.endTime[i] - m.startTime[i] });
	}
	return out;
}

// How many samples the rows stand for (their weights).
function weighed(samples) {
	return samples.reduce((n, s) => n + s.weight, 0);
}

// Samples of a thread with their weight, CPU delta in ms and whether they are
// off-CPU (leaf in the Off-CPU category) and for which reason.
function schedSamples(profile, thread, toMs) {
	const w = Array.isArray(thread.samples.weight) ? thread.samples.weight : null;
	return profile.samplesOf(thread).map((s) => {
		const leaf = s.path.length ? s.path[s.path.length - 1] : null;
		const offCpu = leaf !== null && profile.frameCategory(leaf) === CATEGORY_OFFCPU;
		const name = leaf === null ? null : profile.frameFuncName(leaf);
		return { ...s, weight: w ? w[s.index] : 1, cpuMs: (s.cpuDelta ?? 0) * toMs, offCpu,
			 reason: offCpu && name.startsWith(OFFCPU_PREFIX) ? name.slice(OFFCPU_PREFIX.length) : null };
	});
}

// CPU of a thread: all deltas, the deltas after the first (the front-end
// leaves the first out of its graph), and the time between first and last sample.
function cpuStats(samples) {
	if (samples.length === 0)
		return { all: 0, afterFirst: 0, span: 0, n: 0 };
	let all = 0;
	for (const s of samples)
		all += s.cpuMs;
	return { all, afterFirst: all - samples[0].cpuMs, span: samples[samples.length - 1].time - samples[0].time,
		 n: samples.length };
}

// Frames of a stack, root first, as { name, category }.
function framesOf(profile, stack) {
	return profile.stackPath(stack).map((f) => ({ name: profile.frameFuncName(f), category: profile.frameCategory(f) }));
}

// FUNC (user code) with a kernel frame matching KREGEX above it (leafward):
// the thread blocked in that system call, called from FUNC.
function stackBlocksIn(frames, func, kregex) {
	const d = frames.findIndex((f) => f.name === func && f.category === CATEGORY_USER);
	return d >= 0 && frames.slice(d + 1).some((f) => f.category === CATEGORY_KERNEL && kregex.test(f.name));
}

function describeFrames(frames) {
	return frames.map((f) => f.name).join(' > ');
}

// ---- the contract every scheduler profile follows ------------------------------

export function checkSchedContract(report, profile, { pid, schedMinMs, offCpuSamples = true }) {
	report.section('scheduler contract (issue 3)');
	const meta = profile.meta;
	const c = meta.categories?.[CATEGORY_OFFCPU];
	report.check(c && c.name === 'Off-CPU' && c.color === 'lightblue',
		     `category ${CATEGORY_OFFCPU} is Off-CPU/lightblue (found ${c ? `${c.name}/${c.color}` : 'none'})`);
	const schemas = new Map((meta.markerSchema || []).map((s) => [s.name, s]));
	for (const [name, [type, , display]] of Object.entries(SCHED_MARKERS)) {
		const s = schemas.get(type);
		const missing = display.filter((d) => !(s?.display || []).includes(d));
		report.check(s && missing.length === 0, `marker schema ${type} (${name}) is declared with display ` +
							     `${display.join(', ')}${s ? (missing.length ? ` (missing ${missing.join(', ')})` : '') : ' (no schema)'}`);
	}
	checkOffCpuFrames(report, profile);

	const toMs = cpuDeltaToMs(meta.sampleUnits?.threadCPUDelta);
	if (!report.check(toMs !== null, `threadCPUDelta is in µs or ns (found ${JSON.stringify(meta.sampleUnits?.threadCPUDelta)})`))
		return;
	let nonInteger = 0;
	let example = null;
	const overWall = [];
	for (const t of profile.threads) {
		const deltas = t.samples.threadCPUDelta || [];
		for (let i = 0; i < deltas.length; i++) {
			if (!(Number.isInteger(deltas[i]) && deltas[i] >= 0)) {
				nonInteger++;
				example ??= `${t.name} (${t.tid}) sample ${i}: ${deltas[i]}`;
			}
		}
		const cs = cpuStats(schedSamples(profile, t, toMs));
		if (cs.afterFirst > cs.span * MAX_CPU_OVER_WALL + CPU_OVER_WALL_SLACK_MS)
			overWall.push(`${t.name} (${t.tid}): ${fmt(cs.afterFirst, 2)} ms CPU in ${fmt(cs.span, 2)} ms`);
	}
	report.check(nonInteger === 0, `threadCPUDelta values are integers >= 0: ${nonInteger} are not` +
					       `${example ? ` (e.g. ${example})` : ''}`);
	report.check(overWall.length === 0, `no thread's threadCPUDelta sum (after its first sample) exceeds its ` +
					    `sample span x ${MAX_CPU_OVER_WALL} + ${CPU_OVER_WALL_SLACK_MS} ms: ` +
					    `${overWall.length} of ${profile.threads.length} do${overWall.length ? `: ${overWall.slice(0, 3).join('; ')}` : ''}`);
	checkNoTracerFrames(report, profile, toMs);
	if (!offCpuSamples) {
		const n = profile.threads.reduce((k, t) => k + schedSamples(profile, t, toMs).filter((s) => s.offCpu).length, 0);
		report.check(n === 0, `--no-off-cpu: no sample has an Off-CPU leaf (found ${n})`);
	}
	checkSchedMarkers(report, profile, { pid, schedMinMs, toMs });
}

// "off-CPU: <reason>" functions: a known reason, the Off-CPU category, no library.
function checkOffCpuFrames(report, profile) {
	const ft = profile.shared.frameTable;
	let bad = 0;
	let example = null;
	const reasons = new Set();
	for (let f = 0; f < ft.length; f++) {
		const name = profile.frameFuncName(f);
		const named = name.startsWith(OFFCPU_PREFIX);
		const cat = profile.frameCategory(f);
		if (!named && cat !== CATEGORY_OFFCPU)
			continue;
		const reason = name.slice(OFFCPU_PREFIX.length);
		if (named)
			reasons.add(reason);
		if (!named || cat !== CATEGORY_OFFCPU || !OFFCPU_REASONS.includes(reason) ||
		    profile.resourceNameOfFunc(profile.frameFunc(f)) !== null) {
			bad++;
			example ??= `frame ${f} "${name}" category ${cat} resource ` +
				`${JSON.stringify(profile.resourceNameOfFunc(profile.frameFunc(f)))}`;
		}
	}
	report.check(bad === 0, `off-CPU leaf frames are "off-CPU: <reason>" with a known reason, category Off-CPU ` +
				       `and no resource (${bad} are not${example ? `, e.g. ${example}` : ''}; reasons seen: ` +
				       `${[...reasons].join(', ') || 'none'})`);
}

// A switch-out stack is taken by bpfprof's own program inside sched_switch;
// the frames of that program and of the tracepoint glue that called it are
// the profiler's, not the thread's, and must not show in its waits.
const TRACER_FRAME = /^(bpf_prog_[0-9a-f]+_|bpf_trace_run\d|__bpf_trace_|__traceiter_)/;

function checkNoTracerFrames(report, profile, toMs) {
	const stacks = new Set();
	for (const t of profile.threads) {
		for (const s of schedSamples(profile, t, toMs)) {
			if (s.offCpu)
				stacks.add(s.stack);
		}
		for (const m of markersOf(profile, t, 'Off-CPU')) {
			if (Number.isInteger(m.data.cause?.stack))
				stacks.add(m.data.cause.stack);
		}
	}
	let bad = 0;
	let example = null;
	for (const stack of stacks) {
		const frames = framesOf(profile, stack);
		const tracer = frames.filter((f) => f.category === CATEGORY_KERNEL && TRACER_FRAME.test(f.name));
		if (tracer.length) {
			bad++;
			example ??= tracer.map((f) => f.name).join(' > ');
		}
	}
	report.check(bad === 0, `switch-out stacks (off-CPU samples, Off-CPU markers) hold no frames of the tracer ` +
				       `itself: ${bad} of ${stacks.size} distinct stacks do${example ? ` (e.g. ${example})` : ''}`);
}

function checkSchedMarkers(report, profile, { pid, schedMinMs, toMs }) {
	let bad = [];
	for (const t of profile.threads) {
		for (const [name, [type, phase, , category]] of Object.entries(SCHED_MARKERS)) {
			for (const m of markersOf(profile, t, name)) {
				let why = null;
				if (m.phase !== phase || (category !== null && m.category !== category) || m.data.type !== type)
					why = `phase ${m.phase}, category ${m.category}, type ${m.data.type}`;
				else if (phase === 1 && !(m.end >= m.start))
					why = `ends at ${m.end} before its start ${m.start}`;
				else if (name === 'Off-CPU' && !OFFCPU_REASONS.includes(m.data.reason))
					why = `reason ${JSON.stringify(m.data.reason)}`;
				else if (name === 'Runnable' && !RUNNABLE_REASONS.includes(m.data.reason))
					why = `reason ${JSON.stringify(m.data.reason)}`;
				else if (name === 'Wakeup' && !Number.isInteger(m.data.wakeeTid))
					why = `wakeeTid ${JSON.stringify(m.data.wakeeTid)}`;
				if (why)
					bad.push(`${t.name} (${t.tid}) ${name}[${m.index}]: ${why}`);
			}
		}
	}
	report.check(bad.length === 0, `Off-CPU, Runnable, Wakeup and Scheduling markers have the contract's phase, ` +
					  `type and reasons, the first three category Off-CPU (${bad.length} do not${bad.length ? `: ${bad.slice(0, 3).join('; ')}` : ''})`);

	// The summary of each thread agrees with its markers and samples.
	const threads = profile.threadsOf(pid);
	bad = [];
	let summaries = 0;
	for (const t of threads) {
		const sums = markersOf(profile, t, 'Scheduling');
		if (sums.length !== 1) {
			bad.push(`${t.name} (${t.tid}) has ${sums.length} Scheduling markers`);
			continue;
		}
		summaries++;
		const d = sums[0].data;
		const off = markersOf(profile, t, 'Off-CPU');
		const run = markersOf(profile, t, 'Runnable');
		const wake = markersOf(profile, t, 'Wakeup');
		const who = `${t.name} (${t.tid})`;
		if (off.length !== d.offCpuCount - d.hiddenOffCpuCount)
			bad.push(`${who}: ${off.length} Off-CPU markers, summary says ${d.offCpuCount} - ${d.hiddenOffCpuCount} hidden`);
		// A preemption's runnable wait is its Off-CPU marker: one row, not two (issue 21).
		const asOffCpu = d.preemptedRunnableCount ?? 0;
		if (run.length !== d.runnableCount - d.hiddenRunnableCount - asOffCpu)
			bad.push(`${who}: ${run.length} Runnable markers, summary says ${d.runnableCount} - ${d.hiddenRunnableCount} hidden - ${asOffCpu} shown as Off-CPU`);
		if (wake.length > d.wakeupsSent)
			bad.push(`${who}: ${wake.length} Wakeup markers but wakeupsSent ${d.wakeupsSent}`);
		if (schedMinMs !== undefined && Math.abs(d.thresholdMs - schedMinMs) > DURATION_EPSILON_MS)
			bad.push(`${who}: thresholdMs ${d.thresholdMs}, expected ${schedMinMs}`);
		const short = [...off, ...run].filter((m) => m.duration < d.thresholdMs - DURATION_EPSILON_MS);
		if (short.length)
			bad.push(`${who}: ${short.length} markers shorter than thresholdMs ${d.thresholdMs}`);
		const samples = schedSamples(profile, t, toMs);
		const cpu = cpuStats(samples).all;
		// Each delta is rounded to an integer µs.
		const rounding = samples.length * 0.5e-3 + 0.01;
		if (cpu > d.onCpu + rounding)
			bad.push(`${who}: threadCPUDelta sum ${fmt(cpu, 3)} ms exceeds summary onCpu ${d.onCpu} ms`);
	}
	report.check(threads.length > 0 && bad.length === 0,
		     `every thread of pid ${pid} has one Scheduling marker that agrees with its markers, threshold and ` +
			     `CPU (${summaries} of ${threads.length} threads have one${bad.length ? `; ${bad.slice(0, 4).join('; ')}` : ''})`);
}

// ---- named expectations ------------------------------------------------------

// name -> { args: usage, threads: indexes of thread-name arguments, json?, cli? }
// A thread blocked all along: one Off-CPU marker over >= 90 % of the recording, with its stack.
function checkOneWait(ctx, name, reason, span) {
	const m = ctx.thread(name).markers;
	const waits = [];
	for (let i = 0; i < m.length; i++) {
		if (m.data[i]?.type === 'bpfprof.OffCPU')
			waits.push({ start: m.startTime[i], end: m.endTime[i], data: m.data[i] });
	}
	const w = waits[0];
	ctx.report.check(waits.length === 1 && w.data.reason === reason && w.end - w.start >= 0.9 * span &&
				 Number.isInteger(w.data.cause?.stack),
			 `${name}: one Off-CPU marker over the recording, with its stack (found ${waits.length}` +
				 (w ? `, ${fmt(w.end - w.start, 0)} ms, "${w.data.reason}", ` +
					      `stack ${w.data.cause?.stack ?? 'none'}` : '') + ')');
}

// json(ctx, ...args) checks the file; cli(ctx, cli, ...args) asks profiler-cli.
export const EXPECTATIONS = {
	'cpu-share': {
		args: 'THREAD MIN% MAX%', threads: [0],
		json: (ctx, name, min, max) => {
			const cs = cpuStats(ctx.samples(name));
			const share = percent(cs.afterFirst, cs.span);
			const truth = ctx.truth?.threads?.[name];
			const truthShare = truth ? percent(truth.loopCpuMs, truth.loopWallMs) : null;
			const inBand = (x) => x >= Number(min) && x <= Number(max);
			// Only a workload whose periods overran did not run its plan: else the band holds.
			if (truthShare === null || !truth.overruns || inBand(truthShare) || inBand(share)) {
				ctx.report.check(cs.n >= 2 && inBand(share),
						 `${name}: threadCPUDelta ${fmt(cs.afterFirst, 1)} ms over ${fmt(cs.span, 0)} ms = ` +
							 `${fmt(share, 2)}% (expected ${min}–${max}%; first delta left out, as the ` +
							 `front-end does${truthShare === null ? '' : `; it measured ${fmt(truthShare, 2)}% itself`})`);
				return;
			}
			// A machine too busy for the workload's plan (overrun periods): what it did is the measure.
			const tol = truthTolerance(ctx, truth, cs);
			ctx.report.check(cs.n >= 2 && Math.abs(cs.afterFirst - tol.expected) <= tol.ms,
					 `${name}: ${fmt(share, 2)}% CPU in the profile; other load on the machine made it ` +
						 `${fmt(truthShare, 2)}% by its own clock (${truth.overruns} of ${truth.periods} periods ` +
						 `overran), so the profile must match that (±${fmt(tol.ms, 1)} ms over ${fmt(cs.span, 0)} ms)`);
		},
		// The front-end reads the same CPU time from the file: units and
		// first-sample handling agree with the JSON side.
		cli: (ctx, cli, name) => {
			const cs = cpuStats(ctx.samples(name));
			const row = cli.query('thread', 'list').threads.find((t) => t.threadHandle === ctx.handle(name));
			const ms = row?.cpuMs;
			ctx.report.check(Math.abs(ms - cs.afterFirst) <= 0.01 + 1e-4 * cs.afterFirst,
					 `profiler-cli: ${name} used ${fmt(ms, 2)} ms of CPU (the file's threadCPUDelta after ` +
						 `the first sample: ${fmt(cs.afterFirst, 2)} ms)`);
		},
	},
	// A busy thread shows ~100 %. When other load on the machine kept it from
	// running all the time (by its own clock), it must show what it measured
	// itself (see cpu-truth), and its time off the CPU must have been spent
	// runnable, preempted, never asleep: it wanted the CPU all along.
	'cpu-busy': {
		args: 'THREAD MIN%', threads: [0],
		json: (ctx, name, min) => {
			const cs = cpuStats(ctx.samples(name));
			const share = percent(cs.afterFirst, cs.span);
			const truth = ctx.truth?.threads?.[name];
			const truthShare = truth ? percent(truth.loopCpuMs, truth.loopWallMs) : null;
			if (truthShare === null || truthShare >= Number(min) || share >= Number(min)) {
				ctx.report.check(cs.n >= 2 && share >= Number(min),
						 `${name}: busy thread at ${fmt(share, 2)}% CPU in the profile (need >= ${min}%` +
							 `${truthShare === null ? '' : `; it measured ${fmt(truthShare, 2)}% itself`})`);
				return;
			}
			const tol = truthTolerance(ctx, truth, cs);
			const off = weighed(ctx.samples(name).filter((s) => s.offCpu));
			const runnable = weighed(ctx.samples(name).filter((s) => s.offCpu &&
				(s.reason === 'preempted' || s.reason === 'yielded')));
			ctx.report.check(Math.abs(cs.afterFirst - tol.expected) <= tol.ms &&
					 percent(runnable, off) >= MAJORITY_PERCENT,
					 `${name}: busy thread at ${fmt(share, 2)}% CPU in the profile; other load on the machine ` +
						 `held it to ${fmt(truthShare, 2)}% by its own clock, so the profile must match that ` +
						 `(±${fmt(tol.ms, 1)} ms over ${fmt(cs.span, 0)} ms) and ${runnable} of its ${off} ` +
						 `off-CPU samples must be preempted or yielded (need >= ${MAJORITY_PERCENT}%)`);
		},
	},
	'cpu-truth': {
		args: 'THREAD', threads: [0],
		json: (ctx, name) => checkCpuTruth(ctx, name),
	},
	'offcpu-time': {
		args: 'THREAD', threads: [0],
		json: (ctx, name) => {
			const samples = ctx.samples(name);
			const cs = cpuStats(samples);
			const off = samples.filter((s) => s.offCpu).reduce((n, s) => n + s.weight, 0);
			const offMs = off * ctx.intervalMs;
			const expected = cs.span - cs.afterFirst;
			const tol = OFFCPU_TILE_RELATIVE * cs.span + OFFCPU_TILE_INTERVALS * ctx.intervalMs;
			ctx.report.check(Math.abs(offMs - expected) <= tol,
					 `${name}: ${off} off-CPU samples x ${fmt(ctx.intervalMs, 3)} ms = ${fmt(offMs, 1)} ms ` +
						 `cover its off-CPU time, span - CPU = ${fmt(expected, 1)} ms (tolerance ±${fmt(tol, 1)} ms)`);
		},
	},
	'offcpu-reason': {
		args: 'THREAD REASON MIN%', threads: [0],
		json: (ctx, name, reason, min) => {
			const off = ctx.samples(name).filter((s) => s.offCpu);
			const hist = new Map();
			for (const s of off)
				hist.set(s.reason, (hist.get(s.reason) || 0) + s.weight);
			const total = off.reduce((n, s) => n + s.weight, 0);
			const share = percent(hist.get(reason) || 0, total);
			ctx.report.check(total > 0 && share >= Number(min),
					 `${name}: ${fmt(share)}% of ${total} off-CPU samples are "${OFFCPU_PREFIX}${reason}" ` +
						 `(need >= ${min}%; ${[...hist].map(([r, n]) => `${r} ${n}`).join(', ') || 'none'})`);
		},
	},
	'offcpu-stack': {
		args: 'THREAD REASON FUNC KERNEL_REGEX', threads: [0],
		json: (ctx, name, reason, func, kre) => {
			const re = new RegExp(kre);
			const rows = ctx.samples(name).filter((s) => s.offCpu && s.reason === reason);
			const off = weighed(rows);
			let hits = 0;
			let miss = null;
			for (const s of rows) {
				const frames = framesOf(ctx.profile, s.stack);
				if (stackBlocksIn(frames, func, re))
					hits += s.weight;
				else
					miss ??= describeFrames(frames);
			}
			ctx.report.check(off > 0 && percent(hits, off) >= MAJORITY_PERCENT,
					 `${name}: ${fmt(percent(hits, off))}% of ${off} "${OFFCPU_PREFIX}${reason}" ` +
						 `samples have ${func} with a kernel frame matching /${kre}/ above it ` +
						 `(need >= ${MAJORITY_PERCENT}%)`);
			if (miss)
				ctx.report.note(`e.g. ${miss}`);
		},
		cli: (ctx, cli, name, reason, func, kre) => {
			const h = ctx.handle(name);
			const leaf = findFunction(cli, h, `${OFFCPU_PREFIX}${reason}`);
			if (!ctx.report.check(leaf, `profiler-cli: ${name} has a function "${OFFCPU_PREFIX}${reason}"`))
				return;
			const r = cli.query('thread', 'functions', '--thread', h, '--includes-suffix', leaf.functionHandle, '--limit', '0');
			const total = (fn) => Math.max(0, ...r.functions.filter(fn).map((f) => f.totalPercentage));
			const re = new RegExp(kre);
			const userPct = total((f) => bareFunctionName(f.name) === func);
			const kernPct = total((f) => isKernelLibrary(f) && re.test(bareFunctionName(f.name)));
			ctx.report.check(userPct >= MAJORITY_PERCENT && kernPct >= MAJORITY_PERCENT,
					 `profiler-cli: in ${name}'s samples ending in "${OFFCPU_PREFIX}${reason}" ` +
						 `(${leaf.selfSamples}), ${func} is in ${fmt(userPct)}% and a kernel /${kre}/ ` +
						 `function in ${fmt(kernPct)}% (need >= ${MAJORITY_PERCENT}% each)`);
		},
	},
	// A thread that never ran nor woke while recorded (issue 21): not a blank track, but one
	// wait over the whole recording, its off-CPU samples, and where it waits (the marker's stack).
	'blocked-throughout': {
		args: 'THREAD REASON', threads: [0],
		json: (ctx, name, reason) => {
			const meta = ctx.profile.meta;
			const span = meta.profilingEndTime - meta.profilingStartTime;
			const want = Math.floor(0.9 * span / ctx.intervalMs);
			const samples = ctx.samples(name);
			const waiting = samples.filter((s) => s.offCpu && s.reason === reason).length;
			// Counted by weight: a row of off-CPU samples stands for a run of them (issue 37).
			const n = weighed(samples);
			ctx.report.check(n >= want && waiting === samples.length,
					 `${name}, blocked all along: ${n} samples (need >= ${want} in ` +
						 `${fmt(span, 0)} ms), ${waiting} of them "${OFFCPU_PREFIX}${reason}"`);
			checkOneWait(ctx, name, reason, span);
		},
	},
	// -a (issue 28): the same wait, its samples spaced wider (a machine's thousands of sleepers
	// would be millions of samples at every interval), but over the whole recording: what the
	// stack chart draws as one box from the first sample to the end.
	'asleep-throughout': {
		args: 'THREAD REASON', threads: [0],
		json: (ctx, name, reason) => {
			const meta = ctx.profile.meta;
			const span = meta.profilingEndTime - meta.profilingStartTime;
			const samples = ctx.samples(name);
			const waiting = samples.filter((s) => s.offCpu && s.reason === reason).length;
			const first = samples.length ? samples[0].time - meta.profilingStartTime : span;
			const covered = span - first;
			ctx.report.check(samples.length >= 2 && waiting === samples.length && covered >= 0.9 * span,
					 `${name}, asleep all along: ${samples.length} samples, ${waiting} of them ` +
						 `"${OFFCPU_PREFIX}${reason}", from ${fmt(first, 0)} ms: the wait covers ` +
						 `${fmt(percent(covered, span))}% of ${fmt(span, 0)} ms (need >= 90%)`);
			checkOneWait(ctx, name, reason, span);
		},
	},
	// The syscall a thread blocked all along sleeps in (issue 28): read from its saved
	// registers, not syscall 0 (read) left in place; one SyscallWait over the recording.
	'blocked-syscall': {
		args: 'THREAD SYSCALL', threads: [0],
		json: (ctx, name, syscall) => {
			const meta = ctx.profile.meta;
			const span = meta.profilingEndTime - meta.profilingStartTime;
			const m = ctx.thread(name).markers;
			const waits = [];
			for (let i = 0; i < m.length; i++) {
				if (m.data[i]?.type === 'bpfprof.SyscallWait')
					waits.push({ ms: m.endTime[i] - m.startTime[i], data: m.data[i] });
			}
			const w = waits[0];
			ctx.report.check(waits.length === 1 && w.data.syscall === syscall && w.ms >= 0.9 * span,
					 `${name}: one syscall wait over the recording, in ${syscall} (found ` +
						 `${waits.map((x) => `${x.data.syscall}(${x.data.args ?? ''}) ${fmt(x.ms, 0)} ms`).join(', ') || 'none'}` +
						 ` in ${fmt(span, 0)} ms)`);
		},
	},
	'oncpu-func': {
		args: 'THREAD FUNC MIN%', threads: [0],
		json: (ctx, name, func, min) => {
			const on = ctx.samples(name).filter((s) => ctx.profile.isOnCpu(s));
			const hits = on.filter((s) => ctx.profile.inclusiveFuncNames(s).has(func)).length;
			ctx.report.check(on.length > 0 && percent(hits, on.length) >= Number(min),
					 `${name}: ${func} is in ${fmt(percent(hits, on.length))}% of ${on.length} on-CPU samples ` +
						 `(need >= ${min}%)`);
		},
		cli: (ctx, cli, name, func, min) => {
			const h = ctx.handle(name);
			const filters = onCpuFilters(cli, h);
			const r = cli.query('thread', 'samples', '--thread', h, ...filters);
			const on = r.categoryBreakdown?.totalSamples || 0;
			const f = searchFunctions(cli, h, func, filters).find((x) => bareFunctionName(x.name) === func);
			const n = f?.totalSamples || 0;
			ctx.report.check(on > 0 && percent(n, on) >= Number(min),
					 `profiler-cli: ${func} is in ${n} of ${name}'s ${on} samples without an off-CPU leaf ` +
						 `= ${fmt(percent(n, on))}% (need >= ${min}%)`);
		},
	},
	'no-offcpu-samples': {
		args: '', threads: [],
		json: (ctx) => {
			const n = ctx.profile.threads.reduce((k, t) => k + ctx.samplesOfThread(t).filter((s) => s.offCpu).length, 0);
			ctx.report.check(n === 0, `no sample of any thread has an Off-CPU leaf (found ${n})`);
		},
		cli: (ctx, cli) => {
			const with_ = [];
			for (const t of ctx.profile.threadsOf(ctx.pid)) {
				const r = cli.query('thread', 'samples', '--thread', ctx.handleOf(t));
				const off = (r.categoryBreakdown?.categories || []).find((c) => c.name === 'Off-CPU');
				if (off && off.samples > 0)
					with_.push(`${t.name} ${off.samples}`);
			}
			ctx.report.check(with_.length === 0, `profiler-cli: no thread of pid ${ctx.pid} has Off-CPU samples ` +
							      `(${with_.join(', ') || 'none has'})`);
		},
	},
	'offcpu-markers': {
		args: 'THREAD REASON WAKER PERIOD_MS', threads: [0, 2],
		json: (ctx, name, reason, wakerName, periodMs) => checkOffCpuMarkers(ctx, name, reason, wakerName, Number(periodMs)),
		cli: (ctx, cli, name, reason, wakerName, periodMs) => {
			const wtid = Number(ctx.thread(wakerName).tid);
			const byWaker = groupedMarkers(cli, ctx.handle(name), 'field:wakerTid', 'Off-CPU');
			const byReason = groupedMarkers(cli, ctx.handle(name), 'field:reason', 'Off-CPU');
			const mine = byWaker.sub.get(String(wtid));
			const n = mine?.count || 0;
			const med = mine?.durationStats?.median;
			const p = Number(periodMs);
			const expected = ctx.offCpuByWaker?.get(name);
			ctx.report.check(n > 0 && (expected === undefined || n === expected) &&
					 Math.abs(med - p) <= PERIOD_TOLERANCE * p,
					 `profiler-cli: ${n} of ${name}'s ${byWaker.count} Off-CPU markers were woken by ` +
						 `${wakerName} (tid ${wtid})${expected === undefined ? '' : ` (the file has ${expected})`}, ` +
						 `median ${fmt(med ?? NaN, 2)} ms (expected ${p} ms ±${100 * PERIOD_TOLERANCE}%)`);
			const r = byReason.sub.get(reason)?.count || 0;
			ctx.report.check(percent(r, byReason.count) >= MAJORITY_PERCENT,
					 `profiler-cli: ${r} of ${name}'s ${byReason.count} Off-CPU markers have reason "${reason}" ` +
						 `(need >= ${MAJORITY_PERCENT}%; ${[...byReason.sub].map(([k, g]) => `${k} ${g.count}`).join(', ')})`);
		},
	},
	'marker-stack': {
		args: 'THREAD FUNC KERNEL_REGEX', threads: [0],
		json: (ctx, name, func, kre) => {
			const re = new RegExp(kre);
			const off = markersOf(ctx.profile, ctx.thread(name), 'Off-CPU');
			let hits = 0;
			let miss = null;
			for (const m of off) {
				const stack = m.data.cause?.stack;
				const ok = Number.isInteger(stack) && stackBlocksIn(framesOf(ctx.profile, stack), func, re);
				if (ok)
					hits++;
				else
					miss ??= Number.isInteger(stack) ? describeFrames(framesOf(ctx.profile, stack)) : 'no cause.stack';
			}
			ctx.report.check(off.length > 0 && percent(hits, off.length) >= MAJORITY_PERCENT,
					 `${name}: ${fmt(percent(hits, off.length))}% of ${off.length} Off-CPU markers have a ` +
						 `cause stack with ${func} below a kernel /${kre}/ frame (need >= ${MAJORITY_PERCENT}%)`);
			if (miss)
				ctx.report.note(`e.g. ${miss}`);
		},
		// Whether FUNC blocked under a kernel frame is the JSON check's
		// verdict, over all markers; that a few sampled markers pass depends
		// on which ones the loader lists first. What the loader must do is
		// show each sampled marker's cause stack as the file has it.
		cli: (ctx, cli, name, func, kre) => {
			const re = new RegExp(kre);
			const fileOff = markersOf(ctx.profile, ctx.thread(name), 'Off-CPU');
			const g = groupedMarkers(cli, ctx.handle(name), 'name', 'Off-CPU', 3);
			const shown = [];
			let same = 0, blocks = 0;
			for (const m of g.top) {
				const info = cli.query('marker', 'info', m.handle);
				const cliNames = (info.stack?.frames || []).map((f) => bareFunctionName(f.nameWithLibrary || f.name));
				// The loader numbers markers its own way and counts time from
				// its root range: find the file's marker by its times.
				const zero = info.context?.rootRange?.start ?? 0;
				const mine = fileOff.find((x) => Math.abs(x.start - (info.start + zero)) < 1e-3 &&
							    Math.abs(x.end - (info.end + zero)) < 1e-3);
				const stack = mine?.data.cause?.stack;
				const fileFrames = Number.isInteger(stack) ? framesOf(ctx.profile, stack) : [];
				// marker info lists the leaf first; the file's path starts at the root.
				const fileNames = fileFrames.map((f) => f.name).reverse();
				if (fileNames.length > 0 && fileNames.join('\n') === cliNames.join('\n'))
					same++;
				if (stackBlocksIn(fileFrames, func, re))
					blocks++;
				const d = cliNames.indexOf(func);
				shown.push(`${m.handle} at ${fmt(info.start, 3)} ms: ${cliNames.slice(0, Math.max(d + 1, 4)).join(' < ')}`);
			}
			ctx.report.check(g.top.length > 0 && same === g.top.length,
					 `profiler-cli: ${same} of ${g.top.length} sampled Off-CPU markers of ${name} show the ` +
						 `file's cause stack, frame for frame (${blocks} of them with ${func} under a kernel ` +
						 `/${kre}/ frame)`);
			for (const s of shown)
				ctx.report.note(s);
		},
	},
	'runnable-markers': {
		args: 'THREAD WAKER', threads: [0, 1],
		json: (ctx, name, wakerName) => {
			const wtid = Number(ctx.thread(wakerName).tid);
			const run = markersOf(ctx.profile, ctx.thread(name), 'Runnable');
			const mine = run.filter((m) => m.data.wakerTid === wtid && m.data.reason === 'woken');
			ctx.runnableByWaker.set(name, mine.length);
			ctx.report.check(run.length > 0 && percent(mine.length, run.length) >= MAJORITY_PERCENT,
					 `${name}: ${mine.length} of ${run.length} Runnable markers are "woken" by ${wakerName} ` +
						 `(tid ${wtid}) (need >= ${MAJORITY_PERCENT}%)`);
		},
		cli: (ctx, cli, name, wakerName) => {
			const wtid = String(ctx.thread(wakerName).tid);
			const g = groupedMarkers(cli, ctx.handle(name), 'field:wakerTid', 'Runnable');
			const n = g.sub.get(wtid)?.count || 0;
			const expected = ctx.runnableByWaker.get(name);
			ctx.report.check(n > 0 && n === expected,
					 `profiler-cli: ${n} of ${name}'s ${g.count} Runnable markers were woken by ${wakerName} ` +
						 `(the file has ${expected})`);
		},
	},
	'wakeup-markers': {
		args: 'WAKER WAKEE', threads: [0, 1],
		json: (ctx, wakerName, wakeeName) => {
			const wakee = ctx.thread(wakeeName);
			const waker = ctx.thread(wakerName);
			const mine = markersOf(ctx.profile, waker, 'Wakeup').filter((m) => m.data.wakeeTid === Number(wakee.tid));
			const named = mine.filter((m) => m.data.wakee === `${wakee.name} (${wakee.tid})`).length;
			const off = markersOf(ctx.profile, wakee, 'Off-CPU').filter((m) => m.data.wakerTid === Number(waker.tid)).length;
			ctx.wakeupsOf.set(wakerName, mine.length);
			ctx.report.check(mine.length > 0 && named === mine.length &&
					 Math.abs(mine.length - off) <= Math.max(2, 0.1 * off),
					 `${wakerName}: ${mine.length} Wakeup markers name ${wakeeName} (tid ${wakee.tid}), ` +
						 `${named} as "${wakee.name} (${wakee.tid})"; ${wakeeName} has ${off} Off-CPU markers ` +
						 `woken by ${wakerName} (need about as many)`);
		},
		cli: (ctx, cli, wakerName, wakeeName) => {
			const tid = String(ctx.thread(wakeeName).tid);
			const g = groupedMarkers(cli, ctx.handle(wakerName), 'field:wakeeTid', 'Wakeup');
			const n = g.sub.get(tid)?.count || 0;
			const expected = ctx.wakeupsOf.get(wakerName);
			ctx.report.check(n > 0 && n === expected,
					 `profiler-cli: ${wakerName} has ${n} Wakeup markers for ${wakeeName} (the file has ${expected})`);
		},
	},
	// What woke THREAD's waits, when no thread did: "timer", "interrupt" or
	// "softirq". Of its Off-CPU markers that name a waker, at least PCT %
	// must name KIND (and none the thread an interrupt happened to land on:
	// that is 'marker-count BYSTANDER Wakeup 0 0').
	'woken-by': {
		args: 'THREAD KIND PCT', threads: [0],
		json: (ctx, name, kind, pct) => {
			const woken = markersOf(ctx.profile, ctx.thread(name), 'Off-CPU').filter((m) => m.data.waker !== undefined);
			const mine = woken.filter((m) => m.data.waker === kind && m.data.wakerTid === undefined);
			ctx.wokenBy.set(name, mine.length);
			ctx.report.check(woken.length > 0 && percent(mine.length, woken.length) >= Number(pct),
					 `${name}: ${mine.length} of ${woken.length} woken Off-CPU markers say woken by ` +
						 `"${kind}" (need >= ${pct}%); the others: ` +
						 `${[...new Set(woken.filter((m) => m.data.waker !== kind).map((m) => m.data.waker))].slice(0, 5).join(', ')}`);
		},
		cli: (ctx, cli, name, kind) => {
			const g = groupedMarkers(cli, ctx.handle(name), 'field:waker', 'Off-CPU', 5);
			const n = g.sub.get(kind)?.count || 0;
			const expected = ctx.wokenBy.get(name);
			ctx.report.check(n > 0 && n === expected,
					 `profiler-cli: ${n} of ${name}'s ${g.count} Off-CPU markers were woken by "${kind}" ` +
						 `(the file has ${expected})`);
		},
	},
	// A thread that woke WAKEE never (a CPU burner that timer interrupts land
	// on) carries no Wakeup marker naming it.
	'no-wakeup-markers': {
		args: 'THREAD WAKEE', threads: [0, 1],
		json: (ctx, name, wakeeName) => {
			const tid = Number(ctx.thread(wakeeName).tid);
			const n = markersOf(ctx.profile, ctx.thread(name), 'Wakeup').filter((m) => m.data.wakeeTid === tid).length;
			ctx.report.check(n === 0, `${name}: ${n} Wakeup markers say it woke ${wakeeName} (tid ${tid}) (need 0)`);
		},
		cli: (ctx, cli, name, wakeeName) => {
			const tid = String(ctx.thread(wakeeName).tid);
			const n = groupedMarkers(cli, ctx.handle(name), 'field:wakeeTid', 'Wakeup').sub.get(tid)?.count || 0;
			ctx.report.check(n === 0, `profiler-cli: ${name} has ${n} Wakeup markers for ${wakeeName} (need 0)`);
		},
	},
	'marker-count': {
		args: 'THREAD NAME MIN MAX|*', threads: [0],
		json: (ctx, name, marker, min, max) => {
			const n = markersOf(ctx.profile, ctx.thread(name), marker).length;
			ctx.report.check(n >= Number(min) && (max === '*' || n <= Number(max)),
					 `${name}: ${n} "${marker}" markers (expected ${min}–${max === '*' ? '∞' : max})`);
		},
		cli: (ctx, cli, name, marker) => {
			const g = groupedMarkers(cli, ctx.handle(name), 'name', marker);
			const n = markersOf(ctx.profile, ctx.thread(name), marker).length;
			ctx.report.check(g.count === n, `profiler-cli: ${name} has ${g.count} "${marker}" markers (the file has ${n})`);
		},
	},
	'marker-min': {
		args: 'NAME MIN_MS', threads: [],
		json: (ctx, marker, minMs) => {
			const short = [];
			let n = 0;
			for (const t of ctx.profile.threadsOf(ctx.pid)) {
				for (const m of markersOf(ctx.profile, t, marker)) {
					n++;
					if (m.duration < Number(minMs) - DURATION_EPSILON_MS)
						short.push(`${t.name} ${fmt(m.duration, 3)} ms`);
				}
			}
			ctx.report.check(short.length === 0, `none of the ${n} "${marker}" markers of pid ${ctx.pid} is shorter than ` +
							    `${minMs} ms (${short.length} are${short.length ? `: ${short.slice(0, 3).join(', ')}` : ''})`);
		},
		cli: (ctx, cli, marker, minMs) => {
			let n = 0;
			for (const t of ctx.profile.threadsOf(ctx.pid)) {
				const max = String(Number(minMs) - 2 * DURATION_EPSILON_MS);
				n += groupedMarkers(cli, ctx.handleOf(t), 'name', marker, 1, ['--max-duration', max]).count;
			}
			ctx.report.check(n === 0, `profiler-cli: ${n} "${marker}" markers of pid ${ctx.pid} last under ${minMs} ms`);
		},
	},
	'hidden-offcpu': {
		args: 'THREAD MIN_COUNT', threads: [0],
		json: (ctx, name, min) => {
			const s = markersOf(ctx.profile, ctx.thread(name), 'Scheduling')[0]?.data;
			ctx.report.check(s && s.hiddenOffCpuCount >= Number(min) && s.hiddenOffCpuTime > 0,
					 `${name}: Scheduling summary counts ${s?.hiddenOffCpuCount} off-CPU intervals ` +
						 `(${fmt(s?.hiddenOffCpuTime, 1)} ms) under the threshold (need >= ${min})`);
		},
		cli: (ctx, cli, name, min) => {
			const g = groupedMarkers(cli, ctx.handle(name), 'name', 'Scheduling', 1);
			const info = g.top[0] ? cli.query('marker', 'info', g.top[0].handle) : null;
			const v = info?.fields?.find((f) => f.key === 'hiddenOffCpuCount')?.value;
			ctx.report.check(v >= Number(min), `profiler-cli: ${name}'s Scheduling marker shows hiddenOffCpuCount ` +
							   `${v} (need >= ${min})`);
		},
	},
	// The kernel keeps the wakeup of a wait still under the threshold with
	// the wakee and hands it over in the wakee's next record: it costs no
	// record of its own. Only the wakeups of long waits, of new threads and a
	// few that raced with a switch may come as records ("Wakeups" minus
	// "Wakeups kept in the kernel" in meta.extra); at most MAX_SENT_PCT % of
	// all wakeups beyond those, of at least MIN_WAKEUPS.
	'kept-wakeups': {
		args: 'MAX_SENT_PCT MIN_WAKEUPS', threads: [],
		json: (ctx, maxPct, minWakeups) => {
			const all = ctx.profile.extraValue('Wakeups');
			const kept = ctx.profile.extraValue('Wakeups kept in the kernel');
			const threads = ctx.profile.threadsOf(ctx.pid);
			let long = 0;
			for (const t of threads) {
				const s = markersOf(ctx.profile, t, 'Scheduling')[0]?.data;
				long += s ? s.offCpuCount - s.hiddenOffCpuCount : 0;
			}
			const sent = all - kept;
			const allowed = long + threads.length + Math.ceil((all * Number(maxPct)) / 100);
			ctx.report.check(Number.isInteger(all) && all >= Number(minWakeups),
					 `the recording has ${all} wakeups of pid ${ctx.pid}'s threads (need >= ${minWakeups})`);
			ctx.report.check(Number.isInteger(all) && Number.isInteger(kept) && sent <= allowed,
					 `${sent} of ${all} wakeups came as records, ${kept} were kept in the kernel (allowed: ` +
						 `${long} long waits + ${threads.length} threads + ${maxPct}% = ${allowed})`);
		},
	},
	// Short waits are only counted in the kernel (fold_waits): of pid's
	// context switches, the kernel sends only those it must, bounded by time,
	// not by how many switches there were. Per thread: its long waits, one
	// per off-CPU sampling interval of off-CPU time (folded time must become
	// off-CPU samples), and two per switch-out stack (the stack's own and the
	// next switch-out, which ends that wait), at most one stack per interval
	// and switch-out place (4 places). "Context switches kept in the kernel"
	// in meta.extra; the recording must have at least MIN_SWITCHES.
	'kept-switches': {
		args: 'MIN_SWITCHES', threads: [],
		json: (ctx, minSwitches) => {
			const all = ctx.profile.extraValue('Context switches');
			const kept = ctx.profile.extraValue('Context switches kept in the kernel');
			const interval = ctx.intervalMs;
			const meta = ctx.profile.meta;
			// The recording's span; from the samples where the meta does not say.
			const lastSample = () => ctx.profile.threads.reduce((end, t) =>
				(t.samples ? sampleTimes(t.samples).reduce((a, x) => Math.max(a, x), end) : end), 0);
			const span = (meta.profilingEndTime ?? lastSample()) - (meta.profilingStartTime ?? 0);
			let bound = 0;
			for (const t of ctx.profile.threadsOf(ctx.pid)) {
				const s = markersOf(ctx.profile, t, 'Scheduling')[0]?.data;
				if (s)
					bound += s.offCpuCount - s.hiddenOffCpuCount + Math.ceil(s.offCpuTime / interval) + 1 +
						2 * SWITCH_STACK_PLACES * (Math.ceil(span / interval) + 1);
			}
			ctx.report.check(Number.isInteger(all) && all >= Number(minSwitches),
					 `the recording has ${all} context switches (need >= ${minSwitches})`);
			ctx.report.check(Number.isInteger(kept) && all - kept <= bound,
					 `${all - kept} of ${all} context switches were sent as records, ${kept} only counted ` +
						 `in the kernel (at most ${bound} sends for ${fmt(span, 0)} ms at ${fmt(interval, 3)} ms)`);
		},
	},
	// The thread's switches by the kernel's own count (getrusage: nvcsw and
	// nivcsw, taken as its last act; a few switches on its way out come
	// after): voluntarySwitches and preemptions must match them whether the
	// kernel sent or only counted each wait (0.1 % + 10, + lost records).
	'switches': {
		args: 'THREAD VOLUNTARY INVOLUNTARY', threads: [0],
		json: (ctx, name, vol, invol) => {
			const s = markersOf(ctx.profile, ctx.thread(name), 'Scheduling')[0]?.data;
			const lost = ctx.profile.extraValue('Lost switch events') ?? 0;
			for (const [field, want] of [['voluntarySwitches', Number(vol)], ['preemptions', Number(invol)]]) {
				const got = s?.[field];
				const tol = Math.ceil(want / 1000) + 10 + lost;
				ctx.report.check(Number.isInteger(got) && Math.abs(got - want) <= tol,
						 `${name}: ${field} ${got}, the kernel counted ${want} (tolerance ±${tol})`);
			}
		},
	},
	// Any count of the thread's Scheduling summary, e.g. hiddenRunnableCount
	// or wakeupsSent (which need the wakeups of waits under the threshold).
	'summary-min': {
		args: 'THREAD FIELD MIN_COUNT', threads: [0],
		json: (ctx, name, field, min) => {
			const v = markersOf(ctx.profile, ctx.thread(name), 'Scheduling')[0]?.data?.[field];
			ctx.report.check(v >= Number(min), `${name}: Scheduling summary ${field} is ${v} (need >= ${min})`);
		},
		cli: (ctx, cli, name, field, min) => {
			const g = groupedMarkers(cli, ctx.handle(name), 'name', 'Scheduling', 1);
			const info = g.top[0] ? cli.query('marker', 'info', g.top[0].handle) : null;
			const v = info?.fields?.find((f) => f.key === field)?.value;
			ctx.report.check(v >= Number(min), `profiler-cli: ${name}'s Scheduling marker shows ${field} ` +
							   `${v} (need >= ${min})`);
		},
	},
	// The stack chart's boxes (stack_chart.mjs).
	...WAIT_BOX_EXPECTATIONS,
};

// threadCPUDelta against what the thread measured itself (the workload's
// "truth" line): its share while it looped, and its CPU time in total.
function checkCpuTruth(ctx, name) {
	const truth = ctx.truth?.threads?.[name];
	if (!ctx.report.check(truth, `ground truth for ${name} was given (--truth)`))
		return;
	const th = ctx.thread(name);
	ctx.report.check(String(th.tid) === truth.tid, `${name}'s tid in the profile ${th.tid} is the workload's ${truth.tid}`);
	const cs = cpuStats(ctx.samples(name));
	const t = truthTolerance(ctx, truth, cs);
	ctx.report.check(cs.n >= 2 && Math.abs(cs.afterFirst - t.expected) <= t.ms,
			 `${name}: ${fmt(percent(cs.afterFirst, cs.span), 2)}% CPU in the profile, ${fmt(100 * t.share, 2)}% ` +
				 `measured by the thread (CLOCK_THREAD_CPUTIME_ID): ${fmt(cs.afterFirst, 1)} ms vs ` +
				 `${fmt(t.expected, 1)} ms over ${fmt(cs.span, 0)} ms (tolerance ±${fmt(t.ms, 1)} ms = ` +
				 `${TRUTH_RELATIVE * 100}% + 2 x (run ${fmt(t.run, 2)} + interval ${fmt(ctx.intervalMs, 2)}) ms)`);
	const tolTotal = TRUTH_RELATIVE * truth.cpuMs + t.edge;
	ctx.report.check(Math.abs(cs.all - truth.cpuMs) <= tolTotal,
			 `${name}: all its threadCPUDelta add up to ${fmt(cs.all, 1)} ms, its own CPU time is ` +
				 `${fmt(truth.cpuMs, 1)} ms (tolerance ±${fmt(tolTotal, 1)} ms)`);
	if (truth.overruns > 0)
		ctx.report.note(`${name} overran ${truth.overruns} of ${truth.periods} periods: the machine was busy`);
}

// What the profile's CPU over the sample span should be, given the thread's
// own share while it looped, and how far apart the two may honestly be.
function truthTolerance(ctx, truth, cs) {
	const share = truth.loopCpuMs / truth.loopWallMs;
	// Each end of the sample span can miss or add at most one run of the
	// thread (one burn of a period, or one interval of a busy thread) plus one
	// sampling interval.
	const run = truth.periods > 0 ? truth.loopCpuMs / truth.periods : ctx.intervalMs;
	const edge = 2 * (run + ctx.intervalMs);
	const expected = share * cs.span;
	return { share, run, edge, expected, ms: TRUTH_RELATIVE * expected + edge };
}

function checkOffCpuMarkers(ctx, name, reason, wakerName, periodMs) {
	const th = ctx.thread(name);
	const waker = ctx.thread(wakerName);
	const off = markersOf(ctx.profile, th, 'Off-CPU');
	const wtid = Number(waker.tid);
	const byWaker = off.filter((m) => m.data.wakerTid === wtid);
	ctx.offCpuByWaker.set(name, byWaker.length);
	const named = byWaker.filter((m) => m.data.waker === `${waker.name} (${waker.tid})` &&
				     m.data.wakerPid === String(waker.pid).split('.')[0]).length;
	const withReason = off.filter((m) => m.data.reason === reason).length;
	const med = median(byWaker.map((m) => m.duration));
	ctx.report.check(off.length > 0 && percent(withReason, off.length) >= MAJORITY_PERCENT,
			 `${name}: ${withReason} of ${off.length} Off-CPU markers have reason "${reason}" ` +
				 `(need >= ${MAJORITY_PERCENT}%)`);
	ctx.report.check(off.length > 0 && percent(byWaker.length, off.length) >= MAJORITY_PERCENT &&
			 named === byWaker.length,
			 `${name}: ${byWaker.length} of ${off.length} Off-CPU markers have wakerTid ${wtid} (${wakerName}), ` +
				 `${named} of them as waker "${waker.name} (${waker.tid})" with wakerPid ${waker.pid} ` +
				 `(need >= ${MAJORITY_PERCENT}%, all named)`);
	ctx.report.check(Math.abs(med - periodMs) <= PERIOD_TOLERANCE * periodMs,
			 `${name}: the Off-CPU intervals ended by ${wakerName} last ${fmt(med, 2)} ms (median; expected ` +
				 `${periodMs} ms ±${100 * PERIOD_TOLERANCE}%)`);
	const writes = ctx.truth?.pipe?.writes;
	if (writes !== undefined) {
		// One wakeup per write, and one more for the EOF at the end.
		ctx.report.check(byWaker.length >= (MAJORITY_PERCENT / 100) * writes && byWaker.length <= writes + 2,
				 `${name}: ${byWaker.length} Off-CPU markers woken by ${wakerName} for its ${writes} writes ` +
					 `(expected ${Math.ceil(writes * MAJORITY_PERCENT / 100)}–${writes + 2})`);
	}
}

// Kernel functions belong to "[kernel.kallsyms]" (or a "[module]").
function isKernelLibrary(f) {
	const lib = f.library ?? (f.nameWithLibrary || '').split('!')[0];
	return /^\[(kernel|module)/.test(lib || '');
}

// `thread functions --search TERM` (a substring), with sample filters.
function searchFunctions(cli, handle, term, filters = []) {
	return cli.query('thread', 'functions', '--thread', handle, '--search', term, '--limit', '0', ...filters).functions || [];
}

// A function by its bare name.
function findFunction(cli, handle, name) {
	return searchFunctions(cli, handle, name).find((f) => bareFunctionName(f.name) === name) || null;
}

// `thread markers --group-by name,KEY`: the NAME group's count, its sub-groups
// by KEY (Map value -> group) and its top markers.
function groupedMarkers(cli, handle, key, name, topN = 1, extra = []) {
	const by = key === 'name' ? 'name' : `name,${key}`;
	const r = cli.query('thread', 'markers', '--thread', handle, '--group-by', by, '--top-n', String(topN), ...extra);
	const g = (r.customGroups || []).find((x) => x.groupName === name);
	return {
		count: g?.count || 0,
		sub: new Map((g?.subGroups || []).map((s) => [s.groupName, s])),
		top: g?.topMarkers || [],
	};
}

// "cpu-share sleeper90 5 15" -> { name, args }; throws on unknown names or
// a wrong number of arguments.
export function parseExpectation(text) {
	const [name, ...args] = text.trim().split(/\s+/);
	const e = EXPECTATIONS[name];
	if (!e)
		throw new Error(`unknown expectation ${JSON.stringify(name)} (known: ${Object.keys(EXPECTATIONS).join(', ')})`);
	const want = e.args ? e.args.split(' ').length : 0;
	if (args.length !== want)
		throw new Error(`expectation ${name} takes ${want} arguments (${e.args || 'none'}), got ${args.length}`);
	return { name, args, spec: e };
}

// The context the expectations share: thread lookup by name within PID,
// their samples, CLI handles, and counts the JSON side leaves for the CLI side.
export function makeSchedContext(report, profile, { pid, tids = {}, truth = null }) {
	const toMs = cpuDeltaToMs(profile.meta.sampleUnits?.threadCPUDelta) ?? 0;
	const cache = new Map();
	const ctx = {
		report,
		profile,
		pid: String(pid),
		truth,
		intervalMs: profile.meta.interval,
		handles: null,
		threads: new Map(),
		offCpuByWaker: new Map(),
		runnableByWaker: new Map(),
		wakeupsOf: new Map(),
		wokenBy: new Map(),
		thread: (name) => ctx.threads.get(name),
		samplesOfThread: (t) => {
			if (!cache.has(t))
				cache.set(t, schedSamples(profile, t, toMs));
			return cache.get(t);
		},
		samples: (name) => ctx.samplesOfThread(ctx.thread(name)),
		handleOf: (t) => ctx.handles?.get(profile.threads.indexOf(t)),
		handle: (name) => ctx.handleOf(ctx.thread(name)),
		tids,
	};
	return ctx;
}

// Finds every thread the expectations name; returns false for an expectation
// whose threads are missing (already reported as a failure).
export function resolveThreads(ctx, expectations) {
	const names = new Set();
	for (const e of expectations)
		for (const i of e.spec.threads)
			names.add(e.args[i]);
	for (const name of names) {
		const found = ctx.profile.threadsOf(ctx.pid).filter((t) => t.name === name);
		if (ctx.report.check(found.length === 1, `thread "${name}" appears once under pid ${ctx.pid} (found ${found.length})`)) {
			ctx.threads.set(name, found[0]);
			const tid = ctx.tids[name];
			if (tid !== undefined)
				ctx.report.check(String(found[0].tid) === String(tid), `thread "${name}" has tid ${tid} (found ${found[0].tid})`);
		}
	}
	return (e) => e.spec.threads.every((i) => ctx.threads.has(e.args[i]));
}

// The scheduler scenario of check.mjs: the contract, each expectation on the
// file, then (with the counts the file gave) each through profiler-cli.
// expectations come from parseExpectation; cli: false skips the loader.
export function checkSched(report, profile, { pid, tids, truth, schedMinMs, offCpuSamples = true, expectations,
					      cli = true }) {
	checkSchedContract(report, profile, { pid, schedMinMs, offCpuSamples });
	report.section(`expectations (pid ${pid})`);
	const ctx = makeSchedContext(report, profile, { pid, tids, truth });
	const usable = expectations.filter(resolveThreads(ctx, expectations));
	for (const e of usable) {
		if (e.spec.json)
			e.spec.json(ctx, ...e.args);
	}
	if (!cli)
		return;
	checkWithProfilerCli(report, profile, (session, handles) => {
		ctx.handles = handles;
		for (const e of usable) {
			if (e.spec.cli)
				e.spec.cli(ctx, session, ...e.args);
		}
	});
}
