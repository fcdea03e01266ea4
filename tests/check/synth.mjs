// SPDX-License-Identifier: BSD-2-Clause
//
// Hand-made profiles for the checkers' self-test: a builder that writes v66
// tables the way the bpfprof contract describes them, and the two workload
// scenarios with knobs that break one expectation at a time. A checker that
// passes the good profile and fails each broken one can fail for real.

import { burnerTruthText } from './burner_truth.mjs';

export const CAT = { OTHER: 0, KERNEL: 1, USER: 2, IDLE: 3 };
const KERNEL_LIB = '[kernel.kallsyms]';

// Deterministic pseudo-random numbers (mulberry32), so tests are repeatable.
export function rng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

// Give each schema a colour, as the emitter does (colorField "color"), and
// every marker of that schema its colour in its data.
export function paintMarkers(json, colors) {
	for (const s of json.meta.markerSchema) {
		s.colorField = 'color';
		s.fields = [...(s.fields || []), { key: 'color', label: 'Color', format: 'string', hidden: true }];
	}
	for (const t of json.threads)
		for (const d of t.markers.data)
			if (d && d.type)
				d.color = colors[d.type] || 'grey';
	return json;
}

export class ProfileBuilder {
	// firstCpuZero: write 0 as a thread's first threadCPUDelta (the CPU used
	// before the recording is unknown), as without scheduler capture.
	constructor({ startTime = Date.now() - 60000, interval = 2, firstCpuZero = true } = {}) {
		this.startTime = startTime;
		this.interval = interval;
		this.firstCpuZero = firstCpuZero;
		this.strings = new Map();
		this.funcs = new Map();
		this.frames = new Map();
		this.stacks = new Map();
		this.resources = new Map();
		this.t = { strings: [], func: [], res: [], frameFunc: [], frameCat: [], stackFrame: [], stackPrefix: [] };
		this.threads = [];
	}

	str(s) {
		if (!this.strings.has(s)) {
			this.strings.set(s, this.t.strings.length);
			this.t.strings.push(s);
		}
		return this.strings.get(s);
	}

	resource(lib) {
		if (lib === null)
			return -1;
		if (!this.resources.has(lib)) {
			this.resources.set(lib, this.t.res.length);
			this.t.res.push(this.str(lib));
		}
		return this.resources.get(lib);
	}

	func(name, lib) {
		const key = `${name}\0${lib}`;
		if (!this.funcs.has(key)) {
			this.funcs.set(key, this.t.func.length);
			this.t.func.push({ name: this.str(name), resource: this.resource(lib) });
		}
		return this.funcs.get(key);
	}

	frame(name, cat, lib) {
		const func = this.func(name, lib);
		const key = `${func}\0${cat}`;
		if (!this.frames.has(key)) {
			this.frames.set(key, this.t.frameFunc.length);
			this.t.frameFunc.push(func);
			this.t.frameCat.push(cat);
		}
		return this.frames.get(key);
	}

	// frames: [name, category, lib] root first. Returns the leaf stack index.
	stack(frames) {
		let prefix = null;
		for (const [name, cat, lib] of frames) {
			const frame = this.frame(name, cat, lib === undefined ? (cat === CAT.KERNEL ? KERNEL_LIB : null) : lib);
			const key = `${prefix}\0${frame}`;
			if (!this.stacks.has(key)) {
				const i = this.t.stackFrame.length;
				this.stacks.set(key, i);
				this.t.stackFrame.push(frame);
				this.t.stackPrefix.push(prefix === null ? 0 : i - prefix);
			}
			prefix = this.stacks.get(key);
		}
		return prefix;
	}

	thread({ pid, tid, name, isMainThread, processName, processType = 'user' }) {
		const t = { pid: String(pid), tid, name, isMainThread, processName, processType, samples: [], markers: [] };
		this.threads.push(t);
		return {
			// time in ms; cpu in µs since the previous sample of this thread.
			sample: (frames, time, cpu) => {
				t.samples.push({ stack: frames === null ? null : this.stack(frames), time, cpu });
			},
			// phase 0 (instant): end is ignored; data as written to the file.
			marker: (name, start, end, phase, category, data) => {
				t.markers.push({ name: this.str(name), start, end: phase === 0 ? null : end, phase, category, data });
			},
		};
	}

