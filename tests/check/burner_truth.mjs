// SPDX-License-Identifier: BSD-2-Clause
//
// The burner's ground truth (tests/workloads/burner.c): every 20 ms, each
// worker's CPU time by its own thread CPU clock, as the kernel counts it:
//
//   burner: truth mono_ns T alpha NS beta NS sysc NS
//
// With it, a check knows how much CPU a thread had in any window of a
// recording however busy the machine was, instead of assuming a share.

const LINE = /^burner: truth mono_ns (\d+)((?: \S+ \d+)+)$/;

// The truth lines of TEXT (the burner's stdout; other lines are skipped), in
// time order: [{ ns, cpu: { NAME: ns } }].
export function parseBurnerTruth(text) {
	const points = [];
	for (const line of text.split('\n')) {
		const m = line.match(LINE);
		if (!m)
			continue;
		const cpu = {};
		const fields = m[2].trim().split(' ');
		for (let i = 0; i + 1 < fields.length; i += 2)
			cpu[fields[i]] = Number(fields[i + 1]);
		points.push({ ns: Number(m[1]), cpu });
	}
	return points.sort((a, b) => a.ns - b.ns);
}

// NAME's CPU time (ns) at CLOCK_MONOTONIC time T, interpolated between the
// two truth lines around T, with errNs: how far the real value can be from
// it (all NAME used between those two lines). null outside the lines.
export function truthCpuAt(points, name, t) {
	for (let i = 1; i < points.length; i++) {
		const a = points[i - 1];
		const b = points[i];
		if (t < a.ns || t > b.ns)
			continue;
		const ca = a.cpu[name];
		const cb = b.cpu[name];
		if (ca === undefined || cb === undefined)
			return null;
		const f = b.ns > a.ns ? (t - a.ns) / (b.ns - a.ns) : 0;
		return { ns: ca + f * (cb - ca), errNs: cb - ca };
	}
	return null;
}

// Truth lines for a synthetic burner (synth.mjs): CPU(NAME, t) gives each
// worker's CPU time (ns) at t ms after the profile's start, whose
// CLOCK_MONOTONIC time is baseNs; one line per stepMs over spanMs.
export function burnerTruthText(names, cpuAt, { baseNs, spanMs, stepMs = 20 }) {
	const lines = [];
	for (let t = 0; t <= spanMs + stepMs; t += stepMs) {
		const fields = names.map((n) => `${n} ${Math.round(cpuAt(n, t))}`).join(' ');
		lines.push(`burner: truth mono_ns ${baseNs + Math.round(t * 1e6)} ${fields}`);
	}
	return lines.join('\n') + '\n';
}
