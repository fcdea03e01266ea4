// SPDX-License-Identifier: BSD-2-Clause
/* See ruby_layout.h. */
#include "ruby_layout.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/elf_section.h"
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

/* The most of rb_vm_exec's code read for its calls (3.1's is 2.9 KiB). */
#define MAX_EXEC_BYTES	 (64u << 10)
/* .eh_frame_hdr: version 1, its table of udata4 count and datarel sdata4 pairs (GNU ld's). */
#define EH_HDR_TABLE_ENC 0x3b
#define EH_HDR_COUNT_ENC 0x03

/*
 * Where the function starting at `start` ends, by .eh_frame_hdr's sorted
 * table of FDE starts: the next one's start. False when `start` starts no
 * FDE there (or the file has no such table).
 */
static bool fde_extent(const uint8_t *hdr, size_t len, uint64_t hdr_vaddr, uint64_t start,
		       uint64_t *end)
{
	uint32_t count;
	size_t lo = 0, hi;
	int32_t loc;

	if (len < 12 || hdr[0] != 1 || hdr[2] != EH_HDR_COUNT_ENC || hdr[3] != EH_HDR_TABLE_ENC)
		return false;
	memcpy(&count, hdr + 8, 4);
	if (count > (len - 12) / 8)
		return false;
	hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, hdr + 12 + 8 * mid, 4);
		if (hdr_vaddr + (uint64_t)(int64_t)loc < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo + 1 >= count)
		return false;
	memcpy(&loc, hdr + 12 + 8 * lo, 4);
	if (hdr_vaddr + (uint64_t)(int64_t)loc != start)
		return false;
	memcpy(&loc, hdr + 12 + 8 * (lo + 1), 4);
	*end = hdr_vaddr + (uint64_t)(int64_t)loc;
	return *end > start;
}

/*
 * The VM's core loop (vm_exec_core, a static function): of the functions
 * rb_vm_exec calls directly (call rel32), the largest by .eh_frame_hdr
 * (3.1's: 17.5 KiB, the others under 2). Its frame sits inside each
 * rb_vm_exec frame, and the Ruby frames show its work.
 */
static void find_core(Elf *elf, struct ruby_info *info)
{
	size_t len = info->exec_size < MAX_EXEC_BYTES ? info->exec_size : MAX_EXEC_BYTES;
	uint8_t *code = malloc(len);
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;

	if (!code || elf_read_code(elf, info->exec_start, code, len) ||
	    !(scn = elf_section_by_name(elf, ".eh_frame_hdr", &sh)) || sh.sh_type != SHT_PROGBITS ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf) {
		free(code);
		return;
	}
	for (size_t i = 0; i + 5 <= len; i++) {
		uint64_t target, end;
		int32_t rel;

		if (code[i] != 0xe8)
			continue;
		memcpy(&rel, code + i + 1, 4);
		target = info->exec_start + i + 5 + (uint64_t)(int64_t)rel;
		if (fde_extent(d->d_buf, d->d_size, sh.sh_addr, target, &end) &&
		    end - target > info->core_end - info->core_start) {
			info->core_start = target;
			info->core_end = end;
		}
	}
	free(code);
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
	if (!info->version || !info->exec_size || elf_exec_bias(elf, &info->exec_bias) ||
	    !find_ec_tls(elf, info))
		return -ENOTSUP;
	if (!ruby_layout_for(info->version, &info->frames, &info->code))
		return -ENOTSUP;
	find_core(elf, info);
	return 1;
}
