/*
 * fairseq dictionaries: the rules of fairseq/data/dictionary.py worked
 * by hand (finalize's order, nwords, threshold, padding words, save and
 * load, encode_line) and the line reader's universal newlines,
 * across read boundaries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fairseq_dict.h"
#include "tap.h"

#define S(x) (const uint8_t *)(x), sizeof(x) - 1

/* Count each line of s ("\n"-separated) into a new dictionary. */
static struct fqd *
counted(const char *s)
{
	struct fqd *d = fqd_new(1);
	size_t bad;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);

		fqd_count_line(d, (const uint8_t *)s, n, &bad);
		s += n + (nl != NULL);
	}
	return d;
}

static int
saved_is(const struct fqd *d, const char *want)
{
	struct buf b = { 0 };
	int ok;

	if (fqd_save(d, &b) == -1)
		return 0;
	ok = b.len == strlen(want) && (b.len == 0 || memcmp(b.p, want, b.len) == 0);
	if (!ok)
		printf("#   got '%.*s'\n", (int)b.len, b.p ? (char *)b.p : "");
	rp_buf_free(&b);
	return ok;
}

static void
test_words(void)
{
	const char *s = " \xc2\xa0""a\x1f""bc\xe2\x80\x8b""d\xe3\x80\x80";
	const uint8_t *w;
	size_t pos = 0, wn;

	TEST(fqd_next_word((const uint8_t *)s, strlen(s), &pos, &w, &wn) == 1 &&
	    wn == 1 && *w == 'a', "NBSP and space skipped");
	TEST(fqd_next_word((const uint8_t *)s, strlen(s), &pos, &w, &wn) == 1 &&
	    wn == 6 && memcmp(w, "bc\xe2\x80\x8b""d", 6) == 0,
	    "\\x1f splits, U+200B does not");
	TEST(fqd_next_word((const uint8_t *)s, strlen(s), &pos, &w, &wn) == 0 &&
	    pos == strlen(s), "U+3000 at the end is whitespace");
	pos = 0;
	TEST(fqd_next_word((const uint8_t *)"ab\xc3", 3, &pos, &w, &wn) == -1 &&
	    pos == 2 && errno == EILSEQ, "a cut UTF-8 sequence is an error at its offset");
	pos = 0;
	TEST(fqd_next_word((const uint8_t *)"\xed\xa0\x80", 3, &pos, &w, &wn) == -1 &&
	    pos == 0, "a surrogate is not UTF-8");
}

static void
test_finalize(void)
{
	struct fqd *d;

	d = counted("z \xc3\xa9 Z ab a\nab\n");
	TEST_INT(fqd_size(d), ==, 9, "4 specials and 5 words");
	TEST_INT(fqd_count(d, FQD_EOS), ==, 3, "</s>: 1 and one per line");
	fqd_finalize(d, 0, -1, 1);
	TEST(saved_is(d, "ab 2\nZ 1\na 1\nz 1\n\xc3\xa9 1\n"),
	    "count, then code point order; a prefix first");
	fqd_free(d);

	/* 8 symbols, padded to 12: four names tried, two in use */
	d = counted("madeupword0001 x x\nmadeupword0000 y\n");
	fqd_finalize(d, 0, -1, 6);
	TEST(saved_is(d, "x 2\nmadeupword0000 1\nmadeupword0001 1\ny 1\n"
	    "madeupword0002 0\nmadeupword0003 0\nmadeupword0004 0\n"
	    "madeupword0005 0\n"), "padding skips names in use");
	TEST_INT(fqd_find(d, "madeupword0003", 14), ==, 9, "a padding word has an id");
	fqd_free(d);

	d = counted("c c c b b a\n");
	fqd_finalize(d, 2, 6, 1);
	TEST(saved_is(d, "c 3\nb 2\n"), "nwords 6 keeps two");
	fqd_free(d);
	d = counted("c c c b b a\n");
	fqd_finalize(d, 3, -1, 1);
	TEST(saved_is(d, "c 3\n"), "threshold 3");
	fqd_free(d);
	d = counted("c c c b b a\n");
	fqd_finalize(d, 0, 2, 1);
	TEST(saved_is(d, ""), "nwords below the specials keeps none");
	TEST_INT(fqd_find(d, "c", 1), ==, -1, "dropped words are gone");
	TEST_INT(fqd_find(d, "</s>", 4), ==, FQD_EOS, "the specials stay");
	fqd_free(d);

	d = counted("<unk> <pad> q\n");
	TEST_INT(fqd_count(d, FQD_UNK), ==, 2, "<unk> in the text counts for <unk>");
	TEST_INT(fqd_size(d), ==, 5, "and adds no symbol");
	fqd_free(d);
}

