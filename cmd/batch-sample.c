/*
 * batch-sample: fairseq's and Open-NLLB's data path outside the
 * trainer.  "batches" samples across language pairs, orders, filters,
 * batches, shuffles and shards mmap-index datasets exactly as
 * fairseq's SampledMultiDataset, batch_by_size and EpochBatchIterator
 * do, and writes every batch (optionally collated); "by-size" and
 * "collate" run the two kernels on their own.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "batchio.h"
#include "batchsrc.h"
#include "buf.h"
#include "common.h"
#include "io.h"
#include "example.h"
#include "exjson.h"
#include "fairseq_dict.h"
#include "loader.h"
#include "mmidx.h"
#include "record.h"

static const char usage_text[] =
"usage: batch-sample batches [-q] [--collate] [--decoder-langtok]\n"
"                            [--grouped-shuffling] [--json]\n"
"                            [--lang-tok-replacing-bos-eos] [--no-input-feeding]\n"
"                            [--no-shuffle] [--progress | --no-progress]\n"
"                            [--raw-ids] [--rebuild-batches]\n"
"                            [--skip-remainder-batch]\n"
"                            [--stats] [-o file] [-p [key=]src[,tgt]] [-s seed]\n"
"                            [--batch-size n]\n"
"                            [--dict file | --fixed-dictionary file]\n"
"                            [--encoder-langtok src|tgt] [--eos n] [--epoch n]\n"
"                            [--epochs n] [--fairseq-compat 0.12|main]\n"
"                            [--lang-dict file] [--lang-pairs list]\n"
"                            [--lang-tok-style multilingual|mbart]\n"
"                            [--langs list] [--left-pad-source bool]\n"
"                            [--left-pad-target bool] [--max-source-positions n]\n"
"                            [--max-target-positions n] [--max-tokens n]\n"
"                            [--order-seed seed+epoch|seed]\n"
"                            [--output-format json|ids|records] [--pad n]\n"
"                            [--pad-to-multiple n]\n"
"                            [--required-batch-size-multiple n]\n"
"                            [--sampling-method concat|temperature|uniform]\n"
"                            [--sampling-seed n] [--sampling-temperature t]\n"
"                            [--sampling-weights key=w,...] [--shard k/n]\n"
"                            [--source-dict file] [--split name]\n"
"                            [--target-dict file]\n"
"                            [--task translation_multi_simple_epoch|translation]\n"
"                            [--virtual-data-size n]\n"
"                            [--virtual-epoch-size n] [data[:data ...]]\n"
"       batch-sample by-size [-q] [-o file] [--batch-size n]\n"
"                            [--fairseq-compat 0.12|main] [--max-tokens n]\n"
"                            [--required-batch-size-multiple n] [file ...]\n"
"       batch-sample collate [-q] [--no-input-feeding] [-o file] [--eos n]\n"
"                            [--left-pad-source bool] [--left-pad-target bool]\n"
"                            [--pad n] [--pad-to-multiple n] [file ...]\n"
"       batch-sample loader [-q] [--progress | --no-progress] [--stats]\n"
"                           [-o file] [-s seed] [--limit n]\n"
"                           [--max-record-size n]\n"
"                           [--output-format json|records] --config file\n"
"       batch-sample -h | -V\n"
"\n"
"  --batch-size N, --max-sentences N  at most N sentences per batch (0: no limit)\n"
"  --collate                add the collated tensors to each batch\n"
"  --config FILE            loader: the loader configuration\n"
"  --decoder-langtok        target language token before every target\n"
"  --dict FILE              the dictionary of the language tokens\n"
"  --encoder-langtok src|tgt  language token before every source\n"
"  --eos N                  end-of-sentence id (default 2)\n"
"  --epoch N                the first epoch (default 1)\n"
"  --epochs N               how many epochs to write (default 1)\n"
"  --fairseq-compat V       which fairseq's last batch: 0.12 (default) or main\n"
"  --fixed-dictionary FILE  --dict, by fairseq's name\n"
"  --grouped-shuffling      shuffle groups of batches, one per shard\n"
"  -h, --help               print this help\n"
"  --json                   write --stats as JSON\n"
"  --lang-dict FILE         the language list, one a line, in id order\n"
"  --lang-pairs LIST        src-tgt pairs to find in the data directories\n"
"  --lang-tok-replacing-bos-eos  language tokens replace EOS and BOS\n"
"  --lang-tok-style S       multilingual (default) or mbart\n"
"  --langs LIST             the language list, comma-separated\n"
"  --left-pad-source BOOL   pad sources on the left (default True)\n"
"  --left-pad-target BOOL   pad targets on the left (default False)\n"
"  --limit N                loader: stop after N batches\n"
"  --max-record-size N      loader: largest payload in a compressed file\n"
"  --max-source-positions N, --max-target-positions N  drop longer sentences\n"
"  --max-tokens N           at most N padded tokens per batch\n"
"  --no-input-feeding       leave prev_output_tokens out\n"
"  --no-shuffle             keep the sorted order of the batches\n"
"  -o, --output FILE        write to FILE (atomically)\n"
"  --order-seed S           seed+epoch (default) or seed\n"
"  --output-format FMT      json, ids or records\n"
"  -p, --pair [KEY=]SRC[,TGT]  a pair of datasets; repeat for more\n"
"  --pad N                  padding id (default 1)\n"
"  --pad-to-multiple N      round collated widths up to a multiple of N\n"
"  --progress, --no-progress  progress on stderr (default: when a terminal)\n"
"  -q, --quiet              no progress\n"
"  --raw-ids                take fairseq ids fairseq-preprocess never writes\n"
"  --rebuild-batches        order and batch again every epoch\n"
"  --required-batch-size-multiple N  batch sizes multiples of N (default 8)\n"
"  -s, --seed SEED          fairseq's --seed (default 1)\n"
"  --sampling-method M      concat (default), temperature or uniform\n"
"  --sampling-seed N        seed of the sampling draws (default 2)\n"
"  --sampling-temperature T  default 1.5\n"
"  --sampling-weights K=W,...  sampling ratios by pair\n"
"  --shard K/N              what worker K of N gets (default 0/1)\n"
"  --skip-remainder-batch   drop the last batch of each shard\n"
"  --source-dict FILE       the dictionary of every source side\n"
"  --split NAME             the split --lang-pairs finds (default train)\n"
"  --stats                  statistics of each epoch on stderr\n"
"  --target-dict FILE       the dictionary of every target side\n"
"  --task NAME              fairseq main's rules for the task\n"
"  -V, --version            print the version\n"
"  --virtual-data-size N    sentences sampled per epoch\n"
"  --virtual-epoch-size N   serve the data in virtual epochs of N sentences\n"
"See batch-sample(1).\n";

static _Noreturn void
usage(FILE *fp, int status)
{
	print_usage(fp, usage_text, status);
}

/*
 * The subcommands.  Each names the options it takes; a later one (an
 * nnmaker-style "loader") adds a row here and its options to the list.
 */
enum { CMD_BATCHES, CMD_BY_SIZE, CMD_COLLATE, CMD_LOADER, NCMD };

enum {
	OPT_COLLATE = 256, OPT_DECLT, OPT_GROUPED, OPT_JSON, OPT_NOFEED,
	OPT_NOSHUF, OPT_PROGRESS, OPT_NOPROGRESS, OPT_REBUILD, OPT_SKIPREM,
	OPT_STATS, OPT_BSZ, OPT_DICT, OPT_ENCLT, OPT_EOS, OPT_EPOCH,
	OPT_EPOCHS, OPT_COMPAT, OPT_LANGPAIRS, OPT_LPSRC, OPT_LPTGT,
	OPT_MAXSRC, OPT_MAXTGT, OPT_MAXTOK, OPT_ORDERSEED, OPT_OUTFMT,
	OPT_PAD, OPT_PADMULT, OPT_MULT, OPT_METHOD, OPT_SSEED, OPT_TEMP,
	OPT_WEIGHTS, OPT_SHARD, OPT_SPLIT, OPT_VSIZE, OPT_SRCDICT, OPT_TGTDICT,
	OPT_LANGS, OPT_LANGDICT, OPT_TOKSTYLE, OPT_REPLACING, OPT_VEPOCH,
	OPT_RAWIDS, OPT_TASK, OPT_CONFIG, OPT_LIMIT, OPT_MAXREC
};

