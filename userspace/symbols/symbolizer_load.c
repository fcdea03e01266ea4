// SPDX-License-Identifier: BSD-2-Clause
/*
 * Loading an object's symbol table and DWARF, at the first address resolved
 * in it: from the file itself, its separate debug file (found inside the
 * root of a process that maps it, under debug_file.h's rules, and kept open
 * as the fd those rules were checked on), a debuginfod server, or its
 * MiniDebugInfo.
 */
#include "symbolizer_internal.h"

#include "../lang/code_runtime.h"
#include "../lang/go_lines.h"
#include "../lang/go_pclntab.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/safe_open.h"
#include "debug_file.h"
#include "debuginfo_server.h"
#include "dwarf.h"
#include "dwarf_image.h"
#include "elf_symtab.h"
#include "frame_objects.h"
#include "minidebuginfo.h"
#include "vdso.h"
#include "../util/elf_open.h"

/* The debug file of `elf` from a debuginfod server, by its build-id; an fd or a negative errno. */
static int fetch_debug_file(struct symbolizer *s, Elf *elf, char *found, size_t found_size)
{
	const unsigned char *id;
	char hex[2 * 64 + 1];
	ssize_t n;

	if (!s->debuginfod)
		return -ENOENT;
	n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (n <= 0 || n > 64)
		return -ENOENT;
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return debuginfo_server_fetch(s->debuginfod, hex, found, found_size);
}

/*
 * Symbols of the file at `fd`, and where its DWARF is. A stripped file takes
 * symbols and DWARF from its separate debug file, found locally (build-id,
 * debug link) or on a debuginfod server, whose path is kept so that DWARF
 * can be read later, only if an address in it is resolved; without one,
 * from its MiniDebugInfo (symbols only) when it has some.
 */
/*
 * The root the process that maps `o` resolves paths in (an O_PATH fd the
 * caller closes): debug files are looked for where it would look for them.
 * -1 when none of its processes can be reached: then our own root, where
 * the build-id or CRC still has to match.
 */
static int object_root(struct symbolizer *s, const struct object *o)
{
	for (unsigned i = 0; i < o->ncandidates; i++) {
		int root = open_proc_root(s->proc_root, o->candidates[i].pid);

		if (root >= 0)
			return root;
	}
	return -1;
}

/* Remember the debug file `fd` of `o`, where its DWARF is: the fd itself, while the bound allows.
 */
static int keep_debug_file(struct symbolizer *s, struct object *o, int *fd, const char *path,
			   bool from_server)
{
	struct stat st;

	if (fstat(*fd, &st))
		return -errno;
	o->debug_path = strdup(path);
	if (!o->debug_path)
		return -ENOMEM;
	o->debug_id = file_id_of(&st);
	o->debug_from_server = from_server;
	if (s->kept_files < s->max_kept_files) {
		o->debug_fd = *fd;
		*fd = -1;
		s->kept_files++;
	}
	return 0;
}

/* Open `path` in `root` (-1: ours) if it is still the file `o`'s debug file was when checked. */
static int reopen_checked(int root, const char *path, const struct object *o)
{
	int fd = root >= 0 ? open_regular_at_root(root, path, 0) : open_regular(path, 0);
	struct file_id id;
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (id = file_id_of(&st), !file_id_same(&id, &o->debug_id))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * The debug file of `o` again, past the bound on kept files: by its path,
 * in the process's root or ours (where debug_file_find() may have found
 * it), and only if it is still the file that was checked.
 */
static int reopen_debug_file(struct symbolizer *s, const struct object *o)
{
	int root = o->debug_from_server ? -1 : object_root(s, o);
	int fd = root >= 0 ? reopen_checked(root, o->debug_path, o) : -ENOENT;

	if (root >= 0)
		close(root);
	return fd >= 0 ? fd : reopen_checked(-1, o->debug_path, o);
}

static int load_elf_fd(struct symbolizer *s, struct object *o, int fd)
{
	struct debug_file_rules rules = { .root = -1, .crcs = &s->crcs };
	bool from_server = false;
	char found[PATH_MAX];
	Elf *elf, *debug = NULL;
	int debug_fd = -ENOENT;
	void *mini = NULL;
	size_t mini_size;
	struct stat st;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBBAD;
	if (fstat(fd, &st))
		return -errno;
	rules.binary_bytes = (uint64_t)st.st_size;
	rules.binary_uid = st.st_uid;
	elf = elf_open_fd(fd);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	o->dwarf_in_file = dwarf_info_present(elf);
	if (!o->dwarf_in_file || !elf_has_symtab(elf)) {
		rules.root = object_root(s, o);
		debug_fd =
			debug_file_find(elf, o->path, s->debug_root, &rules, found, sizeof(found));
		if (rules.root >= 0)
			close(rules.root);
		if (debug_fd < 0) {
			debug_fd = fetch_debug_file(s, elf, found, sizeof(found));
			from_server = debug_fd >= 0;
		}
		if (debug_fd >= 0)
			debug = elf_open_fd(debug_fd);
		else if (!elf_has_symtab(elf) && !minidebuginfo_read(elf, &mini, &mini_size))
			debug = elf_memory(mini, mini_size);
	}
	err = elf_symtab_load_elf(&o->symtab, elf, debug);
	if (!err && !o->dwarf_in_file && debug_fd >= 0 && debug && dwarf_info_present(debug))
		err = keep_debug_file(s, o, &debug_fd, found, from_server);
	/* Go without DWARF: its own table has every function's files and lines. */
	if (!err && !o->dwarf_in_file && !o->debug_path && o->symtab.runtime == CODE_RUNTIME_GO) {
		o->go = calloc(1, sizeof(*o->go));
		if (o->go && go_pclntab_open(elf, o->go)) {
			free(o->go);
			o->go = NULL;
		}
		/* Without it, no lines: walking the tables per address is what it bounds. */
		if (o->go && !(o->go_lines = go_lines_new())) {
			go_pclntab_close(o->go);
			free(o->go);
			o->go = NULL;
		}
	}
out:
	if (debug)
		elf_end(debug);
	free(mini);
	if (debug_fd >= 0)
		close(debug_fd);
	elf_end(elf);
	return err;
}

