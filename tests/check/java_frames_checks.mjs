#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Java frames a JVM keeps in its own frames (issue 39: the interpreter's
// Method* and bytecode pointer, read in BPF at each sample and switch-out):
//
//   java_frames_checks.mjs --profile F --pid P --func NAME [--func NAME ...]
//                          [--min-percent N] [--after NAME] [--within NAME]
//                          [--off-cpu] [--line] [--in-category CAT]
//                          [--category CAT] [--js] [--file NAME]
//                          [--gzip|--plain]
//
// Some thread of process P must have EVERY --func among its frames in >= N %
// (default 90) of its on-CPU samples (--off-cpu: of its off-CPU samples, the
// rows of its waits). --after NAME counts only the samples from the thread's
// first one with a frame named like NAME on (the workload's own phase: a
// `java X.java` launch compiles X first, in Java, on the same thread).
// --within NAME counts only the samples with a frame named like NAME (the
// JVM's call stub, say: a stack the walk took through every Java frame to
// the thread's root).
// --in-category CAT counts only the samples with a frame of category CAT
// (JavaScript: the samples in a runtime's code, named or not).
// --line: each matching frame has a line number. --category CAT: each is
// of category CAT; --js: its func is isJS (the front-end's "JavaScript
// only" keeps it); --file NAME: its func's source file contains NAME (the
// source view opens it). A name matches a frame's
// function name when it is contained in it. Exit status 0 when all checks
// pass, 1 when one fails, 2 on bad usage.

import { openCheckedProfile } from './checks.mjs';
import { percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs } from './script_main.mjs';

const USAGE = 'usage: java_frames_checks.mjs --profile FILE --pid PID --func NAME [--func NAME ...] ' +
	'[--min-percent N] [--after NAME] [--within NAME] [--off-cpu] [--line] [--in-category CAT] [--category CAT] ' +
	'[--js] [--file NAME] [--gzip|--plain]';
// Fewer samples than this say nothing about the thread (a sleeper wakes 20 times a second).
const MIN_SAMPLES = { on: 50, off: 5 };

function lineOf(profile, frame) {
	const line = profile.shared.frameTable.line?.[frame];
	if (line !== null && line !== undefined)
		return line;
	return profile.shared.funcTable.lineNumber?.[profile.frameFunc(frame)] ?? null;
}

function fileOf(profile, frame) {
	const source = profile.shared.funcTable.source?.[profile.frameFunc(frame)];
	if (source === null || source === undefined || source < 0)
		return '';
	return profile.string(profile.shared.sources.filename[source]);
}

// Why a matching frame falls short of --category, --js and --file, or null.
function unlike(profile, frame, { category, js, file }) {
	if (category && profile.categoryName(profile.frameCategory(frame)) !== category)
		return `category ${profile.categoryName(profile.frameCategory(frame))}`;
	if (js && profile.shared.funcTable.isJS[profile.frameFunc(frame)] !== true)
		return 'not isJS';
	if (file && !fileOf(profile, frame).includes(file))
		return `file ${JSON.stringify(fileOf(profile, frame))}`;
	return null;
}

function hasFrame(profile, sample, name) {
	return sample.path.some((f) => profile.frameFuncName(f).includes(name));
}

function shares(profile, { pid, funcs, after, within, offCpu, line, inCategory, ...like }) {
	const rows = [];
	for (const thread of profile.threadsOfProcess(pid)) {
		let samples = profile.samplesOf(thread).filter((s) => s.path.length > 0 &&
								    profile.isOnCpu(s) !== offCpu);
		if (after) {
			samples.sort((a, b) => a.time - b.time);
			const first = samples.findIndex((s) => hasFrame(profile, s, after));
			samples = first < 0 ? [] : samples.slice(first);
		}
		if (within)
			samples = samples.filter((s) => hasFrame(profile, s, within));
		if (inCategory)
			samples = samples.filter((s) => s.path.some((f) => profile.categoryName(profile.frameCategory(f)) ===
									   inCategory));
		let hits = 0, lineless = 0, unlikes = 0, why = null;
		for (const s of samples) {
			const found = funcs.map((name) => s.path.filter((f) => profile.frameFuncName(f).includes(name)));
			if (found.some((fs) => fs.length === 0))
				continue;
			hits++;
			if (line && found.flat().some((f) => !(lineOf(profile, f) > 0)))
				lineless++;
			const off = found.flat().map((f) => unlike(profile, f, like)).find((w) => w);
			if (off) {
				unlikes++;
				why ??= off;
			}
		}
		rows.push({ thread, n: samples.length, hits, lineless, unlikes, why, share: percent(hits, samples.length) });
	}
	return rows;
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		func: { type: 'string', multiple: true },
		'min-percent': { type: 'string' },
		after: { type: 'string' },
		within: { type: 'string' },
		'off-cpu': { type: 'boolean' },
		line: { type: 'boolean' },
		'in-category': { type: 'string' },
		category: { type: 'string' },
		js: { type: 'boolean' },
		file: { type: 'string' },
	});
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') || !values.func?.length)
		throw new Error(USAGE);
	const minPercent = Number(values['min-percent'] ?? 90);
	if (!(minPercent > 0 && minPercent <= 100))
		throw new Error(`--min-percent wants 0 < N <= 100, not ${JSON.stringify(values['min-percent'])}`);
	const opts = { pid: values.pid, funcs: values.func, after: values.after, within: values.within, offCpu: !!values['off-cpu'],
		       line: !!values.line, inCategory: values['in-category'], category: values.category, js: !!values.js,
		       file: values.file };
	const kind = opts.offCpu ? 'off' : 'on';

	const report = new Report(`java frames check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	report.section(`${opts.funcs.join(' + ')} in pid ${opts.pid}'s ${kind}-CPU samples` +
		       (opts.after ? ` from its first with ${opts.after}` : '') +
		       (opts.within ? ` through ${opts.within}` : '') +
		       (opts.inCategory ? ` with a ${opts.inCategory} frame` : ''));
	const rows = shares(profile, opts);
	for (const r of rows)
		report.note(`${r.thread.name} (${r.thread.tid}): ${r.hits} of ${r.n} ${kind}-CPU samples have them all ` +
			    `(${fmt(r.share)}%)`);
	const best = rows.filter((r) => r.n >= MIN_SAMPLES[kind]).sort((a, b) => b.share - a.share)[0];
	if (!report.check(best, `a thread of pid ${opts.pid} has >= ${MIN_SAMPLES[kind]} ${kind}-CPU samples`))
		return report.finish();
	report.check(best.share >= minPercent,
		     `${best.thread.name} (${best.thread.tid}): frames named like ${opts.funcs.join(' and ')} in ` +
			     `${fmt(best.share)}% of its ${best.n} ${kind}-CPU samples (need >= ${minPercent}%)`);
	if (opts.line)
		report.check(best.lineless === 0,
			     `each of those frames has its line (${best.lineless} samples with one without)`);
	if (opts.category || opts.js || opts.file)
		report.check(best.unlikes === 0,
			     `each of those frames is ${[opts.category && `of category ${opts.category}`, opts.js && 'isJS',
						     opts.file && `in a file named like ${opts.file}`].filter((x) => x).join(', ')} ` +
				     `(${best.unlikes} samples with one that is not${best.why ? `: ${best.why}` : ''})`);
	return report.finish();
}

try {
	process.exitCode = main(process.argv.slice(2));
} catch (e) {
	console.error(`java_frames_checks.mjs: ${e.message}`);
	process.exitCode = 2;
}