static const struct option longopts[] = {
	{ "help",			no_argument,		NULL, 'h' },
	{ "version",			no_argument,		NULL, 'V' },
	{ "quiet",			no_argument,		NULL, 'q' },
	{ "output",			required_argument,	NULL, 'o' },
	{ "pair",			required_argument,	NULL, 'p' },
	{ "seed",			required_argument,	NULL, 's' },
	{ "collate",			no_argument,		NULL, OPT_COLLATE },
	{ "decoder-langtok",		no_argument,		NULL, OPT_DECLT },
	{ "grouped-shuffling",		no_argument,		NULL, OPT_GROUPED },
	{ "json",			no_argument,		NULL, OPT_JSON },
	{ "no-input-feeding",		no_argument,		NULL, OPT_NOFEED },
	{ "no-shuffle",			no_argument,		NULL, OPT_NOSHUF },
	{ "progress",			no_argument,		NULL, OPT_PROGRESS },
	{ "no-progress",		no_argument,		NULL, OPT_NOPROGRESS },
	{ "rebuild-batches",		no_argument,		NULL, OPT_REBUILD },
	{ "skip-remainder-batch",	no_argument,		NULL, OPT_SKIPREM },
	{ "stats",			no_argument,		NULL, OPT_STATS },
	{ "batch-size",			required_argument,	NULL, OPT_BSZ },
	{ "max-sentences",		required_argument,	NULL, OPT_BSZ },
	{ "dict",			required_argument,	NULL, OPT_DICT },
	{ "source-dict",		required_argument,	NULL, OPT_SRCDICT },
	{ "target-dict",		required_argument,	NULL, OPT_TGTDICT },
	{ "langs",			required_argument,	NULL, OPT_LANGS },
	{ "lang-dict",			required_argument,	NULL, OPT_LANGDICT },
	{ "lang-tok-style",		required_argument,	NULL, OPT_TOKSTYLE },
	{ "lang-tok-replacing-bos-eos",	no_argument,		NULL, OPT_REPLACING },
	{ "encoder-langtok",		required_argument,	NULL, OPT_ENCLT },
	{ "eos",			required_argument,	NULL, OPT_EOS },
	{ "epoch",			required_argument,	NULL, OPT_EPOCH },
	{ "epochs",			required_argument,	NULL, OPT_EPOCHS },
	{ "fairseq-compat",		required_argument,	NULL, OPT_COMPAT },
	{ "lang-pairs",			required_argument,	NULL, OPT_LANGPAIRS },
	{ "left-pad-source",		required_argument,	NULL, OPT_LPSRC },
	{ "left-pad-target",		required_argument,	NULL, OPT_LPTGT },
	{ "max-source-positions",	required_argument,	NULL, OPT_MAXSRC },
	{ "max-target-positions",	required_argument,	NULL, OPT_MAXTGT },
	{ "max-tokens",			required_argument,	NULL, OPT_MAXTOK },
	{ "order-seed",			required_argument,	NULL, OPT_ORDERSEED },
	{ "output-format",		required_argument,	NULL, OPT_OUTFMT },
	{ "pad",			required_argument,	NULL, OPT_PAD },
	{ "pad-to-multiple",		required_argument,	NULL, OPT_PADMULT },
	{ "required-batch-size-multiple", required_argument,	NULL, OPT_MULT },
	{ "sampling-method",		required_argument,	NULL, OPT_METHOD },
	{ "sampling-seed",		required_argument,	NULL, OPT_SSEED },
	{ "sampling-temperature",	required_argument,	NULL, OPT_TEMP },
	{ "sampling-weights",		required_argument,	NULL, OPT_WEIGHTS },
	{ "shard",			required_argument,	NULL, OPT_SHARD },
	{ "split",			required_argument,	NULL, OPT_SPLIT },
	{ "virtual-data-size",		required_argument,	NULL, OPT_VSIZE },
	{ "virtual-epoch-size",		required_argument,	NULL, OPT_VEPOCH },
	{ "raw-ids",			no_argument,		NULL, OPT_RAWIDS },
	{ "task",			required_argument,	NULL, OPT_TASK },
	{ "fixed-dictionary",		required_argument,	NULL, OPT_DICT },
	{ "config",			required_argument,	NULL, OPT_CONFIG },
	{ "limit",			required_argument,	NULL, OPT_LIMIT },
	{ "max-record-size",		required_argument,	NULL, OPT_MAXREC },
	{ NULL, 0, NULL, 0 }
};

/* The subcommands and the options each takes. */
static const struct subcmd cmds[NCMD] = {
	[CMD_BATCHES] = { "batches", "quiet output pair seed collate "
	    "decoder-langtok grouped-shuffling json no-input-feeding "
	    "no-shuffle progress no-progress rebuild-batches "
	    "skip-remainder-batch stats batch-size dict encoder-langtok eos "
	    "epoch epochs fairseq-compat lang-pairs left-pad-source "
	    "left-pad-target max-source-positions max-target-positions "
	    "max-tokens order-seed output-format pad pad-to-multiple "
	    "required-batch-size-multiple sampling-method sampling-seed "
	    "sampling-temperature sampling-weights shard split "
	    "virtual-data-size source-dict target-dict langs lang-dict "
	    "lang-tok-style lang-tok-replacing-bos-eos virtual-epoch-size "
	    "raw-ids task" },
	[CMD_BY_SIZE] = { "by-size", "quiet output batch-size fairseq-compat "
	    "max-tokens required-batch-size-multiple" },
	[CMD_COLLATE] = { "collate", "quiet output no-input-feeding eos "
	    "left-pad-source left-pad-target pad pad-to-multiple" },
	[CMD_LOADER] = { "loader", "quiet output seed output-format progress "
	    "no-progress stats config limit max-record-size" },
};

enum { OUT_JSON, OUT_IDS, OUT_RECORDS };
enum { SAMPLE_CONCAT, SAMPLE_TEMPERATURE, SAMPLE_UNIFORM };

/* A pair named with -p: [KEY=]SRC[,TGT]. */
struct pairarg {
	char		*key;
	char		*src;
	char		*tgt;		/* NULL: monolingual */
};

static struct {
	int		 cmd;
	const char	*out;
	struct pairarg	*pargs;
	size_t		 npargs;
	const char	*langpairs;
	const char	*split;
	const char	*dict;		/* --dict: both sides */
	const char	*srcdict, *tgtdict;
	const char	*langs;		/* --langs */
	const char	*langdict;	/* --lang-dict */
	int		 mbart;		/* --lang-tok-style mbart */
	int		 replacing;	/* --lang-tok-replacing-bos-eos */
	int		 enc_langtok;	/* 0 none, 1 src, 2 tgt */
	int		 dec_langtok;
	uint64_t	 seed;
	uint64_t	 epoch;
	uint64_t	 epochs;
	int		 compat_main;
	uint64_t	 max_tokens;	/* 0: unlimited */
	uint64_t	 max_sentences;	/* 0: unlimited */
	uint64_t	 mult;
	uint64_t	 max_src, max_tgt;
	int		 order_seed_epoch;
	int		 method;
	double		 temperature;
	char		*weights;
	uint64_t	 vsize;		/* 0: default */
	uint64_t	 vepoch;	/* --virtual-epoch-size, 0: none */
	uint64_t	 sampling_seed;
	int		 rebuild;
	int		 shuffle;
	int		 grouped;
	int		 skip_remainder;
	uint64_t	 shard, nshards;
	int		 outfmt;
	int		 collate;
	int		 left_pad_source, left_pad_target;
	uint64_t	 pad_to_multiple;
	int		 input_feeding;
	int64_t		 pad, eos;
	int		 raw_ids;	/* --raw-ids: no fairseq-preprocess rules */
	int		 stats;
	int		 json;
	const char	*config;	/* loader: --config */
	uint64_t	 limit;		/* loader: --limit */
	uint64_t	 maxrec;	/* loader: --max-record-size */
} o;

/* fairseq's eval_bool: True/False, 1/0 (and true/false, yes/no). */
static int
bool_arg(const char *s)
{
	if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 ||
	    strcmp(s, "1") == 0 || strcmp(s, "yes") == 0)
		return 1;
	if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 ||
	    strcmp(s, "0") == 0 || strcmp(s, "no") == 0)
		return 0;
	usage_error("%s: expected True or False, not '%s'", option_name, s);
}

