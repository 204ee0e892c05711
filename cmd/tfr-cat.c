/*
 * tfr-cat: look into TFRecord files and move records around.  Reads
 * TFRecord streams (any compression, sniffed) or JSON lines, and writes
 * JSON lines for people and jq, or records: concatenated, recompressed,
 * filtered, split into shards, shuffled.  Also counts, verifies,
 * indexes, summarises and recovers damaged files.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "common.h"
#include "io.h"
#include "example.h"
#include "hashkey.h"
#include "lenstat.h"
#include "exjson.h"
#include "loader.h"
#include "manifest.h"
#include "record.h"
#include "rng.h"

enum mode { M_JSON, M_RECORDS, M_COUNT, M_VERIFY, M_INDEX, M_STATS,
	M_MANIFEST, M_CHECK_MANIFEST };

static enum mode mode = M_JSON;
static int flat, from_json, recover, tf_compat, no_crc, force, lossy;
static int type = -1;		/* EX_TYPE_* or TYPE_RAW; -1 auto */
#define TYPE_RAW 3
static enum rec_comp in_comp = REC_AUTO;
static int out_comp = -1;	/* -z; -1: from the suffix */
static uint64_t head = UINT64_MAX, skip, max_len;
static uint64_t shard_k, shard_n = 1;
static uint64_t part_k, part_n = 1;	/* --part */
static const char *outpath;
static uint64_t nsplit;		/* --split N */
static int shuffle;
static uint64_t shuffle_window;	/* 0: in memory */
static uint64_t shuffle_mem = 4ull << 30;
static uint64_t seed = 0x7266722d636174ull;	/* "rfr-cat" */
static char **want;		/* -f features, sorted */
static size_t nwant;

static uint64_t nout;		/* records written or printed, all inputs */
static int count_each;		/* -c of several inputs: a count per input, a total */
static uint64_t nseen;		/* records read, for --skip/--head/--shard */
static struct buf line, pay;
static struct example ex;
static struct exjson js;
static struct output textout;	/* stdout or -o FILE of the text modes */
static const char *check_mf;	/* --check-manifest M */
static const char *like;	/* --like FILE */
static int var_len;		/* --var-len */

static _Noreturn void
usage(FILE *fp, int status)
{
	fprintf(fp,
	    "usage: tfr-cat [-chqRV] [--contiguous] [--flat] [--force] [--from-json]\n"
	    "               [--index] [--keep-partial] [--lossy] [--no-crc]\n"
	    "               [--progress | --no-progress] [--recover]\n"
	    "               [--shuffle] [--stats] [--tf-compat] [--verify]\n"
	    "               [--compression auto|none|zlib|gzip]\n"
	    "               [-f name,...] [--like file|manifest|dir]\n"
	    "               [--max-record-size N] [-n N] [-o file] [--part K/N]\n"
	    "               [-s seed] [--shard K/N] [--shuffle-memory N]\n"
	    "               [--shuffle-window N] [--skip N] [--split N]\n"
	    "               [--type auto|example|sequence|raw] [-z none|zlib|gzip]\n"
	    "               [file ...]\n"
	    "       tfr-cat --manifest [-q] [--var-len]\n"
	    "               [--compression auto|none|zlib|gzip] [-f name,...] [-n N]\n"
	    "               [-o file] [--shard K/N] [--skip N] [file ...]\n"
	    "       tfr-cat --check-manifest manifest|dir|config [-q] [-n N]\n"
	    "               [--shard K/N] [--skip N] [file ...]\n");
	if (fp == stdout)
		fprintf(fp, "\n"
		    "  (default)            one JSON object per record (proto3 JSON mapping)\n"
		    "  -c, --count          print the number of records\n"
		    "  --check-manifest M   check records against a manifest or dataset\n"
		    "  --compression C      how the input is compressed (default: sniffed)\n"
		    "  --contiguous         --split: shard K is --part K/N of the input\n"
		    "  -f, --features L     keep only the named features\n"
		    "  --flat               {\"name\":[values]} lines, lossless\n"
		    "  --force              write records even to a terminal\n"
		    "  --from-json          read JSON lines (either form) and write records\n"
		    "  -h, --help           print this help\n"
		    "  --index              print 'offset size' per record (tfrecord2idx)\n"
		    "  --keep-partial       after a fault, keep what the good input gave\n"
		    "  --like F             --from-json: feature kinds from records or a manifest\n"
		    "  --lossy              replace non-UTF-8 bytes of feature names\n"
		    "  --manifest           infer a dataset manifest (__manifest__.json)\n"
		    "  --max-record-size N  largest payload read from a pipe (default 2G)\n"
		    "  -n, --head N         stop after N records\n"
		    "  --no-crc             do not check payload CRCs\n"
		    "  -o, --output FILE    write to FILE (atomically), or the --split pattern\n"
		    "  --part K/N           read the K-th of N parts of the input\n"
		    "                       (auto: K and N from the job array or MPI)\n"
		    "  --progress, --no-progress  progress on stderr (default: when a terminal)\n"
		    "  -q, --quiet          print no summary lines\n"
		    "  -R, --records        write records (concatenate, recompress, filter)\n"
		    "  --recover            read through damage, writing every intact record\n"
		    "  -s, --seed SEED      seed of --shuffle\n"
		    "  --shard K/N          take records K, K+N, K+2N ...\n"
		    "  --shuffle            shuffle (per shard) in memory, seeded by -s\n"
		    "  --shuffle-memory N   most bytes --shuffle holds (default 4G)\n"
		    "  --shuffle-window N   shuffle through a window of N records\n"
		    "  --skip N             skip the first N records\n"
		    "  --split N            deal records round-robin into N files (-o)\n"
		    "  --stats              per feature: presence, kind, list lengths\n"
		    "  --tf-compat          accept what TensorFlow accepts (partial tail)\n"
		    "  --type T             what the payloads are (default: auto)\n"
		    "  -V, --version        print the version\n"
		    "  --var-len            --manifest: a list of varying length is var_len\n"
		    "  --verify             check every CRC and payload; print a summary\n"
		    "  -z Z                 compress written records\n"
		    "See tfr-cat(1).\n");
	if (status == 0)
		close_stdout();
	exit(status);
}

enum {
	O_FLAT = 256, O_FROM_JSON, O_INDEX, O_LOSSY, O_NO_CRC, O_RECOVER,
	O_SHUFFLE, O_STATS, O_TF_COMPAT, O_VERIFY, O_COMPRESSION, O_MAXREC,
	O_SHARD, O_SHUF_MEM, O_SHUF_WIN, O_SKIP, O_SPLIT, O_TYPE, O_FORCE,
	O_KEEP_PARTIAL, O_MANIFEST, O_CHECK_MANIFEST, O_LIKE, O_PART,
	O_VAR_LEN, O_PROGRESS, O_NO_PROGRESS, O_CONTIGUOUS
};

