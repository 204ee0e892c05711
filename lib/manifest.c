/*
 * Dataset manifests: reading, checking records, inference.  See
 * manifest.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "manifest.h"
#include "manifest_int.h"

/* JSON checking with key paths. */

void
jck_init(struct jck *c, char *err, size_t errlen)
{
	c->path[0] = '\0';
	c->len = 0;
	c->err = err;
	c->errlen = errlen;
}

size_t
jck_key(struct jck *c, const char *key)
{
	size_t old = c->len;
	int k;

	k = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s",
	    c->len ? "." : "", key);
	if (k > 0)
		c->len += (size_t)k < sizeof c->path - c->len ? (size_t)k :
		    sizeof c->path - c->len - 1;
	return old;
}

size_t
jck_index(struct jck *c, size_t i)
{
	size_t old = c->len;
	int k;

	k = snprintf(c->path + c->len, sizeof c->path - c->len, "[%zu]", i);
	if (k > 0)
		c->len += (size_t)k < sizeof c->path - c->len ? (size_t)k :
		    sizeof c->path - c->len - 1;
	return old;
}

void
jck_up(struct jck *c, size_t len)
{
	c->len = len;
	c->path[len] = '\0';
}

int
jck_fail(struct jck *c, const char *fmt, ...)
{
	va_list ap;
	int k = 0;

	if (c->errlen == 0)
		return -1;
	if (c->len)
		k = snprintf(c->err, c->errlen, "%s: ", c->path);
	if (k < 0 || (size_t)k >= c->errlen)
		k = 0;
	va_start(ap, fmt);
	vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

int
jck_keys(struct jck *c, const json_t *obj, const char *const *keys)
{
	const char *k;
	json_t *v;
	size_t i, old;

	json_object_foreach((json_t *)obj, k, v) {
		for (i = 0; keys[i]; i++)
			if (strcmp(k, keys[i]) == 0)
				break;
		if (keys[i] == NULL) {
			old = jck_key(c, k);
			jck_fail(c, "unknown key");
			jck_up(c, old);
			return -1;
		}
	}
	return 0;
}

int
jck_is_int(const json_t *j, int64_t *v)
{
	double d;

	if (json_is_integer(j)) {
		*v = json_integer_value(j);
		return 1;
	}
	if (json_is_real(j)) {
		d = json_real_value(j);
		if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
			*v = (int64_t)d;
			return 1;
		}
	}
	return 0;
}

static int
jck_get(struct jck *c, const json_t *obj, const char *k, int req,
    json_t **out)
{
	*out = json_object_get(obj, k);
	if (*out == NULL) {
		if (req)
			return jck_fail(c, "missing required key '%s'", k);
		return 0;
	}
	return 1;
}

int
jck_int(struct jck *c, const json_t *obj, const char *k, int req,
    int64_t lo, int64_t *v)
{
	json_t *j;
	int64_t x;
	size_t old;
	int r;

	if ((r = jck_get(c, obj, k, req, &j)) <= 0)
		return r;
	old = jck_key(c, k);
	if (!jck_is_int(j, &x))
		r = jck_fail(c, "expected an integer");
	else if (x < lo)
		r = jck_fail(c, "%" PRId64 " is below %" PRId64, x, lo);
	else
		*v = x;
	jck_up(c, old);
	return r;
}

int
jck_bool(struct jck *c, const json_t *obj, const char *k, int req, int *v)
{
	json_t *j;
	size_t old;
	int r;

	if ((r = jck_get(c, obj, k, req, &j)) <= 0)
		return r;
	if (!json_is_boolean(j)) {
		old = jck_key(c, k);
		r = jck_fail(c, "expected true or false");
		jck_up(c, old);
		return r;
	}
	*v = json_is_true(j);
	return 1;
}

