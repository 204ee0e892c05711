/*
 * Fuzz the byte-level BPE pretokenizers.  Input: text, split by each of
 * the three patterns.  For every text the pieces tile it (each at least
 * one byte, none past the end: the sanitizer sees any read beyond it).
 * For UTF-8 text, also what the patterns guarantee:
 *   - pieces end on code point boundaries;
 *   - a piece with a digit (N) is digits only: one to three of them
 *     (cl100k, o200k), or a run after an optional space (gpt2);
 *   - a piece that is not all whitespace holds whitespace only as its
 *     first code point (gpt2: a space; the others: not \r or \n), or as
 *     \r and \n after everything else (cl100k; o200k: with / among them).
 */
#include <stdint.h>
#include <stdlib.h>

#include "pretok.h"
#include "unicode.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* Decode the valid UTF-8 sequence at p; its length in *len. */
static uint32_t
decode(const uint8_t *p, size_t *len)
{
	if (p[0] < 0x80) {
		*len = 1;
		return p[0];
	}
	if (p[0] < 0xE0) {
		*len = 2;
		return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
	}
	if (p[0] < 0xF0) {
		*len = 3;
		return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
		    (p[2] & 0x3F);
	}
	*len = 4;
	return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
	    (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
}

static void
check_piece(enum pretok_pat pat, const uint8_t *p, size_t k)
{
	size_t i, len, ncp = 0, nn = 0, nonws = 0;
	int tail = 0;		/* in the trailing \r \n (/) run */
	uint32_t cp;
	unsigned c;

	for (i = 0; i < k; i += len) {
		cp = decode(p + i, &len);
		c = pretok_class(cp);
		ncp++;
		if (c & PRETOK_N)
			nn++;
		if (!(c & PRETOK_WS))
			nonws++;
	}
	if (nn) {
		if (pat == PRETOK_GPT2)
			check(nn == ncp || (nn == ncp - 1 && p[0] == ' '));
		else
			check(nn == ncp && ncp <= 3);
	}
	if (nonws == 0)
		return;
	for (i = 0; i < k; i += len) {
		cp = decode(p + i, &len);
		c = pretok_class(cp);
		if (tail) {
			check(cp == '\r' || cp == '\n' ||
			    (pat == PRETOK_O200K && cp == '/'));
			continue;
		}
		if (!(c & PRETOK_WS))
			continue;
		if (i == 0) {
			check(pat == PRETOK_GPT2 ? cp == ' ' :
			    cp != '\r' && cp != '\n');
			continue;
		}
		check(pat != PRETOK_GPT2 && (cp == '\r' || cp == '\n'));
		tail = 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int valid = uni_utf8_valid_prefix(data, size) == size;
	size_t i, k;
	int pat;

	for (pat = PRETOK_GPT2; pat <= PRETOK_O200K; pat++)
		for (i = 0; i < size; i += k) {
			k = pretok_next((enum pretok_pat)pat, data + i, size - i);
			check(k >= 1 && k <= size - i);
			if (!valid)
				continue;
			check(i + k == size || (data[i + k] & 0xC0) != 0x80);
			check_piece((enum pretok_pat)pat, data + i, k);
		}
	return 0;
}
