/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-cat.c: serio cat FILE [--name NAME]
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

static char *array_name = NULL;

static const GOptionEntry entries[] = {
  { "name", 'n', 0, G_OPTION_ARG_STRING, &array_name,
    N_("Print only the first array called NAME, without a header"), N_("NAME") },
  G_OPTION_ENTRY_NULL
};

static void
print_values (SerioBundle *bundle,
              guint        index)
{
  gsize n_values;
  const double *values = serio_bundle_get_values (bundle, index, &n_values);

  for (gsize i = 0; i < n_values; i++)
    {
      char buf[SERIO_TOOL_DOUBLE_BUFSIZE];

      fputs (serio_tool_format_double (values[i], buf), stdout);
      putchar ('\n');
    }
}

int
serio_tool_cat (int    argc,
                char **argv)
{
  g_autoptr(SerioBundle) bundle = NULL;
  int status = SERIO_TOOL_EXIT_OK;
  guint index;

  if (!serio_tool_parse_options (N_("FILE"),
                                 N_("Print the values of the arrays in a serio file, one per line, as the\n"
                                    "shortest decimals that read back to the same bits (or nan, inf, -inf,\n"
                                    "-0), the same under every locale. Each array starts with a line\n"
                                    "“# NAME (N values)”. “-” stands for the standard input."),
                                 N_("Exit status: 0 on success, 1 if the file is not valid or has no array\n"
                                    "NAME, 2 on a usage or input/output error."),
                                 entries, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc != 2)
    return serio_tool_usage_error (_("give exactly one file"));

  bundle = serio_tool_load_bundle (argv[1], NULL, &status);
  if (bundle == NULL)
    return status;

  if (array_name != NULL)
    {
      if (!serio_bundle_lookup (bundle, array_name, &index))
        return serio_tool_no_such_array (argv[1], array_name);

      print_values (bundle, index);
      return SERIO_TOOL_EXIT_OK;
    }

  for (index = 0; index < serio_bundle_get_n_arrays (bundle); index++)
    {
      g_autofree char *name = serio_tool_escape_name (serio_bundle_get_name (bundle, index));
      gsize n_values;

      serio_bundle_get_values (bundle, index, &n_values);
      /* Not translated: the output of cat is the same under every locale. */
      printf ("# %s (%" G_GSIZE_FORMAT " %s)\n", name, n_values, n_values == 1 ? "value" : "values");
      print_values (bundle, index);
    }

  return SERIO_TOOL_EXIT_OK;
}
