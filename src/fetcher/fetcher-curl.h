/*
 * fetcher-curl.h: what the files of the libcurl path share among
 * themselves: fetcher-http.c (the backend and its serve loop) above
 * fetcher-http-open.c (opening the export), fetcher-http-setup.c (a
 * transfer's libcurl handle), fetcher-http-headers.c (the header lists),
 * fetcher-http-receive.c (libcurl's callbacks) and fetcher-http-errors.c
 * (failures in words).  What fetcher-direct.c shares with them is in
 * fetcher-http.h, which this includes; fetcher-direct.c does not include
 * this.
 */
#ifndef NBDCURLD_FETCHER_CURL_H
#define NBDCURLD_FETCHER_CURL_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "fetcher-http.h"

/* fetcher-http-open.c: the backend's init (before the sandbox: libcurl's
 * global state) and open (struct fetcher_backend). */
void http_init (struct fetcher *f);
int http_open (struct fetcher *f);

/* fetcher-http-setup.c */
/* Options every transfer has, set once per easy handle; and switching a
 * handle from the open to range reads of the pinned URL.  Return 0, or
 * -1 after a warning. */
int transfer_setup (struct transfer *t);
int transfer_setup_reads (struct transfer *t);
/* cookiefile=: the cookie store, with the supervisor's lines loaded
 * through easy.  Returns 0, or -1 after a warning. */
int load_cookies (CURL *easy);
/* Give t a handle that has run no transfer before the next one.  Returns
 * 0, or -1 (out of memory) with the old handle kept. */
int renew_easy (struct transfer *t);
/* A slot's handle, made at its first read through libcurl.  Returns 0,
 * or -1 with the slot left without one. */
int ensure_easy (struct transfer *t);
/* libcurl cannot reuse the export's HTTP/2 connections made with prior
 * knowledge: one connection per transfer. */
bool h2c_reuse_broken (void);

/* fetcher-http-headers.c: the header lists (struct http_state's
 * open_headers, preconditions, precondition and read_headers): the
 * open's; after the open the reads' preconditions and lines; and all of
 * them again after the scripts' new values, while no transfer runs. */
void build_open_headers (void);
void build_preconditions (void);
void build_read_headers (void);
void rebuild_headers (void);

/* fetcher-http-receive.c */
/* libcurl's CURLOPT_HEADERFUNCTION and CURLOPT_WRITEFUNCTION (opaque:
 * the transfer). */
size_t header_callback (char *buffer, size_t size, size_t nitems, void *opaque);
size_t write_callback (char *ptr, size_t size, size_t nmemb, void *opaque);
/* The final response's status; and whether its body may be taken. */
long response_status (struct transfer *t);
bool reply_ok (struct transfer *t);
/* t starts afresh, for a request of mode. */
void transfer_reset (struct transfer *t, enum transfer_mode mode);

/* fetcher-http-errors.c: libcurl's words about a failed transfer (rc),
 * with the system's error and the next step when there are any. */
const char *curl_message (struct transfer *t, CURLcode rc);

#endif
