/*
 * Unit tests for lib/batchio (batch-sample's size lines and sample
 * batches; batches out as ids, JSON and Example features).
 */
#include <string.h>

#include "batchio.h"
#include "buf.h"
#include "tap.h"

static int
sizes_ok(const char *in, const char *want_ix, const char *want_sz, int indexed)
{
	struct bio_sizes s;
	char err[200], got[512];
	size_t off = 0;

	if (bio_sizes_parse(&s, in, strlen(in), err, sizeof err) == -1) {
		printf("# %s\n", err);
		return 0;
	}
	if (s.indexed != indexed) {
		bio_sizes_free(&s);
		return 0;
	}
	got[0] = '\0';
	for (uint64_t i = 0; i < s.n; i++)
		off += (size_t)snprintf(got + off, sizeof got - off, "%s%ju",
		    i ? " " : "", (uintmax_t)s.index[i]);
	if (strcmp(got, want_ix) != 0) {
		printf("# index: %s\n", got);
		bio_sizes_free(&s);
		return 0;
	}
	off = 0;
	got[0] = '\0';
	for (uint64_t i = 0; i < s.n; i++)
		off += (size_t)snprintf(got + off, sizeof got - off, "%s%u",
		    i ? " " : "", s.size[i]);
	bio_sizes_free(&s);
	if (strcmp(got, want_sz) != 0) {
		printf("# size: %s\n", got);
		return 0;
	}
	return 1;
}

static int
sizes_bad(const char *in, const char *want)
{
	struct bio_sizes s;
	char err[200];

	if (bio_sizes_parse(&s, in, strlen(in), err, sizeof err) == 0) {
		bio_sizes_free(&s);
		return 0;
	}
	if (strcmp(err, want) != 0) {
		printf("# got '%s'\n", err);
		return 0;
	}
	return s.index == NULL && s.n == 0;
}

static int
batch_bad(const char *in, const char *want)
{
	struct bio_batch b = { 0 };
	char err[200];
	int ok;

	if (bio_batch_parse(&b, in, strlen(in), err, sizeof err) == 0) {
		bio_batch_free(&b);
		return 0;
	}
	ok = strcmp(err, want) == 0 && b.n == 0;
	if (!ok)
		printf("# got '%s'\n", err);
	bio_batch_free(&b);
	return ok;
}

static void
test_sizes(void)
{
	TEST(sizes_ok("", "", "", 0), "empty input: no items");
	TEST(sizes_ok("3\n1\n4", "0 1 2", "3 1 4", 0), "SIZE lines, last without newline");
	TEST(sizes_ok("7 3\r\n2\t1 \n", "7 2", "3 1", 1), "INDEX SIZE lines, tabs, CR");
	TEST(sizes_ok("  5  \n", "0", "5", 0), "spaces around");
	TEST(sizes_ok("2147483647\n0\n", "0 1", "2147483647 0", 0), "largest size and zero");
	TEST(sizes_bad("3\n\n4\n", "line 2: expected SIZE"), "empty line");
	TEST(sizes_bad("3\n1 2\n", "line 2: expected SIZE"), "forms mixed (1)");
	TEST(sizes_bad("1 2\n3\n", "line 2: expected INDEX SIZE"), "forms mixed (2)");
	TEST(sizes_bad("-1\n", "line 1: expected SIZE or INDEX SIZE"), "negative");
	TEST(sizes_bad("1 2 3\n", "line 1: expected SIZE or INDEX SIZE"), "three fields");
	TEST(sizes_bad("4x\n", "line 1: expected SIZE or INDEX SIZE"), "junk");
	TEST(sizes_bad("2147483648\n", "line 1: size 2147483648 exceeds 2147483647"),
	    "size above int32");
	TEST(sizes_bad("18446744073709551616 1\n", "line 1: expected SIZE or INDEX SIZE"),
	    "index above 2^64 - 1");
	TEST(sizes_ok("18446744073709551615 1\n", "18446744073709551615", "1", 1),
	    "index 2^64 - 1");
}

