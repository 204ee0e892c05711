/*
 * A dataset generator for scripts/bench-batch: fairseq .idx/.bin pairs
 * of uint16 tokens whose sentence sizes are uniform in [lo, hi], drawn
 * from a seeded generator.
 *
 *	mkidx [-t] PREFIX N LO HI SEED
 *
 * The .idx is written in full.  The .bin is a sparse file of the right
 * length (every token 0) unless -t asks for real tokens (ids 4 to
 * 32003, the last of each sentence 2), for benchmarks that read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t state;

static uint64_t
next(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
xwrite(FILE *f, const void *p, size_t n, const char *name)
{
	if (fwrite(p, 1, n, f) != n) {
		fprintf(stderr, "mkidx: %s: %s\n", name, strerror(errno));
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	char idx[4096], bin[4096];
	unsigned char h[26], b[8];
	uint32_t *sizes;
	uint64_t n, lo, hi, off = 0, tokens = 0;
	int tok = 0;
	FILE *f, *g;

	if (argc > 1 && strcmp(argv[1], "-t") == 0) {
		tok = 1;
		argv++;
		argc--;
	}
	if (argc != 6) {
		fprintf(stderr, "usage: mkidx [-t] prefix n lo hi seed\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	lo = strtoull(argv[3], NULL, 10);
	hi = strtoull(argv[4], NULL, 10);
	state = strtoull(argv[5], NULL, 10);
	snprintf(idx, sizeof idx, "%s.idx", argv[1]);
	snprintf(bin, sizeof bin, "%s.bin", argv[1]);
	if ((sizes = malloc((n ? n : 1) * sizeof *sizes)) == NULL ||
	    (f = fopen(idx, "wb")) == NULL || (g = fopen(bin, "wb")) == NULL) {
		fprintf(stderr, "mkidx: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memcpy(h, "MMIDIDX\0\0", 9);
	put64(h + 9, 1);
	h[17] = 8;	/* uint16 */
	put64(h + 18, n);
	xwrite(f, h, 26, idx);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t s = (uint32_t)(lo + next() % (hi - lo + 1));

		sizes[i] = s;
		b[0] = (unsigned char)s;
		b[1] = (unsigned char)(s >> 8);
		b[2] = (unsigned char)(s >> 16);
		b[3] = (unsigned char)(s >> 24);
		xwrite(f, b, 4, idx);
		tokens += s;
	}
	for (uint64_t i = 0; i < n; i++) {
		put64(b, off);
		xwrite(f, b, 8, idx);
		off += 2 * (uint64_t)sizes[i];
	}
	if (tok) {
		for (uint64_t i = 0; i < n; i++)
			for (uint32_t k = 0; k < sizes[i]; k++) {
				unsigned v = k + 1 == sizes[i] ? 2 :
				    4 + (unsigned)(next() % 32000);

				b[0] = (unsigned char)v;
				b[1] = (unsigned char)(v >> 8);
				xwrite(g, b, 2, bin);
			}
	} else if (ftruncate(fileno(g), (off_t)(2 * tokens)) == -1) {
		fprintf(stderr, "mkidx: %s: %s\n", bin, strerror(errno));
		return 1;
	}
	if (fclose(f) == EOF || fclose(g) == EOF) {
		fprintf(stderr, "mkidx: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	free(sizes);
	return 0;
}
