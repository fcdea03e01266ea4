// SPDX-License-Identifier: BSD-2-Clause
/*
 * v8_probe PID [PROBES]: names a running node's JS frames as bpfprof does
 * (lang/v8_procs.h), from what BPF would capture. It notes PID's mappings,
 * prints the capture (code ranges and the fp offsets of the words to read,
 * "range LO HI", "offsets A B C D"), then PROBES times (default 5):
 * ptrace-seizes and interrupts the main thread, reads its registers, walks
 * its rbp chain (at most 64 frames), reads the words of each frame whose pc
 * is in a range, names them with v8_procs_frames and lets the thread go.
 * Each probe prints "probe N", then a line per frame, innermost first:
 * "js NAME FILE:LINE" (each JS function of a V8 frame, inlined ones
 * first), "v8 PC" (V8 code that names no JS function) or "native PC".
 * Last, "named N V8 frames in T us": the time v8_procs_frames took.
 * For the integration test v8_frames.sh; needs to ptrace PID.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lang/v8_procs.h"
#include "symbols/proc_maps.h"

#define MAX_WALK 64

/* Time spent naming V8 frames, and how many were asked, for the summary line. */
static uint64_t naming_ns, naming_calls;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t peek(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;
	struct iovec local = { &v, 8 }, remote = { (void *)(uintptr_t)addr, 8 };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != 8)
		return 0;
	return v;
}

static bool in_ranges(const struct v8_capture *cap, uint64_t pc)
{
	for (int i = 0; i < cap->nranges; i++)
		if (pc >= cap->lo[i] && pc < cap->hi[i])
			return true;
	return false;
}

/* One probe of the stopped thread: its rbp chain, each V8 frame named. */
static void walk(struct v8_procs *vp, pid_t pid, uint32_t uid, const struct v8_capture *cap,
		 const struct user_regs_struct *regs)
{
	uint64_t pc = regs->rip, fp = regs->rbp;

	for (int i = 0; i < MAX_WALK && pc; i++) {
		struct hotspot_frame out[V8_MAX_FRAMES];
		uint64_t words[V8_WORDS], next_fp;
		int n = -ENOENT;

		if (in_ranges(cap, pc)) {
			for (int w = 0; w < V8_WORDS; w++)
				words[w] = peek(pid, fp + (uint64_t)(int64_t)cap->offsets[w]);
			uint64_t t0 = now_ns();

			n = v8_procs_frames(vp, (uint32_t)pid, uid, pc, i > 0, words, out,
					    V8_MAX_FRAMES);
			naming_ns += now_ns() - t0;
			naming_calls++;
			if (n <= 0)
				printf("v8 %#" PRIx64 " (%s)\n", pc, strerror(-n));
		} else {
			printf("native %#" PRIx64 "\n", pc);
		}
		for (int k = 0; k < n; k++)
			printf("js %s %s:%d\n", out[k].name, out[k].file, out[k].line);
		if (!fp)
			break;
		next_fp = peek(pid, fp);
		pc = peek(pid, fp + 8);
		/* The chain goes up the stack, or it has ended. */
		if (next_fp <= fp)
			break;
		fp = next_fp;
	}
}

static int probe(struct v8_procs *vp, pid_t pid, uint32_t uid, const struct v8_capture *cap)
{
	struct user_regs_struct regs;
	int status, err = 0;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) || ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		return -errno;
	if (waitpid(pid, &status, __WALL) != pid) {
		err = -errno;
	} else if (ptrace(PTRACE_GETREGS, pid, 0, &regs)) {
		err = -errno;
	} else {
		walk(vp, pid, uid, cap, &regs);
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return err;
}

int main(int argc, char **argv)
{
	map_entries_t maps = { 0 };
	struct v8_capture cap;
	struct v8_procs *vp;
	char path[64];
	struct stat st;
	pid_t pid;
	int probes, err;

	if (argc < 2) {
		fprintf(stderr, "usage: v8_probe PID [PROBES]\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[1]);
	probes = argc > 2 ? atoi(argv[2]) : 5;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	vp = v8_procs_new("/proc");
	if (!vp || stat(path, &st) || proc_maps_read("/proc", pid, &maps)) {
		fprintf(stderr, "v8_probe: cannot read process %d\n", (int)pid);
		return 1;
	}
	for (size_t i = 0; i < maps.len; i++)
		v8_procs_note_mapping(vp, (uint32_t)pid, &maps.data[i]);
	map_entries_free(&maps);
	if (!v8_procs_is_node(vp, (uint32_t)pid)) {
		fprintf(stderr, "v8_probe: process %d maps no node\n", (int)pid);
		return 1;
	}
	err = v8_procs_capture(vp, (uint32_t)pid, &cap);
	if (err) {
		fprintf(stderr, "v8_probe: capture of %d: %s\n", (int)pid, strerror(-err));
		return 1;
	}
	for (int i = 0; i < cap.nranges; i++)
		printf("range %#" PRIx64 " %#" PRIx64 "\n", cap.lo[i], cap.hi[i]);
	printf("offsets %d %d %d %d\n", cap.offsets[0], cap.offsets[1], cap.offsets[2],
	       cap.offsets[3]);
	for (int i = 0; i < probes; i++) {
		printf("probe %d\n", i);
		err = probe(vp, pid, (uint32_t)st.st_uid, &cap);
		if (err) {
			fprintf(stderr, "v8_probe: probe of %d: %s\n", (int)pid, strerror(-err));
			return 1;
		}
		fflush(stdout);
		nanosleep(&(struct timespec){ 0, 37 * 1000 * 1000 }, NULL);
	}
	/* The first probe reads node's metadata and fills the caches; the others find them. */
	printf("named %llu V8 frames in %llu us\n", (unsigned long long)naming_calls,
	       (unsigned long long)(naming_ns / 1000));
	v8_procs_free(vp);
	return 0;
}
