/*
 * read(2) and write(2) without EINTR, EAGAIN or short counts, and reads
 * held to a byte range.
 */
#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

/* The most one call asks for (more than SSIZE_MAX is unspecified). */
#define CHUNK	((size_t)1 << 30)

/*
 * After EAGAIN on a non-blocking fd: wait until it is ready rather than
 * spin.  A failed poll(2) is left to the next read or write to report.
 */
static void
wait_ready(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	(void)poll(&pfd, 1, -1);
}

static int
again(int fd, short events)
{
	if (errno == EINTR)
		return 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		wait_ready(fd, events);
		return 1;
	}
	return 0;
}

ssize_t
rp_read(int fd, void *p, size_t n)
{
	ssize_t k;

	if (n > CHUNK)
		n = CHUNK;
	while ((k = read(fd, p, n)) == -1)
		if (!again(fd, POLLIN))
			return -1;
	return k;
}

ssize_t
rp_read_full(int fd, void *p, size_t n)
{
	size_t off = 0;
	ssize_t k;

	while (off < n) {
		if ((k = rp_read(fd, (uint8_t *)p + off, n - off)) == -1)
			return -1;
		if (k == 0)
			break;
		off += (size_t)k;
	}
	return (ssize_t)off;
}

/* Both writes: write(2) when off is -1, else pwrite(2) from off on. */
static int
write_all(int fd, const uint8_t *p, size_t n, off_t off)
{
	ssize_t k;
	size_t m;

	while (n > 0) {
		m = n < CHUNK ? n : CHUNK;
		k = off == -1 ? write(fd, p, m) : pwrite(fd, p, m, off);
		if (k == -1) {
			if (again(fd, POLLOUT))
				continue;
			return -1;
		}
		if (k == 0) {	/* no progress, and no error to say why */
			errno = ENOSPC;
			return -1;
		}
		p += k;
		n -= (size_t)k;
		if (off != -1)
			off += (off_t)k;
	}
	return 0;
}

int
rp_write_full(int fd, const void *p, size_t n)
{
	return write_all(fd, p, n, -1);
}

int
rp_pwrite_full(int fd, const void *p, size_t n, off_t off)
{
	if (off < 0) {
		errno = EINVAL;
		return -1;
	}
	return write_all(fd, p, n, off);
}

int
rp_limit_seek(struct rp_limit *l, int fd, uint64_t off, uint64_t len)
{
	if (off > INT64_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (lseek(fd, (off_t)off, SEEK_SET) == -1)
		return -1;
	l->on = 1;
	l->left = len;
	return 0;
}

ssize_t
rp_limit_read(struct rp_limit *l, int fd, void *p, size_t n)
{
	ssize_t k;

	if (l->on && n > l->left)
		n = (size_t)l->left;
	if (n == 0)
		return 0;
	if ((k = rp_read(fd, p, n)) > 0 && l->on)
		l->left -= (uint64_t)k;
	return k;
}

ssize_t
rp_window_fill(struct rp_window *w, int fd, size_t room)
{
	ssize_t k;

	if (w->start > 0) {
		memmove(w->buf, w->buf + w->start, w->end - w->start);
		w->base += w->start;
		w->end -= w->start;
		w->start = 0;
	}
	if (w->cap - w->end < room) {
		uint8_t *nb;

		if (w->cap > SIZE_MAX / 2) {
			errno = ENOMEM;
			return -1;
		}
		if ((nb = realloc(w->buf, w->cap * 2)) == NULL)
			return -1;
		w->buf = nb;
		w->cap *= 2;
	}
	if ((k = rp_limit_read(&w->lim, fd, w->buf + w->end,
	    w->cap - w->end)) == -1)
		return -1;
	if (k == 0)
		w->eof = 1;
	w->end += (size_t)k;
	return k;
}

int
rp_window_range(struct rp_window *w, int fd, uint64_t off, uint64_t len)
{
	if (w->end > 0 || w->eof) {
		errno = EINVAL;
		return -1;
	}
	if (rp_limit_seek(&w->lim, fd, off, len) == -1)
		return -1;
	w->base = off;
	return 0;
}
