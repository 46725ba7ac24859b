/* unit-fetcher-request-parse.c: the fetcher's reading of the front-end's
 * requests (src/fetcher/fetcher-request-parse.c) against good and hostile
 * headers, TAP output.  Each case says whether the request must pass;
 * those marked "(its own check)" pass the message table (ipc-table.c)
 * and are refused only by a check of the parser's own. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "data-path.h"
#include "fetcher-request-parse.h"
#include "ipc-messages.h"
#include "ipc.h"
#include "limits-nbd.h"
#include "limits-staging.h"
#include "unit.h"
#include "wire.h"

#define EXPORT_SIZE (UINT64_C (1) << 40)

/* The data area: addresses only, nothing here reads or writes it. */
static uint8_t *area;
#define AREA area

static struct fetcher_request_rules read_only = { .size = EXPORT_SIZE };
static struct fetcher_request_rules writable = {
  .size = EXPORT_SIZE, .can = FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA,
};
static struct fetcher_request_rules write_no_fua = {
  .size = EXPORT_SIZE, .can = FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH,
};

/* h's bytes as the front-end sends them: its fields in order, native. */
static void
encode (const struct ipc_header *h, uint8_t raw[IPC_HEADER_SIZE])
{
  struct writer w;

  writer_init (&w, raw, IPC_HEADER_SIZE);
  PUT (writer_put_bytes (&w, &h->type, sizeof h->type));
  PUT (writer_put_bytes (&w, &h->flags, sizeof h->flags));
  PUT (writer_put_bytes (&w, &h->payload_len, sizeof h->payload_len));
  PUT (writer_put_bytes (&w, &h->id, sizeof h->id));
  PUT (writer_put_bytes (&w, &h->offset, sizeof h->offset));
  PUT (writer_put_bytes (&w, &h->length, sizeof h->length));
  PUT (writer_put_bytes (&w, &h->error, sizeof h->error));
  PUT (writer_put_bytes (&w, &h->area_offset, sizeof h->area_offset));
  if (w.pos != IPC_HEADER_SIZE) {
    printf ("Bail out! a header of %zu bytes\n", w.pos);
    exit (1);
  }
}

static char why[FETCHER_REQUEST_WHY_MAX];

/* Does the parser take h under rules?  A refusal must leave the request
 * as it was and say why. */
static bool
takes (const struct fetcher_request_rules *rules, const struct ipc_header *h,
       struct fetcher_request *req)
{
  uint8_t raw[IPC_HEADER_SIZE];
  struct fetcher_request before;

  encode (h, raw);
  memset (req, 0x5a, sizeof *req);
  memcpy (&before, req, sizeof before);
  why[0] = '\0';
  if (fetcher_request_parse (rules, raw, req, why, sizeof why) == 0)
    return true;
  /* A refusal that changed the request or said nothing counts as taken:
   * the case fails. */
  return memcmp (&before, req, sizeof before) != 0 || why[0] == '\0';
}

static bool
accepted (const struct fetcher_request_rules *rules, const struct ipc_header *h)
{
  struct fetcher_request req;
  return takes (rules, h, &req);
}

static struct ipc_header
read_of (uint64_t offset, uint32_t length, uint64_t area_offset)
{
  return (struct ipc_header) { .type = IPC_READ, .id = 7, .offset = offset,
                               .length = length, .area_offset = area_offset };
}

