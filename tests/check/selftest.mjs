// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of the profile checkers (node --test): every check must pass on a
// good hand-made profile and fail on a variant that breaks exactly what it
// checks. Needs no root and no bpfprof; the loader tests need profiler-cli
// (CHECK_NODE_MODULES or tests/check/node_modules).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import {
	checkBurner,
	checkNoKernelThreadSyscalls,
	checkOtherThreadNames,
	checkNativeSymbols,
	checkBurnerWithCli,
	checkForker,
	checkFormat,
	checkWithProfilerCli,
	parseForkerTruth,
} from './checks.mjs';
import { checkDebuginfo, checkDebuginfoWithCli, INLINED, OUTER } from './debuginfo_checks.mjs';
import { parseBurnerTruth } from './burner_truth.mjs';
import { Profile, readProfileFile } from './profile.mjs';
import { ProfilerCliSession, sleepMs } from './profiler_cli.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails } from './selftest_assert.mjs';
import { checkStructure } from './structure.mjs';
import { BURNER_DEFAULTS, burnerProfile, CAT, forkerProfile, forkerTruthText, ProfileBuilder } from './synth.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const EXAMPLE = join(here, '..', '..', '..', 'shared', 'docs', 'format-example-v66.json');
const work = mkdtempSync(join(tmpdir(), 'bpfprof-check-selftest-'));
after(() => rmSync(work, { recursive: true, force: true }));

let fileNo = 0;
function writeProfile(json, { gzip = false } = {}) {
	const path = join(work, `p${fileNo++}.json${gzip ? '.gz' : ''}`);
	const text = JSON.stringify(json);
	writeFileSync(path, gzip ? gzipSync(text) : text);
	return path;
}

function profileOf(json) {
	const path = writeProfile(json);
	return Profile.fromFile(path);
}

// Runs fn(report) against a silent Report and returns the failed messages.
function failures(fn) {
	const report = new Report('selftest', { out: () => {} });
	fn(report);
	return report.failures;
}

const clone = (x) => structuredClone(x);

describe('reading files', () => {
	test('gzip and plain JSON read the same', () => {
		const json = burnerProfile();
		const a = readProfileFile(writeProfile(json, { gzip: true }));
		const b = readProfileFile(writeProfile(json));
		assert.equal(a.gzipped, true);
		assert.equal(b.gzipped, false);
		assert.deepEqual(a.json, b.json);
	});

	test('corrupt gzip, invalid UTF-8 and NaN are reported', () => {
		const gz = join(work, 'corrupt.json.gz');
		writeFileSync(gz, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.alloc(20, 7)]));
		assert.throws(() => readProfileFile(gz), /gzip data is corrupt/);
		const bad = join(work, 'latin1.json');
		writeFileSync(bad, Buffer.from([0x7b, 0x22, 0xb5, 0x22, 0x3a, 0x31, 0x7d]));
		assert.throws(() => readProfileFile(bad), /not valid UTF-8/);
		const nan = join(work, 'nan.json');
		writeFileSync(nan, '{"meta":{"interval":NaN}}');
		assert.throws(() => readProfileFile(nan), /not valid JSON/);
	});
});

