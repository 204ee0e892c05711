/*
 * subword-build: build a tensor2tensor SubwordTextEncoder vocabulary
 * from text files, byte-identical to what tensor2tensor's
 * get_or_generate_vocab (build_to_target_size) or
 * build_from_token_counts writes; or write the token counts of some
 * files (--count-only) and build from several such count files
 * (--from-counts), for map/reduce over shards.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "common.h"
#include "errmsg.h"
#include "io.h"
#include "pool.h"
#include "subword.h"
#include "unicode.h"

static const char usage_text[] =
    "usage: subword-build [-hqV] [--count-only] [--keep-partial]\n"
    "                     [--progress | --no-progress] [-b bytes] [--iterations n]\n"
    "                     [-j jobs] [-L length] [--min-count n] [-o file]\n"
    "                     [--part K/N] [--reserved token] [-t size] [file ...]\n"
    "       subword-build [-hqV] [--keep-partial] [--progress | --no-progress]\n"
    "                     [--iterations n] [-j jobs] [-L length] [--min-count n]\n"
    "                     [-o file] [--reserved token] [-t size] --from-counts\n"
    "                     [file ...]\n"
    "\n"
    "  -b, --file-byte-budget B   per-file sampling budget (default 1e6)\n"
    "  --count-only               write token counts instead of a vocabulary\n"
    "  --from-counts              build from count files (of --count-only)\n"
    "  -h, --help                 print this help\n"
    "  --iterations N             iterations of each build (default 4)\n"
    "  -j, --jobs N               threads (default 0: one per CPU, at most 8)\n"
    "  --keep-partial             after a fault, keep what the good input gave\n"
    "  -L, --max-subtoken-length N  subtokens of at most N-1 code points\n"
    "  --min-count N              build once with this minimum count\n"
    "  -o, --output FILE          write to FILE (atomically)\n"
    "  --part K/N                 count the K-th of N parts of the input\n"
    "                             (auto: K and N from the job array or MPI)\n"
    "  --progress, --no-progress  progress on stderr (default: when a terminal)\n"
    "  -q, --quiet                no progress and no warnings\n"
    "  --reserved TOKEN           add a reserved token after <pad> and <EOS>\n"
    "  -t, --target-size, --vocab-size N  target vocabulary size (default 32768)\n"
    "  -V, --version              print the version\n"
    "See subword-build(1).\n";

static _Noreturn void
usage(FILE *fp, int status)
{
	print_usage(fp, usage_text, status);
}

enum {
	OPT_COUNT_ONLY = 256, OPT_FROM_COUNTS, OPT_ITERATIONS, OPT_MIN_COUNT,
	OPT_RESERVED, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_KEEP_PARTIAL, OPT_PART
};

static const struct option longopts[] = {
	{ "file-byte-budget", required_argument, NULL, 'b' },
	{ "count-only", no_argument, NULL, OPT_COUNT_ONLY },
	{ "from-counts", no_argument, NULL, OPT_FROM_COUNTS },
	{ "help", no_argument, NULL, 'h' },
	{ "iterations", required_argument, NULL, OPT_ITERATIONS },
	{ "jobs", required_argument, NULL, 'j' },
	{ "keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL },
	{ "max-subtoken-length", required_argument, NULL, 'L' },
	{ "min-count", required_argument, NULL, OPT_MIN_COUNT },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "output", required_argument, NULL, 'o' },
	{ "part", required_argument, NULL, OPT_PART },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "reserved", required_argument, NULL, OPT_RESERVED },
	{ "target-size", required_argument, NULL, 't' },
	{ "version", no_argument, NULL, 'V' },
	{ "vocab-size", required_argument, NULL, 't' },	/* sentencepiece's name */
	{ NULL, 0, NULL, 0 }
};

static uint64_t total_lines;
/* For the summary: the bytes of text there were and those counted. */
static uint64_t text_bytes, used_bytes;
/* The bisection's probes, for the summary's min_count. */
static struct { int64_t mc; size_t size; } probes[128];
static size_t nprobes;

/*
 * 1 after a fault in an input (a missing file, a bad line): its lines
 * before the fault are counted and the others are read, so that the
 * vocabulary is the one the good input gives; -o commits it only under
 * --keep-partial.
 */
