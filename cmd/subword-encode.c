/*
 * subword-encode: encode text lines with a tensor2tensor
 * SubwordTextEncoder vocabulary, id for id as tensor2tensor's
 * txt_line_iterator + encode (+ EOS) do, or with a BERT/ELECTRA
 * WordPiece vocabulary as their FullTokenizer does, or with a
 * SentencePiece model as spm_encode does, or with GPT-2's byte-level
 * BPE (encoder.json + vocab.bpe, or a tiktoken encoding) as tiktoken
 * does, into Example records or id lines; with -d, decode records or
 * id lines back to text.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"
#include "buf.h"
#include "common.h"
#include "errmsg.h"
#include "io.h"
#include "example.h"
#include "exjson.h"
#include "jsondoc.h"
#include "part.h"
#include "pool.h"
#include "record.h"
#include "spm.h"
#include "subword.h"
#include "unicode.h"
#include "wordpiece.h"

static const char usage_text[] =
    "usage: subword-encode [-dhqV] [--keep-partial] [--lower | --no-lower]\n"
    "                      [--no-strip] [--parallel]\n"
    "                      [--allowed-special all | none | megatron]\n"
    "                      [--encoding name]\n"
    "                      [--merges file]\n"
    "                      [--progress | --no-progress] [--skip-empty]\n"
    "                      [--strip-accents | --no-strip-accents]\n"
    "                      [--strip-extraneous] [--eos[=id|token]]\n"
    "                      [--extra-ids N] [--extra-options list] [-f name]\n"
    "                      [--fields list] [--input-format fmt] [-j jobs]\n"
    "                      [--json-keys list] [-m mode] [--max-record-size N]\n"
    "                      [--max-unk-rate R] [-o file] [--output-format fmt]\n"
    "                      [--part K/N] [--rules rules]\n"
    "                      -v [field=]vocab [file ...]\n"
    "\n"
    "  --allowed-special all    byte-level BPE: special-token texts become their\n"
    "                           ids (default none: they are ordinary text)\n"
    "  --allowed-special megatron\n"
    "                           -m spm: Megatron-LM's SentencePieceTokenizer\n"
    "                           specials (<CLS> <SEP> <EOD> <MASK> ...) become ids\n"
    "  -d, --decode             records (or ids) to text\n"
    "  --encoding NAME          -m tiktoken: gpt2, r50k_base, p50k_base, p50k_edit,\n"
    "                           cl100k_base or o200k_base\n"
    "  --eos[=ID|TOKEN]         append an end id to every line (default <EOS>, 1)\n"
    "  --extra-ids N            SentencePiece: seqio's N sentinel ids\n"
    "  --extra-options LIST     SentencePiece: bos:eos:reverse:unk, as spm_encode\n"
    "  -f, --feature NAME       the feature holding the ids (default targets)\n"
    "  --fields LIST            tab-separated columns, one feature each\n"
    "  -h, --help               print this help\n"
    "  --input-format FMT       text or jsonl; with -d: records, id or piece\n"
    "  -j, --jobs N             threads (default 0: one per CPU, at most 8)\n"
    "  --json-keys LIST         the keys of jsonl input (default text)\n"
    "  --keep-partial           after a fault, keep what the good input gave\n"
    "  --lower, --no-lower      WordPiece: lower-case words (default) or not\n"
    "  -m, --mode MODE          subword (tensor2tensor), wordpiece (BERT), spm,\n"
    "                           bpe (GPT-2's files) or tiktoken\n"
    "  --max-record-size N      with -d, largest payload read from a pipe\n"
    "  --max-unk-rate R         fail when more than R of the tokens are unknown\n"
    "                           (subword: of the characters escaped)\n"
    "  --merges FILE            -m bpe: GPT-2's vocab.bpe (with -v encoder.json)\n"
    "  --no-strip               encode lines as they are, not stripped\n"
    "  -o, --output FILE        write to FILE (atomically)\n"
    "  --output-format FMT      records, id or piece (with -d: text or id)\n"
    "  --parallel               line-parallel files, one a field (--fields)\n"
    "  --part K/N               read the K-th of N parts of the input\n"
    "                           (auto: K and N from the job array or MPI)\n"
    "  --progress, --no-progress  progress on stderr (default: when a terminal)\n"
    "  -q, --quiet              no progress and no warnings (but over 5% unknown)\n"
    "  --rules RULES            WordPiece: bert (default) or electra cleaning\n"
    "  --skip-empty             --parallel: skip lines with an empty field\n"
    "  --strip-accents, --no-strip-accents  WordPiece: strip accents or not\n"
    "  --strip-extraneous       with -d, drop trailing <pad> and <EOS> ids\n"
    "  -V, --version            print the version\n"
    "  -v, --vocab [FIELD=]FILE  the vocabulary (of one field)\n"
    "See subword-encode(1).\n";

static _Noreturn void
usage(FILE *fp, int status)
{
	print_usage(fp, usage_text, status);
}

enum {
	OPT_EOS = 256, OPT_NO_STRIP, OPT_STRIP_EXTRANEOUS, OPT_FIELDS,
	OPT_INPUT_FORMAT, OPT_OUTPUT_FORMAT, OPT_PROGRESS, OPT_NO_PROGRESS,
	OPT_LOWER, OPT_NO_LOWER, OPT_STRIP_ACCENTS, OPT_NO_STRIP_ACCENTS, OPT_RULES,
	OPT_MAXREC, OPT_JSON_KEYS, OPT_KEEP_PARTIAL, OPT_PARALLEL, OPT_MAX_UNK,
	OPT_SKIP_EMPTY,
	OPT_PART, OPT_EXTRA_IDS, OPT_EXTRA_OPTIONS, OPT_ALLOWED_SPECIAL,
	OPT_ENCODING, OPT_MERGES
};

static const struct option longopts[] = {
	{ "allowed-special", required_argument, NULL, OPT_ALLOWED_SPECIAL },
	{ "decode", no_argument, NULL, 'd' },
	{ "encoding", required_argument, NULL, OPT_ENCODING },
	{ "eos", optional_argument, NULL, OPT_EOS },
	{ "extra-ids", required_argument, NULL, OPT_EXTRA_IDS },
	{ "extra-options", required_argument, NULL, OPT_EXTRA_OPTIONS },
	{ "feature", required_argument, NULL, 'f' },
	{ "fields", required_argument, NULL, OPT_FIELDS },
	{ "help", no_argument, NULL, 'h' },
	{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
	{ "jobs", required_argument, NULL, 'j' },
	{ "json-keys", required_argument, NULL, OPT_JSON_KEYS },
	{ "keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL },
	{ "lower", no_argument, NULL, OPT_LOWER },
	{ "max-record-size", required_argument, NULL, OPT_MAXREC },
	{ "max-unk-rate", required_argument, NULL, OPT_MAX_UNK },
	{ "merges", required_argument, NULL, OPT_MERGES },
	{ "mode", required_argument, NULL, 'm' },
	{ "no-lower", no_argument, NULL, OPT_NO_LOWER },
	{ "no-strip-accents", no_argument, NULL, OPT_NO_STRIP_ACCENTS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "no-strip", no_argument, NULL, OPT_NO_STRIP },
	{ "output", required_argument, NULL, 'o' },
	{ "output-format", required_argument, NULL, OPT_OUTPUT_FORMAT },
	{ "parallel", no_argument, NULL, OPT_PARALLEL },
	{ "part", required_argument, NULL, OPT_PART },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "skip-empty", no_argument, NULL, OPT_SKIP_EMPTY },
	{ "strip-accents", no_argument, NULL, OPT_STRIP_ACCENTS },
	{ "strip-extraneous", no_argument, NULL, OPT_STRIP_EXTRANEOUS },
	{ "vocab", required_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

enum fmt { FMT_RECORDS, FMT_ID, FMT_PIECE, FMT_TEXT, FMT_JSONL };

struct field {
	char		*name;
	const char	*vpath;
	uint8_t		*vbytes;	/* the subword vocab file, while it is parsed */
	size_t		 vlen;
	struct sw_vocab	*sw;		/* subword mode */
	struct wp_vocab	*wp;		/* wordpiece mode */
	struct wp_tok	*wt;
	struct spm_model *sm;		/* spm mode */
	struct spm_enc	*se;
	struct spm_special msp[SPM_MEGATRON_SPECIALS];	/* with megatron_special */
	size_t		 nmsp;
	struct bpe_model *bm;		/* bpe and tiktoken modes */
	struct bpe_enc	*be;
	struct buf	 ptext;		/* spm: this line's pieces (piece output) */
	int		 ptext_ok;
	int64_t		*ids;		/* this line's ids */
	size_t		 n, cap;
	long		 unk;		/* wordpiece: the [UNK] id, or -1 */
	uint64_t	 ntok, nunk;	/* tokens, unknowns among them (subword:
					   characters, escaped ones) */
};

static struct field *fields;
static size_t nfields;
static int eos, strip = 1, strip_extraneous, wordpiece;
static int spm_mode;			/* -m spm */
static int bpe_mode;			/* -m bpe or -m tiktoken */
static int tiktoken_mode;		/* -m tiktoken */
static const char *merges_path;		/* --merges */
static const char *encoding_name;	/* --encoding */
static int allow_special;		/* --allowed-special all */
static int megatron_special;		/* --allowed-special megatron */
/* Lines as they are, split at \n only (spm_encode's and tiktoken's reading). */
#define RAW_LINES	(spm_mode || bpe_mode)
static int extra_ids;			/* --extra-ids */
static const char *extra_opts;		/* --extra-options */
static enum spm_extra spm_x[SPM_MAX_EXTRA];
static int spm_nx;
static int64_t eos_id = 1;		/* tensor2tensor's EOS */
static const char *eos_arg;		/* --eos=ID|TOKEN */
static const char *eos_piece;		/* its text when the vocab lacks it */
static int jsonl;			/* --input-format jsonl */
static int parallel;			/* --parallel: a file per field */
static int skip_empty;			/* --skip-empty */
static char **jkeys;			/* --json-keys */
static size_t njkeys;
static struct wp_opts wpo = WP_OPTS_INIT;
static enum fmt outfmt = FMT_RECORDS, infmt = FMT_RECORDS;
static uint64_t max_len;	/* --max-record-size; 0: the reader's default */

/*
 * Output (output_open()): records through its record writer, text
 * through a growing output buffer on its descriptor.  rw and outname
 * are outp.w and outp.name, under the names the encoders use.
 */
static struct output outp;
static const char *outname = "stdout";
static struct rec_writer *rw;
static struct obuf ob;

/*
 * Encoding state of one thread: its encoders and ids per field, scratch,
 * and where its output goes.  Directly (the single-threaded path):
 * records to rw, text to ob, flushed as it grows.  Otherwise into 'out':
 * text, or records as a u64 length and the payload each.
 */
struct ctx {
	struct field	*f;
	int32_t		*tmp32;
	size_t		 tmp32cap;
	struct obuf	*out;
	int		 direct;
	uint64_t	 skipped;	/* lines without enough fields */
	uint64_t	 tabbed;	/* lines with a tab, one field */
	struct jd_line	 jl;		/* --input-format jsonl */
	int64_t		*prev;		/* a sentence held back (jsonl) */
	size_t		 prevn, prevcap;
	struct ex_lists	*enc;		/* records: the Example encoder, */
	const char	**names;	/* and its row: the field names, */
	const int64_t	**vals;		/* ids */
	size_t		*lens;
	char		 err[300];
};

static size_t ob_mark;	/* -d: the end of the last whole line in ob */

static void
flush_text(void)
{
	obuf_flush(&ob);
	ob_mark = 0;
}

/*
 * Write what is good so far before reporting a fault in the input, and
 * end the record stream: the output is then what the good lines or
 * records before the fault give (kept under --keep-partial).
 */
static void
flush_all(void)
{
	flush_text();
	rw = NULL;
	output_end_stream(&outp);
	fault_begin();
}

/*
 * What -d is decoding, for its messages: "name: record 3 at offset 30"
 * or "name: line 3" (dec.name NULL: nothing).
 */
