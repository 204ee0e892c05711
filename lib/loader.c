/*
 * nnmaker-style batch loaders: records decoded into elements, the
 * secondary features and processing steps, the three loaders' sources,
 * the shuffle buffers and epochs, and batching (ld_open, ld_next,
 * ld_close).  See loader.h.  The datasets, the configuration and the
 * writers of batches are loader_dataset.c, loader_config.c and
 * loader_write.c; what they share is loader_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "crc32c.h"
#include "example.h"
#include "loader.h"
#include "loader_int.h"
#include "record.h"
#include "rng.h"

static void
tv_clear(struct ld_tv *t)
{
	if (t->dtype == MF_STRING && t->v)
		for (size_t i = 0; i < t->n; i++)
			free(((union ld_cell *)t->v)[i].s);
	free(t->v);
	t->v = NULL;
	t->n = 0;
	t->cap = 0;
}

/* Room for need elements at *a (*cap of them now), at most max; -1 on ENOMEM. */
static int
elems_room(struct ld_elem ***a, size_t *cap, size_t need, size_t max)
{
	struct ld_elem **q;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap < 8 ? 8 : *cap * 2;
	if (nc > max)
		nc = max;
	if (nc < need)
		nc = need;
	if ((q = realloc(*a, nc * sizeof *q)) == NULL)
		return -1;
	*a = q;
	*cap = nc;
	return 0;
}

static void
elem_destroy(const struct loader *l, struct ld_elem *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < l->cf->nt; i++)
		tv_clear(&e->tv[i]);
	free(e->bounds);
	free(e);
}

/*
 * Done with e: kept for elem_new() with its number buffers (up to a
 * batch of them, so memory stays bounded by the shuffle buffer), or
 * freed.
 */
static void
elem_free(struct loader *l, struct ld_elem *e)
{
	if (e == NULL)
		return;
	if (l->nspare >= (size_t)l->cf->batch || elems_room(&l->spare,
	    &l->scap, l->nspare + 1, (size_t)l->cf->batch) == -1) {
		elem_destroy(l, e);
		return;
	}
	for (size_t i = 0; i < l->cf->nt; i++) {
		if (e->tv[i].dtype == MF_STRING)
			tv_clear(&e->tv[i]);
		else
			e->tv[i].n = 0;
		e->tv[i].has_crc = 0;
	}
	free(e->bounds);
	e->bounds = NULL;
	e->nb = 0;
	l->spare[l->nspare++] = e;
}

/* An element: its tensors' v may hold a buffer to reuse (tv_alloc()). */
static struct ld_elem *
elem_new(struct loader *l)
{
	if (l->nspare > 0)
		return l->spare[--l->nspare];
	return calloc(1, sizeof(struct ld_elem) + l->cf->nt * sizeof(struct ld_tv));
}

/*
 * The same, for an element whose first tensor will take 'bytes': the
 * spare whose buffer fits it best (tv_room() keeps a buffer at most a
 * quarter too large), so that buffers are seldom made anew.
 */
static struct ld_elem *
elem_new_fit(struct loader *l, size_t bytes)
{
	size_t i, best = l->nspare;

	for (i = 0; i < l->nspare; i++) {
		size_t c = l->spare[i]->tv[0].cap;

		if (c >= bytes && c <= bytes + bytes / 4 && (best == l->nspare ||
		    c < l->spare[best]->tv[0].cap))
			best = i;
	}
	if (best < l->nspare) {
		struct ld_elem *e = l->spare[best];

		l->spare[best] = l->spare[--l->nspare];
		return e;
	}
	return elem_new(l);
}

/*
 * Room for n values in t, keeping those it holds; -1 on ENOMEM.  Just
 * the room asked for (tv_alloc() and the windows ask for what they will
 * hold), so that the shuffle buffer holds no more than its elements.
 */
static int
tv_room(struct ld_tv *t, size_t n)
{
	size_t es = t->dtype == MF_STRING ? sizeof(union ld_cell) :
	    esz(t->dtype), nc;
	void *q;

	nc = (n ? n : 1) * es;
	/* a reused element's block serves unless far too large */
	if (nc <= t->cap && t->v != NULL && (t->n > 0 || t->cap <= nc + nc / 4))
		return 0;
	if (t->n == 0) {	/* nothing to keep: the freed block can serve */
		free(t->v);
		t->v = NULL;
		t->cap = 0;
	}
	if ((q = realloc(t->v, nc)) == NULL)
		return -1;
	t->v = q;
	t->cap = nc;
	return 0;
}

/*
 * Room for need values in t, keeping those it holds, for a window that
 * will hold most if it is made: the room doubles up to most, so that a
 * window whose length the configuration draws (max_window) takes the
 * memory of the values it has, not of the length drawn.
 */
static int
tv_grow(struct ld_tv *t, size_t need, size_t most)
{
	size_t es = t->dtype == MF_STRING ? sizeof(union ld_cell) :
	    esz(t->dtype), n;

	if (t->n == 0) {
		/* a new window: the block it has serves, up to most */
		n = t->cap / es;
		if (n > most)
			n = most;
		if (n < need)
			n = need;
		return tv_room(t, n);
	}
	if (need * es <= t->cap)
		return 0;
	n = t->cap / es * 2;
	if (n > most)
		n = most;
	if (n < need)
		n = need;
	return tv_room(t, n);
}

static int
tv_alloc(struct ld_tv *t, size_t n)
{
	if (t->dtype == MF_STRING) {	/* cells start NULL for tv_clear() */
		free(t->v);
		t->cap = 0;
		t->n = n;
		if ((t->v = calloc(n ? n : 1, sizeof(union ld_cell))) == NULL)
			return -1;
		t->cap = (n ? n : 1) * sizeof(union ld_cell);
		return 0;
	}
	t->n = 0;	/* nothing to keep: the caller writes every number */
	if (tv_room(t, n) == -1)
		return -1;
	t->n = n;
	return 0;
}

static struct ld_str *
str_new(const uint8_t *p, size_t n)
{
	struct ld_str *s = malloc(sizeof *s + n + 1);

	if (s != NULL) {
		s->n = n;
		memcpy(s->p, p, n);
	}
	return s;
}

static double
half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m | 0x400, e - 25);
	return h & 0x8000 ? -v : v;
}

static int64_t
int_as(enum mf_dtype dt, int64_t i)
{
	switch (dt) {
	case MF_BOOL:	return i != 0;
	case MF_INT8:	return (int8_t)i;
	case MF_INT16:	return (int16_t)i;
	case MF_INT32:	return (int32_t)i;
	case MF_UINT8:	return (uint8_t)i;
	case MF_UINT16:	return (uint16_t)i;
	case MF_UINT32:	return (uint32_t)i;
	default:	return i;
	}
}

/* A number as a cell of dtype dt (tf.cast: truncation toward zero, saturated here). */
static union ld_cell
cell_f(enum mf_dtype dt, double f)
{
	union ld_cell c;

	if (mf_dtype_is_float(dt)) {
		c.f = dt == MF_FLOAT64 ? f : dt == MF_FLOAT16 ? to_half(f) :
		    (double)(float)f;
		return c;
	}
	if (dt == MF_BOOL) {
		c.i = f != 0;
		return c;
	}
	if (isnan(f))
		c.i = 0;
	else if (dt == MF_UINT64)
		c.i = f <= 0 ? 0 : f >= 18446744073709551615.0 ? -1 :
		    (int64_t)(uint64_t)f;
	else if (f <= -9223372036854775808.0)
		c.i = INT64_MIN;
	else if (f >= 9223372036854775807.0)
		c.i = INT64_MAX;
	else
		c.i = int_as(dt, (int64_t)f);
	return c;
}

static union ld_cell
cell_i(enum mf_dtype dt, int64_t i)
{
	union ld_cell c;

	if (mf_dtype_is_float(dt))
		return cell_f(dt, (double)i);
	c.i = int_as(dt, i);
	return c;
}

/* n elements of dtype dt from raw bytes */
static void
raw_decode(const struct mf_feature *f, const uint8_t *p, size_t n,
    void *v)
{
	size_t sz = mf_dtype_size(f->dtype);

	for (size_t i = 0; i < n; i++, p += sz) {
		union ld_cell out[1];
		uint64_t u = 0;

		for (size_t k = 0; k < sz; k++)
			u |= (uint64_t)p[f->big_endian ? k : sz - 1 - k] <<
			    (8 * (sz - 1 - k));
		switch (f->dtype) {
		case MF_FLOAT16:
			out->f = half_to_double((uint16_t)u);
			break;
		case MF_FLOAT32: {
			float x;
			uint32_t u32 = (uint32_t)u;

			memcpy(&x, &u32, 4);
			out->f = x;
			break;
		}
		case MF_FLOAT64:
			memcpy(&out->f, &u, 8);
			break;
		case MF_INT8:	out->i = (int8_t)u; break;
		case MF_INT16:	out->i = (int16_t)u; break;
		case MF_INT32:	out->i = (int32_t)u; break;
		case MF_BOOL:	out->i = u != 0; break;
		default:	out->i = (int64_t)u; break;
		}
		put_cell(v, i, f->dtype, *out);
	}
}

