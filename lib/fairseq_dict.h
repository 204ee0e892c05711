/*
 * fairseq dictionaries (fairseq/data/dictionary.py, Dictionary): built
 * from whitespace-tokenized text as fairseq-preprocess builds them,
 * saved and loaded in the dict.txt format, and used to turn text lines
 * into ids as encode_line() does.
 *
 * The rules, as fairseq 3d262bb2 (and every 0.x release since 0.9) has
 * them:
 *
 *  - Text is read as Python reads it in text mode: strict UTF-8 and
 *    universal newlines ("\n", "\r\n" and a lone "\r" all end a line; a
 *    last line without one counts; an empty file has no lines).
 *  - tokenize_line(): a line splits at runs of Python's str.isspace()
 *    characters (29 code points: ASCII \t \n \v \f \r \x1c-\x1f and
 *    space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
 *    U+202F, U+205F, U+3000); empty words never result.
 *  - A new dictionary holds <s> 0, <pad> 1, </s> 2, <unk> 3, count 1
 *    each.  Counting a line adds 1 to each of its words and 1 to </s>;
 *    a special symbol written in the text counts towards that symbol.
 *  - finalize(threshold, nwords, padding_factor): the specials keep ids
 *    0-3; the other symbols are ordered by count, high first, ties by
 *    code point order of the symbol; the first nwords - 4 are kept
 *    (nwords <= 0: all; nwords <= 4: none), stopping at the first
 *    whose count is below threshold.  Then, while the size is not a
 *    multiple of padding_factor (> 1), "madeupword%04d" for 0, 1, ...
 *    is added with count 0, a name the dictionary already holds being
 *    skipped (its number is used up all the same).
 *  - save(): "symbol count\n" for every symbol after the specials.
 *  - load(): each line (universal newlines) is stripped of trailing
 *    whitespace and split at its last space into the symbol and an
 *    integer count; " #fairseq:overwrite" after the count lets a
 *    symbol be given again (later lookups find the later id).  Symbols
 *    are added after the four specials, so a dict.txt of L lines gives
 *    L + 4 ids.
 *  - encode_line(): each word's id, <unk> (3) for a word the
 *    dictionary lacks, then </s> (2).
 *
 * Lookups hash with SipHash (libsodium's crypto_shorthash) under a
 * per-dictionary random key, so input cannot choose collisions; a
 * small cache of recent short words goes first.  Lookups update that
 * cache: a dictionary is used by one thread at a time.  Nothing here
 * prints or exits.  fqd_load() says what is wrong with a dict.txt in err
 * (errlen bytes); the other calls fail only on system errors, -1 or
 * NULL with errno set.
 */
#ifndef RECPIPE_FAIRSEQ_DICT_H
#define RECPIPE_FAIRSEQ_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define FQD_ERRMAX	256	/* an errlen that holds any fqd_load() message */
#define FQD_BOS		0
#define FQD_PAD		1
#define FQD_EOS		2
#define FQD_UNK		3
#define FQD_NSPECIAL	4
#define FQD_MAX_SYMBOLS	(UINT32_MAX - 1u)	/* ids fit 32 bits */

/* ---- text ---- */

/*
 * The next word of p[*pos .. n) as tokenize_line() splits it: returns
 * 1 with the word at *w (*wn bytes) and *pos past it, 0 when only
 * whitespace is left (*pos = n), or -1 when the bytes at *pos are not
 * UTF-8 (errno EILSEQ; *pos is the offset of the bad byte).
 */
int		 fqd_next_word(const uint8_t *p, size_t n, size_t *pos,
		    const uint8_t **w, size_t *wn);

/*
 * Lines of a descriptor with universal newlines.  A line is handed out
 * without its terminator and stays valid until the next call; memory
 * grows with the longest line, not with the input.  Free with
 * fqd_lines_free() (the descriptor is not closed).
 */
struct fqd_lines;
struct fqd_lines *fqd_lines_new(int fd);	/* NULL with errno ENOMEM */
void		 fqd_lines_free(struct fqd_lines *r);	/* NULL is fine */
/*
 * Read only the bytes [off, off + len) of the file (--part): seeks
 * there; fqd_lines_offset() stays a file offset, line numbers count
 * from the range's first line.  Call before the first line.  Returns 0,
 * or -1 with errno set.
 */
int		 fqd_lines_range(struct fqd_lines *r, uint64_t off, uint64_t len);
/* 1 with a line in *p, *n; 0 at the end; -1 on a read error (errno). */
int		 fqd_lines_next(struct fqd_lines *r, const uint8_t **p, size_t *n);
/* Lines handed out so far (the current one's number, from 1). */
uint64_t	 fqd_lines_count(const struct fqd_lines *r);
/* Byte offset in the input of the start of the current line. */
uint64_t	 fqd_lines_offset(const struct fqd_lines *r);

