// SPDX-License-Identifier: BSD-2-Clause
/* See hotspot_procs.h. */
#include "hotspot_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/elf_open.h"
#include "../util/hashmap.h"
#include "../util/log.h"
#include "../util/uid_owner.h"
#include "../util/vec.h"
#include "hotspot_answers.h"
#include "read_budget.h"

/* How long to wait for one read of a JVM's memory (its page may be its owner's FUSE file). */
#define READ_DEADLINE_MS 500
/* A JVM whose code heaps are not set up yet (it is starting) is read again after this. */
#define RETRY_NS	 (200ull * 1000 * 1000)
/* A JVM whose tables read as broken is asked this many times (5 s) before it is given up. */
#define LOAD_TRIES	 25
/* Back-steps through a segment map to a block's start: HotSpot keeps them short. */
#define SEGMAP_STEPS	 64
/* Bytes of a segment map read at once, and reads of it for one address at most. */
#define SEGMAP_WINDOW	 256u
#define SEGMAP_WINDOWS	 4
/*
 * An address that named nothing (free space, no blob's code, a blob that
 * could not be named) is not asked again for MISS_KEEP_MS: the caller keeps
 * no answer for it, and a fake JVM's every sample would be read anew.
 * At most MAX_MISSES kept a JVM (then all forgotten at once).
 */
#define MISS_KEEP_MS	 500u
#define MAX_MISSES	 4096u
#define MAX_HEAPS	 16
/* A libjvm.so read for its exports at most: JDK 17's and 25's are 20 to 25 MB. */
#define LIBJVM_MAX_BYTES (256ull << 20)
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
/*
 * What one user's JVMs' reads may take (lang/read_budget.h): a real JVM's
 * frames are a few KB of debug information each, read once (answers are
 * kept); a fake one that makes every sampled address new and its debug
 * information huge, or its reads many and small, would otherwise keep the
 * thread that drains the rings reading. A read costs READ_MIN_COST at
 * least (its handoff to a reader thread), a frame asked FRAME_COST more.
 * Past the budget the user's code shows as [JIT] java until it refills;
 * all users' JVMs together get READ_GLOBAL_PER_S.
 */
#define READ_BYTES_PER_S  (8ull << 20)
#define READ_BYTES_BURST  (32ull << 20)
#define READ_GLOBAL_PER_S (24ull << 20)
#define READ_GLOBAL_BURST (64ull << 20)
#define READ_MIN_COST	  512
#define FRAME_COST	  4096
/*
 * Answers kept (64 bytes or so each, lang/hotspot_answers.h): a JVM's at
 * most HOTSPOT_PROC_MAX_CACHED, a user's JVMs' together as many (its
 * subordinate uids its own), all JVMs' four times that.
 */
#define MAX_CACHED_USER	  HOTSPOT_PROC_MAX_CACHED
#define MAX_CACHED_TOTAL  (4u * HOTSPOT_PROC_MAX_CACHED)
/*
 * A kept answer is checked against its blob again after this: code freed
 * and its space reused by another method (tier 3 code, made not entrant,
 * is flushed all the time) would otherwise keep the old method's name.
 */
#define VERIFY_NS	  (1000ull * 1000 * 1000)
/* An answer read only in part (a failed read on the way) is asked again after this. */
#define PARTIAL_KEEP_NS	  (1000ull * 1000 * 1000)
/* Refused loads (a stalled read, the budget) back off to at most RETRY_NS << this. */
#define LOAD_BACKOFF_MAX  8

enum jvm_state { JVM_NOTED, JVM_READY, JVM_FAILED };

struct heap {
	uint64_t lo, hi, segmap;
	int log2;
};

/*
 * A code blob's header as read (blob_info): kept a second in a slot per
 * code page (BLOB_HINTS of them), so the pcs sampled in one blob walk the
 * segment map and read its header once, not each.
 */
struct blob_info {
	uint64_t blob, begin, end, name_ptr;
	uint64_t until_ns; /* 0: an empty slot */
	uint8_t kind;
	char name[64];
};
#define BLOB_HINTS   32
#define BLOB_KEEP_NS (1000ull * 1000 * 1000)

/* The reader's context for one JVM's reads. */
struct read_ctx {
	struct hotspot_procs *hp;
	struct jvm *jvm;
};

/*
 * An interpreted method as read once: its name and what names each of its
 * bytecode indexes (a method in a loop runs at many, each a frame key of
 * its own), so that a new index costs no read of the JVM.
 */
#define INTERP_METHODS	   1024u /* slots a JVM, direct-mapped by Method* */
#define INTERP_METHOD_JVMS 64u	 /* JVMs with such slots (some 0.5-4.5 MiB each) */
struct interp_method {
	uint64_t method; /* 0: a free slot */
	struct hotspot_frame frame;
	struct hotspot_method_lines lines;
};

struct jvm {
	uint32_t pid, uid;
	struct read_ctx rc; /* the context of j's reads: hotspot_names reads through it */
	enum jvm_state state;
	uint64_t exited_ns;			/* when its exit was seen; 0 while it runs */
	uint64_t jvm_start, jvm_end, jvm_pgoff; /* libjvm.so's mapping, to open and bias it */
	uint64_t tried_ns;
	unsigned load_tries; /* reads of its tables that failed */
	unsigned refusals;   /* loads refused by a stalled read or the budget: each waits longer */
	bool have_exports;   /* libjvm.so's exports, parsed once */
	uint64_t exports[HS_EXPORT_COUNT];
	struct hotspot_jvm j;
	uint64_t code_lo, code_hi;
	struct heap heaps[MAX_HEAPS];
	int nheaps;
	/* The template interpreter's code (capture_step), read once; tries spent on it. */
	uint64_t interp_lo, interp_hi;
	unsigned interp_tries;
	struct blob_info blobs[BLOB_HINTS]; /* by code page */
	uint32_t owner;			    /* uid folded to its owner: whose budget it spends */
	struct hotspot_answers answers;	    /* by pc (bit 63: a leaf) */
	struct hmap misses; /* pc (bit 63: a leaf) -> until when (monotonic ms, wrapping) */
	/*
	 * Interpreted frames' answers (hotspot_procs_interp_*), apart from the
	 * pc answers: keyed by two words, checked by nothing but their
	 * bound (an interpreted Method* lives as long as its class).
	 */
	struct hmap rt_cache;
	struct interp_method *methods; /* INTERP_METHODS slots by Method*; NULL until needed */
	bool owner_set;		       /* owner fixed at first ask: its answers count against it */
	/* The last answer hotspot_procs_frames gave, for hotspot_procs_cache to keep. */
	struct {
		uint64_t pc;
		struct hotspot_answer a;
		bool set;
	} last;
};

