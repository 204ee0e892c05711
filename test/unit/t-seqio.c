/*
 * Unit tests for lib/seqio: the helpers, every converter on seqio's
 * worked examples, each quirk, the first-fit kernels, our strategies,
 * property tests on random records, and Electra's example builder.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "rng.h"
#include "seqio.h"
#include "tap.h"
#include "varint_values.h"

/* Captured output rows. */
#define MAXROWS	4096
struct feat {
	char	 name[64];
	int64_t	*v;
	size_t	 n;
};
struct rowcap {
	size_t	 nf;
	struct feat f[64];
};
static struct rowcap rows[MAXROWS];
static size_t nrows;

static void
reset_rows(void)
{
	size_t i, j;

	for (i = 0; i < nrows; i++)
		for (j = 0; j < rows[i].nf; j++)
			free(rows[i].f[j].v);
	nrows = 0;
}

static size_t bad_used;	/* rows whose padding bound was wrong */

static int
capture(void *arg, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	struct rowcap *r;
	size_t i, j;

	(void)arg;
	for (i = 0; used && i < n; i++) {
		if (used[i] > lens[i])
			bad_used++;
		for (j = used[i]; j < lens[i]; j++)
			if (vals[i][j] != 0) {
				bad_used++;
				break;
			}
	}
	if (nrows == MAXROWS)
		return 0;
	r = &rows[nrows++];
	r->nf = n;
	for (i = 0; i < n; i++) {
		snprintf(r->f[i].name, sizeof r->f[i].name, "%s", names[i]);
		r->f[i].n = lens[i];
		r->f[i].v = malloc((lens[i] + 1) * sizeof(int64_t));
		memcpy(r->f[i].v, vals[i], lens[i] * sizeof(int64_t));
	}
	return 0;
}

static const struct feat *
get(size_t row, const char *name)
{
	size_t i;

	if (row >= nrows)
		return NULL;
	for (i = 0; i < rows[row].nf; i++)
		if (strcmp(rows[row].f[i].name, name) == 0)
			return &rows[row].f[i];
	return NULL;
}

/* Does row 'row' hold feature 'name' equal to the -1-terminated list? */
static int
is(size_t row, const char *name, const int64_t *want)
{
	const struct feat *f = get(row, name);
	size_t n = 0, i;

	while (want[n] != -1)
		n++;
	if (f == NULL || f->n != n) {
		printf("#   %s: %s\n", name, f ? "wrong length" : "missing");
		return 0;
	}
	for (i = 0; i < n; i++)
		if (f->v[i] != want[i]) {
			printf("#   %s[%zu] = %lld, want %lld\n", name, i,
			    (long long)f->v[i], (long long)want[i]);
			return 0;
		}
	return 1;
}

#define L(...) ((const int64_t[]){ __VA_ARGS__, -1 })

/* A record: up to 4 features given as -1-terminated lists (NULL = absent). */
struct rec {
	const int64_t *v[6];
};

static struct sq_conv *
make(struct sq_config *cfg)
{
	struct sq_conv *c, *e = NULL;

	cfg->emit = capture;
	c = sq_new(cfg, &e);
	if (c == NULL) {
		printf("#   sq_new: %s\n", sq_strerror(e));
		sq_free(e);
	}
	return c;
}

/* Push records given as -1-terminated lists in input-name order. */
static int
push(struct sq_conv *c, const struct rec *r)
{
	struct sq_feat f[8];
	size_t i, n;

	memset(f, 0, sizeof f);
	for (i = 0; i < sq_ninputs(c) && i < 6; i++) {
		if (r->v[i] == NULL) {
			f[i].type = SQ_ABSENT;
			continue;
		}
		for (n = 0; r->v[i][n] != -1; n++)
			;
		f[i].type = SQ_INT;
		f[i].v = r->v[i];
		f[i].n = n;
	}
	return sq_push(c, f);
}

static void
cfg_lengths(struct sq_config *cfg, enum sq_kind k, const char *a, long la,
    const char *b, long lb, const char *s, long ls)
{
	sq_config_init(cfg);
	cfg->kind = k;
	if (a) {
		cfg->len_name[cfg->nlen] = a;
		cfg->len_val[cfg->nlen++] = la;
	}
	if (b) {
		cfg->len_name[cfg->nlen] = b;
		cfg->len_val[cfg->nlen++] = lb;
	}
	if (s) {
		cfg->len_name[cfg->nlen] = s;
		cfg->len_val[cfg->nlen++] = ls;
	}
}

static void
test_helpers(void)
{
	int64_t out[16];
	const char *msg = NULL;
	char m[256];
	const char *e[] = { "inputs", "targets" }, *a[] = { "targets", "x" };

	sq_autoregressive(L(3, 8, 1, 9, 1, 5, 4, 1, 0, 0), 10, 1,
	    L(1, 1, 1, 2, 2, 3, 3, 3, 0, 0), 0, out, &msg);
	TEST(memcmp(out, L(0, 3, 8, 0, 9, 0, 5, 4, 0, 0), 10 * 8) == 0,
	    "segment-aware shift of the docstring");
	sq_autoregressive(L(3, 9, 1, 4, 1, 0, 0), 7, 1, L(1, 1, 1, 2, 2, 0, 0),
	    10, out, &msg);
	TEST(memcmp(out, L(10, 3, 9, 10, 4, 10, 0), 7 * 8) == 0,
	    "bos 10 lands at each segment start and at the first padding slot");
	TEST(sq_autoregressive(L(1, 2, 3, 4), 2, 2, L(1, 2), 0, out, &msg) == -1 &&
	    strstr(msg, "Only 1-D sequences") != NULL, "packed 2-D is refused");
	sq_shift_right(L(1, 2, 3, 4), 2, 2, 7, out);
	TEST(out[0] == 7 && out[1] == 7 && out[2] == 1 && out[3] == 2,
	    "unpacked 2-D shifts whole rows");
	TEST(sq_exact_match(e, 2, a, 2, "TASK_FEATURES", "task_feature_lengths",
	    m, sizeof m) == -1 && strcmp(m, "The task_feature_lengths contains "
	    "extra features not specified in the TASK_FEATURES: {'x'}") == 0,
	    "extra features are reported first");
	TEST(sq_exact_match(e, 2, e + 1, 1, "E", "A", m, sizeof m) == -1 &&
	    strcmp(m, "The A is missing features specified in the E: {'inputs'}") == 0,
	    "missing features");
	TEST(sq_check_length("x", 5, 4, 0, "initial", m, sizeof m) == -1 &&
	    strstr(m, "not less than or equal to the expected length of 4 during "
	    "initial validation") != NULL, "non-strict length check");
	TEST(sq_check_length("x", 4, 4, 1, "l", m, sizeof m) == 0 &&
	    sq_check_length("x", 3, 4, 1, "l", m, sizeof m) == -1,
	    "strict length check");
	TEST(sq_check_feature("x", SQ_INT, NULL, L(1LL << 31), 1, "l", m,
	    sizeof m) == -1 && strstr(m, "Got int64, expected int32") != NULL,
	    "values outside int32 are a type error");
}

