/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fakepy: a program that claims to be CPython 3.11 (it exports _PyRuntime,
 * Py_Version, PyCode_Type, Py_Initialize and _PyEval_EvalFrameDefault) and
 * hands the profiler hostile memory: its thread's state (under the pthread
 * key _PyRuntime's autoTSSkey names, and first in its interpreter's
 * thread list, whose next links to itself) is its own thread's, its
 * frames link to themselves for ever, the code object's name is 2^40
 * characters long, its line table as long, and its file is /etc/shadow.
 * For hostile.sh python_fake, run by an unprivileged user.
 *
 * With a mode, the frames are well formed but costly (issue 37):
 *   deep   128 frames of 128 code objects whose line tables are 256 KiB
 *          (one table in our memory), each frame at the table's last unit;
 *   many   8192 such code objects, 128 of them in the frames at a time,
 *          the next 128 after each turn of the loop;
 *   fuse   a frame whose code object is at the start of FILE, mapped and
 *          never touched: a file on a FUSE mount whose server never answers
 *          (fusehold), so reading it waits; its caller's, fuse_caller, is
 *          in our memory. Every mode prints "ready" once laid out.
 *   cycle  (issue 40) no pthread key to find its thread's state by (a key
 *          past the first 32), and a thread list of two states that link
 *          to each other, neither its thread's: the walk gives up at its
 *          bound and the process shows no Python frames.
 *
 * Usage: fakepy SECONDS [deep|many|fuse FILE|cycle]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const unsigned long Py_Version = 0x030b02f0;
char _PyRuntime[1024];
char PyCode_Type[256];
static char tstate[512], cframe[64], frame[128], code[256], name[128], file[128], table[64];
static char interp[64], decoys[2][512];

void Py_Initialize(void)
{
}
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

#define N_FRAMES    128
#define N_CODES	    8192
#define CODE_SIZE   256
#define TABLE_BYTES (256 * 1024)
#define TABLE_UNITS (TABLE_BYTES / 3)

static char frames[N_FRAMES][128], codes[N_CODES][CODE_SIZE], table_obj[32 + TABLE_BYTES];
static char qualname[96], filename[96];

/* A compact ASCII str object holding `s`. */
static void put_str(char *obj, const char *s)
{
	uint64_t len = strlen(s);
	uint32_t state = (1u << 2) | (1u << 5) | (1u << 6);

	memcpy(obj + 16, &len, 8);
	memcpy(obj + 32, &state, 4);
	memcpy(obj + 48, s, len);
}

/* Code objects well formed, each with the same 256 KiB table: one unit an entry, +1 line each. */
static void make_codes(void)
{
	uint64_t len = TABLE_BYTES;
	int32_t first = 1;

	put_str(qualname, "deep_frame");
	put_str(filename, "/nonexistent/deep.py");
	memcpy(table_obj + 16, &len, 8);
	for (int i = 0; i + 3 <= TABLE_BYTES; i += 3)
		table_obj[32 + i] = (char)(0x80 | (11 << 3));
	for (int k = 0; k < N_CODES; k++) {
		put(codes[k], 8, PyCode_Type);
		memcpy(codes[k] + 72, &first, 4);
		put(codes[k], 128, qualname);
		put(codes[k], 112, filename);
		put(codes[k], 136, table_obj);
	}
}

/* The frames name code objects first .. first + N_FRAMES - 1, each at its table's last unit. */
static void point_frames(int first)
{
	for (int j = 0; j < N_FRAMES; j++) {
		char *code = codes[(first + j) % N_CODES];

		put(frames[j], 32, code);
		put(frames[j], 56, code + 184 + 2 * (TABLE_UNITS - 1));
	}
}

/* deep, many: N_FRAMES frames, innermost first, the outermost the loop's entry. */
static int costly(long secs, int many)
{
	make_codes();
	for (int j = 0; j < N_FRAMES; j++)
		put(frames[j], 48, j + 1 < N_FRAMES ? frames[j + 1] : NULL);
	frames[N_FRAMES - 1][68] = 1; /* is_entry */
	point_frames(0);
	put(cframe, 8, frames[0]);
	for (long s = 0, turn = 0; s < secs * 100; s++) {
		_PyEval_EvalFrameDefault(2000000);
		if (many)
			point_frames((int)(++turn * N_FRAMES % N_CODES));
	}
	return 0;
}

/* fuse: the code object is in FILE's first page, mapped, never read by us; the caller's is ours. */
static int fuse_frame(long secs, const char *path)
{
	int fd = open(path, O_RDONLY);
	char *map = fd < 0 ? MAP_FAILED : mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
	int32_t first = 1;

	if (map == MAP_FAILED) {
		perror(path);
		return 1;
	}
	put_str(qualname, "fuse_caller");
	put_str(filename, "/nonexistent/fuse.py");
	put(codes[0], 8, PyCode_Type);
	memcpy(codes[0] + 72, &first, 4);
	put(codes[0], 128, qualname);
	put(codes[0], 112, filename);
	put(frames[0], 32, codes[0]);
	put(frames[0], 48, NULL);
	put(frames[0], 56, codes[0] + 184);
	frames[0][68] = 1; /* is_entry */
	put(frame, 32, map);
	put(frame, 48, frames[0]);
	put(frame, 56, map + 184);
	put(cframe, 8, frame);
	printf("ready\n");
	fflush(stdout);
	for (long s = 0; s < secs * 10; s++)
		_PyEval_EvalFrameDefault(20000000);
	return 0;
}

int main(int argc, char **argv)
{
	long secs = argc > 1 ? atol(argv[1]) : 5;
	uint64_t huge = 1ull << 40, id = (uint64_t)pthread_self(), len = 11;
	uint64_t state = (1u << 2) | (1u << 5) | (1u << 6); /* compact ASCII */

	pthread_key_t key;

	put(_PyRuntime, 576, tstate);
	/* 3.11's roots: interpreters.head, autoTSSkey._key; threads.head, next. */
	put(_PyRuntime, 40, interp);
	put(interp, 16, tstate);
	put(tstate, 8, tstate);
	if (pthread_key_create(&key, NULL) || pthread_setspecific(key, tstate))
		return 1;
	memcpy(_PyRuntime + 596, &key, sizeof(key));
	memcpy(tstate + 152, &id, 8);
	put(tstate, 56, cframe);
	if (argc > 2 && !strcmp(argv[2], "cycle")) {
		uint32_t far_key = 1000;

		memcpy(_PyRuntime + 596, &far_key, sizeof(far_key));
		put(interp, 16, decoys[0]);
		put(decoys[0], 8, decoys[1]);
		put(decoys[1], 8, decoys[0]);
	}
	if (argc > 2 && (!strcmp(argv[2], "deep") || !strcmp(argv[2], "many")))
		return costly(secs, !strcmp(argv[2], "many"));
	if (argc > 3 && !strcmp(argv[2], "fuse"))
		return fuse_frame(secs, argv[3]);
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
	printf("ready\n");
	fflush(stdout);
	for (long s = 0; s < secs * 10; s++)
		_PyEval_EvalFrameDefault(20000000);
	return 0;
}
