/*
 * The version of librecpipe: the header a program was compiled against
 * (the macros) and the library it runs with (recpipe_version()).
 */
#ifndef RECPIPE_VERSION_H
#define RECPIPE_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#define RECPIPE_VERSION_MAJOR	0
#define RECPIPE_VERSION_MINOR	1
#define RECPIPE_VERSION_PATCH	0
/* "MAJOR.MINOR.PATCH" */
#define RECPIPE_VERSION		"0.1.0"

/* The version string of the library linked in, as RECPIPE_VERSION. */
const char	*recpipe_version(void);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
