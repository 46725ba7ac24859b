/*
 * main.c: the supervisor's executable, nbdcurld, the one users run.  The
 * other roles have their own executables, which only the supervisor
 * starts: the front-end (frontend-main.c) and the fetchers and URL
 * checker (fetcher-main.c); and this one again as the file remover
 * (remover.c), with the role argument users never type.
 */
#include <string.h>

#include "nbdcurld.h"

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], ROLE_ARG_REMOVER) == 0)
    return remover_main ();
  return supervisor_main (argc, argv);
}
