/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-shape-private.h: the shape suffix of array names (serio-v1-files.md §3)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

#include "serio-dtype.h"

G_BEGIN_DECLS

/* The most dimensions a shape suffix may list; serio-bundle.h has the
 * public copy. */
#ifndef SERIO_SHAPE_MAX_DIMS
# define SERIO_SHAPE_MAX_DIMS 32
#endif

gboolean   _serio_name_parse       (const char    *name,
                                    gsize          len,
                                    guint64        n_values,
                                    gsize         *base_len,
                                    SerioDtype    *dtype,
                                    guint64       *dims,
                                    guint         *n_dims);
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

G_END_DECLS
