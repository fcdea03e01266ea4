/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Java frames as the profile's tables see them: each distinct chain of
 * methods a sample met at one piece of compiled code (the method, and the
 * ones C2 inlined into it there), or one interpreted or stub frame, is one
 * entry, and a raw frame (OBJ_JAVA, entry) names it. Entries hold their own
 * strings, so a frame stays named after its JVM is gone.
 */
#ifndef BPFPROF_SYMBOLS_JAVA_FRAMES_H
#define BPFPROF_SYMBOLS_JAVA_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "../lang/hotspot_names.h"
#include "symbolizer.h"

struct java_frames;

struct java_frames *java_frames_new(void);
void java_frames_free(struct java_frames *f);

/*
 * The entry of a chain of n frames, innermost first (as hotspot_names.h
 * gives them; at most RESOLVED_MAX_DEPTH are kept, the outermost), added on
 * first use; a negative errno (-ENOMEM).
 */
int64_t java_frames_intern(struct java_frames *f, const struct hotspot_frame *frames, int n);

/*
 * The same, a new chain charged to `user` (the uid of the process whose
 * frames they are, folded to its owner: util/uid_owner.h): a process
 * that makes every sample's names new (a fake JVM rewriting its Symbols)
 * would otherwise grow root's profiler without end. Chains are kept up to
 * JAVA_FRAMES_MAX_BYTES in all and JAVA_FRAMES_USER_BYTES a user; past
 * that a new chain is the one entry named JAVA_FRAMES_OVER_BUDGET (said
 * once). JAVA_FRAMES_NO_USER: charged to all only.
 */
#define JAVA_FRAMES_MAX_BYTES	(128u << 20)
#define JAVA_FRAMES_USER_BYTES	(JAVA_FRAMES_MAX_BYTES / 4)
#define JAVA_FRAMES_NO_USER	UINT32_MAX
#define JAVA_FRAMES_OVER_BUDGET "[Java code past bpfprof's memory budget]"
int64_t java_frames_intern_user(struct java_frames *f, uint32_t user,
				const struct hotspot_frame *frames, int n);
/* Whose frames an entry holds: the profile's category, and the front-end's isJS. */
enum java_frames_lang {
	JAVA_FRAMES_JAVA,     /* a JVM's (the Java category) */
	JAVA_FRAMES_JS,	      /* V8's JS functions (JavaScript, isJS) */
	JAVA_FRAMES_V8_OTHER, /* V8's typed frames, V8::<Type> (JavaScript, not isJS) */
	JAVA_FRAMES_PHP,      /* PHP's functions (the PHP category) */
};

/* java_frames_intern_user for frames of runtime `lang`: entries of its own. */
int64_t java_frames_intern_lang(struct java_frames *f, uint32_t user,
				const struct hotspot_frame *frames, int n,
				enum java_frames_lang lang);
/* For tests: the caps, in bytes. */
void java_frames_set_caps(struct java_frames *f, size_t max_bytes, size_t max_user_bytes);

/* Names entry `index` into `out`; false for an index never handed out. */
bool java_frames_resolve(const struct java_frames *f, uint64_t index, struct resolved_frame *out);

size_t java_frames_count(const struct java_frames *f);

#endif
