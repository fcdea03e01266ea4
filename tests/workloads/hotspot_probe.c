// SPDX-License-Identifier: BSD-2-Clause
/*
 * hotspot_probe PID: reads a running JVM's own description of itself
 * (lang/hotspot_vmstructs.h) as bpfprof does, derives the layout, and
 * follows it to the JVM's code heaps. Prints what it found, one "key
 * value" a line, and exits 1 when the layout cannot be derived or what it
 * leads to breaks what any JVM guarantees (1 to 16 heaps, each a range
 * inside the code cache's bounds, segments of 2^4 to 2^16 bytes).
 * Then it names the JVM's compiled code as bpfprof does (lang/hotspot_names.h):
 * for each nmethod of a class named PREFIX (default JitHot), one line
 * "nmethod CHAIN" per distinct chain of frames found along its code,
 * innermost first: "name:line <- name:line".
 * For the integration test hotspot_layout.sh; needs to read PID's memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lang/hotspot_names.h"
#include "lang/hotspot_vmstructs.h"
#include "symbols/proc_maps.h"
#include "util/elf_open.h"

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static uint64_t u64_at(pid_t *pid, uint64_t addr, int *err)
{
	uint64_t v = 0;

	if (!*err)
		*err = read_mem(pid, addr, &v, sizeof(v));
	return v;
}

static int32_t i32_at(pid_t *pid, uint64_t addr, int *err)
{
	int32_t v = 0;

	if (!*err)
		*err = read_mem(pid, addr, &v, sizeof(v));
	return v;
}

/* libjvm.so's exports as addresses in the process: its ELF values plus the load bias. */
static int find_exports(pid_t pid, uint64_t exports[HS_EXPORT_COUNT])
{
	map_entries_t maps = { 0 };
	int err = proc_maps_read("/proc", pid, &maps), found = -ENOENT;

	if (err)
		return err;
	for (size_t i = 0; i < maps.len && found == -ENOENT; i++) {
		const struct map_entry *e = &maps.data[i];
		const char *base = strrchr(e->path, '/');
		char link[96];
		Elf *elf;
		int fd;

		if (!base || strcmp(base, "/libjvm.so"))
			continue;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 e->start, e->end);
		fd = open(link, O_RDONLY | O_CLOEXEC);
		elf = fd >= 0 ? elf_open_fd(fd) : NULL;
		if (elf && !hotspot_exports_mapped(elf, e->start, e->pgoff, exports)) {
			printf("libjvm %s\n", e->path);
			found = 0;
		}
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	map_entries_free(&maps);
	return found;
}

/* A chain seen already (the probe prints each once). */
static bool seen(char (*chains)[1024], int n, const char *c)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(chains[i], c))
			return true;
	return false;
}

