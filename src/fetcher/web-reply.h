/*
 * web-reply.h: does a web server's reply answer the request?  One checker
 * for the network fetcher's two ways of reading a reply: its own parser
 * of direct reads' header sections (direct-head-parse.c) and libcurl's
 * header callback (fetcher-http-receive.c).  Each hands it the reply's
 * lines; it keeps what they said in one struct and decides.  It knows
 * nothing of transfers, sockets or libcurl.
 *
 * All of a reply's state is in struct web_reply, and web_reply_reset is
 * the one way to start it again: every path that sends a request (a
 * direct read, a read through libcurl, a read handed from one to the
 * other, a retry) resets it, so nothing found or passed for an earlier
 * request counts for the next.  A status line within one request (an
 * interim 1xx reply, or a redirect while opening) starts a new response
 * through the same reset, keeping only what belongs to the request: a
 * problem already found, and the interim replies so far.
 */
#ifndef NBDCURLD_WEB_REPLY_H
#define NBDCURLD_WEB_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"

/* How much of a server's header value a log line quotes. */
#define LOG_QUOTE_MAX 128

/* Longest message about one reply's problem. */
#define PROBLEM_MAX 384

enum web_request_kind {
  WEB_REQUEST_HEAD,             /* open: HEAD; the validators are kept */
  WEB_REQUEST_PROBE,            /* open: GET bytes=0-0; the validators are kept */
  WEB_REQUEST_RANGE,            /* a read: one range of the pinned object */
};

/* What the reply must answer. */
struct web_request {
  enum web_request_kind kind;
  /* WEB_REQUEST_RANGE: the range (length >= 1, offset + length <= size),
   * and what the export's open pinned: the object's size and validators
   * (not owned; NULL when the server gave none). */
  uint64_t offset, length, size;
  const char *etag, *last_modified;
};

enum accept_ranges { RANGES_UNSAID, RANGES_BYTES, RANGES_NONE, RANGES_OTHER };

struct web_reply {
  struct web_request req;
  /* Of the request: the first thing found wrong (then the reply is
   * refused), or "". */
  char problem[PROBLEM_MAX];
  /* Interim (1xx) responses in a row up to this one (MAX_INTERIM_RESPONSES). */
  unsigned interim;
  /* web_reply_check passed: the body may be taken. */
  bool checked;

  /* Of the response since the last status line. */
  long status;                  /* 0: no status line yet */
  bool have_content_range;
  bool content_range_bad;       /* unparsable */
  bool content_range_repeated;
  bool content_range_unsatisfied; /* "bytes * /TOTAL" (416) */
  uint64_t range_first, range_last, range_total;
  bool range_total_known;
  char content_range_text[LOG_QUOTE_MAX];
  enum accept_ranges accept_ranges;
  bool content_encoded;
  char content_encoding_text[LOG_QUOTE_MAX];
  /* WEB_REQUEST_RANGE: a validator differs from the one pinned at open. */
  bool etag_differs, last_modified_differs;
  /* A problem said the object is no longer the one pinned (412, another
   * size or validator): the export's cache stops answering for it. */
  bool object_changed;
  char validator_text[LOG_QUOTE_MAX];
  /* Retry-After, in milliseconds from when it came (seconds, or an
   * HTTP-date less the clock now), at most RETRY_AFTER_MAX_MS; -1: none
   * or unusable. */
  int64_t retry_after_ms;
  /* web_reply_check refused the reply for its status alone, one that
   * says a later request may succeed (web_reply_transient). */
  bool transient_status;
  /* Open requests: the validators, to pin (malloc'd, or NULL). */
  char *etag, *last_modified;
  /* How the status line ended, which every header line must match. */
  enum { LINE_ENDS_UNSEEN, LINE_ENDS_CRLF, LINE_ENDS_LF } line_ends;
};

/* A request goes out: forget everything about earlier replies (and free
 * what they kept), and expect a reply to req.  A zeroed struct needs
 * this before anything else too. */
void web_reply_reset (struct web_reply *r, const struct web_request *req);

/* One line of the reply's header section, with its line end (libcurl's
 * header callback gives them so; a direct read's parser too).  A status
 * line starts a new response.  Returns false once the reply is refused
 * (r->problem says why): reading it on is pointless. */
bool web_reply_line (struct web_reply *r, const char *line, size_t len);

/* Record a problem found by the caller (the framing, the body); the first
 * one is the cause. */
PRINTF_LIKE (2, 3) void web_reply_problem (struct web_reply *r, const char *fmt, ...);

/* Is the response so far an interim one (1xx other than 101)?  Another
 * follows it. */
bool web_reply_interim (const struct web_reply *r);

/* May the reply's body be taken?  For a range: a 206 whose Content-Range
 * names exactly the range of an object of the pinned size, with the
 * pinned validators and no content coding; for the probe: a 206.  Sets
 * r->problem if not.  Call once the header section is complete. */
bool web_reply_check (struct web_reply *r);

/* Was the reply refused only for a status that says "not now" (408,
 * 429, 500, 502, 503, 504), so that asking again may bring the range?
 * Never for a reply that had anything else wrong: another object, a
 * range other than the one asked for, a malformed header section. */
bool web_reply_transient (const struct web_reply *r);

/* The reply to the open's HEAD (status 2xx): its size is length (-1 if
 * unknown), and does it settle the size and support for byte ranges? */
enum web_head_result {
  WEB_HEAD_SETTLED,             /* a size and Accept-Ranges: bytes */
  WEB_HEAD_PROBE,               /* not settled: a probe must tell */
  WEB_HEAD_NO_RANGES,           /* Accept-Ranges: none */
};
enum web_head_result web_reply_head (const struct web_reply *r, int64_t length);

/* The reply to the open's probe (GET bytes=0-0), whose body had received
 * bytes; empty_200: a 200 with an empty body.  WEB_PROBE_SIZE sets *size;
 * WEB_PROBE_STATUS: a status that refuses the object (r->status);
 * WEB_PROBE_BAD: r->problem says what is wrong. */
enum web_probe_result { WEB_PROBE_SIZE, WEB_PROBE_STATUS, WEB_PROBE_BAD };
enum web_probe_result web_reply_probe (struct web_reply *r, size_t received,
                                       bool empty_200, uint64_t *size);

/* Hand over the validators an open request kept: *etag and
 * *last_modified (freed first) become the reply's (malloc'd, or NULL). */
void web_reply_take_validators (struct web_reply *r, char **etag, char **last_modified);

/* Helpers for a header parser. */
/* A decimal number of 1 to 19 digits, at most INT64_MAX. */
bool parse_decimal (const char *s, size_t len, uint64_t *out);
/* The value of a header line of len bytes (without its line end) whose
 * name is its first name_len bytes (a colon follows them), without the
 * whitespace around it. */
const char *header_value (const char *line, size_t len, size_t name_len,
                          size_t *value_len);

#endif
