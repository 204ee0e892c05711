/*
 * The pretokenizers of byte-level BPE: tiktoken's pat_str regexes as
 * hand-written matchers.
 *
 * Each pattern is an alternation that the regex engine (Rust's
 * fancy-regex over regex, in tiktoken) tries from left to right at the
 * start of the text, taking the first alternative that matches, with
 * greedy quantifiers that give back code points when what follows them
 * fails, and possessive ones that never do.  The matchers below follow
 * the alternatives in that order; where an alternative backtracks, the
 * comment says what the backtracking comes down to.  Classes are those of
 * unicode16_tables.c: L (Lu Ll Lt Lm Lo), N, M, White_Space (\s), and
 * "punct", what is none of L, N and \s ([^\s\p{L}\p{N}], marks included).
 *
 * ASCII is classified by one table look-up; UTF-8 is decoded only at a
 * byte >= 0x80.  The text is valid UTF-8 (the caller checks); a byte that
 * does not start a complete sequence is taken as one punct byte, so that
 * nothing is ever read past p + n.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pretok.h"
#include "unicode16_tables.h"

enum { C_OTHER, C_LU, C_LL, C_LT, C_LM, C_LO, C_M, C_N, C_WS };

#define BIT(c)	(1u << (c))
#define K_L	(BIT(C_LU) | BIT(C_LL) | BIT(C_LT) | BIT(C_LM) | BIT(C_LO))
#define K_N	BIT(C_N)
#define K_WS	BIT(C_WS)
#define K_PUNCT	(BIT(C_OTHER) | BIT(C_M))	/* [^\s\p{L}\p{N}] */
/* o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
#define K_UPPER	(BIT(C_LU) | BIT(C_LT) | BIT(C_LM) | BIT(C_LO) | BIT(C_M))
#define K_LOWER	(BIT(C_LL) | BIT(C_LM) | BIT(C_LO) | BIT(C_M))

/*
 * BIT(class) of each ASCII byte, 0 for the bytes >= 0x80 (to be decoded).
 * In ASCII: Lu A-Z, Ll a-z, N 0-9, White_Space \t \n \v \f \r and space,
 * the rest punct (t-pretok.c checks that each byte behaves so).
 */
#define ACLS(b)	((b) >= 0x80 ? 0 :					\
	(b) >= 'A' && (b) <= 'Z' ? BIT(C_LU) :				\
	(b) >= 'a' && (b) <= 'z' ? BIT(C_LL) :				\
	(b) >= '0' && (b) <= '9' ? BIT(C_N) :				\
	(b) == ' ' || ((b) >= '\t' && (b) <= '\r') ? BIT(C_WS) : BIT(C_OTHER))
#define A4(b)	ACLS(b), ACLS((b) + 1), ACLS((b) + 2), ACLS((b) + 3)
#define A16(b)	A4(b), A4((b) + 4), A4((b) + 8), A4((b) + 12)
#define A64(b)	A16(b), A16((b) + 16), A16((b) + 32), A16((b) + 48)
static const uint16_t abit[256] = {
	A64(0), A64(64), A64(128), A64(192)
};

static inline unsigned
cls_cp(uint32_t cp)
{
	if (cp >= 0x110000)
		return C_OTHER;
	return pretok_s2_[((unsigned)pretok_s1_[cp >> 7] << 7) | (cp & 127)];
}

unsigned
pretok_class(uint32_t cp)
{
	return pretok_bits_[cls_cp(cp)];
}

/*
 * The class of the non-ASCII sequence at p[i], its length in *len.  A
 * decoder, not a check: the caller has checked the text (see above), so
 * it does not look for overlongs or surrogates, and only keeps every
 * read inside p[0..n) for a byte that starts no whole sequence.
 */
static unsigned
cls_utf8(const uint8_t *p, size_t n, size_t i, size_t *len)
{
	uint32_t cp;
	size_t k, j;
	uint8_t b = p[i];

	if (b >= 0xC2 && b <= 0xDF) {
		k = 2;
		cp = b & 0x1F;
	} else if (b >= 0xE0 && b <= 0xEF) {
		k = 3;
		cp = b & 0x0F;
	} else if (b >= 0xF0 && b <= 0xF4) {
		k = 4;
		cp = b & 0x07;
	} else {
		*len = 1;
		return C_OTHER;
	}
	if (n - i < k) {
		*len = 1;
		return C_OTHER;
	}
	for (j = 1; j < k; j++) {
		if ((p[i + j] & 0xC0) != 0x80) {
			*len = 1;
			return C_OTHER;
		}
		cp = cp << 6 | (p[i + j] & 0x3F);
	}
	*len = k;
	return cls_cp(cp);
}

