/*
 * What the files of the loader share: the parsed configuration
 * (loader_config.c), the loader and its elements (loader.c), read by the
 * writers of batches (loader_write.c), and the small helpers on values.
 * Private to the library.
 */
#ifndef RECPIPE_LOADER_INT_H
#define RECPIPE_LOADER_INT_H

#include <sys/types.h>
#include <sys/uio.h>

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "errmsg.h"
#include "example.h"
#include "loader.h"
#include "manifest.h"
#include "record.h"
#include "rng.h"

/* The configuration */

#define LD_MAXRANK	(MF_MAXRANK + 4)
/*
 * The most memory one tensor of a batch may take (4 bytes a float32
 * value, 8 any other), and the examples of a batch held at once: what
 * a configuration number would make larger is refused up front, naming
 * its key and the size, and what the data makes larger is an error
 * before the allocation.  A batch written as one Example could not be
 * larger anyway (protocol buffers stop at 2 GiB).
 */
#define LD_MAX_BYTES	(UINT64_C(1) << 31)

struct ld_str {
	size_t		 n;
	uint8_t		 p[];
};

union ld_cell {
	int64_t		 i;
	double		 f;
	struct ld_str	*s;
};

/* Bytes a value of dtype takes in a tensor. */
static inline size_t
esz(enum mf_dtype dt)
{
	return dt == MF_FLOAT32 ? sizeof(float) : sizeof(union ld_cell);
}

enum { STEP_SLICE, STEP_ONEHOT, STEP_RESHAPE };

struct ld_sl {			/* one item of a slice: an index or start:stop:step */
	int		 index;
	int		 has_start, has_stop;
	int64_t		 start, stop, step;
};

struct ld_step {
	int		 type;
	size_t		 tensor;
	char		 path[256];	/* "processing_steps[2]" */
	int		 nsl;
	struct ld_sl	 sl[LD_MAXRANK];
	int64_t		 depth;		/* onehot */
	enum mf_dtype	 dtype;		/* onehot */
	int		 rank;		/* reshape */
	int64_t		 shape[LD_MAXRANK];
	uint64_t	 nelem;		/* reshape: product of shape */
};

struct ld_tspec {
	char		*name;
	char		*shape_name;	/* "<name>_shape" */
	char		*bnd_name;	/* "<name>_boundaries" */
	char		*bnd_shape_name;
	/* primaries */
	const char	*from;
	const struct mf_feature *f;
	/* secondaries */
	int		 sec;		/* 0 primary, 1 ones, 2 const */
	ssize_t		 shape_ref;	/* tensor whose shape to copy, or -1 */
	int		 srank;
	int64_t		 sshape[LD_MAXRANK];
	uint64_t	 snelem;	/* product of sshape */
	ssize_t		 dtype_ref;
	const json_t	*value;		/* const value, or NULL */
	union ld_cell	 val;
	/* static dtype and rank, as loaded and after the steps */
	enum mf_dtype	 dtype0, dtype;
	int		 rank0, rank;
	/* padding */
	int		 pad_given;
	size_t		 pad_index;	/* in "padding" */
	int64_t		 pad_shape[LD_MAXRANK];
	const json_t	*pad_value;
	union ld_cell	 padv;
	struct ld_str	 *padstr;
	/* values an example has at least, as known before the data */
	uint64_t	 least;
	/* normalization (after batching and padding) */
	int		 norm;		/* 1 + its index in "normalization", or 0 */
	int		 norm_axis;	/* axis of the example, 0 .. rank - 1 */
};

struct ld_config {
	json_t		*root;
	enum ld_type	 type;
	const json_t	*dataset;
	int64_t		 batch;
	int		 drop;
	int64_t		 epochs;	/* -1: endless */
	int		 shuffle;
	int64_t		 nshuf, nfshuf, nmix;
	int64_t		 minw, maxw, stride;	/* stride -1: the window's length */
	int		 padding;
	size_t		 nprim, nt;
	struct ld_tspec	*t;
	size_t		 nstep;
	struct ld_step	*step;
	int		 bound;
	uint64_t	 maxbytes;	/* ld_config_set_max_bytes() */
};

/* The loader and its elements */

/*
 * A tensor's values: float32 as packed floats (4 bytes each, what the
 * records hold and the output writes), every other dtype as cells.
 */
struct ld_tv {
	enum mf_dtype	 dtype;
	int		 rank;
	int64_t		 shape[LD_MAXRANK];
	size_t		 n;
	void		*v;	/* n floats or n cells, by dtype (esz()) */
	size_t		 cap;	/* bytes at v, kept when an element is reused */
	int		 has_crc;	/* float32: crc is crc32c_value(values) */
	uint32_t	 crc;
};

struct ld_elem {
	int64_t		*bounds;	/* discrete: nprim x nb offsets */
	size_t		 nb;		/* records + 1 */
	struct ld_tv	 tv[];
};

struct ld_src {
	int		 open;
	int		 dead;
	size_t		 file;
	int		 fd;
	struct rec_reader *r;
	uint64_t	 steps;		/* continuous: steps read in the file */
	uint64_t	 nwin;		/* windows made */
	/* continuous: the steps not yet passed, per primary */
	void		**cells;	/* as ld_tv's v, by the primary's dtype */
	size_t		*cap;
	size_t		*w;		/* cells a step */
	int64_t		(*sh)[LD_MAXRANK];	/* shape of a step */
	size_t		 start;		/* steps passed, still at the front of cells */
	size_t		 have;		/* steps held, after those */
	uint64_t	 skip;		/* steps still to pass before the next window */
	int64_t		 want;		/* the drawn window length, or -1 */
	/* discrete: the window being joined, its records so far */
	struct ld_elem	*cur;
	size_t		 nq;
	uint64_t	 nrecs;
};

