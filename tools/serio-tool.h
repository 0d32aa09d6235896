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
int          serio_tool_seal                (int                  argc,
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

void         serio_tool_report_parse_error  (const char          *path,
                                             const GError        *error);

gboolean     serio_tool_is_stdin            (const char          *path);
GInputStream *serio_tool_open_input         (const char          *path,
                                             goffset             *size,
                                             GError             **error);
GBytes      *serio_tool_load                (const char          *path,
                                             GError             **error);
SerioBundle *serio_tool_load_bundle         (const char          *path,
                                             GBytes             **bytes,
                                             int                 *status);
gboolean     serio_tool_is_sealed           (GBytes              *bytes);

const char  *serio_tool_format_double       (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize        serio_tool_write_double        (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
char        *serio_tool_escape_name         (const char          *name);

/* An array read from or written to NumPy's formats. */
typedef struct
{
  char        *name;        /* a .npz member's name less ".npy", or NULL */
  double      *values;      /* n_values, in C order */
  gsize        n_values;
  guint64     *shape;       /* n_dims dimensions; () for a 0-d scalar */
  guint        n_dims;
  const char  *type_name;   /* the NumPy type read, such as "float32" */
} SerioToolArray;

typedef enum
{
  SERIO_TOOL_NPY,
  SERIO_TOOL_NPZ,
  SERIO_TOOL_NPZ_COMPRESSED,
} SerioToolNumpyFormat;

void         serio_tool_array_clear         (SerioToolArray      *array);
void         serio_tool_array_free          (SerioToolArray      *array);
char        *serio_tool_shape_to_string     (const guint64       *shape,
                                             guint                n_dims);
gboolean     serio_tool_npy_read            (const guchar        *data,
                                             gsize                size,
                                             SerioToolArray      *array,
                                             GError             **error);
GPtrArray   *serio_tool_npz_read            (GBytes              *bytes,
                                             GError             **error);
gboolean     serio_tool_npy_write           (GFile               *file,
                                             const SerioToolArray *arrays,
                                             guint                n_arrays,
                                             SerioToolNumpyFormat format,
                                             GError             **error);

G_END_DECLS
