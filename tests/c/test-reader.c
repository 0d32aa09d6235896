/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-reader.c: SerioReader against the in-memory reader
 *
 * Copyright 2026 The libserio authors
 *
 * Every text here is read twice: whole, by serio_bundle_new_from_bytes(), and
 * through a SerioReader fed one byte at a time or in random pieces, with a
 * small buffer or the default one, its values taken in random pieces. Both
 * must accept the same arrays, or fail with the same code and the same
 * message (so the same line, value index and token text).
 */

#include <string.h>

#include <gio/gio.h>
#include <serio.h>

#include "test-stream-utils.h"
#include "test-utils.h"

/* The rejection tables of the in-memory reader's tests, used as they are. */
int test_reject_main (int argc, char **argv);
#define main test_reject_main
#include "test-reject.c"
#undef main

#define DEFAULT_BUFFER 0   /* the reader's own default */

/* Reads @text through a reader; values in random pieces, through both
 * calls. */
static SerioBundle *
rd_read (GBytes    *text,
         gssize     chunk,
         guint      buffer_size,
         gboolean  *sealed,
         GError   **error)
{
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (text, chunk);
  g_autoptr(SerioReader) reader = buffer_size == DEFAULT_BUFFER ?
    serio_reader_new (stream) :
    g_object_new (SERIO_TYPE_READER, "stream", stream, "buffer-size", buffer_size, NULL);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  GError *local_error = NULL;

  /* 1 to 4 threads: the result must not depend on it */
  serio_reader_set_threads (reader, g_test_rand_int_range (1, 5));

  while (serio_reader_next (reader, NULL, &local_error))
    {
      guint64 n = serio_reader_get_n_values (reader);
      g_autoptr(GArray) values = g_array_new (FALSE, FALSE, sizeof (double));

      g_assert_nonnull (serio_reader_get_name (reader));
      g_assert_false (serio_reader_get_finished (reader));
      for (;;)
        {
          gsize piece = g_test_rand_int_range (0, 4) == 0 ? 1 << 22 : (gsize) g_test_rand_int_range (1, 40);
          gsize got;

          if (g_test_rand_bit ())
            {
              double buf[40];

              piece = MIN (piece, G_N_ELEMENTS (buf));
              if (!serio_reader_read_values (reader, buf, piece, &got, NULL, &local_error))
                break;
              g_array_append_vals (values, buf, got);
            }
          else
            {
              g_autoptr(GBytes) bytes = serio_reader_read_bytes (reader, piece, NULL, &local_error);

              if (bytes == NULL)
                break;
              got = g_bytes_get_size (bytes) / sizeof (double);
              g_array_append_vals (values, g_bytes_get_data (bytes, NULL), got);
            }
          if (got == 0)
            break;
          g_assert_cmpuint (serio_reader_get_n_left (reader), ==, n - values->len);
        }
      if (local_error != NULL)
        break;

      g_assert_cmpuint (values->len, ==, n);
      serio_bundle_append (bundle, serio_reader_get_name (reader),
                           (const double *) (gconstpointer) values->data, values->len);
    }

  if (local_error != NULL)
    {
      g_assert_false (serio_reader_get_finished (reader));
      /* Every later call gives the same error. */
      {
        g_autoptr(GError) again = NULL;

        g_assert_false (serio_reader_next (reader, NULL, &again));
        g_assert_nonnull (again);
        g_assert_cmpstr (again->message, ==, local_error->message);
      }
      g_propagate_error (error, local_error);
      return NULL;
    }

  g_assert_true (serio_reader_get_finished (reader));
  g_assert_false (serio_reader_next (reader, NULL, &local_error));
  g_assert_no_error (local_error);
  if (sealed != NULL)
    *sealed = serio_reader_get_sealed (reader);

  return g_steal_pointer (&bundle);
}

/* Asserts that @actual is @expected, and the same location as data. */
static void
assert_same_error (const GError *actual,
                   const GError *expected)
{
  g_assert_nonnull (actual);
  g_assert_true (actual->domain == expected->domain);
  g_assert_cmpint (actual->code, ==, expected->code);
  g_assert_cmpstr (actual->message, ==, expected->message);
  g_assert_cmpuint (serio_error_get_line (actual), ==, serio_error_get_line (expected));
  g_assert_cmpuint (serio_error_get_value_index (actual), ==, serio_error_get_value_index (expected));
  g_assert_cmpstr (serio_error_get_detail (actual), ==, serio_error_get_detail (expected));
}

/* The reader and the in-memory reader agree on @text, read with @chunk
 * and @buffer_size. */
static void
rd_compare_with (GBytes *text,
                 gssize  chunk,
                 guint   buffer_size)
{
  g_autoptr(GError) expected = NULL;
  g_autoptr(GError) actual = NULL;
  g_autoptr(SerioBundle) whole = serio_bundle_new_from_bytes (text, &expected);
  g_autoptr(SerioBundle) streamed = rd_read (text, chunk, buffer_size, NULL, &actual);

  if (expected != NULL)
    {
      if (actual == NULL)
        g_test_message ("expected: %s", expected->message);
      assert_same_error (actual, expected);
    }
  else
    {
      g_assert_no_error (actual);
      g_assert_true (serio_bundle_equal (streamed, whole));
    }
}

static void
rd_compare (GBytes *text)
{
  gsize size = g_bytes_get_size (text);

  if (size < 20000)
    {
      rd_compare_with (text, 1, 64);
      rd_compare_with (text, 1, DEFAULT_BUFFER);
    }
  rd_compare_with (text, -7, 64);
  rd_compare_with (text, -300, 100);
  rd_compare_with (text, -70000, DEFAULT_BUFFER);
}

static void
rd_compare_data (const char *data,
                 gsize       len)
{
  g_autoptr(GBytes) text = g_bytes_new (data, len);

  rd_compare (text);
}

static void
rd_compare_string (const char *data)
{
  rd_compare_data (data, strlen (data));
}

static void
test_tables (void)
{
  const struct
  {
    const Rejection *rows;
    gsize            n_rows;
  } tables[] = {
    { syntax_tokens, G_N_ELEMENTS (syntax_tokens) },
    { syntax_records, G_N_ELEMENTS (syntax_records) },
    { domain, G_N_ELEMENTS (domain) },
    { lengths, G_N_ELEMENTS (lengths) },
    { truncated, G_N_ELEMENTS (truncated) },
    { versions, G_N_ELEMENTS (versions) },
    { bad_bytes, G_N_ELEMENTS (bad_bytes) },
    { line_numbers, G_N_ELEMENTS (line_numbers) },
  };
  guint n = 0;

  g_test_summary ("Every rejection of the in-memory reader's table, through a "
                  "reader fed one byte at a time and in random pieces: same "
                  "code and message (line, index, token).");

  for (gsize t = 0; t < G_N_ELEMENTS (tables); t++)
    {
      for (gsize i = 0; i < tables[t].n_rows; i++)
        {
          const Rejection *r = &tables[t].rows[i];
          g_autoptr(GBytes) text = g_bytes_new (r->input, r->len);
          g_autoptr(GError) error = NULL;
          g_autoptr(SerioBundle) streamed = rd_read (text, 1, 64, NULL, &error);

          /* The table's own expectations hold through the reader... */
          g_assert_null (streamed);
          assert_code (error, r);
          assert_message (error->message, r);
          /* ...and the reader says exactly what the in-memory one says. */
          rd_compare (text);
          n++;
        }
    }

  for (gsize i = 0; i < G_N_ELEMENTS (accepted_corpus); i++)
    rd_compare_string (accepted_corpus[i]);

  g_assert_cmpuint (n, >, 100);
}

/* The sample of the in-memory tests, cut at every byte. */
static void
test_cut_sample (void)
{
  g_autoptr(GString) sample = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (sample_lines); i++)
    g_string_append (sample, sample_lines[i].line);

  for (gsize cut = 0; cut <= sample->len; cut++)
    rd_compare_data (sample->str, cut);
}

