/*
 * nbdcurld.h: every limit, internal message type and shared structure.
 *
 * The roles, their executables and process names are the table in
 * roles.c, each role's code is in its folder of src/, and SECURITY.md
 * says what each may do.  They talk with one message format, struct
 * ipc_header followed by exactly payload_len bytes; each type below
 * states the payload it carries, and ipc-table.c holds the form each
 * type may have, which every receiver checks before anything else.
 */
#ifndef NBDCURLD_H
#define NBDCURLD_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Limits: every bound on untrusted input lives here. ---- */

/* Largest NBD read or write we accept and advertise (INFO_BLOCK_SIZE max).
 * 32 MiB is the size every client must be able to use without asking. */
#define NBD_MAX_REQUEST_SIZE      (32u * 1024 * 1024)
#define NBD_PREFERRED_BLOCK_SIZE  4096u
#define NBD_MIN_BLOCK_SIZE        1u
/* Longest export name or description (NBD spec: 4096). */
#define NBD_MAX_STRING            4096u
/* Longest option payload we read; anything longer ends the client.  Big
 * enough for INFO/GO with a maximal name and many info requests, or a
 * meta-context query list. */
#define NBD_MAX_OPTION_LENGTH     (NBD_MAX_STRING + 4096u)
/* Options one client may send before it must pick an export. */
#define NBD_MAX_OPTIONS           32u
/* Info requests inside one INFO/GO, and queries inside one meta-context
 * option: each is bounded separately from the byte length above. */
#define NBD_MAX_INFO_REQUESTS     32u
#define NBD_MAX_META_QUERIES      16u
/* Fetchers one client may start during its handshake (each INFO or GO on a
 * new export starts one): backend work is bounded per connection. */
#define NBD_MAX_FETCHER_SPAWNS    4u
/* Seconds a client has to finish the handshake (--handshake-timeout). */
#define DEFAULT_HANDSHAKE_TIMEOUT 30u
#define MAX_HANDSHAKE_TIMEOUT     3600u

/* Clients served at once (--max-clients); every per-role budget below is
 * derived from it (SECURITY.md, "Resource budgets"). */
#define DEFAULT_MAX_CLIENTS       256u
#define MAX_MAX_CLIENTS           4096u
/* Front-end descriptors: each client holds its socket (two descriptors
 * with -s), its fetcher's socket and the read end of its data pipe, and
 * while a fetcher is handed over, its data area's memfd as well (closed
 * once mapped).  The fixed ones: standard streams, the control socket, the
 * reserve kept for accept's EMFILE, listeners (counted apart), and a
 * margin for the sanitizer runtime and libc. */
#define FRONTEND_FDS_PER_CLIENT   4u
#define FRONTEND_FDS_FIXED        16u
/* Handshaking clients (those that still owe us an option) have no slot of
 * their own: when every slot is taken, a new connection takes the slot of
 * the longest-waiting handshake, so idle connections cannot lock good
 * clients out; and once one address holds MAX_HANDSHAKES_PER_ADDRESS
 * handshakes, its newcomers displace its own oldest, so a flood from one
 * address cannot displace others' (frontend.c, admit_client).  Clients
 * past the handshake are never displaced. */
#define MAX_HANDSHAKES_PER_ADDRESS 32u
/* Connections accepted per loop round over all listeners: a flood cannot
 * keep the loop from serving the others. */
#define ACCEPTS_PER_ROUND         16u
/* Out of descriptors (EMFILE, ENFILE) with no reserve left to refuse a
 * connection with: the listeners rest this long instead of waking the
 * loop at once again. */
#define ACCEPT_PAUSE_MS           250u
/* Fetchers the front-end has asked for and that have not yet said they
 * started (IPC_FETCHER_STARTED), at most FETCHER_STARTS_PER_CPU per CPU
 * and at least MIN_FETCHER_STARTS: further requests wait their turn in
 * the front-end.  A fetcher's start is CPU work (a fork from the
 * launcher, or with --exec-fetchers an exec and libcurl's libraries, then
 * the sandbox); hundreds started at once starve the supervisor that
 * starts them, and the last client waits for all the others (tests/load.py
 * shows it).  The slot is given back before the fetcher opens its URL, so
 * a slow web server holds no one else's. */
#define FETCHER_STARTS_PER_CPU    2u
#define MIN_FETCHER_STARTS        4u
/* Spare fetchers (supervisor/spares.c): fetchers started ahead of need, one
 * export's each, that have done the first part of a start (a fork from
 * the launcher or an exec, the configuration, the sandbox: most of a
 * client's wait for GO, tests/load.py's `serial` section) and wait,
 * reading nothing, for IPC_FETCHER_OPEN.  The next client of that export gets one at once and
 * a replacement starts.  A spare opens nothing before it is handed on, so
 * it holds no stale size or validator and no web connection.  At most
 * --spare-fetchers (at most MAX_SPARE_FETCHERS, never more than
 * --max-clients, none with -s) wait at once, over all exports.  None by
 * default: each costs megabytes of PSS (mostly the loader's relocations
 * of libcurl's libraries and OpenSSL's start) and three of the
 * supervisor's descriptors, and the memory a copy takes is a promise (all
 * processes together at most nbdkit's RSS; the benchmark's memory section
 * measures it).  nbdcopy opens 4 connections at once where multi-conn is
 * offered: 4 spares serve its start. */
#define DEFAULT_SPARE_FETCHERS    0u
#define MAX_SPARE_FETCHERS        32u
/* When every spare's place is taken and a client comes for an export
 * that has none, the spare that has waited longest gives way to one of
 * that export, but only after waiting this long: with more exports in use
 * than places, each place costs at most one wasted start per period. */
#define SPARE_REBALANCE_SECONDS   30u
/* The fetcher launcher (launcher.c): one process, exec'd from
 * nbdcurld-fetcher with libcurl and its 35 libraries loaded and started
 * once, that forks each fetcher (CLONE_PARENT: the fetcher is the
 * supervisor's child, reaped and signalled like any other).  A fork of it
 * costs a tenth of the CPU of an exec of nbdcurld-fetcher, most of which
 * is the dynamic loader's relocations.
 * The price: fetchers forked from one launcher share its address-space
 * layout (SECURITY.md).  So a launcher forks at most
 * LAUNCHER_GENERATION_FETCHERS fetchers and is then replaced by a newly
 * exec'd one (a new layout), and it is replaced at once when any fetcher
 * dies of a crash signal, so that an attacker who probes the layout by
 * crashing fetchers meets a new one each time.  Each forked fetcher gets
 * a stack guard of its own.  With --exec-fetchers, and when no launcher
 * is ready (LAUNCHER_START_WAIT_MS), fetchers are exec'd as before. */
