/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fakepy: a program that claims to be CPython 3.11 (it exports _PyRuntime,
 * Py_Version, PyCode_Type and _PyEval_EvalFrameDefault) and hands the
 * profiler hostile memory: the GIL holder's state is its own thread's, its
 * frames link to themselves for ever, the code object's name is 2^40
 * characters long, its line table as long, and its file is /etc/shadow.
 * For hostile.sh python_fake, run by an unprivileged user.
 *
 * Usage: fakepy SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const unsigned long Py_Version = 0x030b02f0;
char _PyRuntime[1024];
char PyCode_Type[256];
static char tstate[512], cframe[64], frame[128], code[256], name[128], file[128], table[64];
volatile unsigned long sink;

__attribute__((noinline)) void _PyEval_EvalFrameDefault(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

static void put(char *base, int off, const void *v)
{
	memcpy(base + off, &v, 8);
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 5;
	uint64_t huge = 1ull << 40, id = (uint64_t)pthread_self(), len = 11;
	uint64_t state = (1u << 2) | (1u << 5) | (1u << 6); /* compact ASCII */

	put(_PyRuntime, 576, tstate);
	memcpy(tstate + 152, &id, 8);
	put(tstate, 56, cframe);
	put(cframe, 8, frame);
	put(frame, 32, code);
	put(frame, 48, frame); /* a cycle: the walk must stop by itself */
	put(frame, 56, code + 184);
	put(code, 8, PyCode_Type);
	put(code, 128, name);
	put(code, 112, file);
	put(code, 136, table);
	memcpy(name + 16, &huge, 8); /* a name 2^40 characters long */
	memcpy(file + 16, &len, 8);
	memcpy(file + 32, &state, 4);
	memcpy(file + 48, "/etc/shadow", 11);
	memcpy(table + 16, &huge, 8); /* a line table as long */
	for (long s = 0; s < secs * 10; s++)
		_PyEval_EvalFrameDefault(20000000);
	return 0;
}
