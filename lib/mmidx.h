/*
 * Indexed token datasets: the .bin/.idx pairs of fairseq
 * (MMapIndexedDataset) and Megatron-LM (IndexedDataset), read and
 * written byte for byte.
 *
 * Both .idx layouts start with the same magic and version; they are
 * told apart by the file size.  Every array in them is unaligned, so
 * all access goes through byte loads.  Every pointer and size is
 * checked against the .bin size before it is used.  Nothing here
 * prints or exits: failures return -1 (or NULL) with a message that
 * names the file.
 */
#ifndef RECPIPE_MMIDX_H
#define RECPIPE_MMIDX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum mmidx_layout {
	MMIDX_AUTO,		/* reader: detect from the file size */
	MMIDX_FAIRSEQ,
	MMIDX_MEGATRON,
	MMIDX_MEGATRON_MM	/* Megatron with one int8 mode per sequence */
};

/* Element types.  The on-disk code depends on the layout (code 7!). */
enum mmidx_dtype {
	MMIDX_UINT8,
	MMIDX_INT8,
	MMIDX_INT16,
	MMIDX_UINT16,
	MMIDX_INT32,
	MMIDX_UINT32,
	MMIDX_INT64,
	MMIDX_UINT64,
	MMIDX_FLOAT32,
	MMIDX_FLOAT64,
	MMIDX_NDTYPE
};

#define MMIDX_MAGIC	"MMIDIDX\0\0"	/* 9 bytes */
#define MMIDX_FAIRSEQ_HDR	26	/* magic, version, code, N */
#define MMIDX_MEGATRON_HDR	34	/* ... and D */
#define MMIDX_MAX_SEQ	INT32_MAX	/* sizes are int32 on disk */

/* "uint16", ...; NULL for a bad value. */
const char	*mmidx_dtype_name(enum mmidx_dtype t);
/* Parse a dtype name; -1 if unknown. */
int		 mmidx_dtype_parse(const char *s);
/* Bytes per element. */
size_t		 mmidx_dtype_size(enum mmidx_dtype t);
int		 mmidx_dtype_is_float(enum mmidx_dtype t);
/* The dtype code of 't' in 'layout', or -1 when that project cannot store it. */
int		 mmidx_dtype_code(enum mmidx_layout layout, enum mmidx_dtype t);
/* The dtype a code means in 'layout', or -1 for an invalid code. */
int		 mmidx_dtype_from_code(enum mmidx_layout layout, unsigned code);
/*
 * The element type upstream picks for a vocabulary of 'vocab' entries
 * (0 = unknown): fairseq uint16 below 65500, uint32 below 2^32 - 1
 * (and when unknown), else int64; Megatron uint16 below 65500, else int32.
 */
enum mmidx_dtype mmidx_dtype_auto(enum mmidx_layout layout, uint64_t vocab);
/* "fairseq", "megatron", "megatron-multimodal". */
const char	*mmidx_layout_name(enum mmidx_layout layout);

/*
 * Load token k of an array of type t starting at p (no alignment
 * needed).  Integer types convert to int64 (uint64 above INT64_MAX
 * wraps, as fairseq's reader does); floats truncate toward zero.
 */
int64_t		 mmidx_load_i64(enum mmidx_dtype t, const uint8_t *p, uint64_t k);
uint64_t	 mmidx_load_u64(const uint8_t *p, uint64_t k);
/* Load n tokens at once into out (as mmidx_load_i64 does one). */
void		 mmidx_load_i64s(enum mmidx_dtype t, const uint8_t *p, uint64_t n,
		    int64_t *out);
double		 mmidx_load_f64(enum mmidx_dtype t, const uint8_t *p, uint64_t k);
float		 mmidx_load_f32(const uint8_t *p, uint64_t k);

/* ---- reading ---- */

struct mmidx;

/*
 * Open PREFIX.idx and PREFIX.bin and map them.  'layout' forces a
 * layout (MMIDX_AUTO detects it; forcing MMIDX_MEGATRON accepts the
 * multimodal form too).  Checks the header, the file size against the
 * layout, the dtype code and the Megatron document index ends; entries
 * are checked as they are used (mmidx_seq) or all at once by
 * mmidx_verify().  Returns NULL on failure with a one-line message
 * naming the file in err (errlen bytes; may be truncated).  An empty
 * .bin is fine.  Close with mmidx_close().
 */
