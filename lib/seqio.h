/*
 * seqio feature converters and packing over plain int64 arrays.
 *
 * A converter takes records (a few named integer sequences each) and
 * produces rows of model features, exactly as seqio's FeatureConverter
 * classes and its trim_and_pack_dataset / trim_and_pad_dataset do,
 * quirks included; beside seqio's windowed next-fit packing it offers
 * denser strategies that keep seqio's meaning of segment ids and
 * positions.  It also builds Electra/BERT pretraining examples.
 *
 * Nothing here reads or writes records: the caller hands each record's
 * features over as arrays and receives each output row through a
 * callback.
 */
#ifndef RECPIPE_SEQIO_H
#define RECPIPE_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "example.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum sq_kind {
	SQ_ENCDEC,
	SQ_LM,
	SQ_PREFIXLM,
	SQ_PREFIXSUFFIXLM,
	SQ_DECODER,		/* resolved to LM, PrefixLM or PrefixSuffixLM */
	SQ_ENCODER,
	SQ_PASSTHROUGH,
	SQ_PREPACKED_ENCDEC,
	SQ_PREPACKED_LM,
	SQ_PREPACKED_PREFIXLM,
	SQ_PACK,		/* trim_and_pack_dataset over the listed features */
	SQ_PAD			/* trim_and_pad_dataset over the listed features */
};

/* Parse "encdec", "prefixlm", "prepacked-lm" (or "prepacked_lm"), "pack", ...; -1 if unknown. */
int		 sq_kind_parse(const char *s);
const char	*sq_kind_name(enum sq_kind k);

enum sq_strategy {
	SQ_SEQIO,	/* windowed next-fit, seqio's default path */
	SQ_FIRST_FIT,	/* ours: first fitting row among W open rows */
	SQ_BEST_FIT	/* ours: fullest fitting row among W open rows */
};

#define SQ_MAX_LENGTH	(1L << 24)	/* longest feature length accepted */
#define SQ_MAX_FEATS	16		/* length entries and pass-through features */

/*
 * Called with each output row: 'n' features, names[i] with values
 * vals[i][0 .. lens[i]).  'used' is NULL, or says where the padding
 * starts: vals[i][used[i] .. lens[i]) are all zero (used[i] <= lens[i];
 * values before it may be zero too).  Everything is valid only during
 * the call.  Return 0 to go on, -1 (errno set) to stop: the pushing
 * call then returns -1 with sq_errkind() SQ_EEMIT.
 */
typedef int	(*sq_emit_fn)(void *arg, size_t n, const char *const *names,
		    const int64_t *const *vals, const size_t *lens,
		    const size_t *used);

/*
 * A packed row of EncDec or LM as bytes (see sq_push_bytes()): per
 * packed key (inputs then targets; targets only for LM) the tokens as
 * minimal varints back to back, and the values and bytes each segment
 * took.  Every token is in 1 .. 2^28 and takes 1 to 4 bytes.
 */
struct sq_brow_key {
	const uint8_t	*b;		/* nb bytes of varints */
	size_t		 nb;
	size_t		 nv;		/* values (at most the key's length) */
	size_t		 nseg;
	const uint32_t	*segv;		/* values of each segment (>= 1) */
	const uint32_t	*segb;		/* bytes of each */
	/* Sums over the segments, so that a row's size reads no array: */
	size_t		 idb;		/* bytes of their segment ids */
	size_t		 posb;		/* bytes of their positions */
	size_t		 lastb;		/* bytes of their last tokens */
};
struct sq_brow {
	size_t		 nk;
	struct sq_brow_key k[2];
	/* Set by sq_brow_size(): */
	struct ex_entry	 sz[8];		/* the sizes of each list's entry */
	size_t		 fsz;		/* the body of the Features */
};

/* Called with each row the byte path makes; 0 or -1 (errno set) as sq_emit_fn. */
typedef int	(*sq_emit_bytes_fn)(void *arg, const struct sq_brow *row);

