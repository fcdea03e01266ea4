// SPDX-License-Identifier: BSD-2-Clause
/*
 * bpfprof-hook-floor: attach empty BPF programs to sched_switch and
 * sched_waking ("sched") or to sys_enter and sys_exit ("syscalls"), say
 * "attached" on stdout, and keep them until SIGINT or SIGTERM. For
 * bench/hook_floor.sh, which reads their run time per event (the floor) and
 * what they cost a workload.
 *
 * Usage: bpfprof-hook-floor sched|syscalls
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hook_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct hook_floor_bpf *skel;
	bool sched;

	if (argc != 2 || (strcmp(argv[1], "sched") && strcmp(argv[1], "syscalls"))) {
		fprintf(stderr, "usage: %s sched|syscalls\n", argv[0]);
		return 2;
	}
	sched = !strcmp(argv[1], "sched");
	skel = hook_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "hook-floor: cannot open the BPF object (%s)\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.floor_switch, sched);
	bpf_program__set_autoload(skel->progs.floor_waking, sched);
	bpf_program__set_autoload(skel->progs.floor_sys_enter, !sched);
	bpf_program__set_autoload(skel->progs.floor_sys_exit, !sched);
	if (hook_floor_bpf__load(skel) || hook_floor_bpf__attach(skel)) {
		fprintf(stderr, "hook-floor: cannot load or attach (%s); run as root\n",
			strerror(errno));
		hook_floor_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	hook_floor_bpf__destroy(skel);
	return 0;
}
