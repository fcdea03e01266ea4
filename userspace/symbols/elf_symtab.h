/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What symbolization needs from one ELF file (or the in-memory vDSO image):
 * its PT_LOAD segments, to turn a file offset into a virtual address; its
 * GNU build-id; and its function symbols from .symtab and .dynsym, with
 * the PLT stubs named "func@plt" (elf_plt.h), merged into one array sorted
 * by address so a lookup is one binary search. The
 * file is read once and closed; nothing here keeps libelf state around.
 */
#ifndef BPFPROF_ELF_SYMTAB_H
#define BPFPROF_ELF_SYMTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/elf_build_id.h" /* ELF_BUILD_ID_MAX */
#include "../util/vec.h"

struct elf_segment {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags; /* PF_X, PF_W, PF_R */
};

struct elf_sym {
	uint64_t start;
	uint64_t size; /* from the ELF, or inferred up to the next symbol / section end */
	uint32_t name; /* offset in elf_symtab.names */
};

struct elf_symtab {
	VEC(struct elf_segment) segments;	 /* PT_LOAD, in program header order */
	VEC(struct elf_sym) syms;		 /* sorted by start, one symbol per start */
	VEC(char) names;			 /* symbol names, NUL-terminated, back to back */
	char build_id[ELF_BUILD_ID_MAX * 2 + 1]; /* lowercase hex, "" when none */
	uint64_t base;	 /* p_vaddr of the first PT_LOAD: library-relative addresses start here */
	bool has_symtab; /* a full .symtab was read (not only .dynsym) */
	uint8_t runtime; /* enum code_runtime */
};

/*
 * Load from an open file descriptor (not closed) or a path. When the file
 * has no .symtab and `debug_dir` is not NULL (normally "/usr/lib/debug"),
 * symbols also come from `debug_dir`/.build-id/xx/yyyy.debug if it exists
 * and carries the same build-id.
 * `t` must be zeroed. Returns 0 or a negative errno (-ENOEXEC: not an ELF
 * file, or no PT_LOAD); on error `t` is left empty.
 */
int elf_symtab_load_fd(struct elf_symtab *t, int fd, const char *debug_dir);
int elf_symtab_load_path(struct elf_symtab *t, const char *path, const char *debug_dir);

/*
 * Load from an open ELF handle; symbols also come from `debug` (the
 * separate debug file, may be NULL) when `elf` has no .symtab. Neither
 * handle is kept.
 */
int elf_symtab_load_elf(struct elf_symtab *t, Elf *elf, Elf *debug);

/* Does `elf` have a (non-empty) .symtab, i.e. is it not stripped? */
bool elf_has_symtab(Elf *elf);

/* Load from an ELF image in memory; libelf may touch `image` while it runs. */
int elf_symtab_load_mem(struct elf_symtab *t, void *image, size_t size);

/* File offset -> virtual address through the PT_LOAD holding it; 0 or -ENOENT. */
int elf_symtab_offset_to_vaddr(const struct elf_symtab *t, uint64_t offset, uint64_t *vaddr);

/* The function containing `vaddr`, or NULL. */
const struct elf_sym *elf_symtab_lookup(const struct elf_symtab *t, uint64_t vaddr);

/* A symbol by exact name (linear scan: for tests and diagnostics), or NULL. */
const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, const char *name);

static inline const char *elf_symtab_name(const struct elf_symtab *t, const struct elf_sym *s)
{
	return t->names.data + s->name;
}

/* Bytes held, for statistics. */
size_t elf_symtab_bytes(const struct elf_symtab *t);

void elf_symtab_free(struct elf_symtab *t);

#endif
