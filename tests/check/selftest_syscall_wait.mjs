// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of syscall_wait_checks.mjs (node --test): a profile as
// --syscalls=blocking makes it passes; markers missing, with the wrong fd,
// too short, on the spinner, or with totals beside them fail, each with its
// own check. Needs no root and no bpfprof.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Report } from './report.mjs';
import { assertOnlyFails } from './selftest_assert.mjs';
import { judgeBlocking } from './syscall_wait_checks.mjs';

const WAIT = 'bpfprof.SyscallWait';
const truth = {
	sreader: { tid: '11', fd: 3, ask: 4096, reads: 101, bytes: 10000 },
	sfeeder: { tid: '12', fd: 4, bytesPerWrite: 100, writes: 100, periodMs: 20 },
	sspinner: { tid: '13', getppid: 1000000, loopWallMs: 2000, slow: 0 },
	ssleeper: { tid: '14', nanosleeps: 1800, under: 0 },
};
const SCHEMAS = ['bpfprof.Process', 'bpfprof.Syscall', WAIT];

const BOOT_NS = 5e12;
// The reader's read i began at 10 + 20 i ms and lasted readMs(i); its marker starts 10 µs in.
const readMs = (i) => 19.93 + (i % 3) * 0.05;
truth.readTimes = Array.from({ length: 101 }, (_, i) => ({ startNs: BOOT_NS + (10 + 20 * i) * 1e6,
							   durNs: Math.round(readMs(i) * 1e6) }));

function good() {
	const read = (i) => ({ name: 'read', type: WAIT, start: 10 + 20 * i + 0.01, duration: readMs(i) - 0.03,
			       data: { fd: 3, count: 4096 } });
	return new Map([
		['sreader', Array.from({ length: 100 }, (_, i) => read(i))],
		['sfeeder', Array.from({ length: 100 }, () => ({ name: 'clock_nanosleep', type: WAIT, duration: 19.99, data: {} }))],
		['ssleeper', Array.from({ length: 1800 }, () => ({ name: 'nanosleep', type: WAIT, duration: 1.06, data: {} }))],
		['sspinner', []],
	]);
}

const count = (byThread) => [...byThread.values()].flat().filter((m) => m.type === WAIT).length;

function failures(byThread, { schemas = SCHEMAS, summary = count(byThread),
			      sleeperSched = { offCpuCount: 1800, hiddenOffCpuCount: 1800 - byThread.get('ssleeper').length },
			      bootNs = BOOT_NS, readTruth = truth } = {}) {
	const report = new Report('selftest', { out: () => {} });
	judgeBlocking(report, { byThread, schemas, truth: readTruth, summary, sleeperSched, bootNs });
	return report.failures;
}

describe('syscall wait checks', () => {
	test('a profile as --syscalls=blocking makes it passes', () => assert.deepEqual(failures(good()), []));
	test('read markers missing fail', () => {
		const b = good();
		b.set('sreader', b.get('sreader').slice(0, 90));
		assertOnlyFails(failures(b), [/^90 read markers for the 101 reads/]);
	});
	test('a wrong fd fails', () => {
		const b = good();
		b.get('sreader')[5].data = { fd: 7, count: 4096 };
		assertOnlyFails(failures(b), [/^99 of 100 read markers have fd 3/]);
	});
	test('markers off their read\'s own duration, or outside every timed read, fail', () => {
		const b = good();
		b.get('sreader').slice(0, 20).forEach((m) => { m.duration = 5; });
		assertOnlyFails(failures(b), [/^80 of 100 lie in a read the reader timed/]);
		const c = good();
		c.get('sreader').slice(0, 20).forEach((m) => { m.start = -100; });
		assertOnlyFails(failures(c), [/^80 of 100 lie in a read the reader timed/]);
		assertOnlyFails(failures(good(), { bootNs: NaN }),
				[/startTimeAsClockMonotonicNanosecondsSinceBoot is a number \(found null\)/, /^0 of 100 lie in a read/]);
	});
	test('reads a busy machine stretched pass when their markers follow them', () => {
		// Every other read took 35 ms instead of 20; reads start every 40 ms.
		const ms = (i) => (i % 2 ? 35 : 20);
		const slow = { ...truth, readTimes: Array.from({ length: 101 }, (_, i) =>
			({ startNs: BOOT_NS + (10 + 40 * i) * 1e6, durNs: ms(i) * 1e6 })) };
		const markers = (follow) => {
			const b = good();
			b.get('sreader').forEach((m, i) => {
				m.start = 10 + 40 * i + 0.01;
				m.duration = (follow ? ms(i) : 20) - 0.03;
			});
			return b;
		};
		assert.deepEqual(failures(markers(true), { readTruth: slow }), []);
		assertOnlyFails(failures(markers(false), { readTruth: slow }), [/^50 of 100 lie in a read the reader timed/]);
	});
	test('a few sleeps that waited under 1 ms pass; markers missing, too many short waits, or too short fail', () => {
		const b = good();
		b.set('ssleeper', b.get('ssleeper').slice(0, 1795));
		assert.deepEqual(failures(b), []);
		assertOnlyFails(failures(b, { sleeperSched: { offCpuCount: 1800, hiddenOffCpuCount: 0 } }),
				[/^1795 nanosleep markers: one per wait/]);
		b.set('ssleeper', b.get('ssleeper').slice(0, 1700));
		assertOnlyFails(failures(b), [/^100 of its 1 ms nanosleeps waited less than 1 ms/]);
		assertOnlyFails(failures(good(), { sleeperSched: { offCpuCount: 1500, hiddenOffCpuCount: 0 } }),
				[/counts 1500 waits, 0 of them preemptions, for its 1800/, /^1800 nanosleep markers: one per wait/]);
		// A busy machine preempts the sleeper: two short preemptions are waits, not nanosleeps.
		assert.deepEqual(failures(good(), { sleeperSched: { offCpuCount: 1802, hiddenOffCpuCount: 2, preemptions: 2 } }), []);
		assertOnlyFails(failures(good(), { sleeperSched: { offCpuCount: 1802, hiddenOffCpuCount: 2, preemptions: 0 } }),
				[/counts 1802 waits, 0 of them preemptions, for its 1800/]);
		const c = good();
		c.get('ssleeper')[0].duration = 0.5;
		assertOnlyFails(failures(c), [/no nanosleep marker is shorter/]);
	});
	test('a spinner marker fails', () => {
		const b = good();
		b.set('sspinner', [{ name: 'getppid', type: WAIT, duration: 1.2, data: {} }]);
		assertOnlyFails(failures(b), [/the spinner has no syscall marker \(found 1\)/]);
	});
	test('totals or traced markers, or a summary that disagrees, fail', () => {
		const b = good();
		b.get('sspinner').push({ name: 'Syscall totals', type: 'bpfprof.SyscallTotals', duration: 2000, data: {} });
		assertOnlyFails(failures(b, { schemas: [...SCHEMAS, 'bpfprof.SyscallTotals'] }),
				[/meta.markerSchema has bpfprof.SyscallWait and no/, /no traced syscall or totals marker/]);
		assertOnlyFails(failures(good(), { summary: 5 }), [/summary says 5 waits/]);
	});
});