struct sq_config {
	enum sq_kind	 kind;
	size_t		 nlen;			/* task feature lengths */
	const char	*len_name[SQ_MAX_FEATS];
	long		 len_val[SQ_MAX_FEATS];
	size_t		 npass;			/* pass-through features */
	const char	*pass_name[SQ_MAX_FEATS];
	int		 pack;			/* default 1, as in seqio */
	int64_t		 bos_id;		/* default 0 */
	int		 loss_on_targets_only;	/* default 1 */
	int		 has_mask_id;
	int64_t		 mask_id;
	int		 length_check;		/* default 1 */
	int		 custom_ops;		/* tensor2tensor's first-fit kernels */
	enum sq_strategy strategy;
	size_t		 window;		/* open rows for first-fit/best-fit; 0 = default */
	sq_emit_fn	 emit;
	sq_emit_bytes_fn emit_bytes;		/* NULL: no byte path */
	void		*emit_arg;		/* for both */
};

#define SQ_DEFAULT_WINDOW	256

/* Fill 'cfg' with seqio's defaults (pack, loss on targets only, length check). */
void		 sq_config_init(struct sq_config *cfg);

enum sq_type {
	SQ_ABSENT,
	SQ_INT,		/* an integer list in v[0 .. n) */
	SQ_OTHER	/* present with another type, named by 'tname' */
};

/* One feature of an input record, as the caller found it. */
struct sq_feat {
	enum sq_type	 type;
	const int64_t	*v;
	size_t		 n;
	const char	*tname;		/* SQ_OTHER: "string", "float32", ... */
	/*
	 * 1: every value is in 0 .. 2^28 (fits int32); 0: unknown.
	 * SQ_CHECKED: the caller has checked every value, so v may hold
	 * only the first sq_input_need() of the n values; 'bad' is then the
	 * index of the first value that does not fit int32 (SIZE_MAX: none)
	 * and 'badv' that value (both unread otherwise).
	 */
	int		 small;
	size_t		 bad;
	int64_t		 badv;
};
#define SQ_CHECKED	2

enum sq_errkind {
	SQ_OK,
	SQ_ECONFIG,	/* options that seqio rejects before reading data */
	SQ_EDATA,	/* a record seqio rejects; message names the feature */
	SQ_ENOMEM,
	SQ_EEMIT	/* the emit callback returned -1 */
};

struct sq_conv;

/*
 * Check 'cfg' the way seqio's constructor and validations 1 and 3 do
 * and prepare a converter.  Returns NULL on failure: then, if 'err' is
 * given, it receives the converter (holding only the message; read
 * sq_strerror() and free it), or NULL with errno ENOMEM.  On success
 * *err is NULL.  The names in 'cfg' are copied.  Free with sq_free().
 */
struct sq_conv	*sq_new(const struct sq_config *cfg, struct sq_conv **err);
void		 sq_free(struct sq_conv *c);	/* NULL is fine */
const char	*sq_strerror(const struct sq_conv *c);
enum sq_errkind	 sq_errkind(const struct sq_conv *c);

/*
 * How many leading values of input i (an int64 list) the converter
 * reads, beside its length: SIZE_MAX when it may read them all (the
 * pre-packed LM converters, pass-through without a length, ...).  A
 * caller may hand over only that many, with small SQ_CHECKED.
 */
size_t		 sq_input_need(const struct sq_conv *c, size_t i);
/* The converter actually run (SQ_DECODER resolves here). */
enum sq_kind	 sq_resolved(const struct sq_conv *c);

/*
 * The features the caller must look up in each record, in the order
 * sq_push() expects them.  Names stay valid until sq_free().
 * For SQ_PAD these are the listed features; for SQ_PASSTHROUGH none.
 */
size_t		 sq_ninputs(const struct sq_conv *c);
const char	*sq_input_name(const struct sq_conv *c, size_t i);

/*
 * Push one record: f[i] is the feature named sq_input_name(c, i).
 * Rows that become complete are emitted.  Returns 0, or -1 with
 * sq_errkind() / sq_strerror() saying why (the converter is then
 * unusable).  SQ_PASSTHROUGH only counts: the caller copies the
 * record itself.  For SQ_PAD, the caller copies the unlisted features
 * itself: each row holds only the listed features that were present.
 */
