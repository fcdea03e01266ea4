// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of unwind_checks.mjs (node --test): whole stacks of the nofp
// workload pass; stacks cut short, with a made-up address, a level too few,
// without qsort's libc frame, a handler cut at the signal frame, a reader
// cut at libc, or a meta.extra count that disagrees with the file fail; the
// frame-pointer control passes only when its stacks are broken. Needs no
// root and no bpfprof.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails } from './selftest_assert.mjs';
import { CAT, ProfileBuilder } from './synth.mjs';
import { checkUnwind, checkUnwindCpp, checkUnwindPython } from './unwind_checks.mjs';

const work = mkdtempSync(join(tmpdir(), 'bpfprof-unwind-selftest-'));
after(() => rmSync(work, { recursive: true, force: true }));

const PID = 7100;
const READER = 7101;
const DEPTH = 5;
const N = 400;
const SIGNALS = 40;
const NOFP = (name) => [name, CAT.USER, 'nofp'];
const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];
const K = (name) => [name, CAT.KERNEL, null];
const recursion = (depth) => Array.from({ length: depth + 1 }, () => NOFP('nofp_recurse'));

// nofp's stacks: `broken` of every N samples go wrong in the way `how` says.
function nofpProfile({ broken = 0, how = 'cut', depth = DEPTH, extraRoots = null } = {}) {
	const b = new ProfileBuilder({ interval: 1 });
	const t = b.thread({ pid: PID, tid: PID, name: 'nofp', isMainThread: true, processName: 'nofp' });
	const reader = b.thread({ pid: PID, tid: READER, name: 'nofp', processName: 'nofp' });
	const whole = [LIBC('_start'), LIBC('__libc_start_main'), NOFP('main'), ...recursion(depth), NOFP('nofp_sort'),
		       LIBC('qsort'), LIBC('msort_with_tmp'), NOFP('nofp_compare')];
	const handler = [...whole, LIBC('libc.so.6+0x3c050'), NOFP('nofp_on_signal')];
	const blocked = [LIBC('clone3'), LIBC('start_thread'), NOFP('nofp_reader'), ...recursion(depth),
			 NOFP('nofp_block'), LIBC('read'), K('ksys_read'), K('anon_pipe_read'), K('schedule'),
			 ['off-CPU: sleeping', CAT.IDLE, null]];
	// Its first 200 ms asleep, walked before its mappings were read: not in the pipe read, not judged.
	const asleep = [NOFP('0x55b7001ea16000'), LIBC('clock_nanosleep'), K('hrtimer_nanosleep'), K('schedule'),
			['off-CPU: sleeping', CAT.IDLE, null]];
	let roots = 0;
	for (let i = 0; i < N; i++) {
		const signal = i >= N - SIGNALS;
		let stack = signal ? handler : whole;
		let off = blocked;
		if (i < broken) {
			if (how === 'cut')
				stack = [NOFP('nofp_compare')];
			else if (how === 'address')
				stack = [LIBC('_start'), NOFP('main'), NOFP('0x5555deadbeef'), NOFP('nofp_compare')];
			else if (how === 'no-libc' && !signal)
				stack = whole.filter((f) => f[0] !== 'qsort' && f[0] !== 'msort_with_tmp');
			else if (how === 'signal' && signal)
				stack = [NOFP('nofp_on_signal')];
			else if (how === 'reader')
				off = blocked.slice(blocked.findIndex((f) => f[0] === 'read'));
		}
		if (stack[0][0] === '_start')
			roots++;
		reader.sample(i < 40 ? asleep : off, i + 1, 0);
		t.sample(stack, i + 1, 1000);
	}
	const cut = how === 'reader' && broken ? blocked.slice(blocked.findIndex((f) => f[0] === 'read')) : blocked;
	for (let i = 0; i < 40; i++)
		reader.sample(cut, N + 1 + i, 0);
	const json = b.build();
	const total = extraRoots?.total ?? N;
	json.meta.extra = [{ label: 'bpfprof', entries: [
		{ label: 'User stacks (on-CPU samples)', format: 'integer', value: total },
		{ label: 'User stacks reaching a thread root', format: 'integer', value: extraRoots?.roots ?? roots },
	] }];
	return json;
}

// nofp_cpp's stacks, as GCC names its frames; `broken` of every N go wrong as `how` says.
const CPP = (name) => [name, CAT.USER, 'nofp_cpp'];
const GCC = (name) => [name, CAT.USER, 'libgcc_s.so.1'];
function cppProfile({ broken = 0, how = 'no-inline' } = {}) {
	const b = new ProfileBuilder({ interval: 1 });
	const t = b.thread({ pid: PID, tid: PID, name: 'nofp_cpp', isMainThread: true, processName: 'nofp_cpp' });
	const top = [LIBC('_start'), LIBC('__libc_start_main'), CPP('main')];
	const recurse = Array.from({ length: DEPTH + 1 },
				   () => CPP('(anonymous namespace)::cpp_recurse(int, (anonymous namespace)::Worker&, unsigned long)'));
	const throwers = Array.from({ length: DEPTH }, () => CPP('(anonymous namespace)::cpp_thrower(int)'));
	const step = [...top, ...recurse, CPP('(anonymous namespace)::HashWorker::step(unsigned long)'), CPP('mix')];
	const thrown = [...top, CPP('(anonymous namespace)::cpp_catcher(int)'), ...throwers,
			CPP('(anonymous namespace)::cpp_thrower(int) [clone .cold]'), CPP('__cxa_throw'),
			GCC('_Unwind_RaiseException'), GCC('libgcc_s.so.1+0x169ba')];
	for (let i = 0; i < N; i++) {
		let stack = i % 2 ? step : thrown;
		if (i < broken) {
			if (how === 'no-inline')
				stack = i % 2 ? step.slice(0, -1) : thrown;
			else if (how === 'level')
				stack = i % 2 ? step : thrown.filter((f, k) => k !== 4);
		}
		t.sample(stack, i + 1, 1000);
	}
	return b.build();
}

