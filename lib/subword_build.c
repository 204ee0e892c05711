/*
 * Building a SubwordTextEncoder vocabulary as tensor2tensor does:
 * corpus sampling, token counts (and their files), build_from_token_counts
 * and build_to_target_size.
 *
 * One iteration counts every substring of every escaped token that
 * starts at a boundary of its current segmentation.  The suffixes of
 * all escaped tokens are sorted once; an iteration walks them in order,
 * skipping those that do not start a segment, and builds the trie of
 * the substrings in preorder with no hashing (a suffix shares the path
 * of the one before it up to their common prefix).  A node is a code
 * point: its count is the substring's count, its ancestors are its
 * prefixes, and it remembers where it first occurred, which gives its
 * bytes back for sorting.  Selection is one pass over the nodes in
 * reverse preorder (see select_list()).  The first iteration's trie
 * does not depend on min_count, so a bisection builds it once.
 * Greedy segmentation paints, over the same sorted suffixes, the range
 * of every entry of the current list, shortest first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

struct sw_counts *
sw_counts_new(void)
{
	struct sw_counts *c;

	sw_hash_init();
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->nslots = 1024;
	if ((c->slot = calloc(c->nslots, sizeof(*c->slot))) == NULL) {
		free(c);
		return NULL;
	}
	return c;
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
	size_t ns = c->nslots * 2, i, j;
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

int
sw_counts_add(struct sw_counts *c, const uint8_t *tok, size_t n, int64_t count)
{
	uint64_t h = sw_hash(tok, n);
	size_t mask = c->nslots - 1, j;
	uint32_t k;

	if (n > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	for (j = h & mask; (k = c->slot[j].idx) != 0; j = (j + 1) & mask) {
		if (c->slot[j].h != (uint32_t)(h >> 32))
			continue;
		k--;
		if (c->len[k] == n && memcmp(c->arena + c->off[k], tok, n) == 0) {
			if (c->cnt[k] > INT64_MAX - count) {
				errno = EOVERFLOW;
				return -1;
			}
			c->cnt[k] += count;
			return 0;
		}
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
sw_counts_read(struct sw_counts *c, const uint8_t *p, size_t n, struct sw_err *e)
{
	struct buf tok = { 0 };
	size_t pos = 0, len, i, lineno = 0;
	const uint8_t *line, *q;
	int64_t cnt;
	int rc = -1;

	e->line = 0;
	if (n < 18 || memcmp(p, "#subword-counts 1\n", 18) != 0) {
		snprintf(e->msg, sizeof(e->msg),
		    "not a subword-build count file (no \"#subword-counts 1\" line)");
		e->line = 1;
		return -1;
	}
	pos = 18;
	lineno = 1;
	while (pos < n) {
		line = p + pos;
		q = memchr(line, '\n', n - pos);
		lineno++;
		if (q == NULL) {
			snprintf(e->msg, sizeof(e->msg), "line %zu: no newline at the end",
			    lineno);
			goto bad;
		}
		len = (size_t)(q - line);
		pos += len + 1;
		cnt = 0;
		for (i = 0; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
			if (cnt > (INT64_MAX - (line[i] - '0')) / 10) {
				snprintf(e->msg, sizeof(e->msg), "line %zu: count too large",
				    lineno);
				goto bad;
			}
			cnt = cnt * 10 + (line[i] - '0');
		}
		if (i == 0 || i >= len || line[i] != '\t') {
			snprintf(e->msg, sizeof(e->msg),
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
					snprintf(e->msg, sizeof(e->msg),
					    "line %zu: bad escape in token", lineno);
					goto bad;
				}
				i++;
			}
			if (sw_put(&tok, &b, 1) == -1)
				goto oom;
		}
		if (utf8_valid_prefix(tok.p, tok.len) != tok.len) {
			snprintf(e->msg, sizeof(e->msg), "line %zu: token is not UTF-8",
			    lineno);
			goto bad;
		}
		if (sw_counts_add(c, tok.p ? tok.p : (const uint8_t *)"", tok.len,
		    cnt) == -1) {
			if (errno == EOVERFLOW) {
				snprintf(e->msg, sizeof(e->msg),
				    "line %zu: count overflows", lineno);
				goto bad;
			}
			goto oom;
		}
	}
	rc = 0;
	goto out;
oom:
	snprintf(e->msg, sizeof(e->msg), "%s", strerror(errno));
	goto out;
bad:
	e->line = lineno;
	errno = EINVAL;
out:
	free(tok.p);
	return rc;
}

/* ---- the build -------------------------------------------------------- */

