/*
 * Unit tests for lib/batchsrc (batch-sample's language pairs: parts,
 * sizes, collation from datasets, languages, weights).  The datasets
 * are fairseq int32 indexes made in memory (mmidx_open_mem()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batchsrc.h"
#include "buf.h"
#include "fairseq_dict.h"
#include "mmidx.h"
#include "tap.h"

/* A dataset in memory: its index and .bin stay here while it is open. */
struct memds {
	uint8_t		 idx[26 + 12 * 16];
	uint8_t		 bin[4 * 64];
	size_t		 idxlen, binlen;
};

static void
put_le(uint8_t *q, uint64_t v, int nbytes)
{
	for (int b = 0; b < nbytes; b++)
		q[b] = (uint8_t)(v >> 8 * b);
}

/*
 * A fairseq int32 dataset of n sentences of the given sizes; the
 * tokens, all of them end to end, are tok[] (ntok of them; the .bin
 * may be shorter than the sizes say, to test the checks).
 */
static struct mmidx *
mkds(struct memds *d, const char *name, const int32_t *size, size_t n,
    const int32_t *tok, size_t ntok)
{
	char err[256];
	uint64_t ptr = 0;
	struct mmidx *m;

	memset(d, 0, sizeof *d);
	memcpy(d->idx, MMIDX_MAGIC, 9);
	d->idx[9] = 1;
	d->idx[17] = (uint8_t)mmidx_dtype_code(MMIDX_FAIRSEQ, MMIDX_INT32);
	put_le(d->idx + 18, n, 8);
	for (size_t i = 0; i < n; i++) {
		put_le(d->idx + 26 + 4 * i, (uint32_t)size[i], 4);
		put_le(d->idx + 26 + 4 * n + 8 * i, ptr, 8);
		ptr += 4 * (uint64_t)(size[i] > 0 ? size[i] : 0);
	}
	d->idxlen = 26 + 12 * n;
	for (size_t i = 0; i < ntok; i++)
		put_le(d->bin + 4 * i, (uint32_t)tok[i], 4);
	d->binlen = 4 * ntok;
	m = mmidx_open_mem(d->idx, d->idxlen, d->bin, d->binlen, name,
	    MMIDX_AUTO, err, sizeof err);
	if (m == NULL)
		printf("# %s\n", err);
	return m;
}

static void
test_parts(void)
{
	static const int32_t sz[] = { 2, 1, 3 }, tk[] = { 5, 2, 2, 6, 7, 2 };
	static struct memds a, b, c;
	struct bsrc_pair p = { 0 };
	char err[256];
	uint64_t k;
	size_t part;
	int ok = 1;

	TEST(bsrc_pair_add(&p, mkds(&a, "a", sz, 3, tk, 6), NULL, err,
	    sizeof err) == 0 && bsrc_pair_add(&p, mkds(&b, "b", sz, 2, tk, 3),
	    NULL, err, sizeof err) == 0, "two monolingual parts");
	TEST(p.nparts == 2 && p.n == 5 && p.start[0] == 0 && p.start[1] == 3 &&
	    p.start[2] == 5 && p.tgt == NULL, "3 then 2 sentences, starts 0 3 5");
	for (uint64_t i = 0; i < 5; i++) {
		part = bsrc_part_of(&p, i, &k);
		ok &= part == (i < 3 ? 0 : 1) && k == (i < 3 ? i : i - 3);
	}
	TEST(ok, "each sentence in its part, at its index there");
	bsrc_pair_close(&p);
	TEST(p.nparts == 0 && p.n == 0 && p.src == NULL && p.start == NULL,
	    "closed: no parts left");
	TEST(bsrc_pair_add(&p, mkds(&a, "s", sz, 3, tk, 6), mkds(&c, "t", sz, 2,
	    tk, 3), err, sizeof err) == -1 && p.nparts == 0,
	    "a target of another length is refused");
	TEST(strcmp(err, "t.idx: 2 sentences, but s.idx has 3") == 0,
	    "naming both indexes: %s", err);
	bsrc_pair_close(&p);
}

