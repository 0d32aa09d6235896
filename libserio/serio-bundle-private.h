/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle-private.h: what loads and saves need of the bundle
 * (private, not installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include "serio-bundle.h"

G_BEGIN_DECLS

/* Appends an array read from a text to a bundle being loaded: the name is
 * valid, the values canonical and in @owner (shared, referenced). */
void         _serio_bundle_add_read_array   (SerioBundle   *self,
                                             const char    *name,
                                             const double  *values,
                                             gsize          n_values,
                                             GBytes        *owner);

/* The values, name and number of values of the array at @index, which
 * is below the number of arrays: serio_bundle_get_values() and
 * serio_bundle_get_name() without their checks, for every array of a
 * save. @name may be %NULL. */
const double *_serio_bundle_peek            (SerioBundle   *self,
                                             guint          index,
                                             const char   **name,
                                             gsize         *n_values);

/* A bundle sharing @self's values, which never change, so that a write
 * in another thread sees the bundle as it was when the write started. */
SerioBundle *_serio_bundle_snapshot         (SerioBundle   *self);

G_END_DECLS
