/*
 * Fuzz subword encoding and decoding.  The input is read as text lines
 * (TensorFlow's rules); every valid line is encoded with a vocabulary
 * built once from a small corpus and must decode back to itself (the
 * encoding is invertible) and give the ids of a plain reference encoder
 * (tokenize, escape, then at each position the longest entry there,
 * each length looked up in a hash set of the entries).  The
 * invalid UTF-8 a line reader reports must be where uni_utf8_valid_prefix()
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
#include "errmsg.h"
#include "subword.h"
#include "unicode.h"

static const char corpus[] =
    "The quick brown fox jumps over the lazy dog.\n"
    "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xd0\xbf\xd1\x80\xd0\xb8"
    "\xd0\xb2\xd0\xb5\xd1\x82 x_y a\\b 12 \xf0\x9f\x98\x80!\n"
    "  spaces   and\ttabs \xe2\x80\x83 \xef\xbb\xbf" "bom\n";

/*
 * The reference's view of a vocabulary: a hash set of its non-empty
 * entries (FNV-1a, open addressing), each string once, with the last id
 * it has (a vocab file may list an entry twice; the last one wins).
 */
struct ref_ent {
	const uint8_t	*p;		/* NULL: an empty slot */
	size_t		 len;
	int32_t		 id;
};
struct ref_vocab {
	struct ref_ent	*e;
	size_t		 mask;		/* slots - 1 */
	size_t		 maxlen;	/* longest entry */
};

static struct sw_vocab *v;
static struct ref_vocab vref;		/* the reference's view of v */

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void	ref_build(const struct sw_vocab *, struct ref_vocab *);

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
	ref_build(v, &vref);
	sw_counts_free(c);
}

#define FNV_BASIS	0xcbf29ce484222325ull
#define FNV_PRIME	0x100000001b3ull

static uint64_t
fnv_step(uint64_t h, uint8_t c)
{
	return (h ^ c) * FNV_PRIME;
}

/* The slot of p[0..len) (hash h): where it is, or the empty slot where it would go. */
static struct ref_ent *
ref_slot(const struct ref_vocab *rv, const uint8_t *p, size_t len, uint64_t h)
{
	struct ref_ent *e;

	for (;; h++) {
		e = &rv->e[h & rv->mask];
		if (e->p == NULL || (e->len == len && memcmp(e->p, p, len) == 0))
			return e;
	}
}

static void
ref_build(const struct sw_vocab *sv, struct ref_vocab *rv)
{
	size_t i, j, len, n = sw_vocab_size(sv), slots = 16;
	const uint8_t *ent;
	struct ref_ent *e;
	uint64_t h;

	while (slots < 2 * n)
		slots *= 2;
	rv->e = calloc(slots, sizeof *rv->e);
	check(rv->e != NULL);
	rv->mask = slots - 1;
	rv->maxlen = 0;
	for (i = 0; i < n; i++) {
		ent = sw_vocab_entry(sv, (int64_t)i, &len);
		check(ent != NULL);
		if (len == 0)
			continue;
		for (h = FNV_BASIS, j = 0; j < len; j++)
			h = fnv_step(h, ent[j]);
		e = ref_slot(rv, ent, len, h);
		e->p = ent;
		e->len = len;
		e->id = (int32_t)i;	/* a later duplicate replaces the id */
		if (len > rv->maxlen)
			rv->maxlen = len;
	}
}

/*
 * tensor2tensor's encode, spelled out: tokens, escaping, then at each
 * position the longest entry that matches: each length up to the
 * longest entry's is looked up in the set.  Returns 0, or -1 when no
 * entry matches somewhere.
 */
static int
ref_encode(const struct sw_vocab *sv, const struct ref_vocab *rv,
    const uint8_t *p, size_t n, int32_t **ids, size_t *nids)
{
	struct sw_span *sp = NULL;
	size_t spcap = 0, idcap = 0, t, s, l = 0, m, lim;
	const struct ref_ent *e;
	struct buf esc = { 0 };
	uint64_t h;
	long nt;
	int32_t id = -1;
	int rc = 0;

	nt = sw_tokenize(p, n, &sp, &spcap);
	check(nt >= 0);
	for (t = 0; t < (size_t)nt && rc == 0; t++) {
		esc.len = 0;
		check(sw_escape(sv, p + sp[t].off, sp[t].len, &esc) == 0);
		for (s = 0; s < esc.len;) {
			lim = esc.len - s < rv->maxlen ? esc.len - s : rv->maxlen;
			id = -1;
			for (h = FNV_BASIS, m = 1; m <= lim; m++) {
				h = fnv_step(h, esc.p[s + m - 1]);
				e = ref_slot(rv, esc.p + s, m, h);
				if (e->p != NULL) {
					id = e->id;
					l = m;
				}
			}
			if (id < 0) {
				rc = -1;
				break;
			}
			if (*nids == idcap) {
				idcap = idcap ? 2 * idcap : 64;
				*ids = realloc(*ids, idcap * sizeof(**ids));
				check(*ids != NULL);
			}
			(*ids)[(*nids)++] = id;
			s += l;
		}
	}
	free(sp);
	free(esc.p);
	return rc;
}

