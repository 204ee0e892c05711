/*
 * pack-encdec: turn Example records of task features (inputs, targets,
 * ...) into the model features of a seqio feature converter, packed or
 * padded, byte for byte as seqio would; or into Electra's pretraining
 * examples.  Reads records from the operands (stdin when none or "-")
 * and writes records to stdout or to -o FILE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "common.h"
#include "example.h"
#include "pool.h"
#include "record.h"
#include "seqio.h"
#include "wordpiece.h"

#define DEFAULT_SEED	0
/* Records longer than this are not decoded whole (see fetch_big()). */
#define BIG_RECORD	(16u << 20)
#define LAZY_MIN	(1u << 20)

static const char usage_text[] =
"usage: pack-encdec [-hqV] [--custom-ops] [--keep-partial] [--no-length-check]\n"
"           [--no-loss-on-targets-only] [--no-pack]\n"
"           [--progress | --no-progress] [--stats] -C converter\n"
"           [-l feature=length[,...]] [-o file] [--bos-id id]\n"
"           [--compression type] [--mask-id id] [--max-record-size N]\n"
"           [--part K/N] [--passthrough feature[,...]] [--strategy name]\n"
"           [--window rows] [file ...]\n"
"       pack-encdec [-hqV] [--keep-partial] [--progress | --no-progress]\n"
"           [--stats] -C electra --max-seq-length length\n"
"           [--cls-id id|token] [-f feature] [-o file] [-s seed]\n"
"           [--sep-id id|token] [-v vocab] [--compression type]\n"
"           [--max-record-size N] [--part K/N] [file ...]\n"
"\n"
"  -C, --converter NAME     seqio feature converter, or electra\n"
"  -l, --lengths F=N,...    seqio's task_feature_lengths\n"
"  --bos-id ID              id shifted into the first decoder input (default 0)\n"
"  --cls-id T, --sep-id T   electra: [CLS] and [SEP], by id or by token\n"
"  --compression C          how the input is compressed (default: sniffed)\n"
"  --custom-ops             seqio's use_custom_packing_ops (first-fit kernels)\n"
"  -f, --feature NAME       electra: the feature holding ids (default targets)\n"
"  -h, --help               print this help\n"
"  --keep-partial           after a fault, keep what the good input gave\n"
"  --mask-id ID             the mask id of the encoder converter\n"
"  --max-record-size N      largest payload read from a pipe (default 2G)\n"
"  --max-seq-length N       electra: the example length\n"
"  --no-length-check        trim over-long features instead of failing\n"
"  --no-loss-on-targets-only  prefix LMs: loss weight on the inputs too\n"
"  --no-pack                pad each record instead of packing\n"
"  -o, --output FILE        write to FILE (atomically)\n"
"  --part K/N               convert the K-th of N parts of the input\n"
"                           (auto: K and N from the job array or MPI)\n"
"  --passthrough F,...      features copied through, trimmed and padded\n"
"  --progress, --no-progress  progress on stderr (default: when a terminal)\n"
"  -q, --quiet              say less\n"
"  -s, --seed SEED          electra: seed of the random choices (default 0)\n"
"  --stats                  print what was read, written and dropped\n"
"  --strategy NAME          seqio (default), first-fit or best-fit\n"
"  -V, --version            print the version\n"
"  -v, --vocab FILE         electra: a vocab.txt naming the special tokens\n"
"  --window N               rows kept open by first-fit/best-fit (default 256)\n"
"See pack-encdec(1).\n";

static _Noreturn void
usage(FILE *fp, int status)
{
	print_usage(fp, usage_text, status);
}

enum {
	OPT_BOS = 256, OPT_COMPRESSION, OPT_CUSTOM, OPT_CLS, OPT_MASK,
	OPT_MAXLEN, OPT_NOCHECK, OPT_NOLOSS, OPT_NOPACK, OPT_PASS, OPT_SEP,
	OPT_STATS, OPT_STRATEGY, OPT_WINDOW, OPT_MAXREC, OPT_KEEP_PARTIAL,
	OPT_PART, OPT_PROGRESS, OPT_NO_PROGRESS
};

static const struct option longopts[] = {
	{ "bos-id", required_argument, NULL, OPT_BOS },
	{ "cls-id", required_argument, NULL, OPT_CLS },
	{ "compression", required_argument, NULL, OPT_COMPRESSION },
	{ "converter", required_argument, NULL, 'C' },
	{ "custom-ops", no_argument, NULL, OPT_CUSTOM },
	{ "feature", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL },
	{ "lengths", required_argument, NULL, 'l' },
	{ "mask-id", required_argument, NULL, OPT_MASK },
	{ "max-record-size", required_argument, NULL, OPT_MAXREC },
	{ "max-seq-length", required_argument, NULL, OPT_MAXLEN },
	{ "no-length-check", no_argument, NULL, OPT_NOCHECK },
	{ "no-loss-on-targets-only", no_argument, NULL, OPT_NOLOSS },
	{ "no-pack", no_argument, NULL, OPT_NOPACK },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "output", required_argument, NULL, 'o' },
	{ "part", required_argument, NULL, OPT_PART },
	{ "passthrough", required_argument, NULL, OPT_PASS },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "seed", required_argument, NULL, 's' },
	{ "sep-id", required_argument, NULL, OPT_SEP },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ "version", no_argument, NULL, 'V' },
	{ "vocab", required_argument, NULL, 'v' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ NULL, 0, NULL, 0 }
};

/*
 * Everything the record loop and the emit callbacks share.  The output
 * (output_open()): writer and outname are outp.w and outp.name.
 */
