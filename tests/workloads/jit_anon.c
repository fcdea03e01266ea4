// SPDX-License-Identifier: BSD-2-Clause
/*
 * jit_anon [SECONDS [ANY...]]: the smallest JIT. Writes a counting loop into
 * anonymous memory that it then makes executable (write xor execute, as
 * runtimes do), describes that code in /tmp/perf-PID.map as
 * "bpfprof_anon_jit" (PID being its pid as it sees it), and spins in it for
 * SECONDS of CPU time (default 1). Every few milliseconds it writes the
 * code again (writable, then executable), as a JIT that keeps compiling.
 *
 * Each time the page turns executable the kernel announces it in a perf
 * mmap record, as an anonymous mapping: the profiler must keep resolving the
 * code through the perf map even so. (node's code cache is announced so too,
 * but where V8 puts the hot code, and when, is up to V8.)
 *
 * Prints its pid first on stdout, and "jit_anon: calls N" at the end; waits
 * 0.3 s between the two before it spins. Arguments after SECONDS are
 * ignored (tests tag the process with one).
 *
 * With JIT_ANON_JITDUMP=PATH (a file named jit-N.dump) it also writes its code
 * there as a jitdump's CODE_LOAD named "bpfprof_jitdump_name", and maps the
 * file executable, as jitdump writers mark their process; with
 * JIT_ANON_JITDUMP_BROKEN=1 a record claiming 1 GiB comes before that load.
 *
 * With JIT_ANON_NO_PERF_MAP=1 it writes no perf map (one is there already).
 *
 * With JIT_ANON_CHROOT=DIR it first makes DIR its root, as any user may in a
 * user namespace of their own (no exec follows, so DIR needs no files): its
 * perf map is then DIR/tmp/perf-PID.map, whatever DIR/tmp leads to there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* uint64_t count_down(uint64_t n), n > 0: loops n times, returns 0. */
#if defined(__x86_64__)
static const unsigned char count_down_code[] = {
	0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	0x48, 0xff, 0xc8, /* 1: dec %rax */
	0x75, 0xfb,	  /* jnz 1b */
	0xc3,		  /* ret */
};
#elif defined(__aarch64__)
static const uint32_t count_down_code[] = {
	0xf1000400, /* 1: subs x0, x0, #1 */
	0x54ffffe1, /* b.ne 1b */
	0xd65f03c0, /* ret */
};
#endif

#define JIT_NAME	"bpfprof_anon_jit"
/* Where the code starts in its page: not at the mapping's start, so that a
 * profiler reading the address as a mapping offset would not hit it by luck. */
#define CODE_OFFSET	64
/* Iterations per call: a few hundred µs, so that the clock checks between
 * calls cost well under 1 %. */
#define CALL_ITERATIONS 1000000
/* CPU time between rewrites of the code: a record every few samples. */
#define EMIT_INTERVAL_S 0.005

typedef uint64_t (*count_down_fn)(uint64_t);

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A fresh page for code, writable for now; NULL on failure. */
static unsigned char *code_page(size_t page)
{
	unsigned char *p;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("jit_anon: mmap");
		return NULL;
	}
	return p;
}

/* (Re)write the code into its page and make the page executable only. */
static int emit_code(unsigned char *page_start, size_t page)
{
	unsigned char *at = page_start + CODE_OFFSET;

	if (mprotect(page_start, page, PROT_READ | PROT_WRITE)) {
		perror("jit_anon: mprotect rw");
		return -1;
	}
	memcpy(at, count_down_code, sizeof(count_down_code));
	__builtin___clear_cache((char *)at, (char *)at + sizeof(count_down_code));
	if (mprotect(page_start, page, PROT_READ | PROT_EXEC)) {
		perror("jit_anon: mprotect rx");
		return -1;
	}
	return 0;
}

