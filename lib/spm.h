/*
 * SentencePiece: a loader of ModelProto .model files, the normalizer
 * (precompiled charsmap and whitespace rules), the unigram, BPE, WORD
 * and CHAR encoders and the decoder, id for id and byte for byte as
 * spm_encode and spm_decode 0.1.97 give.
 *
 * Usage:
 *
 *	char err[RP_ERRMAX];				// errmsg.h; any size works
 *	struct spm_model *m = spm_model_load("m.model", 0, err, sizeof err);
 *	if (m == NULL)
 *		die("m.model: %s", err);
 *	struct spm_enc *e = spm_enc_new(m);		// NULL only on ENOMEM
 *	long n = spm_encode(e, line, linelen);		// -1: ENOMEM
 *	const struct spm_tok *t = spm_tokens(e);
 *	for (long i = 0; i < n; i++)
 *		printf("%s%d", i ? " " : "", t[i].id);	// or t[i].s, t[i].len
 *	spm_enc_free(e); spm_model_free(m);
 *
 * Nothing here prints or exits.  An encoder keeps the message of its
 * last fault (spm_strerror()); loading (there is no model yet),
 * spm_parse_extra() and decoding (the model is read-only) fill err
 * instead, errlen bytes, the message cut to fit.  A model is read-only
 * once loaded and may be shared by several encoders (one per thread);
 * an encoder is not thread-safe.
 */
#ifndef RECPIPE_SPM_H
#define RECPIPE_SPM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPM_MAX_MODEL	(1ul << 31)	/* largest model file we read, bytes */
#define SPM_MAX_EXTRA	64		/* most --extra-options items */

struct spm_model;
struct spm_enc;

/* Piece types (ModelProto.SentencePiece.Type). */
enum spm_type {
	SPM_NORMAL = 1, SPM_UNKNOWN, SPM_CONTROL, SPM_USER_DEFINED, SPM_UNUSED,
	SPM_BYTE
};
/* trainer_spec.model_type. */
enum spm_model_type { SPM_UNIGRAM = 1, SPM_BPE, SPM_WORD, SPM_CHAR };

/*
 * Load a .model file (a serialized ModelProto), with 'extra_ids' seqio
 * sentinels appended as seqio's SentencePieceVocabulary(model,
 * extra_ids=N) does (USER_DEFINED pieces "\u2581<extra_id_K>", score 0,
 * K from N-1 down to 0).  Refuses what upstream's Load() refuses (empty
 * or duplicate pieces, no or two unknown pieces, BYTE pieces without
 * byte_fallback or not all 256 of them, a broken charsmap blob, a
 * failing self_test_data sample) and also malformed protobuf, NaN
 * scores, and a charsmap trie that points outside itself.  Returns
 * NULL and fills err (errlen bytes; no file name in it, e.g. "piece 7
 * (\"ab\") is defined twice").  Free with spm_model_free().
 */
struct spm_model *spm_model_load(const char *path, int extra_ids,
		    char *err, size_t errlen);
/* The same from memory (p, n are copied: they need not outlive the model). */
struct spm_model *spm_model_parse(const uint8_t *p, size_t n, int extra_ids,
		    char *err, size_t errlen);
void		 spm_model_free(struct spm_model *m);	/* NULL is fine */

/*
 * What a file that is not a model looks like, for messages: a short
 * name ("a BERT vocab.txt", "a fairseq dict.txt", "a tensor2tensor
 * vocabulary", "a SentencePiece .vocab") or NULL when it is none of them.
 */
const char	*spm_guess_text_vocab(const uint8_t *p, size_t n);
/* 1 when p[0..n) parses as a SentencePiece model with pieces. */
int		 spm_looks_like_model(const uint8_t *p, size_t n);

size_t		 spm_size(const struct spm_model *m);		/* pieces */
enum spm_model_type spm_model_type(const struct spm_model *m);
/* Piece of an id (owned by the model), *len its length; NULL when out of range. */
const char	*spm_piece(const struct spm_model *m, int64_t id, size_t *len);
enum spm_type	 spm_piece_type(const struct spm_model *m, int64_t id);
float		 spm_score(const struct spm_model *m, int64_t id);
/* PieceToId(): a reserved (UNKNOWN, CONTROL, BYTE) piece first, then the others, else the unknown id. */
long		 spm_piece_id(const struct spm_model *m, const char *s, size_t len);
/* The unknown piece's id; bos/eos/pad: the id of trainer_spec's piece if CONTROL, else -1. */
long		 spm_unk_id(const struct spm_model *m);
long		 spm_bos_id(const struct spm_model *m);
long		 spm_eos_id(const struct spm_model *m);
long		 spm_pad_id(const struct spm_model *m);

