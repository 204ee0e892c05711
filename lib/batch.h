/*
 * fairseq's data path from sizes to batches, exactly: temperature
 * sampling across language pairs (SampledMultiDataset), ordering and
 * the length filter (ordered_indices, filter_indices_by_size),
 * batch_by_size, the epoch shuffle and worker shards
 * (EpochBatchIterator, ShardedIterator) and collation
 * (language_pair_dataset.collate).  Every random draw comes from
 * numpy's legacy generator (nprng.h) as upstream makes it.
 *
 * Layout for scale: sentence sizes live in one compact array (source
 * and target side by side, uint16 when they fit, else uint32) indexed
 * by a global sentence number; an epoch holds one word per virtual
 * item (the shuffled sample, 32 bits below 2^31 items) plus the items
 * of the batches asked for.  The sorted order is by (source, target)
 * bucket, so batch_by_size runs on the bucket counts and batches are
 * known before any item is placed.  All counts are 64-bit.
 *
 * Nothing here prints or exits.  Calls that can fail return -1 (or
 * NULL) with a one-line message in err (errlen bytes, may be cut);
 * BATCH_ERRMAX bytes are always enough.
 *
 * The implementation is split over lib/batch.c (batch_by_size,
 * collation) and lib/batch_plan.c (data, sampling, order, epochs).
 *
 * API changes since the first version: batch_cutter_finish() gives up
 * to two ends (out[2]) and the drop flag; batch_set_sort_chunk() and
 * batch_set_word_limit() were added (tuning and test knobs);
 * struct batch_sample gained new_src_eos and new_tgt_bos (zero them).
 */
#ifndef RECPIPE_BATCH_H
#define RECPIPE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define BATCH_ERRMAX	256

/* ---- batch_by_size ---- */

/* What happens to a last batch whose size is not a multiple of mult. */
enum batch_compat {
	BATCH_COMPAT_012,	/* fairseq <= 0.12.3: kept (the default) */
	BATCH_COMPAT_MAIN	/* fairseq main: dropped when mult > 1 */
};

struct batch_limits {
	int64_t		max_tokens;	/* <= 0: unlimited */
	int64_t		max_sentences;	/* <= 0: unlimited */
	int64_t		mult;		/* required_batch_size_multiple; < 1 means 1 */
	enum batch_compat compat;
};
#define BATCH_LIMITS_INIT { 0, 0, 8, BATCH_COMPAT_012 }

/*
 * batch_by_size over ntok[0 .. n - 1] (tokens per item, in batch
 * order; spec 5.4).  On success returns 0 with *ends a malloc'd array
 * of *nbatch batch ends (batch b holds positions ends[b - 1] ..
 * ends[b] - 1, with ends[-1] taken as 0; free() it; NULL when there
 * are no batches).  Empty input gives no batches under either compat.
 * Returns -1 with a message in err when an item is longer than
 * max_tokens (fairseq's words: "Sentences lengths should not exceed
 * max_tokens=N"), a size is negative, or memory runs out.
 */
int		batch_by_size(const int64_t *ntok, uint64_t n,
		    const struct batch_limits *lim, uint64_t **ends,
		    uint64_t *nbatch, char *err, size_t errlen);

/*
 * The same kernel fed one size at a time, for callers that stream:
 * batch_cutter_init(), then batch_cutter_push() for each ntok in
 * order (it stores the batch ends it finds, 0 to 2, in out and returns
 * how many), then batch_cutter_finish() for the last ends (a pending
 * tail's cut and the input length: 1 or 2 into out; none for empty
 * input).  Ends are exclusive positions counted
 * from 0 and come out in increasing order.  With compat main,
 * batch_cutter_finish() sets *drop_last when the last batch (the one
 * ending at the last end given out) must be dropped.
 * batch_cutter_push() returns -1 with the message for an item above
 * max_tokens or a negative one; the cutter is unusable afterwards.
 */
struct batch_cutter {
	struct batch_limits lim;
	uint64_t	pos;		/* items pushed */
	uint64_t	start;		/* first position of the open batch */
	uint64_t	end;		/* end of its committed part */
	uint64_t	lastcut;	/* last end given out (0: none) */
	int64_t		wmax;		/* widest item committed to it */
	int64_t		tmax;		/* widest item in the pending tail */
};
void		batch_cutter_init(struct batch_cutter *c,
		    const struct batch_limits *lim);
int		batch_cutter_push(struct batch_cutter *c, int64_t ntok,
		    uint64_t out[2], char *err, size_t errlen);
int		batch_cutter_finish(struct batch_cutter *c, uint64_t out[2],
		    int *drop_last);

