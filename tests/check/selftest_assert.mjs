// SPDX-License-Identifier: BSD-2-Clause
// What the checkers' self-tests share: where their hand-made profiles are
// written, and what they assert about a broken one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

// A temporary directory for one self-test file, removed after its tests;
// returns writeFile(text, ext = 'json') -> the path of a new file there.
export function selftestFiles(tag) {
	const work = mkdtempSync(join(tmpdir(), `bpfprof-${tag}-selftest-`));
	let fileNo = 0;

	after(() => rmSync(work, { recursive: true, force: true }));
	return (text, ext = 'json') => {
		const path = join(work, `p${fileNo++}.${ext}`);
		writeFileSync(path, text);
		return path;
	};
}

// Each pattern matches at least one failure, and no other check failed.
export function assertOnlyFails(failed, patterns) {
	for (const re of patterns)
		assert.ok(failed.some((m) => re.test(m)), `expected a failure matching ${re}, got: ${JSON.stringify(failed)}`);
	const unexpected = failed.filter((m) => !patterns.some((re) => re.test(m)));
	assert.deepEqual(unexpected, [], 'failed checks beyond the intended ones');
}
