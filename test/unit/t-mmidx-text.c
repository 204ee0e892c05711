/*
 * Unit tests for lib/mmidx_text and lib/mmidx_build: token text of
 * every dtype at its limits, Python's float texts, indices and id
 * lines, records into a builder, --part by documents, <unk> counts.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "fairseq_dict.h"
#include "mmidx.h"
#include "mmidx_build.h"
#include "mmidx_text.h"
#include "tap.h"

/* The text of n tokens at p of dtype t, separated by sep (last one taken back). */
static const char *
text(enum mmidx_dtype t, const void *p, uint64_t n, char sep, int table)
{
	static char out[4096];
	struct mmidx_text x;
	char *q;

	if (mmidx_text_init(&x, t, sep == ',', "targets") == -1 ||
	    (table && mmidx_text_table(&x) == -1))
		return "(no memory)";
	q = mmidx_text_put(&x, out, p, 0, n);
	if (n > 0)
		q--;
	*q = '\0';
	mmidx_text_free(&x);
	return out;
}

static void
test_ints(void)
{
	uint8_t b[64];
	const char *s;

	b[0] = 0;
	b[1] = 7;
	b[2] = 255;
	TEST(strcmp(text(MMIDX_UINT8, b, 3, ' ', 0), "0 7 255") == 0, "uint8 0 7 255");
	TEST(strcmp(text(MMIDX_UINT8, b, 3, ',', 1), "0,7,255") == 0,
	    "uint8 through the table");
	TEST(strcmp(text(MMIDX_INT8, b, 3, ' ', 0), "0 7 -1") == 0, "int8 255 is -1");
	b[0] = 0x80;
	TEST(strcmp(text(MMIDX_INT8, b, 1, ' ', 0), "-128") == 0, "int8 min");

	rp_put_le32(b, 0xffff0000u);	/* uint16 0, 65535 */
	b[4] = 0x39;
	b[5] = 0x30;			/* 12345 */
	b[6] = 0xa0;
	b[7] = 0x86;			/* 34464: the top of the five-digit path */
	s = text(MMIDX_UINT16, b, 4, ' ', 0);
	TEST(strcmp(s, "0 65535 12345 34464") == 0, "uint16 limits: '%s'", s);
	s = text(MMIDX_UINT16, b, 4, ',', 1);
	TEST(strcmp(s, "0,65535,12345,34464") == 0, "uint16 through the table: '%s'", s);
	s = text(MMIDX_INT16, b, 4, ' ', 0);
	TEST(strcmp(s, "0 -1 12345 -31072") == 0, "int16: '%s'", s);
	b[0] = 0x00;
	b[1] = 0x80;
	TEST(strcmp(text(MMIDX_INT16, b, 1, ' ', 0), "-32768") == 0, "int16 min");

	rp_put_le32(b, 0x80000000u);
	rp_put_le32(b + 4, 0x7fffffffu);
	rp_put_le32(b + 8, 99999);
	rp_put_le32(b + 12, 100000);
	s = text(MMIDX_INT32, b, 4, ' ', 0);
	TEST(strcmp(s, "-2147483648 2147483647 99999 100000") == 0, "int32: '%s'", s);
	s = text(MMIDX_UINT32, b, 4, ' ', 0);
	TEST(strcmp(s, "2147483648 2147483647 99999 100000") == 0, "uint32: '%s'", s);
	rp_put_le32(b, 0xffffffffu);
	TEST(strcmp(text(MMIDX_UINT32, b, 1, ' ', 0), "4294967295") == 0, "uint32 max");

	rp_put_le64(b, (uint64_t)INT64_MIN);
	rp_put_le64(b + 8, (uint64_t)INT64_MAX);
	rp_put_le64(b + 16, (uint64_t)-99999);
	rp_put_le64(b + 24, (uint64_t)-100000);
	rp_put_le64(b + 32, 0);
	s = text(MMIDX_INT64, b, 5, ',', 0);
	TEST(strcmp(s, "-9223372036854775808,9223372036854775807,-99999,"
	    "-100000,0") == 0, "int64 limits: '%s'", s);
	s = text(MMIDX_UINT64, b, 5, ' ', 0);
	TEST(strcmp(s, "9223372036854775808 9223372036854775807 "
	    "18446744073709451617 18446744073709451616 0") == 0,
	    "uint64 reads unsigned: '%s'", s);
	rp_put_le64(b, UINT64_MAX);
	TEST(strcmp(text(MMIDX_UINT64, b, 1, ' ', 0), "18446744073709551615") == 0,
	    "uint64 max");
	TEST(strcmp(text(MMIDX_INT64, b, 0, ' ', 0), "") == 0, "no tokens, no text");

	/* From k0: the tokens before it are not written. */
	{
		struct mmidx_text x;
		char out[64], *q;

		b[0] = 1;
		b[1] = 2;
		b[2] = 3;
		(void)mmidx_text_init(&x, MMIDX_UINT8, 0, "targets");
		q = mmidx_text_put(&x, out, b, 1, 3);
		TEST(q - out == 4 && memcmp(out, "2 3 ", 4) == 0,
		    "tokens k0 .. k1 - 1, each followed by sep");
		TEST_INT(mmidx_text_room(&x), ==, MMIDX_TEXT_ROOM_INT, "room of an integer");
		(void)mmidx_text_init(&x, MMIDX_FLOAT32, 0, "targets");
		TEST_INT(mmidx_text_room(&x), ==, MMIDX_TEXT_ROOM_FLOAT, "room of a float");
		TEST(mmidx_text_table(&x) == 0 && x.table == NULL,
		    "no table for floats");
	}
}

