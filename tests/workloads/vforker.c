/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vforker: a program that spawns as make, sh and gcc's driver do (issue
 * 38): for SECONDS, vfork and exec /bin/true, again and again, from
 * main -> vfork_loop -> vfork_one. Built as distributions build (-O2
 * -fomit-frame-pointer) against the system's glibc, whose __vfork pops its
 * return address into RDI before the syscall: the parent's samples in the
 * kernel (copying itself, waiting for the child's exec) are in __vfork, and
 * its stacks must go on from there to _start, not end in __vfork.
 *
 * Usage: vforker SECONDS
 * Prints "vforker: truth pid P" once running, then "vforker: N children".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) static int vfork_one(void)
{
	int status;
	pid_t pid = vfork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return 0;
}

__attribute__((noinline, noclone)) static long vfork_loop(double seconds)
{
	double end = now() + seconds;
	long n = 0;

	while (now() < end && !vfork_one())
		n++;
	return n;
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 2) {
		fprintf(stderr, "usage: vforker SECONDS\n");
		return 2;
	}
	printf("vforker: truth pid %d\n", (int)getpid());
	fflush(stdout);
	n = vfork_loop(atof(argv[1]));
	printf("vforker: %ld children\n", n);
	return n > 0 ? 0 : 1;
}