/* Pair p of one part from s and t (t may be NULL). */
static int
mkpair(struct bsrc_pair *p, char *key, struct mmidx *s, struct mmidx *t)
{
	char err[256];

	memset(p, 0, sizeof *p);
	p->key = key;
	p->stok = p->ttok = -1;
	if (s == NULL || bsrc_pair_add(p, s, t, err, sizeof err) == -1) {
		printf("# %s\n", s != NULL ? err : "no dataset");
		return -1;
	}
	return 0;
}

/*
 * A lookup that says which it was asked: side * 1000 + 100 * the
 * dictionary language's first letter's place + the language's.
 */
static int64_t
lookup(void *arg, int target, const char *dictlang, const char *lang)
{
	(*(int *)arg)++;
	return target * 1000 + 100 * (dictlang[0] - 'a') + (lang[0] - 'a');
}

static void
test_langtoks(void)
{
	static char de[] = "de", en[] = "en";
	struct bsrc_pair p = { .slang = de, .tlang = en };
	int calls = 0;

	bsrc_pair_langtoks(&p, 0, 0, 0, lookup, &calls);
	TEST(p.stok == -1 && p.ttok == -1 && p.seos == 0 && p.tbos == 0 &&
	    calls == 0, "no tokens asked: none, and no lookup");
	bsrc_pair_langtoks(&p, 1, 1, 0, lookup, &calls);
	TEST(p.stok == 303 && p.ttok == 1404 && calls == 2,
	    "src: the source's token; the decoder's in the target dictionary");
	bsrc_pair_langtoks(&p, 2, 0, 0, lookup, &calls);
	TEST(p.stok == 304 && p.ttok == -1, "tgt: the target's token in the "
	    "source language's dictionary");
	p.tlang = NULL;
	bsrc_pair_langtoks(&p, 2, 0, 0, lookup, &calls);
	TEST(p.stok == 303, "tgt, monolingual: the source's own");
	p.slang = NULL;
	p.tlang = en;
	bsrc_pair_langtoks(&p, 2, 0, 0, lookup, &calls);
	TEST(p.stok == 404, "tgt, no source language: the target's dictionary "
	    "language");
	p.slang = de;
	bsrc_pair_langtoks(&p, 1, 1, 1, lookup, &calls);
	TEST(p.stok == -1 && p.ttok == -1 && p.seos == 303 && p.tbos == 1404,
	    "replacing: nothing prepended, new eos and bos");
	bsrc_pair_langtoks(&p, 0, 1, 1, lookup, &calls);
	TEST(p.seos == 0 && p.tbos == 1404, "replacing without a source token");
}