static struct output outp;
static struct rec_writer *writer;
static const char *outpath;	/* -o; NULL: stdout */
static const char *outname = "stdout";
static struct buf outbuf;
static const char *cur_file;	/* display name of the input being read */
static uint64_t cur_record;	/* its 0-based record number */
static uint64_t cur_offset;	/* and the offset of that record */
static uint64_t max_len;	/* --max-record-size; 0: the reader's default */
static struct example cur_ex;	/* the decoded record (pad mode) */
static const struct sq_conv *the_conv;	/* for the pad-mode callback */
static struct sq_conv *fault_conv;	/* to finish at a fault */
static struct sq_electra *electra;

static void writer_drain(void);

/*
 * A fault in the input: write the rows that the records before it make
 * (the open rows too, as the end of that input would), and end the
 * record stream.  The output is then what a run on the good records
 * writes; under -o it is kept with --keep-partial only.
 */
static void
end_at_fault(void)
{
	static int ended;

	if (ended++)
		return;
	writer_drain();
	if (fault_conv != NULL && sq_finish_before(fault_conv) == -1 &&
	    sq_errkind(fault_conv) == SQ_EEMIT)
		write_failed(outname);
	if (electra != NULL && sq_electra_flush(electra) == -1)
		write_failed(outname);
	writer = NULL;
	output_end_stream(&outp);
	fault_begin();
}
static _Noreturn void
data_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A fault in the data: flush what was written before it, then die. */
static _Noreturn void
data_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	end_at_fault();
	die("%s: record %ju at offset %ju: %s", cur_file, (uintmax_t)cur_record,
	    (uintmax_t)cur_offset, msg);
}

/*
 * Memory ran out while decoding the current record: a fault like any
 * other, so the rows before it are written as at a bad record.
 */
/*
 * Memory set aside at the start and given back when memory runs out,
 * so that the rows before the fault can still be encoded and written.
 */
static void *oom_reserve;

static _Noreturn void
decode_oom(void)
{
	free(oom_reserve);
	oom_reserve = NULL;
	end_at_fault();
	die("%s: record %ju at offset %ju: out of memory", cur_file,
	    (uintmax_t)cur_record, (uintmax_t)cur_offset);
}

/*
 * Output runs in a second thread, a pool of one worker fed by the main
 * thread (lib/pool.h): the main thread reads, decodes and packs; the
 * writer encodes, frames and writes, in order.  A unit is a batch of
 * rows (a thread woken per row would cost more than the row), and the
 * few units in flight bound the memory.
 */
#define NUNIT	8
#define BATCH	32	/* rows in a unit */
enum { SLOT_ROW, SLOT_RAW, SLOT_BROW };
struct slot {
	int		 what;		/* a row to encode, a payload in 'bytes', or a byte row */
	size_t		 n;
	const char	*names[64];	/* stable for the run */
	size_t		 lens[64];
	size_t		 used[64];	/* values before the trailing zeros */
	int64_t		*vals;		/* those values of each list, one after another */
	size_t		 cap;
	struct buf	 bytes;		/* a payload, or a byte row's tokens */
	struct sq_brow	 brow;		/* a byte row, its pointers set by the writer */
	uint32_t	*segs;		/* its segments, key after key */
	size_t		 segcap;
};
static struct slot slots[NUNIT][BATCH];
static size_t nrows[NUNIT];	/* rows in each unit */
static struct pool *wpool;	/* NULL: rows are written in line */
static struct pool_unit filling;	/* the unit being filled, */
static int infill;		/* when this is set */
static struct ex_lists *wenc;	/* the writer's encoder */

static void write_row(struct ex_lists *enc, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used);
static void write_brow(struct sq_brow *row);

static void
write_slot(struct ex_lists *enc, struct slot *sl)
{
	const int64_t *vp[64];
	size_t i, off;

	if (sl->what == SLOT_RAW) {
		if (rec_write(writer, sl->bytes.p, sl->bytes.len) == -1)
			write_failed(outname);
	} else if (sl->what == SLOT_BROW) {
		const uint8_t *b = sl->bytes.p;
		const uint32_t *sg = sl->segs;

		for (i = 0; i < sl->brow.nk; i++) {
			sl->brow.k[i].b = b;
			sl->brow.k[i].segv = sg;
			sl->brow.k[i].segb = sg + sl->brow.k[i].nseg;
			b += sl->brow.k[i].nb;
			sg += 2 * sl->brow.k[i].nseg;
		}
		write_brow(&sl->brow);
	} else {
		for (i = off = 0; i < sl->n; i++) {
			vp[i] = sl->vals + off;
			off += sl->used[i];
		}
		write_row(enc, sl->n, sl->names, vp, sl->lens, sl->used);
	}
}

/* Write a unit's rows (the writer thread). */
static int
write_unit(void *arg, const struct pool_unit *u)
{
	(void)arg;
	if (wenc == NULL && (wenc = ex_lists_new()) == NULL)
		die_errno("encoding a record");
	for (size_t i = 0; i < nrows[u->worker]; i++)
		write_slot(wenc, &slots[u->worker][i]);
	return 0;
}

static const struct pool_ops unit_ops = { NULL, NULL, write_unit };

/* Without a thread, output is written in line; nothing else changes. */
static void
writer_start(void)
{
	wpool = pool_open(1, NUNIT, &unit_ops, NULL);
}

/* Hand the unit being filled to the writer. */
static void
unit_submit(void)
{
	if (infill) {
		pool_submit(wpool);
		infill = 0;
	}
}

