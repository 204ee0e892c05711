/*
 * Raw descriptor I/O for the library and the tools: read(2) and
 * write(2) that go on after EINTR, EAGAIN and short counts, and reads
 * held to a byte range (a --part worker's share of a file).
 */
#ifndef RECPIPE_IO_H
#define RECPIPE_IO_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/*
 * One read(2) of up to n bytes, made again after EINTR, and after
 * EAGAIN once a non-blocking fd has input.  Returns what read(2)
 * returns: the bytes read, 0 at the end of the file, or -1 with errno
 * set.
 */
ssize_t	rp_read(int fd, void *p, size_t n);

/*
 * Read until n bytes are in or the file ends.  Returns the number read
 * (fewer than n only at the end of the file), or -1 with errno set
 * (the bytes read before the error are in p but not counted).
 */
ssize_t	rp_read_full(int fd, void *p, size_t n);

/* Write all n bytes.  Returns 0, or -1 with errno set. */
int	rp_write_full(int fd, const void *p, size_t n);

/* Write all n bytes at offset off (pwrite(2)).  0, or -1 with errno. */
int	rp_pwrite_full(int fd, const void *p, size_t n, off_t off);

/*
 * A descriptor read within a byte range.  A zeroed struct sets no
 * limit; rp_limit_seek() seeks the fd to off and lets len bytes be read
 * from there.  Returns 0, or -1 with errno set (EINVAL for an off past
 * INT64_MAX, or lseek(2)'s).
 */
struct rp_limit {
	int		 on;
	uint64_t	 left;		/* bytes still allowed, when on */
};

int	rp_limit_seek(struct rp_limit *l, int fd, uint64_t off, uint64_t len);

/*
 * rp_read() of up to n bytes and no more than the limit allows: the
 * bytes read, 0 at the end of the file or of the range, or -1 with
 * errno set.
 */
ssize_t	rp_limit_read(struct rp_limit *l, int fd, void *p, size_t n);

/*
 * The buffer of a line reader over fd: buf[start..end) is what it has
 * not handed out yet, base the file offset of buf[0], lim the --part
 * range (rp_window_range(), before the first fill).  rp_window_fill()
 * moves what is left to the front, doubles buf when fewer than 'room'
 * bytes are free, and reads once: the bytes read, 0 at the end (eof is
 * then set), or -1 with errno.  The reader owns buf (free() it).
 */
struct rp_window {
	uint8_t		*buf;
	size_t		 cap, start, end;
	uint64_t	 base;
	int		 eof;
	struct rp_limit	 lim;
};

ssize_t	rp_window_fill(struct rp_window *w, int fd, size_t room);
int	rp_window_range(struct rp_window *w, int fd, uint64_t off, uint64_t len);

#endif