static void
test_sizes(void)
{
	static const int32_t s0[] = { 2, 1, 3 }, t0[] = { 1, 1, 1 };
	static const int32_t tk[] = { 5, 2, 2, 6, 7, 2 };
	static const int32_t neg[] = { 1, -1, 1 }, big[] = { 1, 9, 1 };
	static const int32_t top[] = { 1, INT32_MAX, 1 };
	static struct memds a, b, c, d;
	static char k0[] = "p0", k1[] = "p1";
	struct bsrc_pair p[2];
	struct batch_data *data;
	char err[256];
	uint32_t s, t;

	if (mkpair(&p[0], k0, mkds(&a, "a", s0, 3, tk, 6), mkds(&b, "b", t0, 3,
	    tk, 3)) == -1)
		return;
	p[0].stok = 9;		/* a language token before each source */
	data = bsrc_load_sizes(p, 1, 0, err, sizeof err);
	TEST(data != NULL && batch_data_bilingual(data) &&
	    batch_data_count(data, 0) == 3, "sizes of a bilingual pair: %s",
	    data ? "" : err);
	if (data != NULL) {
		batch_data_size(data, 0, 2, &s, &t);
		TEST(s == 4 && t == 1, "the source counts its token (3 + 1)");
	}
	TEST(p[0].srctok == 9 && p[0].tgttok == 3 && p[0].nparts == 1,
	    "tokens counted (6 + 3 language tokens), files kept open");
	batch_data_free(data);
	data = bsrc_load_sizes(p, 1, 1, err, sizeof err);
	TEST(data != NULL && p[0].nparts == 0, "close_after closes the pair");
	batch_data_free(data);

	if (mkpair(&p[0], k0, mkds(&a, "a", s0, 3, tk, 6), mkds(&b, "b", t0, 3,
	    tk, 3)) == -1 || mkpair(&p[1], k1, mkds(&c, "c", s0, 3, tk, 6),
	    NULL) == -1)
		return;
	TEST(bsrc_load_sizes(p, 2, 0, err, sizeof err) == NULL &&
	    strcmp(err, "pair p1 is monolingual, pair p0 is not") == 0,
	    "bilingual and monolingual pairs do not mix: %s", err);
	bsrc_pair_close(&p[1]);
	if (mkpair(&p[1], k1, mkds(&c, "c", s0, 0, tk, 0), mkds(&d, "d", t0, 0,
	    tk, 0)) == -1)
		return;
	TEST(bsrc_load_sizes(p, 2, 0, err, sizeof err) == NULL &&
	    strcmp(err, "c.idx: pair p1 has no sentences") == 0,
	    "an empty pair: %s", err);
	bsrc_pair_close(&p[0]);
	bsrc_pair_close(&p[1]);

	if (mkpair(&p[0], k0, mkds(&a, "n", neg, 3, tk, 2), NULL) == -1)
		return;
	TEST(bsrc_load_sizes(p, 1, 0, err, sizeof err) == NULL &&
	    strcmp(err, "n.idx: sequence 1: bad size -1") == 0,
	    "a negative size, named: %s", err);
	bsrc_pair_close(&p[0]);
	if (mkpair(&p[0], k0, mkds(&a, "g", big, 3, tk, 6), NULL) == -1)
		return;
	TEST(bsrc_load_sizes(p, 1, 0, err, sizeof err) == NULL &&
	    strcmp(err, "g.idx: sequence 1: size 9 does not fit in g.bin "
	    "(24 bytes)") == 0, "a size larger than the .bin: %s", err);
	bsrc_pair_close(&p[0]);
	if (mkpair(&p[0], k0, mkds(&a, "m", top, 3, tk, 6), NULL) == -1)
		return;
	TEST(bsrc_load_sizes(p, 1, 0, err, sizeof err) == NULL &&
	    strcmp(err, "m.idx: sequence 1: size 2147483647 does not fit in "
	    "m.bin (24 bytes)") == 0, "the largest size, no token: %s", err);
	p[0].stok = 9;
	TEST(bsrc_load_sizes(p, 1, 0, err, sizeof err) == NULL &&
	    strcmp(err, "m.idx: sequence 1: bad size 2147483647") == 0,
	    "the largest size with a token to add: %s", err);
	bsrc_pair_close(&p[0]);
	if (mkpair(&p[0], k0, mkds(&a, "h", t0, 3, tk, 2), NULL) == -1)
		return;
	TEST(bsrc_load_sizes(p, 1, 0, err, sizeof err) == NULL &&
	    strcmp(err, "h.idx: sizes add up to 3 tokens (12 bytes), more than "
	    "h.bin holds (8 bytes)") == 0, "sizes that fit one by one, not "
	    "together: %s", err);
	bsrc_pair_close(&p[0]);
}