/*
 * float32 values as a tensor keeps them: the same bits, except that a
 * signalling NaN comes out quiet (its quiet bit set), as it did when
 * values went through double on their way.
 */
static inline __attribute__((always_inline)) void
copy_f32(float *restrict dst, const void *restrict src0, size_t n)
{
	const uint8_t *src = src0;	/* perhaps unaligned: record bytes */
	size_t i = 0;

#ifdef __SSE2__
	const __m128i mag = _mm_set1_epi32(0x7fffffff),
	    inf = _mm_set1_epi32(0x7f800000), quiet = _mm_set1_epi32(0x400000);

	for (; i + 4 <= n; i += 4) {
		__m128i u = _mm_loadu_si128((const __m128i *)(const void *)(src + 4 * i));
		__m128i nan = _mm_cmpgt_epi32(_mm_and_si128(u, mag), inf);

		_mm_storeu_si128((__m128i *)(void *)(dst + i),
		    _mm_or_si128(u, _mm_and_si128(nan, quiet)));
	}
#endif
	for (; i < n; i++) {
		uint32_t u;

		memcpy(&u, src + 4 * i, 4);
		if ((u & 0x7fffffff) > 0x7f800000)
			u |= 0x400000;
		memcpy(dst + i, &u, 4);
	}
}

/* float to double cells, in a loop the compiler can vectorize */
static void
widen(union ld_cell *restrict v, const float *restrict f, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {	/* four at a time: one vector */
		v[i].f = f[i];
		v[i + 1].f = f[i + 1];
		v[i + 2].f = f[i + 2];
		v[i + 3].f = f[i + 3];
	}
	for (; i < n; i++)
		v[i].f = f[i];
}

/* Fill the values of one Feature (already checked) into v. */
static int
fill(const struct mf_feature *f, const struct ex_feature *x, void *v)
{
	union ld_cell *c = v;
	size_t i;

	switch (f->deser) {
	case MF_DS_INT:
		if (f->dtype == MF_INT64)
			for (i = 0; i < x->n; i++)
				c[i].i = x->i64[i];
		else
			for (i = 0; i < x->n; i++)
				put_cell(v, i, f->dtype, cell_i(f->dtype, x->i64[i]));
		break;
	case MF_DS_FLOAT:
		if (f->dtype == MF_FLOAT32)
			copy_f32(v, x->f32, x->n);
		else if (f->dtype == MF_FLOAT64)
			widen(c, x->f32, x->n);	/* exact */
		else
			for (i = 0; i < x->n; i++)
				c[i] = cell_f(f->dtype, x->f32[i]);
		break;
	case MF_DS_STRING:
		for (i = 0; i < x->n; i++)
			if ((c[i].s = str_new(x->b[i].p, x->b[i].n)) == NULL)
				return -1;
		break;
	case MF_DS_RAW:
		for (i = 0; i < x->n; i++)
			raw_decode(f, x->b[i].p, f->nelem,
			    at(v, i * f->nelem, f->dtype));
		break;
	}
	return 0;
}

/* Whether feature f of ex (a list's steps, or a plain list) was left lazy. */
static int
lazy_of(const struct example *ex, const struct mf_feature *f)
{
	size_t nl = strlen(f->name);
	const struct ex_flist *fl = f->var_len ? ex_find_list(ex, f->name, nl) :
	    NULL;
	const struct ex_feature *x;

	if (fl != NULL) {
		for (size_t s = 0; s < fl->n; s++)
			if (fl->v[s].lazy != NULL)
				return 1;
		return 0;
	}
	return (x = ex_find(ex, f->name, nl)) != NULL && x->lazy != NULL;
}

/* Decode one record's primaries into e; -1 with err set. */
static int
decode(struct loader *l, const uint8_t *p, size_t n, struct ld_elem *e,
    char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	const struct example *ex = &l->ex;
	struct manifest one;
	int lazy = 0;

	if (ex_decode(&l->ex, p, n, l->et) == -1) {
		rp_seterr(err, errlen, "payload is not %s: %s",
		    l->et == EX_TYPE_SEQUENCE ? "a SequenceExample" :
		    "an Example", ex_strerror(&l->ex));
		return -1;
	}
	one.nfeat = 1;
	for (size_t i = 0; i < cf->nprim && !lazy; i++)
		lazy = lazy_of(ex, cf->t[i].f);
	if (lazy) {
		/*
		 * A primary's list was too long to decode at once: its counts
		 * are checked first, so that a list far longer than the
		 * manifest says is refused without its 8 bytes a value (raw
		 * strings need their lengths: those are decoded whole).
		 */
		for (size_t i = 0; i < cf->nprim; i++) {
			one.feat = (struct mf_feature *)cf->t[i].f;
			if (cf->t[i].f->deser != MF_DS_RAW &&
			    mf_check_record(&one, ex, err, errlen) == -1)
				return -1;
		}
		if (ex_decode(&l->exw, p, n, l->et) == -1) {
			rp_seterr(err, errlen, "%s", ex_strerror(&l->exw));
			return -1;
		}
		ex = &l->exw;
	}
	for (size_t i = 0; i < cf->nprim; i++) {
		const struct mf_feature *f = cf->t[i].f;
		struct ld_tv *t = &e->tv[i];
		size_t per = f->deser == MF_DS_RAW ? f->nelem * f->len : f->nelem;

		/* check it as --check-manifest does */
		one.feat = (struct mf_feature *)f;
		if (mf_check_record(&one, ex, err, errlen) == -1)
			return -1;
		t->dtype = f->dtype;
		t->rank = 0;
		if (f->var_len && ex_find_list(ex, f->name,
		    strlen(f->name)) == NULL) {
			/* a plain list (checked): its values are the steps */
			const struct ex_feature *x = ex_find(ex, f->name,
			    strlen(f->name));
			size_t steps = f->deser == MF_DS_RAW ? x->n :
			    f->nelem ? x->n / f->nelem : 0;

			t->shape[t->rank++] = (int64_t)steps;
			if (tv_alloc(t, steps * f->nelem) == -1 ||
			    fill(f, x, t->v) == -1)
				return -1;
		} else if (f->var_len) {
			const struct ex_flist *fl = ex_find_list(ex,
			    f->name, strlen(f->name));

			t->shape[t->rank++] = (int64_t)fl->n;
			if (tv_alloc(t, fl->n * f->nelem) == -1)
				return -1;
			if (f->deser == MF_DS_FLOAT && f->nelem > 0 &&
			    (f->dtype == MF_FLOAT32 || f->dtype == MF_FLOAT64)) {
				/* steps whose values follow one another: one run */
				for (size_t s = 0, k; s < fl->n; s = k) {
					for (k = s + 1; k < fl->n &&
					    fl->v[k].f32 == fl->v[k - 1].f32 +
					    f->nelem; k++)
						;
					if (f->dtype == MF_FLOAT32)
						copy_f32(at(t->v, s * f->nelem,
						    f->dtype), fl->v[s].f32,
						    (k - s) * f->nelem);
					else
						widen(at(t->v, s * f->nelem,
						    f->dtype), fl->v[s].f32,
						    (k - s) * f->nelem);
				}
			} else
				for (size_t s = 0; s < fl->n; s++)
					if (fill(f, &fl->v[s], at(t->v,
					    s * f->nelem, f->dtype)) == -1)
						return -1;
		} else {
			const struct ex_feature *x = ex_find(ex, f->name,
			    strlen(f->name));

			if (f->deser == MF_DS_RAW && f->len > 1)
				t->shape[t->rank++] = (int64_t)f->len;
			if (tv_alloc(t, per) == -1 || fill(f, x, t->v) == -1)
				return -1;
		}
		for (int k = 0; k < f->rank; k++)
			t->shape[t->rank++] = f->shape[k];
		if (cf->type != LD_INDEPENDENT && t->rank == 0)
			t->shape[t->rank++] = 1;
	}
	return 0;
}

/*
 * Whether every primary can take the fast path: in the sequence
 * loaders, float32 feature lists; in the independent one, float32 or
 * int64 features of an Example.  Sets up the fast path; -1 on ENOMEM.
 */
