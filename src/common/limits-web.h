/*
 * limits-web.h: the bounds of what the configuration may ask of a
 * fetcher's web transfers (the curl keys' ranges, curl-keys.h, and the
 * fetcher's configuration, fetcher-wire.h).  The defaults within them are
 * limits-transfer.h's.
 */
#ifndef NBDCURLD_LIMITS_WEB_H
#define NBDCURLD_LIMITS_WEB_H

/* HTTP/FTP connections kept per fetcher (--connections): each is a socket
 * and a libcurl handle, and a web server may count them per client. */
#define MAX_CONNECTIONS           64u
/* Longest --timeout, --connect-timeout, --stall-timeout and
 * header-script-renew=, cookie-script-renew= (seconds): a day. */
#define MAX_TIMEOUT               86400u
/* Retries of a failed read (--retries) and the longest wait between two
 * (--retry-delay and its doubling): with --timeout, they bound how long a
 * read may take. */
#define MAX_RETRIES               100u
#define RETRY_MAX_DELAY_MS        60000u
/* --allow-port: TCP ports besides the URL's own and the default ports of
 * http and https (80, 443) that a redirect may lead to
 * (fetcher-connect.c; the fetcher's Landlock rules hold the same set). */
#define MAX_ALLOWED_PORTS         8u

#endif
