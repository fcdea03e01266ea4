#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// CFI unwinding (issue 16): a profile of `nofp SECONDS DEPTH`, a workload
// built without frame pointers (tests/workloads/nofp.c). With --unwind cfi
// its user stacks must be whole:
//
//   - >= 95 % of its on-CPU samples start at a thread root (_start for the
//     main thread, clone3 for the reader), pass through main (or the
//     reader's entry) and hold no made-up address (a raw 0x... outside
//     every mapping; "libc.so.6+0x..." is a real, unnamed libc frame);
//   - >= 95 % of the samples in nofp_compare show the exact path main ->
//     nofp_recurse x (DEPTH + 1) -> nofp_sort, and >= 90 % cross a libc
//     frame (qsort's, built without frame pointers too) between nofp_sort
//     and nofp_compare;
//   - >= 95 % of the samples in the SIGPROF handler are whole across the
//     signal frame: main -> nofp_recurse x (DEPTH + 1) ... -> (trampoline)
//     -> nofp_on_signal;
//   - >= 95 % of the reader's off-CPU samples in the pipe read show
//     nofp_reader -> nofp_recurse x (DEPTH + 1) -> nofp_block above libc's
//     read();
//   - meta.extra counts the stacks the profile holds and says >= 95 % of
//     them reach a thread root.
//
// --expect-broken is the control run with frame pointers: there fewer than
// half may be whole (by the profile and by its own count), or the workload
// does not test what it should.
//
// --cpp checks a profile of `nofp_cpp SECONDS DEPTH` (tests/workloads/nofp_cpp.cpp)
// instead: >= 95 % of its on-CPU stacks whole from _start through main;
// >= 95 % of the samples in HashWorker::step under main -> cpp_recurse x
// (DEPTH + 1), and >= 90 % of them with the inlined `mix` as an inline frame
// below it; >= 95 % of the samples under __cxa_throw under main ->
// cpp_catcher -> cpp_thrower x (DEPTH + 1).
//
// --churn checks a profile of `threadchurn SECONDS MAX_THREADS` (tests/workloads/threadchurn.c,
// issue 37): 8 short threads started and joined in a loop, -O2 without frame
// pointers against Debian's glibc, so many samples are taken around thread
// creation. Over all its threads' on-CPU samples with user frames: no stack
// holds one function 8 times (the workload has no recursion: a repeat is a
// walk that did not move), >= 95 % start at a thread root with no made-up
// address (and meta.extra says >= 95 % too), and >= 95 % of the samples in
// clone3 (its innermost user frame) show the parent's path from _start
// through pthread_create's caller (churn_spawn) or are the child's first
// frame, its root. With --expect-broken (frame pointers, the control), only
// that no stack holds one function 8 times: the workload has no frame
// pointers to follow, but a walk that does not move ends in one marked frame.
//
// --python checks a profile of Debian's own /usr/bin/python3 running
// tests/workloads/pyloop.py (a recursive pure-Python function on the main
// thread, hashlib on a thread): >= 95 % of each thread's on-CPU stacks
// reach its root, the main thread's through python's main (Py_BytesMain:
// main tail-calls it, so main has no frame of its own), the hasher's
// through start_thread, and run in the interpreter (_PyEval_EvalFrameDefault).
//
//   unwind_checks.mjs --profile F --pid P --depth D --reader T [--expect-broken] [--static] [--gzip|--plain]
//   unwind_checks.mjs --cpp --profile F --pid P --depth D [--gzip|--plain]
//   unwind_checks.mjs --python --profile F --pid P [--gzip|--plain]
//   unwind_checks.mjs --whole-main --profile F --pid P [--gzip|--plain]
//   unwind_checks.mjs --churn --profile F --pid P [--expect-broken] [--gzip|--plain]
//   unwind_checks.mjs --vfork --profile F --pid P [--gzip|--plain]
//   unwind_checks.mjs --short NAME --processes N --profile F --pid 0 [--expect-broken] [--gzip|--plain]
//
// --static: nofp linked -static (non-PIE, no .eh_frame_hdr), its libc inside it: the frames
// between nofp_sort and nofp_compare are libc's qsort, whatever library they name.
//
// --whole-main checks only that >= 95 % of the main thread's on-CPU samples in
// nofp_recurse are whole from _start through main (the unwind-store eviction test).

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { basePid, CATEGORY_KERNEL, CATEGORY_PYTHON, CATEGORY_USER, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 95;
const CROSSES_LIBC_PERCENT = 90;
const BROKEN_MAX_PERCENT = 50;
// The workload's run gives ~1500 samples at 999 Hz; fewer says nothing.
const MIN_SAMPLES = 200;
// The handler burns ~10 % of the CPU: ~150 samples in 2 s at 999 Hz.
const MIN_SIGNAL_SAMPLES = 20;
// The reader is blocked all along: one off-CPU sample per ms.
const MIN_OFFCPU_SAMPLES = 200;
const THREAD_ROOTS = new Set(['_start', 'clone3', '__clone3', 'clone', '__clone', 'start_thread']);

const MIN_THROW_SAMPLES = 20;
// python3's threads share 2 CPUs with the GIL and whatever else runs: a few seconds give each
// hundreds, and 50 are enough to tell 95 % from less.
const MIN_THREAD_SAMPLES = 50;
const INLINE_PERCENT = 90;
const USAGE = 'usage: unwind_checks.mjs --profile FILE --pid PID (--depth D (--reader TID [--expect-broken] | --cpp) | ' +
	'--python | --whole-main | --churn) [--gzip|--plain]';

// A frame the unwinder made up: an address in no mapping of the process.
const isMadeUp = (name) => /^0x[0-9a-f]+$/i.test(name);

// The user frames of a sample, root first: { name, lib, python }; with `python`, Python functions too.
function userFrames(profile, s, python = false) {
	return s.path.filter((f) => profile.frameCategory(f) === CATEGORY_USER ||
			     (python && profile.frameCategory(f) === CATEGORY_PYTHON))
		.map((f) => ({ name: profile.frameFuncName(f), lib: profile.resourceNameOfFunc(profile.frameFunc(f)),
			       python: profile.frameCategory(f) === CATEGORY_PYTHON }));
}

// Whether `frames` starts at a thread root, holds `entry` and no made-up address.
const isWhole = (frames, entry) =>
	frames.length > 0 && THREAD_ROOTS.has(frames[0].name) && frames.some((x) => x.name === entry) &&
	!frames.some((x) => isMadeUp(x.name));

// Whether the frames right below `from` are `level` x (depth + 1), then `next`.
function exactPath(frames, depth, from, next, level = 'nofp_recurse') {
	const m = frames.findIndex((f) => f.name === from);
	if (m < 0)
		return false;
	for (let i = 1; i <= depth + 1; i++) {
		if (frames[m + i]?.name !== level)
			return false;
	}
	return frames[m + depth + 2]?.name === next;
}

// A C++ name as the workload spells it: "(anonymous namespace)::cpp_recurse(int, ...)" -> "cpp_recurse";
// GCC's cold part of a function ("cpp_thrower(int) [clone .cold]", where its throw is) is the function.
const cppName = (name) => name.replace(/ \[clone [^\]]*\]$/, '').replace(/\(anonymous namespace\)::/g, '')
	.replace(/\(.*\)( const)?$/, '');

