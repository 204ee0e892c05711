/*
 * Command-line plumbing shared by the recpipe tools.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "common.h"
#include "part.h"

const char *progname = "recpipe";
int verbosity = 1;
int progress_enabled = -1;

int keep_partial;

/* Temporaries to unlink on a fatal signal or die(): a list with no cap. */
static struct outfile *volatile pending;
static int faulting;		/* set by fault_begin() */
void (*fault_keep)(void);

static void
keep_all(void)
{
	void (*f)(void) = fault_keep;

	faulting = 0;
	fault_keep = NULL;
	if (f != NULL)
		f();
	out_commit_all();
}

void
setprogname(const char *argv0)
{
	const char *s = strrchr(argv0, '/');

	progname = s ? s + 1 : argv0;
}

static void
unlink_pending(void)
{
	struct outfile *o;

	for (o = pending; o != NULL; o = o->next)
		if (o->active && o->tmp)
			unlink(o->tmp);
}

static void
vwarn_(int errnum, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	progress_done();
	va_start(ap, fmt);
	vwarn_(0, fmt, ap);
	va_end(ap);
	if (faulting && keep_partial)
		keep_all();
	unlink_pending();
	exit(1);
}

void
die_errno(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	progress_done();
	va_start(ap, fmt);
	vwarn_(e, fmt, ap);
	va_end(ap);
	if (faulting && keep_partial)
		keep_all();
	unlink_pending();
	exit(1);
}

void
fault_begin(void)
{
	faulting = 1;
}

void
out_commit_all(void)
{
	struct outfile *o, *next;

	faulting = 0;
	for (o = pending; o != NULL; o = next) {
		next = o->next;
		if (out_commit(o) == -1)
			die_errno("%s", o->path);
	}
}

void
warnx_(const char *fmt, ...)
{
	va_list ap;

	progress_done();
	va_start(ap, fmt);
	vwarn_(0, fmt, ap);
	va_end(ap);
}

void
warn_errno(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	progress_done();
	va_start(ap, fmt);
	vwarn_(e, fmt, ap);
	va_end(ap);
}

void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_(0, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	exit(2);
}

void
print_usage(FILE *fp, const char *text, int status)
{
	const char *end;

	/* After a usage error only the synopsis, not the option list. */
	if (status != 0 && (end = strstr(text, "\n\n")) != NULL)
		fwrite(text, 1, (size_t)(end - text) + 1, fp);
	else
		fputs(text, fp);
	if (status == 0)
		close_stdout();
	exit(status);
}

void
print_version(const char *extra)
{
	printf("%s %s\n", progname, RECPIPE_VERSION);
	if (extra)
		printf("%s\n", extra);
	close_stdout();
	exit(0);
}

void
write_failed(const char *what)
{
	faulting = 0;
	if (errno == EPIPE) {
		unlink_pending();
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	die_errno("%s", what);
}

const char *stdout_name = "stdout";

void
close_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout))
		write_failed(stdout_name);
	if (fclose(stdout) == EOF)
		write_failed(stdout_name);
}

void
stdout_buffer(void)
{
	static char b[1 << 18];

	setvbuf(stdout, b, _IOFBF, sizeof(b));
}

ssize_t
read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = read(fd, (char *)buf + off, len - off);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

int
write_full(int fd, const void *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = write(fd, (const char *)buf + off, len - off);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

uint8_t *
read_all(int fd, size_t *n, const char *name)
{
	struct buf b = { 0 };
	ssize_t k;

	for (;;) {
		if (buf_reserve(&b, 1 << 16) == -1)
			die_errno("%s", name);
		if ((k = read(fd, b.p + b.len, b.cap - b.len)) == -1) {
			if (errno == EINTR)
				continue;
			die_errno("%s", name);
		}
		if (k == 0)
			break;
		b.len += (size_t)k;
	}
	*n = b.len;
	return b.p;
}

int
open_input(const char *path)
{
	int fd;

	if (strcmp(path, "-") == 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		warn_errno("%s", path);
		return -1;
	}
	return fd;
}

const char *
input_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "stdin" : path;
}

void
refuse_tty(int fd, int force)
{
	if (!force && isatty(fd))
		die("refusing to write records to a terminal (use -o FILE or a pipe)");
}

int
out_writable(const char *path)
{
	struct stat st;
	const char *slash;
	char *dir;
	size_t n = strlen(path);
	int rv;

	if (strcmp(path, "-") == 0)
		return 0;
	if (n == 0) {
		errno = ENOENT;
		return -1;
	}
	if (path[n - 1] == '/') {
		errno = EISDIR;
		return -1;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return access(path, W_OK);
	} else if (errno != ENOENT)
		return -1;
	/* A new file and the rename need a directory we may write. */
	if ((slash = strrchr(path, '/')) == NULL)
		return access(".", W_OK | X_OK);
	if (slash == path)
		return access("/", W_OK | X_OK);
	if ((dir = strndup(path, (size_t)(slash - path))) == NULL)
		return -1;
	if ((rv = stat(dir, &st)) == 0 && !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		rv = -1;
	}
	if (rv == 0)
		rv = access(dir, W_OK | X_OK);
	free(dir);
	return rv;
}