struct mmidx	*mmidx_open(const char *prefix, enum mmidx_layout layout,
		    char *err, size_t errlen);
/*
 * The same over buffers in memory ('idx' and 'bin' are not copied and
 * must outlive the handle; 'name' stands for the prefix in messages).
 */
struct mmidx	*mmidx_open_mem(const void *idx, size_t idxlen, const void *bin,
		    size_t binlen, const char *name, enum mmidx_layout layout,
		    char *err, size_t errlen);
void		 mmidx_close(struct mmidx *m);	/* NULL is fine */

enum mmidx_layout mmidx_layout(const struct mmidx *m);
enum mmidx_dtype mmidx_dtype(const struct mmidx *m);
unsigned	 mmidx_code(const struct mmidx *m);	/* the code on disk */
uint64_t	 mmidx_count(const struct mmidx *m);	/* sequences */
uint64_t	 mmidx_bin_size(const struct mmidx *m);
uint64_t	 mmidx_idx_size(const struct mmidx *m);
const char	*mmidx_bin_path(const struct mmidx *m);
const char	*mmidx_idx_path(const struct mmidx *m);
/* Megatron: entries in document_indices (documents + 1); fairseq: 0. */
uint64_t	 mmidx_doc_count(const struct mmidx *m);
/* Unchecked raw fields, i < count (doc_index: i < doc_count). */
int32_t		 mmidx_raw_size(const struct mmidx *m, uint64_t i);
/* Sizes first .. first + k - 1 (first + k <= count) into out, unchecked. */
void		 mmidx_raw_sizes(const struct mmidx *m, uint64_t first, size_t k,
		    int32_t *out);
int64_t		 mmidx_raw_pointer(const struct mmidx *m, uint64_t i);
int64_t		 mmidx_doc_index(const struct mmidx *m, uint64_t i);
/* Mode of sequence i (multimodal only; 0 otherwise). */
int		 mmidx_mode(const struct mmidx *m, uint64_t i);

/*
 * Sequence i: *p points at its first element in the mapping (unaligned;
 * valid until mmidx_close(); NULL when empty) and *n is its token count.
 * Returns 0, or -1 when i is out of range or the entry does not fit the
 * .bin (message in mmidx_strerror()).
 */
int		 mmidx_seq(struct mmidx *m, uint64_t i, const uint8_t **p,
		    uint64_t *n);
/* Where a sequence lies: as *p and *n of mmidx_seq(). */
struct mmidx_span {
	const uint8_t	*p;
	uint64_t	 n;
};
/*
 * Sequences idx[0] .. idx[k - 1] into out[0] .. out[k - 1], as k calls
 * of mmidx_seq() would give them, and the first token of each
 * prefetched.  Returns k, or the position of the first index that is
 * out of range or whose entry does not fit (its message in
 * mmidx_strerror()); the spans before it are filled.  For random
 * access, call mmidx_prefetch_entries() on the batch some time before.
 */
size_t		 mmidx_seqs(struct mmidx *m, const uint64_t *idx, size_t k,
		    struct mmidx_span *out);
/*
 * The same, but the handle is left alone, so that threads may share
 * it: no message is kept for a bad index (mmidx_seq() on it gives one).
 */
size_t		 mmidx_spans(const struct mmidx *m, const uint64_t *idx, size_t k,
		    struct mmidx_span *out);
/* Start loading the index entries of idx[0] .. idx[k - 1]; no effect on results. */
void		 mmidx_prefetch_entries(const struct mmidx *m, const uint64_t *idx,
		    size_t k);
/*
 * Hints for batched random access: start loading the index entry of
 * sequence i (i < count), or the tokens of sequence i once its entry
 * is at hand.  No effect on results.
 */
void		 mmidx_prefetch_entry(const struct mmidx *m, uint64_t i);
void		 mmidx_prefetch_tokens(const struct mmidx *m, uint64_t i);
/*
 * Every structural check: sizes non-negative, pointers contiguous
 * from 0 and aligned, the .bin exactly as long as the tokens, Megatron
 * document indices 0 .. N non-decreasing.  Returns 0, or -1 naming the
 * first bad entry in mmidx_strerror().
 */
