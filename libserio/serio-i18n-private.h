/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-i18n-private.h: the library's message catalogue (private, not
 * installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Binds the library's gettext domain, once (serio-i18n.c). */
void _serio_i18n_init (void);

G_END_DECLS