static void
test_docstrings(void)
{
	struct sq_config cfg;
	struct sq_conv *c;

	/* trim_and_pack_dataset */
	reset_rows();
	cfg_lengths(&cfg, SQ_PACK, "inputs", 10, "targets", 10, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(8, 7, 1, 0), L(4, 1, 0) } });
	push(c, &(struct rec){ { L(2, 3, 4, 1), L(5, 6, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "inputs", L(8, 7, 1, 2, 3, 4, 1, 0, 0, 0)) &&
	    is(0, "inputs_segment_ids", L(1, 1, 1, 2, 2, 2, 2, 0, 0, 0)) &&
	    is(0, "inputs_positions", L(0, 1, 2, 0, 1, 2, 3, 0, 0, 0)) &&
	    is(0, "targets", L(4, 1, 5, 6, 1, 0, 0, 0, 0, 0)) &&
	    is(0, "targets_segment_ids", L(1, 1, 2, 2, 2, 0, 0, 0, 0, 0)) &&
	    is(0, "targets_positions", L(0, 1, 0, 1, 2, 0, 0, 0, 0, 0)),
	    "trim_and_pack docstring");
	sq_free(c);

	/* EncDec */
	reset_rows();
	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 10, "targets", 7, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(7, 8, 5, 1), L(3, 9, 1) } });
	push(c, &(struct rec){ { L(8, 4, 9, 3, 1), L(4, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && rows[0].nf == 8 &&
	    is(0, "encoder_input_tokens", L(7, 8, 5, 1, 8, 4, 9, 3, 1, 0)) &&
	    is(0, "encoder_segment_ids", L(1, 1, 1, 1, 2, 2, 2, 2, 2, 0)) &&
	    is(0, "encoder_positions", L(0, 1, 2, 3, 0, 1, 2, 3, 4, 0)) &&
	    is(0, "decoder_target_tokens", L(3, 9, 1, 4, 1, 0, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 3, 9, 0, 4, 0, 0)) &&
	    is(0, "decoder_loss_weights", L(1, 1, 1, 1, 1, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 1, 1, 2, 2, 0, 0)) &&
	    is(0, "decoder_positions", L(0, 1, 2, 0, 1, 0, 0)),
	    "EncDec docstring");
	sq_free(c);

	/* PrefixLM example 1 */
	reset_rows();
	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 7, "targets", 8, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(7, 8, 5, 1), L(3, 9, 1) } });
	push(c, &(struct rec){ { L(8, 4, 9, 3, 1), L(4, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && rows[0].nf == 6 &&
	    is(0, "decoder_target_tokens", L(7, 8, 5, 1, 3, 9, 1, 8, 4, 9, 3, 1, 4, 1, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 7, 8, 5, 1, 3, 9, 0, 8, 4, 9, 3, 1, 4, 0)) &&
	    is(0, "decoder_loss_weights", L(0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0)) &&
	    is(0, "decoder_causal_attention", L(1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 0)) &&
	    is(0, "decoder_positions", L(0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0)),
	    "PrefixLM docstring example 1");
	sq_free(c);

	/* PrefixLM example 2, unpacked */
	reset_rows();
	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 10, "targets", 4, NULL, 0);
	cfg.pack = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(9, 4, 6, 1), L(3, 9, 1) } });
	TEST(nrows == 1 && rows[0].nf == 4 &&
	    is(0, "decoder_target_tokens", L(9, 4, 6, 1, 3, 9, 1, 0, 0, 0, 0, 0, 0, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 9, 4, 6, 1, 3, 9, 1, 0, 0, 0, 0, 0, 0)) &&
	    is(0, "decoder_loss_weights", L(0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)) &&
	    is(0, "decoder_causal_attention", L(1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
	    "PrefixLM docstring example 2 (unpacked: the EOS moves into padding)");
	sq_free(c);

	/* Encoder */
	reset_rows();
	cfg_lengths(&cfg, SQ_ENCODER, "inputs", 11, "targets", 11, NULL, 0);
	cfg.has_mask_id = 1;
	cfg.mask_id = 9;
	c = make(&cfg);
	push(c, &(struct rec){ { L(8, 9, 9, 3, 4, 1), L(8, 7, 4, 3, 4, 1) } });
	push(c, &(struct rec){ { L(8, 3, 9, 1), L(8, 3, 6, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && rows[0].nf == 5 &&
	    is(0, "encoder_input_tokens", L(8, 9, 9, 3, 4, 1, 8, 3, 9, 1, 0)) &&
	    is(0, "encoder_target_tokens", L(8, 7, 4, 3, 4, 1, 8, 3, 6, 1, 0)) &&
	    is(0, "encoder_loss_weights", L(0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0)) &&
	    is(0, "encoder_segment_ids", L(1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0)) &&
	    is(0, "encoder_positions", L(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 0)),
	    "Encoder docstring");
	sq_free(c);

	/* LM */
	reset_rows();
	cfg_lengths(&cfg, SQ_DECODER, "targets", 6, NULL, 0, NULL, 0);
	c = make(&cfg);
	TEST(sq_resolved(c) == SQ_LM, "decoder without inputs is LM");
	push(c, &(struct rec){ { L(3, 9, 1) } });
	push(c, &(struct rec){ { L(4, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "decoder_target_tokens", L(3, 9, 1, 4, 1, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 3, 9, 0, 4, 0)) &&
	    is(0, "decoder_loss_weights", L(1, 1, 1, 1, 1, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 1, 1, 2, 2, 0)) &&
	    is(0, "decoder_positions", L(0, 1, 2, 0, 1, 0)), "LM docstring");
	sq_free(c);
}

static void
test_config_errors(void)
{
	struct sq_config cfg;
	struct sq_conv *c, *e;

	cfg_lengths(&cfg, SQ_PREFIXSUFFIXLM, "inputs", 7, "targets", 8, NULL, 0);
	c = sq_new(&cfg, &e);
	TEST(c == NULL && e != NULL && sq_errkind(e) == SQ_ECONFIG &&
	    strcmp(sq_strerror(e), "The task_feature_lengths is missing features "
	    "specified in the TASK_FEATURES: {'suffixes'}") == 0,
	    "PrefixSuffixLM without suffixes fails validation 1");
	sq_free(e);

	cfg_lengths(&cfg, SQ_PREPACKED_ENCDEC, "inputs", 7, "targets", 8, NULL, 0);
	c = sq_new(&cfg, &e);
	TEST(c == NULL && strstr(sq_strerror(e), "'pack=True' is not allowed") != NULL,
	    "PrePackedEncDec refuses the default pack=True");
	sq_free(e);

	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 7, "targets", 8, "p", 3);
	cfg.pass_name[cfg.npass++] = "p";
	c = sq_new(&cfg, &e);
	TEST(c == NULL && strcmp(sq_strerror(e),
	    "Packing is incompatible with pass-through features.") == 0,
	    "pass-through needs --no-pack");
	sq_free(e);

	cfg.kind = SQ_LM;
	cfg.pack = 0;
	cfg.nlen = 0;
	cfg.len_name[cfg.nlen] = "targets";
	cfg.len_val[cfg.nlen++] = 4;
	cfg.len_name[cfg.nlen] = "p";
	cfg.len_val[cfg.nlen++] = 4;
	c = sq_new(&cfg, &e);
	TEST(c == NULL && strcmp(sq_strerror(e), "The model_feature_lengths is "
	    "missing features specified in the model_feature_names: {'p'}") == 0,
	    "LM rejects pass-through in validation 3");
	sq_free(e);

	cfg.kind = SQ_DECODER;
	c = sq_new(&cfg, &e);
	TEST(c == NULL && strstr(sq_strerror(e), "contains extra features not "
	    "specified in the TASK_FEATURES: {'p'}") != NULL,
	    "Decoder routed to LM rejects pass-through in validation 1");
	sq_free(e);

	cfg_lengths(&cfg, SQ_ENCODER, "inputs", 7, "targets", 7, NULL, 0);
	c = sq_new(&cfg, &e);
	TEST(c == NULL && e != NULL, "Encoder needs a mask id");
	sq_free(e);

	/* Found by fuzzing: long names in pack mode overran the name pool. */
	reset_rows();
	cfg_lengths(&cfg, SQ_PACK, "a_rather_long_feature_name_for_the_pool", 3,
	    "inputs_segment_ids", 2, NULL, 0);
	c = make(&cfg);
	TEST(c != NULL && push(c, &(struct rec){ { L(4, 1), L(5) } }) == 0 &&
	    sq_finish(c) == 0 && nrows == 1 &&
	    is(0, "inputs_segment_ids_segment_ids", L(1, 0)) &&
	    is(0, "a_rather_long_feature_name_for_the_pool_positions", L(0, 1, 0)),
	    "pack mode with long feature names");
	sq_free(c);

	/* Found by fuzzing: pass-through names in pack mode sized outputs from a missing length. */
	cfg_lengths(&cfg, SQ_PACK, "inputs", 7, NULL, 0, NULL, 0);
	cfg.pass_name[cfg.npass++] = "p";
	c = sq_new(&cfg, &e);
	TEST(c == NULL && e != NULL && strstr(sq_strerror(e), "not pack") != NULL,
	    "pass-through features are refused by pack, pad and the pre-packed LMs");
	sq_free(e);
}

static void
test_quirks(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	int rv;

	/* Q1 and Q3: an interior 0 costs the EOS and gets segment id 0. */
	reset_rows();
	cfg_lengths(&cfg, SQ_LM, "targets", 6, NULL, 0, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(3, 0, 5, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "decoder_target_tokens", L(3, 0, 5, 0, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 0, 1, 0, 0, 0)) &&
	    is(0, "decoder_positions", L(0, 1, 2, 0, 0, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 0, 0, 0, 0, 0)),
	    "Q1/Q3: [3,0,5,1] keeps 3 values; bos on the 0 and after it");
	sq_free(c);

	reset_rows();
	cfg.bos_id = 7;
	c = make(&cfg);
	push(c, &(struct rec){ { L(3, 0, 5, 1) } });
	sq_finish(c);
	TEST(is(0, "decoder_input_tokens", L(7, 7, 7, 7, 0, 0)),
	    "Q3 with bos 7: bos on the kept 0, the token after it, and the first pad");
	sq_free(c);

	/* Q2: windows of max(length) records. */
	reset_rows();
	cfg_lengths(&cfg, SQ_LM, "targets", 4, NULL, 0, NULL, 0);
	c = make(&cfg);
	for (rv = 0; rv < 6; rv++)
		push(c, &(struct rec){ { L(5) } });
	sq_finish(c);
	TEST(nrows == 2 && is(0, "decoder_target_tokens", L(5, 5, 5, 5)) &&
	    is(1, "decoder_target_tokens", L(5, 5, 0, 0)),
	    "Q2: a window of 4 records closes the row");
	sq_free(c);

	reset_rows();
	cfg_lengths(&cfg, SQ_LM, "targets", 5, NULL, 0, NULL, 0);
	c = make(&cfg);
	for (rv = 0; rv < 6; rv++)
		push(c, &(struct rec){ { L(5, 1) } });
	sq_finish(c);
	TEST(nrows == 4 && is(2, "decoder_target_tokens", L(5, 1, 0, 0, 0)) &&
	    is(3, "decoder_target_tokens", L(5, 1, 0, 0, 0)),
	    "Q2: the open row is flushed at the window end, though the next record fits");
	sq_free(c);

	/* Q4: per-key renumbering. */
	reset_rows();
	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 6, "targets", 6, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(4, 1), L(-1) } });
	push(c, &(struct rec){ { L(5, 1), L(6, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "encoder_segment_ids", L(1, 1, 2, 2, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 1, 0, 0, 0, 0)),
	    "Q4: an empty targets shifts the decoder numbering");
	sq_free(c);

	/* Q5: an all-empty window gives one zero row. */
	reset_rows();
	cfg_lengths(&cfg, SQ_LM, "targets", 3, NULL, 0, NULL, 0);
	cfg.bos_id = 9;
	c = make(&cfg);
	push(c, &(struct rec){ { L(-1) } });
	push(c, &(struct rec){ { L(0, 0) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "decoder_target_tokens", L(0, 0, 0)) &&
	    is(0, "decoder_input_tokens", L(9, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(0, 0, 0)), "Q5: all-empty window");
	sq_free(c);

	/* Q6: unpacked LM honours an input targets_segment_ids. */
	reset_rows();
	cfg_lengths(&cfg, SQ_LM, "targets", 4, NULL, 0, NULL, 0);
	cfg.pack = 0;
	c = make(&cfg);
	TEST(sq_ninputs(c) == 2 && strcmp(sq_input_name(c, 1), "targets_segment_ids") == 0,
	    "Q6: unpacked LM looks up targets_segment_ids");
	push(c, &(struct rec){ { L(3, 4, 5, 6), L(1, 1, 2, 2) } });
	push(c, &(struct rec){ { L(3, 4, 5, 6), NULL } });
	TEST(nrows == 2 && is(0, "decoder_input_tokens", L(0, 3, 0, 5)) &&
	    is(1, "decoder_input_tokens", L(0, 3, 4, 5)) && rows[0].nf == 3,
	    "Q6: the record's segment ids steer the shift");
	sq_free(c);

	/* Q7 and Q8: PrefixLM. */
	reset_rows();
	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 3, "targets", 3, NULL, 0);
	cfg.pack = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(5, 0, 1), L(7, 1) } });
	TEST(is(0, "decoder_loss_weights", L(0, 1, 0, 1, 1, 0)),
	    "Q7: an input token 0 gets loss weight 1");
	sq_free(c);

	reset_rows();
	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 4, "targets", 4, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(5, 1), L(-1) } });
	push(c, &(struct rec){ { L(6, 1), L(8, 1) } });
	sq_finish(c);
	TEST(nrows == 1 &&
	    is(0, "decoder_target_tokens", L(5, 1, 6, 1, 8, 1, 0, 0)) &&
	    is(0, "decoder_causal_attention", L(1, 1, 1, 1, 1, 0, 1, 0)) &&
	    is(0, "decoder_loss_weights", L(0, 0, 0, 0, 1, 1, 1, 0)),
	    "Q8: empty targets shift the width features one slot right");
	sq_free(c);

	reset_rows();
	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 4, "targets", 4, NULL, 0);
	c = make(&cfg);
	push(c, &(struct rec){ { L(-1), L(-1) } });
	push(c, &(struct rec){ { L(6, 1), L(8, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "decoder_target_tokens", L(6, 1, 8, 1, 0, 0, 0, 0)) &&
	    is(0, "decoder_causal_attention", L(1, 1, 1, 0, 1, 0, 0, 0)),
	    "Q8: empty inputs and targets add a width slot only");
	sq_free(c);

	/* Q9 and Q10: Encoder. */
	reset_rows();
	cfg_lengths(&cfg, SQ_ENCODER, "inputs", 4, "targets", 4, NULL, 0);
	cfg.has_mask_id = 1;
	cfg.mask_id = 0;
	cfg.pack = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(3, 1), L(3, 1) } });
	TEST(is(0, "encoder_loss_weights", L(0, 0, 1, 1)),
	    "Q9: mask id 0 weights padding");
	sq_free(c);

	reset_rows();
	cfg_lengths(&cfg, SQ_ENCODER, "inputs", 4, "targets", 3, NULL, 0);
	cfg.has_mask_id = 1;
	cfg.mask_id = 9;
	c = make(&cfg);
	rv = push(c, &(struct rec){ { L(3, 1), L(3, 1) } });
	if (rv == 0)
		rv = sq_finish(c);
	TEST(rv == -1 && sq_errkind(c) == SQ_EDATA && strcmp(sq_strerror(c),
	    "Feature 'encoder_target_tokens' has length not equal to the expected "
	    "length of 4 during output_validation validation") == 0,
	    "Q10: Lt != Li fails output validation");
	sq_free(c);

	reset_rows();
	cfg.length_check = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(3, 1), L(3, 1) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "encoder_target_tokens", L(3, 1, 0)),
	    "Q10: without the length check targets keep Lt");
	sq_free(c);
}

