/*
 * The SubwordTextEncoder library: strip, lines, tokenizer, escaping,
 * vocab files, encoding, decoding, sampling, count files and builds.
 * Expected values follow tensor2tensor's code (text_encoder.py,
 * tokenizer.py, generator_utils.py) under CPython 3.11.
 */
#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "errmsg.h"
#include "subword.h"
#include "subword_int.h"
#include "tap.h"
#include "unicode.h"

#define S(x) (const uint8_t *)(x), sizeof(x) - 1
#define C(x) (x), sizeof(x) - 1

static int
strip_is(const char *in, size_t n, const char *want)
{
	const uint8_t *p = (const uint8_t *)in;

	sw_strip(&p, &n);
	return n == strlen(want) && memcmp(p, want, n) == 0;
}

static void
test_strip(void)
{
	size_t n;

	TEST(strip_is(C(" \t\x1c\x1f a b \xc2\x85\xc2\xa0\xe3\x80\x80\n"), "a b"),
	    "strip removes ASCII, separators, NEL, NBSP, ideographic space");
	TEST(strip_is(C("\xef\xbb\xbf" "a"), "\xef\xbb\xbf" "a"), "strip keeps a BOM");
	TEST(strip_is(C("\xe2\x80\x8b" "a\xe2\x80\x8b"), "\xe2\x80\x8b" "a\xe2\x80\x8b"),
	    "strip keeps U+200B");
	TEST(strip_is(C("\xe2\x80\xa8x\xe2\x80\xa9"), "x"), "strip removes U+2028/9");
	TEST(strip_is(C("\xe1\xa0\x8ex"), "\xe1\xa0\x8ex"), "strip keeps U+180E");
	TEST(strip_is(C("  \n "), ""), "whitespace-only strips to nothing");
	n = 5;
	sw_rstrip((const uint8_t *)" a b ", &n);
	TEST_INT(n, ==, 4, "rstrip keeps the left end");
}

static int
toks_are(const char *in, size_t n, const char *const *want, long nw)
{
	struct sw_span *sp = NULL;
	size_t cap = 0;
	long k, i;
	int ok;

	k = sw_tokenize((const uint8_t *)in, n, &sp, &cap);
	ok = k == nw;
	for (i = 0; ok && i < k; i++)
		ok = sp[i].len == strlen(want[i]) &&
		    memcmp(in + sp[i].off, want[i], sp[i].len) == 0;
	free(sp);
	return ok;
}

static void
test_tokenize(void)
{
	static const char *const t1[] = { " ", "a" };
	static const char *const t2[] = { "a", " " };
	static const char *const t3[] = { "a", "b" };
	static const char *const t4[] = { "a", "  ", "b" };
	static const char *const t5[] = { "a", "\t", "b" };
	static const char *const t6[] = { "cafe", "\xcc\x81" };
	static const char *const t7[] = { "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8",
	    "\xe0\xa5\x8d", "\xe0\xa4\xa4", "\xe0\xa5\x87" };
	static const char *const t8[] = { " " };
	static const char *const t9[] = { "Hello", ", ", "world", "!" };
	static const char *const t10[] = { "a", "\xc2\xa0", "b" };
	static const char *const t11[] = { "x", "_", "y" };
	static const char *const t12[] = { "\xc2\xbd\xe2\x85\xab\xe4\xb8\xad\xe6\x96\x87" };

	TEST(toks_are(C(" a"), t1, 2), "leading space is kept");
	TEST(toks_are(C("a "), t2, 2), "trailing space is kept");
	TEST(toks_are(C("a b"), t3, 2), "single inner space is dropped");
	TEST(toks_are(C("a  b"), t4, 3), "double space is a token");
	TEST(toks_are(C("a\tb"), t5, 3), "tab is a token");
	TEST(toks_are(C("cafe\xcc\x81"), t6, 2), "combining mark splits");
	TEST(toks_are(C("\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87"),
	    t7, 4), "Devanagari virama and vowel sign split");
	TEST(toks_are(C(" "), t8, 1), "a lone space is one token");
	TEST(toks_are(C("Hello, world!"), t9, 4), "punctuation with a space");
	TEST(toks_are(C("a\xc2\xa0" "b"), t10, 3), "NBSP is kept");
	TEST(toks_are(C("x_y"), t11, 3), "underscore is not alphanumeric");
	TEST(toks_are(C("\xc2\xbd\xe2\x85\xab\xe4\xb8\xad\xe6\x96\x87"), t12, 1),
	    "No, Nl and CJK run form one token");
	TEST(toks_are(C(""), NULL, 0), "empty text has no tokens");
}

static struct sw_vocab *
vocab(const char *text)
{
	char err[RP_ERRMAX];

	return sw_vocab_parse((const uint8_t *)text, strlen(text), err, sizeof err);
}

static int
esc_is(const struct sw_vocab *v, const char *in, const char *want)
{
	struct buf b = { 0 };
	int ok;

	ok = sw_escape(v, (const uint8_t *)in, strlen(in), &b) == 0 &&
	    b.len == strlen(want) && memcmp(b.p, want, b.len) == 0;
	free(b.p);
	return ok;
}

static int
unesc_is(const char *in, size_t n, const char *want, size_t wn)
{
	struct buf b = { 0 };
	int ok;

	ok = sw_unescape((const uint8_t *)in, n, &b) == 0 && b.len == wn &&
	    (wn == 0 || memcmp(b.p, want, wn) == 0);
	free(b.p);
	return ok;
}