int
jck_str(struct jck *c, const json_t *obj, const char *k, int req,
    const char **v)
{
	json_t *j;
	size_t old;
	int r;

	if ((r = jck_get(c, obj, k, req, &j)) <= 0)
		return r;
	if (!json_is_string(j) || strlen(json_string_value(j)) !=
	    json_string_length(j)) {
		old = jck_key(c, k);
		r = jck_fail(c, json_is_string(j) ? "a NUL in the string" :
		    "expected a string");
		jck_up(c, old);
		return r;
	}
	*v = json_string_value(j);
	return 1;
}

int
jck_ints(struct jck *c, const json_t *obj, const char *k, int req,
    int64_t lo, int64_t *v, int max, int *n)
{
	json_t *j, *e;
	size_t old, i;
	int64_t x;
	int r;

	if ((r = jck_get(c, obj, k, req, &j)) <= 0)
		return r;
	old = jck_key(c, k);
	if (!json_is_array(j)) {
		r = jck_fail(c, "expected a list of integers");
		goto out;
	}
	if (json_array_size(j) > (size_t)max) {
		r = jck_fail(c, "more than %d dimensions", max);
		goto out;
	}
	json_array_foreach(j, i, e) {
		if (!jck_is_int(e, &x)) {
			jck_index(c, i);
			r = jck_fail(c, "expected an integer");
			goto out;
		}
		if (x < lo) {
			jck_index(c, i);
			r = jck_fail(c, "%" PRId64 " is below %" PRId64, x, lo);
			goto out;
		}
		v[i] = x;
	}
	*n = (int)json_array_size(j);
out:
	jck_up(c, old);
	return r;
}

int
jck_shape(struct jck *c, const json_t *obj, const char *k, int req,
    int64_t lo, int64_t *v, int max, int *n, uint64_t *nelem)
{
	uint64_t e = 1;
	int r;

	if ((r = jck_ints(c, obj, k, req, lo, v, max, n)) <= 0)
		return r;
	for (int i = 0; i < *n; i++) {
		if (v[i] < 0)
			continue;
		if (v[i] > 0 && e > MF_MAXELEM / (uint64_t)v[i]) {
			size_t old = jck_key(c, k);

			r = jck_fail(c, "more than 2^40 elements");
			jck_up(c, old);
			return r;
		}
		e *= (uint64_t)v[i];
	}
	*nelem = e;
	return r;
}

json_t *
jck_load(const char *text, size_t n, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j;

	j = json_loadb(text, n, JSON_DECODE_ANY, &je);
	if (j == NULL)
		rp_seterr(err, errlen, "line %d: column %d: %s", je.line,
		    je.column, je.text);
	return j;
}

/* dtypes */

static const struct {
	const char	*name;
	int		 t;
} dtype_names[] = {
	{ "bool", MF_BOOL }, { "int8", MF_INT8 }, { "int16", MF_INT16 },
	{ "int32", MF_INT32 }, { "int64", MF_INT64 }, { "uint8", MF_UINT8 },
	{ "uint16", MF_UINT16 }, { "uint32", MF_UINT32 },
	{ "uint64", MF_UINT64 }, { "float16", MF_FLOAT16 },
	{ "float32", MF_FLOAT32 }, { "float64", MF_FLOAT64 },
	{ "string", MF_STRING },
	/* TensorFlow's aliases, read but never written */
	{ "half", MF_FLOAT16 }, { "float", MF_FLOAT32 },
	{ "double", MF_FLOAT64 },
};

int
mf_dtype_parse(const char *s)
{
	for (size_t i = 0; i < sizeof dtype_names / sizeof *dtype_names; i++)
		if (strcmp(s, dtype_names[i].name) == 0)
			return dtype_names[i].t;
	return -1;
}

const char *
mf_dtype_name(enum mf_dtype t)
{
	return (unsigned)t < MF_NDTYPE ? dtype_names[t].name : "?";
}

