/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-info.c: serio info [--json] FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-ryu.h"
#include "serio-tool.h"

/* Values are read into a scratch buffer of this many. */
#define SCRATCH_VALUES (64 * 1024)

typedef struct
{
  guint64  n_nan;
  guint64  n_inf;
  gboolean has_range;   /* some value is not NaN */
  double   min;
  double   max;
} Stats;

static gboolean json_output = FALSE;

/* The legacy table of types that the first Python package wrote as the
 * first record, serio.dtypes: one code per array after it (serio-tool.h).
 * Legacy arrays are unmarked; the table gives the type shown. A code that
 * is neither a type's nor a text's is kept as this. */
#define LEGACY_CODE_UNKNOWN 255
/* Codes kept at most, one byte each: a table longer than any file's
 * number of arrays costs no more memory than this. */
#define LEGACY_MAX_CODES (1 << 20)

/* The type of an array as info shows it: its own, or for an unmarked
 * array of a file with a legacy table, the table's. @dtype is what its
 * values print as ("str" prints as float64: integers). */
typedef struct
{
  SerioDtype  dtype;
  const char *name;
} ShownType;

static ShownType
shown_type (SerioReader *reader,
            GByteArray  *legacy,
            guint64      legacy_index)
{
  SerioDtype dtype = serio_reader_get_dtype (reader);
  SerioDtype legacy_dtype;
  guint8 code;

  if (dtype != SERIO_DTYPE_FLOAT64 || legacy == NULL || legacy_index >= legacy->len)
    return (ShownType) { dtype, serio_dtype_to_string (dtype) };

  code = legacy->data[legacy_index];
  if (code == SERIO_TOOL_LEGACY_CODE_STR)
    return (ShownType) { SERIO_DTYPE_FLOAT64, "str" };
  if (serio_tool_legacy_code_get_dtype (code, &legacy_dtype))
    return (ShownType) { legacy_dtype, serio_dtype_to_string (legacy_dtype) };
  return (ShownType) { dtype, serio_dtype_to_string (dtype) };
}

/* A value as the shortest decimal of the type shown, when it holds the
 * value (a legacy table can claim a type its values do not have). */
static const char *
format_value (double     value,
              SerioDtype dtype,
              char       buf[SERIO_TOOL_DOUBLE_BUFSIZE])
{
  if (!serio_dtype_holds (dtype, value))
    dtype = SERIO_DTYPE_FLOAT64;
  return serio_tool_format_typed (value, dtype, buf);
}

static const GOptionEntry entries[] = {
  { "json", 'j', 0, G_OPTION_ARG_NONE, &json_output, N_("Print JSON instead of text"), NULL },
  G_OPTION_ENTRY_NULL
};

/* -0 counts as below +0, so that the extremes do not depend on the order
 * of the values. */
static gboolean
is_below (double a,
          double b)
{
  return a < b || (a == b && signbit (a) && !signbit (b));
}

static void
stats_init (Stats *stats)
{
  *stats = (Stats) { 0, };
}

/* Takes @n_values more values of an array into its @stats. */
static void
stats_add (Stats        *stats,
           const double *values,
           gsize         n_values)
{
  for (gsize i = 0; i < n_values; i++)
    {
      double x = values[i];

      if (isnan (x))
        {
          stats->n_nan++;
          continue;
        }
      if (isinf (x))
        stats->n_inf++;

      if (!stats->has_range || is_below (x, stats->min))
        stats->min = x;
      if (!stats->has_range || is_below (stats->max, x))
        stats->max = x;
      stats->has_range = TRUE;
    }
}

/* The name as shown, then the type: "dense.w float64" for a name without
 * a shape suffix, and "conv1.weight (16, 3, 3, 3) float32" for
 * "conv1.weight@float32[16x3x3x3]": the base name and the shape, as NumPy
 * writes it. */
static char *
describe_name (SerioReader     *reader,
               const ShownType *type)
{
  const char *name = serio_reader_get_name (reader);
  g_autofree char *base_name = serio_reader_get_base_name (reader);
  g_autofree guint64 *shape = NULL;
  g_autofree char *shape_text = NULL;
  g_autofree char *escaped = serio_tool_escape_name (base_name);
  guint n_dims;

  if (g_str_equal (name, base_name))
    return g_strdup_printf ("%s %s", escaped, type->name);

  shape = serio_reader_get_shape (reader, &n_dims);
  shape_text = serio_tool_shape_to_string (shape, n_dims);

  return g_strdup_printf ("%s %s %s", escaped, shape_text, type->name);
}

