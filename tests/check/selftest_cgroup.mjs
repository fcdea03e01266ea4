// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of the cgroup checks (node --test): a hand-made profile of the
// --cgroup scenario of tests/integration/cgroup.sh, written the way the
// emitter writes process names, Process markers and meta.extra, passes
// every check of cgroup_checks.mjs; each variant that breaks one property
// (an outside process recorded, a sample of the mover from before its move,
// the leaver's after its, a sleeper whose waits do not name the waker
// outside, a track without its cgroup, a marker with another
// cgroup, a wrong filter id, ...) fails exactly the checks about it, on the
// file and through profiler-cli. Needs no root and no bpfprof; the loader
// tests need profiler-cli (CHECK_NODE_MODULES).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { checkCgroup, OFFCPU_SCHEMA, parseCgroupTruth, PROCESS_SCHEMA, trackName } from './cgroup_checks.mjs';
import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails, selftestFiles } from './selftest_assert.mjs';
import { checkStructure } from './structure.mjs';
import { CAT, ProfileBuilder, paintMarkers } from './synth.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const writeFile = selftestFiles('cgroup');

// ---- a hand-made --cgroup profile ----------------------------------------------------------

const CG = '/bpfprof-test-100';
const CHILD = `${CG}/child`;
const MONO_START = 5e12; // CLOCK_MONOTONIC ns at the profile's time 0
const mono = (ms) => MONO_START + Math.round(ms * 1e6);

const DEFAULTS = {
	filterId: 4242,
	truthFilterId: null, // the id the test saw (default: filterId)
	filterEntry: true,
	target: `cgroup /sys/fs/cgroup/unified${CG}`,
	startedMs: 100,
	endMs: 4000,
	moveInMs: [1500, 1512],
	moveOutMs: [2500, 2510],
	moverFromMs: 1513, // the mover's first sample
	leaverToMs: 2499, // the leaver's last sample
	leaverWait: null, // [from, to] ms after its move out: off-CPU samples of the leaver
	leaverWaitFrom: -11, // where its Off-CPU marker begins, ms from the move out (null: no marker)
	leaverRanMs: 2700, // when the test saw the leaver run again after the move (null: no truth line)
	childFromMs: 106, // the forked child's first sample
	omitChild: false,
	outsideThread: false, // a thread of the outside burner, with samples
	strangerThread: false, // a thread of a process outside the tree, without samples
	plainName: null, // pid whose tracks lack " [cgroup]"
	markerCgroup: {}, // pid -> the cgroup its Process marker says
	containerId: null, // pid whose Process marker has a containerId
	innerFunc: 'cgroup_burn', // what cg-inner's samples are in
	monotonic: true,
	listEntries: true,
	wokenBy: 302, // who ends cg-waiter's sleeps (null: no waker named)
	wokenByTicker: 150, // how many of its 150 sleeps the ticker ends
	sleeps: 150,
};

// pid, comm, cgroup, burn function, and the sh that joined the cgroup
// before the exec (a process "PID" before "PID.1") for the forker.
const PROCS = [
	{ pid: 200, comm: 'forker', path: CG, func: 'parent_burn', lib: 'forker', wrapper: true },
	{ pid: 201, comm: 'bpfprof-child', path: CG, func: 'child_burn', lib: 'forker' },
	{ pid: 202, comm: 'cg-inner', path: CHILD, func: 'cgroup_burn', lib: 'cgroup_worker' },
	{ pid: 203, comm: 'cg-mover', path: CHILD, func: 'cgroup_burn', lib: 'cgroup_worker' },
	{ pid: 204, comm: 'cg-leaver', path: CHILD, func: 'cgroup_burn', lib: 'cgroup_worker' },
];
const WAITER = { pid: 205, comm: 'cg-waiter', path: CG, func: '-', lib: 'cgroup_worker' };
const OUTSIDE = { pid: 300, comm: 'bpfprof-burner' };
const SHELL = { pid: 301, comm: 'bash' };
const TICKER = { pid: 302, comm: 'cg-ticker' };