/* Tokens, names, counts and tags far longer than the buffer. */
static void
test_long (void)
{
  static const gsize lengths_[] = { 30, 63, 64, 65, 200, 5000 };

  for (gsize i = 0; i < G_N_ELEMENTS (lengths_); i++)
    {
      gsize n = lengths_[i];
      g_autofree char *zeros = g_strnfill (n, '0');
      g_autofree char *ones = g_strnfill (n, '1');
      g_autofree char *nines = g_strnfill (n, '9');
      g_autofree char *xs = g_strnfill (n, 'x');
      g_autofree char *name = g_strnfill (n, 'n');
      const char *tokens[] = {
        g_strconcat ("1", zeros, NULL),
        g_strconcat (ones, NULL),
        g_strconcat (ones, "p-1", NULL),
        g_strconcat (ones, "2p-1", NULL),
        g_strconcat ("1p", nines, NULL),
        g_strconcat ("1p-", nines, NULL),
        g_strconcat (zeros, "1", NULL),
        g_strconcat ("-", ones, NULL),
        g_strconcat (ones, "x", NULL),
        g_strconcat ("1p", nines, "x", NULL),
        g_strconcat ("1p1", xs, NULL),
        g_strconcat (xs, NULL),
        g_strconcat ("inf", xs, NULL),
        g_strconcat (ones, "\r", NULL),
        g_strconcat (ones, "\r\r", NULL),
        g_strconcat ("3p", zeros, NULL),
      };
      g_autofree char *huge_name = g_strdup_printf ("v1|%s|2|1,2\n", name);
      g_autofree char *huge_tag = g_strdup_printf ("v%s|x|0|\n", nines);
      g_autofree char *huge_tag_bad = g_strdup_printf ("v%sx|x|0|\n", nines);
      g_autofree char *huge_count = g_strdup_printf ("v1|x|%s|1\n", nines);
      g_autofree char *huge_bad_count = g_strdup_printf ("v1|x|1%sx|1\n", nines);
      g_autofree char *huge_bad_name = g_strdup_printf ("v1|%s\xff|0|\n", name);

      for (gsize k = 0; k < G_N_ELEMENTS (tokens); k++)
        {
          g_autofree char *one = g_strdup_printf ("v1|a|0|\nv1|x|1|%s\n", tokens[k]);
          g_autofree char *middle = g_strdup_printf ("v1|x|3|1,%s,2\n", tokens[k]);
          g_autofree char *last = g_strdup_printf ("v1|x|2|1,%s\r\n", tokens[k]);
          g_autofree char *cut = g_strdup_printf ("v1|x|2|1,%s", tokens[k]);
          /* a value that the type does not hold before the long token:
           * the first bad value wins, whatever the buffer */
          g_autofree char *misfit = g_strdup_printf ("v1|x@int8[3]|3|128,%s,2\n", tokens[k]);

          rd_compare_string (one);
          rd_compare_string (middle);
          rd_compare_string (last);
          rd_compare_string (cut);
          rd_compare_string (misfit);
          g_free ((char *) tokens[k]);
        }

      rd_compare_string (huge_name);
      rd_compare_string (huge_tag);
      rd_compare_string (huge_tag_bad);
      rd_compare_string (huge_count);
      rd_compare_string (huge_bad_count);
      rd_compare_string (huge_bad_name);
    }
}

static SerioBundle *
random_bundle (guint  n_arrays,
               gsize  max_values)
{
  static const char *names[] = { "w", "", "größe", "名前 ", "a\tb", "v1", "x|y" };
  SerioBundle *bundle = serio_bundle_new ();

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize n = g_test_rand_int_range (0, (gint32) max_values + 1);
      g_autofree double *values = g_new (double, MAX (n, 1));

      for (gsize k = 0; k < n; k++)
        values[k] = test_double_of (k % 2 ? test_rand_interesting () : test_rand_u64 ());
      serio_bundle_append (bundle, names[g_test_rand_int_range (0, G_N_ELEMENTS (names))], values, n);
    }

  return bundle;
}

/* A byte replaced, dropped or added, a line doubled or dropped, the text
 * cut: whatever the in-memory reader says, the reader says too. */
static void
test_mutations (gconstpointer data)
{
  gboolean sealed = GPOINTER_TO_INT (data);
  static const char interesting[] = "0123456789p-,|\n\r v1x\xff\xc3";
  guint iterations = test_iterations (1500);

  for (guint it = 0; it < iterations; it++)
    {
      g_autoptr(SerioBundle) bundle = random_bundle (g_test_rand_int_range (0, 5), 12);
      g_autoptr(GBytes) original = sealed ? serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE) : serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
      gsize size;
      const char *bytes = g_bytes_get_data (original, &size);
      g_autoptr(GString) text = g_string_new_len (bytes, size);
      g_autoptr(GBytes) mutated = NULL;
      gsize at = text->len > 0 ? (gsize) g_test_rand_int_range (0, (gint32) text->len) : 0;
      char c = g_test_rand_bit () ? interesting[g_test_rand_int_range (0, sizeof interesting - 1)] :
               (char) g_test_rand_int_range (0, 256);

      switch (g_test_rand_int_range (0, 6))
        {
        case 0:
          if (text->len > 0)
            text->str[at] = c;
          break;
        case 1:
          if (text->len > 0)
            g_string_erase (text, at, 1);
          break;
        case 2:
          g_string_insert_c (text, at, c);
          break;
        case 3:
          g_string_truncate (text, at);
          break;
        case 4:
          {
            /* double or drop the line around @at */
            const char *start = text->str + at;
            const char *nl = memchr (start, '\n', text->len - at);
            gsize from = at, to;

            while (from > 0 && text->str[from - 1] != '\n')
              from--;
            to = nl != NULL ? (gsize) (nl - text->str) + 1 : text->len;
            if (g_test_rand_bit ())
              g_string_erase (text, from, to - from);
            else
              {
                g_autofree char *copy = g_strndup (text->str + from, to - from);

                g_string_insert_len (text, from, copy, to - from);
              }
          }
          break;
        default:
          /* unchanged */
          break;
        }

      mutated = g_bytes_new (text->str, text->len);
      rd_compare_with (mutated, -(gssize) g_test_rand_int_range (2, 40), 64 + g_test_rand_int_range (0, 40));
      if (it % 16 == 0)
        rd_compare_with (mutated, 1, 64);
    }
}

/* Files larger than the buffer: many records, and one line of several
 * megabytes, with one bad token near the end. */
static void
test_large (gconstpointer data)
{
  gboolean one_line = GPOINTER_TO_INT (data);
  /* still more than the reader's buffer under a slow tool */
  gsize n = test_slow_tool () ? 60000 : 200000;
  g_autofree double *values = g_new (double, n);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) sealed = NULL;
  g_autoptr(GString) text = NULL;
  g_autoptr(GBytes) damaged = NULL;
  g_autoptr(GError) error = NULL;
  gsize size;
  const char *p;
  char *comma;

  for (gsize i = 0; i < n; i++)
    values[i] = test_double_of (test_rand_u64 ());

  if (one_line)
    serio_bundle_append (bundle, "big", values, n);
  else
    for (gsize i = 0; i < n; i += 1000)
      serio_bundle_append (bundle, "part", values + i, 1000);

  sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_assert_cmpuint (g_bytes_get_size (sealed), >, (n / 200000.0) * 3 * 1024 * 1024);
  rd_compare_with (sealed, -65536, DEFAULT_BUFFER);
  rd_compare_with (sealed, -3000, 4096);

  /* The tenth value from the end of the last array goes bad. */
  p = g_bytes_get_data (sealed, &size);
  text = g_string_new_len (p, size);
  comma = text->str + text->len;
  while (*--comma != '\n')
    ;
  while (*--comma != '\n')
    ;
  for (guint k = 0; k < 10; k++)
    while (*--comma != ',')
      ;
  comma[1] = 'x';
  damaged = g_bytes_new (text->str, text->len);

  rd_compare_with (damaged, -65536, DEFAULT_BUFFER);
  rd_compare_with (damaged, -3000, 4096);

  /* A bad token anywhere in the shares of the threads, or two of them:
   * the first is reported. */
  for (guint k = 0; k < (test_slow_tool () ? 6 : 48); k++)
    {
      g_autoptr(GString) again = g_string_new_len (p, size);
      g_autoptr(GBytes) bytes = NULL;
      /* spread over the text, so that every share of every window gets
       * some */
      gsize at = (again->len - 200) * (k + 1) / 49 + g_test_rand_int_range (0, 100);

      again->str[at] = "x,|\n"[g_test_rand_int_range (0, 4)];
      if (k % 3 == 0)
        again->str[at + g_test_rand_int_range (1, 90)] = 'p';
      bytes = g_bytes_new (again->str, again->len);
      rd_compare_with (bytes, -200000, DEFAULT_BUFFER);
      rd_compare_with (bytes, 1 << 20, DEFAULT_BUFFER);
    }

  {
    g_autoptr(SerioBundle) streamed = rd_read (damaged, -65536, DEFAULT_BUFFER, NULL, &error);
    g_autofree char *where = g_strdup_printf (", value %" G_GSIZE_FORMAT " ", one_line ? n - 9 : 991);

    g_assert_null (streamed);
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
    g_assert_nonnull (strstr (error->message, where));
  }
}

/* Reads @text, skipping the arrays whose name is "skip". */
static gboolean
rd_read_skipping (GBytes  *text,
                  guint   *n_read,
                  GError **error)
{
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (text, -50);
  g_autoptr(SerioReader) reader = g_object_new (SERIO_TYPE_READER, "stream", stream, "buffer-size", 64, NULL);

  *n_read = 0;
  while (serio_reader_next (reader, NULL, error))
    {
      if (strcmp (serio_reader_get_name (reader), "skip") == 0)
        {
          /* half the time explicitly, after a first value */
          if (g_test_rand_bit ())
            {
              double first;
              gsize got;

              if (!serio_reader_read_values (reader, &first, 1, &got, NULL, error) ||
                  !serio_reader_skip_array (reader, NULL, error))
                return FALSE;
              g_assert_cmpuint (serio_reader_get_n_left (reader), ==, 0);
            }
          continue;
        }

      {
        g_autoptr(GBytes) all = serio_reader_read_bytes (reader, G_MAXSIZE, NULL, error);

        if (all == NULL)
          return FALSE;
        g_assert_cmpuint (g_bytes_get_size (all), ==, serio_reader_get_n_values (reader) * sizeof (double));
        (*n_read)++;
      }
    }

  return *error == NULL;
}

