/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-nochecks.c: the library built with G_DISABLE_CHECKS still refuses
 * what it could not write as text its reader accepts
 *
 * Copyright 2026 The libserio authors
 *
 * Linked against a copy of the library compiled with -DG_DISABLE_CHECKS,
 * as some distributions build GLib-based code: g_return_if_fail () is
 * compiled out there, and the checks on appended names and sizes must not
 * go with it.
 */

#include <locale.h>
#include <string.h>

#include <serio.h>

#ifndef G_DISABLE_CHECKS
# error "this test is built with G_DISABLE_CHECKS, like its library"
#endif

#define EXPECT_CRITICAL() \
  g_test_expect_message ("Serio", G_LOG_LEVEL_CRITICAL, "*assertion*failed*")

/* Proves that the library under test is the one without checks: an
 * ordinary precondition, that @error is not set already, vanishes (with
 * checks, this is a critical, which fails the test, and no bundle). */
static void
test_checks_are_disabled (void)
{
  g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "set before");
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string ("", &error);

  g_assert_nonnull (bundle);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
}

static void
assert_empty_and_readable (SerioBundle *bundle)
{
  g_autofree char *text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) back = serio_bundle_new_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (back);
  g_assert_cmpuint (serio_bundle_get_n_arrays (back), ==, 0);
  g_assert_cmpuint (serio_bundle_get_n_arrays (bundle), ==, 0);
  g_assert_cmpstr (text, ==, "");
}

static void
test_invalid_names (void)
{
  static const double values[] = { 1.0, 2.0 };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) bytes = g_bytes_new (values, sizeof values);
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (double));

  g_array_append_vals (array, values, G_N_ELEMENTS (values));

  EXPECT_CRITICAL ();
  serio_bundle_append (bundle, "bad\xff", values, G_N_ELEMENTS (values));
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append_bytes (bundle, "\xc3", bytes);
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append_array (bundle, "\xed\xa0\x80", array);   /* a surrogate */
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append (bundle, NULL, values, G_N_ELEMENTS (values));
  g_test_assert_expected_messages ();

  /* The names of a seal's records, which the reader takes for a seal. */
  EXPECT_CRITICAL ();
  serio_bundle_append (bundle, "serio.sealed", values, G_N_ELEMENTS (values));
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append_bytes (bundle, "serio.seal", bytes);
  g_test_assert_expected_messages ();

  assert_empty_and_readable (bundle);
}

static void
test_sizes (void)
{
  static const double values[] = { 1.0 };
  static const float floats[] = { 1.0f, 2.0f };
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(GBytes) odd = g_bytes_new ("1234567", 7);
  g_autoptr(GArray) array = g_array_new (FALSE, FALSE, sizeof (float));

  g_array_append_vals (array, floats, G_N_ELEMENTS (floats));

  /* A count whose size wraps would copy a few bytes and then canonicalise
   * far past them. */
  EXPECT_CRITICAL ();
  serio_bundle_append (bundle, "w", values, G_MAXSIZE / sizeof (double) + 2);
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append (bundle, "w", NULL, 3);
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append_bytes (bundle, "w", odd);
  g_test_assert_expected_messages ();

  EXPECT_CRITICAL ();
  serio_bundle_append_array (bundle, "w", array);
  g_test_assert_expected_messages ();

  assert_empty_and_readable (bundle);
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/nochecks/checks-are-disabled", test_checks_are_disabled);
  g_test_add_func ("/nochecks/invalid-names", test_invalid_names);
  g_test_add_func ("/nochecks/sizes", test_sizes);

  return g_test_run ();
}
