/*
 * Byte-level BPE: rank tables, the merge, a cache, decoding.
 *
 * A model keeps every token's bytes once (m->bytes), a table from id to
 * those bytes (m->tok), and an open-addressing hash from bytes to rank
 * (m->slot, linear probing, at most half full).  The merge is tiktoken's
 * byte_pair_encode: the adjacent pair whose concatenation has the lowest
 * rank is merged, the leftmost of equals, until no pair is a token;
 * short pieces by scanning the pairs, long ones through a min-heap of
 * pairs over a linked list of parts (stale entries are skipped when
 * popped), as tiktoken switches at 100 bytes.
 *
 * The ids of a piece depend on its bytes alone, wherever it stands, so
 * an encoder keeps those of recent short pieces in a cache of fixed
 * size (bpe_enc_no_cache() turns it off).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bpe.h"
#include "buf.h"
#include "errmsg.h"
#include "exjson.h"
#include "unicode.h"

#define NONE		UINT32_MAX
#define MAXSPECIAL	8
#define HEAP_MIN	100	/* pieces this long merge through the heap */
#define RANK_FLOOR	((size_t)1 << 20)	/* ranks below it need no file size */

/*
 * The cache: pieces of at most 16 bytes that give at most CACHE_IDS
 * ids, in sets of two entries of 32 bytes (256 KiB in all).  It is
 * looked at before the rank table: the frequent pieces of a text are
 * then found without a miss of the processor's caches.
 */
#define CACHE_SETS	4096
#define CACHE_KEY	16
#define CACHE_IDS	3

struct special {
	const char	*text;
	uint32_t	 len;
	uint32_t	 id;
	int		 encodes;	/* matched in text when allowed */
};

struct tok {
	uint32_t	 off;		/* into m->bytes; NONE: no such id */
	uint32_t	 len;
	uint32_t	 poff;		/* into m->pieces */
	uint32_t	 plen;
};

/* A slot holds the first bytes of its token: most compare here alone. */
struct slot {
	uint64_t	 head;		/* the first 8 bytes, zeros after the end */
	uint32_t	 len;
	uint32_t	 id;		/* NONE: empty */
};

/* What a lookup needs of a piece, made in one pass over it. */
struct key {
	uint64_t	 h;
	uint64_t	 head;		/* bytes 0..7, zeros after the end */
	uint64_t	 head2;		/* bytes 8..15, the same */
};

struct bpe_model {
	enum bpe_encoding enc;
	enum pretok_pat	 pat;
	uint8_t		*bytes;
	size_t		 nbytes;
	char		*pieces;
	struct tok	*tok;
	size_t		 nrank;		/* one past the largest rank */
	size_t		 nid;		/* one past the largest id */
	struct slot	*slot;
	size_t		 mask;
	uint32_t	 byte_rank[256];
	uint32_t	*pair_rank;	/* [b0 << 8 | b1]: the 2-byte tokens */
	struct special	 sp[MAXSPECIAL];
	size_t		 nsp;
	uint32_t	 eot;
	uint8_t		 sp_first[256];	/* first bytes of encodable specials */
};

struct centry {
	uint64_t	 head, head2;	/* as struct key's */
	uint8_t		 len;		/* 0: empty */
	uint8_t		 nid;
	uint32_t	 ids[CACHE_IDS];
};

struct hent {
	uint32_t	 rank;
	uint32_t	 left;		/* start of the pair's left part */
	uint32_t	 end;		/* end of its right part */
};

struct bpe_enc {
	const struct bpe_model *m;
	int		 special;
	uint32_t	*ids;
	size_t		 nids, cap;
	struct centry	*cache;		/* NULL: none */
	/* merge scratch, grown to the longest piece */
	uint32_t	*pos, *pid, *prank, *nxt, *prv;
	struct hent	*heap;
	size_t		 scap, hcap;
};

/* ------------------------------------------------------------------ */
/* Encodings */

static const struct encoding {
	const char	*name;
	enum pretok_pat	 pat;
	struct special	 sp[MAXSPECIAL];
} encodings[] = {
#define EOT(id)	{ "<|endoftext|>", 13, id, 1 }
#define FIM(what, id) { "<|fim_" what "|>", 8 + sizeof(what) - 1, id, 1 }
	[BPE_GPT2] = { "gpt2", PRETOK_GPT2, { EOT(50256) } },
	[BPE_R50K] = { "r50k_base", PRETOK_GPT2, { EOT(50256) } },
	[BPE_P50K] = { "p50k_base", PRETOK_GPT2, { EOT(50256) } },
	[BPE_P50K_EDIT] = { "p50k_edit", PRETOK_GPT2, { EOT(50256),
	    FIM("prefix", 50281), FIM("middle", 50282),
	    FIM("suffix", 50283) } },
	[BPE_CL100K] = { "cl100k_base", PRETOK_CL100K, { EOT(100257),
	    FIM("prefix", 100258), FIM("middle", 100259),
	    FIM("suffix", 100260), { "<|endofprompt|>", 15, 100276, 1 } } },
	[BPE_O200K] = { "o200k_base", PRETOK_O200K, { EOT(199999),
	    { "<|endofprompt|>", 15, 200018, 1 } } },
#undef EOT
#undef FIM
};
#define NENC	(sizeof(encodings) / sizeof(encodings[0]))

int
bpe_encoding_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NENC; i++)
		if (strcmp(name, encodings[i].name) == 0)
			return (int)i;
	return -1;
}

const char *
bpe_encoding_name(enum bpe_encoding enc)
{
	return (size_t)enc < NENC ? encodings[enc].name : NULL;
}