/* ---- collation ---- */

/*
 * One sample: tokens of source and target (tgt NULL: no target).
 * new_src_eos and new_tgt_bos, when > 0, are fairseq's
 * TransformEosLangPairDataset (--lang-tok-replacing-bos-eos): the
 * source's last token (which must be eos) becomes new_src_eos in
 * src_tokens, and the first column of prev_output_tokens (eos)
 * becomes new_tgt_bos; sizes and target are unchanged.  0 (the value
 * of a zeroed sample) changes nothing; language tokens are never 0.
 */
struct batch_sample {
	int64_t		 id;
	const int64_t	*src;
	size_t		 nsrc;
	const int64_t	*tgt;
	size_t		 ntgt;
	int64_t		 new_src_eos;
	int64_t		 new_tgt_bos;
};

struct batch_collate_opts {
	int		left_pad_source;	/* default 1 */
	int		left_pad_target;	/* default 0 */
	int		input_feeding;		/* default 1: prev_output_tokens */
	int64_t		pad;			/* default 1 */
	int64_t		eos;			/* default 2 */
	int64_t		pad_to_multiple;	/* default 1 (< 1 means 1) */
};
#define BATCH_COLLATE_OPTS_INIT { 1, 0, 1, 1, 2, 1 }

/*
 * What fairseq's collater returns.  Matrices are row-major, n rows of
 * the given width.  target and prev_output_tokens are NULL when the
 * samples have no target; prev_output_tokens also without input
 * feeding.  Free with batch_collated_free().
 */
struct batch_collated {
	size_t		 n;		/* nsentences */
	int64_t		 ntokens;	/* target tokens != pad (source without target) */
	int64_t		*id;		/* n */
	int64_t		*src_lengths;	/* n: source tokens != pad */
	size_t		 src_width;
	int64_t		*src_tokens;	/* n x src_width */
	size_t		 tgt_width;
	int64_t		*target;	/* n x tgt_width, or NULL */
	int64_t		*prev_output_tokens; /* n x tgt_width, or NULL */
};

/*
 * Collate s[0 .. n - 1] as language_pair_dataset.collate does: rows
 * padded to the longest (rounded up to pad_to_multiple), sources left-
 * or right-padded, rows re-ordered by descending non-pad source length
 * (stable: ties keep input order; upstream's sort is not stable),
 * prev_output_tokens = eos then the target without its last token.
 * Either every sample has a target or none has.  n = 0 gives an empty
 * result.  Returns 0, or -1 with a message: an empty target names the
 * sample id ("sample 7: empty target"); mixed targets; a source that
 * does not end with eos where new_src_eos asks to replace it
 * (upstream's assertion); new_tgt_bos with left_pad_target (upstream
 * raises NotImplementedError); no memory.
 * *out is filled on success only.
 */
int		batch_collate(const struct batch_sample *s, size_t n,
		    const struct batch_collate_opts *o,
		    struct batch_collated *out, char *err, size_t errlen);
void		batch_collated_free(struct batch_collated *c);	/* NULL is fine */

/* ---- sizes of the language pairs ---- */

struct batch_data;

/*
 * Room for the sizes of npairs pairs of n[i] sentences each (n[i] may
 * be 0).  bilingual = 0: source sizes only (sorted by source alone,
 * tokens = source size); 1: source and target.  Fill every sentence
 * with batch_data_set().  Returns NULL with a message on no memory.
 * Free with batch_data_free().
 */
struct batch_data *batch_data_new(size_t npairs, const uint64_t *n,
		    int bilingual, char *err, size_t errlen);
void		batch_data_free(struct batch_data *d);	/* NULL is fine */
/*
 * Sizes of sentences first .. first + count - 1 of 'pair' (tokens,
 * language tokens included as PrependTokenDataset counts them); tgt
 * is ignored for monolingual data (and may be NULL).  Sizes must be
 * 0 .. INT32_MAX.  Returns 0, or -1 with a message for a range outside
 * the pair, a negative size, or no memory (storage widens from 16 to
 * 32 bits when a size above 65535 arrives); after a failure the sizes
 * of that range are unspecified.
 */
int		batch_data_set(struct batch_data *d, size_t pair, uint64_t first,
		    uint64_t count, const int32_t *src, const int32_t *tgt,
		    char *err, size_t errlen);
size_t		batch_data_npairs(const struct batch_data *d);
uint64_t	batch_data_count(const struct batch_data *d, size_t pair);
int		batch_data_bilingual(const struct batch_data *d);
/* Sizes of one sentence (tgt 0 for monolingual data). */
void		batch_data_size(const struct batch_data *d, size_t pair,
		    uint64_t index, uint32_t *src, uint32_t *tgt);

