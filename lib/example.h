/*
 * tf.train.Example and SequenceExample: a decoder that accepts every
 * form protobuf accepts (packed, unpacked and mixed lists, unknown
 * fields, map entries in any order, duplicate keys with the last
 * winning, merged messages) and an encoder that writes only the
 * canonical form (keys sorted, both entry fields, one packed chunk).
 *
 * A decoded example points into the payload it was decoded from (keys,
 * bytes values) and into its own pools (numbers), so it is valid until
 * the payload changes or the example is decoded again or freed.
 */
#ifndef RECPIPE_EXAMPLE_H
#define RECPIPE_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum ex_kind {
	EX_NONE,	/* a Feature with no kind set */
	EX_BYTES,
	EX_FLOAT,
	EX_INT64
};

enum ex_type {
	EX_TYPE_AUTO,		/* top-level field 2 of wire type 2 => SequenceExample */
	EX_TYPE_EXAMPLE,
	EX_TYPE_SEQUENCE
};

struct ex_bytes {
	const uint8_t	*p;
	size_t		 n;
};

struct ex_feature {
	const uint8_t	*key;	/* not NUL-terminated */
	size_t		 keylen;
	enum ex_kind	 kind;
	size_t		 n;	/* number of values */
	const int64_t	*i64;	/* kind EX_INT64 */
	const float	*f32;	/* kind EX_FLOAT */
	const struct ex_bytes *b; /* kind EX_BYTES */
	/*
	 * Kind EX_INT64 or EX_BYTES left in the record (see lazy_min in
	 * struct example): i64 or b is NULL and the values are read with
	 * ex_int64_open_feature() or ex_bytes_open_feature().  NULL
	 * otherwise.
	 */
	const void	*lazy;
	size_t		 nlazy;
};

/* One feature list of a SequenceExample: a key and its Features. */
struct ex_flist {
	const uint8_t	*key;
	size_t		 keylen;
	size_t		 n;
	struct ex_feature *v;	/* key/keylen unused in these */
};

struct example {
	int		 seq;		/* 1: SequenceExample */
	int		 has_features;	/* Example.features / SequenceExample.context present */
	int		 has_lists;	/* SequenceExample.feature_lists present */
	size_t		 nfeat;		/* features, sorted by key bytes, unique */
	struct ex_feature *feat;
	size_t		 nlists;	/* feature lists, sorted by key, unique */
	struct ex_flist	*lists;
	void		*priv;		/* pools; owned */
	/*
	 * Set by the caller (0 after ex_init(): off): an int64 or bytes
	 * list whose values take more than lazy_min bytes of the record is
	 * checked but not decoded (8 or 16 bytes a value), for records too
	 * large to decode whole; its feature's 'lazy' says where it is.
	 * Such an example is for readers that know it: ex_encode(),
	 * exjson_write() and the counts (n) do; i64 or b is NULL for it.
	 */
	size_t		 lazy_min;
};

/*
 * Decode 'n' bytes at 'p'.  Returns 0, or -1 on malformed input with a
 * message in ex_strerror() ("field 1: length 300 runs past the end at
 * byte 12").  -1 with errno ENOMEM on allocation failure.  The example
 * may be reused for many decodes; free it with ex_free().
 */
int		 ex_decode(struct example *ex, const uint8_t *p, size_t n,
		    enum ex_type type);
const char	*ex_strerror(const struct example *ex);
/*
 * Check that 'p' decodes, exactly as ex_decode() would decide, without
 * storing anything: the fast path of verification.  Returns 0, or -1
 * with a message in ex_strerror(ex).  'ex' is only used for the message.
 */
int		 ex_check(struct example *ex, const uint8_t *p, size_t n,
		    enum ex_type type);
void		 ex_init(struct example *ex);
void		 ex_free(struct example *ex);	/* pools only; ex is reusable after ex_init */

/* The feature named 'name' (of length len), or NULL.  Binary search. */
const struct ex_feature *ex_find(const struct example *ex, const char *name,
		    size_t len);
const struct ex_flist *ex_find_list(const struct example *ex, const char *name,
		    size_t len);
/* Same as ex_find with a NUL-terminated name. */
const struct ex_feature *ex_get(const struct example *ex, const char *name);

