// SPDX-License-Identifier: BSD-2-Clause
#include "symbol_api.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../emit/emitter.h"
#include "../emit/json_writer.h"
#include "../symbols/elf_symtab.h"
#include "../util/log.h"
#include "../util/visible_open.h"
#include "../report/report_load.h"

int symbol_api_init(struct symbol_api *s, const char *profile, int profile_fd, uid_t viewer)
{
	memset(s, 0, sizeof(*s));
	s->profile_fd = -1;
	s->profile = strdup(profile);
	if (!s->profile)
		return -ENOMEM;
	s->profile_fd = fcntl(profile_fd, F_DUPFD_CLOEXEC, 0);
	if (s->profile_fd < 0) {
		free(s->profile);
		s->profile = NULL;
		return -errno;
	}
	s->viewer = viewer;
	return 0;
}

void symbol_api_free(struct symbol_api *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->sources[i].path);
	for (size_t i = 0; i < s->nr_libs; i++) {
		free(s->libs[i].debug_name);
		free(s->libs[i].breakpad_id);
		free(s->libs[i].path);
		free(s->libs[i].arch);
	}
	free(s->libs);
	free(s->sources);
	free(s->profile);
	if (s->profile_fd >= 0)
		close(s->profile_fd);
	memset(s, 0, sizeof(*s));
	s->profile_fd = -1;
}

static int cmp_source(const void *a, const void *b)
{
	return strcmp(((const struct symbol_api_source *)a)->path,
		      ((const struct symbol_api_source *)b)->path);
}

/* namedByUid[i]: a uid, or VISIBLE_NO_VIEWER when null, absent or no uid. */
static uid_t named_by(json_t *uids, size_t i)
{
	json_t *v = json_array_get(uids, i);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) >= (json_int_t)VISIBLE_NO_VIEWER)
		return VISIBLE_NO_VIEWER;
	return (uid_t)json_integer_value(v);
}

/* shared.sources.filename (indexes into shared.stringArray) and namedByUid. */
static int collect_sources(struct symbol_api *s, const struct report_profile *p)
{
	json_t *sources = json_object_get(json_object_get(p->root, "shared"), "sources");
	json_t *names = json_object_get(sources, "filename"),
	       *uids = json_object_get(sources, "namedByUid");
	size_t i, n = json_array_size(names);
	json_t *v;

	s->sources = calloc(n ? n : 1, sizeof(*s->sources));
	if (!s->sources)
		return -ENOMEM;
	json_array_foreach(names, i, v)
	{
		const char *path =
			json_is_integer(v) ? report_string(p, json_integer_value(v)) : NULL;

		/* Absolute paths only: a relative one names no file we could find. */
		if (!path || path[0] != '/')
			continue;
		if (!(s->sources[s->n].path = strdup(path)))
			return -ENOMEM;
		s->sources[s->n].named_by = named_by(uids, i);
		s->n++;
	}
	qsort(s->sources, s->n, sizeof(*s->sources), cmp_source);
	return 0;
}

static char *dup_member(json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));

	return strdup(v ? v : "");
}

/* libs[]: which binaries /asm/v1 may read, and the build-id each must still have. */
static int collect_libs(struct symbol_api *s, const struct report_profile *p)
{
	json_t *libs = json_object_get(p->root, "libs");
	size_t i, n = json_array_size(libs);
	json_t *v;

	s->libs = calloc(n ? n : 1, sizeof(*s->libs));
	if (!s->libs)
		return -ENOMEM;
	json_array_foreach(libs, i, v)
	{
		struct symbol_api_lib *l = &s->libs[s->nr_libs++];

		l->debug_name = dup_member(v, "debugName");
		l->breakpad_id = dup_member(v, "breakpadId");
		l->path = dup_member(v, "path");
		l->arch = dup_member(v, "arch");
		if (!l->debug_name || !l->breakpad_id || !l->path || !l->arch)
			return -ENOMEM;
	}
	return 0;
}

static void load(struct symbol_api *s)
{
	struct report_profile p;
	char fd_path[32];

	s->loaded = true;
	/* The file view checked and serves, not whatever its name leads to now. */
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", s->profile_fd);
	s->load_err = report_profile_load(&p, fd_path);
	if (s->load_err)
		return;
	s->load_err = collect_sources(s, &p);
	if (!s->load_err)
		s->load_err = collect_libs(s, &p);
	report_profile_free(&p);
	if (!s->load_err)
		log_info(
			"source and assembly views: %zu source files and %zu libraries named by %s",
			s->n, s->nr_libs, s->profile);
}