static void
test_escape(void)
{
	struct sw_vocab *v = vocab("'<pad>_'\n'<EOS>_'\n'a'\n'b'\n'\xc3\xa9'\n");

	TEST(v != NULL, "small vocab loads");
	TEST(esc_is(v, "ab", "ab_"), "plain token");
	TEST(esc_is(v, "a\\_b", "a\\\\\\ub_"), "backslash before underscore");
	TEST(esc_is(v, "\xf0\x9f\x98\x80", "\\128512;_"), "unknown character by number");
	TEST(esc_is(v, "a\nb", "a\\10;b_"), "newline is always a number");
	TEST(esc_is(v, "\xc3\xa9z", "\xc3\xa9\\122;_"), "alphabet from the entries");
	TEST(esc_is(v, "\x01", "\\1;_"), "control character");
	sw_vocab_free(v);

	/* Encoding counts the characters it escapes by number, not _ or \. */
	v = vocab("'<pad>_'\n'<EOS>_'\n'a'\n'b'\n'_'\n'\\'\n'u'\n';'\n"
	    "'0'\n'1'\n'2'\n'3'\n'4'\n'5'\n'6'\n'7'\n'8'\n'9'\n");
	{
		struct sw_vocab *s1 = v != NULL ? sw_vocab_share(v) : NULL;
		int32_t *ids = NULL;
		size_t n = 0, cap = 0;

		TEST(s1 != NULL && sw_encode_escapes(v) == 0 &&
		    sw_encode(v, S("ab a_b\\\xf0\x9f\x98\x80\xe2\x82\xac"),
		    &ids, &n, &cap) == 0 && sw_encode_escapes(v) == 2 &&
		    sw_encode(v, S("\xc3\xa9" "b"), &ids, &n, &cap) == 0 &&
		    sw_encode_escapes(v) == 3 && sw_encode_escapes(s1) == 0,
		    "encoding counts characters escaped by number, per handle");
		free(ids);
		sw_vocab_free(s1);
	}
	sw_vocab_free(v);

	TEST(unesc_is(C("a\\ub\\\\c_"), C("a_b\\c")), "unescape \\u and \\\\");
	TEST(unesc_is(C("\\65;\\128512;"), C("A\xf0\x9f\x98\x80")), "unescape numbers");
	TEST(unesc_is(C("\\1114112;"), C("\xe3\x80\x93")), "above U+10FFFF is U+3013");
	TEST(unesc_is(C("\\99999999999999999999999999;"), C("\xe3\x80\x93")),
	    "a huge number is U+3013");
	TEST(unesc_is(C("\\55296;"), C("\xef\xbf\xbd")), "a surrogate is U+FFFD");
	TEST(unesc_is(C("\\12x"), C("\\12x")), "number without semicolon stays");
	TEST(unesc_is(C("a\\"), C("a\\")), "bare backslash stays");
	TEST(unesc_is(C("\\;"), C("\\;")), "backslash semicolon stays");
	TEST(unesc_is(C("\\\\65;"), C("\\65;")), "escaped backslash before digits");
	TEST(unesc_is(C("\\0;"), "\0", 1), "NUL by number");
	TEST(unesc_is(C("__"), C("_")), "only one trailing underscore is dropped");
}

static void
test_vocab(void)
{
	static const char file[] =
	    "'<pad>_'\n\"<EOS>_\"\n'\n\n'a_' \r\nb_\r\n'x_'\n'a_'\n'''\n\xef\xbb\xbf\n\r";
	char err[RP_ERRMAX];
	struct sw_vocab *v;
	struct buf b = { 0 };
	const uint8_t *s;
	size_t n;

	v = sw_vocab_parse((const uint8_t *)file, sizeof(file) - 1, err, sizeof err);
	TEST(v != NULL, "vocab with quirks loads");
	if (v == NULL)
		return;
	TEST_INT(sw_vocab_size(v), ==, 10, "every line is an entry, not the last \\r");
	s = sw_vocab_entry(v, 1, &n);
	TEST(n == 6 && memcmp(s, "<EOS>_", 6) == 0, "double quotes removed");
	s = sw_vocab_entry(v, 2, &n);
	TEST(n == 0, "a lone quote is the empty entry");
	s = sw_vocab_entry(v, 3, &n);
	TEST(n == 0, "a blank line keeps its id");
	s = sw_vocab_entry(v, 4, &n);
	TEST(n == 2 && memcmp(s, "a_", 2) == 0, "CR deleted, rstrip, then quotes");
	s = sw_vocab_entry(v, 5, &n);
	TEST(n == 2 && memcmp(s, "b_", 2) == 0, "unquoted entry, CR deleted");
	s = sw_vocab_entry(v, 8, &n);
	TEST(n == 1 && s[0] == '\'', "three quotes give one");
	TEST(sw_vocab_entry(v, 10, &n) == NULL && sw_vocab_entry(v, -1, &n) == NULL,
	    "ids out of range have no entry");
	TEST(sw_vocab_store(v, &b) == 0 && b.len > 0 && memcmp(b.p, "'<pad>_'\n'<EOS>_'\n''\n",
	    20) == 0, "store quotes every entry");
	free(b.p);
	sw_vocab_free(v);

	v = sw_vocab_parse(S("'a'\n'\xff'\n"), err, sizeof err);
	TEST(v == NULL && strcmp(err, "line 2: invalid UTF-8 at byte offset 5") == 0,
	    "bad UTF-8: line 2, offset 5");
	v = sw_vocab_parse(S("'a'\n\r\r\xc3\r\xa9\xc3\n"), err, sizeof err);
	TEST(v == NULL && strcmp(err, "line 2: invalid UTF-8 at byte offset 9") == 0,
	    "CRs are deleted before checking, offsets stay those of the file");
	v = sw_vocab_parse(S(""), err, sizeof err);
	TEST(v == NULL && strcmp(err, "empty vocabulary") == 0, "empty file is an error");
	v = sw_vocab_parse(S("\r\r"), err, sizeof err);
	TEST(v == NULL, "a file of CRs has no lines");
	sw_vocab_free(NULL);
}

