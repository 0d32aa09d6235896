/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-api.c: the calls added for the 1.0 API: progress of loads and
 * saves, readers of files and their error location, the incremental
 * checksum and the version of the library at run time
 *
 * Copyright 2026 The libserio authors
 */

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <serio.h>

#include "test-utils.h"

/* Enough values for a text of several megabytes: several progress reports
 * from a reader (one a megabyte) and from a save (one per 8 MiB of
 * values). */
#define N_BIG (3 * 1024 * 1024)

typedef struct
{
  GArray  *done;          /* guint64 */
  GArray  *total;
  GThread *thread;        /* where the reports came from */
  gboolean same_thread;
} Progress;

static void
progress_init (Progress *progress)
{
  progress->done = g_array_new (FALSE, FALSE, sizeof (guint64));
  progress->total = g_array_new (FALSE, FALSE, sizeof (guint64));
  progress->thread = g_thread_self ();
  progress->same_thread = TRUE;
}

static void
progress_clear (Progress *progress)
{
  g_clear_pointer (&progress->done, g_array_unref);
  g_clear_pointer (&progress->total, g_array_unref);
}

static void
record_progress (guint64  done,
                 guint64  total,
                 gpointer data)
{
  Progress *progress = data;

  g_array_append_val (progress->done, done);
  g_array_append_val (progress->total, total);
  if (g_thread_self () != progress->thread)
    progress->same_thread = FALSE;
}

/* The reports form a sequence that never goes down, all against the one
 * @total, the last at it; at least @min_reports of them. */
static void
assert_progress (Progress *progress,
                 guint64   total,
                 guint     min_reports)
{
  g_assert_true (progress->same_thread);
  g_assert_cmpuint (progress->done->len, >=, min_reports);
  for (guint i = 0; i < progress->done->len; i++)
    {
      g_assert_cmpuint (g_array_index (progress->total, guint64, i), ==, total);
      g_assert_cmpuint (g_array_index (progress->done, guint64, i), <=, total);
      if (i > 0)
        g_assert_cmpuint (g_array_index (progress->done, guint64, i), >,
                          g_array_index (progress->done, guint64, i - 1));
    }
  g_assert_cmpuint (g_array_index (progress->done, guint64, progress->done->len - 1), ==, total);
}

static SerioBundle *
make_big_bundle (void)
{
  SerioBundle *bundle = serio_bundle_new ();
  g_autofree double *values = g_new (double, N_BIG);

  for (gsize i = 0; i < N_BIG; i++)
    values[i] = ldexp ((double) (i * 2654435761u % 1000003), -(int) (i % 40));
  serio_bundle_append (bundle, "big", values, N_BIG);
  serio_bundle_append (bundle, "small", values, 10);
  serio_bundle_append (bundle, "empty", NULL, 0);

  return bundle;
}

static char *
make_path (const char *basename)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("serio-api-XXXXXX", &error);

  g_assert_no_error (error);
  return g_build_filename (dir, basename, NULL);
}

static void
remove_path (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_no_errno (g_unlink (path));
  g_assert_no_errno (g_rmdir (dir));
}

static guint64
file_size (const char *path)
{
  GStatBuf st;

  g_assert_no_errno (g_stat (path, &st));
  return (guint64) st.st_size;
}

static void
test_progress_sync (void)
{
  g_autoptr(SerioBundle) bundle = make_big_bundle ();
  g_autofree char *path = make_path ("big.serio");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(SerioBundle) loaded = NULL;
  g_autoptr(GError) error = NULL;
  Progress saving, loading;
  guint64 value_bytes = (N_BIG + 10) * sizeof (double);

  g_test_summary ("save_to_file and new_from_file report their progress in the "
                  "calling thread: bytes of values written against those of the "
                  "bundle, bytes read against the file's size, never going down and "
                  "ending at the total.");

  progress_init (&saving);
  g_assert_true (serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL,
                                            record_progress, &saving, &error));
  g_assert_no_error (error);
  /* 3 Mi values in pieces of 1 Mi, then the two short arrays */
  assert_progress (&saving, value_bytes, 3);

  progress_init (&loading);
  loaded = serio_bundle_new_from_file (file, NULL, record_progress, &loading, &error);
  g_assert_no_error (error);
  g_assert_true (serio_bundle_equal (loaded, bundle));
  /* a megabyte a read */
  assert_progress (&loading, file_size (path), file_size (path) / (1024 * 1024));

  progress_clear (&saving);
  progress_clear (&loading);
  remove_path (path);
}

