/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command line of the commands that read one profile (view, report):
 * their own argp options, plus the plumbing they share here: the FILE
 * argument, --help, and one one-line error per bad command line.
 */
#ifndef BPFPROF_REPORT_FILE_COMMAND_H
#define BPFPROF_REPORT_FILE_COMMAND_H

#include <argp.h>
#include <stdbool.h>

/* The key of each file command's --help option. */
#define FILE_COMMAND_OPT_HELP 0x7ffe

struct file_command {
	const char *name; /* "view", "report" */
	const struct argp *argp;
	const char *file;
	bool done;     /* --help was given: exit 0 */
	bool reported; /* an option's one-line error is out */
};

/* From a command's parser: --help and FILE; ARGP_ERR_UNKNOWN for anything else. */
error_t file_command_key(struct file_command *fc, int key, char *arg);

/*
 * Parse argv (argv[0] is the command's name) into `input`, whose parser
 * hands unknown keys to file_command_key(fc, ...). 0: go on with fc->file;
 * -1: --help was printed; 2: a bad command line, its error printed
 * (`example` names a file to give).
 */
int file_command_parse(struct file_command *fc, int argc, char **argv, void *input,
		       const char *example);

#endif