/* A whole line of the tokens at p, as a tool writes it. */
static const char *
line(const struct mmidx_text *x, const uint8_t *p, uint64_t n, int has_mode,
    int mode)
{
	static char out[512];
	char *q = out;

	if (x->json) {
		memcpy(q, x->head, x->headlen);
		q += x->headlen;
	}
	q = mmidx_text_put(x, q, p, 0, n);
	if (n > 0)
		q--;
	q = mmidx_text_end(x, q, has_mode, mode);
	*q = '\0';
	return out;
}

static void
test_lines(void)
{
	static const uint8_t v[4] = { 3, 0, 1, 0 };	/* uint16 3, 1 */
	struct mmidx_text x;
	const char *s;

	TEST(mmidx_text_init(&x, MMIDX_UINT16, 0, "targets") == 0 &&
	    x.head == NULL && x.sep == ' ', "id lines: no head");
	TEST(strcmp(line(&x, v, 2, 0, 0), "3 1\n") == 0, "an id line");
	TEST(strcmp(line(&x, v, 2, 1, -5), "3 1\n") == 0, "no mode in an id line");
	TEST(strcmp(line(&x, v, 0, 0, 0), "\n") == 0, "an empty id line");
	mmidx_text_free(&x);

	TEST(mmidx_text_init(&x, MMIDX_UINT16, 1, "targets") == 0 &&
	    x.sep == ',', "JSON lines");
	TEST(strcmp(line(&x, v, 2, 0, 0), "{\"targets\":[3,1]}\n") == 0,
	    "a JSON line");
	TEST(strcmp(line(&x, v, 0, 0, 0), "{\"targets\":[]}\n") == 0,
	    "an empty sequence");
	s = line(&x, v, 1, 1, -128);
	TEST(strcmp(s, "{\"targets\":[3],\"mode\":-128}\n") == 0,
	    "with its mode: %s", s);
	TEST(mmidx_text_table(&x) == 0 && x.table != NULL &&
	    strcmp(line(&x, v, 2, 1, 127), "{\"targets\":[3,1],\"mode\":127}\n") == 0,
	    "the same through the table");
	mmidx_text_free(&x);
	mmidx_text_free(&x);

	TEST(mmidx_text_init(&x, MMIDX_INT8, 1, "a\"b\\c\x01\x1f\xc3\xa9") == 0,
	    "a feature name to escape");
	s = line(&x, v, 1, 0, 0);
	TEST(strcmp(s, "{\"a\\\"b\\\\c\\u0001\\u001f\xc3\xa9\":[3]}\n") == 0,
	    "quote, backslash and control bytes escaped, UTF-8 as it is: %s", s);
	mmidx_text_free(&x);

	TEST(mmidx_text_init(&x, MMIDX_INT8, 1, "a\xff" "b\xc3\xed\xa0\x80") == 0,
	    "a feature name that is not UTF-8");
	s = line(&x, v, 1, 0, 0);
	TEST(strcmp(s, "{\"a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbd\":[3]}\n") == 0,
	    "U+FFFD for each sequence that is not UTF-8: %s", s);
	mmidx_text_free(&x);
}

static const char *
flt(double d, int f32)
{
	static char out[64];
	char *q = mmidx_text_float(out, d, f32);

	TEST(q - out <= 32, "at most 32 bytes for %.17g", d);
	*q = '\0';
	return out;
}

