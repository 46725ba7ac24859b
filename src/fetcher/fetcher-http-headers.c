/*
 * fetcher-http-headers.c: the header lists libcurl's requests send, and
 * the direct reads' block of the same lines: the configuration's header=
 * lines and cookie= (or the scripts' values), and the preconditions that
 * pin range reads to the object seen at open.  A redirect to another
 * origin drops the credentials from the reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fetcher-curl.h"

/* Conditional headers for range reads, so that a server that knows the
 * object changed says so (412) instead of sending other bytes. */
void
build_preconditions (void)
{
  char *line = NULL;
  struct curl_slist *list;

  /* If-Match needs a strong ETag (RFC 9110 13.1.1). */
  if (http.etag != NULL && strncmp (http.etag, "W/", 2) != 0) {
    if (asprintf (&line, "If-Match: %s", http.etag) == -1)
      fatal_errno ("malloc");
  }
  else if (http.last_modified != NULL) {
    if (asprintf (&line, "If-Unmodified-Since: %s", http.last_modified) == -1)
      fatal_errno ("malloc");
  }
  if (line == NULL)
    return;
  list = curl_slist_append (http.preconditions, line);
  if (list == NULL)
    fatal ("libcurl: out of memory");
  http.preconditions = list;
  http.precondition = line;
}

/* Each "Name: value\r\n" line of block onto a libcurl header list. */
static struct curl_slist *
append_lines (struct curl_slist *list, const char *block)
{
  const char *p = block, *end;

  while ((end = strstr (p, "\r\n")) != NULL) {
    char *line = strndup (p, (size_t) (end - p));
    if (line == NULL)
      fatal_errno ("strndup");
    list = curl_slist_append (list, line);
    explicit_bzero (line, strlen (line));     /* a cookie, a token */
    free (line);
    if (list == NULL)
      fatal ("libcurl: out of memory");
    p = end + 2;
  }
  return list;
}

/* The header= lines and the cookie (as a Cookie header) as one block of
 * "Name: value\r\n" lines; without credentials, no Authorization or
 * Cookie line.  The caller frees it. */
static char *
header_block (bool credentials)
{
  const struct fetcher_config *cfg = http.f->cfg;
  /* The scripts' values, when header-script= or cookie-script= give them. */
  const char *headers = script_headers (cfg), *cookie = script_cookie (cfg);
  size_t cap = strlen (headers) + strlen (cookie) + sizeof "Cookie: \r\n";
  char *block = malloc (cap), *out = block;
  const char *p = headers;

  if (block == NULL)
    fatal_errno ("malloc");
  while (*p) {
    const char *end = strstr (p, "\r\n");
    size_t len = end ? (size_t) (end - p) + 2 : strlen (p);
    if (credentials || (strncasecmp (p, "authorization:", 14) != 0 &&
                        strncasecmp (p, "cookie:", 7) != 0)) {
      memcpy (out, p, len);
      out += len;
    }
    p += len;
  }
  if (cookie[0] != '\0' && credentials)
    out += sprintf (out, "Cookie: %s\r\n", cookie);
  *out = '\0';
  return block;
}

/* The open (HEAD or probe) sends them all: libcurl itself keeps
 * Authorization and Cookie headers from another origin a redirect leads
 * to.  Range reads send them as the open did, except that after a
 * redirect to another origin no Authorization or Cookie header goes (as
 * with --auth-user); the direct reads put the block into their requests
 * as it is. */
void
build_open_headers (void)
{
  char *block = header_block (true);
  http.open_headers = append_lines (NULL, block);
  explicit_bzero (block, strlen (block));
  free (block);
}

void
build_read_headers (void)
{
  http.read_headers = header_block (http.range_same_origin);
  http.preconditions = append_lines (http.preconditions, http.read_headers);
}

/* New values from the scripts, taken while no transfer runs (libcurl
 * holds pointers to the lists of its transfers): every list and the
 * direct reads' request are made again from them. */
void
rebuild_headers (void)
{
  char *old_read = http.read_headers;

  /* FTP reads send no header (and the handles still point at the open's
   * list): nothing to make again. */
  if (!http.range_is_http)
    return;
  curl_slist_free_all (http.open_headers);
  build_open_headers ();
  {
    curl_slist_free_all (http.preconditions);
    http.preconditions = NULL;
    free (http.precondition);
    http.precondition = NULL;
    build_preconditions ();
    build_read_headers ();
    if (old_read) {
      explicit_bzero (old_read, strlen (old_read));
      free (old_read);
    }
    direct_headers_changed ();
  }
}
