/*
 * JSON lines for tf.train.Example and SequenceExample records.
 *
 * Output (one line, no newline, appended to a struct buf):
 *
 *   canonical	the proto3 JSON mapping: lowerCamelCase names, int64 as
 *		decimal strings, bytes as padded standard base64, floats as
 *		the shortest of %.6g..%.9g that reads back as the same
 *		float32 (always with a '.', an exponent or a letter: "1.0",
 *		"-0.0"), NaN/Infinity/-Infinity as strings; an empty list is
 *		{"floatList":{}}, a kind-less Feature {}; present-but-empty
 *		features/context/featureLists are {}; keys sorted bytewise;
 *		no spaces.
 *
 *   flat		(EXJSON_FLAT) {"name":[values],...}: int64 values as JSON
 *		integers, floats as JSON numbers always with a '.' or an
 *		exponent, bytes as JSON strings.  A list its values cannot
 *		type is written typed:
 *		  {"int64_list":[]}  {"float_list":[]}  {"bytes_list":[]}
 *		    (empty lists),
 *		  {"float_list":["NaN",1.5,"-Infinity"]}
 *		    (a float list holding NaN or an infinity),
 *		  {"bytes_list":["<base64>",...]}
 *		    (a bytes list with any value that is not valid UTF-8;
 *		    then every value of that list is base64).
 *		A kind-less Feature is null.  A SequenceExample is
 *		  {"context":{...flat features...},
 *		   "feature_lists":{"name":[F,F,...]}}
 *		where each F is written exactly as a flat feature value: a
 *		list [..], a typed object, or null for a kind-less Feature;
 *		an empty FeatureList is [].  "context" / "feature_lists"
 *		appear when present in the record.
 *		Where the flat text would be ambiguous the record is written
 *		in the canonical form instead, which the reader tells apart:
 *		an Example without features ({} or {"features":{}}), and a
 *		SequenceExample whose parts would read as canonical ones or
 *		as a flat Example (e.g. a context whose only feature is named
 *		"feature" or "int64_list").
 *
 *   raw		a payload as a JSON string of its padded base64.
 *
 * Map keys must be valid UTF-8 (JSON cannot carry anything else); a
 * key that is not is an error naming it, unless EXJSON_LOSSY replaces
 * each bad sequence with U+FFFD (keys are then written in the order of
 * their original bytes and may repeat).  Strings are escaped per RFC
 * 8259: '"', '\\' and control characters (as \u00XX); '/' and non-ASCII
 * UTF-8 pass through.
 *
 * Input: exjson_parse() reads one line in either form, telling the two
 * apart by shape: canonical names in lowerCamelCase or proto names;
 * int64 as a string or an integral number, range-checked; bytes as
 * base64 with or without padding, standard or URL-safe; floats as
 * numbers or "NaN"/"Infinity"/"-Infinity" (also numeric strings),
 * converted from the decimal text straight to float32 (strtof), a
 * finite decimal that rounds to infinity being an error.  In flat
 * lists, an array of JSON integers is int64, an array of numbers with
 * any fraction or exponent is float, an array of strings is bytes
 * (the UTF-8 text itself).  A SequenceExample is recognised from
 * "context", "featureLists" or "feature_lists".  Unknown field names,
 * wrong types, duplicate field names, invalid JSON or trailing text
 * are errors whose message says what and where (byte offset, feature
 * name); the caller adds the file and line.  A feature or feature list
 * name given twice in one map is such an error (as protobuf's JSON
 * parser has it), naming the name and the byte of its second
 * appearance.  The payload appended is the canonical binary form
 * (example.h), so JSON -> records -> JSON is the identity for every
 * line this module writes.
 *
 * Numbers are formatted and read in the "C" locale's syntax; the
 * library never calls setlocale(), and a program using exjson must
 * leave LC_NUMERIC as "C".
 *
 * Usage:
 *
 *	struct exjson j;
 *	struct buf line = {0}, rec = {0};
 *	exjson_init(&j, flat ? EXJSON_FLAT : 0);
 *	// payload -> JSON
 *	if (exjson_payload(&j, p, n, EX_TYPE_AUTO, &line) == -1)
 *		die("%s: record %ju: %s", name, nrec, exjson_strerror(&j));
 *	rp_buf_putc(&line, '\n');
 *	// JSON -> payload
 *	if (exjson_parse(&j, text, textlen, EX_TYPE_AUTO, &rec) == -1)
 *		die("%s: line %ju: %s", name, lineno, exjson_strerror(&j));
 *	exjson_free(&j);
 *
 * Every function returns 0 or -1.  On -1 the message is in
 * exjson_strerror() (for allocation failures "out of memory", with
 * errno ENOMEM) and the output buffer has its original length back.
 */