/*
 * --extra_options "bos:eos:reverse:unk" (spm_encode's): items in order,
 * empty items skipped.  Returns the count written to opts (at most
 * SPM_MAX_EXTRA), or -1 with err filled ("option \"foo\" is not
 * available", "id for `<s>` is not defined").
 */
enum spm_extra { SPM_X_BOS, SPM_X_EOS, SPM_X_REVERSE, SPM_X_UNK };
int		 spm_parse_extra(const struct spm_model *m, const char *s,
		    enum spm_extra opts[SPM_MAX_EXTRA], char *err, size_t errlen);

/* An encoder over 'm' (which must outlive it).  NULL with errno ENOMEM. */
struct spm_enc	*spm_enc_new(const struct spm_model *m);
void		 spm_enc_free(struct spm_enc *e);	/* NULL is fine */
/* Extra options applied after each encoding (copied; n <= SPM_MAX_EXTRA). */
void		 spm_enc_set_extra(struct spm_enc *e, const enum spm_extra *opts,
		    int n);

/*
 * One token of the last spm_encode(): its id and its piece text
 * (s[0..len), not NUL-terminated; a merged unknown run is its
 * normalized text, or the unk piece under the unk option).  Valid until
 * the next call on the encoder.
 */
struct spm_tok {
	const char	*s;
	uint32_t	 len;
	int32_t		 id;
};

/*
 * Encode the line p[0..n) (any bytes; "\n" and "\r" are characters
 * like the others) as SentencePieceProcessor::Encode() with the extra
 * options.  Returns the number of tokens (spm_tokens()), or -1 with
 * errno ENOMEM (or EINVAL: a line upstream would refuse, see
 * spm_strerror()).
 */
/*
 * Special texts: spm_encode() encodes the text between them apart and
 * gives each its id, as Megatron-LM's SentencePieceTokenizer.tokenize()
 * does (the earliest found first; at one place, the first in the
 * list).  The array stays the caller's and must outlive the encoder's
 * use of it; texts are not empty, ids not negative (else -1, EINVAL).
 * Ids may lie past the model's pieces.  n = 0 turns it off.
 */
struct spm_special {
	const char	*s;
	size_t		 len;
	int32_t		 id;
};
#define SPM_MEGATRON_SPECIALS	7
int		 spm_enc_set_specials(struct spm_enc *e,
		    const struct spm_special *sp, size_t n);
/*
 * Megatron-LM's SentencePieceTokenizer specials for the model, in its
 * order: <CLS>, <SEP>, <EOD>, <MASK>, the pad, bos and eos pieces' texts
 * (<PAD>, <BOS>, <EOS> where the model has none); a text that is no
 * piece takes the next id after the model's.  Returns how many (a text
 * given twice is kept once); the texts point into the model.
 */
size_t		 spm_megatron_specials(const struct spm_model *m,
		    struct spm_special out[SPM_MEGATRON_SPECIALS]);
long		 spm_encode(struct spm_enc *e, const uint8_t *p, size_t n);
const struct spm_tok *spm_tokens(const struct spm_enc *e);
const char	*spm_strerror(const struct spm_enc *e);
/*
 * For tests: encode each line whole, as upstream does, instead of word
 * by word through the cache (the results are the same, only slower).
 */
void		 spm_enc_whole_lines(struct spm_enc *e);
/* Unknown tokens among those of the encodings so far (the unknown piece, byte pieces). */
uint64_t	 spm_enc_unknowns(const struct spm_enc *e);

/*
 * The normalizer alone: the normalized text of p[0..n) (with U+2581
 * for spaces when escape_whitespaces), NUL-terminated, valid until the
 * next call on the encoder; *len gets its length.  NULL on ENOMEM.
 */
const char	*spm_normalize(struct spm_enc *e, const uint8_t *p, size_t n,
		    size_t *len);

/*
 * Decode ids (each in [0, size)) or pieces to text as
 * SentencePieceProcessor::Decode() does, into (*out)[0..] (grown with
 * realloc; *cap its size), NUL-terminated; returns the length, or -1
 * with err filled ("Invalid id: 9999") or errno ENOMEM.
 */
long		 spm_decode_ids(const struct spm_model *m, const int32_t *ids,
		    size_t n, char **out, size_t *cap, char *err, size_t errlen);
/* Pieces: pieces[i][0..lens[i]). */
long		 spm_decode_pieces(const struct spm_model *m,
		    const char *const *pieces, const size_t *lens, size_t n,
		    char **out, size_t *cap, char *err, size_t errlen);

/* Lines as spm_encode reads them: sw_lines_next_raw() of subword.h. */

#ifdef __cplusplus
}
#endif

#endif
