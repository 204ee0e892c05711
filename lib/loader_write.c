/*
 * A loader's batch written out: as a JSON line (ld_write_json) or as
 * one Example (ld_write_example, ld_write_example_iov).  See loader.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "example.h"
#include "exjson.h"
#include "loader.h"
#include "loader_int.h"

/* The values of example b of output tensor i (of dtype dt). */
static const void *
vals_of(const struct loader *l, size_t i, size_t b, enum mf_dtype dt)
{
	const struct ld_out *o = &l->out[i];

	return o->direct ? l->batch[b]->tv[i].v : cat(o->v, b * o->per, dt);
}

/* The cells of example b of output tensor i, not float32. */
static const union ld_cell *
cells_of(const struct loader *l, size_t i, size_t b)
{
	return vals_of(l, i, b, MF_INT64);
}

/*
 * A name, as the one JSON string writer writes it; a name that is not
 * UTF-8 (a configuration that says so is refused first) cannot occur.
 */
static int
json_string_out(struct buf *b, const uint8_t *p, size_t n)
{
	return exjson_put_string(b, p, n);
}

/*
 * The values of a string tensor, by the rule of every JSON the suite
 * writes (recpipe(5)): as JSON strings when every one is valid UTF-8,
 * else every one as its padded base64, the tensor saying
 * "encoding":"base64" (as tfr-cat types a bytes list).  Returns 1 for
 * base64.
 */
static int
strings_base64(const struct loader *l, size_t i, size_t nvals)
{
	const struct ld_out *o = &l->out[i];
	enum mf_dtype dt = l->batch[0]->tv[i].dtype;

	for (size_t k = 0; k < nvals; k++) {
		union ld_cell cv = get_cell(vals_of(l, i, k / (o->per ? o->per : 1),
		    dt), k % (o->per ? o->per : 1), dt);

		if (!exjson_utf8_valid(cv.s->p, cv.s->n))
			return 1;
	}
	return 0;
}

static int
put_i64(struct buf *b, int64_t v)
{
	char s[24];

	snprintf(s, sizeof s, "%" PRId64, v);
	return rp_buf_puts(b, s);
}

int
ld_write_json(struct loader *l, struct buf *b)
{
	const struct ld_config *cf = l->cf;
	char s[40];

	if (rp_buf_putc(b, '{') == -1)
		return -1;
	for (size_t i = 0; i < cf->nt; i++) {
		const struct ld_out *o = &l->out[i];
		enum mf_dtype dt = l->batch[0]->tv[i].dtype;
		int b64;

		ld_out_ready(l, i);
		if ((i && rp_buf_putc(b, ',') == -1) ||
		    json_string_out(b, (const uint8_t *)cf->t[i].name,
		    strlen(cf->t[i].name)) == -1 ||
		    rp_buf_puts(b, ":{\"dtype\":\"") == -1 ||
		    rp_buf_puts(b, mf_dtype_name(dt)) == -1 ||
		    rp_buf_puts(b, "\",\"shape\":[") == -1)
			return -1;
		for (int d = 0; d < o->rank; d++)
			if ((d && rp_buf_putc(b, ',') == -1) || put_i64(b, o->shape[d]) == -1)
				return -1;
		b64 = dt == MF_STRING && strings_base64(l, i, o->n);
		if ((b64 && rp_buf_puts(b, "],\"encoding\":\"base64") == -1) ||
		    rp_buf_puts(b, b64 ? "\",\"values\":[" : "],\"values\":[") == -1 ||
		    rp_buf_reserve(b, o->n * 12) == -1)
			return -1;
		for (size_t k = 0; k < o->n; k++) {
			union ld_cell cv = get_cell(vals_of(l, i, k / (o->per ?
			    o->per : 1), dt), k % (o->per ? o->per : 1), dt);
			const union ld_cell *c = &cv;
			int r;

			if (k && rp_buf_putc(b, ',') == -1)
				return -1;
			switch (dt) {
			case MF_STRING:
				r = b64 ? exjson_write_raw(c->s->p, c->s->n, b) :
				    exjson_put_string(b, c->s->p, c->s->n);
				break;
			case MF_BOOL:
				r = rp_buf_puts(b, c->i ? "true" : "false");
				break;
			case MF_UINT64:
				snprintf(s, sizeof s, "%" PRIu64, (uint64_t)c->i);
				r = rp_buf_puts(b, s);
				break;
			case MF_FLOAT16:
			case MF_FLOAT32:
			case MF_FLOAT64:
				if (!isfinite(c->f))
					r = rp_buf_puts(b, "null");
				else {
					snprintf(s, sizeof s, dt == MF_FLOAT64 ?
					    "%.17g" : "%.9g", c->f);
					r = rp_buf_puts(b, s);
				}
				break;
			default:
				r = put_i64(b, c->i);
				break;
			}
			if (r == -1)
				return -1;
		}
		if (rp_buf_putc(b, ']') == -1)
			return -1;
		if (o->bnd) {
			if (rp_buf_puts(b, ",\"boundaries\":[") == -1)
				return -1;
			for (size_t e = 0; e < (size_t)o->shape[0]; e++) {
				if ((e && rp_buf_putc(b, ',') == -1) || rp_buf_putc(b, '[') == -1)
					return -1;
				for (size_t k = 0; k < o->bw &&
				    o->bnd[e * o->bw + k] >= 0; k++)
					if ((k && rp_buf_putc(b, ',') == -1) ||
					    put_i64(b, o->bnd[e * o->bw + k]) == -1)
						return -1;
				if (rp_buf_putc(b, ']') == -1)
					return -1;
			}
			if (rp_buf_putc(b, ']') == -1)
				return -1;
		}
		if (rp_buf_putc(b, '}') == -1)
			return -1;
	}
	return rp_buf_puts(b, "}\n");
}

