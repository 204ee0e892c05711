/*
 * Benchmark peer, built by scripts/bench-pack when tfr-cat is not
 * installed: copy a TFRecord stream record by record, checking every
 * CRC on the way in and framing every record anew on the way out.
 * Usage: tfr-copy <in.tfr >out.tfr
 */
#include <stdio.h>

#include "record.h"

int
main(void)
{
	struct rec_reader *r;
	struct rec_writer *w;
	const uint8_t *p;
	size_t n;
	int rv;

	if ((r = rec_reader_open(0, REC_AUTO, 0, 0)) == NULL ||
	    (w = rec_writer_open(1, REC_NONE, -1)) == NULL)
		return 1;
	while ((rv = rec_read(r, &p, &n)) == 1)
		if (rec_write(w, p, n) == -1)
			return 1;
	if (rv == -1) {
		fprintf(stderr, "tfr-copy: %s\n", rec_strerror(r));
		return 1;
	}
	return rec_writer_close(w) == -1;
}
