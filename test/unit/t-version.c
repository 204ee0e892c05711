/*
 * The version the library reports is the one its header declares, and
 * the string is MAJOR.MINOR.PATCH of the macros.
 */
#include <stdio.h>
#include <string.h>

#include "version.h"
#include "tap.h"

int
main(void)
{
	char want[64];

	snprintf(want, sizeof want, "%d.%d.%d", RECPIPE_VERSION_MAJOR,
	    RECPIPE_VERSION_MINOR, RECPIPE_VERSION_PATCH);
	TEST(strcmp(RECPIPE_VERSION, want) == 0, "RECPIPE_VERSION is %s", want);
	TEST(strcmp(recpipe_version(), RECPIPE_VERSION) == 0,
	    "recpipe_version() is the header's version");
	return tap_done();
}