static int rval;

/*
 * The lines to count: the operands read in turn, each sampled (the
 * sampling is sequential: it charges a budget) and stripped.  A part of
 * a file (--part) is sampled at the file's rate, under the share of the
 * budget its bytes are of the file's.
 */
static struct {
	char		**paths;
	const struct part_file *parts;	/* NULL, or one per path */
	size_t		 next;		/* the path opened next */
	double		 budget;
	/* the file being read, when r is not NULL */
	const char	*path, *name;
	int		 fd;
	struct sw_lines	*r;
	struct sw_sampler s;
} in;

/* Open the next operand; 0, or -1 when it is skipped (empty part, or a warning). */
static int
open_next(void)
{
	const struct part_file *pf = in.parts ? &in.parts[in.next] : NULL;
	struct stat st;
	uint64_t size;
	size_t n;

	in.path = in.paths[in.next++];
	in.name = input_name(in.path);
	if (pf != NULL && pf->from == pf->to)
		return -1;
	if ((in.fd = pf != NULL ? open_text_part(in.path) : open_text(in.path)) == -1) {
		rval = 1;
		return -1;
	}
	if (fstat(in.fd, &st) == -1)
		die_errno("%s", in.name);
	if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
		in.r = sw_lines_open(in.fd);
	} else {
		uint8_t *all = read_all(in.fd, &n, in.name);

		size = n;
		in.r = sw_lines_open_buf(all, n);
	}
	if (in.r == NULL)
		die_errno("%s", in.name);
	sw_sample_init(&in.s, in.budget, size);
	text_bytes += pf != NULL ? pf->to - pf->from : size;
	if (pf != NULL) {
		if (sw_lines_range(in.r, pf->from, pf->to - pf->from) == -1)
			die_errno("%s", in.name);
		in.s.budget = in.budget * (double)(pf->to - pf->from) / (double)size;
	}
	return 0;
}

/* The next line to count, stripped: 1, or 0 after the last operand. */
static int
next_line(const uint8_t **pp, size_t *np)
{
	int nl, rc, k;

	for (;;) {
		if (in.r == NULL) {
			if (in.paths[in.next] == NULL)
				return 0;
			(void)open_next();
			continue;
		}
		while ((rc = sw_lines_next(in.r, pp, np, &nl)) == 1) {
			total_lines++;
			if (progress_due())
				progress("%s: %ju lines", in.name,
				    (uintmax_t)sw_lines_lineno(in.r));
			if ((k = sw_sample_next(&in.s)) == 0)
				continue;
			if (k < 0)
				break;
			used_bytes += *np + (size_t)nl;
			sw_strip(pp, np);
			sw_sample_charge(&in.s, sw_cplen(*pp, *np));
			return 1;
		}
		if (rc == -1)
			die_errno("%s", in.name);
		if (rc == -2) {
			warnx_("%s: %s", in.name, sw_lines_strerror(in.r));
			rval = 1;
		}
		sw_lines_free(in.r);
		in.r = NULL;
		close_text(in.fd, in.path);
	}
}

/*
 * Counting with -j N > 1 (lib/pool.h): the lines to count are copied
 * into batches in turn, and each thread counts its batches into a table
 * of its own; the tables are merged at the end.  Token counts are a
 * multiset, so the vocabulary does not depend on which thread counted
 * which line.
 */
#define BATCH_BYTES	(1u << 20)

struct batch {
	struct buf	 b;		/* the lines' bytes, back to back */
	size_t		*ends;		/* end offset of each line */
	size_t		 n, ncap;
	struct sw_counts *counts;	/* the thread's table */
	int		 err;		/* errno of a failed count, or 0 */
};

static struct batch *batches;	/* one per thread */