size_t
mf_dtype_size(enum mf_dtype t)
{
	static const unsigned char sz[MF_NDTYPE] = {
		[MF_BOOL] = 1, [MF_INT8] = 1, [MF_INT16] = 2, [MF_INT32] = 4,
		[MF_INT64] = 8, [MF_UINT8] = 1, [MF_UINT16] = 2,
		[MF_UINT32] = 4, [MF_UINT64] = 8, [MF_FLOAT16] = 2,
		[MF_FLOAT32] = 4, [MF_FLOAT64] = 8, [MF_STRING] = 0
	};

	return (unsigned)t < MF_NDTYPE ? sz[t] : 0;
}

int
mf_dtype_is_float(enum mf_dtype t)
{
	return t == MF_FLOAT16 || t == MF_FLOAT32 || t == MF_FLOAT64;
}

size_t
mf_strip_comments(char *s, size_t n)
{
	size_t i = 0, o = 0;

	while (i < n) {
		if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		s[o++] = s[i++];
	}
	return o;
}

/* Reading */

void
mf_free(struct manifest *m)
{
	for (size_t i = 0; i < m->nfeat; i++)
		free(m->feat[i].name);
	free(m->feat);
	memset(m, 0, sizeof *m);
}

const struct mf_feature *
mf_find(const struct manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nfeat; i++)
		if (strcmp(m->feat[i].name, name) == 0)
			return &m->feat[i];
	return NULL;
}

static int
read_feature(struct jck *c, const json_t *o, int allow_var_len,
    struct mf_feature *f)
{
	static const char *const keys[] = { "name", "dtype", "shape",
	    "var_len", "deserialize_type", "deserialize_args", NULL };
	static const char *const rawkeys[] = { "endian", "len", NULL };
	const char *name, *dt, *ds, *endian;
	json_t *args;
	int64_t len = 1;
	size_t old;
	int t, r;

	if (!json_is_object(o))
		return jck_fail(c, "expected an object");
	if (jck_keys(c, o, keys) == -1 ||
	    jck_str(c, o, "name", 1, &name) == -1 ||
	    jck_str(c, o, "dtype", 1, &dt) == -1 ||
	    jck_shape(c, o, "shape", 1, 0, f->shape, MF_MAXRANK, &f->rank,
	    &f->nelem) == -1 ||
	    jck_str(c, o, "deserialize_type", 1, &ds) == -1)
		return -1;
	if (*name == '\0') {
		jck_key(c, "name");
		return jck_fail(c, "empty name");
	}
	if ((t = mf_dtype_parse(dt)) == -1) {
		jck_key(c, "dtype");
		return jck_fail(c, "unknown dtype '%s'", dt);
	}
	f->dtype = (enum mf_dtype)t;
	f->var_len = 0;
	if ((r = jck_bool(c, o, "var_len", allow_var_len, &f->var_len)) == -1)
		return -1;
	if (f->var_len && !allow_var_len) {
		jck_key(c, "var_len");
		return jck_fail(c, "true, but the manifest's allow_var_len is false");
	}
	args = json_object_get(o, "deserialize_args");
	if (args != NULL && !json_is_object(args)) {
		jck_key(c, "deserialize_args");
		return jck_fail(c, "expected an object");
	}
	f->len = 1;
	f->big_endian = 0;
	if (strcmp(ds, "int") == 0)
		f->deser = MF_DS_INT;
	else if (strcmp(ds, "float") == 0)
		f->deser = MF_DS_FLOAT;
	else if (strcmp(ds, "string") == 0)
		f->deser = MF_DS_STRING;
	else if (strcmp(ds, "raw") == 0)
		f->deser = MF_DS_RAW;
	else {
		jck_key(c, "deserialize_type");
		return jck_fail(c, "unknown type '%s' (expected int, float, "
		    "string or raw)", ds);
	}
	if (f->deser != MF_DS_RAW) {
		if (args != NULL && json_object_size(args) != 0) {
			jck_key(c, "deserialize_args");
			return jck_fail(c, "'%s' takes no arguments", ds);
		}
		if ((f->deser == MF_DS_STRING) != (f->dtype == MF_STRING)) {
			jck_key(c, "dtype");
			return jck_fail(c, "'%s' features cannot be cast to %s",
			    ds, mf_dtype_name(f->dtype));
		}
	} else {
		old = jck_key(c, "deserialize_args");
		if (args == NULL)
			return jck_fail(c, "raw needs 'endian'");
		if (jck_keys(c, args, rawkeys) == -1 ||
		    jck_str(c, args, "endian", 1, &endian) == -1)
			return -1;
		if (strcmp(endian, "little") == 0)
			f->big_endian = 0;
		else if (strcmp(endian, "big") == 0)
			f->big_endian = 1;
		else {
			jck_key(c, "endian");
			return jck_fail(c, "expected \"little\" or \"big\"");
		}
		if (f->var_len) {
			json_t *l = json_object_get(args, "len");

			if (l != NULL && !json_is_null(l)) {
				jck_key(c, "len");
				return jck_fail(c, "not allowed with var_len");
			}
		} else if (jck_int(c, args, "len", 0, 0, &len) == -1)
			return -1;
		f->len = len < 1 ? 1 : (uint64_t)len;
		jck_up(c, old);
		if (f->dtype == MF_STRING) {
			jck_key(c, "dtype");
			return jck_fail(c, "raw bytes cannot hold strings");
		}
	}
	if ((f->name = strdup(name)) == NULL)
		return -1;
	return 0;
}

