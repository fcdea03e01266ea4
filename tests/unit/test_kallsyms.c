// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "symbols/kallsyms.h"
#include "test.h"

/* Out of order on purpose (modules first), with data symbols and aliases. */
static const char fake_kallsyms[] = "ffffffffc0001100 T mod_fn_b\t[mymod]\n"
				    "ffffffffc0001000 t mod_fn_a\t[mymod]\n"
				    "ffffffffc0002000 t bpf_prog_0123456789abcdef_handler\t[bpf]\n"
				    "ffffffffc0001200 d mod_data\t[mymod]\n"
				    "0000000000000000 A fixed_percpu_data\n"
				    "ffffffff81000000 t __text_alias\n"
				    "ffffffff81000000 T _stext\n"
				    "ffffffff81000100 T do_one\n"
				    "ffffffff81000200 t local_two\n"
				    "ffffffff81000300 D some_data\n"
				    "ffffffff81000400 W weak_three\n"
				    "ffffffff81000500 w weak_local_four\n"
				    "ffffffff81000600 r some_rodata\n"
				    "ffffffff81000700 T _etext\n";

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/bpfprof-kallsyms-XXXXXX");
	int fd;

	if (!path)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static const char *name_at(const struct kallsyms *k, uint64_t addr)
{
	const struct ksym *s = kallsyms_lookup(k, addr);

	return s ? kallsyms_name(k, s) : NULL;
}

static void test_load_and_lookup(void)
{
	struct kallsyms k = { 0 };
	char *path = write_temp(fake_kallsyms);
	const struct ksym *s;

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_EQ_INT(kallsyms_load(&k, path), 0);
	/* 10 text symbols; the alias at _stext collapses into one. */
	CHECK_EQ_INT(k.syms.len, 9);
	for (size_t i = 1; i < k.syms.len; i++)
		CHECK(k.syms.data[i - 1].addr < k.syms.data[i].addr);

	CHECK(name_at(&k, 0xffffffff80ffffffULL) == NULL);
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000000ULL), "_stext");
	CHECK_EQ_STR(name_at(&k, 0xffffffff810000ffULL), "_stext");
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000100ULL), "do_one");
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000150ULL), "do_one");
	/* some_data is not text, so local_two runs up to weak_three. */
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000350ULL), "local_two");
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000401ULL), "weak_three");
	CHECK_EQ_STR(name_at(&k, 0xffffffff81000650ULL), "weak_local_four");

	s = kallsyms_lookup(&k, 0xffffffff81000150ULL);
	CHECK(s && kallsyms_module(&k, s) == NULL);

	s = kallsyms_lookup(&k, 0xffffffffc0001180ULL);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ_STR(kallsyms_name(&k, s), "mod_fn_b");
		CHECK_EQ_STR(kallsyms_module(&k, s), "mymod");
	}
	s = kallsyms_lookup(&k, 0xffffffffc0001000ULL);
	CHECK(s && !strcmp(kallsyms_module(&k, s), "mymod"));
	/* The module data symbol is skipped: mod_fn_b extends over it. */
	CHECK_EQ_STR(name_at(&k, 0xffffffffc0001200ULL), "mod_fn_b");

	s = kallsyms_lookup(&k, 0xffffffffc0002010ULL);
	CHECK(s && !strcmp(kallsyms_module(&k, s), "bpf"));
	CHECK_EQ_STR(name_at(&k, 0xffffffffc0002010ULL), "bpf_prog_0123456789abcdef_handler");
	/* Within KSYM_MAX_SIZE of the last symbol, and beyond it. */
	CHECK(name_at(&k, 0xffffffffc0002000ULL + KSYM_MAX_SIZE - 1) != NULL);
	CHECK(name_at(&k, 0xffffffffc0002000ULL + KSYM_MAX_SIZE) == NULL);
	CHECK(name_at(&k, UINT64_MAX) == NULL);
	/* A gap larger than any function between the kernel and modules. */
	CHECK(name_at(&k, 0xffffffffa0000000ULL) == NULL);
	CHECK(kallsyms_bytes(&k) > 0);

	kallsyms_free(&k);
	CHECK_EQ_INT(k.syms.len, 0);
	unlink(path);
	free(path);
}

static void test_zeroed_addresses(void)
{
	static const char zeroed[] = "0000000000000000 T _stext\n"
				     "0000000000000000 T do_one\n"
				     "0000000000000000 t mod_fn\t[mymod]\n"
				     "0000000000000000 D some_data\n";
	struct kallsyms k = { 0 };
	char *path = write_temp(zeroed);

	CHECK(path != NULL);
	if (!path)
		return;
	CHECK_EQ_INT(kallsyms_load(&k, path), -EPERM);
	CHECK_EQ_INT(k.syms.len, 0);
	CHECK(kallsyms_lookup(&k, 0) == NULL);
	CHECK(kallsyms_lookup(&k, 0xffffffff81000000ULL) == NULL);
	kallsyms_free(&k);
	unlink(path);
	free(path);
}

static void test_errors(void)
{
	struct kallsyms k = { 0 };
	char *path;

	CHECK_EQ_INT(kallsyms_load(&k, "/nonexistent/kallsyms"), -ENOENT);
	path = write_temp("this is not kallsyms\n");
	CHECK(path != NULL);
	if (path) {
		CHECK_EQ_INT(kallsyms_load(&k, path), -EINVAL);
		CHECK_EQ_INT(k.syms.len, 0);
		unlink(path);
		free(path);
	}
	path = write_temp("ffffffff81000000 D only_data\n");
	CHECK(path != NULL);
	if (path) {
		CHECK_EQ_INT(kallsyms_load(&k, path), -EINVAL);
		unlink(path);
		free(path);
	}
}

/* The running kernel, when its addresses are visible (root, kptr_restrict < 2). */
static void test_real_kallsyms(void)
{
	struct kallsyms k = { 0 };
	int err = kallsyms_load(&k, "/proc/kallsyms");
	size_t checked = 0;

	if (err == -EPERM || err == -EACCES) {
		fprintf(stderr, "  (kernel addresses hidden: %d; skipping)\n", err);
		return;
	}
	CHECK_EQ_INT(err, 0);
	CHECK(k.syms.len > 1000);
	/* Every 997th symbol resolves to itself, at its start and just after. */
	for (size_t i = 0; i + 1 < k.syms.len; i += 997) {
		const struct ksym *s = &k.syms.data[i];

		CHECK(kallsyms_lookup(&k, s->addr) == s);
		if (k.syms.data[i + 1].addr > s->addr + 1)
			CHECK(kallsyms_lookup(&k, s->addr + 1) == s);
		checked++;
	}
	CHECK(checked > 0);
	kallsyms_free(&k);
}

int main(void)
{
	RUN(test_load_and_lookup);
	RUN(test_zeroed_addresses);
	RUN(test_errors);
	RUN(test_real_kallsyms);
	return test_summary();
}
