#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Checks one bpfprof profile for one scenario and prints every check with the
// numbers measured. Exit status 0 when all checks pass, 1 when one fails, 2 on
// bad usage.
//
//   check.mjs valid  --profile F [--gzip|--plain] [--min-samples N]
//   check.mjs burner --profile F --pid P --truth FILE [--tids alpha=T,beta=T,sysc=T]
//                    [--system-wide] [--duration S] [--gzip|--plain]
//   check.mjs forker --profile F --parent P --child C --truth FILE [--gzip|--plain]
//   check.mjs lifecycle --profile F --pid P --truth FILE [--gzip|--plain]
//   check.mjs debuginfo --profile F --pid P --outer-lines A-B --inlined-lines C-D
//                       --call-line L --outer-call-line M [--gzip|--plain]
//   check.mjs debuginfo --profile F --pid P --without-debug-file [--gzip|--plain]
//   check.mjs sched  --profile F --pid P [--tids NAME=T,...] [--truth FILE]
//                    [--sched-min MS] [--no-off-cpu] [--gzip|--plain]
//                    --expect "NAME ARGS..." [--expect ...]
//
// sched: the scheduler contract (sched_checks.mjs), then each --expect, a
// named check of sched_checks.mjs EXPECTATIONS, on the file and through
// profiler-cli. --truth is the workload's output with its "truth" lines
// (burner: its stdout, the CPU time of each worker every 20 ms).
//
// debuginfo: inline frames, lines and names from a separate debug file
// (debuginfo_checks.mjs); A-B and C-D are the functions' definition and
// closing-brace lines, L the line of the inlined call, M main's call of the
// outer function. --without-debug-file is the control run, which must have
// none of them.

import { parseArgs } from 'node:util';

import {
	checkBurner,
	checkBurnerWithCli,
	checkForker,
	checkForkerWithCli,
	checkWithProfilerCli,
	parseForkerTruth,
	openCheckedProfile,
} from './checks.mjs';
import { readFileSync } from 'node:fs';

import { parseBurnerTruth } from './burner_truth.mjs';
import { Report } from './report.mjs';
import { checkSched, parseExpectation, parseTruth } from './sched_checks.mjs';
import { checkLifecycle, checkLifecycleWithCli, parseSpawnerTruth } from './lifecycle_checks.mjs';
import { checkDebuginfo, checkDebuginfoWithCli, parseLineRange } from './debuginfo_checks.mjs';

const SCENARIOS = ['valid', 'burner', 'forker', 'sched', 'lifecycle', 'debuginfo'];
const USAGE = `usage: check.mjs ${SCENARIOS.join('|')} --profile FILE [options] (see the file header)`;

function parseTids(s) {
	const tids = {};
	for (const part of (s || '').split(',').filter(Boolean)) {
		const [name, tid] = part.split('=');
		if (!name || !/^\d+$/.test(tid || ''))
			throw new Error(`bad --tids entry ${JSON.stringify(part)}`);
		tids[name] = tid;
	}
	return tids;
}

// debuginfo's options: the control needs only the pid; the real run needs
// every line, since the checks compare against them.
function debuginfoOptions(values) {
	if (values['without-debug-file'])
		return { pid: values.pid, withoutDebugFile: true };
	for (const name of ['call-line', 'outer-call-line']) {
		if (!/^[1-9]\d*$/.test(values[name] || ''))
			throw new Error(`debuginfo needs --${name} LINE (or --without-debug-file)`);
	}
	return {
		pid: values.pid,
		outerLines: parseLineRange(values['outer-lines'], '--outer-lines'),
		inlinedLines: parseLineRange(values['inlined-lines'], '--inlined-lines'),
		callLine: Number(values['call-line']),
		outerCallLine: Number(values['outer-call-line']),
	};
}

