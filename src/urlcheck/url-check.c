/*
 * url-check.c: the URL checker, a short-lived role of the fetcher's
 * executable.
 *
 * The supervisor is linked without libcurl: every process that loads it
 * pays about a megabyte of private pages for the relocations of its
 * thirty-odd libraries, and the supervisor only
 * ever needed libcurl to read URLs.  Yet a URL must mean to the
 * supervisor exactly what it means to libcurl in the fetchers, so the
 * supervisor does not parse URLs itself: at start it hands each export's
 * URL to this process, which reads it with url.c (libcurl's URL API) and
 * answers with IPC_URL_CHECKED: refused and why, or the kind of URL, the
 * form that may be logged, whether it holds a password, and a file: URL's
 * path.  The checker exits at IPC_CONFIG_END.
 *
 * The URLs are the operator's, and may hold credentials: they come on
 * the configuration pipe, never on a command line.  The checker is
 * sandboxed before it reads the first one, with nothing to reach (no
 * file, no connection), and the supervisor reads its answers through the
 * bounded reader like any other child's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "child.h"
#include "child-fds.h"
#include "fetcher-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "limits-strings.h"
#include "log.h"
#include "policy.h"
#include "roles.h"
#include "sandbox.h"
#include "url.h"
#include "url-check-wire.h"
#include "wire.h"

#ifdef NBDCURLD_TEST_HOOKS
void sandbox_probe (const char *probe);
void hostile_url_answer (const char *mode, struct ipc_header *h, uint8_t *buf,
                         size_t *len, size_t cap);
#endif

/* What the export needs (URL_CHECK_NEEDS_*) that this libcurl was built
 * without, as a message; or "" when it has it all. */
static void
missing_feature (uint32_t flags, enum url_kind kind, char *message, size_t len)
{
  const curl_version_info_data *v = curl_version_info (CURLVERSION_NOW);

  if ((flags & URL_CHECK_NEEDS_HTTP2) && !(v->features & CURL_VERSION_HTTP2))
    snprintf (message, len, "http-version= asks for HTTP/2, which this libcurl "
              "(%s) was built without: use http-version=1.1 or none", v->version);
  else if ((flags & URL_CHECK_NEEDS_HTTP3) && !(v->features & CURL_VERSION_HTTP3))
    snprintf (message, len, "http-version= asks for HTTP/3, which this libcurl "
              "(%s) was built without: use http-version=2TLS, 1.1 or none", v->version);
  else if ((flags & URL_CHECK_NEEDS_UNIX) && !(v->features & CURL_VERSION_UNIX_SOCKETS))
    snprintf (message, len, "unix-socket-path=: this libcurl (%s) was built "
              "without Unix socket support", v->version);
  else if ((flags & URL_CHECK_PROXY) && kind == URL_HTTPS &&
           !(v->features & CURL_VERSION_HTTPS_PROXY))
    snprintf (message, len, "this libcurl (%s) cannot talk TLS to a proxy: use an "
              "http:// proxy", v->version);
}

/* Answer for one URL (flags: URL_CHECK_*) on CHILD_FD_PEER. */
static void
answer (const char *url, uint32_t flags)
{
  static uint8_t buf[sizeof (struct url_checked_wire) + MAX_URL_MESSAGE +
                     2 * MAX_LOG_URL_LENGTH + MAX_PATH_LENGTH];
  struct url_checked_wire w = { 0 };
  struct ipc_header h = { .type = IPC_URL_CHECKED };
  char message[MAX_URL_MESSAGE + 1] = "";
  char *shown = url_for_log (url), *path = NULL, *for_scripts = url_without_userinfo (url);
  enum url_kind kind = URL_HTTP;
  struct writer out;
  bool parsed;

  if (shown == NULL)
    fatal_errno ("malloc");
  parsed = (flags & URL_CHECK_PROXY)
    ? url_parse_proxy (url, &kind, message, sizeof message) == 0
    : url_parse (url, &kind, &path, message, sizeof message) == 0;
  if (parsed)
    missing_feature (flags, kind, message, sizeof message);
  if (parsed && message[0] == '\0') {
    if (path != NULL && strlen (path) > MAX_PATH_LENGTH)
      snprintf (message, sizeof message,
                "the file: URL's path is longer than %u bytes", MAX_PATH_LENGTH);
    else {
      w.flags |= URL_CHECKED_OK;
      w.kind = (uint32_t) kind;
      w.file_path_len = path != NULL ? (uint32_t) strlen (path) : 0;
    }
  }
  if (url_has_password (url))
    w.flags |= URL_CHECKED_HAS_PASSWORD;
  if (for_scripts != NULL && strlen (for_scripts) > MAX_LOG_URL_LENGTH && message[0] == '\0') {
    snprintf (message, sizeof message, "the URL without its user name and password "
              "is longer than %u bytes as libcurl writes it", MAX_LOG_URL_LENGTH);
    w.flags &= ~URL_CHECKED_OK;
    w.kind = 0;
    w.file_path_len = 0;
  }
  if (for_scripts != NULL && (w.flags & URL_CHECKED_OK))
    w.script_url_len = (uint32_t) strlen (for_scripts);
  /* libcurl percent-encodes what it normalises: a log line gets the
   * start of a URL that grew past the limit. */
  if (strlen (shown) > MAX_LOG_URL_LENGTH)
    memcpy (shown + MAX_LOG_URL_LENGTH - 3, "...", 4);
  w.message_len = (uint32_t) strlen (message);
  w.log_url_len = (uint32_t) strlen (shown);

  writer_init (&out, buf, sizeof buf);
  if (writer_put_bytes (&out, &w, sizeof w) == -1 ||
      writer_put_bytes (&out, message, w.message_len) == -1 ||
      writer_put_bytes (&out, shown, w.log_url_len) == -1 ||
      writer_put_bytes (&out, path, w.file_path_len) == -1 ||
      writer_put_bytes (&out, for_scripts, w.script_url_len) == -1)
    fatal ("an answer does not fit its buffer");   /* sized above: a bug */
  h.payload_len = (uint32_t) out.pos;
#ifdef NBDCURLD_TEST_HOOKS
  /* Test binary only (tests/hooks/hostile-url-check.c): a wrong answer. */
  {
    const char *lie = strstr (url, "#checker-lie=");
    if (lie)
      hostile_url_answer (lie + strlen ("#checker-lie="), &h, buf, &out.pos, sizeof buf);
  }
#endif
  if (ipc_send (CHILD_FD_PEER, &h, buf) == -1)
    fatal_errno ("answering the supervisor");
  free (shown);
  free (path);
  free (for_scripts);
}