/* One feature of the Example a batch becomes. */
struct xfeat {
	const char	*key;
	int		 kind;		/* EX_BYTES, EX_FLOAT, EX_INT64 */
	size_t		 tensor;
	int		 what;		/* 0 values, 1 shape, 2 boundaries, 3 their shape */
	struct ex_entry	 sz;		/* the sizes of its entry */
};

static int
cmp_xfeat(const void *a, const void *b)
{
	return strcmp(((const struct xfeat *)a)->key, ((const struct xfeat *)b)->key);
}

/* The int64 values of feature x: n of them, the k-th by xint(). */
static int64_t
xint(const struct loader *l, const struct xfeat *x, size_t k)
{
	const struct ld_out *o = &l->out[x->tensor];

	switch (x->what) {
	case 0:
		return cells_of(l, x->tensor, k / o->per)[k % o->per].i;
	case 1:
		return o->shape[k];
	case 2:
		return o->bnd[k];
	default:
		return k == 0 ? o->shape[0] : (int64_t)o->bw;
	}
}

static size_t
xcount(const struct loader *l, const struct xfeat *x)
{
	const struct ld_out *o = &l->out[x->tensor];

	switch (x->what) {
	case 0:		return o->n;
	case 1:		return (size_t)o->rank;
	case 2:		return (size_t)o->shape[0] * o->bw;
	default:	return 2;
	}
}

/* n double cells as little-endian float32 at q */
static void
narrow(uint8_t *restrict q, const union ld_cell *restrict c, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {	/* four at a time: one vector */
		float f[4] = { (float)c[i].f, (float)c[i + 1].f,
		    (float)c[i + 2].f, (float)c[i + 3].f };

		memcpy(q + 4 * i, f, 16);
	}
	for (; i < n; i++) {
		float f = (float)c[i].f;

		memcpy(q + 4 * i, &f, 4);
	}
#else
	for (size_t i = 0; i < n; i++, q += 4) {
		float f = (float)c[i].f;
		uint32_t u;

		memcpy(&u, &f, 4);
		rp_put_le32(q, u);
	}
#endif
}

/* n floats as little-endian float32 at q */
static void
put_f32(uint8_t *restrict q, const float *restrict f, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n > 0)
		memcpy(q, f, 4 * n);