#define LAUNCHER_GENERATION_FETCHERS 64u
/* The launcher answers a start at once (a clone); one that takes longer
 * is broken, and is replaced while that fetcher is exec'd instead. */
#define LAUNCHER_REPLY_TIMEOUT_MS 2000u
/* A launcher that is starting (about 20 ms: its exec and libcurl's
 * start) is waited for this long before a fetcher is exec'd instead: the
 * exec would repeat its work beside it, and a copy's start would hold
 * both in memory. */
#define LAUNCHER_START_WAIT_MS    500u
/* A launcher that ends without being asked to is started again after
 * LAUNCHER_RESTART_DELAY_MS; after LAUNCHER_MAX_FAILURES such ends in a
 * row (none ready in between) every fetcher is exec'd from then on. */
#define LAUNCHER_RESTART_DELAY_MS 1000u
#define LAUNCHER_MAX_FAILURES     3u
/* Seconds a client may wait for its export to open (the fetcher's connect
 * and stall timeouts bound it in practice); the handshake timeout does not
 * run meanwhile, since that time is the server's, not the client's. */
#define FETCHER_OPEN_TIMEOUT      300u
/* Front-end memory one client's queues may hold (chunk records and the
 * reply headers, errors and option replies copied into them; read data
 * lives in the data area or the data pipe and is bounded there).  At
 * CLIENT_QUEUE_MEMORY the client is no longer read until its replies
 * drain; one pass of buffered input may overshoot that by a bounded amount
 * (at most one input buffer of requests, or one LIST reply), so a client
 * past CLIENT_QUEUE_MEMORY_LIMIT is broken and is closed. */
#define CLIENT_QUEUE_MEMORY       (256u * 1024)
#define CLIENT_QUEUE_MEMORY_LIMIT (4u * 1024 * 1024)
/* Small replies are packed into shared buffers of this size, so a flood of
 * 16-byte errors costs a few bytes each rather than two allocations. */
#define OUTQ_PACK_BUFFER          4096u
/* Requests of one client in flight at once; past this the front-end stops
 * reading that client until replies drain. */
#define MAX_INFLIGHT_PER_CLIENT   128u
/* Bytes queued towards one client or one fetcher before the front-end stops
 * reading more requests from that client. */
#define MAX_QUEUED_BYTES          (64u * 1024 * 1024)

/* SO_SNDBUF asked for a client's Unix socket (the kernel caps it at
 * net.core.wmem_max): several read replies per write. */
#define CLIENT_UNIX_SEND_BUFFER   (4 * 1024 * 1024)

/* Exports on one command line. */
#define MAX_EXPORTS               64u
/* A --config file (nbdcurld.conf(5)), and one line of it: room for a
 * URL or a block of header= bytes with its name. */
#define MAX_CONFIG_FILE_BYTES     (1024u * 1024)
#define MAX_CONFIG_LINE           16384u
/* Longest URL, CA path or other configured string. */
#define MAX_URL_LENGTH            8192u
/* Longest --auth-user name and --auth-password password. */
#define MAX_SECRET_LENGTH         1024u
/* nbdkit curl parameters (curl-keys.h): the longest key name (a longer
 * KEY= is unknown); header= lines of one export, and
 * their bytes together; a cookie= (a secret: read like a password, at
 * most this long); a user-agent=. */
#define MAX_KEY_NAME              63u
#define MAX_EXTRA_HEADERS         32u
#define MAX_EXTRA_HEADER_BYTES    8192u
#define MAX_COOKIE_LENGTH         4096u
/* cookiefile=: the supervisor reads the whole file at start (fetchers may
 * not read it) and each fetcher gets its bytes in its configuration, so
 * it must fit there with everything else (config.c checks the sum).  Room
 * for dozens of Netscape-format lines; a session cookie is one. */
#define MAX_COOKIE_FILE_BYTES     8192u
#define MAX_USER_AGENT            256u
/* resolve= entries of one export (HOST:PORT:ADDR[,ADDR...]), and their
 * bytes together. */
#define MAX_RESOLVE_ENTRIES       16u
#define MAX_RESOLVE_BYTES         4096u
/* ssl-cipher-list= and tls13-ciphers= (OpenSSL cipher strings). */
#define MAX_CIPHER_LIST           1024u
/* Proxies and Unix sockets (proxy=, --proxy-from-env, unix-socket-path=):
 * the no_proxy list taken from the environment, and a socket path (the
 * size of sun_path, less its NUL). */
#define MAX_NOPROXY_LENGTH        4096u
#define MAX_UNIX_SOCKET_PATH      107u
#define MAX_PATH_LENGTH           4096u
/* --cainfo and --capath (cainfo=, capath=): the supervisor reads them
 * before it drops root (ca-bundle.c) and each fetcher of the export gets
 * their certificates as bytes, so that a CA file only root may read
 * works and no fetcher needs a path to one.  The bytes of one export
 * together: room for four bundles as large as Debian's whole
 * /etc/ssl/certs/ca-certificates.crt (about 220 KB); and the files of a
 * --capath directory under OpenSSL's hashed names (Debian's has 146). */
#define CA_BUNDLE_MAX_BYTES       (1024u * 1024)
#define CAPATH_MAX_FILES          1024u

/* Fetcher: HTTP/FTP connections kept per fetcher (--connections). */
#define DEFAULT_CONNECTIONS       16u
#define MAX_CONNECTIONS           64u
/* Fetcher: seconds to connect (--connect-timeout), and the minimum rate
 * of a transfer: one whose body comes at fewer than MIN_TRANSFER_RATE
 * bytes a second on average over DEFAULT_STALL_TIMEOUT seconds
 * (--stall-timeout) fails; so does one whose reply's header section,
 * interim replies included, is not complete that long after the request.
 * Through libcurl these are CURLOPT_LOW_SPEED_LIMIT and _TIME (libcurl
 * counts only body bytes too); direct reads apply the same rule
 * themselves.  --timeout sets a hard limit on a whole transfer. */
#define DEFAULT_CONNECT_TIMEOUT   30u
#define DEFAULT_STALL_TIMEOUT     60u
#define MIN_TRANSFER_RATE         1u
#define MAX_TIMEOUT               86400u
/* Fetcher: why an export could not be opened, as the fetcher tells the
 * front-end (the client's error message) and the supervisor (at start). */
#define MAX_OPEN_FAILURE_MESSAGE  384u
/* Front-end: the same reason for an export is logged once, then again at
 * most every this many seconds with the number of clients it failed. */
