/*
 * --part boundaries: line starts, checked record chains, compressed
 * files kept whole; and part plans that tile every operand for N = 1..7.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "fairseq_dict.h"
#include "part.h"
#include "record.h"
#include "subword.h"
#include "tap.h"

struct mem {
	const uint8_t	*p;
	size_t		 n;
	int		 fail;	/* reads fail with EIO */
};

static ssize_t
mem_read(void *arg, void *p, size_t n, uint64_t off)
{
	struct mem *m = arg;

	if (m->fail) {
		errno = EIO;
		return -1;
	}
	if (off >= m->n)
		return 0;
	if (n > m->n - off)
		n = m->n - (size_t)off;
	memcpy(p, m->p + off, n);
	return (ssize_t)n;
}

static struct part_op
op_of(struct mem *m, enum part_kind kind)
{
	struct part_op op;

	memset(&op, 0, sizeof(op));
	op.size = m->n;
	op.kind = kind;
	op.read = mem_read;
	op.arg = m;
	return op;
}

static uint64_t
align(struct part_op *op, uint64_t x)
{
	uint64_t at = UINT64_MAX;

	if (part_align(op, x, &at) == -1)
		return UINT64_MAX - 1;
	return at;
}

static uint32_t rng = 12345;

static uint32_t
rnd(uint32_t n)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) % n;
}

/* Append a framed record of n bytes of 'fill' (or random bytes if fill < 0). */
static void
put_record(struct buf *b, size_t n, int fill)
{
	uint8_t h[12], f[4], *p = malloc(n ? n : 1);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = fill < 0 ? (uint8_t)rnd(256) : (uint8_t)fill;
	rec_frame_header(h, n);
	rp_put_le32(f, rec_frame_footer(p, n));
	rp_buf_append(b, h, 12);
	rp_buf_append(b, p, n);
	rp_buf_append(b, f, 4);
	free(p);
}

static void
test_lines(void)
{
	static const char text[] = "ab\ncd\n\n\nefghij\nk";
	struct mem m = { (const uint8_t *)text, sizeof(text) - 1, 0 };
	struct part_op op = op_of(&m, PART_LINES);
	uint64_t x, want;
	int bad = 0;

	for (x = 0; x <= m.n; x++) {
		for (want = x; want < m.n && want > 0 && text[want - 1] != '\n';
		    want++)
			;
		if (align(&op, x) != want)
			bad++;
	}
	TEST_INT(bad, ==, 0, "lines: every offset moves to the next line start");
	TEST(align(&op, 9) == 15 && align(&op, 16) == 16,
	    "lines: the last line without a newline, then the end");
	m.fail = 1;
	TEST(part_align(&op, 5, &x) == -1 && errno == EIO, "lines: a read failure is reported");
}

/* Record streams: every offset moves to the next true record start. */
static void
test_records(void)
{
	struct buf b = { 0 }, inner = { 0 };
	uint64_t *starts, x, want;
	size_t nstarts = 0, i, j;
	struct mem m;
	struct part_op op;
	int bad = 0;

	starts = calloc(4096, sizeof(*starts));
	for (i = 0; i < 300; i++) {
		starts[nstarts++] = b.len;
		put_record(&b, i % 50 == 7 ? 70000 : rnd(300), i % 3 == 0 ? 0 : -1);
	}
	/* A record holding a stream of three records: not a boundary inside. */
	for (j = 0; j < 3; j++)
		put_record(&inner, 100, 'a');
	starts[nstarts++] = b.len;
	put_record(&b, 0, 0);
	b.len -= 16;
	{
		uint8_t h[12], f[4];

		rec_frame_header(h, inner.len);
		rp_put_le32(f, rec_frame_footer(inner.p, inner.len));
		rp_buf_append(&b, h, 12);
		rp_buf_append(&b, inner.p, inner.len);
		rp_buf_append(&b, f, 4);
	}
	for (i = 0; i < 20; i++) {
		starts[nstarts++] = b.len;
		put_record(&b, rnd(40), -1);
	}
	m.p = b.p;
	m.n = b.len;
	m.fail = 0;
	op = op_of(&m, PART_RECORDS);
	for (x = 0, j = 0; x <= m.n; x += 1 + rnd(61)) {
		while (j < nstarts && starts[j] < x)
			j++;
		want = j < nstarts ? starts[j] : m.n;
		if (align(&op, x) != want && bad++ < 5)
			printf("# x %llu: got %llu, want %llu\n",
			    (unsigned long long)x, (unsigned long long)align(&op, x),
			    (unsigned long long)want);
	}
	TEST_INT(bad, ==, 0, "records: offsets move to the next record start "
	    "(none inside payloads, nor inside a record holding records)");
	for (i = bad = 0; i < nstarts; i++)
		if (align(&op, starts[i]) != starts[i])
			bad++;
	TEST_INT(bad, ==, 0, "records: every record start is a boundary");

	/* Damage: a broken record is no boundary, the next good chain is. */
	b.p[starts[5] + 3] ^= 0x40;
	TEST_INT(align(&op, starts[5]), ==, starts[6], "records: a bad length CRC is skipped");
	b.p[starts[5] + 3] ^= 0x40;
	b.p[starts[10] + 14] ^= 1;
	TEST_INT(align(&op, starts[9] + 1), ==, starts[11],
	    "records: a bad payload CRC is skipped");
	/* A start whose chain breaks within PART_CHAIN_RECORDS records is not one. */
	TEST_INT(align(&op, starts[7] + 1), ==, starts[11],
	    "records: a chain broken within its first records is no boundary");
	b.p[starts[10] + 14] ^= 1;

	/* Bytes that are no records at all. */
	{
		static const char text[] = "no records in here, only text\n";

		m.p = (const uint8_t *)text;
		m.n = sizeof(text) - 1;
		op.size = m.n;
		TEST_INT(align(&op, 1), ==, m.n, "records: none in text: the end");
		TEST_INT(align(&op, 0), ==, 0, "records: a file's start is always a boundary");
	}
	rp_buf_free(&b);
	rp_buf_free(&inner);
	free(starts);
}

