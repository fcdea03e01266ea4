// SPDX-License-Identifier: BSD-2-Clause
//
// Hand-made profiles of the scheduler workloads (tests/workloads/sleeper.c and
// pipepair.c) written the way the scheduler contract describes bpfprof's
// output: exact threadCPUDelta, off-CPU samples with an "off-CPU: <reason>"
// leaf in the Off-CPU category, and Off-CPU / Runnable / Wakeup / Scheduling
// markers. Each knob breaks one expectation, so the self-test can show that
// every scheduler check fails when what it checks is wrong.

import { CAT as BASE_CAT, ProfileBuilder, paintMarkers } from './synth.mjs';

export const CAT = { ...BASE_CAT, OFFCPU: 3 };
delete CAT.IDLE;

const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];
const K = (name) => [name, CAT.KERNEL];
const OFF = (name, category = CAT.OFFCPU) => [name, category, null];

const SYSCALL_ENTRY = ['entry_SYSCALL_64_after_hwframe', 'do_syscall_64'];
export const NANOSLEEP_KERNEL = [...SYSCALL_ENTRY, '__x64_sys_clock_nanosleep', 'common_nsleep', 'hrtimer_nanosleep',
				 'do_nanosleep', 'schedule', '__schedule'];
export const PIPE_READ_KERNEL = [...SYSCALL_ENTRY, 'ksys_read', 'vfs_read', 'pipe_read', 'schedule', '__schedule'];

// The contract's marker schemas, as the emitter is to write them.
function field(key, label, format) {
	return { key, label, format };
}

export const SCHED_MARKER_SCHEMAS = [
	{
		name: 'bpfprof.OffCPU',
		display: ['marker-chart', 'marker-table'],
		fields: [field('reason', 'Reason', 'string'), field('waker', 'Woken by', 'string'),
			 field('wakerTid', 'Waker TID', 'tid'), field('wakerPid', 'Waker PID', 'pid'),
			 field('preemptedBy', 'Preempted by', 'string')],
	},
	{
		name: 'bpfprof.Runnable',
		display: ['marker-chart', 'marker-table'],
		fields: [field('reason', 'Reason', 'string'), field('waker', 'Woken by', 'string'),
			 field('wakerTid', 'Waker TID', 'tid'), field('wakerPid', 'Waker PID', 'pid')],
	},
	{
		name: 'bpfprof.Wakeup',
		display: ['marker-chart', 'marker-table'],
		fields: [field('wakee', 'Woke', 'string'), field('wakeeTid', 'Wakee TID', 'tid'),
			 field('wakeePid', 'Wakee PID', 'pid')],
	},
	{
		name: 'bpfprof.SchedSummary',
		display: ['marker-table'],
		fields: [field('onCpu', 'On CPU', 'milliseconds'), field('voluntarySwitches', 'Voluntary switches', 'integer'),
			 field('preemptions', 'Preemptions', 'integer'), field('offCpuCount', 'Off-CPU intervals', 'integer'),
			 field('offCpuTime', 'Off-CPU time', 'milliseconds'),
			 field('hiddenOffCpuCount', 'Off-CPU under threshold', 'integer'),
			 field('hiddenOffCpuTime', 'Off-CPU time under threshold', 'milliseconds'),
			 field('runnableCount', 'Runnable waits', 'integer'),
			 field('runnableTime', 'Runnable time', 'milliseconds'),
			 field('hiddenRunnableCount', 'Runnable under threshold', 'integer'),
			 field('hiddenRunnableTime', 'Runnable time under threshold', 'milliseconds'),
			 field('wakeupsSent', 'Wakeups sent', 'integer'), field('thresholdMs', 'Threshold', 'milliseconds')],
	},
];

// Turns a ProfileBuilder's output into a profile with the scheduler parts of
// the contract: category 3 is Off-CPU, the four marker schemas are declared.
function finish(json, o) {
	json.meta.categories[3] = { name: 'Off-CPU', color: o.offCpuColor ?? 'lightblue', subcategories: ['Other'] };
	json.meta.markerSchema = o.schemas === false ? [] : structuredClone(SCHED_MARKER_SCHEMAS);
	return paintMarkers(json, { 'bpfprof.OffCPU': 'blue', 'bpfprof.Runnable': 'orange', 'bpfprof.Wakeup': 'green' });
}

