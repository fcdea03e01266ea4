#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Whole stacks on a build machine (issue 38): a profile of `make -j2` (or of a
// lone `gcc -O2 -c`) recorded with `bpfprof -- make ...`. Its processes are
// grouped by what they are, by thread name:
//
//   compilers  cc1, cc1plus, cc1obj, lto1
//   binutils   as, ld, ld.bfd, ld.gold, collect2, ar, ranlib, objcopy, strip
//   drivers    gcc, g++, cc, c++ and their -12 / x86_64-linux-gnu- forms
//   build      make, gmake, sh, dash, bash, cmake, ctest, cpack
//   clang      clang, clang-16, clang++, llc, opt, lld, ld.lld, bpftool
//
// Every group with --min-group (default 300) on-CPU user stacks or more in
// this profile needs >= 95 % of them to start at a thread root (_start,
// clone3, start_thread, or _dl_start_user: the dynamic loader's entry, where
// its constructors run before the program's _start) with no made-up address
// (a raw 0x... in no mapping); and no stack that reaches no root may repeat
// one frame (one address) more than 32 times in a row: a walk that does not
// move (issue 37's churn loops), where recursion, which does, ends at a root.
// With --need GROUP:N, GROUP must have at least N such stacks (a lone gcc:
// cc1 with 100), else the run says too little to tell.
//
//   build_checks.mjs --profile F [--min-group N] [--need GROUP:N]... [--gzip|--plain]

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_USER, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 95;
const MIN_GROUP_STACKS = 300;
const THREAD_ROOTS = new Set(['_start', 'clone3', '__clone3', 'clone', '__clone', 'start_thread', '_dl_start_user']);
const TRUNCATED = '[stack truncated]';
const MAX_REPEATS = 32;
const USAGE = 'usage: build_checks.mjs --profile FILE [--min-group N] [--need GROUP:N]... [--gzip|--plain]';

const GROUPS = [
	['compilers', /^(cc1|cc1plus|cc1obj|lto1)$/],
	['binutils', /^(as|ld|ld\.bfd|ld\.gold|collect2|ar|ranlib|objcopy|strip|x86_64-linux-gnu-(as|ld(\.bfd)?))$/],
	['drivers', /^((x86_64-linux-gnu-)?(gcc|g\+\+|cc|c\+\+)(-\d+)?)$/],
	['build', /^(make|gmake|sh|dash|bash|cmake|ctest|cpack)$/],
	['clang', /^(clang(\+\+)?(-\d+)?|llc(-\d+)?|opt(-\d+)?|lld|ld\.lld|bpftool)$/],
];

// The group a thread name belongs to, or undefined (tests, node, ...: not a build's own).
export function buildGroup(name) {
	return GROUPS.find(([, re]) => re.test(name || ''))?.[0];
}

const isMadeUp = (name) => /^0x[0-9a-f]+$/i.test(name);

// A sample's user frames, root first, with the truncation mark if the walk was cut.
function userFrameIndexes(profile, s) {
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_USER || profile.frameFuncName(f) === TRUNCATED);
}

// The longest run of one frame (one address) in a row.
function longestRepeat(frames) {
	let best = 0, run = 0;
	for (let i = 0; i < frames.length; i++) {
		run = i && frames[i] === frames[i - 1] ? run + 1 : 1;
		best = Math.max(best, run);
	}
	return best;
}

// Per group: { stacks, whole, truncated, loops, byName: Map(name -> [stacks, whole]), ends: Map(root -> n) }.
export function groupStacks(profile) {
	const groups = new Map();
	for (const t of profile.threads) {
		const g = buildGroup(t.name);
		if (!g)
			continue;
		if (!groups.has(g))
			groups.set(g, { stacks: 0, whole: 0, truncated: 0, loops: 0, byName: new Map(), ends: new Map() });
		const acc = groups.get(g);
		for (const s of profile.samplesOf(t)) {
			if (!profile.isOnCpu(s))
				continue;
			const frames = userFrameIndexes(profile, s);
			const names = frames.map((f) => profile.frameFuncName(f));
			if (!names.some((n) => n !== TRUNCATED))
				continue;
			const whole = THREAD_ROOTS.has(names[0]) && !names.some((n) => isMadeUp(n) || n === TRUNCATED);
			acc.stacks++;
			acc.whole += whole ? 1 : 0;
			acc.truncated += names.includes(TRUNCATED) ? 1 : 0;
			if (!whole && longestRepeat(frames) > MAX_REPEATS)
				acc.loops++;
			const per = acc.byName.get(t.name) || [0, 0];
			per[0]++;
			per[1] += whole ? 1 : 0;
			acc.byName.set(t.name, per);
			if (!whole)
				acc.ends.set(names[0], (acc.ends.get(names[0]) || 0) + 1);
		}
	}
	return groups;
}

const top = (map, n) => [...map].sort((a, b) => (b[1][0] ?? b[1]) - (a[1][0] ?? a[1])).slice(0, n);

export function checkBuild(report, profile, { minGroup = MIN_GROUP_STACKS, need = [] }) {
	report.section('a build: whole user stacks per group of processes');
	const groups = groupStacks(profile);
	for (const [g, n] of need) {
		const have = groups.get(g)?.stacks || 0;
		report.check(have >= n, `group ${g}: ${have} on-CPU user stacks (need >= ${n} to tell)`);
	}
	let judged = 0;
	for (const [g, acc] of groups) {
		const names = top(acc.byName, 4).map(([name, [n, w]]) => `${name} ${w}/${n}`).join(', ');
		report.note(`${g}: ${acc.whole} of ${acc.stacks} whole (${names}); not whole by their root frame: ` +
			    `${top(acc.ends, 4).map(([r, n]) => `${r} ${n}`).join(', ') || '-'}`);
		if (acc.stacks < minGroup)
			continue;
		judged++;
		const share = percent(acc.whole, acc.stacks);
		report.check(share >= WHOLE_PERCENT, `group ${g}: ${acc.whole} of ${acc.stacks} (${fmt(share)}%) user ` +
			     `stacks start at a thread root with every frame named (need >= ${WHOLE_PERCENT}%)`);
		report.note(`group ${g}: ${acc.truncated} stacks cut by the unwinder (depth limit, or a step that ` +
			    'did not move up the stack)');
		report.check(acc.loops === 0, `group ${g}: ${acc.loops} stacks without a root repeat one frame more ` +
			     `than ${MAX_REPEATS} times in a row (need 0)`);
	}
	report.check(judged > 0, `${judged} groups with >= ${minGroup} on-CPU user stacks judged (need >= 1)`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		'min-group': { type: 'string' },
		need: { type: 'string', multiple: true },
	});
	const need = (values.need || []).map((x) => x.split(':'));
	if (positionals.length || !values.profile || (values['min-group'] && !/^\d+$/.test(values['min-group'])) ||
	    need.some(([g, n]) => !GROUPS.some(([name]) => name === g) || !/^\d+$/.test(n || '')))
		throw new Error(USAGE);
	const report = new Report(`build check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkBuild(report, profile, { minGroup: Number(values['min-group'] || MIN_GROUP_STACKS),
				      need: need.map(([g, n]) => [g, Number(n)]) });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