static void
test_skip (void)
{
  const char *plain = "v1|a|1|1\nv1|skip|3|1,2,x\nv1|b|2|1p-1,3\n";
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double values[] = { 1.0, 2.0, 3.0 };
  g_autoptr(GBytes) sealed = NULL;
  g_autoptr(GString) damaged = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  guint n_read;

  /* In a plain text, a skipped array is not parsed. */
  bytes = g_bytes_new_static (plain, strlen (plain));
  g_assert_true (rd_read_skipping (bytes, &n_read, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_read, ==, 2);
  g_clear_pointer (&bytes, g_bytes_unref);

  /* In a sealed text, damage in a skipped array breaks the seal. */
  serio_bundle_append (bundle, "a", values, 1);
  serio_bundle_append (bundle, "skip", values, 3);
  serio_bundle_append (bundle, "b", values, 2);
  sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  g_assert_true (rd_read_skipping (sealed, &n_read, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_read, ==, 2);

  damaged = g_string_new_len (g_bytes_get_data (sealed, NULL), g_bytes_get_size (sealed));
  strstr (damaged->str, "|1,2,3")[5] = '7';
  bytes = g_bytes_new (damaged->str, damaged->len);
  g_assert_false (rd_read_skipping (bytes, &n_read, &error));
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_INTEGRITY);
}

/* Shapes and base names, as the bundle gives them. */
static void
test_shapes (void)
{
  const char *text = "v1|w[2x3]|6|1,2,3,4,5,6\nv1|s[]|1|5\nv1|bad[2x2]|3|1,2,3\n"
                     "v1|plain|2|1,2\nv1|e[0x4]|0|\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_bytes (bytes, NULL);
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (bytes, -5);
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autoptr(GError) error = NULL;
  guint index = 0;
  guint n_dims;

  g_assert_null (serio_reader_get_base_name (reader));
  g_free (serio_reader_get_shape (reader, &n_dims));
  g_assert_cmpuint (n_dims, ==, 1);

  while (serio_reader_next (reader, NULL, &error))
    {
      guint expected_dims;
      g_autofree guint64 *shape = serio_reader_get_shape (reader, &n_dims);
      g_autofree guint64 *expected = serio_bundle_get_shape (bundle, index, &expected_dims);
      g_autofree char *base = serio_reader_get_base_name (reader);
      g_autofree char *expected_base = serio_bundle_get_base_name (bundle, index);

      g_assert_cmpstr (base, ==, expected_base);
      g_assert_cmpmem (shape, n_dims * sizeof (guint64), expected, expected_dims * sizeof (guint64));
      index++;
    }
  g_assert_no_error (error);
  g_assert_cmpuint (index, ==, 5);
}

/* A count no text can hold is not allocated for. */
static void
test_hostile_count (void)
{
  const char *text = "v1|w|1000000000000000|1,2\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (bytes, 1);
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) values = NULL;

  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpuint (serio_reader_get_n_values (reader), ==, G_GUINT64_CONSTANT (1000000000000000));
  values = serio_reader_read_bytes (reader, G_MAXSIZE, NULL, &error);
  g_assert_null (values);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
  rd_compare_string (text);
}

/* A failing stream gives its own error, and the reader stays failed. */
static void
test_stream_error (void)
{
  const char *text = "v1|w|3|1,2,3\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(GInputStream) stream = test_chunked_input_stream_new (bytes, 2);
  g_autoptr(SerioReader) reader = serio_reader_new (stream);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  double values[3];
  gsize got;

  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_cancellable_cancel (cancellable);
  g_assert_false (serio_reader_read_values (reader, values, 3, &got, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* A reader of bytes reads them in place: no stream, the size known from
 * the start, the bytes kept alive by the reader, sealed text verified,
 * typed values read in their own type, and a damaged seal refused as the
 * bundle refuses it. */
static void
test_for_bytes (void)
{
  static const double w[] = { 0.5, -0.0, 1e300 };
  static const float h[] = { 0.25f, -3.0f };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) typed = g_bytes_new_static (h, sizeof h);
  g_autoptr(GError) error = NULL;
  GBytes *text;
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GBytes) got_w = NULL;
  float got_h[2];
  gsize n, size;
  guint64 shape[] = { 2 };
  char *damaged;

  serio_bundle_append (bundle, "w", w, G_N_ELEMENTS (w));
  g_assert_true (serio_bundle_append_typed (bundle, "h", SERIO_DTYPE_FLOAT32, shape, 1, typed, &error));
  g_assert_no_error (error);
  text = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  size = g_bytes_get_size (text);

  reader = serio_reader_new_for_bytes (text);
  g_bytes_unref (text);          /* the reader holds it */
  g_assert_null (serio_reader_get_stream (reader));
  g_assert_cmpuint (serio_reader_get_size (reader), ==, size);

  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpstr (serio_reader_get_name (reader), ==, "w");
  got_w = serio_reader_read_bytes (reader, 10, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (got_w, NULL), g_bytes_get_size (got_w), w, sizeof w);

  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_cmpint (serio_reader_get_dtype (reader), ==, SERIO_DTYPE_FLOAT32);
  g_assert_true (serio_reader_read_typed (reader, got_h, 2, &n, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpmem (got_h, sizeof got_h, h, sizeof h);

  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_reader_get_finished (reader));
  g_assert_true (serio_reader_get_sealed (reader));

  /* One digit changed: the seal fails it, as it fails the bundle. */
  damaged = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_NONE);
  g_assert_true (g_str_has_prefix (strstr (damaged, "v1|w|3|") + 7, "1p-1,"));
  strstr (damaged, "v1|w|3|")[7] = '3';     /* 0.5 becomes 1.5 */
  {
    g_autoptr(GBytes) bad = g_bytes_new_take (damaged, strlen (damaged));
    g_autoptr(SerioReader) bad_reader = serio_reader_new_for_bytes (bad);
    g_autoptr(SerioBundle) none = NULL;

    while (serio_reader_next (bad_reader, NULL, &error))
      ;
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_INTEGRITY);
    g_clear_error (&error);
    none = serio_bundle_new_from_bytes (bad, &error);
    g_assert_null (none);
    g_assert_error (error, SERIO_ERROR, SERIO_ERROR_INTEGRITY);
  }
}

/* Bytes and a stream both given is a programmer error: it is said, and
 * the reader reads the bytes. */