export function checkUnwindCpp(report, profile, { pid, depth }) {
	report.section(`nofp_cpp (pid ${pid}, depth ${depth}): C++ stacks without frame pointers`);
	const main = profile.threads.filter((t) => String(t.tid) === String(pid));
	const stacks = main.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s).map((f) => ({ ...f, name: cppName(f.name) })))
		.filter((f) => f.length > 0);
	if (!report.check(stacks.length >= MIN_SAMPLES,
			  `${stacks.length} on-CPU samples of the main thread with user frames (need >= ${MIN_SAMPLES})`))
		return;
	const whole = stacks.filter((f) => f[0].name === '_start' && isWhole(f, 'main'));
	checkShare(report, whole, stacks, 'stacks start at _start, pass through main and hold no made-up address');
	const inStep = stacks.filter((f) => f.some((x) => x.name === 'HashWorker::step'));
	checkShare(report, inStep.filter((f) => exactPath(f, depth, 'main', 'HashWorker::step', 'cpp_recurse')), inStep,
		   `samples in HashWorker::step show main -> cpp_recurse x ${depth + 1} -> HashWorker::step`);
	const inlined = inStep.filter((f) => f[f.findIndex((x) => x.name === 'HashWorker::step') + 1]?.name === 'mix');
	report.check(inStep.length > 0 && percent(inlined.length, inStep.length) >= INLINE_PERCENT,
		     `${inlined.length} of ${inStep.length} samples in HashWorker::step show the inlined mix below it ` +
			     `(need >= ${INLINE_PERCENT}%)`);
	const throwing = stacks.filter((f) => f.some((x) => x.name === '__cxa_throw'));
	if (!report.check(throwing.length >= MIN_THROW_SAMPLES,
			  `${throwing.length} samples under __cxa_throw (need >= ${MIN_THROW_SAMPLES})`))
		return;
	checkShare(report, throwing.filter((f) => exactPath(f, depth, 'cpp_catcher', '__cxa_throw', 'cpp_thrower') &&
					    f[f.findIndex((x) => x.name === 'main') + 1]?.name === 'cpp_catcher'),
		   throwing, `samples under __cxa_throw show main -> cpp_catcher -> cpp_thrower x ${depth + 1} -> __cxa_throw`);
}