	build() {
		const n = (a) => a.length;
		const nulls = (k) => new Array(k).fill(null);
		const t = this.t;
		const threads = this.threads.map((th) => {
			const s = [...th.samples].sort((a, b) => a.time - b.time);
			return {
				name: th.name,
				isMainThread: th.isMainThread,
				processType: th.processType,
				processName: th.processName,
				processStartupTime: 0,
				processShutdownTime: null,
				registerTime: 0,
				unregisterTime: null,
				pausedRanges: [],
				pid: th.pid,
				tid: th.tid,
				samples: {
					length: s.length,
					stack: s.map((x) => x.stack),
					timeDeltas: s.map((x, i) => (i === 0 ? x.time : x.time - s[i - 1].time)),
					weight: null,
					weightType: 'samples',
					threadCPUDelta: s.map((x, i) => (i === 0 && this.firstCpuZero ? 0 : x.cpu)),
				},
				markers: {
					length: th.markers.length,
					name: th.markers.map((m) => m.name),
					startTime: th.markers.map((m) => m.start),
					endTime: th.markers.map((m) => m.end),
					phase: th.markers.map((m) => m.phase),
					category: th.markers.map((m) => m.category),
					data: th.markers.map((m) => m.data),
				},
			};
		});
		const nf = n(t.frameFunc);
		return {
			meta: {
				interval: this.interval,
				startTime: this.startTime,
				processType: 0,
				product: 'bpfprof',
				stackwalk: 1,
				version: 24,
				preprocessedProfileVersion: 66,
				symbolicated: true,
				usesOnlyOneStackType: true,
				sourceCodeIsNotOnSearchfox: true,
				platform: 'X11',
				sampleUnits: { time: 'ms', eventDelay: 'ms', threadCPUDelta: '\u00b5s' },
				categories: [
					{ name: 'Other', color: 'grey', subcategories: ['Other'] },
					{ name: 'Kernel', color: 'orange', subcategories: ['Other'] },
					{ name: 'User', color: 'yellow', subcategories: ['Other'] },
					{ name: 'Idle', color: 'transparent', subcategories: ['Other'] },
				],
				markerSchema: [],
			},
			libs: [],
			pages: [],
			counters: [],
			profilerOverhead: [],
			shared: {
				stringArray: t.strings,
				sources: { length: 0, id: [], filename: [], startLine: [], startColumn: [], sourceMapURL: [], content: [] },
				sourceLocationTable: { length: 0, source: [], line: [], column: [] },
				resourceTable: {
					length: n(t.res),
					lib: nulls(n(t.res)),
					name: t.res,
					host: nulls(n(t.res)),
					type: new Array(n(t.res)).fill(1),
				},
				nativeSymbols: { length: 0, libIndex: [], address: [], name: [], functionSize: [] },
				funcTable: {
					length: n(t.func),
					name: t.func.map((f) => f.name),
					isJS: new Array(n(t.func)).fill(false),
					relevantForJS: new Array(n(t.func)).fill(false),
					resource: t.func.map((f) => f.resource),
					source: nulls(n(t.func)),
					lineNumber: nulls(n(t.func)),
					columnNumber: nulls(n(t.func)),
					originalLocation: nulls(n(t.func)),
				},
				frameTable: {
					length: nf,
					address: new Array(nf).fill(-1),
					inlineDepth: new Array(nf).fill(0),
					category: t.frameCat,
					subcategory: new Array(nf).fill(0),
					func: t.frameFunc,
					nativeSymbol: nulls(nf),
					innerWindowID: new Array(nf).fill(0),
					line: nulls(nf),
					column: nulls(nf),
					originalLocation: nulls(nf),
				},
				stackTable: { length: n(t.stackFrame), frame: t.stackFrame, prefixOffset: t.stackPrefix },
			},
			threads,
		};
	}
}

const U = (name, lib = 'burner') => [name, CAT.USER, lib];
const K = (name) => [name, CAT.KERNEL];
const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];

const BURNER_THREADS = ['alpha', 'beta', 'sysc'];
const BURNER_MONO_BASE = 5e12; // CLOCK_MONOTONIC ns at the synthetic profile's start

