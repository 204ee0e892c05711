/*
 * Fuzz subword encoding and decoding.  The input is read as text lines
 * (TensorFlow's rules); every valid line is encoded with a vocabulary
 * built once from a small corpus and must decode back to itself (the
 * encoding is invertible) and give the ids of a plain reference encoder
 * (tokenize, escape, then try every entry for the longest match).  The
 * invalid UTF-8 a line reader reports must be where utf8_valid_prefix()
 * finds it.  When the input holds a NUL byte, what comes before it is
 * also loaded as a vocab file and the lines after it are encoded with
 * it, checked against the reference (errors included).  The input's
 * bytes are also decoded as ids, in and out of range, and unescaped as
 * an escaped token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "subword.h"
#include "unicode.h"

static const char corpus[] =
    "The quick brown fox jumps over the lazy dog.\n"
    "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xd0\xbf\xd1\x80\xd0\xb8"
    "\xd0\xb2\xd0\xb5\xd1\x82 x_y a\\b 12 \xf0\x9f\x98\x80!\n"
    "  spaces   and\ttabs \xe2\x80\x83 \xef\xbb\xbf" "bom\n";

static struct sw_vocab *v;

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
setup(void)
{
	struct sw_counts *c = sw_counts_new();
	struct sw_build_opts o;
	const char *s = corpus, *nl;

	check(c != NULL);
	while ((nl = strchr(s, '\n')) != NULL) {
		check(sw_counts_add_text(c, (const uint8_t *)s, (size_t)(nl - s)) == 0);
		s = nl + 1;
	}
	sw_build_opts_init(&o);
	v = sw_build(c, 1, &o);
	check(v != NULL);
	sw_counts_free(c);
}

/*
 * tensor2tensor's encode, spelled out: tokens, escaping, then at each
 * position the longest entry that matches (the last of equal entries).
 * Returns 0, or -1 when no entry matches somewhere.
 */
static int
ref_encode(const struct sw_vocab *rv, const uint8_t *p, size_t n, int32_t **ids,
    size_t *nids)
{
	struct sw_span *sp = NULL;
	size_t spcap = 0, t, s, elen, best, id;
	struct buf esc = { 0 };
	const uint8_t *ent;
	long nt;
	int32_t bestid;
	int rc = 0;

	nt = sw_tokenize(p, n, &sp, &spcap);
	check(nt >= 0);
	for (t = 0; t < (size_t)nt && rc == 0; t++) {
		esc.len = 0;
		check(sw_escape(rv, p + sp[t].off, sp[t].len, &esc) == 0);
		for (s = 0; s < esc.len;) {
			best = 0;
			bestid = -1;
			for (id = 0; id < sw_vocab_size(rv); id++) {
				ent = sw_vocab_entry(rv, (int64_t)id, &elen);
				if (elen == 0 || elen > esc.len - s ||
				    elen < best || memcmp(ent, esc.p + s, elen) != 0)
					continue;
				best = elen;
				bestid = (int32_t)id;
			}
			if (bestid < 0) {
				rc = -1;
				break;
			}
			*ids = realloc(*ids, (*nids + 1) * sizeof(**ids));
			check(*ids != NULL);
			(*ids)[(*nids)++] = bestid;
			s += best;
		}
	}
	free(sp);
	free(esc.p);
	return rc;
}

/* sw_encode() and ref_encode() agree on p[0..n). */
static void
same_as_ref(struct sw_vocab *tv, const uint8_t *p, size_t n)
{
	int32_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, cap = 0;
	struct sw_err e;
	int ra, rb;

	ra = sw_encode(tv, p, n, &a, &na, &cap, &e);
	rb = ref_encode(tv, p, n, &b, &nb);
	check(ra == rb);
	check(ra == -1 || (na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0)));
	free(a);
	free(b);
}

