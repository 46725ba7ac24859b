/*
 * ipc.h: sending and receiving internal messages (struct ipc_header and
 * exactly payload_len bytes).  These helpers move bytes and check framing
 * only; what a type means, and whether it is allowed now, is decided by the
 * receiving role's dispatch function.
 */
#ifndef NBDCURLD_IPC_H
#define NBDCURLD_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "child-fds.h"
#include "ipc-messages.h"
#include "keyholder-wire.h"
#include "script-values.h"

/* Write all of buf (blocking fd), retrying on EINTR and short writes. */
int write_full (int fd, const void *buf, size_t len);
/* Read exactly len bytes (blocking fd).  Returns 0, or -1 with errno set;
 * errno is 0 when the peer closed the stream before the first byte. */
int read_full (int fd, void *buf, size_t len);

/* Send a header and its payload (header.payload_len bytes) on a blocking
 * stream or pipe. */
int ipc_send (int fd, const struct ipc_header *h, const void *payload);

/* Receive one message on a blocking stream or pipe: the header, checked
 * against max_payload, then the payload into a buffer the caller frees.
 * Returns 0, or -1 (errno 0 for a clean EOF before the header, EPROTO for
 * a malformed or oversized message). */
int ipc_recv (int fd, struct ipc_header *h, uint8_t **payload, uint32_t max_payload);

/* SOCK_SEQPACKET control messages: one header per packet, no payload,
 * and up to IPC_MAX_FDS file descriptors.  ipc_recv_packet returns 0 and
 * sets *nfds, or -1 with errno 0 on EOF, EAGAIN when nothing is waiting,
 * EPROTO when the packet is not exactly one header with at most
 * IPC_MAX_FDS fds, EMFILE when it is but some of its descriptors did not
 * fit under our RLIMIT_NOFILE (then *h holds the header).  Every fd that
 * came is closed on an error. */
/* The most any packet carries: a fetcher's fds to the launcher. */
#define IPC_MAX_FDS LAUNCH_MAX_FDS
int ipc_send_packet (int fd, const struct ipc_header *h, const int *fds, unsigned nfds);
int ipc_recv_packet (int fd, struct ipc_header *h, int fds[IPC_MAX_FDS], unsigned *nfds);

/* SOCK_SEQPACKET messages with a payload, one per packet (the key
 * holder's socket, a fetcher's script channel): ipc_recv_datagram returns 0 with the payload in
 * payload (max_payload <= IPC_MAX_DATAGRAM_PAYLOAD), or -1 with errno 0 on
 * EOF, EAGAIN or EINTR, or EPROTO when the packet is shorter than a
 * header, its length disagrees with payload_len, it is larger than
 * max_payload allows, or it carries descriptors. */
#define IPC_MAX_DATAGRAM_PAYLOAD \
  (SCRIPT_VALUES_MAX_PAYLOAD > KEY_MAX_SIGNATURE ? SCRIPT_VALUES_MAX_PAYLOAD : KEY_MAX_SIGNATURE)
int ipc_send_datagram (int fd, const struct ipc_header *h, const void *payload);
int ipc_recv_datagram (int fd, struct ipc_header *h, uint8_t *payload, uint32_t max_payload);

/* Decode a header from exactly IPC_HEADER_SIZE bytes. */
void ipc_decode_header (const uint8_t *raw, struct ipc_header *h);

#endif