static const struct option longopts[] = {
	{ "count", no_argument, NULL, 'c' },
	{ "check-manifest", required_argument, NULL, O_CHECK_MANIFEST },
	{ "compression", required_argument, NULL, O_COMPRESSION },
	{ "contiguous", no_argument, NULL, O_CONTIGUOUS },
	{ "features", required_argument, NULL, 'f' },
	{ "flat", no_argument, NULL, O_FLAT },
	{ "force", no_argument, NULL, O_FORCE },
	{ "from-json", no_argument, NULL, O_FROM_JSON },
	{ "head", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ "index", no_argument, NULL, O_INDEX },
	{ "keep-partial", no_argument, NULL, O_KEEP_PARTIAL },
	{ "like", required_argument, NULL, O_LIKE },
	{ "lossy", no_argument, NULL, O_LOSSY },
	{ "manifest", no_argument, NULL, O_MANIFEST },
	{ "max-record-size", required_argument, NULL, O_MAXREC },
	{ "no-crc", no_argument, NULL, O_NO_CRC },
	{ "no-progress", no_argument, NULL, O_NO_PROGRESS },
	{ "output", required_argument, NULL, 'o' },
	{ "part", required_argument, NULL, O_PART },
	{ "progress", no_argument, NULL, O_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "records", no_argument, NULL, 'R' },
	{ "recover", no_argument, NULL, O_RECOVER },
	{ "seed", required_argument, NULL, 's' },
	{ "shard", required_argument, NULL, O_SHARD },
	{ "shuffle", no_argument, NULL, O_SHUFFLE },
	{ "shuffle-memory", required_argument, NULL, O_SHUF_MEM },
	{ "shuffle-window", required_argument, NULL, O_SHUF_WIN },
	{ "skip", required_argument, NULL, O_SKIP },
	{ "split", required_argument, NULL, O_SPLIT },
	{ "stats", no_argument, NULL, O_STATS },
	{ "tf-compat", no_argument, NULL, O_TF_COMPAT },
	{ "type", required_argument, NULL, O_TYPE },
	{ "var-len", no_argument, NULL, O_VAR_LEN },
	{ "verify", no_argument, NULL, O_VERIFY },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/*
 * Output sinks: one, or N shards; each may shuffle before writing.
 * Up to SPLIT_OPEN shards are written through a record writer each on
 * an open temporary file.  More shards are spilled: framed records wait
 * in a buffer per shard (SPILL_MAX bytes in all) and are appended to
 * the shard's temporary file, opened for each append and closed again,
 * so that any number of shards needs one descriptor; compressed shards
 * are compressed at the end, one at a time.  Every shard is finished
 * before the first is renamed into place.
 */
#define SPLIT_OPEN	64
#define SPILL_MAX	(64u << 20)

struct held {
	size_t	off;
	size_t	len;
};

struct sink {
	struct output	 out;		/* out.w NULL when spilled */
	char		*path;		/* its -o name, or "-" (out.name points here) */
	struct buf	 pend;		/* spilled: framed records to append */
	struct buf	 mem;		/* shuffled records in memory */
	struct held	*recs;
	size_t		 nrecs, caprecs;
	struct buf	*win;		/* window slots */
	size_t		 nwin;
	struct output	 zout;		/* spilled and compressed: the result */
	int		 zused;
	int		 finished;	/* sink_finish() done */
};

static struct sink *sinks;
static size_t nsinks;
static int contiguous;		/* --contiguous: shard K is --part K/N */
static uint64_t cur_shard;	/* --contiguous: the shard being read */
static struct rng rng;
static int spill;		/* shards are spilled (see above) */
static size_t spilled;		/* bytes waiting in all pend buffers */

/* Append shard s's waiting records to its temporary file. */
static void
spill_flush(struct sink *s)
{
	int fd;

	if (s->pend.len == 0)
		return;
	if ((fd = open(s->out.file.tmp, O_WRONLY | O_APPEND | O_CLOEXEC)) == -1)
		die_errno("%s", s->out.name);
	if (rp_write_full(fd, s->pend.p, s->pend.len) == -1) {
		close(fd);
		write_failed(s->out.name);
	}
	if (close(fd) == -1)
		write_failed(s->out.name);
	spilled -= s->pend.len;
	s->pend.len = 0;
	if (s->pend.cap > (1u << 20))
		rp_buf_free(&s->pend);
}

static void
sink_write(struct sink *s, const uint8_t *p, size_t n)
{
	uint8_t hdr[12], foot[4];
	uint32_t c;
	size_t i;

	if (s->out.w != NULL) {
		if (rec_write(s->out.w, p, n) == -1)
			write_failed(s->out.name);
		return;
	}
	rec_frame_header(hdr, n);
	c = rec_frame_footer(p, n);
	for (i = 0; i < 4; i++)
		foot[i] = (uint8_t)(c >> (8 * i));
	if (rp_buf_append(&s->pend, hdr, 12) == -1 ||
	    rp_buf_append(&s->pend, p, n) == -1 || rp_buf_append(&s->pend, foot, 4) == -1)
		die_errno("%s", s->out.name);
	spilled += n + 16;
	if (spilled > SPILL_MAX)
		for (i = 0; i < nsinks; i++)
			spill_flush(&sinks[i]);
}

/*
 * Open sink s on 'path' (NULL or "-": stdout) as every output is opened
 * (output_open()), with -z's compression and --force; a spilled shard
 * keeps the name of its temporary, not a descriptor.
 */
static void
sink_open(struct sink *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path != NULL ? path : "-");
	output_open_with(&s->out, s->path, WRITES_RECORDS, NULL,
	    out_comp >= 0 ? (enum rec_comp)out_comp : REC_AUTO,
	    (force ? OUTPUT_FORCE : 0) | (spill ? OUTPUT_BY_NAME : 0));
	if (shuffle && shuffle_window) {
		s->win = xcalloc(shuffle_window, sizeof(struct buf));
	}
}

/* The sink of the next record: one, the shard dealt to, or --contiguous's. */
static struct sink *
sink_next(void)
{
	if (contiguous)
		return &sinks[cur_shard];
	return nsplit ? &sinks[nout % nsplit] : &sinks[0];
}

/* Take one record into sink s (shuffling if asked). */
static void
sink_put(struct sink *s, const uint8_t *p, size_t n)
{
	uint64_t k;

	if (!shuffle) {
		sink_write(s, p, n);
		return;
	}
	if (shuffle_window) {
		if (s->nwin < shuffle_window) {
			s->win[s->nwin].len = 0;
			if (rp_buf_append(&s->win[s->nwin], p, n) == -1)
				die_errno("shuffle window");
			s->nwin++;
			return;
		}
		/* A full window: emit a random slot, refill it. */
		k = rng_below(&rng, shuffle_window);
		sink_write(s, s->win[k].p, s->win[k].len);
		s->win[k].len = 0;
		if (rp_buf_append(&s->win[k], p, n) == -1)
			die_errno("shuffle window");
		return;
	}
	if (s->mem.len + n > shuffle_mem)
		die("--shuffle: more than %" PRIu64 " bytes of records to hold; "
		    "raise --shuffle-memory or use --shuffle-window", shuffle_mem);
	if (s->nrecs == s->caprecs) {
		size_t nc = s->caprecs ? s->caprecs * 2 : 1024;

		s->recs = xreallocarray(s->recs, nc, sizeof(*s->recs));
		s->caprecs = nc;
	}
	s->recs[s->nrecs].off = s->mem.len;
	s->recs[s->nrecs++].len = n;
	if (rp_buf_append(&s->mem, p, n) == -1)
		die_errno("shuffle");
}

/* Compress spilled shard s into a second temporary file, one shard at a time. */
static void
spill_compress(struct sink *s)
{
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;
	int in, rv;

	output_open_with(&s->zout, s->path, WRITES_RECORDS, NULL, s->out.comp, 0);
	if ((in = open(s->out.file.tmp, O_RDONLY | O_CLOEXEC)) == -1)
		die_errno("%s", s->out.file.tmp);
	if ((r = rec_reader_open(in, REC_NONE, REC_NO_CRC, 0)) == NULL)
		die_errno("%s", s->zout.name);
	while ((rv = rec_read(r, &p, &n)) == 1)
		if (rec_write(s->zout.w, p, n) == -1)
			write_failed(s->zout.name);
	if (rv == -1)
		die("%s: %s", s->out.file.tmp, rec_strerror(r));
	rec_reader_free(r);
	close(in);
	output_end_stream(&s->zout);
	/* One shard's descriptor at a time: the commit syncs it by name. */
	if (close(s->zout.fd) == -1)
		write_failed(s->zout.name);
	s->zout.fd = s->zout.file.fd = -1;
	out_abort(&s->out.file);
	s->zused = 1;
}

