/*
 * tensor2tensor's SubwordTextEncoder: lines, strip, tokenizer, escaping,
 * vocabulary files, encoding and decoding.  The build is in
 * subword_build.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "buf.h"
#include "subword.h"
#include "subword_int.h"
#include "unicode.h"

/* ---- helpers ---------------------------------------------------------- */

static unsigned char hkey[crypto_shorthash_KEYBYTES];
static int hkey_ready;

void
sw_hash_init(void)
{
	if (hkey_ready)
		return;
	/* Without a working RNG the key stays fixed (all zero). */
	if (sodium_init() >= 0)
		randombytes_buf(hkey, sizeof(hkey));
	hkey_ready = 1;
}

uint64_t
sw_hash(const void *p, size_t n)
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h;

	crypto_shorthash(out, p, n, hkey);
	memcpy(&h, out, sizeof(h));
	return h;
}

int
sw_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	void *q;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size) {
			errno = ENOMEM;
			return -1;
		}
		ncap *= 2;
	}
	if ((q = realloc(*p, ncap * size)) == NULL)
		return -1;
	*p = q;
	*cap = ncap;
	return 0;
}

int
sw_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->len + n < b->len) {
		errno = ENOMEM;
		return -1;
	}
	if (sw_grow(&b->p, &b->cap, b->len + n, 1) == -1)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static void
