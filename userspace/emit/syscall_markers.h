/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Syscall markers in the profile: a "Syscall" interval marker per syscall
 * at least the threshold long, named after the syscall, with its key
 * arguments decoded and its result; and a "Syscall totals" marker per
 * thread and syscall with every call counted, short ones included.
 */
#ifndef BPFPROF_SYSCALL_MARKERS_H
#define BPFPROF_SYSCALL_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include "../model/model.h"
#include "json_writer.h"
#include "marker_schema.h"

extern const struct marker_schema syscall_schema;
extern const struct marker_schema syscall_wait_schema;
extern const struct marker_schema syscall_totals_schema;

/*
 * The arguments worth reading of syscall `name`: "fd=3, count=4096" for a
 * read, "uaddr=0x7f.., op=FUTEX_WAIT_PRIVATE, val=0" for a futex; the raw
 * registers in hex for syscalls without a decoder. Also the fd and byte
 * count it names, or -1.
 */
struct syscall_args_view {
	char text[160];
	int64_t fd;
	int64_t count;
};
void syscall_args_decode(const char *name, const uint64_t args[6], struct syscall_args_view *out);

/*
 * A thread's syscall markers must each end no earlier than they start;
 * returns 0 or -EINVAL. Extends *end to the last marker end, which the
 * profile must reach.
 */
int syscall_markers_check(const struct thread *th, uint64_t *end);

/* The data object of a "Syscall" marker. */
void syscall_marker_data_write(struct json_writer *w, const struct syscall_marker *mk);
/* The data object of a "Syscall totals" marker. */
void syscall_totals_data_write(struct json_writer *w, const struct syscall_count *c,
			       uint64_t threshold_ns);

#endif
