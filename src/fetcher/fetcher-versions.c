/*
 * fetcher-versions.c: for nbdcurld --version, the libraries only this
 * executable links: libcurl (with its TLS backend and protocols) and
 * OpenSSL.  Run by the supervisor with ARG_LIBRARY_VERSIONS, before and
 * without any sandbox: it reads nothing but the libraries' own answers.
 */
#include <stdio.h>
#include <curl/curl.h>
#include <openssl/crypto.h>

#include "roles.h"

int
print_library_versions (void)
{
  const curl_version_info_data *info = curl_version_info (CURLVERSION_NOW);
  size_t i;

  if (info == NULL) {
    fprintf (stderr, "nbdcurld-fetcher: libcurl gives no version information\n");
    return 1;
  }
  printf ("libcurl=%s\n", info->version);
  printf ("libcurl_ssl=%s\n", info->ssl_version ? info->ssl_version : "none");
  printf ("libcurl_protocols=");
  for (i = 0; info->protocols && info->protocols[i]; i++)
    printf ("%s%s", i ? "," : "", info->protocols[i]);
  printf ("\n");
#ifdef OPENSSL_VERSION_STRING
  printf ("openssl=%s\n", OpenSSL_version (OPENSSL_VERSION_STRING));
#else
  printf ("openssl=%s\n", OpenSSL_version (OPENSSL_VERSION));
#endif
  return fflush (stdout) == 0 ? 0 : 1;
}
