/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-checksum.c: serio checksum [FILE…]
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

#include "serio-commands.h"
#include "serio-tool.h"

/* Like sha256sum: a name holding a newline or a backslash is written with
 * those escaped, and its line starts with a backslash. The name is
 * otherwise written byte for byte, whatever its encoding. */
static void
print_checksum_line (guint32     checksum,
                     const char *path)
{
  if (strpbrk (path, "\\\n") == NULL)
    {
      printf ("%08x  %s\n", (unsigned int) checksum, path);
      return;
    }

  printf ("\\%08x  ", (unsigned int) checksum);
  for (const char *p = path; *p != '\0'; p++)
    {
      if (*p == '\\')
        fputs ("\\\\", stdout);
      else if (*p == '\n')
        fputs ("\\n", stdout);
      else
        putchar (*p);
    }
  putchar ('\n');
}

/* Files are read in pieces of this size. */
#define READ_CHUNK (1024 * 1024)

/* Hashes the bytes of a file as they stream through its input, piece by
 * piece: the memory does not grow with the file. */
static gboolean
checksum_file (const char  *path,
               char        *buffer,
               guint32     *checksum,
               GError     **error)
{
  g_autoptr(SerioToolInput) input = serio_tool_input_open (path, SERIO_TOOL_INPUT_CHECKSUM, error);
  gssize n;

  if (input == NULL)
    return FALSE;

  while ((n = g_input_stream_read (G_INPUT_STREAM (input), buffer, READ_CHUNK, NULL, error)) > 0)
    ;
  if (n < 0)
    return FALSE;

  *checksum = serio_tool_input_get_checksum (input);
  return TRUE;
}

int
handle_checksum (int argc, char *argv[], gboolean do_help)
{
  char *stdin_only[] = { (char *) "-", NULL };
  char **paths;
  g_autofree char *buffer = NULL;
  int status = SERIO_TOOL_EXIT_OK;

  if (!serio_tool_parse_options (N_("[FILE…]"),
                                 N_("Print the serio checksum (FNV-1a 64, folded to 32 bits) of the bytes\n"
                                    "of each file as “xxxxxxxx  FILE” lines. With no FILE, or when FILE is\n"
                                    "“-”, read the standard input. The files need not be valid."),
                                 N_("Exit status: 0 on success, 2 if a file cannot be read."),
                                 NULL, do_help, &argc, &argv, &status))
    return status;

  paths = argc > 1 ? argv + 1 : stdin_only;

  buffer = g_malloc (READ_CHUNK);

  for (; *paths != NULL; paths++)
    {
      g_autoptr(GError) error = NULL;
      guint32 checksum;

      if (!checksum_file (*paths, buffer, &checksum, &error))
        {
          serio_tool_print_error (error);
          status = SERIO_TOOL_EXIT_ERROR;
          continue;
        }

      print_checksum_line (checksum, *paths);
    }

  return status;
}