/* An empty bundle: a save reports (0, 0) once, a load (0, 0) never: a
 * read of nothing is no progress. */
static void
test_progress_empty (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *path = make_path ("empty.serio");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  Progress saving;

  progress_init (&saving);
  g_assert_true (serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_PLAIN, NULL,
                                            record_progress, &saving, &error));
  g_assert_no_error (error);
  assert_progress (&saving, 0, 1);
  g_assert_cmpuint (saving.done->len, ==, 1);
  g_assert_cmpuint (file_size (path), ==, 0);

  progress_clear (&saving);
  remove_path (path);
}

typedef struct
{
  GMainLoop   *loop;
  Progress     progress;
  guint        reports_at_callback;
  gboolean     notified;
  SerioBundle *loaded;
  gboolean     saved;
} AsyncRun;

static void
async_progress (guint64  done,
                guint64  total,
                gpointer data)
{
  AsyncRun *run = data;

  /* never after the result */
  g_assert_false (run->saved);
  g_assert_null (run->loaded);
  record_progress (done, total, &run->progress);
}

static void
async_notify (gpointer data)
{
  AsyncRun *run = data;

  g_assert_false (run->notified);
  run->notified = TRUE;
}

static void
saved_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  AsyncRun *run = data;
  g_autoptr(GError) error = NULL;

  run->saved = serio_bundle_save_to_file_finish (SERIO_BUNDLE (source), result, &error);
  g_assert_no_error (error);
  run->reports_at_callback = run->progress.done->len;
  g_main_loop_quit (run->loop);
}

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  AsyncRun *run = data;
  g_autoptr(GError) error = NULL;

  run->loaded = serio_bundle_new_from_file_finish (result, &error);
  g_assert_no_error (error);
  run->reports_at_callback = run->progress.done->len;
  g_main_loop_quit (run->loop);
}

/* Iterates the context a while longer: a report or a notify that came
 * after the result would show there. */
static void
drain (GMainContext *context)
{
  gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 5;

  while (g_get_monotonic_time () < until)
    if (!g_main_context_iteration (context, FALSE))
      g_usleep (1000);
}

static void
test_progress_async (void)
{
  g_autoptr(SerioBundle) bundle = make_big_bundle ();
  g_autofree char *path = make_path ("async.serio");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (context, FALSE);
  AsyncRun save = { loop, { 0 }, 0, FALSE, NULL, FALSE };
  AsyncRun load = { loop, { 0 }, 0, FALSE, NULL, FALSE };

  g_test_summary ("The asynchronous calls report their progress in the main "
                  "context of the thread that started them (here a context of "
                  "its own), every report before the result, and free the "
                  "callback's data once.");

  g_main_context_push_thread_default (context);

  progress_init (&save.progress);
  serio_bundle_save_to_file_async (bundle, file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL,
                                   async_progress, &save, async_notify, saved_cb, &save);
  g_main_loop_run (loop);
  g_assert_true (save.saved);
  drain (context);
  g_assert_cmpuint (save.progress.done->len, ==, save.reports_at_callback);
  assert_progress (&save.progress, (N_BIG + 10) * sizeof (double), 3);
  g_assert_true (save.notified);

  progress_init (&load.progress);
  serio_bundle_new_from_file_async (file, G_PRIORITY_DEFAULT, NULL,
                                    async_progress, &load, async_notify, loaded_cb, &load);
  g_main_loop_run (loop);
  g_assert_nonnull (load.loaded);
  g_assert_true (serio_bundle_equal (load.loaded, bundle));
  drain (context);
  g_assert_cmpuint (load.progress.done->len, ==, load.reports_at_callback);
  assert_progress (&load.progress, file_size (path), 2);
  g_assert_true (load.notified);

  g_main_context_pop_thread_default (context);

  g_clear_object (&load.loaded);
  progress_clear (&save.progress);
  progress_clear (&load.progress);
  remove_path (path);
}