/* Wait until everything queued is written and the writer thread is gone. */
static void
writer_drain(void)
{
	if (wpool == NULL)
		return;
	unit_submit();
	(void)pool_close(wpool);
	wpool = NULL;
	ex_lists_free(wenc);
	wenc = NULL;
}

static struct slot *
slot_get(void)
{
	if (!infill) {
		(void)pool_next(wpool, &filling);
		nrows[filling.worker] = 0;
		infill = 1;
	}
	return &slots[filling.worker][nrows[filling.worker]];
}

static void
slot_put(void)
{
	if (++nrows[filling.worker] == BATCH)
		unit_submit();
}

static void
put_record(const void *p, size_t n)
{
	struct slot *sl;

	if (wpool == NULL) {
		if (rec_write(writer, p, n) == -1)
			write_failed(outname);
		return;
	}
	sl = slot_get();
	sl->what = SLOT_RAW;
	sl->bytes.len = 0;
	if (rp_buf_append(&sl->bytes, p, n) == -1)
		die_errno("queueing a record");
	slot_put();
}

/*
 * Encode a row straight into the writer's buffer.  Each thread that
 * writes rows has its own encoder.
 */
static void
write_row(struct ex_lists *enc, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	size_t size;
	void *dst;

	if ((size = ex_encode_int64_lists(enc, n, names, vals, lens, used)) == SIZE_MAX)
		die_errno("encoding a record");
	if ((dst = rec_write_begin(writer, size)) == NULL)
		write_failed(outname);
	ex_lists_put(enc, dst);
	if (rec_write_end(writer, size) == -1)
		write_failed(outname);
}

/* A row of the byte path, straight into the writer's buffer. */
static void
write_brow(struct sq_brow *row)
{
	size_t size;
	void *dst;

	size = sq_brow_size(the_conv, row);
	if ((dst = rec_write_begin(writer, size)) == NULL)
		write_failed(outname);
	sq_brow_put(the_conv, row, dst);
	if (rec_write_end(writer, size) == -1)
		write_failed(outname);
}

/* Byte rows travel as their token bytes and segment lengths. */
static int
emit_brow(void *arg, const struct sq_brow *row)
{
	struct slot *sl;
	size_t i, nb = 0, ns = 0;
	uint32_t *sg;
	void *np;

	(void)arg;
	if (wpool == NULL) {
		struct sq_brow r = *row;

		write_brow(&r);
		return 0;
	}
	for (i = 0; i < row->nk; i++) {
		nb += row->k[i].nb;
		ns += 2 * row->k[i].nseg;
	}
	sl = slot_get();
	sl->what = SLOT_BROW;
	sl->brow = *row;
	sl->bytes.len = 0;
	if (rp_buf_reserve(&sl->bytes, nb) == -1)
		die_errno("queueing a record");
	if (ns > sl->segcap) {
		if ((np = realloc(sl->segs, ns * sizeof(uint32_t))) == NULL)
			die_errno("queueing a record");
		sl->segs = np;
		sl->segcap = ns;
	}
	for (i = 0, sg = sl->segs; i < row->nk; i++) {
		if (row->k[i].nb > 0)
			memcpy(sl->bytes.p + sl->bytes.len, row->k[i].b, row->k[i].nb);
		sl->bytes.len += row->k[i].nb;
		if (row->k[i].nseg > 0) {
			memcpy(sg, row->k[i].segv, row->k[i].nseg * sizeof *sg);
			memcpy(sg + row->k[i].nseg, row->k[i].segb,
			    row->k[i].nseg * sizeof *sg);
		}
		sg += 2 * row->k[i].nseg;
	}
	slot_put();
	return 0;
}

/*
 * A row made of features of the current record (and the padded lists of
 * pad mode) is encoded from them as they are, so that a list left in a
 * huge record (see fetch_big()) is copied from it a part at a time: an
 * empty or kindless list as an empty int64 list, as the converter has it.
 */
static struct ex_feature *rowfeat;
static size_t rowcap;

static struct ex_feature *
row_feature(size_t at)
{
	void *np;
	size_t nc;

	if (at == rowcap) {
		nc = rowcap ? 2 * rowcap : 16;
		if ((np = realloc(rowfeat, nc * sizeof *rowfeat)) == NULL)
			die_errno("encoding a record");
		rowfeat = np;
		rowcap = nc;
	}
	return &rowfeat[at];
}

/* Encode the row's features and write them; a big one skips the writer thread. */
static void
put_row_features(size_t nf)
{
	struct example ex;

	memset(&ex, 0, sizeof ex);
	ex.has_features = 1;
	ex.feat = rowfeat;
	ex.nfeat = nf;
	outbuf.len = 0;
	if (ex_encode(&ex, &outbuf) == -1)
		die_errno("encoding a record");
	if (outbuf.len > BIG_RECORD)
		writer_drain();
	put_record(outbuf.p, outbuf.len);
}

