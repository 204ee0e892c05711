/*
 * The byte-level BPE pretokenizers: hand-made cases for each trap of
 * tiktoken's patterns, the Unicode 16.0 class table (a digest over every
 * code point, made by scripts/gen-unicode16, and code points whose class
 * changed since 14.0), and the tiling of odd inputs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pretok.h"
#include "tap.h"
#include "unicode16_digest.h"

#define G	PRETOK_GPT2
#define C	PRETOK_CL100K
#define O	PRETOK_O200K

static const char *const patname[] = { "gpt2", "cl100k", "o200k" };

/* Print s with C escapes into buf, for the test names. */
static const char *
show(const char *s, size_t n, char *buf, size_t cap)
{
	size_t i, k = 0;
	unsigned char c;

	for (i = 0; i < n && k + 5 < cap; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7F && c != '\\')
			buf[k++] = (char)c;
		else
			k += (size_t)snprintf(buf + k, cap - k, "\\x%02X", c);
	}
	buf[k] = 0;
	return buf;
}

/*
 * The pieces of s under pat are the NULL-terminated list of strings
 * that follows.
 */
static void
split_is(enum pretok_pat pat, const char *s, ...)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t n = strlen(s), i = 0, k;
	const char *want;
	char got[512], exp[512], b[128];
	size_t gl = 0, el = 0;
	va_list ap;

	while (i < n && gl < sizeof(got) - 140) {
		k = pretok_next(pat, p + i, n - i);
		if (k == 0 || k > n - i) {
			gl += (size_t)snprintf(got + gl, sizeof(got) - gl, "<len %zu>", k);
			break;
		}
		gl += (size_t)snprintf(got + gl, sizeof(got) - gl, "[%s]",
		    show(s + i, k, b, sizeof(b)));
		i += k;
	}
	va_start(ap, s);
	while ((want = va_arg(ap, const char *)) != NULL && el < sizeof(exp) - 140)
		el += (size_t)snprintf(exp + el, sizeof(exp) - el, "[%s]",
		    show(want, strlen(want), b, sizeof(b)));
	va_end(ap);
	TEST(strcmp(got, exp) == 0, "%s: %s", patname[pat],
	    show(s, n, b, sizeof(b)));
	if (strcmp(got, exp) != 0)
		printf("#   got  %s\n#   want %s\n", got, exp);
}

/* The same pieces under every pattern. */
static void
split_all(const char *s, const char *a, const char *b, const char *c)
{
	split_is(G, s, a, b, c, (char *)NULL);
	split_is(C, s, a, b, c, (char *)NULL);
	split_is(O, s, a, b, c, (char *)NULL);
}

static void
test_gpt2(void)
{
	/* Contractions: ASCII lower case only, before anything else. */
	split_is(G, "don't", "don", "'t", NULL);
	split_is(G, "I'm we're you've he'll she'd it's",
	    "I", "'m", " we", "'re", " you", "'ve", " he", "'ll", " she", "'d",
	    " it", "'s", NULL);
	split_is(G, "IT'S", "IT", "'", "S", NULL);
	split_is(G, "it'S", "it", "'", "S", NULL);
	split_is(G, "it'\xC5\xBF", "it", "'", "\xC5\xBF", NULL);
	split_is(G, "'sword", "'s", "word", NULL);
	split_is(G, "'rock", "'", "rock", NULL);
	split_is(G, "''s", "''", "s", NULL);
	split_is(G, "it\xE2\x80\x99s", "it", "\xE2\x80\x99", "s", NULL);
	split_is(G, "'", "'", NULL);
	/* One space goes with a word, digits or punctuation. */
	split_is(G, "a   b", "a", "  ", " b", NULL);
	split_is(G, "a  ", "a", "  ", NULL);
	split_is(G, "a \n", "a", " \n", NULL);
	split_is(G, " 123 4567", " 123", " 4567", NULL);
	split_is(G, "1234567", "1234567", NULL);
	split_is(G, "(word", "(", "word", NULL);
	split_is(G, " (word", " (", "word", NULL);
	split_is(G, "!\r", "!", "\r", NULL);
	split_is(G, "a\r\rb", "a", "\r", "\r", "b", NULL);
	split_is(G, "a\nb", "a", "\n", "b", NULL);
	split_is(G, "\t\tb", "\t", "\t", "b", NULL);
	split_is(G, "HTTPServer", "HTTPServer", NULL);
	split_is(G, "x\xC2\xA0y", "x", "\xC2\xA0", "y", NULL);
	split_is(G, "x \xC2\xA0y", "x", " ", "\xC2\xA0", "y", NULL);
	split_is(G, "abc123def", "abc", "123", "def", NULL);
}

