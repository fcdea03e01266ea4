// SPDX-License-Identifier: BSD-2-Clause
#include "timer_wakers.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "bpfprof.skel.h"
#include "../util/log.h"

#define N_PROGS 8

struct prog_link {
	struct bpf_program *prog;
	struct bpf_link **link;
};

/*
 * Exits before entries, in the order they are attached: an interrupt whose
 * entry was counted and whose exit program was not attached yet would leave
 * its CPU "in an interrupt" for the whole recording, while an exit without
 * its entry is only clamped at depth 0.
 */
static void irq_progs(struct bpfprof_bpf *k, struct prog_link p[N_PROGS])
{
	p[0] = (struct prog_link){ k->progs.on_irq_exit, &k->links.on_irq_exit };
	p[1] = (struct prog_link){ k->progs.on_softirq_exit, &k->links.on_softirq_exit };
	p[2] = (struct prog_link){ k->progs.on_hrtimer_exit, &k->links.on_hrtimer_exit };
	p[3] = (struct prog_link){ k->progs.on_timer_exit, &k->links.on_timer_exit };
	p[4] = (struct prog_link){ k->progs.on_irq_entry, &k->links.on_irq_entry };
	p[5] = (struct prog_link){ k->progs.on_softirq_entry, &k->links.on_softirq_entry };
	p[6] = (struct prog_link){ k->progs.on_hrtimer_entry, &k->links.on_hrtimer_entry };
	p[7] = (struct prog_link){ k->progs.on_timer_entry, &k->links.on_timer_entry };
}

void timer_wakers_choose(struct bpfprof_bpf *k, bool sched)
{
	struct prog_link p[N_PROGS];

	irq_progs(k, p);
	for (int i = 0; i < N_PROGS; i++)
		bpf_program__set_autoload(p[i].prog, sched);
}

void timer_wakers_attach(struct bpfprof_bpf *k)
{
	struct prog_link p[N_PROGS];

	irq_progs(k, p);
	for (int i = 0; i < N_PROGS; i++) {
		/* Kept in the skeleton's links so that detach/destroy release it. */
		*p[i].link = bpf_program__attach(p[i].prog);
		if (*p[i].link)
			continue;
		log_warn("cannot attach %s (%s): wakeups from interrupts name the task they "
			 "interrupted as the waker",
			 bpf_program__name(p[i].prog), strerror(errno));
		/* An entry without its exit would leave a depth or a timer flag stuck. */
		for (int j = 0; j < i; j++) {
			bpf_link__destroy(*p[j].link);
			*p[j].link = NULL;
		}
		return;
	}
}