/*
 * sw_encode() and ref_encode() agree on p[0..n); with 'roundtrip' (the
 * vocabulary built from the corpus, which encodes anything) the ids also
 * decode back to p[0..n).
 */
static void
same_as_ref(struct sw_vocab *tv, const struct ref_vocab *rv, const uint8_t *p,
    size_t n, int roundtrip)
{
	int32_t *a = NULL, *b = NULL;
	int64_t *a64;
	size_t na = 0, nb = 0, cap = 0, i;
	struct buf d = { 0 };
	char err[RP_ERRMAX];
	int ra, rb;

	ra = sw_encode(tv, p, n, &a, &na, &cap);
	rb = ref_encode(tv, rv, p, n, &b, &nb);
	check(ra == rb);
	check(ra == -1 || (na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0)));
	if (roundtrip) {
		check(ra == 0);
		a64 = malloc((na ? na : 1) * sizeof(*a64));
		check(a64 != NULL);
		for (i = 0; i < na; i++)
			a64[i] = a[i];
		check(sw_decode(tv, a64, na, 0, &d) == 0);
		check(d.len == n && (n == 0 || memcmp(d.p, p, n) == 0));
		sw_strip(&p, &n);
		free(a64);
		free(d.p);
	}
	free(a);
	free(b);
}

/* Lines of p[0..n) (copied): valid ones encode as the reference does. */
static void
each_line(const uint8_t *p, size_t n, struct sw_vocab *tv,
    const struct ref_vocab *rv, int roundtrip)
{
	struct sw_lines *r;
	char err[RP_ERRMAX];
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
	while ((rc = sw_lines_next(r, &line, &len, &nl)) == 1)
		same_as_ref(tv, rv, line, len, roundtrip);
	check(rc == 0 || rc == -2);
	if (rc == -2) {
		/* The bad line as on disk, without its '\r's: where does it go wrong? */
		lo = 0;
		for (i = 0; i < n && i < sw_lines_error_offset(r); i++)
			if (p[i] == '\n')
				lo = i + 1;
		for (hi = lo; hi < n && p[hi] != '\n'; hi++)
			;
		raw = malloc(hi - lo + 1);
		check(raw != NULL);
		for (i = lo, j = 0; i < hi; i++)
			if (p[i] != '\r')
				raw[j++] = p[i];
		len = uni_utf8_valid_prefix(raw, j);
		check(len < j);
		for (i = lo; len > 0 || p[i] == '\r'; i++)
			if (p[i] != '\r')
				len--;
		check(sw_lines_error_offset(r) == i);
		free(raw);
	}
	sw_lines_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	char err[RP_ERRMAX];
	struct buf d = { 0 }, u = { 0 };
	int64_t *id64 = NULL;
	size_t i;

	if (v == NULL)
		setup();
	each_line(p, n, v, &vref, 1);

	/* A vocab from the bytes before a NUL, lines after it. */
	{
		const uint8_t *z = memchr(p, 0, n);
		struct sw_vocab *tv;
		struct ref_vocab trv;

		if (z != NULL && (tv = sw_vocab_parse(p, (size_t)(z - p), err, sizeof err)) != NULL) {
			ref_build(tv, &trv);
			each_line(z + 1, n - (size_t)(z - p) - 1, tv, &trv, 0);
			free(trv.e);
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
		/* Long tokens are written in parts beyond 'hold' bytes. */
		dec.hold = n > 1 && p[1] % 4 != 0 ? p[1] % 16 + 1 : 0;
		for (i = 0; i < n / 4; i += part)
			check(sw_decode_part(v, &dec, id64 + i, n / 4 - i < part ?
			    n / 4 - i : part, n & 1, &parts) == 0);
		check(sw_decode_end(v, &dec, &parts) == 0);
		check(parts.len == d.len && (d.len == 0 ||
		    memcmp(parts.p, d.p, d.len) == 0));
		free(parts.p);
	}
	check(sw_unescape(p, n, &u) == 0);
	free(id64);
	free(d.p);
	free(u.p);
	return 0;
}