static void
test_load(void)
{
	char err[FQD_ERRMAX];
	const char *t = "b 7\r\na 3\rq 1 #fairseq:overwrite\nb 0 #fairseq:overwrite\n"
	    "s p 1_0 \xe2\x80\x83\n";
	struct fqd *d = fqd_load((const uint8_t *)t, strlen(t),
	    err, sizeof err);
	uint32_t *ids = NULL;
	size_t cap = 0, nunk, bad;
	long n;

	TEST(d != NULL, "load: universal newlines, flags, underscores");
	if (d == NULL)
		return;
	TEST_INT(fqd_size(d), ==, 9, "every line is an id, overwritten ones too");
	TEST_INT(fqd_find(d, "b", 1), ==, 7, "an overwritten symbol has its later id");
	TEST_INT(fqd_count(d, 8), ==, 10, "count 1_0 is 10");
	TEST_INT(fqd_find(d, "s p", 3), ==, 8, "a symbol may hold a space");
	n = fqd_encode_line(d, (const uint8_t *)" a zz <unk> b ", 14, &ids, &cap,
	    &nunk, &bad);
	TEST(n == 5 && ids[0] == 5 && ids[1] == FQD_UNK && ids[2] == FQD_UNK &&
	    ids[3] == 7 && ids[4] == FQD_EOS && nunk == 1,
	    "encode_line: ids, <unk> for a missing word, </s>; \"<unk>\" is not replaced");
	n = fqd_encode_line(d, (const uint8_t *)"", 0, &ids, &cap, &nunk, &bad);
	TEST(n == 1 && ids[0] == FQD_EOS, "an empty line is </s>");
	free(ids);
	fqd_free(d);

	TEST(fqd_load((const uint8_t *)"a 1\n\n", 5, err, sizeof err) == NULL &&
	    strcmp(err, "line 2: expected 'symbol count [#fairseq:overwrite]'") == 0,
	    "an empty line is an error");
	TEST(fqd_load((const uint8_t *)"a 1\na 2\n", 8,
	    err, sizeof err) == NULL &&
	    strcmp(err, "line 2: duplicate symbol 'a' (fairseq needs #fairseq:overwrite)") == 0,
	    "a duplicate without the flag");
	TEST(fqd_load((const uint8_t *)"<s> 2\n", 6, err, sizeof err) == NULL,
	    "a special is a duplicate");
	TEST(fqd_load((const uint8_t *)"a #fairseq:overwrite\n", 21,
	    err, sizeof err) == NULL,
	    "the flag needs a count before it");
	TEST(fqd_load((const uint8_t *)"a 1\nb\xff 2\n", 10,
	    err, sizeof err) == NULL &&
	    strcmp(err, "line 2: invalid UTF-8 at byte offset 5") == 0,
	    "invalid UTF-8");
	/* The first line at fault is named, whatever its fault. */
	TEST(fqd_load(S("a 1\nb 1\na 2\nc\n<s> 1\n"),
	    err, sizeof err) == NULL &&
	    strcmp(err, "line 3: duplicate symbol 'a' (fairseq needs #fairseq:overwrite)") == 0,
	    "a duplicate before a bad line");
	TEST(fqd_load(S("a 1\nb\na 2\n"), err, sizeof err) == NULL &&
	    strcmp(err, "line 2: expected 'symbol count [#fairseq:overwrite]'") == 0,
	    "a bad line before a duplicate");
	TEST(fqd_load(S("a 1\nb 1\n<unk> 3\na 2\n"), err, sizeof err) == NULL &&
	    strcmp(err, "line 3: duplicate symbol '<unk>' (fairseq needs #fairseq:overwrite)") == 0,
	    "a special before another duplicate");
	{
		/* 100,000 symbols; one overwritten, then one repeated. */
		struct buf f = { 0 };
		char line[64];
		struct fqd *big;
		int i, k;

		for (i = 0; i < 100000; i++) {
			k = snprintf(line, sizeof line, "w%d %d\n", i, i);
			rp_buf_append(&f, line, (size_t)k);
		}
		rp_buf_puts(&f, "w5 1 #fairseq:overwrite\n");
		big = fqd_load(f.p, f.len, err, sizeof err);
		TEST(big != NULL && fqd_size(big) == 100005 &&
		    fqd_find(big, "w5", 2) == 100004 && fqd_find(big, "w6", 2) == 10 &&
		    fqd_find(big, "w99999", 6) == 100003 && fqd_find(big, "w100000", 7) == -1,
		    "100,000 symbols load, the overwritten one has its later id");
		fqd_free(big);
		rp_buf_puts(&f, "w7 1\nw8 1\n");
		TEST(fqd_load(f.p, f.len, err, sizeof err) == NULL &&
		    strcmp(err, "line 100002: duplicate symbol 'w7' (fairseq needs #fairseq:overwrite)") == 0,
		    "a duplicate of symbol 11 on line 100,002");
		rp_buf_free(&f);
	}
}

