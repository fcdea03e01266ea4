#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Syscall markers under --syscalls=blocking, the default (issue 18): a
// profile of `syscaller SECONDS 20`, judged against what the workload says
// it did. Without sys_enter/sys_exit, a syscall is a marker where it made
// the thread wait at least --syscall-min (1 ms), named from the registers at
// the switch-out:
//
//   - sreader: one "read" marker per read(2) it made (give or take the last,
//     cut by the end of the recording), each with its fd and the bytes it
//     asked, >= 90 % of them inside a read the reader timed itself and
//     lasting that read's own duration within 10 % (a read waits for the
//     feeder's next write, ~20 ms, but on a busy machine the feeder and the
//     reader wait for CPUs too: the read's own clock is the truth);
//   - ssleeper: its nanosleep(2) calls of 1 ms each made it wait once (the
//     scheduling summary's waits = its calls), and every such wait of at
//     least 1 ms is a "nanosleep" marker: markers = waits - the waits under
//     the threshold, which may be none or a few (a 1 ms sleep whose vCPU or
//     interrupts took some of it before it slept); at most 1 % of them;
//   - sspinner: none (getppid never waits);
//   - no "Syscall totals" and no traced "Syscall" marker anywhere (nothing
//     counts every call), and as many wait markers as bpfprof's summary says.
//
//   syscall_wait_checks.mjs --profile F --pid P --truth FILE --bpfprof-err FILE [--gzip|--plain]

import { readFileSync } from 'node:fs';

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';
import { parseSyscallerTruth } from './syscall_checks.mjs';

const WAIT_SCHEMA = 'bpfprof.SyscallWait';
const TRACED_SCHEMA = 'bpfprof.Syscall';
const TOTALS_SCHEMA = 'bpfprof.SyscallTotals';
const READ_TOLERANCE = 0.10;
const SHORT_SLEEPS_MAX_PERCENT = 1;
const MATCHED_PERCENT = 90;
// A marker starts after its read began (the switch-out follows the entry).
const START_SLACK_NS = 50000;
const USAGE = 'usage: syscall_wait_checks.mjs --profile FILE --pid PID --truth FILE --bpfprof-err FILE [--gzip|--plain]';

// "bpfprof: N waits inside syscalls shown as markers ..." of the summary, or null.
export function parseWaitSummary(text) {
	const m = text.match(/^bpfprof: (\d+) waits inside syscalls shown as markers/m);
	return m ? Number(m[1]) : null;
}

// The reader's own timing of each read(2): [{ startNs, durNs }] (CLOCK_MONOTONIC).
export function parseReadTimes(text) {
	const m = text.match(/^syscaller: truth sreader_reads((?: \d+\+\d+)*)$/m);
	if (!m)
		throw new Error('the truth has no "syscaller: truth sreader_reads ..." line');
	return m[1].trim().split(/\s+/).filter(Boolean).map((pair) => {
		const [start, dur] = pair.split('+').map(Number);
		return { startNs: start, durNs: dur };
	});
}

// The ssleeper's truth line (syscaller.c), which parseSyscallerTruth leaves alone.
export function parseSleeperTruth(text) {
	const m = text.match(/^syscaller: truth ssleeper tid (\d+) nanosleeps (\d+) under_1ms (\d+)$/m);
	if (!m)
		throw new Error('the truth has no "syscaller: truth ssleeper ..." line');
	return { tid: m[1], nanosleeps: Number(m[2]), under: Number(m[3]) };
}

/*
 * The verdict, from plain data:
 *   byThread  thread name -> its markers [{ name, type, duration, data }]
 *   schemas   the names in meta.markerSchema
 *   truth     parseSyscallerTruth's, plus .ssleeper from parseSleeperTruth
 *   summary   parseWaitSummary's count
 *   sleeperSched  the ssleeper's scheduling summary marker data ({ offCpuCount, hiddenOffCpuCount })
 *   bootNs    the profile's time 0 on CLOCK_MONOTONIC (meta.startTimeAsClockMonotonicNanosecondsSinceBoot)
 * Markers are { name, type, start (ms), duration, data }; truth.readTimes the reader's own timing.
 */