static void
test_floats(void)
{
	static const struct { double d; const char *repr; } v[] = {
		{ 0.1, "0.1" }, { 1.5, "1.5" }, { 100.0, "100.0" },
		{ 0.0, "0.0" }, { -0.0, "-0.0" },
		{ 1e15, "1000000000000000.0" }, { 1e16, "1e+16" },
		{ 1e22, "1e+22" }, { 0.0001, "0.0001" }, { 0.00001, "1e-05" },
		{ 2.5e-5, "2.5e-05" }, { -1e100, "-1e+100" },
		{ 123456789012345678.0, "1.2345678901234568e+17" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	};
	uint8_t b[16];
	float f;
	const char *s;

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		s = flt(v[i].d, 0);
		TEST(strcmp(s, v[i].repr) == 0, "repr(%s): '%s'", v[i].repr, s);
	}
	TEST(strcmp(flt(NAN, 0), "NaN") == 0, "NaN");
	TEST(strcmp(flt(INFINITY, 0), "Infinity") == 0, "Infinity");
	TEST(strcmp(flt(-INFINITY, 1), "-Infinity") == 0, "-Infinity");
	/* float32: the shortest digits of the float32 value. */
	TEST(strcmp(flt(0.1f, 1), "0.1") == 0, "float32 0.1 is 0.1");
	TEST(strcmp(flt(0.1f, 0), "0.10000000149011612") == 0,
	    "the same value as a double");
	TEST(strcmp(flt(3.4028234663852886e+38, 1), "3.4028235e+38") == 0,
	    "float32 max");
	TEST(strcmp(flt(1.401298464324817e-45, 1), "1e-45") == 0,
	    "float32 smallest subnormal");
	TEST(strcmp(flt(16777216.0f, 1), "16777216.0") == 0, "float32 2^24");

	f = 0.25f;
	memcpy(b, &f, 4);
	f = -3.0f;
	memcpy(b + 4, &f, 4);
	s = text(MMIDX_FLOAT32, b, 2, ',', 0);
	TEST(strcmp(s, "0.25,-3.0") == 0, "float32 tokens: '%s'", s);
	{
		double d = 1e-7;

		memcpy(b, &d, 8);
		d = 2.0 / 3;
		memcpy(b + 8, &d, 8);
	}
	s = text(MMIDX_FLOAT64, b, 2, ' ', 0);
	TEST(strcmp(s, "1e-07 0.6666666666666666") == 0, "float64 tokens: '%s'", s);
}

static void
test_py3(void)
{
	static const struct { double d; const char *s; } v[] = {
		{ 0.0, "0.0" }, { 5.0, "5.0" }, { 12.345, "12.3" },
		{ 100.0, "1e+02" }, { 0.5, "0.5" }, { 0.0001234, "0.000123" },
		{ 0.00001234, "1.23e-05" }, { 99.99, "1e+02" }, { 1.0, "1.0" },
		{ 33.33333333, "33.3" }, { 0.001, "0.001" }, { 99.94, "99.9" },
	};
	char out[16];

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		mmidx_text_py3(out, sizeof out, v[i].d);
		TEST(strcmp(out, v[i].s) == 0, "format(%g, '.3') is %s: '%s'",
		    v[i].d, v[i].s, out);
	}
}

static void
test_index(void)
{
	uint64_t v = 5;

	TEST(mmidx_parse_index("0", 1, &v) == 0 && v == 0, "index 0");
	TEST(mmidx_parse_index("18446744073709551609", 20, &v) == 0 &&
	    v == UINT64_MAX - 6, "the largest index");
	TEST(mmidx_parse_index("18446744073709551610", 20, &v) == -1,
	    "one above it is bad");
	TEST(mmidx_parse_index("18446744073709551615", 20, &v) == -1,
	    "UINT64_MAX is bad");
	TEST(mmidx_parse_index("99999999999999999999", 20, &v) == -1, "overflow");
	TEST(mmidx_parse_index("", 0, &v) == -1, "empty");
	TEST(mmidx_parse_index("-1", 2, &v) == -1, "a sign");
	TEST(mmidx_parse_index(" 1", 2, &v) == -1, "a leading space");
	TEST(mmidx_parse_index("1 ", 2, &v) == -1, "a trailing space");
	TEST(mmidx_parse_index("1a", 2, &v) == -1, "a letter");
	TEST(mmidx_parse_index("12x", 2, &v) == 0 && v == 12, "only len bytes");
	TEST(mmidx_parse_index("007", 3, &v) == 0 && v == 7, "leading zeros");
}

/* Parse a copy of s as ids of dtype t. */
static long
ids(struct mmidx_ids *x, const char *s, char *err, size_t errlen)
{
	static char line[512];
	size_t n = strlen(s);

	memcpy(line, s, n + 1);
	err[0] = '\0';
	return mmidx_ids_parse(x, line, n, err, errlen);
}