/* Pad mode: the padded features, and every other feature of the record unchanged. */
static int
emit_padded(void *arg, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	const struct sq_conv *c = the_conv;
	const struct ex_feature *ft;
	struct ex_feature *o;
	size_t i, j, nf = 0;
	int listed;

	(void)arg;
	(void)used;
	for (i = 0; i < cur_ex.nfeat; i++) {
		ft = &cur_ex.feat[i];
		listed = 0;
		for (j = 0; j < sq_ninputs(c); j++) {
			const char *nm = sq_input_name(c, j);

			if (strlen(nm) == ft->keylen &&
			    memcmp(nm, ft->key, ft->keylen) == 0)
				listed = 1;
		}
		if (listed)
			continue;
		if (ft->keylen >= 4096 || memchr(ft->key, 0, ft->keylen))
			data_error("feature name not supported in pad mode");
		o = row_feature(nf++);
		*o = *ft;
		if (o->kind == EX_NONE) {
			o->kind = EX_INT64;
			o->n = 0;
		}
	}
	for (i = 0; i < n; i++) {
		o = row_feature(nf++);
		memset(o, 0, sizeof *o);
		o->key = (const uint8_t *)names[i];
		o->keylen = strlen(names[i]);
		o->kind = EX_INT64;
		o->i64 = vals[i];
		o->n = lens[i];
	}
	put_row_features(nf);
	return 0;
}

/*
 * A row of a pre-packed LM converter from a huge record: its lists as
 * they are in the record (the converter found each an int64 list).
 */
static int big_prepacked;

static void
emit_prepacked_big(size_t n, const char *const *names)
{
	const struct ex_feature *ft;
	struct ex_feature *o;
	size_t i;

	for (i = 0; i < n; i++) {
		o = row_feature(i);
		memset(o, 0, sizeof *o);
		if ((ft = ex_get(&cur_ex, names[i])) != NULL &&
		    ft->kind == EX_INT64)
			*o = *ft;
		o->key = (const uint8_t *)names[i];
		o->keylen = strlen(names[i]);
		o->kind = EX_INT64;
	}
	put_row_features(n);
}

static int
emit_row(void *arg, size_t n, const char *const *names,
    const int64_t *const *vals, const size_t *lens, const size_t *used)
{
	static struct ex_lists *enc;
	struct slot *sl;
	size_t i, tot = 0;
	void *np;

	(void)arg;
	if (big_prepacked) {
		emit_prepacked_big(n, names);
		return 0;
	}
	if (wpool == NULL || n > 64) {
		writer_drain();
		if (enc == NULL && (enc = ex_lists_new()) == NULL)
			die_errno("encoding a record");
		write_row(enc, n, names, vals, lens, used);
		return 0;
	}
	sl = slot_get();
	sl->what = SLOT_ROW;
	sl->n = n;
	/* Only the values before the padding travel; the writer adds the zeros. */
	for (i = 0; i < n; i++) {
		size_t u = used ? used[i] : lens[i];

		if (used == NULL)
			while (u > 0 && vals[i][u - 1] == 0)
				u--;
		sl->used[i] = u;
		tot += u;
	}
	if (tot > sl->cap) {
		if ((np = realloc(sl->vals, tot * sizeof(int64_t))) == NULL)
			die_errno("queueing a record");
		sl->vals = np;
		sl->cap = tot;
	}
	for (i = tot = 0; i < n; i++) {
		sl->names[i] = names[i];
		sl->lens[i] = lens[i];
		if (sl->used[i] > 0)
			memcpy(sl->vals + tot, vals[i], sl->used[i] * sizeof(int64_t));
		tot += sl->used[i];
	}
	slot_put();
	return 0;
}

struct opts {
	int		 electra;
	struct sq_config cfg;
	char		*lengths, *pass;
	const char	*feature;
	long		 maxlen;
	int64_t		 cls, sep;
	const char	*cls_arg, *sep_arg;	/* an id or, with -v, a token */
	const char	*vocab;			/* -v: the WordPiece vocabulary */
	uint64_t	 seed;
	int		 stats;
	enum rec_comp	 comp;
	uint64_t	 part_k, part_n;	/* --part */
};

/*
 * One of ELECTRA's special tokens: 'arg' (an id, or with a vocabulary a
 * token) or, when NULL, the token 'name' of the vocabulary.  An id given
 * by number is checked against the vocabulary: ids count from 0 where
 * the vocabulary's lines count from 1, so --cls-id 102 with BERT's
 * vocab.txt (where [CLS] is line 102, id 101) is [SEP].
 */
static int64_t
special_id(const struct wp_vocab *v, const char *vpath, const char *arg,
    const char *name, const char *opt)
{
	const char *piece;
	long long id;
	long named;

	if (v == NULL) {
		if (parse_int(arg, INT32_MIN, INT32_MAX, &id) == -1)
			usage_error("%s '%s': a token name needs the vocabulary "
			    "(-v vocab.txt); without it, give the id", opt, arg);
		return id;
	}
	named = wp_vocab_id(v, name, strlen(name));
	if (arg == NULL) {
		if (named == -1)
			usage_error("%s: no %s token; name the one to use with %s",
			    vpath, name, opt);
		return named;
	}
	if (parse_int(arg, INT32_MIN, INT32_MAX, &id) == -1) {
		if ((named = wp_vocab_id(v, arg, strlen(arg))) == -1)
			usage_error("%s '%s': no such token in %s", opt, arg, vpath);
		return named;
	}
	if ((piece = wp_piece(v, id, NULL)) == NULL)
		usage_error("%s %lld: %s has ids 0 to %zu", opt, id, vpath,
		    wp_vocab_size(v) - 1);
	if (strcmp(piece, name) != 0 && named != -1)
		usage_error("%s %lld: id %lld in %s is '%s', not %s, which is "
		    "id %ld (ids count from 0, the file's lines from 1); give "
		    "%s %ld, or the token by name", opt, id, id, vpath, piece,
		    name, named, opt, named);
	return id;
}

