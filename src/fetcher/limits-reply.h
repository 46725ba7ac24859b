/*
 * limits-reply.h: what a web server's reply may hold before the fetcher
 * gives up on it (web-reply.c checks every reply, by either path;
 * fetcher-http.c, fetcher-direct.c): its header lines, interim responses,
 * redirects and Retry-After.
 */
#ifndef NBDCURLD_LIMITS_REPLY_H
#define NBDCURLD_LIMITS_REPLY_H

/* Redirects followed when opening a URL: more than any real chain of
 * mirrors, few enough that a loop fails fast. */
#define MAX_REDIRECTS             10
/* Longest HTTP header line we look at; longer ones are ignored unless
 * they are ones we need, which then fail the transfer. */
#define MAX_HEADER_LINE           8192u
/* Longest header section of a reply to a direct (spliced) read; a longer
 * one fails that read. */
#define MAX_RESPONSE_HEADER_BYTES (16u * 1024)
/* Interim (1xx) responses a request's reply may have before its final
 * response (counted however they arrive); more fail the request. */
#define MAX_INTERIM_RESPONSES     4u
/* The longest wait a Retry-After may ask for before a read is retried
 * (limits-transfer.h): as long as the longest retry delay. */
#define RETRY_AFTER_MAX_MS        60000u

#endif
