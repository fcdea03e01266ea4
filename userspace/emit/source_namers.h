/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whose processes named each source file of a profile. A source file's
 * name comes from what a process runs: a binary's debug info, a Python
 * code object's co_filename, both written by whoever wrote the program.
 * Another user's program can name any path, the viewer's ~/.ssh/id_rsa
 * among them, and `bpfprof view` shows a viewer the private files they own
 * only when their own processes named them (issue 37). The profile says
 * so in shared.sources.namedByUid: the uid when the samples that reach the
 * file are all of processes of that one uid, null when they are of several
 * uids, of a process whose uid is not known, or of no sample at all.
 */
#ifndef BPFPROF_EMIT_SOURCE_NAMERS_H
#define BPFPROF_EMIT_SOURCE_NAMERS_H

#include <stdint.h>

struct model;
struct profile_tables;

/* No one uid: several, or not known. */
#define SOURCE_NAMER_NONE UINT32_MAX

/*
 * Fill t->source_namers, one per source (after the stacks are mapped):
 * each sample's stack is walked up to where it met a stack of the same
 * uid already, so every stack is visited at most twice. 0 or -ENOMEM.
 */
int source_namers_build(struct profile_tables *t, const struct model *m);

#endif
