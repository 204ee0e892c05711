/*
 * The inputs of a dataset build.  See mmidx_build.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "example.h"
#include "fairseq_dict.h"
#include "mmidx.h"
#include "mmidx_build.h"

enum mmidx_dtype
mmidx_dtype_for_range(enum mmidx_layout layout, int64_t min, int64_t max)
{
	enum mmidx_dtype t;

	if (min >= 0 && max < INT64_MAX) {
		t = mmidx_dtype_auto(layout, (uint64_t)max + 1);
		if (t == MMIDX_INT32 && max > INT32_MAX)
			t = MMIDX_INT64;
		return t;
	}
	if (layout != MMIDX_FAIRSEQ && min >= INT32_MIN && max <= INT32_MAX)
		return MMIDX_INT32;
	return MMIDX_INT64;
}

/* ---- records ---- */

void
mmidx_recs_init(struct mmidx_recs *r, const char *feature,
    const char *modefeat, int floats, int docs)
{
	memset(r, 0, sizeof *r);
	r->feature = feature;
	r->featlen = strlen(feature);
	r->modefeat = modefeat;
	r->floats = floats;
	r->docs = docs;
	ex_init(&r->ex);
}

void
mmidx_recs_free(struct mmidx_recs *r)
{
	ex_free(&r->ex);
	free(r->v);
	r->v = NULL;
	r->cap = 0;
}

const char *
mmidx_recs_strerror(const struct mmidx_recs *r)
{
	return r->err;
}

/* A fault: -1 with the message and errno e. */
static int
rfail(struct mmidx_recs *r, int e, const char *msg)
{
	rp_seterr(r->err, sizeof r->err, "%s", msg);
	errno = e;
	return -1;
}

/* The builder refused: its message, as a fault of the record. */
static int
bfail(struct mmidx_recs *r, const struct mmidx_builder *b)
{
	return rfail(r, EINVAL, mmidx_builder_strerror(b));
}

/* A mode that is not one int8: -1 with the fault. */
static int
bad_mode(struct mmidx_recs *r, uint64_t count, int64_t mode)
{
	if (count != 1)
		rp_seterr(r->err, sizeof r->err, "'%s' must hold one value, "
		    "not %" PRIu64, r->modefeat, count);
	else
		rp_seterr(r->err, sizeof r->err, "mode %" PRId64 " does not "
		    "fit int8", mode);
	errno = EINVAL;
	return -1;
}

int
mmidx_recs_decode(struct mmidx_recs *r, const uint8_t *p, size_t n,
    struct mmidx_rec *out)
{
	const struct ex_feature *f;

	if (ex_decode(&r->ex, p, n, EX_TYPE_EXAMPLE) == -1) {
		if (errno == ENOMEM)
			return rfail(r, ENOMEM, "out of memory");
		return rfail(r, EINVAL, ex_strerror(&r->ex));
	}
	out->mode = 0;
	out->i64 = NULL;
	out->f32 = NULL;
	out->n = 0;
	if (r->modefeat != NULL) {
		const struct ex_feature *mf = ex_get(&r->ex, r->modefeat);

		if (mf != NULL && mf->kind == EX_INT64) {
			if (mf->n != 1 || mf->i64[0] < INT8_MIN ||
			    mf->i64[0] > INT8_MAX)
				return bad_mode(r, mf->n, mf->n == 1 ?
				    mf->i64[0] : 0);
			out->mode = (int)mf->i64[0];
		}
	}
	f = ex_get(&r->ex, r->feature);
	if (f != NULL && f->kind == EX_INT64) {
		out->kind = MMIDX_REC_INT64;
		out->i64 = f->i64;
		out->n = f->n;
		return 0;
	}
	if (r->ex.nfeat == 0 && r->docs) {
		out->kind = MMIDX_REC_DOC;
		return 0;
	}
	if (f != NULL && f->kind == EX_FLOAT && r->floats) {
		out->kind = MMIDX_REC_FLOAT;
		out->f32 = f->f32;
		out->n = f->n;
		return 0;
	}
	if (f != NULL && f->kind == EX_NONE) {
		/* A feature with no list set: an empty sequence. */
		out->kind = MMIDX_REC_INT64;
		return 0;
	}
	return rfail(r, EINVAL, f == NULL ? (r->ex.nfeat == 0 ?
	    "no features (an empty Example ends a document, which "
	    "--documents each refuses)" : "no such feature (see -f)") :
	    f->kind == EX_FLOAT ? "a float_list needs a float --dtype" :
	    "a bytes_list, not token ids");
}

