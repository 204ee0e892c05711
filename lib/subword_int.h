/*
 * Internals shared by subword.c and subword_build.c: growable buffers
 * and the vocabulary's inner lookups.
 */
#ifndef RECPIPE_SUBWORD_INT_H
#define RECPIPE_SUBWORD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct sw_vocab;
/* Bytes of the longest entry of v that starts e[0..n), 0 if none. */
size_t		 sw_vocab_longest(const struct sw_vocab *v, const uint8_t *e, size_t n);

/*
 * What the double array of v costs: states in use, slots (in use or
 * free), tails; and the work of laying it out: slots looked at (probes)
 * and entry bytes or lengths looked at.  For tests.
 */
struct sw_vocab_stats {
	size_t		 states, slots, tails, probes, looked;
};
void		 sw_vocab_stats(const struct sw_vocab *v, struct sw_vocab_stats *s);

/* Grow an array of 'size'-byte items to hold at least 'need'. 0 or -1 (ENOMEM). */
int		 sw_grow(void *pp, size_t *cap, size_t need, size_t size);
/* Append to a struct buf without depending on its implementation. */
int		 sw_put(struct buf *b, const void *p, size_t n);

/* Decode one code point of valid UTF-8 at p (at least one byte); returns its length. */
static inline int
sw_u8(const uint8_t *p, uint32_t *cp)
{
	uint32_t c = p[0];

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c < 0xE0) {
		*cp = (c & 0x1F) << 6 | (p[1] & 0x3F);
		return 2;
	}
	if (c < 0xF0) {
		*cp = (c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
		return 3;
	}
	*cp = (c & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
	    (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
	return 4;
}

#endif