static int
enc_is(struct sw_vocab *v, const char *text, const int32_t *want, size_t nw)
{
	int32_t *ids = NULL;
	size_t n = 0, cap = 0;
	int ok;

	ok = sw_encode(v, (const uint8_t *)text, strlen(text), &ids, &n, &cap) == 0 &&
	    n == nw && (nw == 0 || memcmp(ids, want, nw * sizeof(*ids)) == 0);
	free(ids);
	return ok;
}

static int
dec_is(const struct sw_vocab *v, const int64_t *ids, size_t n, int strip,
    const char *want)
{
	struct buf b = { 0 };
	int ok;

	ok = sw_decode(v, ids, n, strip, &b) == 0 && b.len == strlen(want) &&
	    (b.len == 0 || memcmp(b.p, want, b.len) == 0);
	free(b.p);
	return ok;
}

static void
test_encode_decode(void)
{
	/* ids:         0         1         2      3      4   5   6   7   8  9 */
	static const char file[] = "'<pad>_'\n'<EOS>_'\n'the_'\n'cat_'\n'a'\n'_'\n"
	    "'c'\n't'\n'h'\n'e'\n' '\n'\\'\n'1'\n'2'\n'8'\n'5'\n'0'\n';'\n'.'\n'ca'\n";
	/*           10    11    12    13    14    15    16    17    18   19 */
	static const int32_t i1[] = { 2, 3 };
	static const int32_t i2[] = { 2, 19, 5 };
	static const int32_t i3[] = { 11, 12, 13, 14, 15, 12, 13, 17, 5 };
	static const int32_t i4[] = { 10, 5, 2 };
	static const int64_t d1[] = { 2, 3, 1, 0, 1 };
	static const int64_t d2[] = { 2, -5, 99, 3 };
	static const int64_t d3[] = { 18, 5, 2 };
	static const int64_t d4[] = { 11, 12, 5, 2 };
	struct sw_vocab *v = vocab(file), *bad;
	char err[RP_ERRMAX];
	int32_t *ids = NULL;
	size_t n = 0, cap = 0;

	TEST(v != NULL, "encode vocab loads");
	if (v == NULL)
		return;
	TEST(enc_is(v, "the cat", i1, 2), "two words");
	TEST(enc_is(v, "the ca", i2, 3), "longest match then single characters");
	TEST(enc_is(v, "\xf0\x9f\x98\x80", i3, 9), "emoji spelled by number");
	TEST(enc_is(v, "the cat", i1, 2), "again, through the cache");
	TEST(enc_is(v, " the", i4, 3), "leading space token");
	TEST(enc_is(v, "", NULL, 0), "empty text");
	TEST(dec_is(v, d1, 5, 0, "the cat<EOS><pad><EOS>"), "decode keeps PAD and EOS");
	TEST(dec_is(v, d1, 5, 1, "the cat"), "strip_extraneous drops the trailing ones");
	TEST(dec_is(v, d2, 4, 0, "the cat"), "ids out of range decode to nothing");
	TEST(dec_is(v, d3, 3, 0, ".the"), "no space after a non-alphanumeric token");
	TEST(dec_is(v, d4, 4, 0, "\\1the"), "partial escape decodes literally");
	TEST(dec_is(v, NULL, 0, 1, ""), "nothing to decode");

	{
		/* A node with many children: "x" followed by 26 letters. */
		struct buf f = { 0 };
		struct sw_vocab *wide;
		static const int32_t wq[] = { 16, 2 };
		char line[8];
		int c;

		sw_put(&f, "'<pad>_'\n'<EOS>_'\n'_'\n", 22);
		for (c = 'a'; c <= 'z'; c++) {
			snprintf(line, sizeof(line), "'x%c'\n", c);
			sw_put(&f, line, 5);
		}
		sw_put(&f, "'x'\n", 4);
		/* ids 30..41: "y" followed by a..l (a binary search), 42: "y". */
		for (c = 'a'; c <= 'l'; c++) {
			snprintf(line, sizeof(line), "'y%c'\n", c);
			sw_put(&f, line, 5);
		}
		sw_put(&f, "'y'\n", 4);
		wide = sw_vocab_parse(f.p, f.len, err, sizeof err);
		TEST(wide != NULL && enc_is(wide, "xn", wq, 2),
		    "longest match under a node with 26 children");
		TEST(wide != NULL && sw_encode(wide, S("xqz"), &ids, &n, &cap) == -1,
		    "z alone is not an entry");
		{
			static const int32_t yg[] = { 36, 2 };

			TEST(wide != NULL && enc_is(wide, "yg", yg, 2),
			    "longest match under a node with 12 children");
		}
		sw_vocab_free(wide);
		free(f.p);
		n = 0;
	}
	bad = vocab("'<pad>_'\n'<EOS>_'\n'ab_'\n");
	TEST(bad != NULL, "vocab without single characters loads");
	if (bad != NULL) {
		TEST(sw_encode(bad, S("a"), &ids, &n, &cap) == -1 &&
		    strstr(sw_vocab_strerror(bad), "corrupt vocabulary") != NULL,
		    "a token it cannot spell is a corrupt vocabulary");
		sw_vocab_free(bad);
	}
	free(ids);
	sw_vocab_free(v);
}

/* Where the reader finds the first bad byte of a one-line input. */
static long
bad_offset(const char *s, size_t n)
{
	struct sw_lines *r = sw_lines_open_mem((const uint8_t *)s, n);
	const uint8_t *p;
	size_t len;
	long off;
	int nl, rc;

	if (r == NULL)
		return -2;
	rc = sw_lines_next(r, &p, &len, &nl);
	off = rc == -2 ? (long)sw_lines_error_offset(r) : -1;
	sw_lines_free(r);
	return off;
}