static void
test_whole(void)
{
	static const uint8_t z[100];
	struct mem m = { z, sizeof(z), 0 };
	struct part_op op = op_of(&m, PART_WHOLE);

	TEST(align(&op, 0) == 0 && align(&op, 1) == 100 && align(&op, 99) == 100,
	    "whole: only the start is a boundary");
}

/* part_plan() over random operands: the parts tile each operand. */
static void
test_plan(void)
{
	struct mem mems[6];
	struct part_op ops[6];
	struct buf bufs[6];
	uint64_t n, k, next[6], total, sum;
	size_t nops, i, j, bad;
	int errs = 0, round, owner;

	for (round = 0; round < 200; round++) {
		nops = 1 + rnd(6);
		total = 0;
		for (i = 0; i < nops; i++) {
			memset(&bufs[i], 0, sizeof(bufs[i]));
			switch (rnd(4)) {
			case 0:		/* empty */
				ops[i] = op_of(&mems[i], PART_LINES);
				break;
			case 1:		/* lines, one of them perhaps long */
				for (j = rnd(30); j > 0; j--) {
					size_t len = rnd(8) == 0 ? 500 : rnd(20);

					while (len-- > 0)
						rp_buf_putc(&bufs[i], 'a' + (int)rnd(26));
					rp_buf_putc(&bufs[i], '\n');
				}
				if (rnd(2))
					rp_buf_puts(&bufs[i], "tail");
				ops[i] = op_of(&mems[i], PART_LINES);
				break;
			case 2:
				for (j = rnd(20); j > 0; j--)
					put_record(&bufs[i], rnd(8) == 0 ? 700 : rnd(30), -1);
				ops[i] = op_of(&mems[i], PART_RECORDS);
				break;
			default:
				for (j = 1 + rnd(300); j > 0; j--)
					rp_buf_putc(&bufs[i], (int)rnd(256));
				ops[i] = op_of(&mems[i], PART_WHOLE);
				break;
			}
			mems[i].p = bufs[i].p;
			mems[i].n = bufs[i].len;
			mems[i].fail = 0;
			ops[i].size = bufs[i].len;
			total += bufs[i].len;
		}
		sum = total;
		for (n = 1; n <= 7; n++) {
			for (i = 0; i < nops; i++)
				next[i] = 0;
			for (k = 0; k < n; k++) {
				if (part_plan(ops, nops, k, n, &bad) == -1) {
					errs++;
					continue;
				}
				for (i = 0; i < nops; i++) {
					if (ops[i].from != next[i] || ops[i].to < ops[i].from)
						errs++;
					if (ops[i].kind == PART_WHOLE &&
					    ops[i].from != ops[i].to &&
					    (ops[i].from != 0 || ops[i].to != ops[i].size))
						errs++;
					next[i] = ops[i].to;
				}
			}
			for (i = 0; i < nops; i++)
				if (next[i] != ops[i].size)
					errs++;
			/* A compressed file goes to the part holding its first byte. */
			for (i = 0, total = 0; i < nops; total += ops[i].size, i++) {
				if (ops[i].kind != PART_WHOLE)
					continue;
				for (k = 0, owner = -1; k < n; k++) {
					part_plan(ops, nops, k, n, &bad);
					if (ops[i].to > ops[i].from)
						owner = (int)k;
				}
				/* The last part whose nominal start is at or before its first byte. */
				for (k = n - 1; k > 0 && k * sum / n > total; k--)
					;
				if (owner != (int)k)
					errs++;
			}
		}
		for (i = 0; i < nops; i++)
			rp_buf_free(&bufs[i]);
	}
	TEST_INT(errs, ==, 0, "plans tile every operand for N = 1..7, compressed files whole");

	{
		static const uint8_t t[] = "x\ny\n";
		struct mem a = { t, 4, 0 };
		struct part_op o[2];

		o[0] = op_of(&a, PART_LINES);
		o[1] = op_of(&a, PART_LINES);
		TEST(part_plan(o, 2, 2, 2, &bad) == -1 && errno == EINVAL, "k >= n: EINVAL");
		TEST(part_plan(o, 2, 0, 0, &bad) == -1 && errno == EINVAL, "n = 0: EINVAL");
		a.fail = 1;
		TEST(part_plan(o, 2, 1, 4, &bad) == -1 && errno == EIO && bad == 0,
		    "a read failure names its operand");
		TEST(part_plan(o, 2, 0, 1, &bad) == 0 && o[1].to == 4,
		    "N = 1 reads nothing to plan");
		o[0].size = UINT64_MAX;
		TEST(part_plan(o, 2, 0, 2, &bad) == -1 && errno == EOVERFLOW,
		    "sizes that overflow: EOVERFLOW");
	}
}

