/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-check.c: serio check FILE…
 *
 * Copyright 2026 The libserio authors
 */

#include "config.h"

#include <glib/gi18n.h>

#include "serio-tool.h"

int
serio_tool_check (int    argc,
                  char **argv)
{
  int status = SERIO_TOOL_EXIT_OK;

  if (!serio_tool_parse_options (N_("FILE…"),
                                 N_("Check that files are valid serio v1 files, read as strictly as the\n"
                                    "library reads them. “-” stands for the standard input."),
                                 N_("Errors are printed as “FILE:LINE: message”.\n\n"
                                    "Exit status: 0 if every file is valid, 1 if any is not, 2 on a usage\n"
                                    "or input/output error."),
                                 NULL, &argc, &argv))
    return SERIO_TOOL_EXIT_ERROR;

  if (argc < 2)
    return serio_tool_usage_error (_("no file given"));

  for (int i = 1; i < argc; i++)
    {
      int file_status;
      g_autoptr(SerioBundle) bundle = serio_tool_load_bundle (argv[i], NULL, &file_status);

      if (bundle == NULL)
        status = MAX (status, file_status);
    }

  return status;
}