static void
test_data_errors(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_feat f[3];

	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 4, "targets", 4, NULL, 0);
	c = make(&cfg);
	memset(f, 0, sizeof f);
	f[0].type = SQ_INT;
	f[1].type = SQ_ABSENT;
	TEST(sq_push(c, f) == -1 && strcmp(sq_strerror(c), "Dataset is missing "
	    "an expected feature during input_validation validation: 'targets'") == 0,
	    "a missing feature");
	sq_free(c);
	c = make(&cfg);
	f[1].type = SQ_OTHER;
	f[1].tname = "string";
	TEST(sq_push(c, f) == -1 && strstr(sq_strerror(c), "Got string, expected int32"),
	    "a feature of another type");
	sq_free(c);

	/* Without the length check, over-long features are trimmed. */
	reset_rows();
	cfg.length_check = 0;
	cfg.pack = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(1, 2, 3, 4, 5, 6), L(7, 8, 9, 10, 11) } });
	TEST(nrows == 1 && is(0, "encoder_input_tokens", L(1, 2, 3, 4)) &&
	    is(0, "decoder_input_tokens", L(0, 7, 8, 9)), "trimmed without the check");
	{
		struct sq_stats st;

		sq_get_stats(c, &st);
		TEST_INT(st.trimmed, ==, 3, "trimmed tokens are counted");
	}
	sq_free(c);
}

