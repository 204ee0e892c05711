/*
 * batch-sample's sources: language pairs of mmap-index datasets, their
 * sizes, the collation of their items, languages and weights.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchsrc.h"
#include "errmsg.h"
#include "fairseq_dict.h"
#include "mmidx.h"
#include "nprng.h"

static int
nomem(char *err, size_t errlen)
{
	rp_seterr(err, errlen, "out of memory");
	errno = ENOMEM;
	return -1;
}

/* realloc() of n elements of size, checked for overflow. */
static void *
grow(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n ? n * size : 1);
}

/* ---- pairs ---- */

int
bsrc_pair_add(struct bsrc_pair *p, struct mmidx *s, struct mmidx *t,
    char *err, size_t errlen)
{
	uint64_t n = mmidx_count(s);
	struct mmidx **v;
	uint64_t *st;

	if (t != NULL && mmidx_count(t) != n) {
		rp_seterr(err, errlen, "%s: %" PRIu64 " sentences, but %s has %"
		    PRIu64, mmidx_idx_path(t), mmidx_count(t),
		    mmidx_idx_path(s), n);
		goto fail;
	}
	if ((v = grow(p->src, p->nparts + 1, sizeof *v)) == NULL)
		goto nomem;
	p->src = v;
	if (t != NULL) {
		if ((v = grow(p->tgt, p->nparts + 1, sizeof *v)) == NULL)
			goto nomem;
		p->tgt = v;
	}
	if ((st = grow(p->start, p->nparts + 2, sizeof *st)) == NULL)
		goto nomem;
	p->start = st;
	p->src[p->nparts] = s;
	if (t != NULL)
		p->tgt[p->nparts] = t;
	if (p->nparts == 0)
		p->start[0] = 0;
	p->start[p->nparts + 1] = p->start[p->nparts] + n;
	p->n += n;
	p->nparts++;
	return 0;
nomem:
	nomem(err, errlen);
fail:
	mmidx_close(s);
	mmidx_close(t);
	return -1;
}

void
bsrc_pair_close(struct bsrc_pair *p)
{
	for (size_t k = 0; k < p->nparts; k++) {
		mmidx_close(p->src[k]);
		if (p->tgt != NULL)
			mmidx_close(p->tgt[k]);
	}
	free(p->src);
	free(p->tgt);
	free(p->start);
	p->src = p->tgt = NULL;
	p->start = NULL;
	p->nparts = 0;
	p->n = 0;
}

