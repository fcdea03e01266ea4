#!/usr/bin/env node
// SPDX-License-Identifier: BSD-2-Clause
//
// Names for stripped code (issue 16): a profile of `stripped_main SECONDS`,
// whose hot loop is stripped_hidden_hot, an internal function of the
// stripped libstripped.so (tests/workloads/stripped_lib.c).
//
//   --expect named     >= 90 % of the on-CPU samples in libstripped.so name
//                      stripped_hidden_hot (from a debug file or the
//                      library's MiniDebugInfo); with --lines, >= 90 % of
//                      them also carry a source line (DWARF came along)
//   --expect unnamed   the control: none does, and >= 90 % show an
//                      offset into libstripped.so instead
//
//   stripped_checks.mjs --profile F --pid P --expect named|unnamed [--lines] [--gzip|--plain]

import { checkWithProfilerCli, openCheckedProfile } from './checks.mjs';
import { CATEGORY_USER, percent } from './profile.mjs';
import { fmt, Report } from './report.mjs';
import { checkerArgs, runIfMain } from './script_main.mjs';

const HOT = 'stripped_hidden_hot';
const LIB = 'libstripped.so';
const NEED_PERCENT = 90;
const MIN_SAMPLES = 100;
const USAGE = 'usage: stripped_checks.mjs --profile FILE --pid PID --expect named|unnamed [--lines] [--gzip|--plain]';

export function checkStripped(report, profile, { pid, expect, lines }) {
	report.section(`stripped_main (pid ${pid}): ${LIB}'s internal function ${expect === 'named' ? 'named' : 'unnamed'}`);
	const threads = profile.threadsOf(String(pid));
	if (!report.check(threads.length > 0, `process ${pid} is in the profile`))
		return;
	const frameLine = profile.shared.frameTable.line;
	// Per sample, its frames in the library: { name, line }.
	const inLib = threads.flatMap((t) => profile.samplesOf(t)).filter((s) => profile.isOnCpu(s))
		.map((s) => s.path.filter((f) => profile.frameCategory(f) === CATEGORY_USER &&
					  profile.resourceNameOfFunc(profile.frameFunc(f)) === LIB)
			.map((f) => ({ name: profile.frameFuncName(f), line: frameLine[f] })))
		.filter((fs) => fs.length > 0);
	if (!report.check(inLib.length >= MIN_SAMPLES,
			  `${inLib.length} on-CPU samples in ${LIB} (need >= ${MIN_SAMPLES})`))
		return;
	const named = inLib.filter((fs) => fs.some((f) => f.name === HOT));
	if (expect === 'unnamed') {
		report.check(named.length === 0, `no sample names ${HOT} without its debug info (found ${named.length})`);
		const offsets = inLib.filter((fs) => fs.some((f) => f.name.startsWith(`${LIB}+0x`)));
		report.check(percent(offsets.length, inLib.length) >= NEED_PERCENT,
			     `${offsets.length} of ${inLib.length} show an offset into ${LIB} instead ` +
				     `(${fmt(percent(offsets.length, inLib.length))}%, need >= ${NEED_PERCENT}%)`);
		return;
	}
	report.check(percent(named.length, inLib.length) >= NEED_PERCENT,
		     `${named.length} of ${inLib.length} samples in ${LIB} name ${HOT} ` +
			     `(${fmt(percent(named.length, inLib.length))}%, need >= ${NEED_PERCENT}%)`);
	if (lines) {
		const withLine = named.filter((fs) => fs.some((f) => f.name === HOT && f.line > 0));
		report.check(percent(withLine.length, named.length) >= NEED_PERCENT,
			     `${withLine.length} of ${named.length} of them carry a source line (DWARF from the debug ` +
				     `file; need >= ${NEED_PERCENT}%)`);
	}
}

function main(argv) {
	const { values, positionals } = checkerArgs(argv, { expect: { type: 'string' }, lines: { type: 'boolean' } });
	if (positionals.length || !values.profile || !/^\d+$/.test(values.pid || '') ||
	    !['named', 'unnamed'].includes(values.expect))
		throw new Error(USAGE);
	const report = new Report(`stripped check ${values.profile}`);
	const profile = openCheckedProfile(report, values.profile, values);
	if (!profile)
		return report.finish();
	checkStripped(report, profile, { pid: values.pid, expect: values.expect, lines: !!values.lines });
	checkWithProfilerCli(report, profile);
	return report.finish();
}

runIfMain(import.meta.url, main);
