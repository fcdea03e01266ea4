// SPDX-License-Identifier: BSD-2-Clause
#include "jit_names.h"

#include <string.h>

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

enum jit_runtime jit_runtime_of_path(const char *path)
{
	const char *b = base_name(path);

	if (starts_with(b, "libjvm.so"))
		return JIT_RUNTIME_JAVA;
	if (!strcmp(b, "node") || !strcmp(b, "nodejs") || starts_with(b, "libnode.so"))
		return JIT_RUNTIME_NODE;
	if (starts_with(b, "libpython3") || (starts_with(b, "python3") && !strchr(b, '.')) ||
	    starts_with(b, "python3."))
		return JIT_RUNTIME_PYTHON;
	return JIT_RUNTIME_UNKNOWN;
}

const char *jit_runtime_unnamed(enum jit_runtime rt)
{
	switch (rt) {
	case JIT_RUNTIME_JAVA:
		return "[JIT] java";
	case JIT_RUNTIME_NODE:
		return "[JIT] node";
	case JIT_RUNTIME_PYTHON:
		return "[JIT] python";
	default:
		return "[anon exec]";
	}
}

bool jit_name_is_java_method(const char *func)
{
	const char *dot = func ? strrchr(func, '.') : NULL;

	/* "[JIT] java" and "[JVM stub]" are groups; "a b" is a stub's description. */
	return dot && dot != func && dot[1] && func[0] != '[' && !strchr(func, ' ');
}

/* A decimal at s (no sign), up to `end`; its value capped, or -1 when there is none. */
static int parse_line_number(const char *s, const char *end)
{
	long v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	/* No script has 10^8 lines: past that, the number is clamped, never overflowed. */
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > 100000000)
			v = 100000000;
	return s == end ? (int)v : -1;
}

/*
 * V8's "PREFIX:[tier]name script:line:column": the script is what follows
 * the name's space, line and column its last two ':' fields. An anonymous
 * function has no name before the space (" script:1:1").
 */
static bool parse_v8(const char *name, struct jit_name *out)
{
	const char *colon = strchr(name, ':'), *body, *space, *end, *c2, *c1;
	int line;

	if (!colon)
		return false;
	if (!strncmp(name, "JS:", 3) || !strncmp(name, "LazyCompile:", 12) ||
	    !strncmp(name, "Function:", 9) || !strncmp(name, "Script:", 7)) {
		out->lang = JIT_LANG_JS;
		out->is_js = true;
	} else if (starts_with(name, "Builtin:") || starts_with(name, "BytecodeHandler:") ||
		   starts_with(name, "Stub:") || starts_with(name, "RegExp:") ||
		   starts_with(name, "Handler:") || starts_with(name, "Eval:") ||
		   starts_with(name, "Callback:") || starts_with(name, "Interpreter:")) {
		/* V8's own code: JavaScript's engine, but no function of the script. */
		out->lang = JIT_LANG_JS;
		out->is_js = starts_with(name, "Eval:");
		if (!out->is_js)
			return true; /* kept whole: "Builtin:ArrayForEach" says what it is */
	} else {
		return false;
	}
	body = colon + 1;
	/* The tier marks V8 writes before the name; the frame's code says the tier. */
	if (*body == '*' || *body == '^' || *body == '~' || *body == '+')
		body++;
	end = body + strlen(body);
	/*
	 * Function names have no spaces but for accessors ("get x"); a
	 * script's path may have them, so the name ends at its first space.
	 */
	space = strchr(starts_with(body, "get ") || starts_with(body, "set ") ? body + 4 : body,
		       ' ');
	if (!space) {
		/* No script: the name alone, or the whole of a name that has none. */
		if (body < end) {
			out->func = body;
			out->func_len = end - body;
		} else {
			out->is_js = false;
		}
		return true;
	}
	out->func = body;
	out->func_len = space - body;
	/* "script:line:column": line is the field between the last two colons. */
	c2 = end;
	while (c2 > space && c2[-1] != ':')
		c2--;
	c1 = c2 > space + 1 ? c2 - 1 : space;
	while (c1 > space + 1 && c1[-1] != ':')
		c1--;
	line = c1 > space + 1 && c2 > c1 ? parse_line_number(c1, c2 - 1) : -1;
	if (line >= 0 && parse_line_number(c2, end) >= 0) {
		out->file = space + 1;
		out->file_len = (c1 - 1) - (space + 1);
		out->line = line;
	} else {
		out->file = space + 1;
		out->file_len = end - (space + 1);
	}
	if (!out->file_len)
		out->file = NULL;
	if (!out->func_len) {
		out->func = "(anonymous)";
		out->func_len = strlen(out->func);
	}
	return true;
}

/*
 * HotSpot's "RETURN_TYPE pkg.Class.method(ARGS)": Java users read
 * "pkg.Class.method"; the return type and the arguments are dropped (an
 * overload then shares its name, as in every Java profiler's view).
 */
static bool parse_java(const char *name, struct jit_name *out)
{
	const char *paren = strchr(name, '('), *start;

	out->lang = JIT_LANG_JAVA;
	if (!paren || paren == name)
		return true; /* a stub ("Interpreter", "StubRoutines (1)"): kept whole */
	start = paren;
	while (start > name && start[-1] != ' ')
		start--;
	if (start == paren || !memchr(start, '.', paren - start))
		return true;
	out->func = start;
	out->func_len = paren - start;
	return true;
}

/* CPython's trampoline: "py::QUALNAME:FILE". */
static bool parse_python(const char *name, struct jit_name *out)
{
	const char *body, *colon;

	if (!starts_with(name, "py::"))
		return false;
	out->lang = JIT_LANG_PYTHON;
	body = name + 4;
	colon = strchr(body, ':');
	if (!colon || colon == body)
		return true;
	out->func = body;
	out->func_len = colon - body;
	if (colon[1]) {
		out->file = colon + 1;
		out->file_len = strlen(colon + 1);
	}
	return true;
}

void jit_name_parse(enum jit_runtime rt, const char *name, struct jit_name *out)
{
	memset(out, 0, sizeof(*out));
	out->func = name;
	out->func_len = strlen(name);
	/* V8's and CPython's prefixes say what wrote them, whatever the process is. */
	if (parse_v8(name, out) || parse_python(name, out))
		return;
	if (rt == JIT_RUNTIME_JAVA)
		parse_java(name, out);
}
