/*
 * supervisor.c: the supervisor role: its start, its loop, and its stop.
 *
 * It parses the command line, has every URL checked (by the URL checker,
 * urlcheck-client.c: this executable does not link libcurl), makes the
 * listening sockets (sockets.c), then fork+execs the front-end and, at
 * the front-end's request, one fetcher per client connection (spares.c,
 * fetchers.c).  It never reads a client byte or an HTTP byte: its only
 * peer is the front-end's control socket, which may send exactly one
 * kind of request, and statistics (supervisor_dispatch_frontend).
 *
 * Peers: front-end (control socket, supervisor_dispatch_frontend; its
 * statistics go to stats-report.c), signals (signalfd: children exiting,
 * termination, SIGUSR1 for a statistics report, and the others nbdcurld
 * has no use for, unused-signals.h), the --run command (a child,
 * run-command.c), the fetcher launcher (launcher-client.c), the fetchers
 * opening each export at start (open-checks.c), header-script= and
 * cookie-script= runs and the fetchers' script channels (scripts.c).
 *
 * This file owns the parsed options (every other file reads them through
 * a const pointer, but for the start's steps that fill them in:
 * urlcheck-client.c, exports.c), the processes the server cannot go on
 * without (the front-end and the key holder), the user the children
 * become, and the state of a graceful stop.  The other files never call
 * back into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access-rules.h"
#include "children.h"
#include "clock.h"
#include "config.h"
#include "config-wire.h"
#include "event.h"
#include "exports.h"
#include "fetchers.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "launcher-client.h"
#include "limits-server.h"
#include "limits-shutdown.h"
#include "log.h"
#include "log-destination.h"
#include "open-checks.h"
#include "remover-client.h"
#include "run-command.h"
#include "sandbox.h"
#include "scripts.h"
#include "sockets.h"
#include "spares.h"
#include "stats-report.h"
#include "stats-wire.h"
#include "supervisor.h"
#include "tls-files.h"
#include "tls-modes.h"
#include "unused-signals.h"
#include "urlcheck-client.h"
#include "wire.h"

static struct options opt;

static pid_t keyholder_pid = -1;
static pid_t frontend_pid = -1;
static int control_fd = -1;           /* our end of the front-end's control socket */

/* A graceful stop under way (the first SIGTERM or SIGINT): the front-end
 * was told to stop accepting, and the server stops when it has exited or
 * at stop_deadline_ms (CLOCK_MONOTONIC), whichever comes first. */
static bool stopping;
static uint64_t stop_deadline_ms;

/* Started as root: the supervisor, and so every child, becomes this user
 * and group once the sockets and images are open. */
static bool change_user;
static uid_t child_uid;
static gid_t child_gid;

/* ---- The front-end. ---- */

static int
send_frontend_config (int fd, const void *arg)
{
  return config_send_frontend (fd, arg);
}

/* --allow rules as the front-end gets them: one per export it names. */
static struct access_rule *
expand_access_rules (uint32_t *n)
{
  struct access_rule *out = calloc ((size_t) MAX_ACCESS_RULES, sizeof *out);
  unsigned i, j;

  if (out == NULL)
    fatal_errno ("calloc");
  *n = 0;
  for (i = 0; i < opt.nrules; i++) {
    const struct access_spec *a = &opt.rules[i];
    for (j = 0; j < opt.nexports; j++) {
      if (a->export != ALL_EXPORTS && a->export != j)
        continue;
      if (*n >= MAX_ACCESS_RULES)
        fatal ("--allow: %u rules over all exports is the most (rules given "
               "before the first --export count once per export)", MAX_ACCESS_RULES);
      out[*n] = (struct access_rule) {
        .export_index = j, .kind = a->kind, .prefix = a->prefix,
        .name = (char *) a->name,
      };
      memcpy (out[*n].addr, a->addr, sizeof out[*n].addr);
      (*n)++;
    }
  }
  return out;
}

/* Standard input and output on /dev/null: the client's (-s), now the
 * front-end's, or the terminal a daemon leaves.  Standard error stays,
 * for the log. */
static void
stdin_stdout_to_null (void)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);

  if (null >= 0) {
    dup2 (null, STDIN_FILENO);
    dup2 (null, STDOUT_FILENO);
    close (null);
  }
}

