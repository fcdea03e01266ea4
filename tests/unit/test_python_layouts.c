// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every CPython's frame layout (lang/python_layout.c) against offsetof()
 * in that version's own headers (python_layout_probe.c, compiled for each
 * version python_layouts.cmake found installed), and python_info_read on
 * that version's binary: its version, its roots (2.7 and 3.6's static
 * ones, found by decoding two functions, checked against the binary's
 * own .symtab where it has one) and, for 3.13, the layout its
 * _Py_DebugOffsets give. Prints which versions it checked and names each
 * one it could not.
 */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lang/python_layout.h"
#include "python_layout_probe.h"
#include "test.h"

struct probe_entry {
	const char *version;
	void (*fn)(struct python_probe *p);
	const char *prefix;
};

#include "python_probes.h"

static void frames_match(const struct py_layout *f, const struct python_probe *p)
{
	CHECK_EQ_INT(f->interp_tstate_head, p->interp_tstate_head);
	CHECK_EQ_INT(f->tstate_next, p->tstate_next);
	CHECK_EQ_INT(f->tstate_thread_id, p->tstate_thread_id);
	CHECK_EQ_INT(f->tstate_frame, p->tstate_frame);
	CHECK_EQ_INT(f->frame_code, p->frame_code);
	CHECK_EQ_INT(f->frame_previous, p->frame_previous);
	CHECK_EQ_INT(f->frame_instr, p->frame_instr);
	if (p->frame_instr_size == 4) {
		CHECK_EQ_INT(f->entry_kind, PY_ENTRY_EVERY);
		CHECK_EQ_INT(f->cframe_frame, PY_NO_CFRAME);
	} else {
		CHECK_EQ_INT(f->cframe_frame,
			     p->cframe_frame == PROBE_NONE ? PY_NO_CFRAME : p->cframe_frame);
		CHECK_EQ_INT(f->frame_entry, p->frame_entry);
		CHECK_EQ_INT(f->entry_kind,
			     p->version_hex >= 0x030c0000 ? PY_ENTRY_OWNER : PY_ENTRY_IS_ENTRY);
	}
}

/* A static variable's address from the file's .symtab (0: stripped, or none). */
static uint64_t symtab_value(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) &&
			    (n = elf_strptr(elf, sh.sh_link, s.st_name)) && !strcmp(n, name))
				return s.st_value;
		}
	}
	return 0;
}

/* The interpreter binary of a prefix: its libpython, else its python executable. */
static Elf *open_binary(const char *prefix, const char *v, int *fd, char path[PATH_MAX])
{
	static const char *const forms[] = { "%s/lib/libpython%s.so.1.0",
					     "%s/lib/libpython%sm.so.1.0", "%s/bin/python%s" };

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(path, PATH_MAX, forms[i], prefix, v);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd >= 0)
			return elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	}
	return NULL;
}