/* ---- dictionaries ---- */

struct fqd;

/*
 * A new dictionary: with 'specials', <s> <pad> </s> <unk> at ids 0-3
 * with count 1 (fairseq's Dictionary()); without, empty (a plain
 * counter of words).  NULL with errno ENOMEM.  Free with fqd_free().
 */
struct fqd	*fqd_new(int specials);
void		 fqd_free(struct fqd *d);	/* NULL is fine */

size_t		 fqd_size(const struct fqd *d);		/* symbols, specials included */
size_t		 fqd_nspecial(const struct fqd *d);	/* 4 or 0 */
/* Symbol 'id' (< size): its bytes (NUL-terminated), its length in *len (may be NULL). */
const char	*fqd_symbol(const struct fqd *d, size_t id, size_t *len);
uint64_t	 fqd_count(const struct fqd *d, size_t id);
/* The id of a symbol, or -1 when the dictionary lacks it. */
long		 fqd_find(struct fqd *d, const void *w, size_t n);
/*
 * Lookups go through a cache of short words once a few thousand have
 * been made; this makes it at once (for tests).  0, or -1 with errno
 * ENOMEM.
 */
int		 fqd_cache_now(struct fqd *d);
/* As encode_line() looks words up: fqd_find(), or FQD_UNK. */
static inline long
fqd_index(struct fqd *d, const void *w, size_t n)
{
	long id = fqd_find(d, w, n);

	return id < 0 ? FQD_UNK : id;
}
/*
 * add_symbol(): add 'count' to the symbol, appending it when new.
 * Returns its id, or -1 with errno ENOMEM (or EOVERFLOW past
 * FQD_MAX_SYMBOLS or a count past UINT64_MAX).
 */
long		 fqd_add(struct fqd *d, const void *w, size_t n, uint64_t count);
/* Add 'count' to symbol 'id' (< size).  -1 with errno EOVERFLOW. */
int		 fqd_bump(struct fqd *d, size_t id, uint64_t count);

/*
 * Count one line as add_file_to_dictionary() does: each word, then
 * </s> (a dictionary without specials gets no </s>).  Returns the
 * number of words, or -1 with errno EILSEQ (*bad = offset of the byte
 * that is not UTF-8), ENOMEM or EOVERFLOW.
 */
long		 fqd_count_line(struct fqd *d, const uint8_t *p, size_t n,
		    size_t *bad);

/*
 * finalize() as above.  Ids after the specials change; pointers from
 * fqd_symbol() stay valid.  Returns 0, or -1 with errno ENOMEM.
 */
int		 fqd_finalize(struct fqd *d, long long threshold,
		    long long nwords, long long padding_factor);

/*
 * Order ids k .. size-1 by count, high first, ties by symbol (the
 * order finalize() keeps), into out[0 .. size-k).  Nothing changes in
 * the dictionary.  Returns 0, or -1 with errno ENOMEM.
 */
int		 fqd_sorted(const struct fqd *d, size_t k, uint32_t *out);

/* save(): append the dict.txt text to *out.  -1 with errno ENOMEM. */
int		 fqd_save(const struct fqd *d, struct buf *out);

/*
 * load(): a dictionary with the specials and the symbols of a dict.txt
 * held in p[0 .. n).  Returns NULL with a message in err (errlen bytes,
 * cut to fit; no file name in it: "line 7: expected 'symbol count
 * [#fairseq:overwrite]'", "line 9: duplicate symbol 'foo' (fairseq needs
 * #fairseq:overwrite)", "line 2: invalid UTF-8 at byte offset 3", or
 * strerror(ENOMEM)).
 */
struct fqd	*fqd_load(const uint8_t *p, size_t n, char *err, size_t errlen);

/*
 * encode_line(): the ids of the words of a line, then FQD_EOS, into
 * (*ids)[0 ..] (grown with realloc as needed; *cap its size in
 * elements, *ids may be NULL with *cap 0).  *nunk gets the number of
 * words that became <unk> without being "<unk>" (fairseq's
 * "replaced").  Returns the number of ids (at least 1), or -1 with
 * errno EILSEQ (*bad as for fqd_count_line()) or ENOMEM.
 */
long		 fqd_encode_line(struct fqd *d, const uint8_t *p, size_t n,
		    uint32_t **ids, size_t *cap, size_t *nunk, size_t *bad);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
