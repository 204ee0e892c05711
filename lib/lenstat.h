/*
 * Length statistics, the one rule for every tool that describes the
 * lengths of sequences or features (tfr-cat --stats, mmap-index info):
 * count, min, mean, max; exact percentiles by nearest rank (the
 * smallest length that at least p of the lengths do not exceed); a
 * histogram of power-of-2 buckets (bucket 0 holds 0, bucket b >= 1
 * holds 2^(b-1) .. 2^b - 1).
 *
 * The percentiles keep one count per distinct length: memory follows
 * the number of distinct lengths, never the number of lengths.
 */
#ifndef RECPIPE_LENSTAT_H
#define RECPIPE_LENSTAT_H

#include <stddef.h>
#include <stdint.h>

#define LS_BUCKETS	65

struct lenstat {
	uint64_t	 n, min, max;
	double		 sum;
	uint64_t	 hist[LS_BUCKETS];
	/* distinct lengths and their counts: an open-addressing table */
	uint64_t	*len, *cnt;
	size_t		 used, cap;
	int		 sorted;	/* ls_percentile() has sorted the table */
};

void		 ls_init(struct lenstat *s);
void		 ls_free(struct lenstat *s);
/* Add one length: 0, or -1 with errno ENOMEM (the statistics stay valid without it). */
int		 ls_add(struct lenstat *s, uint64_t len);
/* The mean (0 for no length). */
double		 ls_mean(const struct lenstat *s);
/*
 * The p-th percentile (0 < p <= 100) by nearest rank, 0 for no
 * length.  After the first call ls_add() may not be called again.
 */
uint64_t	 ls_percentile(struct lenstat *s, double p);
/* The bucket of a length, and a bucket's bounds. */
unsigned	 ls_bucket(uint64_t len);
uint64_t	 ls_bucket_lo(unsigned b);
uint64_t	 ls_bucket_hi(unsigned b);

#endif
