/*
 * frontend-versions.c: for nbdcurld --version, the library only this
 * executable links: GnuTLS (NBD over TLS).  Run by the supervisor with
 * ARG_LIBRARY_VERSIONS, before and without any sandbox.
 */
#include <stdio.h>
#include <gnutls/gnutls.h>

#include "roles.h"

int
print_library_versions (void)
{
  printf ("gnutls=%s\n", gnutls_check_version (NULL));
  return fflush (stdout) == 0 ? 0 : 1;
}
