/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The symbolication API's /source/v1 for `bpfprof view`: the Firefox
 * Profiler's source view asks a local symbol server for a file's text
 * ({"file": PATH, ...} -> {"source": TEXT, ...}). Only the source files the
 * served profile names are answered (its shared.sources, read on the first
 * request), and of those only what any user of this machine could read, or
 * the user who ran sudo: the link's secret guards the door, this guards
 * what is behind it when a hostile binary's debug info names /etc/shadow.
 */
#ifndef BPFPROF_CLI_SOURCE_SERVER_H
#define BPFPROF_CLI_SOURCE_SERVER_H

#include <stdbool.h>
#include <stddef.h>

/* Source files larger than this are refused: the source view shows code, not data. */
#define SOURCE_MAX_BYTES (16u << 20)

struct source_files {
	char *profile; /* the served profile, read on the first request */
	bool loaded;
	int load_err; /* why the profile could not be read (-errno), once loaded */
	char **paths; /* sorted */
	size_t n;
};

/* For the profile file `profile`; nothing is read yet. 0 or -ENOMEM. */
int source_files_init(struct source_files *s, const char *profile);
void source_files_free(struct source_files *s);

/* Whether the profile names `path` as a source file (loads it on first use). */
bool source_files_named(struct source_files *s, const char *path);

/*
 * Answer one /source/v1 request (its JSON body): the answer's JSON, the file's
 * text or {"error": why}, is written to `fd`. 0, or -errno when nothing could
 * be written.
 */
int source_answer(struct source_files *s, const char *body, size_t len, int fd);

#endif
