// SPDX-License-Identifier: BSD-2-Clause
/* The shared command-line plumbing of `bpfprof view` and `bpfprof report`. */
#include "file_command.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../util/log.h"

error_t file_command_key(struct file_command *fc, int key, char *arg)
{
	char prog[32];

	switch (key) {
	case FILE_COMMAND_OPT_HELP:
		snprintf(prog, sizeof(prog), "bpfprof %s", fc->name);
		argp_help(fc->argp, stdout, ARGP_HELP_STD_HELP & ~ARGP_HELP_EXIT_OK, prog);
		fc->done = true;
		return 0;
	case ARGP_KEY_ARG:
		if (fc->file) {
			log_error("%s takes one profile, got '%s' and '%s'", fc->name, fc->file,
				  arg);
			fc->reported = true;
			return EINVAL;
		}
		fc->file = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int file_command_parse(struct file_command *fc, int argc, char **argv, void *input,
		       const char *example)
{
	int arg_index = 0;

	if (argp_parse(fc->argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_EXIT | ARGP_NO_HELP, &arg_index,
		       input)) {
		if (!fc->reported)
			log_error("invalid arguments; see bpfprof %s --help", fc->name);
		return 2;
	}
	if (fc->done)
		return -1;
	if (!fc->file) {
		log_error("no profile given; name its file, e.g. bpfprof %s %s", fc->name, example);
		return 2;
	}
	return 0;
}
