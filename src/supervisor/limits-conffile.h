/*
 * limits-conffile.h: a --config file (nbdcurld.conf(5), conffile.c).
 */
#ifndef NBDCURLD_LIMITS_CONFFILE_H
#define NBDCURLD_LIMITS_CONFFILE_H

/* The whole file, and one line of it: room for a URL or a block of
 * header= bytes with its name. */
#define MAX_CONFIG_FILE_BYTES     (1024u * 1024)
#define MAX_CONFIG_LINE           16384u

#endif
