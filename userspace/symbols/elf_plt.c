// SPDX-License-Identifier: BSD-2-Clause
/*
 * PLT stub names (see elf_plt.h). A stub is decoded, not assumed to sit at
 * index * size: layouts differ between lazy and immediate binding, IBT
 * (.plt.sec), and .plt.got, and decoding the jump finds the slot in all of
 * them. The slot's dynamic relocation names the function.
 */
#include "elf_plt.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef R_X86_64_IRELATIVE
#define R_X86_64_IRELATIVE 37
#endif
#ifndef R_AARCH64_IRELATIVE
#define R_AARCH64_IRELATIVE 1032
#endif

/* A GOT slot and the name of what the dynamic linker puts there. */
struct got_slot {
	uint64_t addr;
	const char *name; /* in libelf's buffers, or NULL: unnamed */
	uint64_t addend;  /* IRELATIVE: the resolver, named by address */
};

typedef VEC(struct got_slot) got_slots_t;

struct plt_ctx {
	Elf *elf;
	unsigned machine;
	got_slots_t slots; /* every relocated slot, sorted by address once read */
	/* .rela.plt in its own order: a lazy IBT .plt stub names its slot by index. */
	got_slots_t jmprel;
	Elf_Scn *dynsym;
	size_t dynsym_count;
	plt_stubs_t *out;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct got_slot *find_slot(const struct plt_ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->slots.len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->slots.data[mid].addr < addr)
			lo = mid + 1;
		else if (c->slots.data[mid].addr > addr)
			hi = mid;
		else
			return &c->slots.data[mid];
	}
	return NULL;
}

static bool is_irelative(unsigned machine, unsigned type)
{
	return (machine == EM_X86_64 && type == R_X86_64_IRELATIVE) ||
	       (machine == EM_AARCH64 && type == R_AARCH64_IRELATIVE);
}

/* The name of dynamic symbol `index`, or NULL. */
static const char *dynsym_name(const struct plt_ctx *c, size_t index, GElf_Sym *sym_out)
{
	GElf_Shdr sh;
	Elf_Data *data;
	GElf_Sym sym;
	const char *name;

	if (!c->dynsym || !index || index >= c->dynsym_count || !gelf_getshdr(c->dynsym, &sh))
		return NULL;
	data = elf_getdata(c->dynsym, NULL);
	if (!data || !gelf_getsym(data, (int)index, &sym))
		return NULL;
	name = elf_strptr(c->elf, sh.sh_link, sym.st_name);
	if (sym_out)
		*sym_out = sym;
	return name && name[0] ? name : NULL;
}

/* Every entry of one dynamic relocation section becomes a slot. */
static int read_relocations(struct plt_ctx *c, Elf_Scn *scn, const GElf_Shdr *sh, bool jmprel)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !data->d_buf || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		struct got_slot slot = { 0 };
		uint64_t info;

		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			slot.addr = r.r_offset;
			slot.addend = (uint64_t)r.r_addend;
			info = r.r_info;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			slot.addr = r.r_offset;
			info = r.r_info;
		}
		slot.name = dynsym_name(c, GELF_R_SYM(info), NULL);
		if (!slot.name && !is_irelative(c->machine, GELF_R_TYPE(info)))
			slot.addend = 0;
		if (vec_push(&c->slots, slot) || (jmprel && vec_push(&c->jmprel, slot)))
			return -ENOMEM;
	}
	return 0;
}

/* An IFUNC's resolver is named by the dynamic symbol at its address. */
static const char *name_by_address(const struct plt_ctx *c, uint64_t addr)
{
	for (size_t i = 1; i < c->dynsym_count; i++) {
		GElf_Sym sym;
		const char *name = dynsym_name(c, i, &sym);

		if (name && sym.st_value == addr && sym.st_shndx != SHN_UNDEF)
			return name;
	}
	return NULL;
}