struct ld_out {
	int		 rank;
	int64_t		 shape[LD_MAXRANK];
	size_t		 n, cap;
	size_t		 per;		/* cells an example */
	int		 direct;	/* no padding: read the examples' own values */
	int		 ready;		/* v holds the batch (ld_out_ready()) */
	void		*v;	/* as ld_tv's v */
	uint64_t	 cells, padded;	/* totals for --stats */
	int64_t		*bnd;		/* discrete: batch x bw */
	size_t		 bw, bcap;
	float		*pad;		/* float32 padding for the gathered output */
	size_t		 npad;
};

struct loader {
	struct ld_config *cf;
	const struct ld_dataset *ds;
	struct rng	 rf, re, rw;	/* files, elements, windows */
	enum ex_type	 et;
	struct example	 ex;		/* long int64 and bytes lists left lazy */
	struct example	 exw;		/* the same decoded whole (lazy_of()) */
	uint64_t	 epoch;		/* the epoch being read */
	int		 in_epoch;
	uint64_t	 epoch_elems;
	size_t		*fbuf;		/* file shuffle buffer */
	size_t		 fbn, fnext;
	struct ld_src	*src;
	size_t		 nsrc, pos, ndead;
	struct ld_elem	**ebuf;		/* element shuffle buffer */
	size_t		 ebn, ebcap;
	int		 input_done;
	/*
	 * The buffers grow with the elements they hold (elems_room()), up
	 * to the configuration's sizes: memory follows the data.
	 */
	struct ld_elem	**batch;
	size_t		 nbatch, bcap;
	struct ld_elem	**spare;	/* freed elements to reuse, at most a batch */
	size_t		 nspare, scap;
	struct ld_out	*out;
	struct ld_stats	 st;
	int		 ended;
	uint64_t	 maxrec;	/* ld_set_max_record() */
	/*
	 * The fast path (fast_probe()): records in the canonical form whose
	 * primaries are packed float32 or int64 lists are read straight
	 * from the record, without ex_decode().
	 */
	int		 fast;
	struct iovec	*iov;		/* ld_write_example_iov()'s pieces */
	size_t		 niov, ciov;
	uint32_t	 crc;		/* of the pieces */
	int		 want_crc;	/* elements get their CRCs (elem_crc()) */
	struct { size_t len; uint32_t op; } zop[256];	/* crc32c_zeros() */
	struct ex_want	*fw;		/* per primary */
	struct ex_span	*fsp;
	const uint8_t	**fval;		/* float values */
	size_t		*fstride, *fskip;	/* var_len: steps */
	int64_t		**fi64;		/* int64 values, decoded */
	size_t		*fi64cap;
};

/* Helpers */

/* Memory an element held in a batch takes besides its values. */
static inline uint64_t
elem_bytes(const struct ld_config *cf)
{
	return sizeof(struct ld_elem) + cf->nt * sizeof(struct ld_tv) +
	    2 * sizeof(struct ld_elem *);
}

/* Value k of v, values of dtype dt. */
static inline void *
at(void *v, size_t k, enum mf_dtype dt)
{
	return (char *)v + k * esz(dt);
}

static inline const void *
cat(const void *v, size_t k, enum mf_dtype dt)
{
	return (const char *)v + k * esz(dt);
}

/* Store cell c (of dtype dt: a float32 cell holds a float's value) as value k. */
static inline void
put_cell(void *v, size_t k, enum mf_dtype dt, union ld_cell c)
{
	if (dt == MF_FLOAT32)
		((float *)v)[k] = (float)c.f;
	else
		((union ld_cell *)v)[k] = c;
}

static inline union ld_cell
get_cell(const void *v, size_t k, enum mf_dtype dt)
{
	union ld_cell c;

	if (dt == MF_FLOAT32)
		c.f = ((const float *)v)[k];
	else
		c = ((const union ld_cell *)v)[k];
	return c;
}

/*
 * f rounded to the nearest float16, ties to even (tf.cast's rounding),
 * as a double: past the largest half (65504) it is infinite, below the
 * smallest normal (2^-14) the step is that of the subnormals (2^-24).
 */
static inline double
to_half(double f)
{
	double a = fabs(f), q;
	int e;

	if (!isfinite(f) || a == 0)
		return f;
	if (a >= 65520.0)	/* halfway to 2^16 and above: no half holds it */
		return copysign(INFINITY, f);
	if (a < 0x1p-14)
		q = 0x1p-24;
	else {
		(void)frexp(a, &e);	/* a in [2^(e-1), 2^e): 10 bits below */
		q = ldexp(1, e - 11);
	}
	return copysign(nearbyint(a / q) * q, f);
}

/* Values k0..k1 of dst (dtype dt; float32 ones perhaps unaligned) set to c. */
static inline void
pad_fill(void *dst, size_t k0, size_t k1, enum mf_dtype dt, union ld_cell c)
{
	if (dt == MF_FLOAT32) {
		float f[16];
		size_t k = k0;

		for (int j = 0; j < 16; j++)
			f[j] = (float)c.f;
		for (; k + 16 <= k1; k += 16)
			memcpy(at(dst, k, dt), f, sizeof f);
		if (k < k1)
			memcpy(at(dst, k, dt), f, (k1 - k) * sizeof f[0]);
	} else
		for (size_t k = k0; k < k1; k++)
			((union ld_cell *)dst)[k] = c;
}

/* a x b, or UINT64_MAX past it */
static inline uint64_t
smul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/*
 * Make l->out[i].v hold the batch, unless the examples are read
 * directly; ld_out_fill() stacks and pads output tensor i into dst.
 */
void	ld_out_ready(struct loader *l, size_t i);
void	ld_out_fill(const struct loader *l, size_t i, void *dst);

#endif
