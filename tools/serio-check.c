/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-check.c: serio check [--require-seal] [--quiet] FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-shards.h"
#include "serio-tool.h"

static gboolean require_seal = FALSE;
static gboolean quiet = FALSE;

static const GOptionEntry entries[] = {
  { "require-seal", 's', 0, G_OPTION_ARG_NONE, &require_seal,
    N_("Count a valid file without a seal as an error"), NULL },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
    N_("Print only the problems"), NULL },
  G_OPTION_ENTRY_NULL
};

/* Values are read into a scratch buffer of this many. */
#define SCRATCH_VALUES (64 * 1024)

/* Reads the whole file, every value parsed, through a reader: the memory
 * does not grow with the file. Prints any error. */
static int
check_file (const char *path,
            double     *values,
            gboolean   *sealed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SerioReader) reader = serio_tool_open_reader (path, SERIO_TOOL_INPUT_DEFAULT, &error);

  if (reader == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  while (serio_reader_next (reader, NULL, &error))
    {
      gsize n;

      do
        {
          if (!serio_reader_read_values (reader, values, SCRATCH_VALUES, &n, NULL, &error))
            return serio_tool_report_read_error (path, error);
        }
      while (n > 0);
    }
  if (error != NULL)
    return serio_tool_report_read_error (path, error);

  *sealed = serio_reader_get_sealed (reader);
  return SERIO_TOOL_EXIT_OK;
}

int
handle_check (int argc, char *argv[], gboolean do_help)
{
  g_autofree double *values = NULL;
  int status = SERIO_TOOL_EXIT_OK;

  if (!serio_tool_parse_options (N_("FILE…"),
                                 N_("Check that files are valid serio v1 files, read as strictly as the\n"
                                    "library reads them, and say for each whether it is sealed: a sealed\n"
                                    "file is verified against its seal, so that a changed digit or a lost\n"
                                    "line is caught; a plain file cannot be verified beyond its syntax.\n"
                                    "“-” stands for the standard input."),
                                 N_("Errors are printed as “FILE:LINE: message”.\n\n"
                                    "Exit status: 0 if every file is valid (and, with --require-seal,\n"
                                    "sealed), 1 if any is not, 2 on a usage or input/output error."),
                                 entries, do_help, &argc, &argv, &status))
    return status;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  values = g_new (double, SCRATCH_VALUES);

  for (int i = 1; i < argc; i++)
    {
      g_autofree char *display = g_filename_display_name (argv[i]);
      int file_status;
      gboolean sealed = FALSE;

      if (serio_tool_is_index (argv[i]))
        {
          file_status = serio_tool_check_index (argv[i], quiet);
          status = MAX (status, file_status);
          continue;
        }
      file_status = check_file (argv[i], values, &sealed);
      if (file_status != SERIO_TOOL_EXIT_OK)
        {
          status = MAX (status, file_status);
          continue;
        }

      if (sealed)
        {
          if (!quiet)
            {
              /* TRANSLATORS: a file name; the file's seal matches it */
              g_print (_("%s: sealed, verified"), display);
              g_print ("\n");
            }
        }
      else if (require_seal)
        {
          fflush (stdout);
          /* TRANSLATORS: a file name; --require-seal is an option, not
           * to be translated */
          g_printerr (_("%s: not sealed, so it cannot be verified (--require-seal)"), display);
          g_printerr ("\n");
          status = MAX (status, SERIO_TOOL_EXIT_FAILURE);
        }
      else if (!quiet)
        {
          /* TRANSLATORS: a file name; the file is valid but has no seal */
          g_print (_("%s: plain, without a seal: valid, but it cannot be verified"), display);
          g_print ("\n");
        }
    }

  return status;
}