static void
start_frontend (void)
{
  struct frontend_config fc = {
    .flags = (opt.single ? FRONTEND_SINGLE : 0) |
             (exports_multi_conn () ? FRONTEND_MULTI_CONN : 0) |
             (opt.verbose ? FRONTEND_VERBOSE : 0) |
             (opt.sandbox_debug ? FRONTEND_SANDBOX_DEBUG : 0),
    .handshake_timeout = opt.handshake_timeout,
    .client_memory = opt.client_memory,
    .max_clients = opt.max_clients,
    .nexports = opt.nexports,
    .nlisteners = opt.single ? 0 : sockets_count (),
  };
  struct export_info exports[MAX_EXPORTS];
  int sv[2], fe_fds[64 + 1];
  unsigned i, nfe_fds = 0;

  for (i = 0; i < opt.nexports; i++) {
    exports[i].name = opt.exports[i].name;
    exports[i].description = opt.exports[i].description;
    exports[i].log_url = opt.exports[i].log_url;
    exports[i].readonly = opt.exports[i].readonly;
  }
  fc.exports = exports;
  fc.tls = *tls_for_frontend ();
  fc.rules = expand_access_rules (&fc.nrules);

  /* Its listeners (or the -s client), then the key holder's socket. */
  if (opt.single) {
    fe_fds[nfe_fds++] = STDIN_FILENO;
    fe_fds[nfe_fds++] = STDOUT_FILENO;
  }
  else
    for (i = 0; i < sockets_count (); i++)
      fe_fds[nfe_fds++] = sockets_listener (i);
  if (opt.tls != TLS_OFF)
    fe_fds[nfe_fds++] = start_keyholder (&keyholder_pid);

  fetchers_alloc (&opt);
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
    fatal_errno ("socketpair");
  frontend_pid = start_child (ROLE_FRONTEND, sv[1], fe_fds, nfe_fds,
                              send_frontend_config, &fc);
  if (frontend_pid == -1)
    fatal_errno ("starting the front-end");
  close (sv[1]);
  if (opt.tls != TLS_OFF)
    close (fe_fds[nfe_fds - 1]);
  free (fc.rules);
  control_fd = sv[0];

  /* The front-end owns the client side now: our copies only keep sockets
   * alive after it is gone. */
  sockets_close_all ();
  if (opt.single) {
    fetchers_check_data_pipe ();
    stdin_stdout_to_null ();
  }
}

/* The front-end's requests, and when each is allowed.  Anything else
 * means the front-end is broken or taken over: the server stops, since
 * every client goes through it.  (It never sends a descriptor: one makes
 * ipc_recv_datagram fail with EPROTO.)  Returns 1 when a message was
 * handled, 0 when none was waiting or the front-end is gone. */
static int
supervisor_dispatch_frontend (void)
{
  struct ipc_header h;
  uint8_t payload[CLIENT_STATS_WIRE_SIZE];
  const char *why;

  static_assert (CLIENT_STATS_WIRE_SIZE >= STATS_WIRE_SIZE, "the largest payload");
  if (ipc_recv_datagram (control_fd, &h, payload, sizeof payload) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return 0;
    if (errno == 0) {           /* the front-end exited; SIGCHLD tells why */
      close (control_fd);
      control_fd = -1;
      return 0;
    }
    fatal_errno ("bad message from the front-end");
  }
  why = ipc_check (&h, 0, ROLE_FRONTEND, ROLE_SUPERVISOR);
  if (why != NULL)
    fatal ("the front-end sent a malformed message (type %u: %s): stopping", h.type, why);
  switch (h.type) {
  case IPC_SPAWN_FETCHER:
    if (h.length >= opt.nexports)
      fatal ("the front-end asked for a fetcher for export %u of %u: stopping",
             h.length, opt.nexports);
    /* Asked before it read IPC_STOP_ACCEPTING: that client is being
     * closed, and the front-end may exit before an answer reaches it. */
    if (stopping)
      break;
    spawn_fetcher (control_fd, &h);
    break;
  case IPC_EXPORT_STATS:
  case IPC_CLIENT_STATS:
    stats_report_take (&h, payload);
    break;
  default:
    fatal ("unexpected message type %u from the front-end: stopping", h.type);
  }
  return 1;
}

