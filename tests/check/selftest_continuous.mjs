// SPDX-License-Identifier: BSD-2-Clause
//
// Self-test of continuous.mjs (node --test): a directory with a good burner
// snapshot passes, one whose spinning thread's CPU time is not what its own
// clock counted fails, and --pid without --truth is a usage error. Needs no
// root and no bpfprof; the loader check needs profiler-cli (CHECK_NODE_MODULES).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { BURNER_DEFAULTS, burnerProfile } from './synth.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'bpfprof-continuous-selftest-'));
after(() => rmSync(work, { recursive: true, force: true }));

const START_MS = Date.UTC(2026, 10, 25, 12, 0, 0, 123);

// A snapshot directory holding one burner window, and the burner's truth file.
let dirNo = 0;
function snapshotDir(overrides, edit = () => {}) {
	const json = burnerProfile(overrides);
	edit(json);
	json.meta.startTime = START_MS;
	json.meta.profilingStartTime = 0;
	json.meta.profilingEndTime = 1000 * BURNER_DEFAULTS.durationS;
	const dir = join(work, `d${dirNo++}`);
	mkdirSync(dir);
	writeFileSync(join(dir, 'bpfprof-20261125T120000.123Z.json.gz'), gzipSync(JSON.stringify(json)));
	const truth = join(dir, 'burner.out');
	writeFileSync(truth, json.burnerTruth);
	return { dir, truth };
}

function run(...args) {
	return spawnSync(process.execPath, [join(here, 'continuous.mjs'), ...args], { encoding: 'utf8' });
}

describe('continuous.mjs', () => {
	test('a good snapshot passes, with beta measured against its own clock', () => {
		const { dir, truth } = snapshotDir({});
		const r = run('--dir', dir, '--pid', String(BURNER_DEFAULTS.pid), '--truth', truth, '--count', '1');
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok {3}beta: [\d.]+ ms CPU in the profile over \d+ ms, [\d.]+ ms by its own clock/);
	});

	test('a window that saw the shell exec the burner passes: the burner is the image "PID.1"', () => {
		const pid = String(BURNER_DEFAULTS.pid);
		const { dir, truth } = snapshotDir({}, (json) => {
			const shell = JSON.parse(JSON.stringify(json.threads.find((t) => t.pid === pid && t.isMainThread)));
			for (const t of json.threads)
				if (t.pid === pid)
					t.pid = `${pid}.1`;
			shell.name = 'sh';
			json.threads.unshift(shell);
		});
		const r = run('--dir', dir, '--pid', pid, '--truth', truth, '--count', '1');
		assert.equal(r.status, 0, r.stdout + r.stderr);
		assert.match(r.stdout, /ok {3}its spinning thread "beta" is there/);
	});

	test('beta with half the CPU time its clock counted fails', () => {
		const { dir, truth } = snapshotDir({ cpuScale: 0.5 });
		const r = run('--dir', dir, '--pid', String(BURNER_DEFAULTS.pid), '--truth', truth);
		assert.equal(r.status, 1, r.stdout + r.stderr);
		assert.match(r.stdout, /FAIL beta: [\d.]+ ms CPU in the profile over \d+ ms, [\d.]+ ms by its own clock/);
		assert.doesNotMatch(r.stdout.replace(/^FAIL beta: .*$/m, ''), /^FAIL (?!snapshot checks)/m);
	});

	test('--pid without --truth is a usage error', () => {
		const { dir } = snapshotDir({});
		const r = run('--dir', dir, '--pid', String(BURNER_DEFAULTS.pid));
		assert.equal(r.status, 2);
		assert.match(r.stderr, /usage: continuous\.mjs/);
	});
});
