/*
 * Byte-level BPE as GPT-2's encoder.py and tiktoken encode: rank
 * tables from GPT-2's encoder.json + vocab.bpe or from tiktoken's
 * NAME.tiktoken files, the encodings' special tokens, the merge (the
 * adjacent pair whose concatenation has the lowest rank, leftmost on
 * ties), a bounded cache of encoded pieces, and decoding to bytes.
 *
 *	char err[RP_ERRMAX];			// errmsg.h; any size works
 *	struct bpe_model *m = bpe_load_tiktoken("cl100k_base.tiktoken",
 *	    BPE_CL100K, err, sizeof err);	// or bpe_load_gpt2()
 *	struct bpe_enc *e = bpe_enc_new(m);
 *	long k = bpe_encode(e, line, len);	// line: valid UTF-8
 *	const uint32_t *ids = bpe_ids(e);
 *
 * Nothing here prints or exits.  A loader that fails returns NULL with
 * a one-line message in err (errlen bytes, cut to fit; no file name in
 * it).  A model is read-only once loaded and may be shared by several
 * encoders (one per thread); an encoder is not thread-safe.
 */
#ifndef RECPIPE_BPE_H
#define RECPIPE_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "pretok.h"

#define BPE_MAX_FILE	(1ul << 30)	/* largest rank or merges file, bytes */

/* tiktoken's encodings (tiktoken_ext/openai_public.py). */
enum bpe_encoding {
	BPE_GPT2, BPE_R50K, BPE_P50K, BPE_P50K_EDIT, BPE_CL100K, BPE_O200K
};
/* "cl100k_base" -> BPE_CL100K; -1 for an unknown name. */
int		 bpe_encoding_by_name(const char *name);
const char	*bpe_encoding_name(enum bpe_encoding enc);
enum pretok_pat	 bpe_encoding_pattern(enum bpe_encoding enc);

struct bpe_model;
struct bpe_enc;

/*
 * GPT-2's files: the ranks as tiktoken's data_gym_to_mergeable_bpe_ranks
 * makes them from vocab.bpe (the 256 bytes, then one rank per merge
 * line), which must equal encoder.json's ids (as tiktoken asserts); the
 * gpt2 pattern; <|endoftext|> from encoder.json.
 */
struct bpe_model *bpe_load_gpt2(const char *encoder_json,
		    const char *vocab_bpe, char *err, size_t errlen);
struct bpe_model *bpe_parse_gpt2(const uint8_t *json, size_t jn,
		    const uint8_t *merges, size_t mn, char *err, size_t errlen);
/* tiktoken's format ("base64 rank" lines) with the pattern and specials of 'enc'. */
struct bpe_model *bpe_load_tiktoken(const char *path, enum bpe_encoding enc,
		    char *err, size_t errlen);
struct bpe_model *bpe_parse_tiktoken(const uint8_t *p, size_t n,
		    enum bpe_encoding enc, char *err, size_t errlen);
void		 bpe_model_free(struct bpe_model *m);	/* NULL is fine */

/* One past the largest id (ranks and special tokens). */
size_t		 bpe_size(const struct bpe_model *m);
/* The id of <|endoftext|>. */
uint32_t	 bpe_eot_id(const struct bpe_model *m);
/* The bytes of an id (a rank or a special token); NULL when it has none. */
const uint8_t	*bpe_token(const struct bpe_model *m, int64_t id, size_t *len);
/*
 * The piece of an id as encoder.json spells it (bytes through GPT-2's
 * bytes_to_unicode, special tokens as they are), NUL-terminated, owned
 * by the model; NULL when the id has none.
 */
const char	*bpe_piece(const struct bpe_model *m, int64_t id, size_t *len);

/*
 * Append the bytes of ids[0..n) to 'out' (tiktoken's decode_bytes:
 * special tokens as their text).  Returns 0; or -1 with errno EINVAL
 * and *bad the index of the first id that is neither a rank nor a
 * special token, or ENOMEM.
 */
struct buf;
int		 bpe_decode(const struct bpe_model *m, const int64_t *ids,
		    size_t n, struct buf *out, size_t *bad);

/* An encoder over 'm' (which must outlive it).  NULL with errno ENOMEM. */
struct bpe_enc	*bpe_enc_new(const struct bpe_model *m);
void		 bpe_enc_free(struct bpe_enc *e);	/* NULL is fine */
/* Special-token texts become their ids (tiktoken's allowed_special="all"). */
void		 bpe_enc_allow_special(struct bpe_enc *e, int all);
/* For tests: no cache (the ids are the same, only slower). */
void		 bpe_enc_no_cache(struct bpe_enc *e);

/*
 * Encode p[0..n) (valid UTF-8: the caller checks) as tiktoken's
 * encode_ordinary(), or encode(..., allowed_special="all").  Returns
 * the number of ids (bpe_ids()), or -1 with errno ENOMEM.
 */
long		 bpe_encode(struct bpe_enc *e, const uint8_t *p, size_t n);
const uint32_t	*bpe_ids(const struct bpe_enc *e);

#endif
