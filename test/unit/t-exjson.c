/*
 * exjson: float and int64 text, base64, UTF-8, escaping, the canonical
 * and flat writers, the reader in both forms, round trips, and the
 * messages for malformed input.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "exjson.h"
#include "tap.h"

static char text[4096];

static const char *
fmtf(float v)
{
	static char s[EXJSON_FLOAT_MAX];

	exjson_format_float(v, s);
	return s;
}

static const char *
fmti(int64_t v)
{
	static char s[32];

	*exjson_format_i64(v, s) = '\0';
	return s;
}

/* Write ex with flags; the text (or "ERR: message"). */
static const char *
write_ex(const struct example *ex, unsigned flags)
{
	struct exjson j;
	struct buf o = { 0 };

	exjson_init(&j, flags);
	if (exjson_write(&j, ex, &o) == -1)
		snprintf(text, sizeof(text), "ERR: %s", exjson_strerror(&j));
	else
		snprintf(text, sizeof(text), "%.*s", (int)o.len, (const char *)o.p);
	rp_buf_free(&o);
	exjson_free(&j);
	return text;
}

/*
 * Parse 'line' (either form), encode, decode the payload again (as the
 * parsed type) and write it with 'flags'.  Returns the text, or "ERR: ...".
 */
static const char *
reread(const char *line, enum ex_type type, unsigned flags)
{
	struct exjson j, k;
	struct buf rec = { 0 }, o = { 0 };
	const struct example *ex;

	exjson_init(&j, 0);
	exjson_init(&k, flags);
	if (exjson_parse(&j, line, strlen(line), type, &rec) == -1)
		snprintf(text, sizeof(text), "ERR: %s", exjson_strerror(&j));
	else {
		ex = exjson_example(&j);
		if (exjson_payload(&k, rec.p, rec.len,
		    ex->seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE, &o) == -1)
			snprintf(text, sizeof(text), "ERR: %s", exjson_strerror(&k));
		else
			snprintf(text, sizeof(text), "%.*s", (int)o.len, (const char *)o.p);
	}
	rp_buf_free(&rec);
	rp_buf_free(&o);
	exjson_free(&j);
	exjson_free(&k);
	return text;
}

/* The line reads back to itself in the form 'flags' writes. */
static int
identity(const char *line, unsigned flags)
{
	return strcmp(reread(line, EX_TYPE_AUTO, flags), line) == 0;
}

/* Parse must fail with a message containing 'want'. */
static int
rejects(const char *line, const char *want)
{
	const char *t = reread(line, EX_TYPE_AUTO, 0);

	if (strncmp(t, "ERR: ", 5) != 0 || strstr(t, want) == NULL) {
		printf("#   got: %s\n", t);
		return 0;
	}
	return 1;
}

/* Payload bytes of a line, as hex. */
static const char *
payload_hex(const char *line, enum ex_type type)
{
	struct exjson j;
	struct buf rec = { 0 };
	size_t i, o = 0;

	exjson_init(&j, 0);
	if (exjson_parse(&j, line, strlen(line), type, &rec) == -1)
		snprintf(text, sizeof(text), "ERR: %s", exjson_strerror(&j));
	else {
		text[0] = '\0';
		for (i = 0; i < rec.len && o + 3 < sizeof(text); i++)
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%02x", rec.p[i]);
	}
	rp_buf_free(&rec);
	exjson_free(&j);
	return text;
}

static struct ex_feature
feat(const char *key, enum ex_kind kind)
{
	struct ex_feature f;

	memset(&f, 0, sizeof(f));
	f.key = (const uint8_t *)key;
	f.keylen = strlen(key);
	f.kind = kind;
	return f;
}

