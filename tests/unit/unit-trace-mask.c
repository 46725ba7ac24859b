/*
 * unit-trace-mask.c: the masks of -D curl.verbose=1 (mask_line in
 * src/fetcher/fetcher-trace.c, static, so the file is compiled into this one),
 * one line of each kind libcurl and the direct path write, with what the
 * log must show for it.  TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fetcher-trace.c"

struct http_state http;

static int tests, failures;

static void
expect (char kind, const char *line, const char *want, const char *name)
{
  char out[TRACE_LINE_MAX + 8];

  mask_line (kind, line, strlen (line), out, sizeof out);
  tests++;
  if (strcmp (out, want) == 0)
    printf ("ok %d - %s\n", tests, name);
  else {
    printf ("not ok %d - %s\n#   got:  %s\n#   want: %s\n", tests, name, out, want);
    failures++;
  }
}

int
main (void)
{
  static char long_line[4096], long_want[TRACE_LINE_MAX + 8];
  char out[TRACE_LINE_MAX + 8];

  /* Header lines of HTTP/1.x. */
  expect ('>', "Authorization: Basic YWxpY2U6U0VDUkVU", "Authorization: <masked>",
          "a request's Authorization");
  expect ('>', "X-Token: SECRET", "X-Token: <masked>", "a header= line");
  expect ('>', "Range: bytes=0-65535", "Range: bytes=0-65535", "Range shown");
  expect ('>', "GET /disk.img?X-Amz-Signature=SECRET HTTP/1.1", "GET /disk.img?... HTTP/1.1",
          "a request line's query string");
  expect ('<', "Set-Cookie: srv=SECRET; Path=/", "Set-Cookie: <masked>", "a reply's Set-Cookie");
  expect ('<', "Location: http://bob:SECRET@example.org/x", "Location: http://<masked>@example.org/x",
          "a Location's user information");

  /* libcurl's text of HTTP/2 request headers, in its two wordings. */
  expect ('*', "h2h3 [authorization: Basic YWxpY2U6U0VDUkVU]", "h2h3 [authorization: <masked>]",
          "h2h3 authorization");
  expect ('*', "h2h3 [x-nbdcurld-test: SECRET]", "h2h3 [x-nbdcurld-test: <masked>]",
          "h2h3 header= line");
  expect ('*', "h2h3 [cookie: session=SECRET]", "h2h3 [cookie: <masked>]", "h2h3 cookie");
  expect ('*', "[HTTP/2] [1] [authorization: Bearer SECRET]", "[HTTP/2] [1] [authorization: <masked>]",
          "[HTTP/2] [1] authorization");
  expect ('*', "h2h3 [user-agent: nbdcurld/0.1.0]", "h2h3 [user-agent: nbdcurld/0.1.0]",
          "h2h3 user-agent shown");
  expect ('*', "h2h3 [:method: GET]", "h2h3 [:method: GET]", "h2h3 pseudo-header shown");
  expect ('*', "h2h3 [:path: /disk.img?sig=SECRET]", "h2h3 [:path: /disk.img?...",
          "h2h3 :path's query string");

  /* Secrets libcurl writes into its own sentences. */
  expect ('*', "Added cookie srv=\"SECRET\" for domain 127.0.0.1, path /, expire 0",
          "Added cookie srv=\"<masked>\" for domain 127.0.0.1, path /, expire 0",
          "the cookie engine's Added cookie");
  expect ('*', "Replaced cookie s=\"a\"SECRET\"\" for domain h, path /, expire 0",
          "Replaced cookie s=\"<masked>\" for domain h, path /, expire 0",
          "a cookie value holding quotes");
  expect ('*', "Added cookie s=\"SECRET", "Added cookie s=\"<masked>", "a cut cookie line");
  expect ('*', "sending Proxy-Authorization: Basic SECRET", "sending Proxy-Authorization: <masked>",
          "Proxy-Authorization in text");
  expect ('*', "Issue another request to this URL: 'http://alice:SECRET@127.0.0.1:80/good/x'",
          "Issue another request to this URL: 'http://<masked>@127.0.0.1:80/good/x'",
          "a redirect's URL");
  expect ('*', "Connecting to http://alice:SECRETPART", "Connecting to http://<masked>",
          "a URL libcurl cut before its '@'");
  expect ('*', "Server auth using Basic with user 'alice'", "Server auth using Basic with user 'alice'",
          "harmless text unchanged");
  expect ('*', "Connected to 127.0.0.1 (127.0.0.1) port 80 (#0)",
          "Connected to 127.0.0.1 (127.0.0.1) port 80 (#0)", "a connection line unchanged");
  expect ('>', "Evil\x01Name: x", "Evil?Name: <masked>", "control bytes made printable");

  /* A password whose '@' lies past the cut: masked, not cut open. */
  strcpy (long_line, "Issue another request to this URL: 'http://alice:SECRET");
  memset (long_line + strlen (long_line), 'a', 1000);
  strcat (long_line, "@host/x'");
  expect ('*', long_line, "Issue another request to this URL: 'http://<masked>@host/x'",
          "a password longer than a trace line");

  /* A line longer than a trace line is cut to it. */
  memset (long_line, 'b', sizeof long_line - 1);
  long_line[sizeof long_line - 1] = '\0';
  mask_line ('*', long_line, strlen (long_line), out, sizeof out);
  memset (long_want, 'b', sizeof long_want - 1);
  long_want[sizeof long_want - 1] = '\0';
  tests++;
  if (strlen (out) < sizeof out && strncmp (out, long_want, strlen (out)) == 0 &&
      strlen (out) >= TRACE_LINE_MAX)
    printf ("ok %d - a long line cut to a trace line\n", tests);
  else {
    printf ("not ok %d - a long line cut to a trace line (%zu bytes)\n", tests, strlen (out));
    failures++;
  }

  printf ("1..%d\n", tests);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
