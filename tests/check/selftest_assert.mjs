// SPDX-License-Identifier: BSD-2-Clause
// What the checkers' self-tests assert about a broken profile.
import assert from 'node:assert/strict';

// Each pattern matches at least one failure, and no other check failed.
export function assertOnlyFails(failed, patterns) {
	for (const re of patterns)
		assert.ok(failed.some((m) => re.test(m)), `expected a failure matching ${re}, got: ${JSON.stringify(failed)}`);
	const unexpected = failed.filter((m) => !patterns.some((re) => re.test(m)));
	assert.deepEqual(unexpected, [], 'failed checks beyond the intended ones');
}