#define OPEN_FAILURE_LOG_INTERVAL 60u
/* Fetcher: reads that fail for a reason that may pass (no connection, a
 * connection reset or closed early, a body shorter than its
 * Content-Range, a stall or --connect-timeout, HTTP 408, 429, 500, 502,
 * 503, 504) are tried again, up to --retries (retries=) times, after a
 * delay that starts at --retry-delay (retry-delay=) and doubles each time
 * (unless retry-exponential=no) up to RETRY_MAX_DELAY_MS; each wait is
 * between half and all of it (equal jitter, so that the fetchers of a
 * busy export do not come back all at once).  A Retry-After (seconds or
 * an HTTP-date) lengthens a wait, up to RETRY_AFTER_MAX_MS.  --timeout
 * bounds a read with all its retries.  The defaults are those of nbdkit's
 * retry filter: 5 retries, 2 s doubling, about a minute in all. */
#define DEFAULT_RETRIES           5u
#define MAX_RETRIES               100u
#define RETRY_BASE_DELAY_MS       2000u
#define RETRY_MAX_DELAY_MS        60000u
#define RETRY_AFTER_MAX_MS        60000u
/* Fetcher: redirects followed when opening a URL. */
#define MAX_REDIRECTS             10
/* Fetcher: --allow-port: TCP ports besides the URL's own and the default
 * ports of http and https (80, 443) that a redirect may lead to
 * (fetcher-connect.c; the fetcher's Landlock rules hold the same set). */
#define MAX_ALLOWED_PORTS         8u
/* Fetcher: longest HTTP header line we look at; longer ones are ignored
 * unless they are ones we need, which then fail the transfer. */
#define MAX_HEADER_LINE           8192u

/* Internal messages: largest payload of any type (configuration only:
 * request data never travels in messages, see the data area below). */
#define IPC_MAX_CONFIG_PAYLOAD    (64u * 1024)

/* The data area: one shared memory region per fetcher, made by the
 * supervisor (a sealed memfd: neither side can shrink it under the other)
 * and mapped by the fetcher and the front-end.  The front-end hands out
 * parts of it: a READ names where the fetcher puts the data, which the
 * front-end then writes to the client from there; a WRITE's data is read
 * from the client straight into it.  So request data crosses between the
 * processes without a copy.  The front-end allocates in chunks; a request
 * waits while the area is full.  It holds at least two requests of the
 * largest size, so one in flight never blocks the next. */
#define DATA_AREA_SIZE            (64u * 1024 * 1024)
#define DATA_AREA_CHUNK           (64u * 1024)
#define DATA_AREA_CHUNKS          (DATA_AREA_SIZE / DATA_AREA_CHUNK)
static_assert (DATA_AREA_SIZE >= 2 * NBD_MAX_REQUEST_SIZE, "data area too small");
/* How much of it one client's requests may hold at once unless they hold
 * nothing (--client-memory): memory touched stays near this (first fit
 * reuses the same chunks), and the requests beyond it wait in the client's
 * socket.  Reads through the data pipe hold their part without touching
 * it, so for them it only bounds the requests in flight.  The default is
 * what keeps a fetcher busy with coalesced reads on a loaded two-CPU
 * machine: less makes a sequential copy slower (the benchmark's copy
 * section with --client-memory shows it). */
#define DEFAULT_CLIENT_MEMORY     (16u * 1024 * 1024)
#define MIN_CLIENT_MEMORY         DATA_AREA_CHUNK
#define MAX_CLIENT_MEMORY         (DATA_AREA_SIZE / 2)
static_assert (DATA_AREA_SIZE % DATA_AREA_CHUNK == 0, "data area in chunks");

/* The data pipe: one pipe per fetcher, made by the supervisor, written by
 * the fetcher, read by the front-end.  Reads of plain http URLs skip
 * libcurl: the fetcher splices the body from its TCP socket into the pipe
 * and the front-end splices it on into the client's socket, so the bytes
 * are never copied in user space (the data area path copies them three
 * times: socket to libcurl, libcurl to the area, area to the client's
 * socket).  Reads of read-only file: exports splice the page cache's pages
 * the same way.  A reply is announced only once all of its bytes
 * are in the pipe, so a body that fails half-way costs the client nothing
 * but that read's error.  The supervisor asks for DATA_PIPE_SIZE bytes of
 * capacity (the kernel may give less: fs.pipe-max-size,
 * fs.pipe-user-pages-soft); a read goes through the pipe only if it is at
 * most a quarter of the capacity it got and at most DATA_PIPE_READ_MAX. */
#define DATA_PIPE_SIZE            (1024u * 1024)
#define DATA_PIPE_READ_MAX        (256u * 1024)
/* Fetcher: bytes that direct reads may have requested and not yet put in
 * the data pipe; later reads wait in the queue.  Only the pipe's owner
 * moves data, so a body requested much earlier sits in its socket, where
 * the kernel may compact it into small pieces (which fill the pipe's
 * slots).  Less starves the pipe, more lets bodies wait in sockets: the
 * copy rows of the benchmark were fastest near 4 MiB, with one connection
 * and with four.  Small random reads never reach it. */
#define DIRECT_AHEAD_BYTES        (4u * 1024 * 1024)
/* Fetcher: sizing direct reads to a distant link (fetcher-direct.c,
 * "Sizing").  The look-ahead above grows to DIRECT_AHEAD_GAIN
 * x the measured rate x the round trip, DIRECT_AHEAD_MAX_BYTES at most
 * (MAX_CLIENT_MEMORY: a client never has more reads in flight), adjusted
 * every DIRECT_RATE_WINDOW_MS (and four round trips) of reads.  The
 * round trip is the least of the last DIRECT_RTT_SAMPLES to
 * 2 x DIRECT_RTT_SAMPLES replies.  From DIRECT_FAR_RTT_US on, ranges are
 * split over the connections in pieces of DIRECT_PIECE_MIN_BYTES or more
 * (below it, a LAN: ranges of up to COALESCE_MAX_BYTES). */
#define DIRECT_AHEAD_MAX_BYTES    MAX_CLIENT_MEMORY
/* Fetcher: direct reads over https (fetcher-direct.c, "TLS") read each
 * connection's records DIRECT_TLS_READ_BUFFER bytes at a time (OpenSSL's
 * read-ahead): one system call for many 16 KiB records instead of two
 * for each.  A connection is read until it has nothing, so the buffer's
 * size decides how many calls a body takes: 256 KiB takes far fewer than
 * 64 KiB, for at most 4 MiB per client with the default 16 connections
 * (16 MiB at MAX_CONNECTIONS; a buffer is allocated once its connection
 * is read). */
#define DIRECT_TLS_READ_BUFFER    (256u * 1024)
#define DIRECT_AHEAD_GAIN         4u
#define DIRECT_RATE_WINDOW_MS     100u
#define DIRECT_RTT_SAMPLES        64u
#define DIRECT_FAR_RTT_US         2000u
#define DIRECT_PIECE_MIN_BYTES    (512u * 1024)
/* Fetcher: direct reads of at most this many bytes neither make their
 * socket hold the whole body nor wait for a whole part before moving it
 * (fetcher-direct.c, hold_body and wait_for_part): Linux's first receive
 * window already holds them, and small random reads are spared the
 * system calls. */
