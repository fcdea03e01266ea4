#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Go stacks (issue 26), on profiles of tests/workloads/go built by Debian's
// golang-go:
//
// --go: `gowork SECONDS` (also built -ldflags='-s -w'): of the process's
//   on-CPU samples in crypto/sha256's assembly block function, >= 95 % show
//   the whole Go caller chain from a goroutine root: runtime.goexit ->
//   runtime.main -> main.main -> main.worker -> main.middle -> main.leaf,
//   or runtime.goexit -> main.spinner -> main.leaf (the second goroutine),
//   each goroutine with its share; no made-up address; meta.extra's Go
//   figures say >= 95 % of the Go stacks reach a root; and main.leaf's
//   frames name gowork.go and a line (from .gopclntab when -s -w took DWARF).
//
// --go --expect-broken: the same workload unwound with frame pointers
//   (--unwind fp), the control: block uses BP as a register, so fewer than
//   half of those samples may be whole, or the check does not test what
//   it should.
//
// --cgo: `gocgo SECONDS`: >= 95 % of the samples in c_burn (C called from
//   Go) show runtime.main -> main.main -> main.worker ->
//   main._Cfunc_c_outer -> ... -> c_outer -> c_burn from the root, and >= 95 %
//   of those in main.goCallback (C calling back into Go) show runtime.main
//   -> main.main -> main.worker -> main._Cfunc_c_outer -> ... -> main.goCallback.
//
// --park: `gopark SECONDS` (issue 37): of the process's samples on g0 under
//   runtime.mcall -> runtime.park_m (on- and off-CPU), >= 50 and none
//   holding runtime.mcall twice (a walk that went down the BP chain of g0's
//   frames one link per step instead of crossing the switch once), and
//   >= 95 % show a Go root -> main.relay or main.main -> runtime.mcall ->
//   runtime.park_m.
//
//   go_checks.mjs (--go [--expect-broken] | --cgo | --park) --profile F --pid P [--gzip|--plain]

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_USER, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 95;
const BROKEN_MAX_PERCENT = 50;
// 2 s at 999 Hz on 2 CPUs; the hot function holds most of it.
const MIN_SAMPLES = 200;
// Each goroutine (or path) needs enough samples to say something.
const MIN_PATH_SAMPLES = 50;
const USAGE = 'usage: go_checks.mjs (--go [--expect-broken] | --cgo | --park) --profile FILE --pid PID [--gzip|--plain]';

// Go's symbol table names assembly functions with their ABI: "runtime.goexit.abi0".
export const goName = (name) => name.replace(/\.abi0$/, '');
const GO_ROOTS = new Set(['runtime.goexit', 'runtime.rt0_go', 'runtime.mstart']);
const isMadeUp = (name) => /^0x[0-9a-f]+$/i.test(name);

// The user frames' names of a sample, root first, without ABI suffixes.
function userNames(profile, s) {
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_USER)
		.map((f) => goName(profile.frameFuncName(f)));
}

// Whether `names` starts at a Go root, holds `chain` in this order and no made-up address.
export function wholeChain(names, chain) {
	if (!names.length || !GO_ROOTS.has(names[0]) || names.some(isMadeUp))
		return false;
	let at = 0;
	for (const want of chain) {
		at = names.indexOf(want, at);
		if (at < 0)
			return false;
		at++;
	}
	return true;
}

function onCpuStacks(profile, pid) {
	return profile.threadsOf(String(pid)).flatMap((t) => profile.samplesOf(t))
		.filter((s) => profile.isOnCpu(s)).map((s) => userNames(profile, s)).filter((n) => n.length > 0);
}

function checkShare(report, part, whole, what, expectBroken = false) {
	const share = percent(part.length, whole.length);
	if (expectBroken)
		report.check(whole.length > 0 && share < BROKEN_MAX_PERCENT,
			     `${part.length} of ${whole.length} ${what} with frame pointers (need < ${BROKEN_MAX_PERCENT}%)`);
	else
		report.check(whole.length > 0 && share >= WHOLE_PERCENT,
			     `${part.length} of ${whole.length} ${what} (need >= ${WHOLE_PERCENT}%)`);
}

// meta.extra's Go figures: counted, and (unless broken on purpose) >= 95 % whole.
function checkGoExtra(report, profile, expectBroken) {
	const total = profile.extraValue('User stacks, Go');
	const roots = profile.extraValue('User stacks, Go, reaching a thread root');
	if (!report.check(Number.isInteger(total) && total > 0 && Number.isInteger(roots),
			  `meta.extra counts Go user stacks (${total}) and those reaching a root (${roots})`))
		return;
	if (!expectBroken)
		report.check(percent(roots, total) >= WHOLE_PERCENT, `meta.extra: ${roots} of ${total} ` +
			     `(${fmt(percent(roots, total))}%) Go stacks reach a root (need >= ${WHOLE_PERCENT}%)`);
}

const MAIN_CHAIN = ['runtime.main', 'main.main', 'main.worker', 'main.middle', 'main.leaf', 'crypto/sha256.block'];
const SPINNER_CHAIN = ['main.spinner', 'main.leaf', 'crypto/sha256.block'];

