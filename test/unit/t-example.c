/*
 * Example codec: every accepted wire form, last-wins rules, presence,
 * canonical encoding, and malformed input.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "rng.h"
#include "tap.h"
#include "varint_values.h"

#define B(s) (const uint8_t *)(s), sizeof(s) - 1

static int
same(const struct buf *b, const char *s, size_t n)
{
	return b->len == n && memcmp(b->p, s, n) == 0;
}

/*
 * A feature decoded whole (x) and the same feature as a decode with
 * lazy_min = 1 gives it (y): the same kind and count, and when y was
 * left in the record, the values ex_int64_open_feature() and
 * ex_bytes_open_feature() read from it are x's.  Counts y's left in
 * the record in *lazies.
 */
static int
feature_agrees(const struct ex_feature *x, const struct ex_feature *y,
    int *lazies)
{
	struct ex_int64_iter it;
	struct ex_bytes_iter bit;
	struct ex_bytes bpart[3];
	int64_t part[3];
	size_t j, k, got;
	int ok = 1;

	if (x->kind != y->kind || x->n != y->n || x->keylen != y->keylen)
		return 0;
	if (y->lazy == NULL) {
		if (x->kind == EX_INT64 && x->n > 0 &&
		    memcmp(x->i64, y->i64, x->n * sizeof(int64_t)) != 0)
			ok = 0;
		return ok;
	}
	(*lazies)++;
	if (y->i64 != NULL || y->b != NULL)
		return 0;
	if (y->kind == EX_BYTES) {
		ex_bytes_open_feature(&bit, y);
		for (got = 0; (k = ex_bytes_next(&bit, bpart, 3)) > 0; got += k)
			for (j = 0; j < k; j++)
				if (got + j >= x->n ||
				    bpart[j].n != x->b[got + j].n ||
				    bpart[j].p != x->b[got + j].p)
					ok = 0;
		return ok && got == x->n;
	}
	ex_int64_open_feature(&it, y);
	for (got = 0; (k = ex_int64_next(&it, part, 3)) > 0; got += k)
		for (j = 0; j < k; j++)
			if (got + j >= x->n || part[j] != x->i64[got + j])
				ok = 0;
	return ok && got == x->n;
}

/*
 * Decoding with lazy_min = 1 accepts what ex_decode() accepts, gives
 * the same features and feature-list steps, and the values of those
 * left in the record are the decoded ones.  Returns 0 when they
 * differ, else 1 + the number left in the record.
 */
static int
lazy_agrees(const uint8_t *p, size_t n)
{
	struct example a, b;
	size_t i, j;
	int ra, rb, ok = 1, lazies = 0;

	ex_init(&a);
	ex_init(&b);
	b.lazy_min = 1;
	ra = ex_decode(&a, p, n, EX_TYPE_AUTO);
	rb = ex_decode(&b, p, n, EX_TYPE_AUTO);
	if (ra != rb || (ra == 0 && (a.nfeat != b.nfeat || a.nlists != b.nlists)))
		ok = 0;
	for (i = 0; ok && ra == 0 && i < a.nfeat; i++)
		ok = feature_agrees(&a.feat[i], &b.feat[i], &lazies);
	for (i = 0; ok && ra == 0 && i < a.nlists; i++) {
		if (a.lists[i].n != b.lists[i].n) {
			ok = 0;
			break;
		}
		for (j = 0; ok && j < a.lists[i].n; j++)
			ok = feature_agrees(&a.lists[i].v[j], &b.lists[i].v[j],
			    &lazies);
	}
	if (ok && ra == 0) {
		/* and both encode to the same bytes */
		struct buf ea = { 0 }, eb = { 0 };

		ok = ex_encode(&a, &ea) == 0 && ex_encode(&b, &eb) == 0 &&
		    ea.len == eb.len && (ea.len == 0 || memcmp(ea.p, eb.p, ea.len) == 0);
		rp_buf_free(&ea);
		rp_buf_free(&eb);
	}
	ex_free(&a);
	ex_free(&b);
	return ok ? 1 + lazies : 0;
}

/*
 * ex_int64_open()/ex_int64_next() in parts of 1, 2, 3 and 1000 values
 * give what ex_int64_values() gives, and the same result codes.
 */
static int
iter_agrees(const uint8_t *p, size_t n, const char *name)
{
	static const size_t parts[] = { 1, 2, 3, 1000 };
	struct ex_int64_iter it;
	int64_t *v = NULL, part[1000];
	size_t cap = 0, got, k, i;
	long want = ex_int64_values(p, n, name, &v, &cap);
	int ok = 1, rc;

	for (i = 0; i < 4 && ok; i++) {
		rc = ex_int64_open(&it, p, n, name);
		if (rc != (want < 0 ? (int)want : 0) ||
		    (rc == 0 && it.n != (uint64_t)want)) {
			ok = 0;
			break;
		}
		got = 0;
		while (rc == 0 && (k = ex_int64_next(&it, part, parts[i])) > 0) {
			if (k > parts[i] || got + k > (size_t)want ||
			    memcmp(part, v + got, k * sizeof *v) != 0)
				ok = 0;
			got += k;
		}
		if (rc == 0 && (got != (size_t)want || it.left != 0))
			ok = 0;
	}
	free(v);
	return ok;
}

/* The record ex_encode_int64_lists() makes, in a fresh buffer. */
static uint8_t *
lists_record(struct ex_lists *e, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used,
    size_t *size)
{
	uint8_t *p;

	if ((*size = ex_encode_int64_lists(e, n, names, vals, lens,
	    used)) == SIZE_MAX || (p = malloc(*size)) == NULL)
		return NULL;
	ex_lists_put(e, p);
	return p;
}

/*
 * The int64 lists encoder writes what the Example encoder writes, on
 * random rows: lists of every width class (single bytes, up to 2 or
 * 4 bytes, any size up to 10, negative), padding bounds or none, empty
 * lists, and names in any order, changing from row to row.
 */
static void
test_lists_random(void)
{
	static const char *const pool[] = { "targets", "inputs", "a", "b",
	    "decoder_positions", "encoder_input_tokens", "z", "inputs_x",
	    "input", "", "zz", "m" };
	const char *names[12];
	const int64_t *vp[12];
	int64_t *v[12];
	size_t lens[12], used[12], n, i, j, k, sz, trial, bad = 0;
	struct ex_lists *e = ex_lists_new();
	struct ex_builder b;
	struct buf want = { 0 };
	uint8_t *got;
	struct rng r;
	struct example ex;
	const struct ex_feature *f;
	int widest;

	ex_init(&ex);
	exb_init(&b);
	rng_seed(&r, 9);
	for (i = 0; i < 12; i++)
		v[i] = malloc(600 * sizeof(int64_t));
	for (trial = 0; trial < 4000 && !bad; trial++) {
		n = 1 + (size_t)rng_below(&r, 12);
		for (i = 0; i < n; i++) {	/* distinct names, shuffled */
			names[i] = pool[i];
			j = (size_t)rng_below(&r, (uint32_t)i + 1);
			names[i] = names[j];
			names[j] = pool[i];
		}
		exb_reset(&b);
		for (i = 0; i < n; i++) {
			lens[i] = rng_below(&r, 4) == 0 ? 0 :
			    (size_t)rng_below(&r, 600);
			used[i] = lens[i] ?
			    (size_t)rng_below(&r, (uint32_t)lens[i] + 1) : 0;
			widest = (int)rng_below(&r, 5);
			for (j = 0; j < lens[i]; j++) {
				if (j >= used[i] || rng_below(&r, 8) == 0)
					v[i][j] = 0;
				else if (widest == 0)
					v[i][j] = (int64_t)rng_below(&r, 128);
				else if (widest == 1)
					v[i][j] = value_of_size(&r,
					    1 + (int)rng_below(&r, 4));
				else if (widest == 2)
					v[i][j] = (int64_t)rng_below(&r, 32000);
				else if (widest == 3)
					v[i][j] = (int64_t)rng_below(&r, 1u << 14);
				else
					v[i][j] = value_of_size(&r,
					    1 + (int)rng_below(&r, 10));
			}
			vp[i] = v[i];
			exb_int64(&b, names[i], v[i], lens[i]);
		}
		want.len = 0;
		exb_encode(&b, &want);
		/* Both share the packer: check it against the decoder. */
		if (ex_decode(&ex, want.p, want.len, EX_TYPE_EXAMPLE) != 0)
			bad = 1;
		for (i = 0; i < n && !bad; i++) {
			f = ex_get(&ex, names[i]);
			if (f == NULL || f->kind != EX_INT64 || f->n != lens[i] ||
			    (lens[i] > 0 && memcmp(f->i64, v[i],
			    lens[i] * sizeof(int64_t)) != 0))
				bad = 1;
		}
		if (bad) {
			TEST(0, "trial %zu: the Example encoder's record does "
			    "not decode to its values", trial);
			break;
		}
		k = trial % 3;		/* exact bounds, none, or loose ones */
		if (k == 2)
			for (i = 0; i < n; i++)
				used[i] += (lens[i] - used[i]) / 2;
		got = lists_record(e, n, names, vp, lens, k == 1 ? NULL : used,
		    &sz);
		if (got == NULL || sz != want.len ||
		    memcmp(got, want.p, sz) != 0) {
			TEST(0, "trial %zu: %zu bytes, the Example encoder %zu",
			    trial, sz, want.len);
			bad = 1;
		}
		free(got);
	}
	TEST(!bad, "int64 lists: the Example encoder's bytes on random rows");
	for (i = 0; i < 12; i++)
		free(v[i]);
	ex_free(&ex);
	rp_buf_free(&want);
	exb_free(&b);
	ex_lists_free(e);
}

