/*
 * Test helper (built by hand or by test/tools/pretok-diff, not by make):
 * split each line of FILE (or stdin) with one of the pretokenizers of
 * lib/pretok.c and print the byte lengths of its pieces, space-separated,
 * one output line per input line; "!" for a line that is not UTF-8.
 * Lines end at \n only (-0: at NUL).  With -b, time the pretokenizer over
 * the lines instead, -b N times in all, and print MB/s.
 *
 * Usage: pretok-split [-0] [-b N] gpt2|cl100k|o200k [FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pretok.h"
#include "unicode.h"

static uint8_t *
slurp(FILE *f, size_t *n)
{
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, k;

	*n = 0;
	for (;;) {
		if (cap - *n < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			if ((nb = realloc(buf, cap)) == NULL) {
				perror("pretok-split");
				exit(1);
			}
			buf = nb;
		}
		k = fread(buf + *n, 1, cap - *n, f);
		if (k == 0)
			break;
		*n += k;
	}
	if (ferror(f)) {
		perror("pretok-split");
		exit(1);
	}
	return buf;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	enum pretok_pat pat;
	FILE *f = stdin;
	uint8_t *buf, sep = '\n';
	size_t n, start, end, i, k, pieces = 0;
	long reps = 0, r;
	double t0, t;

	while (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		if (strcmp(argv[1], "-0") == 0)
			sep = 0;
		else if (strcmp(argv[1], "-b") == 0 && argc > 2) {
			reps = atol(argv[2]);
			argc--, argv++;
		} else
			break;
		argc--, argv++;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: pretok-split [-0] [-b N] gpt2|cl100k|o200k [FILE]\n");
		return 2;
	}
	if (strcmp(argv[1], "gpt2") == 0)
		pat = PRETOK_GPT2;
	else if (strcmp(argv[1], "cl100k") == 0)
		pat = PRETOK_CL100K;
	else if (strcmp(argv[1], "o200k") == 0)
		pat = PRETOK_O200K;
	else {
		fprintf(stderr, "pretok-split: %s: unknown pattern\n", argv[1]);
		return 2;
	}
	if (argc == 3 && (f = fopen(argv[2], "rb")) == NULL) {
		perror(argv[2]);
		return 1;
	}
	buf = slurp(f, &n);

	if (reps > 0) {
		t0 = now();
		for (r = 0; r < reps; r++)
			for (start = 0; start < n; start = end + 1) {
				const uint8_t *e = memchr(buf + start, sep, n - start);

				end = e ? (size_t)(e - buf) : n;
				for (i = start; i < end; i += k, pieces++)
					k = pretok_next(pat, buf + i, end - i);
			}
		t = now() - t0;
		printf("%s: %.1f MB/s (%zu bytes x %ld, %zu pieces, %.3f s)\n",
		    argv[1], (double)n * reps / t / 1e6, n, reps, pieces, t);
		return 0;
	}
	for (start = 0; start < n; start = end + 1) {
		const uint8_t *e = memchr(buf + start, sep, n - start);

		end = e ? (size_t)(e - buf) : n;
		if (uni_utf8_valid_prefix(buf + start, end - start) != end - start) {
			fputs("!\n", stdout);
			continue;
		}
		for (i = start; i < end; i += k) {
			k = pretok_next(pat, buf + i, end - i);
			printf(i == start ? "%zu" : " %zu", k);
		}
		putchar('\n');
	}
	return ferror(stdout) || fclose(stdout) ? 1 : 0;
}
