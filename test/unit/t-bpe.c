/*
 * Unit tests of lib/bpe.c: the encodings, both readers on good and
 * malformed files, the merge (lowest rank, leftmost on ties, the whole
 * piece first) against a reference written here, the heap path of long
 * pieces, special tokens, decoding, and the cache.  The real rank files
 * of ../shared/vectors/bpe/vocab and the text of ../shared/corpus are
 * used when present, and skipped otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"
#include "buf.h"
#include "errmsg.h"
#include "exjson.h"
#include "tap.h"
#include "unicode.h"

static const char *shared_dirs[] = { "../shared", "../../shared" };

/* ------------------------------------------------------------------ */
/* Crafted tables */

/*
 * A tiktoken file: the 256 bytes at ranks 0..255, then the given
 * tokens at 256, 257, ... (NULL ends the list).
 */
static void
tt_file(struct buf *b, const char *const *toks)
{
	char line[256];
	uint8_t byte;
	size_t i;
	char *e;

	b->len = 0;
	for (i = 0; i < 256; i++) {
		byte = (uint8_t)i;
		e = exjson_base64(&byte, 1, line);
		rp_buf_append(b, line, (size_t)(e - line));
		snprintf(line, sizeof line, " %zu\n", i);
		rp_buf_puts(b, line);
	}
	for (i = 0; toks && toks[i]; i++) {
		e = exjson_base64((const uint8_t *)toks[i], strlen(toks[i]), line);
		rp_buf_append(b, line, (size_t)(e - line));
		snprintf(line, sizeof line, " %zu\n", 256 + i);
		rp_buf_puts(b, line);
	}
}

static struct bpe_model *
tt_model(const char *const *toks, enum bpe_encoding enc)
{
	struct buf b = { 0 };
	struct bpe_model *m;
	char err[RP_ERRMAX];

	tt_file(&b, toks);
	m = bpe_parse_tiktoken(b.p, b.len, enc, err, sizeof err);
	if (m == NULL)
		printf("# %s\n", err);
	rp_buf_free(&b);
	return m;
}

/* The ids of s as one string "1 2 3" (static). */
static const char *
enc_str(struct bpe_enc *e, const char *s)
{
	static char out[4096];
	const uint32_t *ids;
	size_t o = 0;
	long i, k;

	k = bpe_encode(e, (const uint8_t *)s, strlen(s));
	ids = bpe_ids(e);
	out[0] = '\0';
	for (i = 0; i < k && o + 16 < sizeof out; i++)
		o += (size_t)snprintf(out + o, sizeof out - o, i ? " %u" : "%u", ids[i]);
	return out;
}

#define TEST_STR(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	TEST(g_ != NULL && strcmp(g_, w_) == 0, __VA_ARGS__);		\
	if (g_ == NULL || strcmp(g_, w_) != 0)				\
		printf("#   got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)", w_); \
} while (0)

static void
test_encodings(void)
{
	static const char *names[] = { "gpt2", "r50k_base", "p50k_base",
	    "p50k_edit", "cl100k_base", "o200k_base" };
	size_t i;

	for (i = 0; i < 6; i++) {
		TEST_INT(bpe_encoding_by_name(names[i]), ==, i, "%s by name", names[i]);
		TEST_STR(bpe_encoding_name((enum bpe_encoding)i), names[i], "name of %zu", i);
	}
	TEST_INT(bpe_encoding_by_name("cl100k"), ==, -1, "an unknown name is -1");
	TEST(bpe_encoding_pattern(BPE_P50K_EDIT) == PRETOK_GPT2 &&
	    bpe_encoding_pattern(BPE_R50K) == PRETOK_GPT2 &&
	    bpe_encoding_pattern(BPE_CL100K) == PRETOK_CL100K &&
	    bpe_encoding_pattern(BPE_O200K) == PRETOK_O200K, "patterns");
}

