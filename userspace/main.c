// SPDX-License-Identifier: BSD-2-Clause
/* bpfprof entry point: parse the command line, then record, run continuously, view or report. */
#include <stdlib.h>
#include <string.h>

#include "cli/continuous.h"
#include "cli/options.h"
#include "cli/record.h"
#include "report/report.h"
#include "view/view.h"

int main(int argc, char **argv)
{
	struct options opts;
	int ret;

	/* view and report read a profile: none of the recording options apply. */
	if (argc > 1 && !strcmp(argv[1], "view"))
		return view_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	ret = options_parse(argc, argv, &opts);

	if (ret == 0)
		ret = opts.mode == MODE_CONTINUOUS ? continuous_main(&opts) : record_main(&opts);
	else if (ret < 0)
		ret = 0;
	options_free(&opts);
	return ret;
}
