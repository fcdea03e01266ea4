// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of the syscall checks (node --test): a hand-made profile of the
// syscaller workload, written the way the emitter writes syscall markers and
// totals, passes every check of syscall_checks.mjs; each variant that breaks
// one property (no read markers, a flood of getppid markers, wrong fd or
// byte counts, a count that is not the workload's, ...) fails exactly the
// checks about it, on the file and through profiler-cli. Needs no root and no
// bpfprof; the loader tests need profiler-cli (CHECK_NODE_MODULES).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Profile } from './profile.mjs';
import { Report } from './report.mjs';
import { assertOnlyFails, selftestFiles } from './selftest_assert.mjs';
import { checkSyscalls, parseBpfprofSummary, parseSyscallerTruth, SYSCALL_SCHEMA, TOTALS_NAME, TOTALS_SCHEMA }
	from './syscall_checks.mjs';
import { CAT, ProfileBuilder, paintMarkers } from './synth.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const writeFile = selftestFiles('syscall');

// ---- a hand-made syscaller profile ----------------------------------------------------

function field(key, label, format) {
	return { key, label, format };
}

// The emitter's two schemas (userspace/emit/syscall_markers.c).
const SYSCALL_SCHEMAS = [
	{
		name: SYSCALL_SCHEMA,
		display: ['marker-chart', 'marker-table'],
		chartLabel: '{marker.data.syscall}({marker.data.args})',
		tableLabel: '{marker.data.syscall}({marker.data.args}) = {marker.data.ret}',
		fields: [field('syscall', 'Syscall', 'string'), field('args', 'Arguments', 'string'),
			 field('fd', 'File descriptor', 'integer'), field('count', 'Bytes asked', 'bytes'),
			 field('ret', 'Returned', 'integer'), field('error', 'Error', 'string')],
	},
	{
		name: TOTALS_SCHEMA,
		display: ['marker-table'],
		tableLabel: '{marker.data.syscall}: {marker.data.count} calls',
		fields: [field('syscall', 'Syscall', 'string'), field('count', 'Calls', 'integer'),
			 field('time', 'Total time', 'duration'), field('average', 'Average time', 'duration'),
			 field('shown', 'Shown as markers', 'integer'), field('thresholdMs', 'Marker threshold', 'milliseconds')],
	},
];

const DEFAULTS = {
	pid: 8000,
	tids: { sreader: 8001, sfeeder: 8002, sspinner: 8003 },
	thresholdMs: 1,
	syscalls: true, // false: recorded with --no-syscalls
	schemas: true,
	periodMs: 20,
	writes: 50,
	readFd: 3, // the reader's fd, as the workload says
	writeFd: 4,
	ask: 4096,
	bytes: 100,
	// What the read markers say (defaults: the truth).
	readMarkers: true,
	markerFd: null,
	markerCount: null,
	markerRet: null,
	readCategory: CAT.KERNEL,
	readMs: null, // each read marker's length (default: the period, less 0.04 ms)
	getppid: 500000, // calls the spinner made (at threshold 0: see getppidAt0)
	getppidAt0: 3000,
	getppidMarkers: null, // null: 1 preempted call at a threshold, every call at 0
	getppidMarkerMs: 1.5, // a getppid marker's length at a threshold
	slowCalls: 5, // getppid calls of 1 ms or more by the spinner's own clock
	getppidCountDelta: 0, // the totals' count minus the calls made
	getppidMs: 20, // the calls' total time, besides those long enough for a marker
	loopWallMs: 1000,
	shownDelta: 0, // added to the getppid totals' "shown"
	writeMarkersDropped: 0, // at threshold 0: write markers missing from the profile
	totalsCategory: CAT.OTHER,
	failedCallError: 'EAGAIN', // the error named on a failed call of the main thread
	thresholdInTotals: null, // thresholdMs written in the totals (default thresholdMs)
};

