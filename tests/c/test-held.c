/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-held.c: behaviours that a mutation run (issue 20, item 13) found
 * held by no test
 *
 * Copyright 2026 The libserio authors
 *
 * Each test here failed with the bug it names planted in the library:
 * a parallel span that ends exactly at a comma, serio_writer_end()
 * flushing its stream, serio_writer_write_bytes() refusing a size that is
 * not a multiple of 8 before it begins an array, the snapshot that
 * serio_bundle_write_to_stream_async() writes, and the room
 * serio_bundle_new_from_stream() takes for a count it cannot trust.
 */

#include <math.h>
#include <string.h>

#include <gio/gio.h>
#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

/* ------------------------------------------------------------------ */
/* Spans that end exactly at a comma                                  */
/* ------------------------------------------------------------------ */

#define COMMA_VALUES 200000
/* The most bytes a token has. */
#define TOKEN_MAX    23

/* A value whose token has the most bytes a token can have,
 * -m p -1xxx with m odd and of 16 digits, such as
 * -7266000684139351p-1005. */
static guint64
longest_token_bits (void)
{
  guint64 m = G_GUINT64_CONSTANT (1000000000000000) +
              test_rand_u64 () % (G_GUINT64_CONSTANT (9007199254740992) -
                                  G_GUINT64_CONSTANT (1000000000000000));
  int e = -1000 - g_test_rand_int_range (0, 22);

  return test_bits_of (-ldexp ((double) (m | 1), e));
}

/* The plain text of one record "w" of @n such values, whose bits go to
 * @bits: every value and its comma take 24 bytes. */
static GBytes *
comma_text (guint64 *bits,
            gsize    n)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autofree char *head = g_strdup_printf ("v1|w|%" G_GSIZE_FORMAT "|", n);
  GBytes *text;

  for (gsize i = 0; i < n; i++)
    bits[i] = longest_token_bits ();
  serio_bundle_append (bundle, "w", (const double *) bits, n);
  text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);

  /* the premise: tokens of 23 bytes only */
  g_assert_cmpuint (g_bytes_get_size (text), ==, strlen (head) + n * (TOKEN_MAX + 1));
  g_assert_cmpmem (g_bytes_get_data (text, NULL), strlen (head), head, strlen (head));

  return text;
}

/* Reads the record of @text with a reader on 2 threads, in pieces of
 * @piece values, or of random sizes from 8192 on when @piece is 0. */
static void
read_comma_text (GBytes        *text,
                 const guint64 *bits,
                 gsize          n,
                 gsize          piece)
{
  g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (text);
  g_autoptr(SerioReader) reader = serio_reader_new (in);
  g_autofree double *values = g_new0 (double, n);
  g_autoptr(GError) error = NULL;
  gsize got = 0;

  serio_reader_set_threads (reader, 2);
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (serio_reader_get_n_values (reader), ==, n);

  while (got < n)
    {
      gsize want = piece != 0 ? piece : (gsize) g_test_rand_int_range (8192, 30000);
      gsize n_read;
      gboolean ok;

      want = MIN (want, n - got);
      ok = serio_reader_read_values (reader, values + got, want, &n_read, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_cmpuint (n_read, ==, want);
      got += n_read;
    }
  test_assert_same_bits (values, bits, n);

  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_reader_get_finished (reader));
}

static void
test_comma_span (void)
{
  g_autofree guint64 *bits = g_new (guint64, COMMA_VALUES);
  g_autoptr(GBytes) text = comma_text (bits, COMMA_VALUES);

  g_test_summary ("A record of 23-byte tokens only, whose parallel spans end exactly at a comma, "
                  "reads back bit for bit through from_bytes and through a reader on 2 threads "
                  "in pieces of 8192 values and more.");

  g_unsetenv ("SERIO_THREADS");

  /* 8192 values a piece: the span of 24 bytes a value holds exactly the
   * values wanted and ends at the comma after them */
  read_comma_text (text, bits, COMMA_VALUES, 8192);
  read_comma_text (text, bits, COMMA_VALUES, 0);
  if (!test_slow_tool ())
    {
      read_comma_text (text, bits, COMMA_VALUES, 3 * 8192);
      read_comma_text (text, bits, COMMA_VALUES, 0);
    }

  if (g_get_num_processors () < 2)
    {
      g_test_skip ("one processor: from_bytes parses on one thread");
      return;
    }

  /* the text as it is, and sealed: spans of 2 MiB end at a comma */
  for (guint sealed = 0; sealed < 2; sealed++)
    {
      g_autoptr(GBytes) input = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) back = NULL;
      const double *values;
      gsize n_values;

      if (sealed)
        {
          g_autoptr(SerioBundle) bundle = serio_bundle_new ();

          serio_bundle_append (bundle, "w", (const double *) bits, COMMA_VALUES);
          input = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
        }
      else
        {
          input = g_bytes_ref (text);
        }

      back = serio_bundle_new_from_bytes (input, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (serio_bundle_get_n_arrays (back), ==, 1);
      values = serio_bundle_get_values (back, 0, &n_values);
      g_assert_cmpuint (n_values, ==, COMMA_VALUES);
      test_assert_same_bits (values, bits, COMMA_VALUES);
    }
}