static int
fast_setup(struct loader *l)
{
	const struct ld_config *cf = l->cf;
	size_t np = cf->nprim;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 0;	/* the values are read as the host's floats */
#endif
	for (size_t i = 0; i < np; i++) {
		const struct mf_feature *f = cf->t[i].f;

		if (f->nelem == 0)
			return 0;
		if (cf->type == LD_INDEPENDENT ? l->et != EX_TYPE_EXAMPLE ||
		    f->var_len || !((f->deser == MF_DS_FLOAT &&
		    f->dtype == MF_FLOAT32) || (f->deser == MF_DS_INT &&
		    f->dtype == MF_INT64)) : l->et != EX_TYPE_SEQUENCE ||
		    !f->var_len || f->deser != MF_DS_FLOAT ||
		    f->dtype != MF_FLOAT32)
			return 0;
	}
	if ((l->fw = calloc(np, sizeof *l->fw)) == NULL ||
	    (l->fsp = calloc(np, sizeof *l->fsp)) == NULL ||
	    (l->fval = calloc(np, sizeof *l->fval)) == NULL ||
	    (l->fstride = calloc(np, sizeof *l->fstride)) == NULL ||
	    (l->fskip = calloc(np, sizeof *l->fskip)) == NULL ||
	    (l->fi64 = calloc(np, sizeof *l->fi64)) == NULL ||
	    (l->fi64cap = calloc(np, sizeof *l->fi64cap)) == NULL)
		return -1;
	for (size_t i = 0; i < np; i++) {
		l->fw[i].name = cf->t[i].f->name;
		l->fw[i].len = strlen(cf->t[i].f->name);
		l->fw[i].list = cf->t[i].f->var_len;
	}
	l->fast = 1;
	return 0;
}

/*
 * Find the primaries in the record at p: 1 when it is canonical and
 * each holds what the manifest says, with *steps the steps of the
 * feature lists (all the same); 0 when the record is for decode(),
 * which accepts every form and says what is wrong; -1 on ENOMEM.
 */
static int
fast_probe(struct loader *l, const uint8_t *p, size_t n, size_t *steps)
{
	const struct ld_config *cf = l->cf;

	if (!ex_canonical_find(p, n, l->et == EX_TYPE_SEQUENCE, cf->nprim,
	    l->fw, l->fsp))
		return 0;
	*steps = 0;
	for (size_t i = 0; i < cf->nprim; i++) {
		const struct mf_feature *f = cf->t[i].f;
		long c;

		if (l->fsp[i].p == NULL)
			return 0;
		if (f->var_len) {
			c = ex_canonical_float_steps(l->fsp[i], f->nelem,
			    &l->fstride[i], &l->fskip[i]);
			if (c < 0 || (i > 0 && (size_t)c != *steps))
				return 0;
			*steps = (size_t)c;
		} else if (f->deser == MF_DS_FLOAT) {
			c = ex_canonical_floats(l->fsp[i], &l->fval[i]);
			if (c < 0 || (uint64_t)c != f->nelem)
				return 0;
		} else {
			size_t need = l->fsp[i].n + 1;

			/*
			 * nelem values take at most 10 bytes each: a longer
			 * list is for decode() to refuse, not for a scratch
			 * sized by the record
			 */
			if (l->fsp[i].n > 10 * f->nelem + 16)
				return 0;
			if (l->fi64cap[i] < need) {
				int64_t *q = realloc(l->fi64[i], need * sizeof *q);

				if (q == NULL)
					return -1;
				l->fi64[i] = q;
				l->fi64cap[i] = need;
			}
			c = ex_canonical_int64s(l->fsp[i], l->fi64[i], need);
			if (c < 0 || (uint64_t)c != f->nelem)
				return 0;
		}
	}
	return 1;
}

/* Steps s0..s1 of var_len primary i, found by fast_probe(), to dst. */
static void
fast_steps(const struct loader *l, size_t i, void *dst, size_t s0, size_t s1)
{
	size_t w = l->cf->t[i].f->nelem;
	const uint8_t *v = l->fsp[i].p + l->fskip[i] + s0 * l->fstride[i];

	for (size_t s = s0; s < s1; s++, v += l->fstride[i])
		copy_f32((float *)dst + (s - s0) * w, v, w);
}

/* Primary i's values, found by fast_probe(), to dst (steps for var_len). */
static void
fast_fill(const struct loader *l, size_t i, void *dst, size_t steps)
{
	const struct mf_feature *f = l->cf->t[i].f;
	size_t w = f->nelem;

	if (f->var_len)
		fast_steps(l, i, dst, 0, steps);
	else if (f->deser == MF_DS_FLOAT)
		copy_f32(dst, l->fval[i], w);
	else
		memcpy(dst, l->fi64[i], w * sizeof(int64_t));
}

/* The record fast_probe() took, into e as decode() would have put it. */
static int
fast_elem(struct loader *l, struct ld_elem *e, size_t steps)
{
	for (size_t i = 0; i < l->cf->nprim; i++) {
		const struct mf_feature *f = l->cf->t[i].f;
		struct ld_tv *t = &e->tv[i];

		t->dtype = f->dtype;
		t->rank = 0;
		if (f->var_len)
			t->shape[t->rank++] = (int64_t)steps;
		for (int k = 0; k < f->rank; k++)
			t->shape[t->rank++] = f->shape[k];
		if (tv_alloc(t, (f->var_len ? steps : 1) * f->nelem) == -1)
			return -1;
		fast_fill(l, i, t->v, steps);
	}
	return 0;
}

static size_t
prod(const int64_t *s, int r)
{
	size_t n = 1;

	for (int i = 0; i < r; i++)
		n *= (size_t)s[i];
	return n;
}

