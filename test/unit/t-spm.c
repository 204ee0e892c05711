/*
 * SentencePiece: the model reader and its refusals, the normalizer, the
 * unigram and BPE rules (ties, user-defined scores, unknown merging,
 * byte fallback, float32 accumulation), extra options, decoding, and
 * the line reader.  Models are written here as protobuf bytes; the
 * expected results follow the rules of spm_encode 0.1.97 (each crafted
 * case was also checked with spm_encode).  The cases on the models of
 * ../shared/vectors/spm are skipped when it is absent.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "spm.h"
#include "subword.h"
#include "tap.h"

#define SP	"\xe2\x96\x81"		/* U+2581 */

/* ---- a ModelProto writer ---------------------------------------------- */

struct pbuf {
	uint8_t		 b[1 << 16];
	size_t		 n;
};

static void
put_varint(struct pbuf *p, uint64_t v)
{
	while (v >= 0x80) {
		p->b[p->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p->b[p->n++] = (uint8_t)v;
}

static void
put_key(struct pbuf *p, unsigned num, unsigned wt)
{
	put_varint(p, (uint64_t)num << 3 | wt);
}

static void
put_bytes(struct pbuf *p, unsigned num, const void *s, size_t n)
{
	put_key(p, num, 2);
	put_varint(p, n);
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

static void
put_float(struct pbuf *p, unsigned num, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put_key(p, num, 5);
	p->b[p->n++] = (uint8_t)u;
	p->b[p->n++] = (uint8_t)(u >> 8);
	p->b[p->n++] = (uint8_t)(u >> 16);
	p->b[p->n++] = (uint8_t)(u >> 24);
}

static void
put_int(struct pbuf *p, unsigned num, uint64_t v)
{
	put_key(p, num, 0);
	put_varint(p, v);
}

static struct pbuf mdl;

static void
m_reset(void)
{
	mdl.n = 0;
}

/* A piece of n bytes: field 1 { 1 piece, 2 score, 3 type }. */
static void
m_piece_n(const char *s, size_t n, float score, int type)
{
	struct pbuf sub = { .n = 0 };

	put_bytes(&sub, 1, s, n);
	put_float(&sub, 2, score);
	if (type != SPM_NORMAL)
		put_int(&sub, 3, (uint64_t)type);
	put_bytes(&mdl, 1, sub.b, sub.n);
}

static void
m_piece(const char *s, float score, int type)
{
	m_piece_n(s, strlen(s), score, type);
}

/* trainer_spec: model_type, byte_fallback. */
static void
m_trainer(int type, int byte_fallback)
{
	struct pbuf sub = { .n = 0 };

	put_int(&sub, 3, (uint64_t)type);
	if (byte_fallback)
		put_int(&sub, 35, 1);
	put_bytes(&mdl, 2, sub.b, sub.n);
}

/* One more trainer_spec (merged into the first): string field num. */
static void
m_trainer_str(unsigned num, const char *s, size_t n)
{
	struct pbuf sub = { .n = 0 };

	put_bytes(&sub, num, s, n);
	put_bytes(&mdl, 2, sub.b, sub.n);
}

/* normalizer_spec: no charsmap (identity) and the three flags. */
static void
m_norm(int dummy, int rmws, int esc)
{
	struct pbuf sub = { .n = 0 };

	put_int(&sub, 3, (uint64_t)dummy);
	put_int(&sub, 4, (uint64_t)rmws);
	put_int(&sub, 5, (uint64_t)esc);
	put_bytes(&mdl, 3, sub.b, sub.n);
}

static void
m_charsmap(const uint8_t *blob, size_t n)
{
	struct pbuf sub = { .n = 0 };

	put_bytes(&sub, 2, blob, n);
	put_bytes(&mdl, 3, sub.b, sub.n);
}

static void
m_sample(const char *in, const char *expected)
{
	struct pbuf sub = { .n = 0 }, s2 = { .n = 0 };

	put_bytes(&s2, 1, in, strlen(in));
	put_bytes(&s2, 2, expected, strlen(expected));
	put_bytes(&sub, 1, s2.b, s2.n);
	put_bytes(&mdl, 4, sub.b, sub.n);
}

/*
 * With RECPIPE_SPM_DUMP=DIR, each model is also written to DIR/N.model,
 * so that the expectations can be checked against spm_encode.
 */
static struct spm_model *
m_load(char *err, size_t errlen)
{
	static int count;
	const char *dir = getenv("RECPIPE_SPM_DUMP");

	if (dir != NULL) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof path, "%s/%d.model", dir, ++count);
		if ((f = fopen(path, "wb")) != NULL) {
			fwrite(mdl.b, 1, mdl.n, f);
			fclose(f);
		}
	}
	return spm_model_parse(mdl.b, mdl.n, 0, err, errlen);
}

/*
 * The tokens of text, space-separated, as ids (ENC_IDS), pieces
 * (ENC_PIECES) or id:piece (ENC_BOTH); with the nsp specials sp.
 */
enum { ENC_IDS, ENC_PIECES, ENC_BOTH };

/* The model made so far, loaded; a test that it loads, naming what and why not. */
static struct spm_model *
m_loaded(const char *what)
{
	char err[RP_ERRMAX];
	struct spm_model *m = m_load(err, sizeof err);

	TEST(m != NULL, "%s loads (%s)", what, m ? "" : err);
	return m;
}

static const char *
enc_with(struct spm_model *m, const struct spm_special *sp, size_t nsp,
    const char *text, int mode)
{
	static char out[4096];
	struct spm_enc *e = spm_enc_new(m);
	const struct spm_tok *t;
	size_t o = 0;
	long n, i;

	out[0] = '\0';
	if (e == NULL)
		return "(ENOMEM)";
	if (spm_enc_set_specials(e, sp, nsp) == -1 ||
	    (n = spm_encode(e, (const uint8_t *)text, strlen(text))) < 0) {
		spm_enc_free(e);
		return "(error)";
	}
	t = spm_tokens(e);
	for (i = 0; i < n && o + 200 < sizeof out; i++) {
		const char *sep = i > 0 ? " " : "";

		if (mode == ENC_IDS)
			o += (size_t)snprintf(out + o, sizeof out - o, "%s%d",
			    sep, t[i].id);
		else if (mode == ENC_PIECES)
			o += (size_t)snprintf(out + o, sizeof out - o, "%s%.*s",
			    sep, (int)t[i].len, t[i].s);
		else
			o += (size_t)snprintf(out + o, sizeof out - o, "%s%d:%.*s",
			    sep, t[i].id, (int)t[i].len, t[i].s);
	}
	spm_enc_free(e);
	return out;
}

/* The ids (pieces: the pieces) of text, space-separated. */
static const char *
enc(struct spm_model *m, const char *text, int pieces)
{
	return enc_with(m, NULL, 0, text, pieces ? ENC_PIECES : ENC_IDS);
}

#define TEST_STR(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	TEST(strcmp(g_, w_) == 0, __VA_ARGS__);				\
	if (strcmp(g_, w_) != 0)					\
		printf("#   got  '%s'\n#   want '%s'\n", g_, w_);		\
} while (0)

/* ---- the rules -------------------------------------------------------- */