struct hotspot_procs {
	char *proc_root;
	VEC(struct jvm *) jvms;
	struct hmap by_pid; /* pid -> jvms index */
	struct py_reader *reader;
	python_mem_read_fn read;
	void *read_ctx;
	struct hotspot_answer_shares shares;
	uint64_t verify_ns;
	struct read_budget *budget;
	struct uid_owners owners; /* /etc/subuid: a user's subordinate uids are the user's */
	bool owners_read;
	VEC(uint32_t) warned; /* users told once that their JVMs read past the budget */
	size_t rt_cached;     /* interpreted frames' answers kept, all JVMs together */
	unsigned method_jvms; /* JVMs with interpreted methods kept (INTERP_METHOD_JVMS) */
};

static ssize_t vm_read(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	(void)ctx;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
}

struct hotspot_procs *hotspot_procs_new(const char *proc_root)
{
	struct hotspot_procs *hp = calloc(1, sizeof(*hp));

	if (!hp)
		return NULL;
	hp->proc_root = strdup(proc_root ? proc_root : "/proc");
	hp->read = vm_read;
	hp->verify_ns = VERIFY_NS;
	hp->shares.max_jvm = HOTSPOT_PROC_MAX_CACHED;
	hp->shares.max_user = MAX_CACHED_USER;
	hp->shares.max_total = MAX_CACHED_TOTAL;
	hp->budget = read_budget_new(&(struct read_budget_limits){
		.user_per_s = READ_BYTES_PER_S,
		.user_burst = READ_BYTES_BURST,
		.global_per_s = READ_GLOBAL_PER_S,
		.global_burst = READ_GLOBAL_BURST,
		.min_cost = READ_MIN_COST,
	});
	if (!hp->proc_root || !hp->budget) {
		read_budget_free(hp->budget);
		free(hp->proc_root);
		free(hp);
		return NULL;
	}
	return hp;
}

static void jvm_free(struct hotspot_procs *hp, struct jvm *jvm)
{
	if (!jvm)
		return;
	hotspot_debug_cache_free(jvm->j.debug_cache);
	hotspot_answers_free(&hp->shares, &jvm->answers);
	hmap_free(&jvm->misses);
	hp->rt_cached -= jvm->rt_cache.len;
	hmap_free(&jvm->rt_cache);
	if (jvm->methods) {
		for (unsigned i = 0; i < INTERP_METHODS; i++)
			free(jvm->methods[i].lines.table);
		free(jvm->methods);
		hp->method_jvms--;
	}
	free(jvm);
}

void hotspot_procs_free(struct hotspot_procs *hp)
{
	if (!hp)
		return;
	for (size_t i = 0; i < hp->jvms.len; i++)
		jvm_free(hp, hp->jvms.data[i]);
	vec_free(&hp->jvms);
	hmap_free(&hp->by_pid);
	py_reader_free(hp->reader);
	if (hp->budget) {
		struct read_budget_stats st;

		read_budget_stats(hp->budget, &st);
		if (st.reads || st.refused)
			log_debug("JVM reads: %" PRIu64 " reads costing %" PRIu64
				  " bytes of the read budget, %" PRIu64 " refused",
				  st.reads, st.cost, st.refused);
	}
	read_budget_free(hp->budget);
	vec_free(&hp->warned);
	hotspot_answer_shares_free(&hp->shares);
	free(hp->proc_root);
	free(hp);
}

void hotspot_procs_set_reader(struct hotspot_procs *hp, python_mem_read_fn fn, void *ctx)
{
	hp->read = fn;
	hp->read_ctx = ctx;
}

void hotspot_procs_set_verify_period(struct hotspot_procs *hp, uint64_t ns)
{
	hp->verify_ns = ns;
}

void hotspot_procs_set_cache_caps(struct hotspot_procs *hp, size_t per_jvm, size_t per_user,
				  size_t total)
{
	hp->shares.max_jvm = per_jvm;
	hp->shares.max_user = per_user;
	hp->shares.max_total = total;
}

static struct jvm *jvm_of(const struct hotspot_procs *hp, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&hp->by_pid, (struct hmap_key){ pid, 0 }, &idx))
		return NULL;
	return hp->jvms.data[idx];
}

bool hotspot_procs_is_jvm(const struct hotspot_procs *hp, uint32_t pid)
{
	return jvm_of(hp, pid) != NULL;
}

static void forget(struct hotspot_procs *hp, uint32_t pid);