/* Every nmethod of a method named `prefix`..., named along its code, as a sample's pc would be. */
static int name_nmethods(pid_t *pid, const struct hotspot_layout *l, uint64_t heaps, int nheaps,
			 const char *prefix)
{
	static char chains[256][1024];
	struct hotspot_frame frames[16], own;
	struct hotspot_jvm j;
	int nchains = 0, nmethods = 0, err = 0;

	hotspot_jvm_init(&j, l, read_mem, pid);
	for (int h = 0; h < nheaps && h < 16; h++) {
		uint64_t heap = u64_at(pid, heaps + 8 * (uint64_t)h, &err);
		uint64_t lo = u64_at(pid, heap + l->heap_memory + l->vspace_low, &err);
		uint64_t hi = u64_at(pid, heap + l->heap_memory + l->vspace_high, &err);
		uint64_t segmap = u64_at(pid, heap + l->heap_segmap + l->vspace_low, &err);
		int32_t log2 = i32_at(pid, heap + l->heap_log2_segment, &err);
		size_t nsegs = err || log2 < 4 || log2 > 16 ? 0 : (size_t)((hi - lo) >> log2);
		unsigned char *map = nsegs && nsegs < (64u << 20) ? malloc(nsegs) : NULL;
		size_t got = 0;

		/* The segment map as far as it is committed (a page at a time): a read past that
		 * fails. */
		while (map && got < nsegs) {
			size_t chunk = nsegs - got < 4096 ? nsegs - got : 4096;

			if (read_mem(pid, segmap + got, map + got, chunk))
				break;
			got += chunk;
		}
		for (size_t seg = 0; seg < got; seg++) {
			uint64_t blob = lo + ((uint64_t)seg << log2) + l->heap_block_size, begin,
				 end, method;
			char name[16] = "";
			uint8_t kind = 0;
			int e = 0;

			/* 0: the first segment of a block in use (free ones are 0xff throughout).
			 */
			if (map[seg] != 0)
				continue;
			if (l->blob_kind >= 0)
				e = read_mem(pid, blob + (uint64_t)l->blob_kind, &kind, 1);
			else
				e = read_mem(pid, u64_at(pid, blob + l->blob_name, &e), name, 8);
			if (e || (l->blob_kind >= 0 ? kind != l->blob_kind_nmethod
						    : strncmp(name, "nmethod", 7)))
				continue;
			method = u64_at(pid, blob + l->nmethod_method, &e);
			if (e || hotspot_name_method(&j, method, -1, &own) ||
			    strncmp(own.name, prefix, strlen(prefix)))
				continue;
			nmethods++;
			if (l->blob_code_offsets) {
				begin = blob + (uint32_t)i32_at(pid, blob + l->blob_code_begin, &e);
				end = blob + (uint32_t)i32_at(pid, blob + l->blob_code_end, &e);
			} else {
				begin = u64_at(pid, blob + l->blob_code_begin, &e);
				end = u64_at(pid, blob + l->blob_code_end, &e);
			}
			for (uint64_t pc = begin; !e && pc < end && pc - begin < (1u << 20);
			     pc += 4) {
				/* As a sampled leaf: the debug information nearest after pc. */
				int n = hotspot_name_nmethod(&j, blob, (uint32_t)(pc - begin),
							     false, -1, frames, 16, NULL);
				char chain[1024];
				size_t at = 0;

				for (int k = 0; k < n && at < sizeof(chain) - 1; k++)
					at += (size_t)snprintf(chain + at, sizeof(chain) - at,
							       "%s%s:%d", k ? " <- " : "",
							       frames[k].name, frames[k].line);
				if (n > 0 && nchains < 256 && !seen(chains, nchains, chain)) {
					strcpy(chains[nchains++], chain);
					printf("nmethod %s (%s)\n", chain, frames[0].file);
				}
			}
		}
		free(map);
	}
	printf("nmethods of %s*: %d\n", prefix, nmethods);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t exports[HS_EXPORT_COUNT], ga, data, low, high;
	struct hotspot_vmstructs *vm;
	struct hotspot_layout l;
	char missing[160];
	size_t counts[4];
	int err = 0, n, bad = 0;
	pid_t pid;

	if (argc < 2 || argc > 3 || (pid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: hotspot_probe PID [PREFIX]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	if ((err = find_exports(pid, exports))) {
		fprintf(stderr, "hotspot_probe: no libjvm.so with gHotSpotVMStructs in %d: %s\n",
			(int)pid, strerror(-err));
		return 1;
	}
	if ((err = hotspot_vmstructs_read(exports, read_mem, &pid, &vm))) {
		fprintf(stderr, "hotspot_probe: tables of %d: %s\n", (int)pid, strerror(-err));
		return 1;
	}
	hotspot_vmstructs_counts(vm, counts);
	printf("entries %zu structs %zu types %zu ints %zu longs\n", counts[0], counts[1],
	       counts[2], counts[3]);
	err = hotspot_layout_derive(vm, read_mem, &pid, &l, missing, sizeof(missing));
	hotspot_vmstructs_free(vm);
	if (err) {
		fprintf(stderr, "hotspot_probe: layout of %d: %s (%s)\n", (int)pid, strerror(-err),
			missing);
		return 1;
	}
	printf("major %u\n", l.major);
	printf("blob name %u frame_size %u code %s %u..%u kind %d\n", l.blob_name,
	       l.blob_frame_size, l.blob_code_offsets ? "offsets" : "pointers", l.blob_code_begin,
	       l.blob_code_end, l.blob_kind);
	printf("method constMethod %u; ConstMethod size %u code_size %u name %u flags %u line_flag "
	       "%#x; symbol length %u body %u; interp sender_sp %d last_sp %d\n",
	       l.method_const, l.const_method_size, l.const_method_code_size,
	       l.const_method_name_index, l.const_method_flags, l.flag_has_line_table,
	       l.symbol_length, l.symbol_body, l.interp_sender_sp, l.interp_last_sp);
	err = 0;
	low = u64_at(&pid, l.code_low_addr, &err);
	high = u64_at(&pid, l.code_high_addr, &err);
	ga = u64_at(&pid, l.code_heaps_addr, &err);
	n = ga ? i32_at(&pid, ga + l.array_len, &err) : 0;
	data = ga ? u64_at(&pid, ga + l.array_data, &err) : 0;
	if (err) {
		fprintf(stderr, "hotspot_probe: code cache of %d: %s\n", (int)pid, strerror(-err));
		return 1;
	}
	printf("code %#" PRIx64 "..%#" PRIx64 " heaps %d\n", low, high, n);
	bad |= !(low && low < high) || n < 1 || n > 16;
	for (int i = 0; i < n && i < 16 && !err; i++) {
		uint64_t heap = u64_at(&pid, data + 8 * (uint64_t)i, &err);
		uint64_t lo = u64_at(&pid, heap + l.heap_memory + l.vspace_low, &err);
		uint64_t hi = u64_at(&pid, heap + l.heap_memory + l.vspace_high, &err);
		uint64_t seg = u64_at(&pid, heap + l.heap_segmap + l.vspace_low, &err);
		int32_t log2 = i32_at(&pid, heap + l.heap_log2_segment, &err);

		printf("heap %d %#" PRIx64 "..%#" PRIx64 " segmap %#" PRIx64 " log2_segment %d\n",
		       i, lo, hi, seg, log2);
		bad |= !(lo < hi && lo >= low && hi <= high && seg && log2 >= 4 && log2 <= 16);
	}
	if (err || bad) {
		fprintf(stderr, "hotspot_probe: the code heaps of %d are not what a JVM has%s%s\n",
			(int)pid, err ? ": " : "", err ? strerror(-err) : "");
		return 1;
	}
	return name_nmethods(&pid, &l, data, n, argc > 2 ? argv[2] : "JitHot.");
}
