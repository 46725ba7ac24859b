/*
 * unit-ipc-table.c: ipc_check against every row of the message table
 * (src/common/ipc-table.c): the forms a row allows pass, and each way out
 * of them (a field it does not use, a flag it does not have, a payload or
 * a number of descriptors out of range, an error where it has none, the
 * wrong sender or receiver, an unknown type) is refused.  TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc-messages.h"
#include "ipc-table.h"

static int tests, failures;

static void
check (bool ok, const char *what, const struct ipc_message *m)
{
  tests++;
  if (ok)
    printf ("ok %d - %s: %s\n", tests, m->name, what);
  else {
    printf ("not ok %d - %s: %s\n", tests, m->name, what);
    failures++;
  }
}

/* The fullest header a form allows. */
static struct ipc_header
fullest (const struct ipc_message *m, const struct ipc_form *f, uint32_t error)
{
  struct ipc_header h = { .type = m->type, .flags = f->flags, .error = error,
                          .payload_len = f->max_payload };
  if (f->uses & IPC_USES_ID) h.id = 7;
  if (f->uses & IPC_USES_OFFSET) h.offset = 4096;
  if (f->uses & IPC_USES_LENGTH) h.length = 2;
  if (f->uses & IPC_USES_AREA) h.area_offset = 8192;
  return h;
}

static enum role_id
a_receiver (const struct ipc_message *m)
{
  int r;

  for (r = 0; r < NROLES; r++)
    if (m->to & ROLE_BIT (r))
      return (enum role_id) r;
  return NROLES;
}

static void
check_form (const struct ipc_message *m, const struct ipc_form *f, uint32_t error)
{
  enum role_id to = a_receiver (m);
  struct ipc_header h = fullest (m, f, error), bad;
  const char *kind = error ? "failure" : "success";
  char what[128];
  int r;

#define NAMED(text) (snprintf (what, sizeof what, "%s: %s", kind, text), what)
  check (ipc_check (&h, f->max_fds, m->from, to) == NULL, NAMED ("its fullest form passes"), m);
  bad = (struct ipc_header) { .type = m->type, .error = error, .payload_len = f->min_payload };
  check (ipc_check (&bad, f->min_fds, m->from, to) == NULL, NAMED ("its barest form passes"), m);

  if (!(f->uses & IPC_USES_ID)) {
    bad = h; bad.id = 1;
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("an id refused"), m);
  }
  if (!(f->uses & IPC_USES_OFFSET)) {
    bad = h; bad.offset = 1;
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("an offset refused"), m);
  }
  if (!(f->uses & IPC_USES_LENGTH)) {
    bad = h; bad.length = 1;
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("a length refused"), m);
  }
  if (!(f->uses & IPC_USES_AREA)) {
    bad = h; bad.area_offset = 1;
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("an area offset refused"), m);
  }
  if (f->flags != 0xffff) {
    bad = h; bad.flags = (uint16_t) (f->flags | (uint16_t) ~f->flags);
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("other flags refused"), m);
  }
  bad = h; bad.payload_len = f->max_payload + 1;
  check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("a payload too long refused"), m);
  bad = h; bad.payload_len = UINT32_MAX;
  check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("a payload of 4 GiB refused"), m);
  if (f->min_payload > 0) {
    bad = h; bad.payload_len = f->min_payload - 1;
    check (ipc_check (&bad, f->max_fds, m->from, to) != NULL, NAMED ("a payload too short refused"), m);
  }
  check (ipc_check (&h, f->max_fds + 1u, m->from, to) != NULL, NAMED ("a descriptor more refused"), m);
  if (f->min_fds > 0)
    check (ipc_check (&h, f->min_fds - 1u, m->from, to) != NULL,
           NAMED ("a descriptor fewer refused"), m);
  /* From any other role, or to one that does not receive it. */
  for (r = 0; r < NROLES; r++) {
    if ((enum role_id) r != m->from)
      check (ipc_check (&h, f->max_fds, (enum role_id) r, to) != NULL,
             NAMED ("from another role refused"), m);
    if (!(m->to & ROLE_BIT (r)))
      check (ipc_check (&h, f->max_fds, m->from, (enum role_id) r) != NULL,
             NAMED ("to another role refused"), m);
  }
#undef NAMED
}

int
main (void)
{
  static const struct ipc_message unknown = { .name = "unknown type" };
  struct ipc_header h = { 0 };
  size_t i, j;

  for (i = 0; i < ipc_nmessages; i++) {
    const struct ipc_message *m = &ipc_messages[i];

    for (j = 0; j < i; j++)
      if (ipc_messages[j].type == m->type)
        check (false, "a second row for its type", m);
    check (ipc_message_of (m->type) == m && a_receiver (m) != NROLES, "has one row and a receiver", m);
    check_form (m, &m->ok, 0);
    if (m->may_fail)
      check_form (m, &m->failed, 5 /* EIO */);
    else {
      struct ipc_header bad = fullest (m, &m->ok, 5);
      check (ipc_check (&bad, m->ok.max_fds, m->from, a_receiver (m)) != NULL,
             "an error refused (it has none)", m);
    }
  }
  h.type = 0;
  check (ipc_check (&h, 0, ROLE_SUPERVISOR, ROLE_FRONTEND) != NULL, "type 0 refused", &unknown);
  h.type = 0xffff;
  check (ipc_check (&h, 0, ROLE_SUPERVISOR, ROLE_FRONTEND) != NULL, "type 65535 refused", &unknown);

  printf ("1..%d\n", tests);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