// On-CPU time (ms) in (a, c] of a thread that runs [k*period, k*period + run]
// for every k >= 0 with k*period < end.
function periodicCpu(a, c, period, run, end) {
	let sum = 0;
	const first = Math.max(0, Math.floor(a / period));
	for (let k = first; k * period < Math.min(c, end); k++) {
		const lo = Math.max(a, k * period);
		const hi = Math.min(c, k * period + run);
		if (hi > lo)
			sum += hi - lo;
	}
	return sum;
}

export const SLEEPER_DEFAULTS = {
	pid: 6000,
	tids: { sleeper90: 6001, busy100: 6002 },
	durationS: 2,
	periodMs: 10,
	intervalMs: 1,
	burnShare: 0.1, // sleeper90's on-CPU share in the profile
	busyShare: 1, // busy100's share in the profile
	truthScale: 1, // the workload's own CPU time = the profile's x this
	busyTruthShare: null, // busy100's own measured share (default busyShare)
	busyWaitReason: 'preempted', // why busy100 is off the CPU when busyShare < 1
	offCpuSamples: true,
	offCpuReason: 'sleeping',
	offCpuCategory: CAT.OFFCPU,
	offCpuColor: 'lightblue',
	burnFunc: 'sleeper_burn',
	waitFunc: 'sleeper_wait',
	sleepKernel: NANOSLEEP_KERNEL,
	fractionalCpu: false, // write non-integer µs
	cpuScale: 1, // multiplies every threadCPUDelta (beyond wall time when > 1)
	schemas: true,
	summaries: true,
	// sleeper90's sleeps as Off-CPU markers: 'timer' woke them (no thread),
	// or 'bystander': busy100, the thread the timer interrupt landed on, is
	// named and carries Wakeup markers (the attribution before issue 28).
	wakers: null,
};