static void
test_sort(void)
{
	struct batch_item a[7] = { { 2, 0 }, { 0, 1 }, { 2, 2 }, { 1, 3 },
	    { 0, 4 }, { 1, 5 }, { 0, 6 } }, tmp[7];
	static const uint32_t wp[] = { 0, 0, 0, 1, 1, 2, 2 };
	static const uint64_t wi[] = { 1, 4, 6, 3, 5, 0, 2 };
	int ok = 1;

	bsrc_sort_items(a, tmp, 7);
	for (int i = 0; i < 7; i++)
		ok &= a[i].pair == wp[i] && a[i].index == wi[i];
	TEST(ok, "items sorted by pair, in their order within a pair");
	bsrc_sort_items(a, tmp, 0);
	bsrc_sort_items(a, tmp, 1);
	TEST(a[0].pair == 0 && a[0].index == 1, "0 and 1 items: nothing moves");
}

static void
test_collate(void)
{
	/* pair 0: "5 2" "6 7 2"; pair 1: "8 2" "2"; targets "3 2" each */
	static const int32_t s0[] = { 2, 3 }, k0[] = { 5, 2, 6, 7, 2 };
	static const int32_t s1[] = { 2, 1 }, k1[] = { 8, 2, 2 };
	static const int32_t ts[] = { 2, 2 }, tk[] = { 3, 2, 3, 2 };
	static const int32_t es[] = { 2, 0 }, etk[] = { 3, 2 };
	static const int32_t bad[] = { 1, 2, 2, 4, 2, 1 };
	static const int32_t bs[] = { 2, 2, 2 };
	static struct memds a, b, c, d;
	static char key0[] = "x-y", key1[] = "z-y";
	struct batch_collate_opts o = BATCH_COLLATE_OPTS_INIT;
	struct bsrc_collator col;
	struct bsrc_pair p[2];
	struct batch_collated out;
	struct batch_item it[3] = { { 1, 0 }, { 0, 1 }, { 0, 0 } };
	char err[1024];
	int r;

	o.left_pad_source = 0;
	bsrc_collator_init(&col, &o, 0);
	if (mkpair(&p[0], key0, mkds(&a, "a", s0, 2, k0, 5), mkds(&b, "b", ts,
	    2, tk, 4)) == -1 || mkpair(&p[1], key1, mkds(&c, "c", s1, 2, k1, 3),
	    mkds(&d, "d", ts, 2, tk, 4)) == -1)
		return;
	p[1].stok = 40;		/* pair 1's sources get a language token */
	p[0].tbos = 41;		/* pair 0's targets start with 41 */
	r = bsrc_collate(&col, p, 2, it, 3, "step 0", &out, err, sizeof err);
	TEST(r == 0 && out.n == 3, "three items of two pairs: %s", r ? err : "");
	if (r == 0) {
		/*
		 * Grouped by pair: 0:1 (6 7 2), 0:0 (5 2), 1:0 (40 8 2);
		 * sorted by source length, stably: 0:1, 1:0, 0:0.
		 */
		TEST(out.id[0] == 1 && out.id[1] == 0 && out.id[2] == 0 &&
		    out.src_width == 3, "rows grouped by pair, then by length");
		TEST(out.src_tokens[3] == 40 && out.src_tokens[4] == 8 &&
		    out.src_tokens[6] == 5 && out.src_tokens[8] == 1,
		    "the language token leads pair 1's source; padding right");
		TEST(out.prev_output_tokens[0] == 41 &&
		    out.prev_output_tokens[2] == 2 &&
		    out.prev_output_tokens[4] == 41, "pair 0's new target bos");
		batch_collated_free(&out);
	}
	r = bsrc_collate(&col, p, 2, it, 0, "step 1", &out, err, sizeof err);
	TEST(r == 0 && out.n == 0, "no items: an empty batch");
	batch_collated_free(&out);
	bsrc_pair_close(&p[0]);

	if (mkpair(&p[0], key0, mkds(&a, "a", s0, 2, k0, 5), mkds(&b, "e", es,
	    2, etk, 2)) == -1)
		return;
	it[0].pair = 0;
	it[0].index = 1;
	r = bsrc_collate(&col, p, 2, it, 1, "epoch 2, step 5", &out, err,
	    sizeof err);
	TEST(r == -1 && strcmp(err, "e.idx: sequence 1: empty target (epoch 2, "
	    "step 5, pair x-y, sentence 1)") == 0, "an empty target: %s", err);
	bsrc_pair_close(&p[0]);

	/* "1 2" (pad inside), "2 4" (no eos at the end), "2 1" (ends in pad) */
	if (mkpair(&p[0], key0, mkds(&a, "f", bs, 3, bad, 6), NULL) == -1)
		return;
	for (uint64_t i = 0; i < 3; i++) {
		static const char *const why[] = { "<pad> inside it",
		    "it does not end in </s>", "it ends in <pad>, not </s>" };
		char want[512];

		it[0].index = i;
		snprintf(want, sizeof want, "f.idx: sentence %ju: %s: not what "
		    "fairseq-preprocess writes (tensor2tensor ids?); binarize "
		    "through a dictionary (mmap-index dict, then build "
		    "--input-format text --dict), or give --raw-ids if these are "
		    "the ids you mean", (uintmax_t)i, why[i]);
		r = bsrc_collate(&col, p, 1, it, 1, "s", &out, err, sizeof err);
		TEST(r == -1 && strcmp(err, want) == 0,
		    "fairseq ids checked: %s", why[i]);
	}
	bsrc_collator_free(&col);
	bsrc_collator_init(&col, &o, 1);
	it[0].index = 1;
	r = bsrc_collate(&col, p, 1, it, 1, "s", &out, err, sizeof err);
	TEST(r == 0 && out.n == 1 && out.src_tokens[1] == 4,
	    "raw ids are taken as they are");
	if (r == 0)
		batch_collated_free(&out);
	bsrc_pair_close(&p[0]);
	bsrc_pair_close(&p[1]);
	bsrc_collator_free(&col);
}

