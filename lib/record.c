/*
 * TFRecord framing over plain, zlib and gzip streams.
 *
 * The reader keeps a window 'buf' over the uncompressed stream:
 * buf[pos..len) are bytes not yet consumed and 'base' is the stream
 * offset of buf[0].  Compressed input goes through a second buffer
 * 'in' of raw bytes.  The window grows only as far as data actually
 * arrives, so a lying length field never sizes an allocation by itself.
 */
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "buf.h"
#include "crc32c.h"
#include "io.h"
#include "record.h"

#define WINDOW	(1u << 20)	/* initial window and read size */
#define INBUF	(256u << 10)	/* raw compressed input chunk */
#ifndef IOV_MAX
#define IOV_MAX	16	/* POSIX's least */
#endif
#define OUTBUF	(256u << 10)	/* writer buffer, as TensorFlow's */
#define SKIP_READ (64u << 10)	/* read size when seeking over payloads */

static const char lfs_magic[] = "version https://git-lfs.github.com/spec/v1";

struct rec_reader {
	int		 fd;
	enum rec_comp	 comp;
	unsigned	 flags;
	uint64_t	 max_len;

	uint8_t		*buf;
	size_t		 pos, len, cap;
	uint64_t	 base;
	int		 eof;		/* no more stream bytes will come */

	uint8_t		*in;		/* raw input for inflate */
	size_t		 in_pos, in_len;
	int		 in_eof;
	uint64_t	 raw_read;
	z_stream	 z;
	int		 zinit;
	int		 zdone;		/* the stream ended (zlib) */

	int		 seekable;	/* regular uncompressed file */
	uint64_t	 file_end;	/* stream offset of the end of file (or of the range) */
	int		 limited;	/* rec_reader_range(): read up to 'limit' */
	uint64_t	 limit;
	uint64_t	 real_end;	/* the end of the file when limited */

	enum rec_err	 err;
	enum rec_err	 held;		/* a fault found behind good output */
	char		 heldmsg[256];
	int		 errnum;
	uint64_t	 index;
	uint64_t	 offset;
	int		 started;
	char		 msg[256];
};


static int end_of_member(struct rec_reader *r);