/* The perf map line for the code, as runtimes write it: "START SIZE NAME", hex. */
static int write_perf_map(const void *code, size_t size)
{
	char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	/* /tmp is everyone's: never write through a link planted there. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		perror("jit_anon: fdopen");
		close(fd);
		return -1;
	}
	fprintf(f, "%lx %zx %s\n", (unsigned long)(uintptr_t)code, size, JIT_NAME);
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* perf's jitdump: a header, then CODE_LOAD records (tools/perf/util/jitdump.h). */
static int write_jitdump(const char *path, const void *code, size_t size, size_t page)
{
	static const char name[] = "bpfprof_jitdump_name";
	uint32_t header[10] = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid() };
	uint32_t head[4] = { 0, (uint32_t)(16 + 40 + sizeof(name) + size) };
	uint32_t broken[4] = { 0, 1u << 30 };
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)getpid() };
	uint64_t load[4] = { (uintptr_t)code, (uintptr_t)code, size, 1 };
	/* Opened, not created: the file is whoever made it's (the test's point). */
	int fd = open(path, O_RDWR | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	bool ok;

	if (fd < 0) {
		perror(path);
		return -1;
	}
	ok = write(fd, header, sizeof(header)) == sizeof(header);
	if (getenv("JIT_ANON_JITDUMP_BROKEN"))
		ok = ok && write(fd, broken, sizeof(broken)) == sizeof(broken);
	ok = ok && write(fd, head, sizeof(head)) == sizeof(head) &&
	     write(fd, ids, sizeof(ids)) == sizeof(ids) &&
	     write(fd, load, sizeof(load)) == sizeof(load) &&
	     write(fd, name, sizeof(name)) == sizeof(name) &&
	     write(fd, code, size) == (ssize_t)size;
	/* The mark: the file mapped executable, which the profiler finds in the maps. */
	ok = ok && mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) != MAP_FAILED;
	if (!ok)
		perror("jit_anon: jitdump");
	close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__) || defined(__aarch64__)
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, end, now, next_emit;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t calls = 0, emits = 0, left = 0;
	count_down_fn count_down;
	unsigned char *p;

	if (!(seconds > 0 && seconds <= 3600)) {
		fprintf(stderr, "usage: %s [SECONDS [ANY...]]\n", argv[0]);
		return 2;
	}
	if (getenv("JIT_ANON_CHROOT")) {
		const char *dir = getenv("JIT_ANON_CHROOT");

		if (unshare(CLONE_NEWUSER) || chroot(dir) || chdir("/")) {
			perror("jit_anon: a root of its own");
			return 1;
		}
	}
	p = code_page(page);
	if (!p || emit_code(p, page) ||
	    (!getenv("JIT_ANON_NO_PERF_MAP") &&
	     write_perf_map(p + CODE_OFFSET, sizeof(count_down_code))))
		return 1;
	if (getenv("JIT_ANON_JITDUMP") && write_jitdump(getenv("JIT_ANON_JITDUMP"), p + CODE_OFFSET,
							sizeof(count_down_code), page))
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	/*
	 * As in a runtime that has been up for a while, the code's mapping is
	 * old news when it runs: the profiler has had time to take in the
	 * mapping's record before the code's first sample.
	 */
	nanosleep(&(struct timespec){ .tv_nsec = 300 * 1000 * 1000 }, NULL);
	/* Through a function pointer: the only way to call generated code. */
	count_down = (count_down_fn)(uintptr_t)(p + CODE_OFFSET);
	now = cpu_seconds();
	end = now + seconds;
	next_emit = now + EMIT_INTERVAL_S;
	while (now < end) {
		left |= count_down(CALL_ITERATIONS);
		calls++;
		now = cpu_seconds();
		if (now >= next_emit) {
			if (emit_code(p, page))
				return 1;
			emits++;
			next_emit = now + EMIT_INTERVAL_S;
		}
	}
	printf("jit_anon: calls %llu emits %llu left %llu\n", (unsigned long long)calls,
	       (unsigned long long)emits, (unsigned long long)left);
	return 0;
#else
	(void)argc;
	fprintf(stderr, "%s: no machine code for this architecture\n", argv[0]);
	return 2;
#endif
}
