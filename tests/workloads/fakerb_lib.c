/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The library of fakerb (tests/integration/hostile_ruby.sh): it claims to
 * be libruby 3.1 (it exports ruby_version, rb_vm_exec and the TLS variable
 * ruby_current_ec, reached through the dynamic linker's module id as
 * libruby's is) and hands the profiler hostile memory: a VM stack whose
 * size is 2^40 words, every control frame a Ruby frame of one iseq whose
 * label is 2^40 bytes long, whose pathobj is an Array of 2^62 elements
 * naming /etc/shadow, whose line table has 2^32 - 1 entries and whose
 * instructions are 2^31 words.
 */
#include <stdint.h>

const char ruby_version[] = "3.1.2";
__thread void *ruby_current_ec;
volatile unsigned long sink;

#define STRING	0x05ull
#define ARRAY	0x07ull
#define NOEMBED (1ull << 13)
#define FRAMES	512

static uint64_t ec[8], stack[FRAMES * 8], ep_flags, iseq[4], body[32], label[5], path[5], shadow[5],
	elems[2];

/* The VM's entry: the program's time is spent here, as a Ruby's is in its VM. */
__attribute__((noinline)) void rb_vm_exec(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i;
}

void fakerb_setup(void)
{
	for (int i = 0; i < FRAMES; i++) {
		stack[8 * i + 0] = (uint64_t)(uintptr_t)&body[2]; /* pc */
		stack[8 * i + 2] = (uint64_t)(uintptr_t)iseq;
		stack[8 * i + 4] = (uint64_t)(uintptr_t)&ep_flags; /* a method's frame */
	}
	ep_flags = 0x11110001;
	iseq[0] = 0x1a | 7ull << 12; /* T_IMEMO, imemo_iseq */
	iseq[2] = (uint64_t)(uintptr_t)body;
	body[0] = 0x7fffffffull << 32; /* iseq_size */
	body[1] = (uint64_t)(uintptr_t)body;
	body[8] = (uint64_t)(uintptr_t)path;   /* location.pathobj */
	body[10] = (uint64_t)(uintptr_t)label; /* location.label */
	body[11] = 7 << 1 | 1;		       /* first_lineno */
	body[15] = (uint64_t)(uintptr_t)body;  /* insns_info.body */
	body[17] = 0xffffffff;		       /* insns_info.size */
	body[18] = (uint64_t)(uintptr_t)stack; /* succ_index_table */
	label[0] = STRING | NOEMBED;
	label[2] = 1ull << 40;
	label[3] = (uint64_t)(uintptr_t)stack;
	path[0] = ARRAY; /* not embedded: its length and elements on the heap */
	path[2] = 1ull << 62;
	path[4] = (uint64_t)(uintptr_t)elems;
	elems[0] = elems[1] = (uint64_t)(uintptr_t)shadow;
	shadow[0] = STRING | 11ull << 14;
	__builtin_memcpy(&shadow[2], "/etc/shadow", 11);
	ec[0] = (uint64_t)(uintptr_t)stack; /* vm_stack */
	ec[1] = 1ull << 40;		    /* vm_stack_size */
	ec[2] = (uint64_t)(uintptr_t)stack; /* cfp */
	ruby_current_ec = ec;
}
