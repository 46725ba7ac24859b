/*
 * launcher-parse.c: the supervisor's messages to the fetcher launcher,
 * checked against the table of messages (ipc-table.c) and then what the
 * table cannot say: that a start is the only message the launcher takes
 * once running, and that it names as many descriptors as it carries.
 */
#include "ipc-table.h"
#include "launcher-parse.h"

bool
launcher_request_acceptable (const struct ipc_header *h, unsigned nfds)
{
  /* The table lets IPC_CONFIG_END reach the launcher too (on its
   * configuration pipe, at start): on its peer socket it is no start. */
  return ipc_check (h, nfds, ROLE_SUPERVISOR, ROLE_LAUNCHER) == NULL &&
         h->type == IPC_LAUNCH_FETCHER && h->length == nfds;
}
