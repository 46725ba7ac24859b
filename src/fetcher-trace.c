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
 *     there) becomes "?...".
 * libcurl's informational text is shown with query strings masked, and
 * body bytes and TLS records are never shown.  The plain-http reads that
 * bypass libcurl (fetcher-direct.c) trace their request and reply header
 * sections through the same masks.
 */
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

static bool
header_named (const char *line, size_t len, const char *name)
{
  size_t n = strlen (name);
  return len > n && line[n] == ':' && strncasecmp (line, name, n) == 0;
}

/* Copy line (len bytes, no line end) into out, masking what it must:
 * kind '>' a request line or header, '<' a reply's, '*' libcurl's text. */
static void
mask_line (char kind, const char *line, size_t len, char *out, size_t size)
{
  size_t i, o = 0;
  bool is_header = false, masked_value = false;
  const char *colon = memchr (line, ':', len);

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
    out[o++] = c >= 0x20 && c < 0x7f ? (char) c : '?';
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