export function judgeBlocking(report, { byThread, schemas, truth, summary, sleeperSched, bootNs }) {
	const all = [...byThread.values()].flat();
	const waits = all.filter((m) => m.type === WAIT_SCHEMA);

	report.section('schemas and counts');
	report.check(schemas.includes(WAIT_SCHEMA) && !schemas.includes(TOTALS_SCHEMA),
		     `meta.markerSchema has ${WAIT_SCHEMA} and no ${TOTALS_SCHEMA} (found ${schemas.join(', ')})`);
	const traced = all.filter((m) => m.type === TRACED_SCHEMA || m.type === TOTALS_SCHEMA);
	report.check(traced.length === 0, `no traced syscall or totals marker anywhere (found ${traced.length})`);
	report.check(summary === waits.length,
		     `bpfprof's summary says ${summary} waits shown as markers; the file has ${waits.length}`);

	report.section(`sreader: read(2) of fd ${truth.sreader.fd}, ${truth.sreader.reads} calls`);
	const reads = (byThread.get('sreader') || []).filter((m) => m.type === WAIT_SCHEMA && m.name === 'read');
	const r = truth.sreader;
	report.check(reads.length >= r.reads - 2 && reads.length <= r.reads,
		     `${reads.length} read markers for the ${r.reads} reads it made (need ${r.reads - 2} to ${r.reads})`);
	const args = reads.filter((m) => m.data.fd === r.fd && m.data.count === r.ask);
	report.check(reads.length > 0 && args.length === reads.length,
		     `${args.length} of ${reads.length} read markers have fd ${r.fd} and count ${r.ask}`);
	// Each marker's read: the one that was in progress when the marker began.
	const times = truth.readTimes || [];
	report.check(Number.isFinite(bootNs), `meta.startTimeAsClockMonotonicNanosecondsSinceBoot is a number ` +
		     `(found ${JSON.stringify(bootNs)})`);
	const matched = reads.filter((m) => {
		const at = bootNs + m.start * 1e6;
		const read = times.find((t) => at >= t.startNs - START_SLACK_NS && at <= t.startNs + t.durNs);
		return read && Math.abs(m.duration - read.durNs / 1e6) <= (read.durNs / 1e6) * READ_TOLERANCE;
	});
	report.check(reads.length > 0 && percent(matched.length, reads.length) >= MATCHED_PERCENT,
		     `${matched.length} of ${reads.length} lie in a read the reader timed and last its duration ` +
			     `within ${READ_TOLERANCE * 100}% (need >= ${MATCHED_PERCENT}%; ${times.length} reads timed)`);

	const s = truth.ssleeper;
	report.section(`ssleeper: ${s.nanosleeps} nanosleep(2) of 1 ms`);
	const naps = (byThread.get('ssleeper') || []).filter((m) => m.type === WAIT_SCHEMA && m.name === 'nanosleep');
	const sleeps = sleeperSched?.offCpuCount ?? -1, short = sleeperSched?.hiddenOffCpuCount ?? -1;
	// On a busy machine the thread is also preempted now and then: those are waits of the
	// summary too, but no nanosleep's; a preemption of 1 ms or more is an Off-CPU marker.
	const preempted = sleeperSched?.preemptions ?? 0;
	const longPreempted = (byThread.get('ssleeper') || []).filter((m) => m.type === 'bpfprof.OffCPU' &&
		(m.data.reason === 'preempted' || m.data.reason === 'yielded')).length;
	report.check(sleeps - preempted >= s.nanosleeps && sleeps - preempted <= s.nanosleeps + 1,
		     `its scheduling summary counts ${sleeps} waits, ${preempted} of them preemptions, for its ` +
			     `${s.nanosleeps} nanosleeps (one each)`);
	report.check(short >= 0 && naps.length === sleeps - short - longPreempted,
		     `${naps.length} nanosleep markers: one per wait of at least 1 ms (${sleeps} waits, ${short} shorter, ` +
			     `${longPreempted} long preemptions)`);
	report.check(short >= 0 && percent(short, s.nanosleeps) <= SHORT_SLEEPS_MAX_PERCENT,
		     `${short} of its 1 ms nanosleeps waited less than 1 ms off the CPU (at most ` +
			     `${SHORT_SLEEPS_MAX_PERCENT}%)`);
	const under = naps.filter((m) => m.duration < 1);
	report.check(under.length === 0, `no nanosleep marker is shorter than the 1 ms threshold (found ${under.length}` +
		     `${under.length ? `, shortest ${fmt(Math.min(...under.map((m) => m.duration)))} ms` : ''})`);

	report.section('sspinner: getppid(2) never waits');
	const spin = (byThread.get('sspinner') || []).filter((m) => m.type === WAIT_SCHEMA);
	report.check(spin.length === 0, `the spinner has no syscall marker (found ${spin.length})`);
}

function markersByThread(profile, pid) {
	const out = new Map();
	for (const t of profile.threadsOf(String(pid))) {
		const m = t.markers;
		const list = [];
		for (let i = 0; i < (m?.length || 0); i++)
			list.push({ name: profile.string(m.name[i]), type: m.data[i]?.type, data: m.data[i] || {},
				    start: m.startTime[i], duration: m.endTime[i] - m.startTime[i] });
		out.set(t.name, [...(out.get(t.name) || []), ...list]);
	}
	return out;
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		truth: { type: 'string' },
		'bpfprof-err': { type: 'string' },
	});
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') || !values.truth ||
	    !values['bpfprof-err'])
		throw new Error(USAGE);
	const truthText = readFileSync(values.truth, 'utf8');
	const truth = { ...parseSyscallerTruth(truthText), ssleeper: parseSleeperTruth(truthText) };
	truth.readTimes = parseReadTimes(truthText);
	const report = new Report(`syscall wait check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	const sleeper = profile.threadsOf(String(values.pid)).find((t) => t.name === 'ssleeper');
	const sched = sleeper ? markersByThread(profile, values.pid).get('ssleeper')
		.find((m) => m.type === 'bpfprof.SchedSummary')?.data : undefined;
	judgeBlocking(report, {
		sleeperSched: sched,
		byThread: markersByThread(profile, values.pid),
		schemas: (profile.meta.markerSchema || []).map((s) => s.name),
		truth,
		summary: parseWaitSummary(readFileSync(values['bpfprof-err'], 'utf8')),
		bootNs: profile.meta.startTimeAsClockMonotonicNanosecondsSinceBoot,
	});
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
