/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).  The portable
 * path is slicing-by-8 over tables built once; on x86-64 with SSE4.2
 * and on arm64 with the CRC extension the instructions are used.
 *
 * The x86 instruction takes three cycles but can start every cycle, so
 * one chain of them runs at a third of the speed the unit allows.  Long
 * inputs are cut into three equal blocks whose CRCs run side by side;
 * the CRC register is linear, so the first block's register is carried
 * over the length of a block ("shifted": as if that many zero bytes
 * followed) and folded into the next one's, through tables made once.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_CRC 1
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#define HAVE_ARM_CRC 1
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

static uint32_t table[8][256];
static void choose(void);
static atomic_int chosen;	/* 0 not yet, 1 being set up, 2 ready */

static void
make_table(void)
{
	uint32_t c;
	int i, j, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			table[k][i] = (table[k - 1][i] >> 8) ^
			    table[0][table[k - 1][i] & 0xff];
}

uint32_t
crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t w;

	if (atomic_load_explicit(&chosen, memory_order_acquire) != 2)
		choose();
	crc = ~crc;
	while (n > 0 && ((uintptr_t)p & 7) != 0) {
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
		n--;
	}
	while (n >= 8) {
		memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
		    table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
		    table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
		    table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n-- > 0)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#ifdef HAVE_X86_CRC
/* Block lengths of the three-way path, and their shift tables. */
#define BLK_LONG	1024
#define BLK_SHORT	128
static uint32_t shift_long[4][256], shift_short[4][256];

/* The raw register after 'len' zero bytes, starting from c (table path). */
static uint32_t
zeros_slow(uint32_t c, size_t len)
{
	while (len-- > 0)
		c = (c >> 8) ^ table[0][c & 0xff];
	return c;
}

/* t[k][b] = register b << 8k carried over 'len' zero bytes. */
static void
make_shift(uint32_t t[4][256], size_t len)
{
	uint32_t bit[32];
	int i, j, k;

	for (j = 0; j < 32; j++)
		bit[j] = zeros_slow(1u << j, len);
	for (k = 0; k < 4; k++)
		for (i = 0; i < 256; i++) {
			t[k][i] = 0;
			for (j = 0; j < 8; j++)
				if (i >> j & 1)
					t[k][i] ^= bit[8 * k + j];
		}
}

static inline uint32_t
shift(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^
	    t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/*
 * Three streams over p[0 .. 3 * blk) from register c; returns the
 * register at the end.  blk is a multiple of 8.
 */
__attribute__((target("sse4.2")))
static inline uint64_t
crc_3way(uint64_t c, const uint8_t *p, size_t blk, const uint32_t t[4][256])
{
	const uint8_t *e = p + blk;
	uint64_t c1 = 0, c2 = 0, w0, w1, w2;

	for (; p < e; p += 8) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + blk, 8);
		memcpy(&w2, p + 2 * blk, 8);
		c = __builtin_ia32_crc32di(c, w0);
		c1 = __builtin_ia32_crc32di(c1, w1);
		c2 = __builtin_ia32_crc32di(c2, w2);
	}
	c = shift(t, (uint32_t)c) ^ c1;
	return shift(t, (uint32_t)c) ^ c2;
}

__attribute__((target("sse4.2")))
static uint32_t
crc32c_x86(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc, w;
	uint32_t h;
	uint16_t q;

	/* Unaligned loads cost nothing here, so no byte-wise lead-in. */
	while (n >= 3 * BLK_LONG) {
		c = crc_3way(c, p, BLK_LONG, shift_long);
		p += 3 * BLK_LONG;
		n -= 3 * BLK_LONG;
	}
	while (n >= 3 * BLK_SHORT) {
		c = crc_3way(c, p, BLK_SHORT, shift_short);
		p += 3 * BLK_SHORT;
		n -= 3 * BLK_SHORT;
	}
	/* Four independent loads per round keep the pipeline busy. */
	while (n >= 32) {
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		memcpy(&w, p + 8, 8);
		c = __builtin_ia32_crc32di(c, w);
		memcpy(&w, p + 16, 8);
		c = __builtin_ia32_crc32di(c, w);
		memcpy(&w, p + 24, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 32;
		n -= 32;
	}
	while (n >= 8) {
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		n -= 8;
	}
	/* The last 0..7 bytes in at most three steps, not seven. */
	if (n & 4) {
		memcpy(&h, p, 4);
		c = __builtin_ia32_crc32si((uint32_t)c, h);
		p += 4;
	}
	if (n & 2) {
		memcpy(&q, p, 2);
		c = __builtin_ia32_crc32hi((uint32_t)c, q);
		p += 2;
	}
	if (n & 1)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p);
	return ~(uint32_t)c;
}
#endif

