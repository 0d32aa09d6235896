/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-spool.h: spooled output of the serio tool's commands
 * (tools/serio-tool-spool.c)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

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

G_END_DECLS
