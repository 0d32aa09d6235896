/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-checksum.c: serio_compute_checksum() against published FNV-1a vectors
 *
 * Copyright 2026 The libserio authors
 */

#include <locale.h>
#include <string.h>

#include <serio.h>

#include "test-utils.h"

static guint32
fold (guint64 h)
{
  return (guint32) ((h >> 32) ^ (h & 0xffffffff));
}

static void
test_spec_examples (void)
{
  g_autoptr(GBytes) empty = g_bytes_new (NULL, 0);
  g_autoptr(GBytes) a = g_bytes_new ("a", 1);
  g_autoptr(GBytes) foobar = g_bytes_new ("foobar", 6);

  g_assert_cmphex (fold (G_GUINT64_CONSTANT (0xcbf29ce484222325)), ==, 0x4fd0bfc1);
  g_assert_cmphex (fold (G_GUINT64_CONSTANT (0xaf63dc4c8601ec8c)), ==, 0x296230c0);
  g_assert_cmphex (fold (G_GUINT64_CONSTANT (0x85944171f73967e8)), ==, 0x72ad2699);

  g_assert_cmphex (serio_compute_checksum (""), ==, 0x4fd0bfc1);
  g_assert_cmphex (serio_compute_checksum ("a"), ==, 0x296230c0);
  g_assert_cmphex (serio_compute_checksum ("foobar"), ==, 0x72ad2699);
  g_assert_cmphex (serio_compute_checksum_for_bytes (empty), ==, 0x4fd0bfc1);
  g_assert_cmphex (serio_compute_checksum_for_bytes (a), ==, 0x296230c0);
  g_assert_cmphex (serio_compute_checksum_for_bytes (foobar), ==, 0x72ad2699);
}

static void
test_noll_vectors (void)
{
  g_autofree char *path = test_data_filename ("fnv1a64_vectors.tsv");
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) rows = NULL;
  guint n_rows = 0, n_strings = 0;

  g_test_summary ("Landon Curt Noll's 203 FNV-1a 64 vectors, folded to 32 "
                  "bits, through serio_compute_checksum_for_bytes() and, for inputs "
                  "without NUL, serio_compute_checksum().");

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  rows = g_strsplit (contents, "\n", -1);
  for (guint i = 0; rows[i] != NULL; i++)
    {
      g_auto(GStrv) columns = NULL;
      g_autoptr(GByteArray) input = NULL;
      g_autoptr(GBytes) bytes = NULL;
      guint64 hash, folded;

      if (rows[i][0] == '#' || rows[i][0] == '\0')
        continue;

      columns = g_strsplit (rows[i], "\t", -1);
      g_assert_cmpuint (g_strv_length (columns), ==, 3);
      g_assert_cmpuint (strlen (columns[1]), ==, 16);
      g_assert_cmpuint (strlen (columns[2]), ==, 8);

      input = test_decode_hex (columns[0]);
      hash = g_ascii_strtoull (columns[1], NULL, 16);
      folded = g_ascii_strtoull (columns[2], NULL, 16);

      /* the data file is consistent with the spec's folding */
      g_assert_cmphex (fold (hash), ==, folded);

      bytes = g_bytes_new (input->data, input->len);
      if (serio_compute_checksum_for_bytes (bytes) != folded)
        g_test_message ("line %u of the file: input %s", i + 1, columns[0]);
      g_assert_cmphex (serio_compute_checksum_for_bytes (bytes), ==, folded);

      if (input->len == 0 || memchr (input->data, '\0', input->len) == NULL)
        {
          g_autofree char *text = g_malloc0 (input->len + 1);

          if (input->len > 0)
            memcpy (text, input->data, input->len);

          g_assert_cmphex (serio_compute_checksum (text), ==, folded);
          n_strings++;
        }
      n_rows++;
    }

  g_assert_cmpuint (n_rows, ==, 203);
  g_test_message ("%u vectors, %u of them also as strings", n_rows, n_strings);
}

/* The checksum of a slice is that of its own bytes, wherever they sit. */
static void
test_slices (void)
{
  static const char text[] = "xfoobar";
  g_autoptr(GBytes) whole = g_bytes_new (text, sizeof text - 1);
  g_autoptr(GBytes) slice = g_bytes_new_from_bytes (whole, 1, 6);

  g_assert_cmphex (serio_compute_checksum_for_bytes (slice), ==, 0x72ad2699);
  g_assert_cmphex (serio_compute_checksum_for_bytes (whole), !=, 0x72ad2699);
}

/* A bundle's text has the same checksum as a string and as bytes. */
static void
test_bundle_text (void)
{
  const double values[] = { 0.1, -0.0, 1e300 };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GBytes) text_bytes = NULL;

  serio_bundle_append (bundle, "w", values, G_N_ELEMENTS (values));
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  text_bytes = g_bytes_new (text, strlen (text));

  g_assert_true (g_bytes_equal (bytes, text_bytes));
  g_assert_cmphex (serio_compute_checksum (text), ==, serio_compute_checksum_for_bytes (bytes));
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/checksum/spec-examples", test_spec_examples);
  g_test_add_func ("/checksum/noll-vectors", test_noll_vectors);
  g_test_add_func ("/checksum/slices", test_slices);
  g_test_add_func ("/checksum/bundle-text", test_bundle_text);

  return g_test_run ();
}
