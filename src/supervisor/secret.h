/*
 * secret.h: reading a password from where --auth-password says, so that
 * it is never on a command line (visible to every local user) or in the
 * environment (inherited, and readable in /proc by the same user).
 */
#ifndef NBDCURLD_SECRET_H
#define NBDCURLD_SECRET_H

#include <stddef.h>

/* SOURCE is "-" (ask on the controlling terminal, without echo), "-FD"
 * (read descriptor FD to its end, then close it) or "+FILE" (read FILE).
 * One trailing newline (LF or CR LF) is dropped; the rest must be at most
 * MAX_SECRET_LENGTH bytes without NUL or line breaks.  Returns the
 * malloc'd password, or NULL with a message for the user in err (the
 * message never quotes the password). */
char *secret_read (const char *source, char *err, size_t errlen);
/* The same for another option (messages name it and the noun), at most
 * max bytes; a prompt says it is for for_whom (as "alice at host:443
 * (export \"disk\")"), when not NULL. */
char *secret_read_named (const char *option, const char *noun, size_t max,
                         const char *source, const char *for_whom, char *err,
                         size_t errlen);

/* A URL given as "+FILE" (presigned URLs carry their signature in the
 * query string): the first line of FILE, at most MAX_URL_LENGTH bytes,
 * under the same rules. */
char *secret_read_url (const char *source, char *err, size_t errlen);

/* The whole of FILE, a regular file of at most max bytes, as root may
 * read it before it drops its rights: opened without waiting (a FIFO or a
 * device in its place is refused, never waited on), checked after the
 * open (the file checked is the file read), malloc'd with a NUL after its
 * bytes, its length in *len.  NULL with why (without the path) in why:
 * "no such file", "not a regular file", "larger than N bytes", or the
 * system's words.  The buffers it used are wiped (the file may be a
 * secret). */
char *secret_read_file (const char *path, size_t max, size_t *len, char *why,
                        size_t whylen);

/* cookiefile=FILE: the whole file (a regular file of at most
 * MAX_COOKIE_FILE_BYTES), one cookie a line as libcurl takes them
 * (Netscape format or "Set-Cookie: ..."); blank and comment lines are
 * dropped, the rest returned each ending "\n" (possibly "", no cookie),
 * malloc'd.  NULL with a message in err that never quotes the file. */
char *secret_read_cookie_file (const char *path, char *err, size_t errlen);

#endif
