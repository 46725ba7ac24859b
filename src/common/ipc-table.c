/* ipc-table.c: the table of internal messages (see ipc-table.h). */
#include <stddef.h>

#include "child-fds.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "keyholder-wire.h"
#include "limits-strings.h"
#include "script-values.h"
#include "stats-wire.h"
#include "url-check-wire.h"

/* Short names for the rows. */
#define SUP ROLE_SUPERVISOR
#define FE  ROLE_FRONTEND
#define KH  ROLE_KEYHOLDER
#define FET ROLE_FETCHER
#define LAU ROLE_LAUNCHER
#define URL ROLE_URL_CHECK
#define REM ROLE_REMOVER
#define ID  IPC_USES_ID
#define OFF IPC_USES_OFFSET
#define LEN IPC_USES_LENGTH
#define AREA IPC_USES_AREA

/* A configuration message: the payload struct and its strings, bounded
 * again field by field by config.c's readers. */
#define CONFIG_FORM { .max_payload = IPC_MAX_CONFIG_PAYLOAD }
/* The URL checker's answer: its struct and three strings at most. */
#define URL_CHECKED_MAX_PAYLOAD \
  (sizeof (struct url_checked_wire) + MAX_URL_MESSAGE + 2 * MAX_LOG_URL_LENGTH + MAX_PATH_LENGTH)

