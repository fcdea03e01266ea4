// SPDX-License-Identifier: BSD-2-Clause
/* bpfprof entry point: parse the command line, then record. */
#include <stdlib.h>

#include "cli/options.h"
#include "cli/record.h"

int main(int argc, char **argv)
{
	struct options opts;
	int ret = options_parse(argc, argv, &opts);

	if (ret == 0)
		ret = record_main(&opts);
	else if (ret < 0)
		ret = 0;
	options_free(&opts);
	return ret;
}
