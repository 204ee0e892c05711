/*
 * BERT/ELECTRA WordPiece: a vocab.txt loader and FullTokenizer
 * (BasicTokenizer, then WordpieceTokenizer), id for id as
 * google-research/bert tokenization.py and google-research/electra
 * model/tokenization.py give under CPython 3.11 (Unicode 14.0.0).
 *
 * Usage:
 *
 *	char err[WP_ERRMAX];
 *	struct wp_vocab *v = wp_vocab_load("vocab.txt", err, sizeof err);
 *	if (v == NULL)
 *		die("vocab.txt: %s", err);
 *	struct wp_opts o = WP_OPTS_INIT;	// lower, accents follow lower, bert rules
 *	o.lower = 1;				// --lower
 *	struct wp_tok *t = wp_tok_new(v, &o);	// NULL only on ENOMEM
 *	int64_t *ids = NULL; size_t cap = 0;
 *	long n = wp_encode(t, line, linelen, &ids, &cap);
 *	if (n < 0)
 *		die("%s: line %ju: %s", name, lineno, wp_strerror(t));
 *	for (long i = 0; i < n; i++)		// --output-format piece
 *		printf("%s%s", i ? " " : "", wp_piece(v, ids[i], NULL));
 *	free(ids); wp_tok_free(t); wp_vocab_free(v);
 *
 * Nothing here prints or exits.  A tokenizer keeps the message of its
 * last fault (wp_strerror()); loading a vocabulary (there is none yet)
 * and decoding (the vocabulary is read-only) fill err instead, errlen
 * bytes, the message cut to fit.  A vocabulary is read-only once loaded
 * and may be shared by several tokenizers (one per thread); a tokenizer
 * is not thread-safe.
 */
#ifndef RECPIPE_WORDPIECE_H
#define RECPIPE_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define WP_ERRMAX	256	/* an errlen that holds any message of this header */
#define WP_MAX_WORD	200	/* max_input_chars_per_word, in code points */
#define WP_MAX_VOCAB	(1ul << 30)	/* largest vocab file we read, bytes */

struct wp_vocab;
struct wp_tok;

/*
 * Load a BERT vocab.txt: one token per line, id = line number from 0.
 * Lines are read as TensorFlow's file layer reads them (split at "\n"
 * only, every "\r" deleted, a final line without "\n" counts unless
 * it is empty), decoded as strict UTF-8, then stripped at both ends of
 * Python's str.isspace() characters (29 of them; not U+200B or the BOM).
 * An empty line is the token "" with its own id.  A token on several
 * lines keeps its LAST line's id (later lookups and encoding give that
 * id; wp_piece() of the earlier ids still gives the token).
 * Returns NULL and fills err (errlen bytes; no file name in it, e.g.
 * "line 7: invalid UTF-8 at byte offset 1234" or "No such file or
 * directory").  Free with wp_vocab_free().
 */
struct wp_vocab	*wp_vocab_load(const char *path, char *err, size_t errlen);
/* The same from memory (p, n need not outlive the vocab). */
struct wp_vocab	*wp_vocab_parse(const uint8_t *p, size_t n, char *err,
		    size_t errlen);
void		 wp_vocab_free(struct wp_vocab *v);	/* NULL is fine */

/* Number of lines (ids 0 .. size-1). */
size_t		 wp_vocab_size(const struct wp_vocab *v);
/* Id of the token s[0..len), or -1 when absent. */
long		 wp_vocab_id(const struct wp_vocab *v, const char *s, size_t len);

/* Ids of the special tokens, or -1 when the vocab lacks them. */
enum wp_special { WP_UNK, WP_CLS, WP_SEP, WP_PAD, WP_MASK };
long		 wp_special_id(const struct wp_vocab *v, enum wp_special which);

/*
 * Token of an id, NUL-terminated, owned by the vocab (valid until
 * wp_vocab_free()); *len (if not NULL) gets its length.  NULL when the
 * id is out of range.
 */
