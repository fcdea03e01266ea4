// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolication API of `bpfprof view` (view/symbol_api.c) on a small
 * profile that names some files. /source/v1: only what it names, by
 * absolute path, only regular files, only what every other user may read
 * along the whole path or the viewer owns along it, never through a
 * symlink, at most 16 MiB; bytes that are not UTF-8 arrive as U+FFFD. What
 * the viewer owns only when the viewer's processes alone named it
 * (namedByUid): another user's program can name the viewer's private
 * files (issue 37). /asm/v1: this test's own
 * main(), from the library the profile names, only while the file has the recorded build.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view/symbol_api.h"
#include "emit/emitter.h"
#include "symbols/elf_symtab.h"
#include "test.h"
#include "util/visible_open.h"
#include "write_file.h"

static char dir[PATH_MAX - 64];
static char shown[PATH_MAX], private_file[PATH_MAX], fifo[PATH_MAX], huge[PATH_MAX],
	unnamed[PATH_MAX], profile[PATH_MAX], closed_dir[PATH_MAX], in_closed[PATH_MAX],
	link_file[PATH_MAX], link_dir[PATH_MAX], via_link_dir[PATH_MAX], dotted[PATH_MAX],
	true_path[PATH_MAX], theirs[PATH_MAX];

static void write_text(const char *path, const char *text, mode_t mode)
{
	write_file_text(path, text);
	CHECK_EQ_INT(chmod(path, mode), 0);
}

/* This test's own binary: its path, breakpad id, and where main() is in it. */
#if defined(__aarch64__)
#define SELF_ARCH "aarch64"
#else
#define SELF_ARCH "x86_64"
#endif
static char self_path[PATH_MAX], self_id[34];
static uint64_t main_rel, main_size;

static void find_self(void)
{
	struct elf_symtab t = { 0 };
	const struct elf_sym *sym;
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	CHECK(n > 0);
	self_path[n > 0 ? n : 0] = '\0';
	CHECK_EQ_INT(elf_symtab_load_path(&t, self_path, NULL), 0);
	emit_breakpad_id(t.build_id[0] ? t.build_id : NULL, self_id);
	sym = elf_symtab_find(&t, "main");
	CHECK(sym != NULL && sym->size > 0);
	if (sym) {
		main_rel = sym->start - t.base;
		main_size = sym->size;
	}
	elf_symtab_free(&t);
}