/* What the front-end sent before it exited (its last statistics). */
static void
drain_frontend (void)
{
  while (control_fd >= 0 && supervisor_dispatch_frontend () == 1)
    ;
}

/* ---- Running and stopping. ---- */

static void
cleanup_files (void)
{
  const char *unix_socket_path = sockets_unix_path (), *private_dir = sockets_private_dir ();

  if (unix_socket_path && !handed_to_remover (unix_socket_path))
    unlink (unix_socket_path);
  if (private_dir)
    rmdir (private_dir);
  if (opt.pidfile && !handed_to_remover (opt.pidfile))
    unlink (opt.pidfile);
  finish_remover ();
}

/* Wait up to ms milliseconds for a child to end.  SIGCHLD is blocked
 * (supervisor_main's mask), so one that ended since the last waitpid is
 * pending and this returns at once: a stop takes as long as the slowest
 * child, not a multiple of a fixed sleep (which would be a large part of
 * a short --run's whole time). */
static void
wait_for_child_exit (unsigned ms)
{
  const struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000 };
  sigset_t chld;

  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  (void) sigtimedwait (&chld, NULL, &ts);
}

static void
stop_children (void)
{
  unsigned tries;

  launcher_retire ("stopping");
  if (frontend_pid > 0)
    kill (frontend_pid, SIGTERM);
  if (keyholder_pid > 0)
    kill (keyholder_pid, SIGTERM);
  fetchers_signal (SIGTERM);
  /* Give them a moment, then make sure. */
  for (tries = 0; tries < 50; tries++) {
    pid_t pid;
    while ((pid = waitpid (-1, NULL, WNOHANG)) > 0) {
      if (pid == frontend_pid)
        frontend_pid = -1;
      if (pid == keyholder_pid)
        keyholder_pid = -1;
      remove_fetcher (pid);
    }
    if (frontend_pid == -1 && keyholder_pid == -1 && fetchers_count () == 0)
      return;
    wait_for_child_exit (20);
  }
  /* SIGKILL cannot be ignored: reap them, so none outlives us even as a
   * zombie. */
  if (frontend_pid > 0) {
    kill (frontend_pid, SIGKILL);
    waitpid (frontend_pid, NULL, 0);
    frontend_pid = -1;
  }
  if (keyholder_pid > 0) {
    kill (keyholder_pid, SIGKILL);
    waitpid (keyholder_pid, NULL, 0);
    keyholder_pid = -1;
  }
  fetchers_kill_all ();
}

__attribute__((noreturn))
static void
shutdown_and_exit (int status)
{
  stop_children ();
  drain_frontend ();
  stats_report_at_exit ();
  scripts_cleanup ();
  cleanup_files ();
  exit (status);
}

/* An export cannot be opened (open_checks said why): --run's command
 * never runs, and the server stops. */
__attribute__((noreturn))
static void
stop_on_open_failure (void)
{
  run_command_abandon ();
  shutdown_and_exit (EXIT_FAILURE);
}

/* Every export open: --run's command may start. */
static void
open_checks_done (void)
{
  spares_begin (&opt);
  run_command_release ();
}

static int
exit_status_of (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return EXIT_FAILURE;
}

/* What a stop by signal exits with: success, but with --run failure,
 * since the command did not get to finish. */
