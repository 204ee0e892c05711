/*
 * Differential fuzz target for ex_int64_canonical(),
 * ex_uint16_canonical() and ex_int64_values(): whatever the fast paths
 * accept, the full decoder must accept with the same values, the 16-bit
 * path exactly when the 64-bit one does and every value fits, and where
 * the decoder finds an int64 feature, ex_int64_values() must find the
 * same, and so must ex_int64_open() and ex_int64_next() in parts of
 * any size.  The first input
 * byte picks the feature name.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "targets", "inputs", "a", "" };
	static int64_t *v;
	static size_t cap;
	struct example ex;
	const struct ex_feature *f;
	const char *name;
	uint8_t *p;
	long n;

	if (size < 1)
		return 0;
	name = names[data[0] & 3];
	p = malloc(size - 1 ? size - 1 : 1);	/* exact size: overreads are caught */
	memcpy(p, data + 1, size - 1);
	n = ex_int64_canonical(p, size - 1, name, strlen(name), &v, &cap);
	{
		uint16_t *w = malloc((size - 1 ? size - 1 : 1) * sizeof *w);
		long n16 = ex_uint16_canonical(p, size - 1, name, strlen(name),
		    w);
		int fit = n >= 0;

		for (long j = 0; j < n; j++)
			if (v[j] < 0 || v[j] > 65535)
				fit = 0;
		if (n16 != (fit ? n : -1))
			abort();
		for (long j = 0; j < n16; j++) {
			uint8_t *b = (uint8_t *)&w[j];

			if ((b[0] | b[1] << 8) != v[j])
				abort();
		}
		free(w);
	}
	if (n >= 0) {
		ex_init(&ex);
		if (ex_decode(&ex, p, size - 1, EX_TYPE_EXAMPLE) != 0)
			abort();	/* accepted what the decoder refuses */
		f = ex_get(&ex, name);
		if (f == NULL || f->kind != EX_INT64 || f->n != (size_t)n ||
		    (n > 0 && memcmp(f->i64, v, (size_t)n * sizeof *v) != 0))
			abort();	/* different values */
		ex_free(&ex);
	}
	n = ex_int64_values(p, size - 1, name, &v, &cap);
	ex_init(&ex);
	if (ex_decode(&ex, p, size - 1, EX_TYPE_EXAMPLE) != 0) {
		if (n != -2)
			abort();
	} else {
		f = ex_get(&ex, name);
		if (f == NULL || f->kind != EX_INT64) {
			if (n != -1)
				abort();
		} else if (n != (long)f->n ||
		    (n > 0 && memcmp(f->i64, v, (size_t)n * sizeof *v) != 0))
			abort();
	}
	ex_free(&ex);
	/* Decoding with int64 and bytes lists left in the record: the same features and values. */
	{
		struct example a, b;
		struct ex_int64_iter it;
		struct ex_bytes_iter bit;
		struct ex_bytes bpart[5];
		int64_t part[5];
		size_t k, got;
		int ra, rb;

		ex_init(&a);
		ex_init(&b);
		b.lazy_min = 1 + (data[0] >> 4);
		ra = ex_decode(&a, p, size - 1, EX_TYPE_AUTO);
		rb = ex_decode(&b, p, size - 1, EX_TYPE_AUTO);
		if (ra != rb || (ra == 0 && a.nfeat != b.nfeat))
			abort();
		for (size_t i = 0; ra == 0 && i < a.nfeat; i++) {
			const struct ex_feature *x = &a.feat[i], *y = &b.feat[i];

			if (x->kind != y->kind || x->n != y->n)
				abort();
			if (y->lazy == NULL)
				continue;
			if (y->kind == EX_BYTES) {
				ex_bytes_open_feature(&bit, y);
				for (got = 0; (k = ex_bytes_next(&bit, bpart, 5)) > 0; got += k)
					for (size_t j = 0; j < k; j++)
						if (got + j >= x->n ||
						    bpart[j].p != x->b[got + j].p ||
						    bpart[j].n != x->b[got + j].n)
							abort();
				if (got != x->n)
					abort();
				continue;
			}
			ex_int64_open_feature(&it, y);
			for (got = 0; (k = ex_int64_next(&it, part, 5)) > 0; got += k)
				if (got + k > x->n ||
				    memcmp(part, x->i64 + got, k * sizeof *part) != 0)
					abort();
			if (got != x->n)
				abort();
		}
		if (ra == 0) {
			struct buf ea = { 0 }, eb = { 0 };

			if (ex_encode(&a, &ea) != 0 || ex_encode(&b, &eb) != 0 ||
			    ea.len != eb.len ||
			    (ea.len && memcmp(ea.p, eb.p, ea.len) != 0))
				abort();	/* encodes otherwise */
			rp_buf_free(&ea);
			rp_buf_free(&eb);
		}
		ex_free(&a);
		ex_free(&b);
	}
	{
		struct ex_int64_iter it;
		int64_t part[7];
		size_t max = 1 + (size_t)(data[0] >> 2) % 7, k, got = 0;
		int rc = ex_int64_open(&it, p, size - 1, name);

		if (rc != (n < 0 ? (int)n : 0) || (rc == 0 && it.n != (uint64_t)n))
			abort();
		while (rc == 0 && (k = ex_int64_next(&it, part, max)) > 0) {
			if (got + k > (size_t)n ||
			    memcmp(part, v + got, k * sizeof *v) != 0)
				abort();
			got += k;
		}
		if (rc == 0 && (got != (size_t)n || it.left != 0))
			abort();
	}
	free(p);
	return 0;
}
