// SPDX-License-Identifier: BSD-2-Clause
#include "syscall_markers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../syscalls/syscall_names.h"
#include "../util/log.h"

#define SYSCALL_SCHEMA	      "bpfprof.Syscall"
#define SYSCALL_TOTALS_SCHEMA "bpfprof.SyscallTotals"
#define SYSCALL_WAIT_SCHEMA   "bpfprof.SyscallWait"

/*
 * The titles say the call, its arguments and its result: those fields are
 * hidden (labels, search and tools use them), so that a tooltip lists each
 * fact once. No descriptions: the front-end shows them first.
 */
/* clang-format off */
const struct marker_schema syscall_schema = {
	.name = SYSCALL_SCHEMA,
	.display = display_chart_table,
	.color = "purple",
	.chart_label = "{marker.data.syscall}({marker.data.args})",
	.tooltip_label = "{marker.data.syscall}({marker.data.args}) = {marker.data.ret}"
			 "{marker.data.error ? ' ' : ''}{marker.data.error}",
	.table_label = "{marker.data.syscall}({marker.data.args}) = {marker.data.ret}"
		       "{marker.data.error ? ' ' : ''}{marker.data.error}",
	.fields = (const struct schema_field[]){
		{ "syscall", "Syscall", "string", true },
		{ "args", "Arguments", "string", true },
		{ "fd", "File descriptor", "integer", true },
		{ "count", "Bytes asked", "bytes", true },
		{ "ret", "Returned", "integer", true },
		{ "error", "Error", "string", true },
		{ NULL } },
};

const struct marker_schema syscall_wait_schema = {
	.name = SYSCALL_WAIT_SCHEMA,
	.display = display_chart_table,
	.color = "magenta",
	.chart_label = "{marker.data.syscall}({marker.data.args})",
	.tooltip_label = "{marker.data.syscall}({marker.data.args}), blocked",
	.table_label = "{marker.data.syscall}({marker.data.args}), blocked",
	.fields = (const struct schema_field[]){
		{ "syscall", "Syscall", "string", true },
		{ "args", "Arguments", "string", true },
		{ "fd", "File descriptor", "integer", true },
		{ "count", "Bytes asked", "bytes", true },
		{ NULL } },
};

const struct marker_schema syscall_totals_schema = {
	.name = SYSCALL_TOTALS_SCHEMA,
	.display = display_table,
	.color = "grey",
	/* "1 call", "5 calls": the labels' templates cannot choose the plural. */
	.tooltip_label = "{marker.data.syscall}: {marker.data.calls}",
	.table_label = "{marker.data.syscall}: {marker.data.calls}, {marker.data.time} "
		       "in total, {marker.data.shown} shown as markers",
	.fields = (const struct schema_field[]){
		{ "syscall", "Syscall", "string", true },
		{ "count", "Calls", "integer", true },
		{ "time", "Total time", "duration" },
		{ "average", "Average time", "duration" },
		{ "shown", "Shown as markers", "integer" },
		{ "thresholdMs", "Marker threshold", "milliseconds" },
		{ "calls", "Calls", "string", true },
		{ NULL } },
};
/* clang-format on */

/* How a syscall's arguments are read. */
enum args_kind {
	ARGS_RAW = 0,
	ARGS_FD,	      /* fd */
	ARGS_FD_COUNT,	      /* fd, buf, count */
	ARGS_FD_VEC,	      /* fd, iov, iovcnt */
	ARGS_FD_BUF_FLAGS,    /* fd, buf, len, flags (send/recv family) */
	ARGS_FD_MSG_FLAGS,    /* fd, msg, flags */
	ARGS_OPENAT,	      /* dirfd, path, flags, mode */
	ARGS_FUTEX,	      /* uaddr, op, val */
	ARGS_EPOLL_WAIT,      /* epfd, events, maxevents, timeout */
	ARGS_POLL,	      /* fds, nfds, timeout */
	ARGS_PPOLL,	      /* fds, nfds */
	ARGS_SELECT,	      /* nfds */
	ARGS_CLOCK_NANOSLEEP, /* clockid, flags */
	ARGS_WAIT4,	      /* pid, status, options */
	ARGS_IOCTL,	      /* fd, cmd */
	ARGS_MMAP,	      /* addr, len, prot, flags, fd */
	ARGS_ADDR_LEN,	      /* addr, len */
	ARGS_IO_URING_ENTER,  /* fd, to_submit, min_complete */
	ARGS_NONE,	      /* no arguments worth showing */
};

