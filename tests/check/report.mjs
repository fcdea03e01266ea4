// SPDX-License-Identifier: BSD-2-Clause
//
// Test output: one line per check, saying what was checked and the numbers
// measured, so that a failure in CI explains itself without the profile.

export class Report {
	constructor(title, { out = console.log } = {}) {
		this.title = title;
		this.out = out;
		this.passed = 0;
		this.failures = [];
	}

	section(name) {
		this.out(`\n== ${name}`);
	}

	note(message) {
		this.out(`   ${message}`);
	}

	// Records one check; returns cond so callers can skip dependent checks.
	check(cond, message) {
		if (cond) {
			this.passed++;
			this.out(`ok   ${message}`);
		} else {
			this.failures.push(message);
			this.out(`FAIL ${message}`);
		}
		return !!cond;
	}

	get failed() {
		return this.failures.length;
	}

	// Prints the summary and returns the process exit code.
	finish() {
		this.out(`\n${this.title}: ${this.passed} checks ok, ${this.failed} failed`);
		for (const f of this.failures)
			this.out(`  failed: ${f}`);
		return this.failed === 0 ? 0 : 1;
	}
}

// Standard deviation, in percentage points, of a proportion p measured on n
// independent samples. Profiler samples of a thread that alternates in
// randomised rounds are, if anything, less spread than this (systematic
// sampling), so it is a safe yardstick for tolerances.
export function binomialSigmaPoints(p, n) {
	return n > 0 ? 100 * Math.sqrt((p * (1 - p)) / n) : Infinity;
}

export function fmt(x, digits = 1) {
	return Number.isFinite(x) ? x.toFixed(digits) : String(x);
}
