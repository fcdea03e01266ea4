/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The JVMs (HotSpot) the profile meets, and the Java code at their
 * samples' addresses, read from each JVM while it runs.
 *
 * A process that maps libjvm.so is noted; at its first address in
 * anonymous code its tables are read (hotspot_vmstructs.h) and the code
 * cache's heaps found. An address is then looked up as the JVM does: the
 * heap's segment map leads to the code blob holding it; an nmethod is
 * named with what C2 inlined there (hotspot_names.h), the interpreter and
 * stubs by their blob's name. A JVM whose heaps are not set up yet is
 * asked again later; one whose tables cannot be read says so once and
 * keeps its "[JIT] java" frames.
 *
 * Every read of a JVM's memory goes through a reader with a deadline
 * (python_reader.h): a page of it may never arrive (its owner's FUSE file),
 * and the thread asking drains the rings. Answers are kept per (pid,
 * address), at most HOTSPOT_PROC_MAX_CACHED a JVM and as many a user
 * (the older ones making room), and checked again against the code they
 * named.
 */
#ifndef BPFPROF_LANG_HOTSPOT_PROCS_H
#define BPFPROF_LANG_HOTSPOT_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "../symbols/proc_maps.h"
#include "hotspot_names.h"
#include "python_reader.h"
#include "rt_module.h"

#define HOTSPOT_PROC_MAX_CACHED 65536
#define HOTSPOT_MAX_FRAMES	16

struct hotspot_procs;

struct hotspot_procs *hotspot_procs_new(const char *proc_root);
void hotspot_procs_free(struct hotspot_procs *hp);
/* For tests: memory read by `fn` instead of process_vm_readv. */
void hotspot_procs_set_reader(struct hotspot_procs *hp, python_mem_read_fn fn, void *ctx);
/* For tests: how long a kept answer is trusted before its code is checked again (1 s). */
void hotspot_procs_set_verify_period(struct hotspot_procs *hp, uint64_t ns);
/* For tests: answers kept a JVM, a user, all (HOTSPOT_PROC_MAX_CACHED, as many, 4 times). */
void hotspot_procs_set_cache_caps(struct hotspot_procs *hp, size_t per_jvm, size_t per_user,
				  size_t total);
/*
 * libjvm.so's exports (their addresses in pid) as if read from its file
 * (tests: a JVM made in memory has no file). 0, or -ENOENT: pid is no JVM.
 */
int hotspot_procs_set_exports(struct hotspot_procs *hp, uint32_t pid,
			      const uint64_t exports[HS_EXPORT_COUNT]);

/* pid maps `e`: libjvm.so makes it a JVM (others are ignored). 0 or -ENOMEM. */
int hotspot_procs_note_mapping(struct hotspot_procs *hp, uint32_t pid, const struct map_entry *e);
/* Whether pid is a JVM (maps libjvm.so). */
bool hotspot_procs_is_jvm(const struct hotspot_procs *hp, uint32_t pid);

/*
 * The Java frames at `pc` of JVM pid (whose memory is uid's to read), a
 * call's return address (is_return) or a sampled leaf: innermost first, up
 * to max. The count; 0 when pc is no code of the JVM's
 * code cache (or the JVM cannot be read); a negative errno.
 */
int hotspot_procs_frames(struct hotspot_procs *hp, uint32_t pid, uint32_t uid, uint64_t pc,
			 bool is_return, struct hotspot_frame *out, int max);

/*
 * What the caller made of pid's answer at pc (an entry of its own), kept
 * for the next ask: hotspot_procs_cache right after hotspot_procs_frames
 * answered for that pc (the key may also set bit 63, to keep a leaf's
 * answer apart from a return address's). A kept answer is checked against
 * the JVM once a second (the nmethod's compile id: its code freed and
 * reused by another method drops it); one read only in part (a read
 * refused on the way) is kept a second only.
 */
bool hotspot_procs_cached(struct hotspot_procs *hp, uint32_t pid, uint64_t pc, uint32_t *value);
void hotspot_procs_cache(struct hotspot_procs *hp, uint32_t pid, uint64_t pc, uint32_t value);

/*
 * Whether pid's mappings `maps` map libjvm.so: 1 when they do (pid runs a
 * JVM now, not an image it exec'd since), 0 when not. Nothing is noted
 * (the model notes the mappings it reads, hotspot_procs_note_mapping).
 */
int hotspot_procs_note_maps(struct hotspot_procs *hp, uint32_t pid, const map_entries_t *maps);

/*
 * Runtime frames (bpf/runtime.bpf.h): what BPF should read in JVM pid's
 * frames, once its code cache is known: the code cache as the one range,
 * the interpreter frame's Method* and bytecode pointer (fp-24, fp-64;
 * r13 for the interrupted innermost frame), and how the user walk steps
 * its compiled frames by their frame size (out->hs: its code heaps and
 * segment maps, the blob's frame size field, the interpreter's code). 0
 * with *out filled; -EAGAIN until the model noted it and its first sample
 * in its code read its tables, or while its interpreter is not generated
 * yet (ask again); -ENOENT when its tables cannot be read.
 */
int hotspot_procs_capture(struct hotspot_procs *hp, uint32_t pid, uint32_t uid,
			  struct rt_proc *out);
/* The two above as the capture asks a runtime module (rt_module.h). */
struct rt_module hotspot_procs_rt_module(struct hotspot_procs *hp);
/* Whether pc is in JVM pid's template interpreter (its answer kept per pc). */
bool hotspot_procs_in_interpreter(struct hotspot_procs *hp, uint32_t pid, uint32_t uid,
				  uint64_t pc);
/*
 * The interpreted frame whose words BPF read (words[0] the Method*, words[1]
 * the bytecode pointer): "pkg.Class.method" with the line of its bytecode
 * index. 1, 0 when not a JVM read here, or a negative errno (unreadable,
 * no method there). 2: named, but without the line its bytecode index
 * should have (the line table unread: the read budget spent, a stalled
 * page), an answer not to keep.
 */
int hotspot_procs_interp_frame(struct hotspot_procs *hp, uint32_t pid, uint32_t uid,
			       const uint64_t words[RT_WORDS], struct hotspot_frame *out);
/* The caller's answer for an interpreted frame's (Method*, bytecode pointer), kept. */
bool hotspot_procs_interp_cached(struct hotspot_procs *hp, uint32_t pid,
				 const uint64_t words[RT_WORDS], uint32_t *value);
void hotspot_procs_interp_cache(struct hotspot_procs *hp, uint32_t pid,
				const uint64_t words[RT_WORDS], uint32_t value);

/* pid exited: its JVM state and answers go a little later (its last samples may follow). */
void hotspot_procs_exited(struct hotspot_procs *hp, uint32_t pid);
/* pid's JVM state and answers go now. */
void hotspot_procs_forget(struct hotspot_procs *hp, uint32_t pid);

#endif
