/*
 * read-split.h: a client's read fetched as several range requests at
 * once, each on its own web connection (fetcher-http.c's start_read
 * splits long reads on a distant link), and answered to the front-end
 * once, when its last piece is.
 */
#ifndef NBDCURLD_READ_SPLIT_H
#define NBDCURLD_READ_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

/* Read id is split once more: one more piece of it will be answered.
 * false, and nothing changes, when no more reads can be split now. */
bool read_split_add (uint64_t id);

/* A piece of read id was answered (error 0: its bytes are in their
 * place in the data area; else an errno).  true when the read's reply
 * goes to the front-end now, with *error the first error of any of its
 * pieces (0 if none); false while others are still coming.  A read
 * never split is answered at once, as it was. */
bool read_split_answered (uint64_t id, uint32_t *error);

#endif
