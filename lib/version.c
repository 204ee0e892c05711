/*
 * The version of the library, for a program to compare with the
 * header it was compiled against.
 */
#include "version.h"

const char *
recpipe_version(void)
{
	return RECPIPE_VERSION;
}