static void
test_numbers(void)
{
	float sub = 1.40129846e-45f;

	TEST(strcmp(fmtf(0.1f), "0.1") == 0, "0.1f -> 0.1");
	TEST(strcmp(fmtf(3.14f), "3.14") == 0, "3.14f -> 3.14");
	TEST(strcmp(fmtf(FLT_MAX), "3.4028235e+38") == 0, "FLT_MAX -> 3.4028235e+38");
	TEST(strcmp(fmtf(sub), "1.4013e-45") == 0, "smallest subnormal -> 1.4013e-45");
	TEST(strcmp(fmtf(-0.0f), "-0.0") == 0, "-0.0 keeps its sign and point");
	TEST(strcmp(fmtf(0.0f), "0.0") == 0, "0.0");
	TEST(strcmp(fmtf(1.0f), "1.0") == 0, "1.0 gets .0");
	TEST(strcmp(fmtf(-1.5f), "-1.5") == 0, "-1.5");
	TEST(strcmp(fmtf(100.0f), "100.0") == 0, "100.0 gets .0");
	/* %.8g is the first that reads back: the shortest rule, not Python's text. */
	TEST(strcmp(fmtf(123456792.0f), "1.2345679e+08") == 0, "123456792.0 -> 1.2345679e+08");
	TEST(strtof(fmtf(123456792.0f), NULL) == 123456792.0f, "... which reads back exactly");
	TEST(strcmp(fmtf(16777216.0f), "16777216.0") == 0, "2^24 -> 16777216.0");
	TEST(strcmp(fmtf(1e10f), "1e+10") == 0, "1e10 keeps the exponent form");
	TEST(strcmp(fmtf(NAN), "NaN") == 0, "NaN");
	TEST(strcmp(fmtf(INFINITY), "Infinity") == 0, "Infinity");
	TEST(strcmp(fmtf(-INFINITY), "-Infinity") == 0, "-Infinity");
	TEST(strcmp(fmtf(FLT_MIN), "1.1754944e-38") == 0, "FLT_MIN -> 1.1754944e-38");
	TEST(strcmp(fmtf(16777215.0f), "16777215.0") == 0, "2^24 - 1 needs 8 digits");
	TEST(strcmp(fmtf(0.3f), "0.3") == 0, "0.3f -> 0.3");
	TEST(strcmp(fmtf(1.00000012f), "1.0000001") == 0, "1 + ulp -> 1.0000001");
	{
		/* Every float in a sweep reads back exactly and shows a point or exponent. */
		uint32_t u;
		int bad = 0;
		for (u = 0; u < 0x7f800000u && !bad; u += 0x10001) {
			float v;
			const char *s;
			memcpy(&v, &u, 4);
			s = fmtf(v);
			if (strtof(s, NULL) != v || strpbrk(s, ".e") == NULL)
				bad = 1;
		}
		TEST(!bad, "float sweep round-trips");
	}

	TEST(strcmp(fmti(0), "0") == 0, "int64 0");
	TEST(strcmp(fmti(-1), "-1") == 0, "int64 -1");
	TEST(strcmp(fmti(INT64_MAX), "9223372036854775807") == 0, "INT64_MAX");
	TEST(strcmp(fmti(INT64_MIN), "-9223372036854775808") == 0, "INT64_MIN");
	TEST(strcmp(fmti(1000000007), "1000000007") == 0, "1000000007");
	TEST(strcmp(fmti(-10), "-10") == 0, "-10");
	{
		/* Unsigned: every power of ten and its neighbours, as printf. */
		char want[32], got[32];
		int ok = 1;
		uint64_t p10 = 1, u;

		for (int k = 0; k < 20; k++, p10 *= 10)
			for (int d = -1; d <= 1; d++) {
				u = p10 + (uint64_t)(int64_t)d;
				snprintf(want, sizeof want, "%" PRIu64, u);
				*exjson_format_u64(u, got) = '\0';
				ok &= strcmp(got, want) == 0;
			}
		*exjson_format_u64(UINT64_MAX, got) = '\0';
		TEST(ok && strcmp(got, "18446744073709551615") == 0,
		    "uint64: powers of ten, their neighbours and UINT64_MAX");
	}
	{
		/* The small-integer table: text, separator, length. */
		char want[32], got[32];
		uint64_t *t = exjson_itext_new(EXJSON_ITEXT_MAX, ',');
		size_t v, n;
		int ok = t != NULL;

		for (v = 0; ok && v < EXJSON_ITEXT_MAX;
		    v += v < 2000 ? 1 : 997) {
			n = (size_t)snprintf(want, sizeof want, "%zu,", v);
			memset(got, 'x', sizeof got);
			ok = exjson_itext_put(t, v, got) == got + n &&
			    memcmp(got, want, n) == 0;
		}
		if (t != NULL)
			ok &= exjson_itext_put(t, EXJSON_ITEXT_MAX - 1, got) ==
			    got + 7 && memcmp(got, "999999,", 7) == 0;
		free(t);
		TEST(ok, "itext: the decimal text and separator of 0 .. 999999");
		errno = 0;
		TEST(exjson_itext_new(EXJSON_ITEXT_MAX + 1, ' ') == NULL &&
		    errno == EINVAL, "itext: too many values is EINVAL");
		t = exjson_itext_new(0, ' ');
		TEST(t != NULL, "itext: an empty table");
		free(t);
	}
	{
		/* Every power of ten and its neighbours, either sign, as printf. */
		char want[32];
		int ok = 1;
		uint64_t p10 = 1;

		for (int k = 0; k < 20; k++, p10 *= 10) {
			for (int64_t d = -1; d <= 1; d++) {
				uint64_t u = p10 + (uint64_t)d;
				int64_t v = (int64_t)u;

				if (u > (uint64_t)INT64_MAX)
					continue;
				snprintf(want, sizeof want, "%" PRId64, v);
				ok &= strcmp(fmti(v), want) == 0;
				snprintf(want, sizeof want, "%" PRId64, -v);
				ok &= strcmp(fmti(-v), want) == 0;
			}
			if (k == 18)
				break;
		}
		for (uint64_t u = 1; u != 0; u <<= 1) {
			snprintf(want, sizeof want, "%" PRId64, (int64_t)(u - 1));
			ok &= strcmp(fmti((int64_t)(u - 1)), want) == 0;
		}
		TEST(ok, "int64 around every power of ten and two, as printf");
	}
}

