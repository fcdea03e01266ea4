// SPDX-License-Identifier: BSD-2-Clause
/*
 * A compact ELF image of a file's debug sections (dwarf_image.h).
 *
 * The file's headers are read through libelf (ELF_C_READ: pread of the
 * section headers and the section name table, nothing else); each section
 * kept is checked against the file's size at open and against the budget
 * before a byte of it is read, then read with pread in bounded chunks
 * straight into the image. A file cut short under us is a short read: no
 * DWARF, never a fault. A file rewritten under us gives an image of
 * garbage, which libdw reads as it reads any malformed DWARF (tests/fuzz).
 *
 * The image has the file's class, byte order, type and machine; its
 * sections keep their type, flags, alignment and contents (compressed ones
 * stay compressed: libdw inflates them), in the file's order, at new
 * offsets; section 0 is the null section and the last one the new name
 * table. No program headers: libdw does not read them.
 */
#include "dwarf_image.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/elf_open.h"
#include "../util/vec.h"

/* pread at most this much at a time, so that no single call blocks on a huge request. */
#define READ_CHUNK	(4u << 20)
/* Section contents start at this alignment: compression headers need 8. */
#define DATA_ALIGN	16
/* Longer section names are none that libdw reads. */
#define NAME_MAX_BYTES	64
/* Below SHN_LORESERVE, so that the image needs no extended section numbering. */
#define SECTIONS_MAX	0xfe00u
/* No budget is larger (a caller's may be UINT64_MAX): every sum of the layout stays below 2^64. */
#define IMAGE_MAX_BYTES (1ull << 62)

/* A section of the file that goes into the image. */
struct kept {
	GElf_Shdr sh;	  /* the file's header; sh_offset becomes the image's */
	const char *name; /* in the file's name table, valid while it is open */
	uint64_t file_off;
};

typedef VEC(struct kept) kept_t;

/* The sections libdw reads (dwarf_begin_elf's list, by prefix) and the dwz link attach_alt reads.
 */
static bool wanted(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8) ||
	       !strcmp(name, ".gnu_debugaltlink");
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * *at += n, then aligned to `align`, if that stays within `max` (at most
 * IMAGE_MAX_BYTES: the sum and its alignment cannot wrap); else false and
 * *at as it was.
 */
static bool advance_within(uint64_t *at, uint64_t n, uint64_t align, uint64_t max)
{
	uint64_t end;

	if (*at > max || n > max - *at)
		return false;
	end = align_up(*at + n, align);
	if (end > max)
		return false;
	*at = end;
	return true;
}

/*
 * The sections of `src` to keep, checked against the file's `size`, their
 * contents' total in *total, within `limit`: -EFBIG as soon as the next
 * section would take it past, so that no sum wraps (sections may overlap,
 * each up to the file's size).
 */
static int list_sections(Elf *src, uint64_t size, uint64_t limit, kept_t *out, uint64_t *total)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*total = 0;
	if (elf_getshdrstrndx(src, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(src, scn))) {
		struct kept k = { 0 };

		if (!gelf_getshdr(scn, &k.sh))
			return -ENOEXEC;
		if (k.sh.sh_type == SHT_NOBITS || !k.sh.sh_size)
			continue;
		k.name = elf_strptr(src, shstrndx, k.sh.sh_name);
		/* Short, as libdw's are: every name kept is measured again when laid out. */
		if (!k.name || strnlen(k.name, NAME_MAX_BYTES) == NAME_MAX_BYTES || !wanted(k.name))
			continue;
		/* libelf checks this too, but only when it reads the section; we read it ourselves.
		 */
		if (k.sh.sh_offset > size || k.sh.sh_size > size - k.sh.sh_offset)
			return -ENOEXEC;
		if (out->len >= SECTIONS_MAX)
			return -EFBIG;
		if (k.sh.sh_size > limit - *total)
			return -EFBIG; /* said before a byte of it is read */
		k.file_off = k.sh.sh_offset;
		*total += k.sh.sh_size;
		if (vec_push(out, k))
			return -ENOMEM;
	}
	return out->len ? 0 : -ENODATA;
}