static void
test_unigram_ties(void)
{
	struct spm_model *m;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP, -1, SPM_NORMAL);		/* 1 */
	m_piece(SP "a", -1, SPM_NORMAL);	/* 2 */
	m_piece("b", -1, SPM_NORMAL);		/* 3 */
	m_piece("ab", -1, SPM_NORMAL);		/* 4 */
	m_piece("a", -5, SPM_NORMAL);		/* 5 */
	m_trainer(SPM_UNIGRAM, 0);
	m = m_loaded("unigram tie model");
	if (m == NULL)
		return;
	/* [▁, ab] and [▁a, b] both score -2: the longest last piece wins. */
	TEST_STR(enc(m, "ab", 1), SP " ab", "unigram tie: the first candidate of an end stays");
	TEST_STR(enc(m, "ab", 0), "1 4", "unigram tie: ids");
	TEST_STR(enc(m, "  ab  ", 0), "1 4", "leading and trailing spaces removed");
	TEST_STR(enc(m, "", 0), "", "empty line: no ids");
	TEST_STR(enc(m, "   ", 0), "", "spaces only: no ids");
	spm_model_free(m);

	/*
	 * UNUSED pieces are keys of the lattice's trie that give no node:
	 * "xyz" (a leaf) and "xy" (on the way to it) are never tokens.
	 */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("x", -2, SPM_NORMAL);		/* 1 */
	m_piece("y", -2, SPM_NORMAL);		/* 2 */
	m_piece("z", -2, SPM_NORMAL);		/* 3 */
	m_piece("xyz", -1, SPM_UNUSED);		/* 4 */
	m_piece("xy", -1, SPM_UNUSED);		/* 5 */
	m_piece("yz", -3, SPM_NORMAL);		/* 6 */
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(0, 0, 0);
	m = m_loaded("unigram UNUSED model");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "xyz", 0), "1 6", "UNUSED pieces are no tokens of the lattice");
	TEST_STR(enc(m, "xyzxy", 0), "1 6 1 2", "nor on the way to one");
	spm_model_free(m);
}

static void
test_float_trap(void)
{
	struct spm_model *m;

	/*
	 * From a score of -1e7 (float ulp 1): "cd" gives -10000001, while
	 * best["c"] = float(-10000000.5) = -10000000 and then "d" gives
	 * the double -10000000.75, greater: "c d" wins, as upstream's
	 * double candidate compared with a stored float decides.  In pure
	 * double "cd" would win, and in pure float the tie keeps "cd".
	 */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("z", -1e7f, SPM_NORMAL);	/* 1 */
	m_piece("c", -0.5f, SPM_NORMAL);	/* 2 */
	m_piece("d", -0.75f, SPM_NORMAL);	/* 3 */
	m_piece("cd", -1.0f, SPM_NORMAL);	/* 4 */
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(0, 0, 1);
	m = m_loaded("float trap model");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "zcd", 0), "1 2 3", "float trap: float storage decides");
	TEST_STR(enc(m, "cd", 0), "4", "no trap near 0: cd");
	spm_model_free(m);
}

static void
test_user_defined(void)
{
	struct spm_model *m;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("<s>", 0, SPM_CONTROL);		/* 1 */
	m_piece("x", -0.01f, SPM_NORMAL);	/* 2 */
	m_piece("y", -0.01f, SPM_NORMAL);	/* 3 */
	m_piece("xy", 0, SPM_USER_DEFINED);	/* 4: scores 2 * FLT_MIN - 0.1 */
	m_piece("p", -1, SPM_NORMAL);		/* 5 */
	m_piece("q", -1, SPM_NORMAL);		/* 6 */
	m_piece("pq", 0, SPM_USER_DEFINED);	/* 7 */
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(0, 1, 1);
	m = m_loaded("user-defined model");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "xy", 0), "2 3", "user-defined scores about -0.1: x y (-0.02) win");
	TEST_STR(enc(m, "pq", 0), "7", "user-defined beats p q (-2)");
	TEST_STR(enc(m, "<s>", 0), "0", "a control piece in text is not matched: unknown");
	TEST_STR(enc(m, "<s>", 1), "<s>", "its piece is the text");
	spm_model_free(m);
}

static void
test_unknown_and_bytes(void)
{
	char err[RP_ERRMAX], piece[8];
	struct spm_model *m;
	int b;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("a", -1, SPM_NORMAL);		/* 1 */
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(0, 1, 1);
	m = m_load(err, sizeof err);
	TEST(m != NULL, "unknown model loads");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "a\xc3\xa9\xc3\xa8" "a", 0), "1 0 1", "unknown run merges into one id");
	TEST_STR(enc(m, "a\xc3\xa9\xc3\xa8" "a", 1), "a \xc3\xa9\xc3\xa8 a", "its piece is its text");
	TEST_STR(enc(m, "\xff" "a", 1), "\xef\xbf\xbd a", "invalid UTF-8: U+FFFD, one byte");
	spm_model_free(m);

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	for (b = 0; b < 256; b++) {
		snprintf(piece, sizeof piece, "<0x%02X>", b);
		m_piece(piece, 0, SPM_BYTE);	/* 1 + b */
	}
	m_piece("a", -1, SPM_NORMAL);		/* 257 */
	m_trainer(SPM_BPE, 1);
	m_norm(0, 1, 1);
	m = m_loaded("byte fallback model");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "a\xc3\xa9", 0), "257 196 170", "byte fallback: UTF-8 bytes' ids");
	TEST_STR(enc(m, "a\xc3\xa9", 1), "a <0xC3> <0xA9>", "byte pieces");
	TEST_STR(enc(m, "<0x41>", 0), "61 49 121 53 50 63",
	    "<0x41> in text is not a byte piece");
	{
		int32_t ids[] = { 257, 196, 170, 1 + 0xff, 257 };
		char *out = NULL;
		size_t cap = 0;
		long k = spm_decode_ids(m, ids, 5, &out, &cap, err, sizeof err);

		TEST(k == 7 && memcmp(out, "a\xc3\xa9\xef\xbf\xbd" "a", 7) == 0,
		    "decode: byte runs as UTF-8, a bad byte U+FFFD");
		free(out);
	}
	spm_model_free(m);
}

static void
test_bpe_ties(void)
{
	struct spm_model *m;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("a", 0, SPM_NORMAL);		/* 1 */
	m_piece("b", 0, SPM_NORMAL);		/* 2 */
	m_piece("ab", -1, SPM_NORMAL);		/* 3 */
	m_piece("ba", -1, SPM_NORMAL);		/* 4 */
	m_piece("abc", -3, SPM_UNUSED);		/* 5 */
	m_piece("c", 0, SPM_NORMAL);		/* 6 */
	m_piece("aa", -2, SPM_NORMAL);		/* 7 */
	m_piece("aab", -0.5f, SPM_NORMAL);	/* 8 */
	m_trainer(SPM_BPE, 0);
	m_norm(0, 1, 1);
	m = m_loaded("BPE model");
	if (m == NULL)
		return;
	TEST_STR(enc(m, "aba", 0), "3 1", "BPE tie: the leftmost pair merges");
	TEST_STR(enc(m, "bab", 0), "4 2", "BPE tie: the leftmost pair merges (2)");
	TEST_STR(enc(m, "abc", 0), "3 6", "an UNUSED result is split back");
	TEST_STR(enc(m, "aab", 0), "8", "BPE: ab (-1) before aa (-2), then a + ab");
	spm_model_free(m);
}

/*
 * Upstream builds its tries (the unigram lattice's, the user-defined
 * matcher's) from the pieces as C strings: a key ends at its first NUL.
 * A unigram model's PieceToId() looks in that trie too; BPE's merges
 * and PieceToId() see the whole piece.  The expectations are
 * spm_encode 0.1.97's on these models.
 */
