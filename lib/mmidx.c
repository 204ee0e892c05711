/*
 * fairseq and Megatron-LM .bin/.idx datasets.  See mmidx.h.
 */
#define _GNU_SOURCE	/* copy_file_range */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "errmsg.h"
#include "io.h"
#include "mmidx.h"

static const char *dtype_names[MMIDX_NDTYPE] = {
	"uint8", "int8", "int16", "uint16", "int32", "uint32", "int64",
	"uint64", "float32", "float64"
};
static const unsigned char dtype_sizes[MMIDX_NDTYPE] = {
	1, 1, 2, 2, 4, 4, 8, 8, 4, 8
};

/* Code -> dtype, per project; -1 marks a code the project lacks. */
static const signed char fairseq_codes[11] = {
	-1, MMIDX_UINT8, MMIDX_INT8, MMIDX_INT16, MMIDX_INT32, MMIDX_INT64,
	MMIDX_FLOAT64, MMIDX_FLOAT64, MMIDX_UINT16, MMIDX_UINT32, MMIDX_UINT64
};
static const signed char megatron_codes[11] = {
	-1, MMIDX_UINT8, MMIDX_INT8, MMIDX_INT16, MMIDX_INT32, MMIDX_INT64,
	MMIDX_FLOAT64, MMIDX_FLOAT32, MMIDX_UINT16, -1, -1
};

const char *
mmidx_dtype_name(enum mmidx_dtype t)
{
	return (unsigned)t < MMIDX_NDTYPE ? dtype_names[t] : NULL;
}

int
mmidx_dtype_parse(const char *s)
{
	for (int i = 0; i < MMIDX_NDTYPE; i++)
		if (strcmp(s, dtype_names[i]) == 0)
			return i;
	return -1;
}

size_t
mmidx_dtype_size(enum mmidx_dtype t)
{
	return (unsigned)t < MMIDX_NDTYPE ? dtype_sizes[t] : 0;
}

int
mmidx_dtype_is_float(enum mmidx_dtype t)
{
	return t == MMIDX_FLOAT32 || t == MMIDX_FLOAT64;
}

int
mmidx_dtype_code(enum mmidx_layout layout, enum mmidx_dtype t)
{
	const signed char *tab = layout == MMIDX_FAIRSEQ ? fairseq_codes :
	    megatron_codes;

	/* The first code wins: fairseq writes float64 as 6, never 7. */
	for (int c = 1; c <= 10; c++)
		if (tab[c] == (int)t)
			return c;
	return -1;
}

int
mmidx_dtype_from_code(enum mmidx_layout layout, unsigned code)
{
	if (code > 10)
		return -1;
	return layout == MMIDX_FAIRSEQ ? fairseq_codes[code] :
	    megatron_codes[code];
}

enum mmidx_dtype
mmidx_dtype_auto(enum mmidx_layout layout, uint64_t vocab)
{
	if (layout == MMIDX_FAIRSEQ) {
		if (vocab == 0)
			return MMIDX_UINT32;
		if (vocab < 65500)
			return MMIDX_UINT16;
		if (vocab < 4294967295u)
			return MMIDX_UINT32;
		return MMIDX_INT64;
	}
	return vocab != 0 && vocab < 65500 ? MMIDX_UINT16 : MMIDX_INT32;
}

const char *
mmidx_layout_name(enum mmidx_layout layout)
{
	switch (layout) {
	case MMIDX_FAIRSEQ:	return "fairseq";
	case MMIDX_MEGATRON:	return "megatron";
	case MMIDX_MEGATRON_MM:	return "megatron-multimodal";
	default:		return "auto";
	}
}

/* ---- token loads ---- */

static float
f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

static double
f64_of(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof d);
	return d;
}

int64_t
mmidx_load_i64(enum mmidx_dtype t, const uint8_t *p, uint64_t k)
{
	switch (t) {
	case MMIDX_UINT8:	return p[k];
	case MMIDX_INT8:	return (int8_t)p[k];
	case MMIDX_INT16:	return (int16_t)(p[2 * k] | p[2 * k + 1] << 8);
	case MMIDX_UINT16:	return (uint16_t)(p[2 * k] | p[2 * k + 1] << 8);
	case MMIDX_INT32:	return (int32_t)rp_le32(p + 4 * k);
	case MMIDX_UINT32:	return rp_le32(p + 4 * k);
	case MMIDX_INT64:
	case MMIDX_UINT64:	return (int64_t)rp_le64(p + 8 * k);
	case MMIDX_FLOAT32: {
		float f = f32_of(rp_le32(p + 4 * k));
		return f != f ? 0 : f >= 0x1p63f ? INT64_MAX :
		    f < -0x1p63f ? INT64_MIN : (int64_t)f;
	}
	case MMIDX_FLOAT64: {
		double d = f64_of(rp_le64(p + 8 * k));
		return d != d ? 0 : d >= 0x1p63 ? INT64_MAX :
		    d < -0x1p63 ? INT64_MIN : (int64_t)d;
	}
	default:		return 0;
	}
}

void
mmidx_load_i64s(enum mmidx_dtype t, const uint8_t *p, uint64_t n, int64_t *out)
{
	uint64_t k;

	switch (t) {
	case MMIDX_UINT8:
		for (k = 0; k < n; k++)
			out[k] = p[k];
		break;
	case MMIDX_INT8:
		for (k = 0; k < n; k++)
			out[k] = (int8_t)p[k];
		break;
	case MMIDX_UINT16:
		for (k = 0; k < n; k++)
			out[k] = (uint16_t)(p[2 * k] | p[2 * k + 1] << 8);
		break;
	case MMIDX_INT16:
		for (k = 0; k < n; k++)
			out[k] = (int16_t)(p[2 * k] | p[2 * k + 1] << 8);
		break;
	case MMIDX_INT32:
		for (k = 0; k < n; k++)
			out[k] = (int32_t)rp_le32(p + 4 * k);
		break;
	case MMIDX_UINT32:
		for (k = 0; k < n; k++)
			out[k] = rp_le32(p + 4 * k);
		break;
	case MMIDX_INT64:
	case MMIDX_UINT64:
		for (k = 0; k < n; k++)
			out[k] = (int64_t)rp_le64(p + 8 * k);
		break;
	default:
		for (k = 0; k < n; k++)
			out[k] = mmidx_load_i64(t, p, k);
		break;
	}
}

uint64_t
mmidx_load_u64(const uint8_t *p, uint64_t k)
{
	return rp_le64(p + 8 * k);
}

float
mmidx_load_f32(const uint8_t *p, uint64_t k)
{
	return f32_of(rp_le32(p + 4 * k));
}

double
mmidx_load_f64(enum mmidx_dtype t, const uint8_t *p, uint64_t k)
{
	switch (t) {
	case MMIDX_FLOAT32:	return f32_of(rp_le32(p + 4 * k));
	case MMIDX_FLOAT64:	return f64_of(rp_le64(p + 8 * k));
	case MMIDX_UINT64:	return (double)rp_le64(p + 8 * k);
	default:		return (double)mmidx_load_i64(t, p, k);
	}
}

/* ---- reading ---- */

struct mmidx {
	enum mmidx_layout layout;
	enum mmidx_dtype dtype;
	unsigned	 code;
	size_t		 esize;
	uint64_t	 n;		/* sequences */
	uint64_t	 ndoc;		/* document_indices entries */
	const uint8_t	*idx;		/* mapping of the .idx */
	size_t		 idxlen;
	const uint8_t	*sizes, *ptrs, *docs, *modes;
	const uint8_t	*bin;		/* mapping of the .bin; NULL when empty */
	uint64_t	 binlen;
	int		 binfd;
	int		 mapped;	/* idx and bin are our mappings */
	char		*idxpath, *binpath;
	char		 err[512];
};

