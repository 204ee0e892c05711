/*
 * seqio feature converters and trim/pad/pack (Electra's example
 * builder, declared in seqio.h too, is electra.c).  The packing paths
 * reproduce seqio's observable behaviour: windows of max(length)
 * records, trimming, keeping the first count_nonzero values, next-fit
 * over every key at once, per-key segment ids computed from positions;
 * tensor2tensor's first-fit kernels behind custom_ops; and two
 * streaming strategies of our own.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "seqio.h"

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#endif

#define MAXK	SQ_MAX_FEATS
#define MAXOUT	(3 * SQ_MAX_FEATS + 12)
#define T2T_LOOKBACK 1000	/* bins the first-fit kernel looks back at */

/* One output row being filled: per key tokens, positions, segment ids. */
struct row {
	int64_t		*tok[MAXK], *pos[MAXK], *seg[MAXK];
	size_t		 len[MAXK];
	size_t		 nrec;
	struct row	*next;		/* free list */
};

struct sq_conv {
	enum sq_kind	 kind;		/* as resolved */
	int		 pack, ltol, length_check, custom;
	int64_t		 bos, mask_id;
	enum sq_strategy strategy;
	size_t		 window;
	sq_emit_fn	 emit;
	void		*emit_arg;
	enum sq_errkind	 err;
	int		 untaken;	/* the failed record was refused whole */
	char		 msg[512];

	char		*strs;		/* owned copies of every name */
	size_t		 nlen;
	const char	*len_name[SQ_MAX_FEATS];
	long		 len_val[SQ_MAX_FEATS];
	size_t		 npass;
	const char	*pass_name[SQ_MAX_FEATS];
	long		 Li, Lt, Ls;

	/* Inputs fetched per record, and the ones validated. */
	size_t		 nin;
	const char	*in_name[MAXK + SQ_MAX_FEATS + 2];
	size_t		 nval;		/* inputs 0 .. nval-1 are validated */
	long		 in_len[MAXK + SQ_MAX_FEATS + 2];	/* length, -1 if none */
	size_t		 in_nlen[MAXK + SQ_MAX_FEATS + 2];
	struct ex_want	 in_want[MAXK + SQ_MAX_FEATS + 2];	/* the same, for ex_canonical_find() */
	int64_t		*fval[MAXK + SQ_MAX_FEATS + 2];	/* sq_fetch_canonical's values */
	size_t		 fcap[MAXK + SQ_MAX_FEATS + 2];
	int		 in_tseg;	/* index of targets_segment_ids [Q6], -1 */
	size_t		 pass0;		/* index of the first pass-through input */

	/* Keys trimmed and packed (or padded). */
	size_t		 nk;
	const char	*key[MAXK];
	long		 L[MAXK];
	long		 N;		/* window in records (seqio paths) */
	const int64_t	*xp[MAXK];	/* current record's derived values */
	size_t		 xn[MAXK];
	int		 xpresent[MAXK];
	int64_t		*scratch[4];	/* PrefixLM's derived features */
	int64_t		*tseg;		/* Q6 segment ids, length Lt */
	int		 have_tseg;

	/* Rows. */
	struct row	*cur;
	struct row	**open;		/* rows in creation order */
	size_t		 nopen, capopen;
	struct row	*freelist;
	size_t		 inwin;

	/* Output. */
	size_t		 nout;
	const char	*out_name[MAXOUT];
	int64_t		*out_val[MAXOUT];
	size_t		 out_len[MAXOUT];
	const int64_t	*ov[MAXOUT];	/* what a row emits: row arrays or out_val */
	size_t		 ou[MAXOUT];	/* and where each one's padding starts */
	int		 checked_output;

	struct sq_stats	 st;

	/* The byte path: sq_push_bytes() and the row it fills. */
	sq_emit_bytes_fn emit_bytes;
	int		 bfast;		/* on for this converter */
	int		 bopen;		/* a byte row is open (then cur is NULL) */
	struct sq_brow	 brow;
	uint8_t		*bb[2];		/* its tokens per key: 4 L bytes */
	uint32_t	*bsv[2], *bsb[2];	/* its segments: L each */
	uint8_t		*bpos;		/* the varints 0, 1, ..., N - 1 */
	uint32_t	*bposoff;	/* bposoff[i]: bytes of the first i */
	uint8_t		 bbos[10];	/* bos as a varint */
	size_t		 bboslen;
	size_t		 nbl;		/* lists of a row, */
	unsigned char	 bltype[8], blkey[8];	/* what each holds, */
	size_t		 blklen[8];	/* the length of its name, */
	size_t		 blord[8];	/* their order in the record */
};

static const char *const kind_names[] = {
	"encdec", "lm", "prefixlm", "prefixsuffixlm", "decoder", "encoder",
	"passthrough", "prepacked-encdec", "prepacked-lm",
	"prepacked-prefixlm", "pack", "pad"
};

