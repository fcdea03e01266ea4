#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Ruby frames (issue 40), on a profile of Debian's ruby running
// tests/workloads/rbfuncs.rb, whose truth (--truth: its output, a line of
// JSON) gives its pid, its main thread's id, its file and the line each
// method starts at:
//
//   - of the main thread's on-CPU samples from its first to its last in
//     rb_inner (the interpreter's start-up and exit run none), >= 90 %
//     name rb_inner as the innermost Ruby frame, and show
//     <main> -> rb_outer -> rb_middle -> rb_inner as consecutive Ruby
//     frames, each with its method's first line and a line at or past it;
//   - the VM's core loop (vm_exec_core, unnamed in Debian's stripped
//     libruby) is left out where the Ruby frames are put: rb_inner is the
//     leaf of over half of those samples (its loop runs in the core loop
//     itself; the rest are in C helpers it calls);
//   - Ruby frames have the Ruby category and name rbfuncs.rb by its
//     absolute path as their source file.
//
// --expect-broken: the control, a recording without Ruby frames (--unwind
// fp): fewer than half may show them, or the check does not test anything.
//
//   ruby_checks.mjs --profile F --truth OUT [--expect-broken] [--gzip|--plain]

import { readFileSync } from 'node:fs';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_RUBY, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 90;
const BROKEN_MAX_PERCENT = 50;
// One thread spinning for 3 s: hundreds of samples at the default rate.
const MIN_SAMPLES = 100;
// rb_inner's loop runs in the VM's core loop, not in C helpers, most of the time.
const LEAF_PERCENT = 50;
const CHAIN = ['<main>', 'rb_outer', 'rb_middle', 'rb_inner'];
const USAGE = 'usage: ruby_checks.mjs --profile FILE --truth OUT [--expect-broken] [--gzip|--plain]';

// rbfuncs.rb's truth: its last line of JSON.
export function parseTruth(text) {
	const line = text.split('\n').filter((l) => l.startsWith('{')).pop();
	return line ? JSON.parse(line) : {};
}

// The Ruby frames of a sample, root first: { name, line, first, file }.
function rubyFrames(profile, s) {
	const ft = profile.shared.frameTable;
	const funcs = profile.shared.funcTable;
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_RUBY).map((f) => {
		const func = profile.frameFunc(f);
		const src = funcs.source?.[func];
		return { name: profile.frameFuncName(f), line: ft.line[f], first: funcs.lineNumber?.[func] ?? null,
			 file: src == null ? null : profile.string(profile.shared.sources.filename[src]) };
	});
}

// Whether `frames` end in CHAIN, each method's frame at its first line or past it.
export function nestsInOrder(frames, lines) {
	const tail = frames.slice(-CHAIN.length);
	return tail.length === CHAIN.length && CHAIN.every((name, k) => tail[k].name === name) &&
	       tail.slice(1).every((f, k) => f.first === lines[CHAIN[k + 1]] && f.line >= f.first);
}

export function checkRuby(report, profile, { truth, expectBroken }) {
	report.section(`rbfuncs.rb (pid ${truth.pid}, Ruby ${truth.ruby}): Ruby methods in the stacks`);
	if (!report.check(truth.pid && truth.tid && truth.lines?.rb_inner && truth.file,
			  'the workload printed its truth (pid, tid, file, method lines)'))
		return;
	const thread = profile.threads.find((t) => String(t.tid) === String(truth.tid));
	if (!report.check(thread, `the main thread (tid ${truth.tid}) is in the profile`))
		return;
	const all = profile.samplesOf(thread).filter((s) => profile.isOnCpu(s)).map((s) => rubyFrames(profile, s));
	const inInner = all.map((f, i) => (f.some((x) => x.name === 'rb_inner') ? i : -1)).filter((i) => i >= 0);
	const stacks = inInner.length ? all.slice(inInner[0], inInner[inInner.length - 1] + 1) : [];
	if (!report.check(stacks.length >= MIN_SAMPLES || (expectBroken && all.length >= MIN_SAMPLES),
			  `main thread: ${stacks.length} on-CPU samples from its first to its last in rb_inner, of ` +
			  `${all.length} (need >= ${MIN_SAMPLES})`))
		return;
	const innermost = stacks.filter((f) => f.length && f[f.length - 1].name === 'rb_inner').length;
	const nested = stacks.filter((f) => nestsInOrder(f, truth.lines)).length;
	// The same samples as the shares above: from the first to the last in rb_inner.
	const onCpu = profile.samplesOf(thread).filter((s) => profile.isOnCpu(s));
	const window = inInner.length ? onCpu.slice(inInner[0], inInner[inInner.length - 1] + 1) : [];
	const leaf = window.filter((s) => profile.leafFuncName(s) === 'rb_inner').length;
	if (expectBroken) {
		report.check(percent(innermost, all.length) < BROKEN_MAX_PERCENT,
			     `main thread: ${innermost} of ${all.length} name rb_inner without Ruby frames ` +
			     `(need < ${BROKEN_MAX_PERCENT}%)`);
		return;
	}
	report.check(percent(innermost, stacks.length) >= WHOLE_PERCENT,
		     `main thread: ${innermost} of ${stacks.length} (${fmt(percent(innermost, stacks.length))}%) ` +
		     `name rb_inner as the innermost Ruby frame (need >= ${WHOLE_PERCENT}%)`);
	report.check(percent(nested, stacks.length) >= WHOLE_PERCENT,
		     `main thread: ${nested} of ${stacks.length} (${fmt(percent(nested, stacks.length))}%) show ` +
		     `${CHAIN.join(' -> ')}, each at its first line or past it (need >= ${WHOLE_PERCENT}%)`);
	report.check(percent(leaf, stacks.length) > LEAF_PERCENT,
		     `main thread: ${leaf} of ${stacks.length} (${fmt(percent(leaf, stacks.length))}%) have rb_inner as their ` +
		     `leaf, the VM's core loop left out (need > ${LEAF_PERCENT}%)`);
	const rb = profile.meta.categories?.[CATEGORY_RUBY];
	report.check(rb?.name === 'Ruby', `category ${CATEGORY_RUBY} is Ruby (found ${rb?.name})`);
	const files = new Set(all.flat().filter((f) => f.name === 'rb_inner').map((f) => f.file));
	report.check(files.size === 1 && [...files][0] === truth.file,
		     `rb_inner's source file is ${truth.file} (${[...files].join(', ')})`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		truth: { type: 'string' },
		'expect-broken': { type: 'boolean' },
	});
	if (positionals.length || !values.profile || !values.truth)
		throw new Error(USAGE);
	const truth = parseTruth(readFileSync(values.truth, 'utf8'));
	const report = new Report(`Ruby check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkRuby(report, profile, { truth, expectBroken: !!values['expect-broken'] });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
