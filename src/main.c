/*
 * main.c: the supervisor, and the fetchers it starts by re-executing this
 * same binary with a role argument that users never type; a child then
 * reads everything else from its fixed fds (nbdcurld.h).  The front-end
 * is its own executable (frontend-main.c).
 */
#include <string.h>

#include "nbdcurld.h"

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], ROLE_ARG_FETCHER) == 0)
    return fetcher_main ();
  return supervisor_main (argc, argv);
}