int
mf_from_json(struct manifest *m, const void *obj, char *err, size_t errlen)
{
	static const char *const keys[] = { "compression", "allow_var_len",
	    "features", NULL };
	const json_t *o = obj, *comp, *feats, *e;
	struct jck c;
	size_t i, old;

	memset(m, 0, sizeof *m);
	jck_init(&c, err, errlen);
	if (errlen)
		err[0] = '\0';
	if (!json_is_object(o)) {
		rp_seterr(err, errlen, "expected a JSON object");
		return -1;
	}
	if (jck_keys(&c, o, keys) == -1)
		return -1;
	if ((comp = json_object_get(o, "compression")) == NULL) {
		jck_fail(&c, "missing required key 'compression'");
		return -1;
	}
	if (json_is_null(comp))
		m->comp = REC_NONE;
	else if (json_is_string(comp) &&
	    strcasecmp(json_string_value(comp), "zlib") == 0)
		m->comp = REC_ZLIB;
	else if (json_is_string(comp) &&
	    strcasecmp(json_string_value(comp), "gzip") == 0)
		m->comp = REC_GZIP;
	else {
		jck_key(&c, "compression");
		jck_fail(&c, "expected \"zlib\", \"gzip\" or null");
		return -1;
	}
	if (jck_bool(&c, o, "allow_var_len", 1, &m->allow_var_len) == -1)
		return -1;
	if ((feats = json_object_get(o, "features")) == NULL) {
		jck_fail(&c, "missing required key 'features'");
		return -1;
	}
	old = jck_key(&c, "features");
	if (!json_is_array(feats)) {
		jck_fail(&c, "expected a list of objects");
		return -1;
	}
	if ((m->feat = calloc(json_array_size(feats) + 1, sizeof *m->feat)) == NULL)
		return -1;
	json_array_foreach(feats, i, e) {
		size_t o2 = jck_index(&c, i);

		if (read_feature(&c, e, m->allow_var_len, &m->feat[i]) == -1) {
			m->nfeat++;	/* its name, if any, is freed too */
			mf_free(m);
			return -1;
		}
		m->nfeat++;
		for (size_t k = 0; k < i; k++)
			if (strcmp(m->feat[k].name, m->feat[i].name) == 0) {
				jck_key(&c, "name");
				jck_fail(&c, "'%s' named twice (also features[%zu])",
				    m->feat[i].name, k);
				mf_free(m);
				return -1;
			}
		jck_up(&c, o2);
	}
	jck_up(&c, old);
	return 0;
}