const PROCESS_SCHEMA_DEF = {
	name: PROCESS_SCHEMA,
	display: ['marker-chart', 'marker-table'],
	chartLabel: '{marker.data.commandLine}',
	tooltipLabel: '{marker.data.name} ({marker.data.pid})',
	tableLabel: '{marker.data.name} ({marker.data.pid}): {marker.data.commandLine}',
	fields: [
		{ key: 'name', label: 'Name', format: 'string' },
		{ key: 'pid', label: 'PID', format: 'string' },
		{ key: 'commandLine', label: 'Command line', format: 'string' },
		{ key: 'cgroup', label: 'Cgroup', format: 'string' },
		{ key: 'containerId', label: 'Container ID', format: 'string' },
	],
};

const OFFCPU_SCHEMA_DEF = {
	name: OFFCPU_SCHEMA,
	display: ['marker-chart', 'marker-table'],
	chartLabel: '{marker.data.reason}',
	tableLabel: '{marker.data.reason}',
	fields: [
		{ key: 'reason', label: 'Reason', format: 'string' },
		{ key: 'waker', label: 'Woken by', format: 'string' },
		{ key: 'wakerTid', label: 'Waker TID', format: 'tid' },
		{ key: 'wakerPid', label: 'Waker PID', format: 'pid' },
	],
};