export const BURNER_DEFAULTS = {
	pid: 4242,
	tids: { alpha: 4244, beta: 4245, sysc: 4246 },
	mainName: 'bpfprof-burner',
	processName: 'bpfprof-burner',
	mainThreads: 1,
	durationS: 3,
	periodMs: 2, // -F 500
	heavyShare: 0.75,
	alphaCpuShare: 0.66, // fraction of wall time each busy thread runs
	alphaParent: 'alpha_main',
	betaTop: 'beta_spin',
	betaTopShare: 0.98,
	betaOffCpuShare: 0, // preempted samples with an Idle leaf
	betaOffCpuLeaf: 'Preempted', // its name ("off-CPU: preempted" as bpfprof writes it)
	syscKernelShare: 0.7,
	syscKernelNames: ['entry_SYSCALL_64', 'do_syscall_64', 'ksys_read', 'vfs_read', 'read_iter_zero'],
	userAboveSyscLoop: false,
	kernelBelowUser: false,
	omitThread: null,
	heavyCategory: CAT.USER,
	heavyLib: 'burner',
	otherProcesses: 0,
	kworkerType: 'kernel thread',
	cpuScale: 1, // multiplies threadCPUDelta of the busy threads
	truthScale: 1, // multiplies the CPU time the burner reports it used
	sampleSpanS: null, // defaults to durationS
};

// A profile of the burner workload as bpfprof should record it.
export function burnerProfile(overrides = {}) {
	const o = { ...BURNER_DEFAULTS, ...overrides };
	const b = new ProfileBuilder({ interval: o.periodMs });
	const random = rng(7);
	const span = 1000 * (o.sampleSpanS ?? o.durationS);
	// What each busy thread really ran (ns) by time (ms): the burner's truth lines.
	const ran = {};
	const run = (name, t) => {
		ran[name] ??= [];
		const prev = ran[name].at(-1)?.[1] ?? 0;
		ran[name].push([t, prev + 1e6 * o.periodMs * o.truthScale]);
	};
	const busyTimes = () => {
		// A busy thread on a shared CPU is sampled whenever it runs.
		const times = [];
		for (let t = 1; t < span; t += o.periodMs) {
			if (random() < o.alphaCpuShare)
				times.push(t);
		}
		return times;
	};
	// cpu-clock sampling: each sample stands for one period of CPU time.
	const cpuUs = 1000 * o.periodMs * o.cpuScale;
	const worker = (name) => [LIBC('clone3'), LIBC('start_thread'), U('worker_start'), U(name)];

	for (let m = 0; m < Math.max(1, o.mainThreads); m++) {
		const main = b.thread({ pid: o.pid, tid: m === 0 ? o.pid : o.pid + 10 + m, name: o.mainName,
					isMainThread: m < o.mainThreads, processName: o.processName });
		for (let t = 0; t < span; t += 500)
			main.sample([LIBC('__libc_start_main'), U('main'), LIBC('clock_nanosleep'), ['Sleeping', CAT.IDLE, null]], t, 0);
	}
	if (o.omitThread !== 'alpha') {
		const alpha = b.thread({ pid: o.pid, tid: o.tids.alpha, name: 'alpha', isMainThread: false, processName: o.processName });
		for (const t of busyTimes()) {
			const leaf = random() < o.heavyShare ? 'alpha_heavy' : 'alpha_light';
			const stack = [LIBC('start_thread'), U('worker_start'), U(o.alphaParent),
				       leaf === 'alpha_heavy' ? [leaf, o.heavyCategory, o.heavyLib] : U(leaf)];
			alpha.sample(stack, t, cpuUs);
			run('alpha', t);
		}
	}
	if (o.omitThread !== 'beta') {
		const beta = b.thread({ pid: o.pid, tid: o.tids.beta, name: 'beta', isMainThread: false, processName: o.processName });
		for (const t of busyTimes()) {
			if (random() < o.betaOffCpuShare) {
				beta.sample([...worker('beta_main'), U('beta_spin'), K('asm_sysvec_apic_timer_interrupt'),
					     K('__schedule'), [o.betaOffCpuLeaf, CAT.IDLE, null]], t, 0);
				continue;
			}
			const top = random() < o.betaTopShare;
			beta.sample(top ? [...worker('beta_main'), U(o.betaTop)] : worker('beta_main'), t, cpuUs);
			run('beta', t);
		}
	}
	if (o.omitThread !== 'sysc') {
		const sysc = b.thread({ pid: o.pid, tid: o.tids.sysc, name: 'sysc', isMainThread: false, processName: o.processName });
		for (const t of busyTimes()) {
			let stack = [...worker('sysc_main'), U('sysc_loop')];
			if (random() < o.syscKernelShare) {
				const names = o.syscKernelNames;
				const depth = 1 + Math.floor(random() * names.length);
				stack = stack.concat(names.slice(0, depth).map(K));
				if (o.userAboveSyscLoop)
					stack.push(U('memset', 'libc.so.6'));
			}
			if (o.kernelBelowUser)
				stack = [K('ret_from_fork'), ...stack];
			sysc.sample(stack, t, cpuUs);
			run('sysc', t);
		}
	}
	for (let i = 0; i < o.otherProcesses; i++) {
		const pid = 100 + i;
		const th = b.thread({ pid, tid: pid, name: `proc${i}`, isMainThread: true, processName: `proc${i}` });
		for (let t = 3; t < span; t += 97)
			th.sample([U('main', `proc${i}`), U('work', `proc${i}`)], t, 200);
		const kt = b.thread({ pid: 2 + i * 1000, tid: 2 + i * 1000, name: `kworker/${i}`, isMainThread: true,
				      processName: `kworker/${i}`, processType: o.kworkerType });
		kt.sample([K('ret_from_fork'), K('worker_thread')], 5, 100);
	}
	if (o.otherProcesses) {
		const self = b.thread({ pid: 900, tid: 900, name: 'bpfprof', isMainThread: true, processName: 'bpfprof',
					processType: 'profiler (bpfprof)' });
		self.sample([U('main', 'bpfprof'), U('ring_buffer__poll', 'libbpf.so.1')], 7, 300);
	}
	const json = b.build();
	json.meta.startTimeAsClockMonotonicNanosecondsSinceBoot = BURNER_MONO_BASE;
	// A sample's delta is the CPU time up to it: the thread ran that by then.
	const cpuAt = (name, t) => (ran[name] ?? []).filter(([ts]) => ts <= t).at(-1)?.[1] ?? 0;
	// Not part of the file: what the burner would have printed.
	Object.defineProperty(json, 'burnerTruth', {
		value: burnerTruthText(BURNER_THREADS, cpuAt, { baseNs: BURNER_MONO_BASE, spanMs: span }),
	});
	return json;
}

