/*
 * Unit tests for lib/batch: batch_by_size, collation and the epoch
 * pipeline (sampling, order, filter, shuffle, shards).  Hand-worked
 * cases and a slow reference of the pipeline written here; every
 * batch/, pipeline/ and collate/ case of ../shared/vectors/mmap when
 * that directory is present.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "nprng.h"
#include "tap.h"

static char err[BATCH_ERRMAX];

/* ---- batch_by_size ---- */

/* Batches of ntok as a string "0 1|2 3|4" (or the error). */
static const char *
bbs(const int64_t *ntok, uint64_t n, int64_t T, int64_t S, int64_t M,
    enum batch_compat compat)
{
	static char out[65536];
	struct batch_limits lim = BATCH_LIMITS_INIT;
	uint64_t *ends, nb, b, i, st = 0;
	size_t len = 0;

	lim.max_tokens = T;
	lim.max_sentences = S;
	lim.mult = M;
	lim.compat = compat;
	if (batch_by_size(ntok, n, &lim, &ends, &nb, err, sizeof err) == -1) {
		snprintf(out, sizeof out, "error: %s", err);
		return out;
	}
	out[0] = '\0';
	for (b = 0; b < nb; b++) {
		for (i = st; i < ends[b] && len + 32 < sizeof out; i++)
			len += (size_t)snprintf(out + len, sizeof out - len,
			    "%s%llu", i == st ? (b > 0 ? "|" : "") : " ",
			    (unsigned long long)i);
		st = ends[b];
	}
	free(ends);
	return out;
}

