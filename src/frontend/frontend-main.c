/*
 * frontend-main.c: the front-end's own executable (FRONTEND_EXE).  It is
 * linked without libcurl and OpenSSL, so the process that reads every
 * client byte maps none of their code.  Only the supervisor starts it,
 * with the role argument users never type and everything else on its
 * fixed fds (child-fds.h).
 */
#include "roles.h"

int
main (int argc, char **argv)
{
  return role_main (argc, argv, "front-end", "nbdcurld-frontend");
}
