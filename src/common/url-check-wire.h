/*
 * url-check-wire.h: the URL checker's questions and answers.  The
 * supervisor sends each URL (IPC_CONFIG_URL, with the URL_CHECK_* flags
 * below) to the URL checker, which reads it with libcurl and answers with
 * one IPC_URL_CHECKED (struct url_checked_wire), so that the supervisor
 * itself never links libcurl.
 */
#ifndef NBDCURLD_URL_CHECK_WIRE_H
#define NBDCURLD_URL_CHECK_WIRE_H

#include <stdint.h>

#include "limits-strings.h"

/* The URL checker's answer for one URL: libcurl's reading of it. */
struct url_checked_wire {
  uint32_t flags;              /* URL_CHECKED_* */
  uint32_t kind;               /* enum url_kind (url.h) when URL_CHECKED_OK */
  uint32_t message_len;        /* 0 .. MAX_URL_MESSAGE: why it was refused */
  uint32_t log_url_len;        /* 1 .. MAX_LOG_URL_LENGTH: url_for_log() */
  uint32_t file_path_len;      /* file: only, 1 .. MAX_PATH_LENGTH; else 0 */
  uint32_t script_url_len;     /* 0: the URL has no user name or password;
                                  else 1 .. MAX_LOG_URL_LENGTH: the URL
                                  without them (scripts' $url) */
  /* then the message, the URL as it may be logged, the path, and the URL
   * for scripts */
};
/* IPC_CONFIG_URL's flags: what the export needs of libcurl (refused
 * with a message when this libcurl lacks it), or that the URL is a
 * proxy's (http:// or https://, a host and port and nothing else). */
#define URL_CHECK_PROXY           (1u << 0)
#define URL_CHECK_NEEDS_HTTP2     (1u << 1)
#define URL_CHECK_NEEDS_HTTP3     (1u << 2)
#define URL_CHECK_NEEDS_UNIX      (1u << 3)
#define URL_CHECK_ALL             (URL_CHECK_PROXY | URL_CHECK_NEEDS_HTTP2 | \
                                   URL_CHECK_NEEDS_HTTP3 | URL_CHECK_NEEDS_UNIX)
#define URL_CHECKED_OK            (1u << 0)  /* a URL nbdcurld serves */
#define URL_CHECKED_HAS_PASSWORD  (1u << 1)  /* user:password@ inside */
/* Why a URL was refused: one line of the supervisor's error message. */
#define MAX_URL_MESSAGE           255u
/* libcurl's normalised URL may be longer than the one given (it
 * percent-encodes); the checker shortens longer ones for the log. */
#define MAX_LOG_URL_LENGTH        (MAX_URL_LENGTH + 64u)

#endif
