/*
 * read-split.c: the replies of a read fetched in pieces (read-split.h).
 *
 * Every request the fetcher takes gets exactly one reply, whichever way
 * it goes (direct, libcurl, the store, the cache, a retry, a failure):
 * so each piece is such a request, with the read's id, and a read split
 * into n pieces gets n replies here, of which the front-end sees one,
 * once all n came.  Until then no reply names the read, so the front-end
 * keeps the read's place in the data area, into which pieces still in
 * flight receive.
 */
#include "read-split.h"

#include "fetcher-http.h"

/* At most a read's worth of split reads per request the client may have
 * in flight. */
static struct split_read {
  bool used;
  uint64_t id;
  unsigned pieces_left;       /* replies still to come */
  uint32_t error;             /* the first piece's errno, or 0 */
} splits[QUEUE_SIZE];

static struct split_read *
split_of (uint64_t id)
{
  for (unsigned i = 0; i < QUEUE_SIZE; i++)
    if (splits[i].used && splits[i].id == id)
      return &splits[i];
  return NULL;
}

bool
read_split_add (uint64_t id)
{
  struct split_read *s = split_of (id);

  for (unsigned i = 0; s == NULL && i < QUEUE_SIZE; i++)
    if (!splits[i].used) {
      s = &splits[i];
      *s = (struct split_read) { .used = true, .id = id, .pieces_left = 1 };
    }
  if (s == NULL)
    return false;
  s->pieces_left++;
  return true;
}

bool
read_split_answered (uint64_t id, uint32_t *error)
{
  struct split_read *s = split_of (id);

  if (s == NULL)
    return true;
  if (s->error == 0)
    s->error = *error;
  if (--s->pieces_left > 0)
    return false;
  *error = s->error;
  s->used = false;
  return true;
}
