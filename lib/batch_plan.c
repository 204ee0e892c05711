/*
 * The per-epoch pipeline of batch.h: pair sizes, sampling across
 * pairs (SampledMultiDataset), order and length filter, batch_by_size,
 * epoch shuffle and shards (EpochBatchIterator, ShardedIterator).
 *
 * One epoch, for V virtual items:
 *  1. Draw each pair's sentences (sampling) into one array A of V
 *     words, A[v] = the global sentence number of virtual item v (or,
 *     for an item the length filter removes when sampling, a flag and
 *     its number in a side table that remembers v; without sampling
 *     v is the sentence), counting the items of every (source, target)
 *     bucket on the way.
 *  2. Shuffle A with the order generator.  fairseq shuffles 0..V-1
 *     and reads sizes through it; the swaps do not depend on the
 *     contents, so shuffling the mapped values gives the same result.
 *  3. The stable sorts by target then source order the items by
 *     (source, target) bucket, ties in shuffled order; the sorted
 *     sequence of sizes is therefore known from the bucket counts
 *     alone, and batch_by_size runs on them before any item moves.
 *  4. The batch list is shuffled and dealt to the shards.
 *  5. A is sorted in chunks (a pass that looks sizes up, then counting
 *     passes by target and by source) and the chunks are merged bucket
 *     by bucket, writing only the items of the batches wanted
 *     (place_chunked).  When sizes are too spread for a bucket table,
 *     one pass over A with a cursor per bucket does it (place).
 * A word is 32 bits while sentences and virtual items stay below
 * 2^31, else 64.  Memory for V items: A (one word each), the items of
 * the wanted batches, a few words per batch, and one chunk's arrays.
 */
#include <sys/mman.h>

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "errmsg.h"
#include "nprng.h"

#define NONE		UINT64_MAX
#define CHUNK_MAX	((uint64_t)1 << 21)	/* items sorted at once */
#define BLK_SHIFT	12
#define DENSE_MAX	((uint64_t)1 << 21)	/* buckets for direct keys */

#define HUGE_MIN	((size_t)2 << 20)	/* arrays asked to live in huge pages */
#define HUGE_ALIGN	((size_t)2 << 20)

/*
 * Arrays of an epoch are large, touched once or twice and freed: on
 * 4 KiB pages the page faults and unmapping cost as much as a sorting
 * pass.  From HUGE_MIN on they are aligned to and advised into
 * transparent huge pages where the system has them (a hint: nothing
 * changes where it is ignored).
 */
static void *
xalloc(uint64_t n, size_t size)
{
	void *p;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / size)
		return NULL;
#ifdef MADV_HUGEPAGE
	if ((size_t)n * size >= HUGE_MIN) {
		size_t len = ((size_t)n * size + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);

		if (posix_memalign(&p, HUGE_ALIGN, len) != 0)
			return NULL;
		(void)madvise(p, len, MADV_HUGEPAGE);
		return p;
	}
#endif
	p = malloc((size_t)n * size);
	return p;
}

/* Most items place_chunked() sorts at once; 0: place() by buckets. */
static uint64_t chunk_max = CHUNK_MAX;

void
batch_set_sort_chunk(uint64_t items)
{
	chunk_max = items;
}

/* Words are 32 bits (one bit a flag) below this many sentences and items. */
static uint64_t word_limit = (uint64_t)1 << 31;

void
batch_set_word_limit(uint64_t n)
{
	word_limit = n < ((uint64_t)1 << 31) ? n : (uint64_t)1 << 31;
}

/* ---- batch_by_size, one item at a time ---- */

void
batch_cutter_init(struct batch_cutter *c, const struct batch_limits *lim)
{
	memset(c, 0, sizeof *c);
	c->lim = *lim;
	if (c->lim.mult < 1)
		c->lim.mult = 1;
}

/* count * width > limit, without overflow (all non-negative, limit > 0). */
static inline int
exceeds(uint64_t count, int64_t width, int64_t limit)
{
	uint64_t prod;

	if (__builtin_mul_overflow(count, (uint64_t)width, &prod))
		return 1;
	return prod > (uint64_t)limit;
}

static inline int
cutter_push(struct batch_cutter *c, int64_t ntok, uint64_t out[2],
    char *err, size_t errlen)
{
	int64_t T = c->lim.max_tokens, S = c->lim.max_sentences;
	uint64_t M = (uint64_t)c->lim.mult, pos = c->pos, count;
	int64_t width;
	int nout = 0, over, aligned;

	if (ntok < 0) {
		rp_seterr(err, errlen, "item %llu: negative size %lld",
		    (unsigned long long)pos, (long long)ntok);
		return -1;
	}
	if (T > 0 && ntok > T) {
		rp_seterr(err, errlen, "Sentences lengths should not exceed "
		    "max_tokens=%lld", (long long)T);
		return -1;
	}
	if (ntok > c->tmax)
		c->tmax = ntok;
	width = c->wmax > c->tmax ? c->wmax : c->tmax;
	count = pos + 1 - c->start;
	aligned = count < M || count % M == 0;
	over = (S > 0 && count > (uint64_t)S) ||
	    (T > 0 && exceeds(count, width, T));
	if (over) {
		if (T > 0 && exceeds(pos + 1 - c->end, c->tmax, T)) {
			out[nout++] = c->end;
			c->end = pos;
			c->tmax = ntok;
		}
		out[nout++] = c->end;
		c->lastcut = c->end;
		c->start = c->end;
		width = c->tmax;
	}
	if (over || aligned) {
		c->end = pos + 1;
		c->wmax = width;
		c->tmax = 0;
	}
	c->pos = pos + 1;
	return nout;
}

/*
 * After a push of ntok, push up to k more items of the same size at
 * once while none of them can close a batch, and return how many.
 * The width stays w = max(wmax, tmax, ntok) over such a run, so the
 * pushes that close nothing are those whose count stays at most
 * min(S, T / w); among them the aligned counts commit the tail, the
 * last of them setting end.  Same state as pushing one at a time.
 */
static inline uint64_t
cutter_skip(struct batch_cutter *c, int64_t ntok, uint64_t k)
{
	int64_t T = c->lim.max_tokens, S = c->lim.max_sentences, w;
	uint64_t M = (uint64_t)c->lim.mult, L = UINT64_MAX, c0, m, cmax, ca;

	if (k == 0)
		return 0;
	w = c->wmax > c->tmax ? c->wmax : c->tmax;
	if (ntok > w)
		w = ntok;
	if (S > 0)
		L = (uint64_t)S;
	if (T > 0 && w > 0 && (uint64_t)(T / w) < L)
		L = (uint64_t)(T / w);
	c0 = c->pos + 1 - c->start;	/* count of the next push */
	if (L == UINT64_MAX || c0 > L)
		return 0;
	m = L - c0 + 1;
	if (m > k)
		m = k;
	cmax = c0 + m - 1;
	ca = cmax < M ? cmax : cmax / M * M;	/* last aligned count */
	if (ca >= c0) {
		c->end = c->start + ca;
		c->wmax = w;
		c->tmax = ca == cmax ? 0 : ntok;
	} else if (ntok > c->tmax)
		c->tmax = ntok;
	c->pos += m;
	return m;
}

int
batch_cutter_push(struct batch_cutter *c, int64_t ntok, uint64_t out[2],
    char *err, size_t errlen)
{
	return cutter_push(c, ntok, out, err, errlen);
}

int
batch_cutter_finish(struct batch_cutter *c, uint64_t out[2], int *drop_last)
{
	uint64_t M = (uint64_t)c->lim.mult, n = c->pos;
	int nout = 0;

	*drop_last = 0;
	if (n == 0)
		return 0;
	/* A pending tail is a batch of its own (end > lastcut here). */
	if (c->end != n) {
		out[nout++] = c->end;
		c->lastcut = c->end;
	}
	out[nout++] = n;
	if (c->lim.compat == BATCH_COMPAT_MAIN && M > 1 &&
	    (n - c->lastcut) % M != 0)
		*drop_last = 1;
	return nout;
}

/* ---- sizes ---- */

struct batch_data {
	size_t		 npairs;
	int		 bilingual;
	int		 wide;		/* sizes in uint32 (else uint16) */
	uint64_t	*n;		/* npairs */
	uint64_t	*off;		/* npairs + 1: first global number */
	uint64_t	 total;
	void		*sz;		/* total x (source[, target]) sizes, interleaved */
	unsigned	 st;		/* sizes per sentence: 1 or 2 */
	uint32_t	 smax, tmax;
	uint32_t	*blk;		/* pair of global number k << BLK_SHIFT */
	size_t		 nblk;
};

