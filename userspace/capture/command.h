/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `bpfprof -- cmd args`: the command is forked first and held before exec
 * until the BPF side knows its pid, so not one instruction of it is missed.
 */
#ifndef BPFPROF_COMMAND_H
#define BPFPROF_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct command {
	pid_t pid;
	int go_fd;  /* write end: a byte releases the child into exec */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
	bool exited;
	int status;
};

/* Fork the held child; 0 or -errno. */
int command_prepare(struct command *c, char **argv);
/* Let it exec; 0, or a negative errno after printing why the exec failed. */
int command_start(struct command *c, char **argv);
/* Non-blocking reap; true once the command has exited. */
bool command_poll_exit(struct command *c);
/* Kill a prepared child that will never start (setup failed). */
void command_abort(struct command *c);

#endif