const struct ipc_message ipc_messages[] = {
  /* ---- Configuration, supervisor -> child, on CHILD_FD_CONFIG ---- */
  { IPC_CONFIG_FRONTEND, "IPC_CONFIG_FRONTEND", SUP, ROLE_BIT (FE), CONFIG_FORM },
  { IPC_CONFIG_EXPORT, "IPC_CONFIG_EXPORT", SUP, ROLE_BIT (FE), CONFIG_FORM },
  { IPC_CONFIG_FETCHER, "IPC_CONFIG_FETCHER", SUP, ROLE_BIT (FET), CONFIG_FORM },
  { IPC_CONFIG_END, "IPC_CONFIG_END", SUP,
    ROLE_BIT (FE) | ROLE_BIT (FET) | ROLE_BIT (KH) | ROLE_BIT (LAU) | ROLE_BIT (URL) |
    ROLE_BIT (REM), { 0 } },
  /* id, offset: the user and group to become; length: 1 to become them. */
  { IPC_CONFIG_URL_CHECK, "IPC_CONFIG_URL_CHECK", SUP, ROLE_BIT (URL),
    { .uses = ID | OFF | LEN, .flags = FETCHER_VERBOSE | FETCHER_SANDBOX_DEBUG } },
  { IPC_CONFIG_URL, "IPC_CONFIG_URL", SUP, ROLE_BIT (URL),
    { .flags = URL_CHECK_ALL, .min_payload = 1, .max_payload = MAX_URL_LENGTH } },
  { IPC_CONFIG_TLS, "IPC_CONFIG_TLS", SUP, ROLE_BIT (FE), CONFIG_FORM },
  { IPC_CONFIG_ACCESS, "IPC_CONFIG_ACCESS", SUP, ROLE_BIT (FE), CONFIG_FORM },
  { IPC_CONFIG_KEYHOLDER, "IPC_CONFIG_KEYHOLDER", SUP, ROLE_BIT (KH), CONFIG_FORM },
  { IPC_CONFIG_LAUNCHER, "IPC_CONFIG_LAUNCHER", SUP, ROLE_BIT (LAU), CONFIG_FORM },
  { IPC_CONFIG_REMOVER, "IPC_CONFIG_REMOVER", SUP, ROLE_BIT (REM), CONFIG_FORM },

  /* ---- The URL checker's answer, on its CHILD_FD_PEER ---- */
  { IPC_URL_CHECKED, "IPC_URL_CHECKED", URL, ROLE_BIT (SUP),
    { .min_payload = sizeof (struct url_checked_wire), .max_payload = URL_CHECKED_MAX_PAYLOAD } },

  /* ---- Control, front-end <-> supervisor (SOCK_SEQPACKET) ---- */
  /* id: the client's token; length: the export's index. */
  { IPC_SPAWN_FETCHER, "IPC_SPAWN_FETCHER", FE, ROLE_BIT (SUP), { .uses = ID | LEN } },
  /* The fetcher's socket, its data area and (unless off) its data pipe. */
  { IPC_FETCHER_SPAWNED, "IPC_FETCHER_SPAWNED", SUP, ROLE_BIT (FE),
    { .uses = ID, .min_fds = 2, .max_fds = 3 }, true, { .uses = ID } },
  { IPC_STOP_ACCEPTING, "IPC_STOP_ACCEPTING", SUP, ROLE_BIT (FE), { 0 } },
  { IPC_STATS_REQUEST, "IPC_STATS_REQUEST", SUP, ROLE_BIT (FE), { 0 } },
  /* length: the export's index. */
  { IPC_EXPORT_STATS, "IPC_EXPORT_STATS", FE, ROLE_BIT (SUP),
    { .uses = LEN, .flags = EXPORT_STATS_LAST | EXPORT_STATS_FINAL,
      .min_payload = STATS_WIRE_SIZE, .max_payload = STATS_WIRE_SIZE } },
  /* id: the client's token; length: the export's index. */
  { IPC_CLIENT_STATS, "IPC_CLIENT_STATS", FE, ROLE_BIT (SUP),
    { .uses = ID | LEN, .min_payload = CLIENT_STATS_WIRE_SIZE,
      .max_payload = CLIENT_STATS_WIRE_SIZE } },

  /* ---- Data, front-end <-> fetcher (SOCK_STREAM) ---- */
  /* offset: the export's size; length: the largest piped read.  A failed
   * open says why (the supervisor reads the first fetcher's at start). */
  { IPC_FETCHER_OPENED, "IPC_FETCHER_OPENED", FET, ROLE_BIT (FE) | ROLE_BIT (SUP),
    { .uses = OFF | LEN,
      .flags = FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA | FETCHER_CAN_STAGE },
    true, { .max_payload = MAX_OPEN_FAILURE_MESSAGE } },
  { IPC_READ, "IPC_READ", FE, ROLE_BIT (FET), { .uses = ID | OFF | LEN | AREA } },
  { IPC_WRITE, "IPC_WRITE", FE, ROLE_BIT (FET),
    { .uses = ID | OFF | LEN | AREA, .flags = IPC_FLAG_FUA } },
  { IPC_FLUSH, "IPC_FLUSH", FE, ROLE_BIT (FET), { .uses = ID } },
  { IPC_REPLY, "IPC_REPLY", FET, ROLE_BIT (FE), { .uses = ID, .flags = IPC_REPLY_PIPED },
    true, { .uses = ID } },
  { IPC_PIPE_DISCARD, "IPC_PIPE_DISCARD", FET, ROLE_BIT (FE), { .uses = LEN } },
  { IPC_FETCHER_STARTED, "IPC_FETCHER_STARTED", FET, ROLE_BIT (FE) | ROLE_BIT (SUP), { 0 } },
  { IPC_CACHE, "IPC_CACHE", FE, ROLE_BIT (FET), { .uses = ID | OFF | LEN } },
  { IPC_FETCHER_OPEN, "IPC_FETCHER_OPEN", SUP, ROLE_BIT (FET), { 0 } },
  { IPC_FETCHER_STATS, "IPC_FETCHER_STATS", FET, ROLE_BIT (FE),
    { .min_payload = FETCHER_STATS_WIRE_SIZE, .max_payload = FETCHER_STATS_WIRE_SIZE } },
  { IPC_STAGE_WANTED, "IPC_STAGE_WANTED", FET, ROLE_BIT (FE), { 0 } },
  /* id: bytes answered from it; offset: one past the furthest of them;
   * length: the span's size; area_offset: where it is. */
  { IPC_STAGE_GIVE, "IPC_STAGE_GIVE", FE, ROLE_BIT (FET), { .uses = ID | OFF | LEN | AREA } },
  { IPC_STAGED, "IPC_STAGED", FET, ROLE_BIT (FE), { .uses = OFF | LEN | AREA } },

  /* ---- Keys, front-end <-> key holder (SOCK_SEQPACKET) ---- */
  /* id: the request's number; length: the scheme; offset: GnuTLS's sign
   * flags. */
  { IPC_KEY_SIGN, "IPC_KEY_SIGN", FE, ROLE_BIT (KH),
    { .uses = ID | OFF | LEN, .flags = IPC_KEY_SIGN_HASHED, .min_payload = 1,
      .max_payload = KEY_MAX_SIGN_INPUT } },
  { IPC_KEY_SIGNATURE, "IPC_KEY_SIGNATURE", KH, ROLE_BIT (FE),
    { .uses = ID, .min_payload = 1, .max_payload = KEY_MAX_SIGNATURE }, true, { .uses = ID } },
  { IPC_KEY_PSK, "IPC_KEY_PSK", FE, ROLE_BIT (KH),
    { .uses = ID, .min_payload = 1, .max_payload = MAX_PSK_USERNAME } },
  { IPC_KEY_PSK_KEY, "IPC_KEY_PSK_KEY", KH, ROLE_BIT (FE),
    { .uses = ID, .min_payload = 1, .max_payload = MAX_PSK_KEY }, true, { .uses = ID } },

  /* ---- The fetcher launcher, supervisor <-> launcher (SOCK_SEQPACKET) ---- */
  { IPC_LAUNCHER_READY, "IPC_LAUNCHER_READY", LAU, ROLE_BIT (SUP), { 0 } },
  /* length: the number of descriptors, which become the fetcher's. */
  { IPC_LAUNCH_FETCHER, "IPC_LAUNCH_FETCHER", SUP, ROLE_BIT (LAU),
    { .uses = LEN, .min_fds = 2, .max_fds = LAUNCH_MAX_FDS } },
  /* id: the new fetcher's pid. */
  { IPC_FETCHER_LAUNCHED, "IPC_FETCHER_LAUNCHED", LAU, ROLE_BIT (SUP), { .uses = ID },
    true, { 0 } },

  /* ---- Scripts, supervisor <-> fetcher (SOCK_SEQPACKET) ---- */
  /* id: the generation. */
  { IPC_SCRIPT_VALUES, "IPC_SCRIPT_VALUES", SUP, ROLE_BIT (FET),
    { .uses = ID, .flags = SCRIPT_VALUES_HEADERS | SCRIPT_VALUES_COOKIE,
      .min_payload = sizeof (struct script_values_wire), .max_payload = SCRIPT_VALUES_MAX_PAYLOAD },
    true, { .uses = ID } },
  /* id: the generation a server refused. */
  { IPC_SCRIPT_RENEW, "IPC_SCRIPT_RENEW", FET, ROLE_BIT (SUP), { .uses = ID } },
};

