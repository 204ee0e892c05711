/*
 * nnmaker-style datasets and batch loaders.  See loader.h.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "crc32c.h"
#include "example.h"
#include "exjson.h"
#include "loader.h"
#include "manifest_int.h"
#include "record.h"
#include "rng.h"

/* Datasets */

/* "a/b": malloc()ed, or NULL. */
static char *
joinpath(const char *a, size_t alen, const char *b)
{
	size_t n = alen + 1 + strlen(b) + 1;
	char *p;

	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%.*s/%s", (int)alen, a, b);
	return p;
}

int
ld_read_file(const char *path, char **text, size_t *n)
{
	struct buf b = { 0 };
	ssize_t k;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	for (;;) {
		if (buf_reserve(&b, 65536) == -1)
			goto fail;
		k = read(fd, b.p + b.len, b.cap - b.len - 1);
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1)
			goto fail;
		if (k == 0)
			break;
		b.len += (size_t)k;
	}
	close(fd);
	b.p[b.len] = '\0';
	*text = (char *)b.p;
	*n = b.len;
	return 0;
fail:
	k = errno;
	close(fd);
	buf_free(&b);
	errno = (int)k;
	return -1;
}

void
ld_dataset_free(struct ld_dataset *d)
{
	mf_free(&d->mf);
	free(d->manifest_path);
	for (size_t i = 0; i < d->nfiles; i++)
		free(d->files[i]);
	free(d->files);
	memset(d, 0, sizeof *d);
}

static int
add_file(struct ld_dataset *d, size_t *cap, const char *p, size_t n)
{
	if (d->nfiles == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *q = realloc(d->files, nc * sizeof *d->files);

		if (q == NULL)
			return -1;
		d->files = q;
		*cap = nc;
	}
	if ((d->files[d->nfiles] = strndup(p, n)) == NULL)
		return -1;
	d->nfiles++;
	return 0;
}

static int
has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcasecmp(s + n - k, suf) == 0;
}

/* Collect *.tfrecords under dir; 0, or -1 with errno (the path in 'bad'). */
static int
walk(struct ld_dataset *d, size_t *cap, const char *dir, char *bad,
    size_t badlen)
{
	DIR *dp;
	struct dirent *de;
	struct stat st;
	char *p;
	int r = 0;

	if ((dp = opendir(dir)) == NULL) {
		snprintf(bad, badlen, "%s", dir);
		return -1;
	}
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((p = joinpath(dir, strlen(dir), de->d_name)) == NULL) {
			r = -1;
			break;
		}
		if (lstat(p, &st) == -1) {
			snprintf(bad, badlen, "%s", p);
			free(p);
			r = -1;
			break;
		}
		if (S_ISDIR(st.st_mode))
			r = walk(d, cap, p, bad, badlen);
		else if (has_suffix(de->d_name, ".tfrecords"))
			r = add_file(d, cap, p, strlen(p));
		free(p);
		if (r == -1)
			break;
	}
	if (r == 0 && errno != 0) {
		snprintf(bad, badlen, "%s", dir);
		r = -1;
	}
	closedir(dp);
	return r;
}

