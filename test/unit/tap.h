/*
 * A header-sized TAP harness for the library's unit tests.
 *	TEST(cond, "description");
 *	return tap_done();
 * Each TEST prints "ok N - description" or "not ok N - description"
 * with the file and line; tap_done() prints the plan and a summary line
 * and returns the exit status.
 */
#ifndef RECPIPE_TAP_H
#define RECPIPE_TAP_H

#include <inttypes.h>
#include <stdio.h>

static int tap_n, tap_failed;

#define TEST(cond, ...) do {						\
	int ok_ = !!(cond);						\
	tap_n++;							\
	printf("%s %d - ", ok_ ? "ok" : "not ok", tap_n);		\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!ok_) {							\
		tap_failed++;						\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	}								\
} while (0)

/* Compare two integers and show both on failure. */
#define TEST_INT(a, op, b, ...) do {					\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	TEST(a_ op b_, __VA_ARGS__);					\
	if (!(a_ op b_))						\
		printf("#   %s = %lld, %s = %lld\n", #a, a_, #b, b_);	\
} while (0)

/*
 * One step of the FNV-1a digest of 32-bit values, low byte first (the
 * digests of the generated Unicode tables, test/unit/unicode*_digest.h).
 */
static inline uint64_t
tap_fnv(uint64_t h, uint32_t v)
{
	int k;

	for (k = 0; k < 4; k++) {
		h ^= (v >> (8 * k)) & 0xFF;
		h *= 0x100000001B3ULL;
	}
	return h;
}

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	printf("%d passed, %d failed\n", tap_n - tap_failed, tap_failed);
	return tap_failed != 0;
}

#endif
