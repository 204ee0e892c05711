/*
 * mmap-index: build, read, inspect, merge and check the .bin/.idx
 * token datasets of fairseq and Megatron-LM, byte-identical to what
 * their own builders write.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "common.h"
#include "example.h"
#include "exjson.h"
#include "fairseq_dict.h"
#include "io.h"
#include "lenstat.h"
#include "mmidx.h"
#include "mmidx_build.h"
#include "mmidx_text.h"
#include "pool.h"
#include "record.h"
#include "unicode.h"

static const char usage_text[] =
"usage: mmap-index build [-q] [--keep-partial] [--progress | --no-progress]\n"
"                        [--raw-ids] [--wrap] -o prefix [-f feature]\n"
"                        [-j jobs] [--dict dict.txt] [--documents each|empty]\n"
"                        [--dtype type] [--format fairseq|megatron]\n"
"                        [--input-format records|id|text] [--max-record-size N]\n"
"                        [--max-unk-rate R] [--mode-feature feature]\n"
"                        [--part K/N] [--vocab-size n] [file ...]\n"
"       mmap-index dict [-q] [--keep-partial] [--progress | --no-progress]\n"
"                       [-o file] [--nwords n]\n"
"                       [--padding-factor n] [--threshold n] [file ...]\n"
"       mmap-index cat [-qR] [--json] [--keep-partial] [-f feature] [-o file]\n"
"                      [--format layout] [--output-format json|id|records]\n"
"                      [--range a:b] prefix\n"
"       mmap-index get [-qR] [--json] [--keep-partial] [-f feature] [-j jobs]\n"
"                      [-o file] [--format layout]\n"
"                      [--output-format json|id|records] prefix [index ... | -]\n"
"       mmap-index info [-q] [--json] [--keep-partial] [-o file]\n"
"                       [--format layout] prefix\n"
"       mmap-index merge [-q] -o prefix [--format layout] prefix ...\n"
"       mmap-index verify [-q] [--format layout] prefix ...\n"
"       mmap-index -h | -V\n"
"\n"
"  --dict FILE              build: the fairseq dictionary of text input\n"
"  --documents each|empty   build: how Megatron documents end\n"
"  --dtype TYPE             build: the token type (default auto)\n"
"  -f, --feature FEATURE    the feature holding the tokens (default targets)\n"
"  --format LAYOUT          fairseq (default) or megatron\n"
"  -h, --help               print this help\n"
"  --input-format FMT       build: records (default), id or text\n"
"  -j, --jobs N             threads (default 0: one per CPU, at most 8)\n"
"  --json                   JSON output (info: instead of text)\n"
"  --keep-partial           after a fault, keep what the good input gave\n"
"  --max-record-size N      build: largest payload read from a pipe\n"
"  --max-unk-rate R         build: fail when more than R of text is <unk>\n"
"  --mode-feature FEATURE   build: a multimodal Megatron dataset\n"
"  --nwords N               dict: keep the N-4 most frequent words\n"
"  -o, --output FILE        write to FILE (atomically); build, merge: prefix\n"
"  --output-format FMT      json (default), id or records\n"
"  --padding-factor N       dict: pad to a multiple of N symbols (default 8)\n"
"  --part K/N               build: add the K-th of N parts of the input\n"
"                           (auto: K and N from the job array or MPI)\n"
"  --progress, --no-progress  build, dict: progress on stderr (default: a tty)\n"
"  -q, --quiet              no dtype report, verify lines or summary\n"
"  -R, --records            Example records (--output-format records)\n"
"  --raw-ids                build: fairseq ids as they are, not only what\n"
"                           fairseq-preprocess writes (</s> last, no <pad>)\n"
"  --range A:B              cat: sequences A to B-1\n"
"  --threshold N            dict: drop words seen fewer than N times\n"
"  -V, --version            print the version\n"
"  --vocab-size N           build: vocabulary size (for --dtype auto)\n"
"  --wrap                   build: store tokens that do not fit wrapped\n"
"See mmap-index(1).\n";

static _Noreturn void
usage(FILE *fp, int status)
{
	print_usage(fp, usage_text, status);
}

enum { CMD_BUILD, CMD_CAT, CMD_GET, CMD_INFO, CMD_MERGE, CMD_VERIFY, CMD_DICT };
enum { OUT_JSON, OUT_ID, OUT_RECORDS };
enum {
	OPT_WRAP = 256, OPT_DOCS, OPT_DTYPE, OPT_FORMAT, OPT_INFMT,
	OPT_MODEFEAT, OPT_VOCAB, OPT_JSON, OPT_OUTFMT, OPT_RANGE,
	OPT_DICT, OPT_THRESHOLD, OPT_NWORDS, OPT_PADF, OPT_KEEP, OPT_MAXREC,
	OPT_PART, OPT_MAX_UNK, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_RAW_IDS
};

static const struct option longopts[] = {
	{ "help",		no_argument,		NULL, 'h' },
	{ "version",		no_argument,		NULL, 'V' },
	{ "quiet",		no_argument,		NULL, 'q' },
	{ "records",		no_argument,		NULL, 'R' },
	{ "output",		required_argument,	NULL, 'o' },
	{ "feature",		required_argument,	NULL, 'f' },
	{ "jobs",		required_argument,	NULL, 'j' },
	{ "wrap",		no_argument,		NULL, OPT_WRAP },
	{ "documents",		required_argument,	NULL, OPT_DOCS },
	{ "dtype",		required_argument,	NULL, OPT_DTYPE },
	{ "format",		required_argument,	NULL, OPT_FORMAT },
	{ "input-format",	required_argument,	NULL, OPT_INFMT },
	{ "mode-feature",	required_argument,	NULL, OPT_MODEFEAT },
	{ "vocab-size",		required_argument,	NULL, OPT_VOCAB },
	{ "json",		no_argument,		NULL, OPT_JSON },
	{ "output-format",	required_argument,	NULL, OPT_OUTFMT },
	{ "range",		required_argument,	NULL, OPT_RANGE },
	{ "dict",		required_argument,	NULL, OPT_DICT },
	{ "threshold",		required_argument,	NULL, OPT_THRESHOLD },
	{ "nwords",		required_argument,	NULL, OPT_NWORDS },
	{ "padding-factor",	required_argument,	NULL, OPT_PADF },
	{ "keep-partial",	no_argument,		NULL, OPT_KEEP },
	{ "max-record-size",	required_argument,	NULL, OPT_MAXREC },
	{ "part",		required_argument,	NULL, OPT_PART },
	{ "max-unk-rate",	required_argument,	NULL, OPT_MAX_UNK },
	{ "progress",		no_argument,		NULL, OPT_PROGRESS },
	{ "no-progress",	no_argument,		NULL, OPT_NO_PROGRESS },
	{ "raw-ids",		no_argument,		NULL, OPT_RAW_IDS },
	{ NULL, 0, NULL, 0 }
};

/* The subcommands and the options each takes. */
static const struct subcmd cmds[] = {
	[CMD_BUILD] = { "build", "quiet output feature jobs wrap documents "
	    "dtype format input-format mode-feature vocab-size dict "
	    "keep-partial max-record-size part max-unk-rate progress "
	    "no-progress raw-ids" },
	[CMD_CAT] = { "cat", "quiet records feature output format json "
	    "output-format range keep-partial" },
	[CMD_GET] = { "get", "quiet records feature jobs output format json "
	    "output-format keep-partial" },
	[CMD_INFO] = { "info", "quiet output format json keep-partial" },
	[CMD_MERGE] = { "merge", "quiet output format" },
	[CMD_VERIFY] = { "verify", "quiet format" },
	[CMD_DICT] = { "dict", "quiet output threshold nwords padding-factor "
	    "keep-partial progress no-progress" },
};
#define NCMDS	(sizeof cmds / sizeof cmds[0])

/* build: records that ended a document (recpipe(5)), for fairseq's warning. */
static uint64_t doc_ends;

static struct {
	int		 cmd;
	const char	*out;
	const char	*feature;
	const char	*modefeat;
	int		 wrap;
	int		 docs_empty;
	int		 docs_given;
	int		 docs_each;	/* --documents each */
	int		 dtype;		/* -1: auto */
	int		 layout;	/* MMIDX_AUTO unless --format */
	int		 idlines;
	int		 textin;	/* --input-format text */
	const char	*dict;		/* --dict */
	long long	 threshold, nwords, padf;
	uint64_t	 vocab;
	int		 outfmt;
	int		 range;
	uint64_t	 ra, rb;
	int		 rb_open;
	int		 jobs;		/* 0: one per processor */
	uint64_t	 maxrec;	/* --max-record-size; 0: the reader's default */
	uint64_t	 part_k, part_n;	/* --part */
	double		 max_unk;	/* --max-unk-rate; -1: none */
	int		 raw_ids;	/* --raw-ids: no fairseq-preprocess rules */
} o = { .part_n = 1, .max_unk = -1 };

