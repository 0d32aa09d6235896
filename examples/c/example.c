/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* example.c: save two arrays with libserio, load them back, compare bits */

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <serio.h>

static const double weights[] = { 0.1, -0.0, 1e-300, G_MAXDOUBLE, 1.0 / 3.0 };
static const double bias[] = { -2.5 };

static gboolean
same_bits (SerioBundle  *bundle,
           const char   *name,
           const double *expected,
           gsize         n_expected)
{
  const double *values;
  gsize n_values;
  guint index;

  if (!serio_bundle_lookup (bundle, name, &index))
    return FALSE;

  values = serio_bundle_get_values (bundle, index, &n_values);

  return n_values == n_expected &&
         memcmp (values, expected, n_values * sizeof (double)) == 0;
}

static gboolean
save_and_load (GFile   *file,
               GError **error)
{
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) loaded = NULL;
  g_autoptr(GBytes) text = NULL;

  serio_bundle_append (bundle, "dense.w", weights, G_N_ELEMENTS (weights));
  serio_bundle_append (bundle, "dense.b", bias, G_N_ELEMENTS (bias));

  /* Atomic: a crash leaves either the old file or the new one. */
  if (!serio_bundle_save_to_file (bundle, file, SERIO_SAVE_FLAGS_NONE, NULL, NULL, NULL, error))
    return FALSE;

  loaded = serio_bundle_new_from_file (file, NULL, NULL, NULL, error);
  if (loaded == NULL)
    return FALSE;

  if (!same_bits (loaded, "dense.w", weights, G_N_ELEMENTS (weights)) ||
      !same_bits (loaded, "dense.b", bias, G_N_ELEMENTS (bias)))
    {
      g_printerr ("The arrays did not come back bit for bit\n");
      return FALSE;
    }

  text = serio_bundle_to_bytes (loaded, SERIO_SAVE_FLAGS_PLAIN);
  g_print ("Restored %u arrays bit for bit, checksum %08x\n",
           serio_bundle_get_n_arrays (loaded),
           serio_compute_checksum_for_bytes (text));

  return TRUE;
}

static gboolean
reject_bad_count (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = serio_bundle_new_from_string ("v1|x|2|1\n", &error);

  /* A failed parse never returns a partial bundle. */
  if (bundle != NULL || !g_error_matches (error, SERIO_ERROR, SERIO_ERROR_LENGTH))
    {
      g_printerr ("A record with a wrong count was not rejected\n");
      return FALSE;
    }

  g_print ("Rejected as expected: %s\n", error->message);

  return TRUE;
}

static gboolean
keep_float32 (void)
{
  static const float kernel[2][3] = { { 0.1f, -0.5f, 2.0f }, { 1e-3f, -0.0f, 3.0f } };
  static const guint64 shape[] = { 2, 3 };
  g_autoptr(GBytes) data = g_bytes_new (kernel, sizeof kernel);
  g_autoptr(SerioBundle) bundle = serio_bundle_new ();
  g_autoptr(SerioBundle) loaded = NULL;
  g_autoptr(SerioBundle) wrong = NULL;
  g_autoptr(GBytes) back = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  /* The type travels in the name: conv.w@float32[2x3]. */
  if (!serio_bundle_append_typed (bundle, "conv.w", SERIO_DTYPE_FLOAT32, shape, 2, data, &error))
    {
      g_printerr ("%s\n", error->message);
      return FALSE;
    }

  text = serio_bundle_to_string (bundle, SERIO_SAVE_FLAGS_PLAIN);
  loaded = serio_bundle_new_from_string (text, &error);
  if (loaded == NULL)
    {
      g_printerr ("%s\n", error->message);
      return FALSE;
    }

  back = serio_bundle_get_typed_bytes (loaded, 0);
  if (serio_bundle_get_dtype (loaded, 0) != SERIO_DTYPE_FLOAT32 || !g_bytes_equal (back, data))
    {
      g_printerr ("The float32 array did not come back bit for bit\n");
      return FALSE;
    }
  g_print ("Kept the float32 array %s\n", serio_bundle_get_name (loaded, 0));

  /* 0.1 as a double is no float32: a record that says it is fails. */
  wrong = serio_bundle_new_from_string ("v1|w@float32[1]|1|3602879701896397p-55\n", &error);
  if (wrong != NULL || !g_error_matches (error, SERIO_ERROR, SERIO_ERROR_DOMAIN))
    {
      g_printerr ("An out-of-type value was not rejected\n");
      return FALSE;
    }
  g_print ("Rejected as expected: %s\n", error->message);

  return TRUE;
}

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree char *dir = NULL;
  gboolean ok;

  /* libserio's messages follow the user's language once this is done. */
  setlocale (LC_ALL, "");

  dir = g_dir_make_tmp ("serio-example-XXXXXX", &error);
  if (dir == NULL)
    {
      g_printerr ("%s\n", error->message);
      return EXIT_FAILURE;
    }

  file = g_file_new_build_filename (dir, "model.serio", NULL);
  ok = save_and_load (file, &error);
  if (error != NULL)
    g_printerr ("%s\n", error->message);

  g_file_delete (file, NULL, NULL);
  g_rmdir (dir);

  return ok && reject_bad_count () && keep_float32 () ? EXIT_SUCCESS : EXIT_FAILURE;
}
