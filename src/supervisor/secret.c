/* secret.c: passwords from a terminal, a descriptor or a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "file-read.h"
#include "limits-strings.h"
#include "secret.h"

/* One line typed on the terminal, into buf (cap bytes at most): returns
 * its length, line end included, or -1 with errno (E2BIG: longer than
 * cap). */
static ssize_t
read_line (int fd, char *buf, size_t cap)
{
  size_t len = 0;

  for (;;) {
    ssize_t r;
    if (len == cap) {
      errno = E2BIG;
      return -1;
    }
    r = read (fd, buf + len, cap - len);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1)
      return -1;
    if (r == 0 || buf[len + (size_t) r - 1] == '\n')
      return (ssize_t) (len + (size_t) r);
    len += (size_t) r;                  /* r <= cap - len */
  }
}

/* What is read, for messages. */
struct secret_kind {
  const char *option;           /* "--auth-password" */
  const char *noun;             /* "password" */
  size_t max;                   /* longest accepted */
  const char *for_whom;         /* "alice at host:port (export \"x\")", or NULL */
};

/* What went wrong reading: E2BIG is a secret too long. */
static const char *
read_error (const struct secret_kind *k, int e)
{
  static char too_long[96];

  if (e != E2BIG)
    return strerror (e);
  snprintf (too_long, sizeof too_long, "the %s is longer than %zu bytes",
            k->noun, k->max);
  return too_long;
}

/* Ask on the controlling terminal with echo off; restored afterwards.
 * The prompt says whose secret it is: with several exports or a proxy,
 * "password:" alone leaves the user guessing. */