static void
by_size_hand(void)
{
	static const int64_t five[5] = { 1, 1, 1, 1, 1 };
	static const int64_t inc[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	static const int64_t tail[6] = { 2, 2, 2, 2, 2, 9 };
	static const int64_t big[3] = { 3, 30, 4 };
	static const int64_t s3[7] = { 1, 1, 1, 1, 1, 1, 1 };
	const char *r;

	r = bbs(five, 5, 0, 0, 8, BATCH_COMPAT_012);
	TEST(strcmp(r, "0 1 2 3 4") == 0, "5 items, no limits, M 8: one batch (0.12) [%s]", r);
	r = bbs(five, 5, 0, 0, 8, BATCH_COMPAT_MAIN);
	TEST(strcmp(r, "") == 0, "... and none under main [%s]", r);
	r = bbs(five, 0, 10, 0, 8, BATCH_COMPAT_MAIN);
	TEST(strcmp(r, "") == 0, "empty input, M 8, main: no batches, no crash");
	r = bbs(five, 0, 10, 0, 1, BATCH_COMPAT_012);
	TEST(strcmp(r, "") == 0, "empty input, M 1: no batches");
	r = bbs(inc, 10, 20, 0, 2, BATCH_COMPAT_012);
	TEST(strcmp(r, "0 1 2 3|4 5|6 7|8 9") == 0, "increasing 1..10, T 20, M 2 [%s]", r);
	r = bbs(big, 3, 20, 0, 1, BATCH_COMPAT_012);
	TEST(strcmp(r, "error: Sentences lengths should not exceed max_tokens=20") == 0,
	    "over-long item: fairseq's words [%s]", r);
	/*
	 * Tail cut, worked by hand: T 16, M 4.  At position 4 the open
	 * batch [0, 4) is committed (aligned); position 5 (9 tokens) makes
	 * 6 x 9 > 16 and the tail [4, 5] alone 2 x 9 > 16, so [4] becomes
	 * a batch of one and [5] starts the next.
	 */
	r = bbs(tail, 6, 16, 0, 4, BATCH_COMPAT_012);
	TEST(strcmp(r, "0 1 2 3|4|5") == 0, "tail cut: a batch of one [%s]", r);
	r = bbs(tail, 6, 16, 0, 4, BATCH_COMPAT_MAIN);
	TEST(strcmp(r, "0 1 2 3|4") == 0, "tail cut, main drops [5] [%s]", r);
	/* S < M: batches of S. */
	r = bbs(s3, 7, 0, 3, 8, BATCH_COMPAT_012);
	TEST(strcmp(r, "0 1 2|3 4 5|6") == 0, "S 3 < M 8: batches of 3 [%s]", r);
	/* max_tokens and max_sentences <= 0 are unlimited. */
	r = bbs(s3, 7, -1, -5, 1, BATCH_COMPAT_012);
	TEST(strcmp(r, "0 1 2 3 4 5 6") == 0, "negative limits: unlimited [%s]", r);
	{
		static const int64_t neg[2] = { 1, -1 };

		r = bbs(neg, 2, 0, 0, 1, BATCH_COMPAT_012);
		TEST(strncmp(r, "error:", 6) == 0, "negative size refused");
	}
	/* Huge sizes do not overflow count x width. */
	{
		static const int64_t h[3] = { INT64_MAX / 2, INT64_MAX / 2, 1 };

		r = bbs(h, 3, INT64_MAX - 1, 0, 1, BATCH_COMPAT_012);
		/* 2 x (2^62 - 1) fits 2^63 - 2; 3 x does not. */
		TEST(strcmp(r, "0 1|2") == 0, "no overflow in count x width [%s]", r);
	}
}

/* The streaming cutter agrees with the whole-array call. */
static void
cutter_agrees(void)
{
	struct nprng r;
	int t, ok = 1;

	nprng_seed(&r, 5);
	for (t = 0; t < 300 && ok; t++) {
		int64_t ntok[200];
		uint64_t n = nprng_interval(&r, 199), i, *ends, nb, got[400], ng = 0;
		struct batch_limits lim = BATCH_LIMITS_INIT;
		struct batch_cutter c;
		uint64_t out[2];
		int k, q, drop;

		for (i = 0; i < n; i++)
			ntok[i] = (int64_t)nprng_interval(&r, 12);
		lim.max_tokens = (int64_t)nprng_interval(&r, 40) + 12;
		lim.max_sentences = (int64_t)nprng_interval(&r, 10);
		lim.mult = (int64_t)nprng_interval(&r, 5) + 1;
		lim.compat = nprng_interval(&r, 1) ? BATCH_COMPAT_MAIN :
		    BATCH_COMPAT_012;
		if (batch_by_size(ntok, n, &lim, &ends, &nb, err, sizeof err) == -1) {
			ok = 0;
			break;
		}
		batch_cutter_init(&c, &lim);
		for (i = 0; i < n; i++) {
			k = batch_cutter_push(&c, ntok[i], out, err, sizeof err);
			for (q = 0; q < k; q++)
				got[ng++] = out[q];
		}
		k = batch_cutter_finish(&c, out, &drop);
		for (q = 0; q < k; q++)
			got[ng++] = out[q];
		if (drop)
			ng--;
		ok = ng == nb && (nb == 0 || memcmp(got, ends, nb * sizeof *ends) == 0);
		/* Batches are never empty and respect the limits. */
		for (i = 0; ok && i < nb; i++) {
			uint64_t st = i ? ends[i - 1] : 0, j;
			int64_t w = 0;

			ok = ends[i] > st;
			for (j = st; j < ends[i]; j++)
				if (ntok[j] > w)
					w = ntok[j];
			if (lim.max_sentences > 0)
				ok &= ends[i] - st <= (uint64_t)lim.max_sentences;
			ok &= (int64_t)(ends[i] - st) * w <= lim.max_tokens;
		}
		free(ends);
	}
	TEST(ok, "streaming cutter = batch_by_size, batches within limits (300 random cases)");
}

/* ---- collation ---- */

static int
same_i64(const int64_t *a, const int64_t *b, size_t n)
{
	return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static void
collate_hand(void)
{
	static const int64_t s7[] = { 10, 11, 2 }, t7[] = { 20, 2 };
	static const int64_t s3[] = { 12, 2 }, t3[] = { 21, 22, 23, 2 };
	static const int64_t s5[] = { 13, 14, 15, 16, 2 }, t5[] = { 24, 2 };
	static const int64_t s9[] = { 17, 18, 2 }, t9[] = { 25, 26, 27, 28, 29, 2 };
	static const int64_t ids[] = { 5, 7, 9, 3 }, lens[] = { 5, 3, 3, 2 };
	static const int64_t src[] = {
		13, 14, 15, 16, 2,  1, 1, 10, 11, 2,  1, 1, 17, 18, 2,  1, 1, 1, 12, 2
	};
	static const int64_t prev[] = {
		2, 24, 1, 1, 1, 1,  2, 20, 1, 1, 1, 1,
		2, 25, 26, 27, 28, 29,  2, 21, 22, 23, 1, 1
	};
	static const int64_t tgt[] = {
		24, 2, 1, 1, 1, 1,  20, 2, 1, 1, 1, 1,
		25, 26, 27, 28, 29, 2,  21, 22, 23, 2, 1, 1
	};
	struct batch_sample s[4] = {
		{ 7, s7, 3, t7, 2, 0, 0 }, { 3, s3, 2, t3, 4, 0, 0 },
		{ 5, s5, 5, t5, 2, 0, 0 }, { 9, s9, 3, t9, 6, 0, 0 },
	};
	struct batch_collate_opts o = BATCH_COLLATE_OPTS_INIT;
	struct batch_collated c;
	int rc;

	rc = batch_collate(s, 4, &o, &c, err, sizeof err);
	TEST(rc == 0 && c.n == 4 && c.ntokens == 14 && same_i64(c.id, ids, 4) &&
	    same_i64(c.src_lengths, lens, 4), "spec 9 example: ids, lengths, ntokens");
	TEST(rc == 0 && c.src_width == 5 && same_i64(c.src_tokens, src, 20),
	    "spec 9 example: left-padded sources");
	TEST(rc == 0 && c.tgt_width == 6 && same_i64(c.prev_output_tokens, prev, 24) &&
	    same_i64(c.target, tgt, 24), "spec 9 example: prev_output_tokens, target");
	batch_collated_free(&c);

	o.pad_to_multiple = 4;
	o.input_feeding = 0;
	o.left_pad_source = 0;
	rc = batch_collate(s, 4, &o, &c, err, sizeof err);
	TEST(rc == 0 && c.src_width == 8 && c.tgt_width == 8 &&
	    c.prev_output_tokens == NULL && c.src_tokens[0] == 13 &&
	    c.src_tokens[7] == 1 && c.src_tokens[8] == 10,
	    "pad_to_multiple 4, right-padded, no input feeding");
	batch_collated_free(&c);

	/* Pad tokens inside a row do not count as length. */
	{
		static const int64_t a[] = { 1, 5, 2 }, b[] = { 6, 7, 2 }, t[] = { 2 };
		struct batch_sample q[2] = { { 1, a, 3, t, 1, 0, 0 }, { 2, b, 3, t, 1, 0, 0 } };

		o = (struct batch_collate_opts)BATCH_COLLATE_OPTS_INIT;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == 0 && c.id[0] == 2 && c.src_lengths[0] == 3 &&
		    c.src_lengths[1] == 2 && c.ntokens == 2,
		    "lengths count non-pad tokens; order by them");
		batch_collated_free(&c);
		/* Settable pad and eos. */
		o.pad = 0;
		o.eos = 9;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == 0 && c.id[0] == 1 && c.prev_output_tokens[0] == 9,
		    "pad 0, eos 9");
		batch_collated_free(&c);
	}
	/* An empty target is an error naming the sample. */
	{
		static const int64_t a[] = { 4, 2 };
		struct batch_sample q[2] = { { 11, a, 2, a, 2, 0, 0 }, { 12, a, 2, a, 0, 0, 0 } };

		o = (struct batch_collate_opts)BATCH_COLLATE_OPTS_INIT;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == -1 && strcmp(err, "sample 12: empty target") == 0,
		    "empty target names the sample id [%s]", err);
	}
	/* No targets: ntokens counts sources, no target matrices. */
	{
		static const int64_t a[] = { 4, 2 }, b[] = { 5, 6, 2 };
		struct batch_sample q[2] = { { 1, a, 2, NULL, 0, 0, 0 }, { 2, b, 3, NULL, 0, 0, 0 } };

		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == 0 && c.target == NULL && c.prev_output_tokens == NULL &&
		    c.ntokens == 5 && c.id[0] == 2, "monolingual collation");
		batch_collated_free(&c);
	}
	/*
	 * TransformEosLangPairDataset: the source's eos (last column when
	 * left-padded, column length - 1 when right-padded) and the first
	 * column of prev_output_tokens replaced, per sample.
	 */
	{
		static const int64_t a[] = { 4, 2 }, b[] = { 5, 6, 2 }, t[] = { 7, 2 };
		struct batch_sample q[2] = { { 1, a, 2, t, 2, 40, 0 },
		    { 2, b, 3, t, 2, 50, 60 } };
		static const int64_t srcl[] = { 5, 6, 50, 1, 4, 40 };
		static const int64_t srcr[] = { 5, 6, 50, 4, 40, 1 };
		static const int64_t prevr[] = { 60, 7, 2, 7 };

		o = (struct batch_collate_opts)BATCH_COLLATE_OPTS_INIT;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == 0 && same_i64(c.src_tokens, srcl, 6) &&
		    same_i64(c.prev_output_tokens, prevr, 4) && c.target[0] == 7 &&
		    c.target[1] == 2 && c.src_lengths[1] == 2,
		    "replacing eos and bos, left-padded sources");
		batch_collated_free(&c);
		o.left_pad_source = 0;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == 0 && same_i64(c.src_tokens, srcr, 6),
		    "replacing eos, right-padded sources");
		batch_collated_free(&c);
		q[0].src = t + 1;
		q[0].nsrc = 0;
		q[1].src = t;
		q[1].nsrc = 1;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == -1 && strcmp(err, "sample 2: source does not end with "
		    "eos 2, which the language token is to replace") == 0,
		    "a source without eos cannot have it replaced [%s]", err);
		o.left_pad_target = 1;
		q[1].src = b;
		q[1].nsrc = 3;
		q[0].new_src_eos = 0;
		rc = batch_collate(q, 2, &o, &c, err, sizeof err);
		TEST(rc == -1 && strcmp(err, "sample 2: replacing the target's bos "
		    "needs right-padded targets") == 0,
		    "bos replacing needs right-padded targets [%s]", err);
		o = (struct batch_collate_opts)BATCH_COLLATE_OPTS_INIT;
	}
	rc = batch_collate(NULL, 0, &o, &c, err, sizeof err);
	TEST(rc == 0 && c.n == 0, "empty batch");
	batch_collated_free(&c);
}

/* ---- the pipeline: a slow reference ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct ref_pair {
	uint64_t	 n;
	const int32_t	*src, *tgt;
};

struct ref_out {
	uint64_t	 V;
	uint64_t	 counts[16];
	uint64_t	 nfilt;
	uint64_t	 filt[4096];	/* virtual ids */
	uint64_t	 nb;
	uint64_t	 bend[4096];
	uint64_t	 items[4096][2];	/* sorted kept items */
	uint64_t	 norder;
	uint64_t	 order[4096];
};

static int32_t
vs(const struct ref_pair *P, const uint64_t (*vi)[2], uint64_t v, int tgt)
{
	const struct ref_pair *q = &P[vi[v][0]];

	return tgt ? (q->tgt ? q->tgt[vi[v][1]] : 0) : q->src[vi[v][1]];
}

