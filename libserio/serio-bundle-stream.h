/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle-stream.h: bundles read from and written to GIO streams
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <gio/gio.h>

#include "serio-bundle.h"
#include "serio-reader.h"
#include "serio-version-macros.h"

G_BEGIN_DECLS

SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_stream          (GInputStream         *stream,
                                                     GCancellable         *cancellable,
                                                     GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_reader          (SerioReader          *reader,
                                                     GCancellable         *cancellable,
                                                     GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_new_from_stream_async    (GInputStream         *stream,
                                                     int                   io_priority,
                                                     GCancellable         *cancellable,
                                                     GAsyncReadyCallback   callback,
                                                     gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_stream_finish   (GAsyncResult         *result,
                                                     GError              **error) G_GNUC_WARN_UNUSED_RESULT;

SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_write_to_stream          (SerioBundle          *self,
                                                     GOutputStream        *stream,
                                                     SerioSaveFlags        flags,
                                                     GCancellable         *cancellable,
                                                     GError              **error);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_write_to_stream_async    (SerioBundle          *self,
                                                     GOutputStream        *stream,
                                                     SerioSaveFlags        flags,
                                                     int                   io_priority,
                                                     GCancellable         *cancellable,
                                                     GAsyncReadyCallback   callback,
                                                     gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_write_to_stream_finish   (SerioBundle          *self,
                                                     GAsyncResult         *result,
                                                     GError              **error);

G_END_DECLS
