// SPDX-License-Identifier: BSD-2-Clause
/*
 * python_info_read (python_layout.h): what a CPython binary is, from its
 * dynamic symbols and a few of its own bytes, never its debug symbols.
 */
#include "python_layout.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "../util/elf_dynsym.h"
#include "../util/elf_section.h"
#include "../util/elf_vaddr.h"

struct found_symbols {
	struct python_info *info;
	uint64_t version_vaddr;		/* Py_Version (3.11+) */
	uint64_t get_version;		/* Py_GetVersion() */
	uint64_t interp_head_fn;	/* PyInterpreterState_Head() */
	uint64_t this_tstate_fn;	/* PyGILState_GetThisThreadState() */
	uint64_t eval_ex, eval_ex_size; /* PyEval_EvalFrameEx: 2.7's loop */
	bool python;
};

static bool note_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct found_symbols *f = ctx;

	if (name[0] != '_' && name[0] != 'P')
		return true;
	if (!strcmp(name, "_PyRuntime")) {
		f->info->runtime = sym->st_value;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		f->info->eval_start = sym->st_value;
		f->info->eval_size = sym->st_size;
	} else if (!strcmp(name, "PyEval_EvalFrameEx")) {
		f->eval_ex = sym->st_value;
		f->eval_ex_size = sym->st_size;
	} else if (!strcmp(name, "PyCode_Type")) {
		f->info->code_type = sym->st_value;
	} else if (!strcmp(name, "Py_Version")) {
		f->version_vaddr = sym->st_value;
	} else if (!strcmp(name, "Py_GetVersion")) {
		f->get_version = sym->st_value;
	} else if (!strcmp(name, "PyInterpreterState_Head")) {
		f->interp_head_fn = sym->st_value;
	} else if (!strcmp(name, "PyGILState_GetThisThreadState")) {
		f->this_tstate_fn = sym->st_value;
	} else if (!strcmp(name, "Py_Initialize")) {
		f->python = true;
	}
	return true;
}

/* Whether ELF address `vaddr` lies in a writable PT_LOAD (a variable: .data or .bss). */
static bool writable_at(Elf *elf, uint64_t vaddr, uint64_t len)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_W) &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr <= ph.p_memsz &&
		    len <= ph.p_memsz - (vaddr - ph.p_vaddr))
			return true;
	}
	return false;
}

/* The bytes of a function's start the decoders below look at. */
#define CODE_WINDOW 64

/*
 * The i-th (from 0) x86-64 RIP-relative operand `opcode` (with or without
 * a REX prefix) whose ModRM is `modrm` in the CODE_WINDOW bytes at `fn`:
 * the address it names, or 0. The functions read are a few instructions
 * long (a compiler's choice, so every answer is checked by its caller);
 * a byte pattern inside another instruction could match, never outside
 * the window.
 */
