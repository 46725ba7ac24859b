/*
 * fuzz-web-reply: the checker of web servers' replies (web-reply.c), as
 * its two callers drive it: the direct reads' parser
 * (direct-head-parse.c) and libcurl's header callback
 * (fetcher-http-receive.c) reset it for a request, hand it the reply's
 * header section one line at a time with the line's end (stopping once
 * it refuses), and then ask for its verdict.
 *
 * Input: a mode byte (request kind: HEAD, probe or range read, bit 2 and
 * 3: an ETag and a Last-Modified pinned at open, bit 4: the probe's body
 * was an empty 200, bit 5: it had one byte), a byte choosing the object's
 * size (bit 7: any size up to INT64_MAX), 8 bytes for the offset, 4 for
 * the length, a byte each choosing the pinned ETag and Last-Modified, 2
 * bytes for the length of the first header section; the first section
 * (any number of responses: interim 1xx ones, then the final one; lines
 * end in whatever the input says: CRLF, bare LF, a mix); the rest is a
 * second section for the same request.
 *
 * Checked, against a reading of the rules written here (not web-reply.c's
 * code), where what a response says is the final response's (an interim
 * reply's headers do not describe the object):
 *   - a reply is accepted only if no response in it mixes CRLF and bare LF
 *     line ends, no more than MAX_INTERIM_RESPONSES interim replies came
 *     in a row, and the last response is not an interim one;
 *   - a range read's reply only if it is a 206 with exactly one
 *     Content-Range, "bytes FIRST-LAST/TOTAL" naming exactly the range
 *     and the pinned size (TOTAL "*", an unknown size, is let through
 *     only when a validator was pinned: then it guards the object), the
 *     pinned ETag (weak comparison) and Last-Modified, and no content
 *     coding other than identity; a probe's only if it is a 206;
 *   - the probe's verdict gives a size only for "206" with "bytes
 *     0-0/SIZE" and one byte received, a 416 with "bytes * /0" or an
 *     empty 200, never for an encoded body; an open request keeps only
 *     validators that may be sent back in a request header (visible
 *     ASCII; spaces in a date), and the last such value of the final
 *     response;
 *   - web_reply_reset starts again: the second section fed after a reset
 *     of the state the first left gives the verdict, status and problem
 *     of a fresh state fed the second section;
 *   - parse_decimal and header_value agree with their descriptions on
 *     every line;
 *   - no fatal(), no leak of the kept validators.
 */
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "limits-nbd.h"
#include "limits-reply.h"
#include "web-reply.h"

static const uint64_t sizes[] = {
  1, 2, 512, 4096, 1024 * 1024, NBD_MAX_REQUEST_SIZE + 1, UINT64_C (1) << 40,
  INT64_MAX,
};
static const char *const etags[] = {
  "\"abc\"", "W/\"abc\"", "\"xyz\"", "\"\"", "abc",
};
static const char *const dates[] = {
  "Tue, 01 Dec 2026 08:00:00 GMT", "Mon, 30 Nov 2026 08:00:00 GMT", "0",
};
#define N(a) (sizeof (a) / sizeof (a)[0])

/* ---- The rules, read independently. ---- */

/* A line without its line end: all the CRs and LFs at its end go. */
static size_t
strip_end (const uint8_t *line, size_t len)
{
  while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
    len--;
  return len;
}

/* 1 to 19 digits, at most INT64_MAX. */
static bool
decimal (const uint8_t *s, size_t len, uint64_t *out)
{
  unsigned __int128 v = 0;
  size_t i;

  if (len < 1 || len > 19)
    return false;
  for (i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (unsigned) (s[i] - '0');
  }
  if (v > INT64_MAX)
    return false;
  *out = (uint64_t) v;
  return true;
}

static bool
is_space (uint8_t ch)
{
  return ch == ' ' || ch == '\t';
}