#ifndef RECPIPE_EXJSON_H
#define RECPIPE_EXJSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "example.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* exjson_init() flags. */
#define EXJSON_FLAT	0x01	/* write the flat form */
#define EXJSON_LOSSY	0x02	/* replace invalid UTF-8 in keys with U+FFFD */

/* Work space for both directions; the fields are private. */
struct exjson {
	unsigned	 flags;
	struct example	 dec;		/* exjson_payload()'s decoded record */
	struct buf	 text;		/* copy of the line being parsed */
	void		*nodes;		/* parser's value tree */
	size_t		 nnodes, capnodes;
	struct buf	 feats, lists, i64, f32, bytes; /* parse pools */
	struct buf	 exfeat, exlists; /* the parsed example's arrays */
	struct example	 parsed;
	int		 have_parsed;
	const char	*where;		/* feature being read, for messages */
	size_t		 wherelen;
	char		 msg[256];
	/*
	 * Set by the caller to write a long line as it is made: when the
	 * values of a feature left in its record (struct example's
	 * lazy_min) are written, the output buffer is handed to flush()
	 * whenever it holds more than about a megabyte; flush() writes and
	 * empties it, returning 0, or -1 to stop (exjson_write() then
	 * fails with errno as flush() left it).  Without it such a line is
	 * made whole.  Once flush() was called, a failure leaves the part
	 * written: check the keys first (exjson_keys_ok()).
	 */
	int		(*flush)(void *arg, struct buf *out);
	void		*flush_arg;
	int		 flushed;	/* flush() was called for this line */
	/*
	 * Set by the caller, optional: the kind of the flat feature (or
	 * feature list) named name[0..len), EX_INT64, EX_FLOAT or
	 * EX_BYTES, or -1 to let its values tell.  A flat list of numbers
	 * then takes that kind: integers in a float feature are floats
	 * (jq 1.6 writes 0.0 as 0), a fraction in an int64 feature or a
	 * number in a bytes feature (and a string in a number feature) is
	 * an error naming the feature, and an empty list needs no type.
	 * Typed lists ({"float_list":[..]}) and the canonical form keep
	 * the kind they state.
	 */
	int		(*kind_of)(void *arg, const uint8_t *name, size_t len);
	void		*kind_arg;
};

/*
 * Would exjson_write() write the keys of 'ex' (UTF-8, or EXJSON_LOSSY)?
 * Returns 0, or -1 with the message exjson_write() would give.
 */
int		 exjson_keys_ok(struct exjson *j, const struct example *ex);

/* Set up 'j'; free with exjson_free().  flags: EXJSON_FLAT, EXJSON_LOSSY. */
void		 exjson_init(struct exjson *j, unsigned flags);
void		 exjson_free(struct exjson *j);	/* NULL is fine; reusable after exjson_init() */
/* The message of the last failure; valid until the next call on 'j'. */
const char	*exjson_strerror(const struct exjson *j);

/*
 * Append the JSON line for 'ex' (form chosen by the flags) to 'out'.
 * ex->feat and each ex->lists[i] must be sorted by key bytes with
 * unique keys, as ex_decode() leaves them; ex->seq chooses the
 * SequenceExample shape.  Fails only on a key that is not UTF-8 (without
 * EXJSON_LOSSY) or on allocation failure.
 */
int		 exjson_write(struct exjson *j, const struct example *ex,
		    struct buf *out);

/*
 * Decode the payload 'p' (n bytes) as 'type' and append its JSON line
 * to 'out'.  A payload that does not decode fails with ex_strerror()'s
 * message.  The decoded example stays in 'j' until the next call.
 */
int		 exjson_payload(struct exjson *j, const uint8_t *p, size_t n,
		    enum ex_type type, struct buf *out);

/*
 * Append bytes as a JSON string of their padded base64, "<base64>" (the
 * raw form of a payload, a string that is not UTF-8).  -1 only with
 * ENOMEM.
 */
int		 exjson_write_raw(const uint8_t *p, size_t n, struct buf *out);

/*
 * Parse one JSON line (s, n bytes; it need not be NUL-terminated and
 * may end in whitespace) in either form and append the canonical binary
 * payload to 'out'.  'type' EX_TYPE_AUTO decides Example vs
 * SequenceExample from the text; EX_TYPE_EXAMPLE / EX_TYPE_SEQUENCE
 * accept only that message's forms.  A JSON string is refused (it is a
 * raw record; see exjson_parse_raw()).
 */
int		 exjson_parse(struct exjson *j, const char *s, size_t n,
		    enum ex_type type, struct buf *out);

/*
 * The example the last successful exjson_parse() built (features and
 * lists sorted and unique); valid until the next call on 'j'.  NULL if
 * there is none.
 */
const struct example *exjson_example(const struct exjson *j);

