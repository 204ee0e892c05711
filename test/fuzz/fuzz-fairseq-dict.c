/*
 * Fuzz the fairseq dictionary: counting, finalize, save, load,
 * encode_line and the universal-newline line reader.  Input: three
 * bytes of options (threshold and whether to encode through the word
 * cache, nwords, padding factor), then text.  The
 * text is counted into a dictionary, which is saved, loaded back and
 * checked symbol for symbol; the text is also loaded as a dict.txt of
 * its own, and its lines encoded through both dictionaries and checked
 * against the words they are made of.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fairseq_dict.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

/*
 * Every id of a line is its word's id (or <unk>), then </s>.  The ids go
 * to one buffer for every line of every run, as a tool keeps one.
 */
static void
encode_check(struct fqd *d, const uint8_t *p, size_t n)
{
	static uint32_t *ids;
	static size_t cap;
	size_t nunk = 9, bad = 0, pos = 0, wn, k = 0, unk = 0;
	const uint8_t *w;
	long m;
	int rc;

	m = fqd_encode_line(d, p, n, &ids, &cap, &nunk, &bad);
	if (m == -1) {
		check(bad < n);
		return;
	}
	while ((rc = fqd_next_word(p, n, &pos, &w, &wn)) == 1) {
		long id = fqd_find(d, w, wn);

		check(wn > 0);
		check((long)k < m - 1);
		check(ids[k] == (uint32_t)(id < 0 ? FQD_UNK : id));
		unk += id < 0;
		if (id >= 0) {
			size_t sl;
			const char *s = fqd_symbol(d, (size_t)id, &sl);

			check(sl == wn && memcmp(s, w, wn) == 0);
		}
		k++;
	}
	check(rc == 0);
	check((long)k == m - 1 && ids[k] == FQD_EOS && nunk == unk);
}

/*
 * Lines from a file must be the reference split of the bytes.  The file
 * is a pipe that holds them all (a temporary file made and removed each
 * run took most of the time).
 */
static void
lines_check(const uint8_t *p, size_t n)
{
	struct fqd_lines *r;
	const uint8_t *line;
	size_t len, at = 0;
	int fd[2];

	if (n > 65536 || pipe(fd) == -1)
		return;
	check(write(fd[1], p, n) == (ssize_t)n && close(fd[1]) == 0);
	check((r = fqd_lines_new(fd[0])) != NULL);
	while (fqd_lines_next(r, &line, &len) == 1) {
		size_t e = at;

		while (e < n && p[e] != '\n' && p[e] != '\r')
			e++;
		check(fqd_lines_offset(r) == at);
		check(len == e - at && memcmp(line, p + at, len) == 0);
		if (e == n)
			at = n;
		else if (p[e] == '\r' && e + 1 < n && p[e + 1] == '\n')
			at = e + 2;
		else
			at = e + 1;
	}
	check(at == n);
	fqd_lines_free(r);
	close(fd[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fqd *d, *e;
	struct buf out = { 0 };
	char err[FQD_ERRMAX];
	size_t pos = 0, bad;
	long long thr, nw, pf;
	int cache;

	if (size < 3)
		return 0;
	thr = (int8_t)data[0] % 4;
	cache = data[0] >> 2 & 1;
	nw = (int8_t)data[1] % 24;
	pf = data[2] % 11;
	data += 3;
	size -= 3;

	lines_check(data, size);

	/* Count the lines, finalize, save, load back. */
	check((d = fqd_new(1)) != NULL);
	while (pos <= size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - data) : size;

		if (fqd_count_line(d, data + pos, end - pos, &bad) == -1) {
			check(bad <= end - pos);
			fqd_free(d);
			goto self;
		}
		pos = end + 1;
	}
	check(fqd_finalize(d, thr, nw, pf) == 0);
	check(pf <= 1 || fqd_size(d) % (size_t)pf == 0);
	for (size_t i = FQD_NSPECIAL + 1; i < fqd_size(d); i++)
		check(fqd_count(d, i - 1) >= fqd_count(d, i) ||
		    fqd_count(d, i) == 0);
	check(fqd_save(d, &out) == 0);
	e = fqd_load(out.p, out.len, err, sizeof err);
	check(e != NULL);
	check(fqd_size(e) == fqd_size(d));
	for (size_t i = 0; i < fqd_size(d); i++) {
		size_t a, b;
		const char *x = fqd_symbol(d, i, &a), *y = fqd_symbol(e, i, &b);

		check(a == b && memcmp(x, y, a) == 0);
		check(fqd_count(d, i) == fqd_count(e, i) || i < FQD_NSPECIAL);
		check(fqd_find(e, x, a) == (long)i);
	}
	/*
	 * Encode without the word cache, then (when bit 2 of the first byte
	 * says so) with it made, as a few thousand lookups make it, while
	 * it fills and once it is full.
	 */
	for (int round = 0; round < (cache ? 3 : 1); round++) {
		if (round == 1)
			check(fqd_cache_now(e) == 0);
		pos = 0;
		while (pos <= size) {
			const uint8_t *nl = memchr(data + pos, '\n', size - pos);
			size_t end = nl ? (size_t)(nl - data) : size;

			encode_check(e, data + pos, end - pos);
			pos = end + 1;
		}
	}
	fqd_free(e);
	fqd_free(d);
	rp_buf_free(&out);

self:
	/* The input as a dict.txt of its own. */
	if ((d = fqd_load(data, size, err, sizeof err)) != NULL) {
		check(fqd_size(d) >= FQD_NSPECIAL);
		encode_check(d, data, size);
		fqd_free(d);
	} else
		check(err[0] != '\0');
	return 0;
}
