/*
 * Fuzz the Example decoder: any bytes that decode must re-encode to a
 * canonical payload that decodes to the same thing and re-encodes to
 * the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct example a, b;
	static struct buf x, y;
	static int64_t *vals;
	static size_t cap;
	long nv;
	enum ex_type t;
	size_t i;
	const struct ex_feature *f;

	if (size < 1)
		return 0;
	t = (enum ex_type)(data[0] % 3);
	data++;
	size--;
	if (ex_decode(&a, data, size, t) == -1) {
		if (ex_strerror(&a)[0] == '\0')
			abort();
		if (ex_check(&b, data, size, t) != -1)
			abort();	/* the checker must reject what the decoder rejects */
		return 0;
	}
	if (ex_check(&b, data, size, t) != 0)
		abort();
	x.len = y.len = 0;
	if (ex_encode(&a, &x) == -1)
		abort();
	if (ex_decode(&b, x.p, x.len, a.seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE) == -1)
		abort();
	if (ex_encode(&b, &y) == -1)
		abort();
	if (x.len != y.len || (x.len && memcmp(x.p, y.p, x.len) != 0))
		abort();
	if (a.nfeat != b.nfeat || a.nlists != b.nlists)
		abort();
	for (i = 0; i < a.nfeat; i++)
		if (a.feat[i].n != b.feat[i].n || a.feat[i].kind != b.feat[i].kind)
			abort();
	/* The hot-path accessor agrees with the decoder. */
	if (!a.seq && a.nfeat > 0) {
		f = &a.feat[0];
		if (f->keylen < 64 && memchr(f->key, 0, f->keylen) == NULL) {
			char name[64];

			memcpy(name, f->key, f->keylen);
			name[f->keylen] = '\0';
			nv = ex_int64_values(data, size, name, &vals, &cap);
			if (f->kind == EX_INT64 ? nv != (long)f->n : nv != -1)
				abort();
			if (f->kind == EX_INT64 && f->n &&
			    memcmp(vals, f->i64, f->n * sizeof(int64_t)) != 0)
				abort();
		}
	}
	return 0;
}
