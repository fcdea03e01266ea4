// SPDX-License-Identifier: BSD-2-Clause
//
// DWARF (issue 4), for `bpfprof -- debuginfo` (tests/workloads/debuginfo.c)
// run as a stripped binary whose names, lines and inlined calls exist only
// in a separate debug file found by build-id:
//
//   checkDebuginfo          with the debug file: debuginfo_outer_loop is in
//                           nearly every on-CPU sample, under main at the
//                           line of the call; debuginfo_inlined_mix,
//                           code inlined into it, is an inline frame of its
//                           own right under it, with a line of its body, the
//                           outer frame at the line of the call; both funcs
//                           have their source file and first line
//   checkDebuginfo          withoutDebugFile: the control, the same binary
//                           without the debug file, has none of those names,
//                           only offsets into the binary
//   checkDebuginfoWithCli   the same through the front-end's selectors: hot
//                           functions, the bottom-up tree, the per-line
//                           source annotation
//
// Line numbers come from the caller (debuginfo.sh reads them from the
// workload's source): `from` is a function's definition line, where DWARF's
// decl_line points, `to` its closing brace; callLine is the line of the
// inlined call, outerCallLine main's call of the outer function.

import { bareFunctionName, onCpuFilters } from './profiler_cli.mjs';
import { CATEGORY_USER, percent } from './profile.mjs';
import { fmt } from './report.mjs';

export const OUTER = 'debuginfo_outer_loop';
const MAIN = 'main';
export const INLINED = 'debuginfo_inlined_mix';
// The stripped binary the test runs: its basename is the frames' resource.
export const RESOURCE = 'debuginfo';
const SOURCE_FILE = 'debuginfo.c';

// 1 s at 999 Hz gives ~1000 on-CPU samples; fewer would mean the workload
// was barely sampled and the shares below say little.
const MIN_ON_CPU_SAMPLES = 200;
// Samples outside the outer loop: main's clock check between calls, and the
// instructions before the loop's frame exists.
const MIN_OUTER_PERCENT = 90;
// The loop is ~50 instructions of the inlined body against 3 of the loop's
// own (measured: 97 %); half is far from any doubt.
const MIN_INLINED_LEAF_PERCENT = 50;
// Control: the binary's code is still sampled, under offset names.
const MIN_UNNAMED_PERCENT = 90;
const OFFSET_NAME = new RegExp(`^${RESOURCE}\\+0x[0-9a-f]+$`);

// "FROM-TO" -> { from, to }; throws on anything else.
export function parseLineRange(s, what) {
	const m = /^(\d+)-(\d+)$/.exec(s || '');
	if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2]))
		throw new Error(`${what} wants FROM-TO line numbers, not ${JSON.stringify(s)}`);
	return { from: Number(m[1]), to: Number(m[2]) };
}

const inRange = (line, r) => Number.isInteger(line) && line >= r.from && line <= r.to;

function framesOf(profile, name) {
	const out = [];
	for (let f = 0; f < profile.shared.frameTable.length; f++) {
		if (profile.frameFuncName(f) === name)
			out.push(f);
	}
	return out;
}

function funcsOf(profile, name) {
	const out = [];
	for (let f = 0; f < profile.shared.funcTable.length; f++) {
		if (profile.funcName(f) === name)
			out.push(f);
	}
	return out;
}

function sourceFileOf(profile, func) {
	const src = profile.shared.funcTable.source?.[func];
	if (src === null || src === undefined)
		return null;
	return profile.string(profile.shared.sources.filename[src]) ?? null;
}

const isSourceFile = (path) => path === SOURCE_FILE || (path || '').endsWith(`/${SOURCE_FILE}`);

// The workload's thread and its on-CPU samples; null after a failed check.
function workloadSamples(report, profile, pid) {
	const threads = profile.threadsOf(pid);
	const main = threads.find((t) => t.isMainThread);
	if (!report.check(main, `process ${pid} is in the profile with its main thread ` +
				`(${threads.length} threads)`))
		return null;
	const on = profile.samplesOf(main).filter((s) => profile.isOnCpu(s));
	report.note(`thread ${main.name} (${main.tid}): ${main.samples.length} samples, ${on.length} on CPU`);
	if (!report.check(on.length >= MIN_ON_CPU_SAMPLES,
			  `${on.length} on-CPU samples (need >= ${MIN_ON_CPU_SAMPLES})`))
		return null;
	return { thread: main, on };
}

function histogramText(hist, n = 8) {
	return [...hist.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, c]) => `${k}: ${c}`).join(', ');
}

