/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The unwind tables of every executable file the recording has met, laid
 * out as the BPF unwinder reads them (bpf/bpfprof_abi.h): one array of
 * rows, a run per file, and an index from a file (device, inode) to its
 * run. Files are added once, whichever process maps them; the array has a
 * fixed capacity (the BPF map's), and a file that does not fit is refused
 * and counted, never half-loaded.
 */
#ifndef BPFPROF_UNWIND_TABLE_STORE_H
#define BPFPROF_UNWIND_TABLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/bpfprof_abi.h"
#include "util/hashmap.h"
#include "util/vec.h"

enum unwind_file_status {
	UNWIND_FILE_LOADED = 0,	 /* its rows are in the store */
	UNWIND_FILE_NO_CFI = 1,	 /* no .eh_frame_hdr, or no FDE in it */
	UNWIND_FILE_FULL = 2,	 /* its rows did not fit in the capacity */
	UNWIND_FILE_INVALID = 3, /* not an ELF file, or CFI or segments the unwinder cannot use */
};

struct unwind_store_file {
	struct unwind_file_key key;
	struct unwind_file_info info; /* LOADED only */
	uint8_t status;		      /* enum unwind_file_status */
};

struct unwind_store_stats {
	size_t files[4];   /* by status */
	uint64_t build_ns; /* CPU time spent building tables */
};

struct unwind_store {
	/* In the caller's buffer when one was given (the BPF array, mapped), never moved. */
	VEC(struct unwind_row) rows;
	size_t max_rows;
	bool rows_external;
	VEC(struct unwind_store_file) files;
	struct hmap index; /* (dev, ino) -> index in files */
	size_t vdso_size;  /* of our [vdso] mapping, once its table was added */
	struct unwind_store_stats stats;
};

/*
 * At most max_rows rows, written straight into `rows` (room for max_rows,
 * the caller's) or, when NULL, into memory of the store's own.
 */
void unwind_store_init(struct unwind_store *s, struct unwind_row *rows, size_t max_rows);
void unwind_store_free(struct unwind_store *s);

/*
 * Forget every file and row (the rows' buffer stays): to build the store
 * again from the files still in use. The statistics keep counting.
 */
void unwind_store_reset(struct unwind_store *s);

/* The kernel's dev_t of a device that /proc/PID/maps writes as "major:minor". */
uint64_t unwind_kernel_dev(unsigned int major, unsigned int minor);

/*
 * Build and add the table of the file open at `fd`, known to the kernel as
 * (dev, ino): the device and inode /proc/PID/maps writes (the superblock's
 * device, which on btrfs is not the st_dev of stat(2)). Returns the file's
 * entry (whatever its status), NULL with errno ENOMEM. A file already met
 * is not read again.
 */
const struct unwind_store_file *unwind_store_add(struct unwind_store *s, uint64_t dev, uint64_t ino,
						 int fd);

struct map_entry;

/*
 * The file that one line of /proc/PID/maps (`e`, of process `pid`) maps
 * executable, added through /proc/PID/map_files (whatever the process's
 * mount namespace; never a FIFO or a device). Its entry; NULL when the line
 * maps no executable file or the file cannot be opened (errno 0), or with
 * errno ENOMEM.
 */
const struct unwind_store_file *unwind_store_add_mapping(struct unwind_store *s, uint32_t pid,
							 const struct map_entry *e);

/*
 * The vDSO has no file: its key is (0, UNWIND_VDSO_INO), and its table is
 * built from our own [vdso], which every process of our architecture maps
 * (a 32-bit process maps another one, of another size: callers compare).
 */
#define UNWIND_VDSO_INO (~0ull)

/*
 * The vDSO's entry, added from our own image on the first call; *size is
 * the size of our [vdso] mapping. NULL when there is none (errno 0) or with
 * errno ENOMEM.
 */
const struct unwind_store_file *unwind_store_add_vdso(struct unwind_store *s, size_t *size);

/* The entry of (dev, ino), or NULL when the file was never added. */
const struct unwind_store_file *unwind_store_find(const struct unwind_store *s, uint64_t dev,
						  uint64_t ino);

#endif
