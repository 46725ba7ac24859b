/*
 * frontend-fuzz.h: the front-end's client code (handshake.c,
 * transmission.c) driven as frontend.c would drive it, for the harnesses
 * fuzz-handshake, fuzz-transmission and fuzz-fetcher-replies.
 *
 * frontend-driver.c stands in for what lies below those files and for
 * frontend.c: output-queue.c (queued bytes are checked as they are queued,
 * their memory counted as output-queue.c counts it, the client reading
 * only when its queues hold their share), data-area.c (one area for the
 * whole run, so that each closed client can be checked to have given back
 * every reference), and clients.c (one client, no supervisor:
 * client_close, request_fetcher, drop_fetcher).  The parsers
 * (handshake-parse.c, request-parse.c) are the real ones.  It also plays
 * the rest of the world:
 *
 *   the client    bytes handed over in chunks, consumed as
 *                 client_process_input() does; the driver parses what
 *                 each call consumed on its own and records the options
 *                 and requests (with unique cookies written in).
 *   the output    every byte queued for the client is checked as it is
 *                 queued: a greeting, option replies that answer the
 *                 option sent, then NBD replies that answer a request
 *                 still waiting, exactly once, in the negotiated form.
 *   the fetcher   a socketpair: what the front-end queues towards it is
 *                 checked against what the real fetcher would accept
 *                 (fetcher.h's promise), and answers go through the real
 *                 transmission_read_fetcher().  Staging spans lent to
 *                 it are modelled in frontend-staging-model.c: what it
 *                 may stage, and what reads answered from them carry.
 */
#ifndef NBDCURLD_FRONTEND_FUZZ_H
#define NBDCURLD_FRONTEND_FUZZ_H

#include "frontend.h"
#include "fuzz.h"

/* What the fetchers the driver starts do when they open. */
struct fz_fetcher_setup {
  uint8_t open;               /* FZ_OPEN_* */
  uint32_t caps;              /* FETCHER_CAN_* */
  uint64_t size;              /* export size */
  bool pipe;                  /* a data pipe is attached */
  uint32_t pipe_read_max;     /* <= DATA_PIPE_READ_MAX */
};
enum { FZ_OPEN_OK, FZ_OPEN_ERROR, FZ_OPEN_NO_FETCHER, FZ_OPEN_DIES };

/* A request the fetcher has been sent and not answered (driver's view). */
struct fz_sent {
  uint64_t id;
  uint16_t type, flags;
  uint64_t offset;
  uint32_t length;
  uint64_t area_offset;
};
#define FZ_MAX_SENT 512

/* A staging span lent to the driver's fetcher (IPC_STAGE_GIVE), as the
 * driver's fetcher sees it: its to fill, or staged (IPC_STAGED) and the
 * front-end's to answer from; and what reads answered from it asked. */
struct fz_span {
  enum { FZ_SPAN_HELD = 1, FZ_SPAN_STAGED } state;
  uint64_t area_offset;
  uint64_t offset;            /* staged: the export's bytes it holds */
  uint32_t length;
  uint64_t asked;             /* bytes of the reads answered from it */
  uint64_t furthest;          /* one past the furthest of them */
};
/* More than the front-end lends (STAGE_SPANS): a surplus shows. */
#define FZ_MAX_SPANS 8

struct fz_world {
  struct client *c;
  struct fz_fetcher_setup setup;
  int fetcher_peer;           /* the fetcher's end, or -1 */
  bool spawn_requested;
  /* Requests sent to the fetcher and not yet answered by the driver. */
  struct fz_sent sent[FZ_MAX_SENT];
  unsigned nsent;
  /* How often the fetcher fails a request when the driver answers for it
   * (the client waits for replies, or at the end), per thousand. */
  unsigned fail_permille;
  /* Staging spans the front-end lent the fetcher, and not taken back by
   * its end. */
  struct fz_span spans[FZ_MAX_SPANS];
  unsigned nspans;
};
extern struct fz_world fz;

/* Start a world with this configuration: exports "" (writable), "ro"
 * (read-only, with a description) and a long name. */
void fz_begin (uint32_t frontend_flags, const struct fz_fetcher_setup *setup);
/* A new client: greeting queued, as accepted. */
void fz_client_greeted (void);
/* A new client whose GO for this export is being answered: structured replies (and
 * base:allocation) negotiated or not, a fetcher attached, and its
 * IPC_FETCHER_OPENED sent: afterwards the client is in transmission unless
 * the setup says otherwise. */
void fz_client_in_transmission (uint32_t export_index, bool structured, bool meta);
/* The same from 6 setup bytes: flags (1 structured, 2 base:allocation,
 * 4 multi-conn, >> 3: the export), the fetcher's capabilities
 * (FETCHER_CAN_*, staging among them; 0x80: a data pipe), the export size, the data area budget, how often the
 * fetcher fails (per 250), and the largest piped read (in 4 KiB). */
void fz_begin_transmission (struct fuzz_input *in);
/* Hand the client bytes and let it consume what it can; start fetchers it
 * asks for.  Returns false once the client is closed. */
bool fz_client_send (const uint8_t *data, size_t len, size_t chunk);
/* Let the client consume bytes it had to leave waiting. */
void fz_client_process (void);
/* The fetcher writes these bytes; the front-end reads them. */
void fz_fetcher_write (const void *data, size_t len);
/* A well-behaved fetcher answers up to n waiting requests (oldest first),
 * failing those whose id hashes to a value under fail_permille/1000. */
void fz_fetcher_answer (unsigned n, unsigned fail_permille);
/* The fetcher exits. */
void fz_fetcher_exit (void);
/* The bytes the fake fetcher puts in the data area for these export
 * offsets: at each end of a read's place, and all through a staged
 * span, so that a reply with another place's bytes shows. */
#define FZ_MARK_BYTES 64u
static inline uint8_t
fz_mark_byte (uint64_t export_offset)
{
  return (uint8_t) (export_offset * 131 + (export_offset >> 9) + 7);
}

/* Staging (frontend-staging-model.c).  The fetcher is gone: its spans
 * with it. */
void fz_stage_reset (void);
/* The front-end sends IPC_STAGE_GIVE: checked, and the span is the
 * fetcher's. */
void fz_stage_given (const struct ipc_header *h);
/* Before the front-end reads the last byte of an IPC_STAGE_WANTED or
 * IPC_STAGED from the fetcher: should it take it?  A STAGED it must take
 * fills its span with the marks of the bytes it names. */
bool fz_stage_before (const struct ipc_header *h);
/* After: it took the message, or ended the fetcher, as expected. */
void fz_stage_after (const struct ipc_header *h, bool expected);
/* A READ of count bytes at offset answered by the front-end with a copy
 * of the area at area_offset: from a staged span, at that offset's
 * place. */
void fz_stage_answered (uint64_t area_offset, uint64_t offset, uint32_t count);

/* Last checks: requests still waiting are answered (the fetcher exits if
 * need be), every request got its one reply, and closing the client gives
 * back every reference to the data area and pipe. */
void fz_end (void);

#endif
