/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-flags.h: flags and callbacks shared by bundles, streams and files
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib.h>

#include "serio-version-macros.h"

G_BEGIN_DECLS

/**
 * SerioSaveFlags:
 * @SERIO_SAVE_FLAGS_NONE: the default: write a sealed text, which every
 *   reader of this library verifies
 * @SERIO_SAVE_FLAGS_PLAIN: write plain v1 text without a seal; damage that
 *   leaves valid v1 (a changed digit, a lost line) then goes unnoticed
 *
 * How text is written. One rule holds for every way of writing text:
 * the text is sealed unless %SERIO_SAVE_FLAGS_PLAIN is given, whether it
 * goes to memory ([method@Serio.Bundle.to_bytes],
 * [method@Serio.Bundle.to_string]), to a stream
 * ([method@Serio.Bundle.write_to_stream], [ctor@Serio.Writer.new]) or to
 * a file ([method@Serio.Bundle.save_to_file],
 * [ctor@Serio.Writer.new_for_file]). See the “Sealed texts” section of
 * [the format](format.html).
 */
typedef enum /*< flags >*/
{
  SERIO_SAVE_FLAGS_NONE  = 0,
  SERIO_SAVE_FLAGS_PLAIN = 1 << 0,
} SerioSaveFlags;

/**
 * SerioProgressCallback:
 * @done: how far the work is, in the unit of the call that reports it
 *   (bytes of text read for a load, bytes of values written for a save)
 * @total: where @done will end, or 0 when that is not known
 * @user_data: (closure): the data given with the callback
 *
 * Tells an application how far a long load or save is, as
 * #GFileProgressCallback does for g_file_copy(): for a progress bar
 * (@done / @total) without polling.
 *
 * The values of @done never decrease. When the work succeeds, the last
 * call has @done equal to @total (when @total is known); a failed or
 * cancelled work stops calling back where it stopped. The asynchronous
 * calls invoke it in the thread-default main context of the thread that
 * started them, like g_file_copy_async(), and never after their
 * #GAsyncReadyCallback; the synchronous ones in the calling thread.
 */
typedef void (*SerioProgressCallback) (guint64  done,
                                       guint64  total,
                                       gpointer user_data);

G_END_DECLS