// With --static, libc is linked into nofp itself: any frame between the two is qsort's.
function crossesLibc(frames, staticLibc = false) {
	const sort = frames.findIndex((f) => f.name === 'nofp_sort');
	const cmp = frames.findIndex((f) => f.name === 'nofp_compare');
	return sort >= 0 && cmp > sort + 1 &&
		frames.slice(sort + 1, cmp).some((f) => staticLibc || /^libc\.so/.test(f.lib ?? ''));
}

function checkShare(report, part, whole, what) {
	report.check(whole.length > 0 && percent(part.length, whole.length) >= WHOLE_PERCENT,
		     `${part.length} of ${whole.length} ${what} (need >= ${WHOLE_PERCENT}%)`);
}

// The signal handler's samples: whole from _start through main, across the
// signal frame (the trampoline, then what it interrupted, sit between main
// and the handler; the interrupted code is anywhere in main's loop).
function checkSignal(report, stacks) {
	const inHandler = stacks.filter((f) => f.some((x) => x.name === 'nofp_on_signal'));
	if (!report.check(inHandler.length >= MIN_SIGNAL_SAMPLES,
			  `${inHandler.length} samples in the SIGPROF handler (need >= ${MIN_SIGNAL_SAMPLES})`))
		return;
	const across = inHandler.filter((f) => f[0].name === '_start' && isWhole(f, 'main') &&
		f.findIndex((x) => x.name === 'nofp_on_signal') > f.findIndex((x) => x.name === 'main') + 1);
	checkShare(report, across, inHandler, 'samples in nofp_on_signal cross the signal frame up to _start -> main');
}

// The reader's off-CPU samples: its caller chain above libc's read().
function checkBlockedReader(report, profile, reader, depth) {
	const thread = profile.threads.find((t) => String(t.tid) === String(reader));
	if (!report.check(!!thread, `the reader thread ${reader} is in the profile`))
		return;
	// Its samples blocked in the pipe read (the kernel's frames say so whatever the user
	// stack); not those of its first 200 ms asleep, taken while the profiler was still
	// reading the process's new mappings.
	// Each row as the samples it stands for (off-CPU rows hold runs of them, issue 37).
	const off = profile.samplesOf(thread).filter((s) => !profile.isOnCpu(s) &&
		s.path.some((f) => profile.frameCategory(f) === CATEGORY_KERNEL && /pipe_read/.test(profile.frameFuncName(f))))
		.flatMap((s) => Array(s.weight).fill(s));
	if (!report.check(off.length >= MIN_OFFCPU_SAMPLES,
			  `${off.length} off-CPU samples of the reader in the pipe read (need >= ${MIN_OFFCPU_SAMPLES})`))
		return;
	const chained = off.map((s) => userFrames(profile, s))
		.filter((f) => isWhole(f, 'nofp_reader') && exactPath(f, depth, 'nofp_reader', 'nofp_block') &&
			f.findIndex((x) => x.name === 'nofp_block') < f.length - 1);
	checkShare(report, chained, off, `off-CPU samples of the reader show a thread root -> nofp_reader -> ` +
		   `nofp_recurse x ${depth + 1} -> nofp_block above libc`);
}

