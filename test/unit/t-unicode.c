/*
 * Unicode tables and UTF-8 helpers.  Expected values come from CPython
 * 3.11's unicodedata (Unicode 14.0.0); the digest covers every code point.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "unicode.h"
#include "unicode_digest.h"

static int
seq_eq(const uint32_t *a, long n, const uint32_t *b, long m)
{
	return n == m && memcmp(a, b, (size_t)n * sizeof(*a)) == 0;
}

static void
test_samples(void)
{
	uint32_t o[18];
	int n;

	TEST(uni_category(0x41) == UC_Lu, "A is Lu");
	TEST(uni_category(0x1F600) == UC_So, "emoji is So");
	TEST(uni_category(0x301) == UC_Mn, "U+0301 is Mn");
	TEST(uni_category(0x10FFFF) == UC_Cn, "U+10FFFF is Cn");
	TEST(uni_category(0x110000) == UC_Cn, "beyond the range is Cn");
	TEST(uni_category(0xE000) == UC_Co, "private use is Co");
	TEST(uni_category(0xD800) == UC_Cs, "surrogate is Cs");
	TEST(uni_category(0x1F88) == UC_Lt, "U+1F88 is Lt");
	TEST(uni_category(0x11F04) == UC_Cn, "Kawi (Unicode 15) is unassigned");
	TEST(strcmp(uni_catname(UC_Pc), "Pc") == 0, "category name Pc");
	TEST_INT(uni_ccc(0x301), ==, 230, "ccc of U+0301");
	TEST_INT(uni_ccc(0x41), ==, 0, "ccc of A");
	TEST(uni_is_alnum(0xBD) && uni_is_alnum(0x4E00) && !uni_is_alnum('_'),
	    "alphanumeric: one half and a CJK ideograph, not underscore");
	TEST(uni_is_pyspace(0x1C) && uni_is_pyspace(0x85) &&
	    uni_is_pyspace(0x3000) && !uni_is_pyspace(0x200B) &&
	    !uni_is_pyspace(0xFEFF) && !uni_is_pyspace(0x180E),
	    "Python whitespace set");

	n = uni_lower(0x130, o);
	TEST(n == 2 && o[0] == 0x69 && o[1] == 0x307, "lower U+0130 is i + U+0307");
	n = uni_lower(0x1E9E, o);
	TEST(n == 1 && o[0] == 0xDF, "lower capital sharp s");
	n = uni_lower(0x1F88, o);
	TEST(n == 1 && o[0] == 0x1F80, "lower U+1F88");
	n = uni_lower(0x3A3, o);
	TEST(n == 1 && o[0] == 0x3C3, "lower sigma alone is U+03C3");

	n = uni_decompose(0xE9, o, 18);
	TEST(n == 2 && o[0] == 0x65 && o[1] == 0x301, "decompose e-acute");
	n = uni_decompose(0xD4DB, o, 18);
	TEST(n == 3 && o[0] == 0x1111 && o[1] == 0x1171 && o[2] == 0x11B6,
	    "decompose a Hangul LVT syllable");
	n = uni_decompose(0xAC00, o, 18);
	TEST(n == 2 && o[0] == 0x1100 && o[1] == 0x1161, "decompose Hangul LV");
	n = uni_decompose(0x1F88, o, 18);
	TEST(n == 3 && o[0] == 0x391 && o[1] == 0x313 && o[2] == 0x345,
	    "decompose U+1F88 fully");
	n = uni_decompose(0xFB03, o, 18);
	TEST(n == 1 && o[0] == 0xFB03, "compatibility mapping is not used");
}

static void
test_sequences(void)
{
	static const uint32_t in[] = { 0x1E0B, 0x323, 0x307, 0xE1, 0x316 };
	static const uint32_t want[] = { 0x64, 0x323, 0x307, 0x307, 0x61,
	    0x316, 0x301 };
	static const uint32_t sig[] = { 0x391, 0x3A3, 0x20, 0x3A3, 0x391, 0x20,
	    0x391, 0x345, 0x3A3, 0x2E };
	static const uint32_t sigw[] = { 0x3B1, 0x3C2, 0x20, 0x3C3, 0x3B1, 0x20,
	    0x3B1, 0x345, 0x3C2, 0x2E };
	uint32_t *out = NULL;
	size_t cap = 0;
	long n;

	n = uni_nfd(in, 5, &out, &cap);
	TEST(seq_eq(out, n, want, 7), "NFD reorders marks stably");
	n = uni_lower_str(sig, 10, &out, &cap);
	TEST(seq_eq(out, n, sigw, 10), "lower with final sigma");
	n = uni_nfd(in, 0, &out, &cap);
	TEST_INT(n, ==, 0, "NFD of nothing");
	free(out);
}

static void
test_digest(void)
{
	uint64_t h = 0xCBF29CE484222325ULL;
	uint32_t cp, one, *out = NULL;
	size_t cap = 0;
	long n, i;
	unsigned f;

	for (cp = 0; cp < 0x110000; cp++) {
		h = tap_fnv(h, cp);
		h = tap_fnv(h, uni_category(cp));
		h = tap_fnv(h, (uint32_t)uni_ccc(cp));
		f = (uni_is_pyspace(cp) ? 0x20 : 0) | (uni_is_cased(cp) ? 0x40 : 0) |
		    (uni_is_case_ignorable(cp) ? 0x80 : 0);
		h = tap_fnv(h, f);
		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		one = cp;
		n = uni_lower_str(&one, 1, &out, &cap);
		for (i = 0; i < n; i++)
			h = tap_fnv(h, out[i]);
		h = tap_fnv(h, 0x110000);
		n = uni_nfd(&one, 1, &out, &cap);
		for (i = 0; i < n; i++)
			h = tap_fnv(h, out[i]);
	}
	free(out);
	TEST(h == UNI_TEST_DIGEST, "all properties of all code points match "
	    "Unicode " UNICODE_VERSION " (digest %016llx)", (unsigned long long)h);
}

static void
test_utf8(void)
{
	/* Sequences that are not UTF-8, and the maximal subpart of each. */
	static const struct {
		const char *s;
		size_t len;
		const char *what;
	} bad[] = {
		{ "\xFF", 1, "FF" },
		{ "\x80\x80", 1, "a lone continuation byte" },
		{ "\xC0\x80", 1, "C0 starts nothing" },
		{ "\xE4\xB8", 2, "a three-byte sequence cut short at the end" },
		{ "\xE4\xB8z", 2, "a three-byte sequence cut short by ASCII" },
		{ "\xED\xA0\x80", 1, "a surrogate is three units" },
		{ "\xF0\x90\x80z", 3, "a four-byte sequence without its last byte" },
		{ "\xF4\x90\x80\x80", 1, "past U+10FFFF" },
	};
	static const struct {
		const char *s;
		int len;
		uint32_t cp;
	} dec[] = {
		{ "A", 1, 0x41 }, { "\xC3\xA9", 2, 0xE9 },
		{ "\xE2\x82\xAC", 3, 0x20AC }, { "\xF0\x9F\x98\x80", 4, 0x1F600 },
		{ "\xF4\x8F\xBF\xBF", 4, 0x10FFFF }, { "\xEF\xBB\xBF", 3, 0xFEFF },
		{ "\xC0\x80", 0, 0 }, { "\xC1\xBF", 0, 0 },
		{ "\xE0\x9F\xBF", 0, 0 }, { "\xED\xA0\x80", 0, 0 },
		{ "\xF0\x8F\xBF\xBF", 0, 0 }, { "\xF4\x90\x80\x80", 0, 0 },
		{ "\xF5\x80\x80\x80", 0, 0 }, { "\x80", 0, 0 },
		{ "\xC3", 0, 0 }, { "\xE2\x82", 0, 0 }, { "\xC3\x28", 0, 0 },
	};
	uint8_t b[4];
	uint32_t cp, c;
	size_t i;
	int n, ok;

	for (i = 0; i < sizeof(dec) / sizeof(dec[0]); i++) {
		cp = 0;
		n = uni_utf8_decode((const uint8_t *)dec[i].s, strlen(dec[i].s), &cp);
		TEST(n == dec[i].len && (n == 0 || cp == dec[i].cp),
		    "uni_utf8_decode case %zu", i);
	}
	ok = 1;
	for (c = 0; c < 0x110000; c++) {
		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		n = uni_utf8_encode(c, b);
		if (uni_utf8_decode(b, (size_t)n, &cp) != n || cp != c)
			ok = 0;
	}
	TEST(ok, "uni_utf8_encode and uni_utf8_decode round-trip every scalar value");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"ab\xC3\xA9z\xFF", 6), ==, 5,
	    "valid prefix stops at a bad byte");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"ab\xE2\x82", 4), ==, 2,
	    "valid prefix stops at a truncated sequence");
	/* ASCII goes eight bytes at a time: a fault inside or after such a run. */
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"abcdefghijklmnop\xC3\xA9qrs"
	    "tuvwxyz\x80", 29), ==, 28, "valid prefix after runs of ASCII");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"abcdefg\xFFhijklmnop", 17),
	    ==, 7, "valid prefix stops inside an eight-byte run");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"abcdefghijklmnop", 16), ==,
	    16, "valid prefix of ASCII alone");
	/* Runs of two- and three-byte sequences are checked inline. */
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xE4\xB8\xAD\xE6\x96\x87"
	    "\xED\xA0\x80", 9), ==, 6, "a CJK run stops at a surrogate");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xE4\xB8\xAD\xE0\x9F\xBF",
	    6), ==, 3, "a CJK run stops at an overlong E0 sequence");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xE4\xB8\xAD\xE4\xB8", 5),
	    ==, 3, "a CJK run stops at a sequence cut short");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xE4\xB8\xAD\xEF\xBF\xBD"
	    "\xED\x9F\xBF\xE0\xA0\x80\xF0\x90\x80\x80", 16), ==, 16,
	    "EF, ED below the surrogates, E0 and F0 at their lowest");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xC2\x80\xDF\xBF\xC1\xBF",
	    6), ==, 4, "two-byte sequences, then an overlong one");
	TEST_INT(uni_utf8_valid_prefix((const uint8_t *)"\xC3\xA9\xC3", 3), ==, 2,
	    "a two-byte sequence cut short");

	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
		TEST_INT(uni_utf8_bad_len((const uint8_t *)bad[k].s, strlen(bad[k].s)),
		    ==, bad[k].len, "bad: %s", bad[k].what);
}

int
main(void)
{
	test_samples();
	test_sequences();
	test_digest();
	test_utf8();
	return tap_done();
}
