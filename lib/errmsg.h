/*
 * One-line error messages into a caller's buffer, for the calls of the
 * library that fail before there is an object to hold the message (a
 * loader, a parser) or that work on an object shared read-only (a
 * decoder over a model): they take (char *err, size_t errlen) and fill
 * it here.  Internal.
 */
#ifndef RECPIPE_ERRMSG_H
#define RECPIPE_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A size for err that holds the messages of the internal modules and of
 * the tools' calls uncut, but for those quoting a caller's string at
 * length (a key, a path), which are cut to fit like any other.
 */
#define RP_ERRMAX	320

/* Format into err (errlen bytes, cut if need be); nothing when err is NULL or errlen 0. */
void	rp_seterr(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* The same with a va_list, for a module's own fail() helpers. */
void	rp_vseterr(char *err, size_t errlen, const char *fmt, va_list ap)
	    __attribute__((format(printf, 3, 0)));

#endif
