/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle-stream.c: bundles read from and written to GIO streams
 *
 * Copyright 2026 The libserio authors
 *
 * Built on SerioReader and SerioWriter, so that neither direction holds
 * the text: a bundle loads with memory for its values (and the reader's
 * buffer), and writes with a bounded buffer.
 */

#include "config.h"

#include "serio-bundle-stream.h"
#include "serio-codec-private.h"
#include "serio-memory-private.h"
#include "serio-stream-private.h"
#include "serio-task-private.h"

/* Short arrays are packed into shared blocks of this many values, so that
 * a text of many tiny records does not cost an allocation each. */
#define SLAB_VALUES      8192
#define SLAB_RECORD_MAX  (SLAB_VALUES / 4)
/* The first room for a long array whose count cannot be trusted: it then
 * grows with the values that really come. */
#define FIRST_ROOM       (1024 * 1024)

typedef struct
{
  GBytes *bytes;            /* owns the slab */
  double *values;
  gsize   used;
} Slab;

/* Reads the values of the reader's current array, @n_values of them as
 * its record says. */
static GBytes *
read_long_array (SerioReader   *reader,
                 guint64        n_values,
                 guint64        size_bound,
                 GCancellable  *cancellable,
                 GError       **error)
{
  g_autofree double *values = NULL;
  double *grown;
  gsize room, got = 0;

  if (n_values > G_MAXSIZE / sizeof (double))
    room = FIRST_ROOM;
  else if (size_bound > 0 && n_values <= size_bound / 2 + 1)
    room = n_values;      /* n values take at least 2n - 1 bytes of text */
  else
    room = MIN (n_values, FIRST_ROOM);

  /* A count the file can hold may still be more than the memory can:
   * then the room grows with the values that really come. */
  values = _serio_try_alloc_large (room * sizeof (double));
  if (values == NULL)
    {
      room = MIN (room, FIRST_ROOM);
      values = _serio_alloc_large (room * sizeof (double));
    }

  for (;;)
    {
      gsize n;

      if (!serio_reader_read_values (reader, values + got, room - got, &n, cancellable, error))
        return NULL;
      got += n;
      if (n == 0 || got == n_values)
        break;
      if (got == room)
        {
          room = room > (G_MAXSIZE / sizeof (double)) / 2 ? G_MAXSIZE / sizeof (double) : room * 2;
          room = (guint64) room > n_values ? n_values : room;
          grown = g_try_realloc (values, room * sizeof (double));
          if (grown == NULL)
            {
              _serio_codec_set_memory_error (error, _serio_reader_get_line (reader), n_values);
              return NULL;
            }
          values = grown;
        }
    }

  /* A reader that did not fail gave exactly the declared count. */
  g_assert (got == n_values);
  if (got < room)
    values = g_realloc (values, got * sizeof (double));

  return g_bytes_new_take (g_steal_pointer (&values), got * sizeof (double));
}

/* Reads the values of a short array into the current slab, or a new one. */
static const double *
read_short_array (SerioReader   *reader,
                  gsize          n_values,
                  Slab          *slab,
                  GCancellable  *cancellable,
                  GError       **error)
{
  gsize got;

  if (slab->bytes == NULL || SLAB_VALUES - slab->used < n_values)
    {
      g_clear_pointer (&slab->bytes, g_bytes_unref);
      slab->values = g_new (double, SLAB_VALUES);
      slab->bytes = g_bytes_new_take (slab->values, SLAB_VALUES * sizeof (double));
      slab->used = 0;
    }

  if (!serio_reader_read_values (reader, slab->values + slab->used, n_values, &got,
                                 cancellable, error))
    return NULL;
  g_assert (got == n_values);

  slab->used += n_values;
  return slab->values + slab->used - n_values;
}

SerioBundle *
_serio_bundle_load (SerioReader   *reader,
                    GCancellable  *cancellable,
                    GError       **error)
{
  /* A file's size bounds the values any array can have, so that an array
   * gets its room at once rather than growing into it. */
  guint64 size_bound = serio_reader_get_size (reader);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  Slab slab = { NULL, NULL, 0 };
  GError *local_error = NULL;

  while (serio_reader_next (reader, cancellable, &local_error))
    {
      guint64 n_values = serio_reader_get_n_values (reader);
      const char *name = serio_reader_get_name (reader);

      /* Parsed values are canonical: the bundle keeps them as they are. */
      if (n_values == 0)
        {
          gsize got;

          /* reading nothing checks that the record ends there */
          if (!serio_reader_read_values (reader, NULL, 0, &got, cancellable, &local_error))
            break;
          _serio_bundle_add_read_array (bundle, name, NULL, 0, NULL);
        }
      else if (n_values <= SLAB_RECORD_MAX)
        {
          const double *values = read_short_array (reader, n_values, &slab, cancellable, &local_error);

          if (values == NULL)
            break;
          _serio_bundle_add_read_array (bundle, name, values, n_values, slab.bytes);
        }
      else
        {
          g_autoptr(GBytes) values = read_long_array (reader, n_values, size_bound, cancellable, &local_error);

          if (values == NULL)
            break;
          _serio_bundle_add_read_array (bundle, name, g_bytes_get_data (values, NULL), n_values, values);
        }
    }

  g_clear_pointer (&slab.bytes, g_bytes_unref);

  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  return g_steal_pointer (&bundle);
}

