/*
 * libFuzzer target for batch-sample's text inputs: the input (its
 * first byte chooses) is parsed as size lines or as one sample batch
 * (dict.txt reading is fuzzed by fuzz-fairseq-dict).  Besides not
 * crashing, every accepted item is checked against the rules: sizes
 * within the limit, one form for all lines, samples agreeing on
 * targets.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batchio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_sizes(const char *p, size_t n)
{
	struct bio_sizes s;
	char err[256];
	uint64_t lines = 0;

	if (bio_sizes_parse(&s, p, n, err, sizeof err) == -1) {
		if (s.n != 0 || s.index != NULL || strncmp(err, "line ", 5) != 0)
			abort();
		return;
	}
	for (size_t i = 0; i < n; i++)
		lines += p[i] == '\n';
	lines += n > 0 && p[n - 1] != '\n';
	if (s.n != lines)
		abort();
	for (uint64_t i = 0; i < s.n; i++)
		if (s.size[i] > BIO_MAX_SIZE || (!s.indexed && s.index[i] != i))
			abort();
	bio_sizes_free(&s);
}

static void
check_batch(const char *p, size_t n)
{
	struct bio_batch b = { 0 };
	char err[256];

	/* Twice into the same batch: the second parse replaces the first. */
	for (int k = 0; k < 2; k++) {
		if (bio_batch_parse(&b, p, n, err, sizeof err) == -1) {
			if (b.n != 0)
				abort();
			break;
		}
		for (size_t i = 0; i < b.n; i++) {
			const struct bio_sample *s = &b.s[i];
			volatile int64_t sum = 0;

			for (size_t j = 0; j < s->nsrc; j++)
				sum += s->src[j];
			if (!b.has_target && s->ntgt != 0)
				abort();
			for (size_t j = 0; j < s->ntgt; j++)
				sum += s->tgt[j];
			(void)sum;
		}
	}
	bio_batch_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		check_sizes((const char *)data + 1, size - 1);
	else
		check_batch((const char *)data + 1, size - 1);
	return 0;
}
