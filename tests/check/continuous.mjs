#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Checks the snapshots `bpfprof continuous` wrote into a directory: each one
// is a valid profile that the Firefox Profiler's loader (profiler-cli)
// opens, named after its start; consecutive ones touch without gap or
// overlap; a burner process that ran through all of them is in each, with
// no more CPU time in a window than the window is long (nothing counted
// twice at a boundary) and the CPU time its spinning thread counted itself
// in that window (--truth, the burner's stdout), and its sleeping main
// thread's wait is split at each boundary instead of lost.
//
//   continuous.mjs --dir D [--pid P --truth FILE] [--count N | --min-count N]
//                  [--last-shorter-than MS] [--interval MS]
//
// --count: exactly N snapshots (retention); --last-shorter-than: the last
// one is a partial window (SIGTERM); --interval: every snapshot but the
// last lasts this long (within 1 ms).

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { parseBurnerTruth } from './burner_truth.mjs';
import {
	burnerCpuWindow,
	burnerTruthBase,
	checkCpuAgainstTruth,
	checkWithProfilerCli,
	openCheckedProfile,
} from './checks.mjs';
import { Report } from './report.mjs';

const NAME = /^bpfprof-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z\.json\.gz$/;
const EPS_MS = 0.001;

function nameTimeMs(name) {
	const m = NAME.exec(name);
	return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]) : null;
}

function cpuToMs(meta) {
	const unit = meta.sampleUnits?.threadCPUDelta;
	return unit === 'ns' ? 1e-6 : unit === 'µs' ? 1e-3 : unit === 'ms' ? 1 : null;
}

function markersNamed(profile, thread, name) {
	const m = thread.markers;
	const out = [];
	for (let i = 0; i < (m?.length || 0); i++)
		if (profile.string(m.name[i]) === name)
			out.push({ start: m.startTime[i], end: m.endTime[i] });
	return out;
}

function checkBurner(report, profile, pid, index, truth) {
	const meta = profile.meta;
	const lo = meta.profilingStartTime, hi = meta.profilingEndTime;
	// Every image of the process: a window that also saw the shell that
	// exec'd the burner has that as "PID" and the burner as "PID.1".
	const images = profile.threadsOfProcess(pid);
	if (!report.check(images.length > 0, `burner pid ${pid} is in the snapshot (${images.length} threads)`))
		return;
	const beta = images.find((t) => t.name === 'beta');
	const threads = beta ? images.filter((t) => t.pid === beta.pid) : images;
	if (report.check(beta !== undefined, 'its spinning thread "beta" is there')) {
		const samples = profile.samplesOf(beta);
		const toMs = cpuToMs(meta);
		const cpu = samples.reduce((a, s) => a + (s.cpuDelta || 0), 0) * (toMs ?? 0);
		const outside = samples.filter((s) => s.time < lo - EPS_MS || s.time > hi + EPS_MS).length;
		report.check(samples.length > 0 && outside === 0,
			     `beta has ${samples.length} samples, ${outside} outside the window ` +
				     `${lo.toFixed(3)}..${hi.toFixed(3)} ms`);
		// Each window's first delta starts at the boundary, not at the previous sample.
		report.check(toMs !== null && cpu <= hi - lo + 2,
			     `beta's CPU time ${cpu.toFixed(1)} ms fits in the ${(hi - lo).toFixed(1)} ms window`);
		// However busy the machine, the window holds what beta's own clock counted in it.
		const base = burnerTruthBase(report, profile, truth);
		const w = base !== null && burnerCpuWindow(report, profile, beta, 'beta', truth, base);
		if (w)
			checkCpuAgainstTruth(report, 'beta', w);
	}
	const main = threads.find((t) => t.isMainThread);
	if (index === 0 || !main)
		return;
	// It sleeps through every window after the first: one wait, from boundary to boundary.
	const off = markersNamed(profile, main, 'Off-CPU');
	const whole = off.filter((m) => Math.abs(m.start - lo) < EPS_MS && Math.abs(m.end - hi) < EPS_MS);
	report.check(off.length === 1 && whole.length === 1,
		     `the sleeping main thread has one Off-CPU marker spanning the window ` +
			     `(found ${off.map((m) => `${m.start.toFixed(3)}..${m.end.toFixed(3)}`).join(', ') || 'none'})`);
}

function main() {
	const { values } = parseArgs({
		options: {
			dir: { type: 'string' },
			pid: { type: 'string' },
			count: { type: 'string' },
			'min-count': { type: 'string' },
			'last-shorter-than': { type: 'string' },
			interval: { type: 'string' },
			truth: { type: 'string' },
		},
	});
	if (!values.dir || (values.pid !== undefined) !== (values.truth !== undefined)) {
		console.error('usage: continuous.mjs --dir D [--pid P --truth FILE] [--count N | --min-count N] ' +
			      '[--last-shorter-than MS] [--interval MS]');
		process.exit(2);
	}
	const truth = values.truth !== undefined ? parseBurnerTruth(readFileSync(values.truth, 'utf8')) : null;
	const report = new Report();
	const names = readdirSync(values.dir).filter((n) => NAME.test(n)).sort();
	report.section(`snapshots in ${values.dir}`);
	report.note(names.join('\n   ') || '(none)');
	if (values.count !== undefined)
		report.check(names.length === Number(values.count),
			     `exactly ${values.count} snapshots are kept (found ${names.length})`);
	if (values['min-count'] !== undefined)
		report.check(names.length >= Number(values['min-count']),
			     `at least ${values['min-count']} snapshots (found ${names.length})`);

	const ranges = [];
	names.forEach((name, i) => {
		const profile = openCheckedProfile(report, join(values.dir, name), { gzip: true });
		if (!profile)
			return;
		checkWithProfilerCli(report, profile);
		report.section(`snapshot ${i + 1} of ${names.length}: ${name}`);
		const meta = profile.meta;
		const start = meta.startTime + meta.profilingStartTime;
		const end = meta.startTime + meta.profilingEndTime;
		ranges.push({ name, start, end });
		report.check(nameTimeMs(name) === Math.floor(meta.startTime),
			     `the name is the window's UTC start (meta.startTime ${meta.startTime.toFixed(3)})`);
		report.note(`window ${(end - start).toFixed(3)} ms`);
		if (values.interval !== undefined && i < names.length - 1)
			report.check(Math.abs(end - start - Number(values.interval)) < 1,
				     `lasts the interval, ${values.interval} ms`);
		if (values['last-shorter-than'] !== undefined && i === names.length - 1)
			report.check(end - start < Number(values['last-shorter-than']) && end - start > 0,
				     `the last snapshot is a partial window (${(end - start).toFixed(1)} ms, ` +
					     `under ${values['last-shorter-than']} ms)`);
		if (values.pid !== undefined)
			checkBurner(report, profile, values.pid, i, truth);
	});

	report.section('continuity');
	for (let i = 1; i < ranges.length; i++) {
		const gap = ranges[i].start - ranges[i - 1].end;
		report.check(Math.abs(gap) < EPS_MS,
			     `${ranges[i - 1].name} ends where ${ranges[i].name} starts ` +
				     `(gap ${(gap * 1000).toFixed(3)} µs)`);
	}
	process.exit(report.finish());
}

main();