enum pretok_pat
bpe_encoding_pattern(enum bpe_encoding enc)
{
	return (size_t)enc < NENC ? encodings[enc].pat : PRETOK_GPT2;
}

/* ------------------------------------------------------------------ */
/* GPT-2's bytes_to_unicode */

/* The bytes that stand for themselves: printable Latin-1 but space. */
static int
self_byte(unsigned b)
{
	return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) ||
	    (b >= 0xae && b <= 0xff);
}

/*
 * The code point of byte b in encoder.json's spelling: the others, in
 * order, are U+0100.. (0x00-0x20, then 0x7F-0xA0, then 0xAD).
 */
static uint32_t
byte_cp(unsigned b)
{
	if (b <= 0x20)
		return 256 + b;
	if (b >= 0x7f && b <= 0xa0)
		return 256 + 33 + (b - 0x7f);
	if (b == 0xad)
		return 256 + 67;
	return b;
}

/* The byte a code point of encoder.json's spelling stands for, or -1. */
static int
cp_byte(uint32_t cp)
{
	if (cp < 256)
		return self_byte(cp) ? (int)cp : -1;
	if (cp < 256 + 33)
		return (int)(cp - 256);
	if (cp < 256 + 67)
		return (int)(cp - 256 - 33 + 0x7f);
	return cp == 256 + 67 ? 0xad : -1;
}

/*
 * Decode a string of that spelling (UTF-8) into bytes at out (at most
 * n of them).  Returns the length, or -1 with the offending code point
 * in *bad (NONE when the string is not UTF-8).
 */
static long
ungym(const uint8_t *s, size_t n, uint8_t *out, uint32_t *bad)
{
	size_t i = 0, o = 0;
	uint32_t cp;
	int k, b;

	while (i < n) {
		if ((k = uni_utf8_decode(s + i, n - i, &cp)) == 0) {
			*bad = NONE;
			return -1;
		}
		if ((b = cp_byte(cp)) < 0) {
			*bad = cp;
			return -1;
		}
		out[o++] = (uint8_t)b;
		i += (size_t)k;
	}
	return (long)o;
}

/* ------------------------------------------------------------------ */
/* The rank table */

/*
 * n < 8 bytes at p, as rp_le64() reads 8 and zeros after them; 'avail'
 * bytes from p may be read.
 */
static inline uint64_t
load_tail(const uint8_t *p, size_t n, size_t avail)
{
	uint64_t w = 0;
	size_t i;

	if (n == 0)
		return 0;
	if (avail >= 8)
		return rp_le64(p) & (~(uint64_t)0 >> (64 - 8 * n));
	for (i = n; i-- > 0;)
		w = w << 8 | p[i];
	return w;
}

/* The key of p[0..n), where p[0..avail) may be read (avail >= n). */
static inline struct key
key_of(const uint8_t *p, size_t n, size_t avail)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = 0x243f6a8885a308d3ull ^ (n * k), w;
	struct key r = { 0, 0, 0 };
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		w = rp_le64(p + i);
		if (i == 0)
			r.head = w;
		else if (i == 8)
			r.head2 = w;
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (i < n) {
		w = load_tail(p + i, n - i, avail - i);
		if (i == 0)
			r.head = w;
		else if (i == 8)
			r.head2 = w;
		h = (h ^ w) * k;
	}
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	r.h = h;
	return r;
}

/* The slot holding p[0..n), or the empty slot where it would go. */
static inline struct slot *
find_slot(const struct bpe_model *m, const uint8_t *p, size_t n,
    struct key k)
{
	size_t i = (size_t)k.h & m->mask;
	struct slot *s;

	for (;; i = (i + 1) & m->mask) {
		s = &m->slot[i];
		if (s->id == NONE)
			return s;
		if (s->head == k.head && s->len == n && (n <= 8 ||
		    memcmp(m->bytes + m->tok[s->id].off + 8, p + 8,
		    n - 8) == 0))
			return s;
	}
}

/* The rank of p[0..n), or NONE; p[0..avail) may be read. */
static inline uint32_t
rank_of(const struct bpe_model *m, const uint8_t *p, size_t n, size_t avail)
{
	return find_slot(m, p, n, key_of(p, n, avail))->id;
}

static struct bpe_model *
model_new(enum bpe_encoding enc)
{
	struct bpe_model *m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->enc = enc;
	m->pat = encodings[enc].pat;
	m->eot = NONE;
	return m;
}

void
bpe_model_free(struct bpe_model *m)
{
	if (m == NULL)
		return;
	free(m->bytes);
	free(m->pieces);
	free(m->tok);
	free(m->slot);
	free(m->pair_rank);
	free(m);
}

/*
 * Size the tables for 'ntok' tokens and ranks below 'nrank' (bounded
 * by the caller from the file's size); the token bytes go to m->bytes,
 * which the caller fills.  Returns 0, or -1 with ENOMEM.
 */
static int
model_alloc(struct bpe_model *m, size_t ntok, size_t nrank)
{
	size_t ns = 16, i;

	while (ns < 2 * ntok)
		ns *= 2;
	m->nrank = nrank;
	if ((m->tok = malloc(nrank * sizeof(*m->tok))) == NULL ||
	    (m->slot = malloc(ns * sizeof(*m->slot))) == NULL)
		return -1;
	for (i = 0; i < nrank; i++)
		m->tok[i].off = NONE;
	for (i = 0; i < ns; i++)
		m->slot[i].id = NONE;
	m->mask = ns - 1;
	return 0;
}

/*
 * Add token m->bytes[off..off+len) with id 'rank'.  Returns NONE, or
 * the rank the same bytes already have (the table is left as it was).
 * The caller has checked that the id is free and below m->nrank.
 */
