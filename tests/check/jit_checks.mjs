#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// JIT symbols (issue 4): a profile of `node --perf-basic-prof jit_hot.js`
// must name the JS functions the workload spins in, which exist only as
// lines of /tmp/perf-PID.map. Checked on the file and through profiler-cli.
//
//   jit_checks.mjs --profile F --pid P [--func NAME ...] [--min-percent N]
//                  [--category NAME] [--js] [--gzip|--plain]
//
// The matching frames must all be of category NAME (default User: code of
// no runtime bpfprof knows); with --js their funcs must be isJS too (the
// front-end's "JavaScript only" call tree keeps them). No on-CPU user leaf
// of the busiest thread may be named like a raw address: code nothing names
// is one frame.
//
// A frame matches when its function name contains one of the NAMEs (default
// bpfprofHotLoop and bpfprofInner): node names JIT code
// "JS:*bpfprofHotLoop /path/jit_hot.js:29:24" (older releases
// "LazyCompile:*bpfprofHotLoop ..."), and the tier marker (~ ^ *) and the
// source position around the name are the runtime's, not the profiler's.
// Some thread of process P must have a matching frame in >= N % (default 30)
// of its on-CPU samples. Exit status 0 when all checks pass, 1 when one
// fails, 2 on bad usage.

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { bareFunctionName, onCpuFilters } from './profiler_cli.mjs';
import { CATEGORY_KERNEL, CATEGORY_USER, percent, sortedHistogram } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs } from './script_main.mjs';

const DEFAULT_FUNCS = ['bpfprofHotLoop', 'bpfprofInner'];
const DEFAULT_MIN_PERCENT = 30;
// A thread with fewer on-CPU samples says nothing about where its time went
// (2 s at the default 999 Hz give the busy thread ~2000).
const MIN_ON_CPU_SAMPLES = 50;

const USAGE = 'usage: jit_checks.mjs --profile FILE --pid PID [--func NAME ...] [--min-percent N] [--category NAME] [--js] [--gzip|--plain]';

function matches(name, funcs) {
	return funcs.some((f) => name.includes(f));
}

// Per thread of PID: on-CPU samples, how many have a matching frame, the
// matching frames' categories, and the most common leaf functions.
function jitShares(profile, pid, funcs) {
	const rows = [];
	for (const thread of profile.threadsOfProcess(pid)) {
		const on = profile.samplesOf(thread).filter((s) => profile.isOnCpu(s));
		let hits = 0;
		const categories = new Map();
		for (const s of on) {
			const matching = s.path.filter((f) => matches(profile.frameFuncName(f), funcs));
			if (matching.length === 0)
				continue;
			hits++;
			for (const f of matching) {
				const c = profile.categoryName(profile.frameCategory(f));
				categories.set(c, (categories.get(c) || 0) + 1);
			}
		}
		rows.push({ thread, on: on.length, hits, share: percent(hits, on.length), categories,
			    top: sortedHistogram(profile.selfHistogram(on)).slice(0, 3) });
	}
	return rows;
}

// C++ names of V8's own threads run to hundreds of characters.
function short(name, max = 80) {
	return name.length > max ? `${name.slice(0, max - 1)}…` : name;
}

function describeThread(r) {
	return `${r.thread.name} (${r.thread.tid})`;
}