/*
 * With c->virtual_epoch_size: the epoch whose seed drew the pass
 * (SampledMultiEpochDataset), set by the caller.
 */
static uint64_t ref_pass;

/* Straight from spec 5-7, small sizes only. */
static void
reference(const struct ref_pair *P, size_t k, const struct batch_config *c,
    uint64_t epoch, uint64_t order_epoch, struct ref_out *o)
{
	static uint64_t vi[4096][2], perm[4096], tmp[4096];
	static uint64_t draw[4096], nt[4096];
	uint64_t V, N = 0, i, j, n, t;
	double r[16] = { 0 }, p[16], sum;
	struct nprng g;
	int sampled = c->sampling != BATCH_SAMPLING_CONCAT;

	for (i = 0; i < k; i++)
		N += P[i].n;
	if (!sampled) {
		V = 0;
		for (i = 0; i < k; i++) {
			o->counts[i] = P[i].n;
			for (j = 0; j < P[i].n; j++, V++) {
				vi[V][0] = i;
				vi[V][1] = j;
			}
		}
	} else {
		uint64_t big = 0, lg = 0, cs = 0;
		double vsize = 0;

		for (i = 0; i < k; i++) {
			if (P[i].n > big) {
				big = P[i].n;
				lg = i;
			}
			r[i] = c->sampling == BATCH_SAMPLING_TEMPERATURE ?
			    pow((double)P[i].n / (double)N, 1 / c->temperature) :
			    c->sampling == BATCH_SAMPLING_UNIFORM ? 1 : c->weights[i];
		}
		for (i = 0; i < k; i++)
			vsize += r[i] / r[lg] * (double)big;
		V = c->virtual_size ? c->virtual_size :
		    (uint64_t)(vsize < N * 1.5 ? vsize : N * 1.5);
		sum = nprng_np_sum(r, k);
		for (i = 0; i < k; i++) {
			p[i] = r[i] / sum;
			o->counts[i] = (uint64_t)(V * p[i]);
			cs += o->counts[i];
		}
		{
			uint32_t key[3] = { BATCH_HASH_SAMPLED_MULTI, c->sampling_seed,
			    (uint32_t)epoch };

			if (c->virtual_epoch_size > 0) {
				key[0] = BATCH_HASH_SAMPLED_MULTI_EPOCH;
				key[2] = (uint32_t)ref_pass;
			}
			nprng_seed_array(&g, key, 3);
		}
		if (V > cs) {
			nprng_choice_p(&g, p, k, draw, V - cs, err, sizeof err);
			for (i = 0; i < V - cs; i++)
				o->counts[draw[i]]++;
		}
		for (i = 0, t = 0; i < k; i++) {
			n = P[i].n;
			if (o->counts[i] > n) {
				for (j = 0; j < o->counts[i]; j++, t++) {
					vi[t][0] = i;
					vi[t][1] = (uint64_t)nprng_randint(&g, 0, (int64_t)n);
				}
			} else {
				nprng_permutation64(&g, tmp, n);
				for (j = 0; j < o->counts[i]; j++, t++) {
					vi[t][0] = i;
					vi[t][1] = tmp[j];
				}
			}
		}
	}
	if (c->virtual_epoch_size > 0) {
		/*
		 * SampledMultiEpochDataset: choice(V, V, replace=False) from
		 * a fresh generator of the same seed, then the epoch's slice.
		 */
		uint32_t key[3] = { BATCH_HASH_SAMPLED_MULTI_EPOCH,
		    c->sampling_seed, (uint32_t)ref_pass };
		uint64_t E = c->virtual_epoch_size < V ? c->virtual_epoch_size : V;
		uint64_t nve = (V + E - 1) / E, start = ((epoch - 1) % nve) * E;
		uint64_t L = V - start < E ? V - start : E;

		nprng_seed_array(&g, key, 3);
		nprng_permutation64(&g, perm, V);
		for (i = 0; i < L; i++) {
			tmp[2 * i] = vi[perm[start + i]][0];
			tmp[2 * i + 1] = vi[perm[start + i]][1];
		}
		for (i = 0; i < L; i++) {
			vi[i][0] = tmp[2 * i];
			vi[i][1] = tmp[2 * i + 1];
		}
		V = L;
	}
	o->V = V;
	if (c->shuffle) {
		nprng_seed(&g, c->seed + (c->order_seed_epoch ? (uint32_t)order_epoch : 0));
		nprng_permutation64(&g, perm, V);
	} else
		for (i = 0; i < V; i++)
			perm[i] = i;
	/* Insertion sorts are stable: by target, then by source. */
	for (int pass = 1; pass >= 0; pass--)
		for (i = 1; i < V; i++) {
			uint64_t x = perm[i];

			for (j = i; j > 0 && vs(P, (const uint64_t (*)[2])vi, perm[j - 1], pass) >
			    vs(P, (const uint64_t (*)[2])vi, x, pass); j--)
				perm[j] = perm[j - 1];
			perm[j] = x;
		}
	o->nfilt = 0;
	for (i = 0, n = 0; i < V; i++) {
		uint64_t v = perm[i];
		int32_t s = vs(P, (const uint64_t (*)[2])vi, v, 0);
		int32_t tt = vs(P, (const uint64_t (*)[2])vi, v, 1);

		if ((c->max_source_positions > 0 && s > c->max_source_positions) ||
		    (c->max_target_positions > 0 && P[0].tgt != NULL &&
		    tt > c->max_target_positions)) {
			o->filt[o->nfilt++] = v;
			continue;
		}
		o->items[n][0] = vi[v][0];
		o->items[n][1] = vi[v][1];
		nt[n++] = (uint64_t)(s > tt ? s : tt);
	}
	{
		int64_t ntok[4096];
		uint64_t *ends;

		for (i = 0; i < n; i++)
			ntok[i] = (int64_t)nt[i];
		batch_by_size(ntok, n, &c->lim, &ends, &o->nb, err, sizeof err);
		for (i = 0; i < o->nb; i++)
			o->bend[i] = ends[i];
		free(ends);
	}
	o->norder = o->nb;
	for (i = 0; i < o->nb; i++)
		o->order[i] = i;
	if (c->shuffle) {
		nprng_seed(&g, c->seed + (uint32_t)epoch);
		if (c->grouped_shuffling) {
			uint64_t K = c->num_shards, ng = o->nb / K, grp[4096];

			for (i = 0; i < ng; i++)
				grp[i] = i;
			nprng_shuffle64(&g, grp, ng);
			for (i = 0; i < ng; i++)
				for (j = 0; j < K; j++)
					o->order[i * K + j] = grp[i] * K + j;
			o->norder = ng * K;
		} else
			nprng_shuffle64(&g, o->order, o->nb);
	}
}

/* Batch 'id' of the plan equals the reference's. */
static int
same_batch(const struct batch_plan *pl, const struct ref_out *o, uint64_t id)
{
	static struct batch_item it[4096];
	uint64_t n = batch_plan_batch(pl, id, it), st = id ? o->bend[id - 1] : 0, i;

	if (n != o->bend[id] - st)
		return 0;
	for (i = 0; i < n; i++)
		if (it[i].pair != o->items[st + i][0] || it[i].index != o->items[st + i][1])
			return 0;
	return 1;
}

