/*
 * scripts.c: the supervisor runs header-script= and cookie-script=.
 *
 * Only the supervisor starts programs, so an export's scripts run here:
 * /bin/sh, forked from the supervisor (under its user, its cleared
 * capabilities and its seccomp filter), in a process group of its own,
 * with a scrubbed environment and a temporary directory made at start.
 * The supervisor never waits for one: each run's standard output and
 * error are pipes in its poll loop, and a run that is not over after
 * SCRIPT_TIMEOUT seconds has its process group killed.
 *
 * A run's output is read through the bounded reader (at most
 * MAX_SCRIPT_OUTPUT bytes) and checked as header= and cookie= are; the
 * values then go to every live fetcher of the export as one
 * IPC_SCRIPT_VALUES message on its script channel (ipc-messages.h,
 * child-fds.h).  A fetcher that starts while a run is under way gets the
 * values when it is over; one that starts later gets the current ones at
 * once.
 *
 * Runs start: at the first fetcher of the export; when a renewal time
 * (header-script-renew=, cookie-script-renew=) has passed and fetchers
 * are alive (else at the next fetcher); when a fetcher asks
 * (IPC_SCRIPT_RENEW: a 401 or 403), at most once per generation and
 * SCRIPT_MIN_INTERVAL_MS after the previous start.
 *
 * Peers: the scripts (two pipes each, and SIGCHLD through
 * supervisor.c), the fetchers' script channels (one request type).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <linux/close_range.h>
#include <unistd.h>

#include "clock.h"
#include "event.h"
#include "fetcher-wire.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "limits-script-runs.h"
#include "limits-scripts.h"
#include "limits-strings.h"
#include "log.h"
#include "script-values.h"
#include "scripts.h"
#include "wire.h"

enum script_kind { SCRIPT_HEADER, SCRIPT_COOKIE };
static const char *const kind_key[] = { "header-script", "cookie-script" };

/* One script of one export. */
struct script {
  const char *text;           /* NULL: not configured */
  uint32_t renew;             /* seconds, 0: never */
  uint64_t iteration;         /* $iteration of the next run */
  /* A run under way: pid > 0. */
  pid_t pid;
  int out_fd, err_fd;         /* -1 once at EOF */
  bool exited;
  int status;
  char out[MAX_SCRIPT_OUTPUT];
  size_t out_len;
  bool out_too_long;
  char err[SCRIPT_STDERR_BYTES];
  size_t err_len;
  uint64_t deadline_ms;
  /* The last good output, as the fetchers get it. */
  char *value;                /* "Name: value\r\n" lines, or the cookie */
  bool have_value;
  uint64_t renew_at_ms;       /* 0: no renewal due */
  bool stale;                 /* its renewal time passed without fetchers:
                                 the next fetcher's start runs it */
  pid_t unreaped;             /* a run killed at its time limit: its exit is
                                 still to come through SIGCHLD */
};

struct export_scripts {
  bool any;
  const char *name;           /* for log lines */
  const char *url;            /* $url: without user name and password */
  const char *full_url;       /* standard input: the URL as given */
  char *tmpdir;               /* $tmpdir, made at start */
  struct script s[2];
  uint64_t generation;        /* of the values the fetchers have: 0 none */
  bool wanted;                /* a run is asked for: at want_at_ms */
  uint64_t want_at_ms;
  uint64_t last_start_ms;
  bool failed;                /* the last round failed */
};

struct script_fetcher {
  pid_t pid;
  unsigned export;
  int fd;                     /* our end of its script channel */
  uint64_t sent;              /* the generation it was sent, 0: none yet */
};

static struct export_scripts *exports;
static unsigned nexports;
static struct script_fetcher *fetchers;
static unsigned nfetchers, max_fetchers;
/* The environment every script gets, but for its own variables. */
static char *base_env[8];
static unsigned nbase_env;

/* ---- Start-up (before the sandbox). ---- */

static void
keep_env (const char *name, const char *fallback)
{
  const char *v = getenv (name);
  if (v == NULL)
    v = fallback;
  if (v == NULL)
    return;
  if (asprintf (&base_env[nbase_env], "%s=%s", name, v) == -1)
    fatal_errno ("asprintf");
  nbase_env++;
}

