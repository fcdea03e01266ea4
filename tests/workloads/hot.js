// SPDX-License-Identifier: BSD-2-Clause
//
// Three nested hot JS functions (issue 39), for the tests that name JS
// frames with no flags: bpfprofJsOuter calls bpfprofJsMiddle calls
// bpfprofJsInner, where the time goes.
//
//   node hot.js [SECONDS [WAITS]]
//
// Prints its pid as the first line, then "hot: iterations N" at the end.
// With WAITS, bpfprofJsSleeper then waits WAITS times 20 ms in
// Atomics.wait (a futex, off-CPU, under a JS function) and says
// "hot: waited N".
// Each call of bpfprofJsOuter is short and the calls come from the event
// loop (setImmediate), never from a long loop: V8 then optimizes the
// functions as they are called (their JSFunction's code), not only by
// on-stack replacement of one long-running loop, whose code no
// JSFunction points to.

'use strict';

function bpfprofJsInner(x) {
	let h = x | 0;
	for (let i = 0; i < 200; i++)
		h = (Math.imul(h ^ (h >>> 13), 0x5bd1e995) + i) | 0;
	return h;
}

function bpfprofJsMiddle(x) {
	let acc = 0;
	for (let i = 0; i < 20; i++)
		acc = (acc + bpfprofJsInner(x + i)) | 0;
	return acc;
}

function bpfprofJsOuter(x) {
	let acc = 0;
	for (let i = 0; i < 25; i++)
		acc = (acc + bpfprofJsMiddle(x + i)) | 0;
	return acc;
}

function bpfprofJsSleeper(waits) {
	const cell = new Int32Array(new SharedArrayBuffer(4));
	let n = 0;
	for (let i = 0; i < waits; i++)
		n += Atomics.wait(cell, 0, 0, 20) === 'timed-out' ? 1 : 0;
	return n;
}

console.log(process.pid);
const end = Date.now() + 1000 * Number(process.argv[2] || 5);
let acc = 0;
let n = 0;
function tick() {
	acc = (acc + bpfprofJsOuter(acc)) | 0;
	n++;
	if (Date.now() < end)
		setImmediate(tick);
	else {
		console.log(`hot: iterations ${n} (${acc})`);
		if (process.argv[3])
			console.log(`hot: waited ${bpfprofJsSleeper(Number(process.argv[3]))}`);
	}
}
tick();
