/*
 * batch-sample's sources: language pairs read from mmap-index datasets
 * (mmidx.h) and what is computed from them for batch.h.  A pair's
 * sizes go to a struct batch_data, checked against the files that
 * hold them; the items of a batch are read back and collated; the
 * language list, the language tokens and the sampling weights are
 * worked out as fairseq's multilingual data manager does.  The tool
 * finds and opens the files; nothing here touches a path.
 *
 * Nothing here prints or exits.  Calls that can fail return -1 (or
 * NULL) with a one-line message in err (errlen bytes, cut to fit);
 * messages about a dataset name its file (mmidx_idx_path()).  A
 * failed allocation says "out of memory" and sets errno to ENOMEM.
 */
#ifndef RECPIPE_BATCHSRC_H
#define RECPIPE_BATCHSRC_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"

struct mmidx;
struct fqd;

/*
 * A language pair (or a monolingual dataset): its source and target
 * as one or more datasets end to end (fairseq's split, split1, ...).
 * The tool fills the names and tokens; bsrc_pair_add() the parts.
 */
struct bsrc_pair {
	char		*key;		/* "eng_Latn-tur_Latn", or -p's KEY */
	char		*slang, *tlang;	/* languages, for language tokens */
	int64_t		 stok, ttok;	/* token prepended to source / target, or -1 */
	int64_t		 seos, tbos;	/* new source eos, target bos (--lang-tok-replacing-bos-eos), or 0 */
	uint64_t	 ndirs;		/* data directories holding the pair */
	const char	*dir;		/* the one open now */
	size_t		 nparts;
	struct mmidx	**src, **tgt;	/* tgt NULL: monolingual */
	uint64_t	*start;		/* first index of each part; start[nparts] = n */
	uint64_t	 n;
	uint64_t	 srctok, tgttok;	/* tokens in the pair (for stats) */
};

/*
 * The language tokens of pair p, as fairseq's get_encoder_langtok()
 * and get_decoder_langtok() choose them.  enc 1 (src): the source
 * language's token; enc 2 (tgt): the target language's (the source's
 * for a monolingual pair); both in the source side's dictionary of the
 * source language (of the target's when the source has none).  dec: the
 * target language's token in the target side's dictionary.
 * lookup(arg, target, dictlang, lang) gives the id of lang's token in
 * the dictionary of side 'target' (0 source, 1 target) for language
 * dictlang.  Sets stok and ttok (-1: none); with replacing
 * (--lang-tok-replacing-bos-eos) the tokens are not prepended (sizes
 * stay) but become seos and tbos, the source's new eos and the target's
 * new bos (TransformEosLangPairDataset), else those are 0.
 */
void		bsrc_pair_langtoks(struct bsrc_pair *p, int enc, int dec,
		    int replacing, int64_t (*lookup)(void *arg, int target,
		    const char *dictlang, const char *lang), void *arg);

/*
 * Append a part: source s and target t (NULL: monolingual) of one
 * file pair, which the pair then owns.  Returns 0, or -1 with a
 * message when t holds another number of sentences than s, or on no
 * memory; s and t are closed then.
 */
int		bsrc_pair_add(struct bsrc_pair *p, struct mmidx *s,
		    struct mmidx *t, char *err, size_t errlen);
/* Close every part (the names and tokens stay); no parts afterwards. */
void		bsrc_pair_close(struct bsrc_pair *p);
/* The part of p holding sentence i (< p->n); *k gets its index there. */
size_t		bsrc_part_of(const struct bsrc_pair *p, uint64_t i, uint64_t *k);

/*
 * The sizes of every pair from their indexes (never the .bin), a
 * language token counted in where one is prepended; p->srctok and
 * p->tgttok are set.  Checked on the way, the first fault as a
 * reader meets it: pairs all bilingual or all monolingual, none
 * empty, no negative size (nor INT32_MAX with a token to add), every
 * size and the sum of each part within its .bin.  With close_after,
 * each pair's files are closed once read.  Returns the data (free with
 * batch_data_free()), or NULL with a message.
 */
struct batch_data *bsrc_load_sizes(struct bsrc_pair *pairs, size_t npairs,
		    int close_after, char *err, size_t errlen);

/*
 * Collation of the items of a batch from the datasets.  The collator
 * keeps the token pool and the samples between batches; zero it or
 * bsrc_collator_init() it, free with bsrc_collator_free().
 */
struct bsrc_collator {
	struct batch_collate_opts opts;
	int		 raw_ids;	/* 0: ids as fairseq-preprocess writes them, checked */
	/* private: */
	int64_t		*tok;
	size_t		 ntok, cap;
	size_t		*soff, *toff;
	struct batch_sample *s;
	struct batch_item *items, *tmp;
	size_t		 scap;
};
void		bsrc_collator_init(struct bsrc_collator *c,
		    const struct batch_collate_opts *o, int raw_ids);
void		bsrc_collator_free(struct bsrc_collator *c);	/* then zeroed */
/*
 * Collate it[0 .. n - 1] of pairs[] as fairseq's SampledMultiDataset
 * does: each pair's samples apart, the pairs one after another, the
 * rows sorted by source length again (with stable sorts, one collation
 * of the samples grouped by pair).  Without raw_ids a fairseq dataset's
 * sentence must end in eos and hold no pad.  'where' ("epoch 1, step
 * 3") goes into the messages.  *out as batch_collate() fills it (free
 * with batch_collated_free()).  Returns 0, or -1 with a message: a
 * dataset that cannot be read, ids fairseq-preprocess never writes, an
 * empty target, a collation fault, no memory.
 */