void
out_check(const char *path)
{
	if (*path == '\0')
		die("an output file name is empty");
	if (out_writable(path) == -1)
		die_errno("%s", path);
}

static void
on_signal(int sig)
{
	unlink_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

int
out_open(struct outfile *o, const char *path)
{
	static int handlers;
	struct stat st;
	sigset_t all, old;
	size_t n;
	mode_t um;
	int fd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (strcmp(path, "-") == 0) {
		o->fd = 1;
		return 1;
	}
	if (out_writable(path) == -1)
		return -1;
	/*
	 * A device or a FIFO (-o /dev/null, -o /dev/stdout, a named pipe)
	 * is written in place: renaming a file over it would replace it.
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
			return -1;
		o->fd = fd;
		o->direct = 1;
		return fd;
	}
	n = strlen(path);
	if ((o->path = strdup(path)) == NULL || (o->tmp = malloc(n + 12)) == NULL)
		return -1;
	snprintf(o->tmp, n + 12, "%s.XXXXXX", path);
	if (!handlers) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		handlers = 1;
	}
	if ((fd = mkstemp(o->tmp)) == -1)
		return -1;
	um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	o->fd = fd;
	o->active = 1;
	/* The list changes with the signals held: the handler walks it. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	o->prev = NULL;
	o->next = pending;
	if (pending != NULL)
		pending->prev = o;
	pending = o;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return fd;
}

/* Take o off the pending list; its names are freed (o->path kept when keep_path). */
static void
forget(struct outfile *o, int keep_path)
{
	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (o->prev != NULL)
		o->prev->next = o->next;
	else if (pending == o)
		pending = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	o->prev = o->next = NULL;
	o->active = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(o->tmp);
	o->tmp = NULL;
	if (!keep_path) {
		free(o->path);
		o->path = NULL;
	}
}

int
out_commit(struct outfile *o)
{
	int e;

	if (o->direct) {
		o->direct = 0;
		return close(o->fd);
	}
	if (!o->active)
		return 0;
	if ((o->fd >= 0 && close(o->fd) == -1) || rename(o->tmp, o->path) == -1) {
		e = errno;
		o->fd = -1;
		unlink(o->tmp);
		forget(o, 1);
		errno = e;
		return -1;
	}
	o->fd = -1;
	forget(o, 0);
	return 0;
}

void
out_abort(struct outfile *o)
{
	if (o->direct) {
		o->direct = 0;
		close(o->fd);
		return;
	}
	if (!o->active)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	unlink(o->tmp);
	forget(o, 0);
}

int
out_finish(struct outfile *o, int ok)
{
	if (ok || keep_partial)
		return out_commit(o);
	out_abort(o);
	return 0;
}

static int
ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

enum rec_comp
comp_from_suffix(const char *path)
{
	if (ends_with(path, ".gz"))
		return REC_GZIP;
	if (ends_with(path, ".zz") || ends_with(path, ".zlib"))
		return REC_ZLIB;
	return REC_NONE;
}

int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	double d;
	unsigned long long v;
	uint64_t mul = 1;

	if (*s == '\0' || *s == '-')
		return -1;
	errno = 0;
	if (strpbrk(s, "eE.") != NULL) {
		d = strtod(s, &end);
		if (errno || *end != '\0' || d < 0 || d > 1.8e19 || d != (double)(uint64_t)d)
			return -1;
		*out = (uint64_t)d;
		return 0;
	}
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end != '\0') {
		switch (*end) {
		case 'k': case 'K': mul = 1000; break;
		case 'M': mul = 1000000; break;
		case 'G': mul = 1000000000; break;
		default: return -1;
		}
		if (end[1] == 'i') {
			mul = *end == 'k' || *end == 'K' ? 1024 : *end == 'M' ?
			    1024 * 1024 : 1024ull * 1024 * 1024;
			end++;
		}
		if (end[1] != '\0')
			return -1;
	}
	if (v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

uint64_t
max_record_arg(const char *s)
{
	uint64_t v;

	if (parse_size(s, &v) == -1)
		usage_error("--max-record-size: invalid number '%s'", s);
	return v;
}

int
parse_int(const char *s, long long lo, long long hi, long long *out)
{
	uint64_t u;
	long long v;
	int neg = *s == '-';

	/* One parser for every number: parse_size(), and a sign. */
	if (parse_size(s + neg, &u) == -1 ||
	    u > (neg ? (uint64_t)LLONG_MAX + 1 : (uint64_t)LLONG_MAX))
		return -1;
	if (neg)
		v = u == (uint64_t)LLONG_MAX + 1 ? LLONG_MIN : -(long long)u;
	else
		v = (long long)u;
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int
jobs_arg(const char *s)
{
	long long j;

	if (parse_int(s, 0, JOBS_MAX, &j) == -1)
		usage_error("-j: invalid number of jobs '%s' (0 to %d)", s, JOBS_MAX);
	return (int)j;
}

int
jobs_count(int j)
{
	long ncpu;

	if (j > 0)
		return j;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu < 1 ? 1 : ncpu > JOBS_AUTO_MAX ? JOBS_AUTO_MAX : (int)ncpu;
}

int
parse_shard(const char *s, uint64_t *k, uint64_t *n)
{
	char *end;
	unsigned long long a, b;

	errno = 0;
	a = strtoull(s, &end, 10);
	if (errno || end == s || *end != '/')
		return -1;
	s = end + 1;
	b = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0' || b == 0 || a >= b)
		return -1;
	*k = a;
	*n = b;
	return 0;
}

void
part_arg(const char *s, uint64_t *k, uint64_t *n)
{
	if (parse_shard(s, k, n) == -1 || *n > PART_MAX_N)
		usage_error("bad part: %s (K/N with 0 <= K < N)", s);
}

/* An operand read while a part is planned: opened on the first read. */
struct part_src {
	const char	*path;
	int		 fd;
};

static ssize_t
part_pread(void *arg, void *p, size_t n, uint64_t off)
{
	struct part_src *src = arg;
	ssize_t k;

	if (src->fd == -1 &&
	    (src->fd = open(src->path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		k = pread(src->fd, p, n, (off_t)off);
	while (k == -1 && errno == EINTR);
	return k;
}

struct part_file *
part_files(char **argv, int argc, int records, enum rec_comp comp,
    uint64_t k, uint64_t n)
{
	struct part_file *pf;
	struct part_op *ops;
	struct part_src *src;
	struct stat st;
	uint8_t head[12];
	size_t i, bad;
	ssize_t got;

	if (argc == 0)
		usage_error("--part needs files: standard input cannot be cut "
		    "into parts");
	if ((pf = calloc((size_t)argc, sizeof(*pf))) == NULL ||
	    (ops = calloc((size_t)argc, sizeof(*ops))) == NULL ||
	    (src = calloc((size_t)argc, sizeof(*src))) == NULL)
		die_errno("--part");
	for (i = 0; i < (size_t)argc; i++) {
		pf[i].path = src[i].path = argv[i];
		src[i].fd = -1;
		if (strcmp(argv[i], "-") == 0)
			usage_error("--part needs files: standard input cannot "
			    "be cut into parts");
		if (stat(argv[i], &st) == -1)
			die_errno("%s", argv[i]);
		if (!S_ISREG(st.st_mode))
			usage_error("--part needs regular files: %s is not one",
			    argv[i]);
		ops[i].size = (uint64_t)st.st_size;
		ops[i].kind = records ? PART_RECORDS : PART_LINES;
		ops[i].read = part_pread;
		ops[i].arg = &src[i];
		pf[i].comp = REC_NONE;
		if (!records || ops[i].size == 0)
			continue;
		pf[i].comp = comp;
		if (comp == REC_AUTO) {
			if ((got = part_pread(&src[i], head, sizeof(head), 0)) == -1)
				die_errno("%s", argv[i]);
			pf[i].comp = rec_sniff(head, (size_t)got);
		}
		if (pf[i].comp != REC_NONE)
			ops[i].kind = PART_WHOLE;
		if (src[i].fd != -1) {
			close(src[i].fd);
			src[i].fd = -1;
		}
	}
	if (part_plan(ops, (size_t)argc, k, n, &bad) == -1) {
		if (errno == EOVERFLOW)
			die("--part: the inputs add up to more than 2^64 bytes");
		die_errno("%s", argv[bad]);
	}
	for (i = 0; i < (size_t)argc; i++) {
		pf[i].size = ops[i].size;
		pf[i].from = ops[i].from;
		pf[i].to = ops[i].to;
		if (src[i].fd != -1)
			close(src[i].fd);
	}
	free(ops);
	free(src);
	return pf;
}

static struct timespec last_progress;
static int progress_shown;

int
progress_due(void)
{
	struct timespec now;
	long ms;

	if (progress_enabled == -1)
		progress_enabled = isatty(2);
	if (!progress_enabled || verbosity < 1)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - last_progress.tv_sec) * 1000 +
	    (now.tv_nsec - last_progress.tv_nsec) / 1000000;
	if (ms < 250)
		return 0;
	last_progress = now;
	return 1;
}

void
progress(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\r%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\033[K");
	progress_shown = 1;
}

void
progress_done(void)
{
	if (progress_shown) {
		fprintf(stderr, "\r\033[K");
		progress_shown = 0;
	}
}
