/*
 * direct-head-parse.h: the direct reads' parser of a reply's header
 * section (direct-head-parse.c), at the trust boundary with the web
 * server.  It takes only the plain case of HTTP/1.1: every line ends in
 * CRLF, no folding, no transfer coding, one Content-Length; what it
 * does not take is left to libcurl (HEAD_PARSE_GIVE_UP), what is wrong
 * is refused (HEAD_PARSE_FAIL).  Every line but those that frame the
 * body goes to the one reply checker (web-reply.c), which decides
 * whether the reply is the range asked for.  No state of its own, no
 * transfers, no sockets: it links with web-reply.c and wire.c alone.
 */
#ifndef NBDCURLD_DIRECT_HEAD_PARSE_H
#define NBDCURLD_DIRECT_HEAD_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "web-reply.h"

enum head_parse {
  HEAD_PARSE_OK,              /* every line taken: the checker decides */
  HEAD_PARSE_FAIL,            /* refused: the reply's problem says why */
  HEAD_PARSE_GIVE_UP,         /* not the plain case: *why says what */
};

/* What of a header section frames the body: this parser's, not the
 * checker's. */
struct reply_framing {
  uint64_t length;            /* Content-Length, or UINT64_MAX: none */
  bool conn_close;            /* the server closes after this reply */
};

/* One header section, exactly len bytes ending in its blank line (as
 * header_section_end found it), read through the bounded reader, its
 * lines handed to the reply checker (reply) but for those that frame
 * the body, which go into *framing. */
enum head_parse parse_header_section (struct web_reply *reply, const uint8_t *data,
                                      size_t len, struct reply_framing *framing,
                                      const char **why);

/* The end of the header section in buf[0..len): the offset just past
 * its empty line, or 0 while it has not come.  *scanned says how far an
 * earlier call searched the same buffer (0 for a new one), and is moved
 * on. */
size_t header_section_end (const uint8_t *buf, size_t len, size_t *scanned);

#endif
