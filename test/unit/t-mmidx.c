/*
 * Unit tests for lib/mmidx: byte layouts, every dtype in both layouts,
 * layout detection, corrupt indexes, merging.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmidx.h"
#include "tap.h"

static char dir[256];
static char errbuf[512];

static char *
path(const char *name, const char *ext)
{
	static char p[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s%s", dir, name, ext);
	return p[k];
}

static int
fdw(const char *name, const char *ext)
{
	return open(path(name, ext), O_WRONLY | O_CREAT | O_TRUNC, 0666);
}

/* Read a whole file into a malloc'd buffer. */
static uint8_t *
slurp(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b = malloc(1 << 16);

	*n = f != NULL ? fread(b, 1, 1 << 16, f) : 0;
	if (f != NULL)
		fclose(f);
	return b;
}

static void
spit(const char *p, const uint8_t *b, size_t n)
{
	FILE *f = fopen(p, "wb");

	fwrite(b, 1, n, f);
	fclose(f);
}

/* Sequences as one flat array with lengths. */
struct seqs {
	size_t		 nseq;
	const size_t	*len;
	const int64_t	*v;
};

static int
build(const char *name, enum mmidx_layout layout, enum mmidx_dtype t,
    unsigned flags, const struct seqs *s)
{
	int bfd = fdw(name, ".bin"), ifd = fdw(name, ".idx"), rc = -1;
	struct mmidx_builder *b = mmidx_builder_new(bfd, layout, t, flags,
	    errbuf, sizeof errbuf);
	size_t off = 0;

	if (b == NULL)
		goto out;
	for (size_t i = 0; i < s->nseq; i++) {
		if (layout == MMIDX_MEGATRON_MM)
			mmidx_set_mode(b, (int)i % 3 - 1);
		if (mmidx_add_i64(b, s->v + off, s->len[i]) == -1)
			goto out;
		off += s->len[i];
	}
	rc = mmidx_finish(b, ifd);
out:
	mmidx_builder_free(b);
	close(bfd);
	close(ifd);
	return rc;
}

static void
test_worked_example(void)
{
	static const size_t len[] = { 3, 0, 2, 1 };
	static const int64_t v[] = { 1, 2, 3, 65535, 0, 7 };
	static const uint8_t bin[] = { 1, 0, 2, 0, 3, 0, 0xff, 0xff, 0, 0, 7, 0 };
	static const uint8_t fhead[] = { 'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0,
	    1, 0, 0, 0, 0, 0, 0, 0, 8, 4, 0, 0, 0, 0, 0, 0, 0 };
	struct seqs s = { 4, len, v };
	uint8_t *p;
	size_t n;

	TEST(build("ex-f", MMIDX_FAIRSEQ, MMIDX_UINT16, 0, &s) == 0,
	    "worked example builds (fairseq)");
	p = slurp(path("ex-f", ".bin"), &n);
	TEST(n == sizeof bin && memcmp(p, bin, n) == 0, "worked example .bin bytes");
	free(p);
	p = slurp(path("ex-f", ".idx"), &n);
	TEST_INT(n, ==, 74, "fairseq .idx is 26 + 12N bytes");
	TEST(memcmp(p, fhead, 26) == 0, "fairseq header bytes");
	TEST(p[26] == 3 && p[30] == 0 && p[34] == 2 && p[38] == 1, "sizes 3 0 2 1");
	TEST(p[42] == 0 && p[50] == 6 && p[58] == 6 && p[66] == 10,
	    "pointers 0 6 6 10 (unaligned int64 at 42)");
	free(p);

	TEST(build("ex-m", MMIDX_MEGATRON, MMIDX_UINT16, MMIDX_DOC_EACH, &s) == 0,
	    "worked example builds (megatron)");
	p = slurp(path("ex-m", ".idx"), &n);
	TEST_INT(n, ==, 122, "Megatron .idx is 34 + 12N + 8D bytes");
	TEST(memcmp(p, fhead, 26) == 0 && p[26] == 5, "same header, then D = 5");
	TEST(p[34 + 48] == 0 && p[34 + 48 + 32] == 4, "document_indices 0 .. 4");
	free(p);
}

