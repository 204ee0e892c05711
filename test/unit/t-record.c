/*
 * Record reader and writer: round trips through every compression,
 * pipes, and each kind of damage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "crc32c.h"
#include "record.h"
#include "tap.h"

#include <zlib.h>

static char tmpl[] = "/tmp/t-record.XXXXXX";

/* Write records of lengths 0..n-1 (payload byte i) with compression c. */
static int
make(enum rec_comp c, int n)
{
	int fd = mkstemp(tmpl), i;
	struct rec_writer *w;
	uint8_t p[300];

	strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
	w = rec_writer_open(fd, c, -1);
	for (i = 0; i < n; i++) {
		memset(p, i, (size_t)i);
		rec_write(w, p, (size_t)i);
	}
	rec_writer_close(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int
count(int fd, enum rec_comp c, unsigned flags, enum rec_err *err)
{
	struct rec_reader *r = rec_reader_open(fd, c, flags, 0);
	const uint8_t *p;
	size_t n;
	int k = 0, ret;

	while ((ret = rec_read(r, &p, &n)) == 1) {
		if (flags == 0 && (n != (size_t)k ||
		    (n && (p[0] != k || p[n - 1] != k)))) {
			k = -1000;
			break;
		}
		k++;
	}
	*err = ret == -1 ? rec_error(r) : REC_OK;
	rec_reader_free(r);
	return k;
}

/* Write bytes to a file and return an fd at its start. */
static int
bytes_file(const void *p, size_t n)
{
	int fd = mkstemp(tmpl);

	strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
	if (write(fd, p, n) != (ssize_t)n)
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static struct buf
file_bytes(int fd)
{
	struct buf b = { 0 };
	uint8_t t[4096];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, t, sizeof(t))) > 0)
		rp_buf_append(&b, t, (size_t)n);
	return b;
}

/*
 * Write the same records with rec_write() or in place (room asked for
 * 'extra' bytes more than used); returns the file's bytes.  Sizes cross
 * the writer's buffer, and one record is larger than it.
 */
static struct buf
write_sizes(enum rec_comp c, int inplace, size_t extra)
{
	static const size_t sizes[] = { 0, 1, 100, 3000, 70000, 200000, 5,
	    300000, 0, 65536, 250000, 7, 262128, 262129, 9 };
	int fd = mkstemp(tmpl);
	struct rec_writer *w;
	struct buf out;
	uint8_t *p, *q;
	size_t i, j;

	strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
	unlink(tmpl);
	w = rec_writer_open(fd, c, -1);
	p = malloc(300000 + extra);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizes[i]; j++)
			p[j] = (uint8_t)(i * 31 + j * 7 + (j >> 9));
		if (inplace >= 2) {	/* in pieces: rec_writev() */
			struct iovec v[6];
			size_t cut[5] = { 0, sizes[i] / 7, sizes[i] / 7,
			    sizes[i] / 2, sizes[i] - sizes[i] / 9 };
			uint32_t crc = crc32c_value(p, sizes[i]);

			for (j = 0; j < 5; j++)
				v[j] = (struct iovec){ p + cut[j], (j < 4 ?
				    cut[j + 1] : sizes[i]) - cut[j] };
			rec_writev(w, v, 5, inplace == 3 ? &crc : NULL);
			continue;
		}
		if (!inplace) {
			rec_write(w, p, sizes[i]);
			continue;
		}
		q = rec_write_begin(w, sizes[i] + extra);
		memcpy(q, p, sizes[i]);
		rec_write_end(w, sizes[i]);
	}
	rec_writer_close(w);
	free(p);
	out = file_bytes(fd);
	close(fd);
	return out;
}