/* Parse a raw line (a JSON string of base64) and append the bytes. */
int		 exjson_parse_raw(struct exjson *j, const char *s, size_t n,
		    struct buf *out);

/*
 * Building blocks, exported for the tests and for other tools' JSON.
 *
 * exjson_format_float() writes v as described above (finite values:
 * shortest of %.6g..%.9g that round-trips, '.0' appended when the text
 * has no '.', exponent or letter; non-finite: NaN, Infinity, -Infinity
 * without quotes) into dst (at least EXJSON_FLOAT_MAX bytes, NUL
 * added) and returns the length.
 */
#define EXJSON_FLOAT_MAX 32
size_t		 exjson_format_float(float v, char *dst);
/*
 * Decimal text of v into dst (at least 21 bytes, no NUL); returns the
 * end.  exjson_format_u64() for an unsigned value (at least 20 bytes).
 * Inline, for the loops of the tools that write many numbers.
 */
static const char exjson_digits2_[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t exjson_pow10_[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
	100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL,
	10000000000000000000ULL
};

/* Decimal digits of u: from its bit length (log10 2 ~ 1233 / 4096), then one compare. */
static inline unsigned
exjson_ndigits_(uint64_t u)
{
	uint64_t x = u | 1;
	unsigned t = ((unsigned)(64 - __builtin_clzll(x)) * 1233) >> 12;

	return t + 1 - (x < exjson_pow10_[t]);
}

/*
 * Digits written backwards from the end, two at a time; no copies.
 * Below 2^32 in 32-bit arithmetic, which divides by 100 faster.
 */
static inline char *
exjson_format_u64(uint64_t u, char *dst)
{
	char *end, *t;
	uint32_t w;

	end = t = dst + exjson_ndigits_(u);
	while (u > UINT32_MAX) {
		unsigned r = (unsigned)(u % 100);

		u /= 100;
		t -= 2;
		t[0] = exjson_digits2_[2 * r];
		t[1] = exjson_digits2_[2 * r + 1];
	}
	w = (uint32_t)u;
	while (w >= 100) {
		unsigned r = w % 100;

		w /= 100;
		t -= 2;
		t[0] = exjson_digits2_[2 * r];
		t[1] = exjson_digits2_[2 * r + 1];
	}
	if (w >= 10) {
		t[-2] = exjson_digits2_[2 * w];
		t[-1] = exjson_digits2_[2 * w + 1];
	} else
		t[-1] = (char)('0' + w);
	return end;
}

static inline char *
exjson_format_i64(int64_t v, char *dst)
{
	uint64_t u = (uint64_t)v;

	if (v < 0) {
		*dst++ = '-';
		u = -u;
	}
	return exjson_format_u64(u, dst);
}
/*
 * For writers of many small integers: the decimal texts of 0 .. n - 1,
 * each followed by 'sep', with its length in the top byte, so that a
 * value costs one load and one 8-byte store (exjson_itext_put()).  n is
 * at most EXJSON_ITEXT_MAX (six digits and sep fit).  Returns the table
 * (free it with free()), or NULL with errno ENOMEM, or EINVAL for n too
 * large.
 */
#define EXJSON_ITEXT_MAX	1000000
uint64_t	*exjson_itext_new(size_t n, char sep);
/* The text of v < n and sep at dst (8 bytes writable); returns the end. */
static inline char *
exjson_itext_put(const uint64_t *t, size_t v, char *dst)
{
	uint64_t w = t[v];

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
	memcpy(dst, &w, 8);
	return dst + (t[v] >> 56);
#else
	memcpy(dst, &w, 8);
	return dst + (w >> 56);
#endif
}
/* Standard padded base64 of p[0..n) into dst (4 * ((n + 2) / 3) bytes, no NUL); returns the end. */
char		*exjson_base64(const uint8_t *p, size_t n, char *dst);
/*
 * Decode base64 (standard or URL-safe, padding optional) from s[0..n)
 * into dst (room for n * 3 / 4 bytes; may equal s).  Returns the number
 * of bytes, or -1 if s is not base64.
 */
long		 exjson_unbase64(const char *s, size_t n, uint8_t *dst);
/* 1 if p[0..n) is valid UTF-8 (no surrogates, no overlong forms, at most U+10FFFF). */
int		 exjson_utf8_valid(const uint8_t *p, size_t n);
/* Append p[0..n) as a JSON string (with quotes), escaped; p must be valid UTF-8. */
int		 exjson_put_string(struct buf *out, const uint8_t *p, size_t n);
/*
 * Append a name (a key, a file name) as a JSON string: as it is when
 * valid UTF-8, else with U+FFFD for each sequence that is not.  Data
 * bytes that are not UTF-8 go out as base64 instead (recpipe(5)).
 */
int		 exjson_put_name(struct buf *out, const uint8_t *p, size_t n);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
