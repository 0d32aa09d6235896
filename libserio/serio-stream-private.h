/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-stream-private.h: what the bundle needs of the writer and reader
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include "serio-bundle.h"
#include "serio-reader.h"
#include "serio-workers-private.h"
#include "serio-writer.h"

G_BEGIN_DECLS

/* Leaves the stream alone when the writer goes away unfinished: for a
 * caller's stream, which the caller closes. */
void         _serio_writer_keep_stream_open (SerioWriter   *self);

/* The line the reader is at: that of the current array while its values
 * are read. */
gulong       _serio_reader_get_line         (SerioReader   *self);

/* Appends an array read from a text to a bundle being loaded: the name is
 * valid, the values canonical and in @owner (shared, referenced). */
void         _serio_bundle_add_read_array   (SerioBundle   *self,
                                             const char    *name,
                                             const double  *values,
                                             gsize          n_values,
                                             GBytes        *owner);

/* Builds a bundle from what @reader reads; the reader's size, when
 * known, bounds what an array may need. */
SerioBundle *_serio_bundle_load             (SerioReader   *reader,
                                             GCancellable  *cancellable,
                                             GError       **error);

/* Writes the bundle through @writer and ends the text; @progress, when
 * not %NULL, is told the bytes of values written (8 a value) of all. */
gboolean     _serio_bundle_write            (SerioBundle           *self,
                                             SerioWriter           *writer,
                                             GCancellable          *cancellable,
                                             SerioProgressCallback  progress,
                                             gpointer               progress_data,
                                             GError               **error);

/* A bundle sharing @self's values, which never change, so that a write
 * in another thread sees the bundle as it was when the write started. */
SerioBundle *_serio_bundle_snapshot         (SerioBundle           *self);

G_END_DECLS
