// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of report_checks.mjs (node --test): a report that agrees with its
// profile and the burner's clock passes; one whose CPU time is off either,
// that lost a top function, that has alpha's split wrong, or that has another
// process's thread fails, each with its own check. Needs no root and no bpfprof.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { judgeReport } from './report_checks.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails } from './selftest_assert.mjs';

function good() {
	return {
		pid: '100',
		rep: {
			recording: { onCpuSamples: 5000, offCpuSamples: 1000, intervalMs: 2.004 },
			threads: [{ name: 'alpha', pid: '100', cpuMs: 2000 }, { name: 'beta', pid: '100', cpuMs: 1800 },
				  { name: 'sysc', pid: '100', cpuMs: 2100 }],
			topSelf: [{ name: 'alpha_heavy', selfMs: 1500 }, { name: 'beta_spin', selfMs: 1790 },
				  { name: 'alpha_light', selfMs: 500 }],
		},
		prof: { samples: 6000, workers: { alpha: { cpuMs: 2000 }, beta: { cpuMs: 1800 }, sysc: { cpuMs: 2100 } } },
		truth: { alpha: { ms: 2010, errMs: 20 }, beta: { ms: 1795, errMs: 20 }, sysc: { ms: 2100, errMs: 20 } },
	};
}

function failures(d) {
	const report = new Report('selftest', { out: () => {} });
	judgeReport(report, d);
	return report.failures;
}

describe('report checks', () => {
	test('a report that agrees with its profile and the burner passes', () => assert.deepEqual(failures(good()), []));
	test('CPU time off the profile, or off the burner\'s clock, fails', () => {
		const d = good();
		d.rep.threads[0].cpuMs = 2000.5;
		assertOnlyFails(failures(d), [/^alpha: 2000\.500 ms CPU in the report, 2000\.000 ms in the profile/]);
		const e = good();
		e.truth.beta.ms = 2500;
		assertOnlyFails(failures(e), [/^beta: 1800\.0 ms in the report, 2500\.0 ms by its own clock/]);
	});
	test('a lost top function or a wrong split fails', () => {
		const d = good();
		d.rep.topSelf = d.rep.topSelf.filter((f) => f.name !== 'beta_spin');
		assertOnlyFails(failures(d), [/^beta_spin is among the top self functions/]);
		const e = good();
		e.rep.topSelf[0].selfMs = 500;
		assertOnlyFails(failures(e), [/^alpha_heavy is 50\.0% of alpha's self time/]);
	});
	test('another process, or a different sample count, fails', () => {
		const d = good();
		d.rep.threads.push({ name: 'other', pid: '200', cpuMs: 1 });
		assertOnlyFails(failures(d), [/^only pid 100's threads \(others: 200\)/]);
		const e = good();
		e.prof.samples = 5999;
		assertOnlyFails(failures(e), [/^6000 samples in the report, 5999 of pid 100's threads/]);
	});
});