static void
test_bytes_and_stream (void)
{
  static const char text[] = "v1|a|1|1\n";
  g_autoptr(GBytes) bytes = g_bytes_new_static (text, strlen (text));
  g_autoptr(GInputStream) stream = g_memory_input_stream_new ();
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GError) error = NULL;

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*reads bytes or a stream, not both*");
  reader = g_object_new (SERIO_TYPE_READER, "bytes", bytes, "stream", stream, NULL);
  g_test_assert_expected_messages ();

  g_assert_null (serio_reader_get_stream (reader));
  g_assert_true (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (serio_reader_get_name (reader), ==, "a");
  g_assert_false (serio_reader_next (reader, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_reader_get_finished (reader));
}

/* ------------------------------------------------------------------ */
/* Typed reads of long runs                                           */
/* ------------------------------------------------------------------ */

/* The windows of the parallel parse (serio-workers.c): a long run of
 * values is cut into windows of about this many bytes. */
#define TYPED_WINDOW (64 * 1024)

typedef struct
{
  SerioDtype  dtype;
  const char *misfit;   /* a canonical token that the type does not hold */
} TypedCase;

static const TypedCase typed_cases[] = {
  { SERIO_DTYPE_FLOAT32, "16777217" },
  { SERIO_DTYPE_BFLOAT16, "257" },
  { SERIO_DTYPE_FLOAT16, "1p-25" },
  { SERIO_DTYPE_INT8, "128" },
  { SERIO_DTYPE_BOOL, "2" },
};

/* Enough values for several windows of the shortest tokens (bool's, 2
 * bytes a value). */
#define TYPED_N_VALUES 250000

/* @n random elements of @dtype, every one valid. */
static GBytes *
typed_elements (SerioDtype dtype,
                gsize      n)
{
  gsize size = serio_dtype_get_size (dtype);
  guint8 *data = g_malloc (n * size);

  for (gsize i = 0; i < n; i++)
    {
      guint8 *at = data + i * size;

      switch (dtype)
        {
        case SERIO_DTYPE_FLOAT32:
          {
            float f = (float) g_test_rand_double_range (-1e6, 1e6);

            memcpy (at, &f, sizeof f);
          }
          break;
        case SERIO_DTYPE_BFLOAT16:
          {
            float f = (float) g_test_rand_double_range (-1e6, 1e6);
            guint32 bits;
            guint16 top;

            memcpy (&bits, &f, sizeof bits);
            top = (guint16) (bits >> 16);
            memcpy (at, &top, sizeof top);
          }
          break;
        case SERIO_DTYPE_FLOAT16:
          {
            /* finite halves, subnormals included */
            guint16 half = (guint16) (g_test_rand_int_range (0, 0x7c00) | (g_test_rand_bit () << 15));

            memcpy (at, &half, sizeof half);
          }
          break;
        case SERIO_DTYPE_INT8:
          *(gint8 *) at = (gint8) g_test_rand_int_range (-128, 128);
          break;
        case SERIO_DTYPE_BOOL:
          *at = (guint8) g_test_rand_bit ();
          break;
        case SERIO_DTYPE_FLOAT64:
          {
            double d = g_test_rand_double_range (-1e6, 1e6);

            memcpy (at, &d, sizeof d);
          }
          break;
        default:
          g_assert_not_reached ();
        }
    }

  return g_bytes_new_take (data, n * size);
}

/* A text, plain or sealed by @flags, of one array "w" of @dtype holding
 * @elements. */
static GBytes *
typed_text_full (SerioDtype      dtype,
                 GBytes         *elements,
                 SerioSaveFlags  flags)
{
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr(SerioWriter) writer = serio_writer_new (out, flags);
  g_autoptr(GError) error = NULL;
  guint64 shape[1] = { g_bytes_get_size (elements) / serio_dtype_get_size (dtype) };

  g_assert_true (serio_writer_write_typed (writer, "w", dtype, shape, 1, elements, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (serio_writer_close (writer, NULL, &error));
  g_assert_no_error (error);

  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

/* A plain text of one array "w" of @dtype holding @elements. */
static GBytes *
typed_text (SerioDtype  dtype,
            GBytes     *elements)
{
  return typed_text_full (dtype, elements, SERIO_SAVE_FLAGS_PLAIN);
}

/* The same, sealed. */
static GBytes *
typed_text_sealed (SerioDtype  dtype,
                   GBytes     *elements)
{
  return typed_text_full (dtype, elements, SERIO_SAVE_FLAGS_NONE);
}

/* The text of typed_cases[@c] with random elements, which go to
 * @elements. */
static GBytes *
typed_case_text (gsize    c,
                 GBytes **elements)
{
  *elements = typed_elements (typed_cases[c].dtype, TYPED_N_VALUES);

  return typed_text (typed_cases[c].dtype, *elements);
}

/* Where the values of the text's first line start. */
static gsize
typed_values_start (GBytes *text)
{
  const char *data = g_bytes_get_data (text, NULL);
  const char *p = data;

  for (int bars = 0; bars < 3; bars++)
    p = strchr (p, '|') + 1;

  return p - data;
}

/* The index (0-based) of the value whose token holds the byte @offset
 * bytes after the start of the values. */
static gsize
typed_token_at (GBytes *text,
                gsize   offset)
{
  const char *data = g_bytes_get_data (text, NULL);
  gsize start = typed_values_start (text);
  gsize index = 0;

  for (gsize i = start; i < start + offset; i++)
    {
      g_assert (data[i] != '\n');
      index += data[i] == ',';
    }

  return index;
}

/* @text with the token of value @index (0-based) replaced by @token. */
static GBytes *
typed_text_with (GBytes     *text,
                 gsize       index,
                 const char *token)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  gsize at = typed_values_start (text), end;
  GString *out;

  for (gsize k = 0; k < index; k++)
    at = (const char *) memchr (data + at, ',', size - at) - data + 1;
  for (end = at; data[end] != ',' && data[end] != '\n'; end++)
    ;
  out = g_string_new_len (data, at);
  g_string_append (out, token);
  g_string_append_len (out, data + end, size - end);

  return g_string_free_to_bytes (out);
}

/* The threads asked for must be used: SERIO_THREADS would cap them. */
static void
typed_all_threads (void)
{
  if (g_getenv ("SERIO_THREADS") != NULL)
    g_unsetenv ("SERIO_THREADS");
}

typedef enum
{
  TYPED_WHOLE,          /* read_typed(), all values in one call */
  TYPED_PIECES,         /* read_typed() in uneven pieces */
  TYPED_BYTES_PIECES,   /* read_typed_bytes() in uneven pieces */
} TypedMode;

typedef enum
{
  TYPED_FROM_BYTES,     /* serio_reader_new_for_bytes() */
  TYPED_FROM_PIPE,      /* a stream that cannot seek, in uneven reads */
  TYPED_FROM_FILE,      /* a stream that can seek, as a file's, read on
                         * while the threads parse: a 512 KiB buffer, so
                         * that the text takes several rounds */
  TYPED_N_SOURCES
} TypedSource;

#define TYPED_FILE_BUFFER (512 * 1024)

/* A reader of @text from @source. */
static SerioReader *
typed_reader (GBytes      *text,
              TypedSource  source)
{
  g_autoptr(GInputStream) stream = NULL;

  switch (source)
    {
    case TYPED_FROM_BYTES:
      return serio_reader_new_for_bytes (text);
    case TYPED_FROM_PIPE:
      stream = test_chunked_input_stream_new (text, -70000);
      return serio_reader_new (stream);
    case TYPED_FROM_FILE:
      stream = test_failing_input_stream_new (text, G_MAXSIZE, NULL);
      return g_object_new (SERIO_TYPE_READER, "stream", stream, "buffer-size", TYPED_FILE_BUFFER,
                           NULL);
    case TYPED_N_SOURCES:
    default:
      g_assert_not_reached ();
    }
}

/* Reads the one array of @text from @source with @threads threads: its
 * elements, or %NULL with @error set. */
static GBytes *
typed_read (GBytes      *text,
            TypedSource  source,
            guint        threads,
            TypedMode    mode,
            GError     **error)
{
  /* around the 8192 values from which a read is parsed in parallel, and
   * ending inside windows */
  static const gsize pieces[] = { 100003, 1, 8192, 70001, 8191, 3, 250000, 12345 };
  g_autoptr(SerioReader) reader = typed_reader (text, source);
  g_autoptr(GByteArray) got = g_byte_array_new ();
  GError *local_error = NULL;
  SerioDtype dtype;
  gsize size, n, done = 0;

  serio_reader_set_threads (reader, threads);
  if (!serio_reader_next (reader, NULL, error))
    return NULL;
  dtype = serio_reader_get_dtype (reader);
  size = serio_dtype_get_size (dtype);
  n = serio_reader_get_n_values (reader);
  g_byte_array_set_size (got, n * size);

  for (guint k = 0;; k++)
    {
      gsize want = mode == TYPED_WHOLE ? n - done : MIN (pieces[k % G_N_ELEMENTS (pieces)], n - done);
      gsize n_read;

      if (mode == TYPED_BYTES_PIECES)
        {
          g_autoptr(GBytes) piece = serio_reader_read_typed_bytes (reader, want, NULL, &local_error);

          if (piece == NULL)
            break;
          n_read = g_bytes_get_size (piece) / size;
          g_assert_cmpuint (g_bytes_get_size (piece), ==, n_read * size);
          g_assert_cmpuint (n_read, <=, n - done);
          if (n_read > 0)
            memcpy (got->data + done * size, g_bytes_get_data (piece, NULL), n_read * size);
        }
      else if (!serio_reader_read_typed (reader, got->data + done * size, want, &n_read, NULL,
                                         &local_error))
        {
          break;
        }
      done += n_read;
      if (n_read == 0)
        break;
    }

  if (local_error == NULL)
    {
      g_assert_cmpuint (done, ==, n);
      g_assert_false (serio_reader_next (reader, NULL, &local_error));
    }
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }
  g_assert_true (serio_reader_get_finished (reader));

  return g_byte_array_free_to_bytes (g_steal_pointer (&got));
}

static void
assert_same_elements (GBytes *actual,
                      GBytes *expected)
{
  gsize size;
  gconstpointer data = g_bytes_get_data (expected, &size);

  g_assert_nonnull (actual);
  g_assert_cmpuint (g_bytes_get_size (actual), ==, size);
  g_assert_true (memcmp (g_bytes_get_data (actual, NULL), data, size) == 0);
}

/* Reads @text from each source, on 1, 2 and 4 threads, in the modes up to
 * @last_mode: each read gives @expected, or fails with @expected_error. */
static void
typed_read_every_way (GBytes       *text,
                      TypedMode     last_mode,
                      GBytes       *expected,
                      const GError *expected_error)
{
  const guint threads[] = { 1, 2, 4 };

  for (TypedSource source = 0; source < TYPED_N_SOURCES; source++)
    for (gsize t = 0; t < G_N_ELEMENTS (threads); t++)
      for (TypedMode mode = TYPED_WHOLE; mode <= last_mode; mode++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GBytes) got = NULL;

          if (test_slow_tool () && (source != TYPED_FROM_BYTES || threads[t] == 2))
            continue;
          got = typed_read (text, source, threads[t], mode, &error);
          if (expected_error != NULL)
            {
              g_assert_null (got);
              assert_same_error (error, expected_error);
            }
          else
            {
              g_assert_no_error (error);
              assert_same_elements (got, expected);
            }
        }
}

static void
test_typed_parallel (void)
{
  g_test_summary ("A typed read of a long run gives the same elements, bit for bit, on 1, 2 and "
                  "4 threads, in one call or in uneven pieces, as the serial read.");
  typed_all_threads ();

  for (gsize c = 0; c < G_N_ELEMENTS (typed_cases); c++)
    {
      g_autoptr(GBytes) elements = NULL;
      g_autoptr(GBytes) text = typed_case_text (c, &elements);
      g_autoptr(GBytes) serial = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("%s: %" G_GSIZE_FORMAT " bytes", serio_dtype_to_string (typed_cases[c].dtype),
                      g_bytes_get_size (text));
      /* long enough for several windows: the parallel path */
      g_assert_cmpuint (g_bytes_get_size (text), >, 6 * TYPED_WINDOW);
      serial = typed_read (text, TYPED_FROM_BYTES, 1, TYPED_WHOLE, &error);
      g_assert_no_error (error);
      assert_same_elements (serial, elements);

      typed_read_every_way (text, TYPED_BYTES_PIECES, serial, NULL);
    }
}

static void
test_typed_parallel_errors (void)
{
  g_test_summary ("A typed read of a long run on several threads reports the first bad value of "
                  "the record, a bad token or a value the type does not hold, in the 2nd or 3rd "
                  "window, with the same error as the serial read.");
  typed_all_threads ();

  for (gsize c = 0; c < G_N_ELEMENTS (typed_cases); c++)
    {
      g_autoptr(GBytes) elements = NULL;
      g_autoptr(GBytes) text = typed_case_text (c, &elements);
      /* values in the 2nd, 3rd and 5th windows of a read of the whole run */
      gsize in2 = typed_token_at (text, TYPED_WINDOW + TYPED_WINDOW / 2);
      gsize in3 = typed_token_at (text, 2 * TYPED_WINDOW + TYPED_WINDOW / 2);
      gsize in5 = typed_token_at (text, 4 * TYPED_WINDOW + TYPED_WINDOW / 2);
      const char *misfit = typed_cases[c].misfit;
      struct
      {
        gsize       misfit;   /* 1-based, or 0 */
        gsize       syntax;   /* 1-based, or 0 */
        int         code;     /* of the first */
      } cases[] = {
        { in2 + 1, 0, SERIO_ERROR_DOMAIN },
        { in3 + 1, 0, SERIO_ERROR_DOMAIN },
        { 0, in3 + 1, SERIO_ERROR_SYNTAX },
        { in3 + 1, in2 + 1, SERIO_ERROR_SYNTAX },     /* a bad token in an earlier window */
        { in2 + 1, in3 + 1, SERIO_ERROR_DOMAIN },     /* a bad token in a later window */
        { in3 + 1, in5 + 1, SERIO_ERROR_DOMAIN },
        { in3 + 1, in3 + 2, SERIO_ERROR_DOMAIN },     /* in the same window */
        { in3 + 2, in3 + 1, SERIO_ERROR_SYNTAX },
      };

      g_test_message ("%s: values %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT,
                      serio_dtype_to_string (typed_cases[c].dtype), in2, in3, in5);
      g_assert_cmpuint (in2, >, 0);
      g_assert_cmpuint (in3, >, in2 + 1);
      g_assert_cmpuint (in5, >, in3);

      for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
        {
          g_autoptr(GBytes) bad = g_bytes_ref (text);
          g_autoptr(GError) serial = NULL;
          g_autoptr(GError) whole = NULL;
          g_autoptr(GBytes) got = NULL;
          g_autoptr(SerioBundle) bundle = NULL;

          if (cases[i].misfit != 0)
            {
              GBytes *next = typed_text_with (bad, cases[i].misfit - 1, misfit);

              g_bytes_unref (bad);
              bad = next;
            }
          if (cases[i].syntax != 0)
            {
              GBytes *next = typed_text_with (bad, cases[i].syntax - 1, "+1");

              g_bytes_unref (bad);
              bad = next;
            }

          got = typed_read (bad, TYPED_FROM_BYTES, 1, TYPED_WHOLE, &serial);
          g_assert_null (got);
          g_assert_error (serial, SERIO_ERROR, cases[i].code);
          g_assert_cmpuint (serio_error_get_line (serial), ==, 1);
          g_assert_cmpuint (serio_error_get_value_index (serial), ==,
                            cases[i].code == SERIO_ERROR_DOMAIN ? cases[i].misfit : cases[i].syntax);

          /* the bundle's load, which reads doubles (on every processor) */
          bundle = serio_bundle_new_from_bytes (bad, &whole);
          g_assert_null (bundle);
          assert_same_error (whole, serial);

          typed_read_every_way (bad, TYPED_PIECES, NULL, serial);
        }
    }
}

static void
test_bad_value_after_piece (void)
{
  g_test_summary ("A read of a long run's values that ends just before a bad token or a "
                  "value the type does not hold gives those values on every number of "
                  "threads, as on one; the next read reports the bad value.");
  typed_all_threads ();

  for (gsize c = 0; c < G_N_ELEMENTS (typed_cases); c++)
    {
      g_autoptr(GBytes) elements = NULL;
      g_autoptr(GBytes) text = typed_case_text (c, &elements);
      SerioDtype dtype = typed_cases[c].dtype;
      gsize size = serio_dtype_get_size (dtype);
      /* in the 3rd window of a read from the start, so that the first
       * read is parsed in parallel */
      gsize at = typed_token_at (text, 2 * TYPED_WINDOW + TYPED_WINDOW / 2);
      const char *tokens[] = { "+1", typed_cases[c].misfit };

      g_assert_cmpuint (at, >=, 8192);
      for (gsize k = 0; k < G_N_ELEMENTS (tokens); k++)
        {
          g_autoptr(GBytes) bad = typed_text_with (text, at, tokens[k]);
          g_autoptr(GError) serial = NULL;
          g_autoptr(GBytes) whole = typed_read (bad, TYPED_FROM_BYTES, 1, TYPED_WHOLE, &serial);

          g_assert_null (whole);
          g_assert_nonnull (serial);
          g_assert_cmpuint (serio_error_get_value_index (serial), ==, at + 1);

          for (TypedSource source = 0; source < TYPED_N_SOURCES; source++)
            for (guint threads = 1; threads <= 4; threads *= 2)
              {
                g_autoptr(SerioReader) reader = typed_reader (bad, source);
                g_autofree guint8 *got = g_malloc (at * size);
                g_autoptr(GError) error = NULL;
                gsize n_read = 0;

                serio_reader_set_threads (reader, threads);
                g_assert_true (serio_reader_next (reader, NULL, &error));
                g_assert_no_error (error);
                if (!serio_reader_read_typed (reader, got, at, &n_read, NULL, &error))
                  g_error ("%s, %u threads, source %d: the read of the %" G_GSIZE_FORMAT
                           " values before the bad one failed: %s", serio_dtype_to_string (dtype),
                           threads, source, at, error->message);
                g_assert_cmpuint (n_read, ==, at);
                g_assert_true (memcmp (got, g_bytes_get_data (elements, NULL), at * size) == 0);

                g_assert_false (serio_reader_read_typed (reader, got, 1, &n_read, NULL, &error));
                assert_same_error (error, serial);
              }
        }
    }
}

/* The error of a reader of @stream (a sealed text of one float32 array),
 * which reads the array whole with @threads threads, or %NULL when it
 * succeeds, with every element of @elements. */
static GError *
read_error_of (GInputStream *stream,
               GBytes       *elements,
               guint         threads,
               GCancellable *cancellable)
{
  g_autoptr(SerioReader) reader = g_object_new (SERIO_TYPE_READER, "stream", stream,
                                                "buffer-size", TYPED_FILE_BUFFER, NULL);
  gsize n = g_bytes_get_size (elements) / sizeof (float);
  g_autofree float *values = g_new (float, n);
  GError *error = NULL;
  GError *again = NULL;
  gsize n_read = 0;

  serio_reader_set_threads (reader, threads);
  /* the first fill reads a megabyte at most, or up to its buffer */
  if (serio_reader_next (reader, NULL, &error))
    {
      g_assert_cmpuint (serio_reader_get_n_values (reader), ==, n);
      if (serio_reader_read_typed (reader, values, n, &n_read, cancellable, &error) &&
          serio_reader_next (reader, NULL, &error))
        g_assert_not_reached ();    /* one array */
    }
  if (error == NULL)
    {
      /* read whole, and its seal checked */
      g_assert_cmpuint (n_read, ==, n);
      g_assert_true (memcmp (values, g_bytes_get_data (elements, NULL), n * sizeof (float)) == 0);
      g_assert_true (serio_reader_get_finished (reader));
      return NULL;
    }

  /* The reader stays failed, with the same error. */
  g_assert_false (serio_reader_get_finished (reader));
  g_assert_false (serio_reader_next (reader, NULL, &again));
  g_assert_nonnull (again);
  g_assert_true (again->domain == error->domain && again->code == error->code);
  g_error_free (again);

  return error;
}

static void
test_read_error_during_parse (void)
{
  g_autoptr(GBytes) elements = typed_elements (SERIO_DTYPE_FLOAT32, TYPED_N_VALUES);
  g_autoptr(GBytes) text = typed_text_sealed (SERIO_DTYPE_FLOAT32, elements);
  gsize size = g_bytes_get_size (text);

  g_test_summary ("A read of a file that fails while the threads parse the window before it "
                  "(the reader reads a file on as they parse) fails the read that needed its "
                  "bytes and the reader, with the stream's error, as on one thread; the same "
                  "stream that does not fail gives every element, its seal checked.");
  typed_all_threads ();

  /* several rounds of the 512 KiB buffer, each a parallel parse */
  g_assert_cmpuint (size, >, 4 * TYPED_FILE_BUFFER);

  for (guint threads = 1; threads <= 2; threads++)
    {
      /* failing nowhere, in the first fill, then in each round's reads */
      const gsize fail_at[] = { G_MAXSIZE, TYPED_FILE_BUFFER / 4, TYPED_FILE_BUFFER / 2 + 1000,
                                TYPED_FILE_BUFFER - 1, TYPED_FILE_BUFFER + 70000, size / 2,
                                size - 10 };

      for (gsize i = 0; i < G_N_ELEMENTS (fail_at); i++)
        for (int cancel = 0; cancel < 2; cancel++)
          {
            g_autoptr(GCancellable) cancellable = cancel ? g_cancellable_new () : NULL;
            g_autoptr(GInputStream) stream = test_failing_input_stream_new (text, fail_at[i],
                                                                           cancellable);
            g_autoptr(GError) got = read_error_of (stream, elements, threads, cancellable);

            if (fail_at[i] >= size)
              g_assert_no_error (got);
            else if (cancel)
              g_assert_error (got, G_IO_ERROR, G_IO_ERROR_CANCELLED);
            else
              g_assert_error (got, G_IO_ERROR, G_IO_ERROR_FAILED);
          }
    }
}

/* Every record of @reader, read with @threads threads: its name, then its
 * elements, record after record. */
/* Appends @name, its NUL and room for @n elements of @size bytes to
 * @all, the elements aligned for their type (as read_typed() needs) after
 * zeroed padding; returns where the elements go. */
static guint8 *
append_record (GByteArray *all,
               const char *name,
               gsize       n,
               gsize       size)
{
  gsize named, at;

  g_byte_array_append (all, (const guint8 *) name, strlen (name) + 1);
  named = all->len;
  at = (named + size - 1) / size * size;
  g_byte_array_set_size (all, at + n * size);
  memset (all->data + named, 0, at - named);
  return all->data + at;
}

static GBytes *
read_all_records (SerioReader *reader,
                  guint        threads)
{
  g_autoptr(GByteArray) all = g_byte_array_new ();
  g_autoptr(GError) error = NULL;

  serio_reader_set_threads (reader, threads);
  while (serio_reader_next (reader, NULL, &error))
    {
      const char *name = serio_reader_get_name (reader);
      gsize n = serio_reader_get_n_values (reader);
      gsize size = serio_dtype_get_size (serio_reader_get_dtype (reader));
      gsize n_read = 0;
      guint8 *elements = append_record (all, name, n, size);

      g_assert_true (serio_reader_read_typed (reader, elements, n, &n_read, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (n_read, ==, n);
    }
  g_assert_no_error (error);
  g_assert_true (serio_reader_get_finished (reader));

  return g_byte_array_free_to_bytes (g_steal_pointer (&all));
}

static void
test_long_name_after_parallel (void)
{
  g_test_summary ("A record whose name is longer than the room a file's reader keeps before "
                  "the bytes it read on while threads parsed (4 KiB) comes whole after a long "
                  "array read on two threads, wherever the buffer cuts it, sealed and plain.");
  typed_all_threads ();

  /* (one text under a slow tool) */
  for (gsize k = 0; k < (test_slow_tool () ? 1 : 16); k++)
    {
      gsize n = 120000 + k * 7919;
      g_autoptr(GBytes) elements = typed_elements (SERIO_DTYPE_FLOAT32, n);
      g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_autoptr(SerioWriter) writer = serio_writer_new (out, k % 2 ? SERIO_SAVE_FLAGS_NONE
                                                                   : SERIO_SAVE_FLAGS_PLAIN);
      g_autofree char *long_name = g_strnfill (9000 + k * 613, 'a' + k);
      const double few[3] = { 1.5, -2, 0.25 };
      guint64 shape[1] = { n };
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) text = NULL;
      g_autoptr(SerioReader) from_bytes = NULL;
      g_autoptr(SerioReader) from_file = NULL;
      g_autoptr(GBytes) expected = NULL;
      g_autoptr(GBytes) got = NULL;

      g_assert_true (serio_writer_write_typed (writer, "w", SERIO_DTYPE_FLOAT32, shape, 1,
                                               elements, NULL, &error));
      g_assert_true (serio_writer_write_array (writer, long_name, few, 3, NULL, &error));
      g_assert_true (serio_writer_write_typed (writer, "x", SERIO_DTYPE_FLOAT32, shape, 1,
                                               elements, NULL, &error));
      g_assert_true (serio_writer_write_array (writer, long_name, few, 2, NULL, &error));
      g_assert_true (serio_writer_close (writer, NULL, &error));
      g_assert_no_error (error);
      text = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));

      from_bytes = typed_reader (text, TYPED_FROM_BYTES);
      expected = read_all_records (from_bytes, 1);
      from_file = typed_reader (text, TYPED_FROM_FILE);
      got = read_all_records (from_file, 2);
      g_assert_true (g_bytes_equal (got, expected));
    }
}

