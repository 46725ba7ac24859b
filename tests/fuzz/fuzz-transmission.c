/*
 * fuzz-transmission: NBD requests (transmission.c) from a client that has
 * chosen an export, with a well-behaved fetcher that answers when the
 * client waits and at the end, failing some requests.
 *
 * Input: 6 setup bytes (structured replies, base:allocation, which
 * export, the fetcher's capabilities and data pipe, the export's size,
 * the client's data area budget, how often the fetcher fails), a byte
 * for the size of the pieces, then the client's bytes: request headers
 * and write data.  The driver writes a unique cookie into every request.
 *
 * Checked (frontend-driver.c): every request but NBD_CMD_DISC gets
 * exactly one well-formed reply in the negotiated form (read data of the
 * right length, from that read's place in the data area); what reaches
 * the fetcher is what fetcher.c accepts and what the client asked for,
 * a write's data included; the data area is given back exactly.
 */
#include "frontend-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  const uint8_t *p;
  size_t n;
  uint8_t piece;

  fz_begin_transmission (&in);
  piece = fuzz_u8 (&in);
  n = fuzz_span (&in, fuzz_left (&in), &p);
  fz_client_send (p, n, 1 + (size_t) piece * 29);
  fz_end ();
  return 0;
}
