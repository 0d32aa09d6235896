/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-bundle-io.c: bundles read from and written to memory, streams and
 * files
 *
 * Copyright 2026 The libserio authors
 *
 * Every load is a SerioReader's (over the bytes, the stream or the file)
 * and every save a SerioWriter's (into memory, a stream or a file being
 * replaced), so that each text is read and written by one piece of code
 * whatever it comes from or goes to: the same rules, errors, threads and
 * seals. The text is never held whole by a stream or a file: a bundle
 * loads with memory for its values (and the reader's buffer), and saves
 * with the writer's bounded buffer. This unit sits above the bundle
 * (serio-bundle.c, the container), the reader and the writer.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "serio-bundle.h"
#include "serio-bundle-private.h"
#include "serio-codec-private.h"
#include "serio-error.h"
#include "serio-memory-private.h"
#include "serio-reader-private.h"
#include "serio-task-private.h"
#include "serio-writer-private.h"

/* ------------------------------------------------------------------ */
/* Loading                                                            */
/* ------------------------------------------------------------------ */

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

  /* n values take at least 2n - 1 bytes of text: a text of known size
   * bounds the room, whatever its count says (a hostile count in a short
   * text costs no more than the text could hold). */
  if (size_bound > 0)
    room = (gsize) MIN (MIN (n_values, size_bound / 2 + 1), (guint64) (G_MAXSIZE / sizeof (double)));
  else
    room = (gsize) MIN (n_values, FIRST_ROOM);

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
  if (slab->bytes == NULL || SLAB_VALUES - slab->used < n_values)
    {
      g_clear_pointer (&slab->bytes, g_bytes_unref);
      slab->values = g_new (double, SLAB_VALUES);
      slab->bytes = g_bytes_new_take (slab->values, SLAB_VALUES * sizeof (double));
      slab->used = 0;
    }

  if (!_serio_reader_read_array (reader, slab->values + slab->used, n_values, cancellable, error))
    return NULL;

  slab->used += n_values;
  return slab->values + slab->used - n_values;
}

/* Builds a bundle from what @reader reads; the reader's size, when
 * known, bounds what an array may need. */
