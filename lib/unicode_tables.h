/*
 * Internal interface between the generated tables (unicode_tables.c,
 * made by scripts/gen-unicode) and unicode.c.
 */
#ifndef RECPIPE_UNICODE_TABLES_H
#define RECPIPE_UNICODE_TABLES_H

#include <stdint.h>

#define UNI_F_SPACE	0x20	/* str.isspace() */
#define UNI_F_CASED	0x40	/* cased and not case-ignorable */
#define UNI_F_IGNORABLE	0x80	/* case-ignorable */

/* Category in the low 5 bits, UNI_F_* flags above. */
unsigned	 uni_props_(uint32_t cp);
/* {n, cp1, cp2, cp3} when str.lower() changes cp, else NULL. */
const uint32_t	*uni_lower_(uint32_t cp);
/* Full canonical decomposition (not Hangul), or NULL with none. */
const uint32_t	*uni_decomp_(uint32_t cp, int *len);

#endif
