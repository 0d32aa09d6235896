/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle.h: an ordered list of named Float64 arrays
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <gio/gio.h>

#include "serio-dtype.h"
#include "serio-name.h"
#include "serio-reader.h"
#include "serio-flags.h"
#include "serio-version-macros.h"

G_BEGIN_DECLS

#define SERIO_TYPE_BUNDLE (serio_bundle_get_type ())

SERIO_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SerioBundle, serio_bundle, SERIO, BUNDLE, GObject)

SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new                  (void) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_string      (const char           *text,
                                                 GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_bytes       (GBytes               *bytes,
                                                 GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
char         *serio_bundle_to_string            (SerioBundle          *self,
                                                 SerioSaveFlags        flags) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_bundle_to_bytes             (SerioBundle          *self,
                                                 SerioSaveFlags        flags) G_GNUC_WARN_UNUSED_RESULT;

SERIO_AVAILABLE_IN_ALL
void          serio_bundle_append               (SerioBundle          *self,
                                                 const char           *name,
                                                 const double         *values,
                                                 gsize                 n_values);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_append_array         (SerioBundle          *self,
                                                 const char           *name,
                                                 GArray               *values);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_append_bytes         (SerioBundle          *self,
                                                 const char           *name,
                                                 GBytes               *values);

SERIO_AVAILABLE_IN_ALL
guint         serio_bundle_get_n_arrays         (SerioBundle          *self);
SERIO_AVAILABLE_IN_ALL
const char   *serio_bundle_get_name             (SerioBundle          *self,
                                                 guint                 index);
SERIO_AVAILABLE_IN_ALL
const double *serio_bundle_get_values           (SerioBundle          *self,
                                                 guint                 index,
                                                 gsize                *n_values);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_bundle_get_bytes            (SerioBundle          *self,
                                                 guint                 index) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_lookup               (SerioBundle          *self,
                                                 const char           *name,
                                                 guint                *index);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_equal                (SerioBundle          *a,
                                                 SerioBundle          *b);

SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_file        (GFile                *file,
                                                 GCancellable         *cancellable,
                                                 SerioProgressCallback progress_callback,
                                                 gpointer              progress_callback_data,
                                                 GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_new_from_file_async  (GFile                *file,
                                                 int                   io_priority,
                                                 GCancellable         *cancellable,
                                                 SerioProgressCallback progress_callback,
                                                 gpointer              progress_callback_data,
                                                 GDestroyNotify        progress_callback_notify,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new_from_file_finish (GAsyncResult         *result,
                                                 GError              **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_save_to_file         (SerioBundle          *self,
                                                 GFile                *file,
                                                 SerioSaveFlags        flags,
                                                 GCancellable         *cancellable,
                                                 SerioProgressCallback progress_callback,
                                                 gpointer              progress_callback_data,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_save_to_file_async   (SerioBundle          *self,
                                                 GFile                *file,
                                                 SerioSaveFlags        flags,
                                                 int                   io_priority,
                                                 GCancellable         *cancellable,
                                                 SerioProgressCallback progress_callback,
                                                 gpointer              progress_callback_data,
                                                 GDestroyNotify        progress_callback_notify,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_save_to_file_finish  (SerioBundle          *self,
                                                 GAsyncResult         *result,
                                                 GError              **error);

/* Shapes (serio-v1-files.md §3) */

SERIO_AVAILABLE_IN_ALL
guint64      *serio_bundle_get_shape            (SerioBundle          *self,
                                                 guint                 index,
                                                 guint                *n_dims) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
char         *serio_bundle_get_base_name        (SerioBundle          *self,
                                                 guint                 index) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_append_with_shape    (SerioBundle          *self,
                                                 const char           *base_name,
                                                 const guint64        *shape,
                                                 guint                 n_dims,
                                                 const double         *values,
                                                 gsize                 n_values);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_append_bytes_with_shape (SerioBundle       *self,
                                                 const char           *base_name,
                                                 const guint64        *shape,
                                                 guint                 n_dims,
                                                 GBytes               *values);
SERIO_AVAILABLE_IN_ALL
double       *serio_bundle_dup_values           (SerioBundle          *self,
                                                 guint                 index,
                                                 gsize                *n_values) G_GNUC_WARN_UNUSED_RESULT;

/* Element types */

SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_append_typed         (SerioBundle          *self,
                                                 const char           *base_name,
                                                 SerioDtype            dtype,
                                                 const guint64        *shape,
                                                 guint                 n_dims,
                                                 GBytes               *data,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
SerioDtype    serio_bundle_get_dtype            (SerioBundle          *self,
                                                 guint                 index);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_bundle_get_typed_bytes      (SerioBundle          *self,
                                                 guint                 index) G_GNUC_WARN_UNUSED_RESULT;

/* Streams */

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
