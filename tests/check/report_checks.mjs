#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// `bpfprof report --json --pid P` of a burner recording (issue 19), judged
// against the profile it read and against what the burner measured itself:
//
//   - each worker's CPU time (alpha, beta, sysc) is the profile's sum of its
//     threadCPUDelta (0.01 ms), and what the worker's own clock counted over
//     the recording (burner truth lines) within 3 % + their reading error;
//   - the on-CPU sample counts are the profile's, the top self functions of
//     alpha and beta are alpha_heavy, alpha_light and beta_spin, and alpha's
//     heavy share is its 75 % within 4 binomial σ (or 10 points);
//   - nothing of another process is in it.
//
//   report_checks.mjs --report FILE.json --profile P.json.gz --pid PID --truth BURNER_OUT

import { readFileSync } from 'node:fs';

import { parseBurnerTruth, truthCpuAt } from './burner_truth.mjs';
import { Profile } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const WORKERS = ['alpha', 'beta', 'sysc'];
const TRUTH_SHARE_TOLERANCE = 0.03;
const HEAVY_SHARE = 0.75;
const USAGE = 'usage: report_checks.mjs --report FILE.json --profile P.json.gz --pid PID --truth BURNER_OUT [--gzip]';

function cpuToMs(meta) {
	const unit = meta.sampleUnits?.threadCPUDelta;
	return unit === 'ns' ? 1e-6 : unit === 'µs' ? 1e-3 : null;
}

/*
 * The verdict, from plain data:
 *   rep     the report's JSON
 *   prof    per worker { cpuMs, onCpu } from the profile, and { samples, pids } of the process
 *   truth   per worker { ms, errMs }: its CPU time over the recording by its own clock, or null
 */
export function judgeReport(report, { rep, prof, truth, pid }) {
	report.section('the report against the profile it read');
	const threads = new Map((rep.threads || []).map((t) => [t.name, t]));
	for (const name of WORKERS) {
		const t = threads.get(name);
		const p = prof.workers[name];
		report.check(t && p && Math.abs(t.cpuMs - p.cpuMs) <= 0.01,
			     `${name}: ${fmt(t?.cpuMs ?? NaN, 3)} ms CPU in the report, ${fmt(p?.cpuMs ?? NaN, 3)} ms in the profile`);
	}
	const samples = (rep.recording?.onCpuSamples ?? -1) + (rep.recording?.offCpuSamples ?? -1);
	report.check(samples === prof.samples,
		     `${samples} samples in the report, ${prof.samples} of pid ${pid}'s threads in the profile`);
	const others = (rep.threads || []).filter((t) => String(t.pid).split('.')[0] !== String(pid));
	report.check(others.length === 0, `only pid ${pid}'s threads (others: ${others.map((t) => t.pid).join(', ') || 'none'})`);

	report.section('the report against the burner\'s own clock');
	for (const name of WORKERS) {
		const t = threads.get(name);
		const w = truth?.[name];
		if (!report.check(w, `the burner's truth covers ${name} over the recording`))
			continue;
		const tol = TRUTH_SHARE_TOLERANCE * w.ms + w.errMs + 1;
		report.check(t && Math.abs(t.cpuMs - w.ms) <= tol,
			     `${name}: ${fmt(t?.cpuMs ?? NaN, 1)} ms in the report, ${fmt(w.ms, 1)} ms by its own clock ` +
				     `(tolerance ±${fmt(tol, 1)} ms = 3% + reading error ${fmt(w.errMs, 1)} + 1 ms)`);
	}

	report.section('top functions');
	const self = new Map((rep.topSelf || []).map((f) => [f.name, f.selfMs]));
	for (const fn of ['alpha_heavy', 'alpha_light', 'beta_spin'])
		report.check(self.get(fn) > 0, `${fn} is among the top self functions (${fmt(self.get(fn) ?? 0, 1)} ms)`);
	const heavy = self.get('alpha_heavy') ?? 0;
	const light = self.get('alpha_light') ?? 0;
	const n = (heavy + light) / (rep.recording?.intervalMs || 1);
	const share = heavy + light > 0 ? heavy / (heavy + light) : 0;
	const tol = Math.max(0.10, 4 * Math.sqrt((HEAVY_SHARE * (1 - HEAVY_SHARE)) / Math.max(n, 1)));
	report.check(Math.abs(share - HEAVY_SHARE) <= tol,
		     `alpha_heavy is ${fmt(100 * share, 1)}% of alpha's self time (expected 75% ±${fmt(100 * tol, 1)} points)`);
}

// The profile's side: per worker its CPU time, the samples of the process.
export function profileFacts(profile, pid) {
	const toMs = cpuToMs(profile.meta) ?? 0;
	const threads = profile.threadsOfProcess(String(pid));
	const workers = {};
	let samples = 0;
	for (const t of threads) {
		const s = profile.samplesOf(t);
		// By weight: an off-CPU row stands for a run of samples (issue 37).
		samples += s.filter((x) => x.stack !== null).reduce((a, x) => a + x.weight, 0);
		if (WORKERS.includes(t.name))
			workers[t.name] = { cpuMs: s.reduce((a, x) => a + (x.cpuDelta || 0), 0) * toMs };
	}
	return { workers, samples };
}

// Each worker's CPU time by its own clock between the recording's start and end.
export function truthOverRecording(profile, points) {
	const base = profile.meta.startTimeAsClockMonotonicNanosecondsSinceBoot;
	if (!Number.isFinite(base))
		return null;
	const from = base + profile.meta.profilingStartTime * 1e6;
	const to = base + profile.meta.profilingEndTime * 1e6;
	const out = {};
	for (const name of WORKERS) {
		const a = truthCpuAt(points, name, from) ?? (points.length && from < points[0].ns
			? { ns: points[0].cpu[name] ?? 0, errNs: 0 } : null);
		const b = truthCpuAt(points, name, to) ?? (points.length && to > points.at(-1).ns
			? { ns: points.at(-1).cpu[name] ?? 0, errNs: 0 } : null);
		if (a && b)
			out[name] = { ms: (b.ns - a.ns) / 1e6, errMs: (a.errNs + b.errNs) / 1e6 };
	}
	return out;
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, { report: { type: 'string' }, truth: { type: 'string' } });
	if (positionals.length || !values.report || !values.profile || !/^\d+$/.test(values.pid || '') || !values.truth)
		throw new Error(USAGE);
	const report = new Report(`report check ${values.report}`);
	const rep = JSON.parse(readFileSync(values.report, 'utf8'));
	const profile = Profile.fromFile(values.profile);
	judgeReport(report, {
		rep, pid: values.pid, prof: profileFacts(profile, values.pid),
		truth: truthOverRecording(profile, parseBurnerTruth(readFileSync(values.truth, 'utf8'))),
	});
	return report.finish();
}

runIfMain(import.meta.url, main);
