/*
 * CRC-32C, the mask, and the framing of the spec's worked records.
 */
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "record.h"
#include "tap.h"

int
main(void)
{
	static const uint8_t foo[] = {
		0x03, 0, 0, 0, 0, 0, 0, 0, 0xb0, 0x99, 0x49, 0x0e,
		'f', 'o', 'o', 0x61, 0x8a, 0xbe, 0xfe };
	static const uint8_t empty[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0x29, 0x03, 0x98, 0x07,
		0xd8, 0xea, 0x82, 0xa2 };
	static uint8_t huge[3 * 3 * 1024 + 3 * 128 + 64];
	static uint32_t ref[sizeof(huge) + 1];
	uint8_t h[12], big[4099];
	size_t i, a, k, bad;
	uint32_t c, x;

	TEST(crc32c_value("123456789", 9) == 0xe3069283, "check value (%s)",
	    crc32c_impl());
	{
		/* joined CRCs: every split of random bytes, and long runs */
		static uint8_t buf[5000];
		uint32_t lcg = 12345;
		int ok = 1;

		for (size_t j = 0; j < sizeof buf; j++) {
			lcg = lcg * 1103515245u + 12345u;
			buf[j] = (uint8_t)(lcg >> 16);
		}
		for (size_t n = 0; n <= 70 && ok; n++)
			for (size_t cut = 0; cut <= n && ok; cut++)
				ok = crc32c_combine(crc32c_value(buf, cut),
				    crc32c_value(buf + cut, n - cut), n - cut) ==
				    crc32c_value(buf, n);
		for (size_t cut = 0; cut <= sizeof buf && ok; cut += 397)
			ok = crc32c_combine_op(crc32c_value(buf, cut),
			    crc32c_value(buf + cut, sizeof buf - cut),
			    crc32c_zeros(sizeof buf - cut)) ==
			    crc32c_value(buf, sizeof buf);
		TEST(ok, "crc32c_combine() of two parts is the CRC of the whole");
	}
	TEST(crc32c_sw(0, "123456789", 9) == 0xe3069283, "check value, table path");
	TEST(crc32c_value("", 0) == 0, "empty string");
	TEST(crc32c_mask(crc32c_value("", 0)) == 0xa282ead8, "mask of empty");
	TEST(crc32c_mask(crc32c_value(empty, 8)) == 0x07980329,
	    "mask of 8 zero bytes");
	TEST(crc32c_unmask(crc32c_mask(0xdeadbeef)) == 0xdeadbeef, "unmask inverts mask");

	rec_frame_header(h, 3);
	TEST(memcmp(h, foo, 12) == 0, "header of the 'foo' record");
	c = rec_frame_footer("foo", 3);
	TEST(c == 0xfebe8a61, "footer of the 'foo' record");
	rec_frame_header(h, 0);
	TEST(memcmp(h, empty, 12) == 0, "header of the empty record");
	TEST(rec_frame_footer("", 0) == 0xa282ead8, "footer of the empty record");

	/* Hardware and table paths agree at every alignment and length. */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + (i >> 3));
	for (a = 0; a < 8; a++)
		for (i = 0; i + a <= sizeof(big); i += 97) {
			if (crc32c_extend(0, big + a, i) != crc32c_sw(0, big + a, i)) {
				TEST(0, "paths differ at offset %zu length %zu", a, i);
				return tap_done();
			}
		}
	TEST(1, "hardware and table paths agree");
	c = crc32c_extend(crc32c_extend(0, big, 1000), big + 1000, 3099);
	TEST(c == crc32c_value(big, 4099), "extend in two parts");

	/*
	 * Every length up to past two rounds of the long three-way blocks
	 * and one of the short ones, at every alignment, against the table
	 * path taken one byte at a time.
	 */
	x = 0x9e3779b9u;
	for (i = 0; i < sizeof(huge); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		huge[i] = (uint8_t)x;
	}
	for (a = 0, bad = 0; a < 8 && !bad; a++) {
		ref[0] = 0;
		for (i = 0; a + i < sizeof(huge); i++)
			ref[i + 1] = crc32c_sw(ref[i], huge + a + i, 1);
		for (i = 0; a + i <= sizeof(huge) && !bad; i++)
			if (crc32c_extend(0, huge + a, i) != ref[i]) {
				TEST(0, "three-way path differs at offset %zu length %zu", a, i);
				bad = 1;
			}
		/* Continuing from a register that is not 0. */
		for (k = 0; k + a + 3500 <= sizeof(huge) && !bad; k += 131)
			if (crc32c_extend(ref[k], huge + a + k, 3500) != ref[k + 3500]) {
				TEST(0, "extend from offset %zu differs (alignment %zu)", k, a);
				bad = 1;
			}
	}
	TEST(!bad, "all lengths 0..%zu at alignments 0..7 agree with the table", sizeof(huge) - 7);
	memset(huge, 0xff, sizeof(huge));
	TEST(crc32c_value(huge, sizeof(huge)) == crc32c_sw(0, huge, sizeof(huge)), "all ones");
	memset(huge, 0, sizeof(huge));
	TEST(crc32c_value(huge, sizeof(huge)) == crc32c_sw(0, huge, sizeof(huge)), "all zeros");
	return tap_done();
}