static void
parse_range(const char *s)
{
	const char *colon = strchr(s, ':');
	char a[64];
	long long v;
	size_t n = colon != NULL ? (size_t)(colon - s) : 0;

	/* A and B are numbers as every option takes them (parse_int()). */
	if (colon == NULL || n >= sizeof a)
		goto bad;
	memcpy(a, s, n);
	a[n] = '\0';
	o.ra = 0;
	o.rb_open = 1;
	if (n > 0) {
		if (parse_int(a, 0, LLONG_MAX, &v) == -1)
			goto bad;
		o.ra = (uint64_t)v;
	}
	if (colon[1] != '\0') {
		if (parse_int(colon + 1, 0, LLONG_MAX, &v) == -1)
			goto bad;
		o.rb = (uint64_t)v;
		o.rb_open = 0;
	}
	o.range = 1;
	return;
bad:
	usage_error("--range: expected A:B (either may be left out), not '%s'", s);
}

static void
parse_opts(int argc, char **argv)
{
	int ch;

	while ((ch = getopt_args(argc, argv, "hVqRo:f:j:", longopts)) != -1) {
		if (ch == 'h')
			usage(stdout, 0);
		if (ch == 'V')
			print_version(NULL);
		if (ch == '?' || ch == ':')
			usage(stderr, 2);
		subcmd_option(cmds, NCMDS, (size_t)o.cmd, ch, longopts);
		switch (ch) {
		case 'q':
			verbosity = 0;
			break;
		case 'R':
			o.outfmt = OUT_RECORDS;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'f':
			if (*optarg == '\0')
				usage_error("-f: empty feature name");
			o.feature = optarg;
			break;
		case 'j':
			o.jobs = jobs_arg(optarg);
			break;
		case OPT_WRAP:
			o.wrap = 1;
			break;
		case OPT_RAW_IDS:
			o.raw_ids = 1;
			break;
		case OPT_KEEP:
			keep_partial = 1;
			break;
		case OPT_PART:
			part_arg(optarg, &o.part_k, &o.part_n);
			break;
		case OPT_PROGRESS:
			progress_enabled = 1;
			break;
		case OPT_NO_PROGRESS:
			progress_enabled = 0;
			break;
		case OPT_DOCS:
			o.docs_each = 0;
			if (strcmp(optarg, "each") == 0) {
				o.docs_empty = 0;
				o.docs_each = 1;
			} else if (strcmp(optarg, "empty") == 0)
				o.docs_empty = 1;
			else
				usage_error("--documents: expected each or empty");
			o.docs_given = 1;
			break;
		case OPT_DTYPE:
			if (strcmp(optarg, "auto") == 0)
				o.dtype = -1;
			else if ((o.dtype = mmidx_dtype_parse(optarg)) == -1)
				usage_error("--dtype: unknown type '%s'", optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "fairseq") == 0)
				o.layout = MMIDX_FAIRSEQ;
			else if (strcmp(optarg, "megatron") == 0)
				o.layout = MMIDX_MEGATRON;
			else if (strcmp(optarg, "auto") == 0 && o.cmd != CMD_BUILD)
				o.layout = MMIDX_AUTO;
			else
				usage_error("--format: expected fairseq or megatron");
			break;
		case OPT_INFMT:
			o.idlines = o.textin = 0;
			if (strcmp(optarg, "id") == 0)
				o.idlines = 1;
			else if (strcmp(optarg, "text") == 0)
				o.textin = 1;
			else if (strcmp(optarg, "records") != 0)
				usage_error("--input-format: expected records, id or text");
			break;
		case OPT_MODEFEAT:
			o.modefeat = optarg;
			break;
		case OPT_VOCAB:
			o.vocab = (uint64_t)num_arg("--vocab-size", optarg, 1,
			    LLONG_MAX);
			break;
		case OPT_JSON:
			o.outfmt = OUT_JSON;
			break;
		case OPT_OUTFMT:
			if (strcmp(optarg, "json") == 0)
				o.outfmt = OUT_JSON;
			else if (strcmp(optarg, "id") == 0)
				o.outfmt = OUT_ID;
			else if (strcmp(optarg, "records") == 0)
				o.outfmt = OUT_RECORDS;
			else
				usage_error("--output-format: expected json, id or records");
			break;
		case OPT_RANGE:
			parse_range(optarg);
			break;
		case OPT_DICT:
			o.dict = optarg;
			break;
		case OPT_THRESHOLD:
			o.threshold = num_arg("--threshold", optarg, LLONG_MIN,
			    LLONG_MAX);
			break;
		case OPT_NWORDS:
			o.nwords = num_arg("--nwords", optarg, LLONG_MIN, LLONG_MAX);
			break;
		case OPT_PADF:
			o.padf = num_arg("--padding-factor", optarg, LLONG_MIN,
			    LLONG_MAX);
			break;
		case OPT_MAXREC:
			o.maxrec = max_record_arg(optarg);
			break;
		case OPT_MAX_UNK:
			o.max_unk = rate_arg("--max-unk-rate", optarg);
			break;
		default:
			usage(stderr, 2);
		}
	}
}

/* ---- buffered output to a descriptor (cmd/common.h) ---- */

static struct obuf ob;

#define OB_SIZE	(1u << 17)

static struct {
	struct rec_writer *w;
	struct ex_builder b;
	struct buf enc;
	int64_t		*iv;
	float		*fv;
	size_t		 cap;
} wr;

/* A data fault after some output: write what is good, then die. */
static _Noreturn void
fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	/* The record stream ends as a run on the good part would end it. */
	if (wr.w != NULL && rec_writer_close(wr.w) == -1) {
		wr.w = NULL;
		write_failed(ob.name);
	}
	wr.w = NULL;
	if (ob.p != NULL)
		obuf_flush(&ob);
	fault_begin();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	die("%s", msg);
}

/* A JSON string (feature names). */
static void
ob_json_str(const char *s)
{
	struct buf b = { 0 };

	if (exjson_put_name(&b, (const uint8_t *)s, strlen(s)) == -1)
		die_nomem();
	obuf_write(&ob, b.p, b.len);
	rp_buf_free(&b);
}

/* ---- reading datasets ---- */

static struct mmidx *
open_ds(const char *prefix)
{
	char err[1024];
	struct mmidx *m = mmidx_open(prefix, o.layout, err, sizeof err);

	if (m == NULL)
		fail("%s", err);
	return m;
}

static struct output outp;

static void
out_begin(int records)
{
	output_open(&outp, o.out, records ? WRITES_RECORDS : WRITES_TEXT,
	    records ? "leave out -R to write text" : "add -R to write records");
	ob.name = outp.name;
	obuf_open(&ob, outp.fd, ob.name, OB_SIZE);
	if (records) {
		wr.w = outp.w;
		exb_init(&wr.b);
	}
}

/* End the output after a run: committed when ok (or --keep-partial). */
static void
out_end(int ok)
{
	obuf_flush(&ob);
	output_close(&outp, ok);
	wr.w = NULL;
}

static void
grow_vals(uint64_t n)
{
	if (n <= wr.cap)
		return;
	free(wr.iv);
	free(wr.fv);
	wr.cap = n;
	wr.iv = xreallocarray(NULL, n, sizeof *wr.iv);
	wr.fv = xreallocarray(NULL, n, sizeof *wr.fv);
}

/* How tokens are written as text: set up by emit_setup(). */
static struct mmidx_text tx;
static size_t tx_room, tx_step;	/* bytes a token, tokens a step */
static int tx_mode;		/* multimodal: lines end with the mode */

/* Bytes of text per step of the formatting loop: bounds the room asked for. */
#define FMT_BYTES	(4096 * MMIDX_TEXT_ROOM_INT)

/* Write sequence i of m (its n tokens at p) in the chosen output format to b. */
static void
emit_span(struct obuf *b, struct mmidx *m, uint64_t i, const uint8_t *p, uint64_t n)
{
	uint64_t k;
	char *q;

	if (o.outfmt == OUT_RECORDS) {
		enum mmidx_dtype t = mmidx_dtype(m);

		exb_reset(&wr.b);
		grow_vals(n);
		if (mmidx_dtype_is_float(t)) {
			for (k = 0; k < n; k++)
				wr.fv[k] = (float)mmidx_load_f64(t, p, k);
			if (exb_float(&wr.b, o.feature, wr.fv, (size_t)n) == -1)
				die_nomem();
		} else {
			for (k = 0; k < n; k++)
				wr.iv[k] = mmidx_load_i64(t, p, k);
			if (exb_int64(&wr.b, o.feature, wr.iv, (size_t)n) == -1)
				die_nomem();
		}
		if (mmidx_layout(m) == MMIDX_MEGATRON_MM) {
			int64_t mode = mmidx_mode(m, i);
			if (exb_int64(&wr.b, "mode", &mode, 1) == -1)
				die_nomem();
		}
		wr.enc.len = 0;
		if (exb_encode(&wr.b, &wr.enc) == -1)
			die_errno("encode");
		if (rec_write(wr.w, wr.enc.p, wr.enc.len) == -1)
			write_failed(ob.name);
		return;
	}
	if (tx.json)
		obuf_write(b, tx.head, tx.headlen);
	/* Every token is followed by sep; the last one is taken back. */
	for (k = 0; k < n; ) {
		uint64_t k1 = n - k > tx_step ? k + tx_step : n;

		q = obuf_room(b, tx_room * (size_t)(k1 - k));
		q = mmidx_text_put(&tx, q, p, k, k1);
		obuf_end(b, q);
		k = k1;
	}
	if (n > 0)
		b->len--;
	q = obuf_room(b, MMIDX_TEXT_END);
	q = mmidx_text_end(&tx, q, tx_mode, tx_mode ? mmidx_mode(m, i) : 0);
	obuf_end(b, q);
}

