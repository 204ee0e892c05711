/*
 * batch_by_size and collation, as fairseq does them.  See batch.h;
 * the batch_by_size kernel itself (the cutter) and the per-epoch
 * pipeline are in batch_plan.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "errmsg.h"

/* ---- batch_by_size ---- */

int
batch_by_size(const int64_t *ntok, uint64_t n, const struct batch_limits *lim,
    uint64_t **ends, uint64_t *nbatch, char *err, size_t errlen)
{
	struct batch_cutter c;
	uint64_t *e = NULL, cap = 0, k = 0, out[2];
	uint64_t i;
	int r, j, drop;

	*ends = NULL;
	*nbatch = 0;
	if (n == 0)
		return 0;
	/* fairseq checks the whole input before batching. */
	if (lim->max_tokens > 0)
		for (i = 0; i < n; i++)
			if (ntok[i] > lim->max_tokens) {
				rp_seterr(err, errlen, "Sentences lengths should "
				    "not exceed max_tokens=%lld",
				    (long long)lim->max_tokens);
				return -1;
			}
	batch_cutter_init(&c, lim);
	for (i = 0; i <= n; i++) {
		if (i < n) {
			if ((r = batch_cutter_push(&c, ntok[i], out, err,
			    errlen)) == -1)
				goto fail;
		} else {
			r = batch_cutter_finish(&c, out, &drop);
		}
		if (k + (uint64_t)r > cap) {
			uint64_t ncap = cap < 16 ? 16 : cap * 2;
			uint64_t *ne;

			if (ncap > SIZE_MAX / sizeof *e ||
			    (ne = realloc(e, ncap * sizeof *e)) == NULL) {
				rp_seterr(err, errlen, "batch_by_size: out of memory");
				goto fail;
			}
			e = ne;
			cap = ncap;
		}
		for (j = 0; j < r; j++)
			e[k++] = out[j];
	}
	if (drop)
		k--;
	if (k == 0) {
		free(e);
		e = NULL;
	}
	*ends = e;
	*nbatch = k;
	return 0;
fail:
	free(e);
	return -1;
}

/* ---- collation ---- */

void
batch_collated_free(struct batch_collated *c)
{
	if (c == NULL)
		return;
	free(c->id);
	free(c->src_lengths);
	free(c->src_tokens);
	free(c->target);
	free(c->prev_output_tokens);
	memset(c, 0, sizeof *c);
}

static size_t
round_width(size_t w, int64_t m)
{
	if (m > 1 && w % (uint64_t)m != 0)
		w = (w / (uint64_t)m + 1) * (uint64_t)m;
	return w;
}

static int64_t *
matrix(size_t n, size_t w, int64_t pad)
{
	int64_t *a;
	size_t i;

	if (w != 0 && n > SIZE_MAX / sizeof *a / w)
		return NULL;
	if ((a = malloc(n * w * sizeof *a + 1)) == NULL)
		return NULL;
	for (i = 0; i < n * w; i++)
		a[i] = pad;
	return a;
}

/* Row i of a matrix of width w gets v[0 .. len - 1], left or right. */
static void
put_row(int64_t *row, size_t w, const int64_t *v, size_t len, int left)
{
	memcpy(row + (left ? w - len : 0), v, len * sizeof *v);
}