size_t
bsrc_part_of(const struct bsrc_pair *p, uint64_t i, uint64_t *k)
{
	size_t lo = 0, hi = p->nparts;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->start[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	*k = i - p->start[lo];
	return lo;
}

void
bsrc_pair_langtoks(struct bsrc_pair *p, int enc, int dec, int replacing,
    int64_t (*lookup)(void *, int, const char *, const char *), void *arg)
{
	p->stok = p->ttok = -1;
	if (enc == 1)
		p->stok = lookup(arg, 0, p->slang, p->slang);
	else if (enc == 2)
		p->stok = lookup(arg, 0, p->slang ? p->slang : p->tlang,
		    p->tlang ? p->tlang : p->slang);
	if (dec)
		p->ttok = lookup(arg, 1, p->tlang, p->tlang);
	p->seos = p->tbos = 0;
	if (replacing) {
		p->seos = p->stok > 0 ? p->stok : 0;
		p->tbos = p->ttok > 0 ? p->ttok : 0;
		p->stok = p->ttok = -1;
	}
}

/* ---- sizes ---- */

/*
 * Sizes the .bin cannot hold are caught where the indexes are read
 * rather than left to the batches: the k sizes (none negative, the
 * largest mx) of sentences first .. of m each fit in its .bin.
 */
static int
fits(const struct mmidx *m, uint64_t first, const int32_t *sz, size_t k,
    int32_t mx, char *err, size_t errlen)
{
	uint64_t el = mmidx_dtype_size(mmidx_dtype(m)), bin = mmidx_bin_size(m);

	if ((uint64_t)mx * el <= bin)
		return 0;
	for (size_t j = 0; j < k; j++)
		if ((uint64_t)sz[j] * el > bin) {
			rp_seterr(err, errlen, "%s: sequence %" PRIu64 ": size %"
			    PRId32 " does not fit in %s (%" PRIu64 " bytes)",
			    mmidx_idx_path(m), first + j, sz[j],
			    mmidx_bin_path(m), bin);
			return -1;
		}
	return 0;
}

/* ... and all of them together: ntok tokens. */
static int
all_fit(const struct mmidx *m, uint64_t ntok, char *err, size_t errlen)
{
	uint64_t el = mmidx_dtype_size(mmidx_dtype(m)), bin = mmidx_bin_size(m);

	if (ntok <= bin / el)
		return 0;
	rp_seterr(err, errlen, "%s: sizes add up to %" PRIu64 " tokens (%" PRIu64
	    " bytes), more than %s holds (%" PRIu64 " bytes)", mmidx_idx_path(m),
	    ntok, ntok * el, mmidx_bin_path(m), bin);
	return -1;
}

/* The block's largest size and the bits of all (negative when one is), and its sum. */
static void
scan_sizes(const int32_t *sz, size_t k, int32_t *neg, int32_t *mx,
    uint64_t *sum)
{
	int32_t n = 0, m = 0;
	uint64_t s = 0;

	for (size_t j = 0; j < k; j++) {
		n |= sz[j];
		m = sz[j] > m ? sz[j] : m;
		s += (uint64_t)(uint32_t)sz[j];
	}
	*neg = n;
	*mx = m;
	*sum = s;
}

/*
 * Whether size s of sequence seq of m is one the index cannot hold:
 * negative, or INT32_MAX with a token to add (then the message).
 */
static int
bad_size(const struct mmidx *m, uint64_t seq, int32_t s, int add, char *err,
    size_t errlen)
{
	if (s >= 0 && !(add && s == INT32_MAX))
		return 0;
	rp_seterr(err, errlen, "%s: sequence %" PRIu64 ": bad size %d",
	    mmidx_idx_path(m), seq, (int)s);
	return 1;
}

/* Check, then load part 'part' of pair i into d. */
static int
load_part(struct batch_data *d, struct bsrc_pair *p, size_t i, size_t part,
    int bilingual, int32_t *sb, int32_t *tb, size_t chunk, char *err,
    size_t errlen)
{
	uint64_t len = p->start[part + 1] - p->start[part];
	uint64_t sall = 0, tall = 0;
	int sadd = p->stok >= 0, tadd = p->ttok >= 0;
	char msg[BATCH_ERRMAX];

	for (uint64_t a = 0; a < len; a += chunk) {
		size_t k = len - a < chunk ? (size_t)(len - a) : chunk;
		int32_t sneg, tneg = 0, smx, tmx = 0;
		uint64_t ssum, tsum = 0;

		/*
		 * Whole blocks with branch-free scans; a fault is looked for
		 * one sentence at a time, to name the first as the reader
		 * meets it.
		 */
		mmidx_raw_sizes(p->src[part], a, k, sb);
		scan_sizes(sb, k, &sneg, &smx, &ssum);
		if (bilingual) {
			mmidx_raw_sizes(p->tgt[part], a, k, tb);
			scan_sizes(tb, k, &tneg, &tmx, &tsum);
		}
		if (sneg < 0 || tneg < 0 || (sadd && smx == INT32_MAX) ||
		    (tadd && tmx == INT32_MAX))
			for (size_t j = 0; j < k; j++)
				if (bad_size(p->src[part], a + j, sb[j], sadd, err,
				    errlen) || (bilingual && bad_size(p->tgt[part],
				    a + j, tb[j], tadd, err, errlen)))
					return -1;
		if (fits(p->src[part], a, sb, k, smx, err, errlen) == -1 ||
		    (bilingual && fits(p->tgt[part], a, tb, k, tmx, err,
		    errlen) == -1))
			return -1;
		sall += ssum;
		tall += tsum;
		for (size_t j = 0; sadd && j < k; j++)
			sb[j]++;
		for (size_t j = 0; tadd && j < k; j++)
			tb[j]++;
		p->srctok += ssum + (sadd ? k : 0);
		if (bilingual)
			p->tgttok += tsum + (tadd ? k : 0);
		if (batch_data_set(d, i, p->start[part] + a, k, sb,
		    bilingual ? tb : NULL, msg, sizeof msg) == -1) {
			rp_seterr(err, errlen, "%s: %s",
			    mmidx_idx_path(p->src[part]), msg);
			return -1;
		}
	}
	if (all_fit(p->src[part], sall, err, errlen) == -1 ||
	    (bilingual && all_fit(p->tgt[part], tall, err, errlen) == -1))
		return -1;
	return 0;
}

struct batch_data *
bsrc_load_sizes(struct bsrc_pair *pairs, size_t npairs, int close_after,
    char *err, size_t errlen)
{
	enum { CHUNK = 1 << 14 };
	int bilingual = pairs[0].tgt != NULL;
	struct batch_data *d = NULL;
	uint64_t *n = calloc(npairs, sizeof *n);
	int32_t *sb = calloc(CHUNK, sizeof *sb), *tb = calloc(CHUNK, sizeof *tb);

	if (n == NULL || sb == NULL || tb == NULL) {
		nomem(err, errlen);
		goto out;
	}
	for (size_t i = 0; i < npairs; i++) {
		n[i] = pairs[i].n;
		if ((pairs[i].tgt != NULL) != bilingual) {
			rp_seterr(err, errlen, "pair %s is %s, pair %s is not",
			    pairs[i].key, bilingual ? "monolingual" : "bilingual",
			    pairs[0].key);
			goto out;
		}
		if (n[i] == 0) {
			rp_seterr(err, errlen, "%s: pair %s has no sentences",
			    mmidx_idx_path(pairs[i].src[0]), pairs[i].key);
			goto out;
		}
	}
	if ((d = batch_data_new(npairs, n, bilingual, err, errlen)) == NULL)
		goto out;
	for (size_t i = 0; i < npairs; i++) {
		struct bsrc_pair *p = &pairs[i];

		p->srctok = p->tgttok = 0;
		for (size_t part = 0; part < p->nparts; part++)
			if (load_part(d, p, i, part, bilingual, sb, tb, CHUNK, err,
			    errlen) == -1) {
				batch_data_free(d);
				d = NULL;
				goto out;
			}
		/*
		 * The files done with: unmapping them keeps the pages of
		 * their indexes out of the resident set.
		 */
		if (close_after)
			bsrc_pair_close(p);
	}
out:
	free(sb);
	free(tb);
	free(n);
	return d;
}

/* ---- collation ---- */

void
bsrc_collator_init(struct bsrc_collator *c, const struct batch_collate_opts *o,
    int raw_ids)
{
	memset(c, 0, sizeof *c);
	c->opts = *o;
	c->raw_ids = raw_ids;
}

void
bsrc_collator_free(struct bsrc_collator *c)
{
	free(c->tok);
	free(c->soff);
	free(c->toff);
	free(c->s);
	free(c->items);
	free(c->tmp);
	memset(c, 0, sizeof *c);
}

void
bsrc_sort_items(struct batch_item *a, struct batch_item *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	bsrc_sort_items(a, tmp, h);
	bsrc_sort_items(a + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = a[j].pair < a[i].pair ? a[j++] : a[i++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof *a);
}

/* Room for 'more' tokens in the pool. */
static int
pool_room(struct bsrc_collator *c, size_t more)
{
	size_t cap = c->cap;
	int64_t *t;

	if (cap - c->ntok >= more)
		return 0;
	while (cap - c->ntok < more)
		cap = cap ? cap * 2 : 1 << 16;
	if ((t = grow(c->tok, cap, sizeof *t)) == NULL)
		return -1;
	c->tok = t;
	c->cap = cap;
	return 0;
}

/* Room for n samples. */
static int
sample_room(struct bsrc_collator *c, size_t n)
{
	void *p;

	if (n <= c->scap)
		return 0;
#define GROW(f) do {							\
		if ((p = grow(c->f, n, sizeof *c->f)) == NULL)		\
			return -1;					\
		c->f = p;						\
	} while (0)
	GROW(s);
	GROW(items);
	GROW(tmp);
	GROW(soff);
	GROW(toff);
#undef GROW
	c->scap = n;
	return 0;
}

/*
 * A fairseq dataset holds what fairseq-preprocess writes: every
 * sentence ends in </s> and holds no <pad> (a Dictionary encodes every
 * line and appends </s>).  Ids of another convention (tensor2tensor's
 * end of sentence is 1) would end every sentence in padding once
 * collated: refused, unless raw_ids says they are meant.  (An empty
 * sentence is collation's to name.)
 */
static int
preprocess_ids(const struct bsrc_collator *c, const struct mmidx *m,
    uint64_t k, const int64_t *v, size_t n, char *err, size_t errlen)
{
	size_t j;

	for (j = 0; j < n && v[j] != c->opts.pad; j++)
		;
	if (n == 0 || (j == n && v[n - 1] == c->opts.eos))
		return 0;
	rp_seterr(err, errlen, "%s: sentence %ju: %s: not what fairseq-preprocess "
	    "writes (tensor2tensor ids?); binarize through a dictionary "
	    "(mmap-index dict, then build --input-format text --dict), or give "
	    "--raw-ids if these are the ids you mean", mmidx_idx_path(m),
	    (uintmax_t)k, j + 1 == n ? "it ends in <pad>, not </s>" :
	    j < n ? "<pad> inside it" : "it does not end in </s>");
	return -1;
}

/*
 * Tokens of sentence k of m, after 'tok' when it is >= 0, into the
 * pool; *count gets how many.
 */
static int
load_tokens(struct bsrc_collator *c, struct mmidx *m, uint64_t k, int64_t tok,
    size_t *count, char *err, size_t errlen)
{
	const uint8_t *p;
	uint64_t n;
	size_t at = c->ntok;

	if (mmidx_seq(m, k, &p, &n) == -1) {
		rp_seterr(err, errlen, "%s", mmidx_strerror(m));
		return -1;
	}
	if (n >= SIZE_MAX || pool_room(c, (size_t)n + 1) == -1)
		return nomem(err, errlen);
	if (tok >= 0)
		c->tok[c->ntok++] = tok;
	if (n > 0)
		mmidx_load_i64s(mmidx_dtype(m), p, n, c->tok + c->ntok);
	if (!c->raw_ids && mmidx_layout(m) == MMIDX_FAIRSEQ &&
	    preprocess_ids(c, m, k, c->tok + c->ntok, (size_t)n, err,
	    errlen) == -1)
		return -1;
	c->ntok += (size_t)n;
	*count = c->ntok - at;
	return 0;
}

int
bsrc_collate(struct bsrc_collator *c, const struct bsrc_pair *pairs,
    size_t npairs, const struct batch_item *it, size_t n, const char *where,
    struct batch_collated *out, char *err, size_t errlen)
{
	char msg[BATCH_ERRMAX];
	size_t k;

	if (sample_room(c, n) == -1)
		return nomem(err, errlen);
	if (npairs > 1) {
		for (k = 1; k < n && it[k - 1].pair <= it[k].pair; k++)
			;
		if (k < n) {
			/* a stable sort by pair: items of one pair keep their order */
			memcpy(c->items, it, n * sizeof *it);
			bsrc_sort_items(c->items, c->tmp, n);
			it = c->items;
		}
	}
	c->ntok = 0;
	if (pool_room(c, 1) == -1)
		return nomem(err, errlen);
	for (size_t i = 0; i < n; i++) {
		const struct bsrc_pair *p = &pairs[it[i].pair];
		uint64_t j;
		size_t part = bsrc_part_of(p, it[i].index, &j);
		struct batch_sample *s = &c->s[i];

		c->soff[i] = c->ntok;
		s->id = (int64_t)it[i].index;
		s->new_src_eos = p->seos;
		s->new_tgt_bos = p->tbos;
		if (load_tokens(c, p->src[part], j, p->stok, &s->nsrc, err,
		    errlen) == -1)
			return -1;
		c->toff[i] = c->ntok;
		s->ntgt = 0;
		if (p->tgt == NULL)
			continue;
		if (load_tokens(c, p->tgt[part], j, p->ttok, &s->ntgt, err,
		    errlen) == -1)
			return -1;
		if (s->ntgt == 0) {
			rp_seterr(err, errlen, "%s: sequence %" PRIu64 ": empty "
			    "target (%s, pair %s, sentence %" PRIu64 ")",
			    mmidx_idx_path(p->tgt[part]), j, where, p->key,
			    it[i].index);
			return -1;
		}
	}
	/* The pool has stopped moving: point the samples into it. */
	for (size_t i = 0; i < n; i++) {
		c->s[i].src = c->tok + c->soff[i];
		c->s[i].tgt = pairs[it[i].pair].tgt != NULL ?
		    c->tok + c->toff[i] : NULL;
	}
	if (batch_collate(c->s, n, &c->opts, out, msg, sizeof msg) == -1) {
		rp_seterr(err, errlen, "%s: %s", where, msg);
		return -1;
	}
	return 0;
}

/* ---- epochs and data directories ---- */

int
bsrc_schedule_load(struct bsrc_schedule *s, uint64_t e, uint64_t *dir_epoch)
{
	int load;

	*dir_epoch = e;
	if (s->vepoch == 0) {
		/* a data directory an epoch, loaded again each time */
		load = !s->started || s->many_dirs;
	} else if (!s->started) {
		load = 1;
		s->shard_epoch = 1;
		if (s->vsize > 0) {
			uint64_t per = s->vsize / s->vepoch +
			    (s->vsize % s->vepoch != 0);

			s->shard_epoch = (e - 1) / per + 1;
			*dir_epoch = s->shard_epoch;
		}
	} else {
		/* the next directory once a pass has been drawn again */
		load = s->many_dirs && s->load_next;
		*dir_epoch = s->shard_epoch;
	}
	s->started = 1;
	if (load)
		s->load_next = 0;
	return load;
}

void
bsrc_schedule_done(struct bsrc_schedule *s, int pass_new, int loaded)
{
	/*
	 * SampledMultiEpochDataset._next_global_indices(): a pass drawn
	 * again by a dataset that had drawn one asks for the next shard.
	 */
	if (s->vepoch > 0 && pass_new && !loaded) {
		s->shard_epoch++;
		s->load_next = 1;
	}
}

/* ---- languages ---- */

size_t
bsrc_langtok_word(char w[BSRC_LANGTOK_MAX], const char *lang, int mbart)
{
	snprintf(w, BSRC_LANGTOK_MAX, mbart ? "[%s]" : "__%s__", lang);
	return strlen(w);
}

const char *
bsrc_prefix_lang(const char *prefix)
{
	const char *base, *dot;

	if (prefix == NULL)
		return NULL;
	base = strrchr(prefix, '/');
	base = base ? base + 1 : prefix;
	if ((dot = strrchr(base, '.')) == NULL || dot[1] == '\0')
		return NULL;
	return dot + 1;
}

int
bsrc_name_direction(const char *name, const char *split, const char *fwd,
    const char *rev)
{
	const char *dots[3];
	size_t n = strlen(name), nd = 0, len;

	if (strncmp(name, split, strlen(split)) != 0 || n < 4 ||
	    strcmp(name + n - 4, ".idx") != 0)
		return 0;
	/* The third field from the end: name = ... DIRECTION . LANG . idx */
	for (size_t i = n; i-- > 0 && nd < 3;)
		if (name[i] == '.')
			dots[nd++] = name + i;
	if (nd < 3)
		return 0;
	len = (size_t)(dots[1] - dots[2] - 1);
	if (strlen(fwd) == len && strncmp(dots[2] + 1, fwd, len) == 0)
		return 1;
	if (strlen(rev) == len && strncmp(dots[2] + 1, rev, len) == 0)
		return 2;
	return 0;
}

/* Append name to l->v. */
static int
langs_push(struct bsrc_langs *l, const char *name)
{
	const char **v = grow(l->v, l->n + 1, sizeof *v);

	if (v == NULL)
		return -1;
	l->v = v;
	l->v[l->n++] = name;
	return 0;
}

int
bsrc_langs_list(struct bsrc_langs *l, const char *list)
{
	char *save = NULL, *tok;

	if ((l->store = strdup(list)) == NULL)
		return -1;
	for (tok = strtok_r(l->store, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save))
		if (langs_push(l, tok) == -1)
			return -1;
	return 0;
}

/* Python's str.strip() white space, as a language file's lines have it. */
static int
strip_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

int
bsrc_langs_text(struct bsrc_langs *l, const char *text, size_t len, char *err,
    size_t errlen)
{
	char *line, *save = NULL;

	if (memchr(text, '\0', len) != NULL) {
		rp_seterr(err, errlen, "a NUL byte in the language list");
		return -1;
	}
	if (len == SIZE_MAX || (l->store = malloc(len + 1)) == NULL)
		return nomem(err, errlen);
	memcpy(l->store, text, len);
	l->store[len] = '\0';
	for (line = strtok_r(l->store, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *end = line + strlen(line);

		while (strip_space((unsigned char)*line))
			line++;
		while (end > line && strip_space((unsigned char)end[-1]))
			*--end = '\0';
		if (*line != '\0' && langs_push(l, line) == -1)
			return nomem(err, errlen);
	}
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
bsrc_langs_sorted(struct bsrc_langs *l, const char **langs, size_t n)
{
	if (n > 0)
		qsort(langs, n, sizeof *langs, cmp_str);
	if ((l->v = grow(NULL, n + 1, sizeof *l->v)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(langs[i], langs[i - 1]) != 0)
			l->v[l->n++] = langs[i];
	return 0;
}

int
bsrc_langs_has(const struct bsrc_langs *l, const char *lang)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], lang) == 0)
			return 1;
	return 0;
}