describe('format checklist', () => {
	const good = burnerProfile();

	test('the spec example and a synthetic profile pass', () => {
		if (existsSync(EXAMPLE))
			assert.deepEqual(checkStructure(JSON.parse(readFileSync(EXAMPLE, 'utf8'))), []);
		assert.deepEqual(checkStructure(good), []);
	});

	// [description, mutation, rule that must be reported]
	const breaks = [
		['column shorter than length', (j) => j.shared.frameTable.func.pop(), /\[lengths\] shared\.frameTable\.func/],
		['stack frame out of range', (j) => (j.shared.stackTable.frame[0] = 1e6), /\[indexes\] stackTable\.frame\[0\]/],
		['prefixOffset pointing forward', (j) => (j.shared.stackTable.prefixOffset[1] = -1), /\[stack order\]/],
		['prefixOffset past the start', (j) => (j.shared.stackTable.prefixOffset[2] = 3), /\[stack order\]/],
		['a v65 prefix column', (j) => (j.shared.stackTable.prefix = j.shared.stackTable.frame.map(() => null)), /"prefix" column/],
		['func name outside stringArray', (j) => (j.shared.funcTable.name[0] = 1e6), /funcTable\.name\[0\]/],
		['resource outside resourceTable', (j) => (j.shared.funcTable.resource[0] = 99), /funcTable\.resource\[0\]/],
		['frame category outside categories', (j) => (j.shared.frameTable.category[0] = 9), /frameTable\.category\[0\]/],
		['category without subcategory', (j) => (j.shared.frameTable.subcategory[0] = null), /rule 7/],
		['no grey category', (j) => (j.meta.categories[0].color = 'blue'), /no category is "grey"/],
		['unknown category color', (j) => (j.meta.categories[1].color = 'pink'), /color "pink"/],
		['numeric pid', (j) => (j.threads[1].pid = 4242), /pid 4242 is not a string/],
		['two main threads', (j) => (j.threads[1].isMainThread = true), /has 2 main threads/],
		['no main thread', (j) => (j.threads[0].isMainThread = false), /has 0 main threads/],
		['samples out of order', (j) => (j.threads[1].samples.timeDeltas[3] = -1), /\[sample order\]/],
		['time and timeDeltas both', (j) => (j.threads[1].samples.time = j.threads[1].samples.timeDeltas), /exactly one of time and timeDeltas/],
		['sample stack out of range', (j) => (j.threads[1].samples.stack[0] = 1e6), /samples\.stack\[0\]/],
		['negative CPU delta', (j) => (j.threads[1].samples.threadCPUDelta[2] = -5), /threadCPUDelta\[2\]/],
		['Greek mu in the unit', (j) => (j.meta.sampleUnits.threadCPUDelta = '\u03bcs'), /\[units\]/],
		['version 65', (j) => (j.meta.preprocessedProfileVersion = 65), /\[version\]/],
		['no markerSchema', (j) => delete j.meta.markerSchema, /markerSchema is not an array/],
		['not symbolicated', (j) => (j.meta.symbolicated = false), /symbolicated is not true/],
		['startTime in ns', (j) => (j.meta.startTime *= 1e6), /meta\.startTime/],
		['absolute sample times', (j) => (j.threads[1].samples.timeDeltas[0] = 3e12), /not relative to meta\.startTime/],
		['invalid initialVisibleThreads', (j) => (j.meta.initialVisibleThreads = [0, 99]), /rule 10/],
		['no threads', (j) => (j.threads = []), /threads is missing or empty/],
		['missing shared table', (j) => delete j.shared.nativeSymbols, /shared\.nativeSymbols is missing/],
		['thread without registerTime', (j) => delete j.threads[0].registerTime, /registerTime is not a number/],
	];
	for (const [what, mutate, rule] of breaks) {
		test(`reports ${what}`, () => {
			const j = clone(good);
			mutate(j);
			const problems = checkStructure(j);
			assert.ok(problems.some((p) => rule.test(p)), `no problem matching ${rule}: ${JSON.stringify(problems)}`);
		});
	}

	test('marker rules', () => {
		const j = clone(good);
		j.meta.markerSchema = [{ name: 'bpfprof.Syscall', display: ['marker-chart'],
					 fields: [{ key: 'name', format: 'unique-string' }, { key: 'ret', format: 'integer' },
						  { key: 'path', format: 'file-path' }] }];
		const s = j.shared.stringArray.length;
		j.shared.stringArray.push('read');
		j.threads[1].markers = {
			length: 5,
			name: [s, s, s, s, s],
			startTime: [1, 2, null, 4, 5],
			endTime: [2, null, null, 5, 6],
			phase: [1, 1, 0, 1, 1],
			category: [1, 1, 1, 1, 1],
			data: [{ type: 'bpfprof.Syscall', name: s, ret: 0, path: '/dev/zero' }, null, null,
			       { type: 'Nope' }, { type: 'bpfprof.Syscall', name: 'read', ret: 'x', path: 3 }],
		};
		const problems = checkStructure(j, { limit: 100 });
		for (const re of [/\[1\] phase 1 has no endTime/, /\[2\] phase 0 has no startTime/, /"Nope" has no schema/,
				  /data\.name \(unique-string\)/, /data\.ret \(integer\)/, /data\.path \(file-path\)/])
			assert.ok(problems.some((p) => re.test(p)), `no problem matching ${re}: ${JSON.stringify(problems)}`);
		assert.ok(!problems.some((p) => /markers\[0\]/.test(p)), 'the valid marker was reported');
	});
});

describe('bpfprof contract', () => {
	test('a good profile passes', () => {
		assert.deepEqual(failures((r) => checkFormat(r, profileOf(burnerProfile()))), []);
	});

	test('wrong product and categories fail', () => {
		const j = burnerProfile();
		j.meta.product = 'samply';
		[j.meta.categories[1], j.meta.categories[2]] = [j.meta.categories[2], j.meta.categories[1]];
		assertOnlyFails(failures((r) => checkFormat(r, profileOf(j))),
				[/meta\.product/, /category 1 is Kernel/, /category 2 is User/]);
	});

	test('a kernel frame under user frames fails', () => {
		assertOnlyFails(failures((r) => checkFormat(r, profileOf(burnerProfile({ kernelBelowUser: true })))),
				[/kernel frames are leafward of user frames/]);
	});

	test('a profile without samples fails', () => {
		const j = burnerProfile();
		for (const t of j.threads) {
			for (const k of ['stack', 'timeDeltas', 'threadCPUDelta'])
				t.samples[k] = [];
			t.samples.length = 0;
		}
		assertOnlyFails(failures((r) => checkFormat(r, profileOf(j))), [/profile has samples: 0/]);
	});
});