static void make_files(void)
{
	char text[16 * PATH_MAX];
	int fd;

	find_self();
	snprintf(dir, sizeof(dir), "%s/bpfprof-source-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	/* Every user may enter it, as where sources usually are (mkdtemp makes it 0700). */
	CHECK_EQ_INT(chmod(dir, 0755), 0);
	CHECK(realpath("/bin/true", true_path) != NULL);
	snprintf(shown, sizeof(shown), "%s/shown.c", dir);
	snprintf(private_file, sizeof(private_file), "%s/private.c", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	snprintf(huge, sizeof(huge), "%s/huge.c", dir);
	snprintf(unnamed, sizeof(unnamed), "%s/unnamed.c", dir);
	snprintf(profile, sizeof(profile), "%s/p.json", dir);
	snprintf(closed_dir, sizeof(closed_dir), "%s/closed", dir);
	snprintf(in_closed, sizeof(in_closed), "%s/closed/open.c", dir);
	snprintf(link_file, sizeof(link_file), "%s/link.c", dir);
	snprintf(link_dir, sizeof(link_dir), "%s/linkdir", dir);
	snprintf(via_link_dir, sizeof(via_link_dir), "%s/linkdir/shown.c", dir);
	snprintf(dotted, sizeof(dotted), "%s/./closed/../shown.c", dir);
	snprintf(theirs, sizeof(theirs), "%s/named-by-another.c", dir);
	write_text(shown, "int main(void) { return 0; } /* \xff */\n", 0644);
	write_text(private_file, "secret\n", 0600);
	write_text(theirs, "the viewer's, named by another uid\n", 0600);
	write_text(unnamed, "not in the profile\n", 0644);
	CHECK_EQ_INT(mkfifo(fifo, 0644), 0);
	/* A file any user may read, in a directory only its owner may enter. */
	CHECK_EQ_INT(mkdir(closed_dir, 0700), 0);
	write_text(in_closed, "behind a closed door\n", 0644);
	CHECK_EQ_INT(symlink(shown, link_file), 0);
	CHECK_EQ_INT(symlink(dir, link_dir), 0);
	fd = open(huge, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(ftruncate(fd, (off_t)SOURCE_MAX_BYTES + 1), 0);
	close(fd);
	snprintf(text, sizeof(text),
		 "{\"meta\":{\"interval\":1},\"threads\":[],"
		 "\"libs\":[{\"debugName\":\"self\",\"breakpadId\":\"%s\",\"path\":\"%s\","
		 "\"arch\":\"" SELF_ARCH "\"},{\"debugName\":\"other\",\"breakpadId\":\"%s\","
		 "\"path\":\"%s\",\"arch\":\"" SELF_ARCH "\"}],\"shared\":{"
		 "\"stringArray\":[\"%s\",\"%s\",\"%s\",\"%s\",\"relative.c\",\"%s\",\"%s\","
		 "\"%s\",\"%s\",\"%s\"],"
		 "\"stackTable\":{\"length\":0,\"frame\":[],\"prefixOffset\":[]},"
		 "\"frameTable\":{\"length\":0,\"func\":[]},"
		 "\"funcTable\":{\"length\":0,\"name\":[]},"
		 "\"sources\":{\"length\":10,\"filename\":[0,1,2,3,4,5,6,7,8,9],"
		 "\"namedByUid\":[null,%u,null,null,null,%u,null,null,null,%u]}}}",
		 self_id, self_path, self_id, true_path, shown, private_file, fifo, huge, in_closed,
		 link_file, via_link_dir, dotted, theirs, (unsigned)geteuid(), (unsigned)geteuid(),
		 (unsigned)geteuid() + 1);
	write_text(profile, text, 0600);
}

static void remove_files(void)
{
	const char *files[] = { shown,	 private_file, fifo,	  huge,	    unnamed,
				profile, in_closed,    link_file, link_dir, theirs };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(closed_dir);
	rmdir(dir);
}

/* The API for the profile, shown to `viewer`. */
static void init(struct symbol_api *s, uid_t viewer)
{
	int fd = open(profile, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ_INT(symbol_api_init(s, profile, fd, viewer), 0);
	close(fd);
}

/* What endpoint `fn` answers to `body`, parsed. */
static json_t *answer_of(int (*fn)(struct symbol_api *, const char *, size_t, int),
			 struct symbol_api *s, const char *body)
{
	json_t *answer;
	int fd = memfd_create("answer", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ_INT(fn(s, body, strlen(body), fd), 0);
	lseek(fd, 0, SEEK_SET);
	answer = json_loadfd(fd, 0, NULL);
	close(fd);
	CHECK(answer != NULL);
	return answer;
}

/* The answer to a request for `file` (raw JSON body when `body` is set). */
static json_t *ask(struct symbol_api *s, const char *file, const char *body)
{
	char req[PATH_MAX + 32];

	if (!body) {
		snprintf(req, sizeof(req), "{\"file\":\"%s\",\"debugName\":\"x\"}", file);
		body = req;
	}
	return answer_of(symbol_api_source, s, body);
}

/* The answer's error holds `why`. */
static void check_why(json_t *a, const char *asked, const char *why)
{
	const char *err = json_string_value(json_object_get(a, "error"));

	CHECK(err != NULL && strstr(err, why) != NULL);
	if (!err || !strstr(err, why))
		fprintf(stderr, "  asked %s, got error '%s', expected '%s'\n", asked,
			err ? err : "(none)", why);
	json_decref(a);
}

static void check_error(struct symbol_api *s, const char *file, const char *body, const char *why)
{
	json_t *a = ask(s, file, body);

	CHECK(json_object_get(a, "source") == NULL);
	check_why(a, file ? file : body, why);
}

static void serves_only_what_the_profile_names(void)
{
	struct symbol_api s;
	json_t *a;

	make_files();
	init(&s, VISIBLE_NO_VIEWER);
	a = ask(&s, shown, NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(a, "source")),
		     "int main(void) { return 0; } /* \xef\xbf\xbd */\n");
	CHECK_EQ_STR(json_string_value(json_object_get(a, "file")), shown);
	CHECK(json_is_null(json_object_get(a, "sourceLastModified")));
	json_decref(a);
	check_error(&s, unnamed, NULL, "the profile names no such source file");
	check_error(&s, "relative.c", NULL, "the profile names no such source file");
	check_error(&s, fifo, NULL, "not a regular file");
	check_error(&s, huge, NULL, "larger than 16 MiB");
	check_error(&s, NULL, "{\"debugName\":\"x\"}", "the request names no file");
	check_error(&s, NULL, "not json", "the request names no file");
	/* What others could read along the whole path, never through a symlink. */
	check_error(&s, private_file, NULL, "not readable by other users");
	check_error(&s, in_closed, NULL, "not readable by other users along its whole path");
	check_error(&s, link_file, NULL, "reached through a symlink");
	check_error(&s, via_link_dir, NULL, "reached through a symlink");
	/* ".." is taken from the text: closed/.. never enters the closed directory. */
	a = ask(&s, dotted, NULL);
	CHECK(json_string_value(json_object_get(a, "source")) != NULL);
	json_decref(a);
	symbol_api_free(&s);
	/* The viewer also sees what they own along the path: this test's user owns all of it. */
	init(&s, geteuid());
	a = ask(&s, private_file, NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(a, "source")), "secret\n");
	json_decref(a);
	a = ask(&s, in_closed, NULL);
	CHECK_EQ_STR(json_string_value(json_object_get(a, "source")), "behind a closed door\n");
	json_decref(a);
	check_error(&s, link_file, NULL, "reached through a symlink");
	/* The viewer's own file, but another uid's processes named it: as for root. */
	check_error(&s, theirs, NULL, "not named by your processes alone");
	symbol_api_free(&s);
	/* Another user's view: none of it is theirs, the private files are refused. */
	init(&s, geteuid() + 1);
	check_error(&s, private_file, NULL, "not readable by other users");
	check_error(&s, in_closed, NULL, "not readable by other users along its whole path");
	symbol_api_free(&s);
	remove_files();
}

static void a_profile_that_cannot_be_read_serves_nothing(void)
{
	struct symbol_api s;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK_EQ_INT(symbol_api_init(&s, "/dev/null", fd, VISIBLE_NO_VIEWER), 0);
	close(fd);
	check_error(&s, "/etc/hostname", NULL, "the profile cannot be read");
	symbol_api_free(&s);
}

static void asm_request(char *buf, size_t len, const char *lib, uint64_t start, uint64_t size,
			bool to_end)
{
	snprintf(buf, len,
		 "{\"debugName\":\"%s\",\"debugId\":\"%s\",\"name\":\"%s\",\"codeId\":null,"
		 "\"startAddress\":\"0x%llx\",\"size\":\"0x%llx\",\"continueUntilFunctionEnd\":%s}",
		 lib, self_id, lib, (unsigned long long)start, (unsigned long long)size,
		 to_end ? "true" : "false");
}

static void check_asm_error(struct symbol_api *s, const char *body, const char *why)
{
	check_why(answer_of(symbol_api_asm, s, body), body, why);
}

/* main() of this very binary, whole: offsets from 0, increasing, inside the function. */
static void disassembles_a_named_library(void)
{
	struct symbol_api s;
	char body[1024];
	size_t i, n = 0;
	json_int_t last = -1;
	json_t *a, *insns, *in;
	bool increasing = true;

	make_files();
	/* This test's user owns its build tree, wherever it is. */
	init(&s, geteuid());
	/* The app's size is a lower bound when it asks to go on to the function's end. */
	asm_request(body, sizeof(body), "self", main_rel, 1, true);
	a = answer_of(symbol_api_asm, &s, body);
	CHECK_EQ_STR(json_string_value(json_object_get(a, "arch")), SELF_ARCH);
	CHECK(json_string_value(json_object_get(a, "startAddress")) != NULL);
	insns = json_object_get(a, "instructions");
	json_array_foreach(insns, i, in)
	{
		json_int_t off = json_integer_value(json_array_get(in, 0));
		const char *text = json_string_value(json_array_get(in, 1));

		increasing = increasing && off > last && text && text[0];
		last = off;
		n++;
	}
	CHECK(n >= 3);
	CHECK(increasing);
	CHECK_EQ_INT(json_integer_value(json_array_get(json_array_get(insns, 0), 0)), 0);
	CHECK(last >= 0 && (uint64_t)last < main_size);
	json_decref(a);
	/* Not to the end: only the bytes asked for (one instruction at least starts there). */
	asm_request(body, sizeof(body), "self", main_rel, 1, false);
	a = answer_of(symbol_api_asm, &s, body);
	CHECK_EQ_STR(json_string_value(json_object_get(a, "size")), "0x1");
	json_decref(a);
	asm_request(body, sizeof(body), "nosuch", main_rel, 16, false);
	check_asm_error(&s, body, "the profile names no such library");
	/* /usr/bin/true does not have the build the profile recorded for "other". */
	asm_request(body, sizeof(body), "other", 0, 16, false);
	check_asm_error(&s, body, "another build than the one recorded");
	asm_request(body, sizeof(body), "self", 1ull << 40, 16, false);
	check_asm_error(&s, body, "in no executable segment");
	check_asm_error(&s, "{\"debugName\":\"self\"}", "the request needs debugName");
	check_asm_error(&s, "[]", "the request needs debugName");
	symbol_api_free(&s);
	remove_files();
}

int main(void)
{
	RUN(disassembles_a_named_library);
	RUN(serves_only_what_the_profile_names);
	RUN(a_profile_that_cannot_be_read_serves_nothing);
	return test_summary();
}