/*
 * Encode 'ex' canonically, appending to 'out'.  Features need not be
 * sorted or unique (they are sorted by key; with duplicate keys the
 * last in array order wins).  Returns 0, or -1 with errno set.
 */
int		 ex_encode(const struct example *ex, struct buf *out);

/*
 * A small builder for tools that write Examples: add features by name,
 * then encode.  Values are copied.  Builders are reusable after
 * exb_reset() and freed by exb_free().
 */
struct ex_builder {
	struct example	 ex;
	struct buf	 store;		/* copies of keys and values */
	size_t		 cap;
	size_t		*off;		/* offsets of each feature's data in store */
};
void		 exb_init(struct ex_builder *b);
void		 exb_reset(struct ex_builder *b);
void		 exb_free(struct ex_builder *b);
int		 exb_int64(struct ex_builder *b, const char *name, const int64_t *v, size_t n);
int		 exb_float(struct ex_builder *b, const char *name, const float *v, size_t n);
int		 exb_bytes(struct ex_builder *b, const char *name, const struct ex_bytes *v, size_t n);
/* Encode as an Example (canonical form), appending to out. */
int		 exb_encode(struct ex_builder *b, struct buf *out);

/*
 * The fast path of writing: rows of named int64 lists as Example
 * records, byte for byte what ex_encode() and exb_encode() write for
 * them (keys sorted, both map entry fields, one packed chunk a
 * non-empty list), fast on padded rows of small values.  In two steps,
 * so that the caller can put the bytes where they are to go once their
 * size is known.  An encoder keeps the names of the last row, so rows
 * with the same names (the usual case) cost no allocation.
 */
struct ex_lists;

/* Returns NULL with errno ENOMEM.  Free with ex_lists_free(). */
struct ex_lists	*ex_lists_new(void);
void		 ex_lists_free(struct ex_lists *e);	/* NULL is fine */
/*
 * Encode a row of 'n' lists with distinct NUL-terminated names: values
 * vals[i][0 .. lens[i]), of which those from used[i] on are zero and
 * need not be read ('used' may be NULL: all are read).  Nothing is kept
 * of the arguments.  Returns the size of the record, or SIZE_MAX with
 * errno ENOMEM.
 */
size_t		 ex_encode_int64_lists(struct ex_lists *e, size_t n,
		    const char *const *names, const int64_t *const *vals,
		    const size_t *lens, const size_t *used);
/* Write the record ex_encode_int64_lists() made last at dst (exactly its size). */
void		 ex_lists_put(const struct ex_lists *e, uint8_t *dst);

/*
 * Hot-path helper: find the int64 feature 'name' in the serialized
 * Example 'p' and decode its values into *dst (grown as needed; *cap
 * tracks its size).  Accepts every form ex_decode accepts, with the
 * same last-wins rules.  Returns the number of values, -1 when the
 * feature is absent or not an int64 list (or empty kind), -2 on
 * malformed input, -3 with errno ENOMEM.
 */
long		 ex_int64_values(const uint8_t *p, size_t n, const char *name,
		    int64_t **dst, size_t *cap);

/*
 * The values of one int64 feature a bounded number at a time, for
 * records too large to decode whole (ex_decode() and ex_int64_values()
 * take 8 bytes per value, a record as little as one).  ex_int64_open()
 * checks that the whole Example decodes, as ex_decode() decides, and
 * finds the feature 'name' with the rules of ex_int64_values(): 0 with
 * it->n set to the number of values, -1 when the feature is absent or
 * not an int64 list, -2 on malformed input.  ex_int64_next() stores
 * the next values (up to max) at dst and returns their number, 0 at
 * the end.  The iterator points into p[0..n), which must stay put;
 * it holds no memory of its own.
 */
struct ex_int64_iter {
	const uint8_t	*p[4], *end[4];	/* entry, Feature, Int64List, packed chunk */
	const void	*sp;		/* or the Features, one after another */
	size_t		 nsp;
	uint64_t	 n;		/* the values in all */
	uint64_t	 left;		/* not yet returned */
};
int		 ex_int64_open(struct ex_int64_iter *it, const uint8_t *p,
		    size_t n, const char *name);
/*
 * The same over a feature that ex_decode() left in the record (f->lazy
 * set): the values of f, f->n of them.  Valid while the example is.
 */