/* -p [KEY=]SRC[,TGT]: a KEY has no '/' or ','. */
static void
add_pairarg(const char *arg)
{
	struct pairarg *a;
	const char *eq = strchr(arg, '='), *rest = arg;
	char *comma;

	o.pargs = xreallocarray(o.pargs, o.npargs + 1, sizeof *o.pargs);
	a = &o.pargs[o.npargs];
	memset(a, 0, sizeof *a);
	if (eq != NULL && strcspn(arg, "/,") > (size_t)(eq - arg)) {
		if (eq == arg)
			usage_error("-p: empty key in '%s'", arg);
		a->key = xstrdup(arg);
		a->key[eq - arg] = '\0';
		rest = eq + 1;
	} else {
		char k[32];

		snprintf(k, sizeof k, "%zu", o.npargs);
		a->key = xstrdup(k);
	}
	a->src = xstrdup(rest);
	if ((comma = strchr(a->src, ',')) != NULL) {
		*comma = '\0';
		a->tgt = comma + 1;
		if (*a->tgt == '\0' || strchr(a->tgt, ',') != NULL)
			usage_error("-p: expected [KEY=]SRC_PREFIX[,TGT_PREFIX], "
			    "not '%s'", arg);
	}
	if (*a->src == '\0')
		usage_error("-p: empty source prefix in '%s'", arg);
	dataset_prefix(a->src);
	if (a->tgt != NULL)
		dataset_prefix(a->tgt);
	for (size_t i = 0; i < o.npargs; i++)
		if (strcmp(o.pargs[i].key, a->key) == 0)
			usage_error("-p: key '%s' given twice", a->key);
	o.npargs++;
}

/*
 * --lang-pairs SRC-TGT,...: every pair well formed, before any data is
 * looked for (fairseq fails on an empty pair as on a malformed one).
 */
static void
check_langpairs(const char *list)
{
	const char *a = list, *b, *dash;

	if (*list == '\0')
		usage_error("--lang-pairs: empty list");
	for (;; a = b + 1) {
		b = a + strcspn(a, ",");
		dash = memchr(a, '-', (size_t)(b - a));
		if (dash == NULL || dash == a || dash + 1 == b ||
		    memchr(dash + 1, '-', (size_t)(b - dash - 1)) != NULL)
			usage_error("--lang-pairs: expected SRC-TGT, not '%.*s'",
			    (int)(b - a), a);
		if (*b == '\0')
			break;
	}
}

