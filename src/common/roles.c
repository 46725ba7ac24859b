/* roles.c: the table of roles (see roles.h). */
#include <stdio.h>
#include <string.h>

#include "roles.h"

/* Each executable links the entry points of its own roles only: weak
 * references are NULL for the others, so one table serves all three and
 * role_run can never start a role in the wrong executable. */
extern int frontend_main (void) __attribute__ ((weak));
extern int keyholder_main (void) __attribute__ ((weak));
extern int fetcher_main (void) __attribute__ ((weak));
extern int launcher_main (void) __attribute__ ((weak));
extern int url_check_main (void) __attribute__ ((weak));
extern int remover_main (void) __attribute__ ((weak));
extern int print_library_versions (void) __attribute__ ((weak));

const struct role roles[NROLES] = {
  [ROLE_SUPERVISOR] = {
    .name = NULL, .arg = NULL, .exe = EXE_SUPERVISOR, .comm = "nbdcurld",
    .rules = supervisor_policy_rules, .nrules = &supervisor_policy_nrules,
  },
  [ROLE_FRONTEND] = {
    .name = "front-end", .arg = ROLE_ARG_FRONTEND, .exe = EXE_FRONTEND, .comm = "nbdcurld-fe",
    .rules = frontend_policy_rules, .nrules = &frontend_policy_nrules, .entry = frontend_main,
  },
  [ROLE_KEYHOLDER] = {
    .name = "key holder", .arg = ROLE_ARG_KEYHOLDER, .exe = EXE_FRONTEND, .comm = "nbdcurld-key",
    .rules = keyholder_policy_rules, .nrules = &keyholder_policy_nrules, .entry = keyholder_main,
  },
  /* With unix-socket-path=, a fetcher's policy is fetcher_unix (fetcher.c). */
  [ROLE_FETCHER] = {
    .name = "fetcher", .arg = ROLE_ARG_FETCHER, .exe = EXE_FETCHER, .comm = "nbdcurld-fetch",
    .rules = fetcher_policy_rules, .nrules = &fetcher_policy_nrules, .entry = fetcher_main,
  },
  /* The launcher binds every symbol of its libraries at load, once: left
   * lazy, each fetcher it forks would look up the functions it calls
   * first itself, and write the answers into pages it shares with the
   * launcher, copying them.  An exec'd child binds lazily, which costs it
   * less. */
  [ROLE_LAUNCHER] = {
    .name = "launcher", .arg = ROLE_ARG_LAUNCHER, .exe = EXE_FETCHER, .comm = "nbdcurld-launch",
    .rules = launcher_policy_rules, .nrules = &launcher_policy_nrules, .entry = launcher_main,
    .bind_now = true,
  },
  /* The URL checker parses with libcurl's URL API and needs nothing a
   * fetcher may not do: the fetcher's policy. */
  [ROLE_URL_CHECK] = {
    .name = "url-check", .arg = ROLE_ARG_URL_CHECK, .exe = EXE_FETCHER, .comm = "nbdcurld-url",
    .rules = fetcher_policy_rules, .nrules = &fetcher_policy_nrules, .entry = url_check_main,
  },
  /* The file remover keeps the supervisor's mask (SIGTERM, SIGINT, SIGHUP
   * blocked), so that a terminal's signal to the process group cannot
   * end it before it has blocked them itself: it must outlive us. */
  [ROLE_REMOVER] = {
    .name = "remover", .arg = ROLE_ARG_REMOVER, .exe = EXE_SUPERVISOR, .comm = "nbdcurld-rm",
    .rules = remover_policy_rules, .nrules = &remover_policy_nrules, .entry = remover_main,
    .keeps_signal_mask = true,
  },
};

const struct role *
role_of_arg (const char *arg)
{
  size_t i;

  for (i = 0; i < NROLES; i++)
    if (roles[i].arg != NULL && strcmp (roles[i].arg, arg) == 0)
      return &roles[i];
  return NULL;
}

bool
role_run (int argc, char **argv, int *status)
{
  const struct role *r = argc == 2 ? role_of_arg (argv[1]) : NULL;

  if (r == NULL || r->entry == NULL)
    return false;
  *status = r->entry ();
  return true;
}

int
role_main (int argc, char **argv, const char *what, const char *exe_name)
{
  int status;

  if (role_run (argc, argv, &status))
    return status;
  if (argc == 2 && strcmp (argv[1], ARG_LIBRARY_VERSIONS) == 0 && print_library_versions)
    return print_library_versions ();
  fprintf (stderr, "%s: this is nbdcurld's %s, started by nbdcurld itself: run nbdcurld "
           "instead\n", argc > 0 ? argv[0] : exe_name, what);
  return 1;
}
