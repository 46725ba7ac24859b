/*
 * limits-shutdown.h: how the supervisor stops (supervisor.c).
 */
#ifndef NBDCURLD_LIMITS_SHUTDOWN_H
#define NBDCURLD_LIMITS_SHUTDOWN_H

/* Seconds a graceful stop (the first SIGTERM or SIGINT) gives the
 * requests in flight: the front-end stops accepting, closes clients
 * still negotiating, reads no new requests, and closes each client once
 * its replies are sent; whatever is still running then is stopped.  Long
 * enough for reads of a working server (milliseconds each), short enough
 * to sit well inside a service manager's stop timeout (systemd: 90 s by
 * default, 30 s in nbdcurld.service).  A second signal stops at once. */
#define SHUTDOWN_GRACE_SECONDS    5u

#endif
