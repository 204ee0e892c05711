/*
 * batch-sample's kernel inputs and batch outputs.  See batchio.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "batchio.h"
#include "buf.h"
#include "errmsg.h"
#include "exjson.h"

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
			rp_seterr(err, errlen, "line %ju: size %ju exceeds %ju",
			    (uintmax_t)lineno, (uintmax_t)b,
			    (uintmax_t)BIO_MAX_SIZE);
			goto fail;
		}
		if (s->n == s->cap && sizes_grow(s) == -1) {
			rp_seterr(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		s->index[s->n] = a;
		s->size[s->n] = (uint32_t)b;
		s->n++;
	}
	return 0;
bad:
	rp_seterr(err, errlen, "line %ju: expected %s", (uintmax_t)lineno,
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
		rp_seterr(err, errlen, "bad JSON at column %d: %s", je.column,
		    je.text);
		return -1;
	}
	if (!json_is_array(root)) {
		rp_seterr(err, errlen, "expected a JSON array of samples");
		goto out;
	}
	if (json_array_size(root) > b->cap) {
		struct bio_sample *s = realloc(b->s,
		    json_array_size(root) * sizeof *s);

		if (s == NULL) {
			rp_seterr(err, errlen, "%s", strerror(errno));
			goto out;
		}
		b->s = s;
		b->cap = json_array_size(root);
	}
	if ((soff = calloc(json_array_size(root) + 1, 2 * sizeof *soff)) == NULL) {
		rp_seterr(err, errlen, "%s", strerror(errno));
		goto out;
	}
	toff = soff + json_array_size(root) + 1;
	json_array_foreach(root, k, o) {
		struct bio_sample *s = &b->s[k];
		json_int_t id;

		if (!json_is_object(o)) {
			rp_seterr(err, errlen, "sample %zu: not an object", k);
			goto out;
		}
		v = json_object_get(o, "id");
		if (!json_is_integer(v) || (id = json_integer_value(v)) < 0) {
			rp_seterr(err, errlen, "sample %zu: \"id\" is not a "
			    "non-negative integer", k);
			goto out;
		}
		s->id = (uint64_t)id;
		if ((v = json_object_get(o, "source")) == NULL) {
			rp_seterr(err, errlen, "sample %zu: no \"source\"", k);
			goto out;
		}
		if ((r = take_tokens(b, v, &soff[k], &s->nsrc)) != 0) {
			if (r == -2)
				rp_seterr(err, errlen, "%s", strerror(errno));
			else
				rp_seterr(err, errlen, "sample %zu: \"source\" is "
				    "not an array of integers", k);
			goto out;
		}
		v = json_object_get(o, "target");
		if (v != NULL && json_is_null(v))
			v = NULL;
		if (k == 0)
			b->has_target = v != NULL;
		else if (b->has_target != (v != NULL)) {
			rp_seterr(err, errlen, "sample %zu: %s \"target\" where "
			    "sample 0 %s", k, v ? "a" : "no",
			    v ? "has none" : "has one");
			goto out;
		}
		s->ntgt = 0;
		if (v != NULL && (r = take_tokens(b, v, &toff[k], &s->ntgt)) != 0) {
			if (r == -2)
				rp_seterr(err, errlen, "%s", strerror(errno));
			else
				rp_seterr(err, errlen, "sample %zu: \"target\" is "
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

void
bio_batch_samples(const struct bio_batch *b, struct batch_sample *s)
{
	static const int64_t no_tokens = 0;

	for (size_t i = 0; i < b->n; i++) {
		s[i].id = (int64_t)b->s[i].id;
		s[i].src = b->s[i].src;
		s[i].nsrc = b->s[i].nsrc;
		s[i].tgt = b->has_target ? (b->s[i].tgt != NULL ? b->s[i].tgt :
		    &no_tokens) : NULL;
		s[i].ntgt = b->s[i].ntgt;
		s[i].new_src_eos = s[i].new_tgt_bos = 0;
	}
}

/* ---- batches out ---- */