#define DIRECT_HOLD_MIN_BYTES     (64u * 1024)
/* Fetcher: longest header section of a reply to a direct (spliced) read;
 * a longer one fails that read. */
/* Readahead (fetcher-readahead.c): a network fetcher keeps prefetched
 * ranges in its own memory, up to this many bytes (and no more than
 * --client-memory).  Once a reader reads forward (forward-reader.h),
 * windows are fetched ahead: the first READAHEAD_MIN_WINDOW (or four
 * reads' worth), each next twice the last, up to READAHEAD_MAX_WINDOW and
 * what the store holds READAHEAD_MAX_INFLIGHT + 2 of; up to
 * READAHEAD_MAX_INFLIGHT at once, each on its own web connection, so that
 * a cap per connection or a long round trip does not hold the reader to
 * one connection's rate; in at most READAHEAD_MAX_SEGMENTS pieces. */
#define READAHEAD_MAX_BYTES       (16u * 1024 * 1024)
#define READAHEAD_MIN_WINDOW      (128u * 1024)
#define READAHEAD_MAX_WINDOW      (4u * 1024 * 1024)
#define READAHEAD_MAX_INFLIGHT    4u
#define READAHEAD_MAX_SEGMENTS    16u
/* Readahead: a forward reader is read ahead while it keeps fewer than
 * this many other reads in flight, of fewer bytes than this in all.
 * qemu-img converting a compressed qcow2 keeps one of about 20 KiB, now
 * and then up to six; converting a raw image, eight of 2 MiB; nbdcopy 64
 * of 256 KiB, or with --requests=2 two of 512 KiB: those are served by
 * coalescing and the direct path, without the store's copy. */
#define READAHEAD_MAX_CLIENT_READS 8u
#define READAHEAD_MAX_CLIENT_BYTES (256u * 1024)
#define MAX_RESPONSE_HEADER_BYTES (16u * 1024)
/* Fetcher: direct reads that may fill the data pipe before they are
 * complete (the server's data in small pieces; each goes to libcurl)
 * before every read does. */
#define MAX_PIPE_OVERFLOWS        16u
/* Fetcher: interim (1xx) responses a request's reply may have before its
 * final response (counted however they arrive); more fail the request. */
#define MAX_INTERIM_RESPONSES     4u
/* Supervisor: seconds a graceful stop (the first SIGTERM or SIGINT) gives
 * the requests in flight: the front-end stops accepting, closes clients
 * still negotiating, reads no new requests, and closes each client once
 * its replies are sent; whatever is still running then is stopped.  Long
 * enough for reads of a working server (milliseconds each), short enough
 * to sit well inside a service manager's stop timeout (systemd: 90 s by
 * default, 30 s in nbdcurld.service).  A second signal stops at once. */
#define SHUTDOWN_GRACE_SECONDS    5u

/* Every process: warnings and notices, which a hostile client or server
 * can cause, are limited to a burst of LOG_BURST lines, then
 * LOG_LINES_PER_SECOND; the rest are counted and the count is logged
 * once lines flow again (log.c).  Errors and -v output are never
 * dropped. */
#define LOG_BURST                 100u
#define LOG_LINES_PER_SECOND      20u

/* ---- header-script= and cookie-script= (scripts.c, fetcher-script.c). ----
 * Only the supervisor starts programs: it runs an export's scripts with
 * /bin/sh, reads their output through the bounded reader, and pushes the
 * result to that export's live fetchers over each one's script channel
 * (CHILD_FD_SCRIPTS, IPC_SCRIPT_*).  A fetcher asks for a renewal when a
 * web server answers 401 or 403, and retries the refused read once with
 * the new values. */
/* Seconds a script may run; then its process group is killed and the run
 * has failed. */
#define SCRIPT_TIMEOUT            60u
/* Standard output of one run: a header-script's lines ("Name: value\n"),
 * at most MAX_EXTRA_HEADERS of them and MAX_EXTRA_HEADER_BYTES in all as
 * the fetcher sends them; a cookie-script's one line of at most
 * MAX_COOKIE_LENGTH.  More output fails the run. */
#define MAX_SCRIPT_OUTPUT         MAX_EXTRA_HEADER_BYTES
/* Standard error of a failed run: its first SCRIPT_STDERR_LINES lines
 * (of the first SCRIPT_STDERR_BYTES bytes) are logged; the rest is read
 * and dropped.  Standard output is never logged: it holds secrets. */
#define SCRIPT_STDERR_LINES       4u
#define SCRIPT_STDERR_BYTES       1024u
/* A renewal asked for by a fetcher (a 401 or 403) starts at most this
 * long after the previous run of that export's scripts started, and
 * never while one runs: a burst of refusals, or a hostile fetcher, makes
 * at most one run a second per export. */
#define SCRIPT_MIN_INTERVAL_MS    1000u
/* header-script=, cookie-script=: the script's text (it goes to the shell
 * on descriptor SCRIPT_TEXT_FD, never in the environment or on a command
 * line). */
#define MAX_SCRIPT_LENGTH         8192u
#define SCRIPT_TEXT_FD            3
#define SCRIPT_TEXT_FD_STRING     "3"
/* header-script-renew=, cookie-script-renew=: seconds, 1 .. MAX_TIMEOUT. */

/* ---- NBD over TLS (frontend-tls.c, keyholder.c). ---- */

/* Files read by the supervisor for the front-end and the key holder: the
 * certificate chain, the CA and the CRL (public), each at most this big.
 * Three of them and a priority string fit one configuration message. */
#define MAX_TLS_FILE_SIZE         (20u * 1024)
#define MAX_TLS_PRIORITY          1024u
/* The PSK file (--tls-psk), read by the key holder only. */
#define MAX_PSK_FILE_SIZE         (1024u * 1024)
#define MAX_PSK_USERNAME          255u     /* bytes, as GnuTLS bounds it */
#define MAX_PSK_KEY               64u      /* bytes: 512 bits */
/* What the front-end may ask the key holder to sign: a hash for ECDSA and
 * RSA-PSS, or for EdDSA a TLS 1.3 server CertificateVerify input (64
 * spaces, the context string, a zero, a transcript hash of at most 64
 * bytes): 162 bytes at most. */
#define KEY_MAX_SIGN_INPUT        256u
#define KEY_MAX_SIGNATURE         1024u    /* RSA 8192 */
/* The key holder answers at most KEY_OPS_BURST requests at once, then
 * KEY_OPS_PER_SECOND: a taken-over front-end gets a slow signing oracle
 * (TLS 1.3 signature schemes only), never the key.  256 clients
 * connecting at once are all served. */