static void
test_utf8_check(void)
{
	static const struct {
		const char *s;
		size_t n;
		long off;
		const char *what;
	} c[] = {
		{ C("0123456789abcdef\xe4\xb8\xad\xe6\x96\x87"), -1, "ASCII words then CJK" },
		{ C("0123456789\x80"), 10, "a lone continuation byte after ASCII" },
		{ C("\xe4\xb8\xad\xe6\x96\x87\xe4\xb8"), 6, "a CJK run cut short" },
		{ C("\xe4\xb8\xad\xe6\x96\x87\xe4\xb8x"), 6, "a CJK character missing its last byte" },
		{ C("\xe4\xb8\xad\xe0\x80\x80"), 3, "an overlong three-byte form" },
		{ C("\xe4\xb8\xad\xe0\xa0\x80"), -1, "E0 A0 80 is U+0800" },
		{ C("\xe4\xb8\xad\xed\xa0\x80"), 3, "a surrogate" },
		{ C("\xe4\xb8\xad\xed\x9f\xbf"), -1, "U+D7FF" },
		{ C("\xe4\xb8\xad\xef\xbf\xbf\xc3"), 6, "a two-byte form cut short" },
		{ C("abcdefgh\xc1\xbf"), 8, "C1 is never valid" },
		{ C("abcdefgh\xc2\x80\xdf\xbf"), -1, "two-byte forms" },
		{ C("\xf0\x9f\x98\x80\xf4\x90\x80\x80"), 4, "above U+10FFFF" },
		{ C("\xf0\x8f\xbf\xbf"), 0, "an overlong four-byte form" },
		{ C("\xee\x80\x80\xef\xbf\xbd\xe4\xb8\xad\xc0"), 9, "private use, U+FFFD, then C0" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		TEST(bad_offset(c[i].s, c[i].n) == c[i].off &&
		    (long)uni_utf8_valid_prefix((const uint8_t *)c[i].s, c[i].n) ==
		    (c[i].off < 0 ? (long)c[i].n : c[i].off), "%s", c[i].what);
}

static void
test_encode_paths(void)
{
	/* ids: 0..1 reserved, 2 'abcdefghij', 3 'abcdefghijk_', 4.. singles */
	static const char file[] = "'<pad>_'\n'<EOS>_'\n'abcdefghij'\n'abcdefghijk_'\n"
	    "'a'\n'b'\n'c'\n'd'\n'e'\n'f'\n'g'\n'h'\n'i'\n'j'\n'k'\n'_'\n'\\'\n"
	    "'0'\n'1'\n'8'\n';'\n' '\n'\xe4\xb8\xad'\n'\xe4\xb8\xad\xe6\x96\x87_'\n"
	    "'\xe6\x96\x87'\n'u'\n";
	/*  4..14 a..k, 15 _, 16 \, 17 0, 18 1, 19 8, 20 ;, 21 ' ', 22 中, 23 中文_, 24 文, 25 u */
	static const int32_t w1[] = { 3 };
	static const int32_t w2[] = { 2, 14, 16, 18, 17, 19, 20, 15 };
	static const int32_t w3[] = { 23, 3 };
	static const int32_t w4[] = { 22, 24, 22, 15 };
	static const int32_t w5[] = { 2, 2, 15 };
	static const int32_t w6[] = { 4, 15, 16, 25, 15, 5, 15 };
	static const int32_t w7[] = { 2, 4, 15, 21, 21, 15, 3 };
	struct sw_vocab *v = vocab(file);

	TEST(v != NULL, "vocab for the encoding paths loads");
	if (v == NULL)
		return;
	TEST(enc_is(v, "abcdefghijk", w1, 1), "a word longer than eight bytes");
	TEST(enc_is(v, "abcdefghijkl", w2, 8),
	    "a letter outside the alphabet is escaped in a long word");
	TEST(enc_is(v, "\xe4\xb8\xad\xe6\x96\x87 abcdefghijk", w3, 2),
	    "CJK, a dropped space, then ASCII");
	TEST(enc_is(v, "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad", w4, 4),
	    "a longer match is given up for a shorter one");
	TEST(enc_is(v, "abcdefghijabcdefghij", w5, 3), "the same entry twice in one token");
	TEST(enc_is(v, "a_b", w6, 7), "an underscore token is escaped");
	TEST(enc_is(v, "abcdefghija  abcdefghijk", w7, 7),
	    "two spaces are a token of their own");
	sw_vocab_free(v);
}

static void
test_sampler(void)
{
	struct sw_sampler s;
	int i, got[12], k;
	static const int want[12] = { 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, -1 };

	sw_sample_init(&s, 100, 700);	/* every = trunc(700 / 100 / 2) = 3 */
	TEST_INT(s.every, ==, 3, "every from bytes and budget");
	for (i = 0; i < 12; i++) {
		got[i] = k = sw_sample_next(&s);
		if (k == 1)
			sw_sample_charge(&s, 50);
		if (k == -1)
			break;
	}
	TEST(memcmp(got, want, sizeof(want)) == 0,
	    "lines 3 and 7 taken, the budget reaching 0 stops the next candidate");
	sw_sample_init(&s, 1e6, 1999999);
	TEST_INT(s.every, ==, 0, "truncation toward zero");
	sw_sample_init(&s, 10, 0);
	TEST(s.every == 0 && sw_sample_next(&s) == 1, "empty file: every line taken");
	sw_sample_charge(&s, 11);
	TEST_INT(sw_sample_next(&s), ==, -1, "overshoot, then stop");
}

static void
test_counts(void)
{
	struct sw_counts *a = sw_counts_new(), *b = sw_counts_new();
	struct buf x = { 0 }, y = { 0 };
	char err[RP_ERRMAX];
	static const char want[] = "#subword-counts 1\n2\t\\t\n1\tA\\\\b\\tc\n3\tthe\n";

	TEST(a != NULL && b != NULL, "counts allocate");
	sw_counts_add_text(a, S("the the"));
	sw_counts_add(a, S("A\\b\tc"), 1);
	sw_counts_add(a, S("\t"), 2);
	sw_counts_add_text(a, S("the"));
	TEST_INT(sw_counts_size(a), ==, 3, "three distinct tokens");
	sw_counts_compact(a);
	TEST(sw_counts_write(a, &x) == 0 && x.len == sizeof(want) - 1 &&
	    memcmp(x.p, want, x.len) == 0, "count file sorted by bytes, escaped");
	TEST(sw_counts_read(b, x.p, x.len, err, sizeof err) == 0 &&
	    sw_counts_read(b, x.p, x.len, err, sizeof err) == 0,
	    "read it twice");
	TEST(sw_counts_write(b, &y) == 0 && sw_put(&y, "", 1) == 0 &&
	    strstr((char *)y.p, "6\tthe\n") != NULL &&
	    strstr((char *)y.p, "4\t\\t\n") != NULL, "reading merges by summing");
	TEST(sw_counts_read(b, S("hello\n"), err, sizeof err) == -1 &&
	    strncmp(err, "not a subword-build count file", 30) == 0, "no header");
	TEST(sw_counts_read(b, S("#subword-counts 1\n5 x\n"), err, sizeof err) == -1 &&
	    strcmp(err, "line 2: expected a count, a tab and a token") == 0, "no tab");
	TEST(sw_counts_read(b, S("#subword-counts 1\n5\tx\\q\n"), err, sizeof err) == -1 &&
	    strcmp(err, "line 2: bad escape in token") == 0, "bad escape");
	TEST(sw_counts_read(b, S("#subword-counts 1\n5\t\xff\n"), err, sizeof err) == -1, "not UTF-8");
	TEST(sw_counts_read(b, S("#subword-counts 1\n99999999999999999999\tx\n"), err, sizeof err) == -1,
	    "count too large");
	TEST(sw_counts_read(b, S("#subword-counts 1\n5\tx"), err, sizeof err) == -1, "no final newline");
	TEST(sw_counts_read(b, S("#subword-counts 1\n9223372036854775807\tthe\n"), err, sizeof err) == -1 &&
	    strstr(err, "overflow") != NULL, "sum overflow");
	TEST(sw_counts_add_text(a, S("the new")) == 0 && sw_counts_size(a) == 4,
	    "adding after compacting finds the old tokens");
	x.len = 0;
	TEST(sw_counts_write(a, &x) == 0 && sw_put(&x, "", 1) == 0 &&
	    strstr((char *)x.p, "\n4\tthe\n") != NULL &&
	    strstr((char *)x.p, "\n1\tnew\n") != NULL, "and counts on");
	free(x.p);
	free(y.p);
	sw_counts_free(a);
	sw_counts_free(b);
	sw_counts_free(NULL);
}

static void
test_build(void)
{
	static const char *const extra[] = { "<mask>", "a_b" };
	struct sw_build_opts o;
	struct sw_counts *c = sw_counts_new(), *d = sw_counts_new();
	struct sw_vocab *v, *w;
	struct buf x = { 0 }, y = { 0 };
	const uint8_t *s;
	size_t n;

	sw_build_opts_init(&o);
	v = sw_build_to_target(c, 100, &o);
	TEST(v != NULL && sw_vocab_size(v) == 24, "empty corpus: 24 entries");
	sw_vocab_free(v);

	sw_counts_add_text(c, S("the cat sat on the mat, the end"));
	sw_counts_add_text(c, S("a cat and a hat"));
	o.reserved = extra;
	o.nreserved = 2;
	v = sw_build(c, 1, &o);
	TEST(v != NULL, "build with extra reserved tokens");
	if (v != NULL) {
		s = sw_vocab_entry(v, 0, &n);
		TEST(n == 6 && memcmp(s, "<pad>_", 6) == 0, "id 0 is <pad>_");
		s = sw_vocab_entry(v, 2, &n);
		TEST(n == 7 && memcmp(s, "<mask>_", 7) == 0, "id 2 is the first extra");
		s = sw_vocab_entry(v, 3, &n);
		TEST(n == 5 && memcmp(s, "a\\ub_", 5) == 0, "extras are escaped");
		sw_vocab_store(v, &x);
	}
	/* The same multiset of tokens in another order gives the same vocab. */
	sw_counts_add_text(d, S("a hat and a cat"));
	sw_counts_add_text(d, S("the end the mat, on sat cat the"));
	w = sw_build(d, 1, &o);
	TEST(w != NULL && sw_vocab_store(w, &y) == 0 && x.len == y.len &&
	    memcmp(x.p, y.p, x.len) == 0, "order of lines does not matter");
	sw_vocab_free(v);
	sw_vocab_free(w);

	o.max_subtoken_len = 1;
	o.nreserved = 0;
	v = sw_build(c, 1, &o);
	/* 2 reserved + <>padEOS \\_u;0-9 + "the cosmn, " less a, d. */
	TEST(v != NULL && sw_vocab_size(v) == 2 + 22 + 10, "L = 1: alphabet only");
	sw_vocab_free(v);
	o.max_subtoken_len = 3;
	v = sw_build(c, 1, &o);
	TEST(v != NULL, "L = 3 builds");
	if (v != NULL) {
		size_t i, longest = 0;

		for (i = 0; i < sw_vocab_size(v); i++) {
			s = sw_vocab_entry(v, (int64_t)i, &n);
			if (i >= 2 && n > longest)
				longest = n;
		}
		TEST_INT(longest, ==, 2, "L = 3 means subtokens of at most 2");
	}
	sw_vocab_free(v);
	o.iterations = 0;
	errno = 0;
	TEST(sw_build(c, 1, &o) == NULL && errno == EINVAL, "zero iterations refused");
	free(x.p);
	free(y.p);
	sw_counts_free(c);
	sw_counts_free(d);
}

/*
 * The builder's alphabet is every code point of the tokens once, those
 * at the ends of its bitmap words and of Unicode included.
 */
static void
test_build_alphabet(void)
{
	static const char *const cps[] = { "?", "@", "\x7f", "\xc2\x80",
	    "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf" };
	struct sw_build_opts o;
	struct sw_counts *c = sw_counts_new();
	struct sw_vocab *v;
	const uint8_t *s;
	size_t i, j, n, k, found;

	sw_build_opts_init(&o);
	o.max_subtoken_len = 1;
	for (i = 0; i < sizeof cps / sizeof cps[0]; i++)
		sw_counts_add(c, (const uint8_t *)cps[i], strlen(cps[i]), 3);
	sw_counts_add(c, S("\xf4\x8f\xbf\xbf?\xf0\x90\x80\x80"), 1);
	v = sw_build(c, 1, &o);
	TEST(v != NULL, "build over the edges of the code point range");
	for (i = 0; v != NULL && i < sizeof cps / sizeof cps[0]; i++) {
		k = strlen(cps[i]);
		for (j = found = 0; j < sw_vocab_size(v); j++) {
			s = sw_vocab_entry(v, (int64_t)j, &n);
			found += n == k && memcmp(s, cps[i], k) == 0;
		}
		TEST_INT(found, ==, 1, "code point %zu is in the alphabet once", i);
	}
	/* 2 reserved, <>padEOS \\_u;0-9 (22), the 7 code points. */
	TEST(v != NULL && sw_vocab_size(v) == 2 + 22 + 7, "and nothing else");
	sw_vocab_free(v);
	sw_counts_free(c);
}

/*
 * A small build (a few tokens, as fuzz-vocab makes by the thousand)
 * holds no block as big as an index of the BMP or a bitmap of all code
 * points: its alphabet is sorted and searched instead.  With glibc,
 * blocks of 128 KiB and more are mapped on their own, and the probe,
 * called while the build is alive, sees the bytes mapped so.
 */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
static size_t mapped_at_probe;

static void
probe_mapped(void *arg, int64_t min_count, size_t size)
{
	(void)arg;
	(void)min_count;
	(void)size;
	mapped_at_probe = mallinfo2().hblkhd;
}

static void
test_build_small_alloc(void)
{
	struct sw_build_opts o;
	struct sw_counts *c = sw_counts_new();
	struct sw_vocab *v;
	size_t before;

	/* Fixed, so that a freed big block does not raise the threshold. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	sw_counts_add_text(c, S("aaaaaaaa aaaab \xf0\x9f\x98\x80\xf0\x9f\x98\x80 ab ab"));
	sw_build_opts_init(&o);
	o.probe = probe_mapped;
	before = mallinfo2().hblkhd;
	v = sw_build(c, 1, &o);
	TEST(v != NULL, "a small build");
	TEST_INT(mapped_at_probe, ==, before,
	    "a small build maps no block of 128 KiB or more");
	sw_vocab_free(v);
	sw_counts_free(c);
}
#else
static void
test_build_small_alloc(void)
{
	TEST(1, "a small build maps no big block # SKIP needs glibc's mallinfo2()");
}
#endif

/*
 * A suffix that ends the pool of escaped tokens, next to a longer one
 * whose next character takes several bytes: the common prefix stops
 * there, nothing is read past the pool (found by fuzz-vocab; ASan).
 */
static void
test_build_pool_end(void)
{
	static const char cf[] = "#subword-counts 1\n3\t\\t\n3\t"
	    "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	    "\xf0\x9f\x98\x80 \n3\t! \n3\t\" (\n3\t'\n3\t) [\n9\t, \n6\t-\n6\t.\n";
	struct sw_build_opts o;
	struct sw_counts *c = sw_counts_new();
	struct sw_vocab *v;
	char err[RP_ERRMAX];

	TEST(sizeof cf - 1 == 101 &&
	    sw_counts_read(c, (const uint8_t *)cf, sizeof cf - 1, err, sizeof err) == 0,
	    "the count file reads");
	sw_build_opts_init(&o);
	o.iterations = 2;
	o.max_subtoken_len = 3;
	v = sw_build(c, 1, &o);
	TEST(v != NULL, "and builds");
	sw_vocab_free(v);
	sw_counts_free(c);
}

/*
 * Counts near INT64_MAX: a substring's count, their sum, stops at
 * INT64_MAX instead of overflowing (found by fuzz-vocab; UBSan).
 */
static void
test_build_huge_counts(void)
{
	static const char cf[] = "#subword-counts 1\n3\t\\t\n6\t   \n"
	    "7777777777777777777\temoj)\n";
	struct sw_build_opts o;
	struct sw_counts *c = sw_counts_new();
	struct sw_vocab *v;
	char err[RP_ERRMAX];

	TEST(sw_counts_read(c, (const uint8_t *)cf, sizeof cf - 1, err, sizeof err) == 0,
	    "a count file with counts near 2^63 reads");
	sw_build_opts_init(&o);
	o.iterations = 2;
	o.max_subtoken_len = 6;
	v = sw_build(c, 0, &o);
	TEST(v != NULL, "and builds");
	sw_vocab_free(v);
	sw_counts_free(c);
}

static void
test_lines(void)
{
	static const char data[] = "a\rb\n\r\n\xc3\xa9\n\xe2\x82\nfinal\r\n\r";
	struct sw_lines *r;
	const uint8_t *p;
	size_t n;
	int nl, fds[2], rc;

	if (pipe(fds) == -1 || write(fds[1], data, sizeof(data) - 1) !=
	    (ssize_t)sizeof(data) - 1) {
		TEST(0, "pipe");
		return;
	}
	close(fds[1]);
	r = sw_lines_open(fds[0]);
	TEST(r != NULL, "reader opens");
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == 1 && n == 2 && memcmp(p, "ab", 2) == 0 && nl, "CR inside deleted");
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == 1 && n == 0, "CR LF is an empty line");
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == 1 && n == 2, "UTF-8 line");
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == -2 && sw_lines_error_line(r) == 4 && sw_lines_error_offset(r) == 9 &&
	    strcmp(sw_lines_strerror(r), "line 4: invalid UTF-8 at byte offset 9") == 0,
	    "truncated sequence: line 4, offset 9");
	sw_lines_free(r);
	close(fds[0]);

	r = sw_lines_open_buf((uint8_t *)strdup("x\nfinal\r\n\r"), 10);
	sw_lines_next(r, &p, &n, &nl);
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == 1 && n == 5 && memcmp(p, "final", 5) == 0, "final line");
	TEST(sw_lines_next(r, &p, &n, &nl) == 0, "a last lone CR is not a line");
	TEST_INT(sw_lines_lineno(r), ==, 2, "two lines");
	sw_lines_free(r);
	r = sw_lines_open_buf((uint8_t *)strdup("x\r\ny"), 4);
	sw_lines_next(r, &p, &n, &nl);
	rc = sw_lines_next(r, &p, &n, &nl);
	TEST(rc == 1 && n == 1 && !nl, "last chunk without newline is a line");
	sw_lines_free(r);
	r = sw_lines_open_buf(NULL, 0);
	TEST(r != NULL && sw_lines_next(r, &p, &n, &nl) == 0, "no bytes, no lines");
	sw_lines_free(r);
	sw_lines_free(NULL);
}