static int load_elf_object(struct symbolizer *s, struct object *o)
{
	int fd = o->fd >= 0 ? o->fd : sym_open_object_file(s, o);
	int err;

	if (fd < 0)
		return fd;
	err = load_elf_fd(s, o, fd);
	if (fd != o->fd)
		close(fd);
	return err;
}

/* Load the symbol table of `o` once; later calls return the cached outcome. */
bool sym_ensure_loaded(struct symbolizer *s, struct object *o)
{
	int err;

	if (o->state != LOAD_PENDING)
		return o->state == LOAD_OK;
	err = o->info.kind == OBJECT_VDSO ? vdso_load(&o->symtab) : load_elf_object(s, o);
	if (err) {
		log_debug("no symbols for %s: %s", o->path, strerror(-err));
		o->state = LOAD_FAILED;
		o->dwarf_state = LOAD_FAILED;
		sym_release_file(s, o);
		return false;
	}
	if (o->symtab.build_id[0])
		o->info.build_id = o->symtab.build_id;
	o->info.runtime = o->symtab.runtime;
	o->state = LOAD_OK;
	return true;
}

/*
 * What the DWARF of a file of `owner` may read into memory: what the live
 * objects left of the budget of all and of that owner, within one file's
 * cap. Counted when a file is opened, not as line tables grow: the images
 * and their decompressed sections are what a hostile file makes large.
 */
static uint64_t sym_dwarf_left(const struct symbolizer *s, uid_t owner)
{
	uint64_t all = 0, mine = 0, left;

	for (size_t i = OBJ_FIRST_FILE; i < s->objects.len; i++) {
		const struct object *o = s->objects.data[i];
		uint64_t bytes = o ? dwarf_info_read_bytes(o->dwarf) : 0;

		all += bytes;
		if (bytes && o->dwarf_owner == owner)
			mine += bytes;
	}
	left = all < s->dwarf_budget ? s->dwarf_budget - all : 0;
	if (mine >= s->dwarf_owner_budget)
		left = 0;
	else if (left > s->dwarf_owner_budget - mine)
		left = s->dwarf_owner_budget - mine;
	return left < DWARF_IMAGE_MAX_BYTES ? left : DWARF_IMAGE_MAX_BYTES;
}

/* Read the DWARF of `o` once, after its symbols; false when it has none. */
bool sym_ensure_dwarf(struct symbolizer *s, struct object *o)
{
	int fd = -ENOENT, err = -ENOENT;
	uint64_t cap = DWARF_IMAGE_MAX_BYTES;
	struct stat st;

	if (o->dwarf_state != LOAD_PENDING)
		return o->dwarf_state == LOAD_OK;
	if (!sym_ensure_loaded(s, o))
		return false;
	if (o->dwarf_in_file)
		fd = o->fd >= 0 ? o->fd : sym_open_object_file(s, o);
	else if (o->debug_fd >= 0)
		fd = o->debug_fd; /* the file its checks were made on */
	else if (o->debug_path)
		fd = reopen_debug_file(s, o);
	if (fd >= 0 && fstat(fd, &st) == 0) {
		if (!s->owners && (s->owners = calloc(1, sizeof(*s->owners))))
			uid_owners_read(s->owners, NULL);
		o->dwarf_owner = uid_owner_of(s->owners, st.st_uid);
		cap = sym_dwarf_left(s, o->dwarf_owner);
		err = dwarf_info_open_capped(&o->dwarf, fd, s->debug_root, cap);
	} else if (fd >= 0) {
		err = -errno;
	}
	if (fd >= 0 && fd != o->fd && fd != o->debug_fd)
		close(fd);
	if (err == -EDQUOT)
		log_debug("no DWARF for %s: more debug sections to read than the %llu MiB left"
			  " of the DWARF budget of uid %u's files or of all (%llu MiB);"
			  " its symbols name its functions, without lines, until room is freed",
			  o->path, (unsigned long long)(cap >> 20), (unsigned)o->dwarf_owner,
			  (unsigned long long)(s->dwarf_budget >> 20));
	else if (err == -EFBIG)
		log_debug("no DWARF for %s: more than %llu MiB of debug sections to read (or a file"
			  " over %llu MiB, or too many sections), whatever the budget;"
			  " its symbols name its functions, without lines",
			  o->path, DWARF_IMAGE_MAX_BYTES >> 20, ELF_OPEN_READ_MAX_BYTES >> 20);
	else if (err && (o->dwarf_in_file || o->debug_path))
		log_debug("no DWARF for %s: %s", o->path, strerror(-err));
	o->dwarf_state = err ? LOAD_FAILED : LOAD_OK;
	/* Only a refusal for the budget's room is tried again when a sweep frees some. */
	o->dwarf_over_budget = err == -EDQUOT;
	/* Symbols and DWARF are in memory now: the file is not needed any more. */
	sym_release_file(s, o);
	return !err;
}
