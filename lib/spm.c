/*
 * SentencePiece models: the ModelProto reader, piece tables and the
 * load-time checks, the normalizer, the encoders and the decoder.
 *
 * The model file is read whole and kept (owned by the model): pieces
 * point into it.  Pieces are found through two hash tables (the
 * reserved pieces and the others, as PieceToId() looks them up); the
 * unigram lattice walks a double array built from a byte trie at load
 * time, and user-defined pieces are matched through a trie of their
 * own.  An encoder owns its scratch and a cache of recent words (see
 * struct sc_ent); tokens it returns point into its normalized line or
 * into the model.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buf.h"
#include "errmsg.h"
#include "spm.h"
#include "unicode.h"

static const char SPACE_SYM[] = "\xe2\x96\x81";		/* U+2581 */
static const char REPLACEMENT[] = "\xef\xbf\xbd";	/* U+FFFD */
static const char DEFAULT_UNK_SURFACE[] = " \xe2\x81\x87 ";

/* 16 bytes a piece: a piece's text is shorter than SPM_MAX_PIECE. */
#define SPM_MAX_PIECE	(1u << 24)

struct spm_piece {
	const char	*s;
	uint32_t	 len : 24;
	uint32_t	 type : 8;
	float		 score;
};

/* A string -> id hash table (open addressing; slot = id + 1, 0 empty). */
struct strtab {
	uint32_t	*slot;
	size_t		 size;		/* at most three quarters full */
};

/* A byte trie: child of (node, byte) in an open-addressing table. */
struct trie {
	int32_t		*val;		/* per node: piece id, or -1 */
	size_t		 nnodes, capnodes;
	uint64_t	*key;		/* (node << 8 | byte) + 1; 0 empty */
	uint32_t	*child;
	size_t		 mask, used;
	uint32_t	 root[256];	/* children of the root (0: none) */
};

/*
 * The unigram lattice's piece trie as a double array of 4-byte cells:
 * the child of the node at cell p by byte c is the cell base ^ c (base
 * = u >> 9 of p, so a node's children share its block of 256 cells, as
 * in darts-clone) when that cell's label (u & 0x1ff) is c + 1 (0: a
 * free cell).  A node that is a piece's key keeps the piece id in the
 * cell base ^ 0 (no key holds a NUL, so no child is there), labelled
 * DA_VALUE: id << 9 | DA_VALUE.  No two nodes share a base, so the
 * label is check enough; base 0 is a node's with neither (an UNUSED
 * piece's), whose cell 0 is the root's, labelled DA_ROOT.  Every base's
 * block is inside the array, so a walk needs no bounds check.
 */
#define DA_MAXBASE	((1u << 23) - 256)
#define DA_VALUE	0x1ffu
#define DA_ROOT		0x1feu
#define DA_MAXID	((1u << 23) - 1)

struct darray {
	uint32_t	*u;
	size_t		 size;
};

/* A two-byte character's normalized form (struct norm's f2). */
struct fast2 {
	const char	*out;		/* NULL: the character itself */
	uint8_t		 len, ok, klo, khi;
};

/* A compiled normalization rule (precompiled_charsmap) and its flags. */
struct norm {
	uint32_t	*units;		/* darts-clone double array */
	size_t		 nunits;
	const char	*str;		/* the normalized strings */
	size_t		 nstr;
	int		 add_dummy_prefix;
	int		 remove_extra_ws;
	int		 escape_ws;
	int		 has_trie;
	/* ASCII followed by ASCII: the byte's normalized form without a search. */
	int		 has_fast;
	uint8_t		 fast[128];
	uint8_t		 same[128];	/* fast, itself, and not a space */
	int		 print_same;	/* same[] for all of 0x21..0x7e */
	int		 ascii_words;	/* print_same, escaped, ' ' is itself */
	uint8_t		 flen[128];
	const char	*fout[128];	/* NULL: the byte itself */
	/* The labels >= 0x80 under a byte's node lie in [hklo, hkhi]. */
	uint8_t		 hklo[128], hkhi[128];
	/*
	 * Two-byte characters (U+0080..U+07FF, by code point - 0x80): the
	 * normalized form without a search, when the byte after the
	 * character is outside [klo, khi] (no longer rule goes on with it).
	 */
	struct fast2	*f2;		/* NULL: none */
	/*
	 * Three-byte characters (U+0800..U+FFFF, a bit each) that stay
	 * themselves whatever follows: no rule starts with them.
	 */
	uint8_t		*same3;		/* NULL: none */
};

struct spm_model {
	uint8_t		*file;		/* the model bytes (owned) */
	size_t		 nfile;
	char		*extra;		/* the text of seqio's extra pieces */
	struct spm_piece *pieces;
	uint8_t		*ptype;		/* the type of each piece, compact */
	float		*score;		/* the score of each piece, compact */
	size_t		 n;
	struct strtab	 normal, reserved;
	struct trie	 user;		/* USER_DEFINED only */
	struct darray	 da;		/* 'all' without UNUSED, for the lattice */
	int		 has_user;
	int		 has_unused;	/* some piece is UNUSED */
	int		 nul_key;	/* a matchable piece holds a NUL */
	/* Unigram with nul_key: PieceToId()'s table, keys cut at a NUL. */
	struct spm_piece *keys;
	struct strtab	 keytab;
	int		 has_twin;	/* a reserved piece has another's text */
	int		 wordsafe;	/* no piece spans a word start: cache words */
	int		 norm_utf8;	/* normalized text is always valid UTF-8 */
	double		 uni_bound;	/* largest |score| on a unigram path */
	float		 min_score, max_score, unk_score;
	long		 unk_id;
	int		 type;
	int		 byte_fallback;
	int		 ws_suffix;
	int32_t		 byte_id[256];
	int32_t		 char_id[128];	/* normal-table id of each ASCII byte, or -1 */
	struct norm	 norm, denorm;
	int		 has_denorm;
	const char	*unk_surface, *unk_piece, *bos_piece, *eos_piece, *pad_piece;
	size_t		 unk_surface_len, unk_piece_len, bos_piece_len,
			 eos_piece_len, pad_piece_len;
	size_t		 bos_key_len, eos_key_len, pad_key_len;	/* up to a NUL: the id's */
};

/* Positions of the U+2581 in a normalized line (when escaping spaces). */
struct marks {
	uint32_t	*p;
	size_t		 n, cap;
};

/*
 * A piece's score in the lattice: its own, but for a user-defined
 * piece, len * max_score - 0.1 (as a double), len the bytes it matched:
 * its length, or less when it holds a NUL (see da_build()).
 */
static inline double
piece_score(const struct spm_model *m, int32_t id, size_t len)
{
	if (!m->has_user || m->ptype[id] != SPM_USER_DEFINED)
		return (double)m->pieces[id].score;
	return (double)((float)len * m->max_score) - 0.1;
}

long spm_piece_id(const struct spm_model *m, const char *s, size_t len);

/* PieceToId() of a matchable piece's text: itself, unless a reserved piece has the text. */
static inline int32_t
piece_out(const struct spm_model *m, int32_t id)
{
	if (!m->has_twin)
		return id;
	return (int32_t)spm_piece_id(m, m->pieces[id].s, m->pieces[id].len);
}

/* One symbol of the BPE merge. */
struct bsym {
	int32_t		 prev, next;
	uint32_t	 off, len;
	int32_t		 id;		/* the piece it is (a merge), -2 not looked up */
	uint8_t		 freeze;
};

struct bpair {
	float		 score;
	int32_t		 left, right;
	uint32_t	 size;
	int32_t		 id;		/* the piece the merge makes */
};

/*
 * A cache of word -> tokens: word frequencies are Zipfian.  A word is a
 * segment of the normalized line that starts at a U+2581 following
 * another character; on models where no piece spans such a start
 * (wordsafe), the line's result is the concatenation of its words'
 * results (BPE exactly; unigram while the float slack allows).
 *
 * SC_SLOTS entries of one cache line each (8 MB), a word's slot fetched
 * early (no tag array: the word itself is compared), direct-mapped: a
 * lookup reads one line.  A miss takes the slot unless its word was
 * used more than once since it last lost a contest for it (so that
 * words seen once do not push out the frequent ones).
 */
#define SC_SLOTS	131072
#define SC_SLOT(h)	((size_t)((h) >> 17) & (SC_SLOTS - 1))
#define SC_WORD		28
#define SC_TOKS		7
#define SC_HUGE		((size_t)2 << 20)

/*
 * A word made of NORMAL and USER_DEFINED pieces only (each token is its
 * piece's text, so the ids say the lengths too).  wlen 0: empty.
 */
struct sc_ent {
	float		 lim;		/* unigram: see sc_limit() */
	uint8_t		 wlen, ntok;
	uint8_t		 plain;		/* 2: every token NORMAL; 1: or USER_DEFINED */
	uint8_t		 uses;
	char		 w[SC_WORD];	/* the word, zero-padded */
	uint32_t	 ids[SC_TOKS];	/* id << 5 | the token's length */
};

#define SC_BYTES	((size_t)SC_SLOTS * sizeof(struct sc_ent))
_Static_assert(sizeof(struct sc_ent) == 64, "a cache entry is one cache line");
#define SC_ID(v)	((int32_t)((v) >> 5))
#define SC_LEN(v)	((v) & 31)
#define SC_MAXID	((1u << 27) - 1)

/* A cache of BPE joins: the piece of (a, b), or -1. */
#define PC_SLOTS	32768

struct pc_ent {
	int32_t		 a, b, id;
};

struct spm_enc {
	const struct spm_model *m;
	struct buf	 nb;		/* normalized text */
	struct buf	 tmp;
	/* unigram */
	float		*best;
	int32_t		*from, *bid;
	size_t		 lcap;
	/* bpe */
	struct bsym	*sym;
	size_t		 symcap;
	struct bpair	*heap;
	size_t		 nheap, heapcap;
	struct { int32_t id; uint32_t loff, llen, roff, rlen; } *rev;
	size_t		 nrev, revcap;
	/* raw results, then tokens */
	struct spm_tok	*raw;
	size_t		 nraw, rawcap;
	struct spm_tok	*tok;
	size_t		 ntok, tokcap;
	enum spm_extra	 extra[SPM_MAX_EXTRA];
	int		 nextra;
	uint64_t	 unknowns;
	struct pc_ent	*pcache;	/* PC_SLOTS (BPE) */
	struct sc_ent	*cache;		/* SC_SLOTS, made on first use */
	int		 prev_unk;	/* the last token is an unknown run */
	struct marks	 mk;		/* the U+2581 of the normalized line */
	int		 use_mk;
	int		 whole;		/* spm_enc_whole_lines() */
	struct seg { uint32_t off, len; uint64_t tag; } *seg;
	size_t		 segcap;
	/* spm_enc_set_specials(): the texts, and a line's tokens gathered */
	const struct spm_special *special;
	size_t		 nspecial;
	struct spm_tok	*stok;
	size_t		 nstok, stokcap;
	struct buf	 stext;		/* the gathered tokens' texts */
	char		 err[RP_ERRMAX];
};

/* A piece for messages: printable ASCII as is, the rest as \xNN, cut short. */
static const char *
show(const char *s, size_t n, char *out, size_t outsz)
{
	size_t i, j = 0;

	for (i = 0; i < n && j + 8 < outsz; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			out[j++] = (char)c;
		else
			j += (size_t)snprintf(out + j, outsz - j, "\\x%02x", c);
	}
	if (i < n && j + 4 < outsz)
		j += (size_t)snprintf(out + j, outsz - j, "...");
	out[j] = '\0';
	return out;
}

/* ---- hashing and tables ---------------------------------------------- */

static inline uint64_t
hash_bytes(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull), w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int
strtab_init(struct strtab *t, size_t n)
{
	size_t sz = n + n / 3 + 16;

	if ((t->slot = calloc(sz, sizeof(*t->slot))) == NULL)
		return -1;
	t->size = sz;
	return 0;
}

/* A slot is id + 1 (0: empty); a probe compares lengths, then bytes. */
static long
strtab_find(const struct strtab *t, const struct spm_piece *pc, const char *s,
    size_t len)
{
	uint64_t h = hash_bytes(s, len);
	size_t i = (size_t)(((uint64_t)(uint32_t)h * t->size) >> 32);
	uint32_t v;

	if (t->slot == NULL)
		return -1;
	while ((v = t->slot[i]) != 0) {
		const struct spm_piece *q = &pc[v - 1];

		if (q->len == len && memcmp(q->s, s, len) == 0)
			return (long)v - 1;
		if (++i == t->size)
			i = 0;
	}
	return -1;
}

/* Insert id; returns the id already there for the same string, or -1. */
static long
strtab_add(struct strtab *t, const struct spm_piece *pc, uint32_t id)
{
	const struct spm_piece *p = &pc[id];
	long old = strtab_find(t, pc, p->s, p->len);
	uint64_t h;
	size_t i;

	if (old >= 0)
		return old;
	h = hash_bytes(p->s, p->len);
	for (i = (size_t)(((uint64_t)(uint32_t)h * t->size) >> 32); t->slot[i] != 0; )
		if (++i == t->size)
			i = 0;
	t->slot[i] = id + 1;
	return -1;
}

static inline size_t
trie_hash(uint64_t k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k ^ (k >> 29));
}

static int
trie_init(struct trie *t, size_t bytes)
{
	size_t sz = 64;

	memset(t, 0, sizeof(*t));
	while (sz < bytes * 2 + 2)
		sz *= 2;
	t->mask = sz - 1;
	t->capnodes = bytes + 1;
	if ((t->key = calloc(sz, sizeof(*t->key))) == NULL ||
	    (t->child = malloc(sz * sizeof(*t->child))) == NULL ||
	    (t->val = malloc(t->capnodes * sizeof(*t->val))) == NULL)
		return -1;
	t->nnodes = 1;
	t->val[0] = -1;
	return 0;
}

static void
trie_free(struct trie *t)
{
	free(t->key);
	free(t->child);
	free(t->val);
}

static inline uint32_t
trie_next(const struct trie *t, uint32_t node, uint8_t c)
{
	uint64_t k;
	size_t i;

	if (node == 0)
		return t->root[c];
	k = ((uint64_t)node << 8 | c) + 1;
	for (i = trie_hash(k) & t->mask; t->key[i] != 0; i = (i + 1) & t->mask)
		if (t->key[i] == k)
			return t->child[i];
	return 0;
}

/* Add s[0..len) with value id (the first one added stays). */
static int
trie_add(struct trie *t, const char *s, size_t len, int32_t id)
{
	uint32_t node = 0, nx;
	size_t i, j;

	for (i = 0; i < len; i++) {
		uint8_t c = (uint8_t)s[i];

		if ((nx = trie_next(t, node, c)) == 0) {
			if (t->nnodes >= t->capnodes || t->used * 2 + 2 > t->mask)
				return -1;	/* sized from the pieces: cannot happen */
			nx = (uint32_t)t->nnodes++;
			t->val[nx] = -1;
			if (node == 0)
				t->root[c] = nx;
			else {
				uint64_t k = ((uint64_t)node << 8 | c) + 1;

				for (j = trie_hash(k) & t->mask; t->key[j] != 0;
				    j = (j + 1) & t->mask)
					;
				t->key[j] = k;
				t->child[j] = nx;
				t->used++;
			}
		}
		node = nx;
	}
	if (node != 0 && t->val[node] < 0)
		t->val[node] = id;
	return 0;
}

/*
 * The builder's state: the array, and a bitmap of the cells in use
 * (the root's cell 0 among them).
 */
struct dabuild {
	struct darray	*d;
	uint64_t	*used;
	uint64_t	*full;		/* a bit per word of used: all 64 in use */
	uint64_t	*bases;		/* the bases taken */
};

static int
da_grow(struct dabuild *bd, size_t need)
{
	struct darray *d = bd->d;
	size_t n = d->size ? d->size : 1024, i;
	uint32_t *u;
	uint64_t *b;

	if (need <= d->size)
		return 0;
	while (n < need)
		n += n / 4;
	if (n > INT32_MAX)
		return -1;
	if ((u = realloc(d->u, n * sizeof(*u))) == NULL)
		return -1;
	d->u = u;
	if ((b = realloc(bd->used, (n / 64 + 1) * sizeof(*b))) == NULL)
		return -1;
	bd->used = b;
	if ((b = realloc(bd->bases, (n / 64 + 1) * sizeof(*b))) == NULL)
		return -1;
	bd->bases = b;
	if ((b = realloc(bd->full, (n / 4096 + 1) * sizeof(*b))) == NULL)
		return -1;
	bd->full = b;
	for (i = d->size / 4096; i <= n / 4096; i++)
		if (i * 4096 >= d->size)
			b[i] = 0;
		else
			b[i] &= ~(~0ull << (d->size / 64 % 64));
	for (i = d->size; i < n; i++)
		u[i] = 0;
	for (i = d->size / 64; i <= n / 64; i++)
		if (i * 64 >= d->size)
			bd->used[i] = bd->bases[i] = 0;
		else {
			bd->used[i] &= ~(~0ull << (d->size % 64));
			bd->bases[i] &= ~(~0ull << (d->size % 64));
		}
	d->size = n;
	return 0;
}

/* The first free cell at or after f (the array grows to hold it). */
static int
da_next_free(struct dabuild *bd, size_t f, size_t *out)
{
	for (;;) {
		uint64_t w;
		size_t wi;

		if (f + 256 >= bd->d->size && da_grow(bd, f + 512) == -1)
			return -1;
		w = ~bd->used[f / 64] & (~0ull << (f % 64));
		if (w != 0) {
			*out = f / 64 * 64 + (size_t)__builtin_ctzll(w);
			return 0;
		}
		/* The next word of the bitmap with a free cell. */
		for (wi = f / 64 + 1; ; ) {
			if (wi * 64 + 256 >= bd->d->size &&
			    da_grow(bd, wi * 64 + 512) == -1)
				return -1;
			w = ~bd->full[wi / 64] & (~0ull << (wi % 64));
			if (w != 0) {
				wi = wi / 64 * 64 + (size_t)__builtin_ctzll(w);
				break;
			}
			wi = (wi / 64 + 1) * 64;
		}
		f = wi * 64;
	}
}