#define KEY_OPS_BURST             512u
#define KEY_OPS_PER_SECOND        256u
/* TLS handshakes (STARTTLS) each client address may begin: at most
 * TLS_STARTS_PER_ADDRESS_BURST at once, then
 * TLS_STARTS_PER_ADDRESS_PER_SECOND.  Each costs the key holder a
 * signature (or a PSK look-up) out of KEY_OPS_PER_SECOND for all: so a
 * flooding address spends its own share, not the others' (frontend-tls.c,
 * tls_start_allowed).  Unix-socket and -s clients, whom the socket's
 * permissions admitted, have no address and no such limit.  The front-end
 * remembers TLS_START_SHARES addresses; a full table forgets the one whose
 * bucket would be the fullest, which costs it at most a fresh burst. */
#define TLS_STARTS_PER_ADDRESS_BURST      64u
#define TLS_STARTS_PER_ADDRESS_PER_SECOND 32u
#define TLS_START_SHARES                  1024u
#define TLS_START_SHARE_PROBES            8u
/* How long a TLS handshake waits for one answer of the key holder (in a
 * fiber of its own: the loop goes on; a signature takes well under a
 * millisecond).  Each handshake's fiber has a stack of
 * HANDSHAKE_STACK_SIZE (address space: GnuTLS's handshake touches a few
 * tens of KiB of it), from STARTTLS to the end of the handshake. */
#define HANDSHAKE_STACK_SIZE      (256u * 1024)
#define KEY_ANSWER_TIMEOUT_MS     2000u
/* Access rules (--allow), over all exports. */
#define MAX_ACCESS_RULES          256u
#define MAX_ACCESS_NAME           1024u    /* a DN, SAN or PSK user name */
/* Subject alternative names of a client certificate looked at for san:
 * rules. */
#define MAX_CLIENT_SANS           16u
/* A TLS client's output: plaintext copied into records a stage at a
 * time, and the records written at once from a wire buffer a little
 * larger (TLS 1.3 adds 22 bytes per 16 KiB record).  128 KiB: one read
 * of the data pipe and one write per stage. */
#define TLS_STAGE_SIZE            (128u * 1024)
#define TLS_WIRE_SIZE             (TLS_STAGE_SIZE + 4096u)

/* Started as root without --user: nbdcurld's own system user (the Debian
 * package makes it, debian/nbdcurld.sysusers), else the user every
 * system has. */
#define DEFAULT_USER              "nbdcurld"
#define FALLBACK_USER             "nobody"

/* /proc/self/status, read once at each role's start for its TracerPid
 * (sandbox_early_start): about 1.5 KiB on Linux 6; a longer one is an
 * error, not a partial read. */
#define PROC_STATUS_MAX_BYTES     16384u

/* ---- Fixed file descriptors of each child after exec. ---- */
#define CHILD_FD_PEER             3   /* front-end: control socket to supervisor;
                                         fetcher: data socket to front-end */
#define CHILD_FD_CONFIG           4   /* pipe: configuration messages, then EOF */
#define FRONTEND_FD_FIRST_LISTENER 5  /* listeners, or -s client read then write */
#define CHILD_FD_DATA_AREA        5   /* fetcher: the data area (memfd) */
#define CHILD_FD_DATA_PIPE        6   /* fetcher: the data pipe's write end */
#define CHILD_FD_EXPORT           7   /* fetcher of a file: export: the image,
                                         opened by the supervisor */
#define CHILD_FD_SCRIPTS          7   /* fetcher of a network export with
                                         FETCHER_HEADER_SCRIPT or
                                         FETCHER_COOKIE_SCRIPT: its script
                                         channel to the supervisor (a
                                         SOCK_SEQPACKET socket).  file:
                                         exports take no scripts, so the
                                         number is free there. */
#define CHILD_FD_CA_BUNDLE        7   /* fetcher of a network export with
                                         ca_bundle_len > 0: its CA
                                         certificates, a sealed memfd
                                         (ca-bundle.h); after the script
                                         channel (8) when there is one */
/* The front-end's socket to the key holder (FRONTEND_TLS_KEYHOLDER) follows
 * its listeners (or the -s client's two fds). */
#define KEYHOLDER_FD_KEY          5   /* key holder: the private key file */
#define KEYHOLDER_FD_PSK          6   /* key holder: the PSK file */

/* A fetcher's descriptors, CHILD_FD_PEER to CHILD_FD_EXPORT (or
 * CHILD_FD_SCRIPTS, then CHILD_FD_CA_BUNDLE), as the supervisor passes
 * them to the launcher. */
#define LAUNCH_MAX_FDS            6u
static_assert (CHILD_FD_SCRIPTS + 1 - CHILD_FD_PEER + 1 == LAUNCH_MAX_FDS &&
               CHILD_FD_SCRIPTS == CHILD_FD_EXPORT && CHILD_FD_CA_BUNDLE == CHILD_FD_SCRIPTS,
               "a fetcher's descriptors");


/* ---- Internal message format (host byte order: same machine). ---- */
struct ipc_header {
  uint16_t type;          /* enum ipc_type */
  uint16_t flags;         /* per type */
  uint32_t payload_len;   /* bytes following the header, exact per type */
  uint64_t id;            /* request id (front-end's own) or client token */
  uint64_t offset;        /* request offset, or export size */
  uint32_t length;        /* request length, or export index */
  uint32_t error;         /* 0 or a host errno value */
  uint64_t area_offset;   /* READ and WRITE: where in the data area */
};
#define IPC_HEADER_SIZE 40
static_assert(sizeof(struct ipc_header) == IPC_HEADER_SIZE, "ipc header");

enum ipc_type {
  /* Configuration, supervisor -> child on CHILD_FD_CONFIG. */
  IPC_CONFIG_FRONTEND = 1, /* payload struct frontend_config_wire */
  IPC_CONFIG_EXPORT,       /* payload struct export_config_wire + name + description */
  IPC_CONFIG_FETCHER,      /* payload struct fetcher_config_wire + strings */
  IPC_CONFIG_END,          /* payload 0: nothing follows */
  IPC_CONFIG_URL_CHECK,    /* to the URL checker, first: flags FETCHER_VERBOSE,
                              FETCHER_SANDBOX_DEBUG; payload 0 */
  IPC_CONFIG_URL,          /* to the URL checker: payload one URL (1 ..
                              MAX_URL_LENGTH bytes), flags URL_CHECK_*;
                              answered by one IPC_URL_CHECKED on
                              CHILD_FD_PEER */


  /* The URL checker's answer, on its CHILD_FD_PEER socket. */
  IPC_URL_CHECKED = 8,     /* payload struct url_checked_wire + strings */