static void
test_first_fit_kernel(void)
{
	struct sq_config cfg;
	struct sq_conv *c;

	reset_rows();
	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 5, "targets", 5, NULL, 0);
	cfg.custom_ops = 1;
	c = make(&cfg);
	push(c, &(struct rec){ { L(1, 2, 3), L(4, 5) } });
	push(c, &(struct rec){ { L(6, 7, 8), L(9) } });
	push(c, &(struct rec){ { L(10, 11), L(-1) } });
	push(c, &(struct rec){ { L(12), L(13, 14) } });
	sq_finish(c);
	TEST(nrows == 2 &&
	    is(0, "encoder_input_tokens", L(1, 2, 3, 10, 11)) &&
	    is(0, "encoder_segment_ids", L(1, 1, 1, 2, 2)) &&
	    is(0, "decoder_target_tokens", L(4, 5, 0, 0, 0)) &&
	    is(0, "decoder_segment_ids", L(1, 1, 0, 0, 0)) &&
	    is(1, "encoder_input_tokens", L(6, 7, 8, 12, 0)) &&
	    is(1, "encoder_segment_ids", L(1, 1, 1, 2, 0)) &&
	    is(1, "decoder_target_tokens", L(9, 13, 14, 0, 0)) &&
	    is(1, "decoder_segment_ids", L(1, 2, 2, 0, 0)),
	    "first-fit kernel: a later record lands in an earlier bin");
	sq_free(c);

	/* An empty feature consumes a segment index in every key. */
	reset_rows();
	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 6, "targets", 6, NULL, 0);
	cfg.custom_ops = 1;
	c = make(&cfg);
	push(c, &(struct rec){ { L(1, 2), L(-1) } });
	push(c, &(struct rec){ { L(3), L(4, 0, 5) } });
	sq_finish(c);
	TEST(nrows == 1 && is(0, "decoder_segment_ids", L(2, 2, 0, 0, 0, 0)) &&
	    is(0, "decoder_target_tokens", L(4, 0, 0, 0, 0, 0)) &&
	    is(0, "decoder_input_tokens", L(0, 4, 0, 0, 0, 0)) &&
	    is(0, "encoder_segment_ids", L(1, 1, 2, 0, 0, 0)),
	    "first-fit kernel: ids skip a number, non-zero counting still applies");
	sq_free(c);
}

/* Property tests: random records through every packing path. */
static int
check_row_props(size_t row, const char *tok, const char *seg, const char *pos,
    int64_t bos, const char *din)
{
	const struct feat *t = get(row, tok), *s = get(row, seg), *p = get(row, pos);
	const struct feat *d = din ? get(row, din) : NULL;
	size_t i;

	if (!t || !s || !p)
		return 0;
	for (i = 0; i < t->n; i++) {
		if (t->v[i] == 0 && s->v[i] != 0)
			return 0;
		if (i > 0 && s->v[i] != 0 && s->v[i] == s->v[i - 1] &&
		    p->v[i] != p->v[i - 1] + 1)
			return 0;	/* positions count up inside a segment */
		if (i > 0 && s->v[i] != 0 && s->v[i] != s->v[i - 1] && p->v[i] != 0 &&
		    s->v[i - 1] != 0)
			return 0;	/* a new segment starts at position 0 */
		if (s->v[i] == 0 && t->v[i] != 0)
			return 0;
		if (d && i > 0 && s->v[i] != s->v[i - 1] && d->v[i] != bos)
			return 0;	/* bos at every segment start */
		if (d && i > 0 && s->v[i] == s->v[i - 1] && d->v[i] != t->v[i - 1])
			return 0;
	}
	if (d && d->v[0] != bos)
		return 0;
	return 1;
}

static void
test_properties(void)
{
	static const char *const sname[] = { "seqio", "custom", "first-fit", "best-fit" };
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_stats st;
	struct rng r;
	int64_t *recs[400][2];
	size_t lens[400][2];
	uint64_t in_sum[2], out_sum[2], in_cnt[2], out_cnt[2];
	size_t i, j, k, row;
	int strat, ok, okseg;

	rng_seed(&r, 7);
	for (i = 0; i < 400; i++)
		for (k = 0; k < 2; k++) {
			lens[i][k] = (size_t)rng_below(&r, k ? 12 : 20);
			recs[i][k] = malloc((lens[i][k] + 1) * sizeof(int64_t));
			for (j = 0; j < lens[i][k]; j++)
				recs[i][k][j] = 1 + (int64_t)rng_below(&r, 1000);
			recs[i][k][lens[i][k]] = -1;
		}
	for (strat = 0; strat < 4; strat++) {
		reset_rows();
		cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 24, "targets", 16, NULL, 0);
		cfg.bos_id = 3;
		cfg.custom_ops = strat == 1;
		cfg.strategy = strat == 2 ? SQ_FIRST_FIT : strat == 3 ? SQ_BEST_FIT : SQ_SEQIO;
		cfg.window = 8;
		c = make(&cfg);
		memset(in_sum, 0, sizeof in_sum);
		memset(in_cnt, 0, sizeof in_cnt);
		for (i = 0; i < 400; i++) {
			push(c, &(struct rec){ { recs[i][0], recs[i][1] } });
			for (k = 0; k < 2; k++)
				for (j = 0; j < lens[i][k]; j++) {
					in_sum[k] += (uint64_t)recs[i][k][j];
					in_cnt[k]++;
				}
		}
		sq_finish(c);
		memset(out_sum, 0, sizeof out_sum);
		memset(out_cnt, 0, sizeof out_cnt);
		ok = okseg = 1;
		for (row = 0; row < nrows; row++) {
			const struct feat *e = get(row, "encoder_input_tokens");
			const struct feat *d = get(row, "decoder_target_tokens");

			for (j = 0; j < e->n; j++) {
				out_sum[0] += (uint64_t)e->v[j];
				out_cnt[0] += e->v[j] != 0;
			}
			for (j = 0; j < d->n; j++) {
				out_sum[1] += (uint64_t)d->v[j];
				out_cnt[1] += d->v[j] != 0;
			}
			if (!check_row_props(row, "encoder_input_tokens",
			    "encoder_segment_ids", "encoder_positions", 3, NULL) ||
			    !check_row_props(row, "decoder_target_tokens",
			    "decoder_segment_ids", "decoder_positions", 3,
			    "decoder_input_tokens"))
				okseg = 0;
		}
		ok = in_sum[0] == out_sum[0] && in_sum[1] == out_sum[1] &&
		    in_cnt[0] == out_cnt[0] && in_cnt[1] == out_cnt[1];
		TEST(ok, "%s: no token lost or duplicated", sname[strat]);
		TEST(okseg, "%s: segment ids, positions and bos consistent", sname[strat]);
		sq_get_stats(c, &st);
		TEST(st.rows == nrows && sq_efficiency(&st) > 0 && sq_efficiency(&st) <= 1,
		    "%s: efficiency %.3f over %zu rows", sname[strat],
		    sq_efficiency(&st), nrows);
		sq_free(c);
	}
	for (i = 0; i < 400; i++)
		for (k = 0; k < 2; k++)
			free(recs[i][k]);
}

