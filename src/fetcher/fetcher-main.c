/*
 * fetcher-main.c: the fetcher's own executable (FETCHER_EXE), the only
 * one linked with libcurl.  Only the supervisor starts it, with a role
 * argument users never type and everything else on its fixed fds
 * (child-fds.h): a fetcher for one client (fetcher.c), the fetcher
 * launcher that forks them (launcher.c), or at start the URL checker
 * (url-check.c).
 */
#include "roles.h"

int
main (int argc, char **argv)
{
  return role_main (argc, argv, "fetcher", "nbdcurld-fetcher");
}
