/*
 * fetcher-http-errors.c: a failed libcurl transfer in words, with the next
 * step where there is one (a CA to give, a port the sandbox refused), and
 * whether trying it again could help (retry_decide decides).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fetcher-curl.h"

/* OpenSSL's words (in libcurl's "SSL certificate problem: ...") for a
 * chain that leads to no CA we trust: the CA is what is missing. */
static bool
issuer_unknown (const char *what)
{
  static const char *const words[] = {
    "unable to get local issuer certificate", "unable to get issuer certificate",
    "self-signed certificate", "self signed certificate", "unable to verify the first certificate",
  };
  size_t i;

  for (i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr (what, words[i]) != NULL)
      return true;
  return false;
}

/* A certificate libcurl refused, with the way out: the CA that signed it
 * when that is what is missing, else the name or dates to check; and
 * turning verification off as the last resort.  The libcurl path and the
 * direct path (direct-tls.c) both say it with these words. */
const char *
certificate_problem (struct transfer *t, CURLcode rc, const char *what)
{
  if (rc != CURLE_PEER_FAILED_VERIFICATION)
    return what;
  snprintf (t->message, sizeof t->message, "%s: %s; as a last resort, --insecure "
            "(sslverify=false) turns verification off", what,
            issuer_unknown (what)
            ? "the web server's certificate is signed by a CA not trusted here: give "
              "that CA with --cainfo FILE or --capath DIR (cainfo= or capath=)"
            : "the web server's certificate cannot be verified: check the URL's host "
              "name and the certificate's dates");
  return t->message;
}

/* libcurl's own words about a failed transfer, and the system's error
 * when there was one: "Permission denied" on a connect is the sandbox
 * (Landlock) refusing a port the URL did not name, e.g. after a redirect. */
const char *
curl_message (struct transfer *t, CURLcode rc)
{
  const char *what = t->errbuf[0] != '\0' ? t->errbuf : curl_easy_strerror (rc);
  long os_errno = 0;

  /* The redirect rules said no (fetcher-connect.c): their words, which
   * name the option that would allow it. */
  if (t->refused[0] != '\0')
    return t->refused;

  /* Nothing here passes libcurl a bad argument during a transfer: this
   * is its header store refusing a line of the reply, without a word. */
  if (rc == CURLE_BAD_FUNCTION_ARGUMENT && t->errbuf[0] == '\0')
    what = "the reply has a header line libcurl cannot take (folded onto "
           "nothing, or without a colon)";
  if (rc == CURLE_PEER_FAILED_VERIFICATION)
    return certificate_problem (t, rc, what);

  if (curl_easy_getinfo (t->easy, CURLINFO_OS_ERRNO, &os_errno) != CURLE_OK ||
      os_errno <= 0 || strstr (what, strerror ((int) os_errno)) != NULL)
    return what;
  snprintf (t->message, sizeof t->message, "%s (%s%s)", what, strerror ((int) os_errno),
            os_errno != EACCES ? ""
            : http.f->cfg->unix_socket_path[0] != '\0'
            ? ": the fetcher's user may not write to the socket file"
            : ": refused by the sandbox");
  return t->message;
}

/* Could libcurl's failure pass if the read were tried again?  Failures
 * of the connection and timeouts could; anything else (a bad option, a
 * TLS certificate refused, the write callback refusing a body) could
 * not.  A connection the sandbox refused (EACCES) stays refused. */
enum retry_cause
fetcher_curl_cause (CURL *easy, CURLcode rc)
{
  long os_errno = 0;

  switch (rc) {
  case CURLE_COULDNT_CONNECT:
    if (curl_easy_getinfo (easy, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK &&
        (os_errno == EACCES || os_errno == EPERM))
      return RETRY_CAUSE_FINAL;
    return RETRY_CAUSE_TRANSIENT;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_OPERATION_TIMEDOUT:      /* a stall; --timeout: retry_decide */
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:       /* a handshake cut off */
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    return RETRY_CAUSE_TRANSIENT;
  default:
    return RETRY_CAUSE_FINAL;
  }
}
