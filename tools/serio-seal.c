/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-seal.c: serio seal FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-tool.h"

/* Seals one file in place, through the bundle's own save: atomic, and the
 * file keeps its permissions. */
static int
seal_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree char *display = g_filename_display_name (path);
  int status;
  g_autoptr(SerioBundle) bundle = serio_tool_load_bundle (path, &bytes, &status);

  /* A file that does not parse is left alone: its error is printed. */
  if (bundle == NULL)
    return status;

  if (serio_tool_is_sealed (bytes))
    {
      /* TRANSLATORS: a file name */
      g_print (_("%s: already sealed, left as it is"), display);
      g_print ("\n");
      return SERIO_TOOL_EXIT_OK;
    }

  file = g_file_new_for_path (path);
  if (!serio_bundle_save_to_file (bundle, file, NULL, &error))
    {
      /* TRANSLATORS: a file name, before an error message about it */
      g_prefix_error (&error, _("%s: "), display);
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  /* TRANSLATORS: a file name */
  g_print (_("%s: sealed"), display);
  g_print ("\n");

  return SERIO_TOOL_EXIT_OK;
}

int
serio_tool_seal (int    argc,
                 char **argv)
{
  int status = SERIO_TOOL_EXIT_OK;

  if (!serio_tool_parse_options (N_("FILE…"),
                                 N_("Add a seal to plain serio files, in place, so that every later read\n"
                                    "verifies them. Each file is read as strictly as the library reads it\n"
                                    "and written back sealed, atomically, keeping its permissions; the\n"
                                    "names and values are the same, but blank lines and CR LF line ends\n"
                                    "are not kept. A file that is not valid is left as it is, and so is\n"
                                    "a file that is sealed already."),
                                 N_("Exit status: 0 if every file is sealed at the end, 1 if a file is\n"
                                    "not valid, 2 on a usage or input/output error."),
                                 NULL, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  for (int i = 1; i < argc; i++)
    {
      if (serio_tool_is_stdin (argv[i]))
        return serio_tool_usage_error (_("files are sealed in place: the standard input cannot be"));
    }

  for (int i = 1; i < argc; i++)
    {
      int file_status = seal_file (argv[i]);

      status = MAX (status, file_status);
    }

  return status;
}
