/*
 * hostile-url-check.c: a URL checker that answers wrongly on purpose, in
 * the test binary only (nbdcurld-test-fetcher).  An export URL ending in
 * "#checker-lie=MODE" makes src/urlcheck/url-check.c pass its answer through
 * hostile_url_answer before sending it; tests/security/test-hostile-fetcher.py
 * checks that the supervisor refuses each kind of malformed answer and
 * does not start.
 *
 *   kind           a kind of URL that does not exist
 *   flags          an unknown flag
 *   type           the wrong message type
 *   trailing       one byte after the last string
 *   nul            a NUL inside the URL to log
 *   long-log       a log URL length over MAX_LOG_URL_LENGTH
 *   relative-path  a file: answer whose path is not absolute
 *   http-path      an http answer that carries a path
 *
 * Any other MODE changes nothing (the control).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ipc-messages.h"
#include "url.h"
#include "url-check-wire.h"

void hostile_url_answer (const char *mode, struct ipc_header *h, uint8_t *buf,
                         size_t *len, size_t cap);

/* Make the answer a successful one of this kind with this path, keeping
 * its URL to log. */
static void
rewrite_with_path (struct url_checked_wire *w, uint8_t *buf, size_t *len,
                   uint32_t kind, const char *path)
{
  size_t log_at = sizeof *w + w->message_len, plen = strlen (path);

  memmove (buf + sizeof *w, buf + log_at, w->log_url_len);
  memcpy (buf + sizeof *w + w->log_url_len, path, plen);
  w->flags = URL_CHECKED_OK;
  w->kind = kind;
  w->message_len = 0;
  w->file_path_len = (uint32_t) plen;
  w->script_url_len = 0;
  *len = sizeof *w + w->log_url_len + plen;
}

void
hostile_url_answer (const char *mode, struct ipc_header *h, uint8_t *buf,
                    size_t *len, size_t cap)
{
  struct url_checked_wire w;

  memcpy (&w, buf, sizeof w);
  if (strcmp (mode, "kind") == 0)
    w.kind = 99;
  else if (strcmp (mode, "flags") == 0)
    w.flags |= 1u << 7;
  else if (strcmp (mode, "type") == 0)
    h->type = IPC_CONFIG_URL;
  else if (strcmp (mode, "trailing") == 0 && *len < cap)
    buf[(*len)++] = 'x';
  else if (strcmp (mode, "nul") == 0)
    buf[sizeof w + w.message_len] = '\0';
  else if (strcmp (mode, "long-log") == 0)
    w.log_url_len = MAX_LOG_URL_LENGTH + 1;
  else if (strcmp (mode, "relative-path") == 0)
    rewrite_with_path (&w, buf, len, URL_FILE, "etc/passwd");
  else if (strcmp (mode, "http-path") == 0)
    rewrite_with_path (&w, buf, len, URL_HTTP, "/etc/passwd");
  memcpy (buf, &w, sizeof w);
  h->payload_len = (uint32_t) *len;
}