export function checkDebuginfo(report, profile, opts) {
	if (opts.withoutDebugFile)
		return checkControl(report, profile, opts);
	const pid = String(opts.pid);
	report.section(`process ${pid}: ${OUTER}, named by the separate debug file`);
	const w = workloadSamples(report, profile, pid);
	if (w) {
		const n = w.on.filter((s) => s.path.some((f) => profile.frameFuncName(f) === OUTER)).length;
		report.check(percent(n, w.on.length) >= MIN_OUTER_PERCENT,
			     `${OUTER} is in ${fmt(percent(n, w.on.length))}% of the on-CPU samples ` +
				     `(need >= ${MIN_OUTER_PERCENT}%; ${n} of ${w.on.length})`);
	}
	const outerFrames = framesOf(profile, OUTER);
	const cats = new Set(outerFrames.map((f) => profile.categoryName(profile.frameCategory(f))));
	const libs = new Set(outerFrames.map((f) => profile.resourceNameOfFunc(profile.frameFunc(f))));
	report.check(outerFrames.length > 0 && cats.size === 1 && cats.has(profile.categoryName(CATEGORY_USER)) &&
			     libs.size === 1 && libs.has(RESOURCE),
		     `${outerFrames.length} ${OUTER} frames, all User code of resource "${RESOURCE}" ` +
			     `(found ${[...cats].join(', ') || 'none'} in ${[...libs].map((l) => JSON.stringify(l)).join(', ') || 'none'})`);

	if (w)
		checkOuterCaller(report, profile, w, opts);
	checkInlineFrames(report, profile, w, opts);
	checkFuncSources(report, profile, opts);
}

// main calls the outer loop: a frame found from a return address, whose
// line is that of the call only when it is looked up one byte back.
function checkOuterCaller(report, profile, w, { outerCallLine }) {
	const ft = profile.shared.frameTable;
	let withOuter = 0;
	const callers = new Map();
	const lines = new Map();
	for (const s of w.on) {
		const d = s.path.findIndex((f) => profile.frameFuncName(f) === OUTER);
		if (d < 0)
			continue;
		withOuter++;
		const caller = d > 0 ? profile.frameFuncName(s.path[d - 1]) : '(root)';
		callers.set(caller, (callers.get(caller) || 0) + 1);
		if (caller === MAIN)
			lines.set(ft.line[s.path[d - 1]], (lines.get(ft.line[s.path[d - 1]]) || 0) + 1);
	}
	if (withOuter === 0)
		return; // the share check above has failed already
	const fromMain = callers.get(MAIN) || 0;
	report.check(percent(fromMain, withOuter) >= MIN_OUTER_PERCENT,
		     `${MAIN} is the caller of ${OUTER} in ${fmt(percent(fromMain, withOuter))}% of its samples ` +
			     `(need >= ${MIN_OUTER_PERCENT}%; callers: ${histogramText(callers, 4)})`);
	if (fromMain > 0) {
		report.check(lines.get(outerCallLine) === fromMain,
			     `that ${MAIN} frame is at the line of the call, ${outerCallLine}, in ` +
				     `${lines.get(outerCallLine) || 0} of ${fromMain} (lines: ${histogramText(lines)})`);
	}
}