struct batch_data *
batch_data_new(size_t npairs, const uint64_t *n, int bilingual, char *err,
    size_t errlen)
{
	struct batch_data *d;
	size_t i, b, j;

	if ((d = calloc(1, sizeof *d)) == NULL)
		goto nomem;
	d->npairs = npairs;
	d->bilingual = bilingual != 0;
	if ((d->n = xalloc(npairs, sizeof *d->n)) == NULL ||
	    (d->off = xalloc(npairs + 1, sizeof *d->off)) == NULL)
		goto nomem;
	d->off[0] = 0;
	for (i = 0; i < npairs; i++) {
		d->n[i] = n[i];
		if (n[i] > UINT64_MAX / 4 - d->off[i]) {
			rp_seterr(err, errlen, "too many sentences");
			batch_data_free(d);
			return NULL;
		}
		d->off[i + 1] = d->off[i] + n[i];
	}
	d->total = d->off[npairs];
	d->st = d->bilingual ? 2 : 1;
	if ((d->sz = xalloc(d->total, 2 * d->st)) == NULL)
		goto nomem;
	memset(d->sz, 0, (size_t)(d->total > 0 ? d->total : 1) * 2 * d->st);
	d->nblk = (size_t)(d->total >> BLK_SHIFT) + 1;
	if ((d->blk = xalloc(d->nblk, sizeof *d->blk)) == NULL)
		goto nomem;
	for (b = 0, j = 0; b < d->nblk; b++) {
		uint64_t g = (uint64_t)b << BLK_SHIFT;

		while (j + 1 < npairs && d->off[j + 1] <= g)
			j++;
		d->blk[b] = (uint32_t)j;
	}
	return d;
nomem:
	rp_seterr(err, errlen, "sizes of %zu pairs: out of memory", npairs);
	batch_data_free(d);
	return NULL;
}

void
batch_data_free(struct batch_data *d)
{
	if (d == NULL)
		return;
	free(d->n);
	free(d->off);
	free(d->sz);
	free(d->blk);
	free(d);
}

/* Source (side 0) or target (side 1) size of global sentence g. */
static inline uint32_t
sz_get(const struct batch_data *d, uint64_t g, unsigned side)
{
	if (side >= d->st)
		return 0;
	return d->wide ? ((const uint32_t *)d->sz)[g * d->st + side] :
	    ((const uint16_t *)d->sz)[g * d->st + side];
}

static inline const void *
sz_addr(const struct batch_data *d, uint64_t g)
{
	return d->wide ? (const void *)((const uint32_t *)d->sz + g * d->st) :
	    (const void *)((const uint16_t *)d->sz + g * d->st);
}