/* Lines of p[0..n) (copied): valid ones encode as the reference does. */
static void
each_line(const uint8_t *p, size_t n, struct sw_vocab *tv)
{
	struct sw_lines *r;
	struct sw_err e;
	const uint8_t *line;
	uint8_t *copy, *raw;
	size_t len, i, j, lo, hi;
	int nl, rc;

	copy = malloc(n ? n : 1);
	check(copy != NULL);
	if (n > 0)
		memcpy(copy, p, n);
	r = sw_lines_open_buf(copy, n);
	check(r != NULL);
	while ((rc = sw_lines_next(r, &line, &len, &nl, &e)) == 1)
		same_as_ref(tv, line, len);
	check(rc == 0 || rc == -2);
	if (rc == -2) {
		/* The bad line as on disk, without its '\r's: where does it go wrong? */
		lo = 0;
		for (i = 0; i < n && i < e.offset; i++)
			if (p[i] == '\n')
				lo = i + 1;
		for (hi = lo; hi < n && p[hi] != '\n'; hi++)
			;
		raw = malloc(hi - lo + 1);
		check(raw != NULL);
		for (i = lo, j = 0; i < hi; i++)
			if (p[i] != '\r')
				raw[j++] = p[i];
		len = utf8_valid_prefix(raw, j);
		check(len < j);
		for (i = lo; len > 0 || p[i] == '\r'; i++)
			if (p[i] != '\r')
				len--;
		check(e.offset == i);
		free(raw);
	}
	sw_lines_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct sw_lines *r;
	struct sw_err e;
	struct buf d = { 0 }, u = { 0 };
	const uint8_t *line;
	int32_t *ids = NULL;
	int64_t *id64 = NULL;
	size_t len, nids, cap = 0, i;
	uint8_t *copy;
	int nl, rc;

	if (v == NULL)
		setup();
	copy = malloc(n ? n : 1);
	check(copy != NULL);
	if (n > 0)
		memcpy(copy, p, n);
	r = sw_lines_open_buf(copy, n);
	check(r != NULL);
	while ((rc = sw_lines_next(r, &line, &len, &nl, &e)) == 1) {
		nids = 0;
		check(sw_encode(v, line, len, &ids, &nids, &cap, &e) == 0);
		id64 = realloc(id64, (nids ? nids : 1) * sizeof(*id64));
		check(id64 != NULL);
		for (i = 0; i < nids; i++)
			id64[i] = ids[i];
		d.len = 0;
		check(sw_decode(v, id64, nids, 0, &d) == 0);
		check(d.len == len && (len == 0 || memcmp(d.p, line, len) == 0));
		sw_strip(&line, &len);
	}
	check(rc == 0 || rc == -2);
	sw_lines_free(r);
	each_line(p, n, v);

	/* A vocab from the bytes before a NUL, lines after it. */
	{
		const uint8_t *z = memchr(p, 0, n);
		struct sw_vocab *tv;

		if (z != NULL && (tv = sw_vocab_parse(p, (size_t)(z - p), &e)) != NULL) {
			each_line(z + 1, n - (size_t)(z - p) - 1, tv);
			sw_vocab_free(tv);
		}
	}

	/* Arbitrary ids: 4 bytes each, signed. */
	id64 = realloc(id64, (n / 4 + 1) * sizeof(*id64));
	check(id64 != NULL);
	for (i = 0; i + 4 <= n; i += 4)
		id64[i / 4] = (int32_t)((uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
		    (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24) % 4096;
	d.len = 0;
	check(sw_decode(v, id64, n / 4, n & 1, &d) == 0);
	/* The same in parts of 1 to 8 ids. */
	{
		struct sw_decoder dec;
		struct buf parts = { 0 };
		size_t part = 1 + (n > 0 ? p[0] % 8 : 0);

		memset(&dec, 0, sizeof dec);
		for (i = 0; i < n / 4; i += part)
			check(sw_decode_part(v, &dec, id64 + i, n / 4 - i < part ?
			    n / 4 - i : part, n & 1, &parts) == 0);
		check(sw_decode_end(v, &dec, &parts) == 0);
		check(parts.len == d.len && (d.len == 0 ||
		    memcmp(parts.p, d.p, d.len) == 0));
		free(parts.p);
	}
	check(sw_unescape(p, n, &u) == 0);
	free(ids);
	free(id64);
	free(d.p);
	free(u.p);
	return 0;
}