/* The special tokens of each encoding, on a table of the 256 bytes. */
static void
test_specials_of(void)
{
	static const struct {
		enum bpe_encoding enc;
		size_t size;
		uint32_t eot;
		const char *text[6];
		uint32_t id[6];
	} t[] = {
		{ BPE_GPT2, 50257, 50256, { "<|endoftext|>" }, { 50256 } },
		{ BPE_R50K, 50257, 50256, { "<|endoftext|>" }, { 50256 } },
		{ BPE_P50K, 50257, 50256, { "<|endoftext|>" }, { 50256 } },
		{ BPE_P50K_EDIT, 50284, 50256, { "<|endoftext|>", "<|fim_prefix|>",
		    "<|fim_middle|>", "<|fim_suffix|>" }, { 50256, 50281, 50282, 50283 } },
		{ BPE_CL100K, 100277, 100257, { "<|endoftext|>", "<|fim_prefix|>",
		    "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>" },
		    { 100257, 100258, 100259, 100260, 100276 } },
		{ BPE_O200K, 200019, 199999, { "<|endoftext|>", "<|endofprompt|>" },
		    { 199999, 200018 } },
	};
	size_t i, j, len;
	const uint8_t *p;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct bpe_model *m = tt_model(NULL, t[i].enc);
		struct bpe_enc *e;
		char want[64];

		if (m == NULL) {
			TEST(0, "%s: loads", bpe_encoding_name(t[i].enc));
			continue;
		}
		TEST_INT(bpe_size(m), ==, t[i].size, "%s: size", bpe_encoding_name(t[i].enc));
		TEST_INT(bpe_eot_id(m), ==, t[i].eot, "%s: <|endoftext|>", bpe_encoding_name(t[i].enc));
		e = bpe_enc_new(m);
		bpe_enc_allow_special(e, 1);
		for (j = 0; j < 6 && t[i].text[j]; j++) {
			p = bpe_token(m, t[i].id[j], &len);
			TEST(p && len == strlen(t[i].text[j]) && memcmp(p, t[i].text[j], len) == 0,
			    "%s: %s is %u", bpe_encoding_name(t[i].enc), t[i].text[j], t[i].id[j]);
			TEST_STR(bpe_piece(m, t[i].id[j], NULL), t[i].text[j], "its piece is its text");
			snprintf(want, sizeof want, "%u", t[i].id[j]);
			TEST_STR(enc_str(e, t[i].text[j]), want, "it encodes to its id when allowed");
		}
		TEST(bpe_token(m, t[i].id[0] - 1, &len) == NULL, "no token below <|endoftext|>");
		bpe_enc_free(e);
		bpe_model_free(m);
	}
}

/* ------------------------------------------------------------------ */
/* The merge against a reference */

/* A rank table of the test's own: token strings, rank = 256 + index. */
struct ref {
	const char *const *toks;
	size_t n;
};

static uint32_t
ref_rank(const struct ref *r, const char *p, size_t n)
{
	size_t i;

	if (n == 1)
		return (uint8_t)p[0];
	for (i = 0; i < r->n; i++)
		if (strlen(r->toks[i]) == n && memcmp(r->toks[i], p, n) == 0)
			return (uint32_t)(256 + i);
	return UINT32_MAX;
}

/* tiktoken's merge, quadratic: ids of p[0..n) into out; returns the count. */
static size_t
ref_encode(const struct ref *r, const char *p, size_t n, uint32_t *out)
{
	size_t *pos = malloc((n + 1) * sizeof(*pos)), k = n, i, bi;
	uint32_t best, rk;

	if ((rk = ref_rank(r, p, n)) != UINT32_MAX) {
		out[0] = rk;
		free(pos);
		return 1;
	}
	for (i = 0; i <= n; i++)
		pos[i] = i;
	for (;;) {
		best = UINT32_MAX;
		bi = 0;
		for (i = 0; i + 1 < k; i++) {
			rk = ref_rank(r, p + pos[i], pos[i + 2] - pos[i]);
			if (rk < best) {
				best = rk;
				bi = i;
			}
		}
		if (best == UINT32_MAX)
			break;
		memmove(pos + bi + 1, pos + bi + 2, (k - bi - 1) * sizeof(*pos));
		k--;
	}
	for (i = 0; i < k; i++)
		out[i] = ref_rank(r, p + pos[i], pos[i + 1] - pos[i]);
	free(pos);
	return k;
}

static void
test_merge_rules(void)
{
	/* 256 "bc", 257 "ab", 258 "aa", 259 "abcd" (not reachable), 260 "cd" */
	static const char *const toks[] = { "bc", "ab", "aa", "wxyz", "cd",
	    "xy", "bcd", NULL };
	struct bpe_model *m = tt_model(toks, BPE_GPT2);
	struct bpe_enc *e;

	if (m == NULL) {
		TEST(0, "the crafted table loads");
		return;
	}
	e = bpe_enc_new(m);
	TEST_STR(enc_str(e, "abc"), "97 256", "the lowest rank first: a + bc, not ab + c");
	TEST_STR(enc_str(e, "aaa"), "258 97", "equal ranks: the leftmost pair");
	TEST_STR(enc_str(e, "aaaa"), "258 258", "aa aa");
	TEST_STR(enc_str(e, "wxyz"), "259", "a whole piece that is a token is its rank");
	TEST_STR(enc_str(e, "wxyzw"), "119 261 122 119", "otherwise merged: w xy z w");
	TEST_STR(enc_str(e, "abcd"), "97 262", "merges go on from a merged part: a bc -> a bcd");
	TEST_STR(enc_str(e, "z"), "122", "one byte is its rank");
	TEST_STR(enc_str(e, ""), "", "no text, no ids");
	bpe_enc_free(e);
	bpe_model_free(m);
}

/*
 * Random pieces of 2..600 letters from {a, b, c} against the reference,
 * with and without the cache; pieces of 100 bytes or more go through
 * the heap.
 */