/* Copy n values of dtype dt (strings as copies of their own). */
static int
copy_cells(enum mf_dtype dt, void *dst, const void *src, size_t n)
{
	union ld_cell *d = dst;
	const union ld_cell *c = src;

	if (dt != MF_STRING) {
		if (n > 0)
			memcpy(dst, src, n * esz(dt));
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if ((d[i].s = str_new(c[i].s->p, c[i].s->n)) == NULL)
			return -1;
	return 0;
}

static void
shape_str(char *b, size_t len, const int64_t *s, int r)
{
	size_t o = 0;

	o += (size_t)snprintf(b, len, "[");
	for (int i = 0; i < r && o < len; i++)
		o += (size_t)snprintf(b + o, len - o, "%s%" PRId64, i ? "," : "",
		    s[i]);
	if (o < len)
		snprintf(b + o, len - o, "]");
}

/*
 * Record boundaries of a discrete window after a slice of its first
 * axis that keeps positions pos[0..np) (rising with step > 0, falling
 * otherwise): boundary k is the number of positions kept before the
 * k-th boundary in the new order, so a record sliced away entirely is
 * an empty span and the count of boundaries stays.
 */
static void
slice_bounds(int64_t *b, size_t nb, const int64_t *pos, int64_t np,
    int64_t step)
{
	for (size_t k = 0; k < nb; k++) {
		int64_t c = 0;

		for (int64_t j = 0; j < np; j++)
			c += step > 0 ? pos[j] < b[k] : pos[j] >= b[k];
		b[k] = c;
	}
	if (step < 0)	/* the records come last first */
		for (size_t k = 0; k < nb / 2; k++) {
			int64_t x = b[k];

			b[k] = b[nb - 1 - k];
			b[nb - 1 - k] = x;
		}
}

/*
 * Record boundaries of a discrete window after a reshape: a boundary
 * at step b of the old first axis is at element b x (old step size),
 * which must start a step of the new first axis.
 */
static int
reshape_bounds(const struct ld_config *cf, const struct ld_step *st,
    const struct ld_tv *t, int64_t *b, size_t nb, char *err, size_t errlen)
{
	char s1[128], s2[128];
	size_t pold, pnew;

	if (t->rank < 1 || t->shape[0] == 0)
		return 0;	/* no steps: every boundary is 0 */
	pold = t->n / (size_t)t->shape[0];
	pnew = st->rank > 0 && st->shape[0] > 0 ? t->n / (size_t)st->shape[0] : 0;
	for (size_t k = 0; k < nb; k++) {
		size_t el = (size_t)b[k] * pold;

		if (pnew == 0 || el % pnew != 0) {
			shape_str(s1, sizeof s1, t->shape, t->rank);
			shape_str(s2, sizeof s2, st->shape, st->rank);
			if (pnew == 0)
				rp_seterr(err, errlen, "%s: reshaping '%s' from %s "
				    "to %s drops the axis its record boundaries "
				    "are on", st->path, cf->t[st->tensor].name,
				    s1, s2);
			else
				rp_seterr(err, errlen, "%s: reshaping '%s' from %s "
				    "to %s splits a record at step %" PRId64,
				    st->path, cf->t[st->tensor].name, s1, s2,
				    b[k]);
			return -1;
		}
	}
	for (size_t k = 0; k < nb; k++)
		b[k] = (int64_t)((size_t)b[k] * pold / pnew);
	return 0;
}

/* Secondary features and processing steps on one example. */
static int
finish(struct loader *l, struct ld_elem *e, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	size_t i;

	for (i = cf->nprim; i < cf->nt; i++) {
		const struct ld_tspec *ts = &cf->t[i];
		struct ld_tv *t = &e->tv[i];

		t->dtype = ts->dtype;
		if (ts->shape_ref >= 0) {
			t->rank = e->tv[ts->shape_ref].rank;
			memcpy(t->shape, e->tv[ts->shape_ref].shape, sizeof t->shape);
		} else {
			t->rank = ts->srank;
			memcpy(t->shape, ts->sshape, sizeof ts->sshape[0] * MF_MAXRANK);
		}
		if (tv_alloc(t, prod(t->shape, t->rank)) == -1)
			return -1;
		for (size_t k = 0; k < t->n; k++)
			if (t->dtype != MF_STRING)
				put_cell(t->v, k, t->dtype, ts->val);
			else if (copy_cells(t->dtype, at(t->v, k, t->dtype),
			    &ts->val, 1) == -1)
				return -1;
	}
	for (size_t s = 0; s < cf->nstep; s++) {
		const struct ld_step *st = &cf->step[s];
		struct ld_tv *t = &e->tv[st->tensor], nt;
		int64_t *bnd;
		char sb[128];

		memset(&nt, 0, sizeof nt);
		nt.dtype = t->dtype;
		bnd = e->bounds != NULL && (size_t)st->tensor < cf->nprim ?
		    e->bounds + (size_t)st->tensor * e->nb : NULL;
		if (st->type == STEP_RESHAPE) {
			if (prod(st->shape, st->rank) != t->n) {
				shape_str(sb, sizeof sb, t->shape, t->rank);
				rp_seterr(err, errlen, "%s: tensor '%s' of shape %s "
				    "cannot be reshaped to %zu elements", st->path,
				    cf->t[st->tensor].name, sb,
				    prod(st->shape, st->rank));
				return -1;
			}
			if (bnd && reshape_bounds(cf, st, t, bnd, e->nb, err,
			    errlen) == -1)
				return -1;
			t->rank = st->rank;
			memcpy(t->shape, st->shape, sizeof t->shape[0] * (size_t)st->rank);
			continue;
		}
		if (st->type == STEP_ONEHOT) {
			nt.dtype = st->dtype;
			nt.rank = t->rank + 1;
			memcpy(nt.shape, t->shape, sizeof t->shape);
			nt.shape[t->rank] = st->depth;
			if (smul(smul(t->n, (uint64_t)st->depth),
			    esz(st->dtype)) > cf->maxbytes) {
				rp_seterr(err, errlen, "%s: onehot of '%s': %zu "
				    "values of depth %" PRId64 " take %" PRIu64
				    " bytes as %s, more than the %" PRIu64 " a "
				    "tensor of a batch may take", st->path,
				    cf->t[st->tensor].name, t->n, st->depth,
				    smul(smul(t->n, (uint64_t)st->depth),
				    esz(st->dtype)), mf_dtype_name(st->dtype),
				    cf->maxbytes);
				return -1;
			}
			if (tv_alloc(&nt, t->n * (size_t)st->depth) == -1)
				return -1;
			for (size_t k = 0; k < t->n; k++) {
				union ld_cell zero = cell_i(nt.dtype, 0),
				    one = cell_i(nt.dtype, 1);

				for (int64_t d = 0; d < st->depth; d++)
					put_cell(nt.v, k * (size_t)st->depth +
					    (size_t)d, nt.dtype, d ==
					    get_cell(t->v, k, t->dtype).i ? one : zero);
			}
		} else {
			/* slice: the positions taken along each dimension */
			int64_t *pos[LD_MAXRANK], np[LD_MAXRANK];
			size_t stride[LD_MAXRANK], idx[LD_MAXRANK], total = 1, k;
			int d, r = 0;

			if (bnd && st->nsl > 0 && st->sl[0].index) {
				rp_seterr(err, errlen, "%s.args.slice: an index on "
				    "the first axis of '%s' would drop the axis its "
				    "record boundaries are on", st->path,
				    cf->t[st->tensor].name);
				return -1;
			}
			memset(pos, 0, sizeof pos);
			for (d = t->rank - 1, k = 1; d >= 0; d--) {
				stride[d] = k;
				k *= (size_t)t->shape[d];
			}
			for (d = 0; d < t->rank; d++) {
				int64_t dim = t->shape[d], a, b, c, x;
				const struct ld_sl *sl = d < st->nsl ? &st->sl[d] : NULL;

				if ((pos[d] = malloc(((size_t)dim + 1) * sizeof *pos[d])) == NULL)
					goto slfail;
				np[d] = 0;
				if (sl && sl->index) {
					x = sl->start < 0 ? sl->start + dim : sl->start;
					if (x < 0 || x >= dim) {
						shape_str(sb, sizeof sb, t->shape, t->rank);
						rp_seterr(err, errlen, "%s.args.slice: index %"
						    PRId64 " out of range for dimension %d "
						    "of '%s', shape %s", st->path,
						    sl->start, d, cf->t[st->tensor].name, sb);
						goto slfail;
					}
					pos[d][np[d]++] = x;
					continue;
				}
				c = sl ? sl->step : 1;
				/* Python's slice.indices() */
				if (c > 0) {
					a = !sl || !sl->has_start ? 0 : sl->start;
					b = !sl || !sl->has_stop ? dim : sl->stop;
					if (a < 0 && (a += dim) < 0)
						a = 0;
					if (a > dim)
						a = dim;
					if (b < 0 && (b += dim) < 0)
						b = 0;
					if (b > dim)
						b = dim;
					for (x = a; x < b; x += c)
						pos[d][np[d]++] = x;
				} else {
					a = !sl->has_start ? dim - 1 : sl->start;
					b = !sl->has_stop ? -1 : sl->stop;
					if (sl->has_start && a < 0 && (a += dim) < 0)
						a = -1;
					if (a >= dim)
						a = dim - 1;
					if (sl->has_stop && b < 0 && (b += dim) < 0)
						b = -1;
					if (b >= dim)
						b = dim - 1;
					for (x = a; x > b; x += c)
						pos[d][np[d]++] = x;
				}
				nt.shape[r++] = np[d];
			}
			nt.rank = r;
			for (d = 0; d < t->rank; d++)
				total *= (size_t)np[d];
			if (tv_alloc(&nt, total) == -1)
				goto slfail;
			memset(idx, 0, sizeof idx);
			for (k = 0; k < total; k++) {
				size_t off = 0;

				for (d = 0; d < t->rank; d++)
					off += (size_t)pos[d][idx[d]] * stride[d];
				if (copy_cells(t->dtype, at(nt.v, k, t->dtype),
				    cat(t->v, off, t->dtype), 1) == -1)
					goto slfail;
				for (d = t->rank - 1; d >= 0; d--) {
					if (++idx[d] < (size_t)np[d])
						break;
					idx[d] = 0;
				}
			}
			if (bnd && t->rank > 0)
				slice_bounds(bnd, e->nb, pos[0], np[0],
				    st->nsl > 0 ? st->sl[0].step : 1);
			for (d = 0; d < t->rank; d++)
				free(pos[d]);
			goto swap;
slfail:
			for (d = 0; d < t->rank; d++)
				free(pos[d]);
			tv_clear(&nt);
			return -1;
		}
swap:
		tv_clear(t);
		*t = nt;
	}
	return 0;
}

/* Sources: one open data file each. */

static void
src_close(struct loader *l, struct ld_src *s)
{
	if (s->r)
		rec_reader_free(s->r);
	if (s->fd >= 0)
		close(s->fd);
	s->r = NULL;
	s->fd = -1;
	if (s->cells)
		for (size_t i = 0; i < l->cf->nprim; i++) {
			if (l->cf->t[i].dtype0 == MF_STRING && s->cells[i])
				for (size_t j = 0; j < s->have * s->w[i]; j++)
					free(((union ld_cell *)s->cells[i])
					    [s->start * s->w[i] + j].s);
			free(s->cells[i]);
		}
	free(s->cells);
	free(s->cap);
	free(s->w);
	free(s->sh);
	elem_free(l, s->cur);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}

static int
src_open(struct loader *l, struct ld_src *s, size_t file, char *err,
    size_t errlen)
{
	const char *path = l->ds->files[file];

	src_close(l, s);
	s->open = 1;
	s->file = file;
	s->want = -1;
	if ((s->fd = open(path, O_RDONLY)) == -1) {
		rp_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((s->r = rec_reader_open(s->fd, REC_AUTO, 0, l->maxrec)) == NULL)
		return -1;
	if (l->cf->type == LD_CONTINUOUS) {
		size_t np = l->cf->nprim;

		s->cells = calloc(np, sizeof *s->cells);
		s->cap = calloc(np, sizeof *s->cap);
		s->w = calloc(np, sizeof *s->w);
		s->sh = calloc(np, sizeof *s->sh);
		if (!s->cells || !s->cap || !s->w || !s->sh)
			return -1;
	}
	return 0;
}

/* Read the next record of s: 1 with *p, *n set, 0 at the end, -1. */
static int
src_read(struct loader *l, struct ld_src *s, const uint8_t **p, size_t *n,
    char *err, size_t errlen)
{
	const char *path = l->ds->files[s->file];
	int r;

	r = rec_read(s->r, p, n);
	if (r >= 0 && rec_index(s->r) == (uint64_t)r &&
	    rec_compression(s->r) != l->ds->mf.comp) {
		rp_seterr(err, errlen, "%s: the file is %s-compressed, but the "
		    "manifest says %s", path, rec_compname(rec_compression(s->r)),
		    rec_compname(l->ds->mf.comp));
		return -1;
	}
	if (r == -1) {
		rp_seterr(err, errlen, "%s: record %" PRIu64 ": offset %" PRIu64
		    ": %s", path, rec_index(s->r), rec_offset(s->r),
		    rec_strerror(s->r));
		return -1;
	}
	if (r == 1)
		l->st.records++;
	return r;
}

/* decode() the record just read, its faults said as the record's. */
static int
src_decode(struct loader *l, struct ld_src *s, const uint8_t *p, size_t n,
    struct ld_elem *e, char *err, size_t errlen)
{
	char e2[400];

	if (decode(l, p, n, e, e2, sizeof e2) == -1) {
		rp_seterr(err, errlen, "%s: record %" PRIu64 ": offset %" PRIu64
		    ": %s", l->ds->files[s->file], rec_index(s->r) - 1,
		    rec_offset(s->r), e2);
		return -1;
	}
	return 0;
}

/* Read and decode the next record of s: 1, 0 at the end, -1. */
static int
src_record(struct loader *l, struct ld_src *s, struct ld_elem **out,
    char *err, size_t errlen)
{
	const uint8_t *p;
	size_t n, steps;
	int r;

	*out = NULL;
	if ((r = src_read(l, s, &p, &n, err, errlen)) != 1)
		return r;
	if ((*out = elem_new(l)) == NULL)
		return -1;
	if (l->fast && (r = fast_probe(l, p, n, &steps)) != 0) {
		if (r == 1 && fast_elem(l, *out, steps) == 0)
			return 1;
		elem_free(l, *out);
		*out = NULL;
		return -1;
	}
	if (src_decode(l, s, p, n, *out, err, errlen) == -1) {
		elem_free(l, *out);
		*out = NULL;
		return -1;
	}
	return 1;
}

/*
 * Pass the first k steps held.  They stay at the front of the cells
 * until a record needs the room (cont_next() moves the rest down then),
 * so that each step is moved about once and not once a window.
 */
static void
drop_steps(struct loader *l, struct ld_src *s, size_t k)
{
	for (size_t i = 0; i < l->cf->nprim; i++)
		if (l->cf->t[i].dtype0 == MF_STRING)
			for (size_t j = 0; j < k * s->w[i]; j++)
				free(((union ld_cell *)s->cells[i])
				    [s->start * s->w[i] + j].s);
	s->have -= k;
	s->start = s->have ? s->start + k : 0;
}


/*
 * Read the next record of a continuous source: 1 with its steps (*rec
 * the decoded record, or NULL when fast_probe() took it), 0 at the end
 * of the file, -1.  Sets the source's step widths and shapes.
 */
static int
cont_read(struct loader *l, struct ld_src *s, struct ld_elem **rec,
    size_t *steps, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	const uint8_t *p;
	size_t i, n;
	int r;

	*rec = NULL;
	if ((r = src_read(l, s, &p, &n, err, errlen)) == -1)
		return -1;
	if (r == 0) {
		if (s->nwin == 0 && s->steps < (uint64_t)cf->minw) {
			rp_seterr(err, errlen, "%s: %" PRIu64 " steps, fewer "
			    "than min_window %" PRId64, l->ds->files[s->file],
			    s->steps, cf->minw);
			return -1;
		}
		return 0;
	}
	if (!l->fast || (r = fast_probe(l, p, n, steps)) == 0) {
		if ((*rec = elem_new(l)) == NULL)
			return -1;
		if (src_decode(l, s, p, n, *rec, err, errlen) == -1) {
			elem_free(l, *rec);
			*rec = NULL;
			return -1;
		}
		*steps = (size_t)(*rec)->tv[0].shape[0];
	} else if (r == -1)
		return -1;
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = *rec ? &(*rec)->tv[i] : NULL;

		if (t && t->shape[0] != (*rec)->tv[0].shape[0]) {
			rp_seterr(err, errlen, "%s: record %" PRIu64 ": offset %"
			    PRIu64 ": feature '%s' has %" PRId64 " steps, but "
			    "'%s' has %" PRId64, l->ds->files[s->file],
			    rec_index(s->r) - 1, rec_offset(s->r), cf->t[i].from,
			    t->shape[0], cf->t[0].from, (*rec)->tv[0].shape[0]);
			elem_free(l, *rec);
			*rec = NULL;
			return -1;
		}
		if (t) {
			s->w[i] = t->shape[0] ? t->n / (size_t)t->shape[0] :
			    prod(t->shape + 1, t->rank - 1);
			memcpy(s->sh[i], t->shape, sizeof s->sh[i]);
		} else {
			const struct mf_feature *f = cf->t[i].f;

			s->w[i] = f->nelem;
			s->sh[i][0] = (int64_t)*steps;
			memcpy(s->sh[i] + 1, f->shape, sizeof f->shape[0] *
			    (size_t)f->rank);
		}
	}
	return 1;
}

/*
 * Steps s0..s1 of primary i of the record cont_read() gave to dst.  A
 * decoded record's strings move: every step is put somewhere once.
 */
static void
cont_put(struct loader *l, struct ld_src *s, struct ld_elem *rec, size_t i,
    void *dst, size_t s0, size_t s1)
{
	size_t w = s->w[i];

	if (s1 <= s0)
		return;
	if (rec == NULL) {
		fast_steps(l, i, dst, s0, s1);
		return;
	}
	memcpy(dst, cat(rec->tv[i].v, s0 * w, rec->tv[i].dtype),
	    (s1 - s0) * w * esz(rec->tv[i].dtype));
}

/* Done with a record cont_read() gave, its values put (cont_put()). */
static void
cont_done(struct loader *l, struct ld_elem *rec)
{
	if (rec == NULL)
		return;
	for (size_t i = 0; i < l->cf->nprim; i++) {
		struct ld_tv *t = &rec->tv[i];

		if (t->dtype == MF_STRING) {	/* moved */
			free(t->v);
			t->v = NULL;
			t->cap = 0;
		}
		t->n = 0;
	}
	elem_free(l, rec);
}

/* Room in the held steps for k more: moved down or grown; -1 on ENOMEM. */
static int
cells_room(struct loader *l, struct ld_src *s, size_t k)
{
	const struct ld_config *cf = l->cf;
	size_t i;

	for (i = 0; i < cf->nprim && s->start > 0; i++)
		if ((s->start + s->have + k) * s->w[i] > s->cap[i])
			break;
	if (s->start > 0 && i < cf->nprim) {
		/* no room after the steps held: move them down */
		for (i = 0; i < cf->nprim; i++)
			memmove(s->cells[i], at(s->cells[i], s->start * s->w[i],
			    cf->t[i].dtype0), s->have * s->w[i] *
			    esz(cf->t[i].dtype0));
		s->start = 0;
	}
	for (i = 0; i < cf->nprim; i++) {
		size_t need = (s->start + s->have + k) * s->w[i];

		if (need > s->cap[i]) {
			size_t nc = need * 2 + 16;
			void *q = realloc(s->cells[i], nc * esz(cf->t[i].dtype0));

			if (q == NULL)
				return -1;
			s->cells[i] = q;
			s->cap[i] = nc;
		}
	}
	return 0;
}

/*
 * Windows that follow one another (stride null): the steps go straight
 * from the records to the window being made, and only those of a
 * record's end that the window has no room for wait in the cells.
 */
static int
cont_direct(struct loader *l, struct ld_src *s, struct ld_elem **out,
    char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	size_t i, k, steps, want;
	int r;

	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	want = (size_t)s->want;
	if (s->cur == NULL) {
		if ((s->cur = elem_new_fit(l, want * s->w[0] *
		    esz(cf->t[0].dtype0))) == NULL)
			return -1;
		for (i = 0; i < cf->nprim; i++) {
			s->cur->tv[i].dtype = cf->t[i].dtype0;
			s->cur->tv[i].n = 0;
		}
		s->nq = 0;	/* steps in the window */
	}
	e = s->cur;
	if (s->have > 0 && s->nq < want) {
		k = s->have < want - s->nq ? s->have : want - s->nq;
		for (i = 0; i < cf->nprim; i++) {
			struct ld_tv *t = &e->tv[i];

			if (tv_grow(t, (s->nq + k) * s->w[i],
			    smul(want, s->w[i])) == -1 ||
			    copy_cells(t->dtype, at(t->v, s->nq * s->w[i],
			    t->dtype), at(s->cells[i], s->start * s->w[i],
			    t->dtype), k * s->w[i]) == -1)
				return -1;
			t->n = (s->nq + k) * s->w[i];
		}
		drop_steps(l, s, k);
		s->nq += k;
	}
	while (s->nq < want) {
		if ((r = cont_read(l, s, &rec, &steps, err, errlen)) != 1)
			return r;
		k = steps < want - s->nq ? steps : want - s->nq;
		if (steps > k && cells_room(l, s, steps - k) == -1) {
			cont_done(l, rec);
			return -1;
		}
		for (i = 0; i < cf->nprim; i++) {
			struct ld_tv *t = &e->tv[i];

			if (tv_grow(t, (s->nq + k) * s->w[i],
			    smul(want, s->w[i])) == -1) {
				cont_done(l, rec);
				return -1;
			}
			cont_put(l, s, rec, i, at(t->v, s->nq * s->w[i],
			    t->dtype), 0, k);
			t->n = (s->nq + k) * s->w[i];
			if (steps > k)	/* the rest is held (cells_room()) */
				cont_put(l, s, rec, i, at(s->cells[i], (s->start +
				    s->have) * s->w[i], t->dtype), k, steps);
		}
		cont_done(l, rec);
		s->have += steps - k;
		s->steps += steps;
		s->nq += k;
	}
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = &e->tv[i];

		t->rank = cf->t[i].rank0;
		memcpy(t->shape, s->sh[i], sizeof t->shape);
		t->shape[0] = (int64_t)want;
	}
	s->cur = NULL;
	s->nq = 0;
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

static int
cont_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	size_t i, len, adv, steps;
	int r;

	if (cf->stride < 0)
		return cont_direct(l, s, out, err, errlen);
	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	while (s->have < (size_t)s->want) {
		if ((r = cont_read(l, s, &rec, &steps, err, errlen)) != 1)
			return r;
		if (cells_room(l, s, steps) == -1) {
			cont_done(l, rec);
			return -1;
		}
		for (i = 0; i < cf->nprim; i++)
			cont_put(l, s, rec, i, at(s->cells[i], (s->start +
			    s->have) * s->w[i], cf->t[i].dtype0), 0, steps);
		cont_done(l, rec);
		s->have += steps;
		s->steps += steps;
		if (s->skip > 0) {
			size_t k = s->skip < s->have ? (size_t)s->skip : s->have;

			drop_steps(l, s, k);
			s->skip -= k;
		}
	}
	len = (size_t)s->want;
	if ((e = elem_new(l)) == NULL)
		return -1;
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = &e->tv[i];

		t->dtype = cf->t[i].dtype0;
		t->rank = cf->t[i].rank0;
		memcpy(t->shape, s->sh[i], sizeof t->shape);
		t->shape[0] = (int64_t)len;
		if (tv_alloc(t, len * s->w[i]) == -1 ||
		    copy_cells(t->dtype, t->v, at(s->cells[i], s->start * s->w[i],
		    t->dtype), t->n) == -1) {
			elem_free(l, e);
			return -1;
		}
	}
	/* pass the steps before the next window's start */
	adv = cf->stride < 0 ? len : (size_t)cf->stride;
	if (adv > s->have) {
		s->skip = adv - s->have;
		adv = s->have;
	}
	drop_steps(l, s, adv);
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

