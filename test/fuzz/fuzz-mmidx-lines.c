/*
 * Differential libFuzzer target for the index-line reader
 * (mmidx_lines_*): the input, fed in pieces whose sizes and output
 * room come from its first byte, must give the same indices, the same
 * bad line and the same message text as a plain line-by-line reading.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmidx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The rule, one line at a time: 1 good (*v), 0 bad. */
static int
ref_line(const uint8_t *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;

	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r'))
		len--;
	if (len == 0)
		return 0;
	for (size_t k = 0; k < len; k++) {
		if (s[k] < '0' || s[k] > '9' || x > (UINT64_MAX - 9) / 10)
			return 0;
		x = x * 10 + (uint64_t)(s[k] - '0');
	}
	*v = x;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmidx_lines L;
	uint64_t *want, *got, v;
	size_t nwant = 0, ngot = 0, off = 0, step, room, badlen = 0, tl;
	uint64_t badline = 0, lineno = 0;
	const uint8_t *badtext = NULL, *p, *end;
	const char *t;
	int bad;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] & 0x1f) + 1;
	room = (size_t)(data[0] >> 5) + 1;
	data++;
	size--;
	want = malloc((size + 1) * sizeof *want);
	got = malloc((size + 1) * sizeof *got);
	/* The plain reading. */
	for (p = data, end = data + size; p < end; ) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		if (!ref_line(p, len, &want[nwant])) {
			badline = lineno;
			badtext = p;
			badlen = len;
			while (badlen > 0 && (p[badlen - 1] == ' ' ||
			    p[badlen - 1] == '\r'))
				badlen--;
			if (badlen > MMIDX_LINE_HEAD)
				badlen = MMIDX_LINE_HEAD;
			break;
		}
		nwant++;
		p += len + (nl != NULL);
	}
	/* The reader, in pieces. */
	mmidx_lines_init(&L);
	bad = 0;
	while (off < size && !bad) {
		size_t piece = size - off > step ? step : size - off, used;
		size_t k = mmidx_lines_parse(&L, (const char *)data + off, piece,
		    &used, got + ngot, room);

		if (used > piece || k > room)
			abort();
		if (used == 0 && k == 0 && !mmidx_lines_bad(&L, &t, &tl))
			abort();	/* no progress */
		ngot += k;
		off += used;
		bad = mmidx_lines_bad(&L, &t, &tl);
	}
	if (!bad) {
		if (mmidx_lines_end(&L, &v) == 1)
			got[ngot++] = v;
		bad = mmidx_lines_bad(&L, &t, &tl);
	}
	if (ngot != nwant || memcmp(got, want, ngot * sizeof *got) != 0)
		abort();
	if (bad != (badtext != NULL))
		abort();
	if (bad && (L.lineno != badline || tl != badlen ||
	    memcmp(t, badtext, tl) != 0))
		abort();
	free(want);
	free(got);
	return 0;
}
