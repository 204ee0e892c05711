/*
 * Fuzz the WordPiece vocab loader, tokenizer and decoder.  Input: one
 * byte of options, two bytes of vocab length L, L bytes of vocab.txt,
 * then text whose lines are encoded; the text's bytes are also read as
 * ids (in and out of range) for the decoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h"
#include "wordpiece.h"

/* A fixed vocab for inputs too short to carry one. */
static const char base_vocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\nb\n##b\nab\n.\n"
    "\xce\xb1\n##\xcf\x82\n\xe4\xb8\xad\ni\n##\xcc\x87\n";

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
run(const struct wp_vocab *v, unsigned opt, const uint8_t *p, size_t n)
{
	struct wp_opts o = WP_OPTS_INIT;
	struct wp_tok *t;
	int64_t *ids = NULL, *raw = NULL;
	size_t cap = 0, ocap = 0, i, start, nraw;
	char *out = NULL, err[WP_ERRMAX];
	long k, d;

	o.lower = opt & 1;
	o.strip_accents = (int)((opt >> 1) % 3) - 1;
	o.rules = (opt & 8) ? WP_RULES_ELECTRA : WP_RULES_BERT;
	o.ignore_invalid = (opt >> 4) & 1;
	if ((t = wp_tok_new(v, &o)) == NULL)
		return;
	for (start = 0; start <= n;) {
		const uint8_t *nl = memchr(p + start, '\n', n - start);
		size_t end = nl ? (size_t)(nl - p) : n;

		k = wp_encode(t, p + start, end - start, &ids, &cap);
		if (k < 0) {
			/* only bad UTF-8 (when not ignored) or a missing [UNK] */
			check(wp_strerror(t)[0] != '\0');
			if (strncmp(wp_strerror(t), "invalid UTF-8", 13) == 0) {
				check(!o.ignore_invalid);
				check(wp_error_offset(t) < end - start);
				check(uni_utf8_valid_prefix(p + start, end - start) ==
				    wp_error_offset(t));
			} else
				check(wp_special_id(v, WP_UNK) < 0);
		} else {
			check(o.ignore_invalid ||
			    uni_utf8_valid_prefix(p + start, end - start) == end - start);
			for (i = 0; i < (size_t)k; i++)
				check(wp_piece(v, ids[i], NULL) != NULL);
			d = wp_decode(v, ids, (size_t)k, &out, &ocap,
			    err, sizeof err);
			check(d >= 0 && strlen(out) == (size_t)d);
		}
		if (nl == NULL)
			break;
		start = end + 1;
	}
	/* Arbitrary ids, some out of range. */
	nraw = n / 2;
	if (nraw > 0 && (raw = malloc(nraw * sizeof *raw)) != NULL) {
		int bad = 0;

		for (i = 0; i < nraw; i++) {
			raw[i] = (int64_t)(p[2 * i] | p[2 * i + 1] << 8) - 2;
			if (raw[i] < 0 || (size_t)raw[i] >= wp_vocab_size(v))
				bad = 1;
		}
		d = wp_decode(v, raw, nraw, &out, &ocap, err, sizeof err);
		check(bad ? d == -1 : d >= 0);
		free(raw);
	}
	free(out);
	free(ids);
	wp_tok_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wp_vocab *v;
	char err[WP_ERRMAX];
	unsigned opt;
	size_t vl, i;

	if (size < 3) {
		v = wp_vocab_parse((const uint8_t *)base_vocab, sizeof base_vocab - 1,
		    err, sizeof err);
		if (v != NULL)
			run(v, size ? data[0] : 0, data, size);
		wp_vocab_free(v);
		return 0;
	}
	opt = data[0];
	vl = (size_t)(data[1] | data[2] << 8);
	data += 3;
	size -= 3;
	if (vl > size)
		vl = size;
	if (opt & 0x80) {
		v = wp_vocab_parse((const uint8_t *)base_vocab, sizeof base_vocab - 1,
		    err, sizeof err);
		vl = 0;
	} else
		v = wp_vocab_parse(data, vl, err, sizeof err);
	if (v == NULL) {
		check(err[0] != '\0');
		return 0;
	}
	for (i = 0; i < wp_vocab_size(v); i++) {
		size_t len;
		const char *s = wp_piece(v, (int64_t)i, &len);

		/* the last line holding a token gives its id */
		check(s != NULL && s[len] == '\0');
		check(wp_vocab_id(v, s, len) >= (long)i);
		check(strcmp(wp_piece(v, wp_vocab_id(v, s, len), NULL), s) == 0 ||
		    memchr(s, '\0', len) != NULL);
	}
	run(v, opt, data + vl, size - vl);
	wp_vocab_free(v);
	return 0;
}
