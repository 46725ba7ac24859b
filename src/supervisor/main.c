/*
 * main.c: the supervisor's executable, nbdcurld, the one users run.  The
 * other roles have their own executables, which only the supervisor
 * starts: the front-end (frontend-main.c) and the fetchers and URL
 * checker (fetcher-main.c); and this one again as the file remover
 * (remover.c), with the role argument users never type.
 */
#include <string.h>

#include "roles.h"

int
main (int argc, char **argv)
{
  int status;

  /* The file remover is this executable too (roles.c). */
  if (role_run (argc, argv, &status))
    return status;
  return supervisor_main (argc, argv);
}
