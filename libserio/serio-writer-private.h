/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-writer-private.h: what the bundle needs of the writer (private,
 * not installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include "serio-writer.h"

G_BEGIN_DECLS

/* Leaves the stream alone when the writer goes away unfinished: for a
 * caller's stream, which the caller closes. */
void         _serio_writer_keep_stream_open (SerioWriter    *self);

/* serio_writer_write_array() of an array of a bundle, without the checks
 * of what a bundle always holds: a valid name that is not a seal's, and
 * values of its type. */
gboolean     _serio_writer_write_bundle_array (SerioWriter    *self,
                                               const char     *name,
                                               const double   *values,
                                               gsize           n_values,
                                               GCancellable   *cancellable,
                                               GError        **error);

/* A writer whose text stays in memory, for serio_bundle_to_bytes() and
 * serio_bundle_to_string(): the writer's buffer grows instead of being
 * written out, so the text is made where it ends up. @size_hint, when
 * not 0, is a bound on the size of the text, which the buffer then has
 * from the start. */
SerioWriter *_serio_writer_new_in_memory    (SerioSaveFlags  flags,
                                             gsize           size_hint);

/* Takes the text of an in-memory writer that serio_writer_end() ended:
 * NUL-terminated, @len bytes without the NUL, to free with g_free(). The
 * writer is closed afterwards. */
char        *_serio_writer_steal_text       (SerioWriter    *self,
                                             gsize          *len);

G_END_DECLS
