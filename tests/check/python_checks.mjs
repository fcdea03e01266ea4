#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Python frames (issue 26), on a profile of Debian's /usr/bin/python3
// running tests/workloads/pyfuncs.py, whose truth (--truth: its output)
// gives its pid, its second thread's id, its forked child's pid, and each
// function's first and last line:
//
//   - for the main thread, the second thread and (with --fork) the child's
//     main thread, >= 90 % of the on-CPU samples show the Python functions
//     in call order, level1 -> level2 -> level3 as consecutive Python
//     frames (under <module> on a main thread, under worker on the second),
//     each frame's line inside its function: the samples from the thread's
//     first to its last in level1, the time it burns there (the
//     interpreter's start-up and exit run no level1);
//   - Python frames have the Python category, name pyfuncs.py by its
//     absolute path as their source file, and meta.extra counts Python
//     stacks;
//
// --expect-broken: the control, a recording without Python frames (--unwind
// fp): fewer than half may show them, or the check does not test anything.
//
//   python_checks.mjs --profile F --truth OUT [--fork] [--expect-broken] [--gzip|--plain]

import { readFileSync } from 'node:fs';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_PYTHON, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 90;
const BROKEN_MAX_PERCENT = 50;
// Two threads share the GIL on two CPUs: each gets hundreds of samples in 2 s.
const MIN_SAMPLES = 100;
const USAGE = 'usage: python_checks.mjs --profile FILE --truth OUT [--fork] [--expect-broken] [--gzip|--plain]';

// pyfuncs.py's truth lines.
export function parseTruth(text) {
	const truth = { funcs: {} };
	for (const line of text.split('\n')) {
		let m;
		if ((m = /^pyfuncs: truth pid (\d+)$/.exec(line)))
			truth.pid = m[1];
		else if ((m = /^pyfuncs: thread tid (\d+)$/.exec(line)))
			truth.thread = m[1];
		else if ((m = /^pyfuncs: child pid (\d+)$/.exec(line)))
			truth.child = m[1];
		else if ((m = /^pyfuncs: func (\w+) lines (\d+) (\d+)$/.exec(line)))
			truth.funcs[m[1]] = [Number(m[2]), Number(m[3])];
	}
	return truth;
}

// The Python frames of a sample, root first: { name, line, file }.
function pythonFrames(profile, s) {
	const ft = profile.shared.frameTable;
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_PYTHON).map((f) => {
		const func = profile.frameFunc(f);
		const src = profile.shared.funcTable.source?.[func];
		return { name: profile.frameFuncName(f), line: ft.line[f], file: src == null ? null : profile.string(profile.shared.sources.filename[src]) };
	});
}

// Whether `frames` hold `above` -> level1 -> level2 -> level3 in a row, each line in its function.
export function inCallOrder(frames, above, funcs) {
	const chain = [above, 'level1', 'level2', 'level3'];
	for (let i = 0; i + chain.length <= frames.length; i++) {
		if (!chain.every((name, k) => frames[i + k].name === name))
			continue;
		return chain.slice(1).every((name, k) => {
			const [first, last] = funcs[name];
			const line = frames[i + 1 + k].line;
			return line >= first && line <= last;
		});
	}
	return false;
}

function checkThread(report, profile, { tid, what, above, funcs, expectBroken }) {
	const thread = profile.threads.find((t) => String(t.tid) === String(tid));
	if (!report.check(thread, `${what} (tid ${tid}) is in the profile`))
		return;
	const all = profile.samplesOf(thread).filter((s) => profile.isOnCpu(s)).map((s) => pythonFrames(profile, s));
	const inLevel1 = all.map((f, i) => (f.some((x) => x.name === 'level1') ? i : -1)).filter((i) => i >= 0);
	// Without Python frames there is no level1: the window is empty, and the count below fails.
	const stacks = inLevel1.length ? all.slice(inLevel1[0], inLevel1[inLevel1.length - 1] + 1) : [];
	if (!report.check(stacks.length >= MIN_SAMPLES || (expectBroken && all.length >= MIN_SAMPLES),
			  `${what}: ${stacks.length} on-CPU samples from its first to its last in level1, of ` +
			  `${all.length} (need >= ${MIN_SAMPLES})`))
		return;
	const good = stacks.filter((f) => inCallOrder(f, above, funcs)).length;
	const share = expectBroken ? percent(good, all.length) : percent(good, stacks.length);
	if (expectBroken)
		report.check(share < BROKEN_MAX_PERCENT, `${what}: ${good} of ${all.length} (${fmt(share)}%) show ` +
			     `${above} -> level1 -> level2 -> level3 without Python frames (need < ${BROKEN_MAX_PERCENT}%)`);
	else
		report.check(share >= WHOLE_PERCENT, `${what}: ${good} of ${stacks.length} (${fmt(share)}%) show ${above} -> ` +
			     `level1 -> level2 -> level3, each line inside its function (need >= ${WHOLE_PERCENT}%)`);
}

export function checkPython(report, profile, { truth, fork, expectBroken }) {
	report.section(`pyfuncs.py (pid ${truth.pid}): Python functions in the stacks`);
	if (!report.check(truth.pid && truth.thread && truth.funcs.level3 && (!fork || truth.child),
			  'the workload printed its truth (pid, thread, function lines' + (fork ? ', child)' : ')')))
		return;
	const funcs = truth.funcs;
	checkThread(report, profile, { tid: truth.pid, what: 'main thread', above: '<module>', funcs, expectBroken });
	checkThread(report, profile, { tid: truth.thread, what: 'second thread', above: 'worker', funcs, expectBroken });
	if (fork)
		checkThread(report, profile, { tid: truth.child, what: 'forked child', above: '<module>', funcs, expectBroken });
	if (expectBroken)
		return;
	const py = profile.meta.categories?.[CATEGORY_PYTHON];
	report.check(py?.name === 'Python', `category ${CATEGORY_PYTHON} is Python (found ${py?.name})`);
	const files = new Set(profile.threads.flatMap((t) => profile.samplesOf(t)).flatMap((s) => pythonFrames(profile, s))
		.filter((f) => f.name === 'level3').map((f) => f.file));
	report.check(files.size === 1 && [...files][0]?.startsWith('/') && [...files][0].endsWith('/pyfuncs.py'),
		     `level3's source file is pyfuncs.py by an absolute path (${[...files].join(', ')})`);
	const total = profile.extraValue('User stacks, Python');
	const roots = profile.extraValue('User stacks, Python, reaching a thread root');
	report.check(Number.isInteger(total) && total > 0 && percent(roots, total) >= WHOLE_PERCENT,
		     `meta.extra: ${roots} of ${total} Python stacks reach a thread root (need >= ${WHOLE_PERCENT}%)`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		truth: { type: 'string' },
		fork: { type: 'boolean' },
		'expect-broken': { type: 'boolean' },
	});
	if (positionals.length || !values.profile || !values.truth)
		throw new Error(USAGE);
	const truth = parseTruth(readFileSync(values.truth, 'utf8'));
	const report = new Report(`Python check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkPython(report, profile, { truth, fork: !!values.fork, expectBroken: !!values['expect-broken'] });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