static void
special_ids(struct opts *o)
{
	struct wp_vocab *v = NULL;
	char err[WP_ERRMAX];

	if (o->vocab != NULL &&
	    (v = wp_vocab_load(o->vocab, err, sizeof err)) == NULL)
		die("%s: %s", input_name(o->vocab), err);
	o->cls = special_id(v, o->vocab, o->cls_arg, "[CLS]", "--cls-id");
	o->sep = special_id(v, o->vocab, o->sep_arg, "[SEP]", "--sep-id");
	if (o->cls == o->sep)
		usage_error("--cls-id and --sep-id are the same id, %lld",
		    (long long)o->cls);
	wp_vocab_free(v);
}

/* "inputs=512,targets=128" into the config (names point into s). */
static void
parse_lengths(char *s, struct sq_config *cfg)
{
	char *tok, *eq, *save = NULL;
	size_t i;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL || eq == tok)
			usage_error("-l: '%s' is not feature=length", tok);
		*eq = '\0';
		if (cfg->nlen == SQ_MAX_FEATS)
			usage_error("-l: at most %d features", SQ_MAX_FEATS);
		for (i = 0; i < cfg->nlen; i++)
			if (strcmp(cfg->len_name[i], tok) == 0)
				usage_error("-l: '%s' given twice", tok);
		cfg->len_name[cfg->nlen] = tok;
		cfg->len_val[cfg->nlen++] = (long)num_arg("-l", eq + 1, 1, SQ_MAX_LENGTH);
	}
	if (cfg->nlen == 0)
		usage_error("-l: no feature lengths");
}

static void
parse_pass(char *s, struct sq_config *cfg)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cfg->npass == SQ_MAX_FEATS)
			usage_error("--passthrough: at most %d features", SQ_MAX_FEATS);
		cfg->pass_name[cfg->npass++] = tok;
	}
}

/*
 * Look up the converter's inputs in one record.  One decode per record
 * into an Example whose pools are reused, so the hot path allocates
 * nothing once the pools have grown.
 */
static void
fetch(const struct sq_conv *c, const uint8_t *p, size_t n,
    struct sq_feat *f)
{
	if (ex_decode(&cur_ex, p, n, EX_TYPE_EXAMPLE) == -1) {
		if (errno == ENOMEM)
			decode_oom();
		data_error("%s", ex_strerror(&cur_ex));
	}
	sq_fetch_example(c, &cur_ex, f);
}

static void
conv_failed(struct sq_conv *c)
{
	if (sq_errkind(c) == SQ_EEMIT)
		write_failed(outname);
	if (sq_errkind(c) == SQ_ENOMEM)
		decode_oom();
	data_error("%s", sq_strerror(c));
}

/*
 * Records longer than BIG_RECORD: their int64 lists are not decoded
 * whole (8 bytes a token) but checked as they are read, and only the
 * values the converter reads are kept (sq_input_need()); the lists that
 * a row copies whole (pad mode's other features, the pre-packed LM
 * converters) are copied from the record when the row is encoded.  So
 * such a record costs about its own size in memory, and its row (if it
 * is as big) about as much again.
 */

static int64_t *bigv[2 * SQ_MAX_FEATS + 8];
static long electra_max;	/* --max-seq-length */
static int64_t electra_cls, electra_sep;	/* the ids of [CLS] and [SEP] */
static int electra_named;	/* they come from a vocabulary (-v) */

/*
 * [CLS] and [SEP] never come out of a tokenizer's text (BERT's splits
 * "[SEP]" into four pieces), so an id given as one of them that a
 * sentence holds is a token of the text: an id off by one, or of
 * another vocabulary.  A fault, as ELECTRA's examples would then hold a
 * word where the model reads a separator.
 */
static void
electra_check(const int64_t *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == electra_cls || ids[i] == electra_sep)
			data_error("id %lld, given as %s, is in a sentence, where "
			    "[CLS] and [SEP] never are: a token of the text "
			    "(an id off by one?)%s", (long long)ids[i],
			    ids[i] == electra_cls ? "[CLS] (--cls-id)" :
			    "[SEP] (--sep-id)", electra_named ? "" :
			    "; -v vocab.txt takes both by name");
}

/* Decode a big record with its long int64 lists left in it. */
static void
decode_lazy(const uint8_t *p, size_t n)
{
	int rc;

	cur_ex.lazy_min = LAZY_MIN;
	rc = ex_decode(&cur_ex, p, n, EX_TYPE_EXAMPLE);
	cur_ex.lazy_min = 0;
	if (rc == -1) {
		if (errno == ENOMEM)
			decode_oom();
		data_error("%s", ex_strerror(&cur_ex));
	}
}

/* The first 'keep' values of a list left in the record, into bigv[i]. */
static int64_t *
take_values(size_t i, const struct ex_feature *ft, uint64_t keep)
{
	struct ex_int64_iter it;
	uint64_t got;
	size_t k;

	free(bigv[i]);
	if ((bigv[i] = malloc((keep ? keep : 1) * sizeof(int64_t))) == NULL)
		decode_oom();
	ex_int64_open_feature(&it, ft);
	for (got = 0; got < keep; got += k)
		k = ex_int64_next(&it, bigv[i] + got, keep - got);
	return bigv[i];
}

static int
fetch_big(const struct sq_conv *c, const uint8_t *p, size_t n,
    struct sq_feat *f)
{
	const struct ex_feature *ft;
	struct ex_int64_iter it;
	int64_t part[4096];
	uint64_t keep, got;
	size_t i, j, k;