/* A callback given without a notify of its data, and a notify without a
 * callback, are both fine. */
static void
test_progress_async_null (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *path = make_path ("null.serio");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  AsyncRun run = { loop, { 0 }, 0, FALSE, NULL, FALSE };

  progress_init (&run.progress);
  serio_bundle_save_to_file_async (bundle, file, SERIO_SAVE_FLAGS_NONE, G_PRIORITY_DEFAULT, NULL,
                                   NULL, &run, async_notify, saved_cb, &run);
  /* no callback: the data is freed at once */
  g_assert_true (run.notified);
  g_main_loop_run (loop);
  g_assert_true (run.saved);
  g_assert_cmpuint (run.progress.done->len, ==, 0);

  progress_clear (&run.progress);
  remove_path (path);
}

static void
test_reader_progress (void)
{
  g_autoptr(SerioBundle) bundle = make_big_bundle ();
  g_autoptr(GBytes) text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GInputStream) stream = g_memory_input_stream_new_from_bytes (text);
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autoptr(SerioBundle) loaded = NULL;
  g_autoptr(GError) error = NULL;
  Progress reading;

  g_test_summary ("A reader of a stream of unknown size reports the bytes read "
                  "against a total of 0, ending at the text's length.");

  g_assert_cmpuint (serio_reader_get_size (reader), ==, 0);
  progress_init (&reading);
  serio_reader_set_progress_callback (reader, record_progress, &reading, NULL);
  loaded = serio_bundle_new_from_reader (reader, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (serio_bundle_equal (loaded, bundle));
  g_assert_cmpuint (serio_reader_get_bytes_read (reader), ==, g_bytes_get_size (text));
  g_assert_cmpuint (reading.done->len, >=, 2);
  for (guint i = 0; i < reading.done->len; i++)
    {
      g_assert_cmpuint (g_array_index (reading.total, guint64, i), ==, 0);
      if (i > 0)
        g_assert_cmpuint (g_array_index (reading.done, guint64, i), >,
                          g_array_index (reading.done, guint64, i - 1));
    }
  g_assert_cmpuint (g_array_index (reading.done, guint64, reading.done->len - 1), ==,
                    g_bytes_get_size (text));
  progress_clear (&reading);
}