static void
test_langs(void)
{
	char w[BSRC_LANGTOK_MAX], err[200], long_lang[400];
	const char *v[] = { "fr", "de", "fr", "en", "de" };
	struct bsrc_langs l = { 0 };
	static const char text[] = " de \r\n\n\ten\f\nfr_Latn";

	TEST(bsrc_langtok_word(w, "de", 0) == 6 && strcmp(w, "__de__") == 0,
	    "multilingual token");
	TEST(bsrc_langtok_word(w, "en_XX", 1) == 7 && strcmp(w, "[en_XX]") == 0,
	    "mbart token");
	memset(long_lang, 'x', sizeof long_lang - 1);
	long_lang[sizeof long_lang - 1] = '\0';
	TEST(bsrc_langtok_word(w, long_lang, 0) == BSRC_LANGTOK_MAX - 1,
	    "a token too long is cut");

	TEST(bsrc_prefix_lang("data/train.de-en.de") != NULL &&
	    strcmp(bsrc_prefix_lang("data/train.de-en.de"), "de") == 0,
	    "the language after the last dot");
	TEST(bsrc_prefix_lang("d.v1/train") == NULL, "a dot in a directory only");
	TEST(bsrc_prefix_lang("train.") == NULL, "nothing after the dot");
	TEST(bsrc_prefix_lang(NULL) == NULL, "no prefix");

	TEST(bsrc_name_direction("train.de-en.de.idx", "train", "de-en",
	    "en-de") == 1, "forward direction");
	TEST(bsrc_name_direction("train1.en-de.en.idx", "train", "de-en",
	    "en-de") == 2, "reverse direction, a numbered split");
	TEST(bsrc_name_direction("train.de-en.de.bin", "train", "de-en",
	    "en-de") == 0, "not an index");
	TEST(bsrc_name_direction("valid.de-en.de.idx", "train", "de-en",
	    "en-de") == 0, "another split");
	TEST(bsrc_name_direction("train.de.idx", "train", "de-en", "en-de") == 0,
	    "too few fields");
	TEST(bsrc_name_direction("train.xde-en.de.idx", "train", "de-en",
	    "en-de") == 0, "a longer direction");

	TEST(bsrc_langs_list(&l, ",de,,en,") == 0 && l.n == 2 &&
	    strcmp(l.v[0], "de") == 0 && strcmp(l.v[1], "en") == 0,
	    "a comma list, empty items skipped");
	TEST(bsrc_langs_has(&l, "en") && !bsrc_langs_has(&l, "e"), "membership");
	bsrc_langs_free(&l);
	TEST(bsrc_langs_text(&l, text, sizeof text - 1, err, sizeof err) == 0 &&
	    l.n == 3 && strcmp(l.v[0], "de") == 0 && strcmp(l.v[1], "en") == 0 &&
	    strcmp(l.v[2], "fr_Latn") == 0,
	    "a language file: stripped, blank lines skipped, no last newline");
	bsrc_langs_free(&l);
	TEST(bsrc_langs_text(&l, "de\0en\n", 6, err, sizeof err) == -1 &&
	    strcmp(err, "a NUL byte in the language list") == 0, "a NUL byte");
	bsrc_langs_free(&l);
	TEST(bsrc_langs_sorted(&l, v, 5) == 0 && l.n == 3 &&
	    strcmp(l.v[0], "de") == 0 && strcmp(l.v[1], "en") == 0 &&
	    strcmp(l.v[2], "fr") == 0, "the pairs' languages sorted, once each");
	bsrc_langs_free(&l);
	TEST(bsrc_langs_sorted(&l, v, 0) == 0 && l.n == 0, "no languages");
	bsrc_langs_free(&l);
}