static SerioBundle *
load_bundle (SerioReader   *reader,
             GCancellable  *cancellable,
             GError       **error)
{
  /* The size of a file or of bytes bounds the values any array can
   * have, so that an array gets its room at once rather than growing
   * into it. */
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

/* The load of a text in memory: the reader parses it in place. */
static SerioBundle *
load_from_bytes (GBytes  *bytes,
                 GError **error)
{
  g_autoptr(SerioReader) reader = serio_reader_new_for_bytes (bytes);

  return load_bundle (reader, NULL, error);
}

/**
 * serio_bundle_new_from_string: (constructor)
 * @text: v1 text, as made by [method@Serio.Bundle.to_string]
 * @error: return location for a #GError
 *
 * Parses v1 text into a new bundle.
 *
 * The parser is strict: it accepts exactly the canonical text that
 * [method@Serio.Bundle.to_string] writes, except that lines may end in CR LF
 * and blank lines are skipped. Anything else (a truncated last line, an
 * unknown version, a malformed or non-canonical value, a count that differs
 * from the number of values, a value outside the range of a 64-bit float)
 * fails with a [error@Serio.Error] whose message names the line and, for a
 * value, its index and text. No partial bundle is ever returned.
 *
 * A sealed text (see [method@Serio.Bundle.to_bytes]) is verified
 * against its seal, which is not part of the bundle; damage that leaves
 * valid v1 fails with %SERIO_ERROR_INTEGRITY or %SERIO_ERROR_TRUNCATED.
 * Plain text cannot be verified and is read as it is.
 *
 * Use [ctor@Serio.Bundle.new_from_bytes] for data that is not NUL-terminated.
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_string (const char  *text,
                              GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  bytes = g_bytes_new_static (text, strlen (text));

  return load_from_bytes (bytes, error);
}

/**
 * serio_bundle_new_from_bytes: (constructor)
 * @bytes: v1 text; it needs no terminating NUL
 * @error: return location for a #GError
 *
 * Parses the v1 text in @bytes into a new bundle, with the same rules as
 * [ctor@Serio.Bundle.new_from_string]. A NUL byte anywhere in @bytes is a
 * %SERIO_ERROR_SYNTAX error.
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_bytes (GBytes  *bytes,
                             GError **error)
{
  g_return_val_if_fail (bytes != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return load_from_bytes (bytes, error);
}

/**
 * serio_bundle_new_from_file: (constructor)
 * @file: the file to read
 * @cancellable: (nullable): a #GCancellable
 * @progress_callback: (nullable) (scope call) (closure progress_callback_data):
 *   called as the file is read, or %NULL
 * @progress_callback_data: (nullable): the data to pass to @progress_callback
 * @error: return location for a #GError
 *
 * Reads @file and parses it like [ctor@Serio.Bundle.new_from_bytes]. The
 * file is read through a [class@Serio.Reader] (see
 * [ctor@Serio.Reader.new_for_file]), so that loading needs memory for the
 * values, not for the text.
 *
 * If @progress_callback is not %NULL, it is called in this thread after
 * each read of up to a megabyte, with `done` the bytes of the file read so
 * far and `total` the size of the file (0 if that is not known, as for a
 * pipe); a file read to its end reports `done` equal to `total` last.
 *
 * Failing to read the file gives a %G_IO_ERROR (such as
 * %G_IO_ERROR_NOT_FOUND or %G_IO_ERROR_IS_DIRECTORY); bad contents give a
 * [error@Serio.Error] whose message starts with the file's parse name
 * (`weights.serio: Line 4: …`) and which carries the location like the
 * errors of [ctor@Serio.Bundle.new_from_bytes]
 * ([func@Serio.Error.get_line]). This blocks: GUI applications should use
 * [func@Serio.Bundle.new_from_file_async].
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_file (GFile                  *file,
                            GCancellable           *cancellable,
                            SerioProgressCallback   progress_callback,
                            gpointer                progress_callback_data,
                            GError                **error)
{
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GError) local_error = NULL;
  SerioBundle *bundle;

  g_return_val_if_fail (G_IS_FILE (file), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  reader = serio_reader_new_for_file (file, cancellable, error);
  if (reader == NULL)
    return NULL;
  if (progress_callback != NULL)
    serio_reader_set_progress_callback (reader, progress_callback, progress_callback_data, NULL);

  bundle = load_bundle (reader, cancellable, &local_error);
  if (bundle == NULL)
    {
      if (local_error->domain == SERIO_ERROR)
        {
          g_autofree char *name = g_file_get_parse_name (file);

          /* TRANSLATORS: a file name, before an error message about its
           * contents */
          g_prefix_error (&local_error, _("%s: "), name);
        }
      g_propagate_error (error, g_steal_pointer (&local_error));
    }

  return bundle;
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

  return load_bundle (reader, cancellable, error);
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

  return load_bundle (reader, cancellable, error);
}

/* ------------------------------------------------------------------ */
/* Saving                                                             */
/* ------------------------------------------------------------------ */

/* Values go to the writer this many at a time, so that a save of one
 * large array reports its progress: 8 MiB of values, which the writer
 * still formats with all its threads. */
#define PROGRESS_VALUES (1024 * 1024)

/* Writes the bundle through @writer and ends the text; @progress, when
 * not %NULL, is told the bytes of values written (8 a value) of all. */
