/*
 * BERT/ELECTRA WordPiece: vocab.txt loading, FullTokenizer, decoding.
 *
 * The basic tokenizer runs in one pass over the UTF-8 line: control
 * characters are dropped and whitespace splits while decoding, CJK
 * ideographs become tokens of their own, and each basic token then goes
 * through lower(), accent stripping and the punctuation split before
 * the greedy WordPiece match.  Tokens that are pure ASCII (most of them
 * in English text) take a byte path; the others are decoded to code
 * points.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "errmsg.h"
#include "hashkey.h"
#include "unicode.h"
#include "wordpiece.h"

struct wp_ent {
	uint32_t	off;	/* into pool */
	uint32_t	len;
};

struct wp_vocab {
	size_t		 n;		/* entries (lines) */
	struct wp_ent	*ent;
	char		*pool;		/* tokens, each NUL-terminated */
	uint64_t	*slot;		/* hash table: high 32 bits of the hash << 32 | id + 1; 0 = empty */
	size_t		 mask;		/* table size - 1 */
	size_t		 maxlen;	/* longest token, bytes */
	long		 special[5];	/* enum wp_special */
	uint8_t		 key[RP_HASHKEY_BYTES];
};

/*
 * A direct-mapped cache of word -> ids: word frequencies are Zipfian, so
 * most words skip hashing with SipHash and the greedy search.  The cache
 * only speeds things up: a collision (even a forced one) costs a miss.
 */
#define WC_SLOTS	16384
#define WC_WORD		24	/* longest cached word, bytes */
#define WC_IDS		7	/* most ids of a cached word */

struct wc_ent {
	uint64_t	tag;	/* the word's hash; 0 = empty */
	uint8_t		len;
	uint8_t		nids;
	uint8_t		w[WC_WORD];
	int32_t		ids[WC_IDS];
};

/* Per-byte classes of ASCII in the basic tokenizer. */
enum { A_WORD, A_PUNCT, A_SPACE, A_DROP };

struct wp_tok {
	const struct wp_vocab *v;
	int		 lower;
	int		 strip;
	int		 electra;
	int		 ignore_invalid;
	long		 unk;
	unsigned char	 cls[128];	/* A_* of each ASCII byte */
	struct wc_ent	*cache;		/* WC_SLOTS entries, or NULL */
	/* scratch */
	uint8_t		*tok;		/* current basic token, UTF-8 */
	size_t		 toklen, tokcap;
	int		 tokascii;
	uint32_t	*a, *b;		/* code points */
	size_t		 acap, bcap;
	uint8_t		*word;		/* one word, UTF-8 */
	size_t		 wordcap;
	uint32_t	*woff;		/* byte offset of each code point of word */
	size_t		 woffcap;
	uint8_t		 key[2 + 4 * WP_MAX_WORD];
	/* output */
	int64_t		**ids;
	size_t		*cap;
	size_t		 nids;
	/* error */
	size_t		 erroff;
	char		 err[WP_ERRMAX];
};

static const char *const special_name[] = {
	"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"
};

static int
ascii_punct(uint32_t c)
{
	return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) ||
	    (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

static void
ascii_init(unsigned char cls[128])
{
	int c;

	for (c = 0; c < 128; c++) {
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			cls[c] = A_SPACE;
		else if (c < 0x20 || c == 0x7f)
			cls[c] = A_DROP;	/* Cc, NUL included */
		else if (ascii_punct((uint32_t)c))
			cls[c] = A_PUNCT;
		else
			cls[c] = A_WORD;
	}
}

int
wp_is_cjk(uint32_t cp)
{
	return (cp >= 0x4e00 && cp <= 0x9fff) ||
	    (cp >= 0x3400 && cp <= 0x4dbf) ||
	    (cp >= 0x20000 && cp <= 0x2a6df) ||
	    (cp >= 0x2a700 && cp <= 0x2b73f) ||
	    (cp >= 0x2b740 && cp <= 0x2b81f) ||
	    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
	    (cp >= 0xf900 && cp <= 0xfaff) ||
	    (cp >= 0x2f800 && cp <= 0x2fa1f);
}

int
wp_is_punct(uint32_t cp)
{
	enum uni_cat c;

	if (cp < 0x80)
		return ascii_punct(cp);
	c = uni_category(cp);
	return c >= UC_Pc && c <= UC_Po;
}

/* ---------------------------------------------------------------- */
/* Growable arrays.                                                 */

static int
grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void *np;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem) {
			errno = ENOMEM;
			return -1;
		}
		nc *= 2;
	}
	if ((np = realloc(*(void **)pp, nc * elem)) == NULL)
		return -1;
	*(void **)pp = np;
	*cap = nc;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Vocabulary.                                                      */

