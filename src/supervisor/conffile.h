/*
 * conffile.h: the syntax of an nbdcurld.conf(5) file (--config FILE).
 *
 * This layer only splits the file into settings and [export NAME]
 * sections, each with its line number; what a setting means, and whether
 * its value is valid, is decided by options-conffile.c through the same
 * code as the command line's.  Nothing here is a secret: the file names
 * secrets by file (options-conffile.c refuses literal ones).
 */
#ifndef NBDCURLD_CONFFILE_H
#define NBDCURLD_CONFFILE_H

#include <stddef.h>

enum conf_item_kind {
  CONF_SETTING,            /* NAME = VALUE, or NAME alone (value NULL) */
  CONF_SECTION,            /* [export NAME]: name is the export's name */
};

struct conf_item {
  enum conf_item_kind kind;
  char *name;
  char *value;             /* NULL: a bare NAME (a flag) */
  unsigned line;
};

struct conf_file {
  const char *path;        /* as given, for messages */
  char *dir;               /* its directory, absolute: relative paths in
                              the file are taken from there */
  struct conf_item *items; /* in the file's order */
  size_t nitems;
  struct conf_file *next;  /* the file read before */
};

/* Read and split PATH.  The file must be a regular file owned by root or
 * by the user running nbdcurld, and writable by neither its group nor
 * others; at most MAX_CONFIG_FILE_BYTES bytes, lines of at most
 * MAX_CONFIG_LINE bytes without control characters but tabs.  Returns
 * NULL with a message for the user ("PATH:LINE: ...") in err.  The
 * result is never freed: options point into it for the process's life. */
struct conf_file *conf_file_read (const char *path, char *err, size_t errlen);

#endif