/* Write sequence i of m. */
static void
emit(struct mmidx *m, uint64_t i)
{
	const uint8_t *p;
	uint64_t n;

	if (mmidx_seq(m, i, &p, &n) == -1)
		fail("%s", mmidx_strerror(m));
	emit_span(&ob, m, i, p, n);
}

static void
emit_setup(const struct mmidx *m)
{
	if (mmidx_text_init(&tx, mmidx_dtype(m), o.outfmt == OUT_JSON,
	    o.feature) == -1)
		die_nomem();
	tx_room = mmidx_text_room(&tx);
	tx_step = FMT_BYTES / tx_room;
	tx_mode = mmidx_layout(m) == MMIDX_MEGATRON_MM;
}

static int
cmd_cat(int argc, char **argv)
{
	struct mmidx *m;
	uint64_t a, b, n;

	if (argc != 1)
		usage_error(argc == 0 ? "cat: a dataset prefix is needed" :
		    "cat: one dataset prefix only");
	m = open_ds(argv[0]);
	n = mmidx_count(m);
	a = o.range ? o.ra : 0;
	b = o.range && !o.rb_open ? o.rb : n;
	if (b > n)
		b = n;
	if (a > b)
		a = b;
	emit_setup(m);
	out_begin(o.outfmt == OUT_RECORDS);
	for (uint64_t i = a; i < b; i++)
		emit(m, i);
	out_end(1);
	mmidx_text_free(&tx);
	mmidx_close(m);
	return 0;
}

/*
 * Lookups from stdin in several threads (lib/pool.h).  The input is cut
 * into jobs of consecutive lines: a thread reads the lines of its job
 * in the input turn, then resolves and formats the job into its own
 * buffer, which it writes in the output turn (or as soon as that comes,
 * when the buffer fills).  So the output is that of one thread, and a
 * fault ends the run in its turn, after everything before it has been
 * written.
 */
#define GET_JOB		4096	/* most lines in a job */
#define GET_GROUP	16	/* lookups per prefetch step */
#define GET_OBSIZE	(2u << 20)	/* a thread's output buffer */

struct getw {
	struct obuf	 ob;
	struct pool_unit u;		/* the job */
	int		 own;		/* holds the output turn */
	uint64_t	 out0;		/* ob.out + ob.len when the job began */
	size_t		 n;		/* good indices in the job */
	int		 fault;		/* after them: FAULT_MSG or FAULT_ENTRY */
	char		 msg[1024];
	uint64_t	 idx[GET_JOB];
	struct mmidx_span span[GET_JOB];
};

enum { FAULT_NONE, FAULT_MSG, FAULT_ENTRY };

static struct {
	struct getw	*w;		/* one per thread */
	size_t		 joblen;	/* lines in the next job (atomic) */
	struct mmidx	*m;
	const char	*prefix;
	char		 msg[1024];	/* the fault that ended the run */
	/* input, used in the input turn */
	struct mmidx_lines L;
	char		*in;
	size_t		 off, got;
	int		 eof;
} gt;

#define GET_IN	(1u << 16)

/*
 * Take w's output turn (the gate of its buffer); -1 when an earlier
 * job's fault ended the run.
 */
static int
get_own_turn(void *arg)
{
	struct getw *w = arg;

	if (!w->own) {
		if (pool_turn(&w->u) == -1)
			return -1;
		w->own = 1;
	}
	return 0;
}

/*
 * Read the lines of w's job; the caller holds the input turn.  Stops
 * at 'max' lines, the end of input or a fault.  Returns 1 when no job
 * can follow.
 */
static int
get_read_job(struct getw *w, size_t max)
{
	uint64_t count = mmidx_count(gt.m);
	const char *text;
	size_t used, k, len;

	w->n = 0;
	w->fault = FAULT_NONE;
	while (w->n < max) {
		if (gt.off == gt.got) {
			ssize_t got;

			if (gt.eof) {
				/* A last line without a newline. */
				k = mmidx_lines_end(&gt.L, w->idx + w->n) == 1;
			} else if ((got = rp_read(0, gt.in, GET_IN)) == -1) {
				snprintf(w->msg, sizeof w->msg, "stdin: %s",
				    strerror(errno));
				w->fault = FAULT_MSG;
				return 1;
			} else {
				gt.off = 0;
				gt.got = (size_t)got;
				gt.eof = got == 0;
				continue;
			}
		} else {
			k = mmidx_lines_parse(&gt.L, gt.in + gt.off,
			    gt.got - gt.off, &used, w->idx + w->n, max - w->n);
			gt.off += used;
		}
		for (size_t j = w->n; j < w->n + k; j++)
			if (w->idx[j] >= count) {
				snprintf(w->msg, sizeof w->msg, "%s: index %"
				    PRIu64 " out of range (%" PRIu64
				    " sequences)", gt.prefix, w->idx[j], count);
				w->n = j;
				w->fault = FAULT_MSG;
				return 1;
			}
		w->n += k;
		if (mmidx_lines_bad(&gt.L, &text, &len)) {
			snprintf(w->msg, sizeof w->msg, "stdin: line %" PRIu64
			    ": bad index '%.*s'", gt.L.lineno, (int)len, text);
			w->fault = FAULT_MSG;
			return 1;
		}
		if (gt.eof && gt.off == gt.got)
			return 1;
	}
	return 0;
}

static int
get_read(void *arg, const struct pool_unit *u)
{
	struct getw *w = &gt.w[u->worker];

	(void)arg;
	w->u = *u;
	w->own = 0;
	return get_read_job(w, __atomic_load_n(&gt.joblen, __ATOMIC_RELAXED)) ?
	    POOL_LAST : POOL_MORE;
}

/*
 * Resolve and format w's job.  The index entries are prefetched two
 * groups ahead and the tokens one group ahead of the formatting.
 */
static void
get_run_job(void *arg, const struct pool_unit *u)
{
	struct getw *w = &gt.w[u->worker];
	struct mmidx *m = gt.m;
	size_t n = w->n, a, g, r;

	(void)arg;
	w->out0 = w->ob.out + w->ob.len;
	mmidx_prefetch_entries(m, w->idx, n < 2 * GET_GROUP ? n : 2 * GET_GROUP);
	g = n < GET_GROUP ? n : GET_GROUP;
	if ((r = mmidx_spans(m, w->idx, g, w->span)) < g) {
		n = r;
		w->fault = FAULT_ENTRY;
	}
	for (a = 0; a < n; a += GET_GROUP) {
		size_t b = a + GET_GROUP, e = b < n ? b : n;

		if (b < n) {
			size_t c = b + GET_GROUP;

			if (c < n)
				mmidx_prefetch_entries(m, w->idx + c,
				    n - c < GET_GROUP ? n - c : GET_GROUP);
			g = n - b < GET_GROUP ? n - b : GET_GROUP;
			if ((r = mmidx_spans(m, w->idx + b, g, w->span + b)) < g) {
				n = b + r;
				w->fault = FAULT_ENTRY;
			}
		}
		for (size_t j = a; j < e; j++)
			emit_span(&w->ob, m, w->idx[j], w->span[j].p,
			    w->span[j].n);
	}
	w->n = n;
}

/* Write w's output in its turn; a fault ends the run there (in gt.msg). */
static int
get_put_job(void *arg, const struct pool_unit *u)
{
	struct getw *w = &gt.w[u->worker];
	uint64_t bytes = w->ob.out + w->ob.len - w->out0;
	const uint8_t *p;
	uint64_t n;

	(void)arg;
	w->own = 1;
	obuf_flush(&w->ob);
	if (w->fault == FAULT_MSG) {
		memcpy(gt.msg, w->msg, sizeof gt.msg);
		return 1;
	}
	if (w->fault == FAULT_ENTRY) {
		(void)mmidx_seq(gt.m, w->idx[w->n], &p, &n);
		snprintf(gt.msg, sizeof gt.msg, "%s", mmidx_strerror(gt.m));
		return 1;
	}
	/*
	 * Size the next jobs so that their output fits half the buffer:
	 * a thread that fills its buffer waits for its turn.
	 */
	if (w->n > 0) {
		uint64_t fit = GET_OBSIZE / 2 / (bytes / w->n + 1);

		__atomic_store_n(&gt.joblen, fit < GET_GROUP ? GET_GROUP :
		    fit > GET_JOB ? GET_JOB : (size_t)fit, __ATOMIC_RELAXED);
	}
	return 0;
}

static const struct pool_ops get_ops = { get_read, get_run_job, get_put_job };

/* Threads for the lookups: -j, or one per processor (at most 8). */
static int
get_jobs(void)
{
	return jobs_count(o.jobs);
}