/* The value of a header line (without line end) whose name ends at colon. */
static void
value_of (const uint8_t *line, size_t len, size_t colon, const uint8_t **v, size_t *vlen)
{
  size_t a = colon + 1, b = len;
  while (a < b && is_space (line[a]))
    a++;
  while (b > a && is_space (line[b - 1]))
    b--;
  *v = line + a;
  *vlen = b - a;
}

static bool
same_text (const uint8_t *v, size_t len, const char *s)
{
  return strlen (s) == len && memcmp (v, s, len) == 0;
}

static bool
same_name (const uint8_t *line, size_t colon, const char *name)
{
  return strlen (name) == colon && strncasecmp ((const char *) line, name, colon) == 0;
}

/* The status of a status line, or 0: the 3 digits after its first space
 * (the first not 0), then its end or a space. */
static long
status_of (const uint8_t *s, size_t len)
{
  const uint8_t *sp = memchr (s, ' ', len), *d;
  long status = 0;
  int k;

  if (sp == NULL || (size_t) (s + len - sp) < 4 || sp[1] == '0')
    return 0;
  d = sp + 1;
  if ((size_t) (s + len - d) > 3 && d[3] != ' ')
    return 0;
  for (k = 0; k < 3; k++) {
    if (d[k] < '0' || d[k] > '9')
      return 0;
    status = status * 10 + (d[k] - '0');
  }
  return status;
}

static bool
interim_status (long status)
{
  return status >= 100 && status < 200 && status != 101;
}

/* "bytes" SP+ FIRST "-" LAST "/" (TOTAL / "*"), or "bytes" SP+ "*" "/" TOTAL. */
struct content_range {
  bool ok, unsatisfied, total_known;
  uint64_t first, last, total;
};

static struct content_range
content_range_of (const uint8_t *v, size_t len)
{
  struct content_range cr = { 0 };
  size_t i = 5, dash, slash;

  if (len < 6 || strncasecmp ((const char *) v, "bytes", 5) != 0 || v[5] != ' ')
    return cr;
  while (i < len && v[i] == ' ')
    i++;
  for (slash = i; slash < len && v[slash] != '/'; slash++)
    ;
  if (slash == len)
    return cr;
  if (len - slash - 1 == 1 && v[slash + 1] == '*')
    cr.total_known = false;
  else if (decimal (v + slash + 1, len - slash - 1, &cr.total))
    cr.total_known = true;
  else
    return cr;
  if (slash - i == 1 && v[i] == '*') {
    cr.unsatisfied = true;
    cr.ok = cr.total_known;
    return cr;
  }
  for (dash = i; dash < slash && v[dash] != '-'; dash++)
    ;
  if (dash == slash || !decimal (v + i, dash - i, &cr.first) ||
      !decimal (v + dash + 1, slash - dash - 1, &cr.last) || cr.first > cr.last ||
      (cr.total_known && cr.last >= cr.total))
    return cr;
  cr.ok = true;
  return cr;
}

/* An entity tag without the weak mark "W/", if it has one. */
static void
opaque_tag (const uint8_t **v, size_t *len)
{
  if (*len >= 2 && (*v)[0] == 'W' && (*v)[1] == '/') {
    *v += 2;
    *len -= 2;
  }
}

/* Weak comparison: the opaque tags are the same. */
static bool
etag_same (const char *pinned, const uint8_t *v, size_t len)
{
  const uint8_t *p = (const uint8_t *) pinned;
  size_t plen = strlen (pinned);

  opaque_tag (&p, &plen);
  opaque_tag (&v, &len);
  return plen == len && memcmp (p, v, len) == 0;
}

/* May this value go back in a request header: printable ASCII without
 * controls (which could end or split the header), spaces only in dates? */
static bool
sendable (const uint8_t *v, size_t len, bool spaces)
{
  size_t i = 0;

  while (i < len && v[i] >= 0x20 && v[i] < 0x7f && (spaces || v[i] != ' '))
    i++;
  return len > 0 && i == len;
}

