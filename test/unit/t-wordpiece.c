/*
 * WordPiece: vocab loading, the basic tokenizer's rules (BERT and
 * ELECTRA), greedy matching, decoding.  Expected outputs were derived by
 * hand from google-research/bert and google-research/electra
 * tokenization.py under Python 3.11 (Unicode 14.0.0).  The cases on
 * the real BERT vocabularies read ../shared/wordpiece-vocabs (or
 * $RECPIPE_WORDPIECE_VOCABS) and are skipped when it is absent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "wordpiece.h"

/* A small vocabulary; the comment gives the id of the first token on each line. */
static const char toy_vocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"			/* 0 */
    "un\n##aff\n##able\nhello\nworld\n"			/* 5 */
    ",\n!\n.\ncafe\ncaf\xc3\xa9\n"				/* 10: café */
    "\xce\xbf\xce\xb4\xce\xbf\xcf\x82\n"			/* 15: οδος */
    "\xce\xbf\xce\xb4\xce\xbf\xcf\x83\n"			/* 16: οδοσ */
    "\xce\xb1\n\xcf\x83\n\xcf\x82\n##\xce\xb1\n"		/* 17: α σ ς ##α */
    "##\xcf\x83\n##\xcf\x82\n"				/* 21: ##σ ##ς */
    "i\n##\xcc\x87\n"					/* 23: i ##(U+0307) */
    "\xe1\x84\x92\n##\xe1\x85\xa1\n##\xe1\x86\xab\n"	/* 25: ᄒ ##ᅡ ##ᆫ */
    "\xed\x95\x9c\n"					/* 28: 한 */
    "\xe4\xb8\xad\n\xe6\x96\x87\n"				/* 29: 中 文 */
    "\xe3\x81\x82\xe3\x81\x84\n"				/* 31: あい */
    "\xef\xa4\x80\n\xe8\xb1\x88\n"				/* 32: U+F900, U+8C48 */
    "$\n5\n+\n^\n`\nx\ny\n"					/* 34 */
    "\xc2\xa5\n##100\n"					/* 41: ¥ ##100 */
    "a\n##a\nb\n##b\nab\n"					/* 43 */
    "[\n]\nmask\n"						/* 48 */
    "\xe2\x80\x93\n\xc2\xbf\n_\n|\n~\n=\n"			/* 51: – ¿ _ | ~ = */
    "\xc2\xab\n\xc2\xbb\n"					/* 57: « » */
    "\xc2\xa9\n\xc3\x97\n"					/* 59: © × */
    "A\n##B\n"						/* 61 */
    "caf\n##e\n##i\n"						/* 63 */
    ",\n##un\n";						/* 66: a duplicate of 10 */

static struct wp_vocab *toy;

static struct wp_vocab *
parse(const char *s, char err[WP_ERRMAX])
{
	return wp_vocab_parse((const uint8_t *)s, strlen(s), err, WP_ERRMAX);
}

/*
 * Tokenize s with the given options and render the pieces joined by
 * spaces ("" for no tokens; "ERROR: message" on failure).
 */
static const char *
tokens_n(const struct wp_vocab *v, int lower, int strip, enum wp_rules rules,
    const char *s, size_t n)
{
	static char out[8192];
	struct wp_opts o = WP_OPTS_INIT;
	struct wp_tok *t;
	int64_t *ids = NULL;
	size_t cap = 0, len = 0;
	long k, i;

	o.lower = lower;
	o.strip_accents = strip;
	o.rules = rules;
	if ((t = wp_tok_new(v, &o)) == NULL)
		return "ERROR: ENOMEM";
	k = wp_encode(t, (const uint8_t *)s, n, &ids, &cap);
	if (k < 0) {
		snprintf(out, sizeof out, "ERROR: %s", wp_strerror(t));
	} else {
		out[0] = '\0';
		for (i = 0; i < k; i++) {
			const char *p = wp_piece(v, ids[i], NULL);

			len += (size_t)snprintf(out + len, sizeof out - len, "%s%s",
			    i ? " " : "", p ? p : "?");
			if (len >= sizeof out)
				break;
		}
	}
	free(ids);
	wp_tok_free(t);
	return out;
}

static const char *
tokens(const struct wp_vocab *v, int lower, int strip, enum wp_rules rules,
    const char *s)
{
	return tokens_n(v, lower, strip, rules, s, strlen(s));
}

