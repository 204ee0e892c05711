/*
 * Fuzz the record reader: arbitrary bytes through a pipe-like file,
 * in every compression mode, with and without recovery.  Checks that
 * every record returned lies within what was read and that the reader
 * never loops; and that rec_read_framed() yields the bytes and the end
 * that rec_read() does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rec_read() and rec_read_framed() (batches of 'want' bytes, 'max' records) agree. */
static void
framed_vs_single(int fd, enum rec_comp c, unsigned flags, size_t want,
    size_t max)
{
	struct buf a = { 0 }, b = { 0 };
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;
	uint64_t ia, oa, ib, ob, pos;
	enum rec_err ea;
	char msg[256];
	int ra, guard;
	long k;

	lseek(fd, 0, SEEK_SET);
	if ((r = rec_reader_open(fd, c, flags | REC_NO_CRC, 1 << 20)) == NULL)
		abort();
	for (;;) {
		uint64_t len;
		int rp = rec_peek(r, &len);

		if ((ra = rec_read(r, &p, &n)) != 1) {
			if (rp == 1 && ra == 0)
				abort();	/* a header, then nothing */
			break;
		}
		if (rp != 1 || len != n)
			abort();	/* rec_peek() missed the record */
		if (rp_buf_append(&a, p - 12, n + 16) == -1)
			abort();
	}
	ea = rec_error(r);
	ia = rec_index(r);
	oa = rec_offset(r);
	snprintf(msg, sizeof msg, "%s", rec_strerror(r));
	rec_reader_free(r);

	lseek(fd, 0, SEEK_SET);
	if ((r = rec_reader_open(fd, c, flags, 1 << 20)) == NULL)
		abort();
	for (guard = 0; guard < 100000; guard++) {
		size_t before = b.len;

		pos = rec_position(r);
		if ((k = rec_read_framed(r, &b, want, max)) <= 0)
			break;
		if ((size_t)k > max || rec_position(r) - pos != b.len - before)
			abort();
		/* A record longer than 'want' only first in a call. */
		for (size_t at = before + rp_le64(b.p + before) + 16; at < b.len;
		    at += rp_le64(b.p + at) + 16)
			if (rp_le64(b.p + at) > want)
				abort();
	}
	if (guard == 100000 || a.len != b.len ||
	    (a.len && memcmp(a.p, b.p, a.len) != 0) || ra != (int)k ||
	    ea != rec_error(r) || ia != rec_index(r))
		abort();
	ib = rec_index(r);
	ob = rec_offset(r);
	if (ra == -1 && (oa != ob || strcmp(msg, rec_strerror(r)) != 0 ||
	    ia != ib))
		abort();
	rec_reader_free(r);
	rp_buf_free(&a);
	rp_buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[] = "/tmp/fuzz-record.XXXXXX";
	static int fd = -1;
	struct rec_reader *r;
	const uint8_t *p;
	size_t n, total;
	uint64_t off, len;
	unsigned flags;
	int mode, ret, guard;

	if (size < 1)
		return 0;
	if (fd == -1 && (fd = mkstemp(path)) == -1)
		abort();
	unlink(path);
	mode = data[0];
	data++;
	size--;
	if (ftruncate(fd, 0) == -1 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	lseek(fd, 0, SEEK_SET);
	if (mode & 64) {
		framed_vs_single(fd, (enum rec_comp)(mode & 3),
		    mode & 4 ? REC_TF_COMPAT : 0, (size_t)(mode & 8 ? 1 :
		    4096), mode & 16 ? 1 : mode & 32 ? 3 : 1000);
		return 0;
	}
	flags = (mode & 4 ? REC_TF_COMPAT : 0) | (mode & 8 ? REC_SKIP_DATA : 0) |
	    (mode & 16 ? REC_NO_CRC : 0);
	r = rec_reader_open(fd, (enum rec_comp)(mode & 3), flags, 1 << 20);
	if (r == NULL)
		abort();
	total = 0;
	for (guard = 0; guard < 100000; guard++) {
		ret = rec_read(r, &p, &n);
		if (ret == 1) {
			total += n + 16;
			if (!(flags & REC_SKIP_DATA) && n > 0)
				(void)((volatile const uint8_t *)p)[n - 1];
			continue;
		}
		if (ret == 0)
			break;
		if (rec_strerror(r)[0] == '\0')
			abort();	/* every fault has a message */
		if (!(mode & 32))
			break;
		if (rec_resync(r, &off, &len) != 1)
			break;
		if (len == 0)
			abort();	/* recovery must make progress */
	}
	if (guard == 100000)
		abort();
	if ((mode & 3) == REC_NONE && total > size)
		abort();
	rec_reader_free(r);
	return 0;
}
