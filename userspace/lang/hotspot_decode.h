/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The compressed streams a JVM keeps beside its code, decoded from bytes
 * read out of it: a method's line table (bytecode index to source line),
 * an nmethod's PcDescs (code offset to debug info) and its scopes (the
 * methods C2 inlined at a code offset, innermost first), and class and
 * method names as Java users read them.
 *
 * The encodings are HotSpot's (src/hotspot/share/code/compressedStream,
 * utilities/unsigned5.hpp, oops/method.cpp, code/scopeDesc.cpp): numbers
 * in UNSIGNED5, a byte-oriented variable length code of up to 5 bytes, of
 * which JDK 20 and later exclude the byte 0 (x = 1) so that streams can end
 * at one. Every decoder takes a buffer and its length and never reads past
 * it; a JVM's memory is its owner's to shape, so a stream that does not
 * end, loops or overflows is cut, never followed.
 */
#ifndef BPFPROF_LANG_HOTSPOT_DECODE_H
#define BPFPROF_LANG_HOTSPOT_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes excluded from UNSIGNED5 by a JDK of release `major`. */
static inline unsigned hotspot_unsigned5_excluded(unsigned major)
{
	return major >= 20 ? 1 : 0;
}

struct hotspot_stream {
	const uint8_t *p, *end;
	unsigned x; /* excluded bytes: 0 or 1 */
};

/* One UNSIGNED5 number; 0, or -EINVAL (an excluded byte, or the stream's end inside it). */
int hotspot_read_u5(struct hotspot_stream *s, uint32_t *out);
/* One signed number (zigzag over UNSIGNED5). */
int hotspot_read_s5(struct hotspot_stream *s, int32_t *out);

/*
 * The source line of bytecode index `bci` from a method's compressed line
 * table (`len` bytes, ending at a 0 byte): the line of the entry at bci, or
 * of the last entry before it. 0 when the table says nothing of it.
 */
int hotspot_line_of_bci(const uint8_t *table, size_t len, unsigned x, uint32_t bci);

/* A PcDesc as the JVM lays it out: 4 ints. */
struct hotspot_pcdesc {
	int32_t pc_offset, scope_decode_offset, obj_decode_offset, flags;
};
#define HOTSPOT_PCDESC_SIZE 16

/*
 * The PcDesc for code offset `pc_offset` among `n` (`pcs`, ascending by
 * offset, as an nmethod keeps them): the one at it, else the last before
 * it. 0, or -ENOENT. A return address's own offset is looked up (HotSpot
 * records a call's debug info there), not the one before it.
 */
int hotspot_pcdesc_find(const uint8_t *pcs, size_t n, int32_t pc_offset,
			struct hotspot_pcdesc *out);

/*
 * For a sampled pc that is no call's return address (a leaf): the first
 * PcDesc at or after it, as HotSpot's own pc_desc_near, since debug
 * information is recorded at calls and safepoints, after the code they
 * describe; the last before it when none follows. 0, or -ENOENT.
 */
int hotspot_pcdesc_near(const uint8_t *pcs, size_t n, int32_t pc_offset,
			struct hotspot_pcdesc *out);

/* One method of an inlining chain: its index in the nmethod's metadata (1-based), and its bci. */
struct hotspot_scope {
	uint32_t method_index;
	int32_t bci;
};
#define HOTSPOT_MAX_SCOPES 64

/*
 * The scopes at `decode_offset` in an nmethod's scopes data (`len` bytes):
 * the innermost method first, then each caller it was inlined into, up to
 * `max` (at most HOTSPOT_MAX_SCOPES). Each scope names its sender by an
 * earlier offset; a chain whose offsets do not decrease is cut there. The
 * number of scopes, 0 when decode_offset is 0 (no debug information), or
 * -EINVAL when the first scope cannot be read.
 */
int hotspot_scopes(const uint8_t *data, size_t len, unsigned x, uint32_t decode_offset,
		   struct hotspot_scope *out, int max);

/*
 * "pkg.Class.method" from a class's internal name ("pkg/Class", or a hidden
 * class's "pkg/Class$$Lambda+0x0000000800c01234", whose address suffix is
 * dropped: every lambda of a class would be a function of its own) and a
 * method's name, into `buf` (cut to `size`, always NUL-terminated). The
 * length written.
 */
size_t hotspot_method_name(const char *klass, size_t klass_len, const char *method,
			   size_t method_len, char *buf, size_t size);

#endif
