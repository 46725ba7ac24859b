/*
 * run-command.h: --run's command (run-command.c).
 */
#ifndef NBDCURLD_SUPERVISOR_RUN_COMMAND_H
#define NBDCURLD_SUPERVISOR_RUN_COMMAND_H

#include <sys/types.h>

#include "supervisor.h"

/* Fork --run's command, before our sandbox (it is not ours); it waits at
 * a gate until run_command_release. */
void start_run_command (const struct options *o);

/* Its pid, or -1. */
pid_t run_command_pid (void);

/* Every export open: the command may start. */
void run_command_release (void);

/* An export cannot be opened: the command, still at the gate, ends
 * without running. */
void run_command_abandon (void);

#endif
