/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-convert.c: serio convert IN OUT, between NumPy's .npy and .npz
 * files or .safetensors files and serio files
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-numpy.h"
#include "serio-safetensors.h"
#include "serio-save-private.h"
#include "serio-shards.h"

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
  FORMAT_SAFETENSORS,
} Format;

static gboolean
has_extension (const char *path,
               const char *extension)
{
  gsize len = strlen (path), n = strlen (extension);

  return len >= n && g_ascii_strcasecmp (path + len - n, extension) == 0;
}

static Format
format_of (const char *path)
{
  if (has_extension (path, ".npy"))
    return FORMAT_NPY;
  if (has_extension (path, ".npz"))
    return FORMAT_NPZ;
  if (has_extension (path, ".safetensors"))
    return FORMAT_SAFETENSORS;
  return FORMAT_SERIO;
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

/* ------------------------------------------------------------------ */
/* NumPy to serio                                                     */
/* ------------------------------------------------------------------ */

/* Whether @name ends in “@” and the name of a type other than float64,
 * as a type marker does before a shape suffix. */
static gboolean
ends_with_type_marker (const char *name)
{
  const char *at = strrchr (name, '@');
  SerioDtype dtype;

  return at != NULL && serio_dtype_from_string (at + 1, &dtype) && dtype != SERIO_DTYPE_FLOAT64;
}

/* The serio file being written, as the sink of the NumPy reader. */
typedef struct
{
  const char     *in;
  const char     *display;
  SerioToolInput *input;
  SerioWriter    *writer;
  GError         *write_error;  /* the output failed (the sink stopped) */
  SerioDtype      dtype;        /* of the array being written */
  guint64         n_special;    /* NaNs of the array, other than the default */
  GArray         *notes;        /* of guint64: those of the arrays that had some */
} ToSerio;

/* The sink's error when the output failed: the reader fails with it,
 * and the output's own error, kept in @c, is the one reported. */
static gboolean
write_failed (ToSerio  *c,
              GError  **error)
{
  g_assert (c->write_error != NULL);
  g_propagate_error (error, g_error_copy (c->write_error));
  return FALSE;
}

static gboolean
to_serio_begin (gpointer                user_data,
                const SerioNumpyHeader *header,
                GError                **error)
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

  if (serio_name_is_metadata (name))
    {
      g_autofree char *shown = serio_tool_escape_name (name);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: an array name */
                   _("“%s” is a name that serio files reserve for their seal and metadata "
                     "(names that begin with “serio.”)"), shown);
      return FALSE;
    }

  if (header->n_dims > SERIO_SHAPE_MAX_DIMS)
    {
      g_autofree char *shown = serio_tool_escape_name (name);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: an array name, its number
                                 * of dimensions and the most that serio
                                 * shapes have */
                                "“%s” has %u dimension, and serio shapes have at most %u",
                                "“%s” has %u dimensions, and serio shapes have at most %u",
                                header->n_dims),
                   shown, header->n_dims, (guint) SERIO_SHAPE_MAX_DIMS);
      return FALSE;
    }

  c->dtype = header->dtype;
  c->n_special = 0;

  /* Any other type than float64 is in the name, as the writer composes
   * it, shape and all (“w@float32[3]”). */
  if (header->dtype != SERIO_DTYPE_FLOAT64)
    {
      if (!serio_writer_begin_typed_array (c->writer, name, header->dtype, header->shape,
                                           header->n_dims, NULL, &c->write_error))
        return write_failed (c, error);
      return TRUE;
    }

  /* A float64 vector keeps its plain name (“w”, not “w[3]”), unless the
   * name ends like a shape suffix, which the shape's own suffix then
   * follows, so that the name reads back as it was. Otherwise the name
   * is that of serio_bundle_append_with_shape(). */
  if (header->n_dims == 1 && !g_str_has_suffix (name, "]"))
    {
      stored = g_steal_pointer (&name);
    }
  else if (ends_with_type_marker (name))
    {
      g_autofree char *shown = serio_tool_escape_name (name);

      /* A float64 array has no marker, so “w@int8” and a shape would read
       * back as an int8 array “w”. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   /* TRANSLATORS: an array name */
                   _("the name “%s” ends in a type marker: with its shape it would read back "
                     "as an array of that type, not float64"), shown);
      return FALSE;
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

  if (!serio_writer_begin_array (c->writer, stored, header->n_values, NULL, &c->write_error))
    return write_failed (c, error);

  return TRUE;
}