const SYS_ENTRY = ['entry_SYSCALL_64_after_hwframe', 'do_syscall_64'];

// Returns { json, truthText, summaryText } for the profile and what the
// workload and bpfprof would have printed.
function syscallerProfile(overrides = {}) {
	const o = { ...DEFAULTS, ...overrides };
	const b = new ProfileBuilder({ interval: 1 });
	const U = (name) => [name, CAT.USER, 'syscaller'];
	const K = (name) => [name, CAT.KERNEL];
	const LIBC = (name) => [name, CAT.USER, 'libc.so.6'];
	const worker = [LIBC('clone3'), LIBC('start_thread'), U('worker_start')];
	const span = o.writes * o.periodMs + 5;
	const threshold = o.thresholdMs;
	const getppidCalls = threshold === 0 ? o.getppidAt0 : o.getppid;
	let counted = 0;
	let markers = 0;

	const thread = (tid, name) => b.thread({ pid: o.pid, tid, name, isMainThread: tid === o.pid, processName: 'syscaller' });
	// Totals of one syscall, the way syscall_totals_data_write() writes them.
	const totals = (th, syscall, count, timeMs, shown) => {
		counted += count;
		if (!o.syscalls)
			return;
		const ns = Math.round(timeMs * 1e6);
		th.marker(TOTALS_NAME, 0.5, span, 1, o.totalsCategory, {
			type: TOTALS_SCHEMA, syscall, count, time: ns / 1e6, average: Math.floor(ns / count) / 1e6, shown,
			thresholdMs: o.thresholdInTotals ?? threshold,
		});
	};
	const syscall = (th, name, start, end, data, category = CAT.KERNEL) => {
		markers++;
		if (o.syscalls)
			th.marker(name, start, end, 1, category, { type: SYSCALL_SCHEMA, syscall: name, ...data });
	};

	// main: sleeps the whole run; one failed call, as a process makes.
	const main = thread(o.pid, 'syscaller');
	main.sample([LIBC('__libc_start_main'), U('main'), LIBC('clock_nanosleep'), ...SYS_ENTRY.map(K)], 1, 50);
	syscall(main, 'clock_nanosleep', 1, span - 1, { args: 'clockid=1, flags=TIMER_ABSTIME', ret: 0 });
	totals(main, 'clock_nanosleep', 1, span - 2, 1);
	const failed = { args: 'uaddr=0x7f00, op=FUTEX_WAIT_PRIVATE, val=2', ret: -11 };
	if (o.failedCallError !== null)
		failed.error = o.failedCallError;
	syscall(main, 'futex', 2, 4, failed);
	totals(main, 'futex', 1, 2, 1);

	// sreader: blocked in read() until each write, then one last read at EOF.
	const reader = thread(o.tids.sreader, 'sreader');
	const readStack = [...worker, U('reader_main'), U('reader_wait'), ...SYS_ENTRY.map(K), K('ksys_read')];
	let readMs = 0;
	let readShown = 0;
	for (let k = 1; k <= o.writes + 1; k++) {
		const eof = k > o.writes;
		const start = eof ? o.writes * o.periodMs + 0.1 : (k - 1) * o.periodMs + 0.06;
		const end = eof ? start + 0.3 : start + (o.readMs ?? o.periodMs - 0.04);
		readMs += end - start;
		reader.sample(readStack, start + 0.01, 10);
		if (!o.readMarkers || end - start < threshold)
			continue;
		const fd = o.markerFd ?? o.readFd;
		const count = o.markerCount ?? o.ask;
		syscall(reader, 'read', start, end,
			{ args: `fd=${fd}, count=${count}`, fd, count, ret: eof ? 0 : (o.markerRet ?? o.bytes) }, o.readCategory);
		readShown++;
	}
	totals(reader, 'read', o.writes + 1, readMs, readShown);

	// sfeeder: a short write per period, a marker each only at threshold 0.
	const feeder = thread(o.tids.sfeeder, 'sfeeder');
	const writeStack = [...worker, U('feeder_main'), U('feeder_post'), ...SYS_ENTRY.map(K), K('ksys_write')];
	let writeShown = 0;
	for (let k = 1; k <= o.writes; k++) {
		const start = k * o.periodMs;
		feeder.sample(writeStack, start + 0.001, 5);
		if (threshold > 0.002 || k <= o.writeMarkersDropped)
			continue;
		syscall(feeder, 'write', start, start + 0.002,
			{ args: `fd=${o.writeFd}, count=${o.bytes}`, fd: o.writeFd, count: o.bytes, ret: o.bytes });
		writeShown++;
	}
	totals(feeder, 'write', o.writes, o.writes * 0.002, writeShown);

	// sspinner: getppid() in a loop; markers only for calls past the threshold.
	const spinner = thread(o.tids.sspinner, 'sspinner');
	const spinStack = [...worker, U('spinner_main'), U('spinner_call'), ...SYS_ENTRY.map(K), K('__x64_sys_getppid')];
	for (let t = 1; t < o.loopWallMs; t += 1)
		spinner.sample(spinStack, t, 1000);
	const nMarkers = o.getppidMarkers ?? (threshold === 0 ? getppidCalls : 1);
	const markerMs = threshold === 0 ? o.getppidMs / getppidCalls : o.getppidMarkerMs;
	for (let i = 0; i < nMarkers; i++) {
		const start = 1 + (i * (o.loopWallMs - 2)) / nMarkers;
		syscall(spinner, 'getppid', start, start + markerMs, { args: '', ret: o.pid - 1 });
	}
	// A call long enough for a marker adds its time to the total.
	const spinMs = threshold === 0 ? o.getppidMs : o.getppidMs + nMarkers * markerMs;
	totals(spinner, 'getppid', getppidCalls + o.getppidCountDelta, spinMs, nMarkers + o.shownDelta);

	const json = b.build();
	json.meta.markerSchema = o.syscalls && o.schemas ? structuredClone(SYSCALL_SCHEMAS) : [];
	const truthText =
		`syscaller: truth sreader tid ${o.tids.sreader} fd ${o.readFd} ask ${o.ask} reads ${o.writes + 1} ` +
		`bytes ${o.writes * o.bytes}\n` +
		`syscaller: truth sfeeder tid ${o.tids.sfeeder} fd ${o.writeFd} bytes_per_write ${o.bytes} ` +
		`writes ${o.writes} period_ms ${o.periodMs}\n` +
		`syscaller: truth sspinner tid ${o.tids.sspinner} getppid ${getppidCalls} loop_wall_ms ${o.loopWallMs.toFixed(3)} ` +
		`slow_1ms ${o.slowCalls}\n`;
	const summaryText = o.syscalls
		? `bpfprof: ${counted} syscalls counted, ${markers} shown as markers; 0 markers and 0 totals lost\n` : '';
	paintMarkers(json, { 'bpfprof.Syscall': 'purple' });
	return { json, truthText, summaryText };
}

