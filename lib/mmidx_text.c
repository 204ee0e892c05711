/*
 * Tokens of the .bin/.idx datasets as text.  See mmidx_text.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "errmsg.h"
#include "exjson.h"
#include "mmidx.h"
#include "mmidx_text.h"

/* ---- tokens out ---- */

int
mmidx_text_init(struct mmidx_text *x, enum mmidx_dtype t, int json,
    const char *feature)
{
	struct buf b = { 0 };

	x->t = t;
	x->json = json;
	x->sep = json ? ',' : ' ';
	x->table = NULL;
	x->head = NULL;
	x->headlen = 0;
	if (!json)
		return 0;
	/* The feature name as the one JSON string writer writes a name. */
	if (rp_buf_putc(&b, '{') == -1 ||
	    exjson_put_name(&b, (const uint8_t *)feature, strlen(feature)) == -1 ||
	    rp_buf_puts(&b, ":[") == -1) {
		rp_buf_free(&b);
		errno = ENOMEM;
		return -1;
	}
	x->head = (char *)b.p;
	x->headlen = b.len;
	return 0;
}

int
mmidx_text_table(struct mmidx_text *x)
{
	if (x->table != NULL || (x->t != MMIDX_UINT8 && x->t != MMIDX_UINT16))
		return 0;
	return (x->table = exjson_itext_new(65536, x->sep)) == NULL ? -1 : 0;
}

void
mmidx_text_free(struct mmidx_text *x)
{
	free(x->table);
	free(x->head);
	x->table = NULL;
	x->head = NULL;
	x->headlen = 0;
}

size_t
mmidx_text_room(const struct mmidx_text *x)
{
	return mmidx_dtype_is_float(x->t) ? MMIDX_TEXT_ROOM_FLOAT :
	    MMIDX_TEXT_ROOM_INT;
}

char *
mmidx_text_float(char *q, double d, int f32)
{
	char e[40], dig[20];
	int p, nd = 0, ex, k;

	if (isnan(d))
		return memcpy(q, "NaN", 3), q + 3;
	if (isinf(d)) {
		if (d < 0)
			*q++ = '-';
		return memcpy(q, "Infinity", 8), q + 8;
	}
	/* The fewest digits that read back to d. */
	for (p = 1; p <= 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, d);
		if (f32 ? (float)strtod(e, NULL) == (float)d : strtod(e, NULL) == d)
			break;
	}
	/* e = [-]d[.ddd]e[+-]XX */
	k = 0;
	if (e[k] == '-')
		*q++ = e[k++];
	for (; e[k] != 'e'; k++)
		if (e[k] != '.')
			dig[nd++] = e[k];
	ex = atoi(e + k + 1);
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (ex >= -4 && ex < 16) {
		if (ex < 0) {
			*q++ = '0';
			*q++ = '.';
			for (int z = -1; z > ex; z--)
				*q++ = '0';
			memcpy(q, dig, (size_t)nd);
			q += nd;
		} else {
			for (int i = 0; i <= ex; i++)
				*q++ = i < nd ? dig[i] : '0';
			*q++ = '.';
			if (nd > ex + 1) {
				memcpy(q, dig + ex + 1, (size_t)(nd - ex - 1));
				q += nd - ex - 1;
			} else
				*q++ = '0';
		}
		return q;
	}
	*q++ = dig[0];
	if (nd > 1) {
		*q++ = '.';
		memcpy(q, dig + 1, (size_t)nd - 1);
		q += nd - 1;
	}
	*q++ = 'e';
	*q++ = ex < 0 ? '-' : '+';
	if (ex < 0)
		ex = -ex;
	if (ex >= 100)
		*q++ = (char)('0' + ex / 100);
	*q++ = (char)('0' + ex / 10 % 10);
	*q++ = (char)('0' + ex % 10);
	return q;
}

/* Store the 8 bytes of w at q, the low byte first. */
static inline void
store_le64(char *q, uint64_t w)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	memcpy(q, &w, 8);
}

/* Digit values of 0 .. 99, tens in the low byte. */
#define DP(t)	t, t | 1 << 8, t | 2 << 8, t | 3 << 8, t | 4 << 8, \
		t | 5 << 8, t | 6 << 8, t | 7 << 8, t | 8 << 8, t | 9 << 8
