/*
 * --part K/N: the K-th of N contiguous parts of a tool's input, its
 * operands in order taken as one concatenation of T bytes.  Part K
 * starts at the first boundary at or after byte K*T/N and ends where
 * part K+1 starts; one function finds both ends, so the N parts tile
 * the input exactly, and each worker reads its own bytes only.
 *
 * Boundaries are found from the bytes alone.  A file's start is always
 * one.  In text, a line start: the first byte after a newline.  In an
 * uncompressed TFRecord stream, the start of a record whose length and
 * payload CRCs check and after which the records go on checking to the
 * end of the file, or for PART_CHAIN_RECORDS records and at least
 * PART_CHAIN_BYTES bytes.  A compressed file cannot be cut: its only
 * boundary is its start, so it belongs whole to the part in which its
 * first byte lies.
 */
#ifndef RECPIPE_PART_H
#define RECPIPE_PART_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

enum part_kind {
	PART_LINES,	/* text: boundaries at line starts */
	PART_RECORDS,	/* uncompressed TFRecord stream */
	PART_WHOLE	/* compressed: not cut */
};

#define PART_CHAIN_RECORDS	4
#define PART_CHAIN_BYTES	(64u << 10)
#define PART_MAX_N		UINT32_MAX	/* largest N */

/*
 * Read up to n bytes at offset off of an operand into p: the bytes read
 * (fewer only at the end of the file), or -1 with errno set.
 */
typedef ssize_t (*part_read_fn)(void *arg, void *p, size_t n, uint64_t off);

struct part_op {
	uint64_t	 size;		/* bytes */
	enum part_kind	 kind;
	part_read_fn	 read;		/* called only when a boundary is sought inside */
	void		*arg;
	/* Set by part_plan(): the operand's bytes [from, to) in the part. */
	uint64_t	 from, to;
};

/*
 * The first boundary at or after x (x <= op->size) in one operand: x
 * itself when it is one, op->size when there is none after it.
 * Returns 0 with *at set, or -1 with errno set (a read failed, ENOMEM).
 */
int	part_align(const struct part_op *op, uint64_t x, uint64_t *at);

/*
 * Part k of n (k < n <= PART_MAX_N) of the operands ops[0..nops): sets
 * each operand's from and to (from == to when the part has none of it;
 * a PART_WHOLE operand gets all of it or nothing).  Returns 0, or -1
 * with errno set (EINVAL for a bad k or n, EOVERFLOW when the sizes add
 * up to more than 2^64 - 1, or the failure of part_align() on operand
 * *bad).
 */
int	part_plan(struct part_op *ops, size_t nops, uint64_t k, uint64_t n,
	    size_t *bad);

#endif
