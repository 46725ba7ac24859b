/*
 * options-version.c: --version.  The version, then one "key=value" line
 * for each library and kernel interface nbdcurld relies on, so that a
 * report or a script can tell what a binary was built with and what the
 * kernel offers.  The supervisor does not link libcurl, OpenSSL or
 * GnuTLS (roles.h): the fetcher's and the front-end's executables print
 * theirs (fetcher-versions.c, frontend-versions.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <seccomp.h>

#include "children.h"
#include "config-build.h"
#include "options-internal.h"
#include "sandbox.h"

/* Landlock as this kernel offers it: the ABI version, and in words. */
static void
print_landlock (void)
{
  int why, abi = sandbox_landlock_abi (&why);

  printf ("landlock_abi=%d\n", abi);
  printf ("landlock=%s\n", abi > 0 ? "enabled"
          : why == EOPNOTSUPP ? "disabled" : "unsupported");
}

void
print_version (void)
{
  const struct scmp_version *sv = seccomp_version ();
  int status = 0;

  printf ("nbdcurld %s\n", PACKAGE_VERSION);
  printf ("version=%s\n", PACKAGE_VERSION);
  printf ("libseccomp=%u.%u.%u\n", sv->major, sv->minor, sv->micro);
  printf ("seccomp_api=%u\n", seccomp_api_get ());
  printf ("libcap-ng_built=%s\n", CAPNG_BUILD_VERSION);
  print_landlock ();
  children_open_executables ();
  status |= children_print_library_versions (ROLE_FRONTEND);
  status |= children_print_library_versions (ROLE_FETCHER);
  if (fflush (stdout) != 0)
    status = 1;
  exit (status == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
