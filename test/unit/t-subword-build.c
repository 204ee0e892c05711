/*
 * Builds in threads (sw_build_opts.jobs): the vocabulary of any number
 * of jobs is the vocabulary of one, byte for byte, whatever the text,
 * the counts and the options; small and empty builds too.
 */
#include <errno.h>
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
		rp_buf_free(&b);
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
		rp_buf_free(&many);
	}
	TEST(ok, "%s: the same vocabulary at 2, 3, 4, 8 and 17 jobs", what);
	rp_buf_free(&one);
}

/*
 * Repetitive tokens: long runs of one character and of "ab", each a few
 * lengths: common prefixes of thousands of code points, across tokens,
 * for the suffix sort's passes and its sorts of large groups.
 */
static struct sw_counts *
repetitive(void)
{
	struct sw_counts *c = sw_counts_new();
	uint8_t tok[4000];
	size_t n, i;

	if (c == NULL)
		return NULL;
	for (n = 1; n <= sizeof(tok); n += 1 + n / 3) {
		memset(tok, 'a', n);
		if (sw_counts_add(c, tok, n, (int64_t)(1 + n % 5)) == -1)
			goto fail;
		for (i = 0; i < n; i++)
			tok[i] = i % 2 ? 'b' : 'a';
		if (sw_counts_add(c, tok, n, 2) == -1)
			goto fail;
		tok[n / 2] = 'c';
		if (sw_counts_add(c, tok, n, 3) == -1)
			goto fail;
	}
	return c;
fail:
	sw_counts_free(c);
	return NULL;
}

/* The probes of a build: min_count and size of each. */
struct probes {
	int64_t		 mc[64];
	size_t		 size[64];
	size_t		 n;
};

static void
probed(void *arg, int64_t min_count, size_t size)
{
	struct probes *p = arg;

	if (p->n < sizeof(p->mc) / sizeof(*p->mc)) {
		p->mc[p->n] = min_count;
		p->size[p->n] = size;
	}
	p->n++;
}

static struct buf
stored(struct sw_vocab *v)
{
	struct buf b = { 0 };

	if (v != NULL && sw_vocab_store(v, &b) == -1)
		rp_buf_free(&b);
	sw_vocab_free(v);
	return b;
}

/*
 * A bisection's probes reuse the memory of the probes before them (the
 * walks' blocks, the lists, the longest entries), which may be larger
 * than they need or hold what those left: each probe makes the list
 * that a build of its own at its min_count makes, and the vocabulary is
 * that build's for the first of the closest probes.
 */
static void
test_probes(const char *what, const struct sw_counts *c, size_t target,
    int jobs)
{
	struct sw_build_opts o;
	struct probes all = { 0 }, one;
	struct buf v, w, bv = { 0 };
	size_t i, best = 0, d, bd = SIZE_MAX;
	int ok;

	sw_build_opts_init(&o);
	o.jobs = jobs;
	o.probe = probed;
	o.probe_arg = &all;
	v = stored(sw_build_to_target(c, target, &o));
	ok = all.n > 2 && all.n <= sizeof(all.mc) / sizeof(*all.mc);
	for (i = 0; ok && i < all.n; i++) {
		memset(&one, 0, sizeof(one));
		o.probe_arg = &one;
		w = stored(sw_build(c, all.mc[i], &o));
		if (one.n != 1 || one.size[0] != all.size[i]) {
			ok = 0;
			printf("#   %s: probe %zu (min_count %lld): %zu entries, "
			    "%zu alone\n", what, i, (long long)all.mc[i],
			    all.size[i], one.size[0]);
		}
		d = all.size[i] > target ? all.size[i] - target :
		    target - all.size[i];
		if (d < bd) {
			bd = d;
			best = i;
			rp_buf_free(&bv);
			bv = w;
		} else
			rp_buf_free(&w);
	}
	if (ok && !same(&v, &bv)) {
		ok = 0;
		printf("#   %s: the vocabulary is not probe %zu's\n", what,
		    best);
	}
	rp_buf_free(&bv);
	TEST(ok, "%s, -j %d: %zu probes, each the build at its min_count "
	    "(the vocabulary probe %zu's)", what, jobs, all.n, best);
	rp_buf_free(&v);
}

/* One token of n code points 'a' and a few short ones. */
static struct sw_counts *
long_token(size_t n)
{
	struct sw_counts *c = sw_counts_new();
	uint8_t *tok = malloc(n ? n : 1);
	static const char *const w[] = { "the", "cat", "sat", "on", "mat" };
	size_t i;
	int ok = c != NULL && tok != NULL;

	if (ok)
		memset(tok, 'a', n);
	ok = ok && sw_counts_add(c, tok, n, 3) == 0;
	for (i = 0; ok && i < 5; i++)
		ok = sw_counts_add(c, (const uint8_t *)w[i], strlen(w[i]),
		    (int64_t)(10 + i)) == 0;
	free(tok);
	if (!ok) {
		sw_counts_free(c);
		return NULL;
	}
	return c;
}

/*
 * Count files read side by side (sw_counts_read_files()) give the counts,
 * faults and vocabulary of the files read one after the other.
 */
