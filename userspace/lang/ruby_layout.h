/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What bpfprof must know of a CRuby interpreter (libruby-3.x.so, or a ruby
 * executable linked with it statically) to show Ruby frames, without its
 * debug symbols: from its dynamic symbols, its version (ruby_version),
 * the VM's entry (rb_vm_exec; and the core loop it calls, the largest
 * function its direct calls reach by .eh_frame_hdr's index, where the
 * symbol is stripped) and the TLS variable ruby_current_ec, whose
 * module id the dynamic linker writes in a GOT slot (its DTPMOD64
 * relocation); for that version, where the fields the walk and the names
 * read sit in the VM's structures.
 *
 * Layouts are per minor version: 3.1 is here (Debian 12's ruby). The VM's
 * structures (vm_core.h, iseq.h) are not in the installed headers: their
 * offsets are 3.1's sources' on x86_64; the object headers (RString,
 * RArray and their flags) are public, and tests compare them with
 * /usr/include/ruby-3.1.0 where it is installed.
 */
#ifndef BPFPROF_LANG_RUBY_LAYOUT_H
#define BPFPROF_LANG_RUBY_LAYOUT_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"

/* Where an iseq's name, file and line table are (userspace reads them, not BPF). */
struct ruby_code_layout {
	uint16_t iseq_body;	      /* rb_iseq_t.body */
	uint16_t body_iseq_encoded;   /* rb_iseq_constant_body.iseq_encoded (VALUE *) */
	uint16_t body_iseq_size;      /* .iseq_size (unsigned int, in VALUEs) */
	uint16_t body_pathobj;	      /* .location.pathobj: String, or Array [path, realpath] */
	uint16_t body_label;	      /* .location.label (String) */
	uint16_t body_first_lineno;   /* .location.first_lineno (a Fixnum VALUE) */
	uint16_t body_insns_body;     /* .insns_info.body (struct iseq_insn_info_entry *) */
	uint16_t body_insns_size;     /* .insns_info.size (unsigned int) */
	uint16_t body_succ_table;     /* .insns_info.succ_index_table */
	uint16_t body_bytes;	      /* the body's bytes read at once (past every field above) */
	uint16_t insn_entry_size;     /* sizeof(struct iseq_insn_info_entry) */
	uint16_t insn_entry_line;     /* its line_no (int) */
	uint16_t rstring_heap_len;    /* RString.as.heap.len */
	uint16_t rstring_heap_ptr;    /* RString.as.heap.ptr */
	uint16_t rstring_embed;	      /* RString.as.embed.ary */
	uint16_t rarray_embed;	      /* RArray.as.ary */
	uint16_t rarray_heap_len;     /* RArray.as.heap.len */
	uint16_t rarray_heap_ptr;     /* RArray.as.heap.ptr */
	uint32_t rstring_noembed;     /* RSTRING_NOEMBED */
	uint32_t rstring_embed_mask;  /* RSTRING_EMBED_LEN_MASK */
	uint32_t rstring_embed_shift; /* RSTRING_EMBED_LEN_SHIFT */
	uint32_t rarray_embed_flag;   /* RARRAY_EMBED_FLAG */
	uint32_t rarray_embed_mask;   /* RARRAY_EMBED_LEN_MASK */
	uint32_t rarray_embed_shift;  /* RARRAY_EMBED_LEN_SHIFT */
	uint32_t imemo_iseq;	      /* imemo_iseq: an iseq's type in its flags' bits 12-15 */
};

/* Ruby's value types (ruby_value_type), the low bits of an object's flags. */
#define RUBY_TYPE_MASK	 0x1f
#define RUBY_TYPE_STRING 0x05
#define RUBY_TYPE_ARRAY	 0x07
#define RUBY_TYPE_IMEMO	 0x1a

struct ruby_info {
	uint32_t version; /* major << 16 | minor << 8 | teeny: 0x030102 is 3.1.2 */
	/* ELF virtual addresses in the binary. */
	uint64_t modid_slot, exec_start, exec_size;
	/* The VM's core loop rb_vm_exec calls (vm_exec_core, static): 0 when not found. */
	uint64_t core_start, core_end;
	uint64_t ec_tls_offset; /* ruby_current_ec in the TLS block */
	/* Addresses in a process: ELF address + (mapping start - mapping offset - exec_bias). */
	int64_t exec_bias;		     /* p_vaddr - p_offset of the executable segment */
	struct rb_layout frames;	     /* for BPF */
	const struct ruby_code_layout *code; /* NULL: no layout for this version */
};

/*
 * Whether `elf` is a CRuby interpreter, and its info: 1 (a Ruby with a
 * layout), 0 (not Ruby), -ENOTSUP (Ruby, no layout for its version or its
 * ruby_current_ec not found: info->version says which), -ENOMEM.
 */
int ruby_info_read(Elf *elf, struct ruby_info *info);

/* The layouts of a version's minor version; false when bpfprof has none. */
bool ruby_layout_for(uint32_t version, struct rb_layout *frames,
		     const struct ruby_code_layout **code);

/* "3.1" from a version, into buf. */
const char *ruby_version_name(uint32_t version, char buf[16]);

#endif