static uint32_t
add_token(struct bpe_model *m, uint32_t off, uint32_t len, uint32_t rank)
{
	struct key k = key_of(m->bytes + off, len, len);
	struct slot *s = find_slot(m, m->bytes + off, len, k);

	if (s->id != NONE)
		return s->id;
	s->id = rank;
	s->head = k.head;
	s->len = len;
	m->tok[rank].off = off;
	m->tok[rank].len = len;
	return NONE;
}

/*
 * The last steps of both readers: the single bytes, the table of pairs,
 * the special tokens (apart from the ranks: their ids may lie far
 * beyond them), the pieces.  Returns 0, or -1 with a message.
 */
static int
model_finish(struct bpe_model *m, char *err, size_t errlen)
{
	size_t i, j, need, o;
	uint32_t id;
	struct tok *t;

	for (i = 0; i < 256; i++) {
		uint8_t b = (uint8_t)i;

		if ((m->byte_rank[i] = rank_of(m, &b, 1, 1)) == NONE) {
			rp_seterr(err, errlen, "byte 0x%02zx has no rank", i);
			return -1;
		}
	}
	if ((m->pair_rank = malloc(65536 * sizeof(*m->pair_rank))) == NULL)
		goto nomem;
	memset(m->pair_rank, 0xff, 65536 * sizeof(*m->pair_rank));
	for (id = 0; id < m->nrank; id++) {
		t = &m->tok[id];
		if (t->off != NONE && t->len == 2)
			m->pair_rank[m->bytes[t->off] << 8 |
			    m->bytes[t->off + 1]] = id;
	}
	m->nid = m->nrank;
	for (i = 0; i < m->nsp; i++) {
		const struct special *s = &m->sp[i];

		if (s->id < m->nrank && m->tok[s->id].off != NONE) {
			rp_seterr(err, errlen,
			    "rank %lu is the id of special token %s",
			    (unsigned long)s->id, s->text);
			return -1;
		}
		if (s->id >= m->nid)
			m->nid = (size_t)s->id + 1;
		if (s->encodes)
			m->sp_first[(uint8_t)s->text[0]] = 1;
	}
	/* Pieces: each byte is one or two bytes of UTF-8, and a NUL. */
	need = 0;
	for (id = 0; id < m->nrank; id++)
		if (m->tok[id].off != NONE)
			need += 2 * (size_t)m->tok[id].len + 1;
	if ((m->pieces = malloc(need ? need : 1)) == NULL)
		goto nomem;
	o = 0;
	for (id = 0; id < m->nrank; id++) {
		t = &m->tok[id];
		if (t->off == NONE)
			continue;
		t->poff = (uint32_t)o;
		for (j = 0; j < t->len; j++)
			o += (size_t)uni_utf8_encode(byte_cp(m->bytes[t->off +
			    j]), (uint8_t *)m->pieces + o);
		t->plen = (uint32_t)(o - t->poff);
		m->pieces[o++] = '\0';
	}
	return 0;
nomem:
	rp_seterr(err, errlen, "out of memory");
	return -1;
}

/* ------------------------------------------------------------------ */
/* tiktoken's files */

static int
is_bytes_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == '\v' || c == '\f';
}

