// SPDX-License-Identifier: BSD-2-Clause
//
// Reading a processed profile (v66) and answering questions about it: which
// threads a process has, which function each sample was in, which frames are
// kernel or user code. Everything here works on the file as written, before
// the front-end upgrades it, so that it judges bpfprof's own output.

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export const GZIP_MAGIC = [0x1f, 0x8b];

// Category indexes fixed by the bpfprof output contract.
export const CATEGORY_OTHER = 0;
export const CATEGORY_KERNEL = 1;
export const CATEGORY_USER = 2;
// Python functions (issue 26): user code too, run by the interpreter.
export const CATEGORY_PYTHON = 4;
export const CATEGORY_JAVA = 5;
export const CATEGORY_JS = 6;
// PHP functions (issue 40): the Zend engine's frames.
export const CATEGORY_PHP = 7;
// Ruby methods and blocks (issue 40): CRuby's control frames.
export const CATEGORY_RUBY = 8;

// Reads FILE, gunzips it when it starts with the gzip magic, decodes it as
// strict UTF-8 and parses it. Throws an Error that says which step failed.
export function readProfileFile(path) {
	const raw = readFileSync(path);
	const gzipped = raw.length >= 2 && raw[0] === GZIP_MAGIC[0] && raw[1] === GZIP_MAGIC[1];
	let bytes = raw;
	if (gzipped) {
		try {
			bytes = gunzipSync(raw);
		} catch (e) {
			throw new Error(`${path}: gzip data is corrupt: ${e.message}`);
		}
	}
	let text;
	try {
		text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
	} catch (e) {
		throw new Error(`${path}: not valid UTF-8`);
	}
	let json;
	try {
		json = JSON.parse(text);
	} catch (e) {
		// NaN, Infinity and raw control characters in strings all end here.
		throw new Error(`${path}: not valid JSON: ${e.message}`);
	}
	return { path, gzipped, fileBytes: raw.length, jsonBytes: bytes.length, json };
}

// Expands samples.timeDeltas (or samples.time) to absolute ms.
export function sampleTimes(samples) {
	if (Array.isArray(samples.time))
		return samples.time;
	const out = new Array(samples.timeDeltas.length);
	let t = 0;
	for (let i = 0; i < out.length; i++) {
		t += samples.timeDeltas[i];
		out[i] = t;
	}
	return out;
}

// The process id of a profile pid: "PID" or, after an exec, "PID.N".
export const basePid = (pid) => String(pid).split('.')[0];

export class Profile {
	constructor(json) {
		this.json = json;
		this.meta = json.meta;
		this.shared = json.shared;
		this.threads = json.threads;
		this._stackPaths = new Map();
	}

	static fromFile(path) {
		const file = readProfileFile(path);
		const profile = new Profile(file.json);
		profile.file = file;
		return profile;
	}

	// Every meta.extra entry ({ label, format, value }) of every section.
	extraEntries() {
		return (this.meta.extra || []).flatMap((section) => section.entries || []);
	}

	// The value of the meta.extra entry with this label, or undefined.
	extraValue(label) {
		return this.extraEntries().find((e) => e.label === label)?.value;
	}

	string(index) {
		return this.shared.stringArray[index];
	}

	categoryName(index) {
		const c = this.meta.categories?.[index];
		return c ? c.name : `category ${index}`;
	}

	// Map pid (string) -> threads of that process, in file order.
	threadsByPid() {
		const map = new Map();
		for (const t of this.threads) {
			if (!map.has(t.pid))
				map.set(t.pid, []);
			map.get(t.pid).push(t);
		}
		return map;
	}

	pids() {
		return [...this.threadsByPid().keys()];
	}

	threadsOf(pid) {
		return this.threads.filter((t) => t.pid === String(pid));
	}

	// Threads of every image the process ran: an exec starts a new
	// generation "PID.N" (e.g. a wrapper shell that execs the workload).
	threadsOfProcess(pid) {
		return this.threads.filter((t) => basePid(t.pid) === String(pid));
	}