/* Room for n more bytes at the end of b, or NULL (errno set). */
static inline char *
room(struct buf *b, size_t n)
{
	if (b->cap - b->len < n && rp_buf_reserve(b, n) == -1)
		return NULL;
	return (char *)b->p + b->len;
}

static inline void
put_end(struct buf *b, char *q)
{
	b->len = (size_t)(q - (char *)b->p);
}

/* A pair number: below 10 for most batches, one digit. */
static inline char *
put_pair(uint32_t pair, char *q)
{
	if (pair < 10) {
		*q++ = (char)('0' + pair);
		return q;
	}
	return exjson_format_i64((int64_t)pair, q);
}

int
bio_put_ids(struct buf *b, const struct batch_item *it, size_t n)
{
	char *q;

	/* pairs and indices are below 2^63: 36 bytes an item at most */
	if (n > (SIZE_MAX - 1) / 36 || (q = room(b, 36 * n + 1)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*q++ = ' ';
		q = put_pair(it[i].pair, q);
		*q++ = ':';
		q = exjson_format_i64((int64_t)it[i].index, q);
	}
	*q++ = '\n';
	put_end(b, q);
	return 0;
}

int
bio_put_indices(struct buf *b, const uint64_t *index, size_t n)
{
	char *q;

	if (n > (SIZE_MAX - 1) / 21 || (q = room(b, 21 * n + 1)) == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*q++ = ' ';
		q = exjson_format_u64(index[i], q);
	}
	*q++ = '\n';
	put_end(b, q);
	return 0;
}

/* A JSON array of n integers. */
static int
put_ints(struct buf *b, const int64_t *v, size_t n)
{
	char *q;

	if (n > (SIZE_MAX - 2) / 21 || (q = room(b, 21 * n + 2)) == NULL)
		return -1;
	*q++ = '[';
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*q++ = ',';
		q = exjson_format_i64(v[i], q);
	}
	*q++ = ']';
	put_end(b, q);
	return 0;
}

/* A JSON matrix of n rows of w, or null when v is not present. */
static int
put_matrix(struct buf *b, const int64_t *v, size_t n, size_t w, int present)
{
	if (!present)
		return rp_buf_puts(b, "null");
	if (rp_buf_putc(b, '[') == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && rp_buf_putc(b, ',') == -1) ||
		    put_ints(b, v + i * w, w) == -1)
			return -1;
	return rp_buf_putc(b, ']');
}

int
bio_put_collated(struct buf *b, const struct batch_collated *c, int has_target,
    int input_feeding)
{
	char *q;

	if (rp_buf_puts(b, "\"id\":") == -1 || put_ints(b, c->id, c->n) == -1 ||
	    (q = room(b, 80)) == NULL)
		return -1;
	q = stpcpy(q, ",\"nsentences\":");
	q = exjson_format_u64((uint64_t)c->n, q);
	q = stpcpy(q, ",\"ntokens\":");
	q = exjson_format_i64(c->ntokens, q);
	q = stpcpy(q, ",\"src_tokens\":");
	put_end(b, q);
	if (put_matrix(b, c->src_tokens, c->n, c->src_width, 1) == -1 ||
	    rp_buf_puts(b, ",\"src_lengths\":") == -1 ||
	    put_ints(b, c->src_lengths, c->n) == -1 ||
	    rp_buf_puts(b, ",\"prev_output_tokens\":") == -1 ||
	    put_matrix(b, c->prev_output_tokens, c->n, c->tgt_width,
	    has_target && input_feeding) == -1 ||
	    rp_buf_puts(b, ",\"target\":") == -1 ||
	    put_matrix(b, c->target, c->n, c->tgt_width, has_target) == -1)
		return -1;
	return 0;
}

int
bio_put_collated_line(struct buf *b, const struct batch_collated *c,
    int has_target, int input_feeding)
{
	if (rp_buf_putc(b, '{') == -1 ||
	    bio_put_collated(b, c, has_target, input_feeding) == -1)
		return -1;
	return rp_buf_puts(b, "}\n");
}

