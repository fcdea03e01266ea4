// SPDX-License-Identifier: BSD-2-Clause
//
// A JIT workload: node runs two distinctively named JS functions in a hot
// loop for SECONDS (default 2), so that with --perf-basic-prof their machine
// code lands in /tmp/perf-PID.map and a profile must name them.
//
//   node --perf-basic-prof jit_hot.js [SECONDS]
//
// Prints its pid as the first line of stdout (the integration test reads it
// through bpfprof's stdout), then "jit_hot: iterations N" at the end, so the
// loop cannot be optimised away.

'use strict';

// A little arithmetic per call. Once optimised, TurboFan usually inlines it
// into bpfprofHotLoop, so most samples land in the loop's code; the checks
// accept either name.
function bpfprofInner(x) {
	let h = x | 0;
	for (let i = 0; i < 64; i++) {
		h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
		h = (h + i) | 0;
	}
	return h;
}

// Checks the clock only every batch, so almost all of the time is spent in
// JIT-compiled code rather than in the runtime's clock call.
function bpfprofHotLoop(seconds) {
	const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
	let acc = 0;
	let n = 0;
	while (process.hrtime.bigint() < end) {
		for (let i = 0; i < 10000; i++)
			acc = (acc + bpfprofInner(acc + i)) | 0;
		n += 10000;
	}
	return { acc, n };
}

const seconds = process.argv[2] === undefined ? 2 : Number(process.argv[2]);
if (!(seconds > 0)) {
	console.error(`usage: node --perf-basic-prof jit_hot.js [SECONDS]; bad SECONDS ${process.argv[2]}`);
	process.exit(2);
}
console.log(String(process.pid));
const r = bpfprofHotLoop(seconds);
console.log(`jit_hot: iterations ${r.n} acc ${r.acc}`);
