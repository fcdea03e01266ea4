// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind table cache (unwind/table_cache.c, issue 38): a table comes
 * back as it was built; every damaged or foreign entry is refused and
 * removed; directories and entries another user could touch turn the cache
 * off or are never followed; the bounds trim the least recently used
 * entries, a user's class to a quarter; a user's entry never serves a
 * system file, nor the other way; an entry serves only the file it was
 * built from, unchanged; the bound holds on disk; a transient error removes
 * nothing; a failed write is said once. And a guard: the builders' output
 * on fixed fixtures is hashed, so that a change to it without a bump of
 * UNWIND_TABLE_GENERATOR (which would load stale tables) fails here. No
 * BPF; only the cases needing two owners (chown) skip without root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "eh_image.h"
#include "test.h"
#include "unwind/table_cache.h"
#include "util/elf_open.h"

/* The entry layout (table_cache.c): header fields' offsets, then rules of 12, rows of 8 bytes. */
enum {
	H_GENERATOR = 12,
	H_FILE_SIZE = 16,
	H_PC_BASE = 48,
	H_NROWS = 56,
	H_NRULES = 60,
	H_BUILD_ID = 72,
	H_DEV = 136,
	H_INO = 144,
	H_CTIME = 152,
	H_SIZE = 168,
	RULE_SIZE = 12,
	ROW_SIZE = 8,
};

static char dir[64], state[128];

static void fresh_state(void)
{
	char cmd[256];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(!system(cmd));
	}
	strcpy(dir, "/tmp/test_table_cache.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(state, sizeof(state), "%s/state", dir);
}

static bool root_or_skip(void)
{
	if (geteuid())
		printf("SKIP: not root (directories and files of other owners)\n");
	return geteuid() == 0;
}

/* The table of `path` and its key: 0 or -errno. */
static int build(const char *path, struct table_cache_key *k, struct unwind_built *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf = elf_open_fd(fd);
	err = table_cache_key_of(fd, elf, k);
	if (!err)
		err = unwind_file_build(elf, &cfi_default_budget, b);
	else if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

static void entry_path(const struct table_cache_key *k, char *out, size_t len)
{
	int o = snprintf(out, len, "%s/unwind-cache/v1/%s/", state, k->cls);

	for (size_t i = 0; i < k->build_id_len; i++)
		o += snprintf(out + o, len - (size_t)o, "%02x", k->build_id[i]);
	snprintf(out + o, len - (size_t)o, "-%llx-%llx-%llx.ut", (unsigned long long)k->file_size,
		 (unsigned long long)k->dev, (unsigned long long)k->ino);
}

static bool same_table(const struct unwind_built *a, const struct unwind_built *b)
{
	if (a->status != b->status || a->bias != b->bias || a->t.len != b->t.len)
		return false;
	for (size_t i = 0; i < a->t.len; i++) {
		const struct cfi_row *x = &a->t.rows[i], *y = &b->t.rows[i];

		if (x->pc != y->pc || x->cfa_offset != y->cfa_offset ||
		    x->fp_offset != y->fp_offset || x->cfa != y->cfa || x->fp != y->fp ||
		    x->plt_threshold != y->plt_threshold)
			return false;
	}
	return true;
}

/* A cache in a fresh state directory with cfi_fix's table stored: its key and table. */
static bool cache_with_fixture(struct table_cache *c, uint64_t max, struct table_cache_key *k,
			       struct unwind_built *b)
{
	fresh_state();
	CHECK_EQ_INT(table_cache_open(c, state, max), 0);
	CHECK_EQ_INT(build(CFI_FIX, k, b), 0);
	CHECK_EQ_INT(b->status, UNWIND_FILE_LOADED);
	/* Root's, writable by no one else: the system's class (as a user, that user's). */
	CHECK(geteuid() || !strcmp(k->cls, "system"));
	CHECK_EQ_INT(table_cache_store(c, k, b), 0);
	return c->dir >= 0 && b->status == UNWIND_FILE_LOADED;
}

static void round_trip(void)
{
	struct table_cache_key k, kn;
	struct unwind_built b, got, bn, gotn;
	struct table_cache c;
	struct stat st;
	char path[512];

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), 0);
	CHECK(same_table(&b, &got));
	CHECK(got.t.stats.rows_read >= got.t.len);
	/* Entries are root's alone, in directories of mode 0700. */
	entry_path(&k, path, sizeof(path));
	CHECK(!stat(path, &st) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0600);
	CHECK(!stat(state, &st) && (st.st_mode & 0777) == 0700);
	/* A file without CFI is kept too: it is not read again either. */
	CHECK_EQ_INT(build(CFI_FIX_NO_CFI, &kn, &bn), 0);
	CHECK_EQ_INT(bn.status, UNWIND_FILE_NO_CFI);
	CHECK_EQ_INT(table_cache_store(&c, &kn, &bn), 0);
	CHECK_EQ_INT(table_cache_load(&c, &kn, &cfi_default_budget, &gotn), 0);
	CHECK_EQ_INT(gotn.status, UNWIND_FILE_NO_CFI);
	/* A smaller budget than the build's: built again (and refused), the entry kept. */
	{
		struct cfi_budget small = cfi_default_budget;

		small.file_rows = got.t.len - 1;
		CHECK_EQ_INT(table_cache_load(&c, &k, &small, &gotn), -ENOENT);
		CHECK(!access(path, F_OK));
	}
	/* Off: nothing kept, nothing found. */
	{
		struct table_cache off;

		CHECK(table_cache_open(&off, state, 0) != 0);
		CHECK_EQ_INT(table_cache_load(&off, &k, &cfi_default_budget, &gotn), -ENOENT);
	}
	unwind_built_free(&got);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* A Go binary has no GNU build-id: it is keyed by Go's own (Debian's go command, when installed).
 */