/* The line of one array, read up to its end. */
static gboolean
append_text (SerioToolSpool  *out,
             SerioReader     *reader,
             guint            index,
             const ShownType *type,
             const Stats     *stats,
             GError         **error)
{
  g_autofree char *name = describe_name (reader, type);
  guint64 n_values = serio_reader_get_n_values (reader);

  if (stats->has_range)
    {
      char min[SERIO_TOOL_DOUBLE_BUFSIZE], max[SERIO_TOOL_DOUBLE_BUFSIZE];

      return serio_tool_spool_append_printf (out, error,
                                             g_dngettext (GETTEXT_PACKAGE,
                                                          /* TRANSLATORS: one array of a file: its
                                                           * index, its name, its length, its least
                                                           * and greatest values, and how many of its
                                                           * values are NaN and how many infinite */
                                                          "  [%u] %s: %lu value; min %s, max %s; NaN: %lu, infinite: %lu",
                                                          "  [%u] %s: %lu values; min %s, max %s; NaN: %lu, infinite: %lu",
                                                          n_values),
                                             index, name, (gulong) n_values,
                                             format_value (stats->min, type->dtype, min),
                                             format_value (stats->max, type->dtype, max),
                                             (gulong) stats->n_nan, (gulong) stats->n_inf) &&
             serio_tool_spool_append (out, "\n", 1, error);
    }

  return serio_tool_spool_append_printf (out, error,
                                         g_dngettext (GETTEXT_PACKAGE,
                                                      /* TRANSLATORS: an array that is empty or
                                                       * holds only NaN: its index, its name, its
                                                       * length and how many of its values are
                                                       * NaN */
                                                      "  [%u] %s: %lu value; NaN: %lu",
                                                      "  [%u] %s: %lu values; NaN: %lu",
                                                      n_values),
                                         index, name, (gulong) n_values, (gulong) stats->n_nan) &&
         serio_tool_spool_append (out, "\n", 1, error);
}

/* The line of a metadata record. */
static gboolean
append_metadata_text (SerioToolSpool  *out,
                      SerioReader     *reader,
                      guint            index,
                      GError         **error)
{
  g_autofree char *name = serio_tool_escape_name (serio_reader_get_name (reader));
  guint64 n_values = serio_reader_get_n_values (reader);

  return serio_tool_spool_append_printf (out, error,
                                         g_dngettext (GETTEXT_PACKAGE,
                                                      /* TRANSLATORS: a record of a file that is
                                                       * not an array but the library's metadata
                                                       * (such as serio.dtypes): its index, its
                                                       * name and its length */
                                                      "  [%u] %s: metadata, %lu value",
                                                      "  [%u] %s: metadata, %lu values",
                                                      n_values),
                                         index, name, (gulong) n_values) &&
         serio_tool_spool_append (out, "\n", 1, error);
}

static void
print_text_header (const char *path,
                   guint       n_arrays,
                   guint32     checksum,
                   gboolean    sealed)
{
  g_autofree char *display = g_filename_display_name (path);

  if (sealed)
    g_print (g_dngettext (GETTEXT_PACKAGE,
                          /* TRANSLATORS: a file name, its number of arrays
                           * and its checksum in hexadecimal; the file's
                           * seal matched it */
                          "%s: %u array, checksum %08x, sealed (verified)",
                          "%s: %u arrays, checksum %08x, sealed (verified)",
                          n_arrays),
             display, n_arrays, (unsigned int) checksum);
  else
    g_print (g_dngettext (GETTEXT_PACKAGE,
                          /* TRANSLATORS: a file name, its number of arrays
                           * and its checksum in hexadecimal; the file has
                           * no seal */
                          "%s: %u array, checksum %08x, plain (no seal)",
                          "%s: %u arrays, checksum %08x, plain (no seal)",
                          n_arrays),
             display, n_arrays, (unsigned int) checksum);
  g_print ("\n");
}

/* Finite values as numbers, the others as the strings "inf", "-inf"; -0
 * as "-0.0", which JSON readers that turn "-0" into the integer 0 keep. */
static void
append_json_double (GString    *out,
                    double      value,
                    SerioDtype  dtype)
{
  char buf[SERIO_TOOL_DOUBLE_BUFSIZE];

  if (isinf (value))
    g_string_append_printf (out, "\"%s\"", serio_tool_format_double (value, buf));
  else if (value == 0 && signbit (value))
    g_string_append (out, "-0.0");
  else
    g_string_append (out, format_value (value, dtype, buf));
}