static int
batch_read(void *arg, const struct pool_unit *u)
{
	struct batch *b = &batches[u->worker];
	const uint8_t *p;
	size_t n;

	(void)arg;
	b->b.len = b->n = 0;
	while (b->b.len < BATCH_BYTES) {
		if (!next_line(&p, &n))
			return b->n > 0 ? POOL_LAST : POOL_NONE;
		if (b->n == b->ncap) {
			size_t nc = b->ncap ? 2 * b->ncap : 4096;

			b->ends = xreallocarray(b->ends, nc, sizeof(*b->ends));
			b->ncap = nc;
		}
		if (rp_buf_append(&b->b, p, n) == -1)
			die_errno("jobs");
		b->ends[b->n++] = b->b.len;
	}
	return POOL_MORE;
}

static void
batch_count(void *arg, const struct pool_unit *u)
{
	struct batch *b = &batches[u->worker];
	size_t i, start = 0;

	(void)arg;
	for (i = 0; i < b->n; i++) {
		if (sw_counts_add_text(b->counts, b->b.p + start,
		    b->ends[i] - start) == -1) {
			b->err = errno;
			return;
		}
		start = b->ends[i];
	}
}

/* Nothing is written in order; a failed count ends the run. */
static int
batch_done(void *arg, const struct pool_unit *u)
{
	(void)arg;
	return batches[u->worker].err != 0;
}

static const struct pool_ops batch_ops = { batch_read, batch_count, batch_done };

/* Count the lines of the operands into c, in 'jobs' threads. */
static void
count_all(struct sw_counts *c, int jobs)
{
	struct buf t = { 0 };
	char err[RP_ERRMAX];
	const uint8_t *p;
	size_t n;
	int i;

	if (jobs <= 1) {
		while (next_line(&p, &n))
			if (sw_counts_add_text(c, p, n) == -1)
				die_errno("%s", in.name);
		return;
	}
	batches = xcalloc((size_t)jobs, sizeof(*batches));
	for (i = 0; i < jobs; i++)
		if ((batches[i].counts = sw_counts_new()) == NULL)
			die_errno("counts");
	if (pool_run(jobs, &batch_ops, NULL) != 0) {
		for (i = 0; i < jobs && batches[i].err == 0; i++)
			;
		errno = batches[i].err;
		die_errno("counts");
	}
	for (i = 0; i < jobs; i++) {
		t.len = 0;
		if (sw_counts_write(batches[i].counts, &t) == -1)
			die_errno("counts");
		if (sw_counts_read(c, t.p, t.len, err, sizeof err) == -1)
			die("counts: %s", err);
		sw_counts_free(batches[i].counts);
		rp_buf_free(&batches[i].b);
		free(batches[i].ends);
	}
	rp_buf_free(&t);
	free(batches);
}

static int
progress_on(void)
{
	if (progress_enabled == -1)
		progress_enabled = isatty(2);
	return progress_enabled && verbosity >= 1;
}

/*
 * The line a build ends with: the entries, the min_count that made
 * them, and the text counted against the text there was (a forgotten
 * -b shows as a small share).
 */
static void
summary(size_t n, long long min_count, int from_counts)
{
	size_t i;
	char mc[48] = "";

	if (min_count != -1)
		snprintf(mc, sizeof mc, ", min_count %lld", min_count);
	else
		for (i = nprobes; i-- > 0;)
			if (probes[i].size == n) {
				snprintf(mc, sizeof mc, ", min_count %lld",
				    (long long)probes[i].mc);
				break;
			}
	if (from_counts)
		warnx_("%zu entries%s, from counts", n, mc);
	else
		warnx_("%zu entries%s, from %ju of %ju bytes of text (%.3g%%; "
		    "-b sets the bytes counted of each file)", n, mc,
		    (uintmax_t)used_bytes, (uintmax_t)text_bytes,
		    text_bytes ? 100.0 * (double)used_bytes / (double)text_bytes :
		    100.0);
}

/* Each probe of the bisection gets a progress line of its own. */
static void
show_probe(void *arg, int64_t min_count, size_t size)
{
	(void)arg;
	if (nprobes < sizeof(probes) / sizeof(probes[0])) {
		probes[nprobes].mc = min_count;
		probes[nprobes++].size = size;
	}
	if (progress_on()) {
		progress("min_count %lld: %zu subtokens", (long long)min_count, size);
		fputc('\n', stderr);
	}
}

