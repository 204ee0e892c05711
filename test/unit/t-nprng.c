/*
 * Unit tests for lib/nprng: numpy's legacy RandomState.  Known values
 * are written here; every value of ../shared/vectors/mmap/rng.json is
 * checked too when that file is present.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nprng.h"
#include "tap.h"

static void
known_values(void)
{
	static const uint32_t first0[4] = {
		2357136044u, 2546248239u, 3071714933u, 3626093760u
	};
	static const uint32_t perm0[10] = { 2, 8, 4, 9, 1, 6, 7, 3, 0, 5 };
	static const int64_t randint1[10] = { 3, 4, 0, 1, 3, 0, 0, 1, 4, 4 };
	static const uint32_t key[3] = { 1944279108u, 2, 1 };
	static const uint64_t choice_p[5] = { 0, 0, 1, 2, 2 };
	static const uint64_t noreplace[4] = { 6, 4, 5, 7 };
	static const double p[3] = { 0.5, 0.3, 0.2 };
	struct nprng r;
	uint32_t x[10];
	uint64_t o[5];
	char err[128];
	int i, ok;

	nprng_seed(&r, 0);
	for (ok = 1, i = 0; i < 4; i++)
		ok &= nprng_next32(&r) == first0[i];
	TEST(ok, "seed 0: first outputs");
	nprng_seed(&r, 0);
	nprng_permutation32(&r, x, 10);
	TEST(memcmp(x, perm0, sizeof x) == 0, "seed 0: permutation(10)");
	nprng_seed(&r, 0);
	TEST(nprng_double(&r) == 0.5488135039273248, "seed 0: random_sample");
	nprng_seed(&r, 1);
	for (ok = 1, i = 0; i < 10; i++)
		ok &= nprng_randint(&r, 0, 5) == randint1[i];
	TEST(ok, "seed 1: randint(0, 5) x 10");
	nprng_seed(&r, 4294967295u);
	TEST(nprng_next32(&r) == 419326371u && nprng_next32(&r) == 479346978u,
	    "seed 2^32 - 1: first outputs");
	nprng_seed(&r, 42);
	TEST(nprng_double(&r) == 0.3745401188473625 &&
	    nprng_double(&r) == 0.9507143064099162, "seed 42: random_sample");

	nprng_seed_array(&r, key, 3);
	TEST(nprng_next32(&r) == 1727664641u, "RandomState([h, 2, 1]): first word");
	nprng_seed_array(&r, key, 3);
	TEST(nprng_choice_p(&r, p, 3, o, 5, err, sizeof err) == 0 &&
	    memcmp(o, choice_p, sizeof choice_p) == 0,
	    "RandomState([h, 2, 1]): choice(3, 5, p)");
	nprng_seed_array(&r, key, 3);
	TEST(nprng_choice_noreplace(&r, 10, o, 4, err, sizeof err) == 0 &&
	    memcmp(o, noreplace, sizeof noreplace) == 0,
	    "RandomState([h, 2, 1]): choice(10, 4, replace=False)");

	/* Bad probabilities are refused as numpy refuses them. */
	{
		static const double neg[2] = { 1.5, -0.5 }, few[2] = { 0.5, 0.4 };

		TEST(nprng_choice_p(&r, neg, 2, o, 1, err, sizeof err) == -1 &&
		    strcmp(err, "probabilities are not non-negative") == 0,
		    "choice: negative p refused");
		TEST(nprng_choice_p(&r, few, 2, o, 1, err, sizeof err) == -1 &&
		    strcmp(err, "probabilities do not sum to 1") == 0,
		    "choice: p not summing to 1 refused");
	}
	TEST(nprng_choice_noreplace(&r, 3, o, 4, err, sizeof err) == -1,
	    "choice without replacement: k > n refused");

	/* interval: no draws for 0, masked rejection otherwise. */
	{
		struct nprng a, b;
		uint64_t v;

		nprng_seed(&a, 7);
		b = a;
		TEST(nprng_interval(&a, 0) == 0 && memcmp(&a, &b, sizeof a) == 0,
		    "interval(0) draws nothing");
		for (ok = 1, i = 0; i < 1000; i++) {
			v = nprng_interval(&a, 5);
			ok &= v <= 5;
		}
		TEST(ok, "interval(5) stays in [0, 5]");
		/* 64-bit bound: two words per draw, high word first. */
		nprng_seed(&a, 3);
		nprng_seed(&b, 3);
		v = nprng_interval(&a, (uint64_t)1 << 40);
		{
			uint64_t w;

			do {
				w = nprng_next64(&b) & (((uint64_t)1 << 41) - 1);
			} while (w > (uint64_t)1 << 40);
			TEST(v == w, "interval(2^40) uses 64-bit masked draws");
		}
	}

	/* The generic shuffle equals the typed ones. */
	{
		struct nprng a, b;
		uint64_t y[50];
		uint32_t z[50];
		struct {
			uint32_t	v[3];
		} w[50];

		for (i = 0; i < 50; i++) {
			y[i] = (uint64_t)i;
			z[i] = (uint32_t)i;
			w[i].v[0] = (uint32_t)i;
		}
		nprng_seed(&a, 11);
		b = a;
		nprng_shuffle64(&a, y, 50);
		nprng_shuffle(&b, w, 50, sizeof w[0]);
		nprng_seed(&a, 11);
		nprng_shuffle32(&a, z, 50);
		for (ok = 1, i = 0; i < 50; i++)
			ok &= y[i] == z[i] && w[i].v[0] == z[i];
		TEST(ok, "shuffle of 12-byte items, of u32 and of u64 agree");
	}

	/* Big arrays take the look-ahead path: same draws, same result. */
	{
		enum { BIG = 100003 };
		uint32_t *a = malloc(BIG * sizeof *a), *b = malloc(BIG * sizeof *b);
		uint64_t *c = malloc(BIG * sizeof *c);
		struct nprng ra, rb, rc;
		size_t q;

		for (q = 0; q < BIG; q++)
			a[q] = b[q] = (uint32_t)q;
		nprng_seed(&ra, 99);
		rb = rc = ra;
		nprng_shuffle32(&ra, a, BIG);
		for (q = BIG - 1; q > 0; q--) {
			size_t j = (size_t)nprng_interval(&rb, q);
			uint32_t t = b[q];

			b[q] = b[j];
			b[j] = t;
		}
		nprng_permutation64(&rc, c, BIG);
		for (ok = 1, q = 0; q < BIG; q++)
			ok &= a[q] == b[q] && c[q] == a[q];
		TEST(ok && nprng_next32(&ra) == nprng_next32(&rb),
		    "shuffle of 100003: look-ahead = plain Fisher-Yates");
		free(a);
		free(b);
		free(c);
	}

	/* numpy's pairwise sum: blocks of 8 below 128, halves above. */
	{
		double a[300];
		double seq = 0.0;

		for (i = 0; i < 300; i++)
			a[i] = 1.0 / (i + 1.0);
		for (i = 0; i < 136; i++)
			seq += a[i];
		TEST(nprng_np_sum(a, 5) == a[0] + a[1] + a[2] + a[3] + a[4],
		    "np.sum of 5 is sequential");
		{
			double q[8], s;
			int k;

			for (k = 0; k < 8; k++)
				q[k] = a[k] + a[k + 8];
			s = ((q[0] + q[1]) + (q[2] + q[3])) +
			    ((q[4] + q[5]) + (q[6] + q[7])) + a[16];
			TEST(nprng_np_sum(a, 17) == s,
			    "np.sum of 17: eight lanes, then the rest");
		}
		{
			/* 136 splits at 64: two blocks summed apart. */
			double l[8], h[8], s0, s1;
			int k, j;

			for (k = 0; k < 8; k++) {
				l[k] = a[k];
				for (j = k + 8; j < 64; j += 8)
					l[k] += a[j];
				h[k] = a[64 + k];
				for (j = 64 + k + 8; j < 136; j += 8)
					h[k] += a[j];
			}
			s0 = ((l[0] + l[1]) + (l[2] + l[3])) +
			    ((l[4] + l[5]) + (l[6] + l[7]));
			s1 = ((h[0] + h[1]) + (h[2] + h[3])) +
			    ((h[4] + h[5]) + (h[6] + h[7]));
			TEST(nprng_np_sum(a, 136) == s0 + s1,
			    "np.sum of 136: halves at 64");
			TEST(nprng_np_sum(a, 136) != seq, "which is not a plain loop here");
		}
	}
}