static gboolean
append_json_array (SerioToolSpool  *out,
                   SerioReader     *reader,
                   guint            index,
                   gboolean         first,
                   const ShownType *type,
                   const Stats     *stats,
                   GError         **error)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autofree char *base_name = serio_reader_get_base_name (reader);
  g_autofree guint64 *shape = NULL;
  guint n_dims;

  g_string_append_printf (text, "%s\n      {\"index\": %u, \"name\": ", first ? "" : ",", index);
  serio_tool_append_json_string (text, serio_reader_get_name (reader));
  g_string_append (text, ", \"base_name\": ");
  serio_tool_append_json_string (text, base_name);
  g_string_append (text, ", \"dtype\": ");
  serio_tool_append_json_string (text, type->name);
  g_string_append (text, ", \"shape\": [");
  shape = serio_reader_get_shape (reader, &n_dims);
  for (guint k = 0; k < n_dims; k++)
    g_string_append_printf (text, "%s%" G_GUINT64_FORMAT, k > 0 ? ", " : "", shape[k]);
  g_string_append (text, "]");
  g_string_append_printf (text, ", \"length\": %" G_GUINT64_FORMAT ", \"min\": ",
                          serio_reader_get_n_values (reader));
  if (stats->has_range)
    append_json_double (text, stats->min, type->dtype);
  else
    g_string_append (text, "null");
  g_string_append (text, ", \"max\": ");
  if (stats->has_range)
    append_json_double (text, stats->max, type->dtype);
  else
    g_string_append (text, "null");
  g_string_append_printf (text, ", \"nan\": %" G_GUINT64_FORMAT ", \"inf\": %" G_GUINT64_FORMAT "}",
                          stats->n_nan, stats->n_inf);

  return serio_tool_spool_append (out, text->str, text->len, error);
}

static gboolean
append_json_metadata (SerioToolSpool  *out,
                      SerioReader     *reader,
                      guint            index,
                      gboolean         first,
                      GError         **error)
{
  g_autoptr(GString) text = g_string_new (NULL);

  g_string_append_printf (text, "%s\n      {\"index\": %u, \"name\": ", first ? "" : ",", index);
  serio_tool_append_json_string (text, serio_reader_get_name (reader));
  g_string_append_printf (text, ", \"length\": %" G_GUINT64_FORMAT "}",
                          serio_reader_get_n_values (reader));

  return serio_tool_spool_append (out, text->str, text->len, error);
}

static gboolean
append_to_spool (const char  *data,
                 gsize        len,
                 gpointer     user_data,
                 GError     **error)
{
  return serio_tool_spool_append (user_data, data, len, error);
}

/* The object of one file, whose arrays are in @arrays and metadata
 * records in @metadata. */
static gboolean
append_json (SerioToolSpool  *out,
             const char      *path,
             guint            n_arrays,
             guint            n_metadata,
             guint32          checksum,
             gboolean         sealed,
             SerioToolSpool  *arrays,
             SerioToolSpool  *metadata,
             GError         **error)
{
  g_autofree char *display = g_filename_display_name (path);
  g_autoptr(GString) text = g_string_new ("  {\n    \"file\": ");

  serio_tool_append_json_string (text, display);
  g_string_append_printf (text, ",\n    \"checksum\": \"%08x\",\n    \"sealed\": %s,\n    \"arrays\": [",
                          (unsigned int) checksum, sealed ? "true" : "false");

  return serio_tool_spool_append (out, text->str, text->len, error) &&
         serio_tool_spool_replay (arrays, FALSE, append_to_spool, out, error) &&
         serio_tool_spool_append (out, n_arrays > 0 ? "\n    ],\n    \"metadata\": [" : "],\n    \"metadata\": [",
                                  -1, error) &&
         serio_tool_spool_replay (metadata, FALSE, append_to_spool, out, error) &&
         serio_tool_spool_append (out, n_metadata > 0 ? "\n    ]\n  }" : "]\n  }", -1, error);
}

/* Streams one file through a reader, its checksum taken from the bytes as
 * they pass and each array's figures gathered piece by piece; the lines
 * of the arrays wait in a spool for the file's first line, which needs
 * the whole file. Prints the file's description (to @json, with --json),
 * or its error. */
