/*
 * stats-report.h: the supervisor's side of the statistics: it asks the
 * front-end for them (SIGUSR1, --stats-interval), takes its reports
 * (IPC_EXPORT_STATS, IPC_CLIENT_STATS), and writes them: to the log, and
 * to --stats-file in the text or Prometheus format (nbdcurld(8),
 * STATISTICS).  It keeps one report per export and the one being
 * received: memory bounded by the number of exports, whatever the
 * number of clients.
 */
#ifndef NBDCURLD_STATS_REPORT_H
#define NBDCURLD_STATS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc-messages.h"
#include "supervisor.h"

/* At start, before daemonizing: --stats-file made absolute and its
 * directory checked. */
void stats_report_setup (const struct options *o);
/* --stats-file's directory must be writable by the user the supervisor
 * runs as once it has dropped root (uid, gid with change_user). */
void stats_report_check_dir (bool change_user, uid_t uid, gid_t gid);
/* Ask the front-end (control_fd, -1 when it is gone) for a report; with
 * to_log, the report goes to the log as well as the file. */
void stats_report_ask (int control_fd, bool to_log);
/* A statistics message from the front-end, checked by ipc_check. */
void stats_report_take (const struct ipc_header *h, const uint8_t *payload);
/* The next --stats-interval report's time (CLOCK_MONOTONIC ms), or 0. */
uint64_t stats_report_next_ms (void);
void stats_report_interval_due (int control_fd);
/* The server is stopping and the front-end is gone: the last report to
 * the log (--stats, -v) and the file. */
void stats_report_at_exit (void);

#endif