static void go_binaries_are_kept(void)
{
#ifdef GO_BINARY
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;

	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	CHECK_EQ_INT(build(GO_BINARY, &k, &b), 0);
	CHECK(k.build_id_len > 0);
	CHECK_EQ_INT(b.status, UNWIND_FILE_LOADED);
	CHECK_EQ_INT(table_cache_store(&c, &k, &b), 0);
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), 0);
	CHECK(same_table(&b, &got));
	unwind_built_free(&got);
	unwind_built_free(&b);
	table_cache_close(&c);
#else
	printf("SKIP: no go command\n");
#endif
}

/*
 * The rows and bias the builders make of fixed files (checked in, not
 * built here: another compiler would change them): a change to the
 * builders that changes these must bump UNWIND_TABLE_GENERATOR, and then
 * the hashes here. Fixtures: a small gcc binary (fuzz corpus tiny_dwarf)
 * and cfi_fix's .eh_frame in an image (fuzz corpus fuzz_unwind_tables).
 */
#define FIXTURE_ROWS_HASH 0xe5168b0a1f53c18dull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_built(uint64_t h, const struct unwind_built *b)
{
	h = fnv(h, &b->status, sizeof(b->status));
	h = fnv(h, &b->bias, sizeof(b->bias));
	for (size_t i = 0; i < b->t.len; i++) {
		const struct cfi_row *r = &b->t.rows[i];

		h = fnv(h, &r->pc, sizeof(r->pc));
		h = fnv(h, &r->cfa_offset, sizeof(r->cfa_offset));
		h = fnv(h, &r->fp_offset, sizeof(r->fp_offset));
		h = fnv(h, &r->cfa, 1);
		h = fnv(h, &r->fp, 1);
		h = fnv(h, &r->plt_threshold, 1);
	}
	return h;
}

static uint64_t hash_file(uint64_t h, const char *path, size_t *rows)
{
	struct unwind_built b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	if (fd < 0)
		return h;
	CHECK_EQ_INT(unwind_file_build(elf_open_fd(fd), &cfi_default_budget, &b), 0);
	close(fd);
	*rows += b.t.len;
	h = hash_built(h, &b);
	unwind_built_free(&b);
	return h;
}

/* The fuzz target's image: u32 hdr address, u32 eh address, u16 index length, the bytes. */
static uint64_t hash_image(uint64_t h, const char *path, size_t *rows)
{
	uint8_t data[4096], *img;
	uint32_t hdr_addr, eh_addr;
	uint16_t hdr_len;
	struct unwind_built b;
	size_t size = 0, total;
	FILE *f = fopen(path, "rb");

	CHECK(f != NULL);
	if (!f)
		return h;
	size = fread(data, 1, sizeof(data), f);
	fclose(f);
	CHECK(size > 10);
	memcpy(&hdr_addr, data, 4);
	memcpy(&eh_addr, data + 4, 4);
	memcpy(&hdr_len, data + 8, 2);
	size -= 10;
	total = eh_image_size(size);
	img = calloc(1, total);
	if (!img)
		return h;
	memcpy(img + EH_IMAGE_OFF, data + 10, size);
	total = eh_image_finish(img, hdr_addr, hdr_len, eh_addr, size - hdr_len);
	CHECK_EQ_INT(unwind_file_build(elf_memory((char *)img, total), &cfi_default_budget, &b), 0);
	*rows += b.t.len;
	h = hash_built(h, &b);
	unwind_built_free(&b);
	free(img);
	return h;
}

