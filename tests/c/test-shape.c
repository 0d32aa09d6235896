/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-shape.c: shapes in names (serio-v1-files.md §3) through the public
 * API: get_shape, get_base_name, append_with_shape and the lookup rule
 *
 * Copyright 2026 The libserio authors
 */

#include <string.h>

#include <serio.h>

#include "test-utils.h"

/* A bundle with one array of @n_values zeros called @name. */
static SerioBundle *
bundle_of_count (const char *name,
                 gsize       n_values)
{
  SerioBundle *bundle = serio_bundle_new ();
  g_autofree double *zeros = g_new0 (double, MAX (n_values, 1));

  serio_bundle_append (bundle, name, zeros, n_values);
  return bundle;
}

/* Asserts that the array at @index has @base_name and the shape given as a
 * list of @n_dims dims after it. */
static void
assert_shape (SerioBundle *bundle,
              guint        index,
              const char  *base_name,
              guint        n_dims,
              ...)
{
  g_autofree char *base = serio_bundle_get_base_name (bundle, index);
  g_autofree guint64 *shape = NULL;
  guint got_dims = G_MAXUINT;
  va_list args;

  shape = serio_bundle_get_shape (bundle, index, &got_dims);
  g_assert_nonnull (shape);
  g_assert_cmpstr (base, ==, base_name);
  g_assert_cmpuint (got_dims, ==, n_dims);

  va_start (args, n_dims);
  for (guint i = 0; i < n_dims; i++)
    g_assert_cmpuint (shape[i], ==, va_arg (args, guint64));
  va_end (args);
}

/* The shape of a single array called @name holding @n_values values. */
static void
check_name (const char *name,
            gsize       n_values,
            const char *base_name,
            guint       n_dims,
            ...)
{
  g_autoptr(SerioBundle) bundle = bundle_of_count (name, n_values);
  g_autofree char *base = serio_bundle_get_base_name (bundle, 0);
  g_autofree guint64 *shape = NULL;
  guint got_dims = G_MAXUINT;
  va_list args;

  g_test_message ("%s with %" G_GSIZE_FORMAT " values", name, n_values);
  shape = serio_bundle_get_shape (bundle, 0, &got_dims);
  g_assert_cmpstr (base, ==, base_name);
  g_assert_cmpuint (got_dims, ==, n_dims);

  va_start (args, n_dims);
  for (guint i = 0; i < n_dims; i++)
    g_assert_cmpuint (shape[i], ==, va_arg (args, guint64));
  va_end (args);
}

static void
test_valid_suffixes (void)
{
  g_test_summary ("Names ending in a consistent canonical suffix have that shape");

  check_name ("conv1.weight[16x3x3x3]", 432, "conv1.weight", 4,
              (guint64) 16, (guint64) 3, (guint64) 3, (guint64) 3);
  check_name ("bn1.num_batches_tracked[]", 1, "bn1.num_batches_tracked", 0);
  check_name ("w[5]", 5, "w", 1, (guint64) 5);
  check_name ("[2x2]", 4, "", 2, (guint64) 2, (guint64) 2);
  check_name ("a[2][3]", 3, "a[2]", 1, (guint64) 3);
  check_name ("a[x][3]", 3, "a[x]", 1, (guint64) 3);
  check_name ("e[0]", 0, "e", 1, (guint64) 0);
  check_name ("e[0x7]", 0, "e", 2, (guint64) 0, (guint64) 7);
  check_name ("e[7x0x10]", 0, "e", 3, (guint64) 7, (guint64) 0, (guint64) 10);
  check_name ("one[1x1x1]", 1, "one", 3, (guint64) 1, (guint64) 1, (guint64) 1);
  /* A zero makes the product 0 even where the other dims overflow. */
  check_name ("z[18446744073709551615x2x0]", 0, "z", 3,
              G_MAXUINT64, (guint64) 2, (guint64) 0);
  check_name ("t\xc3\xa9t\xc3\xa9[2]", 2, "t\xc3\xa9t\xc3\xa9", 1, (guint64) 2);
}

