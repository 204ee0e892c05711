/*
 * The loader configuration: read one group of keys at a time, in the
 * order its faults are reported, then bound to a dataset's manifest
 * (ld_config_*).  See loader.h; the parsed form is in loader_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "loader_int.h"
#include "manifest_int.h"

static int
parse_slice(struct jck *c, const char *s, struct ld_step *st)
{
	size_t n = strlen(s);
	const char *p, *e;

	if (n < 2 || s[0] != '[' || s[n - 1] != ']')
		return jck_fail(c, "'%s' is not a slice like [3,:,4:,:-2,1:4]", s);
	st->nsl = 0;
	p = s + 1;
	for (;;) {
		struct ld_sl *sl;
		int part = 0;

		if (st->nsl == LD_MAXRANK)
			return jck_fail(c, "more than %d dimensions", LD_MAXRANK);
		sl = &st->sl[st->nsl++];
		memset(sl, 0, sizeof *sl);
		sl->index = 1;
		for (e = p; *e != ',' && *e != ']'; e++)
			;
		/* up to three parts separated by ':' */
		while (p <= e) {
			const char *q = p, *end;
			char num[32];
			long long v;
			size_t k;

			while (q < e && *q != ':')
				q++;
			/* trim */
			for (end = q; p < end && (*p == ' ' || *p == '\t'); p++)
				;
			while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			k = (size_t)(end - p);
			if (part == 3)
				return jck_fail(c, "'%s': more than two ':' in an item", s);
			if (k > 0) {
				char *x;

				if (k >= sizeof num)
					return jck_fail(c, "'%s': number too long", s);
				memcpy(num, p, k);
				num[k] = '\0';
				errno = 0;
				v = strtoll(num, &x, 10);
				if (*x != '\0' || errno != 0 || !(num[0] == '-' ||
				    num[0] == '+' || (num[0] >= '0' && num[0] <= '9')))
					return jck_fail(c, "'%s': '%s' is not an integer",
					    s, num);
				if (part == 0) {
					sl->start = v;
					sl->has_start = 1;
				} else if (part == 1) {
					sl->stop = v;
					sl->has_stop = 1;
				} else {
					if (v == 0)
						return jck_fail(c, "'%s': slice step "
						    "cannot be zero", s);
					sl->step = v;
				}
			} else if (part == 0 && *q != ':')
				return jck_fail(c, "'%s': an empty item", s);
			part++;
			if (q < e && *q == ':') {
				sl->index = 0;
				p = q + 1;
				if (p > e)
					break;
				if (p == e) {
					part++;
					break;
				}
			} else
				break;
		}
		if (!sl->index && sl->step == 0)
			sl->step = 1;
		if (*e == ']') {
			if (e != s + n - 1)
				return jck_fail(c, "'%s': text after ']'", s);
			break;
		}
		p = e + 1;
	}
	return 0;
}

static ssize_t
tindex(const struct ld_config *cf, const char *name)
{
	for (size_t i = 0; i < cf->nt; i++)
		if (strcmp(cf->t[i].name, name) == 0)
			return (ssize_t)i;
	return -1;
}

static int
set_names(struct ld_tspec *t, const char *name)
{
	size_t n = strlen(name) + 32;

	if ((t->name = strdup(name)) == NULL ||
	    (t->shape_name = malloc(n)) == NULL ||
	    (t->bnd_name = malloc(n)) == NULL ||
	    (t->bnd_shape_name = malloc(n)) == NULL)
		return -1;
	snprintf(t->shape_name, n, "%s_shape", name);
	snprintf(t->bnd_name, n, "%s_boundaries", name);
	snprintf(t->bnd_shape_name, n, "%s_boundaries_shape", name);
	return 0;
}

void
ld_config_free(struct ld_config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nt; i++) {
		free(c->t[i].name);
		free(c->t[i].shape_name);
		free(c->t[i].bnd_name);
		free(c->t[i].bnd_shape_name);
		free(c->t[i].padstr);
		if (c->t[i].dtype == MF_STRING || c->t[i].dtype0 == MF_STRING)
			free(c->t[i].val.s);
	}
	free(c->t);
	free(c->step);
	json_decref(c->root);
	free(c);
}

void
ld_config_set_max_bytes(struct ld_config *c, uint64_t n)
{
	c->maxbytes = n;
}

enum ld_type
ld_config_type(const struct ld_config *c)
{
	return c->type;
}

const void *
ld_config_dataset(const struct ld_config *c)
{
	return c->dataset;
}

