/*
 * Documents in JSON lines, as Megatron-LM's tools/preprocess_data.py
 * reads them: each line is a JSON object, and the value of a key is
 * either a string (a document of one sentence) or a list of strings
 * (a document already split into sentences).
 *
 * Usage:
 *
 *	struct jd_line l;
 *	char err[RP_ERRMAX];		// errmsg.h; any size works
 *	jd_init(&l);
 *	if (jd_parse(&l, line, len, err, sizeof err) == -1 ||
 *	    jd_sentences(&l, "text", err, sizeof err) == -1)
 *		die("%s: line %ju: %s", name, lineno, err);
 *	for (size_t i = 0; i < l.n; i++)
 *		use(l.s[i], l.len[i]);	// UTF-8, may hold NUL bytes
 *	jd_free(&l);
 *
 * Nothing here prints or exits.  A call that fails leaves a one-line
 * message in err (errlen bytes, cut to fit).  One jd_line is used by
 * one thread.
 */
#ifndef RECPIPE_JSONDOC_H
#define RECPIPE_JSONDOC_H

#include <stddef.h>
#include <stdint.h>

struct jd_line {
	void		 *root;		/* the parsed object (jansson) */
	size_t		  n;		/* sentences of the last jd_sentences() */
	const char	**s;		/* valid until the next jd_parse() or jd_free() */
	size_t		 *len;
	size_t		  cap;
};

void	jd_init(struct jd_line *l);
void	jd_free(struct jd_line *l);	/* the line is reusable afterwards */
/*
 * Parse one line (without its newline): a JSON object, with nothing but
 * whitespace around it.  Returns 0, or -1 with a message in err ("not a
 * JSON object: a list", "invalid JSON at column 7: ...").
 */
int	jd_parse(struct jd_line *l, const uint8_t *p, size_t n,
	    char *err, size_t errlen);
/*
 * The sentences of 'key' of the parsed line into l->n, l->s, l->len: one
 * for a string, one per element for a list of strings (empty ones
 * included).  Returns the count, or -1 with a message in err ("no key
 * 'text'", "'text' holds a number, not a string or a list of strings",
 * "'text' item 3 holds null, not a string") or ENOMEM.
 */
long	jd_sentences(struct jd_line *l, const char *key, char *err,
	    size_t errlen);

#endif