// ---- running the checks -------------------------------------------------------------------

// Runs checkSyscalls on a hand-made profile and returns the failed messages.
// checkOpts: the options the checker is given (default: what the profile was
// made with); summaryText: bpfprof's stderr (default: matching the profile).
function run(overrides = {}, { cli = false, on, thresholdMs, summaryText, truthText } = {}) {
	const made = syscallerProfile(overrides);
	const report = new Report('selftest', { out: () => {} });
	const profile = Profile.fromFile(writeFile(JSON.stringify(made.json)));
	const o = { ...DEFAULTS, ...overrides };
	checkSyscalls(report, profile, {
		pid: o.pid,
		truth: parseSyscallerTruth(truthText ?? made.truthText),
		on: on ?? o.syscalls,
		thresholdMs: thresholdMs ?? o.thresholdMs,
		summary: parseBpfprofSummary(summaryText ?? made.summaryText),
		cli,
	});
	return report.failures;
}

describe('parsing', () => {
	test('truth lines and the summary', () => {
		const t = parseSyscallerTruth('noise\nsyscaller: truth sreader tid 12 fd 3 ask 4096 reads 101 bytes 10000\n' +
					      'syscaller: truth sfeeder tid 13 fd 4 bytes_per_write 100 writes 100 period_ms 20\n' +
					      'syscaller: truth sspinner tid 14 getppid 1234567 loop_wall_ms 1999.941 slow_1ms 7\n');
		assert.deepEqual(t.sreader, { tid: '12', fd: 3, ask: 4096, reads: 101, bytes: 10000 });
		assert.deepEqual(t.sfeeder, { tid: '13', fd: 4, bytesPerWrite: 100, writes: 100, periodMs: 20 });
		assert.deepEqual(t.sspinner, { tid: '14', getppid: 1234567, loopWallMs: 1999.941, slow: 7 });
		assert.throws(() => parseSyscallerTruth('syscaller: truth sreader tid 12 fd 3 ask 4096 reads 101 bytes 1\n'),
			      /no "syscaller: truth sfeeder/);
		assert.deepEqual(parseBpfprofSummary('x\nbpfprof: 20 syscalls counted, 5 shown as markers; 1 markers and 2 totals lost\n'),
				 { counted: 20, shown: 5, lostMarkers: 1, lostTotals: 2 });
		assert.equal(parseBpfprofSummary('bpfprof: 5 samples from 1 processes\n'), null);
	});
});

describe('default threshold (1 ms)', () => {
	test('a good profile passes', () => assert.deepEqual(run(), []));

	test('no read markers fail the reader checks', () =>
		assertOnlyFails(run({ readMarkers: false }),
				[/^sreader: 0 of its 0 read markers have fd 3/, /^sreader: 0 of 0 read markers return 100 bytes/,
				 /^sreader: its read markers last NaN ms/, /^sreader: 0 read markers for the feeder's 50 writes/]));

	test('a flood of getppid markers fails', () =>
		assertOnlyFails(run({ getppidMarkers: 2000, getppidMarkerMs: 0.0001 }),
				[/every Syscall marker .* \(2000 of \d+ are not: sspinner \(8003\) getppid\[\d+\]: lasts 0\.0001 ms, under the 1 ms/,
				 /^sspinner: 2000 getppid markers at the 1 ms threshold .* no flood/]));

	test('a flood of long getppid markers fails as a flood', () =>
		assertOnlyFails(run({ getppidMarkers: 200 }), [/^sspinner: 200 getppid markers at the 1 ms threshold/]));

	test('as many long getppid markers as calls it measured slow itself pass (a busy machine)', () =>
		assert.deepEqual(run({ getppidMarkers: 200, slowCalls: 200 }), []));

	test('another fd, or the bytes read as count, fail', () => {
		assertOnlyFails(run({ markerFd: 4 }), [/^sreader: 0 of its 50 read markers have fd 3 and count 4096/]);
		assertOnlyFails(run({ markerCount: 100, markerRet: 4096 }),
				[/^sreader: 0 of its 50 read markers have fd 3 and count 4096/,
				 /^sreader: 0 of 50 read markers return 100 bytes/, /returning 204800 bytes \(it read 5000\)/]);
	});

	test('read markers outside the Kernel category fail', () =>
		assertOnlyFails(run({ readCategory: CAT.USER }),
				[/every Syscall marker .*sreader \(8001\) read\[\d+\]: phase 1, category 2/,
				 /^sreader: 50 of its 50 read markers have fd 3 and count 4096 \(the bytes asked\), 0 category Kernel/]));

	test('reads of another length fail', () =>
		assertOnlyFails(run({ readMs: 5 }), [/^sreader: its read markers last 5\.00 ms \(median; the feeder's period 20/]));

	test('a count other than the calls made fails', () => {
		assertOnlyFails(run({ getppidCountDelta: -1 }), [/^sspinner: its getppid totals count 499999 calls, it made 500000/]);
		assertOnlyFails(run({}, { truthText: syscallerProfile().truthText.replace('writes 50', 'writes 51') }),
				[/^sfeeder: its write totals count 50 calls, it made 51/]);
	});

	test('getppid time beyond the loop fails', () =>
		assertOnlyFails(run({ getppidMs: 1200 }),
				[/^sspinner: its getppid calls took 1201\.5 ms in all, within its 1000 ms loop/]));

	test('totals that disagree with the markers or the threshold fail', () => {
		assertOnlyFails(run({ shownDelta: 1 }), [/sspinner \(8003\) getppid: shown 2, but the thread has 1 such markers/]);
		assertOnlyFails(run({ thresholdInTotals: 2 }), [/thresholdMs 2, expected 1/]);
		assertOnlyFails(run({ totalsCategory: CAT.KERNEL }), [/"Syscall totals" markers .*category 1/]);
	});

	test('a failed call without its error name fails', () =>
		assertOnlyFails(run({ failedCallError: null }), [/syscaller \(8000\) futex\[\d+\]: ret -11 with error undefined/]));

	test('missing schemas fail', () =>
		assertOnlyFails(run({ schemas: false }), [/marker schema bpfprof\.Syscall is declared/,
							  /marker schema bpfprof\.SyscallTotals is declared/]));

	test('lost records, or a summary other than the profile, fail', () => {
		const { summaryText } = syscallerProfile();
		assertOnlyFails(run({}, { summaryText: summaryText.replace('0 markers and', '3 markers and') }),
				[/^bpfprof lost no syscall records \(3 markers/]);
		assertOnlyFails(run({}, { summaryText: summaryText.replace(/^bpfprof: \d+/, 'bpfprof: 7') }),
				[/^the profile holds what bpfprof says it recorded: \d+ syscalls in its totals \(bpfprof: 7\)/]);
		assertOnlyFails(run({}, { summaryText: '' }), [/bpfprof printed its syscall summary/]);
	});

	test('a recording at another threshold fails', () =>
		assertOnlyFails(run({ thresholdMs: 1 }, { thresholdMs: 0 }),
				[/thresholdMs 1, expected 0/, /^sreader at threshold 0: 50 read markers \(the reader made 51\), 0 at end/,
				 /^sfeeder at threshold 0: 0 write markers/, /^sspinner at threshold 0: 1 getppid markers/,
				 /every one of the \d+ totals of pid 8000 has shown = count/]));
});

describe('threshold 0', () => {
	const at0 = { thresholdMs: 0 };

	test('a good profile passes', () => assert.deepEqual(run(at0), []));

	test('missing write markers fail', () =>
		assertOnlyFails(run({ ...at0, writeMarkersDropped: 2 }),
				[/^sfeeder at threshold 0: 48 write markers \(it made 50\)/,
				 /sfeeder \(8002\) write: 48 shown of 50/]));

	test('a getppid call without its marker fails', () =>
		assertOnlyFails(run({ ...at0, getppidMarkers: 2999 }),
				[/^sspinner at threshold 0: 2999 getppid markers, one per call \(it made 3000\)/,
				 /sspinner \(8003\) getppid: 2999 shown of 3000/]));

	test('a flood at 0 is the truth, a flood at 1 ms is not', () =>
		assertOnlyFails(run(at0, { thresholdMs: 1 }),
				[/every Syscall marker .* under the 1 ms threshold/, /thresholdMs 0, expected 1/,
				 /^sspinner: 3000 getppid markers at the 1 ms/]));
});

describe('--no-syscalls', () => {
	test('a profile without syscalls passes', () => assert.deepEqual(run({ syscalls: false }), []));

	test('syscall markers, totals, schemas or a summary fail', () =>
		assertOnlyFails(run({}, { on: false }),
				[/--no-syscalls: meta.markerSchema has no bpfprof\.Syscall \(found one\)/,
				 /--no-syscalls: meta.markerSchema has no bpfprof\.SyscallTotals \(found one\)/,
				 /^no Syscall or Syscall totals marker in any thread \(found \d+/, /^no marker in category Kernel/,
				 /^bpfprof printed no syscall summary/, /^sreader has no read marker/]));
});

describe('through profiler-cli', () => {
	test('good profiles pass', () => {
		assert.deepEqual(run({}, { cli: true }), []);
		assert.deepEqual(run({ thresholdMs: 0 }, { cli: true }), []);
		assert.deepEqual(run({ syscalls: false }, { cli: true }), []);
	});

	test('the loader sees missing read markers and a getppid flood', () =>
		assertOnlyFails(run({ readMarkers: false, getppidMarkers: 200 }, { cli: true }),
				[/^sreader: 0 of its 0 read markers/, /^sreader: 0 of 0 read markers return/, /^sreader: its read markers last NaN/,
				 /^sreader: 0 read markers for the feeder's/, /^sspinner: 200 getppid markers at the 1 ms/,
				 /^profiler-cli: sreader lists 0 read markers/, /^profiler-cli: sspinner's .* it lists 200 getppid markers/]));

	test('the loader sees the wrong fd and category', () =>
		assertOnlyFails(run({ markerFd: 5, readCategory: CAT.USER }, { cli: true }),
				[/every Syscall marker .*category 2/, /^sreader: 0 of its 50 read markers have fd 3/,
				 /^profiler-cli: sreader lists 50 read markers \(the file has 50\), 0 in category Kernel with fd 3/]));

	test('the loader sees a count other than the calls made', () =>
		assertOnlyFails(run({ getppidCountDelta: 7 }, { cli: true }),
				[/^sspinner: its getppid totals count 500007 calls/,
				 /^profiler-cli: sspinner's "Syscall totals" for getppid says 500007 calls \(it made 500000\)/]));

	test('the loader sees syscall markers in a --no-syscalls profile', () => {
		const failed = run({}, { cli: true, on: false });
		for (const name of ['sreader', 'sfeeder', 'sspinner'])
			assert.ok(failed.some((m) => new RegExp(`^profiler-cli: none of ${name}'s \\d+ markers is a syscall marker`).test(m)),
				  JSON.stringify(failed));
	});
});

describe('syscall_checks.mjs', () => {
	const script = join(here, 'syscall_checks.mjs');
	const runScript = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

	test('exit 0 for a good profile, 1 for a broken one, 2 for bad usage', () => {
		const good = syscallerProfile();
		const path = writeFile(JSON.stringify(good.json));
		const log = writeFile(good.truthText + good.summaryText, 'txt');
		const args = ['--profile', path, '--pid', '8000', '--truth', log, '--bpfprof-err', log, '--syscall-min', '1', '--plain'];
		const r = runScript(...args);
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok   profiler-cli: sreader lists 50 read markers/);
		const bad = syscallerProfile({ getppidMarkers: 100 });
		const badPath = writeFile(JSON.stringify(bad.json));
		const badLog = writeFile(bad.truthText + bad.summaryText, 'txt');
		const b = runScript(...args.map((a) => (a === path ? badPath : a === log ? badLog : a)));
		assert.equal(b.status, 1, b.stdout + b.stderr);
		assert.match(b.stdout, /FAIL sspinner: 100 getppid markers at the 1 ms threshold/);
		assert.equal(runScript('--profile', path, '--pid', '8000', '--truth', log).status, 2);
		assert.equal(runScript('--profile', path, '--pid', '8000', '--truth', log, '--no-syscalls', '--syscall-min', '1')
			.status, 2);
		assert.equal(runScript('--profile', path, '--pid', '8000', '--truth', path, '--syscall-min', '1').status, 2);
	});
});
