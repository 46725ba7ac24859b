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

/* Export sizes worth trying: empty, odd, the request limit's
 * neighbourhood, and the largest. */
static const uint64_t sizes[] = {
  0, 1, 4096, 1024 * 1024, NBD_MAX_REQUEST_SIZE - 1, NBD_MAX_REQUEST_SIZE + 1,
  UINT64_C (1) << 40, UINT64_MAX,
};
static const uint32_t budgets[] = {
  MIN_CLIENT_MEMORY, 4 * DATA_AREA_CHUNK, DEFAULT_CLIENT_MEMORY, MAX_CLIENT_MEMORY,
};

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint8_t flags = fuzz_u8 (&in), caps = fuzz_u8 (&in), sz = fuzz_u8 (&in);
  uint8_t budget = fuzz_u8 (&in), fail = fuzz_u8 (&in), pipe_max = fuzz_u8 (&in);
  uint8_t piece = fuzz_u8 (&in);
  struct fz_fetcher_setup fs = {
    .open = FZ_OPEN_OK,
    .caps = caps & (FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA),
    .pipe = (caps & 0x80) != 0,
    .pipe_read_max = (uint32_t) pipe_max * 4096,
    .size = sizes[sz % (sizeof sizes / sizeof sizes[0])],
  };
  const uint8_t *p;
  size_t n;

  fz_begin ((flags & 4) ? FRONTEND_MULTI_CONN : 0, &fs);
  fe.config.client_memory = budgets[budget % (sizeof budgets / sizeof budgets[0])];
  fz.fail_permille = (unsigned) fail * 4;
  fz_client_in_transmission ((flags >> 3) % 3, flags & 1, flags & 2);
  n = fuzz_span (&in, fuzz_left (&in), &p);
  fz_client_send (p, n, 1 + (size_t) piece * 29);
  fz_end ();
  return 0;
}
