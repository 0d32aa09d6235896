/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-memory-threads.c: the in-memory writer and reader on several threads
 *
 * Copyright 2026 The libserio authors
 *
 * to_bytes(), to_sealed_bytes() and from_bytes() format and parse long
 * arrays with one thread per processor. Each check here runs the same
 * call twice, with SERIO_THREADS=1 and with SERIO_THREADS unset (two
 * threads or more on a machine with several processors), and compares
 * the results: text byte for byte, values bit for bit, errors by code,
 * message and location.
 */

#include <string.h>

#include <gio/gio.h>
#include <serio.h>

#include "test-utils.h"

/* Sizes around the parallel writer's rounds of 65536-value blocks, and
 * long enough for the parser's windows of 1 MiB a thread. */
static const gsize sizes[] = {
  2 * 65536 - 1, 2 * 65536, 2 * 65536 + 1, 3 * 65536, 5 * 65536 + 17, 400000,
};

static gboolean
have_threads (void)
{
  return g_get_num_processors () > 1;
}

static void
set_threads (gboolean many)
{
  if (many)
    g_unsetenv ("SERIO_THREADS");
  else
    g_setenv ("SERIO_THREADS", "1", TRUE);
}

/* @n values that cycle through the 44,286 hard patterns of
 * ../shared/data (in an order of their own for each @n), NaNs made
 * canonical, every sixteenth replaced by random bits. */
static guint64 *
make_values (GArray *patterns,
             gsize   n)
{
  guint64 *bits = g_new (guint64, n);
  guint offset = g_test_rand_int_range (0, patterns->len);

  for (gsize i = 0; i < n; i++)
    {
      guint64 b = g_array_index (patterns, guint64, (i + offset) % patterns->len);

      if (i % 16 == 15)
        b = test_rand_u64 ();
      bits[i] = test_canonical_bits (b);
    }

  return bits;
}

static GBytes *
text_of (const guint64 *bits,
         gsize          n,
         gboolean       sealed,
         gboolean       many_threads)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();

  serio_bundle_append (bundle, "short", (const double *) bits, MIN (n, 7));
  serio_bundle_append (bundle, "long[]", (const double *) bits, n);
  serio_bundle_append (bundle, "", (const double *) bits + 1, n - 1);

  set_threads (many_threads);
  return sealed ? serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE) : serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
}

static void
test_identical (gconstpointer data)
{
  gboolean sealed = GPOINTER_TO_INT (data);
  g_autoptr(GArray) patterns = test_load_patterns ();

  g_test_summary ("to_bytes/to_sealed_bytes on several threads give the serial text byte for "
                  "byte, and from_bytes on several threads gives back every bit.");
  if (!have_threads ())
    {
      g_test_skip ("one processor: no parallel path");
      return;
    }

  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      gsize n = sizes[k];
      g_autofree guint64 *bits = make_values (patterns, n);
      g_autoptr(GBytes) serial = text_of (bits, n, sealed, FALSE);
      g_autoptr(GBytes) parallel = text_of (bits, n, sealed, TRUE);
      g_autoptr(SerioBundle) back = NULL;
      g_autoptr(GError) error = NULL;
      gsize n_values;
      const double *values;

      test_assert_same_bytes (parallel, serial);

      set_threads (TRUE);
      back = serio_bundle_new_from_bytes (parallel, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (serio_bundle_get_n_arrays (back), ==, 3);
      values = serio_bundle_get_values (back, 1, &n_values);
      g_assert_cmpuint (n_values, ==, n);
      test_assert_same_bits (values, bits, n);
      values = serio_bundle_get_values (back, 2, &n_values);
      g_assert_cmpuint (n_values, ==, n - 1);
      test_assert_same_bits (values, bits + 1, n - 1);
    }

  g_unsetenv ("SERIO_THREADS");
}

