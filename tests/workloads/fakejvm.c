// SPDX-License-Identifier: BSD-2-Clause
/*
 * fakejvm LIBDIR SECONDS [ANY...]: a process that claims to be a JVM, as any
 * user's may. It loads LIBDIR/libjvm.so (fakejvm_lib.c, whose tables
 * describe this process's code page as a JDK 17 code cache), writes 256
 * small functions into a page of anonymous memory that it makes
 * executable, and spins through them for SECONDS of CPU time, so that its
 * samples land at hundreds of addresses of "compiled code". Prints its pid
 * first, "fakejvm: calls N" at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CODE_SIZE  (2u << 20)
#define BLOCK	   4096u
#define BLOCK_CODE 512u
#define FUNCTIONS  256u

typedef uint64_t (*count_down_fn)(uint64_t);

/* uint64_t count_down(uint64_t n), n > 0: loops n times, returns 0. */
static const unsigned char count_down_code[] = {
	0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	0x48, 0xff, 0xc8, /* 1: dec %rax */
	0x75, 0xfb,	  /* jnz 1b */
	0xc3,		  /* ret */
};

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void (*setup)(unsigned char *, size_t, unsigned char *);
	unsigned char *code, *segmap;
	uint64_t calls = 0, left = 0;
	char path[4096];
	double end;
	void *lib;

	if (argc < 3) {
		fprintf(stderr, "usage: fakejvm LIBDIR SECONDS\n");
		return 2;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "fakejvm: no machine code for this architecture\n");
	return 2;
#else
	snprintf(path, sizeof(path), "%s/libjvm.so", argv[1]);
	lib = dlopen(path, RTLD_NOW);
	setup = lib ? (void (*)(unsigned char *, size_t, unsigned char *))dlsym(lib,
										"fakejvm_setup")
		    : NULL;
	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	segmap = calloc(1, CODE_SIZE >> 7);
	if (!setup || code == MAP_FAILED || !segmap) {
		fprintf(stderr, "fakejvm: %s\n", lib ? "no code page" : dlerror());
		return 1;
	}
	setup(code, CODE_SIZE, segmap);
	for (unsigned f = 0; f < FUNCTIONS; f++)
		memcpy(code + f * BLOCK + BLOCK_CODE, count_down_code, sizeof(count_down_code));
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC)) {
		perror("fakejvm: mprotect");
		return 1;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	end = cpu_seconds() + atof(argv[2]);
	while (cpu_seconds() < end) {
		count_down_fn fn =
			(count_down_fn)(uintptr_t)(code + (calls % FUNCTIONS) * BLOCK + BLOCK_CODE);

		left |= fn(20000);
		calls++;
	}
	printf("fakejvm: calls %llu left %llu\n", (unsigned long long)calls,
	       (unsigned long long)left);
	return 0;
#endif
}
