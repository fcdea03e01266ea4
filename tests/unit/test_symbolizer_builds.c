// SPDX-License-Identifier: BSD-2-Clause
/*
 * The per-profile time budgets of the symbolizer (CRC checks of debug
 * files; debuginfod fetches and Go line steps start again at the same
 * point) start again at each scheduled build (a snapshot, a record's
 * profile) and at an asked-for one (a scrape) that begins with no other in
 * flight, never at a scrape under a running build: in continuous mode a
 * scrape's build, which any local user may ask for, overlaps the
 * snapshot's, and refilled what the snapshot was spending at each scrape;
 * nor can scrapes back to back keep the next snapshot from its budget.
 */
#include <stdint.h>

#include "symbols/symbolizer.h"
#include "symbols/symbolizer_internal.h"
#include "test.h"

static void test_overlapping_builds_share_budget(void)
{
	struct symbolizer *s = symbolizer_new("/nonexistent-proc", "/nonexistent/kallsyms");
	uint64_t full;

	CHECK(s != NULL);
	if (!s)
		return;
	symbolizer_build_begin(s, true); /* the snapshot's */
	full = s->crcs.left_ns;
	CHECK(full > 0);
	s->crcs.left_ns = 0;		  /* the snapshot spent it all */
	symbolizer_build_begin(s, false); /* a scrape, meanwhile */
	CHECK_EQ_INT(s->crcs.left_ns, 0);
	symbolizer_build_end(s); /* the scrape */
	CHECK_EQ_INT(s->crcs.left_ns, 0);
	symbolizer_build_begin(s, false); /* another scrape: the snapshot still runs */
	CHECK_EQ_INT(s->crcs.left_ns, 0);
	symbolizer_build_end(s);
	symbolizer_build_end(s); /* the snapshot */
	/* A scrape alone: the whole budget again. */
	symbolizer_build_begin(s, false);
	CHECK_EQ_INT(s->crcs.left_ns, full);
	s->crcs.left_ns = 0;
	/* The next snapshot, under that scrape (scrapes back to back): its whole budget. */
	symbolizer_build_begin(s, true);
	CHECK_EQ_INT(s->crcs.left_ns, full);
	symbolizer_build_end(s);
	symbolizer_build_end(s);
	/* An unmatched end is no build: the count never wraps to "always in flight". */
	symbolizer_build_end(s);
	s->crcs.left_ns = 0;
	symbolizer_build_begin(s, false);
	CHECK_EQ_INT(s->crcs.left_ns, full);
	symbolizer_build_end(s);
	symbolizer_free(s);
}

int main(void)
{
	RUN(test_overlapping_builds_share_budget);
	return test_summary();
}
