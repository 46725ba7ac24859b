/*
 * conffile.c: an nbdcurld.conf(5) file split into settings and sections
 * (see conffile.h).  The file is trusted as much as the command line is
 * -- which is why who may write it is checked -- but it is still read
 * like untrusted bytes: bounded in size, line by line through the wire.h
 * reader, every byte checked, so that a wrong file can only produce a
 * message naming its line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conffile.h"
#include "file-read.h"
#include "limits-conffile.h"
#include "wire.h"

/* The file may say where passwords are read from and which URLs are
 * served: whoever may write it may redirect them.  So, as sshd asks of
 * the files it trusts: owned by root or by the user running nbdcurld
 * (the one who gave --config), and writable by nobody else. */
static int
check_owner_and_mode (const char *path, const struct stat *st, char *why, size_t whylen)
{
  if (st->st_uid != 0 && st->st_uid != getuid ()) {
    snprintf (why, whylen, "owned by uid %u, neither root nor the user running "
              "nbdcurld (uid %u): whoever owns it decides what nbdcurld serves; "
              "chown it, or use a copy of your own",
              (unsigned) st->st_uid, (unsigned) getuid ());
    return -1;
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf (why, whylen, "writable by its %s (mode %04o): anyone who can "
              "write it decides what nbdcurld serves and where it reads "
              "passwords; chmod go-w %s",
              st->st_mode & S_IWOTH ? "others" : "group",
              (unsigned) (st->st_mode & 07777), path);
    return -1;
  }
  return 0;
}

/* The whole file, at most MAX_CONFIG_FILE_BYTES, NUL-terminated. */
static char *
read_bounded (const char *path, size_t *len, char *err, size_t errlen)
{
  char why[256], *buf, *shrunk;

  buf = file_read_regular (path, MAX_CONFIG_FILE_BYTES, len, check_owner_and_mode, false,
                           why, sizeof why);
  if (buf == NULL) {
    if (errno == E2BIG)
      snprintf (err, errlen, "%s: larger than %u bytes: split it, or give the "
                "exports on the command line", path, MAX_CONFIG_FILE_BYTES);
    else if (errno == ENOENT)
      snprintf (err, errlen, "--config %s: %s", path, strerror (ENOENT));
    else
      snprintf (err, errlen, "%s: %s", path, why);
    return NULL;
  }
  /* Kept for the process's life: only what the file holds. */
  shrunk = realloc (buf, *len + 1);
  return shrunk ? shrunk : buf;
}

/* Its directory, absolute, without resolving links (the user named the
 * link's place): taken now, before nbdcurld may change directory. */
static char *
absolute_dir (const char *path)
{
  const char *slash = strrchr (path, '/');
  char cwd[4096], *dir = NULL;

  if (slash == path)
    return strdup ("/");
  if (path[0] == '/')
    return strndup (path, (size_t) (slash - path));
  if (getcwd (cwd, sizeof cwd) == NULL)
    return NULL;
  if (slash == NULL)
    return strdup (cwd);
  if (asprintf (&dir, "%s/%.*s", cwd, (int) (slash - path), path) == -1)
    return NULL;
  return dir;
}

static bool
blank (char c)
{
  return c == ' ' || c == '\t';
}

/* s[0..*len) without the blanks at both ends. */
static char *
trim (char *s, size_t *len)
{
  while (*len > 0 && blank (s[0]))
    s++, (*len)--;
  while (*len > 0 && blank (s[*len - 1]))
    (*len)--;
  return s;
}

/* A setting's name: what a long option or a key= is called. */
static bool
is_name (const char *s, size_t len)
{
  return len > 0 && s[0] >= 'a' && s[0] <= 'z' &&
         strspn (s, "abcdefghijklmnopqrstuvwxyz0123456789-") >= len;
}

/* A value in double quotes ("..."), unquoted in place: inside, \" is a
 * quote and \\ a backslash, and no other backslash or quote may stand.
 * A value that does not start with a quote is taken as written.  Returns
 * 0, or -1 with why in err. */
static int
unquote (const struct conf_file *f, unsigned line, char *v, size_t *len,
         char *err, size_t errlen)
{
  size_t i, out = 0;

  if (*len == 0 || v[0] != '"')
    return 0;
  for (i = 1; i < *len; i++) {
    if (v[i] == '"')
      break;                            /* the closing quote */
    if (v[i] == '\\') {
      if (i + 1 >= *len || (v[i + 1] != '"' && v[i + 1] != '\\')) {
        snprintf (err, errlen, "%s:%u: in quotes, a backslash comes before \" or "
                  "\\ only (write \\\\ for a backslash)", f->path, line);
        return -1;
      }
      i++;
    }
    v[out++] = v[i];                    /* out < i: never ahead of the read */
  }
  if (i >= *len) {
    snprintf (err, errlen, "%s:%u: the value's quote is not closed: end it with \"",
              f->path, line);
    return -1;
  }
  if (i + 1 != *len) {
    snprintf (err, errlen, "%s:%u: something after the closing quote: put the whole "
              "value in quotes, and write \\\" for a quote inside", f->path, line);
    return -1;
  }
  v[out] = '\0';
  *len = out;
  return 0;
}

/* One line (len bytes at s, without its LF, writable: the pieces are
 * NUL-terminated in place) into at most one item.  Returns 0 with
 * *item->name NULL for a blank line or a comment, 0 with an item, or -1. */
