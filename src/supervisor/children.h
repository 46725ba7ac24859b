/*
 * children.h: each role's executable and fork+exec of a child
 * (children.c).
 */
#ifndef NBDCURLD_SUPERVISOR_CHILDREN_H
#define NBDCURLD_SUPERVISOR_CHILDREN_H

#include <sys/types.h>

#include "roles.h"

/* Open FETCHER_EXE and FRONTEND_EXE, before any privilege is dropped. */
void children_open_executables (void);

/* Open this program for the file remover, unless it is open already. */
void children_open_self (void);

/* fork+exec the role's executable as `role` with fds[i] at fd 3 + i and
 * nothing else open but stdin, stdout and stderr.  Returns the pid, or -1
 * with errno. */
pid_t spawn_child (enum role_id id, const int *fds, unsigned nfds);

/* --version: run the executable of role id with ARG_LIBRARY_VERSIONS,
 * its lines going to our stdout.  Its exit status (1 if it did not
 * exit). */
int children_print_library_versions (enum role_id id);

#endif
