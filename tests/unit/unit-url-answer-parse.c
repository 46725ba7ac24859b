/* unit-url-answer-parse.c: the supervisor's parser of the URL checker's
 * answers (src/supervisor/url-answer-parse.c) against hostile ones, TAP
 * output.  Each string's limit is checked twice, in the struct and again
 * by the bounded reader, and the type by the table too, so no one of
 * those checks alone changes a verdict here; every other check does. */
#include <stdint.h>
#include <string.h>

#include "ipc-messages.h"
#include "unit.h"
#include "url-answer-parse.h"
#include "url-check-wire.h"
#include "wire.h"

static uint8_t buf[URL_ANSWER_MAX_PAYLOAD + 64];
static struct url_answer_fields a;

/* An answer: the struct with these flags and kind, then the strings with
 * lengths as given (-1: the string's own), so that a test can lie. */
struct answer {
  uint32_t flags, kind;
  const char *message, *log_url, *file_path, *script_url;
};

static size_t
build (const struct answer *in)
{
  struct url_checked_wire w = {
    .flags = in->flags, .kind = in->kind,
    .message_len = (uint32_t) strlen (in->message),
    .log_url_len = (uint32_t) strlen (in->log_url),
    .file_path_len = (uint32_t) strlen (in->file_path),
    .script_url_len = (uint32_t) strlen (in->script_url),
  };
  struct writer wr;

  writer_init (&wr, buf, sizeof buf);
  PUT (writer_put_bytes (&wr, &w, sizeof w));
  PUT (writer_put_bytes (&wr, in->message, w.message_len));
  PUT (writer_put_bytes (&wr, in->log_url, w.log_url_len));
  PUT (writer_put_bytes (&wr, in->file_path, w.file_path_len));
  PUT (writer_put_bytes (&wr, in->script_url, w.script_url_len));
  return wr.pos;
}

static struct url_checked_wire *
wire (void)
{
  return (struct url_checked_wire *) (void *) buf;
}

static enum url_answer
parse (size_t len)
{
  const struct ipc_header h = { .type = IPC_URL_CHECKED, .payload_len = (uint32_t) len };
  return parse_url_answer (&h, buf, &a);
}

static const struct answer http = { URL_CHECKED_OK, URL_HTTP, "", "http://host/disk", "", "" };
static const struct answer file = { URL_CHECKED_OK, URL_FILE, "", "file:///img", "/img", "" };
static const struct answer secret = { URL_CHECKED_OK | URL_CHECKED_HAS_PASSWORD, URL_HTTPS, "",
                                      "https://host/disk", "", "https://host/disk" };
static const struct answer refused = { 0, 0, "scheme not allowed", "gopher://host/", "", "" };

static void
good (void)
{
  CHECK (parse (build (&http)) == URL_ACCEPTED && a.kind == URL_HTTP && !a.has_password &&
         strcmp (a.log_url, "http://host/disk") == 0 && a.message[0] == '\0' &&
         a.file_path[0] == '\0' && a.script_url[0] == '\0', "http URL accepted");
  CHECK (parse (build (&file)) == URL_ACCEPTED && a.kind == URL_FILE &&
         strcmp (a.file_path, "/img") == 0, "file URL accepted with its path");
  CHECK (parse (build (&secret)) == URL_ACCEPTED && a.kind == URL_HTTPS && a.has_password &&
         strcmp (a.script_url, "https://host/disk") == 0, "URL with a password accepted");
  CHECK (parse (build (&refused)) == URL_REFUSED &&
         strcmp (a.message, "scheme not allowed") == 0 &&
         strcmp (a.log_url, "gopher://host/") == 0, "refusal with its reason");
}

