/*
 * unused-signals.h: the signals whose default action ends a process and
 * which nbdcurld has no use for.  An operator's kill of one (of the
 * supervisor, or of any child's pid) must never end anything: the
 * supervisor blocks them and reads them from its signalfd (SIGUSR1 logs
 * the statistics, the others a notice); every child ignores them
 * (child_start).  Real-time signals are ignored the same way, past the
 * ones glibc keeps for itself.  SIGHUP is in the list: the supervisor
 * logs it and serves on.
 */
#ifndef NBDCURLD_UNUSED_SIGNALS_H
#define NBDCURLD_UNUSED_SIGNALS_H

#include <signal.h>

static const int unused_signals[] = {
  SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
};
#define NUNUSED_SIGNALS (sizeof unused_signals / sizeof unused_signals[0])

/* Add them all, real-time ones included, to a set. */
static inline void
unused_signals_add (sigset_t *set)
{
  int s;
  unsigned i;

  for (i = 0; i < NUNUSED_SIGNALS; i++)
    sigaddset (set, unused_signals[i]);
  for (s = SIGRTMIN; s <= SIGRTMAX; s++)
    sigaddset (set, s);
}

/* Ignore them all (a child's start); glibc refuses the real-time signals
 * it uses itself, which no operator's kill reaches by name anyway. */
static inline void
unused_signals_ignore (void)
{
  int s;
  unsigned i;

  for (i = 0; i < NUNUSED_SIGNALS; i++)
    signal (unused_signals[i], SIG_IGN);
  for (s = SIGRTMIN; s <= SIGRTMAX; s++)
    (void) signal (s, SIG_IGN);
}

#endif
