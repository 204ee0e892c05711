/*
 * Raw I/O: short counts, EINTR from a signal, EAGAIN on a non-blocking
 * pipe, a full device, writes at an offset.
 */
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "tap.h"

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A child that writes p[0..n) to fd in pieces of 'piece' bytes, pausing between them. */
static pid_t
writer(int fd, const uint8_t *p, size_t n, size_t piece, useconds_t pause)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (size_t off = 0; off < n; off += piece) {
		usleep(pause);
		if (write(fd, p + off, n - off < piece ? n - off : piece) == -1)
			_exit(1);
	}
	_exit(0);
}

static int
reaped(pid_t pid)
{
	int st;

	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0;
}

static void
test_read(void)
{
	static const uint8_t msg[] = "one two three four five six";
	uint8_t got[64];
	int fd[2];
	pid_t pid;
	ssize_t k;

	/* Short reads from a pipe add up; the end of the file stops it. */
	if (pipe(fd) == -1) {
		TEST(0, "pipe");
		return;
	}
	pid = writer(fd[1], msg, sizeof msg, 4, 2000);
	close(fd[1]);
	k = rp_read_full(fd[0], got, sizeof got);
	TEST(k == (ssize_t)sizeof msg && memcmp(got, msg, sizeof msg) == 0,
	    "rp_read_full gathers short reads up to the end of the file");
	TEST(rp_read_full(fd[0], got, sizeof got) == 0 && rp_read(fd[0], got, 1) == 0,
	    "at the end of the file: 0");
	close(fd[0]);
	TEST(reaped(pid), "writer");

	/* Exactly n when more is there. */
	if (pipe(fd) == -1) {
		TEST(0, "pipe");
		return;
	}
	pid = writer(fd[1], msg, sizeof msg, sizeof msg, 0);
	close(fd[1]);
	TEST(rp_read_full(fd[0], got, 5) == 5 && memcmp(got, "one t", 5) == 0,
	    "rp_read_full stops at n");
	close(fd[0]);
	TEST(reaped(pid), "writer");

	errno = 0;
	TEST(rp_read(-1, got, 1) == -1 && errno == EBADF, "a bad fd: -1, EBADF");
	TEST(rp_read_full(-1, got, 1) == -1 && errno == EBADF,
	    "rp_read_full on a bad fd: -1, EBADF");
}

/* A read blocked on an empty pipe is interrupted by SIGALRM (no SA_RESTART). */
static void
test_eintr(void)
{
	struct sigaction sa, old;
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } }, off = { { 0, 0 }, { 0, 0 } };
	static const uint8_t msg[] = "late";
	uint8_t got[8];
	int fd[2];
	pid_t pid;
	ssize_t k;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (pipe(fd) == -1 || sigaction(SIGALRM, &sa, &old) == -1) {
		TEST(0, "pipe, sigaction");
		return;
	}
	pid = writer(fd[1], msg, 4, 4, 100000);
	close(fd[1]);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	k = rp_read(fd[0], got, sizeof got);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	TEST(k == 4 && memcmp(got, "late", 4) == 0 && alarms > 0,
	    "rp_read goes on after EINTR (%d signals)", (int)alarms);
	close(fd[0]);
	TEST(reaped(pid), "writer");
}

/* More than a pipe holds, written into a non-blocking pipe: EAGAIN. */
static void
test_nonblock(void)
{
	size_t n = 1u << 20, got = 0;
	uint8_t *p = malloc(n), *q = malloc(n);
	int fd[2], st;
	pid_t pid;
	ssize_t k;

	if (p == NULL || q == NULL || pipe(fd) == -1) {
		TEST(0, "malloc, pipe");
		free(p);
		free(q);
		return;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + i / 251);
	if ((pid = fork()) == 0) {
		/* The reader: slowly, so that the writer finds the pipe full. */
		close(fd[1]);
		usleep(20000);
		while ((k = read(fd[0], q + got, n - got)) > 0) {
			got += (size_t)k;
			usleep(100);
		}
		_exit(got == n && memcmp(p, q, n) == 0 ? 0 : 1);
	}
	close(fd[0]);
	fcntl(fd[1], F_SETFL, fcntl(fd[1], F_GETFL) | O_NONBLOCK);
	TEST(rp_write_full(fd[1], p, n) == 0, "rp_write_full waits out EAGAIN");
	close(fd[1]);
	TEST(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "the reader got every byte in order");

	/* And reading a non-blocking pipe with nothing in it yet. */
	if (pipe(fd) == -1) {
		TEST(0, "pipe");
		free(p);
		free(q);
		return;
	}
	fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
	pid = writer(fd[1], p, 4096, 1024, 5000);
	close(fd[1]);
	TEST(rp_read_full(fd[0], q, n) == 4096 && memcmp(p, q, 4096) == 0,
	    "rp_read_full waits out EAGAIN");
	close(fd[0]);
	TEST(reaped(pid), "writer");
	free(p);
	free(q);
}

