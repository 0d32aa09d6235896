/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-reader.h: v1 text read from a GInputStream, array by array
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
#include "serio-version-macros.h"

G_BEGIN_DECLS

#define SERIO_TYPE_READER (serio_reader_get_type ())

SERIO_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SerioReader, serio_reader, SERIO, READER, GObject)

SERIO_AVAILABLE_IN_ALL
SerioReader  *serio_reader_new              (GInputStream   *stream) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioReader  *serio_reader_new_for_bytes    (GBytes         *bytes) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioReader  *serio_reader_new_for_file     (GFile          *file,
                                             GCancellable   *cancellable,
                                             GError        **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioReader  *serio_reader_new_for_index    (GFile          *index,
                                             GCancellable   *cancellable,
                                             GError        **error) G_GNUC_WARN_UNUSED_RESULT;

SERIO_AVAILABLE_IN_ALL
GInputStream *serio_reader_get_stream       (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
gsize         serio_reader_get_buffer_size  (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
guint         serio_reader_get_threads      (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
void          serio_reader_set_threads      (SerioReader    *self,
                                             guint           threads);
SERIO_AVAILABLE_IN_ALL
void          serio_reader_set_progress_callback (SerioReader        *self,
                                             SerioProgressCallback callback,
                                             gpointer            user_data,
                                             GDestroyNotify      notify);
SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_bytes_read   (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_size         (SerioReader    *self);

SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_next             (SerioReader    *self,
                                             GCancellable   *cancellable,
                                             GError        **error);
SERIO_AVAILABLE_IN_ALL
const char   *serio_reader_get_name         (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
char         *serio_reader_get_base_name    (SerioReader    *self) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
guint64      *serio_reader_get_shape        (SerioReader    *self,
                                             guint          *n_dims) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
SerioDtype    serio_reader_get_dtype        (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_n_values     (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_n_left       (SerioReader    *self);

SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_read_values      (SerioReader    *self,
                                             double         *values,
                                             gsize           n_values,
                                             gsize          *n_read,
                                             GCancellable   *cancellable,
                                             GError        **error);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_reader_read_bytes       (SerioReader    *self,
                                             gsize           max_values,
                                             GCancellable   *cancellable,
                                             GError        **error) G_GNUC_WARN_UNUSED_RESULT;
SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_read_typed       (SerioReader    *self,
                                             gpointer        buffer,
                                             gsize           n_values,
                                             gsize          *n_read,
                                             GCancellable   *cancellable,
                                             GError        **error);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_reader_read_typed_bytes (SerioReader    *self,
                                             gsize           max_values,
                                             GCancellable   *cancellable,
                                             GError        **error) G_GNUC_WARN_UNUSED_RESULT;

typedef struct
{
  const char    *name;
  const guint64 *dims;
  guint64        offset;
  guint64        n_values;
  SerioDtype     dtype;
  guint          n_dims;
} SerioRecordInfo;

SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_read_records     (SerioReader      *self,
                                             gpointer          buffer,
                                             gsize             buffer_size,
                                             SerioRecordInfo  *records,
                                             gsize             max_records,
                                             gsize            *n_records,
                                             GCancellable     *cancellable,
                                             GError          **error);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_skip_array       (SerioReader    *self,
                                             GCancellable   *cancellable,
                                             GError        **error);

SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_get_sealed       (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_reader_get_finished     (SerioReader    *self);

SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_error_line   (SerioReader    *self);
SERIO_AVAILABLE_IN_ALL
guint64       serio_reader_get_error_value_index (SerioReader *self);

G_END_DECLS