#ifdef HAVE_ARM_CRC
__attribute__((target("+crc")))
static uint32_t
crc32c_arm(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint32_t c = ~crc;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		c = __builtin_aarch64_crc32cx(c, w);
		p += 8;
		n -= 8;
	}
	while (n-- > 0)
		c = __builtin_aarch64_crc32cb(c, *p++);
	return ~c;
}
#endif

static uint32_t (*impl)(uint32_t, const void *, size_t);
static const char *impl_name;
static int have_sse42;

/*
 * Pick the path and build its tables, once: threads may arrive together,
 * and the later ones wait for the first (a few microseconds).
 */
static void
choose(void)
{
	int expect = 0;

	if (!atomic_compare_exchange_strong(&chosen, &expect, 1)) {
		while (atomic_load(&chosen) != 2)
			;
		return;
	}
	make_table();
	impl = crc32c_sw;
	impl_name = "table";
#ifdef HAVE_X86_CRC
	{
		unsigned a, b, c, d;

		if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) {
			make_shift(shift_long, BLK_LONG);
			make_shift(shift_short, BLK_SHORT);
			impl = crc32c_x86;
			impl_name = "sse4.2";
			have_sse42 = 1;
		}
	}
#endif
#ifdef HAVE_ARM_CRC
	if (getauxval(AT_HWCAP) & HWCAP_CRC32) {
		impl = crc32c_arm;
		impl_name = "armv8-crc";
	}
#endif
	atomic_store(&chosen, 2);
}

uint32_t
crc32c_extend(uint32_t crc, const void *p, size_t n)
{
	if (atomic_load_explicit(&chosen, memory_order_acquire) != 2)
		choose();
	return impl(crc, p, n);
}

uint32_t
crc32c_value(const void *p, size_t n)
{
	return crc32c_extend(0, p, n);
}

#ifdef HAVE_X86_CRC
__attribute__((target("sse4.2")))
static uint32_t
crc8_x86(const void *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return ~(uint32_t)__builtin_ia32_crc32di(0xffffffffu, w);
}
#endif

uint32_t
crc32c_8(const void *p)
{
	if (atomic_load_explicit(&chosen, memory_order_acquire) != 2)
		choose();
#ifdef HAVE_X86_CRC
	if (have_sse42)
		return crc8_x86(p);
#endif
	return impl(0, p, 8);
}

/*
 * Joining CRCs.  In the reflected representation the register is a
 * polynomial with x^0 in bit 31; a CRC carried over n zero bytes is the
 * register times x^(8n) modulo the polynomial, and the CRC of A then B
 * is that of A carried over |B| zero bytes, XOR the CRC of B (the
 * pre- and post-inversions cancel).
 */
static uint32_t
mulmod(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
		if (a & m)
			r ^= b;
		b = (b >> 1) ^ (0x82f63b78u & (0u - (b & 1)));	/* b times x */
	}
	return r;
}

uint32_t
crc32c_zeros(size_t n)
{
	uint32_t r = 1u << 31, p = 1u << 23;	/* x^0, and x^8: one byte */

	for (; n != 0; n >>= 1) {
		if (n & 1)
			r = mulmod(r, p);
		p = mulmod(p, p);
	}
	return r;
}

uint32_t
crc32c_combine_op(uint32_t a, uint32_t b, uint32_t op)
{
	return mulmod(op, a) ^ b;
}

uint32_t
crc32c_combine(uint32_t a, uint32_t b, size_t blen)
{
	return crc32c_combine_op(a, b, crc32c_zeros(blen));
}

const char *
crc32c_impl(void)
{
	if (atomic_load(&chosen) != 2)
		choose();
	return impl_name;
}
