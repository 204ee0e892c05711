/*
 * numpy's legacy RandomState (MT19937), draw for draw.  See nprng.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "nprng.h"

#define MT_M		397
#define MT_UPPER	0x80000000u
#define MT_LOWER	0x7fffffffu
#define MT_MATRIX	0x9908b0dfu

void
nprng_seed(struct nprng *r, uint32_t seed)
{
	unsigned k;

	r->mt[0] = seed;
	for (k = 1; k < NPRNG_N; k++)
		r->mt[k] = 1812433253u * (r->mt[k - 1] ^ (r->mt[k - 1] >> 30)) + k;
	r->i = NPRNG_N;
}

void
nprng_seed_array(struct nprng *r, const uint32_t *key, size_t n)
{
	size_t a = 1, b = 0, k;

	nprng_seed(r, 19650218u);
	if (n == 0) {
		static const uint32_t zero = 0;

		key = &zero;
		n = 1;
	}
	for (k = n > NPRNG_N ? n : NPRNG_N; k > 0; k--) {
		uint32_t prev = r->mt[a - 1];

		r->mt[a] = (r->mt[a] ^ ((prev ^ (prev >> 30)) * 1664525u)) +
		    key[b] + (uint32_t)b;
		if (++a >= NPRNG_N) {
			r->mt[0] = r->mt[NPRNG_N - 1];
			a = 1;
		}
		if (++b >= n)
			b = 0;
	}
	for (k = NPRNG_N - 1; k > 0; k--) {
		uint32_t prev = r->mt[a - 1];

		r->mt[a] = (r->mt[a] ^ ((prev ^ (prev >> 30)) * 1566083941u)) -
		    (uint32_t)a;
		if (++a >= NPRNG_N) {
			r->mt[0] = r->mt[NPRNG_N - 1];
			a = 1;
		}
	}
	r->mt[0] = 0x80000000u;
	r->i = NPRNG_N;
}

static void
regenerate(struct nprng *r)
{
	uint32_t *mt = r->mt, y;
	unsigned k;

	for (k = 0; k < NPRNG_N - MT_M; k++) {
		y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
		mt[k] = mt[k + MT_M] ^ (y >> 1) ^ (-(y & 1) & MT_MATRIX);
	}
	for (; k < NPRNG_N - 1; k++) {
		y = (mt[k] & MT_UPPER) | (mt[k + 1] & MT_LOWER);
		mt[k] = mt[k + MT_M - NPRNG_N] ^ (y >> 1) ^ (-(y & 1) & MT_MATRIX);
	}
	y = (mt[NPRNG_N - 1] & MT_UPPER) | (mt[0] & MT_LOWER);
	mt[NPRNG_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ (-(y & 1) & MT_MATRIX);
	r->i = 0;
}

static inline __attribute__((always_inline)) uint32_t
next32(struct nprng *r)
{
	uint32_t y;

	if (__builtin_expect(r->i >= NPRNG_N, 0))
		regenerate(r);
	y = r->mt[r->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

uint32_t
nprng_next32(struct nprng *r)
{
	return next32(r);
}

static inline uint64_t
next64(struct nprng *r)
{
	uint64_t hi = next32(r);

	return hi << 32 | next32(r);
}

uint64_t
nprng_next64(struct nprng *r)
{
	return next64(r);
}

double
nprng_double(struct nprng *r)
{
	uint32_t a = next32(r) >> 5;
	uint32_t b = next32(r) >> 6;

	return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* The smallest 2^j - 1 >= max (max > 0). */
static inline uint64_t
mask_of(uint64_t max)
{
	return UINT64_MAX >> __builtin_clzll(max);
}

static inline __attribute__((always_inline)) uint64_t
interval(struct nprng *r, uint64_t max)
{
	uint64_t mask, v;

	if (max == 0)
		return 0;
	mask = mask_of(max);
	if (max <= 0xffffffffu) {
		uint32_t m32 = (uint32_t)mask, v32;

		while ((v32 = next32(r) & m32) > max)
			;
		return v32;
	}
	while ((v = next64(r) & mask) > max)
		;
	return v;
}

uint64_t
nprng_interval(struct nprng *r, uint64_t max)
{
	return interval(r, max);
}

/*
 * Fisher-Yates from the top, one interval() per position.  The
 * positions drawn do not depend on the contents, so for big arrays
 * they are drawn LOOK steps ahead and their cache lines fetched
 * while earlier swaps run; the draws and swaps stay in numpy's order.
 */
#define LOOK	64

#define SHUFFLE_BODY(T) do {						\
	size_t i, ring[LOOK], ahead;					\
									\
	if (n < 2)							\
		return;							\
	if (n < ((size_t)1 << 15)) {					\
		for (i = n - 1; i > 0; i--) {				\
			size_t j = (size_t)interval(r, i);	\
			T t = x[i];					\
									\
			x[i] = x[j];					\
			x[j] = t;					\
		}							\
		return;							\
	}								\
	/* ring[i % LOOK] holds the j of position i once drawn. */	\
	for (ahead = n - 1; ahead > n - 1 - LOOK; ahead--) {		\
		size_t j = (size_t)interval(r, ahead);		\
									\
		ring[ahead % LOOK] = j;					\
		__builtin_prefetch(&x[j], 1);				\
	}								\
	for (i = n - 1; i > 0; i--) {					\
		size_t j = ring[i % LOOK];				\
		T t;							\
									\
		if (ahead > 0) {					\
			size_t q = (size_t)interval(r, ahead);	\
									\
			ring[ahead % LOOK] = q;				\
			__builtin_prefetch(&x[q], 1);			\
			ahead--;					\
		}							\
		t = x[i];						\
		x[i] = x[j];						\
		x[j] = t;						\
	}								\
} while (0)

