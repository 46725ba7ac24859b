/*
 * sandbox-probe.c: attempts that a role's sandbox must refuse, made from
 * inside the real role after its sandbox is up.  Built only into the test
 * binary nbdcurld-test (never into nbdcurld).
 *
 * The front-end runs a probe when a client asks for the export
 * "probe:NAME"; a fetcher runs one when its URL ends in "#probe=NAME".
 * Each probe logs "probe NAME: allowed" or "probe NAME: refused: ERROR";
 * one that seccomp refuses never logs at all: the process dies by SIGSYS
 * (or, with --sandbox-debug, names the call and exits).
 *
 *   open:PATH       open PATH read-only
 *   connect:PORT    TCP connect to 127.0.0.1:PORT
 *   fork            start a process
 *   exec            run /bin/true
 *   stack-guard     log this process's stack protector guard (fetchers
 *                   forked by one launcher must each have their own)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

void sandbox_probe (const char *probe);

static void
report (const char *probe, int r)
{
  if (r == 0)
    notice ("probe %s: allowed", probe);
  else
    notice ("probe %s: refused: %s", probe, strerror (errno));
}

void
sandbox_probe (const char *probe)
{
  if (strncmp (probe, "open:", 5) == 0) {
    int fd = open (probe + 5, O_RDONLY | O_CLOEXEC);
    report (probe, fd >= 0 ? 0 : -1);
    if (fd >= 0)
      close (fd);
  }
  else if (strncmp (probe, "connect:", 8) == 0) {
    struct sockaddr_in sin = { .sin_family = AF_INET,
                               .sin_port = htons ((uint16_t) atoi (probe + 8)) };
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = -1;
    sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (fd >= 0) {
      r = connect (fd, (struct sockaddr *) &sin, sizeof sin);
      close (fd);
    }
    report (probe, r);
  }
  else if (strcmp (probe, "fork") == 0) {
    pid_t pid = fork ();
    if (pid == 0)
      _exit (0);
    if (pid > 0)
      waitpid (pid, NULL, 0);
    report (probe, pid > 0 ? 0 : -1);
  }
  else if (strcmp (probe, "exec") == 0) {
    char *argv[] = { (char *) "true", NULL }, *envp[] = { NULL };
    execve ("/bin/true", argv, envp);
    report (probe, -1);
  }
  else if (strcmp (probe, "stack-guard") == 0) {
    uintptr_t guard;
#if defined (__x86_64__)
    __asm__ volatile ("movq %%fs:0x28, %0" : "=r" (guard));
#elif defined (__aarch64__)
    extern uintptr_t __stack_chk_guard;
    guard = __stack_chk_guard;
#else
#error "stack-guard probe: add this architecture's stack guard location"
#endif
    notice ("probe stack-guard: %#jx", (uintmax_t) guard);
  }
  else
    warn ("unknown probe %s", probe);
}