void
scripts_prepare (struct options *o, unsigned max, bool change_user, uid_t uid, gid_t gid)
{
  const char *tmp = getenv ("TMPDIR");
  unsigned i;

  nexports = o->nexports;
  exports = calloc (nexports, sizeof *exports);
  if (exports == NULL)
    fatal_errno ("calloc");
  for (i = 0; i < nexports; i++) {
    struct export_spec *e = &o->exports[i];
    struct export_scripts *x = &exports[i];
    unsigned k;

    x->s[SCRIPT_HEADER].text = e->keys.header_script;
    x->s[SCRIPT_HEADER].renew = e->keys.header_script_renew;
    x->s[SCRIPT_COOKIE].text = e->keys.cookie_script;
    x->s[SCRIPT_COOKIE].renew = e->keys.cookie_script_renew;
    for (k = 0; k < 2; k++)
      x->s[k].out_fd = x->s[k].err_fd = -1;
    x->any = x->s[0].text || x->s[1].text;
    if (!x->any)
      continue;
    if (e->kind == URL_FILE)
      fatal ("export \"%s\": header-script= and cookie-script= are for network "
             "URLs, not file: exports", e->name);
    x->name = e->name;
    x->url = e->script_url ? e->script_url : e->url;
    x->full_url = e->url;
    if (asprintf (&x->tmpdir, "%s/nbdcurld-script-XXXXXX",
                  tmp && tmp[0] == '/' ? tmp : "/tmp") == -1)
      fatal_errno ("asprintf");
    if (mkdtemp (x->tmpdir) == NULL)
      fatal_errno ("export \"%s\": cannot make a temporary directory for its "
                   "scripts (set TMPDIR to a writable directory)", e->name);
    /* Started as root: the scripts run as --user, and must be able to
     * write there; the supervisor removes it at exit, as that user. */
    if (change_user && chown (x->tmpdir, uid, gid) == -1)
      fatal_errno ("export \"%s\": cannot give %s to --user", e->name, x->tmpdir);
  }
  /* The scripts' environment: the supervisor's PATH (or a default),
   * HOME and the locale, nothing else of ours (secrets that the operator's
   * shell had, FOO_SECRET=..., stay out). */
  keep_env ("PATH", "/usr/local/bin:/usr/bin:/bin");
  keep_env ("HOME", NULL);
  keep_env ("LANG", NULL);
  keep_env ("LC_ALL", NULL);
  keep_env ("LC_CTYPE", NULL);
  max_fetchers = max;
}

bool
scripts_configured (unsigned export)
{
  return export < nexports && exports[export].any;
}

uint32_t
scripts_fetcher_flags (unsigned export)
{
  if (!scripts_configured (export))
    return 0;
  return (exports[export].s[SCRIPT_HEADER].text ? FETCHER_HEADER_SCRIPT : 0) |
         (exports[export].s[SCRIPT_COOKIE].text ? FETCHER_COOKIE_SCRIPT : 0);
}

/* ---- Running a script. ---- */

/* A sealed memfd holding text, for a script's descriptors; -1 on failure.
 * (A pipe could hold less than MAX_SCRIPT_LENGTH under a user's pipe
 * quota, and writing it whole would then block.) */
static int
text_descriptor (const char *name, const char *text, const char *end)
{
  int fd = memfd_create (name, MFD_ALLOW_SEALING);
  size_t len = strlen (text), done = 0;

  if (fd == -1)
    return -1;
  while (done < len) {
    ssize_t n = write (fd, text + done, len - done);
    if (n <= 0)
      return -1;
    done += (size_t) n;
  }
  if ((end[0] && write (fd, end, strlen (end)) != (ssize_t) strlen (end)) ||
      lseek (fd, 0, SEEK_SET) != 0 ||
      fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == -1)
    return -1;
  return fd;
}

