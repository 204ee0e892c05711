/*
 * The inputs of a dataset build (mmap-index build): Example records,
 * each one sequence or, an Example without features, the end of a
 * document (recpipe(5)); lines of text through a fairseq dictionary,
 * with the words that became <unk> counted; the documents of a --part;
 * and the dtype a build picks from the range of its ids.  Internal to
 * the library and the tools (not installed).  Nothing here prints or
 * exits; the messages name no file, record or line (the caller adds
 * them).
 */
#ifndef RECPIPE_MMIDX_BUILD_H
#define RECPIPE_MMIDX_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "example.h"
#include "fairseq_dict.h"
#include "mmidx.h"

/*
 * The type upstream would pick for a vocabulary that holds every id in
 * [min, max] (max + 1 entries), by mmidx_dtype_auto(); for negative ids
 * (or max INT64_MAX) int32 when they fit it and the layout is
 * Megatron's, else int64.
 */
enum mmidx_dtype mmidx_dtype_for_range(enum mmidx_layout layout, int64_t min,
		    int64_t max);

/* ---- records ---- */

/*
 * Records above this size have their tokens streamed to the .bin
 * MMIDX_BIG_PART at a time, so that such a record costs about its own
 * size in memory, not 8 bytes a token and its copies.
 */
#define MMIDX_BIG_RECORD	(16u << 20)
#define MMIDX_BIG_PART		(64u << 10)

/*
 * How records are read: the tokens in the int64 list 'feature' (a
 * float list too when 'floats'), the mode of a multimodal sequence in
 * the int64 list 'modefeat' (one value in int8; NULL: no modes), an
 * Example without features the end of a document when 'docs' (else a
 * fault).  One per thread: it holds the decoded record.  Set up with
 * mmidx_recs_init(), free with mmidx_recs_free().
 */
struct mmidx_recs {
	const char	*feature;
	size_t		 featlen;
	const char	*modefeat;
	int		 floats;
	int		 docs;
	struct example	 ex;
	int64_t		*v;		/* the tokens of a canonical record */
	size_t		 cap;
	char		 err[1024];
};

void		 mmidx_recs_init(struct mmidx_recs *r, const char *feature,
		    const char *modefeat, int floats, int docs);
void		 mmidx_recs_free(struct mmidx_recs *r);
/* The message of the last failure. */
const char	*mmidx_recs_strerror(const struct mmidx_recs *r);

/* What a record holds (mmidx_recs_decode()). */
enum mmidx_rec_kind {
	MMIDX_REC_INT64,	/* i64[0 .. n) (i64 NULL when n is 0) */
	MMIDX_REC_FLOAT,	/* f32[0 .. n) */
	MMIDX_REC_DOC		/* the end of a document */
};

struct mmidx_rec {
	enum mmidx_rec_kind kind;
	const int64_t	*i64;
	const float	*f32;
	size_t		 n;
	int		 mode;		/* with modefeat: its value, else 0 */
};

/*
 * Decode the record p[0 .. n) into *out (pointing into r, valid until
 * its next call).  Returns 0, or -1 with the fault in
 * mmidx_recs_strerror() and errno ENOMEM ("out of memory") or EINVAL
 * (the record is not an Example, has no such feature, ...).
 */
int		 mmidx_recs_decode(struct mmidx_recs *r, const uint8_t *p,
		    size_t n, struct mmidx_rec *out);
/*
 * Add the record p[0 .. n) to b: its sequence (and mode), or the end of
 * a document.  Returns 0 for a sequence, 1 for a document end, or -1
 * with the fault in mmidx_recs_strerror() (that of mmidx_recs_decode()
 * or of the builder) and errno ENOMEM when memory ran out reading the
 * record, EINVAL for any other fault.
 */
int		 mmidx_recs_add(struct mmidx_recs *r, struct mmidx_builder *b,
		    const uint8_t *p, size_t n);
/*
 * Whether the record p[0 .. n) ends a document: an Example without
 * features (an empty record is one).  A record that does not decode
 * ends none.
 */
int		 mmidx_recs_ends_doc(struct mmidx_recs *r, const uint8_t *p,
		    size_t n);

/* ---- records in several threads ---- */

/*
 * The records of a job packed away from the builder, for a build in
 * several threads: a thread packs a job's records, in order, into its
 * own struct mmidx_pack (mmidx_pack_record() only reads the builder),
 * then adds them to the builder when the jobs before it are in
 * (mmidx_pack_put()).  The dataset is the one mmidx_recs_add() makes of
 * the same records (no float lists, no modes, no big records).  Set up
 * with mmidx_pack_init(), free with mmidx_pack_free().
 */
#define MMIDX_PACK_DOC	UINT32_MAX	/* in seq[]: a record that ends a document */

