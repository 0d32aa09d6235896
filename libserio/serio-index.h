/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-index.h: sharded checkpoints, read through their index
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <gio/gio.h>

#include "serio-reader.h"
#include "serio-version-macros.h"

G_BEGIN_DECLS

SERIO_AVAILABLE_IN_ALL
SerioReader *serio_reader_new_for_index (GFile         *index,
                                         GCancellable  *cancellable,
                                         GError       **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