// Returns { json, truth }: truth has the workload's "sleeper: truth" numbers.
export function sleeperProfile(overrides = {}) {
	const o = { ...SLEEPER_DEFAULTS, ...overrides };
	const b = new ProfileBuilder({ interval: o.intervalMs, firstCpuZero: false });
	const lib = (name) => [name, CAT.USER, 'sleeper'];
	const span = 1000 * o.durationS;
	const run = o.burnShare * o.periodMs;
	const us = (ms) => {
		const v = 1000 * ms * o.cpuScale;
		return o.fractionalCpu ? v + 0.25 : Math.round(v);
	};
	const worker = [LIBC('clone3'), LIBC('start_thread'), lib('worker_start')];
	const leaf = OFF(`off-CPU: ${o.offCpuReason}`, o.offCpuCategory);

	const main = b.thread({ pid: o.pid, tid: o.pid, name: 'sleeper', isMainThread: true, processName: 'sleeper' });
	const mainStack = [LIBC('__libc_start_main'), lib('main'), LIBC('clock_nanosleep'), ...NANOSLEEP_KERNEL.map(K), leaf];
	main.sample([LIBC('__libc_start_main'), lib('main'), lib('worker_start')], 0.2, us(0.2));
	for (let t = 0.3; t < span; t += o.intervalMs)
		main.sample(o.offCpuSamples ? mainStack : null, t, 0);

	// sleeper90: on-CPU samples during each burn, off-CPU samples every
	// interval while it sleeps; each carries the CPU since the previous one.
	const sl = b.thread({ pid: o.pid, tid: o.tids.sleeper90, name: 'sleeper90', isMainThread: false, processName: 'sleeper' });
	const burnStack = [...worker, lib('sleeper_main'), lib(o.burnFunc)];
	const waitStack = [...worker, lib('sleeper_main'), lib(o.waitFunc), ...o.sleepKernel.map(K), leaf];
	let prev = 0;
	let periods = 0;
	for (let k = 0; k * o.periodMs < span; k++) {
		const t0 = k * o.periodMs;
		periods++;
		const times = [];
		for (let t = t0 + 0.5 * o.intervalMs; t < t0 + run; t += o.intervalMs)
			times.push([t, true]);
		if (o.offCpuSamples) {
			for (let t = t0 + run; t < Math.min(t0 + o.periodMs, span); t += o.intervalMs)
				times.push([t, false]);
		}
		for (const [t, on] of times) {
			sl.sample(on ? burnStack : waitStack, t, us(periodicCpu(prev, t, o.periodMs, run, span)));
			prev = t;
		}
	}
	const slCpu = periodicCpu(0, span, o.periodMs, run, span);

	// busy100 runs busyShare of every interval; the rest it waits preempted
	// (busyWaitReason), each waited interval one off-CPU sample.
	const busy = b.thread({ pid: o.pid, tid: o.tids.busy100, name: 'busy100', isMainThread: false, processName: 'sleeper' });
	const spinStack = [...worker, lib('busy_main'), lib('busy_spin')];
	const preempted = [...spinStack, K('asm_sysvec_apic_timer_interrupt'), K('__schedule'), OFF(`off-CPU: ${o.busyWaitReason}`)];
	let owed = 0;
	let pending = 0;
	for (let t = 0.5; t < span; t += o.intervalMs) {
		owed += 1 - o.busyShare;
		pending += o.intervalMs * o.busyShare;
		if (owed >= 1 && o.offCpuSamples) {
			owed -= 1;
			busy.sample(preempted, t, us(pending));
		} else {
			busy.sample(spinStack, t, us(pending));
		}
		pending = 0;
	}
	const busyTruth = o.busyTruthShare ?? o.busyShare;

	if (o.summaries) {
		// A threshold above sleeper90's 9 ms sleeps: only main's long sleep is a
		// marker, unless its sleeps are asked for (wakers).
		const threshold = o.wakers ? 1 : o.periodMs;
		let wakeups = 0;
		for (let k = 0; o.wakers && (k + 1) * o.periodMs <= span; k++) {
			const end = (k + 1) * o.periodMs;
			const byBusy = { waker: `busy100 (${o.tids.busy100})`, wakerTid: o.tids.busy100, wakerPid: String(o.pid) };
			sl.marker('Off-CPU', k * o.periodMs + run, end, 1, CAT.OFFCPU, { type: 'bpfprof.OffCPU', reason: 'sleeping',
				...(o.wakers === 'bystander' ? byBusy : { waker: 'timer' }) });
			if (o.wakers === 'bystander') {
				busy.marker('Wakeup', end, null, 0, CAT.OFFCPU, { type: 'bpfprof.Wakeup',
					wakee: `sleeper90 (${o.tids.sleeper90})`, wakeeTid: o.tids.sleeper90, wakeePid: String(o.pid) });
				wakeups++;
			}
		}
		main.marker('Off-CPU', 0.3, span, 1, CAT.OFFCPU, { type: 'bpfprof.OffCPU', reason: 'sleeping',
			waker: 'swapper/0 (0)', wakerTid: 0, wakerPid: '0', cause: { stack: b.stack(mainStack.slice(0, -1)) } });
		const summary = (th, onCpu, off, offTime, hiddenOff, run, wakeupsSent = 0) =>
			th.marker('Scheduling', 0, span, 1, CAT.OFFCPU, {
				type: 'bpfprof.SchedSummary', onCpu, voluntarySwitches: off, preemptions: 0, offCpuCount: off,
				offCpuTime: offTime, hiddenOffCpuCount: hiddenOff, hiddenOffCpuTime: hiddenOff ? offTime : 0,
				runnableCount: run, runnableTime: run * 0.01, hiddenRunnableCount: run, hiddenRunnableTime: run * 0.01,
				wakeupsSent, thresholdMs: threshold,
			});
		summary(main, 0.2 * o.cpuScale, 1, span - 0.3, 0, 1);
		const slMarkers = o.wakers ? Math.floor(span / o.periodMs) : 0;
		summary(sl, slCpu * o.cpuScale, periods, span - slCpu, periods - slMarkers, periods);
		summary(busy, span * o.busyShare * o.cpuScale, 0, 0, 0, 0, wakeups);
	}
	const truth = {
		sleeper90: { tid: o.tids.sleeper90, cpuMs: slCpu * o.truthScale, loopCpuMs: slCpu * o.truthScale,
			     loopWallMs: span, periods, overruns: 0 },
		busy100: { tid: o.tids.busy100, cpuMs: span * busyTruth * o.truthScale,
			   loopCpuMs: span * busyTruth * o.truthScale, loopWallMs: span, periods: 0, overruns: 0 },
	};
	return { json: finish(b.build(), o), truth };
}

