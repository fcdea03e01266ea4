// SPDX-License-Identifier: BSD-2-Clause
/*
 * A JVM's compressed streams, encoded here as HotSpot writes them and
 * decoded back: UNSIGNED5 with and without the excluded byte, line tables,
 * PcDescs, inlining scopes; and the streams a fake JVM can hand us.
 */
#include <errno.h>
#include <string.h>

#include "lang/hotspot_decode.h"
#include "test.h"

/* HotSpot's UNSIGNED5 writer: low 6 bits a byte while the rest continues. */
static size_t put_u5(uint8_t *p, uint32_t v, unsigned x)
{
	size_t n = 0;

	for (int i = 0; i < 4 && v >= 192 - x; i++) {
		uint32_t b = 192 + ((v - (192 - x)) & 63);

		p[n++] = (uint8_t)(b - 0); /* continuation bytes are >= 192 */
		v = (v - (192 - x)) >> 6;
	}
	p[n++] = (uint8_t)(v + x);
	return n;
}

static size_t put_s5(uint8_t *p, int32_t v, unsigned x)
{
	return put_u5(p, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31), x);
}

static void test_unsigned5(void)
{
	static const uint32_t values[] = { 0,	 1,	63,    190,	 191,	    192,       193,
					   4095, 12287, 12288, 1u << 20, 123456789, UINT32_MAX };
	uint8_t buf[16];

	for (unsigned x = 0; x <= 1; x++) {
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			size_t n = put_u5(buf, values[i], x);
			struct hotspot_stream s = { buf, buf + n, x };
			uint32_t v = 0;

			CHECK_EQ_INT(hotspot_read_u5(&s, &v), 0);
			CHECK(v == values[i]);
			CHECK(s.p == buf + n);
			/* With x = 1 no byte of a number is 0, so a 0 can end a stream. */
			if (x)
				CHECK(memchr(buf, 0, n) == NULL);
		}
		for (int32_t v = -300; v <= 300; v += 7) {
			size_t n = put_s5(buf, v, x);
			struct hotspot_stream s = { buf, buf + n, x };
			int32_t got;

			CHECK_EQ_INT(hotspot_read_s5(&s, &got), 0);
			CHECK_EQ_INT(got, v);
		}
	}
	/* The stream's end inside a number; an excluded byte. */
	buf[0] = 200;
	CHECK_EQ_INT(hotspot_read_u5(&(struct hotspot_stream){ buf, buf + 1, 0 }, &(uint32_t){ 0 }),
		     -EINVAL);
	buf[0] = 0;
	CHECK_EQ_INT(hotspot_read_u5(&(struct hotspot_stream){ buf, buf + 1, 1 }, &(uint32_t){ 0 }),
		     -EINVAL);
	/* Five continuation bytes: the fifth ends it whatever it is. */
	memset(buf, 255, 8);
	{
		struct hotspot_stream s = { buf, buf + 8, 0 };

		CHECK_EQ_INT(hotspot_read_u5(&s, &(uint32_t){ 0 }), 0);
		CHECK(s.p == buf + 5);
	}
}

/* A line table of (bci, line) pairs as HotSpot compresses them. */
static size_t put_lines(uint8_t *p, const uint32_t (*pairs)[2], size_t n, unsigned x)
{
	uint32_t bci = 0, line = 0;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t db = (int32_t)(pairs[i][0] - bci), dl = (int32_t)(pairs[i][1] - line);

		if (db >= 0 && db < 32 && dl >= 0 && dl < 8) {
			p[len++] = (uint8_t)(db << 3 | dl);
		} else {
			p[len++] = 0xff;
			len += put_s5(p + len, db, x);
			len += put_s5(p + len, dl, x);
		}
		bci = pairs[i][0];
		line = pairs[i][1];
	}
	p[len++] = 0;
	return len;
}

static void test_line_table(void)
{
	static const uint32_t pairs[][2] = { { 0, 12 }, { 4, 13 },     { 9, 15 },
					     { 40, 9 }, { 300, 2000 }, { 300, 2001 } };
	uint8_t t[128];

	for (unsigned x = 0; x <= 1; x++) {
		size_t n = put_lines(t, pairs, 6, x);

		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 0), 12);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 3), 12);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 4), 13);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 39), 15);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 40), 9);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 299), 9);
		/* An exact match is the first entry at that bci. */
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 300), 2000);
		CHECK_EQ_INT(hotspot_line_of_bci(t, n, x, 5000), 2001);
		/* Cut short (the first entry is an escape of 3 bytes, the second 1 byte): what was
		 * read answers. */
		CHECK_EQ_INT(hotspot_line_of_bci(t, 4, x, 5000), 13);
		CHECK_EQ_INT(hotspot_line_of_bci(t, 2, x, 5000), 0);
		CHECK_EQ_INT(hotspot_line_of_bci(t, 0, x, 5000), 0);
	}
	/* An escape with its numbers cut off. */
	t[0] = 0xff;
	t[1] = 250;
	CHECK_EQ_INT(hotspot_line_of_bci(t, 2, 0, 7), 0);
}

static void put_pcdesc(uint8_t *p, int32_t pc, int32_t scope)
{
	int32_t v[4] = { pc, scope, 0, 0 };

	memcpy(p, v, sizeof(v));
}

