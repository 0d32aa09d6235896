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

#include "serio-numpy.h"
#include "serio-save.h"

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

static gboolean
is_reserved_name (const char *name)
{
  return g_str_equal (name, "serio.sealed") || g_str_equal (name, "serio.seal");
}

/* ------------------------------------------------------------------ */
/* NumPy to serio                                                     */
/* ------------------------------------------------------------------ */

/* The serio file being written, as the sink of the NumPy reader. */
typedef struct
{
  const char     *in;
  const char     *display;
  SerioToolInput *input;
  SerioWriter    *writer;
  int             status;       /* why the sink stopped */
  GError         *write_error;  /* … when the output failed */
  guint64         n_special;    /* NaNs of the array, other than the default */
  GArray         *notes;        /* of guint64: those of the arrays that had some */
} ToSerio;

static gboolean
to_serio_begin (gpointer                user_data,
                const SerioNumpyHeader *header)
{
  ToSerio *c = user_data;
  g_autofree char *name = NULL;
  g_autofree char *stored = NULL;

  if (header->name != NULL)
    name = g_strdup (header->name);
  else if (array_name != NULL)
    name = g_utf8_make_valid (array_name, -1);
  else
    name = name_from_path (c->in);

  if (is_reserved_name (name))
    {
      g_autofree char *shown = serio_tool_escape_name (name);

      serio_tool_input_end_progress (c->input);
      /* TRANSLATORS: the program, a file name and an array name */
      g_printerr (_("%s: %s: “%s” is a name that serio files reserve for their seal"),
                  g_get_prgname (), c->display, shown);
      g_printerr ("\n");
      c->status = SERIO_TOOL_EXIT_FAILURE;
      return FALSE;
    }

  if (header->n_dims > SERIO_SHAPE_MAX_DIMS)
    {
      g_autofree char *shown = serio_tool_escape_name (name);

      serio_tool_input_end_progress (c->input);
      g_printerr (g_dngettext (GETTEXT_PACKAGE,
                               /* TRANSLATORS: the program, a file name,
                                * an array name, its number of
                                * dimensions and the most that serio
                                * shapes have */
                               "%s: %s: “%s” has %u dimension, and serio shapes have at most %u",
                               "%s: %s: “%s” has %u dimensions, and serio shapes have at most %u",
                               header->n_dims),
                  g_get_prgname (), c->display, shown, header->n_dims,
                  (guint) SERIO_SHAPE_MAX_DIMS);
      g_printerr ("\n");
      c->status = SERIO_TOOL_EXIT_FAILURE;
      return FALSE;
    }

  /* A vector keeps its plain name (“w”, not “w[3]”), unless the name
   * ends like a shape suffix, which the shape's own suffix then
   * follows, so that the name reads back as it was. Otherwise the name
   * is that of serio_bundle_append_with_shape(). */
  if (header->n_dims == 1 && !g_str_has_suffix (name, "]"))
    {
      stored = g_steal_pointer (&name);
    }
  else
    {
      GString *shaped = g_string_new (name);

      g_string_append_c (shaped, '[');
      for (guint k = 0; k < header->n_dims; k++)
        g_string_append_printf (shaped, "%s%" G_GUINT64_FORMAT, k > 0 ? "x" : "", header->shape[k]);
      g_string_append_c (shaped, ']');
      stored = g_string_free (shaped, FALSE);
    }

  c->n_special = 0;
  if (!serio_writer_begin_array (c->writer, stored, header->n_values, NULL, &c->write_error))
    {
      c->status = SERIO_TOOL_EXIT_ERROR;
      return FALSE;
    }

  return TRUE;
}

