// SPDX-License-Identifier: BSD-2-Clause
/* See v8_meta.h. */
#include "v8_meta.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../util/elf_open.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

#define VERSION_MAJOR  "_ZN2v88internal7Version6major_E"
#define VERSION_MINOR  "_ZN2v88internal7Version6minor_E"
#define VERSION_BUILD  "_ZN2v88internal7Version6build_E"
#define VERSION_PATCH  "_ZN2v88internal7Version6patch_E"
#define BLOB_CODE      "v8_Default_embedded_blob_code_"
#define BLOB_SIZE      "v8_Default_embedded_blob_code_size_"
#define BYTECODE_SIZES "_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE"
/* An embedded blob larger than this is no V8's (node 20's is 1.6 MB). */
#define MAX_BLOB_SIZE  (64u << 20)
/* Offsets and types past this are no V8's: a bound for what a fake file says. */
#define MAX_FIELD      4096

/* A field of struct v8_meta filled from the first symbol of its list that the file has. */
struct field {
	size_t off; /* in struct v8_meta, an int32_t */
	const char *names[3];
	bool required;
};

#define F(member) offsetof(struct v8_meta, member)

static const struct field fields[] = {
	{ F(fp_context), { "v8dbg_off_fp_context_or_frame_type", "v8dbg_off_fp_context" }, true },
	{ F(fp_function), { "v8dbg_off_fp_function" }, true },
	{ F(fp_bytecode_array), { "v8dbg_off_fp_bytecode_array" }, true },
	{ F(fp_bytecode_offset), { "v8dbg_off_fp_bytecode_offset" }, true },
	{ F(t_jsfunc_first),
	  { "v8dbg_FirstJSFunctionType", "v8dbg_type_JSFunction__JS_FUNCTION_TYPE" },
	  true },
	{ F(t_jsfunc_last), { "v8dbg_LastJSFunctionType" }, false },
	{ F(t_sfi), { "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE" }, true },
	{ F(t_code), { "v8dbg_type_Code__CODE_TYPE" }, true },
	{ F(t_script), { "v8dbg_type_Script__SCRIPT_TYPE" }, true },
	{ F(t_scope_info), { "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE" }, true },
	{ F(t_bytecode_array), { "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE" }, true },
	{ F(t_byte_array), { "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE" }, true },
	{ F(t_fixed_array), { "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE" }, true },
	{ F(t_weak_fixed_array), { "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE" }, false },
	{ F(t_first_nonstring), { "v8dbg_FirstNonstringType" }, true },
	{ F(str_repr_mask), { "v8dbg_StringRepresentationMask" }, true },
	{ F(str_enc_mask), { "v8dbg_StringEncodingMask" }, true },
	{ F(str_seq), { "v8dbg_SeqStringTag" }, true },
	{ F(str_cons), { "v8dbg_ConsStringTag" }, true },
	{ F(str_sliced), { "v8dbg_SlicedStringTag" }, true },
	{ F(str_thin), { "v8dbg_ThinStringTag" }, true },
	{ F(str_one_byte), { "v8dbg_OneByteStringTag" }, true },
	{ F(obj_map), { "v8dbg_class_HeapObject__map__Map" }, true },
	{ F(map_type), { "v8dbg_class_Map__instance_type__uint16_t" }, true },
	{ F(fn_shared), { "v8dbg_class_JSFunction__shared__SharedFunctionInfo" }, true },
	{ F(fn_code),
	  { "v8dbg_class_JSFunction__code__Code", "v8dbg_class_JSFunction__code__Object" },
	  false },
	{ F(sfi_name), { "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object" }, true },
	{ F(sfi_data), { "v8dbg_class_SharedFunctionInfo__function_data__Object" }, true },
	{ F(sfi_script),
	  { "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	    "v8dbg_class_SharedFunctionInfo__script_or_debug_info__Object" },
	  true },
	{ F(script_source), { "v8dbg_class_Script__source__Object" }, false },
	{ F(script_name), { "v8dbg_class_Script__name__Object" }, true },
	{ F(script_line_ends), { "v8dbg_class_Script__line_ends__Object" }, true },
	{ F(str_length), { "v8dbg_class_String__length__int32_t" }, true },
	{ F(seq_chars), { "v8dbg_class_SeqOneByteString__chars__char" }, true },
	{ F(cons_first), { "v8dbg_class_ConsString__first__String" }, true },
	{ F(cons_second), { "v8dbg_class_ConsString__second__String" }, true },
	{ F(thin_actual), { "v8dbg_class_ThinString__actual__String" }, true },
	{ F(sliced_parent), { "v8dbg_class_SlicedString__parent__String" }, true },
	{ F(sliced_offset), { "v8dbg_class_SlicedString__offset__SMI" }, true },
	{ F(fa_length), { "v8dbg_class_FixedArrayBase__length__SMI" }, true },
	{ F(fa_data), { "v8dbg_class_FixedArray__data__uintptr_t" }, true },
	{ F(ba_spt), { "v8dbg_class_BytecodeArray__source_position_table__Object" }, false },
	{ F(ba_data), { "v8dbg_class_BytecodeArray__data__uintptr_t" }, false },
	{ F(code_deopt), { "v8dbg_class_Code__deoptimization_data__FixedArray" }, false },
	{ F(code_spt), { "v8dbg_class_Code__source_position_table__ByteArray" }, false },
	{ F(code_start), { "v8dbg_class_Code__instruction_start__uintptr_t" }, false },
	{ F(code_flags), { "v8dbg_class_Code__flags__uint32_t" }, false },
	{ F(code_size), { "v8dbg_class_Code__instruction_size__int" }, false },
	{ F(code_bytecode),
	  { "v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject" },
	  false },
	{ F(kind_mask), { "v8dbg_CodeKindFieldMask" }, false },
	{ F(kind_shift), { "v8dbg_CodeKindFieldShift" }, false },
	{ F(kind_interpreted), { "v8dbg_CodeKindInterpretedFunction" }, false },
	{ F(kind_baseline), { "v8dbg_CodeKindBaseline" }, false },
	{ F(deopt_literals), { "v8dbg_DeoptimizationDataLiteralArrayIndex" }, false },
	{ F(deopt_sfi), { "v8dbg_DeoptimizationDataSharedFunctionInfoIndex" }, false },
	{ F(deopt_inlining), { "v8dbg_DeoptimizationDataInliningPositionsIndex" }, false },
};

#undef F

static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static const struct v8_sym *find(const struct v8_sym *syms, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

static int32_t *member(struct v8_meta *m, size_t off)
{
	return (int32_t *)((char *)m + off);
}

/* Tagging: V8 without pointer compression, a Smi in a word's upper half. */
static int check_tagging(const struct v8_sym *syms, size_t n, const struct v8_meta *m, char *why,
			 size_t len)
{
	static const struct {
		const char *name;
		int64_t want;
	} tags[] = {
		{ "v8dbg_SmiShiftSize", 31 },	  { "v8dbg_SmiTag", 0 },
		{ "v8dbg_SmiTagMask", 1 },	  { "v8dbg_HeapObjectTag", 1 },
		{ "v8dbg_HeapObjectTagMask", 3 },
	};

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const struct v8_sym *s = find(syms, n, tags[i].name);

		if (!s) {
			say(why, len, "V8 %u.%u.%u exports no %s", m->major, m->minor, m->build,
			    tags[i].name + 6);
			return -ENOTSUP;
		}
		if (s->value != tags[i].want) {
			/* SmiShiftSize 0: 31-bit Smis, the tagging of pointer-compressed builds. */
			say(why, len,
			    "V8 %u.%u.%u has %s %lld (pointer compression or another tagging): "
			    "only %s %lld is read",
			    m->major, m->minor, m->build, tags[i].name + 6, (long long)s->value,
			    tags[i].name + 6, (long long)tags[i].want);
			return -ENOTSUP;
		}
	}
	return 0;
}

/* What this V8 does not export, from what its versions are known to hold. */
static int derive(struct v8_meta *m, char *why, size_t len)
{
	uint32_t v = m->version;

	/*
	 * JSFunction and the classes derived from it have types in a range
	 * from JS_FUNCTION_TYPE: 15 types since V8 9.6.138 (class
	 * constructors, v8 commit 1cd7a582). Older V8s are not read.
	 */
	if (m->t_jsfunc_last < 0) {
		if (v < V8_VERSION(9, 6, 138)) {
			say(why, len, "V8 %u.%u.%u is older than 9.6.138, the oldest read",
			    m->major, m->minor, m->build);
			return -ENOTSUP;
		}
		m->t_jsfunc_last = m->t_jsfunc_first + 14;
	}
	/*
	 * JSFunction::code, not exported by 11.3: three words after `shared`
	 * from V8 8.4 to 11.7.367, one word before it from 11.7.368.
	 */
	if (m->fn_code < 0)
		m->fn_code = v < V8_VERSION(11, 7, 368) ? m->fn_shared + 24 : m->fn_shared - 8;
	/*
	 * Code's instruction start, flags and size went unexported in V8 11.x
	 * (11.3 exports only relocation_info, deoptimization_data and the
	 * position table). From 11.1.204 (Code separated from its
	 * instructions) to 11.7.367 they follow the position table: a
	 * pointer to the instructions two words after it, the u32 flags one
	 * word later, then (until 11.4.58, v8 commit cb8be519 merged them)
	 * u16 builtin id and u16 kind-specific flags, then the i32 size.
	 */
	m->code_start_ptr = v >= V8_VERSION(11, 1, 204);
	if (m->code_start < 0 || m->code_flags < 0 || m->code_size < 0) {
		if (m->code_spt < 0 || v < V8_VERSION(11, 1, 204) || v >= V8_VERSION(11, 7, 368)) {
			say(why, len,
			    "V8 %u.%u.%u exports no layout of Code and it is known only for "
			    "11.1.204 to 11.7.367",
			    m->major, m->minor, m->build);
			return -ENOTSUP;
		}
		if (m->code_start < 0)
			m->code_start = m->code_spt + 16;
		if (m->code_flags < 0)
			m->code_flags = m->code_start + 8;
		if (m->code_size < 0)
			m->code_size = m->code_flags + 4 + (v < V8_VERSION(11, 4, 59) ? 4 : 0);
	}
	/* Deoptimization data precedes the position table (V8 7.2 to 12.x). */
	if (m->code_deopt < 0 && m->code_spt >= 8)
		m->code_deopt = m->code_spt - 8;
	/* Baseline code keeps its BytecodeArray where optimized code keeps its deopt data (11.x).
	 */
	if (m->code_bytecode < 0)
		m->code_bytecode = m->code_deopt;
	if (m->code_deopt < 0 || m->code_spt < 0) {
		say(why, len, "V8 %u.%u.%u exports no position table of Code", m->major, m->minor,
		    m->build);
		return -ENOTSUP;
	}
	/* Script::source: one word before the name (V8 8.4 and later). */
	if (m->script_source < 0)
		m->script_source = m->script_name - 8;
	/*
	 * BytecodeArray's position table: unexported since V8 9.4, three
	 * words after the length (constant pool, handler table before it);
	 * the bytecodes follow it after two i32, an i16 and... 14 bytes in
	 * all (V8 8.4 to 11.x). A data offset exported but elsewhere means
	 * another layout: refused.
	 */
	if (m->ba_spt < 0)
		m->ba_spt = m->fa_length + 24;
	if (m->ba_data < 0)
		m->ba_data = m->ba_spt + 8 + 14;
	if (m->ba_data != m->ba_spt + 8 + 14) {
		say(why, len, "V8 %u.%u.%u: BytecodeArray's layout is not the one read", m->major,
		    m->minor, m->build);
		return -ENOTSUP;
	}
	/* Code kinds: mask 15, baseline 11 (V8 9.0.240 and later; exported by 11.3). */
	if (m->kind_mask < 0 || m->kind_shift < 0 || m->kind_baseline < 0) {
		m->kind_mask = 15;
		m->kind_shift = 0;
		m->kind_baseline = 11;
	}
	if (m->kind_interpreted < 0)
		m->kind_interpreted = m->kind_baseline - 1;
	/* Deoptimization data: literals 2, shared info 6, inlining positions 7 (V8 7.x to 12.2). */
	if (m->deopt_literals < 0)
		m->deopt_literals = 2;
	if (m->deopt_sfi < 0)
		m->deopt_sfi = 6;
	if (m->deopt_inlining < 0)
		m->deopt_inlining = m->deopt_sfi + 1;
	/*
	 * ScopeInfo (a HeapObject since V8 9.1.71): flags, parameter count,
	 * context-local count, then the context locals' names and infos; its
	 * function name follows (OTel's heuristic, read for V8 < 12.8.44).
	 */
	m->scope_ncontext_locals = 2;
	m->scope_first_vars = 3;
	if (m->t_weak_fixed_array < 0)
		m->t_weak_fixed_array = m->t_fixed_array;
	return 0;
}

/* Every offset and type within bounds a real V8 keeps: a fake file's values go no further. */
static int check_bounds(const struct v8_meta *m, char *why, size_t len)
{
	static const size_t fps[] = { offsetof(struct v8_meta, fp_context),
				      offsetof(struct v8_meta, fp_function),
				      offsetof(struct v8_meta, fp_bytecode_array),
				      offsetof(struct v8_meta, fp_bytecode_offset) };

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int32_t x = *member((struct v8_meta *)m, fields[i].off);
		bool fp = false;

		for (size_t k = 0; k < 4; k++)
			fp |= fps[k] == fields[i].off;
		if (fp ? (x < -256 || x > 256 || (x & 7)) : (x < 0 || x > MAX_FIELD * 4)) {
			say(why, len, "%s is %d, out of bounds", fields[i].names[0] + 6, x);
			return -ENOTSUP;
		}
	}
	if (m->t_jsfunc_last < m->t_jsfunc_first || m->t_jsfunc_last - m->t_jsfunc_first > 64 ||
	    m->kind_mask > 0xffff || m->kind_shift > 31 || m->deopt_inlining > 64 ||
	    m->deopt_literals > 64 || m->deopt_sfi > 64) {
		say(why, len, "type or index ranges out of bounds");
		return -ENOTSUP;
	}
	return 0;
}