static uint64_t
vhash(const struct wp_vocab *v, const void *p, size_t n)
{
	return rp_shorthash(v->key, p, n);
}

#if defined(__GNUC__)
#define PREFETCH(p)	__builtin_prefetch(p)
#else
#define PREFETCH(p)	((void)0)
#endif
#define AHEAD		16	/* tokens whose slots are fetched ahead */

/*
 * Each slot keeps the high half of its token's hash, so that a probe
 * touches the token itself only when the hashes agree.
 */
static long
lookup(const struct wp_vocab *v, const void *p, size_t n)
{
	uint64_t h, s;
	size_t i;

	if (n > v->maxlen)
		return -1;
	h = vhash(v, p, n);
	i = h & v->mask;
	while ((s = v->slot[i]) != 0) {
		if (s >> 32 == h >> 32) {
			const struct wp_ent *e = &v->ent[(uint32_t)s - 1];

			if (e->len == n && memcmp(v->pool + e->off, p, n) == 0)
				return (long)(uint32_t)s - 1;
		}
		i = (i + 1) & v->mask;
	}
	return -1;
}

/*
 * Insert id (its token is in the pool, h its hash); a token seen before
 * takes the new id.
 */
static void
insert(struct wp_vocab *v, size_t id, uint64_t h)
{
	const struct wp_ent *e = &v->ent[id];
	const char *p = v->pool + e->off;
	uint64_t s;
	size_t i = h & v->mask;

	while ((s = v->slot[i]) != 0) {
		const struct wp_ent *o = &v->ent[(uint32_t)s - 1];

		if (s >> 32 == h >> 32 && o->len == e->len &&
		    memcmp(v->pool + o->off, p, e->len) == 0)
			break;
		i = (i + 1) & v->mask;
	}
	v->slot[i] = (h >> 32) << 32 | ((uint64_t)id + 1);
}

void
wp_vocab_free(struct wp_vocab *v)
{
	if (v == NULL)
		return;
	free(v->ent);
	free(v->pool);
	free(v->slot);
	free(v);
}