/* Parses @text with one thread and with several; both must fail alike. */
static void
assert_same_failure (const char *text,
                     gsize       len,
                     int         expected_code)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, len);
  g_autoptr(GError) serial = NULL;
  g_autoptr(GError) parallel = NULL;
  g_autoptr(SerioBundle) a = NULL;
  g_autoptr(SerioBundle) b = NULL;

  set_threads (FALSE);
  a = serio_bundle_new_from_bytes (bytes, &serial);
  set_threads (TRUE);
  b = serio_bundle_new_from_bytes (bytes, &parallel);
  g_unsetenv ("SERIO_THREADS");

  g_assert_null (a);
  g_assert_null (b);
  g_assert_error (serial, SERIO_ERROR, expected_code);
  g_assert_error (parallel, SERIO_ERROR, expected_code);
  g_assert_cmpstr (parallel->message, ==, serial->message);
  g_assert_cmpuint (serio_error_get_line (parallel), ==, serio_error_get_line (serial));
  g_assert_cmpuint (serio_error_get_value_index (parallel), ==, serio_error_get_value_index (serial));
}

/* The text of one record of @n tokens "1p-1"… ("5p-3" every seventh) with
 * count @count, after a first short record. */
static GString *
long_record (gsize   n,
             guint64 count)
{
  GString *text = g_string_new ("v1|first|1|1\n");

  g_string_append_printf (text, "v1|w|%" G_GUINT64_FORMAT "|", count);
  for (gsize i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (text, ',');
      g_string_append (text, i % 7 == 6 ? "5p-3" : "1p-1");
    }
  g_string_append_c (text, '\n');

  return text;
}

/* Overwrites the token of index @index (0-based, all 4 bytes long). */
static void
damage (GString    *text,
        gsize       index,
        const char *token)
{
  const char *values = strstr (text->str, "v1|w|");

  values = strchr (values + 5, '|') + 1;
  memcpy ((char *) values + index * 5, token, 4);
}

static void
test_errors (void)
{
  const gsize n = 600000;   /* about 3 MB of values: several windows */
  const gsize at[] = { 0, 1, 65535, 209714, 209715, 209716, n / 2, n - 2, n - 1 };

  g_test_summary ("from_bytes on several threads reports the same first bad token, "
                  "length error and seal mismatch as on one, wherever they are.");
  if (!have_threads ())
    {
      g_test_skip ("one processor: no parallel path");
      return;
    }

  for (gsize k = 0; k < G_N_ELEMENTS (at); k++)
    {
      g_autoptr(GString) text = long_record (n, n);

      damage (text, at[k], "1p-0");
      assert_same_failure (text->str, text->len, SERIO_ERROR_SYNTAX);
      /* a later error of another kind must not win */
      if (at[k] + 3 < n)
        damage (text, at[k] + 3, "+1p1");
      damage (text, at[k], "2p-1");
      assert_same_failure (text->str, text->len, SERIO_ERROR_SYNTAX);
    }

  /* a count too small, too large, far too large */
  {
    const guint64 counts[] = { n - 1, n + 1, 1, G_GUINT64_CONSTANT (10000000000) };

    for (gsize k = 0; k < G_N_ELEMENTS (counts); k++)
      {
        g_autoptr(GString) text = long_record (n, counts[k]);

        assert_same_failure (text->str, text->len, SERIO_ERROR_LENGTH);
      }
  }

  /* an empty token (two commas) deep in the record */
  {
    g_autoptr(GString) text = long_record (n, n);
    char *values = strchr (strstr (text->str, "v1|w|") + 5, '|') + 1;

    memcpy (values + 400001 * 5, ",,,,", 4);
    assert_same_failure (text->str, text->len, SERIO_ERROR_SYNTAX);
  }

  /* a sealed text with one digit changed deep in a long record */
  {
    g_autoptr(GArray) patterns = test_load_patterns ();
    g_autofree guint64 *bits = make_values (patterns, n);
    g_autoptr(GBytes) sealed = text_of (bits, n, TRUE, TRUE);
    gsize size;
    g_autofree char *copy = g_memdup2 (g_bytes_get_data (sealed, &size), g_bytes_get_size (sealed));
    char *p = copy + size / 2;
    char *m;

    /* A token m p -e whose m has three digits or more and a second digit
     * above 0: one less there leaves m odd, in range and canonical. */
    for (;; p++)
      {
        g_assert_true (p < copy + size);
        if (p[0] != 'p' || p[1] != '-')
          continue;
        for (m = p; m > copy && g_ascii_isdigit (m[-1]); m--)
          ;
        if (p - m >= 3 && m[1] > '0')
          break;
      }
    m[1]--;
    assert_same_failure (copy, size, SERIO_ERROR_INTEGRITY);
  }
}

