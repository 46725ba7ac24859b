/*
 * nbdcurld.h: every limit, fixed descriptor and internal message type at
 * once, for code that has not yet said which it uses.  New code includes
 * the specific headers instead, so that changing a limit rebuilds only
 * what uses it.  The map:
 *
 *   the internal messages      ipc-messages.h (types, header, fields),
 *                              ipc-table.h (their contract as a table),
 *                              ipc.h (sending and receiving)
 *   each child's descriptors   child-fds.h
 *   configuration messages     config-wire.h, fetcher-wire.h,
 *                              tls-modes.h (--tls), access-rules.h
 *                              (--allow), keyholder-wire.h,
 *                              url-check-wire.h, script-values.h
 *   limits shared by roles     limits-nbd.h (what a client sends),
 *                              limits-server.h (clients, exports),
 *                              data-path.h (the data area and pipe),
 *                              limits-strings.h (configured strings),
 *                              limits-ca.h (--cainfo, --capath),
 *                              limits-web.h, limits-transfer.h (web
 *                              transfers), limits-readahead.h,
 *                              limits-scripts.h, limits-log.h,
 *                              limits-sandbox.h
 *   one role's limits          in its folder: limits-handshake.h,
 *                              limits-clients.h, limits-queues.h,
 *                              limits-frontend-tls.h (frontend/);
 *                              limits-keyholder.h (keyholder/);
 *                              limits-direct.h, limits-reply.h,
 *                              limits-readahead-windows.h (fetcher/);
 *                              limits-spares.h, limits-launcher.h,
 *                              limits-conffile.h, limits-script-runs.h,
 *                              limits-shutdown.h (supervisor/)
 *   the roles                  roles.h (the table), child.h (a child's
 *                              start)
 */
#ifndef NBDCURLD_H
#define NBDCURLD_H

#include "access-rules.h"
#include "child-fds.h"
#include "config-wire.h"
#include "data-path.h"
#include "fetcher-wire.h"
#include "ipc-messages.h"
#include "keyholder-wire.h"
#include "limits-ca.h"
#include "limits-log.h"
#include "limits-nbd.h"
#include "limits-readahead.h"
#include "limits-sandbox.h"
#include "limits-scripts.h"
#include "limits-server.h"
#include "limits-strings.h"
#include "limits-transfer.h"
#include "limits-web.h"
#include "script-values.h"
#include "tls-modes.h"
#include "url-check-wire.h"

#include "limits-clients.h"
#include "limits-conffile.h"
#include "limits-direct.h"
#include "limits-frontend-tls.h"
#include "limits-handshake.h"
#include "limits-keyholder.h"
#include "limits-launcher.h"
#include "limits-queues.h"
#include "limits-readahead-windows.h"
#include "limits-reply.h"
#include "limits-script-runs.h"
#include "limits-shutdown.h"
#include "limits-spares.h"

#include "child.h"
#include "roles.h"

#endif
