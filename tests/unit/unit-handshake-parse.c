/* unit-handshake-parse.c: the handshake's parsers (handshake-parse.c)
 * against hostile input, TAP output. */
#include <stdint.h>
#include <string.h>

#include "handshake-parse.h"
#include "limits-handshake.h"
#include "limits-nbd.h"
#include "unit.h"
#include "wire.h"

static uint8_t buf[NBD_OPTION_HEADER_SIZE + NBD_MAX_OPTION_LENGTH + 64];
static struct writer w;

static void
start (void)
{
  writer_init (&w, buf, sizeof buf);
}

static void
put_u16 (uint16_t v)
{
  PUT (writer_put_u16_be (&w, v));
}

static void
put_u32 (uint32_t v)
{
  PUT (writer_put_u32_be (&w, v));
}

static void
put_bytes (const void *p, size_t n)
{
  PUT (writer_put_bytes (&w, p, n));
}

/* A length and the string's bytes. */
static void
put_string (const char *s)
{
  put_u32 ((uint32_t) strlen (s));
  put_bytes (s, strlen (s));
}

static void
put_option_header (uint64_t magic, uint32_t option, uint32_t length)
{
  PUT (writer_put_u64_be (&w, magic));
  put_u32 (option);
  put_u32 (length);
}

static void
client_flags (void)
{
  CHECK (client_flags_acceptable (NBD_FLAG_C_FIXED_NEWSTYLE), "fixed newstyle accepted");
  CHECK (client_flags_acceptable (NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES),
         "with no zeroes accepted");
  /* Plain newstyle: served, with EXPORT_NAME alone (handshake.c). */
  CHECK (client_flags_acceptable (0), "plain newstyle accepted");
  CHECK (client_flags_acceptable (NBD_FLAG_C_NO_ZEROES), "no zeroes in plain newstyle");
  CHECK (!client_flags_acceptable (NBD_FLAG_C_NO_ZEROES | (1u << 2)),
         "unknown flag refused in plain newstyle");
  CHECK (!client_flags_acceptable (NBD_FLAG_C_FIXED_NEWSTYLE | (1u << 7)), "unknown flag refused");
  CHECK (!client_flags_acceptable (UINT32_MAX), "every flag refused");
}

static void
option_headers (void)
{
  struct client_option o;

  start ();
  put_option_header (NBD_IHAVEOPT, NBD_OPT_GO, 0);
  CHECK (parse_option (buf, NBD_OPTION_HEADER_SIZE - 1, &o) == OPTION_INCOMPLETE,
         "truncated header waits");
  CHECK (parse_option (buf, 0, &o) == OPTION_INCOMPLETE, "nothing waits");
  CHECK (parse_option (buf, w.pos, &o) == OPTION_COMPLETE && o.option == NBD_OPT_GO &&
         o.length == 0 && o.size == NBD_OPTION_HEADER_SIZE, "empty option complete");

  start ();
  put_option_header (NBD_IHAVEOPT ^ 1, NBD_OPT_GO, 0);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_BAD_MAGIC, "bad magic refused");

  /* The cap comes before the data is waited for: only the header is here. */
  start ();
  put_option_header (NBD_IHAVEOPT, NBD_OPT_INFO, NBD_MAX_OPTION_LENGTH + 1);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_TOO_LONG && o.option == NBD_OPT_INFO &&
         o.length == NBD_MAX_OPTION_LENGTH + 1, "length over the limit refused at once");
  start ();
  put_option_header (NBD_IHAVEOPT, 0x7fff, UINT32_MAX);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_TOO_LONG, "unknown option of 4 GiB refused");

  start ();
  put_option_header (NBD_IHAVEOPT, NBD_OPT_GO, NBD_MAX_OPTION_LENGTH);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_INCOMPLETE, "longest option waits for data");
  CHECK (parse_option (buf, w.pos + NBD_MAX_OPTION_LENGTH, &o) == OPTION_COMPLETE &&
         o.size == NBD_OPTION_HEADER_SIZE + NBD_MAX_OPTION_LENGTH, "longest option complete");

  start ();
  put_option_header (NBD_IHAVEOPT, NBD_OPT_GO, 10);
  put_bytes ("01234", 5);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_INCOMPLETE, "truncated data waits");

  /* An unknown option is framed like any: the next one follows it. */
  start ();
  put_option_header (NBD_IHAVEOPT, 0xdead, 3);
  put_bytes ("abc", 3);
  put_option_header (NBD_IHAVEOPT, NBD_OPT_ABORT, 0);
  CHECK (parse_option (buf, w.pos, &o) == OPTION_COMPLETE && o.option == 0xdead &&
         o.length == 3 && o.data == buf + NBD_OPTION_HEADER_SIZE &&
         o.size == NBD_OPTION_HEADER_SIZE + 3, "unknown option framed");
  CHECK (parse_option (buf + o.size, w.pos - o.size, &o) == OPTION_COMPLETE &&
         o.option == NBD_OPT_ABORT, "and the next one after it");
}

