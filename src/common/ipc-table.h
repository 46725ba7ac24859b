/*
 * ipc-table.h: the contract of every internal message type as one table
 * (ipc-table.c): who sends it to whom, which header fields it may use,
 * which flags, how long its payload may be and how many descriptors it
 * carries, for a success and, where the type may carry an errno, for a
 * failure.  Receivers check a message against its row with one call
 * before they look at what it means; what a value means (a request id
 * they sent, an export number in range, the state a type is allowed in)
 * is theirs to check after.  The types and their payloads are described
 * in ipc-messages.h.
 */
#ifndef NBDCURLD_IPC_TABLE_H
#define NBDCURLD_IPC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc-messages.h"
#include "roles.h"

/* Header fields a form may use (every other is 0). */
#define IPC_USES_ID      (1u << 0)
#define IPC_USES_OFFSET  (1u << 1)
#define IPC_USES_LENGTH  (1u << 2)
#define IPC_USES_AREA    (1u << 3)

/* What a message of one type may hold, when error is 0 or when not. */
struct ipc_form {
  unsigned uses;                /* IPC_USES_* */
  uint16_t flags;               /* the flags it may set */
  uint32_t min_payload, max_payload;
  uint8_t min_fds, max_fds;
};

#define ROLE_BIT(id) (1u << (id))

struct ipc_message {
  uint16_t type;                /* enum ipc_type */
  const char *name;
  enum role_id from;
  unsigned to;                  /* ROLE_BIT()s of the roles that receive it */
  struct ipc_form ok;
  bool may_fail;                /* error may be an errno, then `failed` applies */
  struct ipc_form failed;
};

extern const struct ipc_message ipc_messages[];
extern const size_t ipc_nmessages;

/* The row of a type, or NULL. */
const struct ipc_message *ipc_message_of (uint16_t type);

/* Is h, with nfds descriptors, a message its type's row lets `from` send
 * to `to`?  NULL if so, else what is wrong, for the receiver's message
 * ("unknown type", "the flags", "the length field", "the payload's
 * size"...). */
const char *ipc_check (const struct ipc_header *h, unsigned nfds, enum role_id from,
                       enum role_id to);

#endif
