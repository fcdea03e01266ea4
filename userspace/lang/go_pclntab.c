// SPDX-License-Identifier: BSD-2-Clause
/*
 * See go_pclntab.h. The layout is runtime/symtab.go's (pcHeader, functab,
 * _func) and the value tables are runtime.step's encoding: pairs of a
 * zig-zag varint value delta and a varint PC delta (in quanta), starting
 * from value -1 at the function's entry, ended by a zero value delta.
 */
#include "go_pclntab.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "../util/elf_section.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* A function's value table has at most one range per byte of code; this caps a hostile one. */
#define MAX_STEPS (1u << 20)

static uint32_t rd32(const struct go_pclntab *t, size_t off, bool *ok)
{
	uint32_t v = 0;

	if (off > t->size || t->size - off < 4) {
		*ok = false;
		return 0;
	}
	memcpy(&v, t->data + off, 4);
	return v;
}

static uint64_t rd64(const struct go_pclntab *t, size_t off, bool *ok)
{
	uint64_t v = 0;

	if (off > t->size || t->size - off < 8) {
		*ok = false;
		return 0;
	}
	memcpy(&v, t->data + off, 8);
	return v;
}

/* An offset from the header that must lie inside the table. */
static bool table_offset(const struct go_pclntab *t, uint64_t v, size_t *out)
{
	if (v >= t->size)
		return false;
	*out = (size_t)v;
	return true;
}

static int parse_header(struct go_pclntab *t)
{
	bool ok = true;
	uint32_t magic = rd32(t, 0, &ok);
	uint64_t nfunc, text = 0, fields[5];
	size_t at, cap;

	if (!ok || t->size < 64)
		return -EINVAL;
	if (magic == MAGIC_116)
		t->version = 116;
	else if (magic == MAGIC_118)
		t->version = 118;
	else if (magic == MAGIC_120)
		t->version = 120;
	else
		return -ENOENT;
	if (t->data[4] || t->data[5] || t->data[7] != 8)
		return -ENOENT; /* 4-byte pointers: not a layout read here */
	t->quantum = t->data[6];
	if (!t->quantum || t->quantum > 4)
		return -EINVAL;
	nfunc = rd64(t, 8, &ok);
	at = 24;
	if (t->version >= 118) {
		text = rd64(t, 24, &ok);
		at = 32;
	}
	for (int i = 0; i < 5; i++)
		fields[i] = rd64(t, at + 8 * (size_t)i, &ok);
	if (!ok || !table_offset(t, fields[0], &t->funcnametab) ||
	    !table_offset(t, fields[1], &t->cutab) || !table_offset(t, fields[2], &t->filetab) ||
	    !table_offset(t, fields[3], &t->pctab) || !table_offset(t, fields[4], &t->functab))
		return -EINVAL;
	/* The function table must hold nfunc + 1 entries. */
	cap = (t->size - t->functab) / (t->version >= 118 ? 8 : 16);
	if (!cap || nfunc > cap - 1 || nfunc > UINT32_MAX)
		return -EINVAL;
	t->nfunc = (uint32_t)nfunc;
	t->text_start = text;
	t->cutab_len = t->filetab > t->cutab ? (t->filetab - t->cutab) / 4 : 0;
	return 0;
}

static const char *const section_names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };

bool go_pclntab_present(Elf *elf)
{
	GElf_Shdr shdr;

	for (size_t i = 0; i < sizeof(section_names) / sizeof(section_names[0]); i++)
		if (elf_section_by_name(elf, section_names[i], &shdr) && shdr.sh_type != SHT_NOBITS)
			return true;
	/* Every Go binary since 1.13 says so here, an externally linked PIE too. */
	return elf_section_by_name(elf, ".go.buildinfo", &shdr) != NULL;
}

int go_pclntab_from_bytes(uint8_t *data, size_t size, uint64_t text, struct go_pclntab *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	err = parse_header(t);
	/* A PIE's header holds its text address as a relocation: take the section's. */
	if (!err && t->version >= 118 && !t->text_start)
		t->text_start = text;
	if (!err && t->version >= 118 && !t->text_start)
		err = -EINVAL;
	if (err)
		go_pclntab_close(t);
	return err;
}

/*
 * What a dynamic relocation of type RELATIVE writes at `vaddr` (a PIE's
 * pointers are 0 in the file, their value the relocation's addend); 0 when
 * none does.
 */
static uint64_t relative_reloc_at(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;

			if (gelf_getrela(d, (int)i, &r) && r.r_offset == vaddr &&
			    (GELF_R_TYPE(r.r_info) == R_X86_64_RELATIVE ||
			     GELF_R_TYPE(r.r_info) == R_AARCH64_RELATIVE))
				return (uint64_t)r.r_addend;
		}
	}
	return 0;
}