static ssize_t
read_from_terminal (const struct secret_kind *k, char *buf, size_t cap,
                    char *err, size_t errlen)
{
  char prompt[512];
  struct termios saved, quiet;
  ssize_t len;
  int fd = open ("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  int saved_errno, n;

  if (k->for_whom)
    n = snprintf (prompt, sizeof prompt, "nbdcurld: %s for %s: ", k->noun, k->for_whom);
  else
    n = snprintf (prompt, sizeof prompt, "nbdcurld: %s: ", k->noun);
  if (n < 0 || (size_t) n >= sizeof prompt)
    n = snprintf (prompt, sizeof prompt, "nbdcurld: %s: ", k->noun);
  if (fd == -1) {
    snprintf (err, errlen, "%s-: no terminal to ask on (%s); use %s+FILE or -FD",
              k->option, strerror (errno), k->option);
    return -1;
  }
  if (tcgetattr (fd, &saved) == -1) {
    snprintf (err, errlen, "%s-: /dev/tty: %s", k->option, strerror (errno));
    close (fd);
    return -1;
  }
  quiet = saved;
  quiet.c_lflag &= (tcflag_t) ~(ECHO | ECHOE | ECHOK | ECHONL);
  quiet.c_lflag |= ICANON;
  /* Echo off (and type-ahead dropped) before the prompt: what is typed
   * after it is never shown. */
  if (tcsetattr (fd, TCSAFLUSH, &quiet) == -1 ||
      write (fd, prompt, strlen (prompt)) == -1) {
    tcsetattr (fd, TCSAFLUSH, &saved);
    snprintf (err, errlen, "%s-: /dev/tty: %s", k->option, strerror (errno));
    close (fd);
    return -1;
  }
  len = read_line (fd, buf, cap);
  saved_errno = errno;
  tcsetattr (fd, TCSAFLUSH, &saved);
  if (write (fd, "\n", 1) == -1) {
    /* The echo of the line end is cosmetic. */
  }
  close (fd);
  if (len == -1)
    snprintf (err, errlen, "%s-: reading the terminal: %s", k->option,
              read_error (k, saved_errno));
  return len;
}

/* Read a secret from SOURCE (see secret.h); with allow_prompt and
 * allow_fd false only "+FILE" is accepted. */
static char *
read_secret (const struct secret_kind *k, const char *source, bool allow_other,
             char *err, size_t errlen)
{
  /* Room for a CR LF after the longest secret: a longer one is refused
   * once the line end is dropped. */
  size_t cap = k->max + 2;
  char *buf = malloc (cap);
  ssize_t len = -1;
  char *secret = NULL;

  if (buf == NULL) {
    snprintf (err, errlen, "%s: out of memory", k->option);
    return NULL;
  }
  if (allow_other && strcmp (source, "-") == 0)
    len = read_from_terminal (k, buf, cap, err, errlen);
  else if (allow_other && source[0] == '-') {
    char *end;
    long fd;
    errno = 0;
    fd = strtol (source + 1, &end, 10);
    if (errno != 0 || *end != '\0' || fd < 0 || fd > 65535) {
      snprintf (err, errlen, "%s %s: not a descriptor number", k->option, source);
      goto out;
    }
    len = fd_read_all ((int) fd, buf, cap);
    if (len == -1)
      snprintf (err, errlen, "%s: reading descriptor %ld: %s", k->option, fd,
                read_error (k, errno));
    close ((int) fd);
  }
  else if (source[0] == '+') {
    int fd = open (source + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd == -1) {
      snprintf (err, errlen, "%s: %s: %s", k->option, source + 1, strerror (errno));
      goto out;
    }
    len = fd_read_all (fd, buf, cap);
    if (len == -1)
      snprintf (err, errlen, "%s: %s: %s", k->option, source + 1, read_error (k, errno));
    close (fd);
  }
  else {
    snprintf (err, errlen, allow_other ? "%s takes -, -FD or +FILE" : "%s takes +FILE",
              k->option);
    goto out;
  }
  if (len == -1)
    goto out;

  /* Drop one line end: LF or CR LF (len >= 1 before each check). */
  if (len > 0 && buf[len - 1] == '\n')
    len--;
  if (len > 0 && buf[len - 1] == '\r')
    len--;
  if ((size_t) len > k->max) {
    snprintf (err, errlen, "%s: the %s is longer than %zu bytes", k->option,
              k->noun, k->max);
    goto out;
  }
  if (memchr (buf, '\0', (size_t) len) || memchr (buf, '\n', (size_t) len) ||
      memchr (buf, '\r', (size_t) len)) {
    snprintf (err, errlen, "%s: the %s must be one line without NUL bytes",
              k->option, k->noun);
    goto out;
  }
  secret = strndup (buf, (size_t) len);
  if (secret == NULL)
    snprintf (err, errlen, "%s: out of memory", k->option);
 out:
  explicit_bzero (buf, cap);
  free (buf);
  return secret;
}

char *
secret_read (const char *source, char *err, size_t errlen)
{
  static const struct secret_kind password = {
    "--auth-password ", "password", MAX_SECRET_LENGTH, NULL,
  };
  return read_secret (&password, source, true, err, errlen);
}

char *
secret_read_named (const char *option, const char *noun, size_t max, const char *source,
                   const char *for_whom, char *err, size_t errlen)
{
  const struct secret_kind k = { option, noun, max, for_whom };
  return read_secret (&k, source, true, err, errlen);
}

char *
secret_read_url (const char *source, char *err, size_t errlen)
{
  static const struct secret_kind url = { "URL file", "URL", MAX_URL_LENGTH, NULL };
  return read_secret (&url, source, false, err, errlen);
}

/* Does a "Set-Cookie:" line of n bytes name its domain (an attribute
 * after the first ';')?  libcurl takes one without as a cookie for every
 * host, also those a redirect leads to. */
static bool
set_cookie_has_domain (const char *line, size_t n)
{
  const char *p = memchr (line, ';', n), *end = line + n;

  while (p != NULL && p < end) {
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
      p++;
    if ((size_t) (end - p) >= 7 && strncasecmp (p, "domain=", 7) == 0 &&
        p + 7 < end && p[7] != ';')
      return true;
    p = memchr (p, ';', (size_t) (end - p));
  }
  return false;
}

/* cookiefile=FILE: a cookie file may hold session cookies, secrets like a
 * password, so it is read like one: bounded, never quoted in a message,
 * its buffers wiped. */
char *
secret_read_file (const char *path, size_t max, size_t *len, char *why, size_t whylen)
{
  return file_read_regular (path, max, len, NULL, true, why, whylen);
}

char *
secret_read_cookie_file (const char *path, char *err, size_t errlen)
{
  /* One byte for a NUL (or, in lines, for the line end the last line may
   * lack). */
  size_t cap = MAX_COOKIE_FILE_BYTES + 1, out = 0, lineno = 0, got;
  char why[128], *buf, *lines = malloc (cap + 1), *p, *end;
  ssize_t len;

  if (lines == NULL) {
    snprintf (err, errlen, "cookiefile=: out of memory");
    return NULL;
  }
  buf = secret_read_file (path, MAX_COOKIE_FILE_BYTES, &got, why, sizeof why);
  if (buf == NULL) {
    if (errno == E2BIG)
      snprintf (err, errlen, "cookiefile=%s: the cookie file is longer than %u bytes: "
                "keep only the cookies the export needs", path, MAX_COOKIE_FILE_BYTES);
    else
      snprintf (err, errlen, "cookiefile=%s: %s", path, why);
    free (lines);
    return NULL;
  }
  len = (ssize_t) got;

  /* One cookie a line, in the Netscape format or as a Set-Cookie: line,
   * which is how libcurl takes them one at a time (CURLOPT_COOKIELIST).
   * Blank lines and comments are dropped; "#HttpOnly_" starts a cookie. */
  for (p = buf; p < buf + len; p = end + 1) {
    size_t n, i;
    lineno++;
    end = memchr (p, '\n', (size_t) (buf + len - p));
    if (end == NULL)
      end = buf + len;
    n = (size_t) (end - p);
    if (n > 0 && p[n - 1] == '\r')
      n--;
    for (i = 0; i < n; i++)
      if (((unsigned char) p[i] < 0x20 && p[i] != '\t') || (unsigned char) p[i] == 0x7f) {
        snprintf (err, errlen, "cookiefile=%s: line %zu: a control character (cookies "
                  "are text, one a line)", path, lineno);
        goto fail;
      }
    if (strspn (p, " \t") >= n ||
        (p[0] == '#' && (n < 10 || strncmp (p, "#HttpOnly_", 10) != 0)))
      continue;
    if (n >= 11 && strncasecmp (p, "Set-Cookie:", 11) == 0 &&
        !set_cookie_has_domain (p, n)) {
      snprintf (err, errlen, "cookiefile=%s: line %zu: a Set-Cookie line without "
                "domain=, which would go to every host a redirect leads to: add "
                "domain=HOST or use the Netscape format", path, lineno);
      goto fail;
    }
    memcpy (lines + out, p, n);       /* out + n + 1 <= end + 1 - buf <= cap */
    out += n;
    lines[out++] = '\n';
  }
  lines[out] = '\0';
  /* Only a file of exactly the limit without a last line end grows. */
  if (out > MAX_COOKIE_FILE_BYTES) {
    snprintf (err, errlen, "cookiefile=%s: the cookie file is longer than %u bytes",
              path, MAX_COOKIE_FILE_BYTES);
    goto fail;
  }
  explicit_bzero (buf, (size_t) len);
  free (buf);
  return lines;

 fail:
  explicit_bzero (buf, (size_t) len);
  explicit_bzero (lines, cap + 1);
  free (buf);
  free (lines);
  return NULL;
}
