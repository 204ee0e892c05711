/*
 * tf.train.Example / SequenceExample codec.
 *
 * Decoding collects map entries (key span plus the spans of their value
 * messages), sorts them by key keeping the last of equal keys, then
 * decodes each Feature into pools of numbers and byte spans.  The pools
 * are reused across decodes, so a steady stream of records allocates
 * nothing once the pools are large enough.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"

struct span {
	const uint8_t	*p;
	size_t		 n;
};

/* A map entry seen while decoding. */
struct entry {
	const uint8_t	*key;
	size_t		 keylen;
	size_t		 seq;		/* order of appearance: last wins */
	size_t		 v0, nv;	/* its value spans in the span pool */
	int		 list;		/* 1: FeatureLists entry, 0: Features */
};

struct pools {
	int64_t		*i64;
	size_t		 ni64, ci64;
	float		*f32;
	size_t		 nf32, cf32;
	struct ex_bytes	*b;
	size_t		 nb, cb;
	struct ex_feature *feat;
	size_t		 nfeat, cfeat;
	size_t		*foff;		/* per feature: first value in its pool */
	struct ex_flist	*lists;
	size_t		 nlists, clists;
	size_t		*loff;		/* per list: first feature in feat */
	struct entry	*ent;
	size_t		 nent, cent;
	struct span	*sp;
	size_t		 nsp, csp;
	struct span	*stepsp;	/* the value span of each lazy step */
	size_t		 nstepsp, cstepsp;
	size_t		 lazy_min;	/* the example's, for this decode */
	char		 err[200];
};

#define GROW(P, N, C, T) ((N) < (C) ? 0 : grow((void **)&(P), &(C), sizeof(T)))

