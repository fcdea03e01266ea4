// SPDX-License-Identifier: BSD-2-Clause
/*
 * Java frames as the profile's tables see them (symbols/java_frames.h): a
 * chain of methods one entry, outermost first, the same chain the same
 * entry; and a user whose process makes every sample's names new held to
 * a share of the memory, past which its new chains are one entry. A JS
 * function's entry is in the JavaScript category and isJS (the front-end's
 * "JavaScript only" keeps it), V8's typed frames only in the category; the
 * same names of two runtimes are two entries.
 */
#include <stdio.h>
#include <string.h>

#include "symbols/java_frames.h"
#include "test.h"

/* A chain of two: `inner` at line 21 inlined into pkg.Outer.run at line 10. */
static int chain(struct hotspot_frame f[2], const char *inner, int line)
{
	memset(f, 0, 2 * sizeof(*f));
	snprintf(f[0].name, sizeof(f[0].name), "%s", inner);
	snprintf(f[0].file, sizeof(f[0].file), "Outer.java");
	f[0].line = line;
	snprintf(f[1].name, sizeof(f[1].name), "pkg.Outer.run");
	f[1].line = 10;
	return 2;
}

static void test_chains(void)
{
	struct java_frames *jf = java_frames_new();
	struct hotspot_frame f[2];
	struct resolved_frame r;
	int64_t a, b;

	a = java_frames_intern(jf, f, chain(f, "pkg.Outer.work", 21));
	CHECK(a >= 0);
	CHECK_EQ_INT(java_frames_intern(jf, f, chain(f, "pkg.Outer.work", 21)), a);
	b = java_frames_intern(jf, f, chain(f, "pkg.Outer.work", 22));
	CHECK(b >= 0 && b != a);
	CHECK(java_frames_resolve(jf, (uint64_t)a, &r));
	CHECK_EQ_INT(r.count, 2);
	CHECK_EQ_STR(r.items[0].func, "pkg.Outer.run");
	CHECK(r.items[0].file == NULL);
	CHECK_EQ_STR(r.items[1].func, "pkg.Outer.work");
	CHECK_EQ_STR(r.items[1].file, "Outer.java");
	CHECK_EQ_INT(r.items[1].line, 21);
	CHECK_EQ_INT(java_frames_count(jf), 2);
	java_frames_free(jf);
}

/* Chains of user with fresh names until one is refused: how many were kept. */
static int fill(struct java_frames *jf, uint32_t user, const char *prefix, int64_t *over)
{
	struct hotspot_frame f[2];
	char name[64];

	for (int i = 0; i < 10000; i++) {
		int64_t e;
		struct resolved_frame r;

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		e = java_frames_intern_user(jf, user, f, chain(f, name, 1));
		if (e < 0 || !java_frames_resolve(jf, (uint64_t)e, &r))
			return -1;
		if (!strcmp(r.items[0].func, JAVA_FRAMES_OVER_BUDGET)) {
			*over = e;
			return i;
		}
	}
	return 10000;
}

static void test_memory_shares(void)
{
	struct java_frames *jf = java_frames_new();
	struct hotspot_frame f[2];
	int64_t over = -1, over2 = -1, first;
	int kept, kept2;

	java_frames_set_caps(jf, 64 << 10, 16 << 10);
	first = java_frames_intern_user(jf, 1000, f, chain(f, "pkg.A.m", 1));
	kept = fill(jf, 1000, "pkg.A.fresh", &over);
	/* User 1000's share ends it: some kept, then the one entry; what it had is still found. */
	CHECK(kept > 10 && kept < 10000);
	CHECK(over >= 0);
	CHECK_EQ_INT(java_frames_intern_user(jf, 1000, f, chain(f, "pkg.A.m", 1)), first);
	/* Another user has a share of its own. */
	kept2 = fill(jf, 2000, "pkg.B.fresh", &over2);
	CHECK(kept2 >= kept - 1 && kept2 < 10000);
	CHECK_EQ_INT(over2, over);
	/* All users together stay under the cap: the entries do not grow past it. */
	for (uint32_t u = 3000; u < 3010; u++)
		(void)fill(jf, u, "pkg.C.fresh", &over2);
	CHECK(java_frames_count(jf) < (size_t)(64 << 10) / 100);
	java_frames_free(jf);
}

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
	a = java_frames_intern_lang(f, JAVA_FRAMES_NO_USER, js, 2, JAVA_FRAMES_JS);
	b = java_frames_intern_lang(f, JAVA_FRAMES_NO_USER, &typed, 1, JAVA_FRAMES_V8_OTHER);
	c = java_frames_intern(f, js, 2);
	d = java_frames_intern_lang(f, JAVA_FRAMES_NO_USER, js, 2, JAVA_FRAMES_JS);
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
	RUN(test_chains);
	RUN(test_memory_shares);
	RUN(languages);
	return test_summary();
}
