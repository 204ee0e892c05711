/*
 * Internal interface between the generated Unicode 16.0 class table
 * (unicode16_tables.c, made by scripts/gen-unicode16) and pretok.c.
 *
 * The class number of a code point cp < 0x110000 is
 *	pretok_s2_[pretok_s1_[cp >> 7] << 7 | (cp & 127)]
 * (0 other, 1 Lu, 2 Ll, 3 Lt, 4 Lm, 5 Lo, 6 M, 7 N, 8 White_Space); for
 * ASCII it is pretok_s2_[cp].  pretok_bits_ maps a class number to its
 * set of PRETOK_* bits.
 */
#ifndef RECPIPE_UNICODE16_TABLES_H
#define RECPIPE_UNICODE16_TABLES_H

#include <stdint.h>

extern const uint8_t	pretok_s1_[];
extern const uint8_t	pretok_s2_[];
extern const uint16_t	pretok_bits_[];

#endif