int
mf_parse(struct manifest *m, const char *text, size_t n, char *err,
    size_t errlen)
{
	char *s;
	json_t *j;
	int r;

	memset(m, 0, sizeof *m);
	if (err && errlen)
		err[0] = '\0';
	if ((s = malloc(n + 1)) == NULL)
		return -1;
	memcpy(s, text, n);
	n = mf_strip_comments(s, n);
	j = jck_load(s, n, err, errlen);
	free(s);
	if (j == NULL)
		return -1;
	r = mf_from_json(m, j, err, errlen);
	json_decref(j);
	return r;
}

/* Checking records */

static const char *const kind_names[] = { "no list", "a bytes list",
    "a float list", "an int64 list" };

static int
want_kind(const struct mf_feature *f)
{
	switch (f->deser) {
	case MF_DS_INT:		return EX_INT64;
	case MF_DS_FLOAT:	return EX_FLOAT;
	default:		return EX_BYTES;
	}
}

/* " step N" for messages about a step of a feature list (made only for them). */
static const char *
stepname(char *buf, size_t len, long step)
{
	if (step < 0)
		return "";
	snprintf(buf, len, " step %ld", step);
	return buf;
}

/* One Feature: 'step' >= 0 for a step of a feature list. */
static int
check_one(const struct mf_feature *f, const struct ex_feature *x, long step,
    char *err, size_t errlen)
{
	char where[40];		/* written only for a message */
	uint64_t want, bytes;

	if ((int)x->kind != want_kind(f) && !(x->n == 0 && x->kind == EX_NONE &&
	    f->deser != MF_DS_RAW && f->nelem == 0)) {
		rp_seterr(err, errlen, "feature '%s'%s: %s, but the manifest says "
		    "%s (%s)", f->name, stepname(where, sizeof where, step), kind_names[x->kind],
		    kind_names[want_kind(f)], f->deser == MF_DS_RAW ? "raw" :
		    f->deser == MF_DS_INT ? "int" : f->deser == MF_DS_FLOAT ?
		    "float" : "string");
		return -1;
	}
	want = f->deser == MF_DS_RAW ? (step >= 0 ? 1 : f->len) : f->nelem;
	if (x->n != want) {
		rp_seterr(err, errlen, "feature '%s'%s: %zu values, but its "
		    "shape wants %" PRIu64, f->name, stepname(where, sizeof where, step), x->n, want);
		return -1;
	}
	if (f->deser == MF_DS_RAW) {
		bytes = f->nelem * mf_dtype_size(f->dtype);
		for (size_t i = 0; i < x->n; i++)
			if (x->b[i].n != bytes) {
				rp_seterr(err, errlen, "feature '%s'%s: raw bytes "
				    "%zu hold %zu bytes, not %" PRIu64 " (%s x %"
				    PRIu64 ")", f->name, stepname(where, sizeof where, step), i, x->b[i].n,
				    bytes, mf_dtype_name(f->dtype), f->nelem);
				return -1;
			}
	}
	return 0;
}

/*
 * A var_len feature that a record holds as a plain list (an Example's,
 * or a SequenceExample's context feature): its values are the steps,
 * a whole number of them; raw: each byte string is one step.
 */
static int
check_flat(const struct mf_feature *f, const struct ex_feature *x, char *err,
    size_t errlen)
{
	struct ex_feature one = *x;

	if (f->deser == MF_DS_RAW || x->n == 0) {
		for (size_t i = 0; i < x->n; i++) {
			one.n = 1;
			one.b = x->b + i;
			if (check_one(f, &one, (long)i, err, errlen) == -1)
				return -1;
		}
		if (x->n == 0 && (int)x->kind != want_kind(f) &&
		    x->kind != EX_NONE)
			return check_one(f, x, 0, err, errlen);
		return 0;
	}
	if (f->nelem == 0 || x->n % f->nelem != 0) {
		rp_seterr(err, errlen, "feature '%s': %zu values, not a whole "
		    "number of steps of %" PRIu64, f->name, x->n, f->nelem);
		return -1;
	}
	one.n = f->nelem;
	return check_one(f, &one, -1, err, errlen);
}

