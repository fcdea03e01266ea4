// SPDX-License-Identifier: BSD-2-Clause
/*
 * Perf map reading against a fake /proc in a temp dir: the process 4242 is
 * pid 7 in its own pid namespace and has its own mount namespace, so its
 * map is PROC/4242/root/tmp/perf-7.map, and a host /tmp/perf-4242.map
 * (here HOST/perf-4242.map) belongs to someone else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/perf_map.h"
#include "test.h"

static char tmp_dir[] = "/tmp/test_perf_map.XXXXXX";
/* Short, so that paths built from them always fit in PATH_MAX. */
static char proc_root[128], host_tmp[128];

#define PID	4242
#define NSPID	7
#define MNT_NS	"mnt:[4026532001]"
#define SELF_NS "mnt:[4026531841]"

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

static void write_bytes(const char *path, const char *data, size_t len, bool append)
{
	int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_INT(write(fd, data, len), (long long)len);
	close(fd);
}

static void write_text(const char *path, const char *text, bool append)
{
	write_bytes(path, text, strlen(text), append);
}

/* A process in the fake proc: status (with NSpid when nspid > 0), its mount ns link. */
static void make_process(pid_t pid, pid_t nspid, const char *mnt_ns)
{
	char path[PATH_MAX], status[256];

	snprintf(path, sizeof(path), "%s/%d/ns", proc_root, (int)pid);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%d/root/tmp", proc_root, (int)pid);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc_root, (int)pid);
	unlink(path);
	CHECK_EQ_INT(symlink(mnt_ns, path), 0);
	if (nspid > 0)
		snprintf(status, sizeof(status),
			 "Name:\tnode\nTgid:\t%d\nNSpid:\t%d\t%d\nPPid:\t1\n", (int)pid, (int)pid,
			 (int)nspid);
	else
		snprintf(status, sizeof(status), "Name:\tnode\nTgid:\t%d\nPPid:\t1\n", (int)pid);
	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	write_text(path, status, false);
}

/* The map as the process sees it: PROC/PID/root/tmp/perf-NSPID.map. */
static void inner_map_path(char *out, size_t size, pid_t pid, pid_t nspid)
{
	snprintf(out, size, "%s/%d/root/tmp/perf-%d.map", proc_root, (int)pid, (int)nspid);
}

static struct perf_map *open_map(pid_t pid)
{
	return perf_map_open_at(proc_root, host_tmp, pid);
}

static void setup(void)
{
	char path[PATH_MAX];

	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(proc_root, sizeof(proc_root), "%s/proc", tmp_dir);
	snprintf(host_tmp, sizeof(host_tmp), "%s/host_tmp", tmp_dir);
	mkdirs(host_tmp);
	snprintf(path, sizeof(path), "%s/self/ns", proc_root);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/self/ns/mnt", proc_root);
	if (symlink(SELF_NS, path))
		perror("symlink");
	make_process(PID, NSPID, MNT_NS);
	/* Decoys: the host's file of the same pid, and one named by the outer pid inside. */
	snprintf(path, sizeof(path), "%s/perf-%d.map", host_tmp, PID);
	write_text(path, "1000 100 host_decoy\n", false);
	inner_map_path(path, sizeof(path), PID, PID);
	write_text(path, "1000 100 outer_pid_decoy\n", false);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmp_dir);
}

/* Writes the main process's map afresh and opens it. */
static struct perf_map *fresh_map(const char *text, char *path_out)
{
	char path[PATH_MAX];
	struct perf_map *pm;

	inner_map_path(path, sizeof(path), PID, NSPID);
	write_text(path, text, false);
	if (path_out)
		strcpy(path_out, path);
	pm = open_map(PID);
	CHECK(pm != NULL);
	return pm;
}