static void
read_counts(struct sw_counts *c, const char *path)
{
	const char *name = input_name(path);
	char err[RP_ERRMAX];
	uint8_t *p;
	size_t n;
	int fd;

	if ((fd = open_text(path)) == -1) {
		rval = 1;
		return;
	}
	p = read_all(fd, &n, name);
	if (sw_counts_read(c, p, n, err, sizeof err) == -1) {
		if (errno == ENOMEM)
			die_errno("%s", name);
		warnx_("%s: %s", name, err);
		rval = 1;
	}
	free(p);
	close_text(fd, path);
}

/* A regular, uncompressed file, opened; -1 (and no message) for any other. */
static int
open_plain(const char *path)
{
	struct stat st;
	uint8_t pre[16];
	ssize_t k;
	int fd;

	if (strcmp(path, "-") == 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (k = pread(fd, pre, sizeof(pre), 0)) >= 0 &&
	    sniff_compression(pre, (size_t)k) == NULL)
		return fd;
	close(fd);
	return -1;
}

/*
 * The count files of --from-counts, into c.  The plain ones (regular,
 * uncompressed) are read whole, a run of them at a time, and parsed side
 * by side in 'jobs' threads (sw_counts_read_files()); any other input
 * (stdin, a pipe, a compressed file, one that cannot be opened) in its
 * turn by read_counts().  The counts and the messages are those of one
 * file after the other.  Peak: the run's files and 'jobs' tables of
 * theirs beside c.
 */
static void
read_counts_all(struct sw_counts *c, char **paths, int jobs)
{
	size_t n, i, j, first = 0, done;
	uint8_t **p;
	size_t *len;
	char *err;
	int *eno, fd;

	for (n = 0; paths[n] != NULL; n++)
		;
	p = xcalloc(n + 1, sizeof(*p));
	len = xcalloc(n + 1, sizeof(*len));
	err = xcalloc(n + 1, RP_ERRMAX);
	eno = xcalloc(n + 1, sizeof(*eno));
	for (i = 0; i <= n; i++) {
		if (i < n && (fd = open_plain(paths[i])) != -1) {
			p[i] = read_all(fd, &len[i], paths[i]);
			close(fd);
			continue;
		}
		/* The run before i, then i itself. */
		done = sw_counts_read_files(c, (const uint8_t *const *)p + first,
		    len + first, i - first, jobs, err + first * RP_ERRMAX,
		    RP_ERRMAX, eno + first);
		for (j = first; j < i; j++) {
			if (j - first == done) {
				errno = ENOMEM;
				die_errno("%s", paths[j]);
			}
			if (eno[j] != 0) {
				warnx_("%s: %s", paths[j], err + j * RP_ERRMAX);
				rval = 1;
			}
			free(p[j]);
		}
		if (i < n)
			read_counts(c, paths[i]);
		first = i + 1;
	}
	free(p);
	free(len);
	free(err);
	free(eno);
}

