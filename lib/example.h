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
#include <string.h>

#include "buf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/*
 * Varints and length-delimited fields, for every module that reads or
 * writes protobuf: inline, since the writers and readers call them
 * once a value or field.
 */

/* The bytes of v as a varint (1 to 10). */
static inline size_t
ex_varint_size(uint64_t v)
{
	return v < 0x80 ? 1 : (size_t)(70 - __builtin_clzll(v)) / 7;
}

/* Write v as a varint at q; returns the end. */
static inline uint8_t *
ex_put_varint(uint8_t *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	return q;
}

/*
 * Read a varint at *pp (before end) into *v and move *pp past it.
 * Returns 0, or -1 when it runs past the end or is longer than 10
 * bytes (bits past the 64th are dropped, as protobuf drops them).
 */
static inline int
ex_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	int shift;

	if (p < end && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	if (end - p >= 2 && p[1] < 0x80) {	/* lengths of 128 .. 16383 */
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pp = p + 2;
		return 0;
	}
	for (shift = 0; shift < 70 && p < end; shift += 7) {
		x |= (uint64_t)(*p & 0x7f) << shift;
		if (*p++ < 0x80) {
			*v = x;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/*
 * The value of a varint of at most four bytes, s its bytes in the low
 * bits (little-endian, nothing above them): the packed readers' way of
 * taking 7-bit groups without a loop.
 */
static inline uint64_t
ex_varint4(uint64_t s)
{
	return (s & 0x7f) | ((s >> 1) & 0x3f80) | ((s >> 2) & 0x1fc000) |
	    ((s >> 3) & 0xfe00000);
}

/*
 * Read the length-delimited field of tag byte 'tag' at *pp (before
 * end): its body at *body, *len bytes, and *pp past it.  Returns 0, or
 * -1 for another tag, a bad length or a body past the end.
 */
static inline int
ex_get_ld(const uint8_t **pp, const uint8_t *end, uint8_t tag,
    const uint8_t **body, size_t *len)
{
	const uint8_t *p = *pp;
	uint64_t l;

	if (p >= end || *p++ != tag || ex_get_varint(&p, end, &l) == -1 ||
	    l > (uint64_t)(end - p))
		return -1;
	*body = p;
	*len = (size_t)l;
	*pp = p + l;
	return 0;
}

/* The bytes of a length-delimited field with a body of len bytes. */
static inline size_t
ex_ld_size(size_t len)
{
	return 1 + ex_varint_size(len) + len;
}

/* Write the tag and length of a length-delimited field; returns the body's place. */
static inline uint8_t *
ex_put_ld(uint8_t *q, uint8_t tag, size_t len)
{
	*q++ = tag;
	return ex_put_varint(q, len);
}

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

struct ex_span {
	const uint8_t	*p;
	size_t		 n;
};
struct ex_want {
	const char	*name;
	size_t		 len;
	int		 list;
};

/*
 * Is [p, p + n) a whole number of varints of at most 10 bytes each?
 * Eight bytes at a time: the terminator bits (high bit clear) of a
 * word bound every run of continuation bytes.
 */
static inline int
ex_varints_ok(const uint8_t *p, size_t n)
{
	const uint8_t *q = p, *end = p + n;
	uint64_t w, m;
	unsigned run = 0, first, last;

	for (; end - q >= 8; q += 8) {
		memcpy(&w, q, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		m = ~w & 0x8080808080808080ull;
		if (m == 0) {
			if ((run += 8) >= 10)
				return 0;
			continue;
		}
		first = (unsigned)__builtin_ctzll(m) >> 3;
		if (run + first >= 10)
			return 0;
		last = (63u - (unsigned)__builtin_clzll(m)) >> 3;
		run = 7 - last;
	}
	for (; q < end; q++) {
		if (*q & 0x80) {
			if (++run == 10)
				return 0;
		} else
			run = 0;
	}
	return run == 0;
}

/* a[0..n) == b[0..n), a word at a time where n allows. */
static inline int
ex_same_key(const uint8_t *a, const char *b, size_t n)
{
	uint64_t x, y, diff = 0;
	size_t i;

	if (n < 8) {
		uint32_t u, v;
		uint16_t s, t;

		if (n >= 4) {	/* two loads that overlap */
			memcpy(&u, a, 4);
			memcpy(&v, b, 4);
			diff = u ^ v;
			memcpy(&u, a + n - 4, 4);
			memcpy(&v, b + n - 4, 4);
			return (diff | (u ^ v)) == 0;
		}
		if (n >= 2) {
			memcpy(&s, a, 2);
			memcpy(&t, b, 2);
			diff = (uint16_t)(s ^ t);
			memcpy(&s, a + n - 2, 2);
			memcpy(&t, b + n - 2, 2);
			return (diff | (uint16_t)(s ^ t)) == 0;
		}
		return n == 0 || a[0] == (uint8_t)b[0];
	}
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	if (i < n) {
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

/*
 * Check a Feature (list 0) or FeatureList (list 1) message [p, p + n)
 * as ex_check() checks it: 0, or -1.  The general parser, out of line.
 */
int		 ex_check_value(const uint8_t *p, size_t n, int list);

/*
 * A Feature found so, when it is in the canonical form: its kind
 * (EX_NONE when it holds no list), with *vals the body of its one
 * packed chunk (EX_INT64, EX_FLOAT) or of its BytesList (the value
 * fields), empty for an empty list.  A bytes or float list is checked
 * as ex_check() checks it; the varints of an int64 list are left to
 * the caller, which decodes them.  -1 for a Feature of another form.
 * Inline: readers call it for a feature or two of every record.
 */
static inline __attribute__((always_inline)) int
ex_canonical_feature(struct ex_span f, struct ex_span *vals)
{
	const uint8_t *q = f.p, *end = f.p + f.n, *l, *c;
	size_t ll, cl;
	int kind;

	vals->p = f.p;
	vals->n = 0;
	if (f.n == 0)
		return EX_NONE;
	kind = *q == 0x0a ? EX_BYTES : *q == 0x12 ? EX_FLOAT :
	    *q == 0x1a ? EX_INT64 : -1;
	if (kind == -1 || ex_get_ld(&q, end, *q, &l, &ll) == -1 || q != end)
		return -1;
	vals->p = l;
	if (ll == 0)
		return kind;
	q = l;
	end = l + ll;
	if (kind == EX_BYTES) {
		while (q < end)
			if (ex_get_ld(&q, end, 0x0a, &c, &cl) == -1)
				return -1;
		vals->n = ll;
		return kind;
	}
	if (ex_get_ld(&q, end, 0x0a, &c, &cl) == -1 || q != end ||
	    (kind == EX_FLOAT && cl % 4 != 0))
		return -1;
	vals->p = c;
	vals->n = cl;
	return kind;
}

/*
 * One map entry of a canonical record at *pp (before end), a key then a
 * value: the two bodies in *key and *val, *pp past the entry.  Returns
 * 0, or -1 for an entry of another form.
 */
static inline __attribute__((always_inline)) int
ex_canonical_entry(const uint8_t **pp, const uint8_t *end,
    struct ex_span *key, struct ex_span *val)
{
	const uint8_t *e, *ee;
	size_t elen;

	if (ex_get_ld(pp, end, 0x0a, &e, &elen) == -1)
		return -1;
	ee = e + elen;
	if (ex_get_ld(&e, ee, 0x0a, &key->p, &key->n) == -1 ||
	    ex_get_ld(&e, ee, 0x12, &val->p, &val->n) == -1 || e != ee)
		return -1;
	return 0;
}

/*
 * One map message of a canonical record (see ex_canonical_find()):
 * 1, or 0 when it is of another form or does not check.  A Feature
 * in the canonical form, the usual case, is checked here.
 */
static inline __attribute__((always_inline)) int
ex_canonical_map(const uint8_t *m, size_t mlen, int list, size_t k,
    const struct ex_want *want, struct ex_span *out)
{
	const uint8_t *q = m, *end = m + mlen;
	struct ex_span key, val, v;
	size_t i;
	int kind;

	while (q < end) {
		if (ex_canonical_entry(&q, end, &key, &val) == -1)
			return 0;
		for (i = 0; i < k; i++)
			if (want[i].list == list && want[i].len == key.n &&
			    ex_same_key(key.p, want[i].name, key.n))
				break;
		if (i < k) {
			if (out[i].p != NULL)
				return 0;	/* repeated: the decoder merges */
			out[i] = val;
			continue;
		}
		if (!list) {
			kind = ex_canonical_feature(val, &v);
			if (kind == EX_INT64 ? ex_varints_ok(v.p, v.n) : kind != -1)
				continue;
		}
		if (ex_check_value(val.p, val.n, list) != 0)
			return 0;
	}
	return 1;
}

/*
 * The fast path of readers that take a few named features of each
 * record (the batch loaders, seqio's converters).  A record in the
 * canonical form (ex_encode()'s: Features messages, then for a
 * SequenceExample FeatureLists messages, every map entry a key then a
 * value, in any key order but no wanted key twice) is walked once: the
 * entries not wanted are checked as ex_check() checks them, and the
 * wanted ones (want[i].list: in the feature lists, else in the
 * features or context) are only found: out[i] is the value (a Feature
 * or FeatureList message), or p NULL when the record has no such entry.
 * Returns 1, or 0 for a record of any other form or one that does not
 * decode; the caller then reads it with ex_decode(), which accepts
 * every form and says what is wrong.
 */
static inline __attribute__((always_inline)) int
ex_canonical_find(const uint8_t *p, size_t n, int seq, size_t k,
    const struct ex_want *want, struct ex_span *out)
{
	const uint8_t *q = p, *end = p + n, *m;
	size_t mlen, i;

	for (i = 0; i < k; i++) {
		out[i].p = NULL;
		out[i].n = 0;
	}
	while (q < end && *q == 0x0a)
		if (ex_get_ld(&q, end, 0x0a, &m, &mlen) == -1 ||
		    ex_canonical_map(m, mlen, 0, k, want, out) == 0)
			return 0;
	while (seq && q < end && *q == 0x12)
		if (ex_get_ld(&q, end, 0x12, &m, &mlen) == -1 ||
		    ex_canonical_map(m, mlen, 1, k, want, out) == 0)
			return 0;
	return q == end;
}

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
 * The packed varints c[0..n) (an int64 list's packed chunk, such as
 * ex_canonical_feature() finds) decoded into dst, which has room for n
 * values (a varint takes a byte at least).  Returns their number, or -1
 * for a varint that runs past the end or takes more than ten bytes.
 * With 'over' not NULL, *over is 0 when every value is in 0 .. 2^28 - 1
 * (so fits int32), else not, found without a pass of its own.  The one
 * decoder of packed int64 lists: ex_decode() and the canonical readers
 * use it too.
 */
long		 ex_packed_int64s(const uint8_t *c, size_t n, int64_t *dst,
		    uint64_t *over);
/*
 * A FeatureList found so whose steps are each a Feature as
 * ex_canonical_floats() takes it, of w > 0 values: every step then has
 * the same bytes before its values.  Returns the number of steps, step
 * s's values at fl.p + s * *stride + *skip; -1 for any other form.
 */
long		 ex_canonical_float_steps(struct ex_span fl, size_t w,
		    size_t *stride, size_t *skip);

/*
 * The canonical form piece by piece, for the writers that put the
 * values themselves (ex_encode(), ex_lists_put(), seqio's byte rows,
 * the loader's batches), so that each keeps its own way with them.  A
 * length-delimited field is a tag byte, the length and the body.  An
 * Example is one Features field (tag 0x0a) holding one map entry field
 * (0x0a) a feature, keys in increasing byte order; an entry is the key
 * (0x0a) then the Feature (0x12); a Feature is one list of its kind
 * (0x0a bytes, 0x12 float, 0x1a int64; nothing for EX_NONE) and a
 * float or int64 list one packed chunk (0x0a) unless it is empty.
 */

/*
 * The sizes of one entry, computed once by the writer's sizing pass
 * and used again by its writing pass.
 */
struct ex_entry {
	size_t		 vbytes;	/* the values */
	size_t		 list;		/* the body of the list field */
	size_t		 feat;		/* the body of the Feature */
	size_t		 body;		/* the body of the map entry */
};

/*
 * A Feature holding one list of kind 'kind' whose values take 'vbytes'
 * bytes: the packed values (0 for none: an empty list) for EX_INT64
 * and EX_FLOAT, the value fields for EX_BYTES.  Sets e->vbytes and
 * e->list; returns the size of the Feature's body (also in e->feat).
 */
static inline size_t
ex_feature_sizes(struct ex_entry *e, enum ex_kind kind, size_t vbytes)
{
	e->vbytes = vbytes;
	e->list = kind == EX_BYTES || vbytes == 0 ? vbytes : ex_ld_size(vbytes);
	return e->feat = kind == EX_NONE ? 0 : ex_ld_size(e->list);
}

/* Write that Feature's body up to its values; returns where they go. */
static inline uint8_t *
ex_feature_head(uint8_t *q, const struct ex_entry *e, enum ex_kind kind)
{
	if (kind == EX_NONE)
		return q;
	q = ex_put_ld(q, kind == EX_BYTES ? 0x0a : kind == EX_FLOAT ? 0x12 :
	    0x1a, e->list);
	return kind == EX_BYTES || e->vbytes == 0 ? q :
	    ex_put_ld(q, 0x0a, e->vbytes);
}

/*
 * The map entry of a key of klen bytes whose value (a Feature or a
 * FeatureList) has a body of vsize bytes: sets e->body and returns the
 * size of the whole entry field.
 */
static inline size_t
ex_entry_sizes(struct ex_entry *e, size_t klen, size_t vsize)
{
	e->body = ex_ld_size(klen) + ex_ld_size(vsize);
	return ex_ld_size(e->body);
}

/* Write that entry up to its value's body; returns where it goes. */
static inline uint8_t *
ex_entry_head(uint8_t *q, const struct ex_entry *e, const void *key,
    size_t klen, size_t vsize)
{
	q = ex_put_ld(q, 0x0a, e->body);
	q = ex_put_ld(q, 0x0a, klen);
	if (klen)
		memcpy(q, key, klen);
	return ex_put_ld(q + klen, 0x12, vsize);
}

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