struct args_rule {
	const char *name;
	enum args_kind kind;
};

static const struct args_rule rules[] = {
	{ "read", ARGS_FD_COUNT },
	{ "write", ARGS_FD_COUNT },
	{ "pread64", ARGS_FD_COUNT },
	{ "pwrite64", ARGS_FD_COUNT },
	{ "getdents64", ARGS_FD_COUNT },
	{ "readv", ARGS_FD_VEC },
	{ "writev", ARGS_FD_VEC },
	{ "preadv", ARGS_FD_VEC },
	{ "pwritev", ARGS_FD_VEC },
	{ "preadv2", ARGS_FD_VEC },
	{ "pwritev2", ARGS_FD_VEC },
	{ "sendto", ARGS_FD_BUF_FLAGS },
	{ "recvfrom", ARGS_FD_BUF_FLAGS },
	{ "sendmsg", ARGS_FD_MSG_FLAGS },
	{ "recvmsg", ARGS_FD_MSG_FLAGS },
	{ "close", ARGS_FD },
	{ "fsync", ARGS_FD },
	{ "fdatasync", ARGS_FD },
	{ "accept", ARGS_FD },
	{ "accept4", ARGS_FD },
	{ "connect", ARGS_FD },
	{ "flock", ARGS_FD },
	{ "openat", ARGS_OPENAT },
	{ "futex", ARGS_FUTEX },
	{ "epoll_wait", ARGS_EPOLL_WAIT },
	{ "epoll_pwait", ARGS_EPOLL_WAIT },
	{ "epoll_pwait2", ARGS_EPOLL_WAIT },
	{ "poll", ARGS_POLL },
	{ "ppoll", ARGS_PPOLL },
	{ "select", ARGS_SELECT },
	{ "pselect6", ARGS_SELECT },
	{ "clock_nanosleep", ARGS_CLOCK_NANOSLEEP },
	{ "nanosleep", ARGS_NONE },
	{ "pause", ARGS_NONE },
	{ "sched_yield", ARGS_NONE },
	{ "wait4", ARGS_WAIT4 },
	{ "ioctl", ARGS_IOCTL },
	{ "mmap", ARGS_MMAP },
	{ "munmap", ARGS_ADDR_LEN },
	{ "mprotect", ARGS_ADDR_LEN },
	{ "madvise", ARGS_ADDR_LEN },
	{ "io_uring_enter", ARGS_IO_URING_ENTER },
};

static enum args_kind kind_of(const char *name)
{
	if (!name)
		return ARGS_RAW;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].name, name))
			return rules[i].kind;
	return ARGS_RAW;
}

/* FUTEX_* operations (linux/futex.h), without the PRIVATE and CLOCK_REALTIME bits. */
static const char *futex_op_name(uint64_t op)
{
	static const char *const names[] = {
		"FUTEX_WAIT",		"FUTEX_WAKE",	     "FUTEX_FD",
		"FUTEX_REQUEUE",	"FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP",
		"FUTEX_LOCK_PI",	"FUTEX_UNLOCK_PI",   "FUTEX_TRYLOCK_PI",
		"FUTEX_WAIT_BITSET",	"FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
		"FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2",
	};
	uint64_t cmd = op & 127;

	return cmd < sizeof(names) / sizeof(names[0]) ? names[cmd] : NULL;
}