static void
parse_opts(int argc, char **argv)
{
	int ch, compat_given = 0, order_given = 0, task_seed_epoch = -1;

	while ((ch = getopt_args(argc, argv, "hVqo:p:s:", longopts)) != -1) {
		if (ch == 'h')
			usage(stdout, 0);
		if (ch == 'V')
			print_version(NULL);
		if (ch == '?' || ch == ':')
			usage(stderr, 2);
		subcmd_option(cmds, NCMD, (size_t)o.cmd, ch, longopts);
		switch (ch) {
		case 'q':
			verbosity = 0;
			break;
		case 'o':
			/* (loader's out_form() names an empty name itself) */
			if (*optarg == '\0' && o.cmd != CMD_LOADER)
				usage_error("-o: empty file name");
			o.out = optarg;
			break;
		case 'p':
			add_pairarg(optarg);
			break;
		case 's':
			/* the loader's seed is 64-bit, and its messages say -s */
			if (o.cmd == CMD_LOADER)
				o.seed = (uint64_t)num_arg("-s", optarg, 0, INT64_MAX);
			else
				o.seed = num_arg(option_name, optarg, 0, UINT32_MAX);
			break;
		case OPT_CONFIG:
			o.config = optarg;
			break;
		case OPT_LIMIT:
			o.limit = (uint64_t)num_arg("--limit", optarg, 0, INT64_MAX);
			break;
		case OPT_MAXREC:
			o.maxrec = max_record_arg(optarg);
			break;
		case OPT_COLLATE:
			o.collate = 1;
			break;
		case OPT_DECLT:
			o.dec_langtok = 1;
			break;
		case OPT_GROUPED:
			o.grouped = 1;
			break;
		case OPT_JSON:
			o.json = 1;
			break;
		case OPT_NOFEED:
			o.input_feeding = 0;
			break;
		case OPT_NOSHUF:
			o.shuffle = 0;
			break;
		case OPT_PROGRESS:
			progress_enabled = 1;
			break;
		case OPT_NOPROGRESS:
			progress_enabled = 0;
			break;
		case OPT_REBUILD:
			o.rebuild = 1;
			break;
		case OPT_SKIPREM:
			o.skip_remainder = 1;
			break;
		case OPT_STATS:
			o.stats = 1;
			break;
		case OPT_BSZ:
			/* 0: no limit, as fairseq reads it (x > 0 is false) */
			o.max_sentences = num_arg(option_name, optarg, 0, LLONG_MAX);
			break;
		case OPT_DICT:
			o.dict = optarg;
			break;
		case OPT_SRCDICT:
			o.srcdict = optarg;
			break;
		case OPT_TGTDICT:
			o.tgtdict = optarg;
			break;
		case OPT_LANGS:
			if (*optarg == '\0')
				usage_error("--langs: empty list");
			o.langs = optarg;
			break;
		case OPT_LANGDICT:
			o.langdict = optarg;
			break;
		case OPT_TOKSTYLE:
			if (strcmp(optarg, "multilingual") == 0)
				o.mbart = 0;
			else if (strcmp(optarg, "mbart") == 0)
				o.mbart = 1;
			else
				usage_error("--lang-tok-style: expected multilingual "
				    "or mbart, not '%s'", optarg);
			break;
		case OPT_REPLACING:
			o.replacing = 1;
			break;
		case OPT_ENCLT:
			if (strcmp(optarg, "src") == 0)
				o.enc_langtok = 1;
			else if (strcmp(optarg, "tgt") == 0)
				o.enc_langtok = 2;
			else
				usage_error("--encoder-langtok: expected src or "
				    "tgt, not '%s'", optarg);
			break;
		case OPT_EOS:
			o.eos = (int64_t)num_arg(option_name, optarg, 0, LLONG_MAX);
			break;
		case OPT_PAD:
			o.pad = (int64_t)num_arg(option_name, optarg, 0, LLONG_MAX);
			break;
		case OPT_RAWIDS:
			o.raw_ids = 1;
			break;
		case OPT_EPOCH:
			o.epoch = num_arg(option_name, optarg, 1, UINT32_MAX);
			break;
		case OPT_EPOCHS:
			o.epochs = num_arg(option_name, optarg, 1, UINT32_MAX);
			break;
		case OPT_COMPAT:
			if (strcmp(optarg, "main") == 0)
				o.compat_main = 1;
			else if (strcmp(optarg, "0.12") == 0)
				o.compat_main = 0;
			else
				usage_error("--fairseq-compat: expected 0.12 or "
				    "main, not '%s'", optarg);
			compat_given = 1;
			break;
		case OPT_TASK:
			/*
			 * fairseq main's tasks: both drop a last batch that is
			 * not a multiple; translation_multi_simple_epoch
			 * orders with numpy_seed(seed), translation with
			 * seed + epoch.  --fairseq-compat and --order-seed,
			 * wherever they stand, win.
			 */
			if (strcmp(optarg, "translation_multi_simple_epoch") == 0)
				task_seed_epoch = 0;
			else if (strcmp(optarg, "translation") == 0)
				task_seed_epoch = 1;
			else
				usage_error("--task: expected "
				    "translation_multi_simple_epoch or translation, "
				    "not '%s'", optarg);
			break;
		case OPT_LANGPAIRS:
			check_langpairs(optarg);
			o.langpairs = optarg;
			break;
		case OPT_LPSRC:
			o.left_pad_source = bool_arg(optarg);
			break;
		case OPT_LPTGT:
			o.left_pad_target = bool_arg(optarg);
			break;
		case OPT_MAXSRC:
			o.max_src = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		case OPT_MAXTGT:
			o.max_tgt = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		case OPT_MAXTOK:
			o.max_tokens = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		case OPT_ORDERSEED:
			if (strcmp(optarg, "seed+epoch") == 0)
				o.order_seed_epoch = 1;
			else if (strcmp(optarg, "seed") == 0)
				o.order_seed_epoch = 0;
			else
				usage_error("--order-seed: expected seed+epoch or "
				    "seed, not '%s'", optarg);
			order_given = 1;
			break;
		case OPT_OUTFMT:
			/* (the loader writes no ids) */
			if (strcmp(optarg, "json") == 0)
				o.outfmt = OUT_JSON;
			else if (strcmp(optarg, "ids") == 0 && o.cmd != CMD_LOADER)
				o.outfmt = OUT_IDS;
			else if (strcmp(optarg, "records") == 0)
				o.outfmt = OUT_RECORDS;
			else if (o.cmd == CMD_LOADER)
				usage_error("--output-format: expected json or "
				    "records, not '%s'", optarg);
			else
				usage_error("--output-format: expected json, ids "
				    "or records, not '%s'", optarg);
			break;
		case OPT_PADMULT:
			o.pad_to_multiple = num_arg(option_name, optarg, 1, INT32_MAX);
			break;
		case OPT_MULT:
			o.mult = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		case OPT_METHOD:
			if (strcmp(optarg, "concat") == 0)
				o.method = SAMPLE_CONCAT;
			else if (strcmp(optarg, "temperature") == 0)
				o.method = SAMPLE_TEMPERATURE;
			else if (strcmp(optarg, "uniform") == 0)
				o.method = SAMPLE_UNIFORM;
			else
				usage_error("--sampling-method: expected concat, "
				    "temperature or uniform, not '%s'", optarg);
			break;
		case OPT_SSEED:
			o.sampling_seed = num_arg(option_name, optarg, 0, UINT32_MAX);
			break;
		case OPT_TEMP:
			if (parse_real(optarg, &o.temperature) == -1 ||
			    !(o.temperature > 0))
				usage_error("--sampling-temperature: expected a "
				    "positive number, not '%s'", optarg);
			break;
		case OPT_WEIGHTS:
			o.weights = optarg;
			break;
		case OPT_SHARD:
			if (parse_shard(optarg, &o.shard, &o.nshards) == -1 ||
			    o.nshards > UINT32_MAX)
				usage_error("--shard: expected K/N with 0 <= K < N, "
				    "not '%s'", optarg);
			break;
		case OPT_SPLIT:
			if (*optarg == '\0' || strchr(optarg, '/') != NULL)
				usage_error("--split: bad name '%s'", optarg);
			o.split = optarg;
			break;
		case OPT_VSIZE:
			o.vsize = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		case OPT_VEPOCH:
			o.vepoch = num_arg(option_name, optarg, 1, LLONG_MAX);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (task_seed_epoch >= 0) {
		if (!compat_given)
			o.compat_main = 1;
		if (!order_given)
			o.order_seed_epoch = task_seed_epoch;
	}
}

/* ---- datasets ---- */

/*
 * The language pairs (or monolingual datasets), lib/batchsrc.h.  With
 * --lang-pairs the files come from the data directory of the epoch, so
 * they are opened again when it changes.
 */
static struct bsrc_pair *pairs;
static size_t npairs;
static char **datadirs;
static size_t ndatadirs;

static struct mmidx *
open_ds(const char *prefix)
{
	char err[1024];
	struct mmidx *m = mmidx_open(prefix, MMIDX_AUTO, err, sizeof err);

	if (m == NULL)
		die("%s", err);
	return m;
}

/* Add one part: source and target datasets of one file pair. */
static void
add_part(struct bsrc_pair *p, const char *sprefix, const char *tprefix)
{
	char err[1024];
	struct mmidx *s = open_ds(sprefix), *t = NULL;

	if (tprefix != NULL)
		t = open_ds(tprefix);
	if (bsrc_pair_add(p, s, t, err, sizeof err) == -1)
		die("%s", err);
}

static int
file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* fairseq's split_exists(): both PREFIX.idx and PREFIX.bin are there. */
static int
ds_exists(const char *prefix)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s.idx", prefix);
	if (!file_exists(path))
		return 0;
	snprintf(path, sizeof path, "%s.bin", prefix);
	return file_exists(path);
}

/*
 * Open the pair as fairseq's load_lang_dataset() finds it in 'dir':
 * for SPLIT, SPLIT1, SPLIT2 ... while they exist, the files
 * SPLIT.SRC-TGT.{SRC,TGT} or, failing that, SPLIT.TGT-SRC.{SRC,TGT}.
 */
static void
open_langpair(struct bsrc_pair *p, const char *dir)
{
	char split_k[NAME_MAX], stem[PATH_MAX], sp[PATH_MAX], tp[PATH_MAX];

	if (p->dir == dir && p->nparts > 0)
		return;
	bsrc_pair_close(p);
	p->dir = dir;
	for (unsigned k = 0;; k++) {
		if (k == 0)
			snprintf(split_k, sizeof split_k, "%s", o.split);
		else
			snprintf(split_k, sizeof split_k, "%s%u", o.split, k);
		snprintf(stem, sizeof stem, "%s/%s.%s-%s.%s", dir, split_k,
		    p->slang, p->tlang, p->slang);
		if (ds_exists(stem))
			snprintf(stem, sizeof stem, "%s/%s.%s-%s.", dir, split_k,
			    p->slang, p->tlang);
		else {
			snprintf(stem, sizeof stem, "%s/%s.%s-%s.%s", dir,
			    split_k, p->tlang, p->slang, p->slang);
			if (!ds_exists(stem)) {
				if (k > 0)
					break;
				die("%s: no %s.%s-%s.%s.{bin,idx} (nor %s.%s-%s.%s)",
				    dir, o.split, p->slang, p->tlang, p->slang,
				    o.split, p->tlang, p->slang, p->slang);
			}
			snprintf(stem, sizeof stem, "%s/%s.%s-%s.", dir, split_k,
			    p->tlang, p->slang);
		}
		snprintf(sp, sizeof sp, "%s%s", stem, p->slang);
		snprintf(tp, sizeof tp, "%s%s", stem, p->tlang);
		add_part(p, sp, tp);
	}
}

/*
 * Whether dir holds SPLIT*.FWD.*.idx or SPLIT*.REV.*.idx files
 * (bsrc_name_direction()).
 */
static int
dir_has_direction(const char *dir, const char *fwd, const char *rev)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (d == NULL)
		die_errno("%s", dir);
	while ((e = readdir(d)) != NULL)
		found |= bsrc_name_direction(e->d_name, o.split, fwd, rev);
	closedir(d);
	return found != 0;
}

/*
 * Dictionaries, as fairseq's multilingual data manager loads them:
 * each file once, then augment_dictionary(): a language token for
 * every language of the language list, in its order, added with
 * add_symbol() (a token the file has keeps its id, a missing one is
 * appended), and for the mbart style "<mask>" after them.
 */
static struct {
	const char	*path;
	struct fqd	*d;
} *dicts;
static size_t ndicts;
static struct bsrc_langs langlist;	/* the language list */

static struct fqd *
load_dict(const char *path)
{
	char ferr[FQD_ERRMAX];
	struct fqd *d;
	uint8_t *text;
	size_t n;
	int fd;

	for (size_t i = 0; i < ndicts; i++)
		if (strcmp(dicts[i].path, path) == 0)
			return dicts[i].d;
	if ((fd = open(path, O_RDONLY)) == -1)
		die_errno("%s", path);
	text = read_all(fd, &n, path);
	close(fd);
	if ((d = fqd_load(text, n, ferr, sizeof ferr)) == NULL)
		die("%s: %s", path, ferr);
	free(text);
	if (bsrc_dict_augment(d, &langlist, o.mbart) == -1)
		die_errno("%s", path);
	dicts = xreallocarray(dicts, ndicts + 1, sizeof *dicts);
	dicts[ndicts].path = path;
	dicts[ndicts].d = d;
	ndicts++;
	return d;
}

/*
 * The dictionary of one side of a pair whose language is 'lang':
 * --source-dict or --target-dict (--dict gives both), or with
 * --lang-pairs DATA/dict.LANG.txt of the first data directory, as
 * fairseq loads a dictionary per language.  NULL when there is none.
 */
static const char *
dict_path(int target, const char *lang)
{
	static char path[PATH_MAX];
	const char *given = target ? o.tgtdict : o.srcdict;

	if (given != NULL)
		return given;
	if (o.langpairs == NULL || lang == NULL)
		return NULL;
	snprintf(path, sizeof path, "%s/dict.%s.txt", datadirs[0], lang);
	return xstrdup(path);
}

