/*
 * Electra's pretraining example builder (build_pretraining_dataset.py's
 * ExampleBuilder): sentences joined into [CLS] A [SEP] B [SEP] rows.
 * Declared in seqio.h, beside the converters whose callback it shares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "seqio.h"

struct sq_electra {
	long		 max_len, target;
	int64_t		 cls, sep;
	struct rng	 rng;
	sq_emit_fn	 emit;
	void		*arg;
	uint64_t	 curlen;	/* full length of the pending sentences */
	int64_t		*toks;		/* their first max_len tokens each, concatenated */
	size_t		 ntok, captok;
	struct sent { size_t end, len; } *sent;	/* stored end offset, full length */
	size_t		 nsent, capsent;
	int64_t		*first, *second;
	int64_t		*out[3];
	uint64_t	 rows;
	uint64_t	 tok_in, tok_out;	/* sq_electra_tokens() */
};

struct sq_electra *
sq_electra_new(long max_len, int64_t cls_id, int64_t sep_id, uint64_t seed,
    sq_emit_fn emit, void *arg)
{
	struct sq_electra *e;
	int i;

	if (max_len < 5 || max_len > SQ_MAX_LENGTH) {
		errno = EINVAL;
		return NULL;
	}
	if ((e = calloc(1, sizeof *e)) == NULL)
		return NULL;
	e->max_len = e->target = max_len;
	e->cls = cls_id;
	e->sep = sep_id;
	e->emit = emit;
	e->arg = arg;
	rng_seed(&e->rng, seed);
	e->first = malloc((size_t)max_len * sizeof(int64_t));
	e->second = malloc((size_t)max_len * sizeof(int64_t));
	for (i = 0; i < 3; i++)
		e->out[i] = malloc((size_t)max_len * sizeof(int64_t));
	if (!e->first || !e->second || !e->out[0] || !e->out[1] || !e->out[2]) {
		sq_electra_free(e);
		errno = ENOMEM;
		return NULL;
	}
	return e;
}

void
sq_electra_free(struct sq_electra *e)
{
	int i;

	if (e == NULL)
		return;
	free(e->toks);
	free(e->sent);
	free(e->first);
	free(e->second);
	for (i = 0; i < 3; i++)
		free(e->out[i]);
	free(e);
}

uint64_t
sq_electra_rows(const struct sq_electra *e)
{
	return e->rows;
}

void
sq_electra_tokens(const struct sq_electra *e, uint64_t *in, uint64_t *out)
{
	*in = e->tok_in;
	*out = e->tok_out;
}

/* Append a sentence's stored tokens to a segment of full length *nseg. */
static void
seg_add(int64_t *seg, size_t *nseg, size_t cap, const int64_t *t,
    size_t stored, size_t len)
{
	size_t keep = *nseg < cap ? cap - *nseg : 0;

	if (stored < keep)
		keep = stored;
	if (keep > 0)
		memcpy(seg + *nseg, t, keep * sizeof *t);
	*nseg += len;
}

static int
electra_create(struct sq_electra *e)
{
	static const char *const names[3] = { "input_ids", "input_mask", "segment_ids" };
	size_t nf = 0, ns = 0, s, start, i, k, m = (size_t)e->max_len;
	uint64_t first_target;
	size_t lens[3], used[3];
	int64_t *ids = e->out[0], *mask = e->out[1], *seg = e->out[2];

	/* A small chance of a single segment, as in classification tasks. */
	if (rng_double(&e->rng) < 0.1)
		first_target = 100000;
	else
		first_target = (uint64_t)(e->target - 3) / 2;
	/*
	 * A sentence joins the first segment when it is empty, when it
	 * keeps the first segment under its target, or half of the time
	 * when the second is empty and the first is still short.  Segment
	 * lengths count every token; only the first max_len can survive
	 * the cut below, so only those are copied.
	 */
	start = 0;
	for (s = 0; s < e->nsent; s++) {
		const int64_t *t = e->toks + start;
		size_t stored = e->sent[s].end - start, len = e->sent[s].len;

		start = e->sent[s].end;
		if (nf == 0 || nf + len < first_target ||
		    (ns == 0 && nf < first_target && rng_double(&e->rng) < 0.5))
			seg_add(e->first, &nf, m, t, stored, len);
		else
			seg_add(e->second, &ns, m, t, stored, len);
	}
	/* Trim, leaving room for [CLS] and the [SEP]s. */
	if (nf > m - 2)
		nf = m - 2;
	if (ns + nf + 3 > m)
		ns = nf + 3 < m ? m - nf - 3 : 0;

	e->tok_out += nf + ns;
	e->ntok = 0;
	e->nsent = 0;
	e->curlen = 0;
	/* A small chance of a random length instead of max_len for the next one. */
	if (rng_double(&e->rng) < 0.05)
		e->target = (long)rng_range(&e->rng, 5, e->max_len);
	else
		e->target = e->max_len;

	k = 0;
	ids[k] = e->cls;
	seg[k++] = 0;
	for (i = 0; i < nf; i++) {
		ids[k] = e->first[i];
		seg[k++] = 0;
	}
	ids[k] = e->sep;
	seg[k++] = 0;
	if (ns > 0) {
		for (i = 0; i < ns; i++) {
			ids[k] = e->second[i];
			seg[k++] = 1;
		}
		ids[k] = e->sep;
		seg[k++] = 1;
	}
	for (i = 0; i < m; i++)
		mask[i] = i < k;
	for (i = k; i < m; i++)
		ids[i] = seg[i] = 0;
	lens[0] = lens[1] = lens[2] = m;
	used[0] = used[1] = used[2] = k;
	e->rows++;
	if (e->emit && e->emit(e->arg, 3, names,
	    (const int64_t *const *)e->out, lens, used) == -1)
		return -1;
	return 0;
}

int
sq_electra_push(struct sq_electra *e, const int64_t *ids, size_t n)
{
	size_t need, nc, stored;
	void *p;

	if (n == 0) {
		/*
		 * A blank ends a document with sentences pending; otherwise
		 * Electra keeps an empty sentence, which changes nothing.
		 */
		return e->curlen != 0 ? electra_create(e) : 0;
	}
	e->tok_in += n;
	stored = n < (size_t)e->max_len ? n : (size_t)e->max_len;
	need = e->ntok + stored;
	if (need > e->captok) {
		nc = e->captok ? e->captok : 256;
		while (nc < need)
			nc *= 2;
		if ((p = realloc(e->toks, nc * sizeof *e->toks)) == NULL)
			return -1;
		e->toks = p;
		e->captok = nc;
	}
	if (e->nsent == e->capsent) {
		nc = e->capsent ? 2 * e->capsent : 64;
		if ((p = realloc(e->sent, nc * sizeof *e->sent)) == NULL)
			return -1;
		e->sent = p;
		e->capsent = nc;
	}
	memcpy(e->toks + e->ntok, ids, stored * sizeof *ids);
	e->ntok += stored;
	e->sent[e->nsent].end = e->ntok;
	e->sent[e->nsent++].len = n;
	e->curlen += n;
	if (e->curlen >= (uint64_t)e->target)
		return electra_create(e);
	return 0;
}

int
sq_electra_flush(struct sq_electra *e)
{
	if (e->curlen != 0)
		return electra_create(e);
	return 0;
}