static void
test_nul_keys(void)
{
	char err[RP_ERRMAX];
	struct spm_model *m;

	/* Unigram: "a\0b" is matched as "a", a user-defined piece of 1 byte. */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP, -2, SPM_NORMAL);		/* 1 */
	m_piece_n("a\0b", 3, 0, SPM_USER_DEFINED);	/* 2 */
	m_piece("b", -1, SPM_NORMAL);		/* 3 */
	m_piece_n(SP "c\0", 5, -1, SPM_NORMAL);	/* 4 */
	m_trainer(SPM_UNIGRAM, 0);
	m = m_loaded("unigram model with a NUL in a piece");
	if (m != NULL) {
		char *out = NULL;
		size_t cap = 0;
		int32_t ids[] = { 3, 4 };
		const char *pc[] = { "b", SP "c\0" };
		size_t lens[] = { 1, 5 };

		TEST_STR(enc(m, "ab", 0), "1 2 3", "NUL: a unigram key ends at the NUL");
		TEST_STR(enc(m, "ab", 1), SP " a b", "NUL: the piece is the text matched");
		/*
		 * A unigram model's PieceToId() is an exact match in that
		 * trie: "a" is piece 2, "a\0b" no piece.
		 */
		TEST_INT(spm_piece_id(m, "a", 1), ==, 2, "NUL: PieceToId(\"a\") finds the key");
		TEST_INT(spm_piece_id(m, "a\0b", 3), ==, 0, "NUL: PieceToId(\"a\\0b\") is unknown");
		/* Decoding looks the pieces up again: "\u2581c\0" comes out raw. */
		TEST(spm_decode_ids(m, ids, 2, &out, &cap, err, sizeof err) == 6 &&
		    memcmp(out, "b" SP "c\0", 6) == 0,
		    "NUL: decode ids, the piece as unknown text (U+2581 kept)");
		TEST(spm_decode_pieces(m, pc, lens, 2, &out, &cap, err, sizeof err) == 6 &&
		    memcmp(out, "b" SP "c\0", 6) == 0,
		    "NUL: decode pieces, the piece as unknown text (U+2581 kept)");
		free(out);
		spm_model_free(m);
	}
	/* Two keys made equal: the first piece in byte order keeps it. */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP, -2, SPM_NORMAL);		/* 1 */
	m_piece_n("a\0c", 3, -0.5f, SPM_NORMAL);	/* 2 */
	m_piece_n("a\0b", 3, -3, SPM_NORMAL);	/* 3 */
	m_trainer(SPM_UNIGRAM, 0);
	m = m_loaded("unigram model with equal keys");
	if (m != NULL) {
		TEST_STR(enc(m, "a", 0), "1 3", "NUL: of equal keys the first in byte order");
		spm_model_free(m);
	}
	/* An empty key: upstream's trie builder throws, spm_encode aborts. */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece_n("\0x", 2, -3, SPM_NORMAL);
	m_trainer(SPM_UNIGRAM, 0);
	m = m_load(err, sizeof err);
	TEST(m == NULL && strstr(err, "NUL") != NULL,
	    "a unigram piece beginning with NUL is refused (%s)", m == NULL ? err : "loaded");
	spm_model_free(m);
	/* BPE: the matcher freezes "a"; a piece beginning with NUL is merged. */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("a", 0, SPM_NORMAL);		/* 1 */
	m_piece("b", 0, SPM_NORMAL);		/* 2 */
	m_piece("ab", -1, SPM_NORMAL);		/* 3 */
	m_piece_n("a\0b", 3, 0, SPM_USER_DEFINED);	/* 4 */
	m_piece_n("\0", 1, 0, SPM_NORMAL);	/* 5 */
	m_piece_n("\0b", 2, -2, SPM_NORMAL);	/* 6 */
	m_trainer(SPM_BPE, 0);
	m_norm(0, 1, 1);
	m = m_loaded("BPE model with NULs in pieces");
	if (m != NULL) {
		TEST_STR(enc(m, "ab", 0), "1 2", "NUL: the user-defined key \"a\" is frozen");
		spm_model_free(m);
	}
}

static void
test_refusals(void)
{
	static const struct {
		const char	*what;
		const char	*want;	/* in the message */
	} cases[] = {
		{ "no unk", "no unknown piece" },
		{ "dup", "already defined" },
		{ "byte", "byte_fallback is false" },
		{ "nan", "NaN" },
		{ "empty", "empty" },
		{ "trunc", "malformed protobuf" },
		{ "trie", "outside itself" },
		{ "blob", "broken" },
		{ "sample", "self_test_data sample 1" },
		{ "two unk", "two unknown" },
		{ "nothing", "no pieces" },
	};
	char err[RP_ERRMAX];
	struct spm_model *m;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *w = cases[i].what;

		m_reset();
		if (strcmp(w, "no unk") != 0 && strcmp(w, "nothing") != 0)
			m_piece("<unk>", 0, SPM_UNKNOWN);
		if (strcmp(w, "nothing") == 0)
			m_trainer(SPM_UNIGRAM, 0);
		else
			m_piece("a", -1, SPM_NORMAL);
		if (strcmp(w, "dup") == 0)
			m_piece("a", -2, SPM_USER_DEFINED);
		if (strcmp(w, "two unk") == 0)
			m_piece("<unk2>", 0, SPM_UNKNOWN);
		if (strcmp(w, "byte") == 0)
			m_piece("<0x41>", 0, SPM_BYTE);
		if (strcmp(w, "nan") == 0)
			m_piece("b", NAN, SPM_NORMAL);
		if (strcmp(w, "empty") == 0)
			m_piece("", -1, SPM_NORMAL);
		if (strcmp(w, "trie") == 0) {
			/* One unit whose offset leads far past the array. */
			static const uint8_t blob[] = { 4, 0, 0, 0, 0x00, 0xfc, 0xff, 0x7f, 'x', 0 };

			m_charsmap(blob, sizeof blob);
		}
		if (strcmp(w, "blob") == 0) {
			static const uint8_t blob[] = { 40, 0, 0, 0, 1, 2 };

			m_charsmap(blob, sizeof blob);
		}
		if (strcmp(w, "sample") == 0)
			m_sample("a", "b");
		if (strcmp(w, "trunc") == 0)
			mdl.n -= 3;
		m = m_load(err, sizeof err);
		TEST(m == NULL && strstr(err, cases[i].want) != NULL,
		    "refused: %s (%s)", w, m == NULL ? err : "loaded");
		spm_model_free(m);
	}
	/*
	 * A unigram sample passes when the two scores differ by at most
	 * upstream's kEpsilon, the float 1e-7f (1.0000000117e-7): here
	 * "\u2581b" scores exactly that above "\u2581a", then one float more.
	 */
	for (i = 0; i < 2; i++) {
		float eps = i == 0 ? 1e-7f : nextafterf(1e-7f, 1);

		m_reset();
		m_piece("<unk>", 0, SPM_UNKNOWN);
		m_piece(SP "a", 0, SPM_NORMAL);
		m_piece(SP "b", eps, SPM_NORMAL);
		m_sample("a", SP "b");
		m = m_load(err, sizeof err);
		TEST((m != NULL) == (i == 0), "a sample %s kEpsilon away %s",
		    i == 0 ? "exactly" : "one float more than", i == 0 ? "loads" : "is refused");
		spm_model_free(m);
	}
	/* A sample without its expected pieces: scored as one empty piece. */
	{
		struct pbuf sub = { .n = 0 }, s2 = { .n = 0 };

		m_reset();
		m_piece("<unk>", 0, SPM_UNKNOWN);
		m_piece(SP "a", -1, SPM_NORMAL);
		put_bytes(&s2, 1, "a", 1);
		put_bytes(&sub, 1, s2.b, s2.n);
		put_bytes(&mdl, 4, sub.b, sub.n);
		m = m_load(err, sizeof err);
		TEST(m == NULL && strstr(err, "sample 1") != NULL,
		    "a sample with no expected pieces is refused (%s)", m ? "" : err);
		spm_model_free(m);
	}
	/* The good sample passes. */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP "a", -1, SPM_NORMAL);
	m_sample("a", SP "a");
	m = m_load(err, sizeof err);
	TEST(m != NULL, "a model whose self-test sample matches loads");
	spm_model_free(m);
	/* Every prefix of a good model: refused or loaded, never a crash. */
	{
		size_t full = mdl.n, k, ok = 0;

		for (k = 0; k < full; k++) {
			m = spm_model_parse(mdl.b, k, 0, err, sizeof err);
			ok += m != NULL;
			spm_model_free(m);
		}
		TEST(ok < full, "truncations are refused (%zu of %zu prefixes load)", ok, full);
	}
}