/* open(2) flags, the common ones by name (octal values are the asm-generic ones). */
static void open_flags(uint64_t flags, char *buf, size_t size)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
		{ 0100, "O_CREAT" },	    { 0200, "O_EXCL" },	     { 01000, "O_TRUNC" },
		{ 02000, "O_APPEND" },	    { 04000, "O_NONBLOCK" }, { 02000000, "O_CLOEXEC" },
		{ 0200000, "O_DIRECTORY" }, { 010000000, "O_PATH" },
	};
	static const char *const access[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
	size_t n = (size_t)snprintf(buf, size, "%s", access[flags & 3]);

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]) && n < size; i++)
		if (flags & bits[i].bit)
			n += (size_t)snprintf(buf + n, size - n, "|%s", bits[i].name);
}

void syscall_args_decode(const char *name, const uint64_t a[6], struct syscall_args_view *out)
{
	char flags[96];
	const char *op;
	size_t size = sizeof(out->text);
	char *t = out->text;

	out->fd = -1;
	out->count = -1;
	switch (kind_of(name)) {
	case ARGS_FD:
		out->fd = (int)a[0];
		snprintf(t, size, "fd=%d", (int)a[0]);
		break;
	case ARGS_FD_COUNT:
		out->fd = (int)a[0];
		out->count = (int64_t)a[2];
		snprintf(t, size, "fd=%d, count=%" PRIu64, (int)a[0], a[2]);
		break;
	case ARGS_FD_VEC:
		out->fd = (int)a[0];
		snprintf(t, size, "fd=%d, iovcnt=%" PRIu64, (int)a[0], a[2]);
		break;
	case ARGS_FD_BUF_FLAGS:
		out->fd = (int)a[0];
		out->count = (int64_t)a[2];
		snprintf(t, size, "fd=%d, len=%" PRIu64 ", flags=0x%" PRIx64, (int)a[0], a[2],
			 a[3]);
		break;
	case ARGS_FD_MSG_FLAGS:
		out->fd = (int)a[0];
		snprintf(t, size, "fd=%d, flags=0x%" PRIx64, (int)a[0], a[2]);
		break;
	case ARGS_OPENAT:
		open_flags(a[2], flags, sizeof(flags));
		if ((int)a[0] == -100) /* AT_FDCWD */
			snprintf(t, size, "AT_FDCWD, flags=%s", flags);
		else
			snprintf(t, size, "dirfd=%d, flags=%s", (int)a[0], flags);
		break;
	case ARGS_FUTEX:
		op = futex_op_name(a[1]);
		snprintf(t, size, "uaddr=0x%" PRIx64 ", op=%s%s%s, val=%" PRIu64, a[0],
			 op ? op : "?", a[1] & 128 ? "_PRIVATE" : "", a[1] & 256 ? "|REALTIME" : "",
			 (uint64_t)(uint32_t)a[2]);
		break;
	case ARGS_EPOLL_WAIT:
		out->fd = (int)a[0];
		snprintf(t, size, "epfd=%d, maxevents=%d, timeout=%d", (int)a[0], (int)a[2],
			 (int)a[3]);
		break;
	case ARGS_POLL:
		snprintf(t, size, "nfds=%" PRIu64 ", timeout=%d", a[1], (int)a[2]);
		break;
	case ARGS_PPOLL:
		snprintf(t, size, "nfds=%" PRIu64, a[1]);
		break;
	case ARGS_SELECT:
		snprintf(t, size, "nfds=%d", (int)a[0]);
		break;
	case ARGS_CLOCK_NANOSLEEP:
		snprintf(t, size, "clockid=%d, flags=%s", (int)a[0],
			 a[1] & 1 ? "TIMER_ABSTIME" : "0");
		break;
	case ARGS_WAIT4:
		snprintf(t, size, "pid=%d, options=0x%" PRIx64, (int)a[0], a[2]);
		break;
	case ARGS_IOCTL:
		out->fd = (int)a[0];
		snprintf(t, size, "fd=%d, cmd=0x%" PRIx64, (int)a[0], a[1]);
		break;
	case ARGS_MMAP:
		snprintf(t, size,
			 "addr=0x%" PRIx64 ", len=%" PRIu64 ", prot=0x%" PRIx64 ", flags=0x%" PRIx64
			 ", fd=%d",
			 a[0], a[1], a[2], a[3], (int)a[4]);
		break;
	case ARGS_ADDR_LEN:
		snprintf(t, size, "addr=0x%" PRIx64 ", len=%" PRIu64, a[0], a[1]);
		break;
	case ARGS_IO_URING_ENTER:
		out->fd = (int)a[0];
		snprintf(t, size, "fd=%d, to_submit=%u, min_complete=%u", (int)a[0], (unsigned)a[1],
			 (unsigned)a[2]);
		break;
	case ARGS_NONE:
		t[0] = '\0';
		break;
	case ARGS_RAW:
	default:
		snprintf(t, size,
			 "0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64
			 ", 0x%" PRIx64,
			 a[0], a[1], a[2], a[3], a[4], a[5]);
		break;
	}
}