static void
test_write(void)
{
	char path[] = "/tmp/t-io.XXXXXX";
	uint8_t got[16];
	int fd;

	if ((fd = open("/dev/full", O_WRONLY)) != -1) {
		errno = 0;
		TEST(rp_write_full(fd, "x", 1) == -1 && errno == ENOSPC,
		    "/dev/full: -1, ENOSPC");
		close(fd);
	}
	TEST(rp_write_full(-1, "x", 1) == -1 && errno == EBADF, "a bad fd: -1, EBADF");
	TEST(rp_write_full(-1, "", 0) == 0, "nothing to write: 0");

	if ((fd = mkstemp(path)) == -1) {
		TEST(0, "temporary file");
		return;
	}
	unlink(path);
	TEST(rp_write_full(fd, "abcdefgh", 8) == 0 &&
	    rp_pwrite_full(fd, "XY", 2, 3) == 0 &&
	    rp_pwrite_full(fd, "Z", 1, 10) == 0 &&
	    lseek(fd, 0, SEEK_CUR) == 8, "rp_pwrite_full leaves the offset alone");
	TEST(lseek(fd, 0, SEEK_SET) == 0 && rp_read_full(fd, got, sizeof got) == 11 &&
	    memcmp(got, "abcXYfgh\0\0Z", 11) == 0,
	    "rp_pwrite_full writes at its offset, past the end too");
	TEST(rp_pwrite_full(fd, "x", 1, -1) == -1 && errno == EINVAL,
	    "a negative offset: -1, EINVAL");
	close(fd);
}

static void
test_limit(void)
{
	char path[] = "/tmp/t-io.XXXXXX";
	struct rp_limit none = { 0 }, l = { 0 };
	uint8_t got[32];
	int fd;

	if ((fd = mkstemp(path)) == -1 ||
	    rp_write_full(fd, "0123456789abcdef", 16) == -1 ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		TEST(0, "temporary file");
		return;
	}
	unlink(path);
	TEST(rp_limit_read(&none, fd, got, sizeof got) == 16 &&
	    memcmp(got, "0123456789abcdef", 16) == 0,
	    "a zeroed limit: the whole file");
	TEST(rp_limit_seek(&l, fd, 3, 5) == 0 && lseek(fd, 0, SEEK_CUR) == 3,
	    "rp_limit_seek seeks");
	TEST(rp_limit_read(&l, fd, got, 2) == 2 && memcmp(got, "34", 2) == 0 &&
	    l.left == 3, "a read within the range");
	TEST(rp_limit_read(&l, fd, got, sizeof got) == 3 &&
	    memcmp(got, "567", 3) == 0 && l.left == 0,
	    "a read is cut at the end of the range");
	TEST(rp_limit_read(&l, fd, got, sizeof got) == 0 &&
	    lseek(fd, 0, SEEK_CUR) == 8, "then 0, reading nothing more");
	TEST(rp_limit_seek(&l, fd, 14, 100) == 0 &&
	    rp_limit_read(&l, fd, got, sizeof got) == 2 &&
	    rp_limit_read(&l, fd, got, sizeof got) == 0 && l.left == 98,
	    "a range past the end of the file ends with it");
	errno = 0;
	TEST(rp_limit_seek(&l, fd, (uint64_t)INT64_MAX + 1, 1) == -1 &&
	    errno == EINVAL, "an offset past INT64_MAX: EINVAL");
	close(fd);
	TEST(rp_limit_seek(&l, fd, 0, 1) == -1 && errno == EBADF,
	    "a closed fd: lseek's EBADF");
}

static void
test_window(void)
{
	char path[] = "/tmp/t-io.XXXXXX";
	struct rp_window w = { 0 };
	int fd;

	if ((fd = mkstemp(path)) == -1 ||
	    rp_write_full(fd, "0123456789abcdef", 16) == -1 ||
	    lseek(fd, 0, SEEK_SET) != 0 || (w.buf = malloc(4)) == NULL) {
		TEST(0, "temporary file");
		return;
	}
	unlink(path);
	w.cap = 4;
	TEST(rp_window_range(&w, fd, 2, 9) == 0 && w.base == 2,
	    "a range before the first fill: its start is the base");
	TEST(rp_window_fill(&w, fd, 1) == 4 && w.end == 4 &&
	    memcmp(w.buf, "2345", 4) == 0, "the first fill reads what fits");
	TEST(rp_window_range(&w, fd, 0, 1) == -1 && errno == EINVAL,
	    "a range once reading has begun: EINVAL");
	w.start = 3;
	TEST(rp_window_fill(&w, fd, 1) == 3 && w.base == 5 && w.start == 0 &&
	    w.cap == 4 && memcmp(w.buf, "5678", 4) == 0,
	    "what is left moves to the front, then the free room is read");
	TEST(rp_window_fill(&w, fd, 1) == 2 && w.cap == 8 && w.end == 6 &&
	    memcmp(w.buf, "56789a", 6) == 0 && !w.eof,
	    "a full buffer doubles, and the range cuts the read");
	TEST(rp_window_fill(&w, fd, 1) == 0 && w.eof && w.end == 6,
	    "then 0 at the end of the range, eof set");
	w.start = w.end;
	TEST(rp_window_fill(&w, fd, 16) == 0 && w.cap == 16 && w.base == 11,
	    "fewer free bytes than asked: it grows first");
	free(w.buf);
	close(fd);
}

int
main(void)
{
	test_read();
	test_eintr();
	test_nonblock();
	test_write();
	test_limit();
	test_window();
	return tap_done();
}