/* Write what sink s holds (shuffled) and end its stream; nothing is renamed yet. */
static void
sink_finish(struct sink *s)
{
	size_t i, j;
	struct held h;
	struct buf b;

	if (s->finished)
		return;
	s->finished = 1;
	if (shuffle && !shuffle_window) {
		/* Fisher-Yates, from the end, as Python's random.shuffle walks. */
		for (i = s->nrecs; i > 1; i--) {
			j = (size_t)rng_below(&rng, i);
			h = s->recs[i - 1];
			s->recs[i - 1] = s->recs[j];
			s->recs[j] = h;
		}
		for (i = 0; i < s->nrecs; i++)
			sink_write(s, s->mem.p + s->recs[i].off, s->recs[i].len);
		rp_buf_free(&s->mem);
		free(s->recs);
	} else if (shuffle) {
		for (i = s->nwin; i > 1; i--) {
			j = (size_t)rng_below(&rng, i);
			b = s->win[i - 1];
			s->win[i - 1] = s->win[j];
			s->win[j] = b;
		}
		for (i = 0; i < s->nwin; i++) {
			sink_write(s, s->win[i].p, s->win[i].len);
			rp_buf_free(&s->win[i]);
		}
		free(s->win);
	}
	if (s->out.w == NULL) {
		spill_flush(s);
		rp_buf_free(&s->pend);
		if (s->out.comp != REC_NONE)
			spill_compress(s);
		return;
	}
	output_end_stream(&s->out);
}

/*
 * Close the sinks as a group (output_close_group()): when ok, the
 * finished shards are renamed into place together, and when one
 * rename fails the others get their old files back; otherwise (a
 * fault without --keep-partial) they are removed.
 */
static void
close_sinks(int ok)
{
	struct output **v;
	size_t i;

	v = xcalloc(nsinks, sizeof *v);
	for (i = 0; i < nsinks; i++)
		v[i] = sinks[i].zused ? &sinks[i].zout : &sinks[i].out;
	output_close_group(v, nsinks, ok);
	for (i = 0; i < nsinks; i++)
		free(sinks[i].path);
	free(v);
}

/*
 * Expand a --split pattern: printf-style with one or two integer
 * conversions (%d, %05d, %-3d ...): the shard number, then the shard
 * count.  Field widths are honoured in full (up to NAME_MAX), so every
 * shard number gives its own name.
 */
static char *
shard_name(const char *pat, uint64_t k, uint64_t n)
{
	struct buf b = { 0 };
	char num[24];
	const char *p = pat, *q;
	int conv = 0, zero, left;
	size_t width, len, i;

	for (; *p; p++) {
		if (*p != '%') {
			rp_buf_putc(&b, *p);
			continue;
		}
		if (p[1] == '%') {
			rp_buf_putc(&b, '%');
			p++;
			continue;
		}
		zero = left = 0;
		for (q = p + 1; *q == '0' || *q == '-'; q++)
			*q == '0' ? (zero = 1) : (left = 1);
		for (width = 0; *q >= '0' && *q <= '9' && width <= 255; q++)
			width = width * 10 + (size_t)(*q - '0');
		if (width > 255)
			usage_error("--split pattern '%s': a field width above 255", pat);
		if (*q != 'd' || conv >= 2)
			usage_error("--split pattern '%s': only %%d conversions "
			    "(shard number, then shard count) are allowed", pat);
		len = (size_t)snprintf(num, sizeof(num), "%" PRIu64, conv == 0 ? k : n);
		if (!left)
			for (i = len; i < width; i++)
				rp_buf_putc(&b, zero ? '0' : ' ');
		rp_buf_append(&b, num, len);
		if (left)
			for (i = len; i < width; i++)
				rp_buf_putc(&b, ' ');
		conv++;
		p = q;
	}
	if (conv == 0 && n > 1)
		usage_error("--split pattern '%s' needs a %%d for the shard number", pat);
	if (rp_buf_putc(&b, '\0') == -1)
		die_errno("--split");
	return (char *)b.p;
}

