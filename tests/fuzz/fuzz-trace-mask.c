/*
 * fuzz-trace-mask: the masks of -D curl.verbose=1's trace lines
 * (mask_line in src/fetcher/fetcher-trace.c, static, so the file is compiled into
 * this one).  A trace reaches the log, which others read: no password of
 * a URL may pass through.
 *
 * Input: a kind byte ('>', '<' or '*' by its value mod 3), a scheme
 * choice (http, https, ftp, ftps, socks5h, none), then four spans, each a
 * length byte and its bytes: text before the URL, the user name, the
 * password, and text after it (host, path, query, more words).  The line
 * is BEFORE SCHEME://USER:PASSWORD@AFTER (without a scheme:
 * BEFORE USER:PASSWORD@AFTER), whole, as the real caller passes it (the
 * mask cuts its output, not its input).  When the scheme byte's high bit
 * is set, the line ends after the password, as libcurl's own text does
 * when it cuts a long URL before its '@'.
 *
 * Checked: the output is a string of printable bytes that fits the
 * caller's buffer (TRACE_LINE_MAX and a mask's room); and whenever the
 * password is at least 4 bytes, none of them a word's end, an '@' or a
 * '?', and the line without the password (and the masks' own text) holds
 * no copy of it, the output holds none either (a password never leaks,
 * whatever surrounds it).
 */
#include <string.h>

#include "fuzz.h"

#include "fetcher-trace.c"

struct http_state http;

static bool
contains (const char *hay, size_t hay_len, const uint8_t *needle, size_t n)
{
  size_t i;

  if (n == 0 || n > hay_len)
    return false;
  for (i = 0; i + n <= hay_len; i++)
    if (memcmp (hay + i, needle, n) == 0)
      return true;
  return false;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const schemes[] = { "http://", "https://", "ftp://", "ftps://",
                                         "socks5h://", "" };
  struct fuzz_input in = { data, size, 0 };
  char kind = "><*"[fuzz_u8 (&in) % 3];
  uint8_t scheme_byte = fuzz_u8 (&in);
  const char *scheme = schemes[(scheme_byte & 0x7f) % (sizeof schemes / sizeof schemes[0])];
  bool cut_by_libcurl = (scheme_byte & 0x80) != 0;
  const uint8_t *before, *user, *password, *after;
  size_t nb = fuzz_span (&in, fuzz_u8 (&in), &before);
  size_t nu = fuzz_span (&in, fuzz_u8 (&in), &user);
  size_t np = fuzz_span (&in, fuzz_u8 (&in), &password);
  size_t na = fuzz_span (&in, fuzz_u8 (&in), &after);
  char line[1200], out[TRACE_LINE_MAX + 8], rest[1200];
  size_t len = 0, rest_len = 0, out_len, i;
  bool plain_password = np >= 4;

  /* The line, and the same line without the password. */
#define PUT(p, n) do { memcpy (line + len, p, n); len += n; } while (0)
#define PUT_REST(p, n) do { memcpy (rest + rest_len, p, n); rest_len += n; } while (0)
  PUT (before, nb); PUT_REST (before, nb);
  if (nb > 0) { PUT (" ", 1); PUT_REST (" ", 1); }
  PUT (scheme, strlen (scheme)); PUT_REST (scheme, strlen (scheme));
  PUT (user, nu); PUT_REST (user, nu);
  PUT (":", 1); PUT_REST (":", 1);
  PUT (password, np);
  if (!cut_by_libcurl) {
    PUT ("@", 1); PUT_REST ("@", 1);
    PUT (after, na); PUT_REST (after, na);
  }
#undef PUT
#undef PUT_REST

  for (i = 0; i < np; i++)
    if (word_end ((char) password[i]) || password[i] == '@' || password[i] == '?' ||
        password[i] < 0x20 || password[i] >= 0x7f)
      plain_password = false;
  /* Without a scheme, a word end in the user name splits the word: what
   * comes before the split is another word, which nothing masks, and
   * that is right (it holds no '@'); the password is still in the word
   * with the '@'. */

  /* A URL cut before its '@' is recognised by its scheme and by an
   * authority with a ':' and no '/' (what else could tell it); a user
   * name with an '@' of its own (libcurl writes it %40) would make its
   * start a host. */
  if (cut_by_libcurl) {
    if (scheme[0] == '\0' || memchr (password, '/', np) != NULL || memchr (user, '/', nu) != NULL ||
        memchr (user, '@', nu) != NULL)
      plain_password = false;
    for (i = 0; i < nu; i++)
      if (word_end ((char) user[i]))
        plain_password = false;
  }

  mask_line (kind, line, len, out, sizeof out);
  out_len = strlen (out);
  FUZZ_CHECK (out_len < sizeof out, "output of %zu bytes", out_len);
  for (i = 0; i < out_len; i++)
    FUZZ_CHECK (out[i] >= 0x20 && out[i] < 0x7f, "unprintable byte 0x%02x at %zu",
                (unsigned char) out[i], i);
  /* (A password that is part of a mask's own text is no finding.) */
  if (plain_password && !contains (rest, rest_len, password, np) &&
      !contains ("<masked>?...", 12, password, np))
    FUZZ_CHECK (!contains (out, out_len, password, np),
                "the password (%zu bytes) passed through: %s", np, out);
  return 0;
}