int
bio_put_json(struct buf *b, uint64_t epoch, uint64_t shard, uint64_t step,
    const struct batch_item *it, size_t n, const struct batch_collated *c,
    int has_target, int input_feeding)
{
	char *q;

	if (n > (SIZE_MAX - 128) / 44 || (q = room(b, 44 * n + 128)) == NULL)
		return -1;
	q = stpcpy(q, "{\"epoch\":");
	q = exjson_format_u64(epoch, q);
	q = stpcpy(q, ",\"shard\":");
	q = exjson_format_u64(shard, q);
	q = stpcpy(q, ",\"step\":");
	q = exjson_format_u64(step, q);
	q = stpcpy(q, ",\"ids\":[");
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*q++ = ',';
		*q++ = '[';
		q = put_pair(it[i].pair, q);
		*q++ = ',';
		q = exjson_format_i64((int64_t)it[i].index, q);
		*q++ = ']';
	}
	*q++ = ']';
	put_end(b, q);
	if (c != NULL && (rp_buf_putc(b, ',') == -1 ||
	    bio_put_collated(b, c, has_target, input_feeding) == -1))
		return -1;
	return rp_buf_puts(b, "}\n");
}

/* Add feature 'name' (a static string) and, with nshape >= 0 dimensions, its _shape. */
static void
feature(struct bio_features *f, const char *name, const int64_t *v, size_t n,
    const int64_t *shape, int nshape)
{
	f->name[f->n] = name;
	f->val[f->n] = v;
	f->len[f->n] = n;
	f->n++;
	if (nshape < 0)
		return;
	snprintf(f->names[f->n], sizeof f->names[f->n], "%s_shape", name);
	memcpy(f->shape[f->n], shape, (size_t)nshape * sizeof *shape);
	f->name[f->n] = f->names[f->n];
	f->val[f->n] = f->shape[f->n];
	f->len[f->n] = (size_t)nshape;
	f->n++;
}

int
bio_features_batch(struct bio_features *f, uint64_t epoch, uint64_t shard,
    uint64_t step, const struct batch_item *it, size_t n,
    const struct batch_collated *c, int has_target, int input_feeding)
{
	int64_t sh[2] = { (int64_t)n, 2 };

	if (2 * n + 1 > f->idscap) {
		int64_t *p;

		if (n > SIZE_MAX / 2 / sizeof *p - 1 ||
		    (p = realloc(f->ids, (2 * n + 1) * sizeof *p)) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		f->ids = p;
		f->idscap = 2 * n + 1;
	}
	f->n = 0;
	f->head[0] = (int64_t)epoch;
	f->head[1] = (int64_t)shard;
	f->head[2] = (int64_t)step;
	feature(f, "epoch", &f->head[0], 1, NULL, -1);
	feature(f, "shard", &f->head[1], 1, NULL, -1);
	feature(f, "step", &f->head[2], 1, NULL, -1);
	for (size_t i = 0; i < n; i++) {
		f->ids[2 * i] = it[i].pair;
		f->ids[2 * i + 1] = (int64_t)it[i].index;
	}
	feature(f, "ids", f->ids, 2 * n, sh, 2);
	if (c == NULL)
		return 0;
	sh[0] = (int64_t)c->n;
	feature(f, "id", c->id, c->n, sh, 1);
	f->head[3] = (int64_t)c->n;
	feature(f, "nsentences", &f->head[3], 1, sh, 0);
	feature(f, "ntokens", &c->ntokens, 1, sh, 0);
	sh[1] = (int64_t)c->src_width;
	feature(f, "src_tokens", c->src_tokens, c->n * c->src_width, sh, 2);
	feature(f, "src_lengths", c->src_lengths, c->n, sh, 1);
	sh[1] = (int64_t)c->tgt_width;
	if (has_target && input_feeding)
		feature(f, "prev_output_tokens", c->prev_output_tokens,
		    c->n * c->tgt_width, sh, 2);
	if (has_target)
		feature(f, "target", c->target, c->n * c->tgt_width, sh, 2);
	return 0;
}

void
bio_features_free(struct bio_features *f)
{
	free(f->ids);
	memset(f, 0, sizeof *f);
}
