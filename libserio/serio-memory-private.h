/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serio-memory-private.h: large allocations (private, not installed)
 *
 * Copyright 2026 The libserio authors
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A buffer about to be filled from end to end, backed by huge pages
 * where the system has them (serio-memory.c); freed with g_free(). The
 * first aborts as g_malloc() does, the second returns %NULL. */
gpointer _serio_alloc_large     (gsize size);
gpointer _serio_try_alloc_large (gsize size);

/* Maps the pages of a range for writing ahead of the writes, where the
 * system can; their contents do not change. */
void     _serio_prefault        (gpointer start,
                                 gsize    len);

G_END_DECLS
