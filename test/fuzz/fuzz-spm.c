/*
 * Fuzz the SentencePiece model reader, the normalizer, the encoders and
 * the decoder.  Input: an option byte, the model's length L (2 bytes,
 * little-endian), L bytes of .model (L = 0: one of the built-in models
 * the option byte picks), then text whose lines are encoded.  Each line
 * is encoded word by word (the cache) and whole, which must agree; the
 * ids are decoded, and the text's bytes are also read as ids (in and
 * out of range) and as pieces.  Option bit 0x40 adds Megatron's
 * special texts (spm_megatron_specials()) to both encoders.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "spm.h"

#define SP	"\xe2\x96\x81"

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* ---- built-in models, as protobuf bytes -------------------------------- */

struct pbuf {
	uint8_t		*b;
	size_t		 n, cap;
};

static void
pb_raw(struct pbuf *p, const void *s, size_t n)
{
	if (p->n + n > p->cap) {
		p->cap = (p->n + n) * 2 + 64;
		if ((p->b = realloc(p->b, p->cap)) == NULL)
			abort();
	}
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

static void
pb_varint(struct pbuf *p, uint64_t v)
{
	uint8_t c;

	while (v >= 0x80) {
		c = (uint8_t)(v | 0x80);
		pb_raw(p, &c, 1);
		v >>= 7;
	}
	c = (uint8_t)v;
	pb_raw(p, &c, 1);
}

static void
pb_bytes(struct pbuf *p, unsigned num, const void *s, size_t n)
{
	pb_varint(p, (uint64_t)num << 3 | 2);
	pb_varint(p, n);
	pb_raw(p, s, n);
}

static void
pb_int(struct pbuf *p, unsigned num, uint64_t v)
{
	pb_varint(p, (uint64_t)num << 3);
	pb_varint(p, v);
}

static void
piece(struct pbuf *m, const char *s, float score, int type)
{
	struct pbuf sub = { 0 };
	uint32_t u;
	uint8_t f[5];

	pb_bytes(&sub, 1, s, strlen(s));
	memcpy(&u, &score, 4);
	f[0] = 2 << 3 | 5;
	f[1] = (uint8_t)u;
	f[2] = (uint8_t)(u >> 8);
	f[3] = (uint8_t)(u >> 16);
	f[4] = (uint8_t)(u >> 24);
	pb_raw(&sub, f, 5);
	pb_int(&sub, 3, (uint64_t)type);
	pb_bytes(m, 1, sub.b, sub.n);
	free(sub.b);
}

/* A charsmap of one rule, "A" -> "a", as a darts-clone double array. */
static void
charsmap(struct pbuf *m, int dummy, int rmws)
{
	static uint32_t u[0x142];
	uint8_t blob[4 + sizeof u + 2];
	struct pbuf sub = { 0 };
	size_t i;

	u[0] = 0x100u << 10;				/* root: children at 0x100 ^ c */
	u[0x141] = 1u << 10 | 1u << 8 | 0x41;		/* 'A', has a leaf at 0x140 */
	u[0x140] = 0x80000000u | 0;			/* value: offset 0 */
	blob[0] = (uint8_t)sizeof u;
	blob[1] = (uint8_t)(sizeof u >> 8);
	blob[2] = blob[3] = 0;
	for (i = 0; i < 0x142; i++) {
		blob[4 + 4 * i] = (uint8_t)u[i];
		blob[5 + 4 * i] = (uint8_t)(u[i] >> 8);
		blob[6 + 4 * i] = (uint8_t)(u[i] >> 16);
		blob[7 + 4 * i] = (uint8_t)(u[i] >> 24);
	}
	memcpy(blob + 4 + sizeof u, "a", 2);
	pb_bytes(&sub, 2, blob, sizeof blob);
	pb_int(&sub, 3, (uint64_t)dummy);
	pb_int(&sub, 4, (uint64_t)rmws);
	pb_bytes(m, 3, sub.b, sub.n);
	free(sub.b);
}

static struct spm_model *builtin[4];

static struct spm_model *
make(int type)
{
	static const char *const words[] = {
		SP, SP "a", SP "the", "the", "th", "e", "a", "b", "ab", "ba",
		SP "b", "c", "d", "cd", SP SP, "x", "y", "\xc3\xa9", "\xe4\xb8\xad",
		"t", "h", SP "t", "he", "er", "in", "on", SP "o", "n", "o", "r",
	};
	struct pbuf m = { 0 }, tr = { 0 };
	char err[RP_ERRMAX], b[8];
	struct spm_model *r;
	size_t i;
	int k;

	piece(&m, "<unk>", 0, 2);
	piece(&m, "<s>", 0, 3);
	piece(&m, "</s>", 0, 3);
	if (type == 2)
		for (k = 0; k < 256; k++) {
			snprintf(b, sizeof b, "<0x%02X>", k);
			piece(&m, b, 0, 6);
		}
	for (i = 0; i < sizeof words / sizeof *words; i++)
		piece(&m, words[i], -(float)(i % 7) - 0.5f * (float)(i % 3), 1);
	piece(&m, "<mask>", 0, 4);
	piece(&m, "xy", 0, 4);
	piece(&m, "dd", -1, 5);
	pb_int(&tr, 3, (uint64_t)(type == 2 ? 2 : type == 3 ? 1 : type + 1));
	if (type == 2)
		pb_int(&tr, 35, 1);
	if (type == 3)
		pb_int(&tr, 24, 1);
	pb_bytes(&m, 2, tr.b, tr.n);
	charsmap(&m, type != 1, type != 1);
	r = spm_model_parse(m.b, m.n, type == 0 ? 3 : 0, err, sizeof err);
	free(m.b);
	free(tr.b);
	if (r == NULL) {
		fprintf(stderr, "built-in model %d: %s\n", type, err);
		abort();
	}
	return r;
}

static void
run(const struct spm_model *m, unsigned opt, const uint8_t *p, size_t n)
{
	static const char *const xs[] = { "", "bos:eos", "reverse:unk", "eos:bos:reverse" };
	enum spm_extra x[SPM_MAX_EXTRA];
	char err[RP_ERRMAX], *out = NULL;
	struct spm_enc *a = spm_enc_new(m), *w = spm_enc_new(m);
	size_t start, i, cap = 0, size = spm_size(m), len;
	int nx = spm_parse_extra(m, xs[opt & 3], x, err, sizeof err);
	int32_t *raw;
	long k, kw;
	struct spm_special sp[SPM_MEGATRON_SPECIALS];
	size_t nsp = 0;

	check(a != NULL && w != NULL);
	if (opt & 0x40) {
		/* Megatron's specials: their ids may lie past the model's. */
		nsp = spm_megatron_specials(m, sp);
		check(nsp > 0 && nsp <= SPM_MEGATRON_SPECIALS);
		check(spm_enc_set_specials(a, sp, nsp) == 0 &&
		    spm_enc_set_specials(w, sp, nsp) == 0);
		for (i = 0; i < nsp; i++)
			if ((size_t)sp[i].id >= size)
				size = (size_t)sp[i].id + 1;
	}
	if (nx > 0) {
		spm_enc_set_extra(a, x, nx);
		spm_enc_set_extra(w, x, nx);
	}
	spm_enc_whole_lines(w);
	for (start = 0; start <= n;) {
		const uint8_t *nl = memchr(p + start, '\n', n - start);
		size_t end = nl ? (size_t)(nl - p) : n;
		const struct spm_tok *t, *tw;
		const char *s;

		k = spm_encode(a, p + start, end - start);
		kw = spm_encode(w, p + start, end - start);
		check(k == kw);
		if (k >= 0) {
			int32_t *ids = malloc((size_t)k * sizeof *ids + 1);

			t = spm_tokens(a);
			tw = spm_tokens(w);
			check(ids != NULL);
			for (i = 0; i < (size_t)k; i++) {
				check(t[i].id == tw[i].id && t[i].len == tw[i].len &&
				    memcmp(t[i].s, tw[i].s, t[i].len) == 0);
				check(t[i].id >= 0 && (size_t)t[i].id < size);
				ids[i] = t[i].id;
				if ((size_t)t[i].id >= spm_size(m))
					ids[i] = 0;
			}
			check(spm_decode_ids(m, ids, (size_t)k, &out, &cap,
			    err, sizeof err) >= 0);
			free(ids);
		}
		s = spm_normalize(a, p + start, end - start, &len);
		check(s != NULL && strlen(s) <= len);
		if (nl == NULL)
			break;
		start = end + 1;
	}
	/* Arbitrary ids, some out of range; the bytes as pieces. */
	if (n / 2 > 0 && (raw = malloc(n / 2 * sizeof *raw)) != NULL) {
		int bad = 0;

		for (i = 0; i < n / 2; i++) {
			raw[i] = (int32_t)(p[2 * i] | p[2 * i + 1] << 8) - 2;
			bad |= raw[i] < 0 || (size_t)raw[i] >= spm_size(m);
		}
		k = spm_decode_ids(m, raw, n / 2, &out, &cap, err, sizeof err);
		check(bad ? k == -1 : k >= 0);
		free(raw);
	}
	{
		const char *pc[64];
		size_t lens[64], np = 0;

		for (start = 0; start < n && np < 64; ) {
			const uint8_t *sp = memchr(p + start, ' ', n - start);
			size_t end = sp ? (size_t)(sp - p) : n;

			pc[np] = (const char *)p + start;
			lens[np++] = end - start;
			start = end + 1;
		}
		check(spm_decode_pieces(m, pc, lens, np, &out, &cap,
		    err, sizeof err) >= 0);
	}
	free(out);
	spm_enc_free(a);
	spm_enc_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[RP_ERRMAX];
	struct spm_model *m;
	size_t len;
	unsigned opt;

	if (builtin[0] == NULL) {
		int t;

		for (t = 0; t < 4; t++)
			builtin[t] = make(t);
	}
	if (size < 3)
		return 0;
	opt = data[0];
	len = (size_t)data[1] | (size_t)data[2] << 8;
	data += 3;
	size -= 3;
	if (len > size)
		len = size;
	if (len == 0) {
		run(builtin[(opt >> 2) & 3], opt, data, size);
		return 0;
	}
	m = spm_model_parse(data, len, (opt >> 4) & 3, err, sizeof err);
	if (m == NULL) {
		check(err[0] != '\0');
		return 0;
	}
	run(m, opt, data + len, size - len);
	spm_model_free(m);
	return 0;
}