static int
stop_status (void)
{
  return opt.run ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* SIGTERM, SIGINT: the first starts a graceful stop (SHUTDOWN_GRACE_SECONDS,
 * limits-shutdown.h), the second stops at once. */
static void
stop_on_signal (uint32_t sig)
{
  const struct ipc_header h = { .type = IPC_STOP_ACCEPTING };

  if (stopping) {
    notice ("signal %u again: stopping at once", sig);
    shutdown_and_exit (stop_status ());
  }
  if (frontend_pid == -1 || control_fd == -1 ||
      ipc_send_packet (control_fd, &h, NULL, 0) == -1) {
    debug ("stopping on signal %u", sig);
    shutdown_and_exit (stop_status ());
  }
  stopping = true;
  launcher_stopping ();
  spares_end ();
  stop_deadline_ms = monotonic_ms () + (uint64_t) SHUTDOWN_GRACE_SECONDS * 1000;
  notice ("stopping on signal %u: no new connections; requests in flight have "
          "%u seconds to finish (send the signal again to stop at once)",
          sig, SHUTDOWN_GRACE_SECONDS);
}

/* A child the server cannot go on without ended: say how, and stop. */
__attribute__((noreturn))
static void
stop_without (const char *who, int status)
{
  if (WIFSIGNALED (status))
    log_error ("%s was killed by signal %d (%s): stopping", who,
               WTERMSIG (status), strsignal (WTERMSIG (status)));
  else
    log_error ("%s exited with status %d: stopping", who, exit_status_of (status));
  shutdown_and_exit (EXIT_FAILURE);
}

static void
reap_children (void)
{
  pid_t pid;
  int status;

  while ((pid = waitpid (-1, &status, WNOHANG)) > 0) {
    if (pid == run_command_pid ()) {
      debug ("--run command exited with status %d", exit_status_of (status));
      shutdown_and_exit (exit_status_of (status));
    }
    if (pid == frontend_pid) {
      frontend_pid = -1;
      if (stopping && WIFEXITED (status) && WEXITSTATUS (status) == 0) {
        debug ("every client is done: stopping");
        shutdown_and_exit (stop_status ());
      }
      if (opt.single && WIFEXITED (status) && WEXITSTATUS (status) == 0)
        shutdown_and_exit (EXIT_SUCCESS);
      stop_without ("the front-end", status);
    }
    if (pid == keyholder_pid) {
      /* Without it no TLS client can be served: stop, as for the
       * front-end, rather than refuse every client from now on. */
      keyholder_pid = -1;
      if (WIFEXITED (status) && WEXITSTATUS (status) == 0) {
        /* It ends so when the front-end closed its socket: the front-end's
         * own end (reaped next) says whether that was a stop. */
        debug ("the key holder ended with the front-end");
        continue;
      }
      stop_without ("the key holder", status);
    }
    if (remover_reaped (pid) || launcher_reaped (pid, status))
      continue;
    if (scripts_child_exited (pid, status))
      continue;
    if (WIFSIGNALED (status))
      launcher_fetcher_crashed (WTERMSIG (status));
    remove_fetcher (pid);
    spare_exited (pid);
    scripts_fetcher_exited (pid);
    if (WIFSIGNALED (status))
      warn ("fetcher %d was killed by signal %d (%s)", (int) pid,
            WTERMSIG (status), strsignal (WTERMSIG (status)));
    else
      debug ("fetcher %d exited with status %d", (int) pid, exit_status_of (status));
  }
}

static void
daemonize (void)
{
  pid_t pid = fork ();

  if (pid == -1)
    fatal_errno ("fork");
  if (pid > 0)
    _exit (EXIT_SUCCESS);
  log_init (NULL, opt.verbose);         /* syslog lines carry our new pid */
  setsid ();
  if (chdir ("/") == -1)
    fatal_errno ("chdir /");
  stdin_stdout_to_null ();
}

static void
write_pidfile (void)
{
  char buf[32];
  int fd, n;

  fd = open (opt.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd == -1)
    fatal_errno ("cannot write the pid file %s", opt.pidfile);
  n = snprintf (buf, sizeof buf, "%d\n", (int) getpid ());
  if (write_full (fd, buf, (size_t) n) == -1 || close (fd) == -1)
    fatal_errno ("writing the pid file %s", opt.pidfile);
}

/* Started as root: the user and group every child (and we) become once
 * the sockets and images are open.  Otherwise --user and --group cannot
 * apply. */
static void
choose_child_user (void)
{
  if (geteuid () == 0) {
    char err[256];
    if (sandbox_lookup_user (opt.user, opt.group, &child_uid, &child_gid,
                             err, sizeof err) == -1)
      fatal ("%s", err);
    change_user = true;
    debug ("will run as %s%s, uid %u gid %u, once the sockets are made",
           opt.user ? "--user " : "", opt.user ? opt.user : sandbox_default_user (),
           (unsigned) child_uid, (unsigned) child_gid);
  }
  else if (opt.user || opt.group)
    fatal ("--user and --group need nbdcurld to be started as root; as "
           "another user, every process runs as that user (without any "
           "capabilities)");
}

/* Whether nbdcurld goes into the background: without -f, and with
 * nobody to report to (--run, -s, socket activation and
 * --exit-with-parent keep it where it was started). */
static bool
goes_to_background (void)
{
  return !opt.foreground && !opt.single && !opt.run && !sockets_activated () &&
         !opt.exit_with_parent;
}

/* --log: from here on (start-up errors above went to the standard error
 * nbdcurld was started with), every process's lines go there.
 * --print-uri: the URI, once the socket is there. */
static void
log_destination_and_print_uri (void)
{
  log_destination_open (opt.log_to, goes_to_background ());

  if (opt.print_uri) {
    if (opt.single || sockets_activated ())
      notice ("--print-uri: no URI when serving stdin or activated sockets");
    else {
      char *uri = server_uri ();
      printf ("%s\n", uri);
      fflush (stdout);
      free (uri);
    }
  }
}

/* Everything that needed our rights is done: sockets made, images open,
 * pid file written.  Become --user (started as root), drop every
 * capability, and load our filter; the children inherit all of it and
 * add their own layers. */
static void
drop_rights (void)
{
  /* Before the sandbox: the scripts' temporary directories. */
  scripts_prepare (&opt, max_fetchers (&opt), change_user, child_uid, child_gid);
  if (change_user)
    start_remover (&opt, child_uid, child_gid);
  if (change_user && sockets_private_dir ()) {
    /* So that the socket and its directory can still be removed at exit. */
    if (chown (sockets_private_dir (), child_uid, child_gid) == -1 ||
        (sockets_unix_path () && chown (sockets_unix_path (), child_uid, child_gid) == -1))
      warn_errno ("cannot hand %s to the unprivileged user", sockets_private_dir ());
  }
  {
    const struct sandbox_spec spec = {
      .role = "supervisor",
      .rules = supervisor_policy_rules, .nrules = supervisor_policy_nrules,
      .debug = opt.sandbox_debug,
      .change_user = change_user, .uid = child_uid, .gid = child_gid,
    };
    sandbox_enter (&spec);
  }
}

/* A signal nbdcurld has no use for (unused-signals.h): never a stop. */
static void
unused_signal (uint32_t sig)
{
  if (sig == SIGUSR1) {
    stats_report_ask (control_fd, true);
    return;
  }
  notice ("signal %u (%s): nbdcurld has no use for it, serving on (SIGUSR1 "
          "logs the statistics)", sig, strsignal ((int) sig));
}

/* The signals that came: children ended, SIGHUP, a stop, the others. */
static void
take_signals (int sfd)
{
  struct signalfd_siginfo si;

  while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si) {
    if (si.ssi_signo == SIGCHLD)
      reap_children ();
    else if (si.ssi_signo != SIGHUP && si.ssi_signo != SIGTERM && si.ssi_signo != SIGINT)
      unused_signal (si.ssi_signo);
    else if (si.ssi_signo == SIGHUP) {
      /* No log file of our own to reopen: standard error belongs to
       * whoever started us (a service manager's journal, a shell's
       * redirection).  With syslog, the logger may have restarted.
       * Never a reason to stop serving. */
      if (log_get_style () == LOG_STYLE_SYSLOG)
        log_destination_reopen ();
      else
        notice ("SIGHUP: nbdcurld writes no log file of its own (it logs to "
                "standard error): nothing to reopen, serving on");
    }
    else
      stop_on_signal (si.ssi_signo);
  }
}