#define TOK_IS(lower, strip, rules, in, want) do {			\
	const char *got_ = tokens(toy, lower, strip, rules, in);	\
	TEST(strcmp(got_, want) == 0, "%s lower=%d strip=%d %s: %s",	\
	    #in, lower, strip, rules == WP_RULES_BERT ? "bert" : "electra", want); \
	if (strcmp(got_, want) != 0)					\
		printf("#   got \"%s\"\n", got_);			\
} while (0)

#define BOTH(lower, strip, in, want) do {				\
	TOK_IS(lower, strip, WP_RULES_BERT, in, want);			\
	TOK_IS(lower, strip, WP_RULES_ELECTRA, in, want);		\
} while (0)

static void
test_vocab_loading(void)
{
	char err[WP_ERRMAX];
	struct wp_vocab *v;
	size_t len;

	TEST_INT(wp_vocab_size(toy), ==, 68, "toy vocab: one id per line");
	TEST_INT(wp_vocab_id(toy, ",", 1), ==, 66, "duplicate token: the last line's id wins");
	TEST(strcmp(wp_piece(toy, 10, &len), ",") == 0 && len == 1,
	    "duplicate token: the earlier id still names it");
	TEST_INT(wp_special_id(toy, WP_UNK), ==, 1, "[UNK] id");
	TEST_INT(wp_special_id(toy, WP_CLS), ==, 2, "[CLS] id");
	TEST_INT(wp_special_id(toy, WP_SEP), ==, 3, "[SEP] id");
	TEST_INT(wp_special_id(toy, WP_PAD), ==, 0, "[PAD] id");
	TEST_INT(wp_special_id(toy, WP_MASK), ==, 4, "[MASK] id");
	TEST(wp_piece(toy, 68, NULL) == NULL && wp_piece(toy, -1, NULL) == NULL,
	    "wp_piece out of range is NULL");

	/* Line reading: \n only, every \r deleted, strip() at both ends. */
	v = parse("a\r\n\r\n b\t\x0b\nc\rd\n\n\xe2\x80\x83" "e\xe3\x80\x80\n"
	    "\xe2\x80\x8b" "f\n\xef\xbb\xbfg\nh\x1c\nlast", err);
	TEST(v != NULL, "vocab with CRLF, blanks, spaces parses");
	if (v != NULL) {
		TEST_INT(wp_vocab_size(v), ==, 10, "ten lines, the last without newline");
		TEST_INT(wp_vocab_id(v, "a", 1), ==, 0, "CRLF line");
		TEST_INT(wp_vocab_id(v, "", 0), ==, 4, "blank lines are \"\" tokens, the last wins");
		TEST_INT(wp_vocab_id(v, "b", 1), ==, 2, "tab and VT stripped");
		TEST_INT(wp_vocab_id(v, "cd", 2), ==, 3, "a lone \\r inside a line is deleted");
		TEST_INT(wp_vocab_id(v, "e", 1), ==, 5, "U+2003 and U+3000 stripped");
		TEST_INT(wp_vocab_id(v, "\xe2\x80\x8b" "f", 4), ==, 6, "U+200B is not stripped");
		TEST_INT(wp_vocab_id(v, "\xef\xbb\xbfg", 4), ==, 7, "a BOM is not stripped");
		TEST_INT(wp_vocab_id(v, "h", 1), ==, 8, "U+001C is stripped (Python isspace)");
		TEST_INT(wp_vocab_id(v, "last", 4), ==, 9, "last line without newline");
		TEST_INT(wp_special_id(v, WP_UNK), ==, -1, "no [UNK]");
	}
	wp_vocab_free(v);

	v = parse("x\n\r\r", err);
	TEST(v != NULL && wp_vocab_size(v) == 1, "a final chunk of \\r only is not a line");
	wp_vocab_free(v);
	v = parse("x\n\r\ry", err);
	TEST(v != NULL && wp_vocab_size(v) == 2 && wp_vocab_id(v, "y", 1) == 1,
	    "a final chunk with text is a line");
	wp_vocab_free(v);
	v = parse("", err);
	TEST(v != NULL && wp_vocab_size(v) == 0, "empty vocab file: no entries");
	wp_vocab_free(v);
	v = parse("\xc3\r\xa9\n", err);
	TEST(v != NULL && wp_vocab_id(v, "\xc3\xa9", 2) == 0,
	    "\\r is deleted before UTF-8 decoding");
	wp_vocab_free(v);

	v = parse("ok\nfine\nb\r\xff\n", err);
	TEST(v == NULL && strcmp(err, "line 3: invalid UTF-8 at byte offset 10") == 0,
	    "invalid UTF-8 names line and file offset (%s)", v ? "loaded" : err);
	wp_vocab_free(v);
	v = parse("\xed\xa0\x80\n", err);
	TEST(v == NULL, "a surrogate in the vocab is an error");
	wp_vocab_free(v);

	v = wp_vocab_load("/nonexistent/vocab.txt", err, sizeof err);
	TEST(v == NULL && strcmp(err, strerror(ENOENT)) == 0, "missing file: strerror");
}

