/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool.h: what the commands of the serio tool share
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

/* Long enough for any double as serio_tool_format_double() writes it. */
#define SERIO_TOOL_DOUBLE_BUFSIZE 32

int          serio_tool_cat                 (int                  argc,
                                             char               **argv);
int          serio_tool_check               (int                  argc,
                                             char               **argv);
int          serio_tool_checksum            (int                  argc,
                                             char               **argv);
int          serio_tool_convert             (int                  argc,
                                             char               **argv);
int          serio_tool_diff                (int                  argc,
                                             char               **argv);
int          serio_tool_info                (int                  argc,
                                             char               **argv);

gboolean     serio_tool_parse_options       (const char          *parameter_string,
                                             const char          *summary,
                                             const char          *description,
                                             const GOptionEntry  *entries,
                                             int                 *argc,
                                             char              ***argv);
int          serio_tool_usage_error         (const char          *message);
void         serio_tool_print_error         (const GError        *error);
int          serio_tool_no_such_array       (const char          *path,
                                             const char          *name);

gboolean     serio_tool_is_stdin            (const char          *path);
GBytes      *serio_tool_load                (const char          *path,
                                             GError             **error);
SerioBundle *serio_tool_load_bundle         (const char          *path,
                                             GBytes             **bytes,
                                             int                 *status);

const char  *serio_tool_format_double       (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
char        *serio_tool_escape_name         (const char          *name);

gboolean     serio_tool_npy_read            (GBytes              *bytes,
                                             double             **values,
                                             gsize               *n_values,
                                             char               **shape,
                                             GError             **error);
gboolean     serio_tool_npy_write           (GFile               *file,
                                             const double        *values,
                                             gsize                n_values,
                                             GError             **error);

G_END_DECLS