#else
	for (size_t i = 0; i < n; i++, q += 4) {
		uint32_t u;

		memcpy(&u, &f[i], 4);
		rp_put_le32(q, u);
	}
#endif
}

/*
 * A piece of the gathered output, and its CRC joined to the pieces'
 * (crc: the piece's own, when has); -1 on ENOMEM.
 */
static int
piece(struct loader *l, const void *p, size_t n, int has, uint32_t crc)
{
	if (n == 0)
		return 0;
	if (has) {
		size_t k = (uint32_t)(n * 0x9e3779b1u) >> 24;	/* a hash */

		if (l->zop[k].len != n) {
			l->zop[k].len = n;
			l->zop[k].op = crc32c_zeros(n);
		}
		l->crc = crc32c_combine_op(l->crc, crc, l->zop[k].op);
	} else
		l->crc = crc32c_extend(l->crc, p, n);
	if (l->niov == l->ciov) {
		size_t nc = l->ciov ? 2 * l->ciov : 64;
		struct iovec *q = realloc(l->iov, nc * sizeof *q);

		if (q == NULL)
			return -1;
		l->iov = q;
		l->ciov = nc;
	}
	l->iov[l->niov++] = (struct iovec){ (void *)(uintptr_t)p, n };
	return 0;
}

/*
 * Whether float32 tensor i can be gathered: each example's values the
 * start of its padded row (padding along the first axis only).
 */
static int
gatherable(const struct loader *l, size_t i)
{
	const struct ld_out *o = &l->out[i];

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 0;	/* the values are the host's floats */
#endif
	if (o->direct)
		return 1;
	if (o->ready)
		return 0;
	for (size_t b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];

		if (t->n == o->per)
			continue;
		for (int d = 1; d < o->rank - 1; d++)
			if (t->shape[d] != o->shape[d + 1])
				return 0;
	}
	return 1;
}

/* Tensor i's values and padding as pieces; -1 on ENOMEM. */
static int
gather(struct loader *l, size_t i)
{
	struct ld_out *o = &l->out[i];
	size_t b, most = 0;

	/* the padding block first: pieces point into it */
	for (b = 0; b < l->nbatch; b++)
		if (o->per - l->batch[b]->tv[i].n > most)
			most = o->per - l->batch[b]->tv[i].n;
	if (most > o->npad) {
		float *q = realloc(o->pad, most * sizeof *q);

		if (q == NULL)
			return -1;
		o->pad = q;
		o->npad = most;
		pad_fill(q, 0, most, MF_FLOAT32, l->cf->t[i].padv);
	}
	for (b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];

		if (piece(l, t->v, 4 * t->n, t->has_crc, t->crc) == -1 ||
		    piece(l, o->pad, 4 * (o->per - t->n), 0, 0) == -1)
			return -1;
	}
	return 0;
}

/*
 * The batch as one Example into b, or with gather, in pieces
 * (l->iov): b then holds the bytes between the gathered float32
 * values.
 */