int
batch_collate(const struct batch_sample *s, size_t n,
    const struct batch_collate_opts *o, struct batch_collated *out, char *err,
    size_t errlen)
{
	struct batch_collated c;
	size_t *order = NULL, i, k, sw = 0, tw = 0;
	int64_t *len = NULL;
	int has_tgt;

	memset(&c, 0, sizeof c);
	if (n == 0) {
		*out = c;
		return 0;
	}
	has_tgt = s[0].tgt != NULL;
	for (i = 0; i < n; i++) {
		if (s[i].new_tgt_bos > 0 && has_tgt && o->input_feeding &&
		    o->left_pad_target) {
			rp_seterr(err, errlen, "sample %lld: replacing the "
			    "target's bos needs right-padded targets",
			    (long long)s[i].id);
			return -1;
		}
		if ((s[i].tgt != NULL) != has_tgt) {
			rp_seterr(err, errlen, "sample %lld: %s target where sample "
			    "%lld %s", (long long)s[i].id, has_tgt ? "no" : "a",
			    (long long)s[0].id, has_tgt ? "has one" : "has none");
			return -1;
		}
		if (has_tgt && s[i].ntgt == 0) {
			rp_seterr(err, errlen, "sample %lld: empty target",
			    (long long)s[i].id);
			return -1;
		}
		if (s[i].nsrc > sw)
			sw = s[i].nsrc;
		if (has_tgt && s[i].ntgt > tw)
			tw = s[i].ntgt;
	}
	sw = round_width(sw, o->pad_to_multiple);
	tw = has_tgt ? round_width(tw, o->pad_to_multiple) : 0;
	c.n = n;
	c.src_width = sw;
	c.tgt_width = tw;
	if ((order = malloc(n * sizeof *order)) == NULL ||
	    (len = malloc(n * sizeof *len)) == NULL ||
	    (c.id = malloc(n * sizeof *c.id)) == NULL ||
	    (c.src_lengths = malloc(n * sizeof *c.src_lengths)) == NULL ||
	    (c.src_tokens = matrix(n, sw, o->pad)) == NULL)
		goto nomem;
	if (has_tgt) {
		if ((c.target = matrix(n, tw, o->pad)) == NULL)
			goto nomem;
		if (o->input_feeding &&
		    (c.prev_output_tokens = matrix(n, tw, o->pad)) == NULL)
			goto nomem;
	}
	/* Non-pad source lengths, then a stable descending sort. */
	for (i = 0; i < n; i++) {
		int64_t l = 0;

		for (k = 0; k < s[i].nsrc; k++)
			l += s[i].src[k] != o->pad;
		len[i] = l;
		order[i] = i;
	}
	for (i = 1; i < n; i++) {
		size_t x = order[i];

		for (k = i; k > 0 && len[order[k - 1]] < len[x]; k--)
			order[k] = order[k - 1];
		order[k] = x;
	}
	c.ntokens = 0;
	for (i = 0; i < n; i++) {
		const struct batch_sample *q = &s[order[i]];

		c.id[i] = q->id;
		c.src_lengths[i] = len[order[i]];
		put_row(c.src_tokens + i * sw, sw, q->src, q->nsrc,
		    o->left_pad_source);
		if (q->new_src_eos > 0) {
			/*
			 * TransformEosLangPairDataset: the last column when
			 * left-padded, else column src_length - 1.
			 */
			int64_t *at = c.src_tokens + i * sw + (o->left_pad_source ?
			    sw - 1 : (size_t)(len[order[i]] > 0 ?
			    len[order[i]] - 1 : 0));

			if (sw == 0 || *at != o->eos) {
				rp_seterr(err, errlen, "sample %lld: source does "
				    "not end with eos %lld, which the language "
				    "token is to replace", (long long)q->id,
				    (long long)o->eos);
				goto fail;
			}
			*at = q->new_src_eos;
		}
		if (!has_tgt) {
			c.ntokens += len[order[i]];
			continue;
		}
		put_row(c.target + i * tw, tw, q->tgt, q->ntgt,
		    o->left_pad_target);
		for (k = 0; k < q->ntgt; k++)
			c.ntokens += q->tgt[k] != o->pad;
		if (c.prev_output_tokens != NULL) {
			int64_t *row = c.prev_output_tokens + i * tw +
			    (o->left_pad_target ? tw - q->ntgt : 0);

			row[0] = q->new_tgt_bos > 0 ? q->new_tgt_bos : o->eos;
			memcpy(row + 1, q->tgt, (q->ntgt - 1) * sizeof *row);
		}
	}
	free(order);
	free(len);
	*out = c;
	return 0;
nomem:
	rp_seterr(err, errlen, "collating %zu samples: out of memory", n);
fail:
	free(order);
	free(len);
	batch_collated_free(&c);
	return -1;
}
