// SPDX-License-Identifier: BSD-2-Clause
/*
 * The userspace walk of a sleeping thread's user stack (unwind/user_walk.c)
 * on a made-up process: rows with each CFA rule, a file without rows (frame
 * pointers), a thread root, memory that cannot be read, steps that do
 * not move up the stack and their bounds, a Go row that restores BP (issue 37).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "capture/stack_finish.h"
#include "unwind/user_walk.h"
#include "test.h"

#define STACK_BASE 0x7000u

static uint64_t stack[64];
static bool stack_unreadable;

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (stack_unreadable || addr < STACK_BASE || addr + len > STACK_BASE + sizeof(stack))
		return -EFAULT;
	memcpy(buf, (const char *)stack + (addr - STACK_BASE), len);
	return 0;
}

/* The file at [0x1000, 0x2000) is linked at 0x101000; [0x3000, 0x4000) has no CFI. */
static const struct cfi_row rows[] = {
	{ 0x101000, 16, 0, UNWIND_CFA_SP, UNWIND_FP_SAME, 0 },	    /* leaf */
	{ 0x101100, 16, -16, UNWIND_CFA_FP, UNWIND_FP_SAVED, 0 },   /* uses rbp */
	{ 0x101200, 0, 0, UNWIND_CFA_ROOT, UNWIND_FP_UNDEF, 0 },    /* _start */
	{ 0x101300, 0, 0, UNWIND_CFA_NONE, UNWIND_FP_UNDEF, 0 },    /* a gap */
	{ 0x101400, 8, 0, UNWIND_CFA_CLONE, UNWIND_FP_SAME, 0 },    /* clone's return */
	{ 0x101500, 0, 0, UNWIND_CFA_SWITCH, UNWIND_FP_SAME, 0 },   /* systemstack */
	{ 0x101600, 0x30, -16, UNWIND_CFA_SP, UNWIND_FP_SAVED, 0 }, /* Go, framed */
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The rows laid out compact, as the store lays them out for the BPF unwinder. */
static struct compact_rules rules;
static union unwind_slot slots[16];
static struct compact_view table;

static void lay_out_rows(void)
{
	struct cfi_table t = { .rows = (struct cfi_row *)rows, .len = NROWS };
	struct compact_table c;

	CHECK_EQ_INT(compact_rules_init(&rules, NULL, UNWIND_MAX_RULES), 0);
	CHECK_EQ_INT(compact_table_build(&t, &rules, sizeof(slots) / sizeof(slots[0]), &c), 0);
	memcpy(slots, c.pages, c.npages * sizeof(*c.pages));
	memcpy(slots[c.npages].row, c.rows, c.nrows * sizeof(*c.rows));
	table = compact_view_of(slots, c.base, c.npages, rules.data);
	compact_table_free(&c);
}

static int find_mapping(void *ctx, uint64_t pc, struct user_walk_mapping *out)
{
	(void)ctx;
	if (pc >= 0x1000 && pc < 0x2000) {
		*out = (struct user_walk_mapping){ 0x1000, 0x2000, 0x100000, table };
		return 0;
	}
	if (pc >= 0x3000 && pc < 0x4000) {
		*out = (struct user_walk_mapping){ 0x3000, 0x4000, 0, { 0 } };
		return 0;
	}
	return -ENOENT;
}

static const struct user_walk_ops ops = { read_mem, find_mapping, NULL };

/* user_walk(&ops, ARGS...) gives N frames and says it ended in END. */
#define CHECK_WALK(n, end, ...)                                           \
	do {                                                              \
		uint8_t walk_end = 0;                                     \
                                                                          \
		CHECK_EQ_INT(user_walk(&ops, __VA_ARGS__, &walk_end), n); \
		CHECK_EQ_INT(walk_end, end);                              \
	} while (0)

static void put(uint64_t addr, uint64_t value)
{
	stack[(addr - STACK_BASE) / 8] = value;
}

/*
 * leaf (SP rule) <- rbp user <- a function without CFI (frame pointer)
 * <- _start: every rule once, ending at the root.
 */
static void build_stack(void)
{
	memset(stack, 0, sizeof(stack));
	stack_unreadable = false;
	put(0x7008, 0x1150); /* leaf's return address: CFA 0x7010 */
	put(0x7048, 0x3020); /* rbp user: CFA = fp 0x7040 + 16, its caller's FP at CFA - 16 */
	put(0x7040, 0x7060);
	put(0x7060, 0x7080); /* the no-CFI function's frame: [fp] = caller FP, [fp + 8] = RA */
	put(0x7068, 0x1210);
}

static void walks_every_rule_to_the_root(void)
{
	uint64_t ips[16];
	uint8_t end = 0;
	uint32_t n;

	build_stack();
	n = user_walk(&ops, 0x1010, 0x7000, 0x7040, 1, ips, 16, &end);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(ips[0], 0x1010);
	CHECK_EQ_INT(ips[1], 0x1150);
	CHECK_EQ_INT(ips[2], 0x3020);
	CHECK_EQ_INT(ips[3], 0x1210);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
}

static void stops_where_it_must(void)
{
	uint64_t ips[16];
	uint8_t end = 0;

	build_stack();
	/* The limit: as many frames as asked, and said so. */
	CHECK_WALK(2, USTACK_END_LIMIT, 0x1010, 0x7000, 0x7040, 1, ips, 2);
	/* Memory that cannot be read where the CFI points. */
	stack_unreadable = true;
	CHECK_WALK(1, USTACK_END_UNREADABLE, 0x1010, 0x7000, 0x7040, 1, ips, 16);
	stack_unreadable = false;
	/* Code in no known mapping and no frame pointer. */
	CHECK_WALK(1, USTACK_END_NO_CFI, 0x5000, 0x7000, 0, 1, ips, 16);
	/* A gap in the file's CFI, and no frame pointer. */
	CHECK_WALK(1, USTACK_END_NO_ROW, 0x1310, 0x7000, 0, 1, ips, 16);
	/* A frame-pointer chain that ends in 0. */
	put(0x7060, 0);
	put(0x7068, 0);
	CHECK_WALK(1, USTACK_END_FP_CHAIN, 0x3010, 0x7000, 0x7060, 1, ips, 16);
	/* No registers at all (a kernel thread): nothing. */
	CHECK_EQ_INT(user_walk(&ops, 0, 0, 0, 1, ips, 16, &end), 0);
}

/*
 * A frame pointer that is not one (code built without them leaves any
 * value in RBP; a struct pthread's first word points at itself): the walk
 * stops at the first step that does not move up the stack, with one frame
 * from it, not the same address until the depth limit.
 */
static void stops_at_a_step_that_does_not_move_up(void)
{
	uint64_t ips[16], many[64];
	uint8_t end = 0;

	build_stack();
	put(0x7100, 0x7100); /* [fp] = fp */
	put(0x7108, 0x5000); /* an address in no mapping */
	CHECK_WALK(2, USTACK_END_STUCK, 0x3010, 0x7000, 0x7100, 1, ips, 16);
	CHECK_EQ_INT(ips[1], 0x5000);
	/*
	 * Frame pointers below SP in code without CFI: once a stack switch
	 * (Go before its tables are loaded), the second time a chain gone wrong.
	 */
	put(0x7180, 0x7140);
	put(0x7188, 0x3020);
	put(0x7140, 0x7100);
	put(0x7148, 0x3030);
	CHECK_WALK(2, USTACK_END_STUCK, 0x3010, 0x71c0, 0x7180, 1, ips, 16);
	CHECK_EQ_INT(ips[1], 0x3020);
	/* Down once, then a root: a switch, whole. */
	CHECK_WALK(2, USTACK_END_ROOT, 0x3010, 0x7080, 0x7060, 1, ips, 16);
	/* A CFA = FP + 16 row with RBP below SP. */
	CHECK_WALK(1, USTACK_END_STUCK, 0x1110, 0x7080, 0x7040, 1, ips, 16);
	/* A stack switch the runtime marks may step down: to a root here. */
	put(0x7020, 0);
	put(0x7028, 0x1210);
	CHECK_WALK(2, USTACK_END_ROOT, 0x1510, 0x7100, 0x7020, 1, ips, 16);
	CHECK_EQ_INT(ips[1], 0x1210);
	/*
	 * Go's mcall on g0: BP is the frame just below SP (Go's rows keep BP),
	 * whose saved BP is the goroutine's: a step in place at the switch
	 * reads it, and the next reaches the goroutine's root.
	 */
	put(0x70a0, 0x70e0); /* [fp] = the goroutine's frame */
	put(0x70a8, 0x1520); /* back into the switch */
	put(0x70e0, 0);
	put(0x70e8, 0x1210);
	CHECK_WALK(3, USTACK_END_ROOT, 0x1510, 0x70b0, 0x70a0, 1, ips, 16);
	CHECK_EQ_INT(ips[1], 0x1520);
	CHECK_EQ_INT(ips[2], 0x1210);
	/* A switch whose chain loops: a bounded number of steps, then stuck, not the depth limit.
	 */
	put(0x70a0, 0x70a0);
	CHECK(user_walk(&ops, 0x1510, 0x70b0, 0x70a0, 1, many, 64, &end) < 64);
	CHECK_EQ_INT(end, USTACK_END_STUCK);
}

/*
 * The two kinds of step that may go down have their own bounds: a switch
 * step does not use up the one down step code without CFI may take (Go
 * before its tables are loaded, reached from a marked switch), nor that
 * step the switches' 16 (a staircase of them after it, all to the root).
 */
static void down_steps_have_their_own_bounds(void)
{
	uint64_t ips[64];
	uint8_t end = 0;

	/* A switch steps down into code without CFI, which steps down again, to the root. */
	build_stack();
	put(0x7080, 0x7040); /* the switch's [fp]: code without CFI, lower */
	put(0x7088, 0x3020);
	put(0x7040, 0);
	put(0x7048, 0x1210);
	CHECK_EQ_INT(user_walk(&ops, 0x1510, 0x7100, 0x7080, 1, ips, 64, &end), 3);
	CHECK_EQ_INT(ips[1], 0x3020);
	CHECK_EQ_INT(ips[2], 0x1210);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	/* Code without CFI steps down once, then 16 switch steps down, to the root. */
	build_stack();
	for (uint64_t fp = 0x7180; fp > 0x7080; fp -= 16) {
		put(fp, fp - 16);
		put(fp + 8, 0x1520);
	}
	put(0x7080, 0);
	put(0x7088, 0x1210);
	CHECK_EQ_INT(user_walk(&ops, 0x3010, 0x71c0, 0x7180, 1, ips, 64, &end), 18);
	CHECK_EQ_INT(ips[16], 0x1520);
	CHECK_EQ_INT(ips[17], 0x1210);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	/* A 17th switch step down is one too many. */
	put(0x7080, 0x7070);
	put(0x7088, 0x1520);
	put(0x7070, 0);
	put(0x7078, 0x1210);
	CHECK_EQ_INT(user_walk(&ops, 0x3010, 0x71c0, 0x7180, 1, ips, 64, &end), 18);
	CHECK_EQ_INT(end, USTACK_END_STUCK);
}

/*
 * Go's park_m on g0, called by mcall (a marked switch): its row restores
 * the BP its prologue saved at CFA - 16, which is the goroutine's, so the
 * switch steps once, up, to the goroutine's frames. With BP kept (Go's
 * rows before issue 37) the switch first steps down in place through
 * park_m's own frame: mcall twice, a staircase of one stair here.
 */
static void go_row_restores_bp_for_the_switch(void)
{
	/* park_m's rule, the last one its rows added (no other row has it). */
	struct unwind_rule *park_m = &rules.data[rules.len - 1];
	uint64_t ips[16];
	uint8_t end = 0;

	build_stack();
	put(0x7020, 0x70e0); /* park_m's frame: the saved BP (the goroutine's) */
	put(0x7028, 0x1520); /* back into mcall */
	put(0x70e0, 0);
	put(0x70e8, 0x1210);
	CHECK_EQ_INT(user_walk(&ops, 0x1610, 0x7000, 0x7020, 1, ips, 16, &end), 3);
	CHECK_EQ_INT(ips[1], 0x1520);
	CHECK_EQ_INT(ips[2], 0x1210);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	park_m->rules = UNWIND_RULES(UNWIND_CFA_SP, UNWIND_FP_SAME, 0);
	CHECK_EQ_INT(user_walk(&ops, 0x1610, 0x7000, 0x7020, 1, ips, 16, &end), 4);
	CHECK_EQ_INT(ips[2], 0x1520);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	park_m->rules = UNWIND_RULES(UNWIND_CFA_SP, UNWIND_FP_SAVED, 0);
}

/* Right after clone: the child (RAX 0) is its thread's root, the parent returns to its caller. */
static void tells_clone_child_from_parent(void)
{
	uint64_t ips[16];

	build_stack();
	CHECK_WALK(1, USTACK_END_ROOT, 0x1402, 0x7100, 0x7100, 0, ips, 16);
	put(0x7000, 0x1210);
	CHECK_WALK(2, USTACK_END_ROOT, 0x1402, 0x7000, 0x7100, 4242, ips, 16);
	CHECK_EQ_INT(ips[1], 0x1210);
}

/*
 * A stack copy of [copy_base, copy_base + copy_len) of the stack, as it
 * is when read, through the finisher's own read of a copy
 * (capture/stack_finish.c's stack_copy_read): nothing else is read.
 */
static uint64_t copy_base, copy_len;
static struct stack_copy_event the_copy;

static int read_copy(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	the_copy.sp = copy_base;
	the_copy.len = (uint32_t)copy_len;
	memcpy(the_copy.bytes, (const char *)stack + (copy_base - STACK_BASE), copy_len);
	return stack_copy_read(&the_copy, addr, buf, len);
}

/* A read of a copy: inside it, or -EFAULT, whatever the address and length (finding 15). */
static void copy_read_stays_inside_the_copy(void)
{
	static struct stack_copy_event c;
	uint64_t word = 0, all[4];

	c.sp = 0x7000;
	c.len = 0x20;
	memset(c.bytes, 0xab, sizeof(c.bytes));
	memcpy(c.bytes + 0x18, &(uint64_t){ 0x1234 }, 8);
	CHECK_EQ_INT(stack_copy_read(&c, 0x7018, &word, 8), 0);
	CHECK_EQ_INT(word, 0x1234);
	/* All of it at once. */
	CHECK_EQ_INT(stack_copy_read(&c, 0x7000, all, sizeof(all)), 0);
	CHECK_EQ_INT(all[3], 0x1234);
	/* Its last byte, and not one past it. */
	CHECK_EQ_INT(stack_copy_read(&c, 0x701f, &word, 1), 0);
	CHECK_EQ_INT(stack_copy_read(&c, 0x7019, &word, 8), -EFAULT);
	CHECK_EQ_INT(stack_copy_read(&c, 0x7020, &word, 1), -EFAULT);
	/* Below it, and addresses that would wrap round. */
	CHECK_EQ_INT(stack_copy_read(&c, 0x6ff8, &word, 8), -EFAULT);
	CHECK_EQ_INT(stack_copy_read(&c, UINT64_MAX - 3, &word, 8), -EFAULT);
	CHECK_EQ_INT(stack_copy_read(&c, 0x7008, &word, SIZE_MAX), -EFAULT);
	/* An empty copy holds nothing. */
	c.len = 0;
	CHECK_EQ_INT(stack_copy_read(&c, 0x7000, &word, 1), -EFAULT);
}

/*
 * A walk resumed at a frame other than the innermost, over a copy of the
 * stack from that frame's SP (capture/stack_finish.c, issue 38): its PC is
 * a return address; past the copy the stack is unreadable.
 */
static void resumes_over_a_stack_copy(void)
{
	struct user_walk_ops cops = { read_copy, find_mapping, NULL };
	uint64_t ips[16];
	uint8_t end = 0;

	build_stack();
	/* Frame 1 of walks_every_rule_to_the_root, from its SP on. */
	copy_base = 0x7010;
	copy_len = sizeof(stack) - 0x10;
	CHECK_EQ_INT(user_walk_from(&cops, 0x1150, 0x7010, 0x7040, 0, true, ips, 16, &end), 3);
	CHECK_EQ_INT(ips[0], 0x1150);
	CHECK_EQ_INT(ips[1], 0x3020);
	CHECK_EQ_INT(ips[2], 0x1210);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	/* A copy that ends before the caller's return address: unreadable there. */
	copy_len = 0x30;
	CHECK_EQ_INT(user_walk_from(&cops, 0x1150, 0x7010, 0x7040, 0, true, ips, 16, &end), 1);
	CHECK_EQ_INT(end, USTACK_END_UNREADABLE);
	/* Below the copy too. */
	copy_len = sizeof(stack) - 0x10;
	CHECK_EQ_INT(user_walk_from(&cops, 0x1010, 0x7000, 0x7040, 1, false, ips, 16, &end), 1);
	CHECK_EQ_INT(end, USTACK_END_UNREADABLE);
	/*
	 * A return address at a row's first byte is the call's in the row
	 * before (the leaf's, CFA = SP + 16); as the interrupted PC it is the
	 * row's own (CFA = FP + 16).
	 */
	copy_base = 0x7000;
	copy_len = sizeof(stack);
	CHECK_EQ_INT(user_walk_from(&cops, 0x1100, 0x7000, 0x7040, 0, true, ips, 16, &end), 4);
	CHECK_EQ_INT(ips[1], 0x1150);
	CHECK_EQ_INT(end, USTACK_END_ROOT);
	CHECK_EQ_INT(user_walk_from(&cops, 0x1100, 0x7000, 0x7040, 1, false, ips, 16, &end), 3);
	CHECK_EQ_INT(ips[1], 0x3020);
}

int main(void)
{
	lay_out_rows();
	RUN(walks_every_rule_to_the_root);
	RUN(stops_where_it_must);
	RUN(stops_at_a_step_that_does_not_move_up);
	RUN(down_steps_have_their_own_bounds);
	RUN(go_row_restores_bp_for_the_switch);
	RUN(tells_clone_child_from_parent);
	RUN(resumes_over_a_stack_copy);
	RUN(copy_read_stays_inside_the_copy);
	compact_rules_free(&rules);
	return test_summary();
}
