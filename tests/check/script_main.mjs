// SPDX-License-Identifier: BSD-2-Clause
//
// A checker module that is also a script: its main runs only when node runs
// the file itself, not when a self-test imports its checks. main(argv)
// returns the exit status; an exception (bad usage) prints one line and
// exits 2.

import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// A checker's command line: --profile, --pid, --gzip and --plain, which
// every checker takes, and its own `options` (parseArgs's form).
export function checkerArgs(argv, options) {
	return parseArgs({
		args: argv,
		allowPositionals: true,
		options: {
			profile: { type: 'string' },
			pid: { type: 'string' },
			gzip: { type: 'boolean' },
			plain: { type: 'boolean' },
			...options,
		},
	});
}

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
