/*
 * The ordered worker pool: units come out in input order, each once,
 * the same with one worker or many; the first fault in input order
 * ends the run after everything before it, wherever the faults are.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool.h"
#include "tap.h"

#define MAXW	16
#define MAXU	5000

struct run {
	uint64_t	 units;		/* units in the input */
	const uint64_t	*faults;	/* units whose work faults */
	size_t		 nfault;
	uint64_t	 read_fault;	/* the read of this unit ends the input; UINT64_MAX: none */
	int		 early;		/* odd units take the output turn in work() */
	/* under the turns */
	uint64_t	 next_in;
	uint64_t	 out[2 * MAXU];
	size_t		 nout;
	int		 reads_outside, writes_outside;
	/* per worker */
	struct {
		uint64_t seq;
		uint64_t val;
		int	 fault;
		int	 early;	/* wrote its first half in work() */
	} slot[MAXW];
	int		 busy_in, busy_out;	/* a read or write is running */
};

static void
pause_a_little(uint64_t seq)
{
	struct timespec ts = { 0, (long)(seq * 7919 % 5) * 20000 };

	if (ts.tv_nsec > 0)
		nanosleep(&ts, NULL);
}

static int
rd(void *arg, const struct pool_unit *u)
{
	struct run *r = arg;

	if (__atomic_fetch_add(&r->busy_in, 1, __ATOMIC_SEQ_CST) != 0)
		r->reads_outside = 1;
	if (r->next_in != u->seq)
		r->reads_outside = 1;
	if (u->seq >= r->units) {
		__atomic_fetch_sub(&r->busy_in, 1, __ATOMIC_SEQ_CST);
		return POOL_NONE;
	}
	r->next_in++;
	r->slot[u->worker].seq = u->seq;
	r->slot[u->worker].fault = u->seq == r->read_fault;
	r->slot[u->worker].early = 0;
	__atomic_fetch_sub(&r->busy_in, 1, __ATOMIC_SEQ_CST);
	return u->seq + 1 == r->units || u->seq == r->read_fault ?
	    POOL_LAST : POOL_MORE;
}

static void
put(struct run *r, uint64_t v)
{
	if (__atomic_fetch_add(&r->busy_out, 1, __ATOMIC_SEQ_CST) != 0)
		r->writes_outside = 1;
	if (r->nout < 2 * MAXU)
		r->out[r->nout++] = v;
	__atomic_fetch_sub(&r->busy_out, 1, __ATOMIC_SEQ_CST);
}

static void
wk(void *arg, const struct pool_unit *u)
{
	struct run *r = arg;

	pause_a_little(u->seq);
	r->slot[u->worker].val = u->seq * 3 + 1;
	for (size_t i = 0; i < r->nfault; i++)
		if (r->faults[i] == u->seq)
			r->slot[u->worker].fault = 1;
	if (r->early && u->seq % 2 == 1 && pool_turn(u) == 0) {
		put(r, u->seq * 3);
		r->slot[u->worker].early = 1;
	}
}

static int
wr(void *arg, const struct pool_unit *u)
{
	struct run *r = arg;

	if (r->slot[u->worker].seq != u->seq)
		r->writes_outside = 1;
	if (r->early && u->seq % 2 == 1 && !r->slot[u->worker].early)
		r->writes_outside = 1;
	if (r->slot[u->worker].fault)
		return (int)(u->seq % 1000) + 1;
	put(r, r->slot[u->worker].val);
	return 0;
}

static const struct pool_ops ops = { rd, wk, wr };

/* Run and compare with what one thread in order gives; the status of pool_run(). */
static int
check(int workers, uint64_t units, const uint64_t *faults, size_t nfault,
    uint64_t read_fault, int early, const char *what)
{
	static struct run r;
	uint64_t stop = units, want[2 * MAXU];
	size_t n = 0;
	int rc, exp;

	memset(&r, 0, sizeof r);
	r.units = units;
	r.faults = faults;
	r.nfault = nfault;
	r.read_fault = read_fault;
	r.early = early;
	rc = pool_run(workers, &ops, &r);
	for (size_t i = 0; i < nfault; i++)
		if (faults[i] < stop)
			stop = faults[i];
	if (read_fault < stop)
		stop = read_fault;
	for (uint64_t s = 0; s < units && s <= stop; s++) {
		if (early && s % 2 == 1)
			want[n++] = s * 3;
		if (s < stop)
			want[n++] = s * 3 + 1;
	}
	exp = stop < units ? (int)(stop % 1000) + 1 : 0;
	TEST(rc == exp && r.nout == n && memcmp(r.out, want, n * sizeof *want) == 0 &&
	    !r.reads_outside && !r.writes_outside,
	    "%s: %d workers, %ju units: status %d (want %d), %zu out (want %zu)",
	    what, workers, (uintmax_t)units, rc, exp, r.nout, n);
	return rc;
}

