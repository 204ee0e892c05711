/*
 * Length statistics: see lenstat.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lenstat.h"

#define EMPTY	UINT64_MAX	/* no length is this long */

void
ls_init(struct lenstat *s)
{
	memset(s, 0, sizeof(*s));
	s->min = UINT64_MAX;
}

void
ls_free(struct lenstat *s)
{
	free(s->len);
	free(s->cnt);
	ls_init(s);
}

unsigned
ls_bucket(uint64_t len)
{
	unsigned b = 0;

	for (; len != 0; len >>= 1)
		b++;
	return b;
}

uint64_t
ls_bucket_lo(unsigned b)
{
	return b == 0 ? 0 : (uint64_t)1 << (b - 1);
}

uint64_t
ls_bucket_hi(unsigned b)
{
	return b == 0 ? 0 : b >= 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
}

static size_t
slot(const struct lenstat *s, uint64_t len)
{
	uint64_t h = len * 0x9e3779b97f4a7c15u;
	size_t i = (size_t)(h >> 17) & (s->cap - 1);

	while (s->len[i] != EMPTY && s->len[i] != len)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int
grow(struct lenstat *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 64, i, j, ocap = s->cap;
	uint64_t *ol = s->len, *oc = s->cnt;

	if (ncap > SIZE_MAX / sizeof(uint64_t)) {
		errno = ENOMEM;
		return -1;
	}
	if ((s->len = malloc(ncap * sizeof(uint64_t))) == NULL ||
	    (s->cnt = calloc(ncap, sizeof(uint64_t))) == NULL) {
		free(s->len);
		s->len = ol;
		s->cnt = oc;
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < ncap; i++)
		s->len[i] = EMPTY;
	s->cap = ncap;
	for (i = 0; i < ocap; i++)
		if (ol[i] != EMPTY) {
			j = slot(s, ol[i]);
			s->len[j] = ol[i];
			s->cnt[j] = oc[i];
		}
	free(ol);
	free(oc);
	return 0;
}

int
ls_add(struct lenstat *s, uint64_t len)
{
	size_t i;

	s->n++;
	s->sum += (double)len;
	if (len < s->min)
		s->min = len;
	if (len > s->max)
		s->max = len;
	s->hist[ls_bucket(len)]++;
	if (len == EMPTY)
		len = EMPTY - 1;	/* (not a length any record holds) */
	if (s->used + 1 > s->cap / 2 && grow(s) == -1)
		return -1;
	i = slot(s, len);
	if (s->len[i] == EMPTY) {
		s->len[i] = len;
		s->used++;
	}
	s->cnt[i]++;
	return 0;
}

double
ls_mean(const struct lenstat *s)
{
	return s->n ? s->sum / (double)s->n : 0.0;
}

static int
cmp_pair(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

uint64_t
ls_percentile(struct lenstat *s, double p)
{
	uint64_t rank, seen = 0, *pairs;
	size_t i, k;

	if (s->n == 0 || s->used == 0)
		return 0;
	if (!s->sorted) {
		/* the table becomes a sorted list of (length, count) pairs */
		if ((pairs = malloc(s->used * 2 * sizeof(uint64_t))) == NULL)
			return s->max;
		for (i = 0, k = 0; i < s->cap; i++)
			if (s->len[i] != EMPTY) {
				pairs[2 * k] = s->len[i];
				pairs[2 * k + 1] = s->cnt[i];
				k++;
			}
		qsort(pairs, k, 2 * sizeof(uint64_t), cmp_pair);
		for (i = 0; i < k; i++) {
			s->len[i] = pairs[2 * i];
			s->cnt[i] = pairs[2 * i + 1];
		}
		free(pairs);
		s->sorted = 1;
	}
	rank = (uint64_t)ceil(p / 100.0 * (double)s->n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < s->used; i++) {
		seen += s->cnt[i];
		if (seen >= rank)
			return s->len[i];
	}
	return s->max;
}
