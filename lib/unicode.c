/*
 * Unicode properties over the generated tables, and UTF-8 helpers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h"
#include "unicode_tables.h"

#define SBASE	0xAC00
#define LBASE	0x1100
#define VBASE	0x1161
#define TBASE	0x11A7
#define SCOUNT	11172
#define VCOUNT	21
#define TCOUNT	28
#define NCOUNT	(VCOUNT * TCOUNT)

static const char catnames[][3] = {
	"Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me",
	"Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
	"Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"
};

enum uni_cat
uni_category(uint32_t cp)
{
	return (enum uni_cat)(uni_props_(cp) & 31);
}

const char *
uni_catname(enum uni_cat c)
{
	if ((unsigned)c >= sizeof(catnames) / sizeof(catnames[0]))
		return "Cn";
	return catnames[c];
}

int
uni_is_pyspace(uint32_t cp)
{
	return (uni_props_(cp) & UNI_F_SPACE) != 0;
}

int
uni_is_alnum(uint32_t cp)
{
	unsigned c = uni_props_(cp) & 31;

	return (c >= UC_Lu && c <= UC_Lo) || (c >= UC_Nd && c <= UC_No);
}

int
uni_is_cased(uint32_t cp)
{
	return (uni_props_(cp) & UNI_F_CASED) != 0;
}

int
uni_is_case_ignorable(uint32_t cp)
{
	return (uni_props_(cp) & UNI_F_IGNORABLE) != 0;
}

int
uni_lower(uint32_t cp, uint32_t out[3])
{
	const uint32_t *m;
	uint32_t i;

	if (cp < 0x80) {
		out[0] = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
		return 1;
	}
	if ((m = uni_lower_(cp)) == NULL) {
		out[0] = cp;
		return 1;
	}
	for (i = 0; i < m[0]; i++)
		out[i] = m[1 + i];
	return (int)m[0];
}

int
uni_decompose(uint32_t cp, uint32_t *out, int max)
{
	const uint32_t *d;
	int i, n;

	if (max < 1)
		return 0;
	if (cp >= SBASE && cp < SBASE + SCOUNT) {
		uint32_t s = cp - SBASE, t = s % TCOUNT;

		n = t ? 3 : 2;
		if (max < n)
			n = max;
		out[0] = LBASE + s / NCOUNT;
		if (n > 1)
			out[1] = VBASE + (s % NCOUNT) / TCOUNT;
		if (n > 2)
			out[2] = TBASE + t;
		return n;
	}
	if ((d = uni_decomp_(cp, &n)) == NULL) {
		out[0] = cp;
		return 1;
	}
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		out[i] = d[i];
	return n;
}

static int
reserve(uint32_t **out, size_t *cap, size_t need)
{
	uint32_t *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / sizeof(uint32_t)) {
			errno = ENOMEM;
			return -1;
		}
		ncap *= 2;
	}
	if ((p = realloc(*out, ncap * sizeof(uint32_t))) == NULL)
		return -1;
	*out = p;
	*cap = ncap;
	return 0;
}

long
uni_nfd(const uint32_t *in, size_t n, uint32_t **out, size_t *cap)
{
	uint32_t buf[18];
	size_t len = 0, i, j, k;
	int m, c;

	for (i = 0; i < n; i++) {
		m = uni_decompose(in[i], buf, 18);
		if (reserve(out, cap, len + (size_t)m) == -1)
			return -1;
		memcpy(*out + len, buf, (size_t)m * sizeof(uint32_t));
		len += (size_t)m;
	}
	/* Canonical ordering: stable insertion sort of each run of marks. */
	for (i = 1; i < len; i++) {
		uint32_t x = (*out)[i];

		if ((c = uni_ccc(x)) == 0)
			continue;
		for (j = i; j > 0; j--) {
			k = (size_t)uni_ccc((*out)[j - 1]);
			if (k == 0 || (int)k <= c)
				break;
			(*out)[j] = (*out)[j - 1];
		}
		(*out)[j] = x;
	}
	return (long)len;
}