static void
test_base64(void)
{
	char s[64];
	uint8_t d[64];
	long n;

	*exjson_base64((const uint8_t *)"", 0, s) = '\0';
	TEST(strcmp(s, "") == 0, "base64 of nothing");
	*exjson_base64((const uint8_t *)"a", 1, s) = '\0';
	TEST(strcmp(s, "YQ==") == 0, "base64 a");
	*exjson_base64((const uint8_t *)"ab", 2, s) = '\0';
	TEST(strcmp(s, "YWI=") == 0, "base64 ab");
	*exjson_base64((const uint8_t *)"\xff\xfe\x00\x80", 4, s) = '\0';
	TEST(strcmp(s, "//4AgA==") == 0, "base64 binary uses + and / alphabet");
	n = exjson_unbase64("//4AgA==", 8, d);
	TEST(n == 4 && memcmp(d, "\xff\xfe\x00\x80", 4) == 0, "decode padded");
	n = exjson_unbase64("//4AgA", 6, d);
	TEST(n == 4 && memcmp(d, "\xff\xfe\x00\x80", 4) == 0, "decode unpadded");
	n = exjson_unbase64("__4AgA", 6, d);
	TEST(n == 4 && memcmp(d, "\xff\xfe\x00\x80", 4) == 0, "decode URL-safe");
	n = exjson_unbase64("--8=", 4, d);
	TEST(n == 2 && d[0] == 0xfb && d[1] == 0xef, "decode URL-safe '-'");
	TEST(exjson_unbase64("", 0, d) == 0, "decode empty");
	TEST(exjson_unbase64("Y", 1, d) == -1, "one leftover char is not base64");
	TEST(exjson_unbase64("YQ=", 3, d) == -1, "short padding");
	TEST(exjson_unbase64("YQ===", 5, d) == -1, "too much padding");
	TEST(exjson_unbase64("Y=Q=", 4, d) == -1, "padding inside");
	TEST(exjson_unbase64("YQ ==", 5, d) == -1, "space");
	TEST(exjson_unbase64("YWJj\n", 5, d) == -1, "newline");
}

static void
test_utf8_escape(void)
{
	struct buf o = { 0 };

	TEST(exjson_utf8_valid((const uint8_t *)"h\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80", 10), "valid UTF-8");
	TEST(!exjson_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3), "encoded surrogate");
	TEST(!exjson_utf8_valid((const uint8_t *)"\xc0\xaf", 2), "overlong");
	TEST(!exjson_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4), "above U+10FFFF");
	TEST(!exjson_utf8_valid((const uint8_t *)"\xe2\x98", 2), "truncated");
	TEST(!exjson_utf8_valid((const uint8_t *)"\x80", 1), "lone continuation");
	TEST(exjson_utf8_valid((const uint8_t *)"\x00\x7f", 2), "NUL and DEL are valid");

	exjson_put_string(&o, (const uint8_t *)"a\"b\\c/d\x01\n\x1f\x7f\xc3\xa9", 13);
	TEST(o.len == 32 && memcmp(o.p, "\"a\\\"b\\\\c/d\\u0001\\u000a\\u001f\x7f\xc3\xa9\"", 32) == 0,
	    "escaping: quote, backslash, controls as \\u00XX; '/', DEL, UTF-8 pass");
	rp_buf_free(&o);
}