/*
 * Windows of whole records, joined as they are read: the fast path's
 * values go straight to the window's tensors.
 */
static int
disc_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	const uint8_t *p;
	size_t i, n, steps, nb;
	int r;

	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	nb = (size_t)s->want + 1;
	while (s->nq < (size_t)s->want) {
		if ((r = src_read(l, s, &p, &n, err, errlen)) == -1)
			return -1;
		if (r == 0) {
			if (s->nwin == 0 && s->nrecs < (uint64_t)cf->minw) {
				rp_seterr(err, errlen, "%s: %" PRIu64 " records, "
				    "fewer than min_window %" PRId64,
				    l->ds->files[s->file], s->nrecs, cf->minw);
				return -1;
			}
			return 0;
		}
		s->nrecs++;
		if (s->cur == NULL) {
			if ((s->cur = elem_new(l)) == NULL)
				return -1;
			s->cur->nb = 0;
		}
		e = s->cur;
		/*
		 * Room for this record's boundary and the window's end: the
		 * boundaries grow with the records (up to nb, which they
		 * reach with the last), not with the length drawn.
		 */
		if (s->nq + 2 > e->nb) {
			size_t ns = e->nb * 2 < s->nq + 2 ? s->nq + 2 : e->nb * 2;
			int64_t *q;

			if (ns > nb)
				ns = nb;
			if ((q = calloc(cf->nprim * ns, sizeof *q)) == NULL)
				return -1;
			for (i = 0; i < cf->nprim && s->nq > 0; i++)
				memcpy(q + i * ns, e->bounds + i * e->nb,
				    s->nq * sizeof *q);
			free(e->bounds);
			e->bounds = q;
			e->nb = ns;
		}
		rec = NULL;
		if (!l->fast || (r = fast_probe(l, p, n, &steps)) == 0) {
			if ((rec = elem_new(l)) == NULL)
				return -1;
			if (src_decode(l, s, p, n, rec, err, errlen) == -1) {
				elem_free(l, rec);
				return -1;
			}
		} else if (r == -1)
			return -1;
		for (i = 0; i < cf->nprim; i++) {
			const struct mf_feature *f = cf->t[i].f;
			struct ld_tv *t = &e->tv[i], *x = rec ? &rec->tv[i] : NULL;
			size_t xn = x ? x->n : steps * f->nelem, have;

			if (s->nq == 0) {
				/*
				 * The shape of a step is the manifest's (decode()
				 * makes it so), the same in every record.
				 */
				t->dtype = x ? x->dtype : f->dtype;
				if (x) {
					t->rank = x->rank;
					memcpy(t->shape, x->shape, sizeof t->shape);
				} else {
					t->rank = 1 + f->rank;
					memcpy(t->shape + 1, f->shape,
					    sizeof f->shape[0] * (size_t)f->rank);
				}
				t->shape[0] = 0;
				t->n = 0;
			}
			e->bounds[i * e->nb + s->nq] = t->shape[0];
			t->shape[0] += x ? x->shape[0] : (int64_t)steps;
			have = t->n;
			/* room for the window as if its records were like these */
			if (tv_grow(t, have + xn, smul((have + xn) / (s->nq + 1),
			    nb - 1)) == -1) {
				elem_free(l, rec);
				return -1;
			}
			t->n = have + xn;
			if (x == NULL)
				fast_fill(l, i, at(t->v, have, t->dtype), steps);
			else if (xn > 0) {
				memcpy(at(t->v, have, t->dtype), x->v, xn *
				    esz(t->dtype));
				if (x->dtype == MF_STRING) {	/* moved */
					free(x->v);
					x->v = NULL;
					x->cap = 0;
				}
				x->n = 0;
			}
		}
		elem_free(l, rec);
		s->nq++;
	}
	e = s->cur;
	s->cur = NULL;
	s->nq = 0;
	for (i = 0; i < cf->nprim; i++)
		e->bounds[i * nb + nb - 1] = e->tv[i].shape[0];
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