static void
test_strategies_denser(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_stats st;
	struct rng r;
	int64_t rec[40];
	double eff[3];
	size_t i, j, n;
	int s;

	for (s = 0; s < 3; s++) {
		cfg_lengths(&cfg, SQ_LM, "targets", 64, NULL, 0, NULL, 0);
		cfg.strategy = s == 0 ? SQ_SEQIO : s == 1 ? SQ_FIRST_FIT : SQ_BEST_FIT;
		cfg.window = 32;
		cfg.emit = NULL;
		c = sq_new(&cfg, NULL);
		rng_seed(&r, 11);
		for (i = 0; i < 5000; i++) {
			struct sq_feat f = { SQ_INT, rec, 0, NULL, 0, 0, 0 };

			n = 1 + (size_t)rng_below(&r, 39);
			for (j = 0; j < n; j++)
				rec[j] = 5;
			f.n = n;
			sq_push(c, &f);
		}
		sq_finish(c);
		sq_get_stats(c, &st);
		eff[s] = sq_efficiency(&st);
		sq_free(c);
	}
	TEST(eff[1] > eff[0] && eff[2] >= eff[1] && eff[2] > 0.97,
	    "efficiency: seqio %.3f < first-fit %.3f <= best-fit %.3f",
	    eff[0], eff[1], eff[2]);
}

/* Electra. */
static void
test_electra_layout(void)
{
	struct sq_electra *e;

	reset_rows();
	e = sq_electra_new(8, 101, 102, 1, capture, NULL);
	sq_electra_push(e, L(5, 6), 2);
	sq_electra_push(e, NULL, 0);		/* document end */
	sq_electra_push(e, NULL, 0);		/* a second blank: nothing */
	TEST(nrows == 1 && is(0, "input_ids", L(101, 5, 6, 102, 0, 0, 0, 0)) &&
	    is(0, "input_mask", L(1, 1, 1, 1, 0, 0, 0, 0)) &&
	    is(0, "segment_ids", L(0, 0, 0, 0, 0, 0, 0, 0)),
	    "electra: one sentence then a blank");
	sq_electra_push(e, L(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10);
	TEST(nrows == 2 && is(1, "input_ids", L(101, 1, 2, 3, 4, 5, 6, 102)) &&
	    is(1, "input_mask", L(1, 1, 1, 1, 1, 1, 1, 1)),
	    "electra: a long sentence fills the first segment, cut to max-2");
	sq_electra_push(e, L(7, 7, 7), 3);
	sq_electra_flush(e);
	TEST(nrows == 3 && is(2, "input_ids", L(101, 7, 7, 7, 102, 0, 0, 0)),
	    "electra: the partial example at the end is written");
	TEST(sq_electra_flush(e) == 0 && nrows == 3, "electra: flushing twice adds nothing");
	sq_electra_free(e);
}

static void
test_electra_probabilities(void)
{
	struct sq_electra *e;
	int64_t s3[3] = { 4, 4, 4 };
	size_t i, j, single = 0, full = 0, two = 0, first30 = 0, short_ = 0;
	const struct feat *seg, *mask;
	size_t nm, n0;

	reset_rows();
	e = sq_electra_new(64, 1, 2, 12345, capture, NULL);
	for (i = 0; i < 80000 && nrows < MAXROWS; i++)
		sq_electra_push(e, s3, 3);
	sq_electra_free(e);
	for (i = 0; i < nrows; i++) {
		seg = get(i, "segment_ids");
		mask = get(i, "input_mask");
		for (j = nm = n0 = 0; j < 64; j++) {
			nm += mask->v[j] != 0;
			n0 += mask->v[j] != 0 && seg->v[j] == 0;
		}
		if (nm < 60)
			short_++;
		else
			full++;
		if (nm == n0)
			single++;
		else if (nm >= 60) {
			two++;
			first30 += n0 == 32;	/* [CLS] + 30 + [SEP] */
		}
	}
	TEST(nrows > 3000, "electra: %zu examples", nrows);
	TEST((double)single / nrows > 0.085 && (double)single / nrows < 0.115,
	    "electra: one segment only in %.3f of examples (0.1)",
	    (double)single / nrows);
	TEST((double)short_ / nrows > 0.035 && (double)short_ / nrows < 0.065,
	    "electra: random-length examples %.3f (0.05 less what lands near max)",
	    (double)short_ / nrows);
	TEST((double)first30 / two > 0.45 && (double)first30 / two < 0.55,
	    "electra: the coin puts the straddling sentence first in %.3f (0.5)",
	    (double)first30 / two);
}

static void
test_electra_seed(void)
{
	struct sq_electra *a, *b;
	int64_t s[5] = { 3, 4, 5, 6, 7 };
	size_t i, half, same = 1, j;

	reset_rows();
	a = sq_electra_new(16, 1, 2, 99, capture, NULL);
	for (i = 0; i < 2000; i++)
		sq_electra_push(a, s, 1 + i % 5);
	sq_electra_flush(a);
	half = nrows;
	b = sq_electra_new(16, 1, 2, 99, capture, NULL);
	for (i = 0; i < 2000; i++)
		sq_electra_push(b, s, 1 + i % 5);
	sq_electra_flush(b);
	TEST(nrows == 2 * half, "electra: the same seed gives the same count");
	for (i = 0; i < half && same; i++)
		for (j = 0; j < 16; j++)
			if (rows[i].f[0].v[j] != rows[half + i].f[0].v[j] ||
			    rows[i].f[2].v[j] != rows[half + i].f[2].v[j])
				same = 0;
	TEST(same, "electra: the same seed gives the same examples");
	sq_electra_free(a);
	sq_electra_free(b);
	TEST(sq_electra_new(4, 1, 2, 0, NULL, NULL) == NULL, "electra: max length below 5 refused");
}

static void
test_rng(void)
{
	struct rng r;
	uint64_t a, counts[5] = { 0 };
	int i;

	rng_seed(&r, 0);
	a = rng_next(&r);
	rng_seed(&r, 0);
	TEST(rng_next(&r) == a, "rng: seeding is deterministic");
	for (i = 0; i < 50000; i++)
		counts[rng_range(&r, 5, 9) - 5]++;
	for (i = 0; i < 5; i++)
		TEST(counts[i] > 9500 && counts[i] < 10500, "rng: range bucket %d: %llu",
		    i, (unsigned long long)counts[i]);
	TEST(rng_double(&r) < 1.0 && rng_below(&r, 0) == 0, "rng: bounds");
}

/*
 * The canonical-form reader decodes packed varints of every size, at
 * every place in the list (the 8-byte window and the tail), exactly as
 * the Example decoder does, and says when the values are all small.
 */
static void
test_fetch_varints(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_feat f[4];
	struct ex_builder b;
	struct example ex;
	struct buf out = { 0 };
	const struct ex_feature *ft;
	struct rng r;
	int64_t v[2][48];
	size_t n[2], i, j, k, trial, bad = 0;
	int maxk, small, got;

	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 64, "targets", 64, NULL, 0);
	cfg.emit = NULL;
	c = sq_new(&cfg, NULL);
	exb_init(&b);
	ex_init(&ex);
	rng_seed(&r, 5);
	for (trial = 0; trial < 20000 && !bad; trial++) {
		exb_reset(&b);
		maxk = 1 + (int)(trial % 10);
		for (k = 0; k < 2; k++) {
			n[k] = (size_t)rng_below(&r, 48);
			for (j = 0; j < n[k]; j++)
				v[k][j] = value_of_size(&r, 1 + (int)rng_below(&r, (uint32_t)maxk));
			exb_int64(&b, k ? "targets" : "inputs", v[k], n[k]);
		}
		out.len = 0;
		exb_encode(&b, &out);
		got = sq_fetch_canonical(c, out.p, out.len, f);
		ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE);
		for (k = 0; k < 2 && !bad; k++) {
			ft = ex_get(&ex, k ? "targets" : "inputs");
			small = 1;
			for (j = 0; j < n[k]; j++)
				small &= v[k][j] >= 0 && v[k][j] < 1 << 28;
			if (got != 1 || f[k].type != SQ_INT || f[k].n != n[k] ||
			    ft == NULL || (n[k] > 0 && (ft->n != n[k] ||
			    memcmp(ft->i64, v[k], n[k] * sizeof(int64_t)) != 0)) ||
			    (n[k] > 0 && memcmp(f[k].v, v[k], n[k] * sizeof(int64_t)) != 0) ||
			    (n[k] > 0 && f[k].small != small)) {
				TEST(0, "trial %zu feature %zu: reader and decoder differ", trial, k);
				bad = 1;
			}
		}
	}
	TEST(!bad, "canonical reader: varints of 1..10 bytes, negative values");

	/* 'small' skips the int32 check only when no value can exceed it. */
	for (i = 0; i < 3; i++) {
		static const int64_t probe[3] = { (1 << 28) - 1, 1 << 28, 1LL << 31 };
		int64_t t[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

		t[i * 4] = probe[i];
		exb_reset(&b);
		exb_int64(&b, "inputs", t, 9);
		exb_int64(&b, "targets", t, 9);
		out.len = 0;
		exb_encode(&b, &out);
		sq_free(c);
		c = sq_new(&cfg, NULL);
		got = sq_fetch_canonical(c, out.p, out.len, f);
		if (i < 2)
			TEST(got == 1 && f[0].small == !i && sq_push(c, f) == 0,
			    "value %lld is taken", (long long)probe[i]);
		else
			TEST(got == 1 && !f[0].small && sq_push(c, f) == -1 &&
			    strstr(sq_strerror(c), "expected int32 (value 2147483648") != NULL,
			    "value 2^31 still fails the int32 check");
	}
	sq_free(c);
	exb_free(&b);
	ex_free(&ex);
	rp_buf_free(&out);
}

