/*
 * Growable byte buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
