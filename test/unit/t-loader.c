/*
 * Unit tests for lib/loader: configuration checks with key paths, and
 * property tests over small datasets written here: the shuffle buffer's
 * bound and permutations, continuous windows (with strides past the
 * records held), discrete windows, slices with negative steps.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "example.h"
#include "loader.h"
#include "record.h"
#include "tap.h"

static char dir[] = "/tmp/t-loader.XXXXXX";
static uint64_t maxbytes;	/* ld_config_set_max_bytes(), unless 0 */

/* file 'name': n records; record r holds "v" = [base + r * k .. + k - 1] as a feature list (seq) or list */
static void
write_file(const char *name, int n, int k, int base, int seq)
{
	char path[256];
	struct rec_writer *w;
	struct buf b = { 0 };
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = rec_writer_open(fd, REC_NONE, -1);
	for (int r = 0; r < n; r++) {
		b.len = 0;
		if (!seq) {
			struct ex_builder eb;
			int64_t v[16];

			exb_init(&eb);
			for (int i = 0; i < k; i++)
				v[i] = base + r * k + i;
			exb_int64(&eb, "v", v, (size_t)k);
			exb_encode(&eb, &b);
			exb_free(&eb);
		} else {
			/* a SequenceExample by hand: feature_lists { v: k steps of one int64 } */
			struct buf fl = { 0 }, ent = { 0 }, lists = { 0 };
			uint8_t t[16], *q;

			for (int i = 0; i < k; i++) {
				uint8_t f[16];
				size_t m;

				q = ex_put_varint(f + 4, (uint64_t)(base + r * k + i));
				m = (size_t)(q - (f + 4));
				f[0] = 0x1a;			/* Feature.int64_list */
				f[1] = (uint8_t)(2 + m);
				f[2] = 0x0a;			/* Int64List.value (packed) */
				f[3] = (uint8_t)m;
				rp_buf_putc(&fl, 0x0a);		/* FeatureList.feature */
				rp_buf_putc(&fl, 4 + (int)m);
				rp_buf_append(&fl, f, 4 + m);
			}
			rp_buf_append(&ent, "\x0a\x01v\x12", 4);	/* key "v", value */
			q = ex_put_varint(t, fl.len);
			rp_buf_append(&ent, t, (size_t)(q - t));
			rp_buf_append(&ent, fl.p, fl.len);
			rp_buf_putc(&lists, 0x0a);			/* FeatureLists.feature_list */
			q = ex_put_varint(t, ent.len);
			rp_buf_append(&lists, t, (size_t)(q - t));
			rp_buf_append(&lists, ent.p, ent.len);
			rp_buf_putc(&b, 0x12);			/* SequenceExample.feature_lists */
			q = ex_put_varint(t, lists.len);
			rp_buf_append(&b, t, (size_t)(q - t));
			rp_buf_append(&b, lists.p, lists.len);
			rp_buf_free(&fl);
			rp_buf_free(&ent);
			rp_buf_free(&lists);
		}
		rec_write(w, b.p, b.len);
	}
	rec_writer_close(w);
	close(fd);
	rp_buf_free(&b);
}

static void
write_text(const char *name, const char *text)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fp = fopen(path, "w");
	fputs(text, fp);
	fclose(fp);
}

/*
 * Run a loader and collect the first values of each example of "v" (or
 * all values with all=1) into out; returns the number, -1 on a fault.
 */
