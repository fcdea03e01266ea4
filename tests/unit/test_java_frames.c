// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbols/java_frames.c: Java and JavaScript frames as the profile's tables
 * see them: a JS function's entry is in the JavaScript category and isJS
 * (the front-end's "JavaScript only" keeps it), V8's typed frames only in
 * the category, a Java method in Java's; the same names of two runtimes
 * are two entries.
 */
#include <stdio.h>
#include <string.h>

#include "symbols/java_frames.h"
#include "test.h"

static struct hotspot_frame frame(const char *name, const char *file, int line)
{
	struct hotspot_frame f = { .line = line };

	snprintf(f.name, sizeof(f.name), "%s", name);
	snprintf(f.file, sizeof(f.file), "%s", file);
	return f;
}

static void languages(void)
{
	struct java_frames *f = java_frames_new();
	/* Innermost first, as v8_procs_frames gives an optimized frame's inlined functions. */
	struct hotspot_frame js[2] = { frame("inner", "/srv/hot.js", 3),
				       frame("outer", "/srv/hot.js", 9) };
	struct hotspot_frame typed = frame("V8::EntryFrame", "", 0);
	struct resolved_frame r;
	int64_t a, b, c, d;

	CHECK(f);
	a = java_frames_intern_lang(f, js, 2, JAVA_FRAMES_JS);
	b = java_frames_intern_lang(f, &typed, 1, JAVA_FRAMES_V8_OTHER);
	c = java_frames_intern(f, js, 2);
	d = java_frames_intern_lang(f, js, 2, JAVA_FRAMES_JS);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	CHECK(a != c);
	CHECK_EQ_INT(d, a);
	CHECK_EQ_INT(java_frames_count(f), 3);

	CHECK(java_frames_resolve(f, (uint64_t)a, &r));
	CHECK(r.javascript && r.is_js && !r.java);
	CHECK_EQ_INT(r.count, 2);
	CHECK_EQ_STR(r.items[0].func, "outer");
	CHECK_EQ_STR(r.items[1].func, "inner");
	CHECK_EQ_STR(r.items[1].file, "/srv/hot.js");
	CHECK_EQ_INT(r.items[1].line, 3);
	CHECK_EQ_STR(r.resource, "/srv/hot.js");

	CHECK(java_frames_resolve(f, (uint64_t)b, &r));
	CHECK(r.javascript && !r.is_js && !r.java);
	CHECK_EQ_STR(r.items[0].func, "V8::EntryFrame");
	CHECK(!r.items[0].file);

	CHECK(java_frames_resolve(f, (uint64_t)c, &r));
	CHECK(r.java && !r.javascript && !r.is_js);
	java_frames_free(f);
}

int main(void)
{
	RUN(languages);
	return test_summary();
}
