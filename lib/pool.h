/*
 * An ordered worker pool, for the tools that take -j: units of work are
 * read in turn, worked on in parallel and written in input order, and
 * the first fault in input order ends the run.  Internal to the library
 * and the tools (not installed).
 *
 * Worker w (0 .. workers-1) takes the units w, w + workers, w + 2 *
 * workers, ..., and for each one calls, in this order:
 *
 *	read()	while it holds the input turn: the units are read one
 *		at a time, in order;
 *	work()	with no turn, beside the other workers;
 *	write()	while it holds the output turn: the units are written
 *		one at a time, in order.
 *
 * So the state each unit needs (its input, its output) lives in a slot
 * of the caller's indexed by the worker, and what read() and write()
 * share (the input stream, the output stream) is only ever used by one
 * of them at a time.  A fault found while reading or working is kept in
 * the unit and reported by its write(), which then returns nonzero: as
 * writes go in order, everything before the fault has been written, no
 * unit after it is written, and the run ends as soon as the workers
 * busy with later units are done with them.
 *
 * With one worker, every call is made in the calling thread, one unit
 * after the other, and no thread is started.
 */
#ifndef RECPIPE_POOL_H
#define RECPIPE_POOL_H

#include <stdint.h>

#define POOL_MAX_WORKERS	256

struct pool;

/* What a call is about: handed to each of the callbacks. */
struct pool_unit {
	uint64_t	 seq;		/* its place in the input: 0, 1, ... */
	int		 worker;	/* its slot: the worker's, or in a fed pool seq % slots */
	struct pool	*pool;
};

/* What read() returns. */
enum {
	POOL_MORE,	/* a unit was read; others may follow */
	POOL_LAST,	/* a unit was read, the last (the input ended or failed) */
	POOL_NONE	/* no unit: the input ended before it */
};

struct pool_ops {
	int	(*read)(void *arg, const struct pool_unit *u);
	void	(*work)(void *arg, const struct pool_unit *u);	/* NULL: nothing */
	/* 0 to go on; anything else stops the run at this unit. */
	int	(*write)(void *arg, const struct pool_unit *u);
};

/*
 * Run the units through 'workers' workers (1 .. POOL_MAX_WORKERS; out
 * of range is clamped): the calling thread is worker 0 and the others
 * are threads started here (when a thread cannot start, the run has
 * fewer workers: those that did).  Returns 0 when every unit read was
 * written, or what the write() that stopped the run returned.
 */
int	pool_run(int workers, const struct pool_ops *ops, void *arg);

/*
 * Take the output turn of unit u before write() (from read() or work()),
 * to write out what it has so far while the units before it are all
 * written: a unit whose output outgrows its buffer, or one that must be
 * handled in order.  Waits for the units before u.  Returns 0 when u
 * holds the turn (until its write() returns), or -1 when the run was
 * stopped by an earlier unit: u is then never written.
 */
int	pool_turn(const struct pool_unit *u);

/*
 * A pool fed by its caller, for a reader that cannot stop between units
 * (one that pushes what it makes from deep inside a loop of its own):
 * the calling thread fills the units in order, each in a slot of its
 * own (0 .. slots-1), and hands them over; 'workers' threads work on
 * them and write them, in order.  ops->read is not used.  With 0
 * workers, pool_submit() works on the unit and writes it at once, in
 * the calling thread.
 *
 * pool_open() returns NULL with errno set when memory or a thread
 * cannot be had (the caller can then write inline).  pool_next() waits
 * until the slot of the next unit is free and describes that unit in
 * *u: 0, or what the write() that stopped the run returned.  Fill the
 * slot, then pool_submit() it.  pool_close() waits until every unit
 * submitted is written (or the run stopped), ends the threads and frees
 * the pool: 0, or what the write() that stopped the run returned.
 */
struct pool *pool_open(int workers, int slots, const struct pool_ops *ops,
	    void *arg);
int	pool_next(struct pool *p, struct pool_unit *u);
void	pool_submit(struct pool *p);
int	pool_close(struct pool *p);	/* NULL is fine */

#endif
