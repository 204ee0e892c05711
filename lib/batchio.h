/*
 * Text inputs of batch-sample's kernels: the size lines of "by-size"
 * and the sample batches of "collate".  Both read whole buffers, check
 * everything and say what is wrong with the line number (from 1).
 * Nothing here prints or exits.
 */
#ifndef RECPIPE_BATCHIO_H
#define RECPIPE_BATCHIO_H

#include <stddef.h>
#include <stdint.h>

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

#endif