static void
test_merge_random(void)
{
	static const char *const toks[] = { "ab", "ba", "aa", "bc", "ca", "cc",
	    "aba", "abab", "bcc", "aab", "cab", "bb", "abc", "ccc", "babc",
	    "aaaa", "bcab", "ccca", "cca", "abcab", "ac", NULL };
	struct ref r = { toks, 0 };
	struct bpe_model *m = tt_model(toks, BPE_GPT2);
	struct bpe_enc *e, *nc;
	uint32_t *want = malloc(700 * sizeof(*want));
	char s[700];
	unsigned seed = 12345;
	int round, bad_short = 0, bad_long = 0, nlong = 0;
	size_t i, n, k;

	while (toks[r.n])
		r.n++;
	if (m == NULL) {
		TEST(0, "the crafted table loads");
		free(want);
		return;
	}
	e = bpe_enc_new(m);
	nc = bpe_enc_new(m);
	bpe_enc_no_cache(nc);
	for (round = 0; round < 600; round++) {
		seed = seed * 1103515245 + 12345;
		n = round < 400 ? 2 + (seed >> 16) % 40 : 100 + (seed >> 16) % 500;
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245 + 12345;
			s[i] = "aabbbc"[(seed >> 16) % (round % 3 ? 6 : 3)];
		}
		s[n] = '\0';
		k = ref_encode(&r, s, n, want);
		for (int c = 0; c < 2; c++) {
			struct bpe_enc *x = c ? nc : e;
			long got = bpe_encode(x, (const uint8_t *)s, n);

			if (got != (long)k || memcmp(bpe_ids(x), want, k * sizeof(*want)) != 0) {
				if (n < 100)
					bad_short++;
				else
					bad_long++;
			}
		}
		nlong += n >= 100;
	}
	TEST_INT(bad_short, ==, 0, "400 pieces of 2..41 bytes: the reference's ids");
	TEST_INT(bad_long, ==, 0, "%d pieces of 100..599 bytes (the heap): the reference's ids", nlong);
	/* The same long piece twice: the second from the same scratch. */
	memset(s, 'a', 699);
	s[699] = '\0';
	k = ref_encode(&r, s, 699, want);
	TEST(bpe_encode(e, (const uint8_t *)s, 699) == (long)k &&
	    memcmp(bpe_ids(e), want, k * sizeof(*want)) == 0, "699 a's: aaaa ... aaa");
	bpe_enc_free(e);
	bpe_enc_free(nc);
	bpe_model_free(m);
	free(want);
}

/* ------------------------------------------------------------------ */
/* Special tokens, decoding, pieces */

static void
test_special_text(void)
{
	static const char *const toks[] = { "  ", " b", NULL };
	struct bpe_model *m = tt_model(toks, BPE_P50K_EDIT);
	struct bpe_enc *e;

	if (m == NULL) {
		TEST(0, "loads");
		return;
	}
	e = bpe_enc_new(m);
	TEST_STR(enc_str(e, "a<|endoftext|>"), "97 60 124 101 110 100 111 102 116 101 120 116 124 62",
	    "not allowed: the text of a special token is text");
	TEST_STR(enc_str(e, "a  x"), "97 32 32 120", "a run of spaces before a word leaves it its last");
	bpe_enc_allow_special(e, 1);
	TEST_STR(enc_str(e, "a<|endoftext|>b"), "97 50256 98", "allowed: its id between the segments");
	TEST_STR(enc_str(e, "<|fim_suffix|><|endoftext|><|fim_prefix|>"), "50283 50256 50281",
	    "three in a row");
	TEST_STR(enc_str(e, "<|endoftext|"), "60 124 101 110 100 111 102 116 101 120 116 124",
	    "a prefix of one is text");
	TEST_STR(enc_str(e, "<<|endoftext|>"), "60 50256", "found after a '<'");
	TEST_STR(enc_str(e, "a  <|endoftext|>  b"), "97 256 50256 32 257",
	    "each segment split on its own: the spaces before it stay whole");
	bpe_enc_allow_special(e, 0);
	TEST_STR(enc_str(e, "a<|fim_middle|>"), "97 60 124 102 105 109 95 109 105 100 100 108 101 124 62",
	    "turned off again");
	bpe_enc_free(e);
	bpe_model_free(m);
}

