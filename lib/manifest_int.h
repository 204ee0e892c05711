/*
 * Checking JSON objects key by key with the key path in every message,
 * shared by the manifest and the loader configuration readers.  Private
 * to the library.
 */
#ifndef RECPIPE_MANIFEST_INT_H
#define RECPIPE_MANIFEST_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct jck {
	char	 path[256];	/* "dataset.args.data_dir" */
	size_t	 len;
	char	*err;
	size_t	 errlen;
};

void	jck_init(struct jck *c, char *err, size_t errlen);
/* Descend to .key or [i]; returns the length to go back to with jck_up(). */
size_t	jck_key(struct jck *c, const char *key);
size_t	jck_index(struct jck *c, size_t i);
void	jck_up(struct jck *c, size_t len);
/* "path: what" into err; returns -1. */
int	jck_fail(struct jck *c, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The object at the current path must hold only the NULL-ended keys. */
int	jck_keys(struct jck *c, const json_t *obj, const char *const *keys);
/* Whether j is an integer (an integral real counts, as in nnmaker). */
int	jck_is_int(const json_t *j, int64_t *v);
/*
 * Fetch key 'k' of obj with type checks; 'req' says whether it must be
 * there.  Each returns 0 (absent and not required: *v untouched), 1
 * (found), or -1 with err set.
 */
int	jck_int(struct jck *c, const json_t *obj, const char *k, int req,
	    int64_t lo, int64_t *v);
int	jck_bool(struct jck *c, const json_t *obj, const char *k, int req, int *v);
int	jck_str(struct jck *c, const json_t *obj, const char *k, int req,
	    const char **v);
/* A list of integers >= lo, at most max of them. */
int	jck_ints(struct jck *c, const json_t *obj, const char *k, int req,
	    int64_t lo, int64_t *v, int max, int *n);
/*
 * Elements a shape may have: the manifest's features, the loader's
 * secondary features, reshapes and padded shapes take the same shapes.
 */
#define MF_MAXELEM	(UINT64_C(1) << 40)
/*
 * A shape: jck_ints() (sizes >= lo: 0, or -1 for "any size" in padded
 * shapes) whose sizes of 0 or more multiply to at most MF_MAXELEM, the
 * product in *nelem (1 for []).
 */
int	jck_shape(struct jck *c, const json_t *obj, const char *k, int req,
	    int64_t lo, int64_t *v, int max, int *n, uint64_t *nelem);
/* Parse comment-stripped JSON text; -1 with "line L: column C: what" in err. */
json_t	*jck_load(const char *text, size_t n, char *err, size_t errlen);

#endif
