/*
 * nnmaker-style dataset manifests (__manifest__.json): read and check
 * one (with the "//" comments nnmaker strips), check decoded records
 * against it, and infer one from records.  Keys, types and meanings are
 * nnmaker's; every key is checked and unknown keys are refused, each
 * fault named by its key path ("features[1].deserialize_args.endian").
 * Nothing here prints or exits.
 */
#ifndef RECPIPE_MANIFEST_H
#define RECPIPE_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "example.h"
#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define MF_MAXRANK	8

/* TensorFlow dtypes, named as TensorFlow names them. */
enum mf_dtype {
	MF_BOOL, MF_INT8, MF_INT16, MF_INT32, MF_INT64, MF_UINT8, MF_UINT16,
	MF_UINT32, MF_UINT64, MF_FLOAT16, MF_FLOAT32, MF_FLOAT64, MF_STRING,
	MF_NDTYPE
};

enum mf_deser { MF_DS_INT, MF_DS_FLOAT, MF_DS_STRING, MF_DS_RAW };

struct mf_feature {
	char		*name;
	enum mf_dtype	 dtype;
	int		 rank;
	int64_t		 shape[MF_MAXRANK];	/* all >= 0 */
	uint64_t	 nelem;		/* product of shape (1 for []) */
	int		 var_len;	/* a feature list of a SequenceExample */
	enum mf_deser	 deser;
	int		 big_endian;	/* raw */
	uint64_t	 len;		/* raw: byte strings per record (1) */
};

struct manifest {
	enum rec_comp	 comp;		/* REC_NONE, REC_ZLIB or REC_GZIP */
	int		 allow_var_len;	/* records are SequenceExamples */
	size_t		 nfeat;
	struct mf_feature *feat;
};

/* "float32" (and TensorFlow's aliases "float", "double", "half") -> MF_*, or -1. */
int		 mf_dtype_parse(const char *s);
const char	*mf_dtype_name(enum mf_dtype t);
/* Bytes of one element as stored raw (0 for MF_STRING). */
size_t		 mf_dtype_size(enum mf_dtype t);
int		 mf_dtype_is_float(enum mf_dtype t);

/*
 * Remove "//" comments in place as nnmaker does: from the first "//"
 * on a line to its end, even inside a string.  Returns the new length.
 */
size_t		 mf_strip_comments(char *s, size_t n);

/*
 * Parse the manifest in the n bytes at text (comments allowed) into m
 * (zeroed or freed before).  Returns 0, or -1 with "key.path: what" in
 * err, or with "line L: column C: what" for bad JSON; errno ENOMEM on
 * allocation failure.  Free with mf_free().
 */
int		 mf_parse(struct manifest *m, const char *text, size_t n,
		    char *err, size_t errlen);
/* Check an already parsed JSON object (a json_t *, as void *). */
int		 mf_from_json(struct manifest *m, const void *obj, char *err,
		    size_t errlen);
void		 mf_free(struct manifest *m);
const struct mf_feature *mf_find(const struct manifest *m, const char *name);

/*
 * Check one decoded record against the manifest: every feature present
 * with its kind, value counts matching its shape, raw byte strings of
 * dtype size x shape elements, 'len' of them.  Returns 0, or -1 with
 * "feature 'x': what" in err.
 */
int		 mf_check_record(const struct manifest *m,
		    const struct example *ex, char *err, size_t errlen);

/*
 * Inference: feed records with mf_infer_add() and write the manifest
 * with mf_infer_write().  Examples give fixed-length features, shape
 * [] for one value and [n] otherwise; SequenceExamples give context
 * features (var_len false) and feature lists (var_len true, the shape
 * of one step).  A feature whose length varies (unless var_len_ok) or
 * that some records lack cannot be stated: the fault names the feature
 * and both records.  A Feature with no kind set says nothing of the
 * kind, which the first record that sets one gives; a feature that no
 * record gives a kind (kind still EX_NONE after the last record: the
 * caller may warn) is written as a string, of shape [0] (a feature list
 * with no step anywhere: var_len, shape []), which is what the records
 * hold.  "raw" is never inferred (bytes look like strings).
 */
struct mf_ifeat {
	char		*name;
	int		 kind;		/* EX_INT64, ... */
	int		 var_len;
	uint64_t	 n;		/* values (per step for lists) */
	char		*first;		/* where n was set ("a.tfrecords: record 0") */
	char		*kfirst;	/* where kind was set; NULL while EX_NONE */
	uint64_t	 seen;		/* records holding it */
	int		 flat;		/* a plain list of varying length (var_len_ok) */
};

struct mf_infer {
	int		 seq;		/* -1 unknown, 0 Examples, 1 SequenceExamples */
	enum rec_comp	 comp;		/* REC_AUTO until the first file */
	uint64_t	 nrec;
	char		*where0;	/* the first record */
	size_t		 nf, cap;
	struct mf_ifeat	*f;
	/*
	 * Set by the caller (0 after mf_infer_init(): off): a feature of
	 * Examples, or a context feature of SequenceExamples, whose list
	 * length varies is stated as var_len with
	 * shape [] (one value a step, as mf_check_record() and the loader
	 * read a var_len feature that a record holds as a plain list),
	 * and allow_var_len is then true.
	 */
	int		 var_len_ok;
};

void		 mf_infer_init(struct mf_infer *in);
void		 mf_infer_free(struct mf_infer *in);
/*
 * Add the compression of a file: 0, or -1 with the fault in err when it
 * differs from earlier files'.
 */
int		 mf_infer_comp(struct mf_infer *in, enum rec_comp c, char *err,
		    size_t errlen);
/*
 * Add a record; 'where' names it in messages ("a.tfrecords: record 3").
 * 0, or -1 with err set (and errno ERANGE when the fault is a feature
 * whose length varies, which var_len_ok would state).
 */
int		 mf_infer_add(struct mf_infer *in, const struct example *ex,
		    const char *where, char *err, size_t errlen);
/* Append the manifest (pretty JSON, a newline at the end).  0, or -1 with err set. */
int		 mf_infer_write(const struct mf_infer *in, struct buf *out,
		    char *err, size_t errlen);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
