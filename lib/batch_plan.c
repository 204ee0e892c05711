/*
 * The per-epoch pipeline of batch.h: pair sizes, sampling, order,
 * filter, batches, shuffle and shards.  (Being written.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

struct batch_data {
	size_t	npairs;
};
struct batch_plan {
	const struct batch_data *d;
};

struct batch_data *
batch_data_new(size_t npairs, const uint64_t *n, int bilingual, char *err,
    size_t errlen)
{
	(void)npairs; (void)n; (void)bilingual;
	snprintf(err, errlen, "not implemented");
	return NULL;
}
void batch_data_free(struct batch_data *d) { free(d); }
int
batch_data_set(struct batch_data *d, size_t pair, uint64_t first,
    uint64_t count, const int32_t *src, const int32_t *tgt, char *err,
    size_t errlen)
{
	(void)d; (void)pair; (void)first; (void)count; (void)src; (void)tgt;
	snprintf(err, errlen, "not implemented");
	return -1;
}
size_t batch_data_npairs(const struct batch_data *d) { return d->npairs; }
uint64_t batch_data_count(const struct batch_data *d, size_t pair) { (void)d; (void)pair; return 0; }
int batch_data_bilingual(const struct batch_data *d) { (void)d; return 0; }
void batch_data_size(const struct batch_data *d, size_t pair, uint64_t index, uint32_t *src, uint32_t *tgt)
{ (void)d; (void)pair; (void)index; *src = *tgt = 0; }
struct batch_plan *
batch_plan_new(const struct batch_data *d, const struct batch_config *c,
    char *err, size_t errlen)
{
	(void)d; (void)c;
	snprintf(err, errlen, "not implemented");
	return NULL;
}
void batch_plan_free(struct batch_plan *p) { free(p); }
int
batch_plan_epoch(struct batch_plan *p, uint64_t epoch, int64_t shard,
    char *err, size_t errlen)
{
	(void)p; (void)epoch; (void)shard;
	snprintf(err, errlen, "not implemented");
	return -1;
}
void batch_plan_stats(const struct batch_plan *p, struct batch_epoch_stats *st) { (void)p; memset(st, 0, sizeof *st); }
void batch_plan_pair_stats(const struct batch_plan *p, size_t pair, struct batch_pair_stats *ps) { (void)p; (void)pair; memset(ps, 0, sizeof *ps); }
void batch_plan_shard_stats(const struct batch_plan *p, uint32_t shard, struct batch_shard_stats *ss) { (void)p; (void)shard; memset(ss, 0, sizeof *ss); }
uint64_t batch_plan_nbatches(const struct batch_plan *p) { (void)p; return 0; }
uint64_t batch_plan_step(const struct batch_plan *p, uint32_t shard, uint64_t step, uint64_t *id) { (void)p; (void)shard; (void)step; *id = UINT64_MAX; return 0; }
uint64_t batch_plan_batch_size(const struct batch_plan *p, uint64_t id) { (void)p; (void)id; return 0; }
uint64_t batch_plan_batch(const struct batch_plan *p, uint64_t id, struct batch_item *out) { (void)p; (void)id; (void)out; return UINT64_MAX; }
void batch_plan_filtered(const struct batch_plan *p, uint64_t i, uint64_t *virt, struct batch_item *item) { (void)p; (void)i; *virt = 0; item->pair = 0; item->index = 0; }