int v8_meta_from_syms(const struct v8_sym *syms, size_t n, struct v8_meta *m, char *why,
		      size_t why_len)
{
	const struct v8_sym *s;
	size_t ndbg = 0;
	int err;

	memset(m, 0, sizeof(*m));
	if (why && why_len)
		why[0] = '\0';
	for (size_t i = 0; i < n; i++)
		ndbg += !strncmp(syms[i].name, "v8dbg_", 6);
	if (!ndbg) {
		say(why, why_len, "no v8dbg_* symbols");
		return -ENOENT;
	}
	if ((s = find(syms, n, VERSION_MAJOR)))
		m->major = (unsigned)s->value & 0xff;
	if ((s = find(syms, n, VERSION_MINOR)))
		m->minor = (unsigned)s->value & 0xff;
	if ((s = find(syms, n, VERSION_BUILD)))
		m->build = (unsigned)s->value & 0xffff;
	if ((s = find(syms, n, VERSION_PATCH)))
		m->patch = (unsigned)s->value & 0xffff;
	m->version = V8_VERSION(m->major, m->minor, m->build);
	if (!m->major) {
		say(why, why_len, "no V8 version (v8::internal::Version)");
		return -ENOTSUP;
	}
	err = check_tagging(syms, n, m, why, why_len);
	if (err)
		return err;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		int32_t *x = member(m, fields[i].off);

		*x = -1;
		for (int k = 0; k < 3 && fields[i].names[k]; k++) {
			s = find(syms, n, fields[i].names[k]);
			if (s) {
				*x = (int32_t)s->value;
				break;
			}
		}
		if (*x == -1 && fields[i].required) {
			say(why, why_len, "V8 %u.%u.%u exports no %s", m->major, m->minor, m->build,
			    fields[i].names[0] + 6);
			return -ENOTSUP;
		}
	}
	err = derive(m, why, why_len);
	if (!err)
		err = check_bounds(m, why, why_len);
	if (err)
		return err;

	for (size_t i = 0; i < n && m->nframetypes < V8_MAX_FRAMETYPES; i++) {
		const char *name = syms[i].name;

		if (strncmp(name, "v8dbg_frametype_", 16) || syms[i].value < 0 ||
		    syms[i].value > 255)
			continue;
		m->frametypes[m->nframetypes].value = (int32_t)syms[i].value;
		snprintf(m->frametypes[m->nframetypes].name, V8_FRAMETYPE_NAME, "%s", name + 16);
		m->nframetypes++;
	}
	s = find(syms, n, BLOB_CODE);
	if (s && s->value > 0) {
		const struct v8_sym *size = find(syms, n, BLOB_SIZE);

		if (size && size->value > 0 && (uint64_t)size->value <= MAX_BLOB_SIZE) {
			m->blob_lo = (uint64_t)s->value;
			m->blob_hi = m->blob_lo + (uint64_t)size->value;
		}
	}
	return 0;
}

