// SPDX-License-Identifier: BSD-2-Clause
#include "source_server.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../emit/json_writer.h"
#include "../util/log.h"
#include "../util/safe_open.h"
#include "../util/sudo_user.h"
#include "report_load.h"

int source_files_init(struct source_files *s, const char *profile)
{
	memset(s, 0, sizeof(*s));
	s->profile = strdup(profile);
	return s->profile ? 0 : -ENOMEM;
}

void source_files_free(struct source_files *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->profile);
	memset(s, 0, sizeof(*s));
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* shared.sources.filename: indexes into shared.stringArray. */
static int collect(struct source_files *s, const struct report_profile *p)
{
	json_t *names = json_object_get(
		json_object_get(json_object_get(p->root, "shared"), "sources"), "filename");
	size_t i, n = json_array_size(names);
	json_t *v;

	s->paths = calloc(n ? n : 1, sizeof(*s->paths));
	if (!s->paths)
		return -ENOMEM;
	json_array_foreach(names, i, v)
	{
		const char *path =
			json_is_integer(v) ? report_string(p, json_integer_value(v)) : NULL;

		/* Absolute paths only: a relative one names no file we could find. */
		if (!path || path[0] != '/')
			continue;
		if (!(s->paths[s->n] = strdup(path)))
			return -ENOMEM;
		s->n++;
	}
	qsort(s->paths, s->n, sizeof(*s->paths), cmp_path);
	return 0;
}

static void load(struct source_files *s)
{
	struct report_profile p;

	s->loaded = true;
	s->load_err = report_profile_load(&p, s->profile);
	if (s->load_err)
		return;
	s->load_err = collect(s, &p);
	report_profile_free(&p);
	if (!s->load_err)
		log_info("source view: %zu source files named by %s can be served", s->n,
			 s->profile);
}

bool source_files_named(struct source_files *s, const char *path)
{
	if (!s->loaded)
		load(s);
	return !s->load_err && s->n &&
	       bsearch(&path, s->paths, s->n, sizeof(*s->paths), cmp_path) != NULL;
}

/* As root, what another user could read, or the sudo user; as anyone else, the kernel decided. */
static bool may_show(const struct stat *st)
{
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0 || (st->st_mode & S_IROTH))
		return true;
	return sudo_user_ids(&uid, &gid) && st->st_uid == uid && (st->st_mode & S_IRUSR);
}

/* The file's text into *out (malloc'd), or an error message into why. */
static char *read_source(const char *path, size_t *len, const char **why)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd = open_regular(path, 0);

	if (fd < 0) {
		*why = fd == -EINVAL ? "not a regular file" : strerror(-fd);
		return NULL;
	}
	if (fstat(fd, &st) || !may_show(&st)) {
		*why = "not readable by other users: bpfprof does not show it";
		goto out;
	}
	if ((uint64_t)st.st_size > SOURCE_MAX_BYTES) {
		*why = "larger than 16 MiB: not shown as source";
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		*why = strerror(ENOMEM);
		goto out;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	*len = got;
out:
	close(fd);
	return buf;
}

int source_answer(struct source_files *s, const char *body, size_t len, int fd)
{
	json_t *req = json_loadb(body, len, 0, NULL);
	const char *file = json_string_value(json_object_get(req, "file"));
	const char *why = NULL;
	struct json_writer w;
	char *text = NULL;
	size_t text_len = 0;
	int err;

	if (!file)
		why = "the request names no file";
	else if (!source_files_named(s, file))
		why = s->load_err ? "the profile cannot be read"
				  : "the profile names no such source file";
	else
		text = read_source(file, &text_len, &why);
	err = jw_open(&w, fd, false);
	if (err) {
		free(text);
		json_decref(req);
		return err;
	}
	jw_begin_object(&w);
	if (text) {
		jw_kv_null(&w, "symbolsLastModified");
		jw_kv_null(&w, "sourceLastModified");
		jw_kv_string(&w, "file", file);
		jw_key(&w, "source");
		/* Not UTF-8 everywhere: json_writer turns bad bytes into U+FFFD. */
		jw_string_len(&w, text, text_len);
	} else {
		char msg[PATH_MAX + 160];

		snprintf(msg, sizeof(msg), "%s: %s", file ? file : "?", why);
		jw_kv_string(&w, "error", msg);
	}
	jw_end_object(&w);
	free(text);
	json_decref(req);
	return jw_close(&w);
}
