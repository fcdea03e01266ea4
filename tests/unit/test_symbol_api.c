// SPDX-License-Identifier: BSD-2-Clause
/*
 * The symbolication API of `bpfprof view` (cli/symbol_api.c) on a small
 * profile that names some files. /source/v1: only what it names, by
 * absolute path, only regular files, only what others may read when we are
 * root (or what the sudo user owns), at most 16 MiB; bytes that are not
 * UTF-8 arrive as U+FFFD. /asm/v1: this test's own main(), from the
 * library the profile names, only while the file has the recorded build.
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

#include "cli/symbol_api.h"
#include "emit/emitter.h"
#include "symbols/elf_symtab.h"
#include "test.h"
#include "write_file.h"

static char dir[PATH_MAX - 64];
static char shown[PATH_MAX], private_file[PATH_MAX], fifo[PATH_MAX], huge[PATH_MAX],
	unnamed[PATH_MAX], profile[PATH_MAX];

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
	char text[8 * PATH_MAX];
	int fd;

	find_self();
	snprintf(dir, sizeof(dir), "%s/bpfprof-source-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(shown, sizeof(shown), "%s/shown.c", dir);
	snprintf(private_file, sizeof(private_file), "%s/private.c", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	snprintf(huge, sizeof(huge), "%s/huge.c", dir);
	snprintf(unnamed, sizeof(unnamed), "%s/unnamed.c", dir);
	snprintf(profile, sizeof(profile), "%s/p.json", dir);
	write_text(shown, "int main(void) { return 0; } /* \xff */\n", 0644);
	write_text(private_file, "secret\n", 0600);
	write_text(unnamed, "not in the profile\n", 0644);
	CHECK_EQ_INT(mkfifo(fifo, 0644), 0);
	fd = open(huge, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	CHECK_EQ_INT(ftruncate(fd, (off_t)SOURCE_MAX_BYTES + 1), 0);
	close(fd);
	snprintf(text, sizeof(text),
		 "{\"meta\":{\"interval\":1},\"threads\":[],"
		 "\"libs\":[{\"debugName\":\"self\",\"breakpadId\":\"%s\",\"path\":\"%s\","
		 "\"arch\":\"" SELF_ARCH "\"},{\"debugName\":\"other\",\"breakpadId\":\"%s\","
		 "\"path\":\"/bin/true\",\"arch\":\"" SELF_ARCH "\"}],\"shared\":{"
		 "\"stringArray\":[\"%s\",\"%s\",\"%s\",\"%s\",\"relative.c\"],"
		 "\"stackTable\":{\"length\":0,\"frame\":[],\"prefixOffset\":[]},"
		 "\"frameTable\":{\"length\":0,\"func\":[]},"
		 "\"funcTable\":{\"length\":0,\"name\":[]},"
		 "\"sources\":{\"length\":5,\"filename\":[0,1,2,3,4]}}}",
		 self_id, self_path, self_id, shown, private_file, fifo, huge);
	write_text(profile, text, 0600);
}

static void remove_files(void)
{
	const char *files[] = { shown, private_file, fifo, huge, unnamed, profile };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(dir);
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
	CHECK_EQ_INT(symbol_api_init(&s, profile), 0);
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
	/* Root shows what others could read; the kernel decides for anyone else. */
	if (geteuid() == 0) {
		char uid[16];

		unsetenv("SUDO_UID");
		check_error(&s, private_file, NULL, "not readable by other users");
		/* Unless the user who ran sudo owns it. */
		snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
		setenv("SUDO_UID", uid, 1);
		a = ask(&s, private_file, NULL);
		CHECK_EQ_STR(json_string_value(json_object_get(a, "source")), "secret\n");
		json_decref(a);
		unsetenv("SUDO_UID");
	} else {
		a = ask(&s, private_file, NULL);
		CHECK_EQ_STR(json_string_value(json_object_get(a, "source")), "secret\n");
		json_decref(a);
	}
	symbol_api_free(&s);
	remove_files();
}

static void a_profile_that_cannot_be_read_serves_nothing(void)
{
	struct symbol_api s;

	CHECK_EQ_INT(symbol_api_init(&s, "/nonexistent/p.json.gz"), 0);
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
	CHECK_EQ_INT(symbol_api_init(&s, profile), 0);
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
	/* /bin/true does not have the build the profile recorded for "other". */
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
