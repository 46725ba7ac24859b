/*
 * urlcheck-client.c: the supervisor's side of the URL checker
 * (src/urlcheck/url-check.c), and each export's proxy (proxy=,
 * --proxy-from-env).
 *
 * This executable does not link libcurl, so every URL is read by
 * libcurl's URL API in the checker, a child started once at start, whose
 * answers are untrusted: parse_url_answer (url-answer-parse.c) checks each
 * one.  Apart because it is the one reader of that peer's bytes; it owns
 * no state past the start.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "children.h"
#include "config-build.h"
#include "fetcher-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-strings.h"
#include "log.h"
#include "exports.h"
#include "url-answer-parse.h"
#include "url-check-wire.h"
#include "urlcheck-client.h"

/* The parsed options, filled in here (check_urls). */
static struct options *options;
#define opt (*options)

/* A copy of s, or NULL for "". */
static char *
copy_unless_empty (const char *s)
{
  char *c;

  if (s[0] == '\0')
    return NULL;
  c = strdup (s);
  if (c == NULL)
    fatal_errno ("strdup");
  return c;
}

/* Read the checker's answer for export e (parse_url_answer): the checker
 * is a child like any other, and its answer is checked like any other
 * child's message.  For a refused URL, message says why. */
static enum url_answer
take_url_answer (int sock, struct export_spec *e, char message[MAX_URL_MESSAGE + 1])
{
  struct url_answer_fields a;
  struct ipc_header h;
  enum url_answer answer;
  uint8_t *payload;

  if (ipc_recv (sock, &h, &payload, URL_ANSWER_MAX_PAYLOAD) == -1)
    return errno == 0 ? URL_NO_ANSWER : URL_MALFORMED;   /* EOF; too long or cut short */
  answer = parse_url_answer (&h, payload, &a);
  free (payload);
  if (answer == URL_MALFORMED)
    return answer;
  memcpy (message, a.message, sizeof a.message);
  e->log_url = copy_unless_empty (a.log_url);
  e->file_path = copy_unless_empty (a.file_path);
  e->script_url = copy_unless_empty (a.script_url);
  e->kind = a.kind;
  e->has_password = a.has_password;
  return answer;
}

/* ---- Proxies (proxy=, --proxy-from-env). ---- */

/* The first of the environment variables names that is set and not
 * empty, or NULL. */
static const char *
first_env (const char *const *names)
{
  for (; *names; names++) {
    const char *v = getenv (*names);
    if (v && v[0] != '\0')
      return v;
  }
  return NULL;
}

/* e's proxy: proxy=, or with --proxy-from-env the variable libcurl would
 * read for the URL's scheme (http_proxy only in lower case: a CGI
 * program's HTTP_PROXY can come from a request header), then all_proxy;
 * and no_proxy.  Chosen once here, so that the fetcher, its sandbox and
 * the log agree on one proxy (libcurl in the fetcher never reads the
 * environment: child_environment has none of these).  A URL without a
 * scheme is an http:// proxy, as libcurl reads it. */
static void
choose_proxy (struct export_spec *e)
{
  static const char *const http_names[] = { "http_proxy", "all_proxy", "ALL_PROXY", NULL };
  static const char *const https_names[] = { "https_proxy", "HTTPS_PROXY", "all_proxy",
                                             "ALL_PROXY", NULL };
  static const char *const ftp_names[] = { "ftp_proxy", "FTP_PROXY", "all_proxy",
                                           "ALL_PROXY", NULL };
  static const char *const no_names[] = { "no_proxy", "NO_PROXY", NULL };
  const char *p = e->keys.proxy;

  if (p == NULL && opt.proxy_from_env && e->kind != URL_FILE) {
    p = first_env (e->kind == URL_HTTP ? http_names :
                   e->kind == URL_HTTPS ? https_names : ftp_names);
    if (p != NULL) {
      const char *no = first_env (no_names);
      if (no != NULL && strlen (no) > MAX_NOPROXY_LENGTH)
        fatal ("no_proxy is longer than %u bytes", MAX_NOPROXY_LENGTH);
      if (no != NULL && (e->noproxy = strdup (no)) == NULL)
        fatal_errno ("strdup");
    }
  }
  if (p == NULL)
    return;
  if (asprintf (&e->proxy, "%s%s", strstr (p, "://") ? "" : "http://", p) == -1)
    fatal_errno ("asprintf");
  if (strlen (e->proxy) > MAX_URL_LENGTH)
    fatal ("%sexport \"%s\": the proxy's URL is longer than %u bytes", export_where (e),
           e->name, MAX_URL_LENGTH);
}