static int
run(const char *cfgtext, uint64_t seed, int64_t *out, int max, int all,
    int *lens, char *err, size_t errlen)
{
	struct ld_config *c;
	struct ld_dataset d;
	struct loader *l;
	struct buf b = { 0 };
	int n = 0, r;

	if ((c = ld_config_parse(cfgtext, strlen(cfgtext), err, errlen)) == NULL)
		return -1;
	if (maxbytes)
		ld_config_set_max_bytes(c, maxbytes);
	if (ld_dataset_json(&d, ld_config_dataset(c), "dataset", err, errlen) == -1) {
		ld_config_free(c);
		return -1;
	}
	if ((l = ld_open(c, &d, seed, err, errlen)) == NULL) {
		ld_dataset_free(&d);
		ld_config_free(c);
		return -1;
	}
	while ((r = ld_next(l, err, errlen)) == 1) {
		json_t *j, *v, *sh;
		size_t per, nb;

		b.len = 0;
		ld_write_json(l, &b);
		j = json_loadb((const char *)b.p, b.len, 0, NULL);
		v = json_object_get(json_object_get(j, "v"), "values");
		sh = json_object_get(json_object_get(j, "v"), "shape");
		nb = (size_t)json_integer_value(json_array_get(sh, 0));
		per = json_array_size(v) / nb;
		for (size_t e = 0; e < nb; e++) {
			if (lens && n < max)
				lens[n] = (int)per;
			for (size_t i = 0; i < (all ? per : 1) && n < max; i++)
				out[n++] = json_integer_value(json_array_get(v, e * per + i));
		}
		json_decref(j);
	}
	rp_buf_free(&b);
	ld_close(l);
	ld_dataset_free(&d);
	ld_config_free(c);
	return r == -1 ? -1 : n;
}

static char cfg[2048];

static const char *
config(const char *type, const char *extra)
{
	snprintf(cfg, sizeof cfg, "{\"type\": \"%s\", \"name\": \"t\", "
	    "\"dataset\": {\"type\": \"dir\", \"args\": {\"data_dir\": \"%s\"}}, "
	    "\"num_read_buffer_bytes\": 0, \"num_prefetch\": 1, "
	    "\"primary_features\": [{\"from_name\": \"v\", \"to_name\": \"v\"}], %s}",
	    type, dir, extra);
	return cfg;
}

static int
refused(const char *text, const char *want)
{
	char err[512];
	struct ld_config *c = ld_config_parse(text, strlen(text), err, sizeof err);

	if (c != NULL) {
		ld_config_free(c);
		printf("# accepted\n");
		return 0;
	}
	if (strcmp(err, want) != 0) {
		printf("# got: %s\n", err);
		return 0;
	}
	return 1;
}