static int
fail(struct rec_reader *r, enum rec_err e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(struct rec_reader *r, enum rec_err e, const char *fmt, ...)
{
	va_list ap;

	r->err = e;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* Read raw bytes from the fd into 'in' (compressed modes). */
static int
fill_in(struct rec_reader *r)
{
	ssize_t n;

	if (r->in_pos > 0 && r->in_pos == r->in_len)
		r->in_pos = r->in_len = 0;
	if (r->in_len == INBUF) {
		memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
		r->in_len -= r->in_pos;
		r->in_pos = 0;
	}
	n = rp_read(r->fd, r->in + r->in_len, INBUF - r->in_len);
	if (n == -1) {
		r->errnum = errno;
		return fail(r, REC_EIO, "%s", strerror(errno));
	}
	if (n == 0)
		r->in_eof = 1;
	r->in_len += (size_t)n;
	r->raw_read += (uint64_t)n;
	return 0;
}

/*
 * Inflate into buf[len..cap), which has room.  Returns 0 after some
 * output or at the clean end (r->eof set), -1 on a fault.
 */
static int inflate_step(struct rec_reader *r);

/*
 * Inflate some more.  A fault found after some output was made is held
 * back until that output has been read, so every good record comes out
 * first.
 */
static int
inflate_some(struct rec_reader *r)
{
	size_t before = r->len;

	if (r->held != REC_OK) {
		r->err = r->held;
		memcpy(r->msg, r->heldmsg, sizeof(r->msg));
		return -1;
	}
	if (inflate_step(r) == 0)
		return 0;
	if (r->len > before && r->err != REC_ENOMEM) {
		r->held = r->err;
		memcpy(r->heldmsg, r->msg, sizeof(r->msg));
		r->err = REC_OK;
		return 0;
	}
	return -1;
}

static int
inflate_step(struct rec_reader *r)
{
	int ret;
	size_t before = r->len;

	for (;;) {
		if (r->zdone) {
			r->eof = 1;
			return 0;
		}
		if (r->in_pos == r->in_len && !r->in_eof && fill_in(r) == -1)
			return -1;
		if (r->in_pos == r->in_len && r->in_eof && r->z.total_in == 0 &&
		    r->raw_read == 0) {
			r->zdone = 1;	/* a 0-byte file: no records */
			continue;
		}
		r->z.next_in = r->in + r->in_pos;
		r->z.avail_in = (uInt)(r->in_len - r->in_pos);
		r->z.next_out = r->buf + r->len;
		r->z.avail_out = (uInt)(r->cap - r->len);
		ret = inflate(&r->z, Z_NO_FLUSH);
		r->in_pos = r->in_len - r->z.avail_in;
		r->len = r->cap - r->z.avail_out;
		switch (ret) {
		case Z_STREAM_END:
			if (end_of_member(r) == -1)
				return -1;
			break;
		case Z_OK:
			break;
		case Z_BUF_ERROR:
			if (r->in_pos == r->in_len && r->in_eof)
				return fail(r, REC_TRUNC_STREAM,
				    "%s stream ends early (truncated file)",
				    rec_compname(r->comp));
			break;
		case Z_MEM_ERROR:
			r->errnum = ENOMEM;
			return fail(r, REC_ENOMEM, "out of memory");
		default:
			return fail(r, REC_DECOMPRESS, "%s data corrupt: %s",
			    rec_compname(r->comp),
			    r->z.msg ? r->z.msg : "inflate failed");
		}
		if (r->len > before)
			return 0;
	}
}

/*
 * At the end of a zlib stream or gzip member: zlib ends the input
 * (anything after it is an error unless TF-compatible); gzip goes on
 * with the next member, and anything else after a member is an error.
 */
static int
end_of_member(struct rec_reader *r)
{
	while (r->in_len - r->in_pos < 2 && !r->in_eof)
		if (fill_in(r) == -1)
			return -1;
	if (r->in_pos == r->in_len) {
		r->zdone = 1;
		return 0;
	}
	if (r->comp == REC_ZLIB) {
		r->zdone = 1;
		if (r->flags & REC_TF_COMPAT)
			return 0;
		return fail(r, REC_TRAILING, "data after the end of the zlib "
		    "stream (TensorFlow ignores it; --tf-compat does too)");
	}
	if (r->in_len - r->in_pos < 2 || r->in[r->in_pos] != 0x1f ||
	    r->in[r->in_pos + 1] != 0x8b)
		return fail(r, REC_TRAILING,
		    "data after the last gzip member is not a gzip member");
	inflateReset(&r->z);
	return 0;
}

/* Move unread bytes to the front of the window. */
static void
compact(struct rec_reader *r)
{
	if (r->pos == 0)
		return;
	memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->len -= r->pos;
	r->base += r->pos;
	r->pos = 0;
}

/*
 * Make 'need' bytes available at buf[pos], or as many as the stream
 * has.  Returns the bytes available (may be less than need only at the
 * end of the stream), or -1 on a fault.  The window grows at most to
 * twice what has arrived.
 */
static ssize_t
fill(struct rec_reader *r, size_t need)
{
	ssize_t n;
	uint8_t *p;

	while (r->len - r->pos < need && !r->eof) {
		if (r->len == r->cap) {
			compact(r);
			if (r->len == r->cap) {
				if (r->cap > SIZE_MAX / 2 ||
				    (p = realloc(r->buf, r->cap * 2)) == NULL) {
					r->errnum = ENOMEM;
					return fail(r, REC_ENOMEM, "out of memory "
					    "for a %zu-byte record", need);
				}
				r->buf = p;
				r->cap *= 2;
			}
		}
		if (r->comp == REC_NONE) {
			size_t want = r->cap - r->len;

			/*
			 * Counting a file we can seek in: read little at a
			 * time, so that large payloads are seeked over, not read.
			 */
			if (r->seekable && (r->flags & REC_SKIP_DATA) &&
			    want > SKIP_READ && need - (r->len - r->pos) <= SKIP_READ)
				want = SKIP_READ;
			if (r->limited && want > r->limit - (r->base + r->len))
				want = (size_t)(r->limit - (r->base + r->len));
			if (want == 0) {
				r->eof = 1;
				break;
			}
			n = rp_read(r->fd, r->buf + r->len, want);
			if (n == -1) {
				r->errnum = errno;
				return fail(r, REC_EIO, "%s", strerror(errno));
			}
			if (n == 0)
				r->eof = 1;
			r->len += (size_t)n;
		} else if (inflate_some(r) == -1)
			return -1;
	}
	return (ssize_t)(r->len - r->pos < need ? r->len - r->pos : need);
}

/* fill(), without the call when the bytes are there already. */
static inline ssize_t
have(struct rec_reader *r, size_t need)
{
	if (r->len - r->pos >= need)
		return (ssize_t)need;
	return fill(r, need);
}

const char *
rec_compname(enum rec_comp c)
{
	switch (c) {
	case REC_AUTO: return "auto";
	case REC_NONE: return "none";
	case REC_ZLIB: return "zlib";
	case REC_GZIP: return "gzip";
	}
	return "?";
}

int
rec_parse_comp(const char *s)
{
	if (strcmp(s, "auto") == 0)
		return REC_AUTO;
	if (strcmp(s, "none") == 0)
		return REC_NONE;
	if (strcmp(s, "zlib") == 0)
		return REC_ZLIB;
	if (strcmp(s, "gzip") == 0)
		return REC_GZIP;
	return -1;
}

const char *
rec_errname(enum rec_err e)
{
	switch (e) {
	case REC_OK: return "ok";
	case REC_EIO: return "io_error";
	case REC_ENOMEM: return "out_of_memory";
	case REC_TRUNC_HEADER: return "truncated_header";
	case REC_TRUNC_RECORD: return "truncated_record";
	case REC_BAD_LEN_CRC: return "bad_length_crc";
	case REC_BAD_DATA_CRC: return "bad_data_crc";
	case REC_TOO_LARGE: return "record_too_large";
	case REC_TRUNC_STREAM: return "truncated_stream";
	case REC_DECOMPRESS: return "decompress_error";
	case REC_TRAILING: return "trailing_data";
	case REC_LFS: return "git_lfs_pointer";
	}
	return "?";
}

static int
is_zlib_header(const uint8_t *p)
{
	return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 &&
	    ((unsigned)p[0] * 256 + p[1]) % 31 == 0;
}

int
rec_header_ok(const uint8_t h[12])
{
	return rp_le32(h + 8) == crc32c_mask(crc32c_8(h));
}

enum rec_comp
rec_sniff(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return REC_GZIP;
	if (n >= 2 && is_zlib_header(p) && !(n >= 12 && rec_header_ok(p)))
		return REC_ZLIB;
	return REC_NONE;
}

static int
start_inflate(struct rec_reader *r)
{
	memset(&r->z, 0, sizeof(r->z));
	if (inflateInit2(&r->z, r->comp == REC_GZIP ? 31 : 15) != Z_OK) {
		r->errnum = ENOMEM;
		return fail(r, REC_ENOMEM, "cannot start inflate");
	}
	r->zinit = 1;
	return 0;
}

/*
 * First read: look at up to 64 bytes to recognise a Git LFS pointer
 * and, in auto mode, the compression.  Bytes read so far become the
 * start of the raw input when the stream is compressed.
 */
static int
start(struct rec_reader *r)
{
	struct stat st;
	ssize_t k;
	size_t n = 0, first = 64;
	off_t here;
	enum rec_comp c = r->comp;

	r->started = 1;
	if ((r->in = malloc(INBUF)) == NULL) {
		r->errnum = errno;
		return fail(r, REC_ENOMEM, "out of memory");
	}
	/* Up to 64 bytes, however the pipe delivers them. */
	if (r->limited && r->limit - r->base < first)
		first = (size_t)(r->limit - r->base);
	while (n < first) {
		if ((k = rp_read(r->fd, r->in + n, first - n)) == -1) {
			r->errnum = errno;
			return fail(r, REC_EIO, "%s", strerror(errno));
		}
		if (k == 0) {
			r->in_eof = 1;
			break;
		}
		n += (size_t)k;
	}
	r->raw_read = n;
	if (c == REC_AUTO)
		c = rec_sniff(r->in, n);
	if (c == REC_NONE && n >= sizeof(lfs_magic) - 1 &&
	    memcmp(r->in, lfs_magic, sizeof(lfs_magic) - 1) == 0)
		return fail(r, REC_LFS, "this is a Git LFS pointer, not data; "
		    "run 'git lfs pull'");
	r->comp = c;
	if (c != REC_NONE) {
		r->in_len = n;
		return start_inflate(r);
	}
	memcpy(r->buf, r->in, n);
	r->len = n;
	r->eof = r->in_eof;
	free(r->in);
	r->in = NULL;
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (here = lseek(r->fd, 0, SEEK_CUR)) != -1) {
		r->seekable = 1;
		r->file_end = r->base + (uint64_t)st.st_size -
		    ((uint64_t)here - r->len);
		r->real_end = r->file_end;
		if (r->limited && r->limit < r->file_end)
			r->file_end = r->limit;
	}
	return 0;
}

int
rec_reader_range(struct rec_reader *r, uint64_t off, uint64_t len)
{
	if (r->started || len > UINT64_MAX - off || off > INT64_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (lseek(r->fd, (off_t)off, SEEK_SET) == -1)
		return -1;
	r->comp = REC_NONE;
	r->base = off;
	r->limited = 1;
	r->limit = off + len;
	return 0;
}

/*
 * A record or header that runs past the end of the range but not of the
 * file: the range was cut inside a record.
 */
static int
crosses(struct rec_reader *r, uint64_t end)
{
	if (!r->limited || !r->seekable || end <= r->limit || end > r->real_end)
		return 0;
	return fail(r, REC_TRUNC_RECORD, "record crosses the end of the part "
	    "at offset %llu (the part boundary was found inside a record, "
	    "perhaps one that holds records itself; read without --part)",
	    (unsigned long long)r->limit);
}

struct rec_reader *
rec_reader_open(int fd, enum rec_comp comp, unsigned flags, uint64_t max_len)
{
	struct rec_reader *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if ((r->buf = malloc(WINDOW)) == NULL) {
		free(r);
		return NULL;
	}
	r->cap = WINDOW;
	r->fd = fd;
	r->comp = comp;
	r->flags = flags;
	r->max_len = max_len ? max_len : REC_DEFAULT_MAX;
	return r;
}

void
rec_reader_free(struct rec_reader *r)
{
	if (r == NULL)
		return;
	if (r->zinit)
		inflateEnd(&r->z);
	free(r->in);
	free(r->buf);
	free(r);
}

/* Drop 'n' bytes of the stream, seeking over them where possible. */
static int
discard(struct rec_reader *r, uint64_t n)
{
	size_t have = r->len - r->pos;
	ssize_t got;

	if (n <= have) {
		r->pos += (size_t)n;
		return 0;
	}
	n -= have;
	r->base += r->len;
	r->pos = r->len = 0;
	if (r->seekable && lseek(r->fd, (off_t)n, SEEK_CUR) != -1) {
		r->base += n;
		return 0;
	}
	while (n > 0) {
		if ((got = fill(r, n < r->cap ? (size_t)n : r->cap)) == -1)
			return -1;
		if (got == 0)
			return 1;	/* short */
		n -= (uint64_t)got;
		r->pos += (size_t)got;
		if (r->pos == r->len) {
			r->base += r->len;
			r->pos = r->len = 0;
		}
	}
	return 0;
}

/*
 * A hint for a fault at the start of the (uncompressed) stream: its
 * bytes are perhaps compressed, or perhaps not records at all, however
 * they came.
 */
static const char *
compression_hint(const struct rec_reader *r)
{
	if (r->base + r->pos != 0)
		return "";
	if (r->comp == REC_NONE && r->len >= 2 && r->buf[0] == 0x1f &&
	    r->buf[1] == 0x8b)
		return " (the input looks gzip-compressed: try --compression gzip)";
	if (r->comp == REC_NONE && r->len >= 2 && is_zlib_header(r->buf))
		return " (the input may be zlib-compressed: try --compression zlib)";
	if (r->index != 0)
		return "";
	/* What TFRecord readers do not read, named for what it is. */
	if (r->len >= 6 && memcmp(r->buf, "\xfd" "7zXZ\0", 6) == 0)
		return " (the input is xz-compressed, which no TFRecord reader "
		    "reads: decompress it first, xz -dc)";
	if (r->len >= 4 && memcmp(r->buf, "\x28\xb5\x2f\xfd", 4) == 0)
		return " (the input is zstd-compressed, which no TFRecord reader "
		    "reads: decompress it first, zstd -dc)";
	if (r->len >= 4 && memcmp(r->buf, "BZh", 3) == 0 &&
	    r->buf[3] >= '1' && r->buf[3] <= '9')
		return " (the input is bzip2-compressed, which no TFRecord reader "
		    "reads: decompress it first, bzip2 -dc)";
	if (r->len >= 4 && memcmp(r->buf, "\x04\x22\x4d\x18", 4) == 0)
		return " (the input is lz4-compressed, which no TFRecord reader "
		    "reads: decompress it first, lz4 -dc)";
	if (r->len >= 9 && memcmp(r->buf, "MMIDIDX\0\0", 9) == 0)
		return " (this is the .idx of a fairseq or Megatron token "
		    "dataset, not records: mmap-index reads it)";
	return " (is this a TFRecord file?)";
}

int
rec_read(struct rec_reader *r, const uint8_t **p, size_t *n)
{
	const uint8_t *h;
	uint64_t len, total;
	ssize_t got;
	int ret;

	if (r->err != REC_OK)
		return -1;
	if (!r->started && start(r) == -1)
		return -1;
	r->offset = r->base + r->pos;
	if ((got = have(r, 12)) == -1)
		return -1;
	if (got == 0)
		return 0;
	if (got < 12) {
		if (crosses(r, r->offset + 12) == -1)
			return -1;
		if (r->flags & REC_TF_COMPAT)
			return 0;
		return fail(r, REC_TRUNC_HEADER,
		    "truncated header: %zd bytes after the last record%s", got,
		    compression_hint(r));
	}
	h = r->buf + r->pos;
	if (!rec_header_ok(h))
		return fail(r, REC_BAD_LEN_CRC, "length CRC mismatch%s",
		    compression_hint(r));
	len = rp_le64(h);
	if (len > UINT64_MAX - 16)
		return fail(r, REC_TRUNC_RECORD,
		    "length %llu is impossible", (unsigned long long)len);
	total = len + 16;
	if (r->seekable) {
		if (total > r->file_end - r->offset &&
		    crosses(r, r->offset + total) == -1)
			return -1;
		if (total > r->file_end - r->offset)
			return fail(r, REC_TRUNC_RECORD, "truncated record: "
			    "length %llu needs %llu bytes after its header, "
			    "%llu are left", (unsigned long long)len,
			    (unsigned long long)len + 4,
			    (unsigned long long)(r->file_end - r->offset - 12));
	} else if (len > r->max_len)
		return fail(r, REC_TOO_LARGE, "length %llu exceeds the limit "
		    "of %llu bytes (--max-record-size)",
		    (unsigned long long)len, (unsigned long long)r->max_len);
	if (total > SIZE_MAX / 2)
		return fail(r, REC_TOO_LARGE, "length %llu too large",
		    (unsigned long long)len);

	if (r->flags & REC_SKIP_DATA) {
		if ((ret = discard(r, total)) == -1)
			return -1;
		if (ret == 1)
			return fail(r, REC_TRUNC_RECORD, "truncated record");
		r->index++;
		*p = NULL;
		*n = (size_t)len;
		return 1;
	}
	if ((got = have(r, (size_t)total)) == -1)
		return -1;
	if ((uint64_t)got < total)
		return fail(r, REC_TRUNC_RECORD, "truncated record: length "
		    "%llu needs %llu bytes after its header, %llu are left",
		    (unsigned long long)len, (unsigned long long)len + 4,
		    (unsigned long long)(got > 12 ? got - 12 : 0));
	h = r->buf + r->pos;
	if (!(r->flags & REC_NO_CRC) && !rec_data_ok(h + 12, (size_t)len,
	    rp_le32(h + 12 + len)))
		return fail(r, REC_BAD_DATA_CRC, "%s", rec_data_crc_msg);
	r->pos += (size_t)total;
	r->index++;
	*p = h + 12;
	*n = (size_t)len;
	return 1;
}

long
rec_read_framed(struct rec_reader *r, struct buf *out, size_t want, size_t max)
{
	size_t got = 0, from, pos, avail;
	long k = 0, k0;
	unsigned flags;
	const uint8_t *p, *h;
	uint64_t len;
	size_t n;
	int rc;

	while ((size_t)k < max && got < want) {
		/*
		 * The records already whole in the window, walked by their
		 * lengths (each length's CRC checked) and copied at once.
		 */
		from = pos = r->pos;
		avail = r->len - r->pos;
		k0 = k;
		while (r->err == REC_OK && r->started && (size_t)k < max &&
		    got < want && avail >= 12) {
			h = r->buf + pos;
			len = rp_le64(h);
			if (len > avail - 12 || avail - 12 - len < 4 ||
			    !rec_header_ok(h) || (!r->seekable && len > r->max_len))
				break;	/* rec_read() says what is wrong */
			if (len > want && k > 0)
				break;	/* a long record comes first in a call */
			r->offset = r->base + pos;
			pos += (size_t)len + 16;
			avail -= (size_t)len + 16;
			got += (size_t)len + 16;
			r->index++;
			k++;
		}
		if (pos > from) {
			if (rp_buf_append(out, r->buf + from, pos - from) == -1) {
				/* The fault is at the first record not returned. */
				r->index -= (uint64_t)(k - k0);
				r->offset = r->base + from;
				r->errnum = errno;
				(void)fail(r, REC_ENOMEM, "out of memory");
				return k0 > 0 ? k0 : -1;
			}
			r->pos = pos;
			continue;
		}
		/* One record the way rec_read() takes it, CRC left to the caller. */
		if (k > 0) {
			uint64_t next;

			if ((rc = rec_peek(r, &next)) != 1 || next > want)
				break;	/* the end, a fault or a long record: the next call */
		}
		flags = r->flags;
		r->flags |= REC_NO_CRC;
		rc = rec_read(r, &p, &n);
		r->flags = flags;
		if (rc == 0)
			break;
		if (rc == -1)
			return k > 0 ? k : -1;
		if (rp_buf_append(out, p - 12, n + 16) == -1) {
			r->index--;	/* not returned after all */
			r->errnum = errno;
			(void)fail(r, REC_ENOMEM, "out of memory for a %zu-byte "
			    "record", n);
			return k > 0 ? k : -1;
		}
		got += n + 16;
		k++;
	}
	return k;
}

int
rec_peek(struct rec_reader *r, uint64_t *len)
{
	ssize_t got;
	uint64_t at;

	if (r->err != REC_OK)
		return -1;
	if (!r->started && start(r) == -1)
		return -1;
	at = r->base + r->pos;
	if ((got = have(r, 12)) == -1) {
		/* The fault is the next record's, as rec_read() names it. */
		r->offset = at;
		return -1;
	}
	if (got < 12 || !rec_header_ok(r->buf + r->pos))
		return got == 0 ? 0 : -1;
	*len = rp_le64(r->buf + r->pos);
	return 1;
}

int
rec_resync(struct rec_reader *r, uint64_t *skip_off, uint64_t *skip_len)
{
	const uint8_t *h;
	uint64_t len, from;
	ssize_t got;

	switch (r->err) {
	case REC_TRUNC_HEADER: case REC_TRUNC_RECORD: case REC_BAD_LEN_CRC:
	case REC_BAD_DATA_CRC: case REC_TOO_LARGE:
		break;
	default:
		return -1;
	}
	from = r->offset;
	/* A bad payload under a good header: the record's extent is known. */
	if (r->err == REC_BAD_DATA_CRC) {
		len = rp_le64(r->buf + r->pos);
		r->pos += (size_t)len + 16;
	} else
		r->pos++;
	r->err = REC_OK;
	r->msg[0] = '\0';
	r->index++;
	for (;;) {
		if ((got = fill(r, 12)) == -1)
			return -1;
		if (got < 12) {
			r->pos = r->len;
			*skip_off = from;
			*skip_len = r->base + r->pos - from;
			r->eof = 1;
			return 0;
		}
		h = r->buf + r->pos;
		if (rec_header_ok(h)) {
			len = rp_le64(h);
			if (len <= r->max_len && (!r->seekable ||
			    len + 16 <= r->file_end - (r->base + r->pos))) {
				if ((got = fill(r, (size_t)len + 16)) == -1)
					return -1;
				h = r->buf + r->pos;
				if ((uint64_t)got == len + 16 &&
				    rp_le32(h + 12 + len) == crc32c_mask(
				    crc32c_value(h + 12, (size_t)len)))
					break;
			}
		}
		r->pos++;
	}
	*skip_off = from;
	*skip_len = r->base + r->pos - from;
	return 1;
}

const char rec_data_crc_msg[] = "payload CRC mismatch";

int
rec_data_ok(const void *p, size_t n, uint32_t footer)
{
	return footer == crc32c_mask(crc32c_value(p, n));
}

uint64_t rec_index(const struct rec_reader *r) { return r->index; }
uint64_t rec_offset(const struct rec_reader *r) { return r->offset; }
uint64_t rec_position(const struct rec_reader *r) { return r->base + r->pos; }
enum rec_err rec_error(const struct rec_reader *r) { return r->err; }
int rec_errno(const struct rec_reader *r) { return r->errnum; }
const char *rec_strerror(const struct rec_reader *r) { return r->msg; }
enum rec_comp rec_compression(const struct rec_reader *r) { return r->comp; }

/* Writer */

struct rec_writer {
	int		 fd;
	enum rec_comp	 comp;
	uint8_t		*out;
	size_t		 olen;
	z_stream	 z;
	int		 zinit;
	int		 inplace;	/* rec_write_begin() gave room in 'out' */
	uint8_t		*side;		/* or here, for records that do not fit */
	size_t		 sidecap;
	struct iovec	*iov;		/* rec_writev()'s, with the frame */
	size_t		 iovcap;
};

void
rec_frame_header(uint8_t out[12], uint64_t n)
{
	rp_put_le64(out, n);
	rp_put_le32(out + 8, crc32c_mask(crc32c_value(out, 8)));
}

uint32_t
rec_frame_footer(const void *p, size_t n)
{
	return crc32c_mask(crc32c_value(p, n));
}

static int
wflush(struct rec_writer *w)
{
	if (rp_write_full(w->fd, w->out, w->olen) == -1)
		return -1;
	w->olen = 0;
	return 0;
}

struct rec_writer *
rec_writer_open(int fd, enum rec_comp comp, int level)
{
	struct rec_writer *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	if ((w->out = malloc(OUTBUF)) == NULL) {
		free(w);
		return NULL;
	}
	w->fd = fd;
	w->comp = comp == REC_AUTO ? REC_NONE : comp;
	if (w->comp != REC_NONE) {
		/* TensorFlow's parameters: memLevel 9, one stream per file. */
		if (deflateInit2(&w->z, level < 0 ? Z_DEFAULT_COMPRESSION : level,
		    Z_DEFLATED, w->comp == REC_GZIP ? 31 : 15, 9,
		    Z_DEFAULT_STRATEGY) != Z_OK) {
			free(w->out);
			free(w);
			errno = EINVAL;
			return NULL;
		}
		w->zinit = 1;
	}
	return w;
}

static int
deflate_in(struct rec_writer *w, const void *p, size_t n, int flush)
{
	int ret;

	w->z.next_in = (Bytef *)(uintptr_t)p;
	w->z.avail_in = (uInt)n;
	for (;;) {
		w->z.next_out = w->out + w->olen;
		w->z.avail_out = (uInt)(OUTBUF - w->olen);
		ret = deflate(&w->z, flush);
		w->olen = OUTBUF - w->z.avail_out;
		if (ret == Z_STREAM_ERROR) {
			errno = EINVAL;
			return -1;
		}
		if (w->olen == OUTBUF && wflush(w) == -1)
			return -1;
		if (flush == Z_FINISH) {
			if (ret == Z_STREAM_END)
				return 0;
			continue;
		}
		if (w->z.avail_in == 0 && w->z.avail_out > 0)
			return 0;
	}
}

static int
put(struct rec_writer *w, const void *p, size_t n)
{
	if (w->comp != REC_NONE) {
		while (n > 0) {
			size_t k = n > (1u << 30) ? (1u << 30) : n;

			if (deflate_in(w, p, k, Z_NO_FLUSH) == -1)
				return -1;
			p = (const uint8_t *)p + k;
			n -= k;
		}
		return 0;
	}
	if (n > OUTBUF - w->olen) {
		if (wflush(w) == -1)
			return -1;
		/* large payload: write it straight through */
		if (n >= OUTBUF)
			return rp_write_full(w->fd, p, n);
	}
	memcpy(w->out + w->olen, p, n);
	w->olen += n;
	return 0;
}

int
rec_write(struct rec_writer *w, const void *p, size_t n)
{
	uint8_t h[12], f[4];

	rec_frame_header(h, n);
	rp_put_le32(f, rec_frame_footer(p, n));
	if (w->comp == REC_NONE && 16 + n <= OUTBUF - w->olen) {
		memcpy(w->out + w->olen, h, 12);
		if (n > 0)
			memcpy(w->out + w->olen + 12, p, n);
		memcpy(w->out + w->olen + 12 + n, f, 4);
		w->olen += 16 + n;
		return 0;
	}
	if (put(w, h, 12) == -1 || put(w, p, n) == -1 || put(w, f, 4) == -1)
		return -1;
	return 0;
}

int
rec_writev(struct rec_writer *w, const struct iovec *iov, size_t n,
    const uint32_t *known)
{
	uint8_t h[12], f[4];
	uint32_t crc = 0;
	size_t len = 0, i, k, m;
	ssize_t r;

	for (i = 0; i < n; i++) {
		len += iov[i].iov_len;
		if (known == NULL)
			crc = crc32c_extend(crc, iov[i].iov_base, iov[i].iov_len);
	}
	if (known != NULL)
		crc = *known;
	rec_frame_header(h, len);
	rp_put_le32(f, crc32c_mask(crc));
	if (w->comp != REC_NONE || 16 + len <= OUTBUF - w->olen) {
		if (put(w, h, 12) == -1)
			return -1;
		for (i = 0; i < n; i++)
			if (put(w, iov[i].iov_base, iov[i].iov_len) == -1)
				return -1;
		return put(w, f, 4);
	}
	/* a large record: the pieces go out as they are, buffered bytes first */
	if (n + 2 > w->iovcap) {
		struct iovec *q = realloc(w->iov, (n + 2) * sizeof *q);

		if (q == NULL)
			return -1;
		w->iov = q;
		w->iovcap = n + 2;
	}
	if (wflush(w) == -1)
		return -1;
	w->iov[0] = (struct iovec){ h, 12 };
	memcpy(w->iov + 1, iov, n * sizeof *iov);
	w->iov[n + 1] = (struct iovec){ f, 4 };
	for (i = 0, n += 2; i < n;) {
		m = n - i < IOV_MAX ? n - i : IOV_MAX;
		if ((r = writev(w->fd, w->iov + i, (int)m)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		/* past the pieces written whole, into the one cut short */
		for (k = (size_t)r; i < n && k >= w->iov[i].iov_len; i++)
			k -= w->iov[i].iov_len;
		if (k > 0) {
			w->iov[i].iov_base = (uint8_t *)w->iov[i].iov_base + k;
			w->iov[i].iov_len -= k;
		}
	}
	return 0;
}

void *
rec_write_begin(struct rec_writer *w, size_t max)
{
	void *p;

	w->inplace = w->comp == REC_NONE && max <= OUTBUF - 16;
	if (w->inplace) {
		if (16 + max > OUTBUF - w->olen && wflush(w) == -1)
			return NULL;
		return w->out + w->olen + 12;
	}
	if (w->side == NULL || max > w->sidecap) {
		if ((p = realloc(w->side, max ? max : 1)) == NULL)
			return NULL;
		w->side = p;
		w->sidecap = max;
	}
	return w->side;
}

int
rec_write_end(struct rec_writer *w, size_t n)
{
	uint8_t *h;

	if (!w->inplace)
		return rec_write(w, w->side, n);
	h = w->out + w->olen;
	rec_frame_header(h, n);
	rp_put_le32(h + 12 + n, rec_frame_footer(h + 12, n));
	w->olen += 16 + n;
	return 0;
}

int
rec_writer_flush(struct rec_writer *w)
{
	if (w->comp != REC_NONE && deflate_in(w, NULL, 0, Z_PARTIAL_FLUSH) == -1)
		return -1;
	return wflush(w);
}

int
rec_writer_close(struct rec_writer *w)
{
	int ret = 0, saved;

	if (w == NULL)
		return 0;
	if (w->comp != REC_NONE && deflate_in(w, NULL, 0, Z_FINISH) == -1)
		ret = -1;
	if (ret == 0 && wflush(w) == -1)
		ret = -1;
	saved = errno;
	if (w->zinit)
		deflateEnd(&w->z);
	free(w->side);
	free(w->iov);
	free(w->out);
	free(w);
	errno = saved;
	return ret;
}
