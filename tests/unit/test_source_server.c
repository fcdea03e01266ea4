// SPDX-License-Identifier: BSD-2-Clause
/*
 * /source/v1 of `bpfprof view` (cli/source_server.c) on a small profile
 * that names some files: only what it names, by absolute path, only
 * regular files, only what others may read when we are root (or what the
 * sudo user owns), at most 16 MiB; bytes that are not UTF-8 arrive as
 * U+FFFD.
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

#include "cli/source_server.h"
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

static void make_files(void)
{
	char text[8 * PATH_MAX];
	int fd;

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
		 "{\"meta\":{\"interval\":1},\"threads\":[],\"shared\":{"
		 "\"stringArray\":[\"%s\",\"%s\",\"%s\",\"%s\",\"relative.c\"],"
		 "\"stackTable\":{\"length\":0,\"frame\":[],\"prefixOffset\":[]},"
		 "\"frameTable\":{\"length\":0,\"func\":[]},"
		 "\"funcTable\":{\"length\":0,\"name\":[]},"
		 "\"sources\":{\"length\":5,\"filename\":[0,1,2,3,4]}}}",
		 shown, private_file, fifo, huge);
	write_text(profile, text, 0600);
}

static void remove_files(void)
{
	const char *files[] = { shown, private_file, fifo, huge, unnamed, profile };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(dir);
}

/* The answer to a request for `file` (raw JSON body when `body` is set). */
static json_t *ask(struct source_files *s, const char *file, const char *body)
{
	char req[PATH_MAX + 32];
	json_t *answer;
	int fd = memfd_create("answer", MFD_CLOEXEC);

	CHECK(fd >= 0);
	if (!body) {
		snprintf(req, sizeof(req), "{\"file\":\"%s\",\"debugName\":\"x\"}", file);
		body = req;
	}
	CHECK_EQ_INT(source_answer(s, body, strlen(body), fd), 0);
	lseek(fd, 0, SEEK_SET);
	answer = json_loadfd(fd, 0, NULL);
	close(fd);
	CHECK(answer != NULL);
	return answer;
}

static void check_error(struct source_files *s, const char *file, const char *body, const char *why)
{
	json_t *a = ask(s, file, body);
	const char *err = json_string_value(json_object_get(a, "error"));

	CHECK(err != NULL && strstr(err, why) != NULL);
	if (!err || !strstr(err, why))
		fprintf(stderr, "  asked %s, got error '%s', expected '%s'\n", file ? file : body,
			err ? err : "(none)", why);
	CHECK(json_object_get(a, "source") == NULL);
	json_decref(a);
}

static void serves_only_what_the_profile_names(void)
{
	struct source_files s;
	json_t *a;

	make_files();
	CHECK_EQ_INT(source_files_init(&s, profile), 0);
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
	source_files_free(&s);
	remove_files();
}

static void a_profile_that_cannot_be_read_serves_nothing(void)
{
	struct source_files s;

	CHECK_EQ_INT(source_files_init(&s, "/nonexistent/p.json.gz"), 0);
	check_error(&s, "/etc/hostname", NULL, "the profile cannot be read");
	source_files_free(&s);
}

int main(void)
{
	RUN(serves_only_what_the_profile_names);
	RUN(a_profile_that_cannot_be_read_serves_nothing);
	return test_summary();
}