/* The id of lang's token in the source (target = 0) or target dictionary. */
static int64_t
langtok(void *arg, int target, const char *dictlang, const char *lang)
{
	char w[BSRC_LANGTOK_MAX];
	const char *path = dict_path(target, dictlang);
	size_t n;
	int64_t id;

	(void)arg;
	if (path == NULL)
		usage_error("%s needs --dict or --%s-dict%s", target ?
		    "--decoder-langtok" : "--encoder-langtok", target ? "target" :
		    "source", o.langpairs ? "" : " with -p");
	n = bsrc_langtok_word(w, lang, o.mbart);
	if ((id = fqd_find(load_dict(path), w, n)) < 0)
		die("%s: no %s in the dictionary", path, w);
	return id;
}

/*
 * The language list (fairseq's load_langs()): --langs, the lines of
 * --lang-dict, or the languages of the pairs, sorted.
 */
static void
setup_langlist(const char **langs, size_t n, int check)
{
	char err[256];

	if (o.langs != NULL) {
		if (bsrc_langs_list(&langlist, o.langs) == -1)
			die_nomem();
	} else if (o.langdict != NULL) {
		uint8_t *text;
		size_t len;
		int fd;

		if ((fd = open(o.langdict, O_RDONLY)) == -1)
			die_errno("%s", o.langdict);
		text = read_all(fd, &len, o.langdict);
		close(fd);
		if (bsrc_langs_text(&langlist, (const char *)text, len, err,
		    sizeof err) == -1) {
			if (errno == ENOMEM)
				die_nomem();
			die("%s: %s", o.langdict, err);
		}
		free(text);
	} else {
		if (bsrc_langs_sorted(&langlist, langs, n) == -1)
			die_nomem();
		return;
	}
	for (size_t i = 0; check && i < n; i++)
		if (!bsrc_langs_has(&langlist, langs[i]))
			die("%s: language %s of the pairs is not in the list",
			    o.langs ? "--langs" : o.langdict, langs[i]);
}

/* The language of a -p prefix: what follows its last '.' (train.de-en.de -> de). */
static char *
prefix_lang(const char *prefix)
{
	const char *lang = bsrc_prefix_lang(prefix);

	if (lang == NULL)
		die("%s: cannot tell the language from the prefix (want "
		    "NAME.LANG) for a language token", prefix);
	return xstrdup(lang);
}

static void
setup_pairs(int argc, char **argv)
{
	if (o.dict != NULL && (o.srcdict != NULL || o.tgtdict != NULL))
		usage_error("--dict is --source-dict and --target-dict at once: "
		    "give one or the others");
	if (o.langs != NULL && o.langdict != NULL)
		usage_error("--langs and --lang-dict exclude each other");
	if (o.dict != NULL)
		o.srcdict = o.tgtdict = o.dict;
	if (o.langpairs == NULL && o.enc_langtok && o.srcdict == NULL)
		usage_error("--encoder-langtok needs --dict or --source-dict "
		    "with -p");
	if (o.langpairs == NULL && o.dec_langtok && o.tgtdict == NULL)
		usage_error("--decoder-langtok needs --dict or --target-dict "
		    "with -p");
	if (o.replacing && o.collate && o.left_pad_target && o.dec_langtok)
		usage_error("--lang-tok-replacing-bos-eos with --decoder-langtok "
		    "needs --left-pad-target False (fairseq does not implement it)");
	if (o.langpairs != NULL) {
		char *list = xstrdup(o.langpairs), *save = NULL, *tok, *dirs;

		if (o.npargs > 0)
			usage_error("-p and --lang-pairs exclude each other");
		if (argc != 1)
			usage_error("--lang-pairs needs one DATA[:DATA...] operand");
		dirs = xstrdup(argv[0]);
		for (tok = strtok_r(dirs, ":", &save); tok != NULL;
		    tok = strtok_r(NULL, ":", &save)) {
			datadirs = xreallocarray(datadirs, ndatadirs + 1,
			    sizeof *datadirs);
			datadirs[ndatadirs++] = tok;
		}
		if (ndatadirs == 0)
			usage_error("empty DATA operand");
		for (tok = strtok_r(list, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			struct bsrc_pair *p;
			char *dash = strchr(tok, '-'), fwd[PATH_MAX], rev[PATH_MAX];

			if (dash == NULL || dash == tok || dash[1] == '\0' ||
			    strchr(dash + 1, '-') != NULL)
				usage_error("--lang-pairs: expected SRC-TGT, not '%s'",
				    tok);
			pairs = xreallocarray(pairs, npairs + 1, sizeof *pairs);
			p = &pairs[npairs++];
			memset(p, 0, sizeof *p);
			p->key = xstrdup(tok);
			*dash = '\0';
			p->slang = tok;
			p->tlang = dash + 1;
			for (size_t i = 0; i + 1 < npairs; i++)
				if (strcmp(pairs[i].key, p->key) == 0)
					usage_error("--lang-pairs: %s given twice",
					    p->key);
			snprintf(fwd, sizeof fwd, "%s-%s", p->slang, p->tlang);
			snprintf(rev, sizeof rev, "%s-%s", p->tlang, p->slang);
			for (size_t d = 0; d < ndatadirs; d++)
				p->ndirs += dir_has_direction(datadirs[d], fwd, rev);
			if (p->ndirs == 0)
				die("%s: no %s.%s.*.idx (nor %s.%s.*.idx)",
				    argv[0], o.split, fwd, o.split, rev);
		}
	} else {
		if (o.npargs == 0)
			usage_error("no datasets: give -p or --lang-pairs");
		if (argc > 0)
			usage_error("unexpected operand '%s' (datasets are given "
			    "with -p)", argv[0]);
		pairs = xcalloc(o.npargs, sizeof *pairs);
		npairs = o.npargs;
		for (size_t i = 0; i < npairs; i++) {
			struct bsrc_pair *p = &pairs[i];

			p->key = o.pargs[i].key;
			if (o.enc_langtok == 1 || (o.enc_langtok == 2 &&
			    o.pargs[i].tgt == NULL))
				p->slang = prefix_lang(o.pargs[i].src);
			if (o.pargs[i].tgt != NULL && (o.enc_langtok == 2 ||
			    o.dec_langtok))
				p->tlang = prefix_lang(o.pargs[i].tgt);
			if (o.dec_langtok && o.pargs[i].tgt == NULL)
				usage_error("--decoder-langtok: pair %s has no "
				    "target", p->key);
			add_part(p, o.pargs[i].src, o.pargs[i].tgt);
		}
	}
	{
		const char **langs = xreallocarray(NULL, 2 * npairs + 1,
		    sizeof *langs);
		size_t nl = 0;

		for (size_t i = 0; i < npairs; i++) {
			const char *sl, *tl;

			if (o.langpairs != NULL) {
				sl = pairs[i].slang;
				tl = pairs[i].tlang;
			} else {
				sl = bsrc_prefix_lang(o.pargs[i].src);
				tl = bsrc_prefix_lang(o.pargs[i].tgt);
			}
			if (sl != NULL)
				langs[nl++] = sl;
			if (tl != NULL)
				langs[nl++] = tl;
		}
		setup_langlist(langs, nl, o.langpairs != NULL);
		free(langs);
	}
	/* Dictionaries named are read (and checked) whether used or not. */
	if (o.srcdict != NULL)
		load_dict(o.srcdict);
	if (o.tgtdict != NULL)
		load_dict(o.tgtdict);
	for (size_t i = 0; i < npairs; i++)
		bsrc_pair_langtoks(&pairs[i], o.enc_langtok, o.dec_langtok,
		    o.replacing, langtok, NULL);
}

/*
 * The data directory of a --lang-pairs pair for shard epoch e (the
 * epoch, or with virtual epochs the pass count): paths[(e - 1) mod n].
 */
static void
open_epoch(uint64_t epoch)
{
	if (o.langpairs == NULL)
		return;
	for (size_t i = 0; i < npairs; i++)
		open_langpair(&pairs[i], datadirs[(epoch - 1) % pairs[i].ndirs]);
}

/* ---- output ---- */

/*
 * Text goes through one large output buffer (cmd/common.h); records
 * through the output's record writer on the same descriptor.  -o names
 * an atomic output (output_open()); a closed pipe ends the tool quietly.
 * w and name are o.w and o.name, under the names the encoder uses.
 */
static struct {
	struct output	 o;
	struct obuf	 b;
	struct rec_writer *w;
	const char	*name;
} out;

#define OUT_SIZE	(1u << 18)

static void
out_flush(void)
{
	obuf_flush(&out.b);
}

static void
out_write(const void *p, size_t n)
{
	(void)obuf_write(&out.b, p, n);
}

static void
out_begin(int records)
{
	output_open(&out.o, o.out, records ? WRITES_RECORDS : WRITES_TEXT,
	    records ? "write JSON lines instead" : "add --output-format records");
	out.w = out.o.w;
	out.name = out.o.name;
	obuf_open(&out.b, out.o.fd, out.name, OUT_SIZE);
}

static void
out_end(void)
{
	out_flush();
	output_close(&out.o, 1);
	out.w = NULL;
}

/* A data fault after some output: what is written stays, a named output is removed. */
static _Noreturn void
fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (out.o.fd == 1) {
		if (out.w != NULL)
			(void)rec_writer_flush(out.w);
		if (out.b.p != NULL)
			out_flush();
	}
	die("%s", msg);
}