static void
good (void)
{
  struct fetcher_request req;
  struct ipc_header h = read_of (UINT64_C (0x1122334455), 4096, 8192);

  h.id = UINT64_C (0x0102030405060708);
  CHECK (takes (&read_only, &h, &req) && req.type == IPC_READ && req.flags == 0 &&
         req.id == UINT64_C (0x0102030405060708) && req.offset == UINT64_C (0x1122334455) &&
         req.length == 4096 && req.data == AREA + 8192 && !req.auth_retried,
         "READ: passes, every field as sent, data at its place in the area");
  h = read_of (EXPORT_SIZE - 4096, 4096, 0);
  CHECK (accepted (&read_only, &h), "READ up to the export's end: passes");
  h = read_of (0, NBD_MAX_REQUEST_SIZE, DATA_AREA_SIZE - NBD_MAX_REQUEST_SIZE);
  CHECK (accepted (&read_only, &h), "largest READ at the area's last place: passes");
  h = (struct ipc_header) { .type = IPC_WRITE, .flags = IPC_FLAG_FUA, .id = 9,
                            .offset = 512, .length = 512, .area_offset = 4096 };
  CHECK (takes (&writable, &h, &req) && req.type == IPC_WRITE &&
         req.flags == IPC_FLAG_FUA && req.data == AREA + 4096,
         "WRITE with FUA where the export has FUA: passes");
  h.flags = 0;
  CHECK (accepted (&write_no_fua, &h), "WRITE without FUA where there is none: passes");
  h = (struct ipc_header) { .type = IPC_FLUSH, .id = 3 };
  CHECK (takes (&writable, &h, &req) && req.type == IPC_FLUSH && req.id == 3 &&
         req.offset == 0 && req.length == 0 && req.data == NULL,
         "FLUSH where the export flushes: passes, without data");
  h = (struct ipc_header) { .type = IPC_CACHE, .id = 4, .offset = 1, .length = 65536 };
  CHECK (takes (&read_only, &h, &req) && req.type == IPC_CACHE && req.data == NULL &&
         req.offset == 1 && req.length == 65536, "CACHE: passes, without data");
  {
    const struct fetcher_request_rules huge = { .size = UINT64_MAX, .data_area = AREA };
    h = read_of (UINT64_MAX - 4096, 4096, 0);
    CHECK (accepted (&huge, &h), "READ ending at 2^64 - 1 of the largest export: passes");
  }
}

static void
ranges (void)
{
  struct ipc_header h;
  const struct fetcher_request_rules empty = { .size = 0, .data_area = AREA };

  h = read_of (0, 0, 0);
  CHECK (!accepted (&read_only, &h), "READ of 0 bytes: refused (its own check)");
  h = read_of (0, NBD_MAX_REQUEST_SIZE + 1, 0);
  CHECK (!accepted (&read_only, &h), "READ over the request limit: refused (its own check)");
  CHECK (strstr (why, "allowed: 1 to") != NULL, "and the refusal names the limit");
  h = read_of (EXPORT_SIZE - 4095, 4096, 0);
  CHECK (!accepted (&read_only, &h), "READ past the end: refused (its own check)");
  CHECK (strstr (why, "beyond the end") != NULL && strstr (why, "1099511627776") != NULL,
         "and the refusal names the export's size");
  h = read_of (EXPORT_SIZE + 1, 1, 0);
  CHECK (!accepted (&read_only, &h),
         "READ starting past the end: refused (its own check: size - offset would wrap)");
  h = read_of (UINT64_MAX - 100, 4096, 0);
  CHECK (!accepted (&read_only, &h), "READ whose offset + length wraps: refused");
  h = read_of (0, 1, 0);
  CHECK (!accepted (&empty, &h), "any READ of an empty export: refused");
  h = read_of (0, 4096, DATA_AREA_SIZE - 4095);
  CHECK (!accepted (&read_only, &h), "READ running off the data area: refused (its own check)");
  CHECK (strstr (why, "outside the area") != NULL, "and the refusal says so");
  h = read_of (0, 4096, UINT64_MAX);
  CHECK (!accepted (&read_only, &h), "READ at data area offset 2^64 - 1: refused");
  h = (struct ipc_header) { .type = IPC_WRITE, .offset = EXPORT_SIZE, .length = 1 };
  CHECK (!accepted (&writable, &h), "WRITE at the end: refused (its own check)");
  h = (struct ipc_header) { .type = IPC_CACHE, .offset = EXPORT_SIZE - 1, .length = 2 };
  CHECK (!accepted (&read_only, &h), "CACHE past the end: refused (its own check)");
}

static void
permissions (void)
{
  struct ipc_header h;

  h = (struct ipc_header) { .type = IPC_WRITE, .offset = 0, .length = 512 };
  CHECK (!accepted (&read_only, &h), "WRITE to a read-only export: refused (its own check)");
  CHECK (strcmp (why, "WRITE to a read-only export") == 0, "and the refusal says so");
  h.flags = IPC_FLAG_FUA;
  CHECK (!accepted (&write_no_fua, &h),
         "WRITE with FUA where the export has none: refused (its own check)");
  CHECK (strcmp (why, "WRITE with unknown flags 0x1") == 0, "and the refusal names the flag");
  h = (struct ipc_header) { .type = IPC_FLUSH };
  CHECK (!accepted (&read_only, &h), "FLUSH where the export cannot: refused (its own check)");
  CHECK (strcmp (why, "FLUSH on an export that cannot flush") == 0, "and the refusal says so");
}

