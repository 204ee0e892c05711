/*
 * Text inputs of batch-sample's kernels: the size lines of "by-size"
 * and the sample batches of "collate".  Both read whole buffers, check
 * everything and say what is wrong with the line number (from 1).
 * And its outputs: a batch (its items, collated or not) as a line of
 * ids, a JSON line or the int64 lists of an Example.
 * Nothing here prints or exits.
 */
#ifndef RECPIPE_BATCHIO_H
#define RECPIPE_BATCHIO_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"

struct buf;

/* The largest SIZE a size line may give (an int32 size, as on disk). */
#define BIO_MAX_SIZE	INT32_MAX

/*
 * Items for batch_by_size, in batch order: one per line, "SIZE" or
 * "INDEX SIZE", both decimal and non-negative, separated by spaces or
 * tabs (spaces, tabs and a CR may also end the line).  The first line
 * decides which form all lines have; without INDEX an item's index is
 * its line number from 0.  A last line needs no newline; empty lines
 * are errors.
 */
struct bio_sizes {
	uint64_t	 n;
	uint64_t	*index;		/* n entries */
	uint32_t	*size;		/* n entries */
	int		 indexed;	/* lines were "INDEX SIZE" */
	uint64_t	 cap;		/* private */
};

/*
 * Parse the n bytes at p into s (zeroed, or freed before).  Returns 0,
 * or -1 with "line N: what" in err (errlen bytes), or with errno
 * ENOMEM.  Free with bio_sizes_free().
 */
int		 bio_sizes_parse(struct bio_sizes *s, const char *p, size_t n,
		    char *err, size_t errlen);
void		 bio_sizes_free(struct bio_sizes *s);	/* then zeroed */

/*
 * One batch for collation: a JSON array of objects
 * {"id": N, "source": [...], "target": [...]} with integer tokens.
 * "id" is a non-negative integer, "source" is required, "target" may
 * be absent or null (no target), but all samples of a batch must agree
 * on that; other keys are ignored.
 */
struct bio_sample {
	uint64_t	 id;
	const int64_t	*src;		/* into the batch's token pool; */
	size_t		 nsrc;		/* NULL when no sample has tokens */
	const int64_t	*tgt;		/* (has_target says if there are targets) */
	size_t		 ntgt;
};

struct bio_batch {
	size_t		 n;		/* samples */
	struct bio_sample *s;
	int		 has_target;	/* every sample has one (0 for an empty batch) */
	/* private: */
	size_t		 cap;
	int64_t		*tok;
	size_t		 ntok, tokcap;
};

/*
 * Parse one batch from the len bytes at line (no newline needed; white
 * space around is fine) into b, replacing what it held (its pointers
 * then change).  Returns 0, or -1 with the fault in err ("sample 2:
 * target: not an array of integers"), or with errno ENOMEM.  Free with
 * bio_batch_free().
 */
int		 bio_batch_parse(struct bio_batch *b, const char *line,
		    size_t len, char *err, size_t errlen);
void		 bio_batch_free(struct bio_batch *b);	/* then zeroed */
/*
 * The samples of b for batch_collate(), into s (room for b->n): they
 * point into b (an empty target to a valid place), with no tokens to
 * replace.
 */
void		 bio_batch_samples(const struct bio_batch *b,
		    struct batch_sample *s);

/* ---- batches out ---- */

/*
 * Each appends to b and returns 0, or -1 with errno ENOMEM (b then
 * holds a part).  The numbers are written as exjson_format_i64() does.
 *
 * bio_put_ids(): "PAIR:INDEX" for each item, blank-separated, and a
 * newline (a fill batch: an empty line).  bio_put_json(): the JSON line {"epoch":E,"shard":S,
 * "step":T,"ids":[[PAIR,INDEX],...]}, with the keys of
 * bio_put_collated() before its "}" when c is not NULL.
 * bio_put_collated(): the keys of a collated batch after a '{' or a
 * ',': "id", "nsentences", "ntokens", "src_tokens" (a matrix),
 * "src_lengths", "prev_output_tokens" (null without a target or
 * without input feeding) and "target" (null without a target).
 */
int		 bio_put_ids(struct buf *b, const struct batch_item *it, size_t n);
/*
 * A batch of by-size: the indices index[0 .. n - 1] (every uint64 as
 * it is), blank-separated, and a newline.
 */
int		 bio_put_indices(struct buf *b, const uint64_t *index, size_t n);
int		 bio_put_json(struct buf *b, uint64_t epoch, uint64_t shard,
		    uint64_t step, const struct batch_item *it, size_t n,
		    const struct batch_collated *c, int has_target,
		    int input_feeding);
int		 bio_put_collated(struct buf *b, const struct batch_collated *c,
		    int has_target, int input_feeding);
/* The line "collate" writes: those keys in braces, and a newline. */
int		 bio_put_collated_line(struct buf *b,
		    const struct batch_collated *c, int has_target,
		    int input_feeding);

/*
 * A batch as the features of an Example, int64 lists to hand to
 * ex_encode_int64_lists() (name[i], val[i], len[i] for i < n): "epoch",
 * "shard", "step", "ids" (the n x 2 pairs and indices) with
 * "ids_shape", and, when c is not NULL, its tensors each with its
 * "_shape" (prev_output_tokens and target as bio_put_collated() has
 * them; no feature where it writes null).  The values point into f
 * and into c: both must stay unchanged until they are encoded.  Zero
 * f before the first call; free with bio_features_free().
 */
#define BIO_MAXFEAT	24
struct bio_features {
	size_t		 n;
	const char	*name[BIO_MAXFEAT];
	const int64_t	*val[BIO_MAXFEAT];
	size_t		 len[BIO_MAXFEAT];
	/* private: */
	char		 names[BIO_MAXFEAT][40];
	int64_t		 shape[BIO_MAXFEAT][2];
	int64_t		 head[4];	/* epoch, shard, step, nsentences */
	int64_t		*ids;
	size_t		 idscap;
};
/* Returns 0, or -1 with errno ENOMEM. */
int		 bio_features_batch(struct bio_features *f, uint64_t epoch,
		    uint64_t shard, uint64_t step, const struct batch_item *it,
		    size_t n, const struct batch_collated *c, int has_target,
		    int input_feeding);
void		 bio_features_free(struct bio_features *f);	/* then zeroed */

#endif
