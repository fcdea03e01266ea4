/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The node processes (V8) the profile meets, and the JS functions at their
 * samples' frames, named from each process's heap while it runs.
 *
 * A process that maps an executable named node or nodejs, or a
 * libnode.so*, is noted; its V8 metadata is read from that file (v8_meta.h)
 * when first needed. BPF reads, for each frame whose pc is in V8's code
 * (v8_procs_capture: the embedded builtins blob, where the interpreter
 * runs, wherever node maps it, and the anonymous executable mappings of
 * V8's code space), the words at the fp offsets the metadata names; they
 * and the pc are named here (v8_names.h).
 *
 * Every read of a process's memory goes through a reader with a deadline
 * (python_reader.h), within a byte and a read-count budget per process;
 * each process's caches are of fixed size (struct v8_name_cache, made at
 * its first frame), and at most V8_MAX_NAMED_PROCS processes have them
 * (32 MB): the frames of those past it get the caller's fallback.
 */
#ifndef BPFPROF_LANG_V8_PROCS_H
#define BPFPROF_LANG_V8_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "../symbols/proc_maps.h"
#include "python_reader.h"
#include "rt_module.h"
#include "v8_names.h"

#define V8_MAX_RANGES	   8
#define V8_MAX_FRAMES	   16
/* node processes whose frames are named at once (each keeps a struct v8_name_cache). */
#define V8_MAX_NAMED_PROCS 256

/* What BPF captures for a node process. */
struct v8_capture {
	uint64_t lo[V8_MAX_RANGES], hi[V8_MAX_RANGES]; /* code ranges [lo, hi) */
	int nranges;
	int32_t offsets[V8_WORDS]; /* words[i] = the 8 bytes at fp + offsets[i] (enum v8_word) */
};

struct v8_procs;

struct v8_procs *v8_procs_new(const char *proc_root);
void v8_procs_free(struct v8_procs *vp);
/* For tests: memory read by `fn` instead of process_vm_readv. */
void v8_procs_set_reader(struct v8_procs *vp, python_mem_read_fn fn, void *ctx);

/* pid maps `e`: node, nodejs or libnode.so* makes it a node process. 0 or -ENOMEM. */
int v8_procs_note_mapping(struct v8_procs *vp, uint32_t pid, const struct map_entry *e);
/* Whether pid is a node process (noted). */
bool v8_procs_is_node(const struct v8_procs *vp, uint32_t pid);

/*
 * The code ranges and word offsets of node process pid, from its maps now
 * (V8's code space grows: ask again when its mappings change). 0;
 * -ENOENT (no node process, or gone), -ENOTSUP (a V8 that is not read:
 * said once per node file, with the reason, at -v for each process).
 */
int v8_procs_capture(struct v8_procs *vp, uint32_t pid, struct v8_capture *out);

/*
 * Whether pid's mappings `maps` (just read) map node, nodejs or
 * libnode.so*: 1 when they do, with pid noted (v8_procs_note_mapping), 0
 * when not (pid's state, from an image it exec'd away from, goes), -ENOMEM.
 * A pid noted for another node file than the one mapped now is noted anew.
 */
int v8_procs_note_maps(struct v8_procs *vp, uint32_t pid, const map_entries_t *maps);
/*
 * The capture above as the capture asks a runtime module (rt_module.h):
 * RT_KIND_V8, the ranges, the four words; asked again at every change of
 * pid's executable mappings (each new code page of V8's).
 */
struct rt_module v8_procs_rt_module(struct v8_procs *vp);

/*
 * The JS frames of node process pid (its memory uid's to read) at `pc`, a
 * call's return address (is_return) or a sampled leaf, whose words are
 * `words` (read at v8_capture.offsets): innermost first, up to max, with
 * the function's name ("name" or "<anonymous>"), its script's name and the
 * 1-based line (0: unknown). A typed frame (entry, exit, stub...) in V8's
 * code space is one frame "V8::<Type>" ("V8::EntryFrame"); in the builtins
 * blob it is -ENOENT, for the caller's native name of the builtin. The
 * count, or -ENOENT (no JS frame: the caller falls back to its own
 * naming; also for a process past V8_MAX_NAMED_PROCS), -EBUSY (over
 * budget), -ETIMEDOUT, another negative errno.
 */
int v8_procs_frames(struct v8_procs *vp, uint32_t pid, uint32_t uid, uint64_t pc, bool is_return,
		    const uint64_t words[V8_WORDS], struct hotspot_frame *out, int max);

/* pid exited: its state goes a little later (its last samples may follow). */
void v8_procs_exited(struct v8_procs *vp, uint32_t pid);
/* pid's state goes now. */
void v8_procs_forget(struct v8_procs *vp, uint32_t pid);

#endif