static void
test_extra_and_decode(void)
{
	char err[RP_ERRMAX], *out = NULL;
	enum spm_extra x[SPM_MAX_EXTRA];
	struct spm_model *m;
	struct spm_enc *e;
	size_t cap = 0;
	long k;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("<s>", 0, SPM_CONTROL);		/* 1 */
	m_piece("</s>", 0, SPM_CONTROL);	/* 2 */
	m_piece(SP "a", -1, SPM_NORMAL);	/* 3 */
	m_piece(SP "b", -1, SPM_NORMAL);	/* 4 */
	m = m_load(err, sizeof err);
	TEST(m != NULL, "extra options model loads");
	if (m == NULL)
		return;
	TEST_INT(spm_parse_extra(m, "bos:eos", x, err, sizeof err), ==, 2, "bos:eos: two items");
	TEST_INT(spm_parse_extra(m, "bos::eos:", x, err, sizeof err), ==, 2, "empty items are skipped");
	TEST_INT(spm_parse_extra(m, "BOS", x, err, sizeof err), ==, -1, "BOS is unknown");
	TEST(strstr(err, "not available") != NULL, "its message: %s", err);
	k = spm_parse_extra(m, "reverse:bos:eos:unk", x, err, sizeof err);
	TEST_INT(k, ==, 4, "reverse:bos:eos:unk");
	e = spm_enc_new(m);
	spm_enc_set_extra(e, x, (int)k);
	{
		long n = spm_encode(e, (const uint8_t *)"a b c", 5);
		const struct spm_tok *t = spm_tokens(e);

		TEST(n == 5 && t[0].id == 1 && t[1].id == 0 && t[2].id == 4 &&
		    t[3].id == 3 && t[4].id == 2, "reverse, then bos and eos");
		TEST(n == 5 && t[1].len == 5 && memcmp(t[1].s, "<unk>", 5) == 0,
		    "unk: the unknown piece's text becomes <unk>");
		TEST(spm_enc_unknowns(e) == 1, "one unknown counted");
	}
	spm_enc_free(e);
	{
		int32_t ids[] = { 1, 3, 0, 4, 2 };

		k = spm_decode_ids(m, ids, 5, &out, &cap, err, sizeof err);
		TEST(k >= 0 && strcmp(out, "a \xe2\x81\x87  b") == 0,
		    "decode: control pieces vanish, <unk> is its surface, one leading space stripped");
		ids[0] = 5;
		TEST(spm_decode_ids(m, ids, 1, &out, &cap,
		    err, sizeof err) == -1 &&
		    strstr(err, "Invalid id: 5") != NULL, "an id out of range: %s", err);
	}
	{
		const char *pc[] = { SP SP "a", "zz" SP, "<unk>" };
		size_t lens[] = { 7, 5, 5 };

		k = spm_decode_pieces(m, pc, lens, 3, &out, &cap,
		    err, sizeof err);
		TEST(k >= 0 && strcmp(out, SP SP "azz" SP " \xe2\x81\x87 ") == 0,
		    "decode pieces: a piece not in the model comes out as it is");
	}
	free(out);
	spm_model_free(m);

	/*
	 * Upstream looks up bos_piece's, eos_piece's and pad_piece's ids,
	 * and writes unk_surface, as C strings (up to a NUL); the bos and eos tokens
	 * keep the whole name as their text (spm_encode and spm_decode
	 * 0.1.97 on this model).
	 */
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("<s>", 0, SPM_CONTROL);		/* 1 */
	m_piece("</s>", 0, SPM_CONTROL);	/* 2 */
	m_piece(SP "a", -1, SPM_NORMAL);	/* 3 */
	m_piece("<p>", 0, SPM_CONTROL);		/* 4 */
	m_trainer_str(46, "<s>\0z", 5);		/* bos_piece */
	m_trainer_str(48, "<p>\0q", 5);		/* pad_piece */
	m_trainer_str(47, "</s>\0", 5);		/* eos_piece */
	m_trainer_str(44, "A\0B", 3);		/* unk_surface */
	m = m_loaded("model with NULs in its names");
	if (m == NULL)
		return;
	TEST_INT(spm_bos_id(m), ==, 1, "bos id: the name up to its NUL");
	TEST_INT(spm_eos_id(m), ==, 2, "eos id: the name up to its NUL");
	TEST_INT(spm_pad_id(m), ==, 4, "pad id: the name up to its NUL");
	k = spm_parse_extra(m, "bos:eos", x, err, sizeof err);
	TEST_INT(k, ==, 2, "bos:eos accepted (%s)", k < 0 ? err : "");
	if (k == 2) {
		long n;
		const struct spm_tok *t;

		e = spm_enc_new(m);
		spm_enc_set_extra(e, x, (int)k);
		n = spm_encode(e, (const uint8_t *)"a", 1);
		t = spm_tokens(e);
		TEST(n == 3 && t[0].id == 1 && t[1].id == 3 && t[2].id == 2,
		    "bos and eos ids from the names up to the NUL");
		TEST(n == 3 && t[0].len == 5 && memcmp(t[0].s, "<s>\0z", 5) == 0 &&
		    t[2].len == 5 && memcmp(t[2].s, "</s>\0", 5) == 0,
		    "bos and eos pieces: the whole names");
		spm_enc_free(e);
	}
	{
		int32_t ids[] = { 3, 0, 3 };

		out = NULL;
		cap = 0;
		k = spm_decode_ids(m, ids, 3, &out, &cap, err, sizeof err);
		TEST(k >= 0 && strcmp(out, "aA a") == 0,
		    "decode: unk_surface up to its NUL");
		free(out);
	}
	spm_model_free(m);
}

static void
test_normalizer(void)
{
	char err[RP_ERRMAX];
	struct spm_model *m;
	struct spm_enc *e;
	const char *s;
	size_t n;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("a", -1, SPM_NORMAL);
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(1, 1, 1);
	m = m_load(err, sizeof err);
	e = spm_enc_new(m);
	s = spm_normalize(e, (const uint8_t *)"  a  b \tc  ", 11, &n);
	TEST(s != NULL && strcmp(s, SP "a" SP "b" SP "\tc") == 0,
	    "identity: dummy prefix, runs of spaces one, tab kept");
	s = spm_normalize(e, (const uint8_t *)"a\xe2\x96\x81", 4, &n);
	TEST(s != NULL && strcmp(s, SP "a") == 0,
	    "a literal U+2581 at the end goes with the trailing spaces");
	s = spm_normalize(e, (const uint8_t *)"\xc3", 1, &n);
	TEST(s != NULL && strcmp(s, SP "\xef\xbf\xbd") == 0, "a truncated sequence: U+FFFD");
	spm_enc_free(e);
	spm_model_free(m);

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("a", -1, SPM_NORMAL);
	m_norm(0, 0, 0);
	m = m_load(err, sizeof err);
	e = spm_enc_new(m);
	s = spm_normalize(e, (const uint8_t *)" a  b ", 6, &n);
	TEST(s != NULL && strcmp(s, " a  b ") == 0, "no dummy, spaces kept, not escaped");
	spm_enc_free(e);
	spm_model_free(m);
}

