/*
 * fuzz-url-answer: the supervisor's reading of the URL checker's answer
 * (parse_url_answer in src/supervisor/url-answer-parse.c, after ipc_recv
 * as urlcheck-client.c reads it).  The URL checker runs libcurl on the
 * URLs given: the supervisor treats its answer as untrusted.
 *
 * Input: the bytes on the checker's socket, up to end of file.
 *
 * Checked, against a reading of struct url_checked_wire written here:
 * the verdict (accepted, refused, malformed, no answer), and for a valid
 * answer the strings (exact lengths, no NUL inside, a file: path that is
 * absolute, a script URL only for an accepted one), the kind and the
 * password flag.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "ipc-messages.h"
#include "ipc.h"
#include "limits-strings.h"
#include "url-answer-parse.h"
#include "url-check-wire.h"

static int sock = -1;

static uint32_t
ne32 (const uint8_t *p)
{
  uint32_t v;
  memcpy (&v, p, 4);
  return v;
}

/* The verdict the answer deserves. */
static enum url_answer
expected (const uint8_t *d, size_t len)
{
  const size_t max = sizeof (struct url_checked_wire) + MAX_URL_MESSAGE +
    2 * MAX_LOG_URL_LENGTH + MAX_PATH_LENGTH;
  const uint8_t *p = d + IPC_HEADER_SIZE;
  uint32_t plen, flags, kind, mlen, llen, flen, slen;
  size_t i;
  uint16_t type;
  bool ok;

  if (len == 0)
    return URL_NO_ANSWER;
  if (len < IPC_HEADER_SIZE)
    return URL_MALFORMED;
  memcpy (&type, d, 2);
  plen = ne32 (d + 4);
  if (plen > max || len - IPC_HEADER_SIZE < plen || type != IPC_URL_CHECKED || plen < 24)
    return URL_MALFORMED;
  /* The header's other fields (flags, id, offset, length, error, area
   * offset) are unused by this type: all 0. */
  for (i = 2; i < IPC_HEADER_SIZE; i++)
    if ((i < 4 || i >= 8) && d[i] != 0)
      return URL_MALFORMED;
  flags = ne32 (p);
  kind = ne32 (p + 4);
  mlen = ne32 (p + 8);
  llen = ne32 (p + 12);
  flen = ne32 (p + 16);
  slen = ne32 (p + 20);
  ok = flags & URL_CHECKED_OK;
  if ((flags & ~(URL_CHECKED_OK | URL_CHECKED_HAS_PASSWORD)) ||
      slen > MAX_LOG_URL_LENGTH || (!ok && slen != 0) ||
      llen < 1 || llen > MAX_LOG_URL_LENGTH || mlen > MAX_URL_MESSAGE ||
      flen > MAX_PATH_LENGTH)
    return URL_MALFORMED;
  if (ok ? kind > URL_FILE || mlen != 0 || (kind == URL_FILE) != (flen > 0)
         : mlen < 1 || flen != 0)
    return URL_MALFORMED;
  if ((uint64_t) 24 + mlen + llen + flen + slen != plen ||
      memchr (p + 24, '\0', (size_t) mlen + llen + flen + slen) != NULL ||
      (flen > 0 && p[24 + mlen + llen] != '/'))
    return URL_MALFORMED;
  return ok ? URL_ACCEPTED : URL_REFUSED;
}

/* As urlcheck-client.c reads an answer. */
static enum url_answer
take_url_answer (struct url_answer_fields *a)
{
  struct ipc_header h;
  enum url_answer answer;
  uint8_t *payload;

  if (ipc_recv (sock, &h, &payload, URL_ANSWER_MAX_PAYLOAD) == -1)
    return errno == 0 ? URL_NO_ANSWER : URL_MALFORMED;
  answer = parse_url_answer (&h, payload, a);
  free (payload);
  return answer;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct url_answer_fields a;
  enum url_answer want, got;

  if (sock == -1)
    sock = fuzz_memfd ("url-answer");
  fuzz_memfd_fill (sock, data, size);
  want = expected (data, size);
  got = take_url_answer (&a);
  FUZZ_CHECK (got == want, "answer read as %d, expected %d", got, want);
  if (got == URL_ACCEPTED || got == URL_REFUSED) {
    const uint8_t *p = data + IPC_HEADER_SIZE;
    uint32_t mlen = ne32 (p + 8), llen = ne32 (p + 12), flen = ne32 (p + 16);
    uint32_t slen = ne32 (p + 20);
    FUZZ_CHECK (strlen (a.log_url) == llen && memcmp (a.log_url, p + 24 + mlen, llen) == 0,
                "logged URL");
    FUZZ_CHECK (strlen (a.message) == mlen && memcmp (a.message, p + 24, mlen) == 0,
                "message");
    FUZZ_CHECK (strlen (a.file_path) == flen && (flen == 0 || a.file_path[0] == '/'),
                "file path");
    FUZZ_CHECK (strlen (a.script_url) == slen &&
                memcmp (a.script_url, p + 24 + mlen + llen + flen, slen) == 0, "script URL");
    FUZZ_CHECK (got == URL_REFUSED || (uint32_t) a.kind == ne32 (p + 4), "kind");
    FUZZ_CHECK (a.has_password == ((ne32 (p) & URL_CHECKED_HAS_PASSWORD) != 0), "password");
  }
  return 0;
}
