/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-seal.c: serio seal FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-tool.h"

/* Values are copied from the reader to the writer through a buffer of
 * this many. */
#define SCRATCH_VALUES (64 * 1024)

/* Seals one file in place: a reader on the file streams its arrays into a
 * sealed writer for the file (serio_writer_new_for_file()), so that the
 * file is replaced atomically and keeps its permissions, and the memory
 * does not grow with the file. A file that does not parse is left alone
 * (the writer is dropped unclosed); its error is printed. */
static int
seal_file (const char *path,
           double     *values)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *display = g_filename_display_name (path);
  g_autoptr(SerioReader) reader = serio_tool_open_reader (path, SERIO_TOOL_INPUT_DEFAULT, &error);
  g_autoptr(GFile) file = NULL;
  g_autoptr(SerioWriter) writer = NULL;
  gboolean more;

  if (reader == NULL)
    {
      serio_tool_print_error (error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  /* The first record tells whether the text is sealed. */
  more = serio_reader_next (reader, NULL, &error);
  if (error != NULL)
    return serio_tool_report_read_error (path, error);

  if (serio_reader_get_sealed (reader))
    {
      /* Still read to the end, so that a damaged file is reported: arrays
       * skipped in a sealed text are hashed, and so verified. */
      while (more)
        more = serio_reader_next (reader, NULL, &error);
      if (error != NULL)
        return serio_tool_report_read_error (path, error);

      /* TRANSLATORS: a file name */
      g_print (_("%s: already sealed, left as it is"), display);
      g_print ("\n");
      return SERIO_TOOL_EXIT_OK;
    }

  file = g_file_new_for_path (path);
  writer = serio_writer_new_for_file (file, SERIO_SAVE_FLAGS_NONE, NULL, &error);
  if (writer == NULL)
    return serio_tool_print_file_error (path, &error);

  for (; more; more = serio_reader_next (reader, NULL, &error))
    {
      gsize n;

      if (!serio_writer_begin_array (writer, serio_reader_get_name (reader),
                                     serio_reader_get_n_values (reader), NULL, &error))
        return serio_tool_print_file_error (path, &error);

      do
        {
          /* On an error, the writer goes out of scope unclosed: the file
           * stays as it was. */
          if (!serio_reader_read_values (reader, values, SCRATCH_VALUES, &n, NULL, &error))
            return serio_tool_report_read_error (path, error);
          if (n > 0 && !serio_writer_add_values (writer, values, n, NULL, &error))
            return serio_tool_print_file_error (path, &error);
        }
      while (n > 0);
    }
  if (error != NULL)
    return serio_tool_report_read_error (path, error);

  if (!serio_writer_close (writer, NULL, &error))
    return serio_tool_print_file_error (path, &error);

  /* TRANSLATORS: a file name */
  g_print (_("%s: sealed"), display);
  g_print ("\n");

  return SERIO_TOOL_EXIT_OK;
}

int
handle_seal (int argc, char *argv[], gboolean do_help)
{
  g_autofree double *values = NULL;
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
                                 NULL, do_help, &argc, &argv, &status))
    return status;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  for (int i = 1; i < argc; i++)
    {
      if (serio_tool_is_stdin (argv[i]))
        return serio_tool_usage_error (_("files are sealed in place: the standard input cannot be"));
    }

  values = g_new (double, SCRATCH_VALUES);
  for (int i = 1; i < argc; i++)
    {
      int file_status = seal_file (argv[i], values);

      status = MAX (status, file_status);
    }

  return status;
}