/* ------------------------------------------------------------------ */
/* finish() flushes the stream                                        */
/* ------------------------------------------------------------------ */

/* A memory stream whose flush fails. */
#define TEST_TYPE_FLUSH_FAILING_STREAM (test_flush_failing_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestFlushFailingStream, test_flush_failing_stream,
                      TEST, FLUSH_FAILING_STREAM, GMemoryOutputStream)

struct _TestFlushFailingStream
{
  GMemoryOutputStream parent_instance;
  guint               n_flushes;
};

G_DEFINE_FINAL_TYPE (TestFlushFailingStream, test_flush_failing_stream, G_TYPE_MEMORY_OUTPUT_STREAM)

static gboolean
failing_flush (GOutputStream  *stream,
               GCancellable   *cancellable,
               GError        **error)
{
  TEST_FLUSH_FAILING_STREAM (stream)->n_flushes++;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE, "The flush failed (test)");
  return FALSE;
}

static void
test_flush_failing_stream_class_init (TestFlushFailingStreamClass *klass)
{
  G_OUTPUT_STREAM_CLASS (klass)->flush = failing_flush;
}

static void
test_flush_failing_stream_init (TestFlushFailingStream *self)
{
}

/* Some arrays, and the sealed text a bundle gives for them. */
static void
write_some_arrays (SerioWriter  *writer,
                   SerioBundle  *bundle)
{
  g_autoptr(GError) error = NULL;
  double values[1000];

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    values[i] = test_double_of (test_canonical_bits (test_rand_u64 ()));

  for (guint k = 0; k < 5; k++)
    {
      g_autofree char *name = g_strdup_printf ("w%u", k);

      g_assert_true (serio_writer_write_array (writer, name, values + k, G_N_ELEMENTS (values) - k,
                                               NULL, &error));
      g_assert_no_error (error);
      serio_bundle_append (bundle, name, values + k, G_N_ELEMENTS (values) - k);
    }
}

static GBytes *
memory_stream_bytes (GOutputStream *memory)
{
  return g_bytes_new (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (memory)),
                      g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (memory)));
}

static void
test_finish_flushes (void)
{
  g_autoptr(GOutputStream) base = g_memory_output_stream_new_resizable ();
  g_autoptr(GOutputStream) buffered = g_buffered_output_stream_new_sized (base, 8 * 1024 * 1024);
  g_autoptr(SerioWriter) writer = serio_writer_new (buffered, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("serio_writer_end() flushes its stream: over a GBufferedOutputStream the "
                  "whole text reaches the base stream, which stays open.");

  write_some_arrays (writer, bundle);
  expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_assert_cmpuint (g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (base)), ==, 0);

  g_assert_true (serio_writer_end (writer, NULL, &error));
  g_assert_no_error (error);
  text = memory_stream_bytes (base);
  test_assert_same_bytes (text, expected);
  g_assert_false (g_output_stream_is_closed (buffered));
  g_assert_false (g_output_stream_is_closed (base));
}

static void
test_finish_flush_fails (void)
{
  g_autoptr(GOutputStream) out = g_object_new (TEST_TYPE_FLUSH_FAILING_STREAM,
                                               "realloc-function", g_realloc,
                                               "destroy-function", g_free, NULL);
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) again = NULL;
  double one = 1.0;

  g_test_summary ("A stream whose flush fails fails serio_writer_end() with the stream's "
                  "error, and the writer stays broken.");

  write_some_arrays (writer, bundle);
  g_assert_false (serio_writer_end (writer, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE);
  g_assert_cmpstr (error->message, ==, "The flush failed (test)");
  g_assert_cmpuint (TEST_FLUSH_FAILING_STREAM (out)->n_flushes, ==, 1);

  /* broken: every later call gives the same error */
  g_assert_false (serio_writer_write_array (writer, "late", &one, 1, NULL, &again));
  g_assert_error (again, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE);
  g_clear_error (&again);
  g_assert_false (serio_writer_end (writer, NULL, &again));
  g_assert_error (again, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE);
}

/* ------------------------------------------------------------------ */
/* write_bytes() with a size that is not a multiple of 8              */
/* ------------------------------------------------------------------ */