/*
 * Feature-list steps of one packed float list each are taken without
 * the general field walk; lazy_min > 0 turns that off.  Random
 * SequenceExamples whose steps mix that form with others (unpacked
 * floats, other kinds, extra fields, lengths that do not add up, cut
 * short) decode the same both ways: result, message and values.
 */
static void
put_ld(struct buf *b, uint8_t tag, const void *p, size_t n)
{
	uint8_t t[16], *q;

	rp_buf_putc(b, tag);
	q = ex_put_varint(t, n);
	rp_buf_append(b, t, (size_t)(q - t));
	rp_buf_append(b, p, n);
}

static void
test_float_steps_fast(void)
{
	struct example a, g;
	struct rng r;
	struct buf rec = { 0 }, lists = { 0 }, ent = { 0 }, fl = { 0 }, ft = { 0 }, vl = { 0 };
	int same = 1, fast = 0, bad = 0;

	ex_init(&a);
	ex_init(&g);
	g.lazy_min = SIZE_MAX;	/* never lazy: only the general walk */
	rng_seed(&r, 11);
	for (int it = 0; it < 3000 && same; it++) {
		int nsteps = (int)rng_below(&r, 6), ra, rg;

		fl.len = 0;
		for (int s = 0; s < nsteps; s++) {
			int form = (int)rng_below(&r, 10), nv = (int)rng_below(&r, 5);
			uint32_t u;

			ft.len = vl.len = 0;
			for (int k = 0; k < nv; k++) {
				u = (uint32_t)rng_below(&r, 4) == 0 ? 0x7f800001u :
				    (uint32_t)rng_below(&r, 1u << 31) * 2u;
				if (form == 1) {	/* unpacked: one fixed32 field a value */
					rp_buf_putc(&vl, 0x0d);
				}
				rp_buf_append(&vl, &u, 4);
			}
			if (form == 1)
				put_ld(&ft, 0x12, vl.p, vl.len);
			else if (form == 2) {	/* an int64 list */
				uint8_t one = 1;
				struct buf il = { 0 };

				put_ld(&il, 0x0a, &one, 1);
				put_ld(&ft, 0x1a, il.p, il.len);
				rp_buf_free(&il);
			} else {
				struct buf pl = { 0 };

				put_ld(&pl, 0x0a, vl.p, vl.len);
				if (form == 3)	/* a field after the values */
					rp_buf_append(&pl, "\x10\x01", 2);
				put_ld(&ft, 0x12, pl.p, pl.len);
				rp_buf_free(&pl);
				if (form == 4)	/* a second list in the Feature */
					put_ld(&ft, 0x12, "", 0);
			}
			if (form == 5 && ft.len > 2)	/* a length past its end */
				ft.p[1] = (uint8_t)(ft.p[1] + 1);
			if (form == 6)	/* a value not 4 bytes a float */
				rp_buf_putc(&ft, 0x12), rp_buf_putc(&ft, 0x02),
				    rp_buf_putc(&ft, 0x0a), rp_buf_putc(&ft, 0x01);
			put_ld(&fl, 0x0a, ft.p, ft.len);
			if (form == 7)	/* an unknown field between steps */
				rp_buf_append(&fl, "\x10\x05", 2);
		}
		ent.len = lists.len = rec.len = 0;
		put_ld(&ent, 0x0a, "x", 1);
		put_ld(&ent, 0x12, fl.p, fl.len);
		put_ld(&lists, 0x0a, ent.p, ent.len);
		put_ld(&rec, 0x12, lists.p, lists.len);
		if (rng_below(&r, 8) == 0 && rec.len > 1)
			rec.len -= 1 + rng_below(&r, rec.len - 1);	/* cut short */
		ra = ex_decode(&a, rec.p, rec.len, EX_TYPE_SEQUENCE);
		rg = ex_decode(&g, rec.p, rec.len, EX_TYPE_SEQUENCE);
		if (ra != rg)
			same = 0;
		else if (ra == -1) {
			bad++;
			same = strcmp(ex_strerror(&a), ex_strerror(&g)) == 0;
		} else if (a.nlists != g.nlists)
			same = 0;
		else
			for (size_t i = 0; i < a.nlists && same; i++) {
				if (a.lists[i].n != g.lists[i].n) {
					same = 0;
					break;
				}
				for (size_t k = 0; k < a.lists[i].n && same; k++) {
					const struct ex_feature *x = &a.lists[i].v[k],
					    *y = &g.lists[i].v[k];

					fast += x->kind == EX_FLOAT;
					same = x->kind == y->kind && x->n == y->n &&
					    (x->kind != EX_FLOAT || x->n == 0 ||
					    memcmp(x->f32, y->f32, 4 * x->n) == 0) &&
					    (x->kind != EX_INT64 || x->n == 0 ||
					    memcmp(x->i64, y->i64, 8 * x->n) == 0);
				}
			}
		if (!same)
			printf("# differs at iteration %d: %d/%d '%s' '%s'\n", it,
			    ra, rg, ex_strerror(&a), ex_strerror(&g));
	}
	TEST(same && fast > 1000 && bad > 100, "float steps without the general walk "
	    "decode as with it (%d float steps, %d faulty records)", fast, bad);
	ex_free(&a);
	ex_free(&g);
	rp_buf_free(&rec);
	rp_buf_free(&lists);
	rp_buf_free(&ent);
	rp_buf_free(&fl);
	rp_buf_free(&ft);
	rp_buf_free(&vl);
}

/*
 * The loaders' fast path (ex_canonical_find() and the readers of what
 * it finds) agrees with ex_decode() on whatever it accepts: random
 * Examples and SequenceExamples written in the canonical form, then
 * perhaps damaged (a byte changed, cut short, an entry repeated or out
 * of order, an unknown field).  Canonical records are always accepted.
 */