// The inlined function: frames of its own, under the frame of the function
// it was inlined into, at the same address, one level deeper.
function checkInlineFrames(report, profile, w, { inlinedLines, callLine }) {
	report.section(`inline frames of ${INLINED} (lines ${inlinedLines.from}-${inlinedLines.to}, ` +
		       `called at line ${callLine})`);
	const ft = profile.shared.frameTable;
	const frames = framesOf(profile, INLINED);
	if (!report.check(frames.length > 0, `${INLINED} has frames in the profile (${frames.length})`))
		return;
	if (w) {
		const leaf = w.on.filter((s) => profile.leafFuncName(s) === INLINED).length;
		report.check(percent(leaf, w.on.length) >= MIN_INLINED_LEAF_PERCENT,
			     `${INLINED} is the leaf of ${fmt(percent(leaf, w.on.length))}% of the on-CPU samples ` +
				     `(need >= ${MIN_INLINED_LEAF_PERCENT}%; ${leaf} of ${w.on.length})`);
	}
	const shallow = frames.filter((f) => !(ft.inlineDepth[f] >= 1));
	report.check(shallow.length === 0, `every ${INLINED} frame has inlineDepth >= 1: ${shallow.length} of ` +
					   `${frames.length} do not (depths: ${[...new Set(frames.map((f) => ft.inlineDepth[f]))].join(', ')})`);
	const lines = new Map();
	for (const f of frames)
		lines.set(ft.line[f], (lines.get(ft.line[f]) || 0) + 1);
	const outside = frames.filter((f) => !inRange(ft.line[f], inlinedLines));
	report.check(outside.length === 0,
		     `every ${INLINED} frame has a line in ${inlinedLines.from}-${inlinedLines.to}: ` +
			     `${outside.length} of ${frames.length} do not (frames per line: ${histogramText(lines)})`);

	// Per sample, every inlined frame against the frame right above it.
	let checked = 0;
	const badParent = new Map();
	const parentLines = new Map();
	for (const t of profile.threads) {
		for (const s of profile.samplesOf(t)) {
			for (let d = 0; d < s.path.length; d++) {
				const f = s.path[d];
				if (profile.frameFuncName(f) !== INLINED)
					continue;
				checked++;
				const p = d > 0 ? s.path[d - 1] : null;
				let why = null;
				if (p === null)
					why = 'no caller frame';
				else if (profile.frameFuncName(p) !== OUTER)
					why = `caller ${profile.frameFuncName(p)}`;
				else if (ft.inlineDepth[p] !== ft.inlineDepth[f] - 1)
					why = `caller at inlineDepth ${ft.inlineDepth[p]} for ${ft.inlineDepth[f]}`;
				else if (ft.address[p] !== ft.address[f] || ft.address[f] === -1)
					why = `caller address ${ft.address[p]} for ${ft.address[f]}`;
				if (why)
					badParent.set(why, (badParent.get(why) || 0) + 1);
				else
					parentLines.set(ft.line[p], (parentLines.get(ft.line[p]) || 0) + 1);
			}
		}
	}
	const bad = [...badParent.values()].reduce((a, b) => a + b, 0);
	report.check(checked > 0 && bad === 0,
		     `in all ${checked} sampled stacks with ${INLINED}, the frame above it is ${OUTER} one ` +
			     `inlineDepth up at the same address: ${bad} are not` +
			     (bad ? ` (${histogramText(badParent, 3)})` : ''));
	const good = checked - bad;
	const atCall = parentLines.get(callLine) || 0;
	if (good > 0)
		report.check(atCall === good,
			     `that ${OUTER} frame is at the call's line ${callLine} in ${atCall} of ${good} ` +
				     `(lines: ${histogramText(parentLines)})`);
}

// Both functions name their source file and the line they start at.
function checkFuncSources(report, profile, { outerLines, inlinedLines }) {
	report.section(`funcTable: source file and first line`);
	const ft = profile.shared.funcTable;
	for (const [name, lines] of [[OUTER, outerLines], [INLINED, inlinedLines]]) {
		const funcs = funcsOf(profile, name);
		const desc = funcs.map((f) => `${JSON.stringify(sourceFileOf(profile, f))}:${ft.lineNumber[f]}`);
		const good = funcs.filter((f) => isSourceFile(sourceFileOf(profile, f)) &&
					  ft.lineNumber[f] === lines.from);
		report.check(funcs.length > 0 && good.length === funcs.length,
			     `${name}: every func (${funcs.length}) has a file ending in ${SOURCE_FILE} and ` +
				     `lineNumber ${lines.from} (found ${desc.join(', ') || 'none'})`);
	}
}

// Without the debug file the same binary is sampled just as much, but
// nothing names its static functions or knows their lines.
function checkControl(report, profile, { pid }) {
	pid = String(pid);
	report.section(`control: process ${pid} without the debug file`);
	const w = workloadSamples(report, profile, pid);
	const named = [];
	for (let f = 0; f < profile.shared.funcTable.length; f++) {
		const name = profile.funcName(f);
		if (name.includes(OUTER) || name.includes(INLINED))
			named.push(name);
	}
	report.check(named.length === 0, `no function is named ${OUTER} or ${INLINED} ` +
					 `(found ${named.map((n) => JSON.stringify(n)).join(', ') || 'none'})`);
	if (w) {
		const n = w.on.filter((s) => s.path.some((f) => profile.frameCategory(f) === CATEGORY_USER &&
			profile.resourceNameOfFunc(profile.frameFunc(f)) === RESOURCE &&
			OFFSET_NAME.test(profile.frameFuncName(f)))).length;
		report.check(percent(n, w.on.length) >= MIN_UNNAMED_PERCENT,
			     `${fmt(percent(n, w.on.length))}% of the on-CPU samples have a frame of ` +
				     `"${RESOURCE}" named by its offset, "${RESOURCE}+0x..." ` +
				     `(need >= ${MIN_UNNAMED_PERCENT}%; ${n} of ${w.on.length})`);
	}
	// No DWARF: the binary's frames have no inline depth, line or source.
	const ft = profile.shared.frameTable;
	let frames = 0;
	const dwarfish = [];
	for (let f = 0; f < ft.length; f++) {
		const func = profile.frameFunc(f);
		if (profile.resourceNameOfFunc(func) !== RESOURCE)
			continue;
		frames++;
		if (ft.inlineDepth[f] !== 0 || ft.line[f] !== null || sourceFileOf(profile, func) !== null ||
		    profile.shared.funcTable.lineNumber[func] !== null)
			dwarfish.push(profile.frameFuncName(f));
	}
	report.check(frames > 0 && dwarfish.length === 0,
		     `none of the ${frames} frames of "${RESOURCE}" has an inline depth, a line or a source ` +
			     `file (found ${dwarfish.slice(0, 3).join(', ') || 'none'})`);
}

