/*
 * Growable byte buffers.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "io.h"

int
rp_buf_reserve(struct buf *b, size_t more)
{
	size_t need, cap;
	uint8_t *p;

	if (more > SIZE_MAX - b->len) {
		errno = EOVERFLOW;
		return -1;
	}
	need = b->len + more;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if ((p = realloc(b->p, cap)) == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int
rp_buf_append(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (rp_buf_reserve(b, n) == -1)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int
rp_buf_putc(struct buf *b, int c)
{
	if (b->len == b->cap && rp_buf_reserve(b, 1) == -1)
		return -1;
	b->p[b->len++] = (uint8_t)c;
	return 0;
}

int
rp_buf_puts(struct buf *b, const char *s)
{
	return rp_buf_append(b, s, strlen(s));
}

void
rp_buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int
rp_buf_read_fd(struct buf *b, int fd, size_t max)
{
	size_t start = b->len, want, left;
	struct stat sb;
	ssize_t k;

	/* A regular file: its size and one byte more (to see the end). */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 &&
	    (uint64_t)sb.st_size <= max &&
	    rp_buf_reserve(b, (size_t)sb.st_size + 1) == -1)
		goto fail;
	for (;;) {
		if (b->len == b->cap && rp_buf_reserve(b, 65536) == -1)
			goto fail;
		/* No more than one byte past max: enough to know it is past. */
		want = b->cap - b->len;
		left = max - (b->len - start);
		if (left < SIZE_MAX && want > left + 1)
			want = left + 1;
		if ((k = rp_read(fd, b->p + b->len, want)) == -1)
			goto fail;
		if (k == 0)
			break;
		b->len += (size_t)k;
		if (b->len - start > max) {
			errno = EFBIG;
			goto fail;
		}
	}
	return 0;
fail:
	b->len = start;
	return -1;
}

int
rp_buf_read_file(struct buf *b, const char *path, size_t max)
{
	int fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (rp_buf_read_fd(b, fd, max) == -1) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}
