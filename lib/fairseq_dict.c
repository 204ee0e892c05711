/*
 * fairseq dictionaries: counting, finalize, dict.txt, encode_line.
 * See fairseq_dict.h for the rules.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "fairseq_dict.h"
#include "hashkey.h"
#include "io.h"
#include "unicode.h"

/* ---------------------------------------------------------------- */
/* Words.                                                           */

/* ASCII bytes in Python's str.isspace(): \t \n \v \f \r \x1c-\x1f, space. */
static const uint8_t asc_space[128] = {
	['\t'] = 1, ['\n'] = 1, [0x0b] = 1, [0x0c] = 1, ['\r'] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [' '] = 1
};

/*
 * Length of the character at p[0 .. n) when it is whitespace, 0 when it
 * is not, -1 when it is not UTF-8.
 */
static inline int
space_at(const uint8_t *p, size_t n)
{
	uint32_t cp;
	int k;

	if (p[0] < 0x80)
		return asc_space[p[0]];
	if ((k = uni_utf8_decode(p, n, &cp)) == 0)
		return -1;
	return uni_is_pyspace(cp) ? k : 0;
}

int
fqd_next_word(const uint8_t *p, size_t n, size_t *pos, const uint8_t **w,
    size_t *wn)
{
	size_t i = *pos, start;
	uint32_t cp;
	int k;

	/* Skip whitespace. */
	for (;;) {
		if (i >= n) {
			*pos = n;
			return 0;
		}
		if (p[i] < 0x80) {
			if (!asc_space[p[i]])
				break;
			i++;
			continue;
		}
		if ((k = space_at(p + i, n - i)) < 0) {
			*pos = i;
			errno = EILSEQ;
			return -1;
		}
		if (k == 0)
			break;
		i += (size_t)k;
	}
	start = i;
	/* The word: up to the next whitespace. */
	while (i < n) {
		if (p[i] < 0x80) {
			if (asc_space[p[i]])
				break;
			i++;
			continue;
		}
		if ((k = uni_utf8_decode(p + i, n - i, &cp)) == 0) {
			*pos = i;
			errno = EILSEQ;
			return -1;
		}
		if (uni_is_pyspace(cp))
			break;
		i += (size_t)k;
	}
	*w = p + start;
	*wn = i - start;
	*pos = i;
	return 1;
}

/* ---------------------------------------------------------------- */
/* Lines with universal newlines.                                   */

#define LINES_BLOCK	(1u << 16)

struct fqd_lines {
	int		 fd;
	struct rp_window w;		/* the bytes read, and the range */
	uint64_t	 lineno;
	uint64_t	 lineoff;	/* input offset of the current line */
};

