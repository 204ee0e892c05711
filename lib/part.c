/*
 * --part K/N: boundaries in text, record streams and compressed files,
 * and the byte ranges of one part of a list of operands.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "crc32c.h"
#include "part.h"
#include "record.h"

#define WIN	(1u << 20)	/* most bytes read at a time */
#define FIRST	(64u << 10)	/* the first read: a boundary is often near */
#define SMALL	4096		/* an operand this small is read into the window itself */

/* A window over an operand's bytes, read through its callback. */
struct win {
	const struct part_op *op;
	uint8_t		*p;		/* small, or allocated */
	uint8_t		 small[SMALL];
	size_t		 cap;		/* WIN, or less for a small operand */
	size_t		 chunk;		/* the next read, doubling up to cap */
	uint64_t	 off;		/* operand offset of p[0] */
	size_t		 len;
};

/*
 * Start a window on op.  0, or -1 with errno ENOMEM.  A small operand
 * costs no allocation (a search may be asked at many offsets of one).
 */
static int
win_open(struct win *w, const struct part_op *op)
{
	w->op = op;
	w->cap = op->size < WIN ? (size_t)op->size + 1 : WIN;
	w->chunk = FIRST;
	w->off = 0;
	w->len = 0;
	if (w->cap <= SMALL) {
		w->p = w->small;
		return 0;
	}
	return (w->p = malloc(w->cap)) == NULL ? -1 : 0;
}

static void
win_close(struct win *w)
{
	if (w->p != w->small)
		free(w->p);
}

/*
 * The bytes from 'at' (< op->size) in the window, at least n of them
 * (n <= w->cap) unless the file ends first: *pp points at them.  Returns
 * how many there are from 'at' (perhaps more than n), or -1 with errno
 * set.
 */
static ssize_t
win_get(struct win *w, uint64_t at, size_t n, const uint8_t **pp)
{
	uint64_t left = w->op->size - at;
	size_t want = left < n ? (size_t)left : n, fill, got = 0;
	ssize_t k;

	if (at < w->off || at - w->off > w->len ||
	    w->len - (size_t)(at - w->off) < want) {
		fill = want > w->chunk ? want : w->chunk;
		if (fill > w->cap)
			fill = w->cap;
		if (fill > left)
			fill = (size_t)left;
		if (w->chunk < w->cap / 2)
			w->chunk *= 2;
		while (got < fill) {
			k = w->op->read(w->op->arg, w->p + got, fill - got,
			    at + got);
			if (k == -1)
				return -1;
			if (k == 0)
				break;	/* the file shrank: its end is here */
			got += (size_t)k;
		}
		w->off = at;
		w->len = got;
	}
	*pp = w->p + (at - w->off);
	return (ssize_t)(w->len - (size_t)(at - w->off));
}

/*
 * Do records chain from y, their CRCs checked, to the end of the file
 * or for PART_CHAIN_RECORDS records and PART_CHAIN_BYTES bytes?
 * 1 yes, 0 no, -1 on a read failure.
 */
static int
chain_ok(struct win *w, uint64_t y)
{
	uint64_t size = w->op->size, pos = y, len, at, left;
	const uint8_t *q;
	uint32_t crc;
	unsigned nrec = 0;
	ssize_t k;
	size_t m;

	for (;;) {
		if (pos == size)
			return 1;
		if (nrec >= PART_CHAIN_RECORDS && pos - y >= PART_CHAIN_BYTES)
			return 1;
		if (size - pos < 16)
			return 0;
		if ((k = win_get(w, pos, 12, &q)) == -1)
			return -1;
		if (k < 12 || !rec_header_ok(q))
			return 0;
		len = rp_le64(q);
		if (len > size - pos - 16)
			return 0;
		crc = 0;
		at = pos + 12;
		for (left = len; left > 0; left -= m, at += m) {
			if ((k = win_get(w, at, left < w->cap ? (size_t)left :
			    w->cap, &q)) == -1)
				return -1;
			if (k == 0)
				return 0;
			m = (uint64_t)k < left ? (size_t)k : (size_t)left;
			crc = crc32c_extend(crc, q, m);
		}
		if ((k = win_get(w, at, 4, &q)) == -1)
			return -1;
		if (k < 4 || rp_le32(q) != crc32c_mask(crc))
			return 0;
		pos = at + 4;
		nrec++;
	}
}