/* A text of @n_records small records of several types and shapes
 * (0-d, empty, 2-D), sealed or plain, made from @seed. */
static GBytes *
many_records_text (guint    n_records,
                   guint32  seed,
                   gboolean sealed)
{
  static const SerioDtype dtypes[] = {
    SERIO_DTYPE_FLOAT32, SERIO_DTYPE_FLOAT64, SERIO_DTYPE_BFLOAT16, SERIO_DTYPE_FLOAT16,
    SERIO_DTYPE_INT8, SERIO_DTYPE_BOOL,
  };
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  /* (the elements come from g_test_rand_*(), which --seed sets) */
  g_autoptr(GError) error = NULL;

  for (guint r = 0; r < n_records; r++)
    {
      SerioDtype dtype = dtypes[g_rand_int_range (rand, 0, G_N_ELEMENTS (dtypes))];
      guint shape_kind = g_rand_int_range (rand, 0, 8);
      guint64 dims[2] = { g_rand_int_range (rand, 1, 40), g_rand_int_range (rand, 1, 4) };
      guint n_dims = shape_kind == 0 ? 0 : shape_kind == 1 ? 2 : 1;
      g_autofree char *base = g_strdup_printf ("layer%u.w", r);
      g_autoptr(GBytes) elements = NULL;

      if (shape_kind == 2)
        dims[0] = 0;
      elements = typed_elements (dtype, n_dims == 0 ? 1 : n_dims == 2 ? dims[0] * dims[1] : dims[0]);
      serio_bundle_append_typed (bundle, base, dtype, dims, n_dims, elements, &error);
      g_assert_no_error (error);
    }
  return serio_bundle_to_bytes (bundle, sealed ? SERIO_SAVE_FLAGS_NONE : SERIO_SAVE_FLAGS_PLAIN);
}

