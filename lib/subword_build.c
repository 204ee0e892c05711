/*
 * Building a SubwordTextEncoder vocabulary as tensor2tensor does:
 * corpus sampling, token counts (and their files), build_from_token_counts
 * and build_to_target_size.
 *
 * One iteration counts every substring of every escaped token that
 * starts at a boundary of its current segmentation.  The suffixes of
 * all escaped tokens (one per code point) are sorted once, by prefix
 * doubling, in O(N log N) time whatever the text, with the common
 * prefix of each with the one before.  An iteration then walks the
 * suffix tree bottom up over them (its nodes are the intervals of
 * suffixes sharing a prefix), counting each substring with the
 * suffixes below it that start a segment, and chooses the subtokens on
 * the way (see count_select()): no substring is ever held, and memory
 * stays linear in the text of the distinct tokens.  Greedy
 * segmentation gives every suffix the longest entry of the current list
 * it starts with, in one sweep over the nested intervals of the
 * entries.
 *
 * With jobs, an iteration's walk and sweep go by parts of the sorted
 * suffixes that begin where the common prefix is 0 (whole subtrees of
 * the root, which share nothing), each in a thread of the worker pool;
 * each part's subtokens are sorted there and the parts merged, by
 * stretches of the result side by side, in the order the whole would
 * have, so the list is the same for any number.  The suffix sort's
 * passes, the common prefixes and the reading of count files go by
 * parts too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "hashkey.h"
#include "pool.h"
#include "subword.h"
#include "subword_int.h"
#include "unicode.h"

/* ---- sampling --------------------------------------------------------- */

void
sw_sample_init(struct sw_sampler *s, double budget, uint64_t file_size)
{
	double every = (double)file_size / budget / 2;

	s->budget = budget;
	s->every = every >= 1 ? (uint64_t)every : 0;
	s->skipped = 0;
}

int
sw_sample_next(struct sw_sampler *s)
{
	if (s->skipped < s->every) {
		s->skipped++;
		return 0;
	}
	if (s->budget <= 0)
		return -1;
	s->skipped = 0;
	return 1;
}

void
sw_sample_charge(struct sw_sampler *s, size_t cps)
{
	s->budget -= (double)cps;
}

/* ---- token counts ----------------------------------------------------- */

/* A hash slot: token index + 1 (0 = empty) and the hash's high bits. */
struct cslot {
	uint32_t	 idx;
	uint32_t	 h;
};

struct sw_counts {
	uint8_t		*arena;		/* token bytes */
	size_t		 alen, acap;
	uint64_t	*off;		/* per token: arena offset */
	uint32_t	*len;
	int64_t		*cnt;
	uint64_t	*hash;
	size_t		 n, cap;
	struct cslot	*slot;
	size_t		 nslots;
	struct sw_span	*spans;
	size_t		 spancap;
	uint8_t		 key[RP_HASHKEY_BYTES];	/* the token hash's */
};