	mainThreadsOf(pid) {
		return this.threadsOf(pid).filter((t) => t.isMainThread === true);
	}

	funcName(func) {
		return this.string(this.shared.funcTable.name[func]);
	}

	frameFunc(frame) {
		return this.shared.frameTable.func[frame];
	}

	frameFuncName(frame) {
		return this.funcName(this.frameFunc(frame));
	}

	frameCategory(frame) {
		return this.shared.frameTable.category[frame];
	}

	resourceNameOfFunc(func) {
		const r = this.shared.funcTable.resource[func];
		if (r === null || r === undefined || r < 0)
			return null;
		return this.string(this.shared.resourceTable.name[r]);
	}

	// Frames of a stack node from the root (outermost caller) to the leaf.
	stackPath(stack) {
		let path = this._stackPaths.get(stack);
		if (path)
			return path;
		const st = this.shared.stackTable;
		const rev = [];
		// Bounded walk: a malformed prefixOffset must not loop forever.
		for (let s = stack, n = 0; n <= st.length; n++) {
			rev.push(st.frame[s]);
			const off = st.prefixOffset[s];
			if (off === 0)
				break;
			s -= off;
			if (!(s >= 0))
				break;
		}
		path = rev.reverse();
		this._stackPaths.set(stack, path);
		return path;
	}

	// Samples of a thread as { index, time, stack, path, cpuDelta }, where path
	// holds frame indexes root first; samples with a null stack have path [].
	// `weight`: how many samples the row stands for (bpfprof's off-CPU rows hold
	// runs of them, one per interval, since issue 37); 1 without a weight column.
	samplesOf(thread) {
		const s = thread.samples;
		const times = sampleTimes(s);
		const weights = Array.isArray(s.weight) ? s.weight : null;
		const out = [];
		for (let i = 0; i < s.length; i++) {
			const stack = s.stack[i];
			out.push({
				index: i,
				time: times[i],
				stack,
				path: stack === null ? [] : this.stackPath(stack),
				cpuDelta: s.threadCPUDelta ? s.threadCPUDelta[i] : null,
				weight: weights ? weights[i] : 1,
			});
		}
		return out;
	}

	leafCategory(sample) {
		const p = sample.path;
		return p.length ? this.frameCategory(p[p.length - 1]) : null;
	}

	// On-CPU samples: the leaf is kernel or user code. Off-CPU samples (an Idle
	// or Off-CPU category at the leaf, or no stack) describe waiting, and a
	// self-time histogram of CPU work must leave them out.
	isOnCpu(sample) {
		const c = this.leafCategory(sample);
		return c === CATEGORY_KERNEL || c === CATEGORY_USER || c === CATEGORY_PYTHON ||
		       c === CATEGORY_JAVA || c === CATEGORY_JS || c === CATEGORY_PHP || c === CATEGORY_RUBY;
	}

	leafFuncName(sample) {
		const p = sample.path;
		return p.length ? this.frameFuncName(p[p.length - 1]) : null;
	}

	// Map function name -> number of samples whose leaf frame is in it.
	selfHistogram(samples) {
		const hist = new Map();
		for (const s of samples) {
			const name = this.leafFuncName(s);
			if (name !== null)
				hist.set(name, (hist.get(name) || 0) + 1);
		}
		return hist;
	}

	inclusiveFuncNames(sample) {
		return new Set(sample.path.map((f) => this.frameFuncName(f)));
	}

	// Depth (from the root) of the innermost frame whose function is NAME, or -1.
	innermostDepthOf(sample, name) {
		for (let d = sample.path.length - 1; d >= 0; d--) {
			if (this.frameFuncName(sample.path[d]) === name)
				return d;
		}
		return -1;
	}

	totalSamples() {
		return this.threads.reduce((n, t) => n + (t.samples?.length || 0), 0);
	}
}

// Sorted [name, count] pairs, most frequent first.
export function sortedHistogram(hist) {
	return [...hist.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

export function percent(part, whole) {
	return whole > 0 ? (100 * part) / whole : 0;
}
