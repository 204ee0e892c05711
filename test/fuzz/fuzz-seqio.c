/*
 * Fuzz target: seqio converters and the Electra builder on arbitrary
 * Example payloads.  The first bytes pick the converter and its
 * options; the rest is a sequence of records, each a length byte and
 * that many payload bytes, decoded as pack-encdec decodes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"
#include "seqio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t rows;

static int
sink(void *arg, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	size_t i, j;
	uint64_t sum = 0;	/* wraps: ids may be any int64 */

	(void)arg;
	for (i = 0; i < n; i++) {
		if (names[i] == NULL || (lens[i] > 0 && vals[i] == NULL))
			abort();
		if (used && used[i] > lens[i])
			abort();
		for (j = 0; j < lens[i]; j++) {	/* touch every value */
			sum += (uint64_t)vals[i][j];
			if (used && j >= used[i] && vals[i][j] != 0)
				abort();	/* padding that is not */
		}
	}
	rows += (size_t)(sum & 1);
	return 0;
}

static const char *const names[] = {
	"inputs", "targets", "suffixes", "p", "inputs_segment_ids",
	"inputs_positions", "targets_segment_ids", "targets_positions"
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sq_config cfg;
	struct sq_conv *c, *err = NULL;
	struct sq_electra *e = NULL;
	struct sq_feat f[40];
	struct example ex;
	const struct ex_feature *ft;
	size_t i, j, n, ni;
	uint8_t k;

	if (size < 8)
		return 0;
	sq_config_init(&cfg);
	k = data[0] % 13;
	cfg.pack = !(data[1] & 1);
	cfg.custom_ops = (data[1] >> 1) & 1;
	cfg.length_check = !((data[1] >> 2) & 1);
	cfg.loss_on_targets_only = !((data[1] >> 3) & 1);
	cfg.strategy = (enum sq_strategy)((data[1] >> 4) % 3);
	if (cfg.custom_ops)
		cfg.strategy = SQ_SEQIO;
	cfg.window = (data[1] >> 6) + 1;
	cfg.bos_id = (int8_t)data[2];
	cfg.has_mask_id = data[3] & 1;
	cfg.mask_id = data[3] >> 1;
	/* Lengths: a mask of names and small values. */
	for (i = 0; i < 8; i++)
		if (data[4] & (1u << i)) {
			cfg.len_name[cfg.nlen] = names[i];
			cfg.len_val[cfg.nlen++] = 1 + (data[5 + i % 3] >> (i % 4)) % 12;
		}
	if (data[7] & 1)
		cfg.pass_name[cfg.npass++] = "p";
	cfg.emit = sink;
	data += 8;
	size -= 8;

	if (k == 12) {
		e = sq_electra_new(5 + (size ? data[0] : 0) % 20, 101, 102, 7, sink, NULL);
		if (e == NULL)
			return 0;
		c = NULL;
	} else {
		cfg.kind = (enum sq_kind)k;
		if ((c = sq_new(&cfg, &err)) == NULL) {
			sq_free(err);
			return 0;
		}
	}
	ex_init(&ex);
	while (size > 0) {
		n = data[0];
		data++;
		size--;
		if (n > size)
			n = size;
		if (c != NULL && ex_decode(&ex, data, n, EX_TYPE_EXAMPLE) == -1) {
			struct sq_feat g[40];

			if (sq_fetch_canonical(c, data, n, g) == 1)
				abort();	/* accepted what the decoder refuses */
		} else if (ex_decode(&ex, data, n, EX_TYPE_EXAMPLE) == 0) {
			if (e != NULL) {
				ft = ex_get(&ex, "targets");
				if (ft && ft->kind == EX_INT64 &&
				    sq_electra_push(e, ft->i64, ft->n) == -1)
					break;
			} else {
				struct sq_feat g[40];
				int fast = sq_fetch_canonical(c, data, n, g);

				ni = sq_ninputs(c);
				for (i = 0; i < ni && i < 40; i++) {
					memset(&f[i], 0, sizeof f[i]);
					ft = ex_get(&ex, sq_input_name(c, i));
					if (ft == NULL)
						f[i].type = SQ_ABSENT;
					else if (ft->kind == EX_INT64 || ft->kind == EX_NONE) {
						f[i].type = SQ_INT;
						f[i].v = ft->i64;
						f[i].n = ft->kind == EX_INT64 ? ft->n : 0;
					} else {
						f[i].type = SQ_OTHER;
						f[i].tname = "string";
					}
				}
				/* The canonical-form reader agrees with the decoder. */
				for (i = 0; fast == 1 && i < ni && i < 40; i++) {
					if (g[i].type != f[i].type || (g[i].type == SQ_INT &&
					    (g[i].n != f[i].n || (g[i].n && memcmp(g[i].v,
					    f[i].v, g[i].n * sizeof(int64_t))))))
						abort();
					/* 'small' promises values in 0 .. 2^28. */
					for (j = 0; g[i].type == SQ_INT && g[i].small &&
					    j < g[i].n; j++)
						if ((uint64_t)g[i].v[j] >= 1u << 28)
							abort();
				}
				/* Push what the reader found, as pack-encdec does. */
				if (fast == 1)
					memcpy(f, g, (ni < 40 ? ni : 40) * sizeof *f);
				if (sq_push(c, f) == -1)
					break;
			}
		}
		data += n;
		size -= n;
	}
	if (c != NULL) {
		sq_finish(c);
		(void)sq_strerror(c);
		sq_free(c);
	}
	if (e != NULL) {
		sq_electra_flush(e);
		sq_electra_free(e);
	}
	ex_free(&ex);
	return 0;
}
