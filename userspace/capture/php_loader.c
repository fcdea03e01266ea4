// SPDX-License-Identifier: BSD-2-Clause
/* See php_loader.h. */
#include "php_loader.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <libelf.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "../lang/php_procs.h"
#include "../util/log.h"

static int examine(Elf *elf, void *info)
{
	return php_info_read(elf, info);
}

void php_loader_init(struct php_loader *l, struct proc_shares *shares, struct php_procs *procs)
{
	memset(l, 0, sizeof(*l));
	interp_file_cache_init(&l->files, sizeof(struct php_loader_file),
			       offsetof(struct php_loader_file, info),
			       offsetof(struct php_loader_file, status), examine);
	l->shares = shares;
	l->procs = procs;
	elf_version(EV_CURRENT);
}

void php_loader_free(struct php_loader *l)
{
	interp_file_cache_free(&l->files);
	interp_gone_free(&l->gone);
	memset(l, 0, sizeof(*l));
}

/*
 * Whether a mapping's file may be PHP's: its name says php. Every other
 * library of every process would otherwise have its symbols read once.
 */
static bool named_php(const char *path)
{
	const char *base = strrchr(path, '/');

	return strstr(base ? base + 1 : path, "php") != NULL;
}

/* What the file of mapping `e` of `pid` is, examined once per (device, inode). */
static const struct php_loader_file *file_of(struct php_loader *l, uint32_t pid,
					     const struct map_entry *e)
{
	return interp_file_cache_get(&l->files, pid, e);
}

static void warn_version(struct php_loader *l, uint32_t pid, const struct php_info *info)
{
	char name[16];

	if (l->warned_version == info->version)
		return;
	l->warned_version = info->version;
	if (info->version)
		log_info("process %u runs PHP %s%s, whose frames this bpfprof cannot read; its "
			 "stacks show the engine's C functions",
			 pid, php_version_name(info->version, name),
			 info->zts ? " (a thread-safe build)" : "");
}

static int publish(struct php_loader *l, uint32_t pid, uint32_t uid, const struct php_proc *pp)
{
	int err = proc_shares_publish(l->shares, PROC_SHARE_PHP, pid, uid, pp);

	if (err < 0)
		return err;
	if (!err)
		l->processes++;
	return 0;
}

int php_loader_process(struct php_loader *l, uint32_t pid, uint32_t uid, const map_entries_t *maps)
{
	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];
		const struct php_loader_file *f;
		struct php_proc pp = { 0 };
		int64_t bias;

		if (!e->executable || !e->inode || !e->path || !named_php(e->path))
			continue;
		f = file_of(l, pid, e);
		if (!f || f->status == 0)
			continue;
		if (f->status < 0) {
			warn_version(l, pid, &f->info);
			continue;
		}
		/* Every segment of the file moved by the same load bias as its code. */
		bias = (int64_t)(e->start - e->pgoff) - f->info.exec_bias;
		pp.eg = f->info.eg + (uint64_t)bias;
		pp.eval_start = f->info.eval_start + (uint64_t)bias;
		pp.eval_end = pp.eval_start + f->info.eval_size;
		pp.vm_start = f->info.vm_start + (uint64_t)bias;
		pp.layout = f->info.frames;
		if (php_procs_add(l->procs, pid, uid, &f->info))
			return -ENOMEM;
		return publish(l, pid, uid, &pp);
	}
	proc_shares_withdraw(l->shares, PROC_SHARE_PHP, pid);
	php_procs_forget(l->procs, pid);
	return 0;
}

int php_loader_forked(struct php_loader *l, uint32_t parent, uint32_t child)
{
	struct php_proc pp;
	uint32_t uid;
	int fd = l->shares->fds[PROC_SHARE_PHP];

	if (!php_procs_known(l->procs, parent) || fd < 0 || bpf_map_lookup_elem(fd, &parent, &pp) ||
	    proc_shares_user(l->shares, child, &uid))
		return 0;
	if (php_procs_fork(l->procs, parent, child))
		return -ENOMEM;
	return publish(l, child, uid, &pp);
}

static void forget(void *procs, uint32_t pid)
{
	php_procs_forget(procs, pid);
}

void php_loader_exited(struct php_loader *l, uint32_t pid)
{
	proc_shares_withdraw(l->shares, PROC_SHARE_PHP, pid);
	if (php_procs_known(l->procs, pid) && interp_gone_add(&l->gone, pid))
		php_procs_forget(l->procs, pid); /* out of memory: now rather than never */
}

void php_loader_flush(struct php_loader *l)
{
	interp_gone_flush(&l->gone, forget, l->procs);
}
