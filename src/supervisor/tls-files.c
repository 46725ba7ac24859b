/*
 * tls-files.c: NBD over TLS's files (--tls-certificates, --tls-psk) and
 * the start of the key holder, the only process that reads the secret
 * ones.
 *
 * Apart because it is the one part of the supervisor that touches the
 * server's TLS secrets, and it only opens them: their descriptors go to
 * the key holder unread.  It owns the public files the front-end gets and
 * those two descriptors until the key holder has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "file-read.h"
#include "keyholder-wire.h"
#include "launcher-client.h"
#include "limits-strings.h"
#include "log.h"
#include "tls-files.h"
#include "tls-modes.h"

/* The parsed options, read-only here (prepare_tls). */
static const struct options *options;
#define opt (*options)

/* --tls: the public files the front-end gets, and the descriptors of the
 * secret ones, opened here (as root if started so) but never read here:
 * only the key holder reads them. */
static struct tls_settings tls;
static int tls_key_fd = -1;           /* server-key.pem */
static int tls_psk_fd = -1;           /* --tls-psk */

/* Read a public PEM file of --tls-certificates DIR into *text.  Returns 0,
 * or -1 when an optional file is not there. */
static int
read_tls_file (const char *name, bool required, char **text, uint32_t *len)
{
  char path[MAX_PATH_LENGTH + 1], why[128], *buf;
  size_t got;

  snprintf (path, sizeof path, "%s/%s", opt.tls_certificates, name);
  buf = file_read_regular (path, MAX_TLS_FILE_SIZE, &got, NULL, false, why, sizeof why);
  if (buf == NULL) {
    if (errno == ENOENT && !required) {
      *text = (char *) "";
      *len = 0;
      return -1;
    }
    if (errno == E2BIG)
      fatal ("--tls-certificates: %s is larger than %u bytes: put only the "
             "certificates needed there", path, MAX_TLS_FILE_SIZE);
    fatal ("--tls-certificates: cannot read %s: %s", path, why);
  }
  if (got == 0 || memchr (buf, '\0', got) != NULL)
    fatal ("--tls-certificates: %s is empty or not PEM text", path);
  *text = buf;
  *len = (uint32_t) got;
  return 0;
}

/* Before our sandbox: read the certificates, open the key and the PSK
 * file for the key holder. */
void
prepare_tls (const struct options *o)
{
  options = o;
  tls = (struct tls_settings) {
    .mode = opt.tls, .priority = (char *) (opt.tls_priority ? opt.tls_priority : ""),
    .cert = (char *) "", .ca = (char *) "", .crl = (char *) "",
  };
  if (opt.tls == TLS_OFF)
    return;
  if (opt.tls_certificates) {
    char path[MAX_PATH_LENGTH + 1];
    tls.flags |= TLS_CERTIFICATES;
    read_tls_file ("server-cert.pem", true, &tls.cert, &tls.cert_len);
    read_tls_file ("ca-cert.pem", opt.tls_verify_peer, &tls.ca, &tls.ca_len);
    if (opt.tls_verify_peer) {
      tls.flags |= TLS_VERIFY_PEER;
      read_tls_file ("ca-crl.pem", false, &tls.crl, &tls.crl_len);
    }
    snprintf (path, sizeof path, "%s/server-key.pem", opt.tls_certificates);
    tls_key_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (tls_key_fd == -1)
      fatal_errno ("--tls-certificates: cannot open %s", path);
  }
  if (opt.tls_psk) {
    tls.flags |= TLS_PSK;
    tls_psk_fd = open (opt.tls_psk, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (tls_psk_fd == -1)
      fatal_errno ("--tls-psk: cannot open %s", opt.tls_psk);
  }
}

static int
send_keyholder_config (int fd, const void *arg)
{
  return config_send_keyholder (fd, arg);
}

/* The key holder: the only process that reads the private key and the
 * PSK file (*pid).  Returns the front-end's end of its socket. */
int
start_keyholder (pid_t *pid)
{
  struct keyholder_config kc = {
    .flags = (tls_key_fd >= 0 ? KEYHOLDER_KEY : 0) | (tls_psk_fd >= 0 ? KEYHOLDER_PSK : 0) |
             (opt.verbose ? KEYHOLDER_VERBOSE : 0) |
             (opt.sandbox_debug ? KEYHOLDER_SANDBOX_DEBUG : 0),
    .cert = tls.cert, .cert_len = tls.cert_len,
  };
  int sv[2], extra[2], null;

  null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null == -1)
    fatal_errno ("/dev/null");
  /* Both places filled: a file the key holder does not use is /dev/null. */
  extra[0] = tls_key_fd >= 0 ? tls_key_fd : null;     /* KEYHOLDER_FD_KEY */
  extra[1] = tls_psk_fd >= 0 ? tls_psk_fd : null;     /* KEYHOLDER_FD_PSK */
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
    fatal_errno ("socketpair");
  *pid = start_child (ROLE_KEYHOLDER, sv[1], extra, 2, send_keyholder_config, &kc);
  if (*pid == -1)
    fatal_errno ("starting the key holder");
  close (sv[1]);
  close (null);
  /* Ours were only for passing on. */
  if (tls_key_fd >= 0)
    close (tls_key_fd);
  if (tls_psk_fd >= 0)
    close (tls_psk_fd);
  tls_key_fd = tls_psk_fd = -1;
  return sv[0];
}

const struct tls_settings *
tls_for_frontend (void)
{
  return &tls;
}
