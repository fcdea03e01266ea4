// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of the scheduler checks (node --test): the hand-made sleeper and
// pipepair profiles of synth_sched.mjs pass every expectation the integration
// tests ask for, and each variant that breaks one property fails exactly the
// checks about it, on the file and through profiler-cli. Needs no root and
// no bpfprof; the loader tests need profiler-cli (CHECK_NODE_MODULES).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails, selftestFiles } from './selftest_assert.mjs';
import { checkSched, EXPECTATIONS, makeSchedContext, parseExpectation, parseTruth, resolveThreads }
	from './sched_checks.mjs';
import { CAT, NANOSLEEP_KERNEL, PIPEPAIR_DEFAULTS, pipepairProfile, SLEEPER_DEFAULTS, sleeperProfile, truthLines }
	from './synth_sched.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const writeFile = selftestFiles('sched');

// What the integration tests ask (tests/integration/sched_*.sh).
const SLEEPER_EXPECT = [
	'cpu-share sleeper90 5 15', 'cpu-truth sleeper90', 'oncpu-func sleeper90 sleeper_burn 50', 'offcpu-time sleeper90',
	'offcpu-reason sleeper90 sleeping 50', 'offcpu-stack sleeper90 sleeping sleeper_wait nanosleep',
	'cpu-busy busy100 90', 'cpu-truth busy100', 'oncpu-func busy100 busy_spin 80', 'offcpu-time busy100',
];
const PIPE_EXPECT = [
	'offcpu-markers preader sleeping pwriter 20', 'marker-stack preader reader_wait pipe_read',
	'runnable-markers preader pwriter', 'wakeup-markers pwriter preader', 'offcpu-reason preader sleeping 90',
	'offcpu-stack preader sleeping reader_wait pipe_read', 'offcpu-time preader', 'offcpu-time pwriter',
];
const PIPE_TRUTH = 'pipepair: truth writes 99 reads 99 period_ms 20\n';

// Runs the sched scenario on JSON and returns the failed messages.
function run(json, { pid, truthText, expect, cli = false, schedMinMs, offCpuSamples = true, tids = {} }) {
	const report = new Report('selftest', { out: () => {} });
	const profile = Profile.fromFile(writeFile(JSON.stringify(json)));
	checkSched(report, profile, { pid, tids, truth: truthText ? parseTruth(truthText) : null, schedMinMs,
				      offCpuSamples, expectations: expect.map(parseExpectation), cli });
	return report.failures;
}

function sleeper(overrides, opts = {}) {
	const { json, truth } = sleeperProfile(overrides);
	return run(json, { pid: SLEEPER_DEFAULTS.pid, truthText: truthLines(truth), expect: SLEEPER_EXPECT, ...opts });
}

function pipe(overrides, opts = {}) {
	return run(pipepairProfile(overrides), { pid: PIPEPAIR_DEFAULTS.pid, truthText: PIPE_TRUTH, expect: PIPE_EXPECT,
						 schedMinMs: 0, ...opts });
}

describe('parsing', () => {
	test('truth lines of both workloads', () => {
		const t = parseTruth('noise\nsleeper: truth sleeper90 tid 12 cpu_ms 251.5 loop_cpu_ms 250.25 loop_wall_ms ' +
				     '2500.000 periods 250 overruns 3\npipepair: truth writes 75 reads 74 period_ms 20\n' +
				     'pipepair: truth pwriter tid 13 cpu_ms 150.1 loop_cpu_ms 150 loop_wall_ms 1500 periods 75 overruns 0\n');
		assert.deepEqual(t.threads.sleeper90, { tid: '12', cpuMs: 251.5, loopCpuMs: 250.25, loopWallMs: 2500,
							periods: 250, overruns: 3 });
		assert.deepEqual(t.threads.pwriter, { tid: '13', cpuMs: 150.1, loopCpuMs: 150, loopWallMs: 1500,
						      periods: 75, overruns: 0 });
		assert.deepEqual(t.pipe, { writes: 75, reads: 74, periodMs: 20 });
	});

	test('unknown expectations and wrong arity are errors', () => {
		assert.throws(() => parseExpectation('cpu-share sleeper90 5'), /takes 3 arguments/);
		assert.throws(() => parseExpectation('cpu-shares sleeper90 5 15'), /unknown expectation/);
		assert.equal(parseExpectation('  no-offcpu-samples ').args.length, 0);
	});
});

