// SPDX-License-Identifier: BSD-2-Clause
//
// Loading a profile with the real Firefox Profiler loader: the npm package
// @firefox-devtools/profiler-cli bundles the front-end's own import, upgrade
// and selector code. `load` starts a daemon; queries talk to it over a Unix
// socket. Every session here lives in its own private directory so that tests
// running side by side never share a daemon, and its daemon is always ended.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PACKAGE = '@firefox-devtools/profiler-cli';
const LOAD_TIMEOUT_MS = 90000;
const QUERY_TIMEOUT_MS = 60000;

// The CLI script: from $CHECK_NODE_MODULES (set by the ctest scripts to the
// build tree's `npm ci`), else from a node_modules next to this file.
export function findProfilerCli() {
	const dirs = [];
	if (process.env.CHECK_NODE_MODULES)
		dirs.push(process.env.CHECK_NODE_MODULES);
	for (const dir of dirs) {
		const js = join(dir, PACKAGE, 'dist', 'profiler-cli.js');
		if (existsSync(js))
			return js;
	}
	try {
		return createRequire(import.meta.url).resolve(PACKAGE);
	} catch {
		throw new Error(`${PACKAGE} is not installed: run \`npm ci\` in tests/check, ` +
				`or set CHECK_NODE_MODULES to a node_modules that has it`);
	}
}

// What `load` prints when its daemon has not exited but was not listening
// after its fixed start-up wait.
const STILL_STARTING = /did not become ready within \d+ ?ms/;

export function sleepMs(ms) {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

export class ProfilerCliSession {
	// extraEnv: variables for the CLI and its daemon (the self-test slows the
	// daemon's start with NODE_OPTIONS).
	constructor(extraEnv = {}) {
		this.cli = findProfilerCli();
		// Short path: the daemon's socket path must fit in sun_path (108 bytes).
		this.dir = mkdtempSync(join(tmpdir(), 'pcli-'));
		this.id = 's';
		this.startingPid = null; // a daemon `load` gave up waiting for
		this.env = {
			...process.env,
			PROFILER_CLI_SESSION_DIR: this.dir,
			// bpfprof writes symbolicated profiles; never reach for a symbol server.
			PROFILER_CLI_NO_SYMBOLICATE: '1',
			PROFILER_CLI_LOAD_TIMEOUT_MS: String(LOAD_TIMEOUT_MS),
			...extraEnv,
		};
	}

	run(args, timeout) {
		const r = spawnSync(process.execPath, [this.cli, ...args, '--session', this.id], {
			env: this.env,
			encoding: 'utf8',
			timeout,
			maxBuffer: 256 * 1024 * 1024,
		});
		return {
			status: r.status,
			signal: r.signal,
			error: r.error ? r.error.message : null,
			stdout: r.stdout || '',
			stderr: r.stderr || '',
		};
	}

	// Returns { ok, status, output, slowStart }: ok when the profile loaded;
	// slowStart when that took waiting beyond `load`'s own start-up window.
	//
	// `load` gives its daemon a fixed 500 ms to start listening; Node needs
	// 0.3 s to parse the bundle on an idle machine of this kind, so a busy one
	// misses that window although nothing is wrong. The daemon keeps starting
	// and loads the profile anyway: wait for it as `load` itself would.
	load(path) {
		const r = this.run(['load', path], LOAD_TIMEOUT_MS + 10000);
		const output = (r.stdout + r.stderr).trim();
		if (r.status !== 0 && STILL_STARTING.test(output))
			return this.awaitSlowDaemon(output);
		return { ok: r.status === 0, status: r.status ?? r.signal ?? r.error, output };
	}

	daemonPid() {
		try {
			return JSON.parse(readFileSync(join(this.dir, `${this.id}.json`), 'utf8')).pid;
		} catch {
			return null; // no session file: the daemon is not listening (yet)
		}
	}

	// Polls `status` until the daemon answers, reports a failed load, dies or
	// runs out of LOAD_TIMEOUT_MS. The pid comes from `load`'s own message
	// until the daemon writes its session file.
	awaitSlowDaemon(firstOutput) {
		const m = firstOutput.match(/running as pid (\d+)/);
		const startPid = m ? Number(m[1]) : null;
		this.startingPid = startPid;
		const deadline = Date.now() + LOAD_TIMEOUT_MS;
		let last = '';
		while (Date.now() < deadline) {
			const listening = this.daemonPid();
			const pid = listening ?? startPid;
			if (pid === null || !isAlive(pid))
				return { ok: false, status: 'daemon exited', output: `${firstOutput}\n${last}`.trim() };
			if (listening !== null) {
				const r = this.run(['status'], QUERY_TIMEOUT_MS);
				last = (r.stdout + r.stderr).trim();
				if (r.status === 0)
					return { ok: true, status: 0, slowStart: true, output: `${firstOutput}\n${last}` };
				if (/Profile load failed/.test(last))
					return { ok: false, status: r.status, output: `${firstOutput}\n${last}` };
			}
			sleepMs(200);
		}
		return { ok: false, status: 'timeout', output: `${firstOutput}\n${last}\n(no answer within ${LOAD_TIMEOUT_MS} ms)`.trim() };
	}

	// Runs a query with --json and returns the parsed answer; throws on failure.
	query(...args) {
		const r = this.run([...args, '--json'], QUERY_TIMEOUT_MS);
		if (r.status !== 0) {
			const why = (r.stderr || r.stdout || r.error || '').trim();
			throw new Error(`profiler-cli ${args.join(' ')} failed (${r.status ?? r.signal}): ${why}`);
		}
		try {
			return JSON.parse(r.stdout);
		} catch (e) {
			throw new Error(`profiler-cli ${args.join(' ')} printed no JSON: ${r.stdout.slice(0, 200)}`);
		}
	}

	// Stops the daemon, then makes sure it is gone even if `stop` could not
	// reach it (a failed load leaves the daemon running).
	close() {
		const daemonPid = this.daemonPid();
		if (daemonPid !== null)
			this.run(['stop'], 15000);
		for (const pid of [daemonPid, this.startingPid]) {
			if (Number.isInteger(pid) && pid > 0 && isAlive(pid))
				process.kill(pid, 'SIGKILL');
		}
		rmSync(this.dir, { recursive: true, force: true });
	}
}

// Loads PATH, runs fn(session) when the load worked, and always cleans up.
// Returns { load, result } where result is fn's return value (or undefined).
export function withProfilerCli(path, fn) {
	const session = new ProfilerCliSession();
	try {
		const load = session.load(path);
		const result = load.ok ? fn(session) : undefined;
		return { load, result };
	} finally {
		session.close();
	}
}

// Strips the "library!" prefix the CLI puts before function names.
export function bareFunctionName(name) {
	const i = name.indexOf('!');
	return i >= 0 ? name.slice(i + 1) : name;
}

// Sample filters that drop off-CPU samples (bpfprof's "off-CPU: <reason>"
// leaf functions) from a thread's sample queries, so that percentages are of
// CPU work, as the checks on the file compute them. [] when there are none.
export function onCpuFilters(session, threadHandle) {
	const r = session.query('thread', 'functions', '--thread', threadHandle, '--search', 'off-CPU: ', '--limit', '0');
	return (r.functions || [])
		.filter((f) => f.name.startsWith('off-CPU: '))
		.flatMap((f) => ['--excludes-function', f.functionHandle]);
}
