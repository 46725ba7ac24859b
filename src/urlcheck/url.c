/* url.c: see url.h.  Parsing is libcurl's URL API, so the fetcher and the
 * supervisor agree with libcurl itself about what a URL means. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "limits-strings.h"
#include "url.h"

static const struct {
  const char *scheme;
  enum url_kind kind;
} allowed_schemes[] = {
  { "http", URL_HTTP }, { "https", URL_HTTPS }, { "ftp", URL_FTP },
  { "ftps", URL_FTPS }, { "file", URL_FILE },
};

int
url_kind_is_readonly (enum url_kind kind)
{
  return kind != URL_FILE;
}

int
url_parse (const char *url, enum url_kind *kind, char **file_path,
           char *err, size_t errlen)
{
  CURLU *u = NULL;
  char *scheme = NULL, *host = NULL, *path = NULL;
  CURLUcode rc;
  size_t i;
  int ret = -1;

  *file_path = NULL;
  if (strlen (url) > MAX_URL_LENGTH) {
    snprintf (err, errlen, "URL is longer than %u bytes", MAX_URL_LENGTH);
    return -1;
  }
  u = curl_url ();
  if (u == NULL) {
    snprintf (err, errlen, "out of memory");
    return -1;
  }
  /* No CURLU_GUESS_SCHEME: "example.com/disk.img" must be an error, not a
   * guess, and no CURLU_NON_SUPPORT_SCHEME: only schemes libcurl has. */
  rc = curl_url_set (u, CURLUPART_URL, url, 0);
  if (rc != CURLUE_OK) {
    snprintf (err, errlen,
              "cannot parse the URL (%s): give a full URL such as "
              "https://host/disk.img or file:///path/disk.img",
              curl_url_strerror (rc));
    goto out;
  }
  if (curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
    snprintf (err, errlen, "the URL has no scheme");
    goto out;
  }
  for (i = 0; i < sizeof allowed_schemes / sizeof allowed_schemes[0]; i++)
    if (strcasecmp (scheme, allowed_schemes[i].scheme) == 0)
      break;
  if (i == sizeof allowed_schemes / sizeof allowed_schemes[0]) {
    snprintf (err, errlen,
              "the scheme \"%.32s\" is not served: use http, https, ftp, ftps or file",
              scheme);
    goto out;
  }
  *kind = allowed_schemes[i].kind;

  if (*kind == URL_FILE) {
    rc = curl_url_get (u, CURLUPART_HOST, &host, 0);
    if (rc == CURLUE_OK && host[0] != '\0' && strcasecmp (host, "localhost") != 0) {
      snprintf (err, errlen, "file: URLs must name a local path (file:///path), not a host");
      goto out;
    }
    /* Decoding %00 fails here, so the path cannot hide a NUL. */
    rc = curl_url_get (u, CURLUPART_PATH, &path, CURLU_URLDECODE);
    if (rc != CURLUE_OK || path[0] != '/') {
      snprintf (err, errlen, "file: URL has no usable absolute path");
      goto out;
    }
    *file_path = strdup (path);
    if (*file_path == NULL) {
      snprintf (err, errlen, "out of memory");
      goto out;
    }
  }
  else {
    rc = curl_url_get (u, CURLUPART_HOST, &host, 0);
    if (rc != CURLUE_OK || host[0] == '\0') {
      snprintf (err, errlen, "the URL has no host name");
      goto out;
    }
  }
  ret = 0;
 out:
  curl_free (scheme);
  curl_free (host);
  curl_free (path);
  curl_url_cleanup (u);
  return ret;
}