static int
cmpname(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every shard name, checked before anything is written: each can be
 * written, and no two are the same.
 */
static char **
shard_names(void)
{
	char **names, **sorted;
	uint64_t i;

	names = xcalloc(nsplit, sizeof(*names));
	sorted = xcalloc(nsplit, sizeof(*sorted));
	for (i = 0; i < nsplit; i++) {
		names[i] = sorted[i] = shard_name(outpath, i, nsplit);
		out_form(names[i], WRITES_RECORDS, NULL);
		out_check(names[i]);
	}
	qsort(sorted, nsplit, sizeof(*sorted), cmpname);
	for (i = 1; i < nsplit; i++)
		if (strcmp(sorted[i - 1], sorted[i]) == 0)
			usage_error("--split pattern '%s': two shards would be "
			    "named '%s'", outpath, sorted[i]);
	free(sorted);
	return names;
}

static void
open_sinks(void)
{
	struct rlimit rl;
	uint64_t i;
	char **names;

	if (nsplit) {
		names = shard_names();
		/* Open writers while the descriptors allow; spill beyond. */
		spill = nsplit > SPLIT_OPEN || (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY && nsplit + 32 > rl.rlim_cur);
		sinks = xcalloc(nsplit, sizeof(*sinks));
		for (i = 0; i < nsplit; i++) {
			sink_open(&sinks[i], names[i]);
			free(names[i]);
		}
		free(names);
		nsinks = nsplit;
	} else {
		sinks = xcalloc(1, sizeof(*sinks));
		sink_open(&sinks[0], outpath);
		nsinks = 1;
	}
}

/* Record selection shared by every mode: --skip, --shard, --head. */
static int
selected(void)
{
	uint64_t i = nseen++;

	if (i < skip)
		return 0;
	if ((i - skip) % shard_n != shard_k)
		return 0;
	return 1;
}

static int
done(void)
{
	return nout >= head;
}

/* Keep only the -f features of a decoded example (in place). */
static struct ex_feature *keep;
static size_t capkeep;

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
wanted(const uint8_t *key, size_t n)
{
	size_t lo = 0, hi = nwant, mid, m;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		m = strlen(want[mid]);
		c = memcmp(want[mid], key, m < n ? m : n);
		if (c == 0)
			c = m < n ? -1 : m > n;
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void
select_features(struct example *e)
{
	size_t i, k = 0;
	struct ex_flist *l;

	if (nwant == 0)
		return;
	if (e->nfeat > capkeep) {
		capkeep = e->nfeat * 2;
		keep = xreallocarray(keep, capkeep, sizeof(*keep));
	}
	for (i = 0; i < e->nfeat; i++)
		if (wanted(e->feat[i].key, e->feat[i].keylen))
			keep[k++] = e->feat[i];
	e->feat = keep;
	e->nfeat = k;
	l = e->lists;
	for (i = 0, k = 0; i < e->nlists; i++)
		if (wanted(l[i].key, l[i].keylen))
			l[k++] = l[i];
	e->nlists = k;
}

/* Statistics per feature name. */
struct fstat {
	char		*name;		/* "[]" before the names of feature lists */
	size_t		 keylen;
	int		 seqlist;
	uint64_t	 present;
	uint64_t	 kinds[4];
	struct lenstat	 len;		/* lengths: values, or steps of a list */
};
static struct fstat *fstats;
static size_t nfstats, capfstats;
static uint64_t stat_records;

/* The entry of feature 'key' (a feature list when seqlist), made on first use. */
static struct fstat *
fstat_get(const uint8_t *key, size_t n, int seqlist)
{
	size_t i, pre = seqlist ? 2 : 0;
	struct fstat *f;

	for (i = 0; i < nfstats; i++)
		if (fstats[i].seqlist == seqlist && fstats[i].keylen == n &&
		    memcmp(fstats[i].name + pre, key, n) == 0)
			return &fstats[i];
	if (nfstats == capfstats) {
		capfstats = capfstats ? capfstats * 2 : 16;
		fstats = xreallocarray(fstats, capfstats, sizeof(*fstats));
	}
	f = &fstats[nfstats++];
	memset(f, 0, sizeof(*f));
	f->name = xmalloc(n + 3);
	memcpy(f->name, "[]", pre);
	memcpy(f->name + pre, key, n);
	f->name[n + pre] = '\0';
	f->keylen = n;
	f->seqlist = seqlist;
	ls_init(&f->len);
	return f;
}

static void
fstat_add(struct fstat *f, int kind, uint64_t len)
{
	f->present++;
	f->kinds[kind]++;
	if (ls_add(&f->len, len) == -1)
		die_errno("stats");
}

static void
stats_add(const struct example *e)
{
	size_t i, j;

	stat_records++;
	for (i = 0; i < e->nfeat; i++)
		fstat_add(fstat_get(e->feat[i].key, e->feat[i].keylen, 0),
		    e->feat[i].kind, e->feat[i].n);
	for (i = 0; i < e->nlists; i++) {
		struct fstat *f = fstat_get(e->lists[i].key, e->lists[i].keylen, 1);
		int kind = EX_NONE;

		for (j = 0; j < e->lists[i].n; j++)
			if (e->lists[i].v[j].kind != EX_NONE)
				kind = e->lists[i].v[j].kind;
		fstat_add(f, kind, e->lists[i].n);
	}
}

static int
cmp_fstat(const void *a, const void *b)
{
	return strcmp(((const struct fstat *)a)->name, ((const struct fstat *)b)->name);
}

static void
stats_print(void)
{
	static const char *kn[] = { "none", "bytes", "float", "int64" };
	size_t i;
	unsigned h;
	int k, first;
	struct fstat *f;

	qsort(fstats, nfstats, sizeof(*fstats), cmp_fstat);
	printf("records\t%" PRIu64 "\n", stat_records);
	printf("feature\tpresent\tkind\tmin\tmean\tp50\tp90\tp99\tmax\tlengths\n");
	for (i = 0; i < nfstats; i++) {
		f = &fstats[i];
		printf("%s\t%" PRIu64 "\t", f->name, f->present);
		for (k = 0, first = 1; k < 4; k++)
			if (f->kinds[k]) {
				printf("%s%s", first ? "" : ",", kn[k]);
				first = 0;
			}
		printf("\t%" PRIu64 "\t%.1f", f->len.min, ls_mean(&f->len));
		printf("\t%" PRIu64, ls_percentile(&f->len, 50));
		printf("\t%" PRIu64, ls_percentile(&f->len, 90));
		printf("\t%" PRIu64, ls_percentile(&f->len, 99));
		printf("\t%" PRIu64 "\t", f->len.max);
		for (h = 0, first = 1; h < LS_BUCKETS; h++) {
			if (f->len.hist[h] == 0)
				continue;
			if (h <= 1)
				printf("%s%u:%" PRIu64, first ? "" : " ", h,
				    f->len.hist[h]);
			else
				printf("%s%" PRIu64 "-%" PRIu64 ":%" PRIu64,
				    first ? "" : " ", ls_bucket_lo(h),
				    ls_bucket_hi(h), f->len.hist[h]);
			first = 0;
		}
		printf("\n");
		ls_free(&f->len);
		free(f->name);
	}
	free(fstats);
}

/*
 * An int64 list of more than LAZY_MIN bytes is not decoded (8 bytes a
 * value) but written from the record, and its JSON line goes out as it
 * is made: a huge record costs about its own size in memory.
 */
#define LAZY_MIN	(1u << 20)

static int
flush_json(void *arg, struct buf *b)
{
	(void)arg;
	if (fwrite(b->p, 1, b->len, stdout) != b->len)
		write_failed(stdout_name);
	b->len = 0;
	return 0;
}

static void
put_line(void)
{
	rp_buf_putc(&line, '\n');
	if (fwrite(line.p, 1, line.len, stdout) != line.len)
		write_failed(stdout_name);
	line.len = 0;
}

/*
 * Handle one good record.  Returns 0, -1 when its payload does not
 * decode (the message is printed by the caller), or -2 when memory
 * ran out while decoding it.
 */
static int
one_record(const uint8_t *p, size_t n, const char **why)
{
	switch (mode) {
	case M_RECORDS:
		if (nwant == 0 || type == TYPE_RAW) {
			sink_put(sink_next(), p, n);
			break;
		}
		if (ex_decode(&ex, p, n, type < 0 ? EX_TYPE_AUTO : type) == -1) {
			*why = ex_strerror(&ex);
			return errno == ENOMEM ? -2 : -1;
		}
		select_features(&ex);
		pay.len = 0;
		if (ex_encode(&ex, &pay) == -1)
			return -2;
		sink_put(sink_next(), pay.p, pay.len);
		break;
	case M_JSON:
		if (type == TYPE_RAW) {
			if (exjson_write_raw(p, n, &line) == -1)
				return -2;
		} else {
			if (ex_decode(&ex, p, n, type < 0 ? EX_TYPE_AUTO : type) == -1) {
				*why = ex_strerror(&ex);
				return errno == ENOMEM ? -2 : -1;
			}
			select_features(&ex);
			/* Nothing of a line goes out before its keys are known good. */
			if (n > LAZY_MIN && exjson_keys_ok(&js, &ex) == -1) {
				*why = exjson_strerror(&js);
				return -1;
			}
			if (exjson_write(&js, &ex, &line) == -1) {
				*why = exjson_strerror(&js);
				return errno == ENOMEM ? -2 : -1;
			}
		}
		put_line();
		break;
	case M_VERIFY:
		if (type != TYPE_RAW &&
		    ex_check(&ex, p, n, type < 0 ? EX_TYPE_AUTO : type) == -1) {
			*why = ex_strerror(&ex);
			return -1;
		}
		break;
	case M_STATS:
		if (ex_decode(&ex, p, n, type < 0 ? EX_TYPE_AUTO : type) == -1) {
			*why = ex_strerror(&ex);
			return errno == ENOMEM ? -2 : -1;
		}
		select_features(&ex);
		stats_add(&ex);
		break;
	default:
		break;
	}
	nout++;
	return 0;
}

static void
show_progress(const char *name, const struct rec_reader *r)
{
	if (progress_due())
		progress("%s: %" PRIu64 " records, %.1f MB", name, rec_index(r),
		    (double)rec_position(r) / 1e6);
}

/*
 * Read one TFRecord input (its part pf under --part).  Returns 0, or 1
 * after a reported fault.
 */
static int
cat_records(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path), *why = NULL;
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;
	uint64_t skip_off, skip_len, nskips = 0, skipped = 0, before = nout;
	uint64_t pbad = 0, stop_off = UINT64_MAX;
	int fd, ret, status = 0;
	unsigned flags = 0;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((fd = open_input(path)) == -1)
		return 1;
	if (tf_compat)
		flags |= REC_TF_COMPAT;
	if (no_crc)
		flags |= REC_NO_CRC;
	/*
	 * -c skips payloads (its page says so); --index reads them, since
	 * an index of a record whose payload CRC is wrong is no index.
	 */
	if (mode == M_COUNT || (mode == M_INDEX && no_crc))
		flags |= REC_SKIP_DATA;
	if ((r = rec_reader_open(fd, pf != NULL ? pf->comp : in_comp, flags,
	    max_len)) == NULL)
		die_errno("%s", name);
	if (pf != NULL && pf->comp == REC_NONE &&
	    rec_reader_range(r, pf->from, pf->to - pf->from) == -1)
		die_errno("%s", name);
	for (;;) {
		if (done())
			break;
		ret = rec_read(r, &p, &n);
		if (ret == 1) {
			show_progress(name, r);
			if (!selected())
				continue;
			if (mode == M_INDEX) {
				if (rec_compression(r) != REC_NONE && !force) {
					warnx_("%s: --index: the input is %s-compressed, "
					    "so offsets cannot be used to seek (--force "
					    "writes them anyway)", name,
					    rec_compname(rec_compression(r)));
					status = 1;
					break;
				}
				printf("%" PRIu64 " %" PRIu64 "\n", rec_offset(r),
				    (uint64_t)n + 16);
				nout++;
				continue;
			}
			if (mode == M_COUNT) {
				nout++;
				continue;
			}
			if ((ret = one_record(p, n, &why)) == 0)
				continue;
			if (ret == -2) {
				/* Not the record's fault: no reading on. */
				warnx_("%s: record %" PRIu64 " at offset %" PRIu64
				    ": out of memory", name, rec_index(r) - 1,
				    rec_offset(r));
				status = 1;
				break;
			}
			warnx_("%s: record %" PRIu64 " at offset %" PRIu64 ": "
			    "payload is not %s: %s", name, rec_index(r) - 1,
			    rec_offset(r), type == EX_TYPE_SEQUENCE ?
			    "a SequenceExample" : "an Example", why);
			status = 1;
			/*
			 * A bad payload is not counted, as a bad frame is not:
			 * --verify's records and bytes are the good ones.
			 */
			pbad++;
			if (recover)
				continue;
			stop_off = rec_offset(r);
			break;
		}
		if (ret == 0)
			break;
		/* A fault. */
		warnx_("%s: record %" PRIu64 " at offset %" PRIu64 ": %s", name,
		    rec_index(r), rec_offset(r), rec_strerror(r));
		status = 1;
		if (!recover)
			break;
		ret = rec_resync(r, &skip_off, &skip_len);
		if (ret == -1) {
			warnx_("%s: cannot recover past offset %" PRIu64 ": %s",
			    name, rec_offset(r), rec_strerror(r));
			break;
		}
		nskips++;
		skipped += skip_len;
		warnx_("%s: skipped bytes %" PRIu64 "-%" PRIu64 " (%" PRIu64
		    " bytes)%s", name, skip_off, skip_off + skip_len, skip_len,
		    ret == 0 ? " to the end" : "");
		if (ret == 0)
			break;
	}
	progress_done();
	if (recover && verbosity > 0 && (nskips || status))
		warnx_("%s: recovered %" PRIu64 " records; skipped %" PRIu64
		    " byte ranges (%" PRIu64 " bytes)", name, nout - before,
		    nskips, skipped);
	if (mode == M_VERIFY && verbosity > 0) {
		printf("%s: %" PRIu64 " records, %" PRIu64 " bytes, %s%s\n", name,
		    rec_index(r) - pbad, stop_off != UINT64_MAX ? stop_off :
		    rec_position(r), rec_compname(rec_compression(r)),
		    status ? ", FAILED" : ", OK");
	}
	if (count_each)
		printf("%" PRIu64 " %s\n", nout - before, name);
	rec_reader_free(r);
	if (fd != 0)
		close(fd);
	return status;
}

/*
 * --like: the kinds of the features for --from-json, from a manifest
 * (a file, or a dataset directory holding __manifest__.json) or from the
 * first LIKE_RECORDS records of a record file.  A flat list of numbers
 * then takes its feature's kind, whatever jq did to "0.0".
 */
#define LIKE_RECORDS	1000

struct kindent {
	char	*name;
	size_t	 len;
	int	 kind;
};
static struct kindent *kinds;
static size_t nkinds;

static const char *
kind_name(int k)
{
	return k == EX_INT64 ? "int64" : k == EX_FLOAT ? "float" : "bytes";
}

static int
kindcmp(const void *a, const void *b)
{
	const struct kindent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int
kind_of(void *arg, const uint8_t *name, size_t len)
{
	struct kindent key, *k;

	(void)arg;
	key.name = (char *)(uintptr_t)name;
	key.len = len;
	k = bsearch(&key, kinds, nkinds, sizeof(*kinds), kindcmp);
	return k != NULL ? k->kind : -1;
}

/* Add name -> kind (unsorted); the same name with another kind is an error. */
static void
kind_add(const char *src, const uint8_t *name, size_t len, int kind)
{
	size_t i;

	if (kind == EX_NONE)
		return;
	for (i = 0; i < nkinds; i++)
		if (kinds[i].len == len && memcmp(kinds[i].name, name, len) == 0) {
			if (kinds[i].kind != kind)
				die("--like %s: feature '%.*s' is both %s and %s",
				    src, (int)(len > 80 ? 80 : len), name,
				    kind_name(kinds[i].kind), kind_name(kind));
			return;
		}
	kinds = xreallocarray(kinds, nkinds + 1, sizeof(*kinds));
	kinds[nkinds].name = xmalloc(len + 1);
	memcpy(kinds[nkinds].name, name, len);
	kinds[nkinds].name[len] = '\0';
	kinds[nkinds].len = len;
	kinds[nkinds++].kind = kind;
}

static void
like_manifest(const char *src, const char *text, size_t n)
{
	struct manifest m;
	char err[256];
	size_t i;
	int k;

	memset(&m, 0, sizeof(m));
	if (mf_parse(&m, text, n, err, sizeof(err)) == -1)
		die("--like %s: %s", src, err);
	for (i = 0; i < m.nfeat; i++) {
		const struct mf_feature *f = &m.feat[i];

		if (f->deser == MF_DS_STRING || f->deser == MF_DS_RAW ||
		    f->dtype == MF_STRING)
			k = EX_BYTES;
		else if (f->deser == MF_DS_FLOAT)
			k = EX_FLOAT;
		else
			k = EX_INT64;
		kind_add(src, (const uint8_t *)f->name, strlen(f->name), k);
	}
	mf_free(&m);
}

static void
like_records(const char *src, int fd)
{
	struct rec_reader *r;
	struct example e;
	const uint8_t *p;
	size_t n, i, j;
	uint64_t nrec = 0;
	int rv;

	ex_init(&e);
	if ((r = rec_reader_open(fd, REC_AUTO, 0, max_len)) == NULL)
		die_errno("--like %s", src);
	while (nrec < LIKE_RECORDS && (rv = rec_read(r, &p, &n)) == 1) {
		if (ex_decode(&e, p, n, EX_TYPE_AUTO) == -1)
			die("--like %s: record %" PRIu64 ": %s", src, nrec,
			    ex_strerror(&e));
		for (i = 0; i < e.nfeat; i++)
			kind_add(src, e.feat[i].key, e.feat[i].keylen,
			    e.feat[i].kind);
		for (i = 0; i < e.nlists; i++)
			for (j = 0; j < e.lists[i].n; j++)
				kind_add(src, e.lists[i].key, e.lists[i].keylen,
				    e.lists[i].v[j].kind);
		nrec++;
	}
	if (nrec < LIKE_RECORDS && rv == -1)
		die("--like %s: record %" PRIu64 ": %s", src, rec_index(r),
		    rec_strerror(r));
	rec_reader_free(r);
	ex_free(&e);
}

static void
load_like(const char *path)
{
	struct stat st;
	char *mf = NULL, peek[64];
	uint8_t *text;
	ssize_t k;
	size_t n, i;
	int fd;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		mf = xmalloc(strlen(path) + 20);
		sprintf(mf, "%s/__manifest__.json", path);
		path = mf;
	}
	if ((fd = open_input(path)) == -1)
		exit(1);
	/* A manifest is JSON, '{' first; records begin with a length. */
	if ((k = pread(fd, peek, sizeof(peek), 0)) == -1)
		die_errno("--like %s: a file is needed", input_name(path));
	for (i = 0; i < (size_t)k && strchr(" \t\r\n", peek[i]) != NULL; i++)
		;
	if (i < (size_t)k && peek[i] == '{') {
		text = read_all(fd, &n, input_name(path));
		like_manifest(path, (const char *)text, n);
		free(text);
	} else
		like_records(path, fd);
	if (fd != 0)
		close(fd);
	if (nkinds == 0)
		die("--like %s: no features to take kinds from", input_name(path));
	qsort(kinds, nkinds, sizeof(*kinds), kindcmp);
	free(mf);
}

/*
 * --from-json: the kind each feature (or feature list) had where it was
 * first seen, so that a kind that changes between records is reported,
 * once a feature: jq 1.6 prints 0.0 as 0, which reads back as int64.
 * Names come from the input: a hash table keyed per process.
 */
struct kseen {
	char		*name;		/* NULL: a free slot */
	size_t		 len;
	int		 list;		/* a feature list */
	int		 kind;
	int		 warned;
	uint64_t	 rec, step;	/* where the kind was first seen */
	const char	*file;		/* in this input (not owned) */
};

static struct kseen *kseen;
static size_t kseen_n, kseen_cap;	/* cap: 0 or a power of 2 */
static uint8_t kseen_key[RP_HASHKEY_BYTES];

static size_t
kseen_hash(const uint8_t *name, size_t len, int list)
{
	return (size_t)(rp_shorthash(kseen_key, name, len) ^ (uint64_t)list);
}

/* The entry of a name, made (kind -1) when new. */
static struct kseen *
kseen_get(const uint8_t *name, size_t len, int list)
{
	struct kseen *k, *old = kseen;
	size_t i, oldcap = kseen_cap;

	if (kseen_cap == 0 || kseen_n + 1 > kseen_cap / 2) {
		if (kseen_cap == 0) {
			if (rp_hash_key(kseen_key, sizeof kseen_key) == -1)
				die("libsodium: cannot initialise");
		}
		kseen_cap = kseen_cap ? kseen_cap * 2 : 64;
		kseen = xcalloc(kseen_cap, sizeof *kseen);
		for (i = 0; i < oldcap; i++) {
			if (old[i].name == NULL)
				continue;
			k = &kseen[kseen_hash((const uint8_t *)old[i].name,
			    old[i].len, old[i].list) & (kseen_cap - 1)];
			while (k->name != NULL)
				k = k + 1 < kseen + kseen_cap ? k + 1 : kseen;
			*k = old[i];
		}
		free(old);
	}
	k = &kseen[kseen_hash(name, len, list) & (kseen_cap - 1)];
	while (k->name != NULL && (k->list != list || k->len != len ||
	    memcmp(k->name, name, len) != 0))
		k = k + 1 < kseen + kseen_cap ? k + 1 : kseen;
	if (k->name == NULL) {
		k->name = xmalloc(len + 1);
		memcpy(k->name, name, len);
		k->name[len] = '\0';
		k->len = len;
		k->list = list;
		k->kind = -1;
		kseen_n++;
	}
	return k;
}

static const char *
kind_word(int kind)
{
	return kind == EX_FLOAT ? "float" : kind == EX_INT64 ? "int64" :
	    "bytes";
}

/*
 * The kind of a feature in record rec of file name (of step 'step' of a
 * feature list, -1 for a feature): a warning at its first change.  *kp
 * caches the entry over the steps of one list (NULL at first).
 */
static void
kseen_one(const uint8_t *key, size_t keylen, long step,
    const struct ex_feature *x, const char *name, uint64_t rec,
    struct kseen **kp)
{
	char at0[40] = "", at1[40] = "";	/* " step N" of a list */
	int list = step >= 0;
	struct kseen *k;
	int other;

	/* no values, or no kind: nothing that jq could have changed */
	if (x->kind == EX_NONE || x->n == 0)
		return;
	if (*kp == NULL)
		*kp = kseen_get(key, keylen, list);
	k = *kp;
	if (k->kind == -1) {
		k->kind = (int)x->kind;
		k->rec = rec;
		k->step = (uint64_t)step;
		k->file = name;
		return;
	}
	if (k->kind == (int)x->kind || k->warned)
		return;
	k->warned = 1;
	other = strcmp(k->file, name) != 0;
	if (list) {
		snprintf(at0, sizeof at0, " step %" PRIu64, k->step);
		snprintf(at1, sizeof at1, " step %ld", step);
	}
	warnx_("%s: feature%s '%s' is %s in %s%srecord %" PRIu64 "%s and %s "
	    "from record %" PRIu64 "%s: pass --like FILE to keep the kinds",
	    name, list ? " list" : "", k->name, kind_word(k->kind),
	    other ? k->file : "", other ? " " : "", k->rec, at0,
	    kind_word((int)x->kind), rec, at1);
}

static void
kseen_check(const struct example *e, const char *name, uint64_t rec)
{
	struct kseen *k;
	size_t i, s;

	for (i = 0; i < e->nfeat; i++) {
		k = NULL;
		if (nwant == 0 || wanted(e->feat[i].key, e->feat[i].keylen))
			kseen_one(e->feat[i].key, e->feat[i].keylen, -1,
			    &e->feat[i], name, rec, &k);
	}
	for (i = 0; i < e->nlists; i++) {
		k = NULL;
		if (nwant && !wanted(e->lists[i].key, e->lists[i].keylen))
			continue;
		for (s = 0; s < e->lists[i].n; s++)
			kseen_one(e->lists[i].key, e->lists[i].keylen,
			    (long)s, &e->lists[i].v[s], name, rec, &k);
	}
}

/*
 * Read one JSON-lines input (its part pf under --part: whole lines, as
 * it ends at a line start) and write records.
 */
static int
cat_json(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path);
	FILE *fp;
	char *l = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0, nrec = 0, pos = 0, end = UINT64_MAX;
	const struct example *e;
	int status = 0, r;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if (strcmp(path, "-") == 0)
		fp = stdin;
	else if ((fp = fopen(path, "r")) == NULL) {
		warn_errno("%s", path);
		return 1;
	}
	if (pf != NULL) {
		if (fseeko(fp, (off_t)pf->from, SEEK_SET) == -1)
			die_errno("%s", name);
		pos = pf->from;
		end = pf->to;
	}
	while (!done() && pos < end && (len = getline(&l, &cap, fp)) != -1) {
		pos += (uint64_t)len;
		lineno++;
		if (progress_due())
			progress("%s: %" PRIu64 " lines", name, lineno);
		while (len > 0 && (l[len - 1] == '\n' || l[len - 1] == '\r'))
			len--;
		if (len == 0)
			continue;
		pay.len = 0;
		if (type == TYPE_RAW)
			r = exjson_parse_raw(&js, l, (size_t)len, &pay);
		else
			r = exjson_parse(&js, l, (size_t)len,
			    type < 0 ? EX_TYPE_AUTO : type, &pay);
		if (r == -1) {
			warnx_("%s: line %" PRIu64 ": %s", name, lineno,
			    exjson_strerror(&js));
			status = 1;
			break;
		}
		nrec++;
		if (!selected())
			continue;
		if (type != TYPE_RAW && (e = exjson_example(&js)) != NULL)
			kseen_check(e, name, nrec - 1);
		if (one_record(pay.p, pay.len, &(const char *){ NULL }) != 0) {
			warnx_("%s: line %" PRIu64 ": out of memory", name, lineno);
			status = 1;
			break;
		}
	}
	progress_done();
	if (ferror(fp)) {
		warn_errno("%s", name);
		status = 1;
	}
	free(l);
	if (fp != stdin)
		fclose(fp);
	return status;
}

