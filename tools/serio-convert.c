/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-convert.c: serio convert IN OUT, between NumPy's .npy and .npz
 * files and serio files
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
static gboolean plain = FALSE;
static gboolean compress = FALSE;

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
  { "plain", 0, 0, G_OPTION_ARG_NONE, &plain,
    N_("Write a plain serio file, without a seal"), NULL },
  { "compress", 'z', 0, G_OPTION_ARG_NONE, &compress,
    N_("Compress the members of a .npz file, as numpy.savez_compressed() does"), NULL },
  G_OPTION_ENTRY_NULL
};

typedef enum
{
  FORMAT_SERIO,
  FORMAT_NPY,
  FORMAT_NPZ,
} Format;

static gboolean
has_extension (const char *path,
               const char *extension)
{
  gsize len = strlen (path);

  return len >= 4 && g_ascii_strcasecmp (path + len - 4, extension) == 0;
}

static Format
format_of (const char *path)
{
  if (has_extension (path, ".npy"))
    return FORMAT_NPY;
  if (has_extension (path, ".npz"))
    return FORMAT_NPZ;
  return FORMAT_SERIO;
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

/* What the conversion of one array changes, on the standard error. */
static void
print_notes (const char           *display,
             const SerioToolArray *array)
{
  gsize n_special = count_special_nans (array->values, array->n_values);

  if (n_special > 0)
    {
      g_printerr (g_dngettext (GETTEXT_PACKAGE,
                               "%s: note: %lu NaN with a sign or payload is stored as the default NaN",
                               "%s: note: %lu NaNs with a sign or payload are stored as the default NaN",
                               n_special),
                  display, (gulong) n_special);
      g_printerr ("\n");
    }
}

static gboolean
is_reserved_name (const char *name)
{
  return g_str_equal (name, "serio.sealed") || g_str_equal (name, "serio.seal");
}

static int
numpy_to_serio (const char *in,
                Format      in_format,
                const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GPtrArray) arrays = NULL;
  g_autofree char *display = g_filename_display_name (in);

  bytes = serio_tool_load (in, &error);
  if (bytes == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  if (in_format == FORMAT_NPZ)
    {
      arrays = serio_tool_npz_read (bytes, &error);
      if (arrays == NULL)
        {
          print_file_error (in, &error);
          return SERIO_TOOL_EXIT_FAILURE;
        }
    }
  else
    {
      SerioToolArray *array = g_new0 (SerioToolArray, 1);
      gsize size;
      const guchar *data = g_bytes_get_data (bytes, &size);

      arrays = g_ptr_array_new_with_free_func ((GDestroyNotify) serio_tool_array_free);
      g_ptr_array_add (arrays, array);
      if (!serio_tool_npy_read (data, size, array, &error))
        {
          print_file_error (in, &error);
          return SERIO_TOOL_EXIT_FAILURE;
        }
    }

  bundle = serio_bundle_new ();
  for (guint i = 0; i < arrays->len; i++)
    {
      SerioToolArray *array = g_ptr_array_index (arrays, i);
      g_autofree char *name = NULL;

      if (array->name != NULL)
        name = g_strdup (array->name);
      else
        name = array_name != NULL ? g_strdup (array_name) : name_from_path (in);

      if (is_reserved_name (name))
        {
          g_autofree char *shown = serio_tool_escape_name (name);

          /* TRANSLATORS: the program, a file name and an array name */
          g_printerr (_("%s: %s: “%s” is a name that serio files reserve for their seal"),
                      g_get_prgname (), display, shown);
          g_printerr ("\n");
          return SERIO_TOOL_EXIT_FAILURE;
        }

      if (array->n_dims > SERIO_SHAPE_MAX_DIMS)
        {
          g_autofree char *shown = serio_tool_escape_name (name);

          g_printerr (g_dngettext (GETTEXT_PACKAGE,
                                   /* TRANSLATORS: the program, a file name,
                                    * an array name, its number of
                                    * dimensions and the most that serio
                                    * shapes have */
                                   "%s: %s: “%s” has %u dimension, and serio shapes have at most %u",
                                   "%s: %s: “%s” has %u dimensions, and serio shapes have at most %u",
                                   array->n_dims),
                      g_get_prgname (), display, shown, array->n_dims,
                      (guint) SERIO_SHAPE_MAX_DIMS);
          g_printerr ("\n");
          return SERIO_TOOL_EXIT_FAILURE;
        }

      print_notes (display, array);
      /* A vector keeps its plain name (“w”, not “w[3]”), unless the name
       * ends like a shape suffix, which the shape's own suffix then
       * follows, so that the name reads back as it was. */
      if (array->n_dims == 1 && !g_str_has_suffix (name, "]"))
        serio_bundle_append (bundle, name, array->values, array->n_values);
      else
        serio_bundle_append_with_shape (bundle, name, array->shape, array->n_dims,
                                        array->values, array->n_values);
    }

  file = g_file_new_for_path (out);
  if (!serio_bundle_save_to_file_full (bundle, file,
                                       plain ? SERIO_SAVE_FLAGS_PLAIN : SERIO_SAVE_FLAGS_NONE,
                                       NULL, &error))
    {
      print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}

/* Fills @array with array @index of @bundle, its base name and its shape;
 * the values are the bundle's. */
static void
array_view (SerioBundle    *bundle,
            guint           index,
            SerioToolArray *array)
{
  *array = (SerioToolArray) { 0, };
  array->name = serio_bundle_get_base_name (bundle, index);
  array->values = (double *) serio_bundle_get_values (bundle, index, &array->n_values);
  array->shape = serio_bundle_get_shape (bundle, index, &array->n_dims);
  array->type_name = "float64";
}

static void
array_views_free (SerioToolArray *arrays,
                  guint           n_arrays)
{
  for (guint i = 0; i < n_arrays; i++)
    {
      g_free (arrays[i].name);
      g_free (arrays[i].shape);
    }
  g_free (arrays);
}

static int
one_array_of (SerioBundle *bundle,
              const char  *in,
              guint       *index)
{
  guint n_arrays = serio_bundle_get_n_arrays (bundle);
  g_autofree char *display = g_filename_display_name (in);

  if (array_name != NULL)
    {
      if (!serio_bundle_lookup (bundle, array_name, index))
        return serio_tool_no_such_array (in, array_name);
      return SERIO_TOOL_EXIT_OK;
    }

  if (n_arrays == 1)
    {
      *index = 0;
      return SERIO_TOOL_EXIT_OK;
    }

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

/* A .npz archive holds one array per name: base names must not repeat. */
static int
check_unique_names (SerioBundle *bundle,
                    const char  *in)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < serio_bundle_get_n_arrays (bundle); i++)
    {
      char *name = serio_bundle_get_base_name (bundle, i);

      if (!g_hash_table_add (seen, name))
        {
          g_autofree char *display = g_filename_display_name (in);
          g_autofree char *shown = serio_tool_escape_name (name);

          /* TRANSLATORS: the program, a file name and an array name */
          g_printerr (_("%s: %s: more than one array is called “%s”, and a .npz file "
                        "holds one array per name"),
                      g_get_prgname (), display, shown);
          g_printerr ("\n");
          return SERIO_TOOL_EXIT_FAILURE;
        }
    }

  return SERIO_TOOL_EXIT_OK;
}

static int
serio_to_numpy (const char *in,
                const char *out,
                Format      out_format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GFile) file = NULL;
  SerioToolArray *arrays = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  guint n_arrays;
  gboolean written;

  bundle = serio_tool_load_bundle (in, NULL, &status);
  if (bundle == NULL)
    return status;

  if (out_format == FORMAT_NPY)
    {
      guint index;

      status = one_array_of (bundle, in, &index);
      if (status != SERIO_TOOL_EXIT_OK)
        return status;
      n_arrays = 1;
      arrays = g_new (SerioToolArray, 1);
      array_view (bundle, index, &arrays[0]);
    }
  else
    {
      status = check_unique_names (bundle, in);
      if (status != SERIO_TOOL_EXIT_OK)
        return status;
      n_arrays = serio_bundle_get_n_arrays (bundle);
      arrays = g_new (SerioToolArray, MAX (n_arrays, 1));
      for (guint i = 0; i < n_arrays; i++)
        array_view (bundle, i, &arrays[i]);
    }

  file = g_file_new_for_path (out);
  written = serio_tool_npy_write (file, arrays, n_arrays,
                                  out_format == FORMAT_NPY ? SERIO_TOOL_NPY :
                                  compress ? SERIO_TOOL_NPZ_COMPRESSED : SERIO_TOOL_NPZ,
                                  &error);
  array_views_free (arrays, n_arrays);
  if (!written)
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
  Format in_format, out_format;

  if (!serio_tool_parse_options (N_("IN OUT"),
                                 N_("Convert NumPy .npy and .npz files to serio files, and serio files to\n"
                                    "them, bit for bit (but a bundle holds only the default NaN). The file\n"
                                    "whose name ends in .npy or .npz sets the direction.\n\n"
                                    "From .npy: versions 1.0 to 3.0; float64, float32, float16, integers\n"
                                    "and booleans in either byte order, widened exactly to float64 (an\n"
                                    "integer that no double holds is refused), in C order (Fortran-order\n"
                                    "data is transposed). The array is named after the file, less directory\n"
                                    "and .npy, or NAME; a shape other than a vector's is kept in the name,\n"
                                    "as in “w[2x3]”.\n\n"
                                    "From .npz: every array, in the order of the archive, named after its\n"
                                    "member; stored or deflate-compressed members.\n\n"
                                    "To .npy: the serio file must hold exactly one array, or NAME picks the\n"
                                    "first array so called (by name, or by the name less its shape). The\n"
                                    "output is a version 1.0 “<f8” array of the array's shape.\n\n"
                                    "To .npz: every array of the serio file, as “<f8” members of their shape\n"
                                    "named after them less the shape (names must not repeat), stored as\n"
                                    "numpy.savez() does, or with --compress compressed as\n"
                                    "numpy.savez_compressed() does.\n\n"
                                    "A serio file is written sealed, so that every read verifies it, unless\n"
                                    "--plain is given. The output file is replaced atomically, and left\n"
                                    "alone on failure."),
                                 N_("Exit status: 0 on success, 1 if the input is not valid, has another\n"
                                    "data type or no array NAME, 2 on a usage or input/output error."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc != 3)
    return serio_tool_usage_error (_("give an input and an output file"));

  /* The output is replaced atomically, which needs a file. */
  if (serio_tool_is_stdin (argv[2]))
    return serio_tool_usage_error (_("the output must be a file, not “-”"));

  in_format = format_of (argv[1]);
  out_format = format_of (argv[2]);
  if ((in_format == FORMAT_SERIO) == (out_format == FORMAT_SERIO))
    return serio_tool_usage_error (_("exactly one of the files must have the .npy or .npz extension"));
  if (array_name != NULL && (in_format == FORMAT_NPZ || out_format == FORMAT_NPZ))
    return serio_tool_usage_error (_("--name applies to .npy files only: a .npz file holds every array"));
  if (plain && out_format != FORMAT_SERIO)
    return serio_tool_usage_error (_("--plain applies to a serio output file only"));
  if (compress && out_format != FORMAT_NPZ)
    return serio_tool_usage_error (_("--compress applies to a .npz output file only"));

  if (in_format != FORMAT_SERIO)
    return numpy_to_serio (argv[1], in_format, argv[2]);
  return serio_to_numpy (argv[1], argv[2], out_format);
}