int		 mmidx_verify(struct mmidx *m);
const char	*mmidx_strerror(const struct mmidx *m);
/* The .bin descriptor (for copying); -1 when the .bin is empty. */
int		 mmidx_bin_fd(const struct mmidx *m);

/* ---- index lines ---- */

/*
 * A reader of sequence indices, one per line in decimal: digits, then
 * nothing but spaces and CRs up to the newline (or the end of input).
 * Leading spaces, signs and empty lines are bad, and so is a number
 * above 18446744073709551609.  It is fed blocks of any size, so a line
 * may span blocks and be of any length; memory use stays constant.
 * Zero it with mmidx_lines_init().
 */
#define MMIDX_LINE_HEAD	40
struct mmidx_lines {
	uint64_t	 lineno;	/* lines finished, or the bad one */
	uint64_t	 v;		/* the number so far */
	size_t		 len;		/* bytes of the open line so far */
	size_t		 keep;		/* ... without trailing spaces and CRs */
	int		 state;
	char		 head[MMIDX_LINE_HEAD];	/* its first bytes */
};

void		 mmidx_lines_init(struct mmidx_lines *L);
/*
 * Parse the n bytes at p, going on with the line the last call left
 * open.  Stores the index of each good line in out (room for max) and
 * returns how many; *used is set to the bytes consumed, fewer than n
 * when out filled up or a bad line ended.  After a bad line,
 * mmidx_lines_bad() is nonzero and the parser stays stopped.
 */
size_t		 mmidx_lines_parse(struct mmidx_lines *L, const char *p,
		    size_t n, size_t *used, uint64_t *out, size_t max);
/*
 * End of input: a last line without a newline.  Returns 1 with its
 * index in *v, 0 when no line is open, or -1 when the open line is bad.
 */
int		 mmidx_lines_end(struct mmidx_lines *L, uint64_t *v);
/*
 * After a bad line: its text without trailing spaces and CRs, cut to
 * MMIDX_LINE_HEAD bytes (*text points into L; *len bytes), and its
 * number in L->lineno.  Returns 1, or 0 when no line was bad.
 */
int		 mmidx_lines_bad(const struct mmidx_lines *L, const char **text,
		    size_t *len);

/* ---- writing ---- */

#define MMIDX_WRAP	0x01	/* wrap out-of-range tokens as upstream does */
#define MMIDX_DOC_EACH	0x02	/* Megatron: every sequence ends a document */
/*
 * Only what fairseq-preprocess writes: every sequence ends in </s> (2)
 * and holds no <pad> (1); another is refused with a message that says
 * so (integer dtypes).
 */
#define MMIDX_FAIRSEQ_IDS 0x04

struct mmidx_builder;

/*
 * Start a dataset whose .bin is written to 'binfd' as sequences arrive
 * (the descriptor is not closed).  Returns NULL with a message in err
 * when the layout cannot store the dtype (Megatron uint32/uint64,
 * fairseq float32) or memory runs out.  Free with mmidx_builder_free().
 */
struct mmidx_builder *mmidx_builder_new(int binfd, enum mmidx_layout layout,
		    enum mmidx_dtype t, unsigned flags, char *err, size_t errlen);
void		 mmidx_builder_free(struct mmidx_builder *b);	/* NULL is fine */

/*
 * Add one sequence.  Integer tokens must fit the dtype unless
 * MMIDX_WRAP was given (floats convert).  Returns 0, or -1 with the
 * message in mmidx_builder_strerror() (for a range fault,
 * mmidx_builder_bad_token() gives the position in the sequence).
 */
int		 mmidx_add_i64(struct mmidx_builder *b, const int64_t *v, size_t n);
/*
 * The same for unsigned tokens: a value above INT64_MAX fits uint64
 * (and no other type unless MMIDX_WRAP).
 */
int		 mmidx_add_u64(struct mmidx_builder *b, const uint64_t *v, size_t n);
/*
 * Convert n integer tokens to the dtype of b at 'out' (room for n
 * elements), checked as mmidx_add_i64() checks them.  The builder is
 * only read, so threads may pack for one builder at once.  Returns 0,
 * or -1 with the message mmidx_add_i64() would give in err (errlen
 * bytes) and, for a token that does not fit, its position in *bad.
 */
int		 mmidx_pack_i64(const struct mmidx_builder *b, const int64_t *v,
		    size_t n, uint8_t *out, size_t *bad, char *err, size_t errlen);
