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

int
buf_reserve(struct buf *b, size_t more)
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
buf_append(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (buf_reserve(b, n) == -1)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int
buf_putc(struct buf *b, int c)
{
	if (b->len == b->cap && buf_reserve(b, 1) == -1)
		return -1;
	b->p[b->len++] = (uint8_t)c;
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int
buf_read_file(struct buf *b, const char *path, size_t max)
{
	size_t start = b->len, want;
	struct stat sb;
	ssize_t k;
	int fd, e;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	/* A regular file: its size and one byte more (to see the end). */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 &&
	    (uint64_t)sb.st_size <= max &&
	    buf_reserve(b, (size_t)sb.st_size + 1) == -1)
		goto fail;
	for (;;) {
		if (b->len == b->cap && buf_reserve(b, 65536) == -1)
			goto fail;
		want = b->cap - b->len;
		if (want > max - (b->len - start) + 1)
			want = max - (b->len - start) + 1;
		k = read(fd, b->p + b->len, want);
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1)
			goto fail;
		if (k == 0)
			break;
		b->len += (size_t)k;
		if (b->len - start > max) {
			errno = EFBIG;
			goto fail;
		}
	}
	close(fd);
	return 0;
fail:
	e = errno;
	close(fd);
	b->len = start;
	errno = e;
	return -1;
}
