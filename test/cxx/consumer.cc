// A C++ program using librecpipe as an installed product would: every
// public header included as <recpipe/...>, built with the flags of
// 'pkg-config recpipe'.  Each header's functions must link from C++
// (their declarations are extern "C"), and the library's version must
// be the headers' version.
#include <recpipe/batch.h>
#include <recpipe/buf.h>
#include <recpipe/crc32c.h>
#include <recpipe/example.h>
#include <recpipe/exjson.h>
#include <recpipe/fairseq_dict.h>
#include <recpipe/manifest.h>
#include <recpipe/mmidx.h>
#include <recpipe/record.h>
#include <recpipe/seqio.h>
#include <recpipe/subword.h>
#include <recpipe/version.h>
#include <recpipe/wordpiece.h>

#include <cstdio>
#include <cstring>
#include <string>

// One function of each header, taken by address: a declaration without
// C linkage would leave a C++-mangled name undefined at link time.
static const void *const linked[] = {
	reinterpret_cast<const void *>(&batch_by_size),
	reinterpret_cast<const void *>(&rp_buf_append),
	reinterpret_cast<const void *>(&crc32c_value),
	reinterpret_cast<const void *>(&ex_decode),
	reinterpret_cast<const void *>(&exjson_write),
	reinterpret_cast<const void *>(&fqd_next_word),
	reinterpret_cast<const void *>(&mf_dtype_parse),
	reinterpret_cast<const void *>(&mmidx_dtype_parse),
	reinterpret_cast<const void *>(&rec_reader_open),
	reinterpret_cast<const void *>(&sq_kind_parse),
	reinterpret_cast<const void *>(&sw_strip),
	reinterpret_cast<const void *>(&wp_vocab_parse),
	reinterpret_cast<const void *>(&recpipe_version),
};

int
main()
{
	std::string want = std::to_string(RECPIPE_VERSION_MAJOR) + "." +
	    std::to_string(RECPIPE_VERSION_MINOR) + "." +
	    std::to_string(RECPIPE_VERSION_PATCH);
	struct ex_builder b;
	struct example ex;
	struct buf out = {};
	const int64_t ids[] = { 7, 8, 9 };
	const struct ex_feature *f;
	int ok = 1;

	for (const void *p : linked)
		ok &= p != nullptr;
	if (want != RECPIPE_VERSION || std::strcmp(recpipe_version(), RECPIPE_VERSION) != 0) {
		std::fprintf(stderr, "version: headers %s (%s), library %s\n",
		    RECPIPE_VERSION, want.c_str(), recpipe_version());
		ok = 0;
	}
	// An Example through the encoder and the decoder.
	exb_init(&b);
	ex_init(&ex);
	if (exb_int64(&b, "targets", ids, 3) == -1 || exb_encode(&b, &out) == -1 ||
	    ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE) == -1 ||
	    (f = ex_get(&ex, "targets")) == nullptr || f->n != 3 || f->i64[2] != 9) {
		std::fprintf(stderr, "example round trip failed\n");
		ok = 0;
	}
	ex_free(&ex);
	exb_free(&b);
	rp_buf_free(&out);
	std::printf("%s %s\n", ok ? "ok" : "not ok", recpipe_version());
	return ok ? 0 : 1;
}
