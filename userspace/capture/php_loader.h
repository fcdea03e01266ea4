/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finds the PHP processes among those the unwinder reads: a process that
 * maps a PHP engine (lang/php_layout.h; a file whose name says php: the
 * CLI, php-fpm, libphp.so) gets its executor_globals, VM loop and layout
 * published to the BPF map php_procs (bpf/php.bpf.h) and registered with
 * lang/php_procs for naming its functions. Files are examined once each.
 * A forked child (php-fpm's workers) gets its parent's entry: the kernel
 * side copies none.
 */
#ifndef BPFPROF_CAPTURE_PHP_LOADER_H
#define BPFPROF_CAPTURE_PHP_LOADER_H

#include <stdint.h>

#include "../lang/php_layout.h"
#include "interp_files.h"
#include "proc_shares.h"
#include "../symbols/proc_maps.h"
#include "../util/hashmap.h"
#include "../util/vec.h"

struct php_procs;

struct php_loader_file {
	struct php_info info;
	int status; /* php_info_read's answer */
};

struct php_loader {
	struct proc_shares *shares;	/* holds the BPF map php_procs; not owned */
	struct php_procs *procs;	/* not owned */
	struct interp_file_cache files; /* its interpreter files met */
	struct interp_gone gone;	/* exited, forgotten three flushes later */
	uint32_t warned_version;	/* the last version without a layout, reported once */
	size_t processes;		/* PHP processes published */
};

void php_loader_init(struct php_loader *l, struct proc_shares *shares, struct php_procs *procs);
void php_loader_free(struct php_loader *l);
/* Process `pid` of user `uid`, whose mappings are `maps`: published or withdrawn. 0 or -ENOMEM. */
int php_loader_process(struct php_loader *l, uint32_t pid, uint32_t uid, const map_entries_t *maps);
int php_loader_forked(struct php_loader *l, uint32_t parent, uint32_t child);
/* As python_loader's: its functions stay three flushes for its last samples. */
void php_loader_exited(struct php_loader *l, uint32_t pid);
void php_loader_flush(struct php_loader *l);

#endif
