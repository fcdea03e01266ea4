/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * V8's postmortem metadata, read from node's ELF file (the executable, or
 * libnode.so): the v8dbg_* int32 symbols V8's gen-postmortem-metadata.py
 * emits for debuggers (object field offsets, instance types, string tags,
 * frame types, fp-relative slots), V8's version
 * (v8::internal::Version::major_ ...) and the embedded builtins blob
 * (v8_Default_embedded_blob_code_ and its size), which holds the
 * interpreter's trampolines and bytecode handlers in node's own .text.
 *
 * What a V8 version does not export is derived (v8_meta_from_syms), each
 * derivation naming the V8 versions it holds for; a layout we cannot
 * stand behind (pointer compression, a Smi not in the upper half of a
 * word, a version out of the derived ranges) is refused with its reason.
 *
 * The file may be another user's and a fake: symbols are counted, every
 * value is read through libelf within its section, and a FUSE file not
 * root's is refused before it is read (its server may never answer).
 */
#ifndef BPFPROF_LANG_V8_META_H
#define BPFPROF_LANG_V8_META_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define V8_MAX_FRAMETYPES 40
#define V8_FRAMETYPE_NAME 48
/* Symbols kept from one file: node 20 exports 531 v8dbg_* symbols. */
#define V8_MAX_SYMS	  4096

/* V8 version as one comparable number. */
#define V8_VERSION(maj, min, build) (((uint32_t)(maj) << 24) | ((uint32_t)(min) << 16) | (build))

struct v8_sym {
	const char *name; /* "v8dbg_..." or a Version/embedded-blob symbol */
	int64_t value;	  /* the int32 it holds (sign-extended), or an address for the blob */
};

struct v8_meta {
	unsigned major, minor, build, patch;
	uint32_t version; /* V8_VERSION(major, minor, build) */
	/* The embedded builtins blob, ELF addresses of the file read (before load bias); 0:
	 * unknown. */
	uint64_t blob_lo, blob_hi;
	uint64_t blob_file_off; /* where the blob is in the file (v8_meta_from_elf); 0: unknown */

	/* Slots of a JS frame, bytes from its fp. */
	int32_t fp_context, fp_function, fp_bytecode_array, fp_bytecode_offset;

	/* Instance types. */
	int32_t t_jsfunc_first, t_jsfunc_last, t_sfi, t_code, t_script, t_scope_info;
	int32_t t_bytecode_array, t_byte_array, t_fixed_array, t_weak_fixed_array;
	int32_t t_first_nonstring;
	/* String shapes: instance_type & repr_mask / & enc_mask. */
	int32_t str_repr_mask, str_enc_mask, str_seq, str_cons, str_sliced, str_thin, str_one_byte;

	/* Field offsets (bytes from the object's untagged address). */
	int32_t obj_map, map_type;
	int32_t fn_shared, fn_code;
	int32_t sfi_name, sfi_data, sfi_script;
	int32_t script_source, script_name, script_line_ends;
	int32_t str_length, seq_chars, cons_first, cons_second, thin_actual;
	int32_t sliced_parent, sliced_offset;
	int32_t fa_length, fa_data;
	int32_t ba_spt, ba_data;
	int32_t code_deopt, code_spt, code_start, code_flags, code_size;
	int32_t code_bytecode; /* baseline code's BytecodeArray */
	bool code_start_ptr;   /* Code holds a pointer to its instructions (V8 >= 11.1.204) */

	/* Code kinds, from Code's flags. */
	int32_t kind_mask, kind_shift, kind_interpreted, kind_baseline;
	/* Deoptimization data (a FixedArray) indices. */
	int32_t deopt_literals, deopt_sfi, deopt_inlining;
	/* ScopeInfo slots after its map, in words (V8 >= 9.1.71, HeapObject-based). */
	int32_t scope_ncontext_locals, scope_first_vars;

	/*
	 * Bytecode sizes (interpreter::Bytecodes::kBytecodeSizes, from the
	 * ELF file): [operand scale (single, double, quadruple)][bytecode],
	 * to walk a BytecodeArray; nbytecodes 0 when the file has none.
	 */
	uint8_t bytecode_sizes[3][256];
	int nbytecodes;

	/* v8dbg_frametype_<Name> = value: the marker of a typed frame is value << 1. */
	struct {
		int32_t value;
		char name[V8_FRAMETYPE_NAME]; /* "EntryFrame" */
	} frametypes[V8_MAX_FRAMETYPES];
	int nframetypes;
};

/*
 * The layout from a list of symbols (name, value): pure, for tests and
 * fuzzing. 0, -ENOENT (no v8dbg symbols: not V8) or -ENOTSUP (a V8 we do
 * not read; `why` says which and why).
 */
int v8_meta_from_syms(const struct v8_sym *syms, size_t n, struct v8_meta *m, char *why,
		      size_t why_len);

/* The same from an ELF handle (node, libnode.so, or an image in memory). */
int v8_meta_from_elf(Elf *elf, struct v8_meta *m, char *why, size_t why_len);

/*
 * The same from an open file (not closed): refused (-EPERM) when it is on
 * FUSE and not root's, -EINVAL when not a regular file.
 */
int v8_meta_read_fd(int fd, struct v8_meta *m, char *why, size_t why_len);

/* The name of frame type `type` ("EntryFrame"), or NULL. */
const char *v8_meta_frametype(const struct v8_meta *m, int32_t type);

#endif