/* Look up the indices on stdin in 'jobs' threads. */
static void
get_stdin(struct mmidx *m, const char *prefix, int jobs)
{
	static int at_eof;	/* a second '-' reads nothing, as stdio would */
	struct getw *w;

	if (at_eof)
		return;
	obuf_flush(&ob);
	w = xcalloc((size_t)jobs, sizeof *w);
	gt.in = xmalloc(GET_IN);
	gt.w = w;
	gt.m = m;
	gt.prefix = prefix;
	gt.joblen = GET_JOB;
	mmidx_lines_init(&gt.L);
	for (int t = 0; t < jobs; t++) {
		obuf_open(&w[t].ob, ob.fd, ob.name, GET_OBSIZE);
		w[t].ob.gate = get_own_turn;
		w[t].ob.gate_arg = &w[t];
	}
	if (pool_run(jobs, &get_ops, NULL) != 0)
		fail("%s", gt.msg);
	for (int t = 0; t < jobs; t++)
		obuf_close(&w[t].ob);
	free(w);
	free(gt.in);
	gt.w = NULL;
	at_eof = 1;
}

static int
cmd_get(int argc, char **argv)
{
	struct mmidx *m;
	uint64_t v = 0;
	int jobs;

	if (argc < 1)
		usage_error("get: a dataset prefix is needed");
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-") != 0 &&
		    mmidx_parse_index(argv[i], strlen(argv[i]), &v) == -1)
			usage_error("get: bad index '%s'", argv[i]);
	m = open_ds(argv[0]);
	emit_setup(m);
	out_begin(o.outfmt == OUT_RECORDS);
	/* Records go through one writer, so one thread makes them. */
	jobs = o.outfmt == OUT_RECORDS ? 1 : get_jobs();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-") == 0) {
			if (o.outfmt != OUT_RECORDS && mmidx_text_table(&tx) == -1)
				die_nomem();
			get_stdin(m, argv[0], jobs);
			continue;
		}
		mmidx_parse_index(argv[i], strlen(argv[i]), &v);
		if (v >= mmidx_count(m))
			fail("%s: index %" PRIu64 " out of range (%" PRIu64
			    " sequences)", argv[0], v, mmidx_count(m));
		emit(m, v);
	}
	out_end(1);
	mmidx_text_free(&tx);
	mmidx_close(m);
	return 0;
}

/* ---- info ---- */

static int
cmd_info(int argc, char **argv, int json)
{
	struct mmidx *m;
	struct lenstat ls;
	uint64_t n, tok = 0, docs, p50, p90, p99;
	enum mmidx_dtype t;

	if (argc != 1)
		usage_error("info: one dataset prefix");
	m = open_ds(argv[0]);
	n = mmidx_count(m);
	t = mmidx_dtype(m);
	ls_init(&ls);
	for (uint64_t i = 0; i < n; i++) {
		int32_t s = mmidx_raw_size(m, i);

		if (s < 0)
			fail("%s: sequence %" PRIu64 ": negative size %d",
			    mmidx_idx_path(m), i, (int)s);
		tok += (uint64_t)s;
		if (ls_add(&ls, (uint64_t)s) == -1)
			die_errno("info");
	}
	if (n == 0)
		ls.min = 0;
	p50 = ls_percentile(&ls, 50);
	p90 = ls_percentile(&ls, 90);
	p99 = ls_percentile(&ls, 99);
	docs = mmidx_doc_count(m) ? mmidx_doc_count(m) - 1 : 0;
	out_begin(0);
	if (json) {
		obuf_puts(&ob, "{\"prefix\":");
		ob_json_str(argv[0]);
		obuf_printf(&ob, ",\"layout\":\"%s\",\"dtype\":\"%s\",\"code\":%u,"
		    "\"element_size\":%zu,\"sequences\":%" PRIu64 ",\"tokens\":%"
		    PRIu64 ",", mmidx_layout_name(mmidx_layout(m)),
		    mmidx_dtype_name(t), mmidx_code(m), mmidx_dtype_size(t), n, tok);
		if (mmidx_layout(m) == MMIDX_FAIRSEQ)
			obuf_puts(&ob, "\"documents\":null,");
		else
			obuf_printf(&ob, "\"documents\":%" PRIu64 ",", docs);
		obuf_printf(&ob, "\"bin_bytes\":%" PRIu64 ",\"idx_bytes\":%" PRIu64
		    ",\"length\":{\"min\":%" PRIu64 ",\"mean\":%.6g,\"p50\":%"
		    PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"max\":%"
		    PRIu64 "},\"histogram\":[", mmidx_bin_size(m),
		    mmidx_idx_size(m), ls.min, ls_mean(&ls), p50, p90, p99, ls.max);
		for (unsigned b = 0, first = 1; b < LS_BUCKETS; b++) {
			if (ls.hist[b] == 0)
				continue;
			obuf_printf(&ob, "%s{\"min\":%" PRIu64 ",\"max\":%" PRIu64
			    ",\"count\":%" PRIu64 "}", first ? "" : ",",
			    ls_bucket_lo(b), ls_bucket_hi(b), ls.hist[b]);
			first = 0;
		}
		obuf_puts(&ob, "]}\n");
	} else {
		obuf_printf(&ob, "prefix:     %s\n", argv[0]);
		obuf_printf(&ob, "layout:     %s\n", mmidx_layout_name(mmidx_layout(m)));
		obuf_printf(&ob, "dtype:      %s (code %u, %zu bytes)\n",
		    mmidx_dtype_name(t), mmidx_code(m), mmidx_dtype_size(t));
		obuf_printf(&ob, "sequences:  %" PRIu64 "\n", n);
		obuf_printf(&ob, "tokens:     %" PRIu64 "\n", tok);
		if (mmidx_layout(m) != MMIDX_FAIRSEQ)
			obuf_printf(&ob, "documents:  %" PRIu64 "\n", docs);
		obuf_printf(&ob, "bin bytes:  %" PRIu64 "\n", mmidx_bin_size(m));
		obuf_printf(&ob, "idx bytes:  %" PRIu64 "\n", mmidx_idx_size(m));
		obuf_printf(&ob, "length:     min %" PRIu64 ", mean %.2f, p50 %"
		    PRIu64 ", p90 %" PRIu64 ", p99 %" PRIu64 ", max %" PRIu64 "\n",
		    ls.min, ls_mean(&ls), p50, p90, p99, ls.max);
		obuf_puts(&ob, "histogram:\n");
		for (unsigned b = 0; b < LS_BUCKETS; b++) {
			char r[48];

			if (ls.hist[b] == 0)
				continue;
			if (b <= 1)
				snprintf(r, sizeof r, "%u", b);
			else
				snprintf(r, sizeof r, "%" PRIu64 "-%" PRIu64,
				    ls_bucket_lo(b), ls_bucket_hi(b));
			obuf_printf(&ob, "  %-22s %" PRIu64 "\n", r, ls.hist[b]);
		}
	}
	out_end(1);
	ls_free(&ls);
	mmidx_close(m);
	return 0;
}

/* ---- verify ---- */

static int
cmd_verify(int argc, char **argv)
{
	int rval = 0;

	if (argc < 1)
		usage_error("verify: a dataset prefix is needed");
	for (int i = 0; i < argc; i++) {
		char err[1024];
		struct mmidx *m = mmidx_open(argv[i], o.layout, err, sizeof err);
		uint64_t tok = 0;

		if (m == NULL) {
			warnx_("%s", err);
			rval = 1;
			continue;
		}
		if (mmidx_verify(m) == -1) {
			warnx_("%s", mmidx_strerror(m));
			rval = 1;
		} else if (verbosity > 0) {
			for (uint64_t k = 0; k < mmidx_count(m); k++)
				tok += (uint64_t)mmidx_raw_size(m, k);
			printf("%s: ok (%s, %s, %" PRIu64 " sequences, %" PRIu64
			    " tokens", argv[i], mmidx_layout_name(mmidx_layout(m)),
			    mmidx_dtype_name(mmidx_dtype(m)), mmidx_count(m), tok);
			if (mmidx_layout(m) != MMIDX_FAIRSEQ)
				printf(", %" PRIu64 " documents",
				    mmidx_doc_count(m) - 1);
			printf(")\n");
		}
		mmidx_close(m);
	}
	close_stdout();
	return rval;
}

/* ---- writing ---- */

static struct outfile binout, idxout;

static char *
joinx(const char *a, const char *b)
{
	char *s = xmalloc(strlen(a) + strlen(b) + 1);

	return strcat(strcpy(s, a), b);
}

/* -o x.bin and -o x.idx name the dataset x. */
static const char *
out_prefix(const char *out)
{
	size_t n = strlen(out);
	char *p;

	if (n < 5 || (strcmp(out + n - 4, ".bin") != 0 &&
	    strcmp(out + n - 4, ".idx") != 0))
		return out;
	p = xstrdup(out);
	p[n - 4] = '\0';
	return p;
}