// Returns { json, truthText }.
function cgroupProfile(overrides = {}) {
	const o = { ...DEFAULTS, ...overrides };
	const b = new ProfileBuilder({ interval: 1 });
	const members = new Map(); // cgroup -> ["comm (pid)"]
	const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];

	// One process image: its main thread, its Process marker, its samples
	// every 4 ms from `from` to `to` in func (off-CPU ones after `offFrom`).
	const image = ({ id, pid, comm, path, func, lib, from, to, offFrom = Infinity, offTo = -Infinity }) => {
		const name = o.plainName === pid ? comm : trackName(comm, path);
		const th = b.thread({ pid: id, tid: pid, name: comm, isMainThread: true, processName: name });
		const data = { type: PROCESS_SCHEMA, name: comm, pid: String(pid), commandLine: `${comm} 3`,
			       cgroup: o.markerCgroup[pid] ?? path };
		if (o.containerId === pid)
			data.containerId = 'a'.repeat(64);
		th.marker('Process', from, null, 0, CAT.OTHER, data);
		const stack = [LIBC('__libc_start_main'), ['main', CAT.USER, lib], [func, CAT.USER, lib]];
		for (let t = from; t <= to; t += 4)
			th.sample(stack, t, 1000);
		for (let t = offFrom; t <= offTo; t += 4)
			th.sample([...stack, ['off-CPU: preempted', CAT.IDLE, null]], t, 0);
		if (offFrom <= offTo && o.leaverWaitFrom !== null)
			th.marker('Off-CPU', o.moveOutMs[1] + o.leaverWaitFrom, offTo + 1, 1, CAT.OTHER,
				  { type: OFFCPU_SCHEMA, reason: 'preempted' });
		if (!members.has(path))
			members.set(path, []);
		members.get(path).push(`${comm} (${pid})`);
	};

	for (const p of PROCS) {
		let from = o.startedMs + 2;
		let to = 3100;
		let func = p.func;
		const extra = {};
		if (p.comm === 'bpfprof-child') {
			if (o.omitChild)
				continue;
			from = o.childFromMs;
		} else if (p.comm === 'cg-inner') {
			func = o.innerFunc;
		} else if (p.comm === 'cg-mover') {
			from = o.moverFromMs;
			to = o.endMs;
		} else if (p.comm === 'cg-leaver') {
			from = 0;
			to = o.leaverToMs;
			if (o.leaverWait) {
				extra.offFrom = o.moveOutMs[1] + o.leaverWait[0];
				extra.offTo = o.moveOutMs[1] + o.leaverWait[1];
			}
		}
		if (p.wrapper) {
			image({ ...p, id: String(p.pid), comm: 'sh', func: 'dash_main', lib: 'dash', from: o.startedMs, to: o.startedMs + 1 });
			from = o.startedMs + 2;
		}
		image({ ...p, id: p.wrapper ? `${p.pid}.1` : String(p.pid), func, from, to, ...extra });
	}
	// The waiter: asleep in read(2), woken every 20 ms by the ticker.
	{
		const th = b.thread({ pid: WAITER.pid, tid: WAITER.pid, name: WAITER.comm, isMainThread: true,
				      processName: trackName(WAITER.comm, WAITER.path) });
		th.marker('Process', 0, null, 0, CAT.OTHER, { type: PROCESS_SCHEMA, name: WAITER.comm, pid: String(WAITER.pid),
							     commandLine: 'cg-waiter wait ticks', cgroup: WAITER.path });
		const stack = [LIBC('__libc_start_main'), ['main', CAT.USER, 'cgroup_worker'],
			       ['wait_for_tick', CAT.USER, 'cgroup_worker'], LIBC('read'), ['vfs_read', CAT.KERNEL]];
		for (let k = 0; k < o.sleeps; k++) {
			const start = 20 * k + 0.1;
			th.sample([...stack, ['off-CPU: sleeping', CAT.IDLE, null]], start + 10, 0);
			const data = { type: OFFCPU_SCHEMA, reason: 'sleeping' };
			if (o.wokenBy !== null && k < o.wokenByTicker)
				Object.assign(data, { waker: `cg-ticker (${o.wokenBy})`, wakerTid: o.wokenBy, wakerPid: String(o.wokenBy) });
			th.marker('Off-CPU', start, start + 19.9, 1, CAT.OTHER, data);
		}
		members.get(CG).push(`${WAITER.comm} (${WAITER.pid})`);
	}
	if (o.outsideThread) {
		const th = b.thread({ pid: OUTSIDE.pid, tid: OUTSIDE.pid + 1, name: 'alpha', isMainThread: false,
				      processName: OUTSIDE.comm });
		b.thread({ pid: OUTSIDE.pid, tid: OUTSIDE.pid, name: OUTSIDE.comm, isMainThread: true, processName: OUTSIDE.comm });
		for (let t = 10; t < 3000; t += 4)
			th.sample([['alpha_heavy', CAT.USER, 'burner']], t, 1000);
	}
	if (o.strangerThread)
		b.thread({ pid: 777, tid: 777, name: 'sshd', isMainThread: true, processName: 'sshd' });

	const json = b.build();
	json.meta.markerSchema = [structuredClone(PROCESS_SCHEMA_DEF), structuredClone(OFFCPU_SCHEMA_DEF)];
	if (o.monotonic)
		json.meta.startTimeAsClockMonotonicNanosecondsSinceBoot = MONO_START;
	const entries = [
		{ label: 'Command line', format: 'string', value: `bpfprof -a --cgroup ${CG} -d 4` },
		{ label: 'Target', format: 'string', value: o.target },
	];
	if (o.filterEntry)
		entries.push({ label: 'Cgroup filter', format: 'string', value: `${CG} (id ${o.filterId})` });
	if (o.listEntries) {
		for (const [path, list] of [...members].sort())
			entries.push({ label: `Cgroup ${path}`, format: 'string', value: `${list.length} processes: ${list.join(', ')}` });
	}
	json.meta.extra = [{ label: 'bpfprof', entries }];

	const lines = [`cgroup truth filter ${CG} ${o.truthFilterId ?? o.filterId}`, `cgroup truth started ${mono(o.startedMs)}`];
	for (const p of PROCS)
		lines.push(`cgroup truth inside ${p.pid} ${p.comm} ${p.path} ${p.func}`);
	lines.push(`cgroup truth inside ${WAITER.pid} ${WAITER.comm} ${WAITER.path} -`);
	lines.push('cgroup truth forked 201 200');
	lines.push(`cgroup truth woken ${WAITER.pid} ${TICKER.pid}`);
	lines.push(`cgroup truth moved_in 203 ${CHILD} ${mono(o.moveInMs[0])} ${mono(o.moveInMs[1])}`);
	lines.push(`cgroup truth moved_out 204 / ${mono(o.moveOutMs[0])} ${mono(o.moveOutMs[1])}`);
	if (o.leaverRanMs !== null)
		lines.push(`cgroup truth ran 204 ${mono(o.leaverRanMs)}`);
	lines.push(`cgroup truth outside ${OUTSIDE.pid} ${OUTSIDE.comm}`, `cgroup truth outside ${SHELL.pid} ${SHELL.comm}`,
		   `cgroup truth outside ${TICKER.pid} ${TICKER.comm}`);
	paintMarkers(json, { 'bpfprof.Process': 'teal', 'bpfprof.OffCPU': 'blue' });
	return { json, truthText: `noise before\n${lines.join('\n')}\n` };
}