static uint64_t rip_operand(Elf *elf, uint64_t fn, uint8_t opcode, uint8_t modrm_mask,
			    uint8_t modrm, unsigned nth)
{
	uint8_t code[CODE_WINDOW];
	int32_t disp;

	if (!fn || !elf_read_vaddr(elf, fn, code, sizeof(code)))
		return 0;
	for (size_t i = 0; i + 6 <= sizeof(code); i++) {
		if (code[i] != opcode || (code[i + 1] & modrm_mask) != modrm)
			continue;
		if (nth--)
			continue;
		memcpy(&disp, code + i + 2, 4);
		return fn + i + 6 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

/*
 * Before 3.11 no symbol holds the version: Py_GetVersion formats
 * PY_VERSION ("3.8.18") into its buffer; the string is one of the
 * addresses it loads with lea (REX.W 8d, ModRM mod 00 rm 101).
 */
static uint32_t version_from_get_version(Elf *elf, uint64_t fn)
{
	for (unsigned nth = 0; nth < 6; nth++) {
		uint64_t at = rip_operand(elf, fn, 0x8d, 0xc7, 0x05, nth);
		char s[8] = { 0 };
		unsigned major, minor;

		if (!at)
			return 0;
		if (!elf_read_vaddr(elf, at, s, 5) && !elf_read_vaddr(elf, at, s, 4))
			continue;
		if (s[0] < '2' || s[0] > '3' || s[1] != '.' || s[2] < '0' || s[2] > '9')
			continue;
		major = (unsigned)(s[0] - '0');
		minor = (unsigned)(s[2] - '0');
		if (s[3] >= '0' && s[3] <= '9')
			minor = minor * 10 + (unsigned)(s[3] - '0');
		else if (s[3] != '.')
			continue;
		return major << 24 | minor << 16;
	}
	return 0;
}

/*
 * 2.7 and 3.6 keep their first interpreter (interp_head) and 3.6 its
 * thread states' pthread key (autoTLSkey) in static variables no symbol
 * names; the exported functions that return them read them first thing:
 * PyInterpreterState_Head's `mov interp_head(%rip),%rax`, and
 * PyGILState_GetThisThreadState's `mov autoTLSkey(%rip),%edi` (after its
 * `cmpq $0, autoInterpreterState(%rip)`, another opcode). Each answer must
 * be a variable (a writable segment) or is not used.
 */
static void static_roots(Elf *elf, struct found_symbols *f)
{
	uint64_t head = rip_operand(elf, f->interp_head_fn, 0x8b, 0xc7, 0x05, 0);
	uint64_t key = 0;

	/* REX.W mov to rax: 48 8b 05; the opcode scan starts at 8b. */
	if (head && writable_at(elf, head, 8))
		f->info->interp_head = head;
	/* 3.6 only: 2.7's keys are its own list, not pthread keys. */
	if (f->info->version_hex >> 16 == 0x0306)
		key = rip_operand(elf, f->this_tstate_fn, 0x8b, 0xff, 0x3d, 0);
	if (key && writable_at(elf, key, 4))
		f->info->tss_key = key;
}

/* 3.7+: the roots in _PyRuntime; 3.13+ the frames' layout from its _Py_DebugOffsets. */
static bool runtime_roots(Elf *elf, struct python_info *info)
{
	struct python_runtime_roots roots = { 0 };
	uint8_t dbg[512];
	uint64_t head;
	bool table = python_runtime_roots_for(info->version_hex, &roots);

	if (info->version_hex >= 0x030d0000) {
		struct py_layout frames;

		if (!elf_read_vaddr(elf, info->runtime, dbg, sizeof(dbg)) ||
		    python_debug_offsets_parse(dbg, sizeof(dbg), info->version_hex, &frames, &head))
			return false;
		info->frames = frames;
		info->interp_head = info->runtime + head;
	} else if (table) {
		info->interp_head = info->runtime + roots.interp_head;
	} else {
		return false;
	}
	if (table && roots.tss_key)
		info->tss_key = info->runtime + roots.tss_key;
	return true;
}

int python_info_read(Elf *elf, struct python_info *info)
{
	struct found_symbols f = { .info = info };
	const struct python_code_layout *code = NULL;
	bool frames;

	memset(info, 0, sizeof(*info));
	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	elf_dynsym_each(elf, note_symbol, &f);
	if (!f.python || !info->code_type)
		return 0;
	if (f.version_vaddr) {
		if (!elf_read_vaddr(elf, f.version_vaddr, &info->version_hex, 4))
			return -ENOTSUP;
	} else {
		info->version_hex = version_from_get_version(elf, f.get_version);
	}
	/* 2.7's loop is PyEval_EvalFrameEx; from 3.6 that calls _PyEval_EvalFrameDefault. */
	if (info->version_hex >> 16 == 0x0207) {
		info->eval_start = f.eval_ex;
		info->eval_size = f.eval_ex_size;
	}
	if (!info->version_hex || !info->eval_start || !info->eval_size ||
	    elf_exec_bias(elf, &info->exec_bias))
		return -ENOTSUP;
	frames = python_layout_for(info->version_hex, &info->frames, &code);
	info->code = code;
	if (info->version_hex >= 0x03070000) {
		if (!info->runtime || !runtime_roots(elf, info))
			return -ENOTSUP;
		frames = true;
	} else {
		static_roots(elf, &f);
	}
	if (!frames || !info->interp_head)
		return -ENOTSUP;
	return 1;
}