	decode_lazy(p, n);
	sq_fetch_example(c, &cur_ex, f);
	switch (sq_resolved(c)) {
	case SQ_PREPACKED_LM: case SQ_PREPACKED_PREFIXLM:
		/* The row is the record's lists: emit_prepacked_big(). */
		big_prepacked = 1;
		return 1;
	default:
		break;
	}
	for (i = 0; i < sq_ninputs(c); i++) {
		ft = ex_get(&cur_ex, sq_input_name(c, i));
		if (ft == NULL || ft->lazy == NULL || ft->kind != EX_INT64)
			continue;
		keep = sq_input_need(c, i);
		if (keep > ft->n)
			keep = ft->n;
		/* Validation looks for the first value that is not an int32. */
		f[i].small = SQ_CHECKED;
		f[i].bad = SIZE_MAX;
		ex_int64_open_feature(&it, ft);
		for (got = 0; f[i].bad == SIZE_MAX &&
		    (k = ex_int64_next(&it, part, 4096)) > 0; got += k)
			for (j = 0; j < k; j++)
				if (part[j] < INT32_MIN || part[j] > INT32_MAX) {
					f[i].bad = got + j;
					f[i].badv = part[j];
					break;
				}
		f[i].v = take_values(i, ft, keep);
	}
	return 1;
}

static void
show_progress(const struct rec_reader *r)
{
	if (progress_due())
		progress("%s: %ju records, %.1f MB", cur_file,
		    (uintmax_t)rec_index(r), (double)rec_position(r) / 1e6);
}

/*
 * Open the records of an input: under --part (pf) its bytes of the
 * part, read as pf says.  Returns NULL when the file cannot be opened
 * (after a message); *fdp gets its descriptor.
 */
static struct rec_reader *
open_input_records(const char *path, enum rec_comp comp,
    const struct part_file *pf, int *fdp)
{
	struct rec_reader *r;

	if ((*fdp = open_input(path)) == -1)
		return NULL;
	cur_file = input_name(path);
	if ((r = rec_reader_open(*fdp, pf != NULL ? pf->comp : comp, 0,
	    max_len)) == NULL)
		die_errno("%s", cur_file);
	if (pf != NULL && pf->comp == REC_NONE &&
	    rec_reader_range(r, pf->from, pf->to - pf->from) == -1)
		die_errno("%s", cur_file);
	return r;
}

/* Read one input through the converter.  Returns 0, or 1 if the input could not be read. */
static int
run_seqio(struct sq_conv *c, const char *path, enum rec_comp comp,
    const struct part_file *pf)
{
	struct rec_reader *r;
	struct sq_feat f[2 * SQ_MAX_FEATS + 8];
	const uint8_t *p;
	size_t n;
	int fd, rv, got, pushed;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((r = open_input_records(path, comp, pf, &fd)) == NULL)
		return 1;
	while ((rv = rec_read(r, &p, &n)) == 1) {
		cur_record = rec_index(r) - 1;
		cur_offset = rec_offset(r);
		show_progress(r);
		if (sq_resolved(c) == SQ_PASSTHROUGH) {
			put_record(p, n);
			(void)sq_push(c, f);	/* counts the record */
			continue;
		}
		/* The end of a document (recpipe(5)): seqio has no documents. */
		if (n == 0 || (n == 2 && p[0] == 0x0a && p[1] == 0x00))
			continue;
		if ((got = sq_push_bytes(c, p, n)) == 1)
			continue;
		if (got == -1)
			conv_failed(c);
		got = n > BIG_RECORD ? fetch_big(c, p, n, f) :
		    sq_resolved(c) == SQ_PAD ? 0 : sq_fetch_canonical(c, p, n, f);
		if (got == -1)
			decode_oom();
		if (got == 0)
			fetch(c, p, n, f);
		pushed = sq_push(c, f);
		big_prepacked = 0;
		if (pushed == -1)
			conv_failed(c);
	}
	if (rv == -1) {
		end_at_fault();
		cur_record = rec_index(r);
		die("%s: record %ju at offset %ju: %s", cur_file,
		    (uintmax_t)rec_index(r), (uintmax_t)rec_offset(r),
		    rec_strerror(r));
	}
	progress_done();
	rec_reader_free(r);
	if (fd != 0)
		close(fd);
	return 0;
}

static int
run_electra(struct sq_electra *e, const char *feature, const char *path,
    enum rec_comp comp, const struct part_file *pf)
{
	const struct ex_feature *ft;
	const int64_t *ids;
	struct rec_reader *r;
	const uint8_t *p;
	size_t n;
	long k;
	int fd, rv;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((r = open_input_records(path, comp, pf, &fd)) == NULL)
		return 1;
	while ((rv = rec_read(r, &p, &n)) == 1) {
		cur_record = rec_index(r) - 1;
		cur_offset = rec_offset(r);
		show_progress(r);
		if (n > BIG_RECORD)
			decode_lazy(p, n);
		else if (ex_decode(&cur_ex, p, n, EX_TYPE_EXAMPLE) == -1) {
			if (errno == ENOMEM)
				decode_oom();
			data_error("%s", ex_strerror(&cur_ex));
		}
		ft = ex_get(&cur_ex, feature);
		if (ft != NULL && ft->kind == EX_INT64)
			k = (long)ft->n;
		else if (ft != NULL && ft->kind == EX_NONE)
			k = 0;
		else if (ft == NULL && cur_ex.nfeat == 0)
			k = 0;		/* an empty Example is a blank line */
		else
			data_error("no int64 feature '%s'", feature);
		/* Electra keeps at most max_len tokens of a sentence. */
		if (k > 0 && ft->lazy != NULL)
			ids = take_values(0, ft, ft->n < (size_t)electra_max ?
			    ft->n : (size_t)electra_max);
		else
			ids = k ? ft->i64 : NULL;
		electra_check(ids, k < electra_max ? (size_t)k :
		    (size_t)electra_max);
		if (sq_electra_push(e, ids, (size_t)k) == -1)
			write_failed(outname);
	}
	if (rv == -1) {
		end_at_fault();
		die("%s: record %ju at offset %ju: %s", cur_file,
		    (uintmax_t)rec_index(r), (uintmax_t)rec_offset(r),
		    rec_strerror(r));
	}
	/* Electra ends a document at the end of each file. */
	if (sq_electra_flush(e) == -1)
		write_failed(outname);
	progress_done();
	rec_reader_free(r);
	if (fd != 0)
		close(fd);
	return 0;
}

