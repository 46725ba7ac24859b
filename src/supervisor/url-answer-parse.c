/*
 * url-answer-parse.c: the URL checker's answer (struct url_checked_wire
 * and its strings), read through the bounded reader.  The checker runs
 * libcurl on the URLs given, so its answer is untrusted like any child's
 * message: its header is checked against the table of messages, then
 * every length and every combination of flags, kind and strings.
 */
#include "ipc-table.h"
#include "url-answer-parse.h"
#include "wire.h"

/* The header and the fixed struct: each length within its bound, and the
 * strings an accepted or a refused answer has. */
static bool
wire_acceptable (const struct url_checked_wire *w)
{
  bool ok = (w->flags & URL_CHECKED_OK) != 0;

  if ((w->flags & ~(URL_CHECKED_OK | URL_CHECKED_HAS_PASSWORD)) != 0 ||
      w->script_url_len > MAX_LOG_URL_LENGTH || (!ok && w->script_url_len) ||
      w->log_url_len < 1 || w->log_url_len > MAX_LOG_URL_LENGTH ||
      w->message_len > MAX_URL_MESSAGE || w->file_path_len > MAX_PATH_LENGTH)
    return false;
  return ok ? !(w->kind > URL_FILE || w->message_len != 0 ||
                (w->kind == URL_FILE) != (w->file_path_len > 0))
            : !(w->message_len < 1 || w->file_path_len != 0);
}

enum url_answer
parse_url_answer (const struct ipc_header *h, const uint8_t *payload,
                  struct url_answer_fields *a)
{
  struct url_checked_wire w;
  struct reader r;

  reader_init (&r, payload, h->payload_len);
  if (h->type != IPC_URL_CHECKED || ipc_check (h, 0, ROLE_URL_CHECK, ROLE_SUPERVISOR) != NULL ||
      reader_get_bytes (&r, &w, sizeof w) == -1 || !wire_acceptable (&w))
    return URL_MALFORMED;
  /* An absent string is one of length 0: "". */
  if (reader_get_string (&r, a->message, w.message_len, MAX_URL_MESSAGE) == -1 ||
      reader_get_string (&r, a->log_url, w.log_url_len, MAX_LOG_URL_LENGTH) == -1 ||
      reader_get_string (&r, a->file_path, w.file_path_len, MAX_PATH_LENGTH) == -1 ||
      (w.file_path_len > 0 && a->file_path[0] != '/') ||
      reader_get_string (&r, a->script_url, w.script_url_len, MAX_LOG_URL_LENGTH) == -1 ||
      reader_end (&r) == -1)
    return URL_MALFORMED;
  a->kind = (enum url_kind) w.kind;
  a->has_password = (w.flags & URL_CHECKED_HAS_PASSWORD) != 0;
  return (w.flags & URL_CHECKED_OK) != 0 ? URL_ACCEPTED : URL_REFUSED;
}
