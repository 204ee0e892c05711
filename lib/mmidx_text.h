/*
 * Tokens of the .bin/.idx datasets as text, both ways: the lines that
 * mmap-index cat and get write (integers in decimal, floats as
 * Python's repr() writes them, plain or as JSON), the sequence indices
 * get reads, the lines of ids build reads, and the Python number
 * format fairseq-preprocess reports its share of <unk> in.  Internal to the library and the
 * tools (not installed).  Nothing here prints or exits.
 */
#ifndef RECPIPE_MMIDX_TEXT_H
#define RECPIPE_MMIDX_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exjson.h"
#include "mmidx.h"

/* ---- tokens out ---- */

/*
 * A sequence as a line of text: its tokens in decimal (a float as
 * Python's repr() writes it), separated by spaces, or as JSON,
 * {"FEATURE":[t1,t2,...]} with ,"mode":M before the '}' for a
 * multimodal sequence.  Set up with mmidx_text_init(); read-only
 * afterwards, so threads may share it.  A line is written in three
 * parts: x->head (head bytes; empty without JSON), mmidx_text_put() in
 * pieces, each token followed by sep (the last sep is taken back), and
 * mmidx_text_end().
 */
struct mmidx_text {
	enum mmidx_dtype t;
	int		 json;
	char		 sep;		/* ',' or ' ' */
	char		*head;		/* {"FEATURE":[ */
	size_t		 headlen;
	uint64_t	*table;		/* the texts of 0 .. 65535, or NULL */
};

/* Bytes mmidx_text_put() may write per token (integer, float dtypes). */
#define MMIDX_TEXT_ROOM_INT	24
#define MMIDX_TEXT_ROOM_FLOAT	40
/* Bytes mmidx_text_end() may write. */
#define MMIDX_TEXT_END		32

/*
 * Lines of tokens of dtype t, as JSON with the tokens under 'feature'
 * when 'json' (the key written by exjson_put_name(): U+FFFD for each
 * sequence that is not UTF-8, as recpipe(5) has it).  Returns 0, or -1
 * with errno ENOMEM.  Free with mmidx_text_free().
 */
int		 mmidx_text_init(struct mmidx_text *x, enum mmidx_dtype t,
		    int json, const char *feature);
/*
 * For runs that write many tokens: keep the text of every uint8 and
 * uint16 value, so that each costs one load and one store (a no-op
 * for the other dtypes).  Returns 0, or -1 with errno ENOMEM.
 */
int		 mmidx_text_table(struct mmidx_text *x);
void		 mmidx_text_free(struct mmidx_text *x);
/* The most bytes mmidx_text_put() writes per token: one of the ROOMs above. */
size_t		 mmidx_text_room(const struct mmidx_text *x);
/*
 * Tokens k0 .. k1 - 1 of the array at p (of x's dtype, unaligned),
 * each followed by sep, at q, which has room for mmidx_text_room()
 * bytes per token.  Returns the end of the text.
 */
char		*mmidx_text_put(const struct mmidx_text *x, char *q,
		    const uint8_t *p, uint64_t k0, uint64_t k1);

/*
 * The end of a line (after the last sep was taken back) at q, which
 * has room for MMIDX_TEXT_END bytes: for JSON the ']', the mode when
 * 'has_mode' and the '}'; then the newline.  Returns the end.
 */
static inline char *
mmidx_text_end(const struct mmidx_text *x, char *q, int has_mode, int mode)
{
	if (x->json) {
		*q++ = ']';
		if (has_mode) {
			memcpy(q, ",\"mode\":", 8);
			q = exjson_format_i64(mode, q + 8);
		}
		*q++ = '}';
	}
	*q++ = '\n';
	return q;
}

/*
 * A float as Python's repr() writes it: the shortest digits that read
 * back as the same value (the same float32 when f32), positional for
 * exponents -4 .. 15, else d.ddde+XX; always a '.' or an exponent;
 * NaN, Infinity and -Infinity as JSON writers spell them.  At most 32
 * bytes at q, no NUL; returns the end.
 */
char		*mmidx_text_float(char *q, double d, int f32);

/*
 * Python's format(x, '.3'), in which fairseq gives its share of <unk>:
 * three significant digits, at least one after the point, the exponent
 * form below 1e-4 and from 100 up ("1e+02").  NUL-terminated into out
 * (sz bytes; 16 are enough for any value).
 */
void		 mmidx_text_py3(char *out, size_t sz, double x);

/* ---- indices and ids in ---- */

/*
 * A sequence index: s[0 .. len) all decimal digits, at most
 * 18446744073709551609 (as mmidx_lines reads them).  Returns 0 with *v
 * set, or -1.
 */
int		 mmidx_parse_index(const char *s, size_t len, uint64_t *v);

/*
 * The token ids of one text line, separated by spaces, tabs and CRs,
 * read for a dataset of dtype t: floats for a float dtype (into d),
 * integers else (into v; for uint64 an id above INT64_MAX is read as
 * unsigned).  Zero it with mmidx_ids_init(), free with mmidx_ids_free().
 */
struct mmidx_ids {
	enum mmidx_dtype t;
	int64_t		*v;
	double		*d;
	size_t		 cap, dcap;	/* elements of v, d */
	int		 neg;		/* the last line has a negative id */
};

void		 mmidx_ids_init(struct mmidx_ids *x, enum mmidx_dtype t);
void		 mmidx_ids_free(struct mmidx_ids *x);
/*
 * Parse the line s[0 .. len) (s[len] must be writable: it becomes a
 * NUL).  Returns the number of ids, or -1 with errno ENOMEM, or with
 * errno EINVAL and the fault in err (errlen bytes): "token 99999 does
 * not fit uint16" (an integer outside int64, or uint64), "bad token id
 * 'x1'", "bad number 'x'" (the text cut to 40 bytes).
 */
long		 mmidx_ids_parse(struct mmidx_ids *x, char *s, size_t len,
		    char *err, size_t errlen);
/*
 * Add the n ids of the line just parsed to b as one sequence
 * (mmidx_add_f64(), mmidx_add_u64() or mmidx_add_i64()).  Returns 0,
 * or -1 with the message in mmidx_builder_strerror().
 */
int		 mmidx_ids_add(const struct mmidx_ids *x, struct mmidx_builder *b,
		    size_t n);

#endif