static int
src_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	switch (l->cf->type) {
	case LD_CONTINUOUS:	return cont_next(l, s, out, err, errlen);
	case LD_DISCRETE:	return disc_next(l, s, out, err, errlen);
	default:		return src_record(l, s, out, err, errlen);
	}
}

/* The next file of the epoch, or -1 (buffered shuffle when shuffling). */
static ssize_t
next_file(struct loader *l)
{
	size_t i, f;

	if (!l->cf->shuffle)
		return l->fnext < l->ds->nfiles ? (ssize_t)l->fnext++ : -1;
	while (l->fbn < (size_t)l->cf->nfshuf && l->fnext < l->ds->nfiles)
		l->fbuf[l->fbn++] = l->fnext++;
	if (l->fbn == 0)
		return -1;
	i = (size_t)rng_below(&l->rf, l->fbn);
	f = l->fbuf[i];
	l->fbuf[i] = l->fbuf[--l->fbn];
	return (ssize_t)f;
}

/*
 * The CRCs of e's float32 values, taken while they are in the cache:
 * the records output joins them (crc32c_combine()) instead of reading
 * the values again when the element leaves the shuffle buffer.
 */
static void
elem_crc(const struct loader *l, struct ld_elem *e)
{
	for (size_t i = 0; i < l->cf->nt; i++) {
		struct ld_tv *t = &e->tv[i];

		if (t->dtype == MF_FLOAT32) {
			t->crc = crc32c_value(t->v, 4 * t->n);
			t->has_crc = 1;
		}
	}
}

