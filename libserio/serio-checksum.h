/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-checksum.h: FNV-1a checksums for receipts and audit logs
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib-object.h>

#include "serio-version-macros.h"

G_BEGIN_DECLS

SERIO_AVAILABLE_IN_ALL
guint32 serio_compute_checksum       (const char *text);
SERIO_AVAILABLE_IN_ALL
guint32 serio_compute_checksum_for_bytes (GBytes     *bytes);

/**
 * SerioChecksum:
 *
 * The libserio checksum computed piece by piece, for data that comes in
 * parts (a file read a buffer at a time, a text written by a
 * [class@Serio.Writer]): feed it with [method@Serio.Checksum.update] and
 * read it with [method@Serio.Checksum.get_value], which gives what
 * [func@Serio.compute_checksum_for_bytes] gives for all the bytes at once.
 */
typedef struct _SerioChecksum SerioChecksum;

#define SERIO_TYPE_CHECKSUM (serio_checksum_get_type ())

SERIO_AVAILABLE_IN_ALL
GType          serio_checksum_get_type    (void) G_GNUC_CONST;
SERIO_AVAILABLE_IN_ALL
SerioChecksum *serio_checksum_new         (void) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioChecksum *serio_checksum_copy        (const SerioChecksum *self) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
void           serio_checksum_free        (SerioChecksum       *self);
SERIO_AVAILABLE_IN_ALL
void           serio_checksum_reset       (SerioChecksum       *self);
SERIO_AVAILABLE_IN_ALL
void           serio_checksum_update      (SerioChecksum       *self,
                                           const guint8        *data,
                                           gssize               length);
SERIO_AVAILABLE_IN_ALL
guint32        serio_checksum_get_value   (const SerioChecksum *self);
SERIO_AVAILABLE_IN_ALL
guint64        serio_checksum_get_value64 (const SerioChecksum *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioChecksum, serio_checksum_free)

G_END_DECLS
