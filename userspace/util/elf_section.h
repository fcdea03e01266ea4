/* SPDX-License-Identifier: BSD-2-Clause */
/* A section of an ELF file by name, or bytes of its code, for readers of one section. */
#ifndef BPFPROF_UTIL_ELF_SECTION_H
#define BPFPROF_UTIL_ELF_SECTION_H

#include <gelf.h>

/* The first section called `name`, its header in *shdr; NULL when there is none. */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr);

/* The executable section holding ELF address `vaddr`, its header in *shdr; NULL when none. */
Elf_Scn *elf_code_section_at(Elf *elf, uint64_t vaddr, GElf_Shdr *shdr);

/*
 * The `len` bytes of code at ELF address `vaddr`, all in one executable
 * section, into buf: 0, or -ENOENT (no such code) or -EIO. Only those bytes
 * are read (a raw chunk, kept by libelf until elf_end), never the whole
 * section: the file may be another user's, with a .text of any size.
 */
int elf_read_code(Elf *elf, uint64_t vaddr, void *buf, size_t len);

/*
 * Code read a few bytes at a time at rising addresses (a prologue per
 * function), through aligned 64 KiB windows that are one raw chunk each:
 * libelf searches every chunk it holds at each new one, so a chunk per read
 * cost 200 ms for the go command's 9,000 prologues (2 ms of other work),
 * 4 KiB windows 4 ms. At most ELF_CODE_MAX_WINDOWS windows (16 MiB, read
 * and kept until elf_end) per reader, then -E2BIG.
 */
#define ELF_CODE_WINDOW	     65536u
#define ELF_CODE_MAX_WINDOWS 256u

struct elf_code_reader {
	Elf *elf;
	uint64_t start, end; /* the window's ELF addresses [start, end) */
	const uint8_t *bytes;
	unsigned windows;
};

/* As elf_read_code, through r's window (len <= ELF_CODE_WINDOW): also -E2BIG. */
int elf_code_reader_read(struct elf_code_reader *r, uint64_t vaddr, void *buf, size_t len);

/*
 * ELF vaddr - file offset of the executable segments: what a PC's offset in
 * the file is moved by. -EINVAL when there is none, or when two disagree.
 */
int elf_exec_bias(Elf *elf, int64_t *bias);

#endif