// The "sleeper: truth ..." lines the workload prints, for check.mjs --truth.
export function truthLines(truth) {
	return Object.entries(truth).map(([name, t]) =>
		`sleeper: truth ${name} tid ${t.tid} cpu_ms ${t.cpuMs.toFixed(3)} loop_cpu_ms ${t.loopCpuMs.toFixed(3)} ` +
		`loop_wall_ms ${t.loopWallMs.toFixed(3)} periods ${t.periods} overruns ${t.overruns}`).join('\n') + '\n';
}

export const PIPEPAIR_DEFAULTS = {
	pid: 7000,
	tids: { pwriter: 7001, preader: 7002 },
	durationS: 2,
	periodMs: 20,
	intervalMs: 1,
	schedMinMs: 0, // markers shorter than this are only counted
	readerReason: 'sleeping',
	readerWaker: null, // { name, tid, pid } of the reader's waker; default pwriter
	runnable: true,
	wakeups: true,
	summaries: true,
	summaryMiscount: 0, // added to preader's offCpuCount
	foldedWakeupsLost: false, // wakeups of waits under schedMinMs missing from the summaries
	offCpuSamples: true,
	readFunc: 'reader_wait',
	readKernel: PIPE_READ_KERNEL,
	markerStacks: true,
	schemas: true,
};

