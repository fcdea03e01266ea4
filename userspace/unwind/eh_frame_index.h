/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where each FDE of a binary's .eh_frame starts, for cfi_table. The linker
 * indexes them in .eh_frame_hdr, but gcc does not ask for that index when
 * it links -static (non-PIE): static glibc finds its frames by registering
 * .eh_frame at start-up instead. So a static binary has its CFI and no
 * index, and the index is built here by walking .eh_frame's records.
 */
#ifndef BPFPROF_UNWIND_EH_FRAME_INDEX_H
#define BPFPROF_UNWIND_EH_FRAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The largest .eh_frame (and .eh_frame_hdr) a table is built from: 64 MiB.
 * The largest real ones are a tenth of it (libclang-cpp, libLLVM: 5.5 MB,
 * 1.07M rows), and real code's CFI this size would hold several times the
 * rows a file's budget allows. A user's file is read, not mapped
 * (util/elf_open.h: mapped, they could truncate it under us), so a bigger
 * section would cost its whole size in memory before its budget said no.
 */
#define EH_FRAME_MAX_BYTES (64u << 20)

/*
 * The initial locations (ELF virtual addresses) of every FDE in `data`, the
 * contents of .eh_frame loaded at `vaddr`, in the order met; *out is
 * malloc'd (NULL when there are none). Walking stops at a zero terminator
 * or the end of the data; a malformed record (a length past the end, a
 * CIE pointer to no CIE, an encoding it does not read) ends the walk with
 * -EINVAL, nothing kept. Returns 0, -EINVAL, -ENOTSUP (a pointer encoding
 * other than absolute or PC-relative) or -ENOMEM.
 */
int eh_frame_fde_starts(const uint8_t *data, size_t size, uint64_t vaddr, uint64_t **out,
			size_t *count);

/* An FDE as an index names it: its initial location and its record's offset in .eh_frame. */
struct eh_fde_ref {
	uint64_t start;
	size_t off;
};

/*
 * As eh_frame_fde_starts, with each FDE's offset (the records cfi_table
 * reads), and -E2BIG, nothing kept, at the FDE after `max`: the walk stops
 * there, before the rest of a hostile section is listed.
 */
int eh_frame_fde_refs(const uint8_t *data, size_t size, uint64_t vaddr, size_t max,
		      struct eh_fde_ref **out, size_t *count);

/* Bytes being read, never past `end`. */
struct eh_cursor {
	const uint8_t *p, *end;
};

bool eh_uleb(struct eh_cursor *c, uint64_t *v);
bool eh_sleb(struct eh_cursor *c, int64_t *v);

/*
 * A pointer in DW_EH_PE encoding `enc` at the cursor, whose own address is
 * `here` (absolute and PC-relative only). 0, -EINVAL (truncated), -ENOTSUP.
 */
int eh_read_pointer(struct eh_cursor *c, uint8_t enc, uint64_t here, uint64_t *out);

/* What the CFI programs of a CIE's FDEs need from it. */
struct eh_cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_encoding; /* DW_EH_PE_*: of the FDEs' locations and DW_CFA_set_loc */
	bool signal;	      /* 'S': its frames are signal frames */
	bool aug_data;	      /* 'z': FDEs have augmentation data to skip */
	const uint8_t *insns, *insns_end; /* its initial instructions */
};

/* The CIE whose record is at `off` of .eh_frame (`data`, loaded at `vaddr`). 0, -EINVAL, -ENOTSUP.
 */
int eh_frame_cie(const uint8_t *data, size_t size, uint64_t vaddr, size_t off, struct eh_cie *out);

struct eh_fde {
	size_t cie_off; /* its CIE's record */
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
};

/*
 * The FDE whose record is at `off`; `cie` is its CIE's, read here unless
 * *cie_off already names it (then reused: one CIE serves many FDEs).
 * 0, -EINVAL (not an FDE, truncated, an empty range), -ENOTSUP.
 */
int eh_frame_fde(const uint8_t *data, size_t size, uint64_t vaddr, size_t off, struct eh_fde *out,
		 struct eh_cie *cie, size_t *cie_off);

#endif
