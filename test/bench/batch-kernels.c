/*
 * Timing of lib/batch's pipeline in-process (not a test):
 *	batch-kernels bench1 [N]        N sentences in one pair, sizes
 *	    1..299, filter 256/256, max_tokens 4096, multiple 8, shard 0 of 2
 *	batch-kernels scale PAIRS TOTAL  TOTAL sentences over PAIRS pairs
 *	    of different sizes, temperature 1.5, max_tokens 4096, shard 0 of 2
 * Prints the phases' CPU times and the peak RSS.  BK_ONEPASS=1 in the
 * environment sorts small epochs the way large ones are sorted.  Build:
 *	cc -O2 -Ilib -o build/batch-kernels test/bench/batch-kernels.c \
 *	    build/lib/librecpipe.a -lm
 */
#include <sys/resource.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "nprng.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long
maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int
main(int argc, char **argv)
{
	char err[BATCH_ERRMAX];
	struct batch_config c = BATCH_CONFIG_INIT;
	struct batch_data *d;
	struct batch_plan *p;
	struct batch_epoch_stats es;
	struct nprng r;
	uint64_t *n, total, i, j, id, s, m, items = 0, sum = 0;
	size_t k;
	int32_t *a, *b;
	double t0, t1, t2, t3;
	struct batch_item *it;
	int scale = argc > 1 && strcmp(argv[1], "scale") == 0;

	if (scale) {
		k = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
		total = argc > 3 ? strtoull(argv[3], NULL, 10) : 100000000;
	} else {
		k = 1;
		total = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	}
	n = calloc(k, sizeof *n);
	nprng_seed(&r, 7);
	if (k == 1)
		n[0] = total;
	else {
		/* Log-uniform weights over two decades, scaled to total. */
		double *w = calloc(k, sizeof *w), ws = 0;
		uint64_t acc = 0;

		for (i = 0; i < k; i++) {
			w[i] = exp(nprng_double(&r) * 4.6);
			ws += w[i];
		}
		for (i = 0; i < k; i++) {
			n[i] = (uint64_t)(w[i] / ws * (double)total);
			if (n[i] == 0)
				n[i] = 1;
			acc += n[i];
		}
		n[0] += total - acc;
		free(w);
	}
	if (getenv("BK_ONEPASS") != NULL)
		batch_set_sort_chunk(0);	/* the large-epoch way */
	t0 = now();
	d = batch_data_new(k, n, 1, err, sizeof err);
	a = malloc(65536 * sizeof *a);
	b = malloc(65536 * sizeof *b);
	for (i = 0; i < k; i++)
		for (j = 0; j < n[i]; j += 65536) {
			uint64_t c2 = n[i] - j < 65536 ? n[i] - j : 65536, q;

			for (q = 0; q < c2; q++) {
				a[q] = 1 + (int32_t)(nprng_next32(&r) % 299);
				b[q] = 1 + (int32_t)(nprng_next32(&r) % 299);
			}
			batch_data_set(d, i, j, c2, a, b, err, sizeof err);
		}
	t1 = now();
	c.lim.max_tokens = 4096;
	c.lim.mult = 8;
	c.num_shards = 2;
	if (scale) {
		c.sampling = BATCH_SAMPLING_TEMPERATURE;
		c.temperature = 1.5;
	} else {
		c.max_source_positions = 256;
		c.max_target_positions = 256;
		c.rebuild_batches = 1;
	}
	if ((p = batch_plan_new(d, &c, err, sizeof err)) == NULL ||
	    batch_plan_epoch(p, 1, 0, err, sizeof err) == -1) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	t2 = now();
	batch_plan_stats(p, &es);
	it = malloc(1 << 20 << 4);
	for (s = 0; s < es.steps; s++) {
		m = batch_plan_step(p, 0, s, &id);
		if (id != UINT64_MAX) {
			batch_plan_batch(p, id, it);
			for (i = 0; i < m; i++)
				sum += it[i].index + it[i].pair;
			items += m;
		}
	}
	t3 = now();
	printf("pairs %zu sentences %llu virtual %llu filtered %llu batches %llu "
	    "steps %llu items(shard 0) %llu (%llu)\n", k,
	    (unsigned long long)total, (unsigned long long)es.virtual_size,
	    (unsigned long long)es.filtered, (unsigned long long)es.batches,
	    (unsigned long long)es.steps, (unsigned long long)items,
	    (unsigned long long)(sum & 0xffff));
	printf("sizes %.3f s, epoch %.3f s, read shard %.3f s; peak RSS %ld MB "
	    "(%.2f bytes/sentence)\n", t1 - t0, t2 - t1, t3 - t2,
	    maxrss_kb() / 1024, maxrss_kb() * 1024.0 / (double)total);
	batch_plan_free(p);
	batch_data_free(d);
	return 0;
}
