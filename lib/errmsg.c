/*
 * One-line error messages into a caller's buffer.
 */
#include <stdarg.h>
#include <stdio.h>

#include "errmsg.h"

void
rp_vseterr(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err == NULL || errlen == 0)
		return;
	vsnprintf(err, errlen, fmt, ap);
}

void
rp_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rp_vseterr(err, errlen, fmt, ap);
	va_end(ap);
}
