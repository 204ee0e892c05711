/*
 * tensor2tensor's SubwordTextEncoder: lines, strip, tokenizer, escaping,
 * vocabulary files, encoding and decoding.  The build is in
 * subword_build.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "errmsg.h"
#include "io.h"
#include "subword.h"
#include "subword_int.h"
#include "unicode.h"

/* ---- helpers ---------------------------------------------------------- */

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
	struct rp_window w;		/* the bytes read, and the range */
	uint64_t	 lineno;
	uint8_t		*tmp;		/* line with '\r' deleted */
	size_t		 tmpcap;
	uint64_t	 eline, eoff;	/* the fault of the last -2 */
	char		 emsg[80];
};

struct sw_lines *
sw_lines_open(int fd)
{
	struct sw_lines *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->fd = fd;
	r->w.cap = 1 << 20;
	if ((r->w.buf = malloc(r->w.cap)) == NULL) {
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
	r->w.eof = 1;
	r->w.buf = p;
	r->w.cap = r->w.end = n;
	return r;
}

struct sw_lines *
sw_lines_open_mem(const uint8_t *p, size_t n)
{
	struct sw_lines *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->fd = -1;
	r->w.eof = 1;
	r->borrowed = 1;
	r->w.buf = (uint8_t *)(uintptr_t)p;
	r->w.cap = r->w.end = n;
	return r;
}

void
sw_lines_free(struct sw_lines *r)
{
	if (r == NULL)
		return;
	if (!r->borrowed)
		free(r->w.buf);
	free(r->tmp);
	free(r);
}

/*
 * The next line of r, not taken yet: its bytes up to the \n (*nl 1), or
 * what is left at the end of the input (*nl 0).  1; 0 at the end with
 * nothing left; -1 on a read error.
 */
static int
lines_peek(struct sw_lines *r, const uint8_t **pp, size_t *np, int *nl)
{
	const uint8_t *p, *q;
	size_t scan = 0;

	for (;;) {
		p = r->w.buf + r->w.start;
		q = r->w.end - r->w.start > scan ?
		    memchr(p + scan, '\n', r->w.end - r->w.start - scan) : NULL;
		if (q != NULL) {
			*pp = p;
			*np = (size_t)(q - p);
			*nl = 1;
			return 1;
		}
		scan = r->w.end - r->w.start;
		if (r->w.eof) {
			if (scan == 0)
				return 0;
			*pp = p;
			*np = scan;
			*nl = 0;
			return 1;
		}
		if (rp_window_fill(&r->w, r->fd, 1) == -1)
			return -1;
	}
}

int
sw_lines_next_raw(struct sw_lines *r, const uint8_t **pp, size_t *np)
{
	int nl, rc;

	if ((rc = lines_peek(r, pp, np, &nl)) != 1)
		return rc;
	r->w.start += *np + (size_t)nl;
	r->lineno++;
	return 1;
}

uint64_t
sw_lines_lineno(const struct sw_lines *r)
{
	return r->lineno;
}

const char *
sw_lines_strerror(const struct sw_lines *r)
{
	return r->emsg;
}

uint64_t
sw_lines_error_line(const struct sw_lines *r)
{
	return r->eline;
}

uint64_t
sw_lines_error_offset(const struct sw_lines *r)
{
	return r->eoff;
}

int
sw_lines_range(struct sw_lines *r, uint64_t off, uint64_t len)
{
	if (r->fd == -1) {
		errno = EINVAL;
		return -1;
	}
	return rp_window_range(&r->w, r->fd, off, len);
}

/* Invalid UTF-8 on line 'line' at file offset 'off': -2. */
static int
lines_bad(struct sw_lines *r, uint64_t line, uint64_t off)
{
	r->eline = line;
	r->eoff = off;
	snprintf(r->emsg, sizeof(r->emsg),
	    "line %ju: invalid UTF-8 at byte offset %ju", (uintmax_t)line,
	    (uintmax_t)off);
	return -2;
}

int
sw_lines_next(struct sw_lines *r, const uint8_t **pp, size_t *np, int *nl)
{
	const uint8_t *p;
	size_t n, i, j, good;
	uint64_t off;
	int rc;

	if ((rc = lines_peek(r, &p, &n, nl)) != 1)
		return rc;
	if (!*nl) {
		/* a last line of nothing but \r is no line */
		for (i = 0; i < n && p[i] == '\r'; i++)
			;
		if (i == n) {
			r->w.start = r->w.end;
			return 0;
		}
	}
	off = r->w.base + r->w.start;
	r->w.start += n + (size_t)*nl;
	if (memchr(p, '\r', n) != NULL) {
		if (sw_grow(&r->tmp, &r->tmpcap, n, 1) == -1)
			return -1;
		for (i = j = 0; i < n; i++)
			if (p[i] != '\r')
				r->tmp[j++] = p[i];
		good = uni_utf8_valid_prefix(r->tmp, j);
		if (good < j) {
			/* Map the offset back to the line as it is on disk. */
			for (i = 0; good > 0 || p[i] == '\r'; i++)
				if (p[i] != '\r')
					good--;
			return lines_bad(r, r->lineno + 1, off + i);
		}
		p = r->tmp;
		n = j;
	} else if ((good = uni_utf8_valid_prefix(p, n)) < n) {
		return lines_bad(r, r->lineno + 1, off + good);
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
 * Encoding runs over a double-array trie built once at load: state s
 * has its child by byte b at slot da[s].base + b, valid when that slot's
 * chk holds s.  One 8-byte slot per step, no hashing and no search.
 * chk also says whether the slot's state ends an entry (DA_TERM); the
 * entry's id is in did[], read only once per segment.  Free slots have
 * DA_FREE, which no state equals, so any base + b within the array can
 * be probed (leaves keep base 0).
 */
#define DA_TERM		0x80000000u
#define DA_FREE		0x7FFFFFFFu
#define DA_ROOTCHK	0x7FFFFFFEu	/* slot 0, the root: nobody's child */
#define DA_MAXSLOTS	0x7FFFFF00u

struct dslot {
	uint32_t	 base;
	uint32_t	 chk;		/* parent state | DA_TERM, or DA_FREE */
};

/* Per-code-point flags for the tokenizer and escaping. */
#define CP_ALNUM	1u	/* tensor2tensor's alphanumeric (L*, N*) */
#define CP_ESC		2u	/* escaped: outside the alphabet, or \ _ \n */

struct sw_vocab {
	size_t		 n;
	uint8_t		*pool;
	size_t		*off;		/* n + 1 offsets */
	struct tail	*tails;
	size_t		 ntails;
	uint32_t	 tailbase;	/* base of every tail state */
	uint8_t		 ascii[128];	/* encode alphabet, ASCII part */
	uint32_t	*alpha;		/* the rest, sorted */
	size_t		 nalpha;
	uint8_t		*bmp;		/* the alphabet's BMP code points, a bit each */
	/* ASCII bytes: CP_ flags; bytes >= 0x80: 0x80. */
	uint8_t		 acls[256];
	int		 alnum_plain;	/* every ASCII letter and digit is in the alphabet */
	uint8_t		*bmpcls;	/* CP_ flags of the BMP, 2 bits each */
	struct dslot	*da;
	int32_t		*did;		/* per state: id, or -1 */
	size_t		 nda;
	const struct sw_vocab *owner;	/* a share's: whose tables these are */
	size_t		 probes;	/* slots looked at to lay the array out */
	size_t		 looked;	/* entry bytes looked at to lay it out */
	struct buf	 esc;		/* scratch */
	uint64_t	 nesc;		/* characters sw_encode() wrote as \NNN; */
	char		 err[200];	/* sw_encode()'s last fault */
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
 * While the double array is built, its free slots are on one of two
 * lists, linked through their own fields (base is the next slot, did
 * the previous one; DA_NONE ends a list).  The open list, in slot
 * order, holds the slots still tried as a node's first child.  A slot
 * that fails DA_FAILS tries (a node whose children do not all fit
 * around it) moves to the spare list, where only nodes with one child,
 * which fit any free slot, take it.  So each slot is tried at most
 * DA_FAILS times in vain, and the layout costs time linear in the
 * slots, however many holes the array has.
 */
#define DA_NONE		0xFFFFFFFFu
#define DA_FAILS	16

struct dabuild {
	uint32_t	 head, tail;	/* the open list */
	uint32_t	 spare;		/* the spare list (its first slot) */
	uint8_t		*fails;		/* per slot: failed tries; DA_FAILS: spare */
	size_t		 probes;	/* slots looked at to place nodes */
	size_t		 looked;	/* entry bytes (and lengths) looked at */
};

/* Make room for slots [0, need) of the double array; new slots are open. */
static int
da_reserve(struct sw_vocab *v, struct dabuild *b, size_t need)
{
	size_t ncap = v->nda ? v->nda : 1024, i;
	struct dslot *nd;
	int32_t *ni;
	uint8_t *nf;

	if (need <= v->nda)
		return 0;
	while (ncap < need)
		ncap += ncap / 2;
	if (ncap > DA_MAXSLOTS) {
		if (need > DA_MAXSLOTS) {
			errno = E2BIG;
			return -1;
		}
		ncap = DA_MAXSLOTS;
	}
	if ((nd = realloc(v->da, ncap * sizeof(*nd))) == NULL)
		return -1;
	v->da = nd;
	if ((ni = realloc(v->did, ncap * sizeof(*ni))) == NULL)
		return -1;
	v->did = ni;
	if ((nf = realloc(b->fails, ncap)) == NULL)
		return -1;
	b->fails = nf;
	memset(b->fails + v->nda, 0, ncap - v->nda);
	for (i = v->nda; i < ncap; i++) {
		v->da[i].chk = DA_FREE;
		v->da[i].base = i + 1 < ncap ? (uint32_t)(i + 1) : DA_NONE;
		v->did[i] = (int32_t)(i > v->nda ? (uint32_t)(i - 1) : b->tail);
	}
	if (b->tail == DA_NONE)
		b->head = (uint32_t)v->nda;
	else
		v->da[b->tail].base = (uint32_t)v->nda;
	b->tail = (uint32_t)(ncap - 1);
	v->nda = ncap;
	return 0;
}

/* Take free slot i off its list. */
static void
da_unlink(struct sw_vocab *v, struct dabuild *b, uint32_t i)
{
	uint32_t next = v->da[i].base, prev = (uint32_t)v->did[i];
	int spare = b->fails[i] == DA_FAILS;

	if (prev != DA_NONE)
		v->da[prev].base = next;
	else if (spare)
		b->spare = next;
	else
		b->head = next;
	if (next != DA_NONE)
		v->did[next] = (int32_t)prev;
	else if (!spare)
		b->tail = prev;
}

/* Slot i becomes a state's. */
static void
da_take(struct sw_vocab *v, struct dabuild *b, uint32_t i)
{
	da_unlink(v, b, i);
	v->da[i].base = 0;
	v->did[i] = -1;
}

/* Open slot q failed a try: after DA_FAILS of them it goes to the spare list. */
static void
da_failed(struct sw_vocab *v, struct dabuild *b, uint32_t q)
{
	if (++b->fails[q] < DA_FAILS)
		return;
	b->fails[q]--;
	da_unlink(v, b, q);
	b->fails[q] = DA_FAILS;
	v->da[q].base = b->spare;
	v->did[q] = (int32_t)DA_NONE;
	if (b->spare != DA_NONE)
		v->did[b->spare] = (int32_t)q;
	b->spare = q;
}

/*
 * A tail: the rest of the only entry below a state, kept as bytes of the
 * pool rather than as a chain of states, so that long entries cost their
 * bytes and not a state per byte.  Tail states have base v->tailbase,
 * where every slot is free (so their transitions fail like a leaf's), and
 * their index in v->tails in did[].
 */
#define TAIL_MIN	8

struct tail {
	size_t		 off;		/* pool offset of the rest */
	size_t		 len;		/* its bytes, > TAIL_MIN */
	int32_t		 id;
	uint32_t	 slot;
};

static inline size_t
elen(const struct sw_vocab *v, uint32_t id)
{
	return v->off[id + 1] - v->off[id];
}

/*
 * A node of the trie while it is laid out: the entries ord[lo, hi), in
 * id order, which share their first d bytes, at slot 'state'.  When lcp
 * is not 0, they are known to share lcp more bytes (so none ends at d),
 * and 'one' says whether they are all one string.
 */
struct danode {
	uint32_t	 lo, hi;
	uint32_t	 state;
	uint32_t	 one;
	size_t		 d;
	size_t		 lcp;
};

/*
 * The bytes after the first d that the entries ord[lo, hi) all share (at
 * most the first one's), and in *one whether they are all one string.
 * The bytes are compared in windows of doubling width, so that the cost
 * is about twice the entries times the answer, plus one byte an entry.
 */
static size_t
da_common(const struct sw_vocab *v, const uint32_t *ord, size_t lo,
    size_t hi, size_t d, uint32_t *one, size_t *looked)
{
	const uint8_t *f = v->pool + v->off[ord[lo]] + d, *s;
	size_t fl = elen(v, ord[lo]) - d, have = 0, w = 1, lim, end, c, l, i, j;

	*one = 1;
	for (i = lo + 1; i < hi && *one; i++)
		*one = elen(v, ord[i]) - d == fl;
	*looked += i - lo;
	for (;;) {
		lim = fl - have > w ? have + w : fl;
		for (end = lim, i = lo + 1; i < hi && end > have; i++) {
			s = v->pool + v->off[ord[i]] + d;
			l = elen(v, ord[i]) - d;
			c = end < l ? end : l;
			for (j = have; j < c && s[j] == f[j]; j++)
				;
			*looked += j - have + 1;
			end = j;
		}
		if (end < lim || lim == fl)
			break;
		have = lim;
		w *= 2;
	}
	*one = *one && end == fl;
	return end;
}

/*
 * A base for children by the bytes cb[0..e) (ascending) at which all
 * their slots are free: a spare slot for one child, else the first open
 * slot that fits (growing the array past the last).  0 or -1 (errno).
 */
static int
da_place(struct sw_vocab *v, struct dabuild *b, const uint8_t *cb, size_t e,
    uint32_t *basep)
{
	uint32_t q, next, base, c0 = cb[0];
	size_t k;
	int ok;

	if (e == 1 && b->spare != DA_NONE && b->spare > c0) {
		base = b->spare - c0;
		b->probes++;
	} else for (q = b->head;; q = next) {
		if (q == DA_NONE) {
			/* Past the last open slot: grow, go on from the new ones. */
			q = b->tail;
			if (da_reserve(v, b, v->nda + 1) == -1)
				return -1;
			q = q == DA_NONE ? b->head : v->da[q].base;
		}
		b->probes++;
		if ((ok = q > c0)) {
			base = q - c0;
			if ((size_t)base + 256 > v->nda &&
			    da_reserve(v, b, (size_t)base + 256) == -1)
				return -1;
			for (k = 1; k < e && ok; k++, b->probes++)
				ok = v->da[base + cb[k]].chk == DA_FREE;
			if (ok)
				break;
		}
		next = v->da[q].base;
		da_failed(v, b, q);
	}
	if ((size_t)base + 256 > v->nda &&
	    da_reserve(v, b, (size_t)base + 256) == -1)
		return -1;
	*basep = base;
	return 0;
}

/* State 'slot' ends in a tail: the rest of entry id after its first d bytes. */
static int
da_tail(struct sw_vocab *v, size_t *tcap, uint32_t slot, uint32_t id, size_t d)
{
	if (v->ntails == *tcap &&
	    sw_grow(&v->tails, tcap, v->ntails + 1, sizeof(*v->tails)) == -1)
		return -1;
	if (v->ntails >= INT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	v->tails[v->ntails].off = v->off[id] + d;
	v->tails[v->ntails].len = elen(v, id) - d;
	v->tails[v->ntails].id = (int32_t)id;
	v->tails[v->ntails].slot = slot;
	v->did[slot] = (int32_t)v->ntails++;
	return 0;
}

/*
 * Lay the trie of the entries out as a double array, depth first.  A
 * node is a run of the entries, kept in id order: those that end at the
 * node go first (the last id is the node's), the rest are split by
 * their next byte with a counting sort, or, when they share their next
 * bytes, go down a chain of one child each without being looked at
 * again.  Each node's children go to the first base (trying the open
 * slots in order) whose slots are all free.  A node below which one
 * string remains, longer than TAIL_MIN bytes, becomes a tail.
 * Time: linear in the vocabulary's bytes, and at most DA_FAILS failed
 * tries a slot and one good try a node, each looking at a slot per
 * child.  Memory: the array, 9 bytes per entry and a stack of at most
 * one node per entry (in practice the depth times the branching).
 */
static int
vocab_double_array(struct sw_vocab *v)
{
	uint32_t *ord = NULL, *tmp = NULL, base = 0;
	uint8_t *key = NULL;
	size_t m = 0, i, j, k, lo, ne, sn = 0, scap = 0, slot, top = 1;
	size_t tcap = 0, g, e, cnt[256], pos[256];
	struct danode *stk = NULL, u, *c;
	struct dabuild b = { DA_NONE, DA_NONE, DA_NONE, NULL, 0, 0 };
	uint8_t cb[256];
	uint32_t glo[257];
	int rcode = -1;

	for (i = 0; i < v->n; i++)
		m += elen(v, (uint32_t)i) > 0;
	if (v->n > INT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((ord = malloc((m ? m : 1) * sizeof(*ord))) == NULL ||
	    (tmp = malloc((m ? m : 1) * sizeof(*tmp))) == NULL ||
	    (key = malloc(m ? m : 1)) == NULL)
		goto out;
	for (i = j = 0; i < v->n; i++)
		if (elen(v, (uint32_t)i) > 0)
			ord[j++] = (uint32_t)i;
	if (sw_grow(&stk, &scap, 1, sizeof(*stk)) == -1 ||
	    da_reserve(v, &b, 512) == -1)
		goto out;
	da_take(v, &b, 0);
	v->da[0].chk = DA_ROOTCHK;
	memset(&stk[0], 0, sizeof(stk[0]));
	stk[0].hi = (uint32_t)m;
	sn = 1;
	while (sn > 0) {
		u = stk[--sn];
		lo = u.lo;
		ne = 0;
		if (u.lcp == 0) {
			/* Entries that end here go first; the last id wins. */
			for (i = lo; i < u.hi; i++)
				ne += elen(v, ord[i]) == u.d;
			b.looked += u.hi - lo;
			if (ne > 0) {
				for (j = 0, k = ne, i = lo; i < u.hi; i++)
					if (elen(v, ord[i]) == u.d)
						tmp[j++] = ord[i];
					else
						tmp[k++] = ord[i];
				memcpy(ord + lo, tmp, (u.hi - lo) * sizeof(*ord));
				v->da[u.state].chk |= DA_TERM;
				v->did[u.state] = (int32_t)ord[lo + ne - 1];
				lo += ne;
			}
			if (lo == u.hi)
				continue;
			u.lcp = da_common(v, ord, lo, u.hi, u.d, &u.one,
			    &b.looked);
		}
		/*
		 * One string below, not ending here: a tail.  (Below an
		 * entry, the one string left is a tail one byte down.)
		 */
		if (u.one && ne == 0 && u.state != 0 &&
		    elen(v, ord[lo]) - u.d > TAIL_MIN) {
			if (da_tail(v, &tcap, u.state, ord[u.hi - 1], u.d) == -1)
				goto out;
			continue;
		}
		if (u.lcp > 0) {
			cb[0] = v->pool[v->off[ord[lo]] + u.d];
			glo[0] = (uint32_t)lo;
			e = 1;
		} else {
			memset(cnt, 0, sizeof(cnt));
			b.looked += u.hi - lo;
			for (i = lo; i < u.hi; i++) {
				key[i] = v->pool[v->off[ord[i]] + u.d];
				cnt[key[i]]++;
			}
			for (e = 0, k = lo, g = 0; g < 256; g++)
				if (cnt[g] > 0) {
					cb[e] = (uint8_t)g;
					glo[e++] = (uint32_t)k;
					pos[g] = k;
					k += cnt[g];
				}
			for (i = lo; i < u.hi; i++)
				tmp[pos[key[i]]++] = ord[i];
			memcpy(ord + lo, tmp + lo, (u.hi - lo) * sizeof(*ord));
		}
		glo[e] = u.hi;
		if (da_place(v, &b, cb, e, &base) == -1)
			goto out;
		v->da[u.state].base = base;
		if (sw_grow(&stk, &scap, sn + e, sizeof(*stk)) == -1)
			goto out;
		for (g = e; g-- > 0;) {
			slot = base + cb[g];
			da_take(v, &b, (uint32_t)slot);
			v->da[slot].chk = u.state;
			if (slot + 1 > top)
				top = slot + 1;
			c = &stk[sn++];
			c->lo = glo[g];
			c->hi = glo[g + 1];
			c->state = (uint32_t)slot;
			c->d = u.d + 1;
			c->lcp = e == 1 ? u.lcp - 1 : 0;
			c->one = e == 1 && c->lcp > 0 ? u.one : 0;
		}
	}
	/* Every base + byte must stay inside the array, tails' too. */
	if (da_reserve(v, &b, top + 512) == -1)
		goto out;
	v->tailbase = (uint32_t)top;
	for (i = 0; i < v->nda; i++)
		if (v->da[i].chk == DA_FREE) {
			v->da[i].base = 0;
			v->did[i] = -1;
		}
	for (i = 0; i < v->ntails; i++)
		v->da[v->tails[i].slot].base = v->tailbase;
	v->probes = b.probes;
	v->looked = b.looked;
	rcode = 0;
out:
	free(b.fails);
	free(ord);
	free(tmp);
	free(key);
	free(stk);
	return rcode;
}

/* CP_ flags of a code point under v's alphabet. */
static unsigned
cp_flags(const struct sw_vocab *v, uint32_t cp)
{
	unsigned f = uni_is_alnum(cp) ? CP_ALNUM : 0;

	if (cp == '\\' || cp == '_' || cp == '\n' || !in_alpha(v, cp))
		f |= CP_ESC;
	return f;
}

/*
 * The BMP's classes before any alphabet is known: every code point
 * escaped, letters and digits marked.  The same for every vocabulary,
 * so made once (a vocabulary loads in a fraction of the time).
 */
static uint8_t bmp_template[0x10000 / 4];
static pthread_once_t bmp_once = PTHREAD_ONCE_INIT;

static void
bmp_template_init(void)
{
	uint32_t cp;

	memset(bmp_template, CP_ESC * 0x55, sizeof bmp_template);
	for (cp = 0; cp < 0x10000; cp++)
		if (uni_is_alnum(cp))
			bmp_template[cp >> 2] |= (uint8_t)(CP_ALNUM << ((cp & 3) * 2));
}

/* The tokenizer's and escaper's tables for ASCII and the BMP. */
static int
vocab_classes(struct sw_vocab *v)
{
	uint32_t cp;

	size_t i;

	/* Everything escaped, then the alphabet let through. */
	if ((v->bmpcls = malloc(0x10000 / 4)) == NULL)
		return -1;
	pthread_once(&bmp_once, bmp_template_init);
	memcpy(v->bmpcls, bmp_template, 0x10000 / 4);
	for (i = 0; i < v->nalpha && v->alpha[i] < 0x10000; i++) {
		cp = v->alpha[i];
		v->bmpcls[cp >> 2] &= (uint8_t)~(CP_ESC << ((cp & 3) * 2));
	}
	for (cp = 0; cp < 0x80; cp++)
		v->bmpcls[cp >> 2] = (uint8_t)((v->bmpcls[cp >> 2] &
		    ~(3u << ((cp & 3) * 2))) | cp_flags(v, cp) << ((cp & 3) * 2));
	v->alnum_plain = 1;
	for (cp = 0; cp < 256; cp++) {
		v->acls[cp] = cp < 0x80 ? (uint8_t)cp_flags(v, cp) : 0x80;
		if (v->acls[cp] & CP_ALNUM)
			v->alnum_plain &= v->acls[cp] == CP_ALNUM;
	}
	return 0;
}

static inline unsigned
cp_class(const struct sw_vocab *v, uint32_t cp)
{
	if (cp < 0x10000)
		return (v->bmpcls[cp >> 2] >> ((cp & 3) * 2)) & 3;
	return cp_flags(v, cp);
}

#define SMALL_POOL	4096	/* vocabulary bytes indexed without a bitmap */

/* Index the entries already in v->pool/v->off: trie, alphabet. */
static int
vocab_index(struct sw_vocab *v)
{
	static const char escchars[] = "\\_u;0123456789";
	uint8_t *seen;
	size_t i, k, end, acap = 0;
	uint32_t cp;
	int m;

	for (i = 0; escchars[i] != '\0'; i++)
		v->ascii[(uint8_t)escchars[i]] = 1;
	/*
	 * The alphabet: each code point once (a bit says seen), sorted.  A
	 * small vocabulary takes every code point, then sorts and drops the
	 * repeats, which is cheaper than clearing the bitmap.
	 */
	end = v->off[v->n];
	seen = NULL;
	if (end > SMALL_POOL && (seen = calloc(0x110000 / 8, 1)) == NULL)
		return -1;
	for (i = 0; i < end; i += (size_t)m) {
		m = sw_u8(v->pool + i, &cp);
		if (cp < 128)
			v->ascii[cp] = 1;
		else if (seen == NULL || !(seen[cp >> 3] & (1u << (cp & 7)))) {
			if (seen != NULL)
				seen[cp >> 3] |= (uint8_t)(1u << (cp & 7));
			if (sw_grow(&v->alpha, &acap, v->nalpha + 1,
			    sizeof(*v->alpha)) == -1) {
				free(seen);
				return -1;
			}
			v->alpha[v->nalpha++] = cp;
		}
	}
	if (v->nalpha > 0)
		qsort(v->alpha, v->nalpha, sizeof(*v->alpha), cmp_u32);
	if (seen == NULL && v->nalpha > 0) {
		for (i = 1, k = 1; i < v->nalpha; i++)
			if (v->alpha[i] != v->alpha[k - 1])
				v->alpha[k++] = v->alpha[i];
		v->nalpha = k;
	}
	free(seen);
	if ((v->bmp = calloc(0x10000 / 8, 1)) == NULL)
		return -1;
	for (i = 0; i < v->nalpha && v->alpha[i] < 0x10000; i++)
		v->bmp[v->alpha[i] >> 3] |= (uint8_t)(1u << (v->alpha[i] & 7));
	if (vocab_classes(v) == -1)
		return -1;
	return vocab_double_array(v);
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
sw_vocab_parse(const uint8_t *p, size_t n, char *err, size_t errlen)
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
		if ((good = uni_utf8_valid_prefix(d, j)) < j) {
			for (k = 0; good > 0 || line[k] == '\r'; k++)
				if (line[k] != '\r')
					good--;
			rp_seterr(err, errlen,
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
		rp_seterr(err, errlen, "empty vocabulary");
		sw_vocab_free(v);
		return NULL;
	}
	if (vocab_index(v) == -1)
		goto oom;
	return v;
oom:
	rp_seterr(err, errlen, "%s", strerror(errno));
	sw_vocab_free(v);
	return NULL;
}

struct sw_vocab *
sw_vocab_load(int fd, char *err, size_t errlen)
{
	struct sw_vocab *v;
	struct buf b = { 0 };

	if (rp_buf_read_fd(&b, fd, SIZE_MAX) == -1) {
		rp_seterr(err, errlen, "%s", strerror(errno));
		rp_buf_free(&b);
		return NULL;
	}
	v = sw_vocab_parse(b.p, b.len, err, errlen);
	rp_buf_free(&b);
	return v;
}

void
sw_vocab_free(struct sw_vocab *v)
{
	if (v == NULL)
		return;
	free(v->esc.p);
	if (v->owner != NULL) {
		free(v);
		return;
	}
	free(v->bmp);
	free(v->bmpcls);
	free(v->da);
	free(v->did);
	free(v->tails);
	free(v->alpha);
	free(v->pool);
	free(v->off);
	free(v);
}

struct sw_vocab *
sw_vocab_share(const struct sw_vocab *v)
{
	struct sw_vocab *s;

	if ((s = malloc(sizeof(*s))) == NULL)
		return NULL;
	*s = *v;
	s->owner = v->owner != NULL ? v->owner : v;
	memset(&s->esc, 0, sizeof(s->esc));
	s->nesc = 0;
	s->err[0] = '\0';
	return s;
}

void
sw_vocab_stats(const struct sw_vocab *v, struct sw_vocab_stats *s)
{
	size_t i;

	s->states = 0;
	for (i = 0; i < v->nda; i++)
		s->states += v->da[i].chk != DA_FREE;
	s->slots = v->nda;
	s->probes = v->probes;
	s->looked = v->looked;
	s->tails = v->ntails;
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

/*
 * sw_escape(), adding to *nesc the characters written as \NNN; (those
 * outside the alphabet; '\\' and '_' are escaped whatever it holds).
 */
static int
escape(const struct sw_vocab *v, const uint8_t *p, size_t n, struct buf *out,
    uint64_t *nesc)
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
		else {
			m = snprintf(num, sizeof(num), "\\%u;", (unsigned)cp);
			(*nesc)++;
		}
		if (sw_put(out, num, (size_t)m) == -1)
			return -1;
	}
	if (sw_put(out, p + i - run, run) == -1)
		return -1;
	return sw_put(out, "_", 1);
}

int
sw_escape(const struct sw_vocab *v, const uint8_t *p, size_t n, struct buf *out)
{
	uint64_t nesc = 0;

	return escape(v, p, n, out, &nesc);
}

static int
put_cp(struct buf *out, uint32_t cp)
{
	uint8_t b[4];

	return sw_put(out, b, (size_t)uni_utf8_encode(cp, b));
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

/*
 * Whether the tail of state st (a tail state: base v->tailbase) follows
 * at e[i..n), then '_' when 'tail' is set; its length in *len.
 */
static inline int
tail_at(const struct sw_vocab *v, uint32_t st, const uint8_t *e, size_t i,
    size_t n, int tail, size_t *len)
{
	const struct tail *t = &v->tails[v->did[st]];
	const uint8_t *r = v->pool + t->off;

	*len = t->len;
	if (t->len <= n - i)
		return memcmp(r, e + i, t->len) == 0;
	return tail && t->len == n - i + 1 && memcmp(r, e + i, n - i) == 0 &&
	    r[n - i] == '_';
}

size_t
sw_vocab_longest(const struct sw_vocab *v, const uint8_t *e, size_t n)
{
	size_t i, end = 0, tl;
	uint32_t st = 0, nx;

	for (i = 0; i < n; i++) {
		nx = v->da[st].base + e[i];
		if ((v->da[nx].chk & ~DA_TERM) != st)
			break;
		st = nx;
		if (v->da[nx].chk & DA_TERM)
			end = i + 1;
	}
	if (v->da[st].base == v->tailbase && tail_at(v, st, e, i, n, 0, &tl))
		end = i + tl;
	return end;
}

/* The error of segment(): e[0..n) (and '_' if tail) has a prefix no entry spells. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static int
unspellable(struct sw_vocab *v, const uint8_t *e, size_t n, int tail)
{
	struct buf b = { 0 };

	if (sw_put(&b, e, n > 80 ? 80 : n) == -1 ||
	    (tail && n < 80 && sw_put(&b, "_", 1) == -1)) {
		free(b.p);
		return -1;
	}
	snprintf(v->err, sizeof(v->err), "corrupt vocabulary: it cannot spell "
	    "the escaped token '%.*s'", (int)b.len, b.p);
	free(b.p);
	errno = EINVAL;
	return -1;
}

/*
 * Greedy longest match over e[0..n), followed by a '_' when 'tail' is
 * set (an escaped token without its terminator), ids appended.  The
 * trie bounds each match by the longest entry, as tensor2tensor's
 * max_subtoken_len does.
 */
static inline int
segment(struct sw_vocab *v, const uint8_t *e, size_t n, int tail,
    int32_t **ids, size_t *nids, size_t *cap)
{
	const struct dslot *da = v->da;
	size_t s = 0, i, end, total = n + (tail != 0);
	uint32_t st, nx, last, chk;
	int32_t *out;

	if (*nids + total > *cap &&
	    sw_grow(ids, cap, *nids + total, sizeof(**ids)) == -1)
		return -1;
	out = *ids + *nids;
	while (s < total) {
		st = 0;
		last = 0;
		end = s;
		for (i = s; i < n; i++) {
			nx = da[st].base + e[i];
			chk = da[nx].chk;
			if ((chk & ~DA_TERM) != st)
				goto matched;
			st = nx;
			/* Without branches: whether a prefix is an entry is data. */
			last = chk & DA_TERM ? nx : last;
			end = chk & DA_TERM ? i + 1 : end;
		}
		if (tail) {
			nx = da[st].base + '_';
			if (da[nx].chk == (st | DA_TERM)) {
				last = nx;
				end = total;
			}
		}
matched:
		if (da[st].base == v->tailbase) {
			size_t tl;

			if (tail_at(v, st, e, i, n, tail, &tl)) {
				*out++ = v->tails[v->did[st]].id;
				s = i + tl;
				continue;
			}
		}
		if (last == 0) {
			*nids = (size_t)(out - *ids);
			return unspellable(v, e, n, tail);
		}
		*out++ = v->did[last];
		s = end;
	}
	*nids = (size_t)(out - *ids);
	return 0;
}

/* A token that needs escaping: escape it, then match. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
encode_escaped(struct sw_vocab *v, const uint8_t *t, size_t n, int32_t **ids,
    size_t *nids, size_t *cap)
{
	v->esc.len = 0;
	if (escape(v, t, n, &v->esc, &v->nesc) == -1)
		return -1;
	return segment(v, v->esc.p, v->esc.len, 0, ids, nids, cap);
}

/* Encode the token t[0..n); 'esc' says whether it needs escaping. */
static inline int
encode_token(struct sw_vocab *v, const uint8_t *t, size_t n, unsigned esc,
    int32_t **ids, size_t *nids, size_t *cap)
{
	if (!(esc & CP_ESC))
		return segment(v, t, n, 1, ids, nids, cap);
	return encode_escaped(v, t, n, ids, nids, cap);
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_SCAN 1
#define B8(c)	((uint64_t)(c) * 0x0101010101010101ULL)

/*
 * Bytes of p[0..8) that are not ASCII letters or digits, 0x80 each
 * (eight at a time: every per-byte sum stays below 0x100).
 */
static inline uint64_t
non_alnum8(const uint8_t *p)
{
	uint64_t w, x, y, digit, letter;

	memcpy(&w, p, 8);
	x = w & B8(0x7F);
	y = x | B8(0x20);
	digit = (x + B8(0x80 - '0')) & ~(x + B8(0x80 - '9' - 1));
	letter = (y + B8(0x80 - 'a')) & ~(y + B8(0x80 - 'z' - 1));
	return ~((digit | letter) & ~w) & B8(0x80);
}
#endif

/* CP_ flags of the code point at p (valid UTF-8); *k its length. */
static inline unsigned
class_at(const struct sw_vocab *v, const uint8_t *p, int *k)
{
	uint32_t cp;

	if (p[0] < 0x80) {
		*k = 1;
		return v->acls[p[0]];
	}
	*k = sw_u8(p, &cp);
	return cp_class(v, cp);
}

/*
 * The tokenizer of sw_tokenize(), fused with encoding: each token is
 * encoded as soon as its end is found, and whether it needs escaping is
 * learnt on the way.
 */
int
sw_encode(struct sw_vocab *v, const uint8_t *p, size_t n, int32_t **ids,
    size_t *nids, size_t *cap)
{
	const uint8_t *acls = v->acls;
	size_t i, start = 0;
	unsigned cls, esc, c;
	int k;

	if (n == 0)
		return 0;
	c = class_at(v, p, &k);
	cls = c & CP_ALNUM;
	esc = c;
	i = (size_t)k;
	for (;;) {
#ifdef SWAR_SCAN
		if (cls == CP_ALNUM && v->alnum_plain) {
			uint64_t stop;

			for (; n - i >= 8; i += 8)
				if ((stop = non_alnum8(p + i)) != 0) {
					i += (size_t)__builtin_ctzll(stop) >> 3;
					break;
				}
		}
#endif
		/* The rest of an ASCII run of the same class, nothing to escape. */
		while (i < n && acls[p[i]] == cls)
			i++;
		if (i >= n)
			break;
		c = class_at(v, p + i, &k);
		if ((c & CP_ALNUM) == cls) {
			esc |= c;
			i += (size_t)k;
			continue;
		}
		if (!(i - start == 1 && p[start] == ' ' && start != 0) &&
		    encode_token(v, p + start, i - start, esc, ids, nids, cap) == -1)
			goto fail;
		start = i;
		cls = c & CP_ALNUM;
		esc = c;
		i += (size_t)k;
	}
	if (encode_token(v, p + start, n - start, esc, ids, nids, cap) == -1)
		goto fail;
	return 0;
fail:
	if (errno == ENOMEM)
		snprintf(v->err, sizeof(v->err), "%s", strerror(errno));
	return -1;
}

const char *
sw_vocab_strerror(const struct sw_vocab *v)
{
	return v->err;
}

uint64_t
sw_encode_escapes(const struct sw_vocab *v)
{
	return v->nesc;
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


/*
 * The tokens of cat[0..upto) (subtokens joined, split at '_'), as
 * sw_decode() writes them; *prev carries the alphanumeric state.
 */
static int
put_tokens(const struct buf *cat, size_t upto, struct buf *tok, int *prev,
    int *open, struct buf *out)
{
	size_t start, end;
	int cur, k;

	for (start = 0; start < upto; start = end + 1) {
		const uint8_t *u = memchr(cat->p + start, '_', upto - start);

		end = u ? (size_t)(u - cat->p) : upto;
		if (end == start && !*open)
			continue;
		tok->len = 0;
		if (sw_unescape(cat->p + start, end - start, tok) == -1)
			return -1;
		if (*open) {
			/* The rest of a token begun: its space was written. */
			*open = 0;
			if (sw_put(out, tok->p, tok->len) == -1)
				return -1;
			continue;
		}
		if (tok->len == 0)
			continue;
		cur = is_alnum_at(tok->p, &k);
		if (*prev && cur && sw_put(out, " ", 1) == -1)
			return -1;
		if (sw_put(out, tok->p, tok->len) == -1)
			return -1;
		*prev = cur;
	}
	return 0;
}

/* Append the subtoken of id 'id' (nothing when out of range). */
static int
put_piece(const struct sw_vocab *v, int64_t id, struct buf *cat)
{
	if (id < 0 || (uint64_t)id >= v->n)
		return 0;
	return sw_put(cat, v->pool + v->off[id], v->off[id + 1] - v->off[id]);
}

/* Decode the held-back run of ids 0 and 1 (a bit each). */
static int
put_held(const struct sw_vocab *v, struct sw_decoder *d)
{
	uint64_t i;

	for (i = 0; i < d->nheld; i++)
		if (put_piece(v, d->held.p[i / 8] >> (i % 8) & 1, &d->cat) == -1)
			return -1;
	d->nheld = 0;
	d->held.len = 0;
	return 0;
}

/*
 * Where sw_unescape() of p[0 .. n) could change with more bytes: at a
 * backslash ending the text or followed by digits up to its end.  n
 * when there is no such place.
 */
static size_t
unescape_final(const uint8_t *p, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		if (p[i] != '\\') {
			i++;
			continue;
		}
		if (i + 1 >= n)
			return i;
		if (p[i + 1] == 'u' || p[i + 1] == '\\') {
			i += 2;
			continue;
		}
		for (j = i + 1; j < n && p[j] >= '0' && p[j] <= '9'; j++)
			;
		if (j > i + 1 && j >= n)
			return i;
		i = j > i + 1 && p[j] == ';' ? j + 1 : i + 1;
	}
	return n;
}

/*
 * A token (no '_' in d->cat) longer than the decoder holds: write what
 * is final of it, its space first when it is the token's beginning.
 * Cuts come at doubled lengths, so an escape that never ends costs
 * linear time.
 */
static int
put_long_token(struct sw_decoder *d, struct buf *out)
{
	size_t hold = d->hold ? d->hold : (size_t)1 << 20, c;
	int cur, k;

	if (d->cat.len <= hold || d->cat.len < 2 * d->tried)
		return 0;
	d->tried = d->cat.len;
	if ((c = unescape_final(d->cat.p, d->cat.len)) == 0)
		return 0;
	d->tok.len = 0;
	if (sw_unescape(d->cat.p, c, &d->tok) == -1)
		return -1;
	if (!d->open) {
		cur = is_alnum_at(d->tok.p, &k);
		if (d->prev && cur && sw_put(out, " ", 1) == -1)
			return -1;
		d->prev = cur;
		d->open = 1;
	}
	if (sw_put(out, d->tok.p, d->tok.len) == -1)
		return -1;
	memmove(d->cat.p, d->cat.p + c, d->cat.len - c);
	d->cat.len -= c;
	d->scanned = d->cat.len;
	d->tried = d->cat.len;
	return 0;
}

int
sw_decode_part(const struct sw_vocab *v, struct sw_decoder *d,
    const int64_t *ids, size_t n, int strip_extraneous, struct buf *out)
{
	const uint8_t *u;
	size_t i, upto;
	uint8_t z = 0;

	for (i = 0; i < n; i++) {
		if (strip_extraneous && (ids[i] == 0 || ids[i] == 1)) {
			/* Perhaps trailing: held until another id comes. */
			if (d->nheld % 8 == 0 && sw_put(&d->held, &z, 1) == -1)
				return -1;
			d->held.p[d->nheld / 8] |= (uint8_t)(ids[i] << (d->nheld % 8));
			d->nheld++;
			continue;
		}
		if (d->nheld > 0 && put_held(v, d) == -1)
			return -1;
		if (put_piece(v, ids[i], &d->cat) == -1)
			return -1;
	}
	/* The tokens ended by a '_' are final (only new bytes can hold one). */
	for (upto = d->cat.len; upto > d->scanned && d->cat.p[upto - 1] != '_';
	    upto--)
		;
	if (upto == d->scanned) {
		d->scanned = d->cat.len;
		return put_long_token(d, out);
	}
	if (put_tokens(&d->cat, upto, &d->tok, &d->prev, &d->open, out) == -1)
		return -1;
	u = d->cat.p + upto;
	memmove(d->cat.p, u, d->cat.len - upto);
	d->cat.len -= upto;
	d->scanned = d->cat.len;
	d->tried = 0;
	return put_long_token(d, out);
}

int
sw_decode_end(const struct sw_vocab *v, struct sw_decoder *d, struct buf *out)
{
	int rc;

	(void)v;
	rc = put_tokens(&d->cat, d->cat.len, &d->tok, &d->prev, &d->open, out);
	rp_buf_free(&d->cat);
	rp_buf_free(&d->tok);
	rp_buf_free(&d->held);
	memset(d, 0, sizeof(*d));
	return rc;
}