int
url_check_main (void)
{
  static char url[MAX_URL_LENGTH + 1];
  struct ipc_header h;
  uint8_t *payload;

  child_start (ROLE_URL_CHECK);
  if (ipc_recv (CHILD_FD_CONFIG, &h, &payload, 0) == -1)
    fatal_errno ("reading from the supervisor");
  if (h.type != IPC_CONFIG_URL_CHECK)
    fatal ("configuration: expected message type %u, got %u",
           IPC_CONFIG_URL_CHECK, h.type);
  free (payload);
  log_init (roles[ROLE_URL_CHECK].name, (h.flags & FETCHER_VERBOSE) != 0);
  {
    /* Nothing to open, nothing to connect to: Landlock with no path and
     * no port.  Started as root, the supervisor has not changed user yet
     * and says which user to become (id, offset). */
    const struct sandbox_spec spec = {
      .role = roles[ROLE_URL_CHECK].name,
      .rules = roles[ROLE_URL_CHECK].rules, .nrules = *roles[ROLE_URL_CHECK].nrules,
      .debug = (h.flags & FETCHER_SANDBOX_DEBUG) != 0,
      .change_user = h.length != 0, .uid = (uid_t) h.id, .gid = (gid_t) h.offset,
      .landlock = true,
      .new_ipc_uts = true,
      .nofile = 16,
      .no_file_writes = true,
    };
    if (h.length != 0 && (h.id > UINT32_MAX - 1 || h.offset > UINT32_MAX - 1))
      fatal ("configuration: bad user");
    sandbox_enter (&spec);
  }

  for (;;) {
    struct reader r;

    if (ipc_recv (CHILD_FD_CONFIG, &h, &payload, MAX_URL_LENGTH) == -1) {
      /* EOF between messages: the supervisor stopped asking (it refused
       * a URL, and says so itself). */
      if (errno == 0)
        return EXIT_SUCCESS;
      fatal_errno ("reading from the supervisor");
    }
    if (h.type == IPC_CONFIG_END) {
      free (payload);
      return EXIT_SUCCESS;
    }
    if (h.type != IPC_CONFIG_URL)
      fatal ("configuration: unexpected message type %u", h.type);
    if ((h.flags & ~URL_CHECK_ALL) != 0)
      fatal ("configuration: unknown URL check flags 0x%x", h.flags);
    reader_init (&r, payload, h.payload_len);
    if (h.payload_len < 1 || reader_get_string (&r, url, h.payload_len, MAX_URL_LENGTH) == -1)
      fatal ("configuration: bad URL message");
    explicit_bzero (payload, h.payload_len);
    free (payload);
#ifdef NBDCURLD_TEST_HOOKS
    /* Test binary only (tests/hooks/sandbox-probe.c): try what the sandbox
     * must refuse, from inside the real checker. */
    {
      const char *probe = strstr (url, "#checker-probe=");
      if (probe)
        sandbox_probe (probe + strlen ("#checker-probe="));
    }
#endif
    answer (url, h.flags);
    explicit_bzero (url, sizeof url);
  }
}
