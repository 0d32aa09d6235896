/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-private.h: helpers shared inside the library
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void     _serio_i18n_init   (void);
gpointer _serio_alloc_large (gsize size);
gpointer _serio_try_alloc_large (gsize size);

G_END_DECLS