/* pread `len` bytes at `off` into `dst`, in chunks; -EIO if the file ends first. */
static int read_exact(int fd, void *dst, uint64_t len, uint64_t off)
{
	unsigned char *p = dst;

	while (len) {
		size_t want = len < READ_CHUNK ? (size_t)len : READ_CHUNK;
		ssize_t n = pread(fd, p, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* cut short since we checked its size */
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* An item of `type` at `src` (the class's memory form) to `dst`, in the file's form. */
static int put(bool is64, unsigned encode, Elf_Type type, void *dst, void *src, size_t size)
{
	Elf_Data from = { .d_buf = src, .d_type = type, .d_size = size, .d_version = EV_CURRENT };
	Elf_Data to = { .d_buf = dst, .d_type = type, .d_size = size, .d_version = EV_CURRENT };

	Elf_Data *done =
		is64 ? elf64_xlatetof(&to, &from, encode) : elf32_xlatetof(&to, &from, encode);

	return done ? 0 : -ENOEXEC;
}

/*
 * Write the ELF header and the section headers (`nsh` of them, at `shoff`)
 * into `buf` in the file's class and byte order. In a 32-bit file every
 * value fits: it was read from a 32-bit file, or is an offset in an image
 * below 4 GiB.
 */
static int write_headers(unsigned char *buf, const GElf_Ehdr *eh, const GElf_Shdr *sh, size_t nsh,
			 uint64_t shoff)
{
	bool is64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
	unsigned encode = eh->e_ident[EI_DATA];
	int err;

	if (is64) {
		Elf64_Ehdr e = *eh;

		err = put(true, encode, ELF_T_EHDR, buf, &e, sizeof(e));
		for (size_t i = 0; !err && i < nsh; i++) {
			Elf64_Shdr s = sh[i];

			err = put(true, encode, ELF_T_SHDR, buf + shoff + i * sizeof(s), &s,
				  sizeof(s));
		}
		return err;
	}
	Elf32_Ehdr e = {
		.e_type = eh->e_type,
		.e_machine = eh->e_machine,
		.e_version = eh->e_version,
		.e_entry = (Elf32_Addr)eh->e_entry,
		.e_shoff = (Elf32_Off)eh->e_shoff,
		.e_flags = eh->e_flags,
		.e_ehsize = eh->e_ehsize,
		.e_shentsize = eh->e_shentsize,
		.e_shnum = eh->e_shnum,
		.e_shstrndx = eh->e_shstrndx,
	};

	memcpy(e.e_ident, eh->e_ident, EI_NIDENT);
	err = put(false, encode, ELF_T_EHDR, buf, &e, sizeof(e));
	for (size_t i = 0; !err && i < nsh; i++) {
		Elf32_Shdr s = {
			.sh_name = sh[i].sh_name,
			.sh_type = sh[i].sh_type,
			.sh_flags = (Elf32_Word)sh[i].sh_flags,
			.sh_offset = (Elf32_Off)sh[i].sh_offset,
			.sh_size = (Elf32_Word)sh[i].sh_size,
			.sh_addralign = (Elf32_Word)sh[i].sh_addralign,
			.sh_entsize = (Elf32_Word)sh[i].sh_entsize,
		};

		err = put(false, encode, ELF_T_SHDR, buf + shoff + i * sizeof(s), &s, sizeof(s));
	}
	return err;
}

/*
 * Lay out and fill the image of `kept` from `fd`:
 * header, contents, names, section headers. Its size must stay within
 * `max_bytes` (-EDQUOT past it), within `limit` (-EFBIG) before that is
 * known: no sum of the layout wraps.
 */
static int build(struct dwarf_image *img, int fd, Elf *src, const kept_t *kept, uint64_t max_bytes,
		 uint64_t limit)
{
	GElf_Ehdr eh;
	bool is64;
	size_t nsh = kept->len + 2; /* null section, kept ones, name table */
	size_t shsize, ehsize, names = 1 + sizeof(".shstrtab");
	GElf_Shdr *sh = NULL;
	uint64_t at, shoff, bytes;
	unsigned char *buf = NULL;
	int err;

	if (!gelf_getehdr(src, &eh))
		return -ENOEXEC;
	is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	shsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	/* The exact layout, each step checked against the budget: none can wrap. */
	at = align_up(ehsize, DATA_ALIGN);
	for (size_t i = 0; i < kept->len; i++) {
		names += strlen(kept->data[i].name) + 1;
		if (!advance_within(&at, kept->data[i].sh.sh_size, DATA_ALIGN, limit))
			return -EFBIG;
	}
	shoff = at;
	if (!advance_within(&shoff, names, 8, limit))
		return -EFBIG;
	bytes = shoff;
	if (!advance_within(&bytes, (uint64_t)nsh * shsize, 1, limit) ||
	    (!is64 && bytes > UINT32_MAX))
		return -EFBIG;
	if (bytes > max_bytes)
		return -EDQUOT; /* said before a byte of it is read */
	sh = calloc(nsh, sizeof(*sh));
	buf = calloc(1, bytes);
	if (!sh || !buf) {
		err = -ENOMEM;
		goto out;
	}
	at = align_up(ehsize, DATA_ALIGN);
	for (size_t i = 0; i < kept->len; i++) {
		const struct kept *k = &kept->data[i];

		sh[i + 1] = k->sh;
		sh[i + 1].sh_offset = at;
		sh[i + 1].sh_addr = 0;
		sh[i + 1].sh_link = 0;
		sh[i + 1].sh_info = 0;
		err = read_exact(fd, buf + at, k->sh.sh_size, k->file_off);
		if (err)
			goto out;
		at = align_up(at + k->sh.sh_size, DATA_ALIGN);
	}
	/* The name table: "", each kept name, ".shstrtab". */
	sh[nsh - 1] = (GElf_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = at, .sh_addralign = 1 };
	{
		size_t pos = at + 1;

		for (size_t i = 0; i < kept->len; i++) {
			size_t len = strlen(kept->data[i].name) + 1;

			sh[i + 1].sh_name = (GElf_Word)(pos - at);
			memcpy(buf + pos, kept->data[i].name, len);
			pos += len;
		}
		sh[nsh - 1].sh_name = (GElf_Word)(pos - at);
		memcpy(buf + pos, ".shstrtab", sizeof(".shstrtab"));
		pos += sizeof(".shstrtab");
		sh[nsh - 1].sh_size = pos - at;
	}
	eh.e_phoff = 0;
	eh.e_phnum = 0;
	eh.e_phentsize = 0;
	eh.e_shoff = shoff;
	eh.e_ehsize = (GElf_Half)ehsize;
	eh.e_shentsize = (GElf_Half)shsize;
	eh.e_shnum = (GElf_Half)nsh;
	eh.e_shstrndx = (GElf_Half)(nsh - 1);
	err = write_headers(buf, &eh, sh, nsh, shoff);
	if (err)
		goto out;
	img->buf = buf;
	img->bytes = bytes;
	buf = NULL;
out:
	free(sh);
	free(buf);
	return err;
}

/* Bytes libdw will allocate to decompress the debug sections of `elf` (ELF and GNU compression). */
static size_t inflated_size(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const char *name;
		Elf_Data *raw;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strncmp(name, ".debug_", 7) && (sh.sh_flags & SHF_COMPRESSED)) {
			/* Saturating: a hostile ch_size must not wrap the sum below the budget. */
			if (gelf_getchdr(scn, &ch))
				total += ch.ch_size > SIZE_MAX - total ? SIZE_MAX - total
								       : (size_t)ch.ch_size;
		} else if (!strncmp(name, ".zdebug_", 8) && (raw = elf_rawdata(scn, NULL)) &&
			   raw->d_size >= 12 && !memcmp(raw->d_buf, "ZLIB", 4)) {
			/* "ZLIB", then the inflated size, 64-bit big-endian. */
			const unsigned char *p = (const unsigned char *)raw->d_buf + 4;
			uint64_t n = 0;

			for (int i = 0; i < 8; i++)
				n = n << 8 | p[i];
			total += n > SIZE_MAX - total ? SIZE_MAX - total : (size_t)n;
		}
	}
	return total;
}

static int read_image(struct dwarf_image *img, int fd, const struct stat *st, uint64_t max_bytes,
		      uint64_t limit)
{
	kept_t kept = { 0 };
	uint64_t total;
	Elf *src;
	int err;

	/* ELF_C_READ: nothing read but what is asked for; capped on the size checked below. */
	src = elf_open_fd_stat(fd, st);
	if (!src)
		return errno == EFBIG ? -EFBIG : -ENOEXEC;
	if (elf_kind(src) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	err = list_sections(src, (uint64_t)st->st_size, limit, &kept, &total);
	if (!err)
		err = build(img, fd, src, &kept, max_bytes, limit);
out:
	vec_free(&kept);
	elf_end(src);
	return err;
}

int dwarf_image_open(struct dwarf_image *img, int fd, uint64_t max_bytes)
{
	return dwarf_image_open_part(img, fd, max_bytes, DWARF_IMAGE_MAX_BYTES);
}

int dwarf_image_open_part(struct dwarf_image *img, int fd, uint64_t max_bytes, uint64_t whole)
{
	/* What any budget may grant; the size past which the file is refused for itself. */
	uint64_t limit = whole > max_bytes ? whole : max_bytes;
	struct stat st;
	int err;

	memset(img, 0, sizeof(*img));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ELIBBAD;
	if (limit > IMAGE_MAX_BYTES)
		limit = IMAGE_MAX_BYTES;
	if (max_bytes > limit)
		max_bytes = limit;
	/* The one fstat: the sizes checked are the sizes used (elf_open_fd_stat). */
	if (fstat(fd, &st))
		return -errno;
	if (elf_fd_mappable(fd, &st)) {
		img->elf = elf_open_fd_stat(fd, &st);
		if (!img->elf || elf_kind(img->elf) != ELF_K_ELF) {
			dwarf_image_close(img);
			return -ENOEXEC;
		}
		img->inflated = inflated_size(img->elf);
		return 0;
	}
	err = read_image(img, fd, &st, max_bytes, limit);
	if (!err) {
		img->elf = elf_memory(img->buf, img->bytes);
		if (!img->elf || elf_kind(img->elf) != ELF_K_ELF)
			err = -ENOEXEC;
	}
	if (!err) {
		img->inflated = inflated_size(img->elf);
		/* A small file that inflates past the budget, or past any. */
		if (img->inflated > limit - img->bytes)
			err = -EFBIG;
		else if (img->inflated > max_bytes - img->bytes)
			err = -EDQUOT;
	}
	if (err)
		dwarf_image_close(img);
	return err;
}

void dwarf_image_close(struct dwarf_image *img)
{
	if (img->elf)
		elf_end(img->elf);
	free(img->buf);
	memset(img, 0, sizeof(*img));
}
