/*
 * roles.h: the one table of nbdcurld's process roles.  Which executable
 * runs a role, the argument the supervisor starts it with, its process
 * name, its log name, its seccomp policy and its entry point are read
 * from here by every executable's main, by each child's start, by the
 * supervisor when it starts one, and by the tests (tests/lib/nbdraw.py reads
 * the rows of roles.c), so that a role's facts are written once.
 */
#ifndef NBDCURLD_ROLES_H
#define NBDCURLD_ROLES_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

enum role_id {
  ROLE_SUPERVISOR,
  ROLE_FRONTEND,
  ROLE_KEYHOLDER,
  ROLE_FETCHER,
  ROLE_LAUNCHER,
  ROLE_URL_CHECK,
  ROLE_REMOVER,
  NROLES
};

/* The three executables; each role runs in one of them. */
enum role_executable {
  EXE_SUPERVISOR,               /* nbdcurld: no libcurl */
  EXE_FRONTEND,                 /* nbdcurld-frontend: GnuTLS, no libcurl or OpenSSL */
  EXE_FETCHER,                  /* nbdcurld-fetcher: libcurl and OpenSSL */
};

struct role {
  const char *name;             /* in its log lines: "nbdcurld: front-end: " */
  const char *arg;              /* argv[1] it is started with; NULL: the supervisor */
  enum role_executable exe;
  const char *comm;             /* its process name (ps, /proc/PID/comm) */
  const struct policy_rule *rules;      /* its seccomp policy (policy/NAME.policy) */
  const size_t *nrules;
  int (*entry) (void);          /* NULL in the executables it is not linked into */
  bool bind_now;                /* LD_BIND_NOW=1 in its environment */
  bool keeps_signal_mask;       /* exec'd with the supervisor's blocked signals */
};

/* The argument each role is started with (users never type them). */
#define ROLE_ARG_FRONTEND         "--internal-role=front-end"
#define ROLE_ARG_FETCHER          "--internal-role=fetcher"
#define ROLE_ARG_URL_CHECK        "--internal-role=url-check"
#define ROLE_ARG_KEYHOLDER        "--internal-role=key-holder"
#define ROLE_ARG_LAUNCHER         "--internal-role=launcher"
#define ROLE_ARG_REMOVER          "--internal-role=file-remover"

extern const struct role roles[NROLES];

/* The role started with argument arg, or NULL. */
const struct role *role_of_arg (const char *arg);

/* An executable's main: with a role's argument (and nothing else), run
 * that role if this executable has it, and set *status to what it
 * returned.  False when argv names no role of this executable. */
bool role_run (int argc, char **argv, int *status);

/* The main of an executable only the supervisor starts: role_run, or a
 * word to whoever ran it by hand that nbdcurld is the program to run
 * (what: "front-end"; exe_name when argv[0] is missing). */
int role_main (int argc, char **argv, const char *what, const char *exe_name);

/* The roles' entry points (role_run calls the ones its executable
 * has; the supervisor's main calls supervisor_main). */
int supervisor_main (int argc, char **argv);
int frontend_main (void);
int fetcher_main (void);
int url_check_main (void);
int keyholder_main (void);
int launcher_main (void);
int remover_main (void);

#endif
