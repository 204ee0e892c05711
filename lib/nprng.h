/*
 * numpy's legacy RandomState, draw for draw: the Mersenne Twister
 * MT19937 with numpy's seeding, 53-bit doubles, masked-rejection
 * integers, Fisher-Yates shuffles and choice().  fairseq's orders,
 * samples and batch shuffles come from it, so every function here
 * consumes exactly the 32-bit outputs numpy 1.24 consumes for the same
 * call and returns the same values.  Not for secrets.
 *
 * Nothing here prints or exits; the few calls that can fail (memory,
 * bad probabilities) return -1 with a message in err.
 */
#ifndef RECPIPE_NPRNG_H
#define RECPIPE_NPRNG_H

#include <stddef.h>
#include <stdint.h>

#define NPRNG_N	624

struct nprng {
	uint32_t	mt[NPRNG_N];
	uint32_t	out[NPRNG_N];	/* mt tempered, made with each block */
	unsigned	i;		/* next word of out; NPRNG_N = regenerate */
};

/* RandomState(seed), np.random.seed(seed): init_genrand. */
void		nprng_seed(struct nprng *r, uint32_t seed);
/* RandomState([key[0], ..., key[n - 1]]): init_by_array (n >= 1). */
void		nprng_seed_array(struct nprng *r, const uint32_t *key, size_t n);

/* The next 32 bits of the stream (tempered). */
uint32_t	nprng_next32(struct nprng *r);
/* Two words, the first in the high half (numpy's next_uint64). */
uint64_t	nprng_next64(struct nprng *r);
/* random_sample(): a double in [0, 1) from two words (53 bits). */
double		nprng_double(struct nprng *r);
/*
 * random_interval(max): uniform in [0, max] by masked rejection (no
 * words for max = 0; 64-bit draws when max >= 2^32).
 */
uint64_t	nprng_interval(struct nprng *r, uint64_t max);

/* shuffle(x) for arrays (and lists) of n elements, in place. */
void		nprng_shuffle32(struct nprng *r, uint32_t *x, size_t n);
void		nprng_shuffle64(struct nprng *r, uint64_t *x, size_t n);
/* The same over n elements of 'width' bytes each (any width). */
void		nprng_shuffle(struct nprng *r, void *x, size_t n, size_t width);
/* permutation(n) into x[0 .. n - 1]. */
void		nprng_permutation32(struct nprng *r, uint32_t *x, size_t n);
void		nprng_permutation64(struct nprng *r, uint64_t *x, size_t n);

/*
 * randint(lo, hi): one integer in [lo, hi) (hi > lo; lo when hi <= lo).
 * randint(lo, hi, size=k) and choice(n, k) with replacement are k of
 * these in a row.
 */
int64_t		nprng_randint(struct nprng *r, int64_t lo, int64_t hi);
/* k draws of randint(0, n) (choice(n, k), replace=True) into out. */
void		nprng_randint_fill(struct nprng *r, uint64_t n, uint64_t *out,
		    size_t k);

/*
 * choice(n, k, replace=False) without p: the first k of permutation(n)
 * (all n are drawn whatever k is).  k <= n.  Returns 0, or -1 with a
 * message when memory runs out or k > n.
 */
int		nprng_choice_noreplace(struct nprng *r, uint64_t n, uint64_t *out,
		    size_t k, char *err, size_t errlen);

/*
 * choice(n, k, p=p): cdf = cumulative sums of p[0 .. n - 1] divided
 * by the last, one double per draw, the index the number of cdf entries
 * <= the double.  p must be finite, non-negative and sum to 1 within
 * sqrt(DBL_EPSILON) (numpy's check, with its Kahan sum).  Returns 0, or
 * -1 with numpy's message ("probabilities are not non-negative",
 * "probabilities do not sum to 1") or on no memory.
 */
int		nprng_choice_p(struct nprng *r, const double *p, size_t n,
		    uint64_t *out, size_t k, char *err, size_t errlen);

/*
 * numpy's float64 sum (np.sum / ndarray.sum on a contiguous array):
 * pairwise in blocks of 8 below 128 elements, halved above.  Python's
 * sum() is a plain left-to-right loop instead.
 */
double		nprng_np_sum(const double *a, size_t n);

#endif
