/*
 * cache-backing.c: each export's read cache's backing (cache-backing.h).
 *
 * One backing per export, never shared: two exports' fetchers never map
 * the same bytes.  In memory, a memfd sealed against shrinking and
 * growing (a fetcher that could shrink it would kill the others with
 * SIGBUS) and against new seals.  With --cache-dir, a file opened with
 * O_TMPFILE, so it has no name (nothing to remove, nothing left behind
 * if nbdcurld is killed), with its blocks allocated now: a full disk
 * stops the start rather than a fetcher's write to the mapping later.
 * Fetchers may not call ftruncate or fallocate (policy/fetcher.policy),
 * so they cannot resize the file either.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cache-backing.h"
#include "cache-layout.h"
#include "log.h"

static int
make_memfd (uint64_t bytes)
{
  int fd = memfd_create ("nbdcurld-cache", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  if (fd == -1)
    fatal_errno ("--cache: making the cache's memory");
  if (ftruncate (fd, (off_t) bytes) == -1)
    fatal_errno ("--cache: sizing the cache's memory to %" PRIu64 " bytes", bytes);
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == -1)
    fatal_errno ("--cache: sealing the cache's memory");
  return fd;
}

static int
make_file (const char *dir, const char *export_name, uint64_t bytes)
{
  int fd = open (dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), err;

  if (fd == -1) {
    err = errno;
    fatal ("--cache-dir %s: cannot make the cache's file there: %s%s", dir, strerror (err),
           err == EOPNOTSUPP || err == EISDIR
           ? " (the file system cannot make unnamed files: choose a directory on "
             "ext4, xfs, btrfs or tmpfs)"
           : ": give an existing directory nbdcurld can write");
  }
  err = posix_fallocate (fd, 0, (off_t) bytes);
  if (err != 0)
    fatal ("--cache-dir %s: cannot reserve the %" PRIu64 " bytes of export \"%s\"'s "
           "cache: %s: make --cache smaller or free some space", dir, bytes, export_name,
           strerror (err));
  return fd;
}

void
cache_backing_make (struct options *o)
{
  unsigned i;

  for (i = 0; i < o->nexports; i++) {
    struct export_spec *e = &o->exports[i];
    uint64_t bytes;

    e->cache_fd = -1;
    if (e->cache_entries == 0 || e->kind == URL_FILE) {
      e->cache_entries = 0;
      continue;
    }
    bytes = cache_backing_bytes (e->cache_entries, e->cache_block_size);
    e->cache_fd = o->cache_dir ? make_file (o->cache_dir, e->name, bytes)
                               : make_memfd (bytes);
    debug ("export \"%s\": a cache of %" PRIu32 " blocks of %" PRIu32 " bytes %s%s",
           e->name, e->cache_entries, e->cache_block_size,
           o->cache_dir ? "in an unnamed file in " : "in memory",
           o->cache_dir ? o->cache_dir : "");
  }
}
