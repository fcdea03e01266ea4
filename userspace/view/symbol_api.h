/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The symbolication API of `bpfprof view` (the one samply and Firefox
 * serve), for the Firefox Profiler's source and assembly views:
 *
 *  - /source/v1: {"file": PATH, ...} -> {"source": TEXT, ...}, only for the
 *    source files the served profile names (its shared.sources);
 *  - /asm/v1: {"debugName", "debugId", "startAddress", "size", ...} ->
 *    {"instructions": [[offset, text], ...], ...}, only in the libraries the
 *    profile names (its libs), when the file on disk still has the build-id
 *    the profile recorded, disassembled with Capstone.
 *
 * Of those files only what any user of this machine could read along the
 * whole path, or what the viewing user (the one who ran sudo, as root)
 * owns along it when only their own processes named it (another user's
 * program can name the viewer's ~/.ssh/id_rsa as its source file), is
 * shown, never through a symlink (util/visible_open.h):
 * the link's secret guards the door, this guards what is behind it when a
 * hostile binary's debug info names /etc/shadow or the admin's SSH key.
 * The profile is read on the first request, from the descriptor view
 * checked.
 */
#ifndef BPFPROF_VIEW_SYMBOL_API_H
#define BPFPROF_VIEW_SYMBOL_API_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Source files larger than this are refused: the source view shows code, not data. */
#define SOURCE_MAX_BYTES (16u << 20)
/* The most code one /asm/v1 answer disassembles. */
#define ASM_MAX_BYTES	 (256u << 10)

struct symbol_api_lib {
	char *debug_name, *breakpad_id, *path, *arch;
};

struct symbol_api_source {
	char *path;
	/*
	 * The uid whose processes alone named it (shared.sources.namedByUid,
	 * emit/source_namers.h); VISIBLE_NO_VIEWER when several, unknown, or a
	 * profile without the column.
	 */
	uid_t named_by;
};

struct symbol_api {
	char *profile;	/* the served profile's name, for messages */
	int profile_fd; /* and the file, read on the first request */
	uid_t viewer;	/* who may also see what they own (VISIBLE_NO_VIEWER: nobody) */
	bool loaded;
	int load_err; /* why the profile could not be read (-errno), once loaded */
	struct symbol_api_source *sources; /* sorted by path */
	size_t n;
	struct symbol_api_lib *libs;
	size_t nr_libs;
};

/*
 * For the profile `profile`, open as `profile_fd` (duplicated: the caller
 * keeps its own), shown to `viewer` (the user who runs view, or who ran
 * sudo; VISIBLE_NO_VIEWER: only what every user may read); nothing is read
 * yet. 0 or -errno.
 */
int symbol_api_init(struct symbol_api *s, const char *profile, int profile_fd, uid_t viewer);
void symbol_api_free(struct symbol_api *s);

/*
 * Answer one request (its JSON body) to /source/v1 or /asm/v1: the answer's
 * JSON, or {"error": why}, is written to `fd`. 0, or -errno when nothing
 * could be written.
 */
int symbol_api_source(struct symbol_api *s, const char *body, size_t len, int fd);
int symbol_api_asm(struct symbol_api *s, const char *body, size_t len, int fd);

#endif