static struct mmidx_builder *
start_output(const char *prefix, enum mmidx_layout layout,
    enum mmidx_dtype t, unsigned flags)
{
	char err[512], *bp = joinx(prefix, ".bin"), *ip = joinx(prefix, ".idx");
	struct mmidx_builder *b;

	if (out_open(&binout, bp) == -1)
		die_errno("%s", bp);
	if (out_open(&idxout, ip) == -1)
		die_errno("%s", ip);
	if ((b = mmidx_builder_new(binout.fd, layout, t, flags, err,
	    sizeof err)) == NULL)
		die("%s", err);
	free(bp);
	free(ip);
	return b;
}

/*
 * Commit the pair as a group (out_commit_group()): signals wait, the
 * old pair leaves before the new one comes, the .idx last, so that
 * no crash leaves a new .bin beside an old .idx.
 */
static void
finish_output(struct mmidx_builder *b, const char *prefix)
{
	struct outfile *v[2] = { &binout, &idxout };
	size_t bad;

	if (mmidx_finish(b, idxout.fd) == -1)
		die("%s: %s", prefix, mmidx_builder_strerror(b));
	if (out_commit_group(v, 2, &bad) == -1)
		die_errno("%s%s", prefix, bad == 0 ? ".bin" : ".idx");
}

/* Token ids of the text line being added. */
static struct {
	int64_t	*v;
	size_t	 cap;
} ids;

/* The ids of a line of --input-format id. */
static struct mmidx_ids idl;

static void
grow_ids(size_t need)
{
	size_t c = ids.cap ? ids.cap : 1024;

	while (c < need)
		c *= 2;
	if (c != ids.cap) {
		ids.v = xreallocarray(ids.v, c, sizeof *ids.v);
		ids.cap = c;
	}
}

static void
add_fault(struct mmidx_builder *b, const char *name, const char *where,
    uint64_t num, uint64_t off)
{
	fault_begin();
	if (off != UINT64_MAX)
		die("%s: %s %" PRIu64 " at offset %" PRIu64 ": %s", name, where,
		    num, off, mmidx_builder_strerror(b));
	die("%s: %s %" PRIu64 ": %s", name, where, num,
	    mmidx_builder_strerror(b));
}

/* --part: the part's bytes [lo, hi) of the inputs, by documents or not. */
static struct mmidx_part pt;

static void
build_ids(struct mmidx_builder *b, int fd, const char *name, uint64_t from,
    uint64_t to, uint64_t start)
{
	FILE *fp = fdopen(fd, "r");
	char *line = NULL, err[512];
	size_t cap = 0;
	uint64_t lineno = 0, pos = from;
	ssize_t len;

	if (fp == NULL)
		die_errno("%s", name);
	if (pt.on && fseeko(fp, (off_t)from, SEEK_SET) == -1)
		die_errno("%s", name);
	while (pos < to && !pt.done && (len = getline(&line, &cap, fp)) != -1) {
		long n;
		uint64_t g = start + pos;

		pos += (uint64_t)len;
		lineno++;
		if (progress_due())
			progress("%s: %" PRIu64 " lines", name, lineno);
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (pt.on && !mmidx_part_take(&pt, g, o.docs_empty && len == 0))
			continue;
		if (o.docs_empty && len == 0) {
			if (mmidx_end_document(b) == -1)
				add_fault(b, name, "line", lineno, UINT64_MAX);
			continue;
		}
		if ((n = mmidx_ids_parse(&idl, line, (size_t)len, err,
		    sizeof err)) == -1) {
			if (errno == ENOMEM)
				die_nomem();
			fault_begin();
			die("%s: line %" PRIu64 ": %s", name, lineno, err);
		}
		if (mmidx_ids_add(&idl, b, (size_t)n) == -1)
			add_fault(b, name, "line", lineno, UINT64_MAX);
	}
	if (ferror(fp))
		die_errno("%s", name);
	fclose(fp);
	free(line);
}

/*
 * Add one record's sequence (or end a document), or die naming it.
 * Only a fault of the record or the dataset is kept under
 * --keep-partial, not a lack of memory.
 */
static void
add_record(struct mmidx_recs *rs, struct mmidx_builder *b, const char *name,
    const uint8_t *p, size_t n, uint64_t num, uint64_t off)
{
	int rc = mmidx_recs_add(rs, b, p, n);

	if (rc >= 0) {
		doc_ends += (uint64_t)rc;
		return;
	}
	if (errno != ENOMEM)
		fault_begin();
	die("%s: record %" PRIu64 " at offset %" PRIu64 ": %s", name, num, off,
	    mmidx_recs_strerror(rs));
}

/*
 * Open the records of an input: its bytes [from, to) of a file read
 * without compression (comp REC_NONE) under --part, all of it else.
 */
static struct rec_reader *
open_records(int fd, const char *name, enum rec_comp comp, uint64_t from,
    uint64_t to)
{
	struct rec_reader *r = rec_reader_open(fd, comp, 0, o.maxrec);

	if (r == NULL)
		die_errno("%s", name);
	if (pt.on && comp == REC_NONE && rec_reader_range(r, from, to - from) == -1)
		die_errno("%s", name);
	return r;
}

static void
build_records(struct mmidx_builder *b, int fd, const char *name, int isf,
    enum rec_comp comp, uint64_t from, uint64_t to, uint64_t start)
{
	struct rec_reader *r = open_records(fd, name, comp, from, to);
	struct mmidx_recs rs;
	const uint8_t *p;
	size_t n;
	uint64_t g;
	int rc;

	mmidx_recs_init(&rs, o.feature, o.modefeat, isf, o.docs_empty);
	while (!pt.done && (rc = rec_read(r, &p, &n)) == 1) {
		if (pt.docs) {
			/* A compressed input lies where its first byte does. */
			g = start + (comp == REC_NONE ? rec_offset(r) : 0);
			if (!mmidx_part_take(&pt, g, mmidx_recs_ends_doc(&rs, p, n)))
				continue;
		}
		if (progress_due())
			progress("%s: %" PRIu64 " records", name, rec_index(r));
		add_record(&rs, b, name, p, n, rec_index(r) - 1, rec_offset(r));
	}
	if (pt.done)
		rc = 0;
	if (rc == -1) {
		if (rec_error(r) == REC_EIO)
			die("%s: %s", name, strerror(rec_errno(r)));
		fault_begin();
		die("%s: record %" PRIu64 " at offset %" PRIu64 ": %s", name,
		    rec_index(r), rec_offset(r), rec_strerror(r));
	}
	mmidx_recs_free(&rs);
	rec_reader_free(r);
}

/*
 * Records in several threads, taking turns as get does (lib/pool.h):
 * the input is cut into jobs of consecutive records.  A thread reads
 * the records of its job while it holds the input turn (the reader
 * checks their framing and copies them in bulk); checks their payload
 * CRCs, decodes them and packs their tokens on its own; and adds them
 * to the dataset while it holds the output turn.  Both turns go
 * through the jobs in order, so the dataset is the one a single thread builds, and the first fault in
 * the input ends the run when its turn comes, with the same message.
 */
#define BUILD_JOB	(256u << 10)	/* payload bytes in a job, about */
#define BUILD_RECS	8192		/* most records in a job */

struct buildw {
	/* read in the input turn */
	size_t		 k;		/* records */
	uint64_t	 num0;		/* the number of the first one */
	uint64_t	 pos0;		/* its offset in the input */
	struct buf	 in;		/* the records, as framed in the input */
	int		 rfault;	/* a read fault after them, in rmsg */
	char		 rmsg[1024];
	/* decoded and packed */
	size_t		 good;		/* records before a fault (k if none) */
	char		 msg[1024];	/* that fault */
	uint64_t	 off[BUILD_RECS];	/* record offsets in the input */
	struct mmidx_pack pk;
};

static struct {
	struct buildw	*w;		/* one per thread */
	char		 msg[1024];	/* the fault that ended the run */
	struct rec_reader *r;
	struct mmidx_builder *b;
	const char	*name;
} bt;

static uint64_t vocab_limit;	/* --vocab-size, unless --wrap */

/*
 * Read the records of w's job; the caller holds the input turn.
 * Returns 1 when no job can follow.
 */
static int
build_read_job(struct buildw *w, const struct pool_unit *u)
{
	struct rec_reader *r = bt.r;
	uint64_t len;
	long k;

	w->k = 0;
	w->rfault = 0;
	w->num0 = rec_index(r);
	w->pos0 = rec_position(r);
	w->in.len = 0;
	if (rec_peek(r, &len) == 1 && len > MMIDX_BIG_RECORD) {
		/*
		 * A big record is a job of its own, done here from the
		 * reader's window when the jobs before it are in.
		 */
		const uint8_t *p;
		size_t n;

		if (rec_read(r, &p, &n) == 1) {
			if (pool_turn(u) == -1)
				return 1;
			add_record(&w->pk.rs, bt.b, bt.name, p, n, rec_index(r) - 1,
			    rec_offset(r));
			return 0;
		}
		/* A fault: rec_read_framed() says it again, below. */
	}
	if (progress_due())
		progress("%s: %" PRIu64 " records", bt.name, rec_index(r));
	if ((k = rec_read_framed(r, &w->in, BUILD_JOB, BUILD_RECS)) == 0)
		return 1;
	if (k == -1) {
		if (rec_error(r) == REC_EIO)
			snprintf(w->rmsg, sizeof w->rmsg, "%s: %s", bt.name,
			    strerror(rec_errno(r)));
		else
			snprintf(w->rmsg, sizeof w->rmsg, "%s: record %" PRIu64
			    " at offset %" PRIu64 ": %s", bt.name,
			    rec_index(r), rec_offset(r), rec_strerror(r));
		w->rfault = 1;
		return 1;
	}
	w->k = (size_t)k;
	return 0;
}

