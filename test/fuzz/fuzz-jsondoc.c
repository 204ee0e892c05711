/*
 * Fuzz the JSON-lines document reader: the input is one line; every
 * key asked for must give sentences that are strings of the line's
 * value (checked against jansson's own view of it) or an error message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "errmsg.h"
#include "jsondoc.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "text", "title", "", "a" };
	struct jd_line l;
	char err[RP_ERRMAX];

	jd_init(&l);
	for (int round = 0; round < 2; round++) {
		if (jd_parse(&l, data, size, err, sizeof err) == -1) {
			check(err[0] != '\0');
			break;
		}
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			json_t *v = json_object_get(l.root, keys[k]);
			long n = jd_sentences(&l, keys[k], err, sizeof err);

			if (n == -1) {
				check(err[0] != '\0' && l.n == 0);
				check(v == NULL || (!json_is_string(v) &&
				    !json_is_array(v)) || json_is_array(v));
				continue;
			}
			check(v != NULL && (size_t)n == l.n);
			if (json_is_string(v))
				check(n == 1 && l.len[0] == json_string_length(v) &&
				    memcmp(l.s[0], json_string_value(v), l.len[0]) == 0);
			else
				for (long i = 0; i < n; i++) {
					json_t *x = json_array_get(v, (size_t)i);

					check(json_is_string(x));
					check(l.len[i] == json_string_length(x));
				}
		}
	}
	jd_free(&l);
	return 0;
}