/* ---- the pipeline, per epoch ---- */

enum batch_sampling {
	BATCH_SAMPLING_CONCAT,		/* no sampling: the pairs one after another */
	BATCH_SAMPLING_TEMPERATURE,	/* r_i = (n_i / N)^(1 / T) */
	BATCH_SAMPLING_UNIFORM,		/* r_i = 1 */
	BATCH_SAMPLING_WEIGHTS		/* r_i = weights[i] */
};

struct batch_config {
	enum batch_sampling sampling;
	double		 temperature;	/* default 1.5 */
	const double	*weights;	/* npairs ratios for BATCH_SAMPLING_WEIGHTS (read by batch_plan_new() only) */
	uint64_t	 virtual_size;	/* 0: fairseq's default (sampled data only) */
	uint32_t	 sampling_seed;	/* RandomState([h, seed, epoch]); default 2 */
	uint32_t	 seed;		/* --seed, default 1 */
	int		 order_seed_epoch; /* 1: order permutation seeded seed + the epoch built for; 0: seed */
	int		 shuffle;	/* 0: identity order, batches not shuffled */
	int		 grouped_shuffling;
	int		 skip_remainder;	/* drop the last batch of each shard */
	int		 rebuild_batches;	/* order and batches every epoch (always when sampled) */
	int64_t		 max_source_positions;	/* <= 0: no limit */
	int64_t		 max_target_positions;	/* <= 0: no limit (ignored for monolingual) */
	struct batch_limits lim;
	uint32_t	 num_shards;	/* >= 1 */
	/*
	 * SampledMultiEpochDataset (--virtual-epoch-size): > 0 splits
	 * each pass over the virtual data (sampled, or concatenated) into
	 * virtual epochs of this many items (the last one shorter); 0:
	 * SampledMultiDataset, one pass an epoch.
	 */
	uint64_t	 virtual_epoch_size;
};
#define BATCH_CONFIG_INIT { BATCH_SAMPLING_CONCAT, 1.5, NULL, 0, 2, 1, 1, 1, \
	0, 0, 0, 0, 0, BATCH_LIMITS_INIT, 1, 0 }

/* SHA-1 of the class names mod 2^32, the first word of the sampling seed. */
#define BATCH_HASH_SAMPLED_MULTI	1944279108u	/* SampledMultiDataset */
#define BATCH_HASH_SAMPLED_MULTI_EPOCH	2770590817u	/* SampledMultiEpochDataset */

/* An item: sentence 'index' of the pair at position 'pair'. */
struct batch_item {
	uint32_t	pair;
	uint64_t	index;
};

struct batch_plan;

/*
 * A plan over d (which must stay alive and unchanged while the plan
 * lives) with a copy of c (c->weights is only read during the call:
 * the ratios are fixed here).  Checks the
 * configuration: weights finite and >= 0 with a positive sum, a
 * temperature > 0, num_shards >= 1.  Returns NULL with a message.
 * Free with batch_plan_free().
 */
struct batch_plan *batch_plan_new(const struct batch_data *d,
		    const struct batch_config *c, char *err, size_t errlen);
void		batch_plan_free(struct batch_plan *p);	/* NULL is fine */

/*
 * With virtual_epoch_size, as SampledMultiEpochDataset: a pass is
 * established (sampling and a permutation of its items, both from
 * RandomState([BATCH_HASH_SAMPLED_MULTI_EPOCH, sampling_seed, E]))
 * at the first epoch E a plan is given and at every epoch whose slice
 * starts the pass again; epoch e takes the items at positions
 * ((e - 1) mod ceil(V / size)) * size ... of that permutation.  A plan
 * is therefore one dataset object of fairseq's: make a new one where
 * fairseq loads the data again.
 *
 * Epoch 'epoch' (>= 1): sample (sampled data), order, filter and batch
 * when needed (the first call; every call when sampled or
 * rebuild_batches), then shuffle the batches with seed + epoch and
 * deal them to the shards.  shard = -1 keeps the items of every batch
 * (needed for batch_plan_batch()); shard = k keeps only the items of
 * the batches shard k sees (less memory), and the batches of other
 * shards can then be sized but not listed.  Batches built once (no
 * sampling, no rebuild_batches) keep every item whatever shard says,
 * since later epochs deal them differently.  Returns 0, or -1 with a
 * message (an item above max_tokens, no memory).  Earlier results are
 * invalidated.
 */
int		batch_plan_epoch(struct batch_plan *p, uint64_t epoch, int64_t shard,
		    char *err, size_t errlen);

