// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of unwind_checks.mjs (node --test): whole stacks of the nofp
// workload pass; stacks cut short, with a made-up address, a level too few
// or without qsort's libc frame fail; the frame-pointer control passes only
// when its stacks are broken. Needs no root and no bpfprof.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails } from './selftest_assert.mjs';
import { CAT, ProfileBuilder } from './synth.mjs';
import { checkUnwind } from './unwind_checks.mjs';

const work = mkdtempSync(join(tmpdir(), 'bpfprof-unwind-selftest-'));
after(() => rmSync(work, { recursive: true, force: true }));

const PID = 7100;
const DEPTH = 5;
const N = 400;
const NOFP = (name) => [name, CAT.USER, 'nofp'];
const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];

// nofp's stacks: `broken` of every N samples go wrong in the way `how` says.
function nofpProfile({ broken = 0, how = 'cut', depth = DEPTH } = {}) {
	const b = new ProfileBuilder({ interval: 1 });
	const t = b.thread({ pid: PID, tid: PID, name: 'nofp', isMainThread: true, processName: 'nofp' });
	const whole = [LIBC('_start'), LIBC('__libc_start_main'), NOFP('main'),
		       ...Array.from({ length: depth + 1 }, () => NOFP('nofp_recurse')), NOFP('nofp_sort'),
		       LIBC('qsort'), LIBC('msort_with_tmp'), NOFP('nofp_compare')];
	for (let i = 0; i < N; i++) {
		let stack = whole;
		if (i < broken) {
			if (how === 'cut')
				stack = [NOFP('nofp_compare')];
			else if (how === 'address')
				stack = [LIBC('_start'), NOFP('main'), NOFP('0x5555deadbeef'), NOFP('nofp_compare')];
			else if (how === 'no-libc')
				stack = whole.filter((f) => f[0] !== 'qsort' && f[0] !== 'msort_with_tmp');
		}
		t.sample(stack, i + 1, 1000);
	}
	return b.build();
}

function failures(json, opts) {
	const path = join(work, `p${Math.random().toString(36).slice(2)}.json`);
	writeFileSync(path, JSON.stringify(json));
	const report = new Report('selftest', { out: () => {} });
	checkUnwind(report, Profile.fromFile(path), { pid: PID, depth: DEPTH, ...opts });
	return report.failures;
}

describe('unwind checks', () => {
	test('whole stacks pass', () => assert.deepEqual(failures(nofpProfile()), []));
	test('4 % of stacks cut short pass', () => assert.deepEqual(failures(nofpProfile({ broken: 16 })), []));
	test('10 % of stacks cut short fail', () =>
		assertOnlyFails(failures(nofpProfile({ broken: 40 })),
				[/stacks \(90\.0%\) start at _start/, /samples in nofp_compare show main/]));
	test('made-up addresses fail', () =>
		assertOnlyFails(failures(nofpProfile({ broken: 40, how: 'address' })),
				[/stacks \(90\.0%\) start at _start/, /samples in nofp_compare show main/]));
	test('a level missing fails the exact path only', () =>
		assertOnlyFails(failures(nofpProfile({ depth: DEPTH - 1 })), [/^0 of 400 samples in nofp_compare show main/]));
	test('no libc frame between nofp_sort and nofp_compare fails', () =>
		assertOnlyFails(failures(nofpProfile({ broken: N, how: 'no-libc' })), [/^0 of 400 samples in nofp_compare cross/]));
	test('the frame-pointer control passes broken stacks and fails whole ones', () => {
		assert.deepEqual(failures(nofpProfile({ broken: N }), { expectBroken: true }), []);
		assertOnlyFails(failures(nofpProfile(), { expectBroken: true }), [/with frame pointers, 100\.0% of 400 stacks are whole/]);
	});
	test('a missing process fails', () =>
		assertOnlyFails(failures(nofpProfile(), { pid: 1 }), [/process 1 is in the profile/]));
});