/*
 * The sequence of a big record, its feature streamed.  Returns 0 when
 * it was added, 1 when the record is not an Example with an int64 list
 * of that name (mmidx_recs_decode() then says what it is), or -1 with
 * the fault.  Every token is checked before the first goes out.
 */
static int
add_big(struct mmidx_recs *r, struct mmidx_builder *b, const uint8_t *p,
    size_t n)
{
	struct ex_int64_iter it;
	int64_t *v, mode = 0;
	uint8_t *packed;
	size_t k, bad;
	int rc = 0;

	if (ex_int64_open(&it, p, n, r->feature) != 0)
		return 1;
	if (r->modefeat != NULL &&
	    ex_int64_open(&it, p, n, r->modefeat) == 0) {
		(void)ex_int64_next(&it, &mode, 1);
		if (it.n != 1 || mode < INT8_MIN || mode > INT8_MAX)
			return bad_mode(r, it.n, mode);
	}
	v = malloc(MMIDX_BIG_PART * sizeof *v);
	packed = malloc(MMIDX_BIG_PART * sizeof(uint64_t));
	if (v == NULL || packed == NULL) {
		free(v);
		free(packed);
		return rfail(r, ENOMEM, "out of memory");
	}
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		(void)ex_int64_open(&it, p, n, r->feature);
		if (it.n > MMIDX_MAX_SEQ) {
			rp_seterr(r->err, sizeof r->err, "sequence of %" PRIu64
			    " tokens: longer than the int32 sizes of the index "
			    "allow", it.n);
			errno = EINVAL;
			rc = -1;
			break;
		}
		while (rc == 0 && (k = ex_int64_next(&it, v, MMIDX_BIG_PART)) > 0) {
			if (mmidx_pack_i64(b, v, k, packed, &bad, r->err,
			    sizeof r->err) == -1) {
				errno = EINVAL;
				rc = -1;
			} else if (pass == 1 && mmidx_add_part(b, packed, k) == -1)
				rc = bfail(r, b);
		}
	}
	if (rc == 0) {
		if (r->modefeat != NULL)
			mmidx_set_mode(b, (int)mode);
		if (mmidx_end_parts(b, it.n) == -1)
			rc = bfail(r, b);
	}
	free(v);
	free(packed);
	return rc;
}

int
mmidx_recs_add(struct mmidx_recs *r, struct mmidx_builder *b,
    const uint8_t *p, size_t n)
{
	struct mmidx_rec rec;
	long cnt;
	int rc;

	if (n > MMIDX_BIG_RECORD && (rc = add_big(r, b, p, n)) != 1)
		return rc;
	if (r->modefeat == NULL && (cnt = ex_int64_canonical(p, n, r->feature,
	    r->featlen, &r->v, &r->cap)) >= 0)
		return mmidx_add_i64(b, r->v, (size_t)cnt) == -1 ?
		    bfail(r, b) : 0;
	/*
	 * Otherwise one reusable decode per record: its pools are kept
	 * between records, and the values are used where they lie.
	 */
	if (mmidx_recs_decode(r, p, n, &rec) == -1)
		return -1;
	if (r->modefeat != NULL)
		mmidx_set_mode(b, rec.mode);
	switch (rec.kind) {
	case MMIDX_REC_DOC:
		return mmidx_end_document(b) == -1 ? bfail(r, b) : 1;
	case MMIDX_REC_FLOAT:
		return mmidx_add_f32(b, rec.f32, rec.n) == -1 ? bfail(r, b) : 0;
	default:
		return mmidx_add_i64(b, rec.i64, rec.n) == -1 ? bfail(r, b) : 0;
	}
}

