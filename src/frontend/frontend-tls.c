/*
 * frontend-tls.c: NBD over TLS in the front-end (NBD_OPT_STARTTLS).
 *
 * GnuTLS runs the record layer and the handshake for every client, on the
 * client's own non-blocking socket, inside the front-end's event loop.
 * The front-end never holds a long-term secret:
 *
 *   X.509  the private key is an external GnuTLS key whose one operation,
 *          signing, is a request to the key holder (keyholder.c); the
 *          front-end has the certificates only.  Signing happens inside a
 *          client's handshake, for that client, which runs in a fiber of
 *          its own: the fiber waits for the answer (at most
 *          KEY_ANSWER_TIMEOUT_MS; a signature takes far less) while the
 *          loop serves everyone else.  TLS 1.3 and 1.2 are offered with
 *          certificates, and the key holder signs only with the schemes
 *          of key-schemes.h, for what a TLS server signs.
 *   PSK    the key of a user name is asked of the key holder when a client
 *          names that user, and GnuTLS forgets it with the handshake.
 *
 * Output: a client's queue (frontend.c) is copied, a stage of
 * TLS_STAGE_SIZE at a time, into records.  GnuTLS wants a send that could
 * not finish repeated with the same bytes, which the stage keeps.  The
 * records go into a wire buffer (TLS_WIRE_SIZE) and out in one write per
 * stage, not one per record: each write to a client's socket wakes the
 * client, and with a write per record a copy over TLS costs the
 * front-end more in those wake-ups than in encrypting.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "access-rules.h"
#include "child-fds.h"
#include "clock.h"
#include "config-wire.h"
#include "event.h"
#include "frontend.h"
#include "ipc.h"
#include "ipc-messages.h"
#include "ipc-table.h"
#include "key-schemes.h"
#include "keyholder-wire.h"
#include "limits-frontend-tls.h"
#include "log.h"
#include "tls-modes.h"

/* Certificates of the server's chain the front-end presents. */
#define MAX_CHAIN_CERTS 16

/* AddressSanitizer must be told when the stack changes (fibers, below). */
#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* A handshake runs on a stack of its own (a fiber, ucontext), so that
 * when GnuTLS asks for a signature or a PSK in the middle of it, the
 * request goes to the key holder and the fiber waits, while the loop
 * serves everyone else; the answer resumes it.  GnuTLS calls its key
 * callbacks synchronously and cannot be resumed after a callback that
 * returned "again", so the wait must happen inside the callback. */
struct handshake_fiber {
  ucontext_t context;
  uint8_t *stack;               /* HANDSHAKE_STACK_SIZE, a guard page below */
  bool step_done;               /* gnutls_handshake returned step_result */
  int step_result;
  /* The key holder's answer being waited for (key_id != 0). */
  uint64_t key_id;
  uint16_t key_want;            /* the answer's type */
  uint64_t key_deadline_ms;
  int key_error;
  uint8_t key_answer[KEY_MAX_SIGNATURE];
  uint32_t key_answer_len;
  void *asan_fake_stack;
};

struct client_tls {
  gnutls_session_t session;
  struct handshake_fiber *fiber; /* from STARTTLS until the handshake ends */
  bool begun;                   /* gnutls_handshake called */
  bool established;             /* handshake done: every byte is TLS */
  uint8_t *stage;               /* TLS_STAGE_SIZE, once established */
  size_t stage_len, stage_sent;
  uint8_t *wire;                /* TLS_WIRE_SIZE: records not yet written */
  size_t wire_len, wire_sent;
  /* Who the client proved to be: for --allow and log lines. */
  char *psk_user;
  char *dn;
  char *sans[MAX_CLIENT_SANS];
  unsigned nsans;
};

static int keyholder_fd = -1;
static uint64_t keyholder_serial;
static gnutls_certificate_credentials_t cert_creds;
static gnutls_psk_server_credentials_t psk_creds;
static gnutls_priority_t priority;
static gnutls_pcert_st chain[MAX_CHAIN_CERTS];
static unsigned chain_len;
static gnutls_pk_algorithm_t key_algorithm;
static unsigned key_bits;
/* The client whose handshake step is running: key requests are made for
 * it and only while it is in CLIENT_TLS_HANDSHAKE. */
static struct client *handshaking;
/* The loop's side of the fibers. */
static ucontext_t loop_context;
static struct client *fiber_starting;
static unsigned key_waits;              /* fibers waiting for the key holder */
/* What the loop does once a handshake has ended (tls_setup's argument). */
static tls_handshake_ended_fn *handshake_ended;
#ifdef FIBER_ASAN
static void *loop_fake_stack;
static const void *loop_stack_bottom;
static size_t loop_stack_size;
#endif