int
mf_check_record(const struct manifest *m, const struct example *ex,
    char *err, size_t errlen)
{
	for (size_t i = 0; i < m->nfeat; i++) {
		const struct mf_feature *f = &m->feat[i];
		const struct ex_feature *x;
		size_t nl = strlen(f->name);

		if (f->var_len) {
			const struct ex_flist *l = ex_find_list(ex, f->name, nl);

			if (l == NULL && (x = ex_find(ex, f->name, nl)) != NULL) {
				/* a plain list: its values are the steps */
				if (check_flat(f, x, err, errlen) == -1)
					return -1;
				continue;
			}
			if (l == NULL) {
				rp_seterr(err, errlen, "feature list '%s' is "
				    "missing", f->name);
				return -1;
			}
			if (f->deser != MF_DS_RAW) {
				/* the usual case: every step right, nothing to say */
				size_t s = 0;

				while (s < l->n && (int)l->v[s].kind ==
				    want_kind(f) && l->v[s].n == f->nelem)
					s++;
				if (s == l->n)
					continue;
			}
			for (size_t s = 0; s < l->n; s++)
				if (check_one(f, &l->v[s], (long)s, err,
				    errlen) == -1)
					return -1;
		} else {
			x = ex_find(ex, f->name, nl);
			if (x == NULL) {
				rp_seterr(err, errlen, "feature '%s' is missing",
				    f->name);
				return -1;
			}
			if (check_one(f, x, -1, err, errlen) == -1)
				return -1;
		}
	}
	return 0;
}

/* Inference */

void
mf_infer_init(struct mf_infer *in)
{
	memset(in, 0, sizeof *in);
	in->seq = -1;
	in->comp = REC_AUTO;
}

void
mf_infer_free(struct mf_infer *in)
{
	for (size_t i = 0; i < in->nf; i++) {
		free(in->f[i].name);
		free(in->f[i].first);
		free(in->f[i].kfirst);
	}
	free(in->f);
	free(in->where0);
	mf_infer_init(in);
}

int
mf_infer_comp(struct mf_infer *in, enum rec_comp c, char *err, size_t errlen)
{
	if (in->comp != REC_AUTO && in->comp != c) {
		rp_seterr(err, errlen, "%s-compressed, but the files before are %s",
		    rec_compname(c), rec_compname(in->comp));
		return -1;
	}
	in->comp = c;
	return 0;
}

static struct mf_ifeat *
ifind(struct mf_infer *in, const uint8_t *key, size_t n, int var_len)
{
	for (size_t i = 0; i < in->nf; i++)
		if (in->f[i].var_len == var_len && strlen(in->f[i].name) == n &&
		    memcmp(in->f[i].name, key, n) == 0)
			return &in->f[i];
	return NULL;
}