static const uint16_t digit_vals[100] = {
	DP(0), DP(1), DP(2), DP(3), DP(4), DP(5), DP(6), DP(7), DP(8), DP(9)
};
#undef DP

/*
 * Decimal digits of v < 100000 at q, then the separator; returns the
 * end.  No branches: the five digit values go into one word (the first
 * digit in its low byte), the count of leading zero digits comes from
 * its trailing zero bits, and the word, made ASCII and followed by
 * sep, is stored whole with the zeros shifted out.  So 8 bytes at q
 * must be writable.
 */
static inline char *
put_small(char *q, uint32_t v, char sep)
{
	uint32_t a = v / 10000, r = v - a * 10000, b = r / 100, c = r - b * 100;
	uint64_t w = a | (uint64_t)digit_vals[b] << 8 |
	    (uint64_t)digit_vals[c] << 24;
	/* Leading zero digits, at most 4 (0 is written as "0"). */
	unsigned z = (unsigned)__builtin_ctzll(w | (uint64_t)1 << 32) >> 3;

	w = (w + 0x3030303030ull) | (uint64_t)(unsigned char)sep << 40;
	store_le64(q, w >> (8 * z));
	return q + 6 - z;
}

/* An integer and the separator; 24 bytes at q must be writable. */
static inline char *
put_int(char *q, int64_t v, char sep)
{
	if ((uint64_t)v < 100000)
		return put_small(q, (uint32_t)v, sep);
	if (v < 0 && v > -100000) {
		*q = '-';
		return put_small(q + 1, (uint32_t)-v, sep);
	}
	q = exjson_format_i64(v, q);
	*q++ = sep;
	return q;
}

char *
mmidx_text_put(const struct mmidx_text *x, char *q, const uint8_t *p,
    uint64_t k0, uint64_t k1)
{
	const uint64_t *tab = x->table;
	char sep = x->sep;
	uint64_t k;

	switch (x->t) {
	case MMIDX_UINT8:
		if (tab != NULL)
			for (k = k0; k < k1; k++)
				q = exjson_itext_put(tab, p[k], q);
		else
			for (k = k0; k < k1; k++)
				q = put_small(q, p[k], sep);
		break;
	case MMIDX_UINT16:
		if (tab != NULL)
			for (k = k0; k < k1; k++)
				q = exjson_itext_put(tab, (uint32_t)p[2 * k] |
				    (uint32_t)p[2 * k + 1] << 8, q);
		else
			for (k = k0; k < k1; k++)
				q = put_small(q, (uint32_t)p[2 * k] |
				    (uint32_t)p[2 * k + 1] << 8, sep);
		break;
	case MMIDX_INT8:
		for (k = k0; k < k1; k++)
			q = put_int(q, (int8_t)p[k], sep);
		break;
	case MMIDX_INT16:
		for (k = k0; k < k1; k++)
			q = put_int(q, (int16_t)(p[2 * k] | p[2 * k + 1] << 8), sep);
		break;
	case MMIDX_INT32:
		for (k = k0; k < k1; k++)
			q = put_int(q, (int32_t)rp_le32(p + 4 * k), sep);
		break;
	case MMIDX_UINT32:
		for (k = k0; k < k1; k++)
			q = put_int(q, rp_le32(p + 4 * k), sep);
		break;
	case MMIDX_INT64:
		for (k = k0; k < k1; k++)
			q = put_int(q, mmidx_load_i64(x->t, p, k), sep);
		break;
	case MMIDX_UINT64:
		for (k = k0; k < k1; k++) {
			q = exjson_format_u64(mmidx_load_u64(p, k), q);
			*q++ = sep;
		}
		break;
	case MMIDX_FLOAT32:
		for (k = k0; k < k1; k++) {
			q = mmidx_text_float(q, mmidx_load_f32(p, k), 1);
			*q++ = sep;
		}
		break;
	default:
		for (k = k0; k < k1; k++) {
			q = mmidx_text_float(q, mmidx_load_f64(x->t, p, k), 0);
			*q++ = sep;
		}
		break;
	}
	return q;
}

