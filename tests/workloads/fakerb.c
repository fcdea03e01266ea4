/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fakerb: a program that claims to be Ruby 3.1 through its library
 * (fakerb_lib.c, libfakeruby.so beside it) and spins in its "VM" for
 * SECONDS seconds. Prints its pid first. For hostile_ruby.sh, run by an
 * unprivileged user.
 *
 * Usage: fakerb SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void fakerb_setup(void);
void rb_vm_exec(long n);

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	struct timespec t0, t;

	fakerb_setup();
	printf("%d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rb_vm_exec(10000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}
