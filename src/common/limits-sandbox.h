/*
 * limits-sandbox.h: what each role's sandbox start assumes of the system
 * (sandbox.c): the user it becomes and the status file it reads.
 */
#ifndef NBDCURLD_LIMITS_SANDBOX_H
#define NBDCURLD_LIMITS_SANDBOX_H

/* Started as root without --user: nbdcurld's own system user (the Debian
 * package makes it, debian/nbdcurld.sysusers), else the user every
 * system has. */
#define DEFAULT_USER              "nbdcurld"
#define FALLBACK_USER             "nobody"

/* /proc/self/status, read once at each role's start for its TracerPid
 * (sandbox_early_start): a few KiB on Linux, so a longer one is an error,
 * not a partial read. */
#define PROC_STATUS_MAX_BYTES     16384u

#endif