static void
test_decode_and_pieces(void)
{
	static const char *const toks[] = { " t", "he", " the", "\n\n", NULL };
	struct bpe_model *m = tt_model(toks, BPE_CL100K);
	struct buf out = { 0 };
	int64_t ids[] = { 258, 100257, 104, 0xC3, 0xA9, 259 };
	size_t len, bad = 99;
	const uint8_t *p;

	if (m == NULL) {
		TEST(0, "loads");
		return;
	}
	TEST(bpe_decode(m, ids, 6, &out, &bad) == 0 && out.len == 22 &&
	    memcmp(out.p, " the<|endoftext|>h\xc3\xa9\n\n", 22) == 0,
	    "decode: tokens, a special token, bytes that make UTF-8 together");
	ids[2] = 100256;
	out.len = 0;
	TEST(bpe_decode(m, ids, 6, &out, &bad) == -1 && bad == 2, "decode: an id without a token is at index 2");
	ids[2] = -1;
	TEST(bpe_decode(m, ids, 6, &out, &bad) == -1 && bad == 2, "decode: -1");
	ids[2] = (int64_t)1 << 32 | 104;
	TEST(bpe_decode(m, ids, 6, &out, &bad) == -1 && bad == 2, "decode: 2^32 + 104 is not 104");
	rp_buf_free(&out);
	p = bpe_token(m, 258, &len);
	TEST(p && len == 4 && memcmp(p, " the", 4) == 0, "bpe_token");
	TEST(bpe_token(m, 100277, &len) == NULL && bpe_token(m, 100261, &len) == NULL &&
	    bpe_token(m, 260, &len) == NULL, "no token past the end, in the gap, between ranks and specials");
	TEST_STR(bpe_piece(m, 258, &len), "\xc4\xa0the", "piece: a space is U+0120");
	TEST_INT(len, ==, 5, "its length");
	TEST_STR(bpe_piece(m, 259, NULL), "\xc4\x8a\xc4\x8a", "piece: newlines are U+010A");
	TEST_STR(bpe_piece(m, 0, NULL), "\xc4\x80", "piece: byte 0 is U+0100");
	TEST_STR(bpe_piece(m, 0xAD, NULL), "\xc5\x83", "piece: byte 0xAD is U+0143");
	TEST_STR(bpe_piece(m, 0xE9, NULL), "\xc3\xa9", "piece: byte 0xE9 is U+00E9");
	TEST_STR(bpe_piece(m, 0x7F, NULL), "\xc4\xa1", "piece: byte 0x7F is U+0121");
	TEST(bpe_piece(m, 100256, NULL) == NULL && bpe_piece(m, -5, NULL) == NULL, "piece: none for a gap");
	bpe_model_free(m);
}

/* ------------------------------------------------------------------ */
/* Malformed tiktoken files */

static void
tt_bad(const char *tail, enum bpe_encoding enc, const char *want, const char *what)
{
	struct buf b = { 0 };
	struct bpe_model *m;
	char err[RP_ERRMAX] = "";

	tt_file(&b, NULL);
	rp_buf_puts(&b, tail);
	m = bpe_parse_tiktoken(b.p, b.len, enc, err, sizeof err);
	TEST(m == NULL && strstr(err, want) != NULL, "tiktoken: %s", what);
	if (m != NULL || strstr(err, want) == NULL)
		printf("#   got \"%s\", want \"%s\"\n", err, want);
	bpe_model_free(m);
	rp_buf_free(&b);
}

