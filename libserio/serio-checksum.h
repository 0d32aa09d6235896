/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-checksum.h: FNV-1a checksums for receipts and audit logs
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib.h>

#include "serio-version-macros.h"

G_BEGIN_DECLS

SERIO_AVAILABLE_IN_ALL
guint32 serio_checksum       (const char *text);
SERIO_AVAILABLE_IN_ALL
guint32 serio_checksum_bytes (GBytes     *bytes);

G_END_DECLS
