#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// PHP frames (issue 40), on a profile of Debian's php8.2 running
// tests/workloads/phpfuncs.php, whose truth (--truth: its stderr) gives its
// pid, its forked child's (--fork) and the lines of inner_fn's loop:
//
//   - of the PHP thread's on-CPU samples (and its child's) from its first to its last in
//     inner_fn (start-up and exit run none), >= 90 % show
//     outer_fn -> Nest::middle -> inner_fn as consecutive PHP frames under
//     {main}, inner_fn's line inside its loop and each frame's file
//     phpfuncs.php by its absolute path;
//   - the VM's handlers (static functions of a stripped php, unnamed:
//     "php8.2+0x...") do not show above the innermost PHP frame in more
//     than 10 % of those samples: the PHP frames stand for them;
//   - PHP frames have the PHP category, and the frame-quality counts of
//     meta.extra name PHP functions in >= 90 % of the samples in PHP code.
//
// --expect-broken: the control, a recording without PHP frames (--unwind
// fp): fewer than half may show them, or the check does not test anything.
//
//   php_checks.mjs --profile F --truth OUT [--fork] [--expect-broken] [--gzip|--plain]

import { readFileSync } from 'node:fs';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_PHP, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 90;
const VM_SHOWN_MAX_PERCENT = 10;
const BROKEN_MAX_PERCENT = 50;
// One thread burning 2 s at the default rate: hundreds of samples.
const MIN_SAMPLES = 100;
const CHAIN = ['{main}', 'outer_fn', 'Nest::middle', 'inner_fn'];
const USAGE = 'usage: php_checks.mjs --profile FILE --truth OUT [--fork] [--expect-broken] [--gzip|--plain]';

// phpfuncs.php's truth line.
export function parseTruth(text) {
	const m = /^phpfuncs: pid (\d+) inner lines (\d+)-(\d+) calls (\d+)$/m.exec(text);
	const c = /^phpfuncs: child pid (\d+) calls \d+$/m.exec(text);
	return m ? { pid: m[1], first: Number(m[2]), last: Number(m[3]), calls: Number(m[4]), child: c?.[1] } : {};
}

// The PHP frames of a sample, root first: { name, line, file }.
function phpFrames(profile, s) {
	const ft = profile.shared.frameTable;
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_PHP).map((f) => {
		const func = profile.frameFunc(f);
		const src = profile.shared.funcTable.source?.[func];
		return { name: profile.frameFuncName(f), line: ft.line[f], file: src == null ? null : profile.string(profile.shared.sources.filename[src]) };
	});
}

// Whether a sample shows an unnamed frame of php itself leafward of its innermost PHP frame.
function vmShown(profile, s) {
	let last = -1;
	s.path.forEach((f, i) => {
		if (profile.frameCategory(f) === CATEGORY_PHP)
			last = i;
	});
	return last >= 0 && s.path.slice(last + 1).some((f) => /^php[^ /]*\+0x[0-9a-f]+$/.test(profile.frameFuncName(f)));
}

// Whether `frames` end in {main} -> outer_fn -> Nest::middle -> inner_fn, inner_fn's line in its loop.
export function inCallOrder(frames, truth) {
	const i = frames.length - CHAIN.length;
	if (i < 0 || !CHAIN.every((name, k) => frames[i + k].name === name))
		return false;
	const inner = frames[frames.length - 1];
	return inner.line >= truth.first && inner.line <= truth.last &&
	       frames.slice(i).every((f) => f.file?.startsWith('/') && f.file.endsWith('/phpfuncs.php'));
}

export function checkPhp(report, profile, { truth, fork, expectBroken }) {
	report.section(`phpfuncs.php (pid ${truth.pid}): PHP functions in the stacks`);
	if (!report.check(truth.pid && truth.first > 0 && truth.last >= truth.first && (!fork || truth.child),
			  'the workload printed its truth (pid, inner_fn\'s loop lines' + (fork ? ', child)' : ')')))
		return;
	checkThread(report, profile, { tid: truth.pid, what: 'the PHP thread', truth, expectBroken });
	if (fork)
		checkThread(report, profile, { tid: truth.child, what: 'its forked child', truth, expectBroken });
	if (expectBroken)
		return;
	const cat = profile.meta.categories?.[CATEGORY_PHP];
	report.check(cat?.name === 'PHP', `category ${CATEGORY_PHP} is PHP (found ${cat?.name})`);
	const inCode = profile.extraValue('Samples in PHP code');
	const named = profile.extraValue('Samples in PHP code naming a PHP function');
	report.check(Number.isInteger(inCode) && inCode > 0 && percent(named, inCode) >= WHOLE_PERCENT,
		     `meta.extra: ${named} of ${inCode} samples in PHP code name a PHP function (need >= ${WHOLE_PERCENT}%)`);
}

function checkThread(report, profile, { tid, what, truth, expectBroken }) {
	const thread = profile.threads.find((t) => String(t.tid) === String(tid));
	if (!report.check(thread, `${what} (tid ${tid}) is in the profile`))
		return;
	const onCpu = profile.samplesOf(thread).filter((s) => profile.isOnCpu(s));
	const all = onCpu.map((s) => phpFrames(profile, s));
	const inInner = all.map((f, i) => (f.some((x) => x.name === 'inner_fn') ? i : -1)).filter((i) => i >= 0);
	// Without PHP frames there is no inner_fn: the window is empty, and the count below fails.
	const stacks = inInner.length ? all.slice(inInner[0], inInner[inInner.length - 1] + 1) : [];
	if (!report.check(stacks.length >= MIN_SAMPLES || (expectBroken && all.length >= MIN_SAMPLES),
			  `${what}: ${stacks.length} on-CPU samples from its first to its last in inner_fn, of ` +
			  `${all.length} (need >= ${MIN_SAMPLES})`))
		return;
	const good = stacks.filter((f) => inCallOrder(f, truth)).length;
	if (expectBroken) {
		const share = percent(good, all.length);
		report.check(share < BROKEN_MAX_PERCENT, `${what}: ${good} of ${all.length} (${fmt(share)}%) show ` +
			     `${CHAIN.join(' -> ')} without PHP frames (need < ${BROKEN_MAX_PERCENT}%)`);
		return;
	}
	const share = percent(good, stacks.length);
	report.check(share >= WHOLE_PERCENT, `${what}: ${good} of ${stacks.length} (${fmt(share)}%) end in ${CHAIN.join(' -> ')}, ` +
		     `inner_fn at a line of its loop (${truth.first}-${truth.last}), each in phpfuncs.php by an absolute path ` +
		     `(need >= ${WHOLE_PERCENT}%)`);
	const shown = onCpu.slice(inInner[0], inInner[inInner.length - 1] + 1).filter((s) => vmShown(profile, s)).length;
	report.check(percent(shown, stacks.length) <= VM_SHOWN_MAX_PERCENT,
		     `${what}: ${shown} of ${stacks.length} (${fmt(percent(shown, stacks.length))}%) show an unnamed frame of php ` +
		     `(a VM handler) above the innermost PHP frame (need <= ${VM_SHOWN_MAX_PERCENT}%)`);
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
	const report = new Report(`PHP check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkPhp(report, profile, { truth, fork: !!values.fork, expectBroken: !!values['expect-broken'] });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
