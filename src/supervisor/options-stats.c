/*
 * options-stats.c: the statistics' options that are not plain flags or
 * numbers: --stats-format, and nbdkit's stats filter's parameters
 * (--filter=stats statsfile=FILE statsappend=true statsthreshold=N),
 * which are server-wide wherever they stand on the command line.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options-internal.h"
#include "supervisor.h"

void
stats_format_option (struct options *o, const char *arg)
{
  if (strcmp (arg, "text") == 0)
    o->stats_prometheus = false;
  else if (strcmp (arg, "prometheus") == 0)
    o->stats_prometheus = true;
  else
    usage_error ("--stats-format=%s: text (the default) or prometheus", arg);
}

bool
stats_filter_key (struct options *o, const char *arg)
{
  if (strncmp (arg, "statsfile=", 10) == 0) {
    if (arg[10] == '\0')
      usage_error ("statsfile= needs a file name (it is --stats-file FILE)");
    o->stats_file = arg + 10;
    return true;
  }
  if (strncmp (arg, "statsappend=", 12) == 0) {
    o->stats_append = parse_bool ("statsappend", arg + 12);
    return true;
  }
  if (strncmp (arg, "statsthreshold=", 15) == 0) {
    /* nbdkit's filter lists the block sizes and alignments that make up
     * this percentile of the requests; nbdcurld counts requests by kind
     * and time, not by size, so the report has no such list to cut. */
    (void) parse_uint ("statsthreshold", arg + 15, 1, 100);
    notice ("statsthreshold=: nbdcurld's statistics have no block-size "
            "list to cut at a percentile: taken, and without effect");
    return true;
  }
  return false;
}