static gboolean
write_bundle (SerioBundle           *self,
              SerioWriter           *writer,
              GCancellable          *cancellable,
              SerioProgressCallback  progress,
              gpointer               progress_data,
              GError               **error)
{
  guint n_arrays = serio_bundle_get_n_arrays (self);
  guint64 total = 0, done = 0;

  for (guint i = 0; i < n_arrays && progress != NULL; i++)
    {
      gsize n_values;

      (void) _serio_bundle_peek (self, i, NULL, &n_values);
      total += (guint64) n_values * sizeof (double);
    }

  for (guint i = 0; i < n_arrays; i++)
    {
      const char *name;
      gsize n_values;
      const double *values = _serio_bundle_peek (self, i, &name, &n_values);

      if (progress == NULL || n_values <= PROGRESS_VALUES)
        {
          if (!_serio_writer_write_bundle_array (writer, name, values, n_values, cancellable, error))
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

/* The text of the bundle, made by a writer into memory: NUL-terminated,
 * @len bytes without the NUL. */
static char *
write_to_memory (SerioBundle    *self,
                 SerioSaveFlags  flags,
                 gsize          *len)
{
  g_autoptr(SerioWriter) writer = NULL;
  g_autoptr(GError) error = NULL;
  guint n_arrays = serio_bundle_get_n_arrays (self);
  gsize bound = 0;

  /* A bound on the size of the text, which the writer's buffer has from
   * the start, so that the text is never moved. */
  if ((flags & SERIO_SAVE_FLAGS_PLAIN) == 0)
    bound = strlen (SERIO_SEAL_OPEN_RECORD) + SERIO_SEAL_CLOSE_MAX;
  for (guint i = 0; i < n_arrays; i++)
    {
      const char *name;
      gsize n_values;

      (void) _serio_bundle_peek (self, i, &name, &n_values);
      if (!g_size_checked_add (&bound, bound, _serio_codec_record_bound (strlen (name), n_values)))
        {
          bound = 0;      /* the writer grows into it, or fails */
          break;
        }
    }

  writer = _serio_writer_new_in_memory (flags, bound);
  /* In memory, a bundle's arrays are always written: they hold what
   * their text can (the appends check it), and nothing can fail. */
  if (!write_bundle (self, writer, NULL, NULL, NULL, &error))
    g_error ("%s: %s", G_STRLOC, error->message);

  return _serio_writer_steal_text (writer, len);
}

/**
 * serio_bundle_to_string:
 * @self: a #SerioBundle
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, %SERIO_SAVE_FLAGS_PLAIN
 *   for plain v1
 *
 * Serialises the bundle to v1 text: one line per array, in order, each
 * ending in a line feed, with every value written as its one canonical
 * token, and sealed unless @flags holds %SERIO_SAVE_FLAGS_PLAIN, as
 * [method@Serio.Bundle.to_bytes] does. The empty bundle gives the empty
 * string as plain text.
 *
 * The output is deterministic (equal bundles give identical strings), does
 * not depend on the locale, and reads back with
 * [ctor@Serio.Bundle.new_from_string] into a bundle for which
 * [method@Serio.Bundle.equal] holds.
 *
 * Returns: (transfer full): the v1 text of the bundle
 */
char *
serio_bundle_to_string (SerioBundle    *self,
                        SerioSaveFlags  flags)
{
  gsize len;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);

  return write_to_memory (self, flags, &len);
}

/**
 * serio_bundle_to_bytes:
 * @self: a #SerioBundle
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, %SERIO_SAVE_FLAGS_PLAIN
 *   for plain v1
 *
 * Serialises the bundle into a #GBytes that holds the text without a
 * terminating NUL: ready to write to a stream or to checksum with
 * [func@Serio.compute_checksum_for_bytes].
 *
 * Like every call that writes text (see #SerioSaveFlags), it writes a
 * sealed text unless @flags holds %SERIO_SAVE_FLAGS_PLAIN: the v1 text of
 * the arrays between an opening record `v1|serio.sealed|1|1` and a closing
 * record `v1|serio.seal|3|…` that holds the number of records and an
 * XXH3-64 hash of every byte before it. A sealed text is still plain v1,
 * but every reader of this library verifies it: a changed digit, a lost,
 * doubled or reordered line, or a text cut short anywhere fails with
 * %SERIO_ERROR_INTEGRITY or %SERIO_ERROR_TRUNCATED instead of loading as
 * other values. Plain text (one line per array and nothing else) is for
 * readers that need it.
 *
 * [ctor@Serio.Bundle.new_from_bytes] reads either back into a bundle for
 * which [method@Serio.Bundle.equal] holds.
 *
 * Returns: (transfer full): the text of the bundle
 */
GBytes *
serio_bundle_to_bytes (SerioBundle    *self,
                       SerioSaveFlags  flags)
{
  gsize len;
  char *text;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), NULL);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, NULL);

  text = write_to_memory (self, flags, &len);

  return g_bytes_new_take (text, len);
}

