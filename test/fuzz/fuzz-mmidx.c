/*
 * libFuzzer target for the .idx reader and the .bin checks: the input
 * is a 1-byte layout selector, a 2-byte .idx length, the .idx bytes and
 * the .bin bytes.  Every sequence the reader hands out is read whole;
 * verify, the token loads and a merge into /dev/null run on whatever opens.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmidx.h"

static int devnull = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum mmidx_layout lay[] = { MMIDX_AUTO, MMIDX_FAIRSEQ,
	    MMIDX_MEGATRON, MMIDX_MEGATRON_MM };
	char err[256];
	size_t il;
	uint8_t *idx, *bin;
	struct mmidx *m;
	volatile uint64_t sink = 0;

	if (size < 3)
		return 0;
	if (devnull == -1)
		devnull = open("/dev/null", O_WRONLY);
	il = (size_t)(data[1] | data[2] << 8);
	if (il > size - 3)
		il = size - 3;
	/* Copies of exact size, so reads past either end are caught. */
	idx = malloc(il ? il : 1);
	bin = malloc(size - 3 - il ? size - 3 - il : 1);
	memcpy(idx, data + 3, il);
	memcpy(bin, data + 3 + il, size - 3 - il);
	m = mmidx_open_mem(idx, il, bin, size - 3 - il, "fuzz", lay[data[0] & 3],
	    err, sizeof err);
	if (m != NULL) {
		enum mmidx_dtype t = mmidx_dtype(m);
		uint64_t n = mmidx_count(m);

		for (uint64_t i = 0; i < n && i < 4096; i++) {
			const uint8_t *p;
			uint64_t k, len;

			sink += (uint64_t)mmidx_mode(m, i);
			if (mmidx_seq(m, i, &p, &len) == -1)
				continue;
			for (k = 0; k < len; k++) {
				double d = mmidx_load_f64(t, p, k);

				sink += (uint64_t)mmidx_load_i64(t, p, k);
				sink += d == d ? (uint64_t)(d > 0 ? 1 : 0) : 2;
			}
		}
		for (uint64_t j = 0; j < mmidx_doc_count(m) && j < 4096; j++)
			sink += (uint64_t)mmidx_doc_index(m, j);
		if (mmidx_verify(m) == 0) {
			struct mmidx_builder *b = mmidx_builder_new(devnull,
			    mmidx_layout(m), t, 0, err, sizeof err);
			if (b != NULL) {
				if (mmidx_append(b, m) == 0 && mmidx_append(b, m) == 0)
					(void)mmidx_finish(b, devnull);
				mmidx_builder_free(b);
			}
		}
		mmidx_close(m);
	}
	free(idx);
	free(bin);
	(void)sink;
	return 0;
}