int		bsrc_collate(struct bsrc_collator *c, const struct bsrc_pair *pairs,
		    size_t npairs, const struct batch_item *it, size_t n,
		    const char *where, struct batch_collated *out, char *err,
		    size_t errlen);
/* Sort a[0 .. n - 1] by pair, stably, with room for n items in tmp. */
void		bsrc_sort_items(struct batch_item *a, struct batch_item *tmp,
		    size_t n);

/*
 * When fairseq loads the data again, and from which data directory:
 * the directory of epoch d is (d - 1) mod the number of directories
 * holding a pair.  Set the first three fields, zero the rest; then for
 * each epoch e in turn bsrc_schedule_load() before it is planned and
 * bsrc_schedule_done() after batch_plan_epoch().
 *
 * Without virtual epochs (SampledMultiDataset) the data are loaded
 * for the first epoch and, with several directories, again for every
 * epoch from its own.  With them (translation_multi_simple_epoch's
 * SampledMultiEpochDataset) the first load takes the directory of the
 * shard epoch estimated from the virtual data size when it is known
 * (ceil(vsize / vepoch) epochs a pass; else that of the epoch, the
 * shard epoch counting from 1), and a pass drawn again by data that
 * had drawn one asks for the next shard epoch's directory at the next
 * epoch, when there are several.
 */
struct bsrc_schedule {
	uint64_t	 vepoch;	/* --virtual-epoch-size, 0: none */
	uint64_t	 vsize;		/* --virtual-data-size, 0: not given */
	int		 many_dirs;	/* more than one data directory */
	/* private: */
	int		 started, load_next;
	uint64_t	 shard_epoch;
};
/*
 * Before epoch e: 1 when the data are to be loaded (opened, sized and
 * planned anew), from the directory of epoch *dir_epoch; 0 when the
 * plan goes on.
 */
int		bsrc_schedule_load(struct bsrc_schedule *s, uint64_t e,
		    uint64_t *dir_epoch);
/* After epoch e: pass_new from its batch_epoch_stats, loaded as above. */
void		bsrc_schedule_done(struct bsrc_schedule *s, int pass_new,
		    int loaded);

/* ---- languages ---- */

/*
 * A language token, "__LANG__" or with mbart "[LANG]", into w, cut to
 * BSRC_LANGTOK_MAX - 1 bytes (a language is a file name's part).
 * Returns its length.
 */
#define BSRC_LANGTOK_MAX	263
size_t		bsrc_langtok_word(char w[BSRC_LANGTOK_MAX], const char *lang,
		    int mbart);
/*
 * The language of a dataset prefix: what follows the last '.' of its
 * last component ("data/train.de-en.de" gives "de"), pointing into
 * prefix; NULL when there is none (or prefix is NULL).
 */
const char	*bsrc_prefix_lang(const char *prefix);
/*
 * Which direction a file name of a data directory holds, as fairseq's
 * _get_shard_num_dict() reads it: a name starting with split and
 * ending in ".idx" whose third field from the end ("train.de-en.de.idx"
 * gives "de-en") is fwd (returns 1) or rev (2); 0 otherwise.
 */
int		bsrc_name_direction(const char *name, const char *split,
		    const char *fwd, const char *rev);

/* The language list (fairseq's load_langs()), in id order. */
struct bsrc_langs {
	const char	**v;	/* n names */
	size_t		 n;
	char		*store;	/* private: the names' storage, or NULL */
};
/* From a comma-separated list (empty items skipped).  0, or -1 with errno ENOMEM. */
int		bsrc_langs_list(struct bsrc_langs *l, const char *list);
/*
 * From the text of a language file (len bytes, need not end in a
 * newline): one a line, surrounding white space stripped as Python's
 * strip() does, empty lines skipped.  Returns 0, or -1 with a message
 * for a NUL byte, or with errno ENOMEM.
 */
int		bsrc_langs_text(struct bsrc_langs *l, const char *text, size_t len,
		    char *err, size_t errlen);
/*
 * The languages of the pairs, sorted, each once: langs[0 .. n - 1] is
 * sorted in place and must outlive l.  0, or -1 with errno ENOMEM.
 */
int		bsrc_langs_sorted(struct bsrc_langs *l, const char **langs,
		    size_t n);
int		bsrc_langs_has(const struct bsrc_langs *l, const char *lang);
void		bsrc_langs_free(struct bsrc_langs *l);	/* then zeroed */
/*
 * fairseq's augment_dictionary(): the token of every language of l in
 * its order, added to d (a word d has keeps its id, a missing one is
 * appended), and for the mbart style "<mask>" after them.  Returns 0,
 * or -1 with errno set.
 */
int		bsrc_dict_augment(struct fqd *d, const struct bsrc_langs *l,
		    int mbart);

/* ---- sampling weights and statistics ---- */

/*
 * --sampling-weights: "KEY=W,..." with one weight for every pair, the
 * key that of the pair (a "main:" before it is dropped) and the weight
 * what real() reads (0 when it does, -1 when not), at least 0; the
 * sum must be finite.  Fills w[0 .. npairs - 1] and returns 0, or -1
 * with a message ("no pair 'x'", "pair 'x' given twice", ...) or with
 * errno ENOMEM.
 */
int		bsrc_weights(const char *spec, const struct bsrc_pair *pairs,
		    size_t npairs, int (*real)(const char *, double *),
		    double *w, char *err, size_t errlen);
/*
 * The padding of a shard: the share of its source and target slots
 * that hold no token (0 when there are no slots).
 */
void		bsrc_padding(const struct batch_shard_stats *ss, double *src,
		    double *tgt);

#endif