/* What read_all_records() gives, from serio_reader_read_records() in
 * calls of @buffer_size bytes and @max_records records, the records that
 * do not fit read on their own; the records read by each call are added
 * to @n_batched. */
static GBytes *
read_all_batched (SerioReader *reader,
                  guint        threads,
                  gsize        buffer_size,
                  gsize        max_records,
                  gsize       *n_batched)
{
  g_autoptr(GByteArray) all = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree guint64 *buffer = g_malloc (MAX (buffer_size, 8));
  g_autofree SerioRecordInfo *records = g_new (SerioRecordInfo, MAX (max_records, 1));

  serio_reader_set_threads (reader, threads);
  for (;;)
    {
      gsize n = G_MAXSIZE;

      g_assert_true (serio_reader_read_records (reader, buffer, buffer_size, records,
                                                max_records, &n, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (n, <=, max_records);
      *n_batched += n;
      for (gsize i = 0; i < n; i++)
        {
          const SerioRecordInfo *info = &records[i];
          gsize size = serio_dtype_get_size (info->dtype);
          guint64 count = 1;
          g_autofree char *name = serio_name_compose (info->name, info->dtype, info->dims,
                                                      info->n_dims);

          for (guint d = 0; d < info->n_dims; d++)
            count *= info->dims[d];
          g_assert_cmpuint (count, ==, info->n_values);
          g_assert_cmpuint (info->offset % 8, ==, 0);
          g_assert_cmpuint (info->offset + info->n_values * size, <=, buffer_size);
          if (i > 0)
            g_assert_cmpuint (info->offset, >=, records[i - 1].offset +
                              records[i - 1].n_values *
                              serio_dtype_get_size (records[i - 1].dtype));
          memcpy (append_record (all, name, info->n_values, size),
                  (const char *) buffer + info->offset, info->n_values * size);
        }
      if (n == max_records && max_records > 0)
        {
          /* the current record is the last one read */
          g_assert_cmpuint (serio_reader_get_n_left (reader), ==, 0);
          continue;
        }
      if (serio_reader_get_n_left (reader) == 0)
        break;
      {
        /* the one that did not fit, none of it read: read on its own */
        const char *name = serio_reader_get_name (reader);
        gsize count = serio_reader_get_n_values (reader), n_read = 0;
        gsize size = serio_dtype_get_size (serio_reader_get_dtype (reader));

        gsize used = n == 0 ? 0 : records[n - 1].offset + records[n - 1].n_values *
                                      serio_dtype_get_size (records[n - 1].dtype);

        /* it does not fit after the records of the call */
        g_assert_cmpuint (serio_reader_get_n_left (reader), ==, count);
        g_assert_cmpuint ((used + 7) / 8 * 8 + count * size, >, buffer_size);
        g_assert_true (serio_reader_read_typed (reader, append_record (all, name, count, size),
                                                count, &n_read, NULL, &error));
        g_assert_no_error (error);
        g_assert_cmpuint (n_read, ==, count);
      }
    }
  g_assert_true (serio_reader_get_finished (reader));

  return g_byte_array_free_to_bytes (g_steal_pointer (&all));
}

static void
test_read_records (void)
{
  static const struct { gsize buffer_size, max_records; } calls[] = {
    { 1 << 20, 4096 }, { 1 << 20, 7 }, { 1 << 20, 1 }, { 256, 4096 }, { 64, 3 }, { 8, 4096 },
    { 0, 4096 }, { 1 << 20, 0 },
  };
  g_test_summary ("serio_reader_read_records() reads what serio_reader_read_typed() does, "
                  "whatever its buffer and count: records that fit, then the one that does "
                  "not left current and unread, from memory, a pipe and a file, on one "
                  "and two threads.");
  typed_all_threads ();

  for (int sealed = 0; sealed <= 1; sealed++)
    {
      g_autoptr(GBytes) text = many_records_text (test_slow_tool () ? 60 : 600, 17 + sealed,
                                                  sealed);
      g_autoptr(SerioReader) reference = typed_reader (text, TYPED_FROM_BYTES);
      g_autoptr(GBytes) expected = read_all_records (reference, 1);

      for (gsize c = 0; c < G_N_ELEMENTS (calls); c++)
        for (TypedSource source = TYPED_FROM_BYTES; source <= TYPED_FROM_FILE; source++)
          for (guint threads = 1; threads <= 2; threads++)
            {
              g_autoptr(SerioReader) reader = typed_reader (text, source);
              gsize n_batched = 0;
              g_autoptr(GBytes) got = NULL;

              if (calls[c].max_records == 0)
                {
                  /* Nothing read, nothing moved: the text is still all there. */
                  gsize n = 1;

                  g_assert_true (serio_reader_read_records (reader, NULL, 0, NULL, 0, &n,
                                                            NULL, NULL));
                  g_assert_cmpuint (n, ==, 0);
                  got = read_all_records (reader, threads);
                }
              else
                got = read_all_batched (reader, threads, calls[c].buffer_size,
                                        calls[c].max_records, &n_batched);
              g_assert_true (g_bytes_equal (got, expected));
              /* The big buffers take every record in batches. */
              if (calls[c].buffer_size == 1 << 20 && calls[c].max_records > 0)
                g_assert_cmpuint (n_batched, ==, test_slow_tool () ? 60 : 600);
            }
    }
}

static void
test_read_records_errors (void)
{
  static const struct { const char *text; gsize n_read; const char *failed; } cases[] = {
    /* a bad token in the third record's values: its header is described */
    { "v1|a@int8[2]|2|1,2\nv1|b|1|1\nv1|c@float32[2]|2|1,x\nv1|d|1|1\n", 2, "c" },
    /* a value its type does not hold */
    { "v1|a@int8[2]|2|1,2\nv1|b@int8[]|1|300\n", 1, "b" },
    /* fewer values than declared */
    { "v1|a|1|1\nv1|b@float32[3]|3|1,2\n", 1, "b" },
    /* more than declared; in a record of none, its start fails */
    { "v1|a|1|1\nv1|b@float32[2]|2|1,2,3\n", 1, "b" },
    { "v1|a|1|1\nv1|e@float32[0]|0|1\n", 1, NULL },
    /* a bad record start: no name */
    { "v1|a|1|1\nv1|b|1|1\nv2|c|1|1\n", 2, NULL },
    { "v1|a|1|1\nv1|b|x|1\n", 1, NULL },
    /* cut short in the first record */
    { "v1|a|3|1,2", 0, "a" },
  };
  g_test_summary ("An error of serio_reader_read_records() is the one a record at a time "
                  "gives, with the count of the records read before the one that failed and "
                  "that one's name when its values failed.");

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    for (guint threads = 1; threads <= 2; threads++)
      {
        g_autoptr(GBytes) text = g_bytes_new_static (cases[c].text, strlen (cases[c].text));
        g_autoptr(SerioReader) one = serio_reader_new_for_bytes (text);
        g_autoptr(SerioReader) batched = serio_reader_new_for_bytes (text);
        g_autoptr(GError) expected = NULL;
        g_autoptr(GError) error = NULL;
        SerioRecordInfo records[8];
        guint64 buffer[16];
        gsize n = G_MAXSIZE;

        g_test_message ("case %" G_GSIZE_FORMAT ", %u threads", c, threads);
        serio_reader_set_threads (one, threads);
        serio_reader_set_threads (batched, threads);
        while (serio_reader_next (one, NULL, &expected))
          {
            guint64 values[16];
            gsize n_read;

            if (!serio_reader_read_typed (one, values, G_N_ELEMENTS (values), &n_read, NULL,
                                          &expected) ||
                !serio_reader_read_typed (one, values, 0, &n_read, NULL, &expected))
              break;
          }
        g_assert_nonnull (expected);

        g_assert_false (serio_reader_read_records (batched, buffer, sizeof buffer, records,
                                                   G_N_ELEMENTS (records), &n, NULL, &error));
        g_assert_error (error, expected->domain, expected->code);
        g_assert_cmpstr (error->message, ==, expected->message);
        g_assert_cmpuint (n, ==, cases[c].n_read);
        g_assert_cmpstr (records[n].name, ==, cases[c].failed);
        g_assert_cmpuint (serio_reader_get_error_line (batched), ==,
                          serio_reader_get_error_line (one));
        /* and it stays failed */
        g_clear_error (&error);
        g_assert_false (serio_reader_read_records (batched, buffer, sizeof buffer, records,
                                                   G_N_ELEMENTS (records), &n, NULL, &error));
        g_assert_error (error, expected->domain, expected->code);
        g_assert_cmpuint (n, ==, 0);
      }
}

/* The reader's segment of a long line in memory (BYTES_SEGMENT in
 * serio-reader.c), and of any long line on one thread (SERIAL_SEGMENT). */
#define BYTES_SEGMENT (16 * 1024 * 1024)
#define SERIAL_SEGMENT (128 * 1024)

static void
test_long_line_in_memory (void)
{
  gsize n = 3200000;
  g_autoptr(GBytes) elements = NULL;
  g_autoptr(GBytes) plain = NULL;
  g_autoptr(GBytes) sealed = NULL;
  const struct
  {
    gsize       offset;       /* of the token replaced, from the values' start */
    const char *replacement;
  } damage[] = {
    { SERIAL_SEGMENT - 30, "+1" },     /* around the end of one thread's first segment */
    { SERIAL_SEGMENT - 2, "+1" },
    { SERIAL_SEGMENT + 2, "+1" },
    { SERIAL_SEGMENT - 2, "1\n1" },
    { SERIAL_SEGMENT + 10, "1\n1" },
    { 5 * SERIAL_SEGMENT + 7, "1e" },
    { BYTES_SEGMENT - 30, "+1" },      /* the last tokens of the first segment */
    { BYTES_SEGMENT - 2, "+1" },
    { BYTES_SEGMENT + 2, "+1" },       /* the first of the second */
    { BYTES_SEGMENT + 40, "1\n1" },    /* a line feed early in the second */
    { 2 * BYTES_SEGMENT + 100, "1\n1" },
    { 2 * BYTES_SEGMENT + 100, "1e" },
  };

  g_test_summary ("A line of a text in memory longer than the reader's segment (16 MiB, each "
                  "looked through for its end while threads parse the one before; 128 KiB on "
                  "one thread) gives every element on 1, 2 and 4 threads, sealed and plain; "
                  "damage on either side of a segment's end, and a line feed in a later "
                  "segment, give the error of a stream's reader on one thread, which names "
                  "the value damaged.");
  if (test_slow_tool ())
    {
      g_test_skip ("a text of 37 MB: too slow under this tool");
      return;
    }
  typed_all_threads ();

  elements = typed_elements (SERIO_DTYPE_FLOAT32, n);
  plain = typed_text (SERIO_DTYPE_FLOAT32, elements);
  sealed = typed_text_sealed (SERIO_DTYPE_FLOAT32, elements);
  g_assert_cmpuint (g_bytes_get_size (plain), >, 2 * BYTES_SEGMENT + 1024 * 1024);

  for (guint threads = 1; threads <= 4; threads *= 2)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) from_plain = typed_read (plain, TYPED_FROM_BYTES, threads, TYPED_WHOLE,
                                                 &error);
      g_autoptr(GBytes) from_sealed = NULL;

      g_assert_no_error (error);
      assert_same_elements (from_plain, elements);
      from_sealed = typed_read (sealed, TYPED_FROM_BYTES, threads, TYPED_WHOLE, &error);
      g_assert_no_error (error);
      assert_same_elements (from_sealed, elements);
    }

  for (gsize d = 0; d < G_N_ELEMENTS (damage); d++)
    {
      gsize index = typed_token_at (plain, damage[d].offset);
      g_autoptr(GBytes) bad = typed_text_with (plain, index, damage[d].replacement);
      g_autoptr(GError) expected = NULL;
      g_autoptr(GBytes) none = typed_read (bad, TYPED_FROM_PIPE, 1, TYPED_WHOLE, &expected);
      /* "value N “…”", or "holds N values" where a line feed ends it */
      g_autofree char *number = g_strdup_printf (" %" G_GSIZE_FORMAT " ", index + 1);

      g_test_message ("value %" G_GSIZE_FORMAT " → “%s”: %s", index + 1, damage[d].replacement,
                      expected != NULL ? expected->message : "(no error)");
      g_assert_null (none);
      g_assert_nonnull (expected);
      g_assert_nonnull (strstr (expected->message, number));
      for (guint threads = 1; threads <= 4; threads *= 2)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GBytes) got = typed_read (bad, TYPED_FROM_BYTES, threads, TYPED_WHOLE, &error);

          g_assert_null (got);
          assert_same_error (error, expected);
        }
    }
}