static void
test_writer(void)
{
	struct example ex;
	struct ex_feature f[5], lf[3];
	struct ex_flist fl[2];
	int64_t iv[] = { 1, -5, INT64_MIN };
	float fv[] = { 0.5f, NAN };
	float fok[] = { 1.0f, -0.0f };
	struct ex_bytes bv[] = { { (const uint8_t *)"hi", 2 }, { (const uint8_t *)"\xff", 1 } };

	memset(&ex, 0, sizeof(ex));
	TEST(strcmp(write_ex(&ex, 0), "{}") == 0, "no features: {}");
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{}") == 0, "flat, no features: {}");
	ex.has_features = 1;
	TEST(strcmp(write_ex(&ex, 0), "{\"features\":{}}") == 0, "present empty features");
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{\"features\":{}}") == 0,
	    "flat falls back to canonical for present empty features");

	f[0] = feat("b", EX_BYTES);
	f[0].n = 2;
	f[0].b = bv;
	f[1] = feat("e", EX_FLOAT);
	f[2] = feat("f", EX_FLOAT);
	f[2].n = 2;
	f[2].f32 = fv;
	f[3] = feat("i", EX_INT64);
	f[3].n = 3;
	f[3].i64 = iv;
	f[4] = feat("n", EX_NONE);
	ex.feat = f;
	ex.nfeat = 5;
	TEST(strcmp(write_ex(&ex, 0), "{\"features\":{\"feature\":{"
	    "\"b\":{\"bytesList\":{\"value\":[\"aGk=\",\"/w==\"]}},"
	    "\"e\":{\"floatList\":{}},"
	    "\"f\":{\"floatList\":{\"value\":[0.5,\"NaN\"]}},"
	    "\"i\":{\"int64List\":{\"value\":[\"1\",\"-5\",\"-9223372036854775808\"]}},"
	    "\"n\":{}}}}") == 0, "canonical: every kind, empty list, kind-less");
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{"
	    "\"b\":{\"bytes_list\":[\"aGk=\",\"/w==\"]},"
	    "\"e\":{\"float_list\":[]},"
	    "\"f\":{\"float_list\":[0.5,\"NaN\"]},"
	    "\"i\":[1,-5,-9223372036854775808],"
	    "\"n\":null}") == 0, "flat: typed fallbacks, null for kind-less");

	bv[1].p = (const uint8_t *)"\xc3\xa9\"";
	bv[1].n = 3;
	f[1].kind = EX_INT64;
	f[2].f32 = fok;
	f[4].kind = EX_BYTES;
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{"
	    "\"b\":[\"hi\",\"\xc3\xa9\\\"\"],"
	    "\"e\":{\"int64_list\":[]},"
	    "\"f\":[1.0,-0.0],"
	    "\"i\":[1,-5,-9223372036854775808],"
	    "\"n\":{\"bytes_list\":[]}}") == 0, "flat: UTF-8 bytes as strings, floats with points");

	/* Keys that are not UTF-8. */
	f[0].key = (const uint8_t *)"a\xff" "b";
	f[0].keylen = 3;
	ex.nfeat = 1;
	TEST(strcmp(write_ex(&ex, 0), "ERR: feature key \"a\\xffb\" is not valid UTF-8") == 0,
	    "a non-UTF-8 key is an error naming it");
	TEST(strcmp(write_ex(&ex, EXJSON_LOSSY), "{\"features\":{\"feature\":{\"a\xef\xbf\xbd"
	    "b\":{\"bytesList\":{\"value\":[\"aGk=\",\"w6ki\"]}}}}}") == 0,
	    "lossy: U+FFFD replaces the bad byte");
	f[0].key = (const uint8_t *)"\xe2\x98x";
	TEST(strncmp(write_ex(&ex, EXJSON_LOSSY), "{\"features\":{\"feature\":{\"\xef\xbf\xbdx\"", 30) == 0,
	    "lossy: one U+FFFD for a truncated sequence");
	f[0].key = (const uint8_t *)"q\"\n";
	TEST(strstr(write_ex(&ex, 0), "{\"features\":{\"feature\":{\"q\\\"\\u000a\":") != NULL,
	    "keys are escaped");

	/* SequenceExample. */
	memset(&ex, 0, sizeof(ex));
	ex.seq = 1;
	TEST(strcmp(write_ex(&ex, 0), "{}") == 0, "empty SequenceExample");
	ex.has_lists = 1;
	TEST(strcmp(write_ex(&ex, 0), "{\"featureLists\":{}}") == 0, "present empty feature_lists");
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{\"featureLists\":{}}") == 0,
	    "flat: empty feature_lists alone reads as canonical");
	lf[0] = feat("", EX_INT64);
	lf[0].n = 2;
	lf[0].i64 = iv;
	lf[1] = feat("", EX_NONE);
	lf[2] = feat("", EX_FLOAT);
	fl[0].key = (const uint8_t *)"empty";
	fl[0].keylen = 5;
	fl[0].n = 0;
	fl[0].v = NULL;
	fl[1].key = (const uint8_t *)"t";
	fl[1].keylen = 1;
	fl[1].n = 3;
	fl[1].v = lf;
	ex.lists = fl;
	ex.nlists = 2;
	ex.has_features = 1;
	TEST(strcmp(write_ex(&ex, 0), "{\"context\":{},\"featureLists\":{\"featureList\":{"
	    "\"empty\":{},\"t\":{\"feature\":[{\"int64List\":{\"value\":[\"1\",\"-5\"]}},{},"
	    "{\"floatList\":{}}]}}}}") == 0, "canonical SequenceExample");
	TEST(strcmp(write_ex(&ex, EXJSON_FLAT), "{\"context\":{},\"feature_lists\":{"
	    "\"empty\":[],\"t\":[[1,-5],null,{\"float_list\":[]}]}}") == 0,
	    "flat SequenceExample: items as flat values, null for kind-less");
}

