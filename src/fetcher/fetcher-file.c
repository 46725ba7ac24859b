/*
 * fetcher-file.c: file: exports, a regular file or a block device.
 *
 * Requests are served one at a time, in order: a local pread or pwrite is
 * quick next to the round trip through the front-end, and the page cache
 * does the read-ahead.  Writable unless the configuration says read-only.
 * Reads of a read-only export go through the data pipe when they fit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child-fds.h"
#include "fetcher.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "log.h"

static int image_fd = -1;


static int
file_open (struct fetcher *f)
{
  const bool readonly = (f->cfg->flags & FETCHER_READONLY) != 0;
  struct stat st;
  off_t end;
  int fd = CHILD_FD_EXPORT, flags, error = 0;

  /* The supervisor opened the image (read-only unless the export is
   * writable) while it still had its rights, and checked it; the fetcher
   * gets only this descriptor, never the right to open the path. */
  flags = fcntl (fd, F_GETFL);
  if (flags == -1) {
    error = errno;
    warn_errno ("export \"%s\": no descriptor for %s at fd %d", f->export_name,
                f->log_url, fd);
    return error;
  }
  if (!readonly && (flags & O_ACCMODE) != O_RDWR) {
    warn ("export \"%s\": %s was opened read-only for a writable export",
          f->export_name, f->log_url);
    return EBADF;
  }
  if (fstat (fd, &st) == -1) {
    error = errno;
    warn_errno ("export \"%s\": fstat %s", f->export_name, f->log_url);
    goto out;
  }
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode)) {
    error = EINVAL;
    warn ("export \"%s\": %s is not a regular file or a block device",
          f->export_name, f->log_url);
    goto out;
  }
  /* SEEK_END gives block devices' sizes too, where st_size is 0. */
  end = lseek (fd, 0, SEEK_END);
  if (end == -1) {
    error = errno;
    warn_errno ("export \"%s\": cannot find the size of %s", f->export_name, f->log_url);
    goto out;
  }

  f->size = (uint64_t) end;     /* off_t is never negative here */
  f->can = readonly ? 0 : FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA;
  f->piped_read_max = fetcher_pipe_read_max;     /* 0 unless read-only */
  image_fd = fd;
 out:
  return error;
}

/* An errno from a failed write, as the NBD client should see it. */
static uint32_t
write_error (int e)
{
  switch (e) {
  case ENOSPC: case EDQUOT: case EFBIG:
    return ENOSPC;
  case EROFS: case EPERM: case EACCES:
    return EPERM;
  default:
    return EIO;
  }
}

static uint32_t
file_read (struct fetcher *f, const struct fetcher_request *req)
{
  size_t done = 0;

  /* Each pass reads at least one byte or returns, so at most length
   * passes (EINTR aside).  length - done cannot underflow: done < length. */
  while (done < req->length) {
    ssize_t r = pread (image_fd, req->data + done, req->length - done,
                       (off_t) (req->offset + done));
    if (r == -1) {
      if (errno == EINTR)
        continue;
      warn_errno ("export \"%s\": read of %" PRIu32 " bytes at offset %" PRIu64
                  " from %s", f->export_name, req->length, req->offset, f->log_url);
      return EIO;
    }
    if (r == 0) {
      /* The size was checked against the size at open: the file shrank. */
      warn ("export \"%s\": read of %" PRIu32 " bytes at offset %" PRIu64
            " from %s hit the end of the file after %zu bytes: the file "
            "shrank while it was served", f->export_name, req->length,
            req->offset, f->log_url, done);
      return EIO;
    }
    done += (size_t) r;
    fetcher_stats.web_bytes += (size_t) r;
  }
  fetcher_stats.web_requests++;
  return 0;
}

/* A read of a read-only export through the data pipe (data-path.h): the
 * page cache's pages go into the pipe, and no byte is copied here.
 * Returns true when the read was answered (with its data announced, or
 * EIO), false when it must go through the data area instead: the pipe
 * filled with this read's own bytes before it was complete, which only
 * pieces smaller than a page can do (the bytes already in are dropped). */
