/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-shards.h: sharded checkpoints in serio check and serio convert
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A path naming an index: it ends with .index.json. */
gboolean serio_tool_is_index      (const char *path);

/* serio check INDEX: every shard against the index; prints the result. */
int      serio_tool_check_index   (const char *path,
                                   gboolean    quiet);

/* serio convert between MODEL.safetensors.index.json and
 * MODEL.serio.index.json, with their shards. */
int      serio_tool_convert_index (const char *in,
                                   const char *out,
                                   gboolean    plain);

G_END_DECLS