bool
tls_offered (void)
{
  return fe.config.tls.mode != TLS_OFF;
}

bool
tls_required (void)
{
  return fe.config.tls.mode == TLS_REQUIRE;
}

bool
client_in_tls (const struct client *c)
{
  return c->tls != NULL && c->tls->established;
}

/* ---- Fibers. ---- */

static size_t
page_size (void)
{
  long p = sysconf (_SC_PAGESIZE);
  return p > 0 ? (size_t) p : 4096;
}

/* From the fiber to the loop, until the loop resumes it. */
static void
fiber_yield (struct handshake_fiber *f)
{
#ifdef FIBER_ASAN
  __sanitizer_start_switch_fiber (&f->asan_fake_stack, loop_stack_bottom, loop_stack_size);
#endif
  if (swapcontext (&f->context, &loop_context) == -1)
    fatal_errno ("swapcontext");
#ifdef FIBER_ASAN
  __sanitizer_finish_switch_fiber (f->asan_fake_stack, &loop_stack_bottom, &loop_stack_size);
#endif
}

/* The fiber's whole life: one gnutls_handshake per step, its result left
 * for the loop. */
static void
fiber_main (void)
{
  struct client *c = fiber_starting;
  struct handshake_fiber *f = c->tls->fiber;

#ifdef FIBER_ASAN
  __sanitizer_finish_switch_fiber (NULL, &loop_stack_bottom, &loop_stack_size);
#endif
  for (;;) {
    f->step_result = gnutls_handshake (c->tls->session);
    f->step_done = true;
    fiber_yield (f);
  }
}

