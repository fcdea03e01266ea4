// SPDX-License-Identifier: BSD-2-Clause
/* Running a BPF iterator once and reading back the whole records it writes. */
#include "session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <unistd.h>

int session_run_iter(struct bpf_program *prog, const struct bpf_iter_attach_opts *opts, void *rec,
		     size_t rec_size, session_record_fn on_rec, void *ctx)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, opts);
	size_t have = 0;
	int fd, err = 0;
	ssize_t n;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	/* The iterator writes whole records; read() may split them anywhere. */
	while ((n = read(fd, (char *)rec + have, rec_size - have)) > 0 ||
	       (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		have += (size_t)n;
		if (have < rec_size)
			continue;
		have = 0;
		if (on_rec && (err = on_rec(ctx, rec, rec_size)))
			break;
	}
	if (n < 0)
		err = -errno;
	close(fd);
out:
	bpf_link__destroy(link);
	return err;
}
