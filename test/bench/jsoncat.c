/*
 * A small driver for scripts/bench-json: TFRecord Examples on stdin to
 * JSON lines on stdout (default; -f for the flat form), or JSON lines
 * to uncompressed records (-r).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "exjson.h"
#include "record.h"

int
main(int argc, char **argv)
{
	struct exjson j;
	struct buf o = { 0 };
	int flat = argc > 1 && strcmp(argv[1], "-f") == 0;
	int rev = argc > 1 && strcmp(argv[1], "-r") == 0;
	unsigned long long lineno = 0;

	exjson_init(&j, flat ? EXJSON_FLAT : 0);
	if (rev) {
		struct rec_writer *w = rec_writer_open(1, REC_NONE, -1);
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, stdin)) > 0) {
			lineno++;
			o.len = 0;
			if (exjson_parse(&j, line, (size_t)n, EX_TYPE_AUTO, &o) == -1) {
				fprintf(stderr, "jsoncat: line %llu: %s\n", lineno, exjson_strerror(&j));
				return 1;
			}
			if (rec_write(w, o.p, o.len) == -1) {
				perror("jsoncat: write");
				return 1;
			}
		}
		return rec_writer_close(w) == -1;
	} else {
		struct rec_reader *r = rec_reader_open(0, REC_AUTO, 0, 0);
		const uint8_t *p;
		size_t n;
		int rc;

		while ((rc = rec_read(r, &p, &n)) == 1) {
			o.len = 0;
			if (exjson_payload(&j, p, n, EX_TYPE_AUTO, &o) == -1 ||
			    rp_buf_putc(&o, '\n') == -1) {
				fprintf(stderr, "jsoncat: record %llu: %s\n",
				    (unsigned long long)rec_index(r), exjson_strerror(&j));
				return 1;
			}
			if (fwrite(o.p, 1, o.len, stdout) != o.len) {
				perror("jsoncat: write");
				return 1;
			}
		}
		if (rc == -1) {
			fprintf(stderr, "jsoncat: %s\n", rec_strerror(r));
			return 1;
		}
		rec_reader_free(r);
	}
	rp_buf_free(&o);
	exjson_free(&j);
	return fclose(stdout) != 0;
}