void		 ex_int64_open_feature(struct ex_int64_iter *it,
		    const struct ex_feature *f);
size_t		 ex_int64_next(struct ex_int64_iter *it, int64_t *dst, size_t max);

/*
 * The values of a bytes feature that ex_decode() left in the record
 * (f->lazy set, f->kind EX_BYTES), a bounded number at a time:
 * ex_bytes_next() stores the next values (up to max, pointing into the
 * record) at dst and returns their number, 0 at the end.  Valid while
 * the example is.
 */
struct ex_bytes_iter {
	const uint8_t	*p[2], *end[2];	/* Feature, BytesList */
	const void	*sp;		/* the Features still to read */
	size_t		 nsp;
	uint64_t	 n;		/* the values in all */
	uint64_t	 left;		/* not yet returned */
};
void		 ex_bytes_open_feature(struct ex_bytes_iter *it,
		    const struct ex_feature *f);
size_t		 ex_bytes_next(struct ex_bytes_iter *it, struct ex_bytes *dst,
		    size_t max);

/*
 * The fastest path: the int64 feature 'name' of an Example that holds
 * nothing else, in the canonical form (one Features message with one
 * entry, key then value, a Feature holding only an Int64List with at
 * most one packed chunk), checked completely.  Returns the number of
 * values (in *dst as above), or -1 for any other record, which the
 * caller then reads with ex_int64_values() or ex_decode() (they accept
 * every form protobuf accepts and agree with this on what it accepts).
 */
long		 ex_int64_canonical(const uint8_t *p, size_t n, const char *name,
		    size_t namelen, int64_t **dst, size_t *cap);
/*
 * The same for a caller that stores 16-bit tokens: the values go to
 * 'out' as little-endian 16-bit words, whatever the host's byte order
 * (room for n of them, n the record's length, is always enough).  Returns their number, or -1 for
 * a record of another form or when a value is not in 0..65535 (the
 * general readers then say which).
 */
long		 ex_uint16_canonical(const uint8_t *p, size_t n, const char *name,
		    size_t namelen, uint16_t *out);

/*
 * The fast path of readers that take a few named features of each
 * record (the batch loaders).  A record in the canonical form
 * (ex_encode()'s: at most one Features message, then for a
 * SequenceExample at most one FeatureLists message, every map entry a
 * key then a value, keys strictly increasing) is walked once: the
 * entries not wanted are checked as ex_check() checks them, and the
 * wanted ones (want[i].list: in the feature lists, else in the
 * features or context) are only found: out[i] is the value (a Feature
 * or FeatureList message), or p NULL when the record has no such entry.
 * Returns 1, or 0 for a record of any other form or one that does not
 * decode; the caller then reads it with ex_decode(), which accepts
 * every form and says what is wrong.
 */
struct ex_span {
	const uint8_t	*p;
	size_t		 n;
};
struct ex_want {
	const char	*name;
	size_t		 len;
	int		 list;
};
int		 ex_canonical_find(const uint8_t *p, size_t n, int seq,
		    size_t k, const struct ex_want *want, struct ex_span *out);
/*
 * The values of a Feature found so that holds only a FloatList of one
 * packed chunk: their number, with *vals at their little-endian bytes
 * in the record (not aligned); -1 for a Feature of another form.
 */
long		 ex_canonical_floats(struct ex_span f, const uint8_t **vals);
/*
 * The same for an Int64List: at most max values decoded into dst; -1
 * for another form, a bad varint or more than max values.
 */
long		 ex_canonical_int64s(struct ex_span f, int64_t *dst, size_t max);
/*
 * A FeatureList found so whose steps are each a Feature as
 * ex_canonical_floats() takes it, of w > 0 values: every step then has
 * the same bytes before its values.  Returns the number of steps, step
 * s's values at fl.p + s * *stride + *skip; -1 for any other form.
 */
long		 ex_canonical_float_steps(struct ex_span fl, size_t w,
		    size_t *stride, size_t *skip);

/* Varint and wire helpers for modules that walk messages themselves. */
size_t		 pb_varint_size(uint64_t v);
uint8_t		*pb_put_varint(uint8_t *q, uint64_t v);	/* returns the end */

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