char *
url_for_log (const char *url)
{
  CURLU *u = curl_url ();
  char *part = NULL, *out = NULL;
  bool had_query = false;

  if (u == NULL || curl_url_set (u, CURLUPART_URL, url, 0) != CURLUE_OK)
    goto fallback;
  if (curl_url_get (u, CURLUPART_QUERY, &part, 0) == CURLUE_OK)
    had_query = true;
  curl_free (part);
  part = NULL;
  if (curl_url_set (u, CURLUPART_USER, NULL, 0) != CURLUE_OK ||
      curl_url_set (u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK ||
      curl_url_set (u, CURLUPART_OPTIONS, NULL, 0) != CURLUE_OK ||
      curl_url_set (u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK ||
      curl_url_set (u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_URL, &part, 0) != CURLUE_OK)
    goto fallback;
  if (asprintf (&out, "%s%s", part, had_query ? "?..." : "") == -1)
    out = NULL;
  curl_free (part);
  curl_url_cleanup (u);
  if (out)
    return out;
  return strdup ("(URL)");
 fallback:
  curl_url_cleanup (u);
  return strdup ("(unparsable URL)");
}

char *
url_without_userinfo (const char *url)
{
  CURLU *u = curl_url ();
  char *user = NULL, *password = NULL, *options = NULL, *part = NULL, *out = NULL;

  if (u == NULL || curl_url_set (u, CURLUPART_URL, url, 0) != CURLUE_OK)
    goto done;
  (void) curl_url_get (u, CURLUPART_USER, &user, 0);
  (void) curl_url_get (u, CURLUPART_PASSWORD, &password, 0);
  (void) curl_url_get (u, CURLUPART_OPTIONS, &options, 0);
  if (user == NULL && password == NULL && options == NULL)
    goto done;
  if (curl_url_set (u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
      curl_url_set (u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
      curl_url_set (u, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK &&
      curl_url_get (u, CURLUPART_URL, &part, 0) == CURLUE_OK)
    out = strdup (part);
 done:
  curl_free (user);
  curl_free (password);
  curl_free (options);
  curl_free (part);
  curl_url_cleanup (u);
  return out;
}

bool
url_has_password (const char *url)
{
  CURLU *u = curl_url ();
  char *password = NULL;
  bool has = false;

  if (u != NULL && curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK &&
      curl_url_get (u, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK)
    has = true;
  curl_free (password);
  curl_url_cleanup (u);
  return has;
}

bool
url_same_origin (const char *a, const char *b)
{
  static const CURLUPart parts[] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
  CURLU *ua = curl_url (), *ub = curl_url ();
  bool same = ua != NULL && ub != NULL &&
    curl_url_set (ua, CURLUPART_URL, a, 0) == CURLUE_OK &&
    curl_url_set (ub, CURLUPART_URL, b, 0) == CURLUE_OK;
  size_t i;

  for (i = 0; same && i < sizeof parts / sizeof parts[0]; i++) {
    char *pa = NULL, *pb = NULL;
    same = curl_url_get (ua, parts[i], &pa, CURLU_DEFAULT_PORT) == CURLUE_OK &&
      curl_url_get (ub, parts[i], &pb, CURLU_DEFAULT_PORT) == CURLUE_OK &&
      strcasecmp (pa, pb) == 0;
    curl_free (pa);
    curl_free (pb);
  }
  curl_url_cleanup (ua);
  curl_url_cleanup (ub);
  return same;
}

int
url_connect_ports (const char *url, uint16_t *ports, size_t max, bool *any_port)
{
  CURLU *u = curl_url ();
  char *scheme = NULL, *port = NULL, *host = NULL;
  unsigned char addr[16];
  int n = -1;
  long p;

  *any_port = false;
  if (u == NULL || max < 2)
    goto out;
  if (curl_url_set (u, CURLUPART_URL, url, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
    goto out;
  p = strtol (port, NULL, 10);
  if (p < 1 || p > 65535)
    goto out;
  n = 0;
  ports[n++] = (uint16_t) p;
  /* FTP data connections (passive mode) go to a port the server names. */
  if (strcasecmp (scheme, "ftp") == 0 || strcasecmp (scheme, "ftps") == 0)
    *any_port = true;
  /* A host name: DNS answers too long for UDP are asked again over TCP. */
  if (host[0] != '[' && inet_pton (AF_INET, host, addr) != 1 && p != 53)
    ports[n++] = 53;
 out:
  curl_free (scheme);
  curl_free (host);
  curl_free (port);
  curl_url_cleanup (u);
  return n;
}

/* ---- Proxies ---- */

int
url_parse_proxy (const char *proxy, enum url_kind *kind, char *err, size_t errlen)
{
  CURLU *u = curl_url ();
  char *scheme = NULL, *host = NULL, *path = NULL, *part = NULL;
  int ret = -1;

  if (u == NULL) {
    snprintf (err, errlen, "out of memory");
    return -1;
  }
  /* CURLU_NON_SUPPORT_SCHEME: a socks5:// proxy is named as such below. */
  if (strlen (proxy) > MAX_URL_LENGTH ||
      curl_url_set (u, CURLUPART_URL, proxy, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
    snprintf (err, errlen, "the proxy is not a URL nbdcurld can read: give "
              "http://HOST:PORT or https://HOST:PORT");
    goto out;
  }
  if (strcasecmp (scheme, "http") == 0)
    *kind = URL_HTTP;
  else if (strcasecmp (scheme, "https") == 0)
    *kind = URL_HTTPS;
  else {
    snprintf (err, errlen, "proxies of scheme \"%.32s\" are not supported: use an "
              "http:// or https:// proxy", scheme);
    goto out;
  }
  if (curl_url_get (u, CURLUPART_HOST, &host, 0) != CURLUE_OK || host[0] == '\0') {
    snprintf (err, errlen, "the proxy URL has no host name");
    goto out;
  }
  /* libcurl ignores the rest: refused, so that nothing looks meant. */
  if ((curl_url_get (u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
       strcmp (path, "/") != 0 && path[0] != '\0') ||
      curl_url_get (u, CURLUPART_QUERY, &part, 0) == CURLUE_OK) {
    snprintf (err, errlen, "a proxy URL is http://HOST:PORT or https://HOST:PORT, "
              "without a path or query");
    goto out;
  }
  if (url_proxy_port (proxy) < 0) {
    snprintf (err, errlen, "the proxy URL's port is not usable");
    goto out;
  }
  ret = 0;
 out:
  curl_free (scheme);
  curl_free (host);
  curl_free (path);
  curl_free (part);
  curl_url_cleanup (u);
  return ret;
}

int
url_proxy_port (const char *proxy)
{
  CURLU *u = curl_url ();
  char *scheme = NULL, *port = NULL;
  long p = -1;

  if (u == NULL || curl_url_set (u, CURLUPART_URL, proxy, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
    goto out;
  if (curl_url_get (u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
    p = strtol (port, NULL, 10);
  else      /* libcurl's defaults for proxies, not the schemes' */
    p = strcasecmp (scheme, "https") == 0 ? URL_HTTPS_PROXY_PORT : URL_HTTP_PROXY_PORT;
  if (p < 1 || p > 65535)
    p = -1;
 out:
  curl_free (scheme);
  curl_free (port);
  curl_url_cleanup (u);
  return (int) p;
}

int
url_proxy_connect_ports (const char *proxy, uint16_t *ports, size_t max)
{
  CURLU *u = curl_url ();
  char *host = NULL;
  unsigned char addr[16];
  int p = url_proxy_port (proxy), n = -1;

  if (u == NULL || max < 2 || p < 0 ||
      curl_url_set (u, CURLUPART_URL, proxy, 0) != CURLUE_OK ||
      curl_url_get (u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
    goto out;
  n = 0;
  ports[n++] = (uint16_t) p;
  /* A host name: DNS over TCP too (url_connect_ports). */
  if (host[0] != '[' && inet_pton (AF_INET, host, addr) != 1 && p != 53)
    ports[n++] = 53;
 out:
  curl_free (host);
  curl_url_cleanup (u);
  return n;
}
