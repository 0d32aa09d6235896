/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-version-info.h: the version of the library in use, at run time
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#if !defined(SERIO_INSIDE) && !defined(SERIO_COMPILATION)
# error "Only <serio.h> can be included directly."
#endif

#include <glib.h>

#include "serio-version-macros.h"

G_BEGIN_DECLS

SERIO_AVAILABLE_IN_ALL
guint        serio_get_major_version (void) G_GNUC_CONST;
SERIO_AVAILABLE_IN_ALL
guint        serio_get_minor_version (void) G_GNUC_CONST;
SERIO_AVAILABLE_IN_ALL
guint        serio_get_micro_version (void) G_GNUC_CONST;
SERIO_AVAILABLE_IN_ALL
const char  *serio_check_version     (guint required_major,
                                      guint required_minor,
                                      guint required_micro);

G_END_DECLS