static struct {
	const char	*name;
	const char	*what;
	uint64_t	 num;
	uint64_t	 off;		/* UINT64_MAX: none */
} dec;
static char decoding[300];

static const char *
dec_where(void)
{
	if (dec.off == UINT64_MAX)
		snprintf(decoding, sizeof decoding, "%s: %s %ju", dec.name,
		    dec.what, (uintmax_t)dec.num);
	else
		snprintf(decoding, sizeof decoding, "%s: %s %ju at offset %ju",
		    dec.name, dec.what, (uintmax_t)dec.num, (uintmax_t)dec.off);
	return decoding;
}

static _Noreturn void
out_of_memory(void)
{
	if (dec.name == NULL)
		die_errno("output");
	/* What was decoded before, not the part of this line. */
	if (ob_mark < ob.len)
		ob.len = ob_mark;
	flush_all();
	die("%s: out of memory", dec_where());
}

static void
put(struct ctx *c, const void *p, size_t n)
{
	if (obuf_write(c->out, p, n) == -1)
		out_of_memory();
}

/*
 * Direct text output is written a line at a time, never half a line
 * (but for -d of a record over BIG_RECORD, which goes out in parts).
 */
static void
line_done(struct ctx *c)
{
	if (c->out == &ob)
		ob_mark = ob.len;
	if (c->direct && c->out->len >= (1 << 20))
		flush_text();
}

/* Decimal text of the small ids and a space, made once (exjson_itext_new()). */
static uint64_t *idtext;
static size_t nidtext;

static void
make_idtext(size_t n)
{
	nidtext = n < EXJSON_ITEXT_MAX ? n : EXJSON_ITEXT_MAX;
	if ((idtext = exjson_itext_new(nidtext, ' ')) == NULL)
		die_errno("ids");
}

/* Ids of one field as decimal, space-separated. */
static void
put_ids(struct ctx *c, const int64_t *ids, size_t n)
{
	struct obuf *b = c->out;
	char *q;
	size_t i;
	int64_t id;

	if (obuf_reserve(b, n * 21 + 8) == -1)
		die_errno("output");
	q = b->p + b->len;
	/* Every id is followed by a space; the last one is taken back. */
	for (i = 0; i < n; i++) {
		id = ids[i];
		if (id >= 0 && (uint64_t)id < nidtext)
			q = exjson_itext_put(idtext, (size_t)id, q);
		else {
			q = exjson_format_i64(id, q);
			*q++ = ' ';
		}
	}
	if (n > 0)
		q--;
	obuf_end(b, q);
}

/* The line's fields as one Example record: its size, made ready to write. */
static size_t
example_row(struct ctx *c)
{
	size_t f, n;

	if (c->enc == NULL) {
		if ((c->enc = ex_lists_new()) == NULL ||
		    (c->names = calloc(nfields, sizeof(*c->names))) == NULL ||
		    (c->vals = calloc(nfields, sizeof(*c->vals))) == NULL ||
		    (c->lens = calloc(nfields, sizeof(*c->lens))) == NULL)
			out_of_memory();
		for (f = 0; f < nfields; f++)
			c->names[f] = c->f[f].name;
	}
	for (f = 0; f < nfields; f++) {
		c->vals[f] = c->f[f].ids;
		c->lens[f] = c->f[f].n;
	}
	if ((n = ex_encode_int64_lists(c->enc, nfields, c->names, c->vals,
	    c->lens, NULL)) == SIZE_MAX)
		out_of_memory();
	return n;
}

static void
example_free(struct ctx *c)
{
	ex_lists_free(c->enc);
	free(c->names);
	free(c->vals);
	free(c->lens);
}

/* Emit the ids of every field for one line. */
/* The text of a Megatron special (--allowed-special megatron), or NULL. */
static const char *
special_text(const struct field *fd, int64_t id, size_t *len)
{
	size_t i;

	for (i = 0; i < fd->nmsp; i++)
		if (fd->msp[i].id == id) {
			*len = fd->msp[i].len;
			return fd->msp[i].s;
		}
	return NULL;
}

static void
emit(struct ctx *c)
{
	struct field *fs = c->f;
	size_t f, i, len;
	const uint8_t *s;
	uint8_t hdr[8];

	if (outfmt == FMT_RECORDS) {
		size_t n = example_row(c);
		uint8_t *q;

		if (c->direct) {
			/* Straight into the writer's buffer. */
			if ((q = rec_write_begin(rw, n)) == NULL)
				write_failed(outname);
			ex_lists_put(c->enc, q);
			if (rec_write_end(rw, n) == -1)
				write_failed(outname);
			return;
		}
		rp_put_le64(hdr, n);
		if (obuf_reserve(c->out, 8 + n) == -1)
			die_errno("output");
		q = (uint8_t *)c->out->p + c->out->len;
		memcpy(q, hdr, 8);
		ex_lists_put(c->enc, q + 8);
		c->out->len += 8 + n;
		return;
	}
	for (f = 0; f < nfields; f++) {
		if (f > 0)
			put(c, "\t", 1);
		if (outfmt == FMT_ID) {
			put_ids(c, fs[f].ids, fs[f].n);
			continue;
		}
		if (spm_mode && fs[f].ptext_ok) {
			put(c, fs[f].ptext.p, fs[f].ptext.len);
			continue;
		}
		for (i = 0; i < fs[f].n; i++) {
			if (i > 0)
				put(c, " ", 1);
			if (spm_mode) {
				if ((s = (const uint8_t *)spm_piece(fs[f].sm,
				    fs[f].ids[i], &len)) != NULL)
					put(c, s, len);
				else if ((s = (const uint8_t *)special_text(&fs[f],
				    fs[f].ids[i], &len)) != NULL)
					put(c, s, len);
			} else if (bpe_mode) {
				if ((s = (const uint8_t *)bpe_piece(fs[f].bm,
				    fs[f].ids[i], &len)) != NULL)
					put(c, s, len);
			} else if (wordpiece) {
				if ((s = (const uint8_t *)wp_piece(fs[f].wp,
				    fs[f].ids[i], &len)) != NULL)
					put(c, s, len);
				else if (eos_piece != NULL && fs[f].ids[i] == eos_id)
					put(c, eos_piece, strlen(eos_piece));
			} else if ((s = sw_vocab_entry(fs[f].sw, fs[f].ids[i],
			    &len)) != NULL)
				put(c, s, len);
		}
	}
	put(c, "\n", 1);
	line_done(c);
}

/* Room for n ids in fd->ids. */
static void
ids_room(struct field *fd, size_t n)
{
	size_t cap = fd->cap ? fd->cap : 64;

	if (n <= fd->cap)
		return;
	while (cap < n)
		cap *= 2;
	fd->ids = xreallocarray(fd->ids, cap, sizeof(*fd->ids));
	fd->cap = cap;
}

/*
 * SentencePiece: the line as spm_encode reads it (nothing stripped),
 * with the --extra-options; the pieces are kept for piece output.
 */
static int
encode_spm(struct ctx *c, struct field *fd, const uint8_t *p, size_t n,
    int add_eos)
{
	const struct spm_tok *t;
	uint64_t unk0 = spm_enc_unknowns(fd->se);
	size_t i;
	long k;

	if ((k = spm_encode(fd->se, p, n)) < 0) {
		if (errno == ENOMEM)
			die_errno("encode");
		snprintf(c->err, sizeof(c->err), "%s: %s", fd->vpath,
		    spm_strerror(fd->se));
		return -1;
	}
	t = spm_tokens(fd->se);
	ids_room(fd, (size_t)k + 1);
	for (i = 0; i < (size_t)k; i++)
		fd->ids[i] = t[i].id;
	fd->n = (size_t)k;
	fd->ntok += (uint64_t)k;
	fd->nunk += spm_enc_unknowns(fd->se) - unk0;
	fd->ptext_ok = 0;
	if (outfmt == FMT_PIECE && !jsonl) {
		fd->ptext.len = 0;
		for (i = 0; i < (size_t)k; i++)
			if ((i > 0 && rp_buf_putc(&fd->ptext, ' ') == -1) ||
			    rp_buf_append(&fd->ptext, t[i].s, t[i].len) == -1)
				die_errno("encode");
		fd->ptext_ok = 1;
	}
	if (add_eos && eos) {
		fd->ids[fd->n++] = eos_id;
		if (fd->ptext_ok) {
			size_t len;
			const char *s = spm_piece(fd->sm, eos_id, &len);

			if (s == NULL)
				s = special_text(fd, eos_id, &len);
			if (s != NULL && ((fd->n > 1 && rp_buf_putc(&fd->ptext,
			    ' ') == -1) || rp_buf_append(&fd->ptext, s, len) == -1))
				die_errno("encode");
		}
	}
	return 0;
}

/*
 * Byte-level BPE: the line as tiktoken's encode_ordinary() takes it
 * (nothing stripped); a line that is not UTF-8 is refused.
 */
static int
encode_bpe(struct ctx *c, struct field *fd, const uint8_t *p, size_t n,
    int add_eos)
{
	const uint32_t *t;
	size_t i, v;
	long k;

	if ((v = uni_utf8_valid_prefix(p, n)) != n) {
		snprintf(c->err, sizeof(c->err), "invalid UTF-8 at byte %zu of "
		    "the line (byte-level BPE encodes text)", v);
		return -1;
	}
	if ((k = bpe_encode(fd->be, p, n)) < 0)
		die_errno("encode");
	t = bpe_ids(fd->be);
	ids_room(fd, (size_t)k + 1);
	for (i = 0; i < (size_t)k; i++)
		fd->ids[i] = t[i];
	fd->n = (size_t)k;
	fd->ntok += (uint64_t)k;
	if (add_eos && eos)
		fd->ids[fd->n++] = eos_id;
	return 0;
}

/* Encode one column into fd->ids.  0, or -1 with a message in c->err. */
static int
encode_field(struct ctx *c, struct field *fd, const uint8_t *p, size_t n,
    int add_eos)
{
	size_t nids = 0, i;
	uint64_t esc0;

	if (spm_mode)
		return encode_spm(c, fd, p, n, add_eos);
	if (bpe_mode)
		return encode_bpe(c, fd, p, n, add_eos);
	if (strip)
		sw_strip(&p, &n);
	if (wordpiece) {
		long k = wp_encode(fd->wt, p, n, &fd->ids, &fd->cap);

		if (k < 0) {
			if (errno == ENOMEM)
				die_errno("encode");
			snprintf(c->err, sizeof(c->err), "%s: %s", fd->vpath,
			    wp_strerror(fd->wt));
			return -1;
		}
		fd->n = (size_t)k;
		fd->ntok += (uint64_t)k;
		if (fd->unk >= 0)
			for (i = 0; i < fd->n; i++)
				fd->nunk += fd->ids[i] == fd->unk;
		if (add_eos && eos) {
			if (fd->n + 1 > fd->cap) {
				size_t cap = fd->cap ? fd->cap * 2 : 64;

				fd->ids = xreallocarray(fd->ids, cap,
				    sizeof(*fd->ids));
				fd->cap = cap;
			}
			fd->ids[fd->n++] = eos_id;
		}
		return 0;
	}
	esc0 = sw_encode_escapes(fd->sw);
	if (sw_encode(fd->sw, p, n, &c->tmp32, &nids, &c->tmp32cap) == -1) {
		if (errno == ENOMEM)
			die_errno("encode");
		snprintf(c->err, sizeof(c->err), "%s: %s", fd->vpath,
		    sw_vocab_strerror(fd->sw));
		return -1;
	}
	if (nids + 1 > fd->cap) {
		size_t cap = fd->cap ? fd->cap : 64;

		while (cap < nids + 1)
			cap *= 2;
		fd->ids = xreallocarray(fd->ids, cap, sizeof(*fd->ids));
		fd->cap = cap;
	}
	for (i = 0; i < nids; i++)
		fd->ids[i] = c->tmp32[i];
	fd->ntok += sw_cplen(p, n);
	fd->nunk += sw_encode_escapes(fd->sw) - esc0;
	if (add_eos && eos)
		fd->ids[nids++] = eos_id;
	fd->n = nids;
	return 0;
}

