/*
 * Fuzz target: seqio converters and the Electra builder on arbitrary
 * Example payloads.  The first bytes pick the converter and its
 * options; the rest is a sequence of records, each a length byte and
 * that many payload bytes, decoded as pack-encdec decodes them (or,
 * with a flag, taken as the packed varints of inputs and targets of a
 * canonical Example).  A second converter takes each record through
 * the byte path first, as pack-encdec does; both must write the same
 * records and stop at the same error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
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

/* Rows as the records pack-encdec writes, each after its size. */
struct out {
	struct buf	 b;
	struct ex_lists	*enc;
	const struct sq_conv *c;
};

static void
out_add(struct out *o, size_t n, uint8_t **dst)
{
	uint8_t hdr[8];

	rp_put_le64(hdr, n);
	if (rp_buf_append(&o->b, hdr, 8) == -1 || rp_buf_reserve(&o->b, n + 1) == -1)
		abort();
	*dst = o->b.p + o->b.len;
	o->b.len += n;
}

static int
sink_enc(void *arg, size_t n, const char *const *nm,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	struct out *o = arg;
	uint8_t *dst;
	size_t sz;

	sink(NULL, n, nm, vals, lens, used);
	if ((sz = ex_encode_int64_lists(o->enc, n, nm, vals, lens, used)) == SIZE_MAX)
		abort();
	out_add(o, sz, &dst);
	ex_lists_put(o->enc, dst);
	return 0;
}

static int
sink_bytes(void *arg, const struct sq_brow *row)
{
	struct out *o = arg;
	struct sq_brow r = *row;
	uint8_t *dst;
	size_t sz = sq_brow_size(o->c, &r);

	out_add(o, sz, &dst);
	sq_brow_put(o->c, &r, dst);
	return 0;
}

static void
put_field(struct buf *b, uint8_t tag, const void *p, size_t n)
{
	uint8_t t[11];
	size_t k = 0;
	uint64_t v = n;

	t[k++] = tag;
	for (; v >= 0x80; v >>= 7)
		t[k++] = (uint8_t)(v | 0x80);
	t[k++] = (uint8_t)v;
	rp_buf_append(b, t, k);
	rp_buf_append(b, p, n);
}

/* A canonical Example whose inputs and targets are the packed varints 'a' and 'b'. */
static void
make_tokens(struct buf *rec, const uint8_t *a, size_t na, const uint8_t *b,
    size_t nb)
{
	struct buf fs = { 0 }, e = { 0 }, f = { 0 }, l = { 0 };
	const char *nm[2] = { "inputs", "targets" };
	const uint8_t *v[2] = { a, b };
	size_t nv[2] = { na, nb }, i;

	for (i = 0; i < 2; i++) {
		e.len = f.len = l.len = 0;
		put_field(&l, 0x0a, v[i], nv[i]);
		put_field(&f, 0x1a, l.p, l.len);
		put_field(&e, 0x0a, nm[i], strlen(nm[i]));
		put_field(&e, 0x12, f.p, f.len);
		put_field(&fs, 0x0a, e.p, e.len);
	}
	rec->len = 0;
	put_field(rec, 0x0a, fs.p, fs.len);
	rp_buf_free(&fs);
	rp_buf_free(&e);
	rp_buf_free(&f);
	rp_buf_free(&l);
}

/* One record as pack-encdec takes it; -1 when the run stops. */
static int
push_tool(struct sq_conv *c, int bytes, struct example *ex,
    const uint8_t *p, size_t n)
{
	struct sq_feat f[40];
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
	struct example ex, ex2[2];
	const struct ex_feature *ft;
	struct sq_conv *cc[2] = { NULL, NULL };
	struct out o[2];
	struct buf tok = { 0 };
	const uint8_t *rec;
	size_t i, j, n, ni, split;
	int structured, stop[2] = { 0, 0 }, w;
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
	structured = (data[7] >> 1) & 1;
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
		/* The byte path beside the general one. */
		for (w = 0; w < 2; w++) {
			memset(&o[w], 0, sizeof o[w]);
			if ((o[w].enc = ex_lists_new()) == NULL)
				abort();
			cfg.emit = sink_enc;
			cfg.emit_bytes = sink_bytes;
			cfg.emit_arg = &o[w];
			if ((cc[w] = sq_new(&cfg, NULL)) == NULL)
				abort();
			o[w].c = cc[w];
			ex_init(&ex2[w]);
		}
	}
	ex_init(&ex);
	while (size > 0) {
		n = data[0];
		data++;
		size--;
		if (n > size)
			n = size;
		rec = data;
		if (structured && n > 0) {
			split = data[0] < n - 1 ? data[0] : n - 1;
			make_tokens(&tok, data + 1, split, data + 1 + split, n - 1 - split);
			rec = tok.p;
		}
		if (c != NULL && !stop[0] && !stop[1])
			for (w = 0; w < 2; w++)
				stop[w] = push_tool(cc[w], w, &ex2[w], rec,
				    rec == data ? n : tok.len) == -1;
		if (rec != data) {
			data += n;
			size -= n;
			continue;
		}
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
				sq_fetch_example(c, &ex, f);
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
	if (c != NULL && !stop[0] && !stop[1])
		for (w = 0; w < 2; w++)
			stop[w] = sq_finish(cc[w]) == -1;
	if (c != NULL) {
		/* The same records, and the same stop with the same message. */
		if (stop[0] != stop[1] || sq_errkind(cc[0]) != sq_errkind(cc[1]) ||
		    strcmp(sq_strerror(cc[0]), sq_strerror(cc[1])) != 0 ||
		    o[0].b.len != o[1].b.len ||
		    (o[0].b.len && memcmp(o[0].b.p, o[1].b.p, o[0].b.len) != 0))
			abort();
		for (w = 0; w < 2; w++) {
			sq_free(cc[w]);
			ex_lists_free(o[w].enc);
			rp_buf_free(&o[w].b);
			ex_free(&ex2[w]);
		}
	}
	rp_buf_free(&tok);
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