const size_t ipc_nmessages = sizeof ipc_messages / sizeof ipc_messages[0];

const struct ipc_message *
ipc_message_of (uint16_t type)
{
  size_t i;

  for (i = 0; i < ipc_nmessages; i++)
    if (ipc_messages[i].type == type)
      return &ipc_messages[i];
  return NULL;
}

const char *
ipc_check (const struct ipc_header *h, unsigned nfds, enum role_id from, enum role_id to)
{
  const struct ipc_message *m = ipc_message_of (h->type);
  const struct ipc_form *f;

  if (m == NULL)
    return "an unknown type";
  if (m->from != from || (m->to & ROLE_BIT (to)) == 0)
    return "a type this peer does not send here";
  if (h->error != 0 && !m->may_fail)
    return "an error in a type that has none";
  f = h->error != 0 ? &m->failed : &m->ok;
  if ((h->flags & ~f->flags) != 0)
    return "flags this type does not have";
  if ((h->id != 0 && !(f->uses & IPC_USES_ID)) ||
      (h->offset != 0 && !(f->uses & IPC_USES_OFFSET)) ||
      (h->length != 0 && !(f->uses & IPC_USES_LENGTH)) ||
      (h->area_offset != 0 && !(f->uses & IPC_USES_AREA)))
    return "a field this type does not use";
  if (h->payload_len < f->min_payload || h->payload_len > f->max_payload)
    return "a payload of a size this type does not have";
  if (nfds < f->min_fds || nfds > f->max_fds)
    return "a number of descriptors this type does not carry";
  return NULL;
}
