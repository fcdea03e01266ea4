// SPDX-License-Identifier: BSD-2-Clause
#include "perf_events.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/log.h"

static int open_event(bool hardware, unsigned freq_hz, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hardware ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq_hz,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Hardware cycles are only usable when the PMU exists and is not claimed. */
static bool hardware_available(unsigned freq_hz, int cpu)
{
	int fd = open_event(true, freq_hz, cpu);

	if (fd < 0) {
		log_debug("hardware cycles unavailable on cpu %d (%s), using cpu-clock", cpu,
			  strerror(-fd));
		return false;
	}
	close(fd);
	return true;
}

/* The CPU reports a hypervisor (x86 "hypervisor" flag; arm64 guests via DMI/device tree vary). */
static bool running_in_guest(void)
{
	char line[4096];
	bool guest = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (!guest && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
			guest = true;
	fclose(f);
	if (!guest && access("/sys/hypervisor/type", F_OK) == 0)
		guest = true;
	return guest;
}

int perf_sampler_open(struct perf_sampler *s, struct bpf_program *prog, unsigned freq_hz,
		      enum sample_event_kind kind, const bool *online, int nr_possible)
{
	int first = -1, attached = 0;

	memset(s, 0, sizeof(*s));
	s->nr = nr_possible;
	s->fds = malloc(sizeof(*s->fds) * (size_t)nr_possible);
	s->links = calloc((size_t)nr_possible, sizeof(*s->links));
	if (!s->fds || !s->links)
		return -ENOMEM;
	for (int i = 0; i < nr_possible; i++) {
		s->fds[i] = -1;
		if (online[i] && first < 0)
			first = i;
	}
	if (first < 0) {
		log_error("no online CPU found in /sys/devices/system/cpu/online");
		return -ENODEV;
	}
	switch (kind) {
	case SAMPLE_EVENT_CYCLES:
		s->hardware = true;
		if (running_in_guest())
			log_warn("-e cycles in a virtual machine: the emulated PMU's NMIs are costly "
				 "(lost samples and vCPU stalls were seen on KVM); -e cpu-clock is "
				 "safer here");
		break;
	case SAMPLE_EVENT_CPU_CLOCK:
		s->hardware = false;
		break;
	default:
		/*
		 * In a guest the PMU is emulated: every overflow NMI exits to the
		 * hypervisor, and with a BPF program in the NMI this was measured
		 * at seconds of system time per second on a 2-vCPU KVM guest.
		 * The hrtimer-based cpu-clock costs little and measures time, which
		 * is what the profile shows.
		 */
		s->hardware = !running_in_guest() && hardware_available(freq_hz, first);
		break;
	}
	s->event_name = s->hardware ? "cycles" : "cpu-clock";

	for (int cpu = 0; cpu < nr_possible; cpu++) {
		int fd;

		if (!online[cpu])
			continue;
		fd = open_event(s->hardware, freq_hz, cpu);
		if (fd == -ENODEV) /* went offline meanwhile */
			continue;
		if (fd < 0) {
			log_error("cannot open the %s perf event on CPU %d (%s); check "
				  "kernel.perf_event_paranoid and that bpfprof runs as root",
				  s->event_name, cpu, strerror(-fd));
			return fd;
		}
		s->fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!s->links[cpu]) {
			int err = -errno;

			s->links[cpu] = NULL;
			log_error("cannot attach the sampling program to CPU %d (%s)", cpu,
				  strerror(-err));
			return err;
		}
		attached++;
	}
	log_debug("sampling %d CPUs with %s at %u Hz", attached, s->event_name, freq_hz);
	return 0;
}

void perf_sampler_close(struct perf_sampler *s)
{
	for (int i = 0; i < s->nr; i++) {
		if (s->links && s->links[i])
			bpf_link__destroy(s->links[i]);
		if (s->fds && s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s->links);
	free(s->fds);
	s->links = NULL;
	s->fds = NULL;
	s->nr = 0;
}