/* In the forked child: never returns. */
__attribute__((noreturn)) static void
exec_script (const struct export_scripts *x, const struct script *s, int out, int err)
{
  /* Secrets never in the environment or on the command line (any process
   * of our user reads /proc/PID/environ, every local user command
   * lines, and the environment goes on to every program the script
   * runs).  The script's text (it may hold tokens) comes on descriptor
   * SCRIPT_TEXT_FD, which the shell reads and closes before it runs the
   * text; the URL with its user name and password on standard input. */
  char *argv[] = {
    (char *) "sh", (char *) "-c",
    (char *) "eval \"$(cat <&" SCRIPT_TEXT_FD_STRING ")\" " SCRIPT_TEXT_FD_STRING "<&-",
    NULL,
  };
  char *env[sizeof base_env / sizeof base_env[0] + 4];
  unsigned n = 0, i;
  sigset_t none;
  int text, url;

  for (i = 0; i < nbase_env; i++)
    env[n++] = base_env[i];
  /* In the forked child of a single-threaded process: malloc is safe. */
  if (asprintf (&env[n++], "iteration=%" PRIu64, s->iteration) == -1 ||
      asprintf (&env[n++], "url=%s", x->url) == -1 ||
      asprintf (&env[n++], "tmpdir=%s", x->tmpdir) == -1)
    _exit (126);
  env[n] = NULL;

  /* Its own process group, so that a timeout kills what it started too;
   * and it dies with us. */
  (void) setpgid (0, 0);
  (void) prctl (PR_SET_PDEATHSIG, SIGKILL);
  text = text_descriptor ("nbdcurld-script", s->text, "");
  url = text_descriptor ("nbdcurld-script-url", x->full_url, "\n");
  if (text == -1 || url == -1 || dup2 (url, STDIN_FILENO) == -1 ||
      dup2 (out, STDOUT_FILENO) == -1 || dup2 (err, STDERR_FILENO) == -1 ||
      dup2 (text, SCRIPT_TEXT_FD) == -1)
    _exit (126);
  /* Nothing of ours: listeners, the control socket, images, fetchers'
   * channels. */
  if (close_range (SCRIPT_TEXT_FD + 1, ~0U, 0) == -1)
    _exit (126);
  if (chdir (x->tmpdir) == -1)
    _exit (126);
  signal (SIGPIPE, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execve ("/bin/sh", argv, env);
  _exit (127);
}

static void
start_script (struct export_scripts *x, enum script_kind k)
{
  struct script *s = &x->s[k];
  int out[2], err[2];
  pid_t pid;

  s->out_len = s->err_len = 0;
  s->out_too_long = false;
  s->exited = false;
  s->stale = false;
  if (pipe2 (out, O_CLOEXEC) == -1)
    goto fail;
  if (pipe2 (err, O_CLOEXEC) == -1) {
    close (out[0]);
    close (out[1]);
    goto fail;
  }
  pid = fork ();
  if (pid == 0)
    exec_script (x, s, out[1], err[1]);
  close (out[1]);
  close (err[1]);
  if (pid == -1) {
    close (out[0]);
    close (err[0]);
    goto fail;
  }
  (void) fcntl (out[0], F_SETFL, O_NONBLOCK);
  (void) fcntl (err[0], F_SETFL, O_NONBLOCK);
  s->pid = pid;
  s->out_fd = out[0];
  s->err_fd = err[0];
  s->deadline_ms = monotonic_ms () + (uint64_t) SCRIPT_TIMEOUT * 1000;
  debug ("export \"%s\": running its %s (iteration %" PRIu64 ", process %d)",
         x->name, kind_key[k], s->iteration, (int) pid);
  s->iteration++;
  return;
 fail:
  warn_errno ("export \"%s\": cannot start its %s", x->name, kind_key[k]);
  s->have_value = false;
}

static bool
running (const struct export_scripts *x)
{
  return x->s[0].pid > 0 || x->s[1].pid > 0;
}

static void round_done (unsigned e);

/* Start every configured script of x. */
static void
start_round (struct export_scripts *x)
{
  unsigned k;

  x->wanted = false;
  x->last_start_ms = monotonic_ms ();
  for (k = 0; k < 2; k++)
    if (x->s[k].text)
      start_script (x, (enum script_kind) k);
  /* None could start (fork or pipe failed): the round is over. */
  if (!running (x))
    round_done ((unsigned) (x - exports));
}

/* Ask for a round at the earliest SCRIPT_MIN_INTERVAL_MS after the last
 * start (none runs twice at once). */
static void
want_round (struct export_scripts *x)
{
  uint64_t earliest = x->last_start_ms + SCRIPT_MIN_INTERVAL_MS;

  if (running (x) || x->wanted)
    return;
  x->wanted = true;
  x->want_at_ms = x->last_start_ms == 0 ? 0 : earliest;
}

/* ---- Checking a run's output. ---- */

/* Log a failed run's first lines of standard error, made printable. */
static void
log_stderr (const struct export_scripts *x, enum script_kind k)
{
  const struct script *s = &x->s[k];
  struct reader r;
  unsigned lines = 0;

  reader_init (&r, s->err, s->err_len);
  while (reader_remaining (&r) > 0 && lines < SCRIPT_STDERR_LINES) {
    const uint8_t *line;
    const uint8_t *nl = memchr (r.data + r.pos, '\n', reader_remaining (&r));
    size_t len = nl ? (size_t) (nl - (r.data + r.pos)) : reader_remaining (&r);
    char shown[SCRIPT_STDERR_BYTES + 1];
    size_t i;

    if (reader_get_span (&r, &line, len) == -1)
      break;
    if (nl && reader_skip (&r, 1) == -1)
      break;
    for (i = 0; i < len; i++)
      shown[i] = line[i] >= 0x20 && line[i] < 0x7f ? (char) line[i] : '?';
    shown[len] = '\0';
    if (len == 0)
      continue;
    warn ("export \"%s\": %s: %s", x->name, kind_key[k], shown);
    lines++;
  }
}

/* A header-script's output into "Name: value\r\n" lines, checked as
 * header= lines are.  Returns the block (malloc'd) or NULL with why. */
static char *
parse_headers (const struct script *s, char *why, size_t why_len)
{
  struct reader r;
  char *block = malloc (MAX_EXTRA_HEADER_BYTES + 1);
  size_t used = 0;
  unsigned n = 0;

  if (block == NULL)
    fatal_errno ("malloc");
  reader_init (&r, s->out, s->out_len);
  while (reader_remaining (&r) > 0) {
    const uint8_t *nl = memchr (r.data + r.pos, '\n', reader_remaining (&r));
    size_t len = nl ? (size_t) (nl - (r.data + r.pos)) : reader_remaining (&r);
    char line[MAX_SCRIPT_OUTPUT + 1];
    const char *problem;

    if (reader_get_string (&r, line, len, sizeof line - 1) == -1 ||
        (nl && reader_skip (&r, 1) == -1)) {
      snprintf (why, why_len, "line %u has a NUL byte", n + 1);
      goto bad;
    }
    if (len > 0 && line[len - 1] == '\r')
      line[--len] = '\0';
    if (len == 0)
      continue;               /* blank lines: nothing to send */
    problem = header_line_problem (line);
    if (problem != NULL) {
      /* The header's name only: its value may be a secret. */
      snprintf (why, why_len, "line %u (%.*s): %s", n + 1,
                (int) (strcspn (line, ":") < 64 ? strcspn (line, ":") : 64), line, problem);
      goto bad;
    }
    if (n == MAX_EXTRA_HEADERS || used + len + 2 > MAX_EXTRA_HEADER_BYTES) {
      snprintf (why, why_len, "more than %u headers or %u bytes", MAX_EXTRA_HEADERS,
                MAX_EXTRA_HEADER_BYTES);
      goto bad;
    }
    memcpy (block + used, line, len);
    memcpy (block + used + len, "\r\n", 2);
    used += len + 2;
    n++;
    explicit_bzero (line, len);
  }
  block[used] = '\0';
  return block;
 bad:
  explicit_bzero (block, MAX_EXTRA_HEADER_BYTES + 1);
  free (block);
  return NULL;
}

/* A cookie-script's one line, checked as cookie= is. */
static char *
parse_cookie (const struct script *s, char *why, size_t why_len)
{
  struct reader r;
  const uint8_t *nl;
  size_t len, i;
  char *cookie;

  reader_init (&r, s->out, s->out_len);
  nl = memchr (s->out, '\n', s->out_len);
  len = nl ? (size_t) (nl - (const uint8_t *) s->out) : s->out_len;
  if (nl && len + 1 != s->out_len) {
    snprintf (why, why_len, "it printed more than one line");
    return NULL;
  }
  if (len > 0 && s->out[len - 1] == '\r')
    len--;
  if (len > MAX_COOKIE_LENGTH) {
    snprintf (why, why_len, "the cookie is longer than %u bytes", MAX_COOKIE_LENGTH);
    return NULL;
  }
  cookie = malloc (len + 1);
  if (cookie == NULL)
    fatal_errno ("malloc");
  if (reader_get_bytes (&r, cookie, len) == -1)
    fatal ("internal error: cookie length");
  cookie[len] = '\0';
  for (i = 0; i < len; i++)
    if ((unsigned char) cookie[i] < 0x20 || (unsigned char) cookie[i] == 0x7f) {
      snprintf (why, why_len, "the cookie has a control character");
      explicit_bzero (cookie, len);
      free (cookie);
      return NULL;
    }
  return cookie;
}

/* ---- Telling the fetchers. ---- */

static void
drop_fetcher (unsigned i)
{
  close (fetchers[i].fd);
  fetchers[i] = fetchers[--nfetchers];
}

/* Send fetcher i the export's values (or the failure of the last round).
 * Returns false when it was dropped. */
static bool
send_values (unsigned i)
{
  struct script_fetcher *f = &fetchers[i];
  const struct export_scripts *x = &exports[f->export];
  struct ipc_header h = { .type = IPC_SCRIPT_VALUES, .id = x->generation };
  uint8_t payload[SCRIPT_VALUES_MAX_PAYLOAD];
  int r;

  if (x->failed) {
    h.error = EACCES;
    r = ipc_send_datagram (f->fd, &h, NULL);
  }
  else {
    const char *headers = x->s[SCRIPT_HEADER].value ? x->s[SCRIPT_HEADER].value : "";
    const char *cookie = x->s[SCRIPT_COOKIE].value ? x->s[SCRIPT_COOKIE].value : "";
    struct script_values_wire w = {
      .headers_len = (uint32_t) strlen (headers),
      .cookie_len = (uint32_t) strlen (cookie),
    };
    /* Checked when parsed: within MAX_EXTRA_HEADER_BYTES, MAX_COOKIE_LENGTH. */
    h.flags = (uint16_t) ((x->s[SCRIPT_HEADER].text ? SCRIPT_VALUES_HEADERS : 0) |
                          (x->s[SCRIPT_COOKIE].text ? SCRIPT_VALUES_COOKIE : 0));
    memcpy (payload, &w, sizeof w);
    memcpy (payload + sizeof w, headers, w.headers_len);
    memcpy (payload + sizeof w + w.headers_len, cookie, w.cookie_len);
    h.payload_len = (uint32_t) sizeof w + w.headers_len + w.cookie_len;
    r = ipc_send_datagram (f->fd, &h, payload);
    explicit_bzero (payload, h.payload_len);
  }
  if (r == -1) {
    /* Its channel is full (it does not read) or gone: it ends at EOF. */
    if (errno != EPIPE && errno != ECONNRESET)
      warn_errno ("fetcher %d of export \"%s\": cannot send the scripts' values: "
                  "ending it", (int) f->pid, x->name);
    drop_fetcher (i);
    return false;
  }
  f->sent = x->generation;
  return true;
}

/* Every live fetcher of export e gets the new values, or the failure. */
static void
tell_fetchers (unsigned e)
{
  unsigned i = 0;

  while (i < nfetchers)
    if (fetchers[i].export != e || send_values (i))
      i++;
}

/* A round is over when every script of it is: take the values. */
static void
round_done (unsigned e)
{
  struct export_scripts *x = &exports[e];
  bool ok = true;
  unsigned k;

  for (k = 0; k < 2; k++)
    if (x->s[k].text && !x->s[k].have_value)
      ok = false;
  x->failed = !ok;
  if (ok)
    x->generation++;
  tell_fetchers (e);
}

/* One script's run ended (exited and both pipes at EOF, or killed). */
static void
script_done (unsigned e, enum script_kind k, const char *killed_why)
{
  struct export_scripts *x = &exports[e];
  struct script *s = &x->s[k];
  char why[256] = "";
  char *value = NULL;

  if (s->out_fd >= 0)
    close (s->out_fd);
  if (s->err_fd >= 0)
    close (s->err_fd);
  s->out_fd = s->err_fd = -1;
  if (!s->exited)
    s->unreaped = s->pid;
  s->pid = 0;

  if (killed_why)
    snprintf (why, sizeof why, "%s", killed_why);
  else if (s->out_too_long)   /* and then killed */
    snprintf (why, sizeof why, "it printed more than %u bytes", MAX_SCRIPT_OUTPUT);
  else if (WIFSIGNALED (s->status))
    snprintf (why, sizeof why, "killed by signal %d (%s)%s", WTERMSIG (s->status),
              strsignal (WTERMSIG (s->status)),
              WTERMSIG (s->status) == SIGSYS
              ? ": the supervisor's seccomp filter, which scripts run under, "
                "refused a system call (policy/supervisor.policy)" : "");
  else if (WEXITSTATUS (s->status) != 0)
    snprintf (why, sizeof why, "exit status %d", WEXITSTATUS (s->status));
  else if (k == SCRIPT_HEADER)
    value = parse_headers (s, why, sizeof why);
  else
    value = parse_cookie (s, why, sizeof why);

  if (value == NULL) {
    warn ("export \"%s\": %s failed: %s%s", x->name, kind_key[k], why,
          s->err_len ? "; its standard error:" : "");
    log_stderr (x, k);
    /* A renewal that failed keeps nothing of the old values: a server
     * that refused them will refuse them again. */
    s->have_value = false;
  }
  else {
    if (s->value) {
      explicit_bzero (s->value, strlen (s->value));
      free (s->value);
    }
    s->value = value;
    s->have_value = true;
    debug ("export \"%s\": %s done (%zu bytes)", x->name, kind_key[k], strlen (value));
  }
  explicit_bzero (s->out, s->out_len);
  s->out_len = 0;
  if (s->renew)
    s->renew_at_ms = monotonic_ms () + (uint64_t) s->renew * 1000;
  if (!running (x))
    round_done (e);
}

static void
check_finished (unsigned e, enum script_kind k)
{
  struct script *s = &exports[e].s[k];

  if (s->pid > 0 && s->exited && s->out_fd == -1 && s->err_fd == -1)
    script_done (e, k, NULL);
}

/* Read what a script wrote on one of its pipes. */
static void
read_pipe (unsigned e, enum script_kind k, bool is_out)
{
  struct script *s = &exports[e].s[k];
  int *fd = is_out ? &s->out_fd : &s->err_fd;
  char drop[4096];
  ssize_t n;

  /* At most one buffer a pass: a chatty script cannot hold the loop. */
  if (is_out && s->out_len < sizeof s->out)
    n = read (*fd, s->out + s->out_len, sizeof s->out - s->out_len);
  else if (!is_out && s->err_len < sizeof s->err)
    n = read (*fd, s->err + s->err_len, sizeof s->err - s->err_len);
  else
    n = read (*fd, drop, sizeof drop);
  if (n == -1 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0) {
    close (*fd);
    *fd = -1;
    check_finished (e, k);
    return;
  }
  if (is_out && s->out_len < sizeof s->out)
    s->out_len += (size_t) n;
  else if (is_out) {
    /* More than it may print: the run has failed; stop it now. */
    explicit_bzero (drop, sizeof drop);
    if (!s->out_too_long)
      (void) kill (-s->pid, SIGKILL);
    s->out_too_long = true;
  }
  else if (s->err_len < sizeof s->err)
    s->err_len += (size_t) n;
}

/* ---- The supervisor's loop. ---- */

bool
scripts_child_exited (pid_t pid, int status)
{
  unsigned e, k;

  for (e = 0; e < nexports; e++)
    for (k = 0; k < 2; k++) {
      if (exports[e].s[k].unreaped == pid) {
        exports[e].s[k].unreaped = 0;     /* its failure is logged already */
        return true;
      }
      if (exports[e].s[k].pid == pid) {
        exports[e].s[k].exited = true;
        exports[e].s[k].status = status;
        check_finished (e, (enum script_kind) k);
        return true;
      }
    }
  return false;
}

int
scripts_new_fetcher (unsigned e, pid_t pid, int fd)
{
  struct export_scripts *x = &exports[e];
  uint64_t now = monotonic_ms ();
  unsigned k;
  bool stale = false;

  if (nfetchers == max_fetchers) {
    close (fd);
    errno = EAGAIN;
    return -1;
  }
  (void) fcntl (fd, F_SETFL, O_NONBLOCK);
  fetchers[nfetchers++] = (struct script_fetcher) { .pid = pid, .export = e, .fd = fd };
  for (k = 0; k < 2; k++)
    if (x->s[k].text && (!x->s[k].have_value || x->s[k].stale ||
                         (x->s[k].renew_at_ms && now >= x->s[k].renew_at_ms)))
      stale = true;
  if (running (x))
    return 0;                   /* it gets the values when the run ends */
  if (stale || x->generation == 0) {
    /* The first fetcher, a renewal time passed, or the last round failed:
     * a new round, which this fetcher waits for; at once, unless one
     * started less than SCRIPT_MIN_INTERVAL_MS ago (clients that connect
     * again and again to an export whose script fails). */
    want_round (x);
    if (x->wanted && x->want_at_ms <= now)
      start_round (x);
    return 0;
  }
  (void) send_values (nfetchers - 1);
  return 0;
}

void
scripts_fetcher_exited (pid_t pid)
{
  unsigned i;

  for (i = 0; i < nfetchers; i++)
    if (fetchers[i].pid == pid) {
      drop_fetcher (i);
      return;
    }
}

/* A message on fetcher i's channel: IPC_SCRIPT_RENEW, or it is dropped. */
static void
dispatch_fetcher (unsigned i)
{
  struct script_fetcher *f = &fetchers[i];
  struct export_scripts *x = &exports[f->export];
  struct ipc_header h;

  if (ipc_recv_datagram (f->fd, &h, NULL, 0) == -1) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    if (errno != 0) {
      warn ("fetcher %d of export \"%s\": a malformed message on its script "
            "channel: ending it", (int) f->pid, x->name);
      (void) kill (f->pid, SIGKILL);    /* broken or taken over */
    }
    drop_fetcher (i);
    return;
  }
  if (h.type != IPC_SCRIPT_RENEW || ipc_check (&h, 0, ROLE_FETCHER, ROLE_SUPERVISOR) != NULL ||
      h.id > x->generation) {
    warn ("fetcher %d of export \"%s\": unexpected message type %u on its script "
          "channel: ending it", (int) f->pid, x->name, h.type);
    (void) kill (f->pid, SIGKILL);      /* broken or taken over */
    drop_fetcher (i);
    return;
  }
  /* Refused with values older than the current ones: it has the new ones
   * already (every live fetcher gets each generation). */
  if (h.id < x->generation)
    return;
  debug ("export \"%s\": fetcher %d was refused (401 or 403): renewing", x->name,
         (int) f->pid);
  want_round (x);
}

