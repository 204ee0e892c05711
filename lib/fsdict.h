/*
 * A fairseq dict.txt, read only to look words up (language tokens such
 * as "__eng_Latn__").  Ids are fairseq's: 0 <s>, 1 <pad>, 2 </s>,
 * 3 <unk>, then line i of the file (from 0) is id i + 4.
 *
 * Each line is "WORD COUNT" or "WORD COUNT #fairseq:overwrite", split
 * at the last space after trailing white space is removed, as fairseq's
 * Dictionary.add_from_file() does: a word may hold spaces, COUNT is a
 * decimal integer.  A word seen before (the four specials included) is
 * an error unless its line carries the overwrite flag; then the word
 * names its new id.  Nothing here prints or exits.
 */
#ifndef RECPIPE_FSDICT_H
#define RECPIPE_FSDICT_H

#include <stddef.h>
#include <stdint.h>

struct fsdict;

/*
 * Load the dictionary at 'path'.  Returns NULL on failure with a
 * one-line message naming the file (and line) in err (errlen bytes).
 * Free with fsdict_free().
 */
struct fsdict	*fsdict_load(const char *path, char *err, size_t errlen);
/* The same over n bytes at p ('name' stands for the file in messages); p is copied. */
struct fsdict	*fsdict_load_mem(const void *p, size_t n, const char *name,
		    char *err, size_t errlen);
void		 fsdict_free(struct fsdict *d);	/* NULL is fine */

/* The id of 'word' (len bytes), or -1 when it is not in the dictionary. */
int64_t		 fsdict_lookup(const struct fsdict *d, const char *word, size_t len);
/* Symbols, the four specials included (the file's lines + 4). */
uint64_t	 fsdict_size(const struct fsdict *d);

#endif