static gboolean
to_serio_values (gpointer      user_data,
                 const double *values,
                 gsize         n_values)
{
  ToSerio *c = user_data;

  /* NaNs that are not the default quiet NaN, which serio stores instead. */
  for (gsize i = 0; i < n_values; i++)
    {
      guint64 bits;

      memcpy (&bits, &values[i], sizeof bits);
      if (isnan (values[i]) && bits != CANONICAL_NAN_BITS)
        c->n_special++;
    }

  if (!serio_writer_add_values (c->writer, values, n_values, NULL, &c->write_error))
    {
      c->status = SERIO_TOOL_EXIT_ERROR;
      return FALSE;
    }

  return TRUE;
}

/* What the conversion of an array changes is told once every array was
 * read without a problem (a .npz member's CRC-32 is checked after its
 * values went by). */
static gboolean
to_serio_end (gpointer user_data)
{
  ToSerio *c = user_data;

  if (c->n_special > 0)
    g_array_append_val (c->notes, c->n_special);

  return TRUE;
}

static void
print_notes (ToSerio *c)
{
  for (guint i = 0; i < c->notes->len; i++)
    {
      gulong n_special = (gulong) MIN (g_array_index (c->notes, guint64, i), G_MAXULONG);

      g_printerr (g_dngettext (GETTEXT_PACKAGE,
                               "%s: note: %lu NaN with a sign or payload is stored as the default NaN",
                               "%s: note: %lu NaNs with a sign or payload are stored as the default NaN",
                               n_special),
                  c->display, n_special);
      g_printerr ("\n");
    }
}

static const SerioNumpySink to_serio_sink = {
  to_serio_begin,
  to_serio_values,
  to_serio_end,
};

/* The arrays are read and written as they come, through bounded buffers:
 * the serio file is written to the save's temporary file, which replaces
 * OUT only once every array was read without an error. */
