// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ruby frames (issue 40), as any process may fake them: an iseq's line
 * table and its succinct index (lang/ruby_lines.c), and the iseq, its
 * Strings and its pathobj Array read from the process's memory
 * (lang/ruby_procs.c), the input being that memory; an input that is an
 * ELF file is read as a libruby (lang/ruby_layout.c: its symbols, TLS
 * relocations, rb_vm_exec's calls and .eh_frame_hdr's index).
 */
#include <string.h>

#include <libelf.h>

#include "fuzz_util.h"
#include "util/elf_open.h"
#include "lang/ruby_layout.h"
#include "lang/ruby_lines.h"
#include "lang/ruby_procs.h"

#define BASE 0x10000

static struct fuzz_image image;

static ssize_t read_input(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	(void)pid;
	return fuzz_read_image(&image, addr, buf, len) ? -1 : (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ruby_procs *procs;
	const struct ruby_code_layout *code;
	struct rb_layout frames;
	struct ruby_location loc;
	struct ruby_lines l;
	uint32_t pos, n;
	uint64_t pc;

	if (size < 16)
		return 0;
	if (!memcmp(data, "\177ELF", 4)) {
		struct ruby_info info;
		int fd = fuzz_memfd(data, size);
		Elf *elf;

		elf_version(EV_CURRENT);
		if (fd >= 0 && (elf = elf_open_fd(fd))) {
			ruby_info_read(elf, &info);
			elf_end(elf);
		}
		if (fd >= 0)
			close(fd);
		return 0;
	}
	memcpy(&pos, data, 4);
	memcpy(&n, data + 4, 4);
	memcpy(&pc, data + 8, 8);
	/* The line table alone: n entries of 12 bytes, then the index, from the same bytes. */
	l = (struct ruby_lines){ data + 16, n % 64, 12, 0, data + 16, size - 16 };
	if ((size_t)l.n * 12 <= size - 16)
		ruby_line_at(&l, pos);
	/* The whole input as memory at BASE, the iseq at its start. */
	if (!procs && !(procs = ruby_procs_new()))
		return 0;
	image = (struct fuzz_image){ data, size, BASE };
	ruby_procs_set_reader(procs, read_input, NULL);
	ruby_layout_for(0x030102, &frames, &code);
	ruby_procs_add(procs, 1, 0, code, "/cwd");
	ruby_procs_resolve(procs, 1, BASE + 16, pc, &loc);
	ruby_procs_resolve(procs, 1, BASE + (pos % size), pc, &loc);
	ruby_procs_forget(procs, 1);
	return 0;
}