void
sw_build_opts_init(struct sw_build_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->iterations = 4;
}

/* A list of strings (pointers into memory the build keeps alive). */
struct slist {
	const uint8_t	**s;
	size_t		 *len;
	size_t		  n, cap;
};

static int
slist_add(struct slist *l, const uint8_t *s, size_t len)
{
	size_t cap = l->cap;

	if (l->n == l->cap) {
		if (sw_grow(&l->s, &cap, l->n + 1, sizeof(*l->s)) == -1)
			return -1;
		cap = l->cap;
		if (sw_grow(&l->len, &cap, l->n + 1, sizeof(*l->len)) == -1)
			return -1;
		l->cap = cap;
	}
	l->s[l->n] = s;
	l->len[l->n] = len;
	l->n++;
	return 0;
}

static void
slist_free(struct slist *l)
{
	free(l->s);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

/*
 * The substring trie of one iteration, built from the sorted suffixes:
 * nodes are created in preorder, so a child always follows its parent.
 */
struct strie {
	uint32_t	*parent;
	uint32_t	*off;		/* pool offset of the first occurrence */
	uint32_t	*blen;		/* bytes */
	int64_t		*cnt;
	uint32_t	*achar;		/* per alphabet character: its node, or 0 */
	size_t		 n, cap;
};

struct build {
	const struct sw_counts *c;
	const struct sw_build_opts *o;
	uint8_t		*pool;		/* escaped tokens */
	size_t		 plen;
	uint32_t	*eoff, *elen;	/* per token */
	uint32_t	 maxelen;
	uint32_t	*alpha;		/* alphabet, sorted */
	uint8_t		(*abytes)[4];
	uint8_t		*alen;
	size_t		 nalpha;
	struct slist	 reserved;	/* escaped reserved tokens */
	uint8_t		*rpool;
	/* Every suffix of every escaped token at a code point boundary, sorted. */
	uint32_t	*sfx;		/* pool offset */
	uint32_t	*slen;		/* bytes to the end of its token */
	int64_t		*sw;		/* its token's count */
	uint32_t	*slcp;		/* common prefix with the previous one, in
					   bytes, at a code point boundary */
	size_t		 nsfx;
	uint8_t		*mark;		/* per suffix: a segment start now */
	uint32_t	*snode, *scps;	/* path of the previous suffix */
	uint32_t	*rank;		/* per pool offset: its suffix's index */
	uint32_t	*best;		/* per suffix: longest list entry it starts with */
	struct strie	 it0;		/* first iteration, shared */
	int64_t		*acc;		/* per node: accepted descendants' counts */
	size_t		 acccap;
	struct strie	 work;		/* later iterations, arrays reused */
	int		 have_it0;
};

static void
strie_free(struct strie *s)
{
	free(s->parent);
	free(s->off);
	free(s->blen);
	free(s->cnt);
	free(s->achar);
	memset(s, 0, sizeof(*s));
}

static int
strie_grow(struct strie *s, size_t need)
{
	size_t c;

	if (need <= s->cap)
		return 0;
	if (need > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (need < 2 * s->cap)
		need = 2 * s->cap;
	c = s->cap;
	if (sw_grow(&s->parent, &c, need, sizeof(*s->parent)) == -1)
		return -1;
	c = s->cap;
	if (sw_grow(&s->off, &c, need, sizeof(*s->off)) == -1)
		return -1;
	c = s->cap;
	if (sw_grow(&s->blen, &c, need, sizeof(*s->blen)) == -1)
		return -1;
	c = s->cap;
	if (sw_grow(&s->cnt, &c, need, sizeof(*s->cnt)) == -1)
		return -1;
	s->cap = c;
	return 0;
}

static const struct build *sort_build;

/* A suffix to sort: its first 8 bytes (big-endian, zero-padded) and index. */
struct skey {
	uint64_t	 key;
	uint32_t	 i;
	uint32_t	 len;
};

/* Suffixes by bytes; i is the token, len the bytes to its end. */
static int
cmp_sfx2(const void *x, const void *y)
{
	const struct skey *p = x, *q = y;
	const struct build *b = sort_build;
	uint32_t n;
	int r;

	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	if (p->len <= 8 || q->len <= 8)
		return p->len < q->len ? -1 : p->len > q->len;
	n = p->len < q->len ? p->len : q->len;
	r = memcmp(b->pool + b->eoff[p->i] + b->elen[p->i] - p->len + 8,
	    b->pool + b->eoff[q->i] + b->elen[q->i] - q->len + 8, n - 8);
	if (r != 0)
		return r;
	return p->len < q->len ? -1 : p->len > q->len;
}

/* cmp_sfx2, with equal suffixes in pool order (what a stable sort gives). */
static int
cmp_sfx2_stable(const void *x, const void *y)
{
	const struct skey *p = x, *q = y;
	const struct build *b = sort_build;
	uint32_t op, oq;
	int r;

	if ((r = cmp_sfx2(x, y)) != 0)
		return r;
	op = b->eoff[p->i] + b->elen[p->i] - p->len;
	oq = b->eoff[q->i] + b->elen[q->i] - q->len;
	return op < oq ? -1 : op > oq;
}

/*
 * Sort the suffixes: a stable LSD radix sort on their first 8 bytes
 * (passes whose byte is the same everywhere skipped), then each run of
 * equal first bytes by comparison.  Returns 0, or -1 with errno ENOMEM.
 */
static int
sort_skeys(struct skey *a, size_t n)
{
	size_t cnt[8][256] = { { 0 } }, i, j, sum;
	struct skey *tmp, *src = a, *dst;
	int pass;

	if (n < 2)
		return 0;
	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		for (pass = 0; pass < 8; pass++)
			cnt[pass][(a[i].key >> (8 * pass)) & 0xFF]++;
	dst = tmp;
	for (pass = 0; pass < 8; pass++) {
		size_t *c = cnt[pass];

		if (c[(src[0].key >> (8 * pass)) & 0xFF] == n)
			continue;
		for (sum = 0, j = 0; j < 256; j++) {
			size_t k = c[j];

			c[j] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * pass)) & 0xFF]++] = src[i];
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (j - i > 1)
			qsort(a + i, j - i, sizeof(*a), cmp_sfx2_stable);
	}
	return 0;
}