static int
describe_file (const char      *path,
               double          *values,
               SerioToolSpool  *json,
               gboolean        *first)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioToolSpool) arrays = serio_tool_spool_new ("serio-info-XXXXXX");
  g_autoptr(SerioToolSpool) metadata = serio_tool_spool_new ("serio-info-XXXXXX");
  g_autoptr(SerioReader) reader = serio_tool_open_reader (path, SERIO_TOOL_INPUT_CHECKSUM, &error);
  g_autoptr(GByteArray) legacy = NULL;
  guint index = 0, n_arrays = 0, n_metadata = 0;
  guint32 checksum;
  gboolean sealed;

  if (reader == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  for (; serio_reader_next (reader, NULL, &error); index++)
    {
      const char *name = serio_reader_get_name (reader);
      gboolean is_metadata = serio_name_is_metadata (name);
      gboolean is_legacy = index == 0 && g_str_equal (name, SERIO_TOOL_LEGACY_DTYPES_NAME);
      ShownType type = shown_type (reader, legacy, n_arrays);
      Stats stats;
      gsize n;

      if (is_legacy)
        legacy = g_byte_array_new ();
      stats_init (&stats);
      do
        {
          if (!serio_reader_read_values (reader, values, SCRATCH_VALUES, &n, NULL, &error))
            return serio_tool_report_read_error (path, error);
          if (is_legacy)
            for (gsize i = 0; i < n && legacy->len < LEGACY_MAX_CODES; i++)
              {
                guint8 code = values[i] >= 0 && values[i] <= SERIO_TOOL_LEGACY_CODE_STR &&
                              values[i] == floor (values[i]) ? (guint8) values[i] : LEGACY_CODE_UNKNOWN;

                g_byte_array_append (legacy, &code, 1);
              }
          if (!is_metadata)
            stats_add (&stats, values, n);
        }
      while (n > 0);

      if (is_metadata)
        {
          if (json_output ? !append_json_metadata (metadata, reader, index, n_metadata == 0, &error)
                          : !append_metadata_text (metadata, reader, index, &error))
            goto spool_error;
          n_metadata++;
          continue;
        }

      if (json_output ? !append_json_array (arrays, reader, index, n_arrays == 0, &type, &stats, &error)
                      : !append_text (arrays, reader, index, &type, &stats, &error))
        goto spool_error;
      n_arrays++;
    }
  if (error != NULL)
    return serio_tool_report_read_error (path, error);

  checksum = serio_tool_input_get_checksum (serio_tool_reader_get_input (reader));
  sealed = serio_reader_get_sealed (reader);
  if (json_output)
    {
      if (!serio_tool_spool_append (json, *first ? "\n" : ",\n", -1, &error) ||
          !append_json (json, path, n_arrays, n_metadata, checksum, sealed, arrays, metadata, &error))
        goto spool_error;
    }
  else
    {
      print_text_header (path, n_arrays, checksum, sealed);
      if (!serio_tool_spool_replay (arrays, TRUE, serio_tool_spool_print_line, NULL, &error) ||
          !serio_tool_spool_replay (metadata, TRUE, serio_tool_spool_print_line, NULL, &error))
        goto spool_error;
    }
  *first = FALSE;

  return SERIO_TOOL_EXIT_OK;

spool_error:
  serio_tool_print_error (error);
  return SERIO_TOOL_EXIT_ERROR;
}

int
handle_info (int argc, char *argv[], gboolean do_help)
{
  g_autoptr(SerioToolSpool) json = serio_tool_spool_new ("serio-info-XXXXXX");
  g_autofree double *values = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  gboolean first = TRUE;

  if (!serio_tool_parse_options (N_("FILE…"),
                                 N_("Describe the arrays in serio files: index, name (and shape, for a\n"
                                    "name with a shape suffix such as “w[2x3]”), element type, length,\n"
                                    "least and greatest value (NaN aside) as decimals of that type, how\n"
                                    "many values are NaN and how many infinite; and for each file its\n"
                                    "checksum and whether it is sealed (and so verified as it was read).\n"
                                    "Metadata records (names that begin with “serio.”) are listed apart,\n"
                                    "after the arrays. “-” stands for the standard input."),
                                 N_("With --json, print a JSON array of one object per file read:\n"
                                    "  {\"file\", \"checksum\", \"sealed\", \"arrays\": [{\"index\", \"name\",\n"
                                    "    \"base_name\", \"dtype\", \"shape\", \"length\", \"min\", \"max\",\n"
                                    "    \"nan\", \"inf\"}, …], \"metadata\": [{\"index\", \"name\", \"length\"}, …]}\n"
                                    "Values are shortest round-trip decimals, -0 is written -0.0, and the\n"
                                    "infinities are the strings \"inf\" and \"-inf\"; min and max are null\n"
                                    "when no value is a number. In file names that are not UTF-8, invalid\n"
                                    "bytes become U+FFFD.\n\n"
                                    "Exit status: 0 on success, 1 if a file is not valid, 2 on a usage or\n"
                                    "input/output error."),
                                 entries, do_help, &argc, &argv, &status))
    return status;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  /* In memory: it cannot fail. */
  if (json_output)
    serio_tool_spool_append (json, "[", 1, NULL);

  values = g_new (double, SCRATCH_VALUES);

  for (int i = 1; i < argc; i++)
    {
      int file_status = describe_file (argv[i], values, json, &first);

      status = MAX (status, file_status);
    }

  if (json_output)
    {
      g_autoptr(GError) error = NULL;

      if (!serio_tool_spool_append (json, first ? "]\n" : "\n]\n", -1, &error) ||
          !serio_tool_spool_replay (json, FALSE, serio_tool_spool_write_stdout, NULL, &error))
        {
          int saved_errno = errno;

          /* A failed standard output is reported by the caller, from
           * errno. */
          if (!ferror (stdout))
            serio_tool_print_error (error);
          status = SERIO_TOOL_EXIT_ERROR;
          errno = saved_errno;
        }
    }

  return status;
}
