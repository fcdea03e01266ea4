/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Syscalls (included by bpfprof.bpf.c, which owns the shared maps and
 * helpers): raw_syscalls enter/exit of target threads. Every syscall is
 * counted in the thread's task storage; only those at least syscall_min_ns
 * long become records. Programs are loaded only with syscall capture on:
 * an attached raw_syscalls tracepoint slows every syscall on the machine.
 */

const volatile __u64 syscall_min_ns = 1000000;
const volatile __u32 self_tgid = 0; /* bpfprof's own syscalls are not traced */

struct task_syscall_state {
	__u64 enter_ts; /* its syscall in progress started here (0: none seen) */
	__u32 enter_nr;
	__u32 used; /* slots in use */
	/* slot_of[nr] - 1 is nr's slot; 0: none yet. Direct indexing keeps exit O(1). */
	__u8 slot_of[SYSCALL_NR_MAX];
	struct syscall_total slots[SYSCALL_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_syscall_state);
} task_syscalls SEC(".maps");

/* The totals record under construction, per CPU (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct syscall_totals_event);
} totals_scratch SEC(".maps");

/* Fill `e` with the thread's totals (its pid/tid from `task`) and reset them. */
static __always_inline void take_totals(struct syscall_totals_event *e,
					struct task_syscall_state *st, struct task_struct *task,
					__u32 reason)
{
	e->hdr.kind = EV_SYSCALL_TOTALS;
	e->hdr.size = sizeof(*e);
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.ts = bpf_ktime_get_ns();
	e->hdr.pid = BPF_CORE_READ(task, tgid);
	e->hdr.tid = BPF_CORE_READ(task, pid);
	e->nr_slots = st->used < SYSCALL_SLOTS ? st->used : SYSCALL_SLOTS;
	e->reason = reason;
	__builtin_memcpy(e->slots, st->slots, sizeof(e->slots));
	/* Fixed-size clears compile to plain stores: no loop for the verifier to walk. */
	__builtin_memset(st->slot_of, 0, sizeof(st->slot_of));
	st->used = 0;
}

/* Send the thread's totals through the ring buffer and reset them. */
static __always_inline void send_totals(struct task_syscall_state *st, struct task_struct *task,
					__u32 reason)
{
	__u32 zero = 0;
	struct syscall_totals_event *e = bpf_map_lookup_elem(&totals_scratch, &zero);

	if (!e || !st->used)
		return;
	take_totals(e, st, task, reason);
	submit(e, sizeof(*e), EV_SYSCALL_TOTALS, e->hdr.cpu);
}

static __always_inline void handle_sys_enter(long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct task_syscall_state *st;

	if ((__u32)pid_tgid == 0 || tgid == self_tgid || !current_is_target(tgid))
		return;
	st = bpf_task_storage_get(&task_syscalls, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	st->enter_ts = bpf_ktime_get_ns();
	st->enter_nr = (__u32)id;
}

/* Count a finished syscall in its slot; a full table is sent and starts over. */
static __always_inline void count_syscall(struct task_syscall_state *st, __u32 nr, __u64 ns)
{
	struct task_struct *cur;
	__u32 slot;

	if (nr >= SYSCALL_NR_MAX)
		return;
	slot = st->slot_of[nr & (SYSCALL_NR_MAX - 1)];
	if (!slot) {
		if (st->used >= SYSCALL_SLOTS) {
			cur = bpf_get_current_task_btf();
			send_totals(st, cur, SYSCALL_TOTALS_FULL);
		}
		slot = st->used + 1;
		if (slot > SYSCALL_SLOTS)
			return;
		st->used = slot;
		st->slot_of[nr & (SYSCALL_NR_MAX - 1)] = (__u8)slot;
		st->slots[(slot - 1) & (SYSCALL_SLOTS - 1)] =
			(struct syscall_total){ .count = 0, .ns = 0, .nr = nr };
	}
	st->slots[(slot - 1) & (SYSCALL_SLOTS - 1)].count++;
	st->slots[(slot - 1) & (SYSCALL_SLOTS - 1)].ns += ns;
}

/* The 6th syscall argument: libbpf's PT_REGS_PARMn_CORE_SYSCALL stop at 5. */
static __always_inline __u64 syscall_arg6(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ((struct user_pt_regs *)regs, regs[5]);
#else
	return 0;
#endif
}

static __always_inline void handle_sys_exit(struct pt_regs *regs, long ret)
{
	struct task_syscall_state *st;
	struct syscall_event e;
	__u64 now, ns, id;
	__u32 nr;

	/* Only targets have the storage (handle_sys_enter filtered them). */
	st = bpf_task_storage_get(&task_syscalls, bpf_get_current_task_btf(), NULL, 0);
	if (!st || !st->enter_ts)
		return;
	now = bpf_ktime_get_ns();
	ns = now - st->enter_ts;
	nr = st->enter_nr;
	st->enter_ts = 0;
	count_syscall(st, nr, ns);
	if (ns < syscall_min_ns)
		return;

	__builtin_memset(&e, 0, sizeof(e));
	e.hdr.kind = EV_SYSCALL;
	e.hdr.size = sizeof(e);
	e.hdr.cpu = bpf_get_smp_processor_id();
	e.hdr.ts = now;
	id = bpf_get_current_pid_tgid();
	e.hdr.pid = id >> 32;
	e.hdr.tid = (__u32)id;
	e.enter_ts = now - ns;
	e.ret = ret;
	e.nr = nr;
	/* The registers still hold the arguments (arm64 keeps x0 in orig_x0). */
	e.args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
	e.args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
	e.args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
	e.args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
	e.args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
	e.args[5] = syscall_arg6(regs);
	submit(&e, sizeof(e), EV_SYSCALL, e.hdr.cpu);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter_btf, struct pt_regs *regs, long id)
{
	handle_sys_enter(id);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(on_sys_enter_raw, struct pt_regs *regs, long id)
{
	handle_sys_enter(id);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit_btf, struct pt_regs *regs, long ret)
{
	handle_sys_exit(regs, ret);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(on_sys_exit_raw, struct pt_regs *regs, long ret)
{
	handle_sys_exit(regs, ret);
	return 0;
}

/* A thread's last totals: its storage dies with it. */
static __always_inline void handle_thread_exit(struct task_struct *task)
{
	struct task_syscall_state *st = bpf_task_storage_get(&task_syscalls, task, NULL, 0);

	if (st)
		send_totals(st, task, SYSCALL_TOTALS_EXIT);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit_syscalls_btf, struct task_struct *task)
{
	handle_thread_exit(task);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit_syscalls_raw, struct task_struct *task)
{
	/* Only `current` can be trusted here; it is the exiting task. */
	handle_thread_exit(bpf_get_current_task_btf());
	return 0;
}

/*
 * At the end of the recording, the live threads' totals: userspace reads
 * them through a task iterator, record by record, in the ring's format.
 */
SEC("iter/task")
int dump_syscall_totals(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_syscall_state *st;
	struct syscall_totals_event *e;
	__u32 zero = 0;

	if (!task)
		return 0;
	st = bpf_task_storage_get(&task_syscalls, task, NULL, 0);
	if (!st || !st->used)
		return 0;
	e = bpf_map_lookup_elem(&totals_scratch, &zero);
	if (!e)
		return 0;
	take_totals(e, st, task, SYSCALL_TOTALS_END);
	bpf_seq_write(ctx->meta->seq, e, sizeof(*e));
	return 0;
}