/* A list of objects at key k (absent: empty).  -1 on a fault. */
static int
objlist(struct jck *c, const json_t *o, const char *k, const json_t **out)
{
	const json_t *l = json_object_get(o, k), *e;
	size_t i, old;

	*out = l;
	if (l == NULL)
		return 0;
	old = jck_key(c, k);
	if (!json_is_array(l))
		return jck_fail(c, "expected a list of objects");
	json_array_foreach(l, i, e)
		if (!json_is_object(e)) {
			jck_index(c, i);
			return jck_fail(c, "expected an object");
		}
	jck_up(c, old);
	return 0;
}

/*
 * The configuration is read one group of keys at a time, in the order
 * of cfg_groups[] below, which is also the order in which its faults
 * are found and reported.  Each group leaves the key path as it found
 * it, unless it fails; what later groups need of earlier ones is in
 * struct cfg_read.
 */
struct cfg_read {
	const json_t	*o;		/* the configuration object */
	int		 multi;		/* multi_load */
	const json_t	*prim, *sec, *steps;	/* lists of objects, or NULL */
};

/* The keys there may be, and "type": the loader. */
static int
cfg_type(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	static const char *const keys[] = { "type", "name", "dataset",
	    "target_batch_size", "drop_remainder", "epochs",
	    "num_parallel_reads", "num_parallel_parses",
	    "num_read_buffer_bytes", "num_prefetch", "shuffle",
	    "num_shuffle_buffer_elements", "num_filenames_shuffle_buffer",
	    "num_mix_files", "sloppy_interleave",
	    "num_interleave_out_buffer_elements",
	    "num_interleave_in_buffer_elements", "primary_features",
	    "secondary_features", "processing_steps", "padding", "multi_load",
	    "normalization", "min_window", "max_window", "stride", NULL };
	const char *type;

	if (jck_keys(c, rd->o, keys) == -1 ||
	    jck_str(c, rd->o, "type", 1, &type) == -1)
		return -1;
	if (strcmp(type, "independent") == 0)
		cf->type = LD_INDEPENDENT;
	else if (strcmp(type, "continuous_sequence") == 0)
		cf->type = LD_CONTINUOUS;
	else if (strcmp(type, "discrete_sequence") == 0)
		cf->type = LD_DISCRETE;
	else {
		jck_key(c, "type");
		return jck_fail(c, "unknown loader type '%s' (expected "
		    "independent, continuous_sequence or discrete_sequence)", type);
	}
	return 0;
}

/* "dataset": an object, read later by ld_dataset_json(). */
static int
cfg_dataset(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	if ((cf->dataset = json_object_get(rd->o, "dataset")) == NULL)
		return jck_fail(c, "missing required key 'dataset'");
	if (!json_is_object(cf->dataset)) {
		jck_key(c, "dataset");
		return jck_fail(c, "expected an object");
	}
	return 0;
}

/* "name", the batch size, "drop_remainder" and "epochs" (null: endless). */
static int
cfg_batching(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	const json_t *o = rd->o, *ep;
	const char *name;

	if (jck_str(c, o, "name", 1, &name) == -1 ||
	    jck_int(c, o, "target_batch_size", 1, 1, &cf->batch) == -1 ||
	    jck_bool(c, o, "drop_remainder", 1, &cf->drop) == -1)
		return -1;
	if ((ep = json_object_get(o, "epochs")) == NULL)
		return jck_fail(c, "missing required key 'epochs'");
	cf->epochs = -1;
	if (!json_is_null(ep) && jck_int(c, o, "epochs", 1, 0, &cf->epochs) == -1)
		return -1;
	return 0;
}

