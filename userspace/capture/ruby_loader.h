/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finds the Ruby processes among those the unwinder reads: a process that
 * maps a CRuby interpreter (lang/ruby_layout.h) gets where its
 * ruby_current_ec is, its VM entry and layout published to the BPF map
 * rb_procs (bpf/ruby.bpf.h) and is registered with lang/ruby_procs for
 * naming its iseqs. Interpreter files are examined once each.
 */
#ifndef BPFPROF_CAPTURE_RUBY_LOADER_H
#define BPFPROF_CAPTURE_RUBY_LOADER_H

#include <stdint.h>

#include "../lang/ruby_layout.h"
#include "interp_files.h"
#include "proc_shares.h"
#include "../symbols/proc_maps.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct ruby_procs;

struct ruby_loader_file {
	struct ruby_info info;
	int status; /* ruby_info_read's answer */
};

struct ruby_loader {
	struct proc_shares *shares;	/* holds the BPF map rb_procs; not owned */
	int map_fd;			/* rb_procs */
	struct ruby_procs *procs;	/* not owned */
	struct interp_file_cache files; /* its interpreter files met */
	struct interp_gone gone;	/* exited: forgotten three flushes later */
	uint32_t warned_version;	/* the last version without a layout, reported once */
	size_t processes;		/* Ruby processes published */
};

/* `shares` publishes to rb_procs, `map_fd` (proc_shares_use(shares, PROC_SHARE_RB, ...)). */
void ruby_loader_init(struct ruby_loader *l, struct proc_shares *shares, int map_fd,
		      struct ruby_procs *procs);
void ruby_loader_free(struct ruby_loader *l);

/*
 * Process `pid`, whose mappings are `maps` (just read): published when it
 * runs an interpreter bpfprof has a layout for, else withdrawn. 0 or -ENOMEM.
 */
int ruby_loader_process(struct ruby_loader *l, uint32_t pid, uint32_t uid,
			const map_entries_t *maps);
/* `child` was forked from `parent`: it gets its parent's entry. */
int ruby_loader_forked(struct ruby_loader *l, uint32_t parent, uint32_t uid, uint32_t child);
/* The process exited: its iseqs stay three more flushes (as python_loader.h says why). */
void ruby_loader_exited(struct ruby_loader *l, uint32_t pid);
void ruby_loader_flush(struct ruby_loader *l);

#endif
