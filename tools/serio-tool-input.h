/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool-input.h: what the serio tool's commands read, with progress on a
 * terminal (tools/serio-tool-input.c)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <serio.h>

G_BEGIN_DECLS

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

G_END_DECLS