const char *v8_meta_frametype(const struct v8_meta *m, int32_t type)
{
	for (int i = 0; i < m->nframetypes; i++)
		if (m->frametypes[i].value == type)
			return m->frametypes[i].name;
	return NULL;
}

/* ---- reading the ELF file ------------------------------------------------------ */

/* Which symbols are kept: V8's metadata, its version and the builtins blob. */
static bool wanted(const char *name)
{
	return !strncmp(name, "v8dbg_", 6) || !strncmp(name, "_ZN2v88internal7Version6", 24) ||
	       !strcmp(name, BLOB_CODE) || !strcmp(name, BLOB_SIZE);
}

/* Symbols whose value is their address, not the int32 they hold. */
static bool address_only(const char *name)
{
	return !strcmp(name, BLOB_CODE);
}

/* The int32 at a symbol's address, read within its section (a .bss one holds 0). */
static int sym_int(Elf *elf, const GElf_Sym *sym, int32_t *out)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;

	*out = 0;
	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr || sh.sh_size < 4 ||
	    sym->st_value - sh.sh_addr > sh.sh_size - 4)
		return -EINVAL;
	if (sh.sh_type == SHT_NOBITS)
		return 0;
	d = elf_getdata_rawchunk(elf, (int64_t)(sh.sh_offset + (sym->st_value - sh.sh_addr)), 4,
				 ELF_T_BYTE);
	if (!d || !d->d_buf || d->d_size < 4)
		return -EINVAL;
	memcpy(out, d->d_buf, 4);
	return 0;
}

