/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-checksum.c: serio checksum [FILE…]
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gi18n.h>

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

int
serio_tool_checksum (int    argc,
                     char **argv)
{
  char *stdin_only[] = { (char *) "-", NULL };
  char **paths;
  int status = SERIO_TOOL_EXIT_OK;

  if (!serio_tool_parse_options (N_("[FILE…]"),
                                 N_("Print the serio checksum (FNV-1a 64, folded to 32 bits) of the bytes\n"
                                    "of each file as “xxxxxxxx  FILE” lines. With no FILE, or when FILE is\n"
                                    "“-”, read the standard input. The files need not be valid."),
                                 N_("Exit status: 0 on success, 2 if a file cannot be read."),
                                 NULL, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  paths = argc > 1 ? argv + 1 : stdin_only;

  for (; *paths != NULL; paths++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = serio_tool_load (*paths, &error);

      if (bytes == NULL)
        {
          serio_tool_print_error (error);
          status = SERIO_TOOL_EXIT_ERROR;
          continue;
        }

      print_checksum_line (serio_checksum_bytes (bytes), *paths);
    }

  return status;
}