struct fqd_lines *
fqd_lines_new(int fd)
{
	struct fqd_lines *r = calloc(1, sizeof *r);

	if (r == NULL)
		return NULL;
	r->fd = fd;
	r->w.cap = LINES_BLOCK;
	if ((r->w.buf = malloc(r->w.cap)) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void
fqd_lines_free(struct fqd_lines *r)
{
	if (r == NULL)
		return;
	free(r->w.buf);
	free(r);
}

int
fqd_lines_range(struct fqd_lines *r, uint64_t off, uint64_t len)
{
	return rp_window_range(&r->w, r->fd, off, len);
}

int
fqd_lines_next(struct fqd_lines *r, const uint8_t **p, size_t *n)
{
	size_t scan = r->w.start;		/* no terminator before this */

	for (;;) {
		uint8_t *s = r->w.buf + scan, *nl, *cr;
		size_t len = r->w.end - scan;

		nl = len ? memchr(s, '\n', len) : NULL;
		cr = len ? memchr(s, '\r', nl ? (size_t)(nl - s) : len) : NULL;
		if (cr != NULL && (cr + 1 < r->w.buf + r->w.end || r->w.eof)) {
			size_t at = (size_t)(cr - r->w.buf);

			*p = r->w.buf + r->w.start;
			*n = at - r->w.start;
			r->lineoff = r->w.base + r->w.start;
			r->w.start = at + 1;
			if (at + 1 < r->w.end && r->w.buf[at + 1] == '\n')
				r->w.start++;
			r->lineno++;
			return 1;
		}
		if (cr == NULL && nl != NULL) {
			size_t at = (size_t)(nl - r->w.buf);

			*p = r->w.buf + r->w.start;
			*n = at - r->w.start;
			r->lineoff = r->w.base + r->w.start;
			r->w.start = at + 1;
			r->lineno++;
			return 1;
		}
		if (r->w.eof) {
			if (r->w.start == r->w.end)
				return 0;
			*p = r->w.buf + r->w.start;
			*n = r->w.end - r->w.start;
			r->lineoff = r->w.base + r->w.start;
			r->w.start = r->w.end;
			r->lineno++;
			return 1;
		}
		/* A "\r" last in the buffer waits for the next byte. */
		scan = cr != NULL ? (size_t)(cr - r->w.buf) : r->w.end;
		scan -= r->w.start;
		if (rp_window_fill(&r->w, r->fd, LINES_BLOCK / 2) == -1)
			return -1;
		scan += r->w.start;
	}
}

uint64_t
fqd_lines_count(const struct fqd_lines *r)
{
	return r->lineno;
}

uint64_t
fqd_lines_offset(const struct fqd_lines *r)
{
	return r->lineoff;
}

/* ---------------------------------------------------------------- */
/* Dictionaries.                                                    */

struct fqd_ent {
	uint64_t	count;
	uint64_t	hash;
	size_t		off;	/* into pool */
	size_t		len;
};

/*
 * A direct-mapped cache of short words in front of the table: word
 * frequencies are Zipfian, so most lookups compare one entry and skip
 * SipHash.  Its slot comes from a multiply under a random factor; a
 * collision, even a forced one, only costs a miss.
 */
#define CACHE_BITS	14
#define CACHE_WORD	19
#define CACHE_AFTER	4096	/* lookups before the cache is made */

struct fqd_cent {
	int32_t		id;	/* -1: the dictionary lacks the word */
	uint8_t		len;	/* 0: empty (the empty word is never cached) */
	char		w[CACHE_WORD];
};

struct fqd {
	struct fqd_cent	*cache;		/* NULL until CACHE_AFTER lookups */
	uint64_t	 cmul;
	uint64_t	 lookups;
	struct fqd_ent	*ent;
	size_t		 n, entcap;
	char		*pool;
	size_t		 poollen, poolcap;
	uint64_t	*slot;	/* high 32 bits of the hash << 32 | id + 1; 0 empty */
	size_t		 mask;
	size_t		 nspecial;
	uint8_t		 key[RP_HASHKEY_BYTES];
};

static uint64_t
fqd_hash(const struct fqd *d, const void *p, size_t n)
{
	return rp_shorthash(d->key, p, n);
}

static inline struct fqd_cent *
cache_slot(const struct fqd *d, const void *w, size_t n)
{
	const uint8_t *p = w;
	uint64_t x = n;

	/* the first and the last bytes (n >= 1) */
	if (n >= 8) {
		uint64_t a, b;

		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
		x ^= a ^ (b << 7 | b >> 57);
	} else if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		x ^= a | (uint64_t)b << 32;
	} else
		x ^= (uint64_t)p[0] << 8 | (uint64_t)p[n / 2] << 16 |
		    (uint64_t)p[n - 1] << 24;
	x *= d->cmul;
	return &d->cache[(x ^ x >> 29) >> (64 - CACHE_BITS)];
}

/* c holds the n bytes at w (1 <= n <= CACHE_WORD) */
static inline int
cache_is(const struct fqd_cent *c, const void *w, size_t n)
{
	const uint8_t *a = (const uint8_t *)c->w, *b = w;
	size_t i;

	if (c->len != n)
		return 0;
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static inline void
cache_put(struct fqd *d, const void *w, size_t n, long id)
{
	struct fqd_cent *c;

	if (d->cache == NULL && ++d->lookups > CACHE_AFTER)
		d->cache = calloc((size_t)1 << CACHE_BITS, sizeof *d->cache);
	if (d->cache == NULL || n == 0 || n > CACHE_WORD)
		return;
	c = cache_slot(d, w, n);
	c->id = (int32_t)id;
	c->len = (uint8_t)n;
	memcpy(c->w, w, n);
}

/* The slot that holds w, or the empty slot where it would go. */
static size_t
probe(const struct fqd *d, const void *w, size_t n, uint64_t h)
{
	size_t i = h & d->mask;
	uint64_t s;

	while ((s = d->slot[i]) != 0) {
		if (s >> 32 == h >> 32) {
			const struct fqd_ent *e = &d->ent[(uint32_t)s - 1];

			if (e->len == n && memcmp(d->pool + e->off, w, n) == 0)
				return i;
		}
		i = (i + 1) & d->mask;
	}
	return i;
}

/* Rebuild the table for 'want' ids, with ids 0 .. upto-1 (a later id wins a name). */
static int
rehash(struct fqd *d, size_t want, size_t upto)
{
	size_t sz = 64;
	uint64_t *ns;

	while (sz < want * 2)
		sz *= 2;
	if ((ns = calloc(sz, sizeof *ns)) == NULL)
		return -1;
	free(d->slot);
	d->slot = ns;
	d->mask = sz - 1;
	for (size_t id = 0; id < upto; id++) {
		const struct fqd_ent *e = &d->ent[id];
		size_t i = probe(d, d->pool + e->off, e->len, e->hash);

		d->slot[i] = (e->hash >> 32) << 32 | (uint64_t)(id + 1);
	}
	return 0;
}

struct fqd *
fqd_new(int specials)
{
	static const char *const sp[FQD_NSPECIAL] = {
		"<s>", "<pad>", "</s>", "<unk>"
	};
	struct fqd *d;

	if ((d = calloc(1, sizeof *d)) == NULL)
		return NULL;
	if (rp_hash_key(d->key, sizeof d->key) == -1 ||
	    rp_hash_key(&d->cmul, sizeof d->cmul) == -1) {
		free(d);
		errno = ENOSYS;
		return NULL;
	}
	d->cmul |= 1;
	if (rehash(d, 16, 0) == -1) {
		free(d);
		return NULL;
	}
	if (specials) {
		for (int i = 0; i < FQD_NSPECIAL; i++)
			if (fqd_add(d, sp[i], strlen(sp[i]), 1) == -1) {
				fqd_free(d);
				return NULL;
			}
		d->nspecial = FQD_NSPECIAL;
	}
	return d;
}

void
fqd_free(struct fqd *d)
{
	if (d == NULL)
		return;
	free(d->cache);
	free(d->ent);
	free(d->pool);
	free(d->slot);
	free(d);
}

size_t
fqd_size(const struct fqd *d)
{
	return d->n;
}

size_t
fqd_nspecial(const struct fqd *d)
{
	return d->nspecial;
}

const char *
fqd_symbol(const struct fqd *d, size_t id, size_t *len)
{
	if (len != NULL)
		*len = d->ent[id].len;
	return d->pool + d->ent[id].off;
}

uint64_t
fqd_count(const struct fqd *d, size_t id)
{
	return d->ent[id].count;
}

int
fqd_cache_now(struct fqd *d)
{
	if (d->cache == NULL &&
	    (d->cache = calloc((size_t)1 << CACHE_BITS, sizeof *d->cache)) == NULL)
		return -1;
	return 0;
}

long
fqd_find(struct fqd *d, const void *w, size_t n)
{
	uint64_t h, s;
	long id;

	if (d->cache != NULL && n - 1 < CACHE_WORD) {
		const struct fqd_cent *c = cache_slot(d, w, n);

		if (cache_is(c, w, n))
			return c->id;
	}
	h = fqd_hash(d, w, n);
	s = d->slot[probe(d, w, n, h)];
	id = s == 0 ? -1 : (long)((uint32_t)s - 1);
	cache_put(d, w, n, id);
	return id;
}

int
fqd_bump(struct fqd *d, size_t id, uint64_t count)
{
	if (d->ent[id].count > UINT64_MAX - count) {
		errno = EOVERFLOW;
		return -1;
	}
	d->ent[id].count += count;
	return 0;
}

/* Append a new symbol, not yet in the table; returns its id. */
static long
push(struct fqd *d, const void *w, size_t n, uint64_t count, uint64_t h)
{
	struct fqd_ent *e;

	if (d->n >= FQD_MAX_SYMBOLS) {
		errno = EOVERFLOW;
		return -1;
	}
	if (d->n == d->entcap) {
		size_t c = d->entcap ? d->entcap * 2 : 64;
		struct fqd_ent *ne = realloc(d->ent, c * sizeof *ne);

		if (ne == NULL)
			return -1;
		d->ent = ne;
		d->entcap = c;
	}
	if (d->poolcap - d->poollen < n + 1) {
		size_t c = d->poolcap ? d->poolcap : 4096;
		char *np;

		while (c - d->poollen < n + 1) {
			if (c > SIZE_MAX / 2) {
				errno = ENOMEM;
				return -1;
			}
			c *= 2;
		}
		if ((np = realloc(d->pool, c)) == NULL)
			return -1;
		d->pool = np;
		d->poolcap = c;
	}
	e = &d->ent[d->n];
	e->count = count;
	e->hash = h;
	e->off = d->poollen;
	e->len = n;
	if (n > 0)
		memcpy(d->pool + d->poollen, w, n);
	d->pool[d->poollen + n] = '\0';
	d->poollen += n + 1;
	return (long)d->n++;
}

/*
 * Append a new symbol and point the table at it (replacing any older
 * id of the same name, as add_symbol(overwrite=True) does).
 */
static long
append(struct fqd *d, const void *w, size_t n, uint64_t count, uint64_t h,
    size_t slot)
{
	long id;

	if (d->n >= FQD_MAX_SYMBOLS) {
		errno = EOVERFLOW;
		return -1;
	}
	if ((d->n + 1) * 2 > d->mask + 1) {
		if (rehash(d, d->n + 1, d->n) == -1)
			return -1;
		slot = probe(d, w, n, h);
	}
	if ((id = push(d, w, n, count, h)) == -1)
		return -1;
	d->slot[slot] = (h >> 32) << 32 | (uint64_t)(id + 1);
	cache_put(d, w, n, id);
	return id;
}

long
fqd_add(struct fqd *d, const void *w, size_t n, uint64_t count)
{
	uint64_t h, s;
	size_t i;

	if (d->cache != NULL && n - 1 < CACHE_WORD) {
		const struct fqd_cent *c = cache_slot(d, w, n);

		if (c->id >= 0 && cache_is(c, w, n)) {
			if (fqd_bump(d, (size_t)c->id, count) == -1)
				return -1;
			return c->id;
		}
	}
	h = fqd_hash(d, w, n);
	i = probe(d, w, n, h);
	s = d->slot[i];

	if (s != 0) {
		size_t id = (uint32_t)s - 1;

		if (fqd_bump(d, id, count) == -1)
			return -1;
		cache_put(d, w, n, (long)id);
		return (long)id;
	}
	return append(d, w, n, count, h, i);
}

long
fqd_count_line(struct fqd *d, const uint8_t *p, size_t n, size_t *bad)
{
	size_t pos = 0, wn;
	const uint8_t *w;
	long words = 0;
	int rc;

	while ((rc = fqd_next_word(p, n, &pos, &w, &wn)) == 1) {
		if (fqd_add(d, w, wn, 1) == -1)
			return -1;
		words++;
	}
	if (rc == -1) {
		*bad = pos;
		return -1;
	}
	if (d->nspecial > 0 && fqd_bump(d, FQD_EOS, 1) == -1)
		return -1;
	return words;
}

/* ---- finalize ---- */

static int
cmp_sym(const struct fqd *d, uint32_t a, uint32_t b)
{
	const struct fqd_ent *x = &d->ent[a], *y = &d->ent[b];
	size_t m = x->len < y->len ? x->len : y->len;
	int c = m ? memcmp(d->pool + x->off, d->pool + y->off, m) : 0;

	if (c != 0)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* count high first, then symbol bytes (code point order for UTF-8) */
static int
before(const struct fqd *d, uint32_t a, uint32_t b)
{
	if (d->ent[a].count != d->ent[b].count)
		return d->ent[a].count > d->ent[b].count;
	return cmp_sym(d, a, b) < 0;
}

/* A merge sort: no qsort() context pointer needed, O(n log n) always. */
static void
msort(const struct fqd *d, uint32_t *v, uint32_t *tmp, size_t n)
{
	size_t h, i, j, k;

	if (n < 16) {
		for (i = 1; i < n; i++) {
			uint32_t x = v[i];

			for (j = i; j > 0 && before(d, x, v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	h = n / 2;
	msort(d, v, tmp, h);
	msort(d, v + h, tmp, n - h);
	if (!before(d, v[h], v[h - 1]))
		return;
	memcpy(tmp, v, h * sizeof *v);
	for (i = 0, j = h, k = 0; i < h && j < n; k++)
		v[k] = before(d, v[j], tmp[i]) ? v[j++] : tmp[i++];
	while (i < h)
		v[k++] = tmp[i++];
}

int
fqd_sorted(const struct fqd *d, size_t k, uint32_t *out)
{
	size_t m = d->n > k ? d->n - k : 0;
	uint32_t *tmp;

	for (size_t i = 0; i < m; i++)
		out[i] = (uint32_t)(k + i);
	if ((tmp = malloc((m / 2 + 1) * sizeof *tmp)) == NULL)
		return -1;
	msort(d, out, tmp, m);
	free(tmp);
	return 0;
}

int
fqd_finalize(struct fqd *d, long long threshold, long long nwords,
    long long padding_factor)
{
	size_t ns = d->nspecial, m = d->n - ns, keep, i;
	uint32_t *ord;
	struct fqd_ent *ne;

	if (nwords <= 0)
		nwords = (long long)d->n;
	keep = nwords - (long long)ns <= 0 ? 0 :
	    (unsigned long long)(nwords - (long long)ns) < m ?
	    (size_t)(nwords - (long long)ns) : m;
	if ((ord = malloc((m + 1) * sizeof *ord)) == NULL)
		return -1;
	if (fqd_sorted(d, ns, ord) == -1) {
		free(ord);
		return -1;
	}
	for (i = 0; i < keep; i++)
		if (threshold > 0 &&
		    d->ent[ord[i]].count < (unsigned long long)threshold)
			break;
	keep = i;
	if ((ne = malloc((ns + keep + 1) * sizeof *ne)) == NULL) {
		free(ord);
		return -1;
	}
	memcpy(ne, d->ent, ns * sizeof *ne);
	for (i = 0; i < keep; i++)
		ne[ns + i] = d->ent[ord[i]];
	/* every id after the specials changes */
	if (d->cache != NULL)
		memset(d->cache, 0, ((size_t)1 << CACHE_BITS) * sizeof *d->cache);
	free(ord);
	free(d->ent);
	d->ent = ne;
	d->n = ns + keep;
	d->entcap = ns + keep + 1;
	if (rehash(d, d->n, d->n) == -1)
		return -1;
	if (padding_factor > 1) {
		char name[40];
		unsigned long long k = 0;

		while (d->n % (unsigned long long)padding_factor != 0) {
			int len = snprintf(name, sizeof name, "madeupword%04llu", k++);

			if (fqd_add(d, name, (size_t)len, 0) == -1)
				return -1;
		}
	}
	return 0;
}

/* ---- dict.txt ---- */

int
fqd_save(const struct fqd *d, struct buf *out)
{
	char num[24];

	for (size_t id = d->nspecial; id < d->n; id++) {
		const struct fqd_ent *e = &d->ent[id];
		int k = snprintf(num, sizeof num, " %llu\n",
		    (unsigned long long)e->count);

		if (rp_buf_reserve(out, e->len + (size_t)k) == -1)
			return -1;
		memcpy(out->p + out->len, d->pool + e->off, e->len);
		memcpy(out->p + out->len + e->len, num, (size_t)k);
		out->len += e->len + (size_t)k;
	}
	return 0;
}

static struct fqd *
load_fail(struct fqd *d, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	rp_vseterr(err, errlen, fmt, ap);
	va_end(ap);
	fqd_free(d);
	errno = e;
	return NULL;
}

/* Length of s[0 .. n) without trailing str.isspace() characters. */
static size_t
rstrip(const uint8_t *s, size_t n)
{
	while (n > 0) {
		size_t k = n - 1;

		if (s[k] < 0x80) {
			if (!asc_space[s[k]])
				break;
			n = k;
			continue;
		}
		/* back to the lead byte of the last character */
		while (k > 0 && (s[k] & 0xC0) == 0x80 && n - k < 4)
			k--;
		if (space_at(s + k, n - k) != (int)(n - k))
			break;
		n = k;
	}
	return n;
}

/* Python's int() of a field (ASCII digits, sign, '_' between digits). */
static int
parse_count(const uint8_t *s, size_t n, long long *v)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	unsigned long long x = 0;

	while (n > 0 && s[n - 1] < 0x80 && asc_space[s[n - 1]])
		n--;
	while (i < n && s[i] < 0x80 && asc_space[s[i]])
		i++;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (; i < n; i++) {
		if (s[i] == '_' && digits && i + 1 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '9')
			continue;
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (x > (ULLONG_MAX - 9) / 10)
			return -1;
		x = x * 10 + (s[i] - '0');
		digits = 1;
	}
	if (!digits || x > LLONG_MAX)
		return -1;
	*v = neg ? -(long long)x : (long long)x;
	return 0;
}

#if defined(__GNUC__)
#define PREFETCH(p)	__builtin_prefetch(p)
#else
#define PREFETCH(p)	((void)0)
#endif
#define AHEAD		16	/* symbols whose slots are fetched ahead */

/*
 * Two passes: the lines are parsed and their symbols appended up to the
 * first line at fault; then the symbols go into a table made once for
 * them all, in order (so that the first duplicate is the one named, and
 * a fault on a later line only after it), each slot fetched from memory
 * AHEAD symbols before it is needed: at millions of symbols, waiting
 * for the table's memory was most of the time.
 */
struct fqd *
fqd_load(const uint8_t *p, size_t n, char *err, size_t errlen)
{
	static const char ow[] = "#fairseq:overwrite";
	struct fqd *d;
	struct buf over = { 0 };	/* per line: #fairseq:overwrite */
	size_t pos = 0, first, id, slot;
	uint64_t lineno = 0, bad = 0;
	char why[FQD_ERRMAX];

	if ((d = fqd_new(1)) == NULL)
		return load_fail(NULL, err, errlen, "%s", strerror(errno));
	first = d->n;
	if (n > 0 && (d->pool = realloc(d->pool, d->poollen + n + 1)) == NULL)
		return load_fail(d, err, errlen, "%s", strerror(errno));
	if (n > 0)
		d->poolcap = d->poollen + n + 1;
	while (pos < n) {
		const uint8_t *s = p + pos, *nl, *cr, *sp;
		size_t len = n - pos, k, v;
		long long cnt;
		uint8_t overwrite = 0;

		nl = memchr(s, '\n', len);
		cr = memchr(s, '\r', nl ? (size_t)(nl - s) : len);
		if (cr != NULL) {
			len = (size_t)(cr - s);
			pos += len + 1;
			if (pos < n && p[pos] == '\n')
				pos++;
		} else if (nl != NULL) {
			len = (size_t)(nl - s);
			pos += len + 1;
		} else
			pos = n;
		lineno++;
		if ((v = uni_utf8_valid_prefix(s, len)) != len) {
			snprintf(why, sizeof why,
			    "line %llu: invalid UTF-8 at byte offset %zu",
			    (unsigned long long)lineno, (size_t)(s - p) + v);
			bad = lineno;
			break;
		}
		k = rstrip(s, len);
		for (int pass = 0; pass < 2; pass++) {
			sp = NULL;
			for (size_t j = k; j > 0; j--)
				if (s[j - 1] == ' ') {
					sp = s + j - 1;
					break;
				}
			if (sp == NULL)
				break;
			if (pass == 0 && (size_t)(s + k - sp - 1) == sizeof ow - 1 &&
			    memcmp(sp + 1, ow, sizeof ow - 1) == 0) {
				overwrite = 1;
				k = (size_t)(sp - s);
				continue;
			}
			break;
		}
		if (sp == NULL ||
		    parse_count(sp + 1, (size_t)(s + k - sp - 1), &cnt) == -1) {
			snprintf(why, sizeof why, "line %llu: expected "
			    "'symbol count [#fairseq:overwrite]'",
			    (unsigned long long)lineno);
			bad = lineno;
			break;
		}
		k = (size_t)(sp - s);
		/* fairseq keeps a negative count as it is; so do the ids */
		if (push(d, s, k, (uint64_t)cnt, fqd_hash(d, s, k)) == -1 ||
		    rp_buf_append(&over, &overwrite, 1) == -1) {
			rp_buf_free(&over);
			return load_fail(d, err, errlen, "%s", strerror(errno));
		}
	}
	if (rehash(d, d->n, first) == -1) {
		rp_buf_free(&over);
		return load_fail(d, err, errlen, "%s", strerror(errno));
	}
	for (id = first; id < d->n; id++) {
		const struct fqd_ent *e = &d->ent[id];

		if (id + AHEAD < d->n)
			PREFETCH(&d->slot[d->ent[id + AHEAD].hash & d->mask]);
		slot = probe(d, d->pool + e->off, e->len, e->hash);
		if (d->slot[slot] != 0 && !over.p[id - first]) {
			snprintf(why, sizeof why, "line %llu: duplicate symbol "
			    "'%.*s' (fairseq needs #fairseq:overwrite)",
			    (unsigned long long)(id - first + 1),
			    (int)(e->len > 60 ? 60 : e->len), d->pool + e->off);
			bad = id - first + 1;
			break;
		}
		d->slot[slot] = (e->hash >> 32) << 32 | (uint64_t)(id + 1);
	}
	rp_buf_free(&over);
	if (bad != 0) {
		errno = EINVAL;
		return load_fail(d, err, errlen, "%s", why);
	}
	return d;
}

/* ---- encode_line ---- */

long
fqd_encode_line(struct fqd *d, const uint8_t *p, size_t n,
    uint32_t **ids, size_t *cap, size_t *nunk, size_t *bad)
{
	size_t pos = 0, wn, k = 0, unk = 0;
	const uint8_t *w;
	int rc;

	for (;;) {
		if (k + 1 > *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			uint32_t *ni = realloc(*ids, c * sizeof *ni);

			if (ni == NULL)
				return -1;
			*ids = ni;
			*cap = c;
		}
		if ((rc = fqd_next_word(p, n, &pos, &w, &wn)) != 1)
			break;
		long id = fqd_find(d, w, wn);

		if (id < 0) {
			id = FQD_UNK;
			unk++;
		}
		(*ids)[k++] = (uint32_t)id;
	}
	if (rc == -1) {
		*bad = pos;
		return -1;
	}
	(*ids)[k++] = FQD_EOS;
	*nunk = unk;
	return (long)k;
}
