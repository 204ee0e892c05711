/*
 * tensor2tensor's SubwordTextEncoder, byte for byte: TensorFlow's line
 * reading, Python's strip(), the tokenizer, escaping, vocabulary files,
 * greedy encoding, decoding, corpus sampling with a byte budget, token
 * counts and the vocabulary build with its bisection.
 *
 * All text is UTF-8; lengths are in bytes unless a name says "cp".
 * Nothing here prints or exits.  Where bad data can make a call fail,
 * the object it worked on keeps a one-line message (sw_lines_strerror(),
 * sw_vocab_strerror()), or, for the parsers sw_vocab_parse(),
 * sw_vocab_load() and sw_counts_read(), the message goes to err (errlen
 * bytes, cut to fit; 200 always hold it).  Other failures are system
 * errors, -1 or NULL with errno set.
 */
#ifndef RECPIPE_SUBWORD_H
#define RECPIPE_SUBWORD_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Python's str.strip() / str.rstrip() on valid UTF-8: adjust *p, *n. */
void		 sw_strip(const uint8_t **p, size_t *n);
void		 sw_rstrip(const uint8_t *p, size_t *n);
/* Code points in valid UTF-8. */
size_t		 sw_cplen(const uint8_t *p, size_t n);

/*
 * Lines as TensorFlow's file layer gives them: split at '\n' only,
 * every '\r' deleted, a last chunk without '\n' is a line unless it is
 * empty after the deletion.  Each line is checked to be UTF-8.
 */
struct sw_lines;
/* Read 'fd' (not closed).  NULL with errno on allocation failure.  Free with sw_lines_free(). */
struct sw_lines	*sw_lines_open(int fd);
/* Lines of p[0..n), which must outlive the reader (not freed by it). */
struct sw_lines	*sw_lines_open_mem(const uint8_t *p, size_t n);
/* Lines of the malloc()ed p[0..n), which the reader owns from now on (even on failure). */
struct sw_lines	*sw_lines_open_buf(uint8_t *p, size_t n);
void		 sw_lines_free(struct sw_lines *r);	/* NULL is fine */
/*
 * Read only the bytes [off, off + len) of the file on a reader from
 * sw_lines_open() (--part): seeks there; offsets in errors stay file
 * offsets, line numbers count from the range's first line.  Call
 * before the first line.  Returns 0, or -1 with errno set.
 */
int		 sw_lines_range(struct sw_lines *r, uint64_t off, uint64_t len);
/*
 * Next line without its '\n' (*nl says whether it had one).  *p is
 * valid until the next call.  Returns 1, 0 at the end, -1 on a read
 * error (errno set), -2 on invalid UTF-8: then sw_lines_strerror() says
 * "line 3: invalid UTF-8 at byte offset 17", with the line (1-based)
 * from sw_lines_error_line() and the file offset of the first bad byte
 * from sw_lines_error_offset().
 */
int		 sw_lines_next(struct sw_lines *r, const uint8_t **p, size_t *n,
		    int *nl);
const char	*sw_lines_strerror(const struct sw_lines *r);
uint64_t	 sw_lines_error_line(const struct sw_lines *r);
uint64_t	 sw_lines_error_offset(const struct sw_lines *r);
/*
 * The same, lines as spm_encode reads them: split at '\n' only, nothing
 * deleted or checked; a last chunk without '\n' is a line unless it is
 * empty.  Returns 1, 0 at the end, -1 on a read error (errno set).
 */
int		 sw_lines_next_raw(struct sw_lines *r, const uint8_t **p, size_t *n);
/* Lines returned so far (the 1-based number of the last one). */
uint64_t	 sw_lines_lineno(const struct sw_lines *r);

/*
 * The tokenizer: maximal runs of alphanumeric (L*, N*) and other code
 * points; a token that is exactly " " is dropped unless it starts the
 * text or ends it.  Spans are (offset, length) pairs in bytes.
 */
struct sw_span {
	uint32_t	 off;
	uint32_t	 len;
};
/*
 * Tokenize valid UTF-8 p[0..n) (n < 2^32) into (*spans)[0..] (grown as
 * needed, *cap its size).  Returns the number of tokens, or -1 with
 * errno ENOMEM.
 */
long		 sw_tokenize(const uint8_t *p, size_t n, struct sw_span **spans,
		    size_t *cap);

/*
 * A vocabulary: ids are line numbers of the vocab file (0-based).
 */
