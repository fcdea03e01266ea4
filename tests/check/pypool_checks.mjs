#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Every CPython (issue 40), on one recording of tests/workloads/pypool.py
// run under each installed Python at once; each run's truth (--truth,
// repeated: its output) gives its pid, version, pool threads and sleeper.
// Per process:
//
//   - its pool threads' on-CPU samples: >= 90 % hold Python frames in
//     place of every interpreter loop frame (no _PyEval_EvalFrameDefault /
//     PyEval_EvalFrameEx left above a Python frame), the chain at least
//     4 Python frames deep (pool_thread, pool_function, method, values or
//     square); where the version's code objects are named (--named LIST),
//     pool_function and Worker.method (before 3.11: method) by name;
//   - off CPU, >= 90 % of the samples hold Python frames: the pool threads'
//     (GIL waits; pool_thread named where named), the main thread's (in
//     join since before the recording; main), and (3.8+) its sleepers':
//     sleeper (caught at its switch-outs) and long_sleeper (asleep since
//     before the recording: its stack read at the end), by name where named.
//
// Prints which versions it checked; a version in --expect (comma list)
// with no truth is named and fails.
//
//   pypool_checks.mjs --profile F --truth OUT... [--expect 2.7,3.6,...] [--named 3.11,...] [--gzip|--plain]

import { readFileSync } from 'node:fs';

import { openCheckedProfile } from './checks.mjs';
import { CATEGORY_PYTHON, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WHOLE_PERCENT = 90;
const MIN_SAMPLES = 20;
const LOOPS = new Set(['_PyEval_EvalFrameDefault', 'PyEval_EvalFrameEx']);
const USAGE = 'usage: pypool_checks.mjs --profile FILE --truth OUT... [--expect LIST] [--named LIST] [--gzip|--plain]';

export function parseTruth(text) {
	const truth = { pool: [] };
	for (const line of text.split('\n')) {
		let m;
		if ((m = /^pypool: truth pid (\d+) version (\d+\.\d+)$/.exec(line))) {
			truth.pid = m[1];
			truth.version = m[2];
		} else if ((m = /^pypool: pool tid (\d+)$/.exec(line))) {
			truth.pool.push(m[1]);
		} else if ((m = /^pypool: sleeper tid (\d+)$/.exec(line))) {
			truth.sleeper = m[1];
		} else if ((m = /^pypool: long sleeper tid (\d+)$/.exec(line))) {
			truth.longSleeper = m[1];
		}
	}
	return truth;
}

const minor = (v) => Number(v.split('.')[1]) + 100 * Number(v.split('.')[0]);

// A sample's Python frames, and whether an interpreter loop frame is left
// above (rootward of) one of them: each loop's frames were not put in its
// place. (The innermost loop may stay a C frame: <= 3.10 links a frame
// after the loop's prologue and unlinks it before its epilogue.)
function summarize(profile, s) {
	const names = s.path.map((f) => profile.frameFuncName(f));
	const isPy = s.path.map((f) => profile.frameCategory(f) === CATEGORY_PYTHON);
	const py = names.filter((_, i) => isPy[i]);
	const lastPy = isPy.lastIndexOf(true);
	return { py, loopLeft: names.some((n, i) => LOOPS.has(n) && i < lastPy) };
}

function threadSamples(profile, tid, onCpu) {
	const thread = profile.threads.find((t) => String(t.tid) === String(tid));
	if (!thread)
		return null;
	return profile.samplesOf(thread).filter((s) => s.path.length && profile.isOnCpu(s) === onCpu);
}

function checkProcess(report, profile, truth, named) {
	const label = `Python ${truth.version} (pid ${truth.pid})`;
	report.section(label);
	const isNamed = named.has(truth.version);
	// Code objects hold a qualified name from 3.11 on; before, the function's name.
	const method = minor(truth.version) >= 311 ? 'Worker.method' : 'method';
	let good = 0, total = 0;
	for (const tid of truth.pool) {
		const samples = threadSamples(profile, tid, true) || [];
		for (const s of samples) {
			const { py, loopLeft } = summarize(profile, s);
			total++;
			if (loopLeft || py.length < 4)
				continue;
			if (isNamed && !(py.includes('pool_function') && py.includes(method)))
				continue;
			good++;
		}
	}
	if (report.check(total >= MIN_SAMPLES, `${label}: ${total} on-CPU samples of ${truth.pool.length} pool threads (need >= ${MIN_SAMPLES})`))
		report.check(percent(good, total) >= WHOLE_PERCENT,
			     `${label}: ${good} of ${total} (${fmt(percent(good, total))}%) pool samples show >= 4 Python frames for ` +
			     `every interpreter loop${isNamed ? `, pool_function and ${method} named` : ''} (need >= ${WHOLE_PERCENT}%)`);
	// Waiting for the GIL, and the main thread in join (asleep since before the recording).
	checkOffCpu(report, profile, label, truth.pool, 'the pool threads', 'pool_thread', isNamed);
	checkOffCpu(report, profile, label, [truth.pid], 'the main thread', 'main', isNamed);
	if (minor(truth.version) < 308)
		return;
	checkOffCpu(report, profile, label, [truth.sleeper], 'sleeper', 'sleeper', isNamed);
	if (report.check(truth.longSleeper, `${label}: the workload printed its long sleeper's tid`))
		checkOffCpu(report, profile, label, [truth.longSleeper], 'long_sleeper', 'long_sleeper', isNamed);
}

// Threads waiting inside `func`: their off-CPU samples show their Python frames.
function checkOffCpu(report, profile, label, tids, what, func, isNamed) {
	let w = 0, wgood = 0;
	for (const tid of tids) {
		for (const s of threadSamples(profile, tid, false) || []) {
			const { py } = summarize(profile, s);
			w += s.weight;
			if (py.length && (!isNamed || py.includes(func)))
				wgood += s.weight;
		}
	}
	if (report.check(w >= MIN_SAMPLES, `${label}: ${what} (tid ${tids.join(', ')}) have ${w} off-CPU samples (need >= ${MIN_SAMPLES})`))
		report.check(percent(wgood, w) >= WHOLE_PERCENT,
			     `${label}: ${wgood} of ${w} (${fmt(percent(wgood, w))}%) of the off-CPU samples of ${what} show Python ` +
			     `frames${isNamed ? `, ${func} named` : ''} (need >= ${WHOLE_PERCENT}%)`);
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, {
		truth: { type: 'string', multiple: true },
		expect: { type: 'string' },
		named: { type: 'string' },
	});
	if (positionals.length || !values.profile || !values.truth)
		throw new Error(USAGE);
	const truths = values.truth.map((f) => parseTruth(readFileSync(f, 'utf8')));
	const named = new Set((values.named || '').split(',').filter(Boolean));
	const report = new Report(`pypool check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	const ran = truths.filter((t) => t.pid && t.version && t.pool.length && t.sleeper);
	report.note?.(`versions run: ${ran.map((t) => t.version).join(' ')}`);
	console.log(`pypool: versions run: ${ran.map((t) => t.version).join(' ')}`);
	for (const v of (values.expect || '').split(',').filter(Boolean))
		report.check(ran.some((t) => t.version === v), `Python ${v} ran and printed its truth`);
	for (const t of ran)
		checkProcess(report, profile, t, named);
	return report.finish();
}

runIfMain(import.meta.url, main);
