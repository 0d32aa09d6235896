/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-convert.c: serio convert IN OUT, between .npy and serio files
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

#define CANONICAL_NAN_BITS G_GUINT64_CONSTANT (0x7FF8000000000000)

static char *array_name = NULL;

/* A second --name is refused: GOption would silently keep the last. */
static gboolean
set_array_name (const char  *option_name,
                const char  *value,
                gpointer     data,
                GError     **error)
{
  if (array_name != NULL)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   /* TRANSLATORS: an option, such as “--name” */
                   _("%s can be given only once"), option_name);
      return FALSE;
    }

  array_name = g_strdup (value);
  return TRUE;
}

static const GOptionEntry entries[] = {
  { "name", 'n', 0, G_OPTION_ARG_CALLBACK, set_array_name,
    N_("The array to convert to .npy, or the name to give the array read from .npy"), N_("NAME") },
  G_OPTION_ENTRY_NULL
};

static gboolean
is_npy (const char *path)
{
  gsize len = strlen (path);

  return len >= 4 && g_ascii_strcasecmp (path + len - 4, ".npy") == 0;
}

static void
print_file_error (const char  *path,
                  GError     **error)
{
  g_autofree char *display = g_filename_display_name (path);

  /* TRANSLATORS: a file name, before an error message about it */
  g_prefix_error (error, _("%s: "), display);
  serio_tool_print_error (*error);
}

/* "dir/dense.w.npy" gives "dense.w"; bytes that are not UTF-8 become
 * U+FFFD. */
static char *
name_from_path (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);

  base[strlen (base) - 4] = '\0';
  return g_filename_display_name (base);
}

/* NaN that are not the default quiet NaN, which a bundle stores instead. */
static gsize
count_special_nans (const double *values,
                    gsize         n_values)
{
  gsize n = 0;

  for (gsize i = 0; i < n_values; i++)
    {
      guint64 bits;

      memcpy (&bits, &values[i], sizeof bits);
      if (isnan (values[i]) && bits != CANONICAL_NAN_BITS)
        n++;
    }

  return n;
}

static int
npy_to_serio (const char *in,
              const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree double *values = NULL;
  g_autofree char *shape = NULL;
  g_autofree char *name = NULL;
  g_autofree char *display = g_filename_display_name (in);
  gsize n_values, n_special;

  bytes = serio_tool_load (in, &error);
  if (bytes == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  if (!serio_tool_npy_read (bytes, &values, &n_values, &shape, &error))
    {
      print_file_error (in, &error);
      return SERIO_TOOL_EXIT_FAILURE;
    }

  if (shape != NULL)
    {
      g_printerr (g_dngettext (GETTEXT_PACKAGE,
                               /* TRANSLATORS: a file name, the shape of
                                * its array such as “(2, 3)”, and its
                                * number of values */
                               "%s: note: the array of shape %s is flattened to %lu value in C order",
                               "%s: note: the array of shape %s is flattened to %lu values in C order",
                               n_values),
                  display, shape, (gulong) n_values);
      g_printerr ("\n");
    }

  n_special = count_special_nans (values, n_values);
  if (n_special > 0)
    {
      g_printerr (g_dngettext (GETTEXT_PACKAGE,
                               "%s: note: %lu NaN with a sign or payload is stored as the default NaN",
                               "%s: note: %lu NaNs with a sign or payload are stored as the default NaN",
                               n_special),
                  display, (gulong) n_special);
      g_printerr ("\n");
    }

  name = array_name != NULL ? g_strdup (array_name) : name_from_path (in);
  bundle = serio_bundle_new ();
  serio_bundle_append (bundle, name, values, n_values);

  file = g_file_new_for_path (out);
  if (!serio_bundle_save_to_file (bundle, file, NULL, &error))
    {
      print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}

static int
serio_to_npy (const char *in,
              const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GFile) file = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  const double *values;
  gsize n_values;
  guint index = 0;

  bundle = serio_tool_load_bundle (in, NULL, &status);
  if (bundle == NULL)
    return status;

  if (array_name != NULL)
    {
      if (!serio_bundle_lookup (bundle, array_name, &index))
        return serio_tool_no_such_array (in, array_name);
    }
  else if (serio_bundle_get_n_arrays (bundle) != 1)
    {
      g_autofree char *display = g_filename_display_name (in);
      guint n_arrays = serio_bundle_get_n_arrays (bundle);

      if (n_arrays == 0)
        /* TRANSLATORS: the program, then a file name */
        g_printerr (_("%s: %s holds no array"), g_get_prgname (), display);
      else
        g_printerr (g_dngettext (GETTEXT_PACKAGE,
                                 /* TRANSLATORS: the program, a file name
                                  * and its number of arrays */
                                 "%s: %s holds %u array: choose one with --name",
                                 "%s: %s holds %u arrays: choose one with --name",
                                 n_arrays),
                    g_get_prgname (), display, n_arrays);
      g_printerr ("\n");
      return SERIO_TOOL_EXIT_FAILURE;
    }

  values = serio_bundle_get_values (bundle, index, &n_values);
  file = g_file_new_for_path (out);
  if (!serio_tool_npy_write (file, values, n_values, &error))
    {
      print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}

int
serio_tool_convert (int    argc,
                    char **argv)
{
  gboolean in_npy, out_npy;

  if (!serio_tool_parse_options (N_("IN OUT"),
                                 N_("Convert a NumPy .npy file to a serio file, or an array of a serio file\n"
                                    "to a .npy file, bit for bit (but a bundle holds only the default NaN).\n"
                                    "The file whose name ends in .npy sets the direction.\n\n"
                                    "From .npy: versions 1.0 to 3.0, float64 in either byte order (“<f8”,\n"
                                    "“>f8”). Arrays of several dimensions are flattened in C order\n"
                                    "(Fortran-order data is transposed) and their shape is noted on the\n"
                                    "standard error. The array is named after the file, less directory and\n"
                                    ".npy, or NAME.\n\n"
                                    "To .npy: the serio file must hold exactly one array, or NAME picks the\n"
                                    "first array so called. The output is a version 1.0 “<f8” vector.\n\n"
                                    "The output file is replaced atomically, and left alone on failure."),
                                 N_("Exit status: 0 on success, 1 if the input is not valid, has another\n"
                                    "data type or no array NAME, 2 on a usage or input/output error."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc != 3)
    return serio_tool_usage_error (_("give an input and an output file"));

  /* The output is replaced atomically, which needs a file. */
  if (serio_tool_is_stdin (argv[2]))
    return serio_tool_usage_error (_("the output must be a file, not “-”"));

  in_npy = is_npy (argv[1]);
  out_npy = is_npy (argv[2]);
  if (in_npy == out_npy)
    return serio_tool_usage_error (_("exactly one of the files must have the .npy extension"));

  return in_npy ? npy_to_serio (argv[1], argv[2]) : serio_to_npy (argv[1], argv[2]);
}
