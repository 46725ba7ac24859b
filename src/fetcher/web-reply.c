/*
 * web-reply.c: does a web server's reply answer the request?  See
 * web-reply.h.  What a range read's reply must be to be used: a 206 whose
 * Content-Range names exactly the requested bytes of an object of the
 * size seen at open, whose validators did not change and whose body has
 * no content coding, after at most MAX_INTERIM_RESPONSES interim replies,
 * with every line ending as its status line does.  The length of the
 * body is the callers' to check: they frame it (fetcher-direct.c by
 * Content-Length, fetcher-http.c by counting what libcurl gives).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "limits-reply.h"
#include "web-reply.h"

/* Copy a server's text into dst for a log line: printable ASCII only,
 * truncated to fit. */
static void
quote_for_log (char *dst, size_t cap, const char *src, size_t len)
{
  size_t i;

  if (cap == 0)
    return;
  for (i = 0; i < len && i < cap - 1; i++)  /* cap >= 1: checked above */
    dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
  dst[i] = '\0';
}

/* A decimal number of 1 to 19 digits, at most INT64_MAX: sizes and
 * offsets must fit off_t and curl_off_t. */
bool
parse_decimal (const char *s, size_t len, uint64_t *out)
{
  uint64_t v = 0;
  size_t i;

  if (len == 0 || len > 19)
    return false;
  for (i = 0; i < len; i++) {
    uint64_t d;
    if (s[i] < '0' || s[i] > '9')
      return false;
    d = (uint64_t) (s[i] - '0');
    if (v > ((uint64_t) INT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* Content-Range (RFC 9110 14.4), one range only:
 *   "bytes" SP first "-" last "/" ( total / "*" )
 *   "bytes" SP "*" "/" total                        (416 replies) */
static bool
parse_content_range (const char *v, size_t len, struct web_reply *resp)
{
  const char *range, *slash, *dash, *total;
  size_t i, range_len, total_len;

  if (len < 6 || strncasecmp (v, "bytes", 5) != 0 || v[5] != ' ')
    return false;
  for (i = 5; i < len && v[i] == ' '; i++)
    ;
  range = v + i;
  slash = memchr (range, '/', len - i);     /* i <= len */
  if (slash == NULL)
    return false;
  range_len = (size_t) (slash - range);
  total = slash + 1;
  total_len = len - i - range_len - 1;      /* the slash is inside v[i..len) */

  if (total_len == 1 && total[0] == '*')
    resp->range_total_known = false;
  else if (parse_decimal (total, total_len, &resp->range_total))
    resp->range_total_known = true;
  else
    return false;

  if (range_len == 1 && range[0] == '*') {
    resp->content_range_unsatisfied = true;
    return resp->range_total_known;
  }
  dash = memchr (range, '-', range_len);
  if (dash == NULL ||
      !parse_decimal (range, (size_t) (dash - range), &resp->range_first) ||
      /* The dash is inside range[0..range_len). */
      !parse_decimal (dash + 1, range_len - (size_t) (dash - range) - 1,
                      &resp->range_last) ||
      resp->range_first > resp->range_last)
    return false;
  if (resp->range_total_known && resp->range_last >= resp->range_total)
    return false;
  return true;
}

/* Accept-Ranges: a comma-separated list of range units. */
static enum accept_ranges
parse_accept_ranges (const char *v, size_t len)
{
  enum accept_ranges result = RANGES_UNSAID;
  size_t i = 0;

  /* Each pass consumes one list element and its comma. */
  while (i < len) {
    size_t start, end;
    while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    start = i;
    while (i < len && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
      i++;
    end = i;                    /* end >= start */
    if (end == start)
      continue;
    if (end - start == 5 && strncasecmp (v + start, "bytes", 5) == 0)
      return RANGES_BYTES;
    if (end - start == 4 && strncasecmp (v + start, "none", 4) == 0)
      result = result == RANGES_UNSAID ? RANGES_NONE : result;
    else
      result = RANGES_OTHER;
  }
  return result;
}

/* Validators are sent back in request headers, so only visible ASCII
 * (and, for dates, spaces) is kept; anything else is not pinned. */
static bool
is_token_text (const char *v, size_t len, bool allow_space)
{
  size_t i;

  if (len == 0)
    return false;
  for (i = 0; i < len; i++)
    if (!((v[i] > 0x20 && v[i] < 0x7f) || (allow_space && v[i] == ' ')))
      return false;
  return true;
}

/* Weak comparison (RFC 9110 8.8.3.2): the opaque tags are equal. */
static bool
etag_equal (const char *pinned, const char *v, size_t len)
{
  size_t plen = strlen (pinned);

  if (plen >= 2 && strncmp (pinned, "W/", 2) == 0) {
    pinned += 2;
    plen -= 2;                  /* plen >= 2 */
  }
  if (len >= 2 && strncmp (v, "W/", 2) == 0) {
    v += 2;
    len -= 2;                   /* len >= 2 */
  }
  return plen == len && memcmp (pinned, v, len) == 0;
}

/* An open request keeps the last value of a validator it may send back
 * (is_token_text). */
static void
keep_validator (char **slot, const char *v, size_t len, bool allow_space)
{
  if (!is_token_text (v, len, allow_space))
    return;
  free (*slot);
  *slot = strndup (v, len);
  if (*slot == NULL)
    fatal_errno ("malloc");
}

/* Days from 1970-01-01 to year-month-day (proleptic Gregorian; the
 * year is 1970 .. 9999, checked by the caller). */
static int64_t
days_from_civil (int64_t y, unsigned m, unsigned d)
{
  int64_t era;
  unsigned yoe, doy, doe;

  y -= m <= 2;
  era = y / 400;                            /* y >= 1969 */
  yoe = (unsigned) (y - era * 400);
  doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t) doe - 719468;
}

/* An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 5.6.7) as
 * seconds since the epoch, or -1.  The obsolete forms are not taken: a
 * Retry-After in one is ignored (the usual backoff applies). */
static int64_t
parse_http_date (const char *v, size_t len)
{
  static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  uint64_t day, year, hh, mm, ss;
  unsigned m;

  if (len != 29 || v[3] != ',' || v[4] != ' ' || v[7] != ' ' || v[11] != ' ' ||
      v[16] != ' ' || v[19] != ':' || v[22] != ':' || memcmp (v + 25, " GMT", 4) != 0 ||
      !parse_decimal (v + 5, 2, &day) || !parse_decimal (v + 12, 4, &year) ||
      !parse_decimal (v + 17, 2, &hh) || !parse_decimal (v + 20, 2, &mm) ||
      !parse_decimal (v + 23, 2, &ss))
    return -1;
  for (m = 0; m < 12; m++)
    if (memcmp (v + 8, months + 3 * m, 3) == 0)
      break;
  if (m == 12 || day < 1 || day > 31 || year < 1970 || hh > 23 || mm > 59 || ss > 60)
    return -1;
  return days_from_civil ((int64_t) year, m + 1, (unsigned) day) * 86400 +
    (int64_t) (hh * 3600 + mm * 60 + ss);
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3), as
 * milliseconds from now, at most RETRY_AFTER_MAX_MS; -1 if unusable. */
static int64_t
parse_retry_after (const char *v, size_t len)
{
  uint64_t seconds;
  int64_t when;
  struct timespec now;

  if (parse_decimal (v, len, &seconds))
    return seconds >= RETRY_AFTER_MAX_MS / 1000 ? RETRY_AFTER_MAX_MS
                                                : (int64_t) seconds * 1000;
  when = parse_http_date (v, len);
  if (when < 0 || clock_gettime (CLOCK_REALTIME, &now) == -1)
    return -1;
  if (when <= now.tv_sec)
    return 0;
  if (when - now.tv_sec >= RETRY_AFTER_MAX_MS / 1000)
    return RETRY_AFTER_MAX_MS;
  return (when - now.tv_sec) * 1000;
}

enum header_name {
  HEADER_OTHER, HEADER_CONTENT_RANGE, HEADER_ETAG, HEADER_LAST_MODIFIED,
  HEADER_ACCEPT_RANGES, HEADER_CONTENT_ENCODING, HEADER_RETRY_AFTER,
};

static const struct {
  const char *name;
  enum header_name which;
} needed_headers[] = {
  { "Content-Range", HEADER_CONTENT_RANGE },
  { "ETag", HEADER_ETAG },
  { "Last-Modified", HEADER_LAST_MODIFIED },
  { "Accept-Ranges", HEADER_ACCEPT_RANGES },
  { "Content-Encoding", HEADER_CONTENT_ENCODING },
  { "Retry-After", HEADER_RETRY_AFTER },
};

static enum header_name
header_name (const char *name, size_t len)
{
  size_t i;

  for (i = 0; i < sizeof needed_headers / sizeof needed_headers[0]; i++)
    if (strlen (needed_headers[i].name) == len &&
        strncasecmp (name, needed_headers[i].name, len) == 0)
      return needed_headers[i].which;
  return HEADER_OTHER;
}

const char *
header_value (const char *line, size_t len, size_t name_len, size_t *value_len)
{
  const char *value = line + name_len + 1;
  size_t n = len - name_len - 1;            /* the colon is inside the line */

  /* Trim optional whitespace on both sides; each pass drops one byte. */
  while (n > 0 && (value[0] == ' ' || value[0] == '\t')) {
    value++;
    n--;
  }
  while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
    n--;
  *value_len = n;
  return value;
}

void
web_reply_reset (struct web_reply *r, const struct web_request *req)
{
  struct web_request copy = *req;   /* req may point into r */

  free (r->etag);
  free (r->last_modified);
  memset (r, 0, sizeof *r);
  r->req = copy;
  r->retry_after_ms = -1;
}

PRINTF_LIKE (2, 3) void
web_reply_problem (struct web_reply *r, const char *fmt, ...)
{
  va_list ap;

  if (r->problem[0] != '\0')    /* the first problem is the cause */
    return;
  va_start (ap, fmt);
  vsnprintf (r->problem, sizeof r->problem, fmt, ap);
  va_end (ap);
}

static bool
is_interim_status (long status)
{
  return status >= 100 && status <= 199 && status != 101;
}

bool
web_reply_interim (const struct web_reply *r)
{
  return is_interim_status (r->status);
}

/* The status of a status line without its line end, "HTTP/" VERSION SP
 * 3DIGIT [SP reason] (libcurl writes "HTTP/2 200" for HTTP/2), or 0. */
static long
parse_status (const char *line, size_t len)
{
  const char *sp = memchr (line, ' ', len);
  size_t at;

  if (sp == NULL)
    return 0;
  at = (size_t) (sp - line) + 1;            /* the space is inside the line */
  if (len - at < 3 || (len - at > 3 && line[at + 3] != ' '))
    return 0;
  if (line[at] < '1' || line[at] > '9' || line[at + 1] < '0' || line[at + 1] > '9' ||
      line[at + 2] < '0' || line[at + 2] > '9')
    return 0;
  return (line[at] - '0') * 100 + (line[at + 1] - '0') * 10 + (line[at + 2] - '0');
}

/* A status line: a new response to the same request.  What the previous
 * response said goes (web_reply_reset); the request's problem and its
 * interim replies in a row stay.  A refused reply stays as it is: the
 * first problem is the cause. */
static void
response_begins (struct web_reply *r, long status)
{
  unsigned interim = is_interim_status (r->status) ? r->interim : 0;

  if (r->problem[0] != '\0')
    return;
  web_reply_reset (r, &r->req);
  r->status = status;
  r->interim = interim;
  /* Counted per request, whatever the segments they came in: each one
   * lets a server hold the request longer (and none moves a deadline). */
  if (is_interim_status (status) && ++r->interim > MAX_INTERIM_RESPONSES)
    web_reply_problem (r, "more than %u interim (1xx) replies", MAX_INTERIM_RESPONSES);
}

/* One header line of the response, without its line end. */
static void
header_line (struct web_reply *r, const char *line, size_t len)
{
  const char *colon, *value;
  size_t name_len, value_len;
  enum header_name which;
  bool open = r->req.kind != WEB_REQUEST_RANGE;

  colon = memchr (line, ':', len);
  if (colon == NULL)
    return;                     /* the blank line, or not a header */
  name_len = (size_t) (colon - line);
  which = header_name (line, name_len);
  if (which == HEADER_OTHER)
    return;
  if (len > MAX_HEADER_LINE) {
    web_reply_problem (r, "the server sent a %.*s header longer than %u bytes",
                       (int) name_len, line, MAX_HEADER_LINE);
    return;
  }
  value = header_value (line, len, name_len, &value_len);

  switch (which) {
  case HEADER_CONTENT_RANGE:
    quote_for_log (r->content_range_text, sizeof r->content_range_text,
                   value, value_len);
    if (r->have_content_range)
      r->content_range_repeated = true;
    else if (!parse_content_range (value, value_len, r))
      r->content_range_bad = true;
    r->have_content_range = true;
    break;
  case HEADER_ETAG:
    if (open)
      keep_validator (&r->etag, value, value_len, false);
    else if (r->req.etag != NULL && !etag_equal (r->req.etag, value, value_len)) {
      r->etag_differs = true;
      quote_for_log (r->validator_text, sizeof r->validator_text, value, value_len);
    }
    break;
  case HEADER_LAST_MODIFIED:
    if (open)
      keep_validator (&r->last_modified, value, value_len, true);
    else if (r->req.last_modified != NULL &&
             (strlen (r->req.last_modified) != value_len ||
              memcmp (r->req.last_modified, value, value_len) != 0)) {
      r->last_modified_differs = true;
      quote_for_log (r->validator_text, sizeof r->validator_text, value, value_len);
    }
    break;
  case HEADER_ACCEPT_RANGES:
    r->accept_ranges = parse_accept_ranges (value, value_len);
    break;
  case HEADER_CONTENT_ENCODING:
    /* Anything but identity is refused (check_identity). */
    if (!(value_len == 8 && strncasecmp (value, "identity", 8) == 0)) {
      r->content_encoded = true;
      quote_for_log (r->content_encoding_text, sizeof r->content_encoding_text,
                     value, value_len);
    }
    break;
  case HEADER_RETRY_AFTER:
    r->retry_after_ms = parse_retry_after (value, value_len);
    break;
  case HEADER_OTHER:
    break;
  }
}

/* libcurl takes a bare LF for a line end as readily as CRLF, also mixed
 * in one reply.  A mix means a broken or tampered reply, and it can move
 * where the body starts: "Content-Length: N\n\r\n\r\n" ends the header
 * section at the bare LF's blank line, and the body then starts with
 * "\r\n", N bytes that are not the range's.  So every line of a response
 * must end as its status line does (the direct reads' parser leaves any
 * bare LF to libcurl). */
static void
check_line_end (struct web_reply *r, const char *line, size_t len)
{
  int ends;

  if (len == 0 || line[len - 1] != '\n')
    return;                     /* the last line of a header section cut short */
  ends = len >= 2 && line[len - 2] == '\r' ? LINE_ENDS_CRLF : LINE_ENDS_LF;
  if (r->line_ends == LINE_ENDS_UNSEEN)
    r->line_ends = ends;
  else if ((int) r->line_ends != ends)
    web_reply_problem (r, "the reply mixes CRLF and bare LF line ends, so where "
                       "its body starts is not certain");
}

bool
web_reply_line (struct web_reply *r, const char *line, size_t len)
{
  size_t n = len;

  /* Each pass drops one byte of the line ending. */
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
    n--;
  if (n >= 5 && memcmp (line, "HTTP/", 5) == 0)
    response_begins (r, parse_status (line, n));
  else
    header_line (r, line, n);
  check_line_end (r, line, len);
  return r->problem[0] == '\0';
}

/* We send no Accept-Encoding, so only identity may come back: a
 * compressed body's bytes are not the object's bytes. */
static bool
check_identity (struct web_reply *r)
{
  if (!r->content_encoded)
    return true;
  web_reply_problem (r, "the server sent an encoded body (Content-Encoding: %s) "
                     "though none was asked for", r->content_encoding_text);
  return false;
}

/* Is this reply the range asked for?  Sets the problem if not. */
static bool
check_range (struct web_reply *r)
{
  const struct web_request *req = &r->req;
  uint64_t last = req->offset + req->length - 1; /* length >= 1 */

  if (r->status != 206) {
    if (r->status == 200)
      web_reply_problem (r, "the server sent 200 instead of 206: it ignored the "
                         "Range header");
    else if (r->status == 412) {
      web_reply_problem (r, "the object changed on the server (HTTP 412 "
                         "Precondition Failed)");
      r->object_changed = true;
    }
    else if (r->status >= 300 && r->status < 400)
      web_reply_problem (r, "the server answered with a redirect (HTTP %ld); "
                         "redirects are followed only when the export is opened",
                         r->status);
    else {
      web_reply_problem (r, "HTTP status %ld instead of 206", r->status);
      /* The first problem, and about the status alone. */
      r->transient_status = r->status == 408 || r->status == 429 || r->status == 500 ||
        r->status == 502 || r->status == 503 || r->status == 504;
    }
    return false;
  }
  if (!r->have_content_range) {
    web_reply_problem (r, "the 206 reply has no Content-Range header");
    return false;
  }
  if (r->content_range_repeated) {
    web_reply_problem (r, "the reply has more than one Content-Range header");
    return false;
  }
  if (r->content_range_bad || r->content_range_unsatisfied) {
    web_reply_problem (r, "unusable Content-Range \"%s\"", r->content_range_text);
    return false;
  }
  if (r->range_first != req->offset || r->range_last != last) {
    web_reply_problem (r, "Content-Range %s does not match the requested %" PRIu64
                       "-%" PRIu64, r->content_range_text, req->offset, last);
    return false;
  }
  if (r->range_total_known && r->range_total != req->size) {
    web_reply_problem (r, "the object changed: Content-Range %s, but it had %" PRIu64
                       " bytes when the export was opened",
                       r->content_range_text, req->size);
    r->object_changed = true;
    return false;
  }
  /* A total of "*" is allowed (RFC 9110), but then only a validator
   * pinned at open, sent as a precondition, says this is still the same
   * object; with none, the reply could be another object's bytes. */
  if (!r->range_total_known && req->etag == NULL && req->last_modified == NULL) {
    web_reply_problem (r, "Content-Range %s does not give the object's size, and the "
                       "server gave no ETag or Last-Modified when the export was "
                       "opened: nothing shows the object is still the same",
                       r->content_range_text);
    return false;
  }
  if (r->etag_differs) {
    web_reply_problem (r, "the object changed: ETag %s, was %s", r->validator_text,
                       req->etag);
    r->object_changed = true;
    return false;
  }
  if (r->last_modified_differs) {
    web_reply_problem (r, "the object changed: Last-Modified %s, was %s",
                       r->validator_text, req->last_modified);
    r->object_changed = true;
    return false;
  }
  return check_identity (r);
}

bool
web_reply_check (struct web_reply *r)
{
  bool ok;

  if (r->checked)
    return true;
  if (r->problem[0] != '\0')
    return false;               /* found in the headers */
  if (web_reply_interim (r)) {
    /* libcurl gives no body before the final response; a caller that
     * asks now has a reply that ended early. */
    web_reply_problem (r, "the reply ended after an interim (HTTP %ld) response",
                       r->status);
    return false;
  }
  switch (r->req.kind) {
  case WEB_REQUEST_RANGE:
    ok = check_range (r);
    break;
  case WEB_REQUEST_PROBE:
    /* Only a 206 may bring a body; web_reply_probe says what else came. */
    ok = r->status == 206;
    break;
  case WEB_REQUEST_HEAD:
  default:
    ok = true;
    break;
  }
  r->checked = ok;
  return ok;
}

bool
web_reply_transient (const struct web_reply *r)
{
  return r->transient_status;
}

enum web_head_result
web_reply_head (const struct web_reply *r, int64_t length)
{
  if (r->accept_ranges == RANGES_NONE)
    return WEB_HEAD_NO_RANGES;
  /* Length 0 is confirmed by the probe: some servers say 0 for any HEAD. */
  if (r->accept_ranges != RANGES_BYTES || length <= 0 || r->content_encoded)
    return WEB_HEAD_PROBE;
  return WEB_HEAD_SETTLED;
}

enum web_probe_result
web_reply_probe (struct web_reply *r, size_t received, bool empty_200, uint64_t *size)
{
  if (r->problem[0] != '\0')
    return WEB_PROBE_BAD;
  if (r->status == 416 && r->content_range_unsatisfied && !r->content_range_bad &&
      r->range_total_known && r->range_total == 0)
    /* Nothing is satisfiable in an empty object: an export of size 0. */
    *size = 0;
  else if (r->status == 200 && empty_200)
    /* Some servers (nginx) answer a range of an empty object with an
     * empty 200: nothing can be read from it, so no range is needed. */
    *size = 0;
  else if (r->status != 206)
    return WEB_PROBE_STATUS;
  else if (!r->have_content_range || r->content_range_bad ||
           r->content_range_repeated || r->content_range_unsatisfied ||
           r->range_first != 0 || r->range_last != 0 || !r->range_total_known) {
    web_reply_problem (r, "the reply to a request for bytes 0-0 has the "
                       "Content-Range \"%s\"; nbdcurld needs \"bytes 0-0/SIZE\"",
                       r->have_content_range ? r->content_range_text : "(none)");
    return WEB_PROBE_BAD;
  }
  else if (received != 1) {
    web_reply_problem (r, "the reply to a request for bytes 0-0 had %zu bytes",
                       received);
    return WEB_PROBE_BAD;
  }
  else
    *size = r->range_total;
  return check_identity (r) ? WEB_PROBE_SIZE : WEB_PROBE_BAD;
}

void
web_reply_take_validators (struct web_reply *r, char **etag, char **last_modified)
{
  free (*etag);
  free (*last_modified);
  *etag = r->etag;
  *last_modified = r->last_modified;
  r->etag = r->last_modified = NULL;
}
