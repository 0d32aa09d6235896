/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-reader-private.h: what loads need of the reader (private, not
 * installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include "serio-reader.h"

G_BEGIN_DECLS

/* The line the reader is at: that of the current array while its values
 * are read. */
gulong       _serio_reader_get_line         (SerioReader   *self);

G_END_DECLS