static int
align_records(const struct part_op *op, uint64_t x, uint64_t *at)
{
	struct win scan, chain;
	uint64_t y = x, size = op->size, len;
	const uint8_t *h;
	size_t i;
	ssize_t k;
	int rc = 0, ok;

	if (win_open(&scan, op) == -1)
		return -1;
	if (win_open(&chain, op) == -1) {
		win_close(&scan);
		return -1;
	}
	*at = size;
	while (size - y >= 16) {
		if ((k = win_get(&scan, y, 16, &h)) == -1) {
			rc = -1;
			break;
		}
		if (k < 16)
			break;
		for (i = 0; i + 16 <= (size_t)k; i++) {
			/* The length must fit in the file before a CRC is worth it. */
			len = rp_le64(h + i);
			if (len > size - (y + i) - 16 || !rec_header_ok(h + i))
				continue;
			if ((ok = chain_ok(&chain, y + i)) == -1) {
				rc = -1;
				goto out;
			}
			if (ok) {
				*at = y + i;
				goto out;
			}
		}
		y += i;
	}
out:
	win_close(&scan);
	win_close(&chain);
	return rc;
}

static int
align_lines(const struct part_op *op, uint64_t x, uint64_t *at)
{
	struct win w;
	uint64_t y = x - 1;	/* a line starts at x when byte x-1 is a newline */
	const uint8_t *p, *nl;
	ssize_t k;
	int rc = 0;

	if (win_open(&w, op) == -1)
		return -1;
	*at = op->size;
	while (y < op->size) {
		if ((k = win_get(&w, y, 1, &p)) == -1) {
			rc = -1;
			break;
		}
		if (k == 0)
			break;
		if ((nl = memchr(p, '\n', (size_t)k)) != NULL) {
			*at = y + (uint64_t)(nl - p) + 1;
			break;
		}
		y += (uint64_t)k;
	}
	win_close(&w);
	return rc;
}

int
part_align(const struct part_op *op, uint64_t x, uint64_t *at)
{
	if (x == 0 || x >= op->size) {
		*at = x == 0 ? 0 : op->size;
		return 0;
	}
	switch (op->kind) {
	case PART_LINES:
		return align_lines(op, x, at);
	case PART_RECORDS:
		return align_records(op, x, at);
	case PART_WHOLE:
		break;
	}
	*at = op->size;
	return 0;
}

/* The boundary before part k: an offset in the concatenation. */
static int
boundary(const struct part_op *ops, size_t nops, uint64_t total, uint64_t k,
    uint64_t n, size_t *bad, uint64_t *b)
{
	uint64_t x, start = 0, y;
	size_t i;

	if (k == 0 || k == n) {
		*b = k == 0 ? 0 : total;
		return 0;
	}
	/* k*total/n, without overflow: n and so k and total % n are below 2^32. */
	x = total / n * k + total % n * k / n;
	for (i = 0; i < nops; i++) {
		if (x < start + ops[i].size) {
			if (part_align(&ops[i], x - start, &y) == -1) {
				*bad = i;
				return -1;
			}
			*b = start + y;
			return 0;
		}
		start += ops[i].size;
	}
	*b = total;
	return 0;
}

/* The part of [lo, hi) in the operand at [start, start + size). */
static uint64_t
clamp(uint64_t b, uint64_t start, uint64_t size)
{
	if (b <= start)
		return 0;
	if (b - start >= size)
		return size;
	return b - start;
}

int
part_plan(struct part_op *ops, size_t nops, uint64_t k, uint64_t n, size_t *bad)
{
	uint64_t total = 0, lo, hi, start;
	size_t i;

	if (n == 0 || n > PART_MAX_N || k >= n) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < nops; i++) {
		if (ops[i].size > UINT64_MAX - total) {
			errno = EOVERFLOW;
			return -1;
		}
		total += ops[i].size;
	}
	if (boundary(ops, nops, total, k, n, bad, &lo) == -1 ||
	    boundary(ops, nops, total, k + 1, n, bad, &hi) == -1)
		return -1;
	for (i = 0, start = 0; i < nops; start += ops[i].size, i++) {
		ops[i].from = clamp(lo, start, ops[i].size);
		ops[i].to = clamp(hi, start, ops[i].size);
	}
	return 0;
}
