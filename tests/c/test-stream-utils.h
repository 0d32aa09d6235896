/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-stream-utils.h: streams that misbehave on purpose, for the writer
 * and reader tests
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* An output stream that accepts @limit bytes, then fails: with
 * G_IO_ERROR_NO_SPACE, or, if @cancel is given, by cancelling it and
 * failing with G_IO_ERROR_CANCELLED, as if the user cancelled mid-write. */
GOutputStream *test_failing_output_stream_new (gsize          limit,
                                               GCancellable  *cancel);

/* An input stream over @bytes that hands out at most @max_chunk bytes per
 * read, or a random number from 1 to -@max_chunk when it is negative. */
GInputStream  *test_chunked_input_stream_new  (GBytes        *bytes,
                                               gssize         max_chunk);

/* A seekable input stream over @bytes, as a file's is, whose read that
 * would go past @fail_at bytes fails once, taking nothing: with
 * G_IO_ERROR_FAILED, or, if @cancel is given, by cancelling it and
 * failing with G_IO_ERROR_CANCELLED. Every read after it succeeds, so
 * that a reader that drops the error reads the whole text. */
GInputStream  *test_failing_input_stream_new  (GBytes        *bytes,
                                               gsize          fail_at,
                                               GCancellable  *cancel);
/* A GAsyncReadyCallback that keeps a reference to @result in the
 * GAsyncResult * at @user_data. */
void           test_store_result              (GObject       *source,
                                               GAsyncResult  *result,
                                               gpointer       user_data);

G_END_DECLS