// Scheduling of pipepair: every period the writer wakes from its sleep, writes
// a byte and wakes the reader, which reads it and blocks again.
export function pipepairProfile(overrides = {}) {
	const o = { ...PIPEPAIR_DEFAULTS, ...overrides };
	const b = new ProfileBuilder({ interval: o.intervalMs, firstCpuZero: false });
	const lib = (name) => [name, CAT.USER, 'pipepair'];
	const span = 1000 * o.durationS;
	const W = o.periodMs;
	const pid = o.pid;
	const names = { [pid]: 'pipepair', [o.tids.pwriter]: 'pwriter', [o.tids.preader]: 'preader', 0: 'swapper/1' };
	const who = (tid) => `${names[tid]} (${tid})`;
	const waker = o.readerWaker ?? { name: 'pwriter', tid: o.tids.pwriter, pid };
	const worker = [LIBC('clone3'), LIBC('start_thread'), lib('worker_start')];
	const readerOut = [...worker, lib('reader_main'), lib(o.readFunc), ...o.readKernel.map(K)];
	const writerOut = [...worker, lib('writer_main'), LIBC('clock_nanosleep'), ...NANOSLEEP_KERNEL.map(K)];
	const mainOut = [LIBC('__libc_start_main'), lib('main'), LIBC('clock_nanosleep'), ...NANOSLEEP_KERNEL.map(K)];

	// Per thread: runs [on, off] and, for each off-CPU interval, its end and
	// the wakeup that ended it.
	const sim = (tid, outStack, reason, intervals) => {
		const th = b.thread({ pid, tid, name: names[tid], isMainThread: tid === pid, processName: 'pipepair' });
		const sum = { onCpu: 0, vol: 0, offCount: 0, offTime: 0, hidOff: 0, hidOffTime: 0, runCount: 0, runTime: 0,
			      hidRun: 0, hidRunTime: 0, wakeups: 0 };
		let pendingCpu = 0;
		for (const iv of intervals) {
			pendingCpu += iv.ranMs;
			sum.onCpu += iv.ranMs;
			sum.vol++;
			const dur = iv.in - iv.out;
			sum.offCount++;
			sum.offTime += dur;
			const stack = b.stack(outStack);
			if (dur >= o.schedMinMs) {
				const data = { type: 'bpfprof.OffCPU', reason, waker: who(iv.wakerTid), wakerTid: iv.wakerTid,
					       wakerPid: String(iv.wakerTid === 0 ? 0 : pid) };
				if (o.markerStacks)
					data.cause = { stack };
				th.marker('Off-CPU', iv.out, iv.in, 1, CAT.OFFCPU, data);
			} else {
				sum.hidOff++;
				sum.hidOffTime += dur;
			}
			const rdur = iv.in - iv.wake;
			if (o.foldedWakeupsLost && dur < o.schedMinMs)
				continue;
			sum.runCount++;
			sum.runTime += rdur;
			if (o.runnable && rdur >= o.schedMinMs) {
				th.marker('Runnable', iv.wake, iv.in, 1, CAT.OFFCPU, { type: 'bpfprof.Runnable', reason: 'woken',
					waker: who(iv.wakerTid), wakerTid: iv.wakerTid, wakerPid: String(iv.wakerTid === 0 ? 0 : pid) });
			} else {
				sum.hidRun++;
				sum.hidRunTime += rdur;
			}
			if (o.offCpuSamples) {
				const leaf = [...outStack, OFF(`off-CPU: ${reason}`)];
				for (let t = iv.out, first = true; t < iv.in; t += o.intervalMs, first = false) {
					th.sample(leaf, t, first ? Math.round(1000 * pendingCpu) : 0);
					pendingCpu = first ? 0 : pendingCpu;
				}
			}
		}
		return { th, sum };
	};

	const writerIv = [];
	const readerIv = [];
	for (let k = 1; k * W < span; k++) {
		const t = k * W;
		// The writer slept since its last run; a timer interrupt on an idle CPU woke it.
		writerIv.push({ out: k === 1 ? 0.05 : t - W + 0.02, in: t, wake: t - 0.005, wakerTid: 0, ranMs: 0.02 });
		readerIv.push({ out: k === 1 ? 0.06 : t - W + 0.05, in: t + 0.03, wake: t + 0.01, wakerTid: waker.tid,
				ranMs: 0.02 });
	}
	const writer = sim(o.tids.pwriter, writerOut, 'sleeping', writerIv);
	const reader = sim(o.tids.preader, readerOut, o.readerReason, readerIv);
	if (o.readerWaker)
		names[waker.tid] = waker.name;
	for (const iv of readerIv) {
		if (o.wakeups && waker.tid === o.tids.pwriter && iv.in - iv.out >= o.schedMinMs) {
			writer.th.marker('Wakeup', iv.wake, null, 0, CAT.OFFCPU, { type: 'bpfprof.Wakeup',
				wakee: who(o.tids.preader), wakeeTid: o.tids.preader, wakeePid: String(pid) });
		}
	}
	writer.sum.wakeups = readerIv.filter((iv) => !o.foldedWakeupsLost || iv.in - iv.out >= o.schedMinMs).length;
	const main = sim(pid, mainOut, 'sleeping', [{ out: 0.1, in: span - 0.01, wake: span - 0.02, wakerTid: 0, ranMs: 0.1 }]);

	if (o.summaries) {
		reader.sum.offCount += o.summaryMiscount;
		for (const { th, sum } of [main, writer, reader]) {
			th.marker('Scheduling', 0, span, 1, CAT.OFFCPU, {
				type: 'bpfprof.SchedSummary', onCpu: sum.onCpu, voluntarySwitches: sum.vol, preemptions: 0,
				offCpuCount: sum.offCount, offCpuTime: sum.offTime, hiddenOffCpuCount: sum.hidOff,
				hiddenOffCpuTime: sum.hidOffTime, runnableCount: sum.runCount, runnableTime: sum.runTime,
				hiddenRunnableCount: sum.hidRun, hiddenRunnableTime: sum.hidRunTime, wakeupsSent: sum.wakeups,
				thresholdMs: o.schedMinMs,
			});
		}
	}
	return finish(b.build(), o);
}