const char	*wp_piece(const struct wp_vocab *v, int64_t id, size_t *len);

/* Character rules: which tokenization.py the tokenizer imitates. */
enum wp_rules {
	WP_RULES_BERT,		/* control = Cc, Cf (google-research/bert, 2019-) */
	WP_RULES_ELECTRA	/* control = every C* category (ELECTRA; BERT before 2019-03) */
};

struct wp_opts {
	int		lower;		/* Python str.lower() on every basic token */
	/*
	 * Accent stripping (NFD, then drop category Mn): -1 = as lower
	 * (the upstream default: BERT has no switch, ELECTRA defaults to
	 * strip_accents=True); 1 or 0 = explicit.  Under WP_RULES_ELECTRA
	 * an explicit 1 has no effect without lower, as in ELECTRA; under
	 * WP_RULES_BERT it strips even without lower (HuggingFace's
	 * BertTokenizer meaning of strip_accents=True).
	 */
	int		strip_accents;
	enum wp_rules	rules;
	/*
	 * 0: invalid UTF-8 is an error (wp_encode returns -1, see
	 * wp_error_offset()); 1: drop the bytes that do not start a valid
	 * sequence, as tokenization.py's convert_to_unicode() does for
	 * bytes (decode "utf-8", errors="ignore").
	 */
	int		ignore_invalid;
};
#define WP_OPTS_INIT	{ 1, -1, WP_RULES_BERT, 0 }

/*
 * A tokenizer over 'v' (which must outlive it) with a copy of *o.
 * Returns NULL with errno ENOMEM.  Free with wp_tok_free().
 */
struct wp_tok	*wp_tok_new(const struct wp_vocab *v, const struct wp_opts *o);
void		 wp_tok_free(struct wp_tok *t);		/* NULL is fine */

/*
 * FullTokenizer.tokenize() + convert_tokens_to_ids() of the UTF-8 text
 * p[0..n) (one line; "\n" and "\r" inside are whitespace like any
 * other).  Writes the ids to (*ids)[0..], growing *ids (realloc; *cap
 * is its size in elements; *ids may start NULL with *cap 0), and
 * returns how many, 0 for text without tokens.  Returns -1 with errno
 * EILSEQ on invalid UTF-8 (wp_error_offset() gives the byte offset in
 * p), EINVAL when a word needs [UNK] and the vocab has none, or ENOMEM;
 * wp_strerror() says which.  The caller owns *ids.
 */
long		 wp_encode(struct wp_tok *t, const uint8_t *p, size_t n,
		    int64_t **ids, size_t *cap);
/* Message of the last failure, e.g. "invalid UTF-8 at byte offset 17". */
const char	*wp_strerror(const struct wp_tok *t);
/* Byte offset of the last invalid UTF-8 failure in the text given. */
size_t		 wp_error_offset(const struct wp_tok *t);

/*
 * Ids back to text, the usual BERT detokenization: the tokens are
 * joined with one space, except that a token starting with "##" (not
 * the first) is glued to the previous one without its "##"
 * (" ".join(tokens).replace(" ##", "") for tokens without spaces).
 * Special tokens are written like any other ("[CLS] hello [SEP]").
 * Writes to (*out)[0..] growing it like wp_encode(), NUL-terminates it,
 * and returns the length; -1 with err filled for an id out of range
 * ("id 40000 out of range (vocab has 30522 entries)"), or ENOMEM.
 */
long		 wp_decode(const struct wp_vocab *v, const int64_t *ids, size_t n,
		    char **out, size_t *cap, char *err, size_t errlen);

/*
 * Character classes of the basic tokenizer, exposed for tests: BERT's
 * "Chinese character" ranges, and its punctuation (ASCII 33-47, 58-64,
 * 91-96, 123-126, and every P* category).
 */
int		 wp_is_cjk(uint32_t cp);
int		 wp_is_punct(uint32_t cp);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