/* What export e needs of libcurl, for the URL checker (URL_CHECK_*). */
static uint16_t
url_check_needs (const struct export_spec *e)
{
  uint16_t needs = 0;

  switch (e->keys.http_version) {
  case FETCHER_HTTP_2_0: case FETCHER_HTTP_2TLS: case FETCHER_HTTP_2_PRIOR_KNOWLEDGE:
    needs |= URL_CHECK_NEEDS_HTTP2;
    break;
  case FETCHER_HTTP_3: case FETCHER_HTTP_3ONLY:
    needs |= URL_CHECK_NEEDS_HTTP3;
    break;
  }
  if (e->keys.unix_socket_path)
    needs |= URL_CHECK_NEEDS_UNIX;
  return needs;
}

/* Have e's proxy checked like its URL (url_parse_proxy in the checker). */
static enum url_answer
check_proxy (int config_fd, int sock, struct export_spec *e,
             char message[MAX_URL_MESSAGE + 1])
{
  struct export_spec answered = { .fd = -1 };
  struct ipc_header u = { .type = IPC_CONFIG_URL, .flags = URL_CHECK_PROXY,
                          .payload_len = (uint32_t) strlen (e->proxy) };
  enum url_answer a;

  if (ipc_send (config_fd, &u, e->proxy) == -1)
    return URL_NO_ANSWER;
  a = take_url_answer (sock, &answered, message);
  e->proxy_log_url = answered.log_url;
  free (answered.file_path);
  if (a == URL_ACCEPTED && answered.kind != URL_HTTP && answered.kind != URL_HTTPS)
    return URL_MALFORMED;
  /* A password on the command line is visible to every local user; from
   * the environment (--proxy-from-env) it is not, and libcurl takes it. */
  if (a == URL_ACCEPTED && answered.has_password && e->keys.proxy) {
    snprintf (message, MAX_URL_MESSAGE + 1, "the proxy URL holds a password, which "
              "every local user can read on the command line: give proxy-user= and "
              "proxy-password=");
    return URL_REFUSED;
  }
  return a;
}

/* Have export e's URL checked on the checker's config_fd, answered on
 * sock, then its proxy (choose_proxy, check_proxy).  For a refused one,
 * message says why. */
static enum url_answer
check_export_url (int config_fd, int sock, struct export_spec *e,
                  char message[MAX_URL_MESSAGE + 1])
{
  struct ipc_header u;
  enum url_answer answer;

  /* The URL checker takes at most MAX_URL_LENGTH bytes and refuses an
   * empty URL (url-check.c, url.c); a URL file is read up to the same
   * bound (secret.c), one from the command line or a configuration file
   * by check_urls. */
  u = (struct ipc_header) { .type = IPC_CONFIG_URL, .flags = url_check_needs (e),
                            .payload_len = (uint32_t) strlen (e->url) };
  answer = ipc_send (config_fd, &u, e->url) == -1 ? URL_NO_ANSWER
                                                  : take_url_answer (sock, e, message);
  if (answer == URL_ACCEPTED)
    choose_proxy (e);
  if (answer == URL_ACCEPTED && e->proxy) {
    answer = check_proxy (config_fd, sock, e, message);
    if (answer == URL_REFUSED) {
      /* The message is the proxy's, not the URL's. */
      char *m = strdup (message);
      if (m == NULL)
        fatal_errno ("strdup");
      snprintf (message, MAX_URL_MESSAGE + 1, "proxy %s: %s",
                e->proxy_log_url ? e->proxy_log_url : "(from the environment)", m);
      free (m);
    }
  }
  return answer;
}