describe('burner checks', () => {
	const opts = { pid: BURNER_DEFAULTS.pid, tids: BURNER_DEFAULTS.tids, systemWide: false, durationS: 3, cpus: 2 };
	const run = (overrides, o = {}) => {
		const j = burnerProfile(overrides);
		return failures((r) => checkBurner(r, profileOf(j), { ...opts, truth: parseBurnerTruth(j.burnerTruth), ...o }));
	};

	test('a good -p profile passes', () => assert.deepEqual(run({}), []));
	// A thread without user code (a kernel thread's zeroed registers) waiting in read(0, 0, 0)
	// fails; a process seen only in its execve (busy machines) does not.
	test('a kernel thread in read(0, 0, 0) fails, an execve without user frames does not', () => {
		const thread = (data) => ({
			name: 'kworker', tid: 9, pid: '9',
			samples: { length: 0, stack: [], timeDeltas: [] },
			markers: { length: 1, name: [0], startTime: [1], endTime: [2], phase: [1], category: [0], data: [data] },
		});
		const prof = (data) => new Profile({ meta: {}, shared: {}, threads: [thread(data)] });
		const bad = failures((r) => checkNoKernelThreadSyscalls(r, prof({ type: 'bpfprof.SyscallWait', syscall: 'read', fd: 0, count: 0 })));
		assert.equal(bad.length, 1);
		assert.match(bad[0], /zeroed registers/);
		assert.deepEqual(failures((r) => checkNoKernelThreadSyscalls(r, prof({ type: 'bpfprof.SyscallWait', syscall: 'execve' }))), []);
	});
	test('a good -a profile passes', () => assert.deepEqual(run({ otherProcesses: 3 }, { systemWide: true }), []));
	test('a kernel thread typed as a user process fails under -a', () =>
		assertOnlyFails(run({ otherProcesses: 3, kworkerType: 'user' }, { systemWide: true }),
				[/^kernel threads have processType "kernel thread": 0 of 3/]));
	test("Gecko's process type fails the contract", () =>
		assertOnlyFails(failures((r) => checkFormat(r, profileOf(burnerProfile({ otherProcesses: 1, kworkerType: 'default' })))),
				[/^every processType is bpfprof's \(user, default, profiler \(bpfprof\)\)/]));
	test('off-CPU samples of a preempted thread are not CPU work', () =>
		assert.deepEqual(run({ betaOffCpuShare: 0.3 }), []));
	test('alpha_heavy at 80% is within tolerance', () => assert.deepEqual(run({ heavyShare: 0.8 }), []));

	test('alpha split 50/50 fails', () => assertOnlyFails(run({ heavyShare: 0.5 }), [/^alpha_heavy 5\d\.\d% of/]));
	test('alpha split 92/8 fails', () => assertOnlyFails(run({ heavyShare: 0.92 }), [/^alpha_heavy 9\d\.\d% of/]));
	test('threads the machine left 10% of a CPU pass: the truth says so', () =>
		assert.deepEqual(run({ alphaCpuShare: 0.1 }), []));
	test('few alpha samples widen the split tolerance to 4σ, no further', () =>
		assertOnlyFails(run({ periodMs: 10, heavyShare: 0.5 }), [/^alpha_heavy [45]\d\.\d% of \d+ \(tolerance 6\d\.\d–8\d\.\d: ±10 points or 4 binomial σ/]));
	test('fewer samples than the CPU time its clock counted fail', () =>
		assertOnlyFails(run({ truthScale: 1.5 }), [/^alpha has \d+ on-CPU samples for/, /^alpha: [\d.]+ ms CPU in the profile/,
							   /^beta: [\d.]+ ms CPU in the profile/, /^sysc: [\d.]+ ms CPU in the profile/]));
	test('no truth fails', () =>
		assertOnlyFails(run({}, { truth: [] }), [/the burner's truth has 0 lines/, /thread alpha has threadCPUDelta/,
							 /thread beta has threadCPUDelta/, /thread sysc has threadCPUDelta/]));
	test('truth of another time fails', () => {
		const late = parseBurnerTruth(burnerProfile().burnerTruth).map((p) => ({ ...p, ns: p.ns + 60e9 }));
		assertOnlyFails(run({}, { truth: late }), [/alpha: the burner's truth covers its samples/,
							   /beta: the burner's truth covers its samples/,
							   /sysc: the burner's truth covers its samples/, /thread alpha has threadCPUDelta/,
							   /thread beta has threadCPUDelta/, /thread sysc has threadCPUDelta/]);
	});
	test('a wrong caller of the burn functions fails', () =>
		assertOnlyFails(run({ alphaParent: 'worker_start' }), [/caller of alpha_heavy\/alpha_light is alpha_main/]));
	test('beta_spin not on top fails', () =>
		assertOnlyFails(run({ betaTop: 'beta_main' }), [/top self function is beta_spin/, /beta_spin has frames/]));
	test('beta_spin at 70% fails', () => assertOnlyFails(run({ betaTopShare: 0.7 }), [/top self function is beta_spin/]));
	test('sysc mostly in user space fails', () =>
		assertOnlyFails(run({ syscKernelShare: 0.2 }), [/of samples have Kernel frames above sysc_loop/]));
	test('a user frame above sysc_loop fails', () =>
		assertOnlyFails(run({ userAboveSyscLoop: true }), [/sysc_loop calls nothing in user space/]));
	test('unsymbolized kernel frames fail', () =>
		assertOnlyFails(run({ syscKernelNames: ['0xffffffff81000000', '0xffffffff81000100'] }),
				[/kernel frames are symbolized/]));
	test('a wrongly named main thread fails', () =>
		assertOnlyFails(run({ mainName: 'burner' }), [/main thread is named "bpfprof-burner"/]));
	test('two main threads fail', () => assertOnlyFails(run({ mainThreads: 2 }), [/exactly one main thread/]));
	// "CPU went to fork-parent (7)" while tid 7's track says "child" fails; a tid the profile
	// has twice at that time, or not at all, is not judged.
	test('a marker naming a thread by another name than its track fails', () => {
		const thread = (name, tid, data, registerTime = 0) => ({
			name, tid, pid: String(tid), registerTime, unregisterTime: null,
			samples: { length: 0, stack: [], timeDeltas: [] },
			markers: { length: data ? 1 : 0, name: [0], startTime: [5], endTime: [6], phase: [1], category: [0], data: [data] },
		});
		const names = (data, others) => failures((r) => checkOtherThreadNames(r, new Profile({
			meta: {}, shared: {}, threads: [thread('main', 6, data), ...others] })));
		const preempted = (who) => ({ type: 'bpfprof.OffCPU', reason: 'preempted', preemptedBy: who });
		assert.deepEqual(names(preempted('child (7)'), [thread('child', 7)]), []);
		assert.deepEqual(names(preempted('web (7)'), [thread('web [container 0123abcd]', 7)]), []);
		assert.deepEqual(names(preempted('stranger (9)'), [thread('child', 7)]), []);
		assert.deepEqual(names(preempted('fork-parent (7)'), [thread('child', 7), thread('other', 7, null, 9)]).length, 1);
		assert.deepEqual(names({ type: 'bpfprof.Wakeup', wakee: 'fork-parent (7)' }, [thread('child', 7)]).length, 1);
		assert.match(names(preempted('fork-parent (7)'), [thread('child', 7)])[0], /preemptedBy "fork-parent \(7\)", its track "child"/);
	});
	// A frame citing a symbol that does not hold its address, or another library's, fails.
	test('a frame outside its native symbol fails', () => {
		const prof = (address, libIndex, size) => new Profile({ meta: {}, threads: [], shared: {
			stringArray: ['f', 'sym'],
			funcTable: { length: 1, name: [0], resource: [0] },
			resourceTable: { length: 1, lib: [0], name: [0] },
			frameTable: { length: 1, func: [0], address: [address], nativeSymbol: [0] },
			nativeSymbols: { length: 1, libIndex: [libIndex], address: [0x1000], name: [1], functionSize: [size] },
		} });
		const fails = (p) => failures((r) => checkNativeSymbols(r, p));
		assert.deepEqual(fails(prof(0x1010, 0, 0x20)), []);
		assert.deepEqual(fails(prof(0x2000, 0, null)), []);
		assert.match(fails(prof(0x1030, 0, 0x20))[0], /cites sym/);
		assert.match(fails(prof(0x0ff0, 0, null))[0], /cites sym/);
		assert.match(fails(prof(0x1010, 1, 0x20))[0], /lib 0, 0x1010\) cites sym \(lib 1/);
	});
	test('a missing thread fails', () =>
		assertOnlyFails(run({ omitThread: 'sysc' }), [/thread "sysc" appears once/, /sysc_loop has frames/,
							    /thread sysc has threadCPUDelta/]));
	test('a wrong tid fails', () => assertOnlyFails(run({}, { tids: { ...opts.tids, beta: 1 } }), [/thread "beta" has tid 1/]));
	test('a missing process fails', () => assertOnlyFails(run({}, { pid: 999 }), [/pid "999" is present/]));
	test('other processes under -p fail', () =>
		assertOnlyFails(run({ otherProcesses: 1 }), [/no threads of other processes/]));
	test('no other process under -a fails', () =>
		assertOnlyFails(run({}, { systemWide: true }), [/other processes are present: 0/,
								 /^kernel threads have processType "kernel thread": 0 of 0/,
								 /^one process is the profiler, named bpfprof \(pids: none\)/]));
	test('a burn function in the wrong library fails', () =>
		assertOnlyFails(run({ heavyLib: 'libc.so.6' }), [/alpha_heavy belongs to resource "burner"/]));
	test('a burn function with the Kernel category fails', () =>
		assertOnlyFails(run({ heavyCategory: 1 }), [/alpha_heavy frames have category User/]));
	test('threadCPUDelta of zero fails', () =>
		assertOnlyFails(run({ cpuScale: 0 }), [/^alpha: 0\.0 ms CPU in the profile/, /^beta: 0\.0 ms CPU in the profile/,
						      /^sysc: 0\.0 ms CPU in the profile/]));
	test('threadCPUDelta beyond wall time fails', () =>
		assertOnlyFails(run({ cpuScale: 2 }), [/^alpha: [\d.]+ ms CPU in the profile/, /^beta: [\d.]+ ms CPU in the profile/,
						      /^sysc: [\d.]+ ms CPU in the profile/,
						      /alpha\+beta\+sysc/]));
	test('samples beyond -d fail', () =>
		assertOnlyFails(run({ sampleSpanS: 6 }), [/all samples lie within/]));
	test('a recording much shorter than -d fails', () =>
		assertOnlyFails(run({ sampleSpanS: 1.5 }), [/alpha is sampled over/]));
});

describe('forker checks', () => {
	const opts = { parentPid: 5000, childPid: 5001 };
	const run = (overrides) => failures((r) => checkForker(r, profileOf(forkerProfile(overrides)),
							       { ...opts, truth: parseForkerTruth(forkerTruthText(overrides)) }));

	test('a good profile passes', () => assert.deepEqual(run({}), []));
	test('a missing child fails', () =>
		assertOnlyFails(run({ omitChild: true }), [/both present as distinct pids/, /pid "5001" is present/]));
	test('the child burning the wrong function fails', () =>
		assertOnlyFails(run({ childTop: 'parent_burn' }), [/top self function is child_burn/]));
	test('a child that kept the parent name fails', () =>
		assertOnlyFails(run({ childName: 'forker' }), [/main thread is named "bpfprof-child"/, /processName "bpfprof-child"/]));
	test('a parent that kept the profiler name fails', () =>
		assertOnlyFails(run({ parentName: 'bpfprof' }), [/main thread is named "forker"/, /processName "forker"/]));
	test('an unrelated process fails', () => assertOnlyFails(run({ extraPid: true }), [/only the command's processes/]));
	test('a run too short to show a top function fails', () =>
		assertOnlyFails(run({ samples: 50 }), [/call for 50 samples \(a run that can show its top function needs >= 125\)/,
						       /call for 50 samples/]));
	test('fewer samples than the CPU time calls for fail', () =>
		assertOnlyFails(run({ truthScale: 2 }), [/^700 on-CPU samples \(need >= 1120/, /^700 on-CPU samples \(need >= 1120/]));
	test('no truth line fails', () =>
		assertOnlyFails(failures((r) => checkForker(r, profileOf(forkerProfile()), { ...opts, truth: null })),
				[/the forker's truth line/, /call for 0 samples/, /call for 0 samples/]));
});

describe('through profiler-cli', () => {
	const opts = { pid: BURNER_DEFAULTS.pid };
	const viaCli = (json, gzip) => {
		const profile = Profile.fromFile(writeProfile(json, { gzip }));
		return failures((r) => checkWithProfilerCli(r, profile, (cli, handles, info) =>
			checkBurnerWithCli(r, profile, cli, handles, info, opts)));
	};

	test('a good gzipped burner profile loads and passes', () => assert.deepEqual(viaCli(burnerProfile(), true), []));

	test('the loader sees a wrong top function and a wrong split', () => {
		assertOnlyFails(viaCli(burnerProfile({ betaTop: 'beta_main', heavyShare: 0.4, syscKernelShare: 0.1 }), false),
				[/beta's top self function/, /profiler-cli: alpha_heavy/, /sysc's samples are/]);
	});

	test('off-CPU samples (category Off-CPU, shown by the loader) are not CPU work', () => {
		const j = burnerProfile({ betaOffCpuShare: 0.4, betaOffCpuLeaf: 'off-CPU: preempted' });
		j.meta.categories[3] = { name: 'Off-CPU', color: 'lightblue', subcategories: ['Other'] };
		assert.deepEqual(viaCli(j, false), []);
	});

	test('the loader sees a wrong process name', () => {
		assertOnlyFails(viaCli(burnerProfile({ processName: 'other' }), false), [/names process 4242 "bpfprof-burner"/]);
	});

	test('a profile the loader rejects fails, and its daemon is ended', () => {
		const j = burnerProfile();
		j.meta.sampleUnits.threadCPUDelta = 'us';
		const profile = Profile.fromFile(writeProfile(j));
		const before = new ProfilerCliSession();
		before.close();
		assertOnlyFails(failures((r) => checkWithProfilerCli(r, profile)), [/profiler-cli load exits 0/]);
	});
});

describe('a profiler-cli daemon slower to start than load waits for', () => {
	// Preloaded into every Node process of the session: the daemon (and only
	// it) sleeps 1.5 s before it starts, as on a machine too busy to parse the
	// bundle within load's fixed 500 ms.
	const hook = join(work, 'slow-daemon.cjs');
	writeFileSync(hook, "if (process.argv.includes('--daemon'))\n" +
		      '\tAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);\n');
	const slowSession = () => new ProfilerCliSession({ NODE_OPTIONS: `--require ${hook}` });

	test('a good profile loads and answers queries, and the daemon is ended', () => {
		const session = slowSession();
		let pid;
		try {
			const load = session.load(writeProfile(burnerProfile()));
			assert.equal(load.ok, true, load.output);
			assert.equal(load.slowStart, true, load.output);
			assert.ok(session.query('thread', 'list').threads.length > 0);
			pid = session.daemonPid();
			assert.ok(Number.isInteger(pid));
		} finally {
			session.close();
		}
		// Killed or stopped, it is gone once init has reaped it.
		const gone = () => { try { process.kill(pid, 0); return false; } catch { return true; } };
		for (let i = 0; i < 50 && !gone(); i++)
			sleepMs(100);
		assert.ok(gone(), `daemon ${pid} still runs after close()`);
	});

	test('a profile the loader rejects still fails', () => {
		const j = burnerProfile();
		j.meta.sampleUnits.threadCPUDelta = 'us';
		const session = slowSession();
		try {
			const load = session.load(writeProfile(j));
			assert.equal(load.ok, false, load.output);
			assert.match(load.output, /Profile load failed/);
		} finally {
			session.close();
		}
	});
});

describe('check.mjs', () => {
	const script = join(here, 'check.mjs');
	const run = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

	test('exit 0 and numbers in the output for a good profile', () => {
		const j = burnerProfile();
		const path = writeProfile(j, { gzip: true });
		const truth = join(work, 'burner.out');
		writeFileSync(truth, j.burnerTruth);
		const r = run('burner', '--profile', path, '--pid', '4242', '--tids', 'alpha=4244,beta=4245,sysc=4246',
			      '--duration', '3', '--gzip', '--truth', truth);
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok   alpha_heavy \d+\.\d% of \d+ \(tolerance 65\.0–85\.0/);
		assert.match(r.stdout, /ok   alpha: [\d.]+ ms CPU in the profile over \d+ ms, [\d.]+ ms by its own clock/);
		assert.match(run('burner', '--profile', path, '--pid', '4242').stderr, /burner needs --truth/);
		assert.match(r.stdout, /: \d+ checks ok, 0 failed/);
	});

	test('exit 1 for a broken profile, exit 1 for the wrong compression', () => {
		const bad = writeProfile(forkerProfile({ childTop: 'parent_burn' }));
		const truth = join(work, 'forker.out');
		writeFileSync(truth, forkerTruthText());
		const r = run('forker', '--profile', bad, '--parent', '5000', '--child', '5001', '--truth', truth);
		assert.equal(r.status, 1, r.stdout + r.stderr);
		assert.match(r.stdout, /FAIL top self function is child_burn/);
		const good = writeProfile(forkerProfile());
		assert.equal(run('valid', '--profile', good, '--gzip').status, 1);
		assert.equal(run('valid', '--profile', good, '--plain').status, 0);
	});

	test('exit 1 and no loader run for a profile that breaks the checklist', () => {
		const j = forkerProfile();
		j.shared.stackTable.prefixOffset[0] = -3;
		const r = run('valid', '--profile', writeProfile(j));
		assert.equal(r.status, 1);
		assert.match(r.stdout, /FAIL profiler-cli load skipped/);
	});

	test('exit 2 on bad usage', () => {
		assert.equal(run('burner', '--profile', 'x').status, 2);
		assert.equal(run('nonsense').status, 2);
	});
});

// `bpfprof -- debuginfo` as bpfprof writes it: with the debug file, the
// inlined function as a depth-1 frame at its caller's address, both funcs
// with file and first line; stripped, only "debuginfo+0x..." offsets. The
// lines are of the kind debuginfo.sh reads from the workload's source.
const DEBUGINFO_OPTS = { pid: '6100', outerLines: { from: 56, to: 63 }, inlinedLines: { from: 45, to: 54 },
			 callLine: 61, outerCallLine: 97 };
const DEBUGINFO_FILE = '/src/tests/workloads/debuginfo.c';
const HOT_ADDRESS = 0x1325;

function debuginfoProfile(overrides = {}) {
	const o = { stripped: false, samples: 1000, inlinedShare: 0.9, outerShare: 0.98, underMainShare: 0,
		    outerUnder: 'main', ...overrides };
	const b = new ProfileBuilder({ interval: 1 });
	const t = b.thread({ pid: 6100, tid: 6100, name: 'debuginfo', isMainThread: true, processName: 'debuginfo' });
	const U = (name, lib = 'debuginfo') => [name, CAT.USER, lib];
	const root = [U('__libc_start_call_main', 'libc.so.6'), U(o.stripped ? 'debuginfo+0x1110' : o.outerUnder)];
	const outer = U(o.stripped ? 'debuginfo+0x1303' : OUTER);
	const hot = [outer, U(o.stripped ? 'debuginfo+0x1325' : INLINED)];
	for (let i = 0; i < o.samples; i++) {
		const r = (i + 0.5) / o.samples;
		let stack = [U('__libc_start_call_main', 'libc.so.6'), U('clock_gettime', 'libc.so.6'),
			     ['entry_SYSCALL_64', CAT.KERNEL]];
		if (r < o.underMainShare)
			stack = [...root, hot[1]];
		else if (r < o.inlinedShare)
			stack = o.stripped ? [...root, hot[1]] : [...root, ...hot];
		else if (r < o.outerShare)
			stack = [...root, outer];
		t.sample(stack, 1 + i, 1000);
	}
	const j = b.build();
	if (o.stripped)
		return j;
	const { frameTable: ft, funcTable: fn, stringArray } = j.shared;
	stringArray.push(DEBUGINFO_FILE);
	j.shared.sources = { length: 1, id: [null], filename: [stringArray.length - 1], startLine: [1],
			     startColumn: [1], sourceMapURL: [null], content: [null] };
	const start = { main: 76, [OUTER]: 56, [INLINED]: 45 };
	for (let f = 0; f < fn.length; f++) {
		const name = stringArray[fn.name[f]];
		if (name in start) {
			fn.source[f] = 0;
			fn.lineNumber[f] = start[name];
		}
	}
	for (let f = 0; f < ft.length; f++) {
		const name = stringArray[fn.name[ft.func[f]]];
		if (name === 'main')
			ft.line[f] = DEBUGINFO_OPTS.outerCallLine;
		if (name === OUTER || name === INLINED)
			ft.address[f] = HOT_ADDRESS;
		if (name === OUTER)
			ft.line[f] = DEBUGINFO_OPTS.callLine;
		if (name === INLINED) {
			ft.inlineDepth[f] = 1;
			ft.line[f] = 50;
		}
	}
	return j;
}

// Applies fn(table, index) to the rows of FUNC in the frame or func table.
function patchRows(j, table, func, fn) {
	const { stringArray, funcTable } = j.shared;
	const t = j.shared[table];
	for (let i = 0; i < t.length; i++) {
		const f = table === 'funcTable' ? i : t.func[i];
		if (stringArray[funcTable.name[f]] === func)
			fn(t, i);
	}
	return j;
}

describe('debuginfo checks', () => {
	const run = (json, o = {}) => failures((r) => checkDebuginfo(r, profileOf(json), { ...DEBUGINFO_OPTS, ...o }));
	const control = { withoutDebugFile: true };

	test('a good profile passes', () => assert.deepEqual(run(debuginfoProfile()), []));
	test('a good control profile passes the control', () =>
		assert.deepEqual(run(debuginfoProfile({ stripped: true }), control), []));

	test('an inlined frame at depth 0 fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', INLINED, (t, i) => (t.inlineDepth[i] = 0))),
				[/inlineDepth >= 1: 1 of 1 do not/, /the frame above it is debuginfo_outer_loop one inlineDepth up/]));
	test('an inlined frame without a line fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', INLINED, (t, i) => (t.line[i] = null))),
				[/has a line in 45-54: 1 of 1 do not/]));
	test('an inlined frame with a line outside its function fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', INLINED, (t, i) => (t.line[i] = 70))),
				[/has a line in 45-54: 1 of 1 do not/]));
	test('an inlined frame under another caller fails', () =>
		assertOnlyFails(run(debuginfoProfile({ underMainShare: 0.05 })),
				[/the frame above it is debuginfo_outer_loop .*: 50 are not \(caller main: 50\)/]));
	test('an inlined frame at another address than its caller fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', INLINED, (t, i) => (t.address[i] += 4))),
				[/the frame above it is debuginfo_outer_loop .*: 900 are not \(caller address/]));
	test('the caller at another line than the call fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', OUTER, (t, i) => (t.line[i] = 60))),
				[/at the call's line 61 in 0 of 900 \(lines: 60: 900\)/]));
	test('the outer loop under another caller fails', () =>
		assertOnlyFails(run(debuginfoProfile({ outerUnder: 'start_thread' })),
				[/main is the caller of debuginfo_outer_loop in 0.0%.*start_thread: 980/]));
	test('main at another line than its call fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'frameTable', 'main', (t, i) => (t.line[i] = 98))),
				[/that main frame is at the line of the call, 97, in 0 of 980 \(lines: 98: 980\)/]));
	test('an inlined func without a source file fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'funcTable', INLINED, (t, i) => (t.source[i] = null))),
				[/debuginfo_inlined_mix: every func \(1\) has a file/]));
	test('an inlined func without a first line fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile(), 'funcTable', INLINED, (t, i) => (t.lineNumber[i] = null))),
				[/debuginfo_inlined_mix: every func \(1\) has a file ending in debuginfo.c and lineNumber 45/]));
	test('an outer func in another file fails', () => {
		const j = debuginfoProfile();
		j.shared.stringArray[j.shared.sources.filename[0]] = '/src/other.c';
		assertOnlyFails(run(j), [/debuginfo_outer_loop: every func/, /debuginfo_inlined_mix: every func/]);
	});
	test('the outer loop in too few samples fails', () =>
		assertOnlyFails(run(debuginfoProfile({ inlinedShare: 0.7, outerShare: 0.85 })),
				[/debuginfo_outer_loop is in 85.0% of the on-CPU samples/]));
	test('the inlined function seldom on top fails', () =>
		assertOnlyFails(run(debuginfoProfile({ inlinedShare: 0.3 })), [/debuginfo_inlined_mix is the leaf of 30.0%/]));
	test('the outer loop in another library fails', () => {
		const j = debuginfoProfile();
		const libc = j.shared.funcTable.resource[0]; // __libc_start_call_main's
		patchRows(j, 'funcTable', OUTER, (t, i) => (t.resource[i] = libc));
		assertOnlyFails(run(j), [/debuginfo_outer_loop frames, all User code of resource "debuginfo"/]);
	});
	test('too few samples fail', () =>
		assertOnlyFails(run(debuginfoProfile({ samples: 150 })), [/150 on-CPU samples \(need >= 200\)/]));

	test('the stripped profile fails the real checks', () =>
		assertOnlyFails(run(debuginfoProfile({ stripped: true })),
				[/debuginfo_outer_loop is in 0.0%/, /0 debuginfo_outer_loop frames/,
				 /debuginfo_inlined_mix has frames in the profile \(0\)/,
				 /debuginfo_outer_loop: every func \(0\)/, /debuginfo_inlined_mix: every func \(0\)/]));
	test('names in the control fail', () =>
		assertOnlyFails(run(debuginfoProfile(), control),
				[/no function is named/, /named by its offset/, /has an inline depth, a line or a source/]));
	test('a line in the control fails', () =>
		assertOnlyFails(run(patchRows(debuginfoProfile({ stripped: true }), 'frameTable', 'debuginfo+0x1325',
					      (t, i) => (t.line[i] = 50)), control),
				[/has an inline depth, a line or a source file \(found debuginfo\+0x1325\)/]));
});