/*
 * The byte path against the general path: one converter pushes every
 * record through sq_push_bytes() first, the other never; both fall back
 * to the canonical reader, then the full decoder, as pack-encdec does.
 * Rows are compared as the records written, with the errors and stats.
 */
struct bsink {
	struct buf	 out;
	struct ex_lists	*enc;
	const struct sq_conv *c;
	size_t		 brows;		/* rows made by the byte path */
};

static void
bsink_put(struct bsink *s, const uint8_t *p, size_t n)
{
	uint8_t hdr[8];

	rp_put_le64(hdr, n);
	rp_buf_append(&s->out, hdr, 8);
	rp_buf_append(&s->out, p, n);
}

static int
bsink_row(void *arg, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	struct bsink *s = arg;
	size_t sz = ex_encode_int64_lists(s->enc, n, names, vals, lens, used);
	uint8_t *p = malloc(sz + 1);

	ex_lists_put(s->enc, p);
	bsink_put(s, p, sz);
	free(p);
	return 0;
}

static int
bsink_brow(void *arg, const struct sq_brow *row)
{
	struct bsink *s = arg;
	struct sq_brow r = *row;
	size_t sz = sq_brow_size(s->c, &r);
	uint8_t *p = malloc(sz + 1);

	sq_brow_put(s->c, &r, p);
	bsink_put(s, p, sz);
	free(p);
	s->brows++;
	return 0;
}