static void
test_write_bytes_odd_size (void)
{
  const gsize bad_sizes[] = { 1, 7, 9, 12, 8 * 1000 + 3 };
  g_autofree double *values = g_new (double, 2000);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, SERIO_SAVE_FLAGS_NONE);
  g_autoptr(GBytes) expected = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("serio_writer_write_bytes() with a size that is not a multiple of 8 fails with "
                  "G_IO_ERROR_INVALID_ARGUMENT, begins no array, and the text is exactly as if "
                  "the call never happened.");

  for (gsize i = 0; i < 2000; i++)
    values[i] = test_double_of (test_canonical_bits (test_rand_u64 ()));

  for (gsize k = 0; k < G_N_ELEMENTS (bad_sizes); k++)
    {
      g_autoptr(GBytes) bad = g_bytes_new (values, bad_sizes[k]);
      g_autoptr(GBytes) good = g_bytes_new (values + k, (k + 1) * 300 * sizeof (double));
      g_autofree char *name = g_strdup_printf ("a%" G_GSIZE_FORMAT, k);

      g_assert_false (serio_writer_write_bytes (writer, "bad", bad, NULL, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_cmpuint (serio_writer_get_n_missing (writer), ==, 0);

      /* the writer goes on: a whole array, then one in two calls */
      g_assert_true (serio_writer_write_bytes (writer, name, good, NULL, &error));
      g_assert_no_error (error);
      serio_bundle_append_bytes (bundle, name, good);

      g_assert_true (serio_writer_begin_array (writer, "b", 3, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (serio_writer_add_values (writer, values + 10, 3, NULL, &error));
      g_assert_no_error (error);
      serio_bundle_append (bundle, "b", values + 10, 3);
    }

  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);
  text = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
  expected = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  test_assert_same_bytes (text, expected);
}

/* ------------------------------------------------------------------ */
/* write_to_stream_async() writes a snapshot                          */
/* ------------------------------------------------------------------ */

static void
test_async_snapshot (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  double values[64];

  g_test_summary ("serio_bundle_write_to_stream_async() writes the bundle as it was when called: "
                  "an array appended at once after the call, 200 times, is never in the text.");

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    values[i] = test_double_of (test_canonical_bits (test_rand_u64 ()));
  serio_bundle_append (bundle, "first", values, G_N_ELEMENTS (values));

  for (guint round = 0; round < 200; round++)
    {
      g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) expected = NULL;
      g_autoptr(GBytes) text = NULL;
      g_autofree char *name = g_strdup_printf ("later%u", round);
      SerioSaveFlags flags = round % 2 == 0 ? SERIO_SAVE_FLAGS_NONE : SERIO_SAVE_FLAGS_PLAIN;

      expected = flags == SERIO_SAVE_FLAGS_PLAIN ? serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN) :
                                                   serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
      serio_bundle_write_to_stream_async (bundle, out, flags, G_PRIORITY_DEFAULT, NULL,
                                          test_store_result, &result);
      serio_bundle_append (bundle, name, values + round % 32, 1 + round % 32);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);

      g_assert_true (serio_bundle_write_to_stream_finish (bundle, result, &error));
      g_assert_no_error (error);
      text = memory_stream_bytes (out);
      test_assert_same_bytes (text, expected);
    }
}

/* ------------------------------------------------------------------ */
/* new_from_stream() and a count it cannot trust                      */
/* ------------------------------------------------------------------ */

/* Below what reserving the declared 10^8 values would take (763 MiB). */
#define HOSTILE_GROWTH_KIB (64 * 1024)

/* In a fresh process, so that its peaks are those of this call: the
 * peak of the address space counts room reserved and never touched. */
static void
hostile_count_in_subprocess (void)
{
  static const char text[] = "v1|w|100000000|1,2\n";
  g_autoptr(GInputStream) in = g_memory_input_stream_new_from_data (text, strlen (text), NULL);
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GError) error = NULL;
  long size_before = test_status_kib ("VmSize:");
  long rss_before = test_status_kib ("VmRSS:");
  long peak, rss_peak;

  g_assert_cmpint (size_before, >, 0);
  if (test_status_kib ("VmPeak:") - size_before >= HOSTILE_GROWTH_KIB)
    {
      /* an earlier peak (a sanitizer's start, say) would hide this call's */
      g_test_skip ("the address space was larger before the call than the bound allows");
      return;
    }
  bundle = serio_bundle_new_from_stream (in, NULL, &error);
  peak = test_status_kib ("VmPeak:");
  rss_peak = test_status_kib ("VmHWM:");

  g_assert_null (bundle);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
  g_assert_cmpuint (serio_error_get_line (error), ==, 1);

  g_test_message ("address space: peak %ld KiB above %ld KiB; resident: peak %ld KiB, %ld KiB before",
                  peak - size_before, size_before, rss_peak, rss_before);
  g_assert_cmpint (peak - size_before, <, HOSTILE_GROWTH_KIB);
  g_assert_cmpint (rss_peak - rss_before, <, HOSTILE_GROWTH_KIB);
}

static void
test_hostile_count (void)
{
  g_test_summary ("new_from_stream() on v1|w|100000000|1,2 from a memory stream fails with "
                  "SERIO_ERROR_LENGTH without reserving room for the declared count.");

  if (g_test_subprocess ())
    {
      hostile_count_in_subprocess ();
      return;
    }
  if (test_status_kib ("VmPeak:") < 0)
    {
      g_test_skip ("no /proc/self/status to read the peak address space from");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/held/comma-span", test_comma_span);
  g_test_add_func ("/held/finish-flushes", test_finish_flushes);
  g_test_add_func ("/held/finish-flush-fails", test_finish_flush_fails);
  g_test_add_func ("/held/write-bytes-odd-size", test_write_bytes_odd_size);
  g_test_add_func ("/held/async-snapshot", test_async_snapshot);
  g_test_add_func ("/held/hostile-count", test_hostile_count);

  return g_test_run ();
}