/* A charsmap of one rule, "A" -> "a", written as a darts-clone double array. */
static void
test_charsmap(void)
{
	static uint32_t u[0x142];
	static uint8_t blob[4 + sizeof u + 2];
	struct spm_model *m;
	struct spm_enc *e;
	const char *s;
	size_t i, n;

	u[0] = 0x100u << 10;			/* the root's children at 0x100 ^ byte */
	u[0x141] = 1u << 10 | 1u << 8 | 0x41;	/* 'A', a leaf at 0x141 ^ 1 */
	u[0x140] = 0x80000000u;			/* its value: offset 0, "a" */
	blob[0] = (uint8_t)sizeof u;
	blob[1] = (uint8_t)(sizeof u >> 8);
	for (i = 0; i < 0x142; i++) {
		blob[4 + 4 * i] = (uint8_t)u[i];
		blob[5 + 4 * i] = (uint8_t)(u[i] >> 8);
		blob[6 + 4 * i] = (uint8_t)(u[i] >> 16);
		blob[7 + 4 * i] = (uint8_t)(u[i] >> 24);
	}
	memcpy(blob + 4 + sizeof u, "a", 2);
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP "a", -1, SPM_NORMAL);
	m_piece("B", -1, SPM_USER_DEFINED);
	m_charsmap(blob, sizeof blob);
	m = m_loaded("a one-rule charsmap");
	if (m == NULL)
		return;
	e = spm_enc_new(m);
	s = spm_normalize(e, (const uint8_t *)"AA B", 4, &n);
	TEST(s != NULL && strcmp(s, SP "aa" SP "B") == 0, "A -> a through the trie, the rest as it is");
	spm_enc_free(e);
	TEST_STR(enc(m, "A", 0), "1", "the mapped text encodes");
	spm_model_free(m);
}

/* The public vector models, when ../shared is beside the project. */
static void
test_vector_models(void)
{
	static const char *dirs[] = { "../shared/vectors/spm/models", "../../shared/vectors/spm/models" };
	char path[512], err[RP_ERRMAX];
	struct spm_model *m = NULL;
	struct spm_enc *e;
	const char *s;
	size_t i, n;

	for (i = 0; i < 2 && m == NULL; i++) {
		snprintf(path, sizeof path, "%s/uni.model", dirs[i]);
		if (access(path, R_OK) == 0)
			m = spm_model_load(path, 0, err, sizeof err);
	}
	if (m == NULL) {
		printf("ok %d - # SKIP ../shared/vectors/spm not present\n", ++tap_n);
		return;
	}
	TEST(spm_model_type(m) == SPM_UNIGRAM && spm_size(m) == 4000, "uni.model: unigram, 4000 pieces");
	e = spm_enc_new(m);
	/* nmt_nfkc: full-width letters, U+3000, a ligature. */
	s = spm_normalize(e, (const uint8_t *)"\xef\xbc\xa1\xe3\x80\x80\xef\xac\x81", 9, &n);
	TEST(s != NULL && strcmp(s, SP "A" SP "fi") == 0, "nmt_nfkc: full-width A, ideographic space, fi ligature");
	s = spm_normalize(e, (const uint8_t *)"\xef\xbf\xbd", 3, &n);
	TEST(s != NULL && n == 0, "a literal U+FFFD is deleted by the charsmap");
	s = spm_normalize(e, (const uint8_t *)"\xff", 1, &n);
	TEST(s != NULL && strcmp(s, SP "\xef\xbf\xbd") == 0, "an invalid byte is U+FFFD, not mapped");
	spm_enc_free(e);
	spm_model_free(m);
	{
		uint8_t buf[200];
		ssize_t k;
		FILE *f;

		snprintf(path, sizeof path, "%s/../manifest.json", dirs[i - 1]);
		if ((f = fopen(path, "rb")) != NULL) {
			k = (ssize_t)fread(buf, 1, sizeof buf, f);
			fclose(f);
			TEST(k > 0 && !spm_looks_like_model(buf, (size_t)k),
			    "a JSON file is not a model");
		}
	}
}

/*
 * The word cache, the ASCII normalizer and the short-word BPE against
 * whole lines: the same tokens on lines that repeat words (hits), with
 * long words, words at the cache's length limits, ASCII before a
 * combining mark, unknown characters, runs of spaces and tabs.
 */
static void
test_cache_agrees(void)
{
	static const char *dirs[] = { "../shared/vectors/spm/models", "../../shared/vectors/spm/models" };
	static const char *models[] = { "uni.model", "bpe.model", "bpe_bf.model",
	    "uni_uds.model", "uni_nodummy.model", "uni_pad.model" };
	static const char *lines[] = {
		"the cat sat on the mat, and the cat sat again.",
		"  the   cat\tsat  on the\xe3\x80\x80mat  ",
		"antidisestablishmentarianism antidisestablishmentarianism",
		"abcdefghijklmnopqrstuvwxyzabc abcdefghijklmnopqrstuvwxyzab abcdefghijklmnopqrstuvwxyza",
		"e\xcc\x81t\xc3\xa9 cafe\xcc\x81 the cafe\xcc\x81",
		"\xe2\x80\x9cthe\xe2\x80\x9d said \xe2\x80\x98she\xe2\x80\x99 \xf0\x9f\x98\x80\xf0\x9f\x98\x80 the",
		"\xe4\xb8\xad\xe6\x96\x87 the \xe4\xb8\xad\xe6\x96\x87 cat \xe2\x96\x81\xe2\x96\x81 x",
		"The The THE the, the. the; (the) \"the\" the-the",
		"a b c d e f g h i j k l m n o p q r s t u v w x y z a b c",
	};
	char path[512], err[RP_ERRMAX];
	size_t mi, li, d, j;
	int rounds;

	for (mi = 0; mi < sizeof models / sizeof *models; mi++) {
		struct spm_model *m = NULL;
		struct spm_enc *a, *w;
		int same = 1;

		for (d = 0; d < 2 && m == NULL; d++) {
			snprintf(path, sizeof path, "%s/%s", dirs[d], models[mi]);
			if (access(path, R_OK) == 0)
				m = spm_model_load(path, 0, err, sizeof err);
		}
		if (m == NULL) {
			printf("ok %d - # SKIP %s not present\n", ++tap_n, models[mi]);
			continue;
		}
		a = spm_enc_new(m);
		w = spm_enc_new(m);
		spm_enc_whole_lines(w);
		/* Twice over: the second round hits the cache. */
		for (rounds = 0; rounds < 2; rounds++)
			for (li = 0; li < sizeof lines / sizeof *lines; li++) {
				const uint8_t *p = (const uint8_t *)lines[li];
				size_t n = strlen(lines[li]);
				long ka = spm_encode(a, p, n), kw = spm_encode(w, p, n);
				const struct spm_tok *ta, *tw;

				if (ka != kw) {
					same = 0;
					continue;
				}
				ta = spm_tokens(a);
				tw = spm_tokens(w);
				for (j = 0; j < (size_t)(ka > 0 ? ka : 0); j++)
					if (ta[j].id != tw[j].id || ta[j].len != tw[j].len ||
					    memcmp(ta[j].s, tw[j].s, ta[j].len) != 0)
						same = 0;
			}
		TEST(same, "%s: words through the cache give the whole lines' tokens",
		    models[mi]);
		TEST(spm_enc_unknowns(a) == spm_enc_unknowns(w),
		    "%s: the same unknowns counted (%llu, %llu)", models[mi],
		    (unsigned long long)spm_enc_unknowns(a),
		    (unsigned long long)spm_enc_unknowns(w));
		spm_enc_free(a);
		spm_enc_free(w);
		spm_model_free(m);
	}
}

