/*
 * fetcher-trace.c: -D curl.verbose=1, a trace of what a fetcher says to
 * web servers and hears back, through the log, with secrets masked.
 *
 * nbdkit's curl plugin hands libcurl's verbose output to its debug log
 * as it is, credentials and tokens included.  Here a trace goes to the
 * same log as everything else (a journal that other people read), so
 * what could be a secret never reaches it:
 *   - request headers: only the value of a header on a short list of
 *     ones nbdcurld itself sends and that hold nothing secret is shown;
 *     every other value (Authorization, Cookie, header= lines, a header
 *     script's tokens, Proxy-Authorization) becomes "<masked>";
 *   - reply headers: Set-Cookie values are masked;
 *   - anywhere, a query string (presigned URLs carry their signature
 *     there) becomes "?...";
 *   - anywhere, the user information of a URL ("http://alice:pw@host",
 *     as libcurl's "Issue another request to this URL" line after a
 *     redirect shows it, or a Location header a server sends back), and
 *     whatever stands before an '@' in a word without a scheme
 *     ("alice:pw@host"), becomes "<masked>".
 * libcurl's informational text is shown with these masks, and
 * body bytes and TLS records are never shown.  The plain-http reads that
 * bypass libcurl (fetcher-direct.c) trace their request and reply header
 * sections through the same masks.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "fetcher-http.h"

/* Longest line shown; the rest is cut (a trace is for people). */
#define TRACE_LINE_MAX 512

/* Request headers whose values are shown. */
static const char *const shown_request_headers[] = {
  "Host", "Range", "User-Agent", "Accept", "Accept-Encoding", "If-Match",
  "If-Unmodified-Since", "If-Range", "Connection", "Proxy-Connection",
  "Content-Length", "Expect", "TE", "Upgrade", "HTTP2-Settings",
};

/* Where a word ends, for the masks: URLs in libcurl's text stand between
 * quotes, in parentheses or after a space. */
static bool
word_end (char c)
{
  return c == ' ' || c == '\'' || c == '"' || c == '<' || c == '>' || c == '(' ||
         c == ')' || c == ',' || c == '\t';
}

/* Copy line (len bytes) into out (size bytes, at least 1), the user
 * information of every word that has an '@' replaced by "<masked>": from
 * after its "://" if it has one, else from the word's start, to its last
 * '@'.  Returns the length copied (cut where out is full). */
static size_t
mask_userinfo (const char *line, size_t len, char *out, size_t size)
{
  static const char masked[] = "<masked>";
  size_t i = 0, o = 0;

  while (i < len && o + 1 < size) {
    size_t start = i, end = i, at = len, j, from;

    if (word_end (line[i])) {
      out[o++] = line[i++];
      continue;
    }
    while (end < len && !word_end (line[end]))
      end++;
    for (j = start; j < end; j++)
      if (line[j] == '@')
        at = j;
    if (at == len) {
      for (; i < end && o + 1 < size; i++)
        out[o++] = line[i];
      continue;
    }
    /* A scheme: letters, digits, '+', '-' and '.' from the word's start,
     * then "://".  Anything else before the '@' is user information. */
    from = start;
    for (j = start; j < at && (isalnum ((unsigned char) line[j]) || line[j] == '+' ||
                               line[j] == '-' || line[j] == '.'); j++)
      ;
    if (j > start && j + 3 <= at && memcmp (line + j, "://", 3) == 0)
      from = j + 3;
    for (; i < from && o + 1 < size; i++)
      out[o++] = line[i];
    if (from < at) {
      for (j = 0; j < sizeof masked - 1 && o + 1 < size; j++)
        out[o++] = masked[j];
    }
    for (i = at; i < end && o + 1 < size; i++)
      out[o++] = line[i];
  }
  out[o] = '\0';
  return o;
}

static bool
header_named (const char *line, size_t len, const char *name)
{
  size_t n = strlen (name);
  return len > n && line[n] == ':' && strncasecmp (line, name, n) == 0;
}

/* Copy line (len bytes, no line end) into out, masking what it must:
 * kind '>' a request line or header, '<' a reply's, '*' libcurl's text. */
static void
mask_line (char kind, const char *raw, size_t raw_len, char *out, size_t size)
{
  char line[TRACE_LINE_MAX + 8];
  size_t len = mask_userinfo (raw, raw_len, line, sizeof line), i, o = 0;
  bool is_header = false, masked_value = false;
  const char *colon;

  /* Only printable bytes reach the log, a header's name included. */
  for (i = 0; i < len; i++)
    if ((unsigned char) line[i] < 0x20 || (unsigned char) line[i] >= 0x7f)
      line[i] = '?';
  colon = memchr (line, ':', len);

  /* A header line (not the request or status line, which have no colon
   * before their first space). */
  if (kind != '*' && colon != NULL && memchr (line, ' ', (size_t) (colon - line)) == NULL) {
    is_header = true;
    if (kind == '>') {
      masked_value = true;
      for (i = 0; i < sizeof shown_request_headers / sizeof shown_request_headers[0]; i++)
        if (header_named (line, len, shown_request_headers[i]))
          masked_value = false;
    }
    else
      masked_value = header_named (line, len, "Set-Cookie");
  }
  if (is_header && masked_value) {
    snprintf (out, size, "%.*s: <masked>", (int) (colon - line), line);
    return;
  }
  for (i = 0; i < len && o + 4 < size; i++) {
    unsigned char c = (unsigned char) line[i];
    if (c == '?') {
      /* A query string, to the next space or quote: "?...". */
      memcpy (out + o, "?...", 4);
      o += 4;
      while (i + 1 < len && line[i + 1] != ' ' && line[i + 1] != '\'' &&
             line[i + 1] != '"' && line[i + 1] != '>')
        i++;
      continue;
    }
    out[o++] = (char) c;
  }
  out[o] = '\0';
}

void
fetcher_trace_block (char kind, const char *data, size_t size)
{
  const char *p = data, *end = data + size;

  while (p < end) {
    const char *nl = memchr (p, '\n', (size_t) (end - p));
    size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
    char out[TRACE_LINE_MAX + 8];

    if (len > 0 && p[len - 1] == '\r')
      len--;
    if (len > 0) {
      mask_line (kind, p, len < TRACE_LINE_MAX ? len : TRACE_LINE_MAX, out, sizeof out);
      log_trace ("export \"%s\": %c %s", http.f->export_name, kind, out);
    }
    if (nl == NULL)
      break;
    p = nl + 1;
  }
}

int
fetcher_curl_trace (CURL *easy, curl_infotype type, char *data, size_t size, void *userp)
{
  (void) easy;
  (void) userp;
  switch (type) {
  case CURLINFO_TEXT:
    fetcher_trace_block ('*', data, size);
    break;
  case CURLINFO_HEADER_OUT:
    fetcher_trace_block ('>', data, size);
    break;
  case CURLINFO_HEADER_IN:
    fetcher_trace_block ('<', data, size);
    break;
  default:
    break;                      /* bodies and TLS records: never */
  }
  return 0;
}