static void
test_plain_names (void)
{
  g_test_summary ("Malformed or inconsistent suffixes leave a plain 1-D name");

  /* No suffix. */
  check_name ("fc.bias", 10, "fc.bias", 1, (guint64) 10);
  check_name ("", 3, "", 1, (guint64) 3);
  check_name ("]", 1, "]", 1, (guint64) 1);
  check_name ("[", 1, "[", 1, (guint64) 1);
  /* Product differs from the count. */
  check_name ("w[2x3]", 5, "w[2x3]", 1, (guint64) 5);
  check_name ("w[]", 0, "w[]", 1, (guint64) 0);
  check_name ("w[]", 2, "w[]", 1, (guint64) 2);
  check_name ("w[0]", 1, "w[0]", 1, (guint64) 1);
  /* Not canonical decimals. */
  check_name ("w[02]", 2, "w[02]", 1, (guint64) 2);
  check_name ("w[00]", 0, "w[00]", 1, (guint64) 0);
  check_name ("w[+2]", 2, "w[+2]", 1, (guint64) 2);
  check_name ("w[ 2]", 2, "w[ 2]", 1, (guint64) 2);
  check_name ("w[2 ]", 2, "w[2 ]", 1, (guint64) 2);
  check_name ("w[2X1]", 2, "w[2X1]", 1, (guint64) 2);
  check_name ("w[2*1]", 2, "w[2*1]", 1, (guint64) 2);
  check_name ("w[2,1]", 2, "w[2,1]", 1, (guint64) 2);
  check_name ("w[x2]", 2, "w[x2]", 1, (guint64) 2);
  check_name ("w[2x]", 2, "w[2x]", 1, (guint64) 2);
  check_name ("w[2xx1]", 2, "w[2xx1]", 1, (guint64) 2);
  check_name ("w[x]", 1, "w[x]", 1, (guint64) 1);
  check_name ("w[-2]", 2, "w[-2]", 1, (guint64) 2);
  check_name ("w[\xd9\xa2]", 2, "w[\xd9\xa2]", 1, (guint64) 2);  /* Arabic-Indic 2 */
  /* Something after the ']'. */
  check_name ("w[2] ", 2, "w[2] ", 1, (guint64) 2);
  check_name ("w[2]]", 2, "w[2]]", 1, (guint64) 2);
  check_name ("w[2]x", 2, "w[2]x", 1, (guint64) 2);
  /* The last '[' opens the suffix. */
  check_name ("w[2[3]", 3, "w[2", 1, (guint64) 3);
  check_name ("w[2]3]", 6, "w[2]3]", 1, (guint64) 6);
  /* A dim beyond 64 bits, and a product that overflows. */
  check_name ("w[18446744073709551616]", 1, "w[18446744073709551616]", 1, (guint64) 1);
  check_name ("w[100000000000000000000]", 1, "w[100000000000000000000]", 1, (guint64) 1);
  check_name ("w[4294967296x4294967296]", 0, "w[4294967296x4294967296]", 1, (guint64) 0);
}

static void
test_max_dims (void)
{
  g_autoptr(GString) name = g_string_new ("m[1");
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  double one = 1.0;
  g_autofree guint64 *shape = NULL;
  guint n_dims;

  g_test_summary ("A suffix lists at most SERIO_SHAPE_MAX_DIMS (32) dims");
  g_assert_cmpint (SERIO_SHAPE_MAX_DIMS, ==, 32);

  for (guint i = 1; i < SERIO_SHAPE_MAX_DIMS; i++)
    g_string_append (name, "x1");
  g_string_append (name, "]");
  serio_bundle_append (bundle, name->str, &one, 1);

  g_string_truncate (name, name->len - 1);
  g_string_append (name, "x1]");
  serio_bundle_append (bundle, name->str, &one, 1);

  shape = serio_bundle_get_shape (bundle, 0, &n_dims);
  g_assert_cmpuint (n_dims, ==, 32);
  for (guint i = 0; i < n_dims; i++)
    g_assert_cmpuint (shape[i], ==, 1);
  g_clear_pointer (&shape, g_free);

  shape = serio_bundle_get_shape (bundle, 1, &n_dims);
  g_assert_cmpuint (n_dims, ==, 1);
  g_assert_cmpuint (shape[0], ==, 1);
  g_assert_true (g_str_has_suffix (serio_bundle_get_name (bundle, 1), "x1]"));
  {
    g_autofree char *base = serio_bundle_get_base_name (bundle, 1);
    g_assert_cmpstr (base, ==, serio_bundle_get_name (bundle, 1));
  }
}

