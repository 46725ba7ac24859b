/*
 * run-command.c: --run's command, a shell command given the server's URI.
 *
 * Apart because it is not part of the server: a child of the
 * supervisor's that runs as whoever started nbdcurld, outside every
 * sandbox, and only once every export has been opened (a gate it waits
 * at).  It owns the command's pid and the gate.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "log.h"
#include "log-destination.h"
#include "run-command.h"
#include "sockets.h"
#include "tls-modes.h"

/* The parsed options, read-only here (start_run_command). */
static const struct options *options;
#define opt (*options)

static pid_t run_pid = -1;
static int run_gate_fd = -1;          /* --run's command waits for a byte here */

void
start_run_command (const struct options *o)
{
  char *uri, port[16] = "";
  const char *unix_socket_path = sockets_unix_path ();

  options = o;
  uri = server_uri ();
  if (!unix_socket_path)
    snprintf (port, sizeof port, "%s", opt.port ? opt.port : "10809");
  int gate[2];

  /* The command is started now, before our sandbox (it is not ours), but
   * runs only once every export has been opened (open-checks.c): it
   * waits for a byte on the gate, and ends without running at its EOF. */
  if (pipe2 (gate, O_CLOEXEC) == -1)
    fatal_errno ("pipe for --run");
  run_pid = fork ();
  if (run_pid == -1)
    fatal_errno ("fork for --run");
  if (run_pid == 0) {
    sigset_t none;
    char go;
    ssize_t n;

    close (gate[1]);
    do
      n = read (gate[0], &go, 1);
    while (n == -1 && errno == EINTR);
    if (n != 1)
      _exit (EXIT_FAILURE);   /* nbdcurld stopped: nothing to run against */
    close (gate[0]);
    /* The command's own messages go where nbdcurld's were to go before
     * --log chose (the terminal, say), not into the log. */
    log_destination_restore_stderr ();
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);
    setenv ("uri", uri, 1);
    setenv ("port", port, 1);
    setenv ("unixsocket", unix_socket_path ? unix_socket_path : "", 1);
    setenv ("exportname", opt.exports[0].name, 1);
    /* As nbdkit: "1" for --tls=on, "2" for --tls=require, unset when off. */
    if (opt.tls != TLS_OFF)
      setenv ("tls", opt.tls == TLS_ON ? "1" : "2", 1);
    else
      unsetenv ("tls");
    if (opt.tls_certificates)
      setenv ("tls_certificates", opt.tls_certificates, 1);
    if (opt.tls_psk)
      setenv ("tls_psk", opt.tls_psk, 1);
    execl ("/bin/sh", "sh", "-c", opt.run, (char *) NULL);
    log_error ("--run: cannot run /bin/sh: %s", strerror (errno));
    _exit (127);
  }
  close (gate[0]);
  run_gate_fd = gate[1];
  free (uri);
}

pid_t
run_command_pid (void)
{
  return run_pid;
}

void
run_command_release (void)
{
  if (run_gate_fd >= 0) {
    if (write (run_gate_fd, "r", 1) != 1)
      warn_errno ("starting --run's command");
    close (run_gate_fd);
    run_gate_fd = -1;
  }
}

void
run_command_abandon (void)
{
  /* The command never ran: it is still our fork, waiting at the gate,
   * and ends when the gate closes (started as root, it may be root,
   * which we can no longer signal). */
  if (run_pid > 0 && run_gate_fd >= 0) {
    close (run_gate_fd);
    run_gate_fd = -1;
    while (waitpid (run_pid, NULL, 0) == -1 && errno == EINTR)
      ;
    run_pid = -1;
  }
}
