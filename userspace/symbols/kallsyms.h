/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel text symbols from /proc/kallsyms, sorted by address so a lookup is
 * one binary search. Only text symbols are kept: samples only ever point at
 * code, and dropping data symbols roughly halves the table.
 */
#ifndef BPFPROF_KALLSYMS_H
#define BPFPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "../util/strtab.h"
#include "../util/vec.h"

#define KSYM_NO_MODULE UINT32_MAX

/* No kernel function is this long: an address further past a symbol is not in it. */
#define KSYM_MAX_SIZE (1u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset in kallsyms.names */
	uint32_t module; /* index in kallsyms.modules, or KSYM_NO_MODULE */
};

struct kallsyms {
	VEC(struct ksym) syms;
	VEC(char) names; /* every name, NUL-terminated, back to back */
	struct strtab modules;
};

/*
 * Load `path` (normally /proc/kallsyms) into `k` (emptied first).
 * Returns 0; -EPERM when every address reads as zero (kptr_restrict, or not
 * root), so the caller can say once that kernel frames stay unnamed;
 * -ENOENT/-EACCES/-ENOMEM/-EINVAL otherwise. On error `k` is left empty.
 */
int kallsyms_load(struct kallsyms *k, const char *path);

/* The symbol containing `addr`, or NULL. */
const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

static inline const char *kallsyms_name(const struct kallsyms *k, const struct ksym *s)
{
	return k->names.data + s->name;
}

/* The module name ("ext4"), or NULL for the core kernel. */
static inline const char *kallsyms_module(const struct kallsyms *k, const struct ksym *s)
{
	return s->module == KSYM_NO_MODULE ? NULL : strtab_get(&k->modules, s->module);
}

/*
 * Scan `path` for the text symbol `name` without loading the table: its
 * address in *lo and the next higher symbol's in *hi. 0, -ENOENT when it is
 * not there (or addresses are hidden), or -errno from opening the file.
 */
int kallsyms_find_range(const char *path, const char *name, uint64_t *lo, uint64_t *hi);

/* Bytes held, for statistics. */
size_t kallsyms_bytes(const struct kallsyms *k);

void kallsyms_free(struct kallsyms *k);

#endif