static void
test_reader(void)
{
	/* Identity in the canonical form. */
	TEST(identity("{}", 0), "canonical {}");
	TEST(identity("{\"features\":{}}", 0), "canonical present empty features");
	TEST(identity("{\"features\":{\"feature\":{\"\":{\"bytesList\":{\"value\":[\"ZW1wdHkga2V5\"]}},"
	    "\"a\":{\"int64List\":{\"value\":[\"0\",\"-1\",\"9223372036854775807\",\"-9223372036854775808\"]}},"
	    "\"b\":{\"bytesList\":{}},\"e\":{},\"f\":{\"floatList\":{\"value\":[0.0,-0.0,1.0,0.1,"
	    "3.4028235e+38,1.4013e-45,\"Infinity\",\"-Infinity\",\"NaN\"]}},\"g\":{\"floatList\":{}},"
	    "\"i\":{\"int64List\":{}},\"\xc3\xa9\\u0001\":{\"bytesList\":{\"value\":[\"\",\"/w==\"]}}}}}", 0),
	    "canonical all kinds round trip");
	TEST(identity("{\"context\":{\"feature\":{\"k\":{\"int64List\":{\"value\":[\"1\"]}}}},"
	    "\"featureLists\":{}}", 0), "canonical context and empty featureLists");
	TEST(identity("{\"featureLists\":{\"featureList\":{\"e\":{},\"x\":{\"feature\":[{},"
	    "{\"int64List\":{}},{\"bytesList\":{\"value\":[\"YQ==\"]}}]}}}}", 0),
	    "canonical feature lists with empty and kind-less items");

	/* Identity in the flat form. */
	TEST(identity("{\"a\":[1,-9223372036854775808],\"b\":[\"x\",\"\"],\"c\":[1.5,-0.0,1e+10],"
	    "\"d\":null,\"e\":{\"int64_list\":[]},\"f\":{\"float_list\":[]},\"g\":{\"bytes_list\":[]},"
	    "\"h\":{\"float_list\":[\"NaN\",1.5,\"-Infinity\",\"Infinity\"]},"
	    "\"i\":{\"bytes_list\":[\"/w==\",\"YQ==\"]}}", EXJSON_FLAT), "flat all fallbacks round trip");
	TEST(identity("{\"context\":{\"l\":[3]},\"feature_lists\":{\"e\":[],\"t\":[[1,2],null,"
	    "{\"int64_list\":[]},[\"w\"]]}}", EXJSON_FLAT), "flat SequenceExample round trip");
	TEST(identity("{\"feature_lists\":{\"x\":[[5]]}}", EXJSON_FLAT), "flat lists only");
	TEST(identity("{\"context\":{\"k\":[1]}}", EXJSON_FLAT), "flat context only");
	TEST(identity("{\"context\":{\"k\":[1]},\"feature_lists\":{}}", EXJSON_FLAT),
	    "flat context and empty lists");
	/* Names that would make flat text ambiguous are written canonically. */
	TEST(identity("{\"context\":{\"feature\":{\"feature\":{\"int64List\":{\"value\":[\"1\"]}}}}}",
	    EXJSON_FLAT), "context with one feature named feature: canonical");
	TEST(identity("{\"context\":{\"feature\":{\"int64_list\":{\"int64List\":{\"value\":[\"1\"]}}}}}",
	    EXJSON_FLAT), "context with one feature named int64_list: canonical");
	TEST(identity("{\"featureLists\":{\"featureList\":{\"bytes_list\":{\"feature\":[{}]}}}}",
	    EXJSON_FLAT), "one list named bytes_list: canonical");
	TEST(identity("{\"featureLists\":{\"featureList\":{\"featureList\":{}}}}", EXJSON_FLAT),
	    "one list named featureList: canonical");
	TEST(identity("{\"features\":[1]}", EXJSON_FLAT), "flat feature named features");
	TEST(strcmp(reread("{\"context\":{\"int64_list\":[1]}}", EX_TYPE_AUTO, EXJSON_FLAT),
	    "{\"context\":[1]}") == 0, "a typed-looking context is a flat Example's feature");
	TEST(identity("{\"context\":[1],\"feature_lists\":{\"int64_list\":[]}}", EXJSON_FLAT),
	    "flat Example with features named context and feature_lists");

	/* Other spellings read to the same records. */
	TEST(strcmp(reread("{\"features\":{\"feature\":{\"a\":{\"int64_list\":{\"value\":[1,\"2\",3.0,4e2,"
	    "\"-5\",-9223372036854775808]}},\"b\":{\"bytes_list\":{\"value\":[\"_w\",\"YQ\"]}},"
	    "\"c\":{\"float_list\":{\"value\":[\"1.5\",3.4028235e+38,1,\"NaN\"]}}}}}",
	    EX_TYPE_AUTO, 0), "{\"features\":{\"feature\":{\"a\":{\"int64List\":{\"value\":[\"1\",\"2\","
	    "\"3\",\"400\",\"-5\",\"-9223372036854775808\"]}},\"b\":{\"bytesList\":{\"value\":[\"/w==\","
	    "\"YQ==\"]}},\"c\":{\"floatList\":{\"value\":[1.5,3.4028235e+38,1.0,\"NaN\"]}}}}}") == 0,
	    "proto names, int64 as numbers and strings, unpadded URL-safe base64, float strings");
	TEST(strcmp(reread("{\"feature_lists\":{\"feature_list\":{\"x\":{\"feature\":[]}}}}",
	    EX_TYPE_AUTO, 0), "{\"featureLists\":{\"featureList\":{\"x\":{}}}}") == 0,
	    "proto names in a SequenceExample");
	TEST(strcmp(reread(" {\"b\":[1],\"a\":[2]} \r\n", EX_TYPE_AUTO, EXJSON_FLAT),
	    "{\"a\":[2],\"b\":[1]}") == 0, "keys sorted, spaces allowed");
	TEST(strcmp(reread("{\"f\":[1,2.5]}", EX_TYPE_AUTO, EXJSON_FLAT), "{\"f\":[1.0,2.5]}") == 0,
	    "integers among floats make a float list");
	TEST(strcmp(reread("{\"s\":[\"\\u00e9\\ud83d\\ude00\\/\"]}", EX_TYPE_AUTO, EXJSON_FLAT),
	    "{\"s\":[\"\xc3\xa9\xf0\x9f\x98\x80/\"]}") == 0, "\\u escapes and surrogate pairs");
	TEST(strcmp(reread("{\"f\":[1e-50,0.1]}", EX_TYPE_AUTO, EXJSON_FLAT), "{\"f\":[0.0,0.1]}") == 0,
	    "underflow reads as zero");
	TEST(strcmp(reread("{\"f\":[3.40282356e+38]}", EX_TYPE_AUTO, EXJSON_FLAT),
	    "{\"f\":[3.4028235e+38]}") == 0, "a decimal above FLT_MAX that rounds to it");

	/* Payload bytes: canonical form. */
	TEST(strcmp(payload_hex("{}", EX_TYPE_AUTO), "") == 0, "{} is the empty payload");
	TEST(strcmp(payload_hex("{\"features\":{}}", EX_TYPE_AUTO), "0a00") == 0,
	    "present empty features: 0a 00");
	TEST(strcmp(payload_hex("{\"a\":{\"int64_list\":[]}}", EX_TYPE_AUTO),
	    "0a090a070a016112021a00") == 0, "empty int64 list: 1a 00");
	TEST(strcmp(payload_hex("{\"a\":null}", EX_TYPE_AUTO), "0a070a050a01611200") == 0,
	    "kind-less feature: 12 00");
	TEST(strcmp(payload_hex("{\"a\":[1,2]}", EX_TYPE_AUTO), "0a0d0a0b0a016112061a040a020102") == 0,
	    "int64 list packed");
	TEST(strcmp(payload_hex("{\"context\":{}}", EX_TYPE_AUTO), "0a00") == 0, "context present");
	TEST(strcmp(payload_hex("{\"featureLists\":{}}", EX_TYPE_AUTO), "1200") == 0,
	    "feature_lists present");
	TEST(strcmp(payload_hex("{}", EX_TYPE_SEQUENCE), "") == 0, "empty SequenceExample");
	TEST(strncmp(payload_hex("{\"context\":{\"a\":[1]}}", EX_TYPE_EXAMPLE), "ERR: ", 5) == 0,
	    "forced Example: context is a feature name");
	TEST(strcmp(payload_hex("{\"context\":{\"int64_list\":[1]}}", EX_TYPE_SEQUENCE),
	    "0a0d0a0b0a0a696e7436345f6c697374") != 0 &&
	    strncmp(payload_hex("{\"context\":{\"int64_list\":[1]}}", EX_TYPE_SEQUENCE), "0a", 2) == 0,
	    "forced SequenceExample reads a typed-looking context");

	/* Raw. */
	{
		struct exjson j;
		struct buf o = { 0 };
		exjson_init(&j, 0);
		TEST(exjson_write_raw((const uint8_t *)"foo", 3, &o) == 0 && o.len == 6 &&
		    memcmp(o.p, "\"Zm9v\"", 6) == 0, "raw out");
		o.len = 0;
		TEST(exjson_parse_raw(&j, "\"Zm9v\"\n", 7, &o) == 0 && o.len == 3 &&
		    memcmp(o.p, "foo", 3) == 0, "raw in");
		o.len = 0;
		TEST(exjson_parse_raw(&j, "\"\"", 2, &o) == 0 && o.len == 0, "raw empty");
		TEST(exjson_parse_raw(&j, "{}", 2, &o) == -1 &&
		    strcmp(exjson_strerror(&j), "expected a JSON string of base64, found an object") == 0,
		    "raw refuses an object");
		TEST(exjson_parse_raw(&j, "\"Zm9v!\"", 7, &o) == -1 &&
		    strcmp(exjson_strerror(&j), "the string is not base64") == 0, "raw refuses non-base64");
		o.len = 5;
		TEST(exjson_parse(&j, "{\"a\":}", 6, EX_TYPE_AUTO, &o) == -1 && o.len == 5,
		    "a failed parse leaves the output alone");
		rp_buf_free(&o);
		exjson_free(&j);
		exjson_free(NULL);
	}
}