struct sw_vocab;
/*
 * Parse a vocab file's bytes as tensor2tensor loads it (each line
 * rstrip()ped, one pair of quotes removed, empty lines keep their ids,
 * the last of duplicate entries wins).  Returns NULL with a message in
 * err ("line 2: invalid UTF-8 at byte offset 9", "empty vocabulary");
 * errno ENOMEM on allocation failure.  Free with sw_vocab_free().
 */
struct sw_vocab	*sw_vocab_parse(const uint8_t *p, size_t n, char *err,
		    size_t errlen);
/* Read all of 'fd' (not closed) and parse it. */
struct sw_vocab	*sw_vocab_load(int fd, char *err, size_t errlen);
/*
 * A vocabulary from a list of entries (escaped strings, valid UTF-8),
 * copied.  Returns NULL with errno ENOMEM (or EINVAL for an empty list).
 */
struct sw_vocab	*sw_vocab_from_list(const uint8_t *const *ent, const size_t *len,
		    size_t n);
void		 sw_vocab_free(struct sw_vocab *v);	/* NULL is fine */
/*
 * A handle on v's tables for another thread: encoding through it uses
 * scratch of its own, so that threads encode with one vocabulary at
 * once.  v must outlive it; free it with sw_vocab_free() (which frees
 * only the handle).  NULL with errno ENOMEM.
 */
struct sw_vocab	*sw_vocab_share(const struct sw_vocab *v);
size_t		 sw_vocab_size(const struct sw_vocab *v);
/* Entry 'id' (escaped, as in the file), or NULL when out of range. */
const uint8_t	*sw_vocab_entry(const struct sw_vocab *v, int64_t id, size_t *len);
/* Append the vocab file tensor2tensor writes: 'entry' and '\n' per id. */
int		 sw_vocab_store(const struct sw_vocab *v, struct buf *out);

/*
 * Encode valid UTF-8 text (not stripped here) into ids appended to
 * (*ids)[*n..] (grown as needed; *cap its size).  Returns 0, -1 with
 * errno EINVAL when the vocabulary cannot spell a token (a corrupt
 * vocab), -1 with errno ENOMEM; sw_vocab_strerror() of the handle
 * then says which.  Escapes tokens in the vocabulary's scratch buffer,
 * so a vocab must not be used by two threads at once (each thread
 * takes a sw_vocab_share() of it).
 */
int		 sw_encode(struct sw_vocab *v, const uint8_t *p, size_t n,
		    int32_t **ids, size_t *nids, size_t *cap);
const char	*sw_vocab_strerror(const struct sw_vocab *v);
/*
 * The characters sw_encode() has escaped as \NNN; through this handle
 * (outside the vocabulary's alphabet: T2T's stand-in for an unknown
 * character), a running count; a share starts at 0.
 */
uint64_t	 sw_encode_escapes(const struct sw_vocab *v);
/*
 * Decode ids to text appended to *out (tensor2tensor's decode(); with
 * strip_extraneous, trailing ids 0 and 1 are dropped first).  Ids out
 * of range decode to nothing.  Returns 0 or -1 with errno ENOMEM.
 */
int		 sw_decode(const struct sw_vocab *v, const int64_t *ids, size_t n,
		    int strip_extraneous, struct buf *out);

/*
 * sw_decode() in parts, for id lists too long to hold at once: zero a
 * struct sw_decoder, give it the ids in order with sw_decode_part()
 * (each call appends to *out the text that is final so far), then call
 * sw_decode_end(), which appends the rest and frees what the decoder
 * holds.  Over all the calls *out gets what one sw_decode() of the
 * whole list gives.  The decoder holds the subtokens of one token (up
 * to the next '_'), but of a token longer than 'hold' bytes (0: 1 MiB)
 * it writes what is final (all but an escape that may still go on), so
 * that it holds about 'hold' bytes, or an unended escape; and, with
 * strip_extraneous, a bit for each 0 or 1 id that may be trailing.
 * Both return 0, or -1 with errno ENOMEM (then sw_decode_end() still
 * frees the decoder).
 */
struct sw_decoder {
	struct buf	 cat;		/* subtokens after the last '_' */
	struct buf	 tok;		/* scratch */
	struct buf	 held;		/* ids 0 and 1 held back, a bit each */
	uint64_t	 nheld;
	int		 prev;		/* the last token began alphanumeric */
	int		 open;		/* cat continues a token partly written */
	size_t		 scanned;	/* cat[0 .. scanned) holds no '_' */
	size_t		 tried;		/* cat's length when last cut */
	size_t		 hold;
};
int		 sw_decode_part(const struct sw_vocab *v, struct sw_decoder *d,
		    const int64_t *ids, size_t n, int strip_extraneous,
		    struct buf *out);