/*
 * The end of a document: an Example without features (records), or an
 * empty line (id and piece output).
 */
static void
emit_doc_end(struct ctx *c)
{
	static const uint8_t empty_example[2] = { 0x0a, 0x00 };
	uint8_t hdr[8];

	if (outfmt != FMT_RECORDS) {
		put(c, "\n", 1);
		return;
	}
	if (c->direct) {
		if (rec_write(rw, empty_example, sizeof empty_example) == -1)
			write_failed(outname);
		return;
	}
	rp_put_le64(hdr, sizeof empty_example);
	put(c, hdr, 8);
	put(c, empty_example, sizeof empty_example);
}

/* A line of nothing but Python whitespace (str.strip() leaves nothing). */
static int
blank(const uint8_t *p, size_t n)
{
	sw_strip(&p, &n);
	return n == 0;
}

/*
 * Whether a line of one field is the end of a document (recpipe(5)): a
 * blank line in WordPiece mode, as in BERT's corpora, and in subword
 * mode's records.  Subword mode's id and piece output keep what
 * tensor2tensor encodes, an empty sequence (EOS alone with --eos); with
 * --no-strip only an empty line is blank there.  The modes that read
 * lines as they are (spm, bpe) keep every line a sequence, as spm_encode
 * and tiktoken do.
 */
static int
ends_doc(const uint8_t *p, size_t n)
{
	if (wordpiece)
		return blank(p, n);
	if (RAW_LINES || outfmt != FMT_RECORDS)
		return 0;
	return n == 0 || (strip && blank(p, n));
}

static void
append_ids(struct field *fd, const int64_t *v, size_t k)
{
	if (fd->n + k > fd->cap) {
		size_t cap = fd->cap ? fd->cap : 64;

		while (cap < fd->n + k)
			cap *= 2;
		fd->ids = xreallocarray(fd->ids, cap, sizeof(*fd->ids));
		fd->cap = cap;
	}
	memcpy(fd->ids + fd->n, v, k * sizeof(*v));
	fd->n += k;
}

/* Swap the held-back sentence with field 0's ids. */
static void
swap_prev(struct ctx *c)
{
	struct field *fd = &c->f[0];
	int64_t *t = fd->ids;
	size_t n = fd->n, cap = fd->cap;

	fd->ids = c->prev;
	fd->n = c->prevn;
	fd->cap = c->prevcap;
	c->prev = t;
	c->prevn = n;
	c->prevcap = cap;
}

/*
 * One JSON line, one document (Megatron's preprocess_data.py): with one
 * key, a record per sentence that has tokens, --eos after the last of
 * them, then the end of the document; with several, one record with a
 * feature per key holding its whole document.
 */
static int
encode_json_doc(struct ctx *c, const uint8_t *p, size_t n)
{
	size_t f, i;
	int held = 0;

	if (jd_parse(&c->jl, p, n, c->err, sizeof(c->err)) == -1)
		return -1;
	for (f = 0; f < njkeys; f++) {
		struct field *fd = &c->f[f];

		if (jd_sentences(&c->jl, jkeys[f],
		    c->err, sizeof(c->err)) == -1) {
			if (errno == ENOMEM)
				die_errno("encode");
			return -1;
		}
		if (njkeys > 1) {
			struct field tmp = *fd;
			int rc;

			fd->n = 0;
			for (i = 0; i < c->jl.n; i++) {
				tmp.ids = c->prev;
				tmp.cap = c->prevcap;
				tmp.n = 0;
				rc = encode_field(c, &tmp, (const uint8_t *)c->jl.s[i],
				    c->jl.len[i], 0);
				c->prev = tmp.ids;
				c->prevcap = tmp.cap;
				if (rc == -1)
					return -1;
				append_ids(fd, tmp.ids, tmp.n);
			}
			if (eos && fd->n > 0)
				append_ids(fd, &eos_id, 1);
			continue;
		}
		for (i = 0; i < c->jl.n; i++) {
			if (encode_field(c, fd, (const uint8_t *)c->jl.s[i],
			    c->jl.len[i], 0) == -1)
				return -1;
			if (fd->n == 0)
				continue;	/* Megatron drops empty sentences */
			if (held) {
				swap_prev(c);
				emit(c);
				swap_prev(c);
			}
			swap_prev(c);
			held = 1;
		}
		if (held) {
			swap_prev(c);
			if (eos)
				append_ids(fd, &eos_id, 1);
			emit(c);
		}
		emit_doc_end(c);
	}
	if (njkeys > 1)
		emit(c);
	return 0;
}

/*
 * A JSON line goes out whole or not at all: its records are gathered
 * in c->out (as a worker gathers them), so that a fault in a later
 * sentence leaves out the earlier ones, and the output is then what the
 * lines before it give.
 */
static int
encode_json_line(struct ctx *c, const uint8_t *p, size_t n)
{
	size_t start = c->out->len, i, len;
	int direct = c->direct, rc;

	c->direct = 0;
	rc = encode_json_doc(c, p, n);
	c->direct = direct;
	if (rc == -1) {
		c->out->len = start;
		return -1;
	}
	if (!direct)
		return 0;
	if (outfmt != FMT_RECORDS) {
		line_done(c);
		return 0;
	}
	for (i = start; i + 8 <= c->out->len; i += 8 + len) {
		len = (size_t)rp_le64((uint8_t *)c->out->p + i);
		if (rec_write(rw, c->out->p + i + 8, len) == -1)
			write_failed(outname);
	}
	c->out->len = start;
	return 0;
}

/* Encode and emit one line.  0, or -1 with a message in c->err. */
static int
encode_line(struct ctx *c, const uint8_t *p, size_t n)
{
	const uint8_t *q, *tab;
	size_t f;

	if (jsonl)
		return encode_json_line(c, p, n);
	if (nfields == 1) {
		if (memchr(p, '\t', n) != NULL)
			c->tabbed++;
		if (ends_doc(p, n)) {
			emit_doc_end(c);
			return 0;
		}
		if (encode_field(c, &c->f[0], p, n, 1) == -1)
			return -1;
		emit(c);
		return 0;
	}
	/* tensor2tensor's tab iterator: strip, split, strip each part. */
	if (strip && !RAW_LINES)
		sw_strip(&p, &n);
	q = p;
	for (f = 0; f + 1 < nfields; f++) {
		if ((tab = memchr(q, '\t', n - (size_t)(q - p))) == NULL)
			break;
		q = tab + 1;
	}
	if (f + 1 < nfields || n == 0) {
		c->skipped++;
		return 0;
	}
	q = p;
	for (f = 0; f < nfields; f++) {
		size_t len = n - (size_t)(q - p);

		if (f + 1 < nfields)
			len = (size_t)((const uint8_t *)memchr(q, '\t', len) - q);
		if (encode_field(c, &c->f[f], q, len, 1) == -1)
			return -1;
		q += len + 1;
	}
	emit(c);
	return 0;
}

static struct ctx mainctx;
/* File scope: still reachable when a fault exits (leak checkers). */
static struct sw_lines *lines_r;
static struct sw_lines *raw_r;

/* The lines of fd (of the file 'name'), only those of part pf when given; dies on failure. */
static struct sw_lines *
lines_open(int fd, const char *name, const struct part_file *pf)
{
	struct sw_lines *r;

	if ((r = sw_lines_open(fd)) == NULL)
		die_errno("%s", name);
	if (pf != NULL && sw_lines_range(r, pf->from, pf->to - pf->from) == -1)
		die_errno("%s", name);
	return r;
}

/* SentencePiece and BPE modes: lines as spm_encode and tiktoken read them (split at \n only). */
static int
encode_file_raw(const char *path, int fd, const struct part_file *pf)
{
	const char *name = input_name(path);
	const uint8_t *p;
	size_t n;
	int rc;

	raw_r = lines_open(fd, name, pf);
	while ((rc = sw_lines_next_raw(raw_r, &p, &n)) == 1) {
		if (progress_due())
			progress("%s: %ju lines", name,
			    (uintmax_t)sw_lines_lineno(raw_r));
		if (encode_line(&mainctx, p, n) == -1) {
			flush_all();
			die("%s: line %ju: %s", name,
			    (uintmax_t)sw_lines_lineno(raw_r), mainctx.err);
		}
	}
	if (rc == -1)
		die_errno("%s", name);
	sw_lines_free(raw_r);
	raw_r = NULL;
	close_text(fd, path);
	return 0;
}

static int
encode_file(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path);
	static struct sw_lines *r;	/* still reachable when a fault exits */
	const uint8_t *p;
	size_t n;
	int fd, nl, rc;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((fd = pf != NULL ? open_text_part(path) : open_text(path)) == -1)
		return 1;
	if (RAW_LINES && !jsonl)
		return encode_file_raw(path, fd, pf);
	r = lines_r = lines_open(fd, name, pf);
	while ((rc = sw_lines_next(r, &p, &n, &nl)) == 1) {
		if (progress_due())
			progress("%s: %ju lines", name, (uintmax_t)sw_lines_lineno(r));
		if (encode_line(&mainctx, p, n) == -1) {
			flush_all();
			die("%s: line %ju: %s", name, (uintmax_t)sw_lines_lineno(r),
			    mainctx.err);
		}
	}
	if (rc == -1)
		die_errno("%s", name);
	if (rc == -2) {
		flush_all();
		die("%s: %s", name, sw_lines_strerror(r));
	}
	sw_lines_free(lines_r);
	lines_r = NULL;
	close_text(fd, path);
	return 0;
}

/*
 * --parallel: line i of each of the nfields files makes one record, as
 * tensor2tensor's text2text_txt_iterator zips a source and a target file
 * (each line stripped, blank lines kept).  Files of different lengths
 * are an error naming both and the line where one ends.
 */
static int
encode_parallel(char **paths)
{
	static struct sw_lines *r[8];	/* still reachable when a fault exits */
	static struct sw_lines *sr[8];	/* RAW_LINES: lines as spm_encode reads them */
	const uint8_t *p[8];
	size_t n[8], f, g;
	int fd[8], nl, rc[8], ended;
	uint64_t line = 0;

	for (f = 0; f < nfields; f++) {
		if ((fd[f] = open_text(paths[f])) == -1)
			exit(1);
		if (RAW_LINES ? (sr[f] = sw_lines_open(fd[f])) == NULL :
		    (r[f] = sw_lines_open(fd[f])) == NULL)
			die_errno("%s", input_name(paths[f]));
	}
	for (;;) {
		ended = 0;
		for (f = 0; f < nfields; f++) {
			rc[f] = RAW_LINES ? sw_lines_next_raw(sr[f], &p[f], &n[f]) :
			    sw_lines_next(r[f], &p[f], &n[f], &nl);
			if (rc[f] == -1)
				die_errno("%s", input_name(paths[f]));
			if (rc[f] == -2) {
				flush_all();
				die("%s: %s", input_name(paths[f]),
				    sw_lines_strerror(r[f]));
			}
			ended += rc[f] == 0;
		}
		if (ended == (int)nfields)
			break;
		line++;
		if (ended > 0) {
			for (f = 0; rc[f] != 0; f++)
				;
			for (g = 0; rc[g] == 0; g++)
				;
			flush_all();
			die("%s: line %ju has no partner: %s ends after %ju "
			    "lines (--parallel files must have as many lines "
			    "each)", input_name(paths[g]), (uintmax_t)line,
			    input_name(paths[f]), (uintmax_t)(line - 1));
		}
		if (progress_due())
			progress("%s: %ju lines", input_name(paths[0]),
			    (uintmax_t)line);
		/* tensor2tensor's compile_data(): a pair with an empty side goes. */
		for (f = 0; skip_empty && f < nfields; f++)
			if (n[f] == 0 || (strip && blank(p[f], n[f])))
				break;
		if (skip_empty && f < nfields) {
			mainctx.skipped++;
			continue;
		}
		for (f = 0; f < nfields; f++)
			if (encode_field(&mainctx, &mainctx.f[f], p[f], n[f], 1) == -1) {
				flush_all();
				die("%s: line %ju: %s", input_name(paths[f]),
				    (uintmax_t)line, mainctx.err);
			}
		emit(&mainctx);
	}
	for (f = 0; f < nfields; f++) {
		sw_lines_free(r[f]);
		r[f] = NULL;
		sw_lines_free(sr[f]);
		sr[f] = NULL;
		close_text(fd[f], paths[f]);
	}
	return 0;
}

