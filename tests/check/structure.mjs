// SPDX-License-Identifier: BSD-2-Clause
//
// The structural checklist of the processed profile format v66 (spec section
// 13, with the table shapes of sections 2-7). The front-end validates none of
// this and fails late or draws nonsense, so bpfprof's output is checked here.
//
// checkStructure(json) returns a list of problems; an empty list means the
// profile passed. Each problem names the table, row and rule.

const SHARED_TABLES = {
	stackTable: ['frame', 'prefixOffset'],
	frameTable: [
		'address',
		'inlineDepth',
		'category',
		'subcategory',
		'func',
		'nativeSymbol',
		'innerWindowID',
		'line',
		'column',
		'originalLocation',
	],
	funcTable: [
		'name',
		'isJS',
		'relevantForJS',
		'resource',
		'source',
		'lineNumber',
		'columnNumber',
		'originalLocation',
	],
	resourceTable: ['lib', 'name', 'host', 'type'],
	nativeSymbols: ['libIndex', 'address', 'name', 'functionSize'],
	sources: ['id', 'filename', 'startLine', 'startColumn', 'sourceMapURL', 'content'],
	sourceLocationTable: ['source', 'line', 'column'],
};

const MARKER_COLUMNS = ['name', 'startTime', 'endTime', 'phase', 'category', 'data'];

const CATEGORY_COLORS = new Set([
	'transparent',
	'purple',
	'green',
	'orange',
	'yellow',
	'lightblue',
	'blue',
	'brown',
	'magenta',
	'red',
	'lightred',
	'darkgrey',
	'grey',
]);

const CPU_DELTA_UNITS = new Set(['ns', '\u00b5s', 'variable CPU cycles']);

const STRING_FORMATS = new Set(['url', 'file-path', 'sanitized-string', 'string', 'pid']);
// The front-end's GraphColor (src/types/markers: the values a colorField may hold).
const GRAPH_COLORS = new Set(['blue', 'green', 'grey', 'ink', 'magenta', 'orange', 'purple', 'red', 'teal', 'yellow']);
const STRING_INDEX_FORMATS = new Set(['unique-string', 'flow-id', 'terminating-flow-id']);
const NUMBER_FORMATS = new Set([
	'duration',
	'time',
	'seconds',
	'milliseconds',
	'microseconds',
	'nanoseconds',
	'bytes',
	'percentage',
	'integer',
	'decimal',
	'hexadecimal',
]);

// Earliest and latest plausible meta.startTime (ms since the epoch): catches
// seconds, µs or ns written where ms are expected.
const EPOCH_MS_MIN = Date.UTC(2020, 0, 1);
const DAY_MS = 86400000;

// Sample times are relative to meta.startTime; a recording is never longer
// than this, so larger values are absolute clock readings in disguise.
const MAX_RELATIVE_MS = 7 * DAY_MS;

// Keeps the report readable: the first few problems of each rule are listed,
// the rest are counted.
class Problems {
	constructor(limit = 5) {
		this.limit = limit;
		this.byRule = new Map();
	}

	add(rule, message) {
		const entry = this.byRule.get(rule) || { shown: [], count: 0 };
		entry.count++;
		if (entry.shown.length < this.limit)
			entry.shown.push(message);
		this.byRule.set(rule, entry);
	}

	list() {
		const out = [];
		for (const [rule, e] of this.byRule) {
			for (const m of e.shown)
				out.push(`[${rule}] ${m}`);
			if (e.count > e.shown.length)
				out.push(`[${rule}] ... and ${e.count - e.shown.length} more`);
		}
		return out;
	}
}

const isInt = (v) => Number.isInteger(v);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isFiniteNumber = (v) => typeof v === 'number' && Number.isFinite(v);

function inRange(v, n) {
	return isInt(v) && v >= 0 && v < n;
}

// Rule 2: every listed column is an array of exactly `length` entries.
function checkColumns(p, where, table, columns) {
	if (!isObject(table)) {
		p.add('shape', `${where} is missing or not an object`);
		return false;
	}
	if (!isInt(table.length) || table.length < 0) {
		p.add('lengths', `${where}.length is not a non-negative integer`);
		return false;
	}
	let ok = true;
	for (const c of columns) {
		if (!Array.isArray(table[c])) {
			p.add('shape', `${where}.${c} is missing or not an array`);
			ok = false;
		} else if (table[c].length !== table.length) {
			p.add('lengths', `${where}.${c} has ${table[c].length} entries, length is ${table.length}`);
			ok = false;
		}
	}
	return ok;
}

