/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-locale.c: the text does not depend on the locale
 *
 * Copyright 2026 The libserio authors
 *
 * Each test builds its reference in the C locale, switches the whole
 * process to another locale with setlocale(), as an application would, and
 * checks that writing and reading give exactly the same results there.
 * de_DE and fr_FR write "1,5" for 1.5; ar_EG changes the rest of the locale
 * data. A locale that is not installed is skipped (generate them with
 * Debian's locales package; CI does).
 */

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <serio.h>

#include "test-utils.h"

typedef struct
{
  const char *name;
  const char *decimal_point;   /* what printf uses there, if it matters */
} TestLocale;

static const TestLocale test_locales[] = {
  { "de_DE.UTF-8", "," },
  { "fr_FR.UTF-8", "," },
  { "ar_EG.UTF-8", NULL },
};

/* Switches to @locale; FALSE (and the test skipped) if it is missing. */
static gboolean
enter_locale (const TestLocale *locale)
{
  char printed[16];

  if (setlocale (LC_ALL, locale->name) == NULL)
    {
      g_autofree char *reason = g_strdup_printf ("locale %s is not installed", locale->name);

      setlocale (LC_ALL, "C");
      g_test_skip (reason);
      return FALSE;
    }

  /* Make sure the locale really is in force, so the test can fail. */
  snprintf (printed, sizeof printed, "%.1f", 1.5);
  g_test_message ("%s: 1.5 prints as “%s”", locale->name, printed);
  if (locale->decimal_point != NULL)
    {
      g_autofree char *expected = g_strconcat ("1", locale->decimal_point, "5", NULL);

      g_assert_cmpstr (printed, ==, expected);
    }

  return TRUE;
}

static SerioBundle *
reference_bundle (void)
{
  const double fixed[] = {
    0.5, 0.1, -0.1, 1.5, 1234567.0, 1e300, -1e-300, DBL_MAX, DBL_TRUE_MIN,
    0x1p61, 0x1p62, 0.0, -0.0, INFINITY, -INFINITY, NAN,
  };
  guint n = test_iterations (100000);
  g_autofree double *random = g_new (double, n);
  SerioBundle *bundle = serio_bundle_new ();

  for (guint i = 0; i < n; i++)
    random[i] = test_double_of (test_rand_interesting ());

  serio_bundle_append (bundle, "fixed", fixed, G_N_ELEMENTS (fixed));
  serio_bundle_append (bundle, "größe 1,5", random, n);
  serio_bundle_append (bundle, "", NULL, 0);

  return bundle;
}

static void
test_output (gconstpointer data)
{
  const TestLocale *locale = data;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GBytes) c_bytes = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *c_text = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("to_string and to_bytes give byte-identical output in the "
                  "C locale and in the named one.");

  setlocale (LC_ALL, "C");
  bundle = reference_bundle ();
  c_text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  c_bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);

  if (!enter_locale (locale))
    return;

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  bytes = serio_bundle_to_bytes (bundle, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (text, ==, c_text);
  g_assert_true (g_bytes_equal (bytes, c_bytes));
  g_assert_cmphex (serio_compute_checksum (text), ==, serio_compute_checksum (c_text));

  setlocale (LC_ALL, "C");
}

/* Inputs whose fate must not depend on the locale: "1,5" is two values
 * everywhere, "1.5" is malformed everywhere. */
static const struct
{
  const char *text;
  int         code;   /* -1 when accepted */
} inputs[] = {
  { "v1|x|2|1,5\n", -1 },
  { "v1|x|1|1,5\n", SERIO_ERROR_LENGTH },
  { "v1|x|1|1.5\n", SERIO_ERROR_SYNTAX },
  { "v1|x|1|3p-1\n", -1 },
  { "v1|x|1|1e3\n", SERIO_ERROR_SYNTAX },
  { "v1|x|1|1 000\n", SERIO_ERROR_SYNTAX },
  { "v1|x|1|1p1024\n", SERIO_ERROR_DOMAIN },
  { "v1|größe|1|nan\r\n\n", -1 },
  { "V1|x|0|\n", SERIO_ERROR_VERSION },
  { "v1|x|0|", SERIO_ERROR_TRUNCATED },
};

static void
test_parsing (gconstpointer data)
{
  const TestLocale *locale = data;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(SerioBundle) parsed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *c_text = NULL;
  g_autofree char *again = NULL;
  g_autoptr(GPtrArray) c_results = g_ptr_array_new_with_free_func (g_object_unref);

  g_test_summary ("from_string reads the same bundles, and rejects the same "
                  "inputs with the same codes, in the C locale and in the "
                  "named one.");

  setlocale (LC_ALL, "C");
  bundle = reference_bundle ();
  c_text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  for (gsize i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      SerioBundle *result = serio_bundle_new_from_string (inputs[i].text, NULL);

      g_assert_cmpint (result == NULL, ==, inputs[i].code != -1);
      if (result != NULL)
        g_ptr_array_add (c_results, result);
    }

  if (!enter_locale (locale))
    return;

  parsed = serio_bundle_new_from_string (c_text, &error);
  g_assert_no_error (error);
  g_assert_true (serio_bundle_equal (parsed, bundle));
  again = serio_bundle_to_string (parsed, SERIO_SAVE_FLAGS_PLAIN);
  g_assert_cmpstr (again, ==, c_text);

  for (gsize i = 0, accepted = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) input_error = NULL;
      g_autoptr(SerioBundle) result = serio_bundle_new_from_string (inputs[i].text, &input_error);

      if (inputs[i].code == -1)
        {
          g_assert_no_error (input_error);
          g_assert_true (serio_bundle_equal (result, g_ptr_array_index (c_results, accepted++)));
        }
      else
        {
          g_assert_null (result);
          g_assert_error (input_error, SERIO_ERROR, inputs[i].code);
        }
    }

  setlocale (LC_ALL, "C");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (test_locales); i++)
    {
      g_autofree char *output = g_strdup_printf ("/locale/%s/output", test_locales[i].name);
      g_autofree char *parsing = g_strdup_printf ("/locale/%s/parsing", test_locales[i].name);

      g_test_add_data_func (output, &test_locales[i], test_output);
      g_test_add_data_func (parsing, &test_locales[i], test_parsing);
    }

  return g_test_run ();
}