static void
test_basic(void)
{
	BOTH(1, -1, "unaffable", "un ##aff ##able");
	BOTH(1, -1, "Hello, World!", "hello , world !");
	BOTH(0, -1, "Hello, World!", "[UNK] , [UNK] !");
	BOTH(0, -1, "hello world", "hello world");
	BOTH(1, -1, "", "");
	BOTH(1, -1, " \t\r\n ", "");
	BOTH(1, -1, "\x01\x7f", "");
	BOTH(1, -1, "unaffablex", "[UNK]");	/* one piece fails: the whole word */
	BOTH(1, -1, "unaffable x", "un ##aff ##able x");
	BOTH(1, -1, "[MASK]", "[ mask ]");	/* special tokens are not recognised */
	BOTH(0, -1, "AB", "A ##B");
	/* repeated words come from the word cache: same answers */
	BOTH(1, -1, "unaffable Unaffable unaffablex unaffablex unaffable",
	    "un ##aff ##able un ##aff ##able [UNK] [UNK] un ##aff ##able");
	BOTH(1, -1, "unaffableunaffableunaffable unaffableunaffableunaffable",
	    "un ##aff ##able ##un ##aff ##able ##un ##aff ##able "
	    "un ##aff ##able ##un ##aff ##able ##un ##aff ##able");
	BOTH(1, -1, "AB", "ab");
}

static void
test_accents(void)
{
	/* café (precomposed) */
	BOTH(1, -1, "Caf\xc3\xa9", "cafe");
	BOTH(1, 0, "Caf\xc3\xa9", "caf\xc3\xa9");
	BOTH(0, -1, "caf\xc3\xa9", "caf\xc3\xa9");
	/* cafe + U+0301: the mark is not punctuation and stays in the word */
	BOTH(1, -1, "Cafe\xcc\x81", "cafe");
	BOTH(0, -1, "cafe\xcc\x81", "[UNK]");
	/* explicit stripping without lower: BERT rules strip, ELECTRA does not */
	TOK_IS(0, 1, WP_RULES_BERT, "caf\xc3\xa9", "cafe");
	TOK_IS(0, 1, WP_RULES_ELECTRA, "caf\xc3\xa9", "caf\xc3\xa9");
	/* U+0130: lower() gives i + U+0307, which stripping removes */
	BOTH(1, -1, "\xc4\xb0", "i");
	BOTH(1, 0, "\xc4\xb0", "i ##\xcc\x87");
	/* U+1FEF GREEK VARIA (Sk) decomposes to "`", which is punctuation */
	BOTH(1, -1, "a\xe1\xbf\xafx", "a ` x");
	BOTH(1, 0, "a\xe1\xbf\xafx", "[UNK]");
	/* Hangul: NFD splits the syllable into conjoining jamo (Lo, kept) */
	BOTH(1, -1, "\xed\x95\x9c", "\xe1\x84\x92 ##\xe1\x85\xa1 ##\xe1\x86\xab");
	BOTH(0, -1, "\xed\x95\x9c", "\xed\x95\x9c");
	BOTH(1, 0, "\xed\x95\x9c", "\xed\x95\x9c");
}