static void
put_floats(struct buf *ft, struct rng *r, size_t n)
{
	struct buf pl = { 0 }, vl = { 0 };

	for (size_t k = 0; k < n; k++) {
		uint32_t u = (uint32_t)rng_below(r, 1u << 31) * 2u;

		rp_buf_append(&vl, &u, 4);
	}
	put_ld(&pl, 0x0a, vl.p, vl.len);
	put_ld(ft, 0x12, pl.p, pl.len);
	rp_buf_free(&pl);
	rp_buf_free(&vl);
}

static void
put_feature(struct buf *ft, struct rng *r, int kind, size_t n)
{
	struct buf pl = { 0 }, vl = { 0 };
	uint8_t t[16], *q;

	if (kind == 0) {
		put_floats(ft, r, n);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		if (kind == 1) {
			q = ex_put_varint(t, rng_below(r, 4) ? rng_below(r, 300) :
			    (uint64_t)-(int64_t)rng_below(r, 5));
			rp_buf_append(&vl, t, (size_t)(q - t));
		} else
			put_ld(&vl, 0x0a, "abc", rng_below(r, 4));
	}
	if (kind == 1)
		put_ld(&pl, 0x0a, vl.p, vl.len);
	put_ld(ft, kind == 1 ? 0x1a : 0x0a, kind == 1 ? pl.p : vl.p,
	    kind == 1 ? pl.len : vl.len);
	rp_buf_free(&pl);
	rp_buf_free(&vl);
}

/* A map message: entries of the keys chosen (sorted), lists or features. */
static void
put_map(struct buf *m, struct rng *r, const char *const *keys, int nk,
    int list, size_t w, struct buf *ents, int *twist)
{
	struct buf ent = { 0 }, val = { 0 }, st = { 0 };

	for (int i = 0; i < nk; i++) {
		if (rng_below(r, 3) == 0)
			continue;
		val.len = ent.len = 0;
		if (list) {
			size_t steps = rng_below(r, 5);

			for (size_t s = 0; s < steps; s++) {
				st.len = 0;
				if (rng_below(r, 12) == 0)
					put_feature(&st, r, (int)rng_below(r, 3), w);
				else
					put_floats(&st, r, rng_below(r, 10) ? w : w + 1);
				put_ld(&val, 0x0a, st.p, st.len);
			}
		} else
			put_feature(&val, r, (int)rng_below(r, 3),
			    rng_below(r, 3) ? w : rng_below(r, 4));
		if (*twist == 2) {	/* a second list in the value: merged */
			put_floats(&val, r, 1);
			*twist = -1;
		}
		put_ld(&ent, 0x0a, keys[i], strlen(keys[i]));
		put_ld(&ent, 0x12, val.p, val.len);
		if (*twist == 1) {	/* a second value in the entry: last wins */
			val.len = 0;
			put_floats(&val, r, w);
			put_ld(&ent, 0x12, val.p, val.len);
			*twist = -1;
		}
		put_ld(m, 0x0a, ent.p, ent.len);
		if (ents->len == 0 || rng_below(r, 2))
			rp_buf_append(ents, m->p + m->len - ent.len - 1 -
			    ex_varint_size(ent.len), ent.len + 1 +
			    ex_varint_size(ent.len));
	}
	rp_buf_free(&ent);
	rp_buf_free(&val);
	rp_buf_free(&st);
}

static void
test_canonical_random(void)
{
	static const char *const fkeys[] = { "a", "id", "x", "y" };
	static const char *const lkeys[] = { "s", "x", "y" };
	struct example g;
	struct rng r;
	struct buf rec = { 0 }, m = { 0 }, one = { 0 };
	struct ex_want want[2] = { { "x", 1, 0 }, { "y", 1, 0 } };
	struct ex_span sp[2];
	int64_t iv[64];
	int agree = 1, canon = 0, found = 0, refused = 0;

	ex_init(&g);
	rng_seed(&r, 12);
	for (int it = 0; it < 20000 && agree; it++) {
		int seq = (int)rng_below(&r, 2), damage = (int)rng_below(&r, 7);
		size_t w = 1 + rng_below(&r, 17);
		int fc, dup = 0, kind[2], twist;

		rec.len = 0;
		m.len = one.len = 0;
		twist = damage == 5 ? 1 + (int)rng_below(&r, 2) : 0;
		put_map(&m, &r, fkeys, 4, 0, w, &one, &twist);
		if (damage == 3 && one.len > 0) {	/* an entry again: last wins */
			rp_buf_append(&m, one.p, one.len);
			dup = 1;
		}
		if (m.len > 0 || rng_below(&r, 2))
			put_ld(&rec, 0x0a, m.p, m.len);
		if (seq) {
			m.len = one.len = 0;
			put_map(&m, &r, lkeys, 3, 1, w, &one, &twist);
			if (damage == 3 && one.len > 0) {
				rp_buf_append(&m, one.p, one.len);
				dup = 1;
			}
			if (m.len > 0 || rng_below(&r, 2))
				put_ld(&rec, 0x12, m.p, m.len);
		}
		want[0].list = want[1].list = seq && rng_below(&r, 3) != 0;
		if (damage == 1 && rec.len > 0)
			rec.p[rng_below(&r, rec.len)] ^= (uint8_t)(1 + rng_below(&r, 255));
		else if (damage == 2 && rec.len > 1)
			rec.len -= 1 + rng_below(&r, rec.len - 1);
		else if (damage == 3 && dup)
			;
		else if (damage == 4)
			rp_buf_append(&rec, "\x18\x05", 2);
		else if (damage == 5 && twist == -1)
			;
		else
			damage = 0;
		fc = ex_canonical_find(rec.p, rec.len, seq, 2, want, sp);
		canon += fc == 1;
		if (damage == 0 && fc != 1) {
			printf("# iteration %d: a canonical record refused\n", it);
			agree = 0;
		}
		if (fc != 1) {
			refused++;
			continue;
		}
		/* the values found must be read by a reader, as the loaders do */
		for (int i = 0; i < 2; i++) {
			const uint8_t *v;
			size_t stride, skip;

			kind[i] = sp[i].p == NULL ? 0 : want[i].list ?
			    (ex_canonical_float_steps(sp[i], w, &stride,
			    &skip) >= 0 ? 3 : -1) :
			    ex_canonical_floats(sp[i], &v) >= 0 ? 1 :
			    ex_canonical_int64s(sp[i], iv, 64) >= 0 ? 2 : -1;
		}
		if (kind[0] < 0 || kind[1] < 0)
			continue;
		if (ex_decode(&g, rec.p, rec.len, seq ? EX_TYPE_SEQUENCE :
		    EX_TYPE_EXAMPLE) == -1) {
			printf("# iteration %d: taken, but does not decode: %s\n",
			    it, ex_strerror(&g));
			agree = 0;
			break;
		}
		for (int i = 0; i < 2 && agree; i++) {
			const struct ex_feature *x = NULL;
			const struct ex_flist *fl = NULL;
			const uint8_t *v;
			size_t stride, skip;
			long n;

			if (want[i].list)
				fl = ex_find_list(&g, want[i].name, 1);
			else
				x = ex_find(&g, want[i].name, 1);
			if (kind[i] == 0) {
				agree = x == NULL && fl == NULL;
				continue;
			}
			found++;
			if (kind[i] == 3) {
				n = ex_canonical_float_steps(sp[i], w, &stride, &skip);
				agree = fl != NULL && (size_t)n == fl->n;
				for (long s = 0; s < n && agree; s++)
					agree = fl->v[s].kind == EX_FLOAT &&
					    fl->v[s].n == w && memcmp(fl->v[s].f32,
					    sp[i].p + (size_t)s * stride + skip,
					    4 * w) == 0;
			} else if (kind[i] == 1) {
				n = ex_canonical_floats(sp[i], &v);
				agree = x != NULL && x->kind == EX_FLOAT &&
				    (size_t)n == x->n && (n == 0 ||
				    memcmp(x->f32, v, 4 * (size_t)n) == 0);
			} else {
				n = ex_canonical_int64s(sp[i], iv, 64);
				agree = x != NULL && x->kind == EX_INT64 &&
				    (size_t)n == x->n && (n == 0 ||
				    memcmp(x->i64, iv, 8 * (size_t)n) == 0);
			}
			if (!agree)
				printf("# iteration %d: '%s' differs\n", it,
				    want[i].name);
		}
	}
	TEST(agree && canon > 5000 && found > 3000 && refused > 3000,
	    "the canonical fast path agrees with ex_decode (%d taken, %d "
	    "features read, %d refused)", canon, found, refused);
	ex_free(&g);
	rp_buf_free(&rec);
	rp_buf_free(&m);
	rp_buf_free(&one);
}