static void
test_read_files(void)
{
	static const int jobs[] = { 2, 3, 5, 9 };
	struct buf f[6] = { { 0 } }, w1 = { 0 }, wj = { 0 }, v1, vj;
	const uint8_t *p[6];
	size_t len[6], i, j, r1, rj;
	char e1[6][200], ej[6][200];
	int eno1[6], enoj[6], ok = 1, faults = 1;
	struct sw_counts *c1, *cj, *m;
	static const char bad[] = "#subword-counts 1\n4\ta\nno tab\n";
	static const char big[] = "#subword-counts 1\n9223372036854775000\ta\n";

	for (i = 0; i < 4; i++) {
		if ((m = made_up(3000 + 1000 * i, 10 + i, 1)) == NULL ||
		    sw_counts_write(m, &f[i]) == -1)
			ok = 0;
		sw_counts_free(m);
	}
	if (rp_buf_append(&f[4], bad, sizeof(bad) - 1) == -1 ||
	    rp_buf_append(&f[5], big, sizeof(big) - 1) == -1)
		ok = 0;
	for (i = 0; i < 6; i++) {
		p[i] = f[i].p;
		len[i] = f[i].len;
	}
	/* The good ones, then a bad one and one that overflows "a" between. */
	c1 = sw_counts_new();
	if (!ok || c1 == NULL) {
		TEST(0, "count files made");
		return;
	}
	r1 = sw_counts_read_files(c1, p, len, 6, 1, e1[0], sizeof(e1[0]), eno1);
	v1 = built(c1, 1, 2000, 0, 0, 4, NULL, 0);
	(void)sw_counts_write(c1, &w1);
	faults = eno1[4] == EINVAL && strncmp(e1[4], "line 3: ", 8) == 0;
	for (j = 0; j < sizeof(jobs) / sizeof(*jobs); j++) {
		cj = sw_counts_new();
		if (cj == NULL) {
			ok = 0;
			break;
		}
		rj = sw_counts_read_files(cj, p, len, 6, jobs[j], ej[0], sizeof(ej[0]),
		    enoj);
		wj.len = 0;
		(void)sw_counts_write(cj, &wj);
		vj = built(cj, 1, 2000, 0, 0, 4, NULL, 0);
		if (rj != r1 || !same(&w1, &wj) || !same(&v1, &vj))
			ok = 0;
		for (i = 0; i < 6; i++)
			if (enoj[i] != eno1[i] || strcmp(ej[i], e1[i]) != 0)
				ok = 0;
		rp_buf_free(&vj);
		sw_counts_free(cj);
	}
	TEST(ok && r1 == 6 && faults, "count files read side by side: the counts, "
	    "faults and vocabulary of one after the other");
	/* A count that overflows across files: that file's line, at any -j. */
	p[0] = (const uint8_t *)big;
	len[0] = sizeof(big) - 1;
	p[1] = (const uint8_t *)big;
	len[1] = sizeof(big) - 1;
	ok = 1;
	for (j = 0; j < sizeof(jobs) / sizeof(*jobs); j++) {
		cj = sw_counts_new();
		rj = cj != NULL ? sw_counts_read_files(cj, p, len, 2, jobs[j], ej[0],
		    sizeof(ej[0]), enoj) : 0;
		if (rj != 2 || enoj[0] != 0 || enoj[1] != EINVAL ||
		    strcmp(ej[1], "line 2: count overflows") != 0)
			ok = 0;
		sw_counts_free(cj);
	}
	TEST(ok, "a count that overflows across files names the later one's line");
	for (i = 0; i < 6; i++)
		rp_buf_free(&f[i]);
	rp_buf_free(&w1);
	rp_buf_free(&wj);
	rp_buf_free(&v1);
	sw_counts_free(c1);
}

int
main(void)
{
	struct sw_counts *big = made_up(20000, 1, 1);
	struct sw_counts *wide = made_up(20000, 1, (int64_t)1 << 33);
	struct sw_counts *small = made_up(30, 2, 1);
	struct sw_counts *none = sw_counts_new();
	struct sw_counts *rep = repetitive();
	struct sw_counts *lt;

	if (big == NULL || wide == NULL || small == NULL || none == NULL ||
	    rep == NULL) {
		TEST(0, "counts made");
		return tap_done();
	}
	test_jobs("to a target of 3000", big, 3000, 0, 0, 4);
	test_jobs("min count 3, L 6, 2 iterations", big, 0, 3, 6, 2);
	test_jobs("min count 1, L 2 (single characters)", big, 0, 1, 2, 4);
	/* A list long enough for its strings to be made by parts. */
	test_jobs("min count 1, 1 iteration", big, 0, 1, 0, 1);
	test_jobs("min count 1, L 1 (nothing counted)", big, 0, 1, 1, 3);
	test_jobs("counts past 32 bits", wide, 0, (int64_t)5 << 33, 0, 4);
	test_jobs("a small build, one part", small, 50, 0, 0, 4);
	test_jobs("no tokens", none, 100, 0, 0, 4);
	test_jobs("repetitive tokens", rep, 0, 2, 0, 2);
	test_probes("a target of 3000", big, 3000, 1);
	test_probes("a target of 3000", big, 3000, 3);
	test_probes("a target of 400, repetitive", rep, 400, 1);
	test_probes("a target of 400, repetitive", rep, 400, 2);
	if ((lt = long_token(300000)) == NULL)
		TEST(0, "counts made");
	else {
		/* Its walk's block is too large to keep from probe to probe. */
		test_probes("one token of 300000 code points", lt, 30, 1);
		test_probes("one token of 300000 code points", lt, 30, 2);
		sw_counts_free(lt);
	}
	test_read_files();
	sw_counts_free(big);
	sw_counts_free(wide);
	sw_counts_free(small);
	sw_counts_free(none);
	sw_counts_free(rep);
	return tap_done();
}