/* Shard k's statistics from the reference. */
static void
ref_shard(const struct ref_pair *P, const struct ref_out *o,
    const struct batch_config *c, uint32_t k, struct batch_shard_stats *ss)
{
	uint64_t K = c->num_shards, S = (o->norder + K - 1) / K, s, j;

	memset(ss, 0, sizeof *ss);
	ss->steps = c->skip_remainder && S > 0 ? S - 1 : S;
	for (s = 0; s < S; s++) {
		uint64_t x = k + s * K, id, st, n, sw = 0, tw = 0;

		if (s >= ss->steps) {
			ss->skipped_batches = 1;
			if (x < o->norder) {
				id = o->order[x];
				ss->skipped_items = o->bend[id] - (id ? o->bend[id - 1] : 0);
			}
			break;
		}
		if (x >= o->norder) {
			ss->fill++;
			continue;
		}
		id = o->order[x];
		st = id ? o->bend[id - 1] : 0;
		n = o->bend[id] - st;
		ss->batches++;
		ss->sentences += n;
		for (j = st; j < o->bend[id]; j++) {
			const struct ref_pair *q = &P[o->items[j][0]];
			uint64_t a = (uint64_t)q->src[o->items[j][1]];
			uint64_t b = q->tgt ? (uint64_t)q->tgt[o->items[j][1]] : 0;

			ss->src_tokens += a;
			ss->tgt_tokens += b;
			sw = a > sw ? a : sw;
			tw = b > tw ? b : tw;
		}
		ss->src_slots += n * sw;
		ss->tgt_slots += n * tw;
	}
}

static int
compare_ref(struct batch_plan *pl, const struct ref_out *o,
    const struct batch_config *c, int64_t shard, const struct ref_pair *P)
{
	struct batch_epoch_stats es;
	uint64_t i, K = c->num_shards, steps, id, n;
	uint32_t k;

	batch_plan_stats(pl, &es);
	if (es.virtual_size != o->V || es.filtered != o->nfilt || es.batches != o->nb)
		return 0;
	for (i = 0; i < o->nfilt; i++) {
		struct batch_item it;
		uint64_t v;

		batch_plan_filtered(pl, i, &v, &it);
		if (v != o->filt[i])
			return 0;
	}
	for (i = 0; shard < 0 && i < o->nb; i++)
		if (!same_batch(pl, o, i))
			return 0;
	steps = (o->norder + K - 1) / K;
	if (c->skip_remainder && steps > 0)
		steps--;
	if (es.steps != steps)
		return 0;
	for (k = 0; k < K; k++) {
		struct batch_shard_stats a, b;

		batch_plan_shard_stats(pl, k, &a);
		ref_shard(P, o, c, k, &b);
		if (memcmp(&a, &b, sizeof a) != 0)
			return 0;
		if (shard >= 0 && k != (uint32_t)shard)
			continue;
		for (i = 0; i < steps; i++) {
			uint64_t want = k + i * K < o->norder ? o->order[k + i * K] : UINT64_MAX;

			n = batch_plan_step(pl, k, i, &id);
			if (id != want)
				return 0;
			if (id != UINT64_MAX && (n != batch_plan_batch_size(pl, id) ||
			    !same_batch(pl, o, id)))
				return 0;
		}
	}
	return 1;
}

/* Random small configurations against the reference (more: -DPIPELINE_CASES=N). */
#ifndef PIPELINE_CASES
#define PIPELINE_CASES	120
#endif

static void
pipeline_random(const char *how)
{
	static int32_t sz[4][2][600];
	struct nprng r;
	int t, ok = 1, fails = 0;

	nprng_seed(&r, 2024);
	for (t = 0; t < PIPELINE_CASES; t++) {
		struct ref_pair P[4];
		struct batch_config c = BATCH_CONFIG_INIT;
		struct batch_data *d;
		struct batch_plan *pl;
		static struct ref_out o;
		double w[4];
		uint64_t n[4], e, first;
		size_t k = 1 + (size_t)nprng_interval(&r, 3), i, j;
		int bil = nprng_interval(&r, 4) != 0, wide = nprng_interval(&r, 9) == 0;
		int64_t shard;

		for (i = 0; i < k; i++) {
			n[i] = 1 + nprng_interval(&r, 150);
			for (j = 0; j < n[i]; j++) {
				sz[i][0][j] = 1 + (int32_t)nprng_interval(&r, 30);
				sz[i][1][j] = 1 + (int32_t)nprng_interval(&r, 30);
				if (wide && j % 7 == 0)
					sz[i][j % 2][j] = 70000 + (int32_t)j;
			}
			P[i].n = n[i];
			P[i].src = sz[i][0];
			P[i].tgt = bil ? sz[i][1] : NULL;
			w[i] = (double)nprng_interval(&r, 4);
		}
		{
			size_t lg = 0;

			for (i = 1; i < k; i++)
				if (n[i] > n[lg])
					lg = i;
			if (w[lg] == 0)
				w[lg] = 0.5;	/* fairseq divides by it */
		}
		c.sampling = (enum batch_sampling)nprng_interval(&r, 3);
		c.temperature = 1 + (double)nprng_interval(&r, 4);
		c.weights = w;
		c.seed = (uint32_t)nprng_interval(&r, 5);
		c.sampling_seed = 2 + (uint32_t)nprng_interval(&r, 1);
		c.order_seed_epoch = (int)nprng_interval(&r, 1);
		c.shuffle = nprng_interval(&r, 5) != 0;
		c.grouped_shuffling = nprng_interval(&r, 3) == 0;
		c.skip_remainder = nprng_interval(&r, 3) == 0;
		c.rebuild_batches = (int)nprng_interval(&r, 1);
		if (nprng_interval(&r, 1)) {
			c.max_source_positions = 10 + (int64_t)nprng_interval(&r, 25);
			c.max_target_positions = 10 + (int64_t)nprng_interval(&r, 25);
		}
		c.lim.max_tokens = wide ? 0 : 31 + (int64_t)nprng_interval(&r, 100);
		c.lim.max_sentences = (int64_t)nprng_interval(&r, 12);
		c.lim.mult = 1 + (int64_t)nprng_interval(&r, 8);
		c.lim.compat = nprng_interval(&r, 1) ? BATCH_COMPAT_MAIN : BATCH_COMPAT_012;
		c.num_shards = 1 + (uint32_t)nprng_interval(&r, 3);
		if (c.sampling == BATCH_SAMPLING_WEIGHTS - 1 && nprng_interval(&r, 1))
			c.sampling = BATCH_SAMPLING_WEIGHTS;
		if (nprng_interval(&r, 4) == 0 && c.sampling != BATCH_SAMPLING_CONCAT)
			c.virtual_size = 1 + nprng_interval(&r, 300);
		if (nprng_interval(&r, 3) == 0)
			c.virtual_epoch_size = 1 + nprng_interval(&r, 250);
		d = batch_data_new(k, n, bil, err, sizeof err);
		for (i = 0; i < k; i++) {
			/* In two pieces, as a streaming caller would. */
			uint64_t h = n[i] / 2;

			batch_data_set(d, i, 0, h, sz[i][0], sz[i][1], err, sizeof err);
			batch_data_set(d, i, h, n[i] - h, sz[i][0] + h, sz[i][1] + h,
			    err, sizeof err);
		}
		pl = batch_plan_new(d, &c, err, sizeof err);
		if (pl == NULL) {
			printf("# case %d: %s\n", t, err);
			ok = 0;
			batch_data_free(d);
			continue;
		}
		first = 1 + nprng_interval(&r, 3);
		for (e = first; e < first + 4; e++) {
			int sampled = c.sampling != BATCH_SAMPLING_CONCAT ||
			    c.virtual_epoch_size > 0;
			uint64_t oe = sampled || c.rebuild_batches ? e : first;

			shard = nprng_interval(&r, 2) == 0 ? -1 :
			    (int64_t)nprng_interval(&r, c.num_shards - 1);
			if (batch_plan_epoch(pl, e, shard, err, sizeof err) == -1) {
				printf("# case %d epoch %llu: %s\n", t,
				    (unsigned long long)e, err);
				ok = 0;
				break;
			}
			if (c.virtual_epoch_size > 0) {
				struct batch_epoch_stats es;

				batch_plan_stats(pl, &es);
				if (e == first || es.pass_start == 0)
					ref_pass = e;
				if (es.pass_epoch != ref_pass) {
					printf("# case %d epoch %llu: pass drawn in "
					    "%llu, not %llu\n", t,
					    (unsigned long long)e,
					    (unsigned long long)es.pass_epoch,
					    (unsigned long long)ref_pass);
					ok = 0;
				}
			}
			reference(P, k, &c, e, oe, &o);
			if (!compare_ref(pl, &o, &c, shard, P)) {
				if (fails++ < 3)
					printf("# case %d epoch %llu differs (k %zu, "
					    "sampling %d, shards %u, shard %lld)\n",
					    t, (unsigned long long)e, k,
					    (int)c.sampling, c.num_shards,
					    (long long)shard);
				ok = 0;
			}
		}
		batch_plan_free(pl);
		batch_data_free(d);
	}
	TEST(ok, "pipeline = straight reference (%d random configurations, "
	    "4 epochs each; %s)", PIPELINE_CASES, how);
}

