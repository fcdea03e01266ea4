// SPDX-License-Identifier: BSD-2-Clause
//
// A checker module that is also a script: its main runs only when node runs
// the file itself, not when a self-test imports its checks. main(argv)
// returns the exit status; an exception (bad usage) prints one line and
// exits 2.

import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function runIfMain(metaUrl, main) {
	if (!process.argv[1] || metaUrl !== pathToFileURL(realpathSync(process.argv[1])).href)
		return;
	try {
		process.exitCode = main(process.argv.slice(2));
	} catch (e) {
		console.error(`${basename(fileURLToPath(metaUrl))}: ${e.message}`);
		process.exitCode = 2;
	}
}
