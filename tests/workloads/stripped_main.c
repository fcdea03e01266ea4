/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stripped_main SECONDS: burns SECONDS in libstripped.so's internal
 * function (tests/workloads/stripped_lib.c). Prints "stripped: truth pid P".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t stripped_run(double seconds);

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SECONDS\n", argv[0]);
		return 2;
	}
	printf("stripped: truth pid %d\n", (int)getpid());
	fflush(stdout);
	return stripped_run(atof(argv[1])) == 42;
}
