/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * on_sample_php: the tail of on_sample (sample.bpf.h) for a PHP process,
 * its PHP frames (php.bpf.h) then the record, as on_sample_python is for
 * a Python one: a program of its own, which the verifier checks apart
 * from the unwinder.
 */
#ifndef BPFPROF_PHP_SAMPLE_BPF_H
#define BPFPROF_PHP_SAMPLE_BPF_H

SEC("perf_event")
int on_sample_php(struct bpf_perf_event_data *ctx)
{
	__u32 kn, un;
	struct sample_event *e = tail_sample(&kn, &un);

	if (!e)
		return 0;
	if (un)
		e->py_len = php_stack(ctx, e->hdr.pid, e->ips, kn, un, &e->flags);
	if (e->py_len)
		e->interp = INTERP_PHP;
	send_interp_sample(e);
	return 0;
}

#endif
