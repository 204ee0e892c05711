/*
 * Fuzz the subword vocab loader and the count file parser.  The first
 * byte chooses: even, the rest is a vocab file (it must survive a
 * store/load round trip and encode its own entries); odd, the rest is a
 * count file (small ones are also built into a vocabulary).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "errmsg.h"
#include "subword.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
vocab(const uint8_t *p, size_t n)
{
	char err[RP_ERRMAX];
	struct sw_vocab *v, *w;
	struct buf b = { 0 }, d = { 0 };
	int32_t *ids = NULL;
	int64_t id64[64];
	size_t nids, cap = 0, i, len, wl;
	const uint8_t *s, *t;

	if ((v = sw_vocab_parse(p, n, err, sizeof err)) == NULL) {
		check(err[0] != '\0');
		return;
	}
	check(sw_vocab_store(v, &b) == 0);
	w = sw_vocab_parse(b.p, b.len, err, sizeof err);
	check(w != NULL && sw_vocab_size(w) == sw_vocab_size(v));
	for (i = 0; i < sw_vocab_size(v); i++) {
		s = sw_vocab_entry(v, (int64_t)i, &len);
		t = sw_vocab_entry(w, (int64_t)i, &wl);
		check(s != NULL && t != NULL && len == wl && memcmp(s, t, len) == 0);
	}
	/* Encode the first entries as text; decode some ids. */
	for (i = 0; i < sw_vocab_size(v) && i < 8; i++) {
		s = sw_vocab_entry(v, (int64_t)i, &len);
		nids = 0;
		(void)sw_encode(v, s, len, &ids, &nids, &cap);
		for (len = 0; len < nids && len < 64; len++)
			id64[len] = ids[len];
		d.len = 0;
		check(sw_decode(v, id64, len, (int)(i & 1), &d) == 0);
		id64[0] = (int64_t)i - 3;
		check(sw_decode(v, id64, 1, 0, &d) == 0);
	}
	free(ids);
	free(b.p);
	free(d.p);
	sw_vocab_free(v);
	sw_vocab_free(w);
}

static void
counts(const uint8_t *p, size_t n)
{
	struct sw_counts *c = sw_counts_new(), *c2 = sw_counts_new();
	struct sw_build_opts o;
	struct sw_vocab *v;
	char err[RP_ERRMAX];
	struct buf b = { 0 }, b2 = { 0 };

	check(c != NULL && c2 != NULL);
	if (sw_counts_read(c, p, n, err, sizeof err) == 0) {
		/* Writing and reading again is the identity. */
		check(sw_counts_write(c, &b) == 0);
		check(sw_counts_read(c2, b.p, b.len, err, sizeof err) == 0);
		check(sw_counts_write(c2, &b2) == 0);
		check(b.len == b2.len && memcmp(b.p, b2.p, b.len) == 0);
		if (sw_counts_size(c) <= 40 && n < 400) {
			sw_build_opts_init(&o);
			o.iterations = 2;
			o.max_subtoken_len = (long)(n % 7);
			v = (n & 1) ? sw_build(c, (int64_t)(n % 5), &o) :
			    sw_build_to_target(c, 30 + n % 50, &o);
			check(v != NULL);
			sw_vocab_free(v);
		}
	}
	free(b.p);
	free(b2.p);
	sw_counts_free(c);
	sw_counts_free(c2);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	if (p[0] & 1)
		counts(p + 1, n - 1);
	else
		vocab(p + 1, n - 1);
	return 0;
}
