/*
 * Documents in JSON lines (Megatron-LM's --json-keys): see jsondoc.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "errmsg.h"
#include "jsondoc.h"

void
jd_init(struct jd_line *l)
{
	memset(l, 0, sizeof *l);
}

void
jd_free(struct jd_line *l)
{
	json_decref(l->root);
	free(l->s);
	free(l->len);
	jd_init(l);
}

static const char *
kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:	return "an object";
	case JSON_ARRAY:	return "a list";
	case JSON_STRING:	return "a string";
	case JSON_INTEGER:
	case JSON_REAL:		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:	return "a boolean";
	default:		return "null";
	}
}

int
jd_parse(struct jd_line *l, const uint8_t *p, size_t n, char *err,
    size_t errlen)
{
	json_error_t e;
	json_t *v;

	json_decref(l->root);
	l->root = NULL;
	l->n = 0;
	v = json_loadb((const char *)p, n, JSON_ALLOW_NUL | JSON_DECODE_ANY, &e);
	if (v == NULL) {
		rp_seterr(err, errlen, "invalid JSON at column %d: %s",
		    e.column, e.text);
		return -1;
	}
	if (!json_is_object(v)) {
		rp_seterr(err, errlen, "not a JSON object: %s", kind(v));
		json_decref(v);
		return -1;
	}
	l->root = v;
	return 0;
}

static int
room(struct jd_line *l, size_t need)
{
	size_t c = l->cap ? l->cap : 16;
	const char **s;
	size_t *len;

	if (need <= l->cap)
		return 0;
	while (c < need)
		c *= 2;
	if ((s = realloc(l->s, c * sizeof *s)) == NULL)
		return -1;
	l->s = s;
	if ((len = realloc(l->len, c * sizeof *len)) == NULL)
		return -1;
	l->len = len;
	l->cap = c;
	return 0;
}

long
jd_sentences(struct jd_line *l, const char *key, char *err, size_t errlen)
{
	json_t *v = l->root != NULL ? json_object_get(l->root, key) : NULL;
	size_t i, k;

	l->n = 0;
	if (v == NULL) {
		rp_seterr(err, errlen, "no key '%s'", key);
		return -1;
	}
	if (json_is_string(v)) {
		if (room(l, 1) == -1)
			goto nomem;
		l->s[0] = json_string_value(v);
		l->len[0] = json_string_length(v);
		l->n = 1;
		return 1;
	}
	if (!json_is_array(v)) {
		rp_seterr(err, errlen, "'%s' holds %s, not a string or a "
		    "list of strings", key, kind(v));
		return -1;
	}
	k = json_array_size(v);
	if (room(l, k) == -1)
		goto nomem;
	for (i = 0; i < k; i++) {
		json_t *x = json_array_get(v, i);

		if (!json_is_string(x)) {
			rp_seterr(err, errlen, "'%s' item %zu holds %s, not a "
			    "string", key, i, kind(x));
			return -1;
		}
		l->s[i] = json_string_value(x);
		l->len[i] = json_string_length(x);
	}
	l->n = k;
	return (long)k;
nomem:
	rp_seterr(err, errlen, "%s", strerror(ENOMEM));
	errno = ENOMEM;
	return -1;
}
