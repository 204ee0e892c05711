/*
 * Fuzz the reader of tiktoken's rank files and the encoder over what
 * it loads.  Input: an option byte (its low bits pick the encoding,
 * 0x40 puts the 256 single bytes at ranks 0..255 before the file, 0x80
 * allows special tokens), the text's length T (2 bytes, little-endian),
 * T bytes of text (cut to its longest UTF-8 prefix), then the file.
 * A file that loads must encode the text with and without the cache to
 * the same ids, every id having bytes that together give back the text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "buf.h"
#include "errmsg.h"
#include "exjson.h"
#include "unicode.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* Encode p[0..n) both ways; the ids decode to the text. */
static void
encode_check(const struct bpe_model *m, const uint8_t *p, size_t n, int special)
{
	struct bpe_enc *a = bpe_enc_new(m), *b = bpe_enc_new(m);
	struct buf d = { 0 };
	int64_t *ids;
	size_t i, bad, len;
	long k, l;
	int rep;

	check(a != NULL && b != NULL);
	bpe_enc_no_cache(b);
	bpe_enc_allow_special(a, special);
	bpe_enc_allow_special(b, special);
	for (rep = 0; rep < 2; rep++) {		/* the second from the cache */
		k = bpe_encode(a, p, n);
		l = bpe_encode(b, p, n);
		check(k >= 0 && k == l);
		check(memcmp(bpe_ids(a), bpe_ids(b), (size_t)k * sizeof(uint32_t)) == 0);
	}
	check((ids = malloc(((size_t)k + 1) * sizeof(*ids))) != NULL);
	for (i = 0; i < (size_t)k; i++) {
		ids[i] = bpe_ids(a)[i];
		check(bpe_ids(a)[i] < bpe_size(m));
		check(bpe_piece(m, ids[i], &len) != NULL);
	}
	check(bpe_decode(m, ids, (size_t)k, &d, &bad) == 0);
	check(d.len == n && (n == 0 || memcmp(d.p, p, n) == 0));
	free(ids);
	rp_buf_free(&d);
	bpe_enc_free(a);
	bpe_enc_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[RP_ERRMAX], line[32];
	struct bpe_model *m;
	struct buf f = { 0 };
	size_t tn, i, len;
	const uint8_t *text;
	uint8_t opt, byte;
	char *e;

	if (size < 3)
		return 0;
	opt = data[0];
	tn = (size_t)data[1] | (size_t)data[2] << 8;
	data += 3;
	size -= 3;
	if (tn > size)
		tn = size;
	text = data;
	data += tn;
	size -= tn;
	tn = uni_utf8_valid_prefix(text, tn);
	if (opt & 0x40)
		for (i = 0; i < 256; i++) {
			byte = (uint8_t)i;
			e = exjson_base64(&byte, 1, line);
			snprintf(e, sizeof line - (size_t)(e - line), " %zu\n", i);
			check(rp_buf_puts(&f, line) == 0);
		}
	check(rp_buf_append(&f, data, size) == 0);
	err[0] = '\0';
	m = bpe_parse_tiktoken(f.p ? f.p : (const uint8_t *)"", f.len,
	    (enum bpe_encoding)((opt & 0x3f) % 6), err, sizeof err);
	rp_buf_free(&f);
	if (m == NULL) {
		check(err[0] != '\0' && memchr(err, '\0', sizeof err) != NULL);
		return 0;
	}
	check(bpe_eot_id(m) < bpe_size(m));
	check(bpe_token(m, bpe_eot_id(m), &len) != NULL && len == 13);
	check(bpe_token(m, -1, &len) == NULL);
	check(bpe_token(m, (int64_t)bpe_size(m), &len) == NULL);
	encode_check(m, text, tn, (opt & 0x80) != 0);
	bpe_model_free(m);
	return 0;
}