function checkMeta(p, json) {
	const meta = json.meta;
	if (!isObject(meta)) {
		p.add('shape', 'meta is missing');
		return;
	}
	if (meta.preprocessedProfileVersion !== 66)
		p.add('version', `meta.preprocessedProfileVersion is ${meta.preprocessedProfileVersion}, not 66`);
	if (!isFiniteNumber(meta.interval) || meta.interval <= 0)
		p.add('meta', `meta.interval ${meta.interval} is not a positive number of ms`);
	if (!isFiniteNumber(meta.startTime) || meta.startTime < EPOCH_MS_MIN ||
	    meta.startTime > Date.now() + DAY_MS)
		p.add('times', `meta.startTime ${meta.startTime} is not ms since the epoch (rule 11)`);
	if (!Array.isArray(meta.markerSchema))
		p.add('meta', 'meta.markerSchema is not an array');
	if (meta.symbolicated !== true)
		p.add('meta', 'meta.symbolicated is not true');
	const units = meta.sampleUnits;
	if (!isObject(units)) {
		p.add('meta', 'meta.sampleUnits is missing: no CPU graph');
	} else {
		if (units.time !== 'ms')
			p.add('meta', `meta.sampleUnits.time is ${JSON.stringify(units.time)}, not "ms"`);
		if (!CPU_DELTA_UNITS.has(units.threadCPUDelta))
			p.add('units', `meta.sampleUnits.threadCPUDelta ${JSON.stringify(units.threadCPUDelta)} ` +
					       'is not "ns", "\u00b5s" (U+00B5) or "variable CPU cycles" (rule 1)');
	}
	const cats = meta.categories;
	if (!Array.isArray(cats) || cats.length === 0) {
		p.add('categories', 'meta.categories is missing or empty');
		return;
	}
	cats.forEach((c, i) => {
		if (!isObject(c) || typeof c.name !== 'string') {
			p.add('categories', `category ${i} has no name`);
			return;
		}
		if (!CATEGORY_COLORS.has(c.color))
			p.add('categories', `category ${i} (${c.name}) has color ${JSON.stringify(c.color)}`);
		if (!Array.isArray(c.subcategories) || c.subcategories.length === 0)
			p.add('categories', `category ${i} (${c.name}) has no subcategories`);
	});
	if (!cats.some((c) => c && c.color === 'grey'))
		p.add('categories', 'no category is "grey" (rule 7)');
	const vis = meta.initialVisibleThreads;
	if (vis !== undefined) {
		const n = Array.isArray(json.threads) ? json.threads.length : 0;
		if (!Array.isArray(vis) || vis.some((i) => !inRange(i, n)))
			p.add('threads', `meta.initialVisibleThreads ${JSON.stringify(vis)} names a thread that does not exist (rule 10)`);
	}
}

function checkShared(p, json) {
	const shared = json.shared;
	if (!isObject(shared)) {
		p.add('shape', 'shared is missing');
		return null;
	}
	const ok = {};
	for (const [name, cols] of Object.entries(SHARED_TABLES))
		ok[name] = checkColumns(p, `shared.${name}`, shared[name], cols);
	if (!Array.isArray(shared.stringArray)) {
		p.add('shape', 'shared.stringArray is not an array');
		return null;
	}
	const nStrings = shared.stringArray.length;
	shared.stringArray.forEach((s, i) => {
		if (typeof s !== 'string')
			p.add('strings', `stringArray[${i}] is not a string`);
	});
	if (isObject(shared.stackTable) && 'prefix' in shared.stackTable)
		p.add('shape', 'stackTable has a "prefix" column, which v66 replaced by prefixOffset');
	for (const name of Object.keys(SHARED_TABLES)) {
		if (!ok[name])
			return null;
	}

	const { stackTable: st, frameTable: ft, funcTable: fn, resourceTable: rt, sources } = shared;
	const cats = json.meta?.categories || [];
	const nLibs = Array.isArray(json.libs) ? json.libs.length : 0;

	for (let i = 0; i < st.length; i++) {
		if (!inRange(st.frame[i], ft.length))
			p.add('indexes', `stackTable.frame[${i}] = ${st.frame[i]} is outside frameTable (${ft.length})`);
		const off = st.prefixOffset[i];
		// Rule 4: a parent comes before its children, so the offset points back.
		if (!(isInt(off) && off >= 0 && off <= i))
			p.add('stack order', `stackTable.prefixOffset[${i}] = ${off} is not 0 or a backward offset <= ${i}`);
	}
	for (let i = 0; i < ft.length; i++) {
		if (!inRange(ft.func[i], fn.length))
			p.add('indexes', `frameTable.func[${i}] = ${ft.func[i]} is outside funcTable (${fn.length})`);
		const c = ft.category[i];
		const sc = ft.subcategory[i];
		if (c !== null) {
			if (!inRange(c, cats.length))
				p.add('indexes', `frameTable.category[${i}] = ${c} is outside meta.categories`);
			else if (sc === null)
				p.add('categories', `frameTable.subcategory[${i}] is null but category is ${c} (rule 7)`);
			else if (!inRange(sc, cats[c].subcategories?.length || 0))
				p.add('indexes', `frameTable.subcategory[${i}] = ${sc} is outside category ${c}'s subcategories`);
		}
		if (!isInt(ft.address[i]))
			p.add('frames', `frameTable.address[${i}] is not an integer`);
		if (!isInt(ft.inlineDepth[i]) || ft.inlineDepth[i] < 0)
			p.add('frames', `frameTable.inlineDepth[${i}] is not an integer >= 0`);
	}
	for (let i = 0; i < fn.length; i++) {
		if (!inRange(fn.name[i], nStrings))
			p.add('indexes', `funcTable.name[${i}] = ${fn.name[i]} is outside stringArray`);
		const r = fn.resource[i];
		if (!(r === -1 || inRange(r, rt.length)))
			p.add('indexes', `funcTable.resource[${i}] = ${r} is not -1 or a resourceTable index`);
		if (!(fn.source[i] === null || inRange(fn.source[i], sources.length)))
			p.add('indexes', `funcTable.source[${i}] = ${fn.source[i]} is not null or a sources index`);
		if (typeof fn.isJS[i] !== 'boolean' || typeof fn.relevantForJS[i] !== 'boolean')
			p.add('frames', `funcTable.isJS/relevantForJS[${i}] is not a boolean`);
	}
	for (let i = 0; i < rt.length; i++) {
		if (!inRange(rt.name[i], nStrings))
			p.add('indexes', `resourceTable.name[${i}] = ${rt.name[i]} is outside stringArray`);
		if (!(rt.lib[i] === null || inRange(rt.lib[i], nLibs)))
			p.add('indexes', `resourceTable.lib[${i}] = ${rt.lib[i]} is not null or a libs index`);
	}
	for (let i = 0; i < sources.length; i++) {
		if (!inRange(sources.filename[i], nStrings))
			p.add('indexes', `sources.filename[${i}] is outside stringArray`);
	}
	return { nStacks: st.length, nStrings };
}