/*
 * The word cache under pressure: more distinct words than it has slots,
 * frequent words among them (which keep their slots), words of one
 * length that differ past their first 8 bytes, and a near tie in long
 * lines (a word cached near a score of 0 met again in the thousands,
 * where float sums may split it), for a unigram and a BPE model: every
 * line as the whole-line encoder gives it.
 */
static void
test_cache_slots(void)
{
	static const int types[] = { SPM_UNIGRAM, SPM_BPE };
	enum { NW = 26 * 26 * 26 * 26, LINES = 9000, PER = 40 };
	char err[RP_ERRMAX], piece[16];
	static char line[4000 * 27 + 1];
	size_t ti, i, j, k, next, bad, words;
	uint32_t r = 2024;

	for (ti = 0; ti < sizeof types / sizeof *types; ti++) {
		struct spm_model *m;
		struct spm_enc *a, *w;

		m_reset();
		m_piece("<unk>", 0, SPM_UNKNOWN);
		for (i = 0; i < 26 * 27; i++) {
			r = r * 1103515245 + 12345;
			if (i < 26)
				snprintf(piece, sizeof piece, "%c", 'a' + (int)i);
			else
				snprintf(piece, sizeof piece, "%c%c", 'a' + (int)(i / 26 - 1),
				    'a' + (int)(i % 26));
			m_piece(piece, -2 - (float)((r >> 16) % 1000) / 100, SPM_NORMAL);
			snprintf(line, sizeof line, SP "%s", piece);
			m_piece(line, -1 - (float)((r >> 8) % 1000) / 100, SPM_NORMAL);
		}
		/*
		 * A near tie: "CD" is one piece by 0.0008, less than the
		 * float steps of a score past 16384 (long lines reach it).
		 */
		m_piece(SP "C", -0.3f, SPM_NORMAL);
		m_piece("D", -0.9508f, SPM_NORMAL);
		m_piece(SP "CD", -1.25f, SPM_NORMAL);
		m_trainer(types[ti], 0);
		if ((m = m_load(err, sizeof err)) == NULL) {
			TEST(0, "cache slots: %s", err);
			return;
		}
		a = spm_enc_new(m);
		w = spm_enc_new(m);
		spm_enc_whole_lines(w);
		next = bad = words = 0;
		for (i = 0; i < LINES; i++) {
			/* One line in 100 of 4,000 words, the rest of 40. */
			size_t nw = i % 100 == 99 ? 4000 : PER, o = 0, x;
			long ka, kw;

			for (j = 0; j < nw; j++) {
				r = r * 1103515245 + 12345;
				if (j % 7 == 3) {
					memcpy(line + o, "CD ", 3);
					o += 3;
					continue;
				}
				/*
				 * A third from 300 frequent words, the rest
				 * new; after a prefix of 0, 7, 14 or 21 bytes
				 * (words of one length that differ past 8).
				 */
				x = (r >> 16) % 3 == 0 ? (r >> 18) % 300 : next++ % NW;
				memset(line + o, 'q', x % 4 * 7);
				o += x % 4 * 7;
				line[o++] = (char)('a' + x % 26);
				line[o++] = (char)('a' + x / 26 % 26);
				line[o++] = (char)('a' + x / 676 % 26);
				line[o++] = (char)('a' + x / 17576 % 26);
				line[o++] = ' ';
			}
			words += nw;
			ka = spm_encode(a, (const uint8_t *)line, o);
			kw = spm_encode(w, (const uint8_t *)line, o);
			if (ka != kw || ka < 0) {
				bad++;
				continue;
			}
			for (k = 0; k < (size_t)ka; k++)
				if (spm_tokens(a)[k].id != spm_tokens(w)[k].id ||
				    spm_tokens(a)[k].len != spm_tokens(w)[k].len ||
				    memcmp(spm_tokens(a)[k].s, spm_tokens(w)[k].s,
				    spm_tokens(a)[k].len) != 0) {
					bad++;
					break;
				}
		}
		TEST(bad == 0, "cache slots (%s): %zu words, %zu of them new, give "
		    "the whole lines' tokens (%zu lines differ)",
		    ti == 0 ? "unigram" : "BPE", words, next, bad);
		spm_enc_free(a);
		spm_enc_free(w);
		spm_model_free(m);
	}
}

/*
 * A charsmap (darts-clone's layout, as the model keeps it) from rules
 * key -> value, into blob (its size returned): the trie's units, each
 * node's children at base ^ byte, its value at base ^ 0 (bit 31 set),
 * the bases taken first-fit, one node's each; then the values,
 * NUL-terminated.
 */
static size_t
charsmap_build(const char *const (*rule)[2], size_t nr, uint8_t *blob, size_t cap)
{
	enum { NU = 4096 };
	static uint32_t u[NU];
	static uint8_t used[NU], base[NU];
	static char str[1024];
	/* The trie as nodes: a byte path from the root, with its value. */
	struct { char key[16]; size_t len; int val; uint32_t cell; } nd[128];
	size_t nn = 1, i, j, k, ns = 0, top = 0;

	memset(u, 0, sizeof u);
	memset(used, 0, sizeof used);
	memset(base, 0, sizeof base);
	memset(nd, 0, sizeof nd);
	nd[0].val = -1;
	for (i = 0; i < nr; i++) {
		size_t kl = strlen(rule[i][0]);

		for (j = 1; j <= kl; j++) {
			for (k = 0; k < nn; k++)
				if (nd[k].len == j && memcmp(nd[k].key, rule[i][0], j) == 0)
					break;
			if (k == nn) {
				memcpy(nd[nn].key, rule[i][0], j);
				nd[nn].len = j;
				nd[nn].val = -1;
				nn++;
			}
			if (j == kl) {
				nd[k].val = (int)ns;
				strcpy(str + ns, rule[i][1]);
				ns += strlen(rule[i][1]) + 1;
			}
		}
	}
	used[0] = 1;
	/* Nodes by depth: a parent's cell is known before its children's. */
	for (j = 0; j <= 16; j++)
		for (k = 0; k < nn; k++) {
			uint8_t lab[256];
			size_t nl = 0, b, c;

			if (nd[k].len != j)
				continue;
			for (i = 0; i < nn; i++)
				if (nd[i].len == j + 1 && memcmp(nd[i].key, nd[k].key, j) == 0)
					lab[nl++] = (uint8_t)nd[i].key[j];
			if (nl == 0 && nd[k].val < 0)
				continue;
			/* No two nodes share a base (the label is the only check). */
			for (b = 256; ; b++) {
				if (base[b] || (nd[k].val >= 0 && used[b]))
					continue;
				for (c = 0; c < nl && !used[b ^ lab[c]]; c++)
					;
				if (c == nl && b != nd[k].cell)
					break;
			}
			base[b] = 1;
			u[nd[k].cell] |= (uint32_t)(nd[k].cell ^ b) << 10;
			if (nd[k].val >= 0) {
				u[nd[k].cell] |= 1u << 8;
				u[b] = 0x80000000u | (uint32_t)nd[k].val;
				used[b] = 1;
			}
			for (c = 0; c < nl; c++) {
				for (i = 0; i < nn; i++)
					if (nd[i].len == j + 1 && memcmp(nd[i].key, nd[k].key, j) == 0 &&
					    (uint8_t)nd[i].key[j] == lab[c])
						nd[i].cell = (uint32_t)(b ^ lab[c]);
				u[b ^ lab[c]] = lab[c];
				used[b ^ lab[c]] = 1;
			}
			if ((b | 255) + 1 > top)
				top = (b | 255) + 1;
		}
	if (4 + 4 * top + ns > cap)
		return 0;
	blob[0] = (uint8_t)(4 * top);
	blob[1] = (uint8_t)(4 * top >> 8);
	blob[2] = (uint8_t)(4 * top >> 16);
	blob[3] = 0;
	for (i = 0; i < top; i++)
		for (k = 0; k < 4; k++)
			blob[4 + 4 * i + k] = (uint8_t)(u[i] >> (8 * k));
	memcpy(blob + 4 + 4 * top, str, ns);
	return 4 + 4 * top + ns;
}