// ---- running the checks -------------------------------------------------------------------

function run(overrides = {}, { cli = false } = {}) {
	const made = cgroupProfile(overrides);
	const report = new Report('selftest', { out: () => {} });
	const profile = Profile.fromFile(writeFile(JSON.stringify(made.json)));
	checkCgroup(report, profile, parseCgroupTruth(made.truthText), { cli });
	return report.failures;
}

describe('parsing', () => {
	test('truth lines', () => {
		const t = parseCgroupTruth(cgroupProfile().truthText);
		assert.deepEqual(t.filter, { path: CG, id: '4242' });
		assert.equal(t.started, mono(100));
		assert.equal(t.inside.length, 6);
		assert.deepEqual(t.inside[5], { pid: '205', comm: 'cg-waiter', path: CG, func: '-' });
		assert.deepEqual(t.woken, [{ pid: '205', waker: '302' }]);
		assert.deepEqual(t.inside[2], { pid: '202', comm: 'cg-inner', path: CHILD, func: 'cgroup_burn' });
		assert.deepEqual(t.movedIn, [{ pid: '203', path: CHILD, t0: mono(1500), t1: mono(1512) }]);
		assert.deepEqual(t.movedOut, [{ pid: '204', path: '/', t0: mono(2500), t1: mono(2510) }]);
		assert.deepEqual(t.ran, [{ pid: '204', t: mono(2700) }]);
		assert.deepEqual(t.forked, [{ pid: '201', parent: '200' }]);
		assert.deepEqual(t.outside.map((x) => x.pid), ['300', '301', '302']);
	});

	test('malformed or missing lines throw', () => {
		assert.throws(() => parseCgroupTruth('cgroup truth inside 12 x /a\n'), /malformed/);
		assert.throws(() => parseCgroupTruth('cgroup truth filter a 1\n'), /malformed/);
		assert.throws(() => parseCgroupTruth('cgroup truth moved_in 1 /a 20 10\n'), /malformed/);
		assert.throws(() => parseCgroupTruth('cgroup truth bogus 1\n'), /malformed/);
		assert.throws(() => parseCgroupTruth('cgroup truth ran 1\n'), /malformed/);
		assert.throws(() => parseCgroupTruth('cgroup truth inside 1 x /a f\n'), /no "cgroup truth filter/);
		assert.throws(() => parseCgroupTruth('cgroup truth filter /a 1\n'), /no "cgroup truth inside/);
	});
});

describe('on the file', () => {
	test('a good profile is well-formed and passes', () => {
		assert.deepEqual(checkStructure(cgroupProfile().json), []);
		assert.deepEqual(run(), []);
	});

	test('an outside process with samples fails membership', () =>
		assertOnlyFails(run({ outsideThread: true }),
				[/^every thread belongs to one of the 6 processes .* \(1 other processes: bpfprof-burner \(300\) \d+ samples/,
				 /^every thread with samples has a pid of the cgroup tree \(1 do not: alpha \(300\/301\)/,
				 /^outside process bpfprof-burner \(300\) has no thread in the profile \(found 2,/]));

	test('even a thread without samples of another process fails', () =>
		assertOnlyFails(run({ strangerThread: true }), [/^every thread belongs to .* \(1 other processes: sshd \(777\) 0 samples/]));

	test('a missing forked child fails', () =>
		assertOnlyFails(run({ omitChild: true }),
				[/^process 201 is present \(no threads\)/,
				 /^a "Cgroup \/bpfprof-test-100" entry lists forker \(200\), bpfprof-child \(201\), cg-waiter \(205\) \(missing: bpfprof-child \(201\)/]));

	test('a child seen before the workloads started fails', () =>
		assertOnlyFails(run({ childFromMs: 50 }), [/^the child 201, forked inside .* first sample is at 50\.0 ms, after .* 100\.0 ms/]));

	test('a sample of the mover from before its move fails', () => {
		assertOnlyFails(run({ moverFromMs: 1400 }),
				[/^no sample of cg-mover from before its move in \(less 20 ms\): found 20 \(20 on-CPU, 0 off-CPU; e\.g\. at -100\.0 ms/]);
		// Within the margin: the boundary is the move, give or take rounding.
		assert.deepEqual(run({ moverFromMs: 1485 }), []);
	});

	test('a sample of the leaver from after its move fails, off-CPU ones too', () => {
		assertOnlyFails(run({ leaverToMs: 2600 }),
				[/^no on-CPU sample of cg-leaver from after its move out \(plus 20 ms\): found 18 \(18 on-CPU/]);
		// A wait that began inside, shown until it ended (before the
		// leaver was seen running again, however long that took), passes.
		assert.deepEqual(run({ leaverWait: [0, 100] }), []);
		assert.deepEqual(run({ leaverWait: [0, 1000], leaverRanMs: 3600 }), []);
		// One stretched past the time the leaver had run again does not.
		assertOnlyFails(run({ leaverWait: [0, 1400] }),
				[/^each off-CPU sample of cg-leaver from after its move out lies in a wait that began inside and ended by 190\.0 ms .*: found 345 \(0 on-CPU, 345 off-CPU; e\.g\. at 24\.0 ms/]);
		// Nor off-CPU samples outside any wait, or in one that began outside.
		assertOnlyFails(run({ leaverWait: [0, 100], leaverWaitFrom: null }),
				[/^each off-CPU sample of cg-leaver .*: found 20 \(0 on-CPU, 20 off-CPU/]);
		assertOnlyFails(run({ leaverWait: [0, 100], leaverWaitFrom: 50 }),
				[/^each off-CPU sample of cg-leaver .*: found 20 \(0 on-CPU, 20 off-CPU/,
				 /^no Off-CPU marker of cg-leaver begins after its move out: found 1: at 50\.0 ms from the move/]);
		// Without the time it ran again, no wait may outlast the move.
		assertOnlyFails(run({ leaverWait: [0, 100], leaverRanMs: null }),
				[/^each off-CPU sample of cg-leaver .*ended by 0\.0 ms .*: found 20 \(0 on-CPU, 20 off-CPU/]);
	});

	test('a mover or leaver without samples in the cgroup fails', () => {
		assertOnlyFails(run({ moverFromMs: 3990 }), [/^after its move in: 3 on-CPU samples \(need >= 50\)/]);
		assertOnlyFails(run({ leaverToMs: 100 }), [/^before its move out: 26 on-CPU samples \(need >= 50\)/]);
	});

	test('a track without its cgroup fails', () =>
		assertOnlyFails(run({ plainName: 202 }), [/^processName is "cg-inner \[\/bpfprof-test-100\/child\]" on every thread \(1 differ: 202\/202 "cg-inner"\)/]));

	test('a wrapper image outside the cgroup fails', () =>
		assertOnlyFails(run({ plainName: 200 }),
				[/^processName is "forker \[\/bpfprof-test-100\]", and "\.\.\. \[\/bpfprof-test-100\]" before its exec, on every thread \(2 differ: 200\/200 "sh"; 200\.1\/200 "forker"\)/]));

	test('a Process marker with another cgroup, or a container id, fails', () => {
		assertOnlyFails(run({ markerCgroup: { 203: '/' } }),
				[/^each main thread has one bpfprof\.Process marker with cgroup "\/bpfprof-test-100\/child" .*\(1 do not: 203: 1 markers: \/\)/]);
		assertOnlyFails(run({ containerId: 201 }), [/\(1 do not: 201: containerId "a{64}"\)/]);
	});

	test('sleeps that do not name the waker outside fail', () => {
		assertOnlyFails(run({ wokenBy: null }),
				[/^0 of cg-waiter's 150 sleeps were ended by its waker 302 outside the tree .*others: \(no waker\) 150\)/]);
		assertOnlyFails(run({ wokenBy: 303 }), [/^0 of cg-waiter's 150 sleeps .*others: cg-ticker \(303\) 150\)/]);
		assertOnlyFails(run({ wokenByTicker: 100 }), [/^100 of cg-waiter's 150 sleeps .*need >= 50 and >= 80%/]);
		assertOnlyFails(run({ sleeps: 40, wokenByTicker: 40 }), [/^40 of cg-waiter's 40 sleeps .*need >= 50/]);
	});

	test('samples in another function fail', () =>
		assertOnlyFails(run({ innerFunc: 'parent_burn' }), [/^cg-inner: \d+ on-CPU samples .* top self function parent_burn 100\.0% \(need cgroup_burn/]));

	test('the filter entry must name the path and the id', () => {
		assertOnlyFails(run({ truthFilterId: 4243 }), [/^one "Cgroup filter" entry, "\/bpfprof-test-100 \(id 4243\)" \(found 1: "\/bpfprof-test-100 \(id 4242\)"\)/]);
		assertOnlyFails(run({ filterEntry: false }), [/^one "Cgroup filter" entry, .* \(found 0\)/]);
		assertOnlyFails(run({ target: 'all processes' }), [/^the Target entry says "cgroup \.\.\.bpfprof-test-100" \(found "all processes"\)/]);
		assert.deepEqual(run({ target: 'cgroup bpfprof-test-100' }), []);
	});

	test('missing per-cgroup entries fail', () =>
		assertOnlyFails(run({ listEntries: false }),
				[/^a "Cgroup \/bpfprof-test-100" entry lists .* \(no such entry\)/,
				 /^a "Cgroup \/bpfprof-test-100\/child" entry lists cg-inner \(202\), cg-mover \(203\), cg-leaver \(204\) \(no such entry\)/]));

	test('without the monotonic start time, the times cannot be checked', () =>
		assertOnlyFails(run({ monotonic: false }), [/^meta\.startTimeAsClockMonotonicNanosecondsSinceBoot is a number \(found undefined\)/]));
});

describe('through profiler-cli', () => {
	test('a good profile passes', () => assert.deepEqual(run({}, { cli: true }), []));

	test('the loader sees an outside process, a plain track name and a wrong marker cgroup', () =>
		assertOnlyFails(run({ outsideThread: true, plainName: 204, markerCgroup: { 202: '/elsewhere' } }, { cli: true }),
				[/^every thread belongs/, /^every thread with samples/, /^outside process bpfprof-burner/,
				 /^processName is "cg-leaver/, /^each main thread has one bpfprof\.Process marker .*202: 1 markers: \/elsewhere/,
				 /^profiler-cli lists only processes of the cgroup tree \(others: bpfprof-burner \(300\)\)/,
				 /^profiler-cli names process 204 "cg-leaver \[\/bpfprof-test-100\/child\]" \(found "cg-leaver"\)/,
				 /^profiler-cli: cg-inner's bpfprof\.Process marker says cgroup "\/bpfprof-test-100\/child" \(found 1 markers: \/elsewhere\)/]));

	test('the loader sees samples in another function', () =>
		assertOnlyFails(run({ innerFunc: 'parent_burn' }, { cli: true }),
				[/^cg-inner: \d+ on-CPU samples/, /^profiler-cli: top self function of cg-inner \(202\) is cgroup_burn \(found cgroup_worker!parent_burn/]));
});

describe('cgroup_checks.mjs', () => {
	const script = join(here, 'cgroup_checks.mjs');
	const runScript = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

	test('exit 0 for a good profile, 1 for a broken one, 2 for bad usage', () => {
		const good = cgroupProfile();
		const path = writeFile(JSON.stringify(good.json));
		const truth = writeFile(good.truthText, 'txt');
		const r = runScript('--profile', path, '--truth', truth, '--plain');
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok   profiler-cli names process 200\.1 "forker \[\/bpfprof-test-100\]"/);
		const bad = cgroupProfile({ moverFromMs: 1000 });
		const b = runScript('--profile', writeFile(JSON.stringify(bad.json)), '--truth', writeFile(bad.truthText, 'txt'));
		assert.equal(b.status, 1, b.stdout + b.stderr);
		assert.match(b.stdout, /FAIL no sample of cg-mover from before its move in/);
		assert.equal(runScript('--profile', path).status, 2);
		assert.equal(runScript('--profile', path, '--truth', writeFile('cgroup truth filter /x 1\n', 'txt')).status, 2);
	});
});