struct collected {
	struct v8_sym syms[V8_MAX_SYMS];
	char *names[V8_MAX_SYMS];
	size_t n;
	bool full;	   /* V8_MAX_SYMS reached: a fake file's flood */
	uint64_t blob_off; /* the blob's file offset */
	uint8_t sizes[3 * 256];
	size_t nsizes; /* bytes of kBytecodeSizes read */
};

/* kBytecodeSizes: 3 operand scales of at most 256 bytecodes, read within its section. */
static void bytecode_sizes(Elf *elf, const GElf_Sym *sym, struct collected *c)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;

	if (c->nsizes || !sym->st_size || sym->st_size % 3 || sym->st_size > sizeof(c->sizes) ||
	    !scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    sym->st_value < sh.sh_addr || sh.sh_size < sym->st_size ||
	    sym->st_value - sh.sh_addr > sh.sh_size - sym->st_size)
		return;
	d = elf_getdata_rawchunk(elf, (int64_t)(sh.sh_offset + (sym->st_value - sh.sh_addr)),
				 sym->st_size, ELF_T_BYTE);
	if (!d || !d->d_buf || d->d_size != sym->st_size)
		return;
	memcpy(c->sizes, d->d_buf, sym->st_size);
	c->nsizes = sym->st_size;
}

