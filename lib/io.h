/*
 * Raw descriptor I/O for the library and the tools: read(2) and
 * write(2) that go on after EINTR, EAGAIN and short counts.
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

#endif
