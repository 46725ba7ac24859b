/*
 * limits-log.h: how many log lines any process writes (log.c).
 */
#ifndef NBDCURLD_LIMITS_LOG_H
#define NBDCURLD_LIMITS_LOG_H

/* Warnings and notices, which a hostile client or server can cause, are
 * limited to a burst of LOG_BURST lines, then LOG_LINES_PER_SECOND; the
 * rest are counted and the count is logged once lines flow again.
 * Errors and -v output are never dropped.  A burst shows what happened;
 * the rate keeps a flood from filling the journal. */
#define LOG_BURST                 100u
#define LOG_LINES_PER_SECOND      20u

/* With --log=syslog a line waits at most LOG_SYSLOG_WAIT_MS for room in
 * the system logger's queue (SO_SNDTIMEO on the socket every process
 * shares): a logger that reads late loses nothing, one that is stuck
 * cannot stop the server.  After such a wait ran out, a process drops its
 * lines (counting them) for LOG_SYSLOG_PAUSE_MS before it waits again, so
 * that a stuck logger costs each process at most a tenth of its time;
 * errors are always tried. */
#define LOG_SYSLOG_WAIT_MS        100u
#define LOG_SYSLOG_PAUSE_MS       1000u

/* The longest line, prefix included; longer text is cut.  Under
 * PIPE_BUF, so that a line written to a pipe is never split. */
#define LOG_LINE_MAX              2048u

#endif
