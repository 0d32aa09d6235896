/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-options.c: the command line of the serio tool's commands: options,
 * usage errors, and errors as the commands print them
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-threads-private.h"
#include "serio-tool.h"

/*
 * serio_tool_parse_options:
 * @parameter_string: (nullable): the arguments, as the usage line shows
 *   them, untranslated (N_()): the context translates it from our domain
 * @summary: (nullable): the text above the options, likewise
 * @description: (nullable): the text below them, likewise
 * @entries: (nullable): the command's options
 * @do_help: print the command's help instead of parsing, as
 *   “serio help COMMAND” asks
 * @argc: (inout): the arguments, the command's name first
 * @argv: (inout): likewise; what is not an option is left
 * @status: (out): the exit status, when the command is to stop
 *
 * Parses the command line of a command, or prints its help to the
 * standard output: the same help whether asked by --help (which
 * GOptionContext prints) or by @do_help. A usage error is printed as
 * serio_tool_usage_error() prints it.
 *
 * Returns: %TRUE if the command goes on; %FALSE if it stops with @status
 *   (its help was printed, or a usage error)
 */
gboolean
serio_tool_parse_options (const char          *parameter_string,
                          const char          *summary,
                          const char          *description,
                          const GOptionEntry  *entries,
                          gboolean             do_help,
                          int                 *argc,
                          char              ***argv,
                          int                 *status)
{
  g_autoptr(GOptionContext) context = g_option_context_new (parameter_string);
  g_autoptr(GError) error = NULL;

  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, description);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);

  if (do_help)
    {
      /* What g_option_context_parse() prints for --help. */
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);

      g_print ("%s", help);
      *status = SERIO_TOOL_EXIT_OK;
      return FALSE;
    }

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      *status = serio_tool_usage_error (error->message);
      return FALSE;
    }

  return TRUE;
}

int
serio_tool_usage_error (const char *message)
{
  /* TRANSLATORS: a program or file name, and an error message */
  g_printerr (_("%s: %s"), g_get_prgname (), message);
  g_printerr ("\n");
  g_printerr (_("Try “%s --help” for more information."), g_get_prgname ());
  g_printerr ("\n");

  return SERIO_TOOL_EXIT_ERROR;
}

/* Results go to the buffered standard output, errors to the standard
 * error: flushing first keeps them in order when both reach one place. */
static void
flush_results (void)
{
  fflush (stdout);
}

void
serio_tool_print_error (const GError *error)
{
  flush_results ();
  /* TRANSLATORS: a program or file name, and an error message */
  g_printerr (_("%s: %s"), g_get_prgname (), error->message);
  g_printerr ("\n");
}

/*
 * serio_tool_print_file_error:
 * @path: the file that @error is about, whose name it does not give
 * @error: (inout): the error, which gets the file's name before it
 *
 * Prints the error after the command's name and the file's.
 *
 * Returns: %SERIO_TOOL_EXIT_ERROR, the status of an input/output error
 */
int
serio_tool_print_file_error (const char  *path,
                             GError     **error)
{
  g_autofree char *display = g_filename_display_name (path);

  /* TRANSLATORS: a file name, before an error message about it */
  g_prefix_error (error, _("%s: "), display);
  serio_tool_print_error (*error);

  return SERIO_TOOL_EXIT_ERROR;
}

int
serio_tool_no_such_array (const char *path,
                          const char *name)
{
  g_autofree char *display = g_filename_display_name (path);
  g_autofree char *shown = serio_tool_escape_name (name);

  /* TRANSLATORS: the program, a file name and an array name */
  g_printerr (_("%s: %s: no array is called “%s”"), g_get_prgname (), display, shown);
  g_printerr ("\n");

  return SERIO_TOOL_EXIT_FAILURE;
}

gboolean
serio_tool_is_stdin (const char *path)
{
  return g_str_equal (path, "-");
}

/* Prints a parse error of the file @path in the GNU format `FILE:LINE:
 * message` that editors jump to, with the line that the error carries;
 * the message without its line follows, so that the line is not repeated. */
void
serio_tool_report_parse_error (const char   *path,
                               const GError *error)
{
  g_autofree char *display = g_filename_display_name (path);
  guint64 line = serio_error_get_line (error);
  const char *detail = serio_error_get_detail (error);

  flush_results ();
  if (line > 0 && detail != NULL)
    g_printerr ("%s:%" G_GUINT64_FORMAT ": %s\n", display, line, detail);
  else
    {
      /* TRANSLATORS: a program or file name, and an error message */
      g_printerr (_("%s: %s"), display, error->message);
      g_printerr ("\n");
    }
}

/*
 * serio_tool_report_read_error:
 * @path: the file that a reader from serio_tool_open_reader() read
 * @error: the reader's error
 *
 * Prints the error: an invalid file as `FILE:LINE: message`, a read error
 * (whose message names the file) after the command's name.
 *
 * Returns: the exit status it calls for
 */
int
serio_tool_report_read_error (const char   *path,
                              const GError *error)
{
  if (error->domain == SERIO_ERROR)
    {
      serio_tool_report_parse_error (path, error);
      return SERIO_TOOL_EXIT_FAILURE;
    }

  serio_tool_print_error (error);
  return SERIO_TOOL_EXIT_ERROR;
}

/*
 * serio_tool_get_threads:
 *
 * The number of threads to work with: one per processor, capped by the
 * environment variable SERIO_THREADS as in the library.
 */
guint
serio_tool_get_threads (void)
{
  return _serio_threads_capped (0);
}