/*
 * What ex_canonical_find() takes beyond the order ex_encode() writes
 * (keys in any order, several Features messages) and what it leaves to
 * the decoder (a wanted key twice), and the Features that
 * ex_canonical_feature() reads.
 */
static void
test_canonical_forms(void)
{
	/* y: int64 [1, 2, 300] before x: float [1.0] */
	static const uint8_t ent_y[] = { 0x0a, 0x0d, 0x0a, 0x01, 'y', 0x12,
	    0x08, 0x1a, 0x06, 0x0a, 0x04, 0x01, 0x02, 0xac, 0x02 };
	static const uint8_t ent_x[] = { 0x0a, 0x0d, 0x0a, 0x01, 'x', 0x12,
	    0x08, 0x12, 0x06, 0x0a, 0x04, 0x00, 0x00, 0x80, 0x3f };
	static const struct {
		const char	*what;
		uint8_t		 f[12];
		size_t		 n;
		int		 kind;
		size_t		 off, len;	/* of the values in f */
	} feats[] = {
		{ "no list", { 0 }, 0, EX_NONE, 0, 0 },
		{ "an empty int64 list", { 0x1a, 0x00 }, 2, EX_INT64, 2, 0 },
		{ "an empty float list", { 0x12, 0x00 }, 2, EX_FLOAT, 2, 0 },
		{ "two bytes values", { 0x0a, 0x05, 0x0a, 0x01, 'a', 0x0a,
		    0x00 }, 7, EX_BYTES, 2, 5 },
		{ "a bytes value of another field", { 0x0a, 0x03, 0x12, 0x01,
		    'a' }, 5, -1, 0, 0 },
		{ "a float chunk of 3 bytes", { 0x12, 0x05, 0x0a, 0x03, 1, 2,
		    3 }, 7, -1, 0, 0 },
		{ "two int64 chunks", { 0x1a, 0x06, 0x0a, 0x01, 0x05, 0x0a,
		    0x01, 0x06 }, 8, -1, 0, 0 },
		{ "an unknown field", { 0x22, 0x00 }, 2, -1, 0, 0 },
		{ "a second list", { 0x1a, 0x00, 0x1a, 0x00 }, 4, -1, 0, 0 },
		{ "a list past the end", { 0x1a, 0x05, 0x0a, 0x01 }, 4, -1, 0,
		    0 },
	};
	struct ex_want want[2] = { { "x", 1, 0 }, { "y", 1, 0 } };
	struct ex_span sp[2], v;
	struct buf m = { 0 }, rec = { 0 };
	const uint8_t *fv;
	int64_t iv[4];
	size_t i;

	rp_buf_append(&m, ent_y, sizeof ent_y);
	rp_buf_append(&m, ent_x, sizeof ent_x);
	put_ld(&rec, 0x0a, m.p, m.len);
	TEST(ex_canonical_find(rec.p, rec.len, 0, 2, want, sp) == 1 &&
	    ex_canonical_floats(sp[0], &fv) == 1 && fv[3] == 0x3f &&
	    ex_canonical_int64s(sp[1], iv, 4) == 3 && iv[2] == 300,
	    "canonical find: keys out of order");
	TEST(ex_canonical_feature(sp[1], &v) == EX_INT64 && v.n == 4 &&
	    v.p == sp[1].p + 4, "canonical feature: the packed int64 values");
	TEST(ex_canonical_feature(sp[0], &v) == EX_FLOAT && v.n == 4 &&
	    v.p[3] == 0x3f, "canonical feature: the float values");
	rec.len = 0;
	put_ld(&rec, 0x0a, ent_y, sizeof ent_y);
	put_ld(&rec, 0x0a, ent_x, sizeof ent_x);
	TEST(ex_canonical_find(rec.p, rec.len, 0, 2, want, sp) == 1 &&
	    sp[0].p != NULL && sp[1].p != NULL,
	    "canonical find: two Features messages");
	rec.len = 0;
	put_ld(&rec, 0x0a, ent_y, sizeof ent_y);
	put_ld(&rec, 0x0a, ent_y, sizeof ent_y);
	TEST(ex_canonical_find(rec.p, rec.len, 0, 2, want, sp) == 0,
	    "canonical find: a wanted key twice is the decoder's");
	TEST(ex_canonical_find(rec.p, rec.len, 0, 1, want, sp) == 1 &&
	    sp[0].p == NULL, "canonical find: another key twice is checked");
	for (i = 0; i < sizeof feats / sizeof feats[0]; i++) {
		struct ex_span f = { feats[i].f, feats[i].n };
		int k = ex_canonical_feature(f, &v);

		TEST(k == feats[i].kind && (k == -1 || (v.n == feats[i].len &&
		    (v.n == 0 || v.p == feats[i].f + feats[i].off))),
		    "canonical feature: %s", feats[i].what);
	}
	rp_buf_free(&m);
	rp_buf_free(&rec);
}

