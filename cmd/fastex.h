/*
 * A fast path for the one thing mmap-index build does per record: decode
 * an Example that holds nothing but one int64 feature, written in the
 * canonical form (one Features message with one entry, key then value;
 * a Feature holding only an Int64List with at most one packed chunk).
 * Such a record is checked completely here.  Anything else (other
 * features, other forms, the feature absent) returns -1 and the caller
 * decodes the record with ex_decode(), which accepts every form protobuf
 * does.  A differential fuzz target (test/fuzz/fuzz-fastex.c) checks
 * that whatever this accepts, ex_decode() accepts with the same values.
 */
#ifndef RECPIPE_FASTEX_H
#define RECPIPE_FASTEX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int
fastex_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;

	for (int s = 0; p < end; s += 7) {
		uint8_t b = *p++;

		if (s == 63 && b > 1)
			return -1;	/* more than 64 bits: leave it to ex_decode */
		r |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*v = r;
			*pp = p;
			return 0;
		}
		if (s == 63)
			return -1;
	}
	return -1;
}

/* A length-delimited field with tag byte 'tag' spanning [*pp, end). */
static inline int
fastex_ld(const uint8_t **pp, const uint8_t *end, uint8_t tag,
    const uint8_t **body, size_t *len)
{
	const uint8_t *p = *pp;
	uint64_t l;

	if (p >= end || *p++ != tag || fastex_varint(&p, end, &l) == -1 ||
	    l > (uint64_t)(end - p))
		return -1;
	*body = p;
	*len = (size_t)l;
	*pp = p + l;
	return 0;
}

/*
 * Returns the number of values (stored in *dst, grown as needed with
 * *cap tracking its size), or -1: not the simple form, or absent.
 */
static inline long
fastex_int64(const uint8_t *p, size_t n, const char *name, size_t namelen,
    int64_t **dst, size_t *cap)
{
	const uint8_t *end = p + n, *fs, *q, *fend, *val = NULL, *e, *k, *v;
	size_t flen, elen, klen, vlen = 0, llen, clen;
	long cnt = 0;

	if (fastex_ld(&p, end, 0x0a, &fs, &flen) == -1 || p != end)
		return -1;
	q = fs;
	fend = fs + flen;
	while (q < fend) {
		if (fastex_ld(&q, fend, 0x0a, &e, &elen) == -1)
			return -1;
		const uint8_t *eend = e + elen;
		if (fastex_ld(&e, eend, 0x0a, &k, &klen) == -1 ||
		    fastex_ld(&e, eend, 0x12, &v, &llen) == -1 || e != eend)
			return -1;
		if (val != NULL || klen != namelen || memcmp(k, name, namelen) != 0)
			return -1;	/* another feature, or a duplicate */
		val = v;
		vlen = llen;
	}
	if (val == NULL)
		return -1;
	q = val;
	fend = val + vlen;
	if (fastex_ld(&q, fend, 0x1a, &e, &llen) == -1 || q != fend)
		return -1;
	if (llen == 0)
		return 0;
	q = e;
	fend = e + llen;
	if (fastex_ld(&q, fend, 0x0a, &e, &clen) == -1 || q != fend)
		return -1;
	if (clen > *cap) {
		int64_t *d = realloc(*dst, clen * sizeof *d);
		if (d == NULL)
			return -1;
		*dst = d;
		*cap = clen;
	}
	for (q = e, fend = e + clen; q < fend; ) {
		uint64_t x;

		if (*q < 0x80) {
			(*dst)[cnt++] = *q++;
			continue;
		}
		if (fend - q >= 3) {
			/* Token ids mostly take 2 or 3 bytes. */
			if (q[1] < 0x80) {
				(*dst)[cnt++] = (q[0] & 0x7f) | (int64_t)q[1] << 7;
				q += 2;
				continue;
			}
			if (q[2] < 0x80) {
				(*dst)[cnt++] = (q[0] & 0x7f) |
				    (int64_t)(q[1] & 0x7f) << 7 | (int64_t)q[2] << 14;
				q += 3;
				continue;
			}
		}
		if (fastex_varint(&q, fend, &x) == -1)
			return -1;
		(*dst)[cnt++] = (int64_t)x;
	}
	return cnt;
}

#endif
