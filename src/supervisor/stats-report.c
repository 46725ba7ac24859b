/*
 * stats-report.c: the statistics' reports (stats-report.h), and their two
 * formats.  The text format is for people (nbdcurld(8), STATISTICS):
 * per export a "total:" line in the shape of nbdkit's stats filter, then
 * a line per kind of request, the web's side, the readahead, latency
 * percentiles and errors.  The Prometheus format is the text exposition
 * format, metric names prefixed nbdcurld_, one series per export (label
 * export), for node_exporter's textfile collector.
 *
 * The figures come from the front-end, which sums what clients did and
 * what their fetchers said; a lying fetcher can only make its client's
 * figures wrong (every sum saturates).  The file is replaced whole: written
 * beside it under another name, then renamed over it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "ipc.h"
#include "log.h"
#include "stats.h"
#include "stats-report.h"

static const struct options *opt;
static uint64_t start_ms;
static char *file_path;               /* --stats-file, absolute */

/* The last complete report, and the one coming in. */
static struct stats_wire *latest, *incoming;
static bool have_latest;
static bool latest_written;           /* to --stats-file */
static uint32_t next_export;          /* incoming's next index */
static unsigned reports_to_log;       /* asked by SIGUSR1, not yet come */
static uint64_t next_interval_ms;

void
stats_report_setup (const struct options *o)
{
  opt = o;
  start_ms = monotonic_ms ();
  latest = calloc (o->nexports ? o->nexports : 1, sizeof *latest);
  incoming = calloc (o->nexports ? o->nexports : 1, sizeof *incoming);
  if (latest == NULL || incoming == NULL)
    fatal_errno ("calloc");
  if (o->stats_interval)
    next_interval_ms = start_ms + (uint64_t) o->stats_interval * 1000;
  if (o->stats_file == NULL) {
    if (o->stats_interval || o->stats_prometheus || o->stats_append)
      fatal ("--stats-interval, --stats-format and statsappend= are about the "
             "statistics file: give --stats-file FILE too");
    return;
  }
  if (o->stats_file[0] == '/')
    file_path = strdup (o->stats_file);
  else {
    char *cwd = getcwd (NULL, 0);
    if (cwd == NULL || asprintf (&file_path, "%s/%s", cwd, o->stats_file) == -1)
      fatal_errno ("--stats-file %s: the current directory", o->stats_file);
    free (cwd);
  }
  if (file_path == NULL)
    fatal_errno ("strdup");
}

/* May uid:gid make files in the directory st describes?  By its mode
 * bits: an ACL that allows more is not looked at. */
static bool
may_write_dir (const struct stat *st, uid_t uid, gid_t gid)
{
  if (uid == 0)
    return true;
  if (st->st_uid == uid)
    return (st->st_mode & 0300) == 0300;
  if (st->st_gid == gid)
    return (st->st_mode & 0030) == 0030;
  return (st->st_mode & 0003) == 0003;
}

void
stats_report_check_dir (bool change_user, uid_t uid, gid_t gid)
{
  char *slash, *dir;
  struct stat st;
  bool ok;

  if (file_path == NULL)
    return;
  dir = strdup (file_path);
  if (dir == NULL)
    fatal_errno ("strdup");
  slash = strrchr (dir, '/');
  slash[slash == dir ? 1 : 0] = '\0';
  if (stat (dir, &st) == -1 || !S_ISDIR (st.st_mode))
    fatal ("--stats-file %s: %s is not a directory", opt->stats_file, dir);
  ok = change_user ? may_write_dir (&st, uid, gid) : access (dir, W_OK | X_OK) == 0;
  if (!ok)
    fatal ("--stats-file %s: %s cannot be written by %s (the file is replaced by "
           "renaming a new one over it, in the same directory): choose a directory "
           "%s may write", opt->stats_file, dir,
           change_user ? "the user the server runs as (--user)" : "this user",
           change_user ? "that user" : "you");
  free (dir);
}

/* ---- Formatting. ---- */

typedef void line_fn (void *cookie, const char *line);