// Through the front-end: the hot functions, the callers in the bottom-up
// tree, and the source annotation, which places every sample of the
// inlined function on a line of its body.
export function checkDebuginfoWithCli(report, profile, cli, handles, opts) {
	const pid = String(opts.pid);
	const i = profile.threads.findIndex((t) => t.pid === pid && t.isMainThread);
	const h = handles.get(i);
	if (!report.check(h, `profiler-cli: process ${pid} has a thread handle`))
		return;
	const filters = onCpuFilters(cli, h);
	const funcs = (cli.query('thread', 'functions', '--thread', h, '--search', 'debuginfo', '--limit', '0',
				 ...filters).functions || []);
	const byName = (name) => funcs.find((f) => bareFunctionName(f.name) === name);
	if (opts.withoutDebugFile) {
		const named = funcs.filter((f) => [OUTER, INLINED].some((n) => f.name.includes(n)));
		report.check(named.length === 0, `profiler-cli: no function named ${OUTER} or ${INLINED} ` +
						 `(found ${named.map((f) => f.name).join(', ') || 'none'})`);
		return;
	}
	const outer = byName(OUTER);
	const inlined = byName(INLINED);
	report.check(outer && outer.totalPercentage >= MIN_OUTER_PERCENT,
		     `profiler-cli: ${OUTER} is in ${fmt(outer?.totalPercentage ?? 0)}% of the on-CPU samples ` +
			     `(need >= ${MIN_OUTER_PERCENT}%)`);
	if (!report.check(inlined && inlined.selfPercentage >= MIN_INLINED_LEAF_PERCENT,
			  `profiler-cli: ${INLINED} has ${fmt(inlined?.selfPercentage ?? 0)}% self time ` +
				  `(need >= ${MIN_INLINED_LEAF_PERCENT}%)`))
		return;

	const tree = cli.query('thread', 'samples-bottom-up', '--thread', h, ...filters).invertedCallTree;
	const node = (tree?.children || []).find((c) => c.functionHandle === inlined.functionHandle);
	const callers = new Map((node?.children || []).map((c) => [bareFunctionName(c.name), c.totalSamples]));
	report.check(node && node.totalSamples > 0 && callers.get(OUTER) === node.totalSamples,
		     `profiler-cli bottom-up: all ${node?.totalSamples ?? 0} samples of ${INLINED} are called ` +
			     `from ${OUTER} (callers: ${histogramText(callers, 4) || 'none'})`);

	// The annotation is of the whole file: self samples of the other
	// functions in it land on their own lines, outside this range.
	const a = cli.query('function', 'annotate', inlined.functionHandle, '--mode', 'src').srcAnnotation;
	const hot = (a?.lines || []).filter((l) => l.selfSamples > 0);
	const inBody = hot.filter((l) => inRange(l.lineNumber, opts.inlinedLines));
	const onBody = inBody.reduce((n, l) => n + l.selfSamples, 0);
	report.check(a && isSourceFile(a.filename), `profiler-cli annotate: ${INLINED} is in ` +
						   `${JSON.stringify(a?.filename)} (want a file ending in ${SOURCE_FILE})`);
	report.check(onBody > 0 && onBody === inlined.selfSamples,
		     `profiler-cli annotate: the lines of ${INLINED}'s body hold ${onBody} self samples, ` +
			     `its own ${inlined.selfSamples} (lines ${opts.inlinedLines.from}-${opts.inlinedLines.to}: ` +
			     `${inBody.map((l) => `${l.lineNumber} (${l.selfSamples})`).join(', ') || 'none'})`);
}
