/* file-read.c: whole files and descriptors, bounded (see file-read.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file-read.h"

ssize_t
fd_read_all (int fd, void *buf, size_t cap)
{
  char *p = buf;
  size_t len = 0;
  char extra;

  for (;;) {
    /* Full: one more byte tells a file of exactly cap bytes from a longer
     * one. */
    ssize_t r = len < cap ? read (fd, p + len, cap - len) : read (fd, &extra, 1);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1)
      return -1;
    if (r == 0)
      return (ssize_t) len;
    if (len == cap) {
      errno = E2BIG;
      return -1;
    }
    len += (size_t) r;                  /* r <= cap - len */
  }
}

char *
file_read_regular (const char *path, size_t max, size_t *len, file_check_fn *check,
                   bool secret, char *why, size_t whylen)
{
  char *buf = NULL;
  struct stat st;
  ssize_t n;
  int fd, e;

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd == -1) {
    e = errno;
    snprintf (why, whylen, "%s", e == ENOENT ? "no such file" : strerror (e));
    errno = e;
    return NULL;
  }
  /* Not a FIFO or a device, which could keep the start waiting for ever;
   * nor a directory. */
  if (fstat (fd, &st) == -1) {
    e = errno;
    snprintf (why, whylen, "%s", strerror (e));
    goto fail;
  }
  if (!S_ISREG (st.st_mode)) {
    snprintf (why, whylen, "not a regular file");
    e = EINVAL;
    goto fail;
  }
  if (check != NULL && check (path, &st, why, whylen) == -1) {
    e = EPERM;
    goto fail;
  }
  buf = malloc (max + 1);
  if (buf == NULL) {
    e = errno;
    snprintf (why, whylen, "out of memory");
    goto fail;
  }
  n = fd_read_all (fd, buf, max);
  if (n == -1) {
    e = errno;
    if (e == E2BIG)
      snprintf (why, whylen, "larger than %zu bytes", max);
    else
      snprintf (why, whylen, "%s", strerror (e));
    goto fail;
  }
  close (fd);
  buf[n] = '\0';
  *len = (size_t) n;
  return buf;
 fail:
  close (fd);
  if (buf != NULL && secret)
    explicit_bzero (buf, max + 1);
  free (buf);
  errno = e;
  return NULL;
}