static void generator_guard(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t rows = 0;

	h = hash_file(h, FIXTURE_DIR "/fuzz_elf/tiny_dwarf", &rows);
	h = hash_image(h, FIXTURE_DIR "/fuzz_unwind_tables/cfi_fix", &rows);
	CHECK(rows >= 10);
	if (h != FIXTURE_ROWS_HASH || UNWIND_TABLE_GENERATOR != 2)
		fprintf(stderr,
			"the table builders' output on the fixtures is %#llx at generator %d: if "
			"the builders changed it, bump UNWIND_TABLE_GENERATOR "
			"(unwind/file_table.h) and set FIXTURE_ROWS_HASH to it\n",
			(unsigned long long)h, UNWIND_TABLE_GENERATOR);
	CHECK(UNWIND_TABLE_GENERATOR == 2 && h == FIXTURE_ROWS_HASH);
}

/* The entry's bytes, changed by `fn`, written back in place (the crc made right when fix_crc). */
typedef void (*damage_fn)(uint8_t *buf, size_t *len);

static void damage(const char *path, damage_fn fn, bool fix_crc)
{
	static uint8_t buf[1 << 20];
	size_t len;
	FILE *f = fopen(path, "r+b");
	uint32_t crc;

	CHECK(f != NULL);
	if (!f)
		return;
	len = fread(buf, 1, sizeof(buf) - 64, f);
	fn(buf, &len);
	if (fix_crc) {
		crc = (uint32_t)crc32(0, buf, (uInt)(len - 4));
		memcpy(buf + len - 4, &crc, 4);
	}
	CHECK(!fseek(f, 0, SEEK_SET) && fwrite(buf, 1, len, f) == len);
	CHECK(!ftruncate(fileno(f), (off_t)len));
	fclose(f);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint8_t *row_at(uint8_t *buf, uint32_t i)
{
	return buf + H_SIZE + (size_t)get32(buf + H_NRULES) * RULE_SIZE + (size_t)i * ROW_SIZE;
}

static void truncated(uint8_t *buf, size_t *len)
{
	(void)buf;
	*len -= 10;
}
static void bad_magic(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[0] ^= 1;
}
static void old_generator(uint8_t *buf, size_t *len)
{
	(void)len;
	put32(buf + H_GENERATOR, get32(buf + H_GENERATOR) + 1);
}
static void flipped_byte(uint8_t *buf, size_t *len)
{
	buf[*len / 2] ^= 0x40;
}
static void longer(uint8_t *buf, size_t *len)
{
	memset(buf + *len, 0, 8);
	*len += 8;
}
static void more_rows_said(uint8_t *buf, size_t *len)
{
	(void)len;
	put32(buf + H_NROWS, get32(buf + H_NROWS) + 1);
}
static void unsorted_rows(uint8_t *buf, size_t *len)
{
	uint8_t tmp[4];

	(void)len;
	memcpy(tmp, row_at(buf, 1), 4);
	memcpy(row_at(buf, 1), row_at(buf, 2), 4);
	memcpy(row_at(buf, 2), tmp, 4);
}
static void rule_out_of_range(uint8_t *buf, size_t *len)
{
	uint16_t rule = (uint16_t)get32(buf + H_NRULES);

	(void)len;
	memcpy(row_at(buf, 3) + 4, &rule, 2);
}
static void bad_rule_kind(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[H_SIZE + 6] = 200; /* the first rule's CFA kind */
}
static void rows_wrap(uint8_t *buf, size_t *len)
{
	uint64_t base = UINT64_MAX - 8;

	(void)len;
	memcpy(buf + H_PC_BASE, &base, 8);
}
static void other_build_id(uint8_t *buf, size_t *len)
{
	(void)len;
	buf[H_BUILD_ID] ^= 1;
}
static void other_size(uint8_t *buf, size_t *len)
{
	(void)len;
	put32(buf + H_FILE_SIZE, get32(buf + H_FILE_SIZE) + 1);
}
static void other_inode(uint8_t *buf, size_t *len)
{
	(void)len;
	put32(buf + H_INO, get32(buf + H_INO) + 1);
}
static void other_device(uint8_t *buf, size_t *len)
{
	(void)len;
	put32(buf + H_DEV, get32(buf + H_DEV) + 1);
}

static void each_damage_is_refused(void)
{
	static const struct {
		const char *what;
		damage_fn fn;
		bool fix_crc;
	} cases[] = {
		{ "truncated", truncated, false },
		{ "bad magic", bad_magic, true },
		{ "another generator", old_generator, true },
		{ "crc", flipped_byte, false },
		{ "size", longer, true },
		{ "count", more_rows_said, true },
		{ "unsorted rows", unsorted_rows, true },
		{ "rule index out of range", rule_out_of_range, true },
		{ "rule kind out of range", bad_rule_kind, true },
		{ "rows past the end of the address space", rows_wrap, true },
		{ "build-id not the file's", other_build_id, true },
		{ "size not the file's", other_size, true },
		{ "inode not the file's", other_inode, true },
		{ "device not the file's", other_device, true },
	};
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;
	char path[512];

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	entry_path(&k, path, sizeof(path));
	CHECK(b.t.len > 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t rejected = c.rejected;

		CHECK_EQ_INT(table_cache_store(&c, &k, &b), 0);
		damage(path, cases[i].fn, cases[i].fix_crc);
		if (table_cache_load(&c, &k, &cfi_default_budget, &got) != -EINVAL) {
			fprintf(stderr, "damage not refused: %s\n", cases[i].what);
			test_failed_checks++;
			unwind_built_free(&got);
		}
		CHECK_EQ_INT(c.rejected, rejected + 1);
		/* Removed: the next run builds the table again and keeps that. */
		CHECK(access(path, F_OK) && errno == ENOENT);
	}
	unwind_built_free(&b);
	table_cache_close(&c);
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "blocked on a FIFO: a link was followed or a FIFO opened\n");
	_exit(1);
}