static void
test_long_names (void)
{
  g_autoptr(GString) name = g_string_new ("a[");
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  double one = 1.0;
  g_autofree guint64 *shape = NULL;
  g_autofree char *base = NULL;
  guint n_dims;

  g_test_summary ("A name of a million dims or brackets is a plain name, read in one pass");

  for (guint i = 0; i < 500000; i++)
    g_string_append (name, "1x");
  g_string_append (name, "1]");
  serio_bundle_append (bundle, name->str, &one, 1);

  g_string_assign (name, "");
  for (guint i = 0; i < 1000000; i++)
    g_string_append_c (name, '[');
  g_string_append (name, "1]");
  serio_bundle_append (bundle, name->str, &one, 1);

  shape = serio_bundle_get_shape (bundle, 0, &n_dims);
  g_assert_cmpuint (n_dims, ==, 1);
  g_assert_cmpuint (shape[0], ==, 1);
  g_clear_pointer (&shape, g_free);

  shape = serio_bundle_get_shape (bundle, 1, &n_dims);
  base = serio_bundle_get_base_name (bundle, 1);
  g_assert_cmpuint (n_dims, ==, 1);
  g_assert_cmpuint (strlen (base), ==, 999999);
  g_assert_true (serio_bundle_lookup (bundle, base, NULL));
}

static void
test_parsed_text (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (
    "v1|conv1.weight[2x1x1x1]|2|1,-1\n"
    "v1|bn1.num_batches_tracked[]|1|5\n"
    "v1|fc.bias|3|1,2,3\n"
    "v1|bad[2x2]|3|1,2,3\n", &error);

  g_test_summary ("Shapes come from the names of parsed text too");
  g_assert_no_error (error);
  assert_shape (bundle, 0, "conv1.weight", 4, (guint64) 2, (guint64) 1, (guint64) 1, (guint64) 1);
  assert_shape (bundle, 1, "bn1.num_batches_tracked", 0);
  assert_shape (bundle, 2, "fc.bias", 1, (guint64) 3);
  assert_shape (bundle, 3, "bad[2x2]", 1, (guint64) 3);
}

static void
test_append_with_shape (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  const guint64 shape[] = { 2, 3 };
  const guint64 vector[] = { 4 };
  const guint64 empty[] = { 3, 0 };
  const double values[] = { 0.5, -0.0, 1, 2, 3, 4 };
  const guint64 expected[] = {
    0x3FE0000000000000, 0x8000000000000000, 0x3FF0000000000000,
    0x4000000000000000, 0x4008000000000000, 0x4010000000000000,
  };
  double scalar = 5;
  gsize n_values;

  g_test_summary ("append_with_shape writes the suffix, for every shape");

  serio_bundle_append_with_shape (bundle, "w", shape, 2, values, 6);
  serio_bundle_append_with_shape (bundle, "n", NULL, 0, &scalar, 1);
  serio_bundle_append_with_shape (bundle, "v", vector, 1, values, 4);
  serio_bundle_append_with_shape (bundle, "e", empty, 2, NULL, 0);
  serio_bundle_append_with_shape (bundle, "a|b", shape, 2, values, 6);

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==,
                   "v1|w[2x3]|6|1p-1,-0,1,2,3,4\n"
                   "v1|n[]|1|5\n"
                   "v1|v[4]|4|1p-1,-0,1,2\n"
                   "v1|e[3x0]|0|\n"
                   "v1|a_b[2x3]|6|1p-1,-0,1,2,3,4\n");

  test_assert_same_bits (serio_bundle_get_values (bundle, 0, &n_values), expected, 6);
  g_assert_cmpuint (n_values, ==, 6);

  parsed = serio_bundle_new_from_string (text, &error);
  g_assert_no_error (error);
  g_assert_true (serio_bundle_equal (parsed, bundle));
  assert_shape (parsed, 0, "w", 2, (guint64) 2, (guint64) 3);
  assert_shape (parsed, 1, "n", 0);
  assert_shape (parsed, 2, "v", 1, (guint64) 4);
  assert_shape (parsed, 3, "e", 2, (guint64) 3, (guint64) 0);
  assert_shape (parsed, 4, "a_b", 2, (guint64) 2, (guint64) 3);
}