int hotspot_procs_note_mapping(struct hotspot_procs *hp, uint32_t pid, const struct map_entry *e)
{
	const char *base = strrchr(e->path, '/');
	struct jvm *jvm;

	if (!base || strcmp(base, "/libjvm.so") || !e->executable)
		return 0;
	jvm = jvm_of(hp, pid);
	/*
	 * The same JVM: kept (another executable piece of the same file, at
	 * another offset, too). The same piece mapped elsewhere is another
	 * image (the pid exec'd a JVM again), and one met after the pid's
	 * exit a new process on a reused pid: the old state is of another
	 * process.
	 */
	if (jvm && !jvm->exited_ns && (jvm->jvm_start == e->start || jvm->jvm_pgoff != e->pgoff))
		return 0;
	if (jvm)
		forget(hp, pid);
	jvm = calloc(1, sizeof(*jvm));
	if (!jvm)
		return -ENOMEM;
	*jvm = (struct jvm){ .pid = pid,
			     .state = JVM_NOTED,
			     .jvm_start = e->start,
			     .jvm_end = e->end,
			     .jvm_pgoff = e->pgoff };
	if (vec_push(&hp->jvms, jvm) ||
	    hmap_put(&hp->by_pid, (struct hmap_key){ pid, 0 }, (uint32_t)(hp->jvms.len - 1))) {
		free(jvm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * An exited JVM's answers stay a while: the rings are read one after the
 * other, so its last samples may come after its exit's record.
 */
#define EXITED_KEEP_NS (2000ull * 1000 * 1000)

void hotspot_procs_exited(struct hotspot_procs *hp, uint32_t pid)
{
	struct jvm *jvm = jvm_of(hp, pid);
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (jvm)
		jvm->exited_ns = now ? now : 1;
	/* Those gone long enough go now: a sweep per exit, of the few JVMs there are. */
	for (size_t i = 0; i < hp->jvms.len;) {
		struct jvm *j = hp->jvms.data[i];

		if (j->exited_ns && now - j->exited_ns >= EXITED_KEEP_NS)
			forget(hp, j->pid); /* moves the last one here */
		else
			i++;
	}
}

void hotspot_procs_forget(struct hotspot_procs *hp, uint32_t pid)
{
	forget(hp, pid);
}

static void forget(struct hotspot_procs *hp, uint32_t pid)
{
	uint32_t idx;

	if (!hmap_get(&hp->by_pid, (struct hmap_key){ pid, 0 }, &idx))
		return;
	hmap_del(&hp->by_pid, (struct hmap_key){ pid, 0 });
	jvm_free(hp, hp->jvms.data[idx]);
	/* The last one moves into the hole. */
	hp->jvms.data[idx] = hp->jvms.data[--hp->jvms.len];
	if (idx < hp->jvms.len)
		hmap_put(&hp->by_pid, (struct hmap_key){ hp->jvms.data[idx]->pid, 0 }, idx);
}

/* Whether `jvm`'s user may read `len` more bytes now (said once per user when not). */
static bool take_read_budget(struct hotspot_procs *hp, struct jvm *jvm, size_t len)
{
	if (read_budget_take(hp->budget, jvm->owner, len, clock_ns(CLOCK_MONOTONIC)))
		return true;
	for (size_t i = 0; i < hp->warned.len; i++)
		if (hp->warned.data[i] == jvm->owner)
			return false;
	if (hp->warned.len < READ_BUDGET_MAX_USERS && !vec_push(&hp->warned, jvm->owner))
		log_info("JVM process %u: its user's JVMs ask for more reads than JVMs' (%llu MB "
			 "a second); past that their frames show as [JIT] java",
			 jvm->pid, (unsigned long long)(READ_BYTES_PER_S >> 20));
	return false;
}

/* hotspot_read_fn for one JVM: through the reader, with its deadline, within its budget. */
static int jvm_read(void *vctx, uint64_t addr, void *buf, size_t len)
{
	struct read_ctx *c = vctx;
	ssize_t n;

	if (!take_read_budget(c->hp, c->jvm, len))
		return -EBUSY;

	if (!c->hp->reader) {
		c->hp->reader = py_reader_new(c->hp->read, c->hp->read_ctx, READ_DEADLINE_MS);
		if (!c->hp->reader)
			return -ENOMEM;
	}
	/* One stuck read per user, its subordinate uids included (python_reader.h). */
	n = py_reader_read(c->hp->reader, c->jvm->owner, c->jvm->pid, addr, buf, len);
	if (n < 0)
		return n == -1 ? -EFAULT : (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

/*
 * libjvm.so's exports, biased to where pid maps it. The file is its
 * owner's, opened and parsed on the thread that drains the rings: one on
 * FUSE is refused before anything of it is opened or read (its server
 * need never answer), as is one larger than a libjvm.so (about 25 MB) by
 * far. The file is reached through an O_PATH handle on the mapping's own
 * link, then reopened from that handle: it is the file mapped.
 */
static int read_exports(struct hotspot_procs *hp, const struct jvm *jvm,
			uint64_t exports[HS_EXPORT_COUNT])
{
	char link[PATH_MAX];
	struct statfs fs;
	struct stat st;
	int path_fd, fd, err = -ENOENT;
	Elf *elf;

	snprintf(link, sizeof(link), "%s/%u/map_files/%" PRIx64 "-%" PRIx64, hp->proc_root,
		 jvm->pid, jvm->jvm_start, jvm->jvm_end);
	path_fd = open(link, O_PATH | O_CLOEXEC);
	if (path_fd < 0)
		return -errno;
	if (fstatfs(path_fd, &fs) || fstat(path_fd, &st)) {
		err = -errno;
		close(path_fd);
		return err;
	}
	if (fs.f_type == FUSE_SUPER_MAGIC || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > LIBJVM_MAX_BYTES) {
		close(path_fd);
		return fs.f_type == FUSE_SUPER_MAGIC ? -EPERM
		       : !S_ISREG(st.st_mode)	     ? -EINVAL
						     : -EFBIG;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", path_fd);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	close(path_fd);
	if (fd < 0)
		return -errno;
	elf = elf_open_fd_stat(fd, &st);
	if (elf)
		err = hotspot_exports_mapped(elf, jvm->jvm_start, jvm->jvm_pgoff, exports);
	else
		err = errno ? -errno : -EINVAL;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* The code cache's bounds and heaps; -EAGAIN while the JVM has not set them up. */
static int read_heaps(struct jvm *jvm, struct read_ctx *rc)
{
	const struct hotspot_layout *l = &jvm->j.layout;
	uint64_t ga, data;
	int32_t n;
	int err;

	if ((err = jvm_read(rc, l->code_low_addr, &jvm->code_lo, 8)) ||
	    (err = jvm_read(rc, l->code_high_addr, &jvm->code_hi, 8)) ||
	    (err = jvm_read(rc, l->code_heaps_addr, &ga, 8)))
		return err;
	if (!ga || !jvm->code_lo || jvm->code_hi <= jvm->code_lo)
		return -EAGAIN;
	if ((err = jvm_read(rc, ga + l->array_len, &n, 4)) ||
	    (err = jvm_read(rc, ga + l->array_data, &data, 8)))
		return err;
	if (n < 1 || n > MAX_HEAPS)
		return n ? -EINVAL : -EAGAIN;
	for (int i = 0; i < n; i++) {
		struct heap *h = &jvm->heaps[i];
		uint64_t heap;

		if ((err = jvm_read(rc, data + 8ull * i, &heap, 8)) ||
		    (err = jvm_read(rc, heap + l->heap_memory + l->vspace_low, &h->lo, 8)) ||
		    (err = jvm_read(rc, heap + l->heap_memory + l->vspace_high, &h->hi, 8)) ||
		    (err = jvm_read(rc, heap + l->heap_segmap + l->vspace_low, &h->segmap, 8)) ||
		    (err = jvm_read(rc, heap + l->heap_log2_segment, &h->log2, 4)))
			return err;
		if (h->lo >= h->hi || h->lo < jvm->code_lo || h->hi > jvm->code_hi || h->log2 < 4 ||
		    h->log2 > 16 || !h->segmap)
			return -EINVAL;
	}
	jvm->nheaps = n;
	return 0;
}

/* Read the JVM's tables and heaps, once it can be (retried while it starts). */
static void load(struct hotspot_procs *hp, struct jvm *jvm)
{
	uint64_t exports[HS_EXPORT_COUNT], now = clock_ns(CLOCK_MONOTONIC);
	struct read_ctx rc = { hp, jvm };
	struct hotspot_vmstructs *vm = NULL;
	struct hotspot_layout l;
	char missing[160] = "";
	int err;

	/* Each refused load waits twice as long as the one before: a stuck JVM costs little. */
	if (jvm->tried_ns &&
	    now - jvm->tried_ns < RETRY_NS << (jvm->refusals < LOAD_BACKOFF_MAX ? jvm->refusals
										: LOAD_BACKOFF_MAX))
		return;
	jvm->tried_ns = now;
	if (!jvm->j.read) {
		err = 0;
		/* The file is parsed once: a load retried reads only the JVM's memory. */
		if (!jvm->have_exports) {
			err = read_exports(hp, jvm, jvm->exports);
			jvm->have_exports = !err;
		}
		memcpy(exports, jvm->exports, sizeof(exports));
		if (!err)
			err = hotspot_vmstructs_read(exports, jvm_read, &rc, &vm);
		if (!err)
			err = hotspot_layout_derive(vm, jvm_read, &rc, &l, missing,
						    sizeof(missing));
		hotspot_vmstructs_free(vm);
		if (err == -ETIMEDOUT || err == -EBUSY) {
			jvm->refusals++;
			return; /* a stalled read: maybe next time */
		}
		/*
		 * Met while libjvm.so is still being loaded or the VM created
		 * (its strides are set by its initialisers and its version by
		 * the VM's start, zero until then: -EAGAIN; its table pointers
		 * not relocated yet, ld.so still at work: -EFAULT), the JVM is
		 * asked again, for LOAD_TRIES tries, before it is taken to be
		 * no JVM of ours.
		 */
		if ((err == -EAGAIN || (err == -EFAULT && jvm->have_exports)) &&
		    ++jvm->load_tries < LOAD_TRIES)
			return;
		if (err) {
			jvm->state = JVM_FAILED;
			log_info("the JVM of process %u is not read (%s%s%s); its compiled code "
				 "shows as "
				 "[JIT] java",
				 jvm->pid, strerror(-err), missing[0] ? ": " : "", missing);
			return;
		}
		/* The reads' context is the JVM itself: jvm_read is given it as it is here. */
		hotspot_jvm_init(&jvm->j, &l, jvm_read, NULL);
		/* Without it (no memory), every pc of an nmethod reads its debug information. */
		jvm->j.debug_cache = hotspot_debug_cache_new();
	}
	err = read_heaps(jvm, &rc);
	if (err == -ETIMEDOUT || err == -EBUSY)
		jvm->refusals++;
	if (err == -EAGAIN || err == -ETIMEDOUT || err == -EBUSY)
		return;
	if (err) {
		jvm->state = JVM_FAILED;
		log_info("the code cache of JVM process %u is not read (%s); its compiled code "
			 "shows "
			 "as [JIT] java",
			 jvm->pid, strerror(-err));
		return;
	}
	jvm->state = JVM_READY;
	log_debug("JVM process %u: JDK %u, code cache %#" PRIx64 "-%#" PRIx64 " in %d heaps",
		  jvm->pid, jvm->j.layout.major, jvm->code_lo, jvm->code_hi, jvm->nheaps);
}

/* The code blob holding pc (0 when none: free space, or no heap of the JVM's holds it). */
static uint64_t blob_at(struct jvm *jvm, struct read_ctx *rc, uint64_t pc)
{
	const struct hotspot_layout *l = &jvm->j.layout;
	uint8_t win[SEGMAP_WINDOW];
	uint64_t win_lo = 0, win_len = 0;

	for (int i = 0; i < jvm->nheaps; i++) {
		const struct heap *h = &jvm->heaps[i];
		uint64_t seg;

		if (pc < h->lo || pc >= h->hi)
			continue;
		seg = (pc - h->lo) >> h->log2;
		/*
		 * Each byte says how many segments back its block starts (0:
		 * here; 0xff: free), at most 0xfe: read SEGMAP_WINDOW bytes
		 * at a time, each holding one step at least, not a read a step.
		 */
		for (int step = 0, windows = 0; step < SEGMAP_STEPS; step++) {
			uint8_t b;

			if (seg < win_lo || seg >= win_lo + win_len) {
				win_lo = seg >= SEGMAP_WINDOW - 1 ? seg - (SEGMAP_WINDOW - 1) : 0;
				win_len = seg - win_lo + 1;
				if (++windows > SEGMAP_WINDOWS ||
				    jvm_read(rc, h->segmap + win_lo, win, win_len))
					return 0;
			}
			b = win[seg - win_lo];
			if (b == 0xff)
				return 0;
			if (b == 0)
				return h->lo + (seg << h->log2) + l->heap_block_size;
			if (b > seg)
				return 0;
			seg -= b;
		}
		return 0;
	}
	return 0;
}

/* User addresses are below 2^63: the caller's key may set the top bit (hotspot_procs_cache). */
#define PC_OF_KEY(key) ((key) & ~(1ull << 63))
#define LEAF_KEY(pc)   ((pc) | (1ull << 63))

/* The answer about to be given for pc, for hotspot_procs_cache to keep with its check. */
static void remember(struct hotspot_procs *hp, struct jvm *jvm, uint64_t pc, uint64_t blob,
		     uint32_t check_off, uint32_t check, bool complete)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	(void)hp;
	jvm->last.pc = pc;
	jvm->last.a = (struct hotspot_answer){ .blob = blob,
					       .checked_ns = now,
					       .expires_ns = complete ? 0 : now + PARTIAL_KEEP_NS,
					       .check_off = check_off,
					       .check = check };
	jvm->last.set = true;
}

/*
 * The blob holding pc and its header: the one kept for pc's page when it
 * holds pc, else read. 0, no blob (bi->blob 0), or a read's error.
 */
static int blob_info(struct jvm *jvm, struct read_ctx *rc, uint64_t pc, struct blob_info *bi)
{
	const struct hotspot_layout *l = &jvm->j.layout;
	struct blob_info *hint = &jvm->blobs[(pc >> 12) % BLOB_HINTS];
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	int err = 0;

	if (hint->until_ns && now < hint->until_ns && pc >= hint->begin && pc <= hint->end) {
		*bi = *hint;
		return 0;
	}
	memset(bi, 0, sizeof(*bi));
	bi->blob = blob_at(jvm, rc, pc);
	if (!bi->blob)
		return 0;
	if (l->blob_code_offsets) {
		int32_t b32 = 0, e32 = 0;

		err = jvm_read(rc, bi->blob + l->blob_code_begin, &b32, 4);
		if (!err)
			err = jvm_read(rc, bi->blob + l->blob_code_end, &e32, 4);
		bi->begin = bi->blob + (uint32_t)b32;
		bi->end = bi->blob + (uint32_t)e32;
	} else {
		err = jvm_read(rc, bi->blob + l->blob_code_begin, &bi->begin, 8);
		if (!err)
			err = jvm_read(rc, bi->blob + l->blob_code_end, &bi->end, 8);
	}
	if (!err)
		err = jvm_read(rc, bi->blob + l->blob_name, &bi->name_ptr, 8);
	/* A blob's name is in libjvm's data; near a mapping's end, a shorter read. */
	if (!err && bi->name_ptr && jvm_read(rc, bi->name_ptr, bi->name, sizeof(bi->name) - 1))
		err = jvm_read(rc, bi->name_ptr, bi->name, 16);
	if (!err && l->blob_kind >= 0)
		err = jvm_read(rc, bi->blob + (uint32_t)l->blob_kind, &bi->kind, 1);
	if (err)
		return err;
	bi->name[sizeof(bi->name) - 1] = '\0';
	bi->until_ns = now + BLOB_KEEP_NS;
	*hint = *bi;
	return 0;
}

static int frames_read(struct hotspot_procs *hp, struct jvm *jvm, uint64_t pc, bool is_return,
		       struct hotspot_frame *out, int max)
{
	struct read_ctx *rc = &jvm->rc;
	const struct hotspot_layout *l;
	uint64_t blob, begin, end, name_ptr;
	struct blob_info bi;
	const char *name;
	uint8_t kind;
	int err;

	/* Each new address asked costs, read or not: its reads are handoffs to a reader. */
	if (!take_read_budget(hp, jvm, FRAME_COST))
		return -EBUSY;
	*rc = (struct read_ctx){ hp, jvm };
	jvm->j.ctx = rc;
	l = &jvm->j.layout;
	err = blob_info(jvm, rc, pc, &bi);
	if (err || !bi.blob)
		return err;
	blob = bi.blob;
	begin = bi.begin;
	end = bi.end;
	name_ptr = bi.name_ptr;
	name = bi.name;
	kind = bi.kind;
	/* A return address may be its blob's end: the call was the code's last instruction. */
	if (pc < begin || pc > end)
		return 0;
	if (l->blob_kind >= 0 ? kind == l->blob_kind_nmethod : !strncmp(name, "nmethod", 7)) {
		struct hotspot_named named;
		int n = hotspot_name_nmethod(&jvm->j, blob, (uint32_t)(pc - begin), is_return, -1,
					     out, max, &named);

		if (n > 0)
			remember(hp, jvm, pc, blob, l->nmethod_compile_id,
				 (uint32_t)named.compile_id, named.complete);
		return n;
	}
	/* The interpreter and stubs: their blob's name ("Interpreter", "StubRoutines (1)"). */
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name[0] ? name : "[JVM stub]");
	remember(hp, jvm, pc, blob, l->blob_name, (uint32_t)name_ptr, true);
	return 1;
}

int hotspot_procs_frames(struct hotspot_procs *hp, uint32_t pid, uint32_t uid, uint64_t pc,
			 bool is_return, struct hotspot_frame *out, int max)
{
	struct jvm *jvm = jvm_of(hp, pid);
	struct hmap_key key = { is_return ? pc : LEAF_KEY(pc), 0 };
	uint32_t now_ms, until;
	int n;

	if (!jvm || jvm->state == JVM_FAILED || max < 1)
		return 0;
	jvm->last.set = false;
	if (!hp->owners_read) {
		hp->owners_read = true;
		uid_owners_read(&hp->owners, NULL);
	}
	jvm->uid = uid;
	if (!jvm->owner_set) {
		jvm->owner_set = true;
		jvm->owner = uid_owner_of(&hp->owners, uid);
		jvm->answers.owner = jvm->owner;
	}
	if (jvm->state == JVM_NOTED)
		load(hp, jvm);
	if (jvm->state != JVM_READY || pc < jvm->code_lo || pc >= jvm->code_hi)
		return 0;
	now_ms = (uint32_t)(clock_ns(CLOCK_MONOTONIC) / 1000000ull);
	if (hmap_get(&jvm->misses, key, &until)) {
		if ((int32_t)(until - now_ms) > 0)
			return 0;
		hmap_del(&jvm->misses, key);
	}
	n = frames_read(hp, jvm, pc, is_return, out, max);
	/* Nothing there, or nothing nameable: not asked again for a while (a refused read is). */
	if (n == 0 || (n < 0 && n != -EBUSY && n != -ETIMEDOUT && n != -ENOMEM)) {
		if (jvm->misses.len >= MAX_MISSES)
			hmap_free(&jvm->misses);
		(void)hmap_put(&jvm->misses, key, now_ms + MISS_KEEP_MS);
	}
	return n;
}

bool hotspot_procs_cached(struct hotspot_procs *hp, uint32_t pid, uint64_t pc, uint32_t *value)
{
	struct jvm *jvm = jvm_of(hp, pid);
	struct read_ctx rc = { hp, jvm };
	struct hotspot_answer *a;
	uint32_t check;
	uint64_t now;
	int err;

	if (!jvm || !(a = hotspot_answers_get(&jvm->answers, pc)))
		return false;
	now = clock_ns(CLOCK_MONOTONIC);
	if (a->expires_ns && now >= a->expires_ns) {
		hotspot_answers_drop(&hp->shares, &jvm->answers, pc);
		return false;
	}
	/*
	 * Checked again once a while (one 4-byte read): the code there may
	 * have been freed and another method compiled into its space. A read
	 * refused (the budget, a stalled page) keeps the answer unchecked.
	 */
	if (now - a->checked_ns >= hp->verify_ns) {
		err = jvm_read(&rc, a->blob + a->check_off, &check, sizeof(check));
		if (err == -EBUSY || err == -ETIMEDOUT)
			return false;
		if (err || check != a->check) {
			hotspot_answers_drop(&hp->shares, &jvm->answers, pc);
			return false;
		}
		a->checked_ns = now;
	}
	a->asked = true;
	*value = a->value;
	return true;
}

void hotspot_procs_cache(struct hotspot_procs *hp, uint32_t pid, uint64_t pc, uint32_t value)
{
	struct jvm *jvm = jvm_of(hp, pid);
	struct hotspot_answer a;

	/* Only an answer just given, with what checks it later. */
	if (!jvm || !jvm->last.set || jvm->last.pc != PC_OF_KEY(pc))
		return;
	a = jvm->last.a;
	a.key = pc;
	a.value = value;
	jvm->last.set = false;
	hotspot_answers_put(&hp->shares, &jvm->answers, &a);
}

int hotspot_procs_set_exports(struct hotspot_procs *hp, uint32_t pid,
			      const uint64_t exports[HS_EXPORT_COUNT])
{
	struct jvm *jvm = jvm_of(hp, pid);

	if (!jvm)
		return -ENOENT;
	memcpy(jvm->exports, exports, sizeof(jvm->exports));
	jvm->have_exports = true;
	return 0;
}

/*
 * Runtime frames (issue 39): what BPF reads in each of a JVM's interpreted
 * frames (bpf/runtime.bpf.h), and the frame named from it.
 */

/* Keys of jvm->cache besides the callers' (pc, 0): pc's "is the interpreter" answer ... */
#define RT_KEY_INTERP 2
/* ... and an interpreted frame's (Method*, bcp | RT_KEY_FRAME): user addresses are below 2^63. */
#define RT_KEY_FRAME  (1ull << 63)

/*
 * The interpreter's code, [_stub_buffer, + _buffer_limit) of
 * AbstractInterpreter::_code, into jvm->interp_lo/hi once: 0, or -EAGAIN
 * while the JVM has not generated it or a read was refused (asked again at
 * the next capture, LOAD_TRIES times: then the JVM is published without).
 */
static int read_interp(struct hotspot_procs *hp, struct jvm *jvm)
{
	const struct hotspot_layout *l = &jvm->j.layout;
	struct read_ctx rc = { hp, jvm };
	uint64_t q = 0, buf = 0;
	int32_t lim = 0;
	int err;

	if (jvm->interp_hi || !l->interp_code_addr || jvm->interp_tries >= LOAD_TRIES)
		return 0;
	err = jvm_read(&rc, l->interp_code_addr, &q, 8);
	if (!err && q)
		err = jvm_read(&rc, q + l->stubq_buffer, &buf, 8);
	if (!err && q)
		err = jvm_read(&rc, q + l->stubq_limit, &lim, 4);
	if (!err && buf && lim > 0 && buf >= jvm->code_lo && buf < jvm->code_hi &&
	    (uint64_t)lim <= jvm->code_hi - buf) {
		jvm->interp_lo = buf;
		jvm->interp_hi = buf + (uint64_t)lim;
		return 0;
	}
	/* Not generated yet (0), a refused read, or bounds that do not hold: tried again. */
	return ++jvm->interp_tries < LOAD_TRIES ? -EAGAIN : 0;
}

/*
 * What the user walk needs to step the JVM's compiled frames by their
 * frame size (struct rt_hotspot, bpf/rt_step.bpf.h): its code heaps as
 * read at load, where a blob keeps its frame size, and the interpreter's
 * code. A JVM of more heaps than BPF takes keeps the frame-pointer walk.
 */
static void capture_step(const struct jvm *jvm, struct rt_hotspot *hs)
{
	const struct hotspot_layout *l = &jvm->j.layout;

	memset(hs, 0, sizeof(*hs));
	if (jvm->nheaps < 1 || jvm->nheaps > RT_HS_MAX_HEAPS || l->heap_block_size > 0xff ||
	    l->blob_frame_size > 0xffff - 4)
		return;
	hs->code_lo = jvm->code_lo;
	hs->code_hi = jvm->code_hi;
	hs->interp_lo = jvm->interp_lo;
	hs->interp_hi = jvm->interp_hi;
	for (int i = 0; i < jvm->nheaps; i++) {
		hs->heaps[i].lo = jvm->heaps[i].lo;
		hs->heaps[i].hi = jvm->heaps[i].hi;
		hs->heaps[i].segmap = jvm->heaps[i].segmap;
		hs->heaps[i].log2 = (uint32_t)jvm->heaps[i].log2;
	}
	hs->heap_block = (uint8_t)l->heap_block_size;
	hs->blob_frame_size = (uint16_t)l->blob_frame_size;
	hs->sender_sp_off = l->interp_sender_sp * 8;
	hs->nheaps = (uint8_t)jvm->nheaps;
}

int hotspot_procs_capture(struct hotspot_procs *hp, uint32_t pid, uint32_t uid, struct rt_proc *out)
{
	struct jvm *jvm = jvm_of(hp, pid);
	const struct hotspot_layout *l;

	(void)uid;
	if (jvm && jvm->state == JVM_FAILED)
		return -ENOENT;
	/*
	 * Not noted or read from here: the capture reads a process's mappings
	 * as soon as it maps a file, while ld.so may still be loading
	 * libjvm.so, and a JVM whose tables are read too early is given up.
	 * The model notes it, and its first sample in its code cache reads
	 * its tables (hotspot_procs_frames); asked again until then.
	 */
	if (!jvm || jvm->state != JVM_READY)
		return -EAGAIN;
	l = &jvm->j.layout;
	/*
	 * x86_64's interpreter frame (frame_x86.hpp, JDK 9+): sender sp at
	 * fp-8, last sp at fp-16 (the pair the JVM exports), the Method* at
	 * fp-24, the bytecode pointer at fp-64. Another layout is not ours.
	 */
	if (l->interp_sender_sp != -1 || l->interp_last_sp != -2 || l->major < 9)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->kind = RT_KIND_HOTSPOT;
	out->nwords = 2;
	out->off[0] = (l->interp_last_sp - 1) * 8;
	out->off[1] = (l->interp_last_sp - 6) * 8;
	/* The innermost frame, interrupted: its bytecode pointer is in r13, not saved yet. */
	out->top_reg[1] = RT_REG_R13;
	if (read_interp(hp, jvm))
		return -EAGAIN;
	/*
	 * Records for interpreted frames alone: a compiled frame's words are
	 * not a Method* and a bytecode pointer, and each one spent a record
	 * of the 64 a sample holds (h3 review, M1). A JVM whose interpreter
	 * was not found: its whole code cache, each pc asked by name.
	 */
	out->nranges = 1;
	out->ranges[0].lo = jvm->interp_hi ? jvm->interp_lo : jvm->code_lo;
	out->ranges[0].hi = jvm->interp_hi ? jvm->interp_hi : jvm->code_hi;
	capture_step(jvm, &out->hs);
	return 0;
}

int hotspot_procs_note_maps(struct hotspot_procs *hp, uint32_t pid, const map_entries_t *maps)
{
	(void)hp;
	(void)pid;
	for (size_t i = 0; i < maps->len; i++) {
		const struct map_entry *e = &maps->data[i];
		const char *base = strrchr(e->path, '/');

		if (base && !strcmp(base, "/libjvm.so") && e->executable)
			return 1;
	}
	return 0;
}

static int rt_note_maps(void *ctx, uint32_t pid, const map_entries_t *maps)
{
	return hotspot_procs_note_maps(ctx, pid, maps);
}

static int rt_capture(void *ctx, uint32_t pid, uint32_t uid, struct rt_proc *out)
{
	return hotspot_procs_capture(ctx, pid, uid, out);
}

struct rt_module hotspot_procs_rt_module(struct hotspot_procs *hp)
{
	return (struct rt_module){ hp, rt_note_maps, rt_capture };
}

/* jvm->rt_cache's value at (a, b). */
static bool rt_cached(struct jvm *jvm, uint64_t a, uint64_t b, uint32_t *value)
{
	return hmap_get(&jvm->rt_cache, (struct hmap_key){ a, b }, value);
}

/*
 * Kept up to a JVM's bound, then started afresh (a JVM that shows ever new
 * (Method*, bcp) pairs, as a fake one can, rereads within its user's read
 * budget rather than grows); past the bound of all JVMs, not kept.
 */
static void rt_cache(struct hotspot_procs *hp, struct jvm *jvm, uint64_t a, uint64_t b,
		     uint32_t value)
{
	size_t before;

	if (jvm->rt_cache.len >= HOTSPOT_PROC_MAX_CACHED) {
		hp->rt_cached -= jvm->rt_cache.len;
		hmap_free(&jvm->rt_cache);
	}
	if (hp->rt_cached >= MAX_CACHED_TOTAL)
		return;
	before = jvm->rt_cache.len;
	if (!hmap_put(&jvm->rt_cache, (struct hmap_key){ a, b }, value))
		hp->rt_cached += jvm->rt_cache.len - before;
}

bool hotspot_procs_in_interpreter(struct hotspot_procs *hp, uint32_t pid, uint32_t uid, uint64_t pc)
{
	struct jvm *jvm = jvm_of(hp, pid);
	struct hotspot_frame f;
	uint32_t v;
	int n;

	if (!jvm || jvm->state != JVM_READY || pc < jvm->code_lo || pc >= jvm->code_hi)
		return false;
	/* Its code as the capture published it: a range check. */
	if (jvm->interp_hi)
		return pc >= jvm->interp_lo && pc < jvm->interp_hi;
	/* Not read (or its bounds did not hold): the blob that holds pc, by its name. */
	if (rt_cached(jvm, pc, RT_KEY_INTERP, &v))
		return v;
	/* The template interpreter is one code blob of that name, in every JDK. */
	n = hotspot_procs_frames(hp, pid, uid, pc, true, &f, 1);
	v = n == 1 && !strcmp(f.name, "Interpreter");
	if (n >= 0)
		rt_cache(hp, jvm, pc, RT_KEY_INTERP, v);
	return v;
}

bool hotspot_procs_interp_cached(struct hotspot_procs *hp, uint32_t pid,
				 const uint64_t words[RT_WORDS], uint32_t *value)
{
	struct jvm *jvm = jvm_of(hp, pid);

	return jvm && rt_cached(jvm, words[0], words[1] | RT_KEY_FRAME, value);
}

void hotspot_procs_interp_cache(struct hotspot_procs *hp, uint32_t pid,
				const uint64_t words[RT_WORDS], uint32_t value)
{
	struct jvm *jvm = jvm_of(hp, pid);

	if (jvm)
		rt_cache(hp, jvm, words[0], words[1] | RT_KEY_FRAME, value);
}

/*
 * Method's slot, read now when it holds another method or one since
 * redefined (its ConstMethod changed: one 8-byte read); NULL when it could
 * not be read (*err says why) or no slot can be kept (then *tmp is filled,
 * its table the caller's to free).
 */
static struct interp_method *interp_method(struct hotspot_procs *hp, struct jvm *jvm,
					   struct read_ctx *rc, uint64_t method,
					   struct interp_method *tmp, int *err)
{
	const struct hotspot_layout *l = &jvm->j.layout;
	struct interp_method *m;
	uint64_t cm;

	if (!jvm->methods && hp->method_jvms < INTERP_METHOD_JVMS &&
	    (jvm->methods = calloc(INTERP_METHODS, sizeof(*jvm->methods))))
		hp->method_jvms++;
	m = jvm->methods ? &jvm->methods[(method >> 3) * 0x9e3779b97f4a7c15ull >> 54 &
					 (INTERP_METHODS - 1)]
			 : tmp;
	if (m != tmp && m->method == method) {
		if ((*err = jvm_read(rc, method + l->method_const, &cm, 8)))
			return NULL;
		if (cm == m->lines.const_method)
			return m;
	}
	if (m != tmp) {
		free(m->lines.table);
		memset(m, 0, sizeof(*m));
	}
	if ((*err = hotspot_name_method_lines(&jvm->j, method, &m->frame, &m->lines)))
		return NULL;
	m->method = method;
	return m;
}

int hotspot_procs_interp_frame(struct hotspot_procs *hp, uint32_t pid, uint32_t uid,
			       const uint64_t words[RT_WORDS], struct hotspot_frame *out)
{
	struct jvm *jvm = jvm_of(hp, pid);
	struct read_ctx *rc = jvm ? &jvm->rc : NULL;
	uint64_t method = words[0], bcp = words[1];
	struct interp_method tmp = { 0 }, *m;
	int32_t bci = -1;
	bool partial;
	int err = 0;

	if (!jvm || jvm->state != JVM_READY || !method)
		return 0;
	(void)uid; /* the JVM's owner, set at its first pc asked (hotspot_procs_in_interpreter) */
	*rc = (struct read_ctx){ hp, jvm };
	jvm->j.ctx = rc;
	m = interp_method(hp, jvm, rc, method, &tmp, &err);
	if (!m)
		return err ? err : -ENOENT;
	/*
	 * The bytecode index: bcp's offset in the method's bytecodes, which
	 * follow its ConstMethod. A frame just entered (bcp not set yet) or a
	 * bcp of another method has none: the method is still named.
	 */
	if (bcp >= m->lines.code && bcp - m->lines.code < m->lines.code_size)
		bci = (int32_t)(bcp - m->lines.code);
	*out = m->frame;
	out->line = hotspot_method_line(&jvm->j, &m->lines, bci);
	/*
	 * A bytecode index and a line table not read (the read budget spent
	 * while a JVM starts, a stalled page): named, but not to be kept, nor
	 * its method: kept, a thread asleep at one call site would show its
	 * method without a line for the JVM's life.
	 */
	partial = bci >= 0 && m->lines.has_table && !m->lines.table_len;
	if (partial && m != &tmp)
		m->method = 0;
	free(tmp.lines.table);
	return partial ? 2 : 1;
}
