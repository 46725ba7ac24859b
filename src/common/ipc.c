/* ipc.c: see ipc.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipc.h"
#include "ipc-messages.h"
#include "wire.h"

int
write_full (int fd, const void *buf, size_t len)
{
  const uint8_t *p = buf;

  while (len > 0) {
    ssize_t r = write (fd, p, len);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += r;
    len -= (size_t) r;            /* cannot underflow: r <= len */
  }
  return 0;
}

int
read_full (int fd, void *buf, size_t len)
{
  uint8_t *p = buf;
  size_t got = 0;

  while (got < len) {
    ssize_t r = read (fd, p + got, len - got);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0) {
      errno = got == 0 ? 0 : EPROTO;
      return -1;
    }
    got += (size_t) r;
  }
  return 0;
}

void
ipc_decode_header (const uint8_t *raw, struct ipc_header *h)
{
  /* Same host on both ends: native order, fixed layout checked by
   * static_assert in ipc-messages.h. */
  memcpy (h, raw, IPC_HEADER_SIZE);
}

int
ipc_send (int fd, const struct ipc_header *h, const void *payload)
{
  struct iovec iov[2] = {
    { .iov_base = (void *) h, .iov_len = IPC_HEADER_SIZE },
    { .iov_base = (void *) payload, .iov_len = h->payload_len },
  };
  int n = h->payload_len > 0 ? 2 : 1;
  size_t total = IPC_HEADER_SIZE + (size_t) h->payload_len;
  ssize_t r;

  do
    r = writev (fd, iov, n);
  while (r == -1 && errno == EINTR);
  if (r == -1)
    return -1;
  if ((size_t) r == total)
    return 0;

  /* Short write: finish the rest piecewise. */
  if ((size_t) r < IPC_HEADER_SIZE) {
    if (write_full (fd, (const uint8_t *) h + r, IPC_HEADER_SIZE - (size_t) r) == -1)
      return -1;
    r = IPC_HEADER_SIZE;
  }
  return write_full (fd, (const uint8_t *) payload + ((size_t) r - IPC_HEADER_SIZE),
                     total - (size_t) r);
}

int
ipc_recv (int fd, struct ipc_header *h, uint8_t **payload, uint32_t max_payload)
{
  uint8_t raw[IPC_HEADER_SIZE];

  *payload = NULL;
  if (read_full (fd, raw, sizeof raw) == -1)
    return -1;
  ipc_decode_header (raw, h);
  if (h->payload_len > max_payload) {
    errno = EPROTO;
    return -1;
  }
  if (h->payload_len == 0)
    return 0;
  *payload = malloc (h->payload_len);
  if (*payload == NULL)
    return -1;
  if (read_full (fd, *payload, h->payload_len) == -1) {
    int e = errno == 0 ? EPROTO : errno;
    free (*payload);
    *payload = NULL;
    errno = e;
    return -1;
  }
  return 0;
}