static void
test_sigma(void)
{
	/* ΟΔΟΣ: final after a cased letter with nothing cased after it */
	BOTH(1, -1, "\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82");
	BOTH(1, 0, "\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82");
	/* ΟΔΟΣ. : '.' is case-ignorable and skipped, then the end: final */
	BOTH(1, -1, "\xce\x9f\xce\x94\xce\x9f\xce\xa3.", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82 .");
	/* ΟΔΟΣ.Α : '.' skipped, then Α (cased): not final */
	BOTH(1, -1, "\xce\x9f\xce\x94\xce\x9f\xce\xa3.\xce\x91",
	    "\xce\xbf\xce\xb4\xce\xbf\xcf\x83 . \xce\xb1");
	/* ΟΔΟΣ,Α : ',' is neither ignorable nor cased: final */
	BOTH(1, -1, "\xce\x9f\xce\x94\xce\x9f\xce\xa3,\xce\x91",
	    "\xce\xbf\xce\xb4\xce\xbf\xcf\x82 , \xce\xb1");
	/* Σ alone and Σ first: not final */
	BOTH(1, -1, "\xce\xa3", "\xcf\x83");
	BOTH(1, -1, "\xce\xa3\xce\x91", "\xcf\x83 ##\xce\xb1");
	/* ΑΣ ΣΑ: lower() sees each whitespace token alone */
	BOTH(1, -1, "\xce\x91\xce\xa3 \xce\xa3\xce\x91",
	    "\xce\xb1 ##\xcf\x82 \xcf\x83 ##\xce\xb1");
	/* ΣΣ: the second follows a cased letter and ends the token */
	BOTH(1, -1, "\xce\xa3\xce\xa3", "\xcf\x83 ##\xcf\x82");
	/* Α + ZWSP + Σ: ZWSP is removed first, so Σ follows Α */
	BOTH(1, -1, "\xce\x91\xe2\x80\x8b\xce\xa3", "\xce\xb1 ##\xcf\x82");
	/* Α + U+0301 + Σ: the mark is case-ignorable; lower() runs before stripping */
	BOTH(1, -1, "\xce\x91\xcc\x81\xce\xa3", "\xce\xb1 ##\xcf\x82");
	/* not lowering: Σ unchanged and not in the vocab */
	BOTH(0, -1, "\xce\xa3", "[UNK]");
}

static void
test_cjk(void)
{
	static const uint32_t in[] = {
		0x4e00, 0x9fff, 0x3400, 0x4dbf, 0x20000, 0x2a6df, 0x2a700,
		0x2b73f, 0x2b740, 0x2b81f, 0x2b820, 0x2ceaf, 0xf900, 0xfaff,
		0x2f800, 0x2fa1f
	};
	static const uint32_t out[] = {
		0x4dff, 0xa000, 0x33ff, 0x4dc0, 0x1ffff, 0x2a6e0, 0x2a6ff,
		0x2ceb0, 0x2ebe0, 0x30000, 0x31350, 0xf8ff, 0xfb00, 0x2f7ff,
		0x2fa20, 0x3005, 0x3042, 0x30a2, 0xac00, 0x2e80, 0x2f00, 0x3007
	};
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof in / sizeof in[0]; i++)
		ok &= wp_is_cjk(in[i]);
	TEST(ok, "CJK range ends are Chinese characters");
	ok = 1;
	for (i = 0; i < sizeof out / sizeof out[0]; i++)
		ok &= !wp_is_cjk(out[i]);
	TEST(ok, "Ext F/G/H, kana, hangul, radicals, U+3005, U+3007 are not");

	BOTH(1, -1, "\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad \xe6\x96\x87");
	BOTH(0, -1, "a\xe4\xb8\xad" "b", "a \xe4\xb8\xad b");
	/* kana are not split out: あい is one word */
	BOTH(0, -1, "\xe3\x81\x82\xe3\x81\x84\xe4\xb8\xad",
	    "\xe3\x81\x82\xe3\x81\x84 \xe4\xb8\xad");
	/* U+F900 is split out; stripping (NFD) maps it to U+8C48 */
	BOTH(0, -1, "x\xef\xa4\x80", "x \xef\xa4\x80");
	BOTH(1, -1, "x\xef\xa4\x80", "x \xe8\xb1\x88");
	BOTH(1, 0, "x\xef\xa4\x80", "x \xef\xa4\x80");
	/* Ext B (U+20000) is split out, and is not in the vocab */
	BOTH(1, -1, "x\xf0\xa0\x80\x80y", "x [UNK] y");
	/* U+FAFF is unassigned but in a CJK range: BERT splits it out, ELECTRA deletes it */
	TOK_IS(0, -1, WP_RULES_BERT, "a\xef\xab\xbf" "b", "a [UNK] b");
	TOK_IS(0, -1, WP_RULES_ELECTRA, "a\xef\xab\xbf" "b", "ab");
	TOK_IS(1, -1, WP_RULES_BERT, "a\xef\xab\xbf" "b", "a [UNK] b");
	/* Ext F (U+2CEB0) is not: it stays inside the word */
	BOTH(1, -1, "x\xf0\xac\xba\xb0y", "[UNK]");
}