/* How the files are read: the performance knobs, shuffling, multi_load. */
static int
cfg_reading(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	const json_t *o = rd->o;
	int64_t v;
	int b;

	/* performance knobs: checked, never change the output */
	if (jck_int(c, o, "num_parallel_reads", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_parallel_parses", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_read_buffer_bytes", 1, 0, &v) == -1 ||
	    jck_int(c, o, "num_prefetch", 1, 0, &v) == -1 ||
	    jck_bool(c, o, "sloppy_interleave", 0, &b) == -1 ||
	    jck_int(c, o, "num_interleave_out_buffer_elements", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_interleave_in_buffer_elements", 0, 1, &v) == -1 ||
	    jck_bool(c, o, "shuffle", 0, &cf->shuffle) == -1 ||
	    jck_bool(c, o, "multi_load", 0, &rd->multi) == -1)
		return -1;
	cf->nshuf = cf->nfshuf = cf->nmix = 1;
	if (jck_int(c, o, "num_shuffle_buffer_elements", cf->shuffle, 1,
	    &cf->nshuf) == -1 ||
	    jck_int(c, o, "num_filenames_shuffle_buffer", cf->shuffle, 1,
	    &cf->nfshuf) == -1 ||
	    jck_int(c, o, "num_mix_files", cf->shuffle, 1, &cf->nmix) == -1)
		return -1;
	if (rd->multi && cf->type != LD_INDEPENDENT) {
		jck_key(c, "multi_load");
		return jck_fail(c, "only the independent loader loads in batches");
	}
	return 0;
}

/* The sequence loaders' windows; the independent loader has none. */
static int
cfg_windows(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	const json_t *o = rd->o, *j;

	if (cf->type == LD_INDEPENDENT) {
		static const char *const wk[] = { "min_window", "max_window",
		    "stride" };

		for (size_t i = 0; i < 3; i++)
			if (json_object_get(o, wk[i]) != NULL) {
				jck_key(c, wk[i]);
				return jck_fail(c, "only for the sequence loaders");
			}
		return 0;
	}
	if (jck_int(c, o, "min_window", 1, 1, &cf->minw) == -1 ||
	    jck_int(c, o, "max_window", 1, 1, &cf->maxw) == -1)
		return -1;
	if (cf->maxw < cf->minw) {
		jck_key(c, "max_window");
		return jck_fail(c, "%" PRId64 " is below min_window %" PRId64,
		    cf->maxw, cf->minw);
	}
	cf->stride = -1;
	j = json_object_get(o, "stride");
	if (cf->type == LD_DISCRETE && j != NULL) {
		jck_key(c, "stride");
		return jck_fail(c, "only for continuous_sequence");
	}
	if (j != NULL && !json_is_null(j) &&
	    jck_int(c, o, "stride", 1, 1, &cf->stride) == -1)
		return -1;
	return 0;
}

/* The tensors: the three lists are checked before any of their items. */
static int
cfg_tensor_lists(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	(void)cf;
	if (objlist(c, rd->o, "primary_features", &rd->prim) == -1 ||
	    objlist(c, rd->o, "secondary_features", &rd->sec) == -1 ||
	    objlist(c, rd->o, "processing_steps", &rd->steps) == -1)
		return -1;
	return 0;
}

/* "primary_features": tensors read from the records' features. */
static int
cfg_primaries(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	static const char *const pkeys[] = { "from_name", "to_name", NULL };
	const json_t *e;
	const char *s;
	size_t i, old, o2;

	if (rd->prim == NULL)
		return jck_fail(c, "missing required key 'primary_features'");
	if (json_array_size(rd->prim) == 0) {
		jck_key(c, "primary_features");
		return jck_fail(c, "no primary features");
	}
	cf->nprim = json_array_size(rd->prim);
	cf->t = calloc(cf->nprim + json_array_size(rd->sec) + 1, sizeof *cf->t);
	if (cf->t == NULL)
		return -1;
	old = jck_key(c, "primary_features");
	json_array_foreach(rd->prim, i, e) {
		struct ld_tspec *t = &cf->t[i];

		o2 = jck_index(c, i);
		if (jck_keys(c, e, pkeys) == -1 ||
		    jck_str(c, e, "from_name", 1, &t->from) == -1 ||
		    jck_str(c, e, "to_name", 1, &s) == -1)
			return -1;
		if (tindex(cf, s) >= 0) {
			jck_key(c, "to_name");
			return jck_fail(c, "'%s' is already a tensor's name", s);
		}
		if (set_names(t, s) == -1)
			return -1;
		t->shape_ref = t->dtype_ref = -1;
		cf->nt++;
		jck_up(c, o2);
	}
	jck_up(c, old);
	return 0;
}

/* One of "secondary_features" (the path at it) into t: ones or const. */
static int
cfg_secondary(struct ld_config *cf, struct jck *c, const json_t *e,
    struct ld_tspec *t)
{
	static const char *const skeys[] = { "to_name", "type", "args", NULL };
	static const char *const sakeys[] = { "shape", "dtype", "value", NULL };
	const json_t *args, *sh;
	const char *s, *type;

	if (jck_keys(c, e, skeys) == -1 ||
	    jck_str(c, e, "to_name", 1, &s) == -1 ||
	    jck_str(c, e, "type", 1, &type) == -1)
		return -1;
	if (tindex(cf, s) >= 0) {
		jck_key(c, "to_name");
		return jck_fail(c, "'%s' is already a tensor's name", s);
	}
	if (strcmp(type, "ones") == 0)
		t->sec = 1;
	else if (strcmp(type, "const") == 0)
		t->sec = 2;
	else {
		jck_key(c, "type");
		return jck_fail(c, "unknown secondary feature type '%s' "
		    "(expected const or ones)", type);
	}
	args = json_object_get(e, "args");
	jck_key(c, "args");
	if (args == NULL || !json_is_object(args))
		return jck_fail(c, "expected an object with shape and dtype");
	if (jck_keys(c, args, sakeys) == -1 ||
	    jck_str(c, args, "dtype", 1, &s) == -1)
		return -1;
	t->shape_ref = t->dtype_ref = -1;
	if ((t->dtype_ref = tindex(cf, s)) >= 0 &&
	    (size_t)t->dtype_ref >= cf->nprim)
		t->dtype_ref = -1;
	if (t->dtype_ref < 0) {
		int d = mf_dtype_parse(s);

		if (d < 0) {
			jck_key(c, "dtype");
			return jck_fail(c, "'%s' is neither a dtype nor a "
			    "primary feature", s);
		}
		t->dtype = (enum mf_dtype)d;
	}
	if ((sh = json_object_get(args, "shape")) == NULL)
		return jck_fail(c, "missing required key 'shape'");
	if (json_is_string(sh)) {
		t->shape_ref = tindex(cf, json_string_value(sh));
		if (t->shape_ref < 0 || (size_t)t->shape_ref >= cf->nprim) {
			jck_key(c, "shape");
			return jck_fail(c, "'%s' is not a primary feature",
			    json_string_value(sh));
		}
	} else if (jck_shape(c, args, "shape", 1, 0, t->sshape, MF_MAXRANK,
	    &t->srank, &t->snelem) == -1)
		return -1;
	t->value = json_object_get(args, "value");
	if (t->sec == 1 && t->value != NULL) {
		jck_key(c, "value");
		return jck_fail(c, "'ones' takes no value");
	}
	return 0;
}

/* "secondary_features": tensors made up, after the primaries. */
static int
cfg_secondaries(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	const json_t *e;
	size_t i, old, o2;

	old = jck_key(c, "secondary_features");
	json_array_foreach(rd->sec, i, e) {
		struct ld_tspec *t = &cf->t[cf->nt];

		o2 = jck_index(c, i);
		if (rd->multi)
			return jck_fail(c, "not with multi_load");
		if (cfg_secondary(cf, c, e, t) == -1)
			return -1;
		jck_up(c, o2);
		if (set_names(t, json_string_value(json_object_get(e,
		    "to_name"))) == -1)
			return -1;
		cf->nt++;
	}
	jck_up(c, old);
	return 0;
}

/* The args of each processing step (the path at "args"); -1 on a fault. */
static int
step_slice(struct jck *c, const json_t *args, struct ld_step *st)
{
	static const char *const slk[] = { "slice", NULL };
	const char *s;

	if (jck_keys(c, args, slk) == -1 ||
	    jck_str(c, args, "slice", 1, &s) == -1)
		return -1;
	jck_key(c, "slice");
	return parse_slice(c, s, st);
}

static int
step_onehot(struct jck *c, const json_t *args, struct ld_step *st)
{
	static const char *const ohk[] = { "depth", "dtype", NULL };
	const char *s = "float32";

	if (jck_keys(c, args, ohk) == -1 ||
	    jck_int(c, args, "depth", 1, 0, &st->depth) == -1 ||
	    jck_str(c, args, "dtype", 0, &s) == -1)
		return -1;
	if (mf_dtype_parse(s) < 0 || mf_dtype_parse(s) == MF_STRING) {
		jck_key(c, "dtype");
		return jck_fail(c, "'%s' is not a numeric dtype", s);
	}
	st->dtype = (enum mf_dtype)mf_dtype_parse(s);
	if ((uint64_t)st->depth > LD_MAX_BYTES / esz(st->dtype)) {
		jck_key(c, "depth");
		return jck_fail(c, "one value of depth %" PRId64 " takes %"
		    PRIu64 " bytes as %s, more than the %" PRIu64
		    " a tensor of a batch may take", st->depth,
		    (uint64_t)st->depth * esz(st->dtype),
		    mf_dtype_name(st->dtype), LD_MAX_BYTES);
	}
	return 0;
}

static int
step_reshape(struct jck *c, const json_t *args, struct ld_step *st)
{
	static const char *const rsk[] = { "shape", NULL };

	if (jck_keys(c, args, rsk) == -1 ||
	    jck_shape(c, args, "shape", 1, 1, st->shape, LD_MAXRANK - 1,
	    &st->rank, &st->nelem) == -1)
		return -1;
	return 0;
}

static const struct {
	const char	*name;
	int		 type;
	int		(*args)(struct jck *, const json_t *, struct ld_step *);
} step_types[] = {
	{ "slice", STEP_SLICE, step_slice },
	{ "onehot", STEP_ONEHOT, step_onehot },
	{ "reshape", STEP_RESHAPE, step_reshape },
};

/* One of "processing_steps" (the path at it, o2 its length) into st. */
static int
cfg_step(struct ld_config *cf, struct jck *c, const json_t *e,
    struct ld_step *st, size_t o2)
{
	static const char *const stkeys[] = { "tensor", "type", "args", NULL };
	const json_t *args;
	const char *s, *type;
	size_t k, nk = sizeof step_types / sizeof step_types[0];
	ssize_t ti;
	int r;

	if (jck_keys(c, e, stkeys) == -1 ||
	    jck_str(c, e, "tensor", 1, &s) == -1 ||
	    jck_str(c, e, "type", 1, &type) == -1)
		return -1;
	if ((ti = tindex(cf, s)) < 0) {
		jck_key(c, "tensor");
		return jck_fail(c, "no tensor is named '%s'", s);
	}
	st->tensor = (size_t)ti;
	args = json_object_get(e, "args");
	jck_key(c, "args");
	if (args != NULL && !json_is_object(args))
		return jck_fail(c, "expected an object");
	for (k = 0; k < nk && strcmp(type, step_types[k].name) != 0; k++)
		;
	if (k == nk) {
		jck_up(c, o2);
		jck_key(c, "type");
		return jck_fail(c, "unknown processing step '%s' (expected "
		    "slice, onehot or reshape)", type);
	}
	if (args == NULL)
		args = json_object();	/* borrowed below only */
	st->type = step_types[k].type;
	r = step_types[k].args(c, args, st);
	if (json_object_get(e, "args") == NULL)
		json_decref((json_t *)args);
	return r;
}

/* "processing_steps": slice, onehot or reshape, on a tensor each. */
static int
cfg_steps(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	const json_t *e;
	size_t i, old, o2;

	old = jck_key(c, "processing_steps");
	if ((cf->step = calloc(json_array_size(rd->steps) + 1,
	    sizeof *cf->step)) == NULL)
		return -1;
	json_array_foreach(rd->steps, i, e) {
		struct ld_step *st = &cf->step[i];

		o2 = jck_index(c, i);
		snprintf(st->path, sizeof st->path, "%s", c->path);
		if (rd->multi)
			return jck_fail(c, "not with multi_load");
		if (cfg_step(cf, c, e, st, o2) == -1)
			return -1;
		cf->nstep++;
		jck_up(c, o2);
	}
	jck_up(c, old);
	return 0;
}

/* The records output adds <name>_shape and <name>_boundaries[_shape]. */
static int
cfg_output_names(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	(void)rd;
	for (size_t i = 0; i < cf->nt; i++)
		for (size_t k = 0; k < cf->nt; k++)
			if (strcmp(cf->t[i].name, cf->t[k].shape_name) == 0 ||
			    strcmp(cf->t[i].name, cf->t[k].bnd_name) == 0 ||
			    strcmp(cf->t[i].name, cf->t[k].bnd_shape_name) == 0) {
				jck_key(c, i < cf->nprim ? "primary_features" :
				    "secondary_features");
				jck_index(c, i < cf->nprim ? i : i - cf->nprim);
				jck_key(c, "to_name");
				return jck_fail(c, "'%s' is a name the records output "
				    "gives to a feature of '%s'", cf->t[i].name,
				    cf->t[k].name);
			}
	return 0;
}

/* "padding": true, false or a list of objects. */
static int
cfg_padding(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	static const char *const padkeys[] = { "tensor", "shape", "value", NULL };
	const json_t *pad, *e;
	const char *s;
	size_t i, old, o2;

	pad = json_object_get(rd->o, "padding");
	if (pad != NULL && json_is_boolean(pad))
		cf->padding = json_is_true(pad);
	else if (pad != NULL) {
		if (objlist(c, rd->o, "padding", &pad) == -1)
			return -1;
		cf->padding = json_array_size(pad) > 0;
		old = jck_key(c, "padding");
		json_array_foreach(pad, i, e) {
			struct ld_tspec *t;
			const json_t *sh;
			ssize_t ti;

			o2 = jck_index(c, i);
			if (jck_keys(c, e, padkeys) == -1 ||
			    jck_str(c, e, "tensor", 1, &s) == -1)
				return -1;
			if ((ti = tindex(cf, s)) < 0) {
				jck_key(c, "tensor");
				return jck_fail(c, "no tensor is named '%s'", s);
			}
			t = &cf->t[ti];
			if (t->pad_given || t->pad_value) {
				jck_key(c, "tensor");
				return jck_fail(c, "'%s' is padded twice", s);
			}
			sh = json_object_get(e, "shape");
			if (sh != NULL && !json_is_null(sh)) {
				uint64_t ne;
				int r;

				if (jck_shape(c, e, "shape", 1, -1, t->pad_shape,
				    LD_MAXRANK - 1, &r, &ne) == -1)
					return -1;
				t->pad_given = r + 1;	/* rank + 1 */
				t->pad_index = i;
			}
			t->pad_value = json_object_get(e, "value");
			if (t->pad_value && json_is_null(t->pad_value))
				t->pad_value = NULL;
			jck_up(c, o2);
		}
		jck_up(c, old);
	}
	if (rd->multi && cf->padding) {
		jck_key(c, "padding");
		return jck_fail(c, "not with multi_load");
	}
	return 0;
}

/* "normalization": a list of {"tensor", "axis"}, as nnmaker reads it. */
static int
cfg_normalization(struct ld_config *cf, struct jck *c, struct cfg_read *rd)
{
	static const char *const normkeys[] = { "tensor", "axis", NULL };
	const json_t *norm, *e;
	const char *s;
	int64_t v;
	size_t i, old, o2;

	if (objlist(c, rd->o, "normalization", &norm) == -1)
		return -1;
	if (norm == NULL)
		return 0;
	if (rd->multi && json_array_size(norm) > 0) {
		jck_key(c, "normalization");
		return jck_fail(c, "not with multi_load");
	}
	old = jck_key(c, "normalization");
	json_array_foreach(norm, i, e) {
		ssize_t ti;

		o2 = jck_index(c, i);
		if (jck_keys(c, e, normkeys) == -1 ||
		    jck_str(c, e, "tensor", 1, &s) == -1 ||
		    jck_int(c, e, "axis", 1, 0, &v) == -1)
			return -1;
		if ((ti = tindex(cf, s)) < 0) {
			jck_key(c, "tensor");
			return jck_fail(c, "no tensor is named '%s'", s);
		}
		if (cf->t[ti].norm) {
			jck_key(c, "tensor");
			return jck_fail(c, "'%s' is normalized twice", s);
		}
		if (v >= LD_MAXRANK) {
			jck_key(c, "axis");
			return jck_fail(c, "%" PRId64 " is past the last "
			    "dimension a tensor can have", v);
		}
		cf->t[ti].norm = (int)i + 1;
		cf->t[ti].norm_axis = (int)v;
		jck_up(c, o2);
	}
	jck_up(c, old);
	return 0;
}

static int (*const cfg_groups[])(struct ld_config *, struct jck *,
    struct cfg_read *) = {
	cfg_type,
	cfg_dataset,
	cfg_batching,
	cfg_reading,
	cfg_windows,
	cfg_tensor_lists,
	cfg_primaries,
	cfg_secondaries,
	cfg_steps,
	cfg_output_names,
	cfg_padding,
	cfg_normalization,
};

static int
parse_config(struct ld_config *cf, struct jck *c)
{
	struct cfg_read rd = { .o = cf->root };

	if (!json_is_object(rd.o))
		return jck_fail(c, "expected a JSON object");
	for (size_t i = 0; i < sizeof cfg_groups / sizeof cfg_groups[0]; i++)
		if (cfg_groups[i](cf, c, &rd) == -1)
			return -1;
	return 0;
}

struct ld_config *
ld_config_parse(const char *text, size_t n, char *err, size_t errlen)
{
	struct ld_config *cf;
	struct jck c;
	char *s;

	if (errlen)
		err[0] = '\0';
	if ((cf = calloc(1, sizeof *cf)) == NULL || (s = malloc(n + 1)) == NULL) {
		free(cf);
		rp_seterr(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	cf->maxbytes = LD_MAX_BYTES;
	memcpy(s, text, n);
	n = mf_strip_comments(s, n);
	cf->root = jck_load(s, n, err, errlen);
	free(s);
	if (cf->root == NULL) {
		free(cf);
		return NULL;
	}
	jck_init(&c, err, errlen);
	if (parse_config(cf, &c) == -1) {
		if (err[0] == '\0')
			rp_seterr(err, errlen, "%s", strerror(errno));
		ld_config_free(cf);
		return NULL;
	}
	return cf;
}

/* A JSON value as a cell of dtype; -1 if it does not fit. */
static int
json_cell(const json_t *v, enum mf_dtype dt, union ld_cell *out)
{
	int64_t i;

	if (dt == MF_STRING) {
		if (!json_is_string(v))
			return -1;
		out->s = malloc(sizeof *out->s + json_string_length(v) + 1);
		if (out->s == NULL)
			return -1;
		out->s->n = json_string_length(v);
		memcpy(out->s->p, json_string_value(v), out->s->n);
		return 0;
	}
	if (dt == MF_BOOL && json_is_boolean(v)) {
		out->i = json_is_true(v);
		return 0;
	}
	if (mf_dtype_is_float(dt)) {
		if (!json_is_number(v))
			return -1;
		out->f = json_number_value(v);
		if (dt == MF_FLOAT16)
			out->f = to_half(out->f);
		else if (dt != MF_FLOAT64)
			out->f = (float)out->f;
		return 0;
	}
	if (!jck_is_int(v, &i))
		return -1;
	switch (dt) {
	case MF_BOOL:	out->i = i != 0; break;
	case MF_INT8:	out->i = (int8_t)i; break;
	case MF_INT16:	out->i = (int16_t)i; break;
	case MF_INT32:	out->i = (int32_t)i; break;
	case MF_UINT8:	out->i = (uint8_t)i; break;
	case MF_UINT16:	out->i = (uint16_t)i; break;
	case MF_UINT32:	out->i = (uint32_t)i; break;
	default:	out->i = i; break;
	}
	return out->i == i ? 0 : -1;
}

/*
 * A batch of tensor t (least values an example, of dtype dt) must fit
 * in cf->maxbytes; -1 with "key: ..." in err if it cannot.
 */
static int
batch_fits(const struct ld_config *cf, const struct ld_tspec *t,
    uint64_t least, enum mf_dtype dt, const char *key, char *err,
    size_t errlen)
{
	uint64_t b = smul(smul((uint64_t)cf->batch, least), esz(dt));

	if (b <= cf->maxbytes)
		return 0;
	rp_seterr(err, errlen, "%s: a batch of %" PRId64 " '%s' takes at least %"
	    PRIu64 " bytes as %s (%" PRIu64 " values each), more than the %"
	    PRIu64 " a tensor of a batch may take", key, cf->batch, t->name, b,
	    mf_dtype_name(dt), least, cf->maxbytes);
	return -1;
}

/*
 * What the configuration alone makes a batch take, checked before any
 * data is read: the examples held, and each tensor from the values an
 * example has at least (the manifest's shapes, secondary shapes,
 * reshapes, one-hot depths and padded shapes; a slice or a list of
 * any length may have none).
 */
static int
config_fits(struct ld_config *cf, char *err, size_t errlen)
{
	uint64_t b = smul((uint64_t)cf->batch, elem_bytes(cf));
	char key[300];
	size_t i;

	if (b > cf->maxbytes) {
		rp_seterr(err, errlen, "target_batch_size: %" PRId64 " examples "
		    "held at once take at least %" PRIu64 " bytes, more than "
		    "the %" PRIu64 " a batch may take", cf->batch, b,
		    cf->maxbytes);
		return -1;
	}
	for (i = 0; i < cf->nt; i++) {
		struct ld_tspec *t = &cf->t[i];

		if (i < cf->nprim) {
			const struct mf_feature *f = t->f;

			t->least = f->var_len || cf->type != LD_INDEPENDENT ? 0 :
			    smul(f->nelem, f->deser == MF_DS_RAW ? f->len : 1);
			if (batch_fits(cf, t, t->least, t->dtype0,
			    "target_batch_size", err, errlen) == -1)
				return -1;
			continue;
		}
		t->least = t->shape_ref >= 0 ? cf->t[t->shape_ref].least :
		    t->snelem;
		snprintf(key, sizeof key, "secondary_features[%zu].args.shape",
		    i - cf->nprim);
		if (batch_fits(cf, t, t->least, t->dtype0, key, err,
		    errlen) == -1)
			return -1;
	}
	for (i = 0; i < cf->nstep; i++) {
		const struct ld_step *st = &cf->step[i];
		struct ld_tspec *t = &cf->t[st->tensor];

		switch (st->type) {
		case STEP_SLICE:
			t->least = 0;
			break;
		case STEP_RESHAPE: {
			enum mf_dtype dt = t->dtype0;

			for (size_t j = 0; j < i; j++)
				if (cf->step[j].tensor == st->tensor &&
				    cf->step[j].type == STEP_ONEHOT)
					dt = cf->step[j].dtype;
			t->least = st->nelem;
			snprintf(key, sizeof key, "%s.args.shape", st->path);
			if (batch_fits(cf, t, t->least, dt, key, err,
			    errlen) == -1)
				return -1;
			break;
		}
		default:
			t->least = smul(t->least, (uint64_t)st->depth);
			snprintf(key, sizeof key, "%s.args.depth", st->path);
			if (batch_fits(cf, t, t->least, st->dtype, key, err,
			    errlen) == -1)
				return -1;
			break;
		}
	}
	for (i = 0; i < cf->nt; i++) {
		const struct ld_tspec *t = &cf->t[i];
		uint64_t n = 1;

		if (!cf->padding || !t->pad_given)
			continue;
		for (int d = 0; d < t->pad_given - 1; d++)
			n = smul(n, t->pad_shape[d] >= 0 ?
			    (uint64_t)t->pad_shape[d] : 1);
		snprintf(key, sizeof key, "padding[%zu].shape", t->pad_index);
		if (batch_fits(cf, t, n, t->dtype, key, err, errlen) == -1)
			return -1;
	}
	return 0;
}

int
ld_config_bind(struct ld_config *cf, const struct manifest *m, char *err,
    size_t errlen)
{
	struct jck c;
	size_t i;

	if (errlen)
		err[0] = '\0';
	jck_init(&c, err, errlen);
	if (cf->bound)
		return 0;
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tspec *t = &cf->t[i];

		if ((t->f = mf_find(m, t->from)) == NULL) {
			rp_seterr(err, errlen, "primary_features[%zu].from_name: "
			    "'%s' is not in the dataset's manifest", i, t->from);
			return -1;
		}
		t->dtype0 = t->dtype = t->f->dtype;
		t->rank0 = t->f->rank + (t->f->var_len ||
		    (t->f->deser == MF_DS_RAW && t->f->len > 1));
		if (cf->type != LD_INDEPENDENT && t->rank0 == 0)
			t->rank0 = 1;	/* one step a record */
		t->rank = t->rank0;
	}
	for (; i < cf->nt; i++) {
		struct ld_tspec *t = &cf->t[i];

		if (t->dtype_ref >= 0)
			t->dtype = cf->t[t->dtype_ref].dtype0;
		if (t->shape_ref >= 0)
			t->srank = cf->t[t->shape_ref].rank0;
		t->dtype0 = t->dtype;
		t->rank0 = t->rank = t->srank;
		if (t->sec == 1 && t->dtype == MF_STRING) {
			rp_seterr(err, errlen, "secondary_features[%zu].args.dtype: "
			    "'ones' cannot be strings", i - cf->nprim);
			return -1;
		}
		if (t->sec == 2) {
			if (t->value == NULL) {
				if (t->dtype == MF_STRING &&
				    (t->val.s = calloc(1, sizeof *t->val.s)) == NULL)
					return -1;
			} else if (json_cell(t->value, t->dtype, &t->val) == -1) {
				rp_seterr(err, errlen, "secondary_features[%zu]."
				    "args.value: not a %s value", i - cf->nprim,
				    mf_dtype_name(t->dtype));
				return -1;
			}
		} else
			t->val.i = 1;
		if (t->sec == 1 && mf_dtype_is_float(t->dtype))
			t->val.f = 1.0;
	}
	for (i = 0; i < cf->nstep; i++) {
		struct ld_step *st = &cf->step[i];
		struct ld_tspec *t = &cf->t[st->tensor];
		int k, r = 0;

		jck_init(&c, err, errlen);
		jck_key(&c, st->path);
		switch (st->type) {
		case STEP_SLICE:
			if (st->nsl > t->rank) {
				jck_key(&c, "args.slice");
				return jck_fail(&c, "%d dimensions sliced, but "
				    "'%s' has %d", st->nsl, t->name, t->rank);
			}
			for (k = 0; k < st->nsl; k++)
				r += !st->sl[k].index;
			t->rank = r + t->rank - st->nsl;
			break;
		case STEP_ONEHOT:
			if (t->dtype != MF_INT32 && t->dtype != MF_INT64) {
				jck_key(&c, "tensor");
				return jck_fail(&c, "onehot needs int32 or int64 "
				    "indices, but '%s' is %s", t->name,
				    mf_dtype_name(t->dtype));
			}
			if (t->rank + 1 >= LD_MAXRANK)
				return jck_fail(&c, "too many dimensions");
			t->rank++;
			t->dtype = st->dtype;
			break;
		default:
			t->rank = st->rank;
			break;
		}
	}
	for (i = 0; i < cf->nt; i++) {
		struct ld_tspec *t = &cf->t[i];

		if (t->norm && !mf_dtype_is_float(t->dtype)) {
			rp_seterr(err, errlen, "normalization[%d].tensor: '%s' is "
			    "%s; only float tensors are normalized (cast it "
			    "first)", t->norm - 1, t->name,
			    mf_dtype_name(t->dtype));
			return -1;
		}
		if (t->norm && t->norm_axis >= t->rank) {
			rp_seterr(err, errlen, "normalization[%d].axis: tensor "
			    "'%s' is of rank %d, so it has no axis %d",
			    t->norm - 1, t->name, t->rank, t->norm_axis);
			return -1;
		}
		if (t->pad_given && t->pad_given - 1 != t->rank) {
			rp_seterr(err, errlen, "padding: tensor '%s' has %d "
			    "dimensions, its padded shape %d", t->name, t->rank,
			    t->pad_given - 1);
			return -1;
		}
		if (t->pad_value) {
			if (json_cell(t->pad_value, t->dtype, &t->padv) == -1) {
				rp_seterr(err, errlen, "padding: tensor '%s': the "
				    "value is not a %s value", t->name,
				    mf_dtype_name(t->dtype));
				return -1;
			}
			if (t->dtype == MF_STRING)
				t->padstr = t->padv.s;
		} else if (t->dtype == MF_STRING) {
			if ((t->padstr = calloc(1, sizeof *t->padstr)) == NULL)
				return -1;
			t->padv.s = t->padstr;
		} else
			t->padv.i = 0;
	}
	if (config_fits(cf, err, errlen) == -1)
		return -1;
	cf->bound = 1;
	return 0;
}

