/*
 * The ordered worker pool of pool.h: two turns (input, output) that go
 * through the units in order, under one lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "pool.h"

struct pool {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	uint64_t	 in_turn;	/* the unit read next */
	uint64_t	 out_turn;	/* the unit written next */
	int		 in_done;	/* no unit after in_turn - 1 */
	int		 stop;		/* a write() stopped the run */
	int		 rc;		/* what it returned */
	int		 go;		/* every worker has started */
	int		 workers;
	int		 threaded;
	const struct pool_ops *ops;
	void		*arg;
	/* a fed pool (pool_open()) */
	int		 slots;
	uint64_t	 submitted;	/* units handed over */
	uint64_t	 taken;		/* units a worker took */
	int		 closing;
	pthread_t	*tid;
};

struct worker {
	struct pool	*p;
	int		 w;
};

/* Wait for *turn to reach seq; 0, or -1 when the run stopped or the input ended first. */
static int
wait_turn(struct pool *p, const uint64_t *turn, uint64_t seq, int input)
{
	int rc = 0;

	if (!p->threaded)
		return p->stop || (input && p->in_done) ? -1 : 0;
	pthread_mutex_lock(&p->mu);
	while (*turn != seq && !p->stop && !(input && p->in_done))
		pthread_cond_wait(&p->cv, &p->mu);
	if (p->stop || (input && p->in_done))
		rc = -1;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* Pass a turn on (and record the end of input or a stop). */
static void
pass_turn(struct pool *p, uint64_t *turn, int done, int stop)
{
	if (!p->threaded) {
		(*turn)++;
		p->in_done |= done;
		p->stop |= stop != 0;
		if (stop)
			p->rc = stop;
		return;
	}
	pthread_mutex_lock(&p->mu);
	(*turn)++;
	p->in_done |= done;
	if (stop && !p->stop) {
		p->stop = 1;
		p->rc = stop;
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int
pool_turn(const struct pool_unit *u)
{
	return wait_turn(u->pool, &u->pool->out_turn, u->seq, 0);
}

static void *
run_worker(void *arg)
{
	struct worker *wk = arg;
	struct pool *p = wk->p;
	struct pool_unit u = { .worker = wk->w, .pool = p };
	int r, rc;

	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		while (!p->go)
			pthread_cond_wait(&p->cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
	for (u.seq = (uint64_t)wk->w;; u.seq += (uint64_t)p->workers) {
		if (wait_turn(p, &p->in_turn, u.seq, 1) == -1)
			break;
		r = p->ops->read(p->arg, &u);
		pass_turn(p, &p->in_turn, r != POOL_MORE, 0);
		if (r == POOL_NONE)
			break;
		if (p->ops->work != NULL)
			p->ops->work(p->arg, &u);
		if (wait_turn(p, &p->out_turn, u.seq, 0) == -1)
			break;
		rc = p->ops->write(p->arg, &u);
		pass_turn(p, &p->out_turn, 0, rc);
		if (rc != 0 || r == POOL_LAST)
			break;
	}
	return NULL;
}

int
pool_run(int workers, const struct pool_ops *ops, void *arg)
{
	struct pool p = { .ops = ops, .arg = arg };
	struct worker wk[POOL_MAX_WORKERS];
	pthread_t tid[POOL_MAX_WORKERS];
	int started = 1;

	if (workers < 1)
		workers = 1;
	if (workers > POOL_MAX_WORKERS)
		workers = POOL_MAX_WORKERS;
	if (workers > 1 && pthread_mutex_init(&p.mu, NULL) == 0) {
		if (pthread_cond_init(&p.cv, NULL) == 0) {
			p.threaded = 1;
			for (; started < workers; started++) {
				wk[started].p = &p;
				wk[started].w = started;
				if (pthread_create(&tid[started], NULL,
				    run_worker, &wk[started]) != 0)
					break;
			}
		} else
			pthread_mutex_destroy(&p.mu);
	}
	/* The workers that started share the units. */
	p.workers = started;
	if (p.threaded) {
		pthread_mutex_lock(&p.mu);
		p.go = 1;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	wk[0].p = &p;
	wk[0].w = 0;
	run_worker(&wk[0]);
	for (int t = 1; t < started; t++)
		pthread_join(tid[t], NULL);
	if (p.threaded) {
		pthread_cond_destroy(&p.cv);
		pthread_mutex_destroy(&p.mu);
	}
	return p.stop ? p.rc : 0;
}

/* A worker of a fed pool: the units in the order they were submitted. */
static void *
fed_worker(void *arg)
{
	struct pool *p = arg;
	struct pool_unit u = { .pool = p };
	int rc;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->taken == p->submitted && !p->closing && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop || p->taken == p->submitted)
			break;
		u.seq = p->taken++;
		u.worker = (int)(u.seq % (uint64_t)p->slots);
		pthread_mutex_unlock(&p->mu);
		if (p->ops->work != NULL)
			p->ops->work(p->arg, &u);
		pthread_mutex_lock(&p->mu);
		while (p->out_turn != u.seq && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		pthread_mutex_unlock(&p->mu);
		rc = p->ops->write(p->arg, &u);
		pthread_mutex_lock(&p->mu);
		p->out_turn++;
		if (rc != 0 && !p->stop) {
			p->stop = 1;
			p->rc = rc;
		}
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct pool *
pool_open(int workers, int slots, const struct pool_ops *ops, void *arg)
{
	struct pool *p;
	int e;

	if (workers < 0)
		workers = 0;
	if (workers > POOL_MAX_WORKERS)
		workers = POOL_MAX_WORKERS;
	if (slots < 1)
		slots = 1;
	if ((p = calloc(1, sizeof *p)) == NULL)
		return NULL;
	p->ops = ops;
	p->arg = arg;
	p->slots = slots;
	if (workers == 0)
		return p;
	if ((p->tid = calloc((size_t)workers, sizeof *p->tid)) == NULL)
		goto fail;
	if ((e = pthread_mutex_init(&p->mu, NULL)) != 0) {
		errno = e;
		goto fail;
	}
	if ((e = pthread_cond_init(&p->cv, NULL)) != 0) {
		pthread_mutex_destroy(&p->mu);
		errno = e;
		goto fail;
	}
	p->threaded = 1;
	for (; p->workers < workers; p->workers++)
		if ((e = pthread_create(&p->tid[p->workers], NULL, fed_worker,
		    p)) != 0)
			break;
	if (p->workers == 0) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		errno = e;
		goto fail;
	}
	return p;
fail:
	free(p->tid);
	free(p);
	return NULL;
}

int
pool_next(struct pool *p, struct pool_unit *u)
{
	int rc;

	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		while (p->submitted - p->out_turn >= (uint64_t)p->slots &&
		    !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
	}
	u->seq = p->submitted;
	u->worker = (int)(u->seq % (uint64_t)p->slots);
	u->pool = p;
	rc = p->stop ? p->rc : 0;
	if (p->threaded)
		pthread_mutex_unlock(&p->mu);
	return rc;
}

void
pool_submit(struct pool *p)
{
	struct pool_unit u = { .pool = p };
	int rc;

	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		p->submitted++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	/* No worker: the unit is worked on and written here and now. */
	u.seq = p->submitted++;
	u.worker = (int)(u.seq % (uint64_t)p->slots);
	if (p->stop)
		return;
	if (p->ops->work != NULL)
		p->ops->work(p->arg, &u);
	rc = p->ops->write(p->arg, &u);
	p->out_turn++;
	if (rc != 0) {
		p->stop = 1;
		p->rc = rc;
	}
}

int
pool_close(struct pool *p)
{
	int rc;

	if (p == NULL)
		return 0;
	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		p->closing = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		for (int t = 0; t < p->workers; t++)
			pthread_join(p->tid[t], NULL);
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
	}
	rc = p->stop ? p->rc : 0;
	free(p->tid);
	free(p);
	return rc;
}
