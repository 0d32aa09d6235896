/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-name-private.h: array names: the type marker, the shape suffix and
 * the reserved names (serio-v1-files.md §3; private, not installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

#include "serio-dtype.h"
#include "serio-name.h"

G_BEGIN_DECLS

/* Every name that starts so is reserved for metadata records
 * (serio_name_is_metadata()), the two of a seal among them. */
#define SERIO_RESERVED_PREFIX  "serio."
#define SERIO_SEAL_OPEN_NAME   SERIO_RESERVED_PREFIX "sealed"
#define SERIO_SEAL_CLOSE_NAME  SERIO_RESERVED_PREFIX "seal"

/* The names a record of a seal has, which no array may have. */
typedef enum
{
  SERIO_NAME_ARRAY,
  SERIO_NAME_SEAL_OPEN,
  SERIO_NAME_SEAL_CLOSE,
} SerioNameKind;

SerioNameKind _serio_seal_name_kind  (const char    *name,
                                      gsize          name_len);

gboolean   _serio_name_parse       (const char    *name,
                                    gsize          len,
                                    guint64        n_values,
                                    gsize         *base_len,
                                    SerioDtype    *dtype,
                                    guint64       *dims,
                                    guint         *n_dims);
gboolean   _serio_name_parse_if_typed (const char *name,
                                       gsize       len,
                                       guint64     n_values,
                                       gsize      *base_len,
                                       SerioDtype *dtype,
                                       guint64    *dims,
                                       guint      *n_dims);
SerioDtype _serio_name_get_dtype   (const char    *name,
                                    gsize          len,
                                    guint64        n_values);
gboolean  _serio_shape_parse       (const char    *name,
                                    guint64        n_values,
                                    gsize         *base_len,
                                    guint64       *dims,
                                    guint         *n_dims);
gboolean  _serio_shape_count       (const guint64 *dims,
                                    guint          n_dims,
                                    guint64       *count);
char     *_serio_shape_format_name (const char    *base_name,
                                    const guint64 *dims,
                                    guint          n_dims);

/* The stored name of an array of @dtype and shape, with its number of
 * values; %NULL with a %G_IO_ERROR_INVALID_ARGUMENT error when the shape
 * has too many values or the name would not read back as @dtype. */
char      *_serio_typed_name        (const char    *base_name,
                                     SerioDtype     dtype,
                                     const guint64 *shape,
                                     guint          n_dims,
                                     guint64       *n_values,
                                     GError       **error);

G_END_DECLS
