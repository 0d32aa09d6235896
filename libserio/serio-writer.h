/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-writer.h: v1 text written to a GOutputStream, array by array
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <gio/gio.h>

#include "serio-dtype.h"
#include "serio-flags.h"
#include "serio-reader.h"
#include "serio-version-macros.h"

G_BEGIN_DECLS

#define SERIO_TYPE_WRITER (serio_writer_get_type ())

SERIO_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SerioWriter, serio_writer, SERIO, WRITER, GObject)

SERIO_AVAILABLE_IN_ALL
SerioWriter   *serio_writer_new              (GOutputStream  *stream,
                                              SerioSaveFlags  flags) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioWriter   *serio_writer_new_for_file     (GFile          *file,
                                              SerioSaveFlags  flags,
                                              GCancellable   *cancellable,
                                              GError        **error) G_GNUC_WARN_UNUSED_RESULT;

SERIO_AVAILABLE_IN_ALL
GOutputStream *serio_writer_get_stream       (SerioWriter    *self);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_get_sealed       (SerioWriter    *self);
SERIO_AVAILABLE_IN_ALL
guint          serio_writer_get_threads      (SerioWriter    *self);
SERIO_AVAILABLE_IN_ALL
void           serio_writer_set_threads      (SerioWriter    *self,
                                              guint           threads);
SERIO_AVAILABLE_IN_ALL
void           serio_writer_set_progress_callback (SerioWriter        *self,
                                              SerioProgressCallback callback,
                                              gpointer            user_data,
                                              GDestroyNotify      notify);
SERIO_AVAILABLE_IN_ALL
guint64        serio_writer_get_bytes_written (SerioWriter   *self);

SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_write_array      (SerioWriter    *self,
                                              const char     *name,
                                              const double   *values,
                                              gsize           n_values,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_write_bytes      (SerioWriter    *self,
                                              const char     *name,
                                              GBytes         *values,
                                              GCancellable   *cancellable,
                                              GError        **error);

SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_begin_array      (SerioWriter    *self,
                                              const char     *name,
                                              guint64         n_values,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_add_values       (SerioWriter    *self,
                                              const double   *values,
                                              gsize           n_values,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_add_bytes        (SerioWriter    *self,
                                              GBytes         *values,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_begin_typed_array (SerioWriter   *self,
                                              const char     *base_name,
                                              SerioDtype      dtype,
                                              const guint64  *shape,
                                              guint           n_dims,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_add_typed_bytes  (SerioWriter    *self,
                                              GBytes         *data,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_write_typed      (SerioWriter    *self,
                                              const char     *base_name,
                                              SerioDtype      dtype,
                                              const guint64  *shape,
                                              guint           n_dims,
                                              GBytes         *data,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_write_records    (SerioWriter            *self,
                                              const SerioRecordInfo  *records,
                                              const gconstpointer    *data,
                                              gsize                   n_records,
                                              GCancellable           *cancellable,
                                              GError                **error);
SERIO_AVAILABLE_IN_ALL
guint64        serio_writer_get_n_missing    (SerioWriter    *self);

SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_end              (SerioWriter    *self,
                                              GCancellable   *cancellable,
                                              GError        **error);
SERIO_AVAILABLE_IN_ALL
gboolean       serio_writer_close            (SerioWriter    *self,
                                              GCancellable   *cancellable,
                                              GError        **error);

G_END_DECLS