static int
b64_char(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* Standard base64 with its padding, as dump_tiktoken_bpe writes it. */
static int
b64_ok(const uint8_t *s, size_t n)
{
	size_t i, pad = 0;

	if (n == 0 || n % 4 != 0)
		return 0;
	while (pad < 2 && s[n - 1 - pad] == '=')
		pad++;
	for (i = 0; i < n - pad; i++)
		if (!b64_char(s[i]))
			return 0;
	return 1;
}

struct tline {
	uint32_t	 off, len;	/* the token's bytes in m->bytes */
	uint32_t	 rank;
	size_t		 line;
};

/* One line's fields: up to 3, with where they are. */
static int
split_fields(const uint8_t *p, size_t n, const uint8_t **f, size_t *fl)
{
	size_t i = 0, s;
	int k = 0;

	for (;;) {
		while (i < n && is_bytes_space(p[i]))
			i++;
		if (i == n)
			return k;
		s = i;
		while (i < n && !is_bytes_space(p[i]))
			i++;
		if (k == 3)
			return 4;
		f[k] = p + s;
		fl[k++] = i - s;
	}
}

struct bpe_model *
bpe_parse_tiktoken(const uint8_t *p, size_t n, enum bpe_encoding enc,
    char *err, size_t errlen)
{
	struct bpe_model *m = NULL;
	struct tline *tl = NULL;
	size_t i, j, e, lines = 0, nt = 0, cap = 0, lineno = 0, nid = 0;
	const uint8_t *f[3];
	size_t fl[3];
	uint64_t r, lim = n > RANK_FLOOR ? n : RANK_FLOOR;
	uint32_t prev;
	long bl;
	int k;

	if ((size_t)enc >= NENC) {
		rp_seterr(err, errlen, "unknown encoding %d", (int)enc);
		return NULL;
	}
	if (n > BPE_MAX_FILE) {
		rp_seterr(err, errlen, "larger than %lu bytes", BPE_MAX_FILE);
		return NULL;
	}
	/* Lines as bytes.splitlines() makes them: at \n, \r\n or \r. */
	for (i = 0; i < n; i++)
		lines += p[i] == '\n' || (p[i] == '\r' &&
		    (i + 1 == n || p[i + 1] != '\n'));
	cap = lines + 1;
	if ((m = model_new(enc)) == NULL ||
	    (tl = malloc(cap * sizeof(*tl))) == NULL ||
	    (m->bytes = malloc(n ? n : 1)) == NULL)
		goto nomem;
	for (i = 0; i < n; i = e) {
		for (e = i; e < n && p[e] != '\n' && p[e] != '\r'; e++)
			;
		lineno++;
		k = split_fields(p + i, e - i, f, fl);
		if (e < n)
			e += p[e] == '\r' && e + 1 < n && p[e + 1] == '\n' ? 2 : 1;
		if (k == 0)
			continue;
		if (k != 2) {
			rp_seterr(err, errlen,
			    "line %zu: not two fields (base64 token, "
			    "rank)", lineno);
			goto fail;
		}
		if (!b64_ok(f[0], fl[0])) {
			rp_seterr(err, errlen,
			    "line %zu: the token is not padded "
			    "standard base64", lineno);
			goto fail;
		}
		bl = exjson_unbase64((const char *)f[0], fl[0],
		    m->bytes + m->nbytes);
		if (bl <= 0) {
			rp_seterr(err, errlen, "line %zu: %s", lineno, bl == 0 ?
			    "an empty token" : "the token is not base64");
			goto fail;
		}
		/* Ranks size a table: below the file's size, or 2^20. */
		r = 0;
		for (j = 0; j < fl[1]; j++) {
			if (f[1][j] < '0' || f[1][j] > '9') {
				rp_seterr(err, errlen,
				    "line %zu: the rank is not a decimal "
				    "number", lineno);
				goto fail;
			}
			if (r < lim)
				r = r * 10 + (uint64_t)(f[1][j] - '0');
		}
		if (r >= lim) {
			rp_seterr(err, errlen,
			    "line %zu: rank %.*s is too large (the "
			    "file's size or 2^20 at most)", lineno,
			    fl[1] > 24 ? 24 : (int)fl[1], (const char *)f[1]);
			goto fail;
		}
		tl[nt].off = (uint32_t)m->nbytes;
		tl[nt].len = (uint32_t)bl;
		tl[nt].rank = (uint32_t)r;
		tl[nt].line = lineno;
		m->nbytes += (size_t)bl;
		if (r + 1 > nid)
			nid = (size_t)r + 1;
		nt++;
	}
	for (i = 0; i < MAXSPECIAL && encodings[enc].sp[i].text; i++)
		m->sp[i] = encodings[enc].sp[i];
	m->eot = m->sp[0].id;		/* <|endoftext|> comes first */
	m->nsp = i;
	if (model_alloc(m, nt, nid) == -1)
		goto nomem;
	for (i = 0; i < nt; i++) {
		if (m->tok[tl[i].rank].off != NONE) {
			for (e = 0; tl[e].rank != tl[i].rank; e++)
				;
			rp_seterr(err, errlen,
			    "line %zu: rank %lu again (line %zu has "
			    "it)", tl[i].line, (unsigned long)tl[i].rank,
			    tl[e].line);
			goto fail;
		}
		if ((prev = add_token(m, tl[i].off, tl[i].len,
		    tl[i].rank)) != NONE) {
			for (e = 0; tl[e].rank != prev; e++)
				;
			rp_seterr(err, errlen,
			    "line %zu: the token of line %zu again",
			    tl[i].line, tl[e].line);
			goto fail;
		}
	}
	if (model_finish(m, err, errlen) == -1)
		goto fail;
	free(tl);
	return m;
nomem:
	rp_seterr(err, errlen, "out of memory");
fail:
	free(tl);
	bpe_model_free(m);
	return NULL;
}

/* Read a rank file into b.  Returns 0, or -1 with a message. */
static int
load_file(const char *path, struct buf *b, char *err, size_t errlen)
{
	if (rp_buf_read_file(b, path, BPE_MAX_FILE) == 0)
		return 0;
	if (errno == EFBIG)
		rp_seterr(err, errlen, "larger than %lu bytes", BPE_MAX_FILE);
	else if (errno == ENOMEM)
		rp_seterr(err, errlen, "out of memory");
	else
		rp_seterr(err, errlen, "%s", strerror(errno));
	rp_buf_free(b);
	return -1;
}

struct bpe_model *
bpe_load_tiktoken(const char *path, enum bpe_encoding enc,
    char *err, size_t errlen)
{
	struct buf b = { 0 };
	struct bpe_model *m;

	if (load_file(path, &b, err, errlen) == -1)
		return NULL;
	m = bpe_parse_tiktoken(b.p, b.len, enc, err, errlen);
	rp_buf_free(&b);
	return m;
}

/* ------------------------------------------------------------------ */
/* GPT-2's files */

/* Python's str.split(): fields of s[0..n) (UTF-8) between white space. */
static int
split_py(const uint8_t *s, size_t n, const uint8_t **f, size_t *fl)
{
	size_t i = 0, st;
	uint32_t cp;
	int k = 0, len;

	for (;;) {
		while (i < n && (len = uni_utf8_decode(s + i, n - i, &cp)) > 0 &&
		    uni_is_pyspace(cp))
			i += (size_t)len;
		if (i == n)
			return k;
		st = i;
		while (i < n && ((len = uni_utf8_decode(s + i, n - i, &cp)) ==
		    0 || !uni_is_pyspace(cp)))
			i += len ? (size_t)len : 1;
		if (k == 3)
			return 4;
		f[k] = s + st;
		fl[k++] = i - st;
	}
}

/* A token in encoder.json's spelling, for a message. */
static void
spell(const struct bpe_model *m, uint32_t off, uint32_t len, char *out,
    size_t cap)
{
	size_t j, o = 0;
	uint8_t u[4];
	int k;

	for (j = 0; j < len; j++) {
		k = uni_utf8_encode(byte_cp(m->bytes[off + j]), u);
		if (o + (size_t)k + 4 >= cap) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, u, (size_t)k);
		o += (size_t)k;
	}
	out[o] = '\0';
}