/* A new table, hashing under 'key' (NULL: a random one of its own). */
static struct sw_counts *
counts_new(const uint8_t *key)
{
	struct sw_counts *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if (key != NULL)
		memcpy(c->key, key, sizeof(c->key));
	else if (rp_hash_key(c->key, sizeof(c->key)) == -1) {
		free(c);
		errno = ENOSYS;
		return NULL;
	}
	c->nslots = 1024;
	if ((c->slot = calloc(c->nslots, sizeof(*c->slot))) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

struct sw_counts *
sw_counts_new(void)
{
	return counts_new(NULL);
}

void
sw_counts_free(struct sw_counts *c)
{
	if (c == NULL)
		return;
	free(c->arena);
	free(c->off);
	free(c->len);
	free(c->cnt);
	free(c->hash);
	free(c->slot);
	free(c->spans);
	free(c);
}

size_t
sw_counts_size(const struct sw_counts *c)
{
	return c->n;
}

static int
counts_rehash(struct sw_counts *c)
{
	size_t ns = c->slot != NULL ? c->nslots * 2 : c->nslots, i, j;
	struct cslot *s;

	if ((s = calloc(ns, sizeof(*s))) == NULL)
		return -1;
	for (i = 0; i < c->n; i++) {
		for (j = c->hash[i] & (ns - 1); s[j].idx != 0; j = (j + 1) & (ns - 1))
			;
		s[j].idx = (uint32_t)i + 1;
		s[j].h = (uint32_t)(c->hash[i] >> 32);
	}
	free(c->slot);
	c->slot = s;
	c->nslots = ns;
	return 0;
}

void
sw_counts_compact(struct sw_counts *c)
{
	free(c->hash);
	free(c->slot);
	free(c->spans);
	c->hash = NULL;
	c->slot = NULL;
	c->spans = NULL;
	c->spancap = 0;
	c->nslots = 0;
}

/* The lookup table again after sw_counts_compact(). */
static int
counts_reindex(struct sw_counts *c)
{
	size_t i;

	if ((c->hash = malloc((c->cap ? c->cap : 1) * sizeof(*c->hash))) == NULL)
		return -1;
	for (i = 0; i < c->n; i++)
		c->hash[i] = rp_shorthash(c->key, c->arena + c->off[i], c->len[i]);
	c->nslots = 512;
	while (c->nslots < 2 * c->n + 2)
		c->nslots *= 2;
	return counts_rehash(c);
}

/*
 * The slot of a token whose hash under c->key is h (the lookup table
 * there): the token's, or the empty one where it would go.
 */
static size_t
counts_slot(const struct sw_counts *c, const uint8_t *tok, size_t n,
    uint64_t h)
{
	size_t mask = c->nslots - 1, j;
	uint32_t k;

	for (j = h & mask; (k = c->slot[j].idx) != 0; j = (j + 1) & mask) {
		if (c->slot[j].h != (uint32_t)(h >> 32))
			continue;
		k--;
		if (c->len[k] == n && memcmp(c->arena + c->off[k], tok, n) == 0)
			break;
	}
	return j;
}

/* sw_counts_add() of a token whose hash under c->key is h. */
static int
counts_add_hashed(struct sw_counts *c, const uint8_t *tok, size_t n,
    int64_t count, uint64_t h)
{
	size_t j;
	uint32_t k;

	if (n > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (c->slot == NULL && counts_reindex(c) == -1)
		return -1;
	j = counts_slot(c, tok, n, h);
	if ((k = c->slot[j].idx) != 0) {
		k--;
		if (c->cnt[k] > INT64_MAX - count) {
			errno = EOVERFLOW;
			return -1;
		}
		c->cnt[k] += count;
		return 0;
	}
	if (c->n >= UINT32_MAX - 1) {
		errno = E2BIG;
		return -1;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap;

		if (sw_grow(&c->off, &cap, c->n + 1, sizeof(*c->off)) == -1)
			return -1;
		cap = c->cap;
		if (sw_grow(&c->len, &cap, c->n + 1, sizeof(*c->len)) == -1)
			return -1;
		cap = c->cap;
		if (sw_grow(&c->cnt, &cap, c->n + 1, sizeof(*c->cnt)) == -1)
			return -1;
		cap = c->cap;
		if (sw_grow(&c->hash, &cap, c->n + 1, sizeof(*c->hash)) == -1)
			return -1;
		c->cap = cap;
	}
	if (sw_grow(&c->arena, &c->acap, c->alen + n + 1, 1) == -1)
		return -1;
	memcpy(c->arena + c->alen, tok, n);
	c->off[c->n] = c->alen;
	c->len[c->n] = (uint32_t)n;
	c->cnt[c->n] = count;
	c->hash[c->n] = h;
	c->alen += n;
	c->slot[j].idx = (uint32_t)c->n + 1;
	c->slot[j].h = (uint32_t)(h >> 32);
	c->n++;
	if (c->n * 2 > c->nslots && counts_rehash(c) == -1)
		return -1;
	return 0;
}

int
sw_counts_add(struct sw_counts *c, const uint8_t *tok, size_t n, int64_t count)
{
	return counts_add_hashed(c, tok, n, count, rp_shorthash(c->key, tok, n));
}

int
sw_counts_add_text(struct sw_counts *c, const uint8_t *p, size_t n)
{
	long nt, i;

	if ((nt = sw_tokenize(p, n, &c->spans, &c->spancap)) == -1)
		return -1;
	for (i = 0; i < nt; i++)
		if (sw_counts_add(c, p + c->spans[i].off, c->spans[i].len, 1) == -1)
			return -1;
	return 0;
}

static int
cmp_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	int r = memcmp(a, b, na < nb ? na : nb);

	if (r != 0)
		return r;
	return na < nb ? -1 : na > nb;
}

static const struct sw_counts *sort_counts;

static int
cmp_token(const void *x, const void *y)
{
	const struct sw_counts *c = sort_counts;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return cmp_bytes(c->arena + c->off[a], c->len[a], c->arena + c->off[b],
	    c->len[b]);
}

int
sw_counts_write(const struct sw_counts *c, struct buf *out)
{
	uint32_t *ord;
	size_t i, j;
	char num[32];
	int m, rc = -1;

	if ((ord = malloc((c->n ? c->n : 1) * sizeof(*ord))) == NULL)
		return -1;
	for (i = 0; i < c->n; i++)
		ord[i] = (uint32_t)i;
	sort_counts = c;
	qsort(ord, c->n, sizeof(*ord), cmp_token);
	if (sw_put(out, "#subword-counts 1\n", 18) == -1)
		goto out;
	for (i = 0; i < c->n; i++) {
		const uint8_t *t = c->arena + c->off[ord[i]];
		size_t n = c->len[ord[i]], run = 0;

		m = snprintf(num, sizeof(num), "%lld\t", (long long)c->cnt[ord[i]]);
		if (sw_put(out, num, (size_t)m) == -1)
			goto out;
		for (j = 0; j < n; j++) {
			const char *esc = t[j] == '\\' ? "\\\\" : t[j] == '\t' ? "\\t" :
			    t[j] == '\n' ? "\\n" : t[j] == '\r' ? "\\r" : NULL;

			if (esc == NULL) {
				run++;
				continue;
			}
			if (sw_put(out, t + j - run, run) == -1 ||
			    sw_put(out, esc, 2) == -1)
				goto out;
			run = 0;
		}
		if (sw_put(out, t + n - run, run) == -1 || sw_put(out, "\n", 1) == -1)
			goto out;
	}
	rc = 0;
out:
	free(ord);
	return rc;
}

int
sw_counts_read(struct sw_counts *c, const uint8_t *p, size_t n, char *err,
    size_t errlen)
{
	struct buf tok = { 0 };
	size_t pos = 0, len, i, lineno = 0;
	const uint8_t *line, *q;
	int64_t cnt;
	int rc = -1;

	if (n < 18 || memcmp(p, "#subword-counts 1\n", 18) != 0) {
		rp_seterr(err, errlen,
		    "not a subword-build count file (no \"#subword-counts 1\" line)");
		return -1;
	}
	pos = 18;
	lineno = 1;
	while (pos < n) {
		line = p + pos;
		q = memchr(line, '\n', n - pos);
		lineno++;
		if (q == NULL) {
			rp_seterr(err, errlen,
			    "line %zu: no newline at the end",
			    lineno);
			goto bad;
		}
		len = (size_t)(q - line);
		pos += len + 1;
		cnt = 0;
		for (i = 0; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
			if (cnt > (INT64_MAX - (line[i] - '0')) / 10) {
				rp_seterr(err, errlen,
				    "line %zu: count too large",
				    lineno);
				goto bad;
			}
			cnt = cnt * 10 + (line[i] - '0');
		}
		if (i == 0 || i >= len || line[i] != '\t') {
			rp_seterr(err, errlen,
			    "line %zu: expected a count, a tab and a token", lineno);
			goto bad;
		}
		tok.len = 0;
		for (i++; i < len; i++) {
			uint8_t b = line[i];

			if (b == '\\') {
				if (i + 1 >= len)
					b = 0;
				else
					b = line[i + 1] == '\\' ? '\\' : line[i + 1] == 't' ?
					    '\t' : line[i + 1] == 'n' ? '\n' :
					    line[i + 1] == 'r' ? '\r' : 0;
				if (b == 0) {
					rp_seterr(err, errlen,
					    "line %zu: bad escape in token", lineno);
					goto bad;
				}
				i++;
			}
			if (sw_put(&tok, &b, 1) == -1)
				goto oom;
		}
		if (uni_utf8_valid_prefix(tok.p, tok.len) != tok.len) {
			rp_seterr(err, errlen, "line %zu: token is not UTF-8",
			    lineno);
			goto bad;
		}
		if (sw_counts_add(c, tok.p ? tok.p : (const uint8_t *)"", tok.len,
		    cnt) == -1) {
			if (errno == EOVERFLOW) {
				rp_seterr(err, errlen,
				    "line %zu: count overflows", lineno);
				goto bad;
			}
			goto oom;
		}
	}
	rc = 0;
	goto out;
oom:
	rp_seterr(err, errlen, "%s", strerror(errno));
	goto out;
bad:
	errno = EINVAL;
out:
	free(tok.p);
	return rc;
}

/*
 * sw_counts_read_files() in threads (lib/pool.h): each file is read into
 * a table of its own, under c's key, beside the others (work), and the
 * tables are merged into c in the files' order (write), token by token in
 * each table's order, each with the hash it has: the counts and their
 * order are those of reading the files into c one after the other.  A
 * file that fails, or whose merge could overflow a count or the number
 * of tokens, is read again into c itself, in its turn, which leaves c
 * and the fault as that would.
 */
struct cfiles {
	struct sw_counts *c;
	const uint8_t *const *p;
	const size_t	*len;
	size_t		 n;
	char		*err;		/* file k's message at err + k * errlen */
	size_t		 errlen;
	int		*eno;
	struct sw_counts **t;	/* per worker: its file's table, or NULL */
	int64_t		*tsum;	/* per worker: the table's counts, summed up to INT64_MAX */
	int64_t		 csum;	/* c's counts, likewise */
};

/* The counts of c, summed (up to INT64_MAX). */
static int64_t
counts_sum(const struct sw_counts *c)
{
	int64_t s = 0;
	size_t i;

	for (i = 0; i < c->n; i++)
		s = s > INT64_MAX - c->cnt[i] ? INT64_MAX : s + c->cnt[i];
	return s;
}

static int
cfiles_read(void *arg, const struct pool_unit *u)
{
	const struct cfiles *f = arg;

	return u->seq + 1 < f->n ? POOL_MORE : POOL_LAST;
}

static void
cfiles_work(void *arg, const struct pool_unit *u)
{
	struct cfiles *f = arg;
	struct sw_counts *t;
	size_t k = (size_t)u->seq;

	if ((t = counts_new(f->c->key)) != NULL &&
	    sw_counts_read(t, f->p[k], f->len[k], NULL, 0) == -1) {
		sw_counts_free(t);
		t = NULL;
	}
	f->t[u->worker] = t;
	f->tsum[u->worker] = t != NULL ? counts_sum(t) : 0;
}

/* Whether merging t into c keeps every count and the tokens in bounds. */
static int
cfiles_fits(const struct cfiles *f, const struct sw_counts *t, int64_t tsum)
{
	const struct sw_counts *c = f->c;
	size_t i, j;
	uint32_t k;

	if (c->n + t->n >= UINT32_MAX - 1)
		return 0;
	if (f->csum <= INT64_MAX - tsum)
		return 1;
	for (i = 0; i < t->n; i++) {
		j = counts_slot(c, t->arena + t->off[i], t->len[i], t->hash[i]);
		if ((k = c->slot[j].idx) != 0 && c->cnt[k - 1] > INT64_MAX - t->cnt[i])
			return 0;
	}
	return 1;
}

static int
cfiles_write(void *arg, const struct pool_unit *u)
{
	struct cfiles *f = arg;
	struct sw_counts *c = f->c, *t = f->t[u->worker];
	size_t k = (size_t)u->seq, i;
	int rc = 0;

	f->t[u->worker] = NULL;
	if (c->slot == NULL && counts_reindex(c) == -1)
		rc = -1;
	else if (t != NULL && cfiles_fits(f, t, f->tsum[u->worker])) {
		/* Only memory can fail here. */
		for (i = 0; i < t->n && rc == 0; i++)
			rc = counts_add_hashed(c, t->arena + t->off[i], t->len[i],
			    t->cnt[i], t->hash[i]);
		f->csum = f->csum > INT64_MAX - f->tsum[u->worker] ? INT64_MAX :
		    f->csum + f->tsum[u->worker];
	} else {
		if (sw_counts_read(c, f->p[k], f->len[k], f->err + k * f->errlen,
		    f->errlen) == -1)
			f->eno[k] = errno ? errno : EINVAL;
		f->csum = counts_sum(c);
	}
	if (rc == -1) {
		f->eno[k] = ENOMEM;
		rp_seterr(f->err + k * f->errlen, f->errlen, "%s", strerror(ENOMEM));
	}
	sw_counts_free(t);
	return f->eno[k] == ENOMEM;
}

size_t
sw_counts_read_files(struct sw_counts *c, const uint8_t *const *p,
    const size_t *len, size_t n, int jobs, char *err, size_t errlen, int *eno)
{
	static const struct pool_ops ops = { cfiles_read, cfiles_work,
	    cfiles_write };
	struct cfiles f;
	size_t i;
	int w = jobs < 1 ? 1 : jobs > POOL_MAX_WORKERS ? POOL_MAX_WORKERS : jobs;

	for (i = 0; i < n; i++) {
		eno[i] = 0;
		rp_seterr(err + i * errlen, errlen, "%s", "");
	}
	if (w == 1 || n < 2) {
		for (i = 0; i < n; i++)
			if (sw_counts_read(c, p[i], len[i], err + i * errlen,
			    errlen) == -1 &&
			    (eno[i] = errno ? errno : EINVAL) == ENOMEM)
				return i;
		return n;
	}
	if ((size_t)w > n)
		w = (int)n;
	memset(&f, 0, sizeof(f));
	f.c = c;
	f.p = p;
	f.len = len;
	f.n = n;
	f.err = err;
	f.errlen = errlen;
	f.eno = eno;
	f.csum = counts_sum(c);
	f.t = calloc((size_t)w, sizeof(*f.t));
	f.tsum = calloc((size_t)w, sizeof(*f.tsum));
	if (f.t == NULL || f.tsum == NULL) {
		free(f.t);
		free(f.tsum);
		eno[0] = ENOMEM;
		rp_seterr(err, errlen, "%s", strerror(ENOMEM));
		return 0;
	}
	(void)pool_run(w, &ops, &f);
	/* A run stopped by a file stops there; the tables of later ones go. */
	for (i = 0; i < (size_t)w; i++)
		sw_counts_free(f.t[i]);
	free(f.t);
	free(f.tsum);
	for (i = 0; i < n; i++)
		if (eno[i] == ENOMEM)
			return i;
	return n;
}

/* ---- the build -------------------------------------------------------- */

void
sw_build_opts_init(struct sw_build_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->iterations = 4;
}

/*
 * A list entry.  Most are substrings of the escaped tokens, named by
 * the interval of the sorted suffixes that start with them: lb is its
 * first suffix, h its length in code points.  The others (reserved
 * tokens, alphabet characters absent from the tokens) have EXT set in
 * h and lb indexes b->xs.
 */
#define EXT	0x80000000u

struct ent {
	uint32_t	 lb;
	uint32_t	 h;
};

struct list {
	struct ent	*e;
	size_t		 n, cap;
};

static void
list_free(struct list *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/*
 * Room for n entries in l, what it held dropped (no copy): the memory of
 * one list serves the next.  0 or -1.
 */
static int
list_room(struct list *l, size_t n)
{
	l->n = 0;
	if (n <= l->cap && l->e != NULL)
		return 0;
	free(l->e);
	l->cap = 0;
	if (n > SIZE_MAX / sizeof(*l->e)) {
		l->e = NULL;
		errno = ENOMEM;
		return -1;
	}
	if ((l->e = malloc((n ? n : 1) * sizeof(*l->e))) == NULL)
		return -1;
	l->cap = n ? n : 1;
	return 0;
}

/*
 * An array of unsigned numbers 1, 2, 3, 4 or 8 bytes wide, as the largest
 * needs (3: lengths of tokens of millions of code points).
 */
struct parr {
	void		*p;
	int		 w;
};

static int
parr_width(uint64_t maxv)
{
	return maxv <= UINT8_MAX ? 1 : maxv <= UINT16_MAX ? 2 :
	    maxv < (uint32_t)1 << 24 ? 3 : maxv <= UINT32_MAX ? 4 : 8;
}

static int
parr_alloc(struct parr *a, size_t n, uint64_t maxv)
{
	a->w = parr_width(maxv);
	if (n > SIZE_MAX / 8) {
		errno = ENOMEM;
		return -1;
	}
	return (a->p = calloc(n ? n : 1, (size_t)a->w)) == NULL ? -1 : 0;
}

/*
 * An array like parr_alloc()'s in memory that is kept from one call to
 * the next (*cap bytes, all zero between calls: whoever reads it zeroes
 * it again), reallocated only to grow.  0 or -1.
 */
static int
parr_reuse(struct parr *a, size_t *cap, size_t n, uint64_t maxv)
{
	a->w = parr_width(maxv);
	if (n > SIZE_MAX / 8) {
		errno = ENOMEM;
		return -1;
	}
	if (a->p != NULL && n * (size_t)a->w <= *cap)
		return 0;
	free(a->p);
	*cap = 0;
	if ((a->p = calloc(n ? n : 1, (size_t)a->w)) == NULL)
		return -1;
	*cap = (n ? n : 1) * (size_t)a->w;
	return 0;
}

static inline uint64_t
parr_get(const struct parr *a, size_t i)
{
	switch (a->w) {
	case 1:
		return ((const uint8_t *)a->p)[i];
	case 2:
		return ((const uint16_t *)a->p)[i];
	case 3: {
		const uint8_t *q = (const uint8_t *)a->p + 3 * i;

		return q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
	}
	case 4:
		return ((const uint32_t *)a->p)[i];
	default:
		return ((const uint64_t *)a->p)[i];
	}
}

static inline void
parr_set(struct parr *a, size_t i, uint64_t v)
{
	switch (a->w) {
	case 1:
		((uint8_t *)a->p)[i] = (uint8_t)v;
		break;
	case 2:
		((uint16_t *)a->p)[i] = (uint16_t)v;
		break;
	case 3: {
		uint8_t *q = (uint8_t *)a->p + 3 * i;

		q[0] = (uint8_t)v;
		q[1] = (uint8_t)(v >> 8);
		q[2] = (uint8_t)(v >> 16);
		break;
	}
	case 4:
		((uint32_t *)a->p)[i] = (uint32_t)v;
		break;
	default:
		((uint64_t *)a->p)[i] = v;
		break;
	}
}

/*
 * The state of a build.  The escaped tokens lie back to back in 'pool'
 * (each ends with its only '_'), N code points in all.  Their suffixes,
 * one per code point, are sorted once (sa); the arrays indexed like sa
 * give, for each suffix, its common prefix with the one before it
 * within their tokens (lcp), its length to the end of its token (dep)
 * and its token's count (wt), the last two a byte each (255: look it
 * up), with
 * lengths in code points and capped where longer ones never matter.
 * Nothing else is kept per code point but two bits (a segment start
 * now, a leaf of the walk kept) and, for text outside ASCII, the byte
 * offset of every 16th code point (boff).
 */
struct build {
	const struct sw_counts *c;
	const struct sw_build_opts *o;
	uint8_t		*pool;		/* escaped tokens */
	size_t		 plen;
	size_t		 N;		/* code points in the pool */
	size_t		 ntok;
	uint32_t	*tstart;	/* per token: first code point; [ntok] = N */
	uint32_t	 maxtok;	/* longest escaped token, code points */
	uint32_t	*alpha;		/* alphabet, sorted */
	uint8_t		(*abytes)[4];
	uint8_t		*alen;
	size_t		 nalpha;
	uint32_t	*bmpidx;	/* BMP code point -> alphabet index */
	const uint8_t	**xs;		/* external strings: reserved, then alphabet */
	uint32_t	*xlen, *xcps;
	size_t		 nr;		/* reserved tokens (with <pad>, <EOS>) */
	uint8_t		*rpool;
	uint32_t	 maxcp;		/* longest substring counted (L - 1) */
	uint32_t	 capcp;		/* lcp values are capped here */
	int		 sorted;
	uint32_t	*sa;
	uint32_t	*boff;		/* of code points 0, 16, 32...; NULL if all ASCII */
	struct parr	 lcp, dep;
	uint8_t		*wt;
	uint64_t	*mark;		/* per code point: a segment start now */
	uint64_t	*leaf;		/* per suffix: a leaf kept there (the walk) */
	int64_t		*acnt;		/* per alphabet character: its count */
	uint32_t	*alb;		/* per alphabet character: its lb, or NONE */
	int		 narrow;	/* every count sum fits 32 bits */
	int		 jobs;		/* threads an iteration may use */
	size_t		*cut;		/* the parts of the sorted suffixes */
	size_t		 ncut;		/* their number: cut[0] = 0 .. cut[ncut] = N */
	/*
	 * Memory kept from one iteration and one probe to the next, so that
	 * they neither fault fresh pages in nor copy growing blocks again:
	 * a walk's block a part (ws[ncut]), the longest entry of each suffix
	 * (best, bestcap bytes, zero between iterations) and the list that
	 * mark_segments() sorts its intervals into (spare).
	 */
	struct walk	*ws;
	struct parr	 best;
	size_t		 bestcap;
	struct list	 spare;
};

/*
 * Whether memory of 'bytes' is kept for the next iteration: up to two
 * bytes a code point (and a MiB) each.  More is given back, as a
 * chain of nodes as deep as a long token takes: the bound of the
 * build's memory (about 32 bytes a code point) then stays as it is
 * without the memory kept.
 */
static int
held_ok(const struct build *b, size_t bytes)
{
	return bytes <= 2 * b->N + ((size_t)1 << 20);
}

/*
 * A walk of the sorted suffixes lo .. hi - 1 (count_select()): its
 * working memory.  The walks of parts that begin where the common
 * prefix is 0 (each a set of whole subtrees of the root) are
 * independent, and run side by side, each with its own.
 */
struct walk {
	size_t		 lo, hi;
	int		 all;		/* the walk counts every suffix */
	int64_t		*side;		/* the stack's wide counts (ST_SIDE) */
	size_t		 nside, sidecap;
	unsigned char	*wbuf;		/* the block */
	size_t		 wcap;		/* its bytes */
	size_t		 nk;		/* kept ones at its end */
	int64_t		 min_count;
};

#define NONE	UINT32_MAX

/*
 * The parts a build's work on its N suffixes goes in: one a job, with
 * PART_MIN suffixes or more each.  A small text is one part (a thread
 * would cost more than it saves).
 */
#define PART_MIN	8192

static size_t
parts_of(int jobs, size_t n)
{
	size_t np;

	np = jobs > 1 && n >= 2 * PART_MIN ? (size_t)jobs : 1;
	if (np > n / PART_MIN && np > 1)
		np = n / PART_MIN;
	return np;
}

static size_t
build_parts(const struct build *b)
{
	return parts_of(b->jobs, b->N);
}

/* Bytes of the UTF-8 sequence that starts with b. */
static inline uint32_t
u8len(uint8_t b)
{
	return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/* The byte offset of code point p (0 <= p <= N). */
static inline size_t
boff(const struct build *b, size_t p)
{
	size_t o, k;

	if (b->boff == NULL)
		return p;
	o = b->boff[p >> 4];
	for (k = p & 15; k > 0; k--)
		o += u8len(b->pool[o]);
	return o;
}

/* The token of code point p: the last one that starts at or before p. */
static size_t
token_at(const struct build *b, uint32_t p)
{
	size_t lo = 0, hi = b->ntok, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (b->tstart[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The count of the token of code point p. */
static int64_t
weight_at(const struct build *b, uint32_t p)
{
	return b->c->cnt[token_at(b, p)];
}

/*
 * The length of the suffix at code point p to the end of its token,
 * capped at maxcp: dep's value, which holds 255 for 255 and more.
 */
static uint32_t
dep_at(const struct build *b, uint32_t p)
{
	uint32_t dist = b->tstart[token_at(b, p) + 1] - p;

	return dist < b->maxcp ? dist : b->maxcp;
}

static size_t
alpha_index(const struct build *b, uint32_t cp)
{
	size_t lo = 0, hi = b->nalpha, mid;

	if (cp < 0x10000 && b->bmpidx != NULL)
		return b->bmpidx[cp];
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->alpha[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The bytes of a list entry. */
static const uint8_t *
ent_bytes(const struct build *b, struct ent e, size_t *len)
{
	size_t p, q;

	if (e.h & EXT) {
		*len = b->xlen[e.lb];
		return b->xs[e.lb];
	}
	p = b->sa[e.lb];
	q = boff(b, p);
	*len = boff(b, p + e.h) - q;
	return b->pool + q;
}

static int par_run(struct build *, size_t,
    int (*)(struct build *, void *, size_t), void *);

/*
 * Sort k[0 .. m) ascending, v[] alongside: quicksort in three ways (keys
 * repeat), heapsort below 'depth' levels, so O(m log m) whatever the
 * keys, in place.
 */
static void
pairs_swap(uint32_t *k, uint32_t *v, size_t a, size_t c)
{
	uint32_t t;

	t = k[a];
	k[a] = k[c];
	k[c] = t;
	t = v[a];
	v[a] = v[c];
	v[c] = t;
}

static void
pairs_sift(uint32_t *k, uint32_t *v, size_t at, size_t m)
{
	size_t c;

	for (; (c = 2 * at + 1) < m; at = c) {
		if (c + 1 < m && k[c + 1] > k[c])
			c++;
		if (k[at] >= k[c])
			return;
		pairs_swap(k, v, at, c);
	}
}

static void
pairs_sort(uint32_t *k, uint32_t *v, size_t m, int depth)
{
	size_t lt, i, gt;
	uint32_t a, c, d, piv, kk, vv;

	while (m > 16) {
		if (depth-- <= 0) {
			for (i = m / 2; i-- > 0;)
				pairs_sift(k, v, i, m);
			for (i = m; i-- > 1;) {
				pairs_swap(k, v, 0, i);
				pairs_sift(k, v, 0, i);
			}
			return;
		}
		a = k[0];
		c = k[m / 2];
		d = k[m - 1];
		piv = a < c ? (c < d ? c : a < d ? d : a) : (a < d ? a : c < d ? d : c);
		/* [0, lt) below, [lt, i) equal, [gt, m) above. */
		for (lt = 0, i = 0, gt = m; i < gt;) {
			if (k[i] < piv)
				pairs_swap(k, v, lt++, i++);
			else if (k[i] > piv)
				pairs_swap(k, v, i, --gt);
			else
				i++;
		}
		/* The smaller side in a call, the larger in the loop. */
		if (lt < m - gt) {
			pairs_sort(k, v, lt, depth);
			k += gt;
			v += gt;
			m -= gt;
		} else {
			pairs_sort(k + gt, v + gt, m - gt, depth);
			m = lt;
		}
	}
	for (i = 1; i < m; i++) {
		kk = k[i];
		vv = v[i];
		for (lt = i; lt > 0 && k[lt - 1] > kk; lt--) {
			k[lt] = k[lt - 1];
			v[lt] = v[lt - 1];
		}
		k[lt] = kk;
		v[lt] = vv;
	}
}

/*
 * The suffix sort, prefix doubling by groups (Larsson and Sadakane's
 * way): after the pass of k, a group is the suffixes that share their
 * first k code points, a stretch of sa, and a suffix's rank is the place
 * in sa where its group begins.  The next pass sorts each group of more
 * than one by the rank of the suffix k code points on (its key, held by
 * place in sa), which splits it into the groups of 2k.  All of a pass's
 * keys are read before any rank changes, and the groups are independent,
 * so both go by parts in threads: the keys by plain stretches of sa, the
 * groups by stretches that begin where a group does.  The suffixes of a
 * text all differ, so the order comes out the same whatever the parts.
 */
struct ssort {
	uint32_t	*sa, *rk, *key;
	uint64_t	*one;		/* bit i: sa[i] is a group of its own */
	size_t		 n, k;
	size_t		 nunit;
	size_t		*cut;		/* the groups' parts: cut[0] = 0 .. cut[nunit] = n */
	int		*more;		/* per part: it left a group of several */
	uint32_t	*hist;		/* first pass: nunit x (nalpha + 1) */
	uint32_t	*gstart;	/* first pass: where each group begins */
};

/*
 * The first pass, by the first code point, on the suffixes at code
 * points of part u (a stretch of the text): each one's alphabet index in
 * rk, and the part's count of each (ss_first()).
 */
static int
ss_hist(struct build *b, void *arg, size_t u)
{
	struct ssort *s = arg;
	size_t p = s->n * u / s->nunit, hi = s->n * (u + 1) / s->nunit, off;
	uint32_t *h = s->hist + u * (b->nalpha + 1), cp;

	for (off = p < hi ? boff(b, p) : 0; p < hi; p++) {
		off += (size_t)sw_u8(b->pool + off, &cp);
		s->rk[p] = (uint32_t)alpha_index(b, cp);
		h[s->rk[p]]++;
	}
	return 0;
}

/*
 * Then part u puts its suffixes in their groups, from where its count
 * of each begins (so in text order within a group, as one pass would),
 * each ranked where its group begins.
 */
static int
ss_place(struct build *b, void *arg, size_t u)
{
	struct ssort *s = arg;
	size_t p = s->n * u / s->nunit, hi = s->n * (u + 1) / s->nunit;
	uint32_t *at = s->hist + u * (b->nalpha + 1), a;

	for (; p < hi; p++) {
		a = s->rk[p];
		s->sa[at[a]++] = (uint32_t)p;
		s->rk[p] = s->gstart[a];
	}
	return 0;
}

/*
 * The first pass of the suffix sort: the suffixes by their first code
 * point, a counting sort by parts of the text (ss_hist(), ss_place()),
 * each ranked where its group begins; the groups of one marked in
 * s->one.  Whether a group of several is left: 1, 0 or -1.
 */
static int
ss_first(struct build *b, struct ssort *s)
{
	size_t na = b->nalpha, a, u, w = na + 1;
	uint32_t sum = 0, c;
	int more = 0;

	s->hist = calloc(s->nunit * w, sizeof(*s->hist));
	s->gstart = malloc(w * sizeof(*s->gstart));
	if (s->hist == NULL || s->gstart == NULL ||
	    par_run(b, s->nunit, ss_hist, s) == -1)
		return -1;
	/* Each part's counts become where its suffixes of each group go. */
	for (a = 0; a < na; a++) {
		s->gstart[a] = sum;
		for (u = 0; u < s->nunit; u++) {
			c = s->hist[u * w + a];
			s->hist[u * w + a] = sum;
			sum += c;
		}
		c = sum - s->gstart[a];
		if (c == 1)
			s->one[s->gstart[a] >> 6] |= (uint64_t)1 <<
			    (s->gstart[a] & 63);
		else if (c > 1)
			more = 1;
	}
	if (par_run(b, s->nunit, ss_place, s) == -1)
		return -1;
	return more;
}

static inline int
ss_one(const struct ssort *s, size_t i)
{
	return __atomic_load_n(&s->one[i >> 6], __ATOMIC_RELAXED) >> (i & 63) & 1;
}

/* The keys of part u: the ranks k code points on (0: none, past the end). */
static int
ss_keys(struct build *b, void *arg, size_t u)
{
	struct ssort *s = arg;
	size_t i = s->n * u / s->nunit, hi = s->n * (u + 1) / s->nunit, p;

	(void)b;
	while (i < hi) {
		if ((i & 63) == 0 && s->one[i >> 6] == ~(uint64_t)0) {
			i += 64;
			continue;
		}
		if (!(s->one[i >> 6] >> (i & 63) & 1)) {
			p = (size_t)s->sa[i] + s->k;
			s->key[i] = p < s->n ? s->rk[p] + 1 : 0;
		}
		i++;
	}
	return 0;
}

/* Sort the groups of part u by their keys and rank the new ones. */
static int
ss_split(struct build *b, void *arg, size_t u)
{
	struct ssort *s = arg;
	size_t i = s->cut[u], hi = s->cut[u + 1], e, j, g, m, lg;
	uint64_t bits;

	(void)b;
	while (i < hi) {
		if ((i & 63) == 0 && i + 64 <= hi &&
		    __atomic_load_n(&s->one[i >> 6], __ATOMIC_RELAXED) == ~(uint64_t)0) {
			i += 64;
			continue;
		}
		if (ss_one(s, i)) {
			i++;
			continue;
		}
		/* A group of several: i .. e - 1, all ranked i. */
		for (e = i + 1; e < hi && s->rk[s->sa[e]] == i; e++)
			;
		m = e - i;
		for (lg = 0; (size_t)1 << lg < m; lg++)
			;
		pairs_sort(s->key + i, s->sa + i, m, 2 * (int)lg);
		for (j = i, g = i; j < e; j++) {
			if (j > i && s->key[j] != s->key[j - 1]) {
				if (j - g == 1) {
					bits = (uint64_t)1 << (g & 63);
					__atomic_fetch_or(&s->one[g >> 6], bits,
					    __ATOMIC_RELAXED);
				} else
					s->more[u] = 1;
				g = j;
			}
			s->rk[s->sa[j]] = (uint32_t)g;
		}
		if (e - g == 1)
			__atomic_fetch_or(&s->one[g >> 6], (uint64_t)1 << (g & 63),
			    __ATOMIC_RELAXED);
		else
			s->more[u] = 1;
		i = e;
	}
	return 0;
}

/*
 * Sort the suffixes of the pool into sa, rk its inverse: by the first
 * code point (a counting sort over the alphabet), then by doubling
 * passes in b->jobs parts.  O(N log^2 N) at worst, O(N log N) as a rule
 * (the groups left shrink fast).  Memory: sa, rk, the keys (32 bits each
 * a code point) and a bit a code point, whatever the jobs.
 */
static int
ss_sort(struct build *b, uint32_t *sa, uint32_t *rk)
{
	struct ssort s;
	size_t n = b->N, p, u;
	int more, rc = -1;

	memset(&s, 0, sizeof(s));
	s.sa = sa;
	s.rk = rk;
	s.n = n;
	s.nunit = build_parts(b);
	s.key = malloc((n ? n : 1) * sizeof(*s.key));
	s.one = calloc(n / 64 + 1, sizeof(*s.one));
	s.cut = malloc((s.nunit + 1) * sizeof(*s.cut));
	s.more = malloc(s.nunit * sizeof(*s.more));
	if (!s.key || !s.one || !s.cut || !s.more)
		goto out;
	/* By the first code point: each group ranked where it begins. */
	if ((more = ss_first(b, &s)) == -1)
		goto out;
	for (s.k = 1; more; s.k *= 2) {
		if (par_run(b, s.nunit, ss_keys, &s) == -1)
			goto out;
		/* The parts of the groups: each begins where a group does. */
		s.cut[0] = 0;
		for (u = 1; u < s.nunit; u++) {
			p = n * u / s.nunit;
			p = p < n ? rk[sa[p]] : n;
			s.cut[u] = p > s.cut[u - 1] ? p : s.cut[u - 1];
		}
		s.cut[s.nunit] = n;
		memset(s.more, 0, s.nunit * sizeof(*s.more));
		if (par_run(b, s.nunit, ss_split, &s) == -1)
			goto out;
		for (u = 0, more = 0; u < s.nunit; u++)
			more |= s.more[u];
	}
	rc = 0;
out:
	free(s.hist);
	free(s.gstart);
	free(s.key);
	free(s.one);
	free(s.cut);
	free(s.more);
	return rc;
}

/*
 * The byte offsets of the code points (cp_offsets()): part u takes the
 * pool's bytes at[u] .. at[u + 1] - 1, cps[u] code points beginning there.
 */
struct cpoff {
	uint32_t	*full;		/* every code point's, or NULL */
	size_t		*at, *cps;
	size_t		 nunit;
};

static int
cpoff_count(struct build *b, void *arg, size_t u)
{
	struct cpoff *c = arg;
	size_t off, k = 0;

	for (off = c->at[u]; off < c->at[u + 1]; off++)
		k += (b->pool[off] & 0xC0) != 0x80;
	c->cps[u] = k;
	return 0;
}

static int
cpoff_fill(struct build *b, void *arg, size_t u)
{
	struct cpoff *c = arg;
	size_t off, p = c->cps[u];

	for (off = c->at[u]; off < c->at[u + 1]; off++)
		if ((b->pool[off] & 0xC0) != 0x80) {
			if (c->full != NULL)
				c->full[p] = (uint32_t)off;
			if ((p & 15) == 0)
				b->boff[p >> 4] = (uint32_t)off;
			p++;
		}
	return 0;
}

/*
 * b->boff, and with 'full' every code point's byte offset too (and
 * full[N] = the pool's length), by stretches of the pool's bytes: the
 * code points of each counted, then placed.  0 or -1.
 */
static int
cp_offsets(struct build *b, uint32_t *full)
{
	struct cpoff c;
	size_t u, sum = 0, k;
	int rc = -1;

	c.full = full;
	c.nunit = build_parts(b);
	c.at = malloc((c.nunit + 1) * sizeof(*c.at));
	c.cps = malloc(c.nunit * sizeof(*c.cps));
	if (c.at == NULL || c.cps == NULL)
		goto out;
	for (u = 0; u <= c.nunit; u++)
		c.at[u] = b->plen * u / c.nunit;
	if (par_run(b, c.nunit, cpoff_count, &c) == -1)
		goto out;
	for (u = 0; u < c.nunit; u++) {
		k = c.cps[u];
		c.cps[u] = sum;
		sum += k;
	}
	if (par_run(b, c.nunit, cpoff_fill, &c) == -1)
		goto out;
	if (full != NULL)
		full[b->N] = (uint32_t)b->plen;
	if ((b->N & 15) == 0)
		b->boff[b->N >> 4] = (uint32_t)b->plen;
	rc = 0;
out:
	free(c.at);
	free(c.cps);
	return rc;
}

/* What the parts of the common prefixes share. */
struct lcps {
	const uint32_t	*rk, *full;	/* full: NULL when all ASCII */
	uint64_t	 capv;
	size_t		 nunit;
};

/*
 * The common prefixes (Kasai et al.: in text order, each is at least the
 * one before less one), lengths and counts of the suffixes at code
 * points of part u (a stretch of the text, started afresh from 0): each
 * suffix writes its own elements.
 */
static int
lcp_unit(struct build *b, void *arg, size_t u)
{
	const struct lcps *l = arg;
	const uint32_t *sa = b->sa, *rk = l->rk, *full = l->full;
	size_t n = b->N, p = n * u / l->nunit, end = n * (u + 1) / l->nunit, i, t;
	uint32_t h = 0, tend, dist, q, kk;

	if (p >= end)
		return 0;
	t = token_at(b, (uint32_t)p);
	tend = b->tstart[t + 1];
	for (; p < end; p++) {
		while (p >= tend)
			tend = b->tstart[++t + 1];
		dist = tend - (uint32_t)p;
		i = rk[p];
		if (i > 0) {
			size_t x, y;

			q = sa[i - 1];
			x = full ? full[p + h] : p + h;
			y = full ? full[q + h] : q + h;
			while (h < dist) {
				kk = u8len(b->pool[x]);
				/* A suffix at the end of the pool may be shorter. */
				if (y + kk > b->plen || x + kk > b->plen ||
				    memcmp(b->pool + x, b->pool + y, kk) != 0)
					break;
				x += kk;
				y += kk;
				h++;
			}
			parr_set(&b->lcp, i, h < l->capv ? h : l->capv);
		} else
			h = 0;
		/* 255 and more: dep_at() finds it again. */
		if (dist > b->maxcp)
			dist = b->maxcp;
		parr_set(&b->dep, i, dist < 255 ? dist : 255);
		b->wt[i] = b->c->cnt[t] < 255 ? (uint8_t)b->c->cnt[t] : 255;
		if (h > 0)
			h--;
	}
	return 0;
}

/*
 * Sort the suffixes (one per code point): ss_sort().  Then the common
 * prefixes of neighbours, counted within tokens, and the per-suffix
 * lengths and counts (lcp_unit(), in parts).  Peak: three 32-bit arrays
 * of N and a bit a code point while sorting; sa, rk and the byte offsets
 * of every code point (outside ASCII) after.
 */
static int
suffix_sort(struct build *b)
{
	struct lcps l;
	size_t n = b->N;
	uint32_t *sa = NULL, *rk = NULL, *full = NULL;
	int rc = -1;

	/*
	 * Outside ASCII, the byte offset of every 16th code point for the
	 * sort, then of every one while the common prefixes are found.
	 */
	if (b->plen != b->N && ((b->boff = malloc((n / 16 + 1) *
	    sizeof(*b->boff))) == NULL || cp_offsets(b, NULL) == -1))
		goto out;
	sa = malloc((n ? n : 1) * sizeof(*sa));
	rk = malloc((n ? n : 1) * sizeof(*rk));
	if (!sa || !rk || ss_sort(b, sa, rk) == -1)
		goto out;
	if (b->plen != b->N && ((full = malloc((n + 1) * sizeof(*full))) ==
	    NULL || cp_offsets(b, full) == -1))
		goto out;
	/* rk is now the inverse of sa. */
	l.rk = rk;
	l.full = full;
	l.capv = b->capcp < b->maxtok ? b->capcp : b->maxtok;
	l.nunit = build_parts(b);
	if (parr_alloc(&b->lcp, n, l.capv) == -1 ||
	    parr_alloc(&b->dep, n, UINT8_MAX) == -1 ||
	    (b->wt = malloc(n ? n : 1)) == NULL)
		goto out;
	b->sa = sa;
	sa = NULL;
	if (par_run(b, l.nunit, lcp_unit, &l) == -1)
		goto out;
	if ((b->mark = calloc(n / 64 + 1, sizeof(*b->mark))) == NULL ||
	    (b->leaf = calloc(n / 64 + 1, sizeof(*b->leaf))) == NULL)
		goto out;
	rc = 0;
out:
	free(sa);
	free(rk);
	free(full);
	return rc;
}

/* A node of the suffix tree being walked: substrings of h code points. */
struct snode {
	uint32_t	 h;
	uint32_t	 lb;		/* its first suffix */
	int64_t		 c;		/* count */
	int64_t		 acc;		/* counts of the subtokens taken below it */
};

/*
 * A node on the stack: 16 bytes.  When every sum of counts fits 32 bits
 * (b->narrow), c and acc are the node's.  Otherwise a c up to ST_BIG
 * is the node's too, with acc (never above c).  Above it, c is ST_ONE,
 * the weight of the node's first suffix, or ST_SIDE, on b->side (a stack
 * of 64-bit counts of its own), and acc is the node's up to ST_BIG,
 * AC_SAME (c) or AC_SIDE (on b->side, above c when c is there too).
 */
struct snode32 {
	uint32_t	 h, lb, c, acc;
};

#define ST_BIG	0xFFFFFFFDu
#define ST_ONE	0xFFFFFFFEu
#define ST_SIDE	0xFFFFFFFFu
#define AC_SIDE	0xFFFFFFFEu
#define AC_SAME	0xFFFFFFFFu

struct kept {
	int64_t		 cnt;
	struct ent	 e;
};

static const struct build *sort_build;

static int
cmp_kept(const void *x, const void *y)
{
	const struct kept *a = x, *c = y;
	const uint8_t *p, *q;
	size_t np, nq;
	int r;

	if (a->cnt != c->cnt)
		return a->cnt > c->cnt ? -1 : 1;
	/* Descending strings.  Two substrings: by interval, then length. */
	if (!((a->e.h | c->e.h) & EXT)) {
		if (a->e.lb != c->e.lb)
			return a->e.lb > c->e.lb ? -1 : 1;
		return a->e.h > c->e.h ? -1 : a->e.h < c->e.h;
	}
	p = ent_bytes(sort_build, a->e, &np);
	q = ent_bytes(sort_build, c->e, &nq);
	r = memcmp(p, q, np < nq ? np : nq);
	if (r != 0)
		return -r;
	return np > nq ? -1 : np < nq;
}

/*
 * Sort the kept ones in place (heapsort), as cmp_kept() orders them:
 * glibc's qsort() takes a copy of the array for its merge sort, which
 * would double the largest array of a build.  cmp_kept() is a total
 * order, so any sort gives the same order.
 */
static void
kept_sift(struct kept *k, size_t at, size_t n)
{
	size_t c;
	struct kept t;

	for (; (c = 2 * at + 1) < n; at = c) {
		if (c + 1 < n && cmp_kept(&k[c], &k[c + 1]) < 0)
			c++;
		if (cmp_kept(&k[at], &k[c]) >= 0)
			return;
		t = k[at];
		k[at] = k[c];
		k[c] = t;
	}
}

static void
kept_sort(struct kept *k, size_t n)
{
	size_t i;
	struct kept t;

	for (i = n / 2; i-- > 0;)
		kept_sift(k, i, n);
	for (i = n; i-- > 1;) {
		t = k[0];
		k[0] = k[i];
		k[i] = t;
		kept_sift(k, 0, i);
	}
}

/*
 * count_select()'s working memory is one block: the stack of open nodes
 * from its start (ss bytes a node), the kept subtokens from its end.
 * The leaves are kept once the stack is empty (keep_leaves()), so a
 * chain of nodes as deep as a long token and its kept leaves take the
 * same room in turn; the new list is then made in the block too.  Make room for a stack of
 * 'depth' nodes beside the 'nk' kept ones and 'extra' bytes more.
 */
static int
walk_room(struct walk *w, size_t ss, size_t depth, size_t nk, size_t extra)
{
	size_t need, ncap, kb = nk * sizeof(struct kept);
	unsigned char *np;

	if (depth > (SIZE_MAX / 2 - extra - kb) / ss) {
		errno = ENOMEM;
		return -1;
	}
	need = depth * ss + kb + extra;
	if (need <= w->wcap)
		return 0;
	ncap = w->wcap * 2 > need ? w->wcap * 2 : need;
	ncap = (ncap + 15) & ~(size_t)15;
	if ((np = realloc(w->wbuf, ncap)) == NULL)
		return -1;
	/* The kept ones stay at the end. */
	if (kb > 0)
		memmove(np + ncap - kb, np + w->wcap - kb, kb);
	w->wbuf = np;
	w->wcap = ncap;
	return 0;
}

/* The k-th kept one (from the end of the block). */
static inline struct kept *
kept_at(const struct walk *w, size_t nk, size_t k)
{
	return (struct kept *)(void *)(w->wbuf + w->wcap) - nk + k;
}

static int
keep(struct walk *w, size_t ss, size_t depth, size_t *nk, int64_t cnt,
    uint32_t lb, uint32_t h)
{
	struct kept *k;

	if (walk_room(w, ss, depth, *nk, sizeof(*k)) == -1)
		return -1;
	k = (struct kept *)(void *)(w->wbuf + w->wcap) - (*nk + 1);
	k->cnt = cnt;
	k->e.lb = lb;
	k->e.h = h;
	(*nk)++;
	return 0;
}

/*
 * How an iteration (count_select()) counts and chooses.  The substrings
 * are the nodes of the suffix tree of the tokens, walked
 * bottom up over the sorted suffixes with a stack of open intervals
 * (suffixes that do not start a segment count 0).  A node of the tree
 * stands for a chain of substrings with the same count: those between
 * its parent's length and its own.
 *
 * tensor2tensor takes the candidates (count >= min_count) longest
 * first and lowers the counts of the proper prefixes of each accepted
 * one by its current count.  The current count of a string is thus its
 * count less the current counts of the accepted strings it is a proper
 * prefix of (its descendants): 'acc', summed bottom up.  In a chain, a
 * string's extensions are the longer ones of the chain, so only the
 * longest can be accepted: if it is, the others are left with 0, and
 * if not, the others have its current count too, below min_count.
 * The alphabet character of a chain that starts at length 1 gets the
 * count left to it.
 */
/*
 * Counts add up without overflow: a count file may give any count up to
 * INT64_MAX, and a substring's count sums them; such sums stop there.
 */
static inline int64_t
cnt_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* What suffix i adds to the counts: its token's count at a segment start. */
static inline int64_t
walk_weight(const struct build *b, int all, size_t i)
{
	int64_t w = 0;

	if (all || (b->mark[b->sa[i] >> 6] >> (b->sa[i] & 63) & 1))
		if ((w = b->wt[i]) == 255)
			w = weight_at(b, b->sa[i]);
	return w;
}

/*
 * Stack node k.  A wide node's counts that fit no other way are on
 * w->side, taken off it here: a node is read once, when it is the top
 * again, and st_put() again if it stays below a new one.
 */
static inline void
st_get(const struct build *b, struct walk *w, size_t k, struct snode *x)
{
	const struct snode32 *y = (const struct snode32 *)(void *)w->wbuf + k;

	x->h = y->h;
	x->lb = y->lb;
	if (b->narrow || y->c <= ST_BIG) {
		x->c = y->c;
		x->acc = y->acc;
		return;
	}
	if (y->acc == AC_SIDE)
		x->acc = w->side[--w->nside];
	else
		x->acc = y->acc;
	if (y->c == ST_ONE)
		x->c = walk_weight(b, w->all, y->lb);
	else
		x->c = w->side[--w->nside];
	if (y->acc == AC_SAME)
		x->acc = x->c;
}

/* Push a count on w->side. */
static inline int
side_push(struct walk *w, int64_t v)
{
	if (w->nside == w->sidecap && sw_grow(&w->side, &w->sidecap,
	    w->nside + 1, sizeof(*w->side)) == -1)
		return -1;
	w->side[w->nside++] = v;
	return 0;
}

/*
 * Put node x at k, below the top of the stack.  A wide one with a count
 * past ST_BIG takes room on w->side for it unless it is ST_ONE, as a
 * node of one suffix always is (its interval, up to the first suffix of
 * the node above it, is one suffix long), and for acc unless that is 0,
 * its count or at most ST_BIG, as it always is for a node of one suffix
 * (0 or the count of the node of that suffix below it).  So a chain of
 * nodes as deep as a long token, a suffix each, takes 16 bytes a node
 * whatever the counts, and the side stack at most 16 bytes a node that
 * holds more than one suffix (8 when its acc is 0 or its count).
 */
static inline int
st_put(const struct build *b, struct walk *w, size_t k,
    const struct snode *x)
{
	struct snode32 *y = (struct snode32 *)(void *)w->wbuf + k;

	y->h = x->h;
	y->lb = x->lb;
	if (b->narrow || ((uint64_t)x->c <= ST_BIG &&
	    (uint64_t)x->acc <= ST_BIG)) {
		y->c = (uint32_t)x->c;
		y->acc = (uint32_t)x->acc;
		return 0;
	}
	if (x->c == walk_weight(b, w->all, x->lb))
		y->c = ST_ONE;
	else if (side_push(w, x->c) == -1)
		return -1;
	else
		y->c = ST_SIDE;
	if (x->acc == x->c)
		y->acc = AC_SAME;
	else if ((uint64_t)x->acc <= ST_BIG)
		y->acc = (uint32_t)x->acc;
	else if (side_push(w, x->acc) == -1)
		return -1;
	else
		y->acc = AC_SIDE;
	return 0;
}

/* The length of suffix i (to its token's end, at most maxcp). */
static inline uint32_t
walk_dep(const struct build *b, size_t i)
{
	uint32_t d;

	if ((d = (uint32_t)parr_get(&b->dep, i)) == 255)
		d = dep_at(b, b->sa[i]);
	return d;
}

/* The common prefix of suffixes i - 1 and i (at most maxcp), 0 for i = 0. */
static inline uint32_t
walk_lcp(const struct build *b, size_t i)
{
	uint32_t l;

	if (i == 0)
		return 0;
	l = (uint32_t)parr_get(&b->lcp, i);
	return l < b->maxcp ? l : b->maxcp;
}

/*
 * Whether the walk's node of h code points from suffix lb is a leaf: the
 * node of one suffix (with the same suffixes of other tokens, which
 * follow it), as long as it.  An inner node is shorter than the suffixes
 * below it.
 */
static inline int
walk_leaf(const struct build *b, uint32_t h, uint32_t lb)
{
	uint32_t d = (uint32_t)parr_get(&b->dep, lb);

	if (d < 255)
		return h == d;
	return h >= 255 && h == dep_at(b, b->sa[lb]);
}

/*
 * The leaves of the walk are kept after it, when its stack is empty:
 * a chain of nodes as deep as a long token leaves one kept leaf a node,
 * and both at full size at once would take twice the room.  The walk
 * marks where they start (b->leaf); a leaf takes the suffixes after its
 * first as long as their common prefix is the whole suffix, and nothing
 * is taken below it, so its current count is its count.  The marks are
 * cleared for the next walk.  Walks side by side share the words of
 * the marks at the ends of their parts: each sets and clears only its
 * own bits, atomically.
 */
static int
keep_leaves(struct build *b, struct walk *w, size_t ss, size_t *nk)
{
	size_t n = b->N, wi, lb, j;
	uint64_t m, own;
	uint32_t h;
	int64_t c;

	if (w->lo >= w->hi)
		return 0;
	for (wi = w->lo / 64; wi <= (w->hi - 1) / 64; wi++) {
		own = ~(uint64_t)0;
		if (wi == w->lo / 64)
			own &= ~(uint64_t)0 << (w->lo & 63);
		if (wi == (w->hi - 1) / 64 && (w->hi & 63) != 0)
			own &= ~(~(uint64_t)0 << (w->hi & 63));
		if ((m = __atomic_load_n(&b->leaf[wi], __ATOMIC_RELAXED) & own) == 0)
			continue;
		__atomic_fetch_and(&b->leaf[wi], ~m, __ATOMIC_RELAXED);
		for (; m != 0; m &= m - 1) {
			lb = wi * 64 + (size_t)__builtin_ctzll(m);
			h = walk_dep(b, lb);
			c = walk_weight(b, w->all, lb);
			for (j = lb + 1; j < n && walk_lcp(b, j) >= h; j++)
				c = cnt_add(c, walk_weight(b, w->all, j));
			if (keep(w, ss, 0, nk, c, (uint32_t)lb, h) == -1)
				return -1;
		}
	}
	return 0;
}

/*
 * The walk of the suffixes w->lo .. w->hi - 1, where the common prefix
 * is 0 (a set of whole subtrees of the root), steps (a)..(c) there with
 * w->min_count: the
 * subtokens it keeps are at the end of its block, in w->nk, with room
 * for 'extra' bytes more.  The alphabet characters it meets get their
 * counts in b->acnt and b->alb (a character's subtree is in one part).
 */
static int
walk_part(struct build *b, struct walk *w, size_t extra)
{
	struct snode x, t;
	size_t i, top = 0, nk = 0, a, ss, maxd;
	uint32_t l, d, ph, cp;
	int64_t w8, cur, up;
	int ok;

	ss = sizeof(struct snode32);
	w->nside = 0;
	/*
	 * Heights rise strictly up the stack: at most this many nodes.  The
	 * caller's 'extra' comes on top: a block that grows moves its kept
	 * ones, and a chain as deep as the token fills its room with kept
	 * leaves.  A walk of one part of several starts small and grows as
	 * its stack does: a chain as deep as a long token lies in the part
	 * of its first character, and room for it in every part would
	 * multiply the peak.
	 */
	maxd = (size_t)(b->maxtok < b->maxcp ? b->maxtok : b->maxcp) + 2;
	if (b->ncut > 1)
		maxd = 2;
	if (walk_room(w, ss, maxd, 0, extra) == -1)
		return -1;
	/*
	 * t is the top node, at 'top' on the stack, held here: it is put
	 * there when a node comes above it and read back when that one goes.
	 */
	t.h = t.lb = 0;
	t.c = t.acc = 0;
	for (i = w->lo; i <= w->hi; i++) {
		l = i < w->hi ? walk_lcp(b, i) : 0;
		while (t.h > l) {
			x = t;
			st_get(b, w, --top, &t);
			ph = t.h > l ? t.h : l;
			cur = x.c - x.acc;
			ok = cur >= w->min_count;
			/*
			 * A leaf is kept later, by keep_leaves().  (Room is
			 * left for the node that may take x's place.)
			 */
			if (ok && x.h >= 2) {
				if (walk_leaf(b, x.h, x.lb))
					__atomic_fetch_or(&b->leaf[x.lb >> 6],
					    (uint64_t)1 << (x.lb & 63), __ATOMIC_RELAXED);
				else if (keep(w, ss, top + 2, &nk, cur, x.lb,
				    x.h) == -1)
					return -1;
			}
			if (ph == 0) {
				sw_u8(b->pool + boff(b, b->sa[x.lb]), &cp);
				a = alpha_index(b, cp);
				b->acnt[a] = x.h == 1 || !ok ? cur : 0;
				b->alb[a] = x.lb;
			}
			up = ok ? x.c : x.acc;
			if (t.h >= l) {
				t.c = cnt_add(t.c, x.c);
				t.acc = cnt_add(t.acc, up);
			} else {
				if (st_put(b, w, top, &t) == -1)
					return -1;
				top++;
				t.h = l;
				t.lb = x.lb;
				t.c = x.c;
				t.acc = up;
			}
		}
		if (i == w->hi)
			break;
		w8 = walk_weight(b, w->all, i);
		d = walk_dep(b, i);
		if (d > t.h) {
			if (walk_room(w, ss, top + 2, nk, 0) == -1 ||
			    st_put(b, w, top, &t) == -1)
				return -1;
			top++;
			t.h = d;
			t.lb = (uint32_t)i;
			t.c = w8;
			t.acc = 0;
		} else
			t.c = cnt_add(t.c, w8);
	}
	/* The stack is empty: its room takes the leaves. */
	if (keep_leaves(b, w, ss, &nk) == -1)
		return -1;
	w->nk = nk;
	return 0;
}

/* Sort kept ones as cmp_kept() orders them (sort_build set). */
static void
sort_kept(struct kept *k, size_t n)
{
	/* (A big array without glibc's copy; a small one faster.) */
	if (n > 65536)
		kept_sort(k, n);
	else
		qsort(k, n, sizeof(struct kept), cmp_kept);
}

/*
 * The parts of one iteration and what they share, for the worker pool:
 * unit u runs fn(b, arg, u), and a failing one keeps its errno.
 */
struct par {
	struct build	*b;
	void		*arg;
	int		(*fn)(struct build *, void *, size_t);
	size_t		 n;
	int		*eno;		/* per unit: 0, or the errno it failed with */
};

static int
par_read(void *arg, const struct pool_unit *u)
{
	const struct par *p = arg;

	return u->seq + 1 < p->n ? POOL_MORE : POOL_LAST;
}

static void
par_work(void *arg, const struct pool_unit *u)
{
	struct par *p = arg;

	errno = 0;
	if (p->fn(p->b, p->arg, (size_t)u->seq) == -1)
		p->eno[u->seq] = errno ? errno : ENOMEM;
}

static int
par_write(void *arg, const struct pool_unit *u)
{
	const struct par *p = arg;

	return p->eno[u->seq] != 0;
}

/*
 * Run fn(b, arg, 0 .. n - 1) in up to b->jobs threads (in this one for
 * one job or one unit).  0, or -1 with the errno of the first that failed.
 */
static int
par_run(struct build *b, size_t n, int (*fn)(struct build *, void *, size_t),
    void *arg)
{
	static const struct pool_ops ops = { par_read, par_work, par_write };
	struct par p;
	size_t i;
	int rc = 0;

	if (n == 0)
		return 0;
	if (b->jobs <= 1 || n == 1) {
		for (i = 0; i < n; i++)
			if (fn(b, arg, i) == -1)
				return -1;
		return 0;
	}
	p.b = b;
	p.arg = arg;
	p.fn = fn;
	p.n = n;
	if ((p.eno = calloc(n, sizeof(*p.eno))) == NULL)
		return -1;
	if (pool_run(b->jobs < (int)n ? b->jobs : (int)n, &ops, &p) != 0) {
		for (i = 0; i < n && p.eno[i] == 0; i++)
			;
		errno = i < n ? p.eno[i] : ENOMEM;
		rc = -1;
	}
	free(p.eno);
	return rc;
}

/* A part's walk, its kept ones sorted (count_select() of several parts). */
static int
walk_unit(struct build *b, void *arg, size_t k)
{
	struct walk *w = (struct walk *)arg + k;

	if (walk_part(b, w, 0) == -1)
		return -1;
	sort_kept(kept_at(w, w->nk, 0), w->nk);
	return 0;
}

/*
 * The heads of sorted runs of kept ones, merged with a heap: the run
 * whose head comes first on top.
 */
struct run {
	const struct kept *p, *end;
};

static void
run_sift(struct run *r, size_t at, size_t n)
{
	size_t c;
	struct run t;

	for (; (c = 2 * at + 1) < n; at = c) {
		if (c + 1 < n && cmp_kept(r[c + 1].p, r[c].p) < 0)
			c++;
		if (cmp_kept(r[at].p, r[c].p) <= 0)
			return;
		t = r[at];
		r[at] = r[c];
		r[c] = t;
	}
}

/*
 * The merge of the runs, by stretches of the output, side by side:
 * stretch c takes from run r its elements at[c][r] .. at[c + 1][r] - 1
 * (all below the c-th splitter, none below the one before), and writes
 * them from place off[c] of e.  The kept ones all differ (cmp_kept() is
 * a total order over distinct entries), so the stretches meet exactly.
 */
struct rmerge {
	const struct run *runs;
	size_t		 nrun;
	size_t		*at;		/* (nchunk + 1) x nrun */
	size_t		*off;
	struct ent	*e;
};

static int
merge_unit(struct build *b, void *arg, size_t c)
{
	const struct rmerge *m = arg;
	struct run *h;
	size_t r, nh = 0, a;

	(void)b;
	if ((h = malloc((m->nrun ? m->nrun : 1) * sizeof(*h))) == NULL)
		return -1;
	for (r = 0; r < m->nrun; r++) {
		h[nh].p = m->runs[r].p + m->at[c * m->nrun + r];
		h[nh].end = m->runs[r].p + m->at[(c + 1) * m->nrun + r];
		if (h[nh].p < h[nh].end)
			nh++;
	}
	for (r = nh / 2; r-- > 0;)
		run_sift(h, r, nh);
	for (a = m->off[c]; nh > 0; a++) {
		m->e[a] = h[0].p->e;
		if (++h[0].p == h[0].end)
			h[0] = h[--nh];
		run_sift(h, 0, nh);
	}
	free(h);
	return 0;
}

/* Elements of run r that come before k. */
static size_t
run_rank(const struct run *r, const struct kept *k)
{
	size_t lo = 0, hi = (size_t)(r->end - r->p), mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp_kept(&r->p[mid], k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Merge the sorted runs into e, in b->ncut stretches split at elements of
 * the longest run (at its quantiles).  0 or -1.
 */
static int
merge_runs(struct build *b, const struct run *runs, size_t nrun, struct ent *e)
{
	struct rmerge m;
	size_t nc = b->ncut, c, r, big = 0, len;
	const struct kept *k;
	int rc = -1;

	for (r = 1; r < nrun; r++)
		if (runs[r].end - runs[r].p > runs[big].end - runs[big].p)
			big = r;
	len = nrun > 0 ? (size_t)(runs[big].end - runs[big].p) : 0;
	if (nc > len)
		nc = len > 0 ? len : 1;
	m.runs = runs;
	m.nrun = nrun;
	m.e = e;
	m.at = malloc((nc + 1) * (nrun ? nrun : 1) * sizeof(*m.at));
	m.off = malloc((nc + 1) * sizeof(*m.off));
	if (m.at == NULL || m.off == NULL)
		goto out;
	for (c = 0; c <= nc; c++) {
		m.off[c] = 0;
		for (r = 0; r < nrun; r++) {
			if (c == 0)
				m.at[r] = 0;
			else if (c == nc)
				m.at[c * nrun + r] = (size_t)(runs[r].end - runs[r].p);
			else {
				k = runs[big].p + len * c / nc;
				m.at[c * nrun + r] = r == big ? len * c / nc :
				    run_rank(&runs[r], k);
			}
			m.off[c] += m.at[c * nrun + r];
		}
	}
	rc = par_run(b, nc, merge_unit, &m);
out:
	free(m.at);
	free(m.off);
	return rc;
}

/* Give back the walks' memory unless held_ok() keeps it. */
static void
walk_trim(const struct build *b, struct walk *ws, size_t n)
{
	size_t i, bytes = 0;

	for (i = 0; i < n; i++)
		bytes += ws[i].wcap + ws[i].sidecap * sizeof(*ws[i].side);
	if (held_ok(b, bytes))
		return;
	for (i = 0; i < n; i++) {
		free(ws[i].wbuf);
		free(ws[i].side);
		ws[i].wbuf = NULL;
		ws[i].side = NULL;
		ws[i].wcap = ws[i].sidecap = 0;
	}
}

/*
 * One iteration, steps (a)..(f), at min_count: count every substring of
 * at most L - 1 code points that starts at a segment start ('all':
 * everywhere), each with its token's count, choose the subtokens and make
 * the new list in *out (the list before is read no more).  With one part,
 * in one block; with several, a walk of each in a thread, each sorted,
 * then merged (merge_runs(); cmp_kept() is a total order, so the list is
 * the same).
 */
static int
count_select(struct build *b, int all, int64_t min_count, struct list *out)
{
	struct walk *one, *ws = b->ws;
	struct kept *k0, *ak = NULL;
	struct run *runs = NULL;
	struct ent *e;
	size_t nk, a, i, nrun, total;
	int rc = -1;
	void *np;

	for (a = 0; a < b->nalpha; a++) {
		b->acnt[a] = 0;
		b->alb[a] = NONE;
	}
	/* The memory of the list before holds the new one. */
	out->n = 0;
	sort_build = b;
	if (b->ncut <= 1) {
		one = &ws[0];
		one->lo = 0;
		one->hi = b->N;
		one->all = all;
		one->min_count = min_count;
		/* The alphabet's kept ones and the reserved entries on top. */
		if (walk_part(b, one, b->nalpha * sizeof(struct kept) +
		    b->nr * sizeof(struct ent)) == -1)
			return -1;
		nk = one->nk;
		/* (d): every alphabet character, with the count left to it. */
		for (a = 0; a < b->nalpha; a++)
			if (keep(one, sizeof(struct snode32), 0, &nk,
			    b->acnt[a], b->alb[a] != NONE ? b->alb[a] :
			    (uint32_t)(b->nr + a),
			    b->alb[a] != NONE ? 1 : EXT | 1) == -1)
				return -1;
		sort_kept(kept_at(one, nk, 0), nk);
		/*
		 * The list: the reserved tokens, then the kept ones in order,
		 * in the list's memory; or, where the block is not kept, from
		 * the block's start.  With room for the reserved ones before
		 * the kept, an entry (half a kept one) never reaches one not
		 * yet read.
		 */
		k0 = kept_at(one, nk, 0);
		if (held_ok(b, one->wcap)) {
			if (list_room(out, b->nr + nk) == -1)
				return -1;
			e = out->e;
		} else {
			if (walk_room(one, sizeof(struct ent), b->nr, nk,
			    0) == -1)
				return -1;
			k0 = kept_at(one, nk, 0);
			e = (struct ent *)(void *)one->wbuf;
		}
		for (a = 0; a < b->nr; a++) {
			e[a].lb = (uint32_t)a;
			e[a].h = EXT | b->xcps[a];
		}
		for (a = 0; a < nk; a++)
			e[b->nr + a] = k0[a].e;
		if (e != out->e) {
			/* The block becomes the list, cut to its size. */
			list_free(out);
			np = realloc(one->wbuf, (b->nr + nk) * sizeof(*e));
			if (np != NULL)
				one->wbuf = np;
			out->e = (struct ent *)(void *)one->wbuf;
			out->cap = b->nr + nk;
			one->wbuf = NULL;
			one->wcap = 0;
		}
		out->n = b->nr + nk;
		walk_trim(b, ws, 1);
		return 0;
	}

	for (i = 0; i < b->ncut; i++) {
		ws[i].lo = b->cut[i];
		ws[i].hi = b->cut[i + 1];
		ws[i].all = all;
		ws[i].min_count = min_count;
	}
	if (par_run(b, b->ncut, walk_unit, ws) == -1)
		goto out;
	/* (d), sorted, as one more run. */
	if ((ak = malloc((b->nalpha ? b->nalpha : 1) * sizeof(*ak))) == NULL ||
	    (runs = malloc((b->ncut + 1) * sizeof(*runs))) == NULL)
		goto out;
	for (a = 0; a < b->nalpha; a++) {
		ak[a].cnt = b->acnt[a];
		ak[a].e.lb = b->alb[a] != NONE ? b->alb[a] : (uint32_t)(b->nr + a);
		ak[a].e.h = b->alb[a] != NONE ? 1 : EXT | 1;
	}
	sort_kept(ak, b->nalpha);
	total = b->nalpha;
	nrun = 0;
	for (i = 0; i < b->ncut; i++) {
		total += ws[i].nk;
		if (ws[i].nk > 0) {
			runs[nrun].p = kept_at(&ws[i], ws[i].nk, 0);
			runs[nrun].end = runs[nrun].p + ws[i].nk;
			nrun++;
		}
	}
	if (b->nalpha > 0) {
		runs[nrun].p = ak;
		runs[nrun].end = ak + b->nalpha;
		nrun++;
	}
	if (list_room(out, b->nr + total) == -1)
		goto out;
	e = out->e;
	for (a = 0; a < b->nr; a++) {
		e[a].lb = (uint32_t)a;
		e[a].h = EXT | b->xcps[a];
	}
	if (merge_runs(b, runs, nrun, e + b->nr) == -1)
		goto out;
	out->n = b->nr + total;
	rc = 0;
out:
	walk_trim(b, ws, b->ncut);
	free(ak);
	free(runs);
	return rc;
}

/*
 * Compare the suffix at sorted position i with the first bytes of
 * (e, n): <0, 0 when e is a prefix of the suffix, >0.
 */
static int
pcmp(const struct build *b, size_t i, const uint8_t *e, size_t n)
{
	size_t off = boff(b, b->sa[i]), sl = b->plen - off;
	int r = memcmp(b->pool + off, e, sl < n ? sl : n);

	if (r != 0)
		return r;
	return sl < n ? -1 : 0;
}

static int
cmp_ent(const void *x, const void *y)
{
	const struct ent *a = x, *c = y;

	if (a->lb != c->lb)
		return a->lb < c->lb ? -1 : 1;
	return a->h < c->h ? -1 : a->h > c->h;
}

/*
 * What mark_segments() hands its parts: the intervals of the entries,
 * sorted, and the longest entry each suffix starts with.
 */
struct segs {
	struct ent	*iv;		/* by part: those of part u from at[u] */
	size_t		 niv;
	size_t		*at;		/* at[0] = 0 .. at[ncut] = niv */
	uint32_t	 maxh;
	struct parr	 best;		/* b->best */
};

/*
 * The longest entry each suffix of part u starts with: the part's
 * intervals sorted, then one sweep over the sorted suffixes with a stack
 * of the open ones.  A part begins where the common prefix is 0, so no
 * interval crosses into it.  Parts write distinct elements of best.
 */
static int
sweep_unit(struct build *b, void *arg, size_t u)
{
	struct segs *s = arg;
	size_t lo = b->cut[u], hi = b->cut[u + 1], i, k, top = 0, scap = 0;
	size_t end = s->at[u + 1];
	uint32_t *st = NULL;	/* heights of the open ones */

	qsort(s->iv + s->at[u], end - s->at[u], sizeof(*s->iv), cmp_ent);
	/* Heights rise strictly up the stack: at most maxh of them. */
	if (sw_grow(&st, &scap, (s->niv < s->maxh ? s->niv : s->maxh) + 1,
	    sizeof(*st)) == -1)
		return -1;
	for (i = lo, k = s->at[u]; i < hi; i++) {
		uint32_t lc = i > lo ? (uint32_t)parr_get(&b->lcp, i) : 0;

		while (top > 0 && st[top - 1] > lc)
			top--;
		for (; k < end && s->iv[k].lb == i; k++) {
			if (top == scap &&
			    sw_grow(&st, &scap, top + 1, sizeof(*st)) == -1) {
				free(st);
				return -1;
			}
			st[top++] = s->iv[k].h;
		}
		if (top > 0)
			parr_set(&s->best, b->sa[i], st[top - 1]);
	}
	free(st);
	return 0;
}

/*
 * The segment starts of the tokens of part u (as many parts as of the
 * suffixes, by token): bits set a word at a time, atomically, as the
 * words at the ends of a part are another's too.
 */
static int
segment_unit(struct build *b, void *arg, size_t u)
{
	const struct segs *s = arg;
	size_t t0 = b->ntok * u / b->ncut, t1 = b->ntok * (u + 1) / b->ncut, t;
	size_t wi = SIZE_MAX;
	uint64_t bits = 0;
	uint32_t p, end, h;

	for (t = t0; t < t1; t++) {
		end = b->tstart[t + 1];
		for (p = b->tstart[t]; p < end; p += h) {
			if (p >> 6 != wi) {
				if (bits != 0)
					__atomic_fetch_or(&b->mark[wi], bits,
					    __ATOMIC_RELAXED);
				wi = p >> 6;
				bits = 0;
			}
			bits |= (uint64_t)1 << (p & 63);
			if ((h = (uint32_t)parr_get(&s->best, p)) == 0) {
				/* Cannot happen: every character is an entry. */
				errno = EINVAL;
				return -1;
			}
		}
	}
	if (bits != 0)
		__atomic_fetch_or(&b->mark[wi], bits, __ATOMIC_RELAXED);
	/* Read: the part's stretch of best is zero again for the next one. */
	p = t0 < t1 ? b->tstart[t0] : 0;
	end = t0 < t1 ? b->tstart[t1] : 0;
	memset((uint8_t *)s->best.p + (size_t)p * (size_t)s->best.w, 0,
	    (size_t)(end - p) * (size_t)s->best.w);
	return 0;
}

/*
 * Mark the segment starts of every token under greedy longest match
 * with the list 'l'.  The suffixes that start with an entry form an
 * interval of the sorted suffixes, and these intervals nest; one sweep
 * over the sorted suffixes with a stack of the open ones gives every
 * suffix the longest entry it starts with (a sweep a part, in threads).
 */
static int
mark_segments(struct build *b, struct list *l)
{
	struct ent *iv = l->e;
	struct segs s;
	struct list tl;
	size_t niv = 0, k, lo, hi, mid, first, n = b->N;
	uint32_t *part = NULL;
	uint32_t maxh = 0, h;
	int rc = -1;

	/* The entries as intervals, in place (the next list replaces this one). */
	for (k = 0; k < l->n; k++) {
		struct ent e = l->e[k];

		if (e.h & EXT) {
			size_t len;
			const uint8_t *str = ent_bytes(b, e, &len);

			h = e.h & ~EXT;
			if (len == 0)
				continue;
			lo = 0;
			hi = n;
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (pcmp(b, mid, str, len) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			first = lo;
			if (first == n || pcmp(b, first, str, len) != 0)
				continue;
			e.lb = (uint32_t)first;
			e.h = h;
		}
		iv[niv++] = e;
		if (e.h > maxh)
			maxh = e.h;
	}
	l->n = niv;
	/* By part (each sorted there), in b->spare, which becomes the list. */
	memset(&s, 0, sizeof(s));
	s.niv = niv;
	s.maxh = maxh;
	if (list_room(&b->spare, niv) == -1 ||
	    (s.at = calloc(b->ncut + 1, sizeof(*s.at))) == NULL ||
	    (part = malloc((niv ? niv : 1) * sizeof(*part))) == NULL)
		goto out;
	s.iv = b->spare.e;
	for (k = 0; k < niv; k++) {
		for (lo = 0, hi = b->ncut; hi - lo > 1;) {
			mid = lo + (hi - lo) / 2;
			if (b->cut[mid] <= iv[k].lb)
				lo = mid;
			else
				hi = mid;
		}
		part[k] = (uint32_t)lo;
		s.at[lo + 1]++;
	}
	for (k = 1; k <= b->ncut; k++)
		s.at[k] += s.at[k - 1];
	for (k = 0; k < niv; k++)
		s.iv[s.at[part[k]]++] = iv[k];
	/* at[u] is now where part u + 1 begins. */
	memmove(s.at + 1, s.at, b->ncut * sizeof(*s.at));
	s.at[0] = 0;
	/* The list and the spare change places. */
	b->spare.n = niv;
	tl = *l;
	*l = b->spare;
	b->spare = tl;
	b->spare.n = 0;
	if (!held_ok(b, b->spare.cap * sizeof(*b->spare.e)))
		list_free(&b->spare);
	if (parr_reuse(&b->best, &b->bestcap, n, maxh) == -1)
		goto out;
	s.best = b->best;
	if (par_run(b, b->ncut, sweep_unit, &s) == -1)
		goto fail;
	memset(b->mark, 0, (n / 64 + 1) * sizeof(*b->mark));
	if (par_run(b, b->ncut, segment_unit, &s) == -1)
		goto fail;
	rc = 0;
	if (held_ok(b, b->bestcap))
		goto out;
fail:
	/* Too large to keep, or not all zero: the next starts afresh. */
	free(b->best.p);
	b->best.p = NULL;
	b->bestcap = 0;
out:
	free(s.at);
	free(part);
	return rc;
}

/*
 * Cut the sorted suffixes into b->jobs parts of about the same size, each
 * beginning where the common prefix is 0: parts of whole subtrees of the
 * root, which the walks of an iteration take apart (build_parts()).
 */
static int
cut_parts(struct build *b)
{
	size_t n = b->N, k, i, np;

	np = build_parts(b);
	if ((b->cut = malloc((np + 1) * sizeof(*b->cut))) == NULL)
		return -1;
	b->cut[0] = 0;
	b->ncut = 0;
	for (k = 1; k < np; k++) {
		i = n * k / np;
		if (i <= b->cut[b->ncut])
			i = b->cut[b->ncut] + 1;
		while (i < n && parr_get(&b->lcp, i) != 0)
			i++;
		if (i >= n)
			break;
		b->cut[++b->ncut] = i;
	}
	b->cut[++b->ncut] = n;
	if ((b->ws = calloc(b->ncut, sizeof(*b->ws))) == NULL)
		return -1;
	return 0;
}

/* One build at min_count: the final list in *out. */
static int
build_once(struct build *b, int64_t min_count, struct list *out)
{
	int it;

	if (min_count < 1)
		min_count = 1;
	if (!b->sorted) {
		if (suffix_sort(b) == -1 || cut_parts(b) == -1)
			return -1;
		b->sorted = 1;
	}
	if (count_select(b, 1, min_count, out) == -1)
		return -1;
	for (it = 1; it < b->o->iterations; it++)
		if (mark_segments(b, out) == -1 ||
		    count_select(b, 0, min_count, out) == -1)
			return -1;
	return 0;
}

static void
build_free(struct build *b)
{
	size_t i;

	free(b->pool);
	free(b->tstart);
	free(b->alpha);
	free(b->abytes);
	free(b->alen);
	free(b->bmpidx);
	free(b->xs);
	free(b->xlen);
	free(b->xcps);
	free(b->rpool);
	free(b->sa);
	free(b->boff);
	free(b->lcp.p);
	free(b->dep.p);
	free(b->wt);
	free(b->mark);
	free(b->leaf);
	free(b->acnt);
	free(b->alb);
	free(b->cut);
	if (b->ws != NULL)
		for (i = 0; i < b->ncut; i++) {
			free(b->ws[i].wbuf);
			free(b->ws[i].side);
		}
	free(b->ws);
	free(b->best.p);
	list_free(&b->spare);
}

static int
in_sorted(const uint32_t *a, size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a[mid] == cp)
			return 1;
		if (a[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Escape with the build alphabet (always succeeds but for '\n'). */
static int
build_escape(const struct build *b, const uint8_t *p, size_t n, struct buf *out)
{
	size_t i;
	uint32_t cp;
	char num[16];
	int k, m;

	for (i = 0; i < n; i += (size_t)k) {
		k = sw_u8(p + i, &cp);
		if (cp == '\\')
			m = snprintf(num, sizeof(num), "\\\\");
		else if (cp == '_')
			m = snprintf(num, sizeof(num), "\\u");
		else if (cp == '\n' || !in_sorted(b->alpha, b->nalpha, cp))
			m = snprintf(num, sizeof(num), "\\%u;", (unsigned)cp);
		else {
			if (sw_put(out, p + i, (size_t)k) == -1)
				return -1;
			continue;
		}
		if (sw_put(out, num, (size_t)m) == -1)
			return -1;
	}
	return sw_put(out, "_", 1);
}

static int
cmp_cp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	return a < c ? -1 : a > c;
}

/*
 * Below this many bytes of token text, the alphabet is found by
 * sorting every code point, and a code point's alphabet index by binary
 * search: cheaper than clearing a bitmap of all code points and filling
 * an index of the BMP (139 KB and 256 KB) for a few characters.
 */
#define SMALL_TEXT	4096

/*
 * The alphabet of the build, sorted, into b->alpha and b->nalpha: every
 * code point of the tokens, of the reserved tokens and of the escapes.
 * 'text' is the bytes of token text.
 */
static int
build_alphabet(struct build *b, const struct sw_counts *c,
    const struct sw_build_opts *o, size_t text)
{
	static const char *const base[] = { "<pad>", "<EOS>" };
	static const char escchars[] = "\\_u;0123456789";
	uint64_t *seen = NULL, bits;
	uint32_t *all = NULL, cp;
	size_t t, i, k, n = 0, cap = 0, top = 0, nr = 2 + o->nreserved;
	int m, small = text <= SMALL_TEXT;

	if (!small && (seen = calloc(0x110000 / 64, sizeof *seen)) == NULL)
		return -1;
	/* A small text lists every code point; a big one sets its bit. */
#define SEE(x) do {							\
	if (small) {							\
		if (n == cap && sw_grow(&all, &cap, n + 1, sizeof(*all)) == -1) \
			goto fail;					\
		all[n++] = (x);						\
	} else {							\
		seen[(x) >> 6] |= (uint64_t)1 << ((x) & 63);		\
		top = (x) >> 6 > top ? (x) >> 6 : top;			\
	}								\
} while (0)
	for (i = 0; escchars[i] != '\0'; i++)
		SEE((uint8_t)escchars[i]);
	for (t = 0; t < c->n; t++) {
		const uint8_t *p = c->arena + c->off[t];

		for (k = 0; k < c->len[t]; k += (size_t)m) {
			m = sw_u8(p + k, &cp);
			SEE(cp);
		}
	}
	for (i = 0; i < nr; i++) {
		const char *r = i < 2 ? base[i] : o->reserved[i - 2];
		size_t rl = strlen(r);

		if (uni_utf8_valid_prefix((const uint8_t *)r, rl) != rl) {
			errno = EINVAL;
			goto fail;
		}
		for (k = 0; k < rl; k += (size_t)m) {
			m = sw_u8((const uint8_t *)r + k, &cp);
			SEE(cp);
		}
	}
#undef SEE
	if (small) {
		/* Sorted, each once. */
		qsort(all, n, sizeof(*all), cmp_cp);
		for (i = 1, k = 1; i < n; i++)
			if (all[i] != all[k - 1])
				all[k++] = all[i];
		b->alpha = all;
		b->nalpha = k;
		return 0;
	}
	/* Word by word, up to the last in use: they are few among 0x110000. */
	for (i = 0; i <= top; i++)
		for (bits = seen[i]; bits != 0; bits &= bits - 1)
			b->nalpha++;
	if ((b->alpha = malloc(b->nalpha * sizeof(*b->alpha))) == NULL)
		goto fail;
	for (i = 0, k = 0; i <= top; i++)
		for (bits = seen[i]; bits != 0; bits &= bits - 1)
			b->alpha[k++] = (uint32_t)(i * 64 +
			    (size_t)__builtin_ctzll(bits));
	free(seen);
	return 0;
fail:
	free(seen);
	free(all);
	return -1;
}

/*
 * Escaping the tokens goes by stretches of them, each into a buffer of
 * its own in a thread, then joined: part u's tokens t0 .. t1 - 1, their
 * code points, the longest, and the sum of count times length (above
 * INT32_MAX: INT32_MAX + 1).
 */
struct esc {
	size_t		 t0, t1;
	struct buf	 eb;
	uint64_t	 ncp, wsum;
	uint32_t	 maxtok;
};

static int
escape_unit(struct build *b, void *arg, size_t u)
{
	struct esc *e = (struct esc *)arg + u;
	const struct sw_counts *c = b->c;
	size_t t, q, before, tc;

	for (t = e->t0; t < e->t1; t++) {
		before = e->eb.len;
		tc = 0;
		if (build_escape(b, c->arena + c->off[t], c->len[t], &e->eb) == -1)
			return -1;
		if (e->eb.len > UINT32_MAX - 1) {
			errno = E2BIG;
			return -1;
		}
		for (q = before; q < e->eb.len; q++)
			tc += (e->eb.p[q] & 0xC0) != 0x80;
		b->tstart[t] = (uint32_t)e->ncp;	/* the part's start added later */
		e->ncp += tc;
		if (tc > e->maxtok)
			e->maxtok = (uint32_t)tc;
		/* Every count sum is at most the sum of count times length. */
		if (e->wsum > INT32_MAX)
			;
		else if (c->cnt[t] < 0 ||
		    (uint64_t)c->cnt[t] > (INT32_MAX - e->wsum) / tc)
			e->wsum = INT32_MAX + (uint64_t)1;
		else
			e->wsum += (uint64_t)c->cnt[t] * tc;
	}
	return 0;
}

/*
 * The escaped tokens into b->pool, b->plen, b->N, b->tstart, b->maxtok
 * and b->narrow (escape_unit() by parts).  eb is the caller's, freed on
 * failure by it.  0 or -1.
 */
static int
escape_tokens(struct build *b, struct buf *eb)
{
	const struct sw_counts *c = b->c;
	size_t np = parts_of(b->jobs, c->n), u, t, len = 0;
	uint64_t ncp = 0, wsum = 0;
	struct esc *e;
	int rc = -1;

	if ((e = calloc(np, sizeof(*e))) == NULL)
		return -1;
	for (u = 0; u < np; u++) {
		e[u].t0 = c->n * u / np;
		e[u].t1 = c->n * (u + 1) / np;
	}
	if (par_run(b, np, escape_unit, e) == -1)
		goto out;
	for (u = 0; u < np; u++)
		len += e[u].eb.len;
	if (len > UINT32_MAX - 1) {
		errno = E2BIG;
		goto out;
	}
	/* One part is the pool; several are joined into it. */
	if (np == 1) {
		*eb = e[0].eb;
		memset(&e[0].eb, 0, sizeof(e[0].eb));
	}
	for (u = 0; u < np; u++) {
		if (np > 1 && sw_put(eb, e[u].eb.p, e[u].eb.len) == -1)
			goto out;
		for (t = e[u].t0; t < e[u].t1 && ncp > 0; t++)
			b->tstart[t] += (uint32_t)ncp;
		ncp += e[u].ncp;
		if (e[u].maxtok > b->maxtok)
			b->maxtok = e[u].maxtok;
		wsum = wsum + e[u].wsum > INT32_MAX ? INT32_MAX + (uint64_t)1 :
		    wsum + e[u].wsum;
	}
	b->narrow = wsum <= INT32_MAX;
	b->tstart[c->n] = b->tstart[c->n + 1] = (uint32_t)ncp;
	b->pool = eb->p;
	b->plen = eb->len;
	b->N = ncp;
	rc = 0;
out:
	for (u = 0; u < np; u++)
		free(e[u].eb.p);
	free(e);
	return rc;
}

static int
build_setup(struct build *b, const struct sw_counts *c,
    const struct sw_build_opts *o)
{
	static const char *const base[] = { "<pad>", "<EOS>" };
	struct buf eb = { 0 };
	size_t t, i, nr = 2 + o->nreserved, k, text = 0;
	uint32_t cp, maxr = 1;

	memset(b, 0, sizeof(*b));
	b->c = c;
	b->o = o;
	b->jobs = o->jobs > 1 ? o->jobs : 1;
	if (o->iterations < 1) {
		errno = EINVAL;
		return -1;
	}
	for (t = 0; t < c->n; t++)
		text += c->len[t];
	if (build_alphabet(b, c, o, text) == -1)
		return -1;
	b->abytes = malloc((b->nalpha ? b->nalpha : 1) * sizeof(*b->abytes));
	b->alen = malloc(b->nalpha ? b->nalpha : 1);
	b->acnt = malloc((b->nalpha ? b->nalpha : 1) * sizeof(*b->acnt));
	b->alb = malloc((b->nalpha ? b->nalpha : 1) * sizeof(*b->alb));
	/*
	 * A big text looks the BMP up in an index; only the alphabet's
	 * code points are, so it is not cleared.
	 */
	if (text > SMALL_TEXT &&
	    (b->bmpidx = malloc(0x10000 * sizeof(*b->bmpidx))) == NULL)
		return -1;
	if (!b->abytes || !b->alen || !b->acnt || !b->alb)
		return -1;
	for (k = 0; k < b->nalpha; k++) {
		cp = b->alpha[k];
		b->alen[k] = (uint8_t)uni_utf8_encode(cp, b->abytes[k]);
		if (cp < 0x10000 && b->bmpidx != NULL)
			b->bmpidx[cp] = (uint32_t)k;
	}

	/* Escaped tokens, and where each starts in code points. */
	b->ntok = c->n;
	if ((b->tstart = malloc((c->n + 2) * sizeof(*b->tstart))) == NULL)
		return -1;
	if (escape_tokens(b, &eb) == -1)
		goto fail;
	memset(&eb, 0, sizeof(eb));

	/* External strings: escaped reserved tokens, then the alphabet. */
	b->nr = nr;
	b->xs = malloc((nr + b->nalpha) * sizeof(*b->xs));
	b->xlen = malloc((nr + b->nalpha) * sizeof(*b->xlen));
	b->xcps = malloc((nr + b->nalpha) * sizeof(*b->xcps));
	if (!b->xs || !b->xlen || !b->xcps)
		return -1;
	{
		size_t *roff = malloc((nr + 1) * sizeof(*roff));

		if (roff == NULL)
			goto fail;
		for (i = 0; i < nr; i++) {
			const char *r = i < 2 ? base[i] : o->reserved[i - 2];

			roff[i] = eb.len;
			if (build_escape(b, (const uint8_t *)r, strlen(r), &eb) == -1) {
				free(roff);
				goto fail;
			}
		}
		roff[nr] = eb.len;
		b->rpool = eb.p;
		for (i = 0; i < nr; i++) {
			b->xs[i] = b->rpool + roff[i];
			b->xlen[i] = (uint32_t)(roff[i + 1] - roff[i]);
			b->xcps[i] = (uint32_t)sw_cplen(b->xs[i], b->xlen[i]);
			if (b->xcps[i] > maxr)
				maxr = b->xcps[i];
		}
		free(roff);
	}
	for (i = 0; i < b->nalpha; i++) {
		b->xs[nr + i] = b->abytes[i];
		b->xlen[nr + i] = b->alen[i];
		b->xcps[nr + i] = 1;
	}
	b->maxcp = o->max_subtoken_len > 0 ?
	    (uint32_t)(o->max_subtoken_len - 1) : UINT32_MAX;
	b->capcp = b->maxcp > maxr ? b->maxcp : maxr;
	return 0;
fail:
	free(eb.p);
	return -1;
}

/* The bytes of a list's entries (list_vocab()), by stretches. */
struct lbytes {
	const struct list *l;
	const uint8_t	**s;
	size_t		*len;
	size_t		 nunit;
};

static int
lbytes_unit(struct build *b, void *arg, size_t u)
{
	struct lbytes *x = arg;
	size_t i = x->l->n * u / x->nunit, hi = x->l->n * (u + 1) / x->nunit;

	for (; i < hi; i++)
		x->s[i] = ent_bytes(b, x->l->e[i], &x->len[i]);
	return 0;
}

/* The vocabulary of a list. */
static struct sw_vocab *
list_vocab(struct build *b, const struct list *l)
{
	struct lbytes x;
	struct sw_vocab *v = NULL;

	x.l = l;
	x.nunit = parts_of(b->jobs, l->n);
	x.s = malloc((l->n ? l->n : 1) * sizeof(*x.s));
	x.len = malloc((l->n ? l->n : 1) * sizeof(*x.len));
	if (x.s != NULL && x.len != NULL &&
	    par_run(b, x.nunit, lbytes_unit, &x) == 0)
		v = sw_vocab_from_list(x.s, x.len, l->n);
	free(x.s);
	free(x.len);
	return v;
}

struct sw_vocab *
sw_build(const struct sw_counts *c, int64_t min_count,
    const struct sw_build_opts *o)
{
	struct build b;
	struct list l = { 0 };
	struct sw_vocab *v = NULL;

	if (build_setup(&b, c, o) == 0 && build_once(&b, min_count, &l) == 0) {
		v = list_vocab(&b, &l);
		if (v != NULL && o->probe != NULL)
			o->probe(o->probe_arg, min_count, l.n);
	}
	list_free(&l);
	build_free(&b);
	return v;
}

static size_t
absdiff(size_t a, size_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * build_to_target_size's bisect(), as a loop: each level returns the
 * result of the level below only when it is strictly closer to the
 * target, so the answer is the first of the closest probes.
 */
static int
bisect(struct build *b, size_t target, int64_t lo, int64_t hi, struct list *best)
{
	struct list cur = { 0 }, t;
	int64_t mid;
	size_t n;
	int have = 0, rc = -1;

	for (;;) {
		mid = (lo + hi) / 2;
		if (lo + hi < 0 && (lo + hi) % 2 != 0)
			mid--;
		if (build_once(b, mid, &cur) == -1)
			goto out;
		if (b->o->probe != NULL)
			b->o->probe(b->o->probe_arg, mid, cur.n);
		n = cur.n;
		if (!have || absdiff(n, target) < absdiff(best->n, target)) {
			t = *best;
			*best = cur;
			cur = t;
			have = 1;
		}
		if (absdiff(n, target) * 100 < target || lo >= hi || mid < 2)
			break;
		if (n > target)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	rc = 0;
out:
	list_free(&cur);
	return rc;
}

struct sw_vocab *
sw_build_to_target(const struct sw_counts *c, size_t target,
    const struct sw_build_opts *o)
{
	struct build b;
	struct list l = { 0 };
	struct sw_vocab *v = NULL;

	if (target < 1) {
		errno = EINVAL;
		return NULL;
	}
	if (build_setup(&b, c, o) == 0 && bisect(&b, target, 1, 1000, &l) == 0)
		v = list_vocab(&b, &l);
	list_free(&l);
	build_free(&b);
	return v;
}