/* Collect and sort the suffixes once. */
static int
sort_suffixes(struct build *b)
{
	uint32_t *so, *sl, t, j, end;
	int64_t *sw;
	struct skey *idx;
	size_t n = 0, i;

	for (i = 0; i < b->plen; i++)
		n += (b->pool[i] & 0xC0) != 0x80;
	b->nsfx = n;
	idx = malloc((n ? n : 1) * sizeof(*idx));
	b->sfx = malloc((n ? n : 1) * sizeof(*b->sfx));
	b->slcp = malloc((n ? n : 1) * sizeof(*b->slcp));
	b->mark = calloc(n ? n : 1, 1);
	b->snode = malloc(((size_t)b->maxelen + 1) * sizeof(*b->snode));
	b->scps = malloc(((size_t)b->maxelen + 1) * sizeof(*b->scps));
	if (!idx || !b->sfx || !b->slcp || !b->mark || !b->snode || !b->scps) {
		free(idx);
		return -1;
	}
	n = 0;
	for (t = 0; t < b->c->n; t++) {
		end = b->eoff[t] + b->elen[t];
		for (j = b->eoff[t]; j < end; j++)
			if ((b->pool[j] & 0xC0) != 0x80) {
				uint64_t key = 0;
				uint32_t k;

				for (k = 0; k < 8; k++)
					key = key << 8 | (j + k < end ? b->pool[j + k] : 0);
				b->sfx[n] = j;
				idx[n].key = key;
				idx[n].i = t;
				idx[n].len = end - j;
				n++;
			}
	}
	sort_build = b;
	if (sort_skeys(idx, n) == -1) {
		free(idx);
		return -1;
	}
	so = malloc((n ? n : 1) * sizeof(*so));
	sl = malloc((n ? n : 1) * sizeof(*sl));
	sw = malloc((n ? n : 1) * sizeof(*sw));
	if (!so || !sl || !sw) {
		free(idx);
		free(so);
		free(sl);
		free(sw);
		return -1;
	}
	for (i = 0; i < n; i++) {
		t = idx[i].i;
		so[i] = b->eoff[t] + b->elen[t] - idx[i].len;
		sl[i] = idx[i].len;
		sw[i] = b->c->cnt[t];
	}
	free(idx);
	free(b->sfx);
	b->sfx = so;
	b->slen = sl;
	b->sw = sw;
	b->rank = malloc((b->plen ? b->plen : 1) * sizeof(*b->rank));
	b->best = malloc((n ? n : 1) * sizeof(*b->best));
	if (!b->rank || !b->best)
		return -1;
	for (i = 0; i < n; i++)
		b->rank[b->sfx[i]] = (uint32_t)i;
	for (i = 0; i < n; i++) {
		uint32_t a, c, la, lc, k = 0;

		if (i == 0) {
			b->slcp[i] = 0;
			continue;
		}
		a = b->sfx[i - 1];
		c = b->sfx[i];
		la = b->slen[i - 1];
		lc = b->slen[i];
		while (k < la && k < lc && b->pool[a + k] == b->pool[c + k])
			k++;
		/* Back to a code point boundary, the same in both. */
		while (k > 0 && k < lc && (b->pool[c + k] & 0xC0) == 0x80)
			k--;
		b->slcp[i] = k;
	}
	return 0;
}

