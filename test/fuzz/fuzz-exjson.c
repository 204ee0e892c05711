/*
 * Round-trip oracle for exjson and the Example codec.
 *
 * 1. The input as a JSON line: if it parses, its payload P must decode,
 *    its JSON (canonical and flat) must parse back to P, and the text
 *    written from the decoded payload must equal the text written from
 *    the parsed example itself.
 * 2. The input as a payload: if it decodes, its JSON (canonical and flat)
 *    must parse back to the canonical encoding of the decoded example
 *    (NaN payloads normalised: JSON keeps no NaN bits); when a key is not
 *    UTF-8, the lossy output must still parse, or be refused only as a
 *    duplicate name (two keys that differ in bytes that are not UTF-8
 *    both become U+FFFD there).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "example.h"
#include "exjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
hexdump(const char *what, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "%s (%zu bytes): ", what, n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%02x", p[i]);
	fprintf(stderr, "\n");
}

static void
check(int ok, const char *what, const uint8_t *in, size_t n)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz-exjson: %s\n", what);
	hexdump("input", in, n);
	abort();
}

static int
same(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* JSON text of payload p as 'type' with flags; 0 ok, -1 refused (bad key). */
static int
to_json(unsigned flags, const uint8_t *p, size_t n, enum ex_type type, struct buf *out,
    const uint8_t *in, size_t insz)
{
	struct exjson j;
	int rc;

	exjson_init(&j, flags);
	out->len = 0;
	rc = exjson_payload(&j, p, n, type, out);
	if (rc == -1)
		check(strstr(exjson_strerror(&j), "not valid UTF-8") != NULL,
		    exjson_strerror(&j), in, insz);
	exjson_free(&j);
	return rc;
}

/* Kinds by the first byte of a name, as a caller's --like table might give. */
static int
fuzz_kind_of(void *arg, const uint8_t *name, size_t len)
{
	static const int k[4] = { -1, EX_BYTES, EX_FLOAT, EX_INT64 };

	(void)arg;
	return len == 0 ? -1 : k[name[0] & 3];
}

/* With kinds given: a line parses or fails with a message; what parses round-trips. */
static void
json_kinds(const uint8_t *data, size_t size)
{
	struct exjson j, k;
	struct buf p1 = { 0 }, p2 = { 0 }, t = { 0 };

	exjson_init(&j, 0);
	exjson_init(&k, 0);
	j.kind_of = fuzz_kind_of;
	if (exjson_parse(&j, (const char *)data, size, EX_TYPE_AUTO, &p1) == -1)
		check(exjson_strerror(&j)[0] != '\0', "kinds: error without a message",
		    data, size);
	else {
		check(exjson_write(&k, exjson_example(&j), &t) == 0,
		    "kinds: parsed example does not write", data, size);
		check(exjson_parse(&k, (const char *)t.p, t.len, EX_TYPE_AUTO, &p2) == 0 &&
		    same(&p1, &p2), "kinds: JSON -> payload -> JSON -> payload differs",
		    data, size);
	}
	rp_buf_free(&p1);
	rp_buf_free(&p2);
	rp_buf_free(&t);
	exjson_free(&j);
	exjson_free(&k);
}

static void
json_side(const uint8_t *data, size_t size)
{
	struct exjson j, k;
	struct buf p1 = { 0 }, p2 = { 0 }, t1 = { 0 }, t2 = { 0 };
	const struct example *ex;
	enum ex_type type;
	unsigned fl;
	int i;

	exjson_init(&j, 0);
	exjson_init(&k, 0);
	if (exjson_parse(&j, (const char *)data, size, EX_TYPE_AUTO, &p1) == -1) {
		check(exjson_strerror(&j)[0] != '\0', "error without a message", data, size);
		goto out;
	}
	ex = exjson_example(&j);
	type = ex->seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE;
	for (i = 0; i < 2; i++) {
		fl = i ? EXJSON_FLAT : 0;
		/* Text of the parsed example vs text of its decoded payload. */
		t1.len = 0;
		k.flags = fl;
		check(exjson_write(&k, ex, &t1) == 0, "parsed example does not write", data, size);
		check(to_json(fl, p1.p, p1.len, type, &t2, data, size) == 0,
		    "payload of a parsed line does not write", data, size);
		check(same(&t1, &t2), "decoded payload writes other text than the parsed example",
		    data, size);
		/* And that text parses back to the same payload. */
		p2.len = 0;
		check(exjson_parse(&k, (const char *)t2.p, t2.len, EX_TYPE_AUTO, &p2) == 0,
		    "written JSON does not parse", data, size);
		check(same(&p1, &p2), "JSON -> payload -> JSON -> payload differs", data, size);
	}
out:
	rp_buf_free(&p1);
	rp_buf_free(&p2);
	rp_buf_free(&t1);
	rp_buf_free(&t2);
	exjson_free(&j);
	exjson_free(&k);
}

