/*
 * main.c: the supervisor's executable, nbdcurld, the one users run.  The
 * other roles have their own executables, which only the supervisor
 * starts: the front-end (frontend-main.c) and the fetchers and URL
 * checker (fetcher-main.c).
 */
#include "nbdcurld.h"

int
main (int argc, char **argv)
{
  return supervisor_main (argc, argv);
}