static void
test_dict(void)
{
	static const char dict[] = "hello 5\n__en__ 3\n";
	const char *v[] = { "de", "en" };
	struct bsrc_langs l = { 0 };
	char ferr[FQD_ERRMAX];
	struct fqd *d = fqd_load((const uint8_t *)dict, sizeof dict - 1, ferr,
	    sizeof ferr);
	size_t n;

	if (d == NULL) {
		TEST(0, "dictionary loads: %s", ferr);
		return;
	}
	n = fqd_size(d);
	bsrc_langs_sorted(&l, v, 2);
	TEST(bsrc_dict_augment(d, &l, 0) == 0 && fqd_size(d) == n + 1,
	    "one token added, the one the file has kept");
	TEST(fqd_find(d, "__en__", 6) == (long)n - 1 &&
	    fqd_find(d, "__de__", 6) == (long)n, "ids: the file's, then appended");
	TEST(bsrc_dict_augment(d, &l, 1) == 0 && fqd_size(d) == n + 4 &&
	    fqd_find(d, "[de]", 4) == (long)n + 1 &&
	    fqd_find(d, "<mask>", 6) == (long)n + 3, "mbart: tokens, then <mask>");
	bsrc_langs_free(&l);
	fqd_free(d);
}

static int
real(const char *s, double *out)
{
	char *end;

	if (*s == '\0')
		return -1;
	*out = strtod(s, &end);
	return *end == '\0' ? 0 : -1;
}

static int
weights_bad(const struct bsrc_pair *p, const char *spec, const char *want)
{
	double w[2];
	char err[256];

	if (bsrc_weights(spec, p, 2, real, w, err, sizeof err) == 0)
		return 0;
	if (strcmp(err, want) != 0) {
		printf("# got '%s'\n", err);
		return 0;
	}
	return 1;
}