/* ---- one batch out ---- */

static struct batch_collate_opts copts = BATCH_COLLATE_OPTS_INIT;
static struct bsrc_collator col;	/* --collate */
static struct buf line;			/* what bio_put_*() format */
static struct bio_features feat;	/* --output-format records */
static struct ex_lists *lists;

/* What bio_put_*() left in line, out; -1 from them is no memory. */
static void
put_line(int rc)
{
	if (rc == -1)
		die_nomem();
	out_write(line.p, line.len);
	line.len = 0;
}

/* The features of one batch as an Example, a record. */
static void
put_example(void)
{
	size_t total;
	uint8_t *q;

	if (lists == NULL && (lists = ex_lists_new()) == NULL)
		die_errno("malloc");
	total = ex_encode_int64_lists(lists, feat.n, feat.name, feat.val,
	    feat.len, NULL);
	if (total == SIZE_MAX)
		die_errno("malloc");
	if ((q = rec_write_begin(out.w, total)) == NULL)
		write_failed(out.name);
	ex_lists_put(lists, q);
	if (rec_write_end(out.w, total) == -1)
		write_failed(out.name);
}

/*
 * One batch of shard 'shard' at step 'step' of 'epoch': n items (0 for
 * a fill batch), collated when asked.
 */
static void
emit_batch(uint64_t epoch, uint64_t step, const struct batch_item *it, size_t n)
{
	struct batch_collated c, *cp = NULL;
	char where[64], err[1024];
	int has_target = npairs > 0 && pairs[0].tgt != NULL;

	if (o.collate) {
		snprintf(where, sizeof where, "epoch %" PRIu64 ", step %" PRIu64,
		    epoch, step);
		if (bsrc_collate(&col, pairs, npairs, it, n, where, &c, err,
		    sizeof err) == -1)
			fail("%s", err);
		cp = &c;
	}
	switch (o.outfmt) {
	case OUT_IDS:
		put_line(bio_put_ids(&line, it, n));
		break;
	case OUT_JSON:
		put_line(bio_put_json(&line, epoch, o.shard, step, it, n, cp,
		    has_target, copts.input_feeding));
		break;
	default:
		if (bio_features_batch(&feat, epoch, o.shard, step, it, n, cp,
		    has_target, copts.input_feeding) == -1)
			die_nomem();
		put_example();
		break;
	}
	if (cp != NULL)
		batch_collated_free(cp);
}

/* ---- batches ---- */

/* Sizes of every pair from the indexes, language tokens counted. */
static struct batch_data *
load_sizes(void)
{
	char err[1024];
	struct batch_data *d;

	/* Without --collate the files are done with once read. */
	if ((d = bsrc_load_sizes(pairs, npairs, !o.collate, err,
	    sizeof err)) == NULL)
		die("%s", err);
	return d;
}

/* --sampling-weights KEY=W,...: one weight for every pair. */
static double *
parse_weights(void)
{
	double *w = xcalloc(npairs, sizeof *w);
	char err[1024];

	if (bsrc_weights(o.weights, pairs, npairs, parse_real, w, err,
	    sizeof err) == -1) {
		if (errno == ENOMEM)
			die_nomem();
		usage_error("--sampling-weights: %s", err);
	}
	return w;
}

static void
json_str(FILE *f, const char *s)
{
	struct buf j = { 0 };

	if (exjson_put_name(&j, (const uint8_t *)s, strlen(s)) == -1)
		die_nomem();
	fwrite(j.p, 1, j.len, f);
	rp_buf_free(&j);
}

/* --stats: what this epoch and shard hold, on stderr. */
static void
print_stats(const struct batch_plan *plan)
{
	struct batch_epoch_stats es;
	struct batch_shard_stats ss;
	struct batch_pair_stats ps;
	double spad, tpad;
	FILE *f = stderr;

	batch_plan_stats(plan, &es);
	batch_plan_shard_stats(plan, (uint32_t)o.shard, &ss);
	bsrc_padding(&ss, &spad, &tpad);
	progress_done();
	fflush(stdout);
	if (o.json) {
		fprintf(f, "{\"epoch\":%" PRIu64 ",\"shard\":%" PRIu64
		    ",\"num_shards\":%" PRIu64 ",\"sampled\":%s,\"rebuilt\":%s,"
		    "\"real_size\":%" PRIu64 ",\"virtual_size\":%" PRIu64
		    ",\"filtered\":%" PRIu64 ",\"batches_total\":%" PRIu64
		    ",\"batched\":%" PRIu64 ",\"dropped_tail\":%" PRIu64
		    ",\"group_dropped_batches\":%" PRIu64
		    ",\"group_dropped_items\":%" PRIu64 ",\"steps\":%" PRIu64
		    ",\"batches\":%" PRIu64 ",\"fill_batches\":%" PRIu64
		    ",\"sentences\":%" PRIu64 ",\"src_tokens\":%" PRIu64
		    ",\"tgt_tokens\":%" PRIu64 ",\"src_slots\":%" PRIu64
		    ",\"tgt_slots\":%" PRIu64 ",\"src_padding\":%.6f"
		    ",\"tgt_padding\":%.6f,\"skipped_batches\":%" PRIu64
		    ",\"skipped_items\":%" PRIu64 ",", es.epoch,
		    o.shard, o.nshards, es.sampled ? "true" : "false",
		    es.rebuilt ? "true" : "false", es.real_size,
		    es.virtual_size, es.filtered, es.batches, es.batched,
		    es.dropped_tail, es.group_dropped_batches,
		    es.group_dropped_items, es.steps, ss.batches, ss.fill,
		    ss.sentences, ss.src_tokens, ss.tgt_tokens, ss.src_slots,
		    ss.tgt_slots, spad, tpad,
		    ss.skipped_batches, ss.skipped_items);
		if (o.vepoch > 0)
			fprintf(f, "\"virtual_epoch\":{\"pass_epoch\":%" PRIu64
			    ",\"pass_size\":%" PRIu64 ",\"start\":%" PRIu64
			    ",\"new_pass\":%s},", es.pass_epoch, es.pass_size,
			    es.pass_start, es.pass_new ? "true" : "false");
		fputs("\"pairs\":[", f);
		for (size_t i = 0; i < npairs; i++) {
			batch_plan_pair_stats(plan, i, &ps);
			fprintf(f, "%s{\"pair\":%zu,\"key\":", i ? "," : "", i);
			json_str(f, pairs[i].key);
			fprintf(f, ",\"size\":%" PRIu64 ",\"ratio\":", ps.size);
			/* concatenated pairs have no ratio (fairseq: None) */
			if (es.sampled)
				fprintf(f, "%.17g", ps.ratio);
			else
				fputs("null", f);
			fprintf(f, ",\"prob\":%.17g,\"virtual_size\":%" PRIu64
			    ",\"kept\":%" PRIu64 "}", ps.prob, ps.virtual_size,
			    ps.kept);
		}
		fputs("],\"filtered_ids\":[", f);
		for (uint64_t i = 0; i < es.filtered; i++) {
			uint64_t v;
			struct batch_item it;

			batch_plan_filtered(plan, i, &v, &it);
			fprintf(f, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]",
			    i ? "," : "", it.pair, it.index, v);
		}
		fputs("]}\n", f);
	} else {
		fprintf(f, "epoch %" PRIu64 ": %" PRIu64 " sentences in %zu "
		    "pair%s, %" PRIu64 " %s, %" PRIu64 " filtered by length, %"
		    PRIu64 " batches%s\n", es.epoch, es.real_size, npairs,
		    npairs == 1 ? "" : "s", es.virtual_size,
		    es.sampled ? "drawn" : "in order", es.filtered, es.batches,
		    es.rebuilt ? "" : " (as built before)");
		if (o.vepoch > 0)
			fprintf(f, "  virtual epoch: items %" PRIu64 " to %" PRIu64
			    " of %" PRIu64 " %s in epoch %" PRIu64 "%s\n",
			    es.pass_start, es.pass_start + es.virtual_size,
			    es.pass_size, es.sampled ? "drawn" : "permuted",
			    es.pass_epoch, es.pass_new ? " (now)" : "");
		if (es.dropped_tail || es.group_dropped_batches)
			fprintf(f, "  lost: %" PRIu64 " sentences in the last "
			    "batch (--fairseq-compat main), %" PRIu64
			    " batches of %" PRIu64 " sentences (grouped "
			    "shuffling)\n", es.dropped_tail,
			    es.group_dropped_batches, es.group_dropped_items);
		fprintf(f, "  shard %" PRIu64 "/%" PRIu64 ": %" PRIu64 " steps = %"
		    PRIu64 " batches + %" PRIu64 " fill; %" PRIu64 " sentences, "
		    "%" PRIu64 " source and %" PRIu64 " target tokens; padding "
		    "%.1f%% of source slots, %.1f%% of target slots\n", o.shard,
		    o.nshards, ss.steps, ss.batches, ss.fill, ss.sentences,
		    ss.src_tokens, ss.tgt_tokens,
		    100 * spad, 100 * tpad);
		if (ss.skipped_batches)
			fprintf(f, "  skipped: the last batch (%" PRIu64
			    " sentences, --skip-remainder-batch)\n",
			    ss.skipped_items);
		fprintf(f, "  %4s %-24s %12s %9s %9s %12s %12s\n", "pair", "key",
		    "size", "ratio", "prob", "drawn", "kept");
		for (size_t i = 0; i < npairs; i++) {
			char ratio[32] = "-";

			batch_plan_pair_stats(plan, i, &ps);
			if (es.sampled)
				snprintf(ratio, sizeof ratio, "%.4f", ps.ratio);
			fprintf(f, "  %4zu %-24s %12" PRIu64 " %9s %9.4f %12"
			    PRIu64 " %12" PRIu64 "\n", i, pairs[i].key, ps.size,
			    ratio, ps.prob, ps.virtual_size, ps.kept);
		}
	}
	if (ferror(f))
		die_errno("stderr");
}