/*
 * --manifest: infer a manifest from the inputs; --check-manifest M:
 * check every record of the inputs (or of the dataset M names) against
 * the manifest.  Returns the exit status.
 */
static int
manifest_mode(int argc, char **argv)
{
	static char dash0[] = "-";
	static char *dash[] = { dash0, NULL };
	struct ld_dataset ds;
	struct mf_infer inf;
	struct rec_reader *r;
	const uint8_t *p;
	struct buf out = { 0 };
	char err[512], where[4096];
	const char *name;
	size_t n;
	int fd, ret, status = 0, first;
	enum ex_type et;
	enum rec_comp comp = in_comp;

	memset(&ds, 0, sizeof ds);
	mf_infer_init(&inf);
	inf.var_len_ok = var_len;
	if (mode == M_CHECK_MANIFEST) {
		if (ld_dataset_path(&ds, check_mf, err, sizeof err) == -1)
			die("%s", err);
		if (argc == 0 && ds.nfiles == 0)
			die("%s: a manifest names no data files; name them as "
			    "operands", check_mf);
		if (argc == 0) {
			argc = (int)ds.nfiles;
			argv = ds.files;
		}
		comp = REC_AUTO;
	} else if (argc == 0) {
		argc = 1;
		argv = dash;
	}
	et = mode == M_CHECK_MANIFEST ? (ds.mf.allow_var_len ?
	    EX_TYPE_SEQUENCE : EX_TYPE_EXAMPLE) : type < 0 ? EX_TYPE_AUTO :
	    (enum ex_type)type;
	for (int i = 0; i < argc && status == 0 && !done(); i++) {
		name = input_name(argv[i]);
		if ((fd = open_input(argv[i])) == -1)
			return 1;
		if ((r = rec_reader_open(fd, comp, no_crc ? REC_NO_CRC : 0,
		    max_len)) == NULL)
			die_errno("%s", name);
		first = 1;
		while ((ret = rec_read(r, &p, &n)) == 1 || first) {
			if (first && mode == M_CHECK_MANIFEST &&
			    ret >= 0 && rec_compression(r) != ds.mf.comp) {
				warnx_("%s: the file is %s-compressed, but the "
				    "manifest says %s", name,
				    rec_compname(rec_compression(r)),
				    rec_compname(ds.mf.comp));
				status = 1;
				break;
			}
			if (first && mode == M_MANIFEST && ret >= 0 &&
			    mf_infer_comp(&inf, rec_compression(r), err,
			    sizeof err) == -1) {
				warnx_("%s: %s", name, err);
				status = 1;
				break;
			}
			first = 0;
			if (ret != 1 || done())
				break;
			if (!selected())
				continue;
			if (ex_decode(&ex, p, n, et) == -1) {
				warnx_("%s: record %" PRIu64 ": offset %" PRIu64
				    ": payload is not %s: %s", name,
				    rec_index(r) - 1, rec_offset(r),
				    et == EX_TYPE_SEQUENCE ? "a SequenceExample" :
				    "an Example", ex_strerror(&ex));
				status = 1;
				break;
			}
			if (mode == M_CHECK_MANIFEST) {
				if (mf_check_record(&ds.mf, &ex, err,
				    sizeof err) == -1) {
					warnx_("%s: record %" PRIu64 ": offset %"
					    PRIu64 ": %s", name, rec_index(r) - 1,
					    rec_offset(r), err);
					status = 1;
					break;
				}
				nout++;
				continue;
			}
			select_features(&ex);
			snprintf(where, sizeof where, "%s record %" PRIu64,
			    name, rec_index(r) - 1);
			if (mf_infer_add(&inf, &ex, where, err, sizeof err) == -1) {
				warnx_("%s: record %" PRIu64 ": offset %" PRIu64
				    ": %s%s", name, rec_index(r) - 1,
				    rec_offset(r), err, errno == ERANGE ?
				    " (--var-len states it as a list of varying "
				    "length)" : "");
				status = 1;
				break;
			}
			nout++;
		}
		if (ret == -1) {
			warnx_("%s: record %" PRIu64 ": offset %" PRIu64 ": %s",
			    name, rec_index(r), rec_offset(r), rec_strerror(r));
			status = 1;
		}
		rec_reader_free(r);
		if (fd != 0)
			close(fd);
	}
	if (status == 0 && mode == M_MANIFEST) {
		for (size_t i = 0; i < inf.nf; i++)
			if (inf.f[i].kind == EX_NONE)
				warnx_("feature '%s': no record gives it a kind; "
				    "stated as a string with no values",
				    inf.f[i].name);
		if (mf_infer_write(&inf, &out, err, sizeof err) == -1)
			die("%s", err);
		if (fwrite(out.p, 1, out.len, stdout) != out.len)
			write_failed("stdout");
	}
	if (status == 0 && mode == M_CHECK_MANIFEST && verbosity > 0)
		printf("%s: %" PRIu64 " records in %d files, OK\n", check_mf,
		    nout, argc);
	rp_buf_free(&out);
	mf_infer_free(&inf);
	ld_dataset_free(&ds);
	return status;
}

