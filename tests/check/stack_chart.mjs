// SPDX-License-Identifier: BSD-2-Clause
//
// The boxes the Firefox Profiler's stack chart draws for a thread, computed
// by the front-end's own code: getStackTimingByDepth (upstream
// src/profile-logic/stack-timing.ts) is not exported by the installed
// @firefox-devtools/profiler-cli, and no command prints the stack chart, so
// its text is taken out of the package's bundle and run on the thread's
// samples. Only the call node table around it is built here, the way the
// front-end builds it: a call node per distinct path of functions from the
// root (not of frames), numbered in depth-first order, so that a node's
// subtree is the range [node, subtreeRangeEnd). The boxes depend only on
// which call nodes are equal or ancestors of each other, never on the
// numbering within that rule. No transform is applied (the default view).

import { readFileSync } from 'node:fs';

import { findProfilerCli } from './profiler_cli.mjs';
import { sampleTimes } from './profile.mjs';
import { fmt } from './report.mjs';

// Text inside the function that nothing else in the bundle has: the shape
// of one depth's timing table.
const ANCHOR = 'sameWidthsStart:[],sameWidthsEnd:[],callNode:[]';

let frontEndStackTiming = null;

// The bundle is minified: the function is found by its anchor, from the
// `function` keyword before it to its matching brace (it holds no string
// or regular expression with a brace in it), and checked on a tiny input
// whose boxes are known.
export function loadStackTiming() {
	if (frontEndStackTiming)
		return frontEndStackTiming;
	const path = findProfilerCli();
	const src = readFileSync(path, 'utf8');
	const anchor = src.indexOf(ANCHOR);
	if (anchor < 0 || src.indexOf(ANCHOR, anchor + 1) >= 0)
		throw new Error(`${path}: the stack chart's getStackTimingByDepth is not found once (anchor ${ANCHOR}); ` +
				`the package changed: update stack_chart.mjs`);
	const start = src.lastIndexOf('function ', anchor);
	const open = src.indexOf('{', start);
	let depth = 0;
	let end = open;
	for (; end < src.length; end++) {
		if (src[end] === '{')
			depth++;
		else if (src[end] === '}' && --depth === 0)
			break;
	}
	const text = src.slice(start, end + 1);
	if (!/^function [\w$]+\([\w$]+,[\w$]+,[\w$]+,[\w$]+,[\w$]+\)\{/.test(text) ||
	    !text.includes('getCallNodeTable()') || !text.includes('sameWidthsIndexToTimestampMap'))
		throw new Error(`${path}: what surrounds ${ANCHOR} is not getStackTimingByDepth(samples, ` +
				`sampleCallNodes, callNodeInfo, maxDepthPlusOne, interval): update stack_chart.mjs`);
	const fn = new Function(`return (${text});`)();
	// Call nodes 0 (root) and 1 (its child); samples 1 1 null 1 0 draw two
	// boxes of node 1 and two of the root: a null stack ends every box.
	const info = { getCallNodeTable: () => ({ prefix: [-1, 0], subtreeRangeEnd: [2, 2], depth: [0, 1] }) };
	const t = fn({ length: 5, time: [0, 1, 2, 3, 4] }, [1, 1, null, 1, 0], info, 2, 1).timings;
	if (JSON.stringify(t.map((d) => [d.start, d.end])) !== '[[[0,3],[2,5]],[[0,3],[2,4]]]')
		throw new Error(`${path}: getStackTimingByDepth found, but it draws ${JSON.stringify(t)} on the self-test`);
	frontEndStackTiming = fn;
	return fn;
}

// The thread's call node table and each sample's call node (null for a null stack).
function callNodes(profile, thread) {
	const children = [new Map()]; // per node: func -> child node (0 is a virtual root)
	const func = [-1];
	const nodeOfStack = new Map();
	const stacks = thread.samples.stack;
	const raw = stacks.map((stack) => {
		if (stack === null)
			return null;
		if (nodeOfStack.has(stack))
			return nodeOfStack.get(stack);
		let node = 0;
		for (const frame of profile.stackPath(stack)) {
			const f = profile.frameFunc(frame);
			let next = children[node].get(f);
			if (next === undefined) {
				next = func.length;
				func.push(f);
				children.push(new Map());
				children[node].set(f, next);
			}
			node = next;
		}
		nodeOfStack.set(stack, node);
		return node;
	});
	// Depth-first numbering, the virtual root left out.
	const index = new Array(func.length).fill(-1);
	const prefix = [];
	const depth = [];
	const subtreeRangeEnd = [];
	const funcOf = [];
	const visit = (node, parentIndex, d) => {
		const i = prefix.length;
		index[node] = i;
		prefix.push(parentIndex);
		depth.push(d);
		funcOf.push(func[node]);
		subtreeRangeEnd.push(0);
		for (const child of children[node].values())
			visit(child, i, d + 1);
		subtreeRangeEnd[i] = prefix.length;
	};
	for (const child of children[0].values())
		visit(child, -1, 0);
	return {
		table: { prefix, depth, subtreeRangeEnd, func: funcOf },
		sampleCallNodes: raw.map((n) => (n === null || n === 0 ? null : index[n])),
		maxDepthPlusOne: depth.reduce((m, d) => Math.max(m, d + 1), 0),
	};
}

// Every box of the thread's stack chart: { depth, start, end, func } (ms).
export function stackChartBoxes(profile, thread) {
	const getStackTimingByDepth = loadStackTiming();
	const { table, sampleCallNodes, maxDepthPlusOne } = callNodes(profile, thread);
	const samples = { length: thread.samples.length, time: sampleTimes(thread.samples) };
	const info = { getCallNodeTable: () => table };
	const { timings } = getStackTimingByDepth(samples, sampleCallNodes, info, maxDepthPlusOne,
						  profile.meta.interval);
	const boxes = [];
	timings.forEach((row, depth) => {
		for (let i = 0; i < row.length; i++)
			boxes.push({ depth, start: row.start[i], end: row.end[i], func: table.func[row.callNode[i]] });
	});
	return boxes;
}

// The thread's waits: its Off-CPU markers (switch-out to switch-in), in ms.
function waitsOf(profile, thread) {
	const m = thread.markers;
	const out = [];
	for (let i = 0; i < (m?.length || 0); i++) {
		if (profile.string(m.name[i]) === 'Off-CPU')
			out.push({ start: m.startTime[i], end: m.endTime[i] });
	}
	return out;
}

// Boxes that span the start of more than one wait: waits joined into one.
// A box starts at its wait's switch-out (that sample's time, the marker's
// start), so a start within 0.01 ms of the box's own is its own wait.
function joinedBoxes(boxes, waits) {
	const starts = waits.map((w) => w.start).sort((a, b) => a - b);
	return boxes.filter((b) => starts.filter((t) => t > b.start - 0.01 && t < b.end - 0.01).length > 1);
}

// --expect "wait-boxes THREAD FUNC": each of THREAD's waits in FUNC (a
// function of its off-CPU stack, e.g. the kernel's pipe read; names split
// by "|" for kernels that call it differently) is a box of its own in the
// stack chart: as many boxes as the workload's truth says it read (>= 90 %:
// the first and last waits may fall outside the recording), their median
// about its period, and no box across two waits (Off-CPU markers; a wait
// that a busy machine made longer than the period is still one wait).
export const WAIT_BOX_EXPECTATIONS = {
	'wait-boxes': {
		args: 'THREAD FUNC', threads: [0],
		json: (ctx, name, funcName) => {
			const pipe = ctx.truth?.pipe;
			if (!ctx.report.check(!!pipe, `${name}: the workload's truth says how many reads it made`))
				return;
			const { profile } = ctx;
			const thread = ctx.thread(name);
			const names = funcName.split('|');
			const boxes = stackChartBoxes(profile, thread).filter((b) => names.includes(profile.funcName(b.func)));
			const ms = boxes.map((b) => b.end - b.start).sort((a, b) => a - b);
			const median = ms.length ? ms[ms.length >> 1] : 0;
			const joined = joinedBoxes(boxes, waitsOf(profile, thread));
			const need = Math.floor(0.9 * pipe.reads);
			const ex = joined[0];
			ctx.report.check(boxes.length >= need && joined.length === 0 &&
					 median >= 0.5 * pipe.periodMs && median <= 1.5 * pipe.periodMs,
					 `${name}: the stack chart (the front-end's getStackTimingByDepth) draws ` +
						 `${boxes.length} boxes of ${funcName} for ${pipe.reads} reads of ` +
						 `${pipe.periodMs} ms (need >= ${need}), median ${fmt(median, 1)} ms, longest ` +
						 `${fmt(ms[ms.length - 1] ?? 0, 1)} ms; ${joined.length} span more than one ` +
						 `wait${ex ? ` (e.g. ${fmt(ex.start, 1)}–${fmt(ex.end, 1)} ms)` : ''}`);
		},
	},
	// --expect "waits-apart THREAD REASON": no box of THREAD's "off-CPU: REASON"
	// leaf spans two of its waits (e.g. two preemptions with no sample between).
	'waits-apart': {
		args: 'THREAD REASON', threads: [0],
		json: (ctx, name, reason) => {
			const { profile } = ctx;
			const thread = ctx.thread(name);
			const leaf = `off-CPU: ${reason}`;
			const boxes = stackChartBoxes(profile, thread).filter((b) => profile.funcName(b.func) === leaf);
			const joined = joinedBoxes(boxes, waitsOf(profile, thread));
			const ex = joined[0];
			ctx.report.check(boxes.length > 0 && joined.length === 0,
					 `${name}: the stack chart draws ${boxes.length} boxes of "${leaf}", ` +
						 `${joined.length} across more than one wait` +
						 `${ex ? ` (e.g. ${fmt(ex.start, 1)}–${fmt(ex.end, 1)} ms)` : ''}`);
		},
	},
};