static void
test_batches(void)
{
	struct bio_batch b = { 0 };
	char err[200];
	const char *in = "[{\"id\":7,\"source\":[10,11,2],\"target\":[20,2],\"x\":1},"
	    "{\"id\":3,\"source\":[],\"target\":[21,-5,9223372036854775807]}]";
	int r;

	r = bio_batch_parse(&b, in, strlen(in), err, sizeof err);
	TEST(r == 0 && b.n == 2 && b.has_target, "two samples with targets");
	TEST(r == 0 && b.s[0].id == 7 && b.s[0].nsrc == 3 && b.s[0].src[2] == 2 &&
	    b.s[0].ntgt == 2 && b.s[0].tgt[0] == 20, "first sample");
	TEST(r == 0 && b.s[1].id == 3 && b.s[1].nsrc == 0 && b.s[1].ntgt == 3 &&
	    b.s[1].tgt[1] == -5 && b.s[1].tgt[2] == INT64_MAX, "second sample");
	in = " [{\"id\":0,\"source\":[1]},{\"id\":1,\"source\":[2,3],\"target\":null}] \r";
	r = bio_batch_parse(&b, in, strlen(in), err, sizeof err);
	TEST(r == 0 && b.n == 2 && !b.has_target && b.s[1].nsrc == 2 &&
	    b.s[1].src[1] == 3, "no targets; the batch reused");
	{
		struct batch_sample s[2];

		bio_batch_samples(&b, s);
		TEST(s[0].id == 0 && s[0].nsrc == 1 && s[0].src[0] == 1 &&
		    s[0].tgt == NULL && s[1].nsrc == 2 && s[1].src == b.s[1].src &&
		    s[1].new_src_eos == 0 && s[1].new_tgt_bos == 0,
		    "samples without targets for batch_collate()");
	}
	in = "[{\"id\":5,\"source\":[1],\"target\":[]}]";
	r = bio_batch_parse(&b, in, strlen(in), err, sizeof err);
	{
		struct batch_sample s[1];

		bio_batch_samples(&b, s);
		TEST(r == 0 && b.has_target && s[0].id == 5 && s[0].tgt != NULL &&
		    s[0].ntgt == 0, "an empty target points somewhere");
	}
	r = bio_batch_parse(&b, "[]", 2, err, sizeof err);
	TEST(r == 0 && b.n == 0, "empty batch");
	bio_batch_free(&b);
	TEST(batch_bad("{}", "expected a JSON array of samples"), "an object");
	TEST(batch_bad("[1]", "sample 0: not an object"), "a number sample");
	TEST(batch_bad("[{\"source\":[]}]", "sample 0: \"id\" is not a non-negative integer"),
	    "no id");
	TEST(batch_bad("[{\"id\":-1,\"source\":[]}]",
	    "sample 0: \"id\" is not a non-negative integer"), "negative id");
	TEST(batch_bad("[{\"id\":1}]", "sample 0: no \"source\""), "no source");
	TEST(batch_bad("[{\"id\":1,\"source\":[1.5]}]",
	    "sample 0: \"source\" is not an array of integers"), "float token");
	TEST(batch_bad("[{\"id\":1,\"source\":[1],\"target\":[2]},{\"id\":2,\"source\":[1]}]",
	    "sample 1: no \"target\" where sample 0 has one"), "target missing");
	TEST(batch_bad("[{\"id\":1,\"source\":[1]},{\"id\":2,\"source\":[1],\"target\":[]}]",
	    "sample 1: a \"target\" where sample 0 has none"), "target extra");
	TEST(batch_bad("[{\"id\":1,\"source\":[1],\"target\":\"x\"}]",
	    "sample 0: \"target\" is not an array of integers"), "target a string");
	TEST(batch_bad("[", "bad JSON at column 1: ']' expected near end of file"),
	    "truncated JSON");
}

/* What b holds is want (then b is emptied). */
static int
holds(struct buf *b, const char *want)
{
	int ok = b->len == strlen(want) && memcmp(b->p, want, b->len) == 0;

	if (!ok)
		printf("# got '%.*s'\n", (int)b->len, (const char *)b->p);
	b->len = 0;
	return ok;
}

static void
test_put(void)
{
	struct batch_item it[3] = { { 0, 7 }, { 12, 0 },
	    { 3, 9223372036854775807u } };
	int64_t id[2] = { 4, 1 }, len[2] = { 3, -2 };
	int64_t src[6] = { 5, 6, 2, 1, 8, 2 }, tgt[4] = { 9, 2, 1, 1 };
	int64_t prev[4] = { 2, 9, 2, 1 };
	struct batch_collated c = { 2, 3, id, len, 3, src, 2, tgt, prev };
	struct batch_collated e = { 0 };
	uint64_t ix[3] = { 0, UINT64_MAX, 9223372036854775808u };
	struct buf b = { 0 };

	TEST(bio_put_ids(&b, it, 3) == 0 &&
	    holds(&b, "0:7 12:0 3:9223372036854775807\n"),
	    "ids: a pair above 9, the largest index");
	TEST(bio_put_ids(&b, it, 0) == 0 && holds(&b, "\n"),
	    "a fill batch: an empty line");
	TEST(bio_put_indices(&b, ix, 3) == 0 &&
	    holds(&b, "0 18446744073709551615 9223372036854775808\n"),
	    "by-size indices, every uint64 unsigned");
	TEST(bio_put_indices(&b, ix, 0) == 0 && holds(&b, "\n"),
	    "no indices: an empty line");
	TEST(bio_put_json(&b, 1, 0, 18446744073709551615u, it, 2, NULL, 1, 1) == 0 &&
	    holds(&b, "{\"epoch\":1,\"shard\":0,\"step\":18446744073709551615,"
	    "\"ids\":[[0,7],[12,0]]}\n"), "a JSON line without collation");
	TEST(bio_put_json(&b, 2, 1, 0, it, 0, NULL, 1, 1) == 0 &&
	    holds(&b, "{\"epoch\":2,\"shard\":1,\"step\":0,\"ids\":[]}\n"),
	    "an empty batch");
	TEST(bio_put_collated(&b, &c, 1, 1) == 0 &&
	    holds(&b, "\"id\":[4,1],\"nsentences\":2,\"ntokens\":3,"
	    "\"src_tokens\":[[5,6,2],[1,8,2]],\"src_lengths\":[3,-2],"
	    "\"prev_output_tokens\":[[2,9],[2,1]],\"target\":[[9,2],[1,1]]"),
	    "the collated keys");
	TEST(bio_put_collated(&b, &c, 1, 0) == 0 &&
	    strstr((const char *)b.p, "\"prev_output_tokens\":null,\"target\":[[") !=
	    NULL, "no input feeding: prev_output_tokens null");
	b.len = 0;
	TEST(bio_put_collated_line(&b, &e, 0, 1) == 0 &&
	    holds(&b, "{\"id\":[],\"nsentences\":0,\"ntokens\":0,"
	    "\"src_tokens\":[],\"src_lengths\":[],\"prev_output_tokens\":null,"
	    "\"target\":null}\n"), "collate's line");
	TEST(bio_put_collated(&b, &e, 0, 1) == 0 &&
	    holds(&b, "\"id\":[],\"nsentences\":0,\"ntokens\":0,"
	    "\"src_tokens\":[],\"src_lengths\":[],\"prev_output_tokens\":null,"
	    "\"target\":null"), "an empty batch without targets");
	TEST(bio_put_json(&b, 1, 0, 3, it, 1, &c, 0, 1) == 0 &&
	    holds(&b, "{\"epoch\":1,\"shard\":0,\"step\":3,\"ids\":[[0,7]],"
	    "\"id\":[4,1],\"nsentences\":2,\"ntokens\":3,"
	    "\"src_tokens\":[[5,6,2],[1,8,2]],\"src_lengths\":[3,-2],"
	    "\"prev_output_tokens\":null,\"target\":null}\n"),
	    "a JSON line with the collated keys (monolingual)");
	rp_buf_free(&b);
}

