/*
 * tls-files.h: --tls's files and the key holder (tls-files.c).
 */
#ifndef NBDCURLD_SUPERVISOR_TLS_FILES_H
#define NBDCURLD_SUPERVISOR_TLS_FILES_H

#include <sys/types.h>

#include "config.h"
#include "supervisor.h"

/* Before our sandbox: read the certificates, open the key and the PSK
 * file for the key holder; o is read from here on. */
void prepare_tls (const struct options *o);

/* The TLS settings the front-end gets (after prepare_tls). */
const struct tls_settings *tls_for_frontend (void);

/* Start the key holder (*pid), handing it the key and the PSK file.
 * Returns the front-end's end of its socket. */
int start_keyholder (pid_t *pid);

#endif
