/*
 * Fuzz the record reader: arbitrary bytes through a pipe-like file,
 * in every compression mode, with and without recovery.  Checks that
 * every record returned lies within what was read and that the reader
 * never loops.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[] = "/tmp/fuzz-record.XXXXXX";
	static int fd = -1;
	struct rec_reader *r;
	const uint8_t *p;
	size_t n, total;
	uint64_t off, len;
	unsigned flags;
	int mode, ret, guard;

	if (size < 1)
		return 0;
	if (fd == -1 && (fd = mkstemp(path)) == -1)
		abort();
	unlink(path);
	mode = data[0];
	data++;
	size--;
	if (ftruncate(fd, 0) == -1 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	lseek(fd, 0, SEEK_SET);
	flags = (mode & 4 ? REC_TF_COMPAT : 0) | (mode & 8 ? REC_SKIP_DATA : 0) |
	    (mode & 16 ? REC_NO_CRC : 0);
	r = rec_reader_open(fd, (enum rec_comp)(mode & 3), flags, 1 << 20);
	if (r == NULL)
		abort();
	total = 0;
	for (guard = 0; guard < 100000; guard++) {
		ret = rec_read(r, &p, &n);
		if (ret == 1) {
			total += n + 16;
			if (!(flags & REC_SKIP_DATA) && n > 0)
				(void)((volatile const uint8_t *)p)[n - 1];
			continue;
		}
		if (ret == 0)
			break;
		if (rec_strerror(r)[0] == '\0')
			abort();	/* every fault has a message */
		if (!(mode & 32))
			break;
		if (rec_resync(r, &off, &len) != 1)
			break;
		if (len == 0)
			abort();	/* recovery must make progress */
	}
	if (guard == 100000)
		abort();
	if ((mode & 3) == REC_NONE && total > size)
		abort();
	rec_reader_free(r);
	return 0;
}