/* The features of f, "name:v,v;name:..." */
static int
features(const struct bio_features *f, const char *want)
{
	char got[1024];
	size_t off = 0;

	got[0] = '\0';
	for (size_t i = 0; i < f->n; i++) {
		off += (size_t)snprintf(got + off, sizeof got - off, "%s%s:",
		    i ? ";" : "", f->name[i]);
		for (size_t k = 0; k < f->len[i]; k++)
			off += (size_t)snprintf(got + off, sizeof got - off,
			    "%s%lld", k ? "," : "", (long long)f->val[i][k]);
	}
	if (strcmp(got, want) != 0) {
		printf("# got '%s'\n", got);
		return 0;
	}
	return 1;
}

static void
test_features(void)
{
	struct batch_item it[2] = { { 0, 7 }, { 12, 5 } };
	int64_t id[2] = { 4, 1 }, len[2] = { 3, 2 };
	int64_t src[6] = { 5, 6, 2, 1, 8, 2 }, tgt[4] = { 9, 2, 1, 1 };
	int64_t prev[4] = { 2, 9, 2, 1 };
	struct batch_collated c = { 2, 3, id, len, 3, src, 2, tgt, prev };
	struct bio_features f = { 0 };

	TEST(bio_features_batch(&f, 1, 0, 2, it, 2, NULL, 1, 1) == 0 &&
	    features(&f, "epoch:1;shard:0;step:2;ids:0,7,12,5;ids_shape:2,2"),
	    "a batch: its place and ids");
	TEST(bio_features_batch(&f, 3, 1, 0, it, 0, NULL, 1, 1) == 0 &&
	    features(&f, "epoch:3;shard:1;step:0;ids:;ids_shape:0,2"),
	    "a fill batch: no ids, the features start again");
	TEST(bio_features_batch(&f, 1, 0, 2, it, 1, &c, 1, 1) == 0 &&
	    features(&f, "epoch:1;shard:0;step:2;ids:0,7;ids_shape:1,2;"
	    "id:4,1;id_shape:2;nsentences:2;nsentences_shape:;ntokens:3;"
	    "ntokens_shape:;src_tokens:5,6,2,1,8,2;src_tokens_shape:2,3;"
	    "src_lengths:3,2;src_lengths_shape:2;prev_output_tokens:2,9,2,1;"
	    "prev_output_tokens_shape:2,2;target:9,2,1,1;target_shape:2,2"),
	    "collated: every tensor with its shape");
	TEST(bio_features_batch(&f, 1, 0, 2, it, 1, &c, 1, 0) == 0 && f.n == 17 &&
	    strcmp(f.name[15], "target") == 0,
	    "no input feeding: no prev_output_tokens");
	TEST(bio_features_batch(&f, 1, 0, 2, it, 1, &c, 0, 1) == 0 && f.n == 15 &&
	    strcmp(f.name[14], "src_lengths_shape") == 0,
	    "monolingual: no target either");
	bio_features_free(&f);
	TEST(f.ids == NULL && f.n == 0, "freed and zeroed");
}

int
main(void)
{
	test_sizes();
	test_batches();
	test_put();
	test_features();
	return tap_done();
}
