/*
 * Random values by the length of their varint, for the tests of the
 * Example encoders.
 */
#ifndef VARINT_VALUES_H
#define VARINT_VALUES_H

#include <stdint.h>

#include "rng.h"

/* A value whose minimal varint takes 'k' bytes (1..10; 10 is negative). */
static inline int64_t
value_of_size(struct rng *r, int k)
{
	uint64_t lo, hi;

	if (k == 10)
		return -1 - (int64_t)rng_below(r, 1u << 30) * 12345;
	lo = k == 1 ? 0 : 1ull << (7 * (k - 1));
	hi = k == 9 ? (1ull << 63) - 1 : (1ull << (7 * k)) - 1;
	return (int64_t)(lo + rng_next(r) % (hi - lo + 1));
}

#endif