  /* More configuration. */
  IPC_CONFIG_TLS = 9,      /* to the front-end, after the exports, with
                              --tls: payload struct tls_config_wire + strings */
  IPC_CONFIG_ACCESS,       /* to the front-end, after the exports: one
                              --allow rule, struct access_rule_wire + name */
  IPC_CONFIG_KEYHOLDER,    /* to the key holder, then IPC_CONFIG_END: struct
                              keyholder_config_wire + the certificate chain */
  IPC_CONFIG_LAUNCHER,     /* to the fetcher launcher, then IPC_CONFIG_END:
                              struct launcher_config_wire */
  IPC_CONFIG_REMOVER,      /* to the file remover, then IPC_CONFIG_END:
                              struct remover_config_wire, then each file's
                              struct removed_file_wire and path */

  /* Control, front-end <-> supervisor on the SOCK_SEQPACKET socket. */
  IPC_SPAWN_FETCHER = 16,  /* fe -> sup: id = client token, length = export
                              index; payload 0 */
  IPC_FETCHER_SPAWNED,     /* sup -> fe: id = client token, error = 0 with
                              two or three fds (SCM_RIGHTS): the fetcher's
                              socket, its data area and the data pipe's read
                              end (unless FETCHER_DATA_PIPE is off); or an
                              errno without; payload 0 */
  IPC_STOP_ACCEPTING,      /* sup -> fe: a graceful stop: close the
                              listeners and the clients still negotiating,
                              finish the requests in flight, close each
                              client once its replies are out, exit when
                              none is left; every field 0, no fds,
                              payload 0 */

  /* Data, front-end <-> fetcher on the SOCK_STREAM socket. */
  IPC_FETCHER_OPENED = 32, /* fetcher -> fe, first message: offset = export
                              size, flags = FETCHER_CAN_*, length = the
                              largest read it sends through the data pipe
                              (0: none), error = 0 and payload 0; or error
                              an errno (then the fetcher exits) and payload
                              why, as text (0 .. MAX_OPEN_FAILURE_MESSAGE
                              bytes, no credentials) */
  IPC_READ,                /* fe -> fetcher: id, offset, length, area_offset:
                              put the data there; payload 0 */
  IPC_WRITE,               /* fe -> fetcher: id, offset, length, area_offset
                              (the data is there), flags IPC_FLAG_FUA; payload 0 */
  IPC_FLUSH,               /* fe -> fetcher: id; payload 0 */
  IPC_REPLY,               /* fetcher -> fe: id, error; payload 0 (a read's
                              data is in the data area, or with flags
                              IPC_REPLY_PIPED, all of it is in the data pipe,
                              after the bytes of earlier announcements) */
  IPC_PIPE_DISCARD,        /* fetcher -> fe: length = bytes of a failed read
                              that are next in the data pipe: drop them;
                              payload 0 */
  IPC_FETCHER_STARTED,     /* fetcher -> fe, before IPC_FETCHER_OPENED: its
                              start (exec, libraries, sandbox) is done and it
                              opens the export now; every field 0, payload 0 */
  IPC_CACHE,               /* 39, fe -> fetcher: NBD_CMD_CACHE: id, offset,
                              length (1 .. NBD_MAX_REQUEST_SIZE, inside the
                              export), area_offset 0, payload 0: prefetch
                              the range (what fits the store); answered by
                              IPC_REPLY once it is stored (or at once when
                              there is no store) */
  IPC_FETCHER_OPEN,        /* 40, sup -> fetcher, the first message on its
                              CHILD_FD_PEER socket, written by the
                              supervisor before it hands the socket on:
                              open the export now (a spare fetcher waits
                              for it, see SPARE_FETCHERS); every other
                              field 0, payload 0 */

  /* Keys, front-end <-> key holder on a SOCK_SEQPACKET socket: one message
   * per packet, header and payload together, one request at a time. */
  IPC_KEY_SIGN = 48,       /* fe -> kh: id = request number (echoed in the
                              answer), length = the
                              gnutls_sign_algorithm_t, offset = GnuTLS's
                              sign flags, flags IPC_KEY_SIGN_HASHED when the
                              payload is a hash (ECDSA, RSA-PSS), else the
                              whole input (EdDSA); payload 1 ..
                              KEY_MAX_SIGN_INPUT bytes */
  IPC_KEY_SIGNATURE,       /* kh -> fe: id, error = 0 and payload the
                              signature (1 .. KEY_MAX_SIGNATURE), or an
                              errno and payload 0 */
  IPC_KEY_PSK,             /* fe -> kh: id = request number; payload the user
                              name a client gave (1 .. MAX_PSK_USERNAME) */
  IPC_KEY_PSK_KEY,         /* kh -> fe: id, error = 0 and payload the key
                              (1 .. MAX_PSK_KEY), or ENOENT and payload 0 */

  /* The fetcher launcher, supervisor <-> launcher on its CHILD_FD_PEER
   * (SOCK_SEQPACKET, one header per packet, payload 0, every field not
   * named 0).  One start at a time: the supervisor waits for each answer.
   * Anything else ends the launcher (or, from it, makes the supervisor
   * replace it). */
  IPC_LAUNCHER_READY = 56, /* launcher -> sup, once: loaded, sandboxed,
                              waiting for starts */
  IPC_LAUNCH_FETCHER,      /* sup -> launcher: length = the number of
                              descriptors passed (SCM_RIGHTS, 2 ..
                              LAUNCH_MAX_FDS): they become the fetcher's
                              fds 3, 4, ... in order */
  IPC_FETCHER_LAUNCHED,    /* launcher -> sup: id = the new fetcher's pid
                              (a child of the supervisor), error 0; or
                              error = an errno and id 0 */

  /* Scripts, supervisor <-> fetcher on the fetcher's script channel
   * (CHILD_FD_SCRIPTS, SOCK_SEQPACKET, one message per packet, no
   * descriptors).  It stays open while the fetcher lives; the fetcher
   * ends at its EOF.  The supervisor reads nothing else from fetchers:
   * anything else, or a descriptor, and it closes that channel, which
   * ends that fetcher. */
  IPC_SCRIPT_VALUES = 64,  /* sup -> fetcher: the export's scripts ran.
                              id = the generation (1, 2, ... per export),
                              error = 0, flags SCRIPT_VALUES_*, payload
                              struct script_values_wire + headers + cookie;
                              or error = an errno (the run failed: reads
                              waiting for it fail), payload 0.  Sent at the
                              fetcher's start (it opens nothing before the
                              first) and after every run. */
  IPC_SCRIPT_RENEW,        /* fetcher -> sup: a server answered 401 or 403
                              to a request made with generation id: run the
                              scripts again (at most once per generation,
                              SCRIPT_MIN_INTERVAL_MS apart); every other
                              field 0, payload 0 */
};

/* IPC_SCRIPT_VALUES: which values the payload replaces (the output of the
 * export's header-script, cookie-script). */
