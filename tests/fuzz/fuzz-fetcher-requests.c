/*
 * fuzz-fetcher-requests: the fetcher's reading of requests from the
 * front-end (fetcher_next_request in src/fetcher/fetcher.c, over the
 * checks of fetcher_request_parse in src/fetcher/fetcher-request-parse.c,
 * which tests/unit/unit-fetcher-request-parse.c tests case by case).
 *
 * fetcher.c is compiled into this file, so that its static input buffer
 * can be emptied between inputs and its exit() (a front-end that breaks
 * the rules ends the fetcher, on purpose) returns here instead; the
 * parser is linked as it is.
 *
 * Input: the export's size (a choice of interesting ones), what it can do
 * (FETCHER_CAN_*), then the bytes the front-end sends, read through a
 * real socket at CHILD_FD_PEER until end of file.
 *
 * Checked, against a reading of fetcher.h's promise written here: every
 * request handed to a backend is one that promise allows (known type,
 * flags, length, inside the export and the data area, writes only when
 * writable) with the fields as sent; the fetcher exits exactly when a
 * header breaks that promise or the stream ends inside one.
 */
#include <stdlib.h>

#include "child-fds.h"
#include "data-path.h"
#include "fuzz.h"
#include "ipc-messages.h"
#include "limits-nbd.h"
#include "limits-staging.h"

/* fetcher.c's exit() comes here. */
static int exit_status;
__attribute__((noreturn)) static void
fuzz_exit (int status)
{
  exit_status = status;
  if (fuzz_exit_jump == NULL)
    abort ();
  longjmp (*fuzz_exit_jump, 1);
}
#define exit(status) fuzz_exit (status)
#include "fetcher.c"
#undef exit

#include <signal.h>
#include <sys/socket.h>

static const uint64_t sizes[] = {
  0, 1, 4096, NBD_MAX_REQUEST_SIZE, UINT64_C (1) << 40, UINT64_MAX - 1, UINT64_MAX,
};

/* What fetcher.h promises the backends about a request. */
static bool
allowed (const struct ipc_header *h, const struct fetcher *f)
{
  unsigned __int128 end = (unsigned __int128) h->offset + h->length;
  unsigned __int128 area_end = (unsigned __int128) h->area_offset + h->length;

  if (h->payload_len != 0 || h->error != 0)
    return false;
  switch (h->type) {
  case IPC_READ:
    return h->flags == 0 && h->length >= 1 && h->length <= NBD_MAX_REQUEST_SIZE &&
      end <= f->size && area_end <= DATA_AREA_SIZE;
  case IPC_WRITE:
    return (f->can & FETCHER_CAN_WRITE) &&
      (h->flags & ~((f->can & FETCHER_CAN_FUA) ? IPC_FLAG_FUA : 0)) == 0 &&
      h->length >= 1 && h->length <= NBD_MAX_REQUEST_SIZE &&
      end <= f->size && area_end <= DATA_AREA_SIZE;
  case IPC_FLUSH:
    return (f->can & FETCHER_CAN_FLUSH) && h->flags == 0 && h->offset == 0 &&
      h->length == 0 && h->area_offset == 0;
  case IPC_CACHE:
    return h->flags == 0 && h->length >= 1 && h->length <= NBD_MAX_REQUEST_SIZE &&
      end <= f->size && h->area_offset == 0;
  case IPC_STAGE_GIVE:
    return (f->can & FETCHER_CAN_STAGE) && h->flags == 0 && h->length == STAGE_SPAN_BYTES &&
      h->area_offset % DATA_AREA_CHUNK == 0 && area_end <= DATA_AREA_SIZE &&
      h->offset <= f->size;
  default:
    return false;
  }
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  if (fcntl (CHILD_FD_PEER, F_GETFD) != -1) {
    fprintf (stderr, "fd %d is taken: this harness needs it\n", CHILD_FD_PEER);
    abort ();
  }
  signal (SIGPIPE, SIG_IGN);           /* as child_start() does */
  /* Addresses only: the requests' data is never touched here. */
  fetcher_data_area = mmap (NULL, DATA_AREA_SIZE, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (fetcher_data_area == MAP_FAILED)
    abort ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint8_t which = fuzz_u8 (&in), can = fuzz_u8 (&in);
  static struct fetcher f;
  struct fetcher_request req;
  const uint8_t *stream;
  size_t len;
  volatile size_t taken = 0;            /* read after a longjmp */
  jmp_buf jump;
  int sv[2];

  f.size = which < sizeof sizes / sizeof sizes[0] ? sizes[which] : fuzz_u64 (&in);
  f.can = can & (FETCHER_CAN_WRITE | FETCHER_CAN_FLUSH | FETCHER_CAN_FUA | FETCHER_CAN_STAGE);
  len = fuzz_span (&in, fuzz_left (&in), &stream);

  /* The first time, the socket may get CHILD_FD_PEER itself. */
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
      sv[1] == CHILD_FD_PEER ||
      (sv[0] != CHILD_FD_PEER && (dup2 (sv[0], CHILD_FD_PEER) == -1 || close (sv[0]) == -1)))
    abort ();
  /* The socket's buffer holds far more than libFuzzer's inputs. */
  if (len > 0 && send (sv[1], stream, len, MSG_DONTWAIT) != (ssize_t) len)
    abort ();
  close (sv[1]);                        /* then end of file */
  input.start = input.end = 0;

  fuzz_exit_jump = &jump;
  if (setjmp (jump) == 0) {
    int r, waits = 0;
    /* 0 is "nothing complete yet": the socket may not show its end at
     * once (seen in long runs), so wait for it, briefly. */
    while ((r = fetcher_next_request (&f, &req)) == 1 ||
           (r == 0 && waits++ < 10 &&
            poll (&(struct pollfd) { .fd = CHILD_FD_PEER, .events = POLLIN }, 1, 100) >= 0)) {
      if (r == 0)
        continue;
      struct ipc_header h;
      FUZZ_CHECK (len - taken >= IPC_HEADER_SIZE, "a request from %zu bytes", len - taken);
      ipc_decode_header (stream + taken, &h);
      taken += IPC_HEADER_SIZE;
      FUZZ_CHECK (allowed (&h, &f), "request type %u flags 0x%x of %u bytes at %llu "
                  "(area %llu) accepted", h.type, h.flags, h.length,
                  (unsigned long long) h.offset, (unsigned long long) h.area_offset);
      FUZZ_CHECK (req.type == h.type && req.flags == h.flags && req.id == h.id &&
                  req.offset == h.offset && req.length == h.length &&
                  req.data == (h.type == IPC_FLUSH || h.type == IPC_CACHE ? NULL
                               : fetcher_data_area + h.area_offset),
                  "request fields differ from those sent");
    }
    FUZZ_CHECK (r == -1 && taken == len, "stopped at %zu of %zu bytes (%d)", taken, len, r);
  }
  else {
    FUZZ_CHECK (exit_status == EXIT_FAILURE, "exit status %d", exit_status);
    if (len - taken >= IPC_HEADER_SIZE) {
      struct ipc_header h;
      ipc_decode_header (stream + taken, &h);
      FUZZ_CHECK (!allowed (&h, &f), "a good request (type %u) refused", h.type);
    }
    else
      FUZZ_CHECK (len > taken, "exit after the last whole request");
  }
  fuzz_exit_jump = NULL;
  return 0;
}
