// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of the lifecycle checker (node --test): a hand-made `bpfprof --
// spawner` profile passes, and each variant that breaks one expectation
// fails exactly that check. The share of child_work the checker demands
// comes from the children's own CPU report, so the tests move that report
// as well as the samples.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { checkLifecycle, parseSpawnerTruth } from './lifecycle_checks.mjs';
import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails, selftestFiles } from './selftest_assert.mjs';
import { CAT, ProfileBuilder, rng } from './synth.mjs';

const writeFile = selftestFiles('lifecycle');
const PARENT = 5000, EXEC = 5100, CHILDREN = 20, SAMPLES = 30;

// knobs: inWork (share of child samples in child_work), reportedWork (the
// share the children report), rawOwn (samples with an unnamed spawner frame),
// rawLibc (samples with an unnamed libc frame), cpuLines (children that
// report their CPU), wrapped (a shell exec'd the spawner), renamed (the
// renamer thread's name).
function spawnerCase(knobs = {}) {
	const o = { inWork: 0.96, reportedWork: 0.96, rawOwn: 0, rawLibc: 0, cpuLines: CHILDREN, wrapped: false,
		    renamed: 'after-rename', ...knobs };
	const b = new ProfileBuilder();
	const r = rng(7);
	const user = (name, lib = 'spawner') => [name, CAT.USER, lib];
	const root = [user('__libc_start_call_main', 'libc.so.6'), user('main')];
	const lines = [`spawner: truth self ${PARENT}`];
	// wrapped: the spawner was exec'd by a shell that ran (and was sampled)
	// first, so its own image is the process's second generation.
	let self = PARENT;
	if (o.wrapped) {
		b.thread({ pid: PARENT, tid: PARENT, name: 'bash', isMainThread: true, processName: 'bash' })
			.sample([user('main', 'bash')], 0.5, 1000);
		self = `${PARENT}.1`;
	}
	const parent = b.thread({ pid: self, tid: PARENT, name: 'spawner', isMainThread: true, processName: 'spawner' });
	parent.sample([...root, user('spawn_children')], 1, 1000);
	b.thread({ pid: self, tid: PARENT + 1, name: o.renamed, isMainThread: false, processName: 'spawner' })
		.sample([...root, user('renamer_burn')], 1, 1000);
	let rawOwn = o.rawOwn, rawLibc = o.rawLibc;
	for (let c = 0; c < CHILDREN; c++) {
		const pid = PARENT + 1 + (c + 1);
		const t = b.thread({ pid, tid: pid, name: 'spawn-child', isMainThread: true, processName: 'spawn-child' });
		for (let i = 0; i < SAMPLES; i++) {
			const time = 10 + c * 40 + i;
			let stack;
			if (rawOwn > 0) {
				rawOwn--;
				stack = [...root, user('spawner+0x1030')];
			} else if (rawLibc > 0) {
				rawLibc--;
				stack = [...root, user('libc.so.6+0x9461f', 'libc.so.6')];
			} else if (r() < o.inWork) {
				stack = [...root, user('spawn_children'), user('child_burn'), user('child_work')];
			} else {
				stack = [...root, user('spawn_children'), user('child_burn'), user('clock_gettime', 'libc.so.6'),
					 ['do_syscall_64', CAT.KERNEL]];
			}
			t.sample(stack, time, 1000);
		}
		lines.push(`spawner: truth child ${pid}`);
		if (c < o.cpuLines)
			lines.push(`spawner: truth child-cpu ${pid} work_us ${Math.round(20000 * o.reportedWork)} cpu_us 20000`);
	}
	const e = b.thread({ pid: EXEC, tid: EXEC, name: 'spawner', isMainThread: true, processName: 'spawner' });
	for (let i = 0; i < 30; i++)
		e.sample([...root, user('exec_image_work')], 900 + i, 1000);
	lines.push(`spawner: truth exec ${EXEC}`);
	const json = b.build();
	// Lifetimes: each child lived 40 ms, from its fork to its exit.
	for (const t of json.threads) {
		const pid = Number(t.pid);
		if (pid > PARENT + 1 && pid < EXEC) {
			const start = 10 + (pid - PARENT - 2) * 40;
			Object.assign(t, { processStartupTime: start, processShutdownTime: start + 40,
					   registerTime: start, unregisterTime: start + 40 });
		}
	}
	return { profile: Profile.fromFile(writeFile(JSON.stringify(json))), truth: parseSpawnerTruth(lines.join('\n')) };
}

function failures({ profile, truth }) {
	const report = new Report('selftest', { out: () => {} });
	checkLifecycle(report, profile, { pid: PARENT, truth });
	return report.failures;
}

describe('lifecycle checker', () => {
	test('the truth lines are read, child CPU included', () => {
		const t = parseSpawnerTruth('spawner: truth self 1\nspawner: truth child 2 ns 5\n' +
					    'spawner: truth child-cpu 2 work_us 19000 cpu_us 20000\nspawner: truth exec 3\n');
		assert.equal(t.self, '1');
		assert.deepEqual(t.children, ['2']);
		assert.equal(t.exec, '3');
		assert.deepEqual(t.childCpu.get('2'), { workUs: 19000, cpuUs: 20000 });
	});

	test('a good profile passes', () => {
		assert.deepEqual(failures(spawnerCase()), []);
	});

	test('a machine where the children spend less of their CPU working lowers the bar', () => {
		// 88% in child_work is a failure when the children worked 96% of their
		// CPU, and what this machine gives when they worked 89%.
		assertOnlyFails(failures(spawnerCase({ inWork: 0.86 })), [/% of them are in child_work/]);
		assert.deepEqual(failures(spawnerCase({ inWork: 0.88, reportedWork: 0.89 })), []);
	});

	test('a sampled share far below the reported one fails', () => {
		assertOnlyFails(failures(spawnerCase({ inWork: 0.5, reportedWork: 0.99 })), [/% of them are in child_work/]);
	});

	test('an unnamed frame in the workload\'s own code fails; in libc it is only noted', () => {
		assertOnlyFails(failures(spawnerCase({ rawOwn: 1 })), [/have a frame in spawner's own code named by an address/]);
		assert.deepEqual(failures(spawnerCase({ rawLibc: 5 })), []);
	});

	test('a spawner exec\'d by a wrapper shell is the same process, its second generation', () => {
		assert.deepEqual(failures(spawnerCase({ wrapped: true })), []);
		assertOnlyFails(failures(spawnerCase({ wrapped: true, renamed: 'before-rename' })), [/renamed mid-run/]);
	});

	test('children without a CPU report fail', () => {
		assertOnlyFails(failures(spawnerCase({ cpuLines: CHILDREN - 1 })), [/reported the CPU of 19 of 20 children/]);
	});
});
