/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).  The portable
 * path is slicing-by-8 over tables built once; on x86-64 with SSE4.2
 * and on arm64 with the CRC extension the instructions are used, three
 * streams at a time for long inputs is not needed: one stream of the
 * 64-bit instruction already runs at several GB/s.
 */
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
static int table_ready;

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
	table_ready = 1;
}

uint32_t
crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t w;

	if (!table_ready)
		make_table();
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
__attribute__((target("sse4.2")))
static uint32_t
crc32c_x86(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc, w;

	while (n > 0 && ((uintptr_t)p & 7) != 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		n--;
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
	while (n-- > 0)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
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

static void
choose(void)
{
	impl = crc32c_sw;
	impl_name = "table";
#ifdef HAVE_X86_CRC
	{
		unsigned a, b, c, d;

		if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) {
			impl = crc32c_x86;
			impl_name = "sse4.2";
		}
	}
#endif
#ifdef HAVE_ARM_CRC
	if (getauxval(AT_HWCAP) & HWCAP_CRC32) {
		impl = crc32c_arm;
		impl_name = "armv8-crc";
	}
#endif
}

uint32_t
crc32c_extend(uint32_t crc, const void *p, size_t n)
{
	if (impl == NULL)
		choose();
	return impl(crc, p, n);
}

uint32_t
crc32c(const void *p, size_t n)
{
	return crc32c_extend(0, p, n);
}

const char *
crc32c_impl(void)
{
	if (impl == NULL)
		choose();
	return impl_name;
}