/* One of x's scripts' pipes is readable, or closed.  Descriptors may
 * close while the round's functions run: each is found by number. */
static void
script_pipe_ready (int fd, short revents, void *cookie)
{
  struct export_scripts *x = cookie;
  unsigned e = (unsigned) (x - exports), k;

  if (!(revents & (POLLIN | POLLHUP | POLLERR)))
    return;
  for (k = 0; k < 2; k++) {
    struct script *s = &x->s[k];
    if (s->pid > 0 && s->out_fd == fd)
      read_pipe (e, (enum script_kind) k, true);
    else if (s->pid > 0 && s->err_fd == fd)
      read_pipe (e, (enum script_kind) k, false);
  }
}

/* A fetcher's script channel is readable, or closed. */
static void
script_channel_ready (int fd, short revents, void *cookie)
{
  unsigned i;

  (void) cookie;
  if (!(revents & (POLLIN | POLLHUP | POLLERR)))
    return;
  for (i = 0; i < nfetchers; i++)
    if (fetchers[i].fd == fd) {
      dispatch_fetcher (i);
      break;
    }
}

/* When scripts_run_due has something to do next: UINT64_MAX for never. */
static uint64_t
next_due_ms (void)
{
  uint64_t next = UINT64_MAX;
  unsigned e, k;

  for (e = 0; e < nexports; e++) {
    const struct export_scripts *x = &exports[e];
    /* While a run is under way only its deadline counts: what is due
     * waits for its end (which the pipes and SIGCHLD announce). */
    if (running (x)) {
      for (k = 0; k < 2; k++)
        if (x->s[k].pid > 0 && x->s[k].deadline_ms < next)
          next = x->s[k].deadline_ms;
      continue;
    }
    if (x->wanted && x->want_at_ms < next)
      next = x->want_at_ms;
    for (k = 0; k < 2; k++)
      if (x->s[k].renew_at_ms && x->s[k].renew_at_ms < next)
        next = x->s[k].renew_at_ms;
  }
  return next;
}