/**
 * serio_bundle_save_to_file:
 * @self: a #SerioBundle
 * @file: the file to write
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, %SERIO_SAVE_FLAGS_PLAIN
 *   for plain v1
 * @cancellable: (nullable): a #GCancellable
 * @progress_callback: (nullable) (scope call) (closure progress_callback_data):
 *   called as the values are written, or %NULL
 * @progress_callback_data: (nullable): the data to pass to @progress_callback
 * @error: return location for a #GError
 *
 * Writes the bundle to @file, replacing it atomically.
 *
 * The file holds the text of [method@Serio.Bundle.to_bytes] with @flags:
 * unless @flags holds %SERIO_SAVE_FLAGS_PLAIN, a sealed text, v1 text
 * between two records that let every reader of this library verify it, so
 * that damage is reported instead of loading as other weights. The text is
 * written through a [class@Serio.Writer], a few megabytes at a time:
 * saving needs no memory for it, however large the bundle.
 *
 * The text goes to a temporary file in the directory of @file, which is
 * synced to disk and then renamed over @file (or linked in, for a new
 * file), after which the directory is synced. On Linux the kernel is asked
 * to start writing every 8 MiB to the disk as soon as it is written
 * (`sync_file_range()`), so that the disk works while the rest is
 * formatted and the final sync does not wait for the whole file; an I/O
 * error reported then fails the save like any other.
 *
 * If the save fails part-way (the disk is full, the operation is
 * cancelled) the temporary file is removed and @file stays byte for byte
 * as it was, or absent if it did not exist; if the program is killed
 * during the save, @file holds either the old or the new bundle, never a
 * mixture or a part. The function returns %TRUE exactly when the new
 * bundle is in place: a cancel that arrives after that is not reported.
 *
 * Saving over a regular file keeps its permissions, and its owner and
 * group where the process may set them (extended attributes and ACLs are
 * not copied). A symbolic link at @file is replaced by a regular file,
 * with the mode of a new file; the file it pointed to is not changed. A
 * file with other hard links is replaced under the name @file only: @file
 * becomes a new file with the new bundle, and the other names keep the old
 * contents.
 *
 * On Linux the temporary file has no name (`O_TMPFILE`) until it is put in
 * place, so a killed save leaves nothing behind (except in the two system
 * calls that link and rename it over an existing file). Where that is not
 * supported, it is named `.serio-save-` and eight hexadecimal digits, and a
 * killed save can leave it behind: such files hold no useful data and can
 * be removed when no save is running.
 *
 * Errors are in the %G_IO_ERROR domain and their message names @file,
 * never the temporary file.
 *
 * If @progress_callback is not %NULL, it is called in this thread as the
 * values are written, with `done` the bytes of values written so far (8 a
 * value, a few megabytes at a time) and `total` those of the whole bundle;
 * the last call, once every value is written and before the file is put
 * in place, has `done` equal to `total`. The size of the text is not known
 * before it is written, which is why the values are what is counted.
 *
 * This blocks: GUI applications should use
 * [method@Serio.Bundle.save_to_file_async].
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
serio_bundle_save_to_file (SerioBundle            *self,
                           GFile                  *file,
                           SerioSaveFlags          flags,
                           GCancellable           *cancellable,
                           SerioProgressCallback   progress_callback,
                           gpointer                progress_callback_data,
                           GError                **error)
{
  g_autoptr(SerioWriter) writer = NULL;

  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_return_val_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* The text goes through a SerioWriter's bounded buffer: the save needs
   * no memory for the text, whatever the size of the bundle. Closing the
   * writer puts the file in place; a writer freed before, when a write
   * fails, removes the temporary file. */
  writer = serio_writer_new_for_file (file, flags, cancellable, error);

  return writer != NULL &&
         write_bundle (self, writer, cancellable, progress_callback, progress_callback_data, error) &&
         serio_writer_close (writer, cancellable, error);
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

  return write_bundle (self, writer, cancellable, NULL, NULL, error);
}

/* ------------------------------------------------------------------ */
/* Asynchronous calls                                                 */
/* ------------------------------------------------------------------ */

/* What an asynchronous load or save works on: a file or a stream, and
 * for a save the bundle as it was when the save was asked for. */
typedef struct
{
  GFile              *file;
  GInputStream       *input;
  GOutputStream      *output;
  SerioBundle        *snapshot;     /* a save's */
  SerioSaveFlags      flags;
  SerioProgressRelay *progress;
} IoData;

static void
io_data_free (gpointer data)
{
  IoData *io = data;

  g_clear_object (&io->file);
  g_clear_object (&io->input);
  g_clear_object (&io->output);
  g_clear_object (&io->snapshot);
  g_clear_pointer (&io->progress, _serio_progress_relay_unref);
  g_free (io);
}

/* The call, in a thread of libserio's own (see serio-task-private.h),
 * reporting progress in the caller's context. */