/* How lines_read() reads a text: in memory, from a stream that cannot
 * seek (a pipe's, in random pieces of up to 70,000 bytes), or from one
 * that can (a file's: the window is filled, and read on while threads
 * parse), with the default buffer or one of 1 MiB. */
typedef enum
{
  LINES_BYTES,
  LINES_PIPE,
  LINES_FILE,
  LINES_FILE_SMALL,
} LinesSource;

/* Reads every array of @text from @source with @threads threads, each in
 * pieces of @piece values. */
static SerioBundle *
lines_read (GBytes       *text,
            LinesSource   source,
            guint         threads,
            gsize         piece,
            GError      **error)
{
  g_autoptr(GInputStream) stream = source == LINES_BYTES ? NULL :
                                   source == LINES_PIPE ? test_chunked_input_stream_new (text, -70000) :
                                                          g_memory_input_stream_new_from_bytes (text);
  g_autoptr(SerioReader) reader = source == LINES_BYTES ? serio_reader_new_for_bytes (text) :
                                  g_object_new (SERIO_TYPE_READER, "stream", stream, "buffer-size",
                                                source == LINES_FILE_SMALL ? 1024 * 1024 : 4 * 1024 * 1024,
                                                NULL);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  GError *local_error = NULL;

  serio_reader_set_threads (reader, threads);
  while (serio_reader_next (reader, NULL, &local_error))
    {
      guint64 n = serio_reader_get_n_values (reader);
      g_autoptr(GByteArray) values = g_byte_array_new ();

      while (values->len < n * sizeof (double))
        {
          g_autoptr(GBytes) got = serio_reader_read_bytes (reader, piece, NULL, &local_error);

          if (got == NULL)
            {
              g_propagate_error (error, local_error);
              return NULL;
            }
          g_assert_cmpuint (g_bytes_get_size (got), >, 0);
          g_byte_array_append (values, g_bytes_get_data (got, NULL), g_bytes_get_size (got));
        }
      serio_bundle_append (bundle, serio_reader_get_name (reader),
                           (const double *) (gconstpointer) values->data, n);
    }

  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }
  return g_steal_pointer (&bundle);
}