/* A copy of f[0..n) with NaNs replaced by the NaN JSON reads back. */
static struct ex_feature *
denan(const struct ex_feature *f, size_t n, float **pool)
{
	struct ex_feature *c = malloc((n ? n : 1) * sizeof(*c));
	size_t i, k, tot = 0, o = 0;

	for (i = 0; i < n; i++)
		if (f[i].kind == EX_FLOAT)
			tot += f[i].n;
	*pool = malloc((tot ? tot : 1) * sizeof(float));
	if (c == NULL || *pool == NULL)
		abort();
	for (i = 0; i < n; i++) {
		c[i] = f[i];
		if (f[i].kind != EX_FLOAT || f[i].n == 0)
			continue;
		for (k = 0; k < f[i].n; k++)
			(*pool)[o + k] = isnan(f[i].f32[k]) ? NAN : f[i].f32[k];
		c[i].f32 = *pool + o;
		o += f[i].n;
	}
	return c;
}

static void
payload_side(const uint8_t *data, size_t size)
{
	struct example ex, norm;
	struct exjson j;
	struct buf enc = { 0 }, t = { 0 }, p = { 0 };
	struct ex_feature *feat, **lv = NULL;
	struct ex_flist *lists = NULL;
	float *fpool, **lpool = NULL;
	size_t i;
	int f;

	ex_init(&ex);
	if (ex_decode(&ex, data, size, EX_TYPE_AUTO) == -1) {
		ex_free(&ex);
		return;
	}
	norm = ex;
	feat = denan(ex.feat, ex.nfeat, &fpool);
	norm.feat = feat;
	if (ex.nlists) {
		lists = calloc(ex.nlists, sizeof(*lists));
		lv = calloc(ex.nlists, sizeof(*lv));
		lpool = calloc(ex.nlists, sizeof(*lpool));
		if (!lists || !lv || !lpool)
			abort();
		for (i = 0; i < ex.nlists; i++) {
			lists[i] = ex.lists[i];
			lv[i] = denan(ex.lists[i].v, ex.lists[i].n, &lpool[i]);
			lists[i].v = lv[i];
		}
		norm.lists = lists;
	}
	check(ex_encode(&norm, &enc) == 0, "ex_encode failed", data, size);
	for (f = 0; f < 2; f++) {
		t.len = 0;
		if (to_json(f ? EXJSON_FLAT : 0, data, size, EX_TYPE_AUTO, &t, data, size) == -1) {
			/* A key is not UTF-8: the lossy form must still be JSON we read. */
			check(to_json((f ? EXJSON_FLAT : 0) | EXJSON_LOSSY, data, size,
			    EX_TYPE_AUTO, &t, data, size) == 0, "lossy output failed", data, size);
			exjson_init(&j, 0);
			check(exjson_parse(&j, (const char *)t.p, t.len,
			    ex.seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE, &p) == 0 ||
			    strncmp(exjson_strerror(&j), "duplicate ", 10) == 0,
			    "lossy JSON does not parse", data, size);
			exjson_free(&j);
			break;
		}
		exjson_init(&j, 0);
		p.len = 0;
		if (exjson_parse(&j, (const char *)t.p, t.len,
		    ex.seq ? EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE, &p) != 0) {
			fprintf(stderr, "%s\n%.*s\n", exjson_strerror(&j), (int)t.len, t.p);
			check(0, "JSON of a payload does not parse", data, size);
		}
		check(same(&p, &enc), "payload -> JSON -> payload differs from ex_encode",
		    data, size);
		exjson_free(&j);
	}
	for (i = 0; i < ex.nlists; i++) {
		free(lv[i]);
		free(lpool[i]);
	}
	free(lv);
	free(lpool);
	free(lists);
	free(feat);
	free(fpool);
	rp_buf_free(&enc);
	rp_buf_free(&t);
	rp_buf_free(&p);
	ex_free(&ex);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_side(data, size);
	json_kinds(data, size);
	payload_side(data, size);
	return 0;
}
