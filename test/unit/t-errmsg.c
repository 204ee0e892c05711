/*
 * Messages into a caller's buffer (err, errlen): rp_seterr() itself,
 * and the calls of several modules that fill one, cut safely to a small
 * errlen (the first errlen - 1 bytes of the whole message, then a NUL,
 * nothing written past errlen), with errlen 0 writing nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "errmsg.h"
#include "fairseq_dict.h"
#include "jsondoc.h"
#include "spm.h"
#include "subword.h"
#include "tap.h"
#include "wordpiece.h"

#define S(s)	(const uint8_t *)(s), sizeof(s) - 1

/* A call that fails and says why in err: returns whether it failed. */
struct call {
	const char	*name;
	int		(*fail)(char *err, size_t errlen);
};

static int
call_rp_seterr(char *err, size_t errlen)
{
	rp_seterr(err, errlen, "line %d: %s", 12, "a message of some length");
	return 1;
}

static int
call_wp_vocab_parse(char *err, size_t errlen)
{
	struct wp_vocab *v = wp_vocab_parse(S("a\n\xff\n"), err, errlen);

	wp_vocab_free(v);
	return v == NULL;
}

static int
call_wp_decode(char *err, size_t errlen)
{
	struct wp_vocab *v = wp_vocab_parse(S("a\nb\n"), NULL, 0);
	int64_t ids[] = { 0, 7 };
	char *out = NULL;
	size_t cap = 0;
	long k;

	if (v == NULL)
		return 0;
	k = wp_decode(v, ids, 2, &out, &cap, err, errlen);
	free(out);
	wp_vocab_free(v);
	return k == -1;
}

static int
call_fqd_load(char *err, size_t errlen)
{
	struct fqd *d = fqd_load(S("a 1\na 2\n"), err, errlen);

	fqd_free(d);
	return d == NULL;
}

static int
call_sw_vocab_parse(char *err, size_t errlen)
{
	struct sw_vocab *v = sw_vocab_parse(S("'a'\n'\xff'\n"), err, errlen);

	sw_vocab_free(v);
	return v == NULL;
}

static int
call_sw_counts_read(char *err, size_t errlen)
{
	struct sw_counts *c = sw_counts_new();
	int rc;

	if (c == NULL)
		return 0;
	rc = sw_counts_read(c, S("#subword-counts 1\n5 x\n"), err, errlen);
	sw_counts_free(c);
	return rc == -1;
}

static int
call_jd_parse(char *err, size_t errlen)
{
	struct jd_line l;
	int rc;

	jd_init(&l);
	rc = jd_parse(&l, S("[1, 2]"), err, errlen);
	jd_free(&l);
	return rc == -1;
}

static int
call_bpe_parse_tiktoken(char *err, size_t errlen)
{
	struct bpe_model *m = bpe_parse_tiktoken(S("YQ== 0\nYQ== 1\n"),
	    BPE_GPT2, err, errlen);

	bpe_model_free(m);
	return m == NULL;
}

static int
call_spm_model_parse(char *err, size_t errlen)
{
	struct spm_model *m = spm_model_parse(S("\xff\xff\xff"), 0, err, errlen);

	spm_model_free(m);
	return m == NULL;
}

static const struct call calls[] = {
	{ "rp_seterr", call_rp_seterr },
	{ "wp_vocab_parse", call_wp_vocab_parse },
	{ "wp_decode", call_wp_decode },
	{ "fqd_load", call_fqd_load },
	{ "sw_vocab_parse", call_sw_vocab_parse },
	{ "sw_counts_read", call_sw_counts_read },
	{ "jd_parse", call_jd_parse },
	{ "bpe_parse_tiktoken", call_bpe_parse_tiktoken },
	{ "spm_model_parse", call_spm_model_parse },
};

/* buf[from .. n) still holds the filler. */
static int
untouched(const char *buf, size_t from, size_t n)
{
	for (; from < n; from++)
		if (buf[from] != '#')
			return 0;
	return 1;
}

static void
test_cut(const struct call *c)
{
	char full[RP_ERRMAX], buf[32];
	size_t len, k;
	static const size_t lens[] = { 8, 2, 1 };

	full[0] = '\0';
	TEST(c->fail(full, sizeof full) && full[0] != '\0',
	    "%s: fails with a message (\"%s\")", c->name, full);
	len = strlen(full);
	for (k = 0; k < sizeof lens / sizeof lens[0]; k++) {
		size_t n = lens[k], want = len < n - 1 ? len : n - 1;

		memset(buf, '#', sizeof buf);
		TEST(c->fail(buf, n) && strlen(buf) == want &&
		    memcmp(buf, full, want) == 0 && untouched(buf, n, sizeof buf),
		    "%s: errlen %zu holds the first %zu bytes and a NUL",
		    c->name, n, want);
	}
	memset(buf, '#', sizeof buf);
	TEST(c->fail(buf, 0) && untouched(buf, 0, sizeof buf),
	    "%s: errlen 0 writes nothing", c->name);
	TEST(c->fail(NULL, 0), "%s: err NULL with errlen 0 is safe", c->name);
}

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof calls / sizeof calls[0]; i++)
		test_cut(&calls[i]);
	return tap_done();
}