static int
iadd(struct mf_infer *in, const uint8_t *key, size_t keylen, int var_len,
    int kind, uint64_t n, const char *recno, char *err, size_t errlen)
{
	struct mf_ifeat *f = ifind(in, key, keylen, var_len);

	if (memchr(key, '\0', keylen) != NULL) {
		rp_seterr(err, errlen, "%s: a feature name holds a NUL byte",
		    recno);
		return -1;
	}
	if (f == NULL) {
		if (in->nrec > 0) {
			rp_seterr(err, errlen, "feature '%.*s' is in %s but "
			    "not in %s; a manifest cannot state optional "
			    "features", (int)keylen, (const char *)key, recno,
			    in->where0);
			return -1;
		}
		if (in->nf == in->cap) {
			size_t nc = in->cap ? in->cap * 2 : 8;
			void *p = realloc(in->f, nc * sizeof *in->f);

			if (p == NULL)
				return -1;
			in->f = p;
			in->cap = nc;
		}
		f = &in->f[in->nf];
		memset(f, 0, sizeof *f);
		if ((f->name = strndup((const char *)key, keylen)) == NULL)
			return -1;
		in->nf++;
		f->kind = kind;
		f->var_len = var_len;
		f->n = n;
		if ((f->first = strdup(recno)) == NULL)
			return -1;
		if (kind != EX_NONE && (f->kfirst = strdup(recno)) == NULL)
			return -1;
		f->seen = in->nrec + 1;
		return 0;
	}
	if (f->seen == in->nrec + 1) {
		/* another step of the same list in this record */
	} else
		f->seen = in->nrec + 1;
	if (f->kind == EX_NONE && kind != EX_NONE) {
		/* a Feature with no kind says nothing of it: the first that does */
		f->kind = kind;
		if ((f->kfirst = strdup(recno)) == NULL)
			return -1;
	}
	if (kind != EX_NONE && f->kind != kind) {
		rp_seterr(err, errlen, "feature '%s': %s in %s but %s in %s",
		    f->name, kind_names[f->kind], f->kfirst, kind_names[kind],
		    recno);
		return -1;
	}
	if (f->n != n && !var_len && in->var_len_ok)
		f->flat = 1;	/* stated as var_len, one value a step */
	if (f->n != n && !f->flat) {
		rp_seterr(err, errlen, "feature '%s'%s: %" PRIu64 " values in "
		    "%s but %" PRIu64 " in %s; a fixed-length manifest cannot "
		    "state it", f->name, var_len ? " (per step)" : "", f->n,
		    f->first, n, recno);
		errno = in->var_len_ok ? EINVAL : ERANGE;
		return -1;
	}
	return 0;
}

int
mf_infer_add(struct mf_infer *in, const struct example *ex, const char *recno,
    char *err, size_t errlen)
{
	size_t i, s;

	if (in->where0 == NULL && (in->where0 = strdup(recno)) == NULL)
		return -1;
	if (in->seq == -1)
		in->seq = ex->seq;
	else if (in->seq != ex->seq) {
		rp_seterr(err, errlen, "%s is %s, but the records before are %s",
		    recno, ex->seq ?
		    "a SequenceExample" : "an Example", in->seq ?
		    "SequenceExamples" : "Examples");
		return -1;
	}
	for (i = 0; i < ex->nfeat; i++)
		if (iadd(in, ex->feat[i].key, ex->feat[i].keylen, 0,
		    ex->feat[i].kind, ex->feat[i].n, recno, err, errlen) == -1)
			return -1;
	for (i = 0; i < ex->nlists; i++) {
		const struct ex_flist *l = &ex->lists[i];

		if (l->n == 0) {
			/* no step tells the shape; needs one from elsewhere */
			if (ifind(in, l->key, l->keylen, 1) == NULL &&
			    iadd(in, l->key, l->keylen, 1, EX_NONE, UINT64_MAX,
			    recno, err, errlen) == -1)
				return -1;
			ifind(in, l->key, l->keylen, 1)->seen = in->nrec + 1;
			continue;
		}
		for (s = 0; s < l->n; s++) {
			struct mf_ifeat *f = ifind(in, l->key, l->keylen, 1);

			if (f && f->n == UINT64_MAX) {
				f->n = l->v[s].n;
				free(f->first);
				if ((f->first = strdup(recno)) == NULL)
					return -1;
			}
			if (iadd(in, l->key, l->keylen, 1, l->v[s].kind,
			    l->v[s].n, recno, err, errlen) == -1)
				return -1;
		}
	}
	for (i = 0; i < in->nf; i++)
		if (in->f[i].seen != in->nrec + 1) {
			rp_seterr(err, errlen, "feature '%s' is in %s but not "
			    "in %s; a manifest cannot state optional features",
			    in->f[i].name, in->f[i].first, recno);
			return -1;
		}
	in->nrec++;
	return 0;
}

static int
cmp_ifeat(const void *a, const void *b)
{
	return strcmp(((const struct mf_ifeat *)a)->name,
	    ((const struct mf_ifeat *)b)->name);
}