/* Check and pack w's job, up to its first fault. */
static void
build_run_job(struct buildw *w)
{
	size_t start = 0, j;

	mmidx_pack_reset(&w->pk);
	for (j = 0; j < w->k; j++) {
		const uint8_t *p = w->in.p + start + 12;
		size_t n = (size_t)rp_le64(p - 12);
		const char *fault = NULL;

		w->off[j] = w->pos0 + start;
		start += n + 16;
		if (!rec_data_ok(p, n, rp_le32(p + n)))
			fault = rec_data_crc_msg;
		else if (mmidx_pack_record(&w->pk, bt.b, p, n) == -1)
			fault = mmidx_pack_strerror(&w->pk);
		if (fault != NULL) {
			snprintf(w->msg, sizeof w->msg, "%s: record %" PRIu64
			    " at offset %" PRIu64 ": %s", bt.name, w->num0 + j,
			    w->off[j], fault);
			break;
		}
	}
	w->good = j;
}

/*
 * Add w's job to the dataset; the caller holds the output turn.
 * Returns 0, or -1 with the fault that ends the run in bt.msg.
 */
static int
build_put_job(struct buildw *w)
{
	struct mmidx_builder *b = bt.b;
	size_t bad;
	long docs;

	if ((docs = mmidx_pack_put(&w->pk, b, &bad)) == -1) {
		snprintf(bt.msg, sizeof bt.msg, "%s: record %" PRIu64
		    " at offset %" PRIu64 ": %s", bt.name, w->num0 + bad,
		    w->off[bad], mmidx_builder_strerror(b));
		return -1;
	}
	doc_ends += (uint64_t)docs;
	if (w->good < w->k) {
		memcpy(bt.msg, w->msg, sizeof bt.msg);
		return -1;
	}
	if (w->rfault) {
		memcpy(bt.msg, w->rmsg, sizeof bt.msg);
		return -1;
	}
	return 0;
}

static int
build_read(void *arg, const struct pool_unit *u)
{
	(void)arg;
	return build_read_job(&bt.w[u->worker], u) ? POOL_LAST : POOL_MORE;
}

static void
build_work(void *arg, const struct pool_unit *u)
{
	(void)arg;
	build_run_job(&bt.w[u->worker]);
}

static int
build_write(void *arg, const struct pool_unit *u)
{
	(void)arg;
	return build_put_job(&bt.w[u->worker]) == -1;
}

static const struct pool_ops build_ops = { build_read, build_work, build_write };

/* build_records() in 'jobs' threads (lib/pool.h). */
static void
build_records_mt(struct mmidx_builder *b, int fd, const char *name, int jobs,
    enum rec_comp comp, uint64_t from, uint64_t to)
{
	struct buildw *w;

	bt.r = open_records(fd, name, comp, from, to);
	w = xcalloc((size_t)jobs, sizeof *w);
	bt.w = w;
	bt.b = b;
	bt.name = name;
	for (int t = 0; t < jobs; t++)
		if (mmidx_pack_init(&w[t].pk, o.feature, o.docs_empty,
		    vocab_limit, BUILD_RECS) == -1)
			die_nomem();
	if (pool_run(jobs, &build_ops, NULL) != 0) {
		fault_begin();
		die("%s", bt.msg);
	}
	for (int t = 0; t < jobs; t++) {
		rp_buf_free(&w[t].in);
		mmidx_pack_free(&w[t].pk);
	}
	free(w);
	bt.w = NULL;
	rec_reader_free(bt.r);
	bt.r = NULL;
}

static struct mmidx_builder *
start_output_builder(enum mmidx_layout layout, enum mmidx_dtype t,
    unsigned flags)
{
	char err[512];
	struct mmidx_builder *b;

	if ((b = mmidx_builder_new(binout.fd, layout, t, flags, err,
	    sizeof err)) == NULL)
		die("%s", err);
	return b;
}

/* Without a vocabulary size: store the tokens in the type their range asks for. */
static void
narrow_output(struct mmidx_builder *b, enum mmidx_layout layout)
{
	int64_t lo, hi;
	enum mmidx_dtype t;

	if (mmidx_builder_range(b, &lo, &hi) == -1)
		die("%s.bin: %s", o.out, mmidx_builder_strerror(b));
	t = mmidx_dtype_for_range(layout, lo, hi);
	if (verbosity > 0) {
		if (mmidx_builder_tokens(b) == 0)
			warnx_("dtype %s (%s, no tokens)", mmidx_dtype_name(t),
			    layout == MMIDX_FAIRSEQ ? "fairseq" : "Megatron");
		else
			warnx_("dtype %s (%s, ids %" PRId64 " to %" PRId64 ")",
			    mmidx_dtype_name(t), layout == MMIDX_FAIRSEQ ?
			    "fairseq" : "Megatron", lo, hi);
	}
	if (mmidx_builder_narrow(b, t) == -1)
		die("%s.bin: %s", o.out, mmidx_builder_strerror(b));
}

/* ---- fairseq dictionaries and text (fairseq-preprocess) ---- */

#define UNK_MAX		(1u << 20)	/* distinct unknown words counted */
#define UNK_SHOW	10		/* unknown words reported */

/* File scope: still reachable when a fault exits (leak checkers). */
static struct fqd *fdict, *funk;

static struct fqd *
load_dict(const char *path)
{
	char err[FQD_ERRMAX];
	struct fqd *d;
	uint8_t *p;
	size_t n;
	int fd;

	if ((fd = open_input(path)) == -1)
		exit(1);
	p = read_all(fd, &n, input_name(path));
	if (fd != 0)
		close(fd);
	if ((d = fqd_load(p, n, err, sizeof err)) == NULL)
		die("%s: %s", input_name(path), err);
	free(p);
	return d;
}

static _Noreturn void
text_fault(const char *name, const struct fqd_lines *r, size_t bad)
{
	if (errno != EILSEQ)
		die_errno("%s", name);
	fault_begin();
	die("%s: line %" PRIu64 " at offset %" PRIu64 ": invalid UTF-8", name,
	    fqd_lines_count(r), fqd_lines_offset(r) + bad);
}

/*
 * A fault in the input (a line that is not UTF-8) ends the counting:
 * the dictionary of the lines before it is written, to stdout as a run
 * on them writes it, and under -o only with --keep-partial; a missing
 * input is skipped.  Either way the status is 1.
 */
static int
cmd_dict(int argc, char **argv)
{
	static char dash[] = "-", *stdin_only[] = { dash };
	uint64_t lines = 0, words = 0;
	const uint8_t *p;
	struct buf out = { 0 };
	char fault[1024] = "";
	size_t n, bad;
	long k;
	int rc, rval = 0;

	if ((fdict = fqd_new(1)) == NULL)
		die_errno("dictionary");
	if (argc == 0) {
		argc = 1;
		argv = stdin_only;
	}
	for (int i = 0; i < argc && fault[0] == '\0'; i++) {
		int fd = open_text(argv[i]);
		const char *name = input_name(argv[i]);
		struct fqd_lines *r;

		if (fd == -1) {
			rval = 1;
			continue;
		}
		if ((r = fqd_lines_new(fd)) == NULL)
			die_errno("%s", name);
		while ((rc = fqd_lines_next(r, &p, &n)) == 1) {
			if (progress_due())
				progress("%s: %" PRIu64 " lines", name,
				    fqd_lines_count(r));
			/* A bad line counts none of its words. */
			if ((bad = uni_utf8_valid_prefix(p, n)) < n) {
				snprintf(fault, sizeof fault, "%s: line %" PRIu64
				    " at offset %" PRIu64 ": invalid UTF-8", name,
				    fqd_lines_count(r), fqd_lines_offset(r) + bad);
				break;
			}
			if ((k = fqd_count_line(fdict, p, n, &bad)) == -1)
				text_fault(name, r, bad);
			words += (uint64_t)k;
		}
		if (rc == -1)
			die_errno("%s", name);
		lines += fqd_lines_count(r) - (fault[0] != '\0');
		fqd_lines_free(r);
		close_text(fd, argv[i]);
	}
	if (fqd_finalize(fdict, o.threshold, o.nwords, o.padf) == -1 ||
	    fqd_save(fdict, &out) == -1)
		die_errno("dictionary");
	out_begin(0);
	progress_done();
	if (out.len > 0)
		obuf_write(&ob, out.p, out.len);
	rp_buf_free(&out);
	if (fault[0] != '\0')
		fail("%s", fault);
	out_end(rval == 0);
	if (verbosity > 0 && rval == 0)
		warnx_("%s: %zu types from %" PRIu64 " lines, %" PRIu64
		    " words", o.out != NULL && strcmp(o.out, "-") != 0 ?
		    o.out : "stdout", fqd_size(fdict), lines, words);
	fqd_free(fdict);
	fdict = NULL;
	return rval;
}

