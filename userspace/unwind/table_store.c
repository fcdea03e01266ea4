// SPDX-License-Identifier: BSD-2-Clause
/*
 * The unwind tables of the files met so far (see table_store.h): each file
 * built once with cfi_table_build, its rows packed into the BPF layout.
 */
#include "table_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cfi_table.h"
#include "go_table.h"
#include "../symbols/proc_maps.h"
#include "../symbols/vdso.h"

void unwind_store_init(struct unwind_store *s, struct unwind_row *rows, size_t max_rows)
{
	memset(s, 0, sizeof(*s));
	s->max_rows = max_rows;
	if (rows) {
		/* Full capacity from the start: vec_reserve never reallocates it. */
		s->rows.data = rows;
		s->rows.cap = max_rows;
		s->rows_external = true;
	}
}

void unwind_store_free(struct unwind_store *s)
{
	if (!s->rows_external)
		vec_free(&s->rows);
	vec_free(&s->files);
	hmap_free(&s->index);
	memset(s, 0, sizeof(*s));
}

void unwind_store_reset(struct unwind_store *s)
{
	s->rows.len = 0;
	s->files.len = 0;
	hmap_free(&s->index);
	memset(&s->index, 0, sizeof(s->index));
	s->vdso_size = 0;
}

uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor)
{
	return ((uint64_t)major << 20) | minor; /* MKDEV of include/linux/kdev_t.h */
}

static struct hmap_key file_key(uint64_t dev, uint64_t ino)
{
	return (struct hmap_key){ dev, ino };
}

const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino)
{
	uint32_t idx;

	return hmap_get(&s->index, file_key(dev, ino), &idx) ? &s->files.data[idx] : NULL;
}

/*
 * ELF vaddr - file offset of the executable segments, which the unwinder
 * adds to a PC's offset in the file. -EINVAL when there is none, or when
 * two disagree (one bias per file is all the BPF side keeps).
 */
static int exec_bias(Elf *elf, int64_t *bias)
{
	size_t n;
	bool found = false;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		int64_t b;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		b = (int64_t)(ph.p_vaddr - ph.p_offset);
		if (found && b != *bias)
			return -EINVAL;
		*bias = b;
		found = true;
	}
	return found ? 0 : -EINVAL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Build the table of `elf` (ended here, NULL: not an ELF file) and pack it
 * after the rows already stored; its status, or -ENOMEM.
 */
static int load_rows(struct unwind_store *s, Elf *elf, struct unwind_file_info *info)
{
	struct cfi_table t, go;
	uint64_t go_lo, go_hi;
	int64_t bias = 0;
	int status, err, go_err;

	if (!elf || elf_kind(elf) != ELF_K_ELF || exec_bias(elf, &bias)) {
		if (elf)
			elf_end(elf);
		return UNWIND_FILE_INVALID;
	}
	err = cfi_table_build(elf, &t);
	/* Go code has no CFI: its rows come from .gopclntab, over any C code's CFI (cgo). */
	go_err = go_table_build(elf, &go, &go_lo, &go_hi, NULL);
	elf_end(elf);
	if (err == -ENOMEM || go_err == -ENOMEM) {
		if (!err)
			cfi_table_free(&t);
		if (!go_err)
			cfi_table_free(&go);
		return -ENOMEM;
	}
	if (!go_err) {
		if (err)
			memset(&t, 0, sizeof(t)); /* Go's rows alone */
		err = go_table_overlay(&t, &go, go_lo, go_hi);
		cfi_table_free(&go);
		if (err) {
			cfi_table_free(&t);
			return err;
		}
	}
	if (err == -ENOENT || (!err && !t.len))
		status = UNWIND_FILE_NO_CFI;
	else if (err)
		status = UNWIND_FILE_INVALID;
	else if (t.len > s->max_rows - s->rows.len || t.len > UINT32_MAX)
		status = UNWIND_FILE_FULL;
	else if (vec_reserve(&s->rows, t.len))
		status = -ENOMEM;
	else
		status = UNWIND_FILE_LOADED;
	if (status == UNWIND_FILE_LOADED) {
		info->first_row = (uint32_t)s->rows.len;
		info->nrows = (uint32_t)t.len;
		info->bias = bias;
		for (size_t i = 0; i < t.len; i++) {
			const struct cfi_row *r = &t.rows[i];

			s->rows.data[s->rows.len++] = (struct unwind_row){
				.pc = r->pc,
				.cfa_offset = r->cfa_offset,
				.fp_offset = r->fp_offset,
				.rules = UNWIND_RULES(r->cfa, r->fp, r->plt_threshold),
			};
		}
	}
	if (!err)
		cfi_table_free(&t);
	return status;
}

/* Add the file (dev, ino) whose ELF is `elf` (ended here); see unwind_store_add. */
static const struct unwind_store_file *add_elf(struct unwind_store *s, uint64_t dev, uint64_t ino,
					       Elf *elf)
{
	struct unwind_store_file f = { .key = { dev, ino } };
	uint64_t t0;
	int status;

	t0 = cpu_ns();
	status = load_rows(s, elf, &f.info);
	s->stats.build_ns += cpu_ns() - t0;
	if (status < 0) {
		errno = -status;
		return NULL;
	}
	f.status = (uint8_t)status;
	if (vec_push(&s->files, f) ||
	    hmap_put(&s->index, file_key(dev, ino), (uint32_t)(s->files.len - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	s->stats.files[f.status]++;
	return &vec_last(&s->files);
}

const struct unwind_store_file *unwind_store_add(struct unwind_store *s, uint64_t dev, uint64_t ino,
						 int fd)
{
	const struct unwind_store_file *known = unwind_store_find(s, dev, ino);

	if (known)
		return known;
	return add_elf(s, dev, ino, elf_begin(fd, ELF_C_READ_MMAP, NULL));
}

const struct unwind_store_file *unwind_store_add_vdso(struct unwind_store *s, size_t *size)
{
	const struct unwind_store_file *f = unwind_store_find(s, 0, UNWIND_VDSO_INO);
	void *image;
	int err;

	*size = 0;
	if (f) {
		*size = s->vdso_size;
		return f;
	}
	err = vdso_copy(&image, size);
	if (err) {
		errno = err == -ENOMEM ? ENOMEM : 0;
		return NULL;
	}
	f = add_elf(s, 0, UNWIND_VDSO_INO, elf_memory(image, *size));
	free(image);
	if (f)
		s->vdso_size = *size;
	return f;
}

const struct unwind_store_file *unwind_store_add_mapping(struct unwind_store *s, uint32_t pid,
							 const struct map_entry *e)
{
	uint64_t dev = unwind_kernel_dev(major(e->dev), minor(e->dev));
	const struct unwind_store_file *f;
	char link[96];
	struct stat st;
	int fd;

	errno = 0;
	if (!e->executable || !e->inode)
		return NULL;
	if ((f = unwind_store_find(s, dev, e->inode)))
		return f;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, e->start,
		 e->end);
	fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		errno = 0;
		return NULL;
	}
	f = !fstat(fd, &st) && S_ISREG(st.st_mode) ? unwind_store_add(s, dev, e->inode, fd) : NULL;
	if (!f && errno != ENOMEM)
		errno = 0;
	close(fd);
	return f;
}
