/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-errors.c: the location that SERIO_ERROR errors carry as data
 *
 * Copyright 2026 The libserio authors
 */

#include <locale.h>
#include <string.h>

#include <gio/gio.h>
#include <serio.h>

/* Runs first, before anything in this program calls serio_error_quark ():
 * an error made from the domain's name, as PyGObject makes one, must have
 * the private data that the getters read (the library registers the
 * domain when it is loaded). Under ASan or valgrind a missing registration
 * is a read before the GError's block. */
static void
test_domain_registered_on_load (void)
{
  GQuark domain = g_quark_from_string ("serio-error-quark");
  g_autoptr(GError) error = g_error_new_literal (domain, SERIO_ERROR_SYNTAX, "made elsewhere");
  g_autoptr(GError) copy = NULL;

  g_assert_true (domain == SERIO_ERROR);
  g_assert_cmpuint (serio_error_get_line (error), ==, 0);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, 0);
  g_assert_null (serio_error_get_detail (error));

  copy = g_error_copy (error);
  g_assert_cmpuint (serio_error_get_line (copy), ==, 0);
  g_assert_null (serio_error_get_detail (copy));
}

static void
test_other_domains (void)
{
  g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED, "Line 3: no");

  g_assert_cmpuint (serio_error_get_line (error), ==, 0);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, 0);
  g_assert_null (serio_error_get_detail (error));
}

static void
test_value_error (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) copy = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string ("v1|a|1|1\n\r\nv1|b|3|1,2,01\n", &error);

  g_assert_null (bundle);
  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_SYNTAX);
  g_assert_cmpstr (error->message, ==,
                   "Line 3, value 3 “01”: a number must not start with a leading zero");
  g_assert_cmpuint (serio_error_get_line (error), ==, 3);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, 3);
  g_assert_cmpstr (serio_error_get_detail (error), ==,
                   "value 3 “01”: a number must not start with a leading zero");

  /* Copies (GTask, g_propagate_error and bindings copy errors) and
   * prefixes keep the data. */
  copy = g_error_copy (error);
  g_clear_error (&error);
  g_assert_cmpuint (serio_error_get_line (copy), ==, 3);
  g_assert_cmpuint (serio_error_get_value_index (copy), ==, 3);
  g_assert_cmpstr (serio_error_get_detail (copy), ==,
                   "value 3 “01”: a number must not start with a leading zero");
  g_prefix_error (&copy, "model: ");
  g_assert_cmpuint (serio_error_get_line (copy), ==, 3);
  g_assert_cmpstr (copy->message, ==,
                   "model: Line 3, value 3 “01”: a number must not start with a leading zero");
}

static void
test_line_errors (void)
{
  static const struct
  {
    const char *text;
    int         code;
    guint64     line;
    const char *detail;
  } cases[] = {
    { "v1|a|2|1\n", SERIO_ERROR_LENGTH, 1, "the count is 2 but the record holds 1 value" },
    { "\n\nv2|a|0|\n", SERIO_ERROR_VERSION, 3,
      "unsupported format version “v2” (this library reads “v1”)" },
    { "v1|a|0|\nv1|b|1|1", SERIO_ERROR_TRUNCATED, 2,
      "the input does not end with a line feed; it may have been cut short" },
    { "v1|a|x|\n", SERIO_ERROR_SYNTAX, 1,
      "the count “x” is not a decimal number without sign or leading zero, followed by “|”" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string (cases[i].text, &error);
      g_autofree char *message = NULL;

      g_assert_null (bundle);
      g_assert_error (error, SERIO_ERROR, cases[i].code);
      g_assert_cmpuint (serio_error_get_line (error), ==, cases[i].line);
      g_assert_cmpuint (serio_error_get_value_index (error), ==, 0);
      g_assert_cmpstr (serio_error_get_detail (error), ==, cases[i].detail);
      message = g_strdup_printf ("Line %" G_GUINT64_FORMAT ": %s", cases[i].line, cases[i].detail);
      g_assert_cmpstr (error->message, ==, message);
    }
}

static GFile *
write_temp (const char *contents)
{
  g_autoptr(GFileIOStream) stream = NULL;
  g_autoptr(GError) error = NULL;
  GFile *file = g_file_new_tmp ("test-errors-XXXXXX.serio", &stream, &error);

  g_assert_no_error (error);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (stream)),
                             contents, strlen (contents), NULL, NULL, &error);
  g_assert_no_error (error);
  g_io_stream_close (G_IO_STREAM (stream), NULL, &error);
  g_assert_no_error (error);

  return file;
}

static void
assert_file_error (GFile        *file,
                   const GError *error)
{
  g_autofree char *name = g_file_get_parse_name (file);
  g_autofree char *expected = g_strdup_printf ("%s: Line 2: the count is 3 but the record holds 2 values",
                                               name);

  g_assert_error (error, SERIO_ERROR, SERIO_ERROR_LENGTH);
  g_assert_cmpstr (error->message, ==, expected);
  g_assert_cmpuint (serio_error_get_line (error), ==, 2);
  g_assert_cmpuint (serio_error_get_value_index (error), ==, 0);
  g_assert_cmpstr (serio_error_get_detail (error), ==, "the count is 3 but the record holds 2 values");
}

static void
from_file_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

/* Errors about a file's contents name the file; I/O errors are GIO's. */
static void
test_from_file (void)
{
  g_autoptr(GFile) file = write_temp ("v1|a|0|\nv1|b|3|1,2\n");
  g_autoptr(GFile) missing = g_file_new_for_path ("/nonexistent/test-errors.serio");
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_file (file, NULL, NULL, NULL, &error);
  g_autoptr(GAsyncResult) result = NULL;

  g_assert_null (bundle);
  assert_file_error (file, error);
  g_clear_error (&error);

  serio_bundle_new_from_file_async (file, G_PRIORITY_DEFAULT, NULL, NULL, NULL, NULL, from_file_done, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  bundle = serio_bundle_new_from_file_finish (result, &error);
  g_assert_null (bundle);
  assert_file_error (file, error);
  g_clear_error (&error);

  bundle = serio_bundle_new_from_file (missing, NULL, NULL, NULL, &error);
  g_assert_null (bundle);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpuint (serio_error_get_line (error), ==, 0);

  g_file_delete (file, NULL, NULL);
}

int
main (int   argc,
      char *argv[])
{
  setlocale (LC_ALL, "");
  setlocale (LC_MESSAGES, "C");
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/errors/domain-registered-on-load", test_domain_registered_on_load);
  g_test_add_func ("/errors/other-domains", test_other_domains);
  g_test_add_func ("/errors/value", test_value_error);
  g_test_add_func ("/errors/line", test_line_errors);
  g_test_add_func ("/errors/from-file", test_from_file);

  return g_test_run ();
}
