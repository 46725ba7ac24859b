/*
 * url-answer-parse.h: the URL checker's answer for one URL, parsed and
 * checked (url-answer-parse.c).  Nothing here reads a socket or knows an
 * export: urlcheck-client.c reads the message and keeps what it needs.
 */
#ifndef NBDCURLD_SUPERVISOR_URL_ANSWER_PARSE_H
#define NBDCURLD_SUPERVISOR_URL_ANSWER_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc-messages.h"
#include "limits-strings.h"
#include "url-check-wire.h"
#include "url.h"

/* The largest answer: its struct and every string at its limit. */
#define URL_ANSWER_MAX_PAYLOAD \
  (sizeof (struct url_checked_wire) + MAX_URL_MESSAGE + 2 * MAX_LOG_URL_LENGTH + MAX_PATH_LENGTH)

enum url_answer { URL_ACCEPTED, URL_REFUSED, URL_NO_ANSWER, URL_MALFORMED };

/* What an accepted or refused answer says; each string is "" when the
 * answer has none. */
struct url_answer_fields {
  enum url_kind kind;                   /* accepted only */
  bool has_password;
  char message[MAX_URL_MESSAGE + 1];    /* why it was refused */
  char log_url[MAX_LOG_URL_LENGTH + 1];  /* never "" */
  char file_path[MAX_PATH_LENGTH + 1];  /* file: only; absolute */
  char script_url[MAX_LOG_URL_LENGTH + 1];  /* accepted with credentials only */
};

/* The message h with its payload, from the URL checker: URL_ACCEPTED or
 * URL_REFUSED with a filled in, or URL_MALFORMED (a is then partly
 * written and means nothing). */
enum url_answer parse_url_answer (const struct ipc_header *h, const uint8_t *payload,
                                  struct url_answer_fields *a);

#endif