static void
test_weights(void)
{
	static char k0[] = "de-en", k1[] = "fr-en";
	struct bsrc_pair p[2] = { { .key = k0 }, { .key = k1 } };
	struct batch_shard_stats ss = { 0 };
	double w[2], s, t;
	char err[256];

	TEST(bsrc_weights("fr-en=0.5,main:de-en=2", p, 2, real, w, err,
	    sizeof err) == 0 && w[0] == 2 && w[1] == 0.5,
	    "weights by key, in any order, main: dropped");
	TEST(bsrc_weights("de-en=0,fr-en=1,", p, 2, real, w, err, sizeof err) == 0 &&
	    w[0] == 0 && w[1] == 1, "a weight of 0, a trailing comma");
	TEST(weights_bad(p, "de-en", "expected KEY=W, not 'de-en'"), "no '='");
	TEST(weights_bad(p, "es-en=1", "no pair 'es-en'"), "unknown pair");
	TEST(weights_bad(p, "de-en=1,de-en=2", "pair 'de-en' given twice"),
	    "a pair twice");
	TEST(weights_bad(p, "de-en=-1,fr-en=1",
	    "expected a weight of 0 or more for de-en, not '-1'"), "negative");
	TEST(weights_bad(p, "de-en=x,es-en=1",
	    "expected a weight of 0 or more for de-en, not 'x'"),
	    "faults in the order of the list");
	TEST(weights_bad(p, "de-en=1", "no weight for pair 'fr-en'"),
	    "a pair without a weight");
	TEST(weights_bad(p, "de-en=1e308,fr-en=1e308",
	    "the weights overflow (their sum is not a finite number)"),
	    "an infinite sum");

	bsrc_padding(&ss, &s, &t);
	TEST(s == 0 && t == 0, "no slots: no padding");
	ss.src_slots = 8;
	ss.src_tokens = 6;
	ss.tgt_slots = 4;
	ss.tgt_tokens = 4;
	bsrc_padding(&ss, &s, &t);
	TEST(s == 0.25 && t == 0, "a quarter of the source slots padded");
}

/*
 * Run the schedule over epochs first .. first + n - 1, the pass drawn
 * anew at the epochs of 'fresh' (a bit each, from first); the loads as
 * "e:d" (epoch e loads directory d's epoch), blank-separated.
 */
static int
schedule(uint64_t vepoch, uint64_t vsize, int many, uint64_t first, int n,
    unsigned fresh, const char *want)
{
	struct bsrc_schedule s = { vepoch, vsize, many, 0, 0, 0 };
	char got[256];
	size_t off = 0;

	got[0] = '\0';
	for (int i = 0; i < n; i++) {
		uint64_t d, e = first + (uint64_t)i;
		int load = bsrc_schedule_load(&s, e, &d);

		if (load)
			off += (size_t)snprintf(got + off, sizeof got - off,
			    "%s%ju:%ju", off ? " " : "", (uintmax_t)e, (uintmax_t)d);
		bsrc_schedule_done(&s, (fresh >> i) & 1, load);
	}
	if (strcmp(got, want) != 0) {
		printf("# got '%s'\n", got);
		return 0;
	}
	return 1;
}

static void
test_schedule(void)
{
	TEST(schedule(0, 0, 0, 1, 3, 0, "1:1"), "one directory: loaded once");
	TEST(schedule(0, 0, 1, 2, 3, 0, "2:2 3:3 4:4"),
	    "several: loaded every epoch from its own");
	TEST(schedule(0, 0, 1, 1, 3, 7, "1:1 2:2 3:3"),
	    "without virtual epochs a new pass changes nothing");
	/* 5 items in epochs of 2: 3 epochs a pass; epoch 4 is of pass 2 */
	TEST(schedule(2, 5, 1, 4, 5, 0x6, "4:2 6:3"),
	    "virtual epochs: the shard epoch from the data size, the next "
	    "directory after a pass drawn again");
	TEST(schedule(2, 5, 1, 1, 4, 0x3, "1:1 3:2"),
	    "a pass drawn at the load asks for nothing");
	TEST(schedule(2, 0, 1, 3, 3, 0x2, "3:3 5:2"),
	    "no data size: the epoch's directory first, the shard epoch from 1");
	TEST(schedule(2, 5, 0, 1, 6, 0x3f, "1:1"),
	    "one directory: never loaded again");
}

int
main(void)
{
	test_parts();
	test_langtoks();
	test_sizes();
	test_sort();
	test_collate();
	test_langs();
	test_dict();
	test_weights();
	test_schedule();
	return tap_done();
}