/**
 * serio_bundle_new_from_stream: (constructor)
 * @stream: the stream to read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads v1 text (sealed or plain) from @stream up to its end and parses it
 * into a new bundle, with the rules and errors of
 * [ctor@Serio.Bundle.new_from_bytes]; a sealed text is verified.
 *
 * The text is read through a [class@Serio.Reader], so that loading needs
 * memory for the values, not for the text. The stream is not closed.
 * Failing to read gives the stream's error (a %G_IO_ERROR); bad contents
 * give a [error@Serio.Error]. This blocks: see
 * [func@Serio.Bundle.new_from_stream_async].
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_stream (GInputStream  *stream,
                              GCancellable  *cancellable,
                              GError       **error)
{
  g_autoptr(SerioReader) reader = NULL;

  g_return_val_if_fail (G_IS_INPUT_STREAM (stream), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  reader = serio_reader_new (stream);

  return _serio_bundle_load (reader, cancellable, error);
}

/**
 * serio_bundle_new_from_reader: (constructor)
 * @reader: a reader
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the arrays of @reader that follow the current one (all of them
 * for a new reader) to the end of its text into a new bundle, as
 * [ctor@Serio.Bundle.new_from_stream] reads a stream.
 *
 * This is the load for a reader set up beforehand: one from
 * [ctor@Serio.Reader.new_for_file], one with a progress callback
 * ([method@Serio.Reader.set_progress_callback]), or one whose failure is
 * to be located afterwards with [method@Serio.Reader.get_error_line] and
 * [method@Serio.Reader.get_error_value_index], as bindings that lose a
 * #GError's location do (PyGObject). The reader is at its end afterwards;
 * its stream is not closed.
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_reader (SerioReader   *reader,
                              GCancellable  *cancellable,
                              GError       **error)
{
  g_return_val_if_fail (SERIO_IS_READER (reader), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return _serio_bundle_load (reader, cancellable, error);
}

static void
new_from_stream_thread (GTask        *task,
                        gpointer      source_object,
                        gpointer      task_data,
                        GCancellable *cancellable)
{
  GError *error = NULL;
  SerioBundle *bundle = serio_bundle_new_from_stream (task_data, cancellable, &error);

  if (bundle == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, bundle, g_object_unref);
}

/**
 * serio_bundle_new_from_stream_async:
 * @stream: the stream to read
 * @io_priority: the I/O priority of the request, such as
 *   %G_PRIORITY_DEFAULT
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the bundle is ready
 * @user_data: the data to pass to @callback
 *
 * Reads and parses @stream in a worker thread, like
 * [ctor@Serio.Bundle.new_from_stream], without blocking the main loop.
 * Do not use @stream until @callback runs. Call
 * [ctor@Serio.Bundle.new_from_stream_finish] from @callback for the
 * result.
 */
void
serio_bundle_new_from_stream_async (GInputStream        *stream,
                                    int                  io_priority,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (G_IS_INPUT_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, serio_bundle_new_from_stream_async);
  g_task_set_priority (task, io_priority);
  g_task_set_task_data (task, g_object_ref (stream), g_object_unref);
  _serio_task_run_in_thread (task, new_from_stream_thread);
}

/**
 * serio_bundle_new_from_stream_finish:
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes [func@Serio.Bundle.new_from_stream_async].
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_stream_finish (GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == serio_bundle_new_from_stream_async, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * serio_bundle_write_to_stream:
 * @self: a #SerioBundle
 * @stream: the stream to write to
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, or
 *   %SERIO_SAVE_FLAGS_PLAIN for plain v1
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Writes the text of the bundle to @stream through a
 * [class@Serio.Writer]: exactly what [method@Serio.Bundle.to_bytes] gives
 * with the same @flags, sealed unless they hold %SERIO_SAVE_FLAGS_PLAIN.
 * The text is never held in memory whole: it goes out through a buffer of
 * a few megabytes at most.
 *
 * The stream is flushed, not closed, so that more may follow the text.
 * If writing fails, what the stream received is an incomplete text, which
 * every reader rejects. This blocks: see
 * [method@Serio.Bundle.write_to_stream_async].
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_bundle_write_to_stream (SerioBundle     *self,
                              GOutputStream   *stream,
                              SerioSaveFlags   flags,
                              GCancellable    *cancellable,
                              GError         **error)
{
  g_autoptr(SerioWriter) writer = NULL;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (G_IS_OUTPUT_STREAM (stream), FALSE);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  writer = serio_writer_new (stream, flags);
  _serio_writer_keep_stream_open (writer);

  return _serio_bundle_write (self, writer, cancellable, NULL, NULL, error);
}

/* Values go to the writer this many at a time, so that a save of one
 * large array reports its progress: 8 MiB of values, which the writer
 * still formats with all its threads. */