/* Bytes of the UTF-8 sequence that starts with b. */
static inline uint32_t
u8len(uint8_t b)
{
	return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/*
 * One iteration's counting: the trie of every substring of at most
 * L - 1 code points that starts at a marked segment start (all code
 * point boundaries when 'all'), each counted with its token's weight.
 * A node is a code point; its count is the number of (weighted)
 * substrings that end there, summed over its subtree at the end.
 * 's' may hold the arrays of an earlier iteration; they are reused.
 */
static int
count_iteration(struct build *b, struct strie *s, int all)
{
	uint32_t maxcp = b->o->max_subtoken_len > 0 ?
	    (uint32_t)(b->o->max_subtoken_len - 1) : UINT32_MAX;
	uint32_t run = UINT32_MAX, tdp = 0, off, end, d, cps, node, k;
	size_t i;
	int first = 1;

	if (strie_grow(s, 1024) == -1)
		return -1;
	s->n = 1;
	s->parent[0] = s->off[0] = s->blen[0] = 0;
	s->cnt[0] = 0;
	b->snode[0] = 0;
	b->scps[0] = 0;
	for (i = 0; i < b->nsfx && maxcp > 0; i++) {
		if (i + 16 < b->nsfx)
			__builtin_prefetch(b->pool + b->sfx[i + 16] + b->slcp[i + 16]);
		if (b->slcp[i] < run)
			run = b->slcp[i];
		off = b->sfx[i];
		if (!all && !b->mark[i])
			continue;
		end = off + b->slen[i];
		d = first ? 0 : run < tdp ? run : tdp;
		run = UINT32_MAX;
		first = 0;
		cps = b->scps[d];
		node = b->snode[d];
		while (off + d < end && cps < maxcp) {
			uint32_t nn = (uint32_t)s->n;

			if (s->n == s->cap && strie_grow(s, s->n + 1) == -1)
				return -1;
			k = u8len(b->pool[off + d]);
			s->parent[nn] = node;
			s->off[nn] = off;
			s->blen[nn] = d + k;
			s->cnt[nn] = 0;
			s->n++;
			node = nn;
			d += k;
			cps++;
			b->snode[d] = node;
			b->scps[d] = cps;
		}
		tdp = d;
		s->cnt[node] += b->sw[i];
	}
	/* Subtree sums: a substring's count is that of all its extensions. */
	for (i = s->n; i-- > 1;)
		s->cnt[s->parent[i]] += s->cnt[i];
	free(s->achar);
	if ((s->achar = calloc(b->nalpha ? b->nalpha : 1, sizeof(*s->achar))) == NULL)
		return -1;
	for (i = 1; i < s->n; i++)
		if (s->parent[i] == 0) {
			uint32_t cp;
			size_t lo = 0, hi = b->nalpha, mid;

			sw_u8(b->pool + s->off[i], &cp);
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (b->alpha[mid] < cp)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < b->nalpha && b->alpha[lo] == cp)
				s->achar[lo] = (uint32_t)i;
		}
	return 0;
}


/*
 * Compare suffix i with the first bytes of (e, n): <0, 0 when e is a
 * prefix of the suffix, >0.
 */
static int
pcmp(const struct build *b, size_t i, const uint8_t *e, size_t n)
{
	size_t sl = b->slen[i];
	int r = memcmp(b->pool + b->sfx[i], e, sl < n ? sl : n);

	if (r != 0)
		return r;
	return sl < n ? -1 : 0;
}

