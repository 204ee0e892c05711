/*
 * batch-sample's kernel inputs.  See batchio.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batchio.h"

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- size lines ---- */

static int
sizes_grow(struct bio_sizes *s)
{
	uint64_t cap = s->cap ? s->cap * 2 : 1024;
	uint64_t *ix;
	uint32_t *sz;

	if (cap > SIZE_MAX / sizeof *ix) {
		errno = ENOMEM;
		return -1;
	}
	if ((ix = realloc(s->index, cap * sizeof *ix)) == NULL)
		return -1;
	s->index = ix;
	if ((sz = realloc(s->size, cap * sizeof *sz)) == NULL)
		return -1;
	s->size = sz;
	s->cap = cap;
	return 0;
}

/* A decimal at *pp (advanced past it); 0, or -1 when there is none or it exceeds max. */
static int
get_num(const char **pp, const char *end, uint64_t max, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (p == end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (x > (max - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*pp = p;
	*v = x;
	return 0;
}

static const char *
skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int
bio_sizes_parse(struct bio_sizes *s, const char *p, size_t n, char *err,
    size_t errlen)
{
	const char *end = p + n, *eol, *q;
	uint64_t lineno = 0, a, b;
	int fields;

	memset(s, 0, sizeof *s);
	for (; p < end; p = eol + (eol < end)) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		lineno++;
		q = skip_blank(p, eol);
		if (get_num(&q, eol, UINT64_MAX, &a) == -1)
			goto bad;
		fields = 1;
		q = skip_blank(q, eol);
		if (q < eol && *q >= '0' && *q <= '9') {
			if (get_num(&q, eol, UINT64_MAX, &b) == -1)
				goto bad;
			fields = 2;
			q = skip_blank(q, eol);
		}
		if (q < eol && *q == '\r')
			q = skip_blank(q + 1, eol);
		if (q != eol)
			goto bad;
		if (lineno == 1)
			s->indexed = fields == 2;
		else if (s->indexed != (fields == 2))
			goto bad;
		if (fields == 1) {
			b = a;
			a = lineno - 1;
		}
		if (b > BIO_MAX_SIZE) {
			seterr(err, errlen, "line %ju: size %ju exceeds %ju",
			    (uintmax_t)lineno, (uintmax_t)b,
			    (uintmax_t)BIO_MAX_SIZE);
			goto fail;
		}
		if (s->n == s->cap && sizes_grow(s) == -1) {
			seterr(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		s->index[s->n] = a;
		s->size[s->n] = (uint32_t)b;
		s->n++;
	}
	return 0;
bad:
	seterr(err, errlen, "line %ju: expected %s", (uintmax_t)lineno,
	    lineno == 1 ? "SIZE or INDEX SIZE" : s->indexed ? "INDEX SIZE" :
	    "SIZE");
fail:
	bio_sizes_free(s);
	return -1;
}

void
bio_sizes_free(struct bio_sizes *s)
{
	free(s->index);
	free(s->size);
	memset(s, 0, sizeof *s);
}

/* ---- sample batches ---- */

static int
tok_room(struct bio_batch *b, size_t more)
{
	size_t cap;
	int64_t *t;

	if (b->tokcap - b->ntok >= more)
		return 0;
	cap = b->tokcap ? b->tokcap : 256;
	while (cap - b->ntok < more) {
		if (cap > SIZE_MAX / 2 / sizeof *t) {
			errno = ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	if ((t = realloc(b->tok, cap * sizeof *t)) == NULL)
		return -1;
	b->tok = t;
	b->tokcap = cap;
	return 0;
}

/*
 * The integers of array 'a' into the pool; *off and *n say where.
 * Returns 0, -1 when 'a' is not an array of integers, -2 out of memory.
 */
static int
take_tokens(struct bio_batch *b, json_t *a, size_t *off, size_t *n)
{
	size_t k, len;
	json_t *v;

	if (!json_is_array(a))
		return -1;
	len = json_array_size(a);
	if (tok_room(b, len) == -1)
		return -2;
	*off = b->ntok;
	json_array_foreach(a, k, v) {
		if (!json_is_integer(v))
			return -1;
		b->tok[b->ntok++] = (int64_t)json_integer_value(v);
	}
	*n = len;
	return 0;
}

int
bio_batch_parse(struct bio_batch *b, const char *line, size_t len, char *err,
    size_t errlen)
{
	json_error_t je;
	json_t *root, *o, *v;
	size_t k, *soff = NULL, *toff = NULL;
	int rc = -1, r;

	b->n = 0;
	b->ntok = 0;
	b->has_target = 0;
	if ((root = json_loadb(line, len, JSON_DECODE_ANY, &je)) == NULL) {
		seterr(err, errlen, "bad JSON at column %d: %s", je.column,
		    je.text);
		return -1;
	}
	if (!json_is_array(root)) {
		seterr(err, errlen, "expected a JSON array of samples");
		goto out;
	}
	if (json_array_size(root) > b->cap) {
		struct bio_sample *s = realloc(b->s,
		    json_array_size(root) * sizeof *s);

		if (s == NULL) {
			seterr(err, errlen, "%s", strerror(errno));
			goto out;
		}
		b->s = s;
		b->cap = json_array_size(root);
	}
	if ((soff = calloc(json_array_size(root) + 1, 2 * sizeof *soff)) == NULL) {
		seterr(err, errlen, "%s", strerror(errno));
		goto out;
	}
	toff = soff + json_array_size(root) + 1;
	json_array_foreach(root, k, o) {
		struct bio_sample *s = &b->s[k];
		json_int_t id;

		if (!json_is_object(o)) {
			seterr(err, errlen, "sample %zu: not an object", k);
			goto out;
		}
		v = json_object_get(o, "id");
		if (!json_is_integer(v) || (id = json_integer_value(v)) < 0) {
			seterr(err, errlen, "sample %zu: \"id\" is not a "
			    "non-negative integer", k);
			goto out;
		}
		s->id = (uint64_t)id;
		if ((v = json_object_get(o, "source")) == NULL) {
			seterr(err, errlen, "sample %zu: no \"source\"", k);
			goto out;
		}
		if ((r = take_tokens(b, v, &soff[k], &s->nsrc)) != 0) {
			if (r == -2)
				seterr(err, errlen, "%s", strerror(errno));
			else
				seterr(err, errlen, "sample %zu: \"source\" is "
				    "not an array of integers", k);
			goto out;
		}
		v = json_object_get(o, "target");
		if (v != NULL && json_is_null(v))
			v = NULL;
		if (k == 0)
			b->has_target = v != NULL;
		else if (b->has_target != (v != NULL)) {
			seterr(err, errlen, "sample %zu: %s \"target\" where "
			    "sample 0 %s", k, v ? "a" : "no",
			    v ? "has none" : "has one");
			goto out;
		}
		s->ntgt = 0;
		if (v != NULL && (r = take_tokens(b, v, &toff[k], &s->ntgt)) != 0) {
			if (r == -2)
				seterr(err, errlen, "%s", strerror(errno));
			else
				seterr(err, errlen, "sample %zu: \"target\" is "
				    "not an array of integers", k);
			goto out;
		}
	}
	b->n = json_array_size(root);
	/* The pool may have moved while it grew: point into it now. */
	for (k = 0; k < b->n; k++) {
		b->s[k].src = b->tok != NULL ? b->tok + soff[k] : NULL;
		b->s[k].tgt = b->has_target && b->tok != NULL ?
		    b->tok + toff[k] : NULL;
	}
	rc = 0;
out:
	if (rc == -1)
		b->n = 0;
	free(soff);
	json_decref(root);
	return rc;
}

void
bio_batch_free(struct bio_batch *b)
{
	free(b->s);
	free(b->tok);
	memset(b, 0, sizeof *b);
}
