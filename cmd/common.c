/*
 * Command-line plumbing shared by the recpipe tools.
 */
#define _GNU_SOURCE		/* sched_getaffinity() */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "buf.h"
#include "common.h"
#include "io.h"
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

	for (o = pending; o != NULL; o = o->next) {
		if (o->active && o->tmp)
			unlink(o->tmp);
		if (o->lock != NULL)
			unlink(o->lock);
	}
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
die_nomem(void)
{
	die("out of memory");
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		die_nomem();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		die_nomem();
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		die_nomem();
	if ((p = realloc(p, n * size > 0 ? n * size : 1)) == NULL)
		die_nomem();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		die_nomem();
	return p;
}

void
fault_begin(void)
{
	faulting = 1;
}

void
out_commit_all(void)
{
	struct outfile *o, **v;
	size_t n = 0, bad;

	faulting = 0;
	for (o = pending; o != NULL; o = o->next)
		n++;
	v = xcalloc(n, sizeof(*v));
	/* In the order they were opened (a .bin before its .idx). */
	for (o = pending; o != NULL; o = o->next)
		v[--n] = o;
	for (o = pending; o != NULL; o = o->next)
		n++;
	if (out_commit_group(v, n, &bad) == -1)
		die_errno("%s", bad < n ? v[bad]->path : "output");
	free(v);
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
	static int closed;

	if (closed++)
		return;
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

void
obuf_open(struct obuf *b, int fd, const char *name, size_t size)
{
	memset(b, 0, sizeof *b);
	b->fd = fd;
	b->name = name;
	if ((b->grow = size == 0))
		size = 4096;
	b->p = xmalloc(size);
	b->size = size;
}

void
obuf_close(struct obuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->size = 0;
}

void
obuf_flush(struct obuf *b)
{
	if (b->len == 0)
		return;
	if ((b->gate == NULL || b->gate(b->gate_arg) == 0) &&
	    rp_write_full(b->fd, b->p, b->len) == -1)
		write_failed(b->name);
	b->out += b->len;
	b->len = 0;
}

int
obuf_reserve(struct obuf *b, size_t n)
{
	struct buf t;

	if (b->size - b->len >= n)
		return 0;
	if (!b->grow) {
		obuf_flush(b);
		if (b->size >= n)
			return 0;
	}
	/* The bytes as a struct buf, which knows how to grow. */
	t.p = (uint8_t *)b->p;
	t.len = b->len;
	t.cap = b->size;
	if (rp_buf_reserve(&t, n) == -1)
		return -1;
	b->p = (char *)t.p;
	b->size = t.cap;
	return 0;
}

/* obuf_write() when p[0 .. n) does not fit as it is (or n is 0). */
int
obuf_write_slow(struct obuf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (b->grow) {
		if (obuf_reserve(b, n) == -1)
			return -1;
	} else
		while (n > b->size - b->len) {
			size_t k = b->size - b->len;

			memcpy(b->p + b->len, p, k);
			b->len += k;
			p = (const char *)p + k;
			n -= k;
			obuf_flush(b);
		}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int
obuf_puts(struct obuf *b, const char *s)
{
	return obuf_write(b, s, strlen(s));
}

void
obuf_printf(struct obuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (obuf_write(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n :
	    sizeof tmp - 1) == -1)
		die_nomem();
}

void
obuf_put_direct(struct obuf *b, const void *p, size_t n)
{
	obuf_flush(b);
	if (n > 0 && (b->gate == NULL || b->gate(b->gate_arg) == 0) &&
	    rp_write_full(b->fd, p, n) == -1)
		write_failed(b->name);
	b->out += n;
}

uint8_t *
read_all(int fd, size_t *n, const char *name)
{
	struct buf b = { 0 };

	if (rp_buf_read_fd(&b, fd, SIZE_MAX) == -1)
		die_errno("%s", name);
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

/* Directories out_make_dirs() made, removed at exit when still empty. */
static char **made_dirs;
static size_t nmade_dirs;

static void
remove_made_dirs(void)
{
	while (nmade_dirs > 0)
		rmdir(made_dirs[--nmade_dirs]);	/* fails, as it should, once used */
}

void
out_make_dirs(const char *path)
{
	char *p, *q, **v;
	int first = nmade_dirs == 0 && made_dirs == NULL;

	if (strcmp(path, "-") == 0 || strchr(path, '/') == NULL)
		return;
	p = xstrdup(path);
	*strrchr(p, '/') = '\0';
	/* each missing component of the directory, outermost first */
	for (q = p + 1; *p != '\0'; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		char c = *q;

		*q = '\0';
		if (mkdir(p, 0777) == 0) {
			v = xreallocarray(made_dirs, nmade_dirs + 1, sizeof(*v));
			v[nmade_dirs] = xstrdup(p);
			made_dirs = v;
			nmade_dirs++;
		} else if (errno != EEXIST)
			die_errno("%s", p);
		*q = c;
		if (c == '\0')
			break;
	}
	free(p);
	if (first && nmade_dirs > 0)
		atexit(remove_made_dirs);
}

void
out_check(const char *path)
{
	if (*path == '\0')
		die("an output file name is empty");
	if (out_writable(path) == -1)
		die_errno("%s", path);
}

static void forget(struct outfile *o, int keep_path);
static void abort_out(struct outfile *o, int keep_path);

static void
on_signal(int sig)
{
	unlink_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Where a named output is written: 'path', or, when 'path' is a
 * symbolic link, the file it finally names (which may not exist yet),
 * so that the link stays and its target gets the new data.  Returns a
 * new string, or NULL with errno (ELOOP after 40 links).
 */
static char *
out_target(const char *path)
{
	char *cur, *next, link[PATH_MAX];
	const char *slash;
	ssize_t n;
	int hops;

	if ((cur = strdup(path)) == NULL)
		return NULL;
	for (hops = 0; (n = readlink(cur, link, sizeof(link) - 1)) >= 0; hops++) {
		if (hops == 40) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		link[n] = '\0';
		if (link[0] == '/' || (slash = strrchr(cur, '/')) == NULL)
			next = strdup(link);
		else if ((next = malloc((size_t)(slash - cur) + 2 + (size_t)n)) != NULL)
			snprintf(next, (size_t)(slash - cur) + 2 + (size_t)n,
			    "%.*s/%s", (int)(slash - cur), cur, link);
		free(cur);
		if ((cur = next) == NULL)
			return NULL;
	}
	if (errno != EINVAL && errno != ENOENT) {
		free(cur);
		return NULL;
	}
	return cur;
}

/* The directory part of 'path' ("." for none), in buf. */
static const char *
dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return ".";
	if (slash == path)
		return "/";
	snprintf(buf, size, "%.*s", (int)(slash - path), path);
	return buf;
}

/*
 * Whether process 'pid' of this host runs: it exists and is not a
 * zombie (a killed writer whose parent has not reaped it yet, or never
 * will in a container whose first process reaps nothing).
 */
static int
pid_alive(long pid)
{
	char path[64], st[512], *p;
	ssize_t n;
	int fd;

	if (pid <= 0 || (kill((pid_t)pid, 0) == -1 && errno != EPERM))
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 1;
	n = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	st[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' */
	if ((p = strrchr(st, ')')) != NULL && p[1] == ' ' && p[2] == 'Z')
		return 0;
	return 1;
}

/*
 * Stale temporaries.  A temporary is named TARGET.rp-PID-XXXXXX (a
 * group's kept old file, the same with ".old"), so that a later writer
 * of TARGET knows it for one of ours and whose it was.  Each directory
 * is read once a run; a temporary of TARGET is removed once this run
 * holds TARGET's lock (so no writer of TARGET is alive) and its
 * process is gone.
 */
struct stale_dir {
	char	*dir;
	char	**names;
	size_t	 n;
	struct stale_dir *next;
};
static struct stale_dir *stale_dirs;

/* The length of the TARGET part of a temporary's name, or 0 for another name. */
static size_t
temp_base(const char *name, long *pid)
{
	const char *p = name, *q, *mark = NULL;
	size_t k;

	while ((q = strstr(p, ".rp-")) != NULL) {
		mark = q;
		p = q + 1;
	}
	if (mark == NULL || mark == name)
		return 0;
	p = mark + 4;
	if (!isdigit((unsigned char)*p))
		return 0;
	*pid = 0;
	for (; isdigit((unsigned char)*p) && *pid < 100000000; p++)
		*pid = *pid * 10 + (*p - '0');
	if (*p++ != '-')
		return 0;
	for (k = 0; k < 6; k++)
		if (!isalnum((unsigned char)p[k]))
			return 0;
	if (p[6] != '\0' && strcmp(p + 6, ".old") != 0)
		return 0;
	return (size_t)(mark - name);
}

static void
sweep_stale(const char *target)
{
	char dbuf[PATH_MAX], path[PATH_MAX + NAME_MAX + 2];
	const char *dir = dir_of(target, dbuf, sizeof(dbuf));
	const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	struct stale_dir *d;
	struct dirent *de;
	DIR *dp;
	size_t i, len = strlen(base);
	long pid;
	char **v;

	for (d = stale_dirs; d != NULL; d = d->next)
		if (strcmp(d->dir, dir) == 0)
			break;
	if (d == NULL) {
		if ((d = calloc(1, sizeof(*d))) == NULL ||
		    (d->dir = strdup(dir)) == NULL) {
			free(d);
			return;
		}
		d->next = stale_dirs;
		stale_dirs = d;
		if ((dp = opendir(dir)) == NULL)
			return;
		while ((de = readdir(dp)) != NULL) {
			if (temp_base(de->d_name, &pid) == 0 ||
			    pid == (long)getpid() || pid_alive(pid))
				continue;
			if ((v = realloc(d->names, (d->n + 1) * sizeof(*v))) == NULL)
				break;
			d->names = v;
			if ((d->names[d->n] = strdup(de->d_name)) != NULL)
				d->n++;
		}
		closedir(dp);
	}
	for (i = 0; i < d->n; i++) {
		if (d->names[i] == NULL || temp_base(d->names[i], &pid) != len ||
		    memcmp(d->names[i], base, len) != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    d->names[i]) < sizeof(path))
			unlink(path);
		free(d->names[i]);
		d->names[i] = NULL;
	}
}


/*
 * The lock of an output: TARGET.lock, made with O_EXCL, holding "PID
 * HOST" of its writer, and removed when the output is committed or
 * given up.  A lock left by a process of this host that is gone is
 * taken over (under flock(), so that two processes doing so at once
 * cannot both have it).  This process may hold one lock for several
 * of its outputs of one name (a shard written twice).  Returns 0, or
 * dies naming the writer that holds it.
 */
static int
lock_take(struct outfile *o, const char *target)
{
	char host[256], line[400], ohost[256];
	struct outfile *p;
	struct stat a, b;
	size_t n = strlen(target);
	long opid;
	int fd, tries, empty = 0;
	ssize_t r;

	if ((o->lock = malloc(n + 6)) == NULL)
		return -1;
	snprintf(o->lock, n + 6, "%s.lock", target);
	for (p = pending; p != NULL; p = p->next)
		if (p->lock != NULL && strcmp(p->lock, o->lock) == 0)
			return 0;	/* ours already */
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	for (tries = 0; tries < 10000; tries++) {
		fd = open(o->lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			n = (size_t)snprintf(line, sizeof(line), "%ld %s\n",
			    (long)getpid(), host);
			if (rp_write_full(fd, line, n) == -1 || close(fd) == -1) {
				unlink(o->lock);
				return -1;
			}
			return 0;
		}
		if (errno != EEXIST)
			return -1;
		if ((fd = open(o->lock, O_RDONLY | O_CLOEXEC)) == -1) {
			if (errno == ENOENT)
				continue;
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == -1 ||
		    (r = rp_read_full(fd, line, sizeof(line) - 1)) < 0 ||
		    fstat(fd, &a) == -1 || stat(o->lock, &b) == -1 ||
		    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
			close(fd);
			usleep(1000);
			continue;	/* being taken over, or replaced */
		}
		line[r] = '\0';
		if (sscanf(line, "%ld %255s", &opid, ohost) != 2) {
			/* being written by its maker, or left empty by a kill */
			close(fd);
			if (++empty < 1000) {
				usleep(1000);
				continue;
			}
			opid = 0;
			snprintf(ohost, sizeof(ohost), "%s", host);
		}
		if (strcmp(ohost, host) != 0) {
			close(fd);
			die("%s: locked by process %ld on host %s (%s); remove "
			    "the lock if that process has ended", target, opid,
			    ohost, o->lock);
		}
		if (opid > 0 && opid != (long)getpid() && pid_alive(opid)) {
			close(fd);
			die("%s: another process (%ld) is writing it; its lock "
			    "is %s", target, opid, o->lock);
		}
		/* Its writer is gone: the lock is stale. */
		unlink(o->lock);
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

/* Give up o's lock unless another pending output of this process shares it. */
static void
lock_drop(struct outfile *o)
{
	struct outfile *p;
	char *l = o->lock;

	if (l == NULL)
		return;
	o->lock = NULL;
	for (p = pending; p != NULL; p = p->next)
		if (p != o && p->lock != NULL && strcmp(p->lock, l) == 0)
			break;
	if (p == NULL)
		unlink(l);
	free(l);
}

int
out_open(struct outfile *o, const char *path)
{
	static int handlers;
	struct stat st;
	sigset_t all, old;
	size_t n;
	mode_t um;
	int fd, had;

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
	/* Through a symbolic link to the file it names. */
	if ((o->path = out_target(path)) == NULL)
		return -1;
	if (strcmp(o->path, path) != 0 && out_writable(o->path) == -1)
		return -1;
	had = stat(o->path, &st) == 0;
	n = strlen(o->path);
	if ((o->tmp = malloc(n + 40)) == NULL)
		return -1;
	snprintf(o->tmp, n + 40, "%s.rp-%ld-XXXXXX", o->path, (long)getpid());
	if (!handlers) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		handlers = 1;
	}
	/* The list changes with the signals held: the handler walks it. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (lock_take(o, o->path) == -1) {
		int e = errno;

		free(o->lock);
		o->lock = NULL;
		sigprocmask(SIG_SETMASK, &old, NULL);
		errno = e;
		return -1;
	}
	o->prev = NULL;
	o->next = pending;
	if (pending != NULL)
		pending->prev = o;
	pending = o;
	sigprocmask(SIG_SETMASK, &old, NULL);
	sweep_stale(o->path);
	if ((fd = mkstemp(o->tmp)) == -1) {
		int e = errno;

		forget(o, 1);
		errno = e;
		return -1;
	}
	/* The mode (and owner, where allowed) of the file replaced, as '>' keeps them. */
	if (had) {
		fchmod(fd, st.st_mode & 07777);
		if (st.st_uid != geteuid() || st.st_gid != getegid())
			if (fchown(fd, st.st_uid, st.st_gid) == 0)
				fchmod(fd, st.st_mode & 07777);
	} else {
		um = umask(0);
		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	o->fd = fd;
	o->active = 1;
	return fd;
}

/* Take o off the pending list and drop its lock; its names are freed (o->path kept when keep_path). */
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
	lock_drop(o);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(o->tmp);
	o->tmp = NULL;
	if (!keep_path) {
		free(o->path);
		o->path = NULL;
	}
}

/* Wait for a child, through signals: 0 with its status, or -1 with errno. */
static int
wait_child(pid_t pid, int *st)
{
	while (waitpid(pid, st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Close the pipe to a compressing child and wait for it: 0, or -1 with errno. */
static int
zchild_end(struct outfile *o, int kill_it)
{
	int st, e = 0;

	if (o->zpid == 0)
		return 0;
	if (o->fd >= 0 && close(o->fd) == -1)
		e = errno;
	o->fd = -1;
	if (kill_it)
		kill(o->zpid, SIGTERM);
	if (wait_child(o->zpid, &st) == -1)
		e = errno;
	o->zpid = 0;
	if (e == 0 && !kill_it && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		e = WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
	if (e != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

/*
 * Put o's data on disk and close it (before the rename that makes it
 * the output, so that a power loss after the rename cannot leave the
 * name on an empty file).  0, or -1 with errno.
 */
/* RECPIPE_FSYNC=0: scratch outputs, no syncs (recpipe(5)). */
static int
want_sync(void)
{
	const char *e = getenv("RECPIPE_FSYNC");

	return e == NULL || strcmp(e, "0") != 0;
}

static int
sync_close(struct outfile *o)
{
	int fd = o->fd, e;

	o->fd = -1;
	if (!want_sync())
		return fd >= 0 ? close(fd) : 0;
	if (fd < 0 && (fd = open(o->tmp, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fsync(fd) == -1 && errno != EINVAL && errno != EROFS) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* Make the renames in path's directory durable. */
static void
sync_dir(const char *path)
{
	char dbuf[PATH_MAX];
	int fd;

	if (!want_sync())
		return;
	if ((fd = open(dir_of(path, dbuf, sizeof(dbuf)),
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
}

int
out_commit(struct outfile *o)
{
	size_t failed;

	return out_commit_group(&o, 1, &failed);
}

int
out_commit_group(struct outfile **v, size_t n, size_t *failed)
{
	sigset_t all, old;
	char **keep, *lost;
	char lastdir[PATH_MAX] = "";
	size_t i, j, len, done = 0;
	int e = 0, rv = 0;

	*failed = SIZE_MAX;
	/* Compressing children end first; the data goes to disk. */
	for (i = 0; i < n && rv == 0; i++) {
		if (v[i]->zpid != 0 && zchild_end(v[i], 0) == -1)
			rv = -1;
		else if (v[i]->active && sync_close(v[i]) == -1)
			rv = -1;
		if (rv == -1) {
			e = errno;
			*failed = i;
		}
	}
	if (rv == -1) {
		for (i = 0; i < n; i++)
			abort_out(v[i], 1);
		errno = e;
		return -1;
	}
	if ((keep = calloc(n ? n : 1, sizeof *keep)) == NULL)
		return -1;
	if ((lost = calloc(n ? n : 1, 1)) == NULL) {
		free(keep);
		return -1;
	}
	/* A signal waits until the group is in place or rolled back. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	/*
	 * The old members leave first, each kept under a hard link: from
	 * here on, a crash (kill -9, power loss) leaves old members only,
	 * new members only, or some missing -- never old beside new.
	 */
	for (i = 0; i < n && n > 1 && rv == 0; i++) {
		if (!v[i]->active)
			continue;
		len = strlen(v[i]->tmp) + 5;
		if ((keep[i] = malloc(len)) == NULL) {
			e = errno;
			*failed = i;
			rv = -1;
			break;
		}
		snprintf(keep[i], len, "%s.old", v[i]->tmp);
		if (link(v[i]->path, keep[i]) == -1) {
			/* An old file that cannot be kept stays, to be replaced. */
			lost[i] = errno != ENOENT;
			free(keep[i]);
			keep[i] = NULL;
		} else
			unlink(v[i]->path);
	}
	/* v[0 .. done) are renamed. */
	for (; rv == 0 && done < n; done++) {
		if (!v[done]->active)
			continue;
		if (rename(v[done]->tmp, v[done]->path) == -1) {
			e = errno;
			*failed = done;
			rv = -1;
			break;
		}
	}
	if (rv == -1)
		/* Back to the old files, newest first. */
		for (j = n; j-- > 0;) {
			if (!v[j]->active)
				continue;
			if (j < done && keep[j] == NULL && !lost[j])
				unlink(v[j]->path);
			else if (keep[j] != NULL && rename(keep[j], v[j]->path) == 0) {
				free(keep[j]);
				keep[j] = NULL;
			}
		}
	for (i = 0; rv == 0 && i < n; i++) {
		char dbuf[PATH_MAX];
		const char *d;

		if (!v[i]->active)
			continue;
		d = dir_of(v[i]->path, dbuf, sizeof(dbuf));
		if (strcmp(lastdir, d) != 0) {
			sync_dir(v[i]->path);
			snprintf(lastdir, sizeof(lastdir), "%s", d);
		}
	}
	for (i = 0; i < n; i++) {
		if (keep[i] != NULL)
			unlink(keep[i]);
		free(keep[i]);
		if (i < done && v[i]->active)
			forget(v[i], 0);
		else if (rv == -1)
			abort_out(v[i], 1);	/* its temporary, or a device */
	}
	free(keep);
	free(lost);
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (i = 0; rv == 0 && i < n; i++)
		if (v[i]->direct) {
			v[i]->direct = 0;
			if (v[i]->fd >= 0 && close(v[i]->fd) == -1) {
				e = errno;
				*failed = i;
				rv = -1;
			}
			v[i]->fd = -1;
		}
	errno = e;
	return rv;
}

void
out_abort(struct outfile *o)
{
	abort_out(o, 0);
}

/* out_abort(), with o->path kept when keep_path (for the caller's message). */
static void
abort_out(struct outfile *o, int keep_path)
{
	zchild_end(o, 1);
	if (o->direct) {
		o->direct = 0;
		if (o->fd >= 0)
			close(o->fd);
		return;
	}
	if (!o->active)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	unlink(o->tmp);
	forget(o, keep_path);
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
	return size_arg("--max-record-size", s);
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
parse_real(const char *s, double *out)
{
	char *end;
	double d;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end != '\0' || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

long long
num_arg(const char *opt, const char *s, long long lo, long long hi)
{
	long long v;

	if (parse_int(s, lo, hi, &v) == -1)
		usage_error("%s: expected an integer from %lld to %lld, not '%s'",
		    opt, lo, hi, s);
	return v;
}

uint64_t
size_arg(const char *opt, const char *s)
{
	uint64_t v;

	if (parse_size(s, &v) == -1)
		usage_error("%s: expected a size (a whole number, with k, M, G, "
		    "Ki, Mi or Gi), not '%s'", opt, s);
	return v;
}

double
rate_arg(const char *opt, const char *s)
{
	size_t n = strlen(s);
	char num[64];
	double d;
	int ok;

	if (n > 1 && s[n - 1] == '%') {
		/* A percentage: the number before the '%', over 100. */
		ok = n - 1 < sizeof num;
		if (ok) {
			memcpy(num, s, n - 1);
			num[n - 1] = '\0';
			ok = parse_real(num, &d) == 0;
			d /= 100;
		}
	} else
		ok = parse_real(s, &d) == 0;
	if (!ok || !(d >= 0 && d <= 1))
		usage_error("%s: expected a fraction from 0 to 1 (or a percentage "
		    "like 5%%), not '%s'", opt, s);
	return d;
}

int
jobs_arg(const char *s)
{
	return (int)num_arg("-j", s, 0, JOBS_MAX);
}

/*
 * The processors this process may use: Slurm's SLURM_CPUS_PER_TASK
 * when it set one (the task's share of the allocation), else the
 * affinity mask it was started with (taskset, cgroup cpusets, mpirun
 * binding), else the online processors.
 */
static long
cpus_allowed(void)
{
	const char *s = getenv("SLURM_CPUS_PER_TASK");
	cpu_set_t set;
	char *end;
	long n;

	if (s != NULL && *s != '\0') {
		errno = 0;
		n = strtol(s, &end, 10);
		if (errno == 0 && *end == '\0' && n > 0)
			return n;
	}
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

int
jobs_count(int j)
{
	long ncpu;

	if (j > 0)
		return j;
	ncpu = cpus_allowed();
	return ncpu < 1 ? 1 : ncpu > JOBS_AUTO_MAX ? JOBS_AUTO_MAX : (int)ncpu;
}

int
parse_shard(const char *s, uint64_t *k, uint64_t *n)
{
	char *end;
	unsigned long long a, b;

	/* Digits only: no blank, sign or base prefix on either side. */
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -1;
	a = strtoull(s, &end, 10);
	if (errno || end == s || *end != '/')
		return -1;
	s = end + 1;
	if (!isdigit((unsigned char)*s))
		return -1;
	b = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0' || b == 0 || a >= b)
		return -1;
	*k = a;
	*n = b;
	return 0;
}

/*
 * An engine's variable: 0 when it is not set (or SGE's "undefined"),
 * 1 with its value; a value that is not a number of digits is a usage
 * error naming it.
 */
static int
env_num(const char *name, uint64_t *v)
{
	const char *s = getenv(name), *p;
	char *end;

	if (s == NULL || *s == '\0' || strcmp(s, "undefined") == 0)
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			usage_error("--part auto: %s=%s is not a task number "
			    "(digits only)", name, s);
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno != 0 || *v > PART_MAX_N)
		usage_error("--part auto: %s=%s is too large", name, s);
	return 1;
}

/* A count of digits only, as env_num() takes it: 1, or 0 for another string. */
static int
env_num_str(const char *s, uint64_t *v)
{
	const char *p;
	char *end;

	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == 0 && p != s;
}

/* A variable an engine always sets beside the one found. */
static uint64_t
env_need(const char *name, const char *engine, const char *found)
{
	uint64_t v;

	if (!env_num(name, &v))
		usage_error("--part auto: %s is set but not %s (%s)", found,
		    name, engine);
	return v;
}

/*
 * A job array's part: task ID of the range LO..HI by STEP (1 when not
 * set), the variables named; 0 when ID is not set.
 */
static int
array_part(const char *idv, const char *lov, const char *hiv,
    const char *stepv, const char *engine, uint64_t *k, uint64_t *n)
{
	uint64_t id, lo, hi, step;

	if (!env_num(idv, &id))
		return 0;
	lo = env_need(lov, engine, idv);
	hi = env_need(hiv, engine, idv);
	if (!env_num(stepv, &step))
		step = 1;
	if (step == 0 || hi < lo || id < lo || id > hi || (id - lo) % step != 0)
		usage_error("--part auto: %s=%ju is not a task of the array "
		    "%ju-%ju:%ju", idv, (uintmax_t)id, (uintmax_t)lo,
		    (uintmax_t)hi, (uintmax_t)step);
	*k = (id - lo) / step;
	*n = (hi - lo) / step + 1;
	return 1;
}

/*
 * --part auto[/N]: K and N from the engine that started the process,
 * looked for in this order: an MPI launch (Open MPI, then PMI: MPICH,
 * Intel MPI, srun --mpi=pmi2), a Slurm job array, a Grid Engine array,
 * GNU parallel (its job number; the count is N, which only "auto/N"
 * gives).  A count given as auto/N must be the engine's.
 */
static void
part_auto(const char *s, uint64_t *k, uint64_t *n)
{
	uint64_t id, cnt, given = 0;
	const char *what;

	if (s[4] == '/') {
		if (!isdigit((unsigned char)s[5]) || !env_num_str(s + 5, &given) ||
		    given == 0 || given > PART_MAX_N)
			usage_error("--part: expected auto, or auto/N with N > 0, not '%s'", s);
	} else if (s[4] != '\0')
		usage_error("--part: expected K/N, auto or auto/N, not '%s'", s);
	if (env_num("OMPI_COMM_WORLD_RANK", &id)) {
		*k = id;
		*n = env_need("OMPI_COMM_WORLD_SIZE", "Open MPI",
		    "OMPI_COMM_WORLD_RANK");
		what = "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE";
	} else if (env_num("PMI_RANK", &id)) {
		*k = id;
		*n = env_need("PMI_SIZE", "MPI", "PMI_RANK");
		what = "PMI_RANK/PMI_SIZE";
	} else if (array_part("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
	    "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "a Slurm array",
	    k, n)) {
		if (env_num("SLURM_ARRAY_TASK_COUNT", &cnt) && cnt != *n)
			usage_error("--part auto: the Slurm array has %ju tasks, "
			    "but SLURM_ARRAY_TASK_COUNT=%ju (an array of parts "
			    "is one range: --array=0-%ju)", (uintmax_t)*n,
			    (uintmax_t)cnt, (uintmax_t)cnt - 1);
		what = "SLURM_ARRAY_TASK_ID in SLURM_ARRAY_TASK_MIN..MAX";
	} else if (array_part("SGE_TASK_ID", "SGE_TASK_FIRST", "SGE_TASK_LAST",
	    "SGE_TASK_STEPSIZE", "a Grid Engine array", k, n)) {
		what = "SGE_TASK_ID in SGE_TASK_FIRST..LAST";
	} else if (env_num("PARALLEL_SEQ", &id)) {
		if (given == 0)
			usage_error("--part auto: GNU parallel gives the job "
			    "number (PARALLEL_SEQ=%ju) but not the number of "
			    "jobs: pass it, as --part auto/N", (uintmax_t)id);
		if (id == 0 || id > given)
			usage_error("--part auto/%ju: PARALLEL_SEQ=%ju is not a "
			    "job of %ju (1 to %ju)", (uintmax_t)given,
			    (uintmax_t)id, (uintmax_t)given, (uintmax_t)given);
		*k = id - 1;
		*n = given;
		return;
	} else
		usage_error("--part auto: no engine gives the part: none of "
		    "OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_ARRAY_TASK_ID, "
		    "SGE_TASK_ID or PARALLEL_SEQ is set");
	if (*n == 0 || *k >= *n)
		usage_error("--part auto: part %ju of %ju from %s: not 0 <= K < N",
		    (uintmax_t)*k, (uintmax_t)*n, what);
	if (given != 0 && given != *n)
		usage_error("--part auto/%ju: the engine runs %ju tasks (%s)",
		    (uintmax_t)given, (uintmax_t)*n, what);
}

void
part_arg(const char *s, uint64_t *k, uint64_t *n)
{
	if (strncmp(s, "auto", 4) == 0) {
		part_auto(s, k, n);
		return;
	}
	if (parse_shard(s, k, n) == -1 || *n > PART_MAX_N)
		usage_error("--part: expected K/N with 0 <= K < N, not '%s'", s);
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

/* ---- outputs follow their suffix ---- */

static const char *const rec_suffixes[] = { ".tfrecord", ".tfrecords", ".tfr" };
static const char *const text_suffixes[] = {
	".txt", ".json", ".jsonl", ".ndjson", ".tsv", ".csv"
};

/* Compressions we cannot write, and the tool that makes them. */
static const struct {
	const char *suffix, *name, *cmd;
} foreign_comp[] = {
	{ ".zst", "zstd", "zstd" }, { ".zstd", "zstd", "zstd" },
	{ ".xz", "xz", "xz" }, { ".lzma", "lzma", "xz --format=lzma" },
	{ ".bz2", "bzip2", "bzip2" }, { ".lz4", "lz4", "lz4" },
	{ ".br", "brotli", "brotli" }, { ".Z", "compress", "compress" },
};

/* Length of path without a compression suffix we write (.gz, .zz, .zlib). */
static size_t
stem_len(const char *path)
{
	size_t n = strlen(path);

	if (ends_with(path, ".gz") || ends_with(path, ".zz"))
		return n - 3;
	if (ends_with(path, ".zlib"))
		return n - 5;
	return n;
}

static int
stem_ends(const char *path, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && strncmp(path + n - m, suf, m) == 0;
}

/*
 * Whether path[0..n) ends in -NNNNN-of-NNNNN, five digits or more on
 * each side (a shard name as TensorFlow and tensor2tensor write them).
 * Shorter numbers are common in other names (counts-0-of-3, a part's
 * text output) and say nothing of the format.
 */
static int
shard_name(const char *path, size_t n)
{
	size_t i = n, d;

	for (d = 0; i > 0 && isdigit((unsigned char)path[i - 1]); i--)
		d++;
	if (d < 5 || i < 4 || strncmp(path + i - 4, "-of-", 4) != 0)
		return 0;
	i -= 4;
	for (d = 0; i > 0 && isdigit((unsigned char)path[i - 1]); i--)
		d++;
	return d >= 5 && i > 0 && path[i - 1] == '-';
}

int
suffix_records(const char *path)
{
	size_t i, n = stem_len(path);

	for (i = 0; i < sizeof(rec_suffixes) / sizeof(*rec_suffixes); i++)
		if (stem_ends(path, n, rec_suffixes[i]))
			return 1;
	return shard_name(path, n);
}

int
suffix_text(const char *path)
{
	size_t i, n = stem_len(path);

	for (i = 0; i < sizeof(text_suffixes) / sizeof(*text_suffixes); i++)
		if (stem_ends(path, n, text_suffixes[i]))
			return 1;
	return 0;
}

enum rec_comp
out_form(const char *path, enum out_kind kind, const char *hint)
{
	size_t i;

	if (path == NULL || strcmp(path, "-") == 0)
		return REC_NONE;
	for (i = 0; i < sizeof(foreign_comp) / sizeof(*foreign_comp); i++)
		if (ends_with(path, foreign_comp[i].suffix))
			usage_error("%s: cannot write %s; name it .gz (gzip) "
			    "or write to stdout and pipe through '%s'", path,
			    foreign_comp[i].name, foreign_comp[i].cmd);
	if (kind == WRITES_TEXT && suffix_records(path))
		usage_error("%s: a record file name, but the output is text%s%s",
		    path, hint ? "; " : "", hint ? hint : "");
	if (kind == WRITES_RECORDS && suffix_text(path))
		usage_error("%s: a text file name, but the output is records%s%s",
		    path, hint ? "; " : "", hint ? hint : "");
	return comp_from_suffix(path);
}

/* Close every descriptor from 'from' up (in a child, before its work). */
static void
close_from(int from)
{
	long i, max;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)from, ~0u, 0u) == 0)
		return;
#endif
	if ((max = sysconf(_SC_OPEN_MAX)) < 0 || max > 65536)
		max = 65536;
	for (i = from; i < max; i++)
		close((int)i);
}

/*
 * The compressing child: stdin to stdout through deflate.  Exits 0, or
 * with the errno of a failed write after reading its input to the end
 * (so that the writer sees the failure at out_commit(), not a closed pipe).
 */
static _Noreturn void
deflate_child(int wbits)
{
	static uint8_t in[1 << 16], out[1 << 16];
	z_stream z;
	ssize_t n;
	int err = 0, flush = Z_NO_FLUSH, rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, wbits, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		_exit(ENOMEM);
	do {
		if ((n = rp_read(0, in, sizeof(in))) == -1)
			_exit(errno);
		flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
		if (err)
			continue;
		z.next_in = in;
		z.avail_in = (uInt)n;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			rc = deflate(&z, flush);
			if (rc == Z_STREAM_ERROR)
				_exit(EIO);
			if (rp_write_full(1, out, sizeof(out) - z.avail_out) == -1) {
				err = errno;
				break;
			}
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
	if (!err && close(1) == -1)
		err = errno;
	_exit(err);
}

/* Fork a child running fn on stdin 'in' and stdout 'out'; -1 with errno. */
static pid_t
spawn_filter(int in, int out, void (*fn)(int), int arg)
{
	pid_t pid;

	if ((pid = fork()) == -1)
		return -1;
	if (pid > 0)
		return pid;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if ((in != 0 && dup2(in, 0) == -1) || (out != 1 && dup2(out, 1) == -1))
		_exit(errno);
	close_from(3);
	fn(arg);
	_exit(0);
}

static void
deflate_fn(int wbits)
{
	deflate_child(wbits);
}

int
out_open_text(struct outfile *o, const char *path)
{
	enum rec_comp c = comp_from_suffix(path);
	int fd, p[2];
	pid_t pid;

	if ((fd = out_open(o, path)) == -1 || fd == 1 || c == REC_NONE)
		return fd;
	if (pipe(p) == -1)
		return -1;
	if ((pid = spawn_filter(p[0], fd, deflate_fn, c == REC_GZIP ? 31 : 15)) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[0]);
	close(fd);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	o->fd = p[1];
	o->zpid = pid;
	return p[1];
}

void
output_open(struct output *out, const char *path, enum out_kind kind,
    const char *hint)
{
	output_open_with(out, path, kind, hint, REC_AUTO, 0);
}

void
output_open_with(struct output *out, const char *path, enum out_kind kind,
    const char *hint, enum rec_comp comp, unsigned flags)
{
	memset(out, 0, sizeof(*out));
	if (path == NULL)
		path = "-";
	out->comp = out_form(path, kind, hint);
	if (comp != REC_AUTO)
		out->comp = comp;
	out->name = strcmp(path, "-") == 0 ? "stdout" : path;
	out->fd = kind == WRITES_RECORDS ? out_open(&out->file, path) :
	    out_open_text(&out->file, path);
	if (out->fd == -1)
		die_errno("%s", path);
	if (kind != WRITES_RECORDS)
		return;
	if (out->fd == 1)
		refuse_tty(1, (flags & OUTPUT_FORCE) != 0);
	if ((flags & OUTPUT_BY_NAME) && out->file.active) {
		/* Keep the name, not the descriptor. */
		close(out->fd);
		out->fd = out->file.fd = -1;
	} else if ((out->w = rec_writer_open(out->fd, out->comp, -1)) == NULL)
		die_errno("%s", out->name);
}

void
output_end_stream(struct output *out)
{
	struct rec_writer *w = out->w;

	out->w = NULL;
	if (w != NULL && rec_writer_close(w) == -1)
		write_failed(out->name);
}

void
output_close(struct output *out, int ok)
{
	output_close_group(&out, 1, ok);
}

void
output_close_group(struct output **v, size_t n, int ok)
{
	struct outfile **f;
	size_t i, bad;
	int std = 0;

	for (i = 0; i < n; i++) {
		output_end_stream(v[i]);
		std |= v[i]->fd == 1;
	}
	if (ok || keep_partial) {
		f = xcalloc(n, sizeof(*f));
		for (i = 0; i < n; i++)
			f[i] = &v[i]->file;
		if (out_commit_group(f, n, &bad) == -1)
			die_errno("%s", v[bad < n ? bad : 0]->name);
		free(f);
	} else
		for (i = 0; i < n; i++)
			out_abort(&v[i]->file);
	if (std)
		close_stdout();
}

/* ---- text inputs ---- */

const char *
sniff_compression(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "gzip";
	/* zlib, only the headers whose second byte cannot begin UTF-8 text */
	if (n >= 2 && p[0] == 0x78 && (p[1] == 0x9c || p[1] == 0xda))
		return "zlib";
	if (n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0)
		return "xz";
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return "zstd";
	if (n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
	    memcmp(p + 4, "1AY&SY", 6) == 0)
		return "bzip2";
	if (n >= 4 && memcmp(p, "\x04\x22\x4d\x18", 4) == 0)
		return "lz4";
	return NULL;
}

/* Children feeding text inputs: by the fd the reader holds. */
static struct {
	int	fd;
	pid_t	pid;
} feeders[16];

static uint8_t feed_pre[1 << 16];
static size_t feed_npre;

/*
 * A feeding child: feed_pre[] then the rest of stdin, inflated when
 * wbits is not 0, to stdout.  Exit status: 0; 1 truncated stream; 2
 * damaged stream; 3 read error; 4 out of memory.  A closed pipe (the
 * reader stopped) ends it quietly.
 */
static void
feed_fn(int wbits)
{
	static uint8_t in[1 << 16], out[1 << 16];
	z_stream z;
	const uint8_t *p = feed_pre;
	ssize_t n = (ssize_t)feed_npre;
	int rc = Z_OK, first = 1;

	signal(SIGPIPE, SIG_IGN);
	memset(&z, 0, sizeof(z));
	if (wbits && inflateInit2(&z, wbits) != Z_OK)
		_exit(4);
	for (;;) {
		if (!first || n == 0) {
			if ((n = rp_read(0, in, sizeof(in))) == -1)
				_exit(3);
			p = in;
		}
		first = 0;
		if (n == 0)
			break;
		if (!wbits) {
			if (rp_write_full(1, p, (size_t)n) == -1)
				_exit(0);
			continue;
		}
		z.next_in = (uint8_t *)(uintptr_t)p;
		z.avail_in = (uInt)n;
		while (z.avail_in > 0) {
			z.next_out = out;
			z.avail_out = sizeof(out);
			rc = inflate(&z, Z_NO_FLUSH);
			if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR)
				_exit(rc == Z_MEM_ERROR ? 4 : 2);
			if (rp_write_full(1, out, sizeof(out) - z.avail_out) == -1)
				_exit(0);
			if (rc == Z_STREAM_END) {
				/* gzip members may follow one another */
				if (z.avail_in == 0)
					break;
				inflateReset(&z);
			} else if (rc == Z_BUF_ERROR && z.avail_out != 0)
				break;
		}
	}
	if (wbits && rc != Z_STREAM_END)
		_exit(1);
	_exit(0);
}

int
open_text(const char *path)
{
	const char *name = input_name(path), *c;
	struct stat st;
	off_t at;
	ssize_t k;
	int fd, p[2], wbits;
	size_t i;
	pid_t pid;

	if ((fd = open_input(path)) == -1)
		return -1;
	feed_npre = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (at = lseek(fd, 0, SEEK_CUR)) != -1) {
		/* A file: look without reading. */
		if ((k = pread(fd, feed_pre, 16, at)) > 0)
			feed_npre = (size_t)k;
		if ((c = sniff_compression(feed_pre, feed_npre)) == NULL)
			return fd;
		feed_npre = 0;
	} else {
		/* A pipe: what is read to look is fed back by the child. */
		while (feed_npre < 16) {
			k = rp_read(fd, feed_pre + feed_npre,
			    sizeof(feed_pre) - feed_npre);
			if (k == -1)
				die_errno("%s", name);
			if (k == 0)
				break;
			feed_npre += (size_t)k;
		}
		c = sniff_compression(feed_pre, feed_npre);
	}
	if (c != NULL && strcmp(c, "gzip") != 0 && strcmp(c, "zlib") != 0)
		die("%s: %s-compressed text; decompress it first "
		    "(%s -dc %s | %s ...)", name, c, c, strcmp(path, "-") == 0 ?
		    "FILE" : path, progname);
	wbits = c == NULL ? 0 : strcmp(c, "gzip") == 0 ? 31 : 15;
	for (i = 0; i < sizeof(feeders) / sizeof(*feeders); i++)
		if (feeders[i].pid == 0)
			break;
	if (i == sizeof(feeders) / sizeof(*feeders))
		die("%s: too many compressed text inputs open", name);
	if (pipe(p) == -1 || (pid = spawn_filter(fd, p[1], feed_fn, wbits)) == -1)
		die_errno("%s", name);
	close(p[1]);
	if (fd != 0)
		close(fd);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	feeders[i].fd = p[0];
	feeders[i].pid = pid;
	return p[0];
}

int
open_text_part(const char *path)
{
	uint8_t peek[16];
	const char *c;
	ssize_t k;
	int fd;

	if ((fd = open_input(path)) == -1)
		return -1;
	if ((k = pread(fd, peek, sizeof(peek), 0)) > 0 &&
	    (c = sniff_compression(peek, (size_t)k)) != NULL)
		die("%s: %s-compressed text cannot be cut into parts; decompress "
		    "it first (%s -dc %s > FILE)", input_name(path), c,
		    strcmp(c, "zlib") == 0 ? "pigz -z" : c, path);
	return fd;
}

void
close_text(int fd, const char *path)
{
	static const char *const why[] = { NULL, "compressed stream truncated",
		"compressed stream damaged", "read error", "out of memory" };
	size_t i;
	int st;

	for (i = 0; i < sizeof(feeders) / sizeof(*feeders); i++)
		if (feeders[i].pid != 0 && feeders[i].fd == fd)
			break;
	if (fd != 0)
		close(fd);
	if (i == sizeof(feeders) / sizeof(*feeders))
		return;
	if (wait_child(feeders[i].pid, &st) == -1)
		st = -1;	/* not an exit status: "failed" below */
	feeders[i].pid = 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (WIFEXITED(st) && (size_t)WEXITSTATUS(st) < sizeof(why) / sizeof(*why))
		die("%s: %s", input_name(path), why[WEXITSTATUS(st)]);
	die("%s: decompression failed", input_name(path));
}

/* ---- options ---- */

static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d[64], prev, t;

	if (lb >= sizeof(d) / sizeof(*d))
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (j = 1; j <= lb; j++) {
			t = d[j];
			d[j] = prev + (a[i - 1] != b[j - 1]);
			if (d[j - 1] + 1 < d[j])
				d[j] = d[j - 1] + 1;
			if (t + 1 < d[j])
				d[j] = t + 1;
			prev = t;
		}
	}
	return d[lb];
}

const char *
closest_name(const char *s, const char *const *cand, size_t n)
{
	const char *best = NULL;
	size_t i, d, bd = SIZE_MAX, len = strlen(s);

	for (i = 0; i < n; i++) {
		/* a prefix of a longer name is close */
		d = strncmp(cand[i], s, len) == 0 && len >= 3 ? 1 :
		    edit_distance(s, cand[i]);
		if (d < bd) {
			bd = d;
			best = cand[i];
		}
	}
	/* "c" is not a misspelt "a": the edits must leave most of the name */
	return bd < len && bd <= (len < 6 ? 2 : len / 3) ? best : NULL;
}

/* The long option named name[0..n), exactly or by a unique prefix. */
static const struct option *
find_long(const struct option *lo, const char *name, size_t n, int *ambiguous)
{
	const struct option *hit = NULL;

	*ambiguous = 0;
	for (; lo->name != NULL; lo++) {
		if (strncmp(lo->name, name, n) != 0)
			continue;
		if (lo->name[n] == '\0')
			return lo;
		if (hit != NULL)
			*ambiguous = 1;
		hit = lo;
	}
	return *ambiguous ? NULL : hit;
}

/* --a_b[=v] -> --a-b[=v] where that names a long option and the first does not. */
static void
normalize_underscores(int argc, char *argv[], const struct option *lo)
{
	char *a, *eq, name[128];
	size_t n, j;
	int i, amb;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, "--", 2) != 0)
			continue;
		a += 2;
		n = (eq = strchr(a, '=')) ? (size_t)(eq - a) : strlen(a);
		if (n >= sizeof(name) || memchr(a, '_', n) == NULL ||
		    find_long(lo, a, n, &amb) != NULL)
			continue;
		for (j = 0; j < n; j++)
			name[j] = a[j] == '_' ? '-' : a[j];
		if (find_long(lo, name, n, &amb) != NULL)
			memcpy(a, name, n);
	}
}

static _Noreturn void
option_error(const char *arg, const struct option *lo)
{
	const char *names[256], *near;
	const struct option *o;
	char name[128];
	size_t n = 0, len;
	int amb;

	len = strcspn(arg + 2, "=");
	snprintf(name, sizeof(name), "%.*s", (int)(len < 100 ? len : 100), arg + 2);
	if ((o = find_long(lo, name, strlen(name), &amb)) == NULL && amb)
		usage_error("option '--%s' is ambiguous", name);
	if (o != NULL) {
		if (arg[2 + len] == '=' && o->has_arg == no_argument)
			usage_error("option '--%s' takes no argument", o->name);
		usage_error("option '--%s' needs an argument", o->name);
	}
	for (o = lo; o->name != NULL && n < sizeof(names) / sizeof(*names); o++)
		names[n++] = o->name;
	if ((near = closest_name(name, names, n)) != NULL)
		usage_error("unknown option '--%s'; did you mean '--%s'?", name, near);
	usage_error("unknown option '--%s'", name);
}

const char *option_name = "";

int
getopt_args(int argc, char *argv[], const char *optstring,
    const struct option *longopts)
{
	static char **seen;
	static int seen_at = -1;
	static char name[64];
	const char *arg, *p;
	int ch, before = optind, idx = -1;

	if (argv != seen || optind <= 1 || optind < seen_at) {
		normalize_underscores(argc, argv, longopts);
		seen = argv;
	}
	seen_at = optind;
	opterr = 0;
	if (*optstring == ':')
		optstring++;
	ch = getopt_long(argc, argv, optstring, longopts, &idx);
	if (ch != '?') {
		if (idx >= 0)
			snprintf(name, sizeof name, "--%s", longopts[idx].name);
		else
			snprintf(name, sizeof name, "-%c", ch);
		option_name = name;
		return ch;
	}
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (optopt == 0 || (strncmp(arg, "--", 2) == 0 && optind > before))
		if (strncmp(arg, "--", 2) == 0)
			option_error(arg, longopts);
	if (optopt > 0 && optopt < 256 && (p = strchr(optstring, optopt)) != NULL &&
	    optopt != ':')
		usage_error("option '-%c' needs an argument", optopt);
	if (optopt > 0 && optopt < 256 && isprint(optopt))
		usage_error("unknown option '-%c'", optopt);
	usage_error("unknown option '%s'", arg);
}

/* Whether subcommand c takes option ch: one of its names has ch's value. */
static int
subcmd_takes(const struct subcmd *c, int ch, const struct option *longopts)
{
	const char *p = c->opts != NULL ? c->opts : "", *e;
	const struct option *lo;
	size_t n;

	for (; *p != '\0'; p = e) {
		p += strspn(p, " ");
		e = p + strcspn(p, " ");
		if ((n = (size_t)(e - p)) == 0)
			break;
		for (lo = longopts; lo->name != NULL; lo++)
			if (strncmp(lo->name, p, n) == 0 && lo->name[n] == '\0')
				break;
		if (lo->name == NULL)
			die("%s: no option '--%.*s' to take", c->name, (int)n, p);
		if (lo->val == ch)
			return 1;
	}
	return 0;
}

void
subcmd_option(const struct subcmd *cmds, size_t n, size_t cmd, int ch,
    const struct option *longopts)
{
	char list[256] = "";
	size_t i, len = 0;

	if (ch == 'h' || ch == 'V' || subcmd_takes(&cmds[cmd], ch, longopts))
		return;
	for (i = 0; i < n; i++)
		if (cmds[i].opts != NULL && subcmd_takes(&cmds[i], ch, longopts) &&
		    len < sizeof list)
			len += (size_t)snprintf(list + len, sizeof list - len,
			    "%s%s", len ? ", " : "", cmds[i].name);
	if (len == 0)
		usage_error("%s: %s does not apply", cmds[cmd].name, option_name);
	usage_error("%s: %s does not apply (it applies to %s)", cmds[cmd].name,
	    option_name, list);
}

/* ---- datasets named on the command line ---- */

void
dataset_prefix(char *name)
{
	size_t n = strlen(name);
	struct stat st;
	char *p;
	int found;

	if (n < 5 || (strcmp(name + n - 4, ".idx") != 0 &&
	    strcmp(name + n - 4, ".bin") != 0))
		return;
	p = xstrdup(name);
	memcpy(p + n - 4, ".idx", 4);
	found = stat(p, &st) == 0;
	free(p);
	if (found)
		name[n - 4] = '\0';
}