/* What the lines fed said, as the rules read them. */
struct oracle {
  const struct web_request *req;
  bool refuse;                  /* something that must make the reply refused */
  bool broken;                  /* ... that is wrong with any request's reply */
  const char *why;
  unsigned interim_run;
  enum { ENDS_NONE, ENDS_CRLF, ENDS_LF } ends;      /* of the current response */
  /* The final response so far. */
  long status;
  unsigned content_ranges;
  struct content_range cr;
  bool encoded;
  bool etag_differs, date_differs;      /* from the pinned ones */
  /* Open requests: the last sendable validators of the response. */
  const uint8_t *etag, *date;
  size_t etag_len, date_len;
};

static void
refuse (struct oracle *o, const char *why)
{
  if (!o->refuse)
    o->why = why;
  o->refuse = true;
}

static void
broken (struct oracle *o, const char *why)
{
  refuse (o, why);
  o->broken = true;
}

static void
oracle_line (struct oracle *o, const uint8_t *line, size_t len)
{
  size_t n = strip_end (line, len), colon;
  bool range = o->req->kind == WEB_REQUEST_RANGE;

  if (n >= 5 && memcmp (line, "HTTP/", 5) == 0) {
    long status = status_of (line, n);
    o->interim_run = interim_status (o->status) ? o->interim_run : 0;
    if (interim_status (status) && ++o->interim_run > MAX_INTERIM_RESPONSES)
      broken (o, "too many interim replies");
    o->status = status;
    o->ends = ENDS_NONE;
    o->content_ranges = 0;
    o->encoded = false;
    o->etag_differs = o->date_differs = false;
    o->etag = o->date = NULL;
  }
  else {
    for (colon = 0; colon < n && line[colon] != ':'; colon++)
      ;
    if (colon < n) {
      const uint8_t *v;
      size_t vlen;
      value_of (line, n, colon, &v, &vlen);
      if (same_name (line, colon, "Content-Range")) {
        if (o->content_ranges++ == 0)
          o->cr = content_range_of (v, vlen);
      }
      else if (same_name (line, colon, "Content-Encoding")) {
        if (!(vlen == 8 && strncasecmp ((const char *) v, "identity", 8) == 0))
          o->encoded = true;
      }
      else if (same_name (line, colon, "ETag") && n <= MAX_HEADER_LINE) {
        if (range && o->req->etag && !etag_same (o->req->etag, v, vlen))
          o->etag_differs = true;
        if (!range && sendable (v, vlen, false)) {
          o->etag = v;
          o->etag_len = vlen;
        }
      }
      else if (same_name (line, colon, "Last-Modified") && n <= MAX_HEADER_LINE) {
        if (range && o->req->last_modified &&
            !same_text (v, vlen, o->req->last_modified))
          o->date_differs = true;
        if (!range && sendable (v, vlen, true)) {
          o->date = v;
          o->date_len = vlen;
        }
      }
    }
  }
  if (len > 0 && line[len - 1] == '\n') {
    int ends = len >= 2 && line[len - 2] == '\r' ? ENDS_CRLF : ENDS_LF;
    if (o->ends == ENDS_NONE)
      o->ends = ends;
    else if ((int) o->ends != ends)
      broken (o, "mixed line ends");
  }
}

/* What the rules say of the whole reply, once fed. */
static void
oracle_end (struct oracle *o)
{
  const struct web_request *req = o->req;

  if (interim_status (o->status))
    broken (o, "the last response is an interim one");
  if (req->kind == WEB_REQUEST_PROBE && o->status != 206)
    refuse (o, "a probe's body without a 206");
  if (req->kind != WEB_REQUEST_RANGE)
    return;
  if (o->status != 206)
    refuse (o, "not a 206");
  else if (o->content_ranges != 1)
    refuse (o, "not one Content-Range");
  else if (!o->cr.ok || o->cr.unsatisfied || o->cr.first != req->offset ||
           o->cr.last != req->offset + req->length - 1 ||
           (o->cr.total_known && o->cr.total != req->size))
    refuse (o, "another range");
  else if (!o->cr.total_known && req->etag == NULL && req->last_modified == NULL)
    refuse (o, "an unknown total with no validator pinned");
  else if (o->encoded)
    refuse (o, "a content coding");
  else if (o->etag_differs)
    refuse (o, "another ETag");
  else if (o->date_differs)
    refuse (o, "another Last-Modified");
}