static void test_lookup_bounds(void)
{
	struct perf_map *pm = fresh_map("1000 100 alpha\n"
					"0x2000 0x10 LazyCompile:*beta /app/x.js:3\n"
					"7f1c74005b80 1b0 JS:^gamma /work/jit_hot.js:18:22\n",
					NULL);
	uint64_t start = 0;

	if (!pm)
		return;
	CHECK_EQ_INT(perf_map_entries(pm), 3);
	CHECK_EQ_INT(perf_map_bad_lines(pm), 0);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1050, &start), "alpha");
	CHECK_EQ_INT(start, 0x1000);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, &start), "alpha");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x10ff, &start), "alpha");
	CHECK_EQ_INT(start, 0x1000);
	CHECK(perf_map_lookup(pm, 0x1100, &start) == NULL);
	CHECK(perf_map_lookup(pm, 0xfff, NULL) == NULL);
	CHECK(perf_map_lookup(pm, 0x1800, NULL) == NULL);
	CHECK(perf_map_lookup(pm, 0, NULL) == NULL);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x200f, &start), "LazyCompile:*beta /app/x.js:3");
	CHECK_EQ_INT(start, 0x2000);
	CHECK(perf_map_lookup(pm, 0x2010, NULL) == NULL);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x7f1c74005c00, &start),
		     "JS:^gamma /work/jit_hot.js:18:22");
	CHECK_EQ_INT(start, 0x7f1c74005b80);
	CHECK(perf_map_lookup(pm, 0x7f1c74005d30, NULL) == NULL);
	CHECK(perf_map_lookup(pm, UINT64_MAX, NULL) == NULL);
	CHECK(perf_map_bytes(pm) > 3 * 16);
	perf_map_free(pm);
}

static void test_append_without_reopen(void)
{
	char path[PATH_MAX];
	struct perf_map *pm = fresh_map("1000 100 first\n", path);
	const char *first;
	uint64_t start = 0;

	if (!pm)
		return;
	first = perf_map_lookup(pm, 0x1010, NULL);
	CHECK_EQ_STR(first, "first");
	CHECK(perf_map_lookup(pm, 0x5005, NULL) == NULL);
	write_text(path, "5000 10 late one\n6000 8 later\n", true);
	/* A miss in a grown file reads the new lines. */
	CHECK_EQ_STR(perf_map_lookup(pm, 0x5005, &start), "late one");
	CHECK_EQ_INT(start, 0x5000);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x6007, NULL), "later");
	CHECK_EQ_INT(perf_map_entries(pm), 3);
	/* Names handed out earlier are still valid. */
	CHECK_EQ_STR(first, "first");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "first");

	/* Explicit refresh, and a refresh with nothing new. */
	write_text(path, "7000 8 by refresh\n", true);
	CHECK_EQ_INT(perf_map_refresh(pm), 0);
	CHECK_EQ_INT(perf_map_entries(pm), 4);
	CHECK_EQ_INT(perf_map_refresh(pm), 0);
	CHECK_EQ_INT(perf_map_entries(pm), 4);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x7000, NULL), "by refresh");
	perf_map_free(pm);
}

static void test_newer_entry_wins(void)
{
	char path[PATH_MAX];
	struct perf_map *pm = fresh_map("1000 100 old\n"
					"1040 20 inner new\n"
					"3000 40 rejit v1\n"
					"3000 40 rejit v2\n"
					"5000 10 small old\n"
					"4f00 1000 big new\n",
					path);
	uint64_t start = 0;

	if (!pm)
		return;
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1030, &start), "old");
	CHECK_EQ_INT(start, 0x1000);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1040, &start), "inner new");
	CHECK_EQ_INT(start, 0x1040);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x105f, NULL), "inner new");
	/* Past the newer entry, the old one again, with its own start. */
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1060, &start), "old");
	CHECK_EQ_INT(start, 0x1000);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x3020, NULL), "rejit v2");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x5005, &start), "big new");
	CHECK_EQ_INT(start, 0x4f00);

	/* Re-jitted after the index was built: seen after a refresh. */
	write_text(path, "3010 10 rejit v3\n", true);
	CHECK_EQ_INT(perf_map_refresh(pm), 0);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x3015, &start), "rejit v3");
	CHECK_EQ_INT(start, 0x3010);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x300f, NULL), "rejit v2");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x3020, NULL), "rejit v2");
	CHECK(perf_map_lookup(pm, 0x3040, NULL) == NULL);
	perf_map_free(pm);
}

static void test_partial_line(void)
{
	char path[PATH_MAX];
	struct perf_map *pm = fresh_map("1000 100 done\n2000 100 alp", path);

	if (!pm)
		return;
	CHECK_EQ_INT(perf_map_entries(pm), 1);
	CHECK(perf_map_lookup(pm, 0x2050, NULL) == NULL);
	write_text(path, "ha beta\n30", true);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x2050, NULL), "alpha beta");
	CHECK_EQ_INT(perf_map_entries(pm), 2);
	/* Split inside the address. */
	write_text(path, "00 10 split address\n", true);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x3000, NULL), "split address");
	CHECK_EQ_INT(perf_map_bad_lines(pm), 0);
	perf_map_free(pm);
}