/* Hand-worked pipeline cases. */
static void
pipeline_hand(void)
{
	uint64_t n[3] = { 40, 12, 5 };
	static int32_t s[40], tg[40];
	struct batch_config c = BATCH_CONFIG_INIT;
	struct batch_pair_stats ps[3];
	struct batch_epoch_stats es;
	struct batch_shard_stats ss;
	struct batch_data *d;
	struct batch_plan *pl;
	size_t i;
	int rc;

	for (i = 0; i < 40; i++) {
		s[i] = (int32_t)(i % 9 + 1);
		tg[i] = (int32_t)(i % 5 + 2);
	}
	d = batch_data_new(3, n, 1, err, sizeof err);
	for (i = 0; i < 3; i++)
		batch_data_set(d, i, 0, n[i], s, tg, err, sizeof err);
	c.sampling = BATCH_SAMPLING_TEMPERATURE;
	c.temperature = 5;
	c.lim.max_tokens = 64;
	c.lim.mult = 1;
	c.num_shards = 2;
	pl = batch_plan_new(d, &c, err, sizeof err);
	rc = batch_plan_epoch(pl, 1, -1, err, sizeof err);
	for (i = 0; i < 3; i++)
		batch_plan_pair_stats(pl, i, &ps[i]);
	batch_plan_stats(pl, &es);
	TEST(rc == 0 && es.virtual_size == 85, "spec 6: 40/12/5 at T 5: V = 85");
	TEST(ps[0].virtual_size == 36 && ps[1].virtual_size == 27 &&
	    ps[2].virtual_size == 22, "spec 6: epoch 1 counts 36, 27, 22 (%llu %llu %llu)",
	    (unsigned long long)ps[0].virtual_size,
	    (unsigned long long)ps[1].virtual_size,
	    (unsigned long long)ps[2].virtual_size);
	TEST(fabs(ps[0].ratio - 0.93162) < 1e-5 && fabs(ps[1].ratio - 0.73225) < 1e-5 &&
	    fabs(ps[2].ratio - 0.61464) < 1e-5, "spec 6: ratios 0.93162 0.73225 0.61464");
	batch_plan_free(pl);

	/* A pair drawn 0 times still consumes a full permutation. */
	{
		double w[3] = { 1, 0, 1 };
		struct nprng g;
		uint32_t key[3] = { BATCH_HASH_SAMPLED_MULTI, 2, 1 };
		uint64_t perm[40], want[40], got[40], nw = 0, ng = 0, id, b;
		static struct batch_item it[200];

		c = (struct batch_config)BATCH_CONFIG_INIT;
		c.sampling = BATCH_SAMPLING_WEIGHTS;
		c.weights = w;
		c.virtual_size = 8;
		c.shuffle = 0;
		c.lim.mult = 1;
		pl = batch_plan_new(d, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, -1, err, sizeof err);
		batch_plan_pair_stats(pl, 1, &ps[1]);
		/* counts 4, 0, 4 exactly: no choice() draws. */
		nprng_seed_array(&g, key, 3);
		nprng_permutation64(&g, perm, 40);
		nprng_permutation64(&g, perm, 12);
		nprng_permutation64(&g, perm, 5);
		for (i = 0; i < 4; i++)
			want[nw++] = perm[i];
		for (id = 0; id < batch_plan_nbatches(pl); id++) {
			uint64_t m = batch_plan_batch(pl, id, it);

			for (b = 0; b < m; b++)
				if (it[b].pair == 2)
					got[ng++] = it[b].index;
		}
		qsort(want, nw, sizeof *want, cmp_u64);
		qsort(got, ng, sizeof *got, cmp_u64);
		TEST(rc == 0 && ps[1].virtual_size == 0 && ng == nw &&
		    memcmp(want, got, nw * sizeof *want) == 0,
		    "count 0 pair: its permutation is drawn all the same");
		batch_plan_free(pl);
	}

	/* Weights whose sum is past a double: refused, not "do not sum to 1". */
	{
		double w[3] = { 1e308, 1e308, 1 };

		c = (struct batch_config)BATCH_CONFIG_INIT;
		c.sampling = BATCH_SAMPLING_WEIGHTS;
		c.weights = w;
		pl = batch_plan_new(d, &c, err, sizeof err);
		TEST(pl == NULL && strcmp(err, "sampling weights overflow: their sum "
		    "is not a finite number") == 0, "overflowing weights [%s]", err);
		batch_plan_free(pl);
	}

	/* More shards than batches: fill batches, counted. */
	c = (struct batch_config)BATCH_CONFIG_INIT;
	c.lim.max_tokens = 1000;
	c.lim.mult = 1;
	c.num_shards = 5;
	{
		uint64_t one[1] = { 3 };
		static const int32_t a[3] = { 2, 3, 4 };
		struct batch_data *d1 = batch_data_new(1, one, 1, err, sizeof err);
		uint64_t id, m;
		int okf = 1;
		uint32_t k;

		batch_data_set(d1, 0, 0, 3, a, a, err, sizeof err);
		pl = batch_plan_new(d1, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, -1, err, sizeof err);
		batch_plan_stats(pl, &es);
		TEST(rc == 0 && es.batches == 1 && es.steps == 1,
		    "single pair, 3 items: one batch, one step per shard");
		for (k = 0; k < 5; k++) {
			batch_plan_shard_stats(pl, k, &ss);
			m = batch_plan_step(pl, k, 0, &id);
			okf &= k == 0 ? (ss.batches == 1 && ss.fill == 0 && m == 3 &&
			    ss.sentences == 3 && ss.src_tokens == 9 &&
			    ss.src_slots == 12) :
			    (ss.batches == 0 && ss.fill == 1 && m == 0 &&
			    id == UINT64_MAX);
		}
		TEST(okf, "5 shards, 1 batch: shards 1-4 get a counted fill batch");
		batch_plan_free(pl);
		/* 2^32-1 shards: the same, without a record per shard (that was 300 GB) */
		c.num_shards = UINT32_MAX;
		pl = batch_plan_new(d1, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, UINT32_MAX - 1, err, sizeof err);
		okf = rc == 0;
		for (k = 0; k < 5 && okf; k++) {
			uint32_t sh = k < 3 ? k : UINT32_MAX - 5 + k;

			batch_plan_shard_stats(pl, sh, &ss);
			m = batch_plan_step(pl, sh, 0, &id);
			okf = sh == 0 ? (ss.batches == 1 && ss.fill == 0 && m == 3) :
			    (ss.steps == 1 && ss.batches == 0 && ss.fill == 1 && m == 0);
		}
		TEST(okf, "2^32-1 shards, 1 batch: the rest get a fill batch each");
		batch_plan_free(pl);
		c.num_shards = 5;
		/* skip_remainder drops the only step. */
		c.skip_remainder = 1;
		pl = batch_plan_new(d1, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, 0, err, sizeof err);
		batch_plan_shard_stats(pl, 0, &ss);
		TEST(rc == 0 && ss.steps == 0 && ss.skipped_batches == 1 &&
		    ss.skipped_items == 3, "skip remainder: the last batch is reported lost");
		batch_plan_free(pl);
		/* Over-long item without a filter: fairseq's error. */
		c.skip_remainder = 0;
		c.lim.max_tokens = 3;
		pl = batch_plan_new(d1, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, 0, err, sizeof err);
		TEST(rc == -1 && strcmp(err, "Sentences lengths should not exceed "
		    "max_tokens=3") == 0, "pipeline: over-long item is an error [%s]", err);
		/* ... and with the filter it is reported, not an error. */
		c.max_source_positions = 3;
		c.max_target_positions = 3;
		batch_plan_free(pl);
		pl = batch_plan_new(d1, &c, err, sizeof err);
		rc = batch_plan_epoch(pl, 1, 0, err, sizeof err);
		batch_plan_stats(pl, &es);
		{
			struct batch_item fi;
			uint64_t v;

			batch_plan_filtered(pl, 0, &v, &fi);
			TEST(rc == 0 && es.filtered == 1 && v == 2 && fi.pair == 0 &&
			    fi.index == 2, "filter: the long item is reported with its ids");
		}
		batch_plan_free(pl);
		/* Empty data, and an empty pair among others. */
		{
			uint64_t z[3] = { 0, 2, 0 };
			static const int32_t two[2] = { 5, 6 };
			struct batch_data *dz = batch_data_new(3, z, 1, err, sizeof err);
			struct batch_config cz = BATCH_CONFIG_INIT;
			struct batch_plan *pz;
			struct batch_item zi[4];
			uint64_t zid;

			batch_data_set(dz, 1, 0, 2, two, two, err, sizeof err);
			cz.num_shards = 3;
			pz = batch_plan_new(dz, &cz, err, sizeof err);
			rc = batch_plan_epoch(pz, 1, 2, err, sizeof err);
			batch_plan_stats(pz, &es);
			TEST(rc == 0 && es.virtual_size == 2 && es.batches == 1 &&
			    batch_plan_step(pz, 0, 0, &zid) == 2 &&
			    batch_plan_batch(pz, zid, zi) == 2 && zi[0].pair == 1 &&
			    zi[1].pair == 1 && batch_plan_step(pz, 2, 0, &zid) == 0 &&
			    zid == UINT64_MAX, "empty pairs around a pair of two");
			batch_plan_free(pz);
			batch_data_free(dz);
			z[1] = 0;
			dz = batch_data_new(3, z, 0, err, sizeof err);
			pz = batch_plan_new(dz, &cz, err, sizeof err);
			rc = batch_plan_epoch(pz, 1, -1, err, sizeof err);
			batch_plan_stats(pz, &es);
			batch_plan_shard_stats(pz, 1, &ss);
			TEST(rc == 0 && es.virtual_size == 0 && es.batches == 0 &&
			    es.steps == 0 && ss.steps == 0 && ss.fill == 0,
			    "no sentences at all: no batches, no steps");
			batch_plan_free(pz);
			/* Uniform sampling cannot draw from an empty pair. */
			cz.sampling = BATCH_SAMPLING_UNIFORM;
			cz.virtual_size = 3;
			pz = batch_plan_new(dz, &cz, err, sizeof err);
			rc = pz == NULL ? -1 : batch_plan_epoch(pz, 1, -1, err, sizeof err);
			TEST(rc == -1, "uniform sampling over empty pairs is an error (%s)", err);
			batch_plan_free(pz);
			batch_data_free(dz);
		}
		TEST(batch_plan_new(d1,
		    &(struct batch_config){ .num_shards = 0 }, err, sizeof err) == NULL,
		    "0 shards refused");
		batch_data_free(d1);
	}
	batch_data_free(d);
}