#define PROGRESS_VALUES (1024 * 1024)

gboolean
_serio_bundle_write (SerioBundle           *self,
                     SerioWriter           *writer,
                     GCancellable          *cancellable,
                     SerioProgressCallback  progress,
                     gpointer               progress_data,
                     GError               **error)
{
  guint n_arrays = serio_bundle_get_n_arrays (self);
  guint64 total = 0, done = 0;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize n_values;

      (void) serio_bundle_get_values (self, i, &n_values);
      total += (guint64) n_values * sizeof (double);
    }

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize n_values;
      const double *values = serio_bundle_get_values (self, i, &n_values);
      const char *name = serio_bundle_get_name (self, i);

      if (progress == NULL || n_values <= PROGRESS_VALUES)
        {
          if (!serio_writer_write_array (writer, name, values, n_values, cancellable, error))
            return FALSE;
        }
      else
        {
          if (!serio_writer_begin_array (writer, name, n_values, cancellable, error))
            return FALSE;
          for (gsize at = 0; at < n_values; at += PROGRESS_VALUES)
            {
              gsize n = MIN (PROGRESS_VALUES, n_values - at);

              if (!serio_writer_add_values (writer, values + at, n, cancellable, error))
                return FALSE;
              if (at + n < n_values)
                progress (done + (guint64) (at + n) * sizeof (double), total, progress_data);
            }
        }
      done += (guint64) n_values * sizeof (double);
      if (progress != NULL && n_values > 0)
        progress (done, total, progress_data);
    }

  if (!serio_writer_end (writer, cancellable, error))
    return FALSE;
  if (progress != NULL && total == 0)
    progress (0, 0, progress_data);

  return TRUE;
}

typedef struct
{
  SerioBundle    *snapshot;
  GOutputStream  *stream;
  SerioSaveFlags  flags;
} WriteData;

static void
write_data_free (gpointer data)
{
  WriteData *write = data;

  g_clear_object (&write->snapshot);
  g_clear_object (&write->stream);
  g_free (write);
}

static void
write_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  WriteData *write = task_data;
  GError *error = NULL;

  if (serio_bundle_write_to_stream (write->snapshot, write->stream, write->flags, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * serio_bundle_write_to_stream_async:
 * @self: a #SerioBundle
 * @stream: the stream to write to
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, or
 *   %SERIO_SAVE_FLAGS_PLAIN for plain v1
 * @io_priority: the I/O priority of the request, such as
 *   %G_PRIORITY_DEFAULT
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the text is written
 * @user_data: the data to pass to @callback
 *
 * Writes the bundle like [method@Serio.Bundle.write_to_stream] in a worker
 * thread, so that the main loop does not block. The bundle is written as
 * it is when this is called. Do not use @stream until @callback runs; call
 * [method@Serio.Bundle.write_to_stream_finish] from it for the result.
 */
void
serio_bundle_write_to_stream_async (SerioBundle         *self,
                                    GOutputStream       *stream,
                                    SerioSaveFlags       flags,
                                    int                  io_priority,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  WriteData *write;

  g_return_if_fail (SERIO_IS_BUNDLE (self));
  g_return_if_fail (G_IS_OUTPUT_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  write = g_new0 (WriteData, 1);
  write->snapshot = _serio_bundle_snapshot (self);
  write->stream = g_object_ref (stream);
  write->flags = flags;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, serio_bundle_write_to_stream_async);
  g_task_set_priority (task, io_priority);
  g_task_set_task_data (task, write, write_data_free);
  _serio_task_run_in_thread (task, write_thread);
}

/**
 * serio_bundle_write_to_stream_finish:
 * @self: a #SerioBundle
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@Serio.Bundle.write_to_stream_async].
 *
 * Returns: %TRUE if the text was written, %FALSE with @error set
 */
gboolean
serio_bundle_write_to_stream_finish (SerioBundle   *self,
                                     GAsyncResult  *result,
                                     GError       **error)
{
  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == serio_bundle_write_to_stream_async, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