/*
 * Parallel encoding (-j, lib/pool.h): the input is cut into chunks of
 * whole lines, read in turn; each thread encodes its chunk with
 * encoders of its own, and the chunks are written in input order.
 */
#define CHUNK_BYTES	(1 << 18)

struct chunk {
	uint8_t		*in;
	size_t		 inlen, incap;
	uint64_t	 base;		/* input offset of in[0] */
	struct obuf	 out;		/* growing, in memory */
	uint64_t	 nlines, skipped, tabbed;
	int		 err;		/* 0, 1 invalid UTF-8, 2 encoding */
	uint64_t	 eline, eoff;	/* in the chunk */
	char		 emsg[320];
};

static int jobs;		/* -j; 0: jobs_count() decides */
static struct chunk *chunks;	/* one per thread */
static struct ctx *wctx;

/* The file being encoded, used in the turns. */
static struct {
	const char	*path, *name;
	int		 fd;
	struct buf	 carry;		/* a partial line read after a chunk */
	uint64_t	 base;		/* input offset of the next chunk */
	struct rp_limit	 lim;		/* the part's bytes */
	uint64_t	 lines;		/* lines written */
	char		 msg[512];	/* the fault that ended the run */
} jf;

static void
encode_chunk(struct ctx *c, struct chunk *ch)
{
	struct sw_lines *r;
	const uint8_t *p;
	size_t n;
	int nl, rc;

	ch->out.len = 0;
	ch->err = 0;
	c->out = &ch->out;
	c->skipped = 0;
	c->tabbed = 0;
	if (RAW_LINES && !jsonl) {
		struct sw_lines *sr;

		if ((sr = sw_lines_open_mem(ch->in, ch->inlen)) == NULL)
			die_errno("encode");
		while ((rc = sw_lines_next_raw(sr, &p, &n)) == 1)
			if (encode_line(c, p, n) == -1) {
				ch->err = 2;
				ch->eline = sw_lines_lineno(sr);
				snprintf(ch->emsg, sizeof(ch->emsg), "%s", c->err);
				break;
			}
		ch->nlines = sw_lines_lineno(sr);
		ch->skipped = c->skipped;
		ch->tabbed = c->tabbed;
		sw_lines_free(sr);
		return;
	}
	if ((r = sw_lines_open_mem(ch->in, ch->inlen)) == NULL)
		die_errno("encode");
	while ((rc = sw_lines_next(r, &p, &n, &nl)) == 1)
		if (encode_line(c, p, n) == -1) {
			ch->err = 2;
			ch->eline = sw_lines_lineno(r);
			snprintf(ch->emsg, sizeof(ch->emsg), "%s", c->err);
			break;
		}
	if (rc == -1)
		die_errno("encode");
	if (rc == -2) {
		ch->err = 1;
		ch->eline = sw_lines_error_line(r);
		ch->eoff = sw_lines_error_offset(r);
	}
	ch->nlines = sw_lines_lineno(r);
	ch->skipped = c->skipped;
	ch->tabbed = c->tabbed;
	sw_lines_free(r);
}

/* Encoders of their own for a worker: vocab shares, tokenizers. */
static void
ctx_init(struct ctx *c)
{
	size_t f, j;

	memset(c, 0, sizeof(*c));
	c->f = xcalloc(nfields, sizeof(*c->f));
	for (f = 0; f < nfields; f++) {
		c->f[f].name = fields[f].name;
		c->f[f].vpath = fields[f].vpath;
		if (spm_mode) {
			c->f[f].sm = fields[f].sm;
			c->f[f].nmsp = fields[f].nmsp;
			memcpy(c->f[f].msp, fields[f].msp, sizeof(c->f[f].msp));
			if ((c->f[f].se = spm_enc_new(fields[f].sm)) == NULL ||
			    spm_enc_set_specials(c->f[f].se, fields[f].msp,
			    fields[f].nmsp) == -1)
				die_errno("jobs");
			spm_enc_set_extra(c->f[f].se, spm_x, spm_nx);
			continue;
		}
		if (bpe_mode) {
			c->f[f].bm = fields[f].bm;
			if ((c->f[f].be = bpe_enc_new(fields[f].bm)) == NULL)
				die_errno("jobs");
			bpe_enc_allow_special(c->f[f].be, allow_special);
			continue;
		}
		if (wordpiece) {
			c->f[f].wp = fields[f].wp;
			c->f[f].unk = fields[f].unk;
			if ((c->f[f].wt = wp_tok_new(fields[f].wp, &wpo)) == NULL)
				die_errno("jobs");
			continue;
		}
		for (j = 0; j < f && fields[j].sw != fields[f].sw; j++)
			;
		if (j < f)
			c->f[f].sw = c->f[j].sw;
		else if ((c->f[f].sw = sw_vocab_share(fields[f].sw)) == NULL)
			die_errno("jobs");
	}
}

static void
ctx_free(struct ctx *c)
{
	size_t f, j;

	for (f = 0; f < nfields; f++) {
		fields[f].ntok += c->f[f].ntok;
		fields[f].nunk += c->f[f].nunk;
		for (j = f + 1; j < nfields; j++)
			if (c->f[j].sw == c->f[f].sw)
				c->f[j].sw = NULL;
		sw_vocab_free(c->f[f].sw);
		wp_tok_free(c->f[f].wt);
		spm_enc_free(c->f[f].se);
		bpe_enc_free(c->f[f].be);
		rp_buf_free(&c->f[f].ptext);
		free(c->f[f].ids);
	}
	free(c->f);
	free(c->tmp32);
	free(c->prev);
	jd_free(&c->jl);
	example_free(c);
}

static void
jobs_start(void)
{
	int i;

	chunks = xcalloc((size_t)jobs, sizeof(*chunks));
	wctx = xcalloc((size_t)jobs, sizeof(*wctx));
	for (i = 0; i < jobs; i++) {
		ctx_init(&wctx[i]);
		obuf_open(&chunks[i].out, -1, NULL, 0);
	}
}

static void
jobs_stop(void)
{
	int i;

	for (i = 0; i < jobs; i++) {
		ctx_free(&wctx[i]);
		free(chunks[i].in);
		obuf_close(&chunks[i].out);
	}
	free(chunks);
	free(wctx);
}

/* Grow *p to hold at least need bytes. */
static void
grow(uint8_t **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;

	if (need <= *cap)
		return;
	while (c < need)
		c *= 2;
	*p = xreallocarray(*p, c, 1);
	*cap = c;
}

/* The last newline in p[0..n), or NULL. */
static uint8_t *
last_nl(uint8_t *p, size_t n)
{
	while (n > 0)
		if (p[--n] == '\n')
			return p + n;
	return NULL;
}

/* Read a chunk of whole lines: at least CHUNK_BYTES, up to a newline. */
static int
chunk_read(void *arg, const struct pool_unit *u)
{
	struct chunk *ch = &chunks[u->worker];
	ssize_t k;
	int eof = 0;
	uint8_t *nl;

	(void)arg;
	ch->inlen = 0;
	ch->err = 0;
	ch->out.len = 0;
	if (jf.carry.len > 0) {
		grow(&ch->in, &ch->incap, jf.carry.len);
		memcpy(ch->in, jf.carry.p, jf.carry.len);
		ch->inlen = jf.carry.len;
		jf.carry.len = 0;
	}
	for (;;) {
		grow(&ch->in, &ch->incap, ch->inlen + CHUNK_BYTES);
		k = rp_limit_read(&jf.lim, jf.fd, ch->in + ch->inlen,
		    ch->incap - ch->inlen);
		if (k == -1)
			die_errno("%s", jf.name);
		if (k == 0) {
			eof = 1;
			break;
		}
		ch->inlen += (size_t)k;
		if (ch->inlen >= CHUNK_BYTES && last_nl(ch->in, ch->inlen) != NULL)
			break;
	}
	if (!eof) {
		nl = last_nl(ch->in, ch->inlen);
		if (rp_buf_append(&jf.carry, nl + 1,
		    (size_t)(ch->in + ch->inlen - (nl + 1))) == -1)
			die_errno("%s", jf.name);
		ch->inlen = (size_t)(nl + 1 - ch->in);
	}
	ch->base = jf.base;
	jf.base += ch->inlen;
	if (progress_due())
		progress("%s: %ju bytes", jf.name, (uintmax_t)jf.base);
	return eof ? POOL_LAST : POOL_MORE;
}

static void
chunk_encode(void *arg, const struct pool_unit *u)
{
	(void)arg;
	encode_chunk(&wctx[u->worker], &chunks[u->worker]);
}

/* Write a chunk's output; a fault in it ends the run (jf.msg). */
static int
chunk_write(void *arg, const struct pool_unit *u)
{
	struct chunk *ch = &chunks[u->worker];
	size_t i, len;

	(void)arg;
	if (outfmt != FMT_RECORDS)
		obuf_put_direct(&ob, ch->out.p, ch->out.len);
	else
		for (i = 0; i + 8 <= ch->out.len; i += 8 + len) {
			len = (size_t)rp_le64((uint8_t *)ch->out.p + i);
			if (rec_write(rw, ch->out.p + i + 8, len) == -1)
				write_failed(outname);
		}
	mainctx.skipped += ch->skipped;
	mainctx.tabbed += ch->tabbed;
	if (ch->err == 1) {
		snprintf(jf.msg, sizeof jf.msg, "%s: line %ju: invalid UTF-8 "
		    "at byte offset %ju", jf.name, (uintmax_t)(jf.lines + ch->eline),
		    (uintmax_t)(ch->base + ch->eoff));
		return 1;
	}
	if (ch->err == 2) {
		snprintf(jf.msg, sizeof jf.msg, "%s: line %ju: %s", jf.name,
		    (uintmax_t)(jf.lines + ch->eline), ch->emsg);
		return 1;
	}
	jf.lines += ch->nlines;
	return 0;
}

static const struct pool_ops chunk_ops = { chunk_read, chunk_encode, chunk_write };

static int
encode_file_jobs(const char *path, const struct part_file *pf)
{
	if (pf != NULL && pf->from == pf->to)
		return 0;
	memset(&jf, 0, sizeof jf);
	jf.path = path;
	jf.name = input_name(path);
	if ((jf.fd = pf != NULL ? open_text_part(path) : open_text(path)) == -1)
		return 1;
	if (pf != NULL) {
		if (rp_limit_seek(&jf.lim, jf.fd, pf->from, pf->to - pf->from) == -1)
			die_errno("%s", jf.name);
		jf.base = pf->from;
	}
	if (pool_run(jobs, &chunk_ops, NULL) != 0) {
		rp_buf_free(&jf.carry);
		flush_all();
		die("%s", jf.msg);
	}
	rp_buf_free(&jf.carry);
	close_text(jf.fd, path);
	return 0;
}

static struct buf text;
static char *wptext;
static size_t wpcap;

