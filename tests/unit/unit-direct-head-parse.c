/* unit-direct-head-parse.c: the direct reads' parser of a reply's header
 * section (src/fetcher/direct-head-parse.c), with the one reply checker
 * it hands its lines to (web-reply.c), over good and hostile heads, TAP
 * output.  Each case says what must come of it: taken (and then passed
 * or refused by the checker), refused by the parser, or left to libcurl;
 * and what frames the body. */
#include <stdio.h>
#include <string.h>

#include "direct-head-parse.h"
#include "limits-reply.h"
#include "unit.h"

/* The range every case's reply must answer: bytes 0-9 of a 100-byte
 * object whose ETag was pinned at open. */
#define RANGE_OFFSET 0
#define RANGE_LENGTH 10
#define OBJECT_SIZE 100
#define PINNED_ETAG "\"v1\""

#define OK_STATUS "HTTP/1.1 206 Partial Content\r\n"
#define OK_RANGE "Content-Range: bytes 0-9/100\r\n"
#define OK_LENGTH "Content-Length: 10\r\n"

/* What came of a header section, parser and checker together (as
 * headers_done takes them). */
enum outcome {
  TAKEN,                      /* parsed, and the checker passed the reply */
  REFUSED,                    /* parsed, and the checker refused it */
  INTERIM,                    /* parsed: an interim reply, another follows */
  FAILED,                     /* the parser refused it (HEAD_PARSE_FAIL) */
  GIVEN_UP,                   /* not the plain case: libcurl's */
};

static struct web_reply reply;
static struct reply_framing framing;
static const char *why;

/* A new request: its reply starts afresh. */
static void
new_request (const char *etag)
{
  const struct web_request req = {
    .kind = WEB_REQUEST_RANGE, .offset = RANGE_OFFSET, .length = RANGE_LENGTH,
    .size = OBJECT_SIZE, .etag = etag,
  };

  web_reply_reset (&reply, &req);
}

/* One more header section of len bytes on the same request. */
static enum outcome
section_n (const char *text, size_t len)
{
  why = NULL;
  switch (parse_header_section (&reply, (const uint8_t *) text, len, &framing, &why)) {
  case HEAD_PARSE_FAIL:
    return FAILED;
  case HEAD_PARSE_GIVE_UP:
    return GIVEN_UP;
  case HEAD_PARSE_OK:
    break;
  }
  if (web_reply_interim (&reply))
    return INTERIM;
  return web_reply_check (&reply) ? TAKEN : REFUSED;
}

/* A reply of one header section, to a new request, pinned ETag. */
static enum outcome
head_n (const char *text, size_t len)
{
  new_request (PINNED_ETAG);
  return section_n (text, len);
}

static enum outcome
head (const char *text)
{
  return head_n (text, strlen (text));
}

/* A literal that holds NULs, with its length. */
#define LIT(s) (s), sizeof (s) - 1

static bool
problem_says (const char *words)
{
  return strstr (reply.problem, words) != NULL;
}

/* Cases that only say what must come of a head. */
struct head_case {
  const char *text;
  enum outcome want;
  const char *name;
};

static void
run_cases (const struct head_case *cases, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    CHECK (head (cases[i].text) == cases[i].want, cases[i].name);
}

static void
good_heads (void)
{
  static const struct head_case cases[] = {
    { "HTTP/1.1 206\r\n" OK_RANGE OK_LENGTH "\r\n", TAKEN,
      "a status line without a reason phrase" },
    { "HTTP/1.1 206 \r\n" OK_RANGE OK_LENGTH "\r\n", TAKEN,
      "a status line with an empty reason phrase" },
    { OK_STATUS OK_RANGE "X-!#$%&'*+-.^_`|~09az: v\r\n" OK_LENGTH "\r\n", TAKEN,
      "every token character in a header name" },
    { OK_STATUS OK_RANGE "ETag: W/\"v1\"\r\n" OK_LENGTH "\r\n", TAKEN,
      "a weak ETag that matches the pinned one" },
  };

  CHECK (head (OK_STATUS OK_RANGE OK_LENGTH "\r\n") == TAKEN &&
         framing.length == RANGE_LENGTH && !framing.conn_close,
         "a plain 206: taken, Content-Length framing, connection kept");
  CHECK (head ("HTTP/1.0 206 Partial Content\r\n" OK_RANGE OK_LENGTH "\r\n") == TAKEN &&
         framing.conn_close, "HTTP/1.0: taken, the connection closes after it");
  CHECK (head (OK_STATUS "content-range:bytes 0-9/100\r\n"
               "CONTENT-LENGTH:   10   \r\n\r\n") == TAKEN && framing.length == 10,
         "header names in any case, values with spaces around them");
  CHECK (head (OK_STATUS OK_RANGE OK_LENGTH "\r\n") == TAKEN &&
         reply.status == 206, "the checker saw the status line");
  run_cases (cases, sizeof cases / sizeof cases[0]);
}