static int
write_example(struct loader *l, struct buf *b, int gath)
{
	const struct ld_config *cf = l->cf;
	struct xfeat *xf;
	size_t nx = 0, fs = 0, i, k, n;
	uint8_t *q, *from;

	if ((xf = calloc(cf->nt * 4 + 1, sizeof *xf)) == NULL)
		return -1;
	for (i = 0; i < cf->nt; i++) {
		enum mf_dtype dt = l->batch[0]->tv[i].dtype;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (dt != MF_FLOAT32)	/* float32 is stacked straight into b */
#endif
			ld_out_ready(l, i);

		xf[nx++] = (struct xfeat){ .key = cf->t[i].name, .tensor = i,
		    .kind = dt == MF_STRING ? EX_BYTES : mf_dtype_is_float(dt) ?
		    EX_FLOAT : EX_INT64 };
		xf[nx++] = (struct xfeat){ .key = cf->t[i].shape_name,
		    .tensor = i, .what = 1, .kind = EX_INT64 };
		if (l->out[i].bnd) {
			xf[nx++] = (struct xfeat){ .key = cf->t[i].bnd_name,
			    .tensor = i, .what = 2, .kind = EX_INT64 };
			xf[nx++] = (struct xfeat){ .key = cf->t[i].bnd_shape_name,
			    .tensor = i, .what = 3, .kind = EX_INT64 };
		}
	}
	qsort(xf, nx, sizeof *xf, cmp_xfeat);
	for (k = 0; k < nx; k++) {
		struct xfeat *x = &xf[k];
		size_t kl = strlen(x->key), pay = 0;
		const struct ld_out *o = &l->out[x->tensor];

		n = xcount(l, x);
		if (x->kind == EX_FLOAT)
			pay = 4 * n;
		else if (x->kind == EX_INT64)
			for (i = 0; i < n; i++)
				pay += ex_varint_size((uint64_t)xint(l, x, i));
		else if (x->kind == EX_BYTES)
			for (i = 0; i < n; i++)
				pay += ex_ld_size(cells_of(l, x->tensor,
				    i / o->per)[i % o->per].s->n);
		fs += ex_entry_sizes(&x->sz, kl, ex_feature_sizes(&x->sz,
		    x->kind, pay));
	}
	if (rp_buf_reserve(b, ex_ld_size(fs)) == -1) {
		free(xf);
		return -1;
	}
	q = from = b->p + b->len;	/* b does not move from here on */
	l->niov = 0;
	l->crc = 0;
	q = ex_put_ld(q, 0x0a, fs);
	for (k = 0; k < nx; k++) {
		const struct xfeat *x = &xf[k];
		const struct ld_out *o = &l->out[x->tensor];
		size_t kl = strlen(x->key);

		n = xcount(l, x);
		q = ex_entry_head(q, &x->sz, x->key, kl, x->sz.feat);
		q = ex_feature_head(q, &x->sz, x->kind);
		if (x->kind == EX_BYTES) {
			for (i = 0; i < n; i++) {
				const struct ld_str *st =
				    cells_of(l, x->tensor, i / o->per)[i % o->per].s;

				q = ex_put_ld(q, 0x0a, st->n);
				memcpy(q, st->p, st->n);
				q += st->n;
			}
			continue;
		}
		if (n == 0)
			continue;
		if (x->kind == EX_FLOAT) {
			enum mf_dtype dt = l->batch[0]->tv[x->tensor].dtype;

			if (gath && dt == MF_FLOAT32 && gatherable(l, x->tensor)) {
				if (piece(l, from, (size_t)(q - from), 0, 0) == -1 ||
				    gather(l, x->tensor) == -1) {
					free(xf);
					return -1;
				}
				from = q;
			} else if (dt == MF_FLOAT32 && !o->direct) {
				/* float32 values are the output's bytes */
				if (o->ready)
					put_f32(q, o->v, n);
				else
					ld_out_fill(l, x->tensor, q);
				q += 4 * n;
			} else
				for (size_t e = 0; e < (size_t)o->shape[0]; e++) {
					if (dt == MF_FLOAT32)
						put_f32(q, vals_of(l, x->tensor,
						    e, dt), o->per);
					else
						narrow(q, cells_of(l, x->tensor,
						    e), o->per);
					q += 4 * o->per;
				}
		} else
			for (i = 0; i < n; i++)
				q = ex_put_varint(q, (uint64_t)xint(l, x, i));
	}
	b->len = (size_t)(q - b->p);
	free(xf);
	return gath ? piece(l, from, (size_t)(q - from), 0, 0) : 0;
}

int
ld_write_example(struct loader *l, struct buf *b)
{
	return write_example(l, b, 0);
}

int
ld_write_example_iov(struct loader *l, struct buf *b,
    const struct iovec **iov, size_t *n, uint32_t *crc)
{
	b->len = 0;
	l->want_crc = 1;	/* from now on, of every element made */
	if (write_example(l, b, 1) == -1)
		return -1;
	*iov = l->iov;
	*n = l->niov;
	*crc = l->crc;
	return 0;
}