/* CPython's handle_capital_sigma(): is in[i] (U+03A3) word-final? */
static int
final_sigma(const uint32_t *in, size_t n, size_t i)
{
	size_t j;

	for (j = i; j > 0 && uni_is_case_ignorable(in[j - 1]); j--)
		;
	if (j == 0 || !uni_is_cased(in[j - 1]))
		return 0;
	for (j = i + 1; j < n && uni_is_case_ignorable(in[j]); j++)
		;
	return j == n || !uni_is_cased(in[j]);
}

long
uni_lower_str(const uint32_t *in, size_t n, uint32_t **out, size_t *cap)
{
	size_t len = 0, i;
	int m;

	for (i = 0; i < n; i++) {
		if (reserve(out, cap, len + 3) == -1)
			return -1;
		if (in[i] == 0x3A3) {
			(*out)[len++] = final_sigma(in, n, i) ? 0x3C2 : 0x3C3;
			continue;
		}
		m = uni_lower(in[i], *out + len);
		len += (size_t)m;
	}
	return (long)len;
}

int
uni_utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
	uint32_t c;

	if (n == 0)
		return 0;
	c = p[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c < 0xC2)
		return 0;
	if (c < 0xE0) {
		if (n < 2 || (p[1] & 0xC0) != 0x80)
			return 0;
		*cp = (c & 0x1F) << 6 | (p[1] & 0x3F);
		return 2;
	}
	if (c < 0xF0) {
		if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && p[1] < 0xA0)
			return 0;
		if (c == 0xED && p[1] >= 0xA0)
			return 0;
		*cp = (c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
		    (p[2] & 0x3F);
		return 3;
	}
	if (c < 0xF5) {
		if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
		    (p[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && p[1] < 0x90)
			return 0;
		if (c == 0xF4 && p[1] >= 0x90)
			return 0;
		*cp = (c & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
		    (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
		return 4;
	}
	return 0;
}

int
uni_utf8_encode(uint32_t cp, uint8_t out[4])
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | cp >> 6);
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xE0 | cp >> 12);
		out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | cp >> 18);
	out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * Text is mostly ASCII, or runs of one script: ASCII is skipped eight
 * bytes at a time, and two-byte sequences and three-byte ones that take
 * any two continuation bytes (E1..EC, EE..EF: CJK runs) are checked
 * inline; the rest goes to uni_utf8_decode().
 */
size_t
uni_utf8_valid_prefix(const uint8_t *p, size_t n)
{
	size_t i = 0;
	uint64_t w;
	uint32_t cp;
	unsigned c;
	int k;

	while (i < n) {
		c = p[i];
		if (c < 0x80) {
			if (n - i >= 8) {
				memcpy(&w, p + i, 8);
				if ((w & UINT64_C(0x8080808080808080)) == 0) {
					i += 8;
					continue;
				}
			}
			i++;
			continue;
		}
		if (c - 0xE1 < 0x0F && c != 0xED && n - i >= 3 &&
		    ((p[i + 1] ^ 0x80) | (p[i + 2] ^ 0x80)) < 0x40) {
			for (i += 3; n - i >= 3; i += 3) {
				c = p[i];
				if (c - 0xE1 >= 0x0F || c == 0xED ||
				    ((p[i + 1] ^ 0x80) | (p[i + 2] ^ 0x80)) >= 0x40)
					break;
			}
			continue;
		}
		if (c - 0xC2 < 0x1E && n - i >= 2 && (p[i + 1] ^ 0x80) < 0x40) {
			i += 2;
			continue;
		}
		if ((k = uni_utf8_decode(p + i, n - i, &cp)) == 0)
			break;
		i += (size_t)k;
	}
	return i;
}

size_t
uni_utf8_bad_len(const uint8_t *p, size_t n)
{
	unsigned c = p[0], lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 1;
	for (i = 1; i < len && i < n && p[i] >= lo && p[i] <= hi; i++) {
		lo = 0x80;
		hi = 0xBF;
	}
	return i < len ? i : 1;
}