static int
find_rng(char *path, size_t len)
{
	static const char *const cand[] = {
		"../shared/vectors/mmap/rng.json",
		"../../shared/vectors/mmap/rng.json",
	};
	const char *e = getenv("SHARED");
	size_t i;
	FILE *f;

	if (e != NULL && *e != '\0') {
		snprintf(path, len, "%s/vectors/mmap/rng.json", e);
		if ((f = fopen(path, "r")) != NULL) {
			fclose(f);
			return 1;
		}
	}
	for (i = 0; i < sizeof cand / sizeof cand[0]; i++)
		if ((f = fopen(cand[i], "r")) != NULL) {
			fclose(f);
			snprintf(path, len, "%s", cand[i]);
			return 1;
		}
	return 0;
}

/* v (a JSON array of integers) equals got[0 .. n - 1]. */
static int
same_ints(json_t *v, const uint64_t *got, size_t n)
{
	size_t i;

	if (!json_is_array(v) || json_array_size(v) != n)
		return 0;
	for (i = 0; i < n; i++)
		if ((uint64_t)json_integer_value(json_array_get(v, i)) != got[i])
			return 0;
	return 1;
}

static void
check_seed_int(const char *name, json_t *c)
{
	uint32_t seed = (uint32_t)strtoul(name, NULL, 10);
	uint64_t got[16];
	uint32_t x[13];
	struct nprng r;
	json_t *v;
	size_t i, n;
	int ok;

	nprng_seed(&r, seed);
	v = json_object_get(c, "genrand_int32_first8");
	n = json_array_size(v);
	for (i = 0; i < n && i < 16; i++)
		got[i] = nprng_next32(&r);
	TEST(n > 0 && same_ints(v, got, n), "rng.json seed %s: first outputs", name);

	nprng_seed(&r, seed);
	nprng_permutation32(&r, x, 10);
	for (i = 0; i < 10; i++)
		got[i] = x[i];
	TEST(same_ints(json_object_get(c, "permutation_10"), got, 10),
	    "rng.json seed %s: permutation(10)", name);

	nprng_seed(&r, seed);
	for (i = 0; i < 13; i++)
		x[i] = (uint32_t)i;
	nprng_shuffle32(&r, x, 13);
	for (i = 0; i < 13; i++)
		got[i] = x[i];
	TEST(same_ints(json_object_get(c, "shuffle_list_13"), got, 13),
	    "rng.json seed %s: shuffle of 13", name);

	nprng_seed(&r, seed);
	v = json_object_get(c, "random_sample_3");
	for (ok = json_array_size(v) == 3, i = 0; i < 3; i++)
		ok &= nprng_double(&r) == json_real_value(json_array_get(v, i));
	TEST(ok, "rng.json seed %s: random_sample(3)", name);

	nprng_seed(&r, seed);
	for (i = 0; i < 10; i++)
		got[i] = (uint64_t)nprng_randint(&r, 0, 5);
	TEST(same_ints(json_object_get(c, "randint_0_5_x10"), got, 10),
	    "rng.json seed %s: randint(0, 5) x 10", name);
}

