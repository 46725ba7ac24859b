/*
 * limits-strings.h: the longest strings the configuration may hold (the
 * command line, --config files, curl keys).  The supervisor refuses longer
 * ones with a message (options.c, secret.c); the children's configuration
 * is checked against the same bounds (config.c), and each fits a
 * configuration message with the others (IPC_MAX_CONFIG_PAYLOAD).
 */
#ifndef NBDCURLD_LIMITS_STRINGS_H
#define NBDCURLD_LIMITS_STRINGS_H

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
/* header-script=, cookie-script=: the script's text (it goes to the shell
 * on a descriptor, never in the environment or on a command line). */
#define MAX_SCRIPT_LENGTH         8192u

#endif
