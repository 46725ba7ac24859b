/*
 * fetcher-wire.h: a fetcher's configuration message (IPC_CONFIG_FETCHER)
 * and its flags, which the supervisor sets from the command line and the
 * curl keys (curl-keys.h's SWITCH rows name their flags here) and the
 * fetcher acts on.
 */
#ifndef NBDCURLD_FETCHER_WIRE_H
#define NBDCURLD_FETCHER_WIRE_H

#include <stdint.h>

#include "limits-web.h"

/* Fetcher configuration: one message, then IPC_CONFIG_END. */
struct fetcher_config_wire {
  uint32_t flags;              /* FETCHER_* */
  uint32_t connections;        /* 1 .. MAX_CONNECTIONS */
  uint32_t connect_timeout;    /* seconds */
  uint32_t timeout;            /* seconds a transfer may take, 0 = no limit */
  uint32_t stall_timeout;      /* seconds, 0 = DEFAULT_STALL_TIMEOUT */
  uint32_t ca_bundle_len;      /* 0 .. CA_BUNDLE_MAX_BYTES: the bytes of the
                                  memfd at CHILD_FD_CA_BUNDLE (--cainfo,
                                  --capath); 0: none, libcurl's default */
  uint32_t ip_version;         /* ipresolve=: 0 any, 4 or 6 */
  uint32_t tls_min;            /* ssl-version=: 0 (libcurl's), or 10, 11, 12,
                                  13 for TLS 1.0 to 1.3 */
  uint32_t http_version;       /* http-version=: FETCHER_HTTP_* */
  /* Retries of failed reads (see DEFAULT_RETRIES). */
  uint32_t retries;            /* 0 .. MAX_RETRIES: 0 = none */
  uint32_t retry_delay_ms;     /* 0 .. RETRY_MAX_DELAY_MS: the first wait */
  /* Readahead. */
  uint32_t readahead;          /* 0 .. READAHEAD_MAX_BYTES: the prefetch
                                  store's size, 0: none */
  uint16_t allow_ports[MAX_ALLOWED_PORTS];  /* --allow-port, 0: unused slot */
  /* The export's read cache (cache-layout.h): its geometry, which
   * cache_geometry_ok allows, or 0 entries: none; and this connection's
   * number among the export's, whose share it counts. */
  uint32_t cache_entries;
  uint32_t cache_block_size;
  uint32_t cache_owner;
  uint32_t nstrings;           /* config.h's FETCHER_NSTRINGS */
  /* then nstrings uint32_t lengths, then the strings' bytes, both in
     config.h's order (fetcher_strings: the URL, export name, password,
     cookie, proxy, proxy password, no_proxy list and cookie file, then
     the keys that
     curl-keys.h sends TO_FETCHER, in its order), each at most its
     fetcher_strings[].max bytes; the URL at least 1.  The cookie file's
     lines each end "\n"; the engine is on with FETCHER_COOKIE_ENGINE
     only. */
};
/* http-version=, nbdkit's values in its order (libcurl's CURL_HTTP_VERSION_*):
 * none leaves libcurl's default (HTTP/2 over TLS when the server offers it). */
enum {
  FETCHER_HTTP_NONE, FETCHER_HTTP_1_0, FETCHER_HTTP_1_1, FETCHER_HTTP_2_0,
  FETCHER_HTTP_2TLS, FETCHER_HTTP_2_PRIOR_KNOWLEDGE, FETCHER_HTTP_3,
  FETCHER_HTTP_3ONLY,
};
#define FETCHER_READONLY    (1u << 0)
#define FETCHER_VERBOSE     (1u << 1)
#define FETCHER_INSECURE    (1u << 2)  /* --insecure: skip TLS peer and host checks */
#define FETCHER_SANDBOX_DEBUG  (1u << 3)  /* --sandbox-debug: trap and name calls */
#define FETCHER_DATA_PIPE   (1u << 4)  /* the front-end reads the data pipe */
#define FETCHER_NO_REDIRECTS (1u << 5) /* followlocation=false */
#define FETCHER_NO_NODELAY  (1u << 6)  /* tcp-nodelay=false */
#define FETCHER_NO_KEEPALIVE (1u << 7) /* tcp-keepalive=false */
#define FETCHER_RETRY_CONSTANT (1u << 16) /* retry-exponential=no: every
                                              wait is retry_delay_ms */
/* protocols=: the schemes the export may use, redirects included (none
 * set: all of http, https, ftp and ftps). */
#define FETCHER_PROTO_HTTP  (1u << 8)
#define FETCHER_PROTO_HTTPS (1u << 9)
#define FETCHER_PROTO_FTP   (1u << 10)
#define FETCHER_PROTO_FTPS  (1u << 11)
/* --allow-local-redirects: a redirect from a URL whose host is not on
 * this machine may lead to a loopback or link-local address. */
#define FETCHER_ALLOW_LOCAL_REDIRECTS (1u << 12)
/* -D curl.verbose=1: trace each web conversation, secrets masked
 * (fetcher-trace.c). */
#define FETCHER_CURL_VERBOSE (1u << 13)
/* cookiefile= (even empty): libcurl's cookie engine is on, its cookies
 * shared by all the fetcher's handles, loaded from the cookie file string. */
#define FETCHER_COOKIE_ENGINE (1u << 17)
/* --prefetch=all (--filter=scan): fetch the object into the export's
 * cache while the client's reads leave the fetcher idle (fetcher-scan.c). */
#define FETCHER_PREFETCH_ALL (1u << 24)
#define FETCHER_PROTO_ALL   (FETCHER_PROTO_HTTP | FETCHER_PROTO_HTTPS | \
                             FETCHER_PROTO_FTP | FETCHER_PROTO_FTPS)
/* header-script=, cookie-script=: the fetcher has its script channel at
 * CHILD_FD_SCRIPTS, waits for the first IPC_SCRIPT_VALUES before it
 * opens the export, and sends the values it brings instead of headers
 * (header-script) or cookie (cookie-script), which are then "". */
#define FETCHER_HEADER_SCRIPT (1u << 14)
#define FETCHER_COOKIE_SCRIPT (1u << 15)

#endif
