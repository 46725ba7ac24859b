/*
 * fuzz.h: what the libFuzzer harnesses in tests/fuzz/ share.
 *
 * FUZZ_CHECK is the harnesses' assertion: a property of the code under
 * test that failed.  It aborts with the harness's own message, which
 * libFuzzer reports as a crash and saves the input for.
 *
 * fuzz-log.c replaces src/common/log.c in every harness: lines are formatted
 * (so a bad format argument still shows) but not written, and fatal()
 * either returns to the harness (fuzz_fatal_expected(), where a real
 * process would exit on purpose) or aborts (where a fatal() from
 * untrusted input would take down every client of the process).
 */
#ifndef NBDCURLD_FUZZ_H
#define NBDCURLD_FUZZ_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond, ...)                                           \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf (stderr, "fuzz check failed at %s:%d: %s: ", __FILE__,    \
               __LINE__, #cond);                                        \
      fprintf (stderr, __VA_ARGS__);                                    \
      fputc ('\n', stderr);                                             \
      abort ();                                                         \
    }                                                                   \
  } while (0)

/* Where fatal() (and, in harnesses that redirect it, exit()) goes:
 * NULL means nowhere, and fatal() aborts. */
extern jmp_buf *fuzz_exit_jump;
/* The message of the last fatal() that jumped there. */
extern char fuzz_fatal_message[256];

/* A reader of the fuzz input: numbers and spans that run out gracefully
 * (zeroes and empty spans past the end), so a harness can take its setup
 * and operations from any input without checking every step. */
struct fuzz_input {
  const uint8_t *data;
  size_t len, pos;
};
uint8_t fuzz_u8 (struct fuzz_input *in);
uint16_t fuzz_u16 (struct fuzz_input *in);
uint32_t fuzz_u32 (struct fuzz_input *in);
uint64_t fuzz_u64 (struct fuzz_input *in);
/* Up to n bytes (fewer at the end); returns how many. */
size_t fuzz_span (struct fuzz_input *in, size_t n, const uint8_t **p);
static inline size_t
fuzz_left (const struct fuzz_input *in)
{
  return in->len - in->pos;
}

/* A memfd holding exactly these bytes, positioned at its start: the
 * harnesses' stand-in for a pipe or socket that a blocking reader reads
 * to the end (never blocks, no capacity limit). */
int fuzz_memfd (const char *name);
void fuzz_memfd_fill (int fd, const void *data, size_t len);

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

#endif
