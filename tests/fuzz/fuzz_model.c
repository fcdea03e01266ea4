// SPDX-License-Identifier: BSD-2-Clause
/*
 * The model fed arbitrary record streams, then the profile built and
 * written as JSON and pprof. The input is a series of records, each
 * prefixed by its length (one byte); every time in a record (its header's,
 * a folded wakeup's, a held switch-out's switch-in, a syscall's entry) is
 * folded into ten seconds after the start and CPUs into 64, as the kernel's
 * records always are, so that what is exercised is the model's logic
 * rather than the size of a wait of 2^64 ns. Durations stay as they come:
 * the model must bound what they make it allocate.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../bpf/bpfprof_abi.h"
#include "emit/emitter.h"
#include "emit/pprof_writer.h"
#include "emit/profile_tables.h"
#include "fuzz_util.h"
#include "model/model.h"

#define T0	   1000000000000ULL
#define SPAN	   (10ULL * 1000000000)
#define MAX_RECORD 255

/* Fold the time at `off` of a record `len` long into [T0, T0 + SPAN); 0 ("none") stays. */
static void fold_ts(uint8_t *rec, size_t len, size_t off)
{
	uint64_t ts;

	if (off + sizeof(ts) > len)
		return;
	memcpy(&ts, rec + off, sizeof(ts));
	if (ts)
		ts = T0 + ts % SPAN;
	memcpy(rec + off, &ts, sizeof(ts));
}

static void fold_times(uint8_t *rec, size_t len)
{
	struct event_header *h = (struct event_header *)rec;

	h->ts = T0 + h->ts % SPAN;
	h->cpu %= 64;
	switch (h->kind) {
	case EV_SAMPLE:
		fold_ts(rec, len, offsetof(struct sample_event, woken.ts));
		break;
	case EV_SWITCH:
		fold_ts(rec, len, offsetof(struct switch_event, woken.ts));
		fold_ts(rec, len, offsetof(struct switch_event, back_ts));
		break;
	case EV_SYSCALL:
		fold_ts(rec, len, offsetof(struct syscall_event, enter_ts));
		break;
	}
}

static void resolve(void *ctx, const struct raw_frame *f, struct resolved_frame *out)
{
	static char names[4][32];
	static unsigned next;
	char *name = names[next++ % 4];

	(void)ctx;
	memset(out, 0, sizeof(*out));
	snprintf(name, sizeof(names[0]), "f%llx", (unsigned long long)(f->offset & 0xfff));
	out->count = 1;
	out->items[0].func = name;
	out->address = -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile_meta meta = { .command_line = "fuzz", .sample_freq_hz = 999 };
	struct profile_tables t;
	uint8_t rec[MAX_RECORD + 8] __attribute__((aligned(8)));
	struct model m;
	size_t pos = 0;
	int fd;

	model_init(&m, NULL, T0);
	m.sched_enabled = size && (data[0] & 1);
	m.offcpu_samples = m.sched_enabled;
	m.offcpu_interval_ns = 1000000;
	m.syscalls_enabled = true;
	m.period_is_ns = true;
	m.nominal_period_ns = 1001001;
	while (pos + 1 < size) {
		size_t len = data[pos++];
		struct event_header *h = (struct event_header *)rec;

		if (len > size - pos)
			len = size - pos;
		memset(rec, 0, sizeof(rec));
		memcpy(rec, data + pos, len);
		pos += len;
		if (len >= sizeof(*h))
			fold_times(rec, len);
		if (model_add_record(&m, rec, len) == -ENOMEM)
			break;
	}
	m.stop_ts = T0 + 10ULL * 1000000000;
	if (model_sched_flush(&m, UINT64_MAX) || model_finish(&m))
		goto out;
	if (profile_tables_build(&t, &m, resolve, NULL) == 0) {
		fd = fuzz_memfd(NULL, 0);
		if (fd >= 0) {
			emit_profile_fd(fd, false, &m, &t, &meta);
			ftruncate(fd, 0);
			pprof_write_fd(fd, false, &m, &t, &meta, NULL);
			close(fd);
		}
	}
	profile_tables_free(&t);
out:
	model_free(&m);
	return 0;
}
