/*
 * Test helper, built by the bats suites (not by make): run one seqio
 * helper on the inline arguments of a vector case and print the result
 * as JSON: the value, null, or {"error": "message"}.
 * Usage: seqio-unit <case.json
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "seqio.h"

static int64_t *
ints(json_t *a, size_t *n)
{
	int64_t *v;
	size_t i;
	json_t *x;

	*n = json_array_size(a);
	v = calloc(*n + 1, sizeof *v);
	json_array_foreach(a, i, x)
		v[i] = json_integer_value(x);
	return v;
}

static json_t *
list(const int64_t *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static void
print(json_t *j)
{
	char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);

	printf("%s\n", s);
	free(s);
}

static json_t *
error(const char *msg)
{
	return json_pack("{s:s}", "error", msg);
}

/* A Python-ish feature: an integer list, a string, or something else. */
static void
feat_of(json_t *v, struct sq_feat *f)
{
	memset(f, 0, sizeof *f);
	if (v == NULL)
		f->type = SQ_ABSENT;
	else if (json_is_array(v) && (json_array_size(v) == 0 ||
	    json_is_integer(json_array_get(v, 0)))) {
		f->type = SQ_INT;
		f->v = ints(v, &f->n);
	} else {
		f->type = SQ_OTHER;
		f->tname = json_is_string(v) ? "string" : "float32";
	}
}

static json_t *
run(const char *fn, json_t *args)
{
	char msg[512];
	const char *m, *k;
	json_t *v, *seq;
	int64_t *t, *o, *s = NULL;
	size_t n, rows, cols, i;
	int64_t bos = json_integer_value(json_object_get(args, "bos_id"));

	if (strcmp(fn, "non_padding_position") == 0) {
		t = ints(json_object_get(args, "seq"), &n);
		o = calloc(n + 1, sizeof *o);
		sq_non_padding(t, n, o);
		return list(o, n);
	}
	if (strcmp(fn, "shift_right_by_one") == 0) {
		t = ints(json_object_get(args, "seq"), &n);
		o = calloc(n + 1, sizeof *o);
		sq_shift_right(t, n, 1, bos, o);
		return list(o, n);
	}
	if (strcmp(fn, "make_autoregressive_inputs") == 0) {
		json_t *tg = json_object_get(args, "targets"), *row, *out;

		rows = json_array_size(tg);
		cols = 1;
		if (rows && json_is_array(json_array_get(tg, 0)))
			cols = json_array_size(json_array_get(tg, 0));
		t = calloc(rows * cols + 1, sizeof *t);
		o = calloc(rows * cols + 1, sizeof *o);
		json_array_foreach(tg, i, row) {
			if (json_is_array(row)) {
				size_t j;
				json_t *x;

				json_array_foreach(row, j, x)
					t[i * cols + j] = json_integer_value(x);
			} else
				t[i] = json_integer_value(row);
		}
		if ((seq = json_object_get(args, "sequence_id")) != NULL)
			s = ints(seq, &n);
		if (sq_autoregressive(t, rows, cols, s, bos, o, &m) == -1)
			return error(m);
		if (cols == 1 && !json_is_array(json_array_get(tg, 0)))
			return list(o, rows);
		out = json_array();
		for (i = 0; i < rows; i++)
			json_array_append_new(out, list(o + i * cols, cols));
		return out;
	}
	if (strcmp(fn, "check_exact_match") == 0) {
		const char *e[64], *a[64];
		size_t ne, na;
		json_t *x;

		json_array_foreach(json_object_get(args, "expected"), ne, x)
			e[ne] = json_string_value(x);
		ne = json_array_size(json_object_get(args, "expected"));
		json_array_foreach(json_object_get(args, "actual"), na, x)
			a[na] = json_string_value(x);
		na = json_array_size(json_object_get(args, "actual"));
		if (sq_exact_match(e, ne, a, na,
		    json_string_value(json_object_get(args, "expected_source")),
		    json_string_value(json_object_get(args, "actual_source")),
		    msg, sizeof msg) == -1)
			return error(msg);
		return json_null();
	}
	if (strcmp(fn, "check_lengths") == 0) {
		json_t *ex = json_object_get(args, "example");
		json_t *el = json_object_get(args, "expected_lengths");
		int strict = json_is_true(json_object_get(args, "strict"));
		const char *label = json_string_value(json_object_get(args, "label"));

		json_object_foreach(ex, k, v) {
			if (json_object_get(el, k) == NULL)
				continue;
			if (sq_check_length(k, json_array_size(v),
			    (long)json_integer_value(json_object_get(el, k)),
			    strict, label, msg, sizeof msg) == -1)
				return error(msg);
		}
		return json_null();
	}
	if (strcmp(fn, "validate_features") == 0) {
		json_t *ex = json_object_get(args, "example"), *x;
		const char *label = json_string_value(json_object_get(args, "label"));
		struct sq_feat f;

		json_array_foreach(json_object_get(args, "features"), i, x) {
			feat_of(json_object_get(ex, json_string_value(x)), &f);
			if (sq_check_feature(json_string_value(x), f.type, f.tname,
			    f.v, f.n, label, msg, sizeof msg) == -1)
				return error(msg);
		}
		return json_null();
	}
	if (strcmp(fn, "prefixlm_convert_example") == 0) {
		json_t *fs = json_object_get(args, "features");
		int64_t *w, *wa, *din, *loss, *causal;
		int ltol = !json_is_false(json_object_get(args, "loss_on_targets_only"));

		t = ints(json_object_get(fs, "targets"), &n);
		w = ints(json_object_get(fs, "inputs_width"), &n);
		wa = ints(json_object_get(fs, "inputs_width_add_pos"), &n);
		din = calloc(n + 1, sizeof *din);
		loss = calloc(n + 1, sizeof *loss);
		causal = calloc(n + 1, sizeof *causal);
		sq_prefixlm_example(t, w, wa, n, bos, ltol, din, loss, causal);
		return json_pack("{s:o,s:o,s:o,s:o}", "decoder_target_tokens",
		    list(t, n), "decoder_input_tokens", list(din, n),
		    "decoder_loss_weights", list(loss, n),
		    "decoder_causal_attention", list(causal, n));
	}
	return error("unknown function");
}

/* Built with the sanitizer build's library, a test helper need not free. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

int
main(void)
{
	json_error_t je;
	json_t *c;

	if ((c = json_loadf(stdin, 0, &je)) == NULL) {
		fprintf(stderr, "seqio-unit: %s\n", je.text);
		return 2;
	}
	print(run(json_string_value(json_object_get(c, "function")),
	    json_object_get(c, "args")));
	return 0;
}
