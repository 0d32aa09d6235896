/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-info.c: serio info [--json] FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <math.h>
#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

typedef struct
{
  gsize    n_nan;
  gsize    n_inf;
  gboolean has_range;   /* some value is not NaN */
  double   min;
  double   max;
} Stats;

static gboolean json_output = FALSE;

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
compute_stats (const double *values,
               gsize         n_values,
               Stats        *stats)
{
  *stats = (Stats) { 0, };

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

/* The name as shown: "dense.w" for a name without a shape suffix, and
 * "conv1.weight (16, 3, 3, 3)" for "conv1.weight[16x3x3x3]": the base name
 * and the shape, as NumPy writes it. */
static char *
describe_name (SerioBundle *bundle,
               guint        index)
{
  const char *name = serio_bundle_get_name (bundle, index);
  g_autofree char *base_name = serio_bundle_get_base_name (bundle, index);
  g_autofree guint64 *shape = NULL;
  g_autofree char *shape_text = NULL;
  g_autofree char *escaped = NULL;
  guint n_dims;

  if (g_str_equal (name, base_name))
    return serio_tool_escape_name (name);

  shape = serio_bundle_get_shape (bundle, index, &n_dims);
  shape_text = serio_tool_shape_to_string (shape, n_dims);
  escaped = serio_tool_escape_name (base_name);

  return g_strdup_printf ("%s %s", escaped, shape_text);
}

static void
print_text (const char  *path,
            SerioBundle *bundle,
            guint32      checksum,
            gboolean     sealed)
{
  g_autofree char *display = g_filename_display_name (path);
  guint n_arrays = serio_bundle_get_n_arrays (bundle);

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

  for (guint i = 0; i < n_arrays; i++)
    {
      g_autofree char *name = describe_name (bundle, i);
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);
      Stats stats;

      compute_stats (values, n_values, &stats);
      if (stats.has_range)
        {
          char min[SERIO_TOOL_DOUBLE_BUFSIZE], max[SERIO_TOOL_DOUBLE_BUFSIZE];

          g_print (g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: one array of a file: its
                                 * index, its name, its length, its least
                                 * and greatest values, and how many of its
                                 * values are NaN and how many infinite */
                                "  [%u] %s: %lu value; min %s, max %s; NaN: %lu, infinite: %lu",
                                "  [%u] %s: %lu values; min %s, max %s; NaN: %lu, infinite: %lu",
                                n_values),
                   i, name, (gulong) n_values,
                   serio_tool_format_double (stats.min, min),
                   serio_tool_format_double (stats.max, max),
                   (gulong) stats.n_nan, (gulong) stats.n_inf);
        }
      else
        {
          g_print (g_dngettext (GETTEXT_PACKAGE,
                                /* TRANSLATORS: an array that is empty or
                                 * holds only NaN: its index, its name, its
                                 * length and how many of its values are
                                 * NaN */
                                "  [%u] %s: %lu value; NaN: %lu",
                                "  [%u] %s: %lu values; NaN: %lu",
                                n_values),
                   i, name, (gulong) n_values, (gulong) stats.n_nan);
        }
      g_print ("\n");
    }
}

static void
append_json_string (GString    *out,
                    const char *text)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) text; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          if (*p < 0x20)
            g_string_append_printf (out, "\\u%04x", *p);
          else
            g_string_append_c (out, *p);
        }
    }
  g_string_append_c (out, '"');
}

/* Finite values as numbers, the others as the strings "inf", "-inf"; -0
 * as "-0.0", which JSON readers that turn "-0" into the integer 0 keep. */
static void
append_json_double (GString *out,
                    double   value)
{
  char buf[SERIO_TOOL_DOUBLE_BUFSIZE];

  if (isinf (value))
    g_string_append_printf (out, "\"%s\"", serio_tool_format_double (value, buf));
  else if (value == 0 && signbit (value))
    g_string_append (out, "-0.0");
  else
    g_string_append (out, serio_tool_format_double (value, buf));
}

