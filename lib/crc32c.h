/*
 * CRC-32C (Castagnoli) and the TFRecord mask.  A hardware path (SSE4.2
 * on x86-64, the CRC extension on arm64) is chosen at run time; the
 * portable slicing-by-8 path gives the same values.
 */
#ifndef RECPIPE_CRC32C_H
#define RECPIPE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* CRC of p[0..n), continuing from 'crc' (0 to start). */
uint32_t	crc32c_extend(uint32_t crc, const void *p, size_t n);
uint32_t	crc32c_value(const void *p, size_t n);
/* crc32c_value(p, 8), the short way (a TFRecord's length). */
uint32_t	crc32c_8(const void *p);
/* The same through the portable path only (for tests and benchmarks). */
uint32_t	crc32c_sw(uint32_t crc, const void *p, size_t n);
/*
 * The CRC of A then B from a = crc32c_value(A), b = crc32c_value(B)
 * and B's length, without reading either.  crc32c_zeros(len) is the operator for a
 * length, for a caller that joins many pieces of one length:
 * crc32c_combine(a, b, len) == crc32c_combine_op(a, b, crc32c_zeros(len)).
 */
uint32_t	crc32c_combine(uint32_t a, uint32_t b, size_t blen);
uint32_t	crc32c_zeros(size_t len);
uint32_t	crc32c_combine_op(uint32_t a, uint32_t b, uint32_t op);
/* "sse4.2", "armv8-crc" or "table": which path crc32c_extend() takes. */
const char	*crc32c_impl(void);

static inline uint32_t
crc32c_mask(uint32_t c)
{
	return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static inline uint32_t
crc32c_unmask(uint32_t m)
{
	uint32_t r = m - 0xa282ead8u;

	return (r >> 17) | (r << 15);
}

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