static struct wp_vocab *
fail(struct wp_vocab *v, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static struct wp_vocab *
fail(struct wp_vocab *v, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	rp_vseterr(err, errlen, fmt, ap);
	va_end(ap);
	wp_vocab_free(v);
	errno = saved;
	return NULL;
}

struct wp_vocab *
wp_vocab_parse(const uint8_t *p, size_t n, char *err, size_t errlen)
{
	struct wp_vocab *v;
	size_t pos = 0, nlines = 0, entcap = 0, poollen = 0, i, tsize;
	size_t lineno = 0;
	uint64_t h[AHEAD];

	if (n > WP_MAX_VOCAB)
		return fail(NULL, err, errlen,
		    "vocabulary larger than %lu bytes",
		    (unsigned long)WP_MAX_VOCAB);
	if ((v = calloc(1, sizeof *v)) == NULL)
		return fail(NULL, err, errlen, "%s", strerror(errno));
	if (rp_hash_key(v->key, sizeof v->key) == -1)
		return fail(v, err, errlen, "cannot initialise libsodium");
	/*
	 * Each line's token and its NUL fit in the line and its "\n" (the
	 * last line may lack one: hence n + 1).
	 */
	if ((v->pool = malloc(n + 1)) == NULL)
		return fail(v, err, errlen, "%s", strerror(errno));

	while (pos < n) {
		const uint8_t *nl = memchr(p + pos, '\n', n - pos);
		size_t end = nl ? (size_t)(nl - p) : n;
		size_t start = poollen, j, s, e, k;
		char *q = v->pool + poollen;

		/* Copy the line without its "\r"s. */
		for (j = pos, k = 0; j < end; j++)
			if (p[j] != '\r')
				q[k++] = (char)p[j];
		lineno++;
		if (nl == NULL && k == 0)
			break;	/* a last chunk of "\r"s only is not a line */
		if (uni_utf8_valid_prefix((const uint8_t *)q, k) != k) {
			/* Map the offset back to the file, counting "\r"s. */
			size_t bad = uni_utf8_valid_prefix((const uint8_t *)q, k), m;

			for (j = pos, m = 0;; j++) {
				if (p[j] == '\r')
					continue;
				if (m++ == bad)
					break;
			}
			return fail(v, err, errlen,
			    "line %zu: invalid UTF-8 at byte offset %zu",
			    lineno, j);
		}
		/* strip(): leading, then trailing Python whitespace. */
		s = 0;
		while (s < k) {
			uint32_t cp;
			int l = uni_utf8_decode((const uint8_t *)q + s, k - s, &cp);

			if (!uni_is_pyspace(cp))
				break;
			s += l;
		}
		e = s;
		for (j = s; j < k;) {
			uint32_t cp;
			int l = uni_utf8_decode((const uint8_t *)q + j, k - j, &cp);

			j += l;
			if (!uni_is_pyspace(cp))
				e = j;
		}
		if (s > 0)
			memmove(q, q + s, e - s);
		q[e - s] = '\0';
		if (nlines >= UINT32_MAX - 1)
			return fail(v, err, errlen,
			    "line %zu: too many lines", lineno);
		if (grow(&v->ent, &entcap, nlines + 1, sizeof *v->ent) == -1)
			return fail(v, err, errlen, "%s", strerror(errno));
		v->ent[nlines].off = (uint32_t)start;
		v->ent[nlines].len = (uint32_t)(e - s);
		if (e - s > v->maxlen)
			v->maxlen = e - s;
		nlines++;
		poollen += e - s + 1;
		pos = nl ? end + 1 : n;
	}
	v->n = nlines;

	/* Hash table at most half full. */
	tsize = 16;
	while (tsize < 2 * nlines + 2)
		tsize *= 2;
	if ((v->slot = calloc(tsize, sizeof *v->slot)) == NULL)
		return fail(v, err, errlen, "%s", strerror(errno));
	v->mask = tsize - 1;
	/*
	 * Each token's slot is fetched from memory AHEAD tokens before it is
	 * filled: at millions of tokens, waiting for the table was most of
	 * the time.
	 */
	for (i = 0; i < nlines + AHEAD; i++) {
		if (i >= AHEAD)
			insert(v, i - AHEAD, h[i % AHEAD]);
		if (i < nlines) {
			h[i % AHEAD] = vhash(v, v->pool + v->ent[i].off,
			    v->ent[i].len);
			PREFETCH(&v->slot[h[i % AHEAD] & v->mask]);
		}
	}
	for (i = 0; i < sizeof special_name / sizeof special_name[0]; i++)
		v->special[i] = lookup(v, special_name[i], strlen(special_name[i]));
	return v;
}

struct wp_vocab *
wp_vocab_load(const char *path, char *err, size_t errlen)
{
	struct wp_vocab *v;
	struct buf b = { 0 };

	if (rp_buf_read_file(&b, path, WP_MAX_VOCAB) == -1) {
		int e = errno;

		rp_buf_free(&b);
		errno = e;
		if (e == EFBIG)
			return fail(NULL, err, errlen,
			    "vocabulary larger than %lu bytes",
			    (unsigned long)WP_MAX_VOCAB);
		return fail(NULL, err, errlen, "%s", strerror(e));
	}
	v = wp_vocab_parse(b.p, b.len, err, errlen);
	rp_buf_free(&b);
	return v;
}

size_t
wp_vocab_size(const struct wp_vocab *v)
{
	return v->n;
}

long
wp_vocab_id(const struct wp_vocab *v, const char *s, size_t len)
{
	return lookup(v, s, len);
}

long
wp_special_id(const struct wp_vocab *v, enum wp_special which)
{
	if ((unsigned)which >= sizeof special_name / sizeof special_name[0])
		return -1;
	return v->special[which];
}

const char *
wp_piece(const struct wp_vocab *v, int64_t id, size_t *len)
{
	if (id < 0 || (uint64_t)id >= v->n)
		return NULL;
	if (len != NULL)
		*len = v->ent[id].len;
	return v->pool + v->ent[id].off;
}

/* ---------------------------------------------------------------- */
/* Tokenizer.                                                       */

struct wp_tok *
wp_tok_new(const struct wp_vocab *v, const struct wp_opts *o)
{
	struct wp_tok *t;

	if ((t = calloc(1, sizeof *t)) == NULL)
		return NULL;
	ascii_init(t->cls);
	t->v = v;
	t->lower = o->lower != 0;
	t->electra = o->rules == WP_RULES_ELECTRA;
	if (o->strip_accents < 0)
		t->strip = t->lower;
	else if (t->electra)
		t->strip = t->lower && o->strip_accents;
	else
		t->strip = o->strip_accents != 0;
	t->ignore_invalid = o->ignore_invalid != 0;
	t->unk = v->special[WP_UNK];
	t->cache = calloc(WC_SLOTS, sizeof *t->cache);	/* optional */
	return t;
}

void
wp_tok_free(struct wp_tok *t)
{
	if (t == NULL)
		return;
	free(t->tok);
	free(t->a);
	free(t->b);
	free(t->word);
	free(t->woff);
	free(t->cache);
	free(t);
}

const char *
wp_strerror(const struct wp_tok *t)
{
	return t->err;
}

size_t
wp_error_offset(const struct wp_tok *t)
{
	return t->erroff;
}

static int
tok_error(struct wp_tok *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
tok_error(struct wp_tok *t, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof t->err, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

static int
emit(struct wp_tok *t, long id)
{
	if (t->nids >= *t->cap &&
	    grow(t->ids, t->cap, t->nids + 1, sizeof **t->ids) == -1)
		return tok_error(t, "%s", strerror(errno));
	(*t->ids)[t->nids++] = id;
	return 0;
}

static int
emit_unk(struct wp_tok *t)
{
	if (t->unk < 0) {
		tok_error(t, "a word needs [UNK] and the vocabulary has no [UNK]");
		errno = EINVAL;
		return -1;
	}
	return emit(t, t->unk);
}

/* A fast unkeyed hash for the word cache; never 0. */
static uint64_t
word_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t x;

		memcpy(&x, p + i, 8);
		h = (h ^ x) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < n) {
		uint64_t x = 0;

		memcpy(&x, p + i, n - i);
		h = (h ^ x) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h | 1;
}

/*
 * WordpieceTokenizer on one word: w[0..off[nc]) of nc code points, off[i]
 * the byte offset of code point i (off == NULL: ASCII, off[i] = i).
 */
static int
wordpiece(struct wp_tok *t, const uint8_t *w, const uint32_t *off, size_t nc)
{
	const struct wp_vocab *v = t->v;
	size_t mark = t->nids, start = 0, nb;
	struct wc_ent *ce = NULL;
	uint64_t tag = 0;

#define OFF(i) (off ? off[i] : (uint32_t)(i))
	if (nc > WP_MAX_WORD)
		return emit_unk(t);
	nb = OFF(nc);
	if (t->cache != NULL && nb <= WC_WORD) {
		tag = word_hash(w, nb);
		ce = &t->cache[tag & (WC_SLOTS - 1)];
		if (ce->tag == tag && ce->len == nb && memcmp(ce->w, w, nb) == 0) {
			size_t i;

			if (t->nids + ce->nids > *t->cap &&
			    grow(t->ids, t->cap, t->nids + ce->nids, sizeof **t->ids) == -1)
				return tok_error(t, "%s", strerror(errno));
			for (i = 0; i < ce->nids; i++)
				(*t->ids)[t->nids++] = ce->ids[i];
			return 0;
		}
	}
	while (start < nc) {
		size_t end = nc, s0 = OFF(start), pre = start ? 2 : 0;
		const uint8_t *k;
		long id = -1;

		if (start) {
			t->key[0] = '#';
			t->key[1] = '#';
			memcpy(t->key + 2, w + s0, nb - s0);
			k = t->key;
		} else
			k = w;
		while (end > start && OFF(end) - s0 + pre > v->maxlen)
			end--;
		for (; end > start; end--)
			if ((id = lookup(v, k, OFF(end) - s0 + pre)) >= 0)
				break;
		if (end == start) {
			/* no piece here: the whole word is [UNK] */
			t->nids = mark;
			if (emit_unk(t) == -1)
				return -1;
			break;
		}
		if (emit(t, id) == -1)
			return -1;
		start = end;
	}
#undef OFF
	if (ce != NULL && t->nids - mark <= WC_IDS) {
		size_t i;

		ce->tag = tag;
		ce->len = (uint8_t)nb;
		memcpy(ce->w, w, nb);
		ce->nids = (uint8_t)(t->nids - mark);
		for (i = mark; i < t->nids; i++)
			ce->ids[i - mark] = (int32_t)(*t->ids)[i];
	}
	return 0;
}

/* A pure-ASCII basic token in t->tok: lower, punctuation split, pieces. */
static int
basic_ascii(struct wp_tok *t)
{
	uint8_t *p = t->tok;
	size_t n = t->toklen, i, ws = 0;

	if (t->lower)
		for (i = 0; i < n; i++)
			if (p[i] >= 'A' && p[i] <= 'Z')
				p[i] += 'a' - 'A';
	for (i = 0; i < n; i++) {
		if (t->cls[p[i]] != A_PUNCT)
			continue;
		if (i > ws && wordpiece(t, p + ws, NULL, i - ws) == -1)
			return -1;
		if (wordpiece(t, p + i, NULL, 1) == -1)
			return -1;
		ws = i + 1;
	}
	if (n > ws && wordpiece(t, p + ws, NULL, n - ws) == -1)
		return -1;
	return 0;
}

/* Words of a[0..n) split at punctuation, each through wordpiece(). */
static int
split_punct(struct wp_tok *t, const uint32_t *a, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i + 1, k, nb = 0;

		if (!wp_is_punct(a[i]))
			while (j < n && !wp_is_punct(a[j]))
				j++;
		/* a[i..j) is one word */
		if (j - i > WP_MAX_WORD) {
			if (emit_unk(t) == -1)
				return -1;
			i = j;
			continue;
		}
		if (grow(&t->word, &t->wordcap, 4 * (j - i), 1) == -1 ||
		    grow(&t->woff, &t->woffcap, j - i + 1, sizeof *t->woff) == -1)
			return tok_error(t, "%s", strerror(errno));
		for (k = i; k < j; k++) {
			t->woff[k - i] = (uint32_t)nb;
			nb += (size_t)uni_utf8_encode(a[k], t->word + nb);
		}
		t->woff[j - i] = (uint32_t)nb;
		if (wordpiece(t, t->word, t->woff, j - i) == -1)
			return -1;
		i = j;
	}
	return 0;
}

/*
 * A basic token with non-ASCII code points: decode to t->a, lower()
 * into t->b, accent stripping back into t->a, then the split.
 */
static int
basic_general(struct wp_tok *t)
{
	size_t n = 0, m, i;
	uint32_t *a;

	if (grow(&t->a, &t->acap, t->toklen, sizeof *t->a) == -1)
		return tok_error(t, "%s", strerror(errno));
	for (i = 0; i < t->toklen;)
		i += (size_t)uni_utf8_decode(t->tok + i, t->toklen - i, &t->a[n++]);
	a = t->a;
	if (t->lower) {
		long r = uni_lower_str(a, n, &t->b, &t->bcap);

		if (r < 0)
			return tok_error(t, "%s", strerror(errno));
		a = t->b;
		n = (size_t)r;
	}
	if (t->strip) {
		uint32_t *src = a;
		long r;

		/* uni_nfd() writes to t->a, so lower()'s output must be in t->b. */
		if (src == t->a) {
			if (grow(&t->b, &t->bcap, n, sizeof *t->b) == -1)
				return tok_error(t, "%s", strerror(errno));
			memcpy(t->b, t->a, n * sizeof *t->a);
			src = t->b;
		}
		if ((r = uni_nfd(src, n, &t->a, &t->acap)) < 0)
			return tok_error(t, "%s", strerror(errno));
		for (i = m = 0; i < (size_t)r; i++)
			if (uni_category(t->a[i]) != UC_Mn)
				t->a[m++] = t->a[i];
		a = t->a;
		n = m;
	}
	return split_punct(t, a, n);
}

static int
flush(struct wp_tok *t)
{
	int r;

	if (t->toklen == 0)
		return 0;
	r = t->tokascii ? basic_ascii(t) : basic_general(t);
	t->toklen = 0;
	t->tokascii = 1;
	return r;
}

static int
is_control(const struct wp_tok *t, enum uni_cat c)
{
	if (t->electra)
		return c == UC_Cn || c == UC_Cc || c == UC_Cf || c == UC_Cs ||
		    c == UC_Co;
	return c == UC_Cc || c == UC_Cf;
}

/*
 * A CJK ideograph is a basic token of its own.  lower() leaves every
 * code point of the ranges alone and none is punctuation or Mn, so only
 * NFD can change it: the compatibility ideographs decompose to one
 * unified ideograph each.
 */
static int
cjk_word(struct wp_tok *t, uint32_t cp)
{
	uint8_t w[4];
	uint32_t off[2] = { 0, 0 };

	if (t->strip && ((cp >= 0xf900 && cp <= 0xfaff) || cp >= 0x2f800)) {
		uint32_t d[18];

		if (uni_decompose(cp, d, 18) != 1) {
			/* not a singleton: take the general path */
			t->toklen = (size_t)uni_utf8_encode(cp, t->tok);
			t->tokascii = 0;
			return flush(t);
		}
		cp = d[0];
	}
	off[1] = (uint32_t)uni_utf8_encode(cp, w);
	return wordpiece(t, w, off, 1);
}

long
wp_encode(struct wp_tok *t, const uint8_t *p, size_t n, int64_t **ids,
    size_t *cap)
{
	size_t i = 0;

	t->ids = ids;
	t->cap = cap;
	t->nids = 0;
	t->toklen = 0;
	t->tokascii = 1;
	t->err[0] = '\0';
	/* The token never holds more than the line. */
	if (grow(&t->tok, &t->tokcap, n + 4, 1) == -1)
		return tok_error(t, "%s", strerror(errno));
	while (i < n) {
		uint32_t cp;
		enum uni_cat c;
		int l;

		if (p[i] < 0x80) {
			switch (t->cls[p[i]]) {
			case A_SPACE:
				if (flush(t) == -1)
					return -1;
				break;
			case A_DROP:
				break;
			default:
				t->tok[t->toklen++] = p[i];
			}
			i++;
			continue;
		}
		if ((l = uni_utf8_decode(p + i, n - i, &cp)) == 0) {
			if (t->ignore_invalid) {
				i++;
				continue;
			}
			t->erroff = i;
			tok_error(t, "invalid UTF-8 at byte offset %zu", i);
			errno = EILSEQ;
			return -1;
		}
		c = uni_category(cp);
		if (cp == 0xfffd || is_control(t, c)) {
			/* dropped */
		} else if (c == UC_Zs || cp == 0x2028 || cp == 0x2029) {
			if (flush(t) == -1)
				return -1;
		} else if (wp_is_cjk(cp)) {
			if (flush(t) == -1 || cjk_word(t, cp) == -1)
				return -1;
		} else {
			memcpy(t->tok + t->toklen, p + i, (size_t)l);
			t->toklen += (size_t)l;
			t->tokascii = 0;
		}
		i += (size_t)l;
	}
	if (flush(t) == -1)
		return -1;
	return (long)t->nids;
}

/* ---------------------------------------------------------------- */
/* Decoding.                                                        */

long
wp_decode(const struct wp_vocab *v, const int64_t *ids, size_t n,
    char **out, size_t *cap, char *err, size_t errlen)
{
	size_t len = 0, i;

	for (i = 0; i < n; i++) {
		const char *s;
		size_t l;

		if ((s = wp_piece(v, ids[i], &l)) == NULL) {
			rp_seterr(err, errlen, "id %lld out of range (vocab has "
			    "%zu entries)", (long long)ids[i], v->n);
			return -1;
		}
		if (i > 0 && l >= 2 && s[0] == '#' && s[1] == '#') {
			s += 2;
			l -= 2;
		} else if (i > 0) {
			if (grow(out, cap, len + 1, 1) == -1)
				goto nomem;
			(*out)[len++] = ' ';
		}
		if (grow(out, cap, len + l + 1, 1) == -1)
			goto nomem;
		memcpy(*out + len, s, l);
		len += l;
	}
	if (grow(out, cap, len + 1, 1) == -1)
		goto nomem;
	(*out)[len] = '\0';
	return (long)len;
nomem:
	rp_seterr(err, errlen, "%s", strerror(errno));
	return -1;
}
