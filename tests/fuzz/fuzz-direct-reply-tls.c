/*
 * fuzz-direct-reply-tls.c: fuzz-direct-reply.c over https, where direct
 * reads send and receive through libcurl's connect-only connections
 * (played here by plain sockets) and each body goes into its reads'
 * places in the data area, never the pipe (src/fetcher/direct-tls.c).
 * The same inputs, the same server, and the same model, with each read's
 * bytes checked in the data area when it is answered.
 */
#define FUZZ_DIRECT_TLS 1
#include "fuzz-direct-reply.c"