static void
test_ids(void)
{
	struct mmidx_ids x;
	char err[256];
	char big[200];

	mmidx_ids_init(&x, MMIDX_INT64);
	TEST(ids(&x, "", err, sizeof err) == 0, "an empty line: no ids");
	TEST(ids(&x, " \t\r", err, sizeof err) == 0, "blanks: no ids");
	TEST(ids(&x, "-9223372036854775808\t9223372036854775807\r 0", err,
	    sizeof err) == 3 && x.v[0] == INT64_MIN && x.v[1] == INT64_MAX &&
	    x.v[2] == 0 && x.neg, "int64 limits, tab and CR between");
	TEST(ids(&x, "9223372036854775808", err, sizeof err) == -1 &&
	    errno == EINVAL && strcmp(err, "token 9223372036854775808 does "
	    "not fit int64") == 0, "above INT64_MAX: '%s'", err);
	TEST(ids(&x, "-9223372036854775809", err, sizeof err) == -1 &&
	    strcmp(err, "token -9223372036854775809 does not fit int64") == 0,
	    "below INT64_MIN: '%s'", err);
	TEST(ids(&x, "1 x2 3", err, sizeof err) == -1 &&
	    strcmp(err, "bad token id 'x2'") == 0, "a bad id: '%s'", err);
	TEST(ids(&x, "1 2x", err, sizeof err) == -1 &&
	    strcmp(err, "bad token id '2x'") == 0, "digits then a letter: '%s'", err);
	TEST(ids(&x, "1.5", err, sizeof err) == -1 &&
	    strcmp(err, "bad token id '1.5'") == 0, "a float is no id: '%s'", err);
	memset(big, 'z', 60);
	big[60] = '\0';
	TEST(ids(&x, big, err, sizeof err) == -1 &&
	    strlen(err) == strlen("bad token id ''") + 40, "cut to 40 bytes");
	TEST(ids(&x, "1 x", err, 8) == -1 && strlen(err) == 7, "cut to errlen");
	TEST(ids(&x, "5 6", err, sizeof err) == 2 && !x.neg,
	    "neg cleared by the next line");
	mmidx_ids_free(&x);

	mmidx_ids_init(&x, MMIDX_UINT64);
	TEST(ids(&x, "18446744073709551615 0", err, sizeof err) == 2 &&
	    (uint64_t)x.v[0] == UINT64_MAX && !x.neg, "uint64 max");
	TEST(ids(&x, "18446744073709551616", err, sizeof err) == -1 &&
	    strcmp(err, "token 18446744073709551616 does not fit uint64") == 0,
	    "above UINT64_MAX: '%s'", err);
	TEST(ids(&x, "-1", err, sizeof err) == 1 && x.neg && x.v[0] == -1,
	    "a negative id is read signed");
	mmidx_ids_free(&x);

	mmidx_ids_init(&x, MMIDX_FLOAT64);
	TEST(ids(&x, "1.5 -2e3 1e999", err, sizeof err) == 3 && x.d[0] == 1.5 &&
	    x.d[1] == -2000 && isinf(x.d[2]), "floats (out of range: inf)");
	TEST(ids(&x, "1.5x", err, sizeof err) == -1 &&
	    strcmp(err, "bad number '1.5x'") == 0, "a bad number: '%s'", err);
	mmidx_ids_free(&x);
	mmidx_ids_free(&x);
}

/* A builder over a scratch file. */
static struct mmidx_builder *
scratch(FILE **fp, enum mmidx_layout layout, enum mmidx_dtype t, unsigned flags)
{
	char err[256];

	*fp = tmpfile();
	return *fp == NULL ? NULL : mmidx_builder_new(fileno(*fp), layout, t,
	    flags, err, sizeof err);
}

static void
test_ids_add(void)
{
	struct mmidx_ids x;
	struct mmidx_builder *b;
	char err[64], line[64];
	FILE *fp;
	int64_t lo, hi;

	b = scratch(&fp, MMIDX_FAIRSEQ, MMIDX_UINT64, 0);
	mmidx_ids_init(&x, MMIDX_UINT64);
	strcpy(line, "18446744073709551615 3");
	TEST(b != NULL && mmidx_ids_parse(&x, line, strlen(line), err,
	    sizeof err) == 2 && mmidx_ids_add(&x, b, 2) == 0 &&
	    mmidx_builder_tokens(b) == 2, "uint64 above INT64_MAX is added");
	strcpy(line, "-1");
	TEST(mmidx_ids_parse(&x, line, 2, err, sizeof err) == 1 &&
	    mmidx_ids_add(&x, b, 1) == -1, "a negative id does not fit uint64");
	mmidx_builder_free(b);
	fclose(fp);
	mmidx_ids_free(&x);

	b = scratch(&fp, MMIDX_FAIRSEQ, MMIDX_INT64, 0);
	mmidx_ids_init(&x, MMIDX_INT64);
	strcpy(line, "-7 40000");
	TEST(mmidx_ids_parse(&x, line, strlen(line), err, sizeof err) == 2 &&
	    mmidx_ids_add(&x, b, 2) == 0 && mmidx_builder_range(b, &lo, &hi) == 0 &&
	    lo == -7 && hi == 40000, "int64 ids, their range");
	mmidx_builder_free(b);
	fclose(fp);
	mmidx_ids_free(&x);
}