/* Decode int64 ids (records) with a SentencePiece model. */
static long
spm_decode_i64(const struct spm_model *m, const int64_t *v, size_t n,
    char **out, size_t *cap, char *err, size_t errlen)
{
	int32_t *ids;
	size_t i;
	long k;

	if ((ids = malloc((n + 1) * sizeof(*ids))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (v[i] < 0 || (uint64_t)v[i] >= spm_size(m)) {
			snprintf(err, errlen, "id %lld out of range (model "
			    "has %zu pieces)", (long long)v[i], spm_size(m));
			free(ids);
			errno = EINVAL;
			return -1;
		}
		ids[i] = (int32_t)v[i];
	}
	k = spm_decode_ids(m, ids, n, out, cap, err, errlen);
	free(ids);
	return k;
}

/* atoi() as spm_decode reads an id: strtol's value, cut to int. */
static int32_t
spm_atoi(const uint8_t *p, size_t n)
{
	char tmp[64];
	size_t k = n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1;

	memcpy(tmp, p, k);
	tmp[k] = '\0';
	return (int32_t)(uint32_t)(unsigned long)strtol(tmp, NULL, 10);
}

/*
 * -d -m spm --input-format id|piece: spm_decode's reading, a line split
 * at single spaces with the empty tokens skipped; an id out of range
 * fails after the lines before it are written.
 */
static int
decode_spm_file(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path);
	static struct sw_lines *r;	/* still reachable when a fault exits */
	static const char **pc;
	static size_t *lens;
	static int32_t *ids;
	static size_t cap;
	const struct spm_model *m = fields[0].sm;
	char err[RP_ERRMAX];
	const uint8_t *p, *q;
	size_t n, i, j, k;
	long len;
	int fd, rc;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((fd = pf != NULL ? open_text_part(path) : open_text(path)) == -1)
		return 1;
	r = lines_open(fd, name, pf);
	while ((rc = sw_lines_next_raw(r, &p, &n)) == 1) {
		if (n + 1 > cap) {
			cap = n + 1;
			if ((pc = realloc(pc, cap * sizeof(*pc))) == NULL ||
			    (lens = realloc(lens, cap * sizeof(*lens))) == NULL ||
			    (ids = realloc(ids, cap * sizeof(*ids))) == NULL)
				die_errno("%s", name);
		}
		for (i = k = 0; i < n; i = j + 1) {
			q = memchr(p + i, ' ', n - i);
			j = q != NULL ? (size_t)(q - p) : n;
			if (j == i)
				continue;
			pc[k] = (const char *)p + i;
			lens[k] = j - i;
			if (infmt == FMT_ID)
				ids[k] = spm_atoi(p + i, j - i);
			k++;
		}
		if (infmt == FMT_ID)
			len = spm_decode_ids(m, ids, k, &wptext, &wpcap,
			    err, sizeof err);
		else
			len = spm_decode_pieces(m, pc, lens, k, &wptext, &wpcap,
			    err, sizeof err);
		if (len < 0) {
			if (errno == ENOMEM)
				die("%s: line %ju: out of memory", name,
				    (uintmax_t)sw_lines_lineno(r));
			flush_all();
			die("%s: line %ju: %s", name,
			    (uintmax_t)sw_lines_lineno(r), err);
		}
		put(&mainctx, wptext, (size_t)len);
		put(&mainctx, "\n", 1);
		line_done(&mainctx);
	}
	if (rc == -1)
		die_errno("%s", name);
	sw_lines_free(r);
	r = NULL;
	free(pc);
	free(lens);
	free(ids);
	pc = NULL;
	lens = NULL;
	ids = NULL;
	cap = 0;
	close_text(fd, path);
	return 0;
}

/* tiktoken's decode_bytes(): the bytes of each id, as they are. */
static void
decode_bpe(struct ctx *c, const struct field *fd, size_t start)
{
	size_t bad;

	text.len = 0;
	if (bpe_decode(fd->bm, fd->ids, fd->n, &text, &bad) == -1) {
		c->out->len = start;	/* not half a line */
		if (errno == ENOMEM)
			out_of_memory();
		flush_all();
		die("%s: id %lld is not in %s (%s)", dec_where(),
		    (long long)fd->ids[bad], input_name(fd->vpath),
		    tiktoken_mode ? encoding_name : "encoder.json");
	}
	put(c, text.p, text.len);
}

static void
decode_emit(void)
{
	struct ctx *c = &mainctx;
	char err[RP_ERRMAX];
	size_t f, start = c->out->len;
	long k;

	for (f = 0; f < nfields; f++) {
		if (f > 0)
			put(c, "\t", 1);
		if (bpe_mode) {
			decode_bpe(c, &fields[f], start);
			continue;
		}
		if (spm_mode || wordpiece) {
			k = spm_mode ? spm_decode_i64(fields[f].sm, fields[f].ids,
			    fields[f].n, &wptext, &wpcap, err, sizeof err) :
			    wp_decode(fields[f].wp, fields[f].ids, fields[f].n,
			    &wptext, &wpcap, err, sizeof err);
			if (k < 0) {
				c->out->len = start;	/* not half a line */
				if (errno == ENOMEM)
					out_of_memory();
				flush_all();
				die("%s: %s", dec_where(), err);
			}
			put(c, wptext, (size_t)k);
			continue;
		}
		text.len = 0;
		if (sw_decode(fields[f].sw, fields[f].ids, fields[f].n,
		    strip_extraneous, &text) == -1)
			out_of_memory();
		put(c, text.p, text.len);
	}
	put(c, "\n", 1);
	line_done(c);
}

/* Parse space-separated ids into fd->ids. */
static int
parse_ids(struct field *fd, const uint8_t *p, size_t n)
{
	size_t i = 0, j;
	uint64_t u;
	int neg;

	fd->n = 0;
	while (i < n) {
		if (p[i] == ' ') {
			i++;
			continue;
		}
		neg = p[i] == '-';
		j = i + (size_t)neg;
		u = 0;
		if (j >= n || p[j] < '0' || p[j] > '9')
			return -1;
		for (; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
			if (u > (UINT64_MAX - 9) / 10)
				return -1;
			u = u * 10 + (uint64_t)(p[j] - '0');
		}
		if (j < n && p[j] != ' ')
			return -1;
		if (u > (uint64_t)INT64_MAX + (uint64_t)neg)
			return -1;
		if (fd->n == fd->cap) {
			size_t c = fd->cap ? fd->cap * 2 : 64;

			if ((fd->ids = realloc(fd->ids, c * sizeof(*fd->ids))) == NULL)
				return -2;
			fd->cap = c;
		}
		fd->ids[fd->n++] = neg ? (int64_t)(0 - u) : (int64_t)u;
		i = j;
	}
	return 0;
}

static int
decode_ids_file(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path);
	static struct sw_lines *r;	/* still reachable when a fault exits */
	const uint8_t *p;
	size_t n, f, len;
	int fd, nl, rc, k;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((fd = pf != NULL ? open_text_part(path) : open_text(path)) == -1)
		return 1;
	r = lines_open(fd, name, pf);
	dec.name = name;
	dec.what = "line";
	dec.off = UINT64_MAX;
	while ((rc = sw_lines_next(r, &p, &n, &nl)) == 1) {
		dec.num = sw_lines_lineno(r);
		for (f = 0; f < nfields; f++) {
			const uint8_t *tab = f + 1 < nfields ? memchr(p, '\t', n) : NULL;

			if (f + 1 < nfields && tab == NULL) {
				flush_all();
				die("%s: line %ju: expected %zu tab-separated fields",
				    name, (uintmax_t)sw_lines_lineno(r), nfields);
			}
			len = tab ? (size_t)(tab - p) : n;
			if ((k = parse_ids(&fields[f], p, len)) != 0) {
				if (k == -2)
					die("%s: line %ju: out of memory", name,
					    (uintmax_t)sw_lines_lineno(r));
				flush_all();
				die("%s: line %ju: not a list of ids", name,
				    (uintmax_t)sw_lines_lineno(r));
			}
			p += len + (tab != NULL);
			n -= len + (tab != NULL);
		}
		decode_emit();
	}
	dec.name = NULL;
	if (rc == -1)
		die_errno("%s", name);
	if (rc == -2) {
		flush_all();
		die("%s: %s", name, sw_lines_strerror(r));
	}
	sw_lines_free(r);
	close_text(fd, path);
	return 0;
}

/*
 * Records longer than BIG_RECORD are decoded a part of BIG_PART ids at
 * a time, from the record to the output, so that such a record costs
 * about its own size in memory, not 8 bytes an id and its text.
 */
#define BIG_RECORD	(16u << 20)
#define BIG_PART	(64u << 10)

/*
 * A record -d cannot decode: the field it lacks, or why it is not an
 * Example.
 */
static _Noreturn void
bad_record(const uint8_t *p, size_t n, const char *field, long k)
{
	struct example ex;

	flush_all();
	if (k == -1)
		die("%s: no int64 feature '%s'", dec_where(), field);
	ex_init(&ex);
	if (ex_check(&ex, p, n, EX_TYPE_EXAMPLE) == -1)
		die("%s: malformed Example: %s", dec_where(), ex_strerror(&ex));
	die("%s: malformed Example", dec_where());
}

/* A part of a huge line: out as soon as a megabyte is gathered. */
static void
put_part(const void *p, size_t n)
{
	put(&mainctx, p, n);
	if (ob.len >= (1 << 20))
		flush_text();
}

static void
decode_big(const uint8_t *p, size_t n)
{
	struct ex_int64_iter it[8];
	struct sw_decoder d;
	char err[WP_ERRMAX];
	int64_t *v;
	size_t f, k, i;
	uint64_t done;
	const char *s;
	long len;
	int rc;

	/* Every field is found and every id checked before any output. */
	for (f = 0; f < nfields; f++)
		if ((rc = ex_int64_open(&it[f], p, n, fields[f].name)) != 0)
			bad_record(p, n, fields[f].name, rc);
	if ((v = malloc(BIG_PART * sizeof *v)) == NULL)
		out_of_memory();
	for (f = 0; wordpiece && f < nfields; f++)
		while ((k = ex_int64_next(&it[f], v, BIG_PART)) > 0)
			for (i = 0; i < k; i++)
				if (wp_piece(fields[f].wp, v[i], NULL) == NULL) {
					flush_all();
					die("%s: id %lld out of range (vocab has "
					    "%zu entries)", dec_where(), (long long)v[i],
					    wp_vocab_size(fields[f].wp));
				}
	for (f = 0; f < nfields; f++) {
		if (f > 0)
			put(&mainctx, "\t", 1);
		(void)ex_int64_open(&it[f], p, n, fields[f].name);
		memset(&d, 0, sizeof d);
		for (done = 0; (k = ex_int64_next(&it[f], v, BIG_PART)) > 0;
		    done += k) {
			text.len = 0;
			if (!wordpiece) {
				if (sw_decode_part(fields[f].sw, &d, v, k,
				    strip_extraneous, &text) == -1)
					out_of_memory();
				put_part(text.p, text.len);
				continue;
			}
			/* A part after the first goes on as wp_decode() would. */
			if ((len = wp_decode(fields[f].wp, v, k, &wptext, &wpcap,
			    err, sizeof err)) < 0)
				out_of_memory();
			s = wp_piece(fields[f].wp, v[0], &i);
			if (done > 0) {
				if (i >= 2 && s[0] == '#' && s[1] == '#') {
					s = wptext + 2;
					len -= 2;
				} else {
					put(&mainctx, " ", 1);
					s = wptext;
				}
			} else
				s = wptext;
			put_part(s, (size_t)len);
		}
		if (!wordpiece) {
			text.len = 0;
			if (sw_decode_end(fields[f].sw, &d, &text) == -1)
				out_of_memory();
			put_part(text.p, text.len);
		}
	}
	put(&mainctx, "\n", 1);
	line_done(&mainctx);
	free(v);
}