int
sq_kind_parse(const char *s)
{
	char b[32];
	size_t i;

	if (strlen(s) >= sizeof b)
		return -1;
	for (i = 0; s[i]; i++)
		b[i] = s[i] == '_' ? '-' : s[i];
	b[i] = '\0';
	for (i = 0; i < sizeof kind_names / sizeof *kind_names; i++)
		if (strcmp(b, kind_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
sq_kind_name(enum sq_kind k)
{
	if ((size_t)k >= sizeof kind_names / sizeof *kind_names)
		return "?";
	return kind_names[k];
}

void
sq_config_init(struct sq_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->pack = 1;
	cfg->loss_on_targets_only = 1;
	cfg->length_check = 1;
	cfg->strategy = SQ_SEQIO;
}

static int
fail(struct sq_conv *c, enum sq_errkind k, const char *fmt, ...)
{
	va_list ap;

	c->err = k;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
sq_strerror(const struct sq_conv *c)
{
	if (c == NULL)
		return strerror(ENOMEM);
	return c->err == SQ_OK ? "no error" : c->msg;
}

enum sq_errkind
sq_errkind(const struct sq_conv *c)
{
	return c == NULL ? SQ_ENOMEM : c->err;
}

size_t
sq_input_need(const struct sq_conv *c, size_t i)
{
	if (i >= c->nin)
		return SIZE_MAX;
	switch (c->kind) {
	case SQ_PASSTHROUGH:
	case SQ_PREPACKED_LM:
	case SQ_PREPACKED_PREFIXLM:
		return SIZE_MAX;
	case SQ_PREFIXLM:
	case SQ_PREFIXSUFFIXLM:
		/* Inputs, targets and suffixes are cut to their sum together. */
		if (i < c->pass0)
			return (size_t)c->L[0];
		break;
	default:
		break;
	}
	if ((int)i == c->in_tseg)
		return (size_t)c->Lt;	/* read only when it has that length */
	return c->in_len[i] >= 0 ? (size_t)c->in_len[i] : SIZE_MAX;
}

enum sq_kind
sq_resolved(const struct sq_conv *c)
{
	return c->kind;
}

/* Helpers on name lists. */

static int
in_list(const char *s, const char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s, v[i]) == 0)
			return 1;
	return 0;
}

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Python's repr of a set of strings (sorted, since set order varies). */
static void
set_repr(const char **v, size_t n, char *out, size_t sz)
{
	size_t i, k = 0;

	qsort(v, n, sizeof *v, cmpstr);
	k += snprintf(out + k, sz - k, "{");
	for (i = 0; i < n && k < sz; i++)
		k += snprintf(out + k, sz - k, "%s'%s'", i ? ", " : "", v[i]);
	if (k < sz)
		snprintf(out + k, sz - k, "}");
}

int
sq_exact_match(const char *const *expected, size_t ne,
    const char *const *actual, size_t na, const char *expected_src,
    const char *actual_src, char *msg, size_t msgsz)
{
	const char *d[64];
	char set[400];
	size_t i, nd = 0;

	for (i = 0; i < na && nd < 64; i++)
		if (!in_list(actual[i], expected, ne) && !in_list(actual[i], d, nd))
			d[nd++] = actual[i];
	if (nd > 0) {
		set_repr(d, nd, set, sizeof set);
		snprintf(msg, msgsz, "The %s contains extra features not "
		    "specified in the %s: %s", actual_src, expected_src, set);
		return -1;
	}
	for (i = 0; i < ne && nd < 64; i++)
		if (!in_list(expected[i], actual, na) && !in_list(expected[i], d, nd))
			d[nd++] = expected[i];
	if (nd > 0) {
		set_repr(d, nd, set, sizeof set);
		snprintf(msg, msgsz, "The %s is missing features specified in "
		    "the %s: %s", actual_src, expected_src, set);
		return -1;
	}
	return 0;
}

void
sq_non_padding(const int64_t *v, size_t n, int64_t *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = v[i] != 0;
}

void
sq_shift_right(const int64_t *t, size_t rows, size_t cols, int64_t bos,
    int64_t *out)
{
	size_t i;

	if (rows == 0)
		return;
	memmove(out + cols, t, (rows - 1) * cols * sizeof *t);
	for (i = 0; i < cols; i++)
		out[i] = bos;
}

int
sq_autoregressive(const int64_t *t, size_t rows, size_t cols,
    const int64_t *seg, int64_t bos, int64_t *out, const char **msg)
{
	size_t i;

	if (seg != NULL && cols != 1) {
		*msg = "Only 1-D sequences are supported with packing. "
		    "Got a packed 2-D sequence.";
		return -1;
	}
	if (seg == NULL) {
		sq_shift_right(t, rows, cols, bos, out);
		return 0;
	}
	/* Walk backwards so that out may equal t. */
	for (i = rows; i-- > 1;)
		out[i] = seg[i] == seg[i - 1] ? t[i - 1] : bos;
	if (rows > 0)
		out[0] = bos;
	return 0;
}

void
sq_prefixlm_example(const int64_t *targets, const int64_t *width,
    const int64_t *width_add_pos, size_t n, int64_t bos,
    int loss_on_targets_only, int64_t *dec_in, int64_t *loss,
    int64_t *causal)
{
	size_t i;

	sq_shift_right(targets, n, 1, bos, dec_in);
	for (i = 0; i < n; i++) {
		causal[i] = (int64_t)i < width_add_pos[i];
		if (loss_on_targets_only)
			loss[i] = ((int64_t)i < width[i]) ^ (targets[i] != 0);
		else
			loss[i] = targets[i] != 0;
	}
}

/* Construction. */

static long
len_of(const struct sq_conv *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nlen; i++)
		if (strcmp(c->len_name[i], name) == 0)
			return c->len_val[i];
	return -1;
}

static int
add_out(struct sq_conv *c, const char *name, long len)
{
	c->out_name[c->nout] = name;
	c->out_len[c->nout] = (size_t)len;
	c->out_val[c->nout] = calloc(len > 0 ? (size_t)len : 1, sizeof(int64_t));
	if (c->out_val[c->nout] == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	c->nout++;
	return 0;
}

static void
add_in(struct sq_conv *c, const char *name, long len)
{
	c->in_len[c->nin] = len;
	c->in_nlen[c->nin] = strlen(name);
	c->in_want[c->nin] = (struct ex_want){ name, c->in_nlen[c->nin], 0 };
	c->in_name[c->nin++] = name;
}

static void
add_key(struct sq_conv *c, const char *name, long len, int is_token)
{
	c->st.key[c->nk] = c->key[c->nk] = name;
	c->st.len[c->nk] = c->L[c->nk] = len;
	c->st.is_token[c->nk] = is_token;
	c->nk++;
	c->st.nkeys = c->nk;
}

/* Names of derived and output features that live as long as the converter. */
static char *
keep(struct sq_conv *c, char **pool, const char *a, const char *b)
{
	char *s = *pool;
	size_t n = strlen(a), m = strlen(b);

	(void)c;
	memcpy(s, a, n);
	memcpy(s + n, b, m + 1);
	*pool += n + m + 1;
	return s;
}

/* Validation 1: the task lengths name exactly the task features. */
static int
check_lengths_keys(struct sq_conv *c, const char *const *task, size_t nt,
    int with_pass)
{
	const char *exp[2 * SQ_MAX_FEATS];
	size_t i, n = 0;

	for (i = 0; i < nt; i++)
		exp[n++] = task[i];
	if (with_pass)
		for (i = 0; i < c->npass; i++)
			exp[n++] = c->pass_name[i];
	if (sq_exact_match(exp, n, c->len_name, c->nlen, "TASK_FEATURES",
	    "task_feature_lengths", c->msg, sizeof c->msg) == -1) {
		c->err = SQ_ECONFIG;
		return -1;
	}
	return 0;
}

/* Validation 3: converters that cannot carry pass-through features. */
static int
check_model_lengths(struct sq_conv *c)
{
	const char *v[SQ_MAX_FEATS];
	char set[400];
	size_t i;

	if (c->npass == 0)
		return 0;
	for (i = 0; i < c->npass; i++)
		v[i] = c->pass_name[i];
	set_repr(v, c->npass, set, sizeof set);
	return fail(c, SQ_ECONFIG, "The model_feature_lengths is missing "
	    "features specified in the model_feature_names: %s", set);
}

static const char *const t_encdec[] = { "inputs", "targets" };
static const char *const t_lm[] = { "targets" };
static const char *const t_pslm[] = { "inputs", "targets", "suffixes" };
static const char *const t_prepacked[] = {
	"inputs", "targets", "inputs_positions", "inputs_segment_ids",
	"targets_positions", "targets_segment_ids"
};
static const char *const o_prepacked_lm[] = {
	"decoder_target_tokens", "decoder_input_tokens", "decoder_loss_weights",
	"decoder_positions", "decoder_segment_ids", "decoder_causal_attention"
};

static int
setup(struct sq_conv *c, const struct sq_config *cfg, char *pool)
{
	size_t i;
	long m;

	c->in_tseg = -1;
	if (c->kind == SQ_DECODER) {
		/* The dispatch happens before any check (seqio builds the inner converter). */
		if (len_of(c, "suffixes") >= 0)
			c->kind = SQ_PREFIXSUFFIXLM;
		else if (len_of(c, "inputs") >= 0)
			c->kind = SQ_PREFIXLM;
		else {
			c->kind = SQ_LM;
			/* The inner LM converter gets no pass-through features. */
			if (c->npass > 0 && c->pack)
				return fail(c, SQ_ECONFIG, "Packing is incompatible "
				    "with pass-through features.");
			c->npass = 0;
		}
		if (c->kind == SQ_PREFIXSUFFIXLM) {
			if (c->npass > 0 && c->pack)
				return fail(c, SQ_ECONFIG, "Packing is incompatible "
				    "with pass-through features.");
			c->npass = 0;
		}
	}
	if (c->npass > 0 && (c->kind == SQ_PAD || c->kind == SQ_PACK ||
	    c->kind == SQ_PASSTHROUGH || c->kind == SQ_PREPACKED_LM ||
	    c->kind == SQ_PREPACKED_PREFIXLM))
		return fail(c, SQ_ECONFIG, "pass-through features need a "
		    "converter with task feature lengths (not %s)",
		    sq_kind_name(c->kind));
	if (c->npass > 0 && c->pack)
		return fail(c, SQ_ECONFIG,
		    "Packing is incompatible with pass-through features.");
	switch (c->kind) {
	case SQ_PREPACKED_ENCDEC:
		if (c->pack)
			return fail(c, SQ_ECONFIG, "'pack=True' is not allowed in "
			    "PrePackedEncDecFeatureConverter.");
		break;
	case SQ_ENCODER:
		if (!cfg->has_mask_id)
			return fail(c, SQ_ECONFIG,
			    "the encoder converter needs a mask id (--mask-id)");
		break;
	case SQ_PREFIXSUFFIXLM:
		if (c->npass > 0)
			return fail(c, SQ_ECONFIG, "pass-through features are not "
			    "supported by PrefixSuffixLMFeatureConverter");
		break;
	default:
		break;
	}

	/* Validation 1, then 3. */
	switch (c->kind) {
	case SQ_ENCDEC:
	case SQ_PREFIXLM:
	case SQ_ENCODER:
		if (check_lengths_keys(c, t_encdec, 2, 1) == -1)
			return -1;
		break;
	case SQ_LM:
		if (check_lengths_keys(c, t_lm, 1, 1) == -1)
			return -1;
		break;
	case SQ_PREFIXSUFFIXLM:
		if (check_lengths_keys(c, t_pslm, 3, 0) == -1)
			return -1;
		break;
	case SQ_PREPACKED_ENCDEC:
		if (check_lengths_keys(c, t_prepacked, 6, 1) == -1)
			return -1;
		break;
	case SQ_PACK:
	case SQ_PAD:
		if (c->nlen == 0)
			return fail(c, SQ_ECONFIG, "no feature lengths given");
		break;
	default:
		break;
	}
	if ((c->kind == SQ_LM || c->kind == SQ_ENCODER ||
	    c->kind == SQ_PREPACKED_ENCDEC) && check_model_lengths(c) == -1)
		return -1;

	for (i = 0; i < c->nlen; i++)
		if (c->len_val[i] < 1 || c->len_val[i] > SQ_MAX_LENGTH)
			return fail(c, SQ_ECONFIG, "length of '%s' must be in "
			    "1..%ld", c->len_name[i], SQ_MAX_LENGTH);
	c->Li = len_of(c, "inputs");
	c->Lt = len_of(c, "targets");
	c->Ls = len_of(c, "suffixes");

	/* Inputs, keys and outputs of each converter. */
	switch (c->kind) {
	case SQ_ENCDEC:
	case SQ_ENCODER:
		add_in(c, "inputs", c->Li);
		add_in(c, "targets", c->Lt);
		add_key(c, "inputs", c->Li, 1);
		add_key(c, "targets", c->Lt, 1);
		break;
	case SQ_LM:
		add_in(c, "targets", c->Lt);
		add_key(c, "targets", c->Lt, 1);
		break;
	case SQ_PREFIXLM:
	case SQ_PREFIXSUFFIXLM:
		add_in(c, "inputs", c->Li);
		add_in(c, "targets", c->Lt);
		m = c->Li + c->Lt;
		if (c->kind == SQ_PREFIXSUFFIXLM) {
			add_in(c, "suffixes", c->Ls);
			m += c->Ls;
		}
		add_key(c, "targets", m, 1);
		add_key(c, "inputs_width", m, 0);
		add_key(c, "inputs_width_add_pos", m, 0);
		if (c->kind == SQ_PREFIXSUFFIXLM)
			add_key(c, "target_suffix_weights", m, 0);
		for (i = 0; i < c->nk; i++)
			if ((c->scratch[i] = malloc((size_t)m * sizeof(int64_t))) == NULL)
				return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
		break;
	case SQ_PREPACKED_ENCDEC:
		for (i = 0; i < 6; i++) {
			add_in(c, t_prepacked[i], len_of(c, t_prepacked[i]));
			add_key(c, t_prepacked[i], len_of(c, t_prepacked[i]), i < 2);
		}
		break;
	case SQ_PACK:
	case SQ_PAD:
		if (c->nlen > MAXK)
			return fail(c, SQ_ECONFIG, "too many features (at most %d)", MAXK);
		for (i = 0; i < c->nlen; i++) {
			add_in(c, c->len_name[i], c->len_val[i]);
			add_key(c, c->len_name[i], c->len_val[i], 1);
		}
		break;
	case SQ_PREPACKED_LM:
	case SQ_PREPACKED_PREFIXLM:
		for (i = 0; i < (c->kind == SQ_PREPACKED_LM ? 5u : 6u); i++)
			add_in(c, o_prepacked_lm[i], -1);
		break;
	default:
		break;
	}
	c->pass0 = c->nin;
	for (i = 0; i < c->npass; i++)
		add_in(c, c->pass_name[i], len_of(c, c->pass_name[i]));
	c->nval = c->nin;
	if (!c->pack && (c->kind == SQ_ENCDEC || c->kind == SQ_LM)) {
		/* [Q6] an input feature of this name steers the shift. */
		c->in_tseg = (int)c->nin;
		add_in(c, "targets_segment_ids", -1);
		if ((c->tseg = malloc((size_t)c->Lt * sizeof(int64_t))) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	}

	c->N = 0;
	for (i = 0; i < c->nk; i++)
		if (c->L[i] > c->N)
			c->N = c->L[i];

	switch (c->kind) {
	case SQ_ENCDEC:
		if (add_out(c, "encoder_input_tokens", c->Li) ||
		    add_out(c, "decoder_target_tokens", c->Lt) ||
		    add_out(c, "decoder_input_tokens", c->Lt) ||
		    add_out(c, "decoder_loss_weights", c->Lt))
			return -1;
		if (c->pack && (add_out(c, "encoder_segment_ids", c->Li) ||
		    add_out(c, "encoder_positions", c->Li) ||
		    add_out(c, "decoder_segment_ids", c->Lt) ||
		    add_out(c, "decoder_positions", c->Lt)))
			return -1;
		break;
	case SQ_LM:
		if (add_out(c, "decoder_target_tokens", c->Lt) ||
		    add_out(c, "decoder_input_tokens", c->Lt) ||
		    add_out(c, "decoder_loss_weights", c->Lt))
			return -1;
		if (c->pack && (add_out(c, "decoder_segment_ids", c->Lt) ||
		    add_out(c, "decoder_positions", c->Lt)))
			return -1;
		break;
	case SQ_PREFIXLM:
	case SQ_PREFIXSUFFIXLM:
		m = c->L[0];
		if (add_out(c, "decoder_target_tokens", m) ||
		    add_out(c, "decoder_input_tokens", m) ||
		    add_out(c, "decoder_loss_weights", m) ||
		    add_out(c, "decoder_causal_attention", m))
			return -1;
		if (c->kind == SQ_PREFIXSUFFIXLM &&
		    add_out(c, "target_suffix_weights", m))
			return -1;
		if (c->pack && (add_out(c, "decoder_segment_ids", m) ||
		    add_out(c, "decoder_positions", m)))
			return -1;
		break;
	case SQ_ENCODER:
		if (add_out(c, "encoder_input_tokens", c->Li) ||
		    add_out(c, "encoder_target_tokens", c->Lt) ||
		    add_out(c, "encoder_loss_weights", c->Li))
			return -1;
		if (c->pack && (add_out(c, "encoder_segment_ids", c->Li) ||
		    add_out(c, "encoder_positions", c->Li)))
			return -1;
		break;
	case SQ_PREPACKED_ENCDEC:
		if (add_out(c, "encoder_input_tokens", c->L[0]) ||
		    add_out(c, "encoder_positions", c->L[2]) ||
		    add_out(c, "encoder_segment_ids", c->L[3]) ||
		    add_out(c, "decoder_target_tokens", c->L[1]) ||
		    add_out(c, "decoder_input_tokens", c->L[1]) ||
		    add_out(c, "decoder_loss_weights", c->L[1]) ||
		    add_out(c, "decoder_positions", c->L[4]) ||
		    add_out(c, "decoder_segment_ids", c->L[5]))
			return -1;
		break;
	case SQ_PACK:
		for (i = 0; i < c->nk; i++)
			if (add_out(c, c->key[i], c->L[i]) ||
			    add_out(c, keep(c, &pool, c->key[i], "_segment_ids"), c->L[i]) ||
			    add_out(c, keep(c, &pool, c->key[i], "_positions"), c->L[i]))
				return -1;
		break;
	case SQ_PAD:
		for (i = 0; i < c->nk; i++)
			if (add_out(c, c->key[i], c->L[i]))
				return -1;
		break;
	default:
		break;
	}
	for (i = 0; i < c->npass; i++)
		if (add_out(c, c->pass_name[i], len_of(c, c->pass_name[i])))
			return -1;
	if (c->strategy != SQ_SEQIO && !c->custom) {
		c->window = cfg->window ? cfg->window : SQ_DEFAULT_WINDOW;
		c->capopen = c->window;
	} else if (c->custom)
		c->capopen = 64;
	if (c->capopen && (c->open = malloc(c->capopen * sizeof *c->open)) == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	return 0;
}

static int bytes_setup(struct sq_conv *c);
static int bytes_to_row(struct sq_conv *c);
static int bytes_emit(struct sq_conv *c);

struct sq_conv *
sq_new(const struct sq_config *cfg, struct sq_conv **errp)
{
	struct sq_conv *c;
	size_t i, need = 0;
	char *pool;

	if (errp)
		*errp = NULL;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	c->kind = cfg->kind;
	c->pack = cfg->pack;
	c->ltol = cfg->loss_on_targets_only;
	c->length_check = cfg->length_check;
	c->custom = cfg->custom_ops;
	c->bos = cfg->bos_id;
	c->mask_id = cfg->mask_id;
	c->strategy = cfg->strategy;
	c->emit = cfg->emit;
	c->emit_arg = cfg->emit_arg;
	c->emit_bytes = cfg->emit_bytes;
	if (cfg->nlen > SQ_MAX_FEATS || cfg->npass > SQ_MAX_FEATS) {
		fail(c, SQ_ECONFIG, "too many features");
		goto bad;
	}
	for (i = 0; i < cfg->nlen; i++)
		need += 3 * strlen(cfg->len_name[i]) + 32;	/* k, k_segment_ids, k_positions */
	for (i = 0; i < cfg->npass; i++)
		need += strlen(cfg->pass_name[i]) + 1;
	if ((c->strs = malloc(need + 1)) == NULL) {
		fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
		goto bad;
	}
	pool = c->strs;
	c->nlen = cfg->nlen;
	for (i = 0; i < cfg->nlen; i++) {
		c->len_name[i] = keep(c, &pool, cfg->len_name[i], "");
		c->len_val[i] = cfg->len_val[i];
	}
	c->npass = cfg->npass;
	for (i = 0; i < cfg->npass; i++)
		c->pass_name[i] = keep(c, &pool, cfg->pass_name[i], "");
	if (setup(c, cfg, pool) == -1 || bytes_setup(c) == -1)
		goto bad;
	return c;
bad:
	if (c->err == SQ_ENOMEM) {
		sq_free(c);
		errno = ENOMEM;
		return NULL;
	}
	if (errp)
		*errp = c;
	else
		sq_free(c);
	return NULL;
}

static void
free_rows(struct row *r)
{
	struct row *n;

	for (; r != NULL; r = n) {
		n = r->next;
		free(r->tok[0]);
		free(r);
	}
}

void
sq_free(struct sq_conv *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nopen; i++) {
		c->open[i]->next = c->freelist;
		c->freelist = c->open[i];
	}
	if (c->cur) {
		c->cur->next = c->freelist;
		c->freelist = c->cur;
	}
	free_rows(c->freelist);
	free(c->open);
	for (i = 0; i < c->nout; i++)
		free(c->out_val[i]);
	for (i = 0; i < 4; i++)
		free(c->scratch[i]);
	for (i = 0; i < c->nin; i++)
		free(c->fval[i]);
	free(c->tseg);
	for (i = 0; i < 2; i++) {
		free(c->bb[i]);
		free(c->bsv[i]);
		free(c->bsb[i]);
	}
	free(c->bpos);
	free(c->bposoff);
	free(c->strs);
	free(c);
}

size_t
sq_ninputs(const struct sq_conv *c)
{
	return c->nin;
}

const char *
sq_input_name(const struct sq_conv *c, size_t i)
{
	return i < c->nin ? c->in_name[i] : NULL;
}

void
sq_get_stats(const struct sq_conv *c, struct sq_stats *st)
{
	*st = c->st;
}

double
sq_efficiency(const struct sq_stats *st)
{
	uint64_t lb = 0, r;
	size_t k;

	if (st->rows == 0)
		return 0;
	for (k = 0; k < st->nkeys; k++) {
		if (!st->is_token[k] || st->len[k] <= 0)
			continue;
		r = (st->tokens[k] + (uint64_t)st->len[k] - 1) / (uint64_t)st->len[k];
		if (r > lb)
			lb = r;
	}
	return (double)lb / (double)st->rows;
}

/* Rows. */

static struct row *
row_get(struct sq_conv *c)
{
	struct row *r;
	size_t k, tot = 0;
	int64_t *p;

	if ((r = c->freelist) != NULL) {
		c->freelist = r->next;
		return r;
	}
	for (k = 0; k < c->nk; k++)
		tot += (size_t)c->L[k];
	if ((r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	if ((p = calloc(3 * tot + 1, sizeof *p)) == NULL) {
		free(r);
		return NULL;
	}
	for (k = 0; k < c->nk; k++) {
		r->tok[k] = p;
		r->pos[k] = p + c->L[k];
		r->seg[k] = p + 2 * c->L[k];
		p += 3 * c->L[k];
	}
	return r;
}

/* Clear what a row used and put it back on the free list. */
static void
row_put(struct sq_conv *c, struct row *r)
{
	size_t k;

	/* Only the used prefix was written (place() and the segment ids). */
	for (k = 0; k < c->nk; k++) {
		memset(r->tok[k], 0, r->len[k] * sizeof(int64_t));
		memset(r->pos[k], 0, r->len[k] * sizeof(int64_t));
		memset(r->seg[k], 0, r->len[k] * sizeof(int64_t));
		r->len[k] = 0;
	}
	r->nrec = 0;
	r->next = c->freelist;
	c->freelist = r;
}

/* seqio's segment ids: count of position-0 slots so far, 0 on 0 tokens. */
static void
segments_from_positions(struct row *r, size_t k)
{
	size_t i;
	int64_t s = 0;

	for (i = 0; i < r->len[k]; i++) {
		if (r->pos[k][i] == 0)
			s++;
		r->seg[k][i] = r->tok[k][i] != 0 ? s : 0;
	}
}

static void
copy_padded(int64_t *dst, size_t dlen, const int64_t *src, size_t n)
{
	if (n > dlen)
		n = dlen;
	if (n > 0)
		memcpy(dst, src, n * sizeof *dst);
	memset(dst + n, 0, (dlen - n) * sizeof *dst);
}

static int
shift_into(struct sq_conv *c, int64_t *out, const int64_t *t, size_t n,
    const int64_t *seg)
{
	const char *msg;

	if (sq_autoregressive(t, n, 1, seg, c->bos, out, &msg) == -1)
		return fail(c, SQ_EDATA, "%s", msg);
	return 0;
}

/* Output validation 4 for the converters whose lengths can disagree. */
static int
check_output(struct sq_conv *c)
{
	static const char *const pp[4] = {
		"encoder_positions", "encoder_segment_ids",
		"decoder_positions", "decoder_segment_ids"
	};
	size_t i;

	if (c->checked_output || !c->length_check)
		return 0;
	c->checked_output = 1;
	if (c->kind == SQ_ENCODER && sq_check_length("encoder_target_tokens",
	    (size_t)c->Lt, c->Li, 1, "output_validation", c->msg,
	    sizeof c->msg) == -1)	/* [Q10] */
		goto bad;
	if (c->kind == SQ_PREPACKED_ENCDEC)
		for (i = 0; i < 4; i++)
			if (sq_check_length(pp[i], (size_t)c->L[2 + i],
			    c->L[i < 2 ? 0 : 1], 1, "output_validation", c->msg,
			    sizeof c->msg) == -1)
				goto bad;
	return 0;
bad:
	c->err = SQ_EDATA;
	return -1;
}

static int
emit_out(struct sq_conv *c, size_t n, const int64_t *const *vals,
    const size_t *used)
{
	c->st.rows++;
	if (c->emit == NULL)
		return 0;
	if (c->emit(c->emit_arg, n, c->out_name, vals, c->out_len, used) == -1)
		return fail(c, SQ_EEMIT, "%s", strerror(errno));
	return 0;
}

/*
 * Turn a filled row into the model features and emit it.  'packed'
 * says whether segment ids and positions exist; 'seg' is the segment
 * ids the unpacked shift should honour [Q6], or NULL.
 */
static int
finish_row(struct sq_conv *c, struct row *r, int packed, const int64_t *useg)
{
	int64_t **o = c->out_val, *w;
	const int64_t **ov = c->ov;
	size_t *u = c->ou, i, k, n, L;
	const int64_t *pos;

	if (check_output(c) == -1)
		return -1;
	/*
	 * Row arrays go out as they are; derived features are computed
	 * into o.  A row's tokens, segment ids, positions and loss weights
	 * are zero from its length on; the shifted tokens one later (bos
	 * opens the padding).
	 */
	for (i = 0; i < c->nout; i++) {
		ov[i] = o[i];
		u[i] = c->out_len[i];
	}
	switch (c->kind) {
	case SQ_ENCDEC:
		ov[0] = r->tok[0];
		ov[1] = r->tok[1];
		if (shift_into(c, o[2], r->tok[1], c->Lt,
		    packed ? r->seg[1] : useg) == -1)
			return -1;
		sq_non_padding(r->tok[1], c->Lt, o[3]);
		u[0] = r->len[0];
		u[1] = u[3] = r->len[1];
		u[2] = r->len[1] < (size_t)c->Lt ? r->len[1] + 1 : (size_t)c->Lt;
		n = 4;
		if (packed) {
			ov[4] = r->seg[0];
			ov[5] = r->pos[0];
			ov[6] = r->seg[1];
			ov[7] = r->pos[1];
			u[4] = u[5] = r->len[0];
			u[6] = u[7] = r->len[1];
			n = 8;
		}
		break;
	case SQ_LM:
		ov[0] = r->tok[0];
		if (shift_into(c, o[1], r->tok[0], c->Lt,
		    packed ? r->seg[0] : useg) == -1)
			return -1;
		sq_non_padding(r->tok[0], c->Lt, o[2]);
		u[0] = u[2] = r->len[0];
		u[1] = r->len[0] < (size_t)c->Lt ? r->len[0] + 1 : (size_t)c->Lt;
		n = 3;
		if (packed) {
			ov[3] = r->seg[0];
			ov[4] = r->pos[0];
			u[3] = u[4] = r->len[0];
			n = 5;
		}
		break;
	case SQ_PREFIXLM:
	case SQ_PREFIXSUFFIXLM:
		L = (size_t)c->L[0];
		w = r->tok[1];
		for (i = 0; i < L; i++)		/* the -1 stand-in for width 0 */
			if (w[i] == -1)
				w[i] = 0;
		ov[0] = r->tok[0];
		if (shift_into(c, o[1], r->tok[0], L, packed ? r->seg[0] : NULL) == -1)
			return -1;
		pos = packed ? r->pos[0] : NULL;
		for (i = 0; i < L; i++) {
			int64_t p = pos ? pos[i] : (int64_t)i;

			o[3][i] = p < r->tok[2][i];
			if (c->ltol)
				o[2][i] = (p < w[i]) ^ (r->tok[0][i] != 0);
			else
				o[2][i] = r->tok[0][i] != 0;
		}
		n = 4;
		if (c->kind == SQ_PREFIXSUFFIXLM) {
			for (i = 0; i < L; i++)
				o[4][i] = r->tok[3][i] == 2;
			n = 5;
		}
		if (packed) {
			ov[n] = r->seg[0];
			ov[n + 1] = r->pos[0];
			n += 2;
		}
		break;
	case SQ_ENCODER:
		ov[0] = r->tok[0];
		ov[1] = r->tok[1];
		for (i = 0; i < (size_t)c->Li; i++)	/* [Q9] no padding mask */
			o[2][i] = r->tok[0][i] == c->mask_id;
		n = 3;
		if (packed) {
			ov[3] = r->seg[0];
			ov[4] = r->pos[0];
			n = 5;
		}
		break;
	case SQ_PREPACKED_ENCDEC:
		ov[0] = r->tok[0];
		ov[1] = r->tok[2];
		ov[2] = r->tok[3];
		ov[3] = r->tok[1];
		if (c->L[5] != c->L[1])
			return fail(c, SQ_EDATA, "Incompatible shapes: [%ld] vs. "
			    "[%ld] (targets_segment_ids and targets)", c->L[5], c->L[1]);
		if (shift_into(c, o[4], r->tok[1], c->L[1], r->tok[5]) == -1)
			return -1;
		sq_non_padding(r->tok[1], c->L[1], o[5]);
		ov[6] = r->tok[4];
		ov[7] = r->tok[5];
		n = 8;
		break;
	case SQ_PACK:
		for (k = 0; k < c->nk; k++) {
			ov[3 * k] = r->tok[k];
			ov[3 * k + 1] = r->seg[k];
			ov[3 * k + 2] = r->pos[k];
			u[3 * k] = u[3 * k + 1] = u[3 * k + 2] = r->len[k];
		}
		n = 3 * c->nk;
		break;
	default:
		return fail(c, SQ_EDATA, "internal error: no row layout");
	}
	/* Pass-through values were written by the caller of finish_row. */
	return emit_out(c, n + c->npass, ov, u);
}

/* Validation 2 and the derived features of one record. */

int
sq_check_length(const char *name, size_t n, long expected, int strict,
    const char *label, char *msg, size_t msgsz)
{
	if (strict && n != (size_t)expected) {
		snprintf(msg, msgsz, "Feature '%s' has length not equal to the "
		    "expected length of %ld during %s validation", name,
		    expected, label);
		return -1;
	}
	if (!strict && n > (size_t)expected) {
		snprintf(msg, msgsz, "Feature '%s' has length not less than or "
		    "equal to the expected length of %ld during %s validation",
		    name, expected, label);
		return -1;
	}
	return 0;
}

static void
misfit_msg(const char *name, const char *label, int64_t v, size_t j,
    char *msg, size_t msgsz)
{
	snprintf(msg, msgsz, "Dataset has incorrect type for feature '%s' "
	    "during %s validation: Got int64, expected int32 (value %lld at "
	    "index %zu)", name, label, (long long)v, j);
}

int
sq_check_feature(const char *name, int type, const char *tname,
    const int64_t *v, size_t n, const char *label, char *msg, size_t msgsz)
{
	size_t j;

	if (type == SQ_ABSENT) {
		snprintf(msg, msgsz, "Dataset is missing an expected feature "
		    "during %s validation: '%s'", label, name);
		return -1;
	}
	if (type != SQ_INT) {
		snprintf(msg, msgsz, "Dataset has incorrect type for feature "
		    "'%s' during %s validation: Got %s, expected int32", name,
		    label, tname ? tname : "?");
		return -1;
	}
	for (j = 0; j < n; j++)
		if (v[j] < INT32_MIN || v[j] > INT32_MAX) {
			misfit_msg(name, label, v[j], j, msg, msgsz);
			return -1;
		}
	return 0;
}

static int
validate(struct sq_conv *c, const struct sq_feat *f)
{
	size_t i;
	int num;

	num = c->kind != SQ_PACK && c->kind != SQ_PAD;
	for (i = 0; i < c->nval; i++) {
		if (f[i].type == SQ_ABSENT && c->kind == SQ_PAD)
			continue;
		if (sq_check_feature(c->in_name[i], f[i].type, f[i].tname,
		    f[i].v, num && !f[i].small ? f[i].n : 0,
		    "input_validation", c->msg, sizeof c->msg) == -1) {
			c->err = SQ_EDATA;
			return -1;
		}
		if (num && f[i].small == SQ_CHECKED && f[i].bad != SIZE_MAX) {
			misfit_msg(c->in_name[i], "input_validation", f[i].badv,
			    f[i].bad, c->msg, sizeof c->msg);
			c->err = SQ_EDATA;
			return -1;
		}
	}
	if (!c->length_check || !num)
		return 0;
	for (i = 0; i < c->nval; i++)
		if (c->in_len[i] >= 0 && sq_check_length(c->in_name[i], f[i].n,
		    c->in_len[i], 0, "input_validation", c->msg,
		    sizeof c->msg) == -1) {
			c->err = SQ_EDATA;
			return -1;
		}
	return 0;
}

/* Append v[0 .. n) to a derived feature, trimming at its length. */
static void
put(struct sq_conv *c, size_t k, const int64_t *v, int64_t fill, size_t n)
{
	size_t room = (size_t)c->L[k] - c->xn[k], m = n < room ? n : room, i;
	int64_t *d = c->scratch[k] + c->xn[k];

	if (v != NULL && m > 0)
		memcpy(d, v, m * sizeof *d);
	else
		for (i = 0; i < m; i++)
			d[i] = fill;
	c->xn[k] += m;
	if (k == 0) {
		c->st.trimmed += n - m;
		c->st.tokens_in[k] += n;
	}
}

static void
derive(struct sq_conv *c, const struct sq_feat *f)
{
	static const int64_t zero = 0;
	size_t k, ni, nt, ns, ntail, n;
	int64_t w;

	if (c->kind == SQ_PREFIXLM || c->kind == SQ_PREFIXSUFFIXLM) {
		ni = f[0].n;
		nt = f[1].n;
		ns = c->kind == SQ_PREFIXSUFFIXLM ? f[2].n : 0;
		ntail = nt + ns;
		for (k = 0; k < c->nk; k++) {
			c->xn[k] = 0;
			c->xp[k] = c->scratch[k];
			c->xpresent[k] = 1;
		}
		put(c, 0, f[0].v, 0, ni);
		put(c, 0, f[1].v, 0, nt);
		if (ns)
			put(c, 0, f[2].v, 0, ns);
		if (ntail == 0) {		/* one padding target */
			put(c, 0, &zero, 0, 1);
			ntail = 1;
		}
		n = ni + ntail;
		w = (int64_t)ni;
		put(c, 1, NULL, w == 0 ? -1 : w, n);
		put(c, 2, NULL, w + 1, n);
		if (c->kind == SQ_PREFIXSUFFIXLM) {
			if (ns) {
				put(c, 3, NULL, 1, ni + nt);
				put(c, 3, NULL, 2, ns);
			} else {
				put(c, 3, NULL, 1, ni);
				put(c, 3, NULL, 2, ntail);
			}
		}
		return;
	}
	for (k = 0; k < c->nk; k++) {
		c->xpresent[k] = f[k].type == SQ_INT;
		c->xp[k] = f[k].v;
		n = c->xpresent[k] ? f[k].n : 0;
		c->xn[k] = n < (size_t)c->L[k] ? n : (size_t)c->L[k];
		c->st.trimmed += n - c->xn[k];
		c->st.tokens_in[k] += n;
	}
}

/* Packed: keep only the first count_nonzero values [Q1]. */
static void
count_nonzero(struct sq_conv *c)
{
	size_t k, i, nz;

	for (k = 0; k < c->nk; k++) {
		for (i = nz = 0; i < c->xn[k]; i++)
			nz += c->xp[k][i] != 0;
		c->st.dropped += c->xn[k] - nz;
		c->xn[k] = nz;
	}
}

static int
fits(const struct sq_conv *c, const struct row *r)
{
	size_t k;

	for (k = 0; k < c->nk; k++)
		if (r->len[k] + c->xn[k] > (size_t)c->L[k])
			return 0;
	return 1;
}

/* Place the current record in row r; 'segid' > 0 writes t2t-style segment ids. */
static void
place(struct sq_conv *c, struct row *r, int64_t segid)
{
	size_t k, i, at;

	for (k = 0; k < c->nk; k++) {
		at = r->len[k];
		if (c->xn[k] > 0)
			memcpy(r->tok[k] + at, c->xp[k], c->xn[k] * sizeof(int64_t));
		for (i = 0; i < c->xn[k]; i++) {
			r->pos[k][at + i] = (int64_t)i;
			if (segid > 0)
				r->seg[k][at + i] = segid;
		}
		r->len[k] += c->xn[k];
		c->st.tokens[k] += c->xn[k];
	}
	r->nrec++;
}

/* Emit a packed row (segment ids from positions unless t2t set them) and recycle it. */
static int
emit_packed(struct sq_conv *c, struct row *r, int t2t)
{
	size_t k;
	int rv;

	if (!t2t)
		for (k = 0; k < c->nk; k++)
			segments_from_positions(r, k);
	rv = finish_row(c, r, 1, NULL);
	row_put(c, r);
	return rv;
}

static int
flush_open(struct sq_conv *c, int t2t)
{
	size_t i;

	for (i = 0; i < c->nopen; i++)
		if (emit_packed(c, c->open[i], t2t) == -1) {
			for (i++; i < c->nopen; i++)
				row_put(c, c->open[i]);
			c->nopen = 0;
			return -1;
		}
	c->nopen = 0;
	return 0;
}

static int
open_append(struct sq_conv *c, struct row *r)
{
	struct row **v;

	if (c->nopen == c->capopen) {
		if ((v = realloc(c->open, 2 * c->capopen * sizeof *v)) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
		c->open = v;
		c->capopen *= 2;
	}
	c->open[c->nopen++] = r;
	return 0;
}

static void
open_remove(struct sq_conv *c, size_t i)
{
	memmove(c->open + i, c->open + i + 1, (c->nopen - i - 1) * sizeof *c->open);
	c->nopen--;
}

/*
 * How full a row is (with the current record placed, if asked): the
 * fill of its fullest key.  Best-fit chooses the row this makes
 * fullest, so the key that runs out first decides, and a row full in
 * one key is not mistaken for a half-empty one.  The sum over keys
 * breaks ties.
 */
static double
fullness(const struct sq_conv *c, const struct row *r, int with_record)
{
	double f, mx = 0, sum = 0;
	size_t k;

	for (k = 0; k < c->nk; k++) {
		f = (double)(r->len[k] + (with_record ? c->xn[k] : 0)) / (double)c->L[k];
		sum += f;
		if (f > mx)
			mx = f;
	}
	return mx + sum * 1e-3;
}

static int
row_full(const struct sq_conv *c, const struct row *r)
{
	size_t k;

	for (k = 0; k < c->nk; k++)
		if (r->len[k] < (size_t)c->L[k])
			return 0;
	return 1;
}

static int
pack_seqio(struct sq_conv *c)
{
	if (c->bopen && bytes_to_row(c) == -1)
		return -1;
	if (c->cur == NULL && (c->cur = row_get(c)) == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	if (!fits(c, c->cur)) {
		if (emit_packed(c, c->cur, 0) == -1) {
			c->cur = NULL;
			return -1;
		}
		if ((c->cur = row_get(c)) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	}
	place(c, c->cur, 0);
	if (++c->inwin == (size_t)c->N) {	/* [Q2] window end */
		c->inwin = 0;
		if (emit_packed(c, c->cur, 0) == -1) {
			c->cur = NULL;
			return -1;
		}
		c->cur = NULL;
	}
	return 0;
}

static int
pack_t2t(struct sq_conv *c)
{
	size_t i, from;
	struct row *r;

	from = c->nopen > T2T_LOOKBACK ? c->nopen - T2T_LOOKBACK : 0;
	for (i = from; i < c->nopen; i++)
		if (fits(c, c->open[i]))
			break;
	if (i == c->nopen) {
		if ((r = row_get(c)) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
		if (open_append(c, r) == -1) {
			row_put(c, r);
			return -1;
		}
	}
	r = c->open[i];
	place(c, r, (int64_t)r->nrec + 1);
	if (++c->inwin == (size_t)c->N) {
		c->inwin = 0;
		return flush_open(c, 1);
	}
	return 0;
}

static int
pack_ours(struct sq_conv *c)
{
	size_t i, best = SIZE_MAX, evict;
	double f, bestf = -1;
	struct row *r;

	for (i = 0; i < c->nopen; i++) {
		if (!fits(c, c->open[i]))
			continue;
		if (c->strategy == SQ_FIRST_FIT) {
			best = i;
			break;
		}
		f = fullness(c, c->open[i], 1);
		if (f > bestf) {
			bestf = f;
			best = i;
		}
	}
	if (best == SIZE_MAX) {
		if (c->nopen == c->window) {
			/* Close a row: the oldest (first-fit) or the fullest. */
			evict = 0;
			if (c->strategy == SQ_BEST_FIT)
				for (i = 1, bestf = fullness(c, c->open[0], 0);
				    i < c->nopen; i++)
					if ((f = fullness(c, c->open[i], 0)) > bestf) {
						bestf = f;
						evict = i;
					}
			r = c->open[evict];
			open_remove(c, evict);
			if (emit_packed(c, r, 0) == -1)
				return -1;
		}
		if ((r = row_get(c)) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
		if (open_append(c, r) == -1) {
			row_put(c, r);
			return -1;
		}
		best = c->nopen - 1;
	}
	r = c->open[best];
	place(c, r, 0);
	if (row_full(c, r)) {
		open_remove(c, best);
		return emit_packed(c, r, 0);
	}
	return 0;
}

/*
 * [Q6] The record's own targets_segment_ids (unpacked EncDec and LM):
 * an integer list as long as the targets.  Checked with the input
 * validation, before the record changes anything.
 */
static int
check_tseg(struct sq_conv *c, const struct sq_feat *f)
{
	const struct sq_feat *s;

	if (c->in_tseg < 0 || f[c->in_tseg].type == SQ_ABSENT)
		return 0;
	s = &f[c->in_tseg];
	if (s->type != SQ_INT)
		return fail(c, SQ_EDATA, "targets_segment_ids: Got %s, "
		    "expected an integer list", s->tname ? s->tname : "?");
	if (s->n != (size_t)c->Lt)
		return fail(c, SQ_EDATA, "Incompatible shapes: [%ld] vs. "
		    "[%zu] (targets and the record's targets_segment_ids)",
		    c->Lt, s->n);
	return 0;
}

static int
push_unpacked(struct sq_conv *c, const struct sq_feat *f)
{
	struct row *r;
	size_t k, i;
	const int64_t *useg = NULL;
	int rv;

	/* Checked by check_tseg(). */
	if (c->in_tseg >= 0 && f[c->in_tseg].type != SQ_ABSENT)
		useg = f[c->in_tseg].v;
	if ((r = c->cur) == NULL && (r = c->cur = row_get(c)) == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	for (k = 0; k < c->nk; k++) {
		copy_padded(r->tok[k], (size_t)c->L[k], c->xp[k], c->xn[k]);
		r->len[k] = (size_t)c->L[k];
		c->st.tokens[k] += c->xn[k];
	}
	for (i = 0; i < c->npass; i++) {
		const struct sq_feat *p = &f[c->pass0 + i];
		size_t L = c->out_len[c->nout - c->npass + i];
		size_t m = p->n < L ? p->n : L;

		copy_padded(c->out_val[c->nout - c->npass + i], L, p->v, m);
		c->st.trimmed += p->n - m;
	}
	if (useg != NULL) {
		memcpy(c->tseg, useg, (size_t)c->Lt * sizeof *c->tseg);
		useg = c->tseg;
	}
	rv = finish_row(c, r, 0, useg);
	/* Only the used part needs clearing: copy_padded rewrites it all. */
	for (k = 0; k < c->nk; k++)
		r->len[k] = 0;
	return rv;
}

static int
push_pad(struct sq_conv *c)
{
	size_t k, n = 0;

	for (k = 0; k < c->nk; k++) {
		if (!c->xpresent[k])
			continue;
		/* Keep the output arrays in key order; absent keys are skipped. */
		copy_padded(c->out_val[k], (size_t)c->L[k], c->xp[k], c->xn[k]);
		c->st.tokens[k] += c->xn[k];
		n++;
	}
	if (n == c->nk)
		return emit_out(c, n, (const int64_t *const *)c->out_val, NULL);
	{
		const char *nm[MAXK];
		const int64_t *v[MAXK];
		size_t ln[MAXK], j = 0;

		for (k = 0; k < c->nk; k++)
			if (c->xpresent[k]) {
				nm[j] = c->out_name[k];
				v[j] = c->out_val[k];
				ln[j++] = c->out_len[k];
			}
		c->st.rows++;
		if (c->emit && c->emit(c->emit_arg, j, nm, v, ln, NULL) == -1)
			return fail(c, SQ_EEMIT, "%s", strerror(errno));
		return 0;
	}
}

static int
push_prepacked_lm(struct sq_conv *c, const struct sq_feat *f)
{
	const int64_t *v[6];
	size_t ln[6], i, n = c->nin;

	for (i = 0; i < n; i++) {
		if (f[i].type == SQ_ABSENT)
			return fail(c, SQ_EDATA, "Dataset is missing an expected "
			    "feature during input_validation validation: '%s'",
			    c->in_name[i]);
		if (f[i].type != SQ_INT)
			return fail(c, SQ_EDATA, "Dataset has incorrect type for "
			    "feature '%s' during input_validation validation: "
			    "Got %s, expected int32", c->in_name[i],
			    f[i].tname ? f[i].tname : "?");
		v[i] = f[i].v;
		ln[i] = f[i].n;
	}
	c->st.rows++;
	if (c->emit && c->emit(c->emit_arg, n, c->in_name, v, ln, NULL) == -1)
		return fail(c, SQ_EEMIT, "%s", strerror(errno));
	return 0;
}

int
sq_push(struct sq_conv *c, const struct sq_feat *f)
{
	int rv;

	if (c->err != SQ_OK)
		return -1;
	c->st.records++;
	switch (c->kind) {
	case SQ_PASSTHROUGH:
		c->st.rows++;	/* the caller copies the record unchanged */
		return 0;
	case SQ_PREPACKED_LM:
	case SQ_PREPACKED_PREFIXLM:
		/* A missing or mistyped list refuses the record whole. */
		if ((rv = push_prepacked_lm(c, f)) == -1 && c->err == SQ_EDATA)
			c->untaken = 1;
		return rv;
	default:
		break;
	}
	if (validate(c, f) == -1 || check_tseg(c, f) == -1) {
		c->untaken = 1;
		return -1;
	}
	derive(c, f);
	if (c->kind == SQ_PAD)
		return push_pad(c);
	if (!c->pack)
		rv = push_unpacked(c, f);
	else {
		count_nonzero(c);
		if (c->custom)
			rv = pack_t2t(c);
		else if (c->strategy != SQ_SEQIO)
			rv = pack_ours(c);
		else
			rv = pack_seqio(c);
	}
	/*
	 * Every allocation comes before the record is placed: out of
	 * memory leaves the rows as the records before it made them.
	 */
	if (rv == -1 && c->err == SQ_ENOMEM)
		c->untaken = 1;
	return rv;
}

int
sq_finish(struct sq_conv *c)
{
	if (c->err != SQ_OK)
		return -1;
	if (!c->pack || c->kind == SQ_PAD || c->kind == SQ_PASSTHROUGH ||
	    c->kind == SQ_PREPACKED_LM || c->kind == SQ_PREPACKED_PREFIXLM)
		return 0;
	if (c->custom || c->strategy != SQ_SEQIO) {
		c->inwin = 0;
		return flush_open(c, c->custom);
	}
	if (c->inwin > 0 && c->bopen) {
		c->inwin = 0;
		return bytes_emit(c);
	}
	if (c->inwin > 0 && c->cur != NULL) {
		c->inwin = 0;
		if (emit_packed(c, c->cur, 0) == -1) {
			c->cur = NULL;
			return -1;
		}
		c->cur = NULL;
	}
	return 0;
}

int
sq_finish_before(struct sq_conv *c)
{
	enum sq_errkind was = c->err;
	int rv;

	if (c->err == SQ_OK)
		return sq_finish(c);
	if ((c->err != SQ_EDATA && c->err != SQ_ENOMEM) || !c->untaken)
		return -1;
	c->err = SQ_OK;
	rv = sq_finish(c);
	if (c->err == SQ_OK)
		c->err = was;
	c->untaken = 0;
	return rv;
}

/* The canonical-form reader. */

void
sq_fetch_example(const struct sq_conv *c, const struct example *ex,
    struct sq_feat *f)
{
	const struct ex_feature *ft;
	size_t i;

	for (i = 0; i < sq_ninputs(c); i++) {
		memset(&f[i], 0, sizeof f[i]);
		if ((ft = ex_get(ex, sq_input_name(c, i))) == NULL)
			f[i].type = SQ_ABSENT;
		else if (ft->kind == EX_INT64 || ft->kind == EX_NONE) {
			f[i].type = SQ_INT;
			f[i].v = ft->i64;
			f[i].n = ft->kind == EX_INT64 ? ft->n : 0;
		} else {
			f[i].type = SQ_OTHER;
			f[i].tname = ft->kind == EX_BYTES ? "string" : "float32";
		}
	}
}

int
sq_fetch_canonical(struct sq_conv *c, const uint8_t *p, size_t n,
    struct sq_feat *f)
{
	struct ex_span fs[MAXK + SQ_MAX_FEATS + 2], v;
	size_t nin = c->nin, i;
	uint64_t over;
	int64_t *d;
	void *np;
	long cnt;

	if (!ex_canonical_find(p, n, 0, nin, c->in_want, fs))
		return 0;
	for (i = 0; i < nin; i++) {
		f[i].type = SQ_ABSENT;
		f[i].v = NULL;
		f[i].n = 0;
		f[i].small = 0;
		if (fs[i].p == NULL)
			continue;
		switch (ex_canonical_feature(fs[i], &v)) {
		case EX_NONE:
			f[i].type = SQ_INT;
			continue;
		case EX_BYTES:
			f[i].type = SQ_OTHER;
			f[i].tname = "string";
			continue;
		case EX_FLOAT:
			f[i].type = SQ_OTHER;
			f[i].tname = "float32";
			continue;
		case EX_INT64:
			f[i].type = SQ_INT;
			break;
		default:
			return 0;
		}
		if (v.n == 0)
			continue;
		if (v.n > c->fcap[i]) {	/* at least one byte per value */
			if ((np = realloc(c->fval[i], v.n * sizeof(int64_t))) == NULL)
				return -1;
			c->fval[i] = np;
			c->fcap[i] = v.n;
		}
		d = c->fval[i];
		if ((cnt = ex_packed_int64s(v.p, v.n, d, &over)) == -1)
			return 0;
		f[i].v = d;
		f[i].n = (size_t)cnt;
		f[i].small = over == 0;
	}
	return 1;
}

/*
 * The byte path.  For packed EncDec and LM under seqio's strategy, a
 * record whose tokens are all minimal varints of 1 .. 2^28 is packed
 * without decoding: non-zero counting keeps every token (no zeros), a
 * value is a byte with the top bit clear, and each output list of a
 * row is made of byte runs: the tokens, runs of the segment number,
 * prefixes of the varints 0, 1, 2, ..., bos then a segment's tokens
 * but its last (the segment-aware shift), runs of 1 for the loss
 * weights, then zero bytes (a 0 varint) for the padding.
 */

#define BMAXLEN	65536		/* longest length the byte path takes */
#define SHORT	32		/* runs written at once (see put_run()) */

enum { BL_TOK, BL_SHIFT, BL_LOSS, BL_SEG, BL_POS };

static int
bytes_setup(struct sq_conv *c)
{
	static const unsigned char ed_type[8] = {
		BL_TOK, BL_TOK, BL_SHIFT, BL_LOSS, BL_SEG, BL_POS, BL_SEG, BL_POS
	}, ed_key[8] = { 0, 1, 1, 1, 0, 0, 1, 1 };
	static const unsigned char lm_type[5] = {
		BL_TOK, BL_SHIFT, BL_LOSS, BL_SEG, BL_POS
	};
	size_t i, j, t, k, off;
	uint8_t *q;

	if (c->emit_bytes == NULL || !c->pack || c->custom ||
	    c->strategy != SQ_SEQIO || c->npass > 0 || c->N > BMAXLEN ||
	    (c->kind != SQ_ENCDEC && c->kind != SQ_LM))
		return 0;
	c->nbl = c->kind == SQ_ENCDEC ? 8 : 5;
	if (c->nout != c->nbl || c->nk != c->nin || c->nk != (c->kind == SQ_ENCDEC ? 2u : 1u))
		return 0;
	for (i = 0; i < c->nbl; i++) {
		c->bltype[i] = c->kind == SQ_ENCDEC ? ed_type[i] : lm_type[i];
		c->blkey[i] = c->kind == SQ_ENCDEC ? ed_key[i] : 0;
		c->blklen[i] = strlen(c->out_name[i]);
		c->blord[i] = i;
	}
	for (i = 1; i < c->nbl; i++)	/* the order ex_encode_int64_lists() writes */
		for (j = i; j > 0 && strcmp(c->out_name[c->blord[j - 1]],
		    c->out_name[c->blord[j]]) > 0; j--) {
			t = c->blord[j];
			c->blord[j] = c->blord[j - 1];
			c->blord[j - 1] = t;
		}
	for (k = 0; k < c->nk; k++)
		if ((c->bb[k] = malloc(4 * (size_t)c->L[k] + 8 + SHORT)) == NULL ||
		    (c->bsv[k] = malloc((size_t)c->L[k] * sizeof(uint32_t))) == NULL ||
		    (c->bsb[k] = malloc((size_t)c->L[k] * sizeof(uint32_t))) == NULL)
			return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	if ((c->bpos = calloc(1, 3 * (size_t)c->N + SHORT)) == NULL ||
	    (c->bposoff = malloc(((size_t)c->N + 1) * sizeof(uint32_t))) == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	for (i = 0, q = c->bpos, off = 0; i < (size_t)c->N; i++) {
		c->bposoff[i] = (uint32_t)off;
		q = ex_put_varint(q, i);
		off = (size_t)(q - c->bpos);
	}
	c->bposoff[c->N] = (uint32_t)off;
	c->bboslen = (size_t)(ex_put_varint(c->bbos, (uint64_t)c->bos) - c->bbos);
	c->brow.nk = c->nk;
	c->bfast = 1;
	return 0;
}

/*
 * Check the packed varints [b, e) for the byte path: at least one,
 * none zero (so each is minimal: only a 0 varint has a 0x00 byte),
 * none longer than 4 bytes.  Returns the count, or 0 when they do not
 * qualify.  Bytes from 'base' (<= b) up to 'limit' (>= e) may be
 * read.
 */
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
/*
 * Sixteen bytes at a time (a list of up to 32 in one piece): the top
 * bits and the zero bytes as masks.  A short piece is read as the bytes
 * ending at 'e' when they lie after 'base', its masks shifted down.
 */
static size_t
scan_tokens(const uint8_t *b, const uint8_t *e, const uint8_t *base,
    const uint8_t *limit)
{
	const __m128i zero = _mm_setzero_si128();
	__m128i v, w;
	uint32_t h, z, m, prev = 0, valid;
	uint8_t tail[16];
	size_t left, cnt = 0;

	if (b == e || (e[-1] & 0x80))
		return 0;
	left = (size_t)(e - b);
	if (left <= 32 && ((size_t)(limit - b) >= 32 || (size_t)(e - base) >= 32)) {
		/* The usual list: one piece of 32 bytes, as 32-bit masks. */
		const uint8_t *q = (size_t)(limit - b) >= 32 ? b : e - 32;

		v = _mm_loadu_si128((const __m128i *)(const void *)q);
		w = _mm_loadu_si128((const __m128i *)(const void *)(q + 16));
		h = (uint32_t)_mm_movemask_epi8(v) |
		    (uint32_t)_mm_movemask_epi8(w) << 16;
		z = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)) |
		    (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(w, zero)) << 16;
		if (q != b) {
			h >>= 32 - left;
			z >>= 32 - left;
		}
		valid = (uint32_t)((1ull << left) - 1);
		h &= valid;
		if ((z & valid) != 0 || (h & h >> 1 & h >> 2 & h >> 3) != 0)
			return 0;
		m = ~h & valid;
		m -= m >> 1 & 0x55555555;
		m = (m & 0x33333333) + (m >> 2 & 0x33333333);
		m = (m + (m >> 4)) & 0x0f0f0f0f;
		return (m * 0x01010101) >> 24;
	}
	for (; b < e; b += 16) {
		left = (size_t)(e - b);
		if (left >= 16 || (size_t)(limit - b) >= 16) {
			v = _mm_loadu_si128((const __m128i *)(const void *)b);
			h = (uint32_t)_mm_movemask_epi8(v);
			z = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
		} else if ((size_t)(e - base) >= 16) {
			v = _mm_loadu_si128((const __m128i *)(const void *)(e - 16));
			h = (uint32_t)_mm_movemask_epi8(v) >> (16 - left);
			z = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)) >>
			    (16 - left);
		} else {
			memset(tail, 0x01, sizeof tail);
			memcpy(tail, b, left);
			v = _mm_loadu_si128((const __m128i *)(const void *)tail);
			h = (uint32_t)_mm_movemask_epi8(v);
			z = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
		}
		valid = left >= 16 ? 0xffffu : (1u << left) - 1;
		h &= valid;
		if (z & valid)
			return 0;	/* a zero byte */
		/* Four continuation bytes in a row, with the last three before. */
		m = h << 3 | prev;
		if (m & m >> 1 & m >> 2 & m >> 3)
			return 0;
		prev = h >> 13;
		m = ~h & valid;		/* varint ends: count the bits */
		m -= m >> 1 & 0x5555;
		m = (m & 0x3333) + (m >> 2 & 0x3333);
		m = (m + (m >> 4)) & 0x0f0f;
		cnt += (m + (m >> 8)) & 0x1f;
	}
	return cnt;
}
#else
/* Eight bytes at a time, in plain integers. */
static size_t
scan_tokens(const uint8_t *b, const uint8_t *e, const uint8_t *base,
    const uint8_t *limit)
{
	const uint64_t hi = 0x8080808080808080ull, lo = 0x0101010101010101ull;
	uint64_t w, h, m, hp = 0, bad = 0, cnt = 0;
	uint8_t tail[8];
	size_t left;
	int last = 0;

	if (b == e || (e[-1] & 0x80))
		return 0;
	while (!last && (left = (size_t)(e - b)) > 0) {
		if (left >= 8)
			w = rp_le64(b);
		else {
			/* The last bytes, filled up with 0x01: no zero, no continuation; not counted. */
			if ((size_t)(limit - b) >= 8)
				w = rp_le64(b);
			else if ((size_t)(e - base) >= 8)
				w = rp_le64(e - 8) >> (64 - 8 * left);
			else {
				memset(tail, 0, sizeof tail);
				memcpy(tail, b, left);
				w = rp_le64(tail);
			}
			m = (1ull << (8 * left)) - 1;
			w = (w & m) | (lo & ~m);
			cnt -= 8 - left;
			last = 1;
		}
		h = w & hi;
		bad |= (w - lo) & ~w & hi;		/* a zero byte */
		/* Four continuation bytes in a row, counting the word before. */
		bad |= h & (h << 8 | hp >> 56) & (h << 16 | hp >> 48) &
		    (h << 24 | hp >> 40);
		cnt += ((~w & hi) >> 7) * lo >> 56;	/* bytes that end a varint */
		hp = h;
		b += 8;
	}
	return bad ? 0 : (size_t)cnt;
}
#endif

/* The byte offset, in [b, ...), where the first m varints end. */
static size_t
varints_span(const uint8_t *b, size_t m)
{
	size_t i = 0;

	for (; m > 0; i++)
		m -= !(b[i] & 0x80);
	return i;
}

/*
 * Find the packed keys' varints in a record, as sq_fetch_canonical()
 * finds them, without decoding.  Returns 1 with the bounds of each (an
 * empty list gives b == e), 0 when the record is not for the byte path
 * (absent or non-int64 keys included).  The walk of
 * ex_canonical_find(), entry by entry (ex_canonical_entry()), with the
 * Features read as they are found: the byte path is the hot loop of
 * packing, and ex_canonical_find() and a read of the two Features after
 * it cost 3% more instructions there (pack-encdec -C encdec, callgrind).
 */
static int
bytes_fetch(const struct sq_conv *c, const uint8_t *p, size_t n,
    const uint8_t **xb, const uint8_t **xe)
{
	const uint8_t *q = p, *end = p + n, *m;
	size_t mlen, nin = c->nin, i;
	struct ex_span key, val, v;
	int kind, seen[2] = { 0, 0 };

	while (q < end) {
		if (ex_get_ld(&q, end, 0x0a, &m, &mlen) == -1)
			return 0;
		for (end = m + mlen; m < end;) {
			if (ex_canonical_entry(&m, end, &key, &val) == -1)
				return 0;
			for (i = 0; i < nin; i++)
				if (c->in_nlen[i] == key.n &&
				    ex_same_key(key.p, c->in_name[i], key.n))
					break;
			kind = ex_canonical_feature(val, &v);
			if (i == nin) {
				if (kind == EX_INT64 ? !ex_varints_ok(v.p, v.n) :
				    kind == -1)
					return 0;
				continue;
			}
			if (seen[i] || (kind != EX_INT64 && kind != EX_NONE))
				return 0;
			seen[i] = 1;
			xb[i] = v.p;
			xe[i] = v.p + v.n;
		}
		end = p + n;
	}
	for (i = 0; i < nin; i++)
		if (!seen[i])
			return 0;
	return 1;
}

/* Emit the open byte row and close it. */
static int
bytes_emit(struct sq_conv *c)
{
	size_t k;

	c->bopen = 0;
	if (check_output(c) == -1)
		return -1;
	for (k = 0; k < c->nk; k++) {
		c->brow.k[k].b = c->bb[k];
		c->brow.k[k].segv = c->bsv[k];
		c->brow.k[k].segb = c->bsb[k];
	}
	c->st.rows++;
	if (c->emit_bytes(c->emit_arg, &c->brow) == -1)
		return fail(c, SQ_EEMIT, "%s", strerror(errno));
	return 0;
}

/* Turn the open byte row into the current row of the general path. */
static int
bytes_to_row(struct sq_conv *c)
{
	struct row *r;
	const struct sq_brow_key *bk;
	const uint8_t *q;
	size_t k, s, m, at;
	uint64_t x = 0;

	/* Out of memory, the byte row stays open for sq_finish_before(). */
	if ((r = row_get(c)) == NULL)
		return fail(c, SQ_ENOMEM, "%s", strerror(ENOMEM));
	c->bopen = 0;
	for (k = 0; k < c->nk; k++) {
		bk = &c->brow.k[k];
		q = c->bb[k];
		at = 0;
		for (s = 0; s < bk->nseg; s++)
			for (m = 0; m < c->bsv[k][s]; m++, at++) {
				ex_get_varint(&q, c->bb[k] + bk->nb, &x);
				r->tok[k][at] = (int64_t)x;
				r->pos[k][at] = (int64_t)m;
			}
		r->len[k] = at;
	}
	r->nrec = 1;
	c->cur = r;
	return 0;
}

int
sq_push_bytes(struct sq_conv *c, const uint8_t *p, size_t n)
{
	const uint8_t *xb[2], *xe[2];
	size_t nv[2], nb[2], k, L, last;
	struct sq_brow_key *bk;

	if (!c->bfast || c->err != SQ_OK || c->cur != NULL)
		return 0;
	if (bytes_fetch(c, p, n, xb, xe) == 0)
		return 0;
	for (k = 0; k < c->nk; k++) {
		nb[k] = (size_t)(xe[k] - xb[k]);
		nv[k] = 0;
		if (nb[k] > 0 && (nv[k] = scan_tokens(xb[k], xe[k], p, p + n)) == 0)
			return 0;
		L = (size_t)c->L[k];
		if (nv[k] > L) {
			if (c->length_check)
				return 0;	/* the general path says why */
			nb[k] = varints_span(xb[k], L);
		}
	}
	/* As sq_push() and pack_seqio(), with the record as byte runs. */
	c->st.records++;
	for (k = 0; k < c->nk; k++)
		c->st.tokens_in[k] += nv[k];
	for (k = 0; k < c->nk; k++)
		if (nv[k] > (size_t)c->L[k]) {
			c->st.trimmed += nv[k] - (size_t)c->L[k];
			nv[k] = (size_t)c->L[k];
		}
	if (c->bopen)
		for (k = 0; k < c->nk; k++)
			if (c->brow.k[k].nv + nv[k] > (size_t)c->L[k]) {
				if (bytes_emit(c) == -1)
					return -1;
				break;
			}
	if (!c->bopen) {
		for (k = 0; k < c->nk; k++) {
			c->brow.k[k].nb = 0;
			c->brow.k[k].nv = 0;
			c->brow.k[k].nseg = 0;
			c->brow.k[k].idb = 0;
			c->brow.k[k].posb = 0;
			c->brow.k[k].lastb = 0;
		}
		c->bopen = 1;
	}
	for (k = 0; k < c->nk; k++) {
		if (nv[k] == 0)
			continue;
		bk = &c->brow.k[k];
		/* The row's buffer has SHORT bytes to spare. */
		if (nb[k] <= SHORT && (size_t)(p + n - xb[k]) >= SHORT)
			memcpy(c->bb[k] + bk->nb, xb[k], SHORT);
		else
			memcpy(c->bb[k] + bk->nb, xb[k], nb[k]);
		for (last = 1; last < nb[k] && (xb[k][nb[k] - 1 - last] & 0x80); last++)
			;
		bk->lastb += last;
		/* Positions 0 .. nv - 1: 1 byte below 128, 2 below 16384, else 3. */
		bk->posb += nv[k] + (nv[k] > 128 ? nv[k] - 128 : 0) +
		    (nv[k] > 16384 ? nv[k] - 16384 : 0);
		bk->idb += nv[k] * ex_varint_size(bk->nseg + 1);
		c->bsv[k][bk->nseg] = (uint32_t)nv[k];
		c->bsb[k][bk->nseg++] = (uint32_t)nb[k];
		bk->nb += nb[k];
		bk->nv += nv[k];
		c->st.tokens[k] += nv[k];
	}
	if (++c->inwin == (size_t)c->N) {	/* [Q2] window end */
		c->inwin = 0;
		if (bytes_emit(c) == -1)
			return -1;
	}
	return 1;
}

/* Bytes of one list's values. */
static size_t
brow_list_size(const struct sq_conv *c, const struct sq_brow *r, size_t i)
{
	const struct sq_brow_key *bk = &r->k[c->blkey[i]];
	size_t L = c->out_len[i], pad = L - bk->nv;

	switch (c->bltype[i]) {
	case BL_TOK:
		return bk->nb + pad;
	case BL_LOSS:
		return L;
	case BL_SEG:
		return bk->idb + pad;
	case BL_POS:
		return bk->posb + pad;
	default:	/* BL_SHIFT: each segment's last varint is dropped */
		return bk->nseg * c->bboslen + bk->nb - bk->lastb +
		    (pad > 0 ? c->bboslen + pad - 1 : 0);
	}
}

size_t
sq_brow_size(const struct sq_conv *c, struct sq_brow *r)
{
	size_t i, fsz = 0;

	for (i = 0; i < c->nbl; i++)
		fsz += ex_entry_sizes(&r->sz[i], c->blklen[i],
		    ex_feature_sizes(&r->sz[i], EX_INT64, brow_list_size(c, r, i)));
	r->fsz = fsz;
	return ex_ld_size(fsz);
}

/*
 * Runs of a row are short (a segment's tokens, positions or ids) and a
 * call to memcpy() or memset() for each costs more than the bytes.  A
 * run of at most SHORT bytes is written as SHORT bytes at once when
 * the record has room for them: what lands past the run is overwritten
 * by the bytes that follow it in the record.
 */
static inline uint8_t *
put_run(uint8_t *q, const uint8_t *qend, const uint8_t *src,
    const uint8_t *send, size_t n)
{
	if (n <= SHORT && (size_t)(qend - q) >= SHORT &&
	    (size_t)(send - src) >= SHORT)
		memcpy(q, src, SHORT);
	else
		memcpy(q, src, n);
	return q + n;
}

static inline uint8_t *
fill_run(uint8_t *q, const uint8_t *qend, int v, size_t n)
{
	if (n <= SHORT && (size_t)(qend - q) >= SHORT)
		memset(q, v, SHORT);
	else
		memset(q, v, n);
	return q + n;
}

static uint8_t *
brow_list_put(const struct sq_conv *c, const struct sq_brow *r, size_t i,
    uint8_t *q, const uint8_t *qend)
{
	const struct sq_brow_key *bk = &r->k[c->blkey[i]];
	const uint8_t *bend = bk->b + bk->nb;
	const uint8_t *pend = c->bpos + c->bposoff[c->N] + SHORT;
	size_t L = c->out_len[i], pad = L - bk->nv, s, m, e, t;

	switch (c->bltype[i]) {
	case BL_TOK:
		memcpy(q, bk->b, bk->nb);
		q += bk->nb;
		break;
	case BL_LOSS:
		memset(q, 1, bk->nv);
		q += bk->nv;
		break;
	case BL_SEG:
		for (s = 0; s < bk->nseg; s++)
			if (s + 1 < 0x80)
				q = fill_run(q, qend, (int)(s + 1), bk->segv[s]);
			else
				for (m = 0; m < bk->segv[s]; m++)
					q = ex_put_varint(q, s + 1);
		break;
	case BL_POS:
		for (s = 0; s < bk->nseg; s++)
			q = put_run(q, qend, c->bpos, pend,
			    c->bposoff[bk->segv[s]]);
		break;
	default:	/* BL_SHIFT */
		for (s = e = 0; s < bk->nseg; s++) {
			memcpy(q, c->bbos, c->bboslen);
			q += c->bboslen;
			e += bk->segb[s];
			for (t = e - 1; t > e - bk->segb[s] && (bk->b[t - 1] & 0x80); t--)
				;
			q = put_run(q, qend, bk->b + e - bk->segb[s], bend,
			    bk->segb[s] - (e - t));
		}
		if (pad > 0) {
			memcpy(q, c->bbos, c->bboslen);
			q += c->bboslen;
			pad--;
		}
		break;
	}
	memset(q, 0, pad);
	return q + pad;
}

void
sq_brow_put(const struct sq_conv *c, const struct sq_brow *r, uint8_t *q)
{
	size_t t, i;
	const uint8_t *qend;

	q = ex_put_ld(q, 0x0a, r->fsz);
	qend = q + r->fsz;
	for (t = 0; t < c->nbl; t++) {
		i = c->blord[t];
		q = ex_entry_head(q, &r->sz[i], c->out_name[i], c->blklen[i],
		    r->sz[i].feat);
		q = ex_feature_head(q, &r->sz[i], EX_INT64);
		q = brow_list_put(c, r, i, q, qend);
	}
}
