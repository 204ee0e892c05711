/*
 * A small seeded pseudo-random generator: xoshiro256** with its state
 * filled from the seed by splitmix64.  The same seed gives the same
 * stream on every platform; it is not for secrets.
 */
#ifndef RECPIPE_RNG_H
#define RECPIPE_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rng {
	uint64_t	s[4];
};

/* Start the stream for 'seed' (any value, 0 included). */
void		rng_seed(struct rng *r, uint64_t seed);
/* The next 64 random bits. */
uint64_t	rng_next(struct rng *r);
/* A double in [0, 1) with 53 random bits. */
double		rng_double(struct rng *r);
/* An integer in [0, n) without modulo bias; 0 when n is 0. */
uint64_t	rng_below(struct rng *r, uint64_t n);
/* An integer in [lo, hi] (both included); lo when hi <= lo. */
int64_t		rng_range(struct rng *r, int64_t lo, int64_t hi);

#ifdef __cplusplus
}
#endif

#endif
