/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-format.h: names, shapes and JSON strings as the serio tool
 * prints them (tools/serio-tool-format.c); numbers are in serio-ryu.h
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

char        *serio_tool_escape_name         (const char          *name);

/* The shape as a Python tuple: "()", "(3,)", "(2, 3)", as info, diff and
 * .npy headers show it. */
char        *serio_tool_shape_to_string     (const guint64       *shape,
                                             guint                n_dims);

void         serio_tool_append_json_string  (GString             *out,
                                             const char          *text);

G_END_DECLS