static void
test_append_bytes_with_shape (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const guint64 shape[] = { 1, 2 };
  const double values[] = { 0.25, -1 };
  g_autoptr(GBytes) bytes = g_bytes_new (values, sizeof values);
  g_autoptr(GBytes) empty = g_bytes_new (NULL, 0);
  const guint64 zero[] = { 0 };
  g_autofree char *text = NULL;

  serio_bundle_append_bytes_with_shape (bundle, "w", shape, 2, bytes);
  serio_bundle_append_bytes_with_shape (bundle, "e", zero, 1, empty);
  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, "v1|w[1x2]|2|1p-2,-1\nv1|e[0]|0|\n");
  assert_shape (bundle, 0, "w", 2, (guint64) 1, (guint64) 2);
}

static void
test_base_name_with_suffix_inside (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const guint64 shape[] = { 2 };
  const double values[] = { 1, 2 };

  g_test_summary ("A base name that itself ends in a suffix survives");
  serio_bundle_append_with_shape (bundle, "a[2]", shape, 1, values, 2);
  g_assert_cmpstr (serio_bundle_get_name (bundle, 0), ==, "a[2][2]");
  assert_shape (bundle, 0, "a[2]", 1, (guint64) 2);
}

static void
test_lookup_rule (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double values[] = { 1, 2, 3, 4, 5, 6 };
  guint index = G_MAXUINT;

  g_test_summary ("lookup: the exact stored name first, then the base name");

  serio_bundle_append (bundle, "w[2]", values, 2);     /* 0: base w */
  serio_bundle_append (bundle, "w", values, 3);        /* 1: plain w */
  serio_bundle_append (bundle, "x[3]", values, 3);     /* 2: base x */
  serio_bundle_append (bundle, "x[2x1]", values, 2);   /* 3: base x */
  serio_bundle_append (bundle, "y[5]", values, 3);     /* 4: plain y[5] */
  serio_bundle_append (bundle, "z[]", values, 1);      /* 5: base z, 0-d */
  serio_bundle_append (bundle, "w[3]", values, 3);     /* 6: base w */

  /* An exact name wins, even after a base-name match. */
  g_assert_true (serio_bundle_lookup (bundle, "w", &index));
  g_assert_cmpuint (index, ==, 1);
  g_assert_true (serio_bundle_lookup (bundle, "w[2]", &index));
  g_assert_cmpuint (index, ==, 0);
  g_assert_true (serio_bundle_lookup (bundle, "w[3]", &index));
  g_assert_cmpuint (index, ==, 6);

  /* Two arrays with the same base name: the first. */
  g_assert_true (serio_bundle_lookup (bundle, "x", &index));
  g_assert_cmpuint (index, ==, 2);
  g_assert_true (serio_bundle_lookup (bundle, "x[2x1]", &index));
  g_assert_cmpuint (index, ==, 3);

  /* An inconsistent suffix is part of the name. */
  g_assert_true (serio_bundle_lookup (bundle, "y[5]", &index));
  g_assert_cmpuint (index, ==, 4);
  index = 42;
  g_assert_false (serio_bundle_lookup (bundle, "y", &index));
  g_assert_cmpuint (index, ==, 42);

  g_assert_true (serio_bundle_lookup (bundle, "z", &index));
  g_assert_cmpuint (index, ==, 5);
  g_assert_true (serio_bundle_lookup (bundle, "z", NULL));

  /* Prefixes are not base names. */
  g_assert_false (serio_bundle_lookup (bundle, "", NULL));
  g_assert_false (serio_bundle_lookup (bundle, "x[", NULL));
  g_assert_false (serio_bundle_lookup (bundle, "w[2", NULL));
  g_assert_false (serio_bundle_lookup (bundle, "z[", NULL));
}