static void
test_punct(void)
{
	int ok;
	uint32_t c;

	ok = 1;
	for (c = 0; c < 128; c++) {
		int want = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) ||
		    (c >= 91 && c <= 96) || (c >= 123 && c <= 126);

		ok &= wp_is_punct(c) == want;
	}
	TEST(ok, "ASCII punctuation is exactly 33-47, 58-64, 91-96, 123-126");
	TEST(wp_is_punct('$') && wp_is_punct('+') && wp_is_punct('^') &&
	    wp_is_punct('`') && wp_is_punct('<') && wp_is_punct('|') &&
	    wp_is_punct('~'), "$ + ^ ` < | ~ (Sc, Sm, Sk) are punctuation by the ASCII rule");
	TEST(!wp_is_punct(0xa5) && !wp_is_punct(0x20ac) && !wp_is_punct(0xa9) &&
	    !wp_is_punct(0xd7) && !wp_is_punct(0x1f600),
	    "¥ € © × and emoji (S*) are not punctuation");
	TEST(wp_is_punct(0x2013) && wp_is_punct(0xbf) && wp_is_punct(0xab) &&
	    wp_is_punct(0xbb) && wp_is_punct(0x3001) && wp_is_punct(0xff0c) &&
	    wp_is_punct(0x203f), "– ¿ « » 、 ， ‿ (P*) are punctuation");

	BOTH(0, -1, "$5+^x`y", "$ 5 + ^ x ` y");
	BOTH(0, -1, "\xc2\xa5" "100", "\xc2\xa5 ##100");
	BOTH(0, -1, "a\xe2\x80\x93" "b", "a \xe2\x80\x93 b");
	BOTH(0, -1, "\xc2\xbf" "a_b|x~y=b", "\xc2\xbf a _ b | x ~ y = b");
	BOTH(0, -1, "\xc2\xab" "ab\xc2\xbb", "\xc2\xab ab \xc2\xbb");
	BOTH(0, -1, "a\xc2\xa9", "[UNK]");	/* © joins the word */
	BOTH(0, -1, "\xc2\xa9 \xc3\x97", "\xc2\xa9 \xc3\x97");
}

static void
test_control(void)
{
	/* Cf removed under both rule sets */
	BOTH(0, -1, "a\xe2\x80\x8b" "b", "ab");		/* U+200B ZWSP */
	BOTH(0, -1, "a\xc2\xad" "b", "ab");		/* U+00AD soft hyphen */
	BOTH(0, -1, "a\xef\xbb\xbf" "b", "ab");		/* U+FEFF */
	BOTH(0, -1, "a\xe1\xa0\x8e" "b", "ab");		/* U+180E is Cf in Unicode 14 */
	BOTH(0, -1, "a\xe2\x80\x8d" "b", "ab");		/* ZWJ */
	/* Cc removed: NUL, VT, FF, U+0085 and U+001C join the halves */
	BOTH(0, -1, "a\x0b" "b\x0c" "a", "ab ##a");	/* "aba" */
	BOTH(0, -1, "a\xc2\x85" "b", "ab");
	BOTH(0, -1, "a\x1c" "b", "ab");
	BOTH(0, -1, "a\xef\xbf\xbd" "b", "ab");		/* U+FFFD */
	/* whitespace: tab, LF, CR, Zs; U+2028/2029 survive cleaning but split */
	BOTH(0, -1, "a\tb\nb\ra", "a b b a");
	BOTH(0, -1, "a\xc2\xa0" "b\xe3\x80\x80" "a\xe2\x80\xaf" "b", "a b a b");
	BOTH(0, -1, "a\xe2\x80\xa8" "b\xe2\x80\xa9" "a", "a b a");
	/* Co, Cn: kept by BERT (the word is then unknown), removed by ELECTRA */
	TOK_IS(0, -1, WP_RULES_BERT, "a\xee\x80\x80" "b", "[UNK]");
	TOK_IS(0, -1, WP_RULES_ELECTRA, "a\xee\x80\x80" "b", "ab");
	TOK_IS(0, -1, WP_RULES_BERT, "a\xcd\xb8" "b", "[UNK]");		/* U+0378 */
	TOK_IS(0, -1, WP_RULES_ELECTRA, "a\xcd\xb8" "b", "ab");
	TOK_IS(0, -1, WP_RULES_BERT, "a\xef\xbf\xbe" "b", "[UNK]");	/* U+FFFE */
	TOK_IS(0, -1, WP_RULES_ELECTRA, "a\xef\xbf\xbe" "b", "ab");
	TOK_IS(0, -1, WP_RULES_ELECTRA, "a\xf3\xb0\x80\x80" "b", "ab");	/* U+F0000 */
	/* emoji are So: kept by both, glued to the word */
	BOTH(0, -1, "a\xf0\x9f\x98\x80" "b", "[UNK]");
	/* a NUL inside the byte string is one more control character */
	{
		const char *got = tokens_n(toy, 0, -1, WP_RULES_BERT, "a\0b", 3);

		TEST(strcmp(got, "ab") == 0, "embedded NUL byte dropped (%s)", got);
	}
}

