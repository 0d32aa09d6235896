/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-writer.c: SerioWriter, against the bundle's own serialisation
 *
 * Copyright 2026 The libserio authors
 */

#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <serio.h>
#include <xxhash.h>

#include "test-stream-utils.h"
#include "test-utils.h"

/* The sealed text of @plain, built here from the specification (one-shot
 * XXH3 over the opening record and the plain text), independently of the
 * writer's hash that runs as the buffer is flushed. */
static GBytes *
reference_sealed (GBytes *plain,
                  guint   n_arrays)
{
  static const char opening[] = "v1|serio.sealed|1|1\n";
  GString *text = g_string_new (opening);
  gsize size;
  const char *data = g_bytes_get_data (plain, &size);
  guint64 hash;

  g_string_append_len (text, data, size);
  hash = XXH3_64bits (text->str, text->len);
  g_string_append_printf (text, "v1|serio.seal|3|%u,%u,%u\n",
                          n_arrays + 1, (guint) (hash >> 32), (guint) (hash & 0xffffffffu));

  return g_string_free_to_bytes (text);
}

/* A name with the characters that are replaced, some UTF-8 and some
 * ASCII, or empty. */
static char *
random_name (guint i)
{
  static const char *parts[] = { "w", "|", "\r", "\n", "é", "名", " ", "\t", "serio.", "seal" };
  GString *name = g_string_new (NULL);
  guint n = g_test_rand_int_range (0, 6);

  for (guint k = 0; k < n; k++)
    g_string_append (name, parts[g_test_rand_int_range (0, G_N_ELEMENTS (parts))]);
  g_string_append_printf (name, "%u", i);

  return g_string_free (name, FALSE);
}

/* Threads for the writers of check_piecewise(), and the largest array and
 * piece it makes: large pieces take the parallel path. */
static guint writer_threads = 1;
static gsize max_array = 40000;
static gsize max_piece = 3000;

/* Writes @values as arrays of random sizes, each in random pieces through
 * both value calls (aligned and unaligned bytes), and checks the text
 * against the bundle of the same arrays. */
static void
check_piecewise (const double *values,
                 gsize         n_values,
                 gboolean      sealed)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = sealed ? serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE) : serio_writer_new (stream, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GBytes) plain = NULL;
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GError) error = NULL;
  gsize done = 0;
  guint n_arrays = 0;

  serio_writer_set_threads (writer, writer_threads);
  g_assert_cmpuint (serio_writer_get_threads (writer), ==, writer_threads);
  g_assert_true (serio_writer_get_sealed (writer) == sealed);
  g_assert_true (serio_writer_get_stream (writer) == stream);

  while (done < n_values || n_arrays < 3)
    {
      gsize left = n_values - done;
      gsize wanted = g_test_rand_int_range (0, 4) == 0 ? left : (gsize) g_test_rand_int_range (0, (gint32) max_array);
      gsize size = MIN (left, wanted);
      g_autofree char *name = random_name (n_arrays);
      gsize given = 0;

      serio_bundle_append (bundle, name, values + done, size);

      if (g_test_rand_int_range (0, 5) == 0)
        {
          g_assert_true (serio_writer_write_array (writer, name, values + done, size, NULL, &error));
          g_assert_no_error (error);
        }
      else
        {
          g_assert_true (serio_writer_begin_array (writer, name, size, NULL, &error));
          g_assert_no_error (error);

          while (given < size)
            {
              gsize at_most = g_test_rand_int_range (0, (gint32) max_piece);
              gsize piece = MIN (size - given, at_most);

              g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, size - given);

              switch (g_test_rand_int_range (0, 3))
                {
                case 0:
                  g_assert_true (serio_writer_add_values (writer, values + done + given, piece, NULL, &error));
                  break;

                case 1:
                  {
                    g_autoptr(GBytes) bytes = g_bytes_new (values + done + given, piece * sizeof (double));

                    serio_writer_add_bytes (writer, bytes, NULL, &error);
                    g_assert_no_error (error);
                  }
                  break;

                default:
                  {
                    /* Unaligned data, as a binding may hand over. */
                    g_autofree char *block = g_malloc (piece * sizeof (double) + 1);
                    g_autoptr(GBytes) bytes = NULL;

                    memcpy (block + 1, values + done + given, piece * sizeof (double));
                    bytes = g_bytes_new (block + 1, piece * sizeof (double));
                    serio_writer_add_bytes (writer, bytes, NULL, &error);
                    g_assert_no_error (error);
                  }
                  break;
                }
              g_assert_no_error (error);
              given += piece;
            }
        }

      g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 0);
      done += size;
      n_arrays++;
    }

  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_is_closed (stream));

  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
  plain = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  expected = sealed ? reference_sealed (plain, n_arrays) : g_bytes_ref (plain);
  test_assert_same_bytes (written, expected);
  if (sealed)
    {
      g_autoptr(GBytes) from_bundle = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);

      test_assert_same_bytes (written, from_bundle);
    }

  /* And it reads back. */
  {
    g_autoptr(SerioBundle) back = serio_bundle_new_from_bytes (written, &error);

    g_assert_no_error (error);
    g_assert_true (serio_bundle_equal (back, bundle));
  }
}

