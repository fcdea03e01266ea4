#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// CFI unwinding (issue 16): a profile of `nofp SECONDS DEPTH`, a workload
// built without frame pointers (tests/workloads/nofp.c). With --unwind cfi
// its user stacks must be whole:
//
//   - >= 95 % of its on-CPU samples start at _start, pass through main and
//     hold no raw address (a frame the unwinder made up);
//   - >= 95 % of the samples in nofp_compare show the exact path main ->
//     nofp_recurse x (DEPTH + 1) -> nofp_sort, and >= 90 % cross a libc
//     frame (qsort's, built without frame pointers too) between nofp_sort
//     and nofp_compare.
//
// --expect-broken is the control run with frame pointers: there fewer than
// half may be whole, or the workload does not test what it should.
//
//   unwind_checks.mjs --profile F --pid P --depth D [--expect-broken] [--gzip|--plain]

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_USER, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 95;
const CROSSES_LIBC_PERCENT = 90;
const BROKEN_MAX_PERCENT = 50;
// The workload's run gives ~1500 samples at 999 Hz; fewer says nothing.
const MIN_SAMPLES = 200;

const USAGE = 'usage: unwind_checks.mjs --profile FILE --pid PID --depth D [--expect-broken] [--gzip|--plain]';

const isRawAddress = (name) => /^0x[0-9a-f]+$/i.test(name) || /\+0x[0-9a-f]+$/i.test(name);

// The user frames of a sample, root first: { name, lib }.
function userFrames(profile, s) {
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_USER)
		.map((f) => ({ name: profile.frameFuncName(f), lib: profile.resourceNameOfFunc(profile.frameFunc(f)) }));
}

// Whether the frames below main are nofp_recurse x (depth + 1), then nofp_sort.
function exactPath(frames, depth) {
	const m = frames.findIndex((f) => f.name === 'main');
	if (m < 0)
		return false;
	for (let i = 1; i <= depth + 1; i++) {
		if (frames[m + i]?.name !== 'nofp_recurse')
			return false;
	}
	return frames[m + depth + 2]?.name === 'nofp_sort';
}

function crossesLibc(frames) {
	const sort = frames.findIndex((f) => f.name === 'nofp_sort');
	const cmp = frames.findIndex((f) => f.name === 'nofp_compare');
	return sort >= 0 && cmp > sort + 1 && frames.slice(sort + 1, cmp).some((f) => /^libc\.so/.test(f.lib ?? ''));
}

export function checkUnwind(report, profile, { pid, depth, expectBroken }) {
	report.section(`nofp (pid ${pid}, depth ${depth}): user stacks without frame pointers`);
	const threads = profile.threadsOf(String(pid));
	if (!report.check(threads.length > 0, `process ${pid} is in the profile (${threads.length} threads)`))
		return;
	const samples = threads.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s));
	const stacks = samples.map((s) => userFrames(profile, s)).filter((f) => f.length > 0);
	if (!report.check(stacks.length >= MIN_SAMPLES,
			  `${stacks.length} on-CPU samples with user frames (need >= ${MIN_SAMPLES})`))
		return;
	const whole = stacks.filter((f) => f[0].name === '_start' && f.some((x) => x.name === 'main') &&
				    !f.some((x) => isRawAddress(x.name)));
	const roots = new Map();
	for (const f of stacks)
		roots.set(f[0].name, (roots.get(f[0].name) || 0) + 1);
	report.note(`roots: ${[...roots].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([n, c]) => `${n} ${c}`).join(', ')}`);
	const share = percent(whole.length, stacks.length);
	if (expectBroken) {
		report.check(share < BROKEN_MAX_PERCENT,
			     `with frame pointers, ${fmt(share)}% of ${stacks.length} stacks are whole: the workload has ` +
				     `none to follow (need < ${BROKEN_MAX_PERCENT}%)`);
		return;
	}
	report.check(share >= WHOLE_PERCENT,
		     `${whole.length} of ${stacks.length} stacks (${fmt(share)}%) start at _start, pass through main and ` +
			     `hold no raw address (need >= ${WHOLE_PERCENT}%)`);
	const inCompare = stacks.filter((f) => f.some((x) => x.name === 'nofp_compare'));
	const exact = inCompare.filter((f) => exactPath(f, depth));
	const crossing = inCompare.filter(crossesLibc);
	report.check(inCompare.length > 0 && percent(exact.length, inCompare.length) >= WHOLE_PERCENT,
		     `${exact.length} of ${inCompare.length} samples in nofp_compare show main -> nofp_recurse x ${depth + 1} ` +
			     `-> nofp_sort (need >= ${WHOLE_PERCENT}%)`);
	report.check(inCompare.length > 0 && percent(crossing.length, inCompare.length) >= CROSSES_LIBC_PERCENT,
		     `${crossing.length} of ${inCompare.length} samples in nofp_compare cross a libc frame between nofp_sort ` +
			     `and it (need >= ${CROSSES_LIBC_PERCENT}%)`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		depth: { type: 'string' },
		'expect-broken': { type: 'boolean' },
	});
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') || !/^\d+$/.test(values.depth || ''))
		throw new Error(USAGE);
	const report = new Report(`unwind check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkUnwind(report, profile, { pid: values.pid, depth: Number(values.depth), expectBroken: !!values['expect-broken'] });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