/* The signalfd is readable. */
static void
signals_ready (int fd, short revents, void *cookie)
{
  (void) revents, (void) cookie;
  take_signals (fd);
}

/* The front-end's control socket is readable, or closed. */
static void
control_ready (int fd, short revents, void *cookie)
{
  (void) fd, (void) cookie;
  if (control_fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)))
    (void) supervisor_dispatch_frontend ();
}

/* A graceful stop's time is up. */
__attribute__((noreturn))
static void
grace_over (void *cookie)
{
  (void) cookie;
  warn ("requests still in flight after %u seconds: stopping them",
        SHUTDOWN_GRACE_SECONDS);
  shutdown_and_exit (stop_status ());
}

/* --stats-interval's report is due. */
static void
stats_interval_due (void *cookie)
{
  (void) cookie;
  stats_report_interval_due (control_fd);
}

/* The deadlines a round may have: a graceful stop's end, the open
 * checks', the scripts' next timer, a new launcher's start, the next
 * statistics report. */
#define SUPERVISOR_TIMERS 5

/* This round's peers, in the order their handlers run: the front-end,
 * the launcher, the scripts and the fetchers' script channels, the open
 * checks, then the signals (children reaped once the rest has been
 * read).  Returns 0, or -1 when ev is full. */
static int
watch_peers (struct event_loop *ev, int sfd)
{
  event_clear (ev);
  if (event_add (ev, control_fd, POLLIN, control_ready, NULL) == -1 ||
      launcher_register (ev) == -1 || scripts_register (ev) == -1 ||
      open_checks_register (ev) == -1 ||
      event_add (ev, sfd, POLLIN, signals_ready, NULL) == -1)
    return -1;
  if (stopping && event_timer (ev, stop_deadline_ms, grace_over, NULL) == -1)
    return -1;
  if (stats_report_next_ms () &&
      event_timer (ev, stats_report_next_ms (), stats_interval_due, NULL) == -1)
    return -1;
  return 0;
}