static void
test_tiktoken_reader(void)
{
	struct buf b = { 0 };
	struct bpe_model *m;
	char err[RP_ERRMAX];
	size_t len;
	const uint8_t *p;

	tt_bad("YWI=\n", BPE_GPT2, "line 257: not two fields", "a token without rank");
	tt_bad("YWI= 256 7\n", BPE_GPT2, "line 257: not two fields", "three fields");
	tt_bad("YW= 256\n", BPE_GPT2, "line 257: the token is not padded standard base64", "bad padding");
	tt_bad("YWI 256\n", BPE_GPT2, "line 257: the token is not padded standard base64", "no padding");
	tt_bad("YW-_ 256\n", BPE_GPT2, "line 257: the token is not padded standard base64", "URL-safe base64");
	tt_bad("Y?I= 256\n", BPE_GPT2, "line 257: the token is not padded standard base64", "a stray character");
	tt_bad("YWI= 25x\n", BPE_GPT2, "line 257: the rank is not a decimal number", "a rank with a letter");
	tt_bad("YWI= -1\n", BPE_GPT2, "line 257: the rank is not a decimal number", "a negative rank");
	tt_bad("YWI= 99999999999999999999999\n", BPE_GPT2, "line 257: rank 99999999999999999999999 is too large",
	    "a rank of 23 digits");
	tt_bad("YWI= 1048576\n", BPE_GPT2, "line 257: rank 1048576 is too large (the file's size or 2^20 at most)",
	    "a rank beyond 2^20 and the file's size");
	tt_bad("YWI= 5\n", BPE_GPT2, "line 257: rank 5 again (line 6 has it)", "a rank twice");
	tt_bad("YWI= 256\nYWI= 257\n", BPE_GPT2, "line 258: the token of line 257 again", "a token twice");
	tt_bad("YWI= 256\n\nYWI= 257\n", BPE_GPT2, "line 259: the token of line 257 again", "empty lines count");
	tt_bad("YWI= 256\r\nYWI= 257\n", BPE_GPT2, "line 258:", "\\r\\n ends a line");
	tt_bad("YWI= 256\rYWJj 257 1\n", BPE_GPT2, "line 258: not two fields", "\\r ends a line");
	tt_bad("YWI= 50256\n", BPE_GPT2, "rank 50256 is the id of special token <|endoftext|>",
	    "a rank that is a special token's id");
	tt_bad("YWI= 100276\n", BPE_CL100K, "rank 100276 is the id of special token <|endofprompt|>",
	    "cl100k: <|endofprompt|>");

	/* A table without byte 0x41 */
	tt_file(&b, NULL);
	rp_buf_putc(&b, '\0');
	memcpy(strstr((char *)b.p, "\nQQ== 65\n") + 1, "YWJj", 4);
	b.len--;
	m = bpe_parse_tiktoken(b.p, b.len, BPE_GPT2, err, sizeof err);
	TEST(m == NULL && strcmp(err, "byte 0x41 has no rank") == 0, "tiktoken: every byte needs a rank");
	bpe_model_free(m);

	/* Good: empty lines, \r\n, tabs, spaces, no final newline, a gap. */
	tt_file(&b, NULL);
	rp_buf_puts(&b, "\n\r\nYWI=\t 300 \r\n\n  YWJj   301");
	m = bpe_parse_tiktoken(b.p, b.len, BPE_GPT2, err, sizeof err);
	TEST(m != NULL, "tiktoken: empty lines, CRLF, tabs and runs of spaces, no last newline");
	if (m) {
		TEST(bpe_size(m) == 50257 && (p = bpe_token(m, 301, &len)) && len == 3 &&
		    memcmp(p, "abc", 3) == 0 && bpe_token(m, 299, &len) == NULL, "ranks 300, 301; 299 is a gap");
		bpe_model_free(m);
	} else {
		printf("#   %s\n", err);
	}
	m = bpe_parse_tiktoken((const uint8_t *)"", 0, BPE_GPT2,
	    err, sizeof err);
	TEST(m == NULL && strcmp(err, "byte 0x00 has no rank") == 0, "tiktoken: an empty file");
	bpe_model_free(m);
	m = bpe_load_tiktoken("/nonexistent/x.tiktoken", BPE_GPT2,
	    err, sizeof err);
	TEST(m == NULL && strcmp(err, "No such file or directory") == 0, "tiktoken: a missing file");
	rp_buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* GPT-2's files */

/* encoder.json's spelling of a byte string, appended to b (JSON-escaped). */
static void
gym(struct buf *b, const char *s)
{
	uint8_t u[4];
	unsigned c, n, i;

	for (; *s; s++) {
		c = (uint8_t)*s;
		if ((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae) {
			if (c == '"' || c == '\\')
				rp_buf_putc(b, '\\');
			rp_buf_append(b, u, (size_t)uni_utf8_encode(c, u));
			continue;
		}
		for (i = n = 0; i < c; i++)
			n += !((i >= 0x21 && i <= 0x7e) || (i >= 0xa1 && i <= 0xac) || i >= 0xae);
		rp_buf_append(b, u, (size_t)uni_utf8_encode(256 + n, u));
	}
}

/*
 * GPT-2 files: the 256 bytes in data gym order and then the merges
 * ("a b" pairs of byte strings) in encoder.json with ids in order;
 * <|endoftext|> last.  'idfix' changes the id of json entry k to v.
 */
static void
gpt2_files(struct buf *j, struct buf *v, const char *const *merges, long fixk, long fixv)
{
	char num[64], tmp[64];
	long id = 0;
	size_t i, pass;
	const char *sp;

	j->len = v->len = 0;
	rp_buf_puts(j, "{");
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < 256; i++) {
			int self = (i >= 0x21 && i <= 0x7e) || (i >= 0xa1 && i <= 0xac) || i >= 0xae;

			if (self != (pass == 0))
				continue;
			tmp[0] = (char)i;
			tmp[1] = '\0';
			rp_buf_puts(j, "\"");
			if (i == 0) {
				rp_buf_puts(j, "\xc4\x80");
			} else {
				gym(j, tmp);
			}
			snprintf(num, sizeof num, "\": %ld, ", id == fixk ? fixv : id);
			rp_buf_puts(j, num);
			id++;
		}
	rp_buf_puts(v, "#version: 0.2\n");
	for (i = 0; merges && merges[i]; i++) {
		sp = strchr(merges[i], '|');
		memcpy(tmp, merges[i], (size_t)(sp - merges[i]));
		tmp[sp - merges[i]] = '\0';
		gym(v, tmp);
		rp_buf_putc(v, ' ');
		gym(v, sp + 1);
		rp_buf_putc(v, '\n');
		strcat(tmp, sp + 1);
		rp_buf_puts(j, "\"");
		gym(j, tmp);
		snprintf(num, sizeof num, "\": %ld, ", id == fixk ? fixv : id);
		rp_buf_puts(j, num);
		id++;
	}
	snprintf(num, sizeof num, "\"<|endoftext|>\": %ld}", id);
	rp_buf_puts(j, num);
}

static void
gpt2_bad(struct buf *j, struct buf *v, const char *want, const char *what)
{
	char err[RP_ERRMAX] = "";
	struct bpe_model *m = bpe_parse_gpt2(j->p, j->len, v->p, v->len,
	    err, sizeof err);

	TEST(m == NULL && strstr(err, want) != NULL, "gpt2: %s", what);
	if (m != NULL || strstr(err, want) == NULL)
		printf("#   got \"%s\", want \"%s\"\n", err, want);
	bpe_model_free(m);
}

static void
test_gpt2_reader(void)
{
	static const char *const merges[] = { " |t", "h|e", " t|he", "\n|\n", "a|b", NULL };
	struct buf j = { 0 }, v = { 0 };
	struct bpe_model *m, *t;
	struct bpe_enc *e;
	char err[RP_ERRMAX];
	size_t i, la, lb;
	const uint8_t *pa, *pb;
	int same;

	gpt2_files(&j, &v, merges, -1, 0);
	m = bpe_parse_gpt2(j.p, j.len, v.p, v.len, err, sizeof err);
	TEST(m != NULL, "gpt2: crafted files load");
	if (m == NULL) {
		printf("#   %s\n", err);
		goto out;
	}
	TEST_INT(bpe_size(m), ==, 262, "gpt2: 256 bytes, 5 merges, <|endoftext|>");
	TEST_INT(bpe_eot_id(m), ==, 261, "gpt2: <|endoftext|> from encoder.json");
	TEST_STR(bpe_piece(m, 258, NULL), "\xc4\xa0the", "gpt2: piece of merge 3");
	TEST_STR(bpe_piece(m, 0, NULL), "!", "gpt2: rank 0 is '!'");
	TEST_STR(bpe_piece(m, 188, NULL), "\xc4\x80", "gpt2: rank 188 is byte 0");
	e = bpe_enc_new(m);
	TEST_STR(enc_str(e, "the"), "83 257", "gpt2: 'the' is t + he");
	TEST_STR(enc_str(e, " the"), "258", "gpt2: ' the' is one token");
	bpe_enc_allow_special(e, 1);
	TEST_STR(enc_str(e, "ab<|endoftext|>"), "260 261", "gpt2: <|endoftext|> allowed");
	bpe_enc_free(e);
	/* The same ranks through a tiktoken file. */
	{
		static const char *const toks[] = { " t", "he", " the", "\n\n", "ab", NULL };
		struct buf b = { 0 };
		char line[64];
		uint8_t byte;
		size_t r = 0, pass;
		char *q;

		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < 256; i++) {
				int self = (i >= 0x21 && i <= 0x7e) || (i >= 0xa1 && i <= 0xac) || i >= 0xae;

				if (self != (pass == 0))
					continue;
				byte = (uint8_t)i;
				q = exjson_base64(&byte, 1, line);
				snprintf(q, sizeof line - (size_t)(q - line), " %zu\n", r++);
				rp_buf_puts(&b, line);
			}
		for (i = 0; toks[i]; i++) {
			q = exjson_base64((const uint8_t *)toks[i], strlen(toks[i]), line);
			snprintf(q, sizeof line - (size_t)(q - line), " %zu\n", r++);
			rp_buf_puts(&b, line);
		}
		t = bpe_parse_tiktoken(b.p, b.len, BPE_GPT2, err, sizeof err);
		rp_buf_free(&b);
		same = t != NULL && bpe_size(t) == 50257;
		for (i = 0; same && i < 261; i++) {
			pa = bpe_token(m, (int64_t)i, &la);
			pb = bpe_token(t, (int64_t)i, &lb);
			same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
		}
		TEST(same, "gpt2: the ranks equal the tiktoken file's");
		bpe_model_free(t);
	}
	bpe_model_free(m);

	/* The last piece of vocab.bpe is skipped, newline or not. */
	gpt2_files(&j, &v, merges, -1, 0);
	v.len--;	/* "a b" without its newline: not a merge */
	gpt2_bad(&j, &v, "encoder.json has \"ab\" (id 260), which vocab.bpe does not make",
	    "a last line without newline is no merge (split(\"\\n\")[1:-1])");
	gpt2_files(&j, &v, merges, 258, 300);
	gpt2_bad(&j, &v, "encoder.json gives \"\xc4\xa0the\" id 300, vocab.bpe rank 258", "a wrong id");
	gpt2_files(&j, &v, merges, 258, 257);
	gpt2_bad(&j, &v, "encoder.json gives \"\xc4\xa0the\" id 257, vocab.bpe rank 258", "an id twice");
	gpt2_files(&j, &v, merges, 2, 5);
	gpt2_bad(&j, &v, "encoder.json gives \"#\" id 5, vocab.bpe rank 2", "a byte's id");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c d\n");
	gpt2_bad(&j, &v, "encoder.json lacks \"cd\" (rank 261 from vocab.bpe)", "a merge missing from encoder.json");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c d e\n");
	gpt2_bad(&j, &v, "vocab.bpe line 7: not two fields", "three fields");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "\n\n");
	gpt2_bad(&j, &v, "vocab.bpe line 7: not two fields", "an empty merge line");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c \xc3\xa0\n");
	gpt2_bad(&j, &v, "encoder.json lacks \"c\xc3\xa0\" (rank 261", "U+00E0 is byte 0xE0 of the alphabet");
	/* Python's str.split(): any of its white space separates. */
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c\xe3\x80\x80\x1c d\r\n");
	gpt2_bad(&j, &v, "encoder.json lacks \"cd\" (rank 261", "U+3000, U+001C and \\r separate as in Python");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c \xc8\x80\n");
	gpt2_bad(&j, &v, "vocab.bpe line 7: U+0200 is not a byte of GPT-2's alphabet", "a character outside the alphabet");
	gpt2_files(&j, &v, merges, -1, 0);
	rp_buf_puts(&v, "c \xff\n");
	gpt2_bad(&j, &v, "vocab.bpe: not UTF-8 at byte", "not UTF-8");
	gpt2_files(&j, &v, merges, -1, 0);
	j.p[j.len - 1] = ',';
	gpt2_bad(&j, &v, "encoder.json: line 1 column", "a JSON syntax error");
	gpt2_bad(&(struct buf){ (uint8_t *)"[1]", 3, 3 }, &v, "encoder.json: not a JSON object", "a JSON list");
	gpt2_files(&j, &v, merges, -1, 0);
	memcpy(j.p + j.len - 5, "2.5}", 4);
	j.len--;
	gpt2_bad(&j, &v, "encoder.json: the id of \"<|endoftext|>\" is not an integer", "a fractional id");
	gpt2_files(&j, &v, merges, -1, 0);
	memcpy(j.p + j.len - 5, "260}", 4);
	j.len--;
	gpt2_bad(&j, &v, "rank 260 is the id of special token <|endoftext|>", "<|endoftext|> on a rank");
	gpt2_files(&j, &v, merges, -1, 0);
	memcpy(strstr((char *)j.p, "<|endoftext|>"), "<|endoftexx|>", 13);
	gpt2_bad(&j, &v, "encoder.json has \"<|endoftexx|>\" (id 261), which vocab.bpe does not make",
	    "a key not made by the merges");
	/* Without <|endoftext|> */
	gpt2_files(&j, &v, merges, -1, 0);
	j.len = (size_t)((uint8_t *)strstr((char *)j.p, ", \"<|endoftext|>") - j.p);
	rp_buf_puts(&j, "}");
	gpt2_bad(&j, &v, "encoder.json has no <|endoftext|>", "no <|endoftext|>");
	/* A merge twice: the later rank keeps the token, the earlier is a gap. */
	{
		static const char *const dup[] = { "a|b", "c|d", "a|b", NULL };

		/* encoder.json: "ab" twice, 256 and 258; the last one counts. */
		gpt2_files(&j, &v, dup, 258, 256);
		gpt2_bad(&j, &v, "encoder.json gives \"ab\" id 256, vocab.bpe rank 258", "a merge twice: the later rank");
		gpt2_files(&j, &v, dup, -1, 0);
		m = bpe_parse_gpt2(j.p, j.len, v.p, v.len, err, sizeof err);
		TEST(m != NULL && bpe_token(m, 256, &la) == NULL && bpe_token(m, 258, &la) != NULL &&
		    bpe_eot_id(m) == 259, "gpt2: a merge twice leaves a gap at its first rank");
		if (m == NULL)
			printf("#   %s\n", err);
		bpe_model_free(m);
	}
	m = bpe_load_gpt2("/nonexistent/encoder.json", "/nonexistent/vocab.bpe",
	    err, sizeof err);
	TEST(m == NULL && strcmp(err, "encoder.json: No such file or directory") == 0, "gpt2: a missing file");
