/*
 * direct-head-parse.c: a direct read's reply header section, line by
 * line (see direct-head-parse.h).  The status line and the lines that
 * frame the body (Content-Length, Transfer-Encoding, Connection) are
 * this parser's; every other line goes to the reply checker.
 */
#include <string.h>
#include <strings.h>

#include "direct-head-parse.h"
#include "wire.h"

/* How much of a status line that is none a problem quotes. */
#define SHOWN_STATUS_MAX 64

static bool
is_token_char (char c)
{
  /* strchr finds the terminating NUL too: a NUL byte is no token. */
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
    (c != '\0' && strchr ("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Does a comma-separated header value hold this token? */
static bool
value_has_token (const char *v, size_t len, const char *token)
{
  size_t tlen = strlen (token), i = 0;

  while (i < len) {
    size_t start;
    while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    start = i;
    while (i < len && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
      i++;
    if (i - start == tlen && strncasecmp (v + start, token, tlen) == 0)
      return true;
  }
  return false;
}

/* "HTTP/" DIGIT "." DIGIT SP 3DIGIT [SP reason], line_len bytes without
 * its CRLF. */
static bool
is_status_line (const char *s, size_t line_len)
{
  return !(line_len < 12 || memcmp (s, "HTTP/", 5) != 0 ||
           s[5] < '0' || s[5] > '9' || s[6] != '.' || s[7] < '0' || s[7] > '9' ||
           s[8] != ' ' || s[9] < '0' || s[9] > '9' || s[10] < '0' || s[10] > '9' ||
           s[11] < '0' || s[11] > '9' || (line_len > 12 && s[12] != ' '));
}

/* The section's first line, line_len bytes and its CRLF (raw_len in
 * all): an HTTP/1.x status line, which begins a response. */
static enum head_parse
status_line (struct web_reply *reply, const char *s, size_t line_len, size_t raw_len,
             struct reply_framing *framing)
{
  unsigned major, minor;

  if (!is_status_line (s, line_len)) {
    char shown[SHOWN_STATUS_MAX];
    size_t i, n = line_len < sizeof shown - 1 ? line_len : sizeof shown - 1;
    for (i = 0; i < n; i++)
      shown[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    shown[n] = '\0';
    web_reply_problem (reply, "the reply does not start with an HTTP "
                       "status line: \"%s\"", shown);
    return HEAD_PARSE_FAIL;
  }
  major = (unsigned) (s[5] - '0');
  minor = (unsigned) (s[7] - '0');
  if (major != 1) {
    web_reply_problem (reply, "the server answered in HTTP/%u.%u", major, minor);
    return HEAD_PARSE_FAIL;
  }
  /* HTTP/1.0 keeps no connection unless asked, and we do not ask. */
  framing->conn_close = minor == 0;
  if (!web_reply_line (reply, s, raw_len))  /* a response begins */
    return HEAD_PARSE_FAIL;
  return HEAD_PARSE_OK;
}

/* A Content-Length: one number, said once or said the same again. */
static enum head_parse
content_length (struct web_reply *reply, const char *value, size_t value_len,
                struct reply_framing *framing, const char **why)
{
  uint64_t v;

  if (!parse_decimal (value, value_len, &v)) {
    *why = "the reply's Content-Length is not a number of 1 to 19 digits";
    return HEAD_PARSE_GIVE_UP;
  }
  if (framing->length != UINT64_MAX && framing->length != v) {
    web_reply_problem (reply, "the reply has two different "
                       "Content-Length headers");
    return HEAD_PARSE_FAIL;
  }
  framing->length = v;
  return HEAD_PARSE_OK;
}

/* A header line after the status line, line_len bytes and its CRLF
 * (raw_len in all), not the blank one. */
static enum head_parse
header_line (struct web_reply *reply, const char *s, size_t line_len, size_t raw_len,
             struct reply_framing *framing, const char **why)
{
  const char *colon = memchr (s, ':', line_len);
  size_t name_len, value_len, i;
  const char *value;

  if (s[0] == ' ' || s[0] == '\t') {
    *why = "the reply folds a header over lines";
    return HEAD_PARSE_GIVE_UP;
  }
  if (colon == NULL || colon == s) {
    web_reply_problem (reply, "the reply has a header line without a name");
    return HEAD_PARSE_FAIL;
  }
  name_len = (size_t) (colon - s);
  for (i = 0; i < name_len; i++)
    if (!is_token_char (s[i])) {
      web_reply_problem (reply, "the reply has a header name with a "
                         "forbidden byte");
      return HEAD_PARSE_FAIL;
    }
  value = header_value (s, line_len, name_len, &value_len);
  if (name_len == 14 && strncasecmp (s, "Content-Length", 14) == 0)
    return content_length (reply, value, value_len, framing, why);
  if (name_len == 17 && strncasecmp (s, "Transfer-Encoding", 17) == 0) {
    *why = "the reply has a Transfer-Encoding";
    return HEAD_PARSE_GIVE_UP;
  }
  if (name_len == 10 && strncasecmp (s, "Connection", 10) == 0) {
    if (value_has_token (value, value_len, "close"))
      framing->conn_close = true;
    return HEAD_PARSE_OK;
  }
  return web_reply_line (reply, s, raw_len) ? HEAD_PARSE_OK : HEAD_PARSE_FAIL;
}

enum head_parse
parse_header_section (struct web_reply *reply, const uint8_t *data, size_t len,
                      struct reply_framing *framing, const char **why)
{
  struct reader r;
  bool first = true;

  framing->length = UINT64_MAX;
  framing->conn_close = false;
  reader_init (&r, data, len);
  /* Each pass consumes one line including its CRLF. */
  while (reader_remaining (&r) > 0) {
    const uint8_t *rest = r.data + r.pos, *line;
    const uint8_t *lf = memchr (rest, '\n', reader_remaining (&r));
    size_t line_len;
    enum head_parse result;

    if (lf == NULL)
      break;                    /* cannot happen: the section ends in CRLF */
    line_len = (size_t) (lf - rest) + 1;
    if (reader_get_span (&r, &line, line_len) == -1)
      break;
    if (line_len < 2 || line[line_len - 2] != '\r') {
      *why = "a line of the reply ends in a bare LF";
      return HEAD_PARSE_GIVE_UP;
    }
    if (first)
      result = status_line (reply, (const char *) line, line_len - 2, line_len, framing);
    else if (line_len == 2)
      break;                    /* the blank line: the end */
    else
      result = header_line (reply, (const char *) line, line_len - 2, line_len,
                            framing, why);
    first = false;
    if (result != HEAD_PARSE_OK)
      return result;
  }
  return HEAD_PARSE_OK;
}

/* An empty line ending in a bare LF ends the section too, so that a
 * server using them is told apart (the parser leaves it to libcurl)
 * instead of waited for. */
size_t
header_section_end (const uint8_t *buf, size_t len, size_t *scanned)
{
  size_t i;

  /* From where the last search stopped (less the two bytes an end can
   * span), so a server sending a byte at a time costs linear work. */
  for (i = *scanned > 2 ? *scanned - 2 : 1; i < len; i++)
    if (buf[i] == '\n' &&
        (buf[i - 1] == '\n' ||
         (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')))
      return i + 1;
  *scanned = len;
  return 0;
}