/*
 * State directories another user could write: the cache is off, or that
 * class unused; links: never followed; an entry with two links, or a FIFO:
 * never read. None of it needs root (a user's own cache is held to it too).
 */
static void unsafe_dirs_turn_it_off(void)
{
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;
	char path[512], other[256];

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	table_cache_close(&c);
	/* Ours, but others may write it. */
	CHECK(!chmod(state, 0770));
	CHECK(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES) == -EPERM && c.dir < 0);
	CHECK(!chmod(state, 0700));
	/* A level below it writable by others: that class is not used, neither read nor written. */
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	snprintf(path, sizeof(path), "%s/unwind-cache/v1/%s", state, k.cls);
	CHECK(!chmod(path, 0777));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -ENOENT);
	CHECK(table_cache_store(&c, &k, &b) < 0);
	CHECK(!chmod(path, 0700));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), 0);
	unwind_built_free(&got);
	table_cache_close(&c);
	/* A link at the state directory, to a directory of ours: not followed. */
	snprintf(other, sizeof(other), "%s/link", dir);
	CHECK(!symlink(state, other));
	CHECK(table_cache_open(&c, other, TABLE_CACHE_DEFAULT_BYTES) < 0 && c.dir < 0);
	/* A link at a class directory. */
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	snprintf(other, sizeof(other), "%s/unwind-cache/v1/%s.real", state, k.cls);
	CHECK(!rename(path, other));
	CHECK(!symlink(other, path));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -ENOENT);
	CHECK(table_cache_store(&c, &k, &b) < 0);
	CHECK(!unlink(path) && !rename(other, path));
	/* A link at an entry, to a FIFO; then a FIFO there: neither opened (a reader would block).
	 */
	entry_path(&k, path, sizeof(path));
	snprintf(other, sizeof(other), "%s/fifo", dir);
	CHECK(!mkfifo(other, 0600));
	CHECK(!unlink(path) && !symlink(other, path));
	signal(SIGALRM, on_alarm);
	alarm(5);
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -EINVAL);
	CHECK(access(path, F_OK) && errno == ENOENT);
	CHECK(!mknod(path, S_IFIFO | 0600, 0));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -EINVAL);
	alarm(0);
	/* Two links: a file of someone else's could be behind the other. */
	CHECK_EQ_INT(table_cache_store(&c, &k, &b), 0);
	snprintf(other, sizeof(other), "%s/hardlink", dir);
	CHECK(!link(path, other));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -EINVAL);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* Another user's state directory, or entry: the cache off, the entry refused (chown: root). */