static void
test_length(void)
{
	char buf[1024], want[2048];
	size_t i, n;

	/* 200 code points: pieces; 201: [UNK] */
	memset(buf, 'a', 200);
	buf[200] = '\0';
	n = (size_t)snprintf(want, sizeof want, "a");
	for (i = 1; i < 200; i++)
		n += (size_t)snprintf(want + n, sizeof want - n, " ##a");
	BOTH(0, -1, buf, want);
	buf[200] = 'a';
	buf[201] = '\0';
	BOTH(0, -1, buf, "[UNK]");
	/* the limit applies per word, after the punctuation split */
	memset(buf, 'a', 150);
	buf[150] = '.';
	memset(buf + 151, 'b', 150);
	buf[301] = '\0';
	{
		const char *got = tokens(toy, 0, -1, WP_RULES_BERT, buf);

		TEST(strncmp(got, "a ##a", 5) == 0 && strstr(got, " . b ##b") != NULL &&
		    strstr(got, "[UNK]") == NULL, "two words of 150 around '.'");
	}
	/* and in code points after lower(): 100 x U+0130 -> 200, 101 -> 202 */
	for (i = 0; i < 101; i++)
		memcpy(buf + 2 * i, "\xc4\xb0", 2);
	buf[200] = '\0';
	n = 0;
	for (i = 0; i < 100; i++)
		n += (size_t)snprintf(want + n, sizeof want - n, "%s##\xcc\x87",
		    i ? " ##i " : "i ");
	TOK_IS(1, 0, WP_RULES_ELECTRA, buf, want);
	buf[200] = '\xc4';
	buf[202] = '\0';
	TOK_IS(1, 0, WP_RULES_ELECTRA, buf, "[UNK]");
	/* stripped, 101 x U+0130 is 101 code points: not unknown */
	{
		const char *got = tokens(toy, 1, -1, WP_RULES_BERT, buf);

		TEST(strncmp(got, "i ##i", 5) == 0 && strstr(got, "[UNK]") == NULL,
		    "101 x U+0130 lowered and stripped: 101 pieces");
	}
	/* a long line of short words */
	n = 0;
	for (i = 0; i < 300; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "a ");
	{
		const char *got = tokens(toy, 0, -1, WP_RULES_BERT, buf);

		TEST(strlen(got) == 599, "300 words give 300 pieces");
	}
}

static void
test_errors(void)
{
	struct wp_opts o = WP_OPTS_INIT;
	struct wp_tok *t = wp_tok_new(toy, &o);
	int64_t *ids = NULL;
	size_t cap = 0;
	long n;
	char err[WP_ERRMAX];
	struct wp_vocab *nounk;

	errno = ENOMEM;
	n = wp_encode(t, (const uint8_t *)"ab\xff" "cd", 5, &ids, &cap);
	TEST(n == -1 && errno == EILSEQ && wp_error_offset(t) == 2 &&
	    strcmp(wp_strerror(t), "invalid UTF-8 at byte offset 2") == 0,
	    "invalid byte: offset 2");
	n = wp_encode(t, (const uint8_t *)"a b \xe4\xb8", 6, &ids, &cap);
	TEST(n == -1 && wp_error_offset(t) == 4, "truncated sequence at the end");
	n = wp_encode(t, (const uint8_t *)"\xc0\x80", 2, &ids, &cap);
	TEST(n == -1 && wp_error_offset(t) == 0, "overlong NUL");
	n = wp_encode(t, (const uint8_t *)"x\xed\xa0\x80", 4, &ids, &cap);
	TEST(n == -1 && wp_error_offset(t) == 1, "surrogate");
	n = wp_encode(t, (const uint8_t *)"hello", 5, &ids, &cap);
	TEST(n == 1 && ids[0] == 8, "the tokenizer works after an error");
	wp_tok_free(t);

	o.ignore_invalid = 1;
	t = wp_tok_new(toy, &o);
	n = wp_encode(t, (const uint8_t *)"a\xff" "b \xe4\xb8" "a\xed\xa0\x80" "b\xf0\x9f", 13, &ids, &cap);
	TEST(n == 2 && ids[0] == 47 && ids[1] == 47,
	    "ignore_invalid drops bad bytes as decode(errors=\"ignore\")");
	wp_tok_free(t);

	nounk = parse("a\n##b\n", err);
	o.ignore_invalid = 0;
	t = wp_tok_new(nounk, &o);
	n = wp_encode(t, (const uint8_t *)"ab a", 4, &ids, &cap);
	TEST(n == 3, "no [UNK] needed, no error");
	n = wp_encode(t, (const uint8_t *)"ab c", 4, &ids, &cap);
	TEST(n == -1 && errno == EINVAL && strstr(wp_strerror(t), "[UNK]") != NULL,
	    "a word needing [UNK] with a vocab without it is an error");
	wp_tok_free(t);
	wp_vocab_free(nounk);
	free(ids);
}