/* A copy of `size` bytes at `at` in `data`, parsed as the table at ELF address `vaddr`. */
static int parse_copy(Elf *elf, const Elf_Data *data, size_t at, uint64_t vaddr, uint64_t text,
		      struct go_pclntab *t)
{
	size_t size = data->d_size - at;
	uint8_t *copy = malloc(size);
	uint64_t relocated;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, (const uint8_t *)data->d_buf + at, size);
	/* pcHeader.textStart (1.18+), a pointer the dynamic linker fills in a PIE. */
	relocated = relative_reloc_at(elf, vaddr + 24);
	return go_pclntab_from_bytes(copy, size, relocated ? relocated : text, t);
}

/*
 * An externally linked PIE (cgo with -buildmode=pie) keeps the table inside
 * .data.rel.ro with no section of its own: its header is found by its magic,
 * and only with its text address relocation (no guess at where Go's code
 * starts among the C code's).
 */
static int find_in_relro(Elf *elf, struct go_pclntab *t)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, ".data.rel.ro", &sh);
	Elf_Data *data = NULL;
	const uint8_t *b;

	if (scn && sh.sh_size > GO_PCLNTAB_MAX_BYTES)
		return -E2BIG; /* before it is read */
	if (scn && sh.sh_type != SHT_NOBITS)
		data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 64)
		return -ENOENT;
	b = data->d_buf;
	for (size_t at = 0; at + 64 <= data->d_size; at += 8) {
		uint32_t magic;
		int err;

		memcpy(&magic, b + at, 4);
		if ((magic != MAGIC_118 && magic != MAGIC_120) || b[at + 4] || b[at + 5] ||
		    b[at + 7] != 8 || !b[at + 6] || b[at + 6] > 4 ||
		    !relative_reloc_at(elf, sh.sh_addr + at + 24))
			continue;
		err = parse_copy(elf, data, at, sh.sh_addr + at, 0, t);
		if (err != -EINVAL && err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

int go_pclntab_open(Elf *elf, struct go_pclntab *t)
{
	GElf_Shdr shdr, text = { 0 };
	Elf_Data *data = NULL;
	Elf_Scn *scn = NULL;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < sizeof(section_names) / sizeof(section_names[0]) && !scn; i++)
		scn = elf_section_by_name(elf, section_names[i], &shdr);
	if (!scn)
		return elf_section_by_name(elf, ".go.buildinfo", &shdr) ? find_in_relro(elf, t)
									: -ENOENT;
	if (shdr.sh_type == SHT_NOBITS)
		return -ENOENT;
	if (shdr.sh_size > GO_PCLNTAB_MAX_BYTES)
		return -E2BIG; /* before it is read */
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 64)
		return -ENOENT;
	/* Internally linked, Go's code starts the text section. */
	elf_section_by_name(elf, ".text", &text);
	return parse_copy(elf, data, 0, shdr.sh_addr, text.sh_addr, t);
}

void go_pclntab_close(struct go_pclntab *t)
{
	free(t->data);
	memset(t, 0, sizeof(*t));
}

/* Entry i of the function table: its address and its _func's offset from the table. */
static bool functab_entry(const struct go_pclntab *t, uint32_t i, uint64_t *entry, uint64_t *func)
{
	bool ok = true;

	if (t->version >= 118) {
		size_t at = t->functab + 8 * (size_t)i;

		*entry = t->text_start + rd32(t, at, &ok);
		*func = rd32(t, at + 4, &ok);
	} else {
		size_t at = t->functab + 16 * (size_t)i;

		*entry = rd64(t, at, &ok);
		*func = rd64(t, at + 8, &ok);
	}
	return ok;
}

static const char *string_at(const struct go_pclntab *t, size_t base, uint64_t off)
{
	if (off >= t->size - base)
		return "";
	if (!memchr(t->data + base + off, '\0', t->size - base - off))
		return "";
	return (const char *)t->data + base + off;
}