static int
decode_records_file(const char *path, const struct part_file *pf)
{
	const char *name = input_name(path);
	static struct rec_reader *rr;	/* still reachable when a fault exits */
	const uint8_t *p;
	size_t n, f;
	long k;
	int fd, rc;

	if (pf != NULL && pf->from == pf->to)
		return 0;
	if ((fd = open_input(path)) == -1)
		return 1;
	if ((rr = rec_reader_open(fd, pf != NULL ? pf->comp : REC_AUTO, 0,
	    max_len)) == NULL)
		die_errno("%s", name);
	if (pf != NULL && pf->comp == REC_NONE &&
	    rec_reader_range(rr, pf->from, pf->to - pf->from) == -1)
		die_errno("%s", name);
	dec.name = name;
	dec.what = "record";
	while ((rc = rec_read(rr, &p, &n)) == 1) {
		dec.num = rec_index(rr) - 1;
		dec.off = rec_offset(rr);
		if (n == 0 || (n == 2 && p[0] == 0x0a && p[1] == 0x00)) {
			/* The end of a document (recpipe(5)): a blank line. */
			put(&mainctx, "\n", 1);
			line_done(&mainctx);
			continue;
		}
		if (n > BIG_RECORD && !spm_mode && !bpe_mode) {
			decode_big(p, n);
			continue;
		}
		for (f = 0; f < nfields; f++) {
			k = ex_int64_values(p, n, fields[f].name, &fields[f].ids,
			    &fields[f].cap);
			if (k == -3)
				out_of_memory();
			if (k < 0)
				bad_record(p, n, fields[f].name, k);
			fields[f].n = (size_t)k;
		}
		decode_emit();
	}
	dec.name = NULL;
	if (rc == -1) {
		flush_all();
		die("%s: record %ju at offset %ju: %s", name,
		    (uintmax_t)rec_index(rr), (uintmax_t)rec_offset(rr),
		    rec_strerror(rr));
	}
	rec_reader_free(rr);
	if (fd != 0)
		close(fd);
	return 0;
}

/* Split "a,b,c" into fields. */
static void
set_fields(const char *list)
{
	const char *s = list, *c;
	size_t i;

	nfields = 0;
	for (;;) {
		c = strchr(s, ',');
		if ((c ? (size_t)(c - s) : strlen(s)) == 0)
			usage_error("empty field name in --fields %s", list);
		fields = xreallocarray(fields, nfields + 1, sizeof(*fields));
		memset(&fields[nfields], 0, sizeof(*fields));
		fields[nfields].name = c ? strndup(s, (size_t)(c - s)) : strdup(s);
		if (fields[nfields].name == NULL)
			die_nomem();
		for (i = 0; i < nfields; i++)
			if (strcmp(fields[i].name, fields[nfields].name) == 0)
				usage_error("field %s given twice", fields[i].name);
		nfields++;
		if (c == NULL)
			break;
		s = c + 1;
	}
}

/* "-v name=path" names no field: say which are, and the closest. */
static _Noreturn void
no_field(const char *spec, const char *eq, const char *fieldlist)
{
	const char *names[64], *near;
	char name[256];
	size_t f, n = 0;

	snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
	for (f = 0; f < nfields && n < sizeof(names) / sizeof(*names); f++)
		names[n++] = fields[f].name;
	if ((near = closest_name(name, names, n)) != NULL)
		usage_error("-v %s: no field '%s'; did you mean '%s'? "
		    "(the fields are %s)", spec, name, near, fieldlist);
	usage_error("-v %s: no field '%s' (the fields are %s)", spec, name,
	    fieldlist);
}

/*
 * A WordPiece vocabulary and the case of the text: an uncased one with
 * --no-lower, or a cased one lower-cased by default, turns words into
 * [UNK] or other pieces without a word.  What the vocabulary is made of
 * decides, not any one entry (bert-base-uncased has "ℝ" and "##ℝ"): of
 * the entries with a cased letter ([SPECIAL] tokens aside), a cased
 * vocabulary has CASED_SHARE or more with an upper-case one.
 */
#define CASED_SHARE	0.01
static int lower_given;		/* --lower or --no-lower was given */
static int decode_mode;	/* -d */

static void
case_check(const struct field *fd)
{
	size_t id, len, i, ncased = 0, nupper = 0, size = wp_vocab_size(fd->wp);
	const uint8_t *p;
	uint32_t cp;
	int k, c, cased, upper;

	if (decode_mode)
		return;
	for (id = 0; id < size; id++) {
		if ((p = (const uint8_t *)wp_piece(fd->wp, (int64_t)id, &len)) == NULL)
			continue;
		if (len >= 2 && p[0] == '[' && p[len - 1] == ']')
			continue;
		cased = upper = 0;
		for (i = 0; i < len && !upper; i += (size_t)k) {
			if ((k = uni_utf8_decode(p + i, len - i, &cp)) <= 0)
				break;
			c = uni_category(cp);
			upper = c == UC_Lu || c == UC_Lt;
			cased |= upper || c == UC_Ll;
		}
		ncased += (size_t)cased;
		nupper += (size_t)upper;
	}
	if (ncased == 0)
		return;
	if ((double)nupper < CASED_SHARE * (double)ncased && !wpo.lower)
		warnx_("warning: %s: %zu of its %zu entries with cased letters "
		    "have an upper-case one (an uncased vocabulary) but "
		    "--no-lower keeps the text's case, so capitalised words "
		    "become [UNK] or other pieces; leave out --no-lower",
		    input_name(fd->vpath), nupper, ncased);
	else if ((double)nupper >= CASED_SHARE * (double)ncased && wpo.lower &&
	    !lower_given)
		warnx_("warning: %s: %zu of its %zu entries with cased letters "
		    "have an upper-case one (a cased vocabulary) but the text "
		    "is lower-cased; give --no-lower for a cased model "
		    "(do_lower_case=False), or --lower to keep this",
		    input_name(fd->vpath), nupper, ncased);
}

/*
 * The unknown share of each field at the end, as fairseq-preprocess
 * reports "replaced by <unk>": WordPiece's [UNK] and SentencePiece's
 * unknown pieces among the tokens, the characters subword mode escapes
 * as \NNN; (outside the vocabulary's alphabet) among the characters.
 * A line when there are any, a warning above UNK_WARN, a fault above
 * --max-unk-rate.  Returns 1 when a field is above --max-unk-rate.
 */
#define UNK_WARN	0.05
static double max_unk = -1;	/* --max-unk-rate; -1: none */

static int
unk_report(void)
{
	size_t f;
	double r;
	int over = 0;

	if (decode_mode || bpe_mode)	/* byte-level BPE: no unknown token */
		return 0;
	for (f = 0; f < nfields; f++) {
		const char *unit = "tokens", *fate = "replaced by [UNK]";
		char sfate[100];

		if (spm_mode) {
			size_t len;
			const char *s = spm_piece(fields[f].sm,
			    spm_unk_id(fields[f].sm), &len);

			/* With byte fallback, unknown characters are bytes. */
			snprintf(sfate, sizeof sfate, "replaced by %.*s%s",
			    (int)(len < 40 ? len : 40), s,
			    spm_piece_type(fields[f].sm, spm_piece_id(fields[f].sm,
			    "<0x00>", 6)) == SPM_BYTE ? " or byte pieces" : "");
			fate = sfate;
		} else if (!wordpiece) {
			unit = "characters";
			fate = "escaped as \\NNN;";
		}
		if (fields[f].ntok == 0 || fields[f].nunk == 0)
			continue;
		r = (double)fields[f].nunk / (double)fields[f].ntok;
		if (max_unk >= 0 && r > max_unk) {
			warnx_("%s: %.3g%% of %ju %s %s, above --max-unk-rate %g "
			    "(%s does not fit the text?)", fields[f].name,
			    100 * r, (uintmax_t)fields[f].ntok, unit, fate,
			    max_unk, input_name(fields[f].vpath));
			over = 1;
		} else if (r > UNK_WARN)
			warnx_("warning: %s: %.3g%% of %ju %s %s (%s does not "
			    "fit the text?)", fields[f].name, 100 * r,
			    (uintmax_t)fields[f].ntok, unit, fate,
			    input_name(fields[f].vpath));
		else if (verbosity > 0)
			warnx_("%s: %ju %s, %.3g%% %s", fields[f].name,
			    (uintmax_t)fields[f].ntok, unit, 100 * r, fate);
	}
	return over;
}

/* Read a vocabulary file whole (for a look at what it is), or NULL. */
static uint8_t *
slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	uint8_t *p;

	if (fd == -1)
		return NULL;
	p = read_all(fd, n, path);
	close(fd);
	return p;
}

/*
 * A vocabulary of another kind than the mode reads: say what it looks
 * like and which mode reads it (mode: the short name of this mode's
 * kind, which passes).
 */
static void
vocab_kind_check(const char *path, const uint8_t *p, size_t n, const char *mine)
{
	const char *kind = spm_guess_text_vocab(p, n);

	if (kind == NULL || strcmp(kind, mine) == 0)
		return;
	die("%s: this looks like %s, not %s: %s", input_name(path), kind, mine,
	    strcmp(kind, "a BERT vocab.txt") == 0 ? "use -m wordpiece" :
	    strcmp(kind, "a tensor2tensor vocabulary") == 0 ? "use -m subword" :
	    strcmp(kind, "a SentencePiece .vocab") == 0 ?
	    "give the .model with -m spm" :
	    "a fairseq dictionary maps words to ids after tokenizing "
	    "(mmap-index build --input-format text --dict)");
}

/* The same for a WordPiece vocabulary, read again from its file. */
static void
wp_kind_check(const char *path)
{
	size_t n;
	uint8_t *p = slurp(path, &n);
	const char *kind;

	if (p == NULL)
		return;
	kind = spm_guess_text_vocab(p, n);
	/* a BERT vocabulary without ## pieces or [PAD] is not told apart */
	if (kind != NULL && strcmp(kind, "a BERT vocab.txt") != 0)
		vocab_kind_check(path, p, n, "a BERT vocab.txt");
	free(p);
}

/* A .model given to another mode: say so. */
static void
model_given(const char *path)
{
	size_t n;
	uint8_t *p = slurp(path, &n);

	if (p != NULL && spm_looks_like_model(p, n)) {
		free(p);
		die("%s: this is a SentencePiece model: use -m spm",
		    input_name(path));
	}
	free(p);
}

/* -m spm and a file that is no model: name what it is when we can. */
static _Noreturn void
not_a_model(const char *path, const char *err)
{
	size_t n;
	uint8_t *p = slurp(path, &n);
	const char *what = p != NULL ? spm_guess_text_vocab(p, n) : NULL;

	free(p);
	if (what != NULL)
		die("%s: not a SentencePiece model: this is %s (use %s)",
		    input_name(path), what, strstr(what, "BERT") ?
		    "-m wordpiece" : strstr(what, "tensor2tensor") ?
		    "-m subword" : "mmap-index with --dict for a fairseq "
		    "dictionary");
	die("%s: %s", input_name(path), err);
}

/*
 * -m bpe: GPT-2's encoder.json (-v) and vocab.bpe (--merges); -m
 * tiktoken: a NAME.tiktoken file with the encoding's pattern and
 * special tokens.
 */
static struct bpe_model *
load_bpe(const char *path)
{
	char err[RP_ERRMAX];
	struct bpe_model *m;
	size_t n;
	uint8_t *p;

	if (!tiktoken_mode) {
		if ((m = bpe_load_gpt2(path, merges_path, err,
		    sizeof err)) == NULL) {
			model_given(path);
			die("%s, %s: %s", input_name(path),
			    input_name(merges_path), err);
		}
		return m;
	}
	if ((m = bpe_load_tiktoken(path, (enum bpe_encoding)
	    bpe_encoding_by_name(encoding_name), err, sizeof err)) != NULL)
		return m;
	model_given(path);
	p = slurp(path, &n);
	if (p != NULL && n > 0 && p[0] == '{') {
		free(p);
		die("%s: not a .tiktoken file: this looks like GPT-2's "
		    "encoder.json (use -m bpe -v encoder.json --merges vocab.bpe)",
		    input_name(path));
	}
	free(p);
	die("%s: %s", input_name(path), err);
}

/*
 * --encoding NAME, or the name of a file called NAME.tiktoken; -m bpe
 * is gpt2's.
 */