static void
forms (void)
{
  struct ipc_header h;

  h = read_of (0, 512, 0);
  h.flags = IPC_FLAG_FUA;
  CHECK (!accepted (&writable, &h), "READ with a flag: refused");
  h = read_of (0, 512, 0);
  h.payload_len = 1;
  CHECK (!accepted (&read_only, &h), "READ with a payload: refused");
  h = read_of (0, 512, 0);
  h.error = 5;
  CHECK (!accepted (&read_only, &h), "READ with an error: refused");
  h = (struct ipc_header) { .type = IPC_FLUSH, .offset = 1 };
  CHECK (!accepted (&writable, &h), "FLUSH with an offset: refused");
  h = (struct ipc_header) { .type = IPC_FLUSH, .length = 1 };
  CHECK (!accepted (&writable, &h), "FLUSH with a length: refused");
  h = (struct ipc_header) { .type = IPC_FLUSH, .area_offset = 1 };
  CHECK (!accepted (&writable, &h), "FLUSH with a place in the area: refused");
  h = (struct ipc_header) { .type = IPC_CACHE, .length = 1, .area_offset = 4096 };
  CHECK (!accepted (&read_only, &h), "CACHE with a place in the area: refused");
  h = (struct ipc_header) { .type = IPC_REPLY, .id = 1 };
  CHECK (!accepted (&writable, &h), "a REPLY (the fetcher's own type): refused");
  h = (struct ipc_header) { .type = IPC_FETCHER_OPEN };
  CHECK (!accepted (&writable, &h), "the supervisor's FETCHER_OPEN: refused");
  h = (struct ipc_header) { .type = 0xffff, .length = 1 };
  CHECK (!accepted (&writable, &h), "an unknown type: refused");
  CHECK (strstr (why, "65535") != NULL, "and the refusal names it");
}

/* A staging span given (back): only to a fetcher that stages, a whole
 * span on a chunk's boundary inside the area, reads reaching no further
 * than the export's end. */
static void
staging (void)
{
  struct fetcher_request_rules stager = read_only;
  struct fetcher_request req;
  struct ipc_header h = {
    .type = IPC_STAGE_GIVE, .id = 5000, .offset = EXPORT_SIZE, .length = STAGE_SPAN_BYTES,
    .area_offset = DATA_AREA_SIZE - STAGE_SPAN_BYTES,
  };

  stager.can = FETCHER_CAN_STAGE;
  CHECK (takes (&stager, &h, &req) && req.type == IPC_STAGE_GIVE && req.id == 5000 &&
         req.offset == EXPORT_SIZE && req.data == AREA + DATA_AREA_SIZE - STAGE_SPAN_BYTES,
         "STAGE_GIVE of the area's last span, reads up to the end: passes");
  CHECK (!accepted (&read_only, &h), "STAGE_GIVE to a fetcher that does not stage: refused");
  h.offset = EXPORT_SIZE + 1;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE of reads past the end: refused");
  h.offset = 0;
  h.length = STAGE_SPAN_BYTES - 1;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE of less than a span: refused");
  h.length = STAGE_SPAN_BYTES;
  h.area_offset = DATA_AREA_SIZE - STAGE_SPAN_BYTES + DATA_AREA_CHUNK;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE of a span past the area: refused");
  h.area_offset = DATA_AREA_CHUNK / 2;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE off a chunk's boundary: refused");
  h.area_offset = 0;
  h.flags = 1;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE with flags: refused");
  h.flags = 0;
  h.area_offset = UINT64_MAX - DATA_AREA_CHUNK + 1;
  CHECK (!accepted (&stager, &h), "STAGE_GIVE at an area offset that would wrap: refused");
}

static void
words (void)
{
  uint8_t raw[IPC_HEADER_SIZE];
  struct fetcher_request req;
  char small[8];
  const struct ipc_header h = { .type = IPC_WRITE, .length = 1 };

  encode (&h, raw);
  memset (small, 'x', sizeof small);
  CHECK (fetcher_request_parse (&read_only, raw, &req, small, sizeof small) == -1 &&
         memchr (small, '\0', sizeof small) != NULL && strncmp (small, "WRITE t", 7) == 0,
         "why cut to the room given, and ended");
}

int
main (void)
{
  area = mmap (NULL, DATA_AREA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
  if (area == MAP_FAILED) {
    printf ("Bail out! cannot reserve the data area's addresses\n");
    return 1;
  }
  read_only.data_area = writable.data_area = write_no_fua.data_area = area;
  good ();
  ranges ();
  permissions ();
  forms ();
  staging ();
  words ();
  return UNIT_END ();
}
