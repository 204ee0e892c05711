/*
 * Length statistics: nearest-rank percentiles against a sort of the
 * same lengths, power-of-2 buckets, and memory that follows the
 * distinct lengths.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lenstat.h"
#include "rng.h"
#include "tap.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of v[0..n), sorted. */
static uint64_t
nearest_rank(const uint64_t *v, size_t n, double p)
{
	size_t r = (size_t)(p / 100.0 * (double)n);

	if ((double)r < p / 100.0 * (double)n)
		r++;
	return v[r ? r - 1 : 0];
}

int
main(void)
{
	static const double ps[] = { 1, 25, 50, 90, 99, 99.9, 100 };
	struct lenstat s;
	struct rng r;
	uint64_t *v;
	size_t n, i, k, bad = 0, trial;

	ls_init(&s);
	TEST(ls_percentile(&s, 50) == 0 && ls_mean(&s) == 0.0,
	    "no lengths: percentiles and mean 0");
	ls_free(&s);

	TEST(ls_bucket(0) == 0 && ls_bucket(1) == 1 && ls_bucket(2) == 2 &&
	    ls_bucket(3) == 2 && ls_bucket(4) == 3 && ls_bucket(1023) == 10 &&
	    ls_bucket(1024) == 11 && ls_bucket(UINT64_MAX) == 64,
	    "buckets: 0, 1, 2-3, 4-7, ...");
	TEST(ls_bucket_lo(11) == 1024 && ls_bucket_hi(11) == 2047 &&
	    ls_bucket_lo(0) == 0 && ls_bucket_hi(0) == 0 &&
	    ls_bucket_hi(64) == UINT64_MAX, "and their bounds");

	rng_seed(&r, 5);
	v = malloc(5000 * sizeof(*v));
	for (trial = 0; trial < 200 && v != NULL; trial++) {
		n = 1 + rng_below(&r, 5000);
		ls_init(&s);
		for (i = 0; i < n; i++) {
			/* few distinct lengths, or many, or huge ones */
			v[i] = trial % 3 == 0 ? rng_below(&r, 8) :
			    trial % 3 == 1 ? rng_below(&r, 100000) :
			    (uint64_t)rng_below(&r, 1000) << 40;
			ls_add(&s, v[i]);
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		for (k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
			if (ls_percentile(&s, ps[k]) != nearest_rank(v, n, ps[k]))
				bad++;
		if (s.min != v[0] || s.max != v[n - 1] || s.n != n)
			bad++;
		ls_free(&s);
	}
	TEST(bad == 0, "percentiles are the nearest rank of the sorted lengths");
	free(v);

	ls_init(&s);
	for (i = 0; i < 1000000; i++)
		ls_add(&s, i % 37);
	TEST(s.used == 37 && s.cap <= 128,
	    "a million lengths of 37 values keep 37 counts (table of %zu)", s.cap);
	TEST(ls_percentile(&s, 50) == 18 && s.hist[ls_bucket(36)] > 0,
	    "and their median");
	ls_free(&s);
	return tap_done();
}