static void
check_seed_array(const char *name, json_t *c)
{
	uint32_t key[8];
	uint64_t got[16];
	double p[8];
	char err[128];
	struct nprng r;
	json_t *v;
	size_t nk = 0, i, n;
	const char *s = name;

	while (*s != '\0' && nk < 8) {
		char *e;

		while (*s == '[' || *s == ' ' || *s == ',')
			s++;
		if (*s == ']' || *s == '\0')
			break;
		key[nk++] = (uint32_t)strtoul(s, &e, 10);
		s = e;
	}

	nprng_seed_array(&r, key, nk);
	v = json_object_get(c, "genrand_int32_first8");
	n = json_array_size(v);
	for (i = 0; i < n && i < 16; i++)
		got[i] = nprng_next32(&r);
	TEST(n > 0 && same_ints(v, got, n), "rng.json seed %s: first outputs", name);

	v = json_object_get(c, "choice_3_size5_p_probabilities");
	n = json_array_size(v);
	for (i = 0; i < n && i < 8; i++)
		p[i] = json_number_value(json_array_get(v, i));
	nprng_seed_array(&r, key, nk);
	TEST(nprng_choice_p(&r, p, n, got, 5, err, sizeof err) == 0 &&
	    same_ints(json_object_get(c, "choice_3_size5_p"), got, 5),
	    "rng.json seed %s: choice(3, 5, p)", name);

	nprng_seed_array(&r, key, nk);
	TEST(nprng_choice_noreplace(&r, 10, got, 4, err, sizeof err) == 0 &&
	    same_ints(json_object_get(c, "choice_10_4_noreplace"), got, 4),
	    "rng.json seed %s: choice(10, 4, replace=False)", name);

	nprng_seed_array(&r, key, nk);
	nprng_randint_fill(&r, 4, got, 9);
	TEST(same_ints(json_object_get(c, "choice_4_9_replace"), got, 9),
	    "rng.json seed %s: choice(4, 9)", name);
}

static void
shared_vectors(void)
{
	char path[4096];
	json_error_t je;
	json_t *root, *v;
	const char *k;

	if (!find_rng(path, sizeof path)) {
		printf("ok %d # skip ../shared/vectors/mmap/rng.json absent\n",
		    ++tap_n);
		return;
	}
	root = json_load_file(path, 0, &je);
	TEST(root != NULL, "rng.json parses");
	if (root == NULL)
		return;
	json_object_foreach(json_object_get(root, "seed_int"), k, v)
		check_seed_int(k, v);
	json_object_foreach(json_object_get(root, "seed_array"), k, v)
		check_seed_array(k, v);
	json_decref(root);
}

int
main(void)
{
	known_values();
	shared_vectors();
	return tap_done();
}