/*
 * sw_decode_part() over the ids cut into parts of every size gives what
 * one sw_decode() gives, with and without strip_extraneous: random ids
 * over a vocabulary of whole words, pieces, escapes and 0s and 1s.
 */
static void
test_decode_parts(void)
{
	static const char file[] = "'<pad>_'\n'<EOS>_'\n'the_'\n'cat_'\n'a'\n'_'\n"
	    "'c'\n't'\n'h'\n'e'\n' '\n'\\'\n'1'\n'2'\n'8'\n'5'\n'0'\n';'\n'.'\n'ca'\n"
	    "'\\u_'\n'\xc3\xa9_'\n'-_'\n";
	struct sw_vocab *v = vocab(file);
	int64_t ids[300];
	uint64_t x = 12345;
	int ok = 1;

	for (int round = 0; round < 400 && ok; round++) {
		size_t n = (size_t)(x % 300), part = 1 + (size_t)(round % 37);
		struct buf whole = { 0 }, parts = { 0 };
		struct sw_decoder d;
		int strip = round & 1;

		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			ids[i] = (x >> 33) % 4 == 0 ? (int64_t)((x >> 40) % 2) :
			    (int64_t)((x >> 40) % 25) - 1;
		}
		if (round % 5 == 0)	/* a long tail of 0s and 1s */
			for (size_t i = n / 2; i < n; i++)
				ids[i] = (int64_t)(i % 3 == 0);
		memset(&d, 0, sizeof d);
		/* Long tokens written in parts too: held from 1 byte up. */
		d.hold = round % 3 == 0 ? 0 : 1 + (size_t)(round % 11);
		ok &= sw_decode(v, ids, n, strip, &whole) == 0;
		for (size_t i = 0; i < n; i += part)
			ok &= sw_decode_part(v, &d, ids + i, n - i < part ? n - i :
			    part, strip, &parts) == 0;
		ok &= sw_decode_end(v, &d, &parts) == 0;
		ok &= whole.len == parts.len && (whole.len == 0 ||
		    memcmp(whole.p, parts.p, whole.len) == 0);
		rp_buf_free(&whole);
		rp_buf_free(&parts);
		x = x * 6364136223846793005ull + 1;
	}
	TEST(v != NULL && ok, "decoding in parts gives sw_decode()'s text");
	sw_vocab_free(v);
}