static void
test_patterns (gconstpointer data)
{
  gboolean sealed = GPOINTER_TO_INT (data);
  g_autoptr(GArray) patterns = test_load_patterns ();

  g_assert_cmpuint (patterns->len, ==, 44286);
  check_piecewise ((const double *) (gconstpointer) patterns->data, patterns->len, sealed);
}

static void
test_random_bits (gconstpointer data)
{
  gboolean sealed = GPOINTER_TO_INT (data);
  gsize n = test_iterations (300000);
  g_autofree double *values = g_new (double, n);

  for (gsize i = 0; i < n; i++)
    values[i] = test_double_of (i % 3 == 0 ? test_rand_interesting () : test_rand_u64 ());

  check_piecewise (values, n, sealed);
}

/* Several threads format long runs of values: the same bytes. */
static void
test_threads (gconstpointer data)
{
  gboolean sealed = GPOINTER_TO_INT (data);
  g_autoptr(GArray) patterns = test_load_patterns ();
  gsize n = test_slow_tool () ? 100000 : 400000;
  g_autofree double *values = g_new (double, n);

  for (gsize i = 0; i < n; i++)
    values[i] = test_double_of (i % 3 == 0 ? test_rand_interesting () : test_rand_u64 ());

  max_array = 300000;
  max_piece = 120000;
  for (writer_threads = 2; writer_threads <= (test_slow_tool () ? 2u : 4u); writer_threads++)
    {
      check_piecewise ((const double *) (gconstpointer) patterns->data, patterns->len, sealed);
      check_piecewise (values, n, sealed);
    }
  writer_threads = 1;
  max_array = 40000;
  max_piece = 3000;
}

static void
test_empty (void)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(SerioBundle) empty = serio_bundle_new ();
  g_autoptr(GBytes) plain = serio_bundle_to_bytes (empty, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GBytes) expected = reference_sealed (plain, 0);
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
  test_assert_same_bytes (written, expected);
  g_assert_cmpuint (g_bytes_get_size (written), >, 40);
  g_assert_true (memcmp (g_bytes_get_data (written, NULL),
                         "v1|serio.sealed|1|1\nv1|serio.seal|3|1,", 38) == 0);

  /* A plain empty text is empty. */
  {
    g_autoptr(GOutputStream) plain_stream = g_memory_output_stream_new_resizable ();
    g_autoptr(SerioWriter) plain_writer = serio_writer_new (plain_stream, SERIO_SAVE_FLAGS_PLAIN);

    g_assert_true (serio_writer_close (plain_writer, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (plain_stream)), ==, 0);
  }
}

static GBytes *
contents_of (GOutputStream *stream)
{
  return g_bytes_new (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (stream)),
                      g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (stream)));
}