/* The profile's entry for source file `path`, or NULL. */
static const struct symbol_api_source *named_source(struct symbol_api *s, const char *path)
{
	struct symbol_api_source key = { .path = (char *)path };

	if (!s->loaded)
		load(s);
	return !s->load_err && s->n
		       ? bsearch(&key, s->sources, s->n, sizeof(*s->sources), cmp_source)
		       : NULL;
}

/* Why open_visible() refused. */
static const char *why_not_visible(int err)
{
	switch (err) {
	case -EINVAL:
		return "not a regular file";
	case -EACCES:
		return "not readable by other users along its whole path: bpfprof does not show it";
	case -ELOOP:
		return "reached through a symlink: bpfprof does not show it";
	default:
		return strerror(-err);
	}
}

/*
 * The file's text into *out (malloc'd), or an error message into why. The
 * viewer's own files only when their own processes alone named it: else
 * what every user may read, as for root.
 */
static char *read_source(const struct symbol_api *s, const struct symbol_api_source *src,
			 size_t *len, const char **why)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd =
		open_visible(src->path, src->named_by == s->viewer ? s->viewer : VISIBLE_NO_VIEWER);

	if (fd < 0) {
		*why = why_not_visible(fd);
		if (fd == -EACCES && s->viewer != VISIBLE_NO_VIEWER && src->named_by != s->viewer)
			*why = "not named by your processes alone, and not readable by other "
			       "users along its whole path: bpfprof does not show it";
		return NULL;
	}
	if (fstat(fd, &st)) {
		*why = strerror(errno);
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

int symbol_api_source(struct symbol_api *s, const char *body, size_t len, int fd)
{
	json_t *req = json_loadb(body, len, 0, NULL);
	const char *file = json_string_value(json_object_get(req, "file"));
	const struct symbol_api_source *src = NULL;
	const char *why = NULL;
	struct json_writer w;
	char *text = NULL;
	size_t text_len = 0;
	int err;

	if (!file)
		why = "the request names no file";
	else if (!(src = named_source(s, file)))
		why = s->load_err ? "the profile cannot be read"
				  : "the profile names no such source file";
	else
		text = read_source(s, src, &text_len, &why);
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

/* The library a request names by its debugName and debugId (the profile's breakpadId). */
static const struct symbol_api_lib *named_lib(struct symbol_api *s, const char *debug_name,
					      const char *debug_id)
{
	if (!s->loaded)
		load(s);
	for (size_t i = 0; !s->load_err && i < s->nr_libs; i++)
		if (!strcmp(s->libs[i].debug_name, debug_name) &&
		    !strcasecmp(s->libs[i].breakpad_id, debug_id))
			return &s->libs[i];
	return NULL;
}

/* "0x1a2b" (as the app writes addresses and sizes) into *out; false when malformed. */
static bool parse_hex(json_t *v, uint64_t *out)
{
	const char *str = json_string_value(v);
	char *end;

	if (!str || strncmp(str, "0x", 2) || !str[2])
		return false;
	errno = 0;
	*out = strtoull(str + 2, &end, 16);
	return !errno && !*end;
}

struct code {
	uint8_t *bytes;
	size_t len;
	uint64_t rel; /* library-relative address of bytes[0] */
};

/* The bytes of the executable segment at `e` (bounded by it), or why not. */
static const char *read_segment(int fd, const struct elf_symtab *t, uint64_t vaddr, uint64_t size,
				struct code *out)
{
	for (size_t i = 0; i < t->segments.len; i++) {
		const struct elf_segment *seg = &t->segments.data[i];
		uint64_t avail;
		ssize_t n;

		if (!(seg->flags & PF_X) || vaddr < seg->vaddr || vaddr - seg->vaddr >= seg->filesz)
			continue;
		avail = seg->filesz - (vaddr - seg->vaddr);
		out->len = (size_t)(size < avail ? size : avail);
		out->bytes = malloc(out->len ? out->len : 1);
		if (!out->bytes)
			return strerror(ENOMEM);
		n = pread(fd, out->bytes, out->len, (off_t)(seg->offset + (vaddr - seg->vaddr)));
		if (n < 0)
			return strerror(errno);
		out->len = (size_t)n;
		return NULL;
	}
	return "the address is in no executable segment of the library";
}

/*
 * The code at library-relative `rel`: `size` bytes, or the whole function
 * its ELF symbol says starts there when `to_end` (the app's size is then a
 * lower bound), at most ASM_MAX_BYTES. NULL, or why not.
 */
static const char *read_code(const struct symbol_api *s, const struct symbol_api_lib *l,
			     uint64_t rel, uint64_t size, bool to_end, struct code *out)
{
	struct elf_symtab t = { 0 };
	const struct elf_sym *sym;
	const char *why = NULL;
	char build[34];
	int fd = open_visible(l->path, s->viewer);

	if (fd < 0)
		return fd == -EINVAL ? "the library is not a regular file" : why_not_visible(fd);
	if (elf_symtab_load_fd(&t, fd, NULL)) {
		close(fd);
		return "the library is not an ELF file (any more)";
	}
	/* Another build of the file since the recording would disassemble other code. */
	emit_breakpad_id(t.build_id[0] ? t.build_id : NULL, build);
	if (strcasecmp(build, l->breakpad_id)) {
		why = "the file on disk is another build than the one recorded";
		goto out;
	}
	sym = elf_symtab_lookup(&t, t.base + rel);
	if (to_end && sym && sym->start == t.base + rel && sym->size > size)
		size = sym->size;
	if (size > ASM_MAX_BYTES)
		size = ASM_MAX_BYTES;
	out->rel = rel;
	why = read_segment(fd, &t, t.base + rel, size, out);
out:
	elf_symtab_free(&t);
	close(fd);
	return why;
}

/* Capstone's names for the architectures libs[].arch spells. */
static bool capstone_arch(const char *arch, cs_arch *a, cs_mode *m)
{
	if (!strcmp(arch, "x86_64")) {
		*a = CS_ARCH_X86;
		*m = CS_MODE_64;
	} else if (!strcmp(arch, "x86")) {
		*a = CS_ARCH_X86;
		*m = CS_MODE_32;
	} else if (!strcmp(arch, "aarch64")) {
		*a = CS_ARCH_ARM64;
		*m = CS_MODE_ARM;
	} else {
		return false;
	}
	return true;
}

static void write_instructions(struct json_writer *w, const struct symbol_api_lib *l,
			       const struct code *c, const cs_insn *insn, size_t count)
{
	char hex[24];

	snprintf(hex, sizeof(hex), "0x%" PRIx64, c->rel);
	jw_kv_string(w, "startAddress", hex);
	snprintf(hex, sizeof(hex), "0x%zx", c->len);
	jw_kv_string(w, "size", hex);
	jw_kv_string(w, "arch", l->arch);
	jw_key_array(w, "syntax");
	jw_string(w, "Intel");
	jw_end_array(w);
	jw_key_array(w, "instructions");
	for (size_t i = 0; i < count; i++) {
		char text[sizeof(insn[i].mnemonic) + sizeof(insn[i].op_str) + 1];

		snprintf(text, sizeof(text), "%s%s%s", insn[i].mnemonic,
			 insn[i].op_str[0] ? " " : "", insn[i].op_str);
		jw_begin_array(w);
		jw_uint(w, insn[i].address - c->rel);
		jw_string(w, text);
		jw_end_array(w);
	}
	jw_end_array(w);
}

int symbol_api_asm(struct symbol_api *s, const char *body, size_t len, int fd)
{
	json_t *req = json_loadb(body, len, 0, NULL);
	const char *name = json_string_value(json_object_get(req, "debugName"));
	const char *id = json_string_value(json_object_get(req, "debugId"));
	const struct symbol_api_lib *l = NULL;
	struct code code = { 0 };
	const char *why = NULL;
	cs_insn *insn = NULL;
	struct json_writer w;
	uint64_t start, size;
	size_t count = 0;
	csh cs = 0;
	cs_arch arch;
	cs_mode mode;
	int err;

	if (!name || !id || !parse_hex(json_object_get(req, "startAddress"), &start) ||
	    !parse_hex(json_object_get(req, "size"), &size))
		why = "the request needs debugName, debugId, startAddress and size";
	else if (!(l = named_lib(s, name, id)))
		why = s->load_err ? "the profile cannot be read"
				  : "the profile names no such library";
	else if (!capstone_arch(l->arch, &arch, &mode))
		why = "bpfprof cannot disassemble this architecture";
	else
		why = read_code(s, l, start, size,
				json_is_true(json_object_get(req, "continueUntilFunctionEnd")),
				&code);
	if (!why && cs_open(arch, mode, &cs) != CS_ERR_OK)
		why = "the disassembler cannot start";
	if (!why)
		count = cs_disasm(cs, code.bytes, code.len, code.rel, 0, &insn);
	err = jw_open(&w, fd, false);
	if (!err) {
		jw_begin_object(&w);
		if (why) {
			char msg[512];

			snprintf(msg, sizeof(msg), "%s: %s", name ? name : "?", why);
			jw_kv_string(&w, "error", msg);
		} else {
			write_instructions(&w, l, &code, insn, count);
		}
		jw_end_object(&w);
		err = jw_close(&w);
	}
	if (insn)
		cs_free(insn, count);
	if (cs)
		cs_close(&cs);
	free(code.bytes);
	json_decref(req);
	return err;
}