/* fairseq's summary line, and the unknown words it counted. */
static void
text_report(const char *name, const struct mmidx_text_stats *st,
    const struct fqd *unk, int capped)
{
	char pct[40], list[600];
	size_t nu = unk != NULL ? fqd_size(unk) : 0, len = 0;
	uint32_t *ord;

	mmidx_text_py3(pct, sizeof pct, st->toks ? (double)(100 * st->unk) /
	    (double)st->toks : 0);
	warnx_("%s: %" PRIu64 " sents, %" PRIu64 " tokens, %s%% replaced "
	    "(by <unk>)", name, st->seqs, st->toks, pct);
	if (nu == 0)
		return;
	ord = xreallocarray(NULL, nu, sizeof *ord);
	if (fqd_sorted(unk, 0, ord) == -1)
		die_nomem();
	list[0] = '\0';
	for (size_t i = 0; i < nu && i < UNK_SHOW; i++) {
		size_t wl;
		const char *w = fqd_symbol(unk, ord[i], &wl);
		int m = snprintf(list + len, sizeof list - len, "%s%.*s (%" PRIu64
		    ")", i ? ", " : "", (int)(wl > 40 ? 40 : wl), w,
		    fqd_count(unk, ord[i]));

		if (m < 0 || (size_t)m >= sizeof list - len)
			break;
		len += (size_t)m;
	}
	warnx_("%s: most frequent unknown words%s: %s", name, capped ?
	    " (counted among the first 1048576 distinct ones)" : "", list);
	free(ord);
}

/*
 * The <unk> share of all the text: a warning above MMIDX_UNK_WARN (even
 * with -q), a fault above --max-unk-rate (-1 returned).
 */
static int
unk_check(const struct mmidx_text_stats *all)
{
	double r;
	char pct[40];
	int v = mmidx_unk_check(all, o.max_unk, &r);

	if (v == MMIDX_UNK_FINE)
		return 0;
	mmidx_text_py3(pct, sizeof pct, 100 * r);
	if (v == MMIDX_UNK_OVER) {
		warnx_("%s%% of %" PRIu64 " tokens replaced by <unk>, above "
		    "--max-unk-rate %g (%s does not fit the text?)", pct,
		    all->toks, o.max_unk, o.dict);
		return -1;
	}
	warnx_("warning: %s%% of %" PRIu64 " tokens replaced by <unk> "
	    "(%s does not fit the text?)", pct, all->toks, o.dict);
	return 0;
}

static void
build_text(struct mmidx_builder *b, int fd, const char *name,
    struct mmidx_text_stats *all, uint64_t from, uint64_t to)
{
	struct fqd_lines *r = fqd_lines_new(fd);
	struct mmidx_textin tin;
	uint32_t *tv = NULL;
	size_t tcap = 0, n, nunk, bad;
	const uint8_t *p;
	long k;
	int rc;

	if (r == NULL || (funk = fqd_new(0)) == NULL)
		die_errno("%s", name);
	if (pt.on && fqd_lines_range(r, from, to - from) == -1)
		die_errno("%s", name);
	mmidx_textin_init(&tin, fdict, funk, UNK_MAX);
	while ((rc = fqd_lines_next(r, &p, &n)) == 1) {
		if (progress_due())
			progress("%s: %" PRIu64 " lines", name, fqd_lines_count(r));
		if ((k = fqd_encode_line(fdict, p, n, &tv, &tcap, &nunk,
		    &bad)) == -1)
			text_fault(name, r, bad);
		if ((size_t)k > ids.cap)
			grow_ids((size_t)k);
		for (long i = 0; i < k; i++)
			ids.v[i] = tv[i];
		if (mmidx_add_i64(b, ids.v, (size_t)k) == -1)
			add_fault(b, name, "line", fqd_lines_count(r),
			    UINT64_MAX);
		if (mmidx_textin_count(&tin, p, n, (size_t)k, nunk) == -1)
			die_errno("%s", name);
	}
	if (rc == -1)
		die_errno("%s", name);
	if (verbosity > 0)
		text_report(name, &tin.st, funk, tin.capped);
	all->seqs += tin.st.seqs;
	all->toks += tin.st.toks;
	all->unk += tin.st.unk;
	fqd_lines_free(r);
	fqd_free(funk);
	funk = NULL;
	free(tv);
}

/*
 * How a build ends, the same after all input and, under --keep-partial,
 * at a fault: the tokens narrowed to the type their range asks for
 * (without --vocab-size), the documents closed, the pair committed.
 */
static struct {
	struct mmidx_builder	*b;
	enum mmidx_layout	 layout;
	int			 narrow, docs_auto;
} bend;

static void
end_build(void)
{
	progress_done();
	if (bend.narrow)
		narrow_output(bend.b, bend.layout);
	/*
	 * Under --part only a part that starts at the input's start can tell
	 * that the input ends no document (it then reads all of it).
	 */
	if (bend.docs_auto && pt.lo == 0)
		mmidx_docs_each_unless_ended(bend.b);
	finish_output(bend.b, o.out);
}