// meta.extra's own count of whole stacks: it must add up to the samples in the file.
function checkExtraCounts(report, profile, expectBroken) {
	const total = profile.extraValue('User stacks (on-CPU samples)');
	const roots = profile.extraValue('User stacks reaching a thread root');
	const inFile = profile.threads.flatMap((t) => profile.samplesOf(t))
		.filter((s) => profile.isOnCpu(s) && userFrames(profile, s).length > 0).length;
	if (!report.check(Number.isInteger(total) && Number.isInteger(roots),
			  `meta.extra counts user stacks (${total}) and those reaching a root (${roots})`))
		return;
	report.check(total === inFile, `meta.extra's ${total} user stacks are the file's ${inFile} on-CPU samples ` +
		     'with user frames');
	const share = percent(roots, total);
	if (expectBroken)
		report.check(share < BROKEN_MAX_PERCENT, `meta.extra: ${fmt(share)}% reach a thread root with frame ` +
			     `pointers (need < ${BROKEN_MAX_PERCENT}%)`);
	else
		report.check(share >= WHOLE_PERCENT, `meta.extra: ${roots} of ${total} (${fmt(share)}%) reach a thread ` +
			     `root (need >= ${WHOLE_PERCENT}%)`);
}

export function checkUnwind(report, profile, { pid, depth, reader, expectBroken, staticLibc = false }) {
	report.section(`nofp (pid ${pid}, depth ${depth}): user stacks without frame pointers`);
	const threads = profile.threadsOf(String(pid));
	if (!report.check(threads.length > 0, `process ${pid} is in the profile (${threads.length} threads)`))
		return;
	const main = threads.filter((t) => String(t.tid) === String(pid));
	const stacks = main.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s)).filter((f) => f.length > 0);
	if (!report.check(stacks.length >= MIN_SAMPLES,
			  `${stacks.length} on-CPU samples of the main thread with user frames (need >= ${MIN_SAMPLES})`))
		return;
	const whole = stacks.filter((f) => f[0].name === '_start' && isWhole(f, 'main'));
	const roots = new Map();
	for (const f of stacks)
		roots.set(f[0].name, (roots.get(f[0].name) || 0) + 1);
	report.note(`roots: ${[...roots].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([n, c]) => `${n} ${c}`).join(', ')}`);
	const share = percent(whole.length, stacks.length);
	if (expectBroken) {
		report.check(share < BROKEN_MAX_PERCENT,
			     `with frame pointers, ${fmt(share)}% of ${stacks.length} stacks are whole: the workload has ` +
				     `none to follow (need < ${BROKEN_MAX_PERCENT}%)`);
		checkExtraCounts(report, profile, true);
		return;
	}
	checkShare(report, whole, stacks, `stacks (${fmt(share)}%) start at _start, pass through main and hold no ` +
		   'made-up address');
	const inCompare = stacks.filter((f) => f.some((x) => x.name === 'nofp_compare') &&
					!f.some((x) => x.name === 'nofp_on_signal'));
	checkShare(report, inCompare.filter((f) => exactPath(f, depth, 'main', 'nofp_sort')), inCompare,
		   `samples in nofp_compare show main -> nofp_recurse x ${depth + 1} -> nofp_sort`);
	report.check(inCompare.length > 0 && percent(inCompare.filter((f) => crossesLibc(f, staticLibc)).length, inCompare.length) >=
			     CROSSES_LIBC_PERCENT,
		     `${inCompare.filter((f) => crossesLibc(f, staticLibc)).length} of ${inCompare.length} samples in nofp_compare cross a ` +
			     `libc frame between nofp_sort and it (need >= ${CROSSES_LIBC_PERCENT}%)`);
	checkSignal(report, stacks);
	checkBlockedReader(report, profile, reader, depth);
	checkExtraCounts(report, profile, false);
}