static void test_malformed_lines(void)
{
	static const char text[] = "zzzz 10 not hex\n"
				   "1000\n"
				   "1000 10\n"
				   "1000 10   \n"
				   "-1000 10 negative\n"
				   "1000 zz bad size\n"
				   " 1000 10 leading blank\n"
				   "1000:10 no blank\n"
				   "0x 10 empty hex\n"
				   "11112222333344445 10 seventeen digits\n"
				   "ffffffffffffff00 1000 wraps\n"
				   "4000 10 nul\0inside\n"
				   "\n"
				   "   \r\n"
				   "2500 0 zero size is skipped, not bad\n"
				   "2000 0x10 good one\r\n";
	char path[PATH_MAX], *longline;
	struct perf_map *pm = fresh_map("", path);
	size_t long_len = 400 * 1024;

	if (!pm)
		return;
	write_bytes(path, text, sizeof(text) - 1, true);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x2005, NULL), "good one");
	CHECK_EQ_INT(perf_map_entries(pm), 1);
	CHECK_EQ_INT(perf_map_bad_lines(pm), 12);
	CHECK(perf_map_lookup(pm, 0x1005, NULL) == NULL);
	CHECK(perf_map_lookup(pm, 0x4005, NULL) == NULL);
	CHECK(perf_map_lookup(pm, 0x2500, NULL) == NULL);

	/* A huge line is one bad line, skipped without being kept. */
	longline = malloc(long_len);
	CHECK(longline != NULL);
	if (longline) {
		memset(longline, 'a', long_len);
		memcpy(longline, "3000 10 ", 8);
		write_bytes(path, longline, long_len, true);
		CHECK_EQ_INT(perf_map_refresh(pm), 0);
		write_bytes(path, longline, long_len, true);
		write_text(path, "\n5000 10 after the long line\n", true);
		CHECK_EQ_STR(perf_map_lookup(pm, 0x5000, NULL), "after the long line");
		CHECK(perf_map_lookup(pm, 0x3000, NULL) == NULL);
		CHECK_EQ_INT(perf_map_bad_lines(pm), 13);
		CHECK(perf_map_bytes(pm) < long_len);
		free(longline);
	}
	perf_map_free(pm);
}

/* Random bytes from the characters a map is made of, and some that it is not. */
static void test_garbage_does_not_crash(void)
{
	static const char alphabet[] = "0123456789abcdefxX \t\n\r-\xff";
	char path[PATH_MAX], buf[4096];
	struct perf_map *pm = fresh_map("", path);
	unsigned seed = 12345;

	if (!pm)
		return;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		write_bytes(path, buf, sizeof(buf), true);
		for (int j = 0; j < 20; j++)
			perf_map_lookup(pm, (uint64_t)rand_r(&seed) << 8, NULL);
	}
	/* Garbage may well have parsed into an entry covering it: refresh, so the newest wins. */
	write_text(path, "\n9000000 10 survivor\n", true);
	CHECK_EQ_INT(perf_map_refresh(pm), 0);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x9000008, NULL), "survivor");
	CHECK(perf_map_bad_lines(pm) > 0);
	perf_map_free(pm);
}

/*
 * Many overlapping entries in random order, added in batches with lookups in
 * between (so old segments are merged with new entries), against the
 * definition: the newest entry containing the address.
 */
#define N_RANDOM 3000

