/*
 * Builds in threads (sw_build_opts.jobs): the vocabulary of any number
 * of jobs is the vocabulary of one, byte for byte, whatever the text,
 * the counts and the options; small and empty builds too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "subword.h"
#include "tap.h"

/* A generator of its own, the same on every run. */
static uint64_t
next(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/*
 * Counts of 'ntok' made-up tokens of 1 to 14 code points over a mixed
 * alphabet (ASCII, '_' and '\\' that escaping doubles, Latin-1, CJK and
 * an emoji), with counts falling off as Zipf's do, times 'scale'.
 */
static struct sw_counts *
made_up(size_t ntok, uint64_t seed, int64_t scale)
{
	static const char *const ch[] = {
		"a", "b", "c", "d", "e", "n", "s", "t", "_", "\\", "\xc3\xa9",
		"\xc3\xb1", "\xe4\xb8\x80", "\xe4\xba\x8c", "\xe6\x97\xa5",
		"\xf0\x9f\x98\x80", "1", "7", "x", "o"
	};
	struct sw_counts *c = sw_counts_new();
	uint8_t tok[64];
	size_t i, k, n, len;
	uint64_t x = seed;

	if (c == NULL)
		return NULL;
	for (i = 0; i < ntok; i++) {
		n = 1 + next(&x) % 14;
		for (k = 0, len = 0; k < n; k++) {
			const char *s = ch[next(&x) % (sizeof(ch) / sizeof(*ch))];

			memcpy(tok + len, s, strlen(s));
			len += strlen(s);
		}
		if (sw_counts_add(c, tok, len, scale *
		    (int64_t)(1 + 5000 / (1 + next(&x) % 997))) == -1) {
			sw_counts_free(c);
			return NULL;
		}
	}
	return c;
}

/* The stored vocabulary of a build, or an empty buffer when it failed. */
static struct buf
built(const struct sw_counts *c, int jobs, size_t target, int64_t min_count,
    long L, int iterations, const char *const *reserved, size_t nres)
{
	struct sw_build_opts o;
	struct sw_vocab *v;
	struct buf b = { 0 };

	sw_build_opts_init(&o);
	o.jobs = jobs;
	o.max_subtoken_len = L;
	o.iterations = iterations;
	o.reserved = reserved;
	o.nreserved = nres;
	v = target > 0 ? sw_build_to_target(c, target, &o) : sw_build(c, min_count, &o);
	if (v != NULL && sw_vocab_store(v, &b) == -1)
		buf_free(&b);
	sw_vocab_free(v);
	return b;
}

static int
same(const struct buf *a, const struct buf *b)
{
	return a->len > 0 && a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static void
test_jobs(const char *what, const struct sw_counts *c, size_t target,
    int64_t min_count, long L, int iterations)
{
	static const char *const res[] = { "<x>", "\xe4\xb8\x80_" };
	static const int jobs[] = { 2, 3, 4, 8, 17 };
	struct buf one, many;
	size_t j;
	int ok = 1;

	one = built(c, 1, target, min_count, L, iterations, res, 2);
	for (j = 0; j < sizeof(jobs) / sizeof(*jobs); j++) {
		many = built(c, jobs[j], target, min_count, L, iterations, res, 2);
		if (!same(&one, &many)) {
			ok = 0;
			printf("#   %s: -j %d differs (%zu bytes, %zu at -j 1)\n",
			    what, jobs[j], many.len, one.len);
		}
		buf_free(&many);
	}
	TEST(ok, "%s: the same vocabulary at 2, 3, 4, 8 and 17 jobs", what);
	buf_free(&one);
}

int
main(void)
{
	struct sw_counts *big = made_up(20000, 1, 1);
	struct sw_counts *wide = made_up(20000, 1, (int64_t)1 << 33);
	struct sw_counts *small = made_up(30, 2, 1);
	struct sw_counts *none = sw_counts_new();

	if (big == NULL || wide == NULL || small == NULL || none == NULL) {
		TEST(0, "counts made");
		return tap_done();
	}
	test_jobs("to a target of 3000", big, 3000, 0, 0, 4);
	test_jobs("min count 3, L 6, 2 iterations", big, 0, 3, 6, 2);
	test_jobs("min count 1, L 2 (single characters)", big, 0, 1, 2, 4);
	test_jobs("min count 1, L 1 (nothing counted)", big, 0, 1, 1, 3);
	test_jobs("counts past 32 bits", wide, 0, (int64_t)5 << 33, 0, 4);
	test_jobs("a small build, one part", small, 50, 0, 0, 4);
	test_jobs("no tokens", none, 100, 0, 0, 4);
	sw_counts_free(big);
	sw_counts_free(wide);
	sw_counts_free(small);
	sw_counts_free(none);
	return tap_done();
}