/* Files interleaved one element at a time. */
static int
interleave_next(struct loader *l, struct ld_elem **out, char *err,
    size_t errlen)
{
	for (;;) {
		struct ld_src *s;
		ssize_t f;
		int r;

		if (l->ndead == l->nsrc)
			return 0;
		s = &l->src[l->pos];
		if (s->dead) {
			l->pos = (l->pos + 1) % l->nsrc;
			continue;
		}
		if (!s->open) {
			if ((f = next_file(l)) < 0) {
				s->dead = 1;
				l->ndead++;
				l->pos = (l->pos + 1) % l->nsrc;
				continue;
			}
			if (src_open(l, s, (size_t)f, err, errlen) == -1)
				return -1;
		}
		if ((r = src_next(l, s, out, err, errlen)) == -1)
			return -1;
		if (r == 0) {
			src_close(l, s);	/* the next file takes its place */
			continue;
		}
		if (finish(l, *out, err, errlen) == -1) {
			elem_free(l, *out);
			*out = NULL;
			return -1;
		}
		if (l->want_crc)
			elem_crc(l, *out);
		l->pos = (l->pos + 1) % l->nsrc;
		return 1;
	}
}

/* The shuffle buffer (tf.data's): fill, draw a slot, move the last into it. */
static int
shuffled_next(struct loader *l, struct ld_elem **out, char *err,
    size_t errlen)
{
	size_t i;
	int r;

	if (!l->cf->shuffle)
		return interleave_next(l, out, err, errlen);
	while (!l->input_done && l->ebn < (size_t)l->cf->nshuf) {
		if (elems_room(&l->ebuf, &l->ebcap, l->ebn + 1,
		    (size_t)l->cf->nshuf) == -1)
			return -1;
		if ((r = interleave_next(l, &l->ebuf[l->ebn], err, errlen)) == -1)
			return -1;
		if (r == 0)
			l->input_done = 1;
		else
			l->ebn++;
	}
	if (l->ebn == 0)
		return 0;
	i = (size_t)rng_below(&l->re, l->ebn);
	*out = l->ebuf[i];
	l->ebuf[i] = l->ebuf[--l->ebn];
	return 1;
}

static void
epoch_start(struct loader *l)
{
	for (size_t i = 0; i < l->nsrc; i++)
		src_close(l, &l->src[i]);
	l->pos = l->ndead = 0;
	l->fbn = l->fnext = 0;
	l->input_done = 0;
	l->epoch_elems = 0;
	l->in_epoch = 1;
}

/* Epochs one after another. */
static int
epoch_next(struct loader *l, struct ld_elem **out, char *err, size_t errlen)
{
	int r;

	for (;;) {
		if (!l->in_epoch) {
			if (l->cf->epochs >= 0 && l->epoch >= (uint64_t)l->cf->epochs)
				return 0;
			epoch_start(l);
		}
		if ((r = shuffled_next(l, out, err, errlen)) != 0) {
			l->epoch_elems += r == 1;
			return r;
		}
		l->in_epoch = 0;
		l->epoch++;
		l->st.epochs++;
		if (l->epoch_elems == 0)
			return 0;	/* an empty dataset: no endless loop */
	}
}

void
ld_close(struct loader *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->nsrc; i++)
		src_close(l, &l->src[i]);
	for (size_t i = 0; i < l->ebn; i++)
		elem_free(l, l->ebuf[i]);
	for (size_t i = 0; i < l->nbatch; i++)
		elem_free(l, l->batch[i]);
	for (size_t i = 0; i < l->nspare; i++)
		elem_destroy(l, l->spare[i]);
	free(l->spare);
	if (l->out)
		for (size_t i = 0; i < l->cf->nt; i++) {
			free(l->out[i].v);
			free(l->out[i].bnd);
			free(l->out[i].pad);
		}
	free(l->out);
	free(l->src);
	free(l->ebuf);
	free(l->fbuf);
	free(l->batch);
	ex_free(&l->ex);
	ex_free(&l->exw);
	if (l->fi64)
		for (size_t i = 0; i < l->cf->nprim; i++)
			free(l->fi64[i]);
	free(l->fi64);
	free(l->fi64cap);
	free(l->fw);
	free(l->fsp);
	free(l->fval);
	free(l->fstride);
	free(l->fskip);
	free(l->iov);
	free(l);
}

void
ld_set_max_record(struct loader *l, uint64_t max_len)
{
	l->maxrec = max_len;
}

struct loader *
ld_open(struct ld_config *cf, const struct ld_dataset *d, uint64_t seed,
    char *err, size_t errlen)
{
	struct loader *l;
	size_t nsrc, nfb;

	if (ld_config_bind(cf, &d->mf, err, errlen) == -1)
		return NULL;
	if (d->nfiles == 0) {
		rp_seterr(err, errlen, "the dataset has no data files");
		return NULL;
	}
	if ((l = calloc(1, sizeof *l)) == NULL)
		goto nomem;
	l->cf = cf;
	l->ds = d;
	rng_seed(&l->rf, seed);
	rng_seed(&l->re, seed + 1);
	rng_seed(&l->rw, seed + 2);
	l->et = d->mf.allow_var_len ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE;
	ex_init(&l->ex);
	ex_init(&l->exw);
	l->ex.lazy_min = 1u << 20;	/* as tfr-cat's */
	/*
	 * More files open at once, or in the file buffer, than the dataset
	 * has would change nothing: the sources past the files are dead at
	 * their first turn, and the buffer never holds more than the files.
	 */
	nsrc = cf->shuffle ? (size_t)cf->nmix : 1;
	if (nsrc > d->nfiles)
		nsrc = d->nfiles;
	nfb = (size_t)cf->nfshuf < d->nfiles ? (size_t)cf->nfshuf : d->nfiles;
	if ((l->src = calloc(nsrc, sizeof *l->src)) == NULL)
		goto nomem;
	l->nsrc = nsrc;
	for (size_t i = 0; i < l->nsrc; i++)
		l->src[i].fd = -1;
	if ((l->fbuf = calloc(nfb, sizeof *l->fbuf)) == NULL ||
	    (l->out = calloc(cf->nt, sizeof *l->out)) == NULL)
		goto nomem;
	if (fast_setup(l) == -1)
		goto nomem;
	l->st.ntensors = cf->nt;
	return l;
nomem:
	rp_seterr(err, errlen, "%s", strerror(ENOMEM));
	ld_close(l);
	return NULL;
}

/*
 * The examples of output tensor i stacked and padded into dst, o->per
 * values an example (float32 values may be unaligned there).
 */
void
ld_out_fill(const struct loader *l, size_t i, void *dst0)
{
	const struct ld_tspec *ts = &l->cf->t[i];
	const struct ld_out *o = &l->out[i];
	enum mf_dtype dt = l->batch[0]->tv[i].dtype;
	size_t es = esz(dt), per = o->per;
	int rank = o->rank - 1, d;

	for (size_t b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];
		char *dst = at(dst0, b * per, dt);

		if (t->n == per) {
			if (per > 0)
				memcpy(dst, t->v, per * es);
			continue;
		}
		for (d = 1; d < rank; d++)
			if (t->shape[d] != o->shape[d + 1])
				break;
		if (d >= rank) {
			/* padded along the first axis only: one copy */
			if (t->n > 0)
				memcpy(dst, t->v, t->n * es);
			pad_fill(dst, t->n, per, dt, ts->padv);
			continue;
		}
		/* padded: copy row by row of the last dimension */
		pad_fill(dst, 0, per, dt, ts->padv);
		if (t->n == 0)
			continue;
		{
			size_t idx[LD_MAXRANK] = { 0 }, rows, r, off, last;

			last = rank ? (size_t)t->shape[rank - 1] : 1;
			rows = last ? t->n / last : 0;
			for (r = 0; r < rows; r++) {
				off = 0;
				for (d = 0; d < rank - 1; d++)
					off = off * (size_t)o->shape[d + 1] + idx[d];
				off = off * (rank ? (size_t)o->shape[rank] : 1);
				memcpy(at(dst, off, dt), cat(t->v, r * last, dt),
				    last * es);
				for (d = rank - 2; d >= 0; d--) {
					if (++idx[d] < (size_t)t->shape[d])
						break;
					idx[d] = 0;
				}
			}
		}
	}
}