function checkSamples(p, where, samples, nStacks) {
	const cols = ['stack'];
	const hasTime = Array.isArray(samples?.time);
	const hasDeltas = Array.isArray(samples?.timeDeltas);
	if (hasTime === hasDeltas) {
		p.add('samples', `${where} must have exactly one of time and timeDeltas`);
		return;
	}
	cols.push(hasTime ? 'time' : 'timeDeltas');
	if (samples.threadCPUDelta !== undefined)
		cols.push('threadCPUDelta');
	if (Array.isArray(samples.weight))
		cols.push('weight');
	if (!checkColumns(p, where, samples, cols))
		return;
	let t = 0;
	for (let i = 0; i < samples.length; i++) {
		const s = samples.stack[i];
		if (!(s === null || inRange(s, nStacks)))
			p.add('indexes', `${where}.stack[${i}] = ${s} is outside stackTable`);
		if (hasDeltas) {
			const d = samples.timeDeltas[i];
			if (!isFiniteNumber(d) || (i > 0 && d < 0))
				p.add('sample order', `${where}.timeDeltas[${i}] = ${d} is not a number >= 0 (rule 5)`);
			t += d;
		} else {
			const v = samples.time[i];
			if (!isFiniteNumber(v) || (i > 0 && v < t))
				p.add('sample order', `${where}.time[${i}] = ${v} is not >= the previous time (rule 5)`);
			t = v;
		}
		if (Math.abs(t) > MAX_RELATIVE_MS)
			p.add('times', `${where} sample ${i} at ${t} ms is not relative to meta.startTime (rule 11)`);
		if (samples.threadCPUDelta) {
			const c = samples.threadCPUDelta[i];
			if (!(c === null || (isFiniteNumber(c) && c >= 0)))
				p.add('samples', `${where}.threadCPUDelta[${i}] = ${c} is not null or a number >= 0`);
		}
	}
}