/* Misuse is an error that writes nothing and leaves the writer usable. */
static void
test_misuse (void)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) odd = g_bytes_new ("12345678x", 9);
  g_autoptr(GBytes) written = NULL;
  const double values[] = { 0.5, -0.0, 3.0, 0.25 };

  /* values before an array */
  g_assert_false (serio_writer_add_values (writer, values, 1, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_true (serio_writer_begin_array (writer, "a", 3, NULL, &error));
  g_assert_true (serio_writer_add_values (writer, values, 1, NULL, &error));

  /* too many values */
  g_assert_false (serio_writer_add_values (writer, values, 3, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  {
    g_autoptr(GBytes) three = g_bytes_new (values, 3 * sizeof (double));

    g_assert_false (serio_writer_add_bytes (writer, three, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }

  /* a size that is not whole doubles */
  g_assert_false (serio_writer_add_bytes (writer, odd, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 2);

  /* too few: the next array and the end must wait */
  g_assert_false (serio_writer_begin_array (writer, "b", 0, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (serio_writer_write_array (writer, "b", values, 1, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (serio_writer_end (writer, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* a cancelled call writes nothing either */
  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();

    g_cancellable_cancel (cancellable);
    g_assert_false (serio_writer_add_values (writer, values + 1, 1, cancellable, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
  }

  /* the writer goes on as if nothing happened */
  g_assert_true (serio_writer_add_values (writer, values + 1, 2, NULL, &error));
  g_assert_true (serio_writer_write_array (writer, "b", values, 4, NULL, &error));
  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_false (g_output_stream_is_closed (stream));

  written = contents_of (stream);
  g_assert_cmpmem (g_bytes_get_data (written, NULL), g_bytes_get_size (written),
                   "v1|a|3|1p-1,-0,3\nv1|b|4|1p-1,-0,3,1p-2\n",
                   strlen ("v1|a|3|1p-1,-0,3\nv1|b|4|1p-1,-0,3,1p-2\n"));

  /* after the end */
  g_assert_false (serio_writer_begin_array (writer, "c", 0, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CLOSED);
  g_clear_error (&error);

  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_output_stream_is_closed (stream));
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
}

static void
test_precondition_names (void)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  const char *bad[] = { "serio.sealed", "serio.seal", "\xff", "a\xc3" };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
      g_assert_false (serio_writer_begin_array (writer, bad[i], 0, NULL, &error));
      g_test_assert_expected_messages ();
      g_assert_no_error (error);
    }

  /* Names that only look alike are ordinary. */
  g_assert_true (serio_writer_write_array (writer, "serio.seal ", NULL, 0, NULL, &error));
  g_assert_true (serio_writer_write_array (writer, "serio|seal", NULL, 0, NULL, &error));
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (g_strstr_len (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (stream)),
                                  g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (stream)),
                                  "v1|serio_seal|0|\n"));
}

/* A stream that fails (or is cancelled) mid-array leaves an error, and the
 * writer stays broken. */
static void
test_stream_fails (gconstpointer data)
{
  gboolean cancel = GPOINTER_TO_INT (data);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GOutputStream) stream = test_failing_output_stream_new (3 * 1024 * 1024, cancel ? cancellable : NULL);
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GError) error = NULL;
  g_autofree double *values = g_new (double, 100000);
  gboolean ok = TRUE;
  guint calls = 0;
  int expected = cancel ? G_IO_ERROR_CANCELLED : G_IO_ERROR_NO_SPACE;

  for (gsize i = 0; i < 100000; i++)
    values[i] = test_double_of (test_rand_u64 ());

  g_assert_true (serio_writer_begin_array (writer, "big", G_GUINT64_CONSTANT (10000000), cancellable, &error));
  g_assert_no_error (error);
  while (ok && calls < 100)
    {
      ok = serio_writer_add_values (writer, values, 100000, cancellable, &error);
      calls++;
    }

  g_assert_false (ok);
  g_assert_error (error, G_IO_ERROR, expected);
  g_clear_error (&error);

  /* broken for good, even without the cancellable */
  g_assert_false (serio_writer_add_values (writer, values, 1, NULL, &error));
  g_assert_error (error, G_IO_ERROR, expected);
  g_clear_error (&error);
  g_assert_false (serio_writer_close (writer, NULL, &error));
  g_assert_error (error, G_IO_ERROR, expected);
  g_assert_true (g_output_stream_is_closed (stream));
}

static char *
replace_test_file (const char *contents)
{
  g_autofree char *dir = g_dir_make_tmp ("serio-writer-XXXXXX", NULL);
  char *path = g_build_filename (dir, "old.serio", NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
assert_file_is (const char *path,
                const char *contents)
{
  g_autofree char *now = NULL;

  g_assert_true (g_file_get_contents (path, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, contents);
}

static void
remove_test_file (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* Over a file being replaced, an incomplete text never replaces it. */
static void
test_old_file_kept (void)
{
  const char *old = "v1|old|1|1\n";
  g_autofree char *path = replace_test_file (old);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree double *values = g_new0 (double, 300000);
  g_autoptr(GError) error = NULL;

  for (gsize i = 0; i < 300000; i++)
    values[i] = test_double_of (test_rand_u64 ());

  /* dropped mid-array, after a few megabytes went out */
  {
    g_autoptr(GFileOutputStream) stream = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
    SerioWriter *writer = serio_writer_new (G_OUTPUT_STREAM (stream), SERIO_SAVE_FLAGS_NONE);

    g_assert_no_error (error);
    g_assert_true (serio_writer_begin_array (writer, "w", 400000, NULL, &error));
    g_assert_true (serio_writer_add_values (writer, values, 300000, NULL, &error));
    g_assert_no_error (error);
    g_object_unref (writer);
    g_assert_true (g_output_stream_is_closed (G_OUTPUT_STREAM (stream)));
  }
  assert_file_is (path, old);

  /* closed with values missing */
  {
    g_autoptr(GFileOutputStream) stream = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
    g_autoptr(SerioWriter) writer = serio_writer_new (G_OUTPUT_STREAM (stream), SERIO_SAVE_FLAGS_NONE);

    g_assert_true (serio_writer_begin_array (writer, "w", 400000, NULL, &error));
    g_assert_true (serio_writer_add_values (writer, values, 300000, NULL, &error));
    g_assert_false (serio_writer_close (writer, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  assert_file_is (path, old);

  /* cancelled on the way out */
  {
    g_autoptr(GFileOutputStream) stream = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
    g_autoptr(SerioWriter) writer = serio_writer_new (G_OUTPUT_STREAM (stream), SERIO_SAVE_FLAGS_NONE);
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();

    g_assert_true (serio_writer_write_array (writer, "w", values, 1000, NULL, &error));
    g_cancellable_cancel (cancellable);
    g_assert_false (serio_writer_close (writer, cancellable, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
  }
  assert_file_is (path, old);

  /* and a complete text does replace it */
  {
    g_autoptr(GFileOutputStream) stream = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
    g_autoptr(SerioWriter) writer = serio_writer_new (G_OUTPUT_STREAM (stream), SERIO_SAVE_FLAGS_PLAIN);

    g_assert_true (serio_writer_write_array (writer, "new", values, 0, NULL, &error));
    g_assert_true (serio_writer_close (writer, NULL, &error));
    g_assert_no_error (error);
  }
  assert_file_is (path, "v1|new|0|\n");

  remove_test_file (path);
}

/* The number of entries in the directory of @path: a save that did not
 * finish must leave no temporary file behind. */
static guint
count_dir_entries (const char *path)
{
  g_autofree char *dirname = g_path_get_dirname (path);
  g_autoptr(GDir) dir = g_dir_open (dirname, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;

  return n;
}

/* Begins a writer for @file; values 0..n-1 go in pieces of 1000 as "w". */
static SerioWriter *
begin_file_writer (GFile          *file,
                   SerioSaveFlags  flags,
                   const double   *values,
                   gsize           n_values,
                   guint64         declared)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioWriter) writer = serio_writer_new_for_file (file, flags, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (writer);
  g_assert_cmpint (serio_writer_get_sealed (writer), ==, (flags & SERIO_SAVE_FLAGS_PLAIN) == 0);
  g_assert_true (serio_writer_write_array (writer, "b", values, 3, NULL, &error));
  g_assert_true (serio_writer_begin_array (writer, "w", declared, NULL, &error));
  for (gsize i = 0; i < n_values; i += 1000)
    g_assert_true (serio_writer_add_values (writer, values + i, MIN (1000, n_values - i), NULL, &error));
  g_assert_no_error (error);

  return g_steal_pointer (&writer);
}

/* new_for_file() replaces a file as save_to_file() does: the same bytes
 * once closed, and the old file (and no temporary file) otherwise. */
static void
test_for_file (void)
{
  const char *old = "v1|old|1|1\n";
  const gsize n = 200000;
  g_autofree char *path = replace_test_file (old);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autofree double *values = g_new0 (double, n);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *missing_dir = NULL;
  g_autofree char *fresh = NULL;
  guint entries = count_dir_entries (path);

  for (gsize i = 0; i < n; i++)
    values[i] = test_double_of (test_rand_u64 ());
  serio_bundle_append (bundle, "b", values, 3);
  serio_bundle_append (bundle, "w", values, n);

  /* dropped mid-array, after megabytes went out */
  g_object_unref (begin_file_writer (file, SERIO_SAVE_FLAGS_NONE, values, n / 2, n));
  assert_file_is (path, old);
  g_assert_cmpuint (count_dir_entries (path), ==, entries);

  /* finished, but dropped without close */
  {
    g_autoptr(SerioWriter) writer = begin_file_writer (file, SERIO_SAVE_FLAGS_NONE, values, n, n);

    g_assert_true (serio_writer_end (writer, NULL, &error));
    g_assert_no_error (error);
  }
  assert_file_is (path, old);
  g_assert_cmpuint (count_dir_entries (path), ==, entries);

  /* closed with values missing */
  {
    g_autoptr(SerioWriter) writer = begin_file_writer (file, SERIO_SAVE_FLAGS_NONE, values, n - 1, n);

    g_assert_false (serio_writer_close (writer, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  assert_file_is (path, old);

  /* cancelled at close */
  {
    g_autoptr(SerioWriter) writer = begin_file_writer (file, SERIO_SAVE_FLAGS_NONE, values, n, n);
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();

    g_cancellable_cancel (cancellable);
    g_assert_false (serio_writer_close (writer, cancellable, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
  }
  assert_file_is (path, old);
  g_assert_cmpuint (count_dir_entries (path), ==, entries);

  /* closed: the sealed text of the same bundle, keeping the file's mode */
  g_assert_cmpint (g_chmod (path, 0640), ==, 0);
  {
    g_autoptr(SerioWriter) writer = begin_file_writer (file, SERIO_SAVE_FLAGS_NONE, values, n, n);
    g_autoptr(GBytes) expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
    g_autoptr(GBytes) written = NULL;
    GStatBuf st;

    g_assert_true (serio_writer_close (writer, NULL, &error));
    g_assert_no_error (error);
    written = g_file_load_bytes (file, NULL, NULL, &error);
    g_assert_no_error (error);
    test_assert_same_bytes (written, expected);
    g_assert_cmpint (g_stat (path, &st), ==, 0);
    g_assert_cmpint (st.st_mode & 0777, ==, 0640);
  }
  g_assert_cmpuint (count_dir_entries (path), ==, entries);

  /* plain */
  {
    g_autoptr(SerioWriter) writer = begin_file_writer (file, SERIO_SAVE_FLAGS_PLAIN, values, n, n);
    g_autoptr(GBytes) expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
    g_autoptr(GBytes) written = NULL;

    g_assert_true (serio_writer_close (writer, NULL, &error));
    written = g_file_load_bytes (file, NULL, NULL, &error);
    g_assert_no_error (error);
    test_assert_same_bytes (written, expected);
  }

  /* a new file dropped unfinished is not created at all */
  fresh = g_strconcat (path, ".new", NULL);
  {
    g_autoptr(GFile) fresh_file = g_file_new_for_path (fresh);

    g_object_unref (begin_file_writer (fresh_file, SERIO_SAVE_FLAGS_NONE, values, 10, n));
    g_assert_false (g_file_test (fresh, G_FILE_TEST_EXISTS));
  }
  g_assert_cmpuint (count_dir_entries (path), ==, entries);

  /* no such directory: no writer, and the error names the file */
  missing_dir = g_build_filename (path, "..", "no-such-dir", "x.serio", NULL);
  {
    g_autoptr(GFile) nowhere = g_file_new_for_path (missing_dir);
    g_autoptr(SerioWriter) writer = serio_writer_new_for_file (nowhere, SERIO_SAVE_FLAGS_NONE, NULL, &error);

    g_assert_null (writer);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_assert_nonnull (strstr (error->message, "x.serio"));
    g_clear_error (&error);
  }

  remove_test_file (path);
}

/* Arrays of no values, written whole by every call that writes a whole
 * array: each succeeds, once, and the text holds each record once. */
static void
test_empty_arrays (void)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GBytes) none = g_bytes_new_static ("", 0);
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GError) error = NULL;
  const guint64 zero[] = { 0 };
  const guint64 zero_by_two[] = { 0, 2 };
  static const char text[] =
    "v1|a|0|\n"
    "v1|b|0|\n"
    "v1|c[0]|0|\n"
    "v1|d@float32[0x2]|0|\n"
    "v1|e|0|\n";

  g_assert_true (serio_writer_write_array (writer, "a", NULL, 0, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_write_bytes (writer, "b", none, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_write_typed (writer, "c", SERIO_DTYPE_FLOAT64, zero, 1, none, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_write_typed (writer, "d", SERIO_DTYPE_FLOAT32, zero_by_two, 2, none, NULL,
                                           &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_begin_array (writer, "e", 0, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 0);
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);

  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
  expected = g_bytes_new_static (text, sizeof text - 1);
  test_assert_same_bytes (written, expected);
}

/* A record for the batch tests: its base name, type, shape and
 * elements, which may start at an odd address. */
typedef struct
{
  char       *name;
  SerioDtype  dtype;
  guint64     dims[2];
  guint       n_dims;
  gsize       n_values;
  guint8     *storage;
  guint8     *data;
} BatchRecord;

/* Random elements of @dtype that it can be written with: any bits for
 * the floats, 0 and 1 for bool, and 64-bit integers a double holds. */
static void
fill_elements (guint8     *data,
               SerioDtype  dtype,
               gsize       n_values)
{
  gsize element = serio_dtype_get_size (dtype);

  for (gsize i = 0; i < n_values; i++)
    {
      guint64 bits = dtype == SERIO_DTYPE_FLOAT64 ? test_rand_interesting () : test_rand_u64 ();

      if (dtype == SERIO_DTYPE_BOOL)
        bits &= 1;
      else if (dtype == SERIO_DTYPE_INT64)
        bits = (guint64) ((gint64) bits >> 11);
      else if (dtype == SERIO_DTYPE_UINT64)
        bits >>= 11;
      memcpy (data + i * element, &bits, element);
    }
}

/* @n random records: short ones, of every type, some 0-d or 2-d, some
 * empty, in runs long enough together for the writer's parallel path of
 * short records, and two (at a third and two thirds of the way) long
 * enough for its parallel path of one array; every third unaligned. */
static BatchRecord *
random_records (guint n)
{
  BatchRecord *records = g_new0 (BatchRecord, n);

  for (guint i = 0; i < n; i++)
    {
      BatchRecord *r = &records[i];
      /* 0: 0-d, 1-3: 2-d, 4: long, others 1-d */
      guint kind = i == n / 3 || i == 2 * n / 3 ? 4 : (guint) g_test_rand_int_range (5, 24) % 20;

      r->name = random_name (i);
      r->dtype = (SerioDtype) g_test_rand_int_range (0, SERIO_DTYPE_BOOL + 1);
      if (kind == 0)
        {
          r->n_dims = 0;
          r->n_values = 1;
        }
      else if (kind < 4)
        {
          r->n_dims = 2;
          r->dims[0] = g_test_rand_int_range (0, 30);
          r->dims[1] = g_test_rand_int_range (1, 40);
          r->n_values = r->dims[0] * r->dims[1];
        }
      else
        {
          r->n_dims = 1;
          r->dims[0] = kind == 4 ? g_test_rand_int_range (32768, 50000) : g_test_rand_int_range (0, 1500);
          r->n_values = r->dims[0];
        }
      r->storage = g_malloc (r->n_values * serio_dtype_get_size (r->dtype) + 1);
      r->data = r->storage + (i % 3 == 0);
      fill_elements (r->data, r->dtype, r->n_values);
    }

  return records;
}

static void
free_records (BatchRecord *records,
              guint        n)
{
  for (guint i = 0; i < n; i++)
    {
      g_free (records[i].name);
      g_free (records[i].storage);
    }
  g_free (records);
}

/* Writes records [first, first + n) in one serio_writer_write_records()
 * call. */
static gboolean
write_batch (SerioWriter        *writer,
             const BatchRecord  *records,
             guint               first,
             guint               n,
             GCancellable       *cancellable,
             GError            **error)
{
  g_autofree SerioRecordInfo *infos = g_new0 (SerioRecordInfo, MAX (n, 1));
  g_autofree gconstpointer *data = g_new0 (gconstpointer, MAX (n, 1));

  for (guint i = 0; i < n; i++)
    {
      const BatchRecord *r = &records[first + i];

      infos[i].name = r->name;
      infos[i].dims = r->dims;
      infos[i].n_dims = r->n_dims;
      infos[i].dtype = r->dtype;
      infos[i].n_values = r->n_values;
      /* not used by the writer */
      infos[i].offset = G_MAXUINT64;
      data[i] = r->data;
    }

  return serio_writer_write_records (writer, infos, data, n, cancellable, error);
}

/* The text of @records written one at a time with
 * serio_writer_write_typed(), on one thread. */
static GBytes *
text_one_at_a_time (const BatchRecord *records,
                    guint              n,
                    SerioSaveFlags     flags)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, flags);
  g_autoptr(GError) error = NULL;

  serio_writer_set_threads (writer, 1);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GBytes) data = g_bytes_new_static (records[i].data,
                                                   records[i].n_values * serio_dtype_get_size (records[i].dtype));

      g_assert_true (serio_writer_write_typed (writer, records[i].name, records[i].dtype, records[i].dims,
                                               records[i].n_dims, data, NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);

  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
}

/* Batches of random records, split at random, on 1 or 2 threads, sealed
 * and plain: the text is that of the records written one at a time. */
static void
test_write_records (gconstpointer data)
{
  guint threads = GPOINTER_TO_UINT (data);
  /* under valgrind too, runs of short records enough for the threads */
  guint n = MAX (test_iterations (400), 120);
  BatchRecord *records = random_records (n);

  for (guint sealed = 0; sealed < 2; sealed++)
    {
      SerioSaveFlags flags = sealed ? SERIO_SAVE_FLAGS_NONE : SERIO_SAVE_FLAGS_PLAIN;
      g_autoptr(GBytes) expected = text_one_at_a_time (records, n, flags);
      g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
      g_autoptr(SerioWriter) writer = serio_writer_new (stream, flags);
      g_autoptr(GBytes) written = NULL;
      g_autoptr(GError) error = NULL;

      serio_writer_set_threads (writer, threads);
      /* an empty batch writes nothing */
      g_assert_true (write_batch (writer, records, 0, 0, NULL, &error));
      g_assert_no_error (error);
      for (guint done = 0; done < n;)
        {
          guint k = g_test_rand_int_range (0, 4) == 0 ? g_test_rand_int_range (1, 10)
                                                      : g_test_rand_int_range (n / 4, n / 2 + 2);

          k = MIN (k, n - done);

          g_assert_true (write_batch (writer, records, done, k, NULL, &error));
          g_assert_no_error (error);
          done += k;
        }
      g_assert_true (serio_writer_close (writer, NULL, &error));
      g_assert_no_error (error);

      written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
      test_assert_same_bytes (written, expected);
    }

  free_records (records, n);
}

/* Writes the five @records in one batch, after the first on its own,
 * where serio_writer_write_records() must refuse the third with @domain,
 * @code and a message that contains @needle: nothing of the batch is
 * written, and the writer goes on with the fifth. */
static void
check_batch_refused (BatchRecord *records,
                     GQuark       domain,
                     int          code,
                     const char  *needle)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GError) error = NULL;
  BatchRecord kept[2] = { records[0], records[4] };

  serio_writer_set_threads (writer, 2);
  g_assert_true (write_batch (writer, records, 0, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (write_batch (writer, records, 0, 5, NULL, &error));
  g_assert_error (error, domain, code);
  g_assert_nonnull (strstr (error->message, needle));
  g_clear_error (&error);
  g_assert_true (write_batch (writer, records, 4, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);

  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
  expected = text_one_at_a_time (kept, 2, SERIO_SAVE_FLAGS_NONE);
  test_assert_same_bytes (written, expected);
}

static void
cancel_on_progress (guint64  done G_GNUC_UNUSED,
                    guint64  total G_GNUC_UNUSED,
                    gpointer data)
{
  g_cancellable_cancel (data);
}

static void
test_write_records_errors (void)
{
  BatchRecord *records = random_records (5);
  g_autoptr(GError) error = NULL;
  guint64 huge = G_GUINT64_CONSTANT (1) << 60;
  guint8 *saved_data;
  gsize saved_n;

  /* Long enough, together, for the threads. */
  for (guint i = 0; i < 5; i++)
    {
      g_free (records[i].storage);
      records[i].dtype = SERIO_DTYPE_INT64;
      records[i].n_dims = 1;
      records[i].dims[0] = records[i].n_values = 20000;
      records[i].storage = records[i].data = g_malloc (20000 * 8);
      fill_elements (records[i].data, SERIO_DTYPE_INT64, 20000);
    }

  /* an int64 that a double does not hold, last in its array */
  memcpy (records[2].data + 19999 * 8, &(gint64) { (G_GINT64_CONSTANT (1) << 60) + 1 }, 8);
  check_batch_refused (records, SERIO_ERROR, SERIO_ERROR_DOMAIN, records[2].name);
  fill_elements (records[2].data, SERIO_DTYPE_INT64, 20000);

  /* elements that are not those of the shape */
  records[2].n_values = 19999;
  check_batch_refused (records, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "19999 values given");
  records[2].n_values = 20000;

  /* a float64 base name with a type marker */
  records[2].dtype = SERIO_DTYPE_FLOAT64;
  g_free (records[2].name);
  records[2].name = g_strdup ("w@int8");
  check_batch_refused (records, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "type marker");

  /* a shape with more values than 64 bits count: its name says whose */
  records[2].dtype = SERIO_DTYPE_INT64;
  records[2].n_dims = 2;
  records[2].dims[0] = records[2].dims[1] = huge;
  saved_data = records[2].data;
  saved_n = records[2].n_values;
  records[2].n_values = 0;
  records[2].data = NULL;
  check_batch_refused (records, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Array “w@int8”: ");
  records[2].data = saved_data;
  records[2].n_values = saved_n;
  records[2].n_dims = 1;
  records[2].dims[0] = saved_n;

  /* an array begun before that misses values */
  {
    g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
    g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_PLAIN);

    g_assert_true (serio_writer_begin_array (writer, "open", 2, NULL, &error));
    g_assert_no_error (error);
    g_assert_false (write_batch (writer, records, 0, 5, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 2);
  }

  /* a stream that fails, or a cancellation, in the middle of a batch
   * breaks the writer, on one thread and on two */
  for (guint cancel = 0; cancel < 2; cancel++)
    for (guint threads = 1; threads <= 2; threads++)
      {
        g_autoptr(GCancellable) cancellable = g_cancellable_new ();
        g_autoptr(GOutputStream) stream = test_failing_output_stream_new (512 * 1024,
                                                                          cancel ? cancellable : NULL);
        g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
        int expected = cancel ? G_IO_ERROR_CANCELLED : G_IO_ERROR_NO_SPACE;

        serio_writer_set_threads (writer, threads);
        g_assert_false (write_batch (writer, records, 0, 5, cancellable, &error));
        g_assert_error (error, G_IO_ERROR, expected);
        g_clear_error (&error);
        g_assert_false (write_batch (writer, records, 0, 1, NULL, &error));
        g_assert_error (error, G_IO_ERROR, expected);
        g_clear_error (&error);
      }

  /* cancelled between two arrays of a batch (by the progress callback,
   * once the first megabyte is out): broken too, though the stream is
   * fine */
  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();
    g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
    g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);

    serio_writer_set_threads (writer, 1);
    serio_writer_set_progress_callback (writer, cancel_on_progress, g_object_ref (cancellable),
                                        g_object_unref);
    g_assert_false (write_batch (writer, records, 0, 5, cancellable, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
    g_assert_false (write_batch (writer, records, 0, 1, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error (&error);
  }

  free_records (records, 5);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_data_func ("/writer/patterns/plain", GINT_TO_POINTER (FALSE), test_patterns);
  g_test_add_data_func ("/writer/patterns/sealed", GINT_TO_POINTER (TRUE), test_patterns);
  g_test_add_data_func ("/writer/random/plain", GINT_TO_POINTER (FALSE), test_random_bits);
  g_test_add_data_func ("/writer/random/sealed", GINT_TO_POINTER (TRUE), test_random_bits);
  g_test_add_data_func ("/writer/threads/plain", GINT_TO_POINTER (FALSE), test_threads);
  g_test_add_data_func ("/writer/threads/sealed", GINT_TO_POINTER (TRUE), test_threads);
  g_test_add_func ("/writer/empty", test_empty);
  g_test_add_func ("/writer/misuse", test_misuse);
  g_test_add_func ("/writer/precondition-names", test_precondition_names);
  g_test_add_data_func ("/writer/stream-fails/error", GINT_TO_POINTER (FALSE), test_stream_fails);
  g_test_add_data_func ("/writer/stream-fails/cancelled", GINT_TO_POINTER (TRUE), test_stream_fails);
  g_test_add_func ("/writer/old-file-kept", test_old_file_kept);
  g_test_add_func ("/writer/for-file", test_for_file);
  g_test_add_func ("/writer/empty-arrays", test_empty_arrays);
  g_test_add_data_func ("/writer/write-records/1-thread", GUINT_TO_POINTER (1), test_write_records);
  g_test_add_data_func ("/writer/write-records/2-threads", GUINT_TO_POINTER (2), test_write_records);
  g_test_add_func ("/writer/write-records-errors", test_write_records_errors);

  return g_test_run ();
}