static void test_random_against_reference(void)
{
	static uint64_t starts[N_RANDOM], ends[N_RANDOM];
	char path[PATH_MAX], line[128];
	struct perf_map *pm = fresh_map("", path);
	unsigned seed = 777;
	int mismatches = 0, found = 0;
	size_t n = 0;

	if (!pm)
		return;
	for (int batch = 0; batch < 6; batch++) {
		FILE *f = fopen(path, "a");

		CHECK(f != NULL);
		if (!f)
			break;
		for (int i = 0; i < N_RANDOM / 6; i++, n++) {
			starts[n] = 0x400000 + (uint64_t)(rand_r(&seed) % 0x10000);
			ends[n] = starts[n] + 1 + rand_r(&seed) % (i % 10 ? 0x40 : 0x800);
			fprintf(f, "%s%" PRIx64 " %" PRIx64 " f%zu\n", n % 2 ? "0x" : "", starts[n],
				ends[n] - starts[n], n);
		}
		fclose(f);
		/* A hit is answered from what was read: refresh, as the symbolizer would per batch.
		 */
		CHECK_EQ_INT(perf_map_refresh(pm), 0);
		for (int q = 0; q < 4000; q++) {
			uint64_t addr = 0x3fff00 + (uint64_t)(rand_r(&seed) % 0x10a00), start = 0;
			const char *got = perf_map_lookup(pm, addr, &start);
			long want = -1;

			for (size_t k = n; k-- > 0;) {
				if (starts[k] <= addr && addr < ends[k]) {
					want = (long)k;
					break;
				}
			}
			if (want >= 0) {
				found++;
				snprintf(line, sizeof(line), "f%ld", want);
			}
			if (want < 0 ? got != NULL
				     : !got || strcmp(got, line) || start != starts[want]) {
				if (mismatches++ < 5)
					fprintf(stderr, "addr %" PRIx64 ": got %s, want %s\n", addr,
						got ? got : "none", want < 0 ? "none" : line);
			}
		}
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(found > 1000);
	CHECK_EQ_INT(perf_map_entries(pm), n);
	perf_map_free(pm);
}

static void test_readable_after_exit(void)
{
	char path[PATH_MAX];
	struct perf_map *pm = fresh_map("1000 10 before exit\n", path);

	if (!pm)
		return;
	/* The runtime's last lines, then the file is gone (tmp cleaned, container removed). */
	write_text(path, "2000 10 last words\n", true);
	CHECK_EQ_INT(unlink(path), 0);
	CHECK_EQ_STR(perf_map_lookup(pm, 0x2000, NULL), "last words");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "before exit");
	perf_map_free(pm);
}

static void test_missing_map(void)
{
	struct perf_map *pm;
	char path[PATH_MAX];

	/* A process without a map. */
	make_process(4343, 9, MNT_NS);
	errno = 0;
	pm = open_map(4343);
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	perf_map_free(pm);

	/* No such process. */
	errno = 0;
	pm = open_map(5555);
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, ENOENT);

	/* Not a regular file: refused, without blocking on the FIFO. */
	inner_map_path(path, sizeof(path), 4343, 9);
	CHECK_EQ_INT(mkfifo(path, 0600), 0);
	errno = 0;
	pm = open_map(4343);
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	unlink(path);

	/* A symlink planted in /tmp is not followed. */
	snprintf(path, sizeof(path), "%s/%d/status", proc_root, 4343);
	{
		char link[PATH_MAX];

		inner_map_path(link, sizeof(link), 4343, 9);
		CHECK_EQ_INT(symlink(path, link), 0);
		pm = open_map(4343);
		CHECK(pm == NULL);
		perf_map_free(pm);
		unlink(link);
	}

	/*
	 * The process's /tmp is an absolute symlink (its owner built that root
	 * in a user namespace): it leads to the root's own directory of that
	 * name, never to ours, where a map only root may read waits.
	 */
	{
		/* Outside /tmp (and so outside the build tree, which may be there): the link must
		 * not lead into itself. */
		char secret[] = "/var/tmp/perf_map_root_only.XXXXXX", tmp[PATH_MAX],
		     inside[PATH_MAX + 300];

		CHECK(mkdtemp(secret) != NULL);
		CHECK_EQ_INT(chmod(secret, 0700), 0);
		snprintf(path, sizeof(path), "%s/perf-9.map", secret);
		write_text(path, "1000 10 root_only_secret\n", false);
		snprintf(tmp, sizeof(tmp), "%s/%d/root/tmp", proc_root, 4343);
		CHECK_EQ_INT(rmdir(tmp), 0);
		CHECK_EQ_INT(symlink(secret, tmp), 0);
		errno = 0;
		pm = open_map(4343);
		CHECK(pm == NULL);
		CHECK_EQ_INT(errno, ENOENT);
		perf_map_free(pm);
		/* The same path inside the process's root is its map. */
		snprintf(inside, sizeof(inside), "%s/%d/root%s", proc_root, 4343, secret);
		mkdirs(inside);
		CHECK(snprintf(path, sizeof(path), "%.*s/perf-9.map", PATH_MAX - 16, inside) <
		      (int)sizeof(path));
		write_text(path, "1000 10 its_own_map\n", false);
		pm = open_map(4343);
		CHECK(pm != NULL);
		if (pm)
			CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "its_own_map");
		perf_map_free(pm);
		snprintf(path, sizeof(path), "%s/perf-9.map", secret);
		unlink(path);
		rmdir(secret);
	}
}