function checkJitJson(report, profile, { pid, funcs, minPercent, category, js }) {
	report.section(`JIT functions ${funcs.join(', ')} in pid ${pid}`);
	const rows = jitShares(profile, pid, funcs);
	if (!report.check(rows.length > 0, `process ${pid} is in the profile (${rows.length} threads)`))
		return null;
	for (const r of rows) {
		report.note(`${describeThread(r)}: ${r.hits} of ${r.on} on-CPU samples have a matching frame ` +
			    `(${fmt(r.share)}%); top self: ` +
			    `${r.top.map(([n, c]) => `${short(n)} ${fmt(percent(c, r.on))}%`).join(', ') || 'none'}`);
	}
	const busy = rows.filter((r) => r.on >= MIN_ON_CPU_SAMPLES);
	const best = busy.sort((a, b) => b.share - a.share)[0];
	if (!report.check(best, `a thread of pid ${pid} has >= ${MIN_ON_CPU_SAMPLES} on-CPU samples`))
		return null;
	report.check(best.share >= minPercent,
		     `${describeThread(best)}: a frame named like ${funcs.join(' or ')} is in ${fmt(best.share)}% of ` +
			     `its ${best.on} on-CPU samples (need >= ${minPercent}%)`);
	// JIT code is the process's own code, in its language's category where the runtime is known.
	const cats = [...best.categories];
	const want = category ?? profile.categoryName(CATEGORY_USER);
	report.check(cats.length === 1 && cats[0][0] === want,
		     `those frames have category ${want} ` +
			     `(found ${cats.map(([c, n]) => `${c} ${n}`).join(', ') || 'none'})`);
	if (js) {
		// The front-end's "JavaScript only" call tree keeps the funcs flagged isJS.
		const ft = profile.shared.funcTable;
		const named = [...new Set(profile.samplesOf(best.thread).flatMap((s) => s.path)
			.map((f) => profile.frameFunc(f))
			.filter((fn) => matches(profile.funcName(fn), funcs)))];
		const js = named.filter((fn) => ft.isJS[fn] === true);
		report.check(named.length > 0 && js.length === named.length,
			     `the ${named.length} functions named like ${funcs.join(' or ')} are JavaScript (isJS): ${js.length}`);
		// Else the front-end hides the call tree's "All frames / Script / Native" switch.
		report.check(profile.meta.usesOnlyOneStackType === false,
			     `meta.usesOnlyOneStackType is false with JavaScript frames (found ${profile.meta.usesOnlyOneStackType})`);
	}
	// Code nothing names is one frame per runtime, never a function per address.
	// Where the CPU was is real code (an address the unwinder made up further
	// rootward is another matter, shown raw on purpose): the user leaf of each
	// on-CPU sample of the thread that runs the JIT code.
	const raw = new Set();
	for (const s of profile.samplesOf(best.thread)) {
		if (!profile.isOnCpu(s))
			continue;
		const user = s.path.filter((f) => profile.frameCategory(f) !== CATEGORY_KERNEL);
		const n = user.length ? profile.frameFuncName(user[user.length - 1]) : '';
		if (/^0x[0-9a-f]+$/i.test(n))
			raw.add(n);
	}
	report.check(raw.size === 0, `no on-CPU user leaf of ${describeThread(best)} is named like a raw address ` +
		     `(found ${raw.size}${raw.size ? `: ${[...raw].slice(0, 3).join(' ')}` : ''})`);
	return best;
}

// The front-end sees the same: the union of the matching functions covers
// the share of the thread's samples without an off-CPU leaf.
function checkJitCli(report, profile, cli, handle, best, { funcs, minPercent }) {
	const filters = onCpuFilters(cli, handle);
	const on = cli.query('thread', 'samples', '--thread', handle, ...filters).categoryBreakdown?.totalSamples || 0;
	const found = new Map();
	for (const name of funcs) {
		const r = cli.query('thread', 'functions', '--thread', handle, '--search', name, '--limit', '0', ...filters);
		for (const f of r.functions || []) {
			if (matches(bareFunctionName(f.name), funcs))
				found.set(f.functionHandle, f);
		}
	}
	if (!report.check(found.size > 0, `profiler-cli: ${describeThread(best)} has functions named like ` +
					  `${funcs.join(' or ')} (${found.size})`))
		return;
	for (const f of [...found.values()].slice(0, 4))
		report.note(`${f.functionHandle}: ${f.name}`);
	const r = cli.query('thread', 'samples', '--thread', handle, ...filters, '--includes-function',
			    [...found.keys()].join(','));
	const n = r.categoryBreakdown?.totalSamples || 0;
	report.check(on > 0 && percent(n, on) >= minPercent,
		     `profiler-cli: ${n} of ${describeThread(best)}'s ${on} samples without an off-CPU leaf contain ` +
			     `one of them = ${fmt(percent(n, on))}% (need >= ${minPercent}%; the file says ` +
			     `${fmt(best.share)}%)`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		func: { type: 'string', multiple: true },
		'min-percent': { type: 'string' },
		category: { type: 'string' },
		js: { type: 'boolean' },
	});
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || ''))
		throw new Error(USAGE);
	const minPercent = Number(values['min-percent'] ?? DEFAULT_MIN_PERCENT);
	if (!(minPercent > 0 && minPercent <= 100))
		throw new Error(`--min-percent wants 0 < N <= 100, not ${JSON.stringify(values['min-percent'])}`);
	const funcs = values.func?.length ? values.func : DEFAULT_FUNCS;
	const opts = { pid: values.pid, funcs, minPercent, category: values.category, js: values.js };

	const report = new Report(`jit check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	const best = checkJitJson(report, profile, opts);
	checkWithProfilerCli(report, profile, (cli, handles) => {
		if (best)
			checkJitCli(report, profile, cli, handles.get(profile.threads.indexOf(best.thread)), best, opts);
	});
	return report.finish();
}

try {
	process.exitCode = main(process.argv.slice(2));
} catch (e) {
	console.error(`jit_checks.mjs: ${e.message}`);
	process.exitCode = 2;
}