static char *
join(const char *prefix, const char *ext)
{
	size_t a = strlen(prefix), b = strlen(ext);
	char *s = malloc(a + b + 1);

	if (s != NULL) {
		memcpy(s, prefix, a);
		memcpy(s + a, ext, b + 1);
	}
	return s;
}

static const char *
legacy_magic(const uint8_t *p, size_t n)
{
	if (n >= 8 && memcmp(p, "TNTIDX\0\0", 8) == 0)
		return "a legacy fairseq IndexedDataset index (TNTIDX, "
		    "--dataset-impl lazy/cached), not an mmap index";
	if (n >= 8 && memcmp(p, "HUFFIDX\0", 8) == 0)
		return "a fairseq Huffman-coded dataset index (HUFFIDX), "
		    "not an mmap index";
	return NULL;
}

/*
 * Match the file size against the layouts (spec: fairseq 26 + 12N,
 * Megatron 34 + 12N + 8D, multimodal 34 + 13N + 8D).
 */
static int
detect(struct mmidx *m, enum mmidx_layout want, char *err, size_t errlen)
{
	uint64_t s = m->idxlen, n = m->n, d = 0, fs = 0;
	int fs_ok = 0, have_d = s >= MMIDX_MEGATRON_HDR;

	if (n <= (UINT64_MAX - 64) / 16) {
		fs = MMIDX_FAIRSEQ_HDR + 12 * n;
		fs_ok = 1;
	}
	if (want != MMIDX_MEGATRON && fs_ok && s == fs) {
		m->layout = MMIDX_FAIRSEQ;
		return 0;
	}
	if (want != MMIDX_FAIRSEQ && have_d) {
		uint64_t room = s - MMIDX_MEGATRON_HDR, rest;

		d = rp_le64(m->idx + 26);
		if (n <= room / 12) {
			rest = room - 12 * n;
			if (rest % 8 == 0 && rest / 8 == d)
				m->layout = MMIDX_MEGATRON;
			else if (n <= rest && (rest - n) % 8 == 0 &&
			    (rest - n) / 8 == d)
				m->layout = MMIDX_MEGATRON_MM;
			if (m->layout != MMIDX_AUTO) {
				m->ndoc = d;
				return 0;
			}
		}
	}
	if (!fs_ok) {
		rp_seterr(err, errlen, "%s: corrupt: %ju sequences cannot fit in "
		    "%ju bytes", m->idxpath, (uintmax_t)n, (uintmax_t)s);
		return -1;
	}
	if (s < fs) {
		rp_seterr(err, errlen, "%s: truncated: %ju bytes, but %ju sequences "
		    "need at least 26 + 12 * %ju = %ju", m->idxpath, (uintmax_t)s,
		    (uintmax_t)n, (uintmax_t)n, (uintmax_t)fs);
		return -1;
	}
	if (want == MMIDX_FAIRSEQ) {
		rp_seterr(err, errlen, "%s: not a fairseq index: %ju bytes, expected "
		    "26 + 12 * %ju = %ju (a Megatron index?)", m->idxpath,
		    (uintmax_t)s, (uintmax_t)n, (uintmax_t)fs);
		return -1;
	}
	if (want == MMIDX_MEGATRON) {
		rp_seterr(err, errlen, "%s: not a Megatron index: %ju bytes does not "
		    "match 34 + 12 * %ju + 8 * %ju (+ %ju for modes)",
		    m->idxpath, (uintmax_t)s, (uintmax_t)n, (uintmax_t)d,
		    (uintmax_t)n);
		return -1;
	}
	if (d <= (UINT64_MAX - fs) / 16) {
		rp_seterr(err, errlen, "%s: size %ju matches no layout for %ju "
		    "sequences: fairseq needs %ju, Megatron (D = %ju) %ju: "
		    "truncated, corrupt or trailing bytes", m->idxpath,
		    (uintmax_t)s, (uintmax_t)n, (uintmax_t)fs, (uintmax_t)d,
		    (uintmax_t)(fs + 8 + 8 * d));
		return -1;
	}
	rp_seterr(err, errlen, "%s: size %ju matches no layout for %ju sequences "
	    "(fairseq %ju; Megatron 34 + 12N + 8D with D = %ju): truncated, "
	    "corrupt or trailing bytes", m->idxpath, (uintmax_t)s,
	    (uintmax_t)n, (uintmax_t)fs, (uintmax_t)d);
	return -1;
}

