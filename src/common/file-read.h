/*
 * file-read.h: the one way nbdcurld reads a whole file or descriptor:
 * bounded, EINTR retried, and for a named file, opened so that a FIFO
 * or a device cannot keep the reader waiting (O_NONBLOCK, O_NOCTTY),
 * checked after the open (the file checked is the file read) to be a
 * regular file, and wiped on failure when it may hold a secret.
 */
#ifndef NBDCURLD_FILE_READ_H
#define NBDCURLD_FILE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Read fd to its end into buf, at most cap bytes.  Returns the length, or
 * -1 with errno (E2BIG: more than cap bytes). */
ssize_t fd_read_all (int fd, void *buf, size_t cap);

/* A check of the opened file's status before it is read (an owner, a
 * mode): 0, or -1 after writing why. */
typedef int file_check_fn (const char *path, const struct stat *st, char *why, size_t whylen);

/* The whole regular file at path, at most max bytes, NUL-terminated, in a
 * buffer the caller frees; *len its length.  check, if not NULL, is asked
 * first.  NULL on failure, with errno (ENOENT, E2BIG for a longer file,
 * EINVAL for one that is not regular, or the check's failure) and why:
 * "no such file", "not a regular file", "larger than N bytes", or the
 * system's words.  secret: the buffer is wiped before it is freed on
 * failure (on success it is the caller's to wipe). */
char *file_read_regular (const char *path, size_t max, size_t *len, file_check_fn *check,
                         bool secret, char *why, size_t whylen);

#endif
