/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-stream-utils.c: streams that misbehave on purpose
 *
 * Copyright 2026 The libserio authors
 */

#include <string.h>

#include "test-stream-utils.h"

#define TEST_TYPE_FAILING_OUTPUT_STREAM (test_failing_output_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestFailingOutputStream, test_failing_output_stream,
                      TEST, FAILING_OUTPUT_STREAM, GOutputStream)

struct _TestFailingOutputStream
{
  GOutputStream  parent_instance;
  gsize          left;
  GCancellable  *cancel;
};

G_DEFINE_FINAL_TYPE (TestFailingOutputStream, test_failing_output_stream, G_TYPE_OUTPUT_STREAM)

static gssize
failing_write (GOutputStream  *stream,
               const void     *buffer,
               gsize           count,
               GCancellable   *cancellable,
               GError        **error)
{
  TestFailingOutputStream *self = TEST_FAILING_OUTPUT_STREAM (stream);
  gsize n = MIN (count, self->left);

  if (n == 0)
    {
      if (self->cancel != NULL)
        {
          g_cancellable_cancel (self->cancel);
          g_cancellable_set_error_if_cancelled (self->cancel, error);
        }
      else
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "No space left (test)");
        }
      return -1;
    }

  self->left -= n;
  return n;
}

static void
test_failing_output_stream_finalize (GObject *object)
{
  g_clear_object (&TEST_FAILING_OUTPUT_STREAM (object)->cancel);
  G_OBJECT_CLASS (test_failing_output_stream_parent_class)->finalize (object);
}

static void
test_failing_output_stream_class_init (TestFailingOutputStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_failing_output_stream_finalize;
  G_OUTPUT_STREAM_CLASS (klass)->write_fn = failing_write;
}

static void
test_failing_output_stream_init (TestFailingOutputStream *self)
{
}

GOutputStream *
test_failing_output_stream_new (gsize         limit,
                                GCancellable *cancel)
{
  TestFailingOutputStream *self = g_object_new (TEST_TYPE_FAILING_OUTPUT_STREAM, NULL);

  self->left = limit;
  self->cancel = cancel != NULL ? g_object_ref (cancel) : NULL;
  return G_OUTPUT_STREAM (self);
}

#define TEST_TYPE_CHUNKED_INPUT_STREAM (test_chunked_input_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestChunkedInputStream, test_chunked_input_stream,
                      TEST, CHUNKED_INPUT_STREAM, GInputStream)

struct _TestChunkedInputStream
{
  GInputStream  parent_instance;
  GBytes       *bytes;
  gsize         pos;
  gssize        max_chunk;
};

G_DEFINE_FINAL_TYPE (TestChunkedInputStream, test_chunked_input_stream, G_TYPE_INPUT_STREAM)

static gssize
chunked_read (GInputStream  *stream,
              void          *buffer,
              gsize          count,
              GCancellable  *cancellable,
              GError       **error)
{
  TestChunkedInputStream *self = TEST_CHUNKED_INPUT_STREAM (stream);
  gsize size;
  const char *data = g_bytes_get_data (self->bytes, &size);
  gsize chunk = self->max_chunk > 0 ? (gsize) self->max_chunk :
                (gsize) g_test_rand_int_range (1, (gint32) (1 - self->max_chunk));
  gsize n = MIN (MIN (count, chunk), size - self->pos);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return -1;

  if (n > 0)
    memcpy (buffer, data + self->pos, n);
  self->pos += n;
  return n;
}

static void
test_chunked_input_stream_finalize (GObject *object)
{
  g_clear_pointer (&TEST_CHUNKED_INPUT_STREAM (object)->bytes, g_bytes_unref);
  G_OBJECT_CLASS (test_chunked_input_stream_parent_class)->finalize (object);
}

static void
test_chunked_input_stream_class_init (TestChunkedInputStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_chunked_input_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = chunked_read;
}

static void
test_chunked_input_stream_init (TestChunkedInputStream *self)
{
}

GInputStream *
test_chunked_input_stream_new (GBytes *bytes,
                               gssize  max_chunk)
{
  TestChunkedInputStream *self = g_object_new (TEST_TYPE_CHUNKED_INPUT_STREAM, NULL);

  g_assert (max_chunk != 0 && max_chunk != -1 ? TRUE : max_chunk == 1);
  self->bytes = g_bytes_ref (bytes);
  self->max_chunk = max_chunk;
  return G_INPUT_STREAM (self);
}

#define TEST_TYPE_FAILING_INPUT_STREAM (test_failing_input_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestFailingInputStream, test_failing_input_stream,
                      TEST, FAILING_INPUT_STREAM, GMemoryInputStream)

struct _TestFailingInputStream
{
  GMemoryInputStream  parent_instance;
  gsize               done;
  gsize               fail_at;
  gboolean            failed;
  GCancellable       *cancel;
};

G_DEFINE_FINAL_TYPE (TestFailingInputStream, test_failing_input_stream,
                     G_TYPE_MEMORY_INPUT_STREAM)

static gssize
failing_read (GInputStream  *stream,
              void          *buffer,
              gsize          count,
              GCancellable  *cancellable,
              GError       **error)
{
  TestFailingInputStream *self = TEST_FAILING_INPUT_STREAM (stream);
  gssize n;

  if (!self->failed && self->done + count > self->fail_at)
    {
      self->failed = TRUE;
      if (self->cancel != NULL)
        {
          g_cancellable_cancel (self->cancel);
          g_cancellable_set_error_if_cancelled (self->cancel, error);
        }
      else
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Read failed (test)");
        }
      return -1;
    }

  n = G_INPUT_STREAM_CLASS (test_failing_input_stream_parent_class)->read_fn (stream, buffer, count,
                                                                              cancellable, error);
  if (n > 0)
    self->done += n;
  return n;
}

static void
test_failing_input_stream_finalize (GObject *object)
{
  g_clear_object (&TEST_FAILING_INPUT_STREAM (object)->cancel);
  G_OBJECT_CLASS (test_failing_input_stream_parent_class)->finalize (object);
}

static void
test_failing_input_stream_class_init (TestFailingInputStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_failing_input_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = failing_read;
}

static void
test_failing_input_stream_init (TestFailingInputStream *self G_GNUC_UNUSED)
{
}

GInputStream *
test_failing_input_stream_new (GBytes       *bytes,
                               gsize         fail_at,
                               GCancellable *cancel)
{
  TestFailingInputStream *self = g_object_new (TEST_TYPE_FAILING_INPUT_STREAM, NULL);

  g_memory_input_stream_add_bytes (G_MEMORY_INPUT_STREAM (self), bytes);
  self->fail_at = fail_at;
  self->cancel = cancel != NULL ? g_object_ref (cancel) : NULL;
  return G_INPUT_STREAM (self);
}

void
test_store_result (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}