static void
resolve_encoding(const char *path)
{
	const char *base, *eq = strchr(path, '=');
	static char name[64];
	size_t n;

	if (eq != NULL && access(path, F_OK) == -1)
		path = eq + 1;		/* -v field=file */
	base = strrchr(path, '/');

	if (!tiktoken_mode) {
		if (encoding_name != NULL && bpe_encoding_by_name(encoding_name) !=
		    BPE_GPT2)
			usage_error("--encoding %s: -m bpe reads GPT-2's files, "
			    "the gpt2 encoding; use -m tiktoken -v %s.tiktoken",
			    encoding_name, encoding_name);
		encoding_name = "gpt2";
		return;
	}
	if (encoding_name != NULL)
		return;
	base = base != NULL ? base + 1 : path;
	n = strlen(base);
	if (n > 9 && n - 9 < sizeof name &&
	    strcmp(base + n - 9, ".tiktoken") == 0) {
		memcpy(name, base, n - 9);
		name[n - 9] = '\0';
		if (bpe_encoding_by_name(name) >= 0) {
			encoding_name = name;
			return;
		}
	}
	usage_error("-m tiktoken: give --encoding NAME (gpt2, r50k_base, "
	    "p50k_base, p50k_edit, cl100k_base or o200k_base): it sets the "
	    "pattern and special tokens of %s", path);
}

/*
 * Give every field its vocabulary ("-v path" for all, "-v name=path" for
 * one; a "name=path" naming no field is refused, unless it is a file).
 */
static void
load_vocabs(char **vspec, size_t nv, const char *fieldlist)
{
	const char *deflt = NULL, *eq;
	size_t i, f, j;

	for (i = 0; i < nv; i++) {
		eq = strchr(vspec[i], '=');
		for (f = 0; eq != NULL && f < nfields; f++)
			if (strlen(fields[f].name) == (size_t)(eq - vspec[i]) &&
			    strncmp(fields[f].name, vspec[i], (size_t)(eq - vspec[i])) == 0)
				break;
		if (eq != NULL && f < nfields)
			fields[f].vpath = eq + 1;
		else if (eq != NULL && access(vspec[i], F_OK) == -1)
			no_field(vspec[i], eq, fieldlist);
		else
			deflt = vspec[i];
	}
	for (f = 0; f < nfields; f++) {
		char err[RP_ERRMAX];
		int fd;

		if (fields[f].vpath == NULL)
			fields[f].vpath = deflt;
		if (fields[f].vpath == NULL)
			usage_error("no vocabulary for field %s (use -v)", fields[f].name);
		for (j = 0; j < f; j++)
			if (strcmp(fields[j].vpath, fields[f].vpath) == 0)
				break;
		if (j < f) {
			fields[f].sw = fields[j].sw;
			fields[f].wp = fields[j].wp;
			fields[f].sm = fields[j].sm;
			fields[f].bm = fields[j].bm;
		} else if (bpe_mode) {
			fields[f].bm = load_bpe(fields[f].vpath);
		} else if (spm_mode) {
			if ((fields[f].sm = spm_model_load(fields[f].vpath,
			    extra_ids, err, sizeof err)) == NULL)
				not_a_model(fields[f].vpath, err);
		} else if (wordpiece) {
			if ((fields[f].wp = wp_vocab_load(fields[f].vpath, err,
			    sizeof err)) == NULL) {
				model_given(fields[f].vpath);
				die("%s: %s", input_name(fields[f].vpath), err);
			}
			wp_kind_check(fields[f].vpath);
		}
		if (spm_mode) {
			if (megatron_special)
				fields[f].nmsp = spm_megatron_specials(fields[f].sm,
				    fields[f].msp);
			if ((fields[f].se = spm_enc_new(fields[f].sm)) == NULL ||
			    spm_enc_set_specials(fields[f].se, fields[f].msp,
			    fields[f].nmsp) == -1)
				die_errno("sentencepiece");
			spm_enc_set_extra(fields[f].se, spm_x, spm_nx);
			continue;
		}
		if (bpe_mode) {
			if ((fields[f].be = bpe_enc_new(fields[f].bm)) == NULL)
				die_errno("bpe");
			bpe_enc_allow_special(fields[f].be, allow_special);
			continue;
		}
		if (wordpiece) {
			if ((fields[f].wt = wp_tok_new(fields[f].wp, &wpo)) == NULL)
				die_errno("wordpiece");
			fields[f].unk = wp_special_id(fields[f].wp, WP_UNK);
			if (j == f)
				case_check(&fields[f]);
			continue;
		}
		if (j < f)
			continue;
		if ((fd = open_input(fields[f].vpath)) == -1)
			exit(1);
		fields[f].vbytes = read_all(fd, &fields[f].vlen, fields[f].vpath);
		fields[f].sw = sw_vocab_parse(fields[f].vbytes, fields[f].vlen,
		    err, sizeof err);
		if (fields[f].sw == NULL) {
			if (spm_looks_like_model(fields[f].vbytes, fields[f].vlen))
				die("%s: this is a SentencePiece model: use -m spm",
				    input_name(fields[f].vpath));
			die("%s: %s", input_name(fields[f].vpath), err);
		}
		vocab_kind_check(fields[f].vpath, fields[f].vbytes, fields[f].vlen,
		    "a tensor2tensor vocabulary");
		/* the parsed vocabulary holds what it needs */
		free(fields[f].vbytes);
		fields[f].vbytes = NULL;
		if (fd != 0)
			close(fd);
	}
}

static enum fmt
parse_fmt(const char *s, int in)
{
	if (strcmp(s, "records") == 0)
		return FMT_RECORDS;
	if (strcmp(s, "id") == 0)
		return FMT_ID;
	if (strcmp(s, "piece") == 0)
		return FMT_PIECE;
	if (in && strcmp(s, "text") == 0)
		return FMT_TEXT;
	if (in && strcmp(s, "jsonl") == 0)
		return FMT_JSONL;
	usage_error("unknown %s format: %s", in ? "input" : "output", s);
}

/*
 * "--eos 5", "--eos [EOS]", "--eos <EOD>" and "--eos <|endoftext|>"
 * take the next word as the argument.
 */
static int
eos_word(const char *s)
{
	size_t n = strlen(s);

	if (n > 0 && strspn(s, "0123456789") == n)
		return 1;
	if (n > 2 && s[0] == '<' && s[n - 1] == '>')
		return 1;
	return n > 2 && s[0] == '[' && s[n - 1] == ']';
}

/*
 * The id --eos means.  Subword mode: tensor2tensor's 1, or the id
 * given.  WordPiece mode: the id given, a token of the vocabulary, or
 * [BOS]/[EOS] as Megatron-LM's BERT tokenizer adds them when vocab.txt
 * lacks them: after the distinct tokens of the file, [BOS] first.
 * Bare --eos is Megatron's end of document, [EOS].
 */
static int64_t
resolve_eos(const char *arg)
{
	const struct wp_vocab *v = fields[0].wp;
	size_t i, n, distinct = 0;
	long id;

	if (arg != NULL && strspn(arg, "0123456789") == strlen(arg))
		return num_arg("--eos", arg, 0, INT64_MAX);
	if (spm_mode) {
		const struct spm_model *sm = fields[0].sm;

		if (arg == NULL) {
			if ((id = spm_eos_id(sm)) < 0)
				die("%s: --eos: the model has no end-of-sentence "
				    "piece; give --eos=ID", input_name(fields[0].vpath));
			return id;
		}
		size_t len;
		const char *u = spm_piece(sm, spm_unk_id(sm), &len);

		for (i = 0; i < fields[0].nmsp; i++)
			if (fields[0].msp[i].len == strlen(arg) &&
			    memcmp(fields[0].msp[i].s, arg, strlen(arg)) == 0)
				return fields[0].msp[i].id;
		id = spm_piece_id(sm, arg, strlen(arg));
		if (id == spm_unk_id(sm) && (strlen(arg) != len ||
		    memcmp(arg, u, len) != 0))
			die("%s: --eos: no piece '%s' in the model",
			    input_name(fields[0].vpath), arg);
		return id;
	}
	if (bpe_mode) {
		const struct bpe_model *bm = fields[0].bm;
		const uint8_t *t;
		size_t len;

		if (arg == NULL)
			return bpe_eot_id(bm);
		/* A token's text (a special token, or any other). */
		for (i = 0; i < bpe_size(bm); i++)
			if ((t = bpe_token(bm, (int64_t)i, &len)) != NULL &&
			    len == strlen(arg) && memcmp(t, arg, len) == 0)
				return (int64_t)i;
		die("%s: --eos: no token '%s' in %s", input_name(fields[0].vpath),
		    arg, encoding_name);
	}
	if (!wordpiece) {
		if (arg != NULL)
			usage_error("--eos: a token applies to -m wordpiece, spm, "
			    "bpe and tiktoken; give an id");
		return 1;
	}
	if (arg == NULL)
		arg = "[EOS]";
	if ((id = wp_vocab_id(v, arg, strlen(arg))) >= 0)
		return id;
	if (strcmp(arg, "[EOS]") != 0 && strcmp(arg, "[BOS]") != 0)
		die("%s: --eos: no token '%s' in the vocabulary",
		    input_name(fields[0].vpath), arg);
	eos_piece = arg;
	n = wp_vocab_size(v);
	for (i = 0; i < n; i++) {
		size_t len;
		const char *t = wp_piece(v, (int64_t)i, &len);

		distinct += wp_vocab_id(v, t, len) == (long)i;
	}
	if (strcmp(arg, "[BOS]") == 0)
		return (int64_t)distinct;
	return (int64_t)distinct + (wp_vocab_id(v, "[BOS]", 5) < 0);
}

/* Split --json-keys "a,b" into jkeys. */
static void
set_jkeys(const char *list)
{
	const char *s = list, *c;

	for (;;) {
		c = strchr(s, ',');
		if ((c ? (size_t)(c - s) : strlen(s)) == 0)
			usage_error("empty key in --json-keys %s", list);
		jkeys = xreallocarray(jkeys, njkeys + 1, sizeof(*jkeys));
		if ((jkeys[njkeys++] = c ? strndup(s, (size_t)(c - s)) :
		    strdup(s)) == NULL)
			die_nomem();
		if (c == NULL)
			break;
		s = c + 1;
	}
}

