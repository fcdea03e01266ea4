// SPDX-License-Identifier: BSD-2-Clause
#include "frame_quality.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lang/jit_names.h"
#include "../model/model.h"
#include "profile_tables.h"

/*
 * Where stacks begin. glibc: _start (the program's and ld.so's entry),
 * clone3/clone (a new thread's first frame; start_thread above it when the
 * CFI of clone3 is not used). Go: goroutines start in runtime.goexit, the
 * main thread in runtime.rt0_go, other threads in runtime.mstart (".abi0"
 * where the symbol table names the assembly's ABI); the main goroutine's
 * runtime.main is a root as well.
 */
static const char *const root_funcs[] = {
	"runtime.goexit.abi0",
	"runtime.rt0_go.abi0",
	"runtime.mstart.abi0",
	"runtime.main",
	"_start",
	"__clone3",
	"clone3",
	"__clone",
	"clone",
	"start_thread",
	"thread_start",
	"runtime.goexit",
	"runtime.rt0_go",
	"runtime.mstart",
	"__libc_start_main",
};

int frame_quality_is_root(const char *func)
{
	for (size_t i = 0; i < sizeof(root_funcs) / sizeof(root_funcs[0]); i++)
		if (!strcmp(func, root_funcs[i]))
			return 1;
	return 0;
}

const char *frame_quality_reason(enum ustack_end reason)
{
	switch (reason) {
	case USTACK_END_UNKNOWN:
		return "frame pointers ran out";
	case USTACK_END_ROOT:
		return "outermost frame by its CFI";
	case USTACK_END_FP_CHAIN:
		return "frame-pointer chain ended";
	case USTACK_END_NO_CFI:
		return "code without CFI or frame pointer (JIT, unknown)";
	case USTACK_END_NO_ROW:
		return "code its binary's CFI does not cover, without frame pointer";
	case USTACK_END_UNREADABLE:
		return "stack unreadable";
	case USTACK_END_LIMIT:
		return "depth limit (truncated)";
	case USTACK_END_STUCK:
		return "a step that did not move up the stack (truncated)";
	}
	return "unknown";
}

/*
 * Per profile stack, memoized: 1 when its outermost user frame is a root,
 * 0 when not, 2 when it has no user frame. Stacks are interned prefix
 * first, so a stack's answer is its prefix's unless it is the root-most
 * user frame itself; one pass in index order fills the table.
 */
enum { ROOT_NO = 0, ROOT_YES = 1, ROOT_NO_USER = 2 };

static uint8_t *outermost_user_is_root(const struct profile_tables *t)
{
	uint8_t *memo = malloc(t->stacks.len ? t->stacks.len : 1);

	if (!memo)
		return NULL;
	for (size_t i = 0; i < t->stacks.len; i++) {
		const struct pt_stack *s = &t->stacks.data[i];
		const struct pt_frame *f = &t->frames.data[s->frame];
		uint8_t above =
			s->prefix == NO_INDEX || s->prefix >= i ? ROOT_NO_USER : memo[s->prefix];

		if (above != ROOT_NO_USER ||
		    (f->category != CAT_USER && f->category != CAT_PYTHON &&
		     f->category != CAT_JAVA && f->category != CAT_JS && f->category != CAT_PHP &&
		     f->category != CAT_RUBY))
			memo[i] = above;
		else
			memo[i] = frame_quality_is_root(
					  strtab_get(&t->strings, t->funcs.data[f->func].name))
					  ? ROOT_YES
					  : ROOT_NO;
	}
	return memo;
}

/* The runtime of a frame's code: its library's, native when it has none. */
static uint16_t frame_runtime_bit(const struct profile_tables *t, const struct pt_frame *f)
{
	int32_t res = t->funcs.data[f->func].resource;
	int32_t lib = res >= 0 ? t->resources.data[res].lib : -1;
	const struct object_info *obj = lib >= 0 ? t->libs.data[lib].obj : NULL;

	return obj && obj->runtime < CODE_RUNTIME_COUNT ? (uint16_t)(1u << obj->runtime) : 0;
}

/*
 * Per profile stack, the OR of `frame_bits` over its frames, prefix first
 * as above: the runtimes its frames belong to, or its languages.
 */
static uint16_t *stack_bits(const struct profile_tables *t,
			    uint16_t (*frame_bits)(const struct profile_tables *t,
						   const struct pt_frame *f))
{
	uint16_t *bits = malloc(sizeof(*bits) * (t->stacks.len ? t->stacks.len : 1));

	if (!bits)
		return NULL;
	for (size_t i = 0; i < t->stacks.len; i++) {
		const struct pt_stack *s = &t->stacks.data[i];

		bits[i] =
			(uint16_t)((s->prefix == NO_INDEX || s->prefix >= i ? 0 : bits[s->prefix]) |
				  frame_bits(t, &t->frames.data[s->frame]));
	}
	return bits;
}

const char *frame_lang_name(enum frame_lang l)
{
	switch (l) {
	case FRAME_LANG_PYTHON:
		return "Python";
	case FRAME_LANG_JAVA:
		return "Java";
	case FRAME_LANG_JS:
		return "JavaScript";
	case FRAME_LANG_PHP:
		return "PHP";
	case FRAME_LANG_RUBY:
		return "Ruby";
	default:
		return "?";
	}
}

