/*
 * frontend-main.c: the front-end's own executable (FRONTEND_EXE).  It is
 * linked without libcurl and OpenSSL, so the process that reads every
 * client byte maps none of their code.  Only the supervisor starts it,
 * with the role argument users never type and everything else on its
 * fixed fds (nbdcurld.h).
 */
#include <stdio.h>
#include <string.h>

#include "nbdcurld.h"
#include "roles.h"

int
main (int argc, char **argv)
{
  int status;

  if (role_run (argc, argv, &status))
    return status;
  fprintf (stderr, "%s: this is nbdcurld's front-end, started by nbdcurld "
           "itself: run nbdcurld instead\n", argc > 0 ? argv[0] : "nbdcurld-frontend");
  return 1;
}