struct mmidx_pack {
	struct mmidx_recs rs;
	uint64_t	 vocab;		/* what mmidx_builder_set_vocab() was given */
	size_t		 max;		/* most records in a job */
	size_t		 k;		/* records packed since the reset */
	uint32_t	*seq;		/* tokens of each, or MMIDX_PACK_DOC */
	uint8_t		*tok;		/* their tokens, packed */
	size_t		 used, tokcap;	/* bytes */
};

/*
 * Records with the tokens in the int64 list 'feature', an Example
 * without features the end of a document when 'docs'; tokens at or
 * above 'vocab' (0: no limit) refused as the builder refuses them;
 * 'max' records a job.  Returns 0, or -1 with errno ENOMEM.
 */
int		 mmidx_pack_init(struct mmidx_pack *pk, const char *feature,
		    int docs, uint64_t vocab, size_t max);
void		 mmidx_pack_free(struct mmidx_pack *pk);
/* Start a new job. */
void		 mmidx_pack_reset(struct mmidx_pack *pk);
/*
 * Pack the record p[0 .. n) for b after those of the job (at most max
 * of them).  Returns 0, or -1 with the fault in mmidx_pack_strerror().
 */
int		 mmidx_pack_record(struct mmidx_pack *pk,
		    const struct mmidx_builder *b, const uint8_t *p, size_t n);
const char	*mmidx_pack_strerror(const struct mmidx_pack *pk);
/*
 * Add the records of the job to b, in order.  Returns the number of
 * documents they ended, or -1 with the message in
 * mmidx_builder_strerror() and *bad the record at fault (those before
 * it were added).
 */
long		 mmidx_pack_put(const struct mmidx_pack *pk, struct mmidx_builder *b,
		    size_t *bad);

/* ---- --part by documents ---- */

/*
 * A part's bytes [lo, hi) of the concatenation of the inputs.  With
 * documents ('docs') a part holds the documents that start in it: it
 * passes over the sequences before the first document end at or after
 * lo (unless lo is 0: 'skipping' starts as docs && lo > 0), and reads
 * on past hi to the end of the first document end at or after it, so
 * that no document is cut in two.  Each part decides this from the
 * same bytes, so the parts hold every document once, in order.
 */
struct mmidx_part {
	int		 on;		/* a part is taken (N > 1) */
	int		 docs;		/* follow document ends */
	uint64_t	 lo, hi;
	int		 skipping;	/* before the part's first document */
	int		 done;		/* the part's last document ended */
};

/*
 * Whether the sequence at concatenation offset g, a document end or
 * not, is the part's: 1 take it, 0 pass over it.  Sets pt->done when
 * nothing after it is.
 */
int		 mmidx_part_take(struct mmidx_part *pt, uint64_t g, int end);

/* ---- text through a fairseq dictionary ---- */

struct mmidx_text_stats {
	uint64_t	 seqs, toks, unk;	/* lines, ids, ids that became <unk> */
};

/*
 * The statistics of lines of text binarized through a fairseq
 * dictionary (fqd_encode_line()), with the words replaced by <unk>
 * counted in 'unk' (a dictionary without specials) up to 'unk_max'
 * distinct ones.  Set up with mmidx_textin_init(); the two
 * dictionaries stay the caller's.
 */
struct mmidx_textin {
	struct fqd	*dict;
	struct fqd	*unk;
	size_t		 unk_max;
	int		 capped;	/* an unknown word was left uncounted */
	struct mmidx_text_stats st;
};

void		 mmidx_textin_init(struct mmidx_textin *t, struct fqd *dict,
		    struct fqd *unk, size_t unk_max);
/*
 * Count the line p[0 .. n), which fqd_encode_line() made into k ids,
 * nunk of them <unk> in place of a word.  Returns 0, or -1 with errno
 * ENOMEM or EOVERFLOW (then the line's ids are counted, not all of its
 * unknown words).
 */
int		 mmidx_textin_count(struct mmidx_textin *t, const uint8_t *p,
		    size_t n, size_t k, size_t nunk);

/* fairseq's warning above this share of <unk>. */
#define MMIDX_UNK_WARN	0.05

enum { MMIDX_UNK_FINE, MMIDX_UNK_HIGH, MMIDX_UNK_OVER };
/*
 * The share of <unk> among all the ids of a build, in *rate: above
 * 'max' (max >= 0) MMIDX_UNK_OVER, above MMIDX_UNK_WARN MMIDX_UNK_HIGH,
 * else MMIDX_UNK_FINE (also without ids or <unk>s, *rate then unset).
 */
int		 mmidx_unk_check(const struct mmidx_text_stats *all, double max,
		    double *rate);

#endif