static int
cmd_batches(int argc, char **argv)
{
	struct batch_config cfg = BATCH_CONFIG_INIT;
	struct batch_data *data = NULL;
	struct batch_plan *plan = NULL;
	struct batch_item *items = NULL;
	struct batch_shard_stats ss;
	struct bsrc_schedule sched = { 0 };
	uint64_t cap = 0;
	double *weights = NULL;
	char err[BATCH_ERRMAX];

	if (o.json && !o.stats)
		usage_error("--json goes with --stats");
	if (o.collate && o.outfmt == OUT_IDS)
		usage_error("--collate needs --output-format json or records");
	setup_pairs(argc, argv);
	if (o.weights != NULL) {
		weights = parse_weights();
		cfg.sampling = BATCH_SAMPLING_WEIGHTS;
		cfg.weights = weights;
	} else
		cfg.sampling = o.method == SAMPLE_TEMPERATURE ?
		    BATCH_SAMPLING_TEMPERATURE : o.method == SAMPLE_UNIFORM ?
		    BATCH_SAMPLING_UNIFORM : BATCH_SAMPLING_CONCAT;
	cfg.temperature = o.temperature;
	cfg.virtual_size = o.vsize;
	cfg.sampling_seed = (uint32_t)o.sampling_seed;
	cfg.seed = (uint32_t)o.seed;
	cfg.order_seed_epoch = o.order_seed_epoch;
	cfg.shuffle = o.shuffle;
	cfg.grouped_shuffling = o.grouped;
	cfg.skip_remainder = o.skip_remainder;
	cfg.rebuild_batches = o.rebuild;
	/* fairseq-train resolves the positions with --max-tokens too. */
	cfg.max_source_positions = (int64_t)o.max_src;
	cfg.max_target_positions = (int64_t)o.max_tgt;
	if (o.max_tokens > 0 && o.max_tokens < o.max_src)
		cfg.max_source_positions = (int64_t)o.max_tokens;
	if (o.max_tokens > 0 && o.max_tokens < o.max_tgt)
		cfg.max_target_positions = (int64_t)o.max_tokens;
	cfg.lim.max_tokens = (int64_t)o.max_tokens;
	cfg.lim.max_sentences = (int64_t)o.max_sentences;
	cfg.lim.mult = (int64_t)o.mult;
	cfg.lim.compat = o.compat_main ? BATCH_COMPAT_MAIN : BATCH_COMPAT_012;
	cfg.num_shards = (uint32_t)o.nshards;
	cfg.virtual_epoch_size = o.vepoch;
	sched.vepoch = o.vepoch;
	sched.vsize = o.vsize;
	sched.many_dirs = ndatadirs > 1;
	out_begin(o.outfmt == OUT_RECORDS);
	for (uint64_t e = o.epoch; e < o.epoch + o.epochs; e++) {
		struct batch_epoch_stats es;
		uint64_t dir_epoch;
		int load = bsrc_schedule_load(&sched, e, &dir_epoch);

		if (load) {
			open_epoch(dir_epoch);
			batch_plan_free(plan);
			batch_data_free(data);
			data = load_sizes();
			if ((plan = batch_plan_new(data, &cfg, err, sizeof err)) == NULL)
				die("%s", err);
		}
		if (batch_plan_epoch(plan, e, (int64_t)o.shard, err, sizeof err) == -1)
			fail("epoch %" PRIu64 ": %s", e, err);
		batch_plan_stats(plan, &es);
		bsrc_schedule_done(&sched, es.pass_new, load);
		batch_plan_shard_stats(plan, (uint32_t)o.shard, &ss);
		for (uint64_t s = 0; s < ss.steps; s++) {
			uint64_t id, n = batch_plan_step(plan, (uint32_t)o.shard, s, &id);

			if (id == UINT64_MAX)
				n = 0;
			else {
				if (n > cap) {
					cap = n;
					items = xreallocarray(items, cap, sizeof *items);
				}
				n = batch_plan_batch(plan, id, items);
			}
			emit_batch(e, s, items, (size_t)n);
			if (progress_due())
				progress("epoch %" PRIu64 ": step %" PRIu64 " of %"
				    PRIu64, e, s, ss.steps);
		}
		if (o.stats)
			print_stats(plan);
	}
	progress_done();
	out_end();
	batch_plan_free(plan);
	batch_data_free(data);
	free(items);
	free(weights);
	bsrc_collator_free(&col);
	bio_features_free(&feat);
	ex_lists_free(lists);
	rp_buf_free(&line);
	return 0;
}

/* ---- by-size and collate ---- */

/* The name of the inputs in messages: the one file, or "input". */
static const char *
inputs_name(int argc, char **argv)
{
	return argc == 0 ? "stdin" : argc == 1 ? input_name(argv[0]) : "input";
}

/* Read every operand (none or "-": stdin) into one buffer of lines. */
static char *
read_inputs(int argc, char **argv, size_t *len)
{
	struct buf b = { 0 };
	static char dashname[] = "-";
	static char *dash[] = { dashname };

	if (argc == 0) {
		argc = 1;
		argv = dash;
	}
	for (int i = 0; i < argc; i++) {
		int fd = open_input(argv[i]);
		uint8_t *p;
		size_t n;

		if (fd == -1)
			exit(1);
		p = read_all(fd, &n, input_name(argv[i]));
		if (fd != 0)
			close(fd);
		if (rp_buf_append(&b, p, n) == -1 ||
		    (n > 0 && p[n - 1] != '\n' && i + 1 < argc &&
		    rp_buf_putc(&b, '\n') == -1))
			die_nomem();
		free(p);
	}
	if (rp_buf_putc(&b, '\0') == -1)
		die_nomem();
	*len = b.len - 1;
	return (char *)b.p;
}