/* NaNs that are not the default quiet NaN of their type, which serio
 * stores instead. */
static guint64
count_special_nans (SerioDtype  dtype,
                    const void *elements,
                    gsize       n_values)
{
  guint64 n_special = 0;

  if (dtype != SERIO_DTYPE_FLOAT64 && dtype != SERIO_DTYPE_FLOAT32 && dtype != SERIO_DTYPE_FLOAT16)
    return 0;

  for (gsize i = 0; i < n_values; i++)
    {
      if (dtype == SERIO_DTYPE_FLOAT64)
        {
          guint64 bits;

          memcpy (&bits, (const guchar *) elements + 8 * i, sizeof bits);
          n_special += (bits & G_GUINT64_CONSTANT (0x7FF0000000000000)) ==
                         G_GUINT64_CONSTANT (0x7FF0000000000000) &&
                       (bits & G_GUINT64_CONSTANT (0x000FFFFFFFFFFFFF)) != 0 &&
                       bits != CANONICAL_NAN_BITS;
        }
      else if (dtype == SERIO_DTYPE_FLOAT32)
        {
          guint32 bits;

          memcpy (&bits, (const guchar *) elements + 4 * i, sizeof bits);
          n_special += (bits & 0x7F800000) == 0x7F800000 && (bits & 0x007FFFFF) != 0 &&
                       bits != 0x7FC00000;
        }
      else if (dtype == SERIO_DTYPE_FLOAT16)
        {
          guint16 bits;

          memcpy (&bits, (const guchar *) elements + 2 * i, sizeof bits);
          n_special += (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0 && bits != 0x7E00;
        }
    }

  return n_special;
}

static gboolean
to_serio_values (gpointer     user_data,
                 const void  *elements,
                 gsize        n_values,
                 GError     **error)
{
  ToSerio *c = user_data;
  gboolean ok;

  c->n_special += count_special_nans (c->dtype, elements, n_values);

  if (c->dtype == SERIO_DTYPE_FLOAT64)
    {
      ok = serio_writer_add_values (c->writer, elements, n_values, NULL, &c->write_error);
    }
  else
    {
      g_autoptr(GBytes) bytes = g_bytes_new_static (elements,
                                                    n_values * serio_dtype_get_size (c->dtype));

      ok = serio_writer_add_typed_bytes (c->writer, bytes, NULL, &c->write_error);
    }
  if (!ok)
    return write_failed (c, error);

  return TRUE;
}

/* What the conversion of an array changes is told once every array was
 * read without a problem (a .npz member's CRC-32 is checked after its
 * values went by). */
static gboolean
to_serio_end (gpointer   user_data,
              GError   **error)
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
 * the serio file is written by a writer on OUT's temporary file, which replaces
 * OUT only once every array was read without an error. */
static int
numpy_to_serio (const char *in,
                Format      in_format,
                const char *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioToolInput) input = NULL;
  g_autoptr(SerioWriter) writer = NULL;
  g_autofree char *display = g_filename_display_name (in);
  g_autoptr(GArray) notes = g_array_new (FALSE, FALSE, sizeof (guint64));
  ToSerio c = { in, display, NULL, NULL, NULL, SERIO_DTYPE_FLOAT64, 0, notes };
  gboolean io_failed = FALSE;
  gboolean read;
  GInputStream *stream;
  goffset size;

  /* Errors are named below, after the member of a .npz file they are in. */
  if (!serio_tool_open_to_serio (in, out, plain, &input, &writer))
    return SERIO_TOOL_EXIT_ERROR;
  c.input = input;
  c.writer = writer;
  stream = G_INPUT_STREAM (input);
  size = serio_tool_input_get_size (input);

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

  /* On any failure, the writer is dropped unclosed: OUT stays. */
  if (!read)
    return serio_tool_to_serio_failed (in, out, &c.write_error, &error, io_failed);

  print_notes (&c);
  if (!serio_writer_close (writer, NULL, &error))
    {
      serio_tool_print_file_error (out, &error);
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
  GError            *error;         /* the output failed */
  GError            *content_error; /* an array cannot be converted (status 1) */
  GArray            *legacy;        /* of SerioDtype: a first serio.dtypes, or NULL */
  guint64            n_arrays;      /* not metadata, so far */
  double            *values;        /* SERIO_NUMPY_CHUNK_VALUES */
  guchar            *elements;      /* as many of any type */
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
  if (c->error != NULL || c->content_error != NULL)
    return;

  c->save = _serio_save_begin (c->file, NULL, &c->error);
  if (c->save != NULL)
    c->writer = serio_numpy_writer_new (_serio_save_get_stream (c->save), c->format);
}

/* The first problem with the input's arrays: the output is dropped, and
 * the reading goes on, so that a damaged file is still reported as such. */
static void G_GNUC_PRINTF (2, 3)
set_content_error (ToNumpy    *c,
                   const char *format,
                   ...)
{
  va_list args;

  to_numpy_drop (c);
  if (c->content_error != NULL)
    return;
  va_start (args, format);
  c->content_error = g_error_new_valist (G_IO_ERROR, G_IO_ERROR_INVALID_DATA, format, args);
  va_end (args);
}

/* The legacy table of data types that the first Python Serio.save()
 * wrote as a first record serio.dtypes: one code per other array
 * (serio-tool.h). */
#define LEGACY_BAD_TABLE N_("serio.dtypes does not list one known data type code per array")

/* Reads the codes of a first record serio.dtypes. FALSE only when the
 * input failed. A text's code is kept as (SerioDtype) -1. */
static gboolean
read_legacy_table (SerioReader  *reader,
                   ToNumpy      *c,
                   GError      **error)
{
  c->legacy = g_array_new (FALSE, FALSE, sizeof (SerioDtype));
  for (;;)
    {
      gsize n;

      if (!serio_reader_read_values (reader, c->values, SERIO_NUMPY_CHUNK_VALUES, &n, NULL, error))
        return FALSE;
      if (n == 0)
        return TRUE;
      for (gsize i = 0; i < n; i++)
        {
          double code = c->values[i];
          SerioDtype dtype;

          if (code == SERIO_TOOL_LEGACY_CODE_STR)
            {
              dtype = (SerioDtype) -1;
            }
          else if (!serio_tool_legacy_code_get_dtype (code, &dtype))
            {
              set_content_error (c, "%s", _(LEGACY_BAD_TABLE));
              continue;
            }
          g_array_append_val (c->legacy, dtype);
        }
    }
}

/* A half-precision float of the same value as @value, which is one. */
static guint16
half_from_double (double value)
{
  guint16 sign = signbit (value) ? 0x8000 : 0;
  int exponent;
  double fraction;

  if (isnan (value))
    return sign | 0x7e00;
  value = fabs (value);
  if (isinf (value))
    return sign | 0x7c00;
  if (value < ldexp (1, -14))
    return sign | (guint16) ldexp (value, 24);      /* subnormal, or zero */

  fraction = frexp (value, &exponent);              /* value = fraction 2^exponent */
  return sign | (guint16) ((exponent + 14) << 10) | (guint16) ldexp (fraction * 2 - 1, 10);
}

/* Stores @value, which @dtype holds exactly, as an element of @dtype. */
static void
store_element (SerioDtype  dtype,
               double      value,
               guchar     *out)
{
  switch (dtype)
    {
    case SERIO_DTYPE_FLOAT64: memcpy (out, &value, 8); break;
    case SERIO_DTYPE_FLOAT32: { float f = (float) value; memcpy (out, &f, 4); } break;
    case SERIO_DTYPE_FLOAT16: { guint16 h = half_from_double (value); memcpy (out, &h, 2); } break;
    case SERIO_DTYPE_INT8: { gint8 n = (gint8) value; memcpy (out, &n, 1); } break;
    case SERIO_DTYPE_INT16: { gint16 n = (gint16) value; memcpy (out, &n, 2); } break;
    case SERIO_DTYPE_INT32: { gint32 n = (gint32) value; memcpy (out, &n, 4); } break;
    case SERIO_DTYPE_INT64: { gint64 n = (gint64) value; memcpy (out, &n, 8); } break;
    case SERIO_DTYPE_UINT8: { guint8 n = (guint8) value; memcpy (out, &n, 1); } break;
    case SERIO_DTYPE_UINT16: { guint16 n = (guint16) value; memcpy (out, &n, 2); } break;
    case SERIO_DTYPE_UINT32: { guint32 n = (guint32) value; memcpy (out, &n, 4); } break;
    case SERIO_DTYPE_UINT64: { guint64 n = (guint64) value; memcpy (out, &n, 8); } break;
    case SERIO_DTYPE_BOOL: out[0] = value != 0; break;
    case SERIO_DTYPE_BFLOAT16:
    default:
      g_assert_not_reached ();
    }
}

/* Reads and drops the values of a metadata record. FALSE only when the
 * input failed. */
static gboolean
skip_values (SerioReader  *reader,
             ToNumpy      *c,
             GError      **error)
{
  gsize n;

  do
    {
      if (!serio_reader_read_values (reader, c->values, SERIO_NUMPY_CHUNK_VALUES, &n, NULL, error))
        return FALSE;
    }
  while (n > 0);

  return TRUE;
}

/* How the values of an array reach the output. */
typedef enum
{
  COPY_DOUBLES,     /* float64, as read */
  COPY_TYPED,       /* typed bytes, as read */
  COPY_CONVERTED,   /* doubles converted to the output's type, checked first
                     * when serio.dtypes gave the type */
} CopyMode;

/* Reads the values of the reader's current array, and writes them to
 * the output when @wanted. FALSE only when the input failed. */
static gboolean
copy_array (SerioReader  *reader,
            ToNumpy      *c,
            gboolean      wanted,
            GError      **error)
{
  g_autofree char *base_name = serio_reader_get_base_name (reader);
  g_autofree char *shown = serio_tool_escape_name (base_name);
  SerioDtype dtype = serio_reader_get_dtype (reader);
  SerioDtype out_dtype;
  gboolean from_legacy = FALSE;
  gboolean writing = wanted && c->writer != NULL;
  CopyMode mode;
  guint64 index = 0;

  if (c->legacy != NULL && c->n_arrays <= c->legacy->len && dtype == SERIO_DTYPE_FLOAT64)
    {
      SerioDtype code = g_array_index (c->legacy, SerioDtype, c->n_arrays - 1);

      if (code == (SerioDtype) -1)
        {
          if (wanted)
            set_content_error (c, _("“%s” holds a text (serio.dtypes code 13), which a NumPy file "
                                    "of numbers cannot"), shown);
          writing = FALSE;
        }
      else
        {
          from_legacy = code != SERIO_DTYPE_FLOAT64;
          dtype = code;
        }
    }

  out_dtype = dtype == SERIO_DTYPE_BFLOAT16 ? SERIO_DTYPE_FLOAT32 : dtype;
  mode = from_legacy || dtype != out_dtype ? COPY_CONVERTED :
         dtype == SERIO_DTYPE_FLOAT64 ? COPY_DOUBLES : COPY_TYPED;

  if (writing)
    {
      g_autofree guint64 *shape = NULL;
      guint n_dims;

      if (dtype == SERIO_DTYPE_BFLOAT16)
        {
          /* TRANSLATORS: an array name */
          g_printerr (_("%s: note: “%s” is bfloat16, which NumPy does not have: it is written "
                        "as float32, exactly"), g_get_prgname (), shown);
          g_printerr ("\n");
        }
      shape = serio_reader_get_shape (reader, &n_dims);
      if (!serio_numpy_writer_begin_array (c->writer, base_name, out_dtype, shape, n_dims,
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
      const void *elements = c->values;
      gsize n;

      if (mode == COPY_TYPED)
        {
          if (!serio_reader_read_typed (reader, c->elements, SERIO_NUMPY_CHUNK_VALUES, &n,
                                        NULL, error))
            return FALSE;
          elements = c->elements;
        }
      else if (!serio_reader_read_values (reader, c->values, SERIO_NUMPY_CHUNK_VALUES, &n, NULL,
                                          error))
        {
          return FALSE;
        }
      if (n == 0)
        break;

      if (mode == COPY_CONVERTED && (writing || wanted))
        {
          gsize size = serio_dtype_get_size (out_dtype);

          for (gsize i = 0; i < n; i++)
            {
              if (from_legacy && !serio_dtype_holds (dtype, c->values[i]))
                {
                  char text[SERIO_TOOL_DOUBLE_BUFSIZE];
                  g_autofree char *at = g_strdup_printf ("%" G_GUINT64_FORMAT, index + i);

                  set_content_error (c,
                                     /* TRANSLATORS: an array name, an index, a value and a
                                      * data type such as “int64” */
                                     _("“%s”: the value %s at index %s is not a %s, which "
                                       "serio.dtypes says the array holds"),
                                     shown, serio_tool_format_double (c->values[i], text), at,
                                     serio_dtype_to_string (dtype));
                  writing = FALSE;
                  break;
                }
              store_element (out_dtype, c->values[i], c->elements + i * size);
            }
          elements = c->elements;
        }
      index += n;

      if (writing && !serio_numpy_writer_add_elements (c->writer, elements, n, &c->error))
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
  g_autofree double *values = g_new (double, SERIO_NUMPY_CHUNK_VALUES);
  g_autofree guchar *elements = g_malloc (SERIO_NUMPY_CHUNK_VALUES * sizeof (guint64));
  g_autofree char *duplicate = NULL;
  g_autoptr(GArray) legacy = NULL;
  ToNumpy c = { NULL, };
  gboolean first = TRUE;
  gboolean found = FALSE, found_exact = FALSE;
  /* Only a committed output succeeds. */
  int status = SERIO_TOOL_EXIT_ERROR;

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

  c.values = values;
  c.elements = elements;
  while (serio_reader_next (reader, NULL, &error))
    {
      const char *name = serio_reader_get_name (reader);
      gboolean wanted = FALSE;
      gboolean was_first = first;

      first = FALSE;
      /* Metadata records are not arrays: they are read (and so checked)
       * and dropped; a first serio.dtypes types the arrays. */
      if (serio_name_is_metadata (name))
        {
          gboolean read_ok;

          if (was_first && strcmp (name, SERIO_TOOL_LEGACY_DTYPES_NAME) == 0)
            {
              read_ok = read_legacy_table (reader, &c, &error);
              legacy = c.legacy;
            }
          else
            {
              read_ok = skip_values (reader, &c, &error);
            }
          if (!read_ok)
            break;
          continue;
        }

      c.n_arrays++;
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
          wanted = c.n_arrays == 1;
          if (wanted)
            to_numpy_start (&c);
          else
            to_numpy_drop (&c);
        }

      if (!copy_array (reader, &c, wanted, &error))
        break;
    }
  /* The reading may have stopped before the end of the file. */
  serio_tool_input_end_progress (serio_tool_reader_get_input (reader));
  if (c.legacy != NULL && c.legacy->len != c.n_arrays)
    set_content_error (&c, "%s", _(LEGACY_BAD_TABLE));

  if (error != NULL)
    {
      /* A read error names the file. */
      status = serio_tool_report_read_error (in, error);
    }
  else if (c.content_error != NULL)
    {
      serio_tool_print_file_error (in, &c.content_error);
      status = SERIO_TOOL_EXIT_FAILURE;
    }
  else if (out_format == FORMAT_NPY && array_name != NULL && !found)
    {
      status = serio_tool_no_such_array (in, array_name);
    }
  else if (out_format == FORMAT_NPY && array_name == NULL && c.n_arrays != 1)
    {
      status = print_arrays_held (in, c.n_arrays);
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
           serio_numpy_writer_finish (c.writer, &c.error) &&
           _serio_save_commit (g_steal_pointer (&c.save), NULL, &c.error))
    {
      status = SERIO_TOOL_EXIT_OK;
    }
  else
    {
      if (c.error == NULL)
        g_set_error_literal (&c.error, G_IO_ERROR, G_IO_ERROR_FAILED,
                             _("the conversion stopped without saying why (a bug)"));
      serio_tool_print_file_error (out, &c.error);
    }

  to_numpy_drop (&c);
  g_clear_error (&c.error);
  g_clear_error (&c.content_error);

  return status;
}

int
handle_convert (int argc, char *argv[], gboolean do_help)
{
  Format in_format, out_format;
  int status;

  if (!serio_tool_parse_options (N_("IN OUT"),
                                 N_("Convert NumPy .npy and .npz files and Hugging Face .safetensors files\n"
                                    "to serio files, and serio files to them, bit for bit (but a bundle\n"
                                    "holds only the default NaN). The file whose name ends in .npy, .npz or\n"
                                    ".safetensors sets the direction.\n\n"
                                    "From .npy: versions 1.0 to 3.0; float64, float32, float16, integers\n"
                                    "and booleans in either byte order, kept in their type (an integer that\n"
                                    "no double holds is refused), in C order (Fortran-order data is\n"
                                    "transposed). The array is named after the file, less directory and\n"
                                    ".npy, or NAME; its type other than float64 and a shape other than a\n"
                                    "float64 vector's are kept in the name, as in “w[2x3]” or\n"
                                    "“w@float32[3]”.\n\n"
                                    "From .npz: every array, in the order of the archive, named after its\n"
                                    "member; stored or deflate-compressed members.\n\n"
                                    "To .npy: the serio file must hold exactly one array, or NAME picks the\n"
                                    "first array so called (by name, or by the name less its type and\n"
                                    "shape). The output is a version 1.0 array of the array's type and\n"
                                    "shape, little-endian (bfloat16, which NumPy lacks, as float32).\n"
                                    "Metadata records (“serio.” names) are not arrays; a first\n"
                                    "“serio.dtypes” record, which older files have, gives the types.\n\n"
                                    "To .npz: every array of the serio file, as members of their type and\n"
                                    "shape named after them less type and shape (names must not repeat),\n"
                                    "stored as numpy.savez() does, or with --compress compressed as\n"
                                    "numpy.savez_compressed() does.\n\n"
                                    "From and to .safetensors: every tensor, in the order of its data, as an\n"
                                    "array of its type and shape, and back (F64, F32, F16, BF16, integers of\n"
                                    "8 to 64 bits and BOOL kept in their type; 8-, 6- and 4-bit floats and\n"
                                    "C64 are refused); each key of “__metadata__” as a record\n"
                                    "“serio.metadata.KEY” of the value's UTF-8 bytes, and back. The header\n"
                                    "is read strictly: what the reference parser lets through, such as a\n"
                                    "repeated or unknown field, or a hole between tensors, is refused. The\n"
                                    "page “From torch.save, np.savez, pickle and safetensors” of the libserio\n"
                                    "documentation gives every rule.\n\n"
                                    "A serio file is written sealed, so that every read verifies it, unless\n"
                                    "--plain is given. The output file is replaced atomically, and left\n"
                                    "alone on failure."),
                                 N_("Exit status: 0 on success, 1 if the input is not valid, has another\n"
                                    "data type or no array NAME, 2 on a usage or input/output error."),
                                 entries, do_help, &argc, &argv, &status))
    return status;

  if (argc != 3)
    return serio_tool_usage_error (_("give an input and an output file"));

  /* The output is replaced atomically, which needs a file. */
  if (serio_tool_is_stdin (argv[2]))
    return serio_tool_usage_error (_("the output must be a file, not “-”"));

  if (serio_tool_is_index (argv[1]) || serio_tool_is_index (argv[2]))
    return serio_tool_convert_index (argv[1], argv[2], plain);

  in_format = format_of (argv[1]);
  out_format = format_of (argv[2]);
  if ((in_format == FORMAT_SERIO) == (out_format == FORMAT_SERIO))
    return serio_tool_usage_error (_("exactly one of the files must have the .npy, .npz or .safetensors extension"));
  if (array_name != NULL && (in_format == FORMAT_SAFETENSORS || out_format == FORMAT_SAFETENSORS))
    return serio_tool_usage_error (_("--name applies to .npy files only: a .safetensors file holds "
                                     "every array"));
  if (array_name != NULL && (in_format == FORMAT_NPZ || out_format == FORMAT_NPZ))
    return serio_tool_usage_error (_("--name applies to .npy files only: a .npz file holds every array"));
  if (plain && out_format != FORMAT_SERIO)
    return serio_tool_usage_error (_("--plain applies to a serio output file only"));
  if (compress && out_format != FORMAT_NPZ)
    return serio_tool_usage_error (_("--compress applies to a .npz output file only"));

  if (in_format == FORMAT_SAFETENSORS)
    return serio_safetensors_to_serio (argv[1], argv[2], plain);
  if (out_format == FORMAT_SAFETENSORS)
    return serio_safetensors_from_serio (argv[1], argv[2]);
  if (in_format != FORMAT_SERIO)
    return numpy_to_serio (argv[1], in_format, argv[2]);
  return serio_to_numpy (argv[1], argv[2], out_format);
}
