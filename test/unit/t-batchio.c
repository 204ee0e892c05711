/*
 * Unit tests for lib/batchio (batch-sample's size lines and sample
 * batches) and lib/fsdict (fairseq dict.txt lookups).
 */
#include <string.h>

#include "batchio.h"
#include "fsdict.h"
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

static int
dict_err(const char *text, const char *want)
{
	char err[200];
	struct fsdict *d = fsdict_load_mem(text, strlen(text), "d.txt", err, sizeof err);

	if (d != NULL) {
		fsdict_free(d);
		return 0;
	}
	if (strcmp(err, want) != 0)
		printf("# got '%s'\n", err);
	return strcmp(err, want) == 0;
}

static void
test_dict(void)
{
	const char *text = "hello 10\n__eng_Latn__ 1\r\na b 3\n__tur_Latn__ 1 #fairseq:overwrite\n"
	    "x 0\n<unk> 5 #fairseq:overwrite\n__eng_Latn__ 1 #fairseq:overwrite\n \t5\n";
	char err[200];
	struct fsdict *d = fsdict_load_mem(text, strlen(text), "d.txt", err, sizeof err);

	TEST(d != NULL, "dictionary loads");
	if (d == NULL) {
		printf("# %s\n", err);
		return;
	}
	TEST_INT(fsdict_size(d), ==, 12, "4 specials + 8 lines");
	TEST_INT(fsdict_lookup(d, "hello", 5), ==, 4, "line 0 is id 4");
	TEST_INT(fsdict_lookup(d, "a b", 3), ==, 6, "a word with a space");
	TEST_INT(fsdict_lookup(d, "__tur_Latn__", 12), ==, 7, "overwrite flag on a new word");
	TEST_INT(fsdict_lookup(d, "__eng_Latn__", 12), ==, 10, "overwrite: the later id");
	TEST_INT(fsdict_lookup(d, "<unk>", 5), ==, 9, "a special overwritten");
	TEST_INT(fsdict_lookup(d, "<pad>", 5), ==, 1, "pad is 1");
	TEST_INT(fsdict_lookup(d, "</s>", 4), ==, 2, "eos is 2");
	TEST_INT(fsdict_lookup(d, "", 0), ==, 11, "the empty word");
	TEST_INT(fsdict_lookup(d, "hell", 4), ==, -1, "absent prefix");
	TEST_INT(fsdict_lookup(d, "zzz", 3), ==, -1, "absent after all");
	fsdict_free(d);
	fsdict_free(NULL);
	TEST(dict_err("a 1\nb 2\na 3\n", "d.txt: line 3: duplicate word 'a' "
	    "(add #fairseq:overwrite to replace it)"), "duplicate");
	TEST(dict_err("a 1\n<s> 2\n", "d.txt: line 2: duplicate word '<s>' "
	    "(add #fairseq:overwrite to replace it)"), "special duplicated");
	TEST(dict_err("a 1\nb\n", "d.txt: line 2: incorrect dictionary format, "
	    "expected '<token> <cnt> [flags]'"), "no count");
	TEST(dict_err("a 1\n\nb 2\n", "d.txt: line 2: incorrect dictionary format, "
	    "expected '<token> <cnt> [flags]'"), "empty line");
	TEST(dict_err("a x\n", "d.txt: line 1: incorrect dictionary format, "
	    "expected '<token> <cnt> [flags]'"), "count not a number");
	TEST(dict_err("a #fairseq:overwrite\n", "d.txt: line 1: incorrect dictionary format, "
	    "expected '<token> <cnt> [flags]'"), "flag without count");
	text = "a 1_000\nb +3\nc -2\n";
	d = fsdict_load_mem(text, strlen(text), "d.txt", err, sizeof err);
	TEST(d != NULL && fsdict_lookup(d, "c", 1) == 6, "counts as Python's int() reads them");
	fsdict_free(d);
	TEST(fsdict_load("/nonexistent/dict.txt", err, sizeof err) == NULL &&
	    strcmp(err, "/nonexistent/dict.txt: No such file or directory") == 0,
	    "missing file named");
}

int
main(void)
{
	test_sizes();
	test_batches();
	test_dict();
	return tap_done();
}