/* The word cache (made after a few thousand lookups) never gives a stale id. */
static void
test_cache(void)
{
	struct fqd *d = fqd_new(1);
	int ok = 1;

	for (int i = 0; i < 6000; i++) {
		fqd_add(d, "b", 1, 1);
		ok &= fqd_find(d, "zz", 2) == -1;
	}
	TEST(ok, "an absent word stays absent through the cache");
	TEST_INT(fqd_add(d, "zz", 2, 3), ==, 5, "then added, it gets a new id");
	TEST_INT(fqd_find(d, "zz", 2), ==, 5, "and the cache gives that id");
	fqd_add(d, "a", 1, 6000);
	fqd_finalize(d, 0, -1, 1);
	TEST(fqd_find(d, "a", 1) == 4 && fqd_find(d, "b", 1) == 5 &&
	    fqd_find(d, "zz", 2) == 6, "finalize renumbers, the cache follows");
	TEST_INT(fqd_count(d, 4), ==, 6000, "counts through the cache");
	fqd_free(d);
}

/* Lines of a file whose "\r\n" straddles the reader's first read. */
static void
test_lines(void)
{
	char path[] = "/tmp/t-fairseq-dict.XXXXXX";
	size_t big = (1u << 18), n, k = 0;
	char *text = malloc(big + 16);
	int fd = mkstemp(path);
	struct fqd_lines *r;
	const uint8_t *p;
	size_t lens[8];

	memset(text, 'x', big + 16);
	text[big - 1] = '\r';
	text[big] = '\n';
	memcpy(text + big + 1, "a\rb\r\rc\n\nd", 9);
	n = big + 10;
	if (fd == -1 || write(fd, text, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0) {
		TEST(0, "temporary file");
		return;
	}
	r = fqd_lines_new(fd);
	while (k < 8 && fqd_lines_next(r, &p, &lens[k]) == 1)
		k++;
	TEST_INT(k, ==, 7, "\"\\r\\n\" across reads is one line end");
	TEST(lens[0] == big - 1 && lens[1] == 1 && lens[2] == 1 && lens[3] == 0 &&
	    lens[4] == 1 && lens[5] == 0 && lens[6] == 1, "line lengths");
	TEST_INT(fqd_lines_offset(r), ==, n - 1, "offset of the last line");
	TEST_INT(fqd_lines_count(r), ==, 7, "line count");
	fqd_lines_free(r);
	close(fd);
	unlink(path);
	free(text);
}

/* Cases of dict.txt reading: words with spaces, overwrite flags, counts as int() reads them. */
static long
find_s(struct fqd *d, const char *w)
{
	return fqd_find(d, w, strlen(w));
}

static void
test_load_cases(void)
{
	const char *t = "hello 10\n__eng_Latn__ 1\r\na b 3\n__tur_Latn__ 1 #fairseq:overwrite\n"
	    "x 0\n<unk> 5 #fairseq:overwrite\n__eng_Latn__ 1 #fairseq:overwrite\n \t5\n";
	char err[FQD_ERRMAX];
	struct fqd *d = fqd_load((const uint8_t *)t, strlen(t),
	    err, sizeof err);

	TEST(d != NULL, "dictionary with flags loads");
	if (d == NULL)
		return;
	TEST_INT(fqd_size(d), ==, 12, "4 specials + 8 lines");
	TEST_INT(find_s(d, "hello"), ==, 4, "line 0 is id 4");
	TEST_INT(find_s(d, "a b"), ==, 6, "a word with a space");
	TEST_INT(find_s(d, "__tur_Latn__"), ==, 7, "overwrite flag on a new word");
	TEST_INT(find_s(d, "__eng_Latn__"), ==, 10, "overwrite: the later id");
	TEST_INT(find_s(d, "<unk>"), ==, 9, "a special overwritten");
	TEST_INT(find_s(d, "<pad>"), ==, 1, "pad is 1");
	TEST_INT(find_s(d, ""), ==, 11, "the empty word");
	TEST_INT(find_s(d, "hell"), ==, -1, "absent prefix");
	/* add_symbol() as fairseq's multilingual task adds language tokens */
	TEST_INT(fqd_add(d, "__eng_Latn__", 12, 1), ==, 10, "a present token keeps its id");
	TEST_INT(fqd_add(d, "__fra_Latn__", 12, 1), ==, 12, "a missing one is appended");
	fqd_free(d);
	t = "a 1_000\nb +3\nc -2\n";
	d = fqd_load((const uint8_t *)t, strlen(t), err, sizeof err);
	TEST(d != NULL && find_s(d, "c") == 6, "counts as Python's int() reads them");
	fqd_free(d);
}

int
main(void)
{
	test_words();
	test_finalize();
	test_load();
	test_load_cases();
	test_cache();
	test_lines();
	return tap_done();
}