static bool have(const struct collected *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->syms[i].name, name))
			return true;
	return false;
}

/* The wanted symbols of every table of type `type`; the first of a name wins. */
static void collect(Elf *elf, Elf64_Word type, struct collected *c)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) && !c->full) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    sh.sh_entsize != sizeof(Elf64_Sym))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = data->d_size / sizeof(Elf64_Sym);
		for (size_t i = 0; i < n; i++) {
			const char *name;
			GElf_Sym sym;
			int32_t v;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, BYTECODE_SIZES)) {
				bytecode_sizes(elf, &sym, c);
				continue;
			}
			if (!name || !wanted(name) || have(c, name))
				continue;
			if (c->n == V8_MAX_SYMS) {
				c->full = true;
				return;
			}
			if (address_only(name)) {
				Elf_Scn *at = elf_getscn(elf, sym.st_shndx);
				GElf_Shdr ash;

				c->syms[c->n].value = (int64_t)sym.st_value;
				if (at && gelf_getshdr(at, &ash) && ash.sh_type != SHT_NOBITS &&
				    sym.st_value >= ash.sh_addr &&
				    sym.st_value - ash.sh_addr < ash.sh_size)
					c->blob_off = ash.sh_offset + (sym.st_value - ash.sh_addr);
			} else if (sym_int(elf, &sym, &v))
				continue;
			else
				c->syms[c->n].value = v;
			c->names[c->n] = strdup(name);
			if (!c->names[c->n])
				return;
			c->syms[c->n].name = c->names[c->n];
			c->n++;
		}
	}
}

