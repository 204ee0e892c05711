/*
 * libFuzzer target that runs the batch loaders on small datasets: the
 * input is a loader configuration, a NUL, a manifest, a NUL, one byte
 * and a TFRecord stream.  The low two bits of the byte, plus one, are
 * the number of data files; the stream's records (as its length fields
 * frame them, whatever their CRCs) go to the files in turn, and what
 * cannot be framed goes whole to the file whose turn it is.  The
 * loader is opened on those files with the configuration (its own
 * "dataset" is not read) and run for a few batches, each written as
 * JSON and as an Example.  Besides not crashing and staying within its
 * memory (1 MiB a batch tensor here), a refusal or a fault must say
 * why, and the JSON must parse.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "loader.h"
#include "manifest.h"

#define MAXFILES	4
#define MAXBATCHES	16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* Stack frames that outlive their calls are bugs too (lazy lists kept one). */
const char *
__asan_default_options(void)
{
	return "detect_stack_use_after_return=1";
}

static char dir[64];
static char paths[MAXFILES][96];

static void
cleanup(void)
{
	for (int i = 0; i < MAXFILES; i++)
		unlink(paths[i]);
	rmdir(dir);
}

static int
setup(void)
{
	if (dir[0] != '\0')
		return 0;
	snprintf(dir, sizeof dir, "%s/fuzz-loader.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	for (int i = 0; i < MAXFILES; i++)
		snprintf(paths[i], sizeof paths[i], "%s/f%d.tfrecords", dir, i);
	atexit(cleanup);
	return 0;
}

/* Deal the records of p[0..n) to nf files. */
static int
write_files(const uint8_t *p, size_t n, int nf)
{
	int fd[MAXFILES], k = 0, rc = 0;
	size_t i = 0;

	for (int f = 0; f < nf; f++)
		if ((fd[f] = open(paths[f], O_WRONLY | O_CREAT | O_TRUNC,
		    0600)) == -1)
			abort();
	while (i < n) {
		size_t end = n;

		if (n - i >= 16) {
			uint64_t len = rp_le64(p + i);

			if (len <= n - i - 16)
				end = i + 16 + (size_t)len;
		}
		if (write(fd[k], p + i, end - i) != (ssize_t)(end - i))
			rc = -1;
		i = end;
		k = (k + 1) % nf;
	}
	for (int f = 0; f < nf; f++)
		close(fd[f]);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul1, *nul2, *rest;
	char err[1024], *files[MAXFILES];
	struct ld_config *c;
	struct ld_dataset d;
	struct loader *l;
	struct buf b = { 0 };
	int nf, r = 0;

	if (setup() == -1 ||
	    (nul1 = memchr(data, '\0', size)) == NULL ||
	    (nul2 = memchr(nul1 + 1, '\0', size - (size_t)(nul1 + 1 - data))) == NULL ||
	    (size_t)(nul2 + 1 - data) >= size)
		return 0;
	rest = nul2 + 1;
	nf = (*rest & 3) + 1;
	rest++;
	if ((c = ld_config_parse((const char *)data, (size_t)(nul1 - data),
	    err, sizeof err)) == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	ld_config_set_max_bytes(c, 1u << 20);
	memset(&d, 0, sizeof d);
	if (mf_parse(&d.mf, (const char *)nul1 + 1, (size_t)(nul2 - nul1 - 1),
	    err, sizeof err) == -1) {
		if (err[0] == '\0')
			abort();
		ld_config_free(c);
		return 0;
	}
	if (write_files(rest, size - (size_t)(rest - data), nf) == -1)
		abort();
	for (int f = 0; f < nf; f++)
		files[f] = paths[f];
	d.files = files;
	d.nfiles = (size_t)nf;
	d.manifest_path = (char *)"__manifest__.json";
	if ((l = ld_open(c, &d, 1, err, sizeof err)) == NULL) {
		if (err[0] == '\0')
			abort();
		if (getenv("FUZZ_LOADER_VERBOSE"))
			fprintf(stderr, "refused: %s\n", err);
		goto out;
	}
	ld_set_max_record(l, 1u << 16);
	for (int k = 0; k < MAXBATCHES && (r = ld_next(l, err, sizeof err)) == 1;
	    k++) {
		json_t *j;

		b.len = 0;
		if (ld_write_json(l, &b) == -1)
			abort();
		if ((j = json_loadb((const char *)b.p, b.len, 0, NULL)) == NULL)
			abort();
		json_decref(j);
		b.len = 0;
		if (ld_write_example(l, &b) == -1)
			abort();
	}
	if (r == -1 && err[0] == '\0')
		abort();
	if (getenv("FUZZ_LOADER_VERBOSE"))	/* what a seed does */
		fprintf(stderr, "%d: %s\n", r, r == -1 ? err : "ok");
	ld_close(l);
out:
	rp_buf_free(&b);
	mf_free(&d.mf);
	ld_config_free(c);
	return 0;
}
