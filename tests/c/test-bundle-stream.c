/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bundle-stream.c: bundles to and from GIO streams, and from_file
 * through the reader
 *
 * Copyright 2026 The libserio authors
 */

#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

/* Arrays of all sizes: empty, tiny (packed together when loaded), just
 * above the packing limit, and over a million values (more than the room
 * a long array gets before it grows). */
static SerioBundle *
mixed_bundle (gboolean huge)
{
  static const gsize sizes[] = { 0, 1, 2, 3, 2047, 2048, 2049, 5000, 8192, 9000, 1 };
  SerioBundle *bundle = serio_bundle_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree double *values = g_new (double, MAX (sizes[i], 1));
      g_autofree char *name = g_strdup_printf ("a%" G_GSIZE_FORMAT "|%s", i, i % 2 ? "é" : "");

      for (gsize k = 0; k < sizes[i]; k++)
        values[k] = test_double_of (test_rand_u64 ());
      serio_bundle_append (bundle, name, values, sizes[i]);
    }

  for (guint i = 0; i < 3000; i++)
    {
      double one = i;

      serio_bundle_append (bundle, "tiny", &one, 1);
    }

  if (huge)
    {
      /* more than the first room of a long array (2^20 values) */
      gsize n = test_slow_tool () ? (1 << 20) + 1000 : 1500000;
      g_autofree double *values = g_new (double, n);

      /* short tokens, so that the text stays small */
      for (gsize k = 0; k < n; k++)
        values[k] = (double) (k % 10);
      serio_bundle_append (bundle, "huge", values, n);
    }

  return bundle;
}

static GBytes *
written (SerioBundle    *bundle,
         SerioSaveFlags  flags)
{
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(GError) error = NULL;

  g_assert_true (serio_bundle_write_to_stream (bundle, stream, flags, NULL, &error));
  g_assert_no_error (error);
  /* The stream stays open for more. */
  g_assert_false (g_output_stream_is_closed (stream));
  g_assert_true (g_output_stream_close (stream, NULL, NULL));

  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
}

static void
test_write (void)
{
  g_autoptr(SerioBundle) bundle = mixed_bundle (TRUE);
  g_autoptr(GBytes) sealed = written (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) plain = written (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GBytes) expected_sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) expected_plain = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);

  test_assert_same_bytes (sealed, expected_sealed);
  test_assert_same_bytes (plain, expected_plain);
}

/* A failed write leaves an error; the caller's stream is not closed. */
static void
test_write_fails (void)
{
  g_autoptr(SerioBundle) bundle = mixed_bundle (TRUE);
  g_autoptr(GOutputStream) stream = test_failing_output_stream_new (100000, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (serio_bundle_write_to_stream (bundle, stream, SERIO_SAVE_FLAGS_NONE, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE);
  g_assert_false (g_output_stream_is_closed (stream));
}

static void
check_read (GBytes *text)
{
  g_autoptr(GError) expected = NULL;
  g_autoptr(GError) actual = NULL;
  g_autoptr(SerioBundle) whole = serio_bundle_new_from_bytes (text, &expected);
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (text, -100000);
  g_autoptr(SerioBundle) streamed = serio_bundle_new_from_stream (stream, NULL, &actual);

  if (expected == NULL)
    {
      g_assert_no_error (actual);
      g_assert_true (serio_bundle_equal (streamed, whole));
    }
  else
    {
      g_assert_null (streamed);
      g_assert_nonnull (actual);
      g_assert_cmpint (actual->code, ==, expected->code);
      g_assert_cmpstr (actual->message, ==, expected->message);
    }
}

static void
test_read (void)
{
  g_autoptr(SerioBundle) bundle = mixed_bundle (TRUE);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) plain = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  const char *bad[] = {
    "v1|w|4000000000|1\n",
    "v1|w|3|1,2\n",
    "v1|w|3|1,2,3",
    "v1|serio.sealed|1|1\nv1|w|1|1\n",
    "v1|w|2|1,1p0\n",
  };

  check_read (sealed);
  check_read (plain);
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GBytes) text = g_bytes_new_static (bad[i], strlen (bad[i]));

      check_read (text);
    }

  /* a digit changed in the sealed text */
  {
    gsize size;
    const char *data = g_bytes_get_data (sealed, &size);
    g_autofree char *copy = g_strndup (data, size);
    g_autoptr(GBytes) damaged = NULL;
    char *digit = strstr (copy, "|0,1,2,");

    g_assert_nonnull (digit);
    digit[1] = '5';
    damaged = g_bytes_new (copy, size);
    check_read (damaged);
  }
}

