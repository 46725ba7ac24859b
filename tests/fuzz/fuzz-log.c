/* fuzz-log.c: src/common/log.c for the harnesses (see fuzz.h). */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"

jmp_buf *fuzz_exit_jump;
char fuzz_fatal_message[256];

void
log_init (const char *role, bool verbose)
{
  (void) role;
  (void) verbose;
}

bool
log_verbose (void)
{
  /* True: debug() lines are formatted too, so their arguments are
   * checked as much as those of warnings. */
  return true;
}

void
log_set_style (enum log_style style)
{
  (void) style;
}

enum log_style
log_get_style (void)
{
  return LOG_STYLE_PLAIN;
}

size_t
log_prefix_now (char *buf, size_t size, enum log_level level)
{
  (void) level;
  if (size > 0)
    buf[0] = '\0';
  return 0;
}

/* Format the line as log.c would, into a buffer nobody reads. */
PRINTF_LIKE (1, 0) static void
format_line (const char *fmt, va_list ap)
{
  vsnprintf (fuzz_fatal_message, sizeof fuzz_fatal_message, fmt, ap);
}

__attribute__((noreturn)) static void
fatal_reached (void)
{
  if (fuzz_exit_jump == NULL) {
    fprintf (stderr, "fatal() on fuzz input: %s\n", fuzz_fatal_message);
    abort ();
  }
  longjmp (*fuzz_exit_jump, 1);
}

#define LOG_FUNCTION(name, then)                \
  void                                          \
  name (const char *fmt, ...)                   \
  {                                             \
    va_list ap;                                 \
    int e = errno;                              \
    va_start (ap, fmt);                         \
    format_line (fmt, ap);                      \
    va_end (ap);                                \
    errno = e;                                  \
    then;                                       \
  }

LOG_FUNCTION (fatal, fatal_reached ())
LOG_FUNCTION (fatal_errno, fatal_reached ())
LOG_FUNCTION (log_error, )
LOG_FUNCTION (warn, )
LOG_FUNCTION (warn_errno, )
LOG_FUNCTION (notice, )
LOG_FUNCTION (debug, )
LOG_FUNCTION (log_trace, )

/* ---- Input helpers (fuzz.h). ---- */

size_t
fuzz_span (struct fuzz_input *in, size_t n, const uint8_t **p)
{
  if (n > fuzz_left (in))
    n = fuzz_left (in);
  *p = in->data + in->pos;
  in->pos += n;
  return n;
}

/* Little-endian, zero-padded past the end. */
static uint64_t
take_number (struct fuzz_input *in, unsigned bytes)
{
  const uint8_t *p;
  size_t n = fuzz_span (in, bytes, &p), i;
  uint64_t v = 0;

  for (i = 0; i < n; i++)
    v |= (uint64_t) p[i] << (8 * i);
  return v;
}

uint8_t fuzz_u8 (struct fuzz_input *in) { return (uint8_t) take_number (in, 1); }
uint16_t fuzz_u16 (struct fuzz_input *in) { return (uint16_t) take_number (in, 2); }
uint32_t fuzz_u32 (struct fuzz_input *in) { return (uint32_t) take_number (in, 4); }
uint64_t fuzz_u64 (struct fuzz_input *in) { return take_number (in, 8); }

int
fuzz_memfd (const char *name)
{
  int fd = memfd_create (name, MFD_CLOEXEC);
  if (fd == -1) {
    perror ("memfd_create");
    abort ();
  }
  return fd;
}

void
fuzz_memfd_fill (int fd, const void *data, size_t len)
{
  if (ftruncate (fd, 0) == -1 || pwrite (fd, data, len, 0) != (ssize_t) len ||
      lseek (fd, 0, SEEK_SET) != 0) {
    perror ("memfd");
    abort ();
  }
}