int
mmidx_recs_ends_doc(struct mmidx_recs *r, const uint8_t *p, size_t n)
{
	if (n == 0 || (n == 2 && p[0] == 0x0a && p[1] == 0x00))
		return 1;
	return ex_decode(&r->ex, p, n, EX_TYPE_EXAMPLE) == 0 &&
	    r->ex.nfeat == 0;
}

/* ---- records in several threads ---- */

int
mmidx_pack_init(struct mmidx_pack *pk, const char *feature, int docs,
    uint64_t vocab, size_t max)
{
	memset(pk, 0, sizeof *pk);
	if ((pk->seq = calloc(max ? max : 1, sizeof *pk->seq)) == NULL)
		return -1;
	mmidx_recs_init(&pk->rs, feature, NULL, 0, docs);
	pk->vocab = vocab;
	pk->max = max;
	return 0;
}

void
mmidx_pack_free(struct mmidx_pack *pk)
{
	mmidx_recs_free(&pk->rs);
	free(pk->seq);
	free(pk->tok);
	pk->seq = NULL;
	pk->tok = NULL;
	pk->k = pk->used = pk->tokcap = 0;
}

void
mmidx_pack_reset(struct mmidx_pack *pk)
{
	pk->k = 0;
	pk->used = 0;
}

const char *
mmidx_pack_strerror(const struct mmidx_pack *pk)
{
	return pk->rs.err;
}

/* Room for 'bytes' more packed bytes: 0, or -1 with the fault. */
static int
tok_room(struct mmidx_pack *pk, size_t bytes)
{
	size_t need, c;
	uint8_t *q;

	if (bytes <= pk->tokcap - pk->used)
		return 0;
	need = pk->used + bytes;
	c = pk->tokcap * 2 > need ? pk->tokcap * 2 : need;
	if ((q = realloc(pk->tok, c)) == NULL)
		return rfail(&pk->rs, ENOMEM, "out of memory");
	pk->tok = q;
	pk->tokcap = c;
	return 0;
}

/* A token at or above the vocabulary among n (the general way then says which). */
static int
u16_outside(uint64_t vocab, const uint8_t *p, size_t n)
{
	unsigned hi = 0, v;

	if (vocab == 0 || vocab > UINT16_MAX)
		return 0;
	for (size_t j = 0; j < n; j++) {
		v = (unsigned)p[2 * j] | (unsigned)p[2 * j + 1] << 8;
		hi = v > hi ? v : hi;
	}
	return hi >= vocab;
}

int
mmidx_pack_record(struct mmidx_pack *pk, const struct mmidx_builder *b,
    const uint8_t *p, size_t n)
{
	enum mmidx_dtype t = mmidx_builder_dtype(b);
	size_t esize = mmidx_dtype_size(t), bad;
	struct mmidx_rec rec;
	const int64_t *v;
	size_t cnt;
	long c;

	/*
	 * uint16 tokens straight from the record (n tokens at most); any
	 * other record, or a token that does not fit, takes the general
	 * way below, which says what is wrong.
	 */
	if (t == MMIDX_UINT16 && n <= MMIDX_MAX_SEQ) {
		if (tok_room(pk, 2 * n) == -1)
			return -1;
		if ((c = ex_uint16_canonical(p, n, pk->rs.feature,
		    pk->rs.featlen, (uint16_t *)(void *)(pk->tok + pk->used))) >= 0 &&
		    !u16_outside(pk->vocab, pk->tok + pk->used, (size_t)c)) {
			pk->seq[pk->k++] = (uint32_t)c;
			pk->used += 2 * (size_t)c;
			return 0;
		}
	}
	if ((c = ex_int64_canonical(p, n, pk->rs.feature, pk->rs.featlen,
	    &pk->rs.v, &pk->rs.cap)) >= 0) {
		v = pk->rs.v;
		cnt = (size_t)c;
	} else if (mmidx_recs_decode(&pk->rs, p, n, &rec) == -1)
		return -1;
	else if (rec.kind == MMIDX_REC_DOC) {
		pk->seq[pk->k++] = MMIDX_PACK_DOC;
		return 0;
	} else {
		v = rec.i64;
		cnt = rec.n;
	}
	if (cnt <= MMIDX_MAX_SEQ && tok_room(pk, cnt * esize) == -1)
		return -1;
	if (mmidx_pack_i64(b, v, cnt, pk->tok + pk->used, &bad, pk->rs.err,
	    sizeof pk->rs.err) == -1)
		return -1;
	pk->seq[pk->k++] = (uint32_t)cnt;
	pk->used += cnt * esize;
	return 0;
}