static bool
file_read_piped (struct fetcher *f, const struct fetcher_request *req)
{
  loff_t offset = (loff_t) req->offset;
  size_t done = 0;

  /* Each pass moves at least one byte, waits for room, or returns. */
  while (done < req->length) {
    ssize_t r = splice (image_fd, &offset, fetcher_pipe_fd, NULL, req->length - done,
                        SPLICE_F_NONBLOCK);
    if (r > 0) {
      done += (size_t) r;
      continue;
    }
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1 && errno == EPIPE) {
      /* The front-end closed the pipe: its client is gone. */
      debug ("the front-end closed the data pipe; exiting");
      exit (EXIT_SUCCESS);
    }
    if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd pfd = { .fd = fetcher_pipe_fd, .events = POLLOUT };
      int queued = 0;
      /* The front-end drains only what it was told about. */
      fetcher_flush_replies ();
      if (ioctl (fetcher_pipe_fd, FIONREAD, &queued) == 0 && queued >= 0 &&
          (size_t) queued <= done) {
        if (done > 0)
          fetcher_pipe_discard ((uint32_t) done);
        return false;
      }
      if (poll (&pfd, 1, -1) == -1 && errno != EINTR)
        fatal_errno ("poll");
      continue;
    }
    if (r == 0)
      warn ("export \"%s\": read of %" PRIu32 " bytes at offset %" PRIu64
            " from %s hit the end of the file after %zu bytes: the file "
            "shrank while it was served", f->export_name, req->length,
            req->offset, f->log_url, done);
    else
      warn_errno ("export \"%s\": read of %" PRIu32 " bytes at offset %" PRIu64
                  " from %s", f->export_name, req->length, req->offset, f->log_url);
    if (done > 0)
      fetcher_pipe_discard ((uint32_t) done);
    fetcher_reply (req->id, EIO);
    return true;
  }
  fetcher_stats.web_bytes += done;
  fetcher_stats.web_requests++;
  fetcher_reply_piped (req->id);
  return true;
}

static uint32_t
file_write (struct fetcher *f, const struct fetcher_request *req)
{
  size_t done = 0;

  /* As in file_read: progress each pass, and done < length. */
  while (done < req->length) {
    ssize_t r = pwrite (image_fd, req->data + done, req->length - done,
                        (off_t) (req->offset + done));
    if (r == -1) {
      int e = errno;
      if (e == EINTR)
        continue;
      warn_errno ("export \"%s\": write of %" PRIu32 " bytes at offset %" PRIu64
                  " to %s", f->export_name, req->length, req->offset, f->log_url);
      return write_error (e);
    }
    if (r == 0) {
      warn ("export \"%s\": write of %" PRIu32 " bytes at offset %" PRIu64
            " to %s made no progress", f->export_name, req->length, req->offset,
            f->log_url);
      return EIO;
    }
    done += (size_t) r;
  }
  if ((req->flags & IPC_FLAG_FUA) && fdatasync (image_fd) == -1) {
    warn_errno ("export \"%s\": fdatasync %s after a FUA write", f->export_name,
                f->log_url);
    return EIO;
  }
  return 0;
}

static uint32_t
file_flush (struct fetcher *f)
{
  if (fdatasync (image_fd) == -1) {
    warn_errno ("export \"%s\": fdatasync %s", f->export_name, f->log_url);
    return EIO;
  }
  return 0;
}

static void
file_serve (struct fetcher *f)
{
  struct fetcher_request req;

  /* Runs as long as the front-end sends requests; each request is served
   * before the next is read. */
  for (;;) {
    uint32_t error;
    int r = fetcher_next_request (f, &req);

    if (r == -1) {
      fetcher_flush_replies ();
      return;
    }
    if (r == 0) {
      struct pollfd pfd = { .fd = CHILD_FD_PEER, .events = POLLIN };
      fetcher_flush_replies ();   /* before waiting for more requests */
      if (poll (&pfd, 1, -1) == -1 && errno != EINTR)
        fatal_errno ("poll");
      continue;
    }

    switch (req.type) {
    case IPC_READ:
      if (req.length <= fetcher_pipe_read_max && file_read_piped (f, &req))
        continue;                    /* answered */
      error = file_read (f, &req);   /* straight into the data area */
      break;
    case IPC_WRITE:
      error = file_write (f, &req);
      break;
    case IPC_FLUSH:
      error = file_flush (f);
      break;
    case IPC_CACHE:
      error = 0;                     /* a local file: the page cache's job */
      break;
    default:
      /* fetcher_next_request returns only the types above. */
      fatal ("internal error: request type %u", req.type);
    }
    fetcher_reply (req.id, error);
  }
}

const struct fetcher_backend fetcher_file_backend = {
  .name = "file",
  .open_reads_untrusted = false,
  .init = NULL,
  .open = file_open,
  .serve = file_serve,
};
