#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Checks one bpfprof profile for one scenario and prints every check with the
// numbers measured. Exit status 0 when all checks pass, 1 when one fails, 2 on
// bad usage.
//
//   check.mjs valid  --profile F [--gzip|--plain] [--min-samples N]
//   check.mjs burner --profile F --pid P [--tids alpha=T,beta=T,sysc=T]
//                    [--system-wide] [--duration S] [--gzip|--plain]
//   check.mjs forker --profile F --parent P --child C [--gzip|--plain]
//   check.mjs lifecycle --profile F --pid P --truth FILE [--gzip|--plain]
//   check.mjs sched  --profile F --pid P [--tids NAME=T,...] [--truth FILE]
//                    [--sched-min MS] [--no-off-cpu] [--gzip|--plain]
//                    --expect "NAME ARGS..." [--expect ...]
//
// sched: the scheduler contract (sched_checks.mjs), then each --expect, a
// named check of sched_checks.mjs EXPECTATIONS, on the file and through
// profiler-cli. --truth is the workload's stderr with its "truth" lines.

import { parseArgs } from 'node:util';

import {
	checkBurner,
	checkBurnerWithCli,
	checkForker,
	checkForkerWithCli,
	checkWithProfilerCli,
	openCheckedProfile,
} from './checks.mjs';
import { readFileSync } from 'node:fs';

import { Report } from './report.mjs';
import { checkSched, parseExpectation, parseTruth } from './sched_checks.mjs';
import { checkLifecycle, checkLifecycleWithCli, parseSpawnerTruth } from './lifecycle_checks.mjs';

const SCENARIOS = ['valid', 'burner', 'forker', 'sched', 'lifecycle'];
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
		},
	});
	const scenario = positionals[0];
	if (positionals.length !== 1 || !SCENARIOS.includes(scenario) || !values.profile)
		throw new Error(USAGE);
	if ((scenario === 'burner' || scenario === 'sched' || scenario === 'lifecycle') && !values.pid)
		throw new Error(`${scenario} needs --pid`);
	if (scenario === 'forker' && !(values.parent && values.child))
		throw new Error('forker needs --parent and --child');
	// Bad expectations are usage errors: found before any check runs.
	const expectations = (values.expect || []).map(parseExpectation);
	if (scenario === 'sched' && expectations.length === 0)
		throw new Error('sched needs at least one --expect');
	if (values['sched-min'] !== undefined && !/^\d+(\.\d+)?$/.test(values['sched-min']))
		throw new Error(`--sched-min wants milliseconds, not ${JSON.stringify(values['sched-min'])}`);
	const truth = values.truth && scenario === 'sched' ? parseTruth(readFileSync(values.truth, 'utf8')) : null;
	if (scenario === 'lifecycle' && !values.truth)
		throw new Error('lifecycle needs --truth');

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
	checkWithProfilerCli(report, profile, (cli, handles, info) => {
		if (scenario === 'lifecycle')
			checkLifecycleWithCli(report, profile, cli, handles, { truth: spawnerTruth });
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