long
mmidx_pack_put(const struct mmidx_pack *pk, struct mmidx_builder *b,
    size_t *bad)
{
	size_t esize = mmidx_dtype_size(mmidx_builder_dtype(b));
	size_t a = 0, at = 0, used = 0;
	long docs = 0;

	/* Runs of sequences between document ends, each in one call. */
	for (size_t j = 0; j <= pk->k; j++) {
		if (j < pk->k && pk->seq[j] != MMIDX_PACK_DOC) {
			used += pk->seq[j] * esize;
			continue;
		}
		if (j > a && mmidx_add_packed(b, pk->tok + at, pk->seq + a,
		    j - a) == -1) {
			*bad = a + mmidx_builder_bad_seq(b);
			return -1;
		}
		if (j < pk->k) {
			if (mmidx_end_document(b) == -1) {
				*bad = j;
				return -1;
			}
			docs++;
		}
		a = j + 1;
		at = used;
	}
	return docs;
}

/* ---- --part by documents ---- */

int
mmidx_part_take(struct mmidx_part *pt, uint64_t g, int end)
{
	if (!pt->docs)
		return 1;
	if (pt->skipping) {
		if (g >= pt->hi) {
			pt->done = 1;	/* no document starts in the part */
			return 0;
		}
		if (end)
			pt->skipping = 0;
		return 0;
	}
	if (g >= pt->hi && end)
		pt->done = 1;
	return 1;
}

/* ---- text through a fairseq dictionary ---- */

void
mmidx_textin_init(struct mmidx_textin *t, struct fqd *dict, struct fqd *unk,
    size_t unk_max)
{
	memset(t, 0, sizeof *t);
	t->dict = dict;
	t->unk = unk;
	t->unk_max = unk_max;
}

/* Count the words of p[0 .. n) that t->dict lacks in t->unk. */
static int
count_unknown(struct mmidx_textin *t, const uint8_t *p, size_t n)
{
	size_t pos = 0, wn;
	const uint8_t *w;
	long id;

	while (fqd_next_word(p, n, &pos, &w, &wn) == 1) {
		if (fqd_find(t->dict, w, wn) >= 0)
			continue;
		if ((id = fqd_find(t->unk, w, wn)) >= 0)
			(void)fqd_bump(t->unk, (size_t)id, 1);
		else if (fqd_size(t->unk) < t->unk_max) {
			if (fqd_add(t->unk, w, wn, 1) == -1)
				return -1;
		} else
			t->capped = 1;
	}
	return 0;
}

int
mmidx_textin_count(struct mmidx_textin *t, const uint8_t *p, size_t n,
    size_t k, size_t nunk)
{
	t->st.seqs++;
	t->st.toks += k;
	if (nunk == 0)
		return 0;
	/* The words behind the <unk>s, for the report. */
	t->st.unk += nunk;
	return count_unknown(t, p, n);
}

int
mmidx_unk_check(const struct mmidx_text_stats *all, double max, double *rate)
{
	double r;

	if (all->toks == 0 || all->unk == 0)
		return MMIDX_UNK_FINE;
	*rate = r = (double)all->unk / (double)all->toks;
	if (max >= 0 && r > max)
		return MMIDX_UNK_OVER;
	return r > MMIDX_UNK_WARN ? MMIDX_UNK_HIGH : MMIDX_UNK_FINE;
}