void syscall_marker_data_write(struct json_writer *w, const struct syscall_marker *mk)
{
	const char *name = syscall_name(syscall_arch_native(), (long)mk->nr);
	struct syscall_args_view view;
	char buf[32];

	syscall_args_decode(name, mk->args, &view);
	marker_data_begin(w, mk->blocked_wait ? &syscall_wait_schema : &syscall_schema);
	jw_kv_string(w, "syscall",
		     name ? name
			  : syscall_name_or_number(syscall_arch_native(), (long)mk->nr, buf,
						   sizeof(buf)));
	jw_kv_string(w, "args", view.text);
	if (view.fd >= 0)
		jw_kv_int(w, "fd", view.fd);
	if (view.count >= 0)
		jw_kv_int(w, "count", view.count);
	if (mk->blocked_wait) {
		jw_end_object(w);
		return;
	}
	jw_kv_int(w, "ret", mk->ret);
	/* The kernel returns -errno, from -1 to -4095, on failure. */
	if (mk->ret < 0 && mk->ret >= -4095) {
		const char *e = strerrorname_np((int)-mk->ret);

		if (e)
			jw_kv_string(w, "error", e);
		else {
			snprintf(buf, sizeof(buf), "errno %" PRId64, -mk->ret);
			jw_kv_string(w, "error", buf);
		}
	}
	jw_end_object(w);
}

void syscall_totals_data_write(struct json_writer *w, const struct syscall_count *c,
			       uint64_t threshold_ns)
{
	char buf[32];

	marker_data_begin(w, &syscall_totals_schema);
	jw_kv_string(w, "syscall",
		     syscall_name_or_number(syscall_arch_native(), (long)c->nr, buf, sizeof(buf)));
	jw_kv_uint(w, "count", c->count);
	jw_key(w, "time");
	jw_decimal(w, (int64_t)c->ns, 6);
	jw_key(w, "average");
	jw_decimal(w, c->count ? (int64_t)(c->ns / c->count) : 0, 6);
	jw_kv_uint(w, "shown", c->shown);
	jw_key(w, "thresholdMs");
	jw_decimal(w, (int64_t)threshold_ns, 6);
	{
		char calls[32];

		snprintf(calls, sizeof(calls), "%" PRIu64 " call%s", (uint64_t)c->count,
			 c->count == 1 ? "" : "s");
		jw_kv_string(w, "calls", calls);
	}
	jw_end_object(w);
}

int syscall_markers_check(const struct thread *th, uint64_t *end)
{
	for (size_t k = 0; k < th->syscall_markers.len; k++) {
		const struct syscall_marker *mk = &th->syscall_markers.data[k];

		if (mk->end < mk->start) {
			log_error("internal error: syscall marker of thread %u ends before it "
				  "starts",
				  th->tid);
			return -EINVAL;
		}
		if (mk->end > *end)
			*end = mk->end;
	}
	return 0;
}