/* ---- ../shared/vectors/mmap ---- */

static char vdir[4096];

static int
find_vectors(void)
{
	static const char *const cand[] = {
		"../shared/vectors/mmap", "../../shared/vectors/mmap",
	};
	const char *e = getenv("SHARED");
	char p[4200];
	FILE *f;
	size_t i;

	if (e != NULL && *e != '\0') {
		snprintf(vdir, sizeof vdir, "%s/vectors/mmap", e);
		snprintf(p, sizeof p, "%s/manifest.json", vdir);
		if ((f = fopen(p, "r")) != NULL) {
			fclose(f);
			return 1;
		}
	}
	for (i = 0; i < sizeof cand / sizeof cand[0]; i++) {
		snprintf(p, sizeof p, "%s/manifest.json", cand[i]);
		if ((f = fopen(p, "r")) != NULL) {
			fclose(f);
			snprintf(vdir, sizeof vdir, "%s", cand[i]);
			return 1;
		}
	}
	return 0;
}

static json_t *
load_case(json_t *entry)
{
	char p[8400];
	json_error_t je;

	snprintf(p, sizeof p, "%s/%s", vdir,
	    json_string_value(json_object_get(entry, "file")));
	return json_load_file(p, 0, &je);
}

static int64_t
int_or(json_t *v, int64_t dflt)
{
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* batches (list of position lists) from ends. */
static int
same_positions(json_t *want, const uint64_t *ends, uint64_t nb)
{
	uint64_t b, i, st = 0;

	if (json_array_size(want) != nb)
		return 0;
	for (b = 0; b < nb; b++) {
		json_t *w = json_array_get(want, b);

		if (json_array_size(w) != ends[b] - st)
			return 0;
		for (i = st; i < ends[b]; i++)
			if ((uint64_t)json_integer_value(json_array_get(w, i - st)) != i)
				return 0;
		st = ends[b];
	}
	return 1;
}

static void
vector_batch(json_t *c, const char *name)
{
	static const char *const key[2] = { "v0_12", "main" };
	json_t *in = json_object_get(c, "input");
	uint64_t n = json_array_size(in), i, *ends, nb;
	int64_t *ntok = malloc((n + 1) * sizeof *ntok);
	int m;

	for (i = 0; i < n; i++)
		ntok[i] = json_integer_value(json_array_get(in, i));
	for (m = 0; m < 2; m++) {
		struct batch_limits lim = BATCH_LIMITS_INIT;
		char ek[64], xk[64];
		json_t *want;
		int rc;

		lim.max_tokens = int_or(json_object_get(c, "max_tokens"), 0);
		lim.max_sentences = int_or(json_object_get(c, "max_sentences"), 0);
		lim.mult = int_or(json_object_get(c, "bsz_mult"), 1);
		lim.compat = m ? BATCH_COMPAT_MAIN : BATCH_COMPAT_012;
		snprintf(ek, sizeof ek, "error_%s", key[m]);
		snprintf(xk, sizeof xk, "expected_%s", key[m]);
		rc = batch_by_size(ntok, n, &lim, &ends, &nb, err, sizeof err);
		if ((want = json_object_get(c, ek)) != NULL) {
			const char *w = json_string_value(want), *colon;

			colon = w != NULL ? strstr(w, ": ") : NULL;
			TEST(rc == -1 && colon != NULL && strcmp(err, colon + 2) == 0,
			    "batch/%s (%s): error \"%s\"", name, key[m], err);
		} else {
			TEST(rc == 0 && same_positions(json_object_get(c, xk), ends, nb),
			    "batch/%s (%s)", name, key[m]);
			free(ends);
		}
	}
	free(ntok);
}

static int
same_items(json_t *want, const struct batch_item *it, uint64_t n)
{
	uint64_t i;

	if (json_array_size(want) != n)
		return 0;
	for (i = 0; i < n; i++) {
		json_t *w = json_array_get(want, i);

		if ((uint64_t)json_integer_value(json_array_get(w, 0)) != it[i].pair ||
		    (uint64_t)json_integer_value(json_array_get(w, 1)) != it[i].index)
			return 0;
	}
	return 1;
}

static void
vector_pipeline(json_t *cs, const char *name)
{
	json_t *cfg = json_object_get(cs, "config"), *ds = json_object_get(cfg, "datasets");
	json_t *mp = json_object_get(cfg, "max_positions");
	json_t *smp = json_object_get(cfg, "sampling"), *exp = json_object_get(cs, "expected");
	size_t k = json_array_size(ds), i, j, x;
	struct batch_config c = BATCH_CONFIG_INIT;
	struct batch_data *d;
	struct batch_plan *pl = NULL;
	uint64_t *n = calloc(k + 1, sizeof *n), cur = 0;
	static struct batch_item it[1 << 16];
	double *w = calloc(k + 1, sizeof *w);
	int bil = 1, ok;
	json_t *e;

	for (i = 0; i < k; i++) {
		json_t *dd = json_array_get(ds, i);

		n[i] = json_array_size(json_object_get(dd, "src_sizes"));
		if (!json_is_array(json_object_get(dd, "tgt_sizes")))
			bil = 0;
	}
	d = batch_data_new(k, n, bil, err, sizeof err);
	for (i = 0; i < k; i++) {
		json_t *dd = json_array_get(ds, i);
		int32_t *a = malloc((n[i] + 1) * sizeof *a), *b = malloc((n[i] + 1) * sizeof *b);

		for (j = 0; j < n[i]; j++) {
			a[j] = (int32_t)json_integer_value(json_array_get(
			    json_object_get(dd, "src_sizes"), j));
			b[j] = bil ? (int32_t)json_integer_value(json_array_get(
			    json_object_get(dd, "tgt_sizes"), j)) : 0;
		}
		batch_data_set(d, i, 0, n[i], a, b, err, sizeof err);
		free(a);
		free(b);
	}
	c.seed = (uint32_t)int_or(json_object_get(cfg, "seed"), 1);
	c.lim.max_tokens = int_or(json_object_get(cfg, "max_tokens"), 0);
	c.lim.max_sentences = int_or(json_object_get(cfg, "max_sentences"), 0);
	c.lim.mult = int_or(json_object_get(cfg, "bsz_mult"), 1);
	c.lim.compat = BATCH_COMPAT_MAIN;	/* made by fairseq main */
	if (json_is_integer(mp)) {
		c.max_source_positions = json_integer_value(mp);
		c.max_target_positions = json_integer_value(mp);
	} else if (json_is_array(mp)) {
		c.max_source_positions = json_integer_value(json_array_get(mp, 0));
		c.max_target_positions = json_integer_value(json_array_get(mp, 1));
	}
	c.num_shards = (uint32_t)int_or(json_object_get(cfg, "num_shards"), 1);
	c.shuffle = !json_is_false(json_object_get(cfg, "shuffle"));
	c.grouped_shuffling = json_is_true(json_object_get(cfg, "grouped_shuffling"));
	c.skip_remainder = json_is_true(json_object_get(cfg, "skip_remainder_batch"));
	c.rebuild_batches = json_is_true(json_object_get(cfg, "rebuild_batches"));
	{
		const char *os = json_string_value(json_object_get(cfg, "order_seed"));

		c.order_seed_epoch = os == NULL || strcmp(os, "seed") != 0;
	}
	if (json_is_object(smp)) {
		const char *m = json_string_value(json_object_get(smp, "method"));
		json_t *wt = json_object_get(smp, "weights");

		if (m != NULL && strcmp(m, "temperature") == 0)
			c.sampling = BATCH_SAMPLING_TEMPERATURE;
		else if (m != NULL && strcmp(m, "uniform") == 0)
			c.sampling = BATCH_SAMPLING_UNIFORM;
		else if (json_is_array(wt) || json_is_object(wt)) {
			c.sampling = BATCH_SAMPLING_WEIGHTS;
			for (i = 0; i < k; i++)
				w[i] = json_number_value(json_is_array(wt) ?
				    json_array_get(wt, i) : json_object_get(wt,
				    json_string_value(json_object_get(
				    json_array_get(ds, i), "key"))));
			c.weights = w;
		}
		if (json_is_number(json_object_get(smp, "temperature")))
			c.temperature = json_number_value(json_object_get(smp, "temperature"));
		c.virtual_size = (uint64_t)int_or(json_object_get(smp, "virtual_size"), 0);
		c.sampling_seed = (uint32_t)int_or(json_object_get(smp, "seed"), 2);
	}
	pl = batch_plan_new(d, &c, err, sizeof err);
	TEST(pl != NULL, "pipeline/%s: plan (%s)", name, pl ? "ok" : err);
	if (pl == NULL)
		goto out;
	json_array_foreach(exp, x, e) {
		uint64_t ep = (uint64_t)json_integer_value(json_object_get(e, "epoch"));
		json_t *sh = json_object_get(e, "shard");

		if (sh == NULL) {
			struct batch_epoch_stats es;
			json_t *v, *bu = json_object_get(e, "batches_unshuffled");
			uint64_t b;

			cur = ep;
			ok = batch_plan_epoch(pl, ep, -1, err, sizeof err) == 0;
			TEST(ok, "pipeline/%s epoch %llu runs (%s)", name,
			    (unsigned long long)ep, ok ? "ok" : err);
			if (!ok)
				break;
			batch_plan_stats(pl, &es);
			TEST(es.virtual_size == (uint64_t)json_integer_value(
			    json_object_get(e, "virtual_size")),
			    "pipeline/%s epoch %llu: virtual size", name,
			    (unsigned long long)ep);
			if (json_is_array(v = json_object_get(e, "virtual_sizes_per_dataset"))) {
				for (ok = 1, i = 0; i < k; i++) {
					struct batch_pair_stats ps;

					batch_plan_pair_stats(pl, i, &ps);
					ok &= ps.virtual_size == (uint64_t)
					    json_integer_value(json_array_get(v, i));
				}
				TEST(ok, "pipeline/%s epoch %llu: per-pair sizes",
				    name, (unsigned long long)ep);
			}
			if (json_is_array(v = json_object_get(e, "ratios"))) {
				for (ok = 1, i = 0; i < k; i++) {
					struct batch_pair_stats ps;

					batch_plan_pair_stats(pl, i, &ps);
					ok &= ps.ratio == json_number_value(json_array_get(v, i));
				}
				TEST(ok, "pipeline/%s epoch %llu: ratios", name,
				    (unsigned long long)ep);
			}
			v = json_object_get(e, "filtered");
			ok = json_array_size(v) == es.filtered;
			for (i = 0; ok && i < es.filtered; i++) {
				struct batch_item fi;
				uint64_t vi;

				batch_plan_filtered(pl, i, &vi, &fi);
				ok = vi == (uint64_t)json_integer_value(json_array_get(v, i));
			}
			TEST(ok, "pipeline/%s epoch %llu: filtered ids", name,
			    (unsigned long long)ep);
			ok = json_array_size(bu) == batch_plan_nbatches(pl);
			for (b = 0; ok && b < batch_plan_nbatches(pl); b++) {
				uint64_t m = batch_plan_batch(pl, b, it);

				ok = same_items(json_array_get(bu, b), it, m);
			}
			TEST(ok, "pipeline/%s epoch %llu: batches before the shuffle",
			    name, (unsigned long long)ep);
		} else {
			uint32_t k2 = (uint32_t)json_integer_value(sh);
			json_t *bs = json_object_get(e, "batches");
			struct batch_epoch_stats es;
			uint64_t s, id, m;

			batch_plan_stats(pl, &es);
			ok = ep == cur && json_array_size(bs) == es.steps;
			for (s = 0; ok && s < es.steps; s++) {
				m = batch_plan_step(pl, k2, s, &id);
				if (id != UINT64_MAX)
					batch_plan_batch(pl, id, it);
				ok = same_items(json_array_get(bs, s), it, m);
			}
			TEST(ok, "pipeline/%s epoch %llu shard %u: batches", name,
			    (unsigned long long)ep, k2);
			/* The same shard placed alone. */
			if (ok && (c.sampling != BATCH_SAMPLING_CONCAT || c.rebuild_batches)) {
				struct batch_plan *p2 = batch_plan_new(d, &c, err, sizeof err);

				ok = batch_plan_epoch(p2, ep, k2, err, sizeof err) == 0;
				for (s = 0; ok && s < es.steps; s++) {
					m = batch_plan_step(p2, k2, s, &id);
					if (id != UINT64_MAX)
						batch_plan_batch(p2, id, it);
					ok = same_items(json_array_get(bs, s), it, m);
				}
				TEST(ok, "pipeline/%s epoch %llu shard %u: placed alone",
				    name, (unsigned long long)ep, k2);
				batch_plan_free(p2);
			}
		}
	}
out:
	batch_plan_free(pl);
	batch_data_free(d);
	free(n);
	free(w);
}

static void
vector_collate(json_t *cs, const char *name)
{
	json_t *smp = json_object_get(cs, "samples"), *args = json_object_get(cs, "args");
	json_t *x = json_object_get(cs, "expected"), *v;
	size_t n = json_array_size(smp), i, j;
	struct batch_sample *s = calloc(n + 1, sizeof *s);
	int64_t *buf = calloc(4096, sizeof *buf), *bp = buf;
	struct batch_collate_opts o = BATCH_COLLATE_OPTS_INIT;
	struct batch_collated c;
	int rc, ok;

	for (i = 0; i + 1 < json_array_size(args); i += 2) {
		const char *a = json_string_value(json_array_get(args, i));
		int64_t val = strtoll(json_string_value(json_array_get(args, i + 1)), NULL, 10);

		if (strcmp(a, "--left-pad-source") == 0)
			o.left_pad_source = (int)val;
		else if (strcmp(a, "--left-pad-target") == 0)
			o.left_pad_target = (int)val;
		else if (strcmp(a, "--pad-to-multiple") == 0)
			o.pad_to_multiple = val;
		else if (strcmp(a, "--pad") == 0)
			o.pad = val;
		else if (strcmp(a, "--eos") == 0)
			o.eos = val;
	}
	if (json_array_size(args) == 1 && strcmp(json_string_value(json_array_get(args, 0)),
	    "--no-input-feeding") == 0)
		o.input_feeding = 0;
	for (i = 0; i < n; i++) {
		json_t *q = json_array_get(smp, i), *a = json_object_get(q, "source"),
		    *b = json_object_get(q, "target");

		s[i].id = json_integer_value(json_object_get(q, "id"));
		s[i].src = bp;
		s[i].nsrc = json_array_size(a);
		for (j = 0; j < s[i].nsrc; j++)
			*bp++ = json_integer_value(json_array_get(a, j));
		if (json_is_array(b)) {
			s[i].tgt = bp;
			s[i].ntgt = json_array_size(b);
			for (j = 0; j < s[i].ntgt; j++)
				*bp++ = json_integer_value(json_array_get(b, j));
		}
	}
	rc = batch_collate(s, n, &o, &c, err, sizeof err);
	ok = rc == 0 && c.n == (size_t)json_integer_value(json_object_get(x, "nsentences")) &&
	    c.ntokens == json_integer_value(json_object_get(x, "ntokens"));
	for (i = 0; ok && i < c.n; i++) {
		ok &= c.id[i] == json_integer_value(json_array_get(json_object_get(x, "id"), i));
		ok &= c.src_lengths[i] == json_integer_value(json_array_get(
		    json_object_get(x, "src_lengths"), i));
	}
#define MATRIX(key, m, w) do {							\
		v = json_object_get(x, key);					\
		if (m == NULL) {						\
			ok &= !json_is_array(v);				\
			break;							\
		}								\
		ok &= json_array_size(v) == c.n;				\
		for (i = 0; ok && i < c.n; i++) {				\
			json_t *row = json_array_get(v, i);			\
			ok &= json_array_size(row) == (w);			\
			for (j = 0; ok && j < (w); j++)				\
				ok &= m[i * (w) + j] ==				\
				    json_integer_value(json_array_get(row, j));	\
		}								\
	} while (0)
	if (rc == 0) {
		MATRIX("src_tokens", c.src_tokens, c.src_width);
		MATRIX("target", c.target, c.tgt_width);
		MATRIX("prev_output_tokens", c.prev_output_tokens, c.tgt_width);
	}
	TEST(ok, "collate/%s", name);
	if (rc == 0)
		batch_collated_free(&c);
	free(s);
	free(buf);
}