int		 sq_push(struct sq_conv *c, const struct sq_feat *f);
/*
 * Find the inputs in a serialized tf.train.Example without a full
 * decode, when it is in the canonical form writers produce, as
 * ex_canonical_find() and ex_canonical_feature() read it: each map
 * entry a key then a value, each input's Feature one list, an int64
 * list one packed chunk, no input twice.  Returns 1 with f[0 .. sq_ninputs())
 * filled (values owned by the converter, valid until the next call),
 * 0 when the record is in another form or malformed (decode it in full
 * instead; nothing is lost), -1 with errno ENOMEM.
 */
int		 sq_fetch_canonical(struct sq_conv *c, const uint8_t *p, size_t n,
		    struct sq_feat *f);
/*
 * f[0 .. sq_ninputs()) from a decoded Example: each input absent, an
 * int64 list (values borrowed from 'ex'), or another kind, named as
 * seqio names it ("string", "float32").
 */
struct example;
void		 sq_fetch_example(const struct sq_conv *c,
		    const struct example *ex, struct sq_feat *f);
/*
 * The byte path, for packed EncDec and LM with seqio's strategy (not
 * the custom ops) when the config has emit_bytes: push the serialized
 * Example [p, p + n) when its tokens can be packed as bytes: the
 * record in the canonical form of sq_fetch_canonical(), every token of
 * the packed keys in 1 .. 2^28 as a minimal varint, within its length
 * (or trimmed to it without the length check).  Returns 1 when the
 * record was pushed (rows that become complete go to emit_bytes, with
 * the same content that emit would get), 0 when it was not (push it
 * with sq_push(); the converter is ready for that), -1 as sq_push().
 * Returns 0 whenever the byte path is off.
 */
int		 sq_push_bytes(struct sq_conv *c, const uint8_t *p, size_t n);
/*
 * The size of 'row' as a serialized Example, byte for byte what
 * ex_encode_int64_lists() makes of the same row given to emit; fills
 * row->sz and row->fsz.
 * sq_brow_put() writes it to dst.  Both only read 'c', and may run in
 * another thread than the one pushing records.
 */
size_t		 sq_brow_size(const struct sq_conv *c, struct sq_brow *row);
void		 sq_brow_put(const struct sq_conv *c, const struct sq_brow *row,
		    uint8_t *dst);
/* End of input: emit what is left.  0 or -1 as sq_push(). */
int		 sq_finish(struct sq_conv *c);
/*
 * End of the good input before a fault: sq_finish(), also after a
 * sq_push() that failed input validation (a missing or mistyped
 * feature, a length check, an unpacked record's targets_segment_ids
 * that is not an integer list as long as the targets) or ran out of
 * memory, any of which refuses the record whole; the rows are those the
 * records before it give.  Returns 0, or -1 when a failure left the rows unknown (any
 * other error) or sq_finish() failed.
 */
int		 sq_finish_before(struct sq_conv *c);

/* Counts for --stats. */
struct sq_stats {
	uint64_t	 records;	/* pushed */
	uint64_t	 rows;		/* emitted */
	uint64_t	 trimmed;	/* tokens cut by trimming to the lengths */
	uint64_t	 dropped;	/* values dropped by non-zero counting (packed) */
	size_t		 nkeys;		/* packed (or padded) keys */
	const char	*key[SQ_MAX_FEATS];
	long		 len[SQ_MAX_FEATS];
	uint64_t	 tokens[SQ_MAX_FEATS];	/* values placed per key (packed: after non-zero counting) */
	uint64_t	 tokens_in[SQ_MAX_FEATS];	/* values that came in per key, before trimming */
	int		 is_token[SQ_MAX_FEATS];	/* key counts towards efficiency */
};
void		 sq_get_stats(const struct sq_conv *c, struct sq_stats *st);
/*
 * Packing efficiency: max over token keys k of ceil(tokens_k / len_k),
 * divided by the rows written; 0 when no row was written.
 */
