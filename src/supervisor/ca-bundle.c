/* ca-bundle.c: see ca-bundle.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ca-bundle.h"
#include "ipc.h"
#include "limits-ca.h"
#include "limits-strings.h"
#include "secret.h"

/* Does text hold a PEM certificate, as libcurl's CAINFO_BLOB reads them
 * (OpenSSL's PEM_X509_INFO_read_bio)? */
static bool
holds_pem_certificate (const char *text, size_t len)
{
  static const char *const begins[] = {
    "-----BEGIN CERTIFICATE-----", "-----BEGIN TRUSTED CERTIFICATE-----",
    "-----BEGIN X509 CERTIFICATE-----",
  };
  size_t i;

  for (i = 0; i < sizeof begins / sizeof begins[0]; i++)
    if (memmem (text, len, begins[i], strlen (begins[i])) != NULL)
      return true;
  return false;
}

/* The bundle being built: at most CA_BUNDLE_MAX_BYTES. */
struct bundle {
  char *bytes;
  size_t len;
};

/* Read file into the bundle, with a line end after it (a file may lack
 * its last).  Returns 0, or -1 with a message in err (about what, named
 * by name and path). */
static int
bundle_add_file (struct bundle *b, const char *name, const char *path, const char *what,
                 char *err, size_t errlen)
{
  char why[128], *text;
  size_t n;

  text = secret_read_file (path, CA_BUNDLE_MAX_BYTES - b->len, &n, why, sizeof why);
  if (text == NULL) {
    if (errno == E2BIG && b->len > 0)
      snprintf (err, errlen, "%s%s: the CA certificates are larger than %u bytes together",
                name, what, CA_BUNDLE_MAX_BYTES);
    else
      snprintf (err, errlen, "%s%s: %s", name, what, why);
    return -1;
  }
  if (!holds_pem_certificate (text, n)) {
    snprintf (err, errlen, "%s%s: holds no PEM certificate (\"-----BEGIN CERTIFICATE-----\"): "
              "give the CA's certificate in PEM form", name, what);
    free (text);
    return -1;
  }
  /* A line end after a file that lacks its last, so that the next
   * file's first line starts a line. */
  if (b->len + n + (text[n - 1] != '\n') > CA_BUNDLE_MAX_BYTES) {
    snprintf (err, errlen, "%s%s: the CA certificates are larger than %u bytes together",
              name, what, CA_BUNDLE_MAX_BYTES);
    free (text);
    return -1;
  }
  memcpy (b->bytes + b->len, text, n);    /* n <= CA_BUNDLE_MAX_BYTES - len */
  b->len += n;
  if (text[n - 1] != '\n')
    b->bytes[b->len++] = '\n';
  free (text);
  return 0;
}

/* OpenSSL's name for a certificate in a CA directory: the subject's
 * hash, 8 hex digits, a dot and a number (CRLs are HHHHHHHH.rN). */
static bool
hashed_certificate_name (const char *name)
{
  size_t i;

  for (i = 0; i < 8; i++)
    if (!isxdigit ((unsigned char) name[i]))
      return false;
  if (name[8] != '.' || !isdigit ((unsigned char) name[9]))
    return false;
  for (i = 10; name[i] != '\0'; i++)
    if (!isdigit ((unsigned char) name[i]))
      return false;
  return true;
}

/* Every certificate of directory dir under a hashed name (a link, as
 * c_rehash and openssl rehash make them, or a file), at most
 * CAPATH_MAX_FILES of them. */
static int
bundle_add_directory (struct bundle *b, const char *name, const char *dir, char *err,
                      size_t errlen)
{
  DIR *d = opendir (dir);
  struct dirent *entry;
  unsigned files = 0;
  int r = 0;

  if (d == NULL) {
    snprintf (err, errlen, "%s%s: %s", name, dir,
              errno == ENOENT ? "no such directory" :
              errno == ENOTDIR ? "not a directory" : strerror (errno));
    return -1;
  }
  while (r == 0 && (entry = readdir (d)) != NULL) {
    char path[MAX_PATH_LENGTH + 1], what[MAX_PATH_LENGTH + 64];
    if (!hashed_certificate_name (entry->d_name))
      continue;
    if (++files > CAPATH_MAX_FILES) {
      snprintf (err, errlen, "%s%s: more than %u certificates: give a directory with "
                "only the CAs the servers need, or --cainfo FILE", name, dir,
                CAPATH_MAX_FILES);
      r = -1;
      break;
    }
    if ((size_t) snprintf (path, sizeof path, "%s/%s", dir, entry->d_name) >= sizeof path) {
      snprintf (err, errlen, "%s%s: a path longer than %u bytes", name, dir, MAX_PATH_LENGTH);
      r = -1;
      break;
    }
    snprintf (what, sizeof what, "%s: %s", dir, entry->d_name);
    r = bundle_add_file (b, name, path, what, err, errlen);
  }
  closedir (d);
  if (r == 0 && files == 0) {
    snprintf (err, errlen, "%s%s: holds no PEM certificate under a hashed name "
              "(such as 1a2b3c4d.0): run \"openssl rehash %s\"", name, dir, dir);
    r = -1;
  }
  return r;
}

/* A memfd holding the bundle, sealed: no fetcher can change what the
 * others trust, nor resize it under their mappings. */
static int
sealed_copy (const struct bundle *b, char *err, size_t errlen)
{
  int fd = memfd_create ("nbdcurld-ca-bundle", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  if (fd == -1 || write_full (fd, b->bytes, b->len) == -1 ||
      fcntl (fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == -1) {
    snprintf (err, errlen, "a memfd for the CA certificates: %s", strerror (errno));
    if (fd >= 0)
      close (fd);
    return -1;
  }
  return fd;
}

int
ca_bundle_make (const char *cainfo, const char *cainfo_name, const char *capath,
                const char *capath_name, uint32_t *len, char *err, size_t errlen)
{
  struct bundle b = { .bytes = malloc (CA_BUNDLE_MAX_BYTES), .len = 0 };
  int fd = -1;

  if (b.bytes == NULL) {
    snprintf (err, errlen, "out of memory for the CA certificates");
    return -1;
  }
  if ((cainfo == NULL || bundle_add_file (&b, cainfo_name, cainfo, cainfo, err, errlen) == 0) &&
      (capath == NULL || bundle_add_directory (&b, capath_name, capath, err, errlen) == 0))
    fd = sealed_copy (&b, err, errlen);
  if (fd >= 0)
    *len = (uint32_t) b.len;
  free (b.bytes);
  return fd;
}