bool go_pclntab_func(const struct go_pclntab *t, uint32_t i, struct go_func *f)
{
	uint64_t entry, next, func, nameoff;
	size_t at, tail;
	bool ok = true;

	memset(f, 0, sizeof(*f));
	f->name = "";
	if (i >= t->nfunc || !functab_entry(t, i + 1, &next, &func) ||
	    !functab_entry(t, i, &entry, &func) || next < entry)
		return false;
	if (func >= t->size - t->functab)
		return false;
	at = t->functab + (size_t)func;
	if (t->version >= 118) {
		nameoff = rd32(t, at + 4, &ok);
		at += 4; /* past entryoff: the rest is 1.16's layout after its 8-byte entry */
	} else {
		nameoff = rd32(t, at + 8, &ok);
		at += 8;
	}
	/* at: nameoff args deferreturn pcsp pcfile pcln npcdata cuOffset [startLine] funcID flag */
	f->pcsp = rd32(t, at + 12, &ok);
	f->pcfile = rd32(t, at + 16, &ok);
	f->pcln = rd32(t, at + 20, &ok);
	f->cu_offset = rd32(t, at + 28, &ok);
	tail = at + 32 + (t->version >= 120 ? 4 : 0);
	if (!ok || tail + 2 > t->size)
		return false;
	f->func_id = t->data[tail];
	f->flag = t->data[tail + 1]; /* 0 in 1.16, which had no flags */
	f->entry = entry;
	f->end = next;
	f->name = string_at(t, t->funcnametab, nameoff);
	return true;
}

int64_t go_pclntab_find(const struct go_pclntab *t, uint64_t pc)
{
	uint32_t lo = 0, hi = t->nfunc;
	uint64_t entry, func;

	if (!t->nfunc || !functab_entry(t, t->nfunc, &entry, &func) || pc >= entry)
		return -1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (!functab_entry(t, mid, &entry, &func))
			return -1;
		if (entry <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int64_t)lo - 1 : -1;
}

static bool varint(const struct go_pclntab *t, size_t *off, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->size)
			return false;
		b = t->data[(*off)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

void go_pcvalue_begin(struct go_pcvalue_iter *it, const struct go_pclntab *t, uint32_t table,
		      uint64_t entry, uint64_t limit)
{
	memset(it, 0, sizeof(*it));
	it->t = t;
	it->pc = entry;
	it->limit = limit;
	it->value = -1;
	it->first = true;
	/* Offset 0 means "no table" (runtime.pcvalue returns -1 there). */
	it->off = table && t->pctab + table < t->size ? t->pctab + table : t->size;
	/* A range per code unit at most: a hostile table's zero deltas cannot spin longer. */
	it->max_steps = limit > entry ? (limit - entry) / t->quantum + 2 : 2;
	if (it->max_steps > MAX_STEPS)
		it->max_steps = MAX_STEPS;
}

bool go_pcvalue_next(struct go_pcvalue_iter *it, uint64_t *start, uint64_t *end, int32_t *value)
{
	uint32_t uv, pcd;
	uint64_t next;

	if (it->off >= it->t->size || it->pc >= it->limit || ++it->steps > it->max_steps)
		return false;
	if (!varint(it->t, &it->off, &uv) || (uv == 0 && !it->first)) {
		it->off = it->t->size;
		return false;
	}
	it->first = false;
	/* Wrapping on purpose: a hostile table's sum must not be undefined behaviour. */
	it->value = (int32_t)((uint32_t)it->value + (-(uv & 1) ^ (uv >> 1)));
	if (!varint(it->t, &it->off, &pcd)) {
		it->off = it->t->size;
		return false;
	}
	next = it->pc + (uint64_t)pcd * it->t->quantum;
	if (next > it->limit)
		next = it->limit;
	*start = it->pc;
	*end = next;
	*value = it->value;
	it->pc = next;
	return true;
}

bool go_pcvalue_at(const struct go_pclntab *t, uint32_t table, uint64_t entry, uint64_t limit,
		   uint64_t pc, int32_t *value)
{
	struct go_pcvalue_iter it;
	uint64_t a, b;
	int32_t v;

	go_pcvalue_begin(&it, t, table, entry, limit);
	while (go_pcvalue_next(&it, &a, &b, &v))
		if (pc >= a && pc < b) {
			*value = v;
			return true;
		}
	return false;
}

const char *go_pclntab_file(const struct go_pclntab *t, const struct go_func *f, int32_t fileno)
{
	uint64_t idx = (uint64_t)f->cu_offset + (uint64_t)fileno;
	bool ok = true;
	uint32_t off;

	if (fileno < 0 || idx >= t->cutab_len)
		return NULL;
	off = rd32(t, t->cutab + 4 * (size_t)idx, &ok);
	if (!ok || off == UINT32_MAX)
		return NULL;
	return string_at(t, t->filetab, off);
}

bool go_pclntab_line(const struct go_pclntab *t, const struct go_func *f, uint64_t pc,
		     const char **file, int *line)
{
	int32_t fileno, ln;

	if (!go_pcvalue_at(t, f->pcfile, f->entry, f->end, pc, &fileno) || fileno < 0 ||
	    !go_pcvalue_at(t, f->pcln, f->entry, f->end, pc, &ln) || ln <= 0)
		return false;
	*file = go_pclntab_file(t, f, fileno);
	*line = ln;
	return *file && **file != '\0';
}