static void
test_dtype_for_range(void)
{
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, 0, 0) == MMIDX_UINT16, "fairseq 0..0");
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, 0, 65498) == MMIDX_UINT16,
	    "fairseq below 65500 ids: uint16");
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, 0, 65499) == MMIDX_UINT32,
	    "fairseq 65500 ids: uint32");
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, 0, 4294967293) == MMIDX_UINT32,
	    "fairseq 2^32 - 2 ids: uint32");
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, 0, 4294967294) == MMIDX_INT64,
	    "fairseq 2^32 - 1 ids: int64");
	TEST(mmidx_dtype_for_range(MMIDX_FAIRSEQ, -1, 5) == MMIDX_INT64,
	    "fairseq negative: int64");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, 0, 65498) == MMIDX_UINT16,
	    "megatron uint16");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, 0, INT32_MAX) == MMIDX_INT32,
	    "megatron up to INT32_MAX: int32");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, 0, (int64_t)INT32_MAX + 1) ==
	    MMIDX_INT64, "megatron above INT32_MAX: int64");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, INT32_MIN, 5) == MMIDX_INT32,
	    "megatron negative in int32: int32");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, (int64_t)INT32_MIN - 1, 0) ==
	    MMIDX_INT64, "megatron below INT32_MIN: int64");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON, 0, INT64_MAX) == MMIDX_INT64,
	    "megatron INT64_MAX: int64");
	TEST(mmidx_dtype_for_range(MMIDX_MEGATRON_MM, INT64_MIN, INT64_MAX) ==
	    MMIDX_INT64, "the whole int64 range");
}

/* An Example with an int64 list, a float list and/or a bytes list. */
static size_t
example(struct buf *out, const char *ikey, const int64_t *iv, size_t in,
    const char *fkey, const char *bkey)
{
	struct ex_builder b;
	static const float fv[2] = { 0.5f, 2.0f };
	struct ex_bytes bv = { (const uint8_t *)"ab", 2 };

	exb_init(&b);
	out->len = 0;
	if (ikey != NULL)
		(void)exb_int64(&b, ikey, iv, in);
	if (fkey != NULL)
		(void)exb_float(&b, fkey, fv, 2);
	if (bkey != NULL)
		(void)exb_bytes(&b, bkey, &bv, 1);
	(void)exb_encode(&b, out);
	exb_free(&b);
	return out->len;
}