/*
 * The ranks from vocab.bpe as data_gym_to_mergeable_bpe_ranks makes
 * them: the 256 bytes (those that stand for themselves first), then
 * one rank per merge line; a later line making the same token takes
 * the token from the earlier one (a Python dict).
 */
static int
gpt2_ranks(struct bpe_model *m, const uint8_t *p, size_t n, char *err,
    size_t errlen)
{
	size_t i, e, lineno, nl = 0, nid;
	const uint8_t *f[3];
	size_t fl[3];
	uint32_t rank = 0, prev, bad;
	uint8_t *q;
	long a, b;
	int k;

	if (uni_utf8_valid_prefix(p, n) != n) {
		rp_seterr(err, errlen, "vocab.bpe: not UTF-8 at byte %zu",
		    uni_utf8_valid_prefix(p, n));
		return -1;
	}
	for (i = 0; i < n; i++)
		nl += p[i] == '\n';
	/* split("\n")[1:-1]: the pieces between the first and the last. */
	nid = 256 + (nl > 0 ? nl - 1 : 0);
	if ((m->bytes = malloc(256 + n)) == NULL ||
	    model_alloc(m, nid, nid) == -1) {
		rp_seterr(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < 512; i++) {
		unsigned byte = i & 255;

		if ((i < 256) != !!self_byte(byte))
			continue;
		m->bytes[m->nbytes] = (uint8_t)byte;
		add_token(m, (uint32_t)m->nbytes++, 1, rank++);
	}
	for (i = 0; i < n && p[i] != '\n'; i++)
		;
	for (lineno = 2; nl > 1 && i < n; lineno++, i = e) {
		for (e = ++i; e < n && p[e] != '\n'; e++)
			;
		if (e == n)
			break;		/* the last piece */
		k = split_py(p + i, e - i, f, fl);
		if (k != 2) {
			rp_seterr(err, errlen,
			    "vocab.bpe line %zu: not two fields (the "
			    "pair a merge joins)", lineno);
			return -1;
		}
		q = m->bytes + m->nbytes;
		if ((a = ungym(f[0], fl[0], q, &bad)) < 0 ||
		    (b = ungym(f[1], fl[1], q + a, &bad)) < 0) {
			rp_seterr(err, errlen,
			    "vocab.bpe line %zu: U+%04lX is not a "
			    "byte of GPT-2's alphabet", lineno,
			    (unsigned long)bad);
			return -1;
		}
		prev = add_token(m, (uint32_t)m->nbytes, (uint32_t)(a + b),
		    rank);
		if (prev != NONE) {
			/* the dict keeps the bytes, with the later rank */
			struct slot *s = find_slot(m, q, (size_t)(a + b),
			    key_of(q, (size_t)(a + b), (size_t)(a + b)));
			m->tok[rank] = m->tok[prev];
			m->tok[prev].off = NONE;
			s->id = rank;
		} else {
			m->nbytes += (size_t)(a + b);
		}
		rank++;
	}
	return 0;
}

/*
 * Check encoder.json against the ranks (tiktoken's assert), and take
 * <|endoftext|> (and <|startoftext|>, decoded only) from it.
 */
static int
gpt2_check(struct bpe_model *m, json_t *root, size_t jn, char *err,
    size_t errlen)
{
	const char *key;
	json_t *v;
	uint32_t *jid = NULL, bad, r;
	uint8_t *tmp = NULL;
	char sp[96];
	size_t i, kl, nmatch = 0, ntok = 0;
	json_int_t id;
	long bl;
	int rc = -1;

	for (i = 0; i < m->nrank; i++)
		ntok += m->tok[i].off != NONE;
	if ((jid = malloc(m->nrank * sizeof(*jid))) == NULL)
		goto nomem;
	for (i = 0; i < m->nrank; i++)
		jid[i] = NONE;
	json_object_foreach(root, key, v) {
		kl = strlen(key);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (uint64_t)json_integer_value(v) >= jn) {
			rp_seterr(err, errlen,
			    "encoder.json: the id of \"%.60s\" is not "
			    "an integer from 0 to %zu", key, jn - 1);
			goto out;
		}
		id = json_integer_value(v);
		if (strcmp(key, "<|endoftext|>") == 0 ||
		    strcmp(key, "<|startoftext|>") == 0) {
			struct special *s = &m->sp[m->nsp++];

			s->text = key[2] == 'e' ? "<|endoftext|>" :
			    "<|startoftext|>";
			s->len = (uint32_t)kl;
			s->id = (uint32_t)id;
			s->encodes = key[2] == 'e';
			if (s->encodes)
				m->eot = s->id;
			continue;
		}
		if ((tmp = realloc(tmp, kl ? kl : 1)) == NULL)
			goto nomem;
		if ((bl = ungym((const uint8_t *)key, kl, tmp, &bad)) < 0) {
			rp_seterr(err, errlen,
			    "encoder.json: \"%.60s\" has U+%04lX, not "
			    "a byte of GPT-2's alphabet", key,
			    (unsigned long)bad);
			goto out;
		}
		r = rank_of(m, tmp, (size_t)bl, (size_t)bl);
		if (r == NONE) {
			rp_seterr(err, errlen,
			    "encoder.json has \"%.60s\" (id %lld), "
			    "which vocab.bpe does not make", key,
			    (long long)id);
			goto out;
		}
		jid[r] = (uint32_t)id;
		nmatch += (uint64_t)id == r;
	}
	if (nmatch != ntok) {
		for (r = 0; r < m->nrank; r++)
			if (m->tok[r].off != NONE && jid[r] != r)
				break;
		spell(m, m->tok[r].off, m->tok[r].len, sp, sizeof(sp));
		if (jid[r] == NONE)
			rp_seterr(err, errlen,
			    "encoder.json lacks \"%s\" (rank %lu from "
			    "vocab.bpe)", sp, (unsigned long)r);
		else
			rp_seterr(err, errlen,
			    "encoder.json gives \"%s\" id %lu, "
			    "vocab.bpe rank %lu", sp, (unsigned long)jid[r],
			    (unsigned long)r);
		goto out;
	}
	if (m->eot == NONE) {
		rp_seterr(err, errlen, "encoder.json has no <|endoftext|>");
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	rp_seterr(err, errlen, "out of memory");
out:
	free(jid);
	free(tmp);
	return rc;
}

struct bpe_model *
bpe_parse_gpt2(const uint8_t *json, size_t jn, const uint8_t *merges,
    size_t mn, char *err, size_t errlen)
{
	struct bpe_model *m;
	json_error_t je;
	json_t *root = NULL;

	if (jn > BPE_MAX_FILE || mn > BPE_MAX_FILE) {
		rp_seterr(err, errlen, "larger than %lu bytes", BPE_MAX_FILE);
		return NULL;
	}
	if ((m = model_new(BPE_GPT2)) == NULL) {
		rp_seterr(err, errlen, "out of memory");
		return NULL;
	}
	if (gpt2_ranks(m, merges, mn, err, errlen) == -1)
		goto fail;
	if ((root = json_loadb((const char *)json, jn, 0, &je)) == NULL) {
		rp_seterr(err, errlen,
		    "encoder.json: line %d column %d: %s", je.line,
		    je.column, je.text);
		goto fail;
	}
	if (!json_is_object(root)) {
		rp_seterr(err, errlen, "encoder.json: not a JSON object");
		goto fail;
	}
	if (gpt2_check(m, root, jn, err, errlen) == -1)
		goto fail;
	if (m->nsp == 2 && m->sp[0].id == m->sp[1].id) {
		rp_seterr(err, errlen,
		    "encoder.json: <|endoftext|> and <|startoftext|> "
		    "have the same id");
		goto fail;
	}
	if (model_finish(m, err, errlen) == -1)
		goto fail;
	json_decref(root);
	return m;
fail:
	json_decref(root);
	bpe_model_free(m);
	return NULL;
}

struct bpe_model *
bpe_load_gpt2(const char *encoder_json, const char *vocab_bpe,
    char *err, size_t errlen)
{
	struct buf j = { 0 }, v = { 0 };
	struct bpe_model *m = NULL;
	char e2[RP_ERRMAX];

	if (load_file(encoder_json, &j, e2, sizeof e2) == -1) {
		rp_seterr(err, errlen, "encoder.json: %s", e2);
		return NULL;
	}
	if (load_file(vocab_bpe, &v, e2, sizeof e2) == -1)
		rp_seterr(err, errlen, "vocab.bpe: %s", e2);
	else
		m = bpe_parse_gpt2(j.p, j.len, v.p, v.len, err, errlen);
	rp_buf_free(&j);
	rp_buf_free(&v);
	return m;
}

/* ------------------------------------------------------------------ */
/* Lookups */

size_t
bpe_size(const struct bpe_model *m)
{
	return m->nid;
}

uint32_t
bpe_eot_id(const struct bpe_model *m)
{
	return m->eot;
}

/* The special token of an id that is no rank; NULL when none is. */
static const struct special *
special_of(const struct bpe_model *m, int64_t id)
{
	size_t i;

	for (i = 0; i < m->nsp; i++)
		if (m->sp[i].id == id)
			return &m->sp[i];
	return NULL;
}

const uint8_t *
bpe_token(const struct bpe_model *m, int64_t id, size_t *len)
{
	const struct special *s;
	const struct tok *t;

	if (id >= 0 && (uint64_t)id < m->nrank && m->tok[id].off != NONE) {
		t = &m->tok[id];
		*len = t->len;
		return m->bytes + t->off;
	}
	if ((s = special_of(m, id)) == NULL)
		return NULL;
	*len = s->len;
	return (const uint8_t *)s->text;
}

const char *
bpe_piece(const struct bpe_model *m, int64_t id, size_t *len)
{
	const struct special *s;
	const struct tok *t;
	size_t dummy;

	if (len == NULL)
		len = &dummy;
	if (id >= 0 && (uint64_t)id < m->nrank && m->tok[id].off != NONE) {
		t = &m->tok[id];
		*len = t->plen;
		return m->pieces + t->poff;
	}
	if ((s = special_of(m, id)) == NULL)
		return NULL;
	*len = s->len;
	return s->text;
}

int
bpe_decode(const struct bpe_model *m, const int64_t *ids, size_t n,
    struct buf *out, size_t *bad)
{
	const uint8_t *p;
	size_t i, len;

	for (i = 0; i < n; i++) {
		if ((p = bpe_token(m, ids[i], &len)) == NULL) {
			*bad = i;
			errno = EINVAL;
			return -1;
		}
		if (rp_buf_append(out, p, len) == -1)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Encoding */

static int	ids_reserve(struct bpe_enc *e, size_t more);

struct bpe_enc *
bpe_enc_new(const struct bpe_model *m)
{
	struct bpe_enc *e;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	e->m = m;
	/* bpe_ids() is never NULL, even before the first line */
	/* a set of two entries is one line of the processor's cache */
	if ((e->cache = aligned_alloc(64, 2 * CACHE_SETS *
	    sizeof(*e->cache))) == NULL || ids_reserve(e, 1) == -1) {
		bpe_enc_free(e);
		return NULL;
	}
	memset(e->cache, 0, 2 * CACHE_SETS * sizeof(*e->cache));
	return e;
}

void
bpe_enc_free(struct bpe_enc *e)
{
	if (e == NULL)
		return;
	free(e->ids);
	free(e->cache);
	free(e->pos);
	free(e->pid);
	free(e->prank);
	free(e->nxt);
	free(e->prv);
	free(e->heap);
	free(e);
}

void
bpe_enc_allow_special(struct bpe_enc *e, int all)
{
	e->special = all;
}

void
bpe_enc_no_cache(struct bpe_enc *e)
{
	free(e->cache);
	e->cache = NULL;
}

const uint32_t *
bpe_ids(const struct bpe_enc *e)
{
	return e->ids;
}

/* Room for 'more' ids. */
static int
ids_reserve(struct bpe_enc *e, size_t more)
{
	size_t cap = e->cap ? e->cap : 256;
	uint32_t *p;

	if (e->nids + more <= e->cap)
		return 0;
	while (cap < e->nids + more) {
		if (cap > SIZE_MAX / 2 / sizeof(*p)) {
			errno = ENOMEM;
			return -1;
		}
		cap *= 2;
	}
	if ((p = realloc(e->ids, cap * sizeof(*p))) == NULL)
		return -1;
	e->ids = p;
	e->cap = cap;
	return 0;
}

/* Scratch for a piece of n bytes (n < UINT32_MAX). */
static int
scratch(struct bpe_enc *e, size_t n)
{
	size_t cap = e->scap ? e->scap : 128;
	uint32_t **a[] = { &e->pos, &e->pid, &e->prank, &e->nxt, &e->prv };
	uint32_t *p;
	size_t i;

	if (n + 1 <= e->scap)
		return 0;
	if (n >= UINT32_MAX - 1) {
		errno = ENOMEM;
		return -1;
	}
	while (cap < n + 1)
		cap *= 2;
	for (i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		if ((p = realloc(*a[i], cap * sizeof(*p))) == NULL)
			return -1;
		*a[i] = p;
	}
	e->scap = cap;
	return 0;
}

/*
 * Merge p[0..n), 2 <= n < HEAP_MIN, by scanning the pairs: the parts
 * start at pos[0..k) (pos[k] = n), pid[] are their ids and prank[i]
 * the rank of parts i and i + 1 together.  Appends the ids.
 */
static void
merge_scan(struct bpe_enc *e, const uint8_t *p, size_t n, size_t avail)
{
	const struct bpe_model *m = e->m;
	uint32_t *pos = e->pos, *pid = e->pid, *pr = e->prank;
	uint32_t best;
	size_t i, k = n, bi;

	for (i = 0; i <= n; i++)
		pos[i] = (uint32_t)i;
	for (i = 0; i < n; i++)
		pid[i] = m->byte_rank[p[i]];
	for (i = 0; i + 1 < n; i++)
		pr[i] = m->pair_rank[p[i] << 8 | p[i + 1]];
	pr[n - 1] = NONE;
	for (;;) {
		best = NONE;
		bi = 0;
		for (i = 0; i + 1 < k; i++)
			if (pr[i] < best) {
				best = pr[i];
				bi = i;
			}
		if (best == NONE)
			break;
		/* part bi takes part bi + 1 */
		pid[bi] = best;
		k--;
		memmove(pos + bi + 1, pos + bi + 2, (k - bi) * sizeof(*pos));
		memmove(pid + bi + 1, pid + bi + 2, (k - bi - 1) * sizeof(*pid));
		memmove(pr + bi + 1, pr + bi + 2, (k - bi - 1) * sizeof(*pr));
		pr[bi] = bi + 1 < k ? rank_of(m, p + pos[bi],
		    pos[bi + 2] - pos[bi], avail - pos[bi]) : NONE;
		if (bi > 0)
			pr[bi - 1] = rank_of(m, p + pos[bi - 1],
			    pos[bi + 1] - pos[bi - 1], avail - pos[bi - 1]);
	}
	memcpy(e->ids + e->nids, pid, k * sizeof(*pid));
	e->nids += k;
}

static inline int
hless(const struct hent *a, const struct hent *b)
{
	return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static void
hpush(struct bpe_enc *e, size_t *hn, uint32_t rank, uint32_t left,
    uint32_t end)
{
	struct hent *h = e->heap, x = { rank, left, end };
	size_t i = (*hn)++, up;

	while (i > 0) {
		up = (i - 1) / 2;
		if (!hless(&x, &h[up]))
			break;
		h[i] = h[up];
		i = up;
	}
	h[i] = x;
}

static struct hent
hpop(struct bpe_enc *e, size_t *hn)
{
	struct hent *h = e->heap, top = h[0], x = h[--*hn];
	size_t i = 0, c, n = *hn;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && hless(&h[c + 1], &h[c]))
			c++;
		if (!hless(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n > 0)
		h[i] = x;
	return top;
}

/*
 * Merge p[0..n) through a heap of the pairs (rank, start of the left
 * part, end of the right part): a popped pair is stale when its left
 * part has gone or no longer ends where its right part starts, or its
 * right part no longer ends at 'end'.  nxt[s] is the end of the part
 * that starts at s, prv[s] the start of the part before it (NONE once
 * part s has been merged into it, or for the first part).  Returns 0,
 * or -1 with ENOMEM.
 */
static int
merge_heap(struct bpe_enc *e, const uint8_t *p, size_t n, size_t avail)
{
	const struct bpe_model *m = e->m;
	uint32_t *nxt = e->nxt, *prv = e->prv, *pid = e->pid, r, s, t;
	size_t i, hn = 0;
	struct hent x, *h;

	/* n - 1 pairs at first, at most two more per merge (n - 1) */
	if (e->hcap < 3 * n) {
		if ((h = realloc(e->heap, 3 * n * sizeof(*h))) == NULL)
			return -1;
		e->heap = h;
		e->hcap = 3 * n;
	}
	for (i = 0; i < n; i++) {
		nxt[i] = (uint32_t)i + 1;
		prv[i] = i ? (uint32_t)i - 1 : NONE;
		pid[i] = m->byte_rank[p[i]];
	}
	for (i = 0; i + 1 < n; i++)
		if ((r = m->pair_rank[p[i] << 8 | p[i + 1]]) != NONE)
			hpush(e, &hn, r, (uint32_t)i, (uint32_t)i + 2);
	while (hn > 0) {
		x = hpop(e, &hn);
		s = nxt[x.left];	/* start of the right part */
		if ((x.left != 0 && prv[x.left] == NONE) || s >= n ||
		    nxt[s] != x.end)
			continue;
		/* the left part takes the right one */
		pid[x.left] = x.rank;
		nxt[x.left] = x.end;
		prv[s] = NONE;
		if (x.end < n)
			prv[x.end] = x.left;
		if (x.left != 0) {
			t = prv[x.left];
			if ((r = rank_of(m, p + t, x.end - t,
			    avail - t)) != NONE)
				hpush(e, &hn, r, t, x.end);
		}
		if (x.end < n && (r = rank_of(m, p + x.left,
		    nxt[x.end] - x.left, avail - x.left)) != NONE)
			hpush(e, &hn, r, x.left, nxt[x.end]);
	}
	for (s = 0; s < n; s = nxt[s])
		e->ids[e->nids++] = pid[s];
	return 0;
}

/*
 * Append the ids of one piece p[0..n), n > 0, where p[0..avail) may be
 * read.  Returns 0, or -1 with ENOMEM.
 */
static int
encode_piece(struct bpe_enc *e, const uint8_t *p, size_t n, size_t avail)
{
	const struct bpe_model *m = e->m;
	struct centry *c = NULL;
	struct slot *s;
	struct key key;
	size_t k;

	if (e->cap - e->nids < CACHE_IDS && ids_reserve(e, CACHE_IDS) == -1)
		return -1;
	if (n == 1) {
		e->ids[e->nids++] = m->byte_rank[p[0]];
		return 0;
	}
	key = key_of(p, n, avail);
	if (e->cache != NULL && n <= CACHE_KEY) {
		c = &e->cache[2 * ((key.h >> 40) & (CACHE_SETS - 1))];
		for (k = 0; k < 2; k++)
			if (c[k].head == key.head && c[k].head2 == key.head2 &&
			    c[k].len == n) {
				memcpy(e->ids + e->nids, c[k].ids,
				    sizeof(c[k].ids));
				e->nids += c[k].nid;
				return 0;
			}
	}
	s = find_slot(m, p, n, key);
	k = e->nids;
	if (s->id != NONE) {
		e->ids[e->nids++] = s->id;
	} else {
		if (ids_reserve(e, n) == -1 || scratch(e, n) == -1)
			return -1;
		if (n < HEAP_MIN)
			merge_scan(e, p, n, avail);
		else if (merge_heap(e, p, n, avail) == -1)
			return -1;
	}
	if (c != NULL && e->nids - k <= CACHE_IDS) {
		c[1] = c[0];
		c[0].head = key.head;
		c[0].head2 = key.head2;
		c[0].len = (uint8_t)n;
		c[0].nid = (uint8_t)(e->nids - k);
		memcpy(c[0].ids, e->ids + k, c[0].nid * sizeof(uint32_t));
	}
	return 0;
}

/*
 * The pieces of p[0..n) by the pattern, which sees n as the end (the
 * text goes on to p + avail).
 */
static int
encode_ordinary(struct bpe_enc *e, const uint8_t *p, size_t n, size_t avail)
{
	enum pretok_pat pat = e->m->pat;
	size_t i = 0, k;

	while (i < n) {
		k = pretok_next(pat, p + i, n - i);
		if (encode_piece(e, p + i, k, avail - i) == -1)
			return -1;
		i += k;
	}
	return 0;
}

/*
 * The special token at p[0..n) (its text is a prefix), the longest
 * when several are; NULL when none is.
 */
static const struct special *
special_at(const struct bpe_model *m, const uint8_t *p, size_t n)
{
	const struct special *best = NULL, *s;
	size_t i;

	for (i = 0; i < m->nsp; i++) {
		s = &m->sp[i];
		if (s->encodes && s->len <= n &&
		    memcmp(p, s->text, s->len) == 0 &&
		    (best == NULL || s->len > best->len))
			best = s;
	}
	return best;
}

long
bpe_encode(struct bpe_enc *e, const uint8_t *p, size_t n)
{
	const struct bpe_model *m = e->m;
	const struct special *s;
	size_t i, seg = 0;

	e->nids = 0;
	if (!e->special || m->nsp == 0) {
		if (encode_ordinary(e, p, n, n) == -1)
			return -1;
		return (long)e->nids;
	}
	for (i = 0; i < n; i++) {
		if (!m->sp_first[p[i]] || (s = special_at(m, p + i,
		    n - i)) == NULL)
			continue;
		if (encode_ordinary(e, p + seg, i - seg, n - seg) == -1 ||
		    ids_reserve(e, 1) == -1)
			return -1;
		e->ids[e->nids++] = s->id;
		i += s->len - 1;
		seg = i + 1;
	}
	if (encode_ordinary(e, p + seg, n - seg, n - seg) == -1)
		return -1;
	return (long)e->nids;
}