static char *
write_temp_file (GBytes *contents)
{
  g_autofree char *dir = g_dir_make_tmp ("serio-stream-XXXXXX", NULL);
  char *path = g_build_filename (dir, "test.serio", NULL);

  g_assert_true (g_file_set_contents (path, g_bytes_get_data (contents, NULL),
                                      g_bytes_get_size (contents), NULL));
  return path;
}

static void
remove_temp_file (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* from_file reads through the reader, with the file's size as the bound. */
static void
test_from_file (void)
{
  g_autoptr(SerioBundle) bundle = mixed_bundle (TRUE);
  g_autoptr(GBytes) sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  const char *hostile = "v1|w|4000000000000|1,2\n";
  g_autoptr(GBytes) hostile_bytes = g_bytes_new_static (hostile, strlen (hostile));
  g_autoptr(GError) error = NULL;

  {
    g_autofree char *path = write_temp_file (sealed);
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autoptr(SerioBundle) back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);

    g_assert_no_error (error);
    g_assert_true (serio_bundle_equal (back, bundle));
    remove_temp_file (path);
  }

  {
    g_autofree char *path = write_temp_file (hostile_bytes);
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autoptr(SerioBundle) back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);

    g_assert_null (back);
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
    g_clear_error (&error);
    remove_temp_file (path);
  }

  /* a directory */
  {
    g_autofree char *dir = g_dir_make_tmp ("serio-stream-XXXXXX", NULL);
    g_autoptr(GFile) file = g_file_new_for_path (dir);
    g_autoptr(SerioBundle) back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);

    g_assert_null (back);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
    g_assert_cmpint (g_rmdir (dir), ==, 0);
  }
}

static void
test_async (void)
{
  g_autoptr(SerioBundle) bundle = mixed_bundle (FALSE);
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GBytes) expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);

  serio_bundle_write_to_stream_async (bundle, out, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT,
                                      NULL, test_store_result, &result);
  /* appended after the call: not part of the text */
  serio_bundle_append (bundle, "later", NULL, 0);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (serio_bundle_write_to_stream_finish (bundle, result, &error));
  g_assert_no_error (error);
  g_clear_object (&result);

  g_assert_true (g_output_stream_close (out, NULL, NULL));
  text = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
  test_assert_same_bytes (text, expected);

  {
    g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (text);
    g_autoptr(SerioBundle) back = NULL;
    g_autoptr(SerioBundle) before = serio_bundle_new_from_bytes (expected, NULL);

    serio_bundle_new_from_stream_async (in, G_PRIORITY_DEFAULT, NULL, test_store_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    back = serio_bundle_new_from_stream_finish (result, &error);
    g_assert_no_error (error);
    g_assert_true (serio_bundle_equal (back, before));
    g_clear_object (&result);
  }

  /* a failure comes back through the callback */
  {
    const char *bad = "v1|w|1|x\n";
    g_autoptr(GInputStream) in = g_memory_input_stream_new_from_data (bad, strlen (bad), NULL);
    g_autoptr(SerioBundle) back = NULL;

    serio_bundle_new_from_stream_async (in, G_PRIORITY_DEFAULT, NULL, test_store_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    back = serio_bundle_new_from_stream_finish (result, &error);
    g_assert_null (back);
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
  }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/bundle-stream/write", test_write);
  g_test_add_func ("/bundle-stream/write-fails", test_write_fails);
  g_test_add_func ("/bundle-stream/read", test_read);
  g_test_add_func ("/bundle-stream/from-file", test_from_file);
  g_test_add_func ("/bundle-stream/async", test_async);

  return g_test_run ();
}
