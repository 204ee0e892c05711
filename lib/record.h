/*
 * TFRecord streams: a reader that checks every CRC, sniffs or is told
 * the compression, and never sizes a buffer from an unchecked length;
 * and a writer that frames records and compresses them with
 * TensorFlow's deflate parameters.
 */
#ifndef RECPIPE_RECORD_H
#define RECPIPE_RECORD_H

#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum rec_comp {
	REC_AUTO,	/* reader: sniff (gzip magic, zlib header, else none) */
	REC_NONE,
	REC_ZLIB,
	REC_GZIP
};

enum rec_err {
	REC_OK,
	REC_EIO,		/* read(2) failed; errno kept in rec_errno() */
	REC_ENOMEM,
	REC_TRUNC_HEADER,	/* 1..11 bytes after the last record */
	REC_TRUNC_RECORD,	/* header good, payload or footer short */
	REC_BAD_LEN_CRC,
	REC_BAD_DATA_CRC,
	REC_TOO_LARGE,		/* length above the reader's limit */
	REC_TRUNC_STREAM,	/* compressed stream ends early */
	REC_DECOMPRESS,		/* corrupt compressed data */
	REC_TRAILING,		/* bytes after the compressed stream */
	REC_LFS			/* a Git LFS pointer file, not data */
};

/* Reader flags. */
#define REC_TF_COMPAT	0x01	/* partial header = clean end; ignore data after a zlib stream */
#define REC_NO_CRC	0x02	/* do not check payload CRCs (length CRCs still are) */
#define REC_SKIP_DATA	0x04	/* rec_read() returns no payload: count/index mode */

#define REC_DEFAULT_MAX	(1ull << 31)	/* default record size limit for pipes and compressed input */

struct rec_reader;

/*
 * Start reading the stream on 'fd' (not closed by the reader).
 * 'max_len' limits a record's payload where the bytes left cannot be
 * known (pipes, compressed input); 0 means REC_DEFAULT_MAX.
 * Returns NULL with errno set on allocation failure.
 * Free with rec_reader_free().
 */
struct rec_reader *rec_reader_open(int fd, enum rec_comp comp, unsigned flags,
		    uint64_t max_len);
void		 rec_reader_free(struct rec_reader *r);	/* NULL is fine */

/*
 * Read only the uncompressed bytes [off, off + len) of the file on the
 * reader's fd (--part): seeks there, and the stream ends at off + len.
 * Offsets (rec_offset(), rec_position()) stay file offsets; rec_index()
 * counts from the range's first record.  A record that starts in the
 * range and runs past its end (but not past the file's) is a fault,
 * REC_TRUNC_RECORD, saying so.  Call before the first read.  Returns 0,
 * or -1 with errno set (EINVAL, or lseek's).
 */
int		 rec_reader_range(struct rec_reader *r, uint64_t off, uint64_t len);

/*
 * The compression REC_AUTO finds in a stream's first n bytes (up to 12
 * are looked at): REC_GZIP, REC_ZLIB or REC_NONE.
 */
enum rec_comp	 rec_sniff(const uint8_t *p, size_t n);

/*
 * Read the next record.  Returns 1 and sets *p, *n to its payload
 * (valid until the next call; with REC_SKIP_DATA *p is NULL), 0 at the
 * end of the stream, -1 on a fault (rec_error() says which; the reader
 * then stays in the error state).
 */
int		 rec_read(struct rec_reader *r, const uint8_t **p, size_t *n);

/*
 * rec_data_ok(): is 'footer' (as stored after a payload, masked) the
 * CRC of p[0..n)?  For callers that check payloads themselves (see
 * rec_read_framed()); when it is not, the fault is the one rec_read()
 * reports, REC_BAD_DATA_CRC, described by rec_data_crc_msg.
 */
int		 rec_data_ok(const void *p, size_t n, uint32_t footer);
extern const char rec_data_crc_msg[];

/*
 * Records in bulk, for callers that check and decode them elsewhere
 * (in several threads, say): append to 'out' the next records as they
 * are framed in the stream (12-byte header, payload, 4-byte footer),
 * about 'want' bytes of them and at most 'max', their framing checked
 * as rec_read() checks it but not their payload CRCs (rec_data_ok() on
 * each payload and its footer does that).  They come from the stream's
 * bytes rec_position() to the new rec_position().  Returns the number
 * of records appended, 0 at the end of the stream, or -1 on a fault,
 * which is reported only after the good records before it were
 * returned (by the call before).  A record longer than 'want' is only
 * ever the first of a call, so that a caller can take it otherwise
 * (see rec_peek()).  Not for a reader opened with REC_SKIP_DATA.
 */