static void
test_cl100k(void)
{
	/* Contractions in every case, and U+017F folding to s. */
	split_is(C, "don't", "don", "'t", NULL);
	split_is(C, "IT'S", "IT", "'S", NULL);
	split_is(C, "it'\xC5\xBF", "it", "'\xC5\xBF", NULL);
	split_is(C, "WE'RE We'Re we'rE", "WE", "'RE", " We", "'Re", " we",
	    "'rE", NULL);
	split_is(C, "'VE'Ve'LL'lL'M'D'T", "'VE", "'Ve", "'LL", "'lL", "'M",
	    "'D", "'T", NULL);
	split_is(C, "'sword", "'s", "word", NULL);
	split_is(C, "'rock", "'rock", NULL);
	split_is(C, "'R", "'R", NULL);
	split_is(C, "'\xE2\x84\xAA", "'\xE2\x84\xAA", NULL); /* KELVIN SIGN */
	split_is(C, "'", "'", NULL);
	/* One non-letter, non-digit, non-newline before letters. */
	split_is(C, "(word", "(word", NULL);
	split_is(C, "((word", "((", "word", NULL);
	split_is(C, "\tword", "\tword", NULL);
	split_is(C, "\nword", "\n", "word", NULL);
	split_is(C, "\xE3\x80\x80word", "\xE3\x80\x80word", NULL);
	split_is(C, " 123", " ", "123", NULL);
	split_is(C, "1234567", "123", "456", "7", NULL);
	split_is(C, "\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4", "\xD9\xA1\xD9\xA2\xD9\xA3",
	    "\xD9\xA4", NULL);
	split_is(C, "a   b", "a", "  ", " b", NULL);
	split_is(C, "a  ", "a", "  ", NULL);
	/* Punctuation takes the \r and \n after it. */
	split_is(C, "!\r", "!\r", NULL);
	split_is(C, " !!\r\n\r\nx", " !!\r\n\r\n", "x", NULL);
	split_is(C, "!\n/", "!\n", "/", NULL);
	/* \s++$, \s*[\r\n], \s+(?!\S), \s */
	split_is(C, "a\r\rb", "a", "\r\r", "b", NULL);
	split_is(C, "a \n b", "a", " \n", " b", NULL);
	split_is(C, "a\n  ", "a", "\n  ", NULL);
	split_is(C, "a\n \n1", "a", "\n \n", "1", NULL);
	split_is(C, "a  1", "a", " ", " ", "1", NULL);
	split_is(C, "HTTPServer", "HTTPServer", NULL);
	split_is(C, "e\xCC\x81", "e", "\xCC\x81", NULL);
	split_is(C, "\xCC\x81" "e", "\xCC\x81" "e", NULL);
}

