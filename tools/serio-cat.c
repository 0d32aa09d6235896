/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-cat.c: serio cat [--name NAME…] FILE
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

static char **array_names = NULL;

static const GOptionEntry entries[] = {
  { "name", 'n', 0, G_OPTION_ARG_STRING_ARRAY, &array_names,
    N_("Print only the first array called NAME (may be repeated)"), N_("NAME") },
  G_OPTION_ENTRY_NULL
};

/* Output goes through a buffer of this size: one write per piece, not one
 * per value. */
#define OUTPUT_CHUNK (64 * 1024)

static void
flush_output (GString *out)
{
  fwrite (out->str, 1, out->len, stdout);
  g_string_truncate (out, 0);
}

static void
print_header (GString     *out,
              SerioBundle *bundle,
              guint        index)
{
  g_autofree char *name = serio_tool_escape_name (serio_bundle_get_name (bundle, index));
  gsize n_values;

  serio_bundle_get_values (bundle, index, &n_values);
  /* Not translated: the output of cat is the same under every locale. */
  g_string_append_printf (out, "# %s (%" G_GSIZE_FORMAT " %s)\n",
                          name, n_values, n_values == 1 ? "value" : "values");
}

static void
print_values (GString     *out,
              SerioBundle *bundle,
              guint        index)
{
  gsize n_values;
  const double *values = serio_bundle_get_values (bundle, index, &n_values);

  for (gsize i = 0; i < n_values; i++)
    {
      gsize len;

      if (out->len >= OUTPUT_CHUNK)
        flush_output (out);

      /* Written straight into the buffer: below OUTPUT_CHUNK, it has room
       * for one more number and its line feed. */
      len = out->len;
      len += serio_tool_write_double (values[i], out->str + len);
      out->str[len++] = '\n';
      g_string_set_size (out, len);
    }
}

int
serio_tool_cat (int    argc,
                char **argv)
{
  g_autoptr(SerioBundle) bundle = NULL;
  g_autoptr(GString) out = NULL;
  g_autofree guint *indexes = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  guint n_names;

  if (!serio_tool_parse_options (N_("FILE"),
                                 N_("Print the values of the arrays in a serio file, one per line, as the\n"
                                    "shortest decimals that read back to the same bits (or nan, inf, -inf,\n"
                                    "-0), the same under every locale. Each array starts with a line\n"
                                    "“# NAME (N values)”. “-” stands for the standard input.\n\n"
                                    "Given one array NAME, only its values are printed, without the header\n"
                                    "line; given several, the arrays are printed in the order given, each\n"
                                    "with its header line."),
                                 N_("Exit status: 0 on success, 1 if the file is not valid or has no array\n"
                                    "NAME, 2 on a usage or input/output error."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc != 2)
    return serio_tool_usage_error (_("give exactly one file"));

  bundle = serio_tool_load_bundle (argv[1], NULL, &status);
  if (bundle == NULL)
    return status;

  /* Every name is looked up before anything is printed. */
  n_names = array_names != NULL ? g_strv_length (array_names) : 0;
  indexes = g_new (guint, MAX (n_names, 1));
  for (guint k = 0; k < n_names; k++)
    {
      if (!serio_bundle_lookup (bundle, array_names[k], &indexes[k]))
        status = serio_tool_no_such_array (argv[1], array_names[k]);
    }
  if (status != SERIO_TOOL_EXIT_OK)
    return status;

  /* Headers are appended as usual; values need no more than this room. */
  out = g_string_sized_new (OUTPUT_CHUNK + SERIO_TOOL_DOUBLE_BUFSIZE + 1);
  if (n_names == 1)
    {
      print_values (out, bundle, indexes[0]);
    }
  else if (n_names > 1)
    {
      for (guint k = 0; k < n_names; k++)
        {
          print_header (out, bundle, indexes[k]);
          print_values (out, bundle, indexes[k]);
        }
    }
  else
    {
      for (guint index = 0; index < serio_bundle_get_n_arrays (bundle); index++)
        {
          print_header (out, bundle, index);
          print_values (out, bundle, index);
        }
    }
  flush_output (out);

  return SERIO_TOOL_EXIT_OK;
}