int
main(void)
{
	int64_t v[4096];
	int lens[4096], n, ok, seen[200];
	char err[512];

	if (mkdtemp(dir) == NULL)
		return 1;

	/* configuration key paths */
	TEST(refused(config("independent", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"processing_steps\": [{\"tensor\": \"v\", \"type\": \"slice\", "
	    "\"args\": {\"slice\": \"[1:2:3:4]\"}}]"),
	    "processing_steps[0].args.slice: '[1:2:3:4]': more than two ':' in an item"),
	    "a slice with three colons");
	TEST(refused(config("independent", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"processing_steps\": [{\"tensor\": \"v\", \"type\": \"slice\", "
	    "\"args\": {\"slice\": \"[a]\"}}]"),
	    "processing_steps[0].args.slice: '[a]': 'a' is not an integer"), "a slice with a name");
	TEST(refused(config("continuous_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"min_window\": 3, \"max_window\": 2"),
	    "max_window: 2 is below min_window 3"), "max_window below min_window");
	TEST(refused(config("discrete_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"min_window\": 1, \"max_window\": 2, \"stride\": 1"),
	    "stride: only for continuous_sequence"), "stride is continuous only");
	TEST(refused(config("independent", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"secondary_features\": [{\"to_name\": \"o\", \"type\": \"zeros\", \"args\": {}}]"),
	    "secondary_features[0].type: unknown secondary feature type 'zeros' (expected const or ones)"),
	    "secondary types");

	/* independent: 3 files of 40 records, values 0..119 */
	write_file("a.tfrecords", 40, 1, 0, 0);
	write_file("b.tfrecords", 40, 1, 40, 0);
	write_file("c.tfrecords", 40, 1, 80, 0);
	write_text("__manifest__.json", "{\"compression\": null, \"allow_var_len\": false, "
	    "\"features\": [{\"name\": \"v\", \"dtype\": \"int64\", \"shape\": [], \"deserialize_type\": \"int\"}]}");
	n = run(config("independent", "\"target_batch_size\": 7, \"drop_remainder\": false, \"epochs\": 1"),
	    1, v, 4096, 0, NULL, err, sizeof err);
	ok = n == 120;
	for (int i = 0; ok && i < n; i++)
		ok = v[i] == i;
	TEST(ok, "unshuffled: every record once, in order (%d)", n);

	/* shuffled, for many seeds: each epoch a permutation; the buffer bounds the moves */
	ok = 1;
	for (uint64_t seed = 1; seed <= 30 && ok; seed++) {
		n = run(config("independent", "\"target_batch_size\": 16, \"drop_remainder\": false, "
		    "\"epochs\": 2, \"shuffle\": true, \"num_shuffle_buffer_elements\": 5, "
		    "\"num_filenames_shuffle_buffer\": 1, \"num_mix_files\": 1"), seed, v, 4096, 0,
		    NULL, err, sizeof err);
		ok = n == 240;
		for (int e = 0; ok && e < 2; e++) {
			memset(seen, 0, sizeof seen);
			for (int i = 0; i < 120 && ok; i++) {
				int64_t x = v[e * 120 + i];

				ok = x >= 0 && x < 120 && !seen[x] && x < i + 5;
				seen[x] = 1;
			}
		}
	}
	TEST(ok, "shuffled epochs are permutations; element i out is among the first i + 5 in");

	/* with files shuffled and mixed, still permutations */
	ok = 1;
	for (uint64_t seed = 1; seed <= 30 && ok; seed++) {
		n = run(config("independent", "\"target_batch_size\": 16, \"drop_remainder\": false, "
		    "\"epochs\": 1, \"shuffle\": true, \"num_shuffle_buffer_elements\": 1, "
		    "\"num_filenames_shuffle_buffer\": 3, \"num_mix_files\": 2"), seed, v, 4096, 0,
		    NULL, err, sizeof err);
		memset(seen, 0, sizeof seen);
		ok = n == 120;
		for (int i = 0; i < n && ok; i++) {
			ok = !seen[v[i]];
			seen[v[i]] = 1;
		}
		/* with a buffer of 1, each file's records keep their order */
		for (int i = 0, last[3] = { -1, -1, -1 }; i < n && ok; i++) {
			int f = (int)(v[i] / 40);

			ok = v[i] > last[f];
			last[f] = (int)v[i];
		}
	}
	TEST(ok, "interleaved files: a permutation, each file in its order");

	/* more files open and buffered than there are change nothing (2^62 crashed) */
	{
		static int64_t w[4096];
		int m;

		n = run(config("independent", "\"target_batch_size\": 16, \"drop_remainder\": false, "
		    "\"epochs\": 2, \"shuffle\": true, \"num_shuffle_buffer_elements\": 7, "
		    "\"num_filenames_shuffle_buffer\": 3, \"num_mix_files\": 3"), 9, v, 4096, 0,
		    NULL, err, sizeof err);
		m = run(config("independent", "\"target_batch_size\": 16, \"drop_remainder\": false, "
		    "\"epochs\": 2, \"shuffle\": true, \"num_shuffle_buffer_elements\": 7, "
		    "\"num_filenames_shuffle_buffer\": 4611686018427387904, "
		    "\"num_mix_files\": 4611686018427387904"), 9, w, 4096, 0, NULL, err, sizeof err);
		TEST(n == 240 && m == n && memcmp(v, w, (size_t)n * sizeof *v) == 0,
		    "num_mix_files and num_filenames_shuffle_buffer past the files: the same batches");
	}

	/* a configuration past the bytes a batch tensor may take is refused naming the key */
	maxbytes = 400;
	n = run(config("independent", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"processing_steps\": [{\"tensor\": \"v\", \"type\": \"onehot\", "
	    "\"args\": {\"depth\": 32, \"dtype\": \"int64\"}}]"), 1, v, 4096, 0, NULL, err, sizeof err);
	TEST(n == 120, "a one-hot batch of 256 bytes fits in 400");
	n = run(config("independent", "\"target_batch_size\": 2, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"processing_steps\": [{\"tensor\": \"v\", \"type\": \"onehot\", "
	    "\"args\": {\"depth\": 32, \"dtype\": \"int64\"}}]"), 1, v, 4096, 0, NULL, err, sizeof err);
	TEST(n == -1 && strcmp(err, "processing_steps[0].args.depth: a batch of 2 'v' takes at "
	    "least 512 bytes as int64 (32 values each), more than the 400 a tensor of a batch may "
	    "take") == 0, "one of 512 does not: %s", err);
	n = run(config("independent", "\"target_batch_size\": 3, \"drop_remainder\": false, "
	    "\"epochs\": 1"), 1, v, 4096, 0, NULL, err, sizeof err);
	TEST(n == -1 && strncmp(err, "target_batch_size: 3 examples held at once take at least ",
	    57) == 0, "examples held count: %s", err);
	maxbytes = 0;

	/* continuous: one file of 30 records x 4 steps, values 0..119 */
	{
		char p[256];

		snprintf(p, sizeof p, "%s/a.tfrecords", dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/b.tfrecords", dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/c.tfrecords", dir);
		unlink(p);
	}
	write_file("s.tfrecords", 30, 4, 0, 1);
	write_text("__manifest__.json", "{\"compression\": null, \"allow_var_len\": true, "
	    "\"features\": [{\"name\": \"v\", \"dtype\": \"int64\", \"shape\": [], \"var_len\": true, "
	    "\"deserialize_type\": \"int\"}]}");
	ok = 1;
	for (uint64_t seed = 1; seed <= 20 && ok; seed++) {
		int pos = 0;

		n = run(config("continuous_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
		    "\"epochs\": 1, \"min_window\": 3, \"max_window\": 9, \"stride\": 11"), seed, v, 4096, 1,
		    lens, err, sizeof err);
		ok = n > 0;
		if (n < 0)
			printf("# %s\n", err);
		/* windows start at 0, 11, 22, ...; each of 3..9 consecutive steps */
		for (int i = 0, w = 0; i < n && ok; w++) {
			ok = lens[i] >= 3 && lens[i] <= 9 && v[i] == w * 11;
			for (int k = 1; k < lens[i] && ok; k++)
				ok = v[i + k] == v[i] + k;
			pos = (int)v[i] + lens[i];
			i += lens[i];
		}
		ok = ok && pos <= 120 && pos > 120 - 11 - 9;
	}
	TEST(ok, "continuous: windows every stride, drawn lengths 3..9, none past the end");

	/* discrete: windows of 2..3 whole records (4 steps each), consecutive */
	ok = 1;
	for (uint64_t seed = 1; seed <= 20 && ok; seed++) {
		int next = 0;

		n = run(config("discrete_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
		    "\"epochs\": 1, \"min_window\": 2, \"max_window\": 3"), seed, v, 4096, 1, lens,
		    err, sizeof err);
		ok = n == 120 || (n >= 120 - 8 && n < 120);
		for (int i = 0; i < n && ok; i += lens[i]) {
			ok = (lens[i] == 8 || lens[i] == 12) && v[i] == next;
			next += lens[i];
		}
	}
	TEST(ok, "discrete: windows of 2 or 3 whole records, consecutive, none cut");

	/* slices with negative steps: [::-2] of a window of 5 steps */
	n = run(config("discrete_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"min_window\": 1, \"max_window\": 1, \"processing_steps\": "
	    "[{\"tensor\": \"v\", \"type\": \"slice\", \"args\": {\"slice\": \"[::-2]\"}}]"), 1, v, 8,
	    1, lens, err, sizeof err);
	TEST(n == 8 && v[0] == 3 && v[1] == 1 && v[2] == 7 && v[3] == 5, "[::-2] reverses every other step");
	n = run(config("discrete_sequence", "\"target_batch_size\": 1, \"drop_remainder\": false, "
	    "\"epochs\": 1, \"min_window\": 1, \"max_window\": 1, \"processing_steps\": "
	    "[{\"tensor\": \"v\", \"type\": \"slice\", \"args\": {\"slice\": \"[-3:10]\"}}]"), 1, v, 6,
	    1, lens, err, sizeof err);
	TEST(n == 6 && v[0] == 1 && v[2] == 3 && v[3] == 5, "[-3:10] clamps as Python does");

	{
		char cmd[300];

		if (getenv("KEEP"))
			return tap_done();
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_done();
}