/* The offset of the line feed that ends line @line (0-based) of @text. */
static gsize
lines_nl (GBytes *text,
          guint   line)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  gsize after = 0;

  for (guint k = 0; k <= line; k++)
    {
      const char *nl = memchr (data + after, '\n', size - after);

      g_assert_nonnull (nl);
      after = nl - data + 1;
    }

  return after - 1;
}

/* @text with its @len bytes at @at replaced by @with. */
static GBytes *
lines_edit (GBytes     *text,
            gsize       at,
            gsize       len,
            const char *with)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  GString *out = g_string_new_len (data, at);

  g_string_append (out, with);
  g_string_append_len (out, data + at + len, size - at - len);
  return g_string_free_to_bytes (out);
}

/* @text with @insert after each line feed, or before it with @before. */
static GBytes *
lines_around_nl (GBytes     *text,
                 const char *insert,
                 gboolean    before)
{
  gsize size;
  const char *data = g_bytes_get_data (text, &size);
  GString *out = g_string_new (NULL);

  for (gsize i = 0; i < size; i++)
    {
      if (data[i] == '\n' && before)
        g_string_append (out, insert);
      g_string_append_c (out, data[i]);
      if (data[i] == '\n' && !before)
        g_string_append (out, insert);
    }
  return g_string_free_to_bytes (out);
}

/* Reads @text in memory (where threads parse a long line without a look
 * for its end) and from a file's stream (whose windows they parse while
 * the file is read on), with 1, 2 and 4 threads, whole and in pieces, and
 * checks that it gives what a pipe's reader gives on one thread: the same
 * arrays, bit for bit, or the same error. */
static void
lines_compare (GBytes     *text,
               const char *what)
{
  static const struct
  {
    LinesSource source;
    guint       threads;
  } reads[] = {
    { LINES_BYTES, 1 }, { LINES_BYTES, 2 }, { LINES_BYTES, 4 },
    { LINES_FILE, 1 }, { LINES_FILE, 2 }, { LINES_FILE, 4 }, { LINES_FILE_SMALL, 2 },
  };
  g_autoptr(GError) expected = NULL;
  g_autoptr(SerioBundle) reference = lines_read (text, LINES_PIPE, 1, G_MAXSIZE, &expected);

  g_test_message ("%s: %s", what, expected != NULL ? expected->message : "(read)");
  for (gsize r = 0; r < G_N_ELEMENTS (reads); r++)
    for (guint whole = 0; whole < 2; whole++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(SerioBundle) got = lines_read (text, reads[r].source, reads[r].threads,
                                                 whole ? G_MAXSIZE : 100003, &error);

        if (expected != NULL)
          {
            g_assert_null (got);
            assert_same_error (error, expected);
          }
        else
          {
            g_assert_no_error (error);
            g_assert_true (serio_bundle_equal (got, reference));
          }
      }
}

static void
test_long_lines (void)
{
  /* lines of about 150 KB, 4.4 MB, 2 bytes, none, 200 KB and 6.5 MB: all
   * but two longer than the look of a line's start (128 KiB); damage
   * goes to the longest two */
  const gsize scale = test_slow_tool () ? 10 : 1;
  const gsize sizes[] = { 7000, 200000 / scale, 1, 0, 9000, 300000 / scale };
  const guint long_lines[] = { 1, 5 };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) plain = NULL;
  g_autoptr(GBytes) sealed = NULL;
  g_autoptr(GBytes) blank = NULL;
  g_autoptr(GBytes) crlf = NULL;

  g_test_summary ("Several lines longer than the look of a line's start (128 KiB), which "
                  "threads parse in memory without a look for their ends, after and before "
                  "short ones, plain, sealed, with blank lines and with CRLF, read in memory "
                  "and from a file's stream with 1, 2 and 4 threads, whole and in pieces, give "
                  "the arrays or the errors of a pipe's reader on one thread; so do damage at "
                  "each long line's first and last tokens, a line feed early, one missing, a "
                  "value more and an empty one.");
  typed_all_threads ();

  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree double *values = g_new (double, MAX (sizes[i], 1));
      g_autofree char *name = g_strdup_printf ("a%" G_GSIZE_FORMAT, i);

      for (gsize k = 0; k < sizes[i]; k++)
        values[k] = test_double_of (test_rand_u64 ());
      serio_bundle_append (bundle, name, values, sizes[i]);
    }
  plain = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  sealed = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_NONE);
  blank = lines_around_nl (plain, "\n", FALSE);
  crlf = lines_around_nl (plain, "\r", TRUE);
  g_assert_cmpuint (lines_nl (plain, 1) - lines_nl (plain, 0), >, 2 * 128 * 1024);
  g_assert_cmpuint (lines_nl (plain, 5) - lines_nl (plain, 4), >, 2 * 128 * 1024);

  lines_compare (plain, "plain");
  lines_compare (sealed, "sealed");
  lines_compare (blank, "blank lines");
  lines_compare (crlf, "CRLF");

  for (gsize l = 0; l < G_N_ELEMENTS (long_lines); l++)
    {
      gsize nl = lines_nl (plain, long_lines[l]);
      const struct
      {
        gsize       at;
        gsize       len;
        const char *with;
        const char *what;
      } damage[] = {
        { nl - 1, 1, "x", "the last token bad" },
        { nl, 0, ",1", "a value more" },
        { nl, 0, ",", "an empty last value" },
        { nl - 40, 0, "\n", "a line feed early" },
        { nl, 1, "", "no line feed" },
        { nl - 20, 0, "\r", "a carriage return inside" },
      };
      g_autoptr(GBytes) first = NULL;
      const char *data = g_bytes_get_data (plain, NULL);
      gsize values_at = lines_nl (plain, long_lines[l] - 1) + 1;

      /* the values of the line start after its third bar */
      for (guint bars = 0; bars < 3; values_at++)
        bars += data[values_at] == '|';
      first = lines_edit (plain, values_at, 0, "+");
      lines_compare (first, "the first token bad");

      for (gsize d = 0; d < G_N_ELEMENTS (damage); d++)
        {
          g_autoptr(GBytes) bad = lines_edit (plain, damage[d].at, damage[d].len, damage[d].with);

          lines_compare (bad, damage[d].what);
        }
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reader/tables", test_tables);
  g_test_add_func ("/reader/cut-sample", test_cut_sample);
  g_test_add_func ("/reader/long", test_long);
  g_test_add_data_func ("/reader/mutations/plain", GINT_TO_POINTER (FALSE), test_mutations);
  g_test_add_data_func ("/reader/mutations/sealed", GINT_TO_POINTER (TRUE), test_mutations);
  g_test_add_data_func ("/reader/large/records", GINT_TO_POINTER (FALSE), test_large);
  g_test_add_data_func ("/reader/large/one-line", GINT_TO_POINTER (TRUE), test_large);
  g_test_add_func ("/reader/skip", test_skip);
  g_test_add_func ("/reader/shapes", test_shapes);
  g_test_add_func ("/reader/hostile-count", test_hostile_count);
  g_test_add_func ("/reader/stream-error", test_stream_error);
  g_test_add_func ("/reader/for-bytes", test_for_bytes);
  g_test_add_func ("/reader/bytes-and-stream", test_bytes_and_stream);
  g_test_add_func ("/reader/typed-parallel", test_typed_parallel);
  g_test_add_func ("/reader/typed-parallel-errors", test_typed_parallel_errors);
  g_test_add_func ("/reader/bad-value-after-piece", test_bad_value_after_piece);
  g_test_add_func ("/reader/read-error-during-parse", test_read_error_during_parse);
  g_test_add_func ("/reader/long-line-in-memory", test_long_line_in_memory);
  g_test_add_func ("/reader/long-lines", test_long_lines);
  g_test_add_func ("/reader/long-name-after-parallel", test_long_name_after_parallel);
  g_test_add_func ("/reader/read-records", test_read_records);
  g_test_add_func ("/reader/read-records-errors", test_read_records_errors);

  return g_test_run ();
}
