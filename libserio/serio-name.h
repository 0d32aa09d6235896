/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-name.h: stored names of arrays, with their type and shape
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include "serio-dtype.h"

G_BEGIN_DECLS

/**
 * SERIO_SHAPE_MAX_DIMS:
 *
 * The most dimensions a shape may have: a name suffix with more is not a
 * shape suffix.
 */
#define SERIO_SHAPE_MAX_DIMS 32

SERIO_AVAILABLE_IN_ALL
gboolean    serio_name_is_metadata  (const char    *name);
SERIO_AVAILABLE_IN_ALL
char       *serio_name_compose      (const char    *base_name,
                                     SerioDtype     dtype,
                                     const guint64 *shape,
                                     guint          n_dims) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