void
bsrc_langs_free(struct bsrc_langs *l)
{
	free(l->v);
	free(l->store);
	memset(l, 0, sizeof *l);
}

int
bsrc_dict_augment(struct fqd *d, const struct bsrc_langs *l, int mbart)
{
	char w[BSRC_LANGTOK_MAX];

	for (size_t i = 0; i < l->n; i++)
		if (fqd_add(d, w, bsrc_langtok_word(w, l->v[i], mbart), 1) < 0)
			return -1;
	if (mbart && fqd_add(d, "<mask>", 6, 1) < 0)
		return -1;
	return 0;
}

/* ---- weights and statistics ---- */

int
bsrc_weights(const char *spec, const struct bsrc_pair *pairs, size_t npairs,
    int (*real)(const char *, double *), double *w, char *err, size_t errlen)
{
	char *list = strdup(spec), *save = NULL, *tok;
	unsigned char *seen = calloc(npairs ? npairs : 1, 1);
	int rc = -1;

	if (list == NULL || seen == NULL) {
		nomem(err, errlen);
		goto out;
	}
	for (size_t i = 0; i < npairs; i++)
		w[i] = 0;
	for (tok = strtok_r(list, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(tok, '=');
		size_t i;

		if (eq == NULL) {
			rp_seterr(err, errlen, "expected KEY=W, not '%s'", tok);
			goto out;
		}
		*eq = '\0';
		if (strncmp(tok, "main:", 5) == 0)
			tok += 5;
		for (i = 0; i < npairs && strcmp(pairs[i].key, tok) != 0; i++)
			;
		if (i == npairs) {
			rp_seterr(err, errlen, "no pair '%s'", tok);
			goto out;
		}
		if (seen[i]) {
			rp_seterr(err, errlen, "pair '%s' given twice", tok);
			goto out;
		}
		if (real(eq + 1, &w[i]) == -1 || !(w[i] >= 0)) {
			rp_seterr(err, errlen, "expected a weight of 0 or more for "
			    "%s, not '%s'", tok, eq + 1);
			goto out;
		}
		seen[i] = 1;
	}
	for (size_t i = 0; i < npairs; i++)
		if (!seen[i]) {
			rp_seterr(err, errlen, "no weight for pair '%s'",
			    pairs[i].key);
			goto out;
		}
	if (!isfinite(nprng_np_sum(w, npairs))) {
		rp_seterr(err, errlen, "the weights overflow (their sum is not a "
		    "finite number)");
		goto out;
	}
	rc = 0;
out:
	free(seen);
	free(list);
	return rc;
}

static double
share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

void
bsrc_padding(const struct batch_shard_stats *ss, double *src, double *tgt)
{
	*src = share(ss->src_slots - ss->src_tokens, ss->src_slots);
	*tgt = share(ss->tgt_slots - ss->tgt_tokens, ss->tgt_slots);
}
