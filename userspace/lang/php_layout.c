// SPDX-License-Identifier: BSD-2-Clause
/* See php_layout.h. */
#include "php_layout.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/elf_section.h"

/* PHP 8.2 (x86_64, NTS), offsets from its headers (Zend/zend_globals.h, zend_compile.h). */
static const struct php_layout frames_82 = {
	.eg_current_execute_data = 488,
	.ex_opline = 0,
	.ex_func = 24,
	.ex_call_info = 40,
	.ex_prev = 48,
	.func_type = 0,
	.op_lineno = 24,
	.call_top = 1u << 17,
};

static const struct php_name_layout names_82 = {
	.func_type = 0,
	.func_name = 8,
	.func_scope = 16,
	.op_filename = 152,
	.op_line_start = 160,
	.class_name = 8,
	.str_len = 16,
	.str_val = 24,
	.func_read = 168,
};

bool php_layout_for(uint32_t version, struct php_layout *frames,
		    const struct php_name_layout **names)
{
	switch (version >> 8) {
	case 0x0802:
		*frames = frames_82;
		*names = &names_82;
		return true;
	default:
		return false;
	}
}

/* One decimal number of at most 3 digits from s[*i], below `limit`; -1 when none. */
static int number(const char *s, size_t len, size_t *i, int limit)
{
	int v = 0, digits = 0;

	while (*i < len && s[*i] >= '0' && s[*i] <= '9' && digits < 3) {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		digits++;
	}
	return digits && v < limit ? v : -1;
}

uint32_t php_version_parse(const char *s, size_t len)
{
	size_t i = 0;
	int major, minor, release;

	major = number(s, len, &i, 256);
	if (major < 5 || i >= len || s[i++] != '.')
		return 0;
	minor = number(s, len, &i, 256);
	if (minor < 0 || i >= len || s[i++] != '.')
		return 0;
	release = number(s, len, &i, 256);
	if (release < 0)
		return 0;
	return (uint32_t)major << 16 | (uint32_t)minor << 8 | (uint32_t)release;
}

const char *php_version_name(uint32_t version, char buf[16])
{
	snprintf(buf, 16, "%u.%u", (version >> 16) & 0xff, (version >> 8) & 0xff);
	return buf;
}

struct found_symbols {
	struct php_info *info;
	bool eg;
	uint64_t vm_anchor; /* zend_vm_stack_init: zend_execute.c's first function */
	bool zts;	    /* executor_globals_offset: a thread-safe build's, in TLS */
};

static bool note_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct found_symbols *f = ctx;

	if (!sym->st_value)
		return true;
	if (!strcmp(name, "executor_globals") && GELF_ST_TYPE(sym->st_info) == STT_OBJECT) {
		f->info->eg = sym->st_value;
		f->eg = true;
	} else if (!strcmp(name, "execute_ex") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		f->info->eval_start = sym->st_value;
		f->info->eval_size = sym->st_size;
	} else if (!strcmp(name, "executor_globals_offset")) {
		f->zts = true;
	} else if (!strcmp(name, "zend_vm_stack_init")) {
		f->vm_anchor = sym->st_value;
	}
	return true;
}

/* The end of the exported function below zend_execute.c's first: where its static code starts. */
static bool note_vm_start(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct found_symbols *f = ctx;
	uint64_t end = sym->st_value + sym->st_size;

	(void)name;
	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value && end <= f->vm_anchor &&
	    end > f->info->vm_start)
		f->info->vm_start = end;
	return true;
}

/* The version in the "X-Powered-By: PHP/x.y.z" header text of .rodata; 0 when none. */
static uint32_t find_version(Elf *elf)
{
	static const char tag[] = "X-Powered-By: PHP/";
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, ".rodata", &sh);
	Elf_Data *d;
	const char *at;

	if (!scn || sh.sh_type != SHT_PROGBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return 0;
	at = memmem(d->d_buf, d->d_size, tag, sizeof(tag) - 1);
	if (!at)
		return 0;
	at += sizeof(tag) - 1;
	return php_version_parse(at, (size_t)((const char *)d->d_buf + d->d_size - at));
}

int php_info_read(Elf *elf, struct php_info *info)
{
	struct found_symbols f = { info, false, 0, false };

	memset(info, 0, sizeof(*info));
	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	elf_dynsym_each(elf, note_symbol, &f);
	/* A thread-safe build: its executor_globals are per thread (TLS), not read here. */
	if (f.zts && !f.eg && info->eval_start) {
		info->zts = true;
		info->version = find_version(elf);
		return -ENOTSUP;
	}
	/* Not the engine (an extension imports these: undefined, value 0). */
	if (!f.eg || !info->eval_start || !info->eval_size)
		return 0;
	/*
	 * The handlers execute_ex calls are static functions of zend_execute.c
	 * (it includes zend_vm_execute.h), which GCC lays out before
	 * execute_ex among that file's exported ones: from the end of the
	 * exported function before the file's first (no other file's code
	 * in between) to execute_ex.
	 */
	if (f.vm_anchor && f.vm_anchor < info->eval_start)
		elf_dynsym_each(elf, note_vm_start, &f);
	if (!info->vm_start || info->vm_start > info->eval_start)
		info->vm_start = info->eval_start;
	info->version = find_version(elf);
	if (!info->version || elf_exec_bias(elf, &info->exec_bias))
		return -ENOTSUP;
	return php_layout_for(info->version, &info->frames, &info->names) ? 1 : -ENOTSUP;
}