static void
test_lookup_empty_base (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double values[] = { 1, 2 };
  guint index = G_MAXUINT;

  serio_bundle_append (bundle, "a", values, 1);
  serio_bundle_append (bundle, "[2]", values, 2);
  g_assert_true (serio_bundle_lookup (bundle, "", &index));
  g_assert_cmpuint (index, ==, 1);
}

static void
test_dup_values (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const double values[] = { 0.5, -0.0 };
  const guint64 expected[] = { 0x3FE0000000000000, 0x8000000000000000 };
  g_autofree double *copy = NULL;
  g_autofree double *empty = NULL;
  gsize n_values = 0;

  g_test_summary ("dup_values gives a copy that the caller may change");
  serio_bundle_append (bundle, "w", values, 2);
  serio_bundle_append (bundle, "e", NULL, 0);

  copy = serio_bundle_dup_values (bundle, 0, &n_values);
  g_assert_cmpuint (n_values, ==, 2);
  test_assert_same_bits (copy, expected, 2);
  g_assert_true (copy != serio_bundle_get_values (bundle, 0, &n_values));
  copy[0] = 42;
  test_assert_same_bits (serio_bundle_get_values (bundle, 0, &n_values), expected, 2);

  empty = serio_bundle_dup_values (bundle, 1, &n_values);
  g_assert_nonnull (empty);
  g_assert_cmpuint (n_values, ==, 0);
}

static void
test_preconditions (void)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  const guint64 shape[] = { 2, 3 };
  const guint64 huge[] = { G_MAXUINT64, 2 };
  guint64 many[SERIO_SHAPE_MAX_DIMS + 1];
  const double values[] = { 1, 2, 3, 4, 5, 6 };
  g_autoptr(GBytes) seven = g_bytes_new (values, 7);
  g_autoptr(GBytes) six = g_bytes_new (values, 6 * sizeof (double));
  guint n_dims = 7;
  gsize n_values = 7;

  g_test_summary ("A count that is not the product of the shape is a programmer error");
  for (guint i = 0; i < G_N_ELEMENTS (many); i++)
    many[i] = 1;

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "w", shape, 2, values, 5);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "w", NULL, 0, values, 0);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "w", huge, 2, values, 0);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "w", many, SERIO_SHAPE_MAX_DIMS + 1, values, 1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "w", NULL, 1, values, 1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_with_shape (bundle, "\xff", shape, 2, values, 6);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_bytes_with_shape (bundle, "w", shape, 2, seven);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  serio_bundle_append_bytes_with_shape (bundle, "w", shape, 1, six);
  g_test_assert_expected_messages ();

  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 0);

  /* The largest shape is fine. */
  serio_bundle_append_with_shape (bundle, "w", many, SERIO_SHAPE_MAX_DIMS, values, 1);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 1);

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_get_shape (bundle, 1, &n_dims));
  g_test_assert_expected_messages ();
  g_assert_cmpuint (n_dims, ==, 7);

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_get_base_name (bundle, 1));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (serio_bundle_dup_values (bundle, 1, &n_values));
  g_test_assert_expected_messages ();
  g_assert_cmpuint (n_values, ==, 7);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/shape/valid-suffixes", test_valid_suffixes);
  g_test_add_func ("/shape/plain-names", test_plain_names);
  g_test_add_func ("/shape/max-dims", test_max_dims);
  g_test_add_func ("/shape/long-names", test_long_names);
  g_test_add_func ("/shape/parsed-text", test_parsed_text);
  g_test_add_func ("/shape/append-with-shape", test_append_with_shape);
  g_test_add_func ("/shape/append-bytes-with-shape", test_append_bytes_with_shape);
  g_test_add_func ("/shape/base-name-with-suffix-inside", test_base_name_with_suffix_inside);
  g_test_add_func ("/shape/lookup-rule", test_lookup_rule);
  g_test_add_func ("/shape/lookup-empty-base", test_lookup_empty_base);
  g_test_add_func ("/shape/dup-values", test_dup_values);
  g_test_add_func ("/shape/preconditions", test_preconditions);

  return g_test_run ();
}
