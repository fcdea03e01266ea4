/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fakephp: a program that claims to be PHP 8.2 (it exports
 * executor_globals, execute_ex and zend_vm_stack_init, and carries the
 * "X-Powered-By: PHP/" text) and hands the profiler hostile memory: its
 * one frame is its own caller for ever, its function's name is 2^40 bytes
 * long, its class's name is the class itself, its file is /etc/shadow and
 * its opline points nowhere. For hostile.sh php_fake, run by an
 * unprivileged user: the walk stops at its bound, names are cut and their
 * bytes escaped, and the recording ends on time.
 *
 * Usage: fakephp SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((used)) const char powered_by[] = "X-Powered-By: PHP/8.2.0";
char executor_globals[1800];
static char ex[80], func[256], name[64], file[64], cls[64];
volatile unsigned long sink;

__attribute__((noinline)) void zend_vm_stack_init(void)
{
	sink++;
}

__attribute__((noinline)) void execute_ex(long n)
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
	long secs = argc > 1 ? atol(argv[1]) : 10;
	uint64_t huge = 1ull << 40;
	uint32_t line = 0x7fffffff, top = 1u << 17;

	/* zend_string: len at 16, bytes at 24; a newline and an escape among them. */
	memcpy(name + 16, &huge, 8);
	memset(name + 24, 'A', sizeof(name) - 24);
	memcpy(name + 30, "\n\x1b[2J", 5);
	memcpy(file + 16, &(uint64_t){ 11 }, 8);
	memcpy(file + 24, "/etc/shadow", 11);
	/* The class entry's name (at 8) is the class entry itself, read as a zend_string. */
	put(cls, 8, cls);
	memcpy(cls + 16, &huge, 8);
	/* A user function (type 2): name, scope, filename, line_start. */
	func[0] = 2;
	put(func, 8, name);
	put(func, 16, cls);
	put(func, 152, file);
	memcpy(func + 160, &line, 4);
	/* The frame: opline nowhere, its function, a loop's first, its own caller. */
	put(ex, 0, (void *)0x10);
	put(ex, 24, func);
	memcpy(ex + 40, &top, 4);
	put(ex, 48, ex);
	put(executor_globals, 488, ex);
	zend_vm_stack_init();
	printf("%d\n", getpid());
	fflush(stdout);
	for (long s = 0; s < secs * 100; s++)
		execute_ex(2000000);
	return 0;
}
