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

#endif
