/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-error-private.h: setting the data of SERIO_ERROR errors
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Stores what serio_error_get_line (), serio_error_get_value_index () and
 * serio_error_get_detail () give back; @error is in SERIO_ERROR. */
void _serio_error_set_location (GError     *error,
                                guint64     line,
                                guint64     value_index,
                                const char *detail);

G_END_DECLS