/* Mark cell c used. */
static inline void
da_take(struct dabuild *bd, size_t c)
{
	bd->used[c / 64] |= 1ull << (c % 64);
	if (bd->used[c / 64] == ~0ull)
		bd->full[c / 4096] |= 1ull << (c / 64 % 64);
}

/*
 * A base for a node whose children have the labels lab[0..nl) (0: its
 * value): from the free cells, in order, the first f for which b =
 * f ^ lab[0] is no node's base yet (nor 0) and leaves every cell
 * b ^ lab[j] free.  As darts-clone does, only the last DA_OPEN blocks
 * of 256 cells before the one past the cells in use (frontier) are
 * searched, from the first free cell ff at the earliest: in the older
 * ones, mostly full, a fit is rare and the search would be long.  -1 on ENOMEM, -2 when the
 * bases run out (a trie of more than about DA_MAXBASE cells).
 */
#define DA_OPEN	16

static inline int
da_is(const uint64_t *v, size_t i)
{
	return v[i / 64] >> (i % 64) & 1;
}

static int
da_find_base(struct dabuild *bd, const uint8_t *lab, size_t nl, size_t ff,
    size_t frontier, size_t *out)
{
	size_t f = ff, b, j;
	uint64_t fr;

	if (frontier / 256 > DA_OPEN && f < (frontier / 256 - DA_OPEN) * 256)
		f = (frontier / 256 - DA_OPEN) * 256;
	for (;; f = (f / 64 + 1) * 64) {
		/* The next word of the bitmap with a free cell, its free cells. */
		if (da_next_free(bd, f, &f) == -1)
			return -1;
		for (fr = ~bd->used[f / 64] & (~0ull << (f % 64)); fr != 0;
		    fr &= fr - 1) {
			b = (f / 64 * 64 + (size_t)__builtin_ctzll(fr)) ^ lab[0];
			if (b > DA_MAXBASE)
				return -2;
			if (b == 0 || da_is(bd->bases, b))
				continue;
			for (j = 1; j < nl && !da_is(bd->used, b ^ lab[j]); j++)
				;
			if (j == nl) {
				*out = b;
				return 0;
			}
		}
	}
}

/*
 * A leaf's base: the first cell at or after *lf that is neither used nor
 * a base (*lf moves on to it: the cells before it stay so).  -1 on
 * ENOMEM, -2 past DA_MAXBASE.
 */
static int
da_leaf_base(struct dabuild *bd, size_t *lf, size_t *out)
{
	size_t f = *lf;
	uint64_t w;

	for (;; f = (f / 64 + 1) * 64) {
		if (f + 256 >= bd->d->size && da_grow(bd, f + 512) == -1)
			return -1;
		w = ~(bd->used[f / 64] | bd->bases[f / 64]) & (~0ull << (f % 64));
		if (w != 0)
			break;
	}
	f = f / 64 * 64 + (size_t)__builtin_ctzll(w);
	if (f > DA_MAXBASE)
		return -2;
	*lf = *out = f;
	return 0;
}

/* Pieces in byte order (a prefix first). */
static const struct spm_piece *sort_pieces;

static int
piece_cmp(const void *a, const void *b)
{
	const struct spm_piece *p = &sort_pieces[*(const int32_t *)a];
	const struct spm_piece *q = &sort_pieces[*(const int32_t *)b];
	uint32_t n = p->len < q->len ? p->len : q->len;
	int c = memcmp(p->s, q->s, n);

	return c != 0 ? c : (p->len > q->len) - (p->len < q->len);
}

/*
 * Sort the keys (piece ids) by their bytes: by the first eight, read
 * big-endian and zero-padded (an order no wider compare contradicts),
 * with a radix sort, then each run of equal prefixes by piece_cmp().
 * -1 on ENOMEM.
 */
