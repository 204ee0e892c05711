/*
 * Growable byte buffers and small helpers shared by the library.
 */
#ifndef RECPIPE_BUF_H
#define RECPIPE_BUF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct buf {
	uint8_t	*p;	/* owned; NULL until the first growth */
	size_t	 len;	/* bytes in use */
	size_t	 cap;	/* bytes allocated */
};

/*
 * Make room for 'more' further bytes.  Returns 0, or -1 with errno set
 * (ENOMEM, or EOVERFLOW when len + more overflows).  May move b->p.
 */
int	rp_buf_reserve(struct buf *b, size_t more);
int	rp_buf_append(struct buf *b, const void *p, size_t n);
int	rp_buf_putc(struct buf *b, int c);
/* Append a NUL-terminated string (without its NUL). */
int	rp_buf_puts(struct buf *b, const char *s);
/* Release the memory; the buffer is empty and reusable afterwards. */
void	rp_buf_free(struct buf *b);
/*
 * Append the whole file 'path' to b, refusing one of more than 'max'
 * bytes (SIZE_MAX: no bound; a regular file's size sizes the buffer
 * once).  Returns 0, or -1 with errno set (EFBIG when the file is
 * larger than max); b then holds what it held before, with perhaps more
 * room.  On success b->p is never NULL, even for an empty file.
 */
int	rp_buf_read_file(struct buf *b, const char *path, size_t max);
/*
 * The same for what is left to read of fd (not closed): a pipe, a
 * terminal, a file already open.
 */
int	rp_buf_read_fd(struct buf *b, int fd, size_t max);

/* Little-endian loads and stores that never make an unaligned access. */
static inline uint32_t
rp_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static inline uint64_t
rp_le64(const uint8_t *p)
{
	return (uint64_t)rp_le32(p) | (uint64_t)rp_le32(p + 4) << 32;
}

static inline void
rp_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

static inline void
rp_put_le64(uint8_t *p, uint64_t v)
{
	rp_put_le32(p, (uint32_t)v);
	rp_put_le32(p + 4, (uint32_t)(v >> 32));
}

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