double		 sq_efficiency(const struct sq_stats *st);

/*
 * seqio's helpers, exposed for tests and for callers with their own
 * loops.  Arrays are rows x cols, row-major; 'cols' is 1 for a 1-D
 * sequence.
 */
/* shift_right_by_one along the first axis: out[0] row = bos. */
void		 sq_shift_right(const int64_t *t, size_t rows, size_t cols,
		    int64_t bos, int64_t *out);
/*
 * make_autoregressive_inputs: the shift, then bos wherever seg[i] !=
 * seg[i-1] when 'seg' is given.  Returns 0, or -1 with *msg set to
 * seqio's error (segment ids with a 2-D sequence).
 */
int		 sq_autoregressive(const int64_t *t, size_t rows, size_t cols,
		    const int64_t *seg, int64_t bos, int64_t *out,
		    const char **msg);
/*
 * _check_lengths for one feature of length n: strict wants n ==
 * expected, otherwise n <= expected.  Returns 0, or -1 with seqio's
 * message in msg.  'label' is the stage ("input_validation", ...).
 */
int		 sq_check_length(const char *name, size_t n, long expected,
		    int strict, const char *label, char *msg, size_t msgsz);
/*
 * _validate_dataset's presence and dtype test of one feature of type
 * 'type' ('tname' for SQ_OTHER) that must be int32; 'v' and 'n' are
 * its values (each must fit int32).  Returns 0, or -1 with the message.
 */
int		 sq_check_feature(const char *name, int type, const char *tname,
		    const int64_t *v, size_t n, const char *label, char *msg,
		    size_t msgsz);
/* non_padding_position: out[i] = (v[i] != 0). */
void		 sq_non_padding(const int64_t *v, size_t n, int64_t *out);
/*
 * _check_exact_match: writes seqio's message into msg (size msgsz) and
 * returns -1 when the name sets differ, else 0.
 */
int		 sq_exact_match(const char *const *expected, size_t ne,
		    const char *const *actual, size_t na,
		    const char *expected_src, const char *actual_src,
		    char *msg, size_t msgsz);
/*
 * PrefixLM's _convert_example on unpacked features of length n:
 * targets, inputs_width, inputs_width_add_pos in; decoder_input_tokens,
 * decoder_loss_weights, decoder_causal_attention out.
 */
void		 sq_prefixlm_example(const int64_t *targets,
		    const int64_t *width, const int64_t *width_add_pos,
		    size_t n, int64_t bos, int loss_on_targets_only,
		    int64_t *dec_in, int64_t *loss, int64_t *causal);

/*
 * Electra's pretraining example builder (build_pretraining_dataset.py
 * ExampleBuilder), on token ids, with our own seeded generator in place
 * of Python's.  Rows are input_ids, input_mask, segment_ids of length
 * max_len, emitted through 'emit'.
 */
struct sq_electra;

/* Returns NULL with errno ENOMEM or EINVAL (max_len < 5 or above SQ_MAX_LENGTH). */
struct sq_electra *sq_electra_new(long max_len, int64_t cls_id, int64_t sep_id,
		    uint64_t seed, sq_emit_fn emit, void *arg);
void		 sq_electra_free(struct sq_electra *e);	/* NULL is fine */
/*
 * One sentence (ids[0 .. n)); n == 0 is a blank line: it ends the
 * document when sentences are pending.  Returns 0, or -1 (ENOMEM, or
 * the callback's failure with its errno).
 */
int		 sq_electra_push(struct sq_electra *e, const int64_t *ids, size_t n);
/* End of a file: write the partial example, if any. */
int		 sq_electra_flush(struct sq_electra *e);
uint64_t	 sq_electra_rows(const struct sq_electra *e);
/*
 * Tokens pushed (*in) and placed in rows between [CLS] and [SEP] (*out);
 * the rest were cut off at max_len, as Electra cuts them.
 */
void		 sq_electra_tokens(const struct sq_electra *e, uint64_t *in,
		    uint64_t *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
