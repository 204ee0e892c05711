/*
 * Test helper, built by the bats suites (not by make): TFRecord
 * Examples in, one flat JSON object per line out, keys sorted:
 * int64 lists as integer lists, bytes as strings, floats as numbers.
 * Usage: tfr2jsonl <in.tfr >out.jsonl
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "example.h"
#include "record.h"

/* Built with the sanitizer build's library, a test helper need not free. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

int
main(void)
{
	struct rec_reader *r;
	struct example ex;
	const uint8_t *p;
	size_t n, i, j;
	int rv;

	ex_init(&ex);
	if ((r = rec_reader_open(0, REC_AUTO, 0, 0)) == NULL)
		return 1;
	while ((rv = rec_read(r, &p, &n)) == 1) {
		json_t *o = json_object(), *a;
		char *s;

		if (ex_decode(&ex, p, n, EX_TYPE_EXAMPLE) == -1) {
			fprintf(stderr, "tfr2jsonl: %s\n", ex_strerror(&ex));
			return 1;
		}
		for (i = 0; i < ex.nfeat; i++) {
			const struct ex_feature *f = &ex.feat[i];
			char key[1024];

			snprintf(key, sizeof key, "%.*s", (int)f->keylen, (const char *)f->key);
			a = json_array();
			for (j = 0; j < f->n; j++) {
				if (f->kind == EX_INT64)
					json_array_append_new(a, json_integer(f->i64[j]));
				else if (f->kind == EX_FLOAT)
					json_array_append_new(a, json_real(f->f32[j]));
				else if (f->kind == EX_BYTES)
					json_array_append_new(a, json_stringn((const char *)f->b[j].p,
					    f->b[j].n));
			}
			json_object_set_new(o, key, a);
		}
		s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
		printf("%s\n", s);
		free(s);
		json_decref(o);
	}
	if (rv == -1) {
		fprintf(stderr, "tfr2jsonl: %s\n", rec_strerror(r));
		return 1;
	}
	return 0;
}