static void scripts_run_due (void *cookie);

int
scripts_register (struct event_loop *ev)
{
  uint64_t next = next_due_ms ();
  unsigned e, k, i;

  for (e = 0; e < nexports; e++)
    for (k = 0; k < 2; k++) {
      const struct script *s = &exports[e].s[k];
      if (s->pid > 0 &&
          (event_add (ev, s->out_fd, POLLIN, script_pipe_ready, &exports[e]) == -1 ||
           event_add (ev, s->err_fd, POLLIN, script_pipe_ready, &exports[e]) == -1))
        return -1;
    }
  for (i = 0; i < nfetchers; i++)
    if (event_add (ev, fetchers[i].fd, POLLIN, script_channel_ready, NULL) == -1)
      return -1;
  if (next != UINT64_MAX && event_timer (ev, next, scripts_run_due, NULL) == -1)
    return -1;
  return 0;
}

static bool
has_fetchers (unsigned e)
{
  unsigned i;

  for (i = 0; i < nfetchers; i++)
    if (fetchers[i].export == e)
      return true;
  return false;
}

/* Runs out of time, renewals and rounds asked for whose time has come. */
static void
scripts_run_due (void *cookie)
{
  uint64_t now = monotonic_ms ();
  unsigned e, k;

  (void) cookie;
  for (e = 0; e < nexports; e++) {
    struct export_scripts *x = &exports[e];
    for (k = 0; k < 2; k++) {
      struct script *s = &x->s[k];
      if (s->pid > 0 && now >= s->deadline_ms) {
        char why[64];
        (void) kill (-s->pid, SIGKILL);
        (void) kill (s->pid, SIGKILL);    /* if setpgid failed */
        snprintf (why, sizeof why, "still running after %u seconds: killed",
                  SCRIPT_TIMEOUT);
        /* Reaped through SIGCHLD like any child (no longer ours then). */
        script_done (e, (enum script_kind) k, why);
      }
      /* A renewal time: rerun while fetchers use the values; with none,
       * the next fetcher's start runs it (scripts_new_fetcher). */
      if (s->renew_at_ms && now >= s->renew_at_ms && !running (x)) {
        s->renew_at_ms = 0;
        if (has_fetchers (e))
          want_round (x);
        else
          s->stale = true;                /* see scripts_new_fetcher */
      }
    }
    if (x->wanted && now >= x->want_at_ms && !running (x))
      start_round (x);
  }
}

/* ---- Exit. ---- */

/* Remove what a script left in its directory (one level) and the
 * directory. */
static void
remove_tmpdir (const char *path)
{
  DIR *d = opendir (path);
  struct dirent *de;

  if (d != NULL) {
    while ((de = readdir (d)) != NULL)
      if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
        (void) unlinkat (dirfd (d), de->d_name, 0);
    closedir (d);
  }
  if (rmdir (path) == -1 && errno != ENOENT)
    notice ("cannot remove the scripts' directory %s: %s (a script left a "
            "directory in it?)", path, strerror (errno));
}

void
scripts_cleanup (void)
{
  unsigned e, k;

  for (e = 0; e < nexports; e++) {
    for (k = 0; k < 2; k++)
      if (exports[e].s[k].pid > 0)
        (void) kill (-exports[e].s[k].pid, SIGKILL);
    if (exports[e].tmpdir)
      remove_tmpdir (exports[e].tmpdir);
  }
}

void
scripts_alloc_fetchers (void)
{
  fetchers = calloc (max_fetchers ? max_fetchers : 1, sizeof *fetchers);
  if (fetchers == NULL)
    fatal_errno ("calloc");
}