function checkMarkers(p, where, markers, json, nStrings) {
	if (!checkColumns(p, where, markers, MARKER_COLUMNS))
		return;
	const schemas = new Map();
	for (const s of json.meta?.markerSchema || [])
		schemas.set(s.name, s);
	const nCats = json.meta?.categories?.length || 0;
	for (let i = 0; i < markers.length; i++) {
		const at = `${where}[${i}]`;
		if (!inRange(markers.name[i], nStrings))
			p.add('indexes', `${at}.name is outside stringArray`);
		if (!inRange(markers.category[i], nCats))
			p.add('indexes', `${at}.category is outside meta.categories`);
		const ph = markers.phase[i];
		const st = markers.startTime[i];
		const en = markers.endTime[i];
		const needStart = ph === 0 || ph === 1 || ph === 2;
		const needEnd = ph === 1 || ph === 3;
		if (![0, 1, 2, 3].includes(ph))
			p.add('markers', `${at}.phase ${ph} is not 0-3`);
		if (needStart && !isFiniteNumber(st))
			p.add('markers', `${at} phase ${ph} has no startTime (rule 8)`);
		if (needEnd && !isFiniteNumber(en))
			p.add('markers', `${at} phase ${ph} has no endTime (rule 8)`);
		if (ph === 1 && isFiniteNumber(st) && isFiniteNumber(en) && en < st)
			p.add('markers', `${at} ends before it starts`);
		const data = markers.data[i];
		if (data === null || data === undefined || data.type === undefined)
			continue;
		const schema = schemas.get(data.type);
		if (!schema) {
			p.add('markers', `${at}.data.type ${JSON.stringify(data.type)} has no schema (rule 9)`);
			continue;
		}
		// Without a colour the app knows, markers draw black (issue 21).
		if (schema.colorField && !GRAPH_COLORS.has(data[schema.colorField]))
			p.add('markers', `${at}.data.${schema.colorField} = ${JSON.stringify(data[schema.colorField])} is not a colour the front-end knows`);
		for (const f of schema.fields || []) {
			const v = data[f.key];
			if (v === undefined || v === null)
				continue;
			const fmt = typeof f.format === 'string' ? f.format : null;
			if (STRING_INDEX_FORMATS.has(fmt) && !inRange(v, nStrings))
				p.add('markers', `${at}.data.${f.key} (${fmt}) = ${JSON.stringify(v)} is not a string index (rule 9)`);
			else if (STRING_FORMATS.has(fmt) && typeof v !== 'string')
				p.add('markers', `${at}.data.${f.key} (${fmt}) is not a string (rule 9)`);
			else if (NUMBER_FORMATS.has(fmt) && !isFiniteNumber(v))
				p.add('markers', `${at}.data.${f.key} (${fmt}) is not a number (rule 9)`);
		}
	}
}

function checkThreads(p, json, tables) {
	if (!Array.isArray(json.threads) || json.threads.length === 0) {
		p.add('threads', 'threads is missing or empty');
		return;
	}
	const mains = new Map();
	json.threads.forEach((t, i) => {
		const where = `threads[${i}]`;
		if (!isObject(t)) {
			p.add('shape', `${where} is not an object`);
			return;
		}
		if (typeof t.pid !== 'string') {
			p.add('threads', `${where}.pid ${JSON.stringify(t.pid)} is not a string (rule 6)`);
		}
		if (typeof t.name !== 'string')
			p.add('threads', `${where}.name is not a string`);
		if (typeof t.isMainThread !== 'boolean')
			p.add('threads', `${where}.isMainThread is not a boolean`);
		if (typeof t.processType !== 'string')
			p.add('threads', `${where}.processType is not a string`);
		if (!(isInt(t.tid) || typeof t.tid === 'string'))
			p.add('threads', `${where}.tid is not a number or string`);
		if (!Array.isArray(t.pausedRanges))
			p.add('threads', `${where}.pausedRanges is not an array`);
		for (const k of ['registerTime', 'processStartupTime']) {
			if (!isFiniteNumber(t[k]))
				p.add('threads', `${where}.${k} is not a number`);
		}
		for (const k of ['unregisterTime', 'processShutdownTime']) {
			if (!(t[k] === null || isFiniteNumber(t[k])))
				p.add('threads', `${where}.${k} is not null or a number`);
		}
		if (t.isMainThread === true)
			mains.set(t.pid, (mains.get(t.pid) || 0) + 1);
		if (!mains.has(t.pid))
			mains.set(t.pid, 0);
		if (tables) {
			checkSamples(p, `${where}.samples`, t.samples, tables.nStacks);
			checkMarkers(p, `${where}.markers`, t.markers, json, tables.nStrings);
		}
	});
	for (const [pid, n] of mains) {
		if (n !== 1)
			p.add('main thread', `pid ${pid} has ${n} main threads, not exactly 1 (rule 6)`);
	}
}

export function checkStructure(json, { limit = 5 } = {}) {
	const p = new Problems(limit);
	if (!isObject(json)) {
		p.add('shape', 'the profile is not a JSON object');
		return p.list();
	}
	for (const k of ['meta', 'libs', 'shared', 'threads']) {
		if (!(k in json))
			p.add('shape', `top-level key "${k}" is missing`);
	}
	if (!Array.isArray(json.libs))
		p.add('shape', 'libs is not an array');
	checkMeta(p, json);
	const tables = checkShared(p, json);
	checkThreads(p, json, tables);
	return p.list();
}