#define SCRIPT_VALUES_HEADERS   (1u << 0)
#define SCRIPT_VALUES_COOKIE    (1u << 1)
struct script_values_wire {
  uint32_t headers_len;        /* 0 .. MAX_EXTRA_HEADER_BYTES: "Name: value\r\n"
                                  lines, at most MAX_EXTRA_HEADERS */
  uint32_t cookie_len;         /* 0 .. MAX_COOKIE_LENGTH */
  /* then the headers and the cookie */
};
#define SCRIPT_VALUES_MAX_PAYLOAD \
  (sizeof (struct script_values_wire) + MAX_EXTRA_HEADER_BYTES + MAX_COOKIE_LENGTH)

/* IPC_FETCHER_OPENED flags: what the opened export can do. */
#define FETCHER_CAN_WRITE   (1u << 0)
#define FETCHER_CAN_FLUSH   (1u << 1)
#define FETCHER_CAN_FUA     (1u << 2)

/* IPC_KEY_SIGN flags. */
#define IPC_KEY_SIGN_HASHED (1u << 0)

/* IPC_WRITE flags. */
#define IPC_FLAG_FUA        (1u << 0)
/* IPC_REPLY flags. */
#define IPC_REPLY_PIPED     (1u << 0)

/* Front-end configuration: sent first, then nexports IPC_CONFIG_EXPORT. */
struct frontend_config_wire {
  uint32_t flags;              /* FRONTEND_* */
  uint32_t handshake_timeout;  /* seconds */
  uint32_t nexports;           /* 1 .. MAX_EXPORTS */
  uint32_t nlisteners;         /* listening sockets from FRONTEND_FD_FIRST_LISTENER;
                                  0 with FRONTEND_SINGLE */
  uint32_t client_memory;      /* bytes, MIN_ .. MAX_CLIENT_MEMORY */
  uint32_t max_clients;        /* 1 .. MAX_MAX_CLIENTS */
};
#define FRONTEND_SINGLE     (1u << 0)  /* one client on fds 5 (read) and 6 (write) */
#define FRONTEND_MULTI_CONN (1u << 1)  /* every export read-only: advertise multi-conn */
#define FRONTEND_VERBOSE    (1u << 2)
#define FRONTEND_SANDBOX_DEBUG (1u << 3)  /* --sandbox-debug: trap and name calls */

/* --tls: what the front-end offers and needs. */
struct tls_config_wire {
  uint32_t mode;               /* TLS_ON or TLS_REQUIRE */
  uint32_t flags;              /* TLS_* below */
  uint32_t priority_len;       /* 0 .. MAX_TLS_PRIORITY: "" = the default */
  uint32_t cert_len;           /* 0 .. MAX_TLS_FILE_SIZE: server-cert.pem */
  uint32_t ca_len;             /* 0 .. MAX_TLS_FILE_SIZE: ca-cert.pem */
  uint32_t crl_len;            /* 0 .. MAX_TLS_FILE_SIZE: ca-crl.pem */
  /* then the priority string, the chain, the CA and the CRL */
};
#define TLS_OFF             0u
#define TLS_ON              1u
#define TLS_REQUIRE         2u
#define TLS_CERTIFICATES    (1u << 0)  /* X.509: the key holder signs */
#define TLS_PSK             (1u << 1)  /* PSK: the key holder knows the keys */
#define TLS_VERIFY_PEER     (1u << 2)  /* client certificates required */

/* One --allow rule. */
struct access_rule_wire {
  uint32_t export_index;       /* < nexports */
  uint32_t kind;               /* ACCESS_* */
  uint32_t prefix;             /* ACCESS_ADDRESS: bits, <= 32 or 128 */
  uint32_t name_len;           /* identities: 1 .. MAX_ACCESS_NAME; else 0 */
  uint8_t addr[16];            /* ACCESS_ADDRESS: IPv4 (4 bytes) or IPv6 */
  /* then the name */
};
#define ACCESS_ADDRESS4     1u
#define ACCESS_ADDRESS6     2u
#define ACCESS_UNIX         3u
#define ACCESS_PSK          4u         /* PSK user name */
#define ACCESS_CERT_DN      5u         /* certificate subject, RFC 4514 */
#define ACCESS_CERT_SAN     6u         /* DNS name or e-mail address */

/* The key holder: a private key at KEYHOLDER_FD_KEY and/or a PSK file at
 * KEYHOLDER_FD_PSK, and the certificate chain the key must match. */
struct keyholder_config_wire {
  uint32_t flags;              /* KEYHOLDER_* */
  uint32_t cert_len;           /* 0 .. MAX_TLS_FILE_SIZE */
};
#define KEYHOLDER_KEY           (1u << 0)
#define KEYHOLDER_PSK           (1u << 1)
#define KEYHOLDER_VERBOSE       (1u << 2)
#define KEYHOLDER_SANDBOX_DEBUG (1u << 3)

/* The fetcher launcher: how it logs and how its filter acts. */
struct launcher_config_wire {
  uint32_t flags;              /* LAUNCHER_* */
};
#define LAUNCHER_VERBOSE        (1u << 0)
#define LAUNCHER_SANDBOX_DEBUG  (1u << 1)

/* The file remover (remover.c): the files it removes when the supervisor
 * ends, each only while it is still the file made (device and inode). */
struct remover_config_wire {
  uint32_t flags;              /* REMOVER_* */
  uint32_t nfiles;             /* 1 .. REMOVER_MAX_FILES */
  /* then nfiles times a struct removed_file_wire and its path */
};
struct removed_file_wire {
  uint64_t dev;                /* st_dev of the file made */
  uint64_t ino;                /* st_ino */
  uint32_t path_len;           /* 2 .. MAX_PATH_LENGTH: an absolute path */
  uint32_t reserved;           /* 0 */
};
#define REMOVER_MAX_FILES       2u     /* the -U socket and the -P pid file */
#define REMOVER_VERBOSE         (1u << 0)
#define REMOVER_SANDBOX_DEBUG   (1u << 1)

struct export_config_wire {
  uint32_t flags;              /* EXPORT_* */
  uint32_t name_len;           /* <= NBD_MAX_STRING */
  uint32_t description_len;    /* <= NBD_MAX_STRING */
  uint32_t reserved;           /* 0 */
  /* then name_len bytes of name, description_len bytes of description */
};
#define EXPORT_READONLY     (1u << 0)

