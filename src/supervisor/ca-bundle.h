/*
 * ca-bundle.h: an export's CA certificates (--cainfo, --capath, or the
 * cainfo= and capath= keys), read by the supervisor before it drops root
 * and handed to each fetcher of the export as bytes, in a sealed memfd at
 * CHILD_FD_CA_BUNDLE: so a CA file only root may read works, and no
 * fetcher needs a path to one under its sandbox.
 */
#ifndef NBDCURLD_CA_BUNDLE_H
#define NBDCURLD_CA_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

/* The certificates of cainfo (a file, or NULL) and of capath (a
 * directory of OpenSSL's hashed names, HHHHHHHH.N, or NULL), in one
 * memfd sealed against writing and resizing, at most CA_BUNDLE_MAX_BYTES
 * bytes (*len).  cainfo_name and capath_name say how the user gave each
 * ("--cainfo " or "cainfo="), for messages.  Returns the descriptor, or -1
 * with a message in err that names the file and what is wrong with it. */
int ca_bundle_make (const char *cainfo, const char *cainfo_name, const char *capath,
                    const char *capath_name, uint32_t *len, char *err, size_t errlen);

#endif