static void other_owners_turn_it_off(void)
{
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;
	char path[512];

	if (!root_or_skip() || !cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	table_cache_close(&c);
	CHECK(!chown(state, 1000, 1000));
	CHECK(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES) == -EPERM && c.dir < 0);
	CHECK(!chown(state, 0, 0));
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	entry_path(&k, path, sizeof(path));
	CHECK(!chown(path, 1000, 1000));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), -EINVAL);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* A copy of `from` at dir/name; its key (the key's file is the copy). */
static void copy_file(const char *from, const char *name, char *path, size_t len)
{
	char cmd[1024];

	snprintf(path, len, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cp %s %s", from, path);
	CHECK(!system(cmd));
}

static int key_of_path(const char *path, struct table_cache_key *k)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	Elf *elf = fd >= 0 ? elf_open_fd(fd) : NULL;

	err = table_cache_key_of(fd, elf, k);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

/* The identity of `from` (device, inode, times) in `to`: the same file, only the class apart. */
static void same_file(struct table_cache_key *to, const struct table_cache_key *from)
{
	to->dev = from->dev;
	to->ino = from->ino;
	to->ctime_ns = from->ctime_ns;
	to->mtime_ns = from->mtime_ns;
}

/*
 * A copy of cfi_fix owned by uid `first` (mode 0755) stored in its class
 * (`cls_first`), then chowned to `then` (class `cls_then`): the same file,
 * only its class changed, finds nothing; as it was, it finds its entry.
 */
static void stored_then_chowned(const struct unwind_built *b, uid_t first, const char *cls_first,
				uid_t then, const char *cls_then)
{
	struct table_cache_key was, now;
	struct unwind_built got;
	struct table_cache c;
	char tool[256];

	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	copy_file(CFI_FIX, "tool", tool, sizeof(tool));
	CHECK(!chown(tool, first, first) && !chmod(tool, 0755));
	CHECK_EQ_INT(key_of_path(tool, &was), 0);
	CHECK_EQ_STR(was.cls, cls_first);
	CHECK_EQ_INT(table_cache_store(&c, &was, b), 0);
	CHECK(!chown(tool, then, then) && !chmod(tool, 0755));
	CHECK_EQ_INT(key_of_path(tool, &now), 0);
	CHECK_EQ_STR(now.cls, cls_then);
	same_file(&now, &was);
	CHECK_EQ_INT(table_cache_load(&c, &now, &cfi_default_budget, &got), -ENOENT);
	CHECK_EQ_INT(table_cache_load(&c, &was, &cfi_default_budget, &got), 0);
	unwind_built_free(&got);
	table_cache_close(&c);
}

/*
 * The class is part of what an entry is found by: the same file (device,
 * inode, times, build-id, size), stored in one class, is not found in the
 * other, either way. And the class comes from the owner: a file of root's
 * that no one else may write is the system's, chowned to uid 1000 it is
 * u1000's.
 */
static void classes_stay_apart(void)
{
	struct table_cache_key k;
	struct unwind_built b;

	if (!root_or_skip())
		return;
	CHECK_EQ_INT(build(CFI_FIX, &k, &b), 0);
	stored_then_chowned(&b, 0, "system", 1000, "u1000");
	stored_then_chowned(&b, 1000, "u1000", 0, "system");
	unwind_built_free(&b);
}

/*
 * Two files with the same build-id and size (Go's -buildid=redacted; a
 * file crafted with another's build-id) each get their own table, never
 * the other's.
 */
static void same_build_id_other_file(void)
{
	struct table_cache_key ka, kb;
	struct unwind_built b, mine, got;
	struct table_cache c;
	char a[256], bp[256];

	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	copy_file(CFI_FIX, "a", a, sizeof(a));
	copy_file(CFI_FIX, "b", bp, sizeof(bp));
	CHECK_EQ_INT(build(a, &ka, &b), 0);
	CHECK_EQ_INT(key_of_path(bp, &kb), 0);
	CHECK(ka.file_size == kb.file_size && ka.build_id_len == kb.build_id_len &&
	      !memcmp(ka.build_id, kb.build_id, ka.build_id_len));
	CHECK_EQ_STR(ka.cls, kb.cls);
	CHECK_EQ_INT(table_cache_store(&c, &ka, &b), 0);
	/* b's lookup finds nothing: a's rows are a's. */
	CHECK_EQ_INT(table_cache_load(&c, &kb, &cfi_default_budget, &got), -ENOENT);
	/* b's own table (told apart by its bias) is kept beside a's. */
	CHECK_EQ_INT(build(bp, &kb, &mine), 0);
	mine.bias += 4096;
	CHECK_EQ_INT(table_cache_store(&c, &kb, &mine), 0);
	CHECK_EQ_INT(table_cache_load(&c, &kb, &cfi_default_budget, &got), 0);
	CHECK(same_table(&mine, &got));
	unwind_built_free(&got);
	CHECK_EQ_INT(table_cache_load(&c, &ka, &cfi_default_budget, &got), 0);
	CHECK(same_table(&b, &got));
	unwind_built_free(&got);
	CHECK_EQ_INT(c.rejected, 0);
	unwind_built_free(&mine);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/*
 * A file rewritten in place (same inode, size and build-id bytes) is not
 * served the entry built before: a miss, not damage, and the entry of the
 * new contents replaces it. Unchanged, it is found run after run.
 */
static void rewritten_in_place_is_a_miss(void)
{
	struct table_cache_key k, now;
	struct unwind_built b, got;
	struct table_cache c;
	char path[256];
	struct stat st;
	int fd;

	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	copy_file(CFI_FIX, "tool", path, sizeof(path));
	CHECK_EQ_INT(build(path, &k, &b), 0);
	CHECK_EQ_INT(table_cache_store(&c, &k, &b), 0);
	/* Another run, the file unchanged: found. */
	table_cache_close(&c);
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	CHECK_EQ_INT(key_of_path(path, &now), 0);
	CHECK_EQ_INT(table_cache_load(&c, &now, &cfi_default_budget, &got), 0);
	unwind_built_free(&got);
	/* Its first byte written back as it was, until the clock has moved on (ctime's tick). */
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	for (int i = 0; i < 200 && fd >= 0; i++) {
		char byte;

		CHECK(pread(fd, &byte, 1, 0) == 1 && pwrite(fd, &byte, 1, 0) == 1);
		CHECK(!fstat(fd, &st));
		if ((int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec != k.ctime_ns)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000000 }, NULL);
	}
	if (fd >= 0)
		close(fd);
	CHECK_EQ_INT(key_of_path(path, &now), 0);
	CHECK(now.ino == k.ino && now.file_size == k.file_size && now.ctime_ns != k.ctime_ns);
	CHECK_EQ_INT(table_cache_load(&c, &now, &cfi_default_budget, &got), -ENOENT);
	CHECK_EQ_INT(c.rejected, 0);
	/* The table of what it holds now takes the slot. */
	CHECK_EQ_INT(table_cache_store(&c, &now, &b), 0);
	CHECK_EQ_INT(table_cache_load(&c, &now, &cfi_default_budget, &got), 0);
	unwind_built_free(&got);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* An entry of `k` with its build-id's first bytes set to `n`, its mtime `t` s ago. */
static void entry_aged(struct table_cache *c, struct table_cache_key *k,
		       const struct unwind_built *b, const char *cls, uint32_t n, time_t age)
{
	struct timespec ts[2];
	char path[512];

	snprintf(k->cls, sizeof(k->cls), "%s", cls);
	memcpy(k->build_id, &n, sizeof(n));
	CHECK_EQ_INT(table_cache_store(c, k, b), 0);
	entry_path(k, path, sizeof(path));
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	CHECK(!utimensat(AT_FDCWD, path, ts, 0));
}

static bool entry_there(struct table_cache_key *k, const char *cls, uint32_t n)
{
	char path[512];

	snprintf(k->cls, sizeof(k->cls), "%s", cls);
	memcpy(k->build_id, &n, sizeof(n));
	entry_path(k, path, sizeof(path));
	return !access(path, F_OK);
}

static void trims_least_recently_used(void)
{
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;
	struct stat st;
	char path[512];
	uint64_t one;

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	entry_path(&k, path, sizeof(path));
	CHECK(!stat(path, &st));
	one = (uint64_t)st.st_blocks * 512; /* what the bound counts */
	CHECK(!unlink(path));
	table_cache_close(&c);
	/* Room for 10 entries: a user's class holds 2. */
	CHECK_EQ_INT(table_cache_open(&c, state, 10 * one + one / 2), 0);
	for (uint32_t i = 0; i < 6; i++)
		entry_aged(&c, &k, &b, "system", i, 1000 - i); /* 0 oldest */
	/* A load makes an entry the newest. */
	CHECK(entry_there(&k, "system", 0));
	CHECK_EQ_INT(table_cache_load(&c, &k, &cfi_default_budget, &got), 0);
	unwind_built_free(&got);
	/* The user's third entry pushes its oldest out, not the system's. */
	for (uint32_t i = 10; i < 13; i++)
		entry_aged(&c, &k, &b, "u1000", i, 100 - i);
	CHECK(!entry_there(&k, "u1000", 10));
	CHECK(entry_there(&k, "u1000", 11) && entry_there(&k, "u1000", 12));
	for (uint32_t i = 0; i < 6; i++)
		CHECK(entry_there(&k, "system", i));
	/* Past the whole bound: the least recently used go (1, then 2), 0 was just loaded. */
	for (uint32_t i = 6; i < 10; i++)
		entry_aged(&c, &k, &b, "system", i, 20 - i);
	CHECK(!entry_there(&k, "system", 1) && !entry_there(&k, "system", 2));
	CHECK(entry_there(&k, "system", 0) && entry_there(&k, "system", 3));
	CHECK(entry_there(&k, "system", 9));
	CHECK(entry_there(&k, "u1000", 11) && entry_there(&k, "u1000", 12));
	CHECK(c.total_bytes <= 10 * one + one / 2);
	/* What the trim deletes is only entries: a file of another name stays. */
	snprintf(path, sizeof(path), "%s/unwind-cache/v1/system/notes.txt", state);
	CHECK(!close(open(path, O_CREAT | O_WRONLY, 0600)));
	table_cache_trim(&c);
	CHECK(!access(path, F_OK));
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* What the entries of every class take on disk (blocks, not sizes), and how many there are. */
static uint64_t disk_bytes(size_t *n)
{
	char v1[256], path[1024];
	uint64_t bytes = 0;
	struct dirent *cls, *e;
	DIR *top, *d;

	*n = 0;
	snprintf(v1, sizeof(v1), "%s/unwind-cache/v1", state);
	top = opendir(v1);
	CHECK(top != NULL);
	while (top && (cls = readdir(top))) {
		if (cls->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", v1, cls->d_name);
		d = opendir(path);
		while (d && (e = readdir(d))) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s/%s", v1, cls->d_name, e->d_name);
			if (e->d_name[0] == '.' || lstat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			bytes += (uint64_t)st.st_blocks * 512;
			(*n)++;
		}
		if (d)
			closedir(d);
	}
	if (top)
		closedir(top);
	return bytes;
}

/*
 * The bound holds on disk: every class is counted (not the first 64 a
 * listing gives), each entry by the blocks it takes (a file without CFI
 * has an entry of 172 bytes in a block of 4 KiB).
 */
static void bound_holds_on_disk(void)
{
	const uint64_t bound = 160 << 10;
	struct table_cache_key k;
	struct unwind_built b;
	struct table_cache c;
	char cls[16];
	size_t n;

	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	CHECK_EQ_INT(build(CFI_FIX_NO_CFI, &k, &b), 0);
	CHECK_EQ_INT(b.status, UNWIND_FILE_NO_CFI);
	for (uint32_t i = 0; i < 100; i++) {
		snprintf(cls, sizeof(cls), "u%u", 2000 + i);
		entry_aged(&c, &k, &b, cls, i, 1000 - i);
	}
	table_cache_close(&c);
	CHECK(disk_bytes(&n) > bound && n == 100);
	CHECK_EQ_INT(table_cache_open(&c, state, bound), 0);
	printf("100 entries in 100 classes, %llu KiB on disk, trimmed to %llu KiB\n",
	       (unsigned long long)(disk_bytes(&n) >> 10), (unsigned long long)(bound >> 10));
	CHECK(disk_bytes(&n) <= bound && n > 0);
	/* The oldest went: the newest is there. */
	snprintf(cls, sizeof(cls), "u%u", 2099);
	CHECK(entry_there(&k, cls, 99));
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* A temporary file a crash left (the rename fallback's) goes at a minute old; a new one stays. */
static void stale_temp_files_go(void)
{
	struct table_cache_key k;
	struct unwind_built b;
	struct table_cache c;
	struct timespec ts[2];
	char path[512], old[600], fresh[600], *name;

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	entry_path(&k, path, sizeof(path));
	name = strrchr(path, '/');
	*name++ = 0;
	snprintf(old, sizeof(old), "%s/.%s.4242.tmp", path, name);
	snprintf(fresh, sizeof(fresh), "%s/.%s.4243.tmp", path, name);
	CHECK(!close(open(old, O_CREAT | O_WRONLY, 0600)));
	CHECK(!close(open(fresh, O_CREAT | O_WRONLY, 0600)));
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= 120;
	ts[1] = ts[0];
	CHECK(!utimensat(AT_FDCWD, old, ts, 0));
	table_cache_trim(&c);
	CHECK(access(old, F_OK) && errno == ENOENT);
	CHECK(!access(fresh, F_OK));
	unwind_built_free(&b);
	table_cache_close(&c);
}

/*
 * An entry that cannot be opened for want of descriptors (EMFILE: bpfprof
 * holds many) is a miss, and stays: only what is no entry of ours is
 * removed. Each limit from the lowest free descriptor up, so that each
 * open on the way (directories, the entry, its reopening) meets EMFILE.
 */
static void transient_errors_keep_entries(void)
{
	struct table_cache_key k;
	struct unwind_built b, got;
	struct table_cache c;
	struct rlimit was, low;
	char path[512];
	int base, found = 0;

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	entry_path(&k, path, sizeof(path));
	base = dup(0);
	CHECK(base >= 0 && !close(base));
	CHECK(!getrlimit(RLIMIT_NOFILE, &was));
	for (int extra = 0; extra < 8; extra++) {
		int err;

		low = was;
		low.rlim_cur = (rlim_t)(base + extra);
		CHECK(!setrlimit(RLIMIT_NOFILE, &low));
		err = table_cache_load(&c, &k, &cfi_default_budget, &got);
		CHECK(!setrlimit(RLIMIT_NOFILE, &was));
		CHECK(err == 0 || err == -ENOENT);
		if (!err) {
			found++;
			unwind_built_free(&got);
		}
		if (access(path, F_OK)) {
			fprintf(stderr, "the entry was removed at %d free descriptors\n", extra);
			test_failed_checks++;
			CHECK_EQ_INT(table_cache_store(&c, &k, &b), 0);
		}
	}
	CHECK(found > 0 && c.rejected == 0);
	unwind_built_free(&b);
	table_cache_close(&c);
}

/* The lines of `text` that hold `what`. */
static int lines_with(const char *text, const char *what)
{
	int n = 0;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
		const char *end = strchr(line, '\n'), *hit = strstr(line, what);

		n += hit && (!end || hit < end);
	}
	return n;
}

/*
 * A write the state directory refuses (here: over the file size limit, as
 * a quota or a full disk would) is said once a run, in one line, and the
 * store fails: the table is still there to use, the recording goes on.
 */
static void a_failed_write_says_so_once(void)
{
	struct table_cache_key k;
	struct unwind_built b;
	struct table_cache c;
	struct rlimit was, low;
	char log[8192] = { 0 };
	int saved, pipefd[2];
	ssize_t got;

	if (!cache_with_fixture(&c, TABLE_CACHE_DEFAULT_BYTES, &k, &b))
		return;
	table_cache_close(&c);
	fresh_state();
	CHECK_EQ_INT(table_cache_open(&c, state, TABLE_CACHE_DEFAULT_BYTES), 0);
	/* stderr into a pipe: the file size limit would stop a file's writes too. */
	CHECK(!pipe(pipefd));
	saved = dup(2);
	CHECK(saved >= 0 && dup2(pipefd[1], 2) == 2);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(!getrlimit(RLIMIT_FSIZE, &was));
	low = was;
	low.rlim_cur = 16;
	CHECK(!setrlimit(RLIMIT_FSIZE, &low));
	for (uint32_t i = 0; i < 3; i++) {
		memcpy(k.build_id, &i, sizeof(i));
		CHECK(table_cache_store(&c, &k, &b) < 0);
	}
	CHECK(!setrlimit(RLIMIT_FSIZE, &was));
	signal(SIGXFSZ, SIG_DFL);
	fflush(stderr);
	CHECK(dup2(saved, 2) == 2);
	close(saved);
	close(pipefd[1]);
	got = read(pipefd[0], log, sizeof(log) - 1);
	close(pipefd[0]);
	CHECK(got > 0);
	fputs(log, stderr);
	CHECK_EQ_INT(lines_with(log, "unwind table cache: cannot write in "), 1);
	CHECK_EQ_INT(
		lines_with(log, "File too large; tables are built each run, not kept (free room"),
		1);
	unwind_built_free(&b);
	table_cache_close(&c);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(round_trip);
	RUN(go_binaries_are_kept);
	RUN(generator_guard);
	RUN(each_damage_is_refused);
	RUN(unsafe_dirs_turn_it_off);
	RUN(other_owners_turn_it_off);
	RUN(classes_stay_apart);
	RUN(same_build_id_other_file);
	RUN(rewritten_in_place_is_a_miss);
	RUN(trims_least_recently_used);
	RUN(bound_holds_on_disk);
	RUN(stale_temp_files_go);
	RUN(transient_errors_keep_entries);
	RUN(a_failed_write_says_so_once);
	if (dir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return test_summary();
}