static void test_host_fallback(void)
{
	char path[PATH_MAX];
	struct perf_map *pm;

	/* Our mount namespace, no NSpid line, the map only in our /tmp. */
	make_process(4444, 0, SELF_NS);
	snprintf(path, sizeof(path), "rm -rf '%s/4444/root'", proc_root);
	CHECK_EQ_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/perf-4444.map", host_tmp);
	write_text(path, "1000 10 from host tmp\n", false);
	pm = open_map(4444);
	CHECK(pm != NULL);
	if (pm)
		CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "from host tmp");
	perf_map_free(pm);

	/* Another mount namespace: the host file of that pid is not its map. */
	make_process(4545, 0, MNT_NS);
	snprintf(path, sizeof(path), "%s/perf-4545.map", host_tmp);
	write_text(path, "1000 10 someone else\n", false);
	errno = 0;
	pm = open_map(4545);
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	perf_map_free(pm);

	/* Without an NSpid line the pid names the file inside the process too. */
	make_process(4646, 0, MNT_NS);
	inner_map_path(path, sizeof(path), 4646, 4646);
	write_text(path, "1000 10 inside\n", false);
	pm = open_map(4646);
	CHECK(pm != NULL);
	if (pm)
		CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "inside");
	perf_map_free(pm);

	/* The main process's map is found inside even though the host has a namesake. */
	pm = fresh_map("1000 10 the real one\n", NULL);
	if (pm)
		CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "the real one");
	perf_map_free(pm);
}

/* `n` lines "START 10 fn_I" for I in [0, n), 16 bytes apart. */
static void write_lines(const char *path, unsigned first, unsigned n, bool append)
{
	size_t cap = (size_t)n * 40 + 1, len = 0;
	char *text = malloc(cap);

	CHECK(text != NULL);
	if (!text)
		return;
	for (unsigned i = first; i < first + n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%x 10 fn_%u\n", 0x100000 + i * 16,
					i);
	write_bytes(path, text, len, append);
	free(text);
}

/*
 * A map of any size is read only up to the limits, per map and for all maps
 * together: what was read resolves, the rest does not, and the map says which
 * limit stopped it. (A user's 390 MB map took a recording to 2.9 GB.)
 */
static void test_limits(void)
{
	struct perf_map_limits
		small = { .max_file_bytes = 1 << 20,
			  .max_entries = 1000,
			  .max_name_bytes = 1 << 20,
			  .max_total_entries = 1500,
			  .max_total_name_bytes = 4 << 20,
			  /* Users' shares and budgets: test_perf_map_users. */
			  .max_user_entries = 1u << 20,
			  .max_user_name_bytes = 1u << 30,
			  .user_bytes_burst = 1u << 30,
			  .total_bytes_burst = 1u << 30 },
		old;
	struct perf_map *pm, *other;
	char path[PATH_MAX];

	perf_map_set_limits(&small, &old);
	/* Entries: 1000 of 3000 lines. */
	inner_map_path(path, sizeof(path), PID, NSPID);
	write_lines(path, 0, 3000, false);
	pm = open_map(PID);
	CHECK(pm != NULL);
	if (!pm)
		goto out;
	CHECK_EQ_INT(perf_map_entries(pm), 1000);
	CHECK_EQ_STR(perf_map_capped(pm), "entries");
	CHECK_EQ_STR(perf_map_lookup(pm, 0x100000 + 999 * 16, NULL), "fn_999");
	CHECK(perf_map_lookup(pm, 0x100000 + 1000 * 16, NULL) == NULL);
	/* Appending more changes nothing: the map is not read further. */
	write_lines(path, 3000, 10, true);
	CHECK_EQ_INT(perf_map_refresh(pm), 0);
	CHECK_EQ_INT(perf_map_entries(pm), 1000);

	/* All maps together: a second map gets the 500 entries left. */
	make_process(4747, 7, MNT_NS);
	inner_map_path(path, sizeof(path), 4747, 7);
	write_lines(path, 0, 800, false);
	other = open_map(4747);
	CHECK(other != NULL);
	if (other) {
		CHECK_EQ_INT(perf_map_entries(other), 500);
		CHECK_EQ_STR(perf_map_capped(other), "entries of all maps");
	}
	/* Freed maps give their share back. */
	perf_map_free(pm);
	perf_map_free(other);
	other = open_map(4747);
	CHECK(other != NULL);
	if (other) {
		CHECK_EQ_INT(perf_map_entries(other), 800);
		CHECK(perf_map_capped(other) == NULL);
	}
	perf_map_free(other);

	/* File bytes: a 2 MiB line of garbage and then valid lines, read to 1 MiB only. */
	small.max_entries = small.max_total_entries = 1u << 20;
	perf_map_set_limits(&small, NULL);
	{
		size_t big = 2u << 20;
		char *junk = malloc(big);

		CHECK(junk != NULL);
		if (junk) {
			memset(junk, 'x', big - 1);
			junk[big - 1] = '\n';
			write_bytes(path, junk, big, false);
			free(junk);
		}
		write_lines(path, 0, 10, true);
	}
	other = open_map(4747);
	CHECK(other != NULL);
	if (other) {
		CHECK_EQ_INT(perf_map_entries(other), 0);
		CHECK_EQ_STR(perf_map_capped(other), "file bytes");
		CHECK(perf_map_bytes(other) < (1u << 20));
	}
	perf_map_free(other);
out:
	perf_map_set_limits(&old, NULL);
}