/* ---- Driving web-reply.c as its callers do. ---- */

/* parse_decimal and header_value on a line, against the rules above. */
static void
check_helpers (const uint8_t *line, size_t len)
{
  size_t n = strip_end (line, len), colon, k;
  uint64_t a = 0, b = 0;

  for (k = 0; k <= n && k <= 21; k++) {
    bool ra = parse_decimal ((const char *) line, k, &a), rb = decimal (line, k, &b);
    FUZZ_CHECK (ra == rb && (!ra || a == b), "parse_decimal of %zu bytes: %d %llu, "
                "expected %d %llu", k, ra, (unsigned long long) a, rb,
                (unsigned long long) b);
  }
  for (colon = 0; colon < n && line[colon] != ':'; colon++)
    ;
  if (colon < n) {
    const uint8_t *v;
    size_t vlen, got_len;
    const char *got = header_value ((const char *) line, n, colon, &got_len);
    value_of (line, n, colon, &v, &vlen);
    FUZZ_CHECK ((const uint8_t *) got == v && got_len == vlen, "header_value");
  }
}

/* Feed a header section line by line, each with its end; stop where the
 * callers stop (a refusal).  The lines fed go to the oracle too. */
static void
feed (struct web_reply *r, struct oracle *o, const uint8_t *text, size_t len,
      bool helpers)
{
  size_t pos = 0;

  while (pos < len) {
    const uint8_t *lf = memchr (text + pos, '\n', len - pos);
    size_t n = lf ? (size_t) (lf - (text + pos)) + 1 : len - pos;
    char *line = malloc (n ? n : 1);    /* its own allocation: overreads show */
    bool go_on;

    FUZZ_CHECK (line != NULL, "malloc");
    memcpy (line, text + pos, n);
    go_on = web_reply_line (r, line, n);
    FUZZ_CHECK (go_on == (r->problem[0] == '\0'), "web_reply_line's result");
    if (o)
      oracle_line (o, text + pos, n);
    if (helpers)
      check_helpers (text + pos, n);
    free (line);
    pos += n;
    if (!go_on)
      break;
  }
}

struct verdict {
  bool ok;
  long status;
  char problem[PROBLEM_MAX];
};

/* The callers' questions once the section is fed; checked against the
 * oracle. */