static void
test_recs(void)
{
	static const int64_t tok[3] = { 5, 6, 7 }, bigmode = 300, two[2] = { 1, 2 };
	struct mmidx_recs r;
	struct mmidx_rec rec;
	struct buf e = { 0 };
	struct mmidx_builder *b;
	FILE *fp;

	mmidx_recs_init(&r, "targets", NULL, 0, 1);
	example(&e, "targets", tok, 3, NULL, NULL);
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == 0 &&
	    rec.kind == MMIDX_REC_INT64 && rec.n == 3 && rec.i64[2] == 7,
	    "an int64 list");
	example(&e, "other", tok, 3, NULL, NULL);
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == -1 && errno == EINVAL &&
	    strcmp(mmidx_recs_strerror(&r), "no such feature (see -f)") == 0,
	    "no such feature: '%s'", mmidx_recs_strerror(&r));
	example(&e, NULL, NULL, 0, "targets", NULL);
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == -1 &&
	    strcmp(mmidx_recs_strerror(&r), "a float_list needs a float --dtype") == 0,
	    "a float list without floats");
	example(&e, NULL, NULL, 0, NULL, "targets");
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == -1 &&
	    strcmp(mmidx_recs_strerror(&r), "a bytes_list, not token ids") == 0,
	    "a bytes list");
	example(&e, NULL, NULL, 0, NULL, NULL);
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == 0 &&
	    rec.kind == MMIDX_REC_DOC && mmidx_recs_decode(&r, NULL, 0, &rec) == 0 &&
	    rec.kind == MMIDX_REC_DOC, "an empty Example ends a document");
	TEST(mmidx_recs_ends_doc(&r, NULL, 0) &&
	    mmidx_recs_ends_doc(&r, (const uint8_t *)"\x0a\x00", 2),
	    "the two forms of an Example without features");
	example(&e, "targets", tok, 3, NULL, NULL);
	TEST(!mmidx_recs_ends_doc(&r, e.p, e.len), "an Example with tokens ends none");
	TEST(!mmidx_recs_ends_doc(&r, (const uint8_t *)"\xff\xff", 2),
	    "nor does one that does not decode");
	TEST(mmidx_recs_decode(&r, (const uint8_t *)"\xff\xff", 2, &rec) == -1 &&
	    errno == EINVAL && mmidx_recs_strerror(&r)[0] != '\0',
	    "not an Example: %s", mmidx_recs_strerror(&r));
	mmidx_recs_free(&r);

	mmidx_recs_init(&r, "targets", NULL, 1, 0);
	example(&e, NULL, NULL, 0, "targets", NULL);
	TEST(mmidx_recs_decode(&r, e.p, e.len, &rec) == 0 &&
	    rec.kind == MMIDX_REC_FLOAT && rec.n == 2 && rec.f32[1] == 2.0f,
	    "a float list with floats");
	TEST(mmidx_recs_decode(&r, NULL, 0, &rec) == -1 && strcmp(
	    mmidx_recs_strerror(&r), "no features (an empty Example ends a "
	    "document, which --documents each refuses)") == 0,
	    "an empty Example without documents");
	mmidx_recs_free(&r);

	/* Modes, through a builder. */
	b = scratch(&fp, MMIDX_MEGATRON_MM, MMIDX_INT32, 0);
	mmidx_recs_init(&r, "targets", "mode", 0, 1);
	{
		struct ex_builder x;

		exb_init(&x);
		(void)exb_int64(&x, "targets", tok, 3);
		(void)exb_int64(&x, "mode", &bigmode, 1);
		e.len = 0;
		(void)exb_encode(&x, &e);
		TEST(mmidx_recs_add(&r, b, e.p, e.len) == -1 && errno == EINVAL &&
		    strcmp(mmidx_recs_strerror(&r), "mode 300 does not fit int8") == 0,
		    "a mode outside int8: '%s'", mmidx_recs_strerror(&r));
		exb_reset(&x);
		(void)exb_int64(&x, "targets", tok, 3);
		(void)exb_int64(&x, "mode", two, 2);
		e.len = 0;
		(void)exb_encode(&x, &e);
		TEST(mmidx_recs_add(&r, b, e.p, e.len) == -1 &&
		    strcmp(mmidx_recs_strerror(&r), "'mode' must hold one value, "
		    "not 2") == 0, "two modes: '%s'", mmidx_recs_strerror(&r));
		exb_reset(&x);
		(void)exb_int64(&x, "targets", tok, 3);
		(void)exb_int64(&x, "mode", &tok[0], 1);
		e.len = 0;
		(void)exb_encode(&x, &e);
		TEST(mmidx_recs_add(&r, b, e.p, e.len) == 0 &&
		    mmidx_builder_count(b) == 1 && mmidx_builder_tokens(b) == 3,
		    "a sequence with its mode");
		exb_free(&x);
	}
	TEST(mmidx_recs_add(&r, b, NULL, 0) == 1, "a document end returns 1");
	mmidx_recs_free(&r);
	mmidx_builder_free(b);
	fclose(fp);

	/* The builder's refusal is the record's fault. */
	b = scratch(&fp, MMIDX_FAIRSEQ, MMIDX_UINT8, 0);
	mmidx_recs_init(&r, "targets", NULL, 0, 0);
	{
		int64_t v[2] = { 1, 256 };

		example(&e, "targets", v, 2, NULL, NULL);
	}
	TEST(mmidx_recs_add(&r, b, e.p, e.len) == -1 && errno == EINVAL &&
	    strcmp(mmidx_recs_strerror(&r), mmidx_builder_strerror(b)) == 0 &&
	    strstr(mmidx_recs_strerror(&r), "256") != NULL,
	    "a token that does not fit: '%s'", mmidx_recs_strerror(&r));
	example(&e, "targets", tok, 3, NULL, NULL);
	TEST(mmidx_recs_add(&r, b, e.p, e.len) == 0 && mmidx_builder_tokens(b) == 3,
	    "a canonical record");
	mmidx_recs_free(&r);
	mmidx_builder_free(b);
	fclose(fp);
	rp_buf_free(&e);
}

/* The .bin bytes a scratch builder wrote so far. */
static size_t
bin_bytes(FILE *fp, struct mmidx_builder *b, uint8_t *out, size_t max)
{
	FILE *idx = tmpfile();
	size_t n;

	if (idx == NULL)
		return 0;
	(void)mmidx_finish(b, fileno(idx));
	fclose(idx);
	rewind(fp);
	n = fread(out, 1, max, fp);
	return n;
}