static void
put_varint(struct buf *o, uint64_t v)
{
	while (v >= 0x80) {
		rp_buf_putc(o, (int)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	rp_buf_putc(o, (int)v);
}

/* Field 'f' of wire type 2 holding the bytes of 'm'. */
static void
put_message(struct buf *o, unsigned f, const struct buf *m)
{
	put_varint(o, f << 3 | 2);
	put_varint(o, m->len);
	rp_buf_append(o, m->p, m->len);
}

/*
 * SequenceExamples whose steps are int64 and bytes lists larger than
 * the example's lazy_min, more of them than the first step pool holds,
 * between small steps: decoded with lazy_min set, every step reads back
 * its own values (a step's span once lived on the stack of the function
 * that found it, and steps over 1 MiB read back empty), and the record
 * encodes as it was.
 */
static void
test_lazy_steps(void)
{
	struct buf step = { 0 }, list = { 0 }, lists = { 0 }, entry = { 0 };
	struct buf rec = { 0 }, tmp = { 0 }, again = { 0 };
	struct example ex;
	struct ex_int64_iter it;
	struct ex_bytes_iter bit;
	struct ex_bytes bv[4];
	int64_t v[4];
	size_t i, j, k, got, nsteps = 40, bad = 0;

	/* "ids": int64 steps; step i holds i*37+1 values 1000*i+j */
	for (i = 0; i < nsteps; i++) {
		tmp.len = 0;
		for (j = 0; j < i * 37 + 1; j++)
			put_varint(&tmp, 1000 * i + j);
		step.len = 0;
		put_message(&step, 1, &tmp);		/* Int64List.value */
		tmp.len = 0;
		put_message(&tmp, 3, &step);		/* Feature.int64_list */
		put_message(&list, 1, &tmp);		/* FeatureList.feature */
	}
	rp_buf_append(&entry, "\x0a\x03ids", 5);
	put_message(&entry, 2, &list);
	put_message(&lists, 1, &entry);
	/* "img": bytes steps of i+1 values "s<i>" ... */
	list.len = 0;
	for (i = 0; i < nsteps; i++) {
		char val[32];

		step.len = 0;
		for (j = 0; j <= i; j++) {
			snprintf(val, sizeof(val), "s%zu-%zu", i, j);
			tmp.len = 0;
			rp_buf_puts(&tmp, val);
			put_message(&step, 1, &tmp);	/* BytesList.value */
		}
		tmp.len = 0;
		put_message(&tmp, 1, &step);		/* Feature.bytes_list */
		put_message(&list, 1, &tmp);
	}
	entry.len = 0;
	rp_buf_append(&entry, "\x0a\x03img", 5);
	put_message(&entry, 2, &list);
	put_message(&lists, 1, &entry);
	put_message(&rec, 2, &lists);			/* feature_lists */

	TEST(lazy_agrees(rec.p, rec.len) >= (int)(2 * nsteps - 2),
	    "steps left in the record read back as decoded");

	ex_init(&ex);
	ex.lazy_min = 16;
	TEST(ex_decode(&ex, rec.p, rec.len, EX_TYPE_AUTO) == 0 &&
	    ex.nlists == 2, "a SequenceExample with large steps decodes");
	for (i = 0; ex.nlists == 2 && i < nsteps; i++) {
		const struct ex_feature *f = &ex.lists[0].v[i];

		if (f->kind != EX_INT64 || f->n != i * 37 + 1) {
			bad++;
			continue;
		}
		if (f->lazy == NULL)
			continue;
		ex_int64_open_feature(&it, f);
		for (got = 0; (k = ex_int64_next(&it, v, 4)) > 0; got += k)
			for (j = 0; j < k; j++)
				if (v[j] != (int64_t)(1000 * i + got + j))
					bad++;
		if (got != f->n)
			bad++;
	}
	TEST(bad == 0, "every int64 step left in the record holds its own values");
	for (i = 0, bad = 0; ex.nlists == 2 && i < nsteps; i++) {
		const struct ex_feature *f = &ex.lists[1].v[i];
		char val[32];

		if (f->kind != EX_BYTES || f->n != i + 1) {
			bad++;
			continue;
		}
		if (f->lazy == NULL)
			continue;
		ex_bytes_open_feature(&bit, f);
		for (got = 0; (k = ex_bytes_next(&bit, bv, 4)) > 0; got += k)
			for (j = 0; j < k; j++) {
				snprintf(val, sizeof(val), "s%zu-%zu", i, got + j);
				if (bv[j].n != strlen(val) ||
				    memcmp(bv[j].p, val, bv[j].n) != 0)
					bad++;
			}
		if (got != f->n)
			bad++;
	}
	TEST(bad == 0, "every bytes step left in the record holds its own values");
	TEST(ex_encode(&ex, &again) == 0 && again.len == rec.len &&
	    memcmp(again.p, rec.p, rec.len) == 0,
	    "and the example encodes to the record's bytes");
	ex_free(&ex);
	rp_buf_free(&step);
	rp_buf_free(&list);
	rp_buf_free(&lists);
	rp_buf_free(&entry);
	rp_buf_free(&rec);
	rp_buf_free(&tmp);
	rp_buf_free(&again);
}

/* The one decoder of packed int64 lists, with and without the OR of the values. */
static void
test_packed_int64s(void)
{
	/* 1, 300, 2^31 - 1, 2^28, then -1 (ten bytes) */
	static const uint8_t pk[] = "\x01\xac\x02\xff\xff\xff\xff\x07\x80\x80\x80\x80\x01"
	    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";
	int64_t d[32];
	uint64_t over = 7;
	long n;

	TEST(ex_packed_int64s(pk, 3, d, &over) == 2 && d[0] == 1 && d[1] == 300 &&
	    over == 0, "packed: values below 2^28");
	n = ex_packed_int64s(pk, 13, d, &over);
	TEST(n == 4 && d[2] == INT32_MAX && d[3] == 1 << 28 && over != 0,
	    "packed: values of 2^28 and more show in over");
	TEST(ex_packed_int64s(pk + 8, 15, d, &over) == 2 && d[0] == 1 << 28 &&
	    d[1] == -1 && over != 0, "packed: a negative value shows in over");
	TEST(ex_packed_int64s((const uint8_t *)"\x81\x80\x80\x80\x80\x00\x05", 7,
	    d, &over) == 2 && d[0] == 1 && d[1] == 5 && over == 0,
	    "packed: a small value in a long varint is small");
	n = ex_packed_int64s(pk, sizeof pk - 1, d, &over);
	TEST(n == 5 && d[4] == -1 && over != 0, "packed: the whole list");
	TEST(ex_packed_int64s(pk, sizeof pk - 1, d, NULL) == 5 && d[4] == -1,
	    "packed: no over asked for");
	TEST(ex_packed_int64s(pk, 0, d, &over) == 0 && over == 0, "packed: an empty chunk");
	TEST(ex_packed_int64s(pk, 12, d, &over) == -1, "packed: the last varint cut short");
	TEST(ex_packed_int64s((const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff"
	    "\xff\xff\x01\x01", 12, d, NULL) == -1, "packed: an eleven-byte varint");
}

static void
test_lists(void)
{
	/* {"b": [1, 300], "a": []}: "a" first, an empty list has no chunk. */
	static const uint8_t want[] = {
		0x0a, 0x17,
		0x0a, 0x07, 0x0a, 0x01, 'a', 0x12, 0x02, 0x1a, 0x00,
		0x0a, 0x0c, 0x0a, 0x01, 'b', 0x12, 0x07, 0x1a, 0x05, 0x0a,
		0x03, 0x01, 0xac, 0x02,
	};
	const char *names[70];
	char namebuf[70][8];
	const int64_t one[] = { 1, 300 }, *vals[70];
	int64_t neg[] = { -1, 5, 7 };
	size_t lens[70], used[70], sz, i;
	struct ex_lists *e = ex_lists_new();
	struct ex_builder b;
	struct buf ref = { 0 };
	struct example ex;
	uint8_t *p;

	test_lists_random();
	TEST(e != NULL, "ex_lists_new()");
	names[0] = "b";
	names[1] = "a";
	vals[0] = one;
	vals[1] = one;
	lens[0] = 2;
	lens[1] = 0;
	p = lists_record(e, 2, names, vals, lens, NULL, &sz);
	TEST(p != NULL && sz == sizeof(want) && memcmp(p, want, sz) == 0,
	    "int64 lists: keys sorted, the canonical bytes");
	free(p);

	/* Values from used[i] on are zeros, whatever the array holds. */
	names[0] = "n";
	vals[0] = neg;
	lens[0] = 3;
	used[0] = 1;
	p = lists_record(e, 1, names, vals, lens, used, &sz);
	ex_init(&ex);
	TEST(p != NULL && ex_decode(&ex, p, sz, EX_TYPE_EXAMPLE) == 0 &&
	    ex.nfeat == 1 && ex.feat[0].n == 3 && ex.feat[0].i64[0] == -1 &&
	    ex.feat[0].i64[1] == 0 && ex.feat[0].i64[2] == 0,
	    "int64 lists: padding past 'used' is written as zeros");
	free(p);

	/* No bound on the number of lists; names change between rows. */
	exb_init(&b);
	for (i = 0; i < 70; i++) {
		snprintf(namebuf[i], sizeof(namebuf[i]), "f%02zu", 69 - i);
		names[i] = namebuf[i];
		vals[i] = one;
		lens[i] = i % 3;
		exb_int64(&b, names[i], one, lens[i]);
	}
	exb_encode(&b, &ref);
	p = lists_record(e, 70, names, vals, lens, NULL, &sz);
	TEST(p != NULL && sz == ref.len && memcmp(p, ref.p, sz) == 0,
	    "int64 lists: 70 lists, as the Example encoder writes them");
	free(p);
	names[5] = "g";		/* same count, another name */
	exb_reset(&b);
	for (i = 0; i < 70; i++)
		exb_int64(&b, names[i], one, lens[i]);
	ref.len = 0;
	exb_encode(&b, &ref);
	p = lists_record(e, 70, names, vals, lens, NULL, &sz);
	TEST(p != NULL && sz == ref.len && memcmp(p, ref.p, sz) == 0,
	    "int64 lists: a renamed list is sorted anew");
	free(p);
	p = lists_record(e, 0, names, vals, lens, NULL, &sz);
	TEST(p != NULL && sz == 2 && p[0] == 0x0a && p[1] == 0,
	    "int64 lists: no lists is an empty Features message");
	free(p);

	rp_buf_free(&ref);
	exb_free(&b);
	ex_free(&ex);
	ex_lists_free(e);
	ex_lists_free(NULL);
}

int
main(void)
{
	struct example ex;
	struct ex_builder eb;
	struct buf out = { 0 };
	const struct ex_feature *f;
	int64_t iv[] = { 1, -1, INT64_MAX, INT64_MIN, 300 };
	float fv[] = { 0.5f, -0.0f };
	struct ex_bytes bv[] = { { (const uint8_t *)"ab", 2 }, { (const uint8_t *)"", 0 } };
	int64_t *dst = NULL;
	size_t cap = 0;

	ex_init(&ex);

	/* {"a": int64 [1, 2]} canonical */
	TEST(ex_decode(&ex, B("\x0a\x0e\x0a\x0c\x0a\x01" "a" "\x12\x07\x1a\x05\x0a\x03\x01\x02\x03"),
	    EX_TYPE_AUTO) == 0, "canonical Example decodes");
	f = ex_get(&ex, "a");
	TEST(f && f->kind == EX_INT64 && f->n == 3 && f->i64[2] == 3, "a = [1 2 3]");
	TEST(!ex.seq && ex.has_features, "an Example with features");

	/* unpacked int64 values and a second packed chunk concatenate */
	TEST(ex_decode(&ex, B("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09"),
	    EX_TYPE_EXAMPLE) == 0, "mixed packed and unpacked");
	f = ex_get(&ex, "a");
	TEST(f && f->n == 4 && f->i64[0] == 5 && f->i64[1] == 6 && f->i64[2] == 7 &&
	    f->i64[3] == 9, "a = [5 6 7 9]");

	/* value before key; duplicate keys, the last wins */
	TEST(ex_decode(&ex, B("\x0a\x1c"
	    "\x0a\x0a\x12\x05\x1a\x03\x0a\x01\x01\x0a\x01" "k"
	    "\x0a\x0e\x0a\x01" "k" "\x12\x09\x0a\x07\x0a\x05" "hello"),
	    EX_TYPE_EXAMPLE) == 0, "entry fields in any order, duplicate key");
	f = ex_get(&ex, "k");
	TEST(f && f->kind == EX_BYTES && f->n == 1 && f->b[0].n == 5 &&
	    memcmp(f->b[0].p, "hello", 5) == 0 && ex.nfeat == 1, "last k wins");

	/* two kinds in one Feature: the last kind wins */
	TEST(ex_decode(&ex, B("\x0a\x13\x0a\x11\x0a\x01" "x" "\x12\x0c\x1a\x03\x0a\x01\x07\x12\x05\x0d\x00\x00\x80\x3f"),
	    EX_TYPE_EXAMPLE) == 0, "two kinds");
	f = ex_get(&ex, "x");
	TEST(f && f->kind == EX_FLOAT && f->n == 1 && f->f32[0] == 1.0f, "float kind wins");

	/* unknown fields at every level are skipped */
	TEST(ex_decode(&ex, B("\x10\x05\x0a\x11\x18\x01\x0a\x0d\x20\x02\x0a\x01" "a" "\x12\x06\x28\x01\x1a\x02\x08\x04"),
	    EX_TYPE_EXAMPLE) == 0, "unknown fields");
	f = ex_get(&ex, "a");
	TEST(f && f->kind == EX_INT64 && f->n == 1 && f->i64[0] == 4, "a = [4] beside unknown fields");

	/* an entry with a key and no value: a kind-less Feature */
	{
		struct example fresh;	/* no pools yet */

		ex_init(&fresh);
		TEST(ex_decode(&fresh, B("\x0a\x05\x0a\x03\x0a\x01" "a"), EX_TYPE_AUTO) == 0 &&
		    fresh.nfeat == 1 && fresh.feat[0].kind == EX_NONE, "key without value");
		ex_free(&fresh);
	}
	TEST(ex_decode(&ex, B("\x12\x05\x0a\x03\x0a\x01" "l"), EX_TYPE_SEQUENCE) == 0 &&
	    ex.nlists == 1 && ex.lists[0].n == 0, "feature list key without value");

	/* nothing at all, given as NULL */
	TEST(ex_decode(&ex, NULL, 0, EX_TYPE_AUTO) == 0 && ex.nfeat == 0 && !ex.has_features &&
	    ex_check(&ex, NULL, 0, EX_TYPE_AUTO) == 0 &&
	    ex_int64_values(NULL, 0, "a", &dst, &cap) == -1, "an empty payload as NULL");
	{
		struct buf none = { 0 };

		TEST(ex_encode(&ex, &none) == 0 && none.len == 0, "and it encodes to nothing");
	}

	/* presence: no features at all vs empty features */
	TEST(ex_decode(&ex, (const uint8_t *)"", 0, EX_TYPE_AUTO) == 0 && !ex.has_features,
	    "empty payload: no features");
	TEST(ex_decode(&ex, B("\x0a\x00"), EX_TYPE_AUTO) == 0 && ex.has_features &&
	    ex.nfeat == 0, "0a 00: features present, empty");

	/* malformed */
	TEST(ex_decode(&ex, B("\x0a\x05\x0a\x01"), EX_TYPE_AUTO) == -1, "length past the end");
	TEST(ex_decode(&ex, B("\x0b\x00"), EX_TYPE_AUTO) == -1, "group wire type");
	TEST(ex_decode(&ex, B("\x00\x00"), EX_TYPE_AUTO) == -1, "field number 0");
	TEST(ex_decode(&ex, B("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), EX_TYPE_AUTO) == -1,
	    "11-byte varint");
	TEST(strstr(ex_strerror(&ex), "varint") != NULL, "message names the varint: %s", ex_strerror(&ex));
	TEST(ex_decode(&ex, B("\x0a\x0b\x0a\x09\x0a\x01" "f" "\x12\x04\x12\x02\x0a\x03"),
	    EX_TYPE_AUTO) == -1, "float packed length not a multiple of 4");

	/* a superseded duplicate must still be well-formed (protobuf parses it) */
	TEST(ex_decode(&ex, B("\x0a\x0e\x0a\x0c\x0a\x01" "b" "\x12\x07\x31\x01\x0a\x03\x0a\x01\x02"
	    "\x0a\x0e\x0a\x0c\x0a\x01" "b" "\x12\x07\x30\x01\x0a\x03\x0a\x01\x02"), EX_TYPE_AUTO) == -1,
	    "malformed Feature under a replaced key is refused");

	/* the checker agrees with the decoder */
	TEST(ex_check(&ex, B("\x0a\x05\x0a\x01"), EX_TYPE_AUTO) == -1, "check: length past the end");
	TEST(ex_check(&ex, B("\x0a\x0b\x0a\x09\x0a\x01" "f" "\x12\x04\x12\x02\x0a\x03"),
	    EX_TYPE_AUTO) == -1, "check: float packed length");
	TEST(ex_check(&ex, B("\x0a\x0e\x0a\x0c\x0a\x01" "a" "\x12\x07\x1a\x05\x0a\x03\x01\x02\x83"),
	    EX_TYPE_AUTO) == -1, "check: unterminated packed varint");
	TEST(ex_decode(&ex, B("\x0a\x0e\x0a\x0c\x0a\x01" "a" "\x12\x07\x1a\x05\x0a\x03\x01\x02\x83"),
	    EX_TYPE_AUTO) == -1, "decode: unterminated packed varint");
	TEST(ex_check(&ex, B("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09"),
	    EX_TYPE_EXAMPLE) == 0, "check: mixed packed and unpacked");

	/* builder: canonical bytes, keys sorted */
	exb_init(&eb);
	exb_int64(&eb, "z", iv, 2);
	exb_bytes(&eb, "b", bv, 2);
	exb_float(&eb, "f", fv, 0);
	exb_encode(&eb, &out);
	TEST(same(&out, "\x0a\x2e"
	    "\x0a\x0d\x0a\x01" "b" "\x12\x08\x0a\x06\x0a\x02" "ab" "\x0a\x00"
	    "\x0a\x07\x0a\x01" "f" "\x12\x02\x12\x00"
	    "\x0a\x14\x0a\x01" "z" "\x12\x0f\x1a\x0d\x0a\x0b\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 48),
	    "builder writes the canonical form");
	TEST(ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO) == 0 && ex.nfeat == 3,
	    "and it decodes");
	out.len = 0;
	exb_reset(&eb);
	exb_int64(&eb, "targets", iv, 5);
	exb_encode(&eb, &out);
	TEST(ex_int64_values(out.p, out.len, "targets", &dst, &cap) == 5 &&
	    dst[2] == INT64_MAX && dst[3] == INT64_MIN && dst[4] == 300, "int64 extremes survive");
	TEST(ex_int64_values(out.p, out.len, "inputs", &dst, &cap) == -1, "absent feature");
	TEST(ex_check(&ex, out.p, out.len, EX_TYPE_AUTO) == 0, "check: 10-byte varints are fine");
	TEST(ex_int64_canonical(out.p, out.len, "targets", 7, &dst, &cap) == 5 &&
	    dst[0] == 1 && dst[1] == -1 && dst[3] == INT64_MIN, "canonical fast path");
	TEST(ex_int64_canonical(out.p, out.len, "target", 6, &dst, &cap) == -1,
	    "canonical fast path: another name");
	TEST(ex_int64_canonical(B("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09"),
	    "a", 1, &dst, &cap) == -1 &&
	    ex_int64_values(B("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09"),
	    "a", &dst, &cap) == 4 && dst[0] == 5 && dst[3] == 9,
	    "unpacked values: not canonical, read by the general path");
	{
		/* 'a' = one packed chunk of 16 bytes: v1 (1 byte) then an 11-byte varint. */
		static const uint8_t bad11[] = "\x0a\x19\x0a\x17\x0a\x01" "a" "\x12\x12\x1a\x10\x0a\x0e"
		    "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x02\x03";

		TEST(ex_check(&ex, bad11, sizeof(bad11) - 1, EX_TYPE_AUTO) == -1 &&
		    ex_decode(&ex, bad11, sizeof(bad11) - 1, EX_TYPE_AUTO) == -1,
		    "an 11-byte varint inside a packed chunk is refused by both");
	}
	TEST(ex_int64_values((const uint8_t *)"\x0a\x05", 2, "x", &dst, &cap) == -2, "malformed");

	/* every varint length, around each 7-bit boundary, in one packed list */
	{
		int64_t many[200];
		size_t k, m = 0;
		int ok = 1;
		const struct ex_feature *g;

		for (k = 0; k < 64 && m + 3 <= 200; k += 1) {
			uint64_t b = 1ull << k;

			many[m++] = (int64_t)(b - 1);
			many[m++] = (int64_t)b;
			many[m++] = -(int64_t)(b >> 1);
		}
		exb_reset(&eb);
		exb_int64(&eb, "v", many, m);
		out.len = 0;
		exb_encode(&eb, &out);
		if (ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO) != 0 ||
		    (g = ex_get(&ex, "v")) == NULL || g->n != m)
			ok = 0;
		else
			for (k = 0; k < m; k++)
				if (g->i64[k] != many[k])
					ok = 0;
		TEST(ok, "%zu values of every varint length decode exactly", m);
	}

	/*
	 * The canonical fast path on lists of every length up to 40 whose
	 * values take 1 to 10 bytes at random, so that varints end at every
	 * place in the words it loads; then the same lists with the last
	 * varint cut short (its last byte keeps the continuation bit).
	 */
	{
		int64_t vals[40];
		uint64_t rs = 88172645463325252ull;
		int ok = 1, cut = 1;

		for (int round = 0; round < 400; round++) {
			size_t len = (size_t)round % 41;

			for (size_t j = 0; j < len; j++) {
				unsigned bits;

				rs ^= rs << 13;
				rs ^= rs >> 7;
				rs ^= rs << 17;
				bits = (unsigned)(rs % 64) + 1;
				vals[j] = (int64_t)(rs >> (64 - bits));
				if (rs & 1 << 20)
					vals[j] = -vals[j];
			}
			exb_reset(&eb);
			exb_int64(&eb, "targets", vals, len);
			out.len = 0;
			exb_encode(&eb, &out);
			if (ex_int64_canonical(out.p, out.len, "targets", 7, &dst,
			    &cap) != (long)len || (len > 0 &&
			    memcmp(dst, vals, len * sizeof *vals) != 0))
				ok = 0;
			if (len > 0) {
				/*
				 * Turn the last byte into a continuation byte:
				 * the last varint runs past the end.
				 */
				out.p[out.len - 1] |= 0x80;
				if (ex_int64_canonical(out.p, out.len, "targets",
				    7, &dst, &cap) != -1)
					cut = 0;
			}
		}
		TEST(ok, "canonical fast path: lists of 0 to 40 random values, "
		    "1 to 10 bytes each");
		TEST(cut, "canonical fast path: a last varint cut short is refused");
	}

	/*
	 * Short records (the one-byte-length template): names of 0 to 12
	 * bytes, lists of 0 to 24 values below 2^30 (so two varints of at
	 * most four bytes often share a word); every name that differs in
	 * one byte is refused.
	 */
	{
		static const char names[] = "abcdefghijkl";
		int64_t vals[24];
		uint64_t rs = 0x9e3779b97f4a7c15ull;
		int ok = 1, other = 1, u16 = 1;
		char nm[16], bad[16];

		for (int round = 0; round < 1300; round++) {
			size_t nl = (size_t)round % 13, len = (size_t)round % 25;

			memcpy(nm, names, nl);
			nm[nl] = 0;
			for (size_t j = 0; j < len; j++) {
				rs ^= rs << 13;
				rs ^= rs >> 7;
				rs ^= rs << 17;
				vals[j] = (int64_t)(rs >> (64 - 1 -
				    (unsigned)(rs % 30)));
			}
			exb_reset(&eb);
			exb_int64(&eb, nm, vals, len);
			out.len = 0;
			exb_encode(&eb, &out);
			if (ex_int64_canonical(out.p, out.len, nm, nl, &dst,
			    &cap) != (long)len || (len > 0 &&
			    memcmp(dst, vals, len * sizeof *vals) != 0))
				ok = 0;
			{
				uint16_t w16[130];
				long got = ex_uint16_canonical(out.p, out.len,
				    nm, nl, w16);
				int fit = 1;

				for (size_t j = 0; j < len; j++) {
					uint8_t *b = (uint8_t *)&w16[j];

					if (vals[j] > 65535)
						fit = 0;
					else if (got >= 0 && (b[0] |
					    b[1] << 8) != vals[j])
						u16 = 0;
				}
				if (got != (fit ? (long)len : -1))
					u16 = 0;
			}
			for (size_t i = 0; i < nl; i++) {
				memcpy(bad, nm, nl + 1);
				bad[i] ^= 0x20;
				if (ex_int64_canonical(out.p, out.len, bad, nl,
				    &dst, &cap) != -1)
					other = 0;
			}
		}
		TEST(ok, "canonical fast path: short records, names of 0 to "
		    "12 bytes, values below 2^30");
		TEST(u16, "16-bit canonical path: the same values where all "
		    "fit, -1 where one does not");
		TEST(other, "canonical fast path: a name one byte off is refused");
	}

	/* decode -> encode is the canonical form of the input */
	{
		struct buf o2 = { 0 };

		ex_decode(&ex, B("\x0a\x1c"
		    "\x0a\x0a\x12\x05\x1a\x03\x0a\x01\x01\x0a\x01" "k"
		    "\x0a\x0e\x0a\x01" "k" "\x12\x09\x0a\x07\x0a\x05" "hello"), EX_TYPE_AUTO);
		ex_encode(&ex, &o2);
		TEST(same(&o2, "\x0a\x10\x0a\x0e\x0a\x01" "k" "\x12\x09\x0a\x07\x0a\x05" "hello", 18),
		    "duplicate key re-encoded once");
		rp_buf_free(&o2);
	}

	/* SequenceExample: context and lists, detected by field 2 */
	TEST(ex_decode(&ex, B("\x12\x14\x0a\x12\x0a\x01" "t" "\x12\x0d"
	    "\x0a\x05\x1a\x03\x0a\x01\x01" "\x0a\x00" "\x0a\x02\x1a\x00"), EX_TYPE_AUTO) == 0 &&
	    ex.seq, "SequenceExample recognised");
	TEST(ex.nlists == 1 && ex.lists[0].n == 3 && ex.lists[0].v[0].kind == EX_INT64 &&
	    ex.lists[0].v[1].kind == EX_NONE && ex.lists[0].v[2].kind == EX_INT64 &&
	    ex.lists[0].v[2].n == 0 && !ex.has_features && ex.has_lists, "lists with kind-less and empty features");
	out.len = 0;
	ex_encode(&ex, &out);
	TEST(same(&out, "\x12\x14\x0a\x12\x0a\x01" "t" "\x12\x0d"
	    "\x0a\x05\x1a\x03\x0a\x01\x01" "\x0a\x00" "\x0a\x02\x1a\x00", 22),
	    "SequenceExample re-encodes to the same bytes");

	/* the int64 iterator agrees with ex_int64_values() on every form */
	{
		static const struct { const char *p; size_t n; const char *name; } c[] = {
#define C(s, name) { s, sizeof(s) - 1, name }
			C("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09", "a"),
			C("\x0a\x11\x0a\x0f\x0a\x01" "a" "\x12\x0a\x1a\x08\x08\x05\x0a\x02\x06\x07\x08\x09", "b"),
			C("\x0a\x0c\x0a\x0a\x0a\x01" "a" "\x12\x05\x1a\x03\x0a\x01\x07", ""),
			C("\x0a\x0a\x0a\x08\x12\x06\x1a\x04\x0a\x02\x05\x06", ""),
			/* int64, then bytes, then int64 again in one Feature: the last run */
			C("\x0a\x17\x0a\x15\x0a\x01" "a" "\x12\x10\x1a\x03\x0a\x01\x01"
			  "\x0a\x03\x0a\x01" "x" "\x1a\x04\x0a\x02\x02\x03", "a"),
			/* int64 then bytes: not an int64 list */
			C("\x0a\x12\x0a\x10\x0a\x01" "a" "\x12\x0b\x1a\x04\x0a\x02\x01\x02"
			  "\x0a\x03\x0a\x01" "x", "a"),
			/* the entry's value given twice: merged */
			C("\x0a\x13\x0a\x11\x0a\x01" "a" "\x12\x05\x1a\x03\x0a\x01\x01"
			  "\x12\x05\x1a\x03\x08\x82\x01", "a"),
			/* two entries of one key, in two Features messages: the last wins */
			C("\x0a\x0c\x0a\x0a\x0a\x01" "a" "\x12\x05\x1a\x03\x0a\x01\x01"
			  "\x0a\x0d\x0a\x0b\x0a\x01" "a" "\x12\x06\x1a\x04\x0a\x02\x09\x08", "a"),
			/* an empty list, a kind-less feature, a malformed record */
			C("\x0a\x09\x0a\x07\x0a\x01" "a" "\x12\x02\x1a\x00", "a"),
			C("\x0a\x07\x0a\x05\x0a\x01" "a" "\x12\x00", "a"),
			C("\x0a\x05", "a"),
			C("", "a"),
#undef C
		};
		size_t k;
		int ok = 1;

		for (k = 0; k < sizeof(c) / sizeof(c[0]); k++)
			if (!iter_agrees((const uint8_t *)c[k].p, c[k].n, c[k].name)) {
				ok = 0;
				printf("# case %zu differs\n", k);
			}
		TEST(ok, "ex_int64_next() in parts gives ex_int64_values()'s values");
		for (k = 0, ok = 1; k < sizeof(c) / sizeof(c[0]); k++)
			if (!lazy_agrees((const uint8_t *)c[k].p, c[k].n)) {
				ok = 0;
				printf("# lazy case %zu differs\n", k);
			}
		TEST(ok, "int64 lists left in the record read back and encode as decoded");
		out.len = 0;
		exb_reset(&eb);
		exb_int64(&eb, "targets", iv, 5);
		exb_encode(&eb, &out);
		TEST(iter_agrees(out.p, out.len, "targets"), "and on int64 extremes");
		TEST(lazy_agrees(out.p, out.len) == 2, "and left in the record");
	}
	/* bytes lists left in the record: every form of merging */
	{
		static const struct { const char *p; size_t n; } c[] = {
#define C(s) { s, sizeof(s) - 1 }
			/* bytes values, an empty one among them */
			C("\x0a\x12\x0a\x10\x0a\x01" "a\x12\x0b\x0a\x09\x0a\x01x\x0a\x00\x0a\x02yz"),
			/* two BytesLists in one Feature: merged */
			C("\x0a\x14\x0a\x12\x0a\x01" "a\x12\x0d\x0a\x03\x0a\x01x\x0a\x06\x0a\x01y\x0a\x01z"),
			/* int64, then bytes twice: the bytes */
			C("\x0a\x16\x0a\x14\x0a\x01" "a\x12\x0f\x1a\x03\x0a\x01\x01\x0a\x03\x0a\x01p\x0a\x03\x0a\x01q"),
			/* bytes, int64, bytes: the last run */
			C("\x0a\x19\x0a\x17\x0a\x01" "a\x12\x12\x0a\x03\x0a\x01p\x1a\x03\x0a\x01\x01\x0a\x06\x0a\x01q\x0a\x01r"),
			/* the value given twice: merged */
			C("\x0a\x13\x0a\x11\x0a\x01" "a\x12\x05\x0a\x03\x0a\x01" "a\x12\x05\x0a\x03\x0a\x01" "b"),
			/* values given thrice, kinds changing */
			C("\x0a\x1d\x0a\x1b\x0a\x01" "a\x12\x05\x0a\x03\x0a\x01" "a\x12\x05\x1a\x03\x0a\x01\x01\x12\x08\x0a\x06\x0a\x01" "c\x0a\x01" "d"),
			/* an unknown field in a BytesList */
			C("\x0a\x13\x0a\x11\x0a\x01" "a\x12\x0c\x0a\x0a\x0a\x01" "a\x10\x05\x0a\x03\x0a\x01" "e"),
			/* bytes, and int64 in another key */
			C("\x0a\x1d\x0a\x0e\x0a\x01" "a\x12\x09\x0a\x07\x0a\x01u\x0a\x02vw\x0a\x0b\x0a\x01" "b\x12\x06\x1a\x04\x0a\x02\x03\x04"),
#undef C
		};
		size_t k;
		int ok = 1;

		for (k = 0; k < sizeof(c) / sizeof(c[0]); k++)
			if (lazy_agrees((const uint8_t *)c[k].p, c[k].n) < 2) {
				ok = 0;
				printf("# lazy bytes case %zu differs\n", k);
			}
		TEST(ok, "bytes lists left in the record read back and encode as decoded");
	}

	test_lists();
	test_packed_int64s();
	test_lazy_steps();
	test_float_steps_fast();
	test_canonical_random();
	test_canonical_forms();

	rp_buf_free(&out);
	exb_free(&eb);
	ex_free(&ex);
	free(dst);
	return tap_done();
}