static struct verdict
conclude (struct web_reply *r, struct oracle *o, uint8_t mode)
{
  struct verdict v;

  v.ok = web_reply_check (r);
  v.status = r->status;
  memcpy (v.problem, r->problem, sizeof v.problem);
  /* (A probe's other statuses are refused without a problem: the probe's
   * own verdict, web_reply_probe, says what they mean.) */
  FUZZ_CHECK (!v.ok || r->problem[0] == '\0', "an accepted reply with a problem");
  FUZZ_CHECK (v.ok || r->problem[0] != '\0' || r->req.kind == WEB_REQUEST_PROBE,
              "a refused reply without a problem");
  if (o == NULL)
    return v;
  oracle_end (o);
  FUZZ_CHECK (!v.ok || !o->refuse, "kind %d: reply accepted though %s",
              (int) r->req.kind, o->why);
  FUZZ_CHECK (web_reply_check (r) == v.ok, "a second web_reply_check differs");

  if (r->req.kind == WEB_REQUEST_PROBE) {
    uint64_t size = UINT64_MAX;
    size_t received = (mode & 0x20) ? 1 : (mode & 0x40) ? 2 : 0;
    bool empty_200 = (mode & 0x10) != 0;
    enum web_probe_result p = web_reply_probe (r, received, empty_200, &size);
    if (p == WEB_PROBE_SIZE) {
      bool by_range = o->status == 206 && o->content_ranges == 1 && o->cr.ok &&
        !o->cr.unsatisfied && o->cr.first == 0 && o->cr.last == 0 &&
        o->cr.total_known && received == 1 && size == o->cr.total;
      /* (A 416's first Content-Range counts.) */
      bool empty = size == 0 && ((o->status == 200 && empty_200) ||
                                 (o->status == 416 && o->content_ranges >= 1 &&
                                  o->cr.ok && o->cr.unsatisfied && o->cr.total == 0));
      FUZZ_CHECK (by_range || empty, "probe gave size %llu (status %ld)",
                  (unsigned long long) size, o->status);
      FUZZ_CHECK (!o->encoded, "probe gave a size for an encoded body");
      FUZZ_CHECK (!o->broken, "probe gave a size though %s", o->why);
    }
  }
  if (r->req.kind != WEB_REQUEST_RANGE && v.ok) {
    char *etag = NULL, *date = NULL;
    web_reply_take_validators (r, &etag, &date);
    FUZZ_CHECK (etag == NULL ? o->etag == NULL
                : o->etag && same_text (o->etag, o->etag_len, etag),
                "kept ETag \"%s\"", etag ? etag : "(none)");
    FUZZ_CHECK (date == NULL ? o->date == NULL
                : o->date && same_text (o->date, o->date_len, date),
                "kept Last-Modified \"%s\"", date ? date : "(none)");
    free (etag);
    free (date);
  }
  return v;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct fuzz_input in = { data, size, 0 };
  uint8_t mode = fuzz_u8 (&in), size_choice = fuzz_u8 (&in);
  uint64_t offset = fuzz_u64 (&in);
  uint32_t length = fuzz_u32 (&in);
  uint8_t etag_choice = fuzz_u8 (&in), date_choice = fuzz_u8 (&in);
  size_t first_len = fuzz_u16 (&in);
  struct web_request req = { .kind = (enum web_request_kind) (mode % 3) };
  static struct web_reply reused, fresh;
  struct oracle o1 = { .req = &reused.req }, o2 = { .req = &fresh.req };
  struct verdict v1, v2;
  const uint8_t *text1, *text2;
  size_t len1, len2;

  /* The request: a range inside the object, the object's size, and what
   * the open pinned. */
  req.size = (size_choice & 0x80) ? fuzz_u64 (&in) % INT64_MAX + 1
    : sizes[size_choice % N (sizes)];
  if (req.kind == WEB_REQUEST_RANGE) {
    req.offset = offset % req.size;
    req.length = length % (req.size - req.offset) + 1;
    if (req.length > NBD_MAX_REQUEST_SIZE)
      req.length = (length % NBD_MAX_REQUEST_SIZE) % (req.size - req.offset) + 1;
  }
  else
    req.length = 1;
  if (mode & 0x04)
    req.etag = etags[etag_choice % N (etags)];
  if (mode & 0x08)
    req.last_modified = dates[date_choice % N (dates)];

  len1 = fuzz_span (&in, first_len, &text1);
  len2 = fuzz_span (&in, fuzz_left (&in), &text2);

  /* A zeroed state needs a reset first, as a new transfer's. */
  web_reply_reset (&reused, &req);
  feed (&reused, &o1, text1, len1, true);
  (void) conclude (&reused, &o1, mode);

  /* The next request on the same state, and the same on a fresh one. */
  web_reply_reset (&reused, &req);
  feed (&reused, NULL, text2, len2, false);
  v1 = conclude (&reused, NULL, mode);
  memset (&fresh, 0, sizeof fresh);
  web_reply_reset (&fresh, &req);
  feed (&fresh, &o2, text2, len2, false);
  v2 = conclude (&fresh, &o2, mode);
  FUZZ_CHECK (v1.ok == v2.ok && v1.status == v2.status &&
              strcmp (v1.problem, v2.problem) == 0,
              "after a reset: %d %ld \"%s\"; fresh: %d %ld \"%s\"", v1.ok, v1.status,
              v1.problem, v2.ok, v2.status, v2.problem);

  /* Whatever the open requests kept goes. */
  web_reply_reset (&reused, &req);
  web_reply_reset (&fresh, &req);
  return 0;
}
