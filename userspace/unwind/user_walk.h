/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The user stack of a thread that is not running, walked from userspace
 * with the same rows and the same rules as the BPF unwinder
 * (bpf/unwind.bpf.h), for a thread the kernel cannot walk for us: another
 * task's memory is out of a BPF program's reach, and a thread blocked since
 * before the recording is never switched out while we watch. Its registers
 * come from a task iterator; its memory from process_vm_readv().
 */
#ifndef BPFPROF_UNWIND_USER_WALK_H
#define BPFPROF_UNWIND_USER_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "compact_table.h"

/* The executable mapping holding a PC, and its file's table (none: frame pointers). */
struct user_walk_mapping {
	uint64_t start, end;
	int64_t map_to_file;	   /* ELF address = PC + map_to_file */
	struct compact_view table; /* npages 0: none */
};

struct user_walk_ops {
	/* Read len bytes at addr of the walked process: 0, or -errno. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* The mapping holding pc into *out: 0, or -ENOENT when none is known. */
	int (*mapping)(void *ctx, uint64_t pc, struct user_walk_mapping *out);
	void *ctx;
};

/*
 * Walk from the registers (pc, sp, fp, ax) the thread entered the kernel
 * with: up to `max` return addresses into ips, the innermost first, by the
 * rules of bpf/unwind.bpf.h (every step moves up the stack but across a
 * known stack switch; a clone's child is a root). Returns how many; *end
 * says why the walk stopped (enum ustack_end).
 */
uint32_t user_walk(const struct user_walk_ops *ops, uint64_t pc, uint64_t sp, uint64_t fp,
		   uint64_t ax, uint64_t *ips, uint32_t max, uint8_t *end);
/*
 * The same walk resumed at a frame other than the innermost: with
 * `pc_is_return` pc is a return address (looked up at pc - 1, and no
 * clone's child: ax is not used), as frame n > 0 of the BPF walk is
 * (capture/stack_finish.c finishes a sample's stack from its copy).
 */
uint32_t user_walk_from(const struct user_walk_ops *ops, uint64_t pc, uint64_t sp, uint64_t fp,
			uint64_t ax, bool pc_is_return, uint64_t *ips, uint32_t max, uint8_t *end);

#endif