static int
cmpstrp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
load_manifest(struct ld_dataset *d, char *err, size_t errlen)
{
	char *text, e[400];
	size_t n;

	if (ld_read_file(d->manifest_path, &text, &n) == -1) {
		snprintf(err, errlen, "%s: %s", d->manifest_path, strerror(errno));
		return -1;
	}
	if (mf_parse(&d->mf, text, n, e, sizeof e) == -1) {
		snprintf(err, errlen, "%s: %s", d->manifest_path,
		    e[0] ? e : strerror(errno));
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

static int
dataset_dir(struct ld_dataset *d, const char *dir, char *err, size_t errlen)
{
	char bad[512];
	size_t cap = 0, n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if ((d->manifest_path = joinpath(dir, n, "__manifest__.json")) == NULL)
		return -1;
	if (load_manifest(d, err, errlen) == -1)
		return -1;
	{
		char *root = strndup(dir, n);
		int r;

		if (root == NULL)
			return -1;
		r = walk(d, &cap, root, bad, sizeof bad);
		free(root);
		if (r == -1) {
			snprintf(err, errlen, "%s: %s", bad, strerror(errno));
			return -1;
		}
	}
	if (d->nfiles == 0) {
		snprintf(err, errlen, "%.*s: no .tfrecords files", (int)n, dir);
		return -1;
	}
	qsort(d->files, d->nfiles, sizeof *d->files, cmpstrp);
	return 0;
}

static int
dataset_list(struct ld_dataset *d, const char *mpath, const char *lpath,
    char *err, size_t errlen)
{
	char *text, *p, *e, *end;
	size_t n, cap = 0;

	if ((d->manifest_path = strdup(mpath)) == NULL)
		return -1;
	if (load_manifest(d, err, errlen) == -1)
		return -1;
	if (ld_read_file(lpath, &text, &n) == -1) {
		snprintf(err, errlen, "%s: %s", lpath, strerror(errno));
		return -1;
	}
	for (p = text, end = text + n; p < end; p = e + 1) {
		char *a, *b;

		if ((e = memchr(p, '\n', (size_t)(end - p))) == NULL)
			e = end;
		for (a = p; a < e && (*a == ' ' || *a == '\t' || *a == '\r'); a++)
			;
		for (b = e; b > a && (b[-1] == ' ' || b[-1] == '\t' ||
		    b[-1] == '\r'); b--)
			;
		if (b > a && add_file(d, &cap, a, (size_t)(b - a)) == -1) {
			free(text);
			return -1;
		}
	}
	free(text);
	if (d->nfiles == 0) {
		snprintf(err, errlen, "%s: no file names", lpath);
		return -1;
	}
	return 0;
}

int
ld_dataset_json(struct ld_dataset *d, const void *spec, const char *path,
    char *err, size_t errlen)
{
	static const char *const keys[] = { "type", "args", NULL };
	static const char *const dirkeys[] = { "data_dir", NULL };
	static const char *const listkeys[] = { "manifest_file", "list_file",
	    NULL };
	const json_t *o = spec, *args;
	const char *type, *a, *b;
	struct jck c;
	int r;

	memset(d, 0, sizeof *d);
	jck_init(&c, err, errlen);
	jck_key(&c, path);
	if (!json_is_object(o))
		return jck_fail(&c, "expected an object");
	if (jck_keys(&c, o, keys) == -1 || jck_str(&c, o, "type", 1, &type) == -1)
		return -1;
	if ((args = json_object_get(o, "args")) == NULL)
		return jck_fail(&c, "missing required key 'args'");
	jck_key(&c, "args");
	if (!json_is_object(args))
		return jck_fail(&c, "expected an object");
	if (strcmp(type, "dir") == 0) {
		if (jck_keys(&c, args, dirkeys) == -1 ||
		    jck_str(&c, args, "data_dir", 1, &a) == -1)
			return -1;
		r = dataset_dir(d, a, err, errlen);
	} else if (strcmp(type, "list") == 0) {
		if (jck_keys(&c, args, listkeys) == -1 ||
		    jck_str(&c, args, "manifest_file", 1, &a) == -1 ||
		    jck_str(&c, args, "list_file", 1, &b) == -1)
			return -1;
		r = dataset_list(d, a, b, err, errlen);
	} else {
		jck_up(&c, strlen(path));
		jck_key(&c, "type");
		return jck_fail(&c, "unknown dataset type '%s' (expected dir "
		    "or list)", type);
	}
	if (r == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "%s", strerror(errno));
		ld_dataset_free(d);
	}
	return r;
}

int
ld_dataset_path(struct ld_dataset *d, const char *path, char *err,
    size_t errlen)
{
	struct stat st;
	char *text, e[400];
	size_t n;
	json_t *j, *ds;
	int r;

	memset(d, 0, sizeof *d);
	err[0] = '\0';
	if (stat(path, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if ((r = dataset_dir(d, path, err, errlen)) == -1) {
			if (err[0] == '\0')
				snprintf(err, errlen, "%s", strerror(errno));
			ld_dataset_free(d);
		}
		return r;
	}
	if (ld_read_file(path, &text, &n) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = mf_strip_comments(text, n);
	j = jck_load(text, n, e, sizeof e);
	free(text);
	if (j == NULL) {
		snprintf(err, errlen, "%s: %s", path, e);
		return -1;
	}
	if (json_is_object(j) && (ds = json_object_get(j, "dataset")) != NULL) {
		r = ld_dataset_json(d, ds, "dataset", e, sizeof e);
	} else if (json_is_object(j) && json_object_get(j, "args") != NULL) {
		r = ld_dataset_json(d, j, "", e, sizeof e);
	} else {
		if ((d->manifest_path = strdup(path)) == NULL)
			r = -1;
		else
			r = mf_from_json(&d->mf, j, e, sizeof e);
		if (r == -1)
			ld_dataset_free(d);
	}
	json_decref(j);
	if (r == -1)
		snprintf(err, errlen, "%s: %s", path, e);
	return r;
}

/* Configuration */

#define LD_MAXRANK	(MF_MAXRANK + 4)
/*
 * The most memory one tensor of a batch may take (4 bytes a float32
 * value, 8 any other), and the examples of a batch held at once: what
 * a configuration number would make larger is refused up front, naming
 * its key and the size, and what the data makes larger is an error
 * before the allocation.  A batch written as one Example could not be
 * larger anyway (protocol buffers stop at 2 GiB).
 */
#define LD_MAX_BYTES	(UINT64_C(1) << 31)

struct ld_str {
	size_t		 n;
	uint8_t		 p[];
};

union ld_cell {
	int64_t		 i;
	double		 f;
	struct ld_str	*s;
};

/* Bytes a value of dtype takes in a tensor. */
static inline size_t
esz(enum mf_dtype dt)
{
	return dt == MF_FLOAT32 ? sizeof(float) : sizeof(union ld_cell);
}

enum { STEP_SLICE, STEP_ONEHOT, STEP_RESHAPE };

struct ld_sl {			/* one item of a slice: an index or start:stop:step */
	int		 index;
	int		 has_start, has_stop;
	int64_t		 start, stop, step;
};

struct ld_step {
	int		 type;
	size_t		 tensor;
	char		 path[256];	/* "processing_steps[2]" */
	int		 nsl;
	struct ld_sl	 sl[LD_MAXRANK];
	int64_t		 depth;		/* onehot */
	enum mf_dtype	 dtype;		/* onehot */
	int		 rank;		/* reshape */
	int64_t		 shape[LD_MAXRANK];
	uint64_t	 nelem;		/* reshape: product of shape */
};

struct ld_tspec {
	char		*name;
	char		*shape_name;	/* "<name>_shape" */
	char		*bnd_name;	/* "<name>_boundaries" */
	char		*bnd_shape_name;
	/* primaries */
	const char	*from;
	const struct mf_feature *f;
	/* secondaries */
	int		 sec;		/* 0 primary, 1 ones, 2 const */
	ssize_t		 shape_ref;	/* tensor whose shape to copy, or -1 */
	int		 srank;
	int64_t		 sshape[LD_MAXRANK];
	uint64_t	 snelem;	/* product of sshape */
	ssize_t		 dtype_ref;
	const json_t	*value;		/* const value, or NULL */
	union ld_cell	 val;
	/* static dtype and rank, as loaded and after the steps */
	enum mf_dtype	 dtype0, dtype;
	int		 rank0, rank;
	/* padding */
	int		 pad_given;
	size_t		 pad_index;	/* in "padding" */
	int64_t		 pad_shape[LD_MAXRANK];
	const json_t	*pad_value;
	union ld_cell	 padv;
	struct ld_str	 *padstr;
	/* values an example has at least, as known before the data */
	uint64_t	 least;
	/* normalization (after batching and padding) */
	int		 norm;		/* 1 + its index in "normalization", or 0 */
	int		 norm_axis;	/* axis of the example, 0 .. rank - 1 */
};

struct ld_config {
	json_t		*root;
	enum ld_type	 type;
	const json_t	*dataset;
	int64_t		 batch;
	int		 drop;
	int64_t		 epochs;	/* -1: endless */
	int		 shuffle;
	int64_t		 nshuf, nfshuf, nmix;
	int64_t		 minw, maxw, stride;	/* stride -1: the window's length */
	int		 padding;
	size_t		 nprim, nt;
	struct ld_tspec	*t;
	size_t		 nstep;
	struct ld_step	*step;
	int		 bound;
	uint64_t	 maxbytes;	/* ld_config_set_max_bytes() */
};

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

static int
parse_config(struct ld_config *cf, struct jck *c)
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
	static const char *const pkeys[] = { "from_name", "to_name", NULL };
	static const char *const skeys[] = { "to_name", "type", "args", NULL };
	static const char *const sakeys[] = { "shape", "dtype", "value", NULL };
	static const char *const stkeys[] = { "tensor", "type", "args", NULL };
	static const char *const padkeys[] = { "tensor", "shape", "value", NULL };
	static const char *const normkeys[] = { "tensor", "axis", NULL };
	const json_t *o = cf->root, *ep, *prim, *sec, *steps, *pad, *e, *j;
	const char *type, *name, *s;
	int64_t v;
	int b, multi = 0;
	size_t i, old, o2;

	if (!json_is_object(o))
		return jck_fail(c, "expected a JSON object");
	if (jck_keys(c, o, keys) == -1 || jck_str(c, o, "type", 1, &type) == -1)
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
	if ((cf->dataset = json_object_get(o, "dataset")) == NULL)
		return jck_fail(c, "missing required key 'dataset'");
	if (!json_is_object(cf->dataset)) {
		jck_key(c, "dataset");
		return jck_fail(c, "expected an object");
	}
	if (jck_str(c, o, "name", 1, &name) == -1 ||
	    jck_int(c, o, "target_batch_size", 1, 1, &cf->batch) == -1 ||
	    jck_bool(c, o, "drop_remainder", 1, &cf->drop) == -1)
		return -1;
	if ((ep = json_object_get(o, "epochs")) == NULL)
		return jck_fail(c, "missing required key 'epochs'");
	cf->epochs = -1;
	if (!json_is_null(ep) && jck_int(c, o, "epochs", 1, 0, &cf->epochs) == -1)
		return -1;
	/* performance knobs: checked, never change the output */
	if (jck_int(c, o, "num_parallel_reads", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_parallel_parses", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_read_buffer_bytes", 1, 0, &v) == -1 ||
	    jck_int(c, o, "num_prefetch", 1, 0, &v) == -1 ||
	    jck_bool(c, o, "sloppy_interleave", 0, &b) == -1 ||
	    jck_int(c, o, "num_interleave_out_buffer_elements", 0, 1, &v) == -1 ||
	    jck_int(c, o, "num_interleave_in_buffer_elements", 0, 1, &v) == -1 ||
	    jck_bool(c, o, "shuffle", 0, &cf->shuffle) == -1 ||
	    jck_bool(c, o, "multi_load", 0, &multi) == -1)
		return -1;
	cf->nshuf = cf->nfshuf = cf->nmix = 1;
	if (jck_int(c, o, "num_shuffle_buffer_elements", cf->shuffle, 1,
	    &cf->nshuf) == -1 ||
	    jck_int(c, o, "num_filenames_shuffle_buffer", cf->shuffle, 1,
	    &cf->nfshuf) == -1 ||
	    jck_int(c, o, "num_mix_files", cf->shuffle, 1, &cf->nmix) == -1)
		return -1;
	if (multi && cf->type != LD_INDEPENDENT) {
		jck_key(c, "multi_load");
		return jck_fail(c, "only the independent loader loads in batches");
	}
	if (cf->type == LD_INDEPENDENT) {
		static const char *const wk[] = { "min_window", "max_window",
		    "stride" };

		for (i = 0; i < 3; i++)
			if (json_object_get(o, wk[i]) != NULL) {
				jck_key(c, wk[i]);
				return jck_fail(c, "only for the sequence loaders");
			}
	} else {
		if (jck_int(c, o, "min_window", 1, 1, &cf->minw) == -1 ||
		    jck_int(c, o, "max_window", 1, 1, &cf->maxw) == -1)
			return -1;
		if (cf->maxw < cf->minw) {
			jck_key(c, "max_window");
			return jck_fail(c, "%" PRId64 " is below min_window %"
			    PRId64, cf->maxw, cf->minw);
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
	}

	/* tensors: primaries, then secondaries */
	if (objlist(c, o, "primary_features", &prim) == -1 ||
	    objlist(c, o, "secondary_features", &sec) == -1 ||
	    objlist(c, o, "processing_steps", &steps) == -1)
		return -1;
	if (prim == NULL)
		return jck_fail(c, "missing required key 'primary_features'");
	if (json_array_size(prim) == 0) {
		jck_key(c, "primary_features");
		return jck_fail(c, "no primary features");
	}
	cf->nprim = json_array_size(prim);
	cf->t = calloc(cf->nprim + json_array_size(sec) + 1, sizeof *cf->t);
	if (cf->t == NULL)
		return -1;
	old = jck_key(c, "primary_features");
	json_array_foreach(prim, i, e) {
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
	old = jck_key(c, "secondary_features");
	json_array_foreach(sec, i, e) {
		struct ld_tspec *t = &cf->t[cf->nt];
		const json_t *args, *sh;

		o2 = jck_index(c, i);
		if (multi)
			return jck_fail(c, "not with multi_load");
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
		} else if (jck_shape(c, args, "shape", 1, 0, t->sshape,
		    MF_MAXRANK, &t->srank, &t->snelem) == -1)
			return -1;
		t->value = json_object_get(args, "value");
		if (t->sec == 1 && t->value != NULL) {
			jck_key(c, "value");
			return jck_fail(c, "'ones' takes no value");
		}
		jck_up(c, o2);
		if (set_names(t, json_string_value(json_object_get(e,
		    "to_name"))) == -1)
			return -1;
		cf->nt++;
	}
	jck_up(c, old);

	old = jck_key(c, "processing_steps");
	if ((cf->step = calloc(json_array_size(steps) + 1, sizeof *cf->step)) == NULL)
		return -1;
	json_array_foreach(steps, i, e) {
		static const char *const slk[] = { "slice", NULL };
		static const char *const ohk[] = { "depth", "dtype", NULL };
		static const char *const rsk[] = { "shape", NULL };
		struct ld_step *st = &cf->step[i];
		const json_t *args;
		ssize_t ti;

		o2 = jck_index(c, i);
		snprintf(st->path, sizeof st->path, "%s", c->path);
		if (multi)
			return jck_fail(c, "not with multi_load");
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
		if (args == NULL)
			args = json_object();	/* borrowed below only */
		if (strcmp(type, "slice") == 0) {
			st->type = STEP_SLICE;
			if (jck_keys(c, args, slk) == -1 ||
			    jck_str(c, args, "slice", 1, &s) == -1)
				goto stepfail;
			jck_key(c, "slice");
			if (parse_slice(c, s, st) == -1)
				goto stepfail;
		} else if (strcmp(type, "onehot") == 0) {
			st->type = STEP_ONEHOT;
			s = "float32";
			if (jck_keys(c, args, ohk) == -1 ||
			    jck_int(c, args, "depth", 1, 0, &st->depth) == -1 ||
			    jck_str(c, args, "dtype", 0, &s) == -1)
				goto stepfail;
			if (mf_dtype_parse(s) < 0 || mf_dtype_parse(s) == MF_STRING) {
				jck_key(c, "dtype");
				jck_fail(c, "'%s' is not a numeric dtype", s);
				goto stepfail;
			}
			st->dtype = (enum mf_dtype)mf_dtype_parse(s);
			if ((uint64_t)st->depth > LD_MAX_BYTES / esz(st->dtype)) {
				jck_key(c, "depth");
				jck_fail(c, "one value of depth %" PRId64 " takes %"
				    PRIu64 " bytes as %s, more than the %" PRIu64
				    " a tensor of a batch may take", st->depth,
				    (uint64_t)st->depth * esz(st->dtype),
				    mf_dtype_name(st->dtype), LD_MAX_BYTES);
				goto stepfail;
			}
		} else if (strcmp(type, "reshape") == 0) {
			st->type = STEP_RESHAPE;
			if (jck_keys(c, args, rsk) == -1 ||
			    jck_shape(c, args, "shape", 1, 1, st->shape,
			    LD_MAXRANK - 1, &st->rank, &st->nelem) == -1)
				goto stepfail;
		} else {
			jck_up(c, o2);
			jck_key(c, "type");
			jck_fail(c, "unknown processing step '%s' (expected "
			    "slice, onehot or reshape)", type);
			goto stepfail;
		}
		if (json_object_get(e, "args") == NULL)
			json_decref((json_t *)args);
		cf->nstep++;
		jck_up(c, o2);
		continue;
stepfail:
		if (json_object_get(e, "args") == NULL)
			json_decref((json_t *)args);
		return -1;
	}
	jck_up(c, old);

	/* the records output adds <name>_shape and <name>_boundaries[_shape] */
	for (i = 0; i < cf->nt; i++)
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

	/* padding: true, false or a list of objects */
	pad = json_object_get(o, "padding");
	if (pad != NULL && json_is_boolean(pad))
		cf->padding = json_is_true(pad);
	else if (pad != NULL) {
		if (objlist(c, o, "padding", &pad) == -1)
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
	if (multi && cf->padding) {
		jck_key(c, "padding");
		return jck_fail(c, "not with multi_load");
	}

	/* normalization: a list of {"tensor", "axis"}, as nnmaker reads it */
	if (objlist(c, o, "normalization", &pad) == -1)
		return -1;
	if (pad != NULL) {
		if (multi && json_array_size(pad) > 0) {
			jck_key(c, "normalization");
			return jck_fail(c, "not with multi_load");
		}
		old = jck_key(c, "normalization");
		json_array_foreach(pad, i, e) {
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
	}
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
		snprintf(err, errlen, "%s", strerror(errno));
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
			snprintf(err, errlen, "%s", strerror(errno));
		ld_config_free(cf);
		return NULL;
	}
	return cf;
}

/* A JSON value as a cell of dtype; -1 if it does not fit. */
static double	to_half(double);

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

static uint64_t	elem_bytes(const struct ld_config *);

/* a x b, or UINT64_MAX past it */
static uint64_t
smul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
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
	snprintf(err, errlen, "%s: a batch of %" PRId64 " '%s' takes at least %"
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
		snprintf(err, errlen, "target_batch_size: %" PRId64 " examples "
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
			snprintf(err, errlen, "primary_features[%zu].from_name: "
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
			snprintf(err, errlen, "secondary_features[%zu].args.dtype: "
			    "'ones' cannot be strings", i - cf->nprim);
			return -1;
		}
		if (t->sec == 2) {
			if (t->value == NULL) {
				if (t->dtype == MF_STRING &&
				    (t->val.s = calloc(1, sizeof *t->val.s)) == NULL)
					return -1;
			} else if (json_cell(t->value, t->dtype, &t->val) == -1) {
				snprintf(err, errlen, "secondary_features[%zu]."
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
			snprintf(err, errlen, "normalization[%d].tensor: '%s' is "
			    "%s; only float tensors are normalized (cast it "
			    "first)", t->norm - 1, t->name,
			    mf_dtype_name(t->dtype));
			return -1;
		}
		if (t->norm && t->norm_axis >= t->rank) {
			snprintf(err, errlen, "normalization[%d].axis: tensor "
			    "'%s' is of rank %d, so it has no axis %d",
			    t->norm - 1, t->name, t->rank, t->norm_axis);
			return -1;
		}
		if (t->pad_given && t->pad_given - 1 != t->rank) {
			snprintf(err, errlen, "padding: tensor '%s' has %d "
			    "dimensions, its padded shape %d", t->name, t->rank,
			    t->pad_given - 1);
			return -1;
		}
		if (t->pad_value) {
			if (json_cell(t->pad_value, t->dtype, &t->padv) == -1) {
				snprintf(err, errlen, "padding: tensor '%s': the "
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

/* Running */

/*
 * A tensor's values: float32 as packed floats (4 bytes each, what the
 * records hold and the output writes), every other dtype as cells.
 */
struct ld_tv {
	enum mf_dtype	 dtype;
	int		 rank;
	int64_t		 shape[LD_MAXRANK];
	size_t		 n;
	void		*v;	/* n floats or n cells, by dtype (esz()) */
	size_t		 cap;	/* bytes at v, kept when an element is reused */
	int		 has_crc;	/* float32: crc is crc32c_value(values) */
	uint32_t	 crc;
};

struct ld_elem {
	int64_t		*bounds;	/* discrete: nprim x nb offsets */
	size_t		 nb;		/* records + 1 */
	struct ld_tv	 tv[];
};

struct ld_src {
	int		 open;
	int		 dead;
	size_t		 file;
	int		 fd;
	struct rec_reader *r;
	uint64_t	 steps;		/* continuous: steps read in the file */
	uint64_t	 nwin;		/* windows made */
	/* continuous: the steps not yet passed, per primary */
	void		**cells;	/* as ld_tv's v, by the primary's dtype */
	size_t		*cap;
	size_t		*w;		/* cells a step */
	int64_t		(*sh)[LD_MAXRANK];	/* shape of a step */
	size_t		 start;		/* steps passed, still at the front of cells */
	size_t		 have;		/* steps held, after those */
	uint64_t	 skip;		/* steps still to pass before the next window */
	int64_t		 want;		/* the drawn window length, or -1 */
	/* discrete: the window being joined, its records so far */
	struct ld_elem	*cur;
	size_t		 nq;
	uint64_t	 nrecs;
};

struct ld_out {
	int		 rank;
	int64_t		 shape[LD_MAXRANK];
	size_t		 n, cap;
	size_t		 per;		/* cells an example */
	int		 direct;	/* no padding: read the examples' own values */
	int		 ready;		/* v holds the batch (out_ready()) */
	void		*v;	/* as ld_tv's v */
	uint64_t	 cells, padded;	/* totals for --stats */
	int64_t		*bnd;		/* discrete: batch x bw */
	size_t		 bw, bcap;
	float		*pad;		/* float32 padding for the gathered output */
	size_t		 npad;
};

struct loader {
	struct ld_config *cf;
	const struct ld_dataset *ds;
	struct rng	 rf, re, rw;	/* files, elements, windows */
	enum ex_type	 et;
	struct example	 ex;		/* long int64 and bytes lists left lazy */
	struct example	 exw;		/* the same decoded whole (lazy_of()) */
	uint64_t	 epoch;		/* the epoch being read */
	int		 in_epoch;
	uint64_t	 epoch_elems;
	size_t		*fbuf;		/* file shuffle buffer */
	size_t		 fbn, fnext;
	struct ld_src	*src;
	size_t		 nsrc, pos, ndead;
	struct ld_elem	**ebuf;		/* element shuffle buffer */
	size_t		 ebn, ebcap;
	int		 input_done;
	/*
	 * The buffers grow with the elements they hold (elems_room()), up
	 * to the configuration's sizes: memory follows the data.
	 */
	struct ld_elem	**batch;
	size_t		 nbatch, bcap;
	struct ld_elem	**spare;	/* freed elements to reuse, at most a batch */
	size_t		 nspare, scap;
	struct ld_out	*out;
	struct ld_stats	 st;
	int		 ended;
	uint64_t	 maxrec;	/* ld_set_max_record() */
	/*
	 * The fast path (fast_probe()): records in the canonical form whose
	 * primaries are packed float32 or int64 lists are read straight
	 * from the record, without ex_decode().
	 */
	int		 fast;
	struct iovec	*iov;		/* ld_write_example_iov()'s pieces */
	size_t		 niov, ciov;
	uint32_t	 crc;		/* of the pieces */
	int		 want_crc;	/* elements get their CRCs (elem_crc()) */
	struct { size_t len; uint32_t op; } zop[256];	/* crc32c_zeros() */
	struct ex_want	*fw;		/* per primary */
	struct ex_span	*fsp;
	const uint8_t	**fval;		/* float values */
	size_t		*fstride, *fskip;	/* var_len: steps */
	int64_t		**fi64;		/* int64 values, decoded */
	size_t		*fi64cap;
};


/* Memory an element held in a batch takes besides its values. */
static uint64_t
elem_bytes(const struct ld_config *cf)
{
	return sizeof(struct ld_elem) + cf->nt * sizeof(struct ld_tv) +
	    2 * sizeof(struct ld_elem *);
}

/* Value k of v, values of dtype dt. */
static inline void *
at(void *v, size_t k, enum mf_dtype dt)
{
	return (char *)v + k * esz(dt);
}

static inline const void *
cat(const void *v, size_t k, enum mf_dtype dt)
{
	return (const char *)v + k * esz(dt);
}

/* Store cell c (of dtype dt: a float32 cell holds a float's value) as value k. */
static inline void
put_cell(void *v, size_t k, enum mf_dtype dt, union ld_cell c)
{
	if (dt == MF_FLOAT32)
		((float *)v)[k] = (float)c.f;
	else
		((union ld_cell *)v)[k] = c;
}

static inline union ld_cell
get_cell(const void *v, size_t k, enum mf_dtype dt)
{
	union ld_cell c;

	if (dt == MF_FLOAT32)
		c.f = ((const float *)v)[k];
	else
		c = ((const union ld_cell *)v)[k];
	return c;
}

static void
tv_clear(struct ld_tv *t)
{
	if (t->dtype == MF_STRING && t->v)
		for (size_t i = 0; i < t->n; i++)
			free(((union ld_cell *)t->v)[i].s);
	free(t->v);
	t->v = NULL;
	t->n = 0;
	t->cap = 0;
}

/* Room for need elements at *a (*cap of them now), at most max; -1 on ENOMEM. */
static int
elems_room(struct ld_elem ***a, size_t *cap, size_t need, size_t max)
{
	struct ld_elem **q;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap < 8 ? 8 : *cap * 2;
	if (nc > max)
		nc = max;
	if (nc < need)
		nc = need;
	if ((q = realloc(*a, nc * sizeof *q)) == NULL)
		return -1;
	*a = q;
	*cap = nc;
	return 0;
}

static void
elem_destroy(const struct loader *l, struct ld_elem *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < l->cf->nt; i++)
		tv_clear(&e->tv[i]);
	free(e->bounds);
	free(e);
}

/*
 * Done with e: kept for elem_new() with its number buffers (up to a
 * batch of them, so memory stays bounded by the shuffle buffer), or
 * freed.
 */
static void
elem_free(struct loader *l, struct ld_elem *e)
{
	if (e == NULL)
		return;
	if (l->nspare >= (size_t)l->cf->batch || elems_room(&l->spare,
	    &l->scap, l->nspare + 1, (size_t)l->cf->batch) == -1) {
		elem_destroy(l, e);
		return;
	}
	for (size_t i = 0; i < l->cf->nt; i++) {
		if (e->tv[i].dtype == MF_STRING)
			tv_clear(&e->tv[i]);
		else
			e->tv[i].n = 0;
		e->tv[i].has_crc = 0;
	}
	free(e->bounds);
	e->bounds = NULL;
	e->nb = 0;
	l->spare[l->nspare++] = e;
}

/* An element: its tensors' v may hold a buffer to reuse (tv_alloc()). */
static struct ld_elem *
elem_new(struct loader *l)
{
	if (l->nspare > 0)
		return l->spare[--l->nspare];
	return calloc(1, sizeof(struct ld_elem) + l->cf->nt * sizeof(struct ld_tv));
}

/*
 * The same, for an element whose first tensor will take 'bytes': the
 * spare whose buffer fits it best (tv_room() keeps a buffer at most a
 * quarter too large), so that buffers are seldom made anew.
 */
static struct ld_elem *
elem_new_fit(struct loader *l, size_t bytes)
{
	size_t i, best = l->nspare;

	for (i = 0; i < l->nspare; i++) {
		size_t c = l->spare[i]->tv[0].cap;

		if (c >= bytes && c <= bytes + bytes / 4 && (best == l->nspare ||
		    c < l->spare[best]->tv[0].cap))
			best = i;
	}
	if (best < l->nspare) {
		struct ld_elem *e = l->spare[best];

		l->spare[best] = l->spare[--l->nspare];
		return e;
	}
	return elem_new(l);
}

/*
 * Room for n values in t, keeping those it holds; -1 on ENOMEM.  Just
 * the room asked for (tv_alloc() and the windows ask for what they will
 * hold), so that the shuffle buffer holds no more than its elements.
 */
static int
tv_room(struct ld_tv *t, size_t n)
{
	size_t es = t->dtype == MF_STRING ? sizeof(union ld_cell) :
	    esz(t->dtype), nc;
	void *q;

	nc = (n ? n : 1) * es;
	/* a reused element's block serves unless far too large */
	if (nc <= t->cap && t->v != NULL && (t->n > 0 || t->cap <= nc + nc / 4))
		return 0;
	if (t->n == 0) {	/* nothing to keep: the freed block can serve */
		free(t->v);
		t->v = NULL;
		t->cap = 0;
	}
	if ((q = realloc(t->v, nc)) == NULL)
		return -1;
	t->v = q;
	t->cap = nc;
	return 0;
}

/*
 * Room for need values in t, keeping those it holds, for a window that
 * will hold most if it is made: the room doubles up to most, so that a
 * window whose length the configuration draws (max_window) takes the
 * memory of the values it has, not of the length drawn.
 */
static int
tv_grow(struct ld_tv *t, size_t need, size_t most)
{
	size_t es = t->dtype == MF_STRING ? sizeof(union ld_cell) :
	    esz(t->dtype), n;

	if (t->n == 0) {
		/* a new window: the block it has serves, up to most */
		n = t->cap / es;
		if (n > most)
			n = most;
		if (n < need)
			n = need;
		return tv_room(t, n);
	}
	if (need * es <= t->cap)
		return 0;
	n = t->cap / es * 2;
	if (n > most)
		n = most;
	if (n < need)
		n = need;
	return tv_room(t, n);
}

static int
tv_alloc(struct ld_tv *t, size_t n)
{
	if (t->dtype == MF_STRING) {	/* cells start NULL for tv_clear() */
		free(t->v);
		t->cap = 0;
		t->n = n;
		if ((t->v = calloc(n ? n : 1, sizeof(union ld_cell))) == NULL)
			return -1;
		t->cap = (n ? n : 1) * sizeof(union ld_cell);
		return 0;
	}
	t->n = 0;	/* nothing to keep: the caller writes every number */
	if (tv_room(t, n) == -1)
		return -1;
	t->n = n;
	return 0;
}

static struct ld_str *
str_new(const uint8_t *p, size_t n)
{
	struct ld_str *s = malloc(sizeof *s + n + 1);

	if (s != NULL) {
		s->n = n;
		memcpy(s->p, p, n);
	}
	return s;
}

static double
half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m | 0x400, e - 25);
	return h & 0x8000 ? -v : v;
}

static int64_t
int_as(enum mf_dtype dt, int64_t i)
{
	switch (dt) {
	case MF_BOOL:	return i != 0;
	case MF_INT8:	return (int8_t)i;
	case MF_INT16:	return (int16_t)i;
	case MF_INT32:	return (int32_t)i;
	case MF_UINT8:	return (uint8_t)i;
	case MF_UINT16:	return (uint16_t)i;
	case MF_UINT32:	return (uint32_t)i;
	default:	return i;
	}
}

/*
 * f rounded to the nearest float16, ties to even (tf.cast's rounding),
 * as a double: past the largest half (65504) it is infinite, below the
 * smallest normal (2^-14) the step is that of the subnormals (2^-24).
 */
static double
to_half(double f)
{
	double a = fabs(f), q;
	int e;

	if (!isfinite(f) || a == 0)
		return f;
	if (a >= 65520.0)	/* halfway to 2^16 and above: no half holds it */
		return copysign(INFINITY, f);
	if (a < 0x1p-14)
		q = 0x1p-24;
	else {
		(void)frexp(a, &e);	/* a in [2^(e-1), 2^e): 10 bits below */
		q = ldexp(1, e - 11);
	}
	return copysign(nearbyint(a / q) * q, f);
}

/* A number as a cell of dtype dt (tf.cast: truncation toward zero, saturated here). */
static union ld_cell
cell_f(enum mf_dtype dt, double f)
{
	union ld_cell c;

	if (mf_dtype_is_float(dt)) {
		c.f = dt == MF_FLOAT64 ? f : dt == MF_FLOAT16 ? to_half(f) :
		    (double)(float)f;
		return c;
	}
	if (dt == MF_BOOL) {
		c.i = f != 0;
		return c;
	}
	if (isnan(f))
		c.i = 0;
	else if (dt == MF_UINT64)
		c.i = f <= 0 ? 0 : f >= 18446744073709551615.0 ? -1 :
		    (int64_t)(uint64_t)f;
	else if (f <= -9223372036854775808.0)
		c.i = INT64_MIN;
	else if (f >= 9223372036854775807.0)
		c.i = INT64_MAX;
	else
		c.i = int_as(dt, (int64_t)f);
	return c;
}

static union ld_cell
cell_i(enum mf_dtype dt, int64_t i)
{
	union ld_cell c;

	if (mf_dtype_is_float(dt))
		return cell_f(dt, (double)i);
	c.i = int_as(dt, i);
	return c;
}

/* n elements of dtype dt from raw bytes */
static void
raw_decode(const struct mf_feature *f, const uint8_t *p, size_t n,
    void *v)
{
	size_t sz = mf_dtype_size(f->dtype);

	for (size_t i = 0; i < n; i++, p += sz) {
		union ld_cell out[1];
		uint64_t u = 0;

		for (size_t k = 0; k < sz; k++)
			u |= (uint64_t)p[f->big_endian ? k : sz - 1 - k] <<
			    (8 * (sz - 1 - k));
		switch (f->dtype) {
		case MF_FLOAT16:
			out->f = half_to_double((uint16_t)u);
			break;
		case MF_FLOAT32: {
			float x;
			uint32_t u32 = (uint32_t)u;

			memcpy(&x, &u32, 4);
			out->f = x;
			break;
		}
		case MF_FLOAT64:
			memcpy(&out->f, &u, 8);
			break;
		case MF_INT8:	out->i = (int8_t)u; break;
		case MF_INT16:	out->i = (int16_t)u; break;
		case MF_INT32:	out->i = (int32_t)u; break;
		case MF_BOOL:	out->i = u != 0; break;
		default:	out->i = (int64_t)u; break;
		}
		put_cell(v, i, f->dtype, *out);
	}
}

/*
 * float32 values as a tensor keeps them: the same bits, except that a
 * signalling NaN comes out quiet (its quiet bit set), as it did when
 * values went through double on their way.
 */
static inline __attribute__((always_inline)) void
copy_f32(float *restrict dst, const void *restrict src0, size_t n)
{
	const uint8_t *src = src0;	/* perhaps unaligned: record bytes */
	size_t i = 0;

#ifdef __SSE2__
	const __m128i mag = _mm_set1_epi32(0x7fffffff),
	    inf = _mm_set1_epi32(0x7f800000), quiet = _mm_set1_epi32(0x400000);

	for (; i + 4 <= n; i += 4) {
		__m128i u = _mm_loadu_si128((const __m128i *)(const void *)(src + 4 * i));
		__m128i nan = _mm_cmpgt_epi32(_mm_and_si128(u, mag), inf);

		_mm_storeu_si128((__m128i *)(void *)(dst + i),
		    _mm_or_si128(u, _mm_and_si128(nan, quiet)));
	}
#endif
	for (; i < n; i++) {
		uint32_t u;

		memcpy(&u, src + 4 * i, 4);
		if ((u & 0x7fffffff) > 0x7f800000)
			u |= 0x400000;
		memcpy(dst + i, &u, 4);
	}
}

/* float to double cells, in a loop the compiler can vectorize */
static void
widen(union ld_cell *restrict v, const float *restrict f, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {	/* four at a time: one vector */
		v[i].f = f[i];
		v[i + 1].f = f[i + 1];
		v[i + 2].f = f[i + 2];
		v[i + 3].f = f[i + 3];
	}
	for (; i < n; i++)
		v[i].f = f[i];
}

/* Fill the values of one Feature (already checked) into v. */
static int
fill(const struct mf_feature *f, const struct ex_feature *x, void *v)
{
	union ld_cell *c = v;
	size_t i;

	switch (f->deser) {
	case MF_DS_INT:
		if (f->dtype == MF_INT64)
			for (i = 0; i < x->n; i++)
				c[i].i = x->i64[i];
		else
			for (i = 0; i < x->n; i++)
				put_cell(v, i, f->dtype, cell_i(f->dtype, x->i64[i]));
		break;
	case MF_DS_FLOAT:
		if (f->dtype == MF_FLOAT32)
			copy_f32(v, x->f32, x->n);
		else if (f->dtype == MF_FLOAT64)
			widen(c, x->f32, x->n);	/* exact */
		else
			for (i = 0; i < x->n; i++)
				c[i] = cell_f(f->dtype, x->f32[i]);
		break;
	case MF_DS_STRING:
		for (i = 0; i < x->n; i++)
			if ((c[i].s = str_new(x->b[i].p, x->b[i].n)) == NULL)
				return -1;
		break;
	case MF_DS_RAW:
		for (i = 0; i < x->n; i++)
			raw_decode(f, x->b[i].p, f->nelem,
			    at(v, i * f->nelem, f->dtype));
		break;
	}
	return 0;
}

/* Whether feature f of ex (a list's steps, or a plain list) was left lazy. */
static int
lazy_of(const struct example *ex, const struct mf_feature *f)
{
	size_t nl = strlen(f->name);
	const struct ex_flist *fl = f->var_len ? ex_find_list(ex, f->name, nl) :
	    NULL;
	const struct ex_feature *x;

	if (fl != NULL) {
		for (size_t s = 0; s < fl->n; s++)
			if (fl->v[s].lazy != NULL)
				return 1;
		return 0;
	}
	return (x = ex_find(ex, f->name, nl)) != NULL && x->lazy != NULL;
}

/* Decode one record's primaries into e; -1 with err set. */
static int
decode(struct loader *l, const uint8_t *p, size_t n, struct ld_elem *e,
    char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	const struct example *ex = &l->ex;
	struct manifest one;
	int lazy = 0;

	if (ex_decode(&l->ex, p, n, l->et) == -1) {
		snprintf(err, errlen, "payload is not %s: %s",
		    l->et == EX_TYPE_SEQUENCE ? "a SequenceExample" :
		    "an Example", ex_strerror(&l->ex));
		return -1;
	}
	one.nfeat = 1;
	for (size_t i = 0; i < cf->nprim && !lazy; i++)
		lazy = lazy_of(ex, cf->t[i].f);
	if (lazy) {
		/*
		 * A primary's list was too long to decode at once: its counts
		 * are checked first, so that a list far longer than the
		 * manifest says is refused without its 8 bytes a value (raw
		 * strings need their lengths: those are decoded whole).
		 */
		for (size_t i = 0; i < cf->nprim; i++) {
			one.feat = (struct mf_feature *)cf->t[i].f;
			if (cf->t[i].f->deser != MF_DS_RAW &&
			    mf_check_record(&one, ex, err, errlen) == -1)
				return -1;
		}
		if (ex_decode(&l->exw, p, n, l->et) == -1) {
			snprintf(err, errlen, "%s", ex_strerror(&l->exw));
			return -1;
		}
		ex = &l->exw;
	}
	for (size_t i = 0; i < cf->nprim; i++) {
		const struct mf_feature *f = cf->t[i].f;
		struct ld_tv *t = &e->tv[i];
		size_t per = f->deser == MF_DS_RAW ? f->nelem * f->len : f->nelem;

		/* check it as --check-manifest does */
		one.feat = (struct mf_feature *)f;
		if (mf_check_record(&one, ex, err, errlen) == -1)
			return -1;
		t->dtype = f->dtype;
		t->rank = 0;
		if (f->var_len && ex_find_list(ex, f->name,
		    strlen(f->name)) == NULL) {
			/* a plain list (checked): its values are the steps */
			const struct ex_feature *x = ex_find(ex, f->name,
			    strlen(f->name));
			size_t steps = f->deser == MF_DS_RAW ? x->n :
			    f->nelem ? x->n / f->nelem : 0;

			t->shape[t->rank++] = (int64_t)steps;
			if (tv_alloc(t, steps * f->nelem) == -1 ||
			    fill(f, x, t->v) == -1)
				return -1;
		} else if (f->var_len) {
			const struct ex_flist *fl = ex_find_list(ex,
			    f->name, strlen(f->name));

			t->shape[t->rank++] = (int64_t)fl->n;
			if (tv_alloc(t, fl->n * f->nelem) == -1)
				return -1;
			if (f->deser == MF_DS_FLOAT && f->nelem > 0 &&
			    (f->dtype == MF_FLOAT32 || f->dtype == MF_FLOAT64)) {
				/* steps whose values follow one another: one run */
				for (size_t s = 0, k; s < fl->n; s = k) {
					for (k = s + 1; k < fl->n &&
					    fl->v[k].f32 == fl->v[k - 1].f32 +
					    f->nelem; k++)
						;
					if (f->dtype == MF_FLOAT32)
						copy_f32(at(t->v, s * f->nelem,
						    f->dtype), fl->v[s].f32,
						    (k - s) * f->nelem);
					else
						widen(at(t->v, s * f->nelem,
						    f->dtype), fl->v[s].f32,
						    (k - s) * f->nelem);
				}
			} else
				for (size_t s = 0; s < fl->n; s++)
					if (fill(f, &fl->v[s], at(t->v,
					    s * f->nelem, f->dtype)) == -1)
						return -1;
		} else {
			const struct ex_feature *x = ex_find(ex, f->name,
			    strlen(f->name));

			if (f->deser == MF_DS_RAW && f->len > 1)
				t->shape[t->rank++] = (int64_t)f->len;
			if (tv_alloc(t, per) == -1 || fill(f, x, t->v) == -1)
				return -1;
		}
		for (int k = 0; k < f->rank; k++)
			t->shape[t->rank++] = f->shape[k];
		if (cf->type != LD_INDEPENDENT && t->rank == 0)
			t->shape[t->rank++] = 1;
	}
	return 0;
}

/*
 * Whether every primary can take the fast path: in the sequence
 * loaders, float32 feature lists; in the independent one, float32 or
 * int64 features of an Example.  Sets up the fast path; -1 on ENOMEM.
 */
static int
fast_setup(struct loader *l)
{
	const struct ld_config *cf = l->cf;
	size_t np = cf->nprim;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 0;	/* the values are read as the host's floats */
#endif
	for (size_t i = 0; i < np; i++) {
		const struct mf_feature *f = cf->t[i].f;

		if (f->nelem == 0)
			return 0;
		if (cf->type == LD_INDEPENDENT ? l->et != EX_TYPE_EXAMPLE ||
		    f->var_len || !((f->deser == MF_DS_FLOAT &&
		    f->dtype == MF_FLOAT32) || (f->deser == MF_DS_INT &&
		    f->dtype == MF_INT64)) : l->et != EX_TYPE_SEQUENCE ||
		    !f->var_len || f->deser != MF_DS_FLOAT ||
		    f->dtype != MF_FLOAT32)
			return 0;
	}
	if ((l->fw = calloc(np, sizeof *l->fw)) == NULL ||
	    (l->fsp = calloc(np, sizeof *l->fsp)) == NULL ||
	    (l->fval = calloc(np, sizeof *l->fval)) == NULL ||
	    (l->fstride = calloc(np, sizeof *l->fstride)) == NULL ||
	    (l->fskip = calloc(np, sizeof *l->fskip)) == NULL ||
	    (l->fi64 = calloc(np, sizeof *l->fi64)) == NULL ||
	    (l->fi64cap = calloc(np, sizeof *l->fi64cap)) == NULL)
		return -1;
	for (size_t i = 0; i < np; i++) {
		l->fw[i].name = cf->t[i].f->name;
		l->fw[i].len = strlen(cf->t[i].f->name);
		l->fw[i].list = cf->t[i].f->var_len;
	}
	l->fast = 1;
	return 0;
}

/*
 * Find the primaries in the record at p: 1 when it is canonical and
 * each holds what the manifest says, with *steps the steps of the
 * feature lists (all the same); 0 when the record is for decode(),
 * which accepts every form and says what is wrong; -1 on ENOMEM.
 */
static int
fast_probe(struct loader *l, const uint8_t *p, size_t n, size_t *steps)
{
	const struct ld_config *cf = l->cf;

	if (!ex_canonical_find(p, n, l->et == EX_TYPE_SEQUENCE, cf->nprim,
	    l->fw, l->fsp))
		return 0;
	*steps = 0;
	for (size_t i = 0; i < cf->nprim; i++) {
		const struct mf_feature *f = cf->t[i].f;
		long c;

		if (l->fsp[i].p == NULL)
			return 0;
		if (f->var_len) {
			c = ex_canonical_float_steps(l->fsp[i], f->nelem,
			    &l->fstride[i], &l->fskip[i]);
			if (c < 0 || (i > 0 && (size_t)c != *steps))
				return 0;
			*steps = (size_t)c;
		} else if (f->deser == MF_DS_FLOAT) {
			c = ex_canonical_floats(l->fsp[i], &l->fval[i]);
			if (c < 0 || (uint64_t)c != f->nelem)
				return 0;
		} else {
			size_t need = l->fsp[i].n + 1;

			/*
			 * nelem values take at most 10 bytes each: a longer
			 * list is for decode() to refuse, not for a scratch
			 * sized by the record
			 */
			if (l->fsp[i].n > 10 * f->nelem + 16)
				return 0;
			if (l->fi64cap[i] < need) {
				int64_t *q = realloc(l->fi64[i], need * sizeof *q);

				if (q == NULL)
					return -1;
				l->fi64[i] = q;
				l->fi64cap[i] = need;
			}
			c = ex_canonical_int64s(l->fsp[i], l->fi64[i], need);
			if (c < 0 || (uint64_t)c != f->nelem)
				return 0;
		}
	}
	return 1;
}

/* Steps s0..s1 of var_len primary i, found by fast_probe(), to dst. */
static void
fast_steps(const struct loader *l, size_t i, void *dst, size_t s0, size_t s1)
{
	size_t w = l->cf->t[i].f->nelem;
	const uint8_t *v = l->fsp[i].p + l->fskip[i] + s0 * l->fstride[i];

	for (size_t s = s0; s < s1; s++, v += l->fstride[i])
		copy_f32((float *)dst + (s - s0) * w, v, w);
}

/* Primary i's values, found by fast_probe(), to dst (steps for var_len). */
static void
fast_fill(const struct loader *l, size_t i, void *dst, size_t steps)
{
	const struct mf_feature *f = l->cf->t[i].f;
	size_t w = f->nelem;

	if (f->var_len)
		fast_steps(l, i, dst, 0, steps);
	else if (f->deser == MF_DS_FLOAT)
		copy_f32(dst, l->fval[i], w);
	else
		memcpy(dst, l->fi64[i], w * sizeof(int64_t));
}

/* The record fast_probe() took, into e as decode() would have put it. */
static int
fast_elem(struct loader *l, struct ld_elem *e, size_t steps)
{
	for (size_t i = 0; i < l->cf->nprim; i++) {
		const struct mf_feature *f = l->cf->t[i].f;
		struct ld_tv *t = &e->tv[i];

		t->dtype = f->dtype;
		t->rank = 0;
		if (f->var_len)
			t->shape[t->rank++] = (int64_t)steps;
		for (int k = 0; k < f->rank; k++)
			t->shape[t->rank++] = f->shape[k];
		if (tv_alloc(t, (f->var_len ? steps : 1) * f->nelem) == -1)
			return -1;
		fast_fill(l, i, t->v, steps);
	}
	return 0;
}

static size_t
prod(const int64_t *s, int r)
{
	size_t n = 1;

	for (int i = 0; i < r; i++)
		n *= (size_t)s[i];
	return n;
}

/* Copy n values of dtype dt (strings as copies of their own). */
static int
copy_cells(enum mf_dtype dt, void *dst, const void *src, size_t n)
{
	union ld_cell *d = dst;
	const union ld_cell *c = src;

	if (dt != MF_STRING) {
		if (n > 0)
			memcpy(dst, src, n * esz(dt));
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if ((d[i].s = str_new(c[i].s->p, c[i].s->n)) == NULL)
			return -1;
	return 0;
}

static void
shape_str(char *b, size_t len, const int64_t *s, int r)
{
	size_t o = 0;

	o += (size_t)snprintf(b, len, "[");
	for (int i = 0; i < r && o < len; i++)
		o += (size_t)snprintf(b + o, len - o, "%s%" PRId64, i ? "," : "",
		    s[i]);
	if (o < len)
		snprintf(b + o, len - o, "]");
}

/*
 * Record boundaries of a discrete window after a slice of its first
 * axis that keeps positions pos[0..np) (rising with step > 0, falling
 * otherwise): boundary k is the number of positions kept before the
 * k-th boundary in the new order, so a record sliced away entirely is
 * an empty span and the count of boundaries stays.
 */
static void
slice_bounds(int64_t *b, size_t nb, const int64_t *pos, int64_t np,
    int64_t step)
{
	for (size_t k = 0; k < nb; k++) {
		int64_t c = 0;

		for (int64_t j = 0; j < np; j++)
			c += step > 0 ? pos[j] < b[k] : pos[j] >= b[k];
		b[k] = c;
	}
	if (step < 0)	/* the records come last first */
		for (size_t k = 0; k < nb / 2; k++) {
			int64_t x = b[k];

			b[k] = b[nb - 1 - k];
			b[nb - 1 - k] = x;
		}
}

/*
 * Record boundaries of a discrete window after a reshape: a boundary
 * at step b of the old first axis is at element b x (old step size),
 * which must start a step of the new first axis.
 */
static int
reshape_bounds(const struct ld_config *cf, const struct ld_step *st,
    const struct ld_tv *t, int64_t *b, size_t nb, char *err, size_t errlen)
{
	char s1[128], s2[128];
	size_t pold, pnew;

	if (t->rank < 1 || t->shape[0] == 0)
		return 0;	/* no steps: every boundary is 0 */
	pold = t->n / (size_t)t->shape[0];
	pnew = st->rank > 0 && st->shape[0] > 0 ? t->n / (size_t)st->shape[0] : 0;
	for (size_t k = 0; k < nb; k++) {
		size_t el = (size_t)b[k] * pold;

		if (pnew == 0 || el % pnew != 0) {
			shape_str(s1, sizeof s1, t->shape, t->rank);
			shape_str(s2, sizeof s2, st->shape, st->rank);
			if (pnew == 0)
				snprintf(err, errlen, "%s: reshaping '%s' from %s "
				    "to %s drops the axis its record boundaries "
				    "are on", st->path, cf->t[st->tensor].name,
				    s1, s2);
			else
				snprintf(err, errlen, "%s: reshaping '%s' from %s "
				    "to %s splits a record at step %" PRId64,
				    st->path, cf->t[st->tensor].name, s1, s2,
				    b[k]);
			return -1;
		}
	}
	for (size_t k = 0; k < nb; k++)
		b[k] = (int64_t)((size_t)b[k] * pold / pnew);
	return 0;
}

/* Secondary features and processing steps on one example. */
static int
finish(struct loader *l, struct ld_elem *e, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	size_t i;

	for (i = cf->nprim; i < cf->nt; i++) {
		const struct ld_tspec *ts = &cf->t[i];
		struct ld_tv *t = &e->tv[i];

		t->dtype = ts->dtype;
		if (ts->shape_ref >= 0) {
			t->rank = e->tv[ts->shape_ref].rank;
			memcpy(t->shape, e->tv[ts->shape_ref].shape, sizeof t->shape);
		} else {
			t->rank = ts->srank;
			memcpy(t->shape, ts->sshape, sizeof ts->sshape[0] * MF_MAXRANK);
		}
		if (tv_alloc(t, prod(t->shape, t->rank)) == -1)
			return -1;
		for (size_t k = 0; k < t->n; k++)
			if (t->dtype != MF_STRING)
				put_cell(t->v, k, t->dtype, ts->val);
			else if (copy_cells(t->dtype, at(t->v, k, t->dtype),
			    &ts->val, 1) == -1)
				return -1;
	}
	for (size_t s = 0; s < cf->nstep; s++) {
		const struct ld_step *st = &cf->step[s];
		struct ld_tv *t = &e->tv[st->tensor], nt;
		int64_t *bnd;
		char sb[128];

		memset(&nt, 0, sizeof nt);
		nt.dtype = t->dtype;
		bnd = e->bounds != NULL && (size_t)st->tensor < cf->nprim ?
		    e->bounds + (size_t)st->tensor * e->nb : NULL;
		if (st->type == STEP_RESHAPE) {
			if (prod(st->shape, st->rank) != t->n) {
				shape_str(sb, sizeof sb, t->shape, t->rank);
				snprintf(err, errlen, "%s: tensor '%s' of shape %s "
				    "cannot be reshaped to %zu elements", st->path,
				    cf->t[st->tensor].name, sb,
				    prod(st->shape, st->rank));
				return -1;
			}
			if (bnd && reshape_bounds(cf, st, t, bnd, e->nb, err,
			    errlen) == -1)
				return -1;
			t->rank = st->rank;
			memcpy(t->shape, st->shape, sizeof t->shape[0] * (size_t)st->rank);
			continue;
		}
		if (st->type == STEP_ONEHOT) {
			nt.dtype = st->dtype;
			nt.rank = t->rank + 1;
			memcpy(nt.shape, t->shape, sizeof t->shape);
			nt.shape[t->rank] = st->depth;
			if (smul(smul(t->n, (uint64_t)st->depth),
			    esz(st->dtype)) > cf->maxbytes) {
				snprintf(err, errlen, "%s: onehot of '%s': %zu "
				    "values of depth %" PRId64 " take %" PRIu64
				    " bytes as %s, more than the %" PRIu64 " a "
				    "tensor of a batch may take", st->path,
				    cf->t[st->tensor].name, t->n, st->depth,
				    smul(smul(t->n, (uint64_t)st->depth),
				    esz(st->dtype)), mf_dtype_name(st->dtype),
				    cf->maxbytes);
				return -1;
			}
			if (tv_alloc(&nt, t->n * (size_t)st->depth) == -1)
				return -1;
			for (size_t k = 0; k < t->n; k++) {
				union ld_cell zero = cell_i(nt.dtype, 0),
				    one = cell_i(nt.dtype, 1);

				for (int64_t d = 0; d < st->depth; d++)
					put_cell(nt.v, k * (size_t)st->depth +
					    (size_t)d, nt.dtype, d ==
					    get_cell(t->v, k, t->dtype).i ? one : zero);
			}
		} else {
			/* slice: the positions taken along each dimension */
			int64_t *pos[LD_MAXRANK], np[LD_MAXRANK];
			size_t stride[LD_MAXRANK], idx[LD_MAXRANK], total = 1, k;
			int d, r = 0;

			if (bnd && st->nsl > 0 && st->sl[0].index) {
				snprintf(err, errlen, "%s.args.slice: an index on "
				    "the first axis of '%s' would drop the axis its "
				    "record boundaries are on", st->path,
				    cf->t[st->tensor].name);
				return -1;
			}
			memset(pos, 0, sizeof pos);
			for (d = t->rank - 1, k = 1; d >= 0; d--) {
				stride[d] = k;
				k *= (size_t)t->shape[d];
			}
			for (d = 0; d < t->rank; d++) {
				int64_t dim = t->shape[d], a, b, c, x;
				const struct ld_sl *sl = d < st->nsl ? &st->sl[d] : NULL;

				if ((pos[d] = malloc(((size_t)dim + 1) * sizeof *pos[d])) == NULL)
					goto slfail;
				np[d] = 0;
				if (sl && sl->index) {
					x = sl->start < 0 ? sl->start + dim : sl->start;
					if (x < 0 || x >= dim) {
						shape_str(sb, sizeof sb, t->shape, t->rank);
						snprintf(err, errlen, "%s.args.slice: index %"
						    PRId64 " out of range for dimension %d "
						    "of '%s', shape %s", st->path,
						    sl->start, d, cf->t[st->tensor].name, sb);
						goto slfail;
					}
					pos[d][np[d]++] = x;
					continue;
				}
				c = sl ? sl->step : 1;
				/* Python's slice.indices() */
				if (c > 0) {
					a = !sl || !sl->has_start ? 0 : sl->start;
					b = !sl || !sl->has_stop ? dim : sl->stop;
					if (a < 0 && (a += dim) < 0)
						a = 0;
					if (a > dim)
						a = dim;
					if (b < 0 && (b += dim) < 0)
						b = 0;
					if (b > dim)
						b = dim;
					for (x = a; x < b; x += c)
						pos[d][np[d]++] = x;
				} else {
					a = !sl->has_start ? dim - 1 : sl->start;
					b = !sl->has_stop ? -1 : sl->stop;
					if (sl->has_start && a < 0 && (a += dim) < 0)
						a = -1;
					if (a >= dim)
						a = dim - 1;
					if (sl->has_stop && b < 0 && (b += dim) < 0)
						b = -1;
					if (b >= dim)
						b = dim - 1;
					for (x = a; x > b; x += c)
						pos[d][np[d]++] = x;
				}
				nt.shape[r++] = np[d];
			}
			nt.rank = r;
			for (d = 0; d < t->rank; d++)
				total *= (size_t)np[d];
			if (tv_alloc(&nt, total) == -1)
				goto slfail;
			memset(idx, 0, sizeof idx);
			for (k = 0; k < total; k++) {
				size_t off = 0;

				for (d = 0; d < t->rank; d++)
					off += (size_t)pos[d][idx[d]] * stride[d];
				if (copy_cells(t->dtype, at(nt.v, k, t->dtype),
				    cat(t->v, off, t->dtype), 1) == -1)
					goto slfail;
				for (d = t->rank - 1; d >= 0; d--) {
					if (++idx[d] < (size_t)np[d])
						break;
					idx[d] = 0;
				}
			}
			if (bnd && t->rank > 0)
				slice_bounds(bnd, e->nb, pos[0], np[0],
				    st->nsl > 0 ? st->sl[0].step : 1);
			for (d = 0; d < t->rank; d++)
				free(pos[d]);
			goto swap;
slfail:
			for (d = 0; d < t->rank; d++)
				free(pos[d]);
			tv_clear(&nt);
			return -1;
		}
swap:
		tv_clear(t);
		*t = nt;
	}
	return 0;
}

/* Sources: one open data file each. */

static void
src_close(struct loader *l, struct ld_src *s)
{
	if (s->r)
		rec_reader_free(s->r);
	if (s->fd >= 0)
		close(s->fd);
	s->r = NULL;
	s->fd = -1;
	if (s->cells)
		for (size_t i = 0; i < l->cf->nprim; i++) {
			if (l->cf->t[i].dtype0 == MF_STRING && s->cells[i])
				for (size_t j = 0; j < s->have * s->w[i]; j++)
					free(((union ld_cell *)s->cells[i])
					    [s->start * s->w[i] + j].s);
			free(s->cells[i]);
		}
	free(s->cells);
	free(s->cap);
	free(s->w);
	free(s->sh);
	elem_free(l, s->cur);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}

static int
src_open(struct loader *l, struct ld_src *s, size_t file, char *err,
    size_t errlen)
{
	const char *path = l->ds->files[file];

	src_close(l, s);
	s->open = 1;
	s->file = file;
	s->want = -1;
	if ((s->fd = open(path, O_RDONLY)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((s->r = rec_reader_open(s->fd, REC_AUTO, 0, l->maxrec)) == NULL)
		return -1;
	if (l->cf->type == LD_CONTINUOUS) {
		size_t np = l->cf->nprim;

		s->cells = calloc(np, sizeof *s->cells);
		s->cap = calloc(np, sizeof *s->cap);
		s->w = calloc(np, sizeof *s->w);
		s->sh = calloc(np, sizeof *s->sh);
		if (!s->cells || !s->cap || !s->w || !s->sh)
			return -1;
	}
	return 0;
}

/* Read the next record of s: 1 with *p, *n set, 0 at the end, -1. */
static int
src_read(struct loader *l, struct ld_src *s, const uint8_t **p, size_t *n,
    char *err, size_t errlen)
{
	const char *path = l->ds->files[s->file];
	int r;

	r = rec_read(s->r, p, n);
	if (r >= 0 && rec_index(s->r) == (uint64_t)r &&
	    rec_compression(s->r) != l->ds->mf.comp) {
		snprintf(err, errlen, "%s: the file is %s-compressed, but the "
		    "manifest says %s", path, rec_compname(rec_compression(s->r)),
		    rec_compname(l->ds->mf.comp));
		return -1;
	}
	if (r == -1) {
		snprintf(err, errlen, "%s: record %" PRIu64 ": offset %" PRIu64
		    ": %s", path, rec_index(s->r), rec_offset(s->r),
		    rec_strerror(s->r));
		return -1;
	}
	if (r == 1)
		l->st.records++;
	return r;
}

/* decode() the record just read, its faults said as the record's. */
static int
src_decode(struct loader *l, struct ld_src *s, const uint8_t *p, size_t n,
    struct ld_elem *e, char *err, size_t errlen)
{
	char e2[400];

	if (decode(l, p, n, e, e2, sizeof e2) == -1) {
		snprintf(err, errlen, "%s: record %" PRIu64 ": offset %" PRIu64
		    ": %s", l->ds->files[s->file], rec_index(s->r) - 1,
		    rec_offset(s->r), e2);
		return -1;
	}
	return 0;
}

/* Read and decode the next record of s: 1, 0 at the end, -1. */
static int
src_record(struct loader *l, struct ld_src *s, struct ld_elem **out,
    char *err, size_t errlen)
{
	const uint8_t *p;
	size_t n, steps;
	int r;

	*out = NULL;
	if ((r = src_read(l, s, &p, &n, err, errlen)) != 1)
		return r;
	if ((*out = elem_new(l)) == NULL)
		return -1;
	if (l->fast && (r = fast_probe(l, p, n, &steps)) != 0) {
		if (r == 1 && fast_elem(l, *out, steps) == 0)
			return 1;
		elem_free(l, *out);
		*out = NULL;
		return -1;
	}
	if (src_decode(l, s, p, n, *out, err, errlen) == -1) {
		elem_free(l, *out);
		*out = NULL;
		return -1;
	}
	return 1;
}

/*
 * Pass the first k steps held.  They stay at the front of the cells
 * until a record needs the room (cont_next() moves the rest down then),
 * so that each step is moved about once and not once a window.
 */
static void
drop_steps(struct loader *l, struct ld_src *s, size_t k)
{
	for (size_t i = 0; i < l->cf->nprim; i++)
		if (l->cf->t[i].dtype0 == MF_STRING)
			for (size_t j = 0; j < k * s->w[i]; j++)
				free(((union ld_cell *)s->cells[i])
				    [s->start * s->w[i] + j].s);
	s->have -= k;
	s->start = s->have ? s->start + k : 0;
}


/*
 * Read the next record of a continuous source: 1 with its steps (*rec
 * the decoded record, or NULL when fast_probe() took it), 0 at the end
 * of the file, -1.  Sets the source's step widths and shapes.
 */
static int
cont_read(struct loader *l, struct ld_src *s, struct ld_elem **rec,
    size_t *steps, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	const uint8_t *p;
	size_t i, n;
	int r;

	*rec = NULL;
	if ((r = src_read(l, s, &p, &n, err, errlen)) == -1)
		return -1;
	if (r == 0) {
		if (s->nwin == 0 && s->steps < (uint64_t)cf->minw) {
			snprintf(err, errlen, "%s: %" PRIu64 " steps, fewer "
			    "than min_window %" PRId64, l->ds->files[s->file],
			    s->steps, cf->minw);
			return -1;
		}
		return 0;
	}
	if (!l->fast || (r = fast_probe(l, p, n, steps)) == 0) {
		if ((*rec = elem_new(l)) == NULL)
			return -1;
		if (src_decode(l, s, p, n, *rec, err, errlen) == -1) {
			elem_free(l, *rec);
			*rec = NULL;
			return -1;
		}
		*steps = (size_t)(*rec)->tv[0].shape[0];
	} else if (r == -1)
		return -1;
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = *rec ? &(*rec)->tv[i] : NULL;

		if (t && t->shape[0] != (*rec)->tv[0].shape[0]) {
			snprintf(err, errlen, "%s: record %" PRIu64 ": offset %"
			    PRIu64 ": feature '%s' has %" PRId64 " steps, but "
			    "'%s' has %" PRId64, l->ds->files[s->file],
			    rec_index(s->r) - 1, rec_offset(s->r), cf->t[i].from,
			    t->shape[0], cf->t[0].from, (*rec)->tv[0].shape[0]);
			elem_free(l, *rec);
			*rec = NULL;
			return -1;
		}
		if (t) {
			s->w[i] = t->shape[0] ? t->n / (size_t)t->shape[0] :
			    prod(t->shape + 1, t->rank - 1);
			memcpy(s->sh[i], t->shape, sizeof s->sh[i]);
		} else {
			const struct mf_feature *f = cf->t[i].f;

			s->w[i] = f->nelem;
			s->sh[i][0] = (int64_t)*steps;
			memcpy(s->sh[i] + 1, f->shape, sizeof f->shape[0] *
			    (size_t)f->rank);
		}
	}
	return 1;
}

/*
 * Steps s0..s1 of primary i of the record cont_read() gave to dst.  A
 * decoded record's strings move: every step is put somewhere once.
 */
static void
cont_put(struct loader *l, struct ld_src *s, struct ld_elem *rec, size_t i,
    void *dst, size_t s0, size_t s1)
{
	size_t w = s->w[i];

	if (s1 <= s0)
		return;
	if (rec == NULL) {
		fast_steps(l, i, dst, s0, s1);
		return;
	}
	memcpy(dst, cat(rec->tv[i].v, s0 * w, rec->tv[i].dtype),
	    (s1 - s0) * w * esz(rec->tv[i].dtype));
}

/* Done with a record cont_read() gave, its values put (cont_put()). */
static void
cont_done(struct loader *l, struct ld_elem *rec)
{
	if (rec == NULL)
		return;
	for (size_t i = 0; i < l->cf->nprim; i++) {
		struct ld_tv *t = &rec->tv[i];

		if (t->dtype == MF_STRING) {	/* moved */
			free(t->v);
			t->v = NULL;
			t->cap = 0;
		}
		t->n = 0;
	}
	elem_free(l, rec);
}

/* Room in the held steps for k more: moved down or grown; -1 on ENOMEM. */
static int
cells_room(struct loader *l, struct ld_src *s, size_t k)
{
	const struct ld_config *cf = l->cf;
	size_t i;

	for (i = 0; i < cf->nprim && s->start > 0; i++)
		if ((s->start + s->have + k) * s->w[i] > s->cap[i])
			break;
	if (s->start > 0 && i < cf->nprim) {
		/* no room after the steps held: move them down */
		for (i = 0; i < cf->nprim; i++)
			memmove(s->cells[i], at(s->cells[i], s->start * s->w[i],
			    cf->t[i].dtype0), s->have * s->w[i] *
			    esz(cf->t[i].dtype0));
		s->start = 0;
	}
	for (i = 0; i < cf->nprim; i++) {
		size_t need = (s->start + s->have + k) * s->w[i];

		if (need > s->cap[i]) {
			size_t nc = need * 2 + 16;
			void *q = realloc(s->cells[i], nc * esz(cf->t[i].dtype0));

			if (q == NULL)
				return -1;
			s->cells[i] = q;
			s->cap[i] = nc;
		}
	}
	return 0;
}

/*
 * Windows that follow one another (stride null): the steps go straight
 * from the records to the window being made, and only those of a
 * record's end that the window has no room for wait in the cells.
 */
static int
cont_direct(struct loader *l, struct ld_src *s, struct ld_elem **out,
    char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	size_t i, k, steps, want;
	int r;

	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	want = (size_t)s->want;
	if (s->cur == NULL) {
		if ((s->cur = elem_new_fit(l, want * s->w[0] *
		    esz(cf->t[0].dtype0))) == NULL)
			return -1;
		for (i = 0; i < cf->nprim; i++) {
			s->cur->tv[i].dtype = cf->t[i].dtype0;
			s->cur->tv[i].n = 0;
		}
		s->nq = 0;	/* steps in the window */
	}
	e = s->cur;
	if (s->have > 0 && s->nq < want) {
		k = s->have < want - s->nq ? s->have : want - s->nq;
		for (i = 0; i < cf->nprim; i++) {
			struct ld_tv *t = &e->tv[i];

			if (tv_grow(t, (s->nq + k) * s->w[i],
			    smul(want, s->w[i])) == -1 ||
			    copy_cells(t->dtype, at(t->v, s->nq * s->w[i],
			    t->dtype), at(s->cells[i], s->start * s->w[i],
			    t->dtype), k * s->w[i]) == -1)
				return -1;
			t->n = (s->nq + k) * s->w[i];
		}
		drop_steps(l, s, k);
		s->nq += k;
	}
	while (s->nq < want) {
		if ((r = cont_read(l, s, &rec, &steps, err, errlen)) != 1)
			return r;
		k = steps < want - s->nq ? steps : want - s->nq;
		if (steps > k && cells_room(l, s, steps - k) == -1) {
			cont_done(l, rec);
			return -1;
		}
		for (i = 0; i < cf->nprim; i++) {
			struct ld_tv *t = &e->tv[i];

			if (tv_grow(t, (s->nq + k) * s->w[i],
			    smul(want, s->w[i])) == -1) {
				cont_done(l, rec);
				return -1;
			}
			cont_put(l, s, rec, i, at(t->v, s->nq * s->w[i],
			    t->dtype), 0, k);
			t->n = (s->nq + k) * s->w[i];
			if (steps > k)	/* the rest is held (cells_room()) */
				cont_put(l, s, rec, i, at(s->cells[i], (s->start +
				    s->have) * s->w[i], t->dtype), k, steps);
		}
		cont_done(l, rec);
		s->have += steps - k;
		s->steps += steps;
		s->nq += k;
	}
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = &e->tv[i];

		t->rank = cf->t[i].rank0;
		memcpy(t->shape, s->sh[i], sizeof t->shape);
		t->shape[0] = (int64_t)want;
	}
	s->cur = NULL;
	s->nq = 0;
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

static int
cont_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	size_t i, len, adv, steps;
	int r;

	if (cf->stride < 0)
		return cont_direct(l, s, out, err, errlen);
	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	while (s->have < (size_t)s->want) {
		if ((r = cont_read(l, s, &rec, &steps, err, errlen)) != 1)
			return r;
		if (cells_room(l, s, steps) == -1) {
			cont_done(l, rec);
			return -1;
		}
		for (i = 0; i < cf->nprim; i++)
			cont_put(l, s, rec, i, at(s->cells[i], (s->start +
			    s->have) * s->w[i], cf->t[i].dtype0), 0, steps);
		cont_done(l, rec);
		s->have += steps;
		s->steps += steps;
		if (s->skip > 0) {
			size_t k = s->skip < s->have ? (size_t)s->skip : s->have;

			drop_steps(l, s, k);
			s->skip -= k;
		}
	}
	len = (size_t)s->want;
	if ((e = elem_new(l)) == NULL)
		return -1;
	for (i = 0; i < cf->nprim; i++) {
		struct ld_tv *t = &e->tv[i];

		t->dtype = cf->t[i].dtype0;
		t->rank = cf->t[i].rank0;
		memcpy(t->shape, s->sh[i], sizeof t->shape);
		t->shape[0] = (int64_t)len;
		if (tv_alloc(t, len * s->w[i]) == -1 ||
		    copy_cells(t->dtype, t->v, at(s->cells[i], s->start * s->w[i],
		    t->dtype), t->n) == -1) {
			elem_free(l, e);
			return -1;
		}
	}
	/* pass the steps before the next window's start */
	adv = cf->stride < 0 ? len : (size_t)cf->stride;
	if (adv > s->have) {
		s->skip = adv - s->have;
		adv = s->have;
	}
	drop_steps(l, s, adv);
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

/*
 * Windows of whole records, joined as they are read: the fast path's
 * values go straight to the window's tensors.
 */
static int
disc_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	const struct ld_config *cf = l->cf;
	struct ld_elem *rec, *e;
	const uint8_t *p;
	size_t i, n, steps, nb;
	int r;

	if (s->want < 0)
		s->want = rng_range(&l->rw, cf->minw, cf->maxw);
	nb = (size_t)s->want + 1;
	while (s->nq < (size_t)s->want) {
		if ((r = src_read(l, s, &p, &n, err, errlen)) == -1)
			return -1;
		if (r == 0) {
			if (s->nwin == 0 && s->nrecs < (uint64_t)cf->minw) {
				snprintf(err, errlen, "%s: %" PRIu64 " records, "
				    "fewer than min_window %" PRId64,
				    l->ds->files[s->file], s->nrecs, cf->minw);
				return -1;
			}
			return 0;
		}
		s->nrecs++;
		if (s->cur == NULL) {
			if ((s->cur = elem_new(l)) == NULL)
				return -1;
			s->cur->nb = 0;
		}
		e = s->cur;
		/*
		 * Room for this record's boundary and the window's end: the
		 * boundaries grow with the records (up to nb, which they
		 * reach with the last), not with the length drawn.
		 */
		if (s->nq + 2 > e->nb) {
			size_t ns = e->nb * 2 < s->nq + 2 ? s->nq + 2 : e->nb * 2;
			int64_t *q;

			if (ns > nb)
				ns = nb;
			if ((q = calloc(cf->nprim * ns, sizeof *q)) == NULL)
				return -1;
			for (i = 0; i < cf->nprim && s->nq > 0; i++)
				memcpy(q + i * ns, e->bounds + i * e->nb,
				    s->nq * sizeof *q);
			free(e->bounds);
			e->bounds = q;
			e->nb = ns;
		}
		rec = NULL;
		if (!l->fast || (r = fast_probe(l, p, n, &steps)) == 0) {
			if ((rec = elem_new(l)) == NULL)
				return -1;
			if (src_decode(l, s, p, n, rec, err, errlen) == -1) {
				elem_free(l, rec);
				return -1;
			}
		} else if (r == -1)
			return -1;
		for (i = 0; i < cf->nprim; i++) {
			const struct mf_feature *f = cf->t[i].f;
			struct ld_tv *t = &e->tv[i], *x = rec ? &rec->tv[i] : NULL;
			size_t xn = x ? x->n : steps * f->nelem, have;

			if (s->nq == 0) {
				/*
				 * The shape of a step is the manifest's (decode()
				 * makes it so), the same in every record.
				 */
				t->dtype = x ? x->dtype : f->dtype;
				if (x) {
					t->rank = x->rank;
					memcpy(t->shape, x->shape, sizeof t->shape);
				} else {
					t->rank = 1 + f->rank;
					memcpy(t->shape + 1, f->shape,
					    sizeof f->shape[0] * (size_t)f->rank);
				}
				t->shape[0] = 0;
				t->n = 0;
			}
			e->bounds[i * e->nb + s->nq] = t->shape[0];
			t->shape[0] += x ? x->shape[0] : (int64_t)steps;
			have = t->n;
			/* room for the window as if its records were like these */
			if (tv_grow(t, have + xn, smul((have + xn) / (s->nq + 1),
			    nb - 1)) == -1) {
				elem_free(l, rec);
				return -1;
			}
			t->n = have + xn;
			if (x == NULL)
				fast_fill(l, i, at(t->v, have, t->dtype), steps);
			else if (xn > 0) {
				memcpy(at(t->v, have, t->dtype), x->v, xn *
				    esz(t->dtype));
				if (x->dtype == MF_STRING) {	/* moved */
					free(x->v);
					x->v = NULL;
					x->cap = 0;
				}
				x->n = 0;
			}
		}
		elem_free(l, rec);
		s->nq++;
	}
	e = s->cur;
	s->cur = NULL;
	s->nq = 0;
	for (i = 0; i < cf->nprim; i++)
		e->bounds[i * nb + nb - 1] = e->tv[i].shape[0];
	s->nwin++;
	s->want = -1;
	*out = e;
	return 1;
}

static int
src_next(struct loader *l, struct ld_src *s, struct ld_elem **out, char *err,
    size_t errlen)
{
	switch (l->cf->type) {
	case LD_CONTINUOUS:	return cont_next(l, s, out, err, errlen);
	case LD_DISCRETE:	return disc_next(l, s, out, err, errlen);
	default:		return src_record(l, s, out, err, errlen);
	}
}

/* The next file of the epoch, or -1 (buffered shuffle when shuffling). */
static ssize_t
next_file(struct loader *l)
{
	size_t i, f;

	if (!l->cf->shuffle)
		return l->fnext < l->ds->nfiles ? (ssize_t)l->fnext++ : -1;
	while (l->fbn < (size_t)l->cf->nfshuf && l->fnext < l->ds->nfiles)
		l->fbuf[l->fbn++] = l->fnext++;
	if (l->fbn == 0)
		return -1;
	i = (size_t)rng_below(&l->rf, l->fbn);
	f = l->fbuf[i];
	l->fbuf[i] = l->fbuf[--l->fbn];
	return (ssize_t)f;
}

/*
 * The CRCs of e's float32 values, taken while they are in the cache:
 * the records output joins them (crc32c_combine()) instead of reading
 * the values again when the element leaves the shuffle buffer.
 */
static void
elem_crc(const struct loader *l, struct ld_elem *e)
{
	for (size_t i = 0; i < l->cf->nt; i++) {
		struct ld_tv *t = &e->tv[i];

		if (t->dtype == MF_FLOAT32) {
			t->crc = crc32c_value(t->v, 4 * t->n);
			t->has_crc = 1;
		}
	}
}

/* Files interleaved one element at a time. */
static int
interleave_next(struct loader *l, struct ld_elem **out, char *err,
    size_t errlen)
{
	for (;;) {
		struct ld_src *s;
		ssize_t f;
		int r;

		if (l->ndead == l->nsrc)
			return 0;
		s = &l->src[l->pos];
		if (s->dead) {
			l->pos = (l->pos + 1) % l->nsrc;
			continue;
		}
		if (!s->open) {
			if ((f = next_file(l)) < 0) {
				s->dead = 1;
				l->ndead++;
				l->pos = (l->pos + 1) % l->nsrc;
				continue;
			}
			if (src_open(l, s, (size_t)f, err, errlen) == -1)
				return -1;
		}
		if ((r = src_next(l, s, out, err, errlen)) == -1)
			return -1;
		if (r == 0) {
			src_close(l, s);	/* the next file takes its place */
			continue;
		}
		if (finish(l, *out, err, errlen) == -1) {
			elem_free(l, *out);
			*out = NULL;
			return -1;
		}
		if (l->want_crc)
			elem_crc(l, *out);
		l->pos = (l->pos + 1) % l->nsrc;
		return 1;
	}
}

/* The shuffle buffer (tf.data's): fill, draw a slot, move the last into it. */
static int
shuffled_next(struct loader *l, struct ld_elem **out, char *err,
    size_t errlen)
{
	size_t i;
	int r;

	if (!l->cf->shuffle)
		return interleave_next(l, out, err, errlen);
	while (!l->input_done && l->ebn < (size_t)l->cf->nshuf) {
		if (elems_room(&l->ebuf, &l->ebcap, l->ebn + 1,
		    (size_t)l->cf->nshuf) == -1)
			return -1;
		if ((r = interleave_next(l, &l->ebuf[l->ebn], err, errlen)) == -1)
			return -1;
		if (r == 0)
			l->input_done = 1;
		else
			l->ebn++;
	}
	if (l->ebn == 0)
		return 0;
	i = (size_t)rng_below(&l->re, l->ebn);
	*out = l->ebuf[i];
	l->ebuf[i] = l->ebuf[--l->ebn];
	return 1;
}

static void
epoch_start(struct loader *l)
{
	for (size_t i = 0; i < l->nsrc; i++)
		src_close(l, &l->src[i]);
	l->pos = l->ndead = 0;
	l->fbn = l->fnext = 0;
	l->input_done = 0;
	l->epoch_elems = 0;
	l->in_epoch = 1;
}

/* Epochs one after another. */
static int
epoch_next(struct loader *l, struct ld_elem **out, char *err, size_t errlen)
{
	int r;

	for (;;) {
		if (!l->in_epoch) {
			if (l->cf->epochs >= 0 && l->epoch >= (uint64_t)l->cf->epochs)
				return 0;
			epoch_start(l);
		}
		if ((r = shuffled_next(l, out, err, errlen)) != 0) {
			l->epoch_elems += r == 1;
			return r;
		}
		l->in_epoch = 0;
		l->epoch++;
		l->st.epochs++;
		if (l->epoch_elems == 0)
			return 0;	/* an empty dataset: no endless loop */
	}
}

void
ld_close(struct loader *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->nsrc; i++)
		src_close(l, &l->src[i]);
	for (size_t i = 0; i < l->ebn; i++)
		elem_free(l, l->ebuf[i]);
	for (size_t i = 0; i < l->nbatch; i++)
		elem_free(l, l->batch[i]);
	for (size_t i = 0; i < l->nspare; i++)
		elem_destroy(l, l->spare[i]);
	free(l->spare);
	if (l->out)
		for (size_t i = 0; i < l->cf->nt; i++) {
			free(l->out[i].v);
			free(l->out[i].bnd);
			free(l->out[i].pad);
		}
	free(l->out);
	free(l->src);
	free(l->ebuf);
	free(l->fbuf);
	free(l->batch);
	ex_free(&l->ex);
	ex_free(&l->exw);
	if (l->fi64)
		for (size_t i = 0; i < l->cf->nprim; i++)
			free(l->fi64[i]);
	free(l->fi64);
	free(l->fi64cap);
	free(l->fw);
	free(l->fsp);
	free(l->fval);
	free(l->fstride);
	free(l->fskip);
	free(l->iov);
	free(l);
}

void
ld_set_max_record(struct loader *l, uint64_t max_len)
{
	l->maxrec = max_len;
}

struct loader *
ld_open(struct ld_config *cf, const struct ld_dataset *d, uint64_t seed,
    char *err, size_t errlen)
{
	struct loader *l;
	size_t nsrc, nfb;

	if (ld_config_bind(cf, &d->mf, err, errlen) == -1)
		return NULL;
	if (d->nfiles == 0) {
		snprintf(err, errlen, "the dataset has no data files");
		return NULL;
	}
	if ((l = calloc(1, sizeof *l)) == NULL)
		goto nomem;
	l->cf = cf;
	l->ds = d;
	rng_seed(&l->rf, seed);
	rng_seed(&l->re, seed + 1);
	rng_seed(&l->rw, seed + 2);
	l->et = d->mf.allow_var_len ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE;
	ex_init(&l->ex);
	ex_init(&l->exw);
	l->ex.lazy_min = 1u << 20;	/* as tfr-cat's */
	/*
	 * More files open at once, or in the file buffer, than the dataset
	 * has would change nothing: the sources past the files are dead at
	 * their first turn, and the buffer never holds more than the files.
	 */
	nsrc = cf->shuffle ? (size_t)cf->nmix : 1;
	if (nsrc > d->nfiles)
		nsrc = d->nfiles;
	nfb = (size_t)cf->nfshuf < d->nfiles ? (size_t)cf->nfshuf : d->nfiles;
	if ((l->src = calloc(nsrc, sizeof *l->src)) == NULL)
		goto nomem;
	l->nsrc = nsrc;
	for (size_t i = 0; i < l->nsrc; i++)
		l->src[i].fd = -1;
	if ((l->fbuf = calloc(nfb, sizeof *l->fbuf)) == NULL ||
	    (l->out = calloc(cf->nt, sizeof *l->out)) == NULL)
		goto nomem;
	if (fast_setup(l) == -1)
		goto nomem;
	l->st.ntensors = cf->nt;
	return l;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	ld_close(l);
	return NULL;
}

/* Values k0..k1 of dst (dtype dt; float32 ones perhaps unaligned) set to c. */
static void
pad_fill(void *dst, size_t k0, size_t k1, enum mf_dtype dt, union ld_cell c)
{
	if (dt == MF_FLOAT32) {
		float f[16];
		size_t k = k0;

		for (int j = 0; j < 16; j++)
			f[j] = (float)c.f;
		for (; k + 16 <= k1; k += 16)
			memcpy(at(dst, k, dt), f, sizeof f);
		if (k < k1)
			memcpy(at(dst, k, dt), f, (k1 - k) * sizeof f[0]);
	} else
		for (size_t k = k0; k < k1; k++)
			((union ld_cell *)dst)[k] = c;
}

/*
 * The examples of output tensor i stacked and padded into dst, o->per
 * values an example (float32 values may be unaligned there).
 */
static void
out_fill(const struct loader *l, size_t i, void *dst0)
{
	const struct ld_tspec *ts = &l->cf->t[i];
	const struct ld_out *o = &l->out[i];
	enum mf_dtype dt = l->batch[0]->tv[i].dtype;
	size_t es = esz(dt), per = o->per;
	int rank = o->rank - 1, d;

	for (size_t b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];
		char *dst = at(dst0, b * per, dt);

		if (t->n == per) {
			if (per > 0)
				memcpy(dst, t->v, per * es);
			continue;
		}
		for (d = 1; d < rank; d++)
			if (t->shape[d] != o->shape[d + 1])
				break;
		if (d >= rank) {
			/* padded along the first axis only: one copy */
			if (t->n > 0)
				memcpy(dst, t->v, t->n * es);
			pad_fill(dst, t->n, per, dt, ts->padv);
			continue;
		}
		/* padded: copy row by row of the last dimension */
		pad_fill(dst, 0, per, dt, ts->padv);
		if (t->n == 0)
			continue;
		{
			size_t idx[LD_MAXRANK] = { 0 }, rows, r, off, last;

			last = rank ? (size_t)t->shape[rank - 1] : 1;
			rows = last ? t->n / last : 0;
			for (r = 0; r < rows; r++) {
				off = 0;
				for (d = 0; d < rank - 1; d++)
					off = off * (size_t)o->shape[d + 1] + idx[d];
				off = off * (rank ? (size_t)o->shape[rank] : 1);
				memcpy(at(dst, off, dt), cat(t->v, r * last, dt),
				    last * es);
				for (d = rank - 2; d >= 0; d--) {
					if (++idx[d] < (size_t)t->shape[d])
						break;
					idx[d] = 0;
				}
			}
		}
	}
}

/* Make l->out[i].v hold the batch, unless the examples are read directly. */
static void
out_ready(struct loader *l, size_t i)
{
	struct ld_out *o = &l->out[i];

	if (!o->direct && !o->ready) {
		out_fill(l, i, o->v);
		o->ready = 1;
	}
}

/*
 * nnmaker's normalization of a batch o along its axis a (the example's
 * axis + 1), after padding, padded values included: for each line of
 * values along that axis, x -> (x - mean) / (sqrt(var + 1e-8) + 1e-8),
 * var the mean squared distance to the mean (tf.nn.moments).  Computed
 * in double precision and rounded to the dtype once.
 */
static void
normalize(struct ld_out *o, enum mf_dtype dt, int a)
{
	const double eps = 1e-8;
	size_t outer = 1, inner = 1, len = (size_t)o->shape[a], u, k, j;
	float *f = o->v;
	union ld_cell *c = o->v;
	int d;

	for (d = 0; d < a; d++)
		outer *= (size_t)o->shape[d];
	for (d = a + 1; d < o->rank; d++)
		inner *= (size_t)o->shape[d];
	if (len == 0)
		return;
	for (u = 0; u < outer; u++)
		for (k = 0; k < inner; k++) {
			size_t at = u * len * inner + k;
			double sum = 0, mean, var = 0, sd, x;

			for (j = 0; j < len; j++)
				sum += dt == MF_FLOAT32 ? f[at + j * inner] :
				    c[at + j * inner].f;
			mean = sum / (double)len;
			for (j = 0; j < len; j++) {
				x = (dt == MF_FLOAT32 ? f[at + j * inner] :
				    c[at + j * inner].f) - mean;
				var += x * x;
			}
			sd = sqrt(var / (double)len + eps) + eps;
			for (j = 0; j < len; j++) {
				size_t q = at + j * inner;

				if (dt == MF_FLOAT32)
					f[q] = (float)((f[q] - mean) / sd);
				else
					c[q] = cell_f(dt, (c[q].f - mean) / sd);
			}
		}
}

/* Stack (and pad) the examples of the batch into l->out. */
static int
assemble(struct loader *l, char *err, size_t errlen)
{
	const struct ld_config *cf = l->cf;
	size_t b, i, nb = l->nbatch;

	for (i = 0; i < cf->nt; i++) {
		const struct ld_tspec *ts = &cf->t[i];
		struct ld_out *o = &l->out[i];
		int rank = l->batch[0]->tv[i].rank, d;
		size_t per, n, es;
		enum mf_dtype dt;
		char s1[128], s2[128];

		o->rank = rank + 1;
		o->shape[0] = (int64_t)nb;
		for (d = 0; d < rank; d++) {
			int64_t mx = 0;

			for (b = 0; b < nb; b++) {
				const struct ld_tv *t = &l->batch[b]->tv[i];

				if (!cf->padding && memcmp(t->shape,
				    l->batch[0]->tv[i].shape, sizeof t->shape[0] *
				    (size_t)rank) != 0) {
					shape_str(s1, sizeof s1, l->batch[0]->tv[i].shape, rank);
					shape_str(s2, sizeof s2, t->shape, rank);
					snprintf(err, errlen, "batch %" PRIu64 ": "
					    "tensor '%s': examples of shapes %s and "
					    "%s cannot be batched without padding",
					    l->st.batches, ts->name, s1, s2);
					return -1;
				}
				if (t->shape[d] > mx)
					mx = t->shape[d];
			}
			if (cf->padding && ts->pad_given && ts->pad_shape[d] >= 0) {
				if (mx > ts->pad_shape[d]) {
					snprintf(err, errlen, "batch %" PRIu64 ": "
					    "tensor '%s': dimension %d is %" PRId64
					    ", above its padded size %" PRId64,
					    l->st.batches, ts->name, d, mx,
					    ts->pad_shape[d]);
					return -1;
				}
				mx = ts->pad_shape[d];
			}
			o->shape[d + 1] = mx;
		}
		dt = l->batch[0]->tv[i].dtype;
		es = esz(dt);
		for (d = 0, per = 1; d < rank; d++)
			per = smul(per, (uint64_t)o->shape[d + 1]);
		if (smul(smul(per, nb), es) > cf->maxbytes) {
			shape_str(s1, sizeof s1, o->shape, o->rank);
			snprintf(err, errlen, "batch %" PRIu64 ": tensor '%s': %s "
			    "%s it takes %" PRIu64 " bytes as %s, more than the %"
			    PRIu64 " a tensor of a batch may take", l->st.batches,
			    ts->name, cf->padding ? "padded to" : "of shape", s1,
			    smul(smul(per, nb), es), mf_dtype_name(dt),
			    cf->maxbytes);
			return -1;
		}
		n = per * nb;
		o->per = per;
		o->n = n;
		o->cells += n;
		o->direct = !ts->norm;	/* a normalized batch is made anew */
		for (b = 0; b < nb && o->direct; b++)
			o->direct = l->batch[b]->tv[i].n == per;
		if (o->direct)
			goto bounds;
		if (n > o->cap || o->v == NULL) {	/* a block even for none */
			void *q = realloc(o->v, (n ? n : 1) * es);

			if (q == NULL)
				return -1;
			o->v = q;
			o->cap = n;
		}
		/* copied when it is read (out_ready()), or straight to the output */
		o->ready = 0;
		for (b = 0; b < nb; b++)
			o->padded += per - l->batch[b]->tv[i].n;
		if (ts->norm) {
			out_ready(l, i);
			normalize(o, dt, ts->norm_axis + 1);
		}
bounds:
		/* boundaries of the primaries (discrete) */
		if (cf->type == LD_DISCRETE && i < cf->nprim) {
			size_t bw = 0;

			for (b = 0; b < nb; b++)
				if (l->batch[b]->nb > bw)
					bw = l->batch[b]->nb;
			if (bw * nb > o->bcap) {
				void *q = realloc(o->bnd, bw * nb * sizeof *o->bnd);

				if (q == NULL)
					return -1;
				o->bnd = q;
				o->bcap = bw * nb;
			}
			o->bw = bw;
			for (b = 0; b < nb; b++) {
				const struct ld_elem *e = l->batch[b];

				for (size_t k = 0; k < bw; k++)
					o->bnd[b * bw + k] = k < e->nb ?
					    e->bounds[i * e->nb + k] : -1;
			}
		}
	}
	return 0;
}

int
ld_next(struct loader *l, char *err, size_t errlen)
{
	struct ld_elem *e;
	int r;

	if (errlen)
		err[0] = '\0';
	for (size_t i = 0; i < l->nbatch; i++)
		elem_free(l, l->batch[i]);
	l->nbatch = 0;
	if (l->ended)
		return 0;
	while (l->nbatch < (size_t)l->cf->batch) {
		if ((r = epoch_next(l, &e, err, errlen)) == -1) {
			if (err[0] == '\0')
				snprintf(err, errlen, "%s", strerror(errno));
			l->ended = 1;
			return -1;
		}
		if (r == 0) {
			l->ended = 1;
			break;
		}
		if (elems_room(&l->batch, &l->bcap, l->nbatch + 1,
		    (size_t)l->cf->batch) == -1) {
			elem_free(l, e);
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			l->ended = 1;
			return -1;
		}
		l->batch[l->nbatch++] = e;
	}
	if (l->nbatch == 0 || (l->nbatch < (size_t)l->cf->batch && l->cf->drop))
		return 0;
	if (assemble(l, err, errlen) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "%s", strerror(errno));
		l->ended = 1;
		return -1;
	}
	l->st.batches++;
	l->st.examples += l->nbatch;
	return 1;
}

void
ld_get_stats(const struct loader *l, struct ld_stats *s)
{
	*s = l->st;
}

const char *
ld_tensor_name(const struct loader *l, size_t i)
{
	return l->cf->t[i].name;
}

double
ld_tensor_padding(const struct loader *l, size_t i)
{
	return l->out[i].cells ? (double)l->out[i].padded / l->out[i].cells : 0;
}

/* Output */

/* The values of example b of output tensor i (of dtype dt). */
static const void *
vals_of(const struct loader *l, size_t i, size_t b, enum mf_dtype dt)
{
	const struct ld_out *o = &l->out[i];

	return o->direct ? l->batch[b]->tv[i].v : cat(o->v, b * o->per, dt);
}

/* The cells of example b of output tensor i, not float32. */
static const union ld_cell *
cells_of(const struct loader *l, size_t i, size_t b)
{
	return vals_of(l, i, b, MF_INT64);
}

/*
 * A name, as the one JSON string writer writes it; a name that is not
 * UTF-8 (a configuration that says so is refused first) cannot occur.
 */
static int
json_string_out(struct buf *b, const uint8_t *p, size_t n)
{
	return exjson_put_string(b, p, n);
}

/*
 * The values of a string tensor, by the rule of every JSON the suite
 * writes (recpipe(5)): as JSON strings when every one is valid UTF-8,
 * else every one as its padded base64, the tensor saying
 * "encoding":"base64" (as tfr-cat types a bytes list).  Returns 1 for
 * base64.
 */
static int
strings_base64(const struct loader *l, size_t i, size_t nvals)
{
	const struct ld_out *o = &l->out[i];
	enum mf_dtype dt = l->batch[0]->tv[i].dtype;

	for (size_t k = 0; k < nvals; k++) {
		union ld_cell cv = get_cell(vals_of(l, i, k / (o->per ? o->per : 1),
		    dt), k % (o->per ? o->per : 1), dt);

		if (!exjson_utf8_valid(cv.s->p, cv.s->n))
			return 1;
	}
	return 0;
}

static int
put_base64(struct buf *b, const uint8_t *p, size_t n)
{
	size_t m = 4 * ((n + 2) / 3);
	char *q;

	if (buf_reserve(b, m + 2) == -1)
		return -1;
	q = (char *)b->p + b->len;
	*q++ = '"';
	q = exjson_base64(p, n, q);
	*q++ = '"';
	b->len = (size_t)((uint8_t *)q - b->p);
	return 0;
}

static int
put_i64(struct buf *b, int64_t v)
{
	char s[24];

	snprintf(s, sizeof s, "%" PRId64, v);
	return buf_puts(b, s);
}

int
ld_write_json(struct loader *l, struct buf *b)
{
	const struct ld_config *cf = l->cf;
	char s[40];

	if (buf_putc(b, '{') == -1)
		return -1;
	for (size_t i = 0; i < cf->nt; i++) {
		const struct ld_out *o = &l->out[i];
		enum mf_dtype dt = l->batch[0]->tv[i].dtype;
		int b64;

		out_ready(l, i);
		if ((i && buf_putc(b, ',') == -1) ||
		    json_string_out(b, (const uint8_t *)cf->t[i].name,
		    strlen(cf->t[i].name)) == -1 ||
		    buf_puts(b, ":{\"dtype\":\"") == -1 ||
		    buf_puts(b, mf_dtype_name(dt)) == -1 ||
		    buf_puts(b, "\",\"shape\":[") == -1)
			return -1;
		for (int d = 0; d < o->rank; d++)
			if ((d && buf_putc(b, ',') == -1) || put_i64(b, o->shape[d]) == -1)
				return -1;
		b64 = dt == MF_STRING && strings_base64(l, i, o->n);
		if ((b64 && buf_puts(b, "],\"encoding\":\"base64") == -1) ||
		    buf_puts(b, b64 ? "\",\"values\":[" : "],\"values\":[") == -1 ||
		    buf_reserve(b, o->n * 12) == -1)
			return -1;
		for (size_t k = 0; k < o->n; k++) {
			union ld_cell cv = get_cell(vals_of(l, i, k / (o->per ?
			    o->per : 1), dt), k % (o->per ? o->per : 1), dt);
			const union ld_cell *c = &cv;
			int r;

			if (k && buf_putc(b, ',') == -1)
				return -1;
			switch (dt) {
			case MF_STRING:
				r = b64 ? put_base64(b, c->s->p, c->s->n) :
				    exjson_put_string(b, c->s->p, c->s->n);
				break;
			case MF_BOOL:
				r = buf_puts(b, c->i ? "true" : "false");
				break;
			case MF_UINT64:
				snprintf(s, sizeof s, "%" PRIu64, (uint64_t)c->i);
				r = buf_puts(b, s);
				break;
			case MF_FLOAT16:
			case MF_FLOAT32:
			case MF_FLOAT64:
				if (!isfinite(c->f))
					r = buf_puts(b, "null");
				else {
					snprintf(s, sizeof s, dt == MF_FLOAT64 ?
					    "%.17g" : "%.9g", c->f);
					r = buf_puts(b, s);
				}
				break;
			default:
				r = put_i64(b, c->i);
				break;
			}
			if (r == -1)
				return -1;
		}
		if (buf_putc(b, ']') == -1)
			return -1;
		if (o->bnd) {
			if (buf_puts(b, ",\"boundaries\":[") == -1)
				return -1;
			for (size_t e = 0; e < (size_t)o->shape[0]; e++) {
				if ((e && buf_putc(b, ',') == -1) || buf_putc(b, '[') == -1)
					return -1;
				for (size_t k = 0; k < o->bw &&
				    o->bnd[e * o->bw + k] >= 0; k++)
					if ((k && buf_putc(b, ',') == -1) ||
					    put_i64(b, o->bnd[e * o->bw + k]) == -1)
						return -1;
				if (buf_putc(b, ']') == -1)
					return -1;
			}
			if (buf_putc(b, ']') == -1)
				return -1;
		}
		if (buf_putc(b, '}') == -1)
			return -1;
	}
	return buf_puts(b, "}\n");
}

/* One feature of the Example a batch becomes. */
struct xfeat {
	const char	*key;
	int		 kind;		/* EX_BYTES, EX_FLOAT, EX_INT64 */
	size_t		 tensor;
	int		 what;		/* 0 values, 1 shape, 2 boundaries, 3 their shape */
	struct ex_entry	 sz;		/* the sizes of its entry */
};

static int
cmp_xfeat(const void *a, const void *b)
{
	return strcmp(((const struct xfeat *)a)->key, ((const struct xfeat *)b)->key);
}

/* The int64 values of feature x: n of them, the k-th by xint(). */
static int64_t
xint(const struct loader *l, const struct xfeat *x, size_t k)
{
	const struct ld_out *o = &l->out[x->tensor];

	switch (x->what) {
	case 0:
		return cells_of(l, x->tensor, k / o->per)[k % o->per].i;
	case 1:
		return o->shape[k];
	case 2:
		return o->bnd[k];
	default:
		return k == 0 ? o->shape[0] : (int64_t)o->bw;
	}
}

static size_t
xcount(const struct loader *l, const struct xfeat *x)
{
	const struct ld_out *o = &l->out[x->tensor];

	switch (x->what) {
	case 0:		return o->n;
	case 1:		return (size_t)o->rank;
	case 2:		return (size_t)o->shape[0] * o->bw;
	default:	return 2;
	}
}

/* n double cells as little-endian float32 at q */
static void
narrow(uint8_t *restrict q, const union ld_cell *restrict c, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {	/* four at a time: one vector */
		float f[4] = { (float)c[i].f, (float)c[i + 1].f,
		    (float)c[i + 2].f, (float)c[i + 3].f };

		memcpy(q + 4 * i, f, 16);
	}
	for (; i < n; i++) {
		float f = (float)c[i].f;

		memcpy(q + 4 * i, &f, 4);
	}
#else
	for (size_t i = 0; i < n; i++, q += 4) {
		float f = (float)c[i].f;
		uint32_t u;

		memcpy(&u, &f, 4);
		put_le32(q, u);
	}
#endif
}

/* n floats as little-endian float32 at q */
static void
put_f32(uint8_t *restrict q, const float *restrict f, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n > 0)
		memcpy(q, f, 4 * n);
#else
	for (size_t i = 0; i < n; i++, q += 4) {
		uint32_t u;

		memcpy(&u, &f[i], 4);
		put_le32(q, u);
	}
#endif
}

/*
 * A piece of the gathered output, and its CRC joined to the pieces'
 * (crc: the piece's own, when has); -1 on ENOMEM.
 */
static int
piece(struct loader *l, const void *p, size_t n, int has, uint32_t crc)
{
	if (n == 0)
		return 0;
	if (has) {
		size_t k = (uint32_t)(n * 0x9e3779b1u) >> 24;	/* a hash */

		if (l->zop[k].len != n) {
			l->zop[k].len = n;
			l->zop[k].op = crc32c_zeros(n);
		}
		l->crc = crc32c_combine_op(l->crc, crc, l->zop[k].op);
	} else
		l->crc = crc32c_extend(l->crc, p, n);
	if (l->niov == l->ciov) {
		size_t nc = l->ciov ? 2 * l->ciov : 64;
		struct iovec *q = realloc(l->iov, nc * sizeof *q);

		if (q == NULL)
			return -1;
		l->iov = q;
		l->ciov = nc;
	}
	l->iov[l->niov++] = (struct iovec){ (void *)(uintptr_t)p, n };
	return 0;
}

/*
 * Whether float32 tensor i can be gathered: each example's values the
 * start of its padded row (padding along the first axis only).
 */
static int
gatherable(const struct loader *l, size_t i)
{
	const struct ld_out *o = &l->out[i];

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 0;	/* the values are the host's floats */
#endif
	if (o->direct)
		return 1;
	if (o->ready)
		return 0;
	for (size_t b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];

		if (t->n == o->per)
			continue;
		for (int d = 1; d < o->rank - 1; d++)
			if (t->shape[d] != o->shape[d + 1])
				return 0;
	}
	return 1;
}

/* Tensor i's values and padding as pieces; -1 on ENOMEM. */
static int
gather(struct loader *l, size_t i)
{
	struct ld_out *o = &l->out[i];
	size_t b, most = 0;

	/* the padding block first: pieces point into it */
	for (b = 0; b < l->nbatch; b++)
		if (o->per - l->batch[b]->tv[i].n > most)
			most = o->per - l->batch[b]->tv[i].n;
	if (most > o->npad) {
		float *q = realloc(o->pad, most * sizeof *q);

		if (q == NULL)
			return -1;
		o->pad = q;
		o->npad = most;
		pad_fill(q, 0, most, MF_FLOAT32, l->cf->t[i].padv);
	}
	for (b = 0; b < l->nbatch; b++) {
		const struct ld_tv *t = &l->batch[b]->tv[i];

		if (piece(l, t->v, 4 * t->n, t->has_crc, t->crc) == -1 ||
		    piece(l, o->pad, 4 * (o->per - t->n), 0, 0) == -1)
			return -1;
	}
	return 0;
}

/*
 * The batch as one Example into b, or with gather, in pieces
 * (l->iov): b then holds the bytes between the gathered float32
 * values.
 */
static int
write_example(struct loader *l, struct buf *b, int gath)
{
	const struct ld_config *cf = l->cf;
	struct xfeat *xf;
	size_t nx = 0, fs = 0, i, k, n;
	uint8_t *q, *from;

	if ((xf = calloc(cf->nt * 4 + 1, sizeof *xf)) == NULL)
		return -1;
	for (i = 0; i < cf->nt; i++) {
		enum mf_dtype dt = l->batch[0]->tv[i].dtype;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (dt != MF_FLOAT32)	/* float32 is stacked straight into b */
#endif
			out_ready(l, i);

		xf[nx++] = (struct xfeat){ .key = cf->t[i].name, .tensor = i,
		    .kind = dt == MF_STRING ? EX_BYTES : mf_dtype_is_float(dt) ?
		    EX_FLOAT : EX_INT64 };
		xf[nx++] = (struct xfeat){ .key = cf->t[i].shape_name,
		    .tensor = i, .what = 1, .kind = EX_INT64 };
		if (l->out[i].bnd) {
			xf[nx++] = (struct xfeat){ .key = cf->t[i].bnd_name,
			    .tensor = i, .what = 2, .kind = EX_INT64 };
			xf[nx++] = (struct xfeat){ .key = cf->t[i].bnd_shape_name,
			    .tensor = i, .what = 3, .kind = EX_INT64 };
		}
	}
	qsort(xf, nx, sizeof *xf, cmp_xfeat);
	for (k = 0; k < nx; k++) {
		struct xfeat *x = &xf[k];
		size_t kl = strlen(x->key), pay = 0;
		const struct ld_out *o = &l->out[x->tensor];

		n = xcount(l, x);
		if (x->kind == EX_FLOAT)
			pay = 4 * n;
		else if (x->kind == EX_INT64)
			for (i = 0; i < n; i++)
				pay += pb_varint_size((uint64_t)xint(l, x, i));
		else if (x->kind == EX_BYTES)
			for (i = 0; i < n; i++)
				pay += pb_ld_size(cells_of(l, x->tensor,
				    i / o->per)[i % o->per].s->n);
		fs += ex_entry_sizes(&x->sz, kl, ex_feature_sizes(&x->sz,
		    x->kind, pay));
	}
	if (buf_reserve(b, pb_ld_size(fs)) == -1) {
		free(xf);
		return -1;
	}
	q = from = b->p + b->len;	/* b does not move from here on */
	l->niov = 0;
	l->crc = 0;
	q = pb_put_ld(q, 0x0a, fs);
	for (k = 0; k < nx; k++) {
		const struct xfeat *x = &xf[k];
		const struct ld_out *o = &l->out[x->tensor];
		size_t kl = strlen(x->key);

		n = xcount(l, x);
		q = ex_entry_head(q, &x->sz, x->key, kl, x->sz.feat);
		q = ex_feature_head(q, &x->sz, x->kind);
		if (x->kind == EX_BYTES) {
			for (i = 0; i < n; i++) {
				const struct ld_str *st =
				    cells_of(l, x->tensor, i / o->per)[i % o->per].s;

				q = pb_put_ld(q, 0x0a, st->n);
				memcpy(q, st->p, st->n);
				q += st->n;
			}
			continue;
		}
		if (n == 0)
			continue;
		if (x->kind == EX_FLOAT) {
			enum mf_dtype dt = l->batch[0]->tv[x->tensor].dtype;

			if (gath && dt == MF_FLOAT32 && gatherable(l, x->tensor)) {
				if (piece(l, from, (size_t)(q - from), 0, 0) == -1 ||
				    gather(l, x->tensor) == -1) {
					free(xf);
					return -1;
				}
				from = q;
			} else if (dt == MF_FLOAT32 && !o->direct) {
				/* float32 values are the output's bytes */
				if (o->ready)
					put_f32(q, o->v, n);
				else
					out_fill(l, x->tensor, q);
				q += 4 * n;
			} else
				for (size_t e = 0; e < (size_t)o->shape[0]; e++) {
					if (dt == MF_FLOAT32)
						put_f32(q, vals_of(l, x->tensor,
						    e, dt), o->per);
					else
						narrow(q, cells_of(l, x->tensor,
						    e), o->per);
					q += 4 * o->per;
				}
		} else
			for (i = 0; i < n; i++)
				q = pb_put_varint(q, (uint64_t)xint(l, x, i));
	}
	b->len = (size_t)(q - b->p);
	free(xf);
	return gath ? piece(l, from, (size_t)(q - from), 0, 0) : 0;
}

int
ld_write_example(struct loader *l, struct buf *b)
{
	return write_example(l, b, 0);
}

int
ld_write_example_iov(struct loader *l, struct buf *b,
    const struct iovec **iov, size_t *n, uint32_t *crc)
{
	b->len = 0;
	l->want_crc = 1;	/* from now on, of every element made */
	if (write_example(l, b, 1) == -1)
		return -1;
	*iov = l->iov;
	*n = l->niov;
	*crc = l->crc;
	return 0;
}
