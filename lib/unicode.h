/*
 * Unicode tables for the text tools, generated from one named Unicode
 * version (UNICODE_VERSION) by scripts/gen-unicode, and UTF-8 helpers.
 */
#ifndef RECPIPE_UNICODE_H
#define RECPIPE_UNICODE_H

#include <stddef.h>
#include <stdint.h>

#define UNICODE_VERSION "14.0.0"

/* General categories; UC_Cn (unassigned) is 0. */
enum uni_cat {
	UC_Cn = 0, UC_Lu, UC_Ll, UC_Lt, UC_Lm, UC_Lo, UC_Mn, UC_Mc, UC_Me,
	UC_Nd, UC_Nl, UC_No, UC_Pc, UC_Pd, UC_Ps, UC_Pe, UC_Pi, UC_Pf, UC_Po,
	UC_Sm, UC_Sc, UC_Sk, UC_So, UC_Zs, UC_Zl, UC_Zp, UC_Cc, UC_Cf, UC_Cs,
	UC_Co
};

enum uni_cat	uni_category(uint32_t cp);
/* Two-letter name of a category ("Lu"). */
const char	*uni_catname(enum uni_cat c);

/*
 * Python's str.lower() of one code point (full case mapping, e.g.
 * U+0130 -> "i\u0307"): writes up to 3 code points to out, returns how many.
 */
int		 uni_lower(uint32_t cp, uint32_t out[3]);
/*
 * Full canonical decomposition of one code point (Hangul included),
 * without reordering: writes up to 'max' code points, returns how many
 * (1 and out[0] == cp when there is none).  18 is always enough.
 */
int		 uni_decompose(uint32_t cp, uint32_t *out, int max);
/* Canonical combining class. */
int		 uni_ccc(uint32_t cp);
/*
 * NFD of a code point sequence: decompose each, then canonical
 * ordering.  Writes the result to (*out)[0..] (grown as needed, *cap
 * its size; *out may be NULL with *cap 0).  Returns its length, or -1
 * with errno ENOMEM.
 */
long		 uni_nfd(const uint32_t *in, size_t n, uint32_t **out, size_t *cap);

/* Python's str.isspace() (the set str.strip() removes: 29 code points). */
int		 uni_is_pyspace(uint32_t cp);
/* General category L* or N* (tensor2tensor's alphanumeric set). */
int		 uni_is_alnum(uint32_t cp);
/*
 * Cased and Case_Ignorable as CPython's final-sigma rule uses them
 * (a code point that is both counts as case-ignorable only).
 */
int		 uni_is_cased(uint32_t cp);
int		 uni_is_case_ignorable(uint32_t cp);
/*
 * Python's str.lower() of a code point sequence, final sigma included
 * (U+03A3 becomes U+03C2 after a cased letter and not before one,
 * skipping case-ignorable code points).  Writes the result to
 * (*out)[0..] like uni_nfd().  Returns its length, or -1 with errno
 * ENOMEM.
 */
long		 uni_lower_str(const uint32_t *in, size_t n, uint32_t **out,
		    size_t *cap);

/*
 * Decode one UTF-8 sequence (strict: no overlongs, surrogates or
 * values above U+10FFFF).  Returns its length 1..4 and sets *cp, or 0
 * if p[0..n) does not start with a valid sequence.
 */
int		 uni_utf8_decode(const uint8_t *p, size_t n, uint32_t *cp);
/* Encode cp (<= 0x10FFFF) into 1..4 bytes at out; returns the length. */
int		 uni_utf8_encode(uint32_t cp, uint8_t out[4]);
/*
 * Length of the longest valid UTF-8 prefix of p[0..n): the one check of
 * UTF-8 (uni_utf8_decode()'s rule), fast on ASCII and on runs of two-
 * and three-byte sequences.
 */
size_t		 uni_utf8_valid_prefix(const uint8_t *p, size_t n);
/*
 * Where p[0..n), n > 0, starts with a sequence that is not valid UTF-8:
 * the length of its maximal subpart (a lead byte and the continuation
 * bytes that fit it, or 1), the unit that one U+FFFD replaces (as
 * Unicode advises, and Python's "replace" decoding does).
 */
size_t		 uni_utf8_bad_len(const uint8_t *p, size_t n);

#endif