int		 sw_decode_end(const struct sw_vocab *v, struct sw_decoder *d,
		    struct buf *out);

/* Escaping with a vocabulary's alphabet, and unescaping (appends to *out). */
int		 sw_escape(const struct sw_vocab *v, const uint8_t *p, size_t n,
		    struct buf *out);
int		 sw_unescape(const uint8_t *p, size_t n, struct buf *out);

/*
 * generate_lines_for_vocab's per-file sampling.  Per line: call
 * sw_sample_next(); on 1 take the line, strip it and call
 * sw_sample_charge() with its length in code points.
 */
struct sw_sampler {
	double		 budget;
	uint64_t	 every;
	uint64_t	 skipped;
};
void		 sw_sample_init(struct sw_sampler *s, double budget, uint64_t file_size);
/* 0: skip this line, 1: take it, -1: stop reading this file. */
int		 sw_sample_next(struct sw_sampler *s);
void		 sw_sample_charge(struct sw_sampler *s, size_t cps);

/*
 * Token counts: token -> occurrences, merged by summing.
 */
struct sw_counts;
struct sw_counts *sw_counts_new(void);		/* NULL with errno (ENOMEM, ENOSYS) */
void		 sw_counts_free(struct sw_counts *c);	/* NULL is fine */
/* Tokenize a (stripped, valid UTF-8) line and count its tokens.  0 or -1 (ENOMEM). */
int		 sw_counts_add_text(struct sw_counts *c, const uint8_t *p, size_t n);
/* Add 'count' occurrences of a token.  0 or -1 (ENOMEM, or EOVERFLOW). */
int		 sw_counts_add(struct sw_counts *c, const uint8_t *tok, size_t n,
		    int64_t count);
size_t		 sw_counts_size(const struct sw_counts *c);	/* distinct tokens */
/*
 * Free what only adding needs (the lookup table), keeping the tokens and
 * their counts, before a build; adding again rebuilds it.
 */
void		 sw_counts_compact(struct sw_counts *c);
/*
 * The count file: a first line "#subword-counts 1", then one line per
 * token sorted by its bytes: decimal count, a tab, the token with '\\'
 * written "\\\\", tab "\\t", newline "\\n" and carriage return "\\r".
 * sw_counts_write appends it to *out; sw_counts_read parses one and adds
 * its counts (so reading several files merges them).  Returns 0, or -1
 * with a message in err ("line 2: count too large"; errno ENOMEM on
 * allocation failure).
 */
int		 sw_counts_write(const struct sw_counts *c, struct buf *out);
int		 sw_counts_read(struct sw_counts *c, const uint8_t *p, size_t n,
		    char *err, size_t errlen);
/*
 * sw_counts_read() of n files p[i] (len[i] bytes) into c, one after the
 * other, with the files read side by side in up to 'jobs' threads and
 * merged in order: the same counts in the same order.  File i's fault
 * has its message at err + i * errlen and its errno in eno[i] (0: none).
 * Returns the first file where memory ran out (eno ENOMEM; later files
 * may not be read), or n.
 */
size_t		 sw_counts_read_files(struct sw_counts *c, const uint8_t *const *p,
		    const size_t *len, size_t n, int jobs, char *err,
		    size_t errlen, int *eno);

/*
 * Vocabulary build: build_from_token_counts (one build at min_count)
 * and build_to_target_size (bisection over min_count in [1, 1000]).
 */
struct sw_build_opts {
	int		 iterations;	/* 4 by default */
	long		 max_subtoken_len; /* tensor2tensor's; 0 = none */
	const char *const *reserved;	/* extra reserved tokens after <pad>, <EOS> */
	size_t		 nreserved;
	int		 jobs;		/* threads (0 or 1: this one) */
	/* Called after each build of a bisection (may be NULL). */
	void		(*probe)(void *arg, int64_t min_count, size_t size);
	void		*probe_arg;
};
void		 sw_build_opts_init(struct sw_build_opts *o);
/*
 * Build with one min_count, or by bisection towards 'target' entries.
 * Return a new vocabulary, or NULL with errno (ENOMEM, EINVAL for bad
 * reserved tokens, E2BIG for a corpus beyond the 4 GiB of escaped
 * tokens this build indexes).
 */
struct sw_vocab	*sw_build(const struct sw_counts *c, int64_t min_count,
		    const struct sw_build_opts *o);
struct sw_vocab	*sw_build_to_target(const struct sw_counts *c, size_t target,
		    const struct sw_build_opts *o);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