static void
test_writer_progress (void)
{
  g_autoptr(SerioBundle) bundle = make_big_bundle ();
  g_autoptr(GBytes) expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (stream, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) written = NULL;
  g_autoptr(GError) error = NULL;
  Progress writing;
  gsize n_values;
  const double *values = serio_bundle_get_values (bundle, 0, &n_values);

  g_test_summary ("A writer reports the bytes it gave its stream (total 0: it "
                  "cannot know what follows), ending at the text's length.");

  progress_init (&writing);
  serio_writer_set_progress_callback (writer, record_progress, &writing, NULL);
  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      values = serio_bundle_get_values (bundle, i, &n_values);
      g_assert_true (serio_writer_write_array (writer, serio_bundle_get_name (bundle, i), values,
                                               n_values, NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  written = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (stream));
  test_assert_same_bytes (written, expected);

  g_assert_cmpuint (serio_writer_get_bytes_written (writer), ==, g_bytes_get_size (expected));
  g_assert_cmpuint (writing.done->len, >=, 2);
  for (guint i = 0; i < writing.done->len; i++)
    {
      g_assert_cmpuint (g_array_index (writing.total, guint64, i), ==, 0);
      if (i > 0)
        g_assert_cmpuint (g_array_index (writing.done, guint64, i), >,
                          g_array_index (writing.done, guint64, i - 1));
    }
  g_assert_cmpuint (g_array_index (writing.done, guint64, writing.done->len - 1), ==,
                    g_bytes_get_size (expected));
  progress_clear (&writing);
}

static void
test_reader_for_file (void)
{
  static const char bad[] = "v1|a|1|1\n\r\nv1|b|3|1,2,01\n";
  g_autofree char *path = make_path ("bad.serio");
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFile) missing = g_file_new_for_path ("/nonexistent/serio/model.serio");
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(SerioReader) none = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("serio_reader_new_for_file opens a file, knows its size, and a "
                  "reader that failed keeps the line and value index of the error "
                  "as data, the same as the error's; an unopenable file is a "
                  "G_IO_ERROR at once.");

  none = serio_reader_new_for_file (missing, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (path, bad, -1, NULL));
  reader = serio_reader_new_for_file (file, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (serio_reader_get_size (reader), ==, strlen (bad));
  g_assert_cmpuint (serio_reader_get_error_line (reader), ==, 0);

  bundle = serio_bundle_new_from_reader (reader, NULL, &error);
  g_assert_null (bundle);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
  g_assert_cmpuint (serio_reader_get_error_line (reader), ==, 3);
  g_assert_cmpuint (serio_reader_get_error_value_index (reader), ==, 3);
  g_assert_cmpuint (serio_error_get_line (error), ==, serio_reader_get_error_line (reader));
  g_assert_cmpuint (serio_error_get_value_index (error), ==,
                    serio_reader_get_error_value_index (reader));
  g_clear_error (&error);

  /* a later call fails the same way, at the same place */
  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
  g_assert_cmpuint (serio_reader_get_error_line (reader), ==, 3);

  g_clear_object (&reader);
  remove_path (path);
}

static void
test_version (void)
{
  g_test_summary ("The run-time version is that of the headers (the test runs "
                  "with the library it was built with), and serio_check_version "
                  "accepts what it should.");

  g_assert_cmpuint (serio_get_major_version (), ==, SERIO_MAJOR_VERSION);
  g_assert_cmpuint (serio_get_minor_version (), ==, SERIO_MINOR_VERSION);
  g_assert_cmpuint (serio_get_micro_version (), ==, SERIO_MICRO_VERSION);

  g_assert_null (serio_check_version (SERIO_MAJOR_VERSION, SERIO_MINOR_VERSION, SERIO_MICRO_VERSION));
  g_assert_null (serio_check_version (SERIO_MAJOR_VERSION, 0, 0));
  g_assert_nonnull (serio_check_version (SERIO_MAJOR_VERSION + 1, 0, 0));
  g_assert_nonnull (serio_check_version (SERIO_MAJOR_VERSION, SERIO_MINOR_VERSION + 1, 0));
  g_assert_nonnull (serio_check_version (SERIO_MAJOR_VERSION, SERIO_MINOR_VERSION,
                                         SERIO_MICRO_VERSION + 1));
  if (SERIO_MAJOR_VERSION > 0)
    g_assert_nonnull (serio_check_version (SERIO_MAJOR_VERSION - 1, 0, 0));
}

static void
test_checksum_vectors (void)
{
  g_autofree char *path = test_data_filename ("fnv1a64_vectors.tsv");
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) rows = NULL;
  guint n_rows = 0;

  g_test_summary ("SerioChecksum against the 203 FNV-1a 64 vectors, fed whole, "
                  "byte by byte and in two parts at every split, through a copy "
                  "made midway, and after a reset.");

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  rows = g_strsplit (contents, "\n", -1);
  for (guint i = 0; rows[i] != NULL; i++)
    {
      g_auto(GStrv) columns = NULL;
      g_autoptr(GByteArray) input = NULL;
      const guint8 *data;
      g_autoptr(SerioChecksum) whole = serio_checksum_new ();
      g_autoptr(SerioChecksum) bytewise = serio_checksum_new ();
      guint64 hash;
      guint32 folded;

      if (rows[i][0] == '#' || rows[i][0] == '\0')
        continue;

      columns = g_strsplit (rows[i], "\t", -1);
      g_assert_cmpuint (g_strv_length (columns), ==, 3);
      input = test_decode_hex (columns[0]);
      hash = g_ascii_strtoull (columns[1], NULL, 16);
      folded = (guint32) g_ascii_strtoull (columns[2], NULL, 16);
      /* The empty input's array has no data: no offset from NULL. */
      data = input->len > 0 ? input->data : (const guint8 *) "";

      serio_checksum_update (whole, input->data, input->len);
      g_assert_cmphex (serio_checksum_get_value64 (whole), ==, hash);
      g_assert_cmphex (serio_checksum_get_value (whole), ==, folded);

      for (guint j = 0; j < input->len; j++)
        serio_checksum_update (bytewise, data + j, 1);
      g_assert_cmphex (serio_checksum_get_value64 (bytewise), ==, hash);

      for (guint split = 0; split <= input->len; split++)
        {
          g_autoptr(SerioChecksum) parts = serio_checksum_new ();
          g_autoptr(SerioChecksum) copy = NULL;

          serio_checksum_update (parts, data, split);
          copy = serio_checksum_copy (parts);
          serio_checksum_update (parts, data + split, input->len - split);
          serio_checksum_update (copy, data + split, input->len - split);
          g_assert_cmphex (serio_checksum_get_value64 (parts), ==, hash);
          g_assert_cmphex (serio_checksum_get_value (copy), ==, folded);
        }

      serio_checksum_reset (whole);
      serio_checksum_update (whole, input->data, input->len);
      g_assert_cmphex (serio_checksum_get_value64 (whole), ==, hash);
      n_rows++;
    }
  g_assert_cmpuint (n_rows, ==, 203);
}