describe('sleeper: CPU share, ground truth, off-CPU samples', () => {
	test('a good profile passes', () => assert.deepEqual(sleeper({}), []));

	test('20 % CPU fails the 5-15 % share, and the truth of 10 %', () => {
		const { json } = sleeperProfile({ burnShare: 0.2 });
		const { truth } = sleeperProfile({});
		assertOnlyFails(run(json, { pid: 6000, truthText: truthLines(truth), expect: SLEEPER_EXPECT }),
				[/^sleeper90: threadCPUDelta .* = 19\.\d+% \(expected 5–15%/, /^sleeper90: 19\.\d+% CPU in the profile, 10\.00% measured/,
				 /^sleeper90: all its threadCPUDelta add up to 400/]);
	});

	test('a sleeper a busy machine held at 20 % by its own clock passes the share when the profile says so', () => {
		const { json, truth } = sleeperProfile({ burnShare: 0.2 });
		truth.sleeper90.overruns = 40;
		assert.deepEqual(run(json, { pid: 6000, truthText: truthLines(truth), expect: SLEEPER_EXPECT }), []);
		const { json: off } = sleeperProfile({ burnShare: 0.3 });
		assertOnlyFails(run(off, { pid: 6000, truthText: truthLines(truth), expect: SLEEPER_EXPECT }),
				[/^sleeper90: [23]\d\.\d+% CPU in the profile; other load on the machine made it 20\.00% by its own clock/,
				 /^sleeper90: [23]\d\.\d+% CPU in the profile, 20\.00% measured/, /^sleeper90: all its threadCPUDelta add up/]);
		// Without overruns the workload ran its plan: 20 % is out of the band whatever it measured.
		truth.sleeper90.overruns = 0;
		assertOnlyFails(run(json, { pid: 6000, truthText: truthLines(truth), expect: ['cpu-share sleeper90 5 15'] }),
				[/^sleeper90: threadCPUDelta .* = [12]\d\.\d+% \(expected 5–15%/]);
	});

	test('a profile 15 % off the thread\'s own clock fails only the truth checks', () =>
		assertOnlyFails(sleeper({ truthScale: 1.15 }),
				[/^sleeper90: 9\.\d+% CPU in the profile, 11\.\d+% measured/, /^sleeper90: all its threadCPUDelta add up/,
				 /^busy100: 100\.00% CPU in the profile, 115\.00% measured/, /^busy100: all its threadCPUDelta add up/]));

	test('CPU beyond wall time fails the contract and the shares', () =>
		assertOnlyFails(sleeper({ cpuScale: 2 }),
				[/exceeds its sample span/, /^sleeper90: threadCPUDelta .* = 19/, /^sleeper90: 19\.\d+% CPU in the profile/,
				 /^sleeper90: all its threadCPUDelta/, /^sleeper90: \d+ off-CPU samples/, /^busy100: 200\.00% CPU/,
				 /^busy100: all its threadCPUDelta/, /^busy100: \d+ off-CPU samples/]));

	test('fractional µs fail', () => assertOnlyFails(sleeper({ fractionalCpu: true }), [/are integers >= 0: \d+ are not/]));

	test('no off-CPU samples fail the off-CPU expectations', () =>
		assertOnlyFails(sleeper({ offCpuSamples: false }),
				[/^sleeper90: 0 off-CPU samples .* cover/, /^sleeper90: 0\.0% of 0 off-CPU samples/,
				 /^sleeper90: 0\.0% of 0 "off-CPU: sleeping" samples/]));

	test('the wrong reason fails', () =>
		assertOnlyFails(sleeper({ offCpuReason: 'blocked (D)' }),
				[/^sleeper90: 0\.0% of \d+ off-CPU samples are "off-CPU: sleeping"/,
				 /^sleeper90: 0\.0% of 0 "off-CPU: sleeping" samples/]));

	// tests/integration/sched_wakers.sh (issue 28)
	test('waits woken by a timer pass; a bystander named as their waker fails', () => {
		const expect = ['woken-by sleeper90 timer 90', 'no-wakeup-markers busy100 sleeper90'];
		for (const cli of [false, true]) {
			assert.deepEqual(sleeper({ wakers: 'timer' }, { expect, cli }), []);
			assertOnlyFails(sleeper({ wakers: 'bystander' }, { expect, cli }),
					[/^sleeper90: 0 of \d+ woken Off-CPU markers say woken by "timer" \(need >= 90%\); the others: busy100 \(6002\)/,
					 /^busy100: \d+ Wakeup markers say it woke sleeper90 \(tid 6001\) \(need 0\)/,
					 ...(cli ? [/^profiler-cli: 0 of sleeper90's \d+ Off-CPU markers were woken by "timer"/,
						    /^profiler-cli: busy100 has \d+ Wakeup markers for sleeper90/] : [])]);
		}
	});

	test('a wait path without sleeper_wait or without nanosleep fails', () => {
		assertOnlyFails(sleeper({ waitFunc: 'sleeper_main2' }), [/"off-CPU: sleeping" samples have sleeper_wait/]);
		assertOnlyFails(sleeper({ sleepKernel: ['do_syscall_64', 'schedule', '__schedule'] }),
				[/"off-CPU: sleeping" samples have sleeper_wait/]);
	});

	test('the tracer\'s own frames in a switch-out stack fail', () =>
		assertOnlyFails(sleeper({ sleepKernel: [...NANOSLEEP_KERNEL, 'bpf_trace_run4', 'bpf_prog_88c4555056_on_switch'] }),
				[/hold no frames of the tracer itself/]));

	test('an off-CPU leaf outside the Off-CPU category fails', () => {
		const failed = sleeper({ offCpuCategory: CAT.USER });
		assert.ok(failed.some((m) => /off-CPU leaf frames are "off-CPU: <reason>"/.test(m)), JSON.stringify(failed));
	});

	test('the wrong category colour and missing schemas fail', () => {
		assertOnlyFails(sleeper({ offCpuColor: 'transparent' }), [/category 3 is Off-CPU\/lightblue/]);
		assertOnlyFails(sleeper({ schemas: false }), [/marker schema bpfprof\.OffCPU/, /marker schema bpfprof\.Runnable/,
							      /marker schema bpfprof\.Wakeup/, /marker schema bpfprof\.SchedSummary/]);
	});

	test('a busy thread at 50 % fails, unless it measured 50 % itself and waited preempted', () => {
		assertOnlyFails(sleeper({ busyShare: 0.5, busyTruthShare: 1 }),
				[/^busy100: busy thread at 50\.\d+%/, /^busy100: 50\.\d+% CPU in the profile/,
				 /^busy100: all its threadCPUDelta/]);
		assert.deepEqual(sleeper({ busyShare: 0.5, busyTruthShare: 0.5 }), []);
		assertOnlyFails(sleeper({ busyShare: 0.5, busyTruthShare: 0.5, busyWaitReason: 'sleeping' }),
				[/^busy100: busy thread at 50\.\d+% .* 0 of its \d+ off-CPU samples must be preempted/]);
	});

	test('a sleeping thread is no busy thread, whatever it measured', () =>
		assertOnlyFails(sleeper({}, { expect: ['cpu-busy sleeper90 90'] }), [/^sleeper90: busy thread at 9\.\d+%/]));

	test('the checks of one thread fail on the other', () => {
		const { json, truth } = sleeperProfile({});
		assertOnlyFails(run(json, { pid: 6000, truthText: truthLines(truth), expect: ['cpu-share busy100 5 15',
									     'oncpu-func busy100 sleeper_burn 50'] }),
				[/^busy100: threadCPUDelta/, /^busy100: sleeper_burn is in 0\.0%/]);
	});

	test('a thread that is not there, or has another tid, fails', () => {
		assertOnlyFails(sleeper({}, { expect: ['cpu-share sleeper80 5 15'] }), [/thread "sleeper80" appears once/]);
		assertOnlyFails(sleeper({}, { expect: ['cpu-share sleeper90 5 15'], tids: { sleeper90: '1' } }),
				[/thread "sleeper90" has tid 1/]);
	});
});

describe('pipepair: markers', () => {
	test('a good profile passes', () => assert.deepEqual(pipe({}), []));

	test('another waker fails the waker, Runnable and Wakeup checks', () =>
		assertOnlyFails(pipe({ readerWaker: { name: 'pipepair', tid: 7000, pid: 7000 } }),
				[/^preader: 0 of 99 Off-CPU markers have wakerTid/, /^preader: the Off-CPU intervals ended by pwriter/,
				 /^preader: 0 Off-CPU markers woken by pwriter for its 99 writes/, /^preader: 0 of 99 Runnable markers/,
				 /^pwriter: 0 Wakeup markers/]));

	test('blocked instead of sleeping fails', () =>
		assertOnlyFails(pipe({ readerReason: 'blocked (D)' }),
				[/^preader: 0 of 99 Off-CPU markers have reason "sleeping"/, /^preader: 0\.0% of \d+ off-CPU samples are/,
				 /^preader: 0\.0% of 0 "off-CPU: sleeping" samples/]));

	test('intervals of another period fail', () =>
		assertOnlyFails(pipe({}, { expect: ['offcpu-markers preader sleeping pwriter 40'] }),
				[/^preader: the Off-CPU intervals ended by pwriter last 19\.\d+ ms \(median; expected 40 ms/]));

	test('fewer wakeups than writes fail', () =>
		assertOnlyFails(pipe({}, { truthText: 'pipepair: truth writes 150 reads 150 period_ms 20\n' }),
				[/^preader: 99 Off-CPU markers woken by pwriter for its 150 writes/]));

	test('missing Runnable or Wakeup markers fail', () => {
		assertOnlyFails(pipe({ runnable: false }), [/^preader: 0 of 0 Runnable markers/]);
		assertOnlyFails(pipe({ wakeups: false }), [/^pwriter: 0 Wakeup markers/]);
	});

	test('a missing or wrong summary fails', () => {
		assertOnlyFails(pipe({ summaries: false }), [/has one Scheduling marker .*has 0 Scheduling markers/]);
		assertOnlyFails(pipe({ summaryMiscount: 3 }), [/preader \(7002\): 99 Off-CPU markers, summary says 102 - 0 hidden/]);
		assertOnlyFails(pipe({}, { schedMinMs: 1 }), [/thresholdMs 0, expected 1/]);
	});

	test('markers without stacks, or stacks without reader_wait, fail', () => {
		assertOnlyFails(pipe({ markerStacks: false }), [/^preader: 0\.0% of 99 Off-CPU markers have a cause stack/]);
		assertOnlyFails(pipe({ readFunc: 'read' }), [/^preader: 0\.0% of 99 Off-CPU markers have a cause stack/,
							      /"off-CPU: sleeping" samples have reader_wait/]);
	});

	test('--sched-min: short markers and no hidden count fail', () => {
		const expect = ['marker-min Off-CPU 50', 'marker-min Runnable 50', 'hidden-offcpu preader 80',
				'marker-count pwriter Wakeup 0 2', 'marker-count preader Off-CPU 0 2'];
		assert.deepEqual(pipe({ schedMinMs: 50 }, { expect, schedMinMs: 50 }), []);
		assertOnlyFails(pipe({ schedMinMs: 0 }, { expect, schedMinMs: 50 }),
				[/thresholdMs 0, expected 50/, /"Off-CPU" markers of pid 7000 is shorter than 50/,
				 /"Runnable" markers of pid 7000 is shorter than 50/, /Scheduling summary counts 0 off-CPU/,
				 /^pwriter: 99 "Wakeup" markers/, /^preader: 99 "Off-CPU" markers/]);
	});

	test('--sched-min: short waits missing from the runnable and wakeup counts fail', () => {
		const expect = ['summary-min preader hiddenRunnableCount 80', 'summary-min pwriter wakeupsSent 80'];
		assert.deepEqual(pipe({ schedMinMs: 50 }, { expect, schedMinMs: 50 }), []);
		assertOnlyFails(pipe({ schedMinMs: 50, foldedWakeupsLost: true }, { expect, schedMinMs: 50 }),
				[/^preader: Scheduling summary hiddenRunnableCount is 0 \(need >= 80\)/,
				 /^pwriter: Scheduling summary wakeupsSent is 0 \(need >= 80\)/]);
		assertOnlyFails(pipe({ schedMinMs: 50, foldedWakeupsLost: true }, { expect, schedMinMs: 50, cli: true }),
				[/^preader: Scheduling summary hiddenRunnableCount is 0/, /^pwriter: Scheduling summary wakeupsSent is 0/,
				 /^profiler-cli: preader's Scheduling marker shows hiddenRunnableCount 0/,
				 /^profiler-cli: pwriter's Scheduling marker shows wakeupsSent 0/]);
	});

	test('kept-wakeups: wakeups of short waits sent as records, or too few wakeups, fail', () => {
		// 99 reader and 99 writer waits of 20 ms under a 50 ms threshold; main's one wait is long.
		const withCounts = (all, kept) => {
			const json = pipepairProfile({ schedMinMs: 50 });
			json.meta.extra = [...(json.meta.extra ?? []), { label: 'Scheduling', entries: [
				{ label: 'Wakeups', format: 'integer', value: all },
				{ label: 'Wakeups kept in the kernel', format: 'integer', value: kept }] }];
			return run(json, { pid: PIPEPAIR_DEFAULTS.pid, expect: ['kept-wakeups 2 150'], schedMinMs: 50 });
		};
		assert.deepEqual(withCounts(198, 194), []);
		assertOnlyFails(withCounts(198, 20), [/^178 of 198 wakeups came as records, 20 were kept .*= 8\)/]);
		assertOnlyFails(withCounts(99, 99), [/has 99 wakeups of pid 7000's threads \(need >= 150\)/]);
		assertOnlyFails(pipe({ schedMinMs: 50 }, { expect: ['kept-wakeups 2 150'], schedMinMs: 50 }),
				[/has undefined wakeups/, /came as records/]);
	});

	test('switches: the summary against the kernel\'s counts; kept-switches: sends bounded by time', () => {
		const withSwitches = (all, kept) => {
			const json = pipepairProfile({ schedMinMs: 50 });
			json.meta.extra = [...(json.meta.extra ?? []), { label: 'Scheduling', entries: [
				{ label: 'Context switches', format: 'integer', value: all },
				{ label: 'Context switches kept in the kernel', format: 'integer', value: kept }] }];
			return json;
		};
		const check = (json, expect) => run(json, { pid: PIPEPAIR_DEFAULTS.pid, expect, schedMinMs: 50 });
		assert.deepEqual(check(withSwitches(1e6, 999000), ['switches pwriter 99 0', 'kept-switches 500000']), []);
		assertOnlyFails(check(withSwitches(1e6, 999000), ['switches pwriter 150 0', 'switches preader 99 20']),
				[/^pwriter: voluntarySwitches 99, the kernel counted 150/,
				 /^preader: preemptions 0, the kernel counted 20/]);
		assertOnlyFails(check(withSwitches(1e6, 0), ['kept-switches 500000']),
				[/^1000000 of 1000000 context switches were sent as records/]);
		assertOnlyFails(check(withSwitches(1000, 1000), ['kept-switches 500000']),
				[/has 1000 context switches \(need >= 500000\)/]);
	});

	test('--no-off-cpu: off-CPU samples fail, markers stay', () => {
		const expect = ['no-offcpu-samples', 'offcpu-markers preader sleeping pwriter 20', 'runnable-markers preader pwriter'];
		assert.deepEqual(pipe({ offCpuSamples: false }, { expect, offCpuSamples: false }), []);
		assertOnlyFails(pipe({}, { expect, offCpuSamples: false }),
				[/--no-off-cpu: no sample has an Off-CPU leaf \(found \d+/, /no sample of any thread has an Off-CPU leaf/]);
	});
});

describe('through profiler-cli', () => {
	test('good sleeper and pipepair profiles pass', () => {
		assert.deepEqual(sleeper({}, { cli: true }), []);
		assert.deepEqual(pipe({}, { cli: true }), []);
	});

	test('a front-end CPU time other than the file\'s fails', () => {
		const { json } = sleeperProfile({});
		const report = new Report('selftest', { out: () => {} });
		const ctx = makeSchedContext(report, Profile.fromFile(writeFile(JSON.stringify(json))), { pid: 6000 });
		resolveThreads(ctx, [parseExpectation('cpu-share sleeper90 5 15')]);
		ctx.handles = new Map([[1, 't-1']]);
		const fake = (cpuMs) => ({ query: () => ({ threads: [{ threadHandle: 't-1', cpuMs }] }) });
		EXPECTATIONS['cpu-share'].cli(ctx, fake(199.5), 'sleeper90');
		EXPECTATIONS['cpu-share'].cli(ctx, fake(199.5 * 1000), 'sleeper90');
		assertOnlyFails(report.failures, [/^profiler-cli: sleeper90 used 199500\.00 ms of CPU/]);
	});

	test('the loader sees a missing sleep path and burn function', () =>
		assertOnlyFails(sleeper({ waitFunc: 'sleeper_main2', burnFunc: 'other_burn' }, { cli: true }),
				[/^sleeper90: sleeper_burn is in 0\.0%/, /"off-CPU: sleeping" samples have sleeper_wait/,
				 /^profiler-cli: sleeper_burn is in 0 of sleeper90's/,
				 /^profiler-cli: in sleeper90's samples ending in "off-CPU: sleeping" .*sleeper_wait is in 0\.0%/]));

	test('the loader sees the wrong waker and reason', () =>
		assertOnlyFails(pipe({ readerWaker: { name: 'pipepair', tid: 7000, pid: 7000 }, readerReason: 'other' },
				     { cli: true }),
				[/^preader: 0 of 99 Off-CPU markers have reason/, /^preader: 0 of 99 Off-CPU markers have wakerTid/,
				 /^preader: the Off-CPU intervals ended by pwriter/, /^preader: 0 Off-CPU markers woken by pwriter/,
				 /^preader: 0 of 99 Runnable markers/, /^pwriter: 0 Wakeup markers/, /^preader: 0\.0% of \d+ off-CPU samples/,
				 /^preader: 0\.0% of 0 "off-CPU: sleeping"/, /^profiler-cli: 0 of preader's 99 Off-CPU markers were woken/,
				 /^profiler-cli: 0 of preader's 99 Off-CPU markers have reason "sleeping"/,
				 /^profiler-cli: 0 of preader's \d+ Runnable markers/, /^profiler-cli: pwriter has 0 Wakeup/,
				 /^profiler-cli: preader has a function "off-CPU: sleeping"/]));

	test('the loader sees markers without stacks', () =>
		assertOnlyFails(pipe({ markerStacks: false }, { cli: true, expect: ['marker-stack preader reader_wait pipe_read'] }),
				[/^preader: 0\.0% of 99 Off-CPU markers have a cause stack/,
				 /^profiler-cli: 0 of 3 sampled Off-CPU markers of preader show the file's cause stack/]));

	test('the loader listing first the few markers that blocked elsewhere is no failure', () => {
		// The three longest waits (those the loader lists) left the CPU from
		// another function; 96% of the markers still block in reader_wait.
		const json = pipepairProfile();
		const t = json.threads.find((x) => x.name === 'preader');
		const m = t.markers;
		const offCpu = [...m.data.keys()].filter((i) => m.data[i]?.type === 'bpfprof.OffCPU');
		offCpu.sort((a, b) => (m.endTime[b] - m.startTime[b]) - (m.endTime[a] - m.startTime[a]));
		const elsewhere = json.threads.find((x) => x.name === 'pwriter').markers.data
			.find((d) => d?.type === 'bpfprof.OffCPU').cause.stack;
		for (const i of offCpu.slice(0, 3))
			m.data[i].cause.stack = elsewhere;
		assert.deepEqual(run(json, { pid: PIPEPAIR_DEFAULTS.pid, truthText: PIPE_TRUTH, schedMinMs: 0, cli: true,
					     expect: ['marker-stack preader reader_wait pipe_read'] }), []);
	});

	test('the loader sees short markers, missing hidden counts and off-CPU samples', () => {
		const expect = ['marker-min Off-CPU 50', 'hidden-offcpu preader 80', 'no-offcpu-samples'];
		assertOnlyFails(pipe({}, { cli: true, expect }),
				[/"Off-CPU" markers of pid 7000 is shorter than 50/, /^profiler-cli: \d+ "Off-CPU" markers of pid 7000 last under 50/,
				 /Scheduling summary counts 0 off-CPU/, /^profiler-cli: preader's Scheduling marker shows hiddenOffCpuCount 0/,
				 /no sample of any thread has an Off-CPU leaf/, /^profiler-cli: no thread of pid 7000 has Off-CPU samples/]);
	});
});

describe('check.mjs sched', () => {
	const script = join(here, 'check.mjs');
	const runCheck = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

	test('exit 0 for a good profile, 1 for a broken one, 2 for a bad expectation', () => {
		const good = writeFile(JSON.stringify(pipepairProfile()));
		const truth = writeFile(PIPE_TRUTH, 'txt');
		const args = ['sched', '--profile', good, '--pid', '7000', '--tids', 'pwriter=7001,preader=7002', '--truth', truth,
			      '--sched-min', '0', '--plain', ...PIPE_EXPECT.flatMap((e) => ['--expect', e])];
		const r = runCheck(...args);
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok   profiler-cli: 99 of preader's 99 Off-CPU markers were woken by pwriter/);
		const bad = writeFile(JSON.stringify(pipepairProfile({ wakeups: false })));
		const b = runCheck(...args.map((a) => (a === good ? bad : a)));
		assert.equal(b.status, 1, b.stdout + b.stderr);
		assert.match(b.stdout, /FAIL pwriter: 0 Wakeup markers/);
		assert.equal(runCheck('sched', '--profile', good, '--pid', '7000', '--expect', 'cpu-share x').status, 2);
		assert.equal(runCheck('sched', '--profile', good, '--pid', '7000').status, 2);
	});
});