/* printf into one line for out. */
__attribute__((format (printf, 3, 4)))
static void
emit (line_fn *out, void *cookie, const char *fmt, ...)
{
  char line[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (line, sizeof line, fmt, ap);
  va_end (ap);
  out (cookie, line);
}

/* bytes in the largest binary unit that keeps it >= 1. */
static const char *
human_size (uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = (double) bytes;
  unsigned u = 0;

  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024;
    u++;
  }
  snprintf (buf, len, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

static const char *
latency_text (uint64_t us, char *buf, size_t len)
{
  if (us == UINT64_MAX)
    snprintf (buf, len, "over %.0f s", (double) stats_bucket_upper_us (STATS_LATENCY_BUCKETS - 2) / 1e6);
  else
    snprintf (buf, len, "%.3f ms", (double) us / 1000);
  return buf;
}

/* An export name as text between double quotes: \ and " escaped, and
 * anything outside printable ASCII as \xHH. */
static void
quoted (const char *name, char *buf, size_t len, bool prometheus)
{
  size_t o = 0;

  for (; *name && o + 5 < len; name++) {
    unsigned char ch = (unsigned char) *name;
    if (ch == '\\' || ch == '"') {
      buf[o++] = '\\';
      buf[o++] = (char) ch;
    }
    else if (ch == '\n' && prometheus) {
      buf[o++] = '\\';
      buf[o++] = 'n';
    }
    else if (ch < 0x20 || ch == 0x7f)
      o += (size_t) snprintf (buf + o, len - o, prometheus ? "\\\\x%02x" : "\\x%02x", ch);
    else
      buf[o++] = (char) ch;
  }
  buf[o] = '\0';
}

static void
text_errors (const struct stats_wire *s, line_fn *out, void *cookie)
{
  char line[400];
  size_t o;
  uint64_t total = 0;
  unsigned i;

  for (i = 0; i < STATS_ERRNOS; i++)
    total = stats_sat_add (total, s->errors[i]);
  o = (size_t) snprintf (line, sizeof line, "  errors: %" PRIu64, total);
  for (i = 0; i < STATS_ERRNOS && o < sizeof line; i++)
    if (s->errors[i])
      o += (size_t) snprintf (line + o, sizeof line - o, ", %s %" PRIu64,
                              stats_errno_names[i], s->errors[i]);
  for (i = 0; i < STATS_CAUSES && o < sizeof line; i++)
    if (s->causes[i])
      o += (size_t) snprintf (line + o, sizeof line - o, ", %s %" PRIu64,
                              stats_cause_names[i], s->causes[i]);
  out (cookie, line);
}

static void
text_export (const char *name, const struct stats_wire *s, double elapsed,
             line_fn *out, void *cookie)
{
  char q[256], a[32], b[32], c[32];
  uint64_t total = stats_sat_add (s->bytes_read, s->bytes_written);
  unsigned k;

  quoted (name, q, sizeof q, false);
  emit (out, cookie, "export \"%s\": %" PRIu64 " connections, %.2f s connected", q,
        s->connections, (double) s->connected_ms / 1000);
  emit (out, cookie, "  total: %" PRIu64 " ops, %.2f s, %s, %s/s", stats_total_requests (s),
        elapsed, human_size (total, a, sizeof a),
        human_size ((uint64_t) ((double) total / (elapsed > 0 ? elapsed : 1)), b, sizeof b));
  for (k = 0; k < STATS_KINDS; k++) {
    if (k == STATS_READ || k == STATS_WRITE)
      emit (out, cookie, "  %s: %" PRIu64 " ops, %" PRIu64 " bytes (%s)", stats_kind_names[k],
            s->requests[k], k == STATS_READ ? s->bytes_read : s->bytes_written,
            human_size (k == STATS_READ ? s->bytes_read : s->bytes_written, a, sizeof a));
    else
      emit (out, cookie, "  %s: %" PRIu64 " ops", stats_kind_names[k], s->requests[k]);
  }
  emit (out, cookie, "  web: %" PRIu64 " bytes fetched (%s), %" PRIu64 " requests, %" PRIu64
        " retries", s->fetcher.web_bytes, human_size (s->fetcher.web_bytes, a, sizeof a),
        s->fetcher.web_requests, s->fetcher.retries);
  emit (out, cookie, "  readahead: %" PRIu64 " hits, %" PRIu64 " bytes (%s)",
        s->fetcher.readahead_hits, s->fetcher.readahead_bytes,
        human_size (s->fetcher.readahead_bytes, a, sizeof a));
  emit (out, cookie, "  read cache: %" PRIu64 " hits, %" PRIu64 " bytes (%s)",
        s->fetcher.cache_hits, s->fetcher.cache_bytes,
        human_size (s->fetcher.cache_bytes, a, sizeof a));
  emit (out, cookie, "  latency: p50 %s, p90 %s, p99 %s",
        latency_text (stats_percentile_us (s, 500), a, sizeof a),
        latency_text (stats_percentile_us (s, 900), b, sizeof b),
        latency_text (stats_percentile_us (s, 990), c, sizeof c));
  text_errors (s, out, cookie);
}

static void
text_report (const struct stats_wire *r, line_fn *out, void *cookie)
{
  double elapsed = (double) (monotonic_ms () - start_ms) / 1000;
  unsigned e;

  emit (out, cookie, "nbdcurld statistics: %.2f s since the start, %u export%s", elapsed,
        opt->nexports, opt->nexports == 1 ? "" : "s");
  for (e = 0; e < opt->nexports; e++)
    text_export (opt->exports[e].name, &r[e], elapsed, out, cookie);
}

/* One metric: its HELP and TYPE, then a sample per export from value(). */
struct metric {
  const char *name, *type, *help;
  const char *label;                   /* a second label's name, or NULL */
  unsigned nvalues;                    /* values per export (label values) */
  const char *const *label_values;
  uint64_t (*value) (const struct stats_wire *s, unsigned i);
};

static uint64_t v_connections (const struct stats_wire *s, unsigned i) { (void) i; return s->connections; }
static uint64_t v_requests (const struct stats_wire *s, unsigned i) { return s->requests[i]; }
static uint64_t v_read (const struct stats_wire *s, unsigned i) { (void) i; return s->bytes_read; }
static uint64_t v_written (const struct stats_wire *s, unsigned i) { (void) i; return s->bytes_written; }
static uint64_t v_web (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.web_bytes; }
static uint64_t v_web_requests (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.web_requests; }
static uint64_t v_retries (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.retries; }
static uint64_t v_ra_hits (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.readahead_hits; }
static uint64_t v_ra_bytes (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.readahead_bytes; }
static uint64_t v_cache_hits (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.cache_hits; }
static uint64_t v_cache_bytes (const struct stats_wire *s, unsigned i) { (void) i; return s->fetcher.cache_bytes; }
static uint64_t v_errors (const struct stats_wire *s, unsigned i) { return s->errors[i]; }
static uint64_t v_causes (const struct stats_wire *s, unsigned i) { return s->causes[i]; }

static const struct metric metrics[] = {
  { "connections_total", "counter", "Clients that opened the export.", NULL, 1, NULL, v_connections },
  { "requests_total", "counter", "NBD requests, by kind.", "kind", STATS_KINDS,
    stats_kind_names, v_requests },
  { "read_bytes_total", "counter", "Bytes sent to clients in read replies.", NULL, 1, NULL, v_read },
  { "written_bytes_total", "counter", "Bytes clients wrote.", NULL, 1, NULL, v_written },
  { "web_bytes_total", "counter", "Bytes fetched from the web server (or read from the file).",
    NULL, 1, NULL, v_web },
  { "web_requests_total", "counter", "Transfers started with the web server.", NULL, 1, NULL,
    v_web_requests },
  { "retries_total", "counter", "Reads tried again.", NULL, 1, NULL, v_retries },
  { "readahead_hits_total", "counter", "Reads answered from the prefetch store.", NULL, 1, NULL,
    v_ra_hits },
  { "readahead_bytes_total", "counter", "Bytes of reads answered from the prefetch store.",
    NULL, 1, NULL, v_ra_bytes },
  { "cache_hits_total", "counter", "Reads answered from the export's read cache.", NULL, 1,
    NULL, v_cache_hits },
  { "cache_bytes_total", "counter", "Bytes of reads answered from the export's read cache.",
    NULL, 1, NULL, v_cache_bytes },
  { "errors_total", "counter", "Requests that failed, by NBD error.", "error", STATS_ERRNOS,
    stats_errno_names, v_errors },
  { "error_causes_total", "counter", "Requests that failed, by cause.", "cause", STATS_CAUSES,
    stats_cause_names, v_causes },
};

static void
prometheus_metric (const struct metric *m, const struct stats_wire *r, line_fn *out,
                   void *cookie)
{
  char q[256];
  unsigned e, i;

  emit (out, cookie, "# HELP nbdcurld_%s %s", m->name, m->help);
  emit (out, cookie, "# TYPE nbdcurld_%s %s", m->name, m->type);
  for (e = 0; e < opt->nexports; e++) {
    quoted (opt->exports[e].name, q, sizeof q, true);
    for (i = 0; i < m->nvalues; i++) {
      if (m->label)
        emit (out, cookie, "nbdcurld_%s{export=\"%s\",%s=\"%s\"} %" PRIu64, m->name, q,
              m->label, m->label_values[i], m->value (&r[e], i));
      else
        emit (out, cookie, "nbdcurld_%s{export=\"%s\"} %" PRIu64, m->name, q,
              m->value (&r[e], i));
    }
  }
}

static void
prometheus_report (const struct stats_wire *r, line_fn *out, void *cookie)
{
  static const unsigned quantiles[] = { 500, 900, 990 };
  char q[256];
  unsigned e, i;

  for (i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
    prometheus_metric (&metrics[i], r, out, cookie);
  emit (out, cookie, "# HELP nbdcurld_request_latency_seconds Request service time under "
        "which the quantile of requests fall (a log-scale histogram's bucket bound).");
  emit (out, cookie, "# TYPE nbdcurld_request_latency_seconds gauge");
  for (e = 0; e < opt->nexports; e++) {
    quoted (opt->exports[e].name, q, sizeof q, true);
    for (i = 0; i < 3; i++) {
      uint64_t us = stats_percentile_us (&r[e], quantiles[i]);
      /* The last bucket has no bound: its figure is its start. */
      if (us == UINT64_MAX)
        us = stats_bucket_upper_us (STATS_LATENCY_BUCKETS - 2);
      emit (out, cookie, "nbdcurld_request_latency_seconds{export=\"%s\",quantile=\"%.2f\"} %.6f",
            q, quantiles[i] / 1000.0, (double) us / 1e6);
    }
  }
  emit (out, cookie, "# HELP nbdcurld_uptime_seconds Seconds since the server started.");
  emit (out, cookie, "# TYPE nbdcurld_uptime_seconds gauge");
  emit (out, cookie, "nbdcurld_uptime_seconds %.3f", (double) (monotonic_ms () - start_ms) / 1000);
}

/* ---- Writing. ---- */

static void
to_log (void *cookie, const char *line)
{
  (void) cookie;
  notice ("%s", line);
}

static void
to_file (void *cookie, const char *line)
{
  FILE *fp = cookie;

  fputs (line, fp);
  fputc ('\n', fp);
}

/* Write fd's report and close it; -1 on an error. */
static int
write_report (int fd, const struct stats_wire *r)
{
  FILE *fp = fdopen (fd, "w");

  if (fp == NULL) {
    close (fd);
    return -1;
  }
  if (opt->stats_prometheus)
    prometheus_report (r, to_file, fp);
  else
    text_report (r, to_file, fp);
  if (fflush (fp) != 0 || fsync (fileno (fp)) == -1) {
    fclose (fp);
    return -1;
  }
  return fclose (fp);
}

/* The file replaced whole (or, with statsappend=, the report added at
 * its end): a reader never sees half of a report. */
static void
write_file (const struct stats_wire *r)
{
  char tmp[4096];
  int fd;

  if (file_path == NULL)
    return;
  if (opt->stats_append) {
    fd = open (file_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd == -1 || write_report (fd, r) == -1)
      warn_errno ("--stats-file %s: cannot append the statistics", file_path);
    return;
  }
  if ((size_t) snprintf (tmp, sizeof tmp, "%s.tmp-%d", file_path, (int) getpid ()) >= sizeof tmp) {
    warn ("--stats-file %s: the name is too long", file_path);
    return;
  }
  (void) unlink (tmp);                  /* one a crash left */
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd == -1 || write_report (fd, r) == -1 || rename (tmp, file_path) == -1) {
    warn_errno ("--stats-file %s: cannot write the statistics", file_path);
    (void) unlink (tmp);
  }
}

/* ---- Reports. ---- */

void
stats_report_ask (int control_fd, bool log_it)
{
  const struct ipc_header h = { .type = IPC_STATS_REQUEST };

  if (control_fd < 0 || ipc_send_packet (control_fd, &h, NULL, 0) == -1) {
    if (log_it)
      notice ("statistics: the front-end is not running; none to report");
    return;
  }
  if (log_it)
    reports_to_log++;
}

static void
client_line (const struct ipc_header *h, const struct client_stats_wire *w)
{
  const struct stats_wire *s = &w->stats;
  char peer[STATS_PEER_SIZE], q[256], a[32], b[32], l[3][32];
  size_t i;

  /* The front-end's text: printable, and ended within its field. */
  for (i = 0; i + 1 < sizeof peer && w->peer[i]; i++)
    peer[i] = w->peer[i] >= 0x20 && w->peer[i] < 0x7f ? w->peer[i] : '?';
  peer[i] = '\0';
  quoted (opt->exports[h->length].name, q, sizeof q, false);
  notice ("client %s closed, export \"%s\": %.2f s, %" PRIu64 " ops (%" PRIu64 " reads, %"
          PRIu64 " writes), %s read, %s fetched in %" PRIu64 " web requests, %" PRIu64
          " retries, %" PRIu64 " readahead hits, %" PRIu64 " cache hits, p50 %s, p90 %s, p99 %s, %" PRIu64
          " errors", peer, q, (double) s->connected_ms / 1000, stats_total_requests (s),
          s->requests[STATS_READ], s->requests[STATS_WRITE],
          human_size (s->bytes_read, a, sizeof a), human_size (s->fetcher.web_bytes, b, sizeof b),
          s->fetcher.web_requests, s->fetcher.retries, s->fetcher.readahead_hits,
          s->fetcher.cache_hits, latency_text (stats_percentile_us (s, 500), l[0], sizeof l[0]),
          latency_text (stats_percentile_us (s, 900), l[1], sizeof l[1]),
          latency_text (stats_percentile_us (s, 990), l[2], sizeof l[2]),
          stats_sat_add (stats_sat_add (s->causes[0], s->causes[1]), s->causes[2]));
}

/* The report is complete: it is the latest, and goes where it was
 * asked to. */
static void
report_complete (void)
{
  memcpy (latest, incoming, (size_t) opt->nexports * sizeof *latest);
  have_latest = true;
  latest_written = false;
  if (reports_to_log > 0) {
    reports_to_log--;
    text_report (latest, to_log, NULL);
  }
  write_file (latest);
  latest_written = true;
}

void
stats_report_take (const struct ipc_header *h, const uint8_t *payload)
{
  if (h->length >= opt->nexports)
    fatal ("the front-end sent statistics of export %u of %u: stopping", h->length,
           opt->nexports);
  if (h->type == IPC_CLIENT_STATS) {
    struct client_stats_wire w;
    memcpy (&w, payload, sizeof w);
    if (opt->stats || opt->verbose)
      client_line (h, &w);
    return;
  }
  /* A report's exports come in order; one that broke off (the front-end
   * gave up on a full socket) is dropped when the next begins. */
  if (h->length == 0)
    next_export = 0;
  if (h->length != next_export)
    return;
  memcpy (&incoming[h->length], payload, sizeof incoming[0]);
  next_export++;
  if ((h->flags & EXPORT_STATS_LAST) && next_export == opt->nexports) {
    next_export = 0;
    report_complete ();
  }
}

uint64_t
stats_report_next_ms (void)
{
  return next_interval_ms;
}

void
stats_report_interval_due (int control_fd)
{
  next_interval_ms = monotonic_ms () + (uint64_t) opt->stats_interval * 1000;
  stats_report_ask (control_fd, false);
}

void
stats_report_at_exit (void)
{
  if (!have_latest) {
    if (opt->stats || file_path)
      warn ("no statistics: the front-end ended without its last report");
    return;
  }
  /* The last report: the front-end's own as it exited, else an earlier. */
  if (opt->stats || opt->verbose)
    text_report (latest, to_log, NULL);
  /* The front-end's last report was written as it came. */
  if (!latest_written)
    write_file (latest);
}
