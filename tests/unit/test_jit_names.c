// SPDX-License-Identifier: BSD-2-Clause
/*
 * JIT runtimes' names as their perf maps and jitdumps write them, taken
 * apart into what a user reads; and runtimes told from mapped files.
 */
#include <string.h>

#include "lang/jit_names.h"
#include "test.h"

static void check_name(enum jit_runtime rt, const char *raw, const char *func, const char *file,
		       int line, enum jit_lang lang, bool is_js)
{
	struct jit_name n;
	char fbuf[256] = "", filebuf[256] = "";

	jit_name_parse(rt, raw, &n);
	snprintf(fbuf, sizeof(fbuf), "%.*s", (int)n.func_len, n.func);
	if (n.file)
		snprintf(filebuf, sizeof(filebuf), "%.*s", (int)n.file_len, n.file);
	CHECK_EQ_STR(fbuf, func);
	if (file)
		CHECK_EQ_STR(n.file ? filebuf : NULL, file);
	else
		CHECK(n.file == NULL);
	CHECK_EQ_INT(n.line, line);
	CHECK_EQ_INT(n.lang, lang);
	CHECK_EQ_INT(n.is_js, is_js);
}

static void test_v8(void)
{
	check_name(JIT_RUNTIME_NODE, "JS:*inner /tmp/hot.js:1:15", "inner", "/tmp/hot.js", 1,
		   JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:~outer /srv/a b/app.js:30:2", "outer", "/srv/a b/app.js",
		   30, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:^Foo.bar file:///srv/app.mjs:12:7", "Foo.bar",
		   "file:///srv/app.mjs", 12, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_UNKNOWN, "LazyCompile:*inner /tmp/hot.js:7", "inner",
		   "/tmp/hot.js:7", 0, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:~get size /srv/m.js:3:9", "get size", "/srv/m.js", 3,
		   JIT_LANG_JS, true);
	/* An anonymous function: nothing before the space. */
	check_name(JIT_RUNTIME_NODE, "JS:* /tmp/hot.js:4:1", "(anonymous)", "/tmp/hot.js", 4,
		   JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:*inner", "inner", NULL, 0, JIT_LANG_JS, true);
	/* V8's own code: named whole, the engine's, no function of the script. */
	check_name(JIT_RUNTIME_NODE, "Builtin:ArrayForEach", "Builtin:ArrayForEach", NULL, 0,
		   JIT_LANG_JS, false);
	check_name(JIT_RUNTIME_NODE, "BytecodeHandler:LdaZero", "BytecodeHandler:LdaZero", NULL, 0,
		   JIT_LANG_JS, false);
	/* Garbage in the line fields: the script kept whole, no line. */
	check_name(JIT_RUNTIME_NODE, "JS:*f /x.js:a:b", "f", "/x.js:a:b", 0, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:*f /x.js::", "f", "/x.js::", 0, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:*f :1:2", "f", NULL, 1, JIT_LANG_JS, true);
	check_name(JIT_RUNTIME_NODE, "JS:", "JS:", NULL, 0, JIT_LANG_JS, false);
	check_name(JIT_RUNTIME_NODE, "JS:*f /x.js:99999999999999999999:1", "f", "/x.js", 100000000,
		   JIT_LANG_JS, true);
}

static void test_java(void)
{
	check_name(JIT_RUNTIME_JAVA, "long Hot.inner(long)", "Hot.inner", NULL, 0, JIT_LANG_JAVA,
		   false);
	check_name(JIT_RUNTIME_JAVA,
		   "void java.lang.System.arraycopy(java.lang.Object, int, java.lang.Object, int, "
		   "int)",
		   "java.lang.System.arraycopy", NULL, 0, JIT_LANG_JAVA, false);
	check_name(JIT_RUNTIME_JAVA, "java.lang.String com.example.A$B.<init>()",
		   "com.example.A$B.<init>", NULL, 0, JIT_LANG_JAVA, false);
	/* Stubs: kept whole, Java's code. */
	check_name(JIT_RUNTIME_JAVA, "Interpreter", "Interpreter", NULL, 0, JIT_LANG_JAVA, false);
	check_name(JIT_RUNTIME_JAVA, "StubRoutines (1)", "StubRoutines (1)", NULL, 0, JIT_LANG_JAVA,
		   false);
	check_name(JIT_RUNTIME_JAVA, "(", "(", NULL, 0, JIT_LANG_JAVA, false);
	check_name(JIT_RUNTIME_JAVA, "x (", "x (", NULL, 0, JIT_LANG_JAVA, false);
	/* Not a JVM: a name is only a name. */
	check_name(JIT_RUNTIME_UNKNOWN, "long Hot.inner(long)", "long Hot.inner(long)", NULL, 0,
		   JIT_LANG_NATIVE, false);
}

static void test_python(void)
{
	check_name(JIT_RUNTIME_PYTHON, "py::Pool.work:/srv/app.py", "Pool.work", "/srv/app.py", 0,
		   JIT_LANG_PYTHON, false);
	check_name(JIT_RUNTIME_UNKNOWN, "py::f:", "f", NULL, 0, JIT_LANG_PYTHON, false);
	check_name(JIT_RUNTIME_PYTHON, "py::", "py::", NULL, 0, JIT_LANG_PYTHON, false);
}

static void test_runtime_of_path(void)
{
	CHECK_EQ_INT(jit_runtime_of_path("/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"),
		     JIT_RUNTIME_JAVA);
	CHECK_EQ_INT(jit_runtime_of_path("/usr/bin/node"), JIT_RUNTIME_NODE);
	CHECK_EQ_INT(jit_runtime_of_path("/usr/lib/x86_64-linux-gnu/libnode.so.108"),
		     JIT_RUNTIME_NODE);
	CHECK_EQ_INT(jit_runtime_of_path("/root/.pyenv/versions/3.12.1/bin/python3.12"),
		     JIT_RUNTIME_PYTHON);
	CHECK_EQ_INT(jit_runtime_of_path("/usr/lib/libpython3.11.so.1.0"), JIT_RUNTIME_PYTHON);
	CHECK_EQ_INT(jit_runtime_of_path("/usr/bin/nodemon"), JIT_RUNTIME_UNKNOWN);
	CHECK_EQ_INT(jit_runtime_of_path("/usr/lib/libjvm.so.dir/x"), JIT_RUNTIME_UNKNOWN);
	CHECK_EQ_INT(jit_runtime_of_path(""), JIT_RUNTIME_UNKNOWN);
	CHECK_EQ_STR(jit_runtime_unnamed(JIT_RUNTIME_JAVA), "[JIT] java");
	CHECK_EQ_STR(jit_runtime_unnamed(JIT_RUNTIME_NODE), "[JIT] node");
	CHECK_EQ_STR(jit_runtime_unnamed(JIT_RUNTIME_UNKNOWN), "[anon exec]");
}

/* Which frames of a JVM count as a named Java method in the frame-quality counts. */
static void test_java_method(void)
{
	CHECK(jit_name_is_java_method("com.example.Hot.inner"));
	CHECK(jit_name_is_java_method("JitHot.bpfprofJavaInner"));
	CHECK(jit_name_is_java_method("Hot$$Lambda.0x0000000801001200.run"));
	CHECK(!jit_name_is_java_method("Interpreter"));
	CHECK(!jit_name_is_java_method("StubRoutines (1)"));
	CHECK(!jit_name_is_java_method("I2C/C2I adapters"));
	CHECK(!jit_name_is_java_method("[JIT] java"));
	CHECK(!jit_name_is_java_method("[JVM stub]"));
	CHECK(!jit_name_is_java_method(".x"));
	CHECK(!jit_name_is_java_method("x."));
	CHECK(!jit_name_is_java_method(""));
	CHECK(!jit_name_is_java_method(NULL));
}

int main(void)
{
	RUN(test_java_method);
	RUN(test_v8);
	RUN(test_java);
	RUN(test_python);
	RUN(test_runtime_of_path);
	return test_summary();
}
