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
#include "serio-version-macros.h"

G_BEGIN_DECLS

/**
 * SerioSaveFlags:
 * @SERIO_SAVE_FLAGS_NONE: the default: save a sealed text, which every
 *   reader of this library verifies
 * @SERIO_SAVE_FLAGS_PLAIN: save plain v1 text without a seal, as
 *   [method@Serio.Bundle.to_bytes] gives it; damage that leaves valid v1
 *   (a changed digit, a lost line) then goes unnoticed
 *
 * Flags for [method@Serio.Bundle.save_to_file_full].
 */
typedef enum /*< flags >*/
{
  SERIO_SAVE_FLAGS_NONE  = 0,
  SERIO_SAVE_FLAGS_PLAIN = 1 << 0,
} SerioSaveFlags;

#define SERIO_TYPE_BUNDLE (serio_bundle_get_type ())

SERIO_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SerioBundle, serio_bundle, SERIO, BUNDLE, GObject)

SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_new                  (void);
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_from_string          (const char           *text,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_from_bytes           (GBytes               *bytes,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
char         *serio_bundle_to_string            (SerioBundle          *self);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_bundle_to_bytes             (SerioBundle          *self);
SERIO_AVAILABLE_IN_ALL
GBytes       *serio_bundle_to_sealed_bytes      (SerioBundle          *self);

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
                                                 guint                 index);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_lookup               (SerioBundle          *self,
                                                 const char           *name,
                                                 guint                *index);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_equal                (SerioBundle          *a,
                                                 SerioBundle          *b);

SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_from_file            (GFile                *file,
                                                 GCancellable         *cancellable,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_from_file_async      (GFile                *file,
                                                 int                   io_priority,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
SerioBundle  *serio_bundle_from_file_finish     (GAsyncResult         *result,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_save_to_file         (SerioBundle          *self,
                                                 GFile                *file,
                                                 GCancellable         *cancellable,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_save_to_file_async   (SerioBundle          *self,
                                                 GFile                *file,
                                                 int                   io_priority,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_save_to_file_full    (SerioBundle          *self,
                                                 GFile                *file,
                                                 SerioSaveFlags        flags,
                                                 GCancellable         *cancellable,
                                                 GError              **error);
SERIO_AVAILABLE_IN_ALL
void          serio_bundle_save_to_file_full_async (SerioBundle       *self,
                                                 GFile                *file,
                                                 SerioSaveFlags        flags,
                                                 int                   io_priority,
                                                 GCancellable         *cancellable,
                                                 GAsyncReadyCallback   callback,
                                                 gpointer              user_data);
SERIO_AVAILABLE_IN_ALL
gboolean      serio_bundle_save_to_file_finish  (SerioBundle          *self,
                                                 GAsyncResult         *result,
                                                 GError              **error);

/* Shapes (serio-v1-files.md §3) */

/**
 * SERIO_SHAPE_MAX_DIMS:
 *
 * The most dimensions a shape may have: a name suffix with more is not a
 * shape suffix.
 */
#define SERIO_SHAPE_MAX_DIMS 32

SERIO_AVAILABLE_IN_ALL
guint64      *serio_bundle_get_shape            (SerioBundle          *self,
                                                 guint                 index,
                                                 guint                *n_dims);
SERIO_AVAILABLE_IN_ALL
char         *serio_bundle_get_base_name        (SerioBundle          *self,
                                                 guint                 index);
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
                                                 gsize                *n_values);

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
                                                 guint                 index);

G_END_DECLS