static void test_pcdesc(void)
{
	uint8_t pcs[5 * HOTSPOT_PCDESC_SIZE];
	struct hotspot_pcdesc d;

	put_pcdesc(pcs, -1, 0);
	put_pcdesc(pcs + 16, 0x10, 7);
	put_pcdesc(pcs + 32, 0x24, 19);
	put_pcdesc(pcs + 48, 0x40, 31);
	put_pcdesc(pcs + 64, 0x80, 44);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs, 5, 0x24, &d), 0);
	CHECK_EQ_INT(d.scope_decode_offset, 19);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs, 5, 0x3f, &d), 0);
	CHECK_EQ_INT(d.pc_offset, 0x24);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs, 5, 0x1000, &d), 0);
	CHECK_EQ_INT(d.scope_decode_offset, 44);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs, 5, 0, &d), 0);
	CHECK_EQ_INT(d.pc_offset, -1);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs + 16, 4, 0, &d), -ENOENT);
	/* A sampled leaf: the debug information at or after it, else the last before. */
	CHECK_EQ_INT(hotspot_pcdesc_near(pcs, 5, 0x25, &d), 0);
	CHECK_EQ_INT(d.pc_offset, 0x40);
	CHECK_EQ_INT(hotspot_pcdesc_near(pcs, 5, 0x24, &d), 0);
	CHECK_EQ_INT(d.pc_offset, 0x24);
	CHECK_EQ_INT(hotspot_pcdesc_near(pcs, 5, 0x81, &d), 0);
	CHECK_EQ_INT(d.pc_offset, 0x80);
	CHECK_EQ_INT(hotspot_pcdesc_near(pcs, 0, 0x81, &d), -ENOENT);
	CHECK_EQ_INT(hotspot_pcdesc_find(pcs, 0, 0x24, &d), -ENOENT);
}

/* A scope: sender offset, method index, bci + 1. */
static size_t put_scope(uint8_t *p, uint32_t sender, uint32_t method, int32_t bci, unsigned x)
{
	size_t n = put_u5(p, sender, x);

	n += put_u5(p + n, method, x);
	n += put_u5(p + n, (uint32_t)(bci + 1), x);
	return n;
}

static void test_scopes(void)
{
	struct hotspot_scope sc[HOTSPOT_MAX_SCOPES];
	uint8_t data[4096];

	for (unsigned x = 0; x <= 1; x++) {
		/* outer (method 3, bci 17) <- middle (2, bci 4) <- inner (1, bci 250), innermost
		 * last written. */
		size_t at = 1, outer, middle, inner;

		data[0] = 0;
		outer = at;
		at += put_scope(data + at, 0, 3, 17, x);
		middle = at;
		at += put_scope(data + at, (uint32_t)outer, 2, 4, x);
		inner = at;
		at += put_scope(data + at, (uint32_t)middle, 1, 250, x);
		CHECK_EQ_INT(hotspot_scopes(data, at, x, (uint32_t)inner, sc, HOTSPOT_MAX_SCOPES),
			     3);
		CHECK_EQ_INT(sc[0].method_index, 1);
		CHECK_EQ_INT(sc[0].bci, 250);
		CHECK_EQ_INT(sc[1].method_index, 2);
		CHECK_EQ_INT(sc[2].method_index, 3);
		CHECK_EQ_INT(sc[2].bci, 17);
		CHECK_EQ_INT(hotspot_scopes(data, at, x, (uint32_t)inner, sc, 2), 2);
		CHECK_EQ_INT(hotspot_scopes(data, at, x, 0, sc, HOTSPOT_MAX_SCOPES), 0);
		/* A sender that is not earlier (a loop): cut after the scope that names it. */
		at = 1;
		at += put_scope(data + at, 1, 5, 0, x);
		CHECK_EQ_INT(hotspot_scopes(data, at, x, 1, sc, HOTSPOT_MAX_SCOPES), 1);
		/* Offsets past the data; a method index of 0. */
		CHECK_EQ_INT(hotspot_scopes(data, at, x, 4000, sc, HOTSPOT_MAX_SCOPES), -EINVAL);
		at = 1 + put_scope(data + 1, 0, 0, 3, x);
		CHECK_EQ_INT(hotspot_scopes(data, at, x, 1, sc, HOTSPOT_MAX_SCOPES), -EINVAL);
	}
	/* A chain as long as the data allows: never more than HOTSPOT_MAX_SCOPES. */
	{
		size_t at = 1, prev = 0;

		for (int i = 0; i < 200; i++) {
			size_t here = at;

			at += put_scope(data + at, (uint32_t)prev, 1, i, 0);
			prev = here;
		}
		CHECK_EQ_INT(hotspot_scopes(data, at, 0, (uint32_t)prev, sc, 1000),
			     HOTSPOT_MAX_SCOPES);
	}
}

static void test_names(void)
{
	char buf[64];

	hotspot_method_name("com/example/Hot", 15, "inner", 5, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "com.example.Hot.inner");
	hotspot_method_name("Hot$$Lambda+0x0000000800c01234", 30, "run", 3, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "Hot$$Lambda.run");
	hotspot_method_name("a/B$$Lambda/0x00007f0012345678", 30, "apply", 5, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "a.B$$Lambda.apply");
	/* Not a suffix: kept. */
	hotspot_method_name("a/Bx0+12", 8, "m", 1, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "a.Bx0+12.m");
	hotspot_method_name("+0x1", 4, "m", 1, buf, sizeof(buf));
	CHECK_EQ_STR(buf, ".m");
	/* Cut to the buffer, terminated. */
	CHECK_EQ_INT(hotspot_method_name("com/example/Hot", 15, "inner", 5, buf, 8), 7);
	CHECK_EQ_STR(buf, "com.exa");
}

int main(void)
{
	RUN(test_unsigned5);
	RUN(test_line_table);
	RUN(test_pcdesc);
	RUN(test_scopes);
	RUN(test_names);
	return test_summary();
}