static void
test_errors(void)
{
	TEST(rejects("", "invalid JSON at byte 0: expected a value (end of line)"), "empty line");
	TEST(rejects("{\"a\":[1,]}", "invalid JSON at byte 8: unexpected character"), "trailing comma");
	TEST(rejects("{\"a\":[1]} x", "invalid JSON at byte 10: trailing characters"), "trailing text");
	TEST(rejects("{\"a\":[1]", "expected ',' or '}' (end of line)"), "unterminated object");
	TEST(rejects("{\"a\":[01]}", "invalid JSON at byte 7: expected ',' or ']'"), "leading zero");
	TEST(rejects("{\"a\":[\"x\ty\"]}", "control character in string"), "raw tab in a string");
	TEST(rejects("{\"a\":[\"\\ud800\"]}", "lone surrogate"), "lone surrogate");
	TEST(rejects("{\"a\":[\"\xff\"]}", "invalid UTF-8 in string"), "invalid UTF-8 text");
	TEST(rejects("{\"a\":[\"\\x\"]}", "bad escape"), "bad escape");
	TEST(rejects("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	    "nesting too deep"), "deep nesting");
	TEST(rejects("\"Zm9v\"", "a JSON string is a raw record"), "a raw line");
	TEST(rejects("[1]", "expected a JSON object, found an array"), "array at top");
	TEST(rejects("{\"a\":[]}", "feature \"a\": an empty list has no kind"), "untyped empty list");
	TEST(rejects("{\"a\":[1,\"x\"]}", "feature \"a\": a list mixes strings and numbers at byte 5"),
	    "mixed list");
	TEST(rejects("{\"a\":[true]}", "feature \"a\": unexpected true in a list at byte 6"), "bool");
	TEST(rejects("{\"a\":5}", "feature \"a\": expected a list of values, a typed list or null, found a number"),
	    "scalar value");
	TEST(rejects("{\"a\":{\"int_list\":[]}}", "feature \"a\": unknown typed list \"int_list\""),
	    "unknown typed list");
	TEST(rejects("{\"a\":[9223372036854775808]}",
	    "feature \"a\": 9223372036854775808 is not an int64 value (not integral or out of range) at byte 6"),
	    "int64 overflow");
	TEST(rejects("{\"a\":[-9223372036854775809]}", "out of range"), "int64 underflow");
	TEST(rejects("{\"a\":{\"int64_list\":[1.5]}}", "1.5 is not an int64 value"), "fraction in int64");
	TEST(rejects("{\"a\":{\"int64_list\":[\"x\"]}}", "int64 value is not a number"), "int64 word");
	TEST(rejects("{\"a\":[1e39]}", "feature \"a\": float value 1e39 out of range"),
	    "finite decimal rounding to infinity");
	TEST(rejects("{\"a\":{\"float_list\":[\"nan\"]}}", "float value is not a number"), "nan spelling");
	TEST(rejects("{\"a\":{\"bytes_list\":[\"@@\"]}}", "bytes value is not base64"), "bad base64");
	TEST(rejects("{\"a\":{\"bytes_list\":[1]}}", "expected a string, found a number"), "number as bytes");
	TEST(rejects("{\"features\":{\"feature\":{\"a\":{\"int64List\":{\"value\":[\"1\"]},"
	    "\"floatList\":{}}}}}", "feature \"a\": a Feature has more than one kind"), "two kinds");
	TEST(rejects("{\"features\":{\"feature\":{\"a\":{\"intList\":{}}}}}",
	    "feature \"a\": unknown field \"intList\" in a Feature"), "unknown kind");
	TEST(rejects("{\"features\":{\"feature\":{\"a\":{\"int64List\":{\"values\":[]}}}}}",
	    "unknown field \"values\" in a int64List"), "unknown list field");
	TEST(rejects("{\"features\":{\"feature\":{\"a\":[1]}}}",
	    "feature \"a\": expected a Feature object, found an array"), "flat value in canonical");
	TEST(rejects("{\"context\":{\"feature\":{}},\"featureLists\":{\"featureList\":{\"x\":{\"feature\":"
	    "[{\"int64List\":{\"value\":[\"z\"]}}]}}}}", "feature list \"x\" item 0: int64 value is not a number"),
	    "error inside a feature list names the list and item");
	TEST(rejects("{\"context\":{\"a\":[1]},\"feature_lists\":{\"x\":[[1],5]}}",
	    "feature list \"x\" item 1: expected a list of values"), "flat list item");
	TEST(rejects("{\"featureLists\":{\"featureList\":{\"x\":[]}}}",
	    "feature list \"x\": expected a FeatureList object, found an array"), "list not an object");
	TEST(rejects("{\"features\":{\"feature\":{}},\"x\":[1]}",
	    "feature \"features\": unknown typed list \"feature\""),
	    "mixed canonical and flat names");
	/* Duplicate map keys are refused, as protobuf's JSON parser does. */
	TEST(rejects(" {\"b\":[1],\"a\":[2],\"b\":[3]}",
	    "duplicate feature \"b\" at byte 18"), "flat duplicate names the second");
	TEST(rejects("{\"features\":{\"feature\":{\"a\":{\"int64List\":{}},"
	    "\"a\":{\"floatList\":{}}}}}", "duplicate feature \"a\" at byte 45"),
	    "canonical duplicate feature");
	TEST(rejects("{\"context\":{\"k\":[1],\"k\":[1]},\"feature_lists\":{}}",
	    "duplicate feature \"k\" at byte 20"), "duplicate context feature");
	TEST(rejects("{\"context\":{},\"feature_lists\":{\"x\":[],\"y\":[],\"x\":[[1]]}}",
	    "duplicate feature list \"x\" at byte 45"), "duplicate feature list");
	TEST(rejects("{\"featureLists\":{\"featureList\":{\"x\":{},\"x\":{}}}}",
	    "duplicate feature list \"x\" at byte 39"), "canonical duplicate feature list");
	TEST(strcmp(reread("{\"context\":{\"x\":[1]},\"feature_lists\":{\"x\":[[2]]}}",
	    EX_TYPE_AUTO, EXJSON_FLAT), "{\"context\":{\"x\":[1]},\"feature_lists\":{\"x\":[[2]]}}") == 0,
	    "one name in context and feature lists is no duplicate");
}

/* Collects what exjson_write() hands to flush(). */
static int
collect_flush(void *arg, struct buf *out)
{
	struct buf *all = arg;

	if (rp_buf_append(all, out->p, out->len) == -1)
		return -1;
	out->len = 0;
	return 0;
}

/*
 * An Example whose int64 and bytes lists are left in the record (lazy_min) is
 * written as the decoded one is, in both forms, whole or flushed as
 * it goes; a bad key is found by exjson_keys_ok() before anything.
 */
static void
test_lazy(void)
{
	struct ex_builder eb;
	struct example a, b;
	struct exjson j;
	struct buf rec = { 0 }, x = { 0 }, y = { 0 }, all = { 0 };
	int64_t *v = malloc(300000 * sizeof *v);
	int64_t w[3] = { -1, INT64_MAX, 0 };
	struct ex_bytes *bs = malloc(200000 * sizeof *bs);
	static const char txt[] = "a\"\\\n\x01/z";
	static const uint8_t raw[] = { 0xff, 0x00, 'x' };
	int ok = 1;

	for (int i = 0; i < 300000; i++)
		v[i] = (int64_t)i * 7919 % 100003 - 50;
	/* Short UTF-8 strings, some needing escapes, some empty. */
	for (int i = 0; i < 200000; i++) {
		bs[i].p = (const uint8_t *)txt + i % 7;
		bs[i].n = (size_t)(i % 5);
		if (bs[i].n > sizeof txt - 1 - (size_t)(i % 7))
			bs[i].n = sizeof txt - 1 - (size_t)(i % 7);
	}
	exb_init(&eb);
	exb_int64(&eb, "big", v, 300000);
	exb_bytes(&eb, "text", bs, 200000);
	/* and one that is not UTF-8 (base64 in the flat form) */
	bs[150000].p = raw;
	bs[150000].n = sizeof raw;
	exb_bytes(&eb, "raw", bs, 200000);
	exb_int64(&eb, "small", w, 3);
	exb_int64(&eb, "empty", NULL, 0);
	exb_float(&eb, "f", (const float[]){ 0.5f }, 1);
	exb_encode(&eb, &rec);
	for (unsigned flags = 0; flags <= EXJSON_FLAT; flags++) {
		ex_init(&a);
		ex_init(&b);
		b.lazy_min = 64;
		exjson_init(&j, flags);
		x.len = y.len = all.len = 0;
		ok &= ex_decode(&a, rec.p, rec.len, EX_TYPE_AUTO) == 0 &&
		    ex_decode(&b, rec.p, rec.len, EX_TYPE_AUTO) == 0 &&
		    ex_find(&b, "big", 3)->lazy != NULL &&
		    ex_find(&b, "text", 4)->lazy != NULL &&
		    ex_find(&b, "raw", 3)->lazy != NULL &&
		    ex_find(&b, "small", 5)->lazy == NULL;
		ok &= exjson_write(&j, &a, &x) == 0 && exjson_write(&j, &b, &y) == 0 &&
		    x.len == y.len && memcmp(x.p, y.p, x.len) == 0;
		j.flush = collect_flush;
		j.flush_arg = &all;
		y.len = 0;
		ok &= exjson_keys_ok(&j, &b) == 0 && exjson_write(&j, &b, &y) == 0 &&
		    all.len > 0 && rp_buf_append(&all, y.p, y.len) == 0 &&
		    all.len == x.len && memcmp(all.p, x.p, x.len) == 0;
		exjson_free(&j);
		ex_free(&a);
		ex_free(&b);
	}
	TEST(ok, "int64 and bytes lists left in the record are written as decoded ones, flushed or not");
	{
		struct example c;
		static const uint8_t badkey[] = "\x0a\x0c\x0a\x0a\x0a\x01\xff\x12\x05\x1a\x03\x0a\x01\x07";

		ex_init(&c);
		exjson_init(&j, 0);
		TEST(ex_decode(&c, badkey, sizeof badkey - 1, EX_TYPE_AUTO) == 0 &&
		    exjson_keys_ok(&j, &c) == -1 &&
		    strstr(exjson_strerror(&j), "not valid UTF-8") != NULL,
		    "exjson_keys_ok() finds a key that is not UTF-8: %s", exjson_strerror(&j));
		exjson_free(&j);
		exjson_init(&j, EXJSON_LOSSY);
		TEST(exjson_keys_ok(&j, &c) == 0, "and lets it through with EXJSON_LOSSY");
		exjson_free(&j);
		ex_free(&c);
	}
	exb_free(&eb);
	rp_buf_free(&rec);
	rp_buf_free(&x);
	rp_buf_free(&y);
	rp_buf_free(&all);
	free(v);
	free(bs);
}

/* The kinds a caller gives (tfr-cat --like): "f" float, "i" int64, "s" bytes. */
static int
test_kind_of(void *arg, const uint8_t *name, size_t len)
{
	(void)arg;
	if (len != 1)
		return -1;
	return *name == 'f' ? EX_FLOAT : *name == 'i' ? EX_INT64 :
	    *name == 's' ? EX_BYTES : -1;
}

static void
test_kinds(void)
{
	struct exjson j;
	struct buf rec = { 0 }, out = { 0 };
	const struct example *e;
	const char *s1, *s2;
	static const char *const bad[] = {
		"{\"i\":[1.5]}", "{\"s\":[1]}", "{\"f\":[\"a\"]}", "{\"i\":[\"1\"]}"
	};
	size_t i;
	int ok;

	exjson_init(&j, EXJSON_FLAT);
	j.kind_of = test_kind_of;
	s1 = "{\"f\":[0,2],\"i\":[]}";
	s2 = "{\"x\":[0],\"f\":{\"int64_list\":[1]}}";
	ok = exjson_parse(&j, s1, strlen(s1), EX_TYPE_AUTO, &rec) == 0 &&
	    (e = exjson_example(&j)) != NULL && e->nfeat == 2 &&
	    e->feat[0].kind == EX_FLOAT && e->feat[0].n == 2 &&
	    e->feat[0].f32[0] == 0.0f && e->feat[0].f32[1] == 2.0f &&
	    e->feat[1].kind == EX_INT64 && e->feat[1].n == 0;
	TEST(ok, "kind_of: integers in a float feature are floats; an empty list takes the kind");
	rec.len = 0;
	ok = exjson_parse(&j, s2, strlen(s2), EX_TYPE_AUTO, &rec) == 0 &&
	    (e = exjson_example(&j)) != NULL &&
	    e->feat[0].kind == EX_INT64 && e->feat[1].kind == EX_INT64;
	TEST(ok, "kind_of: unknown names go by their values, typed lists keep their kind");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		rec.len = 0;
		TEST(exjson_parse(&j, bad[i], strlen(bad[i]), EX_TYPE_AUTO, &rec) == -1 &&
		    strstr(exjson_strerror(&j), "but the feature is") != NULL &&
		    rec.len == 0, "kind_of: %s is refused: %s", bad[i], exjson_strerror(&j));
	}
	exjson_free(&j);
	rp_buf_free(&rec);
	rp_buf_free(&out);
}

int
main(void)
{
	test_numbers();
	test_base64();
	test_utf8_escape();
	test_writer();
	test_reader();
	test_errors();
	test_lazy();
	test_kinds();
	return tap_done();
}
