/*
 * fetcher-trace.c: -D curl.verbose=1, a trace of what a fetcher says to
 * web servers and hears back, through the log, with secrets masked.
 *
 * nbdkit's curl plugin hands libcurl's verbose output to its debug log
 * as it is, credentials and tokens included.  Here a trace goes to the
 * same log as everything else (a journal that other people read), so
 * what could be a secret never reaches it:
 *   - request headers, as header lines and as libcurl's text names them
 *     over HTTP/2 ("h2h3 [name: value]", "[HTTP/2] [1] [name: value]"):
 *     only the value of a header on a short list of ones nbdcurld itself
 *     sends and that hold nothing secret is shown; every other value
 *     (Authorization, Cookie, header= lines, a header script's tokens,
 *     Proxy-Authorization) becomes "<masked>";
 *   - reply headers: Set-Cookie values are masked;
 *   - in libcurl's text, whatever follows "Authorization:", "Cookie:"
 *     (Proxy- and Set- forms included) and the value of a cookie it names
 *     ("Added cookie NAME="VALUE" for domain");
 *   - anywhere, a query string (presigned URLs carry their signature
 *     there) becomes "?...";
 *   - anywhere, the user information of a URL ("http://alice:pw@host",
 *     as libcurl's "Issue another request to this URL" line after a
 *     redirect shows it, or a Location header a server sends back), and
 *     whatever stands before an '@' in a word without a scheme
 *     ("alice:pw@host"), becomes "<masked>".
 * A line is masked whole and only then cut to TRACE_LINE_MAX, so that a
 * secret whose end lies past the cut is recognised all the same; a URL
 * with a password that libcurl's text itself cut before its '@' ends the
 * line, and is masked from its "://" on.  libcurl's informational text is
 * shown with these masks, and body bytes and TLS records are never shown.  The plain-http reads that
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

/* A word that ends the line and is a URL cut before its '@' could be:
 * "scheme://" then bytes with a ':' and no '/' (a user name and the
 * start of a password; also, masked for nothing, a bare host:port at
 * the line's end). */