struct buf;
long		 rec_read_framed(struct rec_reader *r, struct buf *out,
		    size_t want, size_t max);

/*
 * The payload length of the next record, from its header, without
 * taking it: 1 with *len set, when the header is whole and its CRC
 * good (the length is not checked further); 0 at the end of the
 * stream; -1 when there is something else, which the next rec_read()
 * or rec_read_framed() reports (rec_peek() leaves the reader as it was,
 * but for an I/O or decompression fault, which it keeps).
 */
int		 rec_peek(struct rec_reader *r, uint64_t *len);

/* Records returned so far; after a fault, the index of the bad record. */
uint64_t	 rec_index(const struct rec_reader *r);
/* Header offset, in the uncompressed stream, of the last record read or of the fault. */
uint64_t	 rec_offset(const struct rec_reader *r);
/* Uncompressed bytes consumed so far. */
uint64_t	 rec_position(const struct rec_reader *r);
enum rec_err	 rec_error(const struct rec_reader *r);
int		 rec_errno(const struct rec_reader *r);
/* One-line description of the fault, e.g. "length CRC mismatch (is this gzip? try --compression gzip)". */
const char	*rec_strerror(const struct rec_reader *r);
/* Short machine name of a fault: "truncated_header", "bad_data_crc", ... */
const char	*rec_errname(enum rec_err e);
/* The compression in use (after sniffing). */
enum rec_comp	 rec_compression(const struct rec_reader *r);
const char	*rec_compname(enum rec_comp c);
/* Parse "auto", "none", "zlib", "gzip"; -1 if unknown. */
int		 rec_parse_comp(const char *s);

/*
 * Recovery: after a framing fault, scan forward for the next header
 * whose length CRC matches and whose record is complete with a good
 * payload CRC.  Returns 1 with *skip_off and *skip_len set to the skipped
 * range (uncompressed offsets) and the reader ready to go on, 0 if the
 * rest of the stream held no record (everything up to the end skipped),
 * -1 on an I/O or decompression fault.
 */
int		 rec_resync(struct rec_reader *r, uint64_t *skip_off, uint64_t *skip_len);

struct rec_writer;

/*
 * Frame records onto 'fd' (not closed by the writer).  'level' is the
 * deflate level, -1 for TensorFlow's default (6).  Returns NULL with
 * errno set.  Free with rec_writer_close().
 */
struct rec_writer *rec_writer_open(int fd, enum rec_comp comp, int level);
/* Returns 0, or -1 with errno set (EPIPE, ENOSPC, ...). */
int		 rec_write(struct rec_writer *w, const void *p, size_t n);
/*
 * Write one record whose payload is the n pieces at iov, in order: the
 * same bytes as rec_write() of their concatenation, without joining
 * them first (a large uncompressed record goes out with writev()).
 * 'crc', unless NULL, is the crc32c_value() of the payload, which the caller
 * knows (crc32c_combine()): the pieces are then not read for it.
 */
int		 rec_writev(struct rec_writer *w, const struct iovec *iov,
		    size_t n, const uint32_t *crc);
/*
 * Write a record in place: rec_write_begin() returns room for a payload
 * of up to 'max' bytes (NULL with errno set if buffered bytes could not
 * be written out); the caller puts n <= max bytes there and calls
 * rec_write_end(w, n), which frames them as rec_write() would, with the
 * same result.  No other call on 'w' may come in between.
 */
void		*rec_write_begin(struct rec_writer *w, size_t max);
int		 rec_write_end(struct rec_writer *w, size_t n);
/* Write buffered bytes through (Z_PARTIAL_FLUSH when compressing). */
int		 rec_writer_flush(struct rec_writer *w);
/*
 * Finish the stream, write everything out and free the writer.
 * Returns 0, or -1 with errno set; the writer is freed either way.
 */
int		 rec_writer_close(struct rec_writer *w);

/* Frame one record into 16 + n bytes at 'out' (header, payload, footer). */
void		 rec_frame_header(uint8_t out[12], uint64_t n);
uint32_t	 rec_frame_footer(const void *p, size_t n);
/*
 * Is h a record header: a length (h[0..8)) whose masked CRC-32C is
 * h[8..12)?  Says nothing of whether the record fits where it stands.
 */
int		 rec_header_ok(const uint8_t h[12]);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
