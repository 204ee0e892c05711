/*
 * JSON lines for Examples: the canonical proto3 mapping and the flat
 * form out, both forms in.  See exjson.h for the formats.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "exjson.h"
#include "unicode.h"

/* ------------------------------------------------------------------ */
/* Errors */

static int
fail(struct exjson *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int
nomem(struct exjson *j)
{
	snprintf(j->msg, sizeof(j->msg), "out of memory");
	errno = ENOMEM;
	return -1;
}

/* Show up to 'max' bytes of p as a readable quoted string into dst. */
static void
show(char *dst, size_t dstsz, const uint8_t *p, size_t n, size_t max)
{
	size_t i, o = 0;

	if (dstsz < 8)
		return;
	dst[o++] = '"';
	for (i = 0; i < n && i < max && o + 6 < dstsz; i++) {
		if (p[i] < 0x20 || p[i] >= 0x7f || p[i] == '"' || p[i] == '\\')
			o += snprintf(dst + o, dstsz - o, "\\x%02x", p[i]);
		else
			dst[o++] = p[i];
	}
	if (i < n && o + 4 < dstsz) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o++] = '"';
	dst[o] = '\0';
}

/* ------------------------------------------------------------------ */
/* Numbers */

uint64_t *
exjson_itext_new(size_t n, char sep)
{
	uint64_t *t, w;
	char tmp[24];
	size_t v, len;

	if (n > EXJSON_ITEXT_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((t = malloc((n ? n : 1) * sizeof(*t))) == NULL)
		return NULL;
	for (v = 0; v < n; v++) {
		len = (size_t)(exjson_format_u64(v, tmp) - tmp);
		tmp[len++] = sep;
		w = 0;
		for (size_t i = 0; i < len; i++)
			w |= (uint64_t)(unsigned char)tmp[i] << (8 * i);
		t[v] = w | (uint64_t)len << 56;
	}
	return t;
}

size_t
exjson_format_float(float v, char *dst)
{
	static const char *const fmts[] = { "%.6g", "%.7g", "%.8g" };
	size_t i, n;
	int len = 0;

	if (isnan(v))
		return (size_t)snprintf(dst, EXJSON_FLOAT_MAX, "NaN");
	if (isinf(v))
		return (size_t)snprintf(dst, EXJSON_FLOAT_MAX, v > 0 ? "Infinity" : "-Infinity");
	if (v == 0) {
		/* Both zeros, without the printf round trip. */
		return (size_t)snprintf(dst, EXJSON_FLOAT_MAX, signbit(v) ? "-0.0" : "0.0");
	}
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		len = snprintf(dst, EXJSON_FLOAT_MAX, fmts[i], (double)v);
		if (strtof(dst, NULL) == v)
			break;
	}
	if (i == sizeof(fmts) / sizeof(fmts[0]))
		len = snprintf(dst, EXJSON_FLOAT_MAX, "%.9g", (double)v);
	n = (size_t)len;
	if (strpbrk(dst, ".eEn") == NULL) {
		memcpy(dst + n, ".0", 3);
		n += 2;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Base64 */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
exjson_base64(const uint8_t *p, size_t n, char *dst)
{
	size_t i;

	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t w = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		dst[0] = b64[w >> 18];
		dst[1] = b64[(w >> 12) & 63];
		dst[2] = b64[(w >> 6) & 63];
		dst[3] = b64[w & 63];
		dst += 4;
	}
	if (n - i == 1) {
		uint32_t w = (uint32_t)p[i] << 16;
		dst[0] = b64[w >> 18];
		dst[1] = b64[(w >> 12) & 63];
		dst[2] = '=';
		dst[3] = '=';
		dst += 4;
	} else if (n - i == 2) {
		uint32_t w = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		dst[0] = b64[w >> 18];
		dst[1] = b64[(w >> 12) & 63];
		dst[2] = b64[(w >> 6) & 63];
		dst[3] = '=';
		dst += 4;
	}
	return dst;
}

static int
unb64(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

long
exjson_unbase64(const char *s, size_t n, uint8_t *dst)
{
	size_t i, o = 0, pad = 0;
	uint32_t w = 0;
	int k = 0, v;

	/* Padding: none, or up to two '=' completing a multiple of 4. */
	while (pad < n && pad < 2 && s[n - 1 - pad] == '=')
		pad++;
	if (pad && n % 4 != 0)
		return -1;
	n -= pad;
	if (n % 4 == 1)
		return -1;
	if (pad && (n % 4) + pad != 4)
		return -1;
	for (i = 0; i < n; i++) {
		if ((v = unb64((unsigned char)s[i])) < 0)
			return -1;
		w = w << 6 | (uint32_t)v;
		if (++k == 4) {
			dst[o++] = (uint8_t)(w >> 16);
			dst[o++] = (uint8_t)(w >> 8);
			dst[o++] = (uint8_t)w;
			w = 0;
			k = 0;
		}
	}
	if (k == 2) {
		dst[o++] = (uint8_t)(w >> 4);
	} else if (k == 3) {
		dst[o++] = (uint8_t)(w >> 10);
		dst[o++] = (uint8_t)(w >> 2);
	}
	return (long)o;
}

/* ------------------------------------------------------------------ */
/* UTF-8 */

int
exjson_utf8_valid(const uint8_t *p, size_t n)
{
	return uni_utf8_valid_prefix(p, n) == n;
}

/* ------------------------------------------------------------------ */
/* Output helpers */

/* 1: byte needs a \u00XX escape; 2: a backslash escape. */
static const uint8_t esc[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
};

int
exjson_put_string(struct buf *out, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t *q;
	size_t i, need = n + 2;

	for (i = 0; i < n; i++)
		need += esc[p[i]] == 1 ? 5 : esc[p[i]] == 2 ? 1 : 0;
	if (need < n || rp_buf_reserve(out, need) == -1)
		return -1;
	q = out->p + out->len;
	*q++ = '"';
	for (i = 0; i < n; i++) {
		uint8_t c = p[i];
		switch (esc[c]) {
		case 0:
			*q++ = c;
			break;
		case 1:
			memcpy(q, "\\u00", 4);
			q[4] = hex[c >> 4];
			q[5] = hex[c & 15];
			q += 6;
			break;
		default:
			q[0] = '\\';
			q[1] = c;
			q += 2;
		}
	}
	*q++ = '"';
	out->len = (size_t)(q - out->p);
	return 0;
}

int
exjson_put_name(struct buf *out, const uint8_t *p, size_t n)
{
	struct buf fix = { 0 };
	size_t i = 0, len;
	int rc = 0;

	if ((len = uni_utf8_valid_prefix(p, n)) == n)
		return exjson_put_string(out, p, n);
	while (rc == 0) {
		rc = rp_buf_append(&fix, p + i, len);
		if ((i += len) == n)
			break;
		if (rc == 0)
			rc = rp_buf_append(&fix, "\xef\xbf\xbd", 3);
		i += uni_utf8_bad_len(p + i, n - i);
		len = uni_utf8_valid_prefix(p + i, n - i);
	}
	if (rc == 0)
		rc = exjson_put_string(out, fix.p, fix.len);
	rp_buf_free(&fix);
	return rc;
}

#define PUTS(o, lit) rp_buf_append((o), (lit), sizeof(lit) - 1)

/* A map key: UTF-8 checked, or repaired with EXJSON_LOSSY. */
static int
put_key(struct exjson *j, struct buf *o, const uint8_t *k, size_t n)
{
	int rc;
	char s[160];

	if (exjson_utf8_valid(k, n))
		rc = exjson_put_string(o, k, n);
	else if (!(j->flags & EXJSON_LOSSY)) {
		show(s, sizeof(s), k, n, 64);
		return fail(j, "feature key %s is not valid UTF-8", s);
	} else
		rc = exjson_put_name(o, k, n);
	if (rc == -1)
		return nomem(j);
	if (rp_buf_putc(o, ':') == -1)
		return nomem(j);
	return 0;
}

/* Room for 'n' items of at most 'each' bytes, plus slack; a pointer to write at. */
static char *
room(struct buf *o, size_t n, size_t each)
{
	if (n > (SIZE_MAX - 64) / each || rp_buf_reserve(o, n * each + 64) == -1)
		return NULL;
	return (char *)o->p + o->len;
}

static void
done(struct buf *o, char *q)
{
	o->len = (size_t)((uint8_t *)q - o->p);
}

/* Values of an int64 list: "1","2" (quoted) or 1,2. */
static int
put_i64s(struct buf *o, const int64_t *v, size_t n, int quoted)
{
	char *q;
	size_t i;

	if ((q = room(o, n, 23)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (i)
			*q++ = ',';
		if (quoted)
			*q++ = '"';
		q = exjson_format_i64(v[i], q);
		if (quoted)
			*q++ = '"';
	}
	done(o, q);
	return 0;
}

/*
 * The values of an int64 feature left in its record, a part at a time,
 * the output flushed as it grows when the caller asked for that.
 */
static int
put_lazy_i64s(struct exjson *j, struct buf *o, const struct ex_feature *f,
    int quoted)
{
	struct ex_int64_iter it;
	int64_t v[4096];
	size_t k, first = 1;

	ex_int64_open_feature(&it, f);
	while ((k = ex_int64_next(&it, v, sizeof v / sizeof v[0])) > 0) {
		if (!first && rp_buf_putc(o, ',') == -1)
			return -1;
		first = 0;
		if (put_i64s(o, v, k, quoted) == -1)
			return -1;
		if (j->flush != NULL && o->len > (1u << 20)) {
			j->flushed = 1;
			if (j->flush(j->flush_arg, o) == -1)
				return -1;
		}
	}
	return 0;
}

static int
put_f32s(struct buf *o, const float *v, size_t n)
{
	char *q;
	size_t i;

	if ((q = room(o, n, EXJSON_FLOAT_MAX + 3)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (i)
			*q++ = ',';
		if (isfinite(v[i]))
			q += exjson_format_float(v[i], q);
		else {
			*q++ = '"';
			q += exjson_format_float(v[i], q);
			*q++ = '"';
		}
	}
	done(o, q);
	return 0;
}

static int
put_b64s(struct buf *o, const struct ex_bytes *v, size_t n)
{
	char *q;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].n > SIZE_MAX / 2 || (q = room(o, 1, v[i].n / 3 * 4 + 8)) == NULL)
			return -1;
		if (i)
			*q++ = ',';
		*q++ = '"';
		q = exjson_base64(v[i].p, v[i].n, q);
		*q++ = '"';
		done(o, q);
	}
	return 0;
}

/* The values of a bytes feature left in its record, a part at a time. */
struct bparts {
	struct ex_bytes_iter it;
	struct ex_bytes	 v[1024];
};

/* Whether every value of a bytes feature is UTF-8 (flat output writes them as strings). */
static int
bytes_utf8(const struct ex_feature *f)
{
	struct bparts *bp;
	size_t k, i;
	int ok = 1;

	if (f->lazy == NULL) {
		for (i = 0; i < f->n; i++)
			if (!exjson_utf8_valid(f->b[i].p, f->b[i].n))
				return 0;
		return 1;
	}
	if ((bp = malloc(sizeof(*bp))) == NULL)
		return -1;
	ex_bytes_open_feature(&bp->it, f);
	while (ok && (k = ex_bytes_next(&bp->it, bp->v, 1024)) > 0)
		for (i = 0; ok && i < k; i++)
			ok = exjson_utf8_valid(bp->v[i].p, bp->v[i].n);
	free(bp);
	return ok;
}

/*
 * The values of a bytes feature, comma-separated: base64 strings, or
 * the UTF-8 text as strings.  One left in its record is read a part at
 * a time and the output flushed as it grows, when the caller asked for
 * that.
 */
static int
put_bytes_values(struct exjson *j, struct buf *o, const struct ex_feature *f,
    int base64)
{
	struct bparts *bp;
	const struct ex_bytes *v;
	size_t k, i, first = 1;
	int rc = 0;

	if (f->lazy == NULL && base64)
		return put_b64s(o, f->b, f->n);
	if (f->lazy == NULL) {
		for (i = 0; i < f->n; i++) {
			if (i)
				rc |= rp_buf_putc(o, ',');
			rc |= exjson_put_string(o, f->b[i].p, f->b[i].n);
		}
		return rc ? -1 : 0;
	}
	if ((bp = malloc(sizeof(*bp))) == NULL)
		return -1;
	ex_bytes_open_feature(&bp->it, f);
	while (rc == 0 && (k = ex_bytes_next(&bp->it, bp->v, 1024)) > 0) {
		v = bp->v;
		if (base64) {
			if (!first)
				rc |= rp_buf_putc(o, ',');
			rc |= put_b64s(o, v, k);
		} else
			for (i = 0; i < k; i++) {
				if (!first || i)
					rc |= rp_buf_putc(o, ',');
				rc |= exjson_put_string(o, v[i].p, v[i].n);
			}
		first = 0;
		if (rc == 0 && j->flush != NULL && o->len > (1u << 20)) {
			j->flushed = 1;
			rc = j->flush(j->flush_arg, o);
		}
	}
	free(bp);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Canonical output */

static int
canon_feature(struct exjson *j, struct buf *o, const struct ex_feature *f)
{
	int rc = 0;

	switch (f->kind) {
	case EX_INT64:
		if (f->n == 0)
			return PUTS(o, "{\"int64List\":{}}");
		rc |= PUTS(o, "{\"int64List\":{\"value\":[");
		rc |= f->lazy ? put_lazy_i64s(j, o, f, 1) : put_i64s(o, f->i64, f->n, 1);
		break;
	case EX_FLOAT:
		if (f->n == 0)
			return PUTS(o, "{\"floatList\":{}}");
		rc |= PUTS(o, "{\"floatList\":{\"value\":[");
		rc |= put_f32s(o, f->f32, f->n);
		break;
	case EX_BYTES:
		if (f->n == 0)
			return PUTS(o, "{\"bytesList\":{}}");
		rc |= PUTS(o, "{\"bytesList\":{\"value\":[");
		rc |= put_bytes_values(j, o, f, 1);
		break;
	default:
		return PUTS(o, "{}");
	}
	rc |= PUTS(o, "]}}");
	return rc ? -1 : 0;
}

/* A Features message: {"feature":{"key":Feature,...}} or {}. */
static int
canon_features(struct exjson *j, struct buf *o, const struct ex_feature *f, size_t n)
{
	size_t i;

	if (n == 0)
		return PUTS(o, "{}") ? nomem(j) : 0;
	if (PUTS(o, "{\"feature\":{") == -1)
		return nomem(j);
	for (i = 0; i < n; i++) {
		if (i && rp_buf_putc(o, ',') == -1)
			return nomem(j);
		if (put_key(j, o, f[i].key, f[i].keylen) == -1)
			return -1;
		if (canon_feature(j, o, &f[i]) == -1)
			return nomem(j);
	}
	return PUTS(o, "}}") ? nomem(j) : 0;
}

static int
canon_lists(struct exjson *j, struct buf *o, const struct ex_flist *l, size_t n)
{
	size_t i, k;

	if (n == 0)
		return PUTS(o, "{}") ? nomem(j) : 0;
	if (PUTS(o, "{\"featureList\":{") == -1)
		return nomem(j);
	for (i = 0; i < n; i++) {
		if (i && rp_buf_putc(o, ',') == -1)
			return nomem(j);
		if (put_key(j, o, l[i].key, l[i].keylen) == -1)
			return -1;
		if (l[i].n == 0) {
			if (PUTS(o, "{}") == -1)
				return nomem(j);
			continue;
		}
		if (PUTS(o, "{\"feature\":[") == -1)
			return nomem(j);
		for (k = 0; k < l[i].n; k++) {
			if (k && rp_buf_putc(o, ',') == -1)
				return nomem(j);
			if (canon_feature(j, o, &l[i].v[k]) == -1)
				return nomem(j);
		}
		if (PUTS(o, "]}") == -1)
			return nomem(j);
	}
	return PUTS(o, "}}") ? nomem(j) : 0;
}

static int
canon_example(struct exjson *j, const struct example *ex, struct buf *o)
{
	int ctx = ex->has_features || ex->nfeat, lst = ex->has_lists || ex->nlists;

	if (rp_buf_putc(o, '{') == -1)
		return nomem(j);
	if (!ex->seq) {
		if (ctx && (PUTS(o, "\"features\":") == -1 ||
		    canon_features(j, o, ex->feat, ex->nfeat) == -1))
			goto err;
	} else {
		if (ctx && (PUTS(o, "\"context\":") == -1 ||
		    canon_features(j, o, ex->feat, ex->nfeat) == -1))
			goto err;
		if (lst && ((ctx && rp_buf_putc(o, ',') == -1) ||
		    PUTS(o, "\"featureLists\":") == -1 ||
		    canon_lists(j, o, ex->lists, ex->nlists) == -1))
			goto err;
	}
	if (rp_buf_putc(o, '}') == -1)
		return nomem(j);
	return 0;
err:
	return j->msg[0] ? -1 : nomem(j);
}

/* ------------------------------------------------------------------ */
/* Flat output */

static int
flat_value(struct exjson *j, struct buf *o, const struct ex_feature *f)
{
	size_t i;
	int rc = 0, utf8;

	switch (f->kind) {
	case EX_INT64:
		if (f->n == 0)
			return PUTS(o, "{\"int64_list\":[]}");
		rc |= rp_buf_putc(o, '[');
		rc |= f->lazy ? put_lazy_i64s(j, o, f, 0) : put_i64s(o, f->i64, f->n, 0);
		rc |= rp_buf_putc(o, ']');
		return rc ? -1 : 0;
	case EX_FLOAT:
		if (f->n == 0)
			return PUTS(o, "{\"float_list\":[]}");
		for (i = 0; i < f->n && isfinite(f->f32[i]); i++)
			;
		if (i < f->n) {
			rc |= PUTS(o, "{\"float_list\":[");
			rc |= put_f32s(o, f->f32, f->n);
			rc |= PUTS(o, "]}");
		} else {
			rc |= rp_buf_putc(o, '[');
			rc |= put_f32s(o, f->f32, f->n);
			rc |= rp_buf_putc(o, ']');
		}
		return rc ? -1 : 0;
	case EX_BYTES:
		if (f->n == 0)
			return PUTS(o, "{\"bytes_list\":[]}");
		if ((utf8 = bytes_utf8(f)) == -1)
			return -1;
		if (!utf8) {
			rc |= PUTS(o, "{\"bytes_list\":[");
			rc |= put_bytes_values(j, o, f, 1);
			rc |= PUTS(o, "]}");
			return rc ? -1 : 0;
		}
		rc |= rp_buf_putc(o, '[');
		rc |= put_bytes_values(j, o, f, 0);
		rc |= rp_buf_putc(o, ']');
		return rc ? -1 : 0;
	default:
		return PUTS(o, "null");
	}
}

/* {"key":value,...} */
static int
flat_features(struct exjson *j, struct buf *o, const struct ex_feature *f, size_t n)
{
	size_t i;

	if (rp_buf_putc(o, '{') == -1)
		return nomem(j);
	for (i = 0; i < n; i++) {
		if (i && rp_buf_putc(o, ',') == -1)
			return nomem(j);
		if (put_key(j, o, f[i].key, f[i].keylen) == -1)
			return -1;
		if (flat_value(j, o, &f[i]) == -1)
			return nomem(j);
	}
	return rp_buf_putc(o, '}') ? nomem(j) : 0;
}

static int
keyis(const uint8_t *k, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(k, s, n) == 0;
}

static int
typed_name(const uint8_t *k, size_t n)
{
	return keyis(k, n, "int64_list") || keyis(k, n, "float_list") ||
	    keyis(k, n, "bytes_list");
}

/*
 * Whether the flat text of a SequenceExample would be read back as
 * something else: every present part looking like a canonical one, or
 * every present part looking like a flat typed list.
 */
static int
flat_seq_ambiguous(const struct example *ex)
{
	int ctx = ex->has_features || ex->nfeat, lst = ex->has_lists || ex->nlists;
	int canon = 1, typed = 1;
	size_t i;

	if (!ctx && !lst)
		return 1;
	if (ctx) {
		if (!(ex->nfeat == 0 || (ex->nfeat == 1 &&
		    keyis(ex->feat[0].key, ex->feat[0].keylen, "feature"))))
			canon = 0;
		if (!(ex->nfeat == 1 && typed_name(ex->feat[0].key, ex->feat[0].keylen)))
			typed = 0;
	}
	if (lst) {
		for (i = 0; i < ex->nlists; i++)
			if (!keyis(ex->lists[i].key, ex->lists[i].keylen, "featureList") &&
			    !keyis(ex->lists[i].key, ex->lists[i].keylen, "feature_list"))
				canon = 0;
		if (!(ex->nlists == 1 && typed_name(ex->lists[0].key, ex->lists[0].keylen)))
			typed = 0;
	}
	return canon || typed;
}

static int
flat_example(struct exjson *j, const struct example *ex, struct buf *o)
{
	int ctx = ex->has_features || ex->nfeat, lst = ex->has_lists || ex->nlists;
	size_t i, k;

	if (!ex->seq) {
		if (ex->nfeat == 0)
			return canon_example(j, ex, o);
		return flat_features(j, o, ex->feat, ex->nfeat);
	}
	if (flat_seq_ambiguous(ex))
		return canon_example(j, ex, o);
	if (rp_buf_putc(o, '{') == -1)
		return nomem(j);
	if (ctx && (PUTS(o, "\"context\":") == -1 ||
	    flat_features(j, o, ex->feat, ex->nfeat) == -1))
		goto err;
	if (lst) {
		if ((ctx && rp_buf_putc(o, ',') == -1) ||
		    PUTS(o, "\"feature_lists\":{") == -1)
			return nomem(j);
		for (i = 0; i < ex->nlists; i++) {
			const struct ex_flist *l = &ex->lists[i];
			if (i && rp_buf_putc(o, ',') == -1)
				return nomem(j);
			if (put_key(j, o, l->key, l->keylen) == -1)
				return -1;
			if (rp_buf_putc(o, '[') == -1)
				return nomem(j);
			for (k = 0; k < l->n; k++)
				if ((k && rp_buf_putc(o, ',') == -1) ||
				    flat_value(j, o, &l->v[k]) == -1)
					return nomem(j);
			if (rp_buf_putc(o, ']') == -1)
				return nomem(j);
		}
		if (rp_buf_putc(o, '}') == -1)
			return nomem(j);
	}
	if (rp_buf_putc(o, '}') == -1)
		return nomem(j);
	return 0;
err:
	return j->msg[0] ? -1 : nomem(j);
}

/* ------------------------------------------------------------------ */
/* Output entry points */

void
exjson_init(struct exjson *j, unsigned flags)
{
	memset(j, 0, sizeof(*j));
	j->flags = flags;
	ex_init(&j->dec);
}

void
exjson_free(struct exjson *j)
{
	if (j == NULL)
		return;
	ex_free(&j->dec);
	rp_buf_free(&j->text);
	free(j->nodes);
	rp_buf_free(&j->feats);
	rp_buf_free(&j->lists);
	rp_buf_free(&j->i64);
	rp_buf_free(&j->f32);
	rp_buf_free(&j->bytes);
	rp_buf_free(&j->exfeat);
	rp_buf_free(&j->exlists);
	memset(j, 0, sizeof(*j));
}

const char *
exjson_strerror(const struct exjson *j)
{
	return j->msg[0] ? j->msg : "no error";
}

int
exjson_write(struct exjson *j, const struct example *ex, struct buf *out)
{
	size_t olen = out->len;
	int rc;

	j->msg[0] = '\0';
	j->flushed = 0;
	if (j->flags & EXJSON_FLAT)
		rc = flat_example(j, ex, out);
	else
		rc = canon_example(j, ex, out);
	if (rc == -1)
		out->len = j->flushed ? 0 : olen;
	return rc;
}

int
exjson_keys_ok(struct exjson *j, const struct example *ex)
{
	char s[160];
	size_t i;

	if (j->flags & EXJSON_LOSSY)
		return 0;
	for (i = 0; i < ex->nfeat; i++)
		if (!exjson_utf8_valid(ex->feat[i].key, ex->feat[i].keylen)) {
			show(s, sizeof(s), ex->feat[i].key, ex->feat[i].keylen, 64);
			return fail(j, "feature key %s is not valid UTF-8", s);
		}
	for (i = 0; i < ex->nlists; i++)
		if (!exjson_utf8_valid(ex->lists[i].key, ex->lists[i].keylen)) {
			show(s, sizeof(s), ex->lists[i].key, ex->lists[i].keylen, 64);
			return fail(j, "feature key %s is not valid UTF-8", s);
		}
	return 0;
}

int
exjson_write_raw(const uint8_t *p, size_t n, struct buf *out)
{
	char *q;

	if (n > SIZE_MAX / 2 || (q = room(out, 1, n / 3 * 4 + 8)) == NULL)
		return -1;
	*q++ = '"';
	q = exjson_base64(p, n, q);
	*q++ = '"';
	done(out, q);
	return 0;
}

int
exjson_payload(struct exjson *j, const uint8_t *p, size_t n, enum ex_type type,
    struct buf *out)
{
	j->msg[0] = '\0';
	errno = 0;
	if (ex_decode(&j->dec, p, n, type) == -1) {
		if (errno == ENOMEM)
			return nomem(j);
		return fail(j, "%s", ex_strerror(&j->dec));
	}
	return exjson_write(j, &j->dec, out);
}

/* ------------------------------------------------------------------ */
/* JSON parser: a small tree over a private copy of the line */

enum { JV_NULL, JV_FALSE, JV_TRUE, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

/*
 * A value.  Strings are decoded in place in j->text and NUL-terminated;
 * numbers keep their text.  Arrays and objects chain their children
 * through 'next' (objects alternate key and value).  Index 0 is the
 * root, so 0 also means "none".
 */
struct jnode {
	uint8_t		 type;
	uint8_t		 isint;		/* number without fraction or exponent */
	uint32_t	 pos;		/* byte offset in the line */
	uint32_t	 off, len;	/* text (strings, numbers); child count */
	uint32_t	 child, next;
};

#define MAX_DEPTH 32

struct jparse {
	struct exjson	*j;
	char		*s;
	size_t		 n, i;
};

static const char *
jtype(int t)
{
	static const char *const names[] = { "null", "false", "true", "a number",
	    "a string", "an array", "an object" };
	return names[t];
}

static struct jnode *
N(const struct exjson *j, uint32_t i)
{
	return (struct jnode *)j->nodes + i;
}

static const char *
S(const struct exjson *j, const struct jnode *v)
{
	return (const char *)j->text.p + v->off;
}

static long
newnode(struct jparse *p, int type, size_t pos)
{
	struct exjson *j = p->j;
	struct jnode *v;

	if (j->nnodes == j->capnodes) {
		size_t cap = j->capnodes ? j->capnodes * 2 : 64;
		void *nn = realloc(j->nodes, cap * sizeof(struct jnode));
		if (nn == NULL)
			return nomem(j);
		j->nodes = nn;
		j->capnodes = cap;
	}
	v = N(j, (uint32_t)j->nnodes);
	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)type;
	v->pos = (uint32_t)pos;
	return (long)j->nnodes++;
}

static void
skipws(struct jparse *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
	    p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static int
jerr(struct jparse *p, const char *what)
{
	if (p->i >= p->n)
		return fail(p->j, "invalid JSON at byte %zu: %s (end of line)", p->i, what);
	return fail(p->j, "invalid JSON at byte %zu: %s", p->i, what);
}

static int
hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	int k;

	for (k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A string at p->i (the opening quote); decoded in place. */
static long
parse_string(struct jparse *p)
{
	long id;
	size_t start = p->i, o, k;
	char *s = p->s;
	unsigned u, lo;
	uint32_t cp;

	if ((id = newnode(p, JV_STR, start)) < 0)
		return -1;
	o = ++p->i;
	for (;;) {
		unsigned char c;
		if (p->i >= p->n)
			return jerr(p, "unterminated string");
		c = (unsigned char)s[p->i];
		if (c == '"')
			break;
		if (c < 0x20)
			return jerr(p, "control character in string");
		if (c >= 0x80) {
			k = (size_t)uni_utf8_decode((const uint8_t *)s + p->i,
			    p->n - p->i, &cp);
			if (k == 0)
				return jerr(p, "invalid UTF-8 in string");
			memmove(s + o, s + p->i, k);
			o += k;
			p->i += k;
			continue;
		}
		if (c != '\\') {
			s[o++] = (char)c;
			p->i++;
			continue;
		}
		if (p->i + 1 >= p->n)
			return jerr(p, "unterminated string");
		switch (s[p->i + 1]) {
		case '"': s[o++] = '"'; break;
		case '\\': s[o++] = '\\'; break;
		case '/': s[o++] = '/'; break;
		case 'b': s[o++] = '\b'; break;
		case 'f': s[o++] = '\f'; break;
		case 'n': s[o++] = '\n'; break;
		case 'r': s[o++] = '\r'; break;
		case 't': s[o++] = '\t'; break;
		case 'u':
			if (p->i + 6 > p->n || hex4(s + p->i + 2, &u) == -1)
				return jerr(p, "bad \\u escape");
			if (u >= 0xdc00 && u <= 0xdfff)
				return jerr(p, "lone surrogate in \\u escape");
			if (u >= 0xd800 && u <= 0xdbff) {
				if (p->i + 12 > p->n || s[p->i + 6] != '\\' ||
				    s[p->i + 7] != 'u' || hex4(s + p->i + 8, &lo) == -1 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return jerr(p, "lone surrogate in \\u escape");
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				p->i += 6;
			}
			o += (size_t)uni_utf8_encode(u, (uint8_t *)s + o);
			p->i += 6;
			continue;
		default:
			return jerr(p, "bad escape in string");
		}
		p->i += 2;
	}
	/* o <= p->i: the terminator lands on the closing quote at the latest. */
	s[o] = '\0';
	N(p->j, (uint32_t)id)->off = (uint32_t)(start + 1);
	N(p->j, (uint32_t)id)->len = (uint32_t)(o - start - 1);
	p->i++;
	return id;
}

static int
isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the JSON number at s[0..n), or 0 if there is none; *isint set. */
static size_t
scan_number(const char *s, size_t n, int *isint)
{
	size_t i = 0;

	*isint = 1;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && isdig(s[i]))
		while (i < n && isdig(s[i]))
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		*isint = 0;
		if (++i >= n || !isdig(s[i]))
			return 0;
		while (i < n && isdig(s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		*isint = 0;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !isdig(s[i]))
			return 0;
		while (i < n && isdig(s[i]))
			i++;
	}
	return i;
}

static long
parse_value(struct jparse *p, int depth)
{
	long id, kid, prev;
	size_t start, len;
	int isint, count;
	char c;

	skipws(p);
	if (p->i >= p->n)
		return jerr(p, "expected a value");
	start = p->i;
	c = p->s[p->i];
	switch (c) {
	case '"':
		return parse_string(p);
	case '{':
	case '[':
		if (depth >= MAX_DEPTH)
			return jerr(p, "nesting too deep");
		if ((id = newnode(p, c == '{' ? JV_OBJ : JV_ARR, start)) < 0)
			return -1;
		p->i++;
		skipws(p);
		prev = -1;
		count = 0;
		if (p->i < p->n && p->s[p->i] == (c == '{' ? '}' : ']')) {
			p->i++;
			return id;
		}
		for (;;) {
			if (c == '{') {
				skipws(p);
				if (p->i >= p->n || p->s[p->i] != '"')
					return jerr(p, "expected a string key");
				if ((kid = parse_string(p)) < 0)
					return -1;
				if (prev < 0)
					N(p->j, (uint32_t)id)->child = (uint32_t)kid;
				else
					N(p->j, (uint32_t)prev)->next = (uint32_t)kid;
				prev = kid;
				skipws(p);
				if (p->i >= p->n || p->s[p->i] != ':')
					return jerr(p, "expected ':'");
				p->i++;
			}
			if ((kid = parse_value(p, depth + 1)) < 0)
				return -1;
			if (prev < 0)
				N(p->j, (uint32_t)id)->child = (uint32_t)kid;
			else
				N(p->j, (uint32_t)prev)->next = (uint32_t)kid;
			prev = kid;
			count++;
			skipws(p);
			if (p->i < p->n && p->s[p->i] == ',') {
				p->i++;
				continue;
			}
			if (p->i < p->n && p->s[p->i] == (c == '{' ? '}' : ']')) {
				p->i++;
				break;
			}
			return jerr(p, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
		}
		N(p->j, (uint32_t)id)->len = (uint32_t)count;
		return id;
	case 't':
	case 'f':
	case 'n': {
		const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
		len = strlen(lit);
		if (p->n - p->i < len || memcmp(p->s + p->i, lit, len) != 0)
			return jerr(p, "unexpected character");
		p->i += len;
		return newnode(p, c == 't' ? JV_TRUE : c == 'f' ? JV_FALSE : JV_NULL, start);
	}
	default:
		if ((len = scan_number(p->s + p->i, p->n - p->i, &isint)) == 0)
			return jerr(p, "unexpected character");
		if ((id = newnode(p, JV_NUM, start)) < 0)
			return -1;
		N(p->j, (uint32_t)id)->off = (uint32_t)start;
		N(p->j, (uint32_t)id)->len = (uint32_t)len;
		N(p->j, (uint32_t)id)->isint = (uint8_t)isint;
		p->i += len;
		return id;
	}
}

/* Parse the line into the tree; the root is node 0. */
static int
parse_json(struct exjson *j, const char *s, size_t n)
{
	struct jparse p;

	if (n >= UINT32_MAX - 1)
		return fail(j, "line too long (%zu bytes)", n);
	j->text.len = 0;
	j->nnodes = 0;
	if (rp_buf_append(&j->text, s, n) == -1 || rp_buf_putc(&j->text, '\0') == -1)
		return nomem(j);
	p.j = j;
	p.s = (char *)j->text.p;
	p.n = n;
	p.i = 0;
	if (parse_value(&p, 0) < 0)
		return -1;
	skipws(&p);
	if (p.i < n)
		return jerr(&p, "trailing characters after the value");
	return 0;
}

/* ------------------------------------------------------------------ */
/* From the tree to an example */

/* A feature being built; values are offsets into the pools until the end. */
struct pfeat {
	const uint8_t	*key;
	size_t		 keylen;
	enum ex_kind	 kind;
	size_t		 n, off, idx;
	uint32_t	 pos;		/* byte offset of the key in the line */
};

struct plist {
	const uint8_t	*key;
	size_t		 keylen;
	size_t		 nf, foff, idx;
	uint32_t	 pos;
};

/* Where we are, for messages. */
struct where {
	const uint8_t	*key;
	size_t		 keylen;
	long		 item;		/* index in a feature list; -1 a feature, -2 a list */
};

static int
at(struct exjson *j, const struct where *w, const struct jnode *v, const char *fmt, ...)
{
	char what[160], name[100];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (w == NULL || w->key == NULL)
		return fail(j, "%s at byte %u", what, v->pos);
	show(name, sizeof(name), w->key, w->keylen, 60);
	if (w->item >= 0)
		return fail(j, "feature list %s item %ld: %s at byte %u", name,
		    w->item, what, v->pos);
	if (w->item < -1)
		return fail(j, "feature list %s: %s at byte %u", name, what, v->pos);
	return fail(j, "feature %s: %s at byte %u", name, what, v->pos);
}

static int
streq(const struct exjson *j, const struct jnode *v, const char *lit)
{
	return v->len == strlen(lit) && memcmp(S(j, v), lit, v->len) == 0;
}

static int
pool_add(struct buf *b, const void *v, size_t sz)
{
	return rp_buf_append(b, v, sz);
}

static struct pfeat *
PF(struct exjson *j, size_t i)
{
	return (struct pfeat *)j->feats.p + i;
}

/* Exact int64 value of a JSON number text; -1 if not integral or out of range. */
static int
text_i64(const char *s, size_t n, int64_t *out)
{
	char d[48];
	size_t i = 0, nd = 0, ia, ib, fa, fb;
	long e = 0, k;
	int neg = 0, eneg = 0;
	uint64_t v = 0, lim;

	if (s[i] == '-') {
		neg = 1;
		i++;
	}
	ia = i;
	while (i < n && isdig(s[i]))
		i++;
	ib = i;
	fa = fb = i;
	if (i < n && s[i] == '.') {
		fa = ++i;
		while (i < n && isdig(s[i]))
			i++;
		fb = i;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (s[i] == '+' || s[i] == '-')
			eneg = s[i++] == '-';
		for (; i < n; i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		if (eneg)
			e = -e;
	}
	while (fb > fa && s[fb - 1] == '0')
		fb--;
	while (ia < ib && s[ia] == '0')
		ia++;
	if (ia == ib) {
		/* No integer digits: skip the fraction's leading zeros. */
		while (fa < fb && s[fa] == '0') {
			fa++;
			e--;
		}
	}
	for (i = ia; i < ib; i++) {
		if (nd == sizeof(d))
			return -1;
		d[nd++] = s[i];
	}
	for (i = fa; i < fb; i++, e--) {
		if (nd == sizeof(d))
			return -1;
		d[nd++] = s[i];
	}
	if (nd == 0) {
		*out = 0;
		return 0;
	}
	/* Value = d * 10^e. */
	if (e < 0) {
		for (k = 0; k < -e; k++) {
			if (nd == 0 || d[nd - 1] != '0')
				return -1;
			nd--;
		}
		e = 0;
	}
	if ((long)nd + e > 19)
		return -1;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (i = 0; i < nd + (size_t)e; i++) {
		unsigned dig = i < nd ? (unsigned)(d[i] - '0') : 0;
		if (v > (lim - dig) / 10)
			return -1;
		v = v * 10 + dig;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

static int
get_i64(struct exjson *j, const struct where *w, const struct jnode *v, int64_t *out)
{
	int isint;
	const char *s = S(j, v);

	if (v->type == JV_STR) {
		if (v->len == 0 || scan_number(s, v->len, &isint) != v->len)
			return at(j, w, v, "int64 value is not a number");
	} else if (v->type != JV_NUM)
		return at(j, w, v, "expected an int64 value, found %s", jtype(v->type));
	if (text_i64(s, v->len, out) == -1)
		return at(j, w, v, "%.*s is not an int64 value (not integral or out of range)",
		    (int)(v->len > 40 ? 40 : v->len), s);
	return 0;
}

static int
get_f32(struct exjson *j, const struct where *w, const struct jnode *v, float *out)
{
	int isint;
	const char *s = S(j, v);
	char *end;

	if (v->type == JV_STR) {
		if (streq(j, v, "NaN")) {
			*out = NAN;
			return 0;
		}
		if (streq(j, v, "Infinity")) {
			*out = INFINITY;
			return 0;
		}
		if (streq(j, v, "-Infinity")) {
			*out = -INFINITY;
			return 0;
		}
		if (v->len == 0 || scan_number(s, v->len, &isint) != v->len)
			return at(j, w, v, "float value is not a number");
	} else if (v->type != JV_NUM)
		return at(j, w, v, "expected a float value, found %s", jtype(v->type));
	*out = strtof(s, &end);
	if (end != s + v->len)
		return at(j, w, v, "bad float value");
	if (isinf(*out))
		return at(j, w, v, "float value %.*s out of range",
		    (int)(v->len > 40 ? 40 : v->len), s);
	return 0;
}

/* Start a feature on the pool (kind none). */
static int
feat_begin(struct exjson *j, const uint8_t *key, size_t keylen, size_t idx)
{
	struct pfeat f;

	f.key = key;
	f.keylen = keylen;
	f.kind = EX_NONE;
	f.n = 0;
	f.off = 0;
	f.idx = idx;
	return pool_add(&j->feats, &f, sizeof(f)) ? nomem(j) : 0;
}

/* Fill the last feature with the values of array 'a' as 'kind'. */
static int
fill_list(struct exjson *j, const struct where *w, const struct jnode *a,
    enum ex_kind kind, int base64)
{
	struct pfeat *f = PF(j, j->feats.len / sizeof(struct pfeat) - 1);
	const struct jnode *v;
	uint32_t c;
	size_t n = 0;

	if (a->type != JV_ARR)
		return at(j, w, a, "expected an array of values, found %s", jtype(a->type));
	f->kind = kind;
	f->off = kind == EX_INT64 ? j->i64.len / sizeof(int64_t) :
	    kind == EX_FLOAT ? j->f32.len / sizeof(float) :
	    j->bytes.len / sizeof(struct ex_bytes);
	for (c = a->child; c; c = v->next, n++) {
		v = N(j, c);
		if (kind == EX_INT64) {
			int64_t x;
			if (get_i64(j, w, v, &x) == -1)
				return -1;
			if (pool_add(&j->i64, &x, sizeof(x)) == -1)
				return nomem(j);
		} else if (kind == EX_FLOAT) {
			float x;
			if (get_f32(j, w, v, &x) == -1)
				return -1;
			if (pool_add(&j->f32, &x, sizeof(x)) == -1)
				return nomem(j);
		} else {
			struct ex_bytes b;
			if (v->type != JV_STR)
				return at(j, w, v, "expected a string, found %s", jtype(v->type));
			b.p = (const uint8_t *)S(j, v);
			b.n = v->len;
			if (base64) {
				long m = exjson_unbase64(S(j, v), v->len, (uint8_t *)j->text.p + v->off);
				if (m < 0)
					return at(j, w, v, "bytes value is not base64");
				b.n = (size_t)m;
			}
			if (pool_add(&j->bytes, &b, sizeof(b)) == -1)
				return nomem(j);
		}
		/* fill pointers may have moved the pools, not the features */
	}
	PF(j, j->feats.len / sizeof(struct pfeat) - 1)->n = n;
	return 0;
}

/* A canonical Feature object: {} or {"int64List":{"value":[...]}}. */
static int
canon_feature_in(struct exjson *j, const struct where *w, const struct jnode *v)
{
	const struct jnode *k, *lst, *m;
	enum ex_kind kind = EX_NONE;
	const struct jnode *vals = NULL;
	uint32_t c, d;

	if (v->type != JV_OBJ)
		return at(j, w, v, "expected a Feature object, found %s", jtype(v->type));
	for (c = v->child; c; c = lst->next) {
		k = N(j, c);
		lst = N(j, k->next);
		if (kind != EX_NONE)
			return at(j, w, k, "a Feature has more than one kind");
		if (streq(j, k, "int64List") || streq(j, k, "int64_list"))
			kind = EX_INT64;
		else if (streq(j, k, "floatList") || streq(j, k, "float_list"))
			kind = EX_FLOAT;
		else if (streq(j, k, "bytesList") || streq(j, k, "bytes_list"))
			kind = EX_BYTES;
		else
			return at(j, w, k, "unknown field \"%.*s\" in a Feature",
			    (int)(k->len > 40 ? 40 : k->len), S(j, k));
		if (lst->type != JV_OBJ)
			return at(j, w, lst, "expected an object for \"%s\", found %s",
			    S(j, k), jtype(lst->type));
		for (d = lst->child; d; d = m->next) {
			const struct jnode *f = N(j, d);
			m = N(j, f->next);
			if (!streq(j, f, "value"))
				return at(j, w, f, "unknown field \"%.*s\" in a %s",
				    (int)(f->len > 40 ? 40 : f->len), S(j, f), S(j, k));
			if (vals)
				return at(j, w, f, "duplicate field \"value\"");
			vals = m;
		}
		/* An absent "value" is an empty list. */
		if (vals == NULL) {
			struct pfeat *pf = PF(j, j->feats.len / sizeof(struct pfeat) - 1);
			pf->kind = kind;
			pf->n = 0;
		} else if (fill_list(j, w, vals, kind, kind == EX_BYTES) == -1)
			return -1;
	}
	return 0;
}

/* A flat value: [..], {"int64_list":[..]}, or null. */
static int
flat_feature_in(struct exjson *j, const struct where *w, const struct jnode *v)
{
	const struct jnode *k, *e;
	enum ex_kind kind;
	uint32_t c;
	int ints = 0, reals = 0, strs = 0, hint;

	switch (v->type) {
	case JV_NULL:
		return 0;
	case JV_OBJ:
		if (v->len != 1)
			return at(j, w, v, "expected one of int64_list, float_list, bytes_list");
		k = N(j, v->child);
		if (streq(j, k, "int64_list"))
			return fill_list(j, w, N(j, k->next), EX_INT64, 0);
		if (streq(j, k, "float_list"))
			return fill_list(j, w, N(j, k->next), EX_FLOAT, 0);
		if (streq(j, k, "bytes_list"))
			return fill_list(j, w, N(j, k->next), EX_BYTES, 1);
		return at(j, w, k, "unknown typed list \"%.*s\" (expected int64_list, "
		    "float_list or bytes_list)", (int)(k->len > 40 ? 40 : k->len), S(j, k));
	case JV_ARR:
		break;
	default:
		return at(j, w, v, "expected a list of values, a typed list or null, found %s",
		    jtype(v->type));
	}
	hint = j->kind_of != NULL && w != NULL ?
	    j->kind_of(j->kind_arg, w->key, w->keylen) : -1;
	if (v->len == 0 && hint >= 0)
		return fill_list(j, w, v, (enum ex_kind)hint, 0);
	if (v->len == 0)
		return at(j, w, v, "an empty list has no kind (write {\"int64_list\":[]}, "
		    "{\"float_list\":[]} or {\"bytes_list\":[]})");
	for (c = v->child; c; c = e->next) {
		e = N(j, c);
		if (e->type == JV_NUM && e->isint)
			ints++;
		else if (e->type == JV_NUM)
			reals++;
		else if (e->type == JV_STR)
			strs++;
		else
			return at(j, w, e, "unexpected %s in a list", jtype(e->type));
	}
	if (strs && (ints || reals))
		return at(j, w, v, "a list mixes strings and numbers");
	kind = strs ? EX_BYTES : reals ? EX_FLOAT : EX_INT64;
	if (hint == EX_FLOAT && !strs)
		kind = EX_FLOAT;
	else if (hint == EX_INT64 && reals)
		return at(j, w, v, "a value with a fraction or an exponent, but "
		    "the feature is int64");
	else if (hint >= 0 && hint != (int)kind)
		return at(j, w, v, "%s, but the feature is %s", strs ?
		    "strings" : "numbers", hint == EX_BYTES ? "bytes" :
		    hint == EX_FLOAT ? "float" : "int64");
	return fill_list(j, w, v, kind, 0);
}

/* Members of an object that a message expects: name -> value, checked once each. */
static int
features_map(struct exjson *j, const struct jnode *map, int flat, long item)
{
	const struct jnode *k, *v;
	struct where w;
	uint32_t c;
	size_t idx = 0;

	(void)item;
	if (map->type != JV_OBJ)
		return at(j, NULL, map, "expected an object of features, found %s",
		    jtype(map->type));
	for (c = map->child; c; c = v->next, idx++) {
		k = N(j, c);
		v = N(j, k->next);
		w.key = (const uint8_t *)S(j, k);
		w.keylen = k->len;
		w.item = -1;
		if (feat_begin(j, w.key, w.keylen, idx) == -1)
			return -1;
		PF(j, j->feats.len / sizeof(struct pfeat) - 1)->pos = k->pos;
		if ((flat ? flat_feature_in(j, &w, v) : canon_feature_in(j, &w, v)) == -1)
			return -1;
	}
	return 0;
}

/* A canonical Features message {"feature":{...}}. */
static int
canon_features_in(struct exjson *j, const struct jnode *v)
{
	const struct jnode *k, *m = NULL;
	uint32_t c;

	if (v->type != JV_OBJ)
		return at(j, NULL, v, "expected a Features object, found %s", jtype(v->type));
	for (c = v->child; c; c = N(j, k->next)->next) {
		k = N(j, c);
		if (!streq(j, k, "feature"))
			return at(j, NULL, k, "unknown field \"%.*s\" in Features",
			    (int)(k->len > 40 ? 40 : k->len), S(j, k));
		if (m)
			return at(j, NULL, k, "duplicate field \"feature\"");
		m = N(j, k->next);
	}
	return m ? features_map(j, m, 0, -1) : 0;
}

static int
list_add(struct exjson *j, const uint8_t *key, size_t keylen, size_t idx,
    uint32_t pos)
{
	struct plist l;

	l.pos = pos;
	l.key = key;
	l.keylen = keylen;
	l.nf = 0;
	l.foff = j->feats.len / sizeof(struct pfeat);
	l.idx = idx;
	return pool_add(&j->lists, &l, sizeof(l)) ? nomem(j) : 0;
}

/* The Features of one feature list from a JSON array (canonical or flat items). */
static int
list_items(struct exjson *j, const uint8_t *key, size_t keylen, const struct jnode *arr,
    int flat)
{
	const struct jnode *e;
	struct where w;
	uint32_t c;
	long i = 0;

	w.key = key;
	w.keylen = keylen;
	w.item = 0;
	if (arr->type != JV_ARR)
		return at(j, &w, arr, "expected an array of Features, found %s",
		    jtype(arr->type));
	for (c = arr->child; c; c = e->next, i++) {
		e = N(j, c);
		w.item = i;
		if (feat_begin(j, key, keylen, (size_t)i) == -1)
			return -1;
		if ((flat ? flat_feature_in(j, &w, e) : canon_feature_in(j, &w, e)) == -1)
			return -1;
	}
	((struct plist *)j->lists.p)[j->lists.len / sizeof(struct plist) - 1].nf = (size_t)i;
	return 0;
}

/* A canonical FeatureLists message {"featureList":{"name":{"feature":[...]}}}. */
static int
canon_lists_in(struct exjson *j, const struct jnode *v)
{
	const struct jnode *k, *m = NULL, *name, *fl, *fk;
	uint32_t c, d;
	size_t idx = 0;

	if (v->type != JV_OBJ)
		return at(j, NULL, v, "expected a FeatureLists object, found %s", jtype(v->type));
	for (c = v->child; c; c = N(j, k->next)->next) {
		k = N(j, c);
		if (!streq(j, k, "featureList") && !streq(j, k, "feature_list"))
			return at(j, NULL, k, "unknown field \"%.*s\" in FeatureLists",
			    (int)(k->len > 40 ? 40 : k->len), S(j, k));
		if (m)
			return at(j, NULL, k, "duplicate field \"featureList\"");
		m = N(j, k->next);
	}
	if (m == NULL)
		return 0;
	if (m->type != JV_OBJ)
		return at(j, NULL, m, "expected an object of feature lists, found %s",
		    jtype(m->type));
	for (c = m->child; c; c = fl->next, idx++) {
		const struct jnode *arr = NULL;
		struct where w;
		name = N(j, c);
		fl = N(j, name->next);
		w.key = (const uint8_t *)S(j, name);
		w.keylen = name->len;
		w.item = -2;
		if (fl->type != JV_OBJ)
			return at(j, &w, fl, "expected a FeatureList object, found %s",
			    jtype(fl->type));
		for (d = fl->child; d; d = N(j, fk->next)->next) {
			fk = N(j, d);
			if (!streq(j, fk, "feature"))
				return at(j, &w, fk, "unknown field \"%.*s\" in a FeatureList",
				    (int)(fk->len > 40 ? 40 : fk->len), S(j, fk));
			if (arr)
				return at(j, &w, fk, "duplicate field \"feature\"");
			arr = N(j, fk->next);
		}
		if (list_add(j, w.key, w.keylen, idx, name->pos) == -1)
			return -1;
		if (arr && list_items(j, w.key, w.keylen, arr, 0) == -1)
			return -1;
	}
	return 0;
}

/* Flat feature lists {"name":[F,...]}. */
static int
flat_lists_in(struct exjson *j, const struct jnode *v)
{
	const struct jnode *name, *arr;
	uint32_t c;
	size_t idx = 0;

	if (v->type != JV_OBJ)
		return at(j, NULL, v, "expected an object of feature lists, found %s",
		    jtype(v->type));
	for (c = v->child; c; c = arr->next, idx++) {
		name = N(j, c);
		arr = N(j, name->next);
		if (list_add(j, (const uint8_t *)S(j, name), name->len, idx,
		    name->pos) == -1)
			return -1;
		if (list_items(j, (const uint8_t *)S(j, name), name->len, arr, 1) == -1)
			return -1;
	}
	return 0;
}

/* An object whose every key is one of 'names' (NULL-terminated). */
static int
keys_within(const struct exjson *j, const struct jnode *o, const char *const *names)
{
	const struct jnode *k;
	uint32_t c;
	int i;

	if (o->type != JV_OBJ)
		return 0;
	for (c = o->child; c; c = N(j, k->next)->next) {
		k = N(j, c);
		for (i = 0; names[i]; i++)
			if (streq(j, k, names[i]))
				break;
		if (names[i] == NULL)
			return 0;
	}
	return 1;
}

/* {"int64_list":[...]}-shaped: what a flat Example's object values look like. */
static int
typed_shaped(const struct exjson *j, const struct jnode *o)
{
	const struct jnode *k;

	if (o->type != JV_OBJ || o->len != 1)
		return 0;
	k = N(j, o->child);
	return (streq(j, k, "int64_list") || streq(j, k, "float_list") ||
	    streq(j, k, "bytes_list")) && N(j, k->next)->type == JV_ARR;
}

enum shape { CANON_EX, CANON_SEQ, FLAT_SEQ, FLAT_EX };

static enum shape
classify(const struct exjson *j, const struct jnode *root)
{
	static const char *const ex_keys[] = { "features", NULL };
	static const char *const seq_keys[] = { "context", "featureLists", "feature_lists", NULL };
	static const char *const fseq_keys[] = { "context", "feature_lists", NULL };
	static const char *const f_keys[] = { "feature", NULL };
	static const char *const fl_keys[] = { "featureList", "feature_list", NULL };
	const struct jnode *k, *v;
	uint32_t c;
	int ok, untyped;

	if (keys_within(j, root, ex_keys)) {
		ok = 1;
		for (c = root->child; c; c = v->next) {
			v = N(j, N(j, c)->next);
			ok &= keys_within(j, v, f_keys);
		}
		if (ok)
			return CANON_EX;
	}
	if (root->len && keys_within(j, root, seq_keys)) {
		ok = 1;
		for (c = root->child; c; c = v->next) {
			k = N(j, c);
			v = N(j, k->next);
			ok &= keys_within(j, v, streq(j, k, "context") ? f_keys : fl_keys);
		}
		if (ok)
			return CANON_SEQ;
	}
	if (root->len && keys_within(j, root, fseq_keys)) {
		ok = 1;
		untyped = 0;
		for (c = root->child; c; c = v->next) {
			v = N(j, N(j, c)->next);
			ok &= v->type == JV_OBJ;
			untyped |= v->type == JV_OBJ && !typed_shaped(j, v);
		}
		if (ok && untyped)
			return FLAT_SEQ;
	}
	return FLAT_EX;
}

static int
cmp_pfeat(const void *a, const void *b)
{
	const struct pfeat *x = a, *y = b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = n ? memcmp(x->key, y->key, n) : 0;

	if (c)
		return c;
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
cmp_plist(const void *a, const void *b)
{
	const struct plist *x = a, *y = b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = n ? memcmp(x->key, y->key, n) : 0;

	if (c)
		return c;
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A map key given twice, as protobuf's JSON parser refuses it. */
static int
dup_key(struct exjson *j, const char *what, const uint8_t *key, size_t keylen,
    uint32_t pos)
{
	char name[100];

	show(name, sizeof(name), key, keylen, 60);
	return fail(j, "duplicate %s %s at byte %u", what, name, pos);
}

/*
 * Sort f[0..n) by key (then by order of appearance); a key that
 * appears twice is an error naming its second appearance.
 */
static int
sort_unique_feats(struct exjson *j, struct pfeat *f, size_t n)
{
	size_t i;

	if (n > 1)
		qsort(f, n, sizeof(*f), cmp_pfeat);
	for (i = 1; i < n; i++)
		if (f[i - 1].keylen == f[i].keylen &&
		    memcmp(f[i - 1].key, f[i].key, f[i].keylen) == 0)
			return dup_key(j, "feature", f[i].key, f[i].keylen, f[i].pos);
	return 0;
}

static int
sort_unique_lists(struct exjson *j, struct plist *l, size_t n)
{
	size_t i;

	if (n > 1)
		qsort(l, n, sizeof(*l), cmp_plist);
	for (i = 1; i < n; i++)
		if (l[i - 1].keylen == l[i].keylen &&
		    memcmp(l[i - 1].key, l[i].key, l[i].keylen) == 0)
			return dup_key(j, "feature list", l[i].key, l[i].keylen,
			    l[i].pos);
	return 0;
}

/* Turn the pools into j->parsed. */
static int
assemble(struct exjson *j, size_t ctx_off, size_t nctx)
{
	size_t nf = j->feats.len / sizeof(struct pfeat), nl, i;
	struct pfeat *pf = (struct pfeat *)j->feats.p;
	struct plist *pl = (struct plist *)j->lists.p;
	struct ex_feature *ef;
	struct ex_flist *el;

	nl = j->lists.len / sizeof(struct plist);
	if (nctx > 0 && sort_unique_feats(j, pf + ctx_off, nctx) == -1)
		return -1;
	if (sort_unique_lists(j, pl, nl) == -1)
		return -1;
	j->exfeat.len = 0;
	j->exlists.len = 0;
	if (rp_buf_reserve(&j->exfeat, (nf ? nf : 1) * sizeof(struct ex_feature)) == -1 ||
	    rp_buf_reserve(&j->exlists, (nl ? nl : 1) * sizeof(struct ex_flist)) == -1)
		return nomem(j);
	ef = (struct ex_feature *)j->exfeat.p;
	el = (struct ex_flist *)j->exlists.p;
	for (i = 0; i < nf; i++) {
		memset(&ef[i], 0, sizeof(ef[i]));
		ef[i].key = pf[i].key;
		ef[i].keylen = pf[i].keylen;
		ef[i].kind = pf[i].kind;
		ef[i].n = pf[i].n;
		if (pf[i].n == 0)
			continue;
		if (pf[i].kind == EX_INT64)
			ef[i].i64 = (const int64_t *)j->i64.p + pf[i].off;
		else if (pf[i].kind == EX_FLOAT)
			ef[i].f32 = (const float *)j->f32.p + pf[i].off;
		else if (pf[i].kind == EX_BYTES)
			ef[i].b = (const struct ex_bytes *)j->bytes.p + pf[i].off;
	}
	for (i = 0; i < nl; i++) {
		el[i].key = pl[i].key;
		el[i].keylen = pl[i].keylen;
		el[i].n = pl[i].nf;
		el[i].v = ef + pl[i].foff;
	}
	j->parsed.nfeat = nctx;
	j->parsed.feat = ef + ctx_off;
	j->parsed.nlists = nl;
	j->parsed.lists = el;
	return 0;
}

static int
build(struct exjson *j, const struct jnode *root, enum ex_type type)
{
	static const char *const ex_keys[] = { "features", NULL };
	enum shape sh;
	const struct jnode *k, *v;
	uint32_t c;
	size_t ctx_off = 0, nctx = 0;
	int seen_ctx = 0, seen_lst = 0;

	if (root->type == JV_STR)
		return fail(j, "a JSON string is a raw record, not an Example (read it as raw)");
	if (root->type != JV_OBJ)
		return fail(j, "expected a JSON object, found %s", jtype(root->type));
	sh = classify(j, root);
	if (type == EX_TYPE_EXAMPLE && (sh == CANON_SEQ || sh == FLAT_SEQ))
		sh = keys_within(j, root, ex_keys) ? CANON_EX : FLAT_EX;
	if (type == EX_TYPE_SEQUENCE) {
		if (root->len == 0 || sh == CANON_SEQ)
			sh = CANON_SEQ;
		else
			sh = FLAT_SEQ;
	}
	memset(&j->parsed, 0, sizeof(j->parsed));
	j->parsed.seq = sh == CANON_SEQ || sh == FLAT_SEQ;
	switch (sh) {
	case CANON_EX:
		if (root->len) {
			j->parsed.has_features = 1;
			if (root->len > 1)
				return at(j, NULL, N(j, root->child), "duplicate field \"features\"");
			if (canon_features_in(j, N(j, N(j, root->child)->next)) == -1)
				return -1;
		}
		nctx = j->feats.len / sizeof(struct pfeat);
		break;
	case FLAT_EX:
		if (features_map(j, root, 1, -1) == -1)
			return -1;
		nctx = j->feats.len / sizeof(struct pfeat);
		j->parsed.has_features = nctx > 0;
		break;
	case CANON_SEQ:
	case FLAT_SEQ:
		for (c = root->child; c; c = v->next) {
			k = N(j, c);
			v = N(j, k->next);
			if (streq(j, k, "context")) {
				if (seen_ctx++)
					return at(j, NULL, k, "duplicate field \"context\"");
				ctx_off = j->feats.len / sizeof(struct pfeat);
				if ((sh == CANON_SEQ ? canon_features_in(j, v) :
				    features_map(j, v, 1, -1)) == -1)
					return -1;
				nctx = j->feats.len / sizeof(struct pfeat) - ctx_off;
				j->parsed.has_features = 1;
			} else if (streq(j, k, "feature_lists") ||
			    (sh == CANON_SEQ && streq(j, k, "featureLists"))) {
				if (seen_lst++)
					return at(j, NULL, k, "duplicate field \"featureLists\"");
				if ((sh == CANON_SEQ ? canon_lists_in(j, v) :
				    flat_lists_in(j, v)) == -1)
					return -1;
				j->parsed.has_lists = 1;
			} else
				return at(j, NULL, k, "unknown field \"%.*s\" in a SequenceExample",
				    (int)(k->len > 40 ? 40 : k->len), S(j, k));
		}
		break;
	}
	return assemble(j, ctx_off, nctx);
}

int
exjson_parse(struct exjson *j, const char *s, size_t n, enum ex_type type,
    struct buf *out)
{
	size_t olen = out->len;

	j->msg[0] = '\0';
	j->have_parsed = 0;
	j->feats.len = j->lists.len = j->i64.len = j->f32.len = j->bytes.len = 0;
	if (parse_json(j, s, n) == -1)
		return -1;
	if (build(j, N(j, 0), type) == -1)
		return -1;
	if (ex_encode(&j->parsed, out) == -1) {
		out->len = olen;
		return nomem(j);
	}
	j->have_parsed = 1;
	return 0;
}

const struct example *
exjson_example(const struct exjson *j)
{
	return j->have_parsed ? &j->parsed : NULL;
}

int
exjson_parse_raw(struct exjson *j, const char *s, size_t n, struct buf *out)
{
	const struct jnode *v;
	long m;

	j->msg[0] = '\0';
	j->have_parsed = 0;
	if (parse_json(j, s, n) == -1)
		return -1;
	v = N(j, 0);
	if (v->type != JV_STR)
		return fail(j, "expected a JSON string of base64, found %s", jtype(v->type));
	m = exjson_unbase64(S(j, v), v->len, (uint8_t *)j->text.p + v->off);
	if (m < 0)
		return fail(j, "the string is not base64");
	if (rp_buf_append(out, j->text.p + v->off, (size_t)m) == -1)
		return nomem(j);
	return 0;
}