static void
test_pack(void)
{
	static const int64_t s1[3] = { 5, 6, 2 }, s2[1] = { 40000 }, s3[2] = { 9, 2 };
	struct buf rec[5] = { { 0 } };
	struct mmidx_recs r;
	struct mmidx_pack pk;
	struct mmidx_builder *b1, *b2;
	FILE *f1, *f2;
	uint8_t o1[256], o2[256];
	size_t n1, n2, bad;
	long docs;
	int rc = 0;

	example(&rec[0], "targets", s1, 3, NULL, NULL);
	example(&rec[1], NULL, NULL, 0, NULL, NULL);	/* a document end */
	example(&rec[2], "targets", s2, 1, NULL, NULL);
	example(&rec[3], "targets", s3, 2, NULL, NULL);
	example(&rec[4], NULL, NULL, 0, NULL, NULL);

	for (int t = 0; t < 2; t++) {
		enum mmidx_dtype dt = t == 0 ? MMIDX_UINT16 : MMIDX_INT32;

		b1 = scratch(&f1, MMIDX_MEGATRON, dt, 0);
		b2 = scratch(&f2, MMIDX_MEGATRON, dt, 0);
		mmidx_recs_init(&r, "targets", NULL, 0, 1);
		TEST(mmidx_pack_init(&pk, "targets", 1, 0, 8) == 0, "a packer");
		rc = 0;
		for (int i = 0; i < 5; i++) {
			rc += mmidx_recs_add(&r, b1, rec[i].p, rec[i].len);
			TEST(mmidx_pack_record(&pk, b2, rec[i].p, rec[i].len) == 0,
			    "%s: record %d packed", mmidx_dtype_name(dt), i);
		}
		docs = mmidx_pack_put(&pk, b2, &bad);
		TEST(rc == 2 && docs == 2, "%s: two document ends either way",
		    mmidx_dtype_name(dt));
		TEST(mmidx_builder_count(b1) == 3 && mmidx_builder_count(b2) == 3 &&
		    mmidx_builder_tokens(b2) == 6, "%s: the same sequences",
		    mmidx_dtype_name(dt));
		n1 = bin_bytes(f1, b1, o1, sizeof o1);
		n2 = bin_bytes(f2, b2, o2, sizeof o2);
		TEST(n1 == 6 * mmidx_dtype_size(dt) && n1 == n2 &&
		    memcmp(o1, o2, n1) == 0, "%s: the same .bin", mmidx_dtype_name(dt));
		mmidx_pack_reset(&pk);
		TEST(pk.k == 0 && pk.used == 0, "reset starts a new job");
		mmidx_pack_free(&pk);
		mmidx_recs_free(&r);
		mmidx_builder_free(b1);
		mmidx_builder_free(b2);
		fclose(f1);
		fclose(f2);
	}

	/* The vocabulary holds on the uint16 fast path too. */
	b1 = scratch(&f1, MMIDX_FAIRSEQ, MMIDX_UINT16, 0);
	mmidx_builder_set_vocab(b1, 10);
	(void)mmidx_pack_init(&pk, "targets", 0, 10, 8);
	TEST(mmidx_pack_record(&pk, b1, rec[3].p, rec[3].len) == 0 && pk.k == 1,
	    "ids below the vocabulary");
	TEST(mmidx_pack_record(&pk, b1, rec[0].p, rec[0].len) == 0, "5 6 2 too");
	TEST(mmidx_pack_record(&pk, b1, rec[2].p, rec[2].len) == -1 &&
	    strstr(mmidx_pack_strerror(&pk), "40000") != NULL && pk.k == 2,
	    "an id at or above it is refused: '%s'", mmidx_pack_strerror(&pk));
	TEST(mmidx_pack_record(&pk, b1, rec[1].p, rec[1].len) == -1 &&
	    strncmp(mmidx_pack_strerror(&pk), "no features", 11) == 0,
	    "a document end without documents: '%s'", mmidx_pack_strerror(&pk));
	TEST(mmidx_pack_put(&pk, b1, &bad) == 0 && mmidx_builder_count(b1) == 2,
	    "the records before the fault are added");
	mmidx_pack_free(&pk);
	mmidx_builder_free(b1);
	fclose(f1);

	/* A refusal of the builder's own names the record. */
	b1 = scratch(&f1, MMIDX_FAIRSEQ, MMIDX_UINT16, MMIDX_FAIRSEQ_IDS);
	(void)mmidx_pack_init(&pk, "targets", 0, 0, 8);
	example(&rec[4], "targets", s2, 1, NULL, NULL);	/* no </s> at the end */
	TEST(mmidx_pack_record(&pk, b1, rec[0].p, rec[0].len) == 0 &&
	    mmidx_pack_record(&pk, b1, rec[4].p, rec[4].len) == 0 &&
	    mmidx_pack_record(&pk, b1, rec[3].p, rec[3].len) == 0, "three packed");
	TEST(mmidx_pack_put(&pk, b1, &bad) == -1 && bad == 1 &&
	    mmidx_builder_count(b1) == 1, "the second refused: %s",
	    mmidx_builder_strerror(b1));
	mmidx_pack_free(&pk);
	mmidx_builder_free(b1);
	fclose(f1);
	for (int i = 0; i < 5; i++)
		rp_buf_free(&rec[i]);
}

