/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-options.h: the command line of the serio tool's commands, and
 * how they print errors (tools/serio-tool-options.c)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <serio.h>

G_BEGIN_DECLS

/* Exit statuses, the same for every command (as cmp and diff use them). */
enum
{
  SERIO_TOOL_EXIT_OK = 0,
  SERIO_TOOL_EXIT_FAILURE = 1,  /* invalid input, arrays not found, files differ */
  SERIO_TOOL_EXIT_ERROR = 2,    /* bad usage, input/output errors */
};

gboolean     serio_tool_parse_options       (const char          *parameter_string,
                                             const char          *summary,
                                             const char          *description,
                                             const GOptionEntry  *entries,
                                             gboolean             do_help,
                                             int                 *argc,
                                             char              ***argv,
                                             int                 *status);
int          serio_tool_usage_error         (const char          *message);
void         serio_tool_print_error         (const GError        *error);
int          serio_tool_print_file_error    (const char          *path,
                                             GError             **error);
int          serio_tool_no_such_array       (const char          *path,
                                             const char          *name);

void         serio_tool_report_parse_error  (const char          *path,
                                             const GError        *error);
int          serio_tool_report_read_error   (const char          *path,
                                             const GError        *error);

gboolean     serio_tool_is_stdin            (const char          *path);

/* One thread per processor, capped by SERIO_THREADS as in the library. */
guint        serio_tool_get_threads         (void);

G_END_DECLS