static int
widen(struct batch_data *d)
{
	uint64_t i, n = d->total * d->st;
	uint32_t *w;

	if ((w = xalloc(n, 4)) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		w[i] = ((uint16_t *)d->sz)[i];
	free(d->sz);
	d->sz = w;
	d->wide = 1;
	return 0;
}

int
batch_data_set(struct batch_data *d, size_t pair, uint64_t first,
    uint64_t count, const int32_t *src, const int32_t *tgt, char *err,
    size_t errlen)
{
	uint64_t i, g;
	int32_t neg = 0, smx = 0, tmx = 0;

	if (pair >= d->npairs || first > d->n[pair] ||
	    count > d->n[pair] - first) {
		rp_seterr(err, errlen, "pair %zu: sentences %llu..%llu out of range",
		    pair, (unsigned long long)first,
		    (unsigned long long)(first + count));
		return -1;
	}
	if (d->bilingual && tgt == NULL) {
		rp_seterr(err, errlen, "pair %zu: target sizes missing", pair);
		return -1;
	}
	g = d->off[pair] + first;
	if (!d->wide && d->bilingual) {
		/*
		 * The usual case in one pass: 16-bit pairs stored while
		 * checked; a size that does not fit or is negative sends it
		 * to the general path below, which stores everything again.
		 */
		uint16_t *q = (uint16_t *)d->sz + 2 * g;
		uint32_t any = 0;

		for (i = 0; i < count; i++) {
			uint32_t a = (uint32_t)src[i], b = (uint32_t)tgt[i];

			any |= a | b;
			smx = (int32_t)a > smx ? (int32_t)a : smx;
			tmx = (int32_t)b > tmx ? (int32_t)b : tmx;
			q[2 * i] = (uint16_t)a;
			q[2 * i + 1] = (uint16_t)b;
		}
		if (any <= 65535) {
			if ((uint32_t)smx > d->smax)
				d->smax = (uint32_t)smx;
			if ((uint32_t)tmx > d->tmax)
				d->tmax = (uint32_t)tmx;
			return 0;
		}
		smx = tmx = 0;
	}
	/* Branch-free scans; the slow loop names a fault. */
	for (i = 0; i < count; i++) {
		neg |= src[i];
		smx = src[i] > smx ? src[i] : smx;
	}
	for (i = 0; d->bilingual && i < count; i++) {
		neg |= tgt[i];
		tmx = tgt[i] > tmx ? tgt[i] : tmx;
	}
	if (neg < 0) {
		for (i = 0; i < count; i++)
			if (src[i] < 0 || (d->bilingual && tgt[i] < 0))
				break;
		rp_seterr(err, errlen, "pair %zu: sentence %llu: negative "
		    "size", pair, (unsigned long long)(first + i));
		return -1;
	}
	if ((smx > 65535 || tmx > 65535) && !d->wide && widen(d) == -1) {
		rp_seterr(err, errlen, "sizes: out of memory");
		return -1;
	}
	if (d->wide) {
		uint32_t *q = (uint32_t *)d->sz + g * d->st;

		if (d->bilingual)
			for (i = 0; i < count; i++) {
				q[2 * i] = (uint32_t)src[i];
				q[2 * i + 1] = (uint32_t)tgt[i];
			}
		else
			for (i = 0; i < count; i++)
				q[i] = (uint32_t)src[i];
	} else {
		uint16_t *q = (uint16_t *)d->sz + g * d->st;

		if (d->bilingual)
			for (i = 0; i < count; i++) {
				q[2 * i] = (uint16_t)src[i];
				q[2 * i + 1] = (uint16_t)tgt[i];
			}
		else
			for (i = 0; i < count; i++)
				q[i] = (uint16_t)src[i];
	}
	if ((uint32_t)smx > d->smax)
		d->smax = (uint32_t)smx;
	if ((uint32_t)tmx > d->tmax)
		d->tmax = (uint32_t)tmx;
	return 0;
}

size_t
batch_data_npairs(const struct batch_data *d)
{
	return d->npairs;
}

uint64_t
batch_data_count(const struct batch_data *d, size_t pair)
{
	return pair < d->npairs ? d->n[pair] : 0;
}

int
batch_data_bilingual(const struct batch_data *d)
{
	return d->bilingual;
}

void
batch_data_size(const struct batch_data *d, size_t pair, uint64_t index,
    uint32_t *src, uint32_t *tgt)
{
	uint64_t g = d->off[pair] + index;

	*src = sz_get(d, g, 0);
	*tgt = sz_get(d, g, 1);
}

/* The pair holding global sentence g. */
static inline size_t
pair_of(const struct batch_data *d, uint64_t g)
{
	size_t j = d->blk[g >> BLK_SHIFT];

	while (d->off[j + 1] <= g)
		j++;
	return j;
}

/* ---- the plan ---- */

struct batch_plan {
	const struct batch_data *d;
	struct batch_config c;
	double		*weights;
	int		 sampled;
	int		 w;		/* word width: 4 or 8 */
	uint64_t	 flag;		/* top bit of a word */
	size_t		 k;		/* pairs */
	double		*ratio, *prob;
	uint64_t	 V;		/* items this epoch (the virtual size, or a virtual epoch's) */
	uint64_t	 VT;		/* virtual size */

	/* Virtual epochs (SampledMultiEpochDataset). */
	int		 vepoch;
	uint64_t	 vsz;		/* items a virtual epoch */
	uint64_t	 nve;		/* virtual epochs a pass */
	uint64_t	 pass_epoch;	/* 0: no pass drawn yet */
	uint64_t	 pass_start;
	int		 pass_new;
	uint64_t	*count;		/* per pair: drawn this epoch */
	uint64_t	*kept;		/* per pair: drawn and kept */

	/* Buckets: (source, target) in sorted order. */
	uint64_t	 nbuck;
	int		 dense;		/* bucket = src * tw + tgt */
	uint64_t	 tw;
	uint64_t	*keys;		/* !dense: sorted src << 32 | tgt */
	uint64_t	*bcount;	/* items per bucket */
	uint8_t		*bkept;		/* passes the length filter */

	/* Built order. */
	int		 built;
	uint64_t	 built_epoch;
	int		 rebuilt;
	void		*A;		/* V words, shuffled (while placing) */
	uint64_t	 nkept, nfilt;
	void		*fv, *fg, *fb;	/* filtered side table (words): virtual, global, bucket */
	void		*fsorted;	/* filtered side indices (words), in sorted order */

	/* Batches (positions in the sorted kept items). */
	uint64_t	 nb;
	uint64_t	*bend;
	uint64_t	 dropped_tail;
	void		*items;		/* global numbers of the wanted batches */
	uint64_t	*bslot;		/* per batch: slot of its first item, or NONE */
	int		 all_items;	/* every batch placed */

	/* This epoch. */
	uint64_t	 epoch;
	uint64_t	*order;		/* batch ids after the shuffle */
	uint64_t	 norder;
	uint64_t	 group_dropped, group_dropped_items;
	uint64_t	 steps;		/* per shard, before skip_remainder */
	struct batch_shard_stats *sstats;	/* the shards that get batches */
	uint64_t	 nsstats;
};

static inline uint64_t
wget(const void *a, uint64_t i, int w)
{
	return w == 4 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

static inline void
wset(void *a, uint64_t i, uint64_t v, int w)
{
	if (w == 4)
		((uint32_t *)a)[i] = (uint32_t)v;
	else
		((uint64_t *)a)[i] = v;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Bucket of global sentence g. */
static inline uint64_t
bucket_of(const struct batch_plan *p, uint64_t g)
{
	const struct batch_data *d = p->d;
	uint64_t s = sz_get(d, g, 0), t = sz_get(d, g, 1);
	uint64_t key, lo, hi;

	if (p->dense)
		return s * p->tw + t;
	key = s << 32 | t;
	lo = 0;
	hi = p->nbuck;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (p->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline void
bucket_sizes(const struct batch_plan *p, uint64_t b, uint64_t *s, uint64_t *t)
{
	if (p->dense) {
		*s = b / p->tw;
		*t = b % p->tw;
	} else {
		*s = p->keys[b] >> 32;
		*t = p->keys[b] & 0xffffffffu;
	}
}

static inline int
bucket_kept(const struct batch_plan *p, uint64_t b)
{
	return p->bkept[b];
}

static int
bucket_passes(const struct batch_plan *p, uint64_t b)
{
	uint64_t s, t;

	bucket_sizes(p, b, &s, &t);
	if (p->c.max_source_positions > 0 &&
	    s > (uint64_t)p->c.max_source_positions)
		return 0;
	if (p->d->bilingual && p->c.max_target_positions > 0 &&
	    t > (uint64_t)p->c.max_target_positions)
		return 0;
	return 1;
}

static int
setup_buckets(struct batch_plan *p, char *err, size_t errlen)
{
	const struct batch_data *d = p->d;
	uint64_t g, n, k;

	p->tw = (uint64_t)d->tmax + 1;
	if (((uint64_t)d->smax + 1) <= DENSE_MAX / p->tw) {
		p->dense = 1;
		p->nbuck = ((uint64_t)d->smax + 1) * p->tw;
	} else {
		/* Sizes too spread for a direct table: the keys present. */
		if ((p->keys = xalloc(d->total, sizeof *p->keys)) == NULL)
			goto nomem;
		for (g = 0; g < d->total; g++)
			p->keys[g] = (uint64_t)sz_get(d, g, 0) << 32 |
			    sz_get(d, g, 1);
		qsort(p->keys, (size_t)d->total, sizeof *p->keys, cmp_u64);
		for (n = 0, k = 0; k < d->total; k++)
			if (n == 0 || p->keys[n - 1] != p->keys[k])
				p->keys[n++] = p->keys[k];
		p->nbuck = n;
	}
	if ((p->bcount = xalloc(p->nbuck, sizeof *p->bcount)) == NULL ||
	    (p->bkept = xalloc(p->nbuck, sizeof *p->bkept)) == NULL)
		goto nomem;
	for (k = 0; k < p->nbuck; k++)
		p->bkept[k] = (uint8_t)bucket_passes(p, k);
	return 0;
nomem:
	rp_seterr(err, errlen, "buckets: out of memory");
	return -1;
}

struct batch_plan *
batch_plan_new(const struct batch_data *d, const struct batch_config *c,
    char *err, size_t errlen)
{
	struct batch_plan *p;
	size_t i, k = d->npairs;

	if (c->num_shards < 1) {
		rp_seterr(err, errlen, "number of shards must be at least 1");
		return NULL;
	}
	if (c->sampling == BATCH_SAMPLING_TEMPERATURE &&
	    !(c->temperature > 0 && isfinite(c->temperature))) {
		rp_seterr(err, errlen, "sampling temperature must be positive");
		return NULL;
	}
	if (k == 0) {
		rp_seterr(err, errlen, "no language pairs");
		return NULL;
	}
	if (k > UINT32_MAX) {
		rp_seterr(err, errlen, "too many language pairs");
		return NULL;
	}
	if ((p = calloc(1, sizeof *p)) == NULL)
		goto nomem;
	p->d = d;
	p->c = *c;
	p->c.weights = NULL;
	p->k = k;
	if (p->c.lim.mult < 1)
		p->c.lim.mult = 1;
	p->sampled = c->sampling != BATCH_SAMPLING_CONCAT;
	if ((p->ratio = xalloc(k, sizeof *p->ratio)) == NULL ||
	    (p->prob = xalloc(k, sizeof *p->prob)) == NULL ||
	    (p->count = xalloc(k, sizeof *p->count)) == NULL ||
	    (p->kept = xalloc(k, sizeof *p->kept)) == NULL)
		goto nomem;
	if (c->sampling == BATCH_SAMPLING_WEIGHTS) {
		double sum = 0;

		if (c->weights == NULL) {
			rp_seterr(err, errlen, "sampling weights missing");
			goto fail;
		}
		for (i = 0; i < k; i++) {
			if (!(c->weights[i] >= 0) || !isfinite(c->weights[i])) {
				rp_seterr(err, errlen, "pair %zu: sampling weight "
				    "must be finite and not negative", i);
				goto fail;
			}
			sum += c->weights[i];
		}
		if (!(sum > 0)) {
			rp_seterr(err, errlen, "sampling weights sum to 0");
			goto fail;
		}
		if (!isfinite(nprng_np_sum(c->weights, k))) {
			rp_seterr(err, errlen, "sampling weights overflow: their "
			    "sum is not a finite number");
			goto fail;
		}
	}
	if (p->sampled) {
		/* fairseq's sampling_method.py and SampledMultiDataset. */
		uint64_t N = 0, big = 0;
		size_t lg = 0;
		double sum, vsize = 0, cap;

		for (i = 0; i < k; i++) {
			N += d->n[i];
			if (d->n[i] > big) {
				big = d->n[i];
				lg = i;
			}
		}
		for (i = 0; i < k; i++) {
			switch (c->sampling) {
			case BATCH_SAMPLING_TEMPERATURE:
				p->ratio[i] = N == 0 ? 0 : pow((double)d->n[i] /
				    (double)N, 1.0 / c->temperature);
				break;
			case BATCH_SAMPLING_UNIFORM:
				p->ratio[i] = 1.0;
				break;
			default:
				p->ratio[i] = c->weights[i];
				break;
			}
		}
		sum = nprng_np_sum(p->ratio, k);
		for (i = 0; i < k; i++)
			p->prob[i] = sum > 0 ? p->ratio[i] / sum : 0;
		if (c->virtual_size > 0) {
			p->V = c->virtual_size;
		} else if (p->ratio[lg] > 0) {
			for (i = 0; i < k; i++)
				vsize += (p->ratio[i] / p->ratio[lg]) * (double)big;
			cap = (double)N * 1.5;
			p->V = (uint64_t)(vsize < cap ? vsize : cap);
		} else {
			rp_seterr(err, errlen, "the largest pair has sampling "
			    "weight 0: no default virtual size");
			goto fail;
		}
		if (!(sum > 0)) {
			rp_seterr(err, errlen, "sampling ratios sum to 0");
			goto fail;
		}
	} else {
		p->V = d->total;
		for (i = 0; i < k; i++) {
			p->ratio[i] = 0;
			p->prob[i] = d->total > 0 ?
			    (double)d->n[i] / (double)d->total : 0;
		}
	}
	p->VT = p->V;
	if (c->virtual_epoch_size > 0) {
		/* SampledMultiEpochDataset._setup() */
		p->vepoch = 1;
		p->vsz = c->virtual_epoch_size < p->VT ? c->virtual_epoch_size :
		    p->VT;
		p->nve = p->vsz > 0 ? (p->VT + p->vsz - 1) / p->vsz : 1;
	}
	p->w = d->total < word_limit && p->V < word_limit ? 4 : 8;
	/*
	 * Without sampling or virtual epochs a word is its own virtual
	 * index, so filtered items need no side table and words no flag.
	 */
	p->flag = !p->sampled && !p->vepoch ? 0 : p->w == 4 ?
	    (uint64_t)1 << 31 : (uint64_t)1 << 63;
	if (setup_buckets(p, err, errlen) == -1)
		goto fail;
	return p;
nomem:
	rp_seterr(err, errlen, "batch plan: out of memory");
fail:
	batch_plan_free(p);
	return NULL;
}

static void
free_build(struct batch_plan *p)
{
	free(p->A);
	free(p->fv);
	free(p->fg);
	free(p->fb);
	free(p->fsorted);
	free(p->bend);
	free(p->items);
	free(p->bslot);
	p->A = p->fv = p->fg = p->fb = p->fsorted = p->bend = NULL;
	p->bslot = NULL;
	p->items = NULL;
	p->nb = p->nkept = p->nfilt = 0;
	p->built = 0;
}

void
batch_plan_free(struct batch_plan *p)
{
	if (p == NULL)
		return;
	free_build(p);
	free(p->weights);
	free(p->ratio);
	free(p->prob);
	free(p->count);
	free(p->kept);
	free(p->keys);
	free(p->bcount);
	free(p->bkept);
	free(p->order);
	free(p->sstats);
	free(p);
}

/* Per-epoch counts: trunc(V p_i), the rest drawn with choice(k, diff, p). */
static int
sample_counts(struct batch_plan *p, struct nprng *r, char *err, size_t errlen)
{
	uint64_t sum = 0, diff, *draw;
	size_t i;

	for (i = 0; i < p->k; i++) {
		p->count[i] = (uint64_t)(int64_t)((double)p->V * p->prob[i]);
		sum += p->count[i];
	}
	if (sum > p->V) {
		rp_seterr(err, errlen, "sampling: counts exceed the virtual size");
		return -1;
	}
	diff = p->V - sum;
	if (diff == 0)
		return 0;
	if ((draw = xalloc(diff, sizeof *draw)) == NULL) {
		rp_seterr(err, errlen, "sampling: out of memory");
		return -1;
	}
	if (nprng_choice_p(r, p->prob, p->k, draw, (size_t)diff, err,
	    errlen) == -1) {
		free(draw);
		return -1;
	}
	for (i = 0; i < diff; i++)
		p->count[draw[i]]++;
	free(draw);
	return 0;
}

/*
 * The filtered side table has room for every item (pages are only
 * touched as it fills).
 */
static inline void
add_filtered(struct batch_plan *p, uint64_t v, uint64_t g, uint64_t b)
{
	wset(p->fv, p->nfilt, v, p->w);
	wset(p->fg, p->nfilt, g, p->w);
	wset(p->fb, p->nfilt, b, p->w);
	p->nfilt++;
}

#define PF_FILL	32	/* draws ahead: fetch the sizes */

/* Step 2: the order permutation over the V items of A. */
static void
order_shuffle(struct batch_plan *p, uint64_t epoch)
{
	struct nprng r;
	uint32_t seed;

	if (!p->c.shuffle)
		return;
	seed = p->c.seed + (p->c.order_seed_epoch ? (uint32_t)epoch : 0);
	nprng_seed(&r, seed);
	if (p->w == 4)
		nprng_shuffle32(&r, p->A, (size_t)p->V);
	else
		nprng_shuffle64(&r, p->A, (size_t)p->V);
}

/*
 * Step 1 for virtual epochs (SampledMultiEpochDataset): the pass (the
 * draws of SampledMultiDataset, or the pairs end to end) and its
 * permutation choice(V, V, replace=False), both from a generator
 * seeded with (class hash, sampling seed, pass epoch); this epoch's
 * items are those at the slice of the permutation.
 */
static int
fill_vepoch(struct batch_plan *p, uint64_t epoch, char *err, size_t errlen)
{
	const struct batch_data *d = p->d;
	uint64_t VT = p->VT, start, L, i, v = 0, nmax = 0, t;
	void *G = NULL, *R = NULL;
	uint32_t *perm32 = NULL, key[3];
	uint64_t *perm64 = NULL;
	int rw = VT >= ((uint64_t)1 << 32) ? 8 : 4;
	struct nprng r;
	size_t j;

	start = ((epoch - 1) % p->nve) * p->vsz;
	p->pass_new = start == 0 || p->pass_epoch == 0;
	if (p->pass_new)
		p->pass_epoch = epoch;
	p->pass_start = start;
	L = VT - start < p->vsz ? VT - start : p->vsz;
	key[0] = BATCH_HASH_SAMPLED_MULTI_EPOCH;
	key[1] = p->c.sampling_seed;
	key[2] = (uint32_t)p->pass_epoch;
	if ((G = xalloc(VT, (size_t)p->w)) == NULL)
		goto nomem;
	p->V = VT;
	if (p->sampled) {
		nprng_seed_array(&r, key, 3);
		if (sample_counts(p, &r, err, errlen) == -1)
			goto fail;
		for (j = 0; j < p->k; j++) {
			if (p->count[j] <= d->n[j] && d->n[j] > nmax)
				nmax = d->n[j];
			if (p->count[j] > 0 && d->n[j] == 0) {
				rp_seterr(err, errlen, "pair %zu is empty but %llu "
				    "sentences are to be drawn from it", j,
				    (unsigned long long)p->count[j]);
				goto fail;
			}
		}
		if (nmax >= ((uint64_t)1 << 32)) {
			if ((perm64 = xalloc(nmax, sizeof *perm64)) == NULL)
				goto nomem;
		} else if ((perm32 = xalloc(nmax, sizeof *perm32)) == NULL)
			goto nomem;
		for (j = 0; j < p->k; j++) {
			uint64_t c = p->count[j], n = d->n[j], off = d->off[j];

			if (c <= n) {
				if (perm64 != NULL)
					nprng_permutation64(&r, perm64, (size_t)n);
				else
					nprng_permutation32(&r, perm32, (size_t)n);
				for (i = 0; i < c; i++)
					wset(G, v + i, off + (perm64 != NULL ?
					    perm64[i] : perm32[i]), p->w);
			} else {
				uint64_t buf[1024], q, m;

				for (i = 0; i < c; i += m) {
					m = c - i < 1024 ? c - i : 1024;
					nprng_randint_fill(&r, n, buf, (size_t)m);
					for (q = 0; q < m; q++)
						wset(G, v + i + q, off + buf[q], p->w);
				}
			}
			v += c;
		}
		free(perm32);
		free(perm64);
		perm32 = NULL;
		perm64 = NULL;
	} else {
		for (v = 0; v < VT; v++)
			wset(G, v, v, p->w);
	}
	nprng_seed_array(&r, key, 3);
	if ((R = xalloc(VT, (size_t)rw)) == NULL)
		goto nomem;
	if (rw == 4)
		nprng_permutation32(&r, R, (size_t)VT);
	else
		nprng_permutation64(&r, R, (size_t)VT);
	/* This epoch's items, counted by pair and bucket. */
	p->V = L;
	if ((p->A = xalloc(L, (size_t)p->w)) == NULL ||
	    (p->fv = xalloc(L, (size_t)p->w)) == NULL ||
	    (p->fg = xalloc(L, (size_t)p->w)) == NULL ||
	    (p->fb = xalloc(L, (size_t)p->w)) == NULL)
		goto nomem;
	memset(p->bcount, 0, (size_t)p->nbuck * sizeof *p->bcount);
	memset(p->count, 0, p->k * sizeof *p->count);
	memset(p->kept, 0, p->k * sizeof *p->kept);
	for (i = 0; i < L; i++) {
		uint64_t g = wget(G, wget(R, start + i, rw), p->w), b;

		j = pair_of(d, g);
		p->count[j]++;
		b = bucket_of(p, g);
		p->bcount[b]++;
		if (bucket_kept(p, b)) {
			p->kept[j]++;
			p->nkept++;
			wset(p->A, i, g, p->w);
		} else {
			t = p->nfilt;
			add_filtered(p, i, g, b);
			wset(p->A, i, p->flag | t, p->w);
		}
	}
	free(G);
	free(R);
	order_shuffle(p, epoch);
	return 0;
nomem:
	rp_seterr(err, errlen, "epoch %llu: %llu items: out of memory",
	    (unsigned long long)epoch, (unsigned long long)VT);
fail:
	free(G);
	free(R);
	free(perm32);
	free(perm64);
	return -1;
}

/* Step 1: A[v] for every virtual item, bucket counts, filtered items. */
static int
fill(struct batch_plan *p, uint64_t epoch, char *err, size_t errlen)
{
	const struct batch_data *d = p->d;
	uint64_t v = 0, nmax = 0, i, t;
	uint32_t *perm32 = NULL;
	uint64_t *perm64 = NULL;
	struct nprng r;
	size_t j;

	if (p->vepoch)
		return fill_vepoch(p, epoch, err, errlen);
	if ((p->A = xalloc(p->V, (size_t)p->w)) == NULL)
		goto nomem;
	if (p->flag != 0 && ((p->fv = xalloc(p->V, (size_t)p->w)) == NULL ||
	    (p->fg = xalloc(p->V, (size_t)p->w)) == NULL ||
	    (p->fb = xalloc(p->V, (size_t)p->w)) == NULL))
		goto nomem;
	memset(p->bcount, 0, (size_t)p->nbuck * sizeof *p->bcount);
	if (p->sampled) {
		uint32_t key[3];

		key[0] = BATCH_HASH_SAMPLED_MULTI;
		key[1] = p->c.sampling_seed;
		key[2] = (uint32_t)epoch;
		nprng_seed_array(&r, key, 3);
		if (sample_counts(p, &r, err, errlen) == -1)
			return -1;
		for (j = 0; j < p->k; j++) {
			if (p->count[j] <= d->n[j] && d->n[j] > nmax)
				nmax = d->n[j];
			if (p->count[j] > 0 && d->n[j] == 0) {
				rp_seterr(err, errlen, "pair %zu is empty but %llu "
				    "sentences are to be drawn from it", j,
				    (unsigned long long)p->count[j]);
				return -1;
			}
		}
		if (nmax >= ((uint64_t)1 << 32)) {
			if ((perm64 = xalloc(nmax, sizeof *perm64)) == NULL)
				goto nomem;
		} else if ((perm32 = xalloc(nmax, sizeof *perm32)) == NULL)
			goto nomem;
	} else {
		for (j = 0; j < p->k; j++)
			p->count[j] = d->n[j];
	}
	for (j = 0; j < p->k; j++) {
		uint64_t c = p->count[j], n = d->n[j], off = d->off[j], kept = 0;

		if (p->sampled && c <= n) {
			if (perm64 != NULL)
				nprng_permutation64(&r, perm64, (size_t)n);
			else
				nprng_permutation32(&r, perm32, (size_t)n);
		}
		/* The draws first, then their buckets with look-ahead. */
		if (p->sampled && c > n) {
			uint64_t buf[1024], q, m;

			for (i = 0; i < c; i += m) {
				m = c - i < 1024 ? c - i : 1024;
				nprng_randint_fill(&r, n, buf, (size_t)m);
				for (q = 0; q < m; q++)
					wset(p->A, v + i + q, off + buf[q], p->w);
			}
		} else if (!p->sampled && p->w == 4 && p->dense &&
		    !d->wide && d->st == 2) {
			/* The same for 32-bit words and 16-bit pair sizes. */
			const uint16_t *sz = (const uint16_t *)d->sz + 2 * off;
			uint32_t *a4 = (uint32_t *)p->A + v;

			for (i = 0; i < c; i++) {
				uint64_t b = sz[2 * i] * p->tw + sz[2 * i + 1];

				a4[i] = (uint32_t)(off + i);
				p->bcount[b]++;
				kept += p->bkept[b];
			}
			v += c;
			p->nfilt += c - kept;
			p->kept[j] = kept;
			p->nkept += kept;
			continue;
		} else if (!p->sampled) {
			/* Sizes in order: no look-ahead needed, one loop. */
			for (i = 0; i < c; i++, v++) {
				uint64_t b = bucket_of(p, off + i);

				wset(p->A, v, off + i, p->w);
				p->bcount[b]++;
				kept += bucket_kept(p, b);
			}
			p->nfilt += c - kept;
			p->kept[j] = kept;
			p->nkept += kept;
			continue;
		} else {
			for (i = 0; i < c; i++) {
				uint64_t idx = perm64 != NULL ? perm64[i] : perm32[i];

				wset(p->A, v + i, off + idx, p->w);
			}
		}
		if (p->w == 4 && p->dense && !d->wide && d->st == 2) {
			/* The loop below for 32-bit words and 16-bit pairs. */
			uint32_t *a4 = (uint32_t *)p->A + v, flag = (uint32_t)p->flag;
			const uint16_t *sz = d->sz;

			for (i = 0; i < c; i++) {
				uint64_t g = a4[i], b;

				if (i + PF_FILL < c)
					__builtin_prefetch(&sz[2 * (uint64_t)a4[i +
					    PF_FILL]]);
				b = sz[2 * g] * p->tw + sz[2 * g + 1];
				p->bcount[b]++;
				if (p->bkept[b]) {
					kept++;
				} else if (flag == 0) {
					p->nfilt++;
				} else {
					t = p->nfilt;
					add_filtered(p, v + i, g, b);
					a4[i] = flag | (uint32_t)t;
				}
			}
			v += c;
			p->kept[j] = kept;
			p->nkept += kept;
			continue;
		}
		for (i = 0; i < c; i++, v++) {
			uint64_t g = wget(p->A, v, p->w), b;

			if (i + PF_FILL < c)
				__builtin_prefetch(sz_addr(d, wget(p->A,
				    v + PF_FILL, p->w)));
			b = bucket_of(p, g);
			p->bcount[b]++;
			if (bucket_kept(p, b)) {
				kept++;
			} else if (p->flag == 0) {
				p->nfilt++;
			} else {
				t = p->nfilt;
				add_filtered(p, v, g, b);
				wset(p->A, v, p->flag | t, p->w);
			}
		}
		p->kept[j] = kept;
		p->nkept += kept;
	}
	free(perm32);
	free(perm64);
	order_shuffle(p, epoch);
	return 0;
nomem:
	free(perm32);
	free(perm64);
	rp_seterr(err, errlen, "epoch %llu: %llu items: out of memory",
	    (unsigned long long)epoch, (unsigned long long)p->V);
	return -1;
}

static int
push_end(struct batch_plan *p, uint64_t e, uint64_t *cap)
{
	if (p->nb == *cap) {
		uint64_t ncap = *cap < 256 ? 256 : *cap * 2, *a;

		if ((a = realloc(p->bend, ncap * sizeof *a)) == NULL)
			return -1;
		p->bend = a;
		*cap = ncap;
	}
	p->bend[p->nb++] = e;
	return 0;
}

/* Step 3: batch_by_size over the sorted sizes, from the bucket counts. */
static int
batches(struct batch_plan *p, char *err, size_t errlen)
{
	struct batch_cutter cut;
	uint64_t b, cap = 0, out[2], s, t, i;
	int r, q, drop;

	batch_cutter_init(&cut, &p->c.lim);
	p->nb = 0;
	p->dropped_tail = 0;
	for (b = 0; b < p->nbuck; b++) {
		int64_t ntok;

		if (p->bcount[b] == 0 || !bucket_kept(p, b))
			continue;
		bucket_sizes(p, b, &s, &t);
		ntok = (int64_t)(s > t ? s : t);
		for (i = 0; i < p->bcount[b];) {
			if ((r = cutter_push(&cut, ntok, out, err,
			    errlen)) == -1)
				return -1;
			for (q = 0; q < r; q++)
				if (push_end(p, out[q], &cap) == -1)
					goto nomem;
			i++;
			i += cutter_skip(&cut, ntok, p->bcount[b] - i);
		}
	}
	r = batch_cutter_finish(&cut, out, &drop);
	for (q = 0; q < r; q++)
		if (push_end(p, out[q], &cap) == -1)
			goto nomem;
	if (drop) {
		p->nb--;
		p->dropped_tail = p->nkept - (p->nb > 0 ? p->bend[p->nb - 1] : 0);
	}
	return 0;
nomem:
	rp_seterr(err, errlen, "batches: out of memory");
	return -1;
}

static inline uint64_t
bstart(const struct batch_plan *p, uint64_t id)
{
	return id == 0 ? 0 : p->bend[id - 1];
}

static uint64_t
shard_steps(const struct batch_plan *p)
{
	if (p->c.skip_remainder)
		return p->steps > 0 ? p->steps - 1 : 0;
	return p->steps;
}

/* What shard i gets before its batches are counted: steps and fill batches. */
static void
shard_init(const struct batch_plan *p, uint64_t i, struct batch_shard_stats *ss)
{
	uint64_t K = p->c.num_shards, S = shard_steps(p);
	uint64_t real = p->norder > i ? (p->norder - i + K - 1) / K : 0;

	memset(ss, 0, sizeof *ss);
	ss->steps = S;
	ss->fill = p->steps - real;
	if (S < p->steps) {
		ss->skipped_batches = 1;
		if (real < p->steps)
			ss->fill--;	/* the fill batch was the last */
	}
}

/*
 * What every shard gets this epoch: one walk over the kept buckets and
 * the batches in sorted order gives each batch's tokens and widths,
 * added to the shard its place in the shuffled order gives it.
 *
 * Only the shards that get a batch (the first min(K, norder)) are kept:
 * the others hold fill batches alone, all alike (shard_init()), so that
 * memory follows the batches, not the number of shards.
 */
static int
shard_totals(struct batch_plan *p, char *err, size_t errlen)
{
	uint64_t K = p->c.num_shards, i, b, x, pos, s, t, *inv, S = shard_steps(p);
	uint64_t M = p->norder < K ? p->norder : K;
	struct batch_shard_stats *ss;

	free(p->sstats);
	p->nsstats = 0;
	if ((p->sstats = xalloc(M, sizeof *p->sstats)) == NULL ||
	    (inv = xalloc(p->nb, sizeof *inv)) == NULL) {
		rp_seterr(err, errlen, "shard statistics: out of memory");
		return -1;
	}
	p->nsstats = M;
	for (i = 0; i < p->nb; i++)
		inv[i] = NONE;
	for (i = 0; i < p->norder; i++)
		inv[p->order[i]] = i;
	for (i = 0; i < M; i++)
		shard_init(p, i, &p->sstats[i]);
	b = 0;
	x = 0;		/* items of bucket b already counted */
	pos = 0;
	for (i = 0; i < p->nb; i++) {
		uint64_t st = 0, tt = 0, sw = 0, tw = 0, n, o = inv[i];

		while (pos < p->bend[i]) {
			uint64_t take;

			while (p->bcount[b] == 0 || !bucket_kept(p, b) ||
			    x == p->bcount[b]) {
				b++;
				x = 0;
			}
			take = p->bcount[b] - x;
			if (take > p->bend[i] - pos)
				take = p->bend[i] - pos;
			bucket_sizes(p, b, &s, &t);
			st += s * take;
			tt += t * take;
			if (s > sw)
				sw = s;
			if (t > tw)
				tw = t;
			x += take;
			pos += take;
		}
		if (o == NONE)
			continue;	/* lost to grouped shuffling */
		ss = &p->sstats[o % K];
		n = p->bend[i] - bstart(p, i);
		if (o / K >= S) {
			ss->skipped_items = n;
			continue;
		}
		ss->batches++;
		ss->sentences += n;
		ss->src_tokens += st;
		ss->tgt_tokens += tt;
		ss->src_slots += n * sw;
		ss->tgt_slots += n * tw;
	}
	free(inv);
	return 0;
}

/* Step 4: the epoch shuffle of the batch list and the shard lengths. */
static int
deal(struct batch_plan *p, uint64_t epoch, char *err, size_t errlen)
{
	uint64_t K = p->c.num_shards, i, ng;
	struct nprng r;

	free(p->order);
	if ((p->order = xalloc(p->nb, sizeof *p->order)) == NULL) {
		rp_seterr(err, errlen, "batch order: out of memory");
		return -1;
	}
	p->group_dropped = p->group_dropped_items = 0;
	if (p->c.shuffle)
		nprng_seed(&r, p->c.seed + (uint32_t)epoch);
	if (p->c.shuffle && p->c.grouped_shuffling) {
		uint64_t *grp, g;

		ng = p->nb / K;
		if ((grp = xalloc(ng, sizeof *grp)) == NULL) {
			rp_seterr(err, errlen, "batch order: out of memory");
			return -1;
		}
		for (g = 0; g < ng; g++)
			grp[g] = g;
		nprng_shuffle64(&r, grp, (size_t)ng);
		for (g = 0; g < ng; g++)
			for (i = 0; i < K; i++)
				p->order[g * K + i] = grp[g] * K + i;
		free(grp);
		p->norder = ng * K;
		p->group_dropped = p->nb - p->norder;
		p->group_dropped_items = p->nkept - p->dropped_tail -
		    (p->norder > 0 ? p->bend[p->norder - 1] : 0);
	} else {
		for (i = 0; i < p->nb; i++)
			p->order[i] = i;
		if (p->c.shuffle)
			nprng_shuffle64(&r, p->order, (size_t)p->nb);
		p->norder = p->nb;
	}
	p->steps = (p->norder + K - 1) / K;
	return shard_totals(p, err, errlen);
}

/* The sorted batch id shard k sees at step s, or NONE for a fill batch. */
static inline uint64_t
step_id(const struct batch_plan *p, uint64_t k, uint64_t s)
{
	uint64_t i = k + s * p->c.num_shards;

	return i < p->norder ? p->order[i] : NONE;
}

/* Where a kept bucket's next item goes. */
struct bstate {
	uint64_t	cur;		/* its next sorted position */
	uint64_t	lim;		/* end of the batch holding cur */
	uint64_t	delta;		/* slot = position + delta (wraps) */
	uint64_t	bid;		/* that batch << 1 | wanted */
};

static inline void
bstate_batch(const struct batch_plan *p, struct bstate *q, uint64_t id)
{
	if (id < p->nb) {
		q->lim = p->bend[id];
		q->delta = p->bslot[id] - bstart(p, id);
		q->bid = id << 1 | (p->bslot[id] != NONE);
	} else {
		q->lim = NONE;
		q->delta = 0;
		q->bid = id << 1;
	}
}

/* The bucket of a word of A. */
static inline uint64_t
word_bucket(const struct batch_plan *p, uint64_t a)
{
	return a & p->flag ? wget(p->fb, a & ~p->flag, p->w) : bucket_of(p, a);
}

#define PF_SIZES	64	/* items ahead: fetch the sizes */
#define PF_STATE	32	/* items ahead: bucket known, fetch its state */
#define PF_WRITE	12	/* items ahead: state known, fetch the slot */
#define RING		64	/* > PF_STATE, a power of two */

/* Sizes of the item behind a word of A. */
static inline void
word_sizes(const struct batch_plan *p, uint64_t a, uint64_t *s, uint64_t *t)
{
	if (a & p->flag) {
		bucket_sizes(p, wget(p->fb, a & ~p->flag, p->w), s, t);
		return;
	}
	*s = sz_get(p->d, a, 0);
	*t = sz_get(p->d, a, 1);
}

static inline const void *
word_addr(const struct batch_plan *p, uint64_t a)
{
	if (a & p->flag)
		return (const char *)p->fb + (a & ~p->flag) * (uint64_t)p->w;
	return sz_addr(p->d, a);
}

#define PF_LSD	64	/* items ahead: fetch what gives the key */

/*
 * Copy k words at 'src' that go to sorted kept positions pos .. pos +
 * k - 1 into the slots of the wanted batches; *id follows the batch
 * holding pos.
 */
static void
emit(struct batch_plan *p, const void *src, uint64_t pos, uint64_t k,
    uint64_t *id)
{
	int w = p->w;

	while (k > 0 && *id < p->nb) {
		uint64_t m;

		while (*id < p->nb && p->bend[*id] <= pos)
			(*id)++;
		if (*id >= p->nb)
			break;
		m = p->bend[*id] - pos;
		if (m > k)
			m = k;
		if (p->bslot[*id] != NONE)
			memcpy((char *)p->items + (p->bslot[*id] + pos -
			    bstart(p, *id)) * (uint64_t)w, src, (size_t)(m * w));
		src = (const char *)src + m * (uint64_t)w;
		pos += m;
		k -= m;
	}
}

/* Chunks c = first, first + step, ... sorted by one thread. */
struct chunk_job {
	struct batch_plan *p;
	uint32_t	*cnt;		/* count of bucket b in chunk c at b * C + c */
	uint64_t	 chunk, C, first, step;
	int		 failed;	/* no memory */
};

/*
 * Sort the chunks of one job in place in A: a pass that looks sizes up
 * (the only random reads), then two counting passes, by target and by
 * source with the filtered items after the kept ones.  Chunks are
 * disjoint, so two jobs can run at once.
 */
static void *
sort_chunks(void *arg)
{
	struct chunk_job *j = arg;
	struct batch_plan *p = j->p;
	uint64_t V = p->V, ns = p->d->smax + 1, nt = p->tw, nk = 2 * ns;
	uint64_t chunk = j->chunk, C = j->C, c, i, b;
	uint32_t *hb = NULL, *K1 = NULL, *K2 = NULL, *Tk = NULL;
	uint64_t *o1 = NULL, *o2 = NULL;
	void *Tw = NULL;
	int w = p->w;

	if ((hb = xalloc(p->nbuck, sizeof *hb)) == NULL ||
	    (C > 1 && (K1 = xalloc(chunk, sizeof *K1)) == NULL) ||
	    (C > 1 && (K2 = xalloc(chunk, sizeof *K2)) == NULL) ||
	    (Tk = xalloc(chunk, sizeof *Tk)) == NULL ||
	    (Tw = xalloc(chunk, (size_t)w)) == NULL ||
	    (o1 = xalloc(nt, sizeof *o1)) == NULL ||
	    (o2 = xalloc(nk, sizeof *o2)) == NULL) {
		j->failed = 1;
		goto out;
	}
	for (c = j->first; c < C; c += j->step) {
		uint64_t lo = c * chunk, n = V - lo < chunk ? V - lo : chunk, sum;
		void *a = (char *)p->A + lo * (uint64_t)w;

		memset(hb, 0, (size_t)p->nbuck * sizeof *hb);
		memset(o1, 0, (size_t)nt * sizeof *o1);
		memset(o2, 0, (size_t)nk * sizeof *o2);
		if (C == 1) {
			/* One chunk: its counts are the bucket counts. */
			for (b = 0; b < p->nbuck; b++) {
				uint64_t s, t;

				bucket_sizes(p, b, &s, &t);
				hb[b] = (uint32_t)p->bcount[b];
				o1[t] += p->bcount[b];
				o2[(bucket_kept(p, b) ? 0 : ns) + s] += p->bcount[b];
			}
		}
		for (i = 0; C > 1 && i < n; i++) {
			uint64_t x = wget(a, i, w), s, t, bk;

			if (i + PF_LSD < n)
				__builtin_prefetch(word_addr(p, wget(a,
				    i + PF_LSD, w)));
			word_sizes(p, x, &s, &t);
			bk = s * nt + t;
			hb[bk]++;
			K1[i] = (uint32_t)t;
			K2[i] = (uint32_t)((bucket_kept(p, bk) ? 0 : ns) + s);
			o1[t]++;
			o2[K2[i]]++;
		}
		for (sum = 0, i = 0; i < nt; i++) {
			uint64_t k = o1[i];

			o1[i] = sum;
			sum += k;
		}
		for (sum = 0, i = 0; i < nk; i++) {
			uint64_t k = o2[i];

			o2[i] = sum;
			sum += k;
		}
		if (C == 1 && w == 4 && !p->d->wide && p->d->st == 2) {
			/*
			 * The same for 32-bit words and 16-bit pair sizes
			 * (the usual case), without the width tests.
			 */
			const uint32_t *a4 = a, *fb4 = p->fb;
			const uint16_t *sz = p->d->sz;
			const uint8_t *kept = p->bkept;
			uint32_t *T4 = Tw, flag = (uint32_t)p->flag;

			for (i = 0; i < n; i++) {
				uint32_t x = a4[i];
				uint64_t s, t, d;

				if (i + PF_LSD < n) {
					uint32_t y = a4[i + PF_LSD];

					__builtin_prefetch(y & flag ? (const void *)
					    &fb4[y & ~flag] : (const void *)&sz[2 *
					    (uint64_t)y]);
				}
				if (x & flag) {
					bucket_sizes(p, fb4[x & ~flag], &s, &t);
				} else {
					s = sz[2 * (uint64_t)x];
					t = sz[2 * (uint64_t)x + 1];
				}
				d = o1[t]++;
				T4[d] = x;
				Tk[d] = (uint32_t)((kept[s * nt + t] ? 0 : ns) + s);
			}
		} else if (C == 1) {
			/* Look up and scatter by target in one pass. */
			for (i = 0; i < n; i++) {
				uint64_t x = wget(a, i, w), s, t, d;

				if (i + PF_LSD < n)
					__builtin_prefetch(word_addr(p, wget(a,
					    i + PF_LSD, w)));
				word_sizes(p, x, &s, &t);
				d = o1[t]++;
				wset(Tw, d, x, w);
				Tk[d] = (uint32_t)((bucket_kept(p, s * nt + t) ?
				    0 : ns) + s);
			}
		} else {
			for (i = 0; i < n; i++) {
				uint64_t d = o1[K1[i]]++;

				wset(Tw, d, wget(a, i, w), w);
				Tk[d] = K2[i];
			}
		}
		if (w == 4) {
			uint32_t *a4 = a;
			const uint32_t *T4 = Tw;

			for (i = 0; i < n; i++)
				a4[o2[Tk[i]]++] = T4[i];
		} else
			for (i = 0; i < n; i++)
				wset(a, o2[Tk[i]]++, wget(Tw, i, w), w);
		for (b = 0; b < p->nbuck; b++)
			j->cnt[b * C + c] = hb[b];
	}
out:
	free(hb);
	free(K1);
	free(K2);
	free(Tk);
	free(Tw);
	free(o1);
	free(o2);
	return NULL;
}

/*
 * Sort A by (kept first, source, target), stably, in chunks (two
 * threads from four chunks on), then merge the chunks
 * bucket by bucket (equal keys: earlier chunk first, which keeps the
 * sort stable), writing only the wanted batches.  Needs dense buckets.
 */
static int
place_chunked(struct batch_plan *p, char *err, size_t errlen)
{
	uint64_t V = p->V, chunk, C, c, i, b, pos, fpos, id, per;
	struct chunk_job job[2];
	uint32_t *cnt = NULL;
	uint64_t *rd = NULL;
	void *A = p->A;
	int w = p->w, threaded = 0;
	pthread_t th;

	/* Chunks small enough for cache-friendly passes and a count table. */
	per = ((uint64_t)1 << 24) / p->nbuck;
	if (per == 0)
		per = 1;
	chunk = chunk_max;
	if (chunk > ((uint64_t)1 << 31))
		chunk = (uint64_t)1 << 31;
	if ((V + chunk - 1) / chunk > per)
		chunk = (V + per - 1) / per;
	if (chunk == 0)
		chunk = 1;
	C = V == 0 ? 0 : (V + chunk - 1) / chunk;
	if (chunk > V)
		chunk = V > 0 ? V : 1;
	if ((cnt = calloc(C * p->nbuck + 1, sizeof *cnt)) == NULL ||
	    (rd = xalloc(C, sizeof *rd)) == NULL ||
	    (p->fsorted = xalloc(p->nfilt, (size_t)w)) == NULL)
		goto nomem;
	for (c = 0; c < 2; c++) {
		job[c].p = p;
		job[c].cnt = cnt;
		job[c].chunk = chunk;
		job[c].C = C;
		job[c].first = c;
		job[c].step = 2;
		job[c].failed = 0;
	}
	if (C >= 4 && pthread_create(&th, NULL, sort_chunks, &job[1]) == 0)
		threaded = 1;
	if (!threaded)
		job[0].step = 1;
	sort_chunks(&job[0]);
	if (threaded)
		pthread_join(th, NULL);
	if (job[0].failed || job[1].failed)
		goto nomem;
	for (c = 0; c < C; c++)
		rd[c] = c * chunk;
	/* Merge: kept buckets in order, then the filtered ones. */
	pos = 0;
	id = 0;
	for (b = 0; b < p->nbuck; b++) {
		if (p->bcount[b] == 0 || !bucket_kept(p, b))
			continue;
		for (c = 0; c < C; c++) {
			uint64_t k = cnt[b * C + c];

			if (k == 0)
				continue;
			emit(p, (char *)A + rd[c] * (uint64_t)w, pos, k, &id);
			rd[c] += k;
			pos += k;
		}
	}
	fpos = 0;
	for (b = 0; b < p->nbuck; b++) {
		if (p->bcount[b] == 0 || bucket_kept(p, b))
			continue;
		for (c = 0; c < C; c++) {
			uint64_t k = cnt[b * C + c];

			for (i = 0; i < k; i++)
				wset(p->fsorted, fpos++, wget(A, rd[c] + i, w) &
				    ~p->flag, w);
			rd[c] += k;
		}
	}
	free(cnt);
	free(rd);
	return 0;
nomem:
	free(cnt);
	free(rd);
	rp_seterr(err, errlen, "sorting: out of memory");
	return -1;
}

/* Step 5: place the items of the wanted batches (shard < 0: all). */
static int
place(struct batch_plan *p, int64_t shard, char *err, size_t errlen)
{
	uint64_t nslots = 0, i, b, id, nsteps, kpos, fpos, ring[RING];
	struct bstate *bs = NULL;
	const void *A = p->A;
	int w = p->w;

	free(p->items);
	free(p->bslot);
	p->items = NULL;
	p->bslot = NULL;
	if ((p->bslot = xalloc(p->nb, sizeof *p->bslot)) == NULL)
		goto nomem;
	if (shard < 0) {
		for (id = 0; id < p->nb; id++)
			p->bslot[id] = bstart(p, id);
		nslots = p->nb > 0 ? p->bend[p->nb - 1] : 0;
		p->all_items = 1;
	} else {
		for (id = 0; id < p->nb; id++)
			p->bslot[id] = NONE;
		nsteps = shard_steps(p);
		for (i = 0; i < nsteps; i++) {
			id = step_id(p, (uint64_t)shard, i);
			if (id == NONE)
				continue;
			p->bslot[id] = nslots;
			nslots += p->bend[id] - bstart(p, id);
		}
		p->all_items = 0;
	}
	if ((p->items = xalloc(nslots, (size_t)w)) == NULL)
		goto nomem;
	if (p->dense && chunk_max > 0)
		return place_chunked(p, err, errlen);
	if ((p->fsorted = xalloc(p->nfilt, (size_t)w)) == NULL ||
	    (bs = xalloc(p->nbuck, sizeof *bs)) == NULL)
		goto nomem;
	/* Kept buckets in sorted order, each starting in some batch. */
	kpos = 0;
	fpos = 0;
	id = 0;
	for (b = 0; b < p->nbuck; b++) {
		if (p->bcount[b] == 0)
			continue;
		if (!bucket_kept(p, b)) {
			bs[b].cur = fpos;	/* its place among the filtered */
			fpos += p->bcount[b];
			continue;
		}
		while (id < p->nb && p->bend[id] <= kpos)
			id++;
		bs[b].cur = kpos;
		bstate_batch(p, &bs[b], id);
		kpos += p->bcount[b];
	}
	/*
	 * One pass over A.  Item i + PF_SIZES has its sizes fetched,
	 * item i + PF_STATE its bucket computed and that bucket's state
	 * fetched, so item i finds both in cache.
	 */
	for (i = 0; i < PF_STATE && i < p->V; i++)
		ring[i % RING] = word_bucket(p, wget(A, i, w));
	for (i = 0; i < p->V; i++) {
		uint64_t a = wget(A, i, w), pos;
		struct bstate *q;

		if (i + PF_SIZES < p->V) {
			uint64_t x = wget(A, i + PF_SIZES, w);

			__builtin_prefetch(x & p->flag ? (const void *)
			    ((const char *)p->fb + (x & ~p->flag) * (uint64_t)w) :
			    sz_addr(p->d, x));
		}
		if (i + PF_STATE < p->V) {
			uint64_t nb2 = word_bucket(p, wget(A, i + PF_STATE, w));

			ring[(i + PF_STATE) % RING] = nb2;
			__builtin_prefetch(&bs[nb2], 1);
		}
		if (i + PF_WRITE < p->V) {
			/*
			 * What that bucket touches next, most likely: its
			 * next batch, or the slot it writes.
			 */
			q = &bs[ring[(i + PF_WRITE) % RING]];
			if (q->cur == q->lim && (q->bid >> 1) + 1 < p->nb) {
				__builtin_prefetch(&p->bend[(q->bid >> 1) + 1]);
				__builtin_prefetch(&p->bslot[(q->bid >> 1) + 1]);
			} else if (q->bid & 1)
				__builtin_prefetch((char *)p->items +
				    (q->cur + q->delta) * (uint64_t)w, 1);
		}
		b = ring[i % RING];
		if (!bucket_kept(p, b)) {
			wset(p->fsorted, bs[b].cur++, a & ~p->flag, w);
			continue;
		}
		q = &bs[b];
		pos = q->cur++;
		if (pos == q->lim)
			bstate_batch(p, q, (q->bid >> 1) + 1);
		if (q->bid & 1)
			wset(p->items, pos + q->delta, a, w);
	}
	free(bs);
	return 0;
nomem:
	free(bs);
	rp_seterr(err, errlen, "placing items: out of memory");
	return -1;
}

int
batch_plan_epoch(struct batch_plan *p, uint64_t epoch, int64_t shard,
    char *err, size_t errlen)
{
	int build = !p->built || p->sampled || p->vepoch ||
	    p->c.rebuild_batches;

	if (shard >= (int64_t)p->c.num_shards) {
		rp_seterr(err, errlen, "shard %lld of %u does not exist",
		    (long long)shard, p->c.num_shards);
		return -1;
	}
	p->epoch = epoch;
	p->rebuilt = build;
	if (build) {
		free_build(p);
		if (fill(p, epoch, err, errlen) == -1 ||
		    batches(p, err, errlen) == -1)
			goto fail;
		p->built = 1;
		p->built_epoch = epoch;
	}
	if (deal(p, epoch, err, errlen) == -1)
		goto fail;
	if (build) {
		/* Batches kept across epochs need every item. */
		if (place(p, p->sampled || p->vepoch || p->c.rebuild_batches ?
		    shard : -1,
		    err, errlen) == -1)
			goto fail;
		free(p->A);
		p->A = NULL;
	}
	return 0;
fail:
	free_build(p);
	return -1;
}

void
batch_plan_stats(const struct batch_plan *p, struct batch_epoch_stats *st)
{
	memset(st, 0, sizeof *st);
	st->epoch = p->epoch;
	st->sampled = p->sampled;
	st->rebuilt = p->rebuilt;
	st->real_size = p->d->total;
	st->virtual_size = p->V;
	st->filtered = p->nfilt;
	st->batches = p->nb;
	st->batched = p->nb > 0 ? p->bend[p->nb - 1] : 0;
	st->dropped_tail = p->dropped_tail;
	st->group_dropped_batches = p->group_dropped;
	st->group_dropped_items = p->group_dropped_items;
	st->steps = shard_steps(p);
	if (p->vepoch) {
		st->pass_epoch = p->pass_epoch;
		st->pass_size = p->VT;
		st->pass_start = p->pass_start;
		st->pass_new = p->pass_new;
	}
}

void
batch_plan_pair_stats(const struct batch_plan *p, size_t pair,
    struct batch_pair_stats *ps)
{
	memset(ps, 0, sizeof *ps);
	if (pair >= p->k)
		return;
	ps->size = p->d->n[pair];
	ps->ratio = p->ratio[pair];
	ps->prob = p->prob[pair];
	ps->virtual_size = p->count[pair];
	ps->kept = p->kept[pair];
}

void
batch_plan_shard_stats(const struct batch_plan *p, uint32_t shard,
    struct batch_shard_stats *ss)
{
	memset(ss, 0, sizeof *ss);
	if (shard < p->nsstats)
		*ss = p->sstats[shard];
	else if (shard < p->c.num_shards && p->sstats != NULL)
		shard_init(p, shard, ss);
}

uint64_t
batch_plan_nbatches(const struct batch_plan *p)
{
	return p->nb;
}

uint64_t
batch_plan_step(const struct batch_plan *p, uint32_t shard, uint64_t step,
    uint64_t *id)
{
	*id = NONE;
	if (shard >= p->c.num_shards || step >= shard_steps(p))
		return 0;
	*id = step_id(p, shard, step);
	return *id == NONE ? 0 : p->bend[*id] - bstart(p, *id);
}

uint64_t
batch_plan_batch_size(const struct batch_plan *p, uint64_t id)
{
	return id < p->nb ? p->bend[id] - bstart(p, id) : 0;
}

uint64_t
batch_plan_batch(const struct batch_plan *p, uint64_t id,
    struct batch_item *out)
{
	uint64_t n, i, slot;

	if (id >= p->nb || p->bslot == NULL || p->bslot[id] == NONE)
		return NONE;
	n = p->bend[id] - bstart(p, id);
	slot = p->bslot[id];
	if (p->k == 1) {
		for (i = 0; i < n; i++) {
			out[i].pair = 0;
			out[i].index = wget(p->items, slot + i, p->w);
		}
		return n;
	}
	for (i = 0; i < n; i++) {
		uint64_t g = wget(p->items, slot + i, p->w);
		size_t j = pair_of(p->d, g);

		out[i].pair = (uint32_t)j;
		out[i].index = g - p->d->off[j];
	}
	return n;
}

void
batch_plan_filtered(const struct batch_plan *p, uint64_t i, uint64_t *virt,
    struct batch_item *item)
{
	uint64_t t, g;
	size_t j;

	*virt = 0;
	item->pair = 0;
	item->index = 0;
	if (i >= p->nfilt || p->fsorted == NULL)
		return;
	t = wget(p->fsorted, i, p->w);
	if (p->flag == 0) {
		*virt = g = t;
	} else {
		*virt = wget(p->fv, t, p->w);
		g = wget(p->fg, t, p->w);
	}
	j = pair_of(p->d, g);
	item->pair = (uint32_t)j;
	item->index = g - p->d->off[j];
}