// --whole-main: only that the main thread's on-CPU stacks in nofp_recurse are whole from _start
// through main (a -a recording in which unwind tables are evicted under it, issues 20 and 38).
export function checkWholeMain(report, profile, { pid }) {
	report.section(`nofp (pid ${pid}): whole stacks of the main thread`);
	const main = profile.threads.filter((t) => String(t.tid) === String(pid));
	const stacks = main.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s)).filter((f) => f.some((x) => x.name === 'nofp_recurse'));
	if (!report.check(stacks.length >= MIN_SAMPLES,
			  `${stacks.length} on-CPU samples of the main thread in nofp_recurse (need >= ${MIN_SAMPLES})`))
		return;
	checkShare(report, stacks.filter((f) => f[0].name === '_start' && isWhole(f, 'main')), stacks,
		   'stacks in nofp_recurse start at _start, pass through main and hold no made-up address');
}

// --short NAME: every process named NAME (short-lived copies of one -O2 program): >= 98 % of their
// on-CPU samples with user frames are whole from _start with no made-up address, in at least
// 90 % of the --processes the workload ran (a short process with no sample says nothing).
const SHORT_WHOLE_PERCENT = 98;
const SHORT_MIN_PROCESS_SHARE = 0.9;
export function checkShortLived(report, profile, { name, processes, expectBroken }) {
	report.section(`${processes} short-lived copies of ${name}`);
	const threads = profile.threads.filter((t) => t.name === name);
	const pids = new Set(threads.map((t) => t.pid));
	report.check(pids.size >= Math.ceil(processes * SHORT_MIN_PROCESS_SHARE),
		     `${pids.size} processes named ${name} in the profile (need >= ${SHORT_MIN_PROCESS_SHARE * 100}% of ` +
		     `${processes})`);
	const stacks = threads.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s)).filter((f) => f.length > 0);
	if (!report.check(stacks.length >= MIN_SAMPLES, `${stacks.length} on-CPU samples with user frames ` +
			  `(need >= ${MIN_SAMPLES})`))
		return;
	const whole = stacks.filter((f) => f[0].name === '_start' && !f.some((x) => isMadeUp(x.name)));
	const share = percent(whole.length, stacks.length);
	if (expectBroken)
		report.check(share < BROKEN_MAX_PERCENT, `${whole.length} of ${stacks.length} (${fmt(share)}%) are ` +
			     `whole from _start with frame pointers (need < ${BROKEN_MAX_PERCENT}%)`);
	else
		report.check(share >= SHORT_WHOLE_PERCENT, `${whole.length} of ${stacks.length} (${fmt(share)}%) are ` +
			     `whole from _start, every frame named (need >= ${SHORT_WHOLE_PERCENT}%)`);
}

