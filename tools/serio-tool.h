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

/* Streaming: a file read through a SerioToolInput, which counts the bytes
 * for the progress shown on a terminal and can hash them with FNV-1a (the
 * checksum of the whole text) as they pass, standard input included. It
 * seeks when the file can, unless it hashes. */
typedef enum
{
  SERIO_TOOL_INPUT_DEFAULT = 0,
  SERIO_TOOL_INPUT_CHECKSUM = 1 << 0,     /* hash the bytes as they pass */
  SERIO_TOOL_INPUT_NO_PROGRESS = 1 << 1,  /* never show progress */
  SERIO_TOOL_INPUT_BARE_ERRORS = 1 << 2,  /* read errors without the file's name */
} SerioToolInputFlags;

#define SERIO_TOOL_TYPE_INPUT (serio_tool_input_get_type ())
G_DECLARE_FINAL_TYPE (SerioToolInput, serio_tool_input, SERIO_TOOL, INPUT, GFilterInputStream)

SerioToolInput *serio_tool_input_open       (const char          *path,
                                             SerioToolInputFlags  flags,
                                             GError             **error);
goffset      serio_tool_input_get_size      (SerioToolInput      *self);
guint32      serio_tool_input_get_checksum  (SerioToolInput      *self);
void         serio_tool_input_end_progress  (SerioToolInput      *self);

SerioReader *serio_tool_open_reader         (const char          *path,
                                             SerioToolInputFlags  flags,
                                             GError             **error);
SerioToolInput *serio_tool_reader_get_input (SerioReader         *reader);
int          serio_tool_report_read_error   (const char          *path,
                                             const GError        *error);

/* Text (or any bytes) kept for later: in memory up to a limit, the rest
 * in an unlinked temporary file, so that output held back stays within
 * bounded memory. It can be read back at any offset, copied from, and
 * emptied to be filled again. A failed call leaves the spool in no
 * particular state: its error is the one to report. */
typedef struct _SerioToolSpool SerioToolSpool;

typedef gboolean (*SerioToolSpoolFunc)      (const char          *data,
                                             gsize                len,
                                             gpointer             user_data,
                                             GError             **error);

SerioToolSpool *serio_tool_spool_new        (const char          *tmp_template);
SerioToolSpool *serio_tool_spool_new_full   (gsize                memory_limit,
                                             const char          *tmp_template);
void         serio_tool_spool_free          (SerioToolSpool      *spool);
guint64      serio_tool_spool_get_size      (SerioToolSpool      *spool);
void         serio_tool_spool_clear         (SerioToolSpool      *spool);
gboolean     serio_tool_spool_append        (SerioToolSpool      *spool,
                                             const char          *data,
                                             gssize               len,
                                             GError             **error);
gboolean     serio_tool_spool_append_printf (SerioToolSpool      *spool,
                                             GError             **error,
                                             const char          *format,
                                             ...) G_GNUC_PRINTF (3, 4);
gboolean     serio_tool_spool_read          (SerioToolSpool      *spool,
                                             guint64              offset,
                                             void                *buffer,
                                             gsize                len,
                                             GError             **error);
gboolean     serio_tool_spool_copy          (SerioToolSpool      *to,
                                             SerioToolSpool      *from,
                                             guint64              offset,
                                             guint64              len,
                                             GError             **error);
gboolean     serio_tool_spool_replay        (SerioToolSpool      *spool,
                                             gboolean             by_line,
                                             SerioToolSpoolFunc   func,
                                             gpointer             user_data,
                                             GError             **error);
gboolean     serio_tool_spool_write_stdout  (const char          *data,
                                             gsize                len,
                                             gpointer             user_data,
                                             GError             **error);
gboolean     serio_tool_spool_print_line    (const char          *data,
                                             gsize                len,
                                             gpointer             user_data,
                                             GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SerioToolSpool, serio_tool_spool_free)

/* One thread per processor, capped by SERIO_THREADS as in the library. */
guint        serio_tool_get_threads         (void);

const char  *serio_tool_format_double       (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize        serio_tool_write_double        (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
char        *serio_tool_escape_name         (const char          *name);

/* The shape (2x3, or () for a 0-d scalar) as info and diff show it. */
char        *serio_tool_shape_to_string     (const guint64       *shape,
                                             guint                n_dims);

G_END_DECLS