/*
 * The cost of loading a vocabulary, counted rather than timed: slots of
 * the double array looked at stay within a few per state, and entry
 * bytes looked at within a few per byte of the file.  (Laying the array
 * out by trying the free slots in order looked at every hole for every
 * node: 200,000 short entries took 40 probes a state, a million 175 s.)
 */
static int
load_is_linear(const struct buf *f, const char *what)
{
	char err[RP_ERRMAX];
	struct sw_vocab *v = sw_vocab_parse(f->p, f->len, err, sizeof err);
	struct sw_vocab_stats s;
	size_t i, n, len, bad = 0;
	const uint8_t *p;

	TEST(v != NULL, "%s: loads", what);
	if (v == NULL)
		return 0;
	sw_vocab_stats(v, &s);
	printf("# %s: %zu bytes, %zu entries, %zu states, %zu slots, "
	    "%zu tails, %zu probes, %zu bytes looked at\n", what, f->len,
	    sw_vocab_size(v), s.states, s.slots, s.tails, s.probes, s.looked);
	TEST_INT(s.probes, <=, 4 * s.states + 4096,
	    "%s: a few slots looked at a state", what);
	TEST_INT(s.looked, <=, 8 * f->len + 4096,
	    "%s: a few entry bytes looked at a byte", what);
	TEST_INT(s.slots, <=, 2 * s.states + 4096, "%s: few free slots", what);
	/* Every entry is found whole (each is the longest entry it starts). */
	n = sw_vocab_size(v);
	for (i = 0; i < n; i++) {
		p = sw_vocab_entry(v, (int64_t)i, &len);
		bad += len > 0 && sw_vocab_longest(v, p, len) != len;
	}
	TEST_INT(bad, ==, 0, "%s: every entry is in the trie", what);
	sw_vocab_free(v);
	return 1;
}

