/*
 * forward-reader.h: is a connection's client reading forward through the
 * object?  The fetcher asks before it decides to fetch ahead of a reader.
 */
#ifndef NBDCURLD_FORWARD_READER_H
#define NBDCURLD_FORWARD_READER_H

#include <stdbool.h>
#include <stdint.h>

/* Runs followed at once on one connection.  A qcow2 reader moves through
 * the data clusters while it also reads tables elsewhere in the file
 * (each such read starts a run of its own and must not end the data's);
 * a client may also copy two regions side by side.  Past this many, the
 * run seen least recently is forgotten. */
#define FORWARD_MAX_RUNS 4u

/* How far before or after the furthest byte a run has asked for a read
 * may start and still continue it.  qemu-img reads compressed clusters
 * rounded to whole sectors, so neighbours overlap or leave small gaps,
 * and a cluster is at most 2 MiB; half of that keeps two reads of a
 * random reader from chaining into a run except by rare chance. */
#define FORWARD_MAX_DISTANCE (UINT64_C (1) << 20)

/* Reads that moved a run's furthest byte on before the run counts as a
 * forward reader: a random reader's reads fall near each other by chance
 * now and then, four in a row almost never. */
#define FORWARD_TRIGGER_READS 4u

/* The share of a run's span that its reads asked for, in percent, below
 * which it is not a forward reader however its reads move: fetching the
 * whole span for it would fetch more than twice what it reads. */
#define FORWARD_MIN_DENSITY_PERCENT 50u

struct forward_run {
  bool in_use;
  uint64_t start;             /* the first byte of the run's first read */
  uint64_t frontier;          /* one past the furthest byte asked for */
  uint64_t asked;             /* bytes of [start, frontier) that reads asked for */
  unsigned advances;          /* reads that moved the frontier on */
  uint64_t last_seen;         /* the reader's clock at the run's last read */
};

struct forward_reader {
  struct forward_run runs[FORWARD_MAX_RUNS];
  uint64_t clock;             /* reads observed */
};

/* What one read tells. */
struct forward_verdict {
  bool forward;               /* the read belongs to a forward run */
  uint64_t frontier;          /* that run's furthest byte + 1: where what
                                 lies ahead of the reader starts */
  uint64_t run_start;         /* that run's first byte */
};

void forward_reader_init (struct forward_reader *fr);

/* Observe a read of [offset, offset + length) in the order the client
 * sent it.  A read of no bytes, or one whose end would pass 2^64, tells
 * nothing and changes nothing. */
struct forward_verdict forward_reader_observe (struct forward_reader *fr, uint64_t offset,
                                               uint32_t length);

#endif