int
ipc_send_packet (int fd, const struct ipc_header *h, const int *fds, unsigned nfds)
{
  union {
    char buf[CMSG_SPACE (IPC_MAX_FDS * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = (void *) h, .iov_len = IPC_HEADER_SIZE };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  ssize_t r;

  if (h->payload_len != 0 || nfds > IPC_MAX_FDS) {
    errno = EINVAL;
    return -1;
  }
  if (nfds > 0) {
    struct cmsghdr *cmsg;
    memset (&control, 0, sizeof control);
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE (nfds * sizeof (int));
    cmsg = CMSG_FIRSTHDR (&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN (nfds * sizeof (int));
    memcpy (CMSG_DATA (cmsg), fds, nfds * sizeof (int));
  }
  do
    r = sendmsg (fd, &msg, MSG_NOSIGNAL);
  while (r == -1 && errno == EINTR);
  if (r == -1)
    return -1;
  if (r != IPC_HEADER_SIZE) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

int
ipc_recv_packet (int fd, struct ipc_header *h, int fds[IPC_MAX_FDS], unsigned *nfds)
{
  union {
    /* Room for more fds than allowed, so a peer that sends more is
     * caught (and every one of them closed) rather than truncated. */
    char buf[CMSG_SPACE (4 * IPC_MAX_FDS * sizeof (int))];
    struct cmsghdr align;
  } control;
  uint8_t raw[IPC_HEADER_SIZE + 1];
  struct iovec iov = { .iov_base = raw, .iov_len = sizeof raw };
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1,
    .msg_control = control.buf, .msg_controllen = sizeof control.buf,
  };
  struct cmsghdr *cmsg;
  int received[4 * IPC_MAX_FDS];
  unsigned n = 0, i;
  bool bad = false;
  ssize_t r;

  *nfds = 0;
  do
    r = recvmsg (fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (r == -1 && errno == EINTR);
  if (r == -1)
    return -1;

  for (cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
      size_t bytes = cmsg->cmsg_len - CMSG_LEN (0);
      size_t off;
      for (off = 0; off + sizeof (int) <= bytes; off += sizeof (int)) {
        int passed;
        memcpy (&passed, CMSG_DATA (cmsg) + off, sizeof passed);
        if (n < sizeof received / sizeof received[0])
          received[n++] = passed;
        else {
          close (passed);
          bad = true;
        }
      }
    }
    else
      bad = true;
  }
  if (r == 0 && n == 0) {
    errno = 0;
    return -1;
  }
  memset (h, 0, sizeof *h);
  if (r == IPC_HEADER_SIZE)
    ipc_decode_header (raw, h);
  if (bad || n > IPC_MAX_FDS || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
      r != IPC_HEADER_SIZE || h->payload_len != 0) {
    /* The kernel drops the descriptors that would pass our RLIMIT_NOFILE
     * and says so with MSG_CTRUNC alone: a well-formed message we had no
     * room for, which the receiver may answer for that one peer. */
    bool no_room = !bad && n <= IPC_MAX_FDS && r == IPC_HEADER_SIZE &&
      h->payload_len == 0 && (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == MSG_CTRUNC;
    for (i = 0; i < n; i++)
      close (received[i]);
    errno = no_room ? EMFILE : EPROTO;
    return -1;
  }
  for (i = 0; i < n; i++)
    fds[i] = received[i];
  *nfds = n;
  return 0;
}

int
ipc_send_datagram (int fd, const struct ipc_header *h, const void *payload)
{
  struct iovec iov[2] = {
    { .iov_base = (void *) h, .iov_len = IPC_HEADER_SIZE },
    { .iov_base = (void *) payload, .iov_len = h->payload_len },
  };
  struct msghdr msg = { .msg_iov = iov, .msg_iovlen = h->payload_len > 0 ? 2 : 1 };
  ssize_t r;

  if (h->payload_len > IPC_MAX_DATAGRAM_PAYLOAD) {
    errno = E2BIG;
    return -1;
  }
  do
    r = sendmsg (fd, &msg, MSG_NOSIGNAL);
  while (r == -1 && errno == EINTR);
  if (r == -1)
    return -1;
  /* A SOCK_SEQPACKET packet goes whole or not at all. */
  return 0;
}

int
ipc_recv_datagram (int fd, struct ipc_header *h, uint8_t *payload, uint32_t max_payload)
{
  uint8_t buf[IPC_HEADER_SIZE + IPC_MAX_DATAGRAM_PAYLOAD];
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int) * IPC_MAX_FDS)];
  } control;
  struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1,
    .msg_control = control.buf, .msg_controllen = sizeof control.buf,
  };
  struct cmsghdr *cm;
  bool fds_came = false;
  ssize_t n = recvmsg (fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

  if (n == -1)
    return -1;
  if (n == 0) {
    errno = 0;
    return -1;
  }
  /* Nobody sends descriptors here: close any that came, then refuse. */
  for (cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t k, nfd = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (k = 0; k < nfd; k++) {
        int f;
        memcpy (&f, CMSG_DATA (cm) + k * sizeof f, sizeof f);
        close (f);
      }
      fds_came = true;
    }
  if (fds_came || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
      (size_t) n < IPC_HEADER_SIZE || max_payload > IPC_MAX_DATAGRAM_PAYLOAD) {
    errno = EPROTO;
    return -1;
  }
  ipc_decode_header (buf, h);
  if (h->payload_len > max_payload || (size_t) n - IPC_HEADER_SIZE != h->payload_len) {
    errno = EPROTO;
    return -1;
  }
  memcpy (payload, buf + IPC_HEADER_SIZE, h->payload_len);
  return 0;
}