static struct handshake_fiber *
fiber_new (struct client *c)
{
  const size_t guard = page_size ();
  struct handshake_fiber *f = calloc (1, sizeof *f);

  if (f == NULL)
    fatal_errno ("calloc");
  f->stack = mmap (NULL, guard + HANDSHAKE_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (f->stack == MAP_FAILED)
    fatal_errno ("mmap for a TLS handshake's stack");
  /* An overflow faults instead of writing into whatever lies below. */
  if (mprotect (f->stack, guard, PROT_NONE) == -1)
    fatal_errno ("mprotect");
  if (getcontext (&f->context) == -1)
    fatal_errno ("getcontext");
  f->context.uc_stack.ss_sp = f->stack + guard;
  f->context.uc_stack.ss_size = HANDSHAKE_STACK_SIZE;
  f->context.uc_link = NULL;
  makecontext (&f->context, fiber_main, 0);
  (void) c;
  return f;
}

static void
fiber_free (struct handshake_fiber *f)
{
  if (f == NULL)
    return;
  munmap (f->stack, page_size () + HANDSHAKE_STACK_SIZE);
  explicit_bzero (f->key_answer, sizeof f->key_answer);
  free (f);
}

/* From the loop into the client's fiber, until it yields: its step done,
 * or waiting for the key holder. */
static void
fiber_resume (struct client *c)
{
  struct handshake_fiber *f = c->tls->fiber;

  fiber_starting = c;
  handshaking = c;
#ifdef FIBER_ASAN
  __sanitizer_start_switch_fiber (&loop_fake_stack, f->stack + page_size (),
                                  HANDSHAKE_STACK_SIZE);
#endif
  if (swapcontext (&loop_context, &f->context) == -1)
    fatal_errno ("swapcontext");
#ifdef FIBER_ASAN
  __sanitizer_finish_switch_fiber (loop_fake_stack, NULL, NULL);
#endif
  handshaking = NULL;
}

/* ---- The key holder. ---- */

/* One request, one answer of type want with the same number, its payload
 * in out (at most max bytes).  Called inside a handshake's fiber: the
 * fiber waits, the loop goes on.  Returns the payload length, or -1 with
 * the errno the key holder gave, or ETIMEDOUT, or ECANCELED when the
 * client went meanwhile. */
static int
ask_keyholder (uint16_t type, uint16_t flags, uint32_t length, uint64_t offset,
               const void *payload, uint32_t len, uint16_t want, uint8_t *out, uint32_t max)
{
  struct ipc_header h = {
    .type = type, .flags = flags, .id = ++keyholder_serial, .length = length, .offset = offset,
    .payload_len = len,
  };
  struct handshake_fiber *f = handshaking->tls->fiber;

  if (ipc_send_datagram (keyholder_fd, &h, payload) == -1)
    fatal_errno ("asking the key holder");
  f->key_id = h.id;
  f->key_want = want;
  f->key_deadline_ms = monotonic_ms () + KEY_ANSWER_TIMEOUT_MS;
  f->key_error = 0;
  f->key_answer_len = 0;
  key_waits++;
  fiber_yield (f);
  /* Resumed by tls_keyholder_read, tls_key_deadline_check or tls_end,
   * which cleared key_id. */
  if (f->key_error != 0) {
    errno = f->key_error;
    return -1;
  }
  if (f->key_answer_len > max)
    fatal ("the key holder's answer is larger than asked for");
  memcpy (out, f->key_answer, f->key_answer_len);
  explicit_bzero (f->key_answer, f->key_answer_len);
  return (int) f->key_answer_len;
}

/* The answer (or failure) a waiting fiber gets: it goes on at once. */
static void finish_step (struct client *c);

static void
key_wait_ends (struct client *c, int error, const uint8_t *answer, uint32_t len)
{
  struct handshake_fiber *f = c->tls->fiber;

  f->key_id = 0;
  f->key_error = error;
  f->key_answer_len = len;
  if (len > 0)
    memcpy (f->key_answer, answer, len);
  key_waits--;
  f->step_done = false;
  fiber_resume (c);
}

bool
tls_key_waiting (const struct client *c)
{
  return c->tls != NULL && c->tls->fiber != NULL && c->tls->fiber->key_id != 0;
}

uint64_t
tls_key_deadline (const struct client *c)
{
  return tls_key_waiting (c) ? c->tls->fiber->key_deadline_ms : 0;
}

/* The key holder's answers: each resumes the fiber that waits for it.
 * A late answer (its wait timed out, or its client went) is dropped; a
 * malformed one ends the front-end, as a broken key holder should. */
static void
tls_keyholder_read (void)
{
  for (;;) {
    uint8_t payload[KEY_MAX_SIGNATURE];
    struct ipc_header a;
    struct client *waiter = NULL;
    size_t i;

    if (ipc_recv_datagram (keyholder_fd, &a, payload, sizeof payload) == -1) {
      if (errno == EAGAIN || errno == EINTR)
        return;
      if (errno == 0)
        fatal ("the key holder closed its socket");
      fatal_errno ("bad answer from the key holder");
    }
    if (ipc_check (&a, 0, ROLE_KEYHOLDER, ROLE_FRONTEND) != NULL || a.id == 0 ||
        a.id > keyholder_serial)
      fatal ("the key holder sent a malformed answer (type %u)", a.type);
    for (i = 0; i < fe.nclients && waiter == NULL; i++)
      if (tls_key_waiting (fe.clients[i]) && fe.clients[i]->tls->fiber->key_id == a.id)
        waiter = fe.clients[i];
    if (waiter == NULL)
      continue;
    if (a.type != waiter->tls->fiber->key_want)
      fatal ("the key holder answered request %llu with type %u",
             (unsigned long long) a.id, a.type);
    key_wait_ends (waiter, (int) a.error, payload, a.error ? 0 : a.payload_len);
    explicit_bzero (payload, sizeof payload);
    if (waiter->tls->fiber->step_done)
      finish_step (waiter);
  }
}

static void
keyholder_ready (int fd, short revents, void *cookie)
{
  (void) fd, (void) revents, (void) cookie;
  tls_keyholder_read ();
}

int
tls_keyholder_register (struct event_loop *ev)
{
  return key_waits > 0 ? event_add (ev, keyholder_fd, POLLIN, keyholder_ready, NULL) : 0;
}

void
tls_key_deadline_check (struct client *c, uint64_t now)
{
  if (!tls_key_waiting (c) || now < c->tls->fiber->key_deadline_ms)
    return;
  warn ("the key holder did not answer in %u ms", KEY_ANSWER_TIMEOUT_MS);
  key_wait_ends (c, ETIMEDOUT, NULL, 0);
  if (c->tls->fiber->step_done)
    finish_step (c);
}

/* GnuTLS's external key: one signature, by the key holder.  GnuTLS hands
 * EdDSA the whole input and ECDSA and RSA-PSS its hash (hashed = true). */
static int
sign_by_keyholder (gnutls_sign_algorithm_t algo, unsigned flags, bool hashed,
                   const gnutls_datum_t *in, gnutls_datum_t *signature)
{
  uint8_t sig[KEY_MAX_SIGNATURE];
  int n;

  if (handshaking == NULL || handshaking->state != CLIENT_TLS_HANDSHAKE ||
      in->size < 1 || in->size > KEY_MAX_SIGN_INPUT)
    return GNUTLS_E_INVALID_REQUEST;
  n = ask_keyholder (IPC_KEY_SIGN, hashed ? IPC_KEY_SIGN_HASHED : 0, (uint32_t) algo, flags,
                     in->data, in->size, IPC_KEY_SIGNATURE, sig, sizeof sig);
  if (n < 0) {
    warn ("client %s: the key holder did not sign (%s)", handshaking->peer,
          strerror (errno));
    return GNUTLS_E_PK_SIGN_FAILED;
  }
  signature->data = gnutls_malloc ((size_t) n);
  if (signature->data == NULL)
    return GNUTLS_E_MEMORY_ERROR;
  memcpy (signature->data, sig, (size_t) n);
  signature->size = (unsigned) n;
  return 0;
}

static int
sign_data (gnutls_privkey_t key, gnutls_sign_algorithm_t algo, void *userdata,
           unsigned flags, const gnutls_datum_t *data, gnutls_datum_t *signature)
{
  (void) key, (void) userdata;
  return sign_by_keyholder (algo, flags, false, data, signature);
}

static int
sign_hash (gnutls_privkey_t key, gnutls_sign_algorithm_t algo, void *userdata,
           unsigned flags, const gnutls_datum_t *hash, gnutls_datum_t *signature)
{
  (void) key, (void) userdata;
  return sign_by_keyholder (algo, flags, true, hash, signature);
}

/* What the key is, from its certificate. */
static int
key_info (gnutls_privkey_t key, unsigned flags, void *userdata)
{
  (void) key;
  (void) userdata;
  if (flags & GNUTLS_PRIVKEY_INFO_PK_ALGO)
    return (int) key_algorithm;
  if (flags & GNUTLS_PRIVKEY_INFO_PK_ALGO_BITS)
    return (int) key_bits;
  /* Only the schemes the key holder makes: GnuTLS then picks one of
   * them, and a client that offers none of them gets no session. */
  if (flags & GNUTLS_PRIVKEY_INFO_HAVE_SIGN_ALGO) {
    gnutls_sign_algorithm_t algo = GNUTLS_FLAGS_TO_SIGN_ALGO (flags);
    return key_scheme_input (algo) != KEY_SCHEME_REFUSED &&
           gnutls_sign_supports_pk_algorithm (algo, key_algorithm) ? 1 : 0;
  }
  return -1;
}

/* A client names a PSK user: its key, from the key holder. */
static int
psk_key (gnutls_session_t session, const char *username, gnutls_datum_t *key)
{
  uint8_t k[MAX_PSK_KEY];
  size_t len = strlen (username);
  int n;

  (void) session;
  if (handshaking == NULL || handshaking->state != CLIENT_TLS_HANDSHAKE ||
      len < 1 || len > MAX_PSK_USERNAME)
    return -1;
  n = ask_keyholder (IPC_KEY_PSK, 0, 0, 0, username, (uint32_t) len, IPC_KEY_PSK_KEY,
                     k, sizeof k);
  if (n < 0) {
    if (errno == ENOENT)
      warn ("client %s: unknown PSK user \"%.64s\"", handshaking->peer, username);
    else
      warn ("client %s: no PSK from the key holder (%s)", handshaking->peer,
            strerror (errno));
    return -1;
  }
  key->data = gnutls_malloc ((size_t) n);
  if (key->data == NULL)
    return -1;
  memcpy (key->data, k, (size_t) n);
  key->size = (unsigned) n;
  explicit_bzero (k, sizeof k);
  return 0;
}

/* --tls-verify-peer: the client's chain against the CA and the CRL, its
 * dates, and its purpose: a certificate that states purposes
 * (extendedKeyUsage) must state TLS client authentication, so that a
 * certificate the CA issued to a web server is not an NBD client's
 * identity.  One that states none is good for any purpose (RFC 5280,
 * 4.2.1.12), as qemu and GnuTLS take it.  Non-zero fails the handshake. */
static int
verify_client_certificate (gnutls_session_t session)
{
  gnutls_typed_vdata_st purpose = {
    .type = GNUTLS_DT_KEY_PURPOSE_OID, .data = (unsigned char *) GNUTLS_KP_TLS_WWW_CLIENT,
  };
  const struct client *c = gnutls_transport_get_ptr (session);
  unsigned status = 0;
  int r = gnutls_certificate_verify_peers (session, &purpose, 1, &status);
  gnutls_datum_t why = { NULL, 0 };

  if (r == 0 && status == 0)
    return 0;
  if (r < 0)
    warn ("client %s: client certificate refused: %s", c->peer, gnutls_strerror (r));
  else if (status & GNUTLS_CERT_PURPOSE_MISMATCH)
    warn ("client %s: client certificate refused: it is not issued for TLS clients "
          "(its extendedKeyUsage leaves out clientAuth)", c->peer);
  else if (gnutls_certificate_verification_status_print (status, GNUTLS_CRT_X509,
                                                         &why, 0) == 0) {
    warn ("client %s: client certificate refused: %.200s", c->peer, why.data);
    gnutls_free (why.data);
  }
  else
    warn ("client %s: client certificate refused (status 0x%x)", c->peer, status);
  return -1;
}

/* ---- Set-up, before the sandbox. ---- */

/* The server's certificate chain, its key (signed with by the key holder),
 * and what client certificates are checked against. */
static void
setup_certificates (const struct tls_settings *t)
{
  gnutls_datum_t d = { (unsigned char *) t->cert, t->cert_len };
  gnutls_privkey_t key;
  int r;

  chain_len = MAX_CHAIN_CERTS;
  if ((r = gnutls_pcert_list_import_x509_raw (chain, &chain_len, &d,
                                              GNUTLS_X509_FMT_PEM, 0)) < 0)
    fatal ("server-cert.pem: %s (at most %u certificates)", gnutls_strerror (r),
           MAX_CHAIN_CERTS);
  key_algorithm = (gnutls_pk_algorithm_t) gnutls_pubkey_get_pk_algorithm (chain[0].pubkey,
                                                                          &key_bits);
  if ((r = gnutls_certificate_allocate_credentials (&cert_creds)) < 0 ||
      (r = gnutls_privkey_init (&key)) < 0 ||
      (r = gnutls_privkey_import_ext4 (key, NULL, sign_data, sign_hash, NULL, NULL,
                                       key_info, 0)) < 0)
    fatal ("GnuTLS: %s", gnutls_strerror (r));
  /* The key holder checked that the key matches; a check here would
   * be a signature asked for outside any handshake. */
  gnutls_certificate_set_flags (cert_creds, GNUTLS_CERTIFICATE_SKIP_KEY_CERT_MATCH);
  if ((r = gnutls_certificate_set_key (cert_creds, NULL, 0, chain, chain_len, key)) < 0)
    fatal ("server-cert.pem: %s", gnutls_strerror (r));
  if (t->ca_len > 0) {
    gnutls_datum_t ca = { (unsigned char *) t->ca, t->ca_len };
    if ((r = gnutls_certificate_set_x509_trust_mem (cert_creds, &ca,
                                                    GNUTLS_X509_FMT_PEM)) < 0)
      fatal ("ca-cert.pem: %s", gnutls_strerror (r));
  }
  if (t->flags & TLS_VERIFY_PEER)
    gnutls_certificate_set_verify_function (cert_creds, verify_client_certificate);
  if (t->crl_len > 0) {
    gnutls_datum_t crl = { (unsigned char *) t->crl, t->crl_len };
    if ((r = gnutls_certificate_set_x509_crl_mem (cert_creds, &crl,
                                                  GNUTLS_X509_FMT_PEM)) < 0)
      fatal ("ca-crl.pem: %s", gnutls_strerror (r));
  }
}

void
tls_setup (tls_handshake_ended_fn *ended)
{
  const struct tls_settings *t = &fe.config.tls;
  const char *errpos = NULL;
  char prio[MAX_TLS_PRIORITY + 128];
  int r;

  handshake_ended = ended;

  if (!tls_offered ())
    return;
  keyholder_fd = FRONTEND_FD_FIRST_LISTENER +
    ((fe.config.flags & FRONTEND_SINGLE) ? 2 : (int) fe.config.nlisteners);
  if (fcntl (keyholder_fd, F_GETFD) == -1)
    fatal ("started without the key holder's socket");
  /* The supervisor's environment sets GNUTLS_NO_IMPLICIT_INIT. */
  if ((r = gnutls_global_init ()) < 0)
    fatal ("GnuTLS: %s", gnutls_strerror (r));

  if (t->flags & TLS_CERTIFICATES)
    setup_certificates (t);
  if (t->flags & TLS_PSK) {
    if ((r = gnutls_psk_allocate_server_credentials (&psk_creds)) < 0)
      fatal ("GnuTLS: %s", gnutls_strerror (r));
    gnutls_psk_set_server_credentials_function (psk_creds, psk_key);
  }

  /* The user's priorities, or GnuTLS's NORMAL with the server's order
   * deciding (NORMAL puts the cipher this CPU runs fastest first; a
   * client's order can pick one many times slower, as libnbd's picks
   * ChaCha20 for PSK over AES-GCM on a CPU with AES instructions), with
   * PSK key exchange added for PSK.  With certificates TLS 1.3 and 1.2 (whose
   * ECDHE suites the key holder signs for, as nbdkit offers them; the NBD
   * reference client speaks TLS 1.2 only), and never what the key holder
   * does not do: RSA key exchange (a decryption) and TLS 1.0 and 1.1
   * (their MD5-SHA1 signatures). */
  snprintf (prio, sizeof prio, "%s%s%s",
            t->priority[0] ? t->priority : "NORMAL:%SERVER_PRECEDENCE",
            (t->flags & TLS_PSK) ? ":+ECDHE-PSK:+DHE-PSK:+PSK" : "",
            (t->flags & TLS_CERTIFICATES)
              ? ":-RSA:-VERS-TLS1.1:-VERS-TLS1.0:-VERS-DTLS-ALL" : "");
  if ((r = gnutls_priority_init (&priority, prio, &errpos)) < 0)
    fatal ("--tls-priority: %s at \"%.40s\" (see gnutls-cli --priority in "
           "gnutls-cli(1) for the syntax)", gnutls_strerror (r), errpos ? errpos : "");
}

/* ---- Sessions. ---- */

/* GnuTLS's output.  During the handshake (and for alerts, before the
 * wire buffer exists) straight to the socket; then into the wire buffer,
 * which client_flush writes: when it has no room, EAGAIN, and GnuTLS
 * offers the same record again once client_flush has made room. */
static ssize_t
push (gnutls_transport_ptr_t ptr, const giovec_t *iov, int iovcnt)
{
  struct client *c = ptr;
  struct client_tls *t = c->tls;
  size_t total = 0;
  ssize_t r;
  int i;

  if (t->wire == NULL) {
    r = writev (c->wfd, (const struct iovec *) iov, iovcnt);
    if (r == -1)
      gnutls_transport_set_errno (t->session, errno);
    return r;
  }
  for (i = 0; i < iovcnt; i++)
    total += iov[i].iov_len;
  if (total > TLS_WIRE_SIZE - t->wire_len) {
    gnutls_transport_set_errno (t->session, EAGAIN);
    return -1;
  }
  for (i = 0; i < iovcnt; i++) {
    memcpy (t->wire + t->wire_len, iov[i].iov_base, iov[i].iov_len);
    t->wire_len += iov[i].iov_len;
  }
  return (ssize_t) total;
}

static ssize_t
pull (gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
  struct client *c = ptr;
  ssize_t r = read (c->rfd, buf, len);
  if (r == -1)
    gnutls_transport_set_errno (c->tls->session, errno);
  return r;
}

int
tls_start (struct client *c)
{
  struct client_tls *t;
  int r;

  if (!tls_start_allowed (c)) {
    warn ("client %s: refusing its TLS handshake: more than %u a second from its "
          "address (a burst of %u)", c->peer, TLS_STARTS_PER_ADDRESS_PER_SECOND,
          TLS_STARTS_PER_ADDRESS_BURST);
    errno = EAGAIN;
    return -1;
  }
  t = calloc (1, sizeof *t);
  if (t == NULL)
    fatal_errno ("calloc");
  t->fiber = fiber_new (c);
  if ((r = gnutls_init (&t->session, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL)) < 0 ||
      (r = gnutls_priority_set (t->session, priority)) < 0 ||
      (cert_creds && (r = gnutls_credentials_set (t->session, GNUTLS_CRD_CERTIFICATE,
                                                  cert_creds)) < 0) ||
      (psk_creds && (r = gnutls_credentials_set (t->session, GNUTLS_CRD_PSK, psk_creds)) < 0)) {
    warn ("client %s: cannot start TLS: %s", c->peer, gnutls_strerror (r));
    if (t->session)
      gnutls_deinit (t->session);
    fiber_free (t->fiber);
    free (t);
    errno = EPROTO;
    return -1;
  }
  /* Checked in the handshake by verify_client_certificate: a client whose
   * certificate fails gets an alert, not a session. */
  if (fe.config.tls.flags & TLS_VERIFY_PEER)
    gnutls_certificate_server_set_request (t->session, GNUTLS_CERT_REQUIRE);
  gnutls_transport_set_ptr (t->session, c);
  gnutls_transport_set_vec_push_function (t->session, push);
  gnutls_transport_set_pull_function (t->session, pull);
  /* The front-end's own handshake deadline applies instead. */
  gnutls_handshake_set_timeout (t->session, 0);
  c->tls = t;
  return 0;
}

static char *
dup_string (const char *s, size_t len)
{
  char *d = strndup (s, len);
  if (d == NULL)
    fatal_errno ("strndup");
  return d;
}

/* Note who the client proved to be. */
static void
take_identity (struct client *c)
{
  struct client_tls *t = c->tls;
  const gnutls_datum_t *certs;
  unsigned ncerts = 0, i;
  gnutls_x509_crt_t crt;
  gnutls_datum_t dn;

  if (gnutls_auth_get_type (t->session) == GNUTLS_CRD_PSK) {
    const char *user = gnutls_psk_server_get_username (t->session);
    if (user)
      t->psk_user = dup_string (user, MAX_PSK_USERNAME);
    return;
  }
  if (!(fe.config.tls.flags & TLS_VERIFY_PEER))
    return;
  certs = gnutls_certificate_get_peers (t->session, &ncerts);
  if (certs == NULL || ncerts == 0 || gnutls_x509_crt_init (&crt) < 0)
    return;
  if (gnutls_x509_crt_import (crt, &certs[0], GNUTLS_X509_FMT_DER) == 0) {
    if (gnutls_x509_crt_get_dn3 (crt, &dn, 0) == 0) {
      if (dn.size <= MAX_ACCESS_NAME)
        t->dn = dup_string ((const char *) dn.data, dn.size);
      gnutls_free (dn.data);
    }
    for (i = 0; t->nsans < MAX_CLIENT_SANS; i++) {
      char name[MAX_ACCESS_NAME + 1];
      size_t len = sizeof name - 1;
      int type = gnutls_x509_crt_get_subject_alt_name (crt, i, name, &len, NULL);
      if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
        break;
      if (type == GNUTLS_SAN_DNSNAME || type == GNUTLS_SAN_RFC822NAME)
        t->sans[t->nsans++] = dup_string (name, len);
    }
  }
  gnutls_x509_crt_deinit (crt);
}

short
tls_handshake_events (const struct client *c)
{
  if (c->tls == NULL || !c->tls->begun)
    return POLLOUT;                     /* not begun: step at once */
  return gnutls_record_get_direction (c->tls->session) ? POLLOUT : POLLIN;
}

bool
tls_handshake_begun (const struct client *c)
{
  return c->tls != NULL && c->tls->begun;
}

/* A step of the handshake in its fiber; it ends here, or waits for the
 * key holder and ends in tls_keyholder_read. */
void
tls_handshake_step (struct client *c)
{
  struct client_tls *t = c->tls;

  if (t == NULL || t->established || c->state != CLIENT_TLS_HANDSHAKE ||
      tls_key_waiting (c))
    return;
  t->begun = true;
  t->fiber->step_done = false;
  fiber_resume (c);
  if (t->fiber->step_done)
    finish_step (c);
}

/* What a handshake step that returned means. */
static void
finish_step (struct client *c)
{
  struct client_tls *t = c->tls;
  int r = t->fiber->step_result;

  t->fiber->step_done = false;
  if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
    return;
  if (r < 0) {
    warn ("client %s: TLS handshake failed: %s", c->peer, gnutls_strerror (r));
    handshake_ended (c, false);
    return;
  }
  /* On the loop's stack here: the fiber's is no longer needed. */
  fiber_free (t->fiber);
  t->fiber = NULL;
  t->established = true;
  t->stage = malloc (TLS_STAGE_SIZE);
  t->wire = malloc (TLS_WIRE_SIZE);
  if (t->stage == NULL || t->wire == NULL)
    fatal_errno ("malloc");
  take_identity (c);
  {
    char *desc = gnutls_session_get_desc (t->session);
    debug ("client %s: TLS %s%s%s", c->peer, desc ? desc : "",
           t->psk_user ? ", PSK user " : t->dn ? ", certificate " : "",
           t->psk_user ? t->psk_user : t->dn ? t->dn : "");
    gnutls_free (desc);
  }
  handshake_ended (c, true);
}

ssize_t
client_recv (struct client *c, void *buf, size_t len)
{
  ssize_t r;

  if (!client_in_tls (c))
    return read (c->rfd, buf, len);
  r = gnutls_record_recv (c->tls->session, buf, len);
  if (r >= 0)
    return r;
  switch (r) {
  case GNUTLS_E_AGAIN:
    errno = EAGAIN;
    return -1;
  case GNUTLS_E_INTERRUPTED:
    errno = EINTR;
    return -1;
  case GNUTLS_E_PREMATURE_TERMINATION:
    return 0;                           /* closed without close_notify */
  default:
    debug ("client %s: TLS: %s", c->peer, gnutls_strerror ((int) r));
    errno = EPROTO;
    return -1;
  }
}

bool
tls_input_pending (const struct client *c)
{
  return client_in_tls (c) && gnutls_record_check_pending (c->tls->session) > 0;
}

size_t
client_unsent (const struct client *c)
{
  size_t n = c->out.bytes;
  if (c->tls && c->tls->established)
    n += c->tls->stage_len - c->tls->stage_sent + c->tls->wire_len - c->tls->wire_sent;
  return n;
}

/* Write what the wire buffer holds: 0 when all of it went, 1 when the
 * socket is full, -1 on an error. */
static int
write_wire (struct client *c)
{
  struct client_tls *t = c->tls;

  while (t->wire_sent < t->wire_len) {
    ssize_t r = write (c->wfd, t->wire + t->wire_sent, t->wire_len - t->wire_sent);
    if (r == -1) {
      if (errno == EINTR)
        continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
    }
    t->wire_sent += (size_t) r;
  }
  t->wire_len = t->wire_sent = 0;
  return 0;
}

int
client_flush (struct client *c)
{
  struct client_tls *t = c->tls;

  if (!client_in_tls (c))
    return outq_flush (&c->out, c->wfd);
  for (;;) {
    ssize_t r;
    int w = write_wire (c);

    if (w != 0)
      return w < 0 ? -1 : 0;
    if (t->stage_sent == t->stage_len) {
      ssize_t took;
      t->stage_len = t->stage_sent = 0;
      if (c->out.bytes == 0)
        return 0;
      took = outq_take (&c->out, t->stage, TLS_STAGE_SIZE);
      if (took < 0)
        return -1;
      if (took == 0)
        return 0;                       /* only discarded bytes */
      t->stage_len = (size_t) took;
    }
    /* Records of the whole stage into the wire buffer (push), then one
     * write.  After GNUTLS_E_AGAIN (the wire buffer is full) the same
     * bytes again, as GnuTLS wants. */
    while (t->stage_sent < t->stage_len) {
      r = gnutls_record_send (t->session, t->stage + t->stage_sent,
                              t->stage_len - t->stage_sent);
      if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
        break;
      if (r < 0) {
        debug ("client %s: TLS: %s", c->peer, gnutls_strerror ((int) r));
        return -1;
      }
      t->stage_sent += (size_t) r;
    }
  }
}

void
tls_end (struct client *c)
{
  struct client_tls *t = c->tls;
  unsigned i;

  if (t == NULL)
    return;
  /* A fiber waiting for the key holder is ended first: it gets
   * ECANCELED, so GnuTLS unwinds its handshake (and frees what it holds
   * on that stack) while the socket is still there. */
  if (tls_key_waiting (c))
    key_wait_ends (c, ECANCELED, NULL, 0);
  fiber_free (t->fiber);
  t->fiber = NULL;
  /* close_notify if the socket takes it now; nobody waits for it. */
  if (t->established && c->wfd >= 0 && gnutls_bye (t->session, GNUTLS_SHUT_WR) == 0)
    (void) write_wire (c);
  gnutls_deinit (t->session);
  free (t->stage);
  free (t->wire);
  free (t->psk_user);
  free (t->dn);
  for (i = 0; i < t->nsans; i++)
    free (t->sans[i]);
  free (t);
  c->tls = NULL;
}

/* ---- Identities, for --allow (access.c). ---- */

const char *
tls_psk_user (const struct client *c)
{
  return client_in_tls (c) ? c->tls->psk_user : NULL;
}

const char *
tls_cert_dn (const struct client *c)
{
  return client_in_tls (c) ? c->tls->dn : NULL;
}

bool
tls_cert_has_san (const struct client *c, const char *name)
{
  unsigned i;

  if (!client_in_tls (c))
    return false;
  for (i = 0; i < c->tls->nsans; i++)
    if (strcasecmp (c->tls->sans[i], name) == 0)
      return true;
  return false;
}