function main(argv) {
	const { values, positionals } = parseArgs({
		args: argv,
		allowPositionals: true,
		options: {
			profile: { type: 'string' },
			gzip: { type: 'boolean' },
			plain: { type: 'boolean' },
			'min-samples': { type: 'string' },
			pid: { type: 'string' },
			tids: { type: 'string' },
			'system-wide': { type: 'boolean' },
			duration: { type: 'string' },
			parent: { type: 'string' },
			child: { type: 'string' },
			truth: { type: 'string' },
			'sched-min': { type: 'string' },
			'no-off-cpu': { type: 'boolean' },
			expect: { type: 'string', multiple: true },
			'outer-lines': { type: 'string' },
			'inlined-lines': { type: 'string' },
			'call-line': { type: 'string' },
			'outer-call-line': { type: 'string' },
			'without-debug-file': { type: 'boolean' },
		},
	});
	const scenario = positionals[0];
	if (positionals.length !== 1 || !SCENARIOS.includes(scenario) || !values.profile)
		throw new Error(USAGE);
	if (['burner', 'sched', 'lifecycle', 'debuginfo'].includes(scenario) && !values.pid)
		throw new Error(`${scenario} needs --pid`);
	if (scenario === 'forker' && !(values.parent && values.child && values.truth))
		throw new Error('forker needs --parent, --child and --truth');
	// Bad expectations are usage errors: found before any check runs.
	const expectations = (values.expect || []).map(parseExpectation);
	if (scenario === 'sched' && expectations.length === 0)
		throw new Error('sched needs at least one --expect');
	if (values['sched-min'] !== undefined && !/^\d+(\.\d+)?$/.test(values['sched-min']))
		throw new Error(`--sched-min wants milliseconds, not ${JSON.stringify(values['sched-min'])}`);
	const truth = values.truth && scenario === 'sched' ? parseTruth(readFileSync(values.truth, 'utf8')) : null;
	if ((scenario === 'lifecycle' || scenario === 'burner') && !values.truth)
		throw new Error(`${scenario} needs --truth`);
	const debuginfo = scenario === 'debuginfo' ? debuginfoOptions(values) : null;

	const report = new Report(`check ${scenario} ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();

	const opts = {
		pid: values.pid,
		tids: parseTids(values.tids),
		systemWide: !!values['system-wide'],
		durationS: values.duration ? Number(values.duration) : undefined,
		parentPid: values.parent,
		childPid: values.child,
		truth: scenario === 'burner' ? parseBurnerTruth(readFileSync(values.truth, 'utf8'))
			: scenario === 'forker' ? parseForkerTruth(readFileSync(values.truth, 'utf8')) : undefined,
	};
	if (scenario === 'sched') {
		checkSched(report, profile, {
			...opts, truth, expectations, offCpuSamples: !values['no-off-cpu'],
			schedMinMs: values['sched-min'] !== undefined ? Number(values['sched-min']) : undefined,
		});
		return report.finish();
	}
	const spawnerTruth = scenario === 'lifecycle' ? parseSpawnerTruth(readFileSync(values.truth, 'utf8')) : null;
	if (scenario === 'lifecycle')
		checkLifecycle(report, profile, { pid: values.pid, truth: spawnerTruth });
	else if (scenario === 'debuginfo')
		checkDebuginfo(report, profile, debuginfo);
	checkWithProfilerCli(report, profile, (cli, handles, info) => {
		if (scenario === 'lifecycle')
			checkLifecycleWithCli(report, profile, cli, handles, { truth: spawnerTruth });
		else if (scenario === 'debuginfo')
			checkDebuginfoWithCli(report, profile, cli, handles, debuginfo);
		if (scenario === 'burner')
			checkBurnerWithCli(report, profile, cli, handles, info, opts);
		else if (scenario === 'forker')
			checkForkerWithCli(report, profile, cli, handles, info, opts);
	});

	if (scenario === 'valid') {
		const min = Number(values['min-samples'] || 1);
		const n = profile.totalSamples();
		report.check(n >= min, `${n} samples (need >= ${min})`);
	} else if (scenario === 'burner') {
		checkBurner(report, profile, opts);
	} else if (scenario === 'forker') {
		checkForker(report, profile, opts);
	}
	return report.finish();
}

try {
	process.exitCode = main(process.argv.slice(2));
} catch (e) {
	console.error(`check.mjs: ${e.message}`);
	process.exitCode = 2;
}