static void binary_matches(const struct probe_entry *e, const struct python_probe *p,
			   const struct py_layout *table)
{
	char path[PATH_MAX];
	struct python_info info;
	int fd = -1;
	Elf *elf = open_binary(e->prefix, e->version, &fd, path);
	uint64_t sym;

	CHECK(elf != NULL);
	if (!elf)
		goto out;
	CHECK_EQ_INT(python_info_read(elf, &info), 1);
	CHECK_EQ_INT(info.version_hex >> 16, p->version_hex >> 16);
	CHECK(info.eval_start && info.eval_size > 1000 && info.code_type && info.interp_head);
	/* What the walk is given: the table's, or (3.13) what the binary says of itself. */
	frames_match(&info.frames, p);
	CHECK(!memcmp(&info.frames, table, sizeof(*table)));
	if (p->runtime_interp_head != PROBE_NONE) {
		CHECK_EQ_INT(info.interp_head - info.runtime, p->runtime_interp_head);
		CHECK_EQ_INT(info.tss_key - info.runtime, p->runtime_tss_key);
	} else {
		/* 2.7, 3.6: decoded from code; the unstripped build names them. */
		if ((sym = symtab_value(elf, "interp_head")))
			CHECK_EQ_INT(info.interp_head, sym);
		if ((sym = symtab_value(elf, "autoTLSkey")))
			CHECK_EQ_INT(info.tss_key, p->version_hex >> 16 == 0x0306 ? sym : 0);
		CHECK(p->version_hex >> 16 != 0x0306 || info.tss_key);
	}
	printf("  %s: %s\n", e->version, path);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static void every_installed_version(void)
{
	char missing[256] = "", checked[256] = "";
	const char *list = PYTHON_LAYOUT_VERSIONS;

	for (const struct probe_entry *e = probes; e->version; e++) {
		struct python_probe p = { 0 };
		struct python_runtime_roots roots;
		const struct python_code_layout *code;
		struct py_layout f;

		e->fn(&p);
		CHECK(python_layout_for(p.version_hex, &f, &code));
		frames_match(&f, &p);
		if (p.runtime_interp_head != PROBE_NONE) {
			CHECK(python_runtime_roots_for(p.version_hex, &roots));
			CHECK_EQ_INT(roots.interp_head, p.runtime_interp_head);
			CHECK_EQ_INT(roots.tss_key, p.runtime_tss_key);
		}
		binary_matches(e, &p, &f);
		snprintf(checked + strlen(checked), sizeof(checked) - strlen(checked), " %s%s",
			 e->version, strcmp(e->prefix, "/usr") ? "" : "(debian)");
	}
	/* Each version expected but not found installed, by name. */
	while (*list) {
		size_t n = strcspn(list, ",");
		bool found = false;

		for (const struct probe_entry *e = probes; e->version; e++)
			found |= strlen(e->version) == n && !strncmp(e->version, list, n);
		if (!found)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 " %.*s", (int)n, list);
		list += n + (list[n] == ',');
	}
	printf("checked:%s\n", checked);
	if (missing[0])
		printf("NOT checked (no headers under ~/.pyenv/versions):%s\n", missing);
}

/* A 3.13 _Py_DebugOffsets with the given frame offsets (sizes sane). */
static void fake_debug(uint8_t *b, size_t len)
{
	uint64_t w[34] = { 0 };

	memset(b, 0, len);
	memcpy(w, "xdebugpy", 8);
	w[1] = 0x030d00f0;
	w[3] = 100000, w[5] = 632;				  /* runtime */
	w[6] = 8000, w[9] = 7344;				  /* interp: threads_head */
	w[19] = 300, w[21] = 8, w[23] = 72, w[24] = 152;	  /* tstate */
	w[28] = 80, w[29] = 8, w[30] = 0, w[31] = 56, w[33] = 70; /* frame */
	memcpy(b, w, sizeof(w));
}

static void debug_offsets_checked(void)
{
	uint8_t b[512];
	struct py_layout f;
	uint64_t head, v;

	fake_debug(b, sizeof(b));
	CHECK_EQ_INT(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head), 0);
	CHECK_EQ_INT(head, 632);
	CHECK_EQ_INT(f.interp_tstate_head, 7344);
	CHECK_EQ_INT(f.frame_entry, 70);
	/* Too short, wrong cookie, another version. */
	CHECK(python_debug_offsets_parse(b, 200, 0x030d00f0, &f, &head) < 0);
	b[0] = 'y';
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head) < 0);
	fake_debug(b, sizeof(b));
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030c00f0, &f, &head) < 0);
	/* A field past its structure, a frame field past the walk's window or unaligned. */
	v = 400;
	memcpy(b + 24 * 8, &v, 8); /* tstate.thread_id past tstate.size (300) */
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head) < 0);
	fake_debug(b, sizeof(b));
	v = 8192;
	memcpy(b + 28 * 8, &v, 8); /* frame size beyond bounds */
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head) < 0);
	fake_debug(b, sizeof(b));
	v = 60;
	memcpy(b + 31 * 8, &v, 8); /* instr_ptr unaligned */
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head) < 0);
	fake_debug(b, sizeof(b));
	v = UINT64_MAX;
	memcpy(b + 21 * 8, &v, 8);
	CHECK(python_debug_offsets_parse(b, sizeof(b), 0x030d00f0, &f, &head) < 0);
}

int main(void)
{
	elf_version(EV_CURRENT);
	RUN(every_installed_version);
	RUN(debug_offsets_checked);
	return test_summary();
}