static void
parse_features(char *s)
{
	char *tok;

	for (tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		want = xreallocarray(want, nwant + 1, sizeof(*want));
		want[nwant++] = tok;
	}
	/* No names would keep every feature: an empty list is an error. */
	if (nwant == 0)
		usage_error("-f: no feature names");
	qsort(want, nwant, sizeof(*want), cmpstr);
}

int
main(int argc, char *argv[])
{
	struct part_file *parts = NULL;
	size_t i;
	int ch, status = 0, c;

	setprogname(argv[0]);
	while ((ch = getopt_args(argc, argv, "cf:hn:o:qRs:Vz:", longopts)) != -1) {
		switch (ch) {
		case 'c': mode = M_COUNT; break;
		case 'f': parse_features(optarg); break;
		case 'h': usage(stdout, 0);
		case 'n': head = size_arg("-n", optarg); break;
		case 'o': outpath = optarg; break;
		case 'q': verbosity = 0; break;
		case 'R': mode = M_RECORDS; break;
		case 's':
			seed = (uint64_t)num_arg("-s", optarg, 0, INT64_MAX);
			break;
		case 'V': print_version(NULL);
		case 'z':
			if ((c = rec_parse_comp(optarg)) == -1 || c == REC_AUTO)
				usage_error("-z: expected none, zlib or gzip, not '%s'", optarg);
			out_comp = c;
			break;
		case O_CONTIGUOUS: contiguous = 1; break;
		case O_COMPRESSION:
			if ((c = rec_parse_comp(optarg)) == -1)
				usage_error("--compression: expected auto, none, zlib or gzip, not '%s'", optarg);
			in_comp = (enum rec_comp)c;
			break;
		case O_FLAT: flat = 1; break;
		case O_FORCE: force = 1; break;
		case O_FROM_JSON: from_json = 1; break;
		case O_INDEX: mode = M_INDEX; break;
		case O_KEEP_PARTIAL: keep_partial = 1; break;
		case O_LIKE: like = optarg; break;
		case O_PROGRESS: progress_enabled = 1; break;
		case O_NO_PROGRESS: progress_enabled = 0; break;
		case O_LOSSY: lossy = 1; break;
		case O_MAXREC: max_len = max_record_arg(optarg); break;
		case O_NO_CRC: no_crc = 1; break;
		case O_RECOVER: recover = 1; break;
		case O_PART:
			part_arg(optarg, &part_k, &part_n);
			break;
		case O_SHARD:
			if (parse_shard(optarg, &shard_k, &shard_n) == -1)
				usage_error("--shard: expected K/N with 0 <= K < N, not '%s'", optarg);
			break;
		case O_SHUFFLE: shuffle = 1; break;
		case O_SHUF_MEM: shuffle_mem = size_arg("--shuffle-memory", optarg); break;
		case O_SHUF_WIN:
			shuffle_window = size_arg("--shuffle-window", optarg);
			shuffle = 1;
			break;
		case O_SKIP: skip = size_arg("--skip", optarg); break;
		case O_SPLIT:
			nsplit = size_arg("--split", optarg);
			if (nsplit == 0 || nsplit > 100000)
				usage_error("--split: expected 1 to 100000 shards");
			break;
		case O_STATS: mode = M_STATS; break;
		case O_TF_COMPAT: tf_compat = 1; break;
		case O_TYPE:
			if (strcmp(optarg, "auto") == 0)
				type = -1;
			else if (strcmp(optarg, "example") == 0)
				type = EX_TYPE_EXAMPLE;
			else if (strcmp(optarg, "sequence") == 0)
				type = EX_TYPE_SEQUENCE;
			else if (strcmp(optarg, "raw") == 0)
				type = TYPE_RAW;
			else
				usage_error("--type: expected auto, example, sequence or raw, not '%s'", optarg);
			break;
		case O_VERIFY: mode = M_VERIFY; break;
		case O_MANIFEST: mode = M_MANIFEST; break;
		case O_VAR_LEN: var_len = 1; break;
		case O_CHECK_MANIFEST:
			mode = M_CHECK_MANIFEST;
			check_mf = optarg;
			break;
		default: usage(stderr, 2);
		}
	}
	argc -= optind;
	argv += optind;

	if (from_json && mode == M_JSON)
		mode = M_RECORDS;
	/* Outputs follow their suffix: JSON is not written into a record file. */
	if (mode == M_JSON && !flat && outpath && suffix_records(outpath))
		mode = M_RECORDS;
	if ((nsplit || shuffle || out_comp >= 0) && mode != M_RECORDS)
		mode = M_RECORDS;
	if (from_json && mode != M_RECORDS)
		usage_error("--from-json writes records; it goes with -R only");
	if (like != NULL && !from_json)
		usage_error("--like gives the feature kinds for --from-json");
	if (nsplit && (outpath == NULL || strcmp(outpath, "-") == 0))
		usage_error("--split needs -o PATTERN");
	if (contiguous && !nsplit)
		usage_error("--contiguous goes with --split only");
	if (contiguous && (part_n > 1 || shard_n > 1 || skip > 0 ||
	    head != UINT64_MAX))
		usage_error("--split --contiguous excludes --part, --shard, "
		    "--skip and -n: its shards are the parts of the input");
	/* --split 1 --contiguous is --part 0/1: the whole input, anywhere. */
	if (contiguous && nsplit == 1)
		contiguous = 0;
	if (contiguous) {
		if (argc == 0)
			usage_error("--split --contiguous needs files: standard "
			    "input cannot be cut into parts");
		for (i = 0; i < (size_t)argc; i++)
			if (strcmp(argv[i], "-") == 0)
				usage_error("--split --contiguous needs files: "
				    "standard input cannot be cut into parts");
	}
	if (nwant && mode == M_RECORDS && type == TYPE_RAW)
		usage_error("-f needs decoded records, not --type raw");
	if (mode == M_STATS && type == TYPE_RAW)
		usage_error("--stats needs decoded records, not --type raw");
	if (part_n > 1 && (shard_n > 1 || skip > 0 || head != UINT64_MAX))
		usage_error("--part excludes --shard, --skip and -n: they count "
		    "records from the start of the input, which a part does not read");
	if (var_len && mode != M_MANIFEST)
		usage_error("--var-len goes with --manifest only");
	if (part_n > 1 && (mode == M_MANIFEST || mode == M_CHECK_MANIFEST))
		usage_error("--part does not apply to --manifest and --check-manifest");
	if (nwant && mode == M_CHECK_MANIFEST)
		usage_error("-f does not apply to --check-manifest: it checks "
		    "every feature of the manifest");

	/* Every named output is checked before any input is read. */
	if (outpath && !nsplit) {
		out_form(outpath, mode == M_RECORDS ? WRITES_RECORDS : WRITES_TEXT,
		    mode == M_RECORDS ? "leave out -R to write JSON lines" :
		    mode == M_JSON ? "leave out --flat, or add -R, to write records" :
		    "this mode writes text");
		out_check(outpath);
	}
	/* A part is planned from every operand's size before any output. */
	if (part_n > 1)
		parts = part_files(argv, argc, !from_json, in_comp, part_k, part_n);
	else if (contiguous)
		parts = part_files(argv, argc, !from_json, in_comp, 0, nsplit);
	/*
	 * Text outputs (JSON, --flat, --index, -c, --stats, --verify) go
	 * to a temporary file beside the name, renamed at the end: the old
	 * file stays until the new one is whole.
	 */
	if (mode != M_RECORDS) {
		output_open(&textout, outpath, WRITES_TEXT, NULL);
		if (textout.fd != 1 && dup2(textout.fd, 1) == -1)
			die_errno("%s", textout.name);
		stdout_name = textout.name;	/* write errors name the file */
	}

	if (mode == M_MANIFEST || mode == M_CHECK_MANIFEST) {
		status = manifest_mode(argc, argv);
		close_stdout();
		output_close(&textout, status == 0);
		return status;
	}
	exjson_init(&js, (flat ? EXJSON_FLAT : 0) | (lossy ? EXJSON_LOSSY : 0));
	js.flush = flush_json;
	if (like != NULL) {
		load_like(like);
		js.kind_of = kind_of;
	}
	ex_init(&ex);
	ex.lazy_min = LAZY_MIN;	/* JSON, --stats and -f read it; nothing else decodes */
	rng_seed(&rng, seed);
	stdout_buffer();
	if (mode == M_RECORDS)
		open_sinks();

	if (argc == 0) {
		static char dash0[] = "-";
		static char *dash[] = { dash0, NULL };

		argv = dash;
	}
	/* As wc(1): one input, its count alone; several, each and a total. */
	count_each = mode == M_COUNT && argc > 1;
	/*
	 * --contiguous: shard K is what --part K/N writes, read and finished
	 * (shuffled with the seed afresh) before the next is read.
	 */
	for (cur_shard = 0; contiguous && cur_shard < nsplit; cur_shard++) {
		if (cur_shard > 0)
			parts = part_files(argv, argc, !from_json, in_comp,
			    cur_shard, nsplit);
		rng_seed(&rng, seed);
		for (i = 0; argv[i] != NULL; i++)
			status |= from_json ? cat_json(argv[i], &parts[i]) :
			    cat_records(argv[i], &parts[i]);
		free(parts);
		parts = NULL;
		sink_finish(&sinks[cur_shard]);
	}
	for (i = 0; !contiguous && argv[i] != NULL; i++) {
		const struct part_file *pf = parts != NULL ? &parts[i] : NULL;

		if (from_json)
			status |= cat_json(argv[i], pf);
		else
			status |= cat_records(argv[i], pf);
		if (done())
			break;
	}
	free(parts);
	if (mode == M_RECORDS) {
		if (status && !recover && !keep_partial && nsinks &&
		    (sinks[0].out.file.active || sinks[0].zused)) {
			/*
			 * Named outputs appear whole or not at all (stdout
			 * gets what the good records before the fault give).
			 * A --contiguous shard may be finished already,
			 * spilled and compressed into zout.
			 */
			close_sinks(0);
			exit(1);
		}
		/* Every shard is finished before the first is renamed. */
		for (i = 0; i < nsinks; i++)
			sink_finish(&sinks[i]);
		close_sinks(1);
	}
	if (mode == M_COUNT)
		printf(count_each ? "%" PRIu64 " total\n" : "%" PRIu64 "\n", nout);
	if (mode == M_STATS)
		stats_print();
	close_stdout();
	if (mode != M_RECORDS)
		output_close(&textout, status == 0);
	return status;
}
