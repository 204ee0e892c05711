/*
 * libFuzzer target for batch-sample loader configurations: the input up
 * to its first NUL byte is a loader configuration, the rest a manifest
 * to bind it to.  Besides not crashing, a refusal must say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t clen = nul ? (size_t)(nul - data) : size;
	struct ld_config *c;
	struct manifest m;
	char err[512];

	if ((c = ld_config_parse((const char *)data, clen, err, sizeof err)) == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	if (ld_config_dataset(c) == NULL)
		abort();
	if (nul != NULL && mf_parse(&m, (const char *)nul + 1, size - clen - 1,
	    err, sizeof err) == 0) {
		if (ld_config_bind(c, &m, err, sizeof err) == -1 && err[0] == '\0')
			abort();
		mf_free(&m);
	}
	ld_config_free(c);
	return 0;
}