describe('debuginfo checks through profiler-cli', () => {
	const viaCli = (json, o = {}) => {
		const profile = profileOf(json);
		const opts = { ...DEBUGINFO_OPTS, ...o };
		return failures((r) => checkWithProfilerCli(r, profile, (cli, handles) =>
			checkDebuginfoWithCli(r, profile, cli, handles, opts)));
	};

	test('a good profile passes', () => assert.deepEqual(viaCli(debuginfoProfile()), []));
	test('the loader sees inlined samples on lines outside the body', () =>
		assertOnlyFails(viaCli(patchRows(debuginfoProfile(), 'frameTable', INLINED, (t, i) => (t.line[i] = 70))),
				[/the lines of debuginfo_inlined_mix's body hold 0 self samples, its own 900/]));
	test('the loader sees another caller', () =>
		assertOnlyFails(viaCli(debuginfoProfile({ underMainShare: 0.05 })),
				[/bottom-up: all 900 samples of debuginfo_inlined_mix are called from debuginfo_outer_loop/]));
	test('the loader sees names in the control', () => {
		assert.deepEqual(viaCli(debuginfoProfile({ stripped: true }), { withoutDebugFile: true }), []);
		assertOnlyFails(viaCli(debuginfoProfile(), { withoutDebugFile: true }), [/profiler-cli: no function named/]);
	});

	test('check.mjs debuginfo: exit 0, 1 and 2', () => {
		const script = join(here, 'check.mjs');
		const run = (...args) => spawnSync(process.execPath, [script, 'debuginfo', ...args], { encoding: 'utf8' });
		const good = writeProfile(debuginfoProfile());
		const lines = ['--outer-lines', '56-63', '--inlined-lines', '45-54', '--call-line', '61',
			       '--outer-call-line', '97'];
		const r = run('--profile', good, '--pid', '6100', ...lines);
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok   profiler-cli annotate: the lines of debuginfo_inlined_mix's body hold 900/);
		assert.equal(run('--profile', good, '--pid', '6100', '--without-debug-file').status, 1);
		assert.equal(run('--profile', good, '--pid', '6100', ...lines.slice(0, 6)).status, 2);
		assert.equal(run('--profile', good, '--pid', '6100', ...lines, '--inlined-lines', '54-45').status, 2);
	});
});