static void
io_thread (GTask        *task,
           gpointer      source_object,
           gpointer      task_data,
           GCancellable *cancellable)
{
  IoData *io = task_data;
  SerioProgressCallback progress = io->progress != NULL ? _serio_progress_relay_report : NULL;
  GError *error = NULL;

  if (io->snapshot == NULL)
    {
      SerioBundle *bundle = io->file != NULL ?
        serio_bundle_new_from_file (io->file, cancellable, progress, io->progress, &error) :
        serio_bundle_new_from_stream (io->input, cancellable, &error);

      if (bundle == NULL)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, bundle, g_object_unref);
    }
  else
    {
      gboolean saved = io->file != NULL ?
        serio_bundle_save_to_file (io->snapshot, io->file, io->flags, cancellable,
                                   progress, io->progress, &error) :
        serio_bundle_write_to_stream (io->snapshot, io->output, io->flags, cancellable, &error);

      if (saved)
        g_task_return_boolean (task, TRUE);
      else
        g_task_return_error (task, error);
    }
}

/* Starts an asynchronous call on @io (taken) for @self (the bundle saved,
 * or %NULL for a load). */
static void
io_start (SerioBundle           *self,
          gpointer               source_tag,
          IoData                *io,
          int                    io_priority,
          GCancellable          *cancellable,
          SerioProgressCallback  progress_callback,
          gpointer               progress_callback_data,
          GDestroyNotify         progress_callback_notify,
          GAsyncReadyCallback    callback,
          gpointer               user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_priority (task, io_priority);
  io->progress = _serio_progress_relay_new (task, progress_callback, progress_callback_data,
                                            progress_callback_notify);
  if (self != NULL)
    {
      io->snapshot = _serio_bundle_snapshot (self);
      /* A save reports what happened to its target: a cancel that comes
       * after the text is in place must not turn it into a failure. */
      g_task_set_check_cancellable (task, FALSE);
    }
  g_task_set_task_data (task, io, io_data_free);
  _serio_task_run_in_thread (task, io_thread);
}

