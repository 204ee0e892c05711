/*
 * Fuzz the Example decoder: any bytes that decode must re-encode to a
 * canonical payload that decodes to the same thing and re-encodes to
 * the same bytes; the canonical fast path agrees with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The loaders' fast path agrees with the decoder: a payload whose
 * features "x" and "y" (and feature lists "x" and "y") it takes, with
 * readers that take what it found, decodes, to the same values.
 */
static void
check_canonical(const uint8_t *p, size_t n, enum ex_type t)
{
	static struct example g;
	static const struct ex_want want[4] = { { "x", 1, 0 }, { "y", 1, 0 },
	    { "x", 1, 1 }, { "y", 1, 1 } };
	struct ex_span sp[4];
	const uint8_t *v[4];
	int64_t iv[4][64];
	long cnt[4];
	size_t stride[4], skip[4], w[4], i, k;
	int kind[4];

	if (ex_canonical_find(p, n, t == EX_TYPE_SEQUENCE, 4, want, sp) != 1)
		return;
	for (i = 0; i < 4; i++) {
		kind[i] = 0;
		if (sp[i].p == NULL)
			continue;
		kind[i] = -1;
		if (want[i].list) {
			for (w[i] = 1; w[i] <= 16 && kind[i] < 0; w[i]++)
				if ((cnt[i] = ex_canonical_float_steps(sp[i],
				    w[i], &stride[i], &skip[i])) >= 0)
					kind[i] = 3;
			w[i]--;
		} else if ((cnt[i] = ex_canonical_floats(sp[i], &v[i])) >= 0)
			kind[i] = 1;
		else if ((cnt[i] = ex_canonical_int64s(sp[i], iv[i], 64)) >= 0)
			kind[i] = 2;
		if (kind[i] < 0)
			return;	/* the loader decodes this one */
	}
	if (ex_decode(&g, p, n, t) == -1)
		abort();
	for (i = 0; i < 4; i++) {
		const struct ex_feature *f = want[i].list ? NULL :
		    ex_find(&g, want[i].name, 1);
		const struct ex_flist *fl = want[i].list ?
		    ex_find_list(&g, want[i].name, 1) : NULL;

		if (kind[i] == 0) {
			if (f != NULL || fl != NULL)
				abort();
		} else if (kind[i] == 3) {
			if (fl == NULL || fl->n != (size_t)cnt[i])
				abort();
			for (k = 0; k < fl->n; k++)
				if (fl->v[k].kind != EX_FLOAT || fl->v[k].n != w[i] ||
				    memcmp(fl->v[k].f32, sp[i].p + k * stride[i] +
				    skip[i], 4 * w[i]) != 0)
					abort();
		} else if (f == NULL || f->n != (size_t)cnt[i] || f->kind !=
		    (kind[i] == 1 ? EX_FLOAT : EX_INT64) || (f->n > 0 &&
		    memcmp(kind[i] == 1 ? (const void *)f->f32 :
		    (const void *)f->i64, kind[i] == 1 ? (const void *)v[i] :
		    (const void *)iv[i], f->n * (kind[i] == 1 ? 4 : 8)) != 0))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct example a, b;
	static struct buf x, y;
	static int64_t *vals;
	static size_t cap;
	long nv;
	enum ex_type t;
	size_t i;
	const struct ex_feature *f;

	if (size < 1)
		return 0;
	t = (enum ex_type)(data[0] % 3);
	data++;
	size--;
	if (t != EX_TYPE_AUTO)
		check_canonical(data, size, t);
	if (ex_decode(&a, data, size, t) == -1) {
		if (ex_strerror(&a)[0] == '\0')
			abort();
		if (ex_check(&b, data, size, t) != -1)
			abort();	/* the checker must reject what the decoder rejects */
		return 0;
	}
	if (ex_check(&b, data, size, t) != 0)
		abort();
	x.len = y.len = 0;
	if (ex_encode(&a, &x) == -1)
		abort();
	if (ex_decode(&b, x.p, x.len, a.seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE) == -1)
		abort();
	if (ex_encode(&b, &y) == -1)
		abort();
	if (x.len != y.len || (x.len && memcmp(x.p, y.p, x.len) != 0))
		abort();
	if (a.nfeat != b.nfeat || a.nlists != b.nlists)
		abort();
	for (i = 0; i < a.nfeat; i++)
		if (a.feat[i].n != b.feat[i].n || a.feat[i].kind != b.feat[i].kind)
			abort();
	/* The hot-path accessor agrees with the decoder. */
	if (!a.seq && a.nfeat > 0) {
		f = &a.feat[0];
		if (f->keylen < 64 && memchr(f->key, 0, f->keylen) == NULL) {
			char name[64];

			memcpy(name, f->key, f->keylen);
			name[f->keylen] = '\0';
			nv = ex_int64_values(data, size, name, &vals, &cap);
			if (f->kind == EX_INT64 ? nv != (long)f->n : nv != -1)
				abort();
			if (f->kind == EX_INT64 && f->n &&
			    memcmp(vals, f->i64, f->n * sizeof(int64_t)) != 0)
				abort();
		}
	}
	return 0;
}