/* The header, against the table's row. */
static void
header (void)
{
  size_t len = build (&http);
  struct ipc_header h = { .type = IPC_URL_CHECKED, .payload_len = (uint32_t) len, .id = 1 };

  CHECK (parse_url_answer (&h, buf, &a) == URL_MALFORMED, "an id refused");
  h = (struct ipc_header) { .type = IPC_URL_CHECKED, .payload_len = (uint32_t) len, .error = 5 };
  CHECK (parse_url_answer (&h, buf, &a) == URL_MALFORMED, "an error refused");
  h = (struct ipc_header) { .type = IPC_CONFIG_URL, .payload_len = (uint32_t) len };
  CHECK (parse_url_answer (&h, buf, &a) == URL_MALFORMED, "another type refused");
  CHECK (parse (sizeof (struct url_checked_wire) - 1) == URL_MALFORMED,
         "payload shorter than its struct refused");
  CHECK (parse (URL_ANSWER_MAX_PAYLOAD + 1) == URL_MALFORMED, "payload over the limit refused");
}

/* Flags, kinds and the strings each verdict has: each a good answer
 * with one thing wrong. */
static const struct {
  struct answer a;
  const char *name;
} malformed[] = {
  { { URL_CHECKED_OK | (1u << 7), URL_HTTP, "", "http://h/", "", "" }, "unknown flag refused" },
  { { URL_CHECKED_OK, URL_FILE + 1, "", "http://h/", "", "" }, "unknown kind refused" },
  { { URL_CHECKED_OK, URL_FILE, "", "file:///img", "", "" }, "file URL without a path refused" },
  { { URL_CHECKED_OK, URL_HTTP, "", "http://h/", "/img", "" },
    "path for a URL not file: refused" },
  { { URL_CHECKED_OK, URL_HTTP, "but", "http://h/", "", "" }, "accepted with a reason refused" },
  { { 0, 0, "", "gopher://h/", "", "" }, "refusal without a reason refused" },
  { { 0, 0, "no", "file:///img", "/img", "" }, "refusal with a path refused" },
  { { 0, 0, "no", "gopher://h/", "", "gopher://h/" }, "refusal with a script URL refused" },
  { { URL_CHECKED_OK, URL_HTTP, "", "", "", "" }, "empty URL for the log refused" },
  { { URL_CHECKED_OK, URL_FILE, "", "file:img", "img", "" }, "relative path refused" },
};

static void
combinations (void)
{
  size_t i;

  for (i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
    CHECK (parse (build (&malformed[i].a)) == URL_MALFORMED, malformed[i].name);
}

/* Lengths against the bytes that are there. */
static void
lengths (void)
{
  static char longest[MAX_LOG_URL_LENGTH + 2];
  struct answer x;
  size_t len;

  len = build (&http);
  CHECK (parse (len - 1) == URL_MALFORMED, "string cut short refused");
  CHECK (parse (len + 1) == URL_MALFORMED, "trailing byte refused");
  len = build (&http);
  wire ()->log_url_len = UINT32_MAX;
  CHECK (parse (len) == URL_MALFORMED, "length 2^32-1 refused");
  len = build (&http);
  wire ()->log_url_len += 1;
  CHECK (parse (len) == URL_MALFORMED, "length past the end refused");
  len = build (&refused);
  wire ()->message_len -= 1;
  wire ()->log_url_len += 1;
  CHECK (parse (len) == URL_REFUSED && strcmp (a.message, "scheme not allowe") == 0,
         "strings are where their lengths say");

  len = build (&http);
  buf[sizeof (struct url_checked_wire) + 4] = '\0';
  CHECK (parse (len) == URL_MALFORMED, "NUL inside a string refused");
  len = build (&refused);
  buf[sizeof (struct url_checked_wire)] = '\0';
  CHECK (parse (len) == URL_MALFORMED, "NUL at the start of a reason refused");

  memset (longest, 'u', MAX_LOG_URL_LENGTH);
  x = http;
  x.log_url = longest;
  CHECK (parse (build (&x)) == URL_ACCEPTED && strlen (a.log_url) == MAX_LOG_URL_LENGTH,
         "longest URL for the log accepted");
  longest[MAX_LOG_URL_LENGTH] = 'u';
  CHECK (parse (build (&x)) == URL_MALFORMED, "URL for the log over the limit refused");
}

int
main (void)
{
  good ();
  header ();
  combinations ();
  lengths ();
  return UNIT_END ();
}