seterr(struct sw_err *e, uint64_t line, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return;
	e->line = line;
	e->offset = off;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* ---- trie ------------------------------------------------------------- */

int
sw_trie_init(struct sw_trie *t, size_t hint)
{
	size_t cap = 64;

	sw_hash_init();
	memset(t, 0, sizeof(*t));
	while (cap < hint * 2 && cap < ((size_t)1 << 40))
		cap *= 2;
	t->key = calloc(cap, sizeof(*t->key));
	t->val = malloc(cap * sizeof(*t->val));
	if (t->key == NULL || t->val == NULL) {
		free(t->key);
		free(t->val);
		t->key = NULL;
		t->val = NULL;
		return -1;
	}
	t->cap = cap;
	t->nnodes = 1;
	return 0;
}

void
sw_trie_free(struct sw_trie *t)
{
	free(t->key);
	free(t->val);
	t->key = NULL;
	t->val = NULL;
	t->cap = t->nedges = 0;
}

uint32_t
sw_trie_child(const struct sw_trie *t, uint32_t node, uint8_t b)
{
	uint64_t k;
	size_t i, mask;

	if (node == 0)
		return t->root[b];
	k = ((uint64_t)node << 8 | b) + 1;
	mask = t->cap - 1;
	for (i = sw_hash(&k, sizeof(k)) & mask; t->key[i] != 0; i = (i + 1) & mask)
		if (t->key[i] == k)
			return t->val[i];
	return 0;
}

static int
trie_rehash(struct sw_trie *t)
{
	uint64_t *nk;
	uint32_t *nv;
	size_t ncap = t->cap * 2, i, j, mask = ncap - 1;

	nk = calloc(ncap, sizeof(*nk));
	nv = malloc(ncap * sizeof(*nv));
	if (nk == NULL || nv == NULL) {
		free(nk);
		free(nv);
		return -1;
	}
	for (i = 0; i < t->cap; i++) {
		if (t->key[i] == 0)
			continue;
		for (j = sw_hash(&t->key[i], sizeof(t->key[i])) & mask; nk[j] != 0;
		    j = (j + 1) & mask)
			;
		nk[j] = t->key[i];
		nv[j] = t->val[i];
	}
	free(t->key);
	free(t->val);
	t->key = nk;
	t->val = nv;
	t->cap = ncap;
	return 0;
}

uint32_t
sw_trie_add(struct sw_trie *t, uint32_t node, uint8_t b, int *created)
{
	uint64_t k;
	size_t i, mask;

	*created = 0;
	if (t->nnodes == UINT32_MAX) {
		errno = E2BIG;
		return 0;
	}
	if (node == 0) {
		if (t->root[b] == 0) {
			t->root[b] = t->nnodes++;
			*created = 1;
		}
		return t->root[b];
	}
	k = ((uint64_t)node << 8 | b) + 1;
	mask = t->cap - 1;
	for (i = sw_hash(&k, sizeof(k)) & mask; t->key[i] != 0; i = (i + 1) & mask)
		if (t->key[i] == k)
			return t->val[i];
	if ((t->nedges + 1) * 4 > t->cap * 3) {
		if (trie_rehash(t) == -1)
			return 0;
		mask = t->cap - 1;
		for (i = sw_hash(&k, sizeof(k)) & mask; t->key[i] != 0;
		    i = (i + 1) & mask)
			;
	}
	t->key[i] = k;
	t->val[i] = t->nnodes++;
	t->nedges++;
	*created = 1;
	return t->val[i];
}

/* ---- strip and code points --------------------------------------------- */

static const uint8_t ascii_space[128] = {
	[0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1,
	[0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1, [0x20] = 1,
};

static const uint8_t ascii_alnum[128] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

void
sw_strip(const uint8_t **pp, size_t *np)
{
	const uint8_t *p = *pp;
	size_t n = *np;
	uint32_t cp;
	int k;

	while (n > 0) {
		if (p[0] < 0x80) {
			if (!ascii_space[p[0]])
				break;
			p++;
			n--;
			continue;
		}
		k = sw_u8(p, &cp);
		if (!uni_is_pyspace(cp))
			break;
		p += k;
		n -= (size_t)k;
	}
	*pp = p;
	*np = n;
	sw_rstrip(p, np);
}

void
sw_rstrip(const uint8_t *p, size_t *np)
{
	size_t n = *np, i;
	uint32_t cp;

	while (n > 0) {
		if (p[n - 1] < 0x80) {
			if (!ascii_space[p[n - 1]])
				break;
			n--;
			continue;
		}
		for (i = n - 1; i > 0 && (p[i] & 0xC0) == 0x80; i--)
			;
		sw_u8(p + i, &cp);
		if (!uni_is_pyspace(cp))
			break;
		n = i;
	}
	*np = n;
}

size_t
sw_cplen(const uint8_t *p, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += (p[i] & 0xC0) != 0x80;
	return c;
}

/* ---- lines ------------------------------------------------------------ */

struct sw_lines {
	int		 fd;
	int		 borrowed;	/* buf is the caller's */
	int		 eof;
	uint8_t		*buf;
	size_t		 cap, start, end;
	uint64_t	 base;		/* file offset of buf[0] */
	uint64_t	 lineno;
	uint8_t		*tmp;		/* line with '\r' deleted */
	size_t		 tmpcap;
};

struct sw_lines *
sw_lines_open(int fd)
{
	struct sw_lines *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->fd = fd;
	r->cap = 1 << 20;
	if ((r->buf = malloc(r->cap)) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

struct sw_lines *
sw_lines_open_buf(uint8_t *p, size_t n)
{
	struct sw_lines *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		free(p);
		return NULL;
	}
	r->fd = -1;
	r->eof = 1;
	r->buf = p;
	r->cap = r->end = n;
	return r;
}

struct sw_lines *
sw_lines_open_mem(const uint8_t *p, size_t n)
{
	struct sw_lines *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->fd = -1;
	r->eof = 1;
	r->borrowed = 1;
	r->buf = (uint8_t *)(uintptr_t)p;
	r->cap = r->end = n;
	return r;
}

void
sw_lines_free(struct sw_lines *r)
{
	if (r == NULL)
		return;
	if (!r->borrowed)
		free(r->buf);
	free(r->tmp);
	free(r);
}

uint64_t
sw_lines_lineno(const struct sw_lines *r)
{
	return r->lineno;
}

static int
lines_fill(struct sw_lines *r)
{
	ssize_t k;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->base += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap) {
		uint8_t *nb;

		if (r->cap > SIZE_MAX / 2) {
			errno = ENOMEM;
			return -1;
		}
		if ((nb = realloc(r->buf, r->cap * 2)) == NULL)
			return -1;
		r->buf = nb;
		r->cap *= 2;
	}
	do
		k = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (k == -1 && errno == EINTR);
	if (k == -1)
		return -1;
	if (k == 0)
		r->eof = 1;
	r->end += (size_t)k;
	return 0;
}

int
sw_lines_next(struct sw_lines *r, const uint8_t **pp, size_t *np, int *nl,
    struct sw_err *e)
{
	const uint8_t *p, *q;
	size_t n, scan = 0, i, j, good;
	uint64_t off;

	for (;;) {
		p = r->buf + r->start;
		q = r->end - r->start > scan ?
		    memchr(p + scan, '\n', r->end - r->start - scan) : NULL;
		if (q != NULL) {
			n = (size_t)(q - p);
			*nl = 1;
			break;
		}
		scan = r->end - r->start;
		if (r->eof) {
			n = scan;
			*nl = 0;
			for (i = 0; i < n && p[i] == '\r'; i++)
				;
			if (i == n) {
				r->start = r->end;
				return 0;
			}
			break;
		}
		if (lines_fill(r) == -1)
			return -1;
	}
	off = r->base + r->start;
	r->start += n + (size_t)*nl;
	if (memchr(p, '\r', n) != NULL) {
		if (sw_grow(&r->tmp, &r->tmpcap, n, 1) == -1)
			return -1;
		for (i = j = 0; i < n; i++)
			if (p[i] != '\r')
				r->tmp[j++] = p[i];
		good = utf8_valid_prefix(r->tmp, j);
		if (good < j) {
			/* Map the offset back to the line as it is on disk. */
			for (i = 0; good > 0 || p[i] == '\r'; i++)
				if (p[i] != '\r')
					good--;
			seterr(e, r->lineno + 1, off + i,
			    "line %ju: invalid UTF-8 at byte offset %ju",
			    (uintmax_t)(r->lineno + 1), (uintmax_t)(off + i));
			return -2;
		}
		p = r->tmp;
		n = j;
	} else if ((good = utf8_valid_prefix(p, n)) < n) {
		seterr(e, r->lineno + 1, off + good,
		    "line %ju: invalid UTF-8 at byte offset %ju",
		    (uintmax_t)(r->lineno + 1), (uintmax_t)(off + good));
		return -2;
	}
	r->lineno++;
	*pp = p;
	*np = n;
	return 1;
}

/* ---- tokenizer -------------------------------------------------------- */

static inline int
is_alnum_at(const uint8_t *p, int *len)
{
	uint32_t cp;

	if (p[0] < 0x80) {
		*len = 1;
		return ascii_alnum[p[0]];
	}
	*len = sw_u8(p, &cp);
	return uni_is_alnum(cp);
}

long
sw_tokenize(const uint8_t *p, size_t n, struct sw_span **spans, size_t *cap)
{
	size_t i, start = 0, nt = 0;
	int a, prev, k;

	if (n == 0)
		return 0;
	if (n > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	prev = is_alnum_at(p, &k);
	i = (size_t)k;
	for (;;) {
		/* The rest of an ASCII run of the same class. */
		while (i < n && p[i] < 0x80 && ascii_alnum[p[i]] == prev)
			i++;
		if (i >= n)
			break;
		a = is_alnum_at(p + i, &k);
		if (a == prev) {
			i += (size_t)k;
			continue;
		}
		if (!(i - start == 1 && p[start] == ' ' && start != 0)) {
			if (nt == *cap && sw_grow(spans, cap, nt + 1,
			    sizeof(**spans)) == -1)
				return -1;
			(*spans)[nt].off = (uint32_t)start;
			(*spans)[nt].len = (uint32_t)(i - start);
			nt++;
		}
		start = i;
		prev = a;
		i += (size_t)k;
	}
	if (nt == *cap && sw_grow(spans, cap, nt + 1, sizeof(**spans)) == -1)
		return -1;
	(*spans)[nt].off = (uint32_t)start;
	(*spans)[nt].len = (uint32_t)(n - start);
	return (long)(nt + 1);
}

/* ---- vocabulary ------------------------------------------------------- */

/*
 * The token cache: 4-way sets of one cache line each slot, holding short
 * tokens and their ids inline.  It is bounded, so a flood of colliding
 * tokens can only make it miss; a fast seeded hash is enough.
 */
#define CACHE_SETS	(1u << 14)
#define CACHE_WAYS	4
#define CACHE_TOK	24
#define CACHE_IDS	8

/* A small direct-mapped front cache for the hottest short tokens. */
#define HOT_SLOTS	(1u << 13)
#define HOT_TOK		14
#define HOT_IDS		3

struct hslot {
	uint32_t	 h;
	uint8_t		 tlen;		/* 0: empty */
	uint8_t		 nids;
	uint8_t		 tok[HOT_TOK];
	int32_t		 ids[HOT_IDS];
};

struct cslot {
	uint32_t	 h;
	uint8_t		 tlen;		/* 0: empty */
	uint8_t		 nids;
	uint8_t		 pad[2];
	uint8_t		 tok[CACHE_TOK];
	int32_t		 ids[CACHE_IDS];
};

struct sw_vocab {
	size_t		 n;
	uint8_t		*pool;
	size_t		*off;		/* n + 1 offsets */
	struct sw_trie	 trie;
	int32_t		*term;		/* per trie node: id, or -1 */
	size_t		 termcap;
	uint8_t		 ascii[128];	/* encode alphabet, ASCII part */
	uint32_t	*alpha;		/* the rest, sorted */
	size_t		 nalpha;
	uint8_t		*bmp;		/* the alphabet's BMP code points, a bit each */
	/* Nodes with many children also get a direct table: dense[node] - 1. */
	uint32_t	*dense;
	uint32_t	(*dtab)[256];
	size_t		 ndtab;
	struct cslot	*cache;		/* CACHE_SETS * CACHE_WAYS, or NULL */
	struct hslot	*hot;		/* HOT_SLOTS */
	uint64_t	 seed;
	/* The trie in compact form: children of node i are edges cfirst[i] .. cfirst[i + 1]. */
	uint32_t	*cfirst;
	uint8_t		*ebyte;
	uint32_t	*echild;
	uint32_t	 root[256];
	struct buf	 esc;		/* scratch */
	struct buf	 tmp;
	struct sw_span	*spans;
	size_t		 spancap;
};

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
in_alpha(const struct sw_vocab *v, uint32_t cp)
{
	size_t lo = 0, hi = v->nalpha, mid;

	if (cp < 128)
		return v->ascii[cp];
	if (cp < 0x10000)
		return (v->bmp[cp >> 3] >> (cp & 7)) & 1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v->alpha[mid] == cp)
			return 1;
		if (v->alpha[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Turn the hashed trie into sorted child arrays: matching then needs no
 * hashing at all.
 */
static int
vocab_compact(struct sw_vocab *v)
{
	uint32_t nn = v->trie.nnodes, *pos, parent, c, k;
	size_t i, ne = v->trie.nedges;
	uint8_t b;

	v->cfirst = calloc((size_t)nn + 1, sizeof(*v->cfirst));
	v->ebyte = malloc(ne ? ne : 1);
	v->echild = malloc((ne ? ne : 1) * sizeof(*v->echild));
	pos = malloc(((size_t)nn + 1) * sizeof(*pos));
	if (!v->cfirst || !v->ebyte || !v->echild || !pos) {
		free(pos);
		return -1;
	}
	for (i = 0; i < v->trie.cap; i++)
		if (v->trie.key[i] != 0)
			v->cfirst[((v->trie.key[i] - 1) >> 8) + 1]++;
	for (k = 0; k < nn; k++)
		v->cfirst[k + 1] += v->cfirst[k];
	memcpy(pos, v->cfirst, ((size_t)nn + 1) * sizeof(*pos));
	for (i = 0; i < v->trie.cap; i++) {
		if (v->trie.key[i] == 0)
			continue;
		parent = (uint32_t)((v->trie.key[i] - 1) >> 8);
		b = (uint8_t)((v->trie.key[i] - 1) & 0xFF);
		/* Insertion keeps each node's edges sorted by byte. */
		for (k = pos[parent]++; k > v->cfirst[parent] && v->ebyte[k - 1] > b; k--) {
			v->ebyte[k] = v->ebyte[k - 1];
			v->echild[k] = v->echild[k - 1];
		}
		v->ebyte[k] = b;
		v->echild[k] = v->trie.val[i];
	}
	free(pos);
	memcpy(v->root, v->trie.root, sizeof(v->root));
	sw_trie_free(&v->trie);
	(void)c;
	/* Direct tables for nodes of more than 16 children. */
	for (k = 1; k < nn; k++)
		v->ndtab += v->cfirst[k + 1] - v->cfirst[k] > 16;
	if (v->ndtab > 0) {
		size_t d = 0;

		v->dense = calloc(nn, sizeof(*v->dense));
		v->dtab = calloc(v->ndtab, sizeof(*v->dtab));
		if (v->dense == NULL || v->dtab == NULL)
			return -1;
		for (k = 1; k < nn; k++) {
			uint32_t e;

			if (v->cfirst[k + 1] - v->cfirst[k] <= 16)
				continue;
			for (e = v->cfirst[k]; e < v->cfirst[k + 1]; e++)
				v->dtab[d][v->ebyte[e]] = v->echild[e];
			v->dense[k] = (uint32_t)++d;
		}
	}
	return 0;
}

static inline uint32_t
vchild(const struct sw_vocab *v, uint32_t node, uint8_t b)
{
	uint32_t lo, hi, mid;

	if (node == 0)
		return v->root[b];
	if (v->dense != NULL && v->dense[node] != 0)
		return v->dtab[v->dense[node] - 1][b];
	lo = v->cfirst[node];
	hi = v->cfirst[node + 1];
	while (hi - lo > 8) {
		mid = lo + (hi - lo) / 2;
		if (v->ebyte[mid] < b)
			lo = mid + 1;
		else
			hi = mid + 1;
	}
	for (; lo < hi; lo++)
		if (v->ebyte[lo] >= b)
			return v->ebyte[lo] == b ? v->echild[lo] : 0;
	return 0;
}

/* Index the entries already in v->pool/v->off: trie, alphabet. */
static int
vocab_index(struct sw_vocab *v)
{
	static const char escchars[] = "\\_u;0123456789";
	size_t id, i, acap = 0, j;
	uint32_t node, cp;
	int created, k;

	if (sw_trie_init(&v->trie, v->off[v->n] + 16) == -1)
		return -1;
	v->seed = sw_hash("cache seed", 10);
	for (i = 0; escchars[i] != '\0'; i++)
		v->ascii[(uint8_t)escchars[i]] = 1;
	for (id = 0; id < v->n; id++) {
		const uint8_t *s = v->pool + v->off[id];
		size_t len = v->off[id + 1] - v->off[id];

		node = 0;
		for (i = 0; i < len; i++) {
			node = sw_trie_add(&v->trie, node, s[i], &created);
			if (node == 0)
				return -1;
			if (sw_grow(&v->term, &v->termcap, v->trie.nnodes,
			    sizeof(*v->term)) == -1)
				return -1;
			if (created)
				v->term[node] = -1;
		}
		if (len > 0) {
			if (id > INT32_MAX) {
				errno = E2BIG;
				return -1;
			}
			v->term[node] = (int32_t)id;
		}
		for (i = 0; i < len; i += (size_t)k) {
			k = sw_u8(s + i, &cp);
			if (cp < 128) {
				v->ascii[cp] = 1;
				continue;
			}
			if (sw_grow(&v->alpha, &acap, v->nalpha + 1,
			    sizeof(*v->alpha)) == -1)
				return -1;
			v->alpha[v->nalpha++] = cp;
		}
	}
	if (v->nalpha > 0) {
		qsort(v->alpha, v->nalpha, sizeof(*v->alpha), cmp_u32);
		for (i = j = 1; i < v->nalpha; i++)
			if (v->alpha[i] != v->alpha[j - 1])
				v->alpha[j++] = v->alpha[i];
		v->nalpha = j;
	}
	if ((v->bmp = calloc(0x10000 / 8, 1)) == NULL)
		return -1;
	for (i = 0; i < v->nalpha && v->alpha[i] < 0x10000; i++)
		v->bmp[v->alpha[i] >> 3] |= (uint8_t)(1u << (v->alpha[i] & 7));
	return vocab_compact(v);
}

struct sw_vocab *
sw_vocab_from_list(const uint8_t *const *ent, const size_t *len, size_t n)
{
	struct sw_vocab *v;
	size_t i, total = 0;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < n; i++)
		total += len[i];
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return NULL;
	v->n = n;
	v->pool = malloc(total ? total : 1);
	v->off = malloc((n + 1) * sizeof(*v->off));
	if (v->pool == NULL || v->off == NULL)
		goto fail;
	total = 0;
	for (i = 0; i < n; i++) {
		v->off[i] = total;
		if (len[i] > 0)
			memcpy(v->pool + total, ent[i], len[i]);
		total += len[i];
	}
	v->off[n] = total;
	if (vocab_index(v) == -1)
		goto fail;
	return v;
fail:
	sw_vocab_free(v);
	return NULL;
}

struct sw_vocab *
sw_vocab_parse(const uint8_t *p, size_t n, struct sw_err *e)
{
	struct sw_vocab *v;
	size_t pos = 0, lineno = 0, raw, len, i, j, k, good, ocap = 0;
	const uint8_t *q, *line;
	uint8_t *d;
	int nl;

	if ((v = calloc(1, sizeof(*v))) == NULL ||
	    (v->pool = malloc(n ? n : 1)) == NULL ||
	    sw_grow(&v->off, &ocap, 1, sizeof(*v->off)) == -1)
		goto oom;
	v->off[0] = 0;
	while (pos < n) {
		line = p + pos;
		q = memchr(line, '\n', n - pos);
		raw = q ? (size_t)(q - line) : n - pos;
		nl = q != NULL;
		lineno++;
		/* Copy without '\r' into the pool, then check UTF-8 there. */
		i = v->off[v->n];
		d = v->pool + i;
		for (k = j = 0; k < raw; k++)
			if (line[k] != '\r')
				d[j++] = line[k];
		if (!nl && j == 0)
			break;
		if ((good = utf8_valid_prefix(d, j)) < j) {
			for (k = 0; good > 0 || line[k] == '\r'; k++)
				if (line[k] != '\r')
					good--;
			seterr(e, lineno, pos + k,
			    "line %zu: invalid UTF-8 at byte offset %zu",
			    lineno, pos + k);
			sw_vocab_free(v);
			return NULL;
		}
		len = j;
		sw_rstrip(d, &len);
		if (len >= 2 && ((d[0] == '\'' && d[len - 1] == '\'') ||
		    (d[0] == '"' && d[len - 1] == '"'))) {
			memmove(d, d + 1, len - 2);
			len -= 2;
		} else if (len == 1 && (d[0] == '\'' || d[0] == '"'))
			len = 0;
		if (sw_grow(&v->off, &ocap, v->n + 2, sizeof(*v->off)) == -1)
			goto oom;
		v->off[v->n + 1] = i + len;
		v->n++;
		pos += raw + (size_t)nl;
	}
	if (v->n == 0) {
		seterr(e, 0, 0, "empty vocabulary");
		sw_vocab_free(v);
		return NULL;
	}
	if (vocab_index(v) == -1)
		goto oom;
	return v;
oom:
	seterr(e, 0, 0, "%s", strerror(errno));
	sw_vocab_free(v);
	return NULL;
}

struct sw_vocab *
sw_vocab_load(int fd, struct sw_err *e)
{
	struct sw_vocab *v;
	uint8_t *p = NULL;
	size_t n = 0, cap = 0;
	ssize_t k;

	for (;;) {
		if (sw_grow(&p, &cap, n + 65536, 1) == -1) {
			seterr(e, 0, 0, "%s", strerror(errno));
			free(p);
			return NULL;
		}
		k = read(fd, p + n, cap - n);
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1) {
			seterr(e, 0, 0, "%s", strerror(errno));
			free(p);
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	v = sw_vocab_parse(p, n, e);
	free(p);
	return v;
}

void
sw_vocab_free(struct sw_vocab *v)
{
	size_t i;

	if (v == NULL)
		return;
	(void)i;
	free(v->cache);
	free(v->hot);
	free(v->bmp);
	free(v->dense);
	free(v->dtab);
	free(v->cfirst);
	free(v->ebyte);
	free(v->echild);
	sw_trie_free(&v->trie);
	free(v->term);
	free(v->alpha);
	free(v->pool);
	free(v->off);
	free(v->esc.p);
	free(v->tmp.p);
	free(v->spans);
	free(v);
}

size_t
sw_vocab_size(const struct sw_vocab *v)
{
	return v->n;
}

const uint8_t *
sw_vocab_entry(const struct sw_vocab *v, int64_t id, size_t *len)
{
	if (id < 0 || (uint64_t)id >= v->n)
		return NULL;
	*len = v->off[id + 1] - v->off[id];
	return v->pool + v->off[id];
}

int
sw_vocab_store(const struct sw_vocab *v, struct buf *out)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (sw_put(out, "'", 1) == -1 ||
		    sw_put(out, v->pool + v->off[i], v->off[i + 1] - v->off[i]) == -1 ||
		    sw_put(out, "'\n", 2) == -1)
			return -1;
	return 0;
}

/* ---- escaping --------------------------------------------------------- */

int
sw_escape(const struct sw_vocab *v, const uint8_t *p, size_t n, struct buf *out)
{
	size_t i, run = 0;
	uint32_t cp;
	char num[16];
	int k, m;

	for (i = 0; i < n; i += (size_t)k) {
		if (p[i] < 0x80) {
			k = 1;
			cp = p[i];
			if (cp != '\\' && cp != '_' && cp != '\n' && v->ascii[cp]) {
				run++;
				continue;
			}
		} else {
			k = sw_u8(p + i, &cp);
			if (in_alpha(v, cp)) {
				run += (size_t)k;
				continue;
			}
		}
		if (sw_put(out, p + i - run, run) == -1)
			return -1;
		run = 0;
		if (cp == '\\')
			m = snprintf(num, sizeof(num), "\\\\");
		else if (cp == '_')
			m = snprintf(num, sizeof(num), "\\u");
		else
			m = snprintf(num, sizeof(num), "\\%u;", (unsigned)cp);
		if (sw_put(out, num, (size_t)m) == -1)
			return -1;
	}
	if (sw_put(out, p + i - run, run) == -1)
		return -1;
	return sw_put(out, "_", 1);
}

static int
put_cp(struct buf *out, uint32_t cp)
{
	uint8_t b[4];

	return sw_put(out, b, (size_t)utf8_encode(cp, b));
}

int
sw_unescape(const uint8_t *p, size_t n, struct buf *out)
{
	size_t i = 0, run = 0, j;
	uint64_t num;
	int big;

	if (n > 0 && p[n - 1] == '_')
		n--;
	while (i < n) {
		if (p[i] != '\\' || i + 1 >= n) {
			run++;
			i++;
			continue;
		}
		if (p[i + 1] == 'u' || p[i + 1] == '\\') {
			if (sw_put(out, p + i - run, run) == -1 ||
			    sw_put(out, p[i + 1] == 'u' ? "_" : "\\", 1) == -1)
				return -1;
			run = 0;
			i += 2;
			continue;
		}
		num = 0;
		big = 0;
		for (j = i + 1; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
			if (num > 0x10FFFF)
				big = 1;
			else
				num = num * 10 + (p[j] - '0');
		}
		if (j == i + 1 || j >= n || p[j] != ';') {
			run++;
			i++;
			continue;
		}
		if (sw_put(out, p + i - run, run) == -1)
			return -1;
		run = 0;
		if (big || num > 0x10FFFF)
			num = 0x3013;
		else if (num >= 0xD800 && num <= 0xDFFF)
			num = 0xFFFD;
		if (put_cp(out, (uint32_t)num) == -1)
			return -1;
		i = j + 1;
	}
	return sw_put(out, p + i - run, run);
}

/* ---- encoding --------------------------------------------------------- */

size_t
sw_vocab_longest(const struct sw_vocab *v, const uint8_t *e, size_t n)
{
	size_t i, end = 0;
	uint32_t node = 0;

	for (i = 0; i < n; i++) {
		if ((node = vchild(v, node, e[i])) == 0)
			break;
		if (v->term[node] >= 0)
			end = i + 1;
	}
	return end;
}

/* Greedy longest match of the escaped token e[0..n), ids appended. */
static int
segment(const struct sw_vocab *v, const uint8_t *e, size_t n, int32_t **ids,
    size_t *nids, size_t *cap, struct sw_err *err)
{
	size_t s = 0, i, end;
	uint32_t node;
	int32_t id;

	while (s < n) {
		node = 0;
		id = -1;
		end = s;
		for (i = s; i < n; i++) {
			if ((node = vchild(v, node, e[i])) == 0)
				break;
			if (v->term[node] >= 0) {
				id = v->term[node];
				end = i + 1;
			}
		}
		if (id < 0) {
			seterr(err, 0, 0, "corrupt vocabulary: it cannot spell "
			    "the escaped token '%.*s'", (int)(n > 80 ? 80 : n), e);
			return -1;
		}
		if (*nids == *cap && sw_grow(ids, cap, *nids + 1, sizeof(**ids)) == -1)
			return -1;
		(*ids)[(*nids)++] = id;
		s = end;
	}
	return 0;
}

/* A fast seeded hash for the bounded token cache. */
static inline uint64_t
fast_hash(const uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ULL), w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
		h ^= h >> 29;
	}
	h *= 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 32);
}

static int
encode_token(struct sw_vocab *v, const uint8_t *t, size_t n, int32_t **ids,
    size_t *nids, size_t *cap, struct sw_err *e)
{
	struct cslot *set = NULL, *sl;
	struct hslot *hs;
	size_t first = *nids, k;
	uint64_t h = 0;
	uint32_t h32 = 0;
	int w;

	if (n <= CACHE_TOK) {
		if (v->cache == NULL) {
			v->cache = calloc((size_t)CACHE_SETS * CACHE_WAYS,
			    sizeof(*v->cache));
			v->hot = calloc(HOT_SLOTS, sizeof(*v->hot));
			if (v->cache == NULL || v->hot == NULL)
				return -1;
		}
		h = fast_hash(t, n, v->seed);
		h32 = (uint32_t)(h >> 32);
		if (*nids + CACHE_IDS > *cap && sw_grow(ids, cap, *nids + CACHE_IDS,
		    sizeof(**ids)) == -1)
			return -1;
		hs = &v->hot[(h >> 14) & (HOT_SLOTS - 1)];
		if (hs->h == h32 && hs->tlen == n && memcmp(hs->tok, t, n) == 0) {
			memcpy(*ids + *nids, hs->ids, HOT_IDS * sizeof(int32_t));
			*nids += hs->nids;
			return 0;
		}
		set = v->cache + (h & (CACHE_SETS - 1)) * CACHE_WAYS;
		for (w = 0; w < CACHE_WAYS; w++) {
			sl = set + w;
			if (sl->h == h32 && sl->tlen == n &&
			    memcmp(sl->tok, t, n) == 0) {
				memcpy(*ids + *nids, sl->ids, sl->nids * sizeof(int32_t));
				*nids += sl->nids;
				if (n <= HOT_TOK && sl->nids <= HOT_IDS) {
					hs->h = h32;
					hs->tlen = (uint8_t)n;
					hs->nids = sl->nids;
					memcpy(hs->tok, t, n);
					memcpy(hs->ids, sl->ids, HOT_IDS * sizeof(int32_t));
				}
				return 0;
			}
		}
	}
	v->esc.len = 0;
	if (sw_escape(v, t, n, &v->esc) == -1)
		return -1;
	if (segment(v, v->esc.p, v->esc.len, ids, nids, cap, e) == -1)
		return -1;
	k = *nids - first;
	if (set != NULL && k <= CACHE_IDS) {
		for (w = 0; w < CACHE_WAYS && set[w].tlen != 0; w++)
			;
		sl = set + (w < CACHE_WAYS ? w : (int)((h >> 20) % CACHE_WAYS));
		sl->h = h32;
		sl->tlen = (uint8_t)n;
		sl->nids = (uint8_t)k;
		memcpy(sl->tok, t, n);
		memcpy(sl->ids, *ids + first, k * sizeof(int32_t));
	}
	return 0;
}

int
sw_encode(struct sw_vocab *v, const uint8_t *p, size_t n, int32_t **ids,
    size_t *nids, size_t *cap, struct sw_err *e)
{
	long nt, i;

	if ((nt = sw_tokenize(p, n, &v->spans, &v->spancap)) == -1) {
		seterr(e, 0, 0, "%s", strerror(errno));
		return -1;
	}
	for (i = 0; i < nt; i++)
		if (encode_token(v, p + v->spans[i].off, v->spans[i].len, ids,
		    nids, cap, e) == -1) {
			if (errno == ENOMEM)
				seterr(e, 0, 0, "%s", strerror(errno));
			return -1;
		}
	return 0;
}

/* ---- decoding --------------------------------------------------------- */

int
sw_decode(const struct sw_vocab *v, const int64_t *ids, size_t n,
    int strip_extraneous, struct buf *out)
{
	struct buf cat = { 0 }, tok = { 0 };
	size_t i, start, end;
	int prev = 0, cur, k, rc = -1;

	if (strip_extraneous)
		while (n > 0 && (ids[n - 1] == 0 || ids[n - 1] == 1))
			n--;
	for (i = 0; i < n; i++)
		if (ids[i] >= 0 && (uint64_t)ids[i] < v->n &&
		    sw_put(&cat, v->pool + v->off[ids[i]],
		    v->off[ids[i] + 1] - v->off[ids[i]]) == -1)
			goto out;
	for (start = 0; start < cat.len; start = end + 1) {
		const uint8_t *u = memchr(cat.p + start, '_', cat.len - start);

		end = u ? (size_t)(u - cat.p) : cat.len;
		if (end == start)
			continue;
		tok.len = 0;
		if (sw_unescape(cat.p + start, end - start, &tok) == -1)
			goto out;
		if (tok.len == 0)
			continue;
		cur = is_alnum_at(tok.p, &k);
		if (prev && cur && sw_put(out, " ", 1) == -1)
			goto out;
		if (sw_put(out, tok.p, tok.len) == -1)
			goto out;
		prev = cur;
	}
	rc = 0;
out:
	free(cat.p);
	free(tok.p);
	return rc;
}