int frame_lang_of_category(const char *category)
{
	for (int l = 0; category && l < FRAME_LANG_COUNT; l++)
		if (!strcmp(category, frame_lang_name(l)))
			return l;
	return -1;
}

/*
 * Python frames name a function unless their code object was not read
 * ("[unknown Python function]", "[Python code past ...]"); a JVM's when it names a method,
 * not a stub; V8's when the front-end's isJS says a JavaScript function,
 * not a builtin.
 */
uint16_t frame_lang_bits(int lang, const char *func, bool is_js)
{
	bool named;

	switch (lang) {
	case FRAME_LANG_PYTHON:
		named = func && func[0] != '[';
		break;
	case FRAME_LANG_RUBY:
		/* Not a stand-in: "[unknown Ruby method]". */
		named = func && func[0] != '[';
		break;
	case FRAME_LANG_JAVA:
		named = jit_name_is_java_method(func);
		break;
	case FRAME_LANG_JS:
		named = is_js;
		break;
	case FRAME_LANG_PHP:
		/* Not a stand-in: "[unknown PHP function]", "[PHP function past ...]". */
		named = func && func[0] != '[';
		break;
	default:
		return 0;
	}
	return (uint16_t)((named ? 3u : 1u) << (2 * lang));
}

static uint16_t pt_frame_lang_bits(const struct profile_tables *t, const struct pt_frame *f)
{
	const struct pt_func *fn = &t->funcs.data[f->func];
	int lang = f->category == CAT_PYTHON ? FRAME_LANG_PYTHON
		   : f->category == CAT_JAVA ? FRAME_LANG_JAVA
		   : f->category == CAT_JS   ? FRAME_LANG_JS
		   : f->category == CAT_PHP  ? FRAME_LANG_PHP
		   : f->category == CAT_RUBY ? FRAME_LANG_RUBY
					     : -1;

	return lang < 0 ? 0 : frame_lang_bits(lang, strtab_get(&t->strings, fn->name), fn->is_js);
}

void frame_lang_count(struct frame_lang_quality *q, uint16_t bits, uint64_t samples)
{
	for (int l = 0; l < FRAME_LANG_COUNT; l++) {
		if (bits & (1u << (2 * l)))
			q->samples[l] += samples;
		if (bits & (2u << (2 * l)))
			q->named[l] += samples;
	}
}

static enum code_runtime runtime_of(uint16_t bits)
{
	if (bits & (1u << CODE_RUNTIME_GO))
		return CODE_RUNTIME_GO;
	if (bits & (1u << CODE_RUNTIME_PYTHON))
		return CODE_RUNTIME_PYTHON;
	return CODE_RUNTIME_NATIVE;
}

const char *frame_py_version_name(uint32_t version, char buf[24])
{
	snprintf(buf, 24, "Python %u.%u", (version >> 8) & 0xff, version & 0xff);
	return buf;
}

/* A sample of a Python `version_hex` process in Python code, naming a Python function or not. */
static void py_version_count(struct frame_quality *q, uint32_t version_hex, bool named)
{
	uint32_t v = version_hex >> 16;
	unsigned i = 0;

	while (i < q->n_py && q->py[i].version != v)
		i++;
	if (i == q->n_py) {
		if (q->n_py == FRAME_QUALITY_PY_VERSIONS)
			return; /* more versions than any machine runs: not told */
		q->py[q->n_py++].version = v;
	}
	q->py[i].samples++;
	q->py[i].named += named;
}

int frame_quality_count(struct frame_quality *q, const struct model *m,
			const struct profile_tables *t)
{
	uint16_t *runtimes, *langs;
	uint8_t *memo;

	memset(q, 0, sizeof(*q));
	memo = outermost_user_is_root(t);
	runtimes = stack_bits(t, frame_runtime_bit);
	langs = stack_bits(t, pt_frame_lang_bits);
	if (!memo || !runtimes || !langs) {
		free(memo);
		free(runtimes);
		free(langs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct thread *th = &m->threads.data[i];
		uint32_t py_version = th->process < m->processes.len
					      ? m->processes.data[th->process].python_version
					      : 0;

		for (size_t k = 0; k < th->samples.len; k++) {
			const struct thread_sample *s = &th->samples.data[k];
			uint32_t stack = profile_stack_of(t, s->stack);
			enum code_runtime rt;
			uint8_t root;

			if (s->kind != SAMPLE_ON_CPU || stack == NO_INDEX)
				continue;
			frame_lang_count(&q->lang, langs[stack], 1);
			if (py_version && ((runtimes[stack] & (1u << CODE_RUNTIME_PYTHON)) ||
					   (langs[stack] & (1u << (2 * FRAME_LANG_PYTHON)))))
				py_version_count(q, py_version,
						 langs[stack] & (2u << (2 * FRAME_LANG_PYTHON)));
			root = memo[stack];
			if (root == ROOT_NO_USER)
				continue;
			rt = runtime_of(runtimes[stack]);
			q->user_stacks++;
			q->runtime_stacks[rt]++;
			/* The CFI's own word that nothing called this frame counts as a root too.
			 */
			if (root == ROOT_YES || s->ustack_end == USTACK_END_ROOT) {
				q->reached_root++;
				q->runtime_reached_root[rt]++;
			} else
				q->stopped[s->ustack_end < FRAME_QUALITY_REASONS
						   ? s->ustack_end
						   : USTACK_END_UNKNOWN]++;
		}
	}
	free(memo);
	free(runtimes);
	free(langs);
	return 0;
}