/* A fed pool: the slots of the units in flight, and what came out. */
static struct {
	uint64_t	 slot[4];
	uint64_t	 out[MAXU];
	size_t		 nout;
	uint64_t	 fault;		/* the unit whose write fails */
	int		 bad;		/* a unit in a slot it does not own */
} fed;

static void
fed_work(void *arg, const struct pool_unit *u)
{
	(void)arg;
	pause_a_little(u->seq);
	fed.slot[u->worker] = fed.slot[u->worker] * 3 + 1;
}

static int
fed_write(void *arg, const struct pool_unit *u)
{
	(void)arg;
	if (u->worker != (int)(u->seq % 4) || fed.slot[u->worker] != u->seq * 3 + 1)
		fed.bad = 1;
	if (u->seq == fed.fault)
		return 7;
	fed.out[fed.nout++] = u->seq;
	return 0;
}

static const struct pool_ops fed_ops = { NULL, fed_work, fed_write };

static void
check_fed(int workers, uint64_t units, uint64_t fault)
{
	struct pool *p;
	struct pool_unit u;
	uint64_t s, pushed = 0;
	int rc = 0, ok = 1;

	memset(&fed, 0, sizeof fed);
	fed.fault = fault;
	if ((p = pool_open(workers, 4, &fed_ops, NULL)) == NULL) {
		TEST(0, "fed pool of %d workers: pool_open", workers);
		return;
	}
	for (s = 0; s < units; s++) {
		if ((rc = pool_next(p, &u)) != 0)
			break;
		ok &= u.seq == s && u.pool == p;
		fed.slot[u.worker] = s;
		pool_submit(p);
		pushed++;
	}
	rc = pool_close(p);
	for (size_t i = 0; i < fed.nout; i++)
		ok &= fed.out[i] == i;
	TEST(ok && !fed.bad && rc == (fault < units ? 7 : 0) &&
	    fed.nout == (fault < units ? fault : units) &&
	    (fault >= units || pushed <= fault + 5),
	    "fed pool of %d workers, %ju units, fault at %jd: in order, status %d",
	    workers, (uintmax_t)units, fault < units ? (intmax_t)fault : -1, rc);
}

int
main(void)
{
	static const int ws[] = { 1, 2, 3, 8, MAXW };
	uint64_t f[8];

	for (size_t i = 0; i < sizeof ws / sizeof *ws; i++) {
		int w = ws[i];

		check(w, 0, NULL, 0, UINT64_MAX, 0, "no units");
		check(w, 1, NULL, 0, UINT64_MAX, 0, "one unit");
		check(w, 997, NULL, 0, UINT64_MAX, 0, "in order, each once");
		check(w, 997, NULL, 0, UINT64_MAX, 1, "turn taken in work()");
		f[0] = 0;
		check(w, 50, f, 1, UINT64_MAX, 0, "fault in the first unit");
		f[0] = 49;
		check(w, 50, f, 1, UINT64_MAX, 0, "fault in the last unit");
		f[0] = 400; f[1] = 17; f[2] = 18; f[3] = 300;
		check(w, 997, f, 4, UINT64_MAX, 0, "the first of several faults wins");
		f[0] = 401; f[1] = 402; f[2] = 403;
		check(w, 997, f, 3, UINT64_MAX, 1, "faults beside early turns");
		check(w, 997, NULL, 0, 123, 0, "a read fault ends the input");
		f[0] = 124;
		check(w, 997, f, 1, 123, 0, "a read fault before a work fault");
		f[0] = 122;
		check(w, 997, f, 1, 123, 0, "a work fault before a read fault");
		/* Faults at every position of a worker's round. */
		for (uint64_t at = 0; at < 2 * (uint64_t)w + 1; at++) {
			f[0] = 100 + at;
			f[1] = 100 + at + 1 + (uint64_t)w;
			if (check(w, 300, f, 2, UINT64_MAX, at % 2, "fault at a round's place") !=
			    (int)(100 + at) + 1)
				break;
		}
	}
	for (int w = 0; w <= 3; w++) {
		check_fed(w, 0, UINT64_MAX);
		check_fed(w, 1000, UINT64_MAX);
		check_fed(w, 1000, 0);
		check_fed(w, 1000, 500);
		check_fed(w, 1000, 999);
	}
	TEST(pool_close(NULL) == 0, "pool_close(NULL)");
	check(0, 10, NULL, 0, UINT64_MAX, 0, "0 workers run as 1");
	check(POOL_MAX_WORKERS + 5, 10, NULL, 0, UINT64_MAX, 0, "too many workers are clamped");
	return tap_done();
}