/*
 * The normalizer's tables for characters that need no search (ASCII,
 * two- and three-byte characters) against rules that go on past such a
 * character: a letter, a space and a two-byte letter each followed by a
 * combining mark, a two-byte character mapped to another, and to a
 * space, a three-byte one mapped to a space, and one followed by a
 * combining mark (after one that is not).  The
 * expectations are spm_encode 0.1.97's pieces on this model.
 */
static void
test_charsmap_runs(void)
{
	static const char *const rule[][2] = {
		{ "\xd0\xb5\xcc\x88", "\xd1\x91" },	/* е + U+0308: ё */
		{ "\xd0\xb0", "\xd0\x90" },		/* а: А */
		{ "\xc2\xa0", " " },			/* NBSP: a space */
		{ " \xcc\x81", "\xcc\x81" },		/* space + U+0301: the mark */
		{ "a\xcc\x8a", "\xc3\xa5" },		/* a + U+030A: å */
		{ "\xe3\x80\x80", " " },		/* U+3000: a space */
		{ "\xe0\xa4\x95\xe0\xa4\xbc", "\xe0\xa5\x98" },	/* क + ़: क़ */
	};
	static const char text[] = "\xd0\xb0\xd0\xb5 \xd0\xb5\xd0\xb5\xcc\x88 "
	    "\xcc\x81x ba\xcc\x8a\xc2\xa0\xd0\xb5\xc2\xa0\xd0\xb5\xc2\xa0" "a "
	    "\xe4\xb8\xad\xe3\x80\x80\xe6\x96\x87\xe0\xa4\x95\xe0\xa4\x95\xe0\xa4\xbc\xe0\xa4\x95";
	static uint8_t blob[4 + 4 * 4096 + 1024];
	struct spm_model *m;
	struct spm_enc *e;
	const char *s;
	size_t n, k;

	k = charsmap_build(rule, sizeof rule / sizeof *rule, blob, sizeof blob);
	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece(SP, -1, SPM_NORMAL);
	m_charsmap(blob, k);
	m = m_loaded("a charsmap of seven rules");
	if (m == NULL)
		return;
	e = spm_enc_new(m);
	s = spm_normalize(e, (const uint8_t *)text, sizeof text - 1, &n);
	TEST_STR(s != NULL ? s : "(null)",
	    SP "\xd0\x90\xd0\xb5" SP "\xd0\xb5\xd1\x91\xcc\x81x" SP
	    "b\xc3\xa5" SP "\xd0\xb5" SP "\xd0\xb5" SP "a" SP
	    "\xe4\xb8\xad" SP "\xe6\x96\x87\xe0\xa4\x95\xe0\xa5\x98\xe0\xa4\x95",
	    "rules that go on past a character the tables give");
	spm_enc_free(e);
	spm_model_free(m);
}

static void
test_lines(void)
{
	static const char text[] = "a\r\n\nb\xff\nlast";
	struct sw_lines *r = sw_lines_open_mem((const uint8_t *)text, sizeof text - 1);
	const uint8_t *p;
	size_t n;
	int k = 0;

	TEST(sw_lines_next_raw(r, &p, &n) == 1 && n == 2 && memcmp(p, "a\r", 2) == 0, "a CR stays");
	TEST(sw_lines_next_raw(r, &p, &n) == 1 && n == 0, "an empty line");
	TEST(sw_lines_next_raw(r, &p, &n) == 1 && n == 2, "invalid UTF-8 passes");
	TEST(sw_lines_next_raw(r, &p, &n) == 1 && n == 4, "a last line without newline");
	k = sw_lines_next_raw(r, &p, &n);
	TEST(k == 0 && sw_lines_lineno(r) == 4, "then the end");
	sw_lines_free(r);
	TEST(spm_guess_text_vocab((const uint8_t *)"'a_'\n'b_'\n", 10) != NULL, "a T2T vocabulary is named");
	TEST(spm_guess_text_vocab((const uint8_t *)"the 100\nof 90\n", 14) != NULL, "a fairseq dict.txt is named");
	TEST(spm_guess_text_vocab((const uint8_t *)"[PAD]\n[UNK]\n##s\n", 16) != NULL, "a BERT vocab.txt is named");
}

/* id:piece of each token, with specials. */
static const char *
enc_sp(struct spm_model *m, const struct spm_special *sp, size_t nsp,
    const char *text)
{
	return enc_with(m, sp, nsp, text, ENC_BOTH);
}

