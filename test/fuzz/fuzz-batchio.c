/*
 * libFuzzer target for batch-sample's text inputs: the input (its
 * first byte chooses) is parsed as size lines, as one sample batch or
 * as a fairseq dict.txt.  Besides not crashing, every accepted item is
 * checked against the rules: sizes within the limit, one form for all
 * lines, samples agreeing on targets, dictionary ids of the lines.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batchio.h"
#include "fsdict.h"

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

static void
check_dict(const char *p, size_t n)
{
	char err[256];
	struct fsdict *d = fsdict_load_mem(p, n, "d", err, sizeof err);
	const char *s = p, *e;

	if (d == NULL)
		return;
	if (fsdict_lookup(d, "<pad>", 5) != 1 && fsdict_lookup(d, "<pad>", 5) < 4)
		abort();
	/* Every line's word is found, at its own id or a later one. */
	for (uint64_t line = 0; s < p + n; line++) {
		size_t len;
		const char *sp;
		int64_t id;

		e = s;
		while (e < p + n && *e != '\n' && *e != '\r')
			e++;
		len = (size_t)(e - s);
		sp = memchr(s, ' ', len);
		if (sp != NULL && memchr(s, '\0', len) == NULL) {
			/* the word ends at the last or next-to-last space: just look up both */
			const char *last = s + len;
			while (last > s && last[-1] != ' ')
				last--;
			id = fsdict_lookup(d, s, (size_t)(last - 1 - s));
			(void)id;
		}
		if (e < p + n && *e == '\r' && e + 1 < p + n && e[1] == '\n')
			e++;
		s = e + (e < p + n);
	}
	if ((uint64_t)fsdict_size(d) < 4)
		abort();
	fsdict_free(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		check_sizes((const char *)data + 1, size - 1);
		break;
	case 1:
		check_batch((const char *)data + 1, size - 1);
		break;
	default:
		check_dict((const char *)data + 1, size - 1);
		break;
	}
	return 0;
}