static void
test_o200k(void)
{
	/* Words by case, with the contraction attached. */
	split_is(O, "don't", "don't", NULL);
	split_is(O, "IT'S", "IT'S", NULL);
	split_is(O, "It'sok", "It's", "ok", NULL);
	split_is(O, "it'\xC5\xBF", "it'\xC5\xBF", NULL);
	split_is(O, "WE'RE'LL", "WE'RE", "'LL", NULL);
	split_is(O, "'sword", "'sword", NULL);
	split_is(O, "HTTPServer", "HTTPServer", NULL);
	split_is(O, "helloWorld", "hello", "World", NULL);
	split_is(O, "Hello World", "Hello", " World", NULL);
	split_is(O, "ABC", "ABC", NULL);
	split_is(O, "ABC def", "ABC", " def", NULL);
	split_is(O, "\xC7\x85" "emal", "\xC7\x85" "emal", NULL);	/* Lt */
	split_is(O, "a\xC7\x85" "b", "a", "\xC7\x85" "b", NULL);
	/* Lo and Lm are in both classes; so are marks. */
	split_is(O, "\xE4\xB8\xAD\xE6\x96\x87", "\xE4\xB8\xAD\xE6\x96\x87", NULL);
	split_is(O, "AB\xE4\xB8\xAD" "CD", "AB\xE4\xB8\xAD", "CD", NULL);
	split_is(O, "e\xCC\x81t\xCC\x81", "e\xCC\x81t\xCC\x81", NULL);
	split_is(O, "E\xCC\x81T", "E\xCC\x81", "T", NULL);
	split_is(O, " \xCC\x81", " \xCC\x81", NULL);
	split_is(O, "\xCC\x81\xCC\x81!", "\xCC\x81\xCC\x81", "!", NULL);
	split_is(O, "(word", "(word", NULL);
	split_is(O, "\nword", "\n", "word", NULL);
	split_is(O, "1234567", "123", "456", "7", NULL);
	split_is(O, " 12", " ", "12", NULL);
	/* Punctuation takes \r, \n and / after it. */
	split_is(O, ".//", ".//", NULL);
	split_is(O, "!\n/", "!\n/", NULL);
	split_is(O, "!\r", "!\r", NULL);
	split_is(O, "a\r\rb", "a", "\r\r", "b", NULL);
	split_is(O, "a\n  ", "a", "\n", "  ", NULL);
	split_is(O, "a  \n", "a", "  \n", NULL);
	split_is(O, "a   b", "a", "  ", " b", NULL);
	split_is(O, "a  ", "a", "  ", NULL);
}