/* BIT(class) of the code point at p[i], i < n; its length in *len. */
static inline unsigned
bit_at(const uint8_t *p, size_t n, size_t i, size_t *len)
{
	if (p[i] < 0x80) {
		*len = 1;
		return abit[p[i]];
	}
	return BIT(cls_utf8(p, n, i, len));
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The end of the run of ASCII letters from p[i], eight bytes at a time
 * (fold 0x20: A-Z and a-z; fold 0: a-z only).  Most words are short, so
 * this saves a branch per letter rather than time per byte.
 */
static inline size_t
ascii_letters(const uint8_t *p, size_t n, size_t i, uint64_t fold)
{
	const uint64_t ones = 0x0101010101010101ULL, high = ones * 0x80;
	uint64_t w, x, ge, gt, out;

	while (n - i >= 8) {
		memcpy(&w, p + i, 8);
		x = (w | fold * ones) & ~high;
		ge = x + ones * (0x80 - 'a');	/* high bit: x >= 'a' */
		gt = x + ones * (0x7F - 'z');	/* high bit: x > 'z' */
		out = (~ge | gt | w) & high;	/* not a letter (or >= 0x80) */
		if (out)
			return i + ((unsigned)__builtin_ctzll(out) >> 3);
		i += 8;
	}
	return i;
}
#define SWAR 1
#else
#define SWAR 0
#endif

/* The end of the run of code points of the classes of mask from p[i]. */
static inline size_t
run(const uint8_t *p, size_t n, size_t i, unsigned mask)
{
	size_t len;

	for (;;) {
#if SWAR
		if (mask == K_L || mask == K_LOWER)
			i = ascii_letters(p, n, i, mask == K_L ? 0x20 : 0);
#endif
		while (i < n && (abit[p[i]] & mask))
			i++;
		if (i >= n || p[i] < 0x80)
			return i;
		do {
			if (!(BIT(cls_utf8(p, n, i, &len)) & mask))
				return i;
			i += len;
		} while (i < n && p[i] >= 0x80);
	}
}

/*
 * The lower-case ASCII letter that the code point at p[i] is equal to
 * under Unicode simple case folding (with fold), or that it is (without),
 * 0 for none; its length in *len.  Of the letters of the contractions
 * (s t r e v m l d) only s has a non-ASCII fellow: U+017F LATIN SMALL
 * LETTER LONG S folds to s (K, KELVIN SIGN U+212A, would be the other,
 * but no contraction has a k).
 */
static inline unsigned
letter_at(const uint8_t *p, size_t n, size_t i, int fold, size_t *len)
{
	uint8_t b;

	if (i >= n)
		return 0;
	b = p[i];
	*len = 1;
	if (b >= 'a' && b <= 'z')
		return b;
	if (!fold)
		return 0;
	if (b >= 'A' && b <= 'Z')
		return b | 0x20;
	if (b == 0xC5 && n - i >= 2 && p[i + 1] == 0xBF) {
		*len = 2;
		return 's';
	}
	return 0;
}

/*
 * Length of 's 't 're 've 'm 'll 'd at p[i], p[i] == '\'', or 0: in
 * ASCII lower case only (gpt2), or case-insensitively (fold).
 */
static size_t
contraction(const uint8_t *p, size_t n, size_t i, int fold)
{
	size_t l1, l2;
	unsigned a, b;

	a = letter_at(p, n, i + 1, fold, &l1);
	switch (a) {
	case 's': case 't': case 'm': case 'd':
		return 1 + l1;
	case 'r': case 'v': case 'l':
		b = letter_at(p, n, i + 1 + l1, fold, &l2);
		if (b == (a == 'l' ? 'l' : 'e'))
			return 1 + l1 + l2;
		return 0;
	default:
		return 0;
	}
}

/*
 * The whitespace run at p[0]: its end in *end, the start of its last
 * code point in *last (0 when it has only one), the end of its last \r
 * or \n in *nl (0 when it has none).
 */
static void
ws_run(const uint8_t *p, size_t n, size_t *end, size_t *last, size_t *nl)
{
	size_t i = 0, len;

	*last = *nl = 0;
	while (i < n) {
		if (p[i] < 0x80) {
			if (!(abit[p[i]] & K_WS))
				break;
			if (p[i] == '\n' || p[i] == '\r')
				*nl = i + 1;
			len = 1;
		} else if (cls_utf8(p, n, i, &len) != C_WS)
			break;
		*last = i;
		i += len;
	}
	*end = i;
}

/*
 * gpt2, r50k_base, p50k_base:
 *	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
 *	|\s+(?!\S)|\s+
 */
static size_t
gpt2(const uint8_t *p, size_t n)
{
	size_t l0, l1, k, end, last, nl;
	unsigned b0, b1;

	if (abit[p[0]] & K_L)
		return run(p, n, 1, K_L);
	if (p[0] == ' ' && n > 1) {
		/* ` ?X+` takes the space when X follows it. */
		b1 = bit_at(p, n, 1, &l1);
		if (b1 & K_L)
			return run(p, n, 1 + l1, K_L);
		if (b1 & K_N)
			return run(p, n, 1 + l1, K_N);
		if (b1 & K_PUNCT)
			return run(p, n, 1 + l1, K_PUNCT);
	}
	if (p[0] == '\'' && (k = contraction(p, n, 0, 0)) != 0)
		return k;
	b0 = bit_at(p, n, 0, &l0);
	if (b0 & K_L)
		return run(p, n, l0, K_L);
	if (b0 & K_N)
		return run(p, n, l0, K_N);
	if (b0 & K_PUNCT)
		return run(p, n, l0, K_PUNCT);
	/*
	 * \s+(?!\S): the whole run at the end of the text, else the run
	 * less its last code point, which the next piece begins with;
	 * \s+ when that leaves nothing (a run of one).
	 */
	ws_run(p, n, &end, &last, &nl);
	if (end == n || last == 0)
		return end;
	return last;
}

/* Up to three N code points from p[0], p[0..l0) being the first. */
static size_t
digits3(const uint8_t *p, size_t n, size_t l0)
{
	size_t i = l0, len;
	int k;

	for (k = 1; k < 3 && i < n; k++) {
		if (!(bit_at(p, n, i, &len) & K_N))
			break;
		i += len;
	}
	return i;
}

/*
 * cl100k_base:
 *	'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
 *	| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
 */
static size_t
cl100k(const uint8_t *p, size_t n)
{
	size_t l0, l1 = 0, e, end, last, nl;
	unsigned b0, b1 = 0;

	if (abit[p[0]] & K_L)
		return run(p, n, 1, K_L);
	if (p[0] == ' ' && n > 1 && (abit[p[1]] & K_L))
		return run(p, n, 2, K_L);
	if (p[0] == '\'' && (e = contraction(p, n, 0, 1)) != 0)
		return e;
	b0 = bit_at(p, n, 0, &l0);
	if (b0 & K_L)
		return run(p, n, l0, K_L);
	if (b0 & K_N)
		return digits3(p, n, l0);
	if (l0 < n)
		b1 = bit_at(p, n, l0, &l1);
	/*
	 * [^\r\n\p{L}\p{N}]?+ is possessive: a code point that can be the
	 * prefix is taken, and then letters must follow.
	 */
	if ((b1 & K_L) && p[0] != '\r' && p[0] != '\n')
		return run(p, n, l0 + l1, K_L);
	if (b0 & K_PUNCT)
		e = run(p, n, l0, K_PUNCT);
	else if (p[0] == ' ' && (b1 & K_PUNCT))
		e = run(p, n, l0 + l1, K_PUNCT);
	else
		e = 0;
	if (e) {
		while (e < n && (p[e] == '\r' || p[e] == '\n'))
			e++;
		return e;
	}
	/*
	 * \s++$ takes a run that ends the text; \s*[\r\n] backtracks to
	 * the last \r or \n of the run; \s+(?!\S) leaves the run's last
	 * code point; \s is one.
	 */
	ws_run(p, n, &end, &last, &nl);
	if (end == n)
		return end;
	if (nl)
		return nl;
	return last ? last : l0;
}

/*
 * o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ at
 * p[q]: its end, or 0 when it does not match.  The first class takes its
 * whole run; if an Ll follows, the second takes the run from there.
 * Otherwise the first gives back code points until the second can
 * start, which it can at the last Lm, Lo or M of the run (the second
 * then matches that one code point alone, as nothing after it in the run
 * is of its class).
 */
static size_t
o200k_lower(const uint8_t *p, size_t n, size_t q)
{
	size_t i = q, len, lastlow = 0;
	unsigned b;

	while (i < n) {
		b = bit_at(p, n, i, &len);
		if (!(b & K_UPPER)) {
			if (b & BIT(C_LL))
				return run(p, n, i + len, K_LOWER);
			break;
		}
		i += len;
		if (b & K_LOWER)
			lastlow = i;
	}
	return lastlow;
}

/* o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*. */
static size_t
o200k_upper(const uint8_t *p, size_t n, size_t q)
{
	size_t len;

	if (q >= n || !(bit_at(p, n, q, &len) & K_UPPER))
		return 0;
	return run(p, n, run(p, n, q + len, K_UPPER), K_LOWER);
}

/* A word of o200k ending at e, with the contraction after it. */
static inline size_t
o200k_contraction(const uint8_t *p, size_t n, size_t e)
{
	if (e < n && p[e] == '\'')
		e += contraction(p, n, e, 1);
	return e;
}

/*
 * o200k_base:
 *	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
 *	  (?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
 *	  (?i:'s|'t|'re|'ve|'m|'ll|'d)?
 *	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 */
static size_t
o200k(const uint8_t *p, size_t n)
{
	size_t l0, l1 = 0, e = 0, end, last, nl;
	unsigned a0 = abit[p[0]], b0, b1 = 0;
	int prefix, word;

	if (a0 & BIT(C_LL)) {
		/* A lower-case ASCII letter: the first word alternative. */
		e = run(p, n, 1, K_LOWER);
	} else if ((a0 & (BIT(C_LU) | BIT(C_OTHER) | BIT(C_WS))) && n > 1 &&
	    (abit[p[1]] & BIT(C_LL)) && p[0] != '\r' && p[0] != '\n') {
		/* Its upper-case letter or prefix, then lower case. */
		e = run(p, n, 2, K_LOWER);
	}
	if (e)
		return o200k_contraction(p, n, e);
	/*
	 * The optional prefix is greedy, not possessive: each word
	 * alternative is tried with it, then without it (which can match
	 * only when p[0] is itself a letter or a mark).
	 */
	b0 = bit_at(p, n, 0, &l0);
	prefix = !(b0 & (K_L | K_N)) && p[0] != '\r' && p[0] != '\n';
	word = (b0 & (K_L | BIT(C_M))) != 0;
	if (prefix)
		e = o200k_lower(p, n, l0);
	if (!e && word)
		e = o200k_lower(p, n, 0);
	if (!e && prefix)
		e = o200k_upper(p, n, l0);
	if (!e && word)
		e = o200k_upper(p, n, 0);
	if (e)
		return o200k_contraction(p, n, e);
	if (b0 & K_N)
		return digits3(p, n, l0);
	if (l0 < n)
		b1 = bit_at(p, n, l0, &l1);
	if (b0 & K_PUNCT)
		e = run(p, n, l0, K_PUNCT);
	else if (p[0] == ' ' && (b1 & K_PUNCT))
		e = run(p, n, l0 + l1, K_PUNCT);
	if (e) {
		while (e < n && (p[e] == '\r' || p[e] == '\n' || p[e] == '/'))
			e++;
		return e;
	}
	/*
	 * \s*[\r\n]+ ends at the last \r or \n of the run; \s+(?!\S) is
	 * the whole run at the end of the text, else the run less its last
	 * code point; \s+ is the run (of one).
	 */
	ws_run(p, n, &end, &last, &nl);
	if (nl)
		return nl;
	if (end == n || last == 0)
		return end;
	return last;
}

size_t
pretok_next(enum pretok_pat pat, const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	switch (pat) {
	case PRETOK_CL100K:
		return cl100k(p, n);
	case PRETOK_O200K:
		return o200k(p, n);
	default:
		return gpt2(p, n);
	}
}