static void
append_json (GString     *out,
             const char  *path,
             SerioBundle *bundle,
             guint32      checksum,
             gboolean     sealed)
{
  g_autofree char *display = g_filename_display_name (path);
  guint n_arrays = serio_bundle_get_n_arrays (bundle);

  g_string_append (out, "  {\n    \"file\": ");
  append_json_string (out, display);
  g_string_append_printf (out, ",\n    \"checksum\": \"%08x\",\n    \"sealed\": %s,\n    \"arrays\": [",
                          (unsigned int) checksum, sealed ? "true" : "false");

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize n_values;
      const double *values = serio_bundle_get_values (bundle, i, &n_values);
      g_autofree char *base_name = serio_bundle_get_base_name (bundle, i);
      g_autofree guint64 *shape = NULL;
      guint n_dims;
      Stats stats;

      compute_stats (values, n_values, &stats);
      g_string_append_printf (out, "%s\n      {\"index\": %u, \"name\": ", i > 0 ? "," : "", i);
      append_json_string (out, serio_bundle_get_name (bundle, i));
      g_string_append (out, ", \"base_name\": ");
      append_json_string (out, base_name);
      g_string_append (out, ", \"shape\": [");
      shape = serio_bundle_get_shape (bundle, i, &n_dims);
      for (guint k = 0; k < n_dims; k++)
        g_string_append_printf (out, "%s%" G_GUINT64_FORMAT, k > 0 ? ", " : "", shape[k]);
      g_string_append (out, "]");
      g_string_append_printf (out, ", \"length\": %" G_GSIZE_FORMAT ", \"min\": ", n_values);
      if (stats.has_range)
        append_json_double (out, stats.min);
      else
        g_string_append (out, "null");
      g_string_append (out, ", \"max\": ");
      if (stats.has_range)
        append_json_double (out, stats.max);
      else
        g_string_append (out, "null");
      g_string_append_printf (out, ", \"nan\": %" G_GSIZE_FORMAT ", \"inf\": %" G_GSIZE_FORMAT "}",
                              stats.n_nan, stats.n_inf);
    }

  g_string_append (out, n_arrays > 0 ? "\n    ]\n  }" : "]\n  }");
}

int
serio_tool_info (int    argc,
                 char **argv)
{
  g_autoptr(GString) json = g_string_new ("[");
  int status = SERIO_TOOL_EXIT_OK;
  gboolean first = TRUE;

  if (!serio_tool_parse_options (N_("FILE…"),
                                 N_("Describe the arrays in serio files: index, name (and shape, for a\n"
                                    "name with a shape suffix such as “w[2x3]”), length, least and\n"
                                    "greatest value (NaN aside), how many values are NaN and how many\n"
                                    "infinite; and for each file its checksum and whether it is sealed\n"
                                    "(and so verified as it was read). “-” stands for the standard input."),
                                 N_("With --json, print a JSON array of one object per file read:\n"
                                    "  {\"file\", \"checksum\", \"sealed\", \"arrays\": [{\"index\", \"name\",\n"
                                    "    \"base_name\", \"shape\", \"length\", \"min\", \"max\", \"nan\",\n"
                                    "    \"inf\"}, …]}\n"
                                    "Values are shortest round-trip decimals, -0 is written -0.0, and the\n"
                                    "infinities are the strings \"inf\" and \"-inf\"; min and max are null\n"
                                    "when no value is a number. In file names that are not UTF-8, invalid\n"
                                    "bytes become U+FFFD.\n\n"
                                    "Exit status: 0 on success, 1 if a file is not valid, 2 on a usage or\n"
                                    "input/output error."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  for (int i = 1; i < argc; i++)
    {
      g_autoptr(GBytes) bytes = NULL;
      int file_status;
      g_autoptr(SerioBundle) bundle = serio_tool_load_bundle (argv[i], &bytes, &file_status);
      guint32 checksum;

      if (bundle == NULL)
        {
          status = MAX (status, file_status);
          continue;
        }

      checksum = serio_checksum_bytes (bytes);
      if (json_output)
        {
          g_string_append (json, first ? "\n" : ",\n");
          append_json (json, argv[i], bundle, checksum, serio_tool_is_sealed (bytes));
        }
      else
        {
          print_text (argv[i], bundle, checksum, serio_tool_is_sealed (bytes));
        }
      first = FALSE;
    }

  if (json_output)
    {
      g_string_append (json, first ? "]\n" : "\n]\n");
      fputs (json->str, stdout);
    }

  return status;
}
