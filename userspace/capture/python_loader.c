// SPDX-License-Identifier: BSD-2-Clause
/* See python_loader.h. */
#include "python_loader.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lang/python_procs.h"
#include "../util/log.h"
#include "interp_files.h"

static int examine(Elf *elf, void *info)
{
	return python_info_read(elf, info);
}

void python_loader_init(struct python_loader *l, struct proc_shares *shares,
			struct python_procs *procs)
{
	memset(l, 0, sizeof(*l));
	interp_file_cache_init(&l->files, sizeof(struct python_loader_file),
			       offsetof(struct python_loader_file, info),
			       offsetof(struct python_loader_file, status), examine);
	l->shares = shares;
	l->procs = procs;
	elf_version(EV_CURRENT);
	/* Unknown (offset 0): each Python thread is found through its interpreter's list. */
	if (glibc_tsd_measure(&l->tsd))
		log_debug("glibc's thread-specific data not located: Python threads found by list");
}

/* Where `maps`' threads keep their key values: known for bpfprof's own libc file only. */
static uint32_t tsd_offset_of(const struct python_loader *l, const map_entries_t *maps)
{
	if (!l->tsd.offset)
		return 0;
	for (size_t i = 0; i < maps->len; i++)
		if (maps->data[i].inode == l->tsd.inode && maps->data[i].dev == l->tsd.dev)
			return l->tsd.offset;
	return 0;
}

void python_loader_free(struct python_loader *l)
{
	interp_file_cache_free(&l->files);
	interp_gone_free(&l->gone);
	memset(l, 0, sizeof(*l));
}

/* What the file of mapping `e` of `pid` is, examined once per (device, inode). */
static const struct python_loader_file *file_of(struct python_loader *l, uint32_t pid,
						const struct map_entry *e)
{
	return interp_file_cache_get(&l->files, pid, e);
}

static void warn_version(struct python_loader *l, uint32_t pid, uint32_t version)
{
	char name[16];

	if (l->warned_version == version)
		return;
	l->warned_version = version;
	if (version)
		log_info("process %u runs Python %s, whose frames this bpfprof cannot read; its "
			 "stacks show the interpreter's C functions",
			 pid, python_version_name(version, name));
}

static void withdraw(struct python_loader *l, uint32_t pid)
{
	proc_shares_withdraw(l->shares, PROC_SHARE_PY, pid);
}

int python_loader_process(struct python_loader *l, uint32_t pid, uint32_t uid,
			  const map_entries_t *maps)
{
	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];
		const struct python_loader_file *f;
		struct py_proc pp = { 0 };
		char cwd_link[32], cwd[PATH_MAX];
		ssize_t n;
		int64_t bias;
		int err;

		if (!e->executable || !e->inode)
			continue;
		f = file_of(l, pid, e);
		if (!f || f->status == 0)
			continue;
		if (f->status < 0) {
			warn_version(l, pid, f->info.version_hex);
			continue;
		}
		/* Every segment of the file moved by the same load bias as its code. */
		bias = (int64_t)(e->start - e->pgoff) - f->info.exec_bias;
		pp.interp_head = f->info.interp_head + (uint64_t)bias;
		pp.tss_key = f->info.tss_key ? f->info.tss_key + (uint64_t)bias : 0;
		pp.tsd_offset = tsd_offset_of(l, maps);
		pp.eval_start = f->info.eval_start + (uint64_t)bias;
		pp.eval_end = pp.eval_start + f->info.eval_size;
		pp.layout = f->info.frames;
		snprintf(cwd_link, sizeof(cwd_link), "/proc/%u/cwd", pid);
		n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
		cwd[n > 0 ? n : 0] = '\0';
		if (python_procs_add(l->procs, pid, uid, &f->info, bias, cwd))
			return -ENOMEM;
		/* Refused (its user holds its share of the map): admitted when sampled. */
		err = proc_shares_publish(l->shares, PROC_SHARE_PY, pid, uid, &pp);
		if (err < 0)
			return err;
		if (!err)
			l->processes++;
		return 0;
	}
	withdraw(l, pid);
	python_procs_forget(l->procs, pid);
	return 0;
}

int python_loader_forked(struct python_loader *l, uint32_t parent, uint32_t child)
{
	return python_procs_fork(l->procs, parent, child);
}

static void forget(void *procs, uint32_t pid)
{
	python_procs_forget(procs, pid);
}

void python_loader_exited(struct python_loader *l, uint32_t pid)
{
	withdraw(l, pid);
	if (python_procs_known(l->procs, pid) && interp_gone_add(&l->gone, pid))
		python_procs_forget(l->procs, pid); /* out of memory: now rather than never */
}

void python_loader_flush(struct python_loader *l)
{
	interp_gone_flush(&l->gone, forget, l->procs);
}
