/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The code ranges a runtime module gives BPF (struct rt_proc, at most
 * RT_MAX_RANGES): a JIT's code lives in anonymous executable mappings,
 * often many of them (V8 commits its code space page run by page run, the
 * permissions of its pages changing as it writes them). They are merged
 * here into a few ranges, each gap filled the smallest first, so that a
 * range check in BPF covers all of them; what a filled gap holds (no
 * code, or another file's) only costs a record whose words the module
 * then finds name nothing.
 */
#ifndef BPFPROF_LANG_RT_RANGES_H
#define BPFPROF_LANG_RT_RANGES_H

#include "../../bpf/bpfprof_abi.h"
#include "../symbols/proc_maps.h"

/*
 * The anonymous executable mappings of `maps` (sorted by start, as /proc
 * writes them) as at most `max` (<= RT_MAX_RANGES) ranges into out[],
 * sorted; their number. Mappings out of order or empty are skipped.
 */
int rt_anon_exec_ranges(const map_entries_t *maps, struct rt_range *out, int max);

/* Merges the sorted, disjoint ranges out[0..n) until at most max remain; their number. */
int rt_ranges_merge(struct rt_range *r, int n, int max);

#endif
