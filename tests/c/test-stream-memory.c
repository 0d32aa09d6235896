/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-stream-memory.c: the file and stream paths hold values, not text
 *
 * Copyright 2026 The libserio authors
 *
 * With 10^7 values: writing a bundle to a file through the writer stays
 * within a few MiB above the bundle; reading it back with from_file needs
 * 8 bytes per value and a few MiB; scanning it with a reader needs a few
 * MiB. The peak resident set is measured with Linux's VmHWM, reset before
 * each step through /proc/self/clear_refs; elsewhere the test skips.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <serio.h>

#include "test-utils.h"

#define N_VALUES  10000000
#define SLACK_KIB (16 * 1024)

static gboolean
reset_peak (void)
{
  FILE *clear_refs = fopen ("/proc/self/clear_refs", "w");
  gboolean ok;

  if (clear_refs == NULL)
    return FALSE;
  ok = fputs ("5", clear_refs) >= 0;
  return fclose (clear_refs) == 0 && ok;
}

static void
test_memory (void)
{
  g_autofree char *dir = g_dir_make_tmp ("serio-memory-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "big.serio", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  long start, peak;

  g_test_summary ("Peak memory of write_to_stream, from_file and a reader "
                  "on 10^7 values: values plus a few MiB, never the text.");

  if (test_slow_tool ())
    {
      g_test_skip ("memory figures mean nothing under a slow tool");
      return;
    }
  if (!reset_peak () || test_status_kib ("VmHWM:") < 0)
    {
      g_test_skip ("no /proc/self/clear_refs to reset the peak resident set");
      return;
    }

  /* write */
  {
    g_autoptr(SerioBundle) bundle = serio_bundle_new ();
    g_autofree double *values = g_new (double, N_VALUES);
    g_autoptr(GFileOutputStream) out = NULL;

    for (gsize i = 0; i < N_VALUES; i++)
      values[i] = (double) (i % 1000);
    serio_bundle_append (bundle, "big", values, N_VALUES);
    g_clear_pointer (&values, g_free);

    out = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
    g_assert_no_error (error);

    g_assert_true (reset_peak ());
    start = test_status_kib ("VmRSS:");
    g_assert_true (serio_bundle_write_to_stream (bundle, G_OUTPUT_STREAM (out),
                                                 SERIO_SAVE_FLAGS_NONE, NULL, &error));
    g_assert_no_error (error);
    peak = test_status_kib ("VmHWM:");
    g_test_message ("write_to_stream: %ld KiB above %ld KiB", peak - start, start);
    g_assert_cmpint (peak - start, <=, SLACK_KIB);
    g_assert_true (g_output_stream_close (G_OUTPUT_STREAM (out), NULL, &error));
  }

  /* from_file */
  {
    g_autoptr(SerioBundle) back = NULL;
    gsize n;

    g_assert_true (reset_peak ());
    start = test_status_kib ("VmRSS:");
    back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);
    g_assert_no_error (error);
    peak = test_status_kib ("VmHWM:");
    g_test_message ("from_file: %ld KiB above %ld KiB", peak - start, start);
    g_assert_cmpint (peak - start, <=, (long) (N_VALUES * sizeof (double) / 1024) + SLACK_KIB);

    serio_bundle_get_values (back, 0, &n);
    g_assert_cmpuint (n, ==, N_VALUES);
  }

  /* a reader */
  {
    g_autoptr(GFileInputStream) in = g_file_read (file, NULL, &error);
    g_autoptr(SerioReader) reader = serio_reader_new (G_INPUT_STREAM (in));
    g_autofree double *chunk = g_new (double, 65536);
    gsize total = 0, got;

    g_assert_true (reset_peak ());
    start = test_status_kib ("VmRSS:");
    while (serio_reader_next (reader, NULL, &error))
      do
        {
          g_assert_true (serio_reader_read_values (reader, chunk, 65536, &got, NULL, &error));
          total += got;
        }
      while (got > 0);
    g_assert_no_error (error);
    peak = test_status_kib ("VmHWM:");
    g_test_message ("reader: %ld KiB above %ld KiB", peak - start, start);
    g_assert_cmpint (peak - start, <=, SLACK_KIB);
    g_assert_cmpuint (total, ==, N_VALUES);
    g_assert_true (serio_reader_get_finished (reader));
  }

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* A million one-value records: about what the bundle's entries need,
 * with values packed together, nothing per array beyond its entry. */
static void
test_tiny_records (void)
{
  g_autofree char *dir = g_dir_make_tmp ("serio-memory-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tiny.serio", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) back = NULL;
  long start, peak;

  if (test_slow_tool ())
    {
      g_test_skip ("memory figures mean nothing under a slow tool");
      return;
    }
  if (!reset_peak () || test_status_kib ("VmHWM:") < 0)
    {
      g_test_skip ("no /proc/self/clear_refs to reset the peak resident set");
      return;
    }

  {
    GString *text = g_string_sized_new (9 * 1000000);

    for (guint i = 0; i < 1000000; i++)
      g_string_append (text, "v1|a|1|1\n");
    g_assert_true (g_file_set_contents (path, text->str, text->len, NULL));
    g_string_free (text, TRUE);
  }

  g_assert_true (reset_peak ());
  start = test_status_kib ("VmRSS:");
  back = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  peak = test_status_kib ("VmHWM:");
  g_test_message ("from_file, 10^6 records: %ld KiB above %ld KiB", peak - start, start);
  g_assert_cmpuint (serio_bundle_get_n_arrays (back), ==, 1000000);
  g_assert_cmpint (peak - start, <=, 64 * 1000000 / 1024 + SLACK_KIB);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/stream-memory/10M", test_memory);
  g_test_add_func ("/stream-memory/tiny-records", test_tiny_records);

  return g_test_run ();
}
