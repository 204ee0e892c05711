/*
 * Whole-file reads into a buffer: regular files and pipes, the size
 * bound at and past its edge, no bound, failures that leave the buffer
 * as it was.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "tap.h"

static char path[] = "/tmp/t-buf.XXXXXX";

/* The temporary file, holding n bytes of a pattern. */
static int
make(const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd == -1 || write(fd, p, n) != (ssize_t)n) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	return close(fd);
}

static void
test_file(const uint8_t *pat, size_t n)
{
	struct buf b = { 0 };

	TEST(make(pat, 0) == 0 && rp_buf_read_file(&b, path, 10) == 0 &&
	    b.len == 0 && b.p != NULL, "an empty file: nothing, and b.p is set");
	TEST(make(pat, 10) == 0 && rp_buf_read_file(&b, path, 10) == 0 &&
	    b.len == 10 && memcmp(b.p, pat, 10) == 0, "a file of max bytes");
	errno = 0;
	TEST(make(pat, 11) == 0 && rp_buf_read_file(&b, path, 10) == -1 &&
	    errno == EFBIG && b.len == 10, "one byte more: EFBIG, b as it was");
	TEST(make(pat, n) == 0 && rp_buf_read_file(&b, path, n) == 0 &&
	    b.len == 10 + n && memcmp(b.p, pat, 10) == 0 &&
	    memcmp(b.p + 10, pat, n) == 0, "appended after what b holds");
	b.len = 0;
	TEST(rp_buf_read_file(&b, path, SIZE_MAX) == 0 && b.len == n &&
	    memcmp(b.p, pat, n) == 0, "SIZE_MAX: no bound");
	errno = 0;
	TEST(rp_buf_read_file(&b, "/nonexistent/t-buf", 10) == -1 &&
	    errno == ENOENT && b.len == n, "a missing file: ENOENT, b as it was");
	rp_buf_free(&b);
}

/* A child writing p[0..n) into a pipe in pieces; returns the read end. */
static int
pipe_from(const uint8_t *p, size_t n, pid_t *pid)
{
	int fd[2];

	if (pipe(fd) == -1)
		return -1;
	if ((*pid = fork()) == 0) {
		close(fd[0]);
		for (size_t off = 0; off < n; off += 3000)
			if (write(fd[1], p + off, n - off < 3000 ? n - off : 3000) == -1)
				_exit(1);
		_exit(0);
	}
	close(fd[1]);
	return fd[0];
}

static void
test_fd(const uint8_t *pat, size_t n)
{
	struct buf b = { 0 };
	pid_t pid;
	int fd, st;

	fd = pipe_from(pat, n, &pid);
	TEST(fd != -1 && rp_buf_read_fd(&b, fd, SIZE_MAX) == 0 && b.len == n &&
	    memcmp(b.p, pat, n) == 0, "a pipe, unbounded");
	close(fd);
	waitpid(pid, &st, 0);

	b.len = 0;
	fd = pipe_from(pat, n, &pid);
	errno = 0;
	TEST(fd != -1 && rp_buf_read_fd(&b, fd, n - 1) == -1 && errno == EFBIG &&
	    b.len == 0, "a pipe one byte over: EFBIG");
	close(fd);
	waitpid(pid, &st, 0);

	/* What is left of a file already read from. */
	b.len = 0;
	TEST(make(pat, n) == 0 && (fd = open(path, O_RDONLY)) != -1 &&
	    lseek(fd, 100, SEEK_SET) == 100 && rp_buf_read_fd(&b, fd, n - 100) == 0 &&
	    b.len == n - 100 && memcmp(b.p, pat + 100, n - 100) == 0 &&
	    lseek(fd, 0, SEEK_CUR) == (off_t)n, "the rest of an open file, fd left open");
	close(fd);
	errno = 0;
	TEST(rp_buf_read_fd(&b, -1, 10) == -1 && errno == EBADF && b.len == n - 100,
	    "a bad fd: EBADF, b as it was");
	rp_buf_free(&b);
}

int
main(void)
{
	size_t n = 200000;
	uint8_t *pat = malloc(n);
	int fd;

	if (pat == NULL || (fd = mkstemp(path)) == -1)
		return 1;
	close(fd);
	for (size_t i = 0; i < n; i++)
		pat[i] = (uint8_t)(i * 31 + i / 7);
	test_file(pat, n);
	test_fd(pat, n);
	unlink(path);
	free(pat);
	return tap_done();
}