const CHURN_MAX_REPEATS = 8;
// ~10 % of the samples are in clone3, of a few thousand.
const MIN_CLONE_SAMPLES = 20;
const CLONE_FUNCS = new Set(['clone3', '__clone3', 'clone', '__clone']);
export function checkThreadChurn(report, profile, { pid, expectBroken }) {
	report.section(`threadchurn (pid ${pid}): stacks of threads that come and go`);
	const threads = profile.threadsOf(String(pid));
	if (!report.check(threads.length > 1, `process ${pid} is in the profile with its threads (${threads.length})`))
		return;
	const stacks = threads.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s)).filter((f) => f.length > 0);
	if (!report.check(stacks.length >= MIN_SAMPLES,
			  `${stacks.length} on-CPU samples with user frames (need >= ${MIN_SAMPLES})`))
		return;
	const mostRepeated = (frames) => {
		const counts = new Map();
		for (const f of frames)
			counts.set(f.name, (counts.get(f.name) || 0) + 1);
		return Math.max(...counts.values());
	};
	const repeating = stacks.filter((f) => mostRepeated(f) >= CHURN_MAX_REPEATS);
	report.check(repeating.length === 0, `${repeating.length} of ${stacks.length} stacks hold one function ` +
		     `${CHURN_MAX_REPEATS} times or more (need 0)` +
		     (repeating.length ? `; the first, root first: ${repeating[0].slice(0, 6).map((x) => x.name).join(' <- ')} ...` : ''));
	const roots = new Map();
	for (const f of stacks)
		roots.set(f[0].name, (roots.get(f[0].name) || 0) + 1);
	report.note(`roots: ${[...roots].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([n, c]) => `${n} ${c}`).join(', ')}`);
	if (expectBroken)
		return;
	const rooted = stacks.filter((f) => THREAD_ROOTS.has(f[0].name) && !f.some((x) => isMadeUp(x.name)));
	checkShare(report, rooted, stacks, 'stacks start at a thread root and hold no made-up address');
	const inClone = stacks.filter((f) => CLONE_FUNCS.has(f[f.length - 1].name));
	if (!report.check(inClone.length >= MIN_CLONE_SAMPLES,
			  `${inClone.length} samples in clone3 (need >= ${MIN_CLONE_SAMPLES})`))
		return;
	const parent = inClone.filter((f) => f[0].name === '_start' && f.some((x) => x.name === 'churn_spawn'));
	const child = inClone.filter((f) => f.length === 1);
	report.note(`in clone3: ${parent.length} the parent's, ${child.length} the child's`);
	checkShare(report, [...parent, ...child], inClone, 'samples in clone3 show _start -> ... -> churn_spawn ' +
		   '(the parent) or clone3 alone (the child, its root)');
	checkExtraCounts(report, profile, false);
}

export function checkUnwindPython(report, profile, { pid }) {
	report.section(`python3 (pid ${pid}): Debian's interpreter, built without frame pointers`);
	const threads = profile.threadsOf(String(pid));
	if (!report.check(threads.length >= 2, `process ${pid} is in the profile with its 2 threads (${threads.length})`))
		return;
	for (const t of threads) {
		const isMain = String(t.tid) === String(pid);
		const stacks = profile.samplesOf(t).filter((s) => profile.isOnCpu(s)).map((s) => userFrames(profile, s, true))
			.filter((f) => f.length > 0);
		if (!report.check(stacks.length >= MIN_THREAD_SAMPLES, `thread ${t.tid} (${t.name}): ${stacks.length} ` +
				  `on-CPU samples with user frames (need >= ${MIN_THREAD_SAMPLES})`))
			continue;
		const entry = isMain ? 'Py_BytesMain' : 'start_thread';
		const whole = stacks.filter((f) => (isMain ? f[0].name === '_start' : true) && isWhole(f, entry));
		checkShare(report, whole, stacks, `stacks of thread ${t.tid} start at ${isMain ? '_start' : 'its root'}, ` +
			   `pass through ${entry} and hold no made-up address`);
		// The interpreter loop, or the Python functions it runs in its place (issue 26).
		checkShare(report, whole.filter((f) => f.some((x) => x.name === '_PyEval_EvalFrameDefault' || x.python)),
			   stacks, `stacks of thread ${t.tid} are whole and in the interpreter ` +
			   '(_PyEval_EvalFrameDefault, or Python functions in its place)');
	}
}