static void
test_checksum_text (void)
{
  g_autoptr(SerioChecksum) checksum = serio_checksum_new ();
  g_autoptr(GBytes) foobar = g_bytes_new_static ("foobar", 6);

  g_test_summary ("A length of -1 takes a NUL-terminated string; the value is "
                  "that of serio_compute_checksum(); an empty checksum is FNV-1a's "
                  "offset basis.");

  g_assert_cmphex (serio_checksum_get_value64 (checksum), ==, G_GUINT64_CONSTANT (0xcbf29ce484222325));
  g_assert_cmphex (serio_checksum_get_value (checksum), ==, 0x4fd0bfc1);
  serio_checksum_update (checksum, (const guint8 *) "foo", -1);
  serio_checksum_update (checksum, (const guint8 *) "bar", -1);
  serio_checksum_update (checksum, NULL, 0);
  g_assert_cmphex (serio_checksum_get_value (checksum), ==, 0x72ad2699);
  g_assert_cmphex (serio_checksum_get_value (checksum), ==, serio_compute_checksum ("foobar"));
  g_assert_cmphex (serio_checksum_get_value (checksum), ==, serio_compute_checksum_for_bytes (foobar));
  g_assert_true (G_TYPE_IS_BOXED (SERIO_TYPE_CHECKSUM));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/api/progress/sync", test_progress_sync);
  g_test_add_func ("/api/progress/empty", test_progress_empty);
  g_test_add_func ("/api/progress/async", test_progress_async);
  g_test_add_func ("/api/progress/async-null", test_progress_async_null);
  g_test_add_func ("/api/progress/reader", test_reader_progress);
  g_test_add_func ("/api/progress/writer", test_writer_progress);
  g_test_add_func ("/api/reader/for-file", test_reader_for_file);
  g_test_add_func ("/api/version", test_version);
  g_test_add_func ("/api/checksum/vectors", test_checksum_vectors);
  g_test_add_func ("/api/checksum/text", test_checksum_text);

  return g_test_run ();
}