/* Sampling and sizes of the last epoch. */
struct batch_pair_stats {
	uint64_t	size;		/* real sentences */
	double		ratio;		/* r_i as upstream logs it (0 without sampling: none applies) */
	double		prob;		/* p_i = r_i / sum r (n_i / N without sampling) */
	uint64_t	virtual_size;	/* sentences drawn from the pair this epoch
					   (in this virtual epoch's slice) */
	uint64_t	kept;		/* of those, passing the length filter */
};
struct batch_epoch_stats {
	uint64_t	epoch;
	int		sampled;	/* ratios apply */
	int		rebuilt;	/* order and batches built for this epoch */
	uint64_t	real_size;	/* sum of the pair sizes */
	uint64_t	virtual_size;	/* items ordered (len of the dataset) */
	uint64_t	filtered;	/* items removed by the length filter */
	uint64_t	batches;	/* batch_by_size output */
	uint64_t	batched;	/* items in those batches */
	uint64_t	dropped_tail;	/* items of the last batch dropped by compat main */
	uint64_t	group_dropped_batches;	/* grouped shuffling's remainder */
	uint64_t	group_dropped_items;
	uint64_t	steps;		/* steps of every shard (fill batches included) */
	/* virtual epochs only (else 0): */
	uint64_t	pass_epoch;	/* the epoch whose seed drew the pass */
	uint64_t	pass_size;	/* items in the pass (the virtual data size) */
	uint64_t	pass_start;	/* position of this epoch's first item in it */
	int		pass_new;	/* 1: the pass was drawn for this epoch */
};
void		batch_plan_stats(const struct batch_plan *p,
		    struct batch_epoch_stats *st);
void		batch_plan_pair_stats(const struct batch_plan *p, size_t pair,
		    struct batch_pair_stats *ps);

/* Per shard: what worker k gets this epoch. */
struct batch_shard_stats {
	uint64_t	steps;		/* batches seen, fill batches included */
	uint64_t	batches;	/* real batches */
	uint64_t	fill;		/* empty fill batches */
	uint64_t	sentences;
	uint64_t	src_tokens;	/* sum of source sizes */
	uint64_t	tgt_tokens;	/* sum of target sizes */
	uint64_t	src_slots;	/* sum over batches of rows x longest source */
	uint64_t	tgt_slots;	/* ... x longest target */
	uint64_t	skipped_batches; /* skip_remainder: the last batch dropped (0 or 1) */
	uint64_t	skipped_items;
};
void		batch_plan_shard_stats(const struct batch_plan *p, uint32_t shard,
		    struct batch_shard_stats *ss);

/* Batches of batch_by_size (before the shuffle), in sorted order. */
uint64_t	batch_plan_nbatches(const struct batch_plan *p);
/*
 * Shard k's steps: step s (< steps) is batch *id of the sorted list
 * (UINT64_MAX for a fill batch).  Returns its item count (0 for a
 * fill batch or a step out of range).
 */
uint64_t	batch_plan_step(const struct batch_plan *p, uint32_t shard,
		    uint64_t step, uint64_t *id);
/* The number of items of batch 'id' (0 when out of range). */
uint64_t	batch_plan_batch_size(const struct batch_plan *p, uint64_t id);
/*
 * Items of batch 'id' into out (room for batch_plan_batch_size()).
 * Returns the count, or UINT64_MAX when its items were not kept
 * (batch_plan_epoch() was given another shard).
 */
uint64_t	batch_plan_batch(const struct batch_plan *p, uint64_t id,
		    struct batch_item *out);

/*
 * How an epoch is sorted (the order is the same either way): in chunks
 * of at most 'items' virtual items (default 2^21), each sorted by two
 * counting passes whose output streams stay in cache, then merged
 * while the wanted batches are written; or, with 0, in one pass over
 * every (source, target) bucket (slower, used anyway when sizes are
 * too spread for a bucket table).  Affects every plan in the process.
 */
void		batch_set_sort_chunk(uint64_t items);
/*
 * Words are 32 bits while sentences and virtual items stay below n
 * (default and most 2^31), else 64.  Lowering it tests the 64-bit
 * layout on small data.  Affects plans made afterwards.
 */
void		batch_set_word_limit(uint64_t n);

/*
 * Filtered items in sorted order: i < stats.filtered; *virt is the
 * virtual index (position in the sampled dataset, as fairseq reports
 * it), *item the sentence.
 */
void		batch_plan_filtered(const struct batch_plan *p, uint64_t i,
		    uint64_t *virt, struct batch_item *item);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