/* Make l->out[i].v hold the batch, unless the examples are read directly. */
void
ld_out_ready(struct loader *l, size_t i)
{
	struct ld_out *o = &l->out[i];

	if (!o->direct && !o->ready) {
		ld_out_fill(l, i, o->v);
		o->ready = 1;
	}
}

/*
 * nnmaker's normalization of a batch o along its axis a (the example's
 * axis + 1), after padding, padded values included: for each line of
 * values along that axis, x -> (x - mean) / (sqrt(var + 1e-8) + 1e-8),
 * var the mean squared distance to the mean (tf.nn.moments).  Computed
 * in double precision and rounded to the dtype once.
 */
static void
normalize(struct ld_out *o, enum mf_dtype dt, int a)
{
	const double eps = 1e-8;
	size_t outer = 1, inner = 1, len = (size_t)o->shape[a], u, k, j;
	float *f = o->v;
	union ld_cell *c = o->v;
	int d;

	for (d = 0; d < a; d++)
		outer *= (size_t)o->shape[d];
	for (d = a + 1; d < o->rank; d++)
		inner *= (size_t)o->shape[d];
	if (len == 0)
		return;
	for (u = 0; u < outer; u++)
		for (k = 0; k < inner; k++) {
			size_t at = u * len * inner + k;
			double sum = 0, mean, var = 0, sd, x;

			for (j = 0; j < len; j++)
				sum += dt == MF_FLOAT32 ? f[at + j * inner] :
				    c[at + j * inner].f;
			mean = sum / (double)len;
			for (j = 0; j < len; j++) {
				x = (dt == MF_FLOAT32 ? f[at + j * inner] :
				    c[at + j * inner].f) - mean;
				var += x * x;
			}
			sd = sqrt(var / (double)len + eps) + eps;
			for (j = 0; j < len; j++) {
				size_t q = at + j * inner;

				if (dt == MF_FLOAT32)
					f[q] = (float)((f[q] - mean) / sd);
				else
					c[q] = cell_f(dt, (c[q].f - mean) / sd);
			}
		}
}

/* Stack (and pad) the examples of the batch into l->out. */
static int
assemble(struct loader *l, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	size_t b, i, nb = l->nbatch;

	for (i = 0; i < cf->nt; i++) {
		const struct ld_tspec *ts = &cf->t[i];
		struct ld_out *o = &l->out[i];
		int rank = l->batch[0]->tv[i].rank, d;
		size_t per, n, es;
		enum mf_dtype dt;
		char s1[128], s2[128];

		o->rank = rank + 1;
		o->shape[0] = (int64_t)nb;
		for (d = 0; d < rank; d++) {
			int64_t mx = 0;

			for (b = 0; b < nb; b++) {
				const struct ld_tv *t = &l->batch[b]->tv[i];

				if (!cf->padding && memcmp(t->shape,
				    l->batch[0]->tv[i].shape, sizeof t->shape[0] *
				    (size_t)rank) != 0) {
					shape_str(s1, sizeof s1, l->batch[0]->tv[i].shape, rank);
					shape_str(s2, sizeof s2, t->shape, rank);
					rp_seterr(err, errlen, "batch %" PRIu64 ": "
					    "tensor '%s': examples of shapes %s and "
					    "%s cannot be batched without padding",
					    l->st.batches, ts->name, s1, s2);
					return -1;
				}
				if (t->shape[d] > mx)
					mx = t->shape[d];
			}
			if (cf->padding && ts->pad_given && ts->pad_shape[d] >= 0) {
				if (mx > ts->pad_shape[d]) {
					rp_seterr(err, errlen, "batch %" PRIu64 ": "
					    "tensor '%s': dimension %d is %" PRId64
					    ", above its padded size %" PRId64,
					    l->st.batches, ts->name, d, mx,
					    ts->pad_shape[d]);
					return -1;
				}
				mx = ts->pad_shape[d];
			}
			o->shape[d + 1] = mx;
		}
		dt = l->batch[0]->tv[i].dtype;
		es = esz(dt);
		for (d = 0, per = 1; d < rank; d++)
			per = smul(per, (uint64_t)o->shape[d + 1]);
		if (smul(smul(per, nb), es) > cf->maxbytes) {
			shape_str(s1, sizeof s1, o->shape, o->rank);
			rp_seterr(err, errlen, "batch %" PRIu64 ": tensor '%s': %s "
			    "%s it takes %" PRIu64 " bytes as %s, more than the %"
			    PRIu64 " a tensor of a batch may take", l->st.batches,
			    ts->name, cf->padding ? "padded to" : "of shape", s1,
			    smul(smul(per, nb), es), mf_dtype_name(dt),
			    cf->maxbytes);
			return -1;
		}
		n = per * nb;
		o->per = per;
		o->n = n;
		o->cells += n;
		o->direct = !ts->norm;	/* a normalized batch is made anew */
		for (b = 0; b < nb && o->direct; b++)
			o->direct = l->batch[b]->tv[i].n == per;
		if (o->direct)
			goto bounds;
		if (n > o->cap || o->v == NULL) {	/* a block even for none */
			void *q = realloc(o->v, (n ? n : 1) * es);

			if (q == NULL)
				return -1;
			o->v = q;
			o->cap = n;
		}
		/* copied when it is read (ld_out_ready()), or straight to the output */
		o->ready = 0;
		for (b = 0; b < nb; b++)
			o->padded += per - l->batch[b]->tv[i].n;
		if (ts->norm) {
			ld_out_ready(l, i);
			normalize(o, dt, ts->norm_axis + 1);
		}
bounds:
		/* boundaries of the primaries (discrete) */
		if (cf->type == LD_DISCRETE && i < cf->nprim) {
			size_t bw = 0;

			for (b = 0; b < nb; b++)
				if (l->batch[b]->nb > bw)
					bw = l->batch[b]->nb;
			if (bw * nb > o->bcap) {
				void *q = realloc(o->bnd, bw * nb * sizeof *o->bnd);

				if (q == NULL)
					return -1;
				o->bnd = q;
				o->bcap = bw * nb;
			}
			o->bw = bw;
			for (b = 0; b < nb; b++) {
				const struct ld_elem *e = l->batch[b];

				for (size_t k = 0; k < bw; k++)
					o->bnd[b * bw + k] = k < e->nb ?
					    e->bounds[i * e->nb + k] : -1;
			}
		}
	}
	return 0;
}

int
ld_next(struct loader *l, char *err, size_t errlen)
{
	struct ld_elem *e;
	int r;

	if (errlen)
		err[0] = '\0';
	for (size_t i = 0; i < l->nbatch; i++)
		elem_free(l, l->batch[i]);
	l->nbatch = 0;
	if (l->ended)
		return 0;
	while (l->nbatch < (size_t)l->cf->batch) {
		if ((r = epoch_next(l, &e, err, errlen)) == -1) {
			if (err[0] == '\0')
				rp_seterr(err, errlen, "%s", strerror(errno));
			l->ended = 1;
			return -1;
		}
		if (r == 0) {
			l->ended = 1;
			break;
		}
		if (elems_room(&l->batch, &l->bcap, l->nbatch + 1,
		    (size_t)l->cf->batch) == -1) {
			elem_free(l, e);
			rp_seterr(err, errlen, "%s", strerror(ENOMEM));
			l->ended = 1;
			return -1;
		}
		l->batch[l->nbatch++] = e;
	}
	if (l->nbatch == 0 || (l->nbatch < (size_t)l->cf->batch && l->cf->drop))
		return 0;
	if (assemble(l, err, errlen) == -1) {
		if (err[0] == '\0')
			rp_seterr(err, errlen, "%s", strerror(errno));
		l->ended = 1;
		return -1;
	}
	l->st.batches++;
	l->st.examples += l->nbatch;
	return 1;
}

void
ld_get_stats(const struct loader *l, struct ld_stats *s)
{
	*s = l->st;
}

const char *
ld_tensor_name(const struct loader *l, size_t i)
{
	return l->cf->t[i].name;
}

double
ld_tensor_padding(const struct loader *l, size_t i)
{
	return l->out[i].cells ? (double)l->out[i].padded / l->out[i].cells : 0;
}

