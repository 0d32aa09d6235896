/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-ryu.h: the shortest decimals of the narrower IEEE formats
 *
 * Copyright 2026 The libserio authors
 *
 * serio_tool_write_double() prints a double as the shortest decimal that
 * reads back to its bits; the others print a float32, float16 or bfloat16
 * value as the shortest decimal that reads back to it in its own format,
 * in the same layout; serio_tool_write_typed() prints a value of any
 * SerioDtype as the shortest decimal of that type. tools/serio-ryu.c has
 * them all.
 */

#pragma once

#include <serio.h>

G_BEGIN_DECLS

/* Long enough for any double as serio_tool_format_double() writes it. */
#define SERIO_TOOL_DOUBLE_BUFSIZE 32

gsize        serio_tool_write_double        (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
const char  *serio_tool_format_double       (double               value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);

gsize        serio_tool_write_float32       (float                value,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize        serio_tool_write_float16       (guint16              bits,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize        serio_tool_write_bfloat16      (guint16              bits,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
gsize        serio_tool_write_typed         (double               value,
                                             SerioDtype           dtype,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);
const char  *serio_tool_format_typed        (double               value,
                                             SerioDtype           dtype,
                                             char                 buf[SERIO_TOOL_DOUBLE_BUFSIZE]);

guint16      serio_tool_float16_bits        (double               value);
guint32      serio_tool_float32_bits        (double               value);

G_END_DECLS