/* The results, checked against the call that @result is of. */
static SerioBundle *
load_finish (GAsyncResult  *result,
             gpointer       source_tag,
             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gboolean
save_finish (SerioBundle   *self,
             GAsyncResult  *result,
             gpointer       source_tag,
             GError       **error)
{
  g_return_val_if_fail (SERIO_IS_BUNDLE (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * serio_bundle_new_from_file_async:
 * @file: the file to read
 * @io_priority: the I/O priority of the request, such as
 *   %G_PRIORITY_DEFAULT
 * @cancellable: (nullable): a #GCancellable
 * @progress_callback: (nullable) (scope notified) (closure progress_callback_data)
 *   (destroy progress_callback_notify): called as the file is read, or %NULL
 * @progress_callback_data: (nullable): the data to pass to @progress_callback
 * @progress_callback_notify: (nullable): frees @progress_callback_data
 *   once the call no longer needs it
 * @callback: (scope async): called when the bundle is ready
 * @user_data: the data to pass to @callback
 *
 * Reads and parses @file in a worker thread, like
 * [ctor@Serio.Bundle.new_from_file], without blocking the main loop. Call
 * [ctor@Serio.Bundle.new_from_file_finish] from @callback for the result.
 *
 * @progress_callback, when not %NULL, is called as for
 * [ctor@Serio.Bundle.new_from_file], but in the thread-default main
 * context of the thread that called this function, like the progress
 * callback of [method@Gio.File.copy_async], and every call comes before
 * @callback.
 *
 * The worker thread is one of libserio's own, not one of GLib's shared
 * pool, so the call also completes in a process forked from one that
 * used it before.
 */
void
serio_bundle_new_from_file_async (GFile                 *file,
                                  int                    io_priority,
                                  GCancellable          *cancellable,
                                  SerioProgressCallback  progress_callback,
                                  gpointer               progress_callback_data,
                                  GDestroyNotify         progress_callback_notify,
                                  GAsyncReadyCallback    callback,
                                  gpointer               user_data)
{
  IoData *io;

  g_return_if_fail (G_IS_FILE (file));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  io = g_new0 (IoData, 1);
  io->file = g_object_ref (file);
  io_start (NULL, serio_bundle_new_from_file_async, io, io_priority, cancellable,
            progress_callback, progress_callback_data, progress_callback_notify, callback, user_data);
}

/**
 * serio_bundle_new_from_file_finish:
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes [func@Serio.Bundle.new_from_file_async].
 *
 * Returns: (transfer full): a new bundle, or %NULL with @error set
 */
SerioBundle *
serio_bundle_new_from_file_finish (GAsyncResult  *result,
                                   GError       **error)
{
  return load_finish (result, serio_bundle_new_from_file_async, error);
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
  IoData *io;

  g_return_if_fail (G_IS_INPUT_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  io = g_new0 (IoData, 1);
  io->input = g_object_ref (stream);
  io_start (NULL, serio_bundle_new_from_stream_async, io, io_priority, cancellable,
            NULL, NULL, NULL, callback, user_data);
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
  return load_finish (result, serio_bundle_new_from_stream_async, error);
}

/**
 * serio_bundle_save_to_file_async:
 * @self: a #SerioBundle
 * @file: the file to write
 * @flags: %SERIO_SAVE_FLAGS_NONE for a sealed text, %SERIO_SAVE_FLAGS_PLAIN
 *   for plain v1
 * @io_priority: the I/O priority of the request, such as
 *   %G_PRIORITY_DEFAULT
 * @cancellable: (nullable): a #GCancellable
 * @progress_callback: (nullable) (scope notified) (closure progress_callback_data)
 *   (destroy progress_callback_notify): called as the values are written,
 *   or %NULL
 * @progress_callback_data: (nullable): the data to pass to @progress_callback
 * @progress_callback_notify: (nullable): frees @progress_callback_data
 *   once the call no longer needs it
 * @callback: (scope async): called when the file is written
 * @user_data: the data to pass to @callback
 *
 * Saves the bundle like [method@Serio.Bundle.save_to_file], serialising and
 * writing in a worker thread so that the main loop does not block. The
 * bundle is saved as it is when this is called: arrays appended afterwards
 * are not part of the save. Call [method@Serio.Bundle.save_to_file_finish]
 * from @callback for the result.
 *
 * @progress_callback, when not %NULL, is called as for
 * [method@Serio.Bundle.save_to_file], but in the thread-default main
 * context of the thread that called this function, like the progress
 * callback of [method@Gio.File.copy_async], and every call comes before
 * @callback. The worker thread is one of libserio's own, not one of
 * GLib's shared pool, so the call also completes in a process forked from
 * one that used it before.
 */
void
serio_bundle_save_to_file_async (SerioBundle           *self,
                                 GFile                 *file,
                                 SerioSaveFlags         flags,
                                 int                    io_priority,
                                 GCancellable          *cancellable,
                                 SerioProgressCallback  progress_callback,
                                 gpointer               progress_callback_data,
                                 GDestroyNotify         progress_callback_notify,
                                 GAsyncReadyCallback    callback,
                                 gpointer               user_data)
{
  IoData *io;

  g_return_if_fail (SERIO_IS_BUNDLE (self));
  g_return_if_fail (G_IS_FILE (file));
  g_return_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  io = g_new0 (IoData, 1);
  io->file = g_object_ref (file);
  io->flags = flags;
  io_start (self, serio_bundle_save_to_file_async, io, io_priority, cancellable,
            progress_callback, progress_callback_data, progress_callback_notify, callback, user_data);
}

/**
 * serio_bundle_save_to_file_finish:
 * @self: a #SerioBundle
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@Serio.Bundle.save_to_file_async].
 *
 * The result is what happened to the file: %TRUE exactly when the new
 * bundle is in place, even if the save's #GCancellable was cancelled after
 * that, before this call.
 *
 * Returns: %TRUE if the file was written, %FALSE with @error set
 */
gboolean
serio_bundle_save_to_file_finish (SerioBundle   *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  return save_finish (self, result, serio_bundle_save_to_file_async, error);
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
  IoData *io;

  g_return_if_fail (SERIO_IS_BUNDLE (self));
  g_return_if_fail (G_IS_OUTPUT_STREAM (stream));
  g_return_if_fail ((flags & ~SERIO_SAVE_FLAGS_PLAIN) == 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  io = g_new0 (IoData, 1);
  io->output = g_object_ref (stream);
  io->flags = flags;
  io_start (self, serio_bundle_write_to_stream_async, io, io_priority, cancellable,
            NULL, NULL, NULL, callback, user_data);
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
  return save_finish (self, result, serio_bundle_write_to_stream_async, error);
}