/* Reads the arrays of @text with a reader, in pieces of random sizes of
 * 8192 values and more (so that pieces end inside the parallel windows),
 * into one array; returns the values of the record "w" or the error. */
static guint64 *
read_in_pieces (GBytes  *text,
                gsize    n,
                GError **error)
{
  g_autoptr(GInputStream) in = g_memory_input_stream_new_from_bytes (text);
  g_autoptr(SerioReader) reader = serio_reader_new (in);
  g_autofree guint64 *bits = g_new0 (guint64, n);

  while (serio_reader_next (reader, NULL, error))
    {
      gsize got = 0, piece;

      if (g_strcmp0 (serio_reader_get_name (reader), "long[]") != 0)
        {
          if (!serio_reader_skip_array (reader, NULL, error))
            return NULL;
          continue;
        }
      do
        {
          gsize want = MIN ((gsize) g_test_rand_int_range (8192, 100000), n - got);

          if (!serio_reader_read_values (reader, (double *) bits + got, want, &piece, NULL, error))
            return NULL;
          got += piece;
        }
      while (piece > 0 && got < n);
    }
  if (*error != NULL)
    return NULL;

  return g_steal_pointer (&bits);
}

static void
test_reader_pieces (void)
{
  const gsize n = 400000;
  g_autoptr(GArray) patterns = test_load_patterns ();
  g_autofree guint64 *bits = make_values (patterns, n);
  g_autoptr(GBytes) text = text_of (bits, n, TRUE, FALSE);

  g_test_summary ("A reader on several threads stops exactly where a piece of values ends, "
                  "inside a parallel window, and reports a bad token beyond it only when it "
                  "gets there.");
  if (!have_threads ())
    {
      g_test_skip ("one processor: no parallel path");
      return;
    }

  for (guint round = 0; round < 4; round++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree guint64 *back = NULL;

      set_threads (round % 2 == 1);
      back = read_in_pieces (text, n, &error);
      g_assert_no_error (error);
      test_assert_same_bits ((const double *) back, bits, n);
    }

  /* a bad token deep in the record: the same error as the in-memory parser */
  {
    g_autoptr(GString) damaged = long_record (n, n);
    g_autoptr(GBytes) whole = NULL;
    g_autoptr(GError) expected = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(SerioBundle) none = NULL;
    g_autofree guint64 *back = NULL;

    damage (damaged, 333333, "1p-0");
    whole = g_bytes_new (damaged->str, damaged->len);
    set_threads (FALSE);
    none = serio_bundle_new_from_bytes (whole, &expected);
    g_assert_null (none);
    set_threads (TRUE);
    g_string_replace (damaged, "v1|w|", "v1|long[]|", 1);
    {
      g_autoptr(GBytes) renamed = g_bytes_new (damaged->str, damaged->len);

      back = read_in_pieces (renamed, n, &error);
    }
    g_assert_null (back);
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
    g_assert_cmpuint (serio_error_get_value_index (error), ==, serio_error_get_value_index (expected));
    g_assert_cmpuint (serio_error_get_value_index (error), ==, 333334);
  }

  g_unsetenv ("SERIO_THREADS");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_data_func ("/memory-threads/identical/plain", GINT_TO_POINTER (FALSE), test_identical);
  g_test_add_data_func ("/memory-threads/identical/sealed", GINT_TO_POINTER (TRUE), test_identical);
  g_test_add_func ("/memory-threads/errors", test_errors);
  g_test_add_func ("/memory-threads/reader-pieces", test_reader_pieces);

  return g_test_run ();
}
