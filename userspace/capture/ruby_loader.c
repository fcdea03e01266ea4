// SPDX-License-Identifier: BSD-2-Clause
/* See ruby_loader.h. */
#include "ruby_loader.h"

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

#include "../lang/ruby_procs.h"
#include "interp_files.h"
#include "../util/log.h"

static int read_info(Elf *elf, void *info)
{
	return ruby_info_read(elf, info);
}

void ruby_loader_init(struct ruby_loader *l, struct proc_shares *shares, int map_fd,
		      struct ruby_procs *procs)
{
	memset(l, 0, sizeof(*l));
	interp_file_cache_init(&l->files, sizeof(struct ruby_loader_file),
			       offsetof(struct ruby_loader_file, info),
			       offsetof(struct ruby_loader_file, status), read_info);
	l->shares = shares;
	l->map_fd = map_fd;
	l->procs = procs;
	elf_version(EV_CURRENT);
}

void ruby_loader_free(struct ruby_loader *l)
{
	interp_file_cache_free(&l->files);
	interp_gone_free(&l->gone);
	memset(l, 0, sizeof(*l));
}

/* What the file of mapping `e` of `pid` is, examined once per (device, inode). */
static const struct ruby_loader_file *file_of(struct ruby_loader *l, uint32_t pid,
					      const struct map_entry *e)
{
	return interp_file_cache_get(&l->files, pid, e);
}

static void warn_version(struct ruby_loader *l, uint32_t pid, uint32_t version)
{
	char name[16];

	if (l->warned_version == version || !version)
		return;
	l->warned_version = version;
	log_info("process %u runs Ruby %s, whose frames this bpfprof cannot read; its stacks show "
		 "the interpreter's C functions",
		 pid, ruby_version_name(version, name));
}

static int publish(struct ruby_loader *l, uint32_t pid, uint32_t uid, const struct rb_proc *rp)
{
	int err = proc_shares_publish(l->shares, PROC_SHARE_RB, pid, uid, rp);

	if (!err)
		l->processes++;
	return err < 0 ? err : 0;
}

int ruby_loader_process(struct ruby_loader *l, uint32_t pid, uint32_t uid,
			const map_entries_t *maps)
{
	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];
		const struct ruby_loader_file *f;
		struct rb_proc rp = { 0 };
		char cwd_link[32], cwd[PATH_MAX];
		ssize_t n;
		uint64_t bias;

		if (!e->executable || !e->inode)
			continue;
		f = file_of(l, pid, e);
		if (!f || f->status == 0)
			continue;
		if (f->status < 0) {
			warn_version(l, pid, f->info.version);
			continue;
		}
		/* Every segment of the file moved by the same load bias as its code. */
		bias = e->start - e->pgoff - (uint64_t)f->info.exec_bias;
		rp.ec_modid_slot = f->info.modid_slot + bias;
		rp.ec_tls_offset = f->info.ec_tls_offset;
		rp.exec_start = f->info.exec_start + bias;
		rp.exec_end = rp.exec_start + f->info.exec_size;
		if (f->info.core_end) {
			rp.core_start = f->info.core_start + bias;
			rp.core_end = f->info.core_end + bias;
		}
		rp.layout = f->info.frames;
		snprintf(cwd_link, sizeof(cwd_link), "/proc/%u/cwd", pid);
		n = readlink(cwd_link, cwd, sizeof(cwd) - 1);
		cwd[n > 0 ? n : 0] = '\0';
		if (ruby_procs_add(l->procs, pid, uid, f->info.code, cwd))
			return -ENOMEM;
		ruby_procs_note_version(l->procs, f->info.version);
		return publish(l, pid, uid, &rp);
	}
	proc_shares_withdraw(l->shares, PROC_SHARE_RB, pid);
	ruby_procs_forget(l->procs, pid);
	return 0;
}

int ruby_loader_forked(struct ruby_loader *l, uint32_t parent, uint32_t uid, uint32_t child)
{
	struct rb_proc rp;

	if (!ruby_procs_known(l->procs, parent) || bpf_map_lookup_elem(l->map_fd, &parent, &rp))
		return 0;
	if (ruby_procs_fork(l->procs, parent, child))
		return -ENOMEM;
	return publish(l, child, uid, &rp);
}

static void forget(void *procs, uint32_t pid)
{
	ruby_procs_forget(procs, pid);
}

void ruby_loader_exited(struct ruby_loader *l, uint32_t pid)
{
	proc_shares_withdraw(l->shares, PROC_SHARE_RB, pid);
	if (ruby_procs_known(l->procs, pid) && interp_gone_add(&l->gone, pid))
		ruby_procs_forget(l->procs, pid); /* out of memory: now rather than never */
}

void ruby_loader_flush(struct ruby_loader *l)
{
	interp_gone_flush(&l->gone, forget, l->procs);
}
