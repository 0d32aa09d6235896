/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-convert.c: what the conversions into serio files share (from
 * NumPy in serio-convert.c, from .safetensors in serio-safetensors.c)
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <glib/gi18n.h>

#include "serio-tool.h"

/*
 * serio_tool_open_to_serio:
 * @in: the file to convert
 * @out: the serio file to write
 * @plain: write plain v1, not a sealed text
 * @input: (out): @in, to stream, whose read errors do not name it (the
 *   reader names it, or the member it is in)
 * @writer: (out): a writer that replaces @out atomically when it is
 *   closed, and leaves it as it was when it is dropped unclosed
 *
 * Opens both ends of a conversion; an error is printed.
 *
 * Returns: %TRUE if both are open
 */
gboolean
serio_tool_open_to_serio (const char      *in,
                          const char      *out,
                          gboolean         plain,
                          SerioToolInput **input,
                          SerioWriter    **writer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = NULL;

  *writer = NULL;
  *input = serio_tool_input_open (in, SERIO_TOOL_INPUT_BARE_ERRORS, &error);
  if (*input == NULL)
    {
      serio_tool_print_error (error);
      return FALSE;
    }

  file = g_file_new_for_path (out);
  *writer = serio_writer_new_for_file (file, plain ? SERIO_SAVE_FLAGS_PLAIN : SERIO_SAVE_FLAGS_NONE,
                                       NULL, &error);
  if (*writer == NULL)
    {
      serio_tool_input_end_progress (*input);
      g_clear_object (input);
      serio_tool_print_file_error (out, &error);
      return FALSE;
    }

  return TRUE;
}

/*
 * serio_tool_to_serio_failed:
 * @write_error: (inout) (transfer full): the writer's error, when the
 *   output failed and so stopped the reading (it is freed), or %NULL
 * @error: (inout): the reader's error otherwise
 * @io_failed: whether the reader's error is one of the input, not of its
 *   data
 *
 * Prints why a reading into a serio file failed: the output's error, about
 * @out, or else the reader's, about @in.
 *
 * Returns: the exit status it calls for
 */
int
serio_tool_to_serio_failed (const char  *in,
                            const char  *out,
                            GError     **write_error,
                            GError     **error,
                            gboolean     io_failed)
{
  if (*write_error != NULL)
    {
      serio_tool_print_file_error (out, write_error);
      g_clear_error (write_error);
      return SERIO_TOOL_EXIT_ERROR;
    }

  /* A reader fails with an error, always. */
  if (*error == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                         _("the conversion stopped without saying why (a bug)"));
  serio_tool_print_file_error (in, error);

  return io_failed ? SERIO_TOOL_EXIT_ERROR : SERIO_TOOL_EXIT_FAILURE;
}
