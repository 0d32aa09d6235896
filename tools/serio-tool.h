/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-tool.h: the serio tool's convenience library, as its commands use it
 *
 * Copyright 2026 The libserio authors
 *
 * The library (libserio-tool.a, not installed; tools/meson.build) holds
 * everything of the tool but serio.c and the command files, one file per
 * concern, each with its header:
 *
 *   serio-tool-options.h   the command line, exit statuses, errors
 *   serio-tool-input.h     files read, with progress on a terminal
 *   serio-tool-spool.h     output held back in bounded memory
 *   serio-tool-format.h    names and shapes as printed
 *   (here)                 reserved names, the legacy table of types
 *                          (serio-tool-legacy.c), conversions into serio
 *                          files (serio-tool-convert.c)
 *   serio-ryu.h            numbers as printed: the shortest decimals
 *   serio-numpy.h          NumPy's .npy (serio-npy.c) and .npz (serio-npz.c)
 *   serio-safetensors.h    Hugging Face's .safetensors
 *   serio-shards.h         sharded checkpoints and their indexes
 *
 * and below, the reserved names that the tool knows beyond
 * serio_name_is_metadata().
 */

#pragma once

#include <serio.h>

#include "serio-ryu.h"
#include "serio-tool-format.h"
#include "serio-tool-input.h"
#include "serio-tool-options.h"
#include "serio-tool-spool.h"

G_BEGIN_DECLS

/* Reserved names (serio_name_is_metadata() says which names are): the
 * record that ends a sealed text, "v1|serio.seal|3|SCHEME,SIZE,HASH"; the
 * legacy table of types that the first Python package wrote as the first
 * record; the prefix of the records of a .safetensors file's metadata. */
#define SERIO_TOOL_SEAL_NAME          "serio.seal"
#define SERIO_TOOL_LEGACY_DTYPES_NAME "serio.dtypes"
#define SERIO_TOOL_METADATA_PREFIX    "serio.metadata."

/* The legacy table's codes, one per later array (docs/format.md): 0 to 12
 * types (serio-tool-legacy.c), 13 a text stored as its code points. */
#define SERIO_TOOL_LEGACY_CODE_STR    13

gboolean     serio_tool_legacy_code_get_dtype (double      code,
                                               SerioDtype *dtype);

/* Conversions into serio files (serio-tool-convert.c). */
gboolean     serio_tool_open_to_serio       (const char          *in,
                                             const char          *out,
                                             gboolean             plain,
                                             SerioToolInput     **input,
                                             SerioWriter        **writer);
int          serio_tool_to_serio_failed     (const char          *in,
                                             const char          *out,
                                             GError             **write_error,
                                             GError             **error,
                                             gboolean             io_failed);

G_END_DECLS