// --vfork: vforker's own process (tests/workloads/vforker.c), not its children: of its on-CPU
// samples whose innermost user frame is glibc's vfork (__vfork), >= 95 % are whole from _start
// through main -> vfork_loop -> vfork_one. A few copies of the process take many such samples
// (the kernel's copy_process); fewer than MIN_VFORK_SAMPLES say nothing.
const MIN_VFORK_SAMPLES = 30;
const VFORK_FUNCS = new Set(['__vfork', 'vfork', '__libc_vfork']);
const CHILDREN_NAMED_PERCENT = 98;
export function checkVfork(report, profile, { pid }) {
	report.section(`vforker (pid ${pid}): stacks in vfork`);
	const stacks = profile.threadsOf(String(pid)).flatMap((t) => profile.samplesOf(t))
		.filter((s) => profile.isOnCpu(s)).map((s) => userFrames(profile, s))
		.filter((f) => f.length > 0 && VFORK_FUNCS.has(f[f.length - 1].name));
	if (!report.check(stacks.length >= MIN_VFORK_SAMPLES, `${stacks.length} on-CPU samples in vfork ` +
			  `(need >= ${MIN_VFORK_SAMPLES})`))
		return;
	const whole = stacks.filter((f) => f[0].name === '_start' && isWhole(f, 'main') &&
				    exactOrder(f, ['main', 'vfork_loop', 'vfork_one']));
	const ends = new Map();
	for (const f of stacks)
		ends.set(f[0].name, (ends.get(f[0].name) || 0) + 1);
	report.note(`roots: ${[...ends].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([n, c]) => `${n} ${c}`).join(', ')}`);
	checkShare(report, whole, stacks, 'samples in vfork start at _start and pass through main -> vfork_loop -> ' +
		   'vfork_one');
	// Its children: a few samples each, many in execve before the old memory goes, in the parent's code
	// (the model reads them after the exec's record): every frame named, in the image they ran.
	const children = profile.threads.filter((t) => basePid(t.pid) !== String(pid))
		.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => userFrames(profile, s)).filter((f) => f.length > 0);
	if (!report.check(children.length >= MIN_VFORK_SAMPLES, `${children.length} on-CPU samples of its children ` +
			  `with user frames (need >= ${MIN_VFORK_SAMPLES})`))
		return;
	const named = children.filter((f) => !f.some((x) => isMadeUp(x.name)));
	report.check(percent(named.length, children.length) >= CHILDREN_NAMED_PERCENT,
		     `${named.length} of ${children.length} samples of its children name every frame (need >= ` +
		     `${CHILDREN_NAMED_PERCENT}%)`);
}

// Whether `names` appear in `frames` in this order, one right after the other.
function exactOrder(frames, names) {
	const i = frames.findIndex((f) => f.name === names[0]);
	return i >= 0 && names.every((n, k) => frames[i + k]?.name === n);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		depth: { type: 'string' },
		reader: { type: 'string' },
		'expect-broken': { type: 'boolean' },
		cpp: { type: 'boolean' },
		python: { type: 'boolean' },
		'whole-main': { type: 'boolean' },
		churn: { type: 'boolean' },
		vfork: { type: 'boolean' },
		static: { type: 'boolean' },
		short: { type: 'string' },
		processes: { type: 'string' },
	});
	const plain = !values.python && !values['whole-main'] && !values.short && !values.churn && !values.vfork;
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') ||
	    (plain && !/^\d+$/.test(values.depth || '')) ||
	    (plain && !values.cpp && !/^\d+$/.test(values.reader || '')))
		throw new Error(USAGE);
	const report = new Report(`unwind check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	if (values.short)
		checkShortLived(report, profile, { name: values.short, processes: Number(values.processes || 0),
						   expectBroken: !!values['expect-broken'] });
	else if (values.vfork)
		checkVfork(report, profile, { pid: values.pid });
	else if (values.churn)
		checkThreadChurn(report, profile, { pid: values.pid, expectBroken: !!values['expect-broken'] });
	else if (values.python)
		checkUnwindPython(report, profile, { pid: values.pid });
	else if (values['whole-main'])
		checkWholeMain(report, profile, { pid: values.pid });
	else if (values.cpp)
		checkUnwindCpp(report, profile, { pid: values.pid, depth: Number(values.depth) });
	else
		checkUnwind(report, profile, { pid: values.pid, depth: Number(values.depth), reader: values.reader,
					       expectBroken: !!values['expect-broken'], staticLibc: !!values.static });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