export function checkGo(report, profile, { pid, expectBroken = false }) {
	report.section(`gowork (pid ${pid}): Go hot in crypto/sha256's assembly`);
	const inBlock = onCpuStacks(profile, pid).filter((n) => n[n.length - 1] === 'crypto/sha256.block');
	if (!report.check(inBlock.length >= MIN_SAMPLES,
			  `${inBlock.length} on-CPU samples in crypto/sha256.block (need >= ${MIN_SAMPLES})`))
		return;
	const viaMain = inBlock.filter((n) => wholeChain(n, MAIN_CHAIN));
	const viaSpinner = inBlock.filter((n) => wholeChain(n, SPINNER_CHAIN) && !n.includes('main.main'));
	checkShare(report, [...viaMain, ...viaSpinner], inBlock,
		   'samples in crypto/sha256.block show their whole goroutine: a Go root -> runtime.main -> main.main ' +
		   '-> main.worker -> main.middle -> main.leaf, or a Go root -> main.spinner -> main.leaf', expectBroken);
	if (!expectBroken) {
		report.check(viaMain.length >= MIN_PATH_SAMPLES && viaSpinner.length >= MIN_PATH_SAMPLES,
			     `both goroutines are there: ${viaMain.length} via main.worker, ${viaSpinner.length} via ` +
			     `main.spinner (need >= ${MIN_PATH_SAMPLES} each)`);
		report.check(viaSpinner.every((n) => n[0] === 'runtime.goexit'),
			     'the second goroutine starts at runtime.goexit');
	}
	checkGoExtra(report, profile, expectBroken);
	if (!expectBroken)
		checkGoLines(report, profile);
}

// main.leaf's frames name gowork.go and a line: from DWARF, or from .gopclntab when -s -w took it.
function checkGoLines(report, profile) {
	const ft = profile.shared.frameTable;
	const fn = profile.shared.funcTable;
	const places = new Set();
	for (let f = 0; f < ft.func.length; f++) {
		if (goName(profile.funcName(ft.func[f])) !== 'main.leaf')
			continue;
		const src = fn.source?.[ft.func[f]];
		places.add(`${src == null ? '?' : profile.string(profile.shared.sources.filename[src])}:${ft.line[f]}`);
	}
	report.check(places.size > 0 && [...places].every((p) => /\/gowork\.go:[1-9]\d*$/.test(p)),
		     `main.leaf's frames name gowork.go and their line (${[...places].join(', ')})`);
}

export function checkCgo(report, profile, { pid }) {
	report.section(`gocgo (pid ${pid}): Go calling C, C calling back into Go`);
	const stacks = onCpuStacks(profile, pid);
	const inC = stacks.filter((n) => n[n.length - 1] === 'c_burn');
	const inCallback = stacks.filter((n) => n.includes('main.goCallback'));
	if (!report.check(inC.length >= MIN_PATH_SAMPLES && inCallback.length >= MIN_PATH_SAMPLES,
			  `${inC.length} on-CPU samples in c_burn and ${inCallback.length} under main.goCallback ` +
			  `(need >= ${MIN_PATH_SAMPLES} each)`))
		return;
	const toC = ['runtime.main', 'main.main', 'main.worker', 'main._Cfunc_c_outer', 'c_outer', 'c_burn'];
	checkShare(report, inC.filter((n) => wholeChain(n, toC)), inC,
		   `samples in c_burn show a Go root -> ${toC.join(' -> ')}`);
	const back = ['runtime.main', 'main.main', 'main.worker', 'main._Cfunc_c_outer', 'main.goCallback'];
	checkShare(report, inCallback.filter((n) => wholeChain(n, back)), inCallback,
		   `samples under main.goCallback show a Go root -> ${back.join(' -> ')}`);
	checkGoExtra(report, profile, false);
}

// Every sample's user frames (off-CPU ones too: a parked thread sleeps on g0).
function allStacks(profile, pid) {
	return profile.threadsOf(String(pid)).flatMap((t) => profile.samplesOf(t))
		.map((s) => userNames(profile, s)).filter((n) => n.length > 0);
}

export function checkPark(report, profile, { pid }) {
	report.section(`gopark (pid ${pid}): stacks on g0 under runtime.mcall`);
	const onG0 = allStacks(profile, pid).filter((n) => n.includes('runtime.park_m') && n.includes('runtime.mcall'));
	if (!report.check(onG0.length >= MIN_PATH_SAMPLES,
			  `${onG0.length} samples under runtime.mcall -> runtime.park_m (need >= ${MIN_PATH_SAMPLES})`))
		return;
	const stairs = onG0.filter((n) => n.filter((x) => x === 'runtime.mcall').length > 1);
	report.check(stairs.length === 0, `${stairs.length} of them hold runtime.mcall more than once (need 0)` +
		     (stairs.length ? `, e.g. ${stairs[0].join(' -> ')}` : ''));
	const whole = onG0.filter((n) => ['main.relay', 'main.main'].some(
		(g) => wholeChain(n, [g, 'runtime.mcall', 'runtime.park_m'])));
	checkShare(report, whole, onG0,
		   'samples under runtime.park_m show a Go root -> main.relay or main.main -> runtime.mcall -> ' +
		   'runtime.park_m');
	checkGoExtra(report, profile, false);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		go: { type: 'boolean' },
		cgo: { type: 'boolean' },
		park: { type: 'boolean' },
		'expect-broken': { type: 'boolean' },
	});
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') ||
	    [values.go, values.cgo, values.park].filter(Boolean).length !== 1)
		throw new Error(USAGE);
	const report = new Report(`Go check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	if (values.go)
		checkGo(report, profile, { pid: values.pid, expectBroken: !!values['expect-broken'] });
	else if (values.cgo)
		checkCgo(report, profile, { pid: values.pid });
	else
		checkPark(report, profile, { pid: values.pid });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
