/*
 * url.h: which URLs nbdcurld serves, and how they appear in logs.
 *
 * Allowed schemes: http, https, ftp, ftps, file.  Redirects may go only to
 * http, https, ftp and ftps: never to file:, whatever the first URL was.
 */
#ifndef NBDCURLD_URL_H
#define NBDCURLD_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum url_kind { URL_HTTP, URL_HTTPS, URL_FTP, URL_FTPS, URL_FILE };

/* Schemes as libcurl's CURLOPT_PROTOCOLS_STR / REDIR_PROTOCOLS_STR take them. */
#define URL_NETWORK_PROTOCOLS "http,https,ftp,ftps"

/* Parse and check a URL.  On success returns 0, sets *kind, and for file:
 * URLs sets *file_path to the decoded local path (malloc'd; NULL for other
 * kinds).  On failure returns -1 and writes a message for the user into
 * err (never containing credentials). */
int url_parse (const char *url, enum url_kind *kind, char **file_path,
               char *err, size_t errlen);

/* True if the kind cannot write at an offset (everything but file:). */
int url_kind_is_readonly (enum url_kind kind);

/* The URL as it may be logged: without user name, password, query or
 * fragment (presigned URLs carry signatures there).  malloc'd; never
 * NULL (falls back to a placeholder). */
char *url_for_log (const char *url);

/* Does the URL carry a password (user:password@host)? */
bool url_has_password (const char *url);
/* The URL without its user name, password and login options, as libcurl
 * writes it (what scripts get as $url); NULL when it has none of them or
 * libcurl cannot read it.  Free it. */
char *url_without_userinfo (const char *url);

/* Same scheme, host and port (default ports filled in)?  Credentials
 * given for one origin are sent to no other. */
bool url_same_origin (const char *a, const char *b);

/* TCP ports a fetcher must reach for url: its port (or the scheme's
 * default), and 53 for DNS over TCP when the host is a name.  Sets
 * *any_port for ftp and ftps (passive data connections go to a port the
 * server picks).  Returns the number of ports, or -1 if url does not
 * parse. */
int url_connect_ports (const char *url, uint16_t *ports, size_t max, bool *any_port);

/* ---- Proxies (proxy=, --proxy-from-env) ---- */

/* libcurl's ports for a proxy URL without one (CURL_DEFAULT_PROXY_PORT,
 * CURL_DEFAULT_HTTPS_PROXY_PORT): not the schemes' 80 and 443 for http. */
#define URL_HTTP_PROXY_PORT  1080
#define URL_HTTPS_PROXY_PORT 443

/* Check a proxy URL: http:// or https://, a host, an optional port, no
 * path or query.  Returns 0 and sets *kind (URL_HTTP or URL_HTTPS), or -1
 * with a message for the user in err. */
int url_parse_proxy (const char *proxy, enum url_kind *kind, char *err, size_t errlen);

/* The port libcurl connects to for a proxy URL (its own, or the default
 * above), or -1.  The fetcher sets it as CURLOPT_PROXYPORT and allows it
 * in its sandbox, so the two cannot disagree. */
int url_proxy_port (const char *proxy);

/* As url_connect_ports, for a proxy: its port, and 53 when its host is a
 * name.  Returns the number of ports, or -1. */
int url_proxy_connect_ports (const char *proxy, uint16_t *ports, size_t max);

#endif