static void
test_part(void)
{
	struct mmidx_part pt = { 1, 0, 100, 200, 0, 0 };

	TEST(mmidx_part_take(&pt, 0, 0) && mmidx_part_take(&pt, 500, 1) && !pt.done,
	    "without documents every sequence is taken");
	pt.docs = 1;
	pt.skipping = 1;
	TEST(!mmidx_part_take(&pt, 100, 0), "before the first document end: passed over");
	TEST(!mmidx_part_take(&pt, 120, 1) && !pt.skipping,
	    "the end of the document begun before the part: passed over");
	TEST(mmidx_part_take(&pt, 130, 0) && mmidx_part_take(&pt, 150, 1),
	    "the part's documents are taken");
	TEST(mmidx_part_take(&pt, 210, 0) && !pt.done,
	    "past hi, the open document reads on");
	TEST(mmidx_part_take(&pt, 220, 1) && pt.done, "to its end, then done");

	pt = (struct mmidx_part){ 1, 1, 100, 200, 1, 0 };
	TEST(!mmidx_part_take(&pt, 150, 0) && !mmidx_part_take(&pt, 200, 0) &&
	    pt.done, "no document starts in the part: done at hi");
}

static void
test_unk(void)
{
	struct fqd *d = fqd_new(1), *unk = fqd_new(0);
	struct mmidx_textin t;
	struct mmidx_text_stats st = { 0, 0, 0 };
	uint32_t *tv = NULL;
	size_t cap = 0, nunk, bad;
	long k;
	double r = -1;
	static const char line[] = "a zz b zz yy";

	TEST(d != NULL && unk != NULL && fqd_add(d, "a", 1, 1) >= 0 &&
	    fqd_add(d, "b", 1, 1) >= 0, "a dictionary");
	mmidx_textin_init(&t, d, unk, 1);
	k = fqd_encode_line(d, (const uint8_t *)line, strlen(line), &tv, &cap,
	    &nunk, &bad);
	TEST(k == 6 && nunk == 3, "encoded: %ld ids, %zu <unk>", k, nunk);
	TEST(mmidx_textin_count(&t, (const uint8_t *)line, strlen(line),
	    (size_t)k, nunk) == 0, "counted");
	TEST(t.st.seqs == 1 && t.st.toks == 6 && t.st.unk == 3, "the statistics");
	TEST(fqd_size(unk) == 1 && fqd_count(unk, 0) == 2 && t.capped,
	    "zz counted twice, yy left out past the cap");
	TEST(mmidx_textin_count(&t, (const uint8_t *)"a", 1, 2, 0) == 0 &&
	    t.st.seqs == 2 && t.st.toks == 8 && t.st.unk == 3, "a line without <unk>");

	TEST(mmidx_unk_check(&st, 0.5, &r) == MMIDX_UNK_FINE && r == -1,
	    "no ids: fine, no rate");
	st.toks = 100;
	st.unk = 5;
	TEST(mmidx_unk_check(&st, -1, &r) == MMIDX_UNK_FINE && r == 0.05,
	    "5%%: not above the warning");
	st.unk = 6;
	TEST(mmidx_unk_check(&st, -1, &r) == MMIDX_UNK_HIGH, "6%%: a warning");
	TEST(mmidx_unk_check(&st, 0.06, &r) == MMIDX_UNK_HIGH, "at the maximum: a warning");
	TEST(mmidx_unk_check(&st, 0.05, &r) == MMIDX_UNK_OVER, "above the maximum");
	st.unk = 1;
	TEST(mmidx_unk_check(&st, 0, &r) == MMIDX_UNK_OVER, "any <unk> above 0");
	free(tv);
	fqd_free(d);
	fqd_free(unk);
}

int
main(void)
{
	test_ints();
	test_lines();
	test_floats();
	test_py3();
	test_index();
	test_ids();
	test_ids_add();
	test_dtype_for_range();
	test_recs();
	test_pack();
	test_part();
	test_unk();
	return tap_done();
}