void
nprng_shuffle32(struct nprng *r, uint32_t *x, size_t n)
{
	SHUFFLE_BODY(uint32_t);
}

void
nprng_shuffle64(struct nprng *r, uint64_t *x, size_t n)
{
	SHUFFLE_BODY(uint64_t);
}

void
nprng_shuffle(struct nprng *r, void *x, size_t n, size_t width)
{
	unsigned char *p = x, tmp[64];
	size_t i;

	if (width == 4) {
		nprng_shuffle32(r, x, n);
		return;
	}
	if (width == 8) {
		nprng_shuffle64(r, x, n);
		return;
	}
	for (i = n > 0 ? n - 1 : 0; i > 0; i--) {
		size_t j = (size_t)nprng_interval(r, i), off, c;

		if (j == i)
			continue;
		for (off = 0; off < width; off += c) {
			c = width - off < sizeof tmp ? width - off : sizeof tmp;
			memcpy(tmp, p + i * width + off, c);
			memcpy(p + i * width + off, p + j * width + off, c);
			memcpy(p + j * width + off, tmp, c);
		}
	}
}

void
nprng_permutation32(struct nprng *r, uint32_t *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (uint32_t)i;
	nprng_shuffle32(r, x, n);
}

void
nprng_permutation64(struct nprng *r, uint64_t *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = i;
	nprng_shuffle64(r, x, n);
}

int64_t
nprng_randint(struct nprng *r, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	return (int64_t)((uint64_t)lo +
	    nprng_interval(r, (uint64_t)hi - (uint64_t)lo - 1));
}

void
nprng_randint_fill(struct nprng *r, uint64_t n, uint64_t *out, size_t k)
{
	uint64_t max = n > 0 ? n - 1 : 0;
	size_t i;

	if (max == 0 || max > 0xffffffffu) {
		for (i = 0; i < k; i++)
			out[i] = interval(r, max);
		return;
	}
	/* The same draws as interval(), with the mask worked out once. */
	{
		uint32_t m32 = (uint32_t)mask_of(max), v;

		for (i = 0; i < k; i++) {
			while ((v = next32(r) & m32) > max)
				;
			out[i] = v;
		}
	}
}

int
nprng_choice_noreplace(struct nprng *r, uint64_t n, uint64_t *out, size_t k,
    char *err, size_t errlen)
{
	uint64_t *perm;

	if (k > n) {
		rp_seterr(err, errlen, "cannot take a larger sample than population "
		    "when replace is False");
		return -1;
	}
	if (n > SIZE_MAX / sizeof *perm ||
	    (perm = malloc((n > 0 ? n : 1) * sizeof *perm)) == NULL) {
		rp_seterr(err, errlen, "permutation of %llu: out of memory",
		    (unsigned long long)n);
		return -1;
	}
	nprng_permutation64(r, perm, (size_t)n);
	memcpy(out, perm, k * sizeof *out);
	free(perm);
	return 0;
}

/* numpy's kahan_sum, used only to check that p sums to 1. */
static double
kahan_sum(const double *p, size_t n)
{
	double sum, c, y, t;
	size_t i;

	if (n == 0)
		return 0.0;
	sum = p[0];
	c = 0.0;
	for (i = 1; i < n; i++) {
		y = p[i] - c;
		t = sum + y;
		c = (t - sum) - y;
		sum = t;
	}
	return sum;
}

int
nprng_choice_p(struct nprng *r, const double *p, size_t n, uint64_t *out,
    size_t k, char *err, size_t errlen)
{
	double *cdf, acc = 0.0, last;
	size_t i;

	if (n == 0) {
		rp_seterr(err, errlen, "a must be greater than 0 unless no samples "
		    "are taken");
		return k == 0 ? 0 : -1;
	}
	for (i = 0; i < n; i++)
		if (!(p[i] >= 0.0) || isinf(p[i])) {
			rp_seterr(err, errlen, "probabilities are not non-negative");
			return -1;
		}
	if (fabs(kahan_sum(p, n) - 1.0) > sqrt(2.220446049250313e-16)) {
		rp_seterr(err, errlen, "probabilities do not sum to 1");
		return -1;
	}
	if (n > SIZE_MAX / sizeof *cdf || (cdf = malloc(n * sizeof *cdf)) == NULL) {
		rp_seterr(err, errlen, "choice over %zu: out of memory", n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		acc += p[i];
		cdf[i] = acc;
	}
	last = cdf[n - 1];
	for (i = 0; i < n; i++)
		cdf[i] /= last;
	for (i = 0; i < k; i++) {
		double u = nprng_double(r);
		size_t lo = 0, hi = n;

		/* The number of cdf entries <= u (searchsorted, right). */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] <= u)
				lo = mid + 1;
			else
				hi = mid;
		}
		out[i] = lo;
	}
	free(cdf);
	return 0;
}

static double
pairwise(const double *a, size_t n)
{
	double r[8], res;
	size_t i, n2;

	if (n < 8) {
		res = 0.0;
		for (i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - n % 8; i += 8) {
			r[0] += a[i + 0];
			r[1] += a[i + 1];
			r[2] += a[i + 2];
			r[3] += a[i + 3];
			r[4] += a[i + 4];
			r[5] += a[i + 5];
			r[6] += a[i + 6];
			r[7] += a[i + 7];
		}
		res = ((r[0] + r[1]) + (r[2] + r[3])) +
		    ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	n2 = n / 2;
	n2 -= n2 % 8;
	return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

double
nprng_np_sum(const double *a, size_t n)
{
	return 0.0 + pairwise(a, n);
}