/* A varint at b, with 'extra' needless continuation bytes. */
static void
put_varint(struct buf *b, uint64_t v, int extra)
{
	uint8_t t[16];
	size_t n = 0;

	while (v >= 0x80 || extra > 0) {
		if (v < 0x80)
			extra--;
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	rp_buf_append(b, t, n);
}

static void
put_field(struct buf *b, uint8_t tag, const struct buf *body)
{
	rp_buf_append(b, &tag, 1);
	put_varint(b, body->len, 0);
	rp_buf_append(b, body->p, body->len);
}

/*
 * A random token Example: 'inputs' and 'targets' with lengths around
 * L, values of every width (mostly what the byte path takes), and now
 * and then a form the byte path or the canonical reader leaves alone.
 */
static void
random_record(struct rng *r, struct buf *rec, long Li, long Lt, unsigned oddness,
    size_t maxn)
{
	static const char *const nm[3] = { "inputs", "targets", "x" };
	struct buf feats = { 0 }, ent = { 0 }, ftr = { 0 }, lst = { 0 }, pk = { 0 };
	size_t j, n, nf;
	uint64_t odd = rng_below(r, 100) < oddness ? rng_next(r) : 0;	/* deviations */
	int order[4] = { 0, 1, 2, 1 }, t, k;
	int64_t v;

	nf = odd & 1 ? 3 : 2;
	if (odd & 2) {			/* another order */
		order[0] = 1;
		order[1] = 0;
	}
	if (odd && (odd >> 2 & 15) == 0)	/* a key twice */
		nf = 4;
	for (k = 0; k < (int)nf; k++) {
		const char *name = nm[order[k]];
		long L = order[k] == 0 ? Li : Lt;

		if ((odd >> 6 & 31) == (uint64_t)(k + 1))
			continue;	/* absent */
		n = (size_t)rng_below(r, (uint64_t)L + (rng_below(r, 20) ? 1 : 4));
		if (maxn > 0 && n > maxn)
			n = (size_t)rng_below(r, maxn + 1);
		if (rng_below(r, 6) == 0)
			n = 0;
		pk.len = lst.len = ftr.len = ent.len = 0;
		for (j = 0; j < n; j++) {
			t = (int)rng_below(r, 100);
			if (odd == 0 || t < 85)
				v = value_of_size(r, 1 + (int)rng_below(r, 4));
			else
				v = value_of_size(r, 1 + (int)rng_below(r, 10));
			if (v == 0 && odd == 0)
				v = 5;
			if (odd && t == 99)
				v = 0;
			put_varint(&pk, (uint64_t)v, odd && t == 98 ? 1 + (int)rng_below(r, 2) : 0);
		}
		if ((odd >> 11 & 31) == 1) {	/* unpacked values */
			for (j = 0; j < pk.len; j++) {
				rp_buf_append(&lst, "\x08", 1);
				rp_buf_append(&lst, pk.p + j, 1);
				while (pk.p[j] & 0x80 && j + 1 < pk.len) {
					j++;
					rp_buf_append(&lst, pk.p + j, 1);
				}
			}
		} else if (n > 0 || rng_below(r, 2))
			put_field(&lst, 0x0a, &pk);
		if ((odd >> 16 & 31) == 1 && order[k] != 2) {	/* strings */
			rp_buf_append(&pk, "", 0);
			put_field(&ftr, 0x0a, &lst);
		} else if ((odd >> 21 & 31) == 1)	/* a Feature with no list */
			;
		else
			put_field(&ftr, order[k] == 2 && (odd >> 26 & 1) ? 0x0a : 0x1a, &lst);
		pk.len = 0;
		rp_buf_append(&pk, name, strlen(name));
		if ((odd >> 31 & 31) == 1) {	/* value before key */
			put_field(&ent, 0x12, &ftr);
			put_field(&ent, 0x0a, &pk);
		} else {
			put_field(&ent, 0x0a, &pk);
			put_field(&ent, 0x12, &ftr);
		}
		put_field(&feats, 0x0a, &ent);
	}
	rec->len = 0;
	put_field(rec, 0x0a, &feats);
	if ((odd >> 36 & 63) == 1 && rec->len > 2)	/* damaged */
		rec->len -= 1 + (size_t)rng_below(r, rec->len / 2);
	rp_buf_free(&feats);
	rp_buf_free(&ent);
	rp_buf_free(&ftr);
	rp_buf_free(&lst);
	rp_buf_free(&pk);
}

/*
 * A feature the converter does not read is still checked as the
 * decoder checks it: its packed varints at most 10 bytes each.  Runs
 * of continuation bytes of every length near the limit, at every
 * offset from an 8-byte boundary, whole or cut.
 */
static void
test_unused_varints(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_feat f[4];
	struct example ex;
	struct buf pk = { 0 }, l = { 0 }, ft = { 0 }, e = { 0 }, fs = { 0 }, rec = { 0 };
	size_t pre, run, j, bad = 0, n = 0;
	int cut, want, got;

	cfg_lengths(&cfg, SQ_LM, "targets", 64, NULL, 0, NULL, 0);
	cfg.emit = NULL;
	c = sq_new(&cfg, NULL);
	ex_init(&ex);
	for (pre = 0; pre < 17; pre++)
		for (run = 6; run < 14; run++)
			for (cut = 0; cut < 2; cut++) {
				pk.len = l.len = ft.len = e.len = fs.len = 0;
				for (j = 0; j < pre; j++)
					rp_buf_append(&pk, "\x05", 1);
				for (j = 0; j < run; j++)
					rp_buf_append(&pk, "\x81", 1);
				if (!cut)
					rp_buf_append(&pk, "\x01", 1);
				for (j = 0; j < pre % 5 && !cut; j++)
					rp_buf_append(&pk, "\x07", 1);
				put_field(&l, 0x0a, &pk);
				put_field(&ft, 0x1a, &l);
				rp_buf_append(&e, "\x0a\x01x", 3);
				put_field(&e, 0x12, &ft);
				put_field(&fs, 0x0a, &e);
				e.len = 0;
				rp_buf_append(&e, "\x0a\x07targets\x12\x05\x1a\x03\x0a\x01\x05", 16);
				put_field(&fs, 0x0a, &e);
				rec.len = 0;
				put_field(&rec, 0x0a, &fs);
				want = ex_decode(&ex, rec.p, rec.len, EX_TYPE_EXAMPLE) == 0;
				got = sq_fetch_canonical(c, rec.p, rec.len, f);
				if (want != (!cut && run <= 9) || (got == 1) != want) {
					TEST(0, "%zu bytes, then a run of %zu%s: decoder %d, reader %d",
					    pre, run, cut ? " (cut)" : "", want, got);
					bad = 1;
				}
				n++;
			}
	TEST(!bad && n == 272, "canonical reader: varints of an unread feature checked as the decoder does");
	sq_free(c);
	ex_free(&ex);
	rp_buf_free(&pk);
	rp_buf_free(&l);
	rp_buf_free(&ft);
	rp_buf_free(&e);
	rp_buf_free(&fs);
	rp_buf_free(&rec);
}

/* Push one record as pack-encdec does; 0, or -1 when the run stops. */
static int
push_as_tool(struct sq_conv *c, int bytes, struct example *ex,
    const uint8_t *p, size_t n)
{
	struct sq_feat f[8];
	int got;

	if (bytes && (got = sq_push_bytes(c, p, n)) != 0)
		return got == 1 ? 0 : -1;
	if (sq_fetch_canonical(c, p, n, f) == 0) {
		if (ex_decode(ex, p, n, EX_TYPE_EXAMPLE) == -1)
			return -1;
		sq_fetch_example(c, ex, f);
	}
	return sq_push(c, f);
}

static void
test_byte_path(void)
{
	struct sq_config cfg;
	struct sq_conv *c[2];
	struct bsink s[2];
	struct sq_stats st[2];
	struct example ex[2];
	struct buf rec = { 0 };
	struct rng r;
	size_t trial, i, nrec, brows = 0, stops = 0, bad = 0;
	size_t maxn, grows = 0;
	unsigned oddness;
	int stopped[2], w;

	rng_seed(&r, 77);
	for (trial = 0; trial < 3000 && !bad; trial++) {
		sq_config_init(&cfg);
		cfg.kind = rng_below(&r, 2) ? SQ_ENCDEC : SQ_LM;
		if (cfg.kind == SQ_ENCDEC) {
			cfg.len_name[cfg.nlen] = "inputs";
			cfg.len_val[cfg.nlen++] = 1 + (long)rng_below(&r, trial % 5 ? 12 : 300);
		}
		cfg.len_name[cfg.nlen] = "targets";
		cfg.len_val[cfg.nlen++] = 1 + (long)rng_below(&r, trial % 7 ? 12 : 300);
		cfg.length_check = rng_below(&r, 3) == 0;
		cfg.loss_on_targets_only = (int)rng_below(&r, 2);
		if (rng_below(&r, 3) == 0)
			cfg.bos_id = value_of_size(&r, 1 + (int)rng_below(&r, 5)) %
			    INT32_MAX * (rng_below(&r, 2) ? 1 : -1);
		cfg.emit = bsink_row;
		cfg.emit_bytes = bsink_brow;
		for (w = 0; w < 2; w++) {
			memset(&s[w], 0, sizeof s[w]);
			s[w].enc = ex_lists_new();
			cfg.emit_arg = &s[w];
			if ((c[w] = sq_new(&cfg, NULL)) == NULL)
				abort();
			s[w].c = c[w];
			stopped[w] = 0;
			ex_init(&ex[w]);
		}
		nrec = (size_t)rng_below(&r, 80);
		maxn = 0;
		if (trial % 11 == 0) {	/* many short records: segment ids above 127 */
			nrec = 2000;
			maxn = 2;
		}
		oddness = trial % 3 == 0 ? 0 : trial % 3 == 1 ? 3 : 20;
		for (i = 0; i < nrec && !stopped[0] && !stopped[1]; i++) {
			random_record(&r, &rec, cfg.len_val[0],
			    cfg.len_val[cfg.nlen - 1], oddness, maxn);
			for (w = 0; w < 2; w++)
				stopped[w] = push_as_tool(c[w], w, &ex[w], rec.p, rec.len) == -1;
		}
		for (w = 0; w < 2; w++)
			if (!stopped[w])
				stopped[w] = sq_finish(c[w]) == -1 ? 2 : 0;
		stops += stopped[0] != 0;
		sq_get_stats(c[0], &st[0]);
		sq_get_stats(c[1], &st[1]);
		if (stopped[0] != stopped[1] || sq_errkind(c[0]) != sq_errkind(c[1]) ||
		    (stopped[0] && strcmp(sq_strerror(c[0]), sq_strerror(c[1]))) ||
		    s[0].out.len != s[1].out.len ||
		    (s[0].out.len && memcmp(s[0].out.p, s[1].out.p, s[0].out.len)) ||
		    st[0].records != st[1].records || st[0].rows != st[1].rows ||
		    st[0].trimmed != st[1].trimmed || st[0].dropped != st[1].dropped ||
		    st[0].tokens[0] != st[1].tokens[0] || st[0].tokens[1] != st[1].tokens[1]) {
			TEST(0, "byte path trial %zu (%s, check %d, bos %lld): %zu vs %zu "
			    "bytes, stop %d vs %d", trial, sq_kind_name(cfg.kind),
			    cfg.length_check, (long long)cfg.bos_id, s[0].out.len,
			    s[1].out.len, stopped[0], stopped[1]);
			bad = 1;
		}
		brows += s[1].brows;
		grows += st[1].rows - s[1].brows;
		for (w = 0; w < 2; w++) {
			sq_free(c[w]);
			ex_lists_free(s[w].enc);
			rp_buf_free(&s[w].out);
			ex_free(&ex[w]);
		}
	}
	TEST(!bad, "byte path: the general path's records, errors and stats on random input");
	TEST(brows > 10000 && grows > 500 && stops > 300, "byte path: %zu byte rows, "
	    "%zu others, %zu runs stopped by an error", brows, grows, stops);
	rp_buf_free(&rec);
}

/*
 * sq_finish_before(): after a record that fails input validation, the
 * rows are those of the records before it, for every strategy; after
 * any other failure it refuses.
 */
static void
test_finish_before(void)
{
	static const enum sq_strategy st[] = { SQ_SEQIO, SQ_FIRST_FIT, SQ_BEST_FIT };
	struct sq_config cfg;
	struct sq_conv *c;
	struct rowcap want[8];
	size_t i, k, nwant, j;
	int ok;

	for (k = 0; k < 3; k++) {
		reset_rows();
		cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 8, "targets", 8, NULL, 0);
		cfg.strategy = st[k];
		c = make(&cfg);
		push(c, &(struct rec){ { L(7, 8, 1), L(3, 1) } });
		push(c, &(struct rec){ { L(5, 6, 4, 9, 1), L(4, 4, 1) } });
		push(c, &(struct rec){ { L(2, 1), L(6, 1) } });
		sq_finish(c);
		sq_free(c);
		nwant = nrows;
		memcpy(want, rows, nrows * sizeof(rows[0]));
		nrows = 0;	/* the values now belong to want */

		c = make(&cfg);
		push(c, &(struct rec){ { L(7, 8, 1), L(3, 1) } });
		push(c, &(struct rec){ { L(5, 6, 4, 9, 1), L(4, 4, 1) } });
		push(c, &(struct rec){ { L(2, 1), L(6, 1) } });
		ok = push(c, &(struct rec){ { L(1, 2, 1), NULL } }) == -1 &&
		    sq_errkind(c) == SQ_EDATA && sq_finish_before(c) == 0 &&
		    nrows == nwant;
		for (i = 0; ok && i < nrows; i++)
			for (j = 0; ok && j < rows[i].nf; j++)
				ok = want[i].f[j].n == rows[i].f[j].n &&
				    memcmp(want[i].f[j].v, rows[i].f[j].v,
				    rows[i].f[j].n * sizeof(int64_t)) == 0;
		TEST(ok, "sq_finish_before: the rows of the good records (strategy %zu)", k);
		TEST(push(c, &(struct rec){ { L(1), L(1) } }) == -1,
		    "the converter stays unusable");
		sq_free(c);
		for (i = 0; i < nwant; i++)
			for (j = 0; j < want[i].nf; j++)
				free(want[i].f[j].v);
	}
	reset_rows();
}

