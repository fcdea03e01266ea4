// SPDX-License-Identifier: BSD-2-Clause
/*
 * Python frames named from a live interpreter of every installed version,
 * with no BPF: python_names_target.py, run by each, prints where the code
 * objects of a method, a nested function and (3.x) functions with
 * non-ASCII names are, with their frames' f_lasti and line; bpfprof's
 * reader (lang/python_procs.c, process_vm_readv through python_reader)
 * then reads them from the waiting process, as the recording does, and
 * must say the name as that version's users read it (the qualified name
 * from 3.11, the function's own before), the file and the line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lang/python_procs.h"
#include "python_interpreters.h"
#include "test.h"

#ifndef TARGET_SCRIPT
#define TARGET_SCRIPT "python_names_target.py"
#endif

struct child {
	pid_t pid;
	FILE *out; /* its stdout */
	int in;	   /* its stdin: closing it ends it */
};

static bool start(const char *path, struct child *c)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return false;
	c->pid = fork();
	if (c->pid < 0)
		return false;
	if (!c->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		setenv("PYTHONIOENCODING", "utf-8", 1);
		execl(path, path, TARGET_SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	c->out = fdopen(from[0], "r");
	return c->out != NULL;
}

static void stop(struct child *c)
{
	int status;

	close(c->in);
	fclose(c->out);
	waitpid(c->pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The frame's instruction word as the capture sends it (bpfprof_abi.h), for f_lasti in bytes. */
static uint64_t instr_word(const struct python_code_layout *l, uint64_t code, long lasti)
{
	switch (l->instr_kind) {
	case PY_INSTR_LASTI_BYTES:
		return (uint64_t)(uint32_t)lasti << 1;
	case PY_INSTR_LASTI_UNITS: /* 3.10's frame counts code units; Python shows bytes */
		return (uint64_t)(uint32_t)(lasti / 2) << 1;
	default: /* 3.11+: the instruction's address; bit 0 the entry flag */
		return (code + l->co_code_adaptive + (uint64_t)lasti) | 1;
	}
}

static void check_interpreter(const char *version, const char *path, void *ctx)
{
	struct python_procs *p = python_procs_new();
	struct python_info info = { 0 };
	struct child c;
	char *line = NULL, name[256], cwd[4096];
	size_t cap = 0, named = 0;
	unsigned long long code_type = 0;
	unsigned hex = 0;

	(void)ctx;
	CHECK(p && getcwd(cwd, sizeof(cwd)) && start(path, &c));
	if (!p || !c.out)
		return;
	while (getline(&line, &cap, c.out) > 0 && line[0] != 'E') {
		unsigned long long code;
		long lasti;
		int lineno, first;
		struct python_location loc;
		const char *want;

		if (sscanf(line, "P %u %llu", &hex, &code_type) == 2) {
			info.version_hex = hex;
			info.code_type = code_type;
			info.code = python_code_layout_for(hex);
			CHECK(info.code != NULL);
			if (!info.code)
				break;
			CHECK_EQ_INT(python_procs_add(p, (uint32_t)c.pid, getuid(), &info, 0, cwd),
				     0);
			continue;
		}
		if (!info.code || sscanf(line, "C %llu %ld %d %d %255[^\n]", &code, &lasti, &lineno,
					 &first, name) != 5)
			continue;
		/* Before 3.11 no qualified name: the function's own. */
		want = hex >= 0x030b0000 || !strrchr(name, '.') ? name : strrchr(name, '.') + 1;
		CHECK_EQ_INT(python_procs_resolve(p, (uint32_t)c.pid, code,
						  instr_word(info.code, code, lasti), &loc),
			     0);
		CHECK_EQ_STR(loc.qualname, want);
		CHECK(strstr(loc.filename, "python_names_target.py") != NULL);
		CHECK_EQ_INT(loc.line, lineno);
		CHECK_EQ_INT(loc.first_line, first);
		/* A frame not started yet (f_lasti -1 before 3.11): at its first line. */
		if (info.code->instr_kind != PY_INSTR_POINTER) {
			CHECK_EQ_INT(python_procs_resolve(p, (uint32_t)c.pid, code,
							  (uint64_t)0xffffffffu << 1, &loc),
				     0);
			CHECK_EQ_INT(loc.line, first);
		}
		named++;
	}
	printf("  Python %u.%u: %zu frames named\n", hex >> 24, (hex >> 16) & 0xff, named);
	/* The method and the nested function, and on 3.x the two non-ASCII names. */
	CHECK(named >= (hex >= 0x03000000 ? 4u : 2u));
	python_procs_free(p);
	stop(&c);
	free(line);
	(void)version;
}

static void every_version_is_named(void)
{
	CHECK(python_each_interpreter(check_interpreter, NULL) > 0);
}

int main(void)
{
	RUN(every_version_is_named);
	return test_summary();
}