/* A temporary file holding p[0..n), opened for reading. */
static int
file_of(const void *p, size_t n)
{
	char path[] = "/tmp/t-part.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	if (fd == -1 || write(fd, p, n) != (ssize_t)n)
		return -1;
	return fd;
}

/* The readers of a range: offsets stay the file's, numbers the range's. */
static void
test_readers(void)
{
	struct buf b = { 0 };
	uint64_t starts[10];
	struct rec_reader *r;
	struct sw_lines *l;
	struct fqd_lines *q;
	const uint8_t *p;
	size_t n, i;
	int fd, nl, k, ok;

	for (i = 0; i < 10; i++) {
		starts[i] = b.len;
		put_record(&b, 10 * i, (int)i);
	}
	fd = file_of(b.p, b.len);
	r = rec_reader_open(fd, REC_AUTO, 0, 0);
	TEST(rec_reader_range(r, starts[3], starts[7] - starts[3]) == 0, "rec_reader_range");
	for (k = 0, ok = 1; rec_read(r, &p, &n) == 1; k++)
		ok &= n == 10 * (size_t)(3 + k) && rec_offset(r) == starts[3 + k] &&
		    rec_index(r) == (uint64_t)k + 1;
	TEST(ok && k == 4 && rec_error(r) == REC_OK,
	    "a range reads its records, file offsets, numbers from the range");
	rec_reader_free(r);
	r = rec_reader_open(fd, REC_AUTO, 0, 0);
	rec_reader_range(r, starts[3], starts[7] - starts[3] - 5);
	while (rec_read(r, &p, &n) == 1)
		;
	TEST(rec_error(r) == REC_TRUNC_RECORD && rec_offset(r) == starts[6] &&
	    strstr(rec_strerror(r), "crosses the end of the part") != NULL,
	    "a record across the range's end is a fault that says so");
	rec_reader_free(r);
	r = rec_reader_open(fd, REC_AUTO, 0, 0);
	rec_reader_range(r, starts[9], b.len - starts[9] - 1);
	TEST(rec_read(r, &p, &n) == -1 && strstr(rec_strerror(r), "crosses") != NULL,
	    "cut one byte short of the file: the last record crosses");
	rec_reader_free(r);
	r = rec_reader_open(fd, REC_AUTO, 0, 0);
	rec_read(r, &p, &n);
	TEST(rec_reader_range(r, 0, 10) == -1 && errno == EINVAL, "a range after reading: EINVAL");
	rec_reader_free(r);
	close(fd);
	TEST(rec_sniff((const uint8_t *)"\x1f\x8b", 2) == REC_GZIP &&
	    rec_sniff((const uint8_t *)"\x78\x9c", 2) == REC_ZLIB &&
	    rec_sniff(b.p, 12) == REC_NONE, "rec_sniff: gzip, zlib, records");
	rp_buf_free(&b);

	{
		static const char text[] = "ab\ncd\ne\xff\nlast";

		fd = file_of(text, sizeof(text) - 1);
		l = sw_lines_open(fd);
		TEST(sw_lines_range(l, 3, 7) == 0, "sw_lines_range");
		TEST(sw_lines_next(l, &p, &n, &nl) == 1 && n == 2 &&
		    memcmp(p, "cd", 2) == 0 && sw_lines_lineno(l) == 1,
		    "lines: the range's first line is its line 1");
		TEST(sw_lines_next(l, &p, &n, &nl) == -2 &&
		    sw_lines_error_offset(l) == 7 && sw_lines_error_line(l) == 2,
		    "lines: bad UTF-8 at the file's offset, the range's line");
		sw_lines_free(l);
		l = sw_lines_open(fd);
		sw_lines_range(l, 9, 4);
		TEST(sw_lines_next(l, &p, &n, &nl) == 1 && n == 4 && !nl &&
		    sw_lines_next(l, &p, &n, &nl) == 0, "lines: the last line, no newline");
		sw_lines_free(l);
		q = fqd_lines_new(fd);
		TEST(fqd_lines_range(q, 3, 3) == 0 && fqd_lines_next(q, &p, &n) == 1 &&
		    n == 2 && fqd_lines_offset(q) == 3 && fqd_lines_count(q) == 1 &&
		    fqd_lines_next(q, &p, &n) == 0, "fqd_lines_range: file offsets, one line");
		fqd_lines_free(q);
		close(fd);
	}
}

int
main(void)
{
	test_readers();
	test_lines();
	test_records();
	test_whole();
	test_plan();
	return tap_done();
}
