/*
 * Fuzz subword encoding and decoding.  The input is read as text lines
 * (TensorFlow's rules); every valid line is encoded with a vocabulary
 * built once from a small corpus and must decode back to itself (the
 * encoding is invertible).  The input's bytes are also decoded as ids,
 * in and out of range, and unescaped as an escaped token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "subword.h"

static const char corpus[] =
    "The quick brown fox jumps over the lazy dog.\n"
    "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xd0\xbf\xd1\x80\xd0\xb8"
    "\xd0\xb2\xd0\xb5\xd1\x82 x_y a\\b 12 \xf0\x9f\x98\x80!\n"
    "  spaces   and\ttabs \xe2\x80\x83 \xef\xbb\xbf" "bom\n";

static struct sw_vocab *v;

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
setup(void)
{
	struct sw_counts *c = sw_counts_new();
	struct sw_build_opts o;
	const char *s = corpus, *nl;

	check(c != NULL);
	while ((nl = strchr(s, '\n')) != NULL) {
		check(sw_counts_add_text(c, (const uint8_t *)s, (size_t)(nl - s)) == 0);
		s = nl + 1;
	}
	sw_build_opts_init(&o);
	v = sw_build(c, 1, &o);
	check(v != NULL);
	sw_counts_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	struct sw_lines *r;
	struct sw_err e;
	struct buf d = { 0 }, u = { 0 };
	const uint8_t *line;
	int32_t *ids = NULL;
	int64_t *id64 = NULL;
	size_t len, nids, cap = 0, i;
	uint8_t *copy;
	int nl, rc;

	if (v == NULL)
		setup();
	copy = malloc(n ? n : 1);
	check(copy != NULL);
	if (n > 0)
		memcpy(copy, p, n);
	r = sw_lines_open_buf(copy, n);
	check(r != NULL);
	while ((rc = sw_lines_next(r, &line, &len, &nl, &e)) == 1) {
		nids = 0;
		check(sw_encode(v, line, len, &ids, &nids, &cap, &e) == 0);
		id64 = realloc(id64, (nids ? nids : 1) * sizeof(*id64));
		check(id64 != NULL);
		for (i = 0; i < nids; i++)
			id64[i] = ids[i];
		d.len = 0;
		check(sw_decode(v, id64, nids, 0, &d) == 0);
		check(d.len == len && (len == 0 || memcmp(d.p, line, len) == 0));
		sw_strip(&line, &len);
	}
	check(rc == 0 || rc == -2);
	sw_lines_free(r);

	/* Arbitrary ids: 4 bytes each, signed. */
	id64 = realloc(id64, (n / 4 + 1) * sizeof(*id64));
	check(id64 != NULL);
	for (i = 0; i + 4 <= n; i += 4)
		id64[i / 4] = (int32_t)((uint32_t)p[i] | (uint32_t)p[i + 1] << 8 |
		    (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24) % 4096;
	d.len = 0;
	check(sw_decode(v, id64, n / 4, n & 1, &d) == 0);
	check(sw_unescape(p, n, &u) == 0);
	free(ids);
	free(id64);
	free(d.p);
	free(u.p);
	return 0;
}
