/*
 * limits-nbd.h: the sizes of what an NBD client may send, fixed by the
 * protocol or by what every client can use.  The front-end enforces them
 * on every byte it reads; fetchers and the configuration rely on them.
 * How many clients, handshakes and requests are served at once is
 * limits-server.h's, limits-clients.h's and data-path.h's.
 */
#ifndef NBDCURLD_LIMITS_NBD_H
#define NBDCURLD_LIMITS_NBD_H

/* Largest NBD read or write we accept and advertise (INFO_BLOCK_SIZE max).
 * 32 MiB is the size every client must be able to use without asking. */
#define NBD_MAX_REQUEST_SIZE      (32u * 1024 * 1024)
/* Longest export name or description (NBD spec: 4096). */
#define NBD_MAX_STRING            4096u
/* Longest option payload we read; anything longer ends the client.  Big
 * enough for INFO/GO with a maximal name and many info requests, or a
 * meta-context query list. */
#define NBD_MAX_OPTION_LENGTH     (NBD_MAX_STRING + 4096u)

#endif