int
mf_infer_write(const struct mf_infer *in, struct buf *out, char *err,
    size_t errlen)
{
	static const char *const dt[] = { "string", "string", "float32", "int64" };
	static const char *const ds[] = { "string", "string", "float", "int" };
	struct mf_ifeat *f;
	json_t *o, *feats, *fo, *shape;
	char *s;
	int r = 0, seq = in->seq == 1;

	err[0] = '\0';
	if (in->nrec == 0) {
		rp_seterr(err, errlen, "no records to infer a manifest from");
		return -1;
	}
	if ((f = malloc((in->nf + 1) * sizeof *f)) == NULL)
		return -1;
	if (in->nf > 0) {
		memcpy(f, in->f, in->nf * sizeof *f);
		qsort(f, in->nf, sizeof *f, cmp_ifeat);
	}
	o = json_object();
	feats = json_array();
	json_object_set_new(o, "compression", in->comp == REC_ZLIB ?
	    json_string("zlib") : in->comp == REC_GZIP ? json_string("gzip") :
	    json_null());
	for (size_t i = 0; i < in->nf; i++)
		if (f[i].flat)
			seq = 1;
	json_object_set_new(o, "allow_var_len", json_boolean(seq));
	for (size_t i = 0; i < in->nf; i++) {
		if (i > 0 && strcmp(f[i].name, f[i - 1].name) == 0) {
			rp_seterr(err, errlen, "'%s' is both a context feature "
			    "and a feature list; a manifest names each once",
			    f[i].name);
			r = -1;
			break;
		}
		fo = json_string(f[i].name);	/* NULL when not UTF-8 */
		json_decref(fo);
		if (f[i].name[0] == '\0' || fo == NULL) {
			rp_seterr(err, errlen, "feature '%s': a manifest cannot "
			    "name it (%s)", f[i].name, f[i].name[0] ?
			    "not UTF-8" : "empty");
			r = -1;
			break;
		}
		fo = json_object();
		shape = json_array();
		if (f[i].n != 1 && f[i].n != UINT64_MAX && !f[i].flat)
			json_array_append_new(shape, json_integer((json_int_t)f[i].n));
		json_object_set_new(fo, "name", json_string(f[i].name));
		json_object_set_new(fo, "dtype", json_string(dt[f[i].kind]));
		json_object_set_new(fo, "shape", shape);
		json_object_set_new(fo, "var_len", json_boolean(f[i].var_len ||
		    f[i].flat));
		json_object_set_new(fo, "deserialize_type",
		    json_string(ds[f[i].kind]));
		json_array_append_new(feats, fo);
	}
	json_object_set_new(o, "features", feats);
	free(f);
	if (r == 0) {
		/* one feature a line */
		s = json_dumps(json_object_get(o, "compression"), JSON_ENCODE_ANY);
		r = s == NULL || rp_buf_puts(out, "{\n  \"compression\": ") == -1 ||
		    rp_buf_puts(out, s) == -1 ? -1 : 0;
		free(s);
		if (r == 0 && rp_buf_puts(out, seq ?
		    ",\n  \"allow_var_len\": true,\n  \"features\": [\n" :
		    ",\n  \"allow_var_len\": false,\n  \"features\": [\n") == -1)
			r = -1;
		for (size_t i = 0; r == 0 && i < json_array_size(feats); i++) {
			s = json_dumps(json_array_get(feats, i), JSON_PRESERVE_ORDER);
			if (s == NULL || rp_buf_puts(out, "    ") == -1 ||
			    rp_buf_puts(out, s) == -1 || rp_buf_puts(out, i + 1 <
			    json_array_size(feats) ? ",\n" : "\n") == -1)
				r = -1;
			free(s);
		}
		if (r == 0 && rp_buf_puts(out, "  ]\n}\n") == -1)
			r = -1;
		if (r == -1 && err[0] == '\0')
			rp_seterr(err, errlen, "a feature name is not UTF-8, "
			    "or no memory");
	}
	json_decref(o);
	return r;
}