static int
numpy_to_serio (const char *in,
                Format      in_format,
                const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioToolInput) input = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(SerioSave) save = NULL;
  g_autoptr(SerioWriter) writer = NULL;
  g_autofree char *display = g_filename_display_name (in);
  g_autoptr(GArray) notes = g_array_new (FALSE, FALSE, sizeof (guint64));
  ToSerio c = { in, display, NULL, NULL, SERIO_TOOL_EXIT_OK, NULL, 0, notes };
  gboolean io_failed = FALSE;
  gboolean read;
  GInputStream *stream;
  goffset size;

  /* Errors are named below, after the member of a .npz file they are in. */
  input = serio_tool_input_open (in, SERIO_TOOL_INPUT_BARE_ERRORS, &error);
  if (input == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }
  c.input = input;
  stream = G_INPUT_STREAM (input);
  size = serio_tool_input_get_size (input);

  file = g_file_new_for_path (out);
  save = _serio_save_begin (file, NULL, &error);
  if (save == NULL)
    {
      serio_tool_input_end_progress (input);
      print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }
  writer = plain ? serio_writer_new (_serio_save_get_stream (save), SERIO_SAVE_FLAGS_PLAIN) :
                   serio_writer_new (_serio_save_get_stream (save), SERIO_SAVE_FLAGS_NONE);
  c.writer = writer;

  if (in_format == FORMAT_NPZ)
    {
      read = serio_numpy_read_npz (stream, size, &to_serio_sink, &c, &io_failed, &error);
    }
  else
    {
      SerioNumpyFileSource source;

      serio_numpy_file_source_init (&source, stream, size);
      read = serio_numpy_read_npy (&source.source, NULL, &to_serio_sink, &c, &error);
      io_failed = source.source.io_failed;
    }
  /* The reading may stop before the end of the file. */
  serio_tool_input_end_progress (input);

  /* On any failure, the writer and the save are dropped: OUT stays. */
  if (!read)
    {
      if (error != NULL)
        {
          print_file_error (in, &error);
          return io_failed ? SERIO_TOOL_EXIT_ERROR : SERIO_TOOL_EXIT_FAILURE;
        }
      if (c.write_error != NULL)
        {
          print_file_error (out, &c.write_error);
          g_clear_error (&c.write_error);
        }
      return c.status;
    }

  print_notes (&c);
  if (!serio_writer_end (writer, NULL, &error) ||
      !_serio_save_commit (g_steal_pointer (&save), NULL, &error))
    {
      print_file_error (out, &error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  return SERIO_TOOL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* Serio to NumPy                                                     */
/* ------------------------------------------------------------------ */

/* The NumPy file being written. Everything read is provisional until the
 * reader reached the end of a valid text, so the output goes to a save
 * that is committed only then; when the output fails, or the arrays
 * turn out not to be convertible, the reading goes on without output, so
 * that a problem with the input is still the one reported, as when the
 * whole file was read before anything was written. */
typedef struct
{
  GFile             *file;
  SerioNumpyFormat   format;
  SerioSave         *save;
  SerioNumpyWriter  *writer;
  GError            *error;       /* the output failed */
} ToNumpy;

static void
to_numpy_drop (ToNumpy *c)
{
  g_clear_pointer (&c->writer, serio_numpy_writer_free);
  g_clear_pointer (&c->save, _serio_save_abort);
}

/* Starts the output over, for the array to come. */
static void
to_numpy_start (ToNumpy *c)
{
  to_numpy_drop (c);
  if (c->error != NULL)
    return;

  c->save = _serio_save_begin (c->file, NULL, &c->error);
  if (c->save != NULL)
    c->writer = serio_numpy_writer_new (_serio_save_get_stream (c->save), c->format);
}

/* Reads the values of the reader's current array, and writes them to
 * the output when @wanted. FALSE only when the input failed. */
static gboolean
copy_array (SerioReader  *reader,
            ToNumpy      *c,
            gboolean      wanted,
            double       *values,
            GError      **error)
{
  gboolean writing = wanted && c->writer != NULL;

  if (writing)
    {
      g_autofree char *base_name = serio_reader_get_base_name (reader);
      g_autofree guint64 *shape = NULL;
      guint n_dims;

      shape = serio_reader_get_shape (reader, &n_dims);
      if (!serio_numpy_writer_begin_array (c->writer, base_name, shape, n_dims,
                                           serio_reader_get_n_values (reader), &c->error))
        {
          to_numpy_drop (c);
          writing = FALSE;
        }
    }

  /* Every value is parsed, those of the arrays not written too: a
   * skipped array would not be checked in a plain text. */
  for (;;)
    {
      gsize n;

      if (!serio_reader_read_values (reader, values, SERIO_NUMPY_CHUNK_VALUES, &n, NULL, error))
        return FALSE;
      if (n == 0)
        break;
      if (writing && !serio_numpy_writer_add_values (c->writer, values, n, &c->error))
        {
          to_numpy_drop (c);
          writing = FALSE;
        }
    }

  if (writing && !serio_numpy_writer_end_array (c->writer, &c->error))
    to_numpy_drop (c);

  return TRUE;
}

static int
print_arrays_held (const char *in,
                   guint64     n_arrays)
{
  g_autofree char *display = g_filename_display_name (in);
  guint n = (guint) MIN (n_arrays, G_MAXUINT);

  if (n == 0)
    /* TRANSLATORS: the program, then a file name */
    g_printerr (_("%s: %s holds no array"), g_get_prgname (), display);
  else
    g_printerr (g_dngettext (GETTEXT_PACKAGE,
                             /* TRANSLATORS: the program, a file name
                              * and its number of arrays */
                             "%s: %s holds %u array: choose one with --name",
                             "%s: %s holds %u arrays: choose one with --name",
                             n),
                g_get_prgname (), display, n);
  g_printerr ("\n");

  return SERIO_TOOL_EXIT_FAILURE;
}

/* The serio file is read once, front to back, with a SerioReader. To
 * .npy, the array is the only one, or the first called NAME (by its
 * name, else by its base name, as serio_bundle_lookup() finds it: a base
 * name match is written until an exact match comes, which starts the
 * output over). To .npz, every array becomes a member named after its
 * base name, which must not repeat. */
static int
serio_to_numpy (const char *in,
                const char *out,
                Format      out_format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioReader) reader = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GHashTable) names = NULL;
  g_autofree double *values = NULL;
  g_autofree char *duplicate = NULL;
  ToNumpy c = { NULL, };
  guint64 n_arrays = 0;
  gboolean found = FALSE, found_exact = FALSE;
  int status = SERIO_TOOL_EXIT_OK;

  reader = serio_tool_open_reader (in, SERIO_TOOL_INPUT_DEFAULT, &error);
  if (reader == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  file = g_file_new_for_path (out);
  c.file = file;
  c.format = out_format == FORMAT_NPY ? SERIO_NUMPY_NPY :
             compress ? SERIO_NUMPY_NPZ_COMPRESSED : SERIO_NUMPY_NPZ;
  if (out_format == FORMAT_NPZ)
    {
      names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      to_numpy_start (&c);
    }

  values = g_new (double, SERIO_NUMPY_CHUNK_VALUES);
  while (serio_reader_next (reader, NULL, &error))
    {
      gboolean wanted = FALSE;

      n_arrays++;
      if (out_format == FORMAT_NPZ)
        {
          char *base_name = serio_reader_get_base_name (reader);

          if (duplicate == NULL && g_hash_table_contains (names, base_name))
            {
              duplicate = base_name;
              to_numpy_drop (&c);
            }
          else if (duplicate == NULL)
            {
              g_hash_table_add (names, base_name);
              wanted = TRUE;
            }
          else
            {
              g_free (base_name);
            }
        }
      else if (array_name != NULL)
        {
          if (strcmp (serio_reader_get_name (reader), array_name) == 0)
            {
              wanted = !found_exact;
              found_exact = TRUE;
            }
          else if (!found)
            {
              g_autofree char *base_name = serio_reader_get_base_name (reader);

              wanted = strcmp (base_name, array_name) == 0;
            }
          found = found || wanted;
          if (wanted)
            to_numpy_start (&c);
        }
      else
        {
          wanted = n_arrays == 1;
          if (wanted)
            to_numpy_start (&c);
          else
            to_numpy_drop (&c);
        }

      if (!copy_array (reader, &c, wanted, values, &error))
        break;
    }
  /* The reading may have stopped before the end of the file. */
  serio_tool_input_end_progress (serio_tool_reader_get_input (reader));

  if (error != NULL)
    {
      /* A read error names the file. */
      status = serio_tool_report_read_error (in, error);
    }
  else if (out_format == FORMAT_NPY && array_name != NULL && !found)
    {
      status = serio_tool_no_such_array (in, array_name);
    }
  else if (out_format == FORMAT_NPY && array_name == NULL && n_arrays != 1)
    {
      status = print_arrays_held (in, n_arrays);
    }
  else if (duplicate != NULL)
    {
      g_autofree char *display = g_filename_display_name (in);
      g_autofree char *shown = serio_tool_escape_name (duplicate);

      /* TRANSLATORS: the program, a file name and an array name */
      g_printerr (_("%s: %s: more than one array is called “%s”, and a .npz file "
                    "holds one array per name"),
                  g_get_prgname (), display, shown);
      g_printerr ("\n");
      status = SERIO_TOOL_EXIT_FAILURE;
    }
  else if (c.error == NULL &&
           (!serio_numpy_writer_finish (c.writer, &c.error) ||
            !_serio_save_commit (g_steal_pointer (&c.save), NULL, &c.error)))
    {
      g_assert (c.error != NULL);
    }

  if (status == SERIO_TOOL_EXIT_OK && c.error != NULL)
    {
      print_file_error (out, &c.error);
      status = SERIO_TOOL_EXIT_ERROR;
    }

  to_numpy_drop (&c);
  g_clear_error (&c.error);

  return status;
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