/* The loop: one handler per kind of peer. */
__attribute__((noreturn))
static void
serve (int sfd)
{
  /* The signalfd, the control socket, the launcher's socket, the
   * scripts' pipes and the fetchers' script channels, then the open
   * checks' sockets. */
  const unsigned max_fds = 3 + 4 * MAX_EXPORTS + max_fetchers (&opt) + MAX_EXPORTS;
  struct event_loop *ev = event_new (max_fds, SUPERVISOR_TIMERS);

  if (ev == NULL)
    fatal_errno ("calloc");
  for (;;) {
    int r;

    if (watch_peers (ev, sfd) == -1)
      fatal ("more descriptors or timers to wait for than the loop holds");
    r = event_dispatch (ev);
    if (r == -1)
      fatal_errno ("poll");
  }
}

int
supervisor_main (int argc, char **argv)
{
  sigset_t mask;
  int sfd;

  /* Before anything opens a file: the activated sockets are at fd 3... */
  take_activated_sockets ();
  /* ...and before anything secret is read (--config files, passwords,
   * the TLS key and PSKs): not dumpable, and not traced.  No user
   * namespace here: the programs we execute would inherit it, and every
   * process of our user holds every capability in a user namespace it
   * owns, ptrace of undumpable processes included. */
  sandbox_early_start ("nbdcurld", false);
  log_destination_detect ();
  options_parse (argc, argv, &opt);
  log_init (NULL, opt.verbose);
  exports_make_paths_absolute (&opt);
  stats_report_setup (&opt);
  /* Before any child: writes to a child that died must be errors.  (The
   * children and --run's command get the default back.) */
  signal (SIGPIPE, SIG_IGN);
  choose_child_user ();
  stats_report_check_dir (change_user, child_uid, child_gid);

  /* SIGTERM: a graceful stop.  Set again when we become --user. */
  if (opt.exit_with_parent)
    sandbox_parent_death (SIGTERM);

  children_open_executables ();
  check_urls (&opt, change_user, child_uid, child_gid);
  exports_prepare (&opt);
  prepare_tls (&opt);
  sockets_listen (&opt);
  log_destination_and_print_uri ();

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  /* SIGHUP, SIGUSR1 (statistics to the log) and the other signals whose
   * default would end us: read from the signalfd, never fatal. */
  unused_signals_add (&mask);
  if (sigprocmask (SIG_BLOCK, &mask, NULL) == -1)
    fatal_errno ("sigprocmask");

  if (goes_to_background ())
    daemonize ();
  if (opt.pidfile)
    write_pidfile ();

  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd == -1)
    fatal_errno ("signalfd");

  if (opt.run)
    start_run_command (&opt);         /* before our sandbox: it is not ours */
  log_destination_close_original ();
  drop_rights ();

  start_frontend ();
  launcher_begin (&opt);
  scripts_alloc_fetchers ();
  if (opt.run || opt.single || sockets_activated ())
    open_checks_start (&opt, stop_on_open_failure, open_checks_done);
  if (open_checks_left () == 0)
    open_checks_done ();
  serve (sfd);
}