static int add_stub(struct plt_ctx *c, uint64_t start, uint64_t size, const char *name,
		    const char *suffix)
{
	struct plt_stub stub = { start, size, NULL };
	size_t len = strlen(name) + strlen(suffix) + 1;

	stub.name = malloc(len);
	if (!stub.name)
		return -ENOMEM;
	snprintf(stub.name, len, "%s%s", name, suffix);
	if (vec_push(c->out, stub)) {
		free(stub.name);
		return -ENOMEM;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * x86_64: [endbr64] [bnd] jmp *disp32(%rip) gives the slot; a lazy IBT
 * stub (endbr64; push $index; bnd jmp .plt) gives the .rela.plt index.
 */
static const struct got_slot *x86_stub_slot(const struct plt_ctx *c, const unsigned char *b,
					    size_t n, uint64_t addr)
{
	size_t p = 0;

	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		p = 4;
	if (p < n && b[p] == 0xf2)
		p++;
	if (p + 6 <= n && b[p] == 0xff && b[p + 1] == 0x25)
		return find_slot(c, addr + p + 6 + (uint64_t)(int64_t)(int32_t)le32(b + p + 2));
	if (p + 5 <= n && b[p] == 0x68) {
		uint32_t index = le32(b + p + 1);

		if (index < c->jmprel.len)
			return &c->jmprel.data[index];
	}
	return NULL;
}

/* arm64: adrp x16, page; ldr x17, [x16, #off] gives the slot. */
static const struct got_slot *arm64_stub_slot(const struct plt_ctx *c, const unsigned char *b,
					      size_t n, uint64_t addr)
{
	for (size_t i = 0; i + 8 <= n; i += 4) {
		uint32_t adrp = le32(b + i), ldr = le32(b + i + 4);
		uint64_t page, imm;

		if ((adrp & 0x9f000000) != 0x90000000 || (ldr & 0xffc00000) != 0xf9400000)
			continue;
		/* ldr's base register must be the one adrp set. */
		if (((ldr >> 5) & 31) != (adrp & 31))
			continue;
		imm = ((uint64_t)((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3)) << 12;
		if (imm & (1ull << 32))
			imm |= ~((1ull << 33) - 1); /* sign-extend the 33-bit offset */
		page = ((addr + i) & ~0xfffull) + imm;
		return find_slot(c, page + (uint64_t)((ldr >> 10) & 0xfff) * 8);
	}
	return NULL;
}

static const char *slot_name(const struct plt_ctx *c, const struct got_slot *slot, char *buf,
			     size_t size)
{
	const char *name;

	if (slot->name)
		return slot->name;
	if (!slot->addend)
		return NULL;
	name = name_by_address(c, slot->addend);
	if (name)
		return name;
	snprintf(buf, size, "*ABS*+0x%llx", (unsigned long long)slot->addend);
	return buf;
}

/* Name every stub of one PLT section; unnamed stubs at its head are "[plt]". */
static int name_section_stubs(struct plt_ctx *c, Elf_Scn *scn, const GElf_Shdr *sh,
			      const char *secname)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t entsize = sh->sh_entsize;
	uint64_t head_end = 0;
	bool named_any = false;
	int err;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0; /* NOBITS in a debug file: no code to decode */
	if (entsize < 4 || entsize > 64)
		entsize = !strcmp(secname, ".plt.got") ? 8 : 16;
	for (uint64_t off = 0; off + entsize <= sh->sh_size; off += entsize) {
		const unsigned char *b = (const unsigned char *)data->d_buf + off;
		uint64_t addr = sh->sh_addr + off;
		const struct got_slot *slot;
		const char *name = NULL;
		char buf[64];

		slot = c->machine == EM_X86_64 ? x86_stub_slot(c, b, entsize, addr)
					       : arm64_stub_slot(c, b, entsize, addr);
		if (slot)
			name = slot_name(c, slot, buf, sizeof(buf));
		if (name) {
			if ((err = add_stub(c, addr, entsize, name, "@plt")))
				return err;
			named_any = true;
		} else if (!named_any && !strcmp(secname, ".plt")) {
			head_end = off + entsize; /* the lazy-binding header */
		}
	}
	if (head_end)
		return add_stub(c, sh->sh_addr, head_end, "[plt]", "");
	return 0;
}

int elf_plt_stubs(Elf *elf, plt_stubs_t *out)
{
	struct plt_ctx c = { .elf = elf, .out = out };
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = 0;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	c.machine = eh.e_machine;
	if (c.machine != EM_X86_64 && c.machine != EM_AARCH64)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM && sh.sh_entsize) {
			c.dynsym = scn;
			c.dynsym_count = sh.sh_size / sh.sh_entsize;
			break;
		}
	}
	if (!c.dynsym)
		return 0;
	/* Relocations against the dynamic symbols: .rela.plt (JMPREL) and .rela.dyn. */
	for (scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    elf_getscn(elf, sh.sh_link) != c.dynsym)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((err = read_relocations(&c, scn, &sh,
					    name && !strncmp(name, ".rel", 4) &&
						    strstr(name, ".plt"))))
			goto out;
	}
	if (!c.slots.len)
		goto out;
	vec_sort(&c.slots, cmp_slot);
	for (scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name ||
		    (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got")))
			continue;
		if ((err = name_section_stubs(&c, scn, &sh, name)))
			goto out;
	}
out:
	vec_free(&c.slots);
	vec_free(&c.jmprel);
	return err;
}

void plt_stubs_free(plt_stubs_t *stubs)
{
	for (size_t i = 0; i < stubs->len; i++)
		free(stubs->data[i].name);
	vec_free(stubs);
}
