/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JIT runtimes as their perf maps and jitdump files name code: which
 * runtime a process is (from the files it maps), and a runtime's symbol
 * name taken apart into what a user reads (function, script, line) and
 * what kind of code it is. Runtimes write, for example:
 *
 *   node (V8)    "JS:*inner /srv/app/hot.js:1:15"   (* optimized, ^ baseline,
 *                "Builtin:ArrayForEach"              ~ interpreted, + maglev)
 *   HotSpot      "long com.example.Hot.inner(long)" (DumpPerfMapAtExit, jcmd
 *                                                     Compiler.perfmap)
 *   CPython      "py::inner:/srv/app/hot.py"        (python -X perf)
 */
#ifndef BPFPROF_LANG_JIT_NAMES_H
#define BPFPROF_LANG_JIT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

enum jit_runtime {
	JIT_RUNTIME_UNKNOWN = 0, /* anonymous executable memory of no runtime we know */
	JIT_RUNTIME_JAVA,	 /* HotSpot (libjvm.so) */
	JIT_RUNTIME_NODE,	 /* node (V8) */
	JIT_RUNTIME_PYTHON,	 /* CPython with its perf trampoline */
};

/*
 * The runtime whose files include `path` (a mapping's path): libjvm.so,
 * node or libnode.so, python or libpython; JIT_RUNTIME_UNKNOWN for any
 * other. A process may fake these names: its frames are then named as the
 * runtime's would be, which is no more than what it chose to write.
 */
enum jit_runtime jit_runtime_of_path(const char *path);

/*
 * The frame of JIT code no map names: one per runtime, so that a
 * runtime's unnamed code adds up as one function, not one per address.
 */
const char *jit_runtime_unnamed(enum jit_runtime rt);

/*
 * Whether a frame of a JVM's code names a Java method ("pkg.Class.method",
 * as java_frames and the JVM's perf maps give them) rather than the JVM's
 * stubs ("Interpreter", "StubRoutines (1)", "I2C/C2I adapters") or a
 * group ("[JIT] java"): a method's name always has a class before a dot,
 * and the stubs' names have none. For how many samples name Java code.
 */
bool jit_name_is_java_method(const char *func);

enum jit_lang {
	JIT_LANG_NATIVE = 0, /* stubs and code of no language */
	JIT_LANG_JAVA,
	JIT_LANG_JS,
	JIT_LANG_PYTHON,
};

/* A name taken apart; pointers into the name given, with lengths. */
struct jit_name {
	const char *func;
	size_t func_len;
	const char *file; /* NULL when the name gives none */
	size_t file_len;
	int line; /* where the function starts; 0 when unknown */
	enum jit_lang lang;
	bool is_js; /* a JavaScript function (not a builtin or stub) */
};

/*
 * Take `name` (NUL-terminated, as a map entry holds it) apart. A name of
 * no known shape is kept whole as the function, in the runtime's language
 * where it is one of the runtime's own (a HotSpot stub is Java's code).
 */
void jit_name_parse(enum jit_runtime rt, const char *name, struct jit_name *out);

#endif
