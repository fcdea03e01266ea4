/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How whole the profile's user stacks are: of the on-CPU samples with user
 * frames, how many reach a thread root (the program's entry, a new
 * thread's entry) and, for the others, why their stacks stop early. A call
 * tree built from cut stacks is wrong without looking wrong, so the profile
 * and the end-of-run summary say how much of it to trust.
 */
#ifndef BPFPROF_FRAME_QUALITY_H
#define BPFPROF_FRAME_QUALITY_H

#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../lang/code_runtime.h"

struct model;
struct profile_tables;

#define FRAME_QUALITY_REASONS (USTACK_END_STUCK + 1)

/*
 * The languages whose functions a runtime's own frames name (a category
 * each): of the on-CPU samples in a language's code (any frame of it on
 * the stack, a JVM's stubs and unnamed JIT code included), how many name
 * at least one of its functions. A JVM whose code is all "[JIT] java" or
 * "Interpreter" is profiled, but not readably.
 */
enum frame_lang {
	FRAME_LANG_PYTHON = 0,
	FRAME_LANG_JAVA,
	FRAME_LANG_JS,
	FRAME_LANG_PHP,
	FRAME_LANG_RUBY,
	FRAME_LANG_COUNT,
};

const char *frame_lang_name(enum frame_lang l);
/* The language of a profile category's name ("Java"), -1 for none. */
int frame_lang_of_category(const char *category);
/*
 * A frame's bits in a stack's language mask: bit 2*l, its language's
 * code, and bit 2*l+1 when it names one of the language's functions.
 */
uint16_t frame_lang_bits(int lang, const char *func, bool is_js);

struct frame_lang_quality {
	uint64_t samples[FRAME_LANG_COUNT]; /* on-CPU samples in the language's code */
	uint64_t named[FRAME_LANG_COUNT];   /* ... with one of its functions named */
};

/* Count `samples` samples of a stack whose frames' language bits OR to `bits`. */
void frame_lang_count(struct frame_lang_quality *q, uint16_t bits, uint64_t samples);

/* Python versions told apart in the frame quality; samples of more are not counted. */
#define FRAME_QUALITY_PY_VERSIONS 16

/*
 * Python's frame quality per interpreter version (its process's
 * python_info): of the on-CPU samples of that version's processes in
 * Python code (the interpreter's frames, or Python frames), how many name
 * a Python function.
 */
struct frame_py_version {
	uint32_t version; /* PY_VERSION_HEX >> 16: 0x0309 */
	uint64_t samples, named;
};

/* "Python 3.9" into buf. */
const char *frame_py_version_name(uint32_t version, char buf[24]);

struct frame_quality {
	uint64_t user_stacks;  /* on-CPU samples with at least one user frame */
	uint64_t reached_root; /* ... whose outermost frame is a thread root */
	/* The others, by why the unwinder stopped (enum ustack_end). */
	uint64_t stopped[FRAME_QUALITY_REASONS];
	/*
	 * The same two counts by runtime (enum code_runtime): a stack with a
	 * Go binary's frame is Go's, else one with the Python interpreter's is
	 * Python's, else native.
	 */
	uint64_t runtime_stacks[CODE_RUNTIME_COUNT];
	uint64_t runtime_reached_root[CODE_RUNTIME_COUNT];
	struct frame_lang_quality lang;
	struct frame_py_version py[FRAME_QUALITY_PY_VERSIONS]; /* by version, first met first */
	unsigned n_py;
};

/* Counts over every on-CPU sample of the model, named through the built tables. */
int frame_quality_count(struct frame_quality *q, const struct model *m,
			const struct profile_tables *t);

/* What a reason means, for people: "no CFI for the code (JIT, unknown)". */
const char *frame_quality_reason(enum ustack_end reason);

/* Whether a function is where a thread's stack begins (_start, clone3, ...). */
int frame_quality_is_root(const char *func);

#endif
