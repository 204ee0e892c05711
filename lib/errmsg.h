/*
 * One-line error messages into a caller's buffer, for the parts of the
 * library that report failures as text (err, errlen).  Internal.
 */
#ifndef RECPIPE_ERRMSG_H
#define RECPIPE_ERRMSG_H

#include <stddef.h>

/* Format into err (errlen bytes, cut if need be); nothing when err is NULL or errlen 0. */
void	rp_seterr(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif
