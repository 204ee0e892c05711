/*
 * Unit tests for lib/manifest: comment stripping, reading and checking
 * manifests with key paths, checking records, inference.
 */
#include <stdlib.h>
#include <string.h>

#include "example.h"
#include "manifest.h"
#include "tap.h"

static int
refused(const char *text, const char *want)
{
	struct manifest m;
	char err[512];

	if (mf_parse(&m, text, strlen(text), err, sizeof err) == 0) {
		mf_free(&m);
		printf("# accepted: %s\n", text);
		return 0;
	}
	if (strcmp(err, want) != 0) {
		printf("# got: %s\n", err);
		return 0;
	}
	return 1;
}

static void
encode(struct ex_builder *b, struct buf *out)
{
	out->len = 0;
	exb_encode(b, out);
}

int
main(void)
{
	struct manifest m;
	struct mf_infer in;
	struct ex_builder b;
	struct example ex;
	struct buf out = { 0 };
	char err[512], s[128];
	size_t n;
	const char *good =
	    "{ // MNIST\n"
	    " \"compression\": \"ZLIB\", \"allow_var_len\": false,\n"
	    " \"features\": [{\"name\": \"image\", \"dtype\": \"float\", \"shape\": [28, 28.0],\n"
	    "   \"deserialize_type\": \"float\"},\n"
	    "  {\"name\": \"r\", \"dtype\": \"uint16\", \"shape\": [3], \"var_len\": false,\n"
	    "   \"deserialize_type\": \"raw\", \"deserialize_args\": {\"endian\": \"big\", \"len\": 2}}]}\n";
	float img[784];
	int64_t lab = 3;
	struct ex_bytes raw[2] = { { (const uint8_t *)"abcdef", 6 },
	    { (const uint8_t *)"ghijkl", 6 } };

	/* comments: from // to the end of the line, even inside strings */
	strcpy(s, "{\"a\": \"x//y\"}\n// all\n1");
	n = mf_strip_comments(s, strlen(s));
	s[n] = '\0';
	TEST(strcmp(s, "{\"a\": \"x\n\n1") == 0, "// is cut even inside a string");

	TEST(mf_parse(&m, good, strlen(good), err, sizeof err) == 0, "a good manifest reads");
	TEST(m.comp == REC_ZLIB && !m.allow_var_len && m.nfeat == 2,
	    "compression in any case, allow_var_len, features");
	TEST(m.feat[0].dtype == MF_FLOAT32 && m.feat[0].rank == 2 &&
	    m.feat[0].nelem == 784, "float is float32; integral reals are integers");
	TEST(m.feat[1].deser == MF_DS_RAW && m.feat[1].big_endian &&
	    m.feat[1].len == 2, "raw with endian and len");
	TEST(mf_find(&m, "r") == &m.feat[1] && mf_find(&m, "x") == NULL, "mf_find");

	/* records against it */
	exb_init(&b);
	ex_init(&ex);
	memset(img, 0, sizeof img);
	exb_float(&b, "image", img, 784);
	exb_bytes(&b, "r", raw, 2);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE);
	TEST(mf_check_record(&m, &ex, err, sizeof err) == 0, "a fitting record passes");
	exb_reset(&b);
	exb_float(&b, "image", img, 783);
	exb_bytes(&b, "r", raw, 2);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE);
	TEST(mf_check_record(&m, &ex, err, sizeof err) == -1 &&
	    strcmp(err, "feature 'image': 783 values, but its shape wants 784") == 0,
	    "a short list is named: %s", err);
	exb_reset(&b);
	exb_float(&b, "image", img, 784);
	raw[1].n = 5;
	exb_bytes(&b, "r", raw, 2);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE);
	TEST(mf_check_record(&m, &ex, err, sizeof err) == -1 &&
	    strcmp(err, "feature 'r': raw bytes 1 hold 5 bytes, not 6 (uint16 x 3)") == 0,
	    "raw byte counts are dtype x shape: %s", err);
	exb_reset(&b);
	exb_int64(&b, "image", &lab, 1);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_EXAMPLE);
	TEST(mf_check_record(&m, &ex, err, sizeof err) == -1 &&
	    strcmp(err, "feature 'image': an int64 list, but the manifest says a float list (float)") == 0,
	    "kinds are checked: %s", err);
	mf_free(&m);

	/* key paths */
	TEST(refused("[]", "expected a JSON object"), "not an object");
	TEST(refused("{\"compression\": null, \"allow_var_len\": 1, \"features\": []}",
	    "allow_var_len: expected true or false"), "bool type");
	TEST(refused("{\"compression\": null, \"allow_var_len\": false, \"features\": [{\"name\": \"a\", "
	    "\"dtype\": \"int64\", \"shape\": [], \"deserialize_type\": \"int\", \"deserialize_args\": {\"x\": 1}}]}",
	    "features[0].deserialize_args: 'int' takes no arguments"), "args of int");
	TEST(refused("{\"compression\": null, \"allow_var_len\": true, \"features\": [{\"name\": \"a\", "
	    "\"dtype\": \"int64\", \"shape\": [], \"var_len\": true, \"deserialize_type\": \"raw\", "
	    "\"deserialize_args\": {\"endian\": \"little\", \"len\": 2}}]}",
	    "features[0].deserialize_args.len: not allowed with var_len"), "len with var_len");
	TEST(refused("{\"compression\": null, \"allow_var_len\": false, \"features\": [{\"name\": \"a\", "
	    "\"dtype\": \"int64\", \"shape\": [], \"deserialize_type\": \"int\"}, {\"name\": \"a\", "
	    "\"dtype\": \"int64\", \"shape\": [], \"deserialize_type\": \"int\"}]}",
	    "features[1].name: 'a' named twice (also features[0])"), "unique names");
	TEST(refused("{\"compression\": null, \"allow_var_len\": false, \"features\": [{\"name\": \"a\", "
	    "\"dtype\": \"float32\", \"shape\": [], \"deserialize_type\": \"string\"}]}",
	    "features[0].dtype: 'string' features cannot be cast to float32"), "string casts");
	TEST(refused("{\"compression\": null, \"allow_var_len\": false, \"features\": [{\"name\": \"a\", "
	    "\"dtype\": \"int64\", \"shape\": [-1], \"deserialize_type\": \"int\"}]}",
	    "features[0].shape[0]: -1 is below 0"), "negative dimensions");

	/* inference */
	mf_infer_init(&in);
	exb_reset(&b);
	exb_float(&b, "image", img, 784);
	exb_int64(&b, "label", &lab, 1);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO);
	TEST(mf_infer_comp(&in, REC_GZIP, err, sizeof err) == 0 &&
	    mf_infer_add(&in, &ex, "f record 0", err, sizeof err) == 0 &&
	    mf_infer_add(&in, &ex, "f record 1", err, sizeof err) == 0, "two records");
	TEST(mf_infer_comp(&in, REC_NONE, err, sizeof err) == -1 &&
	    strcmp(err, "none-compressed, but the files before are gzip") == 0,
	    "files must agree on compression: %s", err);
	out.len = 0;
	TEST(mf_infer_write(&in, &out, err, sizeof err) == 0, "written");
	TEST(mf_parse(&m, (const char *)out.p, out.len, err, sizeof err) == 0 &&
	    m.comp == REC_GZIP && m.nfeat == 2 && m.feat[0].nelem == 784 &&
	    m.feat[1].rank == 0, "what is inferred reads back");
	exb_reset(&b);
	exb_float(&b, "image", img, 10);
	exb_int64(&b, "label", &lab, 1);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO);
	TEST(mf_infer_add(&in, &ex, "g record 5", err, sizeof err) == -1 &&
	    strcmp(err, "feature 'image': 784 values in f record 0 but 10 in g record 5; "
	    "a fixed-length manifest cannot state it") == 0, "varying lengths: %s", err);
	mf_free(&m);
	mf_infer_free(&in);

	/* records with no features give an empty list (no copy of nothing) */
	mf_infer_init(&in);
	exb_reset(&b);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO);
	TEST(mf_infer_add(&in, &ex, "e record 0", err, sizeof err) == 0, "an empty record");
	out.len = 0;
	TEST(mf_infer_write(&in, &out, err, sizeof err) == 0 &&
	    strstr((const char *)out.p, "\"features\": [\n  ]") != NULL,
	    "its manifest has no features");
	mf_infer_free(&in);

	/* names a manifest cannot hold are refused, not dropped */
	mf_infer_init(&in);
	exb_reset(&b);
	exb_int64(&b, "\xff\xfe", &lab, 1);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO);
	mf_infer_add(&in, &ex, "e record 0", err, sizeof err);
	out.len = 0;
	TEST(mf_infer_write(&in, &out, err, sizeof err) == -1 &&
	    strstr(err, "a manifest cannot name it (not UTF-8)") != NULL,
	    "a name that is not UTF-8: %s", err);
	mf_infer_free(&in);
	mf_infer_init(&in);
	exb_reset(&b);
	exb_int64(&b, "", &lab, 1);
	encode(&b, &out);
	ex_decode(&ex, out.p, out.len, EX_TYPE_AUTO);
	mf_infer_add(&in, &ex, "e record 0", err, sizeof err);
	out.len = 0;
	TEST(mf_infer_write(&in, &out, err, sizeof err) == -1 &&
	    strstr(err, "(empty)") != NULL, "an empty name: %s", err);
	mf_infer_free(&in);
	exb_free(&b);
	ex_free(&ex);
	rp_buf_free(&out);
	return tap_done();
}