static int
cmd_by_size(int argc, char **argv)
{
	struct batch_limits lim = BATCH_LIMITS_INIT;
	struct bio_sizes s;
	char err[BATCH_ERRMAX], *text;
	const char *name = inputs_name(argc, argv);
	uint64_t *ends = NULL, nb = 0, a = 0;
	int64_t *ntok;
	size_t len;

	text = read_inputs(argc, argv, &len);
	if (bio_sizes_parse(&s, text, len, err, sizeof err) == -1)
		die("%s: %s", name, err);
	free(text);
	ntok = xreallocarray(NULL, s.n + 1, sizeof *ntok);
	for (uint64_t i = 0; i < s.n; i++)
		ntok[i] = s.size[i];
	lim.max_tokens = (int64_t)o.max_tokens;
	lim.max_sentences = (int64_t)o.max_sentences;
	lim.mult = (int64_t)o.mult;
	lim.compat = o.compat_main ? BATCH_COMPAT_MAIN : BATCH_COMPAT_012;
	if (batch_by_size(ntok, s.n, &lim, &ends, &nb, err, sizeof err) == -1)
		die("%s: %s", name, err);
	out_begin(0);
	for (uint64_t b = 0; b < nb; a = ends[b++])
		put_line(bio_put_indices(&line, s.index + a, (size_t)(ends[b] - a)));
	out_end();
	rp_buf_free(&line);
	free(ends);
	free(ntok);
	bio_sizes_free(&s);
	return 0;
}

static int
cmd_collate(int argc, char **argv)
{
	struct bio_batch in = { 0 };
	struct batch_collated c;
	char err[BATCH_ERRMAX], *text, *p, *end, *nl;
	const char *name = inputs_name(argc, argv);
	struct batch_sample *bs = NULL;
	size_t len, cap = 0;
	uint64_t lineno = 0;

	text = read_inputs(argc, argv, &len);
	out_begin(0);
	for (p = text, end = text + len; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		lineno++;
		if (bio_batch_parse(&in, p, (size_t)(nl - p), err, sizeof err) == -1)
			fail("%s: line %" PRIu64 ": %s", name, lineno, err);
		if (in.n > cap) {
			cap = in.n;
			bs = xreallocarray(bs, cap, sizeof *bs);
		}
		bio_batch_samples(&in, bs);
		if (batch_collate(bs, in.n, &copts, &c, err, sizeof err) == -1)
			fail("%s: line %" PRIu64 ": %s", name, lineno, err);
		put_line(bio_put_collated_line(&line, &c, in.has_target,
		    copts.input_feeding));
		batch_collated_free(&c);
	}
	out_end();
	rp_buf_free(&line);
	bio_batch_free(&in);
	free(bs);
	free(text);
	return 0;
}

/*
 * "loader": nnmaker's batch loaders (lib/loader.h) over a dataset
 * named in the configuration; batches as JSON lines or Examples.
 */
static int
cmd_loader(int argc, char **argv)
{
	const char *outpath = o.out != NULL ? o.out : "-";
	struct ld_config *cf;
	struct ld_dataset ds;
	struct loader *l;
	struct ld_stats st;
	struct output dst;
	struct rec_writer *w = NULL;
	struct buf b = { 0 };
	char err[1024], *text;
	uint64_t nb = 0;
	size_t n;
	int records = o.outfmt == OUT_RECORDS, r, fd;

	if (argc > 0)
		usage_error("loader: unexpected operand '%s'", argv[0]);
	if (o.config == NULL)
		usage_error("loader: --config is required");
	out_form(outpath, records ? WRITES_RECORDS : WRITES_TEXT, records ?
	    "leave out --output-format records to write JSON lines" :
	    "add --output-format records");
	out_check(outpath);
	if (ld_read_file(o.config, &text, &n) == -1)
		die_errno("%s", o.config);
	if ((cf = ld_config_parse(text, n, err, sizeof err)) == NULL)
		die("%s: %s", o.config, err);
	free(text);
	if (ld_dataset_json(&ds, ld_config_dataset(cf), "dataset", err,
	    sizeof err) == -1)
		die("%s: %s", o.config, err);
	if ((l = ld_open(cf, &ds, o.seed, err, sizeof err)) == NULL)
		die("%s: %s", o.config, err);
	ld_set_max_record(l, o.maxrec);
	output_open(&dst, outpath, records ? WRITES_RECORDS : WRITES_TEXT, NULL);
	fd = dst.fd;
	w = dst.w;
	while (nb < o.limit && (r = ld_next(l, err, sizeof err)) != 0) {
		if (r == -1) {
			if (w && rec_writer_flush(w) == -1)
				write_failed(outpath);
			if (b.len && rp_write_full(fd, b.p, b.len) == -1)
				write_failed(outpath);
			fault_begin();
			die("%s", err);
		}
		if (records) {
			const struct iovec *iov;
			size_t niov;
			uint32_t crc;

			if (ld_write_example_iov(l, &b, &iov, &niov, &crc) == -1)
				die_errno("batch %" PRIu64, nb);
			if (rec_writev(w, iov, niov, &crc) == -1)
				write_failed(outpath);
			b.len = 0;
		} else {
			if (ld_write_json(l, &b) == -1)
				die_errno("batch %" PRIu64, nb);
			if (b.len >= (1u << 20)) {
				if (rp_write_full(fd, b.p, b.len) == -1)
					write_failed(outpath);
				b.len = 0;
			}
		}
		nb++;
		if (progress_due())
			progress("%" PRIu64 " batches", nb);
	}
	progress_done();
	if (b.len && rp_write_full(fd, b.p, b.len) == -1)
		write_failed(outpath);
	output_close(&dst, 1);
	if (o.stats) {
		ld_get_stats(l, &st);
		fprintf(stderr, "batches %" PRIu64 "\nexamples %" PRIu64
		    "\nrecords %" PRIu64 "\nepochs %" PRIu64 "\n", st.batches,
		    st.examples, st.records, st.epochs);
		for (size_t i = 0; i < st.ntensors; i++)
			fprintf(stderr, "padding %s %.4f\n", ld_tensor_name(l, i),
			    ld_tensor_padding(l, i));
	}
	rp_buf_free(&b);
	ld_close(l);
	ld_dataset_free(&ds);
	ld_config_free(cf);
	return 0;
}

int
main(int argc, char **argv)
{
	int found = -1;

	setprogname(argv[0]);
	if (argc < 2)
		usage(stderr, 2);
	for (int i = 0; i < NCMD; i++)
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
	o.limit = UINT64_MAX;
	o.split = "train";
	o.seed = 1;
	o.epoch = 1;
	o.epochs = 1;
	o.mult = 8;
	o.max_src = o.max_tgt = 1024;
	o.order_seed_epoch = 1;
	o.method = SAMPLE_CONCAT;
	o.temperature = 1.5;
	o.sampling_seed = 2;
	o.shuffle = 1;
	o.nshards = 1;
	o.outfmt = OUT_JSON;
	o.left_pad_source = 1;
	o.pad_to_multiple = 1;
	o.input_feeding = 1;
	o.pad = 1;
	o.eos = 2;
	argc--;
	argv++;
	parse_opts(argc, argv);
	argc -= optind;
	argv += optind;
	if (o.cmd == CMD_LOADER)
		return cmd_loader(argc, argv);
	copts.left_pad_source = o.left_pad_source;
	copts.left_pad_target = o.left_pad_target;
	copts.input_feeding = o.input_feeding;
	copts.pad = o.pad;
	copts.eos = o.eos;
	copts.pad_to_multiple = (int64_t)o.pad_to_multiple;
	bsrc_collator_init(&col, &copts, o.raw_ids);
	/* A named output that cannot be written is refused before any work. */
	if (o.out != NULL && strcmp(o.out, "-") != 0)
		out_check(o.out);
	stdout_buffer();
	switch (o.cmd) {
	case CMD_BATCHES:	return cmd_batches(argc, argv);
	case CMD_BY_SIZE:	return cmd_by_size(argc, argv);
	default:		return cmd_collate(argc, argv);
	}
}
