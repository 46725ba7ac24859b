/*
 * main.c: one binary, three roles.  The supervisor re-executes this same
 * binary for each child with a role argument that users never type; the
 * child then reads everything else from its fixed fds (nbdcurld.h).
 */
#include <string.h>

#include "nbdcurld.h"

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], ROLE_ARG_FRONTEND) == 0)
    return frontend_main ();
  if (argc == 2 && strcmp (argv[1], ROLE_ARG_FETCHER) == 0)
    return fetcher_main ();
  return supervisor_main (argc, argv);
}
