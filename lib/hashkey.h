/*
 * Keyed hashing for the library's hash tables (and the tools'): SipHash
 * (libsodium's crypto_shorthash) under a random key, so that no input
 * can be made to collide on purpose.
 */
#ifndef RECPIPE_HASHKEY_H
#define RECPIPE_HASHKEY_H

#include <stddef.h>
#include <stdint.h>

#define RP_HASHKEY_BYTES	16	/* a key for rp_shorthash() */

/*
 * Fill key[0 .. n) with random bytes: an rp_shorthash() key, or any
 * other secret of a table (a multiplier, say).  Returns 0, or -1 with
 * errno ENOSYS when libsodium cannot be initialised; key is then left
 * as it was, and the caller fails (there is no fixed fallback key).
 */
int		rp_hash_key(void *key, size_t n);

/* SipHash of p[0 .. n) under key, its 8 bytes read little-endian. */
uint64_t	rp_shorthash(const uint8_t key[RP_HASHKEY_BYTES], const void *p,
		    size_t n);

#endif
