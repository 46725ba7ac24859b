/*
 * script-values.h: the values an export's header-script= and
 * cookie-script= produce, as the supervisor pushes them to that export's
 * fetchers (IPC_SCRIPT_VALUES on each one's script channel,
 * CHILD_FD_SCRIPTS).  How the scripts run is limits-scripts.h's and
 * scripts.c's.
 */
#ifndef NBDCURLD_SCRIPT_VALUES_H
#define NBDCURLD_SCRIPT_VALUES_H

#include <stdint.h>

#include "limits-strings.h"

/* IPC_SCRIPT_VALUES: which values the payload replaces (the output of the
 * export's header-script, cookie-script). */
#define SCRIPT_VALUES_HEADERS   (1u << 0)
#define SCRIPT_VALUES_COOKIE    (1u << 1)
struct script_values_wire {
  uint32_t headers_len;        /* 0 .. MAX_EXTRA_HEADER_BYTES: "Name: value\r\n"
                                  lines, at most MAX_EXTRA_HEADERS */
  uint32_t cookie_len;         /* 0 .. MAX_COOKIE_LENGTH */
  /* then the headers and the cookie */
};
#define SCRIPT_VALUES_MAX_PAYLOAD \
  (sizeof (struct script_values_wire) + MAX_EXTRA_HEADER_BYTES + MAX_COOKIE_LENGTH)

#endif
