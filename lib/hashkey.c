/*
 * Random keys and SipHash, through libsodium.
 */
#include <errno.h>

#include <sodium.h>

#include "hashkey.h"

_Static_assert(RP_HASHKEY_BYTES == crypto_shorthash_KEYBYTES,
    "RP_HASHKEY_BYTES is libsodium's key size");
_Static_assert(crypto_shorthash_BYTES == 8, "crypto_shorthash gives 8 bytes");

int
rp_hash_key(void *key, size_t n)
{
	/* Safe to call again, and from several threads. */
	if (sodium_init() < 0) {
		errno = ENOSYS;
		return -1;
	}
	randombytes_buf(key, n);
	return 0;
}

uint64_t
rp_shorthash(const uint8_t key[RP_HASHKEY_BYTES], const void *p, size_t n)
{
	unsigned char h[crypto_shorthash_BYTES];
	uint64_t x = 0;

	crypto_shorthash(h, p, n, key);
	for (int i = 0; i < 8; i++)
		x |= (uint64_t)h[i] << (8 * i);
	return x;
}
