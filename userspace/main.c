// SPDX-License-Identifier: BSD-2-Clause
/* bpfprof entry point: parse the command line, then record or run continuously. */
#include <stdlib.h>

#include "cli/continuous.h"
#include "cli/options.h"
#include "cli/record.h"

int main(int argc, char **argv)
{
	struct options opts;
	int ret = options_parse(argc, argv, &opts);

	if (ret == 0)
		ret = opts.mode == MODE_CONTINUOUS ? continuous_main(&opts) : record_main(&opts);
	else if (ret < 0)
		ret = 0;
	options_free(&opts);
	return ret;
}
