/*
 * Fuzz the --part boundary search over arbitrary bytes: as text, as a
 * record stream, and as real records framed from the input.  Checks
 * that a boundary is never before the offset asked for nor past the
 * end, that it is one (a line start; a fixed point of the search), that
 * the search is monotonic, that framed records' boundaries are exactly
 * their starts, and that the parts of any N tile every operand.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "part.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t	*p;
	size_t		 n;
};

static ssize_t
mem_read(void *arg, void *p, size_t n, uint64_t off)
{
	struct mem *m = arg;

	if (off >= m->n)
		return 0;
	if (n > m->n - off)
		n = m->n - (size_t)off;
	memcpy(p, m->p + off, n);
	return (ssize_t)n;
}

static uint64_t
align(const struct part_op *op, uint64_t x)
{
	uint64_t at;

	if (part_align(op, x, &at) == -1)
		abort();
	if (at < x || at > op->size)
		abort();
	return at;
}

/*
 * Offsets worth asking about: all of them for small inputs, else about
 * 24 in steps whose phase comes from the input's size, so that inputs
 * of different sizes try different offsets.  (Every offset of every
 * input up to 600 bytes, and 300 of larger ones, cost a search that may
 * run to the end each: the target ran 10 times slower.)
 */
static int
next_x(uint64_t *x, uint64_t size)
{
	uint64_t step = size < 24 ? 1 : 1 + size / 24;

	if (*x == 0 && step > 1)
		*x = 1 + size * 2654435761u % step;
	else
		*x += step;
	return *x <= size;
}

static void
check_generic(const struct part_op *op)
{
	uint64_t x = 0, at, prev = 0;

	do {
		at = align(op, x);
		/* A boundary is its own (asked once for each one found). */
		if (at != prev && align(op, at) != at)
			abort();
		if (at < prev)
			abort();		/* monotonic */
		prev = at;
	} while (next_x(&x, op->size));
}

static void
check_lines(const struct mem *m, const struct part_op *op)
{
	uint64_t x = 0, at, i;

	do {
		at = align(op, x);
		if (at != 0 && at != m->n && m->p[at - 1] != '\n')
			abort();
		for (i = x > 0 ? x : 1; i < at; i++)
			if (m->p[i - 1] == '\n')
				abort();	/* an earlier line start was passed */
	} while (next_x(&x, m->n));
}

/* Frame payloads cut from the input by its length bytes; check starts. */
static void
check_framed(const uint8_t *data, size_t size)
{
	struct buf b = { 0 };
	uint64_t starts[512], x = 0, at;
	size_t ns = 0, i = 0, len, j;
	struct mem m;
	struct part_op op;
	uint8_t h[12], f[4];

	while (i < size && ns < 512) {
		len = data[i++] % 64;
		if (len > size - i)
			len = size - i;
		starts[ns++] = b.len;
		rec_frame_header(h, len);
		rp_put_le32(f, rec_frame_footer(data + i, len));
		if (rp_buf_append(&b, h, 12) == -1 || rp_buf_append(&b, data + i, len) == -1 ||
		    rp_buf_append(&b, f, 4) == -1)
			abort();
		i += len;
	}
	m.p = b.p;
	m.n = b.len;
	memset(&op, 0, sizeof(op));
	op.size = b.len;
	op.kind = PART_RECORDS;
	op.read = mem_read;
	op.arg = &m;
	j = 0;
	do {
		at = align(&op, x);
		while (j < ns && starts[j] < x)
			j++;
		if (at != (j < ns ? starts[j] : b.len))
			abort();	/* a true start missed, or a false one taken */
	} while (next_x(&x, b.len));
	rp_buf_free(&b);
}

/* Cut the input into up to 3 operands of mixed kinds; plan every part of n. */
static void
check_plan(const uint8_t *data, size_t size, uint8_t sel)
{
	struct mem m[3];
	struct part_op ops[3];
	uint64_t next[3], n = 1 + sel % 9, k;
	size_t nops = 1 + (sel >> 4) % 3, i, cut = 0, bad;

	for (i = 0; i < nops; i++) {
		size_t len = i + 1 == nops ? size - cut : (size - cut) / 2;

		m[i].p = data + cut;
		m[i].n = len;
		cut += len;
		memset(&ops[i], 0, sizeof(ops[i]));
		ops[i].size = len;
		ops[i].kind = (enum part_kind)((sel >> (i + 5)) % 3);
		ops[i].read = mem_read;
		ops[i].arg = &m[i];
		next[i] = 0;
	}
	for (k = 0; k < n; k++) {
		if (part_plan(ops, nops, k, n, &bad) == -1)
			abort();
		for (i = 0; i < nops; i++) {
			if (ops[i].from != next[i] || ops[i].to < ops[i].from ||
			    ops[i].to > ops[i].size)
				abort();
			if (ops[i].kind == PART_WHOLE && ops[i].to > ops[i].from &&
			    (ops[i].from != 0 || ops[i].to != ops[i].size))
				abort();
			next[i] = ops[i].to;
		}
	}
	for (i = 0; i < nops; i++)
		if (next[i] != ops[i].size)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m;
	struct part_op op;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	m.p = data;
	m.n = size;
	memset(&op, 0, sizeof(op));
	op.size = size;
	op.read = mem_read;
	op.arg = &m;
	switch (sel % 4) {
	case 0:
		op.kind = PART_LINES;
		check_generic(&op);
		check_lines(&m, &op);
		break;
	case 1:
		op.kind = PART_RECORDS;
		check_generic(&op);
		break;
	case 2:
		check_framed(data, size);
		break;
	default:
		check_plan(data, size, sel);
		break;
	}
	return 0;
}