/*
 * Anyone may write /tmp/perf-PID.map for a PID not theirs: as perf, a map is
 * read only when one of the process's uids or root owns it.
 */
static void test_owner(void)
{
	char path[PATH_MAX], status[256];
	struct perf_map *pm;

	make_process(4747, 7, MNT_NS);
	snprintf(path, sizeof(path), "%s/%d/status", proc_root, 4747);
	snprintf(status, sizeof(status),
		 "Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4747\t7\n");
	write_text(path, status, false);
	inner_map_path(path, sizeof(path), 4747, 7);
	write_text(path, "1000 10 from whoever\n", false);
	CHECK_EQ_INT(chown(path, 4242, 4242), 0);
	errno = 0;
	pm = open_map(4747);
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, EPERM);
	/* Its effective uid: its own. */
	snprintf(path, sizeof(path), "%s/%d/status", proc_root, 4747);
	snprintf(status, sizeof(status),
		 "Name:\tjava\nUid:\t1000\t4242\t1000\t4242\nNSpid:\t4747\t7\n");
	write_text(path, status, false);
	pm = open_map(4747);
	CHECK(pm != NULL);
	if (pm)
		CHECK_EQ_STR(perf_map_lookup(pm, 0x1000, NULL), "from whoever");
	perf_map_free(pm);
	/* Root's. */
	inner_map_path(path, sizeof(path), 4747, 7);
	CHECK_EQ_INT(chown(path, 0, 0), 0);
	snprintf(status, sizeof(status), "%s/%d/status", proc_root, 4747);
	write_text(status, "Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4747\t7\n", false);
	pm = open_map(4747);
	CHECK(pm != NULL);
	perf_map_free(pm);
}

/* The real /proc: this process's own map in /tmp, through the public entry point. */
static void test_real_proc(void)
{
	char path[PATH_MAX];
	struct perf_map *pm;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!access(path, F_OK)) {
		fprintf(stderr, "%s exists already; not touching it\n", path);
		return;
	}
	errno = 0;
	pm = perf_map_open("/proc", getpid());
	CHECK(pm == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	write_text(path, "1234000 100 test_perf_map_self\n", false);
	pm = perf_map_open("/proc", getpid());
	CHECK(pm != NULL);
	if (pm)
		CHECK_EQ_STR(perf_map_lookup(pm, 0x1234080, NULL), "test_perf_map_self");
	perf_map_free(pm);
	unlink(path);
}

int main(void)
{
	setup();
	RUN(test_lookup_bounds);
	RUN(test_append_without_reopen);
	RUN(test_newer_entry_wins);
	RUN(test_partial_line);
	RUN(test_malformed_lines);
	RUN(test_garbage_does_not_crash);
	RUN(test_random_against_reference);
	RUN(test_readable_after_exit);
	RUN(test_missing_map);
	RUN(test_host_fallback);
	RUN(test_limits);
	if (geteuid() == 0)
		RUN(test_owner);
	RUN(test_real_proc);
	teardown();
	return test_summary();
}
