/*
 * limits-launcher.h: the fetcher launcher as the supervisor runs it
 * (launcher-client.c).  The launcher (launcher.c) is one process, exec'd
 * from nbdcurld-fetcher with libcurl and its libraries loaded and started
 * once, that forks each fetcher (CLONE_PARENT: the fetcher is the
 * supervisor's child, reaped and signalled like any other).  A fork of it
 * skips the dynamic loader's relocations, most of an exec's cost.
 * The price: fetchers forked from one launcher share its address-space
 * layout (SECURITY.md).  So a launcher forks a bounded number of fetchers
 * and is then replaced by a newly exec'd one (a new layout), and it is
 * replaced at once when any fetcher dies of a crash signal, so that an
 * attacker who probes the layout by crashing fetchers meets a new one
 * each time.  Each forked fetcher gets a stack guard of its own.  With
 * --exec-fetchers, and when no launcher is ready, fetchers are exec'd.
 */
#ifndef NBDCURLD_LIMITS_LAUNCHER_H
#define NBDCURLD_LIMITS_LAUNCHER_H

/* Fetchers one launcher forks before it is replaced: a layout an attacker
 * learns serves few fetchers, and a replacement's exec is paid once per
 * this many starts. */
#define LAUNCHER_GENERATION_FETCHERS 64u
/* The launcher answers a start at once (a clone); one that takes longer
 * is broken, and is replaced while that fetcher is exec'd instead. */
#define LAUNCHER_REPLY_TIMEOUT_MS 2000u
/* A launcher that is starting (its exec and libcurl's start) is waited
 * for this long before a fetcher is exec'd instead: the exec would repeat
 * its work beside it, and a copy's start would hold both in memory. */
#define LAUNCHER_START_WAIT_MS    500u
/* A launcher that ends without being asked to is started again after
 * LAUNCHER_RESTART_DELAY_MS; after LAUNCHER_MAX_FAILURES such ends in a
 * row (none ready in between) every fetcher is exec'd from then on. */
#define LAUNCHER_RESTART_DELAY_MS 1000u
#define LAUNCHER_MAX_FAILURES     3u

#endif