// python3's two threads; `broken` of every N samples of the hasher stop early (no root).
const PY = (name) => [name, CAT.USER, 'python3.11'];
function pythonProfile({ broken = 0 } = {}) {
	const b = new ProfileBuilder({ interval: 1 });
	const main = b.thread({ pid: PID, tid: PID, name: 'python3', isMainThread: true, processName: 'python3' });
	const hasher = b.thread({ pid: PID, tid: READER, name: 'python3', processName: 'python3' });
	const eval_ = [PY('_PyEval_EvalFrameDefault'), PY('python3.11+0x19de9f')];
	for (let i = 0; i < N; i++) {
		main.sample([LIBC('_start'), LIBC('__libc_start_main'), PY('Py_BytesMain'), PY('Py_RunMain'), ...eval_], i + 1,
			    1000);
		hasher.sample(i < broken ? eval_ : [LIBC('clone3'), LIBC('start_thread'), PY('python3.11+0x2543b3'), ...eval_],
			      i + 1, 1000);
	}
	return b.build();
}

function failures(json, opts) {
	const path = join(work, `p${Math.random().toString(36).slice(2)}.json`);
	writeFileSync(path, JSON.stringify(json));
	const report = new Report('selftest', { out: () => {} });
	if (opts?.python)
		checkUnwindPython(report, Profile.fromFile(path), { pid: PID });
	else if (opts?.cpp)
		checkUnwindCpp(report, Profile.fromFile(path), { pid: PID, depth: DEPTH });
	else
		checkUnwind(report, Profile.fromFile(path), { pid: PID, depth: DEPTH, reader: READER, ...opts });
	return report.failures;
}

describe('unwind checks', () => {
	test('whole stacks pass', () => assert.deepEqual(failures(nofpProfile()), []));
	test('4 % of stacks cut short pass', () => assert.deepEqual(failures(nofpProfile({ broken: 16 })), []));
	test('10 % of stacks cut short fail', () =>
		assertOnlyFails(failures(nofpProfile({ broken: 40 })),
				[/stacks \(90\.0%\) start at _start/, /samples in nofp_compare show main/, /meta.extra: 360 of 400/,
				 /^320 of 360 samples in nofp_compare cross/]));
	test('made-up addresses fail', () =>
		assertOnlyFails(failures(nofpProfile({ broken: 40, how: 'address' })),
				[/stacks \(90\.0%\) start at _start/, /samples in nofp_compare show main/,
				 /^320 of 360 samples in nofp_compare cross/]));
	test('a level missing fails the exact path only', () =>
		assertOnlyFails(failures(nofpProfile({ depth: DEPTH - 1 })),
				[/^0 of 360 samples in nofp_compare show main/, /^0 of 400 off-CPU samples of the reader/]));
	test('no libc frame between nofp_sort and nofp_compare fails', () =>
		assertOnlyFails(failures(nofpProfile({ broken: N, how: 'no-libc' })), [/^0 of 360 samples in nofp_compare cross/]));
	test('the frame-pointer control passes broken stacks and fails whole ones', () => {
		assert.deepEqual(failures(nofpProfile({ broken: N }), { expectBroken: true }), []);
		assertOnlyFails(failures(nofpProfile(), { expectBroken: true }), [/with frame pointers, 100\.0% of 400 stacks are whole/,
									  /meta.extra: 100\.0% reach a thread root with frame pointers/]);
	});
	test('a handler cut at the signal frame fails', () =>
		assertOnlyFails(failures(nofpProfile({ broken: N, how: 'signal' })),
				[/^0 of 40 samples in nofp_on_signal cross the signal frame/, /stacks \(90\.0%\) start at _start/,
				 /meta.extra: 360 of 400/]));
	test('a reader cut at libc fails', () =>
		assertOnlyFails(failures(nofpProfile({ broken: N, how: 'reader' })), [/^0 of 400 off-CPU samples of the reader/]));
	test('meta.extra counts that disagree with the file fail', () => {
		assertOnlyFails(failures(nofpProfile({ extraRoots: { total: N + 7 } })),
				[/meta.extra's 407 user stacks are the file's 400/]);
		assertOnlyFails(failures(nofpProfile({ extraRoots: { roots: 100 } })), [/meta.extra: 100 of 400/]);
	});
	test('C++: whole stacks pass, with the cold clone of a thrower counted as its level', () =>
		assert.deepEqual(failures(cppProfile(), { cpp: true }), []));
	test('C++: a step without its inlined mix fails', () =>
		assertOnlyFails(failures(cppProfile({ broken: N, how: 'no-inline' }), { cpp: true }),
				[/^0 of 200 samples in HashWorker::step show the inlined mix/]));
	test('C++: a thrower level missing fails', () =>
		assertOnlyFails(failures(cppProfile({ broken: N, how: 'level' }), { cpp: true }),
				[/^0 of 200 samples under __cxa_throw show main -> cpp_catcher/]));
	test('python3: whole stacks pass; a thread cut short fails', () => {
		assert.deepEqual(failures(pythonProfile(), { python: true }), []);
		assertOnlyFails(failures(pythonProfile({ broken: 40 }), { python: true }),
				[/^360 of 400 stacks of thread 7101 start at its root/, /^360 of 400 stacks of thread 7101 are whole/]);
	});
	test('a missing process fails', () =>
		assertOnlyFails(failures(nofpProfile(), { pid: 1 }), [/process 1 is in the profile/]));
});