/* Extremes of each integer type, plus a float-friendly set. */
static void
test_dtype_roundtrips(void)
{
	static const enum mmidx_layout layouts[] = { MMIDX_FAIRSEQ,
	    MMIDX_MEGATRON, MMIDX_MEGATRON_MM };

	for (int t = 0; t < MMIDX_NDTYPE; t++)
		for (int l = 0; l < 3; l++) {
			enum mmidx_layout lay = layouts[l];
			int64_t lo, hi, v[6];
			size_t len[4] = { 2, 0, 3, 1 };
			struct seqs s = { 4, len, v };
			struct mmidx *m;
			const uint8_t *p;
			uint64_t n;
			int ok = 1, code = mmidx_dtype_code(lay, t);
			const char *name = mmidx_dtype_name(t);

			switch (t) {
			case MMIDX_UINT8: lo = 0; hi = 255; break;
			case MMIDX_INT8: lo = -128; hi = 127; break;
			case MMIDX_INT16: lo = -32768; hi = 32767; break;
			case MMIDX_UINT16: lo = 0; hi = 65535; break;
			case MMIDX_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
			case MMIDX_UINT32: lo = 0; hi = UINT32_MAX; break;
			case MMIDX_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
			case MMIDX_UINT64: lo = 0; hi = INT64_MAX; break;
			default: lo = -16777216; hi = 16777216; break;
			}
			v[0] = lo; v[1] = hi; v[2] = 0; v[3] = 1; v[4] = hi - 1;
			v[5] = lo + 1;
			if (code == -1) {
				TEST(build("rt", lay, t, MMIDX_DOC_EACH, &s) == -1,
				    "%s cannot write %s", mmidx_layout_name(lay), name);
				continue;
			}
			TEST(build("rt", lay, t, MMIDX_DOC_EACH, &s) == 0,
			    "%s %s builds", mmidx_layout_name(lay), name);
			m = mmidx_open(path("rt", ""), MMIDX_AUTO, errbuf,
			    sizeof errbuf);
			TEST(m != NULL, "%s %s opens: %s", mmidx_layout_name(lay),
			    name, m ? "" : errbuf);
			if (m == NULL)
				continue;
			TEST(mmidx_layout(m) == lay && (int)mmidx_dtype(m) == t &&
			    (int)mmidx_code(m) == code,
			    "%s %s: layout and dtype detected", mmidx_layout_name(lay),
			    name);
			TEST(mmidx_verify(m) == 0, "%s %s verifies",
			    mmidx_layout_name(lay), name);
			for (size_t i = 0, off = 0; i < 4; off += len[i++]) {
				if (mmidx_seq(m, i, &p, &n) == -1 || n != len[i]) {
					ok = 0;
					break;
				}
				for (uint64_t k = 0; k < n; k++)
					if (mmidx_load_i64(t, p, k) != v[off + k])
						ok = 0;
				if (lay == MMIDX_MEGATRON_MM &&
				    mmidx_mode(m, i) != (int)i % 3 - 1)
					ok = 0;
			}
			TEST(ok, "%s %s: tokens (and modes) round trip",
			    mmidx_layout_name(lay), name);
			if (mmidx_seq(m, 2, &p, &n) == 0) {
				int64_t bulk[3];
				mmidx_load_i64s(t, p, n, bulk);
				TEST(bulk[0] == mmidx_load_i64(t, p, 0) &&
				    bulk[2] == mmidx_load_i64(t, p, 2),
				    "%s %s: bulk loads match", mmidx_layout_name(lay), name);
			}
			mmidx_close(m);
		}
}

static void
test_open_mem(void)
{
	size_t in, bn;
	uint8_t *idx = slurp(path("ex-m", ".idx"), &in);
	uint8_t *bin = slurp(path("ex-m", ".bin"), &bn);
	struct mmidx *m = mmidx_open_mem(idx, in, bin, bn, "mem", MMIDX_AUTO,
	    errbuf, sizeof errbuf);
	const uint8_t *p;
	uint64_t n;

	TEST(m != NULL && mmidx_layout(m) == MMIDX_MEGATRON &&
	    mmidx_seq(m, 2, &p, &n) == 0 && n == 2 &&
	    mmidx_load_i64(MMIDX_UINT16, p, 0) == 65535 && mmidx_verify(m) == 0,
	    "a dataset in memory reads as the same files do");
	mmidx_close(m);
	m = mmidx_open_mem(idx, in - 8, bin, bn, "mem", MMIDX_AUTO, errbuf,
	    sizeof errbuf);
	TEST(m == NULL && strncmp(errbuf, "mem.idx: size 114 matches no layout", 35) == 0,
	    "in-memory faults are named after the given name: %s", errbuf);
	free(idx);
	free(bin);
}

static void
test_range(void)
{
	static const size_t len[] = { 2 };
	static const int64_t v[] = { 70000, -1 };
	struct seqs s = { 1, len, v };
	struct mmidx *m;
	const uint8_t *p;
	uint64_t n;
	int bfd = fdw("rg", ".bin");
	struct mmidx_builder *b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ,
	    MMIDX_UINT16, 0, errbuf, sizeof errbuf);

	TEST(mmidx_add_i64(b, v, 2) == -1 && mmidx_builder_bad_token(b) == 0,
	    "70000 does not fit uint16");
	TEST(strstr(mmidx_builder_strerror(b), "70000") != NULL, "message names it: %s",
	    mmidx_builder_strerror(b));
	TEST(mmidx_builder_count(b) == 0, "nothing was added");
	mmidx_builder_free(b);
	close(bfd);
	TEST(build("wrap", MMIDX_FAIRSEQ, MMIDX_UINT16, MMIDX_WRAP, &s) == 0,
	    "--wrap builds");
	m = mmidx_open(path("wrap", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL && mmidx_seq(m, 0, &p, &n) == 0 && n == 2 &&
	    mmidx_load_i64(MMIDX_UINT16, p, 0) == 4464 &&
	    mmidx_load_i64(MMIDX_UINT16, p, 1) == 65535,
	    "wrapped as upstream: 70000 -> 4464, -1 -> 65535");
	mmidx_close(m);
}