/*
 * Mark the segment starts of every token under greedy longest match
 * with the list 'l'.  The suffixes that start with an entry form a range
 * of the sorted suffixes; painting the ranges shortest entry first
 * leaves, for every suffix, the longest entry it starts with.
 */
static int
mark_segments(struct build *b, const struct slist *l)
{
	uint32_t t, j, n, *order, len;
	size_t i, k, lo, hi, mid, first;
	int rc = -1;

	if ((order = malloc((l->n ? l->n : 1) * sizeof(*order))) == NULL)
		return -1;
	/* Entries by length: a counting sort over byte lengths. */
	{
		size_t maxl = 0, *cnt;

		for (i = 0; i < l->n; i++)
			if (l->len[i] > maxl)
				maxl = l->len[i];
		if ((cnt = calloc(maxl + 2, sizeof(*cnt))) == NULL)
			goto out;
		for (i = 0; i < l->n; i++)
			cnt[l->len[i] + 1]++;
		for (k = 1; k <= maxl + 1; k++)
			cnt[k] += cnt[k - 1];
		for (i = 0; i < l->n; i++)
			order[cnt[l->len[i]]++] = (uint32_t)i;
		free(cnt);
	}
	memset(b->best, 0, b->nsfx * sizeof(*b->best));
	for (k = 0; k < l->n; k++) {
		const uint8_t *e = l->s[order[k]];

		len = (uint32_t)l->len[order[k]];
		if (len == 0)
			continue;
		if (b->pool != NULL && e >= b->pool && e < b->pool + b->plen) {
			/*
			 * A learned entry points at an occurrence: its range is
			 * the run around that suffix with common prefixes >= len.
			 */
			mid = b->rank[e - b->pool];
			for (first = mid; first > 0 && b->slcp[first] >= len; first--)
				;
			for (lo = mid + 1; lo < b->nsfx && b->slcp[lo] >= len; lo++)
				;
		} else {
			lo = 0;
			hi = b->nsfx;
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (pcmp(b, mid, e, len) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			first = lo;
			hi = b->nsfx;
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if (pcmp(b, mid, e, len) <= 0)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
		for (i = first; i < lo; i++)
			b->best[i] = len;
	}
	memset(b->mark, 0, b->nsfx);
	for (t = 0; t < b->c->n; t++) {
		if (t + 4 < b->c->n) {
			/* The best entries of a later token's code points. */
			uint32_t u = t + 4, q, qe = b->eoff[u] + b->elen[u];

			for (q = b->eoff[u]; q < qe && q < b->eoff[u] + 96; q++)
				if ((b->pool[q] & 0xC0) != 0x80)
					__builtin_prefetch(&b->best[b->rank[q]]);
		}
		n = b->elen[t];
		for (j = 0; j < n; j += len) {
			uint32_t r = b->rank[b->eoff[t] + j];

			b->mark[r] = 1;
			if ((len = b->best[r]) == 0) {
				/* Cannot happen: every character is an entry. */
				errno = EINVAL;
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(order);
	return rc;
}

struct kept {
	int64_t		 cnt;
	const uint8_t	*s;
	size_t		 len;
};

static int
cmp_kept(const void *x, const void *y)
{
	const struct kept *a = x, *b = y;
	int r;

	if (a->cnt != b->cnt)
		return a->cnt > b->cnt ? -1 : 1;
	r = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
	if (r != 0)
		return -r;
	return a->len > b->len ? -1 : a->len < b->len;
}

/*
 * Steps (b)..(f): choose the subtokens from the counts of the trie 's'
 * and make the new list.
 *
 * tensor2tensor takes the candidates (count >= min_count) longest
 * first and lowers the counts of the proper prefixes of each accepted
 * one by its current count.  The current count of a string is thus its
 * count less the current counts of the accepted strings it is a proper
 * prefix of: its strict descendants, which a walk over the nodes in
 * reverse preorder meets before it, as the longest-first order does.
 * The sums of the accepted descendants go up the tree in 'acc' (one
 * per node, zeroed here), so the counts themselves stay untouched and
 * serve every probe of a bisection.
 */
static int
select_list(struct build *b, const struct strie *s, int64_t min_count,
    struct slist *out)
{
	struct kept *kept = NULL;
	size_t nk = 0, kcap = 0, a, i;
	int64_t *acc = b->acc, cur, up;
	int rc = -1;

	memset(acc, 0, s->n * sizeof(*acc));
	for (i = s->n; i-- > 1;) {
		cur = s->cnt[i] - acc[i];
		up = acc[i];
		if (s->cnt[i] >= min_count && cur >= min_count) {
			up += cur;
			if (s->parent[i] != 0) {
				if (nk == kcap && sw_grow(&kept, &kcap, nk + 1,
				    sizeof(*kept)) == -1)
					goto out;
				kept[nk].cnt = cur;
				kept[nk].s = b->pool + s->off[i];
				kept[nk].len = s->blen[i];
				nk++;
			}
		}
		acc[s->parent[i]] += up;
	}
	for (a = 0; a < b->nalpha; a++) {
		int64_t c = 0;
		uint32_t node;

		if ((node = s->achar[a]) != 0)
			c = s->cnt[node] - acc[node];
		if (nk == kcap && sw_grow(&kept, &kcap, nk + 1, sizeof(*kept)) == -1)
			goto out;
		kept[nk].cnt = c;
		kept[nk].s = b->abytes[a];
		kept[nk].len = b->alen[a];
		nk++;
	}
	qsort(kept, nk, sizeof(*kept), cmp_kept);
	out->n = 0;
	for (a = 0; a < b->reserved.n; a++)
		if (slist_add(out, b->reserved.s[a], b->reserved.len[a]) == -1)
			goto out;
	for (a = 0; a < nk; a++)
		if (slist_add(out, kept[a].s, kept[a].len) == -1)
			goto out;
	rc = 0;
out:
	free(kept);
	return rc;
}

/* One build at min_count: the final list in *out. */
static int
build_once(struct build *b, int64_t min_count, struct slist *out)
{
	int it;

	if (min_count < 1)
		min_count = 1;
	if (!b->have_it0) {
		memset(&b->it0, 0, sizeof(b->it0));
		memset(&b->work, 0, sizeof(b->work));
		b->have_it0 = 1;
		if (sort_suffixes(b) == -1 || count_iteration(b, &b->it0, 1) == -1)
			return -1;
	}
	if (sw_grow(&b->acc, &b->acccap, b->it0.n, sizeof(*b->acc)) == -1 ||
	    select_list(b, &b->it0, min_count, out) == -1)
		return -1;
	for (it = 1; it < b->o->iterations; it++)
		if (mark_segments(b, out) == -1 ||
		    count_iteration(b, &b->work, 0) == -1 ||
		    sw_grow(&b->acc, &b->acccap, b->work.n, sizeof(*b->acc)) == -1 ||
		    select_list(b, &b->work, min_count, out) == -1)
			return -1;
	return 0;
}

static void
build_free(struct build *b)
{
	free(b->pool);
	free(b->eoff);
	free(b->elen);
	free(b->alpha);
	free(b->abytes);
	free(b->alen);
	free(b->rpool);
	slist_free(&b->reserved);
	if (b->have_it0) {
		strie_free(&b->it0);
		strie_free(&b->work);
		free(b->acc);
	}
	free(b->sfx);
	free(b->slen);
	free(b->sw);
	free(b->rank);
	free(b->best);
	free(b->slcp);
	free(b->mark);
	free(b->snode);
	free(b->scps);
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
build_setup(struct build *b, const struct sw_counts *c,
    const struct sw_build_opts *o)
{
	static const char *const base[] = { "<pad>", "<EOS>" };
	static const char escchars[] = "\\_u;0123456789";
	uint8_t *seen = NULL;
	struct buf eb = { 0 };
	size_t t, i, nr = 2 + o->nreserved, k;
	uint32_t cp;
	int m;

	memset(b, 0, sizeof(*b));
	b->c = c;
	b->o = o;
	if (o->iterations < 1) {
		errno = EINVAL;
		return -1;
	}
	/* The alphabet: a bitmap over all code points, then a sorted list. */
	if ((seen = calloc(0x110000 / 8, 1)) == NULL)
		return -1;
#define SEE(x) (seen[(x) >> 3] |= (uint8_t)(1u << ((x) & 7)))
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

		if (utf8_valid_prefix((const uint8_t *)r, rl) != rl) {
			free(seen);
			errno = EINVAL;
			return -1;
		}
		for (k = 0; k < rl; k += (size_t)m) {
			m = sw_u8((const uint8_t *)r + k, &cp);
			SEE(cp);
		}
	}
#undef SEE
	for (cp = 0; cp < 0x110000; cp++)
		if (seen[cp >> 3] & (1u << (cp & 7)))
			b->nalpha++;
	b->alpha = malloc(b->nalpha * sizeof(*b->alpha));
	b->abytes = malloc(b->nalpha * sizeof(*b->abytes));
	b->alen = malloc(b->nalpha);
	if (!b->alpha || !b->abytes || !b->alen) {
		free(seen);
		return -1;
	}
	for (cp = 0, k = 0; cp < 0x110000; cp++)
		if (seen[cp >> 3] & (1u << (cp & 7))) {
			b->alpha[k] = cp;
			b->alen[k] = (uint8_t)utf8_encode(cp, b->abytes[k]);
			k++;
		}
	free(seen);

	/* Escaped tokens. */
	b->eoff = malloc((c->n ? c->n : 1) * sizeof(*b->eoff));
	b->elen = malloc((c->n ? c->n : 1) * sizeof(*b->elen));
	if (!b->eoff || !b->elen)
		return -1;
	for (t = 0; t < c->n; t++) {
		size_t before = eb.len;

		if (build_escape(b, c->arena + c->off[t], c->len[t], &eb) == -1)
			goto fail;
		if (eb.len > UINT32_MAX - 1) {
			errno = E2BIG;
			goto fail;
		}
		b->eoff[t] = (uint32_t)before;
		b->elen[t] = (uint32_t)(eb.len - before);
		if (b->elen[t] > b->maxelen)
			b->maxelen = b->elen[t];
	}
	b->pool = eb.p;
	b->plen = eb.len;
	memset(&eb, 0, sizeof(eb));
	/* Escaped reserved tokens, in a pool of their own. */
	{
		size_t *roff = malloc(nr * sizeof(*roff));

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
		b->rpool = eb.p;
		for (i = 0; i < nr; i++)
			if (slist_add(&b->reserved, b->rpool + roff[i],
			    (i + 1 < nr ? roff[i + 1] : eb.len) - roff[i]) == -1) {
				free(roff);
				return -1;
			}
		free(roff);
	}
	return 0;
fail:
	free(eb.p);
	return -1;
}

static struct sw_vocab *
list_vocab(const struct slist *l)
{
	return sw_vocab_from_list(l->s, l->len, l->n);
}

struct sw_vocab *
sw_build(const struct sw_counts *c, int64_t min_count,
    const struct sw_build_opts *o)
{
	struct build b;
	struct slist l = { 0 };
	struct sw_vocab *v = NULL;

	if (build_setup(&b, c, o) == 0 && build_once(&b, min_count, &l) == 0) {
		v = list_vocab(&l);
		if (v != NULL && o->probe != NULL)
			o->probe(o->probe_arg, min_count, l.n);
	}
	slist_free(&l);
	build_free(&b);
	return v;
}

static size_t
absdiff(size_t a, size_t b)
{
	return a > b ? a - b : b - a;
}

/* build_to_target_size's bisect(): the best list in *best. */
static int
bisect(struct build *b, size_t target, int64_t lo, int64_t hi, struct slist *best)
{
	int64_t mid = (lo + hi) / 2;
	struct slist other = { 0 };
	int rc;

	if (lo + hi < 0 && (lo + hi) % 2 != 0)
		mid--;
	if (build_once(b, mid, best) == -1)
		return -1;
	if (b->o->probe != NULL)
		b->o->probe(b->o->probe_arg, mid, best->n);
	if (absdiff(best->n, target) * 100 < target || lo >= hi || mid < 2)
		return 0;
	if (best->n > target)
		rc = bisect(b, target, mid + 1, hi, &other);
	else
		rc = bisect(b, target, lo, mid - 1, &other);
	if (rc == 0 && absdiff(other.n, target) < absdiff(best->n, target)) {
		slist_free(best);
		*best = other;
		return 0;
	}
	slist_free(&other);
	return rc;
}

struct sw_vocab *
sw_build_to_target(const struct sw_counts *c, size_t target,
    const struct sw_build_opts *o)
{
	struct build b;
	struct slist l = { 0 };
	struct sw_vocab *v = NULL;

	if (target < 1) {
		errno = EINVAL;
		return NULL;
	}
	if (build_setup(&b, c, o) == 0 && bisect(&b, target, 1, 1000, &l) == 0)
		v = list_vocab(&l);
	slist_free(&l);
	build_free(&b);
	return v;
}