static void
test_decode(void)
{
	static const int64_t a[] = { 2, 8, 5, 6, 7, 10, 9, 11, 3 };
	static const int64_t b[] = { 6, 5 };
	static const int64_t c[] = { 8, 68 };
	char *out = NULL, err[WP_ERRMAX];
	size_t cap = 0;
	long n;

	n = wp_decode(toy, a, 9, &out, &cap, err, sizeof err);
	TEST(n >= 0 && strcmp(out, "[CLS] hello unaffable , world ! [SEP]") == 0,
	    "decode joins words and glues ## pieces");
	n = wp_decode(toy, b, 2, &out, &cap, err, sizeof err);
	TEST(n >= 0 && strcmp(out, "##aff un") == 0, "a first ## piece keeps its ##");
	n = wp_decode(toy, b, 0, &out, &cap, err, sizeof err);
	TEST(n == 0 && strcmp(out, "") == 0, "no ids: empty text");
	n = wp_decode(toy, c, 2, &out, &cap, err, sizeof err);
	TEST(n == -1 && strcmp(err, "id 68 out of range (vocab has 68 entries)") == 0,
	    "out-of-range id is an error");
	free(out);
}

/* ---------------------------------------------------------------- */
/* The real vocabularies.                                           */

static char vocab_dir[4096];

static int
find_vocabs(void)
{
	const char *e = getenv("RECPIPE_WORDPIECE_VOCABS");
	static const char *const cand[] = {
		"../shared/wordpiece-vocabs", "../../shared/wordpiece-vocabs",
	};
	char p[4200];
	size_t i;

	if (e != NULL && *e != '\0') {
		snprintf(vocab_dir, sizeof vocab_dir, "%s", e);
		snprintf(p, sizeof p, "%s/bert-base-uncased-vocab.txt", vocab_dir);
		return access(p, R_OK) == 0;
	}
	for (i = 0; i < sizeof cand / sizeof cand[0]; i++) {
		snprintf(p, sizeof p, "%s/bert-base-uncased-vocab.txt", cand[i]);
		if (access(p, R_OK) == 0) {
			snprintf(vocab_dir, sizeof vocab_dir, "%s", cand[i]);
			return 1;
		}
	}
	return 0;
}

static void
ids_are(struct wp_vocab *v, int lower, enum wp_rules rules, const char *in,
    const int64_t *want, size_t nwant, const char *desc)
{
	struct wp_opts o = WP_OPTS_INIT;
	struct wp_tok *t;
	int64_t *ids = NULL;
	size_t cap = 0;
	long n;

	o.lower = lower;
	o.rules = rules;
	t = wp_tok_new(v, &o);
	n = wp_encode(t, (const uint8_t *)in, strlen(in), &ids, &cap);
	TEST(n == (long)nwant && memcmp(ids, want, nwant * sizeof *want) == 0,
	    "%s", desc);
	if (n != (long)nwant || memcmp(ids, want, nwant * sizeof *want) != 0) {
		long i;

		printf("#   got");
		for (i = 0; i < n; i++)
			printf(" %lld", (long long)ids[i]);
		printf("\n");
	}
	free(ids);
	wp_tok_free(t);
}

#define IDS(v, lower, rules, in, desc, ...) do {			\
	static const int64_t w_[] = { __VA_ARGS__ };			\
	ids_are(v, lower, rules, in, w_, sizeof w_ / sizeof w_[0], desc); \
} while (0)