/* --stats, every converter: what came in, what went out, what was dropped. */
static void
print_tokens(uint64_t in, uint64_t out, const char *how)
{
	fprintf(stderr, "%s: tokens in %ju, tokens out %ju, tokens dropped %ju "
	    "(%.2f%%, %s)\n", progname, (uintmax_t)in, (uintmax_t)out,
	    (uintmax_t)(in - out), in ? 100.0 * (double)(in - out) /
	    (double)in : 0.0, how);
}

static void
print_stats(const struct sq_conv *c)
{
	struct sq_stats st;
	uint64_t in = 0, out = 0;
	size_t k, ntok = 0;

	sq_get_stats(c, &st);
	fprintf(stderr, "%s: examples in %ju, rows out %ju, packing efficiency "
	    "%.4f, tokens trimmed %ju, zeros dropped %ju\n", progname,
	    (uintmax_t)st.records, (uintmax_t)st.rows, sq_efficiency(&st),
	    (uintmax_t)st.trimmed, (uintmax_t)st.dropped);
	for (k = 0; k < st.nkeys; k++) {
		if (!st.is_token[k])
			continue;
		fprintf(stderr, "%s: %s: length %ld, tokens %ju, non-pad share "
		    "%.4f\n", progname, st.key[k], st.len[k],
		    (uintmax_t)st.tokens[k], st.rows ? (double)st.tokens[k] /
		    ((double)st.rows * (double)st.len[k]) : 0.0);
		in += st.tokens_in[k];
		out += st.tokens[k];
		ntok++;
	}
	if (ntok > 0)
		print_tokens(in, out, st.dropped ? "trimmed to the lengths, and "
		    "zeros dropped as seqio's packing drops them" :
		    "trimmed to the lengths");
}