void
mmidx_text_py3(char *out, size_t sz, double x)
{
	char e[40], *q;
	int ex;

	if (x == 0) {
		snprintf(out, sz, "0.0");
		return;
	}
	snprintf(e, sizeof e, "%.2e", x);
	q = strchr(e, 'e');
	ex = atoi(q + 1);
	if (ex < -4 || ex >= 2) {
		char *m = q;

		while (m[-1] == '0')
			m--;
		if (m[-1] == '.')
			m--;
		snprintf(out, sz, "%.*se%c%02d", (int)(m - e), e,
		    ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
		return;
	}
	snprintf(out, sz, "%.*f", 2 - ex, x);
	q = out + strlen(out);
	while (q[-1] == '0' && q[-2] != '.')
		q--;
	*q = '\0';
}

/* ---- indices and ids in ---- */

int
mmidx_parse_index(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	if (len == 0)
		return -1;
	for (size_t k = 0; k < len; k++) {
		if (s[k] < '0' || s[k] > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(s[k] - '0');
	}
	*v = x;
	return 0;
}

void
mmidx_ids_init(struct mmidx_ids *x, enum mmidx_dtype t)
{
	memset(x, 0, sizeof *x);
	x->t = t;
}

void
mmidx_ids_free(struct mmidx_ids *x)
{
	free(x->v);
	free(x->d);
	x->v = NULL;
	x->d = NULL;
	x->cap = x->dcap = 0;
}

/* Room for n elements of size 'size' at *p (*cap of them), doubling from 1024. */
static int
ids_grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 1024;
	void *q;

	while (c < n)
		c *= 2;
	if (c == *cap)
		return 0;
	if (c > SIZE_MAX / size || (q = realloc(*p, c * size)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	*p = q;
	*cap = c;
	return 0;
}

static int
id_end(const char *end, const char *lim)
{
	return end == lim || *end == ' ' || *end == '\t' || *end == '\r';
}

long
mmidx_ids_parse(struct mmidx_ids *x, char *s, size_t len, char *err,
    size_t errlen)
{
	int isf = mmidx_dtype_is_float(x->t), u64 = x->t == MMIDX_UINT64;
	size_t n = 0;
	char *end, *lim = s + len;

	s[len] = '\0';
	x->neg = 0;
	for (;;) {
		while (s < lim && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s >= lim)
			break;
		if (n + 1 > x->cap && ids_grow((void **)&x->v, &x->cap, n + 1,
		    sizeof *x->v) == -1)
			return -1;
		if (isf) {
			if (n + 1 > x->dcap && ids_grow((void **)&x->d, &x->dcap,
			    n + 1, sizeof *x->d) == -1)
				return -1;
			errno = 0;
			x->d[n] = strtod(s, &end);
		} else if (u64 && *s >= '0' && *s <= '9') {
			/* uint64 datasets hold ids above INT64_MAX */
			errno = 0;
			x->v[n] = (int64_t)strtoull(s, &end, 10);
		} else {
			errno = 0;
			x->v[n] = strtoll(s, &end, 10);
			x->neg |= x->v[n] < 0;
		}
		if (end != s && id_end(end, lim) && errno == ERANGE && !isf) {
			rp_seterr(err, errlen, "token %.*s does not fit %s",
			    (int)(end - s) > 40 ? 40 : (int)(end - s), s,
			    mmidx_dtype_name(x->t));
			errno = EINVAL;
			return -1;
		}
		if (end == s || !id_end(end, lim)) {
			size_t w = strcspn(s, " \t\r");

			rp_seterr(err, errlen, "bad %s '%.*s'", isf ? "number" :
			    "token id", w > 40 ? 40 : (int)w, s);
			errno = EINVAL;
			return -1;
		}
		n++;
		s = end;
	}
	return (long)n;
}

int
mmidx_ids_add(const struct mmidx_ids *x, struct mmidx_builder *b, size_t n)
{
	if (mmidx_dtype_is_float(x->t))
		return mmidx_add_f64(b, x->d, n);
	if (x->t == MMIDX_UINT64 && !x->neg)
		return mmidx_add_u64(b, (const uint64_t *)(const void *)x->v, n);
	return mmidx_add_i64(b, x->v, n);
}