/*
 * Add k sequences packed by mmidx_pack_i64() and laid end to end at p,
 * sizes[i] tokens each, as k calls of mmidx_add_i64() would.  Returns
 * 0, or -1 with the message in mmidx_builder_strerror() (then some of
 * them may have been added).
 */
int		 mmidx_add_packed(struct mmidx_builder *b, const uint8_t *p,
		    const uint32_t *sizes, size_t k);
/* After a refusal of mmidx_add_packed(): the sequence at fault (those before it were added). */
size_t		 mmidx_builder_bad_seq(const struct mmidx_builder *b);
/*
 * One sequence in parts, for a sequence too long to hold whole: each
 * part, ntok tokens packed by mmidx_pack_i64(), goes to the .bin with
 * mmidx_add_part(); then mmidx_end_parts() adds the index entry of the
 * ntok tokens all the parts held, so that the whole is what one
 * mmidx_add_packed() of the sequence makes.  Nothing else may be added
 * in between.  Both return 0, or -1 with the message in
 * mmidx_builder_strerror() (a sequence too long for the index is
 * refused only at the end: check the length first).
 */
int		 mmidx_add_part(struct mmidx_builder *b, const uint8_t *p,
		    size_t ntok);
int		 mmidx_end_parts(struct mmidx_builder *b, uint64_t ntok);
int		 mmidx_add_f32(struct mmidx_builder *b, const float *v, size_t n);
int		 mmidx_add_f64(struct mmidx_builder *b, const double *v, size_t n);
/* Multimodal: the mode of the next sequence added (default 0). */
void		 mmidx_set_mode(struct mmidx_builder *b, int mode);
/* Megatron: end the current document (may be empty).  No-op for fairseq. */
int		 mmidx_end_document(struct mmidx_builder *b);
/*
 * Megatron without MMIDX_DOC_EACH: when no document has been ended yet,
 * make every sequence a document, those added so far and later (the
 * default of a record stream that turns out to carry no documents).
 */
void		 mmidx_docs_each_unless_ended(struct mmidx_builder *b);
/* 1 when sequences were added since the last document end. */
int		 mmidx_doc_open(const struct mmidx_builder *b);
/*
 * Append a whole dataset, as upstream's merge does: same dtype and
 * layout family required, the .bin copied, sizes appended, Megatron
 * document indices shifted, modes kept.  The source must be contiguous.
 */
int		 mmidx_append(struct mmidx_builder *b, struct mmidx *src);
/*
 * Flush the .bin and write the whole .idx to 'idxfd' (not closed).
 * Returns 0, or -1 with a message.  The builder is done afterwards.
 */
int		 mmidx_finish(struct mmidx_builder *b, int idxfd);
/*
 * Refuse tokens outside [0, vocab) (a vocabulary of 'vocab' entries;
 * 0: no limit) as tokens that do not fit the dtype are refused, unless
 * MMIDX_WRAP was given.
 */
void		 mmidx_builder_set_vocab(struct mmidx_builder *b, uint64_t vocab);
/*
 * For a builder of dtype int64 whose .bin descriptor is a regular file
 * positioned at the end of the tokens: the smallest and largest token
 * added so far (both 0 when there is none), read back from the file.
 * Returns 0, or -1 with the message in mmidx_builder_strerror().
 */
int		 mmidx_builder_range(struct mmidx_builder *b, int64_t *min,
		    int64_t *max);
/*
 * Store the tokens added so far, and those added later, as 't' instead
 * of int64: the .bin is rewritten in place and truncated (memory stays
 * constant).  The same conditions as mmidx_builder_range(); every token
 * must fit 't', which the layout must be able to store.  Returns 0, or
 * -1 with the message in mmidx_builder_strerror().
 */
int		 mmidx_builder_narrow(struct mmidx_builder *b, enum mmidx_dtype t);
uint64_t	 mmidx_builder_count(const struct mmidx_builder *b);
enum mmidx_dtype mmidx_builder_dtype(const struct mmidx_builder *b);
uint64_t	 mmidx_builder_tokens(const struct mmidx_builder *b);
const char	*mmidx_builder_strerror(const struct mmidx_builder *b);
size_t		 mmidx_builder_bad_token(const struct mmidx_builder *b);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