/* UTF-8 of cp into b; its length. */
static size_t
utf8(uint32_t cp, uint8_t *b)
{
	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (uint8_t)(0xC0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (uint8_t)(0xE0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	b[0] = (uint8_t)(0xF0 | cp >> 18);
	b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	b[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * " Xy": with X whitespace, gpt2 gives " ", "X", "y" (the space run
 * leaves its last one to the next piece), and cl100k " ", "Xy" (X the
 * prefix of a word) or " X", "y" (X a newline: \s*[\r\n]); with X
 * anything else, both give " X", "y" (a space and punctuation).
 */
static int
ws_splits(uint32_t cp, int ws)
{
	uint8_t t[8];
	size_t k, n;
	int nl = cp == '\n' || cp == '\r';

	t[0] = ' ';
	k = utf8(cp, t + 1);
	t[1 + k] = 'y';
	n = k + 2;
	if (!ws)
		return pretok_next(G, t, n) == 1 + k && pretok_next(C, t, n) == 1 + k;
	return pretok_next(G, t, n) == 1 &&
	    pretok_next(G, t + 1, n - 1) == (cp == ' ' ? 2 : k) &&
	    pretok_next(C, t, n) == (nl ? 1 + k : 1) &&
	    pretok_next(C, t + 1, n - 1) == (nl ? k : k + 1);
}

static void
test_common(void)
{
	static const uint32_t ws[] = {
		0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
		0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
		0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000
	};
	static const uint32_t notws[] = {
		0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF,
		0x180E, 0x00, 0x7F
	};
	size_t i;
	int pat;

	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
		TEST(pretok_class(ws[i]) == PRETOK_WS && ws_splits(ws[i], 1),
		    "U+%04X is White_Space", (unsigned)ws[i]);
	for (i = 0; i < sizeof(notws) / sizeof(notws[0]); i++)
		TEST(pretok_class(notws[i]) == 0 && ws_splits(notws[i], 0),
		    "U+%04X is not White_Space", (unsigned)notws[i]);
	/* U+001C..U+001F are punctuation to the patterns. */
	split_is(G, " \x1C\x1D" "b", " \x1C\x1D", "b", NULL);
	split_is(C, "a\x1F" "b", "a", "\x1F" "b", NULL);
	split_is(O, "a\x1E\x1E", "a", "\x1E\x1E", NULL);
	split_all(" \xE3\x80\x80", " \xE3\x80\x80", NULL, NULL);
	split_is(G, "a\xE2\x80\x8B" "b", "a", "\xE2\x80\x8B", "b", NULL);
	split_is(G, "a \xE2\x80\x8B" "b", "a", " \xE2\x80\x8B", "b", NULL);
	split_is(G, "\xEF\xBB\xBFhi", "\xEF\xBB\xBF", "hi", NULL);
	split_is(C, "\xEF\xBB\xBFhi", "\xEF\xBB\xBFhi", NULL);

	/* One code point, and the empty text. */
	for (pat = G; pat <= O; pat++) {
		TEST(pretok_next(pat, (const uint8_t *)"", 0) == 0,
		    "%s: empty text", patname[pat]);
		split_is(pat, "a", "a", NULL);
		split_is(pat, " ", " ", NULL);
		split_is(pat, "\n", "\n", NULL);
		split_is(pat, "7", "7", NULL);
		split_is(pat, "'", "'", NULL);
		split_is(pat, "\xC3\xA9", "\xC3\xA9", NULL);
		split_is(pat, "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80", NULL);
		TEST(pretok_next(pat, (const uint8_t *)"\0\0", 2) == 2,
		    "%s: NUL bytes are punctuation", patname[pat]);
	}
	/* Four-byte code points: letters, digits, symbols. */
	split_all("\xF0\x9D\x90\x80\xF0\x9D\x90\x81",
	    "\xF0\x9D\x90\x80\xF0\x9D\x90\x81", NULL, NULL);
	split_is(G, " \xF0\x9F\x98\x80\xF0\x9F\x98\x80x",
	    " \xF0\x9F\x98\x80\xF0\x9F\x98\x80", "x", NULL);
	split_is(C, "\xF0\x9F\x98\x80x", "\xF0\x9F\x98\x80x", NULL);
	split_is(C, "\xF0\x9D\x9F\x8E\xF0\x9D\x9F\x8F\xF0\x9D\x9F\x90\xF0\x9D\x9F\x91",
	    "\xF0\x9D\x9F\x8E\xF0\x9D\x9F\x8F\xF0\x9D\x9F\x90",
	    "\xF0\x9D\x9F\x91", NULL);
}

/* A text that is not UTF-8 is never read past its end. */
static void
test_bad_utf8(void)
{
	static const char *const bad[] = {
		"\xC3", "a\xE2\x82", "\xF0\x9F\x98", "\x80\x80", "\xFF", "'\xC5",
		" \xE3\x80", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80"
	};
	size_t i, k, n, j;
	int pat, ok;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (pat = G; pat <= O; pat++) {
			n = strlen(bad[i]);
			ok = 1;
			for (j = 0; j < n; j += k) {
				k = pretok_next(pat, (const uint8_t *)bad[i] + j, n - j);
				if (k == 0 || k > n - j) {
					ok = 0;
					break;
				}
			}
			TEST(ok, "%s: bad UTF-8 %zu tiles", patname[pat], i);
		}
}

/*
 * pretok.c classifies ASCII from a table of its own: each byte behaves
 * as its class in the Unicode table says.
 */
static void
test_ascii(void)
{
	uint8_t t[4];
	unsigned c, b, bad = 0;
	size_t k1, k2, k3;

	for (b = 0; b < 128; b++) {
		c = pretok_class(b);
		t[0] = t[1] = t[2] = (uint8_t)b;
		t[3] = '!';
		k1 = pretok_next(G, t, 4);	/* a run of 3, or 4 with '!' */
		t[2] = '1';
		k2 = pretok_next(G, t, 3);	/* 2 for letters, 3 for digits */
		t[0] = 'a';
		t[1] = (uint8_t)b;
		k3 = pretok_next(O, t, 2);	/* 2 for lower case */
		if (c & PRETOK_L)
			bad += k1 != 3 || k2 != 2 || k3 != ((c & PRETOK_LL) ? 2 : 1);
		else if (c & PRETOK_N)
			bad += k1 != 3 || k2 != 3;
		else if (c & PRETOK_WS)
			bad += k1 != 2 || c != PRETOK_WS;
		else
			bad += k1 != 4 || c != 0;
	}
	TEST_INT(bad, ==, 0, "ASCII bytes behave as their Unicode classes");
}

static void
test_classes(void)
{
	static const struct {
		uint32_t cp;
		unsigned cls;
		const char *what;
	} spot[] = {
		{ 'A', PRETOK_L | PRETOK_LU, "A" },
		{ 'z', PRETOK_L | PRETOK_LL, "z" },
		{ '5', PRETOK_N, "5" },
		{ '_', 0, "_" },
		{ 0x01C5, PRETOK_L | PRETOK_LT, "DZ WITH CARON, title case" },
		{ 0x02B0, PRETOK_L | PRETOK_LM, "MODIFIER LETTER SMALL H" },
		{ 0x4E2D, PRETOK_L | PRETOK_LO, "a CJK ideograph" },
		{ 0x0301, PRETOK_M, "COMBINING ACUTE ACCENT" },
		{ 0x0903, PRETOK_M, "DEVANAGARI SIGN VISARGA (Mc)" },
		{ 0x20DD, PRETOK_M, "COMBINING ENCLOSING CIRCLE (Me)" },
		{ 0x2167, PRETOK_N, "ROMAN NUMERAL EIGHT (Nl)" },
		{ 0x00BD, PRETOK_N, "VULGAR FRACTION ONE HALF (No)" },
		{ 0x017F, PRETOK_L | PRETOK_LL, "LONG S" },
		{ 0x0295, PRETOK_L | PRETOK_LL, "U+0295, Ll until 17.0" },
		/* Added in 15.0 */
		{ 0x0CF3, PRETOK_M, "KANNADA SIGN COMBINING ANUSVARA ABOVE RIGHT (15.0)" },
		{ 0x11F50, PRETOK_N, "KAWI DIGIT ZERO (15.0)" },
		{ 0x1E4D0, PRETOK_L | PRETOK_LO, "NAG MUNDARI LETTER O (15.0)" },
		{ 0x1E4F0, PRETOK_N, "NAG MUNDARI DIGIT ZERO (15.0)" },
		/* Added in 16.0 */
		{ 0x1C89, PRETOK_L | PRETOK_LU, "CYRILLIC CAPITAL LETTER TJE (16.0)" },
		{ 0x1C8A, PRETOK_L | PRETOK_LL, "CYRILLIC SMALL LETTER TJE (16.0)" },
		{ 0xA7CB, PRETOK_L | PRETOK_LU, "LATIN CAPITAL LETTER RAMS HORN (16.0)" },
		{ 0xA7CD, PRETOK_L | PRETOK_LL, "LATIN SMALL LETTER S WITH DIAGONAL STROKE (16.0)" },
		{ 0x105C0, PRETOK_L | PRETOK_LO, "TODHRI LETTER A (16.0)" },
		{ 0x10D40, PRETOK_N, "GARAY DIGIT ZERO (16.0)" },
		{ 0x10D4E, PRETOK_L | PRETOK_LM, "GARAY VOWEL LENGTH MARK (16.0)" },
		{ 0x16130, PRETOK_N, "GURUNG KHEMA DIGIT ZERO (16.0)" },
		{ 0x1CCF0, PRETOK_N, "OUTLINED DIGIT ZERO (16.0)" },
		/* Unassigned, private use, surrogates, out of range */
		{ 0x0378, 0, "unassigned" },
		{ 0xE000, 0, "private use" },
		{ 0xD800, 0, "a surrogate" },
		{ 0x110000, 0, "past U+10FFFF" },
	};
	uint64_t h = 0xCBF29CE484222325ULL;
	uint32_t cp;
	size_t i;

	for (i = 0; i < sizeof(spot) / sizeof(spot[0]); i++)
		TEST_INT(pretok_class(spot[i].cp), ==, spot[i].cls, "U+%04X %s",
		    (unsigned)spot[i].cp, spot[i].what);
	for (cp = 0; cp < 0x110000; cp++) {
		h = tap_fnv(h, cp);
		h = tap_fnv(h, pretok_class(cp));
	}
	TEST(h == PRETOK_TEST_DIGEST, "Unicode " PRETOK_UNICODE_VERSION
	    " classes (digest %016llx)", (unsigned long long)h);
}

int
main(void)
{
	test_gpt2();
	test_cl100k();
	test_o200k();
	test_common();
	test_bad_utf8();
	test_ascii();
	test_classes();
	return tap_done();
}
