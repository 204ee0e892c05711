/*
 * libFuzzer target for dataset manifests: the input up to its first NUL
 * byte is a manifest (comments allowed), the rest an Example or
 * SequenceExample payload.  A manifest read must hold what it was
 * checked for (unique names, shapes that multiply to nelem, raw only for
 * numbers); a refused one must say why; a record is checked against it
 * and fed to inference, whose output must read back as a manifest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t mlen = nul ? (size_t)(nul - data) : size;
	struct manifest m, back;
	struct mf_infer in;
	struct example ex;
	struct buf out = { 0 };
	char err[512];

	if (mf_parse(&m, (const char *)data, mlen, err, sizeof err) == -1) {
		if (err[0] == '\0' || m.nfeat != 0 || m.feat != NULL)
			abort();
	} else {
		for (size_t i = 0; i < m.nfeat; i++) {
			const struct mf_feature *f = &m.feat[i];
			uint64_t n = 1;

			for (int k = 0; k < f->rank; k++)
				n *= (uint64_t)f->shape[k];
			if (n != f->nelem || f->len < 1 ||
			    (f->deser == MF_DS_RAW && f->dtype == MF_STRING) ||
			    (f->var_len && !m.allow_var_len) ||
			    mf_find(&m, f->name) != f)
				abort();
		}
	}
	if (nul == NULL) {
		mf_free(&m);
		return 0;
	}
	ex_init(&ex);
	mf_infer_init(&in);
	if (ex_decode(&ex, nul + 1, size - mlen - 1, EX_TYPE_AUTO) == 0) {
		if (m.feat != NULL)
			(void)mf_check_record(&m, &ex, err, sizeof err);
		if (mf_infer_comp(&in, REC_NONE, err, sizeof err) == 0 &&
		    mf_infer_add(&in, &ex, "r0", err, sizeof err) == 0 &&
		    mf_infer_add(&in, &ex, "r1", err, sizeof err) == 0 &&
		    mf_infer_write(&in, &out, err, sizeof err) == 0 &&
		    rp_buf_putc(&out, '\0') == 0) {
			out.len--;	/* a string for strstr() */
			/* an inferred manifest reads back and fits its record */
			if (mf_parse(&back, (const char *)out.p, out.len, err,
			    sizeof err) == -1) {
				/* names with "//" are cut by the comment rule */
				if (strstr((const char *)out.p, "//") == NULL &&
				    memchr(out.p, '\0', out.len) == NULL)
					abort();
			} else {
				if (mf_check_record(&back, &ex, err, sizeof err) == -1)
					abort();
				mf_free(&back);
			}
		}
	}
	rp_buf_free(&out);
	mf_infer_free(&in);
	ex_free(&ex);
	mf_free(&m);
	return 0;
}
