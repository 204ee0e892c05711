/*
 * The ordered worker pool of pool.h: two turns (input, output) that go
 * through the units in order, under one lock.
 */
#include <pthread.h>
#include <stddef.h>

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
