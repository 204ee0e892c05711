/*
 * Random hash keys and keyed SipHash: the reference vectors, and keys
 * that differ from call to call.
 */
#include <string.h>

#include "hashkey.h"
#include "tap.h"

int
main(void)
{
	uint8_t key[RP_HASHKEY_BYTES], a[RP_HASHKEY_BYTES], b[RP_HASHKEY_BYTES];
	uint8_t msg[15], zero[RP_HASHKEY_BYTES] = { 0 };
	uint64_t m1 = 0, m2 = 0;

	/* SipHash-2-4's reference key and messages (Aumasson and Bernstein). */
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	TEST(rp_shorthash(key, msg, 0) == UINT64_C(0x726fdb47dd0e0e31),
	    "SipHash-2-4 of the empty message, read little-endian");
	TEST(rp_shorthash(key, msg, 15) == UINT64_C(0xa129ca6149be45e5),
	    "SipHash-2-4 of 00..0e, read little-endian");
	TEST(rp_shorthash(key, msg, 15) != rp_shorthash(zero, msg, 15),
	    "the key counts");

	TEST(rp_hash_key(a, sizeof a) == 0 && rp_hash_key(b, sizeof b) == 0,
	    "rp_hash_key: 0");
	TEST(memcmp(a, b, sizeof a) != 0 && memcmp(a, zero, sizeof a) != 0,
	    "two keys differ, and neither is zero");
	TEST(rp_hash_key(&m1, sizeof m1) == 0 && rp_hash_key(&m2, sizeof m2) == 0 &&
	    m1 != m2, "any size: a 64-bit secret");
	TEST(rp_shorthash(a, msg, 15) == rp_shorthash(a, msg, 15) &&
	    rp_shorthash(a, msg, 15) != rp_shorthash(b, msg, 15),
	    "one key, one hash; another key, another");
	return tap_done();
}