static void
test_write_in_place(void)
{
	enum rec_comp comps[] = { REC_NONE, REC_ZLIB, REC_GZIP };
	struct buf a, b, c;
	int i;

	for (i = 0; i < 3; i++) {
		a = write_sizes(comps[i], 0, 0);
		b = write_sizes(comps[i], 1, 0);
		c = write_sizes(comps[i], 1, 40);
		TEST(a.len > 0 && a.len == b.len && a.len == c.len &&
		    memcmp(a.p, b.p, a.len) == 0 && memcmp(a.p, c.p, a.len) == 0,
		    "records written in place are the bytes rec_write writes (%d)", i);
		rp_buf_free(&b);
		rp_buf_free(&c);
		b = write_sizes(comps[i], 2, 0);
		c = write_sizes(comps[i], 3, 0);
		TEST(a.len == b.len && a.len == c.len &&
		    memcmp(a.p, b.p, a.len) == 0 && memcmp(a.p, c.p, a.len) == 0,
		    "records written in pieces, with their CRC or without, are "
		    "the bytes rec_write writes (%d)", i);
		rp_buf_free(&a);
		rp_buf_free(&b);
		rp_buf_free(&c);
	}
}

/* What a reader gave: the records as framed, and how it ended. */
struct outcome {
	struct buf	 bytes;
	int		 end;		/* 0 clean, -1 fault */
	enum rec_err	 err;
	uint64_t	 index, offset, position;
	char		 msg[256];
	int		 spans_ok;	/* positions matched the bytes */
};

static void
finish(struct outcome *o, struct rec_reader *r, int rc)
{
	o->end = rc;
	o->err = rec_error(r);
	o->index = rec_index(r);
	o->offset = rec_offset(r);
	o->position = rec_position(r);
	snprintf(o->msg, sizeof o->msg, "%s", rec_strerror(r));
}

/* Read fd with rec_read() (no payload CRCs), keeping the framed bytes. */
static struct outcome
read_one_by_one(int fd, enum rec_comp c)
{
	struct outcome o = { .spans_ok = 1 };
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;
	int rc;

	lseek(fd, 0, SEEK_SET);
	r = rec_reader_open(fd, c, REC_NO_CRC, 0);
	while ((rc = rec_read(r, &p, &n)) == 1)
		rp_buf_append(&o.bytes, p - 12, n + 16);
	finish(&o, r, rc);
	rec_reader_free(r);
	return o;
}

/* The same with rec_read_framed(), 'want' bytes and 'max' records a call. */
static struct outcome
read_framed(int fd, enum rec_comp c, size_t want, size_t max)
{
	struct outcome o = { .spans_ok = 1 };
	struct rec_reader *r;
	uint64_t pos;
	size_t before;
	long k;

	lseek(fd, 0, SEEK_SET);
	r = rec_reader_open(fd, c, 0, 0);
	for (;;) {
		pos = rec_position(r);
		before = o.bytes.len;
		if ((k = rec_read_framed(r, &o.bytes, want, max)) <= 0)
			break;
		if ((size_t)k > max ||
		    rec_position(r) - pos != o.bytes.len - before)
			o.spans_ok = 0;
		/* A record longer than 'want' comes only first in a call. */
		for (size_t at = before, i = 0; at + 12 <= o.bytes.len; i++) {
			uint64_t len = rp_le64(o.bytes.p + at);

			if (i > 0 && len > want)
				o.spans_ok = 0;
			at += (size_t)len + 16;
		}
	}
	finish(&o, r, (int)k);
	rec_reader_free(r);
	return o;
}

static int
same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->bytes.len == b->bytes.len && (a->bytes.len == 0 ||
	    memcmp(a->bytes.p, b->bytes.p, a->bytes.len) == 0) &&
	    a->end == b->end && a->err == b->err && a->index == b->index &&
	    (a->end == 0 || (a->offset == b->offset &&
	    strcmp(a->msg, b->msg) == 0)) && a->spans_ok && b->spans_ok;
}

/*
 * rec_read_framed() returns the bytes rec_read() walks through and ends
 * as it does (the same fault, record and offset), for any batch size,
 * on clean, cut and damaged streams in every compression.
 */