static int
cmd_build(int argc, char **argv)
{
	enum mmidx_layout layout = o.layout == MMIDX_AUTO ? MMIDX_FAIRSEQ :
	    o.layout;
	enum mmidx_dtype t;
	struct mmidx_builder *b;
	unsigned flags = 0;
	struct mmidx_text_stats all = { 0, 0, 0 };
	struct part_file *parts = NULL;
	uint64_t pstart = 0;
	int isf, jobs, narrow, docs_auto, rval = 0;

	if (o.out == NULL || strcmp(o.out, "-") == 0)
		usage_error("build: -o PREFIX is needed");
	if (o.docs_given && layout == MMIDX_FAIRSEQ)
		usage_error("--documents applies to --format megatron");
	if (o.modefeat != NULL) {
		if (layout != MMIDX_MEGATRON)
			usage_error("--mode-feature applies to --format megatron");
		if (o.idlines)
			usage_error("--mode-feature needs record input");
		layout = MMIDX_MEGATRON_MM;
	}
	if (o.textin != (o.dict != NULL))
		usage_error(o.textin ? "--input-format text needs --dict" :
		    "--dict goes with --input-format text");
	if (o.max_unk >= 0 && !o.textin)
		usage_error("--max-unk-rate applies to --input-format text");
	if (o.dict != NULL) {
		if (o.vocab)
			usage_error("--vocab-size and --dict exclude each other");
		fdict = load_dict(o.dict);
		/* fairseq-preprocess: vocab_size=len(dictionary) */
		o.vocab = fqd_size(fdict);
	}
	narrow = o.dtype == -1 && o.vocab == 0 && !o.wrap;
	pt.on = o.part_n > 1;
	/* Documents as below: --documents empty, or records by default. */
	pt.docs = pt.on && layout != MMIDX_FAIRSEQ && (o.docs_empty ||
	    (!o.docs_given && !o.idlines && !o.textin));
	if (pt.on && narrow)
		usage_error("--part needs --dtype, --vocab-size or --wrap: one run "
		    "picks the dtype from the largest id of the whole input");
	if (argc == 0) {
		static char dash[] = "-", *stdin_only[] = { dash };
		argc = 1;
		argv = stdin_only;
	}
	if (pt.on) {
		/* Record input without a known compression is sniffed per file. */
		parts = part_files(argv, argc, !o.idlines && !o.textin, REC_AUTO,
		    o.part_k, o.part_n);
		for (int i = 0; i < argc; i++) {
			pt.lo += parts[i].from;
			pt.hi += parts[i].to;
		}
		pt.skipping = pt.docs && pt.lo > 0;
	}
	if (narrow)
		t = MMIDX_INT64;	/* until the largest id is known */
	else if (o.dtype == -1) {
		t = mmidx_dtype_auto(layout, o.vocab);
		if (verbosity > 0) {
			if (o.vocab)
				warnx_("dtype %s (%s, vocabulary of %" PRIu64 ")",
				    mmidx_dtype_name(t), layout == MMIDX_FAIRSEQ ?
				    "fairseq" : "Megatron", o.vocab);
			else
				warnx_("dtype %s (%s, no --vocab-size)",
				    mmidx_dtype_name(t), layout == MMIDX_FAIRSEQ ?
				    "fairseq" : "Megatron");
		}
	} else {
		t = (enum mmidx_dtype)o.dtype;
		if (o.vocab)
			usage_error("--vocab-size goes with --dtype auto");
	}
	if (mmidx_dtype_code(layout, t) == -1)
		usage_error("%s cannot store %s", layout == MMIDX_FAIRSEQ ?
		    "fairseq" : "Megatron", mmidx_dtype_name(t));
	isf = mmidx_dtype_is_float(t);
	if (o.wrap)
		flags |= MMIDX_WRAP;
	/*
	 * fairseq ids given as ids are held to what fairseq-preprocess
	 * writes (text through --dict is so by construction); Megatron's
	 * are taken as they are, --raw-ids or not.
	 */
	if (layout == MMIDX_FAIRSEQ && !o.textin && !o.raw_ids && !isf)
		flags |= MMIDX_FAIRSEQ_IDS;
	/*
	 * Records carry documents in recpipe(5)'s convention: an Example
	 * without features ends one.  Megatron follows them when the input
	 * has any (every sequence is a document otherwise); fairseq has no
	 * documents and passes over them.
	 */
	docs_auto = !o.docs_given && !o.idlines && !o.textin;
	if (docs_auto)
		o.docs_empty = 1;
	if (!o.docs_empty)
		flags |= MMIDX_DOC_EACH;
	b = start_output(o.out, layout, t, flags);
	if (narrow && binout.direct) {
		/* A device or FIFO cannot be rewritten: upstream's guess. */
		mmidx_builder_free(b);
		narrow = 0;
		t = mmidx_dtype_auto(layout, 0);
		if (verbosity > 0)
			warnx_("dtype %s (%s, no --vocab-size, and %s.bin cannot "
			    "be rewritten)", mmidx_dtype_name(t),
			    layout == MMIDX_FAIRSEQ ? "fairseq" : "Megatron", o.out);
		b = start_output_builder(layout, t, flags);
	}
	if (o.vocab && !o.wrap)
		mmidx_builder_set_vocab(b, o.vocab);
	vocab_limit = o.wrap ? 0 : o.vocab;
	/* --keep-partial: a fault ends the build as the end of input does. */
	bend.b = b;
	bend.layout = layout;
	bend.narrow = narrow;
	bend.docs_auto = docs_auto;
	fault_keep = end_build;
	grow_ids(1024);
	mmidx_ids_init(&idl, t);
	/* Floats and modes take the single-threaded way. */
	jobs = isf || o.modefeat != NULL || pt.docs ? 1 : get_jobs();
	for (int i = 0, fd; i < argc && !pt.done; i++) {
		const char *name = input_name(argv[i]);
		uint64_t from = 0, to = UINT64_MAX, start = pstart;
		enum rec_comp comp = REC_AUTO;

		if (pt.on) {
			pstart += parts[i].size;
			from = parts[i].from;
			to = parts[i].to;
			comp = parts[i].comp;
			/* With documents, the last document reads on past hi. */
			if (pt.docs && start + parts[i].size > pt.hi)
				to = parts[i].size;
			if (comp != REC_NONE && from != to) {
				from = 0;
				to = parts[i].size;
			}
			if (from == to)
				continue;
		}
		/* Text may be gzip (not when cut into parts); records sniff. */
		if ((fd = !o.textin && !o.idlines ? open_input(argv[i]) :
		    pt.on ? open_text_part(argv[i]) : open_text(argv[i])) == -1) {
			if (keep_partial) {
				rval = 1;
				continue;
			}
			out_abort(&binout);
			out_abort(&idxout);
			exit(1);
		}
		if (o.textin)
			build_text(b, fd, name, &all, from, to);
		else if (o.idlines)
			build_ids(b, fd, name, from, to, start);
		else if (jobs > 1)
			build_records_mt(b, fd, name, jobs, comp, from, to);
		else
			build_records(b, fd, name, isf, comp, from, to, start);
		if (o.textin || o.idlines)
			close_text(fd, argv[i]);	/* after build_ids' fclose, only waits */
		else if (fd != 0)
			close(fd);
	}
	fault_keep = NULL;
	free(parts);
	if (layout == MMIDX_FAIRSEQ && doc_ends > 0 && verbosity > 0)
		warnx_("warning: %ju document ends (Examples without features, "
		    "a blank line of the text) passed over: a fairseq dataset has "
		    "no documents, and fairseq-preprocess keeps a blank line as "
		    "a sequence of </s> alone, so the lines of a pair's two "
		    "sides may no longer match; encode pairs together (--fields, "
		    "--parallel) or give --input-format text", (uintmax_t)doc_ends);
	if (o.textin && argc > 1 && verbosity > 0)
		text_report("total", &all, NULL, 0);
	if (o.textin && unk_check(&all) == -1) {
		/* Known only at the end: all-or-nothing unless --keep-partial. */
		if (!keep_partial) {
			out_abort(&binout);
			out_abort(&idxout);
			exit(1);
		}
		rval = 1;
	}
	end_build();
	mmidx_ids_free(&idl);
	fqd_free(fdict);
	fdict = NULL;
	mmidx_builder_free(b);
	return rval;
}

/* File scope: still reachable when a fault exits (leak checkers). */
static struct mmidx **ms;

static int
cmd_merge(int argc, char **argv)
{
	struct mmidx_builder *b;

	if (o.out == NULL || strcmp(o.out, "-") == 0)
		usage_error("merge: -o PREFIX is needed");
	if (argc < 1)
		usage_error("merge: at least one dataset prefix is needed");
	ms = xcalloc((size_t)argc, sizeof *ms);
	/* Open and check everything before writing anything. */
	for (int i = 0; i < argc; i++) {
		ms[i] = open_ds(argv[i]);
		if (i > 0 && (mmidx_layout(ms[i]) != mmidx_layout(ms[0])))
			die("%s: layout %s, but %s is %s", argv[i],
			    mmidx_layout_name(mmidx_layout(ms[i])), argv[0],
			    mmidx_layout_name(mmidx_layout(ms[0])));
		if (i > 0 && mmidx_dtype(ms[i]) != mmidx_dtype(ms[0]))
			die("%s: dtype %s, but %s is %s", argv[i],
			    mmidx_dtype_name(mmidx_dtype(ms[i])), argv[0],
			    mmidx_dtype_name(mmidx_dtype(ms[0])));
		if (mmidx_verify(ms[i]) == -1)
			die("%s", mmidx_strerror(ms[i]));
	}
	b = start_output(o.out, mmidx_layout(ms[0]), mmidx_dtype(ms[0]), 0);
	/* The inputs are checked: what fails now is writing the .bin. */
	for (int i = 0; i < argc; i++)
		if (mmidx_append(b, ms[i]) == -1)
			die("%s.bin: %s", o.out, mmidx_builder_strerror(b));
	finish_output(b, o.out);
	mmidx_builder_free(b);
	for (int i = 0; i < argc; i++)
		mmidx_close(ms[i]);
	free(ms);
	return 0;
}

int
main(int argc, char **argv)
{
	int found = -1, json;

	setprogname(argv[0]);
	if (argc < 2)
		usage(stderr, 2);
	for (int i = 0; i < (int)NCMDS; i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			found = i;
	if (found == -1) {
		if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
			usage(stdout, 0);
		if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)
			print_version(NULL);
		usage_error("unknown subcommand '%s'", argv[1]);
	}
	o.cmd = found;
	o.feature = "targets";
	o.dtype = -1;
	o.layout = MMIDX_AUTO;
	o.outfmt = -1;
	o.nwords = -1;
	o.padf = 8;
	argc--;
	argv++;
	parse_opts(argc, argv);
	argc -= optind;
	argv += optind;
	/* Dataset operands: x.bin and x.idx name x (dict reads text files). */
	if (o.cmd != CMD_BUILD && o.cmd != CMD_DICT)
		for (int i = 0; i < argc; i++)
			dataset_prefix(argv[i]);
	if (o.out != NULL && (o.cmd == CMD_BUILD || o.cmd == CMD_MERGE))
		o.out = out_prefix(o.out);
	/* Outputs that cannot be written are refused before any work. */
	if (o.out != NULL && *o.out == '\0')
		out_check(o.out);
	/* build, merge and dict make their output directory, as --destdir */
	if (o.out != NULL && *o.out != '\0' &&
	    (o.cmd == CMD_BUILD || o.cmd == CMD_MERGE || o.cmd == CMD_DICT))
		out_make_dirs(o.out);
	if (o.out != NULL && strcmp(o.out, "-") != 0) {
		if (o.cmd == CMD_BUILD || o.cmd == CMD_MERGE) {
			char *bp = joinx(o.out, ".bin"), *ip = joinx(o.out, ".idx");

			out_check(bp);
			out_check(ip);
			free(bp);
			free(ip);
		} else {
			out_form(o.out, o.outfmt == OUT_RECORDS ? WRITES_RECORDS :
			    WRITES_TEXT, o.outfmt == OUT_RECORDS ?
			    "leave out -R to write text" : "add -R to write records");
			out_check(o.out);
		}
	}
	json = o.outfmt == OUT_JSON;
	if (o.outfmt == -1)
		o.outfmt = OUT_JSON;
	switch (o.cmd) {
	case CMD_BUILD:		return cmd_build(argc, argv);
	case CMD_CAT:		return cmd_cat(argc, argv);
	case CMD_GET:		return cmd_get(argc, argv);
	case CMD_INFO:		return cmd_info(argc, argv, json);
	case CMD_MERGE:		return cmd_merge(argc, argv);
	case CMD_DICT:		return cmd_dict(argc, argv);
	default:		return cmd_verify(argc, argv);
	}
}