static void
shared_vectors(void)
{
	char p[4200];
	json_error_t je;
	json_t *m, *e;
	size_t i;

	if (!find_vectors()) {
		printf("ok %d # skip ../shared/vectors/mmap absent\n", ++tap_n);
		return;
	}
	snprintf(p, sizeof p, "%s/manifest.json", vdir);
	m = json_load_file(p, 0, &je);
	TEST(m != NULL, "manifest.json parses");
	if (m == NULL)
		return;
	json_array_foreach(json_object_get(m, "batch_cases"), i, e) {
		json_t *c = load_case(e);

		TEST(c != NULL, "batch case %zu loads", i);
		if (c != NULL)
			vector_batch(c, json_string_value(json_object_get(e, "name")));
		json_decref(c);
	}
	json_array_foreach(json_object_get(m, "pipeline_cases"), i, e) {
		json_t *c = load_case(e);

		TEST(c != NULL, "pipeline case %zu loads", i);
		if (c != NULL)
			vector_pipeline(c, json_string_value(json_object_get(e, "name")));
		json_decref(c);
	}
	json_array_foreach(json_object_get(m, "collate_cases"), i, e) {
		json_t *c = load_case(e);

		TEST(c != NULL, "collate case %zu loads", i);
		if (c != NULL)
			vector_collate(c, json_string_value(json_object_get(e, "name")));
		json_decref(c);
	}
	json_decref(m);
}

int
main(void)
{
	by_size_hand();
	cutter_agrees();
	collate_hand();
	pipeline_hand();
	pipeline_random("chunked sort, one chunk");
	batch_set_sort_chunk(7);
	pipeline_random("chunked sort, chunks of 7");
	shared_vectors();
	batch_set_sort_chunk(0);
	pipeline_random("sort by buckets, shard placed alone");
	shared_vectors();
	batch_set_sort_chunk(1 << 21);
	shared_vectors();
	batch_set_word_limit(0);
	pipeline_random("64-bit words, chunked sort");
	batch_set_sort_chunk(5);
	pipeline_random("64-bit words, chunks of 5");
	batch_set_sort_chunk(0);
	pipeline_random("64-bit words, sort by buckets");
	return tap_done();
}
