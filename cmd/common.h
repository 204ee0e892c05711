/*
 * What every recpipe tool shares on the command line: diagnostics,
 * checked output, atomic named outputs, opening inputs.
 */
#ifndef RECPIPE_COMMON_H
#define RECPIPE_COMMON_H

#include <sys/types.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

#include "version.h"

extern const char *progname;	/* set by setprogname() from argv[0] */
extern int verbosity;		/* 1 by default; -q lowers, -v raises */

void	setprogname(const char *argv0);
/* "tool: fmt\n" on stderr, then exit 1 (die) or go on (warnx_). */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	warn_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Memory, as sbase's libutil has it: each allocates (never NULL, even
 * for 0 bytes) or dies "tool: out of memory" through die_nomem().
 * xreallocarray() checks n * size for overflow.  Free with free().
 */
_Noreturn void die_nomem(void);
void	*xmalloc(size_t size);
void	*xcalloc(size_t n, size_t size);
void	*xreallocarray(void *p, size_t n, size_t size);
char	*xstrdup(const char *s);
/* A usage error: "tool: fmt", then the usage hint; exit 2. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Print a usage text to fp and exit with status; on status 0 (--help,
 * to stdout) the write is checked like any other output.
 */
_Noreturn void print_usage(FILE *fp, const char *text, int status);
/* Print "tool VERSION" (and any extra line) to stdout and exit 0. */
_Noreturn void print_version(const char *extra);

/*
 * A write to 'what' failed: on EPIPE die quietly of SIGPIPE (status
 * 141), otherwise "tool: what: strerror" and exit 1.
 */
_Noreturn void write_failed(const char *what);
/*
 * Flush and close stdout, calling write_failed() on failure.  Call before
 * exit 0; a second call does nothing (output_close() may have closed it).
 */
void	close_stdout(void);
/* The name of stdout in those messages: "stdout", or the file it was opened on. */
extern const char *stdout_name;
/* Give stdout a large buffer (records and JSON lines go through stdio). */
void	stdout_buffer(void);

/*
 * An output buffer on a descriptor: the text the tools write goes out
 * through one, and the fast formatters (exjson_format_i64(), ...) write
 * straight into it:
 *	q = obuf_room(b, 21); q = exjson_format_i64(v, q); obuf_end(b, q);
 * A buffer of a fixed size (obuf_open() with size > 0) writes itself
 * out when it has no room left; a growing one (size 0) grows instead and
 * is written out only by obuf_flush(), so that it can hold whole lines
 * or a whole unit of a pool.  A failed write calls write_failed(name)
 * (obuf_flush() returns only when everything was written); a failed
 * growth returns -1 (obuf_reserve(), obuf_write()) with errno set.
 * When gate is set, it is called before each write with gate_arg: -1
 * drops the bytes instead (a pool unit whose turn will not come).
 */