static void
test_empty(void)
{
	struct seqs s = { 0, NULL, NULL };
	static const size_t len[] = { 0, 0 };
	struct seqs e = { 2, len, NULL };
	struct mmidx *m;
	const uint8_t *p;
	uint64_t n;

	TEST(build("empty", MMIDX_MEGATRON, MMIDX_INT32, MMIDX_DOC_EACH, &s) == 0,
	    "empty dataset builds");
	m = mmidx_open(path("empty", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL && mmidx_count(m) == 0 && mmidx_bin_size(m) == 0 &&
	    mmidx_idx_size(m) == 42 && mmidx_verify(m) == 0,
	    "0-byte .bin opens (upstream mmap readers cannot)");
	mmidx_close(m);
	TEST(build("empty2", MMIDX_FAIRSEQ, MMIDX_INT32, 0, &e) == 0,
	    "all-empty sequences build");
	m = mmidx_open(path("empty2", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL && mmidx_seq(m, 1, &p, &n) == 0 && n == 0 && p == NULL &&
	    mmidx_seq(m, 2, &p, &n) == -1, "empty sequences read, index 2 is out of range");
	mmidx_close(m);
}

/* Write a mutated copy of ex-f/ex-m under 'name' and try to open it. */
static struct mmidx *
mutant(const char *src, const char *name, size_t at, int val, long trunc,
    enum mmidx_layout force)
{
	size_t n, bn;
	uint8_t *p = slurp(path(src, ".idx"), &n), *b = slurp(path(src, ".bin"), &bn);
	struct mmidx *m;

	if (at != (size_t)-1)
		p[at] = (uint8_t)val;
	if (trunc > 0)
		memset(p + n, 0xee, (size_t)trunc);	/* trailing garbage */
	n = (size_t)((long)n + trunc);
	spit(path(name, ".idx"), p, n);
	spit(path(name, ".bin"), b, bn);
	free(p);
	free(b);
	errbuf[0] = 0;
	m = mmidx_open(path(name, ""), force, errbuf, sizeof errbuf);
	return m;
}

static void
test_corrupt(void)
{
	struct mmidx *m;
	const uint8_t *p;
	uint64_t n;

	m = mutant("ex-f", "c1", (size_t)-1, 0, -1, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "c1.idx") != NULL, "truncated index: %s", errbuf);
	m = mutant("ex-f", "c2", (size_t)-1, 0, 1, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "matches no layout") != NULL,
	    "trailing byte rejected: %s", errbuf);
	m = mutant("ex-f", "c3", 0, 'X', 0, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "bad magic") != NULL, "bad magic: %s", errbuf);
	m = mutant("ex-f", "c4", 9, 2, 0, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "version 2") != NULL, "version 2: %s", errbuf);
	m = mutant("ex-f", "c5", 17, 11, 0, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "dtype code 11") != NULL, "code 11: %s", errbuf);
	m = mutant("ex-m", "c6", 17, 9, 0, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "not a Megatron type") != NULL,
	    "code 9 in a Megatron index: %s", errbuf);
	m = mutant("ex-m", "c7", (size_t)-1, 0, 0, MMIDX_FAIRSEQ);
	TEST(m == NULL && strstr(errbuf, "not a fairseq index") != NULL,
	    "Megatron index read as fairseq: %s", errbuf);
	m = mutant("ex-f", "c8", (size_t)-1, 0, 0, MMIDX_MEGATRON);
	TEST(m == NULL && strstr(errbuf, "not a Megatron index") != NULL,
	    "fairseq index read as Megatron: %s", errbuf);
	/* document_indices[4] = 3 instead of 4 */
	m = mutant("ex-m", "c9", 34 + 48 + 32, 3, 0, MMIDX_AUTO);
	TEST(m == NULL && strstr(errbuf, "end at 3") != NULL, "last document index: %s", errbuf);
	/* pointer of sequence 3 (at 26 + 16 + 24) = 0xff... past the end */
	m = mutant("ex-f", "c10", 26 + 16 + 24, 0xff, 0, MMIDX_AUTO);
	TEST(m != NULL, "pointer fault is found on use");
	if (m != NULL) {
		TEST(mmidx_seq(m, 3, &p, &n) == -1 &&
		    strstr(mmidx_strerror(m), "runs past the end") != NULL,
		    "pointer past the end: %s", mmidx_strerror(m));
		TEST(mmidx_seq(m, 2, &p, &n) == 0, "other entries still read");
		TEST(mmidx_verify(m) == -1 && strstr(mmidx_strerror(m), "sequence 3"),
		    "verify names sequence 3: %s", mmidx_strerror(m));
		mmidx_close(m);
	}
	/* size of sequence 2 negative */
	m = mutant("ex-f", "c11", 26 + 8 + 3, 0x80, 0, MMIDX_AUTO);
	TEST(m != NULL && mmidx_seq(m, 2, &p, &n) == -1 &&
	    strstr(mmidx_strerror(m), "negative") != NULL, "negative size");
	mmidx_close(m);
	/* pointer 1 = 4 instead of 6: in bounds, but not contiguous */
	m = mutant("ex-f", "c12", 26 + 16 + 8, 4, 0, MMIDX_AUTO);
	TEST(m != NULL && mmidx_seq(m, 1, &p, &n) == 0 && mmidx_verify(m) == -1 &&
	    strstr(mmidx_strerror(m), "expected 6") != NULL,
	    "verify: non-contiguous pointers: %s", m ? mmidx_strerror(m) : "");
	mmidx_close(m);
	{
		uint8_t leg[32] = "TNTIDX\0\0";
		spit(path("leg", ".idx"), leg, sizeof leg);
		spit(path("leg", ".bin"), leg, 0);
		m = mmidx_open(path("leg", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
		TEST(m == NULL && strstr(errbuf, "legacy") != NULL, "TNTIDX: %s", errbuf);
	}
	m = mmidx_open(path("nosuch", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m == NULL && strstr(errbuf, "No such file") != NULL, "missing: %s", errbuf);
	/* .bin shorter than the index says */
	{
		size_t n2;
		uint8_t *b = slurp(path("ex-f", ".bin"), &n2);
		spit(path("c1", ".bin"), b, n2 - 1);
		free(b);
		spit(path("c13", ".bin"), (const uint8_t *)"", 0);
		b = slurp(path("ex-f", ".idx"), &n2);
		spit(path("c13", ".idx"), b, n2);
		free(b);
		m = mmidx_open(path("c13", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
		TEST(m != NULL && mmidx_seq(m, 0, &p, &n) == -1 &&
		    mmidx_verify(m) == -1, "index over an empty .bin faults on use");
		mmidx_close(m);
	}
}

static void
test_docs_and_merge(void)
{
	int bfd = fdw("docs", ".bin"), ifd = fdw("docs", ".idx");
	struct mmidx_builder *b = mmidx_builder_new(bfd, MMIDX_MEGATRON,
	    MMIDX_UINT16, 0, errbuf, sizeof errbuf);
	static const int64_t v[] = { 1, 2, 3, 4, 5, 6, 7 };
	static const int64_t want[] = { 0, 2, 3, 3, 5 };
	struct mmidx *m, *m2;
	int ok;

	mmidx_add_i64(b, v, 2);
	mmidx_add_i64(b, v + 2, 1);
	mmidx_end_document(b);
	mmidx_add_i64(b, v + 3, 3);
	mmidx_end_document(b);
	mmidx_end_document(b);
	mmidx_add_i64(b, v + 6, 1);
	mmidx_add_i64(b, v, 0);
	TEST(mmidx_doc_open(b), "document open before the end");
	TEST(mmidx_finish(b, ifd) == 0, "finish closes the open document");
	mmidx_builder_free(b);
	close(bfd);
	close(ifd);
	m = mmidx_open(path("docs", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	ok = m != NULL && mmidx_doc_count(m) == 5;
	for (int j = 0; ok && j < 5; j++)
		ok = mmidx_doc_index(m, j) == want[j];
	TEST(ok, "document_indices 0 2 3 3 5 (empty document repeats)");

	/* merge docs + docs: indices shifted by 5 */
	bfd = fdw("merged", ".bin");
	ifd = fdw("merged", ".idx");
	b = mmidx_builder_new(bfd, MMIDX_MEGATRON, MMIDX_UINT16, 0, errbuf,
	    sizeof errbuf);
	TEST(mmidx_append(b, m) == 0 && mmidx_append(b, m) == 0 &&
	    mmidx_finish(b, ifd) == 0, "merge of two Megatron datasets");
	mmidx_builder_free(b);
	close(bfd);
	close(ifd);
	m2 = mmidx_open(path("merged", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	ok = m2 != NULL && mmidx_count(m2) == 10 && mmidx_doc_count(m2) == 9 &&
	    mmidx_bin_size(m2) == 28 && mmidx_verify(m2) == 0;
	for (int j = 0; ok && j < 9; j++)
		ok = mmidx_doc_index(m2, j) == (j < 5 ? want[j] : 5 + want[j - 4]);
	TEST(ok, "merged: 10 sequences, document indices shifted, .bin doubled");
	mmidx_close(m2);

	bfd = fdw("bad", ".bin");
	b = mmidx_builder_new(bfd, MMIDX_MEGATRON, MMIDX_INT32, 0, errbuf,
	    sizeof errbuf);
	TEST(mmidx_append(b, m) == -1 && strstr(mmidx_builder_strerror(b), "dtype uint16"),
	    "merge refuses another dtype: %s", mmidx_builder_strerror(b));
	mmidx_builder_free(b);
	b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ, MMIDX_UINT16, 0, errbuf,
	    sizeof errbuf);
	TEST(mmidx_append(b, m) == -1 && strstr(mmidx_builder_strerror(b), "layout"),
	    "merge refuses another layout: %s", mmidx_builder_strerror(b));
	mmidx_builder_free(b);
	close(bfd);
	mmidx_close(m);
}

/*
 * Feed text to an index-line parser in pieces of 'step' bytes (0: all
 * at once) with room for 'room' indices per call; collects the indices
 * and returns 1 at a bad line, 0 at the end.
 */
static int
lines_feed(struct mmidx_lines *L, const char *text, size_t step, size_t room,
    uint64_t *got, size_t *ngot)
{
	size_t n = strlen(text), off = 0;

	mmidx_lines_init(L);
	*ngot = 0;
	while (off < n) {
		size_t piece = step && n - off > step ? step : n - off, used;
		size_t k = mmidx_lines_parse(L, text + off, piece, &used,
		    got + *ngot, room);
		const char *t;
		size_t tl;

		*ngot += k;
		off += used;
		if (mmidx_lines_bad(L, &t, &tl))
			return 1;
	}
	if (mmidx_lines_end(L, got + *ngot) == 1)
		++*ngot;
	return mmidx_lines_bad(L, &(const char *){ NULL }, &(size_t){ 0 });
}

static void
test_lines(void)
{
	static const size_t steps[] = { 0, 1, 2, 3, 7, 21, 22 };
	static const uint64_t want[] = { 0, 7, 12, 18446744073709551609u,
	    1234567890123456789u, 42 };
	const char *good = "0\n7\r\n12  \r\n18446744073709551609\n"
	    "1234567890123456789 \n42";
	struct mmidx_lines L;
	uint64_t got[16], v;
	size_t ngot, tl;
	const char *t;
	int all = 1;

	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		for (size_t room = 1; room <= 3; room++) {
			int bad = lines_feed(&L, good, steps[i], room, got, &ngot);

			all &= !bad && ngot == 6 && L.lineno == 6 &&
			    memcmp(got, want, sizeof want) == 0;
		}
	TEST(all, "index lines in any pieces: CR, spaces, no last newline, "
	    "the largest index");
	TEST(lines_feed(&L, "1\n2\n", 0, 16, got, &ngot) == 0 && ngot == 2 &&
	    mmidx_lines_end(&L, &v) == 0, "a final newline opens no line");
	TEST(lines_feed(&L, "", 0, 16, got, &ngot) == 0 && ngot == 0,
	    "no input, no lines");
	{
		static const struct {
			const char *in, *text;
			uint64_t line;
		} bad[] = {
			{ "1\n\n2\n", "", 2 },
			{ " 1\n", " 1", 1 },
			{ "1\n2\n-3\n", "-3", 3 },
			{ "1 2\n", "1 2", 1 },
			{ "1\n \r \n", "", 2 },
			{ "18446744073709551610\n", "18446744073709551610", 1 },
			{ "99999999999999999999999\n", "99999999999999999999999", 1 },
			{ "5\n6x  ", "6x", 2 },
			{ "12345678901234567890123456789012345678901234567890\n",
			    "1234567890123456789012345678901234567890", 1 },
		};

		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			int ok = 1;

			for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
				ok &= lines_feed(&L, bad[i].in, steps[j], 16, got,
				    &ngot) == 1 && L.lineno == bad[i].line &&
				    ngot == bad[i].line - 1 &&
				    mmidx_lines_bad(&L, &t, &tl) == 1 &&
				    tl == strlen(bad[i].text) &&
				    memcmp(t, bad[i].text, tl) == 0;
				/* stopped: nothing more is read */
				ok &= mmidx_lines_parse(&L, "1\n", 2, &tl, got,
				    16) == 0 && mmidx_lines_end(&L, &v) == -1;
			}
			TEST(ok, "bad index line %zu named, with its text", i);
		}
	}
}

/* mmidx_seqs() agrees with mmidx_seq(), and stops at the first bad index. */
static void
test_seqs(void)
{
	static const size_t len[] = { 2, 0, 3 };
	static const int64_t v[] = { 1, 2, 3, 4, 5 };
	struct seqs s = { 3, len, v };
	uint64_t idx[] = { 2, 0, 1, 2, 3, 0 };
	struct mmidx_span sp[6];
	struct mmidx *m;
	int ok = 1;

	TEST(build("seqs", MMIDX_FAIRSEQ, MMIDX_INT32, 0, &s) == 0, "builds");
	m = mmidx_open(path("seqs", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL, "opens");
	if (m == NULL)
		return;
	mmidx_prefetch_entries(m, idx, 6);
	TEST(mmidx_seqs(m, idx, 6, sp) == 4, "stops at index 3 of 3 sequences");
	TEST(strcmp(mmidx_strerror(m), "index 3 out of range (3 sequences)") == 0,
	    "message: %s", mmidx_strerror(m));
	for (size_t j = 0; j < 4; j++) {
		const uint8_t *p;
		uint64_t n;

		ok &= mmidx_seq(m, idx[j], &p, &n) == 0 && sp[j].p == p &&
		    sp[j].n == n;
	}
	TEST(ok, "the spans before it are those of mmidx_seq()");
	TEST(mmidx_seqs(m, idx, 0, sp) == 0, "an empty batch");
	mmidx_close(m);
}

/* A fairseq int32 index of three entries, with the sizes and pointers given. */
static void
idx3(uint8_t *q, const int32_t *size, const int64_t *ptr)
{
	memset(q, 0, 26 + 36);
	memcpy(q, MMIDX_MAGIC, 9);
	q[9] = 1;
	q[17] = (uint8_t)mmidx_dtype_code(MMIDX_FAIRSEQ, MMIDX_INT32);
	q[18] = 3;
	for (int i = 0; i < 3; i++) {
		for (int b = 0; b < 4; b++)
			q[26 + 4 * i + b] = (uint8_t)((uint32_t)size[i] >> 8 * b);
		for (int b = 0; b < 8; b++)
			q[38 + 8 * i + b] = (uint8_t)((uint64_t)ptr[i] >> 8 * b);
	}
}

/*
 * mmidx_spans() gives what mmidx_seqs() gives, stops where it stops
 * (out of range, negative size, past the .bin) and keeps no message.
 */
static void
test_spans(void)
{
	static const int32_t sz_neg[] = { 1, -1, 1 }, sz_ok[] = { 1, 1, 1 };
	static const int64_t p_neg[] = { 0, 4, 4 }, p_past[] = { 0, 4, 8 };
	static const uint8_t bin[8] = { 7, 0, 0, 0, 9, 0, 0, 0 };
	uint64_t idx[] = { 2, 0, 1, 2, 3, 0 }, bad[] = { 0, 2, 1 };
	struct mmidx_span sp[6], sq[6];
	uint8_t ib[26 + 36];
	struct mmidx *m;
	int ok = 1;

	m = mmidx_open(path("seqs", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL, "opens");
	if (m == NULL)
		return;
	TEST(mmidx_spans(m, idx, 6, sp) == 4 && mmidx_seqs(m, idx, 6, sq) == 4,
	    "both stop at index 3 of 3 sequences");
	for (size_t j = 0; j < 4; j++)
		ok &= sp[j].p == sq[j].p && sp[j].n == sq[j].n;
	TEST(ok, "with the same spans");
	mmidx_close(m);

	m = mmidx_open(path("seqs", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL && mmidx_spans(m, idx, 6, sp) == 4 &&
	    strcmp(mmidx_strerror(m), "") == 0, "no message kept");
	mmidx_close(m);

	idx3(ib, sz_neg, p_neg);
	m = mmidx_open_mem(ib, sizeof ib, bin, sizeof bin, "mem", MMIDX_AUTO,
	    errbuf, sizeof errbuf);
	TEST(m != NULL, "opens an index with a negative size: %s", errbuf);
	if (m == NULL)
		return;
	TEST(mmidx_spans(m, bad, 3, sp) == 2 && mmidx_seqs(m, bad, 3, sq) == 2,
	    "a negative size stops both");
	TEST(sp[0].n == 1 && sp[0].p[0] == 7 && sp[1].n == 1, "spans before it");
	mmidx_close(m);

	idx3(ib, sz_ok, p_past);
	m = mmidx_open_mem(ib, sizeof ib, bin, sizeof bin, "mem", MMIDX_AUTO,
	    errbuf, sizeof errbuf);
	TEST(m != NULL, "opens an index with a pointer past the end: %s", errbuf);
	if (m == NULL)
		return;
	TEST(mmidx_spans(m, idx, 2, sp) == 0 && mmidx_seqs(m, idx, 2, sq) == 0,
	    "a pointer past the .bin stops both");
	TEST(mmidx_spans(m, bad + 2, 1, sp) == 1 && sp[0].n == 1 &&
	    sp[0].p[0] == 9, "a good one after it");
	mmidx_close(m);
}

/* The range checks of the fast paths, and an index larger than the write buffer. */
static void
test_add_edges(void)
{
	static const int64_t i32ok[] = { INT32_MIN, -1, 0, INT32_MAX };
	static const int64_t i32bad[] = { 0, (int64_t)INT32_MAX + 1 };
	static const int64_t i32low[] = { 5, 6, (int64_t)INT32_MIN - 1 };
	static const int64_t i64min[] = { INT64_MIN };
	static const int64_t u16ok[] = { 0, 65535 };
	static const int64_t u16bad[] = { 65536 };
	static const int64_t u16neg[] = { 3, -1 };
	static const int64_t one[] = { 7 };
	enum { NSEQ = 300000 };	/* 1.2 MB of sizes, 2.4 MB of pointers */
	struct mmidx_builder *b;
	struct mmidx *m;
	int bfd, ifd, ok = 1;

	bfd = fdw("edge", ".bin");
	b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ, MMIDX_INT32, 0, errbuf,
	    sizeof errbuf);
	TEST(mmidx_add_i64(b, i32ok, 4) == 0, "int32 limits fit");
	TEST(mmidx_add_i64(b, i32bad, 2) == -1 &&
	    mmidx_builder_bad_token(b) == 1, "INT32_MAX + 1 does not, at 1");
	TEST(mmidx_add_i64(b, i32low, 3) == -1 &&
	    mmidx_builder_bad_token(b) == 2, "INT32_MIN - 1 does not, at 2");
	TEST(mmidx_add_i64(b, i64min, 1) == -1, "INT64_MIN does not");
	TEST(mmidx_builder_count(b) == 1 && mmidx_builder_tokens(b) == 4,
	    "the refused sequences left nothing behind");
	mmidx_builder_free(b);
	close(bfd);

	bfd = fdw("edge", ".bin");
	b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ, MMIDX_UINT16, 0, errbuf,
	    sizeof errbuf);
	TEST(mmidx_add_i64(b, u16ok, 2) == 0, "uint16 limits fit");
	TEST(mmidx_add_i64(b, u16bad, 1) == -1, "65536 does not fit uint16");
	TEST(mmidx_add_i64(b, u16neg, 2) == -1 &&
	    mmidx_builder_bad_token(b) == 1, "-1 does not, at 1");
	for (int i = 1; i < NSEQ; i++)
		ok &= mmidx_add_i64(b, one, 1) == 0;
	ifd = fdw("edge", ".idx");
	TEST(ok && mmidx_finish(b, ifd) == 0, "%d sequences written", NSEQ);
	mmidx_builder_free(b);
	close(bfd);
	close(ifd);
	m = mmidx_open(path("edge", ""), MMIDX_AUTO, errbuf, sizeof errbuf);
	TEST(m != NULL && mmidx_count(m) == NSEQ && mmidx_verify(m) == 0,
	    "it opens and verifies: %s", m ? "" : errbuf);
	if (m == NULL)
		return;
	ok = mmidx_raw_size(m, 0) == 2 && mmidx_raw_pointer(m, 0) == 0;
	for (uint64_t i = 1; i < NSEQ; i++)
		ok &= mmidx_raw_size(m, i) == 1 &&
		    mmidx_raw_pointer(m, i) == (int64_t)(2 + 2 * i);
	TEST(ok, "every size and pointer, across the buffer boundaries");
	mmidx_close(m);
}

/* Whether two files have the same bytes. */
static int
same_files(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int eq = fa != NULL && fb != NULL, ca, cb;

	while (eq) {
		ca = getc(fa);
		cb = getc(fb);
		eq = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa != NULL)
		fclose(fa);
	if (fb != NULL)
		fclose(fb);
	return eq;
}

/*
 * Sequences packed by mmidx_pack_i64() and added in batches by
 * mmidx_add_packed() give the files mmidx_add_i64() gives, for every
 * dtype either layout stores, with and without MMIDX_WRAP, a document
 * end between batches; and a token that does not fit is refused with
 * the same message and position.
 */
static void
test_packed(void)
{
	static const int64_t edge[] = {
		0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768,
		-32768, -32769, 65535, 65536, INT32_MAX, (int64_t)INT32_MAX + 1,
		INT32_MIN, (int64_t)INT32_MIN - 1, UINT32_MAX,
		(int64_t)UINT32_MAX + 1, INT64_MAX, INT64_MIN
	};
	enum { NV = sizeof edge / sizeof edge[0], NSEQ = 40 };
	static const int64_t lo[] = { 0, -128, -32768, 0, INT32_MIN, 0,
	    INT64_MIN, 0, INT64_MIN, INT64_MIN };
	static const int64_t hi[] = { 255, 127, 32767, 65535, INT32_MAX,
	    UINT32_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };
	int64_t v[NSEQ * 8];
	uint32_t sizes[NSEQ];
	uint8_t out[NSEQ * 8 * 8];
	char err[512];
	size_t bad;
	int ok = 1, refused = 1, tried = 0;

	/* fairseq; Megatron with documents; Megatron, a document each */
	for (int lay = 0; lay < 3; lay++)
	for (int t = 0; t < MMIDX_NDTYPE; t++)
	for (unsigned flags = 0; flags <= MMIDX_WRAP; flags++) {
		enum mmidx_layout layout = lay ? MMIDX_MEGATRON : MMIDX_FAIRSEQ;
		size_t nv = 0, used = 0, es = mmidx_dtype_size((enum mmidx_dtype)t);
		unsigned f = flags | (lay == 2 ? MMIDX_DOC_EACH : 0);
		struct mmidx_builder *a, *b;
		int afd, bfd, aifd, bifd;

		if (mmidx_dtype_code(layout, (enum mmidx_dtype)t) == -1)
			continue;
		afd = fdw("pka", ".bin");
		bfd = fdw("pkb", ".bin");
		a = mmidx_builder_new(afd, layout, (enum mmidx_dtype)t, f,
		    errbuf, sizeof errbuf);
		b = mmidx_builder_new(bfd, layout, (enum mmidx_dtype)t, f,
		    errbuf, sizeof errbuf);
		for (int i = 0; i < NSEQ; i++) {
			sizes[i] = (uint32_t)(i % 7);
			for (uint32_t j = 0; j < sizes[i]; j++) {
				int64_t x = edge[(i * 5 + j * 3) % NV];

				if (!(flags & MMIDX_WRAP) && (x < lo[t] || x > hi[t]))
					x = (x < lo[t]) ? lo[t] : hi[t];
				v[nv + j] = x;
			}
			ok &= mmidx_add_i64(a, v + nv, sizes[i]) == 0;
			ok &= mmidx_pack_i64(b, v + nv, sizes[i], out + used * es,
			    &bad, err, sizeof err) == 0;
			nv += sizes[i];
			used += sizes[i];
			if (i == NSEQ / 2) {
				ok &= mmidx_end_document(a) == 0;
				ok &= mmidx_add_packed(b, out, sizes, (size_t)i + 1) == 0;
				ok &= mmidx_end_document(b) == 0;
				used = 0;
			}
		}
		ok &= mmidx_add_packed(b, out, sizes + NSEQ / 2 + 1,
		    NSEQ - NSEQ / 2 - 1) == 0;
		aifd = fdw("pka", ".idx");
		bifd = fdw("pkb", ".idx");
		ok &= mmidx_finish(a, aifd) == 0 && mmidx_finish(b, bifd) == 0;
		close(afd);
		close(bfd);
		close(aifd);
		close(bifd);
		ok &= same_files(path("pka", ".bin"), path("pkb", ".bin")) &&
		    same_files(path("pka", ".idx"), path("pkb", ".idx"));
		mmidx_builder_free(a);
		mmidx_builder_free(b);
		if (ok == 0) {
			TEST(0, "packed %s %s flags %u", mmidx_layout_name(layout),
			    mmidx_dtype_name((enum mmidx_dtype)t), flags);
			return;
		}
		/* A token beyond the range, where there is one. */
		if (!(flags & MMIDX_WRAP) && !mmidx_dtype_is_float((enum mmidx_dtype)t) &&
		    hi[t] < INT64_MAX) {
			int64_t w[3] = { 1, hi[t] + 1, 2 };

			afd = fdw("pka", ".bin");
			a = mmidx_builder_new(afd, layout, (enum mmidx_dtype)t, f,
			    errbuf, sizeof errbuf);
			refused &= mmidx_add_i64(a, w, 3) == -1 &&
			    mmidx_pack_i64(a, w, 3, out, &bad, err, sizeof err) == -1 &&
			    bad == 1 && mmidx_builder_bad_token(a) == 1 &&
			    strcmp(err, mmidx_builder_strerror(a)) == 0;
			w[1] = lo[t] - 1;
			refused &= lo[t] == INT64_MIN ||
			    (mmidx_pack_i64(a, w, 3, out, &bad, err, sizeof err) == -1 &&
			    bad == 1);
			mmidx_builder_free(a);
			close(afd);
			tried++;
		}
	}
	TEST(ok, "packed batches give the bytes of one sequence at a time, "
	    "every dtype, both layouts, with and without wrapping");
	TEST(refused && tried == 16, "a token that does not fit: the same message "
	    "and position (%d dtypes)", tried);
}

/* A batch larger than the output buffer goes straight to the .bin. */
static void
test_packed_large(void)
{
	enum { NT = 700000 };	/* 1.4 MB of uint16 */
	static uint8_t tok[2 * NT];
	static int64_t v[NT];
	uint32_t sizes[3] = { 5, NT - 10, 5 };
	struct mmidx_builder *a, *b;
	int afd, bfd, aifd, bifd, ok = 1;
	size_t bad;
	char err[512];

	for (size_t i = 0; i < NT; i++)
		v[i] = (int64_t)((i * 2654435761u) % 65536);
	afd = fdw("pla", ".bin");
	bfd = fdw("plb", ".bin");
	a = mmidx_builder_new(afd, MMIDX_FAIRSEQ, MMIDX_UINT16, 0, errbuf,
	    sizeof errbuf);
	b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ, MMIDX_UINT16, 0, errbuf,
	    sizeof errbuf);
	ok &= mmidx_add_i64(a, v, 3) == 0 && mmidx_add_i64(b, v, 3) == 0;
	ok &= mmidx_add_i64(a, v, 5) == 0 && mmidx_add_i64(a, v + 5, NT - 10) == 0 &&
	    mmidx_add_i64(a, v + NT - 5, 5) == 0;
	ok &= mmidx_pack_i64(b, v, NT, tok, &bad, err, sizeof err) == 0;
	ok &= mmidx_add_packed(b, tok, sizes, 3) == 0;
	ok &= mmidx_add_i64(a, v, 2) == 0 && mmidx_add_i64(b, v, 2) == 0;
	aifd = fdw("pla", ".idx");
	bifd = fdw("plb", ".idx");
	ok &= mmidx_finish(a, aifd) == 0 && mmidx_finish(b, bifd) == 0;
	close(afd);
	close(bfd);
	close(aifd);
	close(bifd);
	mmidx_builder_free(a);
	mmidx_builder_free(b);
	ok &= same_files(path("pla", ".bin"), path("plb", ".bin")) &&
	    same_files(path("pla", ".idx"), path("plb", ".idx"));
	TEST(ok, "a packed batch larger than the buffer, between small ones");
}

static void
test_tables(void)
{
	TEST(mmidx_dtype_auto(MMIDX_FAIRSEQ, 65499) == MMIDX_UINT16 &&
	    mmidx_dtype_auto(MMIDX_FAIRSEQ, 65500) == MMIDX_UINT32 &&
	    mmidx_dtype_auto(MMIDX_FAIRSEQ, 4294967294u) == MMIDX_UINT32 &&
	    mmidx_dtype_auto(MMIDX_FAIRSEQ, 4294967295u) == MMIDX_INT64 &&
	    mmidx_dtype_auto(MMIDX_FAIRSEQ, 0) == MMIDX_UINT32,
	    "fairseq automatic dtype (65500 threshold)");
	TEST(mmidx_dtype_auto(MMIDX_MEGATRON, 65499) == MMIDX_UINT16 &&
	    mmidx_dtype_auto(MMIDX_MEGATRON, 65500) == MMIDX_INT32 &&
	    mmidx_dtype_auto(MMIDX_MEGATRON, 1ull << 40) == MMIDX_INT32,
	    "Megatron automatic dtype never uint32");
	TEST(mmidx_dtype_code(MMIDX_FAIRSEQ, MMIDX_FLOAT64) == 6 &&
	    mmidx_dtype_code(MMIDX_MEGATRON, MMIDX_FLOAT32) == 7 &&
	    mmidx_dtype_from_code(MMIDX_FAIRSEQ, 7) == MMIDX_FLOAT64 &&
	    mmidx_dtype_from_code(MMIDX_MEGATRON, 7) == MMIDX_FLOAT32 &&
	    mmidx_dtype_from_code(MMIDX_MEGATRON, 9) == -1 &&
	    mmidx_dtype_from_code(MMIDX_FAIRSEQ, 10) == MMIDX_UINT64 &&
	    mmidx_dtype_from_code(MMIDX_FAIRSEQ, 0) == -1,
	    "code 7 differs per project; 9 and 10 are fairseq only");
	TEST(mmidx_dtype_parse("uint16") == MMIDX_UINT16 &&
	    mmidx_dtype_parse("float") == -1, "dtype names");
}

/*
 * A sequence added in parts (mmidx_add_part(), mmidx_end_parts()) gives
 * the files one mmidx_add_i64() of it gives, parts small and large,
 * in both layouts.
 */
static void
test_parts(void)
{
	enum { N = 3 << 20 };
	static const size_t cuts[] = { 0, 1, 1000, 1001, (1 << 20) + 1001, N };
	int64_t *v = malloc(N * sizeof *v);
	uint8_t *out = malloc(N * sizeof(int64_t));
	int64_t tail[3] = { 7, 8, 9 };
	char err[512];
	size_t bad;
	int ok = 1;

	for (size_t i = 0; i < N; i++)
		v[i] = (int64_t)((i * 2654435761u) % 60000);
	for (int lay = 0; lay < 3; lay++)
	for (int t = 0; t < 2; t++) {
		enum mmidx_layout layout = lay ? MMIDX_MEGATRON : MMIDX_FAIRSEQ;
		enum mmidx_dtype dt = t ? MMIDX_INT32 : MMIDX_UINT16;
		unsigned f = lay == 2 ? MMIDX_DOC_EACH : 0;
		int afd = fdw("pta", ".bin"), bfd = fdw("ptb", ".bin"), aifd, bifd;
		struct mmidx_builder *a = mmidx_builder_new(afd, layout, dt, f,
		    errbuf, sizeof errbuf);
		struct mmidx_builder *b = mmidx_builder_new(bfd, layout, dt, f,
		    errbuf, sizeof errbuf);

		ok &= mmidx_add_i64(a, tail, 3) == 0 && mmidx_add_i64(a, v, N) == 0 &&
		    mmidx_add_i64(a, tail, 3) == 0;
		ok &= mmidx_add_i64(b, tail, 3) == 0;
		for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
			size_t k = cuts[c + 1] - cuts[c];

			ok &= mmidx_pack_i64(b, v + cuts[c], k, out, &bad, err,
			    sizeof err) == 0 && mmidx_add_part(b, out, k) == 0;
		}
		ok &= mmidx_end_parts(b, N) == 0 && mmidx_add_i64(b, tail, 3) == 0;
		aifd = fdw("pta", ".idx");
		bifd = fdw("ptb", ".idx");
		ok &= mmidx_finish(a, aifd) == 0 && mmidx_finish(b, bifd) == 0;
		close(afd);
		close(bfd);
		close(aifd);
		close(bifd);
		ok &= same_files(path("pta", ".bin"), path("ptb", ".bin")) &&
		    same_files(path("pta", ".idx"), path("ptb", ".idx"));
		mmidx_builder_free(a);
		mmidx_builder_free(b);
	}
	TEST(ok, "a sequence added in parts gives the files of one mmidx_add_i64()");
	{
		int bfd = fdw("ptb", ".bin");
		struct mmidx_builder *b = mmidx_builder_new(bfd, MMIDX_FAIRSEQ,
		    MMIDX_UINT16, 0, errbuf, sizeof errbuf);

		TEST(mmidx_end_parts(b, (uint64_t)MMIDX_MAX_SEQ + 1) == -1 &&
		    strstr(mmidx_builder_strerror(b), "longer than the int32") != NULL,
		    "parts of too long a sequence are refused at the end");
		mmidx_builder_free(b);
		close(bfd);
	}
	free(v);
	free(out);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/t-mmidx.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_tables();
	test_worked_example();
	test_dtype_roundtrips();
	test_open_mem();
	test_range();
	test_empty();
	test_corrupt();
	test_docs_and_merge();
	test_lines();
	test_seqs();
	test_spans();
	test_add_edges();
	test_packed();
	test_parts();
	test_packed_large();
	{
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_done();
}