out:
	rp_buf_free(&j);
	rp_buf_free(&v);
}

/* ------------------------------------------------------------------ */
/* The real files */

/* Decompress shared/REL.xz into dir/NAME; 0 when it worked. */
static int
unxz(const char *shared, const char *rel, const char *dir, const char *name, char *out, size_t cap)
{
	char cmd[1024];

	snprintf(out, cap, "%s/%s", dir, name);
	snprintf(cmd, sizeof cmd, "xz -dc '%s/%s' >'%s' 2>/dev/null", shared, rel, out);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_real_files(void)
{
	char dir[] = "/tmp/t-bpe.XXXXXX", ej[600], vb[600], gt[600], cl[600], err[RP_ERRMAX];
	char cmd[700];
	const char *shared = NULL;
	struct bpe_model *a = NULL, *b = NULL, *c = NULL;
	struct bpe_enc *e;
	size_t i, la, lb;
	const uint8_t *pa, *pb;
	int same;

	for (i = 0; i < 2; i++) {
		char probe[300];

		snprintf(probe, sizeof probe, "%s/vectors/bpe/vocab/encoder.json.xz", shared_dirs[i]);
		if (access(probe, R_OK) == 0) {
			shared = shared_dirs[i];
			break;
		}
	}
	if (shared == NULL || mkdtemp(dir) == NULL ||
	    unxz(shared, "vectors/bpe/vocab/encoder.json.xz", dir, "encoder.json", ej, sizeof ej) ||
	    unxz(shared, "vectors/bpe/vocab/vocab.bpe.xz", dir, "vocab.bpe", vb, sizeof vb) ||
	    unxz(shared, "vectors/bpe/vocab/gpt2.tiktoken.xz", dir, "gpt2.tiktoken", gt, sizeof gt) ||
	    unxz(shared, "vectors/bpe/vocab/cl100k_base.tiktoken.xz", dir, "cl100k_base.tiktoken", cl, sizeof cl)) {
		printf("ok %d - # SKIP ../shared/vectors/bpe/vocab (or xz) not present\n", ++tap_n);
		return;
	}
	a = bpe_load_gpt2(ej, vb, err, sizeof err);
	TEST(a != NULL, "encoder.json + vocab.bpe load");
	if (a == NULL)
		printf("#   %s\n", err);
	b = bpe_load_tiktoken(gt, BPE_GPT2, err, sizeof err);
	TEST(b != NULL, "gpt2.tiktoken loads");
	if (b == NULL)
		printf("#   %s\n", err);
	if (a && b) {
		same = bpe_size(a) == 50257 && bpe_size(b) == 50257 && bpe_eot_id(a) == 50256;
		for (i = 0; same && i < 50257; i++) {
			pa = bpe_token(a, (int64_t)i, &la);
			pb = bpe_token(b, (int64_t)i, &lb);
			same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
		}
		TEST(same, "GPT-2's files and gpt2.tiktoken: the same 50257 tokens");
		TEST_STR(bpe_piece(a, 50256, NULL), "<|endoftext|>", "piece of 50256");
		TEST_STR(bpe_piece(a, 262, NULL), "\xc4\xa0the", "piece of 262 is \xc4\xa0the");
		e = bpe_enc_new(a);
		TEST_STR(enc_str(e, "Hello world"), "15496 995", "gpt2: Hello world");
		bpe_enc_free(e);
	}
	c = bpe_load_tiktoken(cl, BPE_CL100K, err, sizeof err);
	TEST(c != NULL, "cl100k_base.tiktoken loads");
	if (c == NULL) {
		printf("#   %s\n", err);
	} else {
		TEST(bpe_size(c) == 100277 && bpe_eot_id(c) == 100257 &&
		    bpe_token(c, 100256, &la) == NULL && bpe_token(c, 100255, &la) != NULL,
		    "cl100k: 100277 ids, <|endoftext|> 100257, no 100256");
		e = bpe_enc_new(c);
		TEST_STR(enc_str(e, "hello world"), "15339 1917", "cl100k: hello world");
		bpe_enc_free(e);
	}
	/* Cached and uncached ids agree over real text. */
	if (a != NULL) {
		char corpus[300];
		FILE *f;

		snprintf(corpus, sizeof corpus, "%s/corpus/en-gutenberg.txt.xz", shared);
		snprintf(cmd, sizeof cmd, "xz -dc '%s' 2>/dev/null | head -c 3000000", corpus);
		if (access(corpus, R_OK) != 0 || (f = popen(cmd, "r")) == NULL) {
			printf("ok %d - # SKIP %s not present\n", ++tap_n, corpus);
		} else {
			struct bpe_enc *x = bpe_enc_new(a), *y = bpe_enc_new(a), *z = c ? bpe_enc_new(c) : NULL;
			struct bpe_enc *w = c ? bpe_enc_new(c) : NULL;
			char *line = NULL;
			size_t lcap = 0, nl = 0, nids = 0;
			ssize_t len;
			long kx, ky;

			bpe_enc_no_cache(y);
			if (w)
				bpe_enc_no_cache(w);
			same = 1;
			while ((len = getline(&line, &lcap, f)) > 0) {
				kx = bpe_encode(x, (uint8_t *)line, (size_t)len);
				ky = bpe_encode(y, (uint8_t *)line, (size_t)len);
				if (kx != ky || memcmp(bpe_ids(x), bpe_ids(y), (size_t)kx * 4) != 0)
					same = 0;
				if (z) {
					kx = bpe_encode(z, (uint8_t *)line, (size_t)len);
					ky = bpe_encode(w, (uint8_t *)line, (size_t)len);
					if (kx != ky || memcmp(bpe_ids(z), bpe_ids(w), (size_t)kx * 4) != 0)
						same = 0;
				}
				nl++;
				nids += (size_t)ky;
			}
			pclose(f);
			free(line);
			TEST(same && nl > 1000, "cache on and off: the same ids on %zu lines of English (gpt2, cl100k)", nl);
			bpe_enc_free(x);
			bpe_enc_free(y);
			bpe_enc_free(z);
			bpe_enc_free(w);
		}
	}
	bpe_model_free(a);
	bpe_model_free(b);
	bpe_model_free(c);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int
main(void)
{
	test_encodings();
	test_specials_of();
	test_merge_rules();
	test_merge_random();
	test_special_text();
	test_decode_and_pieces();
	test_tiktoken_reader();
	test_gpt2_reader();
	test_real_files();
	return tap_done();
}
