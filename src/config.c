/* config.c: configuration messages from the supervisor to its children. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ipc.h"
#include "log.h"
#include "wire.h"

static int
send_message (int fd, uint16_t type, const void *payload, size_t len)
{
  struct ipc_header h = { .type = type, .payload_len = (uint32_t) len };
  if (len > IPC_MAX_CONFIG_PAYLOAD) {
    errno = E2BIG;
    return -1;
  }
  return ipc_send (fd, &h, payload);
}

/* Append a string to a payload under construction. */
static int
put_string (struct writer *w, const char *s)
{
  return writer_put_bytes (w, s, strlen (s));
}

int
config_send_frontend (int fd, const struct frontend_config *c)
{
  struct frontend_config_wire fw = {
    .flags = c->flags,
    .handshake_timeout = c->handshake_timeout,
    .nexports = c->nexports,
    .nlisteners = c->nlisteners,
    .client_memory = c->client_memory,
    .max_clients = c->max_clients,
  };
  uint8_t buf[sizeof (struct export_config_wire) + 2 * NBD_MAX_STRING];
  uint32_t i;

  if (send_message (fd, IPC_CONFIG_FRONTEND, &fw, sizeof fw) == -1)
    return -1;
  for (i = 0; i < c->nexports; i++) {
    const struct export_info *e = &c->exports[i];
    struct export_config_wire ew = {
      .flags = e->readonly ? EXPORT_READONLY : 0,
      .name_len = (uint32_t) strlen (e->name),
      .description_len = (uint32_t) strlen (e->description),
    };
    struct writer w;
    writer_init (&w, buf, sizeof buf);
    if (writer_put_bytes (&w, &ew, sizeof ew) == -1 ||
        put_string (&w, e->name) == -1 ||
        put_string (&w, e->description) == -1) {
      errno = E2BIG;
      return -1;
    }
    if (send_message (fd, IPC_CONFIG_EXPORT, buf, w.pos) == -1)
      return -1;
  }
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

int
config_send_fetcher (int fd, const struct fetcher_config *c)
{
  struct fetcher_config_wire fw = {
    .flags = c->flags,
    .connections = c->connections,
    .connect_timeout = c->connect_timeout,
    .timeout = c->timeout,
    .stall_timeout = c->stall_timeout,
    .url_len = (uint32_t) strlen (c->url),
    .cainfo_len = (uint32_t) strlen (c->cainfo),
    .capath_len = (uint32_t) strlen (c->capath),
    .export_name_len = (uint32_t) strlen (c->export_name),
    .auth_user_len = (uint32_t) strlen (c->auth_user),
    .auth_password_len = (uint32_t) strlen (c->auth_password),
  };
  uint8_t buf[sizeof fw + MAX_URL_LENGTH + 2 * MAX_PATH_LENGTH + NBD_MAX_STRING +
              2 * MAX_SECRET_LENGTH];
  struct writer w;
  int r;

  writer_init (&w, buf, sizeof buf);
  if (writer_put_bytes (&w, &fw, sizeof fw) == -1 ||
      put_string (&w, c->url) == -1 ||
      put_string (&w, c->cainfo) == -1 ||
      put_string (&w, c->capath) == -1 ||
      put_string (&w, c->export_name) == -1 ||
      put_string (&w, c->auth_user) == -1 ||
      put_string (&w, c->auth_password) == -1) {
    explicit_bzero (buf, sizeof buf);
    errno = E2BIG;
    return -1;
  }
  r = send_message (fd, IPC_CONFIG_FETCHER, buf, w.pos);
  explicit_bzero (buf, sizeof buf);     /* the URL or the password */
  if (r == -1)
    return -1;
  return send_message (fd, IPC_CONFIG_END, NULL, 0);
}

/* Read one configuration message of the expected type. */
static uint8_t *
recv_message (int fd, uint16_t want, uint32_t *len)
{
  struct ipc_header h;
  uint8_t *payload;

  if (ipc_recv (fd, &h, &payload, IPC_MAX_CONFIG_PAYLOAD) == -1)
    fatal_errno ("reading configuration from the supervisor");
  if (h.type != want)
    fatal ("configuration: expected message type %u, got %u", want, h.type);
  *len = h.payload_len;
  return payload;
}

static char *
get_string (struct reader *r, uint32_t len, uint32_t max, const char *what)
{
  char *s;

  /* Capped before the allocation, not only by reader_get_string. */
  if (len > max)
    fatal ("configuration: %s of %u bytes (at most %u)", what, len, max);
  s = malloc ((size_t) len + 1);
  if (s == NULL)
    fatal_errno ("malloc");
  if (reader_get_string (r, s, len, max) == -1)
    fatal ("configuration: bad %s", what);
  return s;
}

void
config_recv_frontend (int fd, struct frontend_config *c)
{
  struct frontend_config_wire fw;
  struct reader r;
  uint32_t len, i;
  uint8_t *p;

  p = recv_message (fd, IPC_CONFIG_FRONTEND, &len);
  reader_init (&r, p, len);
  if (reader_get_bytes (&r, &fw, sizeof fw) == -1 || reader_end (&r) == -1)
    fatal ("configuration: bad front-end message");
  free (p);
  if (fw.nexports < 1 || fw.nexports > MAX_EXPORTS)
    fatal ("configuration: bad export count %u", fw.nexports);
  if (fw.client_memory < MIN_CLIENT_MEMORY || fw.client_memory > MAX_CLIENT_MEMORY)
    fatal ("configuration: bad client memory %u", fw.client_memory);
  if (fw.max_clients < 1 || fw.max_clients > MAX_MAX_CLIENTS)
    fatal ("configuration: bad client count %u", fw.max_clients);
  c->flags = fw.flags;
  c->handshake_timeout = fw.handshake_timeout;
  c->nlisteners = fw.nlisteners;
  c->client_memory = fw.client_memory;
  c->max_clients = fw.max_clients;
  c->nexports = fw.nexports;
  c->exports = calloc (fw.nexports, sizeof *c->exports);
  if (c->exports == NULL)
    fatal_errno ("calloc");

  for (i = 0; i < fw.nexports; i++) {
    struct export_config_wire ew;
    p = recv_message (fd, IPC_CONFIG_EXPORT, &len);
    reader_init (&r, p, len);
    if (reader_get_bytes (&r, &ew, sizeof ew) == -1)
      fatal ("configuration: bad export message");
    c->exports[i].name = get_string (&r, ew.name_len, NBD_MAX_STRING, "export name");
    c->exports[i].description =
      get_string (&r, ew.description_len, NBD_MAX_STRING, "export description");
    c->exports[i].readonly = (ew.flags & EXPORT_READONLY) != 0;
    if (reader_end (&r) == -1)
      fatal ("configuration: trailing bytes in export message");
    free (p);
  }
  p = recv_message (fd, IPC_CONFIG_END, &len);
  if (len != 0)
    fatal ("configuration: bad end message");
}

void
config_recv_fetcher (int fd, struct fetcher_config *c)
{
  struct fetcher_config_wire fw;
  struct reader r;
  uint32_t len;
  uint8_t *p;

  p = recv_message (fd, IPC_CONFIG_FETCHER, &len);
  reader_init (&r, p, len);
  if (reader_get_bytes (&r, &fw, sizeof fw) == -1)
    fatal ("configuration: bad fetcher message");
  if (fw.connections < 1 || fw.connections > MAX_CONNECTIONS || fw.url_len < 1)
    fatal ("configuration: bad fetcher parameters");
  c->flags = fw.flags;
  c->connections = fw.connections;
  c->connect_timeout = fw.connect_timeout;
  c->timeout = fw.timeout;
  c->stall_timeout = fw.stall_timeout;
  c->url = get_string (&r, fw.url_len, MAX_URL_LENGTH, "URL");
  c->cainfo = get_string (&r, fw.cainfo_len, MAX_PATH_LENGTH, "CA file");
  c->capath = get_string (&r, fw.capath_len, MAX_PATH_LENGTH, "CA directory");
  c->export_name = get_string (&r, fw.export_name_len, NBD_MAX_STRING, "export name");
  c->auth_user = get_string (&r, fw.auth_user_len, MAX_SECRET_LENGTH, "user name");
  c->auth_password = get_string (&r, fw.auth_password_len, MAX_SECRET_LENGTH, "password");
  if (reader_end (&r) == -1)
    fatal ("configuration: trailing bytes in fetcher message");
  explicit_bzero (p, len);
  free (p);
  p = recv_message (fd, IPC_CONFIG_END, &len);
  if (len != 0)
    fatal ("configuration: bad end message");
}
