/*
 * Differential fuzz target for cmd/fastex.h: whatever the fast path
 * accepts, the full decoder must accept with the same values.  The
 * first input byte picks the feature name.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"
#include "fastex.h"

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
	n = fastex_int64(p, size - 1, name, strlen(name), &v, &cap);
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
	free(p);
	return 0;
}
