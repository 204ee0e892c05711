/*
 * Test helper, built by the bats suites (not by make): JSON lines of
 * flat objects ({"feature": [ints] | "text" | [floats]}) in, TFRecord
 * Examples out.  Usage: jsonl2tfr <in.jsonl >out.tfr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
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
	struct ex_builder b;
	struct buf out = { 0 };
	struct rec_writer *w;
	char *line = NULL;
	size_t cap = 0, i, n;
	ssize_t len;
	long lineno = 0;

	exb_init(&b);
	if ((w = rec_writer_open(1, REC_NONE, -1)) == NULL)
		return 1;
	while ((len = getline(&line, &cap, stdin)) != -1) {
		json_error_t je;
		json_t *o, *v, *x;
		const char *k;

		lineno++;
		if (len <= 1)
			continue;
		if ((o = json_loads(line, 0, &je)) == NULL || !json_is_object(o)) {
			fprintf(stderr, "jsonl2tfr: line %ld: %s\n", lineno, je.text);
			return 1;
		}
		exb_reset(&b);
		json_object_foreach(o, k, v) {
			if (json_is_string(v)) {
				struct ex_bytes by = { (const uint8_t *)json_string_value(v),
				    json_string_length(v) };
				exb_bytes(&b, k, &by, 1);
				continue;
			}
			if (json_is_integer(v)) {	/* a scalar: one value */
				int64_t one = json_integer_value(v);

				exb_int64(&b, k, &one, 1);
				continue;
			}
			if (!json_is_array(v)) {
				fprintf(stderr, "jsonl2tfr: line %ld: %s: not a list\n", lineno, k);
				return 1;
			}
			n = json_array_size(v);
			if (n > 0 && json_is_real(json_array_get(v, 0))) {
				float *f = calloc(n + 1, sizeof *f);

				json_array_foreach(v, i, x)
					f[i] = (float)json_number_value(x);
				exb_float(&b, k, f, n);
				free(f);
			} else {
				int64_t *iv = calloc(n + 1, sizeof *iv);

				json_array_foreach(v, i, x) {
					if (!json_is_integer(x)) {
						fprintf(stderr, "jsonl2tfr: line %ld: %s: not an integer list\n",
						    lineno, k);
						return 1;
					}
					iv[i] = json_integer_value(x);
				}
				exb_int64(&b, k, iv, n);
				free(iv);
			}
		}
		out.len = 0;
		if (exb_encode(&b, &out) == -1 || rec_write(w, out.p, out.len) == -1)
			return 1;
		json_decref(o);
	}
	return rec_writer_close(w) == -1;
}
