/*
 * fuzz-handshake: the NBD handshake (handshake.c) as a client drives it.
 *
 * Input: a setup byte (how the fetchers the client asks for open: fine,
 * with an error, not at all, or dying; their capabilities; a data pipe;
 * multi-conn), a byte for the size of the pieces the client's bytes
 * arrive in, then the client's bytes from its flags on.  A client that
 * gets to transmission may send requests too.
 *
 * Checked (frontend-driver.c): each call consumes a whole unit or
 * nothing; every option gets replies for that option only, ending in one
 * ACK or error, with the right INFO payloads and export flags; a fetcher
 * is asked for only for an export that exists and at most
 * NBD_MAX_FETCHER_SPAWNS times; no fatal(); references are balanced.
 */
#include "config-wire.h"
#include "data-path.h"
#include "frontend-fuzz.h"
#include "ipc-messages.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint8_t setup = fuzz_u8 (&in), piece = fuzz_u8 (&in);
  struct fz_fetcher_setup fs = {
    .open = setup & 3,
    .caps = (setup >> 2) & (FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA),
    .pipe = (setup & 0x20) != 0,
    .pipe_read_max = DATA_PIPE_READ_MAX,
    .size = (setup & 0x80) ? UINT64_C (1) << 40 : 1024 * 1024,
  };
  const uint8_t *p;
  size_t n;

  fz_begin ((setup & 0x40) ? FRONTEND_MULTI_CONN : 0, &fs);
  fz_client_greeted ();
  n = fuzz_span (&in, fuzz_left (&in), &p);
  fz_client_send (p, n, 1 + (size_t) piece * 33);
  fz_end ();
  return 0;
}