static void
test_vocab_linear(void)
{
	static const char al[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct buf f = { 0 };
	uint64_t x = 1;
	char line[64];
	size_t i, k, len, n;

	/* The shape of the report: many short random entries. */
	for (i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		len = 1 + (x >> 33) % 6;
		line[0] = '\'';
		for (k = 1; k <= len; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			line[k] = al[(x >> 33) % 62];
		}
		if ((x >> 40) & 1)
			line[k++] = '_';
		line[k++] = '\'';
		line[k++] = '\n';
		sw_put(&f, line, k);
	}
	load_is_linear(&f, "200,000 short random entries");
	{
		/* Shares encode as the vocabulary does, each with its scratch. */
		char err[RP_ERRMAX];
		struct sw_vocab *v, *s1, *s2;
		static const char text[] = "abc D_F 12;3 x\xc3\xa9y";
		int32_t *a = NULL, *b = NULL;
		size_t na = 0, nb = 0, ca = 0, cb = 0;
		int ok;

		sw_put(&f, "'_'\n' '\n'\\'\n';'\n", 16);
		v = sw_vocab_parse(f.p, f.len, err, sizeof err);
		s1 = v != NULL ? sw_vocab_share(v) : NULL;
		s2 = s1 != NULL ? sw_vocab_share(s1) : NULL;
		ok = s2 != NULL &&
		    sw_encode(v, S(text), &a, &na, &ca) == 0 &&
		    sw_encode(s2, S(text), &b, &nb, &cb) == 0 &&
		    na == nb && memcmp(a, b, na * sizeof(*a)) == 0 &&
		    sw_vocab_size(s1) == sw_vocab_size(v);
		sw_vocab_free(s1);
		nb = 0;
		ok = ok && sw_encode(s2, S(text), &b, &nb, &cb) == 0 &&
		    na == nb && memcmp(a, b, na * sizeof(*a)) == 0;
		TEST(ok, "a share (of a share) encodes as the vocabulary does, "
		    "and outlives another");
		sw_vocab_free(s2);
		sw_vocab_free(v);
		free(a);
		free(b);
	}
	/* Dense: every number. */
	f.len = 0;
	for (i = 0; i < 200000; i++) {
		n = (size_t)snprintf(line, sizeof(line), "'%zu_'\n", i);
		sw_put(&f, line, n);
	}
	load_is_linear(&f, "200,000 numbers");
	/*
	 * 1000 entries that share 2000 bytes, then one that shares none:
	 * a search for the shared bytes that went as far as the first
	 * entries agree would look at them again at every depth.
	 */
	f.len = 0;
	for (i = 0; i < 1000; i++) {
		sw_put(&f, "'", 1);
		for (k = 0; k < 2000; k++)
			sw_put(&f, "a", 1);
		n = (size_t)snprintf(line, sizeof(line), "%03zu'\n", i);
		sw_put(&f, line, n);
	}
	sw_put(&f, "'b'\n", 4);
	load_is_linear(&f, "1000 entries sharing 2000 bytes, then a short one");
	/* Two long entries that differ at their ends: a chain of states. */
	f.len = 0;
	for (k = 0; k < 2; k++) {
		sw_put(&f, "'", 1);
		for (i = 0; i < 100000; i++)
			sw_put(&f, "x", 1);
		sw_put(&f, k ? "b'\n" : "c'\n", 3);
	}
	sw_put(&f, "'x'\n'b'\n'c'\n", 12);
	load_is_linear(&f, "two entries of 100,000 bytes that differ at their ends");
	{
		/*
		 * The rest of a long entry below a shorter one is a tail, as
		 * the rest of one alone is: its bytes are not states.
		 */
		char err[RP_ERRMAX];
		struct sw_vocab *v;
		struct sw_vocab_stats s;

		static const char file[] = "'ab'\n'a'\n"
		    "'abcdefghijklmnopqrstuvwxyz'\n'b'\n'bcdefghijklmnopqrstuvwxyz'\n";

		v = sw_vocab_parse(S(file), err, sizeof err);
		if (v != NULL)
			sw_vocab_stats(v, &s);
		TEST(v != NULL && s.tails == 2 && s.states == 6 &&
		    sw_vocab_longest(v, S("abcdefghijklmnopqrstuvwxyz!")) == 26 &&
		    sw_vocab_longest(v, S("abcdefghijklmnopqrstuvwxy")) == 2 &&
		    sw_vocab_longest(v, S("bcdefghijklmnopqrstuvwxyz")) == 25,
		    "long entries below shorter ones end in tails");
		sw_vocab_free(v);
	}
	free(f.p);
}

int
main(void)
{
	test_strip();
	test_tokenize();
	test_escape();
	test_vocab();
	test_encode_decode();
	test_decode_parts();
	test_sampler();
	test_counts();
	test_build();
	test_build_alphabet();
	test_build_small_alloc();
	test_build_pool_end();
	test_build_huge_counts();
	test_lines();
	test_utf8_check();
	test_encode_paths();
	test_vocab_linear();
	return tap_done();
}