int
main(int argc, char *argv[])
{
	struct sw_build_opts o;
	struct sw_counts *c;
	struct sw_vocab *v;
	struct output out;
	struct buf ob = { 0 };
	const char **reserved = NULL;
	const char *outpath = "-";
	long long target = -1, min_count = -1;
	double budget = 1e6;
	long long jobs = 0;
	struct part_file *parts = NULL;
	uint64_t part_k = 0, part_n = 1;
	int ch, count_only = 0, from_counts = 0;
	size_t nentries = 0;

	setprogname(argv[0]);
#ifdef M_MMAP_THRESHOLD
	/*
	 * The build allocates and frees arrays of a few bytes per character
	 * in turn: keep them mapped on their own, so that each goes back to
	 * the system when freed (glibc would otherwise raise the threshold
	 * and keep them in the heap, adding up the peaks of all phases).
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	sw_build_opts_init(&o);
	while ((ch = getopt_args(argc, argv, "b:hj:L:o:qt:V", longopts)) != -1)
		switch (ch) {
		case 'b':
			/* A number of bytes: 1e6, 2.5e5 or a size like 4M. */
			if (parse_real(optarg, &budget) == -1)
				budget = (double)size_arg(option_name, optarg);
			if (!(budget > 0))
				usage_error("%s: expected a positive number of "
				    "bytes, not '%s'", option_name, optarg);
			break;
		case 'h':
			usage(stdout, 0);
		case 'j':
			jobs = jobs_arg(optarg);
			break;
		case 'L':
			o.max_subtoken_len = (long)num_arg(option_name, optarg, 1,
			    1L << 30);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'q':
			verbosity = 0;
			break;
		case 't':
			target = num_arg(option_name, optarg, 1, INT32_MAX);
			break;
		case 'V':
			print_version("Unicode " UNICODE_VERSION);
		case OPT_COUNT_ONLY:
			count_only = 1;
			break;
		case OPT_FROM_COUNTS:
			from_counts = 1;
			break;
		case OPT_ITERATIONS:
			o.iterations = (int)num_arg("--iterations", optarg, 1, 1000);
			break;
		case OPT_MIN_COUNT:
			min_count = num_arg("--min-count", optarg, 1, INT64_MAX);
			break;
		case OPT_RESERVED:
			if (uni_utf8_valid_prefix((const uint8_t *)optarg, strlen(optarg)) !=
			    strlen(optarg))
				usage_error("reserved token is not UTF-8: %s", optarg);
			reserved = xreallocarray(reserved, o.nreserved + 1,
			    sizeof(*reserved));
			reserved[o.nreserved++] = optarg;
			break;
		case OPT_KEEP_PARTIAL:
			keep_partial = 1;
			break;
		case OPT_PART:
			part_arg(optarg, &part_k, &part_n);
			break;
		case OPT_PROGRESS:
			progress_enabled = 1;
			break;
		case OPT_NO_PROGRESS:
			progress_enabled = 0;
			break;
		default:
			usage(stderr, 2);
		}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		static char dash[] = "-";
		static char *stdin_only[] = { dash, NULL };

		argv = stdin_only;
		argc = 1;
	}
	if (target != -1 && min_count != -1)
		usage_error("-t and --min-count exclude each other");
	if (count_only && from_counts)
		usage_error("--count-only and --from-counts exclude each other");
	if (part_n > 1 && !count_only)
		usage_error("--part applies to --count-only (the parts' counts "
		    "make one vocabulary through --from-counts)");
	if (target == -1 && min_count == -1)
		target = 32768;
	o.reserved = reserved;
	o.probe = show_probe;

	/* An output that cannot be written is refused before the counting. */
	out_form(outpath, WRITES_TEXT, "a vocabulary is a text file");
	out_check(outpath);
	if (part_n > 1)
		parts = part_files(argv, argc, 0, REC_NONE, part_k, part_n);
	jobs = jobs_count((int)jobs);
	o.jobs = (int)jobs;

	if ((c = sw_counts_new()) == NULL)
		die_errno("counts");
	if (from_counts)
		read_counts_all(c, argv, (int)jobs);
	else {
		in.paths = argv;
		in.parts = parts;
		in.budget = budget;
		count_all(c, (int)jobs);
	}
	free(parts);
	progress_done();

	if (count_only) {
		if (sw_counts_write(c, &ob) == -1)
			die_errno("counts");
	} else {
		sw_counts_compact(c);
		if (min_count != -1)
			v = sw_build(c, min_count, &o);
		else
			v = sw_build_to_target(c, (size_t)target, &o);
		progress_done();
		if (v == NULL) {
			if (errno == E2BIG)
				die("corpus too large: more than 4 GiB of distinct tokens");
			die_errno("build");
		}
		if (sw_vocab_store(v, &ob) == -1)
			die_errno("vocab");
		nentries = sw_vocab_size(v);
		sw_vocab_free(v);
	}
	sw_counts_free(c);

	output_open(&out, outpath, WRITES_TEXT, "a vocabulary is a text file");
	if (rp_write_full(out.fd, ob.p, ob.len) == -1)
		write_failed(out.name);
	/* A named output is all-or-nothing unless --keep-partial. */
	output_close(&out, rval == 0);
	if (!count_only && rval == 0 && verbosity > 0)
		summary(nentries, min_count, from_counts);
	rp_buf_free(&ob);
	free(reserved);
	return rval;
}