int v8_meta_from_elf(Elf *elf, struct v8_meta *m, char *why, size_t why_len)
{
	struct collected *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	/*
	 * The metadata is in .dynsym (node 20); builds that moved it out
	 * (nodejs/node#56290) and the blob's symbols (always local) are in
	 * .symtab.
	 */
	collect(elf, SHT_DYNSYM, c);
	collect(elf, SHT_SYMTAB, c);
	if (c->full) {
		say(why, why_len, "more than %d V8 symbols", V8_MAX_SYMS);
		err = -ENOTSUP;
	} else {
		err = v8_meta_from_syms(c->syms, c->n, m, why, why_len);
		if (!err && m->blob_lo)
			m->blob_file_off = c->blob_off;
		if (!err && c->nsizes) {
			m->nbytecodes = (int)(c->nsizes / 3);
			for (int k = 0; k < 3; k++)
				memcpy(m->bytecode_sizes[k], c->sizes + k * m->nbytecodes,
				       (size_t)m->nbytecodes);
		}
	}
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c);
	return err;
}

int v8_meta_read_fd(int fd, struct v8_meta *m, char *why, size_t why_len)
{
	struct statfs fs;
	struct stat st;
	Elf *elf;
	int err;

	memset(m, 0, sizeof(*m));
	if (fstat(fd, &st) || fstatfs(fd, &fs))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* A FUSE server that is not root may never answer a read: the file is not read. */
	if (fs.f_type == FUSE_SUPER_MAGIC && st.st_uid != 0) {
		say(why, why_len, "a FUSE file of uid %u", (unsigned)st.st_uid);
		return -EPERM;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_open_fd_stat(fd, &st);
	if (!elf)
		return errno ? -errno : -EINVAL;
	err = elf_kind(elf) == ELF_K_ELF && gelf_getclass(elf) == ELFCLASS64
		      ? v8_meta_from_elf(elf, m, why, why_len)
		      : -ENOEXEC;
	elf_end(elf);
	return err;
}