export const FORKER_DEFAULTS = {
	parentPid: 5000,
	childPid: 5001,
	parentName: 'forker',
	childName: 'bpfprof-child',
	childTop: 'child_burn',
	samples: 700,
	omitChild: false,
	extraPid: false,
	truthScale: 1, // multiplies the CPU time the forker says each process used
};

// What the forker prints at its end for forkerProfile(overrides): 2 ms of CPU per sample.
export function forkerTruthText(overrides = {}) {
	const o = { ...FORKER_DEFAULTS, ...overrides };
	const ms = (2 * o.samples * o.truthScale).toFixed(3);
	return `forker parent ${o.parentPid} child ${o.childPid}\nforker: truth parent_cpu_ms ${ms} child_cpu_ms ${ms}\n`;
}

export function forkerProfile(overrides = {}) {
	const o = { ...FORKER_DEFAULTS, ...overrides };
	const b = new ProfileBuilder();
	const lib = (name) => U(name, 'forker');
	const parent = b.thread({ pid: o.parentPid, tid: o.parentPid, name: o.parentName, isMainThread: true,
				  processName: o.parentName });
	for (let i = 0; i < o.samples; i++)
		parent.sample([LIBC('__libc_start_main'), lib('main'), lib('burn_for'), lib('parent_burn')], 2 * i + 1, 2000);
	if (!o.omitChild) {
		const child = b.thread({ pid: o.childPid, tid: o.childPid, name: o.childName, isMainThread: true,
					 processName: o.childName });
		for (let i = 0; i < o.samples; i++)
			child.sample([LIBC('__libc_start_main'), lib('main'), lib('burn_for'), lib(o.childTop)], 2 * i + 2, 2000);
	}
	if (o.extraPid) {
		const other = b.thread({ pid: 77, tid: 77, name: 'sshd', isMainThread: true, processName: 'sshd' });
		other.sample([U('main', 'sshd')], 10, 100);
	}
	return b.build();
}