static void
status_lines (void)
{
  static const struct head_case cases[] = {
    { "HTTP/0.9 206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "HTTP/0.9 refused" },
    { "HTTP/1.1 2060 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "a four-digit status refused" },
    { "HTTP/1.1 20 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "a two-digit status refused" },
    { "HTTP/1.1 2O6 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "a status with a letter refused" },
    { "HTTP/1.1  206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "two spaces before the status refused" },
    { "HTTP/1.x 206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a version that is no digit refused" },
    { "HTTP/11 206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "a version without its dot refused" },
    { "HTTP/1x1 206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a version with another byte for its dot refused" },
    { "http/1.1 206 X\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a lower-case protocol name refused" },
    { "HTTP/1.1\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED, "a status line without a status refused" },
    { OK_RANGE OK_LENGTH "\r\n", FAILED, "a header line first refused" },
  };

  CHECK (head ("HTTP/2.0 206 Partial Content\r\n" OK_RANGE OK_LENGTH "\r\n") == FAILED &&
         problem_says ("HTTP/2.0"), "HTTP/2.0 refused, and named");
  CHECK (head ("\r\n" OK_RANGE OK_LENGTH "\r\n") == FAILED &&
         problem_says ("does not start with an HTTP status line"),
         "an empty first line refused");
  CHECK (head_n (LIT ("HTTP/1.1 2\0006 X\r\n\r\n")) == FAILED &&
         problem_says ("\"HTTP/1.1 2?6 X\""),
         "a NUL in the status line refused, and quoted as '?'");
  CHECK (head ("HTTP/1.1 200 OK\r\n" OK_LENGTH "\r\n") == REFUSED &&
         problem_says ("200 instead of 206"), "a 200: parsed, and refused by the checker");
  CHECK (head ("HTTP/1.1 503 Busy\r\n" OK_LENGTH "\r\n") == REFUSED &&
         web_reply_transient (&reply), "a 503: refused, and may pass if asked again");
  run_cases (cases, sizeof cases / sizeof cases[0]);
}

/* A 206 head with this Content-Range value. */
static enum outcome
with_content_range (const char *value)
{
  char text[256];
  int n = snprintf (text, sizeof text, OK_STATUS "Content-Range: %s\r\n" OK_LENGTH "\r\n",
                    value);

  if (n < 0 || (size_t) n >= sizeof text) {
    printf ("Bail out! test head does not fit\n");
    exit (1);
  }
  return head_n (text, (size_t) n);
}

static void
content_ranges (void)
{
  static const struct head_case ranges[] = {
    { "bytes 0-9/*", TAKEN, "an unknown total, with an ETag pinned" },
    { "Bytes 0-9/100", TAKEN, "the unit in any case" },
    { "bytes  0-9/100", TAKEN, "more spaces after the unit" },
    { "bytes 1-10/100", REFUSED, "another range refused" },
    { "bytes 0-8/100", REFUSED, "a shorter range refused" },
    { "bytes */100", REFUSED, "an unsatisfied range refused" },
    { "bytes 0-9", REFUSED, "a range without a total refused" },
    { "bytes 9-0/100", REFUSED, "a backward range refused" },
    { "bytes 0-100/100", REFUSED, "a range past the total refused" },
    { "bytes 0-9/100, 20-29/100", REFUSED, "two ranges refused" },
    { "items 0-9/100", REFUSED, "another range unit refused" },
    { "bytes=0-9/100", REFUSED, "the request's form refused" },
  };
  static const struct head_case cases[] = {
    { OK_STATUS OK_RANGE "ETag: \"v2\"\r\n" OK_LENGTH "\r\n", REFUSED, "another ETag refused" },
    { OK_STATUS OK_RANGE "Content-Encoding: gzip\r\n" OK_LENGTH "\r\n", REFUSED,
      "a content coding refused" },
  };
  size_t i;

  for (i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    CHECK (with_content_range (ranges[i].text) == ranges[i].want, ranges[i].name);
  CHECK (head (OK_STATUS OK_LENGTH "\r\n") == REFUSED && problem_says ("no Content-Range"),
         "a 206 without Content-Range refused");
  new_request (NULL);
  CHECK (section_n (LIT (OK_STATUS "Content-Range: bytes 0-9/*\r\n" OK_LENGTH "\r\n")) == REFUSED,
         "an unknown total, with no validator pinned, refused");
  CHECK (head (OK_STATUS "Content-Range: bytes 0-9/200\r\n" OK_LENGTH "\r\n") == REFUSED &&
         problem_says ("the object changed"), "another total: the object changed");
  CHECK (head (OK_STATUS OK_RANGE OK_RANGE OK_LENGTH "\r\n") == REFUSED &&
         problem_says ("more than one Content-Range"), "Content-Range twice refused");
  run_cases (cases, sizeof cases / sizeof cases[0]);
}

static void
content_lengths (void)
{
  static const struct head_case cases[] = {
    { OK_STATUS OK_RANGE "Content-Length: 10, 10\r\n\r\n", GIVEN_UP,
      "a list of lengths left to libcurl" },
    { OK_STATUS OK_RANGE "Content-Length: -1\r\n\r\n", GIVEN_UP,
      "a negative length left to libcurl" },
    { OK_STATUS OK_RANGE "Content-Length: +10\r\n\r\n", GIVEN_UP,
      "a signed length left to libcurl" },
    { OK_STATUS OK_RANGE "Content-Length: 9223372036854775808\r\n\r\n", GIVEN_UP,
      "past INT64_MAX left to libcurl" },
    { OK_STATUS OK_RANGE "Content-Length: 00000000000000000010\r\n\r\n", GIVEN_UP,
      "20 digits left to libcurl" },
    { OK_STATUS OK_RANGE "Content-Length: 1\r0\r\n\r\n", GIVEN_UP,
      "a CR inside the number is no line end" },
  };

  CHECK (head (OK_STATUS OK_RANGE "\r\n") == TAKEN && framing.length == UINT64_MAX,
         "no Content-Length: parsed, no length (headers_done leaves it to libcurl)");
  CHECK (head (OK_STATUS OK_RANGE OK_LENGTH OK_LENGTH "\r\n") == TAKEN &&
         framing.length == 10, "the same Content-Length twice");
  CHECK (head (OK_STATUS OK_RANGE OK_LENGTH "Content-Length: 11\r\n\r\n") == FAILED &&
         problem_says ("two different Content-Length"), "two different Content-Lengths refused");
  CHECK (head (OK_STATUS OK_RANGE "Content-Length: 10\r\ncontent-length: 010\r\n\r\n") == TAKEN &&
         framing.length == 10, "the same number, written otherwise");
  CHECK (head (OK_STATUS OK_RANGE "Content-Length:\r\n\r\n") == GIVEN_UP &&
         why != NULL && strstr (why, "Content-Length") != NULL,
         "an empty length left to libcurl, and why");
  CHECK (head (OK_STATUS OK_RANGE "Content-Length: 9223372036854775807\r\n\r\n") == TAKEN &&
         framing.length == UINT64_C (9223372036854775807), "19 digits, INT64_MAX: a length");
  CHECK (head_n (LIT (OK_STATUS OK_RANGE "Content-Length: 1\0000\r\n\r\n")) == GIVEN_UP,
         "a NUL inside the number is no end of it");
  CHECK (head (OK_STATUS OK_RANGE "Content-Length : 10\r\n\r\n") == FAILED &&
         problem_says ("forbidden byte"), "a space before the colon refused");
  run_cases (cases, sizeof cases / sizeof cases[0]);
}

static void
framing_headers (void)
{
  CHECK (head (OK_STATUS OK_RANGE "Transfer-Encoding: chunked\r\n\r\n") == GIVEN_UP &&
         why != NULL && strstr (why, "Transfer-Encoding") != NULL,
         "chunked left to libcurl, and why");
  CHECK (head (OK_STATUS OK_RANGE OK_LENGTH "transfer-encoding: identity\r\n\r\n") == GIVEN_UP,
         "any transfer coding left to libcurl, even with a Content-Length");
  CHECK (head (OK_STATUS OK_RANGE "Connection: keep-alive, close\r\n" OK_LENGTH "\r\n") == TAKEN &&
         framing.conn_close, "close among other tokens: the connection closes");
  CHECK (head (OK_STATUS OK_RANGE "connection: CLOSE\r\n" OK_LENGTH "\r\n") == TAKEN &&
         framing.conn_close, "close in any case");
  CHECK (head (OK_STATUS OK_RANGE "Connection: closed\r\n" OK_LENGTH "\r\n") == TAKEN &&
         !framing.conn_close, "\"closed\" is not close");
  CHECK (head (OK_STATUS OK_RANGE "Connection: keep-alive\r\n" OK_LENGTH "\r\n") == TAKEN &&
         !framing.conn_close, "keep-alive keeps it");
}

static void
lines (void)
{
  static const struct head_case cases[] = {
    { "HTTP/1.1 206 Partial Content\n" OK_RANGE OK_LENGTH "\r\n", GIVEN_UP,
      "a status line ending in a bare LF left to libcurl" },
    { OK_STATUS OK_RANGE OK_LENGTH "\n", GIVEN_UP, "a blank line of a bare LF left to libcurl" },
    { OK_STATUS OK_RANGE OK_LENGTH "\tContent-Length: 11\r\n\r\n", GIVEN_UP,
      "obs-fold with a tab left to libcurl" },
    { OK_STATUS ": no name\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a header line with an empty name refused" },
    { OK_STATUS "X-A\x7f: v\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a DEL in a header name refused" },
    { OK_STATUS "X-\xc3\xa9: v\r\n" OK_RANGE OK_LENGTH "\r\n", FAILED,
      "a non-ASCII byte in a header name refused" },
  };

  CHECK (head (OK_STATUS "Content-Range: bytes 0-9/100\n" OK_LENGTH "\r\n") == GIVEN_UP &&
         why != NULL && strstr (why, "bare LF") != NULL,
         "a header line ending in a bare LF left to libcurl, and why");
  CHECK (head (OK_STATUS OK_RANGE "X-A: a\r\n b\r\n" OK_LENGTH "\r\n") == GIVEN_UP &&
         why != NULL && strstr (why, "folds") != NULL, "obs-fold with a space left to libcurl");
  CHECK (head (OK_STATUS "No colon here\r\n" OK_RANGE OK_LENGTH "\r\n") == FAILED &&
         problem_says ("without a name"), "a header line without a colon refused");
  CHECK (head_n (LIT (OK_STATUS "X-\000A: v\r\n\r\n")) == FAILED &&
         problem_says ("forbidden byte"), "a NUL in a header name refused");
  CHECK (head_n (LIT (OK_STATUS OK_RANGE "X-A: a\000b\r\n" OK_LENGTH "\r\n")) == TAKEN &&
         framing.length == 10, "a NUL in an unneeded header's value is that value's");
  run_cases (cases, sizeof cases / sizeof cases[0]);
}

/* A header line of exactly n bytes without its CRLF: name, a colon, a
 * space, value padded with spaces (trimmed off by the checker). */
static size_t
padded_line (char *buf, size_t cap, const char *name_value, size_t n)
{
  size_t len = strlen (name_value);

  if (len > n || n + 2 > cap) {
    printf ("Bail out! test line does not fit\n");
    exit (1);
  }
  memcpy (buf, name_value, len);
  memset (buf + len, ' ', n - len);
  memcpy (buf + n, "\r\n", 2);
  return n + 2;
}

static enum outcome
head_with_line (const char *name_value, size_t n)
{
  static char buf[MAX_RESPONSE_HEADER_BYTES + 64];
  size_t len = 0;

  memcpy (buf, OK_STATUS, strlen (OK_STATUS));
  len += strlen (OK_STATUS);
  len += padded_line (buf + len, sizeof buf - len - 32, name_value, n);
  memcpy (buf + len, OK_LENGTH "\r\n", strlen (OK_LENGTH) + 2);
  len += strlen (OK_LENGTH) + 2;
  return head_n (buf, len);
}

static void
limits (void)
{
  CHECK (head_with_line ("Content-Range: bytes 0-9/100", MAX_HEADER_LINE) == TAKEN,
         "a Content-Range line of MAX_HEADER_LINE bytes taken");
  CHECK (head_with_line ("Content-Range: bytes 0-9/100", MAX_HEADER_LINE + 1) == FAILED &&
         problem_says ("longer than"), "a Content-Range line of MAX_HEADER_LINE + 1 refused");
  CHECK (head_with_line ("X-Padding: a", MAX_HEADER_LINE + 1) == REFUSED &&
         problem_says ("no Content-Range"),
         "an unneeded header over MAX_HEADER_LINE is passed over");
}

/* A section of exactly MAX_RESPONSE_HEADER_BYTES, the most a read takes. */
static void
section_at_the_limit (void)
{
  static uint8_t buf[MAX_RESPONSE_HEADER_BYTES];
  const char *start = OK_STATUS OK_RANGE OK_LENGTH "X-Padding: ";
  size_t n = strlen (start), scanned = 0;

  memcpy (buf, start, n);
  memset (buf + n, 'a', sizeof buf - n - 4);
  memcpy (buf + sizeof buf - 4, "\r\n\r\n", 4);
  CHECK (header_section_end (buf, sizeof buf, &scanned) == sizeof buf &&
         head_n ((const char *) buf, sizeof buf) == TAKEN,
         "a section of MAX_RESPONSE_HEADER_BYTES found and taken");
  scanned = 0;
  CHECK (header_section_end (buf, sizeof buf - 1, &scanned) == 0 &&
         scanned == sizeof buf - 1, "one byte short: not yet an end");
}

static void
interim_replies (void)
{
  const char *cont = "HTTP/1.1 100 Continue\r\n\r\n";
  const char *final = OK_STATUS OK_RANGE OK_LENGTH "\r\n";
  unsigned i;
  bool all = true;

  new_request (PINNED_ETAG);
  for (i = 0; i < MAX_INTERIM_RESPONSES; i++)
    all = all && section_n (cont, strlen (cont)) == INTERIM;
  CHECK (all && section_n (final, strlen (final)) == TAKEN,
         "MAX_INTERIM_RESPONSES interim replies, then the reply: taken");
  new_request (PINNED_ETAG);
  for (i = 0; i < MAX_INTERIM_RESPONSES; i++)
    (void) section_n (cont, strlen (cont));
  CHECK (section_n (cont, strlen (cont)) == FAILED && problem_says ("interim"),
         "one interim reply more refused");
  new_request (PINNED_ETAG);
  CHECK (section_n (LIT ("HTTP/1.0 100 Continue\r\nConnection: close\r\n\r\n")) == INTERIM &&
         framing.conn_close && section_n (final, strlen (final)) == TAKEN &&
         !framing.conn_close && framing.length == 10,
         "each section frames itself: an interim reply's close does not carry over");
  new_request (PINNED_ETAG);
  CHECK (section_n (LIT ("HTTP/1.1 100 Continue\r\n" OK_LENGTH "\r\n")) == INTERIM &&
         section_n (LIT (OK_STATUS OK_RANGE "\r\n")) == TAKEN &&
         framing.length == UINT64_MAX,
         "an interim reply's Content-Length does not carry over");
}

/* Where a whole buffer's section ends, searched afresh. */
static size_t
end_of (const char *text, size_t len)
{
  size_t scanned = 0;

  return header_section_end ((const uint8_t *) text, len, &scanned);
}

static void
section_ends (void)
{
  static const struct {
    const char *text;
    size_t len, want;
    const char *name;
  } cases[] = {
    { LIT ("HTTP/1.1 206 X\r\nA: b\r\n\r\nBODY"), 24,
      "the end is past the blank line, not at the body" },
    { LIT ("HTTP/1.1 206 X\n\nB"), 16, "a blank bare-LF line ends it (told apart, not waited for)" },
    { LIT ("HTTP/1.1 206 X\r\n\nB"), 17, "a bare LF after a CRLF line ends it" },
    { LIT ("\r\n"), 0, "a lone CRLF is no end" },
    { LIT ("HTTP/1.1 206 X\r\n\r"), 0, "CR LF CR is no end" },
    { LIT ("HTTP/1.1 206 X\r\r\n"), 0, "CR CR LF is no end" },
  };
  const char *text = cases[0].text;
  size_t scanned = 0, i, end = 0;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK (end_of (cases[i].text, cases[i].len) == cases[i].want, cases[i].name);
  CHECK (header_section_end ((const uint8_t *) text, 22, &scanned) == 0 && scanned == 22,
         "no blank line yet: 0, searched so far");
  scanned = 0;
  for (i = 1; i <= strlen (text) && end == 0; i++)
    end = header_section_end ((const uint8_t *) text, i, &scanned);
  CHECK (end == 24 && i == 25, "a byte at a time: found as its last byte comes");
}

int
main (void)
{
  good_heads ();
  status_lines ();
  content_ranges ();
  content_lengths ();
  framing_headers ();
  lines ();
  limits ();
  section_at_the_limit ();
  interim_replies ();
  section_ends ();
  return UNIT_END ();
}