static void
export_names (void)
{
  char name[NBD_MAX_STRING + 1];
  static char longest[NBD_MAX_STRING + 1];

  CHECK (parse_export_name ((const uint8_t *) "disk", 4, name) == 0 &&
         strcmp (name, "disk") == 0, "export name");
  CHECK (parse_export_name (buf, 0, name) == 0 && name[0] == '\0', "empty export name");
  memset (longest, 'x', sizeof longest);
  CHECK (parse_export_name ((const uint8_t *) longest, NBD_MAX_STRING, name) == 0 &&
         strlen (name) == NBD_MAX_STRING, "longest export name");
  CHECK (parse_export_name ((const uint8_t *) longest, NBD_MAX_STRING + 1, name) == -1,
         "export name over the limit refused");
  CHECK (parse_export_name ((const uint8_t *) "a\0b", 3, name) == -1, "NUL in a name refused");
}

static void
info_go (void)
{
  struct info_go_request req;

  start ();
  put_string ("disk");
  put_u16 (3);
  put_u16 (NBD_INFO_NAME);
  put_u16 (NBD_INFO_DESCRIPTION);
  put_u16 (0x7777);                     /* unknown: ignored */
  CHECK (parse_info_go (buf, w.pos, &req) == 0 && strcmp (req.name, "disk") == 0 &&
         req.want_name && req.want_description, "GO with infos");
  CHECK (parse_info_go (buf, w.pos - 1, &req) == -1, "truncated info list refused");
  CHECK (parse_info_go (buf, 6, &req) == -1, "truncated name refused");
  CHECK (parse_info_go (buf, 0, &req) == -1, "no data refused");
  start ();
  put_string ("disk");
  put_u16 (1);
  put_u16 (NBD_INFO_EXPORT);
  put_u16 (NBD_INFO_NAME);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "info list longer than its count refused");

  start ();
  put_string ("");
  put_u16 (0);
  CHECK (parse_info_go (buf, w.pos, &req) == 0 && req.name[0] == '\0' && !req.want_name &&
         !req.want_description, "default export, no infos");

  /* Name lengths that would wrap or overrun. */
  start ();
  put_u32 (UINT32_MAX);
  put_bytes ("disk", 4);
  put_u16 (0);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "name length 2^32-1 refused");
  start ();
  put_u32 (UINT32_MAX - 1);
  put_u16 (0);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "name length that wraps with the count refused");
  start ();
  put_u32 (NBD_MAX_STRING + 1);
  for (unsigned i = 0; i <= NBD_MAX_STRING; i++)
    put_bytes ("n", 1);
  put_u16 (0);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "name over the limit refused");
  start ();
  put_u32 (100);
  put_bytes ("disk", 4);
  put_u16 (0);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "name length past the data refused");

  start ();
  put_string ("disk");
  put_u16 (NBD_MAX_INFO_REQUESTS + 1);
  for (unsigned i = 0; i <= NBD_MAX_INFO_REQUESTS; i++)
    put_u16 (NBD_INFO_EXPORT);
  CHECK (parse_info_go (buf, w.pos, &req) == -1, "too many info requests refused");
}

static void
meta_context (void)
{
  struct meta_context_request req;

  start ();
  put_string ("disk");
  put_u32 (1);
  put_string (NBD_META_BASE_ALLOCATION);
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_COMPLETE &&
         strcmp (req.name, "disk") == 0 && req.nqueries == 1 && req.base_allocation,
         "SET base:allocation");
  CHECK (parse_meta_context (buf, w.pos + 1, false, &req) == META_TRAILING,
         "trailing byte refused");
  CHECK (parse_meta_context (buf, w.pos - 1, false, &req) == META_BAD_QUERY,
         "truncated query refused");
  CHECK (parse_meta_context (buf, 6, false, &req) == META_BAD_REQUEST,
         "truncated name refused");
  CHECK (parse_meta_context (buf, 8, false, &req) == META_BAD_REQUEST,
         "missing query count refused");

  start ();
  put_string ("disk");
  put_u32 (1);
  put_string ("base:");
  CHECK (parse_meta_context (buf, w.pos, true, &req) == META_COMPLETE && req.base_allocation,
         "LIST base: selects it");
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_COMPLETE && !req.base_allocation,
         "SET base: does not");

  start ();
  put_string ("");
  put_u32 (0);
  CHECK (parse_meta_context (buf, w.pos, true, &req) == META_COMPLETE && req.base_allocation,
         "LIST with no query lists all");
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_COMPLETE && !req.base_allocation,
         "SET with no query selects none");

  start ();
  put_string ("disk");
  put_u32 (2);
  put_string ("other:context");
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_BAD_QUERY,
         "fewer queries than counted refused");

  start ();
  put_string ("disk");
  put_u32 (NBD_MAX_META_QUERIES + 1);
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_BAD_REQUEST,
         "too many queries refused");

  start ();
  put_u32 (UINT32_MAX);
  put_u32 (0);
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_BAD_REQUEST,
         "name length 2^32-1 refused");

  start ();
  put_string ("disk");
  put_u32 (1);
  put_u32 (UINT32_MAX);
  put_bytes ("base:allocation", 15);
  CHECK (parse_meta_context (buf, w.pos, false, &req) == META_BAD_QUERY,
         "query length 2^32-1 refused");
}

int
main (void)
{
  client_flags ();
  option_headers ();
  export_names ();
  info_go ();
  meta_context ();
  return UNIT_END ();
}