/* Fetcher configuration: one message, then IPC_CONFIG_END. */
struct fetcher_config_wire {
  uint32_t flags;              /* FETCHER_* */
  uint32_t connections;        /* 1 .. MAX_CONNECTIONS */
  uint32_t connect_timeout;    /* seconds */
  uint32_t timeout;            /* seconds a transfer may take, 0 = no limit */
  uint32_t stall_timeout;      /* seconds, 0 = DEFAULT_STALL_TIMEOUT */
  uint32_t ca_bundle_len;      /* 0 .. CA_BUNDLE_MAX_BYTES: the bytes of the
                                  memfd at CHILD_FD_CA_BUNDLE (--cainfo,
                                  --capath); 0: none, libcurl's default */
  uint32_t ip_version;         /* ipresolve=: 0 any, 4 or 6 */
  uint32_t tls_min;            /* ssl-version=: 0 (libcurl's), or 10, 11, 12,
                                  13 for TLS 1.0 to 1.3 */
  uint32_t http_version;       /* http-version=: FETCHER_HTTP_* */
  /* Retries of failed reads (see DEFAULT_RETRIES). */
  uint32_t retries;            /* 0 .. MAX_RETRIES: 0 = none */
  uint32_t retry_delay_ms;     /* 0 .. RETRY_MAX_DELAY_MS: the first wait */
  /* Readahead. */
  uint32_t readahead;          /* 0 .. READAHEAD_MAX_BYTES: the prefetch
                                  store's size, 0: none */
  uint16_t allow_ports[MAX_ALLOWED_PORTS];  /* --allow-port, 0: unused slot */
  uint32_t nstrings;           /* config.h's FETCHER_NSTRINGS */
  /* then nstrings uint32_t lengths, then the strings' bytes, both in
     config.h's order (fetcher_strings: the URL, export name, password,
     cookie, proxy, proxy password, no_proxy list and cookie file, then
     the keys that
     curl-keys.h sends TO_FETCHER, in its order), each at most its
     fetcher_strings[].max bytes; the URL at least 1.  The cookie file's
     lines each end "\n"; the engine is on with FETCHER_COOKIE_ENGINE
     only. */
};
/* http-version=, nbdkit's values in its order (libcurl's CURL_HTTP_VERSION_*):
 * none leaves libcurl's default (HTTP/2 over TLS when the server offers it). */
enum {
  FETCHER_HTTP_NONE, FETCHER_HTTP_1_0, FETCHER_HTTP_1_1, FETCHER_HTTP_2_0,
  FETCHER_HTTP_2TLS, FETCHER_HTTP_2_PRIOR_KNOWLEDGE, FETCHER_HTTP_3,
  FETCHER_HTTP_3ONLY,
};
#define FETCHER_READONLY    (1u << 0)
#define FETCHER_VERBOSE     (1u << 1)
#define FETCHER_INSECURE    (1u << 2)  /* --insecure: skip TLS peer and host checks */
#define FETCHER_SANDBOX_DEBUG  (1u << 3)  /* --sandbox-debug: trap and name calls */
#define FETCHER_DATA_PIPE   (1u << 4)  /* the front-end reads the data pipe */
#define FETCHER_NO_REDIRECTS (1u << 5) /* followlocation=false */
#define FETCHER_NO_NODELAY  (1u << 6)  /* tcp-nodelay=false */
#define FETCHER_NO_KEEPALIVE (1u << 7) /* tcp-keepalive=false */
#define FETCHER_RETRY_CONSTANT (1u << 16) /* retry-exponential=no: every
                                              wait is retry_delay_ms */
/* protocols=: the schemes the export may use, redirects included (none
 * set: all of http, https, ftp and ftps). */
#define FETCHER_PROTO_HTTP  (1u << 8)
#define FETCHER_PROTO_HTTPS (1u << 9)
#define FETCHER_PROTO_FTP   (1u << 10)
#define FETCHER_PROTO_FTPS  (1u << 11)
/* --allow-local-redirects: a redirect from a URL whose host is not on
 * this machine may lead to a loopback or link-local address. */
#define FETCHER_ALLOW_LOCAL_REDIRECTS (1u << 12)
/* -D curl.verbose=1: trace each web conversation, secrets masked
 * (fetcher-trace.c). */
#define FETCHER_CURL_VERBOSE (1u << 13)
/* cookiefile= (even empty): libcurl's cookie engine is on, its cookies
 * shared by all the fetcher's handles, loaded from the cookie file string. */
#define FETCHER_COOKIE_ENGINE (1u << 17)
#define FETCHER_PROTO_ALL   (FETCHER_PROTO_HTTP | FETCHER_PROTO_HTTPS | \
                             FETCHER_PROTO_FTP | FETCHER_PROTO_FTPS)
/* header-script=, cookie-script=: the fetcher has its script channel at
 * CHILD_FD_SCRIPTS, waits for the first IPC_SCRIPT_VALUES before it
 * opens the export, and sends the values it brings instead of headers
 * (header-script) or cookie (cookie-script), which are then "". */
#define FETCHER_HEADER_SCRIPT (1u << 14)
#define FETCHER_COOKIE_SCRIPT (1u << 15)

/* The URL checker's answer for one URL: libcurl's reading of it. */
struct url_checked_wire {
  uint32_t flags;              /* URL_CHECKED_* */
  uint32_t kind;               /* enum url_kind (url.h) when URL_CHECKED_OK */
  uint32_t message_len;        /* 0 .. MAX_URL_MESSAGE: why it was refused */
  uint32_t log_url_len;        /* 1 .. MAX_LOG_URL_LENGTH: url_for_log() */
  uint32_t file_path_len;      /* file: only, 1 .. MAX_PATH_LENGTH; else 0 */
  uint32_t script_url_len;     /* 0: the URL has no user name or password;
                                  else 1 .. MAX_LOG_URL_LENGTH: the URL
                                  without them (scripts' $url) */
  /* then the message, the URL as it may be logged, the path, and the URL
   * for scripts */
};
/* IPC_CONFIG_URL's flags: what the export needs of libcurl (refused
 * with a message when this libcurl lacks it), or that the URL is a
 * proxy's (http:// or https://, a host and port and nothing else). */
#define URL_CHECK_PROXY           (1u << 0)
#define URL_CHECK_NEEDS_HTTP2     (1u << 1)
#define URL_CHECK_NEEDS_HTTP3     (1u << 2)
#define URL_CHECK_NEEDS_UNIX      (1u << 3)
#define URL_CHECK_ALL             (URL_CHECK_PROXY | URL_CHECK_NEEDS_HTTP2 | \
                                   URL_CHECK_NEEDS_HTTP3 | URL_CHECK_NEEDS_UNIX)
#define URL_CHECKED_OK            (1u << 0)  /* a URL nbdcurld serves */
#define URL_CHECKED_HAS_PASSWORD  (1u << 1)  /* user:password@ inside */
#define MAX_URL_MESSAGE           255u
/* libcurl's normalised URL may be longer than the one given (it
 * percent-encodes); the checker shortens longer ones for the log. */
#define MAX_LOG_URL_LENGTH        (MAX_URL_LENGTH + 64u)

#include "child.h"
#include "roles.h"

#endif
