/*
 * Fuzz the reader of GPT-2's encoder.json and vocab.bpe (and the check
 * that they agree), and the encoder over what loads.  Input: an option
 * byte (0x40: encoder.json starts with the 256 single bytes at ids
 * 0..255 in GPT-2's order, and the input gives the rest of the object
 * after them; 0x80: special tokens allowed), the text's length T (2
 * bytes, little-endian), T bytes of text (cut to its longest UTF-8
 * prefix), then encoder.json, a NUL byte, and vocab.bpe.  Models that
 * load must encode the text with and without the cache to the same
 * ids, and those ids must give back the text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "buf.h"
#include "errmsg.h"
#include "unicode.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

static int
self_byte(unsigned b)
{
	return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

/* "{" and the 256 bytes in encoder.json's spelling, ids 0..255, ", ". */
static void
byte_entries(struct buf *j)
{
	unsigned pass, b, n, id = 0, cp;
	uint8_t u[4];
	char num[24];

	check(rp_buf_puts(j, "{") == 0);
	for (pass = 0; pass < 2; pass++)
		for (b = 0, n = 0; b < 256; b++) {
			cp = self_byte(b) ? b : 256 + n++;
			if ((!self_byte(b)) != (int)pass)
				continue;
			check(rp_buf_puts(j, "\"") == 0);
			if (cp == '"' || cp == '\\')
				check(rp_buf_putc(j, '\\') == 0);
			check(rp_buf_append(j, u, (size_t)uni_utf8_encode(cp, u)) == 0);
			snprintf(num, sizeof num, "\": %u, ", id++);
			check(rp_buf_puts(j, num) == 0);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[RP_ERRMAX];
	struct bpe_model *m;
	struct bpe_enc *a, *b;
	struct buf j = { 0 }, d = { 0 };
	const uint8_t *text, *nul;
	size_t tn, i, len, bad;
	int64_t *ids;
	uint8_t opt;
	long k, l;

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
	if ((nul = memchr(data, '\0', size)) == NULL)
		return 0;
	if (opt & 0x40)
		byte_entries(&j);
	check(rp_buf_append(&j, data, (size_t)(nul - data)) == 0);
	err[0] = '\0';
	m = bpe_parse_gpt2(j.p ? j.p : (const uint8_t *)"", j.len, nul + 1,
	    size - (size_t)(nul + 1 - data), err, sizeof err);
	rp_buf_free(&j);
	if (m == NULL) {
		check(err[0] != '\0' && memchr(err, '\0', sizeof err) != NULL);
		return 0;
	}
	check(bpe_eot_id(m) < bpe_size(m));
	check(bpe_token(m, bpe_eot_id(m), &len) != NULL && len == 13);
	a = bpe_enc_new(m);
	b = bpe_enc_new(m);
	check(a != NULL && b != NULL);
	bpe_enc_no_cache(b);
	bpe_enc_allow_special(a, (opt & 0x80) != 0);
	bpe_enc_allow_special(b, (opt & 0x80) != 0);
	k = bpe_encode(a, text, tn);
	l = bpe_encode(b, text, tn);
	check(k >= 0 && k == l);
	check(memcmp(bpe_ids(a), bpe_ids(b), (size_t)k * sizeof(uint32_t)) == 0);
	check((ids = malloc(((size_t)k + 1) * sizeof(*ids))) != NULL);
	for (i = 0; i < (size_t)k; i++) {
		ids[i] = bpe_ids(a)[i];
		check(bpe_piece(m, ids[i], &len) != NULL);
	}
	check(bpe_decode(m, ids, (size_t)k, &d, &bad) == 0);
	check(d.len == tn && (tn == 0 || memcmp(d.p, text, tn) == 0));
	free(ids);
	rp_buf_free(&d);
	bpe_enc_free(a);
	bpe_enc_free(b);
	bpe_model_free(m);
	return 0;
}