static void
parse_args(int argc, char **argv, struct opts *o, int *optind_out)
{
	const char *conv = NULL, *strategy = NULL;
	int ch, k, window_set = 0;

	memset(o, 0, sizeof *o);
	sq_config_init(&o->cfg);
	o->feature = "targets";
	o->seed = DEFAULT_SEED;
	o->comp = REC_AUTO;
	o->part_n = 1;
	while ((ch = getopt_args(argc, argv, "C:f:hl:o:qs:v:V", longopts)) != -1) {
		switch (ch) {
		case 'C':
			conv = optarg;
			break;
		case 'f':
			o->feature = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		case 'l':
			o->lengths = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'q':
			verbosity = 0;
			break;
		case 's':
			o->seed = (uint64_t)num_arg("-s", optarg, 0, INT64_MAX);
			break;
		case 'V':
			print_version(NULL);
		case OPT_BOS:
			o->cfg.bos_id = num_arg("--bos-id", optarg, INT32_MIN, INT32_MAX);
			break;
		case OPT_CLS:
			o->cls_arg = optarg;
			break;
		case 'v':
			o->vocab = optarg;
			break;
		case OPT_COMPRESSION:
			if ((k = rec_parse_comp(optarg)) == -1)
				usage_error("--compression: unknown type '%s'", optarg);
			o->comp = (enum rec_comp)k;
			break;
		case OPT_CUSTOM:
			o->cfg.custom_ops = 1;
			break;
		case OPT_KEEP_PARTIAL:
			keep_partial = 1;
			break;
		case OPT_MASK:
			o->cfg.mask_id = num_arg("--mask-id", optarg, INT32_MIN, INT32_MAX);
			o->cfg.has_mask_id = 1;
			break;
		case OPT_MAXREC:
			max_len = max_record_arg(optarg);
			break;
		case OPT_PART:
			part_arg(optarg, &o->part_k, &o->part_n);
			break;
		case OPT_MAXLEN:
			o->maxlen = (long)num_arg("--max-seq-length", optarg, 5, SQ_MAX_LENGTH);
			break;
		case OPT_NOCHECK:
			o->cfg.length_check = 0;
			break;
		case OPT_NOLOSS:
			o->cfg.loss_on_targets_only = 0;
			break;
		case OPT_NOPACK:
			o->cfg.pack = 0;
			break;
		case OPT_PASS:
			o->pass = optarg;
			break;
		case OPT_PROGRESS:
			progress_enabled = 1;
			break;
		case OPT_NO_PROGRESS:
			progress_enabled = 0;
			break;
		case OPT_SEP:
			o->sep_arg = optarg;
			break;
		case OPT_STATS:
			o->stats = 1;
			break;
		case OPT_STRATEGY:
			strategy = optarg;
			break;
		case OPT_WINDOW:
			o->cfg.window = (size_t)num_arg("--window", optarg, 1, 1 << 20);
			window_set = 1;
			break;
		default:
			usage(stderr, 2);
		}
	}
	*optind_out = optind;
	if (conv == NULL)
		usage_error("-C: a converter is required");
	if (strcmp(conv, "electra") == 0) {
		o->electra = 1;
		if (!o->maxlen)
			usage_error("-C electra needs --max-seq-length");
		if (o->vocab == NULL && (o->cls_arg == NULL || o->sep_arg == NULL))
			usage_error("-C electra needs the vocabulary (-v vocab.txt) "
			    "or --cls-id and --sep-id");
		special_ids(o);
		if (o->lengths || o->pass || strategy || window_set)
			usage_error("-C electra takes no -l, --passthrough, "
			    "--strategy or --window");
		return;
	}
	if (o->vocab != NULL || o->cls_arg != NULL || o->sep_arg != NULL)
		usage_error("-v, --cls-id and --sep-id apply to -C electra");
	if ((k = sq_kind_parse(conv)) == -1) {
		const char *names[SQ_PAD + 2], *near;
		int i;

		for (i = 0; i <= SQ_PAD; i++)
			names[i] = sq_kind_name((enum sq_kind)i);
		names[i] = "electra";
		if ((near = closest_name(conv, names, SQ_PAD + 2)) != NULL)
			usage_error("-C: unknown converter '%s'; did you mean "
			    "'%s'?", conv, near);
		usage_error("-C: unknown converter '%s'", conv);
	}
	o->cfg.kind = (enum sq_kind)k;
	if (o->lengths)
		parse_lengths(o->lengths, &o->cfg);
	else if (k != SQ_PASSTHROUGH && k != SQ_PREPACKED_LM &&
	    k != SQ_PREPACKED_PREFIXLM)
		usage_error("-C %s needs -l feature=length[,...]", conv);
	if (o->pass)
		parse_pass(o->pass, &o->cfg);
	if (strategy != NULL) {
		if (strcmp(strategy, "seqio") == 0)
			o->cfg.strategy = SQ_SEQIO;
		else if (strcmp(strategy, "first-fit") == 0)
			o->cfg.strategy = SQ_FIRST_FIT;
		else if (strcmp(strategy, "best-fit") == 0)
			o->cfg.strategy = SQ_BEST_FIT;
		else
			usage_error("--strategy: unknown strategy '%s'", strategy);
	}
	if (o->cfg.strategy != SQ_SEQIO && o->cfg.custom_ops)
		usage_error("--custom-ops is seqio's own path: it takes no --strategy");
	if (window_set && o->cfg.strategy == SQ_SEQIO)
		usage_error("--window needs --strategy first-fit or best-fit");
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct sq_conv *c = NULL, *cerr = NULL;
	struct sq_electra *e = NULL;
	struct part_file *parts = NULL;
	size_t rsv, k;
	int i, first, rval = 0;

	setprogname(argv[0]);
	parse_args(argc, argv, &o, &first);
	argc -= first;
	argv += first;

	if (!o.electra) {
		o.cfg.emit = o.cfg.kind == SQ_PAD ? emit_padded : emit_row;
		o.cfg.emit_bytes = emit_brow;
		if ((c = sq_new(&o.cfg, &cerr)) == NULL) {
			if (cerr == NULL)
				die_errno("setting up");
			die("%s", sq_strerror(cerr));
		}
		the_conv = c;
		fault_conv = c;
	}
	/* About an encoded row of every length at 10 bytes a value, twice. */
	rsv = (size_t)(o.electra ? o.maxlen : 0);
	for (k = 0; k < o.cfg.nlen; k++)
		rsv += (size_t)o.cfg.len_val[k];
	oom_reserve = malloc(64 * rsv + (1u << 20));

	if (outpath != NULL) {
		out_form(outpath, WRITES_RECORDS, NULL);
		out_check(outpath);
	}
	/* A part is planned from every operand's size before any output. */
	if (o.part_n > 1)
		parts = part_files(argv, argc, 1, o.comp, o.part_k, o.part_n);
	output_open(&outp, outpath, WRITES_RECORDS, NULL);
	writer = outp.w;
	outname = outp.name;
	ex_init(&cur_ex);

	writer_start();
	electra_max = o.maxlen;
	electra_cls = o.cls;
	electra_sep = o.sep;
	electra_named = o.vocab != NULL;
	if (o.electra && (e = sq_electra_new(o.maxlen, o.cls, o.sep, o.seed,
	    emit_row, NULL)) == NULL)
		die_errno("setting up");
	electra = e;

	if (argc == 0) {
		static char dash[] = "-";
		static char *stdin_only[] = { dash, NULL };

		argv = stdin_only;
		argc = 1;
	}
	for (i = 0; i < argc; i++) {
		const struct part_file *pf = parts != NULL ? &parts[i] : NULL;

		rval |= e ? run_electra(e, o.feature, argv[i], o.comp, pf) :
		    run_seqio(c, argv[i], o.comp, pf);
	}
	free(parts);
	if (c != NULL && sq_finish(c) == -1)
		conv_failed(c);
	writer_drain();
	writer = NULL;
	/* All-or-nothing unless --keep-partial. */
	output_close(&outp, rval == 0);
	if (o.stats && c != NULL)
		print_stats(c);
	if (o.stats && e != NULL) {
		uint64_t in, out;

		fprintf(stderr, "%s: examples out %ju\n", progname,
		    (uintmax_t)sq_electra_rows(e));
		sq_electra_tokens(e, &in, &out);
		print_tokens(in, out, "cut at --max-seq-length, as Electra cuts");
	}
	sq_free(c);
	sq_electra_free(e);
	ex_free(&cur_ex);
	free(rowfeat);
	free(oom_reserve);
	rp_buf_free(&outbuf);
	close_stdout();
	return rval;
}