/*
 * Records that fail a check made after the input validation -- their
 * own targets_segment_ids (unpacked EncDec and LM), or a missing list
 * of the pre-packed LM converters -- are refused whole as well:
 * sq_finish_before() ends with the rows of the records before them,
 * and the refused record counts no tokens.
 */
static void
test_finish_before_late(void)
{
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_stats st;
	size_t before;
	int rv;

	reset_rows();
	cfg_lengths(&cfg, SQ_ENCDEC, "inputs", 4, "targets", 3, NULL, 0);
	cfg.pack = 0;
	c = make(&cfg);
	push(c, &(struct rec){ { L(7, 8, 1), L(3, 1), NULL } });
	push(c, &(struct rec){ { L(5, 1), L(4, 4, 1), L(1, 1, 2) } });
	before = nrows;
	rv = push(c, &(struct rec){ { L(2, 1), L(6, 1), L(1, 1) } });
	sq_get_stats(c, &st);
	TEST(rv == -1 && sq_errkind(c) == SQ_EDATA &&
	    strstr(sq_strerror(c), "Incompatible shapes") != NULL,
	    "unpacked: targets_segment_ids of the wrong length is a data error");
	TEST_INT(st.tokens[1], ==, 5, "the refused record counts no tokens");
	TEST(sq_finish_before(c) == 0 && nrows == before && before == 2,
	    "sq_finish_before after a wrong targets_segment_ids: the rows before it");
	sq_free(c);

	reset_rows();
	sq_config_init(&cfg);
	cfg.kind = SQ_PREPACKED_LM;
	c = make(&cfg);
	push(c, &(struct rec){ { L(3, 1), L(0, 3), L(1, 1), L(1, 1), L(0, 1) } });
	before = nrows;
	rv = push(c, &(struct rec){ { L(3, 1), NULL, L(1, 1), L(1, 1), L(0, 1) } });
	TEST(rv == -1 && sq_errkind(c) == SQ_EDATA && sq_finish_before(c) == 0 &&
	    nrows == before && before == 1,
	    "sq_finish_before after a pre-packed LM record without a list: the rows before it");
	sq_free(c);
	reset_rows();
}

/*
 * A caller that checked the lists itself (SQ_CHECKED) hands over only
 * the values sq_input_need() says are read: the rows are the same, and
 * so is the message for a value that is not an int32.
 */
static void
test_checked_lists(void)
{
	static int64_t in[10] = { 4, 5, 6, 7, 8, 9, 10, 11, 12, 1 };
	static int64_t tg[6] = { 2, 3, 4, 5, 6, 1 };
	struct sq_config cfg;
	struct sq_conv *c;
	struct sq_feat f[2];
	struct rowcap want[4];
	size_t i, j, nwant;
	char msg[512];
	int ok;

	cfg_lengths(&cfg, SQ_PREFIXLM, "inputs", 3, "targets", 2, NULL, 0);
	cfg.length_check = 0;
	c = make(&cfg);
	TEST_INT(sq_input_need(c, 0), ==, 5, "prefixlm reads inputs up to the sum of the lengths");
	TEST_INT(sq_input_need(c, 1), ==, 5, "and targets too");
	TEST_INT(sq_input_need(c, 2), ==, SIZE_MAX, "no third input");
	reset_rows();
	memset(f, 0, sizeof f);
	f[0].type = f[1].type = SQ_INT;
	f[0].v = in;
	f[0].n = 10;
	f[1].v = tg;
	f[1].n = 6;
	TEST(sq_push(c, f) == 0 && sq_finish(c) == 0, "whole lists");
	sq_free(c);
	nwant = nrows;
	memcpy(want, rows, nrows * sizeof(rows[0]));
	nrows = 0;

	c = make(&cfg);
	f[0].small = f[1].small = SQ_CHECKED;
	f[0].bad = f[1].bad = SIZE_MAX;
	TEST(sq_push(c, f) == 0 && sq_finish(c) == 0, "checked lists");
	ok = nrows == nwant;
	for (i = 0; ok && i < nrows; i++)
		for (j = 0; ok && j < rows[i].nf; j++)
			ok = want[i].f[j].n == rows[i].f[j].n &&
			    memcmp(want[i].f[j].v, rows[i].f[j].v,
			    rows[i].f[j].n * sizeof(int64_t)) == 0;
	TEST(ok, "the same rows from the values the converter reads");
	sq_free(c);
	for (i = 0; i < nwant; i++)
		for (j = 0; j < want[i].nf; j++)
			free(want[i].f[j].v);

	in[8] = INT64_C(1) << 40;
	sq_check_feature("targets", SQ_INT, NULL, in, 10, "input_validation",
	    msg, sizeof msg);
	c = make(&cfg);
	f[0].v = tg;	/* not read past what is needed */
	f[0].n = 6;
	f[1].n = 10;
	f[1].v = in;
	f[1].bad = 8;
	f[1].badv = in[8];
	TEST(sq_push(c, f) == -1 && strcmp(sq_strerror(c), msg) == 0,
	    "a value that is not an int32 is reported as on the whole list");
	sq_free(c);
	in[8] = 12;
	reset_rows();
}

int
main(void)
{
	test_helpers();
	test_docstrings();
	test_config_errors();
	test_quirks();
	test_data_errors();
	test_first_fit_kernel();
	test_fetch_varints();
	test_byte_path();
	test_unused_varints();
	test_properties();
	test_strategies_denser();
	test_electra_layout();
	test_electra_probabilities();
	test_electra_seed();
	test_rng();
	test_finish_before();
	test_finish_before_late();
	test_checked_lists();
	reset_rows();
	TEST_INT(bad_used, ==, 0, "every row's padding bound holds");
	return tap_done();
}