/* Have every export's URL read by libcurl's URL API in the checker,
 * one at a time, before anything else depends on what a URL means. */
void
check_urls (struct options *o, bool change_user, uid_t uid, gid_t gid)
{
  struct ipc_header h = { .type = IPC_CONFIG_URL_CHECK };
  char message[MAX_URL_MESSAGE + 1];
  int sock[2], pipefd[2], fds[2], status;
  enum url_answer answer = URL_ACCEPTED;
  struct export_spec *e = NULL;
  unsigned i;
  pid_t pid;

  options = o;
  /* Before the checker starts (none may outlive nbdcurld), so that the
   * user is told which export, not that the checker broke off. */
  for (i = 0; i < opt.nexports; i++)
    if (strlen (opt.exports[i].url) > MAX_URL_LENGTH)
      fatal ("%sexport \"%s\": its URL is %zu bytes long, more than the %u nbdcurld "
             "takes", export_where (&opt.exports[i]), opt.exports[i].name,
             strlen (opt.exports[i].url), MAX_URL_LENGTH);
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) == -1 ||
      pipe2 (pipefd, O_CLOEXEC) == -1)
    fatal_errno ("cannot make the URL checker's sockets");
  fds[0] = sock[1];                 /* CHILD_FD_PEER: its answers */
  fds[1] = pipefd[0];               /* CHILD_FD_CONFIG: the URLs */
  pid = spawn_child (ROLE_URL_CHECK, fds, 2);
  if (pid == -1)
    fatal_errno ("cannot start the URL checker");
  close (sock[1]);
  close (pipefd[0]);

  h.flags = (uint16_t) ((opt.verbose ? FETCHER_VERBOSE : 0) |
                        (opt.sandbox_debug ? FETCHER_SANDBOX_DEBUG : 0));
  if (change_user) {
    h.length = 1;
    h.id = uid;
    h.offset = gid;
  }
  if (ipc_send (pipefd[1], &h, NULL) == -1)
    fatal_errno ("cannot talk to the URL checker");
  for (i = 0; i < opt.nexports && answer == URL_ACCEPTED; i++) {
    e = &opt.exports[i];
    answer = check_export_url (pipefd[1], sock[0], e, message);
  }
  /* After a refused URL, EOF instead of IPC_CONFIG_END: the checker
   * ends either way; after a malformed answer it is stopped.  It is
   * waited for before any error below, so none outlives nbdcurld. */
  h = (struct ipc_header) { .type = IPC_CONFIG_END };
  if (answer == URL_ACCEPTED && ipc_send (pipefd[1], &h, NULL) == -1)
    answer = URL_NO_ANSWER;
  if (answer == URL_MALFORMED)
    kill (pid, SIGKILL);
  close (pipefd[1]);
  close (sock[0]);
  while (waitpid (pid, &status, 0) == -1)
    if (errno != EINTR)
      fatal_errno ("waitpid");
  if (answer == URL_REFUSED)
    fatal ("%sexport \"%s\": %s: %s", export_where (e), e->name, e->log_url, message);
  if (answer == URL_MALFORMED)
    fatal ("the URL checker sent a malformed answer for export \"%s\"", e->name);
  if (answer == URL_NO_ANSWER)
    fatal ("the URL checker (%s) ended without answering: see the messages "
           "above", FETCHER_EXE);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    fatal ("the URL checker failed (%s %d): see the messages above",
           WIFEXITED (status) ? "exit status" : "signal",
           WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
}
