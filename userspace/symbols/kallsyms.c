// SPDX-License-Identifier: BSD-2-Clause
/*
 * /proc/kallsyms lines: "ffffffff81000000 T _stext" for the core kernel and
 * "ffffffffc0356000 t nft_do_chain\t[nf_tables]" for modules (and BPF
 * programs, "[bpf]"). Without CAP_SYSLOG, or with kptr_restrict=2, every
 * address reads as zero.
 */
#include "kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A symbol while loading: the type and file order decide between aliases. */
struct ksym_tmp {
	struct ksym sym;
	uint32_t rank; /* higher wins among symbols at one address */
	uint32_t seq;  /* line number, for a stable order */
};

typedef VEC(struct ksym_tmp) ksym_tmp_vec_t;

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Prefer a global name to a weak one to a local one, and fewer leading underscores. */
static uint32_t symbol_rank(char type, const char *name)
{
	uint32_t r = type == 'T' ? 30 : type == 'W' ? 20 : type == 't' ? 10 : 0;
	unsigned underscores = 0;

	while (name[underscores] == '_' && underscores < 9)
		underscores++;
	return r + 9 - underscores;
}

static int cmp_tmp(const void *a, const void *b)
{
	const struct ksym_tmp *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int append_name(struct kallsyms *k, const char *name, size_t len, uint32_t *off)
{
	if (k->names.len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	if (vec_reserve(&k->names, len + 1))
		return -ENOMEM;
	*off = (uint32_t)k->names.len;
	memcpy(k->names.data + k->names.len, name, len);
	k->names.data[k->names.len + len] = '\0';
	k->names.len += len + 1;
	return 0;
}

/* Parse one line; returns 1 when it holds a text symbol, 0 to skip it, or -errno. */
static int parse_line(struct kallsyms *k, char *line, struct ksym_tmp *out)
{
	char *p = line, *name, *mod, *end;
	uint64_t addr;
	char type;
	size_t len;
	int err;

	errno = 0;
	addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || errno)
		return -EINVAL;
	p = end + 1;
	type = *p;
	if (!type || p[1] != ' ')
		return -EINVAL;
	if (!is_text_type(type))
		return 0;
	name = p + 2;
	len = strcspn(name, "\t \n");
	if (!len)
		return -EINVAL;
	out->sym.addr = addr;
	out->sym.module = KSYM_NO_MODULE;
	out->rank = symbol_rank(type, name);

	mod = name + len;
	mod += strspn(mod, "\t ");
	if (*mod == '[') {
		size_t mlen = strcspn(mod + 1, "]");
		int64_t idx;

		if (mod[1 + mlen] != ']')
			return -EINVAL;
		idx = strtab_intern_len(&k->modules, mod + 1, mlen);
		if (idx < 0)
			return (int)idx;
		out->sym.module = (uint32_t)idx;
	}
	err = append_name(k, name, len, &out->sym.name);
	return err ? err : 1;
}

static int read_symbols(struct kallsyms *k, FILE *f, ksym_tmp_vec_t *tmp)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	while (getline(&line, &cap, f) >= 0) {
		struct ksym_tmp t;
		int r = parse_line(k, line, &t);

		if (r < 0) {
			err = r;
			break;
		}
		if (!r)
			continue;
		t.seq = (uint32_t)tmp->len;
		if (vec_push(tmp, t)) {
			err = -ENOMEM;
			break;
		}
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	return err;
}

int kallsyms_load(struct kallsyms *k, const char *path)
{
	ksym_tmp_vec_t tmp = { 0 };
	bool any_nonzero = false;
	FILE *f;
	int err;

	/* A failed load frees what it made: `k` must start empty, whatever the caller had. */
	memset(k, 0, sizeof(*k));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = read_symbols(k, f, &tmp);
	fclose(f);
	if (err)
		goto fail;
	if (!tmp.len) {
		err = -EINVAL;
		goto fail;
	}
	for (size_t i = 0; i < tmp.len && !any_nonzero; i++)
		any_nonzero = tmp.data[i].sym.addr != 0;
	if (!any_nonzero) {
		err = -EPERM;
		goto fail;
	}

	vec_sort(&tmp, cmp_tmp);
	if (vec_reserve(&k->syms, tmp.len)) {
		err = -ENOMEM;
		goto fail;
	}
	/* Aliases share an address: the sort put the preferred one first. */
	for (size_t i = 0; i < tmp.len; i++) {
		if (k->syms.len && vec_last(&k->syms).addr == tmp.data[i].sym.addr)
			continue;
		k->syms.data[k->syms.len++] = tmp.data[i].sym;
	}
	vec_free(&tmp);
	return 0;

fail:
	vec_free(&tmp);
	kallsyms_free(k);
	return err;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->syms.len;
	const struct ksym *s;

	/* Find the first symbol starting after addr; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms.data[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms.data[lo - 1];
	/*
	 * Symbols carry no size, so the next symbol bounds this one; past the
	 * last symbol of a module or of the kernel only a distance limit helps.
	 */
	if (addr - s->addr >= KSYM_MAX_SIZE)
		return NULL;
	return s;
}

size_t kallsyms_bytes(const struct kallsyms *k)
{
	size_t n = k->syms.cap * sizeof(*k->syms.data) + k->names.cap;

	for (size_t i = 0; i < strtab_len(&k->modules); i++)
		n += strlen(strtab_get(&k->modules, (uint32_t)i)) + 1 + sizeof(char *);
	return n;
}

void kallsyms_free(struct kallsyms *k)
{
	vec_free(&k->syms);
	vec_free(&k->names);
	strtab_free(&k->modules);
}

int kallsyms_find_range(const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t start = 0, next = UINT64_MAX;
	VEC(uint64_t) addrs = { 0 };
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	/* The file is not sorted across modules: keep every address, pick afterwards. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (!start && !strcmp(sym, name))
			start = addr;
		if (vec_push(&addrs, (uint64_t)addr))
			break;
	}
	fclose(f);
	for (size_t i = 0; start && i < addrs.len; i++)
		if (addrs.data[i] > start && addrs.data[i] < next)
			next = addrs.data[i];
	vec_free(&addrs);
	if (!start || next == UINT64_MAX)
		return -ENOENT;
	*lo = start;
	*hi = next;
	return 0;
}
