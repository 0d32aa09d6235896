/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-reader-private.h: what loads need of the reader (private, not
 * installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include "serio-reader.h"

G_BEGIN_DECLS

/* The line the reader is at: that of the current array while its values
 * are read. */
gulong       _serio_reader_get_line         (SerioReader   *self);

/* Reads the @n_values values of the current array, which has exactly
 * that many, into @values, and ends its record: serio_reader_read_values()
 * until the array is read, with one parse of the line when it is in the
 * window whole, for a bundle's short arrays. */
gboolean     _serio_reader_read_array       (SerioReader   *self,
                                             double        *values,
                                             gsize          n_values,
                                             GCancellable  *cancellable,
                                             GError       **error);

G_END_DECLS