static void
test_real(void)
{
	char p[4200], err[WP_ERRMAX];
	struct wp_vocab *u, *z;

	if (!find_vocabs()) {
		int i;

		for (i = 0; i < 16; i++) {
			tap_n++;
			printf("ok %d # skip ../shared/wordpiece-vocabs absent\n", tap_n);
		}
		return;
	}
	snprintf(p, sizeof p, "%s/bert-base-uncased-vocab.txt", vocab_dir);
	u = wp_vocab_load(p, err, sizeof err);
	TEST(u != NULL, "bert-base-uncased loads (%s)", u ? "ok" : err);
	snprintf(p, sizeof p, "%s/bert-base-chinese-vocab.txt", vocab_dir);
	z = wp_vocab_load(p, err, sizeof err);
	TEST(z != NULL, "bert-base-chinese loads (%s)", z ? "ok" : err);
	if (u == NULL || z == NULL) {
		wp_vocab_free(u);
		wp_vocab_free(z);
		return;
	}
	TEST_INT(wp_vocab_size(u), ==, 30522, "uncased: 30522 entries");
	TEST_INT(wp_vocab_size(z), ==, 21128, "chinese: 21128 entries");
	TEST(wp_special_id(u, WP_PAD) == 0 && wp_special_id(u, WP_UNK) == 100 &&
	    wp_special_id(u, WP_CLS) == 101 && wp_special_id(u, WP_SEP) == 102 &&
	    wp_special_id(u, WP_MASK) == 103, "uncased special ids 0 100 101 102 103");
	TEST(wp_special_id(z, WP_PAD) == 0 && wp_special_id(z, WP_UNK) == 100 &&
	    wp_special_id(z, WP_CLS) == 101 && wp_special_id(z, WP_SEP) == 102 &&
	    wp_special_id(z, WP_MASK) == 103, "chinese special ids 0 100 101 102 103");

	IDS(u, 1, WP_RULES_BERT, "Hello, World!", "uncased: Hello, World!",
	    7592, 1010, 2088, 999);
	IDS(u, 1, WP_RULES_BERT, "unaffable", "uncased: unaffable = una ##ffa ##ble",
	    14477, 20961, 3468);
	IDS(u, 1, WP_RULES_BERT, "Caf\xc3\xa9 na\xc3\xafve", "uncased: accents stripped",
	    7668, 15743);
	IDS(u, 0, WP_RULES_BERT, "Hello", "uncased vocab, no lower: Hello is [UNK]", 100);
	IDS(u, 1, WP_RULES_BERT, "\xed\x95\x9c\xea\xb5\xad",
	    "uncased: 한국 under NFD = jamo pieces",
	    1469, 30006, 30021, 29991, 30014, 30020);
	IDS(u, 1, WP_RULES_BERT, "\xce\x9f\xce\x94\xce\x9f\xce\xa3",
	    "uncased: ΟΔΟΣ = ο ##δ ##ος (final sigma)", 1169, 29722, 15297);
	IDS(u, 1, WP_RULES_BERT, "[MASK] $5", "uncased: [MASK] is text; $ splits",
	    1031, 7308, 1033, 1002, 1019);
	IDS(z, 1, WP_RULES_BERT, "\xe4\xb8\xad\xe6\x96\x87hello",
	    "chinese: 中文hello", 704, 3152, 8701);
	IDS(z, 0, WP_RULES_ELECTRA, "\xe4\xb8\xad\xe2\x80\x8b\xe6\x96\x87",
	    "chinese: ZWSP between ideographs removed", 704, 3152);
	IDS(z, 1, WP_RULES_BERT, "\xed\x95\x9c",
	    "chinese: 한 under NFD", 303, 10928, 9877);
	wp_vocab_free(u);
	wp_vocab_free(z);
}

int
main(void)
{
	char err[WP_ERRMAX];

	toy = wp_vocab_parse((const uint8_t *)toy_vocab, sizeof toy_vocab - 1,
	    err, sizeof err);
	TEST(toy != NULL, "toy vocab parses");
	if (toy == NULL)
		return tap_done();
	test_vocab_loading();
	test_basic();
	test_accents();
	test_sigma();
	test_cjk();
	test_punct();
	test_control();
	test_length();
	test_errors();
	test_decode();
	test_real();
	wp_vocab_free(toy);
	return tap_done();
}