static void
test_specials(void)
{
	struct spm_model *m;
	struct spm_special sp[SPM_MEGATRON_SPECIALS], two[2];
	size_t k;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	m_piece("<s>", 0, SPM_CONTROL);		/* 1 */
	m_piece("</s>", 0, SPM_CONTROL);	/* 2 */
	m_piece("<CLS>", 0, SPM_USER_DEFINED);	/* 3 */
	m_piece(SP "a", -1, SPM_NORMAL);	/* 4 */
	m_piece(SP "b", -1, SPM_NORMAL);	/* 5 */
	m_piece("a", -2, SPM_NORMAL);		/* 6 */
	m_piece("b", -2, SPM_NORMAL);		/* 7 */
	m_piece(SP, -3, SPM_NORMAL);		/* 8 */
	m_trainer(SPM_UNIGRAM, 0);
	m = m_loaded("specials model");
	if (m == NULL)
		return;
	k = spm_megatron_specials(m, sp);
	TEST_INT(k, ==, 7, "Megatron: seven specials");
	TEST(k == 7 && strcmp(sp[0].s, "<CLS>") == 0 && sp[0].id == 3,
	    "<CLS> is the model's piece, its id");
	TEST(k == 7 && strcmp(sp[1].s, "<SEP>") == 0 && sp[1].id == 9 &&
	    strcmp(sp[2].s, "<EOD>") == 0 && sp[2].id == 10 &&
	    strcmp(sp[3].s, "<MASK>") == 0 && sp[3].id == 11,
	    "<SEP> <EOD> <MASK> take the ids after the model's, in order");
	TEST(k == 7 && sp[4].len == 5 && memcmp(sp[4].s, "<PAD>", 5) == 0 &&
	    sp[4].id == 12, "no pad id: <PAD>, the next id");
	TEST(k == 7 && sp[5].len == 3 && memcmp(sp[5].s, "<s>", 3) == 0 &&
	    sp[5].id == 1 && sp[6].len == 4 && sp[6].id == 2,
	    "bos and eos: the model's pieces");
	TEST_STR(enc_sp(m, sp, k, "a<s>b"), "4:" SP "a 1:<s> 5:" SP "b",
	    "the text on each side is encoded apart (each with its dummy prefix)");
	TEST_STR(enc_sp(m, sp, k, "<s></s>"), "1:<s> 2:</s>",
	    "specials side by side: nothing between them");
	TEST_STR(enc_sp(m, sp, k, "b<SE<SEP>"), "5:" SP "b 0:<SE 9:<SEP>",
	    "a special's start inside text that is not one");
	TEST_STR(enc_sp(m, sp, k, "<EOD>"), "10:<EOD>",
	    "a special past the model's pieces");
	TEST_STR(enc_sp(m, sp, k, "a b"), "4:" SP "a 5:" SP "b",
	    "no special: as without them");
	TEST_STR(enc_sp(m, sp, k, ""), "", "empty: no tokens");
	/* Ties: the earliest place first; at one place, the first listed. */
	two[0] = (struct spm_special){ "ab", 2, 100 };
	two[1] = (struct spm_special){ "a", 1, 101 };
	TEST_STR(enc_sp(m, two, 2, "bab"), "5:" SP "b 100:ab",
	    "at one place the first listed wins");
	two[0] = (struct spm_special){ "a", 1, 101 };
	two[1] = (struct spm_special){ "ab", 2, 100 };
	TEST_STR(enc_sp(m, two, 2, "bab"), "5:" SP "b 101:a 5:" SP "b",
	    "listed the other way, the other wins");
	two[0] = (struct spm_special){ "ba", 2, 8 };
	two[1] = (struct spm_special){ "a", 1, 101 };
	TEST_STR(enc_sp(m, two, 2, "aba"), "101:a 8:ba",
	    "the earliest place wins over the list order");
	TEST_STR(enc_sp(m, two, 2, "bbaa"), "5:" SP "b 8:ba 101:a",
	    "a special that starts before an earlier-listed one ends");
	two[0] = (struct spm_special){ "", 0, 7 };
	TEST_STR(enc_sp(m, two, 1, "a"), "(error)", "an empty special text is refused");
	two[0] = (struct spm_special){ "a", 1, -1 };
	TEST_STR(enc_sp(m, two, 1, "a"), "(error)", "a negative id is refused");
	spm_model_free(m);
}

/*
 * The word cache adds a piece's score to the line's as floats, where
 * upstream rounds the double sum to float: equal for every pair of
 * floats (53 bits >= 2 * 24 + 2), checked here on random pairs of any
 * exponent and on near ties.
 */
/*
 * The lattice's trie of a few thousand pieces of one to three-byte
 * characters, built block by block (the last DA_OPEN blocks open): each
 * piece, alone, is one token (every piece scores -1, so one piece beats
 * any path of two), and a piece less its last character, when that is
 * no piece, is not one piece (more than one token, or the unknown
 * id), nor is any other text made the same way that is no piece (no
 * cell answers for a node it is not).
 */
static void
test_big_trie(void)
{
	static const char *const ch[] = {
		"a", "b", "e", "k", "z", "\xc3\xa9", "\xc3\xbc", "\xd0\xb4",
		"\xe4\xb8\x80", "\xe4\xba\x8c", "\xe5\xad\x97", "\xe6\x97\xa5",
		"\xe0\xb8\x81", "\xef\xbc\xa1"
	};
	enum { NP = 2500 };
	static char text[NP][20];
	char err[RP_ERRMAX], want[16], q[20];
	struct spm_model *m;
	const char *g;
	uint32_t r = 12345;
	size_t i, j, k, bad = 0, badq = 0, nq = 0;

	m_reset();
	m_piece("<unk>", 0, SPM_UNKNOWN);
	for (i = 0; i < NP; i++) {
		do {
			text[i][0] = '\0';
			r = r * 1103515245 + 12345;
			for (k = 0, j = 1 + (r >> 16) % 5; k < j; k++) {
				r = r * 1103515245 + 12345;
				strcat(text[i], ch[(r >> 16) % (sizeof ch / sizeof *ch)]);
			}
			for (j = 0; j < i && strcmp(text[j], text[i]) != 0; j++)
				;
		} while (j < i);
		m_piece(text[i], -1, SPM_NORMAL);
	}
	m_trainer(SPM_UNIGRAM, 0);
	m_norm(0, 0, 0);
	if ((m = m_load(err, sizeof err)) == NULL) {
		TEST(0, "big trie: %s", err);
		return;
	}
	for (i = 0; i < NP; i++) {
		snprintf(want, sizeof want, "%zu", i + 1);
		bad += strcmp(enc(m, text[i], 0), want) != 0;
		/* Less its last character (continuation bytes go with it). */
		k = strlen(text[i]);
		while (k > 0 && ((uint8_t)text[i][--k] & 0xc0) == 0x80)
			;
		if (k == 0)
			continue;
		memcpy(q, text[i], k);
		q[k] = '\0';
		for (j = 0; j < NP && strcmp(text[j], q) != 0; j++)
			;
		if (j < NP)
			continue;
		nq++;
		g = enc(m, q, 0);
		badq += strchr(g, ' ') == NULL && strcmp(g, "0") != 0;
	}
	/* Texts made as the pieces were, that are none: never one piece. */
	for (i = 0; i < 4 * NP; i++) {
		q[0] = '\0';
		r = r * 1103515245 + 12345;
		for (k = 0, j = 1 + (r >> 16) % 5; k < j; k++) {
			r = r * 1103515245 + 12345;
			strcat(q, ch[(r >> 16) % (sizeof ch / sizeof *ch)]);
		}
		for (j = 0; j < NP && strcmp(text[j], q) != 0; j++)
			;
		if (j < NP)
			continue;
		nq++;
		g = enc(m, q, 0);
		badq += strchr(g, ' ') == NULL && strcmp(g, "0") != 0;
	}
	TEST(bad == 0, "big trie: each of %d pieces is its own token (%zu not)",
	    NP, bad);
	TEST(nq > 500 && badq == 0, "big trie: %zu texts that are no piece "
	    "are not one piece (%zu are)", nq, badq);
	spm_model_free(m);
}

static void
test_float_sum(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	long bad = 0, i;

	for (i = 0; i < 2000000; i++) {
		uint32_t ua, ub;
		float a, b;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ua = (uint32_t)x;
		ub = (uint32_t)(x >> 32);
		if (i & 1)	/* exponents close together: the near ties */
			ub = (ub & 0x807fffffu) | (ua & 0x7f800000u);
		memcpy(&a, &ua, 4);
		memcpy(&b, &ub, 4);
		if (!isfinite(a) || !isfinite(b) || !isfinite(a + b))
			continue;
		if ((float)((double)a + (double)b) != a + b)
			bad++;
	}
	TEST_INT(bad, ==, 0, "float((double)a + b) equals the float sum a + b");
}

int
main(void)
{
	test_unigram_ties();
	test_float_trap();
	test_user_defined();
	test_unknown_and_bytes();
	test_bpe_ties();
	test_nul_keys();
	test_refusals();
	test_extra_and_decode();
	test_normalizer();
	test_charsmap();
	test_charsmap_runs();
	test_vector_models();
	test_cache_agrees();
	test_cache_slots();
	test_lines();
	test_specials();
	test_float_sum();
	test_big_trie();
	return tap_done();
}
