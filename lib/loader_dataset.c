/*
 * The loaders' datasets: a directory of TFRecord files or a list of
 * them, with the manifest (ld_dataset_*), and ld_read_file().  See
 * loader.h.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "errmsg.h"
#include "loader.h"
#include "manifest_int.h"

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

	if (rp_buf_read_file(&b, path, SIZE_MAX) == -1 || rp_buf_putc(&b, '\0') == -1) {
		int e = errno;

		rp_buf_free(&b);
		errno = e;
		return -1;
	}
	*text = (char *)b.p;
	*n = b.len - 1;
	return 0;
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
		rp_seterr(err, errlen, "%s: %s", d->manifest_path, strerror(errno));
		return -1;
	}
	if (mf_parse(&d->mf, text, n, e, sizeof e) == -1) {
		rp_seterr(err, errlen, "%s: %s", d->manifest_path,
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
			rp_seterr(err, errlen, "%s: %s", bad, strerror(errno));
			return -1;
		}
	}
	if (d->nfiles == 0) {
		rp_seterr(err, errlen, "%.*s: no .tfrecords files", (int)n, dir);
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
		rp_seterr(err, errlen, "%s: %s", lpath, strerror(errno));
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
		rp_seterr(err, errlen, "%s: no file names", lpath);
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
			rp_seterr(err, errlen, "%s", strerror(errno));
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
		rp_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if ((r = dataset_dir(d, path, err, errlen)) == -1) {
			if (err[0] == '\0')
				rp_seterr(err, errlen, "%s", strerror(errno));
			ld_dataset_free(d);
		}
		return r;
	}
	if (ld_read_file(path, &text, &n) == -1) {
		rp_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = mf_strip_comments(text, n);
	j = jck_load(text, n, e, sizeof e);
	free(text);
	if (j == NULL) {
		rp_seterr(err, errlen, "%s: %s", path, e);
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
		rp_seterr(err, errlen, "%s: %s", path, e);
	return r;
}