int
main(int argc, char *argv[])
{
	enum out_kind outkind;
	const char *outhint;
	const char *outpath = "-", *feature = NULL, *fieldlist = NULL;
	const char *keylist = NULL;
	char **vspec = NULL;
	struct part_file *parts = NULL;
	uint64_t part_k = 0, part_n = 1;
	size_t nv = 0, f, i;
	int ch, decode = 0, rval = 0, wpflags = 0;

	setprogname(argv[0]);
	while ((ch = getopt_args(argc, argv, "df:hj:m:o:qv:V", longopts)) != -1)
		switch (ch) {
		case 'd':
			decode = 1;
			break;
		case 'f':
			feature = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		case 'j':
			jobs = jobs_arg(optarg);
			break;
		case 'm':
			spm_mode = bpe_mode = tiktoken_mode = 0;
			if (strcmp(optarg, "wordpiece") == 0)
				wordpiece = 1;
			else if (strcmp(optarg, "subword") == 0)
				wordpiece = 0;
			else if (strcmp(optarg, "spm") == 0 ||
			    strcmp(optarg, "sentencepiece") == 0) {
				wordpiece = 0;
				spm_mode = 1;
			} else if (strcmp(optarg, "bpe") == 0 ||
			    strcmp(optarg, "tiktoken") == 0) {
				wordpiece = 0;
				bpe_mode = 1;
				tiktoken_mode = optarg[0] == 't';
			} else
				usage_error("unknown mode: %s", optarg);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'q':
			verbosity = 0;
			break;
		case 'v':
			vspec = xreallocarray(vspec, nv + 1, sizeof(*vspec));
			vspec[nv++] = optarg;
			break;
		case 'V':
			print_version("Unicode " UNICODE_VERSION ", byte-level BPE "
			    "Unicode " PRETOK_UNICODE_VERSION);
		case OPT_EOS:
			eos = 1;
			eos_arg = optarg;
			if (optarg == NULL && optind < argc &&
			    eos_word(argv[optind]))
				eos_arg = argv[optind++];
			break;
		case OPT_JSON_KEYS:
			keylist = optarg;
			break;
		case OPT_EXTRA_IDS:
			extra_ids = (int)num_arg("--extra-ids", optarg, 0, 1000000);
			break;
		case OPT_EXTRA_OPTIONS:
			extra_opts = optarg;
			break;
		case OPT_ALLOWED_SPECIAL:
			if (strcmp(optarg, "all") != 0 && strcmp(optarg, "none") != 0 &&
			    strcmp(optarg, "megatron") != 0)
				usage_error("--allowed-special: all, none or megatron, "
				    "not '%s'", optarg);
			allow_special = optarg[0] == 'a';
			megatron_special = optarg[0] == 'm';
			break;
		case OPT_ENCODING:
			if (bpe_encoding_by_name(optarg) < 0)
				usage_error("unknown encoding: %s (gpt2, r50k_base, "
				    "p50k_base, p50k_edit, cl100k_base or o200k_base)",
				    optarg);
			encoding_name = optarg;
			break;
		case OPT_MERGES:
			merges_path = optarg;
			break;
		case OPT_NO_STRIP:
			strip = 0;
			break;
		case OPT_STRIP_EXTRANEOUS:
			strip_extraneous = 1;
			break;
		case OPT_FIELDS:
			fieldlist = optarg;
			break;
		case OPT_INPUT_FORMAT:
			infmt = parse_fmt(optarg, 1);
			break;
		case OPT_OUTPUT_FORMAT:
			outfmt = parse_fmt(optarg, 0);
			break;
		case OPT_LOWER:
		case OPT_NO_LOWER:
			lower_given = 1;
			wpo.lower = ch == OPT_LOWER;
			wpflags = 1;
			break;
		case OPT_STRIP_ACCENTS:
		case OPT_NO_STRIP_ACCENTS:
			wpo.strip_accents = ch == OPT_STRIP_ACCENTS;
			wpflags = 1;
			break;
		case OPT_RULES:
			if (strcmp(optarg, "bert") == 0)
				wpo.rules = WP_RULES_BERT;
			else if (strcmp(optarg, "electra") == 0)
				wpo.rules = WP_RULES_ELECTRA;
			else
				usage_error("unknown rules: %s", optarg);
			wpflags = 1;
			break;
		case OPT_KEEP_PARTIAL:
			keep_partial = 1;
			break;
		case OPT_PART:
			part_arg(optarg, &part_k, &part_n);
			break;
		case OPT_MAXREC:
			max_len = max_record_arg(optarg);
			break;
		case OPT_PROGRESS:
			progress_enabled = 1;
			break;
		case OPT_NO_PROGRESS:
			progress_enabled = 0;
			break;
		case OPT_PARALLEL:
			parallel = 1;
			break;
		case OPT_SKIP_EMPTY:
			skip_empty = 1;
			break;
		case OPT_MAX_UNK:
			max_unk = rate_arg("--max-unk-rate", optarg);
			break;
		default:
			usage(stderr, 2);
		}
	argc -= optind;
	argv += optind;
	decode_mode = decode;
	if (nv == 0)
		usage_error("no vocabulary (use -v)");
	if (max_unk >= 0 && decode)
		usage_error("--max-unk-rate applies to encoding");
	if (max_unk >= 0 && bpe_mode)
		usage_error("--max-unk-rate: byte-level BPE has no unknown token "
		    "(every byte has an id)");
	if (merges_path != NULL && (!bpe_mode || tiktoken_mode))
		usage_error("--merges applies to -m bpe");
	if (bpe_mode && !tiktoken_mode && merges_path == NULL)
		usage_error("-m bpe: give GPT-2's merges with --merges vocab.bpe "
		    "(and encoder.json with -v)");
	if (!bpe_mode && (encoding_name != NULL || allow_special))
		usage_error("--encoding and --allowed-special all apply to -m bpe "
		    "and -m tiktoken");
	if (megatron_special && !spm_mode)
		usage_error("--allowed-special megatron applies to -m spm");
	if (megatron_special && (decode || extra_ids > 0))
		usage_error("--allowed-special megatron applies to encoding, "
		    "without --extra-ids");
	if (bpe_mode)
		resolve_encoding(vspec[0]);
	if (!spm_mode && (extra_ids > 0 || extra_opts != NULL))
		usage_error("--extra-ids and --extra-options apply to -m spm");
	if (decode && extra_opts != NULL)
		usage_error("--extra-options applies to encoding");
	if (infmt == FMT_PIECE && (!spm_mode || !decode))
		usage_error("--input-format piece applies to -d -m spm");
	if (feature != NULL && fieldlist != NULL)
		usage_error("-f and --fields exclude each other");
	if (!decode && infmt == FMT_JSONL) {
		jsonl = 1;
		set_jkeys(keylist ? keylist : "text");
		if (fieldlist != NULL)
			usage_error("--fields applies to text input; use --json-keys");
		if (njkeys > 1 && feature != NULL)
			usage_error("-f names the feature of one key; several "
			    "--json-keys name their own");
		if (njkeys > 1)
			fieldlist = keylist;
	} else if (keylist != NULL)
		usage_error("--json-keys applies to --input-format jsonl");
	if (parallel && (decode || infmt == FMT_JSONL))
		usage_error("--parallel applies to encoding text");
	if (parallel && feature != NULL)
		usage_error("--parallel takes --fields, not -f");
	if (skip_empty && !parallel)
		usage_error("--skip-empty applies to --parallel (tab-separated "
		    "fields skip lines with an empty field anyway)");
	set_fields(fieldlist ? fieldlist : feature ? feature :
	    parallel ? "inputs,targets" : "targets");
	if (parallel && (argc == 0 || argc % (int)nfields != 0))
		usage_error("--parallel: %d file%s for %zu fields (%s); give "
		    "one file per field, in that order", argc, argc == 1 ? "" :
		    "s", nfields, fieldlist ? fieldlist : "inputs,targets");
	if (nfields > 8)
		usage_error("at most 8 fields");
	if (decode && outfmt != FMT_RECORDS)
		usage_error("--output-format does not apply to -d");
	if (!decode && infmt != FMT_TEXT && infmt != FMT_JSONL &&
	    infmt != FMT_RECORDS)
		usage_error("--input-format: text or jsonl when encoding");
	if (decode && (infmt == FMT_TEXT || infmt == FMT_JSONL))
		usage_error("--input-format: records, id or piece with -d");
	if (decode && spm_mode && infmt != FMT_RECORDS && nfields > 1)
		usage_error("-d -m spm --input-format %s takes one field",
		    infmt == FMT_ID ? "id" : "piece");
	if (!decode && strip_extraneous)
		usage_error("--strip-extraneous applies to -d only");
	if (!wordpiece && wpflags)
		usage_error("--lower, --strip-accents and --rules apply to -m wordpiece");
	if ((wordpiece || spm_mode || bpe_mode) && strip_extraneous)
		usage_error("--strip-extraneous applies to -m subword");
	if (decode && eos)
		usage_error("--eos does not apply to -d");
	outkind = !decode && outfmt == FMT_RECORDS ? WRITES_RECORDS : WRITES_TEXT;
	outhint = outkind == WRITES_RECORDS ? "add --output-format id for id lines" :
	    decode ? NULL : "leave out --output-format to write records";
	out_form(outpath, outkind, outhint);
	out_check(outpath);
	/* A part is planned from every operand's size before any output. */
	if (part_n > 1 && parallel)
		usage_error("--part does not apply to --parallel");
	if (part_n > 1)
		parts = part_files(argv, argc, decode && infmt == FMT_RECORDS,
		    REC_AUTO, part_k, part_n);
	load_vocabs(vspec, nv, fieldlist ? fieldlist : feature ? feature :
	    parallel ? "inputs,targets" : "targets");
	if (spm_mode && extra_opts != NULL) {
		char err[RP_ERRMAX];

		if ((spm_nx = spm_parse_extra(fields[0].sm, extra_opts, spm_x,
		    err, sizeof err)) < 0)
			die("%s: --extra-options %s: %s", input_name(fields[0].vpath),
			    extra_opts, err);
		for (f = 0; f < nfields; f++)
			spm_enc_set_extra(fields[f].se, spm_x, spm_nx);
	}
	if (eos)
		eos_id = resolve_eos(eos_arg);
	mainctx.f = fields;
	mainctx.out = &ob;
	mainctx.direct = 1;
	if (!decode && outfmt == FMT_ID) {
		size_t most = 0;

		for (f = 0; f < nfields; f++) {
			size_t vs = spm_mode ? spm_size(fields[f].sm) :
			    bpe_mode ? bpe_size(fields[f].bm) :
			    wordpiece ? wp_vocab_size(fields[f].wp) :
			    sw_vocab_size(fields[f].sw);

			if (vs > most)
				most = vs;
		}
		make_idtext(most);
	}

	output_open(&outp, outpath, outkind, outhint);
	outname = outp.name;
	rw = outp.w;
	obuf_open(&ob, outp.fd, outname, 0);
	if (argc == 0) {
		static char dash[] = "-";
		static char *stdin_only[] = { dash, NULL };

		argv = stdin_only;
	}
	jobs = jobs_count(jobs);
	if (parallel) {
		/* One record from line i of each file: no -j. */
		for (; *argv; argv += nfields)
			rval |= encode_parallel(argv);
	} else if (!decode && jobs > 1)
		jobs_start();
	for (i = 0; !parallel && argv[i] != NULL; i++) {
		const struct part_file *pf = parts != NULL ? &parts[i] : NULL;

		if (!decode && jobs > 1)
			rval |= encode_file_jobs(argv[i], pf);
		else if (!decode)
			rval |= encode_file(argv[i], pf);
		else if (spm_mode && infmt != FMT_RECORDS)
			rval |= decode_spm_file(argv[i], pf);
		else if (infmt == FMT_ID)
			rval |= decode_ids_file(argv[i], pf);
		else
			rval |= decode_records_file(argv[i], pf);
	}
	free(parts);
	if (!decode && !parallel && jobs > 1)
		jobs_stop();
	progress_done();
	flush_text();
	rw = NULL;
	output_end_stream(&outp);
	if (unk_report())
		rval = 1;
	/* A named output is all-or-nothing unless --keep-partial. */
	output_close(&outp, rval == 0);
	if (mainctx.skipped > 0 && verbosity > 0 && parallel)
		warnx_("%ju lines with an empty field skipped",
		    (uintmax_t)mainctx.skipped);
	else if (mainctx.skipped > 0 && verbosity > 0)
		warnx_("%ju lines without %zu tab-separated fields skipped",
		    (uintmax_t)mainctx.skipped, nfields);
	if (mainctx.tabbed > 0 && verbosity > 0)
		warnx_("warning: %ju lines hold a tab but there is one field, "
		    "'%s', so each was encoded whole; for tab-separated columns "
		    "give --fields (e.g. --fields inputs,targets), for "
		    "line-parallel files --parallel", (uintmax_t)mainctx.tabbed,
		    fields[0].name);
	for (f = 0; f < nfields; f++) {
		size_t j;

		for (j = f + 1; j < nfields; j++)
			if (fields[j].sw == fields[f].sw)
				fields[j].sw = NULL;
		for (j = f + 1; j < nfields; j++)
			if (fields[j].wp == fields[f].wp)
				fields[j].wp = NULL;
		for (j = f + 1; j < nfields; j++)
			if (fields[j].sm == fields[f].sm)
				fields[j].sm = NULL;
		for (j = f + 1; j < nfields; j++)
			if (fields[j].bm == fields[f].bm)
				fields[j].bm = NULL;
		spm_enc_free(fields[f].se);
		spm_model_free(fields[f].sm);
		bpe_enc_free(fields[f].be);
		bpe_model_free(fields[f].bm);
		rp_buf_free(&fields[f].ptext);
		sw_vocab_free(fields[f].sw);
		wp_tok_free(fields[f].wt);
		wp_vocab_free(fields[f].wp);
		free(fields[f].ids);
		free(fields[f].name);
		free(fields[f].vbytes);
	}
	free(fields);
	free(vspec);
	for (f = 0; f < njkeys; f++)
		free(jkeys[f]);
	free(jkeys);
	free(mainctx.tmp32);
	free(mainctx.prev);
	jd_free(&mainctx.jl);
	free(idtext);
	example_free(&mainctx);
	rp_buf_free(&text);
	free(wptext);
	obuf_close(&ob);
	close_stdout();
	return rval;
}
