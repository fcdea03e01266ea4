/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The symbolizer's insides, shared by its two files: symbolizer.c (objects:
 * registry, files, loading, lifetime) and symbolizer_resolve.c (turning an
 * address into names). Not an API.
 */
#ifndef BPFPROF_SYMBOLIZER_INTERNAL_H
#define BPFPROF_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/file_id.h"
#include "../util/hashmap.h"
#include "../util/strtab.h"
#include "../util/uid_owner.h"
#include "../util/vec.h"
#include "debug_file.h"
#include "elf_symtab.h"
#include "kallsyms.h"
#include "symbolizer.h"

struct dwarf_info;

/* Files kept open from registration to resolution, at most (see symbolizer_set_max_open_files). */
#define MAX_KEPT_FILES 1024

/* Processes remembered per object as ways to reach its file. */
#define MAX_CANDIDATES 4

#define NO_OBJECT UINT32_MAX

/* Per-symbol display name cache: 0 = not computed yet, else a strtab index + 1 or: */
#define DISPLAY_RAW UINT32_MAX /* the symbol's own name is the display name */

enum load_state {
	LOAD_PENDING,
	LOAD_OK,
	LOAD_FAILED,
};

/* A string table and the bytes its strings take, for the stats. */
struct name_table {
	struct strtab strs;
	size_t bytes;
};

/* A process mapping of the object, through which its file can be reopened. */
struct candidate {
	pid_t pid;
	uint64_t start, end;
};

struct go_pclntab;
struct go_lines;

struct object {
	struct object_info info;
	bool marked; /* kept by the next symbolizer_sweep */
	char *path;  /* owned; info.path and info.name point into it */
	dev_t dev;
	uint64_t inode;
	bool keyed_by_path;
	struct candidate candidates[MAX_CANDIDATES];
	unsigned ncandidates;
	int fd; /* the file, opened at registration; -1 when not kept */
	/*
	 * The file's identity, from its first open: (dev, inode) is reused
	 * once a file is deleted, so a later open, or a mapping with the same
	 * (dev, inode), of another identity is another file.
	 */
	struct file_id id;
	bool has_id;
	enum load_state state;
	struct elf_symtab symtab;
	uint32_t *display; /* per symbol of symtab, see DISPLAY_RAW; NULL until needed */
	/*
	 * DWARF: in the file itself, or in the separate debug file found with
	 * the symbols (kept open as `debug_fd`, the fd its checks were made
	 * on; past the bound on kept files, reopened by `debug_path` and
	 * accepted only with the identity `debug_id`), or none.
	 */
	bool dwarf_in_file;
	char *debug_path;
	int debug_fd;
	struct file_id debug_id;
	bool debug_from_server; /* in our debuginfod cache, not in the process's root */
	enum load_state dwarf_state;
	struct dwarf_info *dwarf;
	uid_t dwarf_owner; /* user of the file its DWARF was read from (uid_owner_of) */
	/* Refused for lack of budget (sym_dwarf_left): tried again after a sweep frees some. */
	bool dwarf_over_budget;
	/* Demangled names of its symbols and DWARF functions: they die with the object. */
	struct name_table names;
	/* DWARF name (libdw's pointer, stable while `dwarf` lives) -> `names` index. */
	struct hmap dwarf_names;
	/* A Go binary without DWARF (-ldflags=-w): files and lines from .gopclntab. */
	struct go_pclntab *go;
	struct go_lines *go_lines; /* its line tables, decoded within a budget; with `go` */
};

struct symbolizer {
	char *proc_root;
	char *kallsyms_path;
	char *debug_root;
	struct debuginfo_server *debuginfod; /* NULL: local debug files only */
	struct debug_crc_cache crcs;	     /* CRCs of debug-link candidates */
	/* Profiles being symbolized: their time budgets start again at the first (build_begin). */
	unsigned builds_in_flight;
	unsigned kept_files, max_kept_files;
	VEC(struct object *) objects; /* pointers, so object_info stays put as this grows */
	VEC(uint32_t) free_ids;	      /* slots of swept objects (NULL), reused first */
	struct hmap by_inode;	      /* (dev, inode) -> object id */
	struct hmap by_path; /* (hash of path and dev, inode) -> object id, deleted files */
	uint32_t vdso;
	/* DWARF read into memory, by all objects and by one file owner (sym_dwarf_left). */
	uint64_t dwarf_budget, dwarf_owner_budget;
	/* /etc/subuid, read at the first file whose DWARF counts: a user's containers are the
	 * user's. */
	struct uid_owners *owners;

	struct kallsyms ksyms;
	int ksyms_state; /* 0 not loaded yet, 1 loaded, else the negative errno */
	uint32_t *ksym_display;

	/* Names of kernel symbols and modules, and off-CPU leaves: stable until free. */
	struct name_table names;
	/* Names made of an address, "0x.." and "lib+0x..": stable until the next sweep. */
	struct name_table addr_names;
	uint64_t lookups;
};

/* Intern `str` into `t` (its index into *index when not NULL); NULL on -ENOMEM. */
const char *sym_name_intern(struct name_table *t, const char *str, uint32_t *index);
/* The file of `o` by any way it remembers; an fd the caller closes, or a negative errno. */
int sym_open_object_file(struct symbolizer *s, struct object *o);
/* Close the kept files of `o`: their contents are read, or they will never be. */
void sym_release_file(struct symbolizer *s, struct object *o);
/* Load the symbol table of `o` once; false when it has none. */
bool sym_ensure_loaded(struct symbolizer *s, struct object *o);
/* Read the DWARF of `o` once, after its symbols; false when it has none. */
bool sym_ensure_dwarf(struct symbolizer *s, struct object *o);
/* Read kallsyms once; false when it cannot be read. */
bool sym_ensure_kallsyms(struct symbolizer *s);

#endif