struct obuf {
	int		 fd;		/* -1: memory only */
	const char	*name;
	char		*p;		/* owned */
	size_t		 len, size;	/* bytes in use, allocated */
	int		 grow;		/* size 0 was asked: grow, never flush by itself */
	uint64_t	 out;		/* bytes written out (or dropped) before p */
	int		(*gate)(void *);
	void		*gate_arg;
};
/* Set b up (size bytes, or 0 for a growing one); dies when memory is short (die_nomem()). */
void	obuf_open(struct obuf *b, int fd, const char *name, size_t size);
void	obuf_close(struct obuf *b);	/* frees, does not flush; NULL p is fine */
void	obuf_flush(struct obuf *b);
/* Room for n more bytes: flushes a fixed-size buffer, grows a growing one.  0 or -1. */
int	obuf_reserve(struct obuf *b, size_t n);
int	obuf_write_slow(struct obuf *b, const void *p, size_t n);
int	obuf_puts(struct obuf *b, const char *s);
void	obuf_printf(struct obuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write p[0 .. n) after what b holds, without copying it into b. */
void	obuf_put_direct(struct obuf *b, const void *p, size_t n);

/*
 * Where to write n more bytes (n no more than a fixed buffer's size);
 * obuf_end() then says where they end.  A growing buffer that cannot
 * grow dies (die_nomem()).
 */
static inline char *
obuf_room(struct obuf *b, size_t n)
{
	if (b->size - b->len < n && obuf_reserve(b, n) == -1)
		die_nomem();
	return b->p + b->len;
}

static inline void
obuf_end(struct obuf *b, char *q)
{
	b->len = (size_t)(q - b->p);
}

/* Append p[0 .. n): 0, or -1 when a growing buffer cannot grow. */
static inline int
obuf_write(struct obuf *b, const void *p, size_t n)
{
	if (n > 0 && n <= b->size - b->len) {
		memcpy(b->p + b->len, p, n);
		b->len += n;
		return 0;
	}
	return obuf_write_slow(b, p, n);
}

/*
 * Read all of fd into a malloc()ed buffer (free it); *n gets its
 * length.  Dies "tool: name: strerror" on a read or allocation failure.
 */
uint8_t	*read_all(int fd, size_t *n, const char *name);

/*
 * Open an input operand ("-" means stdin).  Returns the fd, or -1 after
 * warning "tool: name: strerror".  The displayed name of stdin is "-"
 * (see input_name()).
 */
int	open_input(const char *path);
const char *input_name(const char *path);	/* "-" -> "stdin" */

/*
 * Refuse to write binary records to a terminal unless forced:
 * dies "tool: refusing to write records to a terminal (use -o FILE or a pipe)".
 */
void	refuse_tty(int fd, int force);

/*
 * Named outputs appear whole or not at all (recpipe(5), "Named
 * outputs"): out_open() takes the output's lock (PATH.lock; another
 * live writer of PATH is a fatal error naming it), removes temporaries
 * of PATH that dead runs left, creates a temporary beside PATH
 * (PATH.rp-PID-XXXXXX, with the mode and owner of the file it will
 * replace, else 0666 & ~umask) and returns its fd.  A PATH that is a
 * symbolic link is written through: the temporary goes beside the
 * file it names, which the rename replaces.  out_commit() ends a
 * compressing child, puts the data on disk (fsync), renames it over
 * the target, syncs the directory and drops the lock; out_abort()
 * unlinks it.  Pending temporaries and locks (any number) are
 * unlinked when the process dies of SIGINT, SIGTERM, SIGHUP or
 * SIGPIPE, or exits via die().  "-" means stdout (returns 1;
 * commit/abort do nothing).  A caller may close o->fd and set it to -1
 * to keep many temporaries without holding a descriptor for each
 * (reopen o->tmp to append).  On failure o->path stays valid until the
 * next out_open() of the same struct.
 */
struct outfile {
	char	*path;		/* the file replaced (a symbolic link's target) */
	char	*tmp;
	char	*lock;		/* its lock file, held while pending */
	int	 fd;
	int	 active;	/* a temporary file to rename on commit */
	int	 direct;	/* a device or FIFO, written in place */
	pid_t	 zpid;		/* out_open_text(): the compressing child, or 0 */
	struct outfile *prev, *next;	/* the pending list */
};
int	out_open(struct outfile *o, const char *path);
int	out_commit(struct outfile *o);	/* 0, or -1 with errno */
void	out_abort(struct outfile *o);
/*
 * Commit v[0 .. n) as a group (a .bin/.idx pair, tfr-cat --split): every
 * rename, or none.  The data of every member goes to disk first.  Then,
 * with signals held until the end, each old file the group replaces
 * is kept under a hard link and removed, and only then are the new
 * members renamed into place, in order: a crash at any point (kill -9,
 * power loss) leaves the old members, the new ones, or a group with
 * members missing, never old beside new.  When a rename fails, the
 * names renamed before it are removed, the old files come back, the
 * remaining temporaries are removed, and -1 is returned with errno and
 * *failed, the index of the output that failed.  On a file system
 * without hard links an old file cannot be kept: it is replaced by its
 * rename, as a single output is.  Devices and FIFOs (written in place)
 * are only closed.
 */
int	out_commit_group(struct outfile **v, size_t n, size_t *failed);
/*
 * Whether 'path' can be a named output: not empty, not a directory,
 * in a directory that exists and that we may write (or a device or
 * FIFO we may write).  Returns 0, or -1 with errno set.  "-" is fine.
 */
int	out_writable(const char *path);
/*
 * Refuse an output that cannot be written before any work starts:
 * dies "tool: PATH: strerror" (or names the empty name).
 */
void	out_check(const char *path);
/*
 * Make the directories of 'path' that are missing (mkdir -p of its
 * directory part), as fairseq-preprocess makes its --destdir; those
 * still empty at exit (the run failed before writing there) are
 * removed.  Dies naming a directory that cannot be made.
 */
void	out_make_dirs(const char *path);
/*
 * --keep-partial: after a fault in the input, commit what was written
 * before it under the output's name anyway (the status is still 1).
 * Without it, a named output is all-or-nothing.
 */
extern int keep_partial;
/*
 * A fault in the input: the tool has written out what the good input
 * before it gives (and ended its output streams); the next die() then
 * commits every pending named output under --keep-partial instead of
 * removing it.  A failed write (write_failed()) cancels this.
 */
void	fault_begin(void);
/*
 * Called at such a die() under --keep-partial before the outputs are
 * committed, when set: a tool ends what needs ending (mmap-index build
 * writes the index of the sequences added so far).
 */
extern void (*fault_keep)(void);
/* Commit every pending named output (--keep-partial at a fault). */
void	out_commit_all(void);
/* End output o after a run: commit when ok or keep_partial, else abort. 0, or -1 with errno. */
int	out_finish(struct outfile *o, int ok);

/* Compression implied by an output name: .gz gzip, .zz/.zlib zlib, else none. */
enum rec_comp comp_from_suffix(const char *path);

/*
 * Outputs follow their suffix.  After any .gz/.zz/.zlib: .tfrecord,
 * .tfrecords, .tfr, or a shard name ending -NNNNN-of-NNNNN, name record
 * files; .txt, .json, .jsonl, .ndjson, .tsv, .csv name text files.
 */
int	suffix_records(const char *path);
int	suffix_text(const char *path);
enum out_kind { WRITES_TEXT, WRITES_RECORDS };
/*
 * Check a named output (NULL and "-" pass) against what the tool
 * writes there before any work starts, and return its compression.
 * A usage error (exit 2) names the output and the reason: a compression
 * suffix that cannot be written (.zst, .xz, .bz2, .lz4, ...: the
 * message says how to get it), text into a record name or records into
 * a text name ('hint', when not NULL, says what to do instead).
 */
enum rec_comp out_form(const char *path, enum out_kind kind, const char *hint);
/*
 * out_open() for a text output: when the name ends in .gz (.zz,
 * .zlib), what is written to the returned fd is compressed on its way
 * to the file by a child process; out_commit() waits for it and fails
 * (errno set) when it did.  Otherwise the same as out_open().
 */
int	out_open_text(struct outfile *o, const char *path);

/*
 * The output of a tool (-o PATH; NULL or "-" is stdout), of records or
 * of text, opened in one way everywhere.  output_open() checks PATH
 * with out_form() ('hint' as there), opens it atomically (out_open(),
 * out_open_text()) and, for records, refuses a terminal stdout and
 * sets up the record writer w.  The one rule for compression: a named
 * output is compressed as its suffix says (.gz gzip, .zz or .zlib
 * zlib; comp_from_suffix()), records by w, text on its way to the file;
 * stdout is never compressed.  Dies naming the output on failure.
 * output_close() closes w and then stdout (close_stdout()) or the named
 * output (out_finish(): committed when ok or --keep-partial, else
 * removed); a failed write dies (write_failed()).  The caller flushes
 * what it buffers for fd before.
 */
struct output {
	const char	*name;		/* "stdout", or the path */
	int		 fd;		/* what text goes to; w writes here */
	struct rec_writer *w;		/* records: frames and compresses; else NULL */
	enum rec_comp	 comp;		/* records: the compression w writes */
	struct outfile	 file;
};
void	output_open(struct output *out, const char *path, enum out_kind kind,
	    const char *hint);
void	output_close(struct output *out, int ok);
/*
 * output_open() with what tfr-cat adds to it.  'comp', when not
 * REC_AUTO, is the compression of the records instead of the rule's
 * (tfr-cat -z, to a file or to stdout).  OUTPUT_FORCE writes records
 * even to a terminal (--force).  OUTPUT_BY_NAME keeps a named file
 * output by the name of its temporary only (out_open(): fd -1, no
 * record writer; the caller appends framed records to file.tmp), so
 * that any number of outputs can be open; stdout and devices are
 * opened as without it.
 */
#define OUTPUT_FORCE	1u
#define OUTPUT_BY_NAME	2u
void	output_open_with(struct output *out, const char *path,
	    enum out_kind kind, const char *hint, enum rec_comp comp,
	    unsigned flags);
/*
 * End the record stream of out now, before output_close(): at a fault
 * in the input (then call fault_begin()), so that what the good input
 * gave is a whole stream, kept under --keep-partial.  A failed write
 * dies (write_failed()).  output_close() then has no writer to close.
 */
void	output_end_stream(struct output *out);
/*
 * output_close() of the n outputs v[] as a group (tfr-cat --split's
 * shards): each record writer is closed, then every named output is
 * committed with out_commit_group() (every rename or none) when ok or
 * --keep-partial, else removed; a stdout among them is closed.  Dies
 * naming the output that failed.
 */
void	output_close_group(struct output **v, size_t n, int ok);

/*
 * Open a text input ("-" is stdin) for reading lines.  Gzip (and zlib)
 * compressed text is decompressed on the way by a child process, as
 * record readers sniff it; input compressed in a form we cannot read
 * (xz, zstd, bzip2, lz4) is refused with the command that decompresses
 * it.  Returns the fd, or -1 after warning "tool: name: strerror".
 * Close it with close_text(), which dies naming 'path' when the
 * decompression failed (a damaged or truncated stream).
 */
int	open_text(const char *path);
void	close_text(int fd, const char *path);
/*
 * open_text() for --part, which seeks in the file: no child, and
 * compressed text (which cannot be cut) is refused with the command
 * that decompresses it.  Close with close_text() too.
 */
int	open_text_part(const char *path);
/* The compression that the first bytes p[0..n) show ("gzip", "xz", ...), or NULL. */
const char *sniff_compression(const uint8_t *p, size_t n);

/*
 * getopt_long() for every tool: long options may be spelt with '_' for
 * '-' (--vocab_size, the upstream spelling); an unknown option, a
 * missing argument or an ambiguous abbreviation is a usage error (exit
 * 2) whose message names the option and the closest valid one.
 */
int	getopt_args(int argc, char *argv[], const char *optstring,
	    const struct option *longopts);
/*
 * The option getopt_args() returned last, as the user gave it (the
 * whole long name for an abbreviation): "--vocab-size", "-t".  For
 * messages about its argument: num_arg(option_name, optarg, 1, 100).
 */
extern const char *option_name;

/*
 * Which options each subcommand of a tool takes, by long name (an
 * alias, such as --max-sentences for --batch-size, goes with its
 * option); -h and -V go everywhere:
 *	static const struct subcmd cmds[] = {
 *		[CMD_BUILD] = { "build", "quiet output jobs wrap" },
 *		[CMD_VERIFY] = { "verify", "quiet format" },
 *	};
 * subcmd_option() checks the option ch that getopt_args() returned
 * for subcommand cmds[cmd] of the n: one it does not take is a usage
 * error naming the subcommands that do:
 * "verify: --wrap does not apply (it applies to build)".
 */
struct subcmd {
	const char	*name;
	const char	*opts;		/* long option names, blank-separated */
};
void	subcmd_option(const struct subcmd *cmds, size_t n, size_t cmd, int ch,
	    const struct option *longopts);
/* The candidate closest to s (edit distance), or NULL when none is close. */
const char *closest_name(const char *s, const char *const *cand, size_t n);

/* Parse a non-negative integer with optional k/M/G (powers of 1000 or of 1024 with i) or 1e6; -1 on error. */
int	parse_size(const char *s, uint64_t *out);
/*
 * The argument of --max-record-size, which every tool that reads records
 * takes: a parse_size() size, the largest payload a reader accepts where
 * the bytes left cannot be known (pipes, compressed input); 0 means the
 * default, REC_DEFAULT_MAX.  A usage error when it does not parse.
 */
uint64_t max_record_arg(const char *s);
/*
 * Parse an integer in [lo, hi]; -1 on error.  Every numeric argument
 * of the suite goes through here: a parse_size() number (suffixes k, M,
 * G, Ki, Mi, Gi, or 1e6), with a leading '-' where lo allows it.
 */
int	parse_int(const char *s, long long lo, long long hi, long long *out);
/* Parse a finite real number (strtod()'s forms, the whole string); -1 on error. */
int	parse_real(const char *s, double *out);

/*
 * The argument of option 'opt' ("--batch-size", "-j"), parsed as its
 * kind of number; anything else is a usage error (exit 2) naming the
 * option, what it takes and the value:
 * "--batch-size: expected an integer from 1 to 4294967295, not 'x'".
 * num_arg(): a parse_int() integer in [lo, hi].  size_arg(): a
 * parse_size() size.  rate_arg(): a fraction from 0 to 1, or a
 * percentage ("5%" is 0.05).
 */
long long num_arg(const char *opt, const char *s, long long lo, long long hi);
uint64_t size_arg(const char *opt, const char *s);
double	rate_arg(const char *opt, const char *s);

/*
 * -j N, the same in every tool: N threads; 0, the default, one per
 * processor this process may use (a Slurm task's SLURM_CPUS_PER_TASK,
 * else its affinity mask) but at most JOBS_AUTO_MAX; 1 runs serially.
 * jobs_arg() parses N (a usage error unless 0..JOBS_MAX); jobs_count()
 * gives the threads to start for it.
 */
#define JOBS_MAX	256
#define JOBS_AUTO_MAX	8
int	jobs_arg(const char *s);
int	jobs_count(int j);
/* Parse "K/N" for --shard (0 <= K < N); -1 on error. */
int	parse_shard(const char *s, uint64_t *k, uint64_t *n);

/*
 * --part K/N (lib/part.h): the K-th of N contiguous parts of the
 * operands, taken in order as one concatenation.  part_arg() parses
 * "K/N" (0 <= K < N <= PART_MAX_N), a usage error otherwise.
 * part_files() plans part k of n of argv[0..argc): text lines
 * (records 0), or record streams read with compression 'comp' (REC_AUTO
 * sniffs each file; a compressed file is not cut).  Standard input, no
 * operand or one that is not a regular file is a usage error (a part
 * is found by seeking); a file that cannot be opened or read dies
 * "tool: file: strerror", since every part depends on every size.
 * Returns argc part_files (free() it); a file with from == to has
 * nothing in the part and need not be opened.
 */
struct part_file {
	const char	*path;
	uint64_t	 size;		/* bytes */
	uint64_t	 from, to;	/* its bytes [from, to) are in the part */
	enum rec_comp	 comp;		/* records: REC_NONE, or whole compressed */
};
void	part_arg(const char *s, uint64_t *k, uint64_t *n);
struct part_file *part_files(char **argv, int argc, int records,
	    enum rec_comp comp, uint64_t k, uint64_t n);

/* Progress on stderr when it is a terminal (or forced); rate-limited to ~4/s. */
extern int progress_enabled;	/* -1 auto (isatty(2)), 0 off, 1 on */
int	progress_due(void);		/* 1 when a new progress line should be drawn */
void	progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	progress_done(void);		/* clear the progress line */

/*
 * A token dataset named on the command line: "X.idx" or "X.bin" also
 * means X when X.idx exists (shell globs on the files work); the name
 * is cut to X in place.
 */
void	dataset_prefix(char *name);

#endif