static bool
cut_url_at_end (const char *word, size_t len)
{
  const char *sep = memmem (word, len, "://", 3);
  const char *authority, *end = word + len;

  if (sep == NULL)
    return false;
  authority = sep + 3;
  return memchr (authority, ':', (size_t) (end - authority)) != NULL &&
         memchr (authority, '/', (size_t) (end - authority)) == NULL;
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
    bool cut = false;

    if (word_end (line[i])) {
      out[o++] = line[i++];
      continue;
    }
    while (end < len && !word_end (line[end]))
      end++;
    for (j = start; j < end; j++)
      if (line[j] == '@')
        at = j;
    if (at == len && end == len && cut_url_at_end (line + start, end - start))
      cut = true;               /* masked from its "://" to the end */
    if (at == len && !cut) {
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

/* Where libcurl's text of an HTTP/2 request header names the header
 * ("h2h3 [name: value]" in 7.88, "[HTTP/2] [STREAM] [name: value]"
 * later), or 0 when the line is not one. */
static size_t
http2_header_start (const char *line, size_t len)
{
  size_t i;

  if (len > 6 && memcmp (line, "h2h3 [", 6) == 0)
    return 6;
  if (len < 7 || memcmp (line, "[HTTP/", 6) != 0)
    return 0;
  for (i = 6; i < len && (isdigit ((unsigned char) line[i]) || line[i] == '.'); i++)
    ;
  if (len - i < 3 || memcmp (line + i, "] [", 3) != 0)
    return 0;
  for (i += 3; i < len && isdigit ((unsigned char) line[i]); i++)
    ;
  if (len - i < 4 || memcmp (line + i, "] [", 3) != 0)
    return 0;
  return i + 3;
}

/* What follows a cookie's value in libcurl's "Added cookie" text (the
 * value may hold quotes of its own). */
#define COOKIE_TEXT_TAIL "\" for domain "

/* Names after which the rest of a line of libcurl's text is a secret. */
static const char *const secret_in_text[] = { "authorization:", "cookie:" };

/* In libcurl's text: the end of "Authorization:" or "Cookie:" (any case,
 * any prefix such as Proxy- or Set-), or of "cookie NAME=\"" (the cookie
 * engine's "Added cookie"), at line + i; 0 when none starts there.
 * *to_end: the secret runs to the line's end (else to the quote). */
static size_t
secret_text_at (const char *line, size_t len, size_t i, bool *to_end)
{
  size_t k, j;

  for (k = 0; k < sizeof secret_in_text / sizeof secret_in_text[0]; k++) {
    size_t n = strlen (secret_in_text[k]);
    if (len - i >= n && strncasecmp (line + i, secret_in_text[k], n) == 0) {
      *to_end = true;
      return n;
    }
  }
  if (len - i > 7 && strncasecmp (line + i, "cookie ", 7) == 0) {
    for (j = i + 7; j < len && line[j] != '=' && line[j] != ' ' && line[j] != '"'; j++)
      ;
    if (j + 1 < len && line[j] == '=' && line[j + 1] == '"') {
      *to_end = false;
      return j + 2 - i;
    }
  }
  return 0;
}

/* Copy line (len bytes, no line end) into out, masking what it must:
 * kind '>' a request line or header, '<' a reply's, '*' libcurl's text. */
static void
mask_line (char kind, const char *raw, size_t raw_len, char *out, size_t size)
{
  char line[TRACE_LINE_MAX + 8];
  size_t len = mask_userinfo (raw, raw_len, line, sizeof line), i, o = 0, name = 0;
  bool is_header = false, masked_value = false, to_end;
  const char *colon;

  /* Only printable bytes reach the log, a header's name included. */
  for (i = 0; i < len; i++)
    if ((unsigned char) line[i] < 0x20 || (unsigned char) line[i] >= 0x7f)
      line[i] = '?';
  if (kind == '*' && (name = http2_header_start (line, len)) > 0)
    kind = '>';                 /* a request header, in libcurl's words */
  /* An HTTP/2 pseudo-header's name starts with its ':'. */
  colon = memchr (line + name + (line[name] == ':'), ':', len - name - (line[name] == ':'));

  /* A header line (not the request or status line, which have no colon
   * before their first space). */
  if (kind != '*' && colon != NULL && colon > line + name + (line[name] == ':') &&
      memchr (line + name, ' ', (size_t) (colon - line - name)) == NULL) {
    is_header = true;
    if (kind == '>') {
      masked_value = line[name] != ':';
      for (i = 0; i < sizeof shown_request_headers / sizeof shown_request_headers[0]; i++)
        if (header_named (line + name, len - name, shown_request_headers[i]))
          masked_value = false;
    }
    else
      masked_value = header_named (line, len, "Set-Cookie");
  }
  if (is_header && masked_value) {
    snprintf (out, size, "%.*s: <masked>%s", (int) (colon - line), line, name > 0 ? "]" : "");
    return;
  }
  for (i = 0; i < len && o + 4 < size; i++) {
    unsigned char c = (unsigned char) line[i];
    size_t n;

    if (kind == '*' && (i == 0 || !isalnum ((unsigned char) line[i - 1])) &&
        (n = secret_text_at (line, len, i, &to_end)) > 0) {
      const char *tail = to_end ? NULL : memmem (line + i + n, len - i - n, COOKIE_TEXT_TAIL,
                                                 strlen (COOKIE_TEXT_TAIL));
      const char *mask = to_end ? " <masked>" : "<masked>";
      if (o + n + strlen (mask) >= size)
        break;                  /* no room for the mask: the line ends here */
      memcpy (out + o, line + i, n);
      memcpy (out + o + n, mask, strlen (mask));
      o += n + strlen (mask);
      if (tail == NULL)
        break;                  /* the rest of the line is the secret */
      i = (size_t) (tail - line) - 1;
      continue;
    }
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
      mask_line (kind, p, len, out, sizeof out);
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