static void
test_framed(void)
{
	enum rec_comp comps[] = { REC_NONE, REC_ZLIB, REC_GZIP };
	static const size_t wants[][2] = {
		{ 1, 1 }, { 1, 1000 }, { 100, 3 }, { 5000, 7 },
		{ 1 << 20, 100000 }
	};
	struct buf raw;
	int fd, ok;

	for (int i = 0; i < 3; i++) {
		fd = make(comps[i], 300);
		ok = 1;
		for (size_t w = 0; w < sizeof wants / sizeof wants[0]; w++) {
			struct outcome a = read_one_by_one(fd, comps[i]);
			struct outcome b = read_framed(fd, comps[i],
			    wants[w][0], wants[w][1]);

			if (!same_outcome(&a, &b) || a.end != 0 ||
			    a.index != 300)
				ok = 0;
			rp_buf_free(&a.bytes);
			rp_buf_free(&b.bytes);
		}
		TEST(ok, "framed reads: 300 records, every batch size (%d)", i);
		close(fd);
	}

	/* Damage in an uncompressed stream, at several places. */
	fd = make(REC_NONE, 300);
	raw = file_bytes(fd);
	close(fd);
	ok = 1;
	for (size_t at = 0; at < raw.len; at += raw.len / 37 + 1) {
		for (int kind = 0; kind < 3; kind++) {
			struct buf d = { 0 };
			size_t len = raw.len;

			rp_buf_append(&d, raw.p, raw.len);
			if (kind == 0)
				d.p[at] ^= 0x10;	/* any byte */
			else if (kind == 1)
				len = at;		/* cut short */
			else
				d.p[at] = 0xff;
			fd = bytes_file(d.p, len);
			for (size_t w = 0; w < 5; w++) {
				struct outcome a = read_one_by_one(fd, REC_NONE);
				struct outcome b = read_framed(fd, REC_NONE,
				    wants[w][0], wants[w][1]);

				if (!same_outcome(&a, &b))
					ok = 0;
				rp_buf_free(&a.bytes);
				rp_buf_free(&b.bytes);
			}
			close(fd);
			rp_buf_free(&d);
		}
	}
	TEST(ok, "framed reads: damaged and cut streams end as rec_read() does");
	rp_buf_free(&raw);

	/* rec_peek() gives each length before rec_read() takes the record. */
	for (int i = 0; i < 3; i++) {
		struct rec_reader *r;
		const uint8_t *p;
		uint64_t len;
		size_t n;
		int rc;

		fd = make(comps[i], 50);
		r = rec_reader_open(fd, comps[i], 0, 0);
		ok = 1;
		while ((rc = rec_peek(r, &len)) == 1)
			if (rec_peek(r, &len) != 1 || rec_read(r, &p, &n) != 1 ||
			    n != len)
				ok = 0;
		TEST(ok && rc == 0 && rec_index(r) == 50 && rec_read(r, &p, &n) == 0,
		    "rec_peek: every length, then 0 at the end (%d)", i);
		rec_reader_free(r);
		close(fd);
	}
	/* A short record, then a long one: two calls. */
	for (int i = 0; i < 3; i++) {
		static uint8_t zeros[500];
		struct rec_reader *r;
		struct rec_writer *w;
		struct buf got = { 0 };

		fd = mkstemp(tmpl);
		strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
		unlink(tmpl);
		w = rec_writer_open(fd, comps[i], -1);
		rec_write(w, zeros, 10);
		rec_write(w, zeros, 500);
		rec_write(w, zeros, 10);
		rec_writer_close(w);
		lseek(fd, 0, SEEK_SET);
		r = rec_reader_open(fd, comps[i], 0, 0);
		TEST(rec_read_framed(r, &got, 100, 10) == 1 && got.len == 26 &&
		    rec_read_framed(r, &got, 100, 10) == 1 && got.len == 26 + 516 &&
		    rec_read_framed(r, &got, 100, 10) == 1 &&
		    rec_read_framed(r, &got, 100, 10) == 0,
		    "framed reads: a record longer than 'want' comes alone (%d)", i);
		rec_reader_free(r);
		rp_buf_free(&got);
		close(fd);
	}

	fd = make(REC_NONE, 3);
	raw = file_bytes(fd);
	close(fd);
	raw.p[rp_le64(raw.p) + 16 + 9] ^= 1;	/* the second header's CRC */
	fd = bytes_file(raw.p, raw.len);
	{
		struct rec_reader *r = rec_reader_open(fd, REC_NONE, 0, 0);
		const uint8_t *p;
		uint64_t len;
		size_t n;

		TEST(rec_peek(r, &len) == 1 && rec_read(r, &p, &n) == 1 &&
		    rec_peek(r, &len) == -1 && rec_error(r) == REC_OK &&
		    rec_read(r, &p, &n) == -1 && rec_error(r) == REC_BAD_LEN_CRC &&
		    rec_index(r) == 1, "rec_peek: a bad header is -1, and rec_read() reports it");
		rec_reader_free(r);
	}
	close(fd);
	rp_buf_free(&raw);
}