static int
map_file(const char *path, int *fdp, const uint8_t **p, uint64_t *len,
    char *err, size_t errlen)
{
	struct stat st;
	int fd;

	*p = NULL;
	*len = 0;
	*fdp = -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		rp_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		rp_seterr(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rp_seterr(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		rp_seterr(err, errlen, "%s: too large to map", path);
		goto fail;
	}
	*len = (uint64_t)st.st_size;
	if (*len > 0) {
		void *q = mmap(NULL, (size_t)*len, PROT_READ, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED) {
			rp_seterr(err, errlen, "%s: mmap: %s", path, strerror(errno));
			goto fail;
		}
		*p = q;
	}
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

/* Allocate a handle with its file names. */
static struct mmidx *
handle(const char *prefix, char *err, size_t errlen)
{
	struct mmidx *m = calloc(1, sizeof *m);

	if (m != NULL) {
		m->binfd = -1;
		m->idxpath = join(prefix, ".idx");
		m->binpath = join(prefix, ".bin");
		if (m->idxpath != NULL && m->binpath != NULL)
			return m;
		free(m->idxpath);
		free(m->binpath);
		free(m);
	}
	rp_seterr(err, errlen, "%s: %s", prefix, strerror(ENOMEM));
	return NULL;
}

/* Check the header of m->idx and find the arrays. */
static int
parse_idx(struct mmidx *m, enum mmidx_layout layout, char *err, size_t errlen)
{
	const char *why;
	int t;

	if (layout == MMIDX_MEGATRON_MM)
		layout = MMIDX_MEGATRON;
	if ((why = legacy_magic(m->idx, m->idxlen)) != NULL) {
		rp_seterr(err, errlen, "%s: %s", m->idxpath, why);
		return -1;
	}
	if (m->idxlen < 9 || memcmp(m->idx, MMIDX_MAGIC, 9) != 0) {
		if (m->idxlen < 9 && (m->idxlen == 0 ||
		    memcmp(m->idx, MMIDX_MAGIC, m->idxlen) == 0))
			rp_seterr(err, errlen, "%s: truncated header (%zu bytes)",
			    m->idxpath, m->idxlen);
		else
			rp_seterr(err, errlen, "%s: bad magic (not an MMIDIDX index)",
			    m->idxpath);
		return -1;
	}
	if (m->idxlen < MMIDX_FAIRSEQ_HDR) {
		rp_seterr(err, errlen, "%s: truncated header (%zu bytes, need 26)",
		    m->idxpath, m->idxlen);
		return -1;
	}
	if (rp_le64(m->idx + 9) != 1) {
		rp_seterr(err, errlen, "%s: version %ju, expected 1", m->idxpath,
		    (uintmax_t)rp_le64(m->idx + 9));
		return -1;
	}
	m->code = m->idx[17];
	m->n = rp_le64(m->idx + 18);
	if (detect(m, layout, err, errlen) == -1)
		return -1;
	if ((t = mmidx_dtype_from_code(m->layout, m->code)) == -1) {
		if (m->layout != MMIDX_FAIRSEQ && (m->code == 9 || m->code == 10))
			rp_seterr(err, errlen, "%s: dtype code %u is not a Megatron "
			    "type (fairseq %s)", m->idxpath, m->code,
			    m->code == 9 ? "uint32" : "uint64");
		else
			rp_seterr(err, errlen, "%s: invalid dtype code %u",
			    m->idxpath, m->code);
		return -1;
	}
	m->dtype = t;
	m->esize = dtype_sizes[t];
	if (m->layout == MMIDX_FAIRSEQ) {
		m->sizes = m->idx + MMIDX_FAIRSEQ_HDR;
	} else {
		m->sizes = m->idx + MMIDX_MEGATRON_HDR;
		m->docs = m->sizes + 12 * m->n;
		if (m->layout == MMIDX_MEGATRON_MM)
			m->modes = m->docs + 8 * m->ndoc;
		if (m->ndoc == 0) {
			rp_seterr(err, errlen, "%s: empty document_indices (it must "
			    "start with 0)", m->idxpath);
			return -1;
		}
		if (rp_le64(m->docs) != 0) {
			rp_seterr(err, errlen, "%s: document_indices start at %jd, "
			    "not 0", m->idxpath, (intmax_t)rp_le64(m->docs));
			return -1;
		}
		if (rp_le64(m->docs + 8 * (m->ndoc - 1)) != m->n) {
			rp_seterr(err, errlen, "%s: document_indices end at %jd, "
			    "expected the sequence count %ju", m->idxpath,
			    (intmax_t)rp_le64(m->docs + 8 * (m->ndoc - 1)),
			    (uintmax_t)m->n);
			return -1;
		}
	}
	m->ptrs = m->sizes + 4 * m->n;
	return 0;
}

struct mmidx *
mmidx_open(const char *prefix, enum mmidx_layout layout, char *err,
    size_t errlen)
{
	struct mmidx *m;
	uint64_t len;
	int fd;

	if ((m = handle(prefix, err, errlen)) == NULL)
		return NULL;
	m->mapped = 1;
	if (map_file(m->idxpath, &fd, &m->idx, &len, err, errlen) == -1)
		goto fail;
	close(fd);
	m->idxlen = (size_t)len;
	if (parse_idx(m, layout, err, errlen) == -1)
		goto fail;
	if (map_file(m->binpath, &m->binfd, &m->bin, &m->binlen, err,
	    errlen) == -1)
		goto fail;
	return m;
fail:
	mmidx_close(m);
	return NULL;
}

struct mmidx *
mmidx_open_mem(const void *idx, size_t idxlen, const void *bin, size_t binlen,
    const char *name, enum mmidx_layout layout, char *err, size_t errlen)
{
	struct mmidx *m;

	if ((m = handle(name, err, errlen)) == NULL)
		return NULL;
	m->idx = idx;
	m->idxlen = idxlen;
	m->bin = binlen ? bin : NULL;
	m->binlen = binlen;
	if (parse_idx(m, layout, err, errlen) == -1) {
		mmidx_close(m);
		return NULL;
	}
	return m;
}

void
mmidx_close(struct mmidx *m)
{
	if (m == NULL)
		return;
	if (m->mapped && m->idx != NULL)
		munmap((void *)(uintptr_t)m->idx, m->idxlen);
	if (m->mapped && m->bin != NULL)
		munmap((void *)(uintptr_t)m->bin, (size_t)m->binlen);
	if (m->binfd != -1)
		close(m->binfd);
	free(m->idxpath);
	free(m->binpath);
	free(m);
}

enum mmidx_layout mmidx_layout(const struct mmidx *m) { return m->layout; }
enum mmidx_dtype mmidx_dtype(const struct mmidx *m) { return m->dtype; }
unsigned mmidx_code(const struct mmidx *m) { return m->code; }
uint64_t mmidx_count(const struct mmidx *m) { return m->n; }
uint64_t mmidx_bin_size(const struct mmidx *m) { return m->binlen; }
uint64_t mmidx_idx_size(const struct mmidx *m) { return m->idxlen; }
const char *mmidx_bin_path(const struct mmidx *m) { return m->binpath; }
const char *mmidx_idx_path(const struct mmidx *m) { return m->idxpath; }
uint64_t mmidx_doc_count(const struct mmidx *m) { return m->ndoc; }
const char *mmidx_strerror(const struct mmidx *m) { return m->err; }
int mmidx_bin_fd(const struct mmidx *m) { return m->binlen ? m->binfd : -1; }

int32_t
mmidx_raw_size(const struct mmidx *m, uint64_t i)
{
	return (int32_t)rp_le32(m->sizes + 4 * i);
}

void
mmidx_raw_sizes(const struct mmidx *m, uint64_t first, size_t k, int32_t *out)
{
	const uint8_t *p = m->sizes + 4 * first;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, p, k * sizeof *out);
#else
	for (size_t i = 0; i < k; i++)
		out[i] = (int32_t)rp_le32(p + 4 * i);
#endif
}

int64_t
mmidx_raw_pointer(const struct mmidx *m, uint64_t i)
{
	return (int64_t)rp_le64(m->ptrs + 8 * i);
}

int64_t
mmidx_doc_index(const struct mmidx *m, uint64_t i)
{
	return (int64_t)rp_le64(m->docs + 8 * i);
}

int
mmidx_mode(const struct mmidx *m, uint64_t i)
{
	return m->modes != NULL ? (int8_t)m->modes[i] : 0;
}

/* Whether entry i (size, ptr) lies inside the .bin; no message. */
static inline int
entry_fits(const struct mmidx *m, int32_t size, int64_t ptr)
{
	return size >= 0 && ptr >= 0 && (uint64_t)ptr <= m->binlen &&
	    (uint64_t)size * m->esize <= m->binlen - (uint64_t)ptr;
}

static int
entry_fault(struct mmidx *m, uint64_t i, int32_t size, int64_t ptr)
{
	if (size < 0) {
		snprintf(m->err, sizeof m->err, "%s: sequence %ju: negative "
		    "size %d", m->idxpath, (uintmax_t)i, (int)size);
		return -1;
	}
	if (ptr < 0 || (uint64_t)ptr > m->binlen ||
	    (uint64_t)size * m->esize > m->binlen - (uint64_t)ptr) {
		snprintf(m->err, sizeof m->err, "%s: sequence %ju: pointer %jd "
		    "+ %ju bytes runs past the end of %s (%ju bytes)",
		    m->idxpath, (uintmax_t)i, (intmax_t)ptr,
		    (uintmax_t)size * m->esize, m->binpath,
		    (uintmax_t)m->binlen);
		return -1;
	}
	return 0;
}

int
mmidx_seq(struct mmidx *m, uint64_t i, const uint8_t **p, uint64_t *n)
{
	int32_t size;
	int64_t ptr;

	if (i >= m->n) {
		snprintf(m->err, sizeof m->err, "index %ju out of range "
		    "(%ju sequences)", (uintmax_t)i, (uintmax_t)m->n);
		return -1;
	}
	size = mmidx_raw_size(m, i);
	ptr = mmidx_raw_pointer(m, i);
	if (entry_fault(m, i, size, ptr) == -1)
		return -1;
	*n = (uint64_t)size;
	*p = size > 0 ? m->bin + ptr : NULL;
	return 0;
}

size_t
mmidx_seqs(struct mmidx *m, const uint64_t *idx, size_t k,
    struct mmidx_span *out)
{
	size_t j = mmidx_spans(m, idx, k, out);
	const uint8_t *p;
	uint64_t n;

	if (j < k)	/* say what is wrong with the entry that stopped it */
		(void)mmidx_seq(m, idx[j], &p, &n);
	return j;
}

size_t
mmidx_spans(const struct mmidx *m, const uint64_t *idx, size_t k,
    struct mmidx_span *out)
{
	size_t j;

	for (j = 0; j < k; j++) {
		uint64_t i = idx[j];
		int32_t size;
		int64_t ptr;

		if (i >= m->n)
			return j;
		size = (int32_t)rp_le32(m->sizes + 4 * i);
		ptr = (int64_t)rp_le64(m->ptrs + 8 * i);
		if (!entry_fits(m, size, ptr))
			return j;
		out[j].n = (uint64_t)size;
		out[j].p = size > 0 ? m->bin + ptr : NULL;
		if (size > 0)
			__builtin_prefetch(out[j].p);
	}
	return k;
}

void
mmidx_prefetch_entries(const struct mmidx *m, const uint64_t *idx, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (idx[j] < m->n) {
			__builtin_prefetch(m->sizes + 4 * idx[j]);
			__builtin_prefetch(m->ptrs + 8 * idx[j]);
		}
}

void
mmidx_prefetch_entry(const struct mmidx *m, uint64_t i)
{
	if (i < m->n) {
		__builtin_prefetch(m->sizes + 4 * i);
		__builtin_prefetch(m->ptrs + 8 * i);
	}
}

void
mmidx_prefetch_tokens(const struct mmidx *m, uint64_t i)
{
	uint64_t ptr;

	if (i < m->n && (ptr = rp_le64(m->ptrs + 8 * i)) < m->binlen)
		__builtin_prefetch(m->bin + ptr);
}

int
mmidx_verify(struct mmidx *m)
{
	uint64_t at = 0, prev = 0;

	for (uint64_t i = 0; i < m->n; i++) {
		int32_t size = mmidx_raw_size(m, i);
		int64_t ptr = mmidx_raw_pointer(m, i);

		if (entry_fault(m, i, size, ptr) == -1)
			return -1;
		if ((uint64_t)ptr != at) {
			snprintf(m->err, sizeof m->err, "%s: sequence %ju: "
			    "pointer %jd, expected %ju (sequences must follow "
			    "each other in %s)", m->idxpath, (uintmax_t)i,
			    (intmax_t)ptr, (uintmax_t)at, m->binpath);
			return -1;
		}
		at += (uint64_t)size * m->esize;
	}
	if (at != m->binlen) {
		snprintf(m->err, sizeof m->err, "%s: %ju bytes, but the index "
		    "accounts for %ju", m->binpath, (uintmax_t)m->binlen,
		    (uintmax_t)at);
		return -1;
	}
	for (uint64_t j = 0; j < m->ndoc; j++) {
		uint64_t d = rp_le64(m->docs + 8 * j);

		if (d < prev || d > m->n) {
			snprintf(m->err, sizeof m->err, "%s: document_indices[%ju] "
			    "= %jd %s", m->idxpath, (uintmax_t)j, (intmax_t)d,
			    d > m->n ? "exceeds the sequence count" :
			    "is smaller than the one before");
			return -1;
		}
		prev = d;
	}
	return 0;
}

/* ---- index lines ---- */

enum { LN_DIGITS, LN_TRAIL, LN_BAD, LN_STOPPED };

void
mmidx_lines_init(struct mmidx_lines *L)
{
	memset(L, 0, sizeof *L);
}

/* One byte of a line (not its newline), the slow way. */
static void
lines_byte(struct mmidx_lines *L, unsigned char c)
{
	if (L->len < MMIDX_LINE_HEAD)
		L->head[L->len] = (char)c;
	L->len++;
	if (c == ' ' || c == '\r') {
		if (L->state == LN_DIGITS)
			L->state = LN_TRAIL;
		return;
	}
	L->keep = L->len;
	if (c < '0' || c > '9' || L->state != LN_DIGITS ||
	    L->v > (UINT64_MAX - 9) / 10)
		L->state = LN_BAD;
	else
		L->v = L->v * 10 + (c - '0');
}

/* The open line has ended: 1 good (*v), -1 bad; a new line opens. */
static int
lines_close(struct mmidx_lines *L, uint64_t *v)
{
	int good = L->state != LN_BAD && L->keep > 0;

	L->lineno++;
	if (!good) {
		L->state = LN_STOPPED;
		return -1;
	}
	*v = L->v;
	L->v = 0;
	L->len = L->keep = 0;
	L->state = LN_DIGITS;
	return 1;
}

size_t
mmidx_lines_parse(struct mmidx_lines *L, const char *p, size_t n,
    size_t *used, uint64_t *out, size_t max)
{
	const unsigned char *q = (const unsigned char *)p, *end = q + n;
	size_t k = 0;

	while (k < max && q < end && L->state != LN_STOPPED) {
		/*
		 * The usual line, whole in the block: up to 19 digits (which
		 * cannot overflow) and a newline.
		 */
		if (L->len == 0 && end - q > 20) {
			const unsigned char *s = q;
			uint64_t x = 0;

			while ((unsigned)(*s - '0') < 10 && s - q < 19)
				x = x * 10 + (uint64_t)(*s++ - '0');
			if (*s == '\n' && s > q) {
				out[k++] = x;
				L->lineno++;
				q = s + 1;
				continue;
			}
		}
		for (; q < end; q++) {
			if (*q == '\n') {
				q++;
				if (lines_close(L, &out[k]) == 1)
					k++;
				break;
			}
			lines_byte(L, *q);
		}
	}
	*used = (size_t)((const char *)q - p);
	return k;
}

int
mmidx_lines_end(struct mmidx_lines *L, uint64_t *v)
{
	if (L->state == LN_STOPPED)
		return -1;
	if (L->len == 0)
		return 0;
	return lines_close(L, v);
}

int
mmidx_lines_bad(const struct mmidx_lines *L, const char **text, size_t *len)
{
	if (L->state != LN_STOPPED)
		return 0;
	*text = L->head;
	*len = L->keep < MMIDX_LINE_HEAD ? L->keep : MMIDX_LINE_HEAD;
	return 1;
}

/* ---- writing ---- */

#define OBUF_SIZE	(1u << 20)

struct mmidx_builder {
	enum mmidx_layout layout;
	enum mmidx_dtype dtype;
	unsigned	 flags;
	size_t		 esize;
	int		 fd;
	int		 done;
	uint8_t		*obuf;
	size_t		 olen;
	int32_t		*sizes;
	uint64_t	 n, cap;
	uint64_t	*docs;		/* document_indices unless MMIDX_DOC_EACH */
	uint64_t	 ndoc, doccap;
	int8_t		*modes;
	uint64_t	 modecap;
	int		 mode;
	uint64_t	 tokens;
	uint64_t	 vocab;		/* tokens must be below it; 0: no limit */
	size_t		 bad;
	size_t		 badseq;	/* mmidx_add_packed(): the sequence at fault */
	/* a sequence added in parts, for MMIDX_FAIRSEQ_IDS */
	uint64_t	 part_n, part_pad;
	int64_t		 part_last;
	char		 err[512];
};


static int
berr(struct mmidx_builder *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, sizeof b->err, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * MMIDX_FAIRSEQ_IDS: what fairseq-preprocess writes.  It encodes every
 * line through a Dictionary and appends </s> (2); it never writes
 * <pad> (1) inside a sentence.  A sequence that breaks either rule is
 * raw ids of another convention (tensor2tensor ends with 1): collated
 * by fairseq, its end of sentence would vanish into padding.
 */
#define FSQ_PAD	1
#define FSQ_EOS	2
#define FSQ_HINT "these are not ids that fairseq-preprocess writes " \
	"(tensor2tensor's end of sentence is 1); binarize through a fairseq " \
	"dictionary (mmap-index dict, then build --input-format text --dict), " \
	"or give --raw-ids if these are the ids you mean"

static int
fsq_fault(struct mmidx_builder *b, uint64_t n, uint64_t pad, int64_t last)
{
	if (pad + 1 == n) {
		b->bad = (size_t)pad;
		return berr(b, "the sequence ends in 1, fairseq's <pad>, not </s> "
		    "(2): " FSQ_HINT);
	}
	if (pad < n) {
		b->bad = (size_t)pad;
		return berr(b, "token %ju is 1, fairseq's <pad>: " FSQ_HINT,
		    (uintmax_t)pad);
	}
	if (n == 0)
		return berr(b, "an empty sequence, without the </s> (2) that "
		    "ends every sentence: " FSQ_HINT);
	return berr(b, "the sequence ends in %jd, not </s> (2): " FSQ_HINT,
	    (intmax_t)last);
}

/* The rule over n int64 tokens: 0, or -1 with the message. */
static int
fsq_check_i64(struct mmidx_builder *b, const int64_t *v, size_t n)
{
	size_t j;

	if (!(b->flags & MMIDX_FAIRSEQ_IDS))
		return 0;
	for (j = 0; j < n; j++)
		if (v[j] == FSQ_PAD)
			return fsq_fault(b, n, j, 0);
	if (n == 0 || v[n - 1] != FSQ_EOS)
		return fsq_fault(b, n, n, n ? v[n - 1] : 0);
	return 0;
}

/*
 * Whether n packed tokens hold a 1: a pass without branches (it
 * vectorizes) over the common types, the general reader otherwise.
 */
static int
has_pad(enum mmidx_dtype t, const uint8_t *p, size_t n)
{
	unsigned hit = 0;
	size_t j;

	switch (t) {
	case MMIDX_UINT16:
	case MMIDX_INT16:
		for (j = 0; j < n; j++)
			hit |= (p[2 * j] == 1) & (p[2 * j + 1] == 0);
		return hit != 0;
	case MMIDX_INT32:
	case MMIDX_UINT32:
		for (j = 0; j < n; j++)
			hit |= rp_le32(p + 4 * j) == 1;
		return hit != 0;
	default:
		for (j = 0; j < n; j++)
			if (mmidx_load_i64(t, p, j) == FSQ_PAD)
				return 1;
		return 0;
	}
}

/*
 * The same over n packed tokens; with parts, the tokens continue the
 * sequence begun in b->part_* (end: they end it).
 */
static int
fsq_check_packed(struct mmidx_builder *b, const uint8_t *p, size_t n,
    int parts, int end)
{
	uint64_t at = parts ? b->part_n : 0;
	int64_t last = parts ? b->part_last : 0;
	size_t j;

	if (!(b->flags & MMIDX_FAIRSEQ_IDS) || mmidx_dtype_is_float(b->dtype))
		return 0;
	if (n > 0 && has_pad(b->dtype, p, n))
		for (j = 0; j < n; j++)
			if (mmidx_load_i64(b->dtype, p, j) == FSQ_PAD)
				return fsq_fault(b, parts ? UINT64_MAX : at + n,
				    at + j, 0);
	if (n > 0)
		last = mmidx_load_i64(b->dtype, p, n - 1);
	if (parts) {
		b->part_n = at + n;
		b->part_last = last;
	}
	if (end && (at + n == 0 || last != FSQ_EOS))
		return fsq_fault(b, at + n, at + n, last);
	return 0;
}

static int
bflush(struct mmidx_builder *b)
{
	if (b->olen > 0 && rp_write_full(b->fd, b->obuf, b->olen) == -1)
		return berr(b, "%s", strerror(errno));
	b->olen = 0;
	return 0;
}

/* Grow an array to hold 'need' elements of 'size' bytes. */
static int
grow(void **p, uint64_t *cap, uint64_t need, size_t size)
{
	uint64_t c = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (c > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	if ((q = realloc(*p, (size_t)c * size)) == NULL)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

struct mmidx_builder *
mmidx_builder_new(int binfd, enum mmidx_layout layout, enum mmidx_dtype t,
    unsigned flags, char *err, size_t errlen)
{
	struct mmidx_builder *b;

	if (layout == MMIDX_AUTO)
		layout = MMIDX_FAIRSEQ;
	if ((unsigned)t >= MMIDX_NDTYPE || mmidx_dtype_code(layout, t) == -1) {
		rp_seterr(err, errlen, "%s cannot store %s", layout == MMIDX_FAIRSEQ ?
		    "fairseq" : "Megatron", mmidx_dtype_name(t) ?
		    mmidx_dtype_name(t) : "this dtype");
		return NULL;
	}
	if ((b = calloc(1, sizeof *b)) == NULL ||
	    (b->obuf = malloc(OBUF_SIZE)) == NULL) {
		rp_seterr(err, errlen, "%s", strerror(ENOMEM));
		free(b);
		return NULL;
	}
	b->layout = layout;
	b->dtype = t;
	b->flags = flags;
	b->esize = dtype_sizes[t];
	b->fd = binfd;
	if (layout != MMIDX_FAIRSEQ && !(flags & MMIDX_DOC_EACH)) {
		if (grow((void **)&b->docs, &b->doccap, 1, sizeof *b->docs) == -1) {
			rp_seterr(err, errlen, "%s", strerror(errno));
			mmidx_builder_free(b);
			return NULL;
		}
		b->docs[b->ndoc++] = 0;
	}
	return b;
}

void
mmidx_builder_free(struct mmidx_builder *b)
{
	if (b == NULL)
		return;
	free(b->obuf);
	free(b->sizes);
	free(b->docs);
	free(b->modes);
	free(b);
}

uint64_t mmidx_builder_count(const struct mmidx_builder *b) { return b->n; }
enum mmidx_dtype mmidx_builder_dtype(const struct mmidx_builder *b) { return b->dtype; }
uint64_t mmidx_builder_tokens(const struct mmidx_builder *b) { return b->tokens; }
const char *mmidx_builder_strerror(const struct mmidx_builder *b) { return b->err; }
size_t mmidx_builder_bad_token(const struct mmidx_builder *b) { return b->bad; }
void mmidx_set_mode(struct mmidx_builder *b, int mode) { b->mode = mode; }

/* Record one more sequence of n tokens (after its bytes went out). */
static inline int
push_size(struct mmidx_builder *b, uint64_t n)
{
	if (b->n == b->cap &&
	    grow((void **)&b->sizes, &b->cap, b->n + 1, sizeof *b->sizes) == -1)
		return berr(b, "%s", strerror(errno));
	if (b->layout == MMIDX_MEGATRON_MM) {
		if (grow((void **)&b->modes, &b->modecap, b->n + 1, 1) == -1)
			return berr(b, "%s", strerror(errno));
		b->modes[b->n] = (int8_t)b->mode;
		b->mode = 0;
	}
	b->sizes[b->n++] = (int32_t)n;
	b->tokens += n;
	if ((b->flags & MMIDX_DOC_EACH) && b->docs != NULL)
		return mmidx_end_document(b);
	return 0;
}

static int
check_len(struct mmidx_builder *b, size_t n)
{
	if (b->done)
		return berr(b, "dataset already finished");
	if (n > MMIDX_MAX_SEQ)
		return berr(b, "sequence of %zu tokens: longer than the int32 "
		    "sizes of the index allow", n);
	return 0;
}

static const int64_t int_lo[MMIDX_NDTYPE] = {
	0, INT8_MIN, INT16_MIN, 0, INT32_MIN, 0, INT64_MIN, 0, 0, 0
};
static const int64_t int_hi[MMIDX_NDTYPE] = {
	UINT8_MAX, INT8_MAX, INT16_MAX, UINT16_MAX, INT32_MAX, UINT32_MAX,
	INT64_MAX, INT64_MAX, 0, 0
};

/* Convert k integer tokens into q (room for k elements). */
static void
put_ints(enum mmidx_dtype t, uint8_t *q, const int64_t *v, size_t k)
{
	size_t j;

	switch (t) {
	case MMIDX_UINT8:
	case MMIDX_INT8:
		for (j = 0; j < k; j++)
			q[j] = (uint8_t)v[j];
		break;
	case MMIDX_INT16:
	case MMIDX_UINT16:
		for (j = 0; j < k; j++) {
			uint16_t u = (uint16_t)v[j];
			q[2 * j] = (uint8_t)u;
			q[2 * j + 1] = (uint8_t)(u >> 8);
		}
		break;
	case MMIDX_INT32:
	case MMIDX_UINT32:
		for (j = 0; j < k; j++)
			rp_put_le32(q + 4 * j, (uint32_t)v[j]);
		break;
	case MMIDX_INT64:
	case MMIDX_UINT64:
		for (j = 0; j < k; j++)
			rp_put_le64(q + 8 * j, (uint64_t)v[j]);
		break;
	case MMIDX_FLOAT32:
		for (j = 0; j < k; j++) {
			float f = (float)v[j];
			uint32_t u;
			memcpy(&u, &f, 4);
			rp_put_le32(q + 4 * j, u);
		}
		break;
	case MMIDX_FLOAT64:
		for (j = 0; j < k; j++) {
			double d = (double)v[j];
			uint64_t u;
			memcpy(&u, &d, 8);
			rp_put_le64(q + 8 * j, u);
		}
		break;
	default:
		break;
	}
}

/*
 * Store n uint16 or int32 tokens at q, range-checked as they are
 * stored.  Returns 0 when all fit, 1 when one does not (q then holds
 * garbage), -1 for the other types (nothing stored).
 */
static inline int
store_checked(enum mmidx_dtype t, uint8_t *q, const int64_t *v, size_t n)
{
	uint64_t bad = 0;
	size_t j;

	switch (t) {
	case MMIDX_UINT16:
		for (j = 0; j < n; j++) {
			bad |= (uint64_t)v[j] >> 16;
			q[2 * j] = (uint8_t)v[j];
			q[2 * j + 1] = (uint8_t)(v[j] >> 8);
		}
		break;
	case MMIDX_INT32:
		for (j = 0; j < n; j++) {
			bad |= ((uint64_t)v[j] + 0x80000000u) >> 32;
			rp_put_le32(q + 4 * j, (uint32_t)v[j]);
		}
		break;
	default:
		return -1;
	}
	return bad != 0;
}

/*
 * The common case in one pass: n uint16 or int32 tokens that fit the
 * buffer, range-checked as they are stored.  Returns 0 when done, -1
 * when the caller must take the general path (nothing is kept then).
 */
static inline int
add_fast(struct mmidx_builder *b, const int64_t *v, size_t n)
{
	if (n * b->esize > OBUF_SIZE - b->olen || (b->flags & MMIDX_WRAP) ||
	    store_checked(b->dtype, b->obuf + b->olen, v, n) != 0)
		return -1;
	b->olen += n * b->esize;
	return 0;
}

/*
 * The first of n tokens that does not fit t (unless 'flags' has
 * MMIDX_WRAP; floats take every value): its position, or n.
 */
static size_t
find_misfit(enum mmidx_dtype t, unsigned flags, const int64_t *v, size_t n)
{
	int64_t lo = int_lo[t], hi = int_hi[t];
	size_t j;

	if ((flags & MMIDX_WRAP) || mmidx_dtype_is_float(t))
		return n;
	for (j = 0; j < n; j++)
		if (v[j] < lo || v[j] > hi)
			break;
	return j;
}

static void
misfit_msg(char *err, size_t errlen, enum mmidx_dtype t, int64_t v)
{
	rp_seterr(err, errlen, "token %jd does not fit %s (--wrap wraps it as "
	    "upstream does)", (intmax_t)v, dtype_names[t]);
}

void
mmidx_builder_set_vocab(struct mmidx_builder *b, uint64_t vocab)
{
	b->vocab = vocab;
}

/* The first of n tokens outside [0, vocab), or n (none, or no limit). */
static size_t
find_outside(uint64_t vocab, unsigned flags, const int64_t *v, size_t n)
{
	size_t j;

	if (vocab == 0 || (flags & MMIDX_WRAP))
		return n;
	for (j = 0; j < n; j++)
		if ((uint64_t)v[j] >= vocab)
			break;
	return j;
}

static void
outside_msg(char *err, size_t errlen, uint64_t vocab, int64_t v)
{
	rp_seterr(err, errlen, "token %jd is outside the vocabulary of %ju "
	    "(--vocab-size)", (intmax_t)v, (uintmax_t)vocab);
}

int
mmidx_add_i64(struct mmidx_builder *b, const int64_t *v, size_t n)
{
	enum mmidx_dtype t = b->dtype;
	size_t j;

	if (check_len(b, n) == -1)
		return -1;
	if ((j = find_outside(b->vocab, b->flags, v, n)) < n) {
		b->bad = j;
		outside_msg(b->err, sizeof b->err, b->vocab, v[j]);
		return -1;
	}
	if ((b->flags & MMIDX_FAIRSEQ_IDS) && fsq_check_i64(b, v, n) == -1) {
		/* a token that does not fit is the first thing to say */
		if ((j = find_misfit(t, b->flags, v, n)) < n) {
			b->bad = j;
			misfit_msg(b->err, sizeof b->err, t, v[j]);
		}
		return -1;
	}
	if (add_fast(b, v, n) == 0)
		return push_size(b, n);
	if ((j = find_misfit(t, b->flags, v, n)) < n) {
		b->bad = j;
		misfit_msg(b->err, sizeof b->err, t, v[j]);
		return -1;
	}
	if (n * b->esize <= OBUF_SIZE - b->olen) {
		/* The common case: the whole sequence fits the buffer. */
		put_ints(t, b->obuf + b->olen, v, n);
		b->olen += n * b->esize;
		return push_size(b, n);
	}
	for (j = 0; j < n; ) {
		size_t k = n - j, free_ = (OBUF_SIZE - b->olen) / b->esize;

		if (free_ == 0) {
			if (bflush(b) == -1)
				return -1;
			free_ = OBUF_SIZE / b->esize;
		}
		if (k > free_)
			k = free_;
		put_ints(t, b->obuf + b->olen, v + j, k);
		b->olen += k * b->esize;
		j += k;
	}
	return push_size(b, n);
}

int
mmidx_pack_i64(const struct mmidx_builder *b, const int64_t *v, size_t n,
    uint8_t *out, size_t *bad, char *err, size_t errlen)
{
	enum mmidx_dtype t = b->dtype;
	int over;
	size_t j;

	if (n > MMIDX_MAX_SEQ) {
		rp_seterr(err, errlen, "sequence of %zu tokens: longer than the "
		    "int32 sizes of the index allow", n);
		return -1;
	}
	if ((j = find_outside(b->vocab, b->flags, v, n)) < n) {
		*bad = j;
		outside_msg(err, errlen, b->vocab, v[j]);
		return -1;
	}
	if (b->flags & MMIDX_WRAP) {
		put_ints(t, out, v, n);
		return 0;
	}
	if ((over = store_checked(t, out, v, n)) == -1) {
		over = find_misfit(t, b->flags, v, n) < n;
		if (!over)
			put_ints(t, out, v, n);
	}
	if (over) {
		j = find_misfit(t, b->flags, v, n);
		*bad = j;
		misfit_msg(err, errlen, t, v[j]);
		return -1;
	}
	return 0;
}

int
mmidx_add_packed(struct mmidx_builder *b, const uint8_t *p,
    const uint32_t *sizes, size_t k)
{
	uint64_t bytes = 0;
	size_t i;
	int fault = 0;

	b->badseq = 0;
	if (b->done)
		return berr(b, "dataset already finished");
	for (i = 0; i < k; i++) {
		if (fsq_check_packed(b, p + bytes * b->esize, sizes[i], 0, 1) == -1) {
			/* those before it are added */
			b->badseq = i;
			k = i;
			fault = 1;
			break;
		}
		bytes += sizes[i];
	}
	bytes *= b->esize;
	if (bytes > OBUF_SIZE - b->olen) {
		if (bflush(b) == -1)
			return -1;
		/* A large batch goes out as it is, a small one is kept. */
		if (bytes >= OBUF_SIZE / 2) {
			if (rp_write_full(b->fd, p, (size_t)bytes) == -1)
				return berr(b, "%s", strerror(errno));
			bytes = 0;
		}
	}
	if (bytes > 0) {
		memcpy(b->obuf + b->olen, p, (size_t)bytes);
		b->olen += (size_t)bytes;
	}
	if (k > 0 && grow((void **)&b->sizes, &b->cap, b->n + k,
	    sizeof *b->sizes) == -1)
		return berr(b, "%s", strerror(errno));
	for (i = 0; i < k; i++)
		if (push_size(b, sizes[i]) == -1)
			return -1;
	return fault ? -1 : 0;
}

size_t mmidx_builder_bad_seq(const struct mmidx_builder *b) { return b->badseq; }

int
mmidx_add_part(struct mmidx_builder *b, const uint8_t *p, size_t ntok)
{
	size_t bytes = ntok * b->esize;

	if (b->done)
		return berr(b, "dataset already finished");
	if (fsq_check_packed(b, p, ntok, 1, 0) == -1)
		return -1;
	if (bytes > OBUF_SIZE - b->olen) {
		if (bflush(b) == -1)
			return -1;
		if (bytes >= OBUF_SIZE / 2) {
			if (rp_write_full(b->fd, p, bytes) == -1)
				return berr(b, "%s", strerror(errno));
			return 0;
		}
	}
	memcpy(b->obuf + b->olen, p, bytes);
	b->olen += bytes;
	return 0;
}

int
mmidx_end_parts(struct mmidx_builder *b, uint64_t ntok)
{
	if (check_len(b, ntok > SIZE_MAX ? SIZE_MAX : (size_t)ntok) == -1)
		return -1;
	if (fsq_check_packed(b, NULL, 0, 1, 1) == -1)
		return -1;
	b->part_n = 0;
	b->part_last = 0;
	return push_size(b, ntok);
}

/* Floats: only for float dtypes.  'get' yields value j as a double. */
static int
add_floats(struct mmidx_builder *b, const float *vf, const double *vd,
    size_t n)
{
	size_t j;

	if (check_len(b, n) == -1)
		return -1;
	if (!mmidx_dtype_is_float(b->dtype))
		return berr(b, "float values need a float dtype, not %s",
		    dtype_names[b->dtype]);
	if (b->dtype == MMIDX_FLOAT32 && vd != NULL && !(b->flags & MMIDX_WRAP))
		for (j = 0; j < n; j++)
			if (vd[j] == vd[j] && (vd[j] > FLT_MAX || vd[j] < -FLT_MAX) &&
			    vd[j] != 1.0 / 0.0 && vd[j] != -1.0 / 0.0) {
				b->bad = j;
				return berr(b, "value %g does not fit float32", vd[j]);
			}
	for (j = 0; j < n; j++) {
		double d = vd != NULL ? vd[j] : vf[j];

		if (OBUF_SIZE - b->olen < 8 && bflush(b) == -1)
			return -1;
		if (b->dtype == MMIDX_FLOAT32) {
			float f = (float)d;
			uint32_t u;
			memcpy(&u, &f, 4);
			rp_put_le32(b->obuf + b->olen, u);
		} else {
			uint64_t u;
			memcpy(&u, &d, 8);
			rp_put_le64(b->obuf + b->olen, u);
		}
		b->olen += b->esize;
	}
	return push_size(b, n);
}

int
mmidx_add_u64(struct mmidx_builder *b, const uint64_t *v, size_t n)
{
	unsigned flags = b->flags;
	int rc;

	if (b->dtype != MMIDX_UINT64 && !(flags & MMIDX_WRAP))
		for (size_t j = 0; j < n; j++)
			if (v[j] > INT64_MAX) {
				b->bad = j;
				return berr(b, "token %ju does not fit %s "
				    "(--wrap wraps it as upstream does)",
				    (uintmax_t)v[j], dtype_names[b->dtype]);
			}
	/* Every value fits uint64; the bits are stored as they are. */
	if (b->dtype == MMIDX_UINT64)
		b->flags |= MMIDX_WRAP;
	rc = mmidx_add_i64(b, (const int64_t *)v, n);
	b->flags = flags;
	return rc;
}

int
mmidx_builder_range(struct mmidx_builder *b, int64_t *min, int64_t *max)
{
	uint64_t left = b->tokens * 8;
	off_t end, at;
	uint8_t *buf;
	int64_t lo = 0, hi = 0;

	if (b->dtype != MMIDX_INT64)
		return berr(b, "range of a dataset not stored as int64");
	if (bflush(b) == -1)
		return -1;
	if ((end = lseek(b->fd, 0, SEEK_CUR)) == -1)
		return berr(b, "%s", strerror(errno));
	at = end - (off_t)left;
	if ((buf = malloc(OBUF_SIZE)) == NULL)
		return berr(b, "%s", strerror(errno));
	if (left > 0) {
		lo = INT64_MAX;
		hi = INT64_MIN;
	}
	while (left > 0) {
		size_t k = left < OBUF_SIZE ? (size_t)left : OBUF_SIZE;
		ssize_t got = pread(b->fd, buf, k, at);

		if (got < 8) {
			if (got >= 0)
				errno = EIO;
			free(buf);
			return berr(b, "%s", strerror(errno));
		}
		/* whole tokens; a short read goes on from the last one */
		k = (size_t)got - (size_t)got % 8;
		for (size_t j = 0; j < k; j += 8) {
			int64_t x = (int64_t)rp_le64(buf + j);

			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		at += (off_t)k;
		left -= k;
	}
	free(buf);
	*min = lo;
	*max = hi;
	return 0;
}

int
mmidx_builder_narrow(struct mmidx_builder *b, enum mmidx_dtype t)
{
	uint64_t left = b->tokens * 8;
	size_t es = dtype_sizes[t];
	off_t end, rd, wr;
	uint8_t *buf;

	if (b->dtype != MMIDX_INT64 || mmidx_dtype_is_float(t))
		return berr(b, "narrowing needs int64 tokens and an integer type");
	if (mmidx_dtype_code(b->layout, t) == -1)
		return berr(b, "%s cannot store %s", b->layout == MMIDX_FAIRSEQ ?
		    "fairseq" : "Megatron", dtype_names[t]);
	if (bflush(b) == -1)
		return -1;
	if (t == MMIDX_INT64)
		return 0;
	if ((end = lseek(b->fd, 0, SEEK_CUR)) == -1)
		return berr(b, "%s", strerror(errno));
	rd = wr = end - (off_t)left;
	if ((buf = malloc(OBUF_SIZE)) == NULL)
		return berr(b, "%s", strerror(errno));
	/* Forward in place: the narrow copy never passes what is read. */
	while (left > 0) {
		size_t k = left < OBUF_SIZE ? (size_t)left : OBUF_SIZE, m;
		ssize_t got = pread(b->fd, buf, k, rd);

		if (got < 8) {
			free(buf);
			if (got >= 0)
				errno = EIO;
			return berr(b, "%s", strerror(errno));
		}
		k = (size_t)got - (size_t)got % 8;
		m = k / 8;
		for (size_t j = 0; j < m; j++) {
			int64_t x = (int64_t)rp_le64(buf + 8 * j);

			if (x < int_lo[t] || x > int_hi[t]) {
				free(buf);
				return berr(b, "token %jd does not fit %s",
				    (intmax_t)x, dtype_names[t]);
			}
			put_ints(t, buf + es * j, &x, 1);
		}
		if (rp_pwrite_full(b->fd, buf, m * es, wr) == -1) {
			free(buf);
			return berr(b, "%s", strerror(errno));
		}
		rd += (off_t)k;
		wr += (off_t)(m * es);
		left -= k;
	}
	free(buf);
	if (ftruncate(b->fd, wr) == -1 || lseek(b->fd, wr, SEEK_SET) == -1)
		return berr(b, "%s", strerror(errno));
	b->dtype = t;
	b->esize = es;
	return 0;
}

int
mmidx_add_f32(struct mmidx_builder *b, const float *v, size_t n)
{
	return add_floats(b, v, NULL, n);
}

int
mmidx_add_f64(struct mmidx_builder *b, const double *v, size_t n)
{
	return add_floats(b, NULL, v, n);
}

int
mmidx_end_document(struct mmidx_builder *b)
{
	if (b->docs == NULL)
		return 0;
	if (grow((void **)&b->docs, &b->doccap, b->ndoc + 1, sizeof *b->docs) == -1)
		return berr(b, "%s", strerror(errno));
	b->docs[b->ndoc++] = b->n;
	return 0;
}

void
mmidx_docs_each_unless_ended(struct mmidx_builder *b)
{
	if (b->docs == NULL || b->ndoc > 1)
		return;
	free(b->docs);
	b->docs = NULL;
	b->ndoc = b->doccap = 0;
	b->flags |= MMIDX_DOC_EACH;
}

int
mmidx_doc_open(const struct mmidx_builder *b)
{
	return b->docs != NULL && b->docs[b->ndoc - 1] != b->n;
}

/* Copy the whole .bin of src to the builder's descriptor. */
static int
copy_bin(struct mmidx_builder *b, struct mmidx *src)
{
	uint64_t left = src->binlen;
	off_t off = 0;

	if (left == 0)
		return 0;
	while (left > 0) {
		size_t chunk = left > (1u << 30) ? (1u << 30) : (size_t)left;
		ssize_t w;

		if (src->binfd == -1)
			break;
		w = copy_file_range(src->binfd, &off, b->fd, NULL, chunk, 0);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		left -= (uint64_t)w;
	}
	if (left == 0)
		return 0;
	/* Not supported here (or no progress): write from the mapping. */
	if (rp_write_full(b->fd, src->bin + (src->binlen - left),
	    (size_t)left) == -1)
		return berr(b, "%s", strerror(errno));
	return 0;
}

int
mmidx_append(struct mmidx_builder *b, struct mmidx *src)
{
	uint64_t base = b->n;

	if (b->done)
		return berr(b, "dataset already finished");
	if ((b->layout == MMIDX_FAIRSEQ) != (src->layout == MMIDX_FAIRSEQ) ||
	    (b->layout == MMIDX_MEGATRON_MM) != (src->layout == MMIDX_MEGATRON_MM))
		return berr(b, "%s: layout %s, but the output is %s",
		    src->idxpath, mmidx_layout_name(src->layout),
		    mmidx_layout_name(b->layout));
	if (src->dtype != b->dtype)
		return berr(b, "%s: dtype %s, but the output is %s", src->idxpath,
		    dtype_names[src->dtype], dtype_names[b->dtype]);
	if (mmidx_doc_open(b))
		return berr(b, "a document is still open");
	if (mmidx_verify(src) == -1)
		return berr(b, "%s", src->err);
	if (b->layout != MMIDX_FAIRSEQ && b->docs == NULL) {
		/* One document per sequence so far: spell them out. */
		if (grow((void **)&b->docs, &b->doccap, b->n + 1,
		    sizeof *b->docs) == -1)
			return berr(b, "%s", strerror(errno));
		for (b->ndoc = 0; b->ndoc <= b->n; b->ndoc++)
			b->docs[b->ndoc] = b->ndoc;
	}
	if (bflush(b) == -1 || copy_bin(b, src) == -1)
		return -1;
	if (grow((void **)&b->sizes, &b->cap, b->n + src->n, sizeof *b->sizes) == -1)
		return berr(b, "%s", strerror(errno));
	if (b->layout == MMIDX_MEGATRON_MM &&
	    grow((void **)&b->modes, &b->modecap, b->n + src->n, 1) == -1)
		return berr(b, "%s", strerror(errno));
	for (uint64_t i = 0; i < src->n; i++) {
		b->sizes[b->n + i] = mmidx_raw_size(src, i);
		b->tokens += (uint64_t)b->sizes[b->n + i];
		if (b->modes != NULL)
			b->modes[b->n + i] = (int8_t)src->modes[i];
	}
	b->n += src->n;
	if (b->docs != NULL) {
		if (grow((void **)&b->docs, &b->doccap, b->ndoc + src->ndoc,
		    sizeof *b->docs) == -1)
			return berr(b, "%s", strerror(errno));
		for (uint64_t j = 1; j < src->ndoc; j++)
			b->docs[b->ndoc++] = base + rp_le64(src->docs + 8 * j);
	}
	return 0;
}

/* Room for n bytes in the output buffer, flushing it to fd if need be. */
static int
iroom(struct mmidx_builder *b, int fd, size_t n)
{
	if (OBUF_SIZE - b->olen < n) {
		if (rp_write_full(fd, b->obuf, b->olen) == -1)
			return berr(b, "%s", strerror(errno));
		b->olen = 0;
	}
	return 0;
}

/* Append bytes to the output buffer, flushing to fd when it fills. */
static int
iput(struct mmidx_builder *b, int fd, const void *p, size_t n)
{
	if (OBUF_SIZE - b->olen < n) {
		if (rp_write_full(fd, b->obuf, b->olen) == -1)
			return berr(b, "%s", strerror(errno));
		b->olen = 0;
	}
	memcpy(b->obuf + b->olen, p, n);
	b->olen += n;
	return 0;
}

int
mmidx_finish(struct mmidx_builder *b, int idxfd)
{
	uint8_t h[MMIDX_MEGATRON_HDR], v[8];
	uint64_t ptr = 0, i;
	int mm = b->layout != MMIDX_FAIRSEQ;

	if (b->done)
		return berr(b, "dataset already finished");
	if (bflush(b) == -1)
		return -1;
	b->done = 1;
	if (mmidx_doc_open(b) && mmidx_end_document(b) == -1)
		return -1;
	memcpy(h, MMIDX_MAGIC, 9);
	rp_put_le64(h + 9, 1);
	h[17] = (uint8_t)mmidx_dtype_code(b->layout, b->dtype);
	rp_put_le64(h + 18, b->n);
	if (mm)
		rp_put_le64(h + 26, b->docs != NULL ? b->ndoc : b->n + 1);
	if (iput(b, idxfd, h, mm ? MMIDX_MEGATRON_HDR : MMIDX_FAIRSEQ_HDR) == -1)
		return -1;
	/* The sizes, then the pointers, as much as the buffer holds at a time. */
	for (i = 0; i < b->n; ) {
		uint64_t e;
		uint8_t *q;

		if (iroom(b, idxfd, 4) == -1)
			return -1;
		e = i + (OBUF_SIZE - b->olen) / 4;
		if (e > b->n)
			e = b->n;
		for (q = b->obuf + b->olen; i < e; i++, q += 4)
			rp_put_le32(q, (uint32_t)b->sizes[i]);
		b->olen = (size_t)(q - b->obuf);
	}
	for (i = 0; i < b->n; ) {
		uint64_t e;
		uint8_t *q;

		if (iroom(b, idxfd, 8) == -1)
			return -1;
		e = i + (OBUF_SIZE - b->olen) / 8;
		if (e > b->n)
			e = b->n;
		for (q = b->obuf + b->olen; i < e; i++, q += 8) {
			rp_put_le64(q, ptr);
			ptr += (uint64_t)b->sizes[i] * b->esize;
		}
		b->olen = (size_t)(q - b->obuf);
	}
	if (mm) {
		uint64_t nd = b->docs != NULL ? b->ndoc : b->n + 1;
		for (i = 0; i < nd; i++) {
			rp_put_le64(v, b->docs != NULL ? b->docs[i] : i);
			if (iput(b, idxfd, v, 8) == -1)
				return -1;
		}
	}
	if (b->layout == MMIDX_MEGATRON_MM)
		for (i = 0; i < b->n; i++)
			if (iput(b, idxfd, &b->modes[i], 1) == -1)
				return -1;
	if (b->olen > 0 && rp_write_full(idxfd, b->obuf, b->olen) == -1)
		return berr(b, "%s", strerror(errno));
	b->olen = 0;
	return 0;
}