static int
grow(void **p, size_t *cap, size_t size)
{
	size_t n = *cap ? *cap * 2 : 16;
	void *q;

	if (n > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	if ((q = realloc(*p, n * size)) == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

void
ex_init(struct example *ex)
{
	memset(ex, 0, sizeof(*ex));
}

void
ex_free(struct example *ex)
{
	struct pools *P;

	if (ex == NULL || (P = ex->priv) == NULL)
		return;
	free(P->i64);
	free(P->f32);
	free(P->b);
	free(P->feat);
	free(P->foff);
	free(P->lists);
	free(P->loff);
	free(P->ent);
	free(P->sp);
	free(P->stepsp);
	free(P);
	memset(ex, 0, sizeof(*ex));
}

const char *
ex_strerror(const struct example *ex)
{
	const struct pools *P = ex->priv;

	return P ? P->err : "out of memory";
}

static int
bad(struct pools *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
bad(struct pools *P, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(P->err, sizeof(P->err), fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return -1;
}

/*
 * One field of a message at *pp.  On return *field and *wt are set;
 * for wire type 2 'val' is the body, for 0 'num' the value.  Returns 1,
 * 0 at the end, -1 on malformed input (message in P).
 */
static int
next_field(struct pools *P, const char *what, const uint8_t *start,
    const uint8_t **pp, const uint8_t *end, uint64_t *field, int *wt,
    struct span *val, uint64_t *num)
{
	const uint8_t *p = *pp;
	uint64_t tag, len;

	if (p >= end)
		return 0;
	if (ex_get_varint(&p, end, &tag) == -1)
		return bad(P, "%s: bad tag at byte %zu", what, (size_t)(*pp - start));
	*field = tag >> 3;
	*wt = (int)(tag & 7);
	if (*field == 0 || *field > 0x1fffffff)
		return bad(P, "%s: field number 0 at byte %zu", what,
		    (size_t)(*pp - start));
	switch (*wt) {
	case 0:
		if (ex_get_varint(&p, end, num) == -1)
			return bad(P, "%s: bad varint at byte %zu", what,
			    (size_t)(p - start));
		break;
	case 1:
		if (end - p < 8)
			return bad(P, "%s: fixed64 runs past the end at byte %zu",
			    what, (size_t)(p - start));
		val->p = p;
		val->n = 8;
		p += 8;
		break;
	case 5:
		if (end - p < 4)
			return bad(P, "%s: fixed32 runs past the end at byte %zu",
			    what, (size_t)(p - start));
		val->p = p;
		val->n = 4;
		p += 4;
		break;
	case 2:
		if (ex_get_varint(&p, end, &len) == -1)
			return bad(P, "%s: bad length at byte %zu", what,
			    (size_t)(p - start));
		if (len > (uint64_t)(end - p))
			return bad(P, "%s: field %llu: length %llu runs past the "
			    "end at byte %zu", what, (unsigned long long)*field,
			    (unsigned long long)len, (size_t)(p - start));
		val->p = p;
		val->n = (size_t)len;
		p += len;
		break;
	default:
		return bad(P, "%s: unsupported wire type %d at byte %zu", what,
		    *wt, (size_t)(*pp - start));
	}
	*pp = p;
	return 1;
}

/* Collect the map entries of a Features or FeatureLists message. */
static int
collect(struct pools *P, const uint8_t *start, struct span msg, int list)
{
	const uint8_t *p = msg.p, *end = msg.p + msg.n, *q, *qend;
	struct span v, ev;
	struct entry *e;
	uint64_t f, ef, num;
	int wt, ewt, r;
	const char *what = list ? "feature_lists" : "features";

	while ((r = next_field(P, what, start, &p, end, &f, &wt, &v, &num)) == 1) {
		if (f != 1 || wt != 2)
			continue;	/* unknown field */
		if (GROW(P->ent, P->nent, P->cent, struct entry) == -1)
			return -1;
		e = &P->ent[P->nent];
		e->key = (const uint8_t *)"";
		e->keylen = 0;
		e->seq = P->nent;
		e->v0 = P->nsp;
		e->nv = 0;
		e->list = list;
		q = v.p;
		qend = v.p + v.n;
		while ((r = next_field(P, "map entry", start, &q, qend, &ef,
		    &ewt, &ev, &num)) == 1) {
			if (ef == 1 && ewt == 2) {
				e->key = ev.p;
				e->keylen = ev.n;
			} else if (ef == 2 && ewt == 2) {
				if (GROW(P->sp, P->nsp, P->csp, struct span) == -1)
					return -1;
				P->sp[P->nsp++] = ev;
				e->nv++;
			}
		}
		if (r == -1)
			return -1;
		P->nent++;
	}
	return r;
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c;

	if (x->list != y->list)
		return x->list - y->list;
	if ((c = n ? memcmp(x->key, y->key, n) : 0) != 0)
		return c;
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The one decoder of packed varints (below). */
static inline __attribute__((always_inline)) long packed_varints(
    const uint8_t *c, size_t clen, int64_t *d64,
    uint16_t *d16, uint64_t *over);

/* Decode a list body of the given kind, appending values to the pools. */
static int
list_values(struct pools *P, const uint8_t *start, int kind, struct span body,
    size_t *count)
{
	const uint8_t *p = body.p, *end = body.p + body.n;
	struct span v;
	uint64_t f, num;
	uint32_t bits;
	long k;
	int wt, r;

	while ((r = next_field(P, "list", start, &p, end, &f, &wt, &v, &num)) == 1) {
		if (f != 1)
			continue;
		if (kind == EX_BYTES) {
			if (wt != 2)
				continue;
			if (GROW(P->b, P->nb, P->cb, struct ex_bytes) == -1)
				return -1;
			P->b[P->nb].p = v.p;
			P->b[P->nb++].n = v.n;
			(*count)++;
		} else if (kind == EX_FLOAT) {
			if (wt == 5) {
				if (GROW(P->f32, P->nf32, P->cf32, float) == -1)
					return -1;
				bits = rp_le32(v.p);
				memcpy(&P->f32[P->nf32++], &bits, 4);
				(*count)++;
			} else if (wt == 2) {
				if (v.n % 4 != 0)
					return bad(P, "float list: packed length "
					    "%zu is not a multiple of 4", v.n);
				/* v.n / 4 values: reserve once, then copy */
				while (P->cf32 - P->nf32 < v.n / 4)
					if (grow((void **)&P->f32, &P->cf32,
					    sizeof(float)) == -1)
						return -1;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				if (v.n > 0)
					memcpy(P->f32 + P->nf32, v.p, v.n);
				P->nf32 += v.n / 4;
				*count += v.n / 4;
#else
				for (const uint8_t *q = v.p; q < v.p + v.n; q += 4) {
					bits = rp_le32(q);
					memcpy(&P->f32[P->nf32++], &bits, 4);
					(*count)++;
				}
#endif
			}
		} else {
			if (wt == 0) {
				if (GROW(P->i64, P->ni64, P->ci64, int64_t) == -1)
					return -1;
				P->i64[P->ni64++] = (int64_t)num;
				(*count)++;
			} else if (wt == 2) {
				/* at most v.n values: reserve once */
				while (P->ci64 - P->ni64 < v.n)
					if (grow((void **)&P->i64, &P->ci64,
					    sizeof(int64_t)) == -1)
						return -1;
				if (v.n == 0)
					continue;
				if ((k = packed_varints(v.p, v.n,
				    P->i64 + P->ni64, NULL, NULL)) == -1)
					return bad(P, "int64 list: bad varint");
				P->ni64 += (size_t)k;
				*count += (size_t)k;
			}
		}
	}
	return r;
}

static int check_feature(struct pools *P, const uint8_t *start, struct span fs);
static uint64_t count_list(const uint8_t *l, const uint8_t *lend);

static uint64_t count_bytes_list(const uint8_t *l, const uint8_t *lend);

/*
 * A Feature whose final kind is int64 or bytes with more than
 * P->lazy_min bytes of values is checked (every part, as decoding
 * would) and left in the record.  Returns 1 when it was, 0 when it is
 * to be decoded, -1 when it is malformed.
 */
static int
lazy_feature(struct pools *P, const uint8_t *start, const struct span *sp,
    size_t n, struct ex_feature *ft)
{
	const uint8_t *p, *end;
	struct span v;
	uint64_t f, num, count = 0;
	size_t i, bytes = 0;
	int wt, kind = EX_NONE;

	for (i = 0; i < n; i++)
		bytes += sp[i].n;
	if (bytes <= P->lazy_min)
		return 0;	/* the common case: small enough */
	for (i = 0, bytes = 0; i < n; i++) {
		p = sp[i].p;
		end = p + sp[i].n;
		while (next_field(P, "feature", start, &p, end, &f, &wt, &v,
		    &num) == 1) {
			if (wt != 2 || f < 1 || f > 3)
				continue;
			if ((int)f != kind) {
				kind = (int)f;
				bytes = 0;
			}
			bytes += v.n;
		}
	}
	if ((kind != 3 && kind != 1) || bytes <= P->lazy_min)
		return 0;	/* (a malformed one is found by decoding) */
	for (i = 0; i < n; i++)
		if (check_feature(P, start, sp[i]) == -1)
			return -1;
	for (i = 0, kind = EX_NONE; i < n; i++) {
		p = sp[i].p;
		end = p + sp[i].n;
		while (next_field(P, "feature", start, &p, end, &f, &wt, &v,
		    &num) == 1) {
			if (wt != 2 || f < 1 || f > 3)
				continue;
			if ((int)f != kind) {
				kind = (int)f;
				count = 0;
			}
			count += kind == 3 ? count_list(v.p, v.p + v.n) :
			    count_bytes_list(v.p, v.p + v.n);
		}
	}
	ft->kind = kind == 3 ? EX_INT64 : EX_BYTES;
	ft->n = (size_t)count;
	ft->lazy = sp;
	ft->nlazy = n;
	return 1;
}

/*
 * A Feature in the form encoders write for floats -- one FloatList
 * holding one packed run and nothing else -- decoded without the
 * general walk over its fields (the steps of a SequenceExample are
 * many small such Features).  Returns 1 when 'sp' was one, 0 when it
 * is not (the general path decides; nothing was stored), -1 when out
 * of memory.
 */
static int
packed_float(struct pools *P, struct span sp, struct ex_feature *ft,
    size_t *off)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *p = sp.p, *end = sp.p + sp.n;
	uint64_t len;

	if (p >= end || *p++ != 0x12 || ex_get_varint(&p, end, &len) == -1 ||
	    len != (uint64_t)(end - p))
		return 0;
	if (p >= end || *p++ != 0x0a || ex_get_varint(&p, end, &len) == -1 ||
	    len != (uint64_t)(end - p) || len % 4 != 0)
		return 0;
	while (P->cf32 - P->nf32 < len / 4)
		if (grow((void **)&P->f32, &P->cf32, sizeof(float)) == -1)
			return -1;
	if (len > 0)
		memcpy(P->f32 + P->nf32, p, len);
	ft->kind = EX_FLOAT;
	ft->n = len / 4;
	*off = P->nf32;
	P->nf32 += len / 4;
	return 1;
#else
	(void)P, (void)sp, (void)ft, (void)off;
	return 0;
#endif
}

/*
 * Decode the Feature made of the value spans sp[0..n) (merged, as
 * protobuf merges repeated messages) into *ft; *off gets the first
 * value's index in its pool.
 */
static int
feature(struct pools *P, const uint8_t *start, const struct span *sp, size_t n,
    struct ex_feature *ft, size_t *off)
{
	const uint8_t *p, *end;
	struct span v;
	uint64_t f, num;
	size_t i;
	int wt, r, kind;

	ft->kind = EX_NONE;
	ft->n = 0;
	*off = 0;
	if (P->lazy_min > 0 && (r = lazy_feature(P, start, sp, n, ft)) != 0)
		return r == 1 ? 0 : -1;
	if (n == 1 && (r = packed_float(P, sp[0], ft, off)) != 0)
		return r == 1 ? 0 : -1;
	for (i = 0; i < n; i++) {
		p = sp[i].p;
		end = p + sp[i].n;
		while ((r = next_field(P, "feature", start, &p, end, &f, &wt,
		    &v, &num)) == 1) {
			if (wt != 2 || f < 1 || f > 3)
				continue;
			kind = f == 1 ? EX_BYTES : f == 2 ? EX_FLOAT : EX_INT64;
			if ((int)ft->kind != kind) {
				/* another member of the oneof: start over */
				ft->kind = kind;
				ft->n = 0;
				*off = kind == EX_BYTES ? P->nb :
				    kind == EX_FLOAT ? P->nf32 : P->ni64;
			}
			if (list_values(P, start, kind, v, &ft->n) == -1)
				return -1;
		}
		if (r == -1)
			return -1;
	}
	return 0;
}

/* The value spans of an entry (none, and no pool yet, for a key alone). */
static const struct span *
values_of(const struct pools *P, const struct entry *e)
{
	return e->nv ? P->sp + e->v0 : NULL;
}

/* Check the value messages of a map entry that a later one replaced. */
static int
check_values(struct pools *P, const uint8_t *start, const struct entry *e)
{
	const uint8_t *q, *end;
	struct span fv;
	uint64_t f, num;
	size_t i;
	int wt, r;

	for (i = 0; i < e->nv; i++) {
		if (!e->list) {
			if (check_feature(P, start, P->sp[e->v0 + i]) == -1)
				return -1;
			continue;
		}
		q = P->sp[e->v0 + i].p;
		end = q + P->sp[e->v0 + i].n;
		while ((r = next_field(P, "feature list", start, &q, end, &f, &wt,
		    &fv, &num)) == 1)
			if (f == 1 && wt == 2 && check_feature(P, start, fv) == -1)
				return -1;
		if (r == -1)
			return -1;
	}
	return 0;
}

/* Point features at their values once the pools have stopped moving. */
static void
fixup(struct pools *P, struct ex_feature *ft, size_t off)
{
	ft->i64 = NULL;
	ft->f32 = NULL;
	ft->b = NULL;
	if (ft->n == 0 || ft->lazy != NULL)
		return;
	switch (ft->kind) {
	case EX_INT64: ft->i64 = P->i64 + off; break;
	case EX_FLOAT: ft->f32 = P->f32 + off; break;
	case EX_BYTES: ft->b = P->b + off; break;
	default: break;
	}
}

/* Room for one more feature (and its pool offset). */
static inline struct ex_feature *
add_feat(struct pools *P)
{
	size_t *q;

	if (P->nfeat == P->cfeat) {
		if (grow((void **)&P->feat, &P->cfeat, sizeof(struct ex_feature)) == -1)
			return NULL;
		if ((q = realloc(P->foff, P->cfeat * sizeof(size_t))) == NULL)
			return NULL;
		P->foff = q;
	}
	memset(&P->feat[P->nfeat], 0, sizeof(struct ex_feature));
	return &P->feat[P->nfeat];
}

static int
feature_list(struct pools *P, const uint8_t *start, const struct span *sp,
    size_t n, size_t *count)
{
	const uint8_t *p, *end;
	struct span v;
	uint64_t f, num;
	size_t i;
	int wt, r;
	struct ex_feature *ft;

	*count = 0;
	for (i = 0; i < n; i++) {
		p = sp[i].p;
		end = p + sp[i].n;
		for (;;) {
			/*
			 * Steps that are one packed float list each (the
			 * usual case: many small steps), as packed_float()
			 * takes them, without the general walk; anything
			 * else, or a fault, takes the walk below.
			 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			while (p < end && *p == 0x0a && P->lazy_min == 0) {
				const uint8_t *q = p + 1, *fe;
				uint64_t len, l2, l3;

				if (ex_get_varint(&q, end, &len) == -1 ||
				    len > (uint64_t)(end - q))
					break;
				fe = q + len;
				if (q >= fe || *q++ != 0x12 ||
				    ex_get_varint(&q, fe, &l2) == -1 ||
				    l2 != (uint64_t)(fe - q) ||
				    q >= fe || *q++ != 0x0a ||
				    ex_get_varint(&q, fe, &l3) == -1 ||
				    l3 != (uint64_t)(fe - q) || l3 % 4 != 0)
					break;
				if (P->nfeat == P->cfeat && add_feat(P) == NULL)
					return -1;
				ft = &P->feat[P->nfeat];
				/* what add_feat() clears; fixup() sets the values */
				ft->key = NULL;
				ft->keylen = 0;
				ft->lazy = NULL;
				ft->nlazy = 0;
				while (P->cf32 - P->nf32 < l3 / 4)
					if (grow((void **)&P->f32, &P->cf32,
					    sizeof(float)) == -1)
						return -1;
				if (l3 > 0)
					memcpy(P->f32 + P->nf32, q, (size_t)l3);
				ft->kind = EX_FLOAT;
				ft->n = (size_t)l3 / 4;
				P->foff[P->nfeat++] = P->nf32;
				P->nf32 += (size_t)l3 / 4;
				(*count)++;
				p = fe;
			}
#endif
			if ((r = next_field(P, "feature list", start, &p, end,
			    &f, &wt, &v, &num)) != 1)
				break;
			if (f != 1 || wt != 2)
				continue;
			if ((ft = add_feat(P)) == NULL)
				return -1;
			if (feature(P, start, &v, 1, ft, &P->foff[P->nfeat]) == -1)
				return -1;
			if (ft->lazy != NULL) {
				/*
				 * A step left in the record keeps its span in
				 * the step pool ('v' is gone when this returns);
				 * its pool index stands in for the value offset
				 * until decode() points 'lazy' there, once the
				 * pool has stopped moving.
				 */
				if (GROW(P->stepsp, P->nstepsp, P->cstepsp,
				    struct span) == -1)
					return -1;
				P->stepsp[P->nstepsp] = v;
				P->foff[P->nfeat] = P->nstepsp++;
			}
			P->nfeat++;
			(*count)++;
		}
		if (r == -1)
			return -1;
	}
	return 0;
}

static int
is_sequence(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	uint64_t tag, len;

	while (p < end) {
		if (ex_get_varint(&p, end, &tag) == -1)
			return 0;
		switch (tag & 7) {
		case 0:
			if (ex_get_varint(&p, end, &len) == -1)
				return 0;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		case 2:
			if ((tag >> 3) == 2)
				return 1;
			if (ex_get_varint(&p, end, &len) == -1 || len > (uint64_t)(end - p))
				return 0;
			p += len;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/*
 * What decoding and checking share: the example's pools (made on first
 * use, message cleared), an empty payload given as NULL, and whether
 * the payload is read as a SequenceExample.  Returns the pools, or NULL
 * with errno ENOMEM.
 */
static struct pools *
begin(struct example *ex, const uint8_t **p, size_t n, enum ex_type type,
    int *seq)
{
	struct pools *P = ex->priv;

	if (n == 0)
		*p = (const uint8_t *)"";	/* NULL is fine for nothing */
	if (P == NULL) {
		if ((P = calloc(1, sizeof(*P))) == NULL)
			return NULL;
		ex->priv = P;
	}
	P->err[0] = '\0';
	*seq = type == EX_TYPE_SEQUENCE ||
	    (type == EX_TYPE_AUTO && is_sequence(*p, n));
	return P;
}

static int decode(struct example *ex, const uint8_t *p, size_t n,
    enum ex_type type);

int
ex_decode(struct example *ex, const uint8_t *p, size_t n, enum ex_type type)
{
	struct pools *P;

	if (decode(ex, p, n, type) == 0)
		return 0;
	/* Exhaustion is reported as such, not as a reason the record is bad. */
	if (errno == ENOMEM && (P = ex->priv) != NULL) {
		snprintf(P->err, sizeof(P->err), "out of memory");
		errno = ENOMEM;
	}
	return -1;
}

static int
decode(struct example *ex, const uint8_t *p, size_t n, enum ex_type type)
{
	struct pools *P;
	const uint8_t *q, *end;
	struct span v;
	uint64_t f, num;
	size_t i, j, k, nfeat_top, cnt;
	int wt, r, seq;

	if ((P = begin(ex, &p, n, type, &seq)) == NULL)
		return -1;
	q = p;
	end = p + n;
	P->lazy_min = ex->lazy_min;
	P->ni64 = P->nf32 = P->nb = P->nfeat = P->nlists = P->nent = P->nsp = 0;
	P->nstepsp = 0;
	ex->seq = seq;
	ex->has_features = ex->has_lists = 0;
	ex->nfeat = ex->nlists = 0;
	ex->feat = NULL;
	ex->lists = NULL;

	while ((r = next_field(P, seq ? "sequence example" : "example", p, &q,
	    end, &f, &wt, &v, &num)) == 1) {
		if (wt != 2)
			continue;
		if (f == 1) {
			ex->has_features = 1;
			if (collect(P, p, v, 0) == -1)
				return -1;
		} else if (f == 2 && seq) {
			ex->has_lists = 1;
			if (collect(P, p, v, 1) == -1)
				return -1;
		}
	}
	if (r == -1)
		return -1;
	if (P->nent > 1)
		qsort(P->ent, P->nent, sizeof(struct entry), cmp_entry);

	/* Features: the last of equal keys wins. */
	for (i = 0; i < P->nent && !P->ent[i].list; i = j) {
		for (j = i + 1; j < P->nent && !P->ent[j].list &&
		    P->ent[j].keylen == P->ent[i].keylen &&
		    memcmp(P->ent[j].key, P->ent[i].key, P->ent[i].keylen) == 0; j++)
			;
		k = j - 1;
		/* Superseded entries must still be well-formed, as protobuf requires. */
		for (; i < k; i++)
			if (check_values(P, p, &P->ent[i]) == -1)
				return -1;
		if (add_feat(P) == NULL)
			return -1;
		P->feat[P->nfeat].key = P->ent[k].key;
		P->feat[P->nfeat].keylen = P->ent[k].keylen;
		if (feature(P, p, values_of(P, &P->ent[k]), P->ent[k].nv,
		    &P->feat[P->nfeat], &P->foff[P->nfeat]) == -1)
			return -1;
		P->nfeat++;
	}
	nfeat_top = P->nfeat;
	for (; i < P->nent; i = j) {
		for (j = i + 1; j < P->nent && P->ent[j].keylen == P->ent[i].keylen &&
		    memcmp(P->ent[j].key, P->ent[i].key, P->ent[i].keylen) == 0; j++)
			;
		k = j - 1;
		for (; i < k; i++)
			if (check_values(P, p, &P->ent[i]) == -1)
				return -1;
		if (P->nlists == P->clists) {
			size_t *q2;

			if (grow((void **)&P->lists, &P->clists,
			    sizeof(struct ex_flist)) == -1)
				return -1;
			if ((q2 = realloc(P->loff, P->clists * sizeof(size_t))) == NULL)
				return -1;
			P->loff = q2;
		}
		P->lists[P->nlists].key = P->ent[k].key;
		P->lists[P->nlists].keylen = P->ent[k].keylen;
		P->loff[P->nlists] = P->nfeat;
		if (feature_list(P, p, values_of(P, &P->ent[k]), P->ent[k].nv,
		    &cnt) == -1)
			return -1;
		P->lists[P->nlists].n = cnt;
		P->nlists++;
	}

	for (i = 0; i < P->nfeat; i++) {
		if (i >= nfeat_top && P->feat[i].lazy != NULL)
			P->feat[i].lazy = P->stepsp + P->foff[i];
		fixup(P, &P->feat[i], P->foff[i]);
	}
	for (i = 0; i < P->nlists; i++)
		P->lists[i].v = P->lists[i].n ? P->feat + P->loff[i] : NULL;
	ex->feat = nfeat_top ? P->feat : NULL;
	ex->nfeat = nfeat_top;
	ex->lists = P->nlists ? P->lists : NULL;
	ex->nlists = P->nlists;
	return 0;
}

/* Validation without decoding: the same accept/reject as ex_decode(). */

static int
check_packed_varints(struct pools *P, struct span v)
{
	return ex_varints_ok(v.p, v.n) ? 0 : bad(P, "int64 list: bad varint");
}

static int
check_feature(struct pools *P, const uint8_t *start, struct span fs)
{
	const uint8_t *p = fs.p, *end = fs.p + fs.n, *q, *qend;
	struct span v, lv;
	uint64_t f, lf, num;
	int wt, lwt, r;

	while ((r = next_field(P, "feature", start, &p, end, &f, &wt, &v, &num)) == 1) {
		if (wt != 2 || f < 1 || f > 3)
			continue;
		q = v.p;
		qend = v.p + v.n;
		while ((r = next_field(P, "list", start, &q, qend, &lf, &lwt, &lv,
		    &num)) == 1) {
			if (lf != 1 || lwt != 2)
				continue;
			if (f == 2 && lv.n % 4 != 0)
				return bad(P, "float list: packed length %zu is not "
				    "a multiple of 4", lv.n);
			if (f == 3 && check_packed_varints(P, lv) == -1)
				return -1;
		}
		if (r == -1)
			return -1;
	}
	return r;
}

/* A FeatureList message: its steps. */
static int
check_list(struct pools *P, const uint8_t *start, struct span fl)
{
	const uint8_t *s = fl.p, *send = fl.p + fl.n;
	struct span fv;
	uint64_t ff, num;
	int fwt, r;

	while ((r = next_field(P, "feature list", start, &s, send, &ff, &fwt,
	    &fv, &num)) == 1)
		if (ff == 1 && fwt == 2 && check_feature(P, start, fv) == -1)
			return -1;
	return r;
}

/* A Features (list = 0) or FeatureLists (list = 1) message. */
static int
check_map(struct pools *P, const uint8_t *start, struct span msg, int list)
{
	const uint8_t *p = msg.p, *end = msg.p + msg.n, *q, *qend;
	struct span v, ev;
	uint64_t f, ef, num;
	int wt, ewt, r;
	const char *what = list ? "feature_lists" : "features";

	while ((r = next_field(P, what, start, &p, end, &f, &wt, &v, &num)) == 1) {
		if (f != 1 || wt != 2)
			continue;
		q = v.p;
		qend = v.p + v.n;
		while ((r = next_field(P, "map entry", start, &q, qend, &ef, &ewt,
		    &ev, &num)) == 1) {
			if (ef != 2 || ewt != 2)
				continue;
			if (!list) {
				if (check_feature(P, start, ev) == -1)
					return -1;
				continue;
			}
			if (check_list(P, start, ev) == -1)
				return -1;
		}
		if (r == -1)
			return -1;
	}
	return r;
}

int
ex_check(struct example *ex, const uint8_t *p, size_t n, enum ex_type type)
{
	struct pools *P;
	const uint8_t *q, *end;
	struct span v;
	uint64_t f, num;
	int wt, r, seq;

	if ((P = begin(ex, &p, n, type, &seq)) == NULL)
		return -1;
	q = p;
	end = p + n;
	while ((r = next_field(P, seq ? "sequence example" : "example", p, &q,
	    end, &f, &wt, &v, &num)) == 1) {
		if (wt != 2)
			continue;
		if ((f == 1 || (f == 2 && seq)) && check_map(P, p, v, f == 2) == -1)
			return -1;
	}
	return r;
}

static int
keycmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	if (c != 0)
		return c;
	return an < bn ? -1 : an > bn;
}

/*
 * Binary search over 'n' items of 'stride' bytes sorted by a key whose
 * pointer and length lie at 'koff' and 'loff' in each item.
 */
static const void *
find_key(const void *base, size_t n, size_t stride, size_t koff, size_t loff,
    const char *name, size_t len)
{
	size_t lo = 0, hi = n, mid, klen;
	const uint8_t *it, *key;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		it = (const uint8_t *)base + mid * stride;
		memcpy(&key, it + koff, sizeof(key));
		memcpy(&klen, it + loff, sizeof(klen));
		c = keycmp(key, klen, (const uint8_t *)name, len);
		if (c == 0)
			return it;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct ex_feature *
ex_find(const struct example *ex, const char *name, size_t len)
{
	return find_key(ex->feat, ex->nfeat, sizeof(struct ex_feature),
	    offsetof(struct ex_feature, key), offsetof(struct ex_feature, keylen),
	    name, len);
}

const struct ex_feature *
ex_get(const struct example *ex, const char *name)
{
	return ex_find(ex, name, strlen(name));
}

const struct ex_flist *
ex_find_list(const struct example *ex, const char *name, size_t len)
{
	return find_key(ex->lists, ex->nlists, sizeof(struct ex_flist),
	    offsetof(struct ex_flist, key), offsetof(struct ex_flist, keylen),
	    name, len);
}

/* Encoding */

/*
 * Pack v[0 .. used) as varints at q, then n - used zero bytes; returns
 * the end.  May write 3 bytes past it.  The widest value picks the
 * loop: all below 2^7 are single bytes; below 2^14, one or two; below
 * 2^28, each value's 7-bit groups are spread over a 32-bit word with
 * the continuation bits its length calls for, without branching on
 * that length.
 */
static uint8_t *
pack_list(uint8_t *q, const int64_t *v, size_t used, size_t n)
{
	uint64_t any = 0;
	uint32_t x, w, nb;
	size_t j;

	for (j = 0; j < used; j++)
		any |= (uint64_t)v[j];
	if (any < 1u << 7) {
		for (j = 0; j < used; j++)
			q[j] = (uint8_t)v[j];
		q += used;
	} else if (any < 1u << 14) {
		for (j = 0; j < used; j++) {
			x = (uint32_t)v[j];
			nb = x >= 1u << 7;
			w = (x & 0x7f) | (x << 1 & 0x7f00) | nb << 7;
			q[0] = (uint8_t)w;
			q[1] = (uint8_t)(w >> 8);
			q += nb + 1;
		}
	} else if (any < 1u << 28) {
		for (j = 0; j < used; j++) {
			x = (uint32_t)v[j];
			/* Bytes after the first: (bit length - 1) / 7, for up to 28 bits. */
			nb = (uint32_t)(31 - __builtin_clz(x | 1)) * 37 >> 8;
			w = (x & 0x7f) | (x << 1 & 0x7f00) | (x << 2 & 0x7f0000) |
			    (x << 3 & 0x7f000000);
			w |= ((1u << (8 * nb)) - 1) & 0x808080;
			rp_put_le32(q, w);
			q += nb + 1;
		}
	} else
		for (j = 0; j < used; j++)
			q = ex_put_varint(q, (uint64_t)v[j]);
	if (n > used)
		memset(q, 0, n - used);
	return q + (n - used);
}

/*
 * The bytes of a feature's values in the record: the packed values of
 * an int64 or float list, the value fields of a bytes list.
 */
static size_t
values_size(const struct ex_feature *ft)
{
	size_t i, s = 0;

	switch (ft->kind) {
	case EX_BYTES:
		if (ft->lazy != NULL) {
			struct ex_bytes_iter it;
			struct ex_bytes v[1024];
			size_t k;

			ex_bytes_open_feature(&it, ft);
			while ((k = ex_bytes_next(&it, v, 1024)) > 0)
				for (i = 0; i < k; i++)
					s += ex_ld_size(v[i].n);
			return s;
		}
		for (i = 0; i < ft->n; i++)
			s += ex_ld_size(ft->b[i].n);
		return s;
	case EX_FLOAT:
		return 4 * ft->n;
	case EX_INT64:
		if (ft->lazy != NULL) {
			struct ex_int64_iter it;
			int64_t v[1024];
			size_t k;

			ex_int64_open_feature(&it, ft);
			while ((k = ex_int64_next(&it, v, 1024)) > 0)
				for (i = 0; i < k; i++)
					s += ex_varint_size((uint64_t)v[i]);
		} else
			for (i = 0; i < ft->n; i++)
				s += ex_varint_size((uint64_t)ft->i64[i]);
		return s;
	default:
		return 0;
	}
}

/* One value of a BytesList: field 1, its length, its bytes. */
static uint8_t *
put_bytes_value(uint8_t *q, struct ex_bytes v)
{
	q = ex_put_ld(q, 0x0a, v.n);
	if (v.n)
		memcpy(q, v.p, v.n);
	return q + v.n;
}

/* The body of the Feature ft, its sizes in e. */
static uint8_t *
put_feature(uint8_t *q, const struct ex_feature *ft, const struct ex_entry *e)
{
	size_t i;
	uint32_t bits;

	q = ex_feature_head(q, e, ft->kind);
	switch (ft->kind) {
	case EX_BYTES:
		if (ft->lazy != NULL) {
			struct ex_bytes_iter it;
			struct ex_bytes v[1024];
			size_t k;

			ex_bytes_open_feature(&it, ft);
			while ((k = ex_bytes_next(&it, v, 1024)) > 0)
				for (i = 0; i < k; i++)
					q = put_bytes_value(q, v[i]);
			break;
		}
		for (i = 0; i < ft->n; i++)
			q = put_bytes_value(q, ft->b[i]);
		break;
	case EX_FLOAT:
		for (i = 0; i < ft->n; i++) {
			memcpy(&bits, &ft->f32[i], 4);
			rp_put_le32(q, bits);
			q += 4;
		}
		break;
	case EX_INT64:
		if (ft->lazy != NULL) {
			struct ex_int64_iter it;
			int64_t v[1024];
			size_t k;

			ex_int64_open_feature(&it, ft);
			while ((k = ex_int64_next(&it, v, 1024)) > 0)
				for (i = 0; i < k; i++)
					q = ex_put_varint(q, (uint64_t)v[i]);
			break;
		}
		q = pack_list(q, ft->i64, ft->n, ft->n);
		break;
	default:
		break;
	}
	return q;
}

struct order {
	const uint8_t	*key;
	size_t		 keylen;
	size_t		 idx;
};

static int
cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	int c = keycmp(x->key, x->keylen, y->key, y->keylen);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Order of keyed items for writing: sorted, the last of equal keys
 * kept.  Returns the number kept in ord (allocated), or -1.
 */
static long
sort_keys(const void *items, size_t n, size_t stride, size_t keyoff,
    size_t lenoff, struct order **ord)
{
	struct order *o;
	size_t i, m;
	const uint8_t *it;
	int sorted = 1;

	*ord = NULL;
	if (n == 0)
		return 0;
	if ((o = malloc(n * sizeof(*o))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		it = (const uint8_t *)items + i * stride;
		memcpy(&o[i].key, it + keyoff, sizeof(o[i].key));
		memcpy(&o[i].keylen, it + lenoff, sizeof(o[i].keylen));
		if (o[i].key == NULL)
			o[i].key = (const uint8_t *)"";
		o[i].idx = i;
		if (i > 0 && keycmp(o[i - 1].key, o[i - 1].keylen, o[i].key,
		    o[i].keylen) >= 0)
			sorted = 0;
	}
	if (sorted) {
		*ord = o;
		return (long)n;
	}
	qsort(o, n, sizeof(*o), cmp_order);
	for (i = 0, m = 0; i < n; i++) {
		if (i + 1 < n && keycmp(o[i].key, o[i].keylen, o[i + 1].key,
		    o[i + 1].keylen) == 0)
			continue;	/* a later one wins */
		o[m++] = o[i];
	}
	*ord = o;
	return (long)m;
}

/* The body of the FeatureList fl. */
static size_t
flist_size(const struct ex_flist *fl)
{
	struct ex_entry e;
	size_t j, s = 0;

	for (j = 0; j < fl->n; j++)
		s += ex_ld_size(ex_feature_sizes(&e, fl->v[j].kind,
		    values_size(&fl->v[j])));
	return s;
}

int
ex_encode(const struct example *ex, struct buf *out)
{
	struct order *fo = NULL, *lo = NULL;
	struct ex_entry e;
	long nf, nl;
	size_t i, j, fs = 0, ls = 0, total, vs;
	const struct ex_feature *ft;
	const struct ex_flist *fl;
	uint8_t *q, *q0;
	int want_f, want_l, ret = -1;

	nf = sort_keys(ex->feat, ex->nfeat, sizeof(struct ex_feature),
	    offsetof(struct ex_feature, key), offsetof(struct ex_feature, keylen), &fo);
	if (nf == -1)
		return -1;
	nl = ex->seq ? sort_keys(ex->lists, ex->nlists, sizeof(struct ex_flist),
	    offsetof(struct ex_flist, key), offsetof(struct ex_flist, keylen), &lo) : 0;
	if (nl == -1)
		goto out;
	for (i = 0; i < (size_t)nf; i++) {
		ft = &ex->feat[fo[i].idx];
		fs += ex_entry_sizes(&e, ft->keylen,
		    ex_feature_sizes(&e, ft->kind, values_size(ft)));
	}
	for (i = 0; i < (size_t)nl; i++) {
		fl = &ex->lists[lo[i].idx];
		ls += ex_entry_sizes(&e, fl->keylen, flist_size(fl));
	}
	want_f = ex->has_features || nf > 0;
	want_l = ex->seq && (ex->has_lists || nl > 0);
	total = (want_f ? ex_ld_size(fs) : 0) + (want_l ? ex_ld_size(ls) : 0);
	if (total == 0) {
		ret = 0;
		goto out;
	}
	if (rp_buf_reserve(out, total + 3) == -1)	/* pack_list() may write 3 past */
		goto out;
	q = q0 = out->p + out->len;
	if (want_f) {
		q = ex_put_ld(q, 0x0a, fs);
		for (i = 0; i < (size_t)nf; i++) {
			ft = &ex->feat[fo[i].idx];
			ex_entry_sizes(&e, ft->keylen,
			    ex_feature_sizes(&e, ft->kind, values_size(ft)));
			q = ex_entry_head(q, &e, ft->key, ft->keylen, e.feat);
			q = put_feature(q, ft, &e);
		}
	}
	if (want_l) {
		q = ex_put_ld(q, 0x12, ls);
		for (i = 0; i < (size_t)nl; i++) {
			fl = &ex->lists[lo[i].idx];
			vs = flist_size(fl);
			ex_entry_sizes(&e, fl->keylen, vs);
			q = ex_entry_head(q, &e, fl->key, fl->keylen, vs);
			for (j = 0; j < fl->n; j++) {
				q = ex_put_ld(q, 0x0a, ex_feature_sizes(&e,
				    fl->v[j].kind, values_size(&fl->v[j])));
				q = put_feature(q, &fl->v[j], &e);
			}
		}
	}
	out->len += (size_t)(q - q0);
	ret = 0;
out:
	free(fo);
	free(lo);
	return ret;
}

/* Builder */

void
exb_init(struct ex_builder *b)
{
	memset(b, 0, sizeof(*b));
	b->ex.has_features = 1;
}

void
exb_reset(struct ex_builder *b)
{
	b->ex.nfeat = 0;
	b->store.len = 0;
}

void
exb_free(struct ex_builder *b)
{
	if (b == NULL)
		return;
	free(b->ex.feat);
	free(b->off);
	rp_buf_free(&b->store);
	memset(b, 0, sizeof(*b));
}

/* Copy name and data into the store; the feature's pointers are set at encode time. */
static int
exb_add(struct ex_builder *b, const char *name, int kind, const void *v,
    size_t n, size_t size)
{
	struct ex_feature *ft;
	size_t klen = strlen(name), pad;
	size_t *q;

	if (b->ex.nfeat == b->cap) {
		if (grow((void **)&b->ex.feat, &b->cap, sizeof(struct ex_feature)) == -1)
			return -1;
		if ((q = realloc(b->off, b->cap * 2 * sizeof(size_t))) == NULL)
			return -1;
		b->off = q;
	}
	ft = &b->ex.feat[b->ex.nfeat];
	memset(ft, 0, sizeof(*ft));
	ft->kind = kind;
	ft->n = n;
	ft->keylen = klen;
	b->off[2 * b->ex.nfeat] = b->store.len;
	if (rp_buf_append(&b->store, name, klen) == -1)
		return -1;
	pad = (8 - b->store.len % 8) % 8;
	if (rp_buf_reserve(&b->store, pad) == -1)
		return -1;
	memset(b->store.p + b->store.len, 0, pad);
	b->store.len += pad;
	b->off[2 * b->ex.nfeat + 1] = b->store.len;
	if (n > 0 && size > 0 && rp_buf_append(&b->store, v, n * size) == -1)
		return -1;
	b->ex.nfeat++;
	return 0;
}

int
exb_int64(struct ex_builder *b, const char *name, const int64_t *v, size_t n)
{
	return exb_add(b, name, EX_INT64, v, n, sizeof(int64_t));
}

int
exb_float(struct ex_builder *b, const char *name, const float *v, size_t n)
{
	return exb_add(b, name, EX_FLOAT, v, n, sizeof(float));
}

int
exb_bytes(struct ex_builder *b, const char *name, const struct ex_bytes *v,
    size_t n)
{
	size_t i, start;
	struct ex_bytes *copy;

	if (exb_add(b, name, EX_BYTES, NULL, n, 0) == -1)
		return -1;
	/* Spans first (8-aligned), then the bytes; spans are offsets until encode. */
	start = b->store.len;
	if (rp_buf_reserve(&b->store, n * sizeof(struct ex_bytes)) == -1)
		return -1;
	b->store.len += n * sizeof(struct ex_bytes);
	for (i = 0; i < n; i++) {
		size_t at = b->store.len;

		if (rp_buf_append(&b->store, v[i].p, v[i].n) == -1)
			return -1;
		copy = (struct ex_bytes *)(void *)(b->store.p + start) + i;
		copy->p = (const uint8_t *)(uintptr_t)at;
		copy->n = v[i].n;
	}
	{
		size_t pad = (8 - b->store.len % 8) % 8;

		if (rp_buf_reserve(&b->store, pad) == -1)
			return -1;
		memset(b->store.p + b->store.len, 0, pad);
		b->store.len += pad;
	}
	return 0;
}

int
exb_encode(struct ex_builder *b, struct buf *out)
{
	struct ex_feature *ft;
	struct ex_bytes *bs;
	size_t i, j;
	uint8_t *data;
	int ret;

	for (i = 0; i < b->ex.nfeat; i++) {
		ft = &b->ex.feat[i];
		ft->key = b->store.p + b->off[2 * i];
		data = b->store.p + b->off[2 * i + 1];
		switch (ft->kind) {
		case EX_INT64: ft->i64 = (const int64_t *)(void *)data; break;
		case EX_FLOAT: ft->f32 = (const float *)(void *)data; break;
		case EX_BYTES:
			bs = (struct ex_bytes *)(void *)data;
			for (j = 0; j < ft->n; j++)
				bs[j].p = b->store.p + (uintptr_t)bs[j].p;
			ft->b = bs;
			break;
		default: break;
		}
	}
	ret = ex_encode(&b->ex, out);
	/* Turn the byte spans back into offsets: the store may move. */
	for (i = 0; i < b->ex.nfeat; i++) {
		ft = &b->ex.feat[i];
		if (ft->kind == EX_BYTES)
			for (j = 0; j < ft->n; j++)
				((struct ex_bytes *)(uintptr_t)ft->b)[j].p =
				    (const uint8_t *)(uintptr_t)(ft->b[j].p - b->store.p);
	}
	return ret;
}

/*
 * Decode the int64 values of the Feature spread over the value fields
 * of one map entry (merged as protobuf merges), appending to *dst.
 * Returns the count, or -1 when the Feature's final kind is not int64.
 */
static long
entry_int64(const uint8_t *e, size_t en, int64_t **dst, size_t *cap)
{
	struct pools P;
	const uint8_t *p = e, *end = e + en, *q, *qend, *l, *lend;
	struct span v, fv, lv;
	uint64_t f, ff, lf, num;
	int wt, fwt, lwt, kind = EX_NONE;
	size_t n = 0;
	int64_t *d;
	long k;

	memset(&P, 0, sizeof(P));
	while (next_field(&P, "", e, &p, end, &f, &wt, &v, &num) == 1) {
		if (f != 2 || wt != 2)
			continue;
		q = v.p;
		qend = v.p + v.n;
		while (next_field(&P, "", e, &q, qend, &ff, &fwt, &fv, &num) == 1) {
			if (fwt != 2 || ff < 1 || ff > 3)
				continue;
			if ((int)ff != kind) {
				kind = (int)ff;
				n = 0;
			}
			if (kind != 3)
				continue;
			l = fv.p;
			lend = fv.p + fv.n;
			while (next_field(&P, "", e, &l, lend, &lf, &lwt, &lv, &num) == 1) {
				if (lf != 1 || (lwt != 0 && lwt != 2))
					continue;
				if (n + (lwt == 0 ? 1 : lv.n) > *cap) {
					size_t nc = (n + (lwt == 0 ? 1 : lv.n)) * 2;

					if ((d = realloc(*dst, nc * sizeof(int64_t))) == NULL)
						return -3;
					*dst = d;
					*cap = nc;
				}
				if (lwt == 0) {
					(*dst)[n++] = (int64_t)num;
					continue;
				}
				if ((k = packed_varints(lv.p, lv.n, *dst + n, NULL,
				    NULL)) == -1)
					return -2;	/* ex_check() said no */
				n += (size_t)k;
			}
		}
	}
	return kind == 3 ? (long)n : -1;
}

/*
 * Store value i of a list: as an int64 in d64, or, when d16 is set, as
 * a little-endian 16-bit word in d16 with the value ORed into *over (a
 * bit above the 16th then says it did not fit).  With d64, a value of
 * 2^28 or more (of a varint longer than four bytes: where ex_varint4()
 * made the value, the compiler knows it is less) is ORed into *over
 * when over is set.
 */
static inline __attribute__((always_inline)) void
put_value(int64_t *d64, uint16_t *d16, uint64_t *over, size_t i, uint64_t x)
{
	if (d16 != NULL) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		d16[i] = __builtin_bswap16((uint16_t)x);
#else
		d16[i] = (uint16_t)x;
#endif
		*over |= x;
	} else {
		d64[i] = (int64_t)x;
		if (over != NULL && x >> 28 != 0)
			*over |= x;
	}
}

/*
 * Decode the varints of the little-endian word w that end at the marks
 * m (the cleared high bits, at least one), storing them at *cnt on (see
 * put_value()).  Returns the bits consumed, up to the last end.
 */
static inline __attribute__((always_inline)) unsigned
word_varints(uint64_t w, uint64_t m, int64_t *d64, uint16_t *d16,
    uint64_t *over, size_t *cnt)
{
	unsigned from = 0, t;
	uint64_t s, x;

	do {
		t = (unsigned)__builtin_ctzll(m) + 1;	/* bits up to the end */
		s = (w & ((2ull << (t - 1)) - 1)) >> from;
		x = ex_varint4(s);
		if (t - from > 32)
			x |= ((s >> 4) & 0x7f0000000ull) |
			    ((s >> 5) & 0x3f800000000ull) |
			    ((s >> 6) & 0x1fc0000000000ull) |
			    ((s >> 7) & 0xfe000000000000ull);
		put_value(d64, d16, over, (*cnt)++, x);
		from = t;
		m &= m - 1;
	} while (m != 0);
	return from;
}

/*
 * Where the values of the int64 feature 'name' lie in a record of the
 * canonical form (see ex_int64_canonical()): returns 1 with the packed
 * chunk in *c, *clen; 0 for an empty list; -1 for any other record.
 */
static inline __attribute__((always_inline)) int
canon_list(const uint8_t *p, size_t n, const char *name, size_t namelen,
    const uint8_t **c, size_t *clen)
{
	const uint8_t *end, *fs, *e, *eend, *k, *v, *l, *lend, *q;
	size_t flen, elen, klen, vlen, llen;

	if (n == 0)
		return -1;	/* no features at all: not this form */
	end = p + n;
	/*
	 * A record of less than 130 bytes has one-byte lengths, so its
	 * bytes up to the packed ids are known from n and the name alone:
	 * the six before the name and the six after it are compared with
	 * words made here, the name with the caller's.  Any other record
	 * (one whose list is empty, say) takes the general way.
	 */
	if (n < 130 && n >= namelen + 12) {
		uint64_t head, tail, want, diff;
		size_t h = namelen + 12;

		memcpy(&head, p, 8);
		memcpy(&tail, p + namelen + 4, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		head = __builtin_bswap64(head);
		tail = __builtin_bswap64(tail);
#endif
		want = 0x0a | (uint64_t)(n - 2) << 8 | 0x0aull << 16 |
		    (uint64_t)(n - 4) << 24 | 0x0aull << 32 |
		    (uint64_t)namelen << 40;
		diff = (head & 0xffffffffffffull) ^ want;
		want = 0x12 | (uint64_t)(n - namelen - 8) << 8 | 0x1aull << 16 |
		    (uint64_t)(n - namelen - 10) << 24 | 0x0aull << 32 |
		    (uint64_t)(n - h) << 40;
		diff |= (tail >> 16) ^ want;
		if (diff == 0 && ex_same_key(p + 6, name, namelen)) {
			*c = p + h;
			*clen = n - h;
			return 1;
		}
	}
	/* One Features message holding one entry, and nothing else. */
	if (ex_get_ld(&p, end, 0x0a, &fs, &flen) == -1 || p != end ||
	    ex_get_ld(&fs, end, 0x0a, &e, &elen) == -1 || fs != end)
		return -1;
	eend = e + elen;
	if (ex_get_ld(&e, eend, 0x0a, &k, &klen) == -1 ||
	    ex_get_ld(&e, eend, 0x12, &v, &vlen) == -1 || e != eend ||
	    klen != namelen || (namelen && memcmp(k, name, namelen) != 0))
		return -1;
	/* A Feature holding only an Int64List of at most one packed chunk. */
	q = v;
	if (ex_get_ld(&q, v + vlen, 0x1a, &l, &llen) == -1 || q != v + vlen)
		return -1;
	if (llen == 0)
		return 0;
	lend = l + llen;
	if (ex_get_ld(&l, lend, 0x0a, c, clen) == -1 || l != lend)
		return -1;
	return 1;
}

/*
 * The packed varints c[0..clen), stored by put_value().  Returns their
 * number, or -1 when the last one runs past the end.
 *
 * Eight bytes at a time: a byte without its high bit ends a varint,
 * and every varint that ends in the word is decoded from it, its bytes
 * cut out by the ends before and after it and their 7-bit groups
 * packed (up to four bytes, ids below 2^28, the short way).  The ends
 * are found one after another by clearing the lowest mark, so that the
 * values do not wait on each other's loads.  A word with no end holds
 * the start of a nine- or ten-byte varint.
 */
static inline __attribute__((always_inline)) long
packed_varints(const uint8_t *c, size_t clen, int64_t *d64, uint16_t *d16,
    uint64_t *over)
{
	const uint8_t *q = c, *qend = clen >= 8 ? c + clen - 7 : c;
	size_t cnt = 0;
	uint64_t x;

	while (q < qend) {
		uint64_t w, m, m2;
		unsigned from, t1, t2;

		memcpy(&w, q, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		m = ~w & 0x8080808080808080ull;
		/*
		 * Most often the word starts with two varints of at most
		 * four bytes each: take just those two, with no branch on
		 * how many more end in it, and step on by their length
		 * (which the next load waits for, not their values).
		 */
		m2 = m & (m - 1);
		if (m2 != 0) {
			t1 = (unsigned)__builtin_ctzll(m) + 1;
			t2 = (unsigned)__builtin_ctzll(m2) + 1;
			if (t1 <= 32 && t2 - t1 <= 32) {
				put_value(d64, d16, over, cnt,
				    ex_varint4(w & ((1ull << t1) - 1)));
				put_value(d64, d16, over, cnt + 1,
				    ex_varint4((w >> t1) &
				    ((1ull << (t2 - t1)) - 1)));
				cnt += 2;
				q += t2 >> 3;
				continue;
			}
		}
		if (m == 0) {
			if (ex_get_varint(&q, c + clen, &x) == -1)
				return -1;
			put_value(d64, d16, over, cnt++, x);
			continue;
		}
		from = word_varints(w, m, d64, d16, over, &cnt);
		q += from >> 3;
	}
	/*
	 * The last bytes, zero-padded in a word: from a load that ends with
	 * the list when it is long enough, else byte by byte.  The last of
	 * them must end a varint.
	 */
	if (q < c + clen) {
		size_t rest = (size_t)(c + clen - q);
		uint64_t w = 0, m;

		if (clen >= 8) {
			memcpy(&w, c + clen - 8, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			w = __builtin_bswap64(w);
#endif
			w >>= 8 * (8 - rest);
		} else
			for (size_t j = 0; j < rest; j++)
				w |= (uint64_t)q[j] << 8 * j;
		if (w >> (8 * rest - 1) & 1)
			return -1;	/* the last varint runs past the end */
		m = ~w & 0x8080808080808080ull & ((1ull << 8 * rest) - 1);
		(void)word_varints(w, m, d64, d16, over, &cnt);
	}
	return (long)cnt;
}

long
ex_packed_int64s(const uint8_t *c, size_t n, int64_t *dst, uint64_t *over)
{
	if (over == NULL)
		return packed_varints(c, n, dst, NULL, NULL);
	*over = 0;
	return packed_varints(c, n, dst, NULL, over);
}

long
ex_int64_canonical(const uint8_t *p, size_t n, const char *name,
    size_t namelen, int64_t **dst, size_t *cap)
{
	const uint8_t *c;
	size_t clen;
	int64_t *d;
	int rc;

	if ((rc = canon_list(p, n, name, namelen, &c, &clen)) <= 0)
		return rc;
	if (clen > *cap) {
		if ((d = realloc(*dst, clen * sizeof(*d))) == NULL)
			return -1;
		*dst = d;
		*cap = clen;
	}
	return packed_varints(c, clen, *dst, NULL, NULL);
}

long
ex_uint16_canonical(const uint8_t *p, size_t n, const char *name,
    size_t namelen, uint16_t *out)
{
	const uint8_t *c;
	size_t clen;
	uint64_t over = 0;
	long cnt;
	int rc;

	if ((rc = canon_list(p, n, name, namelen, &c, &clen)) <= 0)
		return rc;
	if ((cnt = packed_varints(c, clen, NULL, out, &over)) == -1 ||
	    over > UINT16_MAX)
		return -1;
	return cnt;
}

int
ex_check_value(const uint8_t *p, size_t n, int list)
{
	struct pools P;
	struct span v = { p, n };

	P.err[0] = '\0';	/* the checks write only their message */
	return list ? check_list(&P, p, v) : check_feature(&P, p, v);
}

/* The body of the one list of kind tag (a Feature field) in f, or -1. */
static long
canon_chunk(struct ex_span f, uint8_t tag, const uint8_t **c)
{
	const uint8_t *q = f.p, *end = f.p + f.n, *l;
	size_t ll, cl;

	if (ex_get_ld(&q, end, tag, &l, &ll) == -1 || q != end)
		return -1;
	q = l;
	end = l + ll;
	if (ex_get_ld(&q, end, 0x0a, c, &cl) == -1 || q != end)
		return -1;
	return (long)cl;
}

long
ex_canonical_floats(struct ex_span f, const uint8_t **vals)
{
	long cl = canon_chunk(f, 0x12, vals);

	return cl < 0 || cl % 4 != 0 ? -1 : cl / 4;
}

long
ex_canonical_int64s(struct ex_span f, int64_t *dst, size_t max)
{
	const uint8_t *c;
	long cl = canon_chunk(f, 0x1a, &c);

	/* a varint takes a byte at least: max bytes hold at most max values */
	if (cl < 0 || (size_t)cl > max)
		return -1;
	return packed_varints(c, (size_t)cl, dst, NULL, NULL);
}

long
ex_canonical_float_steps(struct ex_span fl, size_t w, size_t *stride,
    size_t *skip)
{
	uint8_t h[16], *q = h;
	size_t l3 = 4 * w, l2, l1, hn, st, steps;

	if (w == 0 || w > (SIZE_MAX >> 4))
		return -1;
	l2 = 1 + ex_varint_size(l3) + l3;
	l1 = 1 + ex_varint_size(l2) + l2;
	/* the bytes before a step's values: Feature, FloatList, value */
	*q++ = 0x0a;
	q = ex_put_varint(q, l1);
	*q++ = 0x12;
	q = ex_put_varint(q, l2);
	*q++ = 0x0a;
	q = ex_put_varint(q, l3);
	hn = (size_t)(q - h);
	st = hn + l3;
	if (st - hn != l3 || fl.n % st != 0)
		return -1;
	steps = fl.n / st;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (hn <= 8) {	/* a word a step (st > 8: the word is in the step) */
		uint64_t want = 0, x, mask = hn == 8 ? ~(uint64_t)0 :
		    ((uint64_t)1 << 8 * hn) - 1;

		memcpy(&want, h, hn);
		for (size_t s = 0; s < steps; s++) {
			memcpy(&x, fl.p + s * st, 8);
			if ((x & mask) != want)
				return -1;
		}
		steps = 0;	/* checked */
	}
#endif
	for (size_t s = 0; s < steps; s++)
		if (memcmp(fl.p + s * st, h, hn) != 0)
			return -1;
	steps = fl.n / st;
	*stride = st;
	*skip = hn;
	return (long)steps;
}

/*
 * Find the map entry of the int64 feature 'name' in the Example at p
 * (the last one: last wins), after checking that the whole Example
 * decodes.  Returns 0 with *e, *elen set, -1 when there is no entry
 * of that name, -2 on malformed input.
 */
static int
find_entry(const uint8_t *p, size_t n, const char *name,
    const uint8_t **e_out, size_t *elen_out)
{
	struct pools P;
	struct example tmp;
	const uint8_t *q, *end, *r, *rend, *e, *eend;
	const uint8_t *last = NULL;
	struct span v, ev, kv;
	uint64_t f, ef, num;
	size_t lastlen = 0, nlen = strlen(name);
	int wt, ewt, match;

	if (n == 0)
		p = (const uint8_t *)"";
	q = p;
	end = p + n;
	/* Everything must decode, as ex_decode() decides. */
	memset(&P, 0, sizeof(P));
	memset(&tmp, 0, sizeof(tmp));
	tmp.priv = &P;
	if (ex_check(&tmp, p, n, EX_TYPE_EXAMPLE) == -1)
		return -2;
	while (next_field(&P, "", p, &q, end, &f, &wt, &v, &num) == 1) {
		if (f != 1 || wt != 2)
			continue;
		r = v.p;
		rend = v.p + v.n;
		while (next_field(&P, "", p, &r, rend, &ef, &ewt, &ev, &num) == 1) {
			if (ef != 1 || ewt != 2)
				continue;
			e = ev.p;
			eend = ev.p + ev.n;
			match = nlen == 0;	/* a missing key is "" */
			while (next_field(&P, "", p, &e, eend, &f, &wt, &kv, &num) == 1)
				if (f == 1 && wt == 2)
					match = kv.n == nlen &&
					    (nlen == 0 || memcmp(kv.p, name, nlen) == 0);
			if (match) {
				last = ev.p;
				lastlen = ev.n;
			}
		}
	}
	if (last == NULL)
		return -1;
	*e_out = last;
	*elen_out = lastlen;
	return 0;
}

long
ex_int64_values(const uint8_t *p, size_t n, const char *name, int64_t **dst,
    size_t *cap)
{
	const uint8_t *e;
	size_t elen;
	long ret;
	int rc;

	if ((ret = ex_int64_canonical(p, n, name, strlen(name), dst, cap)) >= 0)
		return ret;
	if ((rc = find_entry(p, n, name, &e, &elen)) < 0)
		return rc;
	return entry_int64(e, elen, dst, cap);
}

/* The values of an Int64List's body: a count, from bytes already checked. */
static uint64_t
count_list(const uint8_t *l, const uint8_t *lend)
{
	struct pools P;
	struct span lv;
	uint64_t lf, num, k = 0;
	int lwt;
	size_t i;

	while (next_field(&P, "", l, &l, lend, &lf, &lwt, &lv, &num) == 1) {
		if (lf != 1)
			continue;
		if (lwt == 0)
			k++;
		else if (lwt == 2)
			for (i = 0; i < lv.n; i++)
				k += lv.p[i] < 0x80;
	}
	return k;
}

/* The values of a BytesList's body: a count, from bytes already checked. */
static uint64_t
count_bytes_list(const uint8_t *l, const uint8_t *lend)
{
	struct pools P;
	struct span lv;
	uint64_t lf, num, k = 0;
	int lwt;

	while (next_field(&P, "", l, &l, lend, &lf, &lwt, &lv, &num) == 1)
		k += lf == 1 && lwt == 2;
	return k;
}

int
ex_int64_open(struct ex_int64_iter *it, const uint8_t *p, size_t n,
    const char *name)
{
	struct pools P;
	const uint8_t *e, *end, *q, *qend, *at;
	struct span v, fv;
	uint64_t f, ff, num;
	size_t elen;
	int rc, wt, fwt, kind = EX_NONE;

	memset(it, 0, sizeof(*it));
	if ((rc = find_entry(p, n, name, &e, &elen)) < 0)
		return rc;
	/*
	 * As entry_int64() merges them: the values are those of the
	 * int64_list fields from the last change of kind on.
	 */
	end = e + elen;
	while (next_field(&P, "", e, &e, end, &f, &wt, &v, &num) == 1) {
		if (f != 2 || wt != 2)
			continue;
		q = v.p;
		qend = v.p + v.n;
		for (at = q; next_field(&P, "", q, &q, qend, &ff, &fwt, &fv,
		    &num) == 1; at = q) {
			if (fwt != 2 || ff < 1 || ff > 3)
				continue;
			if ((int)ff != kind) {
				kind = (int)ff;
				it->n = 0;
				if (kind == 3) {
					it->p[0] = e;
					it->end[0] = end;
					it->p[1] = at;
					it->end[1] = qend;
				}
			}
			if (kind == 3)
				it->n += count_list(fv.p, fv.p + fv.n);
		}
	}
	if (kind != 3) {
		memset(it, 0, sizeof(*it));
		return -1;
	}
	it->left = it->n;
	return 0;
}

size_t
ex_int64_next(struct ex_int64_iter *it, int64_t *dst, size_t max)
{
	struct pools P;
	struct span v;
	const uint8_t *c;
	uint64_t f, num, x = 0;
	size_t k = 0;
	int wt;

	while (k < max) {
		if (it->p[3] < it->end[3]) {
			/*
			 * A packed chunk, value by value: it may hold more
			 * than max, and the next call goes on inside it.
			 */
			c = it->p[3];
			while (k < max && c < it->end[3]) {
				if (*c < 0x80)
					x = *c++;
				else
					(void)ex_get_varint(&c, it->end[3], &x);
				dst[k++] = (int64_t)x;
			}
			it->p[3] = c;
			continue;
		}
		if (it->p[2] < it->end[2]) {
			/* An Int64List: packed chunks and single values. */
			if (next_field(&P, "", it->p[2], &it->p[2], it->end[2],
			    &f, &wt, &v, &num) != 1 || f != 1)
				continue;
			if (wt == 0)
				dst[k++] = (int64_t)num;
			else if (wt == 2) {
				it->p[3] = v.p;
				it->end[3] = v.p + v.n;
			}
			continue;
		}
		if (it->p[1] < it->end[1]) {
			/* A Feature: its int64_list fields. */
			if (next_field(&P, "", it->p[1], &it->p[1], it->end[1],
			    &f, &wt, &v, &num) == 1 && f == 3 && wt == 2) {
				it->p[2] = v.p;
				it->end[2] = v.p + v.n;
			}
			continue;
		}
		if (it->sp != NULL) {
			/* The Features of a lazy feature, one after another. */
			const struct span *sp = it->sp;

			if (it->nsp == 0)
				break;
			it->p[1] = sp->p;
			it->end[1] = sp->p + sp->n;
			it->sp = sp + 1;
			it->nsp--;
			continue;
		}
		if (it->p[0] < it->end[0]) {
			/* The entry: its value fields, merged. */
			if (next_field(&P, "", it->p[0], &it->p[0], it->end[0],
			    &f, &wt, &v, &num) == 1 && f == 2 && wt == 2) {
				it->p[1] = v.p;
				it->end[1] = v.p + v.n;
			}
			continue;
		}
		break;
	}
	it->left -= k;
	return k;
}

/*
 * Where the last list of kind 'want' (1 bytes, 3 int64) of a lazy
 * feature starts, as lazy_feature() counted (from the last change of
 * kind on): its Feature entry and the end of its span in *p, *end, and
 * the spans after it in *rest, *nrest.  Without one, *p stays as it is
 * and *rest is past the last span.
 */
static void
lazy_list_start(const struct ex_feature *f, int want, const uint8_t **p,
    const uint8_t **end, const void **rest, size_t *nrest)
{
	struct pools P;
	const struct span *sp = f->lazy;
	const uint8_t *q, *qend, *at;
	struct span fv;
	uint64_t ff, num;
	size_t i;
	int fwt, kind = EX_NONE;

	*rest = sp + f->nlazy;
	*nrest = 0;
	for (i = 0; i < f->nlazy; i++) {
		q = sp[i].p;
		qend = q + sp[i].n;
		for (at = q; next_field(&P, "", q, &q, qend, &ff, &fwt, &fv,
		    &num) == 1; at = q) {
			if (fwt != 2 || ff < 1 || ff > 3 || (int)ff == kind)
				continue;
			kind = (int)ff;
			if (kind == want) {
				*p = at;
				*end = qend;
				*rest = sp + i + 1;
				*nrest = f->nlazy - i - 1;
			}
		}
	}
}

void
ex_int64_open_feature(struct ex_int64_iter *it, const struct ex_feature *f)
{
	memset(it, 0, sizeof(*it));
	lazy_list_start(f, 3, &it->p[1], &it->end[1], &it->sp, &it->nsp);
	it->n = it->left = f->n;
}

void
ex_bytes_open_feature(struct ex_bytes_iter *it, const struct ex_feature *f)
{
	memset(it, 0, sizeof(*it));
	lazy_list_start(f, 1, &it->p[0], &it->end[0], &it->sp, &it->nsp);
	it->n = it->left = f->n;
}

size_t
ex_bytes_next(struct ex_bytes_iter *it, struct ex_bytes *dst, size_t max)
{
	struct pools P;
	struct span v;
	uint64_t f, num;
	size_t k = 0;
	int wt;

	while (k < max) {
		if (it->p[1] < it->end[1]) {
			/* A BytesList: its values. */
			if (next_field(&P, "", it->p[1], &it->p[1], it->end[1],
			    &f, &wt, &v, &num) == 1 && f == 1 && wt == 2) {
				dst[k].p = v.p;
				dst[k++].n = v.n;
			}
			continue;
		}
		if (it->p[0] < it->end[0]) {
			/* A Feature: its bytes_list fields. */
			if (next_field(&P, "", it->p[0], &it->p[0], it->end[0],
			    &f, &wt, &v, &num) == 1 && f == 1 && wt == 2) {
				it->p[1] = v.p;
				it->end[1] = v.p + v.n;
			}
			continue;
		}
		if (it->nsp > 0) {
			/* The next Features of the lazy feature. */
			const struct span *sp = it->sp;

			it->p[0] = sp->p;
			it->end[0] = sp->p + sp->n;
			it->sp = sp + 1;
			it->nsp--;
			continue;
		}
		break;
	}
	it->left -= k;
	return k;
}

/* Rows of int64 lists, the fast path. */

struct ex_list {
	char		*key;		/* a copy */
	size_t		 klen;
	size_t		 len;		/* values */
	size_t		 off;		/* the packed values in pk */
	struct ex_entry	 sz;		/* its sizes */
};

struct ex_lists {
	size_t		 n, cap;	/* the lists of the last row */
	struct ex_list	*l;
	size_t		*ord;		/* their order by key */
	struct buf	 pk;		/* the packed lists, one after another */
	size_t		 fsz, total;	/* Features, record */
};

struct ex_lists *
ex_lists_new(void)
{
	return calloc(1, sizeof(struct ex_lists));
}

static void
lists_forget(struct ex_lists *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->l[i].key);
	e->n = 0;
}

void
ex_lists_free(struct ex_lists *e)
{
	if (e == NULL)
		return;
	lists_forget(e);
	free(e->l);
	free(e->ord);
	rp_buf_free(&e->pk);
	free(e);
}

/* Take the names of a row unlike the last one's, and sort them. */
static int
lists_names(struct ex_lists *e, size_t n, const char *const *names)
{
	struct ex_list *l;
	size_t i, j, t, *o;

	lists_forget(e);
	if (n > e->cap) {
		if (n > SIZE_MAX / sizeof(*l) ||
		    (l = realloc(e->l, n * sizeof(*l))) == NULL)
			return -1;
		e->l = l;
		if ((o = realloc(e->ord, n * sizeof(*o))) == NULL)
			return -1;
		e->ord = o;
		e->cap = n;
	}
	for (i = 0; i < n; i++) {
		if ((e->l[i].key = strdup(names[i])) == NULL) {
			e->n = i;
			lists_forget(e);
			return -1;
		}
		e->l[i].klen = strlen(names[i]);
		e->ord[i] = i;
		e->n = i + 1;
	}
	for (i = 1; i < n; i++)		/* few keys: insertion sort */
		for (j = i; j > 0 && strcmp(e->l[e->ord[j - 1]].key,
		    e->l[e->ord[j]].key) > 0; j--) {
			t = e->ord[j];
			e->ord[j] = e->ord[j - 1];
			e->ord[j - 1] = t;
		}
	return 0;
}

size_t
ex_encode_int64_lists(struct ex_lists *e, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	struct ex_list *l;
	size_t i, need = 0, u;
	uint8_t *q;
	int same;

	/* Callers pass the same names row after row: sort them once. */
	same = n == e->n;
	for (i = 0; same && i < n; i++)
		same = strcmp(names[i], e->l[i].key) == 0;
	if (!same && lists_names(e, n, names) == -1) {
		errno = ENOMEM;
		return SIZE_MAX;
	}
	for (i = 0; i < n; i++) {
		u = used && used[i] < lens[i] ? used[i] : lens[i];
		if (u > (SIZE_MAX - 8 - need) / 10 ||
		    lens[i] - u > SIZE_MAX - 8 - need - 10 * u) {
			errno = ENOMEM;
			return SIZE_MAX;
		}
		need += 10 * u + (lens[i] - u);
	}
	e->pk.len = 0;
	if (rp_buf_reserve(&e->pk, need + 8) == -1)
		return SIZE_MAX;
	q = e->pk.p;
	e->fsz = 0;
	for (i = 0; i < n; i++) {
		l = &e->l[i];
		u = used && used[i] < lens[i] ? used[i] : lens[i];
		l->off = (size_t)(q - e->pk.p);
		q = pack_list(q, vals[i], u, lens[i]);
		l->len = lens[i];
		e->fsz += ex_entry_sizes(&l->sz, l->klen, ex_feature_sizes(&l->sz,
		    EX_INT64, (size_t)(q - e->pk.p) - l->off));
	}
	e->total = ex_ld_size(e->fsz);
	return e->total;
}

void
ex_lists_put(const struct ex_lists *e, uint8_t *q)
{
	const struct ex_list *l;
	size_t t;

	q = ex_put_ld(q, 0x0a, e->fsz);
	for (t = 0; t < e->n; t++) {
		l = &e->l[e->ord[t]];
		q = ex_entry_head(q, &l->sz, l->key, l->klen, l->sz.feat);
		q = ex_feature_head(q, &l->sz, EX_INT64);
		memcpy(q, e->pk.p + l->off, l->sz.vbytes);
		q += l->sz.vbytes;
	}
}