/* rec_header_ok(): every framed length checks; any one bit flipped does not. */
static void
test_header_ok(void)
{
	static const uint64_t lens[] = { 0, 3, 255, 65536, UINT32_MAX,
	    (uint64_t)1 << 40, UINT64_MAX };
	int good = 1, flips = 1;
	uint8_t h[12];

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		rec_frame_header(h, lens[i]);
		good &= rec_header_ok(h);
		for (int bit = 0; bit < 96; bit++) {
			h[bit / 8] ^= (uint8_t)(1u << bit % 8);
			flips &= !rec_header_ok(h);
			h[bit / 8] ^= (uint8_t)(1u << bit % 8);
		}
	}
	TEST(good, "rec_header_ok: rec_frame_header's headers check");
	TEST(flips, "rec_header_ok: no header with one bit flipped checks");
	TEST(!rec_header_ok((const uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0\0"),
	    "rec_header_ok: twelve zero bytes are no header");
}

int
main(void)
{
	enum rec_err e;
	enum rec_comp comps[] = { REC_NONE, REC_ZLIB, REC_GZIP };
	const char *names[] = { "none", "zlib", "gzip" };
	struct buf b;
	int i, fd, fd2, pfd[2];
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;

	for (i = 0; i < 3; i++) {
		fd = make(comps[i], 200);
		TEST_INT(count(fd, comps[i], 0, &e), ==, 200, "%s: 200 records back", names[i]);
		TEST(e == REC_OK, "%s: clean end", names[i]);
		lseek(fd, 0, SEEK_SET);
		TEST_INT(count(fd, REC_AUTO, 0, &e), ==, 200, "%s: sniffed", names[i]);
		lseek(fd, 0, SEEK_SET);
		TEST_INT(count(fd, REC_AUTO, REC_SKIP_DATA, &e), ==, 200, "%s: counted", names[i]);
		close(fd);
	}

	/* Zero records still make a zlib stream of 8 bytes. */
	fd = make(REC_ZLIB, 0);
	b = file_bytes(fd);
	TEST(b.len == 8 && memcmp(b.p, "\x78\x9c\x03\x00\x00\x00\x00\x01", 8) == 0,
	    "empty zlib stream is 78 9c 03 00 00 00 00 01");
	rp_buf_free(&b);
	close(fd);
	fd = make(REC_GZIP, 3);
	b = file_bytes(fd);
	TEST(b.len > 10 && memcmp(b.p, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) == 0,
	    "gzip header as TensorFlow writes it");
	/* Two members read as one stream. */
	rp_buf_append(&b, b.p, b.len);
	fd2 = bytes_file(b.p, b.len);
	TEST_INT(count(fd2, REC_AUTO, REC_SKIP_DATA, &e), ==, 6, "two gzip members");
	close(fd2);
	/* Garbage after the last member. */
	rp_buf_append(&b, "\0\0\0", 3);
	fd2 = bytes_file(b.p, b.len);
	TEST_INT(count(fd2, REC_AUTO, REC_SKIP_DATA, &e), ==, 6, "records before trailing zeros");
	TEST(e == REC_TRAILING, "trailing zeros after gzip are an error");
	close(fd2);
	/* Truncated gzip. */
	fd2 = bytes_file(b.p, 20);
	count(fd2, REC_AUTO, 0, &e);
	TEST(e == REC_TRUNC_STREAM, "cut gzip stream: truncated_stream");
	close(fd2);
	rp_buf_free(&b);
	close(fd);

	/* Zlib followed by more data: error, or ignored in TF mode. */
	fd = make(REC_ZLIB, 5);
	b = file_bytes(fd);
	rp_buf_append(&b, "junk", 4);
	fd2 = bytes_file(b.p, b.len);
	TEST_INT(count(fd2, REC_ZLIB, 0, &e), ==, 5, "zlib + junk: records first");
	TEST(e == REC_TRAILING, "zlib + junk: trailing_data");
	lseek(fd2, 0, SEEK_SET);
	count(fd2, REC_ZLIB, REC_TF_COMPAT, &e);
	TEST(e == REC_OK, "zlib + junk: ignored with tf-compat");
	close(fd2);
	rp_buf_free(&b);
	close(fd);

	/* Damage to an uncompressed stream. */
	fd = make(REC_NONE, 4);	/* lengths 0,1,2,3: 16+17+18+19 = 70 bytes */
	b = file_bytes(fd);
	TEST_INT(b.len, ==, 70, "four records make 70 bytes");
	fd2 = bytes_file(b.p, 70 - 19 + 5);
	TEST_INT(count(fd2, REC_NONE, 0, &e), ==, 3, "partial header: 3 records");
	TEST(e == REC_TRUNC_HEADER, "partial header: truncated_header");
	lseek(fd2, 0, SEEK_SET);
	count(fd2, REC_NONE, REC_TF_COMPAT, &e);
	TEST(e == REC_OK, "partial header: clean end with tf-compat");
	close(fd2);
	fd2 = bytes_file(b.p, 69);
	count(fd2, REC_NONE, 0, &e);
	TEST(e == REC_TRUNC_RECORD, "short footer: truncated_record");
	lseek(fd2, 0, SEEK_SET);
	count(fd2, REC_NONE, REC_SKIP_DATA, &e);
	TEST(e == REC_TRUNC_RECORD, "short footer while counting: truncated_record");
	close(fd2);
	b.p[16 + 12] ^= 1;	/* payload of record 1 */
	fd2 = bytes_file(b.p, 70);
	TEST_INT(count(fd2, REC_NONE, 0, &e), ==, 1, "bad payload: 1 record before");
	TEST(e == REC_BAD_DATA_CRC, "bad payload: bad_data_crc");
	lseek(fd2, 0, SEEK_SET);
	TEST_INT(count(fd2, REC_NONE, REC_NO_CRC, &e), ==, 4, "bad payload passes without CRC checks");
	/* Recovery skips exactly that record. */
	lseek(fd2, 0, SEEK_SET);
	r = rec_reader_open(fd2, REC_NONE, 0, 0);
	{
		uint64_t off, len;
		int got = 0;

		while (rec_read(r, &p, &n) == 1)
			got++;
		TEST(rec_offset(r) == 16, "fault at offset 16");
		TEST(rec_resync(r, &off, &len) == 1 && off == 16 && len == 17,
		    "resync skips bytes 16..33");
		while (rec_read(r, &p, &n) == 1)
			got++;
		TEST_INT(got, ==, 3, "3 records recovered");
	}
	rec_reader_free(r);
	close(fd2);
	b.p[16 + 12] ^= 1;
	b.p[33 + 3] ^= 0x40;	/* length of record 2 */
	fd2 = bytes_file(b.p, 70);
	TEST_INT(count(fd2, REC_NONE, 0, &e), ==, 2, "bad length: 2 records before");
	TEST(e == REC_BAD_LEN_CRC, "bad length: bad_length_crc");
	lseek(fd2, 0, SEEK_SET);
	r = rec_reader_open(fd2, REC_NONE, 0, 0);
	{
		uint64_t off, len;
		int got = 0;

		while (rec_read(r, &p, &n) == 1)
			got++;
		TEST(rec_resync(r, &off, &len) == 1 && off == 33 && len == 18,
		    "resync after a bad length finds the next header");
		while (rec_read(r, &p, &n) == 1)
			got++;
		TEST_INT(got, ==, 3, "3 records recovered");
	}
	rec_reader_free(r);
	close(fd2);
	rp_buf_free(&b);
	close(fd);

	/* A huge length on a pipe is refused before any allocation. */
	{
		uint8_t h[12];

		rec_frame_header(h, 1ull << 40);
		if (pipe(pfd) == 0) {
			if (write(pfd[1], h, 12) != 12)
				abort();
			close(pfd[1]);
			r = rec_reader_open(pfd[0], REC_NONE, 0, 0);
			TEST(rec_read(r, &p, &n) == -1 && rec_error(r) == REC_TOO_LARGE,
			    "2^40 length on a pipe: record_too_large");
			rec_reader_free(r);
			close(pfd[0]);
		}
		fd2 = bytes_file(h, 12);
		r = rec_reader_open(fd2, REC_NONE, 0, 0);
		TEST(rec_read(r, &p, &n) == -1 && rec_error(r) == REC_TRUNC_RECORD,
		    "2^40 length in a file: truncated_record");
		rec_reader_free(r);
		close(fd2);
	}
	/* A record larger than the window, through a pipe. */
	if (pipe(pfd) == 0 && fork() == 0) {
		struct rec_writer *w = rec_writer_open(pfd[1], REC_NONE, -1);
		uint8_t *big = calloc(1, 3 << 20);

		close(pfd[0]);
		big[0] = 1;
		big[(3 << 20) - 1] = 2;
		rec_write(w, big, 3 << 20);
		rec_writer_close(w);
		_exit(0);
	}
	close(pfd[1]);
	r = rec_reader_open(pfd[0], REC_AUTO, 0, 0);
	TEST(rec_read(r, &p, &n) == 1 && n == 3u << 20 && p[0] == 1 && p[n - 1] == 2,
	    "3 MiB record through a pipe");
	TEST(rec_read(r, &p, &n) == 0, "then the end");
	rec_reader_free(r);
	close(pfd[0]);

	/*
	 * A gzip stream whose trailer is bad, holding a record and garbage:
	 * the decompression fault surfaces after recovery with its message.
	 */
	{
		uint64_t off, len;
		int ret;

		{
			/* Records and garbage inside one gzip stream. */
			struct buf plain = { 0 };
			uint8_t h[12], f4[4];

			rec_frame_header(h, 3);
			rp_buf_append(&plain, h, 12);
			rp_buf_append(&plain, "abc", 3);
			rp_put_le32(f4, rec_frame_footer("abc", 3));
			rp_buf_append(&plain, f4, 4);
			rp_buf_append(&plain, "garbage-garbage-garbage", 23);
			{
				z_stream z;
				uint8_t out[512];

				memset(&z, 0, sizeof(z));
				deflateInit2(&z, 6, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY);
				z.next_in = plain.p;
				z.avail_in = (uInt)plain.len;
				z.next_out = out;
				z.avail_out = sizeof(out);
				deflate(&z, Z_FINISH);
				memset(&b, 0, sizeof(b));
				rp_buf_append(&b, out, sizeof(out) - z.avail_out);
				deflateEnd(&z);
			}
			rp_buf_free(&plain);
		}
		b.p[b.len - 8] ^= 0xff;	/* CRC-32 in the trailer */
		fd2 = bytes_file(b.p, b.len);
		r = rec_reader_open(fd2, REC_AUTO, 0, 0);
		TEST(rec_read(r, &p, &n) == 1 && n == 3, "record before the garbage");
		TEST(rec_read(r, &p, &n) == -1 && rec_error(r) == REC_BAD_LEN_CRC,
		    "garbage: bad_length_crc");
		ret = rec_resync(r, &off, &len);
		while (ret == 1 && rec_read(r, &p, &n) == 1)
			;
		TEST(rec_error(r) == REC_DECOMPRESS && rec_strerror(r)[0] != '\0',
		    "the held gzip fault keeps its message: %s", rec_strerror(r));
		rec_reader_free(r);
		close(fd2);
		rp_buf_free(&b);
	}

	/* A Git LFS pointer. */
	{
		const char *lfs = "version https://git-lfs.github.com/spec/v1\n"
		    "oid sha256:0123\nsize 12345\n";

		fd2 = bytes_file(lfs, strlen(lfs));
		count(fd2, REC_AUTO, 0, &e);
		TEST(e == REC_LFS, "Git LFS pointer recognised");
		close(fd2);
	}
	/* Writing to a closed pipe reports EPIPE. */
	if (pipe(pfd) == 0) {
		struct rec_writer *w = rec_writer_open(pfd[1], REC_NONE, -1);
		uint8_t big[1 << 16];

		signal(SIGPIPE, SIG_IGN);
		close(pfd[0]);
		memset(big, 0, sizeof(big));
		for (i = 0; i < 10 && rec_write(w, big, sizeof(big)) == 0; i++)
			;
		TEST(i < 10 && errno == EPIPE, "write to a closed pipe: EPIPE");
		rec_writer_close(w);
		close(pfd[1]);
	}
	test_write_in_place();
	test_framed();
	test_header_ok();
	return tap_done();
}