static int
sort_keys(const struct spm_piece *pc, int32_t *key, size_t nk)
{
	struct skey { uint64_t k; int32_t id; } *a, *b, *t;
	size_t i, j, pass, cnt[256];

	if (nk < 2)
		return 0;
	a = malloc(nk * sizeof(*a));
	b = malloc(nk * sizeof(*b));
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return -1;
	}
	for (i = 0; i < nk; i++) {
		const struct spm_piece *q = &pc[key[i]];
		uint64_t k = 0;

		for (j = 0; j < 8; j++)
			k = k << 8 | (j < q->len ? (uint8_t)q->s[j] : 0);
		a[i].k = k;
		a[i].id = key[i];
	}
	for (pass = 0; pass < 8; pass++) {
		unsigned sh = (unsigned)pass * 8;
		size_t sum = 0;

		memset(cnt, 0, sizeof cnt);
		for (i = 0; i < nk; i++)
			cnt[a[i].k >> sh & 0xff]++;
		if (cnt[a[0].k >> sh & 0xff] == nk)
			continue;	/* one value of this byte: nothing moves */
		for (i = 0; i < 256; i++) {
			size_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < nk; i++)
			b[cnt[a[i].k >> sh & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < nk; i++)
		key[i] = a[i].id;
	/* Runs sharing their first eight bytes: the rest decides. */
	sort_pieces = pc;
	for (i = 0; i < nk; i = j) {
		for (j = i + 1; j < nk && a[j].k == a[i].k; j++)
			;
		if (j - i > 1)
			qsort(key + i, j - i, sizeof(*key), piece_cmp);
	}
	free(a);
	free(b);
	return 0;
}

/* The length of s[0..len) up to its first NUL. */
static size_t
cstr_len(const char *s, size_t len)
{
	const char *z = len > 0 ? memchr(s, '\0', len) : NULL;

	return z != NULL ? (size_t)(z - s) : len;
}

/*
 * A unigram model with a NUL in a matchable piece: the trie's keys
 * (m->keys: each piece cut at its first NUL), and the table that
 * PieceToId() looks in, of those keys (the first piece in byte order
 * keeping a key made equal).  -1 on ENOMEM.
 */
static int
key_table(struct spm_model *m)
{
	int32_t *key = malloc((m->n ? m->n : 1) * sizeof(*key));
	size_t i, nk = 0;

	if (key == NULL || (m->keys = malloc(m->n * sizeof(*m->keys))) == NULL)
		goto fail;
	memcpy(m->keys, m->pieces, m->n * sizeof(*m->keys));
	for (i = 0; i < m->n; i++) {
		struct spm_piece *q = &m->keys[i];

		if (q->type != SPM_NORMAL && q->type != SPM_USER_DEFINED &&
		    q->type != SPM_UNUSED)
			continue;
		q->len = (uint32_t)cstr_len(q->s, q->len) & 0xffffff;
		key[nk++] = (int32_t)i;
	}
	/* In the pieces' own byte order: the first of equal keys stays. */
	if (sort_keys(m->pieces, key, nk) == -1 || strtab_init(&m->keytab, nk) == -1)
		goto fail;
	for (i = 0; i < nk; i++)
		(void)strtab_add(&m->keytab, m->keys, (uint32_t)key[i]);
	free(key);
	return 0;
fail:
	free(key);
	return -1;
}

struct danode {
	uint32_t	 lo, hi;	/* its keys, sorted */
	uint32_t	 depth;
	int32_t		 cell;
};

/*
 * The lattice's trie of the NORMAL, USER_DEFINED and UNUSED pieces (ids
 * of the UNUSED left out) as a double array, straight from the pieces
 * sorted by their bytes: each node is a range of keys with a common
 * prefix, its children the runs of the next byte.  -1 on ENOMEM, -2
 * when the trie is too large for the array.
 *
 * Upstream hands darts-clone each piece as a C string: a piece's key
 * ends at its first NUL, and of pieces whose keys are then equal the
 * first in byte order keeps the key (the model loader refuses a key
 * made empty).
 */
static int
da_build(struct darray *d, const struct spm_model *m)
{
	const struct spm_piece *pc = m->pieces;
	size_t nk = 0, i, j, nst = 0, capst = 256, frontier = 1, maxb = 1, ff = 1, lf = 1;
	int32_t *key = malloc((m->n ? m->n : 1) * sizeof(*key));
	struct danode *st = malloc(capst * sizeof(*st));
	struct dabuild bd = { d, NULL, NULL, NULL };
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (key == NULL || st == NULL || da_grow(&bd, 1024) == -1)
		goto out;
	for (i = 0; i < m->n; i++)
		if (pc[i].type == SPM_NORMAL || pc[i].type == SPM_USER_DEFINED ||
		    pc[i].type == SPM_UNUSED)
			key[nk++] = (int32_t)i;
	if (sort_keys(pc, key, nk) == -1)
		goto out;
	if (m->nul_key) {
		/* The keys cut at their NUL (key_table()); one of equal keys. */
		pc = m->keys;
		for (i = j = 0; i < nk; i++) {
			const struct spm_piece *q = &pc[key[i]];

			if (j > 0 && pc[key[j - 1]].len == q->len &&
			    memcmp(pc[key[j - 1]].s, q->s, q->len) == 0)
				continue;
			key[j++] = key[i];
		}
		nk = j;
	}
	/* The trie's nodes: each key adds the bytes past its prefix shared with the last. */
	{
		size_t nodes = 1, l;

		for (i = 0; i < nk; i++) {
			const struct spm_piece *q = &pc[key[i]];

			l = 0;
			if (i > 0) {
				const struct spm_piece *r = &pc[key[i - 1]];

				while (l < q->len && l < r->len && q->s[l] == r->s[l])
					l++;
			}
			nodes += q->len - l;
		}
		/* And a cell for each key's value. */
		nodes += nk;
		if (da_grow(&bd, nodes + nodes / 8 + 1024) == -1)
			goto out;
	}
	d->u[0] = DA_ROOT;
	da_take(&bd, 0);
	st[nst++] = (struct danode){ 0, (uint32_t)nk, 0, 0 };
	while (nst > 0) {
		struct danode nd = st[--nst];
		uint8_t lab[257];
		uint32_t from[258];
		size_t nl = 0, b = 0;
		int32_t val = -1;

		/*
		 * The key that ends here (one at most: no duplicates): its
		 * value as a child of label 0 (none for an UNUSED piece).
		 */
		if (nd.lo < nd.hi && pc[key[nd.lo]].len == nd.depth) {
			int32_t id = key[nd.lo++];

			if (pc[id].type != SPM_UNUSED) {
				if ((uint32_t)id > DA_MAXID) {
					rc = -2;
					goto out;
				}
				val = id;
			}
		}
		for (i = nd.lo; i < nd.hi; i++) {
			uint8_t c = (uint8_t)pc[key[i]].s[nd.depth];

			if (nl == 0 || lab[nl - 1] != c) {
				lab[nl] = c;
				from[nl++] = (uint32_t)i;
			}
		}
		from[nl] = nd.hi;
		/* The value last: the base is searched from a child's label. */
		if (val >= 0) {
			lab[nl++] = 0;
			from[nl] = nd.hi;
		}
		if (nl == 0)
			continue;
		if (nl == 1 && val >= 0) {
			/*
			 * A leaf: any free cell that is no base yet holds its
			 * value (and is its base); the cells before lf are none.
			 */
			if ((rc = da_leaf_base(&bd, &lf, &b)) != 0)
				goto out;
		} else if (da_next_free(&bd, ff, &ff) == -1 ||
		    (rc = da_find_base(&bd, lab, nl, ff, frontier, &b)) != 0)
			goto out;
		rc = -1;
		d->u[nd.cell] |= (uint32_t)b << 9;
		bd.bases[b / 64] |= 1ull << (b % 64);
		if (b > maxb)
			maxb = b;
		if (nst + nl > capst) {
			struct danode *q;

			while (nst + nl > capst)
				capst *= 2;
			if ((q = realloc(st, capst * sizeof(*st))) == NULL)
				goto out;
			st = q;
		}
		for (j = 0; j < nl; j++) {
			size_t c = b ^ lab[j];

			da_take(&bd, c);
			if (c + 1 > frontier)
				frontier = c + 1;
			if (lab[j] == 0) {
				d->u[c] = (uint32_t)val << 9 | DA_VALUE;
				continue;
			}
			d->u[c] = (uint32_t)lab[j] + 1;
			st[nst++] = (struct danode){ from[j], from[j + 1],
			    nd.depth + 1, (int32_t)c };
		}
	}
	/* Every base's block inside; a leaf's base 0 reaches cells 0..255. */
	if (da_grow(&bd, maxb + 256) == -1)
		goto out;
	/* Give back the room grown past the last cell a walk can reach. */
	{
		size_t keep = (maxb + 256 > frontier ? maxb + 256 : frontier);
		uint32_t *u = realloc(d->u, keep * sizeof(*u));

		if (u != NULL) {
			d->u = u;
			d->size = keep;
		}
	}
	rc = 0;
out:
	free(key);
	free(st);
	free(bd.used);
	free(bd.full);
	free(bd.bases);
	return rc;
}

/* ---- protobuf --------------------------------------------------------- */

struct pb {
	const uint8_t	*p, *end;
};

static int
pb_varint(struct pb *b, uint64_t *v)
{
	uint64_t x = 0;
	int sh;

	for (sh = 0; sh < 64 && b->p < b->end; sh += 7) {
		uint8_t c = *b->p++;

		x |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Next field: 1 with its number and wire type, 0 at the end, -1 malformed. */
static int
pb_field(struct pb *b, uint32_t *num, int *wt)
{
	uint64_t k;

	if (b->p == b->end)
		return 0;
	if (pb_varint(b, &k) == -1 || (k >> 3) == 0 || (k >> 3) > 0x1fffffff)
		return -1;
	*num = (uint32_t)(k >> 3);
	*wt = (int)(k & 7);
	return 1;
}

/* The payload of a length-delimited field. */
static int
pb_bytes(struct pb *b, struct pb *sub)
{
	uint64_t n;

	if (pb_varint(b, &n) == -1 || n > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

static int pb_skip(struct pb *b, uint32_t num, int wt, int depth);

static int
pb_skip_group(struct pb *b, uint32_t num, int depth)
{
	uint32_t n;
	int wt, rc;

	if (depth > 32)
		return -1;
	while ((rc = pb_field(b, &n, &wt)) == 1) {
		if (wt == 4)
			return n == num ? 0 : -1;
		if (pb_skip(b, n, wt, depth + 1) == -1)
			return -1;
	}
	return -1;
}

static int
pb_skip(struct pb *b, uint32_t num, int wt, int depth)
{
	uint64_t v;
	struct pb sub;

	switch (wt) {
	case 0:
		return pb_varint(b, &v);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		b->p += 8;
		return 0;
	case 2:
		return pb_bytes(b, &sub);
	case 3:
		return pb_skip_group(b, num, depth);
	case 5:
		if (b->end - b->p < 4)
			return -1;
		b->p += 4;
		return 0;
	default:
		return -1;
	}
}

/* A field of an expected wire type, else skipped (as protobuf does). */
#define PB_WANT(b, num, wt, want) ((wt) == (want) ? 1 : \
	(pb_skip((b), (num), (wt), 0) == -1 ? -1 : 0))

struct str {
	const char	*s;
	size_t		 len;
	int		 set;
};

struct trainer {
	int		 model_type;
	int		 ws_suffix;
	int		 allow_ws_only;
	int		 byte_fallback;
	struct str	 unk_surface, unk_piece, bos_piece, eos_piece, pad_piece;
};

struct normspec {
	struct str	 charsmap;
	int		 add_dummy_prefix, remove_extra_ws, escape_ws;
	int		 present;
};

struct sample {
	struct str	 input, expected;
};

struct modelspec {
	struct trainer	 tr;
	struct normspec	 ns, dn;
	struct sample	*samples;
	size_t		 nsamples, capsamples;
};

static int
pb_str(struct pb *b, struct str *s)
{
	struct pb sub;

	if (pb_bytes(b, &sub) == -1)
		return -1;
	s->s = (const char *)sub.p;
	s->len = (size_t)(sub.end - sub.p);
	s->set = 1;
	return 0;
}

static int
parse_piece(struct pb *b, struct spm_piece *pc, char *err, size_t errlen,
    size_t idx)
{
	uint32_t num, u;
	int wt, rc, k;
	uint64_t v;

	while ((rc = pb_field(b, &num, &wt)) == 1) {
		switch (num) {
		case 1:
			if ((k = PB_WANT(b, num, wt, 2)) <= 0)
				break;
			{
				struct str s;

				if (pb_str(b, &s) == -1)
					goto bad;
				if (s.len >= SPM_MAX_PIECE) {
					rp_seterr(err, errlen,
					    "piece %zu is longer than %u bytes",
					    idx, SPM_MAX_PIECE - 1);
					return -1;
				}
				pc->s = s.s;
				pc->len = (uint32_t)s.len;
			}
			continue;
		case 2:
			if ((k = PB_WANT(b, num, wt, 5)) <= 0)
				break;
			if (b->end - b->p < 4)
				goto bad;
			u = rp_le32(b->p);
			b->p += 4;
			memcpy(&pc->score, &u, 4);
			continue;
		case 3:
			if ((k = PB_WANT(b, num, wt, 0)) <= 0)
				break;
			if (pb_varint(b, &v) == -1)
				goto bad;
			/* An unknown enum value leaves the field unset. */
			if (v >= 1 && v <= 6)
				pc->type = (uint8_t)v;
			continue;
		default:
			if (pb_skip(b, num, wt, 0) == -1)
				goto bad;
			continue;
		}
		if (k == -1)
			goto bad;
	}
	if (rc == 0)
		return 0;
bad:
	rp_seterr(err, errlen, "malformed protobuf in piece %zu", idx);
	return -1;
}

static int
parse_bool(struct pb *b, int wt, uint32_t num, int *out)
{
	uint64_t v;
	int k;

	if ((k = PB_WANT(b, num, wt, 0)) <= 0)
		return k;
	if (pb_varint(b, &v) == -1)
		return -1;
	*out = v != 0;
	return 0;
}

static int
parse_trainer(struct pb *b, struct trainer *t)
{
	uint32_t num;
	int wt, rc, k;
	uint64_t v;
	struct str *s;

	while ((rc = pb_field(b, &num, &wt)) == 1) {
		s = NULL;
		switch (num) {
		case 3:
			if ((k = PB_WANT(b, num, wt, 0)) == -1)
				return -1;
			if (k == 0)
				continue;
			if (pb_varint(b, &v) == -1)
				return -1;
			if (v >= 1 && v <= 4)
				t->model_type = (int)v;
			continue;
		case 24:
			if (parse_bool(b, wt, num, &t->ws_suffix) == -1)
				return -1;
			continue;
		case 26:
			if (parse_bool(b, wt, num, &t->allow_ws_only) == -1)
				return -1;
			continue;
		case 35:
			if (parse_bool(b, wt, num, &t->byte_fallback) == -1)
				return -1;
			continue;
		case 44: s = &t->unk_surface; break;
		case 45: s = &t->unk_piece; break;
		case 46: s = &t->bos_piece; break;
		case 47: s = &t->eos_piece; break;
		case 48: s = &t->pad_piece; break;
		default:
			break;
		}
		if (s != NULL) {
			if ((k = PB_WANT(b, num, wt, 2)) == -1)
				return -1;
			if (k == 1 && pb_str(b, s) == -1)
				return -1;
			continue;
		}
		if (pb_skip(b, num, wt, 0) == -1)
			return -1;
	}
	return rc;
}

static int
parse_normspec(struct pb *b, struct normspec *n)
{
	uint32_t num;
	int wt, rc, k;

	n->present = 1;
	while ((rc = pb_field(b, &num, &wt)) == 1) {
		switch (num) {
		case 2:
			if ((k = PB_WANT(b, num, wt, 2)) == -1)
				return -1;
			if (k == 1 && pb_str(b, &n->charsmap) == -1)
				return -1;
			continue;
		case 3:
			if (parse_bool(b, wt, num, &n->add_dummy_prefix) == -1)
				return -1;
			continue;
		case 4:
			if (parse_bool(b, wt, num, &n->remove_extra_ws) == -1)
				return -1;
			continue;
		case 5:
			if (parse_bool(b, wt, num, &n->escape_ws) == -1)
				return -1;
			continue;
		default:
			if (pb_skip(b, num, wt, 0) == -1)
				return -1;
		}
	}
	return rc;
}

static int
parse_selftest(struct pb *b, struct modelspec *ms)
{
	uint32_t num, num2;
	int wt, wt2, rc, rc2, k;
	struct pb sub;

	while ((rc = pb_field(b, &num, &wt)) == 1) {
		if (num != 1 || wt != 2) {
			if (pb_skip(b, num, wt, 0) == -1)
				return -1;
			continue;
		}
		if (pb_bytes(b, &sub) == -1)
			return -1;
		if (ms->nsamples == ms->capsamples) {
			size_t c = ms->capsamples ? ms->capsamples * 2 : 16;
			struct sample *q = realloc(ms->samples, c * sizeof(*q));

			if (q == NULL)
				return -2;
			ms->samples = q;
			ms->capsamples = c;
		}
		memset(&ms->samples[ms->nsamples], 0, sizeof(struct sample));
		while ((rc2 = pb_field(&sub, &num2, &wt2)) == 1) {
			struct str *s = num2 == 1 ? &ms->samples[ms->nsamples].input :
			    num2 == 2 ? &ms->samples[ms->nsamples].expected : NULL;

			if (s == NULL) {
				if (pb_skip(&sub, num2, wt2, 0) == -1)
					return -1;
				continue;
			}
			if ((k = PB_WANT(&sub, num2, wt2, 2)) == -1)
				return -1;
			if (k == 1 && pb_str(&sub, s) == -1)
				return -1;
		}
		if (rc2 == -1)
			return -1;
		ms->nsamples++;
	}
	return rc;
}

/* ---- the charsmap ------------------------------------------------------- */

static inline uint32_t u_offset(uint32_t u) { return (u >> 10) << ((u & 0x200) >> 6); }
static inline uint32_t u_label(uint32_t u) { return u & 0x800000ffu; }
static inline int u_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t u_value(uint32_t u) { return u & 0x7fffffffu; }

/*
 * Check every path of the double array: each index in range, each leaf
 * value the start of a NUL-terminated string inside the strings area.
 * The unit at pos with label c (< 256) can only be the child by c of
 * the node pos ^ c: the units are grouped by that node once, and the
 * walk from the root visits each node's children from its group.
 */
static int
charsmap_check(const struct norm *nm, char *err, size_t errlen)
{
	uint8_t *seen = NULL;
	uint32_t *stack = NULL, *start = NULL, *kid = NULL;
	size_t sp = 0, nu = nm->nunits, nb, pos, k;
	int rc = 0;

	if (nu == 0)
		return 0;
	nb = (nu | 255) + 1;		/* nodes pos ^ c lie below this */
	if ((seen = calloc(nu, 1)) == NULL ||
	    (stack = malloc(nu * sizeof(*stack))) == NULL ||
	    (start = calloc(nb + 1, sizeof(*start))) == NULL ||
	    (kid = malloc(nu * sizeof(*kid))) == NULL) {
		free(seen);
		free(stack);
		free(start);
		rp_seterr(err, errlen, "out of memory");
		return -1;
	}
	for (pos = 0; pos < nu; pos++) {
		uint32_t l = u_label(nm->units[pos]);

		if (l < 256)
			start[(pos ^ l) + 1]++;
	}
	for (k = 0; k < nb; k++)
		start[k + 1] += start[k];
	for (pos = 0; pos < nu; pos++) {
		uint32_t l = u_label(nm->units[pos]);

		if (l < 256)
			kid[start[pos ^ l]++] = (uint32_t)pos;
	}
	/* start[p] now ends p's group; it begins at start[p - 1] (0 for 0). */
	{
		uint32_t root = u_offset(nm->units[0]);

		if (root >= nu) {
			rc = -1;
			goto out;
		}
		seen[root] = 1;
		stack[sp++] = root;
	}
	while (sp > 0 && rc == 0) {
		uint32_t node = stack[--sp];
		size_t lo = node == 0 ? 0 : start[node - 1], hi = start[node];

		for (k = lo; k < hi; k++) {
			uint32_t u = nm->units[kid[k]], nx;

			nx = kid[k] ^ u_offset(u);
			if (nx >= nu) {
				rc = -1;
				break;
			}
			if (u_has_leaf(u)) {
				uint32_t v = u_value(nm->units[nx]);

				if (v >= nm->nstr || memchr(nm->str + v, '\0',
				    nm->nstr - v) == NULL) {
					rc = -1;
					break;
				}
			}
			if (!seen[nx]) {
				seen[nx] = 1;
				stack[sp++] = nx;
			}
		}
	}
out:
	free(seen);
	free(stack);
	free(start);
	free(kid);
	if (rc == -1)
		rp_seterr(err, errlen,
		    "precompiled_charsmap: the trie points outside itself");
	return rc;
}

static int
norm_init(struct norm *nm, const struct normspec *ns, char *err,
    size_t errlen)
{
	const uint8_t *b = (const uint8_t *)ns->charsmap.s;
	size_t n = ns->charsmap.len, i;
	uint32_t tsize;

	memset(nm, 0, sizeof(*nm));
	nm->add_dummy_prefix = ns->add_dummy_prefix;
	nm->remove_extra_ws = ns->remove_extra_ws;
	nm->escape_ws = ns->escape_ws;
	if (n == 0)
		return 0;
	if (n <= 4 || (tsize = rp_le32(b)) >= n) {
		rp_seterr(err, errlen,
		    "precompiled_charsmap: the blob is broken");
		return -1;
	}
	nm->has_trie = 1;
	nm->nunits = tsize / 4;
	if ((nm->units = malloc((nm->nunits ? nm->nunits : 1) * sizeof(uint32_t))) == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < nm->nunits; i++)
		nm->units[i] = rp_le32(b + 4 + 4 * i);
	nm->str = (const char *)b + 4 + tsize;
	nm->nstr = n - 4 - tsize;
	return charsmap_check(nm, err, errlen);
}

/*
 * One byte c down the charsmap's trie from the node whose children are
 * at *node ^ label: 0 when there is no such child (or it points outside
 * the trie), else *node its children's place and 1, or 2 when the child
 * ends a rule (*val: its normalized form's offset in str).
 */
static inline int
cm_step(const struct norm *nm, uint32_t *node, uint8_t c, uint32_t *val)
{
	uint32_t x = *node ^ c, u;

	if (x >= nm->nunits || u_label(u = nm->units[x]) != c)
		return 0;
	x ^= u_offset(u);
	if (x >= nm->nunits)
		return 0;
	*node = x;
	if (!u_has_leaf(u))
		return 1;
	*val = u_value(nm->units[x]);
	return 2;
}

/*
 * For each place p of the charsmap's trie, the labels of the children
 * at p ^ label (what cm_step() goes on with): their least and greatest,
 * kid[2p] and kid[2p + 1] (lo > hi: none); one pass over the units.
 * NULL on ENOMEM.
 */
static uint8_t *
cm_kids(const struct norm *nm)
{
	uint8_t *kid = malloc(2 * (nm->nunits ? nm->nunits : 1));
	size_t x;

	if (kid == NULL)
		return NULL;
	for (x = 0; x < nm->nunits; x++) {
		kid[2 * x] = 0xff;
		kid[2 * x + 1] = 0;
	}
	for (x = 0; x < nm->nunits; x++) {
		uint32_t c = u_label(nm->units[x]);
		size_t p = x ^ c;

		if (c > 0xff || p >= nm->nunits)
			continue;
		if (c < kid[2 * p])
			kid[2 * p] = (uint8_t)c;
		if (c > kid[2 * p + 1])
			kid[2 * p + 1] = (uint8_t)c;
	}
	return kid;
}

/* Longest charsmap match at p[0..n): its length (0: none), *out the string. */
static size_t
charsmap_match(const struct norm *nm, const uint8_t *p, size_t n, const char **out)
{
	size_t i, best = 0, nres = 0;
	uint32_t node, v = 0;
	int r;

	if (nm->nunits == 0)
		return 0;
	node = u_offset(nm->units[0]);
	for (i = 0; i < n && (r = cm_step(nm, &node, p[i], &v)) != 0; i++)
		/* Upstream keeps the first 32 results. */
		if (r == 2 && nres++ < 32) {
			best = i + 1;
			*out = nm->str + v;
		}
	return best;
}

/* The user-defined symbol at p[0..n): its length, 0 when none. */
static size_t
user_match(const struct spm_model *m, const uint8_t *p, size_t n)
{
	uint32_t node = 0;
	size_t i, best = 0;

	if (!m->has_user)
		return 0;
	for (i = 0; i < n; i++) {
		if ((node = trie_next(&m->user, node, p[i])) == 0)
			break;
		if (m->user.val[node] >= 0)
			best = i + 1;
	}
	return best;
}

static inline size_t
one_char_len(uint8_t c)
{
	return (size_t)("\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]);
}

/*
 * IsValidDecodeUTF8(): the length of a valid character at p, or 0.
 * sentencepiece's rule is the strict one of uni_utf8_decode().
 */
static inline size_t
valid_utf8(const uint8_t *p, size_t n)
{
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	return (size_t)uni_utf8_decode(p, n, &cp);
}

/* The place of the two-byte character b c in struct norm's f2 (its code point - 0x80). */
static inline size_t
f2_at(uint8_t b, uint8_t c)
{
	return ((b & 0x1fu) << 6 | (c & 0x3fu)) - 0x80;
}

/*
 * Whether the byte c after the ASCII byte b (fast[b]: no ASCII byte
 * goes on with it) cannot go on with it either.
 */
static inline int
ascii_ends(const struct norm *nm, uint8_t b, uint8_t c)
{
	return c < 0x80 || c < nm->hklo[b] || c > nm->hkhi[b];
}

/* NormalizePrefix(): the normalized form of the prefix at p, and how much it consumes. */
static size_t
norm_prefix(const struct spm_model *m, const struct norm *nm, const uint8_t *p,
    size_t n, const char **s, size_t *slen)
{
	size_t k;

	if (nm->has_fast && p[0] < 0x80 && nm->fast[p[0]] &&
	    (n == 1 || ascii_ends(nm, p[0], p[1]))) {
		*s = nm->fout[p[0]] != NULL ? nm->fout[p[0]] : (const char *)p;
		*slen = nm->flen[p[0]];
		return 1;
	}
	if (nm->f2 != NULL && p[0] >= 0xc2 && p[0] <= 0xdf && n >= 2 &&
	    (p[1] & 0xc0) == 0x80) {
		const struct fast2 *f = &nm->f2[f2_at(p[0], p[1])];

		if (f->ok && (n == 2 || p[2] < f->klo || p[2] > f->khi)) {
			*s = f->out != NULL ? f->out : (const char *)p;
			*slen = f->len;
			return 2;
		}
	}
	if (m != NULL && (k = user_match(m, p, n)) > 0) {
		*s = (const char *)p;
		*slen = k;
		return k;
	}
	if (nm->has_trie && (k = charsmap_match(nm, p, n, s)) > 0) {
		*slen = strlen(*s);
		return k;
	}
	if ((k = valid_utf8(p, n)) == 0) {
		*s = REPLACEMENT;
		*slen = 3;
		return 1;
	}
	*s = (const char *)p;
	*slen = k;
	return k;
}

static inline int
mark_add(struct marks *mk, size_t pos)
{
	if (mk->n == mk->cap) {
		size_t c = mk->cap ? mk->cap * 2 : 256;
		uint32_t *q = realloc(mk->p, c * sizeof(*q));

		if (q == NULL)
			return -1;
		mk->p = q;
		mk->cap = c;
	}
	mk->p[mk->n++] = (uint32_t)pos;
	return 0;
}

/* Bytes at p[0..n) in 0x21..0x7e, eight at a time. */
static inline size_t
printable_run(const uint8_t *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t r = 0;
	uint64_t x, bad;

	while (r + 8 <= n) {
		memcpy(&x, p + r, 8);
		/* A byte < 0x21, or > 0x7e (0x7f and up): its high bit. */
		bad = ((x - ones * 0x21) & ~x & highs) |
		    (((x + ones) | x) & highs);
		if (bad != 0)
			return r + (size_t)(__builtin_ctzll(bad) >> 3);
		r += 8;
	}
	return r;
}

/*
 * The common stretch of a line: runs of printable ASCII (0x21..0x7e,
 * each normalizing to itself) and spaces (each normalizing to one
 * space, escaped), on a normalizer where that holds (nm->ascii_words).
 * Writes at o (room for 3 * n + 8 bytes; mk, when not NULL, room for n
 * marks); returns the bytes consumed, *o and *prev_space moved on.  It
 * stops at anything else, and before an ASCII byte that a non-ASCII
 * byte follows (the charsmap may join them).
 */
static size_t
ascii_words(const struct norm *nm, const uint8_t *p, size_t n, uint8_t **op,
    uint8_t *o0, struct marks *mk, int *prev_space)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint8_t *o = *op;
	size_t i = 0, r;
	uint64_t x, bad;
	int ps = *prev_space;

	for (;;) {
		r = i;
		while (n - r >= 8) {
			memcpy(&x, p + r, 8);
			memcpy(o, &x, 8);
			bad = ((x - ones * 0x21) & ~x & highs) |
			    (((x + ones) | x) & highs);
			if (bad != 0) {
				size_t k = (size_t)(__builtin_ctzll(bad) >> 3);

				o += k;
				r += k;
				goto run_end;
			}
			o += 8;
			r += 8;
		}
		while (r < n && (unsigned)p[r] - 0x21u < 0x5eu)
			*o++ = p[r++];
run_end:
		if (r < n && p[r] >= 0x80) {
			if (r > i && !ascii_ends(nm, p[r - 1], p[r])) {
				r--;
				o--;
			}
			if (r > i)
				ps = 0;
			i = r;
			break;
		}
		if (r > i)
			ps = 0;
		i = r;
		if (i == n || p[i] != ' ' || (n - i > 1 && !ascii_ends(nm, ' ', p[i + 1])))
			break;
		if (!ps) {
			if (mk != NULL)
				mk->p[mk->n++] = (uint32_t)(o - o0);
			o[0] = 0xe2;
			o[1] = 0x96;
			o[2] = 0x81;
			o += 3;
		}
		ps = nm->remove_extra_ws;
		i++;
	}
	*op = o;
	*prev_space = ps;
	return i;
}

/*
 * The bytes of the two- and three-byte characters at p that stay
 * themselves (nm->f2, nm->same3).
 */
static inline size_t
same_run(const struct norm *nm, const uint8_t *p, size_t n)
{
	size_t r = 0;

	for (;;) {
		if (n - r >= 2 && p[r] >= 0xc2 && p[r] <= 0xdf &&
		    (p[r + 1] & 0xc0) == 0x80) {
			const struct fast2 *f = &nm->f2[f2_at(p[r], p[r + 1])];

			if (!f->ok || f->out != NULL || (n - r > 2 &&
			    p[r + 2] >= f->klo && p[r + 2] <= f->khi))
				break;
			r += 2;
		} else if (n - r >= 3 && (p[r] & 0xf0) == 0xe0 &&
		    (p[r + 1] & 0xc0) == 0x80 && (p[r + 2] & 0xc0) == 0x80) {
			uint32_t cp = (p[r] & 0xfu) << 12 | (p[r + 1] & 0x3fu) << 6 |
			    (p[r + 2] & 0x3fu);

			/* (Overlong forms and surrogates have no bit.) */
			if (nm->same3 == NULL || !(nm->same3[cp >> 3] >> (cp & 7) & 1))
				break;
			r += 3;
		} else
			break;
	}
	return r;
}

/*
 * Normalizer::Normalize() into out (replaced; not NUL-terminated).
 * With mk (escaping spaces, a normalizer whose outputs are valid
 * UTF-8), the position of each U+2581 written goes there.
 */
static int
norm_apply(const struct spm_model *m, const struct norm *nm, int ws_suffix,
    const uint8_t *p, size_t n, struct buf *out, struct marks *mk)
{
	const char *s;
	size_t sl, k, i;
	int prev_space;
	const char *sp = nm->escape_ws ? SPACE_SYM : " ";
	size_t splen = nm->escape_ws ? 3 : 1;

	out->len = 0;
	if (mk != NULL)
		mk->n = 0;
	if (n == 0)
		return 0;
	if (nm->remove_extra_ws)
		while (n > 0) {
			k = norm_prefix(m, nm, p, n, &s, &sl);
			if (sl != 1 || s[0] != ' ')
				break;
			p += k;
			n -= k;
		}
	if (n == 0)
		return 0;
	if (rp_buf_reserve(out, n * 3 + 8) == -1)
		return -1;
	if (!ws_suffix && nm->add_dummy_prefix) {
		if (mk != NULL && mark_add(mk, 0) == -1)
			return -1;
		if (rp_buf_append(out, sp, splen) == -1)
			return -1;
	}
	prev_space = nm->remove_extra_ws;
	while (n > 0) {
		if (nm->ascii_words) {
			uint8_t *o;

			if (out->cap - out->len < 3 * n + 8 &&
			    rp_buf_reserve(out, 3 * n + 8) == -1)
				return -1;
			if (mk != NULL && mk->cap - mk->n < n) {
				uint32_t *q = realloc(mk->p, (mk->n + n + 256) * sizeof(*q));

				if (q == NULL)
					return -1;
				mk->p = q;
				mk->cap = mk->n + n + 256;
			}
			o = out->p + out->len;
			k = ascii_words(nm, p, n, &o, out->p, mk, &prev_space);
			out->len = (size_t)(o - out->p);
			p += k;
			n -= k;
			if (n == 0)
				break;
		}
		/*
		 * A run of ASCII, or of two- and three-byte characters, that
		 * normalizes to itself: copied.
		 */
		k = 0;
		if (nm->has_fast && p[0] < 0x80 && nm->same[p[0]]) {
			k = nm->print_same ? printable_run(p, n) : 0;
			while (k < n && p[k] < 0x80 && nm->same[p[k]])
				k++;
			/* Its last byte may start a longer match with what follows. */
			if (k < n && !ascii_ends(nm, p[k - 1], p[k]))
				k--;
		} else if (nm->f2 != NULL && p[0] >= 0xc2)
			k = same_run(nm, p, n);
		if (k > 0) {
			if (out->cap - out->len < k && rp_buf_reserve(out, k) == -1)
				return -1;
			memcpy(out->p + out->len, p, k);
			out->len += k;
			prev_space = 0;
			p += k;
			n -= k;
			continue;
		}
		/* The ASCII path: one byte in, one byte out. */
		if (nm->has_fast && p[0] < 0x80 && nm->fast[p[0]] &&
		    (n == 1 || ascii_ends(nm, p[0], p[1])) && nm->flen[p[0]] == 1) {
			uint8_t c = nm->fout[p[0]] != NULL ?
			    (uint8_t)nm->fout[p[0]][0] : p[0];

			if (out->cap - out->len < 3 && rp_buf_reserve(out, 3) == -1)
				return -1;
			if (c != ' ') {
				out->p[out->len++] = c;
				prev_space = 0;
			} else {
				if (!prev_space) {
					if (mk != NULL && mark_add(mk, out->len) == -1)
						return -1;
					if (splen == 3) {
						out->p[out->len] = 0xe2;
						out->p[out->len + 1] = 0x96;
						out->p[out->len + 2] = 0x81;
						out->len += 3;
					} else
						out->p[out->len++] = ' ';
				}
				prev_space = nm->remove_extra_ws;
			}
			p++;
			n--;
			continue;
		}
		k = norm_prefix(m, nm, p, n, &s, &sl);
		while (prev_space && sl > 0 && s[0] == ' ') {
			s++;
			sl--;
		}
		if (sl > 0) {
			if (out->cap - out->len < sl * 3 &&
			    rp_buf_reserve(out, sl * 3) == -1)
				return -1;
			for (i = 0; i < sl; i++)
				if (nm->escape_ws && s[i] == ' ') {
					if (mk != NULL && mark_add(mk, out->len) == -1)
						return -1;
					memcpy(out->p + out->len, SPACE_SYM, 3);
					out->len += 3;
				} else {
					if (mk != NULL && s[i] == '\xe2' && sl - i >= 3 &&
					    memcmp(s + i, SPACE_SYM, 3) == 0 &&
					    mark_add(mk, out->len) == -1)
						return -1;
					out->p[out->len++] = (uint8_t)s[i];
				}
			prev_space = s[sl - 1] == ' ';
		}
		p += k;
		n -= k;
		if (!nm->remove_extra_ws)
			prev_space = 0;
	}
	if (nm->remove_extra_ws)
		while (out->len >= splen &&
		    memcmp(out->p + out->len - splen, sp, splen) == 0)
			out->len -= splen;
	if (mk != NULL)
		while (mk->n > 0 && mk->p[mk->n - 1] >= out->len)
			mk->n--;
	if (ws_suffix && nm->add_dummy_prefix && rp_buf_append(out, sp, splen) == -1)
		return -1;
	return 0;
}

/* ---- loading ------------------------------------------------------------ */

static int
byte_of_piece(const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *a, *b;

	if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
		return -1;
	if ((a = memchr(hex, s[3], 16)) == NULL || (b = memchr(hex, s[4], 16)) == NULL)
		return -1;
	return (int)((a - hex) * 16 + (b - hex));
}

static void
set_name(const struct str *s, const char *dflt, const char **out, size_t *len)
{
	if (s->set && s->len > 0) {
		*out = s->s;
		*len = s->len;
	} else {
		*out = dflt;
		*len = strlen(dflt);
	}
}

void
spm_model_free(struct spm_model *m)
{
	if (m == NULL)
		return;
	free(m->file);
	free(m->extra);
	free(m->pieces);
	free(m->ptype);
	free(m->score);
	free(m->normal.slot);
	free(m->reserved.slot);
	free(m->keys);
	free(m->keytab.slot);
	free(m->da.u);
	trie_free(&m->user);
	free(m->norm.units);
	free(m->denorm.units);
	free(m->norm.f2);
	free(m->norm.same3);
	free(m);
}

static int self_test(struct spm_model *m, const struct modelspec *ms, char *err,
	    size_t errlen);

/* Whether every string of the charsmap is valid UTF-8. */
static int
charsmap_utf8(const struct norm *nm)
{
	size_t i = 0, k;

	while (i < nm->nstr) {
		const char *z = memchr(nm->str + i, '\0', nm->nstr - i);

		k = z != NULL ? (size_t)(z - (nm->str + i)) : nm->nstr - i;
		if (uni_utf8_valid_prefix((const uint8_t *)nm->str + i, k) != k)
			return 0;
		i += k + 1;
	}
	return 1;
}

/*
 * The entry of the two-byte character b c: what norm_prefix() finds for
 * it when the byte after it is no label under its node of the
 * charsmap's trie (the labels there lie in [klo, khi]); not ok when a
 * user-defined piece may start at b, when the charsmap has a rule for b
 * alone, or when the normalized form is not valid UTF-8.
 */
static void
fast2_init(const struct spm_model *m, const struct norm *nm,
    const uint8_t *kid, uint8_t b, uint8_t c, struct fast2 *f)
{
	const uint8_t q[2] = { b, c };
	const char *out = NULL;
	size_t i = 0, len;

	f->ok = 0;
	f->klo = 0xff;
	f->khi = 0;
	if (m->has_user && m->user.root[b] != 0)
		return;
	if (nm->has_trie && nm->nunits > 0) {
		/* The walk of charsmap_match() over the character. */
		uint32_t node = u_offset(nm->units[0]), v = 0;
		int r;

		for (i = 0; i < 2 && (r = cm_step(nm, &node, q[i], &v)) != 0; i++)
			if (r == 2) {
				if (i == 0)
					return;
				out = nm->str + v;
			}
		if (i == 2) {
			f->klo = kid[2 * node];
			f->khi = kid[2 * node + 1];
		}
	}
	len = out != NULL ? strlen(out) : 2;
	if (len > 255 || (out != NULL &&
	    uni_utf8_valid_prefix((const uint8_t *)out, len) != len))
		return;
	f->out = out;
	f->len = (uint8_t)len;
	f->ok = 1;
}

/*
 * nm->same3: the characters no rule of the charsmap starts with (walked
 * a byte at a time, no further than a byte no rule goes on with); not
 * U+2581 (a literal one is marked as it is written), nor those whose
 * lead byte may start a user-defined piece.
 */
static void
same3_init(const struct spm_model *m, const struct norm *nm)
{
	const int trie = nm->has_trie && nm->nunits > 0;
	uint32_t root = trie ? u_offset(nm->units[0]) : 0, n1, n2, n3, v;
	unsigned b0, b1, b2, cp;
	int r1, r2, r3;

	for (b0 = 0xe0; b0 <= 0xef; b0++) {
		if (m->has_user && m->user.root[b0] != 0)
			continue;
		n1 = root;
		r1 = trie ? cm_step(nm, &n1, (uint8_t)b0, &v) : 0;
		for (b1 = 0x80; b1 <= 0xbf && r1 != 2; b1++) {
			/* Not overlong, no surrogate. */
			if ((b0 == 0xe0 && b1 < 0xa0) || (b0 == 0xed && b1 >= 0xa0))
				continue;
			n2 = n1;
			r2 = r1 != 0 ? cm_step(nm, &n2, (uint8_t)b1, &v) : 0;
			for (b2 = 0x80; b2 <= 0xbf && r2 != 2; b2++) {
				cp = (b0 & 0xfu) << 12 | (b1 & 0x3fu) << 6 | (b2 & 0x3fu);
				if (cp == 0x2581)
					continue;
				n3 = n2;
				r3 = r2 != 0 ? cm_step(nm, &n3, (uint8_t)b2, &v) : 0;
				/* A rule for it, or one that goes on past it. */
				if (r3 != 0)
					continue;
				nm->same3[cp >> 3] |= (uint8_t)(1u << (cp & 7));
			}
		}
	}
}

/*
 * The normalizer's tables (norm_prefix()'s and norm_apply()'s fast
 * paths): ASCII bytes, two-byte characters, three-byte ones.  -1 on
 * ENOMEM.
 */
static int
fast_init(struct spm_model *m)
{
	struct norm *nm = &m->norm;
	unsigned b, c;
	uint8_t *kid = NULL;

	if (nm->has_trie && nm->nunits > 0 && (kid = cm_kids(nm)) == NULL)
		return -1;
	for (b = 0; b < 128; b++) {
		const char *out = NULL;
		uint8_t byte = (uint8_t)b;
		int ok = 1;

		nm->hklo[b] = 0xff;
		nm->hkhi[b] = 0;
		if (m->has_user && m->user.root[b] != 0)
			ok = 0;
		if (ok && nm->has_trie && nm->nunits > 0) {
			uint32_t node = u_offset(nm->units[0]), v = 0;
			int r = cm_step(nm, &node, (uint8_t)b, &v);

			if (r != 0) {
				/* No ASCII byte may go on with it (so [lo, hi] is above). */
				nm->hklo[b] = kid[2 * node];
				nm->hkhi[b] = kid[2 * node + 1];
				ok = nm->hklo[b] >= 0x80;
				if (ok && r == 2)
					out = nm->str + v;
			}
		}
		if (out != NULL && uni_utf8_valid_prefix((const uint8_t *)out,
		    strlen(out)) != strlen(out))
			ok = 0;
		nm->fast[b] = (uint8_t)ok;
		nm->same[b] = (uint8_t)(ok && b != ' ' && (out == NULL ||
		    (out[0] == (char)b && out[1] == '\0')));
		nm->fout[b] = out;
		nm->flen[b] = out != NULL ? (uint8_t)strlen(out) : 1;
		if (out != NULL && strlen(out) > 255)
			nm->fast[b] = 0;
		(void)byte;
	}
	nm->has_fast = 1;
	nm->print_same = 1;
	for (b = 0x21; b < 0x7f; b++)
		if (!nm->same[b])
			nm->print_same = 0;
	nm->ascii_words = nm->print_same && nm->escape_ws && nm->fast[' '] &&
	    nm->flen[' '] == 1 && (nm->fout[' '] == NULL || nm->fout[' '][0] == ' ');
	/* Two-byte characters. */
	if ((nm->f2 = calloc(0x800 - 0x80, sizeof(*nm->f2))) == NULL) {
		free(kid);
		return -1;
	}
	for (b = 0xc2; b <= 0xdf; b++)
		for (c = 0x80; c <= 0xbf; c++)
			fast2_init(m, nm, kid, (uint8_t)b, (uint8_t)c,
			    &nm->f2[f2_at((uint8_t)b, (uint8_t)c)]);
	/* Three-byte characters. */
	if ((nm->same3 = calloc(0x10000 / 8, 1)) == NULL) {
		free(kid);
		return -1;
	}
	same3_init(m, nm);
	free(kid);
	return 0;
}

/*
 * Whether words can be encoded apart: no matchable piece holds a U+2581
 * after another character, user-defined pieces are valid UTF-8, the
 * dummy U+2581 is a prefix, and (BPE) no piece is UNUSED, whose
 * resegmentation depends on the whole line.
 */
static int
word_safe(struct spm_model *m)
{
	size_t i, j, k;
	double b = fabs((double)m->unk_score);

	if (m->ws_suffix || (m->type != SPM_UNIGRAM && m->type != SPM_BPE))
		return 0;
	for (i = 0; i < m->n; i++) {
		const struct spm_piece *pc = &m->pieces[i];
		int prev_ws = 1;

		if (pc->type == SPM_UNUSED && m->type == SPM_BPE)
			return 0;
		if (pc->type != SPM_NORMAL && pc->type != SPM_USER_DEFINED)
			continue;
		if (fabs(piece_score(m, (int32_t)i, pc->len)) > b)
			b = fabs(piece_score(m, (int32_t)i, pc->len));
		for (j = 0; j < pc->len; j += k) {
			int ws;

			k = one_char_len((uint8_t)pc->s[j]);
			if (k > pc->len - j)
				k = pc->len - j;
			if (pc->type == SPM_USER_DEFINED &&
			    valid_utf8((const uint8_t *)pc->s + j, pc->len - j) != k)
				return 0;
			ws = k == 3 && memcmp(pc->s + j, SPACE_SYM, 3) == 0;
			if (ws && !prev_ws)
				return 0;
			prev_ws = ws;
		}
	}
	m->uni_bound = b;
	return isfinite(b);
}

static int
count_pieces(const uint8_t *p, size_t n, size_t *count)
{
	struct pb b = { p, p + n };
	uint32_t num;
	int wt, rc;

	*count = 0;
	while ((rc = pb_field(&b, &num, &wt)) == 1) {
		if (num == 1 && wt == 2)
			(*count)++;
		if (pb_skip(&b, num, wt, 0) == -1)
			return -1;
	}
	return rc;
}

/*
 * Keep only the bytes of the file read later (the pieces' texts, the
 * charsmaps, the names, the self-test samples) in a buffer of their
 * own, and let the file go before the tables are built.
 */
static int
keep_text(struct spm_model *m, struct modelspec *ms)
{
	const uint8_t *f = m->file, *fe = m->file + m->nfile;
	struct str *strs[9];
	size_t total = 0, i, ns = 0, at = 0;
	uint8_t *k;

	strs[ns++] = &ms->tr.unk_surface;
	strs[ns++] = &ms->tr.unk_piece;
	strs[ns++] = &ms->tr.bos_piece;
	strs[ns++] = &ms->tr.eos_piece;
	strs[ns++] = &ms->tr.pad_piece;
	strs[ns++] = &ms->ns.charsmap;
	strs[ns++] = &ms->dn.charsmap;
#define IN_FILE(p)	((const uint8_t *)(p) >= f && (const uint8_t *)(p) < fe)
	for (i = 0; i < m->n; i++)
		if (IN_FILE(m->pieces[i].s))
			total += m->pieces[i].len;
	for (i = 0; i < ns; i++)
		if (strs[i]->set && IN_FILE(strs[i]->s))
			total += strs[i]->len;
	for (i = 0; i < ms->nsamples; i++)
		total += ms->samples[i].input.len + ms->samples[i].expected.len;
	/* The charsmap's units are read as 32-bit words: aligned. */
	if ((k = malloc(total + 8 * (ns + 1))) == NULL)
		return -1;
	for (i = 0; i < ns; i++)
		if (strs[i]->set && IN_FILE(strs[i]->s)) {
			at = (at + 7) & ~(size_t)7;
			memcpy(k + at, strs[i]->s, strs[i]->len);
			strs[i]->s = (const char *)k + at;
			at += strs[i]->len;
		}
	for (i = 0; i < ms->nsamples; i++) {
		struct str *a = &ms->samples[i].input, *b = &ms->samples[i].expected;

		if (IN_FILE(a->s)) {
			memcpy(k + at, a->s, a->len);
			a->s = (const char *)k + at;
			at += a->len;
		}
		if (IN_FILE(b->s)) {
			memcpy(k + at, b->s, b->len);
			b->s = (const char *)k + at;
			at += b->len;
		}
	}
	for (i = 0; i < m->n; i++)
		if (IN_FILE(m->pieces[i].s)) {
			memcpy(k + at, m->pieces[i].s, m->pieces[i].len);
			m->pieces[i].s = (const char *)k + at;
			at += m->pieces[i].len;
		}
#undef IN_FILE
	free(m->file);
	m->file = k;
	m->nfile = at;
	return 0;
}

static struct spm_model *
model_build(uint8_t *file, size_t nfile, int extra_ids, char *err,
    size_t errlen)
{
	struct spm_model *m;
	struct modelspec ms;
	struct pb b = { file, file + nfile }, sub;
	uint32_t num;
	int wt, rc, k;
	size_t count, i, total = 0, np = 0, nuser = 0;
	char sh[64];

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		free(file);
		rp_seterr(err, errlen, "out of memory");
		return NULL;
	}
	m->file = file;
	m->nfile = nfile;
	memset(&ms, 0, sizeof ms);
	ms.ns.add_dummy_prefix = ms.ns.remove_extra_ws = ms.ns.escape_ws = 1;
	ms.dn.add_dummy_prefix = ms.dn.remove_extra_ws = ms.dn.escape_ws = 1;
	ms.tr.model_type = SPM_UNIGRAM;
	if (extra_ids < 0 || extra_ids > 1000000) {
		rp_seterr(err, errlen, "bad number of extra ids");
		goto fail;
	}
	if (count_pieces(file, nfile, &count) == -1) {
		rp_seterr(err, errlen,
		    "not a SentencePiece model (malformed protobuf)");
		goto fail;
	}
	if (count + (size_t)extra_ids > INT32_MAX - 1) {
		rp_seterr(err, errlen, "too many pieces");
		goto fail;
	}
	if ((m->pieces = calloc(count + (size_t)extra_ids + 1, sizeof(*m->pieces))) == NULL)
		goto nomem;
	while ((rc = pb_field(&b, &num, &wt)) == 1) {
		if (wt != 2 || num < 1 || num > 5) {
			if (pb_skip(&b, num, wt, 0) == -1)
				goto malformed;
			continue;
		}
		if (pb_bytes(&b, &sub) == -1)
			goto malformed;
		switch (num) {
		case 1:
			m->pieces[np].type = SPM_NORMAL;
			m->pieces[np].s = "";
			if (parse_piece(&sub, &m->pieces[np], err, errlen,
			    np) == -1)
				goto fail;
			np++;
			break;
		case 2:
			if (parse_trainer(&sub, &ms.tr) != 0)
				goto malformed;
			break;
		case 3:
			if (parse_normspec(&sub, &ms.ns) != 0)
				goto malformed;
			break;
		case 4:
			if ((k = parse_selftest(&sub, &ms)) == -2)
				goto nomem;
			if (k != 0)
				goto malformed;
			break;
		case 5:
			if (parse_normspec(&sub, &ms.dn) != 0)
				goto malformed;
			break;
		}
	}
	if (rc == -1)
		goto malformed;
	/* seqio's sentinels. */
	if (extra_ids > 0) {
		char *q;

		if ((m->extra = malloc((size_t)extra_ids * 24)) == NULL)
			goto nomem;
		q = m->extra;
		for (k = extra_ids - 1; k >= 0; k--) {
			int len = sprintf(q, "%s<extra_id_%d>", SPACE_SYM, k);

			m->pieces[np].s = q;
			m->pieces[np].len = (uint32_t)len;
			m->pieces[np].score = 0;
			m->pieces[np].type = SPM_USER_DEFINED;
			np++;
			q += len + 1;
		}
	}
	m->n = np;
	if (keep_text(m, &ms) == -1)
		goto nomem;
	m->type = ms.tr.model_type;
	m->byte_fallback = ms.tr.byte_fallback;
	m->ws_suffix = ms.tr.ws_suffix;
	if (np == 0) {
		rp_seterr(err, errlen,
		    "no pieces (not a SentencePiece model?)");
		goto fail;
	}
	for (i = 0, k = 0; i < np; i++)
		k += m->pieces[i].type == SPM_UNKNOWN || m->pieces[i].type == SPM_CONTROL ||
		    m->pieces[i].type == SPM_BYTE;
	if (strtab_init(&m->normal, np - (size_t)k) == -1 ||
	    strtab_init(&m->reserved, (size_t)k) == -1)
		goto nomem;
	m->unk_id = -1;
	m->min_score = FLT_MAX;
	m->max_score = FLT_MIN;
	for (i = 0; i < 256; i++)
		m->byte_id[i] = -1;
	for (i = 0; i < np; i++) {
		struct spm_piece *pc = &m->pieces[i];
		int normal = pc->type == SPM_NORMAL || pc->type == SPM_USER_DEFINED ||
		    pc->type == SPM_UNUSED;
		long dup;

		if (pc->len == 0) {
			rp_seterr(err, errlen, "piece %zu is empty", i);
			goto fail;
		}
		if (isnan(pc->score)) {
			rp_seterr(err, errlen,
			    "piece %zu (\"%s\") has a NaN score", i,
			    show(pc->s, pc->len, sh, sizeof sh));
			goto fail;
		}
		if ((dup = strtab_add(normal ? &m->normal : &m->reserved,
		    m->pieces, (uint32_t)i)) >= 0) {
			rp_seterr(err, errlen, "piece %zu (\"%s\") is already "
			    "defined as piece %ld", i, show(pc->s, pc->len, sh, sizeof sh), dup);
			goto fail;
		}
		if (normal)
			total += pc->len;
		if (normal && cstr_len(pc->s, pc->len) < pc->len) {
			m->nul_key = 1;
			if (pc->s[0] == '\0' && ms.tr.model_type == SPM_UNIGRAM) {
				rp_seterr(err, errlen, "piece %zu (\"%s\") begins "
				    "with a NUL byte (an empty key in the unigram "
				    "trie, which upstream fails to build)", i,
				    show(pc->s, pc->len, sh, sizeof sh));
				goto fail;
			}
		}
		if (pc->type == SPM_USER_DEFINED)
			nuser += pc->len;
		if (pc->type == SPM_UNUSED)
			m->has_unused = 1;
		if (pc->type == SPM_UNKNOWN) {
			if (m->unk_id >= 0) {
				rp_seterr(err, errlen,
				    "two unknown pieces (%ld and %zu)",
				    m->unk_id, i);
				goto fail;
			}
			m->unk_id = (long)i;
		}
		if (pc->type == SPM_BYTE) {
			int c;

			if (!m->byte_fallback) {
				rp_seterr(err, errlen,
				    "byte piece %s (%zu) but byte_fallback "
				    "is false", show(pc->s, pc->len, sh, sizeof sh), i);
				goto fail;
			}
			if ((c = byte_of_piece(pc->s, pc->len)) < 0) {
				rp_seterr(err, errlen,
				    "byte piece %zu (\"%s\") is invalid", i,
				    show(pc->s, pc->len, sh, sizeof sh));
				goto fail;
			}
			m->byte_id[c] = (int32_t)i;
		}
		if (pc->type == SPM_NORMAL) {
			if (pc->score < m->min_score)
				m->min_score = pc->score;
			if (pc->score > m->max_score)
				m->max_score = pc->score;
		}
	}
	if (m->unk_id < 0) {
		rp_seterr(err, errlen, "no unknown piece (type UNKNOWN)");
		goto fail;
	}
	if (m->byte_fallback)
		for (i = 0; i < 256; i++)
			if (m->byte_id[i] < 0) {
				rp_seterr(err, errlen, "byte_fallback but no "
				    "byte piece <0x%02zX>", i);
				goto fail;
			}
	m->unk_score = m->min_score - 10.0f;
	for (i = 0; i < 128; i++) {
		char c = (char)i;

		m->char_id[i] = (int32_t)strtab_find(&m->normal, m->pieces, &c, 1);
	}
	if ((m->ptype = malloc(np)) == NULL ||
	    (m->score = malloc(np * sizeof(*m->score))) == NULL)
		goto nomem;
	for (i = 0; i < np; i++) {
		m->ptype[i] = m->pieces[i].type;
		m->score[i] = m->pieces[i].score;
	}
	/* Whether a reserved piece shares its text with another (PieceToId() finds it first). */
	for (i = 0; i < np && m->reserved.slot != NULL; i++) {
		uint8_t t = m->pieces[i].type;

		if ((t == SPM_NORMAL || t == SPM_USER_DEFINED || t == SPM_UNUSED) &&
		    strtab_find(&m->reserved, m->pieces, m->pieces[i].s,
		    m->pieces[i].len) >= 0)
			m->has_twin = 1;
	}
	if (trie_init(&m->user, nuser) == -1)
		goto nomem;
	for (i = 0; i < np; i++) {
		struct spm_piece *pc = &m->pieces[i];

		if (pc->type != SPM_NORMAL && pc->type != SPM_USER_DEFINED &&
		    pc->type != SPM_UNUSED)
			continue;
		if (pc->type == SPM_USER_DEFINED) {
			/* Upstream's matcher too takes keys up to their NUL. */
			m->has_user = 1;
			if (trie_add(&m->user, pc->s, cstr_len(pc->s, pc->len),
			    (int32_t)i) == -1)
				goto nomem;
		}
	}
	/* The lattice's trie serves unigram models only. */
	if (m->type == SPM_UNIGRAM && m->nul_key && key_table(m) == -1)
		goto nomem;
	if (m->type == SPM_UNIGRAM && (rc = da_build(&m->da, m)) != 0) {
		if (rc == -2) {
			rp_seterr(err, errlen, "the pieces make a trie of more "
			    "than %u nodes and pieces (too large for the lattice)",
			    (unsigned)DA_MAXBASE);
			goto fail;
		}
		goto nomem;
	}
	set_name(&ms.tr.unk_piece, "<unk>", &m->unk_piece, &m->unk_piece_len);
	set_name(&ms.tr.bos_piece, "<s>", &m->bos_piece, &m->bos_piece_len);
	set_name(&ms.tr.eos_piece, "</s>", &m->eos_piece, &m->eos_piece_len);
	set_name(&ms.tr.pad_piece, "<pad>", &m->pad_piece, &m->pad_piece_len);
	/*
	 * Upstream looks up the ids of bos_piece and eos_piece, and writes
	 * unk_surface, as C strings: up to a NUL (the bos and eos tokens'
	 * text is the whole name).
	 */
	m->bos_key_len = cstr_len(m->bos_piece, m->bos_piece_len);
	m->eos_key_len = cstr_len(m->eos_piece, m->eos_piece_len);
	m->pad_key_len = cstr_len(m->pad_piece, m->pad_piece_len);
	if (ms.tr.unk_surface.set) {
		m->unk_surface = ms.tr.unk_surface.s;
		m->unk_surface_len = cstr_len(ms.tr.unk_surface.s,
		    ms.tr.unk_surface.len);
	} else {
		m->unk_surface = DEFAULT_UNK_SURFACE;
		m->unk_surface_len = strlen(DEFAULT_UNK_SURFACE);
	}
	if (norm_init(&m->norm, &ms.ns, err, errlen) == -1)
		goto fail;
	if (fast_init(m) == -1)
		goto nomem;
	m->wordsafe = word_safe(m);
	m->norm_utf8 = !m->norm.has_trie || charsmap_utf8(&m->norm);
	if (ms.dn.present && ms.dn.charsmap.len > 0) {
		char tmp[RP_ERRMAX];

		m->has_denorm = 1;
		if (norm_init(&m->denorm, &ms.dn, tmp, sizeof tmp) == -1) {
			rp_seterr(err, errlen, "denormalizer: %s", tmp);
			goto fail;
		}
	}
	if (self_test(m, &ms, err, errlen) == -1)
		goto fail;
	free(ms.samples);
	return m;
malformed:
	rp_seterr(err, errlen,
	    "not a SentencePiece model (malformed protobuf)");
	goto fail;
nomem:
	rp_seterr(err, errlen, "out of memory");
fail:
	free(ms.samples);
	spm_model_free(m);
	return NULL;
}

struct spm_model *
spm_model_parse(const uint8_t *p, size_t n, int extra_ids, char *err,
    size_t errlen)
{
	uint8_t *c = malloc(n ? n : 1);

	if (c == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(c, p, n);
	return model_build(c, n, extra_ids, err, errlen);
}

struct spm_model *
spm_model_load(const char *path, int extra_ids, char *err, size_t errlen)
{
	struct buf b = { 0 };

	if (rp_buf_read_file(&b, path, SPM_MAX_MODEL) == -1) {
		if (errno == EFBIG)
			rp_seterr(err, errlen,
			    "larger than %lu bytes", SPM_MAX_MODEL);
		else if (errno == ENOMEM)
			rp_seterr(err, errlen, "out of memory");
		else
			rp_seterr(err, errlen, "%s", strerror(errno));
		rp_buf_free(&b);
		return NULL;
	}
	if (b.p == NULL && (b.p = malloc(1)) == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return NULL;
	}
	return model_build(b.p, b.len, extra_ids, err, errlen);
}

int
spm_looks_like_model(const uint8_t *p, size_t n)
{
	size_t count;

	if (n == 0 || p[0] != 0x0a)	/* field 1, length-delimited */
		return 0;
	return count_pieces(p, n, &count) == 0 && count > 0;
}

/* Whether [p, e) is a score as spm_train writes them: -?digits[.digits][\r]. */
static int
spm_is_score(const uint8_t *p, const uint8_t *e)
{
	int digits = 0;

	if (p < e && *p == '-')
		p++;
	for (; p < e && *p >= '0' && *p <= '9'; p++)
		digits++;
	if (p < e && *p == '.')
		for (p++; p < e && *p >= '0' && *p <= '9'; p++)
			digits++;
	if (p < e && *p == '\r')
		p++;
	return digits > 0 && p == e;
}

const char *
spm_guess_text_vocab(const uint8_t *p, size_t n)
{
	size_t i, lines = 0, quoted = 0, counted = 0, hashes = 0, scored = 0;
	const uint8_t *s = p, *e = p + n, *nl;

	if (n == 0 || memchr(p, '\0', n < 4096 ? n : 4096) != NULL)
		return NULL;
	for (i = 0; s < e && i < 2000; i++, s = nl + 1) {
		size_t len;

		if ((nl = memchr(s, '\n', (size_t)(e - s))) == NULL)
			nl = e;
		len = (size_t)(nl - s);
		lines++;
		const uint8_t *tab = memchr(s, '\t', len);

		if (len >= 2 && s[0] == '\'' && (s[len - 1] == '\'' ||
		    (len >= 3 && s[len - 2] == '\'' && s[len - 1] == '\r')))
			quoted++;
		else if (tab != NULL && tab > s && tab + 1 < nl &&
		    spm_is_score(tab + 1, nl))
			scored++;	/* spm_train's "piece<TAB>score" */
		else {
			const uint8_t *sp = nl;

			while (sp > s && sp[-1] != ' ')
				sp--;
			sp = sp > s ? sp - 1 : NULL;

			if (sp != NULL && sp > s && sp + 1 < nl) {
				const uint8_t *d = sp + 1;

				while (d < nl && ((*d >= '0' && *d <= '9') ||
				    *d == '\r'))
					d++;
				if (d == nl || (nl - sp > 4 &&
				    memcmp(sp + 1, "#fairseq", 8 < (size_t)(nl - sp - 1) ?
				    8 : (size_t)(nl - sp - 1)) == 0))
					counted++;
			}
			if (len > 2 && s[0] == '#' && s[1] == '#')
				hashes++;
		}
	}
	if (lines == 0)
		return NULL;
	if (quoted * 2 > lines)
		return "a tensor2tensor vocabulary";
	if (scored * 2 > lines)
		return "a SentencePiece .vocab";
	if (counted * 2 > lines)
		return "a fairseq dict.txt";
	if (hashes > 0 || (n > 5 && memcmp(p, "[PAD]", 5) == 0))
		return "a BERT vocab.txt";
	return NULL;
}

/* ---- accessors ------------------------------------------------------------ */

size_t spm_size(const struct spm_model *m) { return m->n; }
enum spm_model_type spm_model_type(const struct spm_model *m) { return m->type; }

const char *
spm_piece(const struct spm_model *m, int64_t id, size_t *len)
{
	if (id < 0 || (uint64_t)id >= m->n)
		return NULL;
	if (len != NULL)
		*len = m->pieces[id].len;
	return m->pieces[id].s;
}

enum spm_type
spm_piece_type(const struct spm_model *m, int64_t id)
{
	if (id < 0 || (uint64_t)id >= m->n)
		return 0;
	return m->pieces[id].type;
}

float
spm_score(const struct spm_model *m, int64_t id)
{
	if (id < 0 || (uint64_t)id >= m->n)
		return 0;
	return m->pieces[id].score;
}

long
spm_piece_id(const struct spm_model *m, const char *s, size_t len)
{
	long id;

	if ((id = strtab_find(&m->reserved, m->pieces, s, len)) >= 0)
		return id;
	if (m->keys != NULL) {
		/*
		 * A unigram model's PieceToId() is an exact match in its
		 * trie, whose keys end at a NUL (see key_table()): a text
		 * holding a NUL is no piece there.
		 */
		if (len == 0 || memchr(s, '\0', len) != NULL)
			return m->unk_id;
		id = strtab_find(&m->keytab, m->keys, s, len);
		return id >= 0 ? id : m->unk_id;
	}
	if ((id = strtab_find(&m->normal, m->pieces, s, len)) >= 0)
		return id;
	return m->unk_id;
}

long spm_unk_id(const struct spm_model *m) { return m->unk_id; }

static long
control_id(const struct spm_model *m, const char *s, size_t len)
{
	long id = spm_piece_id(m, s, len);

	return m->pieces[id].type == SPM_CONTROL ? id : -1;
}

long spm_bos_id(const struct spm_model *m) { return control_id(m, m->bos_piece, m->bos_key_len); }
long spm_eos_id(const struct spm_model *m) { return control_id(m, m->eos_piece, m->eos_key_len); }
long spm_pad_id(const struct spm_model *m) { return control_id(m, m->pad_piece, m->pad_key_len); }

int
spm_parse_extra(const struct spm_model *m, const char *s,
    enum spm_extra opts[SPM_MAX_EXTRA], char *err, size_t errlen)
{
	int n = 0;
	const char *c;
	size_t len;
	char sh[64];

	for (; *s != '\0'; s = c + (*c != '\0')) {
		enum spm_extra x;

		c = strchr(s, ':');
		if (c == NULL)
			c = s + strlen(s);
		len = (size_t)(c - s);
		if (len == 0)
			continue;
		if (len == 3 && memcmp(s, "bos", 3) == 0)
			x = SPM_X_BOS;
		else if (len == 3 && memcmp(s, "eos", 3) == 0)
			x = SPM_X_EOS;
		else if (len == 7 && memcmp(s, "reverse", 7) == 0)
			x = SPM_X_REVERSE;
		else if ((len == 3 && memcmp(s, "unk", 3) == 0) ||
		    (len == 9 && memcmp(s, "unk_piece", 9) == 0))
			x = SPM_X_UNK;
		else {
			rp_seterr(err, errlen, "option \"%s\" is not available",
			    show(s, len, sh, sizeof sh));
			return -1;
		}
		if (x == SPM_X_BOS && m->pieces[spm_piece_id(m, m->bos_piece,
		    m->bos_key_len)].type == SPM_UNKNOWN) {
			rp_seterr(err, errlen,
			    "id for `%s` is not defined", show(m->bos_piece,
			    m->bos_piece_len, sh, sizeof sh));
			return -1;
		}
		if (x == SPM_X_EOS && m->pieces[spm_piece_id(m, m->eos_piece,
		    m->eos_key_len)].type == SPM_UNKNOWN) {
			rp_seterr(err, errlen,
			    "id for `%s` is not defined", show(m->eos_piece,
			    m->eos_piece_len, sh, sizeof sh));
			return -1;
		}
		if (n == SPM_MAX_EXTRA) {
			rp_seterr(err, errlen,
			    "more than %d extra options", SPM_MAX_EXTRA);
			return -1;
		}
		opts[n++] = x;
	}
	return n;
}

/* ---- encoders --------------------------------------------------------- */

struct spm_enc *
spm_enc_new(const struct spm_model *m)
{
	struct spm_enc *e = calloc(1, sizeof(*e));
	size_t i;

	if (e == NULL)
		return NULL;
	e->m = m;
	if (m->type == SPM_BPE) {
		if ((e->pcache = malloc(PC_SLOTS * sizeof(*e->pcache))) == NULL) {
			free(e);
			return NULL;
		}
		for (i = 0; i < PC_SLOTS; i++)
			e->pcache[i].a = -1;
	}
	return e;
}

void
spm_enc_free(struct spm_enc *e)
{
	if (e == NULL)
		return;
	rp_buf_free(&e->nb);
	rp_buf_free(&e->tmp);
	free(e->best);
	free(e->from);
	free(e->bid);
	free(e->sym);
	free(e->heap);
	free(e->rev);
	free(e->raw);
	free(e->tok);
	free(e->mk.p);
	free(e->pcache);
	if (e->cache != NULL)
		(void)munmap(e->cache, SC_BYTES);
	free(e->seg);
	free(e->stok);
	rp_buf_free(&e->stext);
	free(e);
}

void
spm_enc_set_extra(struct spm_enc *e, const enum spm_extra *opts, int n)
{
	if (n > SPM_MAX_EXTRA)
		n = SPM_MAX_EXTRA;
	if (n > 0)
		memcpy(e->extra, opts, (size_t)n * sizeof(*opts));
	e->nextra = n;
}

int
spm_enc_set_specials(struct spm_enc *e, const struct spm_special *sp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sp[i].len == 0 || sp[i].id < 0) {
			errno = EINVAL;
			return -1;
		}
	e->special = n > 0 ? sp : NULL;
	e->nspecial = n;
	return 0;
}

/*
 * Megatron-LM's SentencePieceTokenizer (megatron/training/tokenizer/
 * tokenizer.py, _initalize()): <CLS>, <SEP>, <EOD>, <MASK>, then the
 * texts of the pad, bos and eos pieces (<PAD>, <BOS>, <EOS> when the
 * model has no such id); a text the model lacks takes the next id after
 * its pieces, in that order; a text named twice keeps its first place.
 */
size_t
spm_megatron_specials(const struct spm_model *m,
    struct spm_special out[SPM_MEGATRON_SPECIALS])
{
	static const char *const fixed[] = { "<CLS>", "<SEP>", "<EOD>", "<MASK>" };
	const char *text[SPM_MEGATRON_SPECIALS];
	size_t len[SPM_MEGATRON_SPECIALS], i, j, k = 0;
	long ids[3] = { spm_pad_id(m), spm_bos_id(m), spm_eos_id(m) };
	static const char *const dflt[3] = { "<PAD>", "<BOS>", "<EOS>" };
	int64_t next = (int64_t)m->n;

	for (i = 0; i < 4; i++) {
		text[i] = fixed[i];
		len[i] = strlen(fixed[i]);
	}
	for (i = 0; i < 3; i++)
		if (ids[i] >= 0 && (size_t)ids[i] < m->n) {
			text[4 + i] = m->pieces[ids[i]].s;
			len[4 + i] = m->pieces[ids[i]].len;
		} else {
			text[4 + i] = dflt[i];
			len[4 + i] = strlen(dflt[i]);
		}
	for (i = 0; i < SPM_MEGATRON_SPECIALS; i++) {
		long id;

		if (len[i] == 0)
			continue;
		for (j = 0; j < k; j++)
			if (out[j].len == len[i] && memcmp(out[j].s, text[i],
			    len[i]) == 0)
				break;
		if (j < k)
			continue;
		/* PieceToId(): a text that is no piece gives the unknown id. */
		id = spm_piece_id(m, text[i], len[i]);
		if (id == m->unk_id && (m->pieces[id].len != len[i] ||
		    memcmp(m->pieces[id].s, text[i], len[i]) != 0))
			id = next++;
		out[k].s = text[i];
		out[k].len = len[i];
		out[k].id = (int32_t)id;
		k++;
	}
	return k;
}

const struct spm_tok *spm_tokens(const struct spm_enc *e) { return e->tok; }
void spm_enc_whole_lines(struct spm_enc *e) { e->whole = 1; }
const char *spm_strerror(const struct spm_enc *e) { return e->err; }
uint64_t spm_enc_unknowns(const struct spm_enc *e) { return e->unknowns; }

const char *
spm_normalize(struct spm_enc *e, const uint8_t *p, size_t n, size_t *len)
{
	if (norm_apply(e->m, &e->m->norm, e->m->ws_suffix, p, n, &e->nb,
	    NULL) == -1 ||
	    rp_buf_putc(&e->nb, 0) == -1)
		return NULL;
	e->nb.len--;
	*len = e->nb.len;
	return (const char *)e->nb.p;
}

static int
grow_arr(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if ((q = realloc(*p, c * elem)) == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* Append a token to a growing array of them (*n of *cap used). */
static inline int
tok_push(struct spm_tok **t, size_t *n, size_t *cap, const char *s,
    size_t len, int32_t id)
{
	if (*n == *cap && grow_arr((void **)t, cap, *n + 1, sizeof(**t)) == -1)
		return -1;
	(*t)[*n].s = s;
	(*t)[*n].len = (uint32_t)len;
	(*t)[*n].id = id;
	(*n)++;
	return 0;
}

static inline int
raw_add(struct spm_enc *e, const char *s, size_t len, int32_t id)
{
	return tok_push(&e->raw, &e->nraw, &e->rawcap, s, len, id);
}

/* Rounding a float sum of n steps of magnitude up to x can make: generous. */
static inline double
round_bound(size_t n, double x)
{
	return (double)(n + 2) * x * (1.0 / (1 << 21));
}

/*
 * Unigram: the Viterbi of EncodeOptimized() over s[0..n), from the
 * score *base, appending the best path to raw; *base becomes the score
 * at the end.  *slack (when not NULL) gets the smallest margin of any
 * comparison made, less what rounding could have moved it: a cached
 * result is the same from another base while the slack exceeds the
 * rounding possible there (see seg_reusable()).
 */
static inline __attribute__((always_inline)) int
uni_seg_with(struct spm_enc *e, const char *s, size_t n, float *base,
    double *slack, const int user)
{
	const struct spm_model *m = e->m;
	const struct darray *da = &m->da;
	size_t st, kp, i, first = e->nraw, nch = 0;
	float *best;
	int32_t *from, *bid;
	int32_t unk = (int32_t)m->unk_id;
	double margin = INFINITY, d;
	size_t ntk;

	if (n + 1 > e->lcap) {
		size_t c = e->lcap ? e->lcap : 256;

		while (c < n + 1)
			c *= 2;
		free(e->best);
		free(e->from);
		free(e->bid);
		e->best = malloc(c * sizeof(float));
		e->from = malloc(c * sizeof(int32_t));
		e->bid = malloc(c * sizeof(int32_t));
		if (e->best == NULL || e->from == NULL || e->bid == NULL) {
			e->lcap = 0;
			return -1;
		}
		e->lcap = c;
	}
	best = e->best;
	from = e->from;
	bid = e->bid;
	for (i = 0; i <= n; i++)
		from[i] = -1;
	best[0] = *base;
	for (st = 0; st < n; nch++) {
		const float here = best[st];
		size_t mblen = one_char_len((uint8_t)s[st]);
		int single = 0;
		/* The node's unit in a local: the stores below may alias it. */
		uint32_t bl = da->u[0];

		if (mblen > n - st)
			mblen = n - st;
		for (kp = st; kp < n; ) {
			uint32_t c = (uint8_t)s[kp];
			uint32_t nu = da->u[(size_t)(bl >> 9) ^ c], v;
			int32_t id;

			kp++;
			if ((nu & 0x1ff) != c + 1)
				break;
			bl = nu;
			v = da->u[bl >> 9];
			if ((v & 0x1ff) != DA_VALUE)
				continue;
			id = (int32_t)(v >> 9);
			{
				double cand = (user ? piece_score(m, id, kp - st) :
				    (double)m->score[id]) + (double)here;

				if (from[kp] == -1) {
					best[kp] = (float)cand;
					from[kp] = (int32_t)st;
					bid[kp] = id;
				} else {
					d = cand - (double)best[kp];
					if (d > 0) {
						best[kp] = (float)cand;
						from[kp] = (int32_t)st;
						bid[kp] = id;
					} else
						d = -d;
					if (d < margin)
						margin = d;
				}
			}
			if (kp - st == mblen)
				single = 1;
		}
		if (!single) {
			float cand = m->unk_score + here;

			if (from[st + mblen] == -1) {
				best[st + mblen] = cand;
				from[st + mblen] = (int32_t)st;
				bid[st + mblen] = unk;
			} else {
				d = (double)cand - (double)best[st + mblen];
				if (cand > best[st + mblen]) {
					best[st + mblen] = cand;
					from[st + mblen] = (int32_t)st;
					bid[st + mblen] = unk;
				}
				if (fabs(d) < margin)
					margin = fabs(d);
			}
		}
		st += mblen;
	}
	/* Count the path's tokens, then lay them out from the last. */
	for (kp = n, ntk = 0; kp > 0; kp = (size_t)from[kp])
		ntk++;
	if (grow_arr((void **)&e->raw, &e->rawcap, first + ntk, sizeof(*e->raw)) == -1)
		return -1;
	e->nraw = first + ntk;
	for (kp = n, i = first + ntk; kp > 0; kp = (size_t)from[kp]) {
		struct spm_tok *t = &e->raw[--i];

		t->s = s + from[kp];
		t->len = (uint32_t)(kp - (size_t)from[kp]);
		t->id = bid[kp];
	}
	if (slack != NULL)
		*slack = margin - round_bound(nch, fabs((double)*base) +
		    (double)nch * m->uni_bound);
	*base = best[n];
	return 0;
}

/* uni_seg_with(), compiled apart for models without user-defined pieces. */
static int
uni_seg(struct spm_enc *e, const char *s, size_t n, float *base, double *slack)
{
	return e->m->has_user ? uni_seg_with(e, s, n, base, slack, 1) :
	    uni_seg_with(e, s, n, base, slack, 0);
}

static int
enc_unigram(struct spm_enc *e, const char *s, size_t n)
{
	float base = 0;

	return uni_seg(e, s, n, &base, NULL);
}

/* BPE agenda: a binary max-heap; higher score first, then the leftmost pair. */
static inline int
pair_before(const struct bpair *a, const struct bpair *b)
{
	return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static int
heap_push(struct spm_enc *e, const struct bpair *x)
{
	size_t i, p;

	if (e->nheap == e->heapcap && grow_arr((void **)&e->heap, &e->heapcap,
	    e->nheap + 1, sizeof(*e->heap)) == -1)
		return -1;
	i = e->nheap++;
	while (i > 0) {
		p = (i - 1) / 2;
		if (!pair_before(x, &e->heap[p]))
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = *x;
	return 0;
}

static void
heap_pop(struct spm_enc *e, struct bpair *top)
{
	struct bpair last;
	size_t i = 0, c, n;

	*top = e->heap[0];
	last = e->heap[--e->nheap];
	n = e->nheap;
	if (n == 0)
		return;
	for (;;) {
		c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && pair_before(&e->heap[c + 1], &e->heap[c]))
			c++;
		if (!pair_before(&e->heap[c], &last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	e->heap[i] = last;
}

/* The normal-table id of a symbol's text, looked up once (-1: none). */
static inline int32_t
sym_id(struct spm_enc *e, const char *s, struct bsym *y)
{
	const struct spm_model *m = e->m;

	if (y->id == -2) {
		if (y->len == 1 && (uint8_t)s[y->off] < 0x80)
			y->id = m->char_id[(uint8_t)s[y->off]];
		else
			y->id = (int32_t)strtab_find(&m->normal, m->pieces,
			    s + y->off, y->len);
	}
	return y->id;
}

/*
 * The piece that joins two symbols, or -1: through a cache of id
 * pairs when both are pieces (a pair of ids is a pair of texts).
 */
static inline long
join_id(struct spm_enc *e, const char *s, struct bsym *L, struct bsym *R)
{
	const struct spm_model *m = e->m;
	int32_t a = sym_id(e, s, L), b = sym_id(e, s, R);
	struct pc_ent *c;
	uint64_t k;
	long id;

	if (a < 0 || b < 0 || e->pcache == NULL)
		return strtab_find(&m->normal, m->pieces, s + L->off, L->len + R->len);
	k = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9e3779b97f4a7c15ull;
	c = &e->pcache[(k >> 48) & (PC_SLOTS - 1)];
	if (c->a == a && c->b == b)
		return c->id;
	id = strtab_find(&m->normal, m->pieces, s + L->off, L->len + R->len);
	c->a = a;
	c->b = b;
	c->id = (int32_t)id;
	return id;
}

static int
bpe_pair(struct spm_enc *e, const char *s, int32_t l, int32_t r)
{
	const struct spm_model *m = e->m;
	struct bsym *L, *R;
	struct bpair x;
	long id;

	if (l < 0 || r < 0)
		return 0;
	L = &e->sym[l];
	R = &e->sym[r];
	if (L->freeze || R->freeze)
		return 0;
	if ((id = join_id(e, s, L, R)) < 0)
		return 0;
	x.score = m->pieces[id].score;
	x.id = (int32_t)id;
	x.left = l;
	x.right = r;
	x.size = L->len + R->len;
	if (heap_push(e, &x) == -1)
		return -1;
	if (m->ptype[id] == SPM_UNUSED) {
		if (e->nrev == e->revcap && grow_arr((void **)&e->rev, &e->revcap,
		    e->nrev + 1, sizeof(*e->rev)) == -1)
			return -1;
		e->rev[e->nrev].id = (int32_t)id;
		e->rev[e->nrev].loff = L->off;
		e->rev[e->nrev].llen = L->len;
		e->rev[e->nrev].roff = R->off;
		e->rev[e->nrev].rlen = R->len;
		e->nrev++;
	}
	return 0;
}

static int
bpe_resegment(struct spm_enc *e, const char *s, uint32_t off, uint32_t len,
    int depth)
{
	const struct spm_model *m = e->m;
	long id = spm_piece_id(m, s + off, len);
	size_t i;

	if (id >= 0 && m->pieces[id].type == SPM_UNUSED && depth < 10000) {
		for (i = e->nrev; i-- > 0; )
			if (e->rev[i].id == id)
				break;
		if (i != (size_t)-1) {
			uint32_t lo = e->rev[i].loff, ll = e->rev[i].llen;
			uint32_t ro = e->rev[i].roff, rl = e->rev[i].rlen;

			if (bpe_resegment(e, s, lo, ll, depth + 1) == -1)
				return -1;
			return bpe_resegment(e, s, ro, rl, depth + 1);
		}
	}
	return raw_add(e, s + off, len, (int32_t)id);
}

/*
 * BPE on a short segment of a model without UNUSED pieces: the same
 * merges as the agenda's (the live pair of the highest score, the
 * leftmost of equals), found by scanning the few symbols at each step.
 */
#define BPE_SMALL	64

static int
enc_bpe_small(struct spm_enc *e, const char *s, size_t n)
{
	const struct spm_model *m = e->m;
	struct bsym y[BPE_SMALL + 1];
	int32_t pid[BPE_SMALL];		/* piece of (y[i], y[i + 1]), or -1 */
	float psc[BPE_SMALL];
	size_t i = 0, ns = 0, k, best;

	while (i < n) {
		if (ns == BPE_SMALL)
			return 1;
		if ((k = user_match(m, (const uint8_t *)s + i, n - i)) > 0)
			y[ns].freeze = 1;
		else {
			y[ns].freeze = 0;
			k = one_char_len((uint8_t)s[i]);
			if (k > n - i)
				k = n - i;
		}
		y[ns].off = (uint32_t)i;
		y[ns].len = (uint32_t)k;
		y[ns].id = -2;
		i += k;
		ns++;
	}
	for (i = 0; i + 1 < ns; i++) {
		long id = y[i].freeze || y[i + 1].freeze ? -1 :
		    join_id(e, s, &y[i], &y[i + 1]);

		pid[i] = (int32_t)id;
		psc[i] = id >= 0 ? m->pieces[id].score : 0;
	}
	while (ns > 1) {
		best = ns;
		for (i = 0; i + 1 < ns; i++)
			if (pid[i] >= 0 && (best == ns || psc[i] > psc[best]))
				best = i;
		if (best == ns)
			break;
		y[best].len += y[best + 1].len;
		y[best].id = pid[best];
		ns--;
		memmove(&y[best + 1], &y[best + 2], (ns - best - 1) * sizeof(*y));
		memmove(&pid[best + 1], &pid[best + 2], (ns - best - 1) * sizeof(*pid));
		memmove(&psc[best + 1], &psc[best + 2], (ns - best - 1) * sizeof(*psc));
		for (i = best > 0 ? best - 1 : 0; i <= best && i + 1 < ns; i++) {
			long id = y[i].freeze || y[i + 1].freeze ? -1 :
			    join_id(e, s, &y[i], &y[i + 1]);

			pid[i] = (int32_t)id;
			psc[i] = id >= 0 ? m->pieces[id].score : 0;
		}
	}
	for (i = 0; i < ns; i++) {
		int32_t id = y[i].id;

		if (id >= 0) {
			if (raw_add(e, s + y[i].off, y[i].len, piece_out(m, id)) == -1)
				return -1;
		} else if (raw_add(e, s + y[i].off, y[i].len, (int32_t)spm_piece_id(m,
		    s + y[i].off, y[i].len)) == -1)
			return -1;
	}
	return 0;
}

static int
enc_bpe(struct spm_enc *e, const char *s, size_t n)
{
	const struct spm_model *m = e->m;
	size_t i = 0, ns = 0, k;
	struct bpair top;
	int32_t idx;
	int rc;

	if (!m->has_unused && n <= BPE_SMALL && (rc = enc_bpe_small(e, s, n)) <= 0)
		return rc;

	if (grow_arr((void **)&e->sym, &e->symcap, n, sizeof(*e->sym)) == -1)
		return -1;
	while (i < n) {
		struct bsym *y = &e->sym[ns];

		if ((k = user_match(m, (const uint8_t *)s + i, n - i)) > 0)
			y->freeze = 1;
		else {
			y->freeze = 0;
			k = one_char_len((uint8_t)s[i]);
			if (k > n - i)
				k = n - i;
		}
		y->off = (uint32_t)i;
		y->len = (uint32_t)k;
		y->id = -2;
		y->prev = (int32_t)ns - 1;
		i += k;
		y->next = i < n ? (int32_t)ns + 1 : -1;
		ns++;
	}
	e->nheap = 0;
	e->nrev = 0;
	for (i = 1; i < ns; i++)
		if (bpe_pair(e, s, (int32_t)i - 1, (int32_t)i) == -1)
			return -1;
	while (e->nheap > 0) {
		struct bsym *L, *R;

		heap_pop(e, &top);
		L = &e->sym[top.left];
		R = &e->sym[top.right];
		if (L->len == 0 || R->len == 0 || L->len + R->len != top.size)
			continue;
		L->len += R->len;
		L->id = top.id;
		L->next = R->next;
		if (R->next >= 0)
			e->sym[R->next].prev = top.left;
		R->len = 0;
		if (bpe_pair(e, s, L->prev, top.left) == -1 ||
		    bpe_pair(e, s, top.left, L->next) == -1)
			return -1;
	}
	for (idx = ns > 0 ? 0 : -1; idx != -1; idx = e->sym[idx].next) {
		const struct bsym *y = &e->sym[idx];

		if (y->id >= 0 && m->ptype[y->id] != SPM_UNUSED) {
			if (raw_add(e, s + y->off, y->len, piece_out(m, y->id)) == -1)
				return -1;
		} else if (bpe_resegment(e, s, y->off, y->len, 0) == -1)
			return -1;
	}
	return 0;
}

static int
enc_word(struct spm_enc *e, const char *s, size_t n)
{
	size_t i = 0, start = 0, k;

	while (i < n) {
		k = one_char_len((uint8_t)s[i]);
		if (k > n - i)
			k = n - i;
		if (i > 0 && k == 3 && memcmp(s + i, SPACE_SYM, 3) == 0) {
			if (raw_add(e, s + start, i - start, (int32_t)spm_piece_id(e->m,
			    s + start, i - start)) == -1)
				return -1;
			start = i;
		}
		i += k;
	}
	if (n > 0 && raw_add(e, s + start, n - start,
	    (int32_t)spm_piece_id(e->m, s + start, n - start)) == -1)
		return -1;
	return 0;
}

static int
enc_char(struct spm_enc *e, const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = user_match(e->m, (const uint8_t *)s + i, n - i)) == 0) {
			k = one_char_len((uint8_t)s[i]);
			if (k > n - i)
				k = n - i;
		}
		if (raw_add(e, s + i, k, (int32_t)spm_piece_id(e->m, s + i, k)) == -1)
			return -1;
		i += k;
	}
	return 0;
}

static inline int
tok_add(struct spm_enc *e, const char *s, size_t len, int32_t id)
{
	return tok_push(&e->tok, &e->ntok, &e->tokcap, s, len, id);
}

static int
apply_extra(struct spm_enc *e)
{
	const struct spm_model *m = e->m;
	size_t i;
	int x;

	for (x = 0; x < e->nextra; x++)
		switch (e->extra[x]) {
		case SPM_X_REVERSE:
			for (i = 0; i < e->ntok / 2; i++) {
				struct spm_tok t = e->tok[i];

				e->tok[i] = e->tok[e->ntok - 1 - i];
				e->tok[e->ntok - 1 - i] = t;
			}
			break;
		case SPM_X_EOS:
			if (tok_add(e, m->eos_piece, m->eos_piece_len,
			    (int32_t)spm_piece_id(m, m->eos_piece,
			    m->eos_key_len)) == -1)
				return -1;
			break;
		case SPM_X_BOS:
			if (tok_add(e, NULL, 0, 0) == -1)
				return -1;
			memmove(e->tok + 1, e->tok, (e->ntok - 1) * sizeof(*e->tok));
			e->tok[0].s = m->bos_piece;
			e->tok[0].len = (uint32_t)m->bos_piece_len;
			e->tok[0].id = (int32_t)spm_piece_id(m, m->bos_piece,
			    m->bos_key_len);
			break;
		case SPM_X_UNK:
			for (i = 0; i < e->ntok; i++)
				if ((size_t)e->tok[i].id < m->n &&
				    m->ptype[e->tok[i].id] == SPM_UNKNOWN) {
					e->tok[i].s = m->unk_piece;
					e->tok[i].len = (uint32_t)m->unk_piece_len;
				}
			break;
		}
	return 0;
}

/*
 * PopulateSentencePieceText(), one token at a time into e->tok: runs of
 * unknowns merge (or become byte pieces with byte_fallback), a control
 * piece refuses the line; unknowns are counted.  -1 with errno ENOMEM
 * or EINVAL (e->err set).
 */
static int
put_special(struct spm_enc *e, const char *s, size_t len, int32_t id)
{
	const struct spm_model *m = e->m;
	size_t j;

	switch (m->ptype[id]) {
	case SPM_CONTROL:
		/* The lattice holds no control piece; the others may. */
		snprintf(e->err, sizeof e->err, "the text holds the "
		    "control piece \"%.*s\" (upstream refuses the line)",
		    (int)(len < 40 ? len : 40), s);
		errno = EINVAL;
		return -1;
	case SPM_UNKNOWN:
		if (m->byte_fallback) {
			for (j = 0; j < len; j++) {
				int32_t b = m->byte_id[(uint8_t)s[j]];

				if (tok_add(e, m->pieces[b].s, 6, b) == -1)
					return -1;
				e->unknowns++;
			}
		} else if (e->prev_unk)
			e->tok[e->ntok - 1].len += (uint32_t)len;
		else {
			if (tok_add(e, s, len, id) == -1)
				return -1;
			e->unknowns++;
		}
		e->prev_unk = 1;
		return 0;
	case SPM_BYTE:
		e->unknowns++;
		break;
	}
	e->prev_unk = 0;
	return tok_add(e, s, len, id);
}

static inline int
put_tok(struct spm_enc *e, const char *s, size_t len, int32_t id)
{
	uint8_t t = e->m->ptype[id];

	if (t != SPM_NORMAL && t != SPM_USER_DEFINED)
		return put_special(e, s, len, id);
	e->prev_unk = 0;
	return tok_add(e, s, len, id);
}

/* The raw tokens from 'first' on, into e->tok. */
static int
put_raw(struct spm_enc *e, size_t first)
{
	size_t i;

	for (i = first; i < e->nraw; i++)
		if (put_tok(e, e->raw[i].s, e->raw[i].len, e->raw[i].id) == -1)
			return -1;
	return 0;
}

/*
 * A word of the cache, n <= SC_WORD bytes, as four 8-byte words with the
 * bytes past n cleared: read 32 bytes from s, whatever n is (no branch
 * on the length), masked by 32 bytes of ones that n ends.
 */
static const uint8_t sc_ones[64] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

struct sc_key {
	uint64_t	 q[4];
};
_Static_assert(SC_WORD <= 32 && offsetof(struct sc_ent, w) + 32 <= sizeof(struct sc_ent),
    "a word and its key are read as 32 bytes");

/* s readable 32 bytes on; n <= SC_WORD. */
static inline void
sc_key(struct sc_key *k, const char *s, size_t n)
{
	const uint8_t *mk = sc_ones + 32 - n;
	uint64_t w, m;
	int i;

	for (i = 0; i < 4; i++) {
		memcpy(&w, s + 8 * i, 8);
		memcpy(&m, mk + 8 * i, 8);
		k->q[i] = w & m;
	}
}

/*
 * Whether an entry holds the word of key k, n bytes (its w is
 * zero-padded; the bytes read past it are masked off).
 */
static inline int
word_eq(const struct sc_ent *c, const struct sc_key *k, size_t n)
{
	const uint8_t *mk = sc_ones + 32 - n;
	uint64_t a, m, x = 0;
	int i;

	for (i = 0; i < 4; i++) {
		memcpy(&a, (const char *)c + offsetof(struct sc_ent, w) + 8 * i, 8);
		memcpy(&m, mk + 8 * i, 8);
		x |= (a & m) ^ k->q[i];
	}
	return (x == 0) & (c->wlen == n);
}

/*
 * Unigram: a cached result computed with 'slack' holds at the score
 * base of a word of n bytes while the slack exceeds round_bound(n,
 * |base| + n * uni_bound), that is while |base| stays below
 * slack * 2^21 / (n + 2) - n * uni_bound.  That limit, made smaller by
 * a millionth (more than double rounding can move either side) and
 * rounded down to a float, is what an entry keeps: a hit compares one
 * float.  A limit of 0 never holds.
 */
static inline float
sc_limit(const struct spm_model *m, double slack, size_t n)
{
	double lim = (slack * (double)(1 << 21) / (double)(n + 2) -
	    (double)n * m->uni_bound) * (1 - 1e-6);
	float f;

	if (!(lim > 0))
		return 0;
	f = (float)lim;
	if ((double)f > lim)
		f = nextafterf(f, 0);
	return f;
}

/* A cached token v of the word s at offset off; the offset past it. */
static inline size_t
sc_tok(struct spm_tok *t, const char *s, size_t off, uint32_t v)
{
	t->s = s + off;
	t->len = SC_LEN(v);
	t->id = SC_ID(v);
	return off + SC_LEN(v);
}

/*
 * One word from the cache: 0 when found (its tokens added, *base
 * carried), -1 on ENOMEM, else 1 with *stale 1 when its slot holds the
 * word but the entry no longer holds at *base, else 0.
 */
static inline __attribute__((always_inline)) int
sc_lookup(struct spm_enc *e, const char *s, size_t n, uint64_t h,
    float *base, int *stale)
{
	const struct spm_model *m = e->m;
	struct sc_ent *c = &e->cache[SC_SLOT(h)];
	const int uni = m->type == SPM_UNIGRAM;
	struct spm_tok *t;
	struct sc_key k;
	size_t i, off;
	float b = *base;

	*stale = 0;
	sc_key(&k, s, n);
	if (!word_eq(c, &k, n))
		return 1;
	if (uni && !(fabsf(b) < c->lim)) {
		*stale = 1;
		return 1;
	}
	if (c->uses < 3)
		c->uses++;
	if (e->ntok + SC_TOKS > e->tokcap && grow_arr((void **)&e->tok,
	    &e->tokcap, e->ntok + SC_TOKS, sizeof(*e->tok)) == -1)
		return -1;
	t = e->tok + e->ntok;
	if (c->plain == 2 && uni)
		/* NORMAL pieces only: each token and its score. */
		for (i = off = 0; i < c->ntok; i++) {
			uint32_t v = c->ids[i];

			off = sc_tok(&t[i], s, off, v);
			/*
			 * Upstream's float((double)score + b) is the float
			 * sum: with 53 bits for 24, rounding twice changes
			 * nothing.
			 */
			b = m->score[SC_ID(v)] + b;
		}
	else
		for (i = off = 0; i < c->ntok; i++) {
			uint32_t v = c->ids[i];

			off = sc_tok(&t[i], s, off, v);
			if (uni)
				b = (float)(piece_score(m, SC_ID(v), SC_LEN(v)) +
				    (double)b);
		}
	*base = b;
	e->ntok += c->ntok;
	e->prev_unk = 0;
	return 0;
}

/*
 * One word the cache does not give: segmented, and cached in its slot
 * (h 0: a word too long to cache) unless the slot's word keeps it.
 */
static __attribute__((noinline)) int
enc_seg(struct spm_enc *e, const char *s, size_t n, uint64_t h, float *base,
    int stale)
{
	const struct spm_model *m = e->m;
	struct sc_ent *c;
	size_t i;
	double slack = INFINITY;
	int uni = m->type == SPM_UNIGRAM;

	e->nraw = 0;
	if (!uni) {
		if (enc_bpe(e, s, n) == -1)
			return -1;
	} else if (uni_seg(e, s, n, base, &slack) == -1)
		return -1;
	if (put_raw(e, 0) == -1)
		return -1;
	if (h == 0 || e->nraw > SC_TOKS || !(slack > 0))
		return 0;
	/* An entry keeps each token's id and length (at most SC_WORD). */
	for (i = 0; i < e->nraw; i++) {
		int32_t id = e->raw[i].id;
		uint8_t t = m->ptype[id];

		if ((t != SPM_NORMAL && t != SPM_USER_DEFINED) ||
		    (uint32_t)id > SC_MAXID)
			return 0;
	}
	c = &e->cache[SC_SLOT(h)];
	if (!stale && c->uses > 1) {
		/* A word used more than once keeps its slot, one use less. */
		c->uses--;
		return 0;
	}
	c->uses = 1;
	c->wlen = (uint8_t)n;
	c->ntok = (uint8_t)e->nraw;
	c->plain = 2;
	c->lim = uni ? sc_limit(m, slack, n) : INFINITY;
	memset(c->w, 0, SC_WORD);
	memcpy(c->w, s, n);
	for (i = 0; i < c->ntok; i++) {
		c->ids[i] = (uint32_t)e->raw[i].id << 5 | e->raw[i].len;
		if (m->ptype[e->raw[i].id] != SPM_NORMAL)
			c->plain = 1;
	}
	return 0;
}

/*
 * The hash of a word of the normalized line (readable 8 bytes past
 * its end), | 1; 0 for a word too long to cache.
 */
static inline uint64_t
seg_hash(const char *s, size_t n)
{
	struct sc_key k;
	uint64_t h;

	if (n > SC_WORD)
		return 0;
	sc_key(&k, s, n);
	h = k.q[0] * 0x9e3779b97f4a7c15ull + k.q[1] * 0xbf58476d1ce4e5b9ull +
	    k.q[2] * 0x94d049bb133111ebull + k.q[3] * 0xff51afd7ed558ccdull + n;
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h | 1;
}

/*
 * The word cache, zeroed: mapped anew (the system gives it zeroed, so
 * no pass writes 8 MB of zeros first), on a 2 MB boundary and in huge
 * pages where the system gives them: a word's slot is anywhere in the
 * table, and the table is set up in four page faults rather than two
 * thousand.  -1 with errno.
 */
static int
sc_alloc(struct spm_enc *e)
{
	uint8_t *p, *a;
	size_t head;

	p = mmap(NULL, SC_BYTES + SC_HUGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	a = p + (SC_HUGE - (uintptr_t)p % SC_HUGE) % SC_HUGE;
	head = (size_t)(a - p);
	if (head > 0)
		(void)munmap(p, head);
	(void)munmap(a + SC_BYTES, SC_HUGE - head);
#ifdef MADV_HUGEPAGE
	(void)madvise(a, SC_BYTES, MADV_HUGEPAGE);
#endif
	e->cache = (struct sc_ent *)(void *)a;
	return 0;
}

/*
 * A wordsafe line: word by word, the unigram score carried along; the
 * cache sets of the words a little ahead are fetched early.
 */
#define SC_AHEAD	8

static inline int
seg_add(struct spm_enc *e, size_t *ns, const char *s, size_t off, size_t len)
{
	if (*ns == e->segcap && grow_arr((void **)&e->seg, &e->segcap,
	    *ns + 1, sizeof(*e->seg)) == -1)
		return -1;
	e->seg[*ns].off = (uint32_t)off;
	e->seg[*ns].len = (uint32_t)len;
	e->seg[*ns].tag = seg_hash(s + off, len);
	(*ns)++;
	return 0;
}

static int
enc_words(struct spm_enc *e, const char *s, size_t n)
{
	size_t i = 0, start = 0, k = 0, ns = 0, j;
	int stale;
	uint64_t h;
	int prev_ws = 0, ws = 0;
	float base = 0;
	struct seg *g;

	if (e->cache == NULL && sc_alloc(e) == -1)
		return -1;
	if (e->use_mk) {
		/* Cut before each U+2581 that follows another character. */
		const uint32_t *q = e->mk.p;

		for (j = 0; j < e->mk.n; j++) {
			i = q[j];
			if (i == 0 || (j > 0 && q[j - 1] + 3 == i))
				continue;
			if (seg_add(e, &ns, s, start, i - start) == -1)
				return -1;
			start = i;
		}
		if (n > start && seg_add(e, &ns, s, start, n - start) == -1)
			return -1;
	} else if (e->m->norm_utf8) {
		/* Valid UTF-8: a U+2581 is found by its bytes. */
		const char *q = s, *end = s + n;

		while ((q = memchr(q, 0xe2, (size_t)(end - q))) != NULL) {
			if (end - q < 3 || q[1] != '\x96' || q[2] != '\x81') {
				q++;
				continue;
			}
			i = (size_t)(q - s);
			q += 3;
			if (i == 0 || (i >= 3 && memcmp(s + i - 3, SPACE_SYM, 3) == 0))
				continue;
			if (seg_add(e, &ns, s, start, i - start) == -1)
				return -1;
			start = i;
		}
		if (n > start && seg_add(e, &ns, s, start, n - start) == -1)
			return -1;
	} else for (;;) {
		int cut = i == n;

		if (!cut) {
			k = one_char_len((uint8_t)s[i]);
			if (k > n - i)
				k = n - i;
			ws = k == 3 && memcmp(s + i, SPACE_SYM, 3) == 0;
			cut = ws && i > 0 && !prev_ws;
		}
		if (cut && i > start) {
			if (seg_add(e, &ns, s, start, i - start) == -1)
				return -1;
			start = i;
		}
		if (i == n)
			break;
		prev_ws = ws;
		i += k;
	}
	/* Room for the tokens of a cached word at each step. */
	if (grow_arr((void **)&e->tok, &e->tokcap, ns * SC_TOKS + 16,
	    sizeof(*e->tok)) == -1)
		return -1;
	for (j = 0; j < ns; j++) {
		if (j + SC_AHEAD < ns && (h = e->seg[j + SC_AHEAD].tag) != 0)
			__builtin_prefetch(&e->cache[SC_SLOT(h)]);
		g = &e->seg[j];
		if (g->tag != 0) {
			int rc = sc_lookup(e, s + g->off, g->len, g->tag, &base,
			    &stale);

			if (rc <= 0) {
				if (rc == -1)
					return -1;
				continue;
			}
		} else
			stale = 0;
		if (enc_seg(e, s + g->off, g->len, g->tag, &base, stale) == -1)
			return -1;
	}
	return 0;
}

/* Encode into e->tok without extra options; -1 with errno. */
static long
encode_plain(struct spm_enc *e, const uint8_t *p, size_t n)
{
	const struct spm_model *m = e->m;
	const char *s;
	size_t ns;
	int rc;

	e->nraw = 0;
	e->ntok = 0;
	e->prev_unk = 0;
	e->use_mk = m->wordsafe && !e->whole && m->norm_utf8 && m->norm.escape_ws;
	/* The normalized line stays readable SC_WORD bytes past its end. */
	if (norm_apply(m, &m->norm, m->ws_suffix, p, n, &e->nb,
	    e->use_mk ? &e->mk : NULL) == -1 ||
	    rp_buf_reserve(&e->nb, SC_WORD + 8) == -1)
		goto nomem;
	s = (const char *)e->nb.p;
	ns = e->nb.len;
	if (ns == 0)
		return 0;
	if (m->wordsafe && !e->whole) {
		if (enc_words(e, s, ns) == -1)
			goto fail;
		return (long)e->ntok;
	}
	switch (m->type) {
	case SPM_BPE: rc = enc_bpe(e, s, ns); break;
	case SPM_WORD: rc = enc_word(e, s, ns); break;
	case SPM_CHAR: rc = enc_char(e, s, ns); break;
	default: rc = enc_unigram(e, s, ns); break;
	}
	if (rc == -1 || put_raw(e, 0) == -1)
		goto fail;
	return (long)e->ntok;
fail:
	if (errno == EINVAL)
		return -1;
nomem:
	errno = ENOMEM;
	snprintf(e->err, sizeof e->err, "out of memory");
	return -1;
}

/* The first place of s[0..k) in p[0..n), or NULL (k > 0). */
static const uint8_t *
find(const uint8_t *p, size_t n, const char *s, size_t k)
{
	const uint8_t *q = p, *end = p + n;

	while ((size_t)(end - q) >= k &&
	    (q = memchr(q, (uint8_t)s[0], (size_t)(end - q) - k + 1)) != NULL) {
		if (memcmp(q, s, k) == 0)
			return q;
		q++;
	}
	return NULL;
}

/* Gather e->tok's tokens, their texts copied; -1 with errno. */
static int
gather(struct spm_enc *e)
{
	size_t i;

	if (e->nstok + e->ntok > e->stokcap && grow_arr((void **)&e->stok,
	    &e->stokcap, e->nstok + e->ntok, sizeof(*e->stok)) == -1)
		return -1;
	for (i = 0; i < e->ntok; i++) {
		struct spm_tok *t = &e->stok[e->nstok++];

		t->len = e->tok[i].len;
		t->id = e->tok[i].id;
		/* An offset into e->stext until the line is done. */
		t->s = (const char *)(uintptr_t)e->stext.len;
		if (rp_buf_append(&e->stext, e->tok[i].s, e->tok[i].len) == -1)
			return -1;
	}
	return 0;
}

/*
 * Megatron's tokenize(): the text up to the first special text found
 * (the earliest; at one place, the first in the list) is encoded on
 * its own, then the special's id, and so on to the end.
 */
static long
encode_specials(struct spm_enc *e, const uint8_t *p, size_t n)
{
	size_t at = 0, i;
	struct spm_tok *t;

	e->nstok = 0;
	e->stext.len = 0;
	for (;;) {
		size_t end = n, which = 0, lim;
		int found = 0;

		for (i = 0; i < e->nspecial; i++) {
			const struct spm_special *sp = &e->special[i];
			const uint8_t *q;

			/* Only a match that starts before the best so far. */
			if (found && end == at)
				break;
			lim = found && end - 1 + sp->len < n ? end - 1 + sp->len : n;
			if (lim - at < sp->len ||
			    (q = find(p + at, lim - at, sp->s, sp->len)) == NULL)
				continue;
			if (!found || (size_t)(q - p) < end) {
				end = (size_t)(q - p);
				which = i;
				found = 1;
			}
		}
		if (encode_plain(e, p + at, end - at) == -1)
			return -1;
		if (gather(e) == -1)
			goto nomem;
		if (!found)
			break;
		e->ntok = 0;
		if (tok_add(e, e->special[which].s, e->special[which].len,
		    e->special[which].id) == -1 || gather(e) == -1)
			goto nomem;
		at = end + e->special[which].len;
	}
	/* The gathered tokens become the line's. */
	for (i = 0; i < e->nstok; i++)
		e->stok[i].s = (const char *)e->stext.p + (uintptr_t)e->stok[i].s;
	t = e->tok;
	e->tok = e->stok;
	e->stok = t;
	i = e->tokcap;
	e->tokcap = e->stokcap;
	e->stokcap = i;
	e->ntok = e->nstok;
	e->nstok = 0;
	return (long)e->ntok;
nomem:
	errno = ENOMEM;
	snprintf(e->err, sizeof e->err, "out of memory");
	return -1;
}

long
spm_encode(struct spm_enc *e, const uint8_t *p, size_t n)
{
	uint64_t unk0 = e->unknowns;

	if ((e->nspecial > 0 ? encode_specials(e, p, n) :
	    encode_plain(e, p, n)) == -1) {
		e->unknowns = unk0;
		return -1;
	}
	if (e->nextra > 0 && apply_extra(e) == -1) {
		errno = ENOMEM;
		snprintf(e->err, sizeof e->err, "out of memory");
		return -1;
	}
	return (long)e->ntok;
}

/* Upstream's Load() encodes each self-test sample and compares the pieces. */
static double
sample_score(const struct spm_model *m, const char *s, size_t n)
{
	float total = 0;
	size_t i = 0, j;

	if (s == NULL)		/* an empty string that is not in the file */
		s = "";
	while (i <= n) {
		const char *sp = memchr(s + i, ' ', n - i);
		long id;

		j = sp ? (size_t)(sp - s) : n;
		id = spm_piece_id(m, s + i, j - i);
		if (id == m->unk_id)
			total += m->unk_score;
		else
			total = (float)(total + (m->pieces[id].type == SPM_USER_DEFINED ?
			    (double)((float)(int)(j - i) * m->max_score) - 0.1 :
			    (double)m->pieces[id].score));
		i = j + 1;
	}
	return total;
}

static int
self_test(struct spm_model *m, const struct modelspec *ms, char *err,
    size_t errlen)
{
	struct spm_enc *e;
	struct buf b = { 0 };
	size_t i, j;
	long k;
	char sh[64];

	if (ms->nsamples == 0)
		return 0;
	if ((e = spm_enc_new(m)) == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < ms->nsamples; i++) {
		const struct sample *sa = &ms->samples[i];
		int same;

		if ((k = encode_plain(e, (const uint8_t *)sa->input.s,
		    sa->input.len)) < 0) {
			rp_seterr(err, errlen,
			    "self_test_data sample %zu: %s", i + 1,
			    errno == ENOMEM ? "out of memory" : e->err);
			goto fail;
		}
		b.len = 0;
		for (j = 0; j < (size_t)k; j++)
			if ((j > 0 && rp_buf_putc(&b, ' ') == -1) ||
			    rp_buf_append(&b, e->tok[j].s, e->tok[j].len) == -1) {
				rp_seterr(err, errlen, "out of memory");
				goto fail;
			}
		same = b.len == sa->expected.len && (b.len == 0 ||
		    memcmp(b.p, sa->expected.s, b.len) == 0);
		/* Upstream's kEpsilon is the float 1e-7f, a little above 1e-7. */
		if (!same && m->type == SPM_UNIGRAM)
			same = fabs(sample_score(m, sa->expected.s, sa->expected.len) -
			    sample_score(m, (const char *)b.p, b.len)) <= 1e-7f;
		if (!same) {
			rp_seterr(err, errlen,
			    "self_test_data sample %zu (\"%s\") does not "
			    "encode as the model expects", i + 1,
			    show(sa->input.s, sa->input.len, sh, sizeof sh));
			goto fail;
		}
	}
	rp_buf_free(&b);
	spm_enc_free(e);
	return 0;
fail:
	rp_buf_free(&b);
	spm_enc_free(e);
	return -1;
}

/* ---- decoding ----------------------------------------------------------- */

static int
out_put(char **out, size_t *cap, size_t *len, const void *p, size_t n)
{
	if (*len + n + 1 > *cap && grow_arr((void **)out, cap, *len + n + 1, 1) == -1)
		return -1;
	if (n > 0)
		memcpy(*out + *len, p, n);
	*len += n;
	return 0;
}

/*
 * Bytes of a run of byte pieces, as UTF-8 with U+FFFD for each bad byte:
 * one per byte, not one per maximal subpart as exjson_put_name() has it,
 * since sentencepiece's decoder replaces byte by byte.
 */
static int
put_bytes(char **out, size_t *cap, size_t *len, const uint8_t *b, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if ((k = valid_utf8(b + i, n - i)) == 0) {
			if (out_put(out, cap, len, REPLACEMENT, 3) == -1)
				return -1;
			i++;
			continue;
		}
		if (out_put(out, cap, len, b + i, k) == -1)
			return -1;
		i += k;
	}
	return 0;
}

static long
decode(const struct spm_model *m, const char *const *pieces, const size_t *lens,
    const int32_t *ids, size_t n, char **out, size_t *cap)
{
	size_t len = 0, i, nb = 0, j;
	uint8_t *bytes = NULL;
	int bos_ws = 1, seen = 0;

	if (grow_arr((void **)&bytes, &nb, n + 1, 1) == -1)
		return -1;
	nb = 0;
	if (out_put(out, cap, &len, "", 0) == -1)
		goto nomem;
	for (i = 0; i < n; i++) {
		const char *s = pieces[i];
		size_t sl = lens[i];
		long id = ids[i];
		int type = m->pieces[id].type;

		if (type == SPM_BYTE) {
			bytes[nb++] = (uint8_t)byte_of_piece(s, sl);
			continue;
		}
		if (nb > 0 && put_bytes(out, cap, &len, bytes, nb) == -1)
			goto nomem;
		nb = 0;
		if (seen || len > 0)
			bos_ws = 0;
		seen = 0;
		if (type == SPM_CONTROL)
			continue;
		if (type == SPM_UNKNOWN) {
			if (m->pieces[id].len == sl && memcmp(m->pieces[id].s, s, sl) == 0) {
				if (out_put(out, cap, &len, m->unk_surface,
				    m->unk_surface_len) == -1)
					goto nomem;
			} else if (out_put(out, cap, &len, s, sl) == -1)
				goto nomem;
			continue;
		}
		if (bos_ws && (m->norm.add_dummy_prefix || m->norm.remove_extra_ws) &&
		    sl >= 3 && memcmp(s, SPACE_SYM, 3) == 0) {
			s += 3;
			sl -= 3;
			seen = !m->norm.remove_extra_ws;
		}
		for (j = 0; j < sl; ) {
			if (sl - j >= 3 && memcmp(s + j, SPACE_SYM, 3) == 0) {
				if (out_put(out, cap, &len, " ", 1) == -1)
					goto nomem;
				j += 3;
			} else {
				const char *q = s + j;
				size_t k = 1;

				while (j + k < sl && !(sl - j - k >= 3 &&
				    memcmp(s + j + k, SPACE_SYM, 3) == 0))
					k++;
				if (out_put(out, cap, &len, q, k) == -1)
					goto nomem;
				j += k;
			}
		}
	}
	if (nb > 0 && put_bytes(out, cap, &len, bytes, nb) == -1)
		goto nomem;
	free(bytes);
	if (m->has_denorm) {
		struct buf b = { 0 };

		if (norm_apply(NULL, &m->denorm, 0, (const uint8_t *)*out, len, &b,
		    NULL) == -1) {
			rp_buf_free(&b);
			return -1;
		}
		len = 0;
		if (out_put(out, cap, &len, b.p, b.len) == -1) {
			rp_buf_free(&b);
			return -1;
		}
		rp_buf_free(&b);
	}
	(*out)[len] = '\0';
	return (long)len;
nomem:
	free(bytes);
	return -1;
}

long
spm_decode_pieces(const struct spm_model *m, const char *const *pieces,
    const size_t *lens, size_t n, char **out, size_t *cap, char *err,
    size_t errlen)
{
	int32_t *ids;
	size_t i;
	long k;

	if ((ids = malloc((n + 1) * sizeof(*ids))) == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++)
		ids[i] = (int32_t)spm_piece_id(m, pieces[i], lens[i]);
	k = decode(m, pieces, lens, ids, n, out, cap);
	free(ids);
	if (k < 0)
		rp_seterr(err, errlen, "out of memory");
	return k;
}

long
spm_decode_ids(const struct spm_model *m, const int32_t *ids, size_t n,
    char **out, size_t *cap, char *err, size_t errlen)
{
	const char **pc;
	size_t *lens, i;
	long k;

	for (i = 0; i < n; i++)
		if (ids[i] < 0 || (size_t)ids[i] >= m->n) {
			rp_seterr(err, errlen, "Invalid id: %ld", (long)ids[i]);
			errno = EINVAL;
			return -1;
		}
	pc = malloc((n + 1) * sizeof(*pc));
	lens = malloc((n + 1) * sizeof(*lens));
	if (pc == NULL || lens == NULL) {
		free(pc);
		free(lens);
		rp_seterr(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		pc[i] = m->pieces[ids[i]].s;
		lens[i] = m->pieces[ids[i]].len;
	}
	k = spm_decode_pieces(m, pc, lens, n, out, cap, err, errlen);
	if (k < 0)
		errno = ENOMEM;
	free(pc);
	free(lens);
	return k;
}

