// SPDX-License-Identifier: BSD-2-Clause
/* See ruby_layout.h. */
#include "ruby_layout.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/elf_vaddr.h"

#ifndef R_X86_64_DTPMOD64
#define R_X86_64_DTPMOD64 16
#define R_X86_64_DTPOFF64 17
#endif

/*
 * 3.1 (x86_64): rb_execution_context_t starts vm_stack, vm_stack_size,
 * cfp; rb_control_frame_t is pc, sp, iseq, self, ep, block_code, __bp__,
 * jit_return (64 bytes: 3.1 added jit_return).
 */
static const struct rb_layout frames_31 = {
	.ec_vm_stack = 0,
	.ec_vm_stack_size = 8,
	.ec_cfp = 16,
	.cfp_size = 64,
	.cfp_pc = 0,
	.cfp_iseq = 16,
	.cfp_ep = 32,
};

/*
 * rb_iseq_constant_body of 3.1: type, iseq_size, iseq_encoded, param (48
 * bytes), location at 64 (pathobj, base_label, label, first_lineno,
 * node_id, code_location), insns_info at 120 (body, positions, size,
 * succ_index_table). The object headers are include/ruby/internal/core's.
 */
static const struct ruby_code_layout code_31 = {
	.iseq_body = 16,
	.body_iseq_encoded = 8,
	.body_iseq_size = 4,
	.body_pathobj = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_insns_body = 120,
	.body_insns_size = 136,
	.body_succ_table = 144,
	.body_bytes = 152,
	.insn_entry_size = 12,
	.insn_entry_line = 0,
	.rstring_heap_len = 16,
	.rstring_heap_ptr = 24,
	.rstring_embed = 16,
	.rarray_embed = 16,
	.rarray_heap_len = 16,
	.rarray_heap_ptr = 32,
	.rstring_noembed = 1u << 13,
	.rstring_embed_mask = 0x1fu << 14,
	.rstring_embed_shift = 14,
	.rarray_embed_flag = 1u << 13,
	.rarray_embed_mask = 3u << 15,
	.rarray_embed_shift = 15,
	.imemo_iseq = 7,
};

bool ruby_layout_for(uint32_t version, struct rb_layout *frames,
		     const struct ruby_code_layout **code)
{
	switch (version >> 8) {
	case 0x0301:
		*frames = frames_31;
		*code = &code_31;
		return true;
	default:
		return false;
	}
}

const char *ruby_version_name(uint32_t version, char buf[16])
{
	snprintf(buf, 16, "%u.%u", (version >> 16) & 0xff, (version >> 8) & 0xff);
	return buf;
}

struct found_symbols {
	struct ruby_info *info;
	uint64_t version_vaddr;
	bool exec;
};

static bool note_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct found_symbols *f = ctx;

	if (!strcmp(name, "rb_vm_exec") && GELF_ST_TYPE(sym->st_info) == STT_FUNC) {
		f->info->exec_start = sym->st_value;
		f->info->exec_size = sym->st_size;
		f->exec = true;
	} else if (!strcmp(name, "ruby_version")) {
		f->version_vaddr = sym->st_value;
	}
	return true;
}

/* "3.1.2" at `vaddr` as 0x030102; 0 when it is not such a string. */
static uint32_t read_version(Elf *elf, uint64_t vaddr)
{
	char s[16] = { 0 };
	unsigned major, minor, teeny;

	if (!vaddr || !elf_read_vaddr(elf, vaddr, s, 6) ||
	    sscanf(s, "%u.%u.%u", &major, &minor, &teeny) != 3 || major > 255 || minor > 255 ||
	    teeny > 255)
		return 0;
	return major << 16 | minor << 8 | teeny;
}

/*
 * ruby_current_ec's GOT slots: the DTPMOD64 relocation's (the module id)
 * and its offset in the module's TLS block (the symbol's value plus the
 * DTPOFF64 relocation's addend; the symbol's value alone when the linker
 * left none). False when the file has no such relocation.
 */
static bool find_ec_tls(Elf *elf, struct ruby_info *info)
{
	Elf_Scn *scn = NULL;
	bool slot = false, off = false;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *symscn;
		Elf_Data *d, *syms;
		GElf_Shdr sh;
		size_t n, strndx;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(symscn = elf_getscn(elf, sh.sh_link)) || !(d = elf_getdata(scn, NULL)) ||
		    !(syms = elf_getdata(symscn, NULL)))
			continue;
		{
			GElf_Shdr ssh;

			if (!gelf_getshdr(symscn, &ssh) || ssh.sh_type != SHT_DYNSYM)
				continue;
			strndx = ssh.sh_link;
		}
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			unsigned type;
			const char *name;
			GElf_Rela r;
			GElf_Sym s;

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			type = (unsigned)GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_DTPMOD64 && type != R_X86_64_DTPOFF64) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s) ||
			    !(name = elf_strptr(elf, strndx, s.st_name)) ||
			    strcmp(name, "ruby_current_ec"))
				continue;
			if (type == R_X86_64_DTPMOD64) {
				info->modid_slot = r.r_offset;
				if (!off)
					info->ec_tls_offset = s.st_value;
				slot = true;
			} else {
				info->ec_tls_offset = s.st_value + (uint64_t)r.r_addend;
				off = true;
			}
		}
	}
	return slot;
}

int ruby_info_read(Elf *elf, struct ruby_info *info)
{
	struct found_symbols f = { info, 0, false };
	GElf_Ehdr eh;

	memset(info, 0, sizeof(*info));
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	elf_dynsym_each(elf, note_symbol, &f);
	if (!f.exec || !f.version_vaddr)
		return 0;
	info->version = read_version(elf, f.version_vaddr);
	if (!info->version || !info->exec_size || !elf_exec_bias(elf, &info->exec_bias) ||
	    !find_ec_tls(elf, info))
		return -ENOTSUP;
	return ruby_layout_for(info->version, &info->frames, &info->code) ? 1 : -ENOTSUP;
}
