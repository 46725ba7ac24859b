/*
 * limits-ca.h: --cainfo and --capath (cainfo=, capath=).  The supervisor
 * reads them before it drops root (ca-bundle.c) and each fetcher of the
 * export gets their certificates as bytes (a sealed memfd at
 * CHILD_FD_CA_BUNDLE), so that a CA file only root may read works and no
 * fetcher needs a path to one.
 */
#ifndef NBDCURLD_LIMITS_CA_H
#define NBDCURLD_LIMITS_CA_H

/* The bytes of one export's certificates together: room for several
 * bundles as large as a distribution's whole set of trusted CAs; and the
 * files of a --capath directory under OpenSSL's hashed names, several
 * times a distribution's. */
#define CA_BUNDLE_MAX_BYTES       (1024u * 1024)
#define CAPATH_MAX_FILES          1024u

#endif