static int
parse_line (struct conf_file *f, char *s, size_t len, unsigned line,
            struct conf_item *item, char *err, size_t errlen)
{
  size_t i, name_len;
  char *eq;

  if (len > 0 && s[len - 1] == '\r')   /* a file written on Windows */
    len--;
  for (i = 0; i < len; i++)
    if (((unsigned char) s[i] < 0x20 && s[i] != '\t') || (unsigned char) s[i] == 0x7f) {
      snprintf (err, errlen, "%s:%u: a control character (byte %u): is this a "
                "text file?", f->path, line, (unsigned) (unsigned char) s[i]);
      return -1;
    }
  s = trim (s, &len);
  s[len] = '\0';                        /* len <= the line's length */
  *item = (struct conf_item) { .line = line };
  if (len == 0 || s[0] == '#')
    return 0;

  if (s[0] == '[') {
    char *name;
    if (s[len - 1] != ']' || strncmp (s, "[export", 7) != 0 || !blank (s[7])) {
      snprintf (err, errlen, "%s:%u: a section is [export NAME]", f->path, line);
      return -1;
    }
    name_len = len - 9;                 /* len >= 9: "[export" + blank + ']' */
    name = trim (s + 8, &name_len);
    /* "NAME" in quotes: for names with blanks at the ends, and "" for the
     * export clients get when they name none. */
    if (name_len >= 2 && name[0] == '"' && name[name_len - 1] == '"')
      name++, name_len -= 2;
    if (name_len == 0 && name[-1] != '"') {
      snprintf (err, errlen, "%s:%u: [export NAME] needs a name (\"\" for the "
                "default export)", f->path, line);
      return -1;
    }
    name[name_len] = '\0';
    item->kind = CONF_SECTION;
    item->name = name;
    return 0;
  }

  eq = strchr (s, '=');
  name_len = eq ? (size_t) (eq - s) : len;
  s = trim (s, &name_len);
  if (strncmp (s, "NBDCURLD_OPTIONS", 16) == 0) {
    snprintf (err, errlen, "%s:%u: this is nbdcurld.service's environment file "
              "(NBDCURLD_OPTIONS=...), not a file for --config", f->path, line);
    return -1;
  }
  if (!is_name (s, name_len)) {
    snprintf (err, errlen, "%s:%u: not NAME = VALUE, NAME, a comment (#) or "
              "[export NAME]", f->path, line);
    return -1;
  }
  s[name_len] = '\0';
  item->kind = CONF_SETTING;
  item->name = s;
  if (eq) {
    size_t vlen = strlen (eq + 1);
    char *v = trim (eq + 1, &vlen);
    v[vlen] = '\0';
    if (unquote (f, line, v, &vlen, err, errlen) == -1)
      return -1;
    item->value = v;
  }
  return 0;
}

/* Every file read, for the process's life (options point into them). */
static struct conf_file *files_read;

struct conf_file *
conf_file_read (const char *path, char *err, size_t errlen)
{
  struct conf_file *f = calloc (1, sizeof *f);
  struct reader r;
  size_t len, cap = 0;
  unsigned line = 0;
  char *buf;

  if (f == NULL) {
    snprintf (err, errlen, "%s: out of memory", path);
    return NULL;
  }
  f->path = path;
  buf = read_bounded (path, &len, err, errlen);
  if (buf == NULL)
    goto fail;
  f->dir = absolute_dir (path);
  if (f->dir == NULL) {
    snprintf (err, errlen, "%s: cannot tell its directory: %s", path, strerror (errno));
    goto fail;
  }
  if (memchr (buf, '\0', len)) {
    snprintf (err, errlen, "%s: a NUL byte: is this a text file?", path);
    goto fail;
  }

  reader_init (&r, buf, len);
  while (reader_remaining (&r) > 0) {
    size_t left = reader_remaining (&r);
    size_t look = left < MAX_CONFIG_LINE + 1 ? left : MAX_CONFIG_LINE + 1;
    const uint8_t *start = r.data + r.pos, *nl = memchr (start, '\n', look);
    size_t line_len = nl ? (size_t) (nl - start) : look;
    const uint8_t *span;
    struct conf_item item;

    line++;
    if (line_len > MAX_CONFIG_LINE) {
      snprintf (err, errlen, "%s:%u: longer than %u bytes", path, line, MAX_CONFIG_LINE);
      goto fail;
    }
    /* The line and its LF (none at the end of a file without one). */
    if (reader_get_span (&r, &span, line_len + (nl != NULL)) == -1) {
      snprintf (err, errlen, "%s:%u: cannot read the line", path, line);
      goto fail;
    }
    /* span is buf's own, writable memory; the byte after the line is its
     * LF or buf's terminating NUL. */
    if (parse_line (f, buf + (span - (const uint8_t *) buf), line_len, line, &item,
                    err, errlen) == -1)
      goto fail;
    if (item.name == NULL)
      continue;
    if (f->nitems == cap) {
      struct conf_item *more;
      cap = cap ? cap * 2 : 64;
      more = reallocarray (f->items, cap, sizeof *more);
      if (more == NULL) {
        snprintf (err, errlen, "%s: out of memory", path);
        goto fail;
      }
      f->items = more;
    }
    f->items[f->nitems++] = item;
  }
  f->next = files_read;
  files_read = f;
  return f;
 fail:
  free (f->items);
  free (f->dir);
  free (f);
  free (buf);
  return NULL;
}
